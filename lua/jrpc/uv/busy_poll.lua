--- A short busy wait for the peer's next bytes, before the loop sleeps.
--
-- A process that blocks in the kernel with nothing to run leaves its CPU
-- idle, and on a virtual machine waking an idle CPU is slow: on the
-- machine of bench/pipe.lua's "Another machine" run, tens of µs. A client
-- answers a burst of replies with its next requests within about that
-- time, so a fast server that blocks after every burst spends its client's
-- whole turnaround asleep and then pays the wakeup, while a slower server
-- that never runs dry keeps both CPUs awake (measured there: a C server
-- that answers without parsing did 0.6-0.9x the lua-cjson loop's round
-- trips at 16 in flight, and 1.5x or more once it polled for 50 µs or
-- more before blocking; 30 µs was not enough).
--
-- While `run` or `serve_forever` drives the loop with option `busy_poll`,
-- after each event (a read, a write done, a jrpc timer) the loop polls
-- without blocking for up to the budget (BUDGET_NS for `true`), then blocks
-- as before. An idle handle does it: while one is active, libuv polls with
-- a zero timeout. A check handle (run after each poll) sees new events
-- through the loop's event count and starts it again. The cost is bounded:
-- at most the budget in CPU per event, nothing while no event comes.
-- `true` does nothing on a single CPU, where the wait would only take the
-- CPU from the peer it waits for. Off unless asked: the CPU is the
-- application's to spend.
local M = {}

-- How long to poll after the last event (ns): above the turnaround of the
-- clients measured (30-50 µs), with room for slower ones.
M.BUDGET_NS = 100000

--- Whether busy polling can help here: more than one CPU.
---@param uv table  the luv module
function M.useful(uv)
  local cpus = uv.available_parallelism and uv.available_parallelism()
    or (uv.cpu_info and #(uv.cpu_info() or {})) or 1
  return cpus > 1
end

--- Start on `loop` (a jrpc.uv loop: its `uv` and `events`), reusing
--- `handles` from an earlier start if given; returns the handles to pass
--- to `stop` and to the next start. Handles are stopped, never closed (see
--- jrpc.uv.idle_gc). `stats.polls` counts the turns that polled.
---@param loop {uv: table, events: integer}
---@param handles {idle: userdata, check: userdata}|nil
---@param budget_ns integer
---@param stats {polls: integer}
---@return {idle: userdata, check: userdata}|nil
function M.start(loop, handles, budget_ns, stats)
  local uv = loop.uv
  handles = handles or { idle = uv.new_idle(), check = uv.new_check() }
  local idle, check = handles.idle, handles.check
  if idle == nil or check == nil then return nil end
  local hrtime = uv.hrtime
  local seen, since, polling = loop.events, false, false
  local function poll_turn()
    stats.polls = stats.polls + 1
    if not since then
      since = hrtime()
    elseif hrtime() - since > budget_ns then
      idle:stop()
      polling = false
    end
  end
  check:start(function()
    local events = loop.events
    if events == seen then return end
    seen, since = events, false
    if not polling then
      polling = true
      idle:start(poll_turn)
    end
  end)
  check:unref()
  idle:unref()  -- an active idle handle still makes libuv poll without blocking
  return handles
end

--- Stop (nil or already stopped handles are fine).
function M.stop(handles)
  if handles == nil then return end
  for _, h in pairs(handles) do
    if not h:is_closing() then h:stop() end
  end
end

return M
