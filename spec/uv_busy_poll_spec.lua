-- jrpc.uv.busy_poll: while run or serve_forever drives the loop and its
-- options ask for it, after each event the loop polls without blocking for a
-- budget, then sleeps again.
local jrpc = require "jrpc"
local busy_poll = require "jrpc.uv.busy_poll"
local S = dofile("spec/uv_support.lua")

-- A context of its own (jrpc.uv keeps one per luv module, so a proxy of
-- luv), on the same default loop; `overrides` replace luv functions.
local function new_loop(overrides)
  return jrpc.uv.new(setmetatable(overrides or {}, { __index = S.uv }))
end

-- In `loop:run(fn, opts)`: an event (a sleep's timer), then the poll turns
-- counted 10 ms and 30 ms after it by plain luv timers (which are not events).
local function polls_after_an_event(loop, opts)
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
  end, opts)
end

describe("jrpc.uv busy_poll", function()
  it("polls for the budget after an event, then lets the loop sleep", function()
    local early, late = polls_after_an_event(new_loop(), { busy_poll = 2000 })  -- 2 ms
    assert.is_true(early > 0, "no poll turns after the event")
    assert.are.equal(early, late)  -- none between 10 and 30 ms: the loop slept
  end)

  it("keeps polling while the budget lasts", function()
    local early, late = polls_after_an_event(new_loop(), { busy_poll = 1e6 })  -- 1 s
    assert.is_true(late > early, ("%d then %d"):format(early, late))
  end)

  it("never polls by default, nor when turned off", function()
    for _, opts in ipairs({ {}, { busy_poll = false }, { busy_poll = 0 } }) do
      local loop = new_loop()
      local early, late = polls_after_an_event(loop, opts)
      assert.are.equal(0, early)
      assert.are.equal(0, late)
      assert.are.equal(0, loop.poll_stats.polls)
    end
    local loop = new_loop()
    assert.are.same({ 0, 0 }, { polls_after_an_event(loop) })
  end)

  it("busy_poll = true polls for BUDGET_NS with more than one CPU, never with one", function()
    assert.are.equal(100000, busy_poll.BUDGET_NS)
    local two = new_loop({ available_parallelism = function() return 2 end })
    assert.is_true(polls_after_an_event(two, { busy_poll = true }) > 0)
    local one = new_loop({ available_parallelism = function() return 1 end })
    assert.are.same({ 0, 0 }, { polls_after_an_event(one, { busy_poll = true }) })
  end)

  it("polls only while the run that asked drives the loop", function()
    local loop = new_loop()
    loop:run(function() loop:sleep(0.001); loop:sleep(0.005) end, { busy_poll = 1e6 })
    local polls = loop.poll_stats.polls
    assert.is_true(polls > 0)
    local t = S.uv.new_timer()
    t:start(1, 0, function() loop.events = loop.events + 1; t:close() end)
    for _ = 1, 20 do loop:pump(0.001) end
    loop:run(function() loop:sleep(0.001); loop:sleep(0.005) end)  -- a run that did not ask
    assert.are.equal(polls, loop.poll_stats.polls)
  end)

  it("rejects a budget that is not true, false or a number of µs", function()
    local loop = new_loop()
    for _, bad in ipairs({ -1, "100", 0 / 0 }) do
      local ok, err = pcall(loop.run, loop, function() end, { busy_poll = bad })
      assert.is_false(ok)
      assert.are.equal("run: busy_poll must be true, false or a number of µs >= 0", err)
      ok, err = pcall(loop.serve_forever, loop, { busy_poll = bad })
      assert.is_false(ok)
      assert.are.equal("serve_forever: busy_poll must be true, false or a number of µs >= 0", err)
    end
  end)
end)
