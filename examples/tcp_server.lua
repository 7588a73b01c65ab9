#!/usr/bin/env lua5.4
--- The spec server's methods (examples/spec_server.lua) over TCP on 127.0.0.1.
--
--   lua5.4 examples/tcp_server.lua --port N [--framing ndjson|lsp]
--
-- --port 0 picks a free port. Prints "listening on 127.0.0.1:PORT" to
-- stderr once it accepts connections; each connection is its own peer.
-- Besides the spec server's methods, `slow` answers "slow done" after
-- params[1] seconds (default 1): for clients that show a timeout.
-- Runs until killed. Needs luv.
local script_dir = debug.getinfo(1, "S").source:match("^@(.*)[/\\][^/\\]*$") or "."
dofile(script_dir .. "/paths.lua")  -- lua/ and build/ of this checkout

local jrpc = require "jrpc"

local USAGE = "usage: tcp_server.lua --port N [--framing ndjson|lsp]\n"

local function usage_error()
  io.stderr:write(USAGE)
  os.exit(2)
end

local function parse_args(argv)
  local opts = { framing = "ndjson" }
  local i = 1
  while argv[i] do
    local flag, value = argv[i], argv[i + 1]
    if flag == "--port" and value and value:match("^%d+$") and tonumber(value) < 65536 then
      opts.port = tonumber(value)
    elseif flag == "--framing" and (value == "ndjson" or value == "lsp") then
      opts.framing = value
    else
      usage_error()
    end
    i = i + 2
  end
  if opts.port == nil then usage_error() end
  return opts
end

local opts = parse_args(arg or {})
local install = assert(loadfile(script_dir .. "/spec_server.lua"))("--module")
local loop = jrpc.uv.new(require "luv", { catch_sigpipe = true })
local server, err = loop:listen{
  host = "127.0.0.1", port = opts.port, framing = opts.framing,
  on_peer = function(conn)
    install(conn.peer)
    conn.peer:method("slow", function(p)
      loop:sleep(type(p) == "table" and tonumber(p[1]) or 1)
      return "slow done"
    end)
  end,
}
if not server then
  io.stderr:write("tcp_server: ", err.message, "\n")
  os.exit(1)
end
io.stderr:write(("listening on 127.0.0.1:%d\n"):format(server.port))
io.stderr:flush()
loop:serve_forever()
