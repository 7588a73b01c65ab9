-- At most once over HTTP (RFC 9110 §9.2.2: a client does not automatically
-- retry a non-idempotent request). A raw TCP server on 127.0.0.1, in this
-- process on luv, records every request it reads whole (connection number,
-- request number on that connection, method, body) and follows a plan: it
-- answers a request, or reads it whole and closes the connection without
-- a word (a server that crashed or was killed while it acted on it). A
-- request whose bytes went out is then never sent again: jrpc.uv.http_client
-- (a kept-alive connection), jrpc.mcp.client's tools/call over HTTP, `jrpc
-- mcp --http` and `jrpc call --http` (bin/jrpc as a process) all fail with
-- http_client.OUTCOME_UNKNOWN and the server saw the request once. What
-- provably never left (a connection found closed before the request was
-- written, a write refused at once) goes on a new connection, once; a safe
-- method (GET) keeps its one retry. Every wait is bounded.
local S = dofile("spec/uv_support.lua")
local C = dofile("spec/cli_support.lua")(S)
local jrpc = require "jrpc"
local hc = require "jrpc.uv.http_client"
local mcp_client = require "jrpc.mcp.client"

local uv, loop = S.uv, S.loop

local UNKNOWN = "connection closed after the request was sent; its outcome is unknown (not retried)"

-- {======================================================================
-- The raw server
-- =======================================================================

local function response(status, ctype, body)
  return ("HTTP/1.1 %d OK\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n%s"):format(status, ctype, #body, body)
end

-- A server whose `plan(req)` says what to do with each request read whole
-- (`req`: conn, n (on that connection), method, target, body): a string
-- (the response's bytes: answered, the connection kept), "drop" (closed
-- unanswered), or {bytes, close = true} (answered, then closed).
-- `srv.seen` lists the requests, `srv.conns` counts the connections.
local function raw_server(plan)
  local srv = { seen = {}, conns = 0, handles = {} }
  local listener = uv.new_tcp()
  srv.handles[1] = listener
  assert(listener:bind("127.0.0.1", 0))
  assert(listener:listen(16, function(lerr)
    if lerr then return end
    local c = uv.new_tcp()
    srv.handles[#srv.handles + 1] = c
    listener:accept(c)
    srv.conns = srv.conns + 1
    local conn, n, buf = srv.conns, 0, ""
    c:read_start(function(err, data)
      if err or not data then
        if not c:is_closing() then c:close() end
        return
      end
      buf = buf .. data
      for _ = 1, 16 do  -- the requests complete in `buf`, a few at most
        local head_end = buf:find("\r\n\r\n", 1, true)
        if not head_end then return end
        local head = buf:sub(1, head_end + 3)
        local length = tonumber(head:lower():match("\r\ncontent%-length:%s*(%d+)") or "0")
        if #buf < head_end + 3 + length then return end
        n = n + 1
        local req = { conn = conn, n = n, method = head:match("^(%u+) "), target = head:match("^%u+ (%S+)"),
          body = buf:sub(head_end + 4, head_end + 3 + length) }
        buf = buf:sub(head_end + 4 + length)
        srv.seen[#srv.seen + 1] = req
        local what = plan(req)
        if what == "drop" then c:close(); return end
        if type(what) == "table" then
          c:write(what[1])
          c:shutdown(function() if not c:is_closing() then c:close() end end)
          return
        end
        c:write(what)
      end
    end)
  end))
  srv.port = listener:getsockname().port
  srv.url = ("http://127.0.0.1:%d/"):format(srv.port)
  function srv.close()
    for _, h in ipairs(srv.handles) do
      if not h:is_closing() then h:close() end
    end
  end
  -- what the server saw: "conn.n METHOD body" for each request
  function srv.log()
    local out = {}
    for i, r in ipairs(srv.seen) do out[i] = ("%d.%d %s %s"):format(r.conn, r.n, r.method, r.body) end
    return out
  end
  return srv
end

-- After the client's answer, long enough for a re-sent request to arrive
-- (the old behaviour sent it at once, on loopback).
local function settle() loop:sleep(0.2) end

-- }======================================================================

describe("jrpc.uv.http_client: at most once on a kept-alive connection", function()
  after_each(S.cleanup)

  it("a POST whose connection closes after it was read is not sent again: OUTCOME_UNKNOWN", function()
    local srv, first, res, err, idle
    S.run(function()
      srv = raw_server(function(req)
        if req.n == 1 then return response(200, "text/plain", "ran " .. req.body) end
        return "drop"
      end)
      local client = hc.new(loop)
      first = assert(client:request{ url = srv.url, method = "POST", body = "1", timeout = 5 }).body
      idle = client:idle_count()
      res, err = client:request{ url = srv.url, method = "POST", body = "2", timeout = 5 }
      settle()
      client:close()
      srv.close()
    end, 15)
    assert.are.same({ "1.1 POST 1", "1.2 POST 2" }, srv.log())  -- the second POST: once
    assert.are.same({ "ran 1", 1 }, { first, idle })  -- the connection was kept, then reused
    assert.are.same({ nil, UNKNOWN }, { res, err })
    assert.are.equal(1, srv.conns)
  end)

  it("a POST on its own connection (request) closed after it was read: OUTCOME_UNKNOWN, sent once", function()
    local srv, res, err, kind
    S.run(function()
      srv = raw_server(function() return "drop" end)
      res, err, kind = hc.request(loop, { url = srv.url, method = "POST", body = "x", timeout = 5 })
      settle()
      srv.close()
    end, 15)
    assert.are.same({ nil, UNKNOWN, "outcome_unknown" }, { res, err, kind })
    assert.are.same({ "1.1 POST x" }, srv.log())
  end)

  it("a GET (safe) keeps one retry on a new connection, and a second loss is OUTCOME_UNKNOWN", function()
    local srv, a, b, res, err
    S.run(function()
      -- connection 1 answers its first request and drops its second;
      -- connection 2 answers; connection 3 answers its first, drops its second;
      -- connection 4 drops too
      srv = raw_server(function(req)
        if req.conn == 4 or req.n == 2 then return "drop" end
        return response(200, "text/plain", ("c%d r%d"):format(req.conn, req.n))
      end)
      local client = hc.new(loop)
      a = assert(client:request{ url = srv.url .. "a", timeout = 5 }).body
      b = assert(client:request{ url = srv.url .. "b", timeout = 5 }).body  -- retried on connection 2
      client:close()
      client = hc.new(loop)
      assert(client:request{ url = srv.url .. "c", timeout = 5 })             -- connection 3
      res, err = client:request{ url = srv.url .. "d", timeout = 5 }          -- 3 drops, retried: 4 drops
      settle()
      client:close()
      srv.close()
    end, 15)
    assert.are.same({ "c1 r1", "c2 r1" }, { a, b })
    assert.are.same({ nil, UNKNOWN }, { res, err })
    assert.are.same({ 1, 1, 2, 3, 3, 4 }, (function()
      local conns = {}
      for i, r in ipairs(srv.seen) do conns[i] = r.conn end
      return conns
    end)())
    assert.are.same({ "/a", "/b", "/b", "/c", "/d", "/d" }, (function()
      local targets = {}
      for i, r in ipairs(srv.seen) do targets[i] = r.target end
      return targets
    end)())
  end)

  it("a POST after the server closed the idle connection (EOF seen before the write) goes on a new one, once",
    function()
    local srv, first, gone, second
    S.run(function()
      srv = raw_server(function(req)
        if req.conn == 1 then return { response(200, "text/plain", "ran " .. req.body), close = true } end
        return response(200, "text/plain", "ran " .. req.body)
      end)
      local client = hc.new(loop)
      first = assert(client:request{ url = srv.url, method = "POST", body = "1", timeout = 5 }).body
      -- the client reads the server's close of the idle connection and drops it
      gone = S.wait_until(function() return client:idle_count() == 0 end, 3)
      second = assert(client:request{ url = srv.url, method = "POST", body = "2", timeout = 5 }).body
      client:close()
      srv.close()
    end, 15)
    assert.are.same({ "ran 1", true, "ran 2" }, { first, gone, second })
    assert.are.same({ "1.1 POST 1", "2.1 POST 2" }, srv.log())
  end)

  it("a POST whose write the socket refuses at once (nothing left) goes on a new connection, once", function()
    local srv, first, second
    S.run(function()
      srv = raw_server(function(req) return response(200, "text/plain", "ran " .. req.body) end)
      local client = hc.new(loop)
      first = assert(client:request{ url = srv.url, method = "POST", body = "1", timeout = 5 }).body
      -- the kept connection's writing side shut down: its next write fails before any byte goes
      for _, list in pairs(client.idle) do
        for _, conn in ipairs(list) do conn.tcp:shutdown() end
      end
      second = assert(client:request{ url = srv.url, method = "POST", body = "2", timeout = 5 }).body
      client:close()
      srv.close()
    end, 15)
    assert.are.same({ "ran 1", "ran 2" }, { first, second })
    assert.are.same({ "1.1 POST 1", "2.1 POST 2" }, srv.log())
  end)

  it("names the error: http_client.OUTCOME_UNKNOWN", function()
    assert.are.equal(UNKNOWN, hc.OUTCOME_UNKNOWN)
  end)
end)

-- {======================================================================
-- MCP over HTTP: a raw server that speaks enough of the modern era
-- =======================================================================

-- server/discover answered; tools/call `effect` counted (runs) and
-- answered, except the run numbers in `drop`: read whole, then the
-- connection closed unanswered.
local function mcp_server(drop)
  local srv
  srv = raw_server(function(req)
    local msg = jrpc.decode(req.body)
    local result
    if msg.method == "server/discover" then
      result = { capabilities = { tools = {} } }
    elseif msg.method == "tools/call" then
      srv.runs = (srv.runs or 0) + 1
      if drop[srv.runs] then return "drop" end
      result = { content = { { type = "text", text = "run " .. srv.runs } } }
    else
      return response(404, "text/plain", "")
    end
    return response(200, "application/json", jrpc.encode({ jsonrpc = "2.0", id = msg.id, result = result }))
  end)
  function srv.methods()
    local out = {}
    for i, r in ipairs(srv.seen) do out[i] = ("%d.%d %s"):format(r.conn, r.n, jrpc.decode(r.body).method) end
    return out
  end
  return srv
end

describe("jrpc.mcp.client over HTTP: a tools/call runs at most once", function()
  after_each(S.cleanup)

  it("the connection closed after the tools/call was read: an http error, outcome_unknown, one run", function()
    local srv, first, res, err
    S.run(function()
      srv = mcp_server({ [2] = true })
      local client = assert(mcp_client.connect(loop, { url = srv.url .. "mcp", era = "modern", timeout = 5 }))
      first = assert(client:call_tool("effect", {})).content[1].text
      res, err = client:call_tool("effect", {})
      settle()
      client:close()
      srv.close()
    end, 15)
    assert.are.same({ "1.1 tools/call", "1.2 tools/call" }, srv.methods())
    assert.are.equal(2, srv.runs)  -- once per call, never again
    assert.are.equal("run 1", first)
    assert.is_nil(res)
    assert.are.same({ "http", UNKNOWN, true }, { err.code, err.message, err.outcome_unknown })
  end)
end)

-- }======================================================================

-- {======================================================================
-- The jrpc command
-- =======================================================================

-- bin/jrpc with `words`, run without blocking the loop (the server is in
-- this process): status, stdout, stderr.
local function jrpc_cli(...)
  local parts = { C.LUA, "bin/jrpc" }
  for _, w in ipairs({ ... }) do parts[#parts + 1] = C.q(w) end
  local errfile = os.tmpname()
  local status, out = S.shell_wait(table.concat(parts, " ") .. " 2> " .. C.q(errfile))
  local f = assert(io.open(errfile))
  local err = f:read("*a")
  f:close()
  os.remove(errfile)
  return status, out, err
end

describe("the jrpc command over HTTP: at most once", function()
  after_each(S.cleanup)

  it("jrpc mcp --http: the probe answered, the tools/call on the kept connection dropped: exit 3, one run",
    function()
    local srv, r
    S.run(function()
      srv = mcp_server({ [1] = true })
      r = { jrpc_cli("mcp", "--http", srv.url .. "mcp", "--timeout", "5", "call", "effect") }
      settle()
      srv.close()
    end, 20)
    assert.are.same({ "1.1 server/discover", "1.2 tools/call" }, srv.methods())
    assert.are.equal(1, srv.runs)
    assert.are.same({ 3, "", "jrpc mcp: " .. UNKNOWN .. "\n" }, r)
  end)

  it("jrpc call --http: answered, then a call whose connection closed after it was read: exit 3, sent once",
    function()
    local srv, r1, r2
    S.run(function()
      srv = raw_server(function(req)
        if req.conn == 2 then return "drop" end
        local msg = jrpc.decode(req.body)
        return response(200, "application/json",
          jrpc.encode({ jsonrpc = "2.0", id = msg.id, result = "ran " .. msg.params[1] }))
      end)
      r1 = { jrpc_cli("call", "--http", srv.url, "--timeout", "5", "run", "[1]") }
      r2 = { jrpc_cli("call", "--http", srv.url, "--timeout", "5", "run", "[2]") }
      settle()
      srv.close()
    end, 20)
    assert.are.same({ 0, '"ran 1"\n', "" }, r1)
    assert.are.same({ 3, "", "jrpc call: " .. UNKNOWN .. "\n" }, r2)
    local params = {}
    for i, req in ipairs(srv.seen) do
      params[i] = ("%d.%d %s"):format(req.conn, req.n, jrpc.encode(jrpc.decode(req.body).params))
    end
    assert.are.same({ "1.1 [1]", "2.1 [2]" }, params)
  end)
end)

-- }======================================================================
