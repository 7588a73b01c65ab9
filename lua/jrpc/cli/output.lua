--- What the `jrpc` command prints, and its exit codes.
--
-- stdout carries only the answer (one JSON line), so it can be piped into
-- another program; everything else (errors, usage, --trace) goes to stderr.
local jrpc = require "jrpc"

local M = {}

--- The exit codes, as documented in the README and the usage text.
M.OK = 0        -- the call succeeded (or the notification was written)
M.FAILED = 1    -- an error reply, or no reply within --timeout
M.USAGE = 2     -- the command line is wrong
M.CONNECT = 3   -- cannot spawn or connect, or the connection ended before the reply

local array_mt = jrpc.core.array_mt
local encode

local function encode_array(t)
  local parts = {}
  for i = 1, #t do parts[i] = encode(t[i]) end
  return "[" .. table.concat(parts, ",") .. "]"
end

-- Keys sorted: a decoded object is a Lua table, whose order differs between
-- Lua 5.4 and LuaJIT (and between runs); sorted, the same reply always
-- prints the same line.
local function encode_object(t)
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = tostring(k) end
  table.sort(keys)
  local parts = {}
  for i, k in ipairs(keys) do
    parts[i] = assert(jrpc.encode(k)) .. ":" .. encode(t[k])
  end
  return "{" .. table.concat(parts, ",") .. "}"
end

--- Compact JSON of a decoded value, object keys sorted (one line: the
--- codec escapes newlines inside strings).
---@param v any
---@return string
function encode(v)
  if type(v) ~= "table" then return assert(jrpc.encode(v)) end
  if getmetatable(v) == array_mt then return encode_array(v) end
  return encode_object(v)
end
M.encode = encode

--- Print a result (or any value) as one JSON line on stdout.
---@param v any
function M.value(v)
  io.stdout:write(encode(v), "\n")
  io.stdout:flush()
end

--- A line on stderr.
---@param line string
function M.err(line)
  io.stderr:write(line, "\n")
end

-- The prefix of the command's own messages: "jrpc call: ", "jrpc mcp: ".
-- A server's log lines (the library's, on the stderr the server shares
-- with us) start with "jrpc: ", so the two are told apart.
local prefix = "jrpc: "

--- Name the running command (`call`, `mcp`): its messages start with
--- "jrpc NAME: " from now on.
---@param name string
function M.set_command(name)
  prefix = "jrpc " .. name .. ": "
end

--- One of the command's own messages on stderr, after its prefix.
---@param msg string
function M.say(msg)
  M.err(prefix .. msg)
end

--- An error reply's error object as one JSON line on stderr.
---@param e table  {code, message, data}
function M.error_object(e)
  M.err(encode({ code = e.code, message = e.message, data = e.data }))
end

return M
