--- The collector's work done while the loop waits, not while a request does.
--
-- Lua's collector works in pieces, each paid by whatever allocates at that
-- moment: in Lua 5.4's generational mode (the `lua5.4` interpreter's
-- default) a minor collection every time the heap grows by a fifth, in the
-- incremental mode (LuaJIT, and embedded Lua 5.4) steps through a cycle
-- once the heap has doubled. With a server's heap of a few hundred KiB a
-- piece costs tens of µs, and one request in several hundred pays it on
-- Lua 5.4, one in about forty on LuaJIT (bench/gc_inside.lua).
-- While `run` or `serve_forever` drives the loop with option `idle_gc`, a
-- prepare handle (libuv calls it just before the loop blocks for I/O)
-- takes that piece a little before it falls due, so the loop pays it while
-- it would wait anyway. Off unless asked: the collector is the process's.
--
-- The collector's settings are not changed and no extra collection is
-- forced: each step is one the collector would have taken a few KiB of
-- allocation later. Nothing is done while the collector is stopped
-- (`collectgarbage("stop")`).
local M = {}

-- When to take the next piece, as a multiple of the heap the last one left
-- (from Lua's defaults: a minor collection at 1.2, genminormul 20%; a new
-- cycle at 2, pause 200%): a little before the collector would.
M.MINOR_AT = 1.19
M.CYCLE_AT = 1.95
-- How long the steps of one turn may take while a cycle runs (ns). A step
-- earns only a little allocation before the collector takes the next one
-- itself (1 KiB on LuaJIT, 8 KiB on Lua 5.4): requests that allocate more
-- pay steps anyway while a cycle runs, so the turns keep stepping, a few
-- tens of µs each, to make that window short.
M.TURN_BUDGET_NS = 50000
-- While the loop polls (jrpc.uv.busy_poll), how long it must have been
-- quiet before it takes incremental steps (ns): as long as a turn's steps
-- may take, so a request that comes during them waits at most about as
-- long again as the loop had already waited for it.
M.QUIET_FOR_NS = M.TURN_BUDGET_NS

local collectgarbage = collectgarbage

--- The collector's mode: "generational" or "incremental". Lua 5.4 can only
--- tell by switching, so this switches back when it was incremental (the
--- switch to generational is a full collection, once). LuaJIT has one mode.
function M.mode()
  local ok, previous = pcall(collectgarbage, "generational")
  if not ok or previous == nil then return "incremental" end
  if previous == "incremental" then collectgarbage("incremental") end
  return previous
end

-- A step; the collector's finalizers run in it and may raise (LuaJIT passes
-- their error on). Not the loop's failure, and Lua 5.4 itself only warns,
-- so it is dropped. True when a cycle ended.
local function step()
  local ok, ended = pcall(collectgarbage, "step", 0)
  return ok and ended
end

-- Generational: each step is a whole minor collection; take it when the
-- heap has grown almost as far as the collector waits for. Only the heap a
-- collection leaves tells when the next is due, so the first is at once.
local function generational_stepper(_, stats)
  local base = 0
  return function()
    local kib = collectgarbage("count")
    if kib < base then base = kib end  -- the collector collected meanwhile
    if kib < base * M.MINOR_AT or not collectgarbage("isrunning") then return end
    step()
    stats.steps, stats.cycles = stats.steps + 1, stats.cycles + 1
    base = collectgarbage("count")
  end
end

-- Incremental: from a little before a cycle is due, steps for up to
-- TURN_BUDGET_NS per turn until it ends. Only the heap a cycle leaves tells
-- when the next is due, so the first cycle is finished (or begun) at once.
local function incremental_stepper(uv, stats)
  local hrtime = uv.hrtime
  local in_cycle, base = true, 0
  return function()
    if not in_cycle then
      local kib = collectgarbage("count")
      if kib < base then base = kib end
      if kib < base * M.CYCLE_AT then return end
      in_cycle = true
    end
    if not collectgarbage("isrunning") then return end
    local deadline = hrtime() + M.TURN_BUDGET_NS
    repeat
      stats.steps = stats.steps + 1
      if step() then
        in_cycle, base = false, collectgarbage("count")
        stats.cycles = stats.cycles + 1
        return
      end
    until hrtime() >= deadline
  end
end

-- While the loop polls after its events (jrpc.uv.busy_poll) a turn that
-- had events is followed by turns that had none, where the wait is. Steps
-- are taken only once the loop has been quiet for QUIET_FOR_NS: what came
-- is answered first, and under load, where the next burst comes within a
-- few µs, the collector keeps to its own pace instead of holding up the
-- burst (stepping in every quiet turn cost round trips under load; the
-- figures are in bench/results/2026-12-02-idle-gc.md).
-- `quiet()` gives ns since the last event, or false in a turn that had one.
-- Incremental mode only: there a cycle is many steps, and one put off is
-- taken later; a minor collection is one piece, and put off past a busy
-- turn it fell inside the next request instead (seen under ASan, where the
-- next request is often there already).
local function on_quiet_turns(stepper, quiet)
  if not quiet then return stepper end
  return function()
    local quiet_ns = quiet()
    if quiet_ns and quiet_ns >= M.QUIET_FOR_NS then stepper() end
  end
end

--- Start stepping on `uv`'s loop in the collector mode `mode` (from
--- `M.mode()`), reusing `handle` from an earlier start if given; returns
--- the handle to pass to `stop` and to the next start. The handle is
--- stopped, never closed: a close still pending when Lua exits would run on
--- freed memory (luv's loop finishes its closes from its finalizer).
--- `stats.steps` counts the steps taken, `stats.cycles` the collections
--- they ended (every step, in generational mode). With `quiet` (while the
--- loop polls before it sleeps), incremental steps are taken only in the
--- turns where `quiet()`, the ns since the last event (false in a turn that
--- had one), is at least QUIET_FOR_NS.
---@param uv table  the luv module
---@param handle userdata|nil
---@param mode "generational"|"incremental"
---@param stats {steps: integer, cycles: integer}
---@param quiet? fun(): integer|false
---@return userdata|nil
function M.start(uv, handle, mode, stats, quiet)
  handle = handle or uv.new_prepare()
  if handle == nil then return nil end
  if mode == "generational" then
    handle:start(generational_stepper(uv, stats))
  else
    handle:start(on_quiet_turns(incremental_stepper(uv, stats), quiet))
  end
  handle:unref()  -- never what keeps the loop alive
  return handle
end

--- Stop stepping (a nil or already stopped handle is fine).
function M.stop(handle)
  if handle and not handle:is_closing() then handle:stop() end
end

return M
