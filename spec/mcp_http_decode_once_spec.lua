-- A Streamable HTTP POST body is decoded once, by the peer's codec: the
-- transport's checks read that message and the peer dispatches it (no
-- second decode), and replies are routed by core.peek, never decoded. A
-- body is one whole message, so JSON spread over lines is served. In
-- process, on fuzz/fake_luv.lua (each fake connection is fed request
-- bytes and collects what the real jrpc.uv.http server writes).
local fake_luv = dofile("fuzz/fake_luv.lua")
local jrpc = require "jrpc"
local core = require "jrpc.core"
local mcp = require "jrpc.mcp"
local F = dofile("spec/fake_http_support.lua")
local post, status_of, body_of = F.post, F.status_of, F.body_of

local MODERN = { ["MCP-Protocol-Version"] = "2026-07-28" }
local META = '{"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
  .. '"io.modelcontextprotocol/clientCapabilities":{}}'

local function with(t, more)
  local out = {}
  for k, v in pairs(t) do out[k] = v end
  for k, v in pairs(more) do out[k] = v end
  return out
end


describe("jrpc.mcp Streamable HTTP decodes a body once", function()
  local uv, http

  before_each(function()
    uv = fake_luv.new()
    local srv = mcp.server{ name = "once", version = "1.0.0" }
    srv:tool{ name = "count", description = "Counts the items",
      input_schema = { type = "object", properties = { items = { type = "array" } } },
      handler = function(args) return "items: " .. #args.items end }
    srv:tool{ name = "fail", description = "Fails", handler = function() error("no", 0) end }
    http = assert(srv:serve_http({ uv = uv }, { port = 8080 }))
  end)

  after_each(function() http:close() end)

  it("serves a body whose JSON spans several lines", function()
    local body = '{\n  "jsonrpc": "2.0",\n  "id": 3,\n  "method": "tools/call",\n  "params": {\n'
      .. '    "name": "count",\n    "arguments": { "items": [1, 2,\n 3] },\n    "_meta": ' .. META .. '\n  }\n}\n'
    local c = post(uv, http, body, with(MODERN, { ["Mcp-Method"] = "tools/call", ["Mcp-Name"] = "count" }))
    assert.are.equal(200, status_of(c.out))
    local reply = jrpc.decode(body_of(c.out))
    assert.are.same({ jsonrpc = "2.0", id = 3, content = { { type = "text", text = "items: 3" } } },
      { jsonrpc = reply.jsonrpc, id = reply.id, content = reply.result.content })
  end)

  it("never calls core.decode for a request and its result", function()
    local items = {}
    for i = 1, 8000 do items[i] = i end  -- under large_body_bytes: served at once
    local body = jrpc.encode{ jsonrpc = "2.0", id = "big", method = "tools/call",
      params = { name = "count", arguments = { items = items }, _meta = jrpc.decode(META) } }
    local decode, calls = core.decode, 0
    core.decode = function(...) calls = calls + 1; return decode(...) end
    local ok, c = pcall(post, uv, http, body, with(MODERN, { ["Mcp-Method"] = "tools/call", ["Mcp-Name"] = "count" }))
    core.decode = decode
    assert(ok, c)
    assert.are.equal(200, status_of(c.out))
    local out = body_of(c.out)
    assert.are.equal(',"id":"big"}', out:sub(-12))
    assert.are.same({ { type = "text", text = "items: 8000" } }, jrpc.decode(out).result.content)
    assert.are.equal(0, calls)
  end)

  it("answers a body that is not one JSON value -32700 with status 400", function()
    local c = post(uv, http, '{"jsonrpc":"2.0","id":1,"method":"tools/list"}{}', with(MODERN, { ["Mcp-Method"] = "tools/list" }))
    assert.are.equal(400, status_of(c.out))
    assert.are.same({ jsonrpc = "2.0", id = jrpc.null, error = { code = -32700, message = "Parse error" } },
      jrpc.decode(body_of(c.out)))
  end)

  it("answers a response posted to it -32600 with its id", function()
    local c = post(uv, http, '{"jsonrpc":"2.0","id":9,"result":{}}', MODERN)
    assert.are.equal(400, status_of(c.out))
    assert.are.same({ jsonrpc = "2.0", id = 9, error = { code = -32600,
      message = "Invalid Request: expected one request or notification" } }, jrpc.decode(body_of(c.out)))
  end)

  it("still sets the status from an error reply's code (404 for an unknown method)", function()
    local c = post(uv, http, '{"jsonrpc":"2.0","id":4,"method":"nope/nothing","params":{"_meta":' .. META .. '}}',
      with(MODERN, { ["Mcp-Method"] = "nope/nothing" }))
    assert.are.equal(404, status_of(c.out))
    assert.are.same({ code = -32601, message = "Method not found" }, jrpc.decode(body_of(c.out)).error)
  end)
end)

describe("jrpc.mcp legacy HTTP sessions decode a body once", function()
  local uv, http, sid

  before_each(function()
    uv = fake_luv.new()
    local srv = mcp.server{ name = "once", version = "1.0.0" }
    srv:tool{ name = "slow", description = "Reports progress, then answers", handler = function(_, ctx)
      ctx:progress(1, 2)
      return "done"
    end }
    http = assert(srv:serve_http({ uv = uv }, { port = 8080 }))
    local init = post(uv, http, '{\n"jsonrpc":"2.0",\n"id":1,\n"method":"initialize","params":{"protocolVersion":'
      .. '"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}')
    assert.are.equal(200, status_of(init.out))
    sid = init.out:lower():match("\r\nmcp%-session%-id: (%x+)\r\n")
    assert.is_string(sid)
    local done = post(uv, http, '{"jsonrpc":"2.0","method":"notifications/initialized"}', { ["MCP-Session-Id"] = sid })
    assert.are.equal(202, status_of(done.out))
  end)

  after_each(function() http:close() end)

  it("routes the reply and the progress of a request whose id has escapes to its own POST", function()
    local c = post(uv, http, '{"jsonrpc":"2.0","id":"a\\u0062\\"c","method":"tools/call",'
      .. '"params":{"name":"slow","arguments":{},"_meta":{"progressToken":"t1"}}}', { ["MCP-Session-Id"] = sid })
    assert.are.equal(200, status_of(c.out))
    local events = {}
    for data in c.out:gmatch("\ndata: ([^\n]+)\n") do events[#events + 1] = data end
    assert.are.equal(2, #events)
    assert.are.same({ jsonrpc = "2.0", method = "notifications/progress",
      params = { progressToken = "t1", progress = 1, total = 2 } }, jrpc.decode(events[1]))
    -- the reply carries the id exactly as it came
    assert.are.equal(',"id":"a\\u0062\\"c"}', events[2]:sub(-19))
    assert.are.same({ content = { { type = "text", text = "done" } } }, jrpc.decode(events[2]).result)
  end)
end)
