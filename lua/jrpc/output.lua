--- Outgoing bytes of a peer. While the peer is inside a read (`receive`,
-- `tick`, `finish`), writes are held and handed to `send` as one piece,
-- when the outermost read ends: few transport writes instead of one per
-- reply. A long read also hands on what it holds after its first few writes
-- and then every FLUSH_PARTS writes:
-- a client that sends its next requests as the replies come (most do) then
-- works while we work, instead of both sides waiting for each other's whole
-- burst in turn (strace showed exactly that under a Node client: one read
-- of 64 requests, one write of 64 replies, idle in between). The first
-- write of a read comes after FIRST_FLUSH writes, and each interval after
-- it is twice the one before, up to FLUSH_PARTS. Order is kept: held bytes
-- always go first. This module alone owns that policy.
--
-- The held bytes themselves are kept by the peer's codec (`codec:hold`):
-- while writes are held, its writers append each framed message to them
-- and return true, which `write` takes as "already held". So a reply or a
-- request costs no Lua string of its own (on LuaJIT making one cost about
-- as much as encoding the message), only the one string `send` gets.
local M = {}

-- Enough replies per write that a write costs little next to the work of
-- the replies in it; few enough that the other side starts early. (Counted
-- in writes, not bytes: a byte count would cost every reply a length.) The
-- first write of a read comes soon, or a client with a few requests in
-- flight waits in lock-step for our whole burst; the interval then grows
-- (writes after 2, 6, 14, 30, 46, ... replies), which keeps a pipelining
-- client busy. The measurements behind these two numbers are in
-- bench/results/design-choices.md.
M.FLUSH_PARTS = 16
M.FIRST_FLUSH = 2

---@class jrpc.Output
local Output = {}
Output.__index = Output

--- An output writing through `send(bytes)`, holding bytes in `codec` (a
--- core codec: the peer's, whose writers then append to what is held).
---@param send fun(bytes: string)
---@param codec table
---@return jrpc.Output
function M.new(send, codec)
  return setmetatable({ send = send, codec = codec, n = 0, depth = 0, closed = false,
    flush_parts = M.FLUSH_PARTS, next_flush = M.FIRST_FLUSH, direct = send, direct_hook = nil }, Output)
end

-- `direct`: the function `write` would hand bytes to right now -- `send`,
-- while no read holds writes and the output is open -- else false; the
-- hook of `on_direct` hears of each change.
local function set_direct(self, direct)
  if direct == self.direct then return end
  self.direct = direct
  if self.direct_hook then self.direct_hook(direct) end
end

local function update_direct(self)
  set_direct(self, self.depth == 0 and not self.closed and self.send)
end

--- Call `fn(direct)` now and whenever the function `write` would hand
--- bytes to right now changes: `send` while no read holds writes and the
--- output is open, else false. The one reply of a one-request read goes
--- straight to it (jrpc.server), sparing the call of `write` on the path of
--- most reads.
---@param fn fun(direct: function|false)
function Output:on_direct(fn)
  self.direct_hook = fn
  fn(self.direct)
end

-- Writes are held (the codec's writers append) from the outermost hold
-- to its release, unless the output is closed.
local function update_holding(self)
  self.codec:hold(self.depth > 0 and not self.closed)
end

-- Send what is held (some writes were counted) as one piece.
local function send_held(self)
  self.n = 0
  local bytes = self.codec:take()
  if bytes then self.send(bytes) end
end

-- The outermost hold starts: the first write of a read comes sooner.
local function begin_outer(self)
  self.next_flush = M.FIRST_FLUSH
  update_holding(self)
end

-- The outermost hold ends: write directly again, and flush.
local function end_outer(self)
  update_holding(self)
  update_direct(self)
  if self.n > 0 then send_held(self) end
end

--- Queue bytes (or send them now when no read is under way). `true` is a
--- message the codec's writer already holds. Nothing is written once the
--- output is closed.
---@param bytes string|true
function Output:write(bytes)
  if self.closed then return end
  if self.depth > 0 then
    if bytes ~= true then self.codec:append(bytes) end
    local n = self.n + 1
    self.n = n
    if n >= self.next_flush then
      send_held(self)
      local next_flush = 2 * self.next_flush
      self.next_flush = next_flush < self.flush_parts and next_flush or self.flush_parts
    end
  else
    self.send(bytes)
  end
end

--- `write`, `hold` and `release` as plain functions (`write(out, bytes)`),
--- for hot paths: no method lookup.
M.write = Output.write

--- Hand everything held to `send` in one call (also after close: what was
--- written before the close still goes out).
function Output:flush()
  if self.n > 0 then send_held(self) end
end

--- Hold writes until the matching `release` (calls nest). Pair them so
--- that nothing between can skip the release: see `collect`.
function Output:hold()
  local depth = self.depth
  self.depth = depth + 1
  if depth == 0 then begin_outer(self) end
  set_direct(self, false)
end

--- End a `hold`; the outermost one flushes.
function Output:release()
  local depth = self.depth - 1
  self.depth = depth
  if depth == 0 then end_outer(self) end
end

--- Run `fn(a, b)` with writes held, protected: whatever `fn` raises, the
--- hold ends (the outermost flushing what was held); returns what pcall
--- returns. One call on the path of every read.
---@param fn fun(a: any, b: any)
---@return boolean ok
---@return any err
function Output:held(fn, a, b)
  local depth = self.depth
  self.depth = depth + 1
  set_direct(self, false)
  if depth == 0 then begin_outer(self) end
  local ok, err = pcall(fn, a, b)
  self.depth = depth
  if depth == 0 then end_outer(self) end
  return ok, err
end

--- Run `fn(a, b)` with writes held. Whatever `fn` raises, the hold ends
--- (flushing what was held) before the error propagates.
---@param fn fun(a: any, b: any)
function Output:collect(fn, a, b)
  local ok, err = self:held(fn, a, b)
  if not ok then error(err, 0) end
end

--- Write nothing more (what is held can still be flushed).
function Output:close()
  self.closed = true
  set_direct(self, false)
  update_holding(self)
end

--- Replace the function bytes go to (for taps in tests and transports that
--- wrap a peer); returns the previous one.
---@param send fun(bytes: string)
---@return fun(bytes: string)
function Output:set_send(send)
  local old = self.send
  self.send = send
  update_direct(self)
  return old
end

M.hold, M.release = Output.hold, Output.release

return M
