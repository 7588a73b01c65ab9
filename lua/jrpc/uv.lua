--- jrpc on libuv (luv): an event-loop context and its connections.
--
--     local loop = require("jrpc").uv.new(require "luv")   -- in Neovim: vim.uv
--     loop:run(function()
--       local child = assert(loop:spawn{ cmd = "lua5.4", args = { "server.lua" } })
--       print(child.peer:request("subtract", { 42, 23 }))   -- waits, the loop runs
--       child:shutdown()
--     end)
--
-- The luv module is passed in, never assumed global: the context uses its
-- default loop. Three ways to drive it: `run(fn)` (until fn returns),
-- `serve_forever()` (until `stop()`), and `pump(budget)` for hosts that own
-- their loop (one call per frame).
local co = require "jrpc.uv.co"
local timers = require "jrpc.uv.timers"
local idle_gc = require "jrpc.uv.idle_gc"
local busy_poll = require "jrpc.uv.busy_poll"
local options = require "jrpc.options"

local unpack = table.unpack or unpack
local pack = table.pack or function(...) return { n = select("#", ...), ... } end

local M = {}

---@class jrpc.uv.Loop
---@field uv table  the luv module
local Loop = {}
Loop.__index = Loop

-- {======================================================================
-- Driving the loop
-- =======================================================================

-- Reading paused by a pump that ran out of budget starts again.
local function unpause_all(self)
  local paused = self._paused
  if next(paused) == nil then return end
  self._paused = {}
  for conn in pairs(paused) do conn:_unpause() end
end

-- For connections: stop reading until the next pump (the budget is spent).
function Loop:_pause_until_pump(conn)
  self._paused[conn] = true
end

-- For connections: a closed one is not resumed.
function Loop:_forget_paused(conn)
  self._paused[conn] = nil
end

-- For connections: whether a pump's budget is spent (never outside pump).
function Loop:_pump_spent()
  local deadline = self._pump_deadline
  return deadline ~= nil and self.uv.hrtime() >= deadline
end

-- Inside uv.run (a callback), as opposed to between two runs.
local function inside_uv_run(uv)
  return uv.loop_mode == nil or uv.loop_mode() ~= nil
end

local function enter(self, what)
  if self._running or (self.uv.loop_mode and self.uv.loop_mode() ~= nil) then
    error("jrpc.uv: " .. what .. " called while the loop is running", 3)
  end
  unpause_all(self)
  self._running = true
  self._stop_requested = false  -- a stop() from now on counts, even before uv.run
end

-- A function telling, once per turn of the loop, how long the loop has been
-- quiet (ns since the turn that last saw an event), or false when this turn
-- had an event (one since the last time it was asked).
local function quiet_turns(self)
  local hrtime, seen, since = self.uv.hrtime, self.events, self.uv.hrtime()
  return function()
    local events = self.events
    if events == seen then return hrtime() - since end
    seen, since = events, hrtime()
    return false
  end
end

-- The options of run and serve_forever: what they do while they own the loop.
local OWN_OPTIONS = options.set{ "idle_gc", "busy_poll" }

-- opts.busy_poll: nil or false (never), true (the default budget where
-- more than one CPU), or µs; the budget in ns, or nil for none.
local function busy_poll_ns(uv, opt, what)
  if opt == nil or opt == false or opt == 0 then return nil end
  if opt == true then return busy_poll.useful(uv) and busy_poll.BUDGET_NS or nil end
  if type(opt) ~= "number" or opt < 0 or opt ~= opt then
    error(what .. ": busy_poll must be true, false or a number of µs >= 0", 4)
  end
  return math.floor(opt * 1000)
end

-- run and serve_forever own the loop while they last. When their options
-- ask: the loop polls a little before it sleeps (jrpc.uv.busy_poll), and the
-- collector's steps go where the loop would wait (jrpc.uv.idle_gc). While it
-- polls, incremental steps wait until the loop has been quiet a while
-- (jrpc.uv.idle_gc.QUIET_FOR_NS). Checked before the caller enters.
local function own_options(self, opts, what)
  opts = options.check(what, opts, 3, OWN_OPTIONS)
  if opts.idle_gc ~= nil and type(opts.idle_gc) ~= "boolean" then
    error(what .. ": idle_gc must be a boolean", 3)
  end
  return { idle_gc = opts.idle_gc, busy_poll_ns = busy_poll_ns(self.uv, opts.busy_poll, what) }
end

local function own(self, o)
  local polling = nil
  if o.busy_poll_ns then
    self._busy_poll = busy_poll.start(self, self._busy_poll, o.busy_poll_ns, self.poll_stats)
    polling = self._busy_poll
  end
  if not o.idle_gc then return end
  -- asked once per context, on the first run that wants it: Lua 5.4 tells
  -- the mode only by switching (jrpc.uv.idle_gc.mode)
  self._gc_mode = self._gc_mode or idle_gc.mode()
  self._idle_gc = idle_gc.start(self.uv, self._idle_gc, self._gc_mode, self.gc_stats,
    polling and quiet_turns(self))
end

local function leave(self)
  self._running = false
  busy_poll.stop(self._busy_poll)
  idle_gc.stop(self._idle_gc)
end

-- Run the loop until `outcome()` is set; the caller has entered.
local function run_until(self, outcome)
  local uv = self.uv
  while outcome() == nil do
    local alive = uv.run("default")
    if outcome() == nil and self._stop_requested then
      error("loop:run: stopped (loop:stop()) before the function returned", 0)
    end
    if outcome() == nil and not alive and not uv.loop_alive() then
      error("loop:run: the function waits, but nothing on the loop can wake it", 0)
    end
  end
end

--- Run `fn(loop)` in a coroutine on the loop until it returns, and return
--- what it returned (or raise its error). Inside, `peer:request(...)`,
--- `loop:connect{...}`, `child:shutdown()` and `loop:sleep(s)` wait like
--- blocking calls while the loop runs. Handles still open when `fn` returns
--- stay open (a later run or serve_forever uses them). Options: `busy_poll`
--- (true: poll 100 µs after each event before the loop sleeps, where there
--- is more than one CPU; or a number of µs; default none) and `idle_gc`
--- (true: the collector's steps are taken while the loop waits; default
--- false); both only while this call lasts.
---@param fn fun(loop: jrpc.uv.Loop): ...
---@param opts? {busy_poll?: boolean|number, idle_gc?: boolean}
---@return any ...
function Loop:run(fn, opts)
  if type(fn) ~= "function" then error("run: expected a function", 2) end
  local o = own_options(self, opts, "run")
  local uv, outcome = self.uv, nil
  local main = coroutine.create(function()
    outcome = pack(xpcall(fn, function(e)
      return type(e) == "string" and debug.traceback(e, 2) or e
    end, self))
    if inside_uv_run(uv) then uv.stop() end
  end)
  enter(self, "run")  -- also while fn runs up to its first wait
  own(self, o)
  local ok, err = pcall(function()
    assert(coroutine.resume(main))
    run_until(self, function() return outcome end)
  end)
  leave(self)
  if not ok then error(err, 0) end
  if not outcome[1] then error(outcome[2], 0) end
  return unpack(outcome, 2, outcome.n)
end

--- Run the loop until `stop()` is called, or until nothing is left on it.
--- Options as `run`'s.
---@param opts? {busy_poll?: boolean|number, idle_gc?: boolean}
function Loop:serve_forever(opts)
  local o = own_options(self, opts, "serve_forever")
  enter(self, "serve_forever")
  own(self, o)
  local ok, err = pcall(function()
    repeat
      local alive = self.uv.run("default")
    until self._stop_requested or not alive
  end)
  leave(self)
  if not ok then error(err, 0) end
end

--- Make `serve_forever` (or `run`, which then raises) return.
function Loop:stop()
  self._stop_requested = true
  if self._running then self.uv.stop() end
end

--- For hosts that own the loop (game engines, one call per frame): do the
--- I/O that is ready, run the handlers, callbacks and timers that are due,
--- and return within about `budget` seconds. A connection that has more to
--- read when the budget is spent stops reading until the next pump.
---@param budget? number  seconds, default 0.002
---@return boolean alive  true while there is work left (open handles)
function Loop:pump(budget)
  budget = budget or 0.002
  if type(budget) ~= "number" or budget < 0 then error("pump: budget must be a number of seconds", 2) end
  local uv = self.uv
  local deadline = uv.hrtime() + budget * 1e9
  enter(self, "pump")
  self._pump_deadline = deadline
  local ok, err = pcall(function()
    repeat
      local before = self.events
      uv.run("nowait")
    until self.events == before or uv.hrtime() >= deadline
  end)
  self._pump_deadline, self._running = nil, false
  if not ok then error(err, 0) end
  return uv.loop_alive()
end

--- In a coroutine: wait `seconds` while the loop runs.
---@param seconds number
function Loop:sleep(seconds)
  local waiter = co.current() or error("sleep: must be called in a coroutine (inside loop:run)", 2)
  timers.after(self.uv, seconds, function()
    self.events = self.events + 1
    co.resume(waiter)
  end, "sleep")
  co.wait("sleep")
end

-- }======================================================================

