-- What running several workers behind a balancer needs of jrpc.mcp and
-- jrpc.uv.http (examples/deploy; spec/deploy/run.sh runs the real thing
-- with nginx): an MRTR retry may land on another worker when the workers
-- share the requestState key and only then, and a worker told to stop
-- answers what it took while refusing new connections. Two servers in one
-- process stand for two workers: what matters is their keys, not their pids.
local S = dofile("spec/uv_support.lua")
local jrpc = require "jrpc"
local mcp = require "jrpc.mcp"

local loop = S.loop

local META = '"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
  .. '"io.modelcontextprotocol/clientCapabilities":{}}'

local function curl(port, method, name, body, extra)
  return ("curl -s -m 5 -o - -w '\\n%%{http_code}' -H 'Content-Type: application/json' "
    .. "-H 'Accept: application/json, text/event-stream' -H 'MCP-Protocol-Version: 2026-07-28' "
    .. "-H 'Mcp-Method: %s' -H 'Mcp-Name: %s' %s --data-binary '%s' http://127.0.0.1:%d/mcp")
    :format(method, name, extra or "", body, port)
end

local function post(port, name, body)
  local _, out = S.shell_wait(curl(port, "tools/call", name, body))
  local text, status = out:match("^(.*)\n(%d+)$")
  return tonumber(status), text
end

local function call(name, id, extra)
  return ('{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"%s","arguments":{},%s%s}}')
    :format(id, name, extra or "", META)
end

-- A worker: the MRTR tool `ask` on a server sealing with `key`.
local function worker(key)
  local srv = mcp.server{ name = "deploy-spec", version = "1.0.0", state_key = key }
  srv:tool{ name = "ask", description = "MRTR", handler = function(_, ctx)
    if ctx.request_state == "s1" and ctx.input_responses and ctx.input_responses.q then return "answered" end
    return mcp.input_required({ q = { method = "roots/list", params = jrpc.object() } }, "s1")
  end }
  return assert(srv:serve_http(loop, { port = 0, peer = { on_error = function() end } }))
end

-- Round one of `ask` on worker `a`, its retry on worker `b`: status, reply.
local function round_trip(a, b)
  local status, body = post(a.port, "ask", call("ask", 1))
  assert.are.equal(200, status)
  local first = jrpc.decode(body).result
  assert.are.equal("input_required", first.resultType)
  local retry = call("ask", 2, '"inputResponses":{"q":{"roots":[]}},"requestState":"' .. first.requestState .. '",')
  status, body = post(b.port, "ask", retry)
  return status, jrpc.decode(body)
end

describe("deployment: workers behind a balancer", function()
  after_each(S.cleanup)

  it("an MRTR retry on another worker succeeds when the workers share the state key", function()
    S.run(function()
      local key = ("k"):rep(32)
      local a, b = worker(key), worker(key)
      local status, reply = round_trip(a, b)
      assert.are.equal(200, status)
      assert.are.equal("answered", reply.result.content[1].text)
      a:close(); b:close()
    end)
  end)

  it("the retry is refused with -32602 when the workers' keys differ", function()
    S.run(function()
      local a, b = worker(("a"):rep(32)), worker(("b"):rep(32))
      local status, reply = round_trip(a, b)
      assert.are.equal(400, status)
      assert.are.equal(-32602, reply.error.code)
      assert.are.equal("Invalid params: requestState is not one this server issued", reply.error.message)
      a:close(); b:close()
    end)
  end)

  it("mcp.server refuses a state_key shorter than 16 bytes", function()
    assert.has_error(function() mcp.server{ name = "x", version = "1", state_key = "short" } end,
      "jrpc.mcp.server: state_key must be a string of at least 16 bytes")
  end)

  it("shutdown answers the request in flight, refuses new connections, then reports done", function()
    S.run(function()
      local http, drained
      local srv = mcp.server{ name = "deploy-spec", version = "1.0.0" }
      srv:tool{ name = "slow", description = "stops the server, then answers", handler = function()
        http:shutdown{ grace = 5, on_done = function() drained = true end }
        loop:sleep(0.6)
        return "done"
      end }
      http = assert(srv:serve_http(loop, { port = 0, peer = { on_error = function() end } }))
      local slow = curl(http.port, "tools/call", "slow", call("slow", 1), "-D -")
      local fresh = curl(http.port, "tools/call", "slow", call("slow", 2))
      -- the second connection is tried while the first request is in flight
      local _, out = S.shell_wait(("(%s) > /tmp/jrpc-deploy-slow.$$ & sleep 0.3; %s; echo \" rc=$?\"; "
        .. "wait; cat /tmp/jrpc-deploy-slow.$$; rm -f /tmp/jrpc-deploy-slow.$$"):format(slow, fresh))
      assert.matches("\n000 rc=7\n", "\n" .. out, 1, true)  -- curl: connection refused
      assert.matches("[Cc]onnection: close\r\n", out)
      assert.matches('"text":"done"', out, 1, true)
      assert.matches("\n200$", out)
      assert.is_true(S.wait_until(function() return drained end, 2))
    end)
  end)

  it("shutdown cuts a request still unanswered after the grace, cancelling it", function()
    S.run(function()
      local http, drained, cancelled
      local srv = mcp.server{ name = "deploy-spec", version = "1.0.0" }
      srv:tool{ name = "endless", description = "answers only when cancelled", handler = function(_, ctx)
        http:shutdown{ grace = 0.3, on_done = function() drained = true end }
        for _ = 1, 100 do
          if ctx:cancelled() then cancelled = true; return "cancelled" end
          loop:sleep(0.05)
        end
        return "late"
      end }
      http = assert(srv:serve_http(loop, { port = 0, peer = { on_error = function() end } }))
      local t0 = S.now()
      local _, out = S.shell_wait(curl(http.port, "tools/call", "endless", call("endless", 1)))
      assert.are.equal("\n000", out)  -- the connection closed with no response
      assert.is_true(S.wait_until(function() return drained and cancelled end, 2))
      assert.is_true(S.since(t0) < 2)
    end)
  end)
end)
