--- A connection on libuv streams (a pipe, a TCP or Unix socket, a tty, or a
-- file adapter from jrpc.uv.files): what arrives on `reader` is fed to the
-- peer, what the peer sends is written to `writer` (the same handle for
-- sockets). The rules it shares with every stream transport (the write
-- queue bound, the backlog pause, finish and close) are jrpc.connection's;
-- this is the libuv I/O under them.
--
-- Writes: what the kernel takes at once is written with try_write; else one
-- libuv write in flight at a time, and what the peer sends meanwhile
-- is held here and written as one piece when it completes (luv pins each
-- outstanding write with registry references: one write per message would
-- cost far more memory than the bytes).
local connection = require "jrpc.connection"
local co = require "jrpc.uv.co"
local timers = require "jrpc.uv.timers"
local handles = require "jrpc.uv.handles"

local M = {}

M.DEFAULT_MAX_WRITE_QUEUE = connection.DEFAULT_MAX_WRITE_QUEUE
M.DEFAULT_PAUSE_READING_AT = connection.DEFAULT_PAUSE_READING_AT
M.LINGER = connection.LINGER
M.FINISH_GRACE = connection.FINISH_GRACE

--- What every jrpc.uv connection takes besides the peer's options.
M.OPTIONS = require("jrpc.options").set({}, connection.OPTIONS, connection.BACKLOG_OPTIONS)

---@class jrpc.uv.Connection: jrpc.Connection
local Connection = connection.class()
M.Connection = Connection

-- {======================================================================
-- Reading
-- =======================================================================

-- Read while the core says so and not paused by pump().
function Connection:_update_reading()
  local want = self:_want_read() and not self._paused
  if want == self._reading then return end
  self._reading = want
  if want then
    local ok, err = self.reader:read_start(self._read_cb)
    if not ok then
      self._reading = false
      timers.after(self.uv, 0, function() self:_ended("read error: " .. tostring(err)) end)
    end
  elseif not self.reader:is_closing() then
    self.reader:read_stop()
  end
end

-- pump() asked us to stay within its budget: stop reading until the next pump.
function Connection:_pause_for_pump()
  self._paused = true
  self.loop:_pause_until_pump(self)
  self:_update_reading()
end

-- Resume after a pause for pump() (the loop calls it).
function Connection:_unpause()
  self._paused = false
  self:_update_reading()
end

function Connection:_on_read(err, data)
  local loop = self.loop
  loop.events = loop.events + 1
  if self._closed then return end
  if err then
    self._eof = true
    return self:_ended("read error: " .. tostring(err))
  end
  if data == nil then
    self._eof = true
    self._reading = false  -- libuv stops reading by itself at the end
    return self:_ended(self.eof_reason)
  end
  local tap = self._tap_read
  if tap then tap(data) end
  -- no pcall of its own: the read callback's guard reports a raise
  -- ("read failed: ..."), and the peer answers the next read as usual
  self.peer:receive(data)
  if loop:_pump_spent() and not self._closed then self:_pause_for_pump() end
end

-- }======================================================================

