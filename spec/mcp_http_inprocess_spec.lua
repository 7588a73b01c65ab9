-- jrpc.mcp's Streamable HTTP server in process, on fuzz/fake_luv.lua (no
-- sockets: each fake connection is fed request bytes and collects what the
-- real jrpc.uv.http server writes). For orderings a real client can hardly
-- produce on cue: here, a legacy session's second POST reusing the id of a
-- request still in flight.
local fake_luv = dofile("fuzz/fake_luv.lua")
local jrpc = require "jrpc"
local mcp = require "jrpc.mcp"

local F = dofile("spec/fake_http_support.lua")
local status_of, body_of = F.status_of, F.body_of

-- One POST of `msg` (a table, encoded) on a new fake connection.
local function post(uv, http, msg, headers)
  return F.post(uv, http, jrpc.encode(msg), headers)
end

describe("jrpc.mcp legacy HTTP sessions, in process", function()
  local uv, http, sid

  before_each(function()
    uv = fake_luv.new()
    local srv = mcp.server{ name = "inprocess", version = "1.0.0" }
    srv:tool{ name = "ask", description = "Asks the client for its roots", handler = function(_, ctx)
      local roots = assert(ctx:request("roots/list", {}))
      return "roots: " .. #roots.roots
    end }
    http = assert(srv:serve_http({ uv = uv }, { port = 8080 }))
    local init = post(uv, http, { jsonrpc = "2.0", id = 1, method = "initialize", params = {
      protocolVersion = "2025-11-25", capabilities = { roots = {} }, clientInfo = { name = "t", version = "1" } } })
    assert.are.equal(200, status_of(init.out))
    sid = init.out:lower():match("\r\nmcp%-session%-id: (%x+)\r\n")
    assert.is_string(sid)
    local done = post(uv, http, { jsonrpc = "2.0", method = "notifications/initialized" }, { ["MCP-Session-Id"] = sid })
    assert.are.equal(202, status_of(done.out))
  end)

  after_each(function() http:close() end)

  it("refuses a second request with an id still in flight (-32600), and the first is still answered", function()
    local call = { jsonrpc = "2.0", id = 7, method = "tools/call", params = { name = "ask", arguments = {} } }
    local first = post(uv, http, call, { ["MCP-Session-Id"] = sid })
    -- the first waits for our answer to the server's roots/list, on its stream
    local asked = jrpc.decode(first.out:match("\ndata: ([^\n]+)\n"))
    assert.are.equal("roots/list", asked.method)

    local second = post(uv, http, call, { ["MCP-Session-Id"] = sid })
    assert.are.equal(400, status_of(second.out))
    assert.are.same({ jsonrpc = "2.0", id = 7, error = { code = -32600,
      message = "Invalid Request: id 7 is already in use by a request in flight in this session" } },
      jrpc.decode(body_of(second.out)))

    local answer = post(uv, http, { jsonrpc = "2.0", id = asked.id, result = { roots = { { uri = "file:///a" } } } },
      { ["MCP-Session-Id"] = sid })
    assert.are.equal(202, status_of(answer.out))
    local last
    for line in first.out:gmatch("\ndata: ([^\n]+)\n") do last = line end
    assert.are.same({ jsonrpc = "2.0", id = 7, result = { content = { { type = "text", text = "roots: 1" } } } },
      jrpc.decode(last))

    -- the id is free again once answered
    local again = post(uv, http, call, { ["MCP-Session-Id"] = sid })
    assert.are.equal(200, status_of(again.out))
  end)
end)
