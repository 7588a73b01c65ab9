--- A pool of worker coroutines that run handlers.
-- Each incoming request runs in a coroutine so its handler may wait for a
-- reply from the other side. Creating a coroutine per request is too slow,
-- so a worker whose handler finished without waiting goes back to the pool;
-- a worker whose handler waits stays with it, and the next request gets
-- another worker.
local create, resume = coroutine.create, coroutine.resume
local status = coroutine.status
local traceback = debug.traceback

local M = {}

-- Yielded by a worker between jobs. Private: no other yield can be equal to
-- it, so "yielded IDLE" means "finished its job", anything else "waiting".
local IDLE = setmetatable({}, { __tostring = function() return "jrpc.IDLE" end })
M.IDLE = IDLE

local MAX_IDLE = 16  -- idle workers kept per peer; more are left to the GC

local function give_back(peer, co)
  local n = peer._nidle
  if n < MAX_IDLE then
    n = n + 1
    peer._idle[n] = co
    peer._nidle = n
  end
end

local function failed(peer, co, err)
  peer._log("coroutine failed: " .. traceback(co, tostring(err)))
end

--- Resume a waiting coroutine (a worker or the caller's own) with its
--- settlement. Errors inside it are reported, never raised: they must not
--- break the receive loop that settled the request.
---@param peer table
---@param co thread
---@return boolean waiting  true when the coroutine is suspended, waiting again
function M.resume(peer, co, ...)
  local ok, signal = resume(co, ...)
  if signal == IDLE then
    give_back(peer, co)
    return false
  end
  if not ok then
    failed(peer, co, signal)
    return false
  end
  return status(co) == "suspended"
end

--- Run a job on an idle worker (or a new one running `main`, which must
--- loop: do the job, then `a, b, c = coroutine.yield(workers.IDLE)`).
--- This is take + resume in one call: it is on the hot path.
---@param peer table
---@param main fun(a: any, b: any, c: any)
---@return boolean waiting  true when the job waits (the worker stays with it)
function M.run(peer, main, a, b, c)
  local n = peer._nidle
  local co
  if n == 0 then
    co = create(main)
  else
    local idle = peer._idle
    co = idle[n]
    idle[n] = nil
    peer._nidle = n - 1
  end
  local ok, signal = resume(co, a, b, c)
  if signal == IDLE then  -- inlined give_back(peer, co)
    n = peer._nidle
    if n < MAX_IDLE then
      peer._nidle, peer._idle[n + 1] = n + 1, co
    end
    return false
  end
  if not ok then
    failed(peer, co, signal)
    return false
  end
  return true
end

return M
