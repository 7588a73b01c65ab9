-- jrpc.mcp's server on a jrpc peer, message by message: what goes out for
-- each request of either era (decoded and compared whole: key order is the
-- interpreter's table order, not part of the contract).
local jrpc = require "jrpc"
local mcp = require "jrpc.mcp"

local V = "2026-07-28"
local INFO = { name = "spec", version = "0.1.0" }
local SERVER_META = { ["io.modelcontextprotocol/serverInfo"] = INFO }

local function modern_meta(extra)
  local m = { ["io.modelcontextprotocol/protocolVersion"] = V,
    ["io.modelcontextprotocol/clientCapabilities"] = jrpc.object() }
  for k, v in pairs(extra or {}) do m[k] = v end
  return m
end

-- A served peer and a function that sends one request and returns what came out, decoded.
local function setup(opts)
  local server = mcp.server(opts or { name = "spec", version = "0.1.0" })
  local out = {}
  local peer = jrpc.peer{ profile = "mcp", role = "server", on_error = function() end,
    send = function(bytes) for line in bytes:gmatch("[^\n]+") do out[#out + 1] = assert(jrpc.decode(line)) end end }
  server:attach(peer)
  local id = 0
  local function call(method, params)
    id = id + 1
    out = {}
    peer:receive(assert(jrpc.encode{ jsonrpc = "2.0", id = id, method = method, params = params }) .. "\n")
    return out
  end
  return server, call, peer
end

describe("jrpc.mcp server, 2026-07-28", function()
  local server, call = setup()
  server:tool{ name = "add", description = "Adds",
    input_schema = '{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}',
    handler = function(args) return tostring(args.a + args.b) end }
  server:tool{ name = "boom", description = "Fails", handler = function() error("/secret/path.lua:1: oops") end }
  server:tool{ name = "wire", description = "Raises a jrpc error", handler = function() jrpc.error(-32000, "custom") end }
  server:tool{ name = "talk", description = "Progress and logs", handler = function(_, ctx)
    ctx:progress(1, 2, "half"); ctx:log("debug", "quiet"); ctx:log("warning", "loud")
    return { content = { mcp.text("done") }, structuredContent = { ok = true } }
  end }
  server:resource{ uri = "mem://a", name = "a", mime_type = "text/plain", ttl_ms = 5000, cache_scope = "public",
    handler = function() return "A" end }
  server:resource_template{ uri_template = "mem://files/{+path}", name = "files", handler = function(uri, vars)
    return { uri = uri, text = vars.path } end }
  server:prompt{ name = "p", description = "P", arguments = { { name = "x", required = true } },
    handler = function(args) return "x is " .. args.x end }
  server:completion("prompt", "p", function(name, value) return { name .. ":" .. value } end)

  it("answers server/discover", function()
    assert.same({ { jsonrpc = "2.0", id = 1, result = { supportedVersions = { V }, resultType = "complete",
      capabilities = { tools = { listChanged = true }, resources = { subscribe = true, listChanged = true },
        prompts = { listChanged = true }, completions = {}, logging = {} },
      ttlMs = 0, cacheScope = "private", _meta = SERVER_META } } },
      call("server/discover", { _meta = modern_meta() }))
  end)

  it("validates _meta: -32602, -32022, unknown log level", function()
    local r = call("tools/list", {})
    assert.same({ code = -32602, message = "Invalid params: _meta is required" }, r[1].error)
    r = call("tools/list", { _meta = { ["io.modelcontextprotocol/protocolVersion"] = V } })
    assert.equal(-32602, r[1].error.code)
    r = call("tools/list", { _meta = modern_meta{ ["io.modelcontextprotocol/protocolVersion"] = "v999" } })
    assert.same({ code = -32022, message = "Unsupported protocol version",
      data = { supported = { V }, requested = "v999" } }, r[1].error)
    r = call("tools/list", { _meta = modern_meta{ ["io.modelcontextprotocol/logLevel"] = "loud" } })
    assert.equal(-32602, r[1].error.code)
  end)

  it("refuses the legacy-only methods with modern _meta (-32601)", function()
    for _, m in ipairs{ "initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe" } do
      assert.same({ code = -32601, message = "Method not found" }, call(m, { _meta = modern_meta() })[1].error)
    end
  end)

  it("lists with resultType, ttlMs, cacheScope and serverInfo", function()
    local r = call("tools/list", { _meta = modern_meta() })[1].result
    assert.same({ "add", "boom", "wire", "talk" }, { r.tools[1].name, r.tools[2].name, r.tools[3].name, r.tools[4].name })
    assert.same({ type = "object", properties = { a = { type = "number" }, b = { type = "number" } },
      required = { "a", "b" } }, r.tools[1].inputSchema)
    assert.same({ "complete", 0, "private", SERVER_META }, { r.resultType, r.ttlMs, r.cacheScope, r._meta })
  end)

  it("pages with opaque cursors", function()
    local s, c = setup{ name = "spec", version = "0.1.0", page_size = 2 }
    for i = 1, 3 do s:prompt{ name = "p" .. i, handler = function() return "" end } end
    local r1 = c("prompts/list", { _meta = modern_meta() })[1].result
    assert.same({ { name = "p1" }, { name = "p2" } }, r1.prompts)
    local r2 = c("prompts/list", { _meta = modern_meta(), cursor = r1.nextCursor })[1].result
    assert.same({ { name = "p3" } }, r2.prompts)
    assert.is_nil(r2.nextCursor)
    assert.equal(-32602, c("prompts/list", { _meta = modern_meta(), cursor = "bogus" })[1].error.code)
  end)

  it("calls tools: text, argument checks, isError without leaks, wire errors", function()
    assert.same({ content = { { type = "text", text = "5" } }, resultType = "complete", _meta = SERVER_META },
      call("tools/call", { _meta = modern_meta(), name = "add", arguments = { a = 2, b = 3 } })[1].result)
    -- arguments that do not fit are a result the model reads (SEP-1303)
    assert.same({ content = { { type = "text", text = 'Invalid arguments for tool add: missing required property "b"' } },
      isError = true, resultType = "complete", _meta = SERVER_META },
      call("tools/call", { _meta = modern_meta(), name = "add", arguments = { a = 2 } })[1].result)
    assert.same({ content = { { type = "text",
      text = 'Invalid arguments for tool add: /a: expected number, got string' } }, isError = true,
      resultType = "complete", _meta = SERVER_META },
      call("tools/call", { _meta = modern_meta(), name = "add", arguments = { a = "2", b = 3 } })[1].result)
    assert.same({ content = { { type = "text", text = "Tool boom failed: internal error" } }, isError = true,
      resultType = "complete", _meta = SERVER_META }, call("tools/call", { _meta = modern_meta(), name = "boom" })[1].result)
    assert.same({ code = -32000, message = "custom" }, call("tools/call", { _meta = modern_meta(), name = "wire" })[1].error)
    assert.equal(-32602, call("tools/call", { _meta = modern_meta(), name = "nope" })[1].error.code)
  end)

  it("sends progress only with a token, logs only at the requested level", function()
    local r = call("tools/call", { _meta = modern_meta(), name = "talk" })
    assert.equal(1, #r)
    r = call("tools/call", { name = "talk", _meta = modern_meta{ progressToken = "t",
      ["io.modelcontextprotocol/logLevel"] = "info" } })
    assert.same({ jsonrpc = "2.0", method = "notifications/progress",
      params = { progressToken = "t", progress = 1, total = 2, message = "half" } }, r[1])
    assert.same({ jsonrpc = "2.0", method = "notifications/message", params = { level = "warning", data = "loud" } }, r[2])
    assert.same({ content = { { type = "text", text = "done" } }, structuredContent = { ok = true },
      resultType = "complete", _meta = SERVER_META }, r[3].result)
  end)

  it("reads resources and templates, with per-resource cache policy", function()
    assert.same({ contents = { { uri = "mem://a", mimeType = "text/plain", text = "A" } }, ttlMs = 5000,
      cacheScope = "public", resultType = "complete", _meta = SERVER_META },
      call("resources/read", { _meta = modern_meta(), uri = "mem://a" })[1].result)
    assert.same({ { uri = "mem://files/x/y.txt", text = "x/y.txt" } },
      call("resources/read", { _meta = modern_meta(), uri = "mem://files/x/y.txt" })[1].result.contents)
    assert.same({ code = -32602, message = "Resource not found", data = { uri = "mem://zz" } },
      call("resources/read", { _meta = modern_meta(), uri = "mem://zz" })[1].error)
  end)

  it("gets prompts and completes their arguments", function()
    assert.same({ messages = { { role = "user", content = { type = "text", text = "x is 1" } } },
      resultType = "complete", _meta = SERVER_META },
      call("prompts/get", { _meta = modern_meta(), name = "p", arguments = { x = "1" } })[1].result)
    assert.equal(-32602, call("prompts/get", { _meta = modern_meta(), name = "p" })[1].error.code)
    assert.same({ completion = { values = { "x:ab" } }, resultType = "complete", _meta = SERVER_META },
      call("completion/complete", { _meta = modern_meta(), ref = { type = "ref/prompt", name = "p" },
        argument = { name = "x", value = "ab" } })[1].result)
  end)

  it("answers -32601 for what it does not offer", function()
    local _, c = setup()
    assert.equal(-32601, c("tools/list", { _meta = modern_meta() })[1].error.code)
    assert.same({ logging = {} }, c("server/discover", { _meta = modern_meta() })[1].result.capabilities)
  end)
end)

describe("jrpc.mcp server, 2025-11-25 on the same kind of connection", function()
  it("negotiates with initialize, then serves without _meta", function()
    local server, call = setup()
    server:tool{ name = "t", description = "T", handler = function(_, ctx)
      ctx:log("info", "hello"); return ctx.client.info.name .. " " .. ctx.client.version end }
    assert.equal(-32602, call("tools/list", {})[1].error.code)
    assert.same({}, call("ping")[1].result)
    assert.same({ protocolVersion = "2025-11-25", capabilities = { logging = {}, tools = { listChanged = true } },
      serverInfo = INFO },
      call("initialize", { protocolVersion = "2099-01-01", capabilities = {}, clientInfo = { name = "c", version = "1" } })[1]
        .result)
    assert.same({ tools = { { name = "t", description = "T", inputSchema = { type = "object" } } } },
      call("tools/list", {})[1].result)
    local r = call("tools/call", { name = "t" })
    assert.same({ level = "info", data = "hello" }, r[1].params)
    assert.same({ content = { { type = "text", text = "c 2025-11-25" } } }, r[2].result)
    assert.same({}, call("logging/setLevel", { level = "error" })[1].result)
    assert.equal(1, #call("tools/call", { name = "t" }))
    -- a modern request on the same connection is still served statelessly
    assert.equal("complete", call("tools/list", { _meta = modern_meta() })[1].result.resultType)
  end)

  it("echoes a supported version and answers -32002 for an unknown resource", function()
    local server, call = setup()
    server:resource{ uri = "mem://a", name = "a", handler = function() return "A" end }
    assert.equal("2025-06-18", call("initialize", { protocolVersion = "2025-06-18", capabilities = {} })[1]
      .result.protocolVersion)
    assert.same({ code = -32002, message = "Resource not found", data = { uri = "mem://b" } },
      call("resources/read", { uri = "mem://b" })[1].error)
    assert.same({}, call("resources/subscribe", { uri = "mem://a" })[1].result)
  end)
end)

describe("jrpc.mcp registration", function()
  it("refuses bad definitions where they are written", function()
    local s = mcp.server{ name = "x", version = "1" }
    assert.has_error(function() s:tool{ name = "bad name!", handler = print } end)
    assert.has_error(function() s:tool{ name = "t", input_schema = "{nope", handler = print } end)
    assert.has_error(function() s:resource_template{ uri_template = "a://b", name = "n", handler = print } end)
    assert.has_error(function() s:completion("tool", "t", print) end)
    assert.has_error(function() mcp.server{ name = "x", version = "1", cache_scope = "shared" } end)
  end)
end)
