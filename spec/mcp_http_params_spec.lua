-- jrpc.mcp over Streamable HTTP (2026-07-28): tool arguments a schema marks
-- with x-mcp-header are mirrored in Mcp-Param-{Name} headers, which must
-- repeat the body (after the =?base64?...?= sentinel is decoded) or the
-- POST is 400 with -32020; and the marks' own rules, checked when a tool is
-- registered. Driven by curl on 127.0.0.1.
local S = dofile("spec/uv_support.lua")
local H = dofile("spec/mcp_http_support.lua")(S)
local jrpc = require "jrpc"
local mcp = require "jrpc.mcp"

local loop = S.loop

local INFO = { name = "params-spec", version = "1.0.0" }

local WEATHER = { type = "object", required = { "region" }, properties = {
  region = { type = "string", ["x-mcp-header"] = "Region" },
  days = { type = "integer", ["x-mcp-header"] = "Days" },
  metric = { type = "boolean", ["x-mcp-header"] = "Metric" },
  where = { type = "object", properties = { city = { type = "string", ["x-mcp-header"] = "City" } } },
  query = { type = "string" },  -- not mirrored
} }

local function new_server()
  local srv = mcp.server(INFO)
  srv:tool{ name = "weather", description = "mirrors its arguments", input_schema = WEATHER,
    handler = function(args) return "weather for " .. args.region end }
  srv:tool{ name = "plain", description = "nothing mirrored", handler = function() return "plain" end }
  return assert(srv:serve_http(loop, { port = 0, peer = { on_error = function() end } }))
end

local function call(id, name, args, meta)
  return jrpc.encode{ jsonrpc = "2.0", id = id, method = "tools/call",
    params = { name = name, arguments = args, _meta = meta or H.META } }
end

-- tools/call of weather with `args` and the Mcp-Param headers in `params`.
local function weather(port, id, args, params, version)
  local headers = H.modern_headers("tools/call", "weather", params)
  if version then headers[3] = "MCP-Protocol-Version: " .. version end
  local status, head, body = H.post(port, headers, call(id, "weather", args,
    version and { ["io.modelcontextprotocol/protocolVersion"] = version,
      ["io.modelcontextprotocol/clientCapabilities"] = {} }))
  return status, head["content-type"], jrpc.decode(body)
end

local function answered(id, text)
  return { jsonrpc = "2.0", id = id, result = { content = { { type = "text", text = text } },
    resultType = "complete", _meta = { ["io.modelcontextprotocol/serverInfo"] = INFO } } }
end

local function mismatch(id, message)
  return { jsonrpc = "2.0", id = id, error = { code = -32020, message = "Header mismatch: " .. message } }
end

