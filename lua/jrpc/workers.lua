--- A pool of worker coroutines.
-- Handlers run in coroutines so they may wait for a reply from the other
-- side. Creating a coroutine per message is too slow, so a worker whose job
-- finished without waiting goes back to the pool; a worker whose job waits
-- stays with it, and the next job gets another worker.
local create, resume, yield = coroutine.create, coroutine.resume, coroutine.yield
local status = coroutine.status
local traceback = debug.traceback

local M = {}

-- Yielded by a worker between jobs. Private: no other yield can be equal to
-- it, so "yielded IDLE" means "finished its job", anything else "waiting".
local IDLE = setmetatable({}, { __tostring = function() return "jrpc.IDLE" end })
M.IDLE = IDLE

local MAX_IDLE = 16  -- idle workers kept per peer; more are left to the GC

-- The body of every worker: run a job, report IDLE, wait for the next one.
-- (Fixed parameters, no varargs: this is on every request's path.)
local function main(job, a, b, c, d, e, f, g, h)
  while true do
    job(a, b, c, d, e, f, g, h)
    job, a, b, c, d, e, f, g, h = yield(IDLE)
  end
end

--- An idle worker of the peer, or a new one.
---@param peer table
---@return thread
function M.take(peer)
  local n = peer._nidle
  if n == 0 then return create(main) end
  local idle = peer._idle
  local co = idle[n]
  idle[n] = nil
  peer._nidle = n - 1
  return co
end

local function give_back(peer, co)
  local n = peer._nidle
  if n < MAX_IDLE then
    peer._nidle, peer._idle[n + 1] = n + 1, co
  end
end

local function failed(peer, co, err)
  peer._log("coroutine failed: " .. traceback(co, tostring(err)))
end

-- What a resume came back with: the worker finished (back to the pool), it
-- failed (reported), or it waits.
local function after_resume(peer, co, ok, signal)
  if signal == IDLE then
    give_back(peer, co)
    return false
  end
  if not ok then
    failed(peer, co, signal)
    return false
  end
  return true
end

--- Start `job(a, ..., h)` on the worker `co` (from `take`).
---@return boolean waiting  true when the job waits (the worker stays with it)
function M.start(peer, co, job, a, b, c, d, e, f, g, h)
  return after_resume(peer, co, resume(co, job, a, b, c, d, e, f, g, h))
end

--- Run `job(a, b, c)` on a worker of the peer.
---@return boolean waiting  true when the job waits (the worker stays with it)
function M.run(peer, job, a, b, c)
  return M.start(peer, M.take(peer), job, a, b, c)
end

--- Resume a waiting coroutine (a worker or the caller's own) with its
--- settlement. Errors inside it are reported, never raised: they must not
--- break the receive loop that settled the request.
---@param peer table
---@param co thread
---@return boolean waiting  true when the coroutine is suspended, waiting again
function M.resume(peer, co, ...)
  return after_resume(peer, co, resume(co, ...)) and status(co) == "suspended"
end

return M
