-- jrpc.mcp over Streamable HTTP (2026-07-28), driven by curl on 127.0.0.1:
-- status mapping, header checks against the body, SSE for request-scoped
-- notifications, Origin/Host checks, and a client that hangs up.
local S = dofile("spec/uv_support.lua")
local jrpc = require "jrpc"
local mcp = require "jrpc.mcp"

local loop = S.loop

local shell = S.shell_wait
local H = dofile("spec/mcp_http_support.lua")(S)

local META = '"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
  .. '"io.modelcontextprotocol/clientCapabilities":{}}'

local cancelled
local function new_server()
  cancelled = nil
  local srv = mcp.server{ name = "http-spec", version = "1.0.0" }
  srv:tool{ name = "echo", description = "echo", handler = function(args) return args.text or "none" end }
  srv:tool{ name = "slow", description = "progress, then waits", handler = function(_, ctx)
    ctx:progress(1, 2)
    for _ = 1, 40 do
      if ctx:cancelled() then cancelled = true; return "late" end
      loop:sleep(0.05)
    end
    return "done"
  end }
  srv:tool{ name = "ask", description = "MRTR", handler = function(_, ctx)
    if ctx.request_state == "s1" and ctx.input_responses and ctx.input_responses.q then return "answered" end
    return mcp.input_required({ q = { method = "roots/list", params = jrpc.object() } }, "s1")
  end }
  return assert(srv:serve_http(loop, { port = 0, peer = { on_error = function() end } }))
end

-- POST `body` with the standard headers (and `extra` curl arguments);
-- returns the status and the body.
local function post(port, method, body, extra)
  local status, _, text = H.post(port, H.modern_headers(method), body, extra)
  return status, text
end

local function call(name, id, args)
  return ('{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"%s","arguments":%s,%s}}')
    :format(id, name, args or "{}", META)
end

describe("jrpc.mcp over Streamable HTTP", function()
  after_each(S.cleanup)

  it("answers a request with 200 JSON, a notification with 202, GET with 405", function()
    S.run(function()
      local http = new_server()
      local status, body = post(http.port, "tools/call", call("echo", 1, '{"text":"hi"}'), "-H 'Mcp-Name: echo'")
      assert.are.equal(200, status)
      local msg = jrpc.decode(body)
      assert.are.equal(1, msg.id)
      assert.are.equal("hi", msg.result.content[1].text)
      assert.are.equal("complete", msg.result.resultType)
      status = post(http.port, "notifications/initialized",
        '{"jsonrpc":"2.0","method":"notifications/initialized"}')
      assert.are.equal(202, status)
      local _, out = shell(("curl -s -o /dev/null -w '%%{http_code}' http://127.0.0.1:%d/mcp"):format(http.port))
      assert.are.equal("405", out)
      http:close()
    end)
  end)

  it("checks the headers against the body before the version, decoding base64", function()
    S.run(function()
      local http = new_server()
      -- Mcp-Name missing, then differing, then the sentinel for "echo"
      local status, body = post(http.port, "tools/call", call("echo", 2))
      assert.are.equal(400, status)
      assert.are.equal(-32020, jrpc.decode(body).error.code)
      status = post(http.port, "tools/call", call("echo", 3), "-H 'Mcp-Name: other'")
      assert.are.equal(400, status)
      status = post(http.port, "tools/call", call("echo", 4), "-H 'Mcp-Name: =?base64?ZWNobw==?='")
      assert.are.equal(200, status)
      -- header 2026-07-28, body v999: a mismatch, not an unsupported version
      status, body = post(http.port, "server/discover", '{"jsonrpc":"2.0","id":5,"method":"server/discover",'
        .. '"params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"v999",'
        .. '"io.modelcontextprotocol/clientCapabilities":{}}}}')
      assert.are.equal(400, status)
      assert.are.equal(-32020, jrpc.decode(body).error.code)
      -- no _meta: -32602 with the request's id; an unknown method: 404
      status, body = post(http.port, "server/discover", '{"jsonrpc":"2.0","id":6,"method":"server/discover"}')
      assert.are.equal(400, status)
      assert.are.same({ -32602, 6 }, { jrpc.decode(body).error.code, jrpc.decode(body).id })
      status, body = post(http.port, "nope", '{"jsonrpc":"2.0","id":7,"method":"nope","params":{' .. META .. '}}')
      assert.are.equal(404, status)
      assert.are.equal(-32601, jrpc.decode(body).error.code)
      http:close()
    end)
  end)

  it("seals MRTR requestState and refuses a tampered one with -32602", function()
    S.run(function()
      local http = new_server()
      local status, body = post(http.port, "tools/call", call("ask", 9), "-H 'Mcp-Name: ask'")
      assert.are.equal(200, status)
      local r = jrpc.decode(body).result
      assert.are.equal("input_required", r.resultType)
      assert.are.equal("roots/list", r.inputRequests.q.method)
      assert.matches("^s1%.%x+$", r.requestState)
      local retry = function(state)
        return call("ask", 10):gsub('"_meta":', '"inputResponses":{"q":{"roots":[]}},"requestState":"'
          .. state .. '","_meta":')
      end
      local _, body2 = post(http.port, "tools/call", retry(r.requestState), "-H 'Mcp-Name: ask'")
      assert.are.equal("answered", jrpc.decode(body2).result.content[1].text)
      status, body = post(http.port, "tools/call", retry(r.requestState .. "-TAMPERED"), "-H 'Mcp-Name: ask'")
      assert.are.equal(400, status)
      assert.are.equal(-32602, jrpc.decode(body).error.code)
      local body3 = select(2, post(http.port, "tools/call", retry("s1.00"), "-H 'Mcp-Name: ask'"))
      assert.are.equal(-32602, jrpc.decode(body3).error.code)
      http:close()
    end)
  end)

  it("refuses a foreign Origin (403) and Host (421)", function()
    S.run(function()
      local http = new_server()
      local discover = '{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{' .. META .. '}}'
      assert.are.equal(403, (post(http.port, "server/discover", discover, "-H 'Origin: http://evil.example.com'")))
      assert.are.equal(421, (post(http.port, "server/discover", discover, "-H 'Host: evil.example.com'")))
      local origin = ("-H 'Origin: http://127.0.0.1:%d'"):format(http.port)
      assert.are.equal(200, (post(http.port, "server/discover", discover, origin)))
      http:close()
    end)
  end)

  it("streams progress as SSE before the result, and a client that hangs up cancels", function()
    S.run(function()
      local http = new_server()
      local status, body = post(http.port, "tools/call",
        call("slow", 8):gsub('"_meta":{', '"_meta":{"progressToken":"t1",'), "-H 'Mcp-Name: slow' -m 1")
      assert.are.equal(200, status)  -- the stream began; curl gave up after 1 s
      local first = body:match("data: ([^\n]*)")
      assert.are.equal("notifications/progress", jrpc.decode(first).method)
      for _ = 1, 40 do
        if cancelled then break end
        loop:sleep(0.05)
      end
      assert.is_true(cancelled)
      http:close()
    end)
  end)
end)
