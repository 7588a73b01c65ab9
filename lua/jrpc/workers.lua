--- Worker coroutines, and the one rule for waiting inside them.
--
-- Handlers run in coroutines so they may wait for a reply from the other
-- side. Creating a coroutine per message is too slow, so a worker whose job
-- finished without waiting goes back to its pool; a worker whose job waits
-- stays with it, and the next job gets another worker.
--
-- Every wait of jrpc's own yields the private WAIT marker, and every wake-up
-- resumes with the private WAKE marker first. So a resume site can tell a
-- worker that waits for jrpc from one whose handler yielded to another
-- scheduler (cqueues, copas, an editor's own waits: "foreign"), and a wait
-- can tell jrpc's wake-up from a resume by someone else.
--
-- A foreign yield goes up: when the code that resumed the worker runs in
-- a coroutine itself (a transport's read under that scheduler), the
-- yield passes up to it, and what it resumes with passes back down to the
-- handler, until the worker is jrpc's again (done, or waiting for jrpc).
-- So a handler may wait in the scheduler that runs jrpc. Only when nothing
-- above can yield is a foreign yield the handler's failure.
local errors = require "jrpc.errors"

local create, resume, yield = coroutine.create, coroutine.resume, coroutine.yield
local running, isyieldable = coroutine.running, coroutine.isyieldable
local status = coroutine.status
local traceback = debug.traceback

local M = {}

local function marker(name)
  return setmetatable({}, { __tostring = function() return name end })
end

-- Yielded by a worker between jobs: "finished its job".
local IDLE = marker("jrpc.IDLE")
-- Yielded by every jrpc wait: "waiting for jrpc to wake me".
local WAIT = marker("jrpc.WAIT")
-- Passed first by every jrpc wake-up.
local WAKE = marker("jrpc.WAKE")

local MAX_IDLE = 16  -- idle workers kept per pool; more are left to the GC

-- {======================================================================
-- Waiting (any coroutine: a worker or the user's own)
-- =======================================================================

--- The running coroutine if we may yield from here (not the main one), else nil.
---@return thread|nil
function M.current()
  local co, main = running()
  if co == nil or main then return nil end
  if isyieldable and not isyieldable() then return nil end
  return co
end

--- Wait until `wake(co, ...)`: returns true, ... ; or false when something
--- other than jrpc resumed the coroutine (then nothing else is returned).
---@return boolean woken
local function woken(tag, ...)
  if tag ~= WAKE then return false end
  return true, ...
end

function M.wait()
  return woken(yield(WAIT))
end

--- In the coroutine `co` (the running one, see `current`): run
--- `start(done)` and wait until `done(err, result)`; returns result, err,
--- or nil and an "interrupted" error when something other than jrpc
--- resumed it. A `done` that comes at once (inside `start`) is kept, not
--- woken. Failures of the wake are reported through `log`.
---@param co thread
---@param log fun(msg: string)
---@param start fun(done: fun(err: any, result: any))
function M.await(co, log, start)
  local box, waiting = nil, false
  start(function(err, result)
    if waiting then
      waiting = false
      M.wake(co, log, err, result)
    elseif box == nil then
      box = { err = err, result = result }
    end
  end)
  if box then return box.result, box.err end
  waiting = true
  local ok, err, result = M.wait()
  if not ok then
    waiting = false
    return nil, errors.new("interrupted", "the waiting coroutine was resumed by something other than jrpc")
  end
  return result, err
end

-- Passed down by a resume site that cannot pass a yield further up (it
-- runs on the main thread) to the worker that passed it from below: that
-- yield is foreign where it came from.
local REFUSED = marker("jrpc.REFUSED")

-- Coroutines that passed a yield up from a worker they resumed, and wait
-- for what comes back down (weak: one nobody resumes is left to the GC).
local passing = setmetatable({}, { __mode = "k" })

local pass_down

-- The worker `co` yielded `signal, ...`: while that is another scheduler's
-- yield, pass it up when the running coroutine may yield, and what comes
-- back down to the worker. On the main thread it stays foreign, unless
-- `co` only passed it from a worker below: then `co` gets it back refused,
-- and goes on. Returns the last resume's results.
local function pass_up(co, ok, signal, ...)
  if not ok or signal == IDLE or signal == WAIT then return ok, signal, ... end
  local me = M.current()
  if me == nil then
    if not passing[co] then return ok, signal, ... end
    passing[co] = nil
    return pass_up(co, resume(co, REFUSED))
  end
  passing[me] = true
  return pass_down(co, me, yield(signal, ...))
end

function pass_down(co, me, first, ...)
  passing[me] = nil
  if first == REFUSED then return true, REFUSED end  -- foreign here: nothing above could take it
  return pass_up(co, resume(co, first, ...))
end

-- pass_up from a resume site that kept six values: as many as were yielded
-- up to the last that is not nil. (The sites keep six, so that the common
-- case pays for no vararg call: a first yield of more than six values, or
-- one that ends in nils, loses the rest.)
local function pass_up6(co, ok, a, b, c, d, e, f)
  if f ~= nil then return pass_up(co, ok, a, b, c, d, e, f) end
  if e ~= nil then return pass_up(co, ok, a, b, c, d, e) end
  if d ~= nil then return pass_up(co, ok, a, b, c, d) end
  if c ~= nil then return pass_up(co, ok, a, b, c) end
  if b ~= nil then return pass_up(co, ok, a, b) end
  return pass_up(co, ok, a)
end

-- }======================================================================

-- {======================================================================
-- A pool of workers
-- =======================================================================

---@class jrpc.Pool
local Pool = {}
Pool.__index = Pool
M.Pool = Pool

-- Workers that wait in a jrpc wait, by coroutine: their pool and the job's
-- context (weak: a worker nobody will wake is left to the GC).
local parked_pool = setmetatable({}, { __mode = "k" })
local parked_job = setmetatable({}, { __mode = "k" })

--- A pool whose failures are reported through `log(msg)`; `on_foreign(job)`
--- is called with a parked job whose worker yielded to another scheduler,
--- and `on_raised(job, err)`, if given, with a parked job whose worker
--- raised `err` (a job `run` left unprotected: see there) instead of the log.
---@param log fun(msg: string)
---@param on_foreign fun(job: any)
---@param on_raised? fun(job: any, err: any)
---@return jrpc.Pool
function M.new(log, on_foreign, on_raised)
  return setmetatable({ idle = {}, nidle = 0, log = log, on_foreign = on_foreign,
    on_raised = on_raised, lend = nil, holds = nil }, Pool)
end

-- The body of every worker: run a job, report IDLE with the job's first
-- three results, wait for the next one. (Fixed parameters, no varargs:
-- this is on every request's path.)
local function main(job, a, b, c, d, e, f, g, h)
  while true do
    job, a, b, c, d, e, f, g, h = yield(IDLE, job(a, b, c, d, e, f, g, h))
  end
end

--- An idle worker, or a new one; nil when there is no memory for one
--- (never raises: dispatch relies on it). The one a runner keeps at hand
--- is taken before a new one is made.
---@return thread|nil
function Pool:take()
  local n = self.nidle
  if n == 0 then
    local co = self.lend and self.lend()
    if co then return co end
    local ok, created = pcall(create, main)
    return ok and created or nil
  end
  local idle = self.idle
  local co = idle[n]
  idle[n] = nil
  self.nidle = n - 1
  return co
end

-- A worker whose job finished goes back to the pool.
local function give_back(self, co)
  local n = self.nidle
  if n < MAX_IDLE then self.nidle, self.idle[n + 1] = n + 1, co end
end

-- What a resume of a worker came back with:
--   "done"     the job finished; the worker is back in the pool
--   "waiting"  the job waits in a jrpc wait; the worker stays with it
--   "failed"   the job raised (reported); the worker is dropped
--   "foreign"  the job yielded something else (another scheduler's yield);
--              the worker is dropped: jrpc will never resume it
local function outcome(self, co, ok, signal)
  if signal == IDLE then
    give_back(self, co)
    return "done"
  end
  if not ok then
    self.log("coroutine failed: " .. traceback(co, tostring(signal)))
    return "failed"
  end
  if signal == WAIT then return "waiting" end
  return "foreign"
end

--- Start `job(a, ..., h)` on the worker `co` (from `take`), for a job
--- that catches no errors of its own: a raise ends the worker (dropped,
--- not logged) and comes back as "raised" and the error, for the caller to
--- answer. (A raise after a wait reaches `on_raised`, as for `run`.)
---@return string outcome  "done" | "waiting" | "raised" | "foreign"
---@return any err  with "raised"
function Pool:start_raw(co, job, a, b, c, d, e, f, g, h)
  local ok, signal, x1, x2, x3, x4, x5 = resume(co, job, a, b, c, d, e, f, g, h)
  if signal ~= IDLE and ok and signal ~= WAIT then ok, signal = pass_up6(co, ok, signal, x1, x2, x3, x4, x5) end
  if signal == IDLE then  -- outcome's first case, inlined: most reads take it
    give_back(self, co)
    return "done"
  end
  if not ok then return "raised", signal end
  return outcome(self, co, ok, signal)
end

--- Like `start_raw`, with a raise reported through the pool's log and
--- the outcome "failed".
---@return string outcome  "done" | "waiting" | "failed" | "foreign"
function Pool:start(co, job, a, b, c, d, e, f, g, h)
  local result, err = self:start_raw(co, job, a, b, c, d, e, f, g, h)
  if result ~= "raised" then return result end
  return outcome(self, co, false, err)
end

--- A function `run(job, a, b, c, d, e, f)` that runs `job(own, a, b, c,
--- d, e, f)` on a worker of the pool, `own` being that worker's own value
--- (made by `make_own()` when the worker is first used): `take` and
--- `start_raw` in one call, for every read. The runner keeps the worker it
--- last used at hand, as an upvalue: a run that finishes costs no field
--- reads or writes for it. `run` returns "done" when the job finished;
--- "raised" and the error when it raised (not logged: the caller answers
--- for it; should the job raise after a wait, `on_raised` hears of it);
--- else the outcome ("waiting" or "foreign") and the worker. Nil when
--- there is no memory for a worker.
---@param make_own fun(): any
---@return fun(job: function, a: any, b: any, c: any, d: any, e: any, f: any): string|nil, any
function Pool:runner(make_own)
  if self.lend then error("jrpc.workers: a pool has one runner", 2) end
  local pool, hot, hot_own = self, nil, nil
  local own_of = setmetatable({}, { __mode = "k" })
  self.lend = function()  -- for take: hand it over
    local co = hot
    hot = nil
    return co
  end
  self.holds = function() return hot ~= nil end
  local function run(job, a, b, c, d, e, f)
    local co, own = hot, hot_own
    if co then
      hot = nil  -- a nested run (the handler reads) must not take it too
    else
      co = pool:take()
      if co == nil then return nil end
      own = own_of[co]
      if own == nil then
        own = make_own()
        own_of[co] = own
      end
    end
    local ok, signal, r, x2, x3, x4, x5 = resume(co, job, own, a, b, c, d, e, f)
    if signal == IDLE then
      if hot == nil then hot, hot_own = co, own else give_back(pool, co) end
      return "done", r
    end
    if ok and signal ~= WAIT then  -- another scheduler's: up, if anything above can yield
      ok, signal, r = pass_up6(co, ok, signal, r, x2, x3, x4, x5)
      if signal == IDLE then
        if hot == nil then hot, hot_own = co, own else give_back(pool, co) end
        return "done", r
      end
    end
    if not ok then return "raised", signal, co end
    return outcome(pool, co, ok, signal), co
  end
  return run
end

--- How many idle workers the pool keeps.
---@return integer
function Pool:idle_count()
  return self.nidle + (self.holds and self.holds() and 1 or 0)
end

--- The worker `co` waits (its start said "waiting") on behalf of `job`:
--- whoever wakes it, what it does next is classified as by `start`.
function Pool:park(co, job)
  parked_pool[co], parked_job[co] = self, job
end

-- }======================================================================

--- Wake a coroutine waiting in `wait` with `...`. A parked worker's next
--- outcome is handled here (a foreign yield reaches its pool's on_foreign);
--- any other coroutine (the user's own) may yield what it likes, and an
--- error in it is reported through `log`.
---@param co thread
---@param log fun(msg: string)
function M.wake(co, log, ...)
  if status(co) ~= "suspended" then return end
  local pool = parked_pool[co]
  if pool == nil then
    local ok, err = resume(co, WAKE, ...)
    if not ok then log("coroutine failed: " .. traceback(co, tostring(err))) end
    return
  end
  local job = parked_job[co]
  local ok, signal, x1, x2, x3, x4, x5 = resume(co, WAKE, ...)
  if signal ~= IDLE and ok and signal ~= WAIT then ok, signal = pass_up6(co, ok, signal, x1, x2, x3, x4, x5) end
  if not ok and pool.on_raised then
    parked_pool[co], parked_job[co] = nil, nil
    return pool.on_raised(job, signal, co)
  end
  local result = outcome(pool, co, ok, signal)
  if result ~= "waiting" then
    parked_pool[co], parked_job[co] = nil, nil
    if result == "foreign" then pool.on_foreign(job) end
  end
end

return M
