--- A jrpc peer in a child process for the fault specs: handlers that hang,
-- spin, raise inside nested calls back to the parent, or wait on the parent
-- while the parent cancels. Serves on its stdin/stdout (jrpc.uv), or with
-- --listen on a TCP port of 127.0.0.1 (it then writes "listening on
-- 127.0.0.1:PORT" to stderr).
--
--   lua5.4 spec/fault/peer.lua [--profile jsonrpc|mcp] [--framing ndjson|lsp] [--listen]
local root = ((arg and arg[0] or ""):match("^(.*)[/\\]spec[/\\]fault[/\\]") or ".") .. "/"
local abi = rawget(_G, "jit") and "jit" or "5.4"
package.path = root .. "lua/?.lua;" .. root .. "lua/?/init.lua;" .. package.path
package.cpath = root .. "build/" .. abi .. "/?.so;" .. package.cpath

local jrpc = require "jrpc"
local workers = require "jrpc.workers"
local uv = require "luv"

local opts = { profile = "jsonrpc", framing = nil, listen = false }
local i = 1
while arg[i] do
  local flag = arg[i]
  if flag == "--listen" then
    opts.listen, i = true, i + 1
  elseif (flag == "--profile" or flag == "--framing") and arg[i + 1] then
    opts[flag:sub(3)], i = arg[i + 1], i + 2
  else
    io.stderr:write("usage: peer.lua [--profile P] [--framing F] [--listen]\n")
    os.exit(2)
  end
end

local loop = jrpc.uv.new(uv, { catch_sigpipe = true })
local last_wait = nil  -- what the last wait_parent saw, for `report`

local methods = {
  subtract = function(p) return p[1] - p[2] end,
  -- never returns: waits (a jrpc wait) for something that never comes
  hang = function() workers.wait() end,
  -- never returns and never yields: the whole process is stuck
  spin = function() while true do end end,
  -- outer -> the parent's "middle" -> our "inner", which raises
  outer = function(p, ctx)
    local result, err = ctx.peer:request("middle", p)
    if err then error(err) end
    return result
  end,
  inner = function(p)
    if p.raise == "jrpc" then jrpc.error(-32001, "innermost failed", { depth = 3 }) end
    if p.raise == "lua" then error("innermost blew up") end
    return "inner ok"
  end,
  -- waits on the parent's "slow", which the parent answers late
  wait_parent = function(p, ctx)
    local result, err = ctx.peer:request("slow", p)
    last_wait = { result = result, err = err and err.code, cancelled = ctx:cancelled() }
    return "waited"
  end,
  -- calls the parent's "never" with a timeout and says how that settled
  ask_never = function(p, ctx)
    local _, err = ctx.peer:request("never", {}, { timeout = p.timeout })
    return err and err.code or "answered"
  end,
  report = function() return last_wait or jrpc.null end,
}

local peer_opts = { profile = opts.profile, framing = opts.framing, methods = methods,
  on_error = function(msg) io.stderr:write("peer: ", msg, "\n") end }

if opts.listen then
  peer_opts.port = 0
  local server = assert(loop:listen(peer_opts))
  io.stderr:write(("listening on 127.0.0.1:%d\n"):format(server.port))
  io.stderr:flush()
else
  assert(loop:stdio(peer_opts))
end
loop:serve_forever()
