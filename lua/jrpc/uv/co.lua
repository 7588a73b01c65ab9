--- Coroutines and callbacks on a luv loop.
-- luv ends the whole process when a Lua callback raises ("Uncaught Error"),
-- so every callback we hand to luv goes through `guard`, and every coroutine
-- we resume from a callback goes through `resume`: an error is reported,
-- never raised into luv.
local workers = require "jrpc.workers"
local logs = require "jrpc.log"
local connection_wait = require("jrpc.connection").wait

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

--- In a coroutine: wait until `resume(co, ...)` and return its values. A
--- resume by anyone else raises (jrpc.connection.wait).
---@param what string  names the wait in the error
function M.wait(what)
  return connection_wait("jrpc.uv", what)
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
