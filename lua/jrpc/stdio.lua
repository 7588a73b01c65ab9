--- A blocking stdio transport: serve a peer on stdin/stdout.
-- Only protocol messages go to stdout; logs go to stderr.
local peer_mod = require "jrpc.peer"

local M = {}

--- Write bytes to stdout and flush them (the default `send`).
---@param bytes string
function M.send(bytes)
  io.stdout:write(bytes)
  io.stdout:flush()
end

--- A peer whose `send` writes to stdout.
---@param opts? table  peer options (`send` defaults to stdio.send)
---@return jrpc.Peer
function M.peer(opts)
  local o = {}
  for k, v in pairs(opts or {}) do o[k] = v end
  o.send = o.send or M.send
  return peer_mod.new(o)
end

-- Reads of a body are capped, so a hostile Content-Length cannot make us
-- hold more than this at once (the codec counts the bytes, not us).
local MAX_READ = 65536

-- The next chunk: an LSP body's remaining bytes when the codec knows how
-- many it needs, else a line (an ndjson message or an LSP header line).
local function read_chunk(peer, input)
  local want = peer:want()
  if want > 0 then return input:read(want < MAX_READ and want or MAX_READ) end
  return input:read("L")
end

-- A bug inside the peer is logged; it must not end the server.
local function guarded(peer, method, chunk)
  local ok, err = pcall(peer[method], peer, chunk)
  if not ok then peer._log(method .. " failed: " .. tostring(err)) end
end

--- Feed `input` (default io.stdin) to the peer until end of input, then
--- `peer:finish()`. Blocks. A failure inside the peer is logged, never fatal.
---@param peer jrpc.Peer
---@param input? file*
function M.run(peer, input)
  input = input or io.stdin
  while true do
    local chunk = read_chunk(peer, input)
    if chunk == nil then break end
    guarded(peer, "receive", chunk)
  end
  guarded(peer, "finish")
end

--- Serve on stdin/stdout until end of input.
---@param peer_or_opts jrpc.Peer|table  a peer, or options for `stdio.peer`
---  (give handlers with `methods = { name = fn }`)
---@return jrpc.Peer
function M.serve(peer_or_opts)
  local peer = peer_or_opts
  if not peer_mod.is_peer(peer) then peer = M.peer(peer_or_opts) end
  M.run(peer)
  return peer
end

return M
