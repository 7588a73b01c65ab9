-- jrpc.core HTTP/1.1: the request reader (core.http_server, on llhttp)
-- and the writers (http_response, http_stream_head, http_chunk, sse_event),
-- byte for byte.
local core = require "jrpc.core"

local unpack = table.unpack or unpack
local function pack(...) return {n = select("#", ...), ...} end
local files = dofile("spec/files.lua")

-- a value as canonical text (sorted keys), for exact comparisons
local function show(v)
  if type(v) == "string" then return ("%q"):format(v) end
  if type(v) ~= "table" then return tostring(v) end
  local keys = {}
  for k in pairs(v) do keys[#keys + 1] = k end
  table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
  local parts = {}
  for i, k in ipairs(keys) do parts[i] = tostring(k) .. "=" .. show(v[k]) end
  return "{" .. table.concat(parts, ",") .. "}"
end

-- every event of reading 'chunks' (a list of strings), as text lines
local function read(h, chunks)
  local out = {}
  for _, c in ipairs(chunks) do
    local ev = pack(h:next(c))
    while ev[1] ~= nil do
      local parts = {}
      for i = 1, ev.n do parts[i] = show(ev[i]) end
      out[#out + 1] = table.concat(parts, " ")
      if ev[1] == "error" then return out end
      ev = pack(h:next())
    end
  end
  return out
end

local function events(input, opts)
  return read(core.http_server(opts), {input})
end

local function one(input, opts)
  local h = core.http_server(opts)
  local kind, req = h:next(input)
  assert.are.equal("request", kind)
  assert.is_nil(h:next())
  return req
end

local function err(input, opts)
  local h = core.http_server(opts)
  local ev = pack(h:next(input))
  while ev[1] == "request" do ev = pack(h:next()) end
  return unpack(ev, 1, ev.n)
end

local POST = "POST /mcp?session=1 HTTP/1.1\r\nHost: localhost:8080\r\n"
  .. "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
  .. "Content-Length: 40\r\n\r\n" .. '{"jsonrpc":"2.0","method":"ping","id":1}'
local CHUNKED = "POST /mcp HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
  .. "5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\nX-Trailer: t\r\n\r\n"
local GET = "GET /mcp HTTP/1.1\r\nHost: h\r\nAccept: text/event-stream\r\nConnection: close\r\n\r\n"

describe("core.http_server: reading requests", function()
  it("reads a POST into the documented table", function()
    assert.are.equal(show({
      method = "POST", target = "/mcp?session=1", path = "/mcp", query = "session=1",
      version = "1.1", keep_alive = true, upgrade = false,
      headers = {host = "localhost:8080", ["content-type"] = "application/json",
        accept = "application/json, text/event-stream", ["content-length"] = "40"},
      body = '{"jsonrpc":"2.0","method":"ping","id":1}',
    }), show(one(POST)))
  end)

  it("reads chunked bodies (extensions ignored, trailers dropped)", function()
    local req = one(CHUNKED)
    assert.are.equal("hello world", req.body)
    assert.are.equal(show({host = "h", ["transfer-encoding"] = "chunked"}), show(req.headers))
  end)

  it("gives pipelined requests one by one, then nothing", function()
    local h = core.http_server()
    local kinds = {}
    local kind, req = h:next(POST .. CHUNKED .. GET)
    while kind do
      kinds[#kinds + 1] = kind .. " " .. req.method .. " " .. req.body
      kind, req = h:next()
    end
    assert.are.same({"request POST " .. '{"jsonrpc":"2.0","method":"ping","id":1}',
      "request POST hello world", "request GET "}, kinds)
    assert.is_nil(h:next())
    -- GET said Connection: close: nothing after it is a request
    assert.are.same({"error", 400, "Data after `Connection: close`"},
      {h:next("GET / HTTP/1.1\r\nHost: x\r\n\r\n")})
  end)

  it("gives the same events for every split into two chunks and byte by byte", function()
    local input = POST .. CHUNKED .. GET
    local whole = events(input)
    assert.are.equal(3, #whole)
    for i = 0, #input do
      assert.are.same(whole, read(core.http_server(), {input:sub(1, i), input:sub(i + 1)}))
    end
    local bytes = {}
    for i = 1, #input do bytes[i] = input:sub(i, i) end
    assert.are.same(whole, read(core.http_server(), bytes))
  end)

  it("lower-cases names, joins repeated headers with ', ' and cookies with '; ', trims OWS", function()
    local req = one("GET / HTTP/1.1\r\nHost: h\r\nX-Multi: a\r\nx-multi: b \r\n"
      .. "Cookie: a=1\r\nCOOKIE: b=2\r\nX-Space:   v  w \t\r\nX-Empty:\r\n\r\n")
    assert.are.equal(show({host = "h", ["x-multi"] = "a, b", cookie = "a=1; b=2",
      ["x-space"] = "v  w", ["x-empty"] = ""}), show(req.headers))
  end)

  it("splits path and query; absolute-form targets give their path", function()
    local function pq(target)
      local req = one("GET " .. target .. " HTTP/1.1\r\nHost: h\r\n\r\n")
      return req.target .. " " .. req.path .. " " .. tostring(req.query)
    end
    assert.are.equal("/ / nil", pq("/"))
    assert.are.equal("/a/b?c=d&e /a/b c=d&e", pq("/a/b?c=d&e"))
    assert.are.equal("/a? /a ", pq("/a?"))
    assert.are.equal("http://h:1/x/y?q=1 /x/y q=1", pq("http://h:1/x/y?q=1"))
    assert.are.equal("http://h / nil", pq("http://h"))
  end)

  it("keep_alive: HTTP/1.1 by default, not with Connection: close, HTTP/1.0 only when asked", function()
    assert.is_true(one("GET / HTTP/1.1\r\nHost: h\r\n\r\n").keep_alive)
    assert.is_false(one("GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n").keep_alive)
    local r10 = one("GET / HTTP/1.0\r\n\r\n")
    assert.are.equal("1.0", r10.version)
    assert.is_false(r10.keep_alive)
    assert.is_true(one("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n").keep_alive)
  end)

  it("an Upgrade request is the last one: upgrade = true, keep_alive = false, nothing after", function()
    local h = core.http_server()
    local kind, req = h:next("GET /ws HTTP/1.1\r\nHost: h\r\nConnection: Upgrade\r\n"
      .. "Upgrade: websocket\r\n\r\n" .. "GET / HTTP/1.1\r\nHost: h\r\n\r\n")
    assert.are.equal("request", kind)
    assert.is_true(req.upgrade)
    assert.is_false(req.keep_alive)
    assert.are.equal(0, select("#", h:next()))
    assert.are.equal(0, select("#", h:next("GET / HTTP/1.1\r\nHost: h\r\n\r\n")))
  end)

  describe("requests that cannot be served", function()
    it("413 as soon as Content-Length exceeds max_body_bytes (no body needed)", function()
      local h = core.http_server{max_body_bytes = 10}
      assert.are.same({"error", 413, "request body too large", n = 3},
        pack(h:next("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 11\r\n\r\n")))
      assert.are.equal("abcdefghij", one("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\nabcdefghij",
        {max_body_bytes = 10}).body)
    end)

    it("413 when a chunked body grows past max_body_bytes, without buffering it", function()
      local h = core.http_server{max_body_bytes = 10}
      assert.is_nil(h:next("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nabcdef\r\n"))
      local ev = pack(h:next("6\r\nghijkl\r\n"))
      assert.are.same({"error", 413, "request body too large", n = 3}, ev)
      assert.is_truthy(tostring(h):match("%(0 bytes buffered%)"))
    end)

    it("431 past max_header_bytes (target + names + values + 4 per header) or max_headers", function()
      local head = "GET / HTTP/1.1\r\nHost: h\r\nX: " .. ("v"):rep(100) .. "\r\n\r\n"
      -- 1 + (4 + 1 + 4) + (1 + 100 + 4) = 115
      assert.are.equal('"request"', (events(head, {max_header_bytes = 115})[1]:match("^%S+")))
      assert.are.same({"error", 431, "request header fields too large"},
        {err(head, {max_header_bytes = 114})})
      assert.are.same({"error", 431, "too many request header fields"},
        {err("GET / HTTP/1.1\r\nHost: h\r\nA: 1\r\nB: 2\r\n\r\n", {max_headers = 2})})
      -- the limit holds while the head is still arriving
      local h = core.http_server{max_header_bytes = 100}
      assert.is_nil(h:next("GET / HTTP/1.1\r\nHost: h\r\nX: " .. ("v"):rep(80)))
      assert.are.equal(431, select(2, h:next(("v"):rep(20))))
    end)

    it("400 for bad syntax, a missing or repeated Host, smuggling shapes", function()
      local function status(input) return (select(2, err(input))) end
      assert.are.equal(400, status("GARBAGE\r\n\r\n"))
      assert.are.equal(400, status("GET / HTTP/1.1\r\nBad Header: x\r\n\r\n"))
      assert.are.same({"error", 400, "no Host header"}, {err("GET / HTTP/1.1\r\n\r\n")})
      assert.are.same({"error", 400, "more than one Host header"},
        {err("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n")})
      assert.are.equal(400, status("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab"))
      assert.are.equal(400, status("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n"
        .. "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n"))
      assert.are.equal(400, status("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"))
    end)

    it("refuses each shape that hides a second request, the hidden one never read", function()
      local PING = "POST /mcp HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\n{}"
      local cases = {
        { "POST /mcp HTTP/1.1\r\nHost: h\r\nTransfer-Encoding : chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n" .. PING,
          400, "Invalid header field char" },
        { "POST /mcp HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}XX0\r\n\r\n" .. PING,
          400, "Expected LF after chunk data" },
        { "POST /mcp HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n2\rX{}\r\n0\r\n\r\n" .. PING,
          400, "Expected LF after chunk size" },
        { "POST /mcp HTTP/1.1\r\nHost: h\r\nX: a\rTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" .. PING,
          400, "Missing expected LF after header value" },
        { "POST /mcp HTTP/1.1\r\nHost: h\r\nX: a\r\n b\r\nContent-Length: 2\r\n\r\n{}" .. PING,
          400, "Unexpected whitespace after header value" },
        { "POST /mcp HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n" .. PING,
          501, "transfer coding not implemented" },
      }
      for _, c in ipairs(cases) do
        local h = core.http_server()
        assert.are.same({"error", c[2], c[3]}, {h:next(c[1])})
        assert.are.same({"error", c[2], c[3]}, {h:next()})
      end
      -- HTTP/1.0 framed by Transfer-Encoding: answered, never kept alive (RFC 9112 6.1)
      local h = core.http_server()
      local kind, req = h:next("POST /mcp HTTP/1.0\r\nTransfer-Encoding: chunked\r\nConnection: keep-alive\r\n\r\n"
        .. "2\r\n{}\r\n0\r\n\r\n" .. PING)
      assert.are.same({"request", "{}", false}, {kind, req.body, req.keep_alive})
    end)

    it("judges an absolute-form target by its authority, not by Host", function()
      local h = core.http_server()
      local kind, req = h:next("POST http://other.example:81/mcp?x=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n")
      assert.are.same({"request", "other.example:81", "127.0.0.1", "/mcp", "x=1"},
        {kind, req.authority, req.headers.host, req.path, req.query})
      assert.are.same({"error", 400, "request target has userinfo"},
        {core.http_server():next("GET http://u@h/ HTTP/1.1\r\nHost: h\r\n\r\n")})
      assert.are.same({"error", 400, "request target scheme is not http"},
        {core.http_server():next("GET ftp://h/ HTTP/1.1\r\nHost: h\r\n\r\n")})
    end)

    it("tells the phase of the request being read", function()
      local h = core.http_server()
      assert.is_nil(h:phase())
      h:next("POST /mcp HTTP/1.1\r\nHo")
      assert.are.equal("head", h:phase())
      h:next("st: h\r\nContent-Length: 4\r\n\r\n{")
      assert.are.equal("body", h:phase())
      assert.are.equal("request", (h:next("}{}")))
      assert.is_nil(h:phase())
    end)

    it("505 for versions other than 1.0 and 1.1", function()
      assert.are.same({"error", 505, "HTTP version not supported"}, {err("GET / HTTP/2.0\r\n\r\n")})
      assert.are.same({"error", 505, "HTTP version not supported"}, {err("GET / HTTP/1.2\r\nHost: h\r\n\r\n")})
    end)

    it("after an error next() keeps returning it; requests before it came out first", function()
      local h = core.http_server()
      assert.are.equal("request", (h:next(POST .. "BAD\r\n\r\n")))
      local want = {"error", 400, select(3, h:next())}
      assert.are.equal("error", want[1])
      assert.are.same(want, {h:next()})
      assert.are.same(want, {h:next(POST)})
    end)
  end)

  describe("misuse raises", function()
    it("bad options", function()
      assert.has_error(function() core.http_server{max_body = 1} end,
        "unknown http_server option 'max_body'")
      assert.has_error(function() core.http_server{max_headers = 0} end,
        "option 'max_headers' must be an integer from 1 to 1000")
      assert.has_error(function() core.http_server{max_header_bytes = 1e6} end,
        "option 'max_header_bytes' must be an integer from 64 to 81920")
      assert.has_error(function() core.http_server(1) end)
    end)

    it("a chunk that is not a string; a closed reader", function()
      local h = core.http_server()
      assert.has_error(function() h:next({}) end)
      getmetatable(h).__close(h)
      assert.has_error(function() h:next() end, "jrpc.Http is closed")
      assert.has_error(function() h.next(core.codec()) end)
    end)
  end)

  it("a finalizer that feeds and reads the same reader during next() (the Work rule)", function()
    local output, status = files.run_lua([[
local core = require "jrpc.core"
local h = core.http_server()
local req = "POST /r HTTP/1.1\r\nHost: h\r\nX-A: 1\r\nX-B: 2\r\nX-C: 3\r\nContent-Length: 200\r\n\r\n" .. ("b"):rep(200)
local inner_ok, inner_bad, during, active, budget = 0, 0, 0, false, 0
local mt = {}
local function spawn()
  if rawget(_G, "newproxy") then local u = newproxy(true); getmetatable(u).__gc = mt.__gc
  else setmetatable({}, mt) end
end
mt.__gc = function()
  if active then
    during = during + 1
    local kind, r = h:next(req)           -- feed the reader being read, and read it
    if kind == "request" then
      if r.body == ("b"):rep(200) and r.headers["x-c"] == "3" then inner_ok = inner_ok + 1
      else inner_bad = inner_bad + 1 end
    elseif kind ~= nil then inner_bad = inner_bad + 1 end
  end
  if budget > 0 then budget = budget - 1; spawn() end
end
if rawget(_G, "jit") then collectgarbage("setpause", 1); collectgarbage("setstepmul", 1000)
else collectgarbage("incremental", 1, 1000, 0) end
local ok, bad = 0, 0
for _ = 1, 200 do
  budget = 50
  for _ = 1, 10 do spawn() end
  active = true
  local kind, r = h:next(req)
  while kind do
    if kind == "request" and r.body == ("b"):rep(200) and r.headers["x-a"] == "1"
      and r.headers["x-b"] == "2" and r.path == "/r" then ok = ok + 1 else bad = bad + 1 end
    kind, r = h:next()
  end
  active = false
end
active = false
print(ok >= 200, bad, inner_bad, during > 0, inner_ok > 0)
]])
    assert.are.equal("true\t0\t0\ttrue\ttrue\n", output)
    assert.are.equal(0, status)
  end)
end)

describe("HTTP writers", function()
  it("http_response: status line, headers sorted by name, Content-Length, body", function()
    assert.are.equal("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
      .. "mcp-session-id: abc\r\nContent-Length: 2\r\n\r\n{}",
      core.http_response(200, {["mcp-session-id"] = "abc", ["Content-Type"] = "application/json"}, "{}"))
    assert.are.equal("HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n", core.http_response(202))
    assert.are.equal("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n", core.http_response(404, {}))
    assert.are.equal("HTTP/1.1 204 No Content\r\n\r\n", core.http_response(204))
    assert.are.equal("HTTP/1.1 413 Content Too Large\r\nConnection: close\r\nContent-Length: 0\r\n\r\n",
      core.http_response(413, {Connection = "close"}))
    assert.are.equal("HTTP/1.1 505 HTTP Version Not Supported\r\nContent-Length: 3\r\n\r\nabc",
      core.http_response(505, nil, "abc"))
    assert.are.equal("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n42", core.http_response(200, nil, 42))
  end)

  it("http_response refuses bad statuses and headers (raises)", function()
    assert.has_error(function() core.http_response(99) end)
    assert.has_error(function() core.http_response(600) end)
    assert.has_error(function() core.http_response(200.5) end)
    assert.has_error(function() core.http_response(299) end)  -- no reason phrase
    assert.has_error(function() core.http_response(204, nil, "x") end)
    assert.has_error(function() core.http_response(200, {["X-A"] = "a\r\nX-Injected: 1"}) end)
    assert.has_error(function() core.http_response(200, {["X-A"] = "a\nb"}) end)
    assert.has_error(function() core.http_response(200, {["X-A\r\n"] = "a"}) end)
    assert.has_error(function() core.http_response(200, {["X A"] = "a"}) end)
    assert.has_error(function() core.http_response(200, {[""] = "a"}) end)
    assert.has_error(function() core.http_response(200, {["X-N"] = 1}) end)
    assert.has_error(function() core.http_response(200, {"x"}) end)
    assert.has_error(function() core.http_response(200, {["content-length"] = "1"}) end)
    assert.has_error(function() core.http_response(200, {["Transfer-Encoding"] = "chunked"}) end)
    assert.has_error(function() core.http_response(200, "x") end)
  end)

  it("http_stream_head: chunked SSE head with the defaults unless given", function()
    assert.are.equal("HTTP/1.1 200 OK\r\nCache-Control: no-cache\r\nContent-Type: text/event-stream\r\n"
      .. "X-Accel-Buffering: no\r\nTransfer-Encoding: chunked\r\n\r\n", core.http_stream_head(200))
    assert.are.equal("HTTP/1.1 200 OK\r\ncache-control: no-store\r\nContent-Type: text/event-stream\r\n"
      .. "Mcp-Session-Id: s1\r\nX-Accel-Buffering: no\r\nTransfer-Encoding: chunked\r\n\r\n",
      core.http_stream_head(200, {["Mcp-Session-Id"] = "s1", ["cache-control"] = "no-store"}))
    assert.has_error(function() core.http_stream_head(204) end)
    assert.has_error(function() core.http_stream_head(200, {["X"] = "\r"}) end)
  end)

  it("http_chunk: hex size, CRLF, bytes, CRLF; '' is the last chunk", function()
    assert.are.equal("5\r\nhello\r\n", core.http_chunk("hello"))
    assert.are.equal("1a\r\n" .. ("x"):rep(26) .. "\r\n", core.http_chunk(("x"):rep(26)))
    assert.are.equal("0\r\n\r\n", core.http_chunk(""))
    assert.has_error(function() core.http_chunk() end)
  end)

  it("sse_event: one data line (optional id line); CR or LF raises", function()
    assert.are.equal('data: {"jsonrpc":"2.0","id":1,"result":{}}\n\n',
      core.sse_event('{"jsonrpc":"2.0","id":1,"result":{}}'))
    assert.are.equal('id: 42\ndata: {}\n\n', core.sse_event("{}", "42"))
    assert.has_error(function() core.sse_event('{"a":\n1}') end)
    assert.has_error(function() core.sse_event('{"a":\r1}') end)
    assert.has_error(function() core.sse_event('{}', "a\nb") end)
  end)

  it("the writers' output reads back through the reader's parser shape", function()
    -- a stream: head + chunks, as a client would see it
    local bytes = core.http_stream_head(200) .. core.http_chunk(core.sse_event("{}")) .. core.http_chunk("")
    assert.are.equal("HTTP/1.1 200 OK\r\nCache-Control: no-cache\r\nContent-Type: text/event-stream\r\n"
      .. "X-Accel-Buffering: no\r\nTransfer-Encoding: chunked\r\n\r\n" .. "a\r\ndata: {}\n\n\r\n0\r\n\r\n", bytes)
  end)
end)
