--- examples/embed/game.lua: the Lua side of examples/embed/embed.c.
--
-- The C host calls start(root) once, then frame(dt) once per frame (60 a
-- second) until it returns false, then summary(). frame() is a plain call
-- from C, not a coroutine, so requests take callbacks; all the I/O happens
-- in loop:pump(budget), which returns within its budget, so a frame never
-- waits for the child.
--
-- Every quarter of a second it sends a round of four requests to
-- examples/spec_server.lua (run as a child process): subtract, sum,
-- get_data, and fail, which always answers -32603. Each answer is printed
-- as it arrives and checked against the value it must have. After the last
-- answer the child is shut down (its stdin closed, so it exits 0) and
-- frame() returns false once it has exited.
local jrpc = require "jrpc"
local uv = require "luv"

local BUDGET = 0.002          -- seconds of I/O per frame
local ROUNDS = 6
local ROUND_INTERVAL = 0.25   -- seconds between rounds
local REQUEST_TIMEOUT = 5     -- so that every request settles, even if the child hangs
local INTERPRETER = "lua5.4"  -- the child's; this host embeds Lua 5.4 too

local M = {}

local loop, child
local frame_no, elapsed, next_round_at, rounds_sent = 0, 0, 0, 0
local answers, errors, wrong = 0, 0, 0
local shutting_down = false

-- The requests of round i: what to send, how to print it, what must come back
-- (the result as JSON text, or the error code).
local function round_calls(i)
  return {
    { "subtract", jrpc.array{ 40 + i, 23 }, result = tostring(17 + i) },
    { "sum", jrpc.array{ i, 2, 4 }, result = tostring(i + 6) },
    { "get_data", nil, result = '["hello",5]' },
    { "fail", jrpc.array(), error = jrpc.codes.INTERNAL_ERROR },
  }
end

local function label(call)
  local params = call[2] and jrpc.encode(call[2]):sub(2, -2) or ""
  return call[1] .. "(" .. params .. ")"
end

-- A request settled: print it, count it, check it.
local function on_answer(call, err, result)
  answers = answers + 1
  local line
  if err then
    errors = errors + 1
    line = label(call) .. " failed: " .. tostring(err)
    if err.code ~= call.error then wrong = wrong + 1; line = line .. " (unexpected)" end
  else
    local text = jrpc.encode(result)
    line = label(call) .. " = " .. tostring(text)
    if text ~= call.result then
      wrong = wrong + 1
      line = line .. " (expected " .. tostring(call.result or "an error") .. ")"
    end
  end
  print(("frame %d: %s"):format(frame_no, line))
end

local function send_round()
  rounds_sent = rounds_sent + 1
  for _, call in ipairs(round_calls(rounds_sent)) do
    child.peer:request(call[1], call[2], nil, function(err, result)
      on_answer(call, err, result)
    end)
  end
end

local function expected_answers()
  return ROUNDS * 4
end

--- Start the child. Raises if it cannot be started.
---@param root string the repository root
function M.start(root)
  loop = jrpc.uv.new(uv, { catch_sigpipe = true })
  local err
  child, err = loop:spawn{
    cmd = INTERPRETER,
    args = { root .. "/examples/spec_server.lua" },
    timeout = REQUEST_TIMEOUT,
  }
  if not child then error("cannot start the spec server: " .. err.message) end
end

--- One frame: do the I/O that is ready, send what is due.
---@param dt number seconds since the previous frame
---@return boolean more false once everything is answered and the child has exited
function M.frame(dt)
  frame_no, elapsed = frame_no + 1, elapsed + dt
  local alive = loop:pump(BUDGET)
  if rounds_sent < ROUNDS and elapsed >= next_round_at then
    send_round()
    next_round_at = next_round_at + ROUND_INTERVAL
  end
  if answers == expected_answers() and not shutting_down then
    shutting_down = true
    child:shutdown()
  end
  if child.exit_code then
    local how = child.exit_signal ~= 0 and "was killed by signal " .. child.exit_signal
      or "exited with code " .. child.exit_code
    print(("frame %d: child %s"):format(frame_no, how))
    return false
  end
  return alive
end

--- What happened: answers, errors (error replies, expected ones included),
--- and whether every expected answer arrived right and the child exited 0.
---@return integer answers
---@return integer errors
---@return boolean complete
function M.summary()
  local complete = answers == expected_answers() and wrong == 0
    and child ~= nil and child.exit_code == 0 and child.exit_signal == 0
  return answers, errors, complete
end

return M