-- {======================================================================
-- Writing
-- =======================================================================

--- Bytes queued in libuv (or held here) and not yet written.
---@return integer
function Connection:write_queue_size()
  if self.writer:is_closing() then return 0 end
  return self.writer:get_write_queue_size() + (self._held_bytes or 0)
end

-- Hand bytes to libuv: one write at a time; what comes meanwhile is held
-- and written as one write when the current one completes.
function Connection:_write_now(data)
  local ok, err = self.writer:write(data, self._written_cb)
  if not ok then
    timers.after(self.uv, 0, function() self:_ended("write error: " .. tostring(err)) end)
    return false
  end
  self._writing = true
  return true
end

-- With no write in flight, hand the bytes to the kernel at once if it takes
-- them (no request, no callback to wait for): a peer that flushes during a
-- long read gets each piece out while it works on. Returns what is left to
-- write through libuv, or nil when nothing is. (File adapters have no
-- try_write: they take every write through libuv.)
function Connection:_try_write(bytes)
  local writer = self.writer
  if writer.try_write == nil then return bytes end
  local n = writer:try_write(bytes)
  if n == nil then return bytes end  -- EAGAIN or an error: write reports it
  if n == #bytes then return nil end
  return bytes:sub(n + 1)
end

-- The core's write: returns the bytes queued, or nil when none are.
function Connection:_write(bytes)
  if self.writer:is_closing() then return nil end
  if not self._writing then bytes = self:_try_write(bytes) end
  if bytes == nil then  -- all written already
    self.deadlines:arm()
    return nil
  elseif self._writing then
    local held = self._held or {}
    self._held = held
    held[#held + 1] = bytes
    self._held_bytes = (self._held_bytes or 0) + #bytes
  elseif not self:_write_now(bytes) then
    return nil
  end
  self.deadlines:arm()
  return self:write_queue_size()
end

-- Write what was held while a write was in flight, as one write.
function Connection:_flush_held()
  local held = self._held
  if held == nil then return end
  self._held, self._held_bytes = nil, 0
  if self.writer:is_closing() then return end
  self:_write_now(table.concat(held))
end

function Connection:_on_written(err)
  local loop = self.loop
  loop.events = loop.events + 1
  self._writing = false
  if self._closed then return end  -- ECANCELED: we closed with writes queued
  if err then return self:_ended("write error: " .. tostring(err)) end
  self:_flush_held()
  self:_drained(self.writer:get_write_queue_size())
end

-- }======================================================================

-- {======================================================================
-- Ending and closing
-- =======================================================================

-- The stream ended (end of input, a read or write error). By default the
-- peer decodes what it still holds and the connection closes with `reason`;
-- `conn.on_ended(conn, reason)` may decide otherwise (and a child process
-- waits for its exit status to give a better reason).
function Connection:_ended(reason)
  if self._closed then return end
  if self.on_ended then return self.on_ended(self, reason) end
  self:finish(reason)
end

function Connection:_after(seconds, fn, what)
  return timers.after(self.uv, seconds, fn, what)
end

function Connection:_cancel(timer)
  timers.cancel(self.uv, timer)
end

function Connection:_closing()
  self.loop:_forget_paused(self)
  self.deadlines:close()
end

function Connection:_release()
  if self.reader ~= self.writer then handles.close(self.uv, self.reader) end
  -- what is queued still goes out, for at most LINGER seconds
  self:_flush_held()
  handles.flush_then_close(self.uv, self.writer, M.LINGER)
end

-- }======================================================================

--- A connection on `reader` and `writer` (luv streams or jrpc.uv.files ends),
--- of class `class` (default Connection; a subclass for children).
---@param loop table  the jrpc.uv loop
---@param reader userdata|table
---@param writer userdata|table
---@param opts table  peer options plus M.OPTIONS (checked by the caller)
---@param how {eof_reason: string, role?: string, on_closed?: function, class?: table}
---  the close reason when the reader ends; the peer's role unless opts.role
---  says: "client" on the side that started the connection (spawn,
---  connect), "server" (the default) on the side that accepted it (a
---  listener's connection, stdio); the transport's close hook
---@return jrpc.uv.Connection
function M.new(loop, reader, writer, opts, how)
  local self = setmetatable({ uv = loop.uv, reader = reader, writer = writer, eof_reason = how.eof_reason,
    _paused = false, _reading = false, _writing = false }, how.class or Connection)
  connection.init(self, loop, opts, { role = how.role, backlog = true, on_closed = how.on_closed })
  local log = self.link:logger()
  self._read_cb = co.guard(function(err, data) self:_on_read(err, data) end, "read", log)
  self._written_cb = co.guard(function(err) self:_on_written(err) end, "write", log)
  self.deadlines = timers.deadlines(loop.uv, self.peer, self.link, function() loop.events = loop.events + 1 end)
  return self
end

--- Start reading (once the caller has set up what it needs).
function Connection:start()
  self:_update_reading()
  return self
end

return M
