--- Timers: one libuv timer per peer for request deadlines, and one-shot
-- timers (run later, sleep, grace periods).
local co = require "jrpc.uv.co"
local handles = require "jrpc.uv.handles"

local ceil = math.ceil

local M = {}

--- Run `fn()` once after `seconds` (0: on the next loop iteration).
--- Returns the timer, which `cancel` stops.
---@param uv table  the luv module
---@param seconds number
---@param fn fun()
---@param what? string  names fn in error reports
---@return userdata timer
function M.after(uv, seconds, fn, what)
  local timer = uv.new_timer()
  -- libuv counts from the loop's cached time, stale by whatever ran since
  -- the loop last woke, and in whole milliseconds, truncated: without the
  -- update and the extra millisecond the timer may fire that much early
  uv.update_time()
  timer:start(ceil(seconds * 1000) + (seconds > 0 and 1 or 0), 0, co.guard(function()
    handles.close(uv, timer)
    fn()
  end, what or "timer"))
  return timer
end

--- Stop and close a timer from `after` (safe to call twice, or after it ran).
---@param uv table
---@param timer userdata|nil
function M.cancel(uv, timer)
  handles.close(uv, timer)
end

---@class jrpc.uv.Deadlines
local Deadlines = {}
Deadlines.__index = Deadlines

--- A deadline timer for `peer`: `arm` after anything that may add a
--- deadline; when it fires, `peer:tick()` expires what is due and the timer
--- is set to the next deadline. `on_fire` is called after each tick.
---@param uv table
---@param peer jrpc.Peer
---@param link jrpc.Link  the peer's (jrpc.peer.link)
---@param on_fire? fun()
---@return jrpc.uv.Deadlines
function M.deadlines(uv, peer, link, on_fire)
  return setmetatable({ uv = uv, peer = peer, link = link, timer = nil, at = nil, on_fire = on_fire }, Deadlines)
end

-- The timer fired: expire, then wait for the next deadline (if any).
local function fire(self)
  self.at = nil
  if self.on_fire then self.on_fire() end
  self:arm(self.peer:tick())
end

-- The timer and its callback, made on first use. A function of its own:
-- a closure made inside `arm` would make each of its early returns close
-- an upvalue (LuaJIT 2.1 cannot compile that, and arm runs per send).
function Deadlines:_new_timer()
  local timer = self.uv.new_timer()
  self.timer = timer
  self.callback = co.guard(function() fire(self) end, "deadline timer")
  return timer
end

--- Make sure the timer fires by `deadline` (default: the peer's next
--- deadline). A later deadline than the one armed changes nothing: when the
--- timer fires early, `fire` simply sets it again.
---@param deadline? number  seconds on the peer's clock
function Deadlines:arm(deadline)
  deadline = deadline or self.link:next_deadline()
  if deadline == nil or self.closed then return end
  if self.at and self.at <= deadline then return end
  local timer = self.timer or self:_new_timer()
  -- whole milliseconds, rounded up, so it never fires before the deadline
  -- and never spins at 0 ms on a deadline a fraction of a millisecond away
  local ms = ceil((deadline - self.link:now()) * 1000)
  if ms < 0 then ms = 0 end
  self.uv.update_time()
  self.at = deadline
  timer:start(ms, 0, self.callback)
end

--- Stop for good (the connection closed).
function Deadlines:close()
  self.closed, self.at = true, nil
  handles.close(self.uv, self.timer)
end

return M
