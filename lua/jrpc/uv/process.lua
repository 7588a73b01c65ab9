--- A child process as a connection: we write to its stdin, read its
-- stdout; its stderr is inherited, captured, or handed to a function.
-- Inside Neovim the default is to capture it: the editor's stderr is the
-- terminal it draws on, where a child's log lines would garble the screen.
--
-- The end of a child has two signs that come in either order: its stdout
-- ends (or a write to its stdin fails) and it exits. Whichever comes first
-- waits up to EXIT_GRACE for the other, so replies it wrote just before
-- exiting are still read and the pending requests settle with the best
-- reason: "process exited with code N", "process killed by signal N (SIGX)",
-- or, for a child that closed its stdout and lives on, "process closed its
-- stdout".
local stream = require "jrpc.uv.stream"
local co = require "jrpc.uv.co"
local timers = require "jrpc.uv.timers"
local handles = require "jrpc.uv.handles"
local connection = require "jrpc.connection"
local options = require "jrpc.options"
local errors = require "jrpc.errors"
local logs = require "jrpc.log"

local M = {}

M.OPTIONS = options.set({ "cmd", "args", "env", "cwd", "stderr", "on_exit" }, stream.OPTIONS,
  connection.PEER_OPTIONS)

M.EXIT_GRACE = 0.05
M.MAX_STDERR_CAPTURE = 1024 * 1024  -- stderr = "pipe" keeps at most this much

---@class jrpc.uv.Child: jrpc.uv.Connection
---@field pid integer
---@field exit_code integer|nil    set once it exited (0 when killed by a signal)
---@field exit_signal integer|nil  set once it exited: the signal that killed it, or 0
---@field on_exit? fun(code: integer, signal: integer)
local Child = setmetatable({}, { __index = stream.Connection })
Child.__index = Child

local SIGNAL_NAMES = { [1] = "SIGHUP", [2] = "SIGINT", [3] = "SIGQUIT", [6] = "SIGABRT",
  [9] = "SIGKILL", [11] = "SIGSEGV", [13] = "SIGPIPE", [15] = "SIGTERM" }

local function exit_reason(code, signal)
  if signal ~= 0 then
    local name = SIGNAL_NAMES[signal]
    return ("process killed by signal %d%s"):format(signal, name and " (" .. name .. ")" or "")
  end
  return "process exited with code " .. tostring(code)
end

-- {======================================================================
-- The end of the child
-- =======================================================================

-- A child that is gone reads no more replies: its connection closes with
-- no grace for our handlers still working on its requests.
function Child:_gone(reason)
  self:finish(reason, 0)
end

-- The other sign of the end may still come: wait EXIT_GRACE for it.
function Child:_await_exit_grace(reason)
  self._exit_grace = timers.after(self.uv, M.EXIT_GRACE, function() self:_gone(reason) end, "exit grace")
end

-- The stream ended (stdout closed, or a read/write failed).
function Child:_ended(reason)
  if self:closed() then return end
  if self.exit_code ~= nil then
    return self:_gone(exit_reason(self.exit_code, self.exit_signal))
  end
  if self._ended_reason then return end
  self._ended_reason = reason
  self:_await_exit_grace(reason)
end

function Child:_watch_exit(on_exit)
  self.on_exit, self._exit_waiters = on_exit, {}
end

function Child:_notify_exit(code, signal)
  local log = self.link:logger()
  if self.on_exit then co.call(self.on_exit, "on_exit", log, code, signal) end
  local waiters = self._exit_waiters
  self._exit_waiters = {}
  for _, waiter in ipairs(waiters) do co.resume(waiter, log, code, signal) end
end

function Child:_on_exit(code, signal)
  self.exit_code, self.exit_signal = code, signal
  self.loop.events = self.loop.events + 1
  timers.cancel(self.uv, self._term_timer)
  timers.cancel(self.uv, self._kill_timer)
  handles.close(self.uv, self.handle)
  local reason = exit_reason(code, signal)
  if self._ended_reason then
    timers.cancel(self.uv, self._exit_grace)
    self:_gone(reason)
  elseif not self:closed() then
    -- its stdout may still hold replies written just before the exit
    self:_await_exit_grace(reason)
  end
  self:_notify_exit(code, signal)
end

-- }======================================================================