-- {======================================================================
-- Connections. The side that started a connection (spawn, connect) is
-- role "client": it never answers input it cannot decode (a server's log
-- lines, a message over max_message_bytes), it only logs it (on_debug).
-- The side that accepted one (listen, stdio) is role "server" and answers
-- it. Option `role` overrides either.
-- =======================================================================

--- This process's stdin/stdout, non-blocking. Ends at the end of input. Role "server".
---@param opts? table  peer options + max_write_queue, on_close
---@return jrpc.uv.Connection|nil conn
---@return jrpc.Error|nil err  code "stdio"
function Loop:stdio(opts)
  return require("jrpc.uv.stdio").open(self, opts)
end

--- Spawn a child process and talk to it over its stdin/stdout. Role "client".
---@param opts table  cmd, args, env, cwd, stderr, on_exit + peer/transport options
---@return jrpc.uv.Child|nil child
---@return jrpc.Error|nil err  code "spawn"
function Loop:spawn(opts)
  return require("jrpc.uv.process").spawn(self, opts)
end

--- Connect to a TCP (`host`, `port`) or Unix socket (`path`) server. Role "client".
---@param opts table
---@return jrpc.uv.Connection|boolean|nil
---@return jrpc.Error|nil err  code "connect"
function Loop:connect(opts)
  return require("jrpc.uv.net").connect(self, opts)
end

--- Listen for connections; each gets its own peer, role "server".
---@param opts table
---@return jrpc.uv.Server|nil server
---@return jrpc.Error|nil err  code "listen"
function Loop:listen(opts)
  return require("jrpc.uv.net").listen(self, opts)
end

-- }======================================================================

