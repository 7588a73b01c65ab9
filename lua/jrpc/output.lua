--- Outgoing bytes. While the peer is inside `receive` (or `tick`/`finish`),
-- writes are collected and handed to `send` once, concatenated, at the end:
-- one transport write per read instead of one per reply.
local concat = table.concat

local M = {}

--- Queue bytes for the transport (or send them now when not collecting).
--- Nothing is written after close.
---@param peer table
---@param bytes string
function M.write(peer, bytes)
  if peer._closed then return end
  if peer._depth > 0 then
    local n = peer._nout + 1
    peer._nout = n
    peer._out[n] = bytes
  else
    peer._send(bytes)
  end
end

--- Hand everything collected to `send` in one call.
---@param peer table
function M.flush(peer)
  local n = peer._nout
  if n == 0 then return end
  local out = peer._out
  local bytes = n == 1 and out[1] or concat(out, "", 1, n)
  for i = 1, n do out[i] = nil end
  peer._nout = 0
  peer._send(bytes)
end

--- Run `fn(peer, arg)` with writes collected; the outermost call flushes.
--- An error still flushes and resets the state before it propagates.
---@param peer table
---@param fn fun(peer: table, arg: any)
---@param arg any
function M.collect(peer, fn, arg)
  local depth = peer._depth
  peer._depth = depth + 1
  local ok, err = pcall(fn, peer, arg)
  peer._depth = depth
  if depth == 0 then M.flush(peer) end
  if not ok then error(err, 0) end
end

return M
