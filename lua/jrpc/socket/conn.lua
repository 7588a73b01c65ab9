--- A connection on a non-blocking LuaSocket TCP socket, driven by the
-- loop's pump (jrpc.socket). Nothing here waits: every socket call has
-- timeout 0, and what cannot be done now is done by a later pump. The rules
-- it shares with every stream transport (the write queue bound, finish and
-- close) are jrpc.connection's; this is the LuaSocket I/O under them.
--
-- Writes: what the peer sends is queued and written at once as far as the
-- socket takes it; the rest goes out in later pumps (LuaSocket's `send`
-- returns the index of the last byte written, also on "timeout").
local connection = require "jrpc.connection"
local workers = require "jrpc.workers"
local errors = require "jrpc.errors"

local floor = math.floor
local concat = table.concat

local M = {}

M.DEFAULT_MAX_WRITE_QUEUE = connection.DEFAULT_MAX_WRITE_QUEUE
M.LINGER = connection.LINGER
M.FINISH_GRACE = connection.FINISH_GRACE
-- Bytes asked of one receive; a pump reads again while receives come back full.
M.READ_SIZE = 64 * 1024
-- Small queued messages are joined into one send of up to this many bytes.
local JOIN = 64 * 1024

M.EOF_REASON = "connection closed by the other side"

--- What every jrpc.socket connection takes besides the peer's options.
M.OPTIONS = connection.OPTIONS

---@class jrpc.socket.Connection: jrpc.Connection
local Connection = connection.class()
M.Connection = Connection

-- {======================================================================
-- Writing
-- =======================================================================

--- Bytes queued and not yet written to the socket.
---@return integer
function Connection:write_queue_size()
  return self._queued
end

-- Write what the socket takes now. A failure is remembered, not acted on:
-- this runs inside the peer's send, where closing would re-enter the peer;
-- the pump closes the connection.
function Connection:_flush()
  if self._connecting or self._failed or self._socket_closed then return end
  local q = self._q
  while q.head <= q.tail do
    local head = q[q.head]
    if self._pos == 1 and #head < JOIN and q.head < q.tail then
      -- join small messages: one system call for many replies
      local parts, n, size, i = { head }, 1, #head, q.head + 1
      while i <= q.tail and size + #q[i] <= JOIN do
        n, size = n + 1, size + #q[i]
        parts[n], q[i] = q[i], nil
        i = i + 1
      end
      head = concat(parts, "", 1, n)
      q.head = i - 1
      q[q.head] = head
    end
    local last, err, partial = self.sock:send(head, self._pos)
    last = floor(tonumber(last or partial) or (self._pos - 1))  -- 5.4: LuaSocket gives floats
    self._queued = self._queued - (last - self._pos + 1)
    if last >= #head then
      q[q.head], q.head, self._pos = nil, q.head + 1, 1
    else
      self._pos = last + 1
      self._blocked = true  -- the socket is full: later sends just queue
      if err and err ~= "timeout" then
        self._failed = err == "closed" and M.EOF_REASON or "write error: " .. tostring(err)
      end
      break
    end
  end
  self:_drained(self._queued)
end

-- The core's write: queue, write what the socket takes; the bytes queued.
function Connection:_write(bytes)
  if self._socket_closed then return nil end
  local q = self._q
  q.tail = q.tail + 1
  q[q.tail] = bytes
  self._queued = self._queued + #bytes
  -- Not while the socket is full: each try would join the queued small
  -- messages again (up to JOIN bytes per send, so quadratic under a slow
  -- reader); the next pump tries once.
  if not self._blocked then self:_flush() end
  return self._queued
end

-- }======================================================================

-- {======================================================================
-- Reading (called by the pump)
-- =======================================================================

-- The pump reads whenever the core lets it (see _read).
function Connection._update_reading() end

-- Read and feed what has arrived, until the socket has no more, the
-- connection may not read, or the loop's clock passes `deadline`.
-- Returns true when anything was read.
function Connection:_read(deadline, now)
  local got = false
  while self:_want_read() do
    local data, err, partial = self.sock:receive(M.READ_SIZE)
    data = data or partial
    if data and #data > 0 then
      got = true
      self:_feed(data)
    end
    if err == "closed" then
      self:finish(M.EOF_REASON)
    elseif err and err ~= "timeout" then
      self:finish("read error: " .. tostring(err))
    end
    if err or now() >= deadline then break end
  end
  return got
end

function Connection:_feed(data)
  local tap = self._tap_read
  if tap then tap(data) end
  local ok, msg = xpcall(self.peer.receive, debug.traceback, self.peer, data)
  if not ok then self.link:log("receive failed: " .. tostring(msg)) end
end

-- Expire the peer's requests whose deadline has passed.
function Connection:_tick()
  local link = self.link
  local at = link:next_deadline()
  if at and at <= link:now() then self.peer:tick() end
end

-- }======================================================================

