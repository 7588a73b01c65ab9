--- A connection: a jrpc peer on a non-blocking LuaSocket TCP socket, driven
-- by the loop's pump (jrpc.socket). Nothing here waits: every socket call
-- has timeout 0, and what cannot be done now is done by a later pump.
--
-- Writes: what the peer sends is queued and written at once as far as the
-- socket takes it; the rest goes out in later pumps (LuaSocket's `send`
-- returns the index of the last byte written, also on "timeout").
--
-- Write queue bound (`max_write_queue`): the same rules as jrpc.uv's
-- streams, in the same words. Over the bound the connection is busy: it
-- stops reading and the peer's new requests fail with code "busy"; at or
-- below half the bound it reads and sends again.
local peer_mod = require "jrpc.peer"
local options = require "jrpc.options"

local floor = math.floor
local concat = table.concat

local M = {}

M.DEFAULT_MAX_WRITE_QUEUE = 16 * 1024 * 1024
-- How long a closing connection may take to hand its queued bytes to the
-- other side before the socket is closed anyway (seconds).
M.LINGER = 2
-- At the end of input, how long handlers still working may take to answer.
M.FINISH_GRACE = 1
-- Bytes asked of one receive; a pump reads again while receives come back full.
M.READ_SIZE = 64 * 1024
-- Small queued messages are joined into one send of up to this many bytes.
local JOIN = 64 * 1024

M.EOF_REASON = "connection closed by the other side"

---@class jrpc.socket.Connection
---@field peer jrpc.Peer
---@field on_close? fun(reason: string)
local Connection = {}
Connection.__index = Connection
M.Connection = Connection

-- {======================================================================
-- Writing
-- =======================================================================

--- Bytes queued and not yet written to the socket.
---@return integer
function Connection:write_queue_size()
  return self._queued
end

--- Why the connection is busy (its write queue is over the bound), or nil.
---@return string|nil
function Connection:busy()
  return self._busy and self.peer:busy() or nil
end

function Connection:_set_busy(on)
  self._busy = on
  if on then
    self.peer:set_busy(("write queue full: %d bytes not yet written (max_write_queue %d)")
      :format(self._queued, self.max_write_queue))
  else
    self.peer:set_busy(nil)
  end
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
  if self._busy and self._queued <= self.max_write_queue / 2 then self:_set_busy(false) end
end

function Connection:_send(bytes)
  if self._socket_closed then return end
  local q = self._q
  q.tail = q.tail + 1
  q[q.tail] = bytes
  self._queued = self._queued + #bytes
  -- Not while the socket is full: each try would join the queued small
  -- messages again (up to JOIN bytes per send, so quadratic under a slow
  -- reader); the next pump tries once.
  if not self._blocked then self:_flush() end
  if not self._busy and self._queued > self.max_write_queue then self:_set_busy(true) end
end

-- }======================================================================

-- {======================================================================
-- Reading (called by the pump)
-- =======================================================================

-- Read and feed what has arrived, until the socket has no more, the
-- connection is busy or closed, or the loop's clock passes `deadline`.
-- Returns true when anything was read.
function Connection:_read(deadline, now)
  local got = false
  while not (self._closed or self._eof or self._busy) do
    local data, err, partial = self.sock:receive(M.READ_SIZE)
    data = data or partial
    if data and #data > 0 then
      got = true
      self:_feed(data)
    end
    if err == "closed" then
      self._eof = true
      self:finish(M.EOF_REASON)
    elseif err and err ~= "timeout" then
      self._eof = true
      self:finish("read error: " .. tostring(err))
    end
    if err or now() >= deadline then break end
  end
  return got
end

function Connection:_feed(data)
  local ok, msg = xpcall(self.peer.receive, debug.traceback, self.peer, data)
  if not ok then self.peer:log("receive failed: " .. tostring(msg)) end
end

-- Expire the peer's requests whose deadline has passed.
function Connection:_tick()
  local peer = self.peer
  local at = peer:next_deadline()
  if at and at <= peer:now() then peer:tick() end
end

-- One pump's work on this connection; true when something happened.
function Connection:_pump(deadline, now)
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

-- }======================================================================

