-- jrpc.mcp's server checks tool arguments and structuredContent with JSON
-- Schema 2020-12 (jrpc.schema): nested paths, $ref/$defs, combinators,
-- patterns and enums; a schema it cannot use is refused when the tool is
-- registered, naming the tool and the keyword.
local jrpc = require "jrpc"
local mcp = require "jrpc.mcp"

local META = { ["io.modelcontextprotocol/protocolVersion"] = "2026-07-28",
  ["io.modelcontextprotocol/clientCapabilities"] = jrpc.object() }

local function setup()
  local server = mcp.server{ name = "spec", version = "0.1.0" }
  local out = {}
  local peer = jrpc.peer{ profile = "mcp", role = "server", on_error = function() end,
    send = function(bytes) for line in bytes:gmatch("[^\n]+") do out[#out + 1] = assert(jrpc.decode(line)) end end }
  server:attach(peer)
  local id = 0
  local function call(name, arguments)
    id = id + 1
    out = {}
    peer:receive(assert(jrpc.encode{ jsonrpc = "2.0", id = id, method = "tools/call",
      params = { _meta = META, name = name, arguments = arguments } }) .. "\n")
    if out[1].error then return ("rpc error %d: %s"):format(out[1].error.code, out[1].error.message) end
    local r = out[1].result
    return r.isError and "error: " .. r.content[1].text or r.content[1].text
  end
  return server, call
end

describe("jrpc.mcp tool schemas (JSON Schema 2020-12)", function()
  local server, call = setup()
  server:tool{ name = "order", description = "Places an order",
    input_schema = [[{
      "type": "object",
      "$defs": {"item": {"type": "object", "required": ["sku", "qty"],
        "properties": {"sku": {"type": "string", "pattern": "^[A-Z]{3}-[0-9]+$"},
                       "qty": {"type": "integer", "minimum": 1}},
        "additionalProperties": false}},
      "properties": {
        "items": {"type": "array", "items": {"$ref": "#/$defs/item"}, "minItems": 1},
        "speed": {"enum": ["slow", "fast"]},
        "note": {"anyOf": [{"type": "string", "maxLength": 5}, {"type": "null"}]}
      },
      "required": ["items"],
      "additionalProperties": false
    }]],
    output_schema = { type = "object", required = { "total" }, properties = { total = { type = "integer" } } },
    handler = function(args)
      local total = 0
      for _, item in ipairs(args.items) do total = total + item.qty end
      if args.note == "float" then total = total + 0.5 end
      return { total = total }
    end }

  it("takes arguments that fit, and names the path of the first that does not", function()
    assert.equal('{"total":5}', call("order", { items = { { sku = "ABC-1", qty = 2 }, { sku = "XYZ-22", qty = 3 } } }))
    assert.equal('error: Invalid arguments for tool order: /items/1/sku: expected a string matching "^[A-Z]{3}-[0-9]+$", got "abc"',
      call("order", { items = { { sku = "ABC-1", qty = 2 }, { sku = "abc", qty = 3 } } }))
    assert.equal("error: Invalid arguments for tool order: /items/0/qty: expected at least 1, got 0",
      call("order", { items = { { sku = "ABC-1", qty = 0 } } }))
    assert.equal('error: Invalid arguments for tool order: /items/0: missing required property "qty"',
      call("order", { items = { { sku = "ABC-1" } } }))
    assert.equal('error: Invalid arguments for tool order: /speed: expected one of ["slow","fast"], got "warp"',
      call("order", { items = { { sku = "ABC-1", qty = 1 } }, speed = "warp" }))
    assert.equal("error: Invalid arguments for tool order: /extra: not allowed",
      call("order", { items = { { sku = "ABC-1", qty = 1 } }, extra = true }))
    assert.equal("error: Invalid arguments for tool order: /items: expected at least 1 item, got 0",
      call("order", { items = jrpc.array{} }))
  end)

  it("checks structuredContent against the output schema", function()
    assert.equal("rpc error -32603: Tool order returned structuredContent that does not fit its outputSchema: "
      .. "/total: expected integer, got number",
      call("order", { items = { { sku = "ABC-1", qty = 1 } }, note = "float" }))
  end)

  it("refuses, at registration, a schema it cannot use", function()
    assert.has_error(function()
      server:tool{ name = "remote", input_schema = { ["$ref"] = "https://example.com/s.json" }, handler = print }
    end)
    local ok, err = pcall(server.tool, server, { name = "bad", input_schema = { type = "strin" }, handler = print })
    assert.is_false(ok)
    assert.truthy(err:find('tool bad: input_schema: schema /type: unknown type "strin"', 1, true), err)
  end)
end)
