-- The MCP server spec/mcp_inspector_spec.lua drives with the MCP Inspector
-- CLI: two tools (one whose schema has empty properties, one whose schema
-- is JSON text with its arguments in a chosen order), a resource and a
-- prompt. On stdin/stdout, or with `--http 127.0.0.1:0` on Streamable HTTP
-- (it prints `listening on URL` on stderr). Run from the repository root.
dofile((debug.getinfo(1, "S").source:match("^@(.*)[/\\]") or ".") .. "/../../examples/paths.lua")
local jrpc = require "jrpc"
local mcp = require "jrpc.mcp"

local server = mcp.server{ name = "inspector-fixture", version = "1.0.0" }

server:tool{ name = "ping_pong", description = "Answers pong",
  input_schema = { type = "object", properties = {}, required = {} },
  handler = function() return "pong" end }

-- the order a form shows them in is the order written here
server:tool{ name = "order", description = "Names its four arguments in order",
  input_schema = [[{"type":"object","properties":{"first":{"type":"string"},"second":{"type":"string"},]]
    .. [["third":{"type":"string"},"fourth":{"type":"string"}},"required":["first","fourth"]}]],
  handler = function(args)
    return ("%s %s %s %s"):format(args.first, args.second or "-", args.third or "-", args.fourth)
  end }

server:resource{ uri = "fixture://motd", name = "Message of the day", mime_type = "text/plain",
  handler = function() return "Hello from jrpc." end }

server:prompt{ name = "greeting", description = "Greets someone",
  arguments = { { name = "who", description = "Whom to greet", required = true } },
  handler = function(args) return "Say hello to " .. args.who .. "." end }

local addr = arg[1] == "--http" and arg[2]
if addr then
  local loop = jrpc.uv.new(require "luv")
  local host, port = addr:match("^(.*):(%d+)$")
  local srv = assert(server:serve_http(loop, { host = host, port = tonumber(port) }))
  io.stderr:write(("listening on http://%s:%d/mcp\n"):format(host, srv.port))
  io.stderr:flush()
  loop:serve_forever()
else
  server:serve_stdio()
end
