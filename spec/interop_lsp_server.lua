--- A small jrpc LSP server on stdio, the peer node/vscode_client.js drives
-- (see spec/interop_vscode_spec.lua). Not a spec: busted does not load it.
--
--   lua5.4 spec/interop_lsp_server.lua [uv|blocking]
--
-- "uv" (default) serves with jrpc.uv's non-blocking stdio, "blocking" with
-- jrpc.stdio. Content-Length framing, profile lsp; exits 0 at end of input.

-- Find the repository from this script's path (spec/..), so it runs with
-- no environment set, under lua5.4 or luajit.
local script_dir = (arg and arg[0] or ""):match("^(.*)[/\\]") or "."
local root = script_dir .. "/.."
local abi = rawget(_G, "jit") and "jit" or "5.4"
package.path = root .. "/lua/?.lua;" .. root .. "/lua/?/init.lua;" .. package.path
package.cpath = root .. "/build/" .. abi .. "/?.so;" .. package.cpath

local jrpc = require "jrpc"

local notes = 0

local methods = {
  -- Calls the client back while the client's request is still open.
  ask = function(p, ctx)
    local name, err = ctx.peer:request("client/name", { asked = p.who })
    if name == nil then error(err) end
    return "hello " .. name
  end,

  -- Waits in a request to the client, which answers it only after it has
  -- cancelled `hold`; then reports whether the handler saw the cancel.
  hold = function(p, ctx)
    ctx.peer:request("client/block", { tag = p.tag })
    ctx.peer:notify("server/saw_cancel", { tag = p.tag, cancelled = ctx:cancelled() })
    return "answered anyway"  -- dropped: the request was answered -32800
  end,

  fail = function(p)
    jrpc.error(-32001, "custom failure", { tag = p.tag, list = jrpc.array{ 1, 2 } })
  end,

  throw = function() error("boom") end,

  note = function(p, ctx)
    notes = notes + 1
    ctx.peer:notify("noted", { echo = p, count = notes })
  end,
}

local function add_methods(peer)
  for name, fn in pairs(methods) do peer:method(name, fn) end
  peer:method("sum", function(p) return p.a + p.b end, jrpc.params{ "a:number", "b:number" })
end

local function serve_blocking()
  local peer = jrpc.stdio.peer{ profile = "lsp" }
  add_methods(peer)
  jrpc.stdio.serve(peer)
end

local function serve_uv()
  local loop = jrpc.uv.new(require "luv", { catch_sigpipe = true })
  local conn = loop:stdio{ profile = "lsp" }
  add_methods(conn.peer)
  conn.on_close = function() loop:stop() end
  loop:serve_forever()
end

local mode = arg[1] or "uv"
if mode == "blocking" then serve_blocking()
elseif mode == "uv" then serve_uv()
else
  io.stderr:write("usage: interop_lsp_server.lua [uv|blocking]\n")
  os.exit(2)
end
