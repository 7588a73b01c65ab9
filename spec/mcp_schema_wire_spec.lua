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
      list = { type = "array", items = { type = "object", properties = {}, required = {} }, prefixItems = {} },
      tuple = { items = { { type = "string" }, {} } },
      either = { anyOf = { { type = "object", properties = {} } }, allOf = {}, oneOf = {} },
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
  .. '"either":{"allOf":[],"anyOf":[{"properties":{},"type":"object"}],"oneOf":[]},'
  .. '"fixed":{"const":{},"default":{}},'
  .. '"kind":{"enum":[],"examples":[],"type":["string","null"]},'
  .. '"list":{"items":{"properties":{},"required":[],"type":"object"},"prefixItems":[],"type":"array"},'
  .. '"tuple":{"items":[{"type":"string"},{}]}},"required":[],"type":"object"}'

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
