-- spec/fault/support.lua: shared by the spec/fault_*_spec.lua files (loaded
-- with dofile, after spec/uv_support.lua, whose helpers it builds on).
-- Misbehaving peers are real child processes: spec/fault/actor.lua writes
-- exactly the bytes a step list says, spec/fault/peer.lua is a jrpc peer
-- whose handlers hang, spin, raise in nested calls or wait on the parent.
local S = dofile("spec/uv_support.lua")
local jrpc = require "jrpc"

local F = { S = S }

local ACTOR = "spec/fault/actor.lua"
local PEER = "spec/fault/peer.lua"

local function quote_value(v)
  if type(v) == "string" then return ("%q"):format(v) end
  return tostring(v)
end

--- The Lua chunk actor.lua runs: `return { {"write", "..."}, ... }`.
function F.chunk(steps)
  local parts = {}
  for _, step in ipairs(steps) do
    local args = {}
    for i, v in ipairs(step) do args[i] = quote_value(v) end
    parts[#parts + 1] = "{" .. table.concat(args, ",") .. "}"
  end
  return "return {" .. table.concat(parts, ",") .. "}"
end

--- A child running actor.lua with these steps, as a jrpc connection
--- (stderr captured; on_error collected in the returned list `log`, the
--- routine events of on_debug in `debug`).
function F.actor(steps, opts)
  local log, debug = {}, {}
  local o = { cmd = S.INTERP, args = { ACTOR, F.chunk(steps) }, stderr = "pipe",
    on_error = function(msg) log[#log + 1] = msg end,
    on_debug = function(msg) debug[#debug + 1] = msg end }
  for k, v in pairs(opts or {}) do o[k] = v end
  local child, err = S.spawn(o)
  return child, err, log, debug
end

--- A child running spec/fault/peer.lua (extra args: --profile, --framing, --listen).
function F.peer(opts, args)
  local log = {}
  local a = { PEER }
  for _, v in ipairs(args or {}) do a[#a + 1] = v end
  local o = { cmd = S.INTERP, args = a, stderr = "pipe",
    on_error = function(msg) log[#log + 1] = msg end }
  for k, v in pairs(opts or {}) do o[k] = v end
  local child, err = S.spawn(o)
  return child, err, log
end

local function shell_quote(s)
  return "'" .. tostring(s):gsub("'", "'\\''") .. "'"
end
F.shell_quote = shell_quote

--- A client process (actor.lua) piping `steps` into examples/spec_server.lua
--- (jrpc as the server); returns the server's exit status, stdout, stderr.
--- Bounded: the server is killed after `limit` seconds (default 20).
function F.serve_pipe(steps, server_args, limit)
  local cmd = ("%s %s %s | timeout -s KILL %d %s examples/spec_server.lua %s"):format(
    S.INTERP, ACTOR, shell_quote(F.chunk(steps)), limit or 20, S.INTERP,
    table.concat(server_args or {}, " "))
  return S.shell(cmd)
end

--- An LSP frame around `body`.
function F.frame(body)
  return "Content-Length: " .. #body .. "\r\n\r\n" .. body
end

--- Lua memory in KiB after full collections (on LuaJIT, compiled traces
--- are flushed first: they keep the objects they specialised on alive).
function F.mem()
  if rawget(_G, "jit") then jit.flush() end
  collectgarbage()
  collectgarbage()
  return collectgarbage("count")
end

--- VmRSS of a process in KiB ("self" by default), or nil once it is gone.
function F.rss(pid)
  local f = io.open("/proc/" .. tostring(pid or "self") .. "/status", "r")
  if not f then return nil end
  local text = f:read("a")
  f:close()
  return tonumber(text:match("VmRSS:%s*(%d+)"))
end

-- {======================================================================
-- Wire taps: the exact bytes a connection wrote and read, and the
-- responses in them counted per id.
-- =======================================================================

local Peer = getmetatable(require("jrpc.peer").new{ send = function() end }).__index

--- Record what `conn` writes (`tap.out`) and what it reads from the pipe
--- or socket (`tap.into`), byte for byte.
function F.tap(conn)
  local tap = { out = {}, into = {} }
  local peer = conn.peer
  local send
  send = peer._out:set_send(function(bytes)
    tap.out[#tap.out + 1] = bytes
    return send(bytes)
  end)
  peer.receive = function(p, bytes)
    tap.into[#tap.into + 1] = bytes
    return Peer.receive(p, bytes)
  end
  return tap
end

-- The JSON texts of a byte stream, by framing.
local function messages(bytes, framing)
  local list = {}
  if framing == "lsp" then
    local pos = 1
    while pos <= #bytes do
      local head_end = bytes:find("\r\n\r\n", pos, true)
      if not head_end then break end
      local n = tonumber(bytes:sub(pos, head_end):match("Content%-Length: (%d+)"))
      list[#list + 1] = bytes:sub(head_end + 4, head_end + 3 + n)
      pos = head_end + 4 + n
    end
  else
    for line in bytes:gmatch("[^\n]+") do list[#list + 1] = line end
  end
  return list
end

--- Decoded messages (each a table; batches are flattened) in `chunks`.
function F.decode_all(chunks, framing)
  local out = {}
  for _, text in ipairs(messages(table.concat(chunks), framing)) do
    local msg = assert(jrpc.decode(text))
    if msg[1] ~= nil then
      for _, m in ipairs(msg) do out[#out + 1] = m end
    else
      out[#out + 1] = msg
    end
  end
  return out
end

--- Responses (no method, has result or error) in `chunks`, as a map
--- id -> list of responses with that id.
function F.responses(chunks, framing)
  local by_id = {}
  for _, msg in ipairs(F.decode_all(chunks, framing)) do
    if msg.method == nil and (msg.result ~= nil or msg.error ~= nil) then
      local key = msg.id == jrpc.null and "null" or msg.id
      by_id[key] = by_id[key] or {}
      table.insert(by_id[key], msg)
    end
  end
  return by_id
end

--- Requests and notifications with `method` in `chunks`.
function F.calls(chunks, method, framing)
  local list = {}
  for _, msg in ipairs(F.decode_all(chunks, framing)) do
    if msg.method == method then list[#list + 1] = msg end
  end
  return list
end

-- }======================================================================

return F
