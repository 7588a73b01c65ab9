--- 100,000 requests pending on a child process, then the connection
-- closes (`kill`: the child is killed with SIGKILL; `close`: we close it).
-- Run in a fresh interpreter by spec/fault_pending_spec.lua, so that what
-- the Lua state holds before and after is this scenario's alone. Prints
-- one line: a Lua table constructor with the figures.
--
--   lua5.4 spec/fault/pending.lua kill|close [N]
local root = ((arg and arg[0] or ""):match("^(.*)[/\\]spec[/\\]fault[/\\]") or ".") .. "/"
local abi = rawget(_G, "jit") and "jit" or "5.4"
package.path = root .. "lua/?.lua;" .. root .. "lua/?/init.lua;" .. package.path
package.cpath = root .. "build/" .. abi .. "/?.so;" .. package.cpath

local uv = require "luv"
local loop = require("jrpc").uv.new(uv, { catch_sigpipe = true })

local how, n = arg[1], tonumber(arg[2] or 100000)
assert(how == "kill" or how == "close", "usage: pending.lua kill|close [N]")

-- Lua memory after full collections. On LuaJIT the compiled traces are
-- flushed first: a trace keeps the objects it specialised on (say, the
-- child of a loop that waited on it) alive as constants.
local function mem()
  if rawget(_G, "jit") then jit.flush() end
  for _ = 1, 4 do collectgarbage() end
  return collectgarbage("count")
end

local function registry_entries()
  local count = 0
  for _ in pairs(debug.getregistry()) do count = count + 1 end
  return count
end

local function now() return uv.hrtime() / 1e9 end

local function wait_until(cond, limit)
  local deadline = now() + limit
  while not cond() do
    if now() > deadline then return false end
    loop:sleep(0.001)
  end
  return true
end

local out = {}
local watchdog = uv.new_timer()
watchdog:start(60000, 0, function() loop:stop() end)
watchdog:unref()

local start, registry_start = mem(), registry_entries()
loop:run(function()
  -- reads all it gets, never answers, keeps its stdout open
  local child = assert(loop:spawn{ cmd = "/bin/sh", args = { "-c", "cat >/dev/null; exec sleep 30" } })
  local count, by_code, by_message = 0, {}, {}
  local function settled(err, result)
    count = count + 1
    local code = err and err.code or ("result " .. tostring(result))
    by_code[code] = (by_code[code] or 0) + 1
    if err then by_message[err.message] = (by_message[err.message] or 0) + 1 end
  end
  for i = 1, n do child.peer:request("subtract", { i, 1 }, nil, settled) end
  out.pending_before = child.peer:stats().pending
  out.held_kib = mem() - start
  -- the child reads them all: they are pending at the other side
  out.drained = wait_until(function() return child:write_queue_size() == 0 end, 30)
  out.settled_before = count
  local t0 = now()
  if how == "kill" then child:kill("sigkill") else child:close("giving up") end
  wait_until(function() return count >= n end, 10)
  out.took = now() - t0
  loop:sleep(0.1)  -- nothing more comes
  out.count, out.by_code, out.by_message = count, by_code, by_message
  local stats = child.peer:stats()
  out.pending_after, out.in_flight_after = stats.pending, stats.in_flight
  if child.exit_code == nil then child:kill("sigkill") end
  out.exited = wait_until(function() return child.exit_code ~= nil end, 5)
  loop:sleep(0.05)  -- its handles finish closing
end)
-- one more turn of the loop, so the closes begun as the first run ended complete
loop:run(function() loop:sleep(0.01) end)
out.grown_kib = mem() - start
out.registry_start, out.registry_end = registry_start, registry_entries()

-- print `out` as a Lua table constructor
local function dump(v)
  if type(v) == "table" then
    local parts = {}
    for k, x in pairs(v) do parts[#parts + 1] = ("[%q]=%s"):format(k, dump(x)) end
    table.sort(parts)
    return "{" .. table.concat(parts, ",") .. "}"
  elseif type(v) == "string" then
    return ("%q"):format(v)
  end
  return tostring(v)
end
print("return " .. dump(out))