-- A write to a pipe or socket whose reader is gone raises SIGPIPE, which
-- ends the process by default; with a (never firing) libuv handler
-- installed the write fails with EPIPE instead and the connection closes.
-- The signal's disposition is the process's: asked for by the application.
function Loop:_catch_sigpipe()
  if self._sigpipe then return end
  local sig = self.uv.new_signal()
  if sig == nil then return end
  sig:start("sigpipe", function() end)
  sig:unref()
  self._sigpipe = sig
end

-- One context per luv module: they would share its default loop anyway.
local contexts = setmetatable({}, { __mode = "k" })

local NEW_OPTIONS = options.set{ "catch_sigpipe" }

--- The jrpc loop context on a luv module (`require "luv"`, or `vim.uv`).
--- Asking twice for the same module gives the same context. Option
--- `catch_sigpipe = true` installs a handler for SIGPIPE (once per context,
--- on whichever call asks), so that a write to a pipe or socket whose
--- reader is gone fails with EPIPE and closes that connection instead of
--- ending the process; it applies to the whole process. Default: SIGPIPE is
--- left alone.
---@param uv table
---@param opts? {catch_sigpipe?: boolean}
---@return jrpc.uv.Loop
function M.new(uv, opts)
  if type(uv) ~= "table" or type(uv.run) ~= "function" or type(uv.new_pipe) ~= "function" then
    error("jrpc.uv.new: expected the luv module (require \"luv\" or vim.uv)", 2)
  end
  -- Lua 5.4's require returns the loader data (a path) after the module:
  -- `jrpc.uv.new(require "luv")` passes it on
  if type(opts) == "string" then opts = nil end
  opts = options.check("jrpc.uv.new", opts, 2, NEW_OPTIONS)
  local loop = contexts[uv]
  if loop == nil then
    loop = setmetatable({ uv = uv, events = 0, _paused = {}, _running = false,
      _stop_requested = false, gc_stats = { steps = 0, cycles = 0 }, poll_stats = { polls = 0 } }, Loop)
    contexts[uv] = loop
  end
  if opts.catch_sigpipe then loop:_catch_sigpipe() end
  return loop
end

return M
