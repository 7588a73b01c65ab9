-- spec/peer_support.lua: shared by the peer specs (loaded with dofile; not a
-- spec itself).
local jrpc = require "jrpc"

local M = {}

--- A peer whose output and log lines are collected: peer, out, logs.
function M.capture(opts)
  local out, logs = {}, {}
  opts = opts or {}
  opts.send = function(bytes) out[#out + 1] = bytes end
  opts.on_error = function(msg) logs[#logs + 1] = msg end
  return jrpc.peer(opts), out, logs
end

--- A JSON text as one ndjson line.
function M.line(json) return json .. "\n" end

return M
