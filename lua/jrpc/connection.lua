--- The connection core: a jrpc peer on a byte stream, as every stream
-- transport has it (jrpc.uv's pipes, sockets, ttys and children; jrpc.socket's
-- TCP): the peer made from the caller's options, the write queue bound and
-- the backlog pause, the end of input with its grace, the close with its
-- reason and hooks, and a tap on the bytes. A transport inherits Connection
-- (`M.class`), calls `M.init` on a new instance, and supplies the I/O:
--
--   conn:_write(bytes)       hand bytes to the stream; return the bytes queued
--                            and not yet written, or nil when nothing is
--                            queued (all written at once, or closing)
--   conn:write_queue_size()  bytes queued and not yet written
--   conn:_update_reading()   start or stop reading as conn:_want_read() says
--   conn:_after(s, fn, what) a one-shot timer; conn:_cancel(timer) stops one
--   conn:_closing()          stop what would run on its own (timers), before
--                            the peer closes
--   conn:_release()          hand what is queued to the other side (for at
--                            most LINGER seconds), then close the stream
--
-- From its I/O it hands what it reads to the read tap (its own field
-- `_tap_read`, when set) and then to `conn.peer:receive`, calls
-- `conn:_drained(queued)` when a write completed, and `conn:finish(reason)`
-- at the end of input or on an error.
--
-- Write queue bound (`max_write_queue`, bytes queued but not yet written):
-- once over it, the connection is *busy*. It stops reading, so no new
-- requests come in to produce replies, and the peer's own new requests,
-- notifications and batches fail at once with code "busy". What is already
-- queued stays queued. At or below half the bound it reads again and the
-- peer may send again. The queue can pass the bound by what one read
-- produces (the replies to one chunk) plus one message: it never grows
-- with what the other side sends while it does not read.
--
-- Backlog pause (`pause_reading_at`, for transports that enable it): while
-- none of our own requests awaits a response and more than this is queued,
-- the connection stops reading until the queue is back at or below half of
-- it. A server whose client reads slowly then leaves the client's requests
-- in the kernel instead of turning them into replies in its heap (as a
-- blocking loop does). Sending stays allowed. With a request of ours in
-- flight it reads on: its response may be what the other side waits to
-- hand us, and two peers that both stopped reading would wait forever.
local peer_mod = require "jrpc.peer"
local options = require "jrpc.options"
local workers = require "jrpc.workers"
local errors = require "jrpc.errors"

local traceback = debug.traceback

local M = {}

M.DEFAULT_MAX_WRITE_QUEUE = 16 * 1024 * 1024
M.DEFAULT_PAUSE_READING_AT = 64 * 1024
-- How long a closing connection may take to hand its queued bytes to the
-- other side before the stream is closed anyway (seconds).
M.LINGER = 2
-- At the end of input, how long handlers still working may take to answer
-- before the connection closes anyway (seconds; option `finish_grace`).
M.FINISH_GRACE = 1

