-- jrpc.mcp.client over its Streamable HTTP transport (lua/jrpc/mcp/client_http.lua),
-- against real servers as child processes on 127.0.0.1:
--   * examples/mcp/everything_server.lua --http, modern (pinned and detected)
--     and legacy (pinned): calls, progress, MRTR, cancellation the server
--     notices, the headers on the wire, -32022, sessions (404 after a
--     restart, DELETE), the GET stream and listen streams;
--   * @modelcontextprotocol/server-everything (npm) in its Streamable HTTP
--     mode, a legacy-only server: detected by falling back on its 400;
--   * the everything server behind an HTTPS proxy (node's https, a
--     certificate of spec/tls_support.lua's test CA): trusted with ca_file,
--     refused without, the Authorization header passed through.
-- A recording wrapper around the exchanges of the transport's jrpc.http_peer shows the wire.
local S = dofile("spec/uv_support.lua")
local T = dofile("spec/tls_support.lua")
local jrpc = require "jrpc"
local mcp_client = require "jrpc.mcp.client"
local http_client = require "jrpc.uv.http_client"
local era_cache = require "jrpc.mcp.client_era"

local NPM_EVERYTHING = "node/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
local PROGRESS = { { 0, 100, "step 1 of 3" }, { 50, 100, "step 2 of 3" }, { 100, 100, "step 3 of 3" } }

local function text(result) return result.content[1].text end

-- A child whose stderr is kept; waits for `pattern` there, returns its capture.
local function start(cmd, args, pattern, env)
  local log = { text = "" }
  local child = assert(S.spawn{ cmd = cmd, args = args, env = env,
    stderr = function(chunk) log.text = log.text .. chunk end })
  assert(S.wait_until(function() return log.text:match(pattern) ~= nil end, 10), "did not start: " .. log.text)
  return log.text:match(pattern), child, log
end

local function everything(port)
  return start(S.INTERP, { "examples/mcp/everything_server.lua", "--http", "127.0.0.1:" .. (port or 0) },
    "listening on (http://127%.0%.0%.1:%d+/mcp)\n")
end

local function user()
  local asked = {}
  return asked, {
    on_elicitation = function(params)
      asked[#asked + 1] = params.message
      return { action = "accept", content = { name = "Ada", colour = "green", context = "spec" } }
    end,
    on_sampling = function(params)
      asked[#asked + 1] = "sampling: " .. tostring(params.messages[1].content.text)
      return { role = "assistant", model = "spec-model", content = { type = "text", text = "Paris" } }
    end,
    roots = { { uri = "file:///spec", name = "spec" } },
  }
end

-- Connect, and record every HTTP exchange of the transport's jrpc.http_peer:
-- {method, headers, body (decoded), status, err}.
local function connect(opts)
  local client = assert(mcp_client.connect(S.loop, opts))
  local hp, wire = client:transport().hp, {}
  local exchange = hp.exchange
  hp.exchange = function(self, req, on_end)
    local entry = { method = req.method, headers = req.headers, body = req.body and jrpc.decode(req.body) }
    wire[#wire + 1] = entry
    local on_head = req.on_head
    req.on_head = function(res)  -- before the answer is delivered (and the caller resumed)
      entry.status = res.status
      if on_head then on_head(res) end
    end
    return exchange(self, req, function(res, err, st)
      entry.status, entry.err = res and res.status, err
      on_end(res, err, st)
    end)
  end
  return client, wire
end

-- "POST initialize 200", "GET - 200", ... one string an exchange.
local function summary(wire)
  local out = {}
  for i, e in ipairs(wire) do
    out[i] = ("%s %s %s"):format(e.method, e.body and e.body.method or (e.body and "response") or "-",
      tostring(e.status))
  end
  return out
end

local function posts_of(wire, method)
  local out = {}
  for _, e in ipairs(wire) do if e.body and e.body.method == method then out[#out + 1] = e end end
  return out
end

-- a verdict cached for an origin must not outlive its server (ports come round again)
after_each(function()
  S.cleanup()
  for origin in pairs(era_cache.by_origin) do era_cache.by_origin[origin] = nil end
end)

-- {======================================================================
-- everything_server.lua --http
-- =======================================================================

for _, mode in ipairs{ "modern", "detected", "legacy" } do
  local pinned = mode ~= "detected" and mode or nil
  local want = mode == "legacy" and "legacy" or "modern"

  describe("jrpc.mcp.client over HTTP against everything_server.lua (" .. mode .. ")", function()
    it("lists, calls with progress, reads, gets a prompt and completes, with the era's headers", function()
      S.run(function()
        local url = everything()
        local asked, opts = user()
        opts.url, opts.era = url, pinned
        local client, wire = connect(opts)
        local verdict = assert(client:era())
        assert.same({ want, want == "legacy" and "2025-11-25" or "2026-07-28" }, { verdict.era, verdict.version })
        assert.same(36, #assert(client:list_tools()))
        -- legacy: requests wait for the GET stream's head, so nothing the server sends is missed
        assert.same(mode == "detected" and { "POST server/discover 200", "POST tools/list 200" }
          or mode == "legacy" and { "POST initialize 200", "POST notifications/initialized 202", "GET - 200",
            "POST tools/list 200" }
          or { "POST tools/list 200" }, summary(wire))
        local seen = {}
        local done = assert(client:call_tool("test_tool_with_progress", {}, {
          on_progress = function(p, total, message) seen[#seen + 1] = { p, total, message } end }))
        assert.same({ "Progress test completed", PROGRESS }, { text(done), seen })
        assert.same("This is the content of the static text resource.",
          assert(client:read_resource("test://static-text")).contents[1].text)
        assert.same("Prompt with arguments: arg1='a', arg2='b'", assert(client:get_prompt("test_prompt_with_arguments",
          { arg1 = "a", arg2 = "b" })).messages[1].content.text)
        assert.same({ values = { "test", "testing", "tested" } }, assert(client:complete(
          { type = "ref/prompt", name = "test_prompt_with_arguments" }, { name = "arg1", value = "te" })))
        -- x-mcp-header arguments mirrored, with the base64 sentinel where plain is unsafe
        assert.same("region héllo", text(assert(client:call_tool("test_custom_headers",
          { region = "héllo", priority = 7 }))))
        local call = posts_of(wire, "tools/call")[2]
        local h = call.headers
        assert.same({ "tools/call", "test_custom_headers", "=?base64?aMOpbGxv?=", "7",
          "application/json, text/event-stream" },
          { h["Mcp-Method"], h["Mcp-Name"], h["Mcp-Param-Region"], h["Mcp-Param-Priority"], h.Accept })
        if want == "modern" then
          assert.same({ "2026-07-28", nil }, { h["MCP-Protocol-Version"], h["Mcp-Session-Id"] })
          -- a 4xx with a JSON-RPC body is that error
          local _, err = client:read_resource("test://nonexistent")
          assert.same({ -32602, 400 }, { err.code, err.http_status })
          local _, nf = client:request("nope/nothing")
          assert.same({ -32601, 404 }, { nf.code, nf.http_status })
        else
          assert.same("2025-11-25", h["MCP-Protocol-Version"])
          assert.matches("^%x+$", h["Mcp-Session-Id"])
          local _, err = client:read_resource("test://nonexistent")
          assert.same(-32002, err.code)
        end
        assert.same({}, asked)
        client:close()
      end, 20)
    end)

    it("cancels by closing the stream: settled at once, the server sees ctx:cancelled()", function()
      S.run(function()
        local url, _, log = everything()
        local client, wire = connect{ url = url, era = pinned }
        assert(client:era())
        -- with progress: cancelled from the SSE stream's second notification
        local handle
        local result, err = client:call_tool("test_tool_with_progress", {}, {
          on_handle = function(h) handle = h end,
          on_progress = function(p) if p == 50 then handle:cancel("enough") end end })
        assert.same({ nil, "cancelled", "enough", true }, { result, err.code, err.message, handle:settled() })
        assert.is_true(S.wait_until(function() return log.text:find("cancelled after step 2", 1, true) ~= nil end, 3))
        -- without progress the answer is one JSON body at the end: closed before any head came
        S.loop.uv.new_timer():start(20, 0, function() handle:cancel("early") end)
        result, err = client:call_tool("test_tool_with_progress", {}, { on_handle = function(h) handle = h end })
        assert.same({ nil, "cancelled", "early" }, { result, err.code, err.message })
        assert.is_true(S.wait_until(function() return log.text:find("cancelled after step 1", 1, true) ~= nil end, 3))
        -- the legacy era also says so in a notification (a disconnect is no cancellation there)
        assert.same(want == "legacy" and 2 or 0, #posts_of(wire, "notifications/cancelled"))
        assert.same("This is a simple text response for testing.", text(assert(client:call_tool("test_simple_text"))))
        client:close()
      end, 20)
    end)

    if want == "modern" then
      it("answers input_required rounds with the callbacks", function()
        S.run(function()
          local asked, opts = user()
          opts.url, opts.era = everything(), pinned
          local client, wire = connect(opts)
          assert.same("Both rounds done.", text(assert(client:call_tool("test_input_required_result_multi_round"))))
          assert.same({ "What is your name?", "What is your favourite colour?" }, asked)
          local rounds = posts_of(wire, "tools/call")
          assert.same(3, #rounds)
          assert.matches("^round2%.%x+$", rounds[3].body.params.requestState)
          assert.same("Use this context: spec", assert(client:get_prompt("test_input_required_result_prompt"))
            .messages[1].content.text)
          client:close()
        end, 20)
      end)

      it("hears a listen stream: the acknowledgement, then a tagged list_changed", function()
        S.run(function()
          local client = connect{ url = everything(), era = pinned }
          local events, ended = {}, {}
          local listen = assert(client:listen({ toolsListChanged = true }, function(method, params, meta)
            events[#events + 1] = { method, meta and meta["io.modelcontextprotocol/subscriptionId"] }
            assert(params)
          end, function(err) ended[#ended + 1] = err and err.code end))
          assert.is_true(S.wait_until(function() return #events == 1 end, 3))
          assert.same("added test_dynamic_tool", text(assert(client:call_tool("test_trigger_tool_change"))))
          assert.is_true(S.wait_until(function() return #events == 2 end, 3))
          assert.same({ { "notifications/subscriptions/acknowledged", listen.id },
            { "notifications/tools/list_changed", listen.id } }, events)
          assert.is_true(listen:cancel("done"))
          assert.same({ "cancelled" }, ended)
          assert(client:call_tool("test_trigger_tool_change"))  -- removes it again
          client:close()
        end, 20)
      end)
    else
      it("answers the server's requests on the call's stream, hears list_changed on the GET stream", function()
        S.run(function()
          local asked, opts = user()
          local heard = {}
          opts.url, opts.era = everything(), pinned
          opts.on_notification = function(method) heard[#heard + 1] = method end
          local client, wire = connect(opts)
          assert.same("LLM response: Paris", text(assert(client:call_tool("test_sampling", { prompt = "Capital?" }))))
          assert.same({ "sampling: Capital?" }, asked)
          -- the answer went back in a POST of its own, accepted with 202
          local answer
          for _, e in ipairs(wire) do if e.body and e.body.result then answer = e end end
          assert.is_true(S.wait_until(function() return answer.status ~= nil end, 3))
          assert.same({ "POST", 202, "Paris" }, { answer.method, answer.status, answer.body.result.content.text })
          assert(client:call_tool("test_trigger_tool_change"))
          assert.is_true(S.wait_until(function() return #heard == 1 end, 3))
          assert.same({ "notifications/tools/list_changed" }, heard)
          assert(client:call_tool("test_trigger_tool_change"))
          client:close()
        end, 20)
      end)

      it("initializes again after a 404 (the server restarted), and DELETEs the session on close", function()
        S.run(function()
          local url, child = everything()
          local client, wire = connect{ url = url, era = "legacy" }
          assert.same("This is a simple text response for testing.", text(assert(client:call_tool("test_simple_text"))))
          local first = posts_of(wire, "tools/call")[1].headers["Mcp-Session-Id"]
          child:kill("sigkill")
          assert.is_true(S.wait_until(function() return child.exit_code ~= nil end, 3))
          everything(tonumber(url:match(":(%d+)/")))
          assert.same("This is a simple text response for testing.", text(assert(client:call_tool("test_simple_text"))))
          local calls = posts_of(wire, "tools/call")
          local second = calls[3].headers["Mcp-Session-Id"]
          assert.same({ 200, 404, 200, first, true }, { calls[1].status, calls[2].status, calls[3].status,
            calls[2].headers["Mcp-Session-Id"], second ~= first })
          assert.same(2, #posts_of(wire, "initialize"))
          client:close()
          local delete = wire[#wire]
          assert.same({ "DELETE", 204, second }, { delete.method, delete.status, delete.headers["Mcp-Session-Id"] })
          -- the session is gone: its id now gets 404
          local res = assert(http_client.request(S.loop, { url = url, method = "POST", body = '{"jsonrpc":"2.0",'
            .. '"id":1,"method":"ping"}', headers = { ["Content-Type"] = "application/json", ["Mcp-Session-Id"] = second,
            Accept = "application/json, text/event-stream" } }))
          assert.same(404, res.status)
        end, 20)
      end)
    end
  end)
end

describe("jrpc.mcp.client over HTTP: versions and the era cache", function()
  it("retries once on -32022 with a version from supported", function()
    S.run(function()
      local client, wire = connect{ url = everything(), era = "modern", version = "2099-01-01" }
      assert.same("This is a simple text response for testing.", text(assert(client:call_tool("test_simple_text"))))
      local calls = posts_of(wire, "tools/call")
      assert.same({ 400, "2099-01-01", 200, "2026-07-28" }, { calls[1].status,
        calls[1].headers["MCP-Protocol-Version"], calls[2].status, calls[2].headers["MCP-Protocol-Version"] })
      client:close()
    end, 20)
  end)

  it("learns a tool's x-mcp-header marks when a call before any tools/list gets -32020", function()
    S.run(function()
      local client, wire = connect{ url = everything(), era = "modern" }
      assert.same("region eu", text(assert(client:call_tool("test_custom_headers", { region = "eu" }))))
      assert.same({ "POST tools/call 400", "POST tools/list 200", "POST tools/call 200" }, summary(wire))
      assert.same({ nil, "eu" }, { wire[1].headers["Mcp-Param-Region"], wire[3].headers["Mcp-Param-Region"] })
      -- known now: the next call carries its header at once
      assert.same("region us", text(assert(client:call_tool("test_custom_headers", { region = "us" }))))
      assert.same({ 4, "POST tools/call 200", "us" }, { #wire, summary(wire)[4], wire[4].headers["Mcp-Param-Region"] })
      client:close()
    end, 20)
  end)

  it("caches a detected verdict per origin: the next client does not probe", function()
    S.run(function()
      local url = everything()
      local a, wire_a = connect{ url = url }
      assert.same("modern", assert(a:era()).era)
      local b, wire_b = connect{ url = url }
      assert.same({ "modern", "jrpc-everything-server" }, { assert(b:era()).era, b:era().server_info.name })
      assert.same({ { "POST server/discover 200" }, {} }, { summary(wire_a), summary(wire_b) })
      a:close()
      b:close()
    end, 20)
  end)
end)

-- }======================================================================

-- {======================================================================
-- @modelcontextprotocol/server-everything, Streamable HTTP (legacy only)
-- =======================================================================

describe("jrpc.mcp.client over HTTP against @modelcontextprotocol/server-everything", function()
  it("falls back to initialize on its 400, calls with progress, answers sampling, DELETEs", function()
    assert.truthy(io.open(NPM_EVERYTHING), "run: make node-deps")
    S.run(function()
      local port = start("node", { "-r", "./spec/mcp/listen_loopback.cjs", NPM_EVERYTHING, "streamableHttp" },
        "listening on 127%.0%.0%.1:(%d+)\n", { PORT = "0", PATH = os.getenv("PATH") })
      local asked, opts = user()
      opts.url = ("http://127.0.0.1:%s/mcp"):format(port)
      local client, wire = connect(opts)
      local verdict = assert(client:era())
      assert.same({ "legacy", "2025-11-25", "mcp-servers/everything" },
        { verdict.era, verdict.version, verdict.server_info.name })
      assert.same("echo", assert(client:list_tools())[1].name)
      assert.same({ "POST server/discover 400", "POST initialize 200", "POST notifications/initialized 202",
        "GET - 200", "POST tools/list 200" }, summary(wire))
      assert.same({ content = { { type = "text", text = "Echo: hi" } } }, assert(client:call_tool("echo", { message = "hi" })))
      local seen = {}
      local long = assert(client:call_tool("trigger-long-running-operation", { duration = 0.3, steps = 3 },
        { on_progress = function(p, total) seen[#seen + 1] = p .. "/" .. total end }))
      assert.same({ "Long running operation completed. Duration: 0.3 seconds, Steps: 3.", { "1/3", "2/3", "3/3" } },
        { text(long), seen })
      assert.matches('"text": "Paris"', text(assert(client:call_tool("trigger-sampling-request", { prompt = "Capital?" }))),
        1, true)
      assert.same({ "sampling: Resource trigger-sampling-request context: Capital?" }, asked)
      client:close()
      local delete = wire[#wire]
      assert.same({ "DELETE", 200, posts_of(wire, "tools/call")[1].headers["Mcp-Session-Id"] },
        { delete.method, delete.status, delete.headers["Mcp-Session-Id"] })
    end, 30)
  end)
end)

-- }======================================================================

-- {======================================================================
-- HTTPS: the everything server behind node's https with the test CA
-- =======================================================================

describe("jrpc.mcp.client over HTTPS", function()
  teardown(T.cleanup)

  local function proxy()
    local target = everything()
    local d = T.pki().dir
    local port, _, log = start("node", { "spec/mcp/https_proxy.js", d .. "/srv.key", d .. "/srv.pem",
      target:match(":(%d+)/") }, "listening (%d+)\n", { PATH = os.getenv("PATH") })
    return ("https://localhost:%s/mcp"):format(port), log
  end

  it("works when the CA is trusted with ca_file, and sends the Authorization header", function()
    S.run(function()
      local url, log = proxy()
      local client = connect{ url = url, ca_file = T.pki().ca, headers = { Authorization = "Bearer spec-token" } }
      assert.same("modern", assert(client:era()).era)
      local seen = {}
      assert.same("Progress test completed", text(assert(client:call_tool("test_tool_with_progress", {}, {
        on_progress = function(p) seen[#seen + 1] = p end }))))
      assert.same({ 0, 50, 100 }, seen)
      client:close()
      assert.same("POST Bearer spec-token\nPOST Bearer spec-token\n", log.text:match("\n(.*)$"))
    end, 20)
  end)

  it("refuses an untrusted certificate with libssl's reason, and does not fall back", function()
    S.run(function()
      local url, log = proxy()
      local client, wire = connect{ url = url }
      local verdict, err = client:era()
      assert.same({ nil, "http", url:match("^(https://[^/]+)") .. ": certificate verify failed: "
        .. "unable to get local issuer certificate" }, { verdict, err.code, err.message })
      assert.same({ "POST server/discover nil" }, summary(wire))
      client:close()
      assert.is_nil(log.text:find("POST", 1, true))
    end, 20)
  end)
end)

-- }======================================================================

-- {======================================================================
-- Header values: the client's spelling is what the server's check decodes
-- =======================================================================

describe("jrpc.mcp.http_headers, the client's side", function()
  local hh = require "jrpc.mcp.http_headers"

  it("spells values plainly when safe, else with the base64 sentinel, and decode_value takes them back", function()
    local cases = {
      { "us-west1", "us-west1" }, { "", "" }, { "héllo", "=?base64?aMOpbGxv?=" }, { " x", "=?base64?IHg=?=" },
      { "x\t", "=?base64?eAk=?=" }, { "a\nb", "=?base64?YQpi?=" },
      { "=?base64?eA==?=", "=?base64?PT9iYXNlNjQ/ZUE9PT89?=" },  -- a plain value that reads as a sentinel
    }
    for _, c in ipairs(cases) do
      assert.same({ c[2], c[1] }, { hh.encode_value(c[1]), hh.decode_value(hh.encode_value(c[1])) })
    end
    assert.same({ "42", "-7", "true", "false" },
      { hh.encode_value(42), hh.encode_value(-7), hh.encode_value(true), hh.encode_value(false) })
    for _, s in ipairs{ "f", "fo", "foo", "foob", "fooba", "foobar" } do  -- RFC 4648's vectors
      assert.same(s, hh.base64_decode(hh.base64_encode(s)))
    end
    assert.same("Zm9vYmFy", hh.base64_encode("foobar"))
    assert.same("Zm9vYg==", hh.base64_encode("foob"))
  end)

  it("makes the headers the server's check accepts for a message", function()
    local schema = { type = "object", properties = { region = { type = "string", ["x-mcp-header"] = "Region" },
      n = { type = "integer", ["x-mcp-header"] = "N" }, gone = { type = "string", ["x-mcp-header"] = "Gone" } } }
    local mirrored = assert(hh.mirrored_arguments(schema))
    local msg = { jsonrpc = "2.0", id = 1, method = "tools/call", params = { name = "t",
      arguments = { region = "ünïcode", n = 3, gone = jrpc.null },
      _meta = { ["io.modelcontextprotocol/protocolVersion"] = "2026-07-28" } } }
    local h = hh.for_message(msg, mirrored)
    assert.same({ ["MCP-Protocol-Version"] = "2026-07-28", ["Mcp-Method"] = "tools/call", ["Mcp-Name"] = "t",
      ["Mcp-Param-Region"] = "=?base64?w7xuw69jb2Rl?=", ["Mcp-Param-N"] = "3" }, h)
    local lower = {}
    for k, v in pairs(h) do lower[k:lower()] = v end
    assert.is_nil(hh.check(lower, msg, mirrored))
  end)
end)

-- }======================================================================

-- {======================================================================
-- Answering a legacy server's requests: the peer's rule
-- =======================================================================

describe("jrpc.mcp.client over HTTP answers a legacy server's requests as a jrpc peer", function()
  -- a server whose tool asks the client's model, and returns what it got back
  local function sampling_server()
    local srv = require("jrpc.mcp").server{ name = "answer-spec", version = "1.0.0" }
    srv:tool{ name = "sample", description = "asks the client's model", handler = function(_, ctx)
      local result, err = ctx:request("sampling/createMessage", { maxTokens = 10,
        messages = { { role = "user", content = { type = "text", text = "hi" } } } })
      if result then return "answered " .. result.content.text end
      return jrpc.encode({ err.code, err.message, err.data == nil })
    end }
    return assert(srv:serve_http(S.loop, { port = 0, peer = { on_error = function() end } }))
  end

  local function sample(on_sampling)
    local http = sampling_server()
    local logged = {}
    local client = assert(mcp_client.connect(S.loop, { url = ("http://127.0.0.1:%d/mcp"):format(http.port),
      era = "legacy", on_sampling = on_sampling, on_error = function(msg) logged[#logged + 1] = msg end }))
    local out = text(assert(client:call_tool("sample")))
    client:close()
    http:close()
    return out, logged
  end

  it("a callback's plain error is -32603 \"Internal error\" without its text, which is logged here", function()
    S.run(function()
      local out, logged = sample(function() error("secret detail of the callback") end)
      assert.same('[-32603,"Internal error",true]', out)
      assert.same(1, #logged)
      assert.matches('^method "sampling/createMessage" failed: spec/mcp_client_http_spec%.lua:%d+: '
        .. "secret detail of the callback$", logged[1])
    end, 20)
  end)

  it("a jrpc error raised by the callback goes to the server as it is; a result is the answer", function()
    S.run(function()
      assert.same('[-1,"the user declined",true]', (sample(function() jrpc.error(-1, "the user declined") end)))
      assert.same("answered yes", (sample(function()
        return { role = "assistant", model = "m", content = { type = "text", text = "yes" } }
      end)))
    end, 20)
  end)
end)

-- }======================================================================
