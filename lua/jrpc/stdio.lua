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
local function read_chunk(link, input)
  local want = link:want()
  if want > 0 then return input:read(want < MAX_READ and want or MAX_READ) end
  return read_line(input)
end

-- A bug inside the peer is logged; it must not end the server.
local function guarded(link, what, fn, obj, arg)
  local ok, err = pcall(fn, obj, arg)
  if not ok then link:log(what .. " failed: " .. tostring(err)) end
end

--- Serve `peer` (from `stdio.peer`) on stdin/stdout: feed it `input`
--- (default io.stdin) until end of input, then finish. Blocks. A failure
--- inside the peer is logged, never fatal. Memory is bounded by the peer's
--- max_message_bytes plus one read. Nothing can wake a waiting handler once
--- the input has ended (there is no event loop here), so the peer closes
--- right after the input ends.
---@param peer jrpc.Peer
---@param input? file*
---@return jrpc.Peer peer
function M.serve(peer, input)
  if not peer_mod.is_peer(peer) then
    error("jrpc.stdio.serve: expected a peer (make one with jrpc.stdio.peer{...}), got " .. type(peer), 2)
  end
  local link = peer_mod.link(peer)
  input = input or io.stdin
  while true do
    local chunk = read_chunk(link, input)
    if chunk == nil then break end
    guarded(link, "receive", peer.receive, peer, chunk)
  end
  guarded(link, "finish", link.finish, link, "end of input")
  if not peer:closed() then peer:close("end of input") end
  return peer
end

return M