-- {======================================================================
-- Connecting (a connect under way is completed by the pump)
-- =======================================================================

-- The connect ended: tell whoever waits; a failed one closes the
-- connection with the error as reason (requests already made settle "closed").
function Connection:_connected(err)
  self._connecting = false
  local waiter, on_connect = self._waiter, self._on_connect
  self._waiter, self._on_connect = nil, nil
  if err then
    self._failed = err
    self:close(err)
    err = errors.new("connect", err)
  else
    self:_flush()  -- what was sent while connecting
  end
  local log = self.link:logger()
  if waiter then
    workers.wake(waiter, log, (not err) and self or nil, err)
  elseif on_connect then
    local ok, msg = pcall(on_connect, (not err) and self or nil, err)
    if not ok then log("on_connect failed: " .. tostring(msg)) end
  end
end

-- Has the connect ended? True when it did.
function Connection:_connect_step()
  local sock = self.sock
  local _, writable = self.loop.socket.select(nil, { sock }, 0)
  if writable == nil or writable[1] == nil then
    if self.loop:now() < self._connect_deadline then return false end
    self:_connected(("connect to %s: timeout"):format(self._address))
    return true
  end
  if sock:getpeername() then
    self:_connected()
  else
    local ok, why = pcall(sock.getoption, sock, "error")
    self:_connected(("connect to %s: %s"):format(self._address, ok and why or "failed"))
  end
  return true
end

-- }======================================================================

-- One pump's work on this connection; true when something happened.
function Connection:_pump(deadline, now)
  if self._connecting then return self:_connect_step() end
  if self._socket_closed then return false end
  if self._closed then return self:_linger(now) end
  local before = self._queued
  self._blocked = false
  self:_flush()
  local got = self:_read(deadline, now)
  if self._failed and not self._closed then self:finish(self._failed) end
  if not self._closed then self:_tick() end
  return got or self._queued ~= before
end

-- {======================================================================
-- Ending and closing
-- =======================================================================

function Connection:_after(seconds, fn)
  return self.loop:after(seconds, fn)
end

function Connection:_cancel(timer)
  self.loop:cancel(timer)
end

-- Queued bytes still go out, for at most LINGER seconds.
function Connection:_release()
  self._linger_until = self.loop:now() + M.LINGER
  self:_linger(self.loop.clock)
end

-- After close: write what is left, then close the socket (at once when
-- nothing is queued or the socket failed, else by LINGER at the latest).
function Connection:_linger(now)
  self._blocked = false
  self:_flush()
  if self._queued == 0 or self._failed or self._connecting or now() >= self._linger_until then
    self._socket_closed = true
    self.sock:close()
    self.loop:_forget(self)
  end
  return false
end

-- }======================================================================

--- A connection on the LuaSocket client `sock` (already non-blocking).
---@param loop table  the jrpc.socket loop
---@param sock userdata
---@param opts table  peer options plus M.OPTIONS (checked by the caller)
---@param how {role?: string, on_closed?: function, connecting?: table}
---  the peer's role unless opts.role says: "client" on the side that
---  connected, "server" (the default) on the side that accepted; the
---  transport's close hook; for a connect under way, `{address, deadline,
---  waiter, on_connect}` (writes wait for it)
---@return jrpc.socket.Connection
function M.new(loop, sock, opts, how)
  local self = setmetatable({ sock = sock,
    _q = { head = 1, tail = 0 }, _pos = 1, _queued = 0, _blocked = false, _connecting = false,
  }, Connection)
  connection.init(self, loop, opts, { role = how.role, clock = loop.clock, on_closed = how.on_closed })
  local c = how.connecting
  if c then
    self._connecting, self._address, self._connect_deadline = true, c.address, c.deadline
    self._waiter, self._on_connect = c.waiter, c.on_connect
  end
  loop:_add(self)
  return self
end


return M