--- The connection options every stream transport takes (besides the peer's).
M.OPTIONS = options.set{ "max_write_queue", "finish_grace", "on_close" }
--- The backlog pause's option, for the transports that have it.
M.BACKLOG_OPTIONS = options.set{ "pause_reading_at" }

--- The peer's options a transport passes on: all but `send`, which is the
--- transport's.
M.PEER_OPTIONS = {}
for name in pairs(peer_mod.OPTIONS) do
  if name ~= "send" then M.PEER_OPTIONS[name] = true end
end

---@class jrpc.Connection
---@field peer jrpc.Peer
---@field link jrpc.Link  the peer's transport side (jrpc.peer.link)
---@field close_reason string|nil  why it closed (nil while open)
---@field on_close? fun(reason: string)
local Connection = {}
Connection.__index = Connection
M.Connection = Connection

--- A class for a transport's connections: Connection's methods, and the
--- transport's own (its I/O) over them.
---@return table
function M.class()
  local class = setmetatable({}, { __index = Connection })
  class.__index = class
  return class
end

-- Call `fn(...)`, reporting (not raising) its error through `log`.
local function call(fn, what, log, ...)
  local ok, err = xpcall(fn, traceback, ...)
  if not ok then log(what .. " failed: " .. tostring(err)) end
end

-- {======================================================================
-- Writing
-- =======================================================================

--- Why the connection is busy (its write queue is over the bound), or nil.
---@return string|nil
function Connection:busy()
  return self._busy and self.link:busy() or nil
end

-- The bound is passed, or the queue is back at half of it.
function Connection:_set_busy(on, queued)
  self._busy = on
  if on then
    self.link:set_busy(("write queue full: %d bytes not yet written (max_write_queue %d)")
      :format(queued, self.max_write_queue))
  else
    self.link:set_busy(self._hold)  -- a transport's own reason, if any
  end
  self:_update_reading()
end

-- Nothing new is sent from now on (new requests fail with code "busy" and
-- `reason`), whatever the write queue does: a transport that is ending.
function Connection:_hold_sends(reason)
  self._hold = reason
  self.link:set_busy(reason)
end

-- The backlog pause starts or ends (see the top of this file).
function Connection:_set_backlog(on)
  self._backlog = on
  self:_update_reading()
end

-- The peer's send: the transport writes, and the queue is held to its bounds.
function Connection:_send(bytes)
  local tap = self._tap_sent
  if tap then tap(bytes) end
  -- a request of ours may be what this sends: read for its response
  if self._backlog and self.link:awaiting() > 0 then self:_set_backlog(false) end
  local queued = self:_write(bytes)
  if queued == nil or self._busy then return end
  if queued > self.max_write_queue then
    self:_set_busy(true, queued)
  elseif self.pause_reading_at and queued > self.pause_reading_at and not self._backlog
    and self.link:awaiting() == 0 then
    self:_set_backlog(true)
  end
end

-- A write completed and `queued` bytes are still to be written.
function Connection:_drained(queued)
  if self._busy and queued <= self.max_write_queue / 2 then self:_set_busy(false) end
  if self._backlog and queued <= self.pause_reading_at / 2 then self:_set_backlog(false) end
end

-- }======================================================================

-- {======================================================================
-- Reading
-- =======================================================================

-- Whether the connection reads: open, not at the end, not busy, not paused
-- by a backlog (a transport may add reasons of its own).
function Connection:_want_read()
  return not (self._closed or self._eof or self._busy or self._backlog)
end

--- Watch the bytes: `on_sent(bytes)` with every piece the peer hands the
--- stream to write (its messages as framed, replies it sends by itself
--- included), `on_read(bytes)` with every piece read, before the peer
--- decodes it. Either may be nil; a later call replaces both.
---@param on_sent? fun(bytes: string)
---@param on_read? fun(bytes: string)
function Connection:tap(on_sent, on_read)
  if on_sent ~= nil and type(on_sent) ~= "function" then error("tap: on_sent must be a function", 2) end
  if on_read ~= nil and type(on_read) ~= "function" then error("tap: on_read must be a function", 2) end
  self._tap_sent, self._tap_read = on_sent, on_read
end

-- }======================================================================

-- {======================================================================
-- Ending and closing
-- =======================================================================

--- The input ended: reading stops, the peer decodes what it still holds,
--- and handlers still working may answer for up to `grace` seconds
--- (default: option `finish_grace`); then the connection closes with
--- `reason`. Writing goes on meanwhile.
---@param reason string
---@param grace? number
function Connection:finish(reason, grace)
  if self._closed or self._finishing then return end
  self._finishing, self._eof = true, true
  self:_update_reading()
  local link = self.link
  local ok, closed = pcall(link.finish, link, reason, function() self:_close(reason) end)
  if not ok then
    link:log("finish failed: " .. tostring(closed))
    return self:_close(reason, "close")
  end
  if closed or self._closed then return end
  self._grace_timer = self:_after(grace or self.finish_grace, function()
    self:_close(reason, "close")
  end, "finish grace")
end

-- Close; the peer is closed too when `how` is "close" (else it closed
-- already). The connection counts as closed before any pending request
-- settles. Queued bytes still go out for at most LINGER seconds.
function Connection:_close(reason, how)
  if self._closed then return end
  reason = reason or "connection closed"
  self._closed, self.close_reason = true, reason
  self:_cancel(self._grace_timer)
  self:_closing()
  local peer, link = self.peer, self.link
  local log = link:logger()
  if how then call(peer.close, how, log, peer, reason) end
  link:flush()  -- what a receive under way collected goes out too
  self:_release()
  if self._on_closed then call(self._on_closed, "close hook", log, self, reason) end
  if self.on_close then call(self.on_close, "on_close", log, reason) end
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

-- Nothing to stop by default.
function Connection._closing() end

-- }======================================================================

local function woken(who, what, ok, ...)
  if not ok then
    error(who .. ": " .. what .. " was resumed by something other than jrpc (another scheduler?)", 0)
  end
  return ...
end

--- In a coroutine: wait for a jrpc wake-up (jrpc.workers.wake) and return
--- its values. A resume by anything else raises, naming the wait: jrpc's
--- waits never mistake another scheduler's wake-up for their own.
---@param who string  the transport, first in the error ("jrpc.uv")
---@param what string  the wait ("connect", "sleep")
function M.wait(who, what)
  return woken(who, what, workers.wait())
end

-- {======================================================================
-- Addresses, for the transports' connect and listen
-- =======================================================================

--- The address of `opts` in messages: the Unix socket `path`, or
--- `host:port` (host default 127.0.0.1).
---@param opts table
---@return string
function M.describe(opts)
  if opts.path then return opts.path end
  return tostring(opts.host or "127.0.0.1") .. ":" .. tostring(opts.port)
end

--- Check the options of a connect or listen (`what`): the address (an
--- integer `port` and an optional `host` string, or where `paths`, a Unix
--- socket `path`), the names (`known`, the entry's option set), and its
--- callback (`on_connect` or `on_peer`). Raises at the caller's caller.
---@param what "connect"|"listen"
---@param opts table
---@param paths boolean
---@param known table<string, boolean>
function M.check_address(what, opts, paths, known)
  if type(opts) ~= "table" then error(what .. ": expected an options table", 3) end
  if paths and opts.path ~= nil then
    if type(opts.path) ~= "string" then error(what .. ": path must be a string", 3) end
  elseif type(opts.port) ~= "number" or opts.port % 1 ~= 0 then
    error(what .. ": needs port = number" .. (paths and " (TCP) or path = string (Unix socket)" or ""), 3)
  elseif opts.host ~= nil and type(opts.host) ~= "string" then
    error(what .. ": host must be a string", 3)
  end
  options.check(what, opts, 3, known)
  local callback = what == "connect" and "on_connect" or "on_peer"
  if opts[callback] ~= nil and type(opts[callback]) ~= "function" then
    error(what .. ": " .. callback .. " must be a function", 3)
  end
end

--- A connect or listen (`what`, also the code) to the address of `opts`
--- failed with `err`.
---@param what "connect"|"listen"
---@param opts table
---@param err any
---@return jrpc.Error
function M.address_error(what, opts, err)
  local text = what == "connect" and "connect to %s: %s" or "listen on %s: %s"
  return errors.new(what, text:format(M.describe(opts), tostring(err)))
end

-- }======================================================================

-- A limit option: a positive number, or 0 too where `zero_ok`.
local function limit(opts, name, default, zero_ok)
  local v = opts[name]
  if v == nil then return default end
  if type(v) ~= "number" or v < 0 or (v == 0 and not zero_ok) or v ~= v then
    error(name .. " must be a positive number", 5)  -- the caller of connect, spawn, stdio
  end
  return v
end

--- Set up `self` (an instance of a class from `M.class`) on `loop` with the
--- caller's `opts` (checked by the transport: the peer's options are
--- picked from them). `how`: `role` (the peer's unless opts.role says;
--- default "server"), `clock` (the peer's unless opts.clock says),
--- `backlog` (true: the backlog pause applies), `on_closed(conn, reason)`
--- (the transport's own close hook, called before `on_close`).
---@param self table
---@param loop table
---@param opts table
---@param how {role?: string, clock?: fun(): number, backlog?: boolean, on_closed?: fun(conn: table, reason: string)}
---@return table self
function M.init(self, loop, opts, how)
  self.loop = loop
  self.max_write_queue = limit(opts, "max_write_queue", M.DEFAULT_MAX_WRITE_QUEUE)
  self.pause_reading_at = how.backlog and limit(opts, "pause_reading_at", M.DEFAULT_PAUSE_READING_AT) or nil
  self.finish_grace = limit(opts, "finish_grace", M.FINISH_GRACE, true)
  self.on_close, self._on_closed = opts.on_close, how.on_closed
  self._closed, self._eof, self._busy, self._backlog, self._finishing = false, false, false, false, false
  local o = options.pick(opts, M.PEER_OPTIONS)
  o.send = function(bytes) self:_send(bytes) end
  if o.role == nil then o.role = how.role or "server" end
  if o.clock == nil then o.clock = how.clock end
  self.peer = peer_mod.new(o)
  self.link = peer_mod.link(self.peer)
  return self
end

return M