-- {======================================================================
-- Shutdown
-- =======================================================================

--- Send a signal (default "sigterm"). Returns true, or nil, err.
---@param signal? string|integer
function Child:kill(signal)
  if self.exit_code ~= nil then return nil, "process has exited" end
  local ok, err = self.handle:kill(signal or "sigterm")
  if not ok then return nil, err end
  return true
end

function Child:_close_stdin(grace)
  self:_hold_sends("process is shutting down")  -- nothing new is sent
  self.link:flush()  -- what a receive under way collected goes out first
  -- what is queued reaches it first; a child that does not read gets SIGTERM anyway
  handles.flush_then_close(self.uv, self.writer, grace)
end

--- Clean shutdown: close the child's stdin, wait up to `grace` seconds for it
--- to exit, then SIGTERM, another `grace`, then SIGKILL. Its stdout is read
--- until it exits. In a coroutine, waits for the exit and returns
--- exit_code, exit_signal; otherwise returns at once (see `on_exit`).
---@param grace? number  seconds, default 2
---@return integer|nil exit_code
---@return integer|nil exit_signal
function Child:shutdown(grace)
  grace = grace or 2
  if type(grace) ~= "number" or grace < 0 then error("shutdown: grace must be a number of seconds", 2) end
  if self.exit_code ~= nil then return self.exit_code, self.exit_signal end
  if not self._shutting_down then
    self._shutting_down = true
    self:_close_stdin(grace)
    self._term_timer = timers.after(self.uv, grace, function()
      self:kill("sigterm")
      self._kill_timer = timers.after(self.uv, grace, function() self:kill("sigkill") end, "kill")
    end, "terminate")
  end
  local waiter = co.current()
  if waiter == nil then return nil end
  self._exit_waiters[#self._exit_waiters + 1] = waiter
  return co.wait("shutdown")
end

-- }======================================================================

-- {======================================================================
-- stderr
-- =======================================================================

--- What the child wrote to stderr (stderr = "pipe"), up to MAX_STDERR_CAPTURE bytes.
---@return string
function Child:stderr_text()
  return table.concat(self._stderr_chunks or {})
end

function Child:_capture()
  local chunks, size = {}, 0
  self._stderr_chunks = chunks
  return function(chunk)
    if size >= M.MAX_STDERR_CAPTURE then return end
    chunk = chunk:sub(1, M.MAX_STDERR_CAPTURE - size)
    size = size + #chunk
    chunks[#chunks + 1] = chunk
  end
end

-- The stdio slot for stderr, and the function that receives what it reads.
local function stderr_slot(uv, mode, child)
  if mode == nil then mode = logs.nvim() and "pipe" or "inherit" end
  if mode == "inherit" then return 2 end
  if mode == "ignore" then return nil end
  local sink
  if mode == "pipe" then sink = child:_capture()
  elseif type(mode) == "function" then sink = mode
  else error('spawn: stderr must be "inherit", "pipe", "ignore" or a function', 4) end
  return uv.new_pipe(false), sink
end

local function read_stderr(child, pipe, sink)
  pipe:read_start(co.guard(function(err, chunk)
    if err or chunk == nil then return handles.close(child.uv, pipe) end
    sink(chunk)
  end, "stderr reader", child.link:logger()))
end

-- }======================================================================

local function env_list(env)
  if env == nil or env[1] ~= nil then return env end
  local list = {}
  for k, v in pairs(env) do list[#list + 1] = k .. "=" .. tostring(v) end
  table.sort(list)
  return list
end

local function check(opts)
  if type(opts) ~= "table" then error("spawn: expected an options table", 3) end
  options.check("spawn", opts, 3, M.OPTIONS)
  if type(opts.cmd) ~= "string" then error("spawn: cmd must be a string", 3) end
  if opts.args ~= nil and type(opts.args) ~= "table" then error("spawn: args must be a list of strings", 3) end
end

local function close_all(uv, ...)
  for i = 1, select("#", ...) do
    local h = select(i, ...)
    if type(h) == "userdata" then handles.close(uv, h) end
  end
end

--- Spawn `opts.cmd` with `opts.args` and talk JSON-RPC over its stdin/stdout.
---@param loop table
---@param opts table  cmd, args, env (list of "K=V" or a map), cwd,
---  stderr ("inherit" | "pipe" | "ignore" | function(chunk); default "inherit", inside
---  Neovim "pipe"), on_exit, peer and transport options
---@return jrpc.uv.Child|nil child
---@return jrpc.Error|nil err  code "spawn"
function M.spawn(loop, opts)
  check(opts)
  local uv = loop.uv
  local stdin, stdout = uv.new_pipe(false), uv.new_pipe(false)
  -- we started it: a client, which never answers what it cannot decode
  local child = stream.new(loop, stdout, stdin, opts, { eof_reason = "process closed its stdout",
    role = "client", class = Child })
  child:_watch_exit(opts.on_exit)
  local err_pipe, sink = stderr_slot(uv, opts.stderr, child)
  local handle, pid_or_err = uv.spawn(opts.cmd, {
    args = opts.args, env = env_list(opts.env), cwd = opts.cwd,
    stdio = { stdin, stdout, err_pipe },
  }, co.guard(function(code, signal) child:_on_exit(code, signal) end, "exit", child.link:logger()))
  if not handle then
    close_all(uv, stdin, stdout, err_pipe)
    -- luv closes the failed process handle itself: guard the exit for it
    handles.closing_outside(uv, false)
    return nil, errors.new("spawn", ("cannot start %s: %s"):format(opts.cmd, tostring(pid_or_err)))
  end
  child.handle, child.pid = handle, pid_or_err
  if sink then read_stderr(child, err_pipe, sink) end
  return child:start()
end

return M
