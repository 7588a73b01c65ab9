-- What a tool handler returns, as the official SDK client (1.32.2, a real
-- process) gets it from a server run under lua5.4 and luajit: a plain
-- record is structuredContent plus its JSON as text (checked against the
-- outputSchema when there is one); a value that cannot be a result is an
-- isError result naming the mistake and the fix, and a line in the log.
local P = dofile("spec/mcp_probe_support.lua")
local jrpc = require "jrpc"

local SERVER = [==[
local mcp = require "jrpc.mcp"
local srv = mcp.server{ name = "results", version = "1.0.0" }
local function tool(name, handler, output_schema)
  srv:tool{ name = name, description = name, handler = handler, output_schema = output_schema }
end
tool("record", function() return { sum = 3 } end)
tool("typed", function() return { sum = 3 } end,
  { type = "object", properties = { sum = { type = "integer" } }, required = { "sum" } })
tool("mistyped", function() return { sum = "3" } end,
  { type = "object", properties = { sum = { type = "integer" } }, required = { "sum" } })
tool("shaped", function() return { type = "circle", r = 2 } end)
tool("func", function() return print end)
tool("numbers", function() return { 1, 2 } end)
tool("sparse", function() return { values = { 1, 2 }, log = print } end)
tool("number", function() return 42 end)
srv:serve_stdio()
]==]

local FIX = "return a string, a content item (jrpc.mcp.text(...)), a list of content items, "
  .. "a table of JSON values (sent as structuredContent and as its JSON text), or a CallToolResult"

local function text_result(s, is_error)
  return { content = { { type = "text", text = s } }, isError = is_error }
end

local function call(name) return { name = name, arguments = jrpc.object() } end

for _, lua in ipairs(P.INTERPRETERS) do
  describe("MCP tool results through the SDK client, server under " .. lua, function()
    local steps, out
    setup(function()
      steps, out = P.probe(SERVER, lua, { call("record"), call("typed"), call("mistyped"), call("shaped"),
        call("func"), call("numbers"), call("sparse"), call("number") })
    end)

    it("sends a plain record as structuredContent and its JSON as text", function()
      assert.are.same({ structuredContent = { sum = 3 }, content = { { type = "text", text = '{"sum":3}' } } },
        assert(steps["call record"], out).result)
      assert.are.same({ structuredContent = { sum = 3 }, content = { { type = "text", text = '{"sum":3}' } } },
        steps["call typed"].result)
    end)

    it("checks a record against the outputSchema", function()
      assert.are.same({ step = "call mistyped", code = -32603,
        message = "MCP error -32603: Tool mistyped returned structuredContent "
        .. 'that does not fit its outputSchema: /sum: expected integer, got string' },
        steps["call mistyped"])
    end)

    it("takes a record whose type is not a content type for data", function()
      local result = steps["call shaped"].result
      assert.are.same({ type = "circle", r = 2 }, result.structuredContent)
      assert.are.same({ type = "circle", r = 2 }, jrpc.decode(result.content[1].text))
    end)

    it("sends a number as text", function()
      assert.are.same(text_result("42"), steps["call number"].result)
    end)

    it("answers a value that is no result with an isError result naming the mistake and the fix", function()
      assert.are.same(text_result("Tool func returned a function, which is not a tool result: " .. FIX, true),
        steps["call func"].result)
      assert.are.same(text_result("Tool numbers returned a list whose item 1 is a number, not a content item, "
        .. "which is not a tool result: " .. FIX, true), steps["call numbers"].result)
      assert.are.same(text_result("Tool sparse returned structured content that is not JSON (cannot encode "
        .. "a function), which is not a tool result: " .. FIX, true), steps["call sparse"].result)
    end)

    it("logs the same sentences on the server's stderr", function()
      assert.are.equal(table.concat({
        "jrpc: Tool func returned a function, which is not a tool result: " .. FIX,
        "jrpc: Tool numbers returned a list whose item 1 is a number, not a content item, which is not a tool "
          .. "result: " .. FIX,
        "jrpc: Tool sparse returned structured content that is not JSON (cannot encode a function), "
          .. "which is not a tool result: " .. FIX, "" }, "\n"), steps.stderr.text)
    end)
  end)
end
