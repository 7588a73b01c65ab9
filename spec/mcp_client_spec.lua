-- jrpc.mcp.client against real MCP servers over stdio (child processes):
--   * examples/mcp/everything_server.lua under the running interpreter, with
--     the era pinned modern, pinned legacy, and detected;
--   * @modelcontextprotocol/server-everything 2026.8.31 (node/, legacy era);
-- and the rules no real server exercises on demand (unknown resultType,
-- -32022 retry, probe fallbacks, the round bound) against a scripted
-- in-process transport. A recording wrapper around the stdio transport
-- shows what went on the wire (ids, requestState, progress tokens).
if dofile("spec/once.lua")(pending, "the MCP client's rounds and calls in Lua, against servers it starts; the codec's C paths are the other specs'", { "asan" }) then return end
local S = dofile("spec/uv_support.lua")
local jrpc = require "jrpc"
local mcp_client = require "jrpc.mcp.client"
local stdio = require "jrpc.mcp.client_stdio"
local files = dofile("spec/files.lua")

local EVERYTHING = { cmd = S.INTERP, args = { "examples/mcp/everything_server.lua" } }
local NPM_EVERYTHING = "node/node_modules/@modelcontextprotocol/server-everything/dist/index.js"

local TOOLS = { "test_simple_text", "test_image_content", "test_audio_content", "test_embedded_resource",
  "test_multiple_content_types", "test_tool_with_logging", "test_logging_tool", "test_tool_with_progress",
  "test_error_handling", "test_missing_capability", "test_streaming_elicitation", "test_echo",
  "test_custom_headers", "json_schema_2020_12_tool", "test_sampling", "test_elicitation",
  "test_elicitation_sep1034_defaults", "test_elicitation_sep1330_enums", "test_input_required_result_elicitation",
  "test_input_required_result_sampling",
  "test_input_required_result_list_roots", "test_input_required_result_request_state",
  "test_input_required_result_multiple_inputs", "test_input_required_result_multi_round",
  "test_input_required_result_tampered_state", "test_input_required_result_capabilities",
  "greet", "slow_compute", "failing_job", "protocol_error_job", "confirm_delete", "multi_input",
  "test_tool_with_task", "test_trigger_tool_change", "test_trigger_prompt_change", "test_trigger_resource_update" }
local PROMPTS = { "test_input_required_result_prompt", "test_simple_prompt", "test_prompt_with_arguments",
  "test_prompt_with_embedded_resource", "test_prompt_with_image" }
local RESOURCES = { "test://static-text", "test://static-binary", "test://watched-resource" }
local SERVER_INFO = { name = "jrpc-everything-server", version = "1.0.0" }
local PROGRESS = { { 0, 100, "step 1 of 3" }, { 50, 100, "step 2 of 3" }, { 100, 100, "step 3 of 3" } }

local function names(items, key)
  local out = {}
  for i, item in ipairs(items) do out[i] = item[key or "name"] end
  return out
end

local function text(result) return result.content[1].text end

