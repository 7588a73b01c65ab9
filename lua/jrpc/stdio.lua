--- A blocking stdio transport: serve a peer on stdin/stdout.
-- Only protocol messages go to stdout; logs go to stderr.
local peer_mod = require "jrpc.peer"
local options = require "jrpc.options"
local stdout = require "jrpc.stdout"

local M = {}

--- Write bytes to stdout and flush them (the default `send`); once stdout
--- is kept for the protocol (an MCP server's `serve_stdio` does that), to
--- the descriptor kept (jrpc.stdout).
---@param bytes string
function M.send(bytes)
  if stdout.kept() then
    stdout.write(bytes)
    return
  end
  io.stdout:write(bytes)
  io.stdout:flush()
end

-- A peer made from `opts`, checked in the name of `where`.
local function new_peer(where, opts)
  local o = options.pick(options.check(where, opts, 3, peer_mod.OPTIONS), peer_mod.OPTIONS)
  o.send = o.send or M.send
  o.role = o.role or "server"  -- stdin was handed to us: we serve it
  return peer_mod.new(o)
end

--- A peer whose `send` writes to stdout.
---@param opts? table  peer options (`send` defaults to stdio.send)
---@return jrpc.Peer
function M.peer(opts)
  local peer = new_peer("jrpc.stdio.peer", opts)  -- not a tail call: errors name our caller
  return peer
end

-- Reads are capped, so neither a hostile Content-Length nor a line without
-- end can make us hold more than this at once; the codec counts the bytes
-- of a message and drops one over max_message_bytes as it streams in.
local MAX_READ = 65536

-- A line read that returns after MAX_READ bytes (Lua's read("L") holds the
-- whole line, however long). Without the C module (a copy of the Lua files
-- only), read("L") is the fallback and only the codec's limit holds.
local has_lineread, lineread = pcall(require, "jrpc.lineread")
local read_line
if has_lineread then
  local read = lineread.read
  read_line = function(input) return read(input, MAX_READ) end
else
  read_line = function(input) return input:read("L") end
end
M.bounded = has_lineread

-- The next chunk: an LSP body's remaining bytes when the codec knows how
-- many it needs, else (at most MAX_READ bytes of) a line: an ndjson
-- message or an LSP header line.
local function read_chunk(peer, input)
  local want = peer:want()
  if want > 0 then return input:read(want < MAX_READ and want or MAX_READ) end
  return read_line(input)
end

-- A bug inside the peer is logged; it must not end the server.
local function guarded(peer, method, chunk)
  local ok, err = pcall(peer[method], peer, chunk)
  if not ok then peer:log(method .. " failed: " .. tostring(err)) end
end

--- Feed `input` (default io.stdin) to the peer until end of input, then
--- `peer:finish()`. Blocks. A failure inside the peer is logged, never fatal.
--- Memory is bounded by the peer's max_message_bytes plus one read.
--- Nothing can wake a waiting handler once the input has ended (there is no
--- event loop here), so the peer closes right after `finish`.
---@param peer jrpc.Peer
---@param input? file*
function M.run(peer, input)
  input = input or io.stdin
  while true do
    local chunk = read_chunk(peer, input)
    if chunk == nil then break end
    guarded(peer, "receive", chunk)
  end
  guarded(peer, "finish", "end of input")
  if not peer:closed() then peer:close("end of input") end
end

--- Serve on stdin/stdout until end of input.
---@param peer_or_opts jrpc.Peer|table  a peer, or options for `stdio.peer`
---  (give handlers with `methods = { name = fn }`)
---@return jrpc.Peer
function M.serve(peer_or_opts)
  local peer = peer_or_opts
  if not peer_mod.is_peer(peer) then peer = new_peer("jrpc.stdio.serve", peer_or_opts) end
  M.run(peer)
  return peer
end

return M
