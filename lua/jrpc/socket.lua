--- jrpc on LuaSocket, for hosts without luv (LÖVE, most game engines): TCP
-- connections and servers driven by one `pump(budget)` call per frame.
--
--     local loop = require("jrpc.socket").new(require "socket")
--     loop:spawn_task(function()
--       local conn = assert(loop:connect{ port = 4000, timeout = 1 })
--       print(conn.peer:request("subtract", { 42, 23 }))  -- waits across frames
--     end)
--     function love.update() loop:pump(0.002) end
--
-- The LuaSocket module is passed in, never assumed global. Nothing here
-- blocks (host names are the exception: LuaSocket resolves them blocking,
-- so give an IP address). Waits in coroutines are jrpc waits
-- (jrpc.workers), so a handler may wait in them too.
local core = require "jrpc.core"
local workers = require "jrpc.workers"
local options = require "jrpc.options"
local wait = require("jrpc.connection").wait

local traceback = debug.traceback
local pack = table.pack or function(...) return { n = select("#", ...), ... } end

local M = {}

---@class jrpc.socket.Loop
---@field socket table  the LuaSocket module
local Loop = {}
Loop.__index = Loop

local function keys(set)
  local list, n = {}, 0
  for k in pairs(set) do n = n + 1; list[n] = k end
  return list
end

local function report(msg)
  io.stderr:write("jrpc.socket: ", msg, "\n")
end

-- {======================================================================
-- Timers and coroutines (run by the pump)
-- =======================================================================

--- Seconds on the loop's clock (monotonic; the peers' clock too).
---@return number
function Loop:now()
  return self.clock()
end

--- Run `fn()` from the first pump at least `seconds` from now. Returns a
--- timer for `cancel`.
---@param seconds number
---@param fn fun()
---@return table timer
function Loop:after(seconds, fn)
  local t = { at = self.clock() + seconds, fn = fn }
  self._timers[t] = true
  return t
end

--- Stop a timer from `after` (nil, or one that ran, is fine).
---@param timer? table
function Loop:cancel(timer)
  if timer then self._timers[timer] = nil end
end

-- Run the timers that are due (those added meanwhile wait for the next pass).
local function run_timers(self, now)
  local due
  for t in pairs(self._timers) do
    if t.at <= now then due = due or {}; due[#due + 1] = t end
  end
  if due == nil then return false end
  table.sort(due, function(a, b) return a.at < b.at end)
  for _, t in ipairs(due) do
    if self._timers[t] then
      self._timers[t] = nil
      local ok, err = xpcall(t.fn, traceback)
      if not ok then self.report("timer failed: " .. tostring(err)) end
    end
  end
  return true
end

--- In a coroutine: wait `seconds` while later pumps run.
---@param seconds number
function Loop:sleep(seconds)
  local co = workers.current() or error("sleep: must be called in a coroutine (loop:spawn_task)", 2)
  self:after(seconds, function() workers.wake(co, self.report) end)
  wait("jrpc.socket", "sleep")
end

---@class jrpc.socket.Task
---@field done boolean    true once the function returned or raised
---@field ok boolean|nil  true when it returned, false when it raised
---@field error any       what it raised (with a traceback for a string)
---@field results table|nil  what it returned, packed (`n` is the count)

--- Run `fn(loop, ...)` in a coroutine now, until its first wait; later
--- pumps wake it (a reply, `sleep`, `connect`). An error is reported
--- (stderr) and kept in the task. Returns the task.
---@param fn fun(loop: jrpc.socket.Loop, ...): ...
---@return jrpc.socket.Task
function Loop:spawn_task(fn, ...)
  if type(fn) ~= "function" then error("spawn_task: expected a function", 2) end
  local task = { done = false }
  local co = coroutine.create(function(...)
    local r = pack(xpcall(fn, function(e)
      return type(e) == "string" and traceback(e, 2) or e
    end, self, ...))
    task.done, task.ok = true, r[1]
    if r[1] then
      task.results = pack(select(2, (table.unpack or unpack)(r, 1, r.n)))
    else
      task.error = r[2]
      self.report("task failed: " .. tostring(r[2]))
    end
  end)
  -- the first resume is a wake-up too: the body never sees the marker
  local ok, err = coroutine.resume(co, ...)
  if not ok then self.report("task failed: " .. tostring(err)) end
  return task
end

-- }======================================================================

