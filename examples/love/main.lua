-- luacheck: globals love
--- A LÖVE game that talks JSON-RPC to examples/tcp_server.lua over LÖVE's
-- own LuaSocket (no luv), one `loop:pump` per frame.
--
--   lua5.4 examples/tcp_server.lua --port 0      # prints its port
--   love examples/love --port PORT                # or JRPC_PORT=PORT
--
-- A task (a coroutine on the loop) makes the requests one after another
-- and waits across frames for each answer; the window shows them. One
-- request is `slow` with a short timeout (a timeout), one is `fail` (an
-- error reply). Then it quits by itself, printing a summary line:
--   love: 3 answers, 1 timeout, 1 error
-- and exits 0, or 1 when an answer was wrong or it took too long.

-- From a checkout: the repository's lua/ and the LuaJIT build of the core.
-- (A shipped game puts lua/jrpc and jrpc/core.so next to main.lua instead.)
local root = love.filesystem.getSource() .. "/../.."
package.path = root .. "/lua/?.lua;" .. root .. "/lua/?/init.lua;" .. package.path
package.cpath = root .. "/build/jit/?.so;" .. package.cpath

local loop = require("jrpc.socket").new(require "socket")

local GIVE_UP = 15   -- seconds: quit with status 1 if not done by then
local LINGER = 1     -- seconds the answers stay on screen

local lines, counts = {}, { answers = 0, timeouts = 0, errors = 0, wrong = 0 }
local frame, elapsed, done_at, task = 0, 0, nil, nil

local function show(fmt, ...)
  local line = ("frame %d: " .. fmt):format(frame, ...)
  lines[#lines + 1] = line
  print(line)
end

local function port_from(args)
  for i = 1, #args - 1 do
    if args[i] == "--port" then return tonumber(args[i + 1]) end
  end
  return tonumber(os.getenv("JRPC_PORT") or "")
end

-- Each call: method, params, options, and the answer we expect.
local calls = {
  { "subtract", { 42, 23 }, nil, 19 },
  { "sum", { 1, 2, 4 }, nil, 7 },
  { "slow", { 3 }, { timeout = 0.3 }, "timeout" },
  { "fail", nil, nil, -32603 },
  { "subtract", { minuend = 3, subtrahend = 5 }, nil, -2 },
}

local function talk(_, port)
  local conn, err = loop:connect{ port = port, on_error = function() end }
  if not conn then
    show("%s", err.message)
    counts.wrong = counts.wrong + 1
    return
  end
  show("connected to 127.0.0.1:%d", port)
  for _, c in ipairs(calls) do
    local res, rerr = conn.peer:request(c[1], c[2], c[3])  -- waits across frames
    if rerr and rerr.code == "timeout" then
      counts.timeouts = counts.timeouts + 1
      show("%s: timed out after %.1f s", c[1], c[3].timeout)
    elseif rerr then
      counts.errors = counts.errors + 1
      show("%s: error %s %s", c[1], tostring(rerr.code), tostring(rerr.message))
    else
      counts.answers = counts.answers + 1
      show("%s = %s", c[1], tostring(res))
    end
    local got = rerr and rerr.code or res
    if got ~= c[4] then counts.wrong = counts.wrong + 1 end
  end
  conn:close()
end

function love.load(args)
  local port = port_from(args or {})
  if not port then
    print("love: usage: love examples/love --port PORT (or JRPC_PORT=PORT)")
    love.event.quit(2)
    return
  end
  task = loop:spawn_task(talk, port)
end

local function quit()
  local summary = ("love: %d answers, %d timeout%s, %d error%s"):format(counts.answers,
    counts.timeouts, counts.timeouts == 1 and "" or "s", counts.errors, counts.errors == 1 and "" or "s")
  if counts.wrong > 0 then summary = summary .. (", %d wrong"):format(counts.wrong) end
  print(summary)
  io.stdout:flush()
  love.event.quit((counts.wrong == 0 and task.ok) and 0 or 1)
end

function love.update(dt)
  frame, elapsed = frame + 1, elapsed + dt
  loop:pump(0.002)
  if task == nil then return end
  if task.done and not done_at then done_at = elapsed end
  if (done_at and elapsed - done_at >= LINGER) or elapsed > GIVE_UP then
    if not task.done then counts.wrong = counts.wrong + 1 end
    quit()
    task = nil
  end
end

function love.draw()
  love.graphics.print("jrpc over LuaSocket, frame " .. frame, 10, 10)
  for i, line in ipairs(lines) do love.graphics.print(line, 10, 20 + 18 * i) end
end
