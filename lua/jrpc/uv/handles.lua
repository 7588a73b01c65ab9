--- Closing libuv handles safely.
-- A handle closes in two steps: uv.close() marks it, the loop completes it
-- on its next iteration. luv 1.44 crashes at exit (lua_close) when a handle
-- is still half-closed: its memory is freed by its finalizer before luv's
-- loop finalizer completes the close. Closes made while the loop runs
-- complete in that same iteration; a close made while nobody runs the
-- loop (after run() returned, or a spawn that failed) might not. For
-- those, an exit guard is (re)made after the close: a finalizer newer than
-- every such handle, so at exit it runs first and completes the closes
-- with one non-blocking loop iteration. Nothing is done before exit.
local co = require "jrpc.uv.co"

local M = {}

local outside = 0   -- closes made while the loop was not running, not yet completed
local guard = nil   -- the current exit guard; older ones do nothing

local function new_guard(uv)
  local function check(self)
    if self ~= guard or outside == 0 then return end
    if uv.loop_mode == nil or uv.loop_mode() == nil then uv.run("nowait") end
  end
  local newproxy = rawget(_G, "newproxy")
  if newproxy then  -- LuaJIT: tables have no __gc
    local proxy = newproxy(true)
    getmetatable(proxy).__gc = check
    return proxy
  end
  return setmetatable({}, { __gc = check })
end

local function running(uv)
  return uv.loop_mode ~= nil and uv.loop_mode() ~= nil
end

--- Note a close (ours or luv's) made while the loop may not run again.
---@param uv table
---@param completes? boolean  false when no callback will say it completed
function M.closing_outside(uv, completes)
  if completes == false then outside = outside + 1 end
  guard = new_guard(uv)
end

--- Close `handle` unless it is already closing; `cb` runs once it closed.
---@param uv table
---@param handle userdata
---@param cb? fun()
function M.close(uv, handle, cb)
  if handle == nil then return end
  -- at exit, a callback may meet a handle whose finalizer already ran
  local ok, closing = pcall(handle.is_closing, handle)
  if not ok or closing then return end
  if type(handle) ~= "userdata" then  -- a jrpc.uv.files end: closes at once
    handle:close()
    if cb then co.call(cb, "close callback") end
    return
  end
  if running(uv) then
    if cb then handle:close(co.guard(cb, "close callback")) else handle:close() end
    return
  end
  outside = outside + 1
  handle:close(co.guard(function()
    outside = outside - 1
    if cb then cb() end
  end, "close callback"))
  M.closing_outside(uv)
end

--- Close a writable stream after what is queued on it was written (a
--- shutdown waits for that), but never later than `linger` seconds.
---@param uv table
---@param stream userdata|table
---@param linger number
function M.flush_then_close(uv, stream, linger)
  if stream:is_closing() then return end
  if stream:get_write_queue_size() == 0 or type(stream) ~= "userdata" then
    return M.close(uv, stream)
  end
  local timer
  local ok = stream:shutdown(co.guard(function()
    M.close(uv, timer)
    M.close(uv, stream)
  end, "shutdown"))
  if not ok then return M.close(uv, stream) end
  timer = uv.new_timer()
  timer:start(math.ceil(linger * 1000), 0, co.guard(function()
    M.close(uv, timer)
    M.close(uv, stream)
  end, "linger"))
  timer:unref()  -- the shutdown itself keeps the loop alive
end

return M
