-- Tool schemas as the official SDK client (1.32.2, a real process) sees
-- them from a server run under lua5.4 and luajit: a Lua-table schema in
-- JSON Schema's shapes (an empty list is [], an empty map {}), and a schema
-- given as JSON text with its author's key order.
local P = dofile("spec/mcp_probe_support.lua")
local jrpc = require "jrpc"

local SERVER = [==[
local mcp = require "jrpc.mcp"
local srv = mcp.server{ name = "schemas", version = "1.0.0" }
srv:tool{ name = "empty", description = "no arguments",
  input_schema = { type = "object", properties = {}, required = {} },
  handler = function() return "ok" end }
srv:tool{ name = "shapes", description = "every keyword's shape",
  input_schema = { type = "object", required = {},
    properties = {
      kind = { type = { "string", "null" }, enum = {}, examples = {} },
      list = { type = "array", items = { type = "object", properties = {}, required = {} } },
      tuple = { prefixItems = { { type = "string" }, {} } },
      either = { anyOf = { { type = "object", properties = {} } }, allOf = { {} }, oneOf = { { required = {} } } },
      deps = { dependentRequired = { a = {} }, dependentSchemas = {}, patternProperties = {} },
      fixed = { const = {}, default = {} },
    },
    ["$defs"] = {}, additionalProperties = { type = "object", required = {} } },
  output_schema = { type = "object", properties = {}, required = {} },
  handler = function() return { structuredContent = {}, content = {} } end }
srv:tool{ name = "ordered", description = "arguments in the author's order",
  input_schema = [[{
    "type": "object",
    "properties": {
      "first": {"type": "string", "description": "a \"quoted\" one"},
      "second": {"type": "number", "minimum": 1.50},
      "third": {"type": "string", "enum": []},
      "fourth": {"type": "array", "items": {}}
    },
    "required": ["first", "second"]
  }]],
  handler = function() return "ok" end }
srv:serve_stdio()
]==]

local SHAPES = '{"$defs":{},"additionalProperties":{"required":[],"type":"object"},"properties":{'
  .. '"deps":{"dependentRequired":{"a":[]},"dependentSchemas":{},"patternProperties":{}},'
  .. '"either":{"allOf":[{}],"anyOf":[{"properties":{},"type":"object"}],"oneOf":[{"required":[]}]},'
  .. '"fixed":{"const":{},"default":{}},'
  .. '"kind":{"enum":[],"examples":[],"type":["string","null"]},'
  .. '"list":{"items":{"properties":{},"required":[],"type":"object"},"type":"array"},'
  .. '"tuple":{"prefixItems":[{"type":"string"},{}]}},"required":[],"type":"object"}'

local ORDERED = '{"type":"object","properties":{"first":{"type":"string","description":"a \\"quoted\\" one"},'
  .. '"second":{"type":"number","minimum":1.5},"third":{"type":"string","enum":[]},'
  .. '"fourth":{"type":"array","items":{}}},"required":["first","second"]}'

for _, lua in ipairs(P.INTERPRETERS) do
  describe("MCP tool schemas through the SDK client, server under " .. lua, function()
    local steps, out
    setup(function() steps, out = P.probe(SERVER, lua, { { name = "empty", arguments = jrpc.object() } }) end)

    it("listTools() accepts every tool", function()
      local tools = assert(steps["tools/list"], out).tools
      assert.is_table(tools, out)
      local names = {}
      for i, t in ipairs(tools) do names[i] = t.name end
      assert.are.same({ "empty", "shapes", "ordered" }, names)
    end)

    it("sends an empty required list as [] and empty properties as {}", function()
      local tool = steps["tools/list"].tools[1]
      assert.are.equal('{"properties":{},"required":[],"type":"object"}',
        P.canonical(jrpc.decode(tool.inputSchema)))
      assert.are.same({ content = { { type = "text", text = "ok" } } }, steps["call empty"].result)
    end)

    it("gives every keyword of a Lua-table schema its JSON Schema shape", function()
      local tool = steps["tools/list"].tools[2]
      assert.are.equal(SHAPES, P.canonical(jrpc.decode(tool.inputSchema)))
      assert.are.equal('{"properties":{},"required":[],"type":"object"}',
        P.canonical(jrpc.decode(tool.outputSchema)))
    end)

    it("sends a schema given as JSON text in its own key order", function()
      assert.are.equal(ORDERED, steps["tools/list"].tools[3].inputSchema)
    end)
  end)
end

-- {======================================================================
-- Elicitation schemas: asked with ctx:request (legacy) and with
-- mcp.input_required (2026-07-28 MRTR), a Lua-table requestedSchema goes
-- out in its JSON shapes too
-- =======================================================================

local ELICITING = [==[
local jrpc = require "jrpc"
local mcp = require "jrpc.mcp"
local loop = jrpc.uv.new(require "luv")
local srv = mcp.server{ name = "eliciting", version = "1.0.0" }
srv:tool{ name = "ask", description = "asks",
  handler = function(_, ctx)
    local answer = assert(ctx:request("elicitation/create", { message = "Confirm?",
      requestedSchema = { type = "object", properties = { ok = { type = "boolean" } }, required = {} } }))
    return answer.action
  end }
srv:serve_stdio(loop)
]==]

for _, lua in ipairs(P.INTERPRETERS) do
  describe("an elicitation's Lua-table schema through the SDK client, server under " .. lua, function()
    it("arrives with required as an array", function()
      local steps, out = P.probe(ELICITING, lua, { { name = "ask", arguments = jrpc.object() } }, { elicit = true })
      assert.are.equal('{"properties":{"ok":{"type":"boolean"}},"required":[],"type":"object"}',
        P.canonical(jrpc.decode(assert(steps.elicited, out).requestedSchema)))
      assert.are.same({ content = { { type = "text", text = "accept" } } }, steps["call ask"].result)
    end)
  end)
end

describe("an input_required result's elicitation schema (2026-07-28)", function()
  it("goes out with required as an array", function()
    local mcp = require "jrpc.mcp"
    local server = mcp.server{ name = "spec", version = "0.1.0" }
    server:tool{ name = "ask", description = "asks", handler = function()
      return mcp.input_required{ confirm = { method = "elicitation/create", params = { message = "Confirm?",
        requestedSchema = { type = "object", properties = {}, required = {} } } } }
    end }
    local lines = {}
    local peer = jrpc.peer{ profile = "mcp", role = "server", send = function(bytes) lines[#lines + 1] = bytes end }
    server:attach(peer)
    peer:receive(assert(jrpc.encode{ jsonrpc = "2.0", id = 1, method = "tools/call", params = { name = "ask",
      _meta = { ["io.modelcontextprotocol/protocolVersion"] = "2026-07-28",
        ["io.modelcontextprotocol/clientCapabilities"] = { elicitation = jrpc.object() } } } }) .. "\n")
    local answer = jrpc.decode(table.concat(lines))
    assert.are.equal("input_required", answer.result.resultType)
    assert.are.equal('{"properties":{},"required":[],"type":"object"}',
      P.canonical(answer.result.inputRequests.confirm.params.requestedSchema))
  end)
end)
