-- The official TypeScript MCP clients as real processes against
-- examples/mcp/everything_server.lua, itself a real process under lua5.4
-- and luajit, over stdio and over Streamable HTTP:
--   * @modelcontextprotocol/sdk 1.32.2 (legacy era, 2025-11-25: initialize;
--     sampling and elicitation are requests of ours its handlers answer);
--   * @modelcontextprotocol/client 2.4.0 in 'auto' negotiation: it probes
--     server/discover and speaks 2026-07-28 (_meta on every request,
--     input_required answered by its elicitation handler, then retried).
-- Each node script (node/mcp_sdk1_client.js, node/mcp_client2.js) prints
-- one JSON line per step; every line is compared exactly.
if dofile("spec/once.lua")(pending, "MCP against the official SDK's processes, in Lua; the codec's C paths are the other specs'", { "asan" }) then return end
local S = dofile("spec/uv_support.lua")
local jrpc = require "jrpc"
local slurp = dofile("spec/files.lua").take

local SERVERS = { "lua5.4", "luajit" }

-- {======================================================================
-- What both eras answer alike
-- =======================================================================

local SERVER_INFO = { name = "jrpc-everything-server", version = "1.0.0" }
local INSTRUCTIONS = "Fixtures for MCP conformance testing."
local TOOLS = { "test_simple_text", "test_image_content", "test_audio_content", "test_embedded_resource",
  "test_multiple_content_types", "test_tool_with_logging", "test_logging_tool", "test_tool_with_progress",
  "test_error_handling", "test_missing_capability", "test_streaming_elicitation", "test_echo",
  "test_custom_headers", "json_schema_2020_12_tool", "test_sampling", "test_elicitation", "test_elicitation_sep1034_defaults", "test_elicitation_sep1330_enums",
  "test_input_required_result_elicitation", "test_input_required_result_sampling",
  "test_input_required_result_list_roots", "test_input_required_result_request_state",
  "test_input_required_result_multiple_inputs", "test_input_required_result_multi_round",
  "test_input_required_result_tampered_state", "test_input_required_result_capabilities",
  "greet", "slow_compute", "failing_job", "protocol_error_job", "confirm_delete", "multi_input",
  "test_tool_with_task", "test_trigger_tool_change", "test_trigger_prompt_change", "test_trigger_resource_update" }
-- every kind's changes are notified, and any resource may be subscribed to
local CAPABILITIES = { logging = {}, completions = {}, prompts = { listChanged = true },
  resources = { subscribe = true, listChanged = true }, tools = { listChanged = true } }
local PROMPTS = { "test_input_required_result_prompt", "test_simple_prompt", "test_prompt_with_arguments",
  "test_prompt_with_embedded_resource", "test_prompt_with_image" }
local RESOURCES = { "test://static-text", "test://static-binary", "test://watched-resource" }
local TEMPLATES = { "test://template/{id}/data" }
-- three notifications, each with its values (the fixture paces them)
local PROGRESS = { { progress = 0, total = 100, message = "step 1 of 3" },
  { progress = 50, total = 100, message = "step 2 of 3" }, { progress = 100, total = 100, message = "step 3 of 3" } }
local PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="

local function text(s) return { content = { { type = "text", text = s } } } end
-- A copy of `t` with `extra`'s members: the tables above are shared.
local function with(t, extra)
  local out = {}
  for k, v in pairs(t) do out[k] = v end
  for k, v in pairs(extra) do out[k] = v end
  return out
end

local PROGRESS_RESULT = text("Progress test completed")
local ERROR_RESULT = with(text("Tool test_error_handling failed: internal error"), { isError = true })
local ECHO_RESULT = with(text("hi"), { structuredContent = { echo = "hi" } })
local STATIC_TEXT = { uri = "test://static-text", mimeType = "text/plain",
  text = "This is the content of the static text resource." }
local TEMPLATE_TEXT = { uri = "test://template/123/data", mimeType = "application/json",
  text = '{"id":"123","templateTest":true,"data":"Data for ID: 123"}' }
local PROMPT_RESULT = { messages = { { role = "user", content = { type = "text",
  text = "Prompt with arguments: arg1='testValue1', arg2='testValue2'" } } } }
local COMPLETION = { completion = { values = { "test", "testing", "tested" } } }

-- }======================================================================

