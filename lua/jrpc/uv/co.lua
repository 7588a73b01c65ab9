--- Coroutines and callbacks on a luv loop.
-- luv ends the whole process when a Lua callback raises ("Uncaught Error"),
-- so every callback we hand to luv goes through `guard`, and every coroutine
-- we resume from a callback goes through `resume`: an error is reported,
-- never raised into luv.
local workers = require "jrpc.workers"
local logs = require "jrpc.log"

local traceback = debug.traceback

local M = {}

-- stderr, or vim.notify inside Neovim (see log.lua)
local function report(msg)
  logs.report("jrpc.uv: ", msg)
end

--- The running coroutine if it may yield from here (not the main one), else nil.
---@type fun(): thread|nil
M.current = workers.current

--- Wake `co`, waiting in `wait`, with the values given; an error inside it
--- is reported with its traceback (through `on_error` when given), never
--- raised.
---@param co thread
---@param on_error? fun(msg: string)
function M.resume(co, on_error, ...)
  workers.wake(co, on_error or report, ...)
end

local function woken(what, ok, ...)
  if not ok then
    error("jrpc.uv: " .. what .. " was resumed by something other than jrpc (another scheduler?)", 0)
  end
  return ...
end

--- In a coroutine: wait until `resume(co, ...)` and return its values. A
--- resume by anyone else raises (jrpc's waits never mistake another
--- scheduler's wake-up for their own).
---@param what string  names the wait in the error
function M.wait(what)
  return woken(what, workers.wait())
end

--- Wrap a callback for luv: errors are reported, not raised.
---@param fn function
---@param what string  names the callback in the report
---@param on_error? fun(msg: string)
---@return function
function M.guard(fn, what, on_error)
  return function(...)
    local ok, err = xpcall(fn, traceback, ...)
    if not ok then (on_error or report)(what .. " failed: " .. tostring(err)) end
  end
end

--- Call `fn(...)` now, reporting (not raising) its error.
function M.call(fn, what, on_error, ...)
  local ok, err = xpcall(fn, traceback, ...)
  if not ok then (on_error or report)(what .. " failed: " .. tostring(err)) end
end

M.report = report

return M