-- {======================================================================
-- Ending and closing
-- =======================================================================

--- The input ended: the peer decodes what it still holds, and handlers
--- still working may answer for up to `grace` seconds (default: option
--- `finish_grace`); then the connection closes with `reason`.
---@param reason string
---@param grace? number
function Connection:finish(reason, grace)
  if self._closed or self._finishing then return end
  self._finishing, self._eof = true, true
  local peer = self.peer
  local ok, closed = pcall(peer.finish, peer, reason, function() self:_close(reason) end)
  if not ok then
    peer:log("finish failed: " .. tostring(closed))
    return self:_close(reason, "close")
  end
  if closed or self._closed then return end
  self._grace = self.loop:after(grace or self.finish_grace, function()
    self:_close(reason, "close")
  end)
end

-- Close; the peer is closed too when `how` is "close" (else it closed
-- already). Queued bytes still go out for at most LINGER seconds.
function Connection:_close(reason, how)
  if self._closed then return end
  reason = reason or "connection closed"
  self._closed, self.close_reason = true, reason
  self.loop:cancel(self._grace)
  if how then
    local ok, err = pcall(self.peer[how], self.peer, reason)
    if not ok then self.peer:log(how .. " failed: " .. tostring(err)) end
  end
  self.peer:flush()  -- what a receive under way collected goes out too
  self._linger_until = self.loop:now() + M.LINGER
  self:_linger(self.loop.clock)
  for _, hook in ipairs(self._close_hooks) do pcall(hook, self, reason) end
  if self.on_close then
    local ok, err = pcall(self.on_close, reason)
    if not ok then self.peer:log("on_close failed: " .. tostring(err)) end
  end
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

--- Close the connection: every pending request settles with code "closed"
--- and `reason` (default "connection closed"). Idempotent.
---@param reason? string
function Connection:close(reason)
  self:_close(reason, "close")
end

--- True once closed (by us, by the end of the stream, by an error).
---@return boolean
function Connection:closed()
  return self._closed
end

-- }======================================================================

local function check_limit(opts, name, default)
  local v = opts[name]
  if v == nil then return default end
  if type(v) ~= "number" or v < 0 or (v == 0 and name == "max_write_queue") then
    error(name .. " must be a positive number", 4)
  end
  return v
end

--- A connection on the LuaSocket client `sock` (already non-blocking).
--- `connecting`: the connect is still under way (writes wait for it).
---@param loop table  the jrpc.socket loop
---@param sock userdata
---@param opts table  peer options, plus max_write_queue, finish_grace, on_close
---@param connecting? boolean
---@param role? "client"|"server"  the peer's role unless opts.role says: "client" on
---  the side that connected, "server" (the default) on the side that accepted
---@return jrpc.socket.Connection
function M.new(loop, sock, opts, connecting, role)
  local self = setmetatable({
    loop = loop, sock = sock,
    max_write_queue = check_limit(opts, "max_write_queue", M.DEFAULT_MAX_WRITE_QUEUE),
    finish_grace = check_limit(opts, "finish_grace", M.FINISH_GRACE),
    on_close = opts.on_close, _close_hooks = {},
    _q = { head = 1, tail = 0 }, _pos = 1, _queued = 0, _blocked = false,
    _closed = false, _eof = false, _busy = false, _connecting = connecting or false,
  }, Connection)
  local o = options.pick(opts, peer_mod.OPTIONS)
  o.send = function(bytes) self:_send(bytes) end
  o.clock = o.clock or loop.clock
  if o.role == nil then o.role = role or "server" end  -- the caller's option wins
  self.peer = peer_mod.new(o)
  return self
end

return M
