-- Tool arguments that do not fit the input schema, as the official SDK
-- client (1.32.2, a real process) hears of them from a server under
-- lua5.4 and luajit, by the protocol version initialize negotiated: from
-- 2025-11-25 (SEP-1303) an isError result the model can read; before, the
-- protocol error -32602. An unknown tool is -32602 in every version.
local P = dofile("spec/mcp_probe_support.lua")
local jrpc = require "jrpc"

local SERVER = [==[
local mcp = require "jrpc.mcp"
local srv = mcp.server{ name = "args", version = "1.0.0" }
srv:tool{ name = "add", description = "Adds a and b",
  input_schema = { type = "object", properties = { a = { type = "number" }, b = { type = "number" } },
    required = { "a", "b" } },
  handler = function(args) return tostring(args.a + args.b) end }
srv:serve_stdio()
]==]

local CALLS = { { name = "add", arguments = { a = 1, b = 2 } }, { name = "add", arguments = { a = 1 } },
  { name = "nope", arguments = jrpc.object() } }

local function text(s, is_error) return { content = { { type = "text", text = s } }, isError = is_error } end

-- The calls' lines, in order, without the step names.
local function calls(lua, version)
  local _, out, lines = P.probe(SERVER, lua, CALLS, { version = version })
  local got = {}
  for _, line in ipairs(lines) do
    if line.step:match("^call ") then
      line.step = nil
      got[#got + 1] = line
    end
  end
  return got, out
end

local UNKNOWN = { code = -32602, message = "MCP error -32602: Invalid params: unknown tool nope" }

for _, lua in ipairs(P.INTERPRETERS) do
  describe("MCP argument errors through the SDK client, server under " .. lua, function()
    it("are an isError result the model can read from 2025-11-25 on", function()
      local got, out = calls(lua)
      assert.are.same({ { result = text("3") },
        { result = text('Invalid arguments for tool add: missing required property "b"', true) }, UNKNOWN }, got, out)
    end)

    it("are -32602 for 2025-06-18", function()
      local got, out = calls(lua, "2025-06-18")
      assert.are.same({ { result = text("3") },
        { code = -32602, message = 'MCP error -32602: Invalid params: missing required property "b"' }, UNKNOWN }, got, out)
    end)
  end)
end