describe("jrpc.mcp Mcp-Param headers", function()
  after_each(S.cleanup)

  it("accepts headers that repeat the body: plain, base64, integers as numbers, nested, any name case", function()
    S.run(function()
      local http = new_server()
      local p = http.port
      assert.are.same({ 200, "application/json", answered(1, "weather for eu-west") }, { weather(p, 1,
        { region = "eu-west", days = 3, metric = true, where = { city = "Oslo" }, query = "rain" },
        { "Mcp-Param-Region: eu-west", "Mcp-Param-Days: 3", "Mcp-Param-Metric: true", "Mcp-Param-City: Oslo" }) })
      -- non-ASCII and surrounding spaces travel in the sentinel, decoded first
      assert.are.same({ 200, "application/json", answered(2, "weather for Zürich") }, { weather(p, 2,
        { region = "Zürich" }, { "Mcp-Param-Region: =?base64?WsO8cmljaA==?=" }) })
      assert.are.same({ 200, "application/json", answered(3, "weather for  padded ") }, { weather(p, 3,
        { region = " padded " }, { "Mcp-Param-Region: =?base64?IHBhZGRlZCA=?=" }) })
      -- a sentinel may spell an integer too; "007" is 7 (compared as numbers)
      assert.are.same({ 200, "application/json", answered(4, "weather for eu") }, { weather(p, 4,
        { region = "eu", days = 7 }, { "Mcp-Param-Region: eu", "Mcp-Param-Days: 007" }) })
      assert.are.same({ 200, "application/json", answered(5, "weather for eu") }, { weather(p, 5,
        { region = "eu", days = 7 }, { "mcp-param-region: eu", "MCP-PARAM-DAYS: =?base64?Nw==?=" }) })
      -- without the full =?base64?...?= wrapper a value is literal
      assert.are.same({ 200, "application/json", answered(6, "weather for =?base64?SGVsbG8=") }, { weather(p, 6,
        { region = "=?base64?SGVsbG8=" }, { "Mcp-Param-Region: =?base64?SGVsbG8=" }) })
      assert.are.same({ 200, "application/json", answered(7, "weather for SGVsbG8=") }, { weather(p, 7,
        { region = "SGVsbG8=" }, { "Mcp-Param-Region: SGVsbG8=" }) })
      -- Mcp-Param headers no mark names mean nothing, and are ignored
      assert.are.same({ 200, "application/json", answered(8, "weather for eu") }, { weather(p, 8,
        { region = "eu", query = "q" }, { "Mcp-Param-Region: eu", "Mcp-Param-Query: q", "Mcp-Param-Other: x" }) })
      http:close()
    end)
  end)

  it("is 400 with -32020 when a header is missing, extra, different or badly encoded", function()
    S.run(function()
      local http = new_server()
      local p = http.port
      local function refused(id, args, params, message)
        assert.are.same({ 400, "application/json", mismatch(id, message) }, { weather(p, id, args, params) })
      end
      refused(1, { region = "eu" }, {}, "Mcp-Param-Region header is required: the body has the argument")
      refused(2, { region = "eu" }, { "Mcp-Param-Region: eu", "Mcp-Param-Days: 3" },
        "Mcp-Param-Days header names an argument the body does not have")
      refused(3, { region = "eu" }, { "Mcp-Param-Region: us" }, "Mcp-Param-Region header does not match the body")
      -- values are case-sensitive; booleans are true/false; integers decimal
      refused(4, { region = "eu" }, { "Mcp-Param-Region: EU" }, "Mcp-Param-Region header does not match the body")
      refused(5, { region = "eu", metric = true }, { "Mcp-Param-Region: eu", "Mcp-Param-Metric: TRUE" },
        "Mcp-Param-Metric header does not match the body")
      refused(6, { region = "eu", days = 7 }, { "Mcp-Param-Region: eu", "Mcp-Param-Days: 7.0" },
        "Mcp-Param-Days header does not match the body")
      refused(7, { region = "eu", where = { city = "Oslo" } }, { "Mcp-Param-Region: eu", "Mcp-Param-City: Bergen" },
        "Mcp-Param-City header does not match the body")
      -- a value that needs the sentinel, sent plain: non-ASCII bytes
      refused(8, { region = "Zürich" }, { "Mcp-Param-Region: Zürich" },
        "Mcp-Param-Region header has invalid characters or bad base64")
      -- base64 without its padding, or with characters outside the alphabet
      refused(9, { region = "Hello" }, { "Mcp-Param-Region: =?base64?SGVsbG8?=" },
        "Mcp-Param-Region header has invalid characters or bad base64")
      refused(10, { region = "Hello" }, { "Mcp-Param-Region: =?base64?SGVs!!!bG8=?=" },
        "Mcp-Param-Region header has invalid characters or bad base64")
      -- the decoded bytes are what is compared: "Hello" is not "SGVsbG8="
      refused(11, { region = "SGVsbG8=" }, { "Mcp-Param-Region: =?base64?SGVsbG8=?=" },
        "Mcp-Param-Region header does not match the body")
      -- the same strict base64 for Mcp-Name: "weather" without its "=="
      local status, _, body = H.post(p, H.modern_headers("tools/call", "=?base64?d2VhdGhlcg?=",
        { "Mcp-Param-Region: eu" }), call(12, "weather", { region = "eu" }))
      assert.are.same({ 400, mismatch(12, "mcp-name header has invalid characters or bad base64") },
        { status, jrpc.decode(body) })
      status, _, body = H.post(p, H.modern_headers("tools/call", "=?base64?d2VhdGhlcg==?=",
        { "Mcp-Param-Region: eu" }), call(13, "weather", { region = "eu" }))
      assert.are.same({ 200, answered(13, "weather for eu") }, { status, jrpc.decode(body) })
      http:close()
    end)
  end)

  it("sends no header for a null argument, leaves other tools alone, and checks before the version", function()
    S.run(function()
      local http = new_server()
      local p = http.port
      -- null: no header expected, so the header check passes and the
      -- arguments check answers (days must be an integer: an isError result)
      local got_status, kind, answer = weather(p, 1, { region = "eu", days = jrpc.null }, { "Mcp-Param-Region: eu" })
      assert.are.same({ 200, "application/json", { { type = "text",
        text = 'Invalid arguments for tool weather: /days: expected integer, got null' } }, true },
        { got_status, kind, answer.result.content, answer.result.isError })
      -- a tool without marks, and an unknown tool, check no Mcp-Param header
      local status, _, body = H.post(p, H.modern_headers("tools/call", "plain", { "Mcp-Param-Region: x" }),
        call(2, "plain", {}))
      assert.are.same({ 200, answered(2, "plain") }, { status, jrpc.decode(body) })
      status, _, body = H.post(p, H.modern_headers("tools/call", "nope", { "Mcp-Param-Region: x" }),
        call(3, "nope", {}))
      assert.are.same({ 400, { jsonrpc = "2.0", id = 3, error = { code = -32602,
        message = "Invalid params: unknown tool nope" } } }, { status, jrpc.decode(body) })
      -- a version we do not serve, in header and body alike: the mismatch
      -- of an Mcp-Param header is found first (-32020), then the version
      assert.are.same({ 400, "application/json", mismatch(4, "Mcp-Param-Region header does not match the body") },
        { weather(p, 4, { region = "eu" }, { "Mcp-Param-Region: us" }, "2099-01-01") })
      assert.are.same({ 400, "application/json", { jsonrpc = "2.0", id = 5, error = { code = -32022,
        message = "Unsupported protocol version", data = { supported = { "2026-07-28" }, requested = "2099-01-01" } } } },
        { weather(p, 5, { region = "eu" }, { "Mcp-Param-Region: eu" }, "2099-01-01") })
      http:close()
    end)
  end)
end)

