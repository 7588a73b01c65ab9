-- The smallest MCP server: one tool, on stdin/stdout, for MCP clients of
-- both eras (2026-07-28 and 2025-11-25). Run from the repository root:
--   lua5.4 examples/mcp/hello_server.lua     (or luajit)
dofile((debug.getinfo(1, "S").source:match("^@(.*)[/\\]") or ".") .. "/../paths.lua")
local mcp = require "jrpc.mcp"

local server = mcp.server{ name = "hello", version = "1.0.0" }

server:tool{
  name = "greet",
  description = "Say hello to someone",
  input_schema = [[{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}]],
  handler = function(args) return "Hello, " .. args.name .. "!" end,
}

server:serve_stdio()   -- blocking stdio; pass jrpc.uv.new(require "luv") to run on luv
