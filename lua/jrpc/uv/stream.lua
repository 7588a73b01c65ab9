--- A connection: a jrpc peer on libuv streams (a pipe, a TCP or Unix socket,
-- a tty, or a file adapter from jrpc.uv.files): what arrives on `reader` is
-- fed to the peer, what the peer sends is written to `writer` (the same
-- handle for sockets).
--
-- Writes: what the kernel takes at once is written with try_write; else one
-- libuv write in flight at a time, and what the peer sends meanwhile
-- is held here and written as one piece when it completes (luv pins each
-- outstanding write with registry references: one write per message would
-- cost far more memory than the bytes).
--
-- Write queue bound (`max_write_queue`, bytes queued in libuv or held here
-- but not yet written): once over it, the connection is *busy*. It stops reading,
-- so no new requests come in to produce replies, and the peer's own new
-- requests, notifications and batches fail at once with code "busy". What is
-- already queued stays queued. Below half the bound it reads again and the
-- peer may send again. The queue can pass the bound by what one read
-- produces (the replies to one chunk) plus one message: it never grows with
-- what the other side sends while it does not read.
--
-- Backlog pause (`pause_reading_at`, default 64 KiB, well below the bound):
-- while none of our own requests awaits a response and more than this is
-- queued, the connection stops reading until the queue is back at or below
-- half of it. A server whose client reads slowly then leaves the client's
-- requests in the kernel instead of turning them into replies in its heap
-- (as a blocking loop does). Sending stays allowed. With a request of ours
-- in flight it reads on: its response may be what the other side waits to
-- hand us, and two peers that both stopped reading would wait forever.
local peer_mod = require "jrpc.peer"
local options = require "jrpc.options"
local co = require "jrpc.uv.co"
local timers = require "jrpc.uv.timers"
local handles = require "jrpc.uv.handles"

local M = {}

M.DEFAULT_MAX_WRITE_QUEUE = 16 * 1024 * 1024
M.DEFAULT_PAUSE_READING_AT = 64 * 1024
-- How long a closing connection may take to hand its queued bytes to the
-- other side before the handle is closed anyway (seconds).
M.LINGER = 2
-- At the end of input, how long handlers still working may take to answer
-- before the connection closes anyway (seconds; option `finish_grace`).
M.FINISH_GRACE = 1

---@class jrpc.uv.Connection
---@field peer jrpc.Peer
---@field on_close? fun(reason: string)
local Connection = {}
Connection.__index = Connection
M.Connection = Connection

-- {======================================================================
-- Reading
-- =======================================================================

-- Read while open, not at the end, not busy, not paused by a backlog and
-- not paused by pump().
function Connection:_update_reading()
  local want = not (self._closed or self._eof or self._busy or self._backlog or self._paused)
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
  self.loop._paused[self] = true
  self:_update_reading()
end

--- Resume after a pause for pump().
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
  -- no pcall of its own: the read callback's guard reports a raise
  -- ("read failed: ..."), and the peer answers the next read as usual
  self.peer:receive(data)
  local deadline = loop._pump_deadline
  if deadline and loop.uv.hrtime() >= deadline and not self._closed then
    self:_pause_for_pump()
  end
end

-- }======================================================================

