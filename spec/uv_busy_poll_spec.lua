-- jrpc.uv.busy_poll: while run or serve_forever drives the loop, after each
-- event the loop polls without blocking for a budget, then sleeps again.
local jrpc = require "jrpc"
local busy_poll = require "jrpc.uv.busy_poll"
local S = dofile("spec/uv_support.lua")

-- A context of its own (jrpc.uv keeps one per luv module, so a proxy of
-- luv), on the same default loop; `overrides` replace luv functions.
local function new_loop(opts, overrides)
  return jrpc.uv.new(setmetatable(overrides or {}, { __index = S.uv }), opts)
end

-- In `loop:run`: an event (a sleep's timer), then the poll turns counted
-- 10 ms and 30 ms after it by plain luv timers (which are not events).
local function polls_after_an_event(loop)
  return loop:run(function()
    loop:sleep(0.001)
    local stats, seen = loop.poll_stats, {}
    local at0 = stats.polls
    for i, ms in ipairs({ 10, 30 }) do
      local t = S.uv.new_timer()
      t:start(ms, 0, function() seen[i] = stats.polls; t:close() end)
    end
    loop:sleep(0.05)
    return seen[1] - at0, seen[2] - at0
  end)
end

describe("jrpc.uv busy_poll", function()
  it("polls for the budget after an event, then lets the loop sleep", function()
    local early, late = polls_after_an_event(new_loop({ busy_poll = 2000 }))  -- 2 ms
    assert.is_true(early > 0, "no poll turns after the event")
    assert.are.equal(early, late)  -- none between 10 and 30 ms: the loop slept
  end)

  it("keeps polling while the budget lasts", function()
    local early, late = polls_after_an_event(new_loop({ busy_poll = 1e6 }))  -- 1 s
    assert.is_true(late > early, ("%d then %d"):format(early, late))
  end)

  it("never polls when turned off", function()
    local loop = new_loop({ busy_poll = false })
    local early, late = polls_after_an_event(loop)
    assert.are.equal(0, early)
    assert.are.equal(0, late)
    assert.are.equal(0, loop.poll_stats.polls)
  end)

  it("is on by default with more than one CPU, off with one", function()
    local two = new_loop(nil, { available_parallelism = function() return 2 end })
    assert.are.equal(busy_poll.BUDGET_NS, two._busy_poll_ns)
    local one = new_loop(nil, { available_parallelism = function() return 1 end })
    assert.is_nil(one._busy_poll_ns)
    assert.are.equal(0, select(1, polls_after_an_event(one)))
  end)

  it("polls only while run or serve_forever drives the loop", function()
    local loop = new_loop({ busy_poll = 1e6 })
    loop:run(function() loop:sleep(0.001); loop:sleep(0.005) end)
    local polls = loop.poll_stats.polls
    assert.is_true(polls > 0)
    local t = S.uv.new_timer()
    t:start(1, 0, function() loop.events = loop.events + 1; t:close() end)
    for _ = 1, 20 do loop:pump(0.001) end
    assert.are.equal(polls, loop.poll_stats.polls)
  end)

  it("rejects a budget that is not false or a number of µs", function()
    for _, bad in ipairs({ -1, "100", true, 0 / 0 }) do
      local ok, err = pcall(new_loop, { busy_poll = bad })
      assert.is_false(ok)
      assert.matches("busy_poll must be false or a number of µs >= 0", err, 1, true)
    end
  end)
end)
