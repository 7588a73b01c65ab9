--- A scripted, misbehaving JSON-RPC peer for the fault specs: a real child
-- process whose misbehaviour is the point. It knows nothing of JSON-RPC and
-- uses no part of jrpc: it writes exactly the bytes it is told to, when it is
-- told to.
--
--   lua5.4 spec/fault/actor.lua '<Lua chunk returning a list of steps>'
--
-- Steps, run in order:
--   {"write", s}            write s to stdout and flush
--   {"rep", s, n}           write s n times (in blocks of about 64 KiB)
--   {"bytewise", s, ms}     write s one byte at a time, flushing (and
--                           sleeping ms milliseconds, default 0) after each
--   {"readline"}            read one line from stdin (a newline-framed request)
--   {"readframe"}           read one Content-Length framed message from stdin
--   {"drain"}               read stdin to its end
--   {"sleep", ms}           sleep
--   {"close_stdout"}        close stdout, keep running
--   {"exit", code}          exit now with code
--   {"kill", signal}        send itself a signal ("sigkill", "sigterm", ...)
-- After the last step it exits 0. Everything read from stdin is copied to
-- stderr as it is read.
local uv = require "luv"
local unpack = table.unpack or unpack

local chunk = assert(arg[1], "usage: actor.lua '<Lua chunk returning the steps>'")
local steps = assert(load(chunk, "=steps", "t", {}))()

local out, input = io.stdout, io.stdin
out:setvbuf("no")

-- What is read from stdin is copied to stderr, so a parent capturing our
-- stderr sees exactly the bytes it sent us.
local function take(fmt)
  local s = input:read(fmt)
  if s then io.stderr:write(s); io.stderr:flush() end
  return s
end

local function readframe()
  local length
  while true do
    local line = take("L")
    if line == nil then return nil end
    line = line:gsub("\r?\n$", "")
    if line == "" then break end
    local n = line:match("^[Cc]ontent%-[Ll]ength:%s*(%d+)")
    if n then length = tonumber(n) end
  end
  if length == nil then error("a frame without Content-Length") end
  return take(length)
end

local actions = {
  write = function(s) out:write(s); out:flush() end,
  rep = function(s, n)
    local per = math.max(1, math.floor(65536 / #s))
    local block = s:rep(per)
    while n >= per do out:write(block); n = n - per end
    out:write(s:rep(n))
    out:flush()
  end,
  bytewise = function(s, ms)
    for i = 1, #s do
      out:write(s:sub(i, i))
      out:flush()
      if ms and ms > 0 then uv.sleep(ms) end
    end
  end,
  readline = function() return take("L") end,
  readframe = readframe,
  sleep = function(ms) uv.sleep(ms) end,
  close_stdout = function() out:flush(); assert(uv.fs_close(1)) end,  -- io cannot close it
  drain = function()
    while take("L") do end  -- by lines: a block read would wait for a full block
  end,
  exit = function(code) os.exit(code) end,
  kill = function(signal) uv.kill(uv.os_getpid(), signal) end,
}

for i, step in ipairs(steps) do
  local action = actions[step[1]] or error("step " .. i .. ": unknown action " .. tostring(step[1]))
  action(unpack(step, 2))
end
os.exit(0)