-- {======================================================================
-- The transcripts
-- =======================================================================

local ELICITATION_SCHEMA = { type = "object", required = { "username", "email" }, properties = {
  username = { type = "string", description = "User's response" },
  email = { type = "string", description = "User's email address" } } }

-- @modelcontextprotocol/sdk 1.32.2: legacy results carry no _meta
local SDK1 = {
  { step = "initialize", serverVersion = SERVER_INFO, instructions = INSTRUCTIONS,
    capabilities = CAPABILITIES },
  { step = "ping", result = {} },
  { step = "tools/list", names = TOOLS },
  { step = "tools/call progress", result = PROGRESS_RESULT, progress = PROGRESS },
  { step = "tools/call isError", result = ERROR_RESULT },
  { step = "tools/call structured", result = ECHO_RESULT },
  { step = "tools/call unknown", code = -32602 },
  { step = "logging", result = text("Tool with logging executed successfully"),
    logs = { { level = "info", data = "Tool execution started" }, { level = "info", data = "Tool processing data" },
      { level = "info", data = "Tool execution completed" } } },
  { step = "resources/list", uris = RESOURCES },
  { step = "resources/templates/list", templates = TEMPLATES },
  { step = "resources/read", result = { contents = { STATIC_TEXT } } },
  { step = "resources/read template", result = { contents = { TEMPLATE_TEXT } } },
  { step = "resources/read missing", code = -32002, data = { uri = "test://nonexistent" } },
  { step = "resources/subscribe", result = {} },
  { step = "prompts/list", names = PROMPTS },
  { step = "prompts/get", result = PROMPT_RESULT },
  { step = "completion/complete", result = COMPLETION },
  { step = "sampling", result = text("LLM response: Paris"), asked = { { method = "sampling/createMessage",
    params = { maxTokens = 100, messages = { { role = "user", content = { type = "text", text = "Capital of France?" } } } } } } },
  -- the answer the server quotes is JSON it encoded from a Lua table, whose
  -- key order differs between 5.4 and LuaJIT: `normalize` decodes it
  { step = "elicitation", result = text("User response: action=accept, content="),
    answered = { username = "alice", email = "alice@example.com" },
    asked = { { method = "elicitation/create", params = { message = "Who are you?", requestedSchema = ELICITATION_SCHEMA } } } },
}

-- over HTTP the script then ends the session with DELETE and POSTs on it
local SDK1_HTTP = { (table.unpack or unpack)(SDK1) }
SDK1_HTTP[#SDK1_HTTP + 1] = { step = "DELETE session", sessionId = true, forgotten = 404 }

-- @modelcontextprotocol/client 2.4.0: every modern result names the server
-- in _meta (the client strips resultType); lists and reads carry caching
local META = { ["io.modelcontextprotocol/serverInfo"] = SERVER_INFO }
local function modern(result) return with(result, { _meta = META }) end
local function cached(result) return with(modern(result), { ttlMs = 0, cacheScope = "private" }) end

local CLIENT2 = {
  { step = "server/discover", era = "modern", version = "2026-07-28", supportedVersions = { "2026-07-28" },
    serverVersion = SERVER_INFO, instructions = INSTRUCTIONS,
    capabilities = with(CAPABILITIES, { extensions = { ["io.modelcontextprotocol/tasks"] = {} } }) },
  { step = "tools/list", names = TOOLS },
  { step = "tools/call progress", result = modern(PROGRESS_RESULT), progress = PROGRESS },
  { step = "tools/call isError", result = modern(ERROR_RESULT) },
  { step = "tools/call structured", result = modern(ECHO_RESULT) },
  { step = "tools/call missing capability", code = -32021, data = { requiredCapabilities = { sampling = {} } } },
  { step = "tools/call unknown", code = -32602 },
  { step = "resources/list", uris = RESOURCES },
  { step = "resources/templates/list", templates = TEMPLATES },
  { step = "resources/read", result = cached{ contents = { STATIC_TEXT } } },
  { step = "resources/read binary", result = cached{ contents = { { uri = "test://static-binary",
    mimeType = "image/png", blob = PNG } } } },
  { step = "resources/read template", result = cached{ contents = { TEMPLATE_TEXT } } },
  { step = "resources/read missing", code = -32602, data = { uri = "test://nonexistent" } },
  { step = "prompts/list", names = PROMPTS },
  { step = "prompts/get", result = modern(PROMPT_RESULT) },
  { step = "completion/complete", result = modern(COMPLETION) },
  { step = "input_required", result = modern(text("Hello, alice!")), asked = { "What is your name?" } },
  -- two rounds: the second is asked only if our sealed requestState came back intact
  { step = "input_required multi_round", result = modern(text("Both rounds done.")),
    asked = { "What is your name?", "What is your favourite colour?" } },
  { step = "input_required prompt", asked = { "What context should the prompt use?" },
    result = modern{ messages = { { role = "user", content = { type = "text", text = "Use this context: interop" } } } } },
}

-- }======================================================================

-- {======================================================================
-- Running the clients
-- =======================================================================

-- The elicitation step's result quotes the answer as JSON text whose key
-- order is the server's Lua table order (5.4 and LuaJIT differ): decode it
-- into `answered`, leaving the text before it.
local function normalize(line)
  local item = line.step == "elicitation" and line.result and line.result.content and line.result.content[1]
  local json = item and item.text and item.text:match("content=(.*)$")
  if json then
    line.answered = jrpc.decode(json)
    item.text = item.text:sub(1, #item.text - #json)
  end
  return line
end

-- Run a node client script to its end, without blocking the loop (the
-- HTTP server, when there is one, is another process anyway). `timeout`
-- ends a client that hangs before the watchdog stops the loop, so no
-- node process outlives the test.
local function run_client(script, args)
  local errfile = os.tmpname()
  local code, out = S.shell_wait(("timeout -k 2 15 node node/%s %s 2>%s"):format(script, args, errfile))
  local err = slurp(errfile)
  local lines = {}
  S.split_lines(out, lines)
  for i, line in ipairs(lines) do lines[i] = normalize(jrpc.decode(line) or { unreadable = line }) end
  return code, lines, err
end

-- The everything server on Streamable HTTP under `lua`: its URL (it
-- prints the port it got on stderr) and what it wrote there so far.
local function http_server(lua)
  local log = { text = "" }
  assert(S.spawn{ cmd = lua, args = { "examples/mcp/everything_server.lua", "--http", "127.0.0.1:0" },
    stderr = function(chunk) log.text = log.text .. chunk end })
  assert(S.wait_until(function() return log.text:find("\n") ~= nil end, 5), "no listening line: " .. log.text)
  local url = log.text:match("^listening on (http://127%.0%.0%.1:%d+/mcp)\n")
  assert(url, log.text)
  return url, log
end

local function check(want, code, lines, err, server_log)
  local why = ("client stderr:\n%s\nserver stderr:\n%s"):format(err, server_log or "(piped by the client)")
  assert.are.equal(0, code, why)
  for i, step in ipairs(want) do assert.are.same(step, lines[i], why) end
  assert.are.equal(#want, #lines, why)
end

-- One client script against one server (interpreter, transport).
local function prove(script, want, lua, transport)
  S.run(function()
    if transport == "stdio" then
      check(want, run_client(script, "stdio " .. lua))
    else
      local url, log = http_server(lua)
      local code, lines, err = run_client(script, "http " .. url)
      check(want, code, lines, err, log.text)
    end
  end, 20)
end

-- }======================================================================

describe("MCP interop with the official TypeScript clients as real processes", function()
  after_each(S.cleanup)  -- kills the HTTP server

  for _, lua in ipairs(SERVERS) do
    for _, transport in ipairs{ "stdio", "http" } do
      it(("@modelcontextprotocol/sdk 1.32.2 (2025-11-25) over %s, server under %s"):format(transport, lua), function()
        prove("mcp_sdk1_client.js", transport == "http" and SDK1_HTTP or SDK1, lua, transport)
      end)
      it(("@modelcontextprotocol/client 2.4.0 (2026-07-28) over %s, server under %s"):format(transport, lua), function()
        prove("mcp_client2.js", CLIENT2, lua, transport)
      end)
    end
  end
end)
