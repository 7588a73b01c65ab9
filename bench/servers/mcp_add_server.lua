-- A jrpc MCP server with one tool, `add` (text: a + b), on Streamable
-- HTTP: the server bench/deploy_load.sh and spec/deploy/fault.sh put
-- under load, alone or as one of examples/deploy/workers.lua's workers
-- (the same tool as node/mcp_add_server2.js, the SDK's side). Run from the
-- repository root:
--   lua5.4 bench/servers/mcp_add_server.lua --http 127.0.0.1:PORT \
--     [--worker I] [--state-key-file FILE] [--allowed-host HOST]...
-- Prints "listening on http://HOST:PORT/mcp" on stderr; SIGTERM drains
-- (answers what is in flight) and exits 0.
dofile((debug.getinfo(1, "S").source:match("^@(.*)[/\\]") or ".") .. "/../../examples/paths.lua")
local jrpc = require "jrpc"
local mcp = require "jrpc.mcp"
local luv = require "luv"

-- The options workers.lua passes (--worker and the key matter to legacy
-- sessions and MRTR, which this tool has none of: accepted, the key used).
local function parse_args(argv)
  local o, i = { allowed_hosts = {} }, 1
  while argv[i] do
    local flag, value = argv[i], argv[i + 1]
    if value == nil then error("mcp_add_server: " .. flag .. " needs a value", 0) end
    if flag == "--http" then o.http = value
    elseif flag == "--worker" then o.worker = value
    elseif flag == "--state-key-file" then o.key_file = value
    elseif flag == "--allowed-host" then o.allowed_hosts[#o.allowed_hosts + 1] = value
    else error("mcp_add_server: unknown option " .. flag, 0) end
    i = i + 2
  end
  assert(o.http, "mcp_add_server: --http HOST:PORT is required")
  return o
end

local opt = parse_args(arg)
local key
if opt.key_file then
  local f = assert(io.open(opt.key_file, "rb"))
  key = f:read("a")
  f:close()
end

local server = mcp.server{ name = "jrpc-add-server", version = "1.0.0", state_key = key }
server:tool{ name = "add", description = "Adds two numbers",
  input_schema = { type = "object", properties = { a = { type = "number" }, b = { type = "number" } },
    required = { "a", "b" } },
  -- %d for integers: Lua 5.4 would print 3 + 1.0 as "4.0", the SDK "4"
  handler = function(args)
    local sum = args.a + args.b
    return sum % 1 == 0 and ("%d"):format(sum) or tostring(sum)
  end }

local loop = jrpc.uv.new(luv, { catch_sigpipe = true })
local host, port = opt.http:match("^(.*):(%d+)$")
local srv = assert(server:serve_http(loop, { host = host, port = tonumber(port),
  allowed_hosts = #opt.allowed_hosts > 0 and opt.allowed_hosts or nil }))
local sig = luv.new_signal()
sig:start("sigterm", function()
  sig:close()
  srv:shutdown{ grace = 10, on_done = function() loop:stop() end }
end)
io.stderr:write(("listening on http://%s:%d/mcp\n"):format(host, srv.port))
io.stderr:flush()
loop:serve_forever{ idle_gc = true, busy_poll = true }