-- {======================================================================
-- Writing
-- =======================================================================

--- Bytes queued in libuv and not yet written.
---@return integer
function Connection:write_queue_size()
  if self.writer:is_closing() then return 0 end
  return self.writer:get_write_queue_size() + (self._held_bytes or 0)
end

--- Why the connection is busy (its write queue is over the bound), or nil.
---@return string|nil
function Connection:busy()
  return self._busy and self.peer:busy() or nil
end

function Connection:_set_busy(on, queued)
  self._busy = on
  if on then
    self.peer:set_busy(("write queue full: %d bytes not yet written (max_write_queue %d)")
      :format(queued, self.max_write_queue))
  else
    self.peer:set_busy(self._hold)  -- a transport's own reason, if any
  end
  self:_update_reading()
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

-- The backlog pause starts or ends (see the top of this file).
function Connection:_set_backlog(on)
  self._backlog = on
  self:_update_reading()
end

function Connection:_send(bytes)
  local writer = self.writer
  if writer:is_closing() then return end
  -- a request of ours may be what this sends: read for its response
  if self._backlog and self.peer:awaiting() > 0 then self:_set_backlog(false) end
  if not self._writing then bytes = self:_try_write(bytes) end
  if bytes == nil then  -- all written already
    return self.deadlines:arm()
  elseif self._writing then
    local held = self._held or {}
    self._held = held
    held[#held + 1] = bytes
    self._held_bytes = (self._held_bytes or 0) + #bytes
  elseif not self:_write_now(bytes) then
    return
  end
  if not self._busy then
    local queued = self:write_queue_size()
    if queued > self.max_write_queue then
      self:_set_busy(true, queued)
    elseif queued > self.pause_reading_at and not self._backlog and self.peer:awaiting() == 0 then
      self:_set_backlog(true)
    end
  end
  self.deadlines:arm()
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
  local queued = self.writer:get_write_queue_size()
  if self._busy and queued <= self.max_write_queue / 2 then self:_set_busy(false) end
  if self._backlog and queued <= self.pause_reading_at / 2 then self:_set_backlog(false) end
end

-- }======================================================================

-- {======================================================================
-- Ending and closing
-- =======================================================================

-- The stream ended (end of input, a read or write error). By default the
-- peer decodes what it still holds and the connection closes with `reason`;
-- a transport may decide otherwise (a child process waits for its exit
-- status to give a better reason).
function Connection:_ended(reason)
  if self._closed then return end
  if self.on_ended then return self.on_ended(self, reason) end
  self:finish(reason)
end

--- The input ended: the peer decodes what it still holds, and handlers
--- still working may answer for up to `grace` seconds (default: option
--- `finish_grace`, else FINISH_GRACE); then the connection closes with
--- `reason`. Reading stops at once; writing goes on meanwhile.
---@param reason string
---@param grace? number
function Connection:finish(reason, grace)
  if self._closed or self._finishing then return end
  self._finishing, self._eof = true, true
  self:_update_reading()
  local peer = self.peer
  local ok, closed = pcall(peer.finish, peer, reason, function() self:_close(reason) end)
  if not ok then
    peer:log("finish failed: " .. tostring(closed))
    return self:_close(reason, "close")
  end
  if closed or self._closed then return end
  self._grace_timer = timers.after(self.uv, grace or self.finish_grace, function()
    self:_close(reason, "close")
  end, "finish grace")
end

-- Close; the peer is closed too when `how` is "close" (else it closed
-- already). The connection counts as closed before any pending request
-- settles.
function Connection:_close(reason, how)
  if self._closed then return end
  reason = reason or "connection closed"
  self._closed, self.close_reason = true, reason
  timers.cancel(self.uv, self._grace_timer)
  self.loop._paused[self] = nil
  self.deadlines:close()
  local log = self.peer:logger()
  if how then co.call(self.peer[how], how, log, self.peer, reason) end
  self.peer:flush()  -- what a receive under way collected goes out too
  if self.reader ~= self.writer then handles.close(self.uv, self.reader) end
  -- what is queued still goes out, for at most LINGER seconds
  self:_flush_held()
  handles.flush_then_close(self.uv, self.writer, M.LINGER)
  for _, hook in ipairs(self._close_hooks) do co.call(hook, "close hook", nil, self, reason) end
  if self.on_close then co.call(self.on_close, "on_close", log, reason) end
end

--- Close the connection: the peer settles every pending request with code
--- "closed" and `reason`; queued output is still handed to the other side
--- (for at most LINGER seconds). Idempotent.
---@param reason? string  default "connection closed"
function Connection:close(reason)
  self:_close(reason, "close")
end

--- True once closed (by us, by the end of the stream, by an error).
---@return boolean
function Connection:closed()
  return self._closed
end

--- Call `fn(conn, reason)` when the connection closes (for transports).
function Connection:_on_close_hook(fn)
  self._close_hooks[#self._close_hooks + 1] = fn
end

-- }======================================================================

local function peer_options(opts, send, role)
  local o = options.pick(opts, peer_mod.OPTIONS)
  o.send = send
  if o.role == nil then o.role = role end  -- the caller's option wins
  return o
end

-- A limit option: a positive number, or 0 too where `zero_ok`.
local function check_limit(opts, name, default, zero_ok)
  local v = opts[name]
  if v == nil then return default end
  if type(v) ~= "number" or v < 0 or (v == 0 and not zero_ok) then
    error(name .. " must be a positive number", 4)
  end
  return v
end

--- A connection on `reader` and `writer` (luv streams or jrpc.uv.files ends).
---@param loop table  the jrpc.uv loop
---@param reader userdata|table
---@param writer userdata|table
---@param opts table  peer options, plus max_write_queue and on_close
---@param eof_reason string  the close reason when the reader ends
---@param role? "client"|"server"  the peer's role unless opts.role says: "client" on
---  the side that started the connection (spawn, connect), "server" (the default) on
---  the side that accepted it (a listener's connection, stdio)
---@return jrpc.uv.Connection
function M.new(loop, reader, writer, opts, eof_reason, role)
  local self = setmetatable({
    loop = loop, uv = loop.uv, reader = reader, writer = writer,
    max_write_queue = check_limit(opts, "max_write_queue", M.DEFAULT_MAX_WRITE_QUEUE),
    pause_reading_at = check_limit(opts, "pause_reading_at", M.DEFAULT_PAUSE_READING_AT),
    finish_grace = check_limit(opts, "finish_grace", M.FINISH_GRACE, true), eof_reason = eof_reason,
    on_close = opts.on_close, _close_hooks = {},
    _closed = false, _eof = false, _busy = false, _backlog = false, _paused = false, _reading = false,
  }, Connection)
  self.peer = peer_mod.new(peer_options(opts, function(bytes) self:_send(bytes) end, role or "server"))
  local log = self.peer:logger()
  self._read_cb = co.guard(function(err, data) self:_on_read(err, data) end, "read", log)
  self._written_cb = co.guard(function(err) self:_on_written(err) end, "write", log)
  self.deadlines = timers.deadlines(loop.uv, self.peer, function() loop.events = loop.events + 1 end)
  return self
end

--- Start reading (once the caller has set up what it needs).
function Connection:start()
  self:_update_reading()
  return self
end

return M
