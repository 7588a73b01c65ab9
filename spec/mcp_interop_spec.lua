-- The official TypeScript MCP clients against examples/mcp/everything_server.lua
-- as real processes over stdio: @modelcontextprotocol/sdk 1.32.2 (legacy era,
-- initialize) and @modelcontextprotocol/client 2.4.0 (2026-07-28: it probes
-- server/discover and sends _meta on every request). Each node script prints
-- what it got as one JSON line; the results are compared exactly.
local jrpc = require "jrpc"

local lua = rawget(_G, "jit") and "luajit" or "lua5.4"

local function run(script)
  local p = assert(io.popen(("node node/%s %s 2>/dev/null"):format(script, lua)))
  local out = p:read("a")
  local ok = p:close()
  assert(ok, script .. " failed; output: " .. out)
  return assert(jrpc.decode(out))
end

local SERVER_INFO = { name = "jrpc-everything-server", version = "1.0.0" }
local META = { ["io.modelcontextprotocol/serverInfo"] = SERVER_INFO }
local TOOLS = { "test_simple_text", "test_image_content", "test_audio_content", "test_embedded_resource",
  "test_multiple_content_types", "test_tool_with_logging", "test_logging_tool", "test_tool_with_progress",
  "test_error_handling", "test_missing_capability", "test_streaming_elicitation", "test_echo",
  "test_sampling", "test_elicitation", "test_elicitation_sep1034_defaults", "test_elicitation_sep1330_enums",
  "test_input_required_result_elicitation", "test_input_required_result_sampling",
  "test_input_required_result_list_roots", "test_input_required_result_request_state",
  "test_input_required_result_multiple_inputs", "test_input_required_result_multi_round",
  "test_input_required_result_tampered_state", "test_input_required_result_capabilities",
  "test_trigger_tool_change", "test_trigger_prompt_change", "test_trigger_resource_update" }
-- every kind's changes are notified, and any resource may be subscribed to
local CAPABILITIES = { logging = {}, completions = {}, prompts = { listChanged = true },
  resources = { subscribe = true, listChanged = true }, tools = { listChanged = true } }
local PROGRESS = { { progress = 0, total = 100, message = "step 1 of 3" },
  { progress = 50, total = 100, message = "step 2 of 3" }, { progress = 100, total = 100, message = "step 3 of 3" } }
local PROMPT_TEXT = "Prompt with arguments: arg1='testValue1', arg2='testValue2'"
local STATIC_TEXT = { uri = "test://static-text", mimeType = "text/plain",
  text = "This is the content of the static text resource." }

describe("MCP interop, everything_server under " .. lua, function()
  it("serves @modelcontextprotocol/sdk 1.32.2 in the legacy era", function()
    local r = run("mcp_sdk1_client.js")
    assert.same(SERVER_INFO, r.serverVersion)
    assert.same(CAPABILITIES, r.capabilities)
    assert.equal("Fixtures for MCP conformance testing.", r.instructions)
    assert.same({}, r.ping)
    assert.same(TOOLS, r.toolNames)
    assert.same({ content = { { type = "text", text = "This is a simple text response for testing." } } }, r.simple)
    assert.same(PROGRESS, r.progress)
    assert.same({ content = { { type = "text", text = "Tool test_error_handling failed: internal error" } },
      isError = true }, r.error)
    assert.same({ content = { { type = "text", text = "hi" } }, structuredContent = { echo = "hi" } }, r.echo)
    assert.same({ { level = "info", data = "Tool execution started" }, { level = "info", data = "Tool processing data" },
      { level = "info", data = "Tool execution completed" } }, r.logs)
    assert.same(-32602, r.unknownTool.code)
    assert.same({ "test://static-text", "test://static-binary", "test://watched-resource" }, r.resources)
    assert.same({ "test://template/{id}/data" }, r.templates)
    assert.same({ contents = { STATIC_TEXT } }, r.text)
    assert.same({ contents = { { uri = "test://template/123/data", mimeType = "application/json",
      text = '{"id":"123","templateTest":true,"data":"Data for ID: 123"}' } } }, r.template)
    assert.same({ code = -32002 }, r.missing)
    assert.same({}, r.subscribe)
    assert.same({ messages = { { role = "user", content = { type = "text", text = PROMPT_TEXT } } } }, r.prompt)
    assert.same({ completion = { values = { "test", "testing", "tested" } } }, r.completion)
  end)

  it("serves @modelcontextprotocol/client 2.4.0 in the 2026-07-28 era", function()
    local r = run("mcp_client2.js")
    assert.equal("modern", r.era)
    assert.equal("2026-07-28", r.version)
    assert.same(SERVER_INFO, r.serverVersion)
    assert.same(CAPABILITIES, r.capabilities)
    assert.same(TOOLS, r.toolNames)
    assert.same({ _meta = META, content = { { type = "text", text = "This is a simple text response for testing." } } },
      r.simple)
    assert.same(PROGRESS, r.progress)
    assert.same({ _meta = META, content = { { type = "text", text = "Tool test_error_handling failed: internal error" } },
      isError = true }, r.error)
    assert.same({ code = -32021, data = { requiredCapabilities = { sampling = {} } } }, r.missingCapability)
    assert.same({ code = -32602 }, r.unknownTool)
    assert.same({ _meta = META, ttlMs = 0, cacheScope = "private", contents = { STATIC_TEXT } }, r.text)
    assert.equal("image/png", r.binary.contents[1].mimeType)
    assert.same({ code = -32602, data = { uri = "test://nonexistent" } }, r.missing)
    assert.same({ "test_input_required_result_prompt", "test_simple_prompt", "test_prompt_with_arguments", "test_prompt_with_embedded_resource",
      "test_prompt_with_image" }, r.prompts)
    assert.same({ _meta = META, messages = { { role = "user", content = { type = "text", text = PROMPT_TEXT } } } },
      r.prompt)
    assert.same({ _meta = META, completion = { values = { "test", "testing", "tested" } } }, r.completion)
  end)
end)
