-- The fixtures the official MCP conformance suite expects of a server
-- ("everything server"), MRTR and task tools included, on stdin/stdout for
-- clients of both eras, or on Streamable HTTP. Run from the repository root:
--   lua5.4 examples/mcp/everything_server.lua   (or luajit)
--   lua5.4 examples/mcp/everything_server.lua --http 127.0.0.1:0
-- As one worker of several behind a balancer (examples/deploy/workers.lua
-- starts them so): `--worker N` (its index: legacy session ids start
-- `wN-`, and with JRPC_MCP_LOG_CALLS=1 each tools/call is logged to stderr
-- as `worker N: tools/call NAME`), `--state-key-file FILE` (the requestState
-- HMAC key every worker shares), `--task-store-redis HOST:PORT` (the Redis
-- every worker keeps its tasks in; `--task-lease-ms N`: how long a task
-- outlives its worker's last sign of life, see docs/mcp.md),
-- `--events-redis HOST:PORT` (the Redis whose pub/sub carries each
-- worker's change notifications to every worker's listen streams),
-- `--allowed-host HOST` (repeatable: the Host
-- values clients use, the balancer's), `--limit NAME=VALUE` (repeatable: an
-- HTTP limit of jrpc.uv.http, e.g. `--limit header_timeout=2`). SIGTERM
-- stops it gracefully.
-- On luv (lua-luv) when it is installed, so test_tool_with_progress can
-- pace its notifications with loop:sleep; else on the blocking stdio.
dofile((debug.getinfo(1, "S").source:match("^@(.*)[/\\]") or ".") .. "/../paths.lua")
local jrpc = require "jrpc"
local mcp = require "jrpc.mcp"

local has_luv, luv = pcall(require, "luv")
local loop = has_luv and jrpc.uv.new(luv, { catch_sigpipe = true }) or nil

-- A 1x1 PNG and a tiny WAV (44-byte header, no samples), base64.
local PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
local WAV = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA="

-- The command line: `--http HOST:PORT` and the worker options above.
local function parse_args(argv)
  local o, i = {}, 1
  while argv[i] do
    local flag, value = argv[i], argv[i + 1]
    if flag == "--http" then o.http = value
    elseif flag == "--worker" then o.worker = tonumber(value)
    elseif flag == "--state-key-file" then o.key_file = value
    elseif flag == "--task-store-redis" then o.redis = value
    elseif flag == "--task-lease-ms" then o.lease_ms = tonumber(value)
    elseif flag == "--events-redis" then o.events_redis = value
    elseif flag == "--allowed-host" then
      o.allowed_hosts = o.allowed_hosts or {}
      o.allowed_hosts[#o.allowed_hosts + 1] = value
    elseif flag == "--limit" then
      local name, n = (value or ""):match("^([%w_]+)=([%d.]+)$")
      if not name then error("everything_server: --limit needs NAME=NUMBER", 0) end
      o.limits = o.limits or {}
      o.limits[name] = tonumber(n)
    else error("everything_server: unknown option " .. flag, 0) end
    if value == nil then error("everything_server: " .. flag .. " needs a value", 0) end
    i = i + 2
  end
  return o
end
local opt = parse_args(arg)

-- The shared key, read whole (raw bytes; the launcher writes 32 random ones).
local function read_key(path)
  if not path then return nil end
  local f = assert(io.open(path, "rb"))
  local key = f:read("a")
  f:close()
  return key
end

local function host_port(flag, address)
  local host, port = address:match("^(.*):(%d+)$")
  if not host then error("everything_server: " .. flag .. " needs HOST:PORT", 0) end
  return host, tonumber(port)
end

-- `--task-store-redis HOST:PORT`: tasks in that Redis, shared by every
-- worker given the same (default: in this process's memory).
local function task_store(address)
  if not address then return nil end
  local host, port = host_port("--task-store-redis", address)
  return require("jrpc.mcp.task_store_redis").new{ host = host, port = port }
end

-- `--events-redis HOST:PORT`: change notifications to every worker's
-- listen streams (default: to this process's only).
local function events(address)
  if not address then return nil end
  local host, port = host_port("--events-redis", address)
  return require("jrpc.mcp.events_redis").new{ host = host, port = port }
end

local server = mcp.server{ name = "jrpc-everything-server", version = "1.0.0",
  instructions = "Fixtures for MCP conformance testing.", state_key = read_key(opt.key_file),
  tasks = { poll_interval_ms = 200, store = task_store(opt.redis), lease_ms = opt.lease_ms },
  events = events(opt.events_redis) }

-- With JRPC_MCP_LOG_CALLS=1, which worker ran which tool: the deployment
-- test counts the workers one MRTR scenario's rounds reached.
local log_calls = os.getenv("JRPC_MCP_LOG_CALLS") == "1"
local function logged(name, handler)
  if not log_calls then return handler end
  return function(...)
    io.stderr:write(("worker %s: tools/call %s\n"):format(opt.worker or "-", name))
    io.stderr:flush()
    return handler(...)
  end
end

local NO_ARGS = { type = "object", properties = jrpc.object() }

local function tool(name, description, handler, extra)
  local def = { name = name, description = description, input_schema = NO_ARGS, handler = logged(name, handler) }
  for k, v in pairs(extra or {}) do def[k] = v end
  server:tool(def)
end

tool("test_simple_text", "Returns a simple text response",
  function() return "This is a simple text response for testing." end)
tool("test_image_content", "Returns an image", function() return mcp.image(PNG, "image/png") end)
tool("test_audio_content", "Returns audio", function() return mcp.audio(WAV, "audio/wav") end)
tool("test_embedded_resource", "Returns an embedded resource", function()
  return mcp.embedded{ uri = "test://embedded-resource", mimeType = "text/plain",
    text = "This is an embedded resource content." }
end)
tool("test_multiple_content_types", "Returns text, an image and a resource", function()
  return { mcp.text("Multiple content types test:"), mcp.image(PNG, "image/png"),
    mcp.embedded{ uri = "test://mixed-content-resource", mimeType = "application/json",
      text = '{"test":"data","value":123}' } }
end)
tool("test_tool_with_logging", "Logs three messages while it runs", function(_, ctx)
  ctx:log("info", "Tool execution started")
  ctx:log("info", "Tool processing data")
  ctx:log("info", "Tool execution completed")
  return "Tool with logging executed successfully"
end)
tool("test_logging_tool", "Logs only when the request asks for a log level", function(_, ctx)
  ctx:log("info", "test_logging_tool ran")
  return "logged (if asked)"
end)
tool("test_tool_with_progress", "Reports progress 0, 50, 100 of 100", function(_, ctx)
  for i, value in ipairs{ 0, 50, 100 } do
    ctx:progress(value, 100, ("step %d of 3"):format(i))
    -- also after the last one: some clients (the TypeScript SDK 1.x) handle
    -- notifications a tick later than responses, and would drop a progress
    -- notification that arrives in the same read as the result
    if loop then loop:sleep(0.05) end
    -- a client that cancelled (HTTP: closed the stream) hears nothing more;
    -- the line on stderr lets a test see the server noticed
    if ctx:cancelled() then
      io.stderr:write(("test_tool_with_progress: cancelled after step %d\n"):format(i))
      io.stderr:flush()
      return "cancelled"
    end
  end
  return "Progress test completed"
end)
tool("test_error_handling", "Always fails (an isError result)",
  function() error("This tool intentionally returns an error for testing") end)
tool("test_missing_capability", "Needs the client's sampling capability",
  function() return "the client can sample" end, { requires = { sampling = jrpc.object() } })
-- server-stateless checks that a request's stream never carries a request
-- of ours: this one answers plainly (the modern era asks with MRTR instead)
tool("test_streaming_elicitation", "Would ask the user; answers without a request on its stream",
  function() return "no elicitation was streamed" end)
tool("test_echo", "Echoes its message (structured content too)", function(args)
  return { content = { mcp.text(args.message) }, structuredContent = { echo = args.message } }
end, { input_schema = { type = "object", properties = { message = { type = "string" } }, required = { "message" } },
  output_schema = { type = "object", properties = { echo = { type = "string" } }, required = { "echo" } } })
-- SEP-2243: its region is mirrored in the Mcp-Param-Region header, which
-- the HTTP transport checks against the body (http-custom-header-server-validation)
tool("test_custom_headers", "Names its region (mirrored in the Mcp-Param-Region header)",
  function(args) return "region " .. args.region end,
  { input_schema = { type = "object", required = { "region" }, properties = {
    region = { type = "string", ["x-mcp-header"] = "Region" },
    priority = { type = "integer", ["x-mcp-header"] = "Priority" } } } })
-- SEP-1613 and SEP-2106 (json-schema-2020-12): a 2020-12 schema given as
-- JSON text goes out as written ($schema, $defs with $anchor, allOf/anyOf,
-- if/then/else, additionalProperties), and the server checks calls with it
tool("json_schema_2020_12_tool", "Takes a contact: a phone or an email, as contactMethod says",
  function(args) return "contact " .. jrpc.encode(args) end,
  { input_schema = [[{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "$defs": {
    "address": {
      "$anchor": "addressDef",
      "type": "object",
      "properties": { "street": { "type": "string" }, "city": { "type": "string" } }
    }
  },
  "properties": {
    "name": { "type": "string" },
    "address": { "$ref": "#/$defs/address" },
    "contactMethod": { "type": "string", "enum": ["phone", "email"] },
    "phone": { "type": "string" },
    "email": { "type": "string" }
  },
  "allOf": [ { "anyOf": [ { "required": ["phone"] }, { "required": ["email"] } ] } ],
  "if": { "properties": { "contactMethod": { "const": "phone" } }, "required": ["contactMethod"] },
  "then": { "required": ["phone"] },
  "else": { "required": ["email"] },
  "additionalProperties": false
}]] })

-- {======================================================================
-- Legacy (2025-11-25) fixtures that ask the client in the middle of a
-- call: the request goes out on the call's own stream (ctx:request)
-- =======================================================================

local function ask(ctx, method, params)
  local result, err = ctx:request(method, params)
  if not result then error(err and err.message or "the client did not answer", 0) end
  return result
end
local function elicited(result)
  return ("Elicitation completed: action=%s, content=%s"):format(tostring(result.action),
    jrpc.encode(result.content or jrpc.object()))
end
local STRING_ARG = function(name)
  return { input_schema = { type = "object", properties = { [name] = { type = "string" } }, required = { name } } }
end

tool("test_sampling", "Asks the client's model (sampling/createMessage)", function(args, ctx)
  local result = ask(ctx, "sampling/createMessage", { maxTokens = 100,
    messages = { { role = "user", content = { type = "text", text = args.prompt } } } })
  local content = type(result.content) == "table" and result.content.text or jrpc.encode(result.content)
  return "LLM response: " .. tostring(content)
end, STRING_ARG("prompt"))
tool("test_elicitation", "Asks the user (elicitation/create)", function(args, ctx)
  local result = ask(ctx, "elicitation/create", { message = args.message, requestedSchema = {
    type = "object", required = { "username", "email" }, properties = {
      username = { type = "string", description = "User's response" },
      email = { type = "string", description = "User's email address" } } } })
  return ("User response: action=%s, content=%s"):format(tostring(result.action),
    jrpc.encode(result.content or jrpc.object()))
end, STRING_ARG("message"))
tool("test_elicitation_sep1034_defaults", "Asks with defaults for every primitive type", function(_, ctx)
  return elicited(ask(ctx, "elicitation/create", { message = "Please review and update the form fields with defaults",
    requestedSchema = { type = "object", properties = {
      name = { type = "string", description = "User name", default = "John Doe" },
      age = { type = "integer", description = "User age", default = 30 },
      score = { type = "number", description = "User score", default = 95.5 },
      status = { type = "string", description = "User status", enum = { "active", "inactive", "pending" },
        default = "active" },
      verified = { type = "boolean", description = "Verification status", default = true } } } }))
end)
tool("test_elicitation_sep1330_enums", "Asks with the five enum schema forms", function(_, ctx)
  local function options(prefix, titles)
    local out = {}
    for i, t in ipairs(titles) do out[i] = { const = prefix .. i, title = t } end
    return out
  end
  return elicited(ask(ctx, "elicitation/create", { message = "Please select options from the enum fields",
    requestedSchema = { type = "object", properties = {
      untitledSingle = { type = "string", description = "Select one option",
        enum = { "option1", "option2", "option3" } },
      titledSingle = { type = "string", description = "Select one option with titles",
        oneOf = options("value", { "First Option", "Second Option", "Third Option" }) },
      legacyEnum = { type = "string", description = "Select one option (legacy)",
        enum = { "opt1", "opt2", "opt3" }, enumNames = { "Option One", "Option Two", "Option Three" } },
      untitledMulti = { type = "array", description = "Select multiple options",
        items = { type = "string", enum = { "option1", "option2", "option3" } } },
      titledMulti = { type = "array", description = "Select multiple options with titles",
        items = { anyOf = options("value", { "First Choice", "Second Choice", "Third Choice" }) } } } } }))
end)

-- }======================================================================

-- {======================================================================
-- MRTR fixtures: each asks with input_required until the retry carries
-- the answers (and, where it keeps rounds, the sealed requestState)
-- =======================================================================

local OBJ = jrpc.object
local function elicit(message, props, required)
  return { method = "elicitation/create", params = { mode = "form", message = message,
    requestedSchema = { type = "object", properties = props, required = required } } }
end
local function sample(text)
  return { method = "sampling/createMessage", params = { maxTokens = 100,
    messages = { { role = "user", content = { type = "text", text = text } } } } }
end
local ROOTS = { method = "roots/list", params = OBJ() }

-- The accepted content of elicitation answer `key`, or nil.
local function accepted(ctx, key)
  local r = ctx.input_responses and ctx.input_responses[key]
  if type(r) == "table" and r.action == "accept" and type(r.content) == "table" then return r.content end
  return nil
end
local function answered(ctx, key)
  return ctx.input_responses ~= nil and type(ctx.input_responses[key]) == "table"
end

tool("test_input_required_result_elicitation", "Asks the user's name (MRTR)", function(_, ctx)
  local c = accepted(ctx, "user_name")
  if c and type(c.name) == "string" then return ("Hello, %s!"):format(c.name) end
  return mcp.input_required{ user_name = elicit("What is your name?",
    { name = { type = "string" } }, { "name" }) }
end)
tool("test_input_required_result_sampling", "Asks the client's model (MRTR)", function(_, ctx)
  if answered(ctx, "capital_question") then return "The model answered." end
  return mcp.input_required{ capital_question = sample("What is the capital of France?") }
end)
tool("test_input_required_result_list_roots", "Asks the client's roots (MRTR)", function(_, ctx)
  if answered(ctx, "client_roots") then return "Got the roots." end
  return mcp.input_required{ client_roots = ROOTS }
end)
tool("test_input_required_result_request_state", "Asks to confirm, keeping state (MRTR)", function(_, ctx)
  if ctx.request_state == "confirm" and accepted(ctx, "confirm") then return "state-ok" end
  return mcp.input_required({ confirm = elicit("Please confirm", { ok = { type = "boolean" } }, { "ok" }) },
    "confirm")
end)
tool("test_input_required_result_multiple_inputs", "Asks three things at once (MRTR)", function(_, ctx)
  if ctx.request_state == "multi" and answered(ctx, "user_name") and answered(ctx, "greeting")
    and answered(ctx, "client_roots") then
    return "All three answered."
  end
  return mcp.input_required({ user_name = elicit("What is your name?", { name = { type = "string" } }, { "name" }),
    greeting = sample("Say hello"), client_roots = ROOTS }, "multi")
end)
tool("test_input_required_result_multi_round", "Two rounds of questions (MRTR)", function(_, ctx)
  if ctx.request_state == "round2" and accepted(ctx, "step2") then return "Both rounds done." end
  if ctx.request_state == "round1" and accepted(ctx, "step1") then
    return mcp.input_required({ step2 = elicit("What is your favourite colour?",
      { colour = { type = "string" } }, { "colour" }) }, "round2")
  end
  return mcp.input_required({ step1 = elicit("What is your name?", { name = { type = "string" } }, { "name" }) },
    "round1")
end)
tool("test_input_required_result_tampered_state", "Keeps a sealed state (MRTR)", function(_, ctx)
  if ctx.request_state == "sealed" and accepted(ctx, "confirm") then return "state intact" end
  return mcp.input_required({ confirm = elicit("Please confirm", { ok = { type = "boolean" } }, { "ok" }) },
    "sealed")
end)
tool("test_input_required_result_capabilities", "Asks only what the client can answer (MRTR)", function(_, ctx)
  local caps, requests = ctx.client.capabilities or {}, {}
  if caps.elicitation then
    requests.user_name = elicit("What is your name?", { name = { type = "string" } }, { "name" })
  end
  if caps.sampling then requests.capital_question = sample("What is the capital of France?") end
  if caps.roots then requests.client_roots = ROOTS end
  if next(requests) == nil or ctx.input_responses then return "Nothing more to ask." end
  return mcp.input_required(requests)
end)

server:prompt{ name = "test_input_required_result_prompt", description = "A prompt that asks for context (MRTR)",
  handler = function(_, ctx)
    local c = accepted(ctx, "user_context")
    if c and type(c.context) == "string" then
      return ("Use this context: %s"):format(c.context)
    end
    return mcp.input_required{ user_context = elicit("What context should the prompt use?",
      { context = { type = "string" } }, { "context" }) }
  end }

-- }======================================================================

-- {======================================================================
-- Task fixtures (the tasks extension): tools a call may (optional) or
-- must (required) run as a task, for a client that declares the extension
-- =======================================================================

-- Wait `seconds` in steps, stopping early once the task is cancelled.
local function work(ctx, seconds)
  for _ = 1, math.floor(seconds * 10 + 0.5) do
    if ctx:cancelled() then return false end
    if loop then loop:sleep(0.1) end
  end
  return true
end

tool("greet", "Greets by name (never a task)", function(args) return ("Hello, %s!"):format(args.name) end,
  STRING_ARG("name"))
tool("slow_compute", "Works `seconds` seconds, then answers (a task when the client can)", function(args, ctx)
  local seconds = tonumber(args.seconds) or 1
  if not work(ctx, seconds) then return "cancelled" end
  return ("Computed %s after %s s"):format(tostring(args.label or "result"), seconds)
end, { task_support = "optional", input_schema = { type = "object", properties = {
  seconds = { type = "number", minimum = 0 }, label = { type = "string" } } } })
tool("failing_job", "Fails after a second (an isError result; always a task)", function(_, ctx)
  work(ctx, 1)
  error("the job failed", 0)
end, { task_support = "required" })
tool("protocol_error_job", "Fails with a protocol error (the task fails)", function()
  jrpc.error(-32603, "protocol_error_job: internal failure")
end, { task_support = "required" })
tool("confirm_delete", "Asks to confirm, then deletes (pretends to)", function(args, ctx)
  local answers = ctx:input{ confirm = elicit(("Delete %s?"):format(tostring(args.filename)),
    { confirm = { type = "boolean" } }, { "confirm" }) }
  if not answers then return "cancelled" end
  local c = type(answers.confirm) == "table" and answers.confirm.content
  if type(c) == "table" and c.confirm == true then return ("Deleted %s"):format(tostring(args.filename)) end
  return ("Kept %s"):format(tostring(args.filename))
end, { task_support = "optional", input_schema = { type = "object", properties = {
  filename = { type = "string" } }, required = { "filename" } } })
tool("multi_input", "Asks two things at once, then answers", function(_, ctx)
  local answers = ctx:input{ name = elicit("What is your name?", { name = { type = "string" } }, { "name" }),
    confirm = elicit("Proceed?", { confirm = { type = "boolean" } }, { "confirm" }) }
  if not answers then return "cancelled" end
  return ("Got %d answers"):format(answers.name and answers.confirm and 2 or 0)
end, { task_support = "optional" })
-- MRTR first (the name), then a task that uses the answer
tool("test_tool_with_task", "Asks the user's name (MRTR), then greets in a task", function(_, ctx)
  local c = accepted(ctx, "user_name")
  if not (c and type(c.name) == "string") then
    return mcp.input_required{ user_name = elicit("What is your name?", { name = { type = "string" } }, { "name" }) }
  end
  work(ctx, 0.5)
  return ("Hello, %s, from a task!"):format(c.name)
end, { task_support = "required" })

-- }======================================================================

server:resource{ uri = "test://static-text", name = "Static Text Resource", mime_type = "text/plain",
  description = "A static text resource for testing",
  handler = function() return "This is the content of the static text resource." end }
server:resource{ uri = "test://static-binary", name = "Static Binary Resource", mime_type = "image/png",
  description = "A static binary resource (a PNG)", handler = function() return { blob = PNG } end }
server:resource{ uri = "test://watched-resource", name = "Watched Resource", mime_type = "text/plain",
  description = "A resource clients may subscribe to", handler = function() return "Watched resource content" end }
server:resource_template{ uri_template = "test://template/{id}/data", name = "Resource Template",
  mime_type = "application/json", description = "A resource template with an id",
  handler = function(uri, vars)
    return { uri = uri, text = ('{"id":"%s","templateTest":true,"data":"Data for ID: %s"}'):format(vars.id, vars.id) }
  end }

server:prompt{ name = "test_simple_prompt", description = "A simple prompt without arguments",
  handler = function() return "This is a simple prompt for testing." end }
server:prompt{ name = "test_prompt_with_arguments", description = "A prompt with two arguments",
  arguments = { { name = "arg1", description = "First test argument", required = true },
    { name = "arg2", description = "Second test argument", required = true } },
  handler = function(args)
    return ("Prompt with arguments: arg1='%s', arg2='%s'"):format(args.arg1, args.arg2)
  end }
server:prompt{ name = "test_prompt_with_embedded_resource", description = "A prompt with an embedded resource",
  arguments = { { name = "resourceUri", description = "URI of the resource to embed", required = true } },
  handler = function(args)
    return { { role = "user", content = mcp.embedded{ uri = args.resourceUri, mimeType = "text/plain",
      text = "Embedded resource content for testing." } },
      { role = "user", content = "Please process the embedded resource above." } }
  end }
server:prompt{ name = "test_prompt_with_image", description = "A prompt with an image",
  handler = function()
    return { { role = "user", content = mcp.image(PNG, "image/png") },
      { role = "user", content = "Please analyze the image above." } }
  end }

local WORDS = { "test", "testing", "tested", "value", "values" }
server:completion("prompt", "test_prompt_with_arguments", function(_, value)
  local out = {}
  for _, w in ipairs(WORDS) do if w:sub(1, #value) == value then out[#out + 1] = w end end
  return out
end)
server:completion("resource", "test://template/{id}/data", function() return { "123", "456" } end)

-- {======================================================================
-- Change fixtures: listen streams (2026-07-28) and legacy connections hear
-- these. Each trigger is one change: it registers a spare tool (prompt)
-- and the next call removes it, so the offer stays bounded.
-- =======================================================================

local SPARE_TOOL, SPARE_PROMPT = "test_dynamic_tool", "test_dynamic_prompt"
local spare_tool, spare_prompt = false, false

tool("test_trigger_tool_change", "Changes the tool list (tools/list_changed)", function()
  if spare_tool then
    server:remove_tool(SPARE_TOOL)
  else
    tool(SPARE_TOOL, "Registered by test_trigger_tool_change", function() return "dynamic" end)
  end
  spare_tool = not spare_tool
  return spare_tool and "added " .. SPARE_TOOL or "removed " .. SPARE_TOOL
end)
tool("test_trigger_prompt_change", "Changes the prompt list (prompts/list_changed)", function()
  if spare_prompt then
    server:remove_prompt(SPARE_PROMPT)
  else
    server:prompt{ name = SPARE_PROMPT, description = "Registered by test_trigger_prompt_change",
      handler = function() return "dynamic" end }
  end
  spare_prompt = not spare_prompt
  return spare_prompt and "added " .. SPARE_PROMPT or "removed " .. SPARE_PROMPT
end)
tool("test_trigger_resource_update", "Announces test://watched-resource updated (resources/updated)", function()
  server:resource_updated("test://watched-resource")
  return "updated test://watched-resource"
end)

-- }======================================================================

-- SIGTERM: stop taking connections, answer those in flight, then exit.
local function stop_on_sigterm(srv)
  local sig = luv.new_signal()
  sig:start("sigterm", function()
    sig:close()
    io.stderr:write(("worker %s: draining\n"):format(opt.worker or "-"))
    srv:shutdown{ grace = 10, on_done = function()
      io.stderr:write(("worker %s: stopped\n"):format(opt.worker or "-"))
      io.stderr:flush()
      loop:stop()  -- legacy sessions' idle timers would keep the loop alive
    end }
  end)
end

-- --http HOST:PORT serves Streamable HTTP on /mcp instead (port 0: a free one)
if opt.http then
  assert(loop, "--http needs lua-luv")
  local host, port = opt.http:match("^(.*):(%d+)$")
  local http_opts = { host = host, port = tonumber(port),
    allowed_hosts = opt.allowed_hosts, session_id_prefix = opt.worker and ("w%d-"):format(opt.worker) }
  for name, n in pairs(opt.limits or {}) do http_opts[name] = n end
  local srv = assert(server:serve_http(loop, http_opts))
  stop_on_sigterm(srv)
  io.stderr:write(("listening on http://%s:%d/mcp\n"):format(host, srv.port))
  io.stderr:flush()
  loop:serve_forever()
else
  server:serve_stdio(loop)
end
