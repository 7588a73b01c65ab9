-- jrpc.uv.http_client: the HTTP(S) client on luv, against real servers on
-- 127.0.0.1: `openssl s_server` with a test CA made here (trusted through
-- ca_file, refused without it, refused for another name), a Node https
-- server (keep-alive reuse over TLS), our own jrpc.uv.http server (JSON,
-- an SSE stream, a stream closed early, keep-alive, a timeout) and a Node
-- http server (a chunked body read while it is being written, SSE split
-- every way, a stream closed early that the server sees end).
local S = dofile("spec/uv_support.lua")
local T = dofile("spec/tls_support.lua")
local files = dofile("spec/files.lua")
local http = require "jrpc.uv.http"
local hc = require "jrpc.uv.http_client"

local loop = S.loop

local NODE_SERVER = [=[
const http = require('http'), https = require('https'), fs = require('fs');
const [kind, key, cert] = process.argv.slice(2);
let connections = 0, closed = 0, waiting = null;
function handler(req, res) {
  const u = req.url;
  if (u === '/hello') { res.writeHead(200, { 'content-type': 'text/plain' }); return res.end('hello ' + connections); }
  if (u === '/closed') return res.end(String(closed));
  if (u === '/chunked') {       // the rest comes only after a request to /go
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.write('first;');
    waiting = res;
    return;
  }
  if (u === '/go') {
    if (waiting) { waiting.write('second;'); waiting.end('third'); waiting = null; }
    return res.end('went');
  }
  if (u === '/sse') {           // events split every which way, then ticks until the client goes
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(': a comment\r\n');
    res.write('event: greet\r\ndata: hel');
    res.write('lo\r\ndata: world\r\nid: 7\r\n\r');
    res.write('\ndata: two\r');
    res.write('\r');
    const t = setInterval(() => res.write('data: tick\n\n'), 20);
    res.on('close', () => { clearInterval(t); closed++; });
    return;
  }
  res.writeHead(404); res.end();
}
const server = kind === 'https'
  ? https.createServer({ key: fs.readFileSync(key), cert: fs.readFileSync(cert) }, handler)
  : http.createServer(handler);
server.keepAliveTimeout = 5000;
server.on(kind === 'https' ? 'secureConnection' : 'connection', () => connections++);
server.listen(0, '127.0.0.1', () => console.log('listening ' + server.address().port));
]=]