describe("jrpc.mcp x-mcp-header marks at registration", function()
  -- the error a tool with `props` as its input schema's properties raises
  -- (without the position error() puts first), or nil when it registers
  local function refusal(props, extra)
    local schema = { type = "object", properties = props }
    for k, v in pairs(extra or {}) do schema[k] = v end
    local ok, err = pcall(function()
      mcp.server(INFO):tool{ name = "t", description = "t", input_schema = schema, handler = function() end }
    end)
    if ok then return nil end
    return (tostring(err):gsub("^[^:]*:%d+: ", ""))
  end
  local function mark(type_, name) return { type = type_, ["x-mcp-header"] = name } end

  it("takes string, integer and boolean properties along properties paths", function()
    assert.is_nil(refusal{ a = mark("string", "A"), b = mark("integer", "B-2"), c = mark("boolean", "c.x_y~!") })
    assert.is_nil(refusal{ outer = { type = "object", properties = { inner = mark("string", "Inner") } } })
    -- a mark inside data (a default, an enum) marks nothing
    assert.is_nil(refusal{ a = { type = "object", default = { ["x-mcp-header"] = "X" } } })
    assert.is_nil(refusal({ a = { type = "string" } }, { examples = { { ["x-mcp-header"] = "X" } } }))
    -- JSON text schemas too
    local registered = pcall(function()
      mcp.server(INFO):tool{ name = "j", description = "j", handler = function() end,
        input_schema = '{"type":"object","properties":{"r":{"type":"string","x-mcp-header":"R"}}}' }
    end)
    assert.is_true(registered)
  end)

  it("refuses names that are not header tokens, duplicates, and other types", function()
    local BAD_NAME = 'tool t: x-mcp-header of property "a" must be a header-name token (RFC 9110)'
    for _, name in ipairs{ "", "My Region", "Region:1", "Région", "Region\t1", "Region\r\n1", 7 } do
      assert.are.equal(BAD_NAME, refusal{ a = mark("string", name) })
    end
    local BAD_TYPE = 'tool t: x-mcp-header of property "a": only a string, integer or boolean property may be mirrored'
    for _, t in ipairs{ "number", "object", "array", "null" } do
      assert.are.equal(BAD_TYPE, refusal{ a = mark(t, "A") })
    end
    assert.are.equal(BAD_TYPE, refusal{ a = { ["x-mcp-header"] = "A" } })
    assert.are.equal('tool t: x-mcp-header "Region" is declared twice (names are case-insensitive)',
      refusal{ a = mark("string", "Region"), b = { type = "object", properties = { c = mark("integer", "Region") } } })
    -- names differing in case only: whichever the walk meets second is named
    local err = refusal{ a = mark("string", "MyField"), b = mark("string", "myfield") }
    assert.are.equal('tool t: x-mcp-header "myfield" is declared twice (names are case-insensitive)',
      (err:gsub('"MyField"', '"myfield"')))
  end)

  it("refuses marks off the properties path: under items, anyOf, $defs, if/then, not", function()
    local function off(k) return ('tool t: x-mcp-header may be used only along properties, not under "%s"'):format(k) end
    assert.are.equal(off("items"), refusal{ a = { type = "array", items = mark("string", "A") } })
    assert.are.equal(off("anyOf"), refusal{ a = { anyOf = { mark("string", "A"), { type = "integer" } } } })
    assert.are.equal(off("$defs"), refusal({ a = { ["$ref"] = "#/$defs/x" } }, { ["$defs"] = { x = mark("string", "X") } }))
    assert.are.equal(off("then"), refusal({}, { ["if"] = { type = "object" }, ["then"] = { properties = { a = mark("string", "A") } } }))
    assert.are.equal(off("not"), refusal{ a = { ["not"] = mark("string", "A") } })
  end)
end)