-- The user's side: each question asked is recorded; answers are fixed.
local function user()
  local asked = {}
  return asked, {
    on_elicitation = function(params)
      asked[#asked + 1] = params.message
      return { action = "accept", content = { name = "Ada", ok = true, colour = "green", context = "spec",
        username = "ada", email = "ada@example.com" } }
    end,
    on_sampling = function(params)
      asked[#asked + 1] = "sampling: " .. params.messages[1].content.text
      return { role = "assistant", model = "spec-model", content = { type = "text", text = "Paris" } }
    end,
    roots = { { uri = "file:///spec", name = "spec" } },
  }
end

-- The stdio transport, with every request and cancel recorded.
local function recording(opts, sent)
  return function(sink)
    local t, err = stdio.open(S.loop, opts, sink)
    if not t then return nil, err end
    local request, cancel = t.request, t.cancel
    t.request = function(self, method, params, callback)
      local id = request(self, method, params, callback)
      sent[#sent + 1] = { method = method, id = id, params = params }
      return id
    end
    t.cancel = function(self, id, reason)
      sent[#sent + 1] = { cancel = id, reason = reason }
      return cancel(self, id, reason)
    end
    return t
  end
end

local function connect(server, extra, sent)
  local opts = { cmd = server.cmd, args = server.args, stderr = "pipe" }
  for k, v in pairs(extra or {}) do opts[k] = v end
  if sent then opts.transport = recording(opts, sent) end
  return assert(mcp_client.connect(S.loop, opts))
end

local function calls_of(sent, method)
  local out = {}
  for _, s in ipairs(sent) do if s.method == method then out[#out + 1] = s end end
  return out
end

after_each(S.cleanup)

-- {======================================================================
-- examples/mcp/everything_server.lua, each era
-- =======================================================================

for _, mode in ipairs{ "modern", "legacy", "detected" } do
  local era_opt = mode ~= "detected" and mode or nil
  local want_era = mode == "legacy" and "legacy" or "modern"
  local want_version = want_era == "legacy" and "2025-11-25" or "2026-07-28"

  describe("jrpc.mcp.client against everything_server.lua (" .. mode .. ")", function()
    it("finds the era, lists every page, calls, reads, gets and completes", function()
      S.run(function()
        local asked, cbs = user()
        cbs.era = era_opt
        local sent = {}
        local client = connect(EVERYTHING, cbs, sent)
        local verdict = assert(client:era())
        assert.same({ want_era, want_version }, { verdict.era, verdict.version })
        if mode == "detected" then
          assert.same(SERVER_INFO, verdict.server_info)
          assert.same({ "server/discover" }, { sent[1].method })
        elseif mode == "legacy" then
          assert.same(SERVER_INFO, verdict.server_info)
          assert.same("initialize", sent[1].method)
        else
          assert.same(0, #sent)  -- pinned modern: no probe
        end
        assert.same(TOOLS, names(assert(client:list_tools())))
        assert.same(PROMPTS, names(assert(client:list_prompts())))
        assert.same(RESOURCES, names(assert(client:list_resources()), "uri"))
        assert.same({ "test://template/{id}/data" },
          names(assert(client:list_resource_templates()), "uriTemplate"))
        assert.same("This is a simple text response for testing.", text(assert(client:call_tool("test_simple_text"))))
        local failed = assert(client:call_tool("test_error_handling"))
        assert.same({ true, "Tool test_error_handling failed: internal error" }, { failed.isError, text(failed) })
        assert.same("This is the content of the static text resource.",
          assert(client:read_resource("test://static-text")).contents[1].text)
        assert.same("Prompt with arguments: arg1='a', arg2='b'", assert(client:get_prompt("test_prompt_with_arguments",
          { arg1 = "a", arg2 = "b" })).messages[1].content.text)
        assert.same({ values = { "test", "testing", "tested" } }, assert(client:complete(
          { type = "ref/prompt", name = "test_prompt_with_arguments" }, { name = "arg1", value = "te" })))
        local _, err = client:read_resource("test://nonexistent")
        assert.same(want_era == "legacy" and -32002 or -32602, err.code)
        -- every request of the modern era carries _meta; legacy ones none
        local call = calls_of(sent, "tools/call")[1]
        local meta = call.params._meta
        if want_era == "modern" then
          assert.same({ "2026-07-28", mcp_client.CLIENT_INFO },
            { meta["io.modelcontextprotocol/protocolVersion"], meta["io.modelcontextprotocol/clientInfo"] })
          local caps = meta["io.modelcontextprotocol/clientCapabilities"]
          assert.same({ "elicitation", "roots", "sampling" }, (function()
            local k = {}
            for name in pairs(caps) do k[#k + 1] = name end
            table.sort(k)
            return k
          end)())
        else
          assert.is_nil(meta)
        end
        assert.same({}, asked)
        client:close()
      end, 20)
    end)

    it("routes progress to its call only, with a token minted per call", function()
      S.run(function()
        local sent = {}
        local client = connect(EVERYTHING, { era = era_opt }, sent)
        local seen, other = {}, {}
        local result = assert(client:call_tool("test_tool_with_progress", {}, {
          on_progress = function(p, total, message) seen[#seen + 1] = { p, total, message } end }))
        assert.same("Progress test completed", text(result))
        assert.same(PROGRESS, seen)
        -- a second call gets its own token; a call without a callback none
        assert(client:call_tool("test_tool_with_progress", {}, {
          on_progress = function(p) other[#other + 1] = p end }))
        assert(client:call_tool("test_simple_text"))
        assert.same({ 0, 50, 100 }, other)
        local c = calls_of(sent, "tools/call")
        local t1, t2 = c[1].params._meta.progressToken, c[2].params._meta.progressToken
        assert.same({ "jrpc-progress-1", "jrpc-progress-2" }, { t1, t2 })
        assert.is_nil(c[3].params._meta and c[3].params._meta.progressToken)
        client:close()
      end, 20)
    end)

    it("cancels through the handle: notifications/cancelled, settled at once, the late result dropped", function()
      S.run(function()
        local sent = {}
        local client = connect(EVERYTHING, { era = era_opt }, sent)
        assert(client:era())
        local handle
        local result, err = client:call_tool("test_tool_with_progress", {}, {
          on_handle = function(h) handle = h end,
          on_progress = function(p) if p == 50 then handle:cancel("enough") end end })
        assert.is_nil(result)
        assert.same({ "cancelled", "enough" }, { err.code, err.message })
        local call = calls_of(sent, "tools/call")[1]
        assert.same({ cancel = call.id, reason = "enough" }, sent[#sent])
        assert.is_true(handle:settled())
        assert.is_false(handle:cancel())
        S.loop:sleep(0.2)  -- the tool would have finished by now: nothing reaches us
        assert.same("This is a simple text response for testing.", text(assert(client:call_tool("test_simple_text"))))
        client:close()
      end, 20)
    end)

    if want_era == "modern" then
      it("runs MRTR rounds: a new id each round, requestState echoed, never carried over", function()
        S.run(function()
          local asked, cbs = user()
          cbs.era = era_opt
          local sent = {}
          local client = connect(EVERYTHING, cbs, sent)
          assert.same("Both rounds done.", text(assert(client:call_tool("test_input_required_result_multi_round"))))
          assert.same({ "What is your name?", "What is your favourite colour?" }, asked)
          local rounds = calls_of(sent, "tools/call")
          assert.same(3, #rounds)
          assert.is_true(rounds[1].id ~= rounds[2].id and rounds[2].id ~= rounds[3].id and rounds[1].id ~= rounds[3].id)
          assert.is_nil(rounds[1].params.requestState)
          assert.is_nil(rounds[1].params.inputResponses)
          -- the server's sealed states, as they came (round1.<hmac>, round2.<hmac>)
          assert.matches("^round1%.%x+$", rounds[2].params.requestState)
          assert.matches("^round2%.%x+$", rounds[3].params.requestState)
          assert.same({ "step1" }, (function() local k = {} for n in pairs(rounds[2].params.inputResponses) do
            k[#k + 1] = n end return k end)())
          assert.same("Hello, Ada!", text(assert(client:call_tool("test_input_required_result_elicitation"))))
          -- its retry carries its own answer and no state of the other call's
          local later = calls_of(sent, "tools/call")
          assert.same(5, #later)
          assert.same({ nil, "Ada" }, { later[5].params.requestState, later[5].params.inputResponses.user_name.content.name })
          assert.is_nil(later[5].params.inputResponses.step1)
          assert.same("All three answered.", text(assert(client:call_tool("test_input_required_result_multiple_inputs"))))
          assert.same("Use this context: spec", assert(client:get_prompt("test_input_required_result_prompt"))
            .messages[1].content.text)
          client:close()
        end, 20)
      end)

      it("bounds the rounds (max_rounds), with a clear error", function()
        S.run(function()
          local _, cbs = user()
          cbs.era, cbs.max_rounds = era_opt, 2
          local client = connect(EVERYTHING, cbs)
          local result, err = client:call_tool("test_input_required_result_multi_round")
          assert.is_nil(result)
          assert.same({ "too_many_rounds",
            "tools/call: still input_required after 2 rounds (option max_rounds)" }, { err.code, err.message })
          client:close()
        end, 20)
      end)
    else
      it("answers the legacy server's own requests with the same callbacks", function()
        S.run(function()
          local asked, cbs = user()
          cbs.era = era_opt
          local client = connect(EVERYTHING, cbs)
          assert.same("LLM response: Paris", text(assert(client:call_tool("test_sampling", { prompt = "Capital?" }))))
          local elicited = text(assert(client:call_tool("test_elicitation", { message = "Who?" })))
          local content = jrpc.decode(elicited:match("content=(.*)$"))
          assert.same({ "User response: action=accept, ", "ada", "ada@example.com" },
            { elicited:match("^(.-)content="), content.username, content.email })
          assert.same({ "sampling: Capital?", "Who?" }, asked)
          client:close()
        end, 20)
      end)
    end
  end)
end

-- }======================================================================

-- {======================================================================
-- @modelcontextprotocol/server-everything (npm), a legacy server
-- =======================================================================

describe("jrpc.mcp.client against @modelcontextprotocol/server-everything 2026.8.31", function()
  local NPM = { cmd = "node", args = { NPM_EVERYTHING, "stdio" } }

  it("falls back to initialize, then lists, calls with progress, and answers sampling, elicitation, roots", function()
    assert.truthy(io.open(NPM_EVERYTHING), "run: cd node && npm ci")
    S.run(function()
      local asked, cbs = user()
      local client = connect(NPM, cbs)
      local verdict = assert(client:era())
      assert.same({ "legacy", "2025-11-25", "mcp-servers/everything" },
        { verdict.era, verdict.version, verdict.server_info.name })
      assert.same({ "echo", "get-annotated-message", "get-env", "get-resource-links", "get-resource-reference",
        "get-structured-content", "get-sum", "get-tiny-image", "gzip-file-as-resource", "toggle-simulated-logging",
        "toggle-subscriber-updates", "trigger-long-running-operation", "get-roots-list",
        "trigger-elicitation-request", "trigger-sampling-request", "simulate-research-query" },
        names(assert(client:list_tools())))
      assert.same({ content = { { type = "text", text = "Echo: hi" } } }, assert(client:call_tool("echo", { message = "hi" })))
      assert.same("The sum of 2 and 3 is 5.", text(assert(client:call_tool("get-sum", { a = 2, b = 3 }))))
      local seen = {}
      local long = assert(client:call_tool("trigger-long-running-operation", { duration = 0.3, steps = 3 },
        { on_progress = function(p, total) seen[#seen + 1] = p .. "/" .. total end }))
      assert.same("Long running operation completed. Duration: 0.3 seconds, Steps: 3.", text(long))
      assert.same({ "1/3", "2/3", "3/3" }, seen)
      assert.matches('"text": "Paris"', text(assert(client:call_tool("trigger-sampling-request", { prompt = "Capital?" }))),
        1, true)
      local elicited = assert(client:call_tool("trigger-elicitation-request", {}))
      assert.same("User inputs:\n- Name: Ada\n- Email: ada@example.com", elicited.content[2].text)
      assert.matches("file:///spec", text(assert(client:call_tool("get-roots-list", {}))), 1, true)
      assert.same({ "sampling: Resource trigger-sampling-request context: Capital?" }, { asked[1] })
      assert.same(7, #assert(client:list_resources()))
      assert.same("demo://resource/static/document/architecture.md",
        assert(client:read_resource("demo://resource/static/document/architecture.md")).contents[1].uri)
      -- its stderr went to the pipe, not into the protocol
      assert.same("Starting default (STDIO) server...\n", client:stderr_text())
      client:close()
    end, 30)
  end)
end)

-- }======================================================================

-- {======================================================================
-- The same client over Streamable HTTP (the seam's second filling,
-- lua/jrpc/mcp/client_http.lua), against everything_server.lua --http,
-- both eras; spec/mcp_client_http_spec.lua checks the transport itself
-- =======================================================================

describe("jrpc.mcp.client over Streamable HTTP", function()

  local function http_server()
    local log = { text = "" }
    assert(S.spawn{ cmd = S.INTERP, args = { "examples/mcp/everything_server.lua", "--http", "127.0.0.1:0" },
      stderr = function(chunk) log.text = log.text .. chunk end })
    assert(S.wait_until(function() return log.text:find("\n") ~= nil end, 5), "no listening line: " .. log.text)
    return assert(log.text:match("^listening on (http://127%.0%.0%.1:%d+/mcp)\n"), log.text)
  end

  for _, era in ipairs{ "modern", "legacy" } do
    it("lists, calls with progress, reads and answers the server (" .. era .. ")", function()
      S.run(function()
        local asked, cbs = user()
        cbs.era, cbs.url = era, http_server()
        local client = assert(mcp_client.connect(S.loop, cbs))
        assert.same(era == "modern" and "2026-07-28" or "2025-11-25", assert(client:era()).version)
        assert.same(TOOLS, names(assert(client:list_tools())))
        local seen = {}
        local done = assert(client:call_tool("test_tool_with_progress", {}, {
          on_progress = function(p, total, message) seen[#seen + 1] = { p, total, message } end }))
        assert.same({ "Progress test completed", PROGRESS }, { text(done), seen })
        assert.same("This is the content of the static text resource.",
          assert(client:read_resource("test://static-text")).contents[1].text)
        if era == "modern" then
          assert.same("Both rounds done.", text(assert(client:call_tool("test_input_required_result_multi_round"))))
          assert.same({ "What is your name?", "What is your favourite colour?" }, asked)
        else
          -- asked on the call's own SSE stream, answered with a POST of ours
          assert.same("LLM response: Paris", text(assert(client:call_tool("test_sampling", { prompt = "Capital?" }))))
          assert.same({ "sampling: Capital?" }, asked)
        end
        client:close()
      end, 20)
    end)
  end
end)

-- }======================================================================

-- {======================================================================
-- subscriptions/listen and timeouts, against servers scripted in sh (no fixture
-- server of ours serves listen on stdio yet)
-- =======================================================================

describe("jrpc.mcp.client against servers scripted in sh (listen, timeouts)", function()
  local TAG = '"_meta":{"io.modelcontextprotocol/subscriptionId":1}'
  local ACK = '{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":'
    .. '{"notifications":{"toolsListChanged":true},' .. TAG .. '}}'
  local CHANGED = '{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{' .. TAG .. '}}'
  local UNTAGGED = '{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{}}'

  -- A server that reads the listen request, prints `lines`, then copies
  -- what the client sends next to its stderr.
  local function server(lines)
    local script = "read req; echo \"$req\" >&2; printf '%s\\n' " .. table.concat((function()
      local q = {}
      for i, l in ipairs(lines) do q[i] = "'" .. l .. "'" end
      return q
    end)(), " ") .. "; while read more; do echo \"$more\" >&2; done"
    return { cmd = "/bin/sh", args = { "-c", script } }
  end

  local function listen_on(lines, extra)
    local events, ended, others = {}, {}, {}
    local opts = { era = "modern", on_notification = function(m) others[#others + 1] = m end }
    for k, v in pairs(extra or {}) do opts[k] = v end
    local client = connect(server(lines), opts)
    local listen = assert(client:listen({ toolsListChanged = true }, function(method, params)
      events[#events + 1] = { method, params.notifications }
    end, function(err, result) ended[#ended + 1] = { err and err.code, err and err.message, result } end))
    return client, listen, events, ended, others
  end

  it("delivers the acknowledgement and tagged notifications, and ends on the server's cancel", function()
    S.run(function()
      local client, listen, events, ended, others = listen_on({ ACK, CHANGED, UNTAGGED,
        '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"bye"}}' })
      assert.is_true(S.wait_until(function() return #ended == 1 end))
      assert.same(1, listen.id)
      assert.same({ { "notifications/subscriptions/acknowledged", { toolsListChanged = true } },
        { "notifications/tools/list_changed" } }, events)
      assert.same({ "notifications/tools/list_changed" }, others)  -- untagged: not the listen's
      assert.same({ { "ended_by_server", "bye" } }, ended)
      S.wait_until(function() return client:stderr_text():find("\n.*\n") ~= nil end, 1)
      local req = jrpc.decode(client:stderr_text():match("^[^\n]*"))
      assert.same({ "subscriptions/listen", { toolsListChanged = true }, "2026-07-28" }, { req.method,
        req.params.notifications, req.params._meta["io.modelcontextprotocol/protocolVersion"] })
      client:close()
    end)
  end)

  it("ends with the server's result", function()
    S.run(function()
      local client, _, events, ended = listen_on({ ACK,
        '{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete",' .. TAG .. '}}' })
      assert.is_true(S.wait_until(function() return #ended == 1 end))
      assert.same(1, #events)
      assert.same({ nil, nil, "complete" }, { ended[1][1], ended[1][2], ended[1][3].resultType })
      client:close()
    end)
  end)

  it("is cancelled by the client with notifications/cancelled", function()
    S.run(function()
      local client, listen, events, ended = listen_on({ ACK })
      assert.is_true(S.wait_until(function() return #events == 1 end))
      assert.is_true(listen:cancel("done"))
      assert.same({ { "cancelled", "done" } }, ended)
      assert.is_true(S.wait_until(function() return select(2, client:stderr_text():gsub("\n", "")) >= 2 end))
      local cancel = jrpc.decode(client:stderr_text():match("\n([^\n]*)\n"))
      assert.same({ method = "notifications/cancelled", params = { requestId = 1, reason = "done" }, jsonrpc = "2.0" },
        cancel)
      assert.is_false(listen:cancel())
      client:close()
    end)
  end)

  -- A tool that reports progress every 0.3 s and answers after 1.2 s (the
  -- first request of a pinned-modern client is id 1, its token jrpc-progress-1).
  local SLOW = { cmd = "/bin/sh", args = { "-c", "read req; for p in 1 2 3 4; do sleep 0.3; "
    .. "echo '{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":"
    .. "{\"progressToken\":\"jrpc-progress-1\",\"progress\":'$p',\"total\":4}}'; done; "
    .. "echo '{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"resultType\":\"complete\",\"content\":[]}}'; "
    .. "while read more; do :; done" } }

  it("extends a call's timeout on progress, up to the hard maximum", function()
    S.run(function()
      local function slow_call(opts)
        local seen = {}
        opts.on_progress = function(p) seen[#seen + 1] = p end
        local client = connect(SLOW, { era = "modern" })
        local result, err = client:call_tool("slow", {}, opts)
        client:close(0)
        return result and "done" or err.code, seen
      end
      assert.same({ "done", { 1, 2, 3, 4 } }, { slow_call{ timeout = 0.6 } })
      -- progress 1 at 0.3 s; the next at 0.6 s comes after the timeout
      -- (a loaded machine may deliver progress 1 late, or 2 before the timer runs)
      local code0, seen0 = slow_call{ timeout = 0.45, extend_on_progress = false }
      assert.same({ "timeout", true }, { code0, #seen0 <= 2 })
      -- progress keeps it alive until the hard maximum, long before the 1.2 s answer
      local code, seen = slow_call{ timeout = 0.6, max_timeout = 0.8 }
      assert.same({ "timeout", true }, { code, #seen <= 2 })
      assert.same("timeout", (slow_call{ timeout = false, max_timeout = 0.4 }))
    end, 20)
  end)

  it("is refused on a legacy server", function()
    S.run(function()
      local client = connect(EVERYTHING, { era = "legacy" })
      local listen, err = client:listen({}, function() end)
      assert.is_nil(listen)
      assert.same({ "unsupported", "subscriptions/listen needs the 2026-07-28 era; the server speaks 2025-11-25" },
        { err.code, err.message })
      client:close()
    end)
  end)
end)

-- }======================================================================

-- {======================================================================
-- Rules against a scripted transport (in process, on the loop's timers)
-- =======================================================================

-- `answer(method, params, n)` returns err, result for the n-th request of
-- that method, or "silence" (no reply: a timeout).
local function scripted(answer)
  local sent, count = {}, {}
  local t = { kind = "stdio", pending = {}, next_id = 1 }
  function t.request(_, method, params, callback)
    local id = t.next_id
    t.next_id = id + 1
    count[method] = (count[method] or 0) + 1
    sent[#sent + 1] = { method = method, id = id, params = params }
    local err, result = answer(method, params, count[method])
    if err ~= "silence" then
      t.pending[id] = callback
      S.loop.uv.new_timer():start(1, 0, function()
        local cb = t.pending[id]
        t.pending[id] = nil
        if cb then cb(err, result) end
      end)
    else
      t.pending[id] = callback
    end
    return id
  end
  function t.cancel(_, id)
    local cb = t.pending[id]
    if not cb then return false end
    t.pending[id] = nil
    cb(jrpc.new_error("cancelled", "cancelled"))
    return true
  end
  function t.notify(_, method) sent[#sent + 1] = { method = method, notification = true } end
  function t.after(_, seconds, fn) return require("jrpc.uv.timers").after(S.loop.uv, seconds, fn) end
  function t.cancel_timer(_, timer) require("jrpc.uv.timers").cancel(S.loop.uv, timer) end
  function t.now() return S.now() end
  function t.close() end
  return t, sent
end

local function scripted_client(answer, opts)
  local t, sent = scripted(answer)
  local o = { transport = t }
  for k, v in pairs(opts or {}) do o[k] = v end
  return assert(mcp_client.connect(S.loop, o)), sent
end

local INIT = { protocolVersion = "2025-11-25", capabilities = {}, serverInfo = { name = "old", version = "1" } }

describe("jrpc.mcp.client rules", function()
  for _, case in ipairs{
    { "-32601", jrpc.new_error(-32601, "Method not found") },
    { "-32602", jrpc.new_error(-32602, "Invalid params") },
    { "-32000", jrpc.new_error(-32000, "whatever") },
    { "a timeout", "silence" },
  } do
    it("falls back to initialize when the probe gets " .. case[1], function()
      S.run(function()
        local client, sent = scripted_client(function(method)
          if method == "server/discover" then return case[2] end
          if method == "initialize" then return nil, INIT end
          return nil, { tools = {} }
        end, { discover_timeout = 0.05 })
        local verdict = assert(client:era())
        assert.same({ "legacy", "2025-11-25", "old" }, { verdict.era, verdict.version, verdict.server_info.name })
        local order = {}
        for _, s in ipairs(sent) do order[#order + 1] = s.method end
        assert.same({ "server/discover", "initialize", "notifications/initialized" }, order)
        assert.same({}, assert(client:list_tools()))
        assert.is_nil(sent[4].params and sent[4].params._meta)  -- legacy: no _meta
        assert(client:era())  -- cached: no second probe
        assert.same(4, #sent)
      end)
    end)
  end

  it("does not fall back on -32022: it retries once with a supported version, and caches it", function()
    S.run(function()
      local supported = jrpc.new_error(-32022, "Unsupported protocol version",
        { supported = { "2027-01-01", "2026-07-28" }, requested = "2026-07-28" })
      local client, sent = scripted_client(function(method, _, n)
        if method == "server/discover" and n == 1 then return supported end
        if method == "server/discover" then return nil, { resultType = "complete", supportedVersions = { "2026-07-28" } } end
        return nil, { resultType = "complete", tools = { { name = "t" } } }
      end)
      local verdict = assert(client:era())
      assert.same({ "modern", "2026-07-28" }, { verdict.era, verdict.version })
      assert.same({ "server/discover", "server/discover" }, { sent[1].method, sent[2].method })
      assert.is_true(sent[1].id ~= sent[2].id)
      assert.same({ "t" }, names(assert(client:list_tools())))
    end)
  end)

  it("surfaces -32022 when no supported version is ours (no fallback)", function()
    S.run(function()
      local client, sent = scripted_client(function()
        return jrpc.new_error(-32022, "Unsupported protocol version", { supported = { "2099-01-01" } })
      end)
      local verdict, err = client:era()
      assert.is_nil(verdict)
      assert.same({ "unsupported_version", { supported = { "2099-01-01" } } }, { err.code, err.data })
      assert.same(1, #sent)
    end)
  end)

  it("retries a -32022 on any call once, then gives the error", function()
    S.run(function()
      local client, sent = scripted_client(function()
        return jrpc.new_error(-32022, "Unsupported protocol version", { supported = { "2026-07-28" } })
      end, { era = "modern" })
      local _, err = client:call_tool("x")
      assert.same(-32022, err.code)
      assert.same(2, #sent)
    end)
  end)

  it("takes a missing resultType as complete and an unknown one as invalid", function()
    S.run(function()
      local client = scripted_client(function(_, params)
        if params.name == "legacy" then return nil, { content = { { type = "text", text = "old" } } } end
        return nil, { resultType = "task", taskId = "1" }
      end, { era = "modern" })
      assert.same("old", text(assert(client:call_tool("legacy"))))
      local result, err = client:call_tool("tasky")
      assert.is_nil(result)
      assert.same({ "invalid_result", 'tools/call: unknown resultType "task"' }, { err.code, err.message })
    end)
  end)

  it("never invents a requestState, and sends none the server did not send", function()
    S.run(function()
      local client, sent = scripted_client(function(_, _, n)
        if n == 1 then
          return nil, { resultType = "input_required", inputRequests = {
            r = { method = "roots/list", params = {} } } }
        end
        return nil, { resultType = "complete", content = {} }
      end, { era = "modern", roots = { { uri = "file:///x" } } })
      assert(client:call_tool("t"))
      assert.same({ false, { r = { roots = { { uri = "file:///x" } } } } },
        { sent[2].params.requestState ~= nil, sent[2].params.inputResponses })
    end)
  end)

  it("fails a round whose question no callback answers (-32601), without retrying", function()
    S.run(function()
      local client, sent = scripted_client(function()
        return nil, { resultType = "input_required", inputRequests = {
          q = { method = "sampling/createMessage", params = {} } } }
      end, { era = "modern" })
      local _, err = client:call_tool("t")
      assert.same({ -32601, "the client has no on_sampling for sampling/createMessage" }, { err.code, err.message })
      assert.same(1, #sent)
    end)
  end)

  it("takes a callback outside a coroutine, and then returns the handle", function()
    local client = scripted_client(function() return "silence" end, { era = "modern" })
    local got
    local handle = client:call_tool("slow", {}, {}, function(err) got = err end)
    assert.is_nil(got)
    assert.is_true(handle:cancel("stop"))
    assert.same({ "cancelled", "stop" }, { got.code, got.message })
    assert.has_error(function() client:call_tool("x") end, "jrpc.mcp.client: outside a coroutine, pass a callback")
  end)

  it("caches lists for their ttlMs when asked, and drops them on list_changed", function()
    S.run(function()
      local client, sent = scripted_client(function(_, params)
        if params.cursor == nil then return nil, { resultType = "complete", ttlMs = 60000, tools = { { name = "a" } },
          nextCursor = "p2" } end
        return nil, { resultType = "complete", ttlMs = 60000, tools = { { name = "b" } } }
      end, { era = "modern", cache = true })
      assert.same({ "a", "b" }, names(assert(client:list_tools())))
      assert.same({ "a", "b" }, names(assert(client:list_tools())))
      assert.same({ nil, "p2" }, { sent[1].params.cursor, sent[2].params.cursor })
      assert.same(2, #sent)
      assert(client:list_tools{ fresh = true })
      assert.same(4, #sent)
    end)
  end)

  it("runs the MCP client example of docs/mcp.md", function()
    local doc = files.read("docs/mcp.md")
    local code = doc:match("\n## The MCP client\n.-```lua\n(.-)```")
    local path = os.tmpname()
    files.write(path, (code:gsub('cmd = "lua5.4"', 'cmd = "' .. S.INTERP .. '"')))
    local out = S.run(function()
      local status, output = S.shell_wait(("%s -e 'dofile(\"examples/paths.lua\")' %s"):format(S.INTERP, path))
      return { status, output }
    end, 20)
    os.remove(path)
    assert.same({ 0, "Hello, world!\n" }, { tonumber(out[1]), out[2] })
  end)
end)

-- }======================================================================

describe("jrpc.mcp.client calls have one form", function()
  it("raises at the caller when a function stands where the options go", function()
    S.run(function()
      local client = connect(EVERYTHING, { era = "modern" })
      local function blame(fn)
        local ok, err = pcall(fn)
        assert.is_false(ok)
        return (tostring(err):gsub("^spec/mcp_client_spec%.lua:(%d+): ", function(n) return "line " .. n .. ": " end))
      end
      local here = debug.getinfo(1, "l").currentline
      assert.are.equal("line " .. here + 2 .. ": jrpc.mcp.client: tools/list: opts must be a table or nil "
        .. "(the callback comes after it)", blame(function() client:list_tools(print) end))
      assert.are.equal("line " .. here + 4 .. ": jrpc.mcp.client: tools/call: opts must be a table or nil "
        .. "(the callback comes after it)", blame(function() client:call_tool("t", {}, print) end))
      assert.are.equal("line " .. here + 6 .. ": jrpc.mcp.client: completion/complete: opts must be a table or nil "
        .. "(the callback comes after it)", blame(function() client:complete({}, {}, print) end))
      assert.are.equal("line " .. here + 8 .. ": jrpc.mcp.client: tasks/get: opts must be a table or nil "
        .. "(the callback comes after it)", blame(function() client:get_task("x", print) end))
      -- the same calls with nil in its place work
      local tools = assert(client:list_tools(nil))
      assert.is_true(#tools > 0)
      client:close()
    end)
  end)
end)