describe("jrpc.uv.http_client", function()
  local tls_port, wrong_port, node_port, nodes_port
  local pids = {}

  setup(function()
    local pid
    tls_port, pid = T.s_server("srv"); pids[#pids + 1] = pid
    wrong_port, pid = T.s_server("wrong"); pids[#pids + 1] = pid
    local script = T.pki().dir .. "/server.js"
    files.write(script, NODE_SERVER)
    local p
    p, pid = T.start(("exec node '%s' http"):format(script), "listening (%d+)")
    node_port = tonumber(p); pids[#pids + 1] = pid
    p, pid = T.start(("exec node '%s' https '%s/srv.key' '%s/srv.pem'"):format(script, T.pki().dir, T.pki().dir),
      "listening (%d+)")
    nodes_port = tonumber(p); pids[#pids + 1] = pid
  end)

  teardown(function()
    for _, pid in ipairs(pids) do T.kill(pid) end
    T.cleanup()
  end)

  after_each(S.cleanup)

  local function serve(handler)
    return assert(http.listen(loop, { port = 0, handler = handler, on_error = function() end }))
  end

  describe("over TLS", function()
    it("trusts openssl s_server through ca_file: 200 and the exact body", function()
      local res, err = S.run(function()
        return hc.request(loop, { url = ("https://localhost:%d/hello.txt"):format(tls_port), ca_file = T.pki().ca })
      end)
      assert.is_nil(err)
      assert.are.same({ 200, "ok", "1.0", "hello over TLS\n", "text/plain" },
        { res.status, res.reason, res.version, res.body, res.headers["content-type"] })
    end)

    it("refuses it without ca_file (the system store does not hold the test CA)", function()
      local res, err = S.run(function()
        return hc.request(loop, { url = ("https://localhost:%d/hello.txt"):format(tls_port) })
      end)
      assert.is_nil(res)
      assert.are.equal(("https://localhost:%d: certificate verify failed: unable to get local issuer certificate")
        :format(tls_port), err)
    end)

    it("refuses a certificate made out to another host name", function()
      local res, err = S.run(function()
        return hc.request(loop, { url = ("https://localhost:%d/hello.txt"):format(wrong_port), ca_file = T.pki().ca })
      end)
      assert.is_nil(res)
      assert.are.equal(("https://localhost:%d: certificate verify failed: hostname mismatch"):format(wrong_port), err)
    end)

    it("reuses one kept-alive TLS connection for two requests to Node's https server", function()
      local a, b, idle = S.run(function()
        local client = hc.new(loop)
        local url = ("https://127.0.0.1:%d/hello"):format(nodes_port)
        local r1 = assert(client:request{ url = url, ca_file = T.pki().ca })
        local r2 = assert(client:request{ url = url, ca_file = T.pki().ca })
        local n = client:idle_count()
        client:close()
        return r1.body, r2.body, n
      end)
      assert.are.same({ "hello 1", "hello 1", 1 }, { a, b, idle })  -- the server saw one connection
    end)
  end)

  describe("against jrpc.uv.http", function()
    it("POSTs JSON and gets the exact answer", function()
      local got, res, port
      S.run(function()
        local server = serve(function(req, r)
          got = { req.method, req.target, req.headers["content-type"], req.headers.host, req.body,
            req.headers.connection }
          r:send(201, { ["content-type"] = "application/json", ["x-seen"] = "yes" }, '{"id":1}')
        end)
        port = server.port
        res = assert(hc.request(loop, { url = ("http://127.0.0.1:%d/mcp?a=1"):format(port),
          headers = { ["Content-Type"] = "application/json" }, body = '{"x":2}' }))
        server:close()
      end)
      assert.are.same({ "POST", "/mcp?a=1", "application/json", "127.0.0.1:" .. port, '{"x":2}', "close" }, got)
      assert.are.same({ 201, "Created", '{"id":1}', "yes", "close" },
        { res.status, res.reason, res.body, res.headers["x-seen"], res.headers.connection })
    end)

    it("streams an SSE response to on_chunk; sse_parser splits the events", function()
      local events, res, heads = {}, nil, 0
      S.run(function()
        local server = serve(function(_, r)
          r:stream(200, {})
          for i = 1, 3 do
            r:event('{"n":' .. i .. '}')
            loop:sleep(0.02)
          end
          r:finish()
        end)
        local sse = hc.sse_parser()
        res = assert(hc.request(loop, { url = ("http://127.0.0.1:%d/"):format(server.port), method = "POST",
          body = "{}", on_headers = function(h) heads = heads + 1; assert(h.status == 200) end,
          on_chunk = function(bytes)
            for _, e in ipairs(sse:feed(bytes)) do events[#events + 1] = e.event .. " " .. e.data end
          end }))
        server:close()
      end)
      assert.are.same({ 'message {"n":1}', 'message {"n":2}', 'message {"n":3}' }, events)
      assert.are.same({ 200, "", "text/event-stream", 1 }, { res.status, res.body, res.headers["content-type"], heads })
      assert.is_nil(res.closed)
    end)

    it("closes a stream early: the request returns, the server sees the client go", function()
      local got, res, gone = {}, nil, false
      S.run(function()
        local server = serve(function(_, r)
          r.on_close = function() gone = true end
          r:stream(200, {})
          local i = 0
          while not r.closed do
            i = i + 1
            r:event('{"tick":' .. i .. '}')
            loop:sleep(0.01)
          end
        end)
        local sse = hc.sse_parser()
        res = assert(hc.request(loop, { url = ("http://127.0.0.1:%d/"):format(server.port),
          on_chunk = function(bytes, stream)
            for _, e in ipairs(sse:feed(bytes)) do
              got[#got + 1] = e.data
              if #got == 2 then stream:close() end
            end
          end }))
        assert(S.wait_until(function() return gone end, 2))
        server:close()
      end)
      assert.are.same({ '{"tick":1}', '{"tick":2}' }, got)
      assert.is_true(res.closed)
      assert.is_true(gone)
    end)

    it("closes a request before its head came (on_start): the server sees the client go", function()
      local res, gone, sent = nil, false, nil
      S.run(function()
        local server = serve(function(_, r)
          r.on_close = function() gone = true end
          loop:sleep(0.3)  -- answers only when done, as an MCP server with no progress to send
          sent = r.closed and "closed" or r:send(200, {}, "late")
        end)
        local request
        S.loop.uv.new_timer():start(50, 0, function() request:close() end)
        res = assert(hc.request(loop, { url = ("http://127.0.0.1:%d/"):format(server.port),
          on_start = function(r) request = r end }))
        assert(S.wait_until(function() return sent ~= nil end, 2))
        server:close()
      end)
      assert.are.same({ true, nil, "", true, "closed" }, { res.closed, res.status, res.body, gone, sent })
    end)

    it("keeps the connection alive between two requests of one client", function()
      local bodies, count, idle
      S.run(function()
        local n = 0
        local server = serve(function(req, r)
          n = n + 1
          r:send(200, {}, req.target .. " " .. n)
        end)
        local client = hc.new(loop)
        local url = ("http://127.0.0.1:%d"):format(server.port)
        bodies = { assert(client:request{ url = url .. "/a" }).body, assert(client:request{ url = url .. "/b" }).body }
        count, idle = server.count, client:idle_count()
        client:close()
        server:close()
      end)
      assert.are.same({ "/a 1", "/b 2" }, bodies)
      assert.are.same({ 1, 1 }, { count, idle })
    end)

    it("sends a GET (a safe method) again on a new connection when a kept one was closed unanswered", function()
      -- a raw server: its first connection answers one request, then drops
      -- the next one unanswered (as a server closing an idle connection
      -- while the request is on its way); later connections answer all.
      -- A POST is not sent again: spec/http_at_most_once_spec.lua
      local uv = S.uv
      local bodies, conns, requests
      S.run(function()
        local listener = uv.new_tcp()
        listener:bind("127.0.0.1", 0)
        conns, requests = 0, 0
        listener:listen(8, function()
          local c = uv.new_tcp()
          listener:accept(c)
          conns = conns + 1
          local mine, served, buf = conns, 0, ""
          c:read_start(function(err, data)
            if err or not data then return c:close() end
            buf = buf .. data
            while buf:find("\r\n\r\n", 1, true) do
              buf = buf:sub(buf:find("\r\n\r\n", 1, true) + 4)
              requests = requests + 1
              served = served + 1
              if mine == 1 and served == 2 then return c:close() end
              local body = ("connection %d request %d"):format(mine, served)
              c:write(("HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s"):format(#body, body))
            end
          end)
        end)
        local client = hc.new(loop)
        local url = ("http://127.0.0.1:%d/"):format(listener:getsockname().port)
        bodies = { assert(client:request{ url = url }).body, assert(client:request{ url = url }).body }
        client:close()
        listener:close()
      end)
      assert.are.same({ "connection 1 request 1", "connection 2 request 1" }, bodies)
      assert.are.same({ 2, 3 }, { conns, requests })
    end)

    it("gives up after its timeout", function()
      local res, err, t
      S.run(function()
        local server = serve(function(_, r) loop:sleep(1); r:send(200, {}, "late") end)
        local t0 = S.now()
        res, err = hc.request(loop, { url = ("http://127.0.0.1:%d/"):format(server.port), timeout = 0.2 })
        t = S.since(t0)
        server:close()
      end)
      assert.is_nil(res)
      assert.are.equal("timeout after 0.2 s", err)
      assert.is_true(t >= 0.19 and t < 0.9, tostring(t))
    end)

    it("calls on_done outside a coroutine", function()
      local got
      S.run(function()
        local server = serve(function(_, r) r:send(200, {}, "cb") end)
        assert.is_true(hc.request(loop, { url = ("http://127.0.0.1:%d/"):format(server.port),
          on_done = function(res, err) got = { res and res.body, err } end }))
        assert(S.wait_until(function() return got ~= nil end, 2))
        server:close()
      end)
      assert.are.same({ "cb" }, got)
    end)
  end)

  describe("against jrpc.mcp over Streamable HTTP (a legacy session)", function()
    it("initializes, then reads a tool call answered as an SSE stream", function()
      local jrpc = require "jrpc"
      local mcp = require "jrpc.mcp"
      local init, msgs, ctype
      S.run(function()
        local srv = mcp.server{ name = "client-spec", version = "1.0.0" }
        srv:tool{ name = "slow", description = "progress, then a result", handler = function(_, ctx)
          ctx:progress(1, 2, "half")
          return "done"
        end }
        local server = assert(srv:serve_http(loop, { port = 0, peer = { on_error = function() end } }))
        local url = ("http://127.0.0.1:%d/mcp"):format(server.port)
        local headers = { ["Content-Type"] = "application/json", Accept = "application/json, text/event-stream" }
        init = assert(hc.request(loop, { url = url, headers = headers, body = jrpc.encode{ jsonrpc = "2.0", id = 1,
          method = "initialize", params = { protocolVersion = "2025-11-25", capabilities = {},
            clientInfo = { name = "spec", version = "1" } } } }))
        headers["MCP-Session-Id"] = init.headers["mcp-session-id"]
        local sse = hc.sse_parser()
        msgs = {}
        local res = assert(hc.request(loop, { url = url, headers = headers,
          body = jrpc.encode{ jsonrpc = "2.0", id = 2, method = "tools/call",
            params = { name = "slow", arguments = {}, _meta = { progressToken = "p1" } } },
          on_chunk = function(bytes)
            for _, e in ipairs(sse:feed(bytes)) do msgs[#msgs + 1] = jrpc.decode(e.data) end
          end }))
        ctype = res.headers["content-type"]
        server:close()
      end)
      assert.are.equal(200, init.status)
      assert.is_truthy(init.headers["mcp-session-id"]:match("^%x+$"))
      assert.are.equal("2025-11-25", jrpc.decode(init.body).result.protocolVersion)
      assert.are.equal("text/event-stream", ctype)
      assert.are.same({ "notifications/progress", "p1", 1, 2, "half" }, { msgs[1].method, msgs[1].params.progressToken,
        msgs[1].params.progress, msgs[1].params.total, msgs[1].params.message })
      assert.are.same({ 2, "done" }, { msgs[2].id, msgs[2].result.content[1].text })
      assert.are.equal(2, #msgs)
    end)
  end)

  describe("against Node's http server", function()
    local function url(path) return ("http://127.0.0.1:%d%s"):format(node_port, path) end

    it("hands chunked body pieces over while the body is still being written", function()
      local pieces, res = {}, nil
      S.run(function()
        res = assert(hc.request(loop, { url = url("/chunked"), on_chunk = function(bytes)
          pieces[#pieces + 1] = bytes
          if #pieces == 1 then  -- the server writes the rest only once /go came
            coroutine.wrap(function() assert(hc.request(loop, { url = url("/go") }).body == "went") end)()
          end
        end }))
      end)
      assert.are.same({ "first;", "second;third" }, { pieces[1], table.concat(pieces, "", 2) })
      assert.are.same({ 200, "chunked" }, { res.status, res.headers["transfer-encoding"] })
    end)

    it("reads a whole chunked body without on_chunk", function()
      local res = S.run(function()
        coroutine.wrap(function()
          loop:sleep(0.05)
          assert(hc.request(loop, { url = url("/go") }))
        end)()
        return assert(hc.request(loop, { url = url("/chunked") }))
      end)
      assert.are.equal("first;second;third", res.body)
    end)

    it("splits SSE sent in pieces (CRLF, CR, comments, ids), then closes early; the server sees it", function()
      local events, res, closed = {}, nil, nil
      S.run(function()
        local sse = hc.sse_parser()
        res = assert(hc.request(loop, { url = url("/sse"), on_chunk = function(bytes, stream)
          for _, e in ipairs(sse:feed(bytes)) do
            events[#events + 1] = { e.event, e.data, e.id }
            if e.data == "tick" then stream:close() end
          end
        end }))
        S.wait_until(function()
          closed = assert(hc.request(loop, { url = url("/closed") })).body
          return closed == "1"
        end, 3)
      end)
      assert.are.same({ { "greet", "hello\nworld", "7" }, { "message", "two", "7" }, { "message", "tick", "7" } },
        events)
      assert.is_true(res.closed)
      assert.are.equal("1", closed)
    end)
  end)

  describe("errors", function()
    it("answers nil, err for what the network or the URL refuses", function()
      local r, free = S.run(function()
        local probe = S.uv.new_tcp()
        probe:bind("127.0.0.1", 0)
        local port = probe:getsockname().port
        probe:close()
        return {
          { hc.request(loop, { url = ("http://127.0.0.1:%d/"):format(port) }) },
          { hc.request(loop, { url = "ftp://127.0.0.1/" }) },
          { hc.request(loop, { url = "/relative" }) },
        }, port
      end)
      -- the error, its kind, and a connect failure's cause without the address
      assert.are.same({ nil, ("connect to 127.0.0.1:%d: ECONNREFUSED"):format(free), "connect", "ECONNREFUSED" }, r[1])
      assert.are.same({ nil, "unsupported URL scheme: ftp", "failed" }, r[2])
      assert.are.same({ nil, "not an absolute URL: /relative", "failed" }, r[3])
    end)

    it("answers nil, err for a ca_file it cannot load, and reads no body after HEAD", function()
      local a, b = S.run(function()
        local server = serve(function(req, r) r:send(200, { ["x-m"] = req.method }, "not for HEAD") end)
        local r1 = { hc.request(loop, { url = ("https://127.0.0.1:%d/"):format(tls_port), ca_file = "/nonexistent/ca.pem" }) }
        local res = assert(hc.request(loop, { url = ("http://127.0.0.1:%d/"):format(server.port), method = "HEAD" }))
        server:close()
        return r1, { res.status, res.headers["x-m"], res.headers["content-length"], res.body }
      end)
      local why = "tls_client: cannot load ca_file '/nonexistent/ca.pem': No such file or directory"
      assert.are.same({ nil, why, "connect", why }, a)
      assert.are.same({ 200, "HEAD", "12", "" }, b)
    end)

    it("raises for misuse", function()
      assert.has_error(function() hc.request(loop, { url = "http://h/", bogus = 1 }) end,
        "http_client.request: unknown option 'bogus'")
      assert.has_error(function() hc.request(loop, { url = "http://h/" }) end,
        "http_client.request: outside a coroutine, on_done = function(res, err) is required")
      assert.has_error(function() hc.request(loop, { url = "http://h/", body = 1 }) end,
        "http_client.request: body must be a string")
      assert.has_error(function() hc.request(loop, { url = "https://h/", verify = "no" }) end,
        "http_client.request: verify must be a boolean")
    end)

    it("parses URLs", function()
      assert.are.same({ scheme = "https", host = "example.org", port = 443, target = "/?q=1", authority = "example.org" },
        hc.parse_url("HTTPS://Example.ORG?q=1#frag"))
      assert.are.same({ scheme = "http", host = "::1", port = 8080, target = "/mcp", authority = "[::1]:8080" },
        hc.parse_url("http://[::1]:8080/mcp"))
      assert.are.same({ nil, "bad port in URL: http://h:70000/" }, { hc.parse_url("http://h:70000/") })
    end)
  end)
end)

describe("jrpc.uv.http_client.sse_parser", function()
  it("follows the WHATWG rules for any split of the stream", function()
    local stream = "\239\187\191: c\r\nevent: e1\r\ndata: a\r\ndata:b\r\nid: 1\r\nretry: 50\r\n\r\n"
      .. "data\n\ndata: x\rid: 2\0bad\r\r\nevent: ignored\n\ndata: last\n\n"
    local want = {
      { event = "e1", data = "a\nb", id = "1", retry = 50 },
      { event = "message", data = "", id = "1" },
      { event = "message", data = "x", id = "1" },   -- an id holding NUL is ignored
      { event = "message", data = "last", id = "1" }, -- an event with no data is dropped
    }
    for step = 1, #stream do
      local p, got = hc.sse_parser(), {}
      for i = 1, #stream, step do
        for _, e in ipairs(p:feed(stream:sub(i, i + step - 1))) do got[#got + 1] = e end
      end
      assert.are.same(want, got)
    end
  end)
end)
