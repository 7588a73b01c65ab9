-- The client under test for the official MCP conformance suite's client
-- scenarios: `conformance client --command "lua5.4 examples/mcp/conformance_client.lua"`
-- runs it with the mock server's URL as its last argument and the scenario
-- in MCP_CONFORMANCE_SCENARIO (see spec/mcp/conformance_client.sh). It acts
-- on the scenario with jrpc.mcp.client over its Streamable HTTP transport
-- (lua/jrpc/mcp/client_http.lua), in the era MCP_CONFORMANCE_PROTOCOL_VERSION
-- names, then exits (status 1 when a call failed).
dofile((debug.getinfo(1, "S").source:match("^@(.*)[/\\]") or ".") .. "/../paths.lua")
local jrpc = require "jrpc"
local mcp_client = require "jrpc.mcp.client"

local url = assert(arg[#arg], "usage: conformance_client.lua URL")
local scenario = os.getenv("MCP_CONFORMANCE_SCENARIO") or "tools_call"
local version = os.getenv("MCP_CONFORMANCE_PROTOCOL_VERSION") or "2025-11-25"
local context = jrpc.decode(os.getenv("MCP_CONFORMANCE_CONTEXT") or "{}") or {}
local loop = jrpc.uv.new(require "luv", { catch_sigpipe = true })
local failed = false

-- Accept every form, each field from its default, else a plain value of its type.
local function elicit(params)
  local schema = type(params) == "table" and params.requestedSchema or {}
  local content = jrpc.object()
  for name, prop in pairs(type(schema.properties) == "table" and schema.properties or {}) do
    local v = prop.default
    if v == nil and type(prop.enum) == "table" then v = prop.enum[1] end
    if v == nil then
      v = ({ string = "conformance", integer = 1, number = 1, boolean = true })[prop.type]
    end
    content[name] = v
  end
  return { action = "accept", content = content }
end

local function sample()
  return { role = "assistant", model = "conformance-model", content = { type = "text", text = "Paris" } }
end

local function check(what, result, err)
  if result == nil then
    failed = true
    io.stderr:write(what, ": ", tostring(err and err.message or err), "\n")
  end
  return result
end

local function each(list) return ipairs(list or {}) end

-- What each scenario asks the client to do.
local ACTIONS = {}

function ACTIONS.tools_call(client)
  check("tools/list", client:list_tools())
  check("add_numbers", client:call_tool("add_numbers", { a = 5, b = 3 }))
end

function ACTIONS.initialize(client)
  check("tools/list", client:list_tools())
end

ACTIONS["request-metadata"] = ACTIONS.initialize
ACTIONS["json-schema-ref-no-deref"] = ACTIONS.initialize

ACTIONS["sep-2322-client-request-state"] = function(client)
  check("tools/list", client:list_tools())
  for _, name in ipairs{ "test_mrtr_echo_state", "test_mrtr_no_state", "test_mrtr_unrelated",
    "test_mrtr_no_result_type" } do
    check(name, client:call_tool(name, {}))
  end
end

ACTIONS["http-standard-headers"] = function(client)
  local tools = check("tools/list", client:list_tools()) or {}
  if tools[1] then check("tools/call", client:call_tool(tools[1].name, {})) end
  local resources = check("resources/list", client:list_resources()) or {}
  if resources[1] then check("resources/read", client:read_resource(resources[1].uri)) end
  local prompts = check("prompts/list", client:list_prompts()) or {}
  if prompts[1] then check("prompts/get", client:get_prompt(prompts[1].name)) end
end

ACTIONS["http-custom-headers"] = function(client)
  check("tools/list", client:list_tools())
  for _, call in each(context.toolCalls) do check(call.name, client:call_tool(call.name, call.arguments)) end
end

ACTIONS["http-invalid-tool-headers"] = function(client)
  -- the transport has dropped the tools whose x-mcp-header marks are invalid
  for _, tool in each(check("tools/list", client:list_tools())) do
    local args = jrpc.object()
    for _, name in each(tool.inputSchema and tool.inputSchema.required) do args[name] = "us-west1" end
    check(tool.name, client:call_tool(tool.name, args))
  end
end

ACTIONS["elicitation-sep1034-client-defaults"] = function(client)
  local tools = check("tools/list", client:list_tools()) or {}
  for _, tool in ipairs(tools) do check(tool.name, client:call_tool(tool.name, {})) end
end

ACTIONS["sse-retry"] = ACTIONS["elicitation-sep1034-client-defaults"]

-- (not scored) the focal tool's inputSchema, echoed back as the client keeps it
ACTIONS["json-schema-2020-12-preservation"] = function(client)
  for _, tool in each(check("tools/list", client:list_tools())) do
    if tool.name == "json_schema_2020_12_tool" then
      check("json_schema_echo", client:call_tool("json_schema_echo", { schema = tool.inputSchema }))
    end
  end
end

-- auth/*: the OAuth flow, headless. The suite's authorization server
-- redirects back at once, so "opening" the URL is a GET whose Location is
-- the redirect (nobody needs to listen at the redirect URI).
local http_client = require "jrpc.uv.http_client"

local function authorize(auth_url)
  local res, err = http_client.request(loop, { url = auth_url })
  if not res then return nil, err end
  if res.status < 300 or res.status >= 400 then return nil, "authorization endpoint: HTTP " .. res.status end
  return res.headers.location
end

local auth
if scenario:match("^auth/") then
  auth = { authorize = authorize, redirect_uri = "http://127.0.0.1:3000/callback",
    client_name = "jrpc-conformance-client",
    -- the URL the suite expects of a client that has a metadata document
    client_metadata_url = "https://conformance-test.local/client-metadata.json",
    client_id = context.client_id, client_secret = context.client_secret }
end

-- The suite's protected server has one tool.
local function auth_action(client)
  check("tools/list", client:list_tools())
  check("test-tool", client:call_tool("test-tool", {}))
end

loop:run(function()
  local client = assert(mcp_client.connect(loop, { auth = auth,
    url = url,
    era = version == "2026-07-28" and "modern" or "legacy", version = version,
    client_info = { name = "jrpc-conformance-client", version = "1.0.0" },
    on_elicitation = elicit, on_sampling = sample, roots = {}, timeout = 20,
  }))
  local action = ACTIONS[scenario] or (auth and auth_action) or ACTIONS.initialize
  action(client)
  client:close()
end)
os.exit(failed and 1 or 0)