-- {======================================================================
-- The pump
-- =======================================================================

--- One call per frame: accept, finish connects, write what the sockets
--- take, read and dispatch what has arrived, expire request deadlines, run
--- due timers (sleep, grace periods); repeat while that did something, and
--- return within about `budget` seconds (one read of READ_SIZE bytes, and
--- the handlers it runs, may run over). Never waits.
---@param budget? number  seconds, default 0.002
---@return boolean alive  true while there are connections, servers or timers
function Loop:pump(budget)
  budget = budget or 0.002
  if type(budget) ~= "number" or budget < 0 then error("pump: budget must be a number of seconds", 2) end
  if self._pumping then error("jrpc.socket: pump called while the loop is pumping", 2) end
  local clock = self.clock
  local deadline = clock() + budget
  self._pumping = true
  local ok, err = pcall(function()
    for _ = 1, 64 do  -- passes; each one is bounded by the deadline too
      local busy = false
      -- snapshots: a callback may add a connection or a server meanwhile
      for _, x in ipairs(keys(self._pumped)) do
        if x:_pump(deadline, clock) then busy = true end
      end
      if run_timers(self, clock()) then busy = true end
      if not busy or clock() >= deadline then break end
    end
  end)
  self._pumping = false
  if not ok then error(err, 0) end
  return next(self._pumped) ~= nil or next(self._timers) ~= nil
end

-- }======================================================================

-- {======================================================================
-- Connections
-- =======================================================================

-- For connections and servers: `x:_pump(deadline, clock)` is called in every
-- pass of every pump from now on, until `_forget(x)`.
function Loop:_add(x) self._pumped[x] = true end
function Loop:_forget(x) self._pumped[x] = nil end

--- Connect to a TCP server (`host`, default "127.0.0.1"; `port`), plus
--- peer and transport options. The connect completes in later pumps. In a
--- coroutine without `on_connect` it waits and returns the connection or
--- `nil, err`; else `on_connect(conn, err)` is called from a pump and this
--- returns the connection at once (requests made on it before the connect
--- completes are sent once it does). Its peer's role is "client" (it never
--- answers input it cannot decode) unless `opts.role` says.
---@param opts table
---@return jrpc.socket.Connection|nil conn
---@return jrpc.Error|nil err  code "connect"
function Loop:connect(opts)
  return require("jrpc.socket.net").connect(self, opts)
end

--- Listen on TCP (`host`, default "127.0.0.1"; `port`, 0 picks a free one);
--- every pump accepts. Each connection gets its own peer from `opts`, role
--- "server" unless `opts.role` says.
---@param opts table
---@return jrpc.socket.Server|nil server
---@return jrpc.Error|nil err  code "listen"
function Loop:listen(opts)
  return require("jrpc.socket.net").listen(self, opts)
end

-- }======================================================================

local NEW_OPTIONS = options.set{ "on_error" }

--- A loop on the LuaSocket module `socket` (`require "socket"`).
---@param socket table
---@param opts? {on_error?: fun(msg: string)}  where the loop reports failed tasks and timers
---@return jrpc.socket.Loop
function M.new(socket, opts)
  if type(socket) ~= "table" or type(socket.tcp) ~= "function" or type(socket.select) ~= "function" then
    error("jrpc.socket.new: expected the LuaSocket module (require \"socket\")", 2)
  end
  -- Lua 5.4's require returns the loader data (a path) after the module:
  -- `jrpc.socket.new(require "socket")` passes it on
  if type(opts) == "string" then opts = nil end
  opts = options.check("jrpc.socket.new", opts, 2, NEW_OPTIONS)
  return setmetatable({
    socket = socket, clock = core.now, report = opts.on_error or report,
    _pumped = {}, _timers = {}, _pumping = false,
  }, Loop)
end

return M
