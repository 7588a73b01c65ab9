-- core.http_client (the sans-I/O HTTP/1.1 response reader, src/http_client.c)
-- and core.http_request (the request writer): events for every way a body is
-- delimited, any split of the bytes, keep-alive, interim responses, limits,
-- malformed and truncated responses, misuse, and finalizers that use the
-- reader while it pushes (in a child interpreter, as spec/core_reentry_spec.lua).
local core = require "jrpc.core"
local files = dofile("spec/files.lua")

-- Every event `r` gives for `bytes` fed in pieces of `step` (whole when
-- nil), then, when `eof`, after finish(): a list of {kind, value} with
-- the body events joined, so any split gives the same list.
local function events(bytes, step, eof, opts, prepare)
  local r = core.http_client(opts)
  if prepare then prepare(r) end
  local out = {}
  local function push(kind, v)
    local last = out[#out]
    if kind == "body" and last and last[1] == "body" then last[2] = last[2] .. v
    else out[#out + 1] = { kind, v } end
  end
  local function drain(chunk)
    local kind, v = r:next(chunk)
    while kind do
      push(kind, v)
      kind, v = r:next()
    end
    if v ~= nil then push("error", v) end
  end
  step = step or #bytes
  for i = 1, math.max(#bytes, 1), step do drain(bytes:sub(i, i + step - 1)) end
  if eof then r:finish(); drain() end
  return out
end

local function head(status, reason, headers, raw, keep, version)
  return { "head", { status = status, reason = reason, version = version or "1.1", headers = headers,
    raw_headers = raw, keep_alive = keep } }
end

local CL = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{\"ok\":true}"

describe("core.http_client", function()
  it("reads a Content-Length response, the same for every split", function()
    local want = {
      head(200, "OK", { ["content-type"] = "application/json", ["content-length"] = "11" },
        { { "content-type", "application/json" }, { "content-length", "11" } }, true),
      { "body", '{"ok":true}' },
      { "done", true },
    }
    for step = 1, #CL do assert.are.same(want, events(CL, step)) end
  end)

  it("gives chunked body bytes as they arrive, de-chunked, trailers dropped", function()
    local r = core.http_client()
    local kind, h = r:next("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel")
    assert.are.equal("head", kind)
    assert.are.equal(200, h.status)
    assert.are.same({ "body", "hel" }, { r:next() })
    assert.are.same({}, { r:next() })                       -- nothing more yet
    -- what one feed parsed comes out as one piece
    assert.are.same({ "body", "lo world" }, { r:next("lo\r\n6\r\n world\r\n") })
    assert.are.same({}, { r:next("0\r\nX-Trailer: t\r\n") })
    assert.are.same({ "done", true }, { r:next("\r\n") })
    assert.are.same({}, { r:next() })
  end)

  it("keeps repeated headers: joined in headers, every line in raw_headers", function()
    local bytes = "HTTP/1.1 200 OK\r\nSet-Cookie: a=1\r\nset-cookie: b=2\r\nVary: x \r\nVary: y\r\nContent-Length: 0\r\n\r\n"
    assert.are.same({
      head(200, "OK", { ["set-cookie"] = "a=1, b=2", vary = "x, y", ["content-length"] = "0" },
        { { "set-cookie", "a=1" }, { "set-cookie", "b=2" }, { "vary", "x" }, { "vary", "y" },
          { "content-length", "0" } }, true),
      { "done", true },
    }, events(bytes, 3))
  end)

  it("reads a body until the connection closes (no length, HTTP/1.0)", function()
    local bytes = "HTTP/1.0 200 OK\r\nServer: s\r\n\r\nall of it\nuntil close"
    for step = 1, #bytes, 5 do
      assert.are.same({
        head(200, "OK", { server = "s" }, { { "server", "s" } }, false, "1.0"),
        { "body", "all of it\nuntil close" },
        { "done", false },
      }, events(bytes, step, true))
    end
  end)

  it("reads responses one after another on a kept-alive connection", function()
    local bytes = CL .. "HTTP/1.1 204 No Content\r\nX: 1\r\n\r\n"
      .. "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nhi"
    local want = {
      head(200, "OK", { ["content-type"] = "application/json", ["content-length"] = "11" },
        { { "content-type", "application/json" }, { "content-length", "11" } }, true),
      { "body", '{"ok":true}' }, { "done", true },
      head(204, "No Content", { x = "1" }, { { "x", "1" } }, true), { "done", true },
      head(200, "OK", { connection = "close", ["content-length"] = "2" },
        { { "connection", "close" }, { "content-length", "2" } }, false),
      { "body", "hi" }, { "done", false },
    }
    assert.are.same(want, events(bytes))
    assert.are.same(want, events(bytes, 7))
  end)

  it("skips interim 1xx responses (100 Continue, 103 Early Hints)", function()
    local bytes = "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n" .. CL
    local got = events(bytes, 4)
    assert.are.equal(3, #got)
    assert.are.equal(200, got[1][2].status)
    assert.are.same({ "body", '{"ok":true}' }, got[2])
  end)

  it("reads no body after an interim response (fuzz/regress/http_client_interim_chunked_body)", function()
    -- a 1xx ends at its blank line (RFC 9112 6.3): what follows must be the next response
    local bytes = "HTTP/1.1 100 Continue\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n" .. CL
    for step = 1, #bytes, 3 do
      local got = events(bytes, step)   -- the error, then the same on every later call
      for i = 1, #got do assert.are.same({ "error", "malformed response: Expected HTTP/" }, got[i]) end
      assert.is_true(#got >= 1)
    end
  end)

  it("reads a head with no reason and no headers (fuzz/regress/http_client_empty_head)", function()
    -- no length: read until the close, so no keep-alive
    assert.are.same({ head(201, "", {}, {}, false), { "done", false } }, events("HTTP/1.1 201\r\n\r\n", nil, true))
    assert.are.same({ head(204, "", {}, {}, true), { "done", true } }, events("HTTP/1.1 204 \r\n\r\n"))
  end)

  it("reads no body after HEAD (no_body) even with a Content-Length", function()
    local bytes = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n" .. CL
    local got = events(bytes, nil, false, nil, function(r) r:no_body() end)
    assert.are.same(head(200, "OK", { ["content-length"] = "5" }, { { "content-length", "5" } }, true), got[1])
    assert.are.same({ "done", true }, got[2])
    assert.are.equal(200, got[3][2].status)             -- the next response, with its body
    assert.are.same({ "body", '{"ok":true}' }, got[4])
  end)

  it("fails a response cut short, and says so on every later call", function()
    local r = core.http_client()
    assert.are.equal("head", (r:next("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc")))
    assert.are.same({ "body", "abc" }, { r:next() })
    r:finish()
    assert.are.same({ nil, "connection closed before the response ended" }, { r:next() })
    assert.are.same({ nil, "connection closed before the response ended" }, { r:next("more") })
    local r2 = core.http_client()
    assert.are.same({}, { r2:next("HTTP/1.1 200 OK\r\nContent-") })
    r2:finish()
    assert.are.same({ nil, "connection closed before the response ended" }, { r2:next() })
    local r3 = core.http_client()   -- closed between responses: nothing, no error
    r3:finish()
    assert.are.same({}, { r3:next() })
  end)

  it("answers nil, msg for malformed responses", function()
    local cases = {
      { "HTTP/2.0 200 OK\r\n\r\n", "malformed response: HTTP version not supported" },
      { "HTTTP/1.1 200 OK\r\n\r\n", "malformed response: Expected HTTP/" },
      { "HTTP/1.1 20 OK\r\n\r\n", "malformed response: Invalid status code" },
      { "HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n", "malformed response: Invalid character in Content-Length" },
      { "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello", "malformed response: Duplicate Content-Length" },
      { "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "malformed response: Invalid character in chunk size" },
    }
    for _, c in ipairs(cases) do
      local got = events(c[1])
      assert.are.same({ "error", c[2] }, got[#got])
    end
  end)

  it("enforces its limits, with documented errors", function()
    local function last(bytes, opts)
      local got = events(bytes, nil, false, opts)
      return got[#got]
    end
    assert.are.same({ "error", "response header fields too large" },
      last("HTTP/1.1 200 OK\r\nX-Long: " .. ("a"):rep(80) .. "\r\n\r\n", { max_header_bytes = 64 }))
    assert.are.same({ "error", "too many response header fields" },
      last("HTTP/1.1 200 OK\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n", { max_headers = 2 }))
    assert.are.same({ "error", "response body too large" },   -- from the Content-Length alone
      last("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", { max_body_bytes = 4 }))
    assert.are.same({ "error", "response body too large" },   -- chunked: counted as it comes
      last("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n", { max_body_bytes = 4 }))
    assert.are.same({ "done", true },                          -- false: no limit on the total
      last("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", { max_body_bytes = false }))
    assert.are.same({ "done", true }, last(CL, { max_body_bytes = 11 }))
  end)

  it("raises for bad options and for a closed reader", function()
    assert.has_error(function() core.http_client{ max_body = 1 } end, "unknown http_client option 'max_body'")
    assert.has_error(function() core.http_client{ max_headers = 0 } end,
      "option 'max_headers' must be an integer from 1 to 1000")
    assert.has_error(function() core.http_client("x") end)
    local r = core.http_client()
    assert.are.equal("jrpc.HttpClient (0 bytes buffered)", tostring(r))
    getmetatable(r).__gc(r)
    assert.has_error(function() r:next("x") end, "jrpc.HttpClient is closed")
  end)
end)

describe("core.http_request", function()
  it("writes the request line, sorted headers, Content-Length and the body", function()
    assert.are.equal("POST /mcp?x=1 HTTP/1.1\r\nAccept: application/json, text/event-stream\r\n"
      .. "Content-Type: application/json\r\nHost: 127.0.0.1:8080\r\nContent-Length: 2\r\n\r\n{}",
      core.http_request("POST", "/mcp?x=1", { Host = "127.0.0.1:8080", ["Content-Type"] = "application/json",
        Accept = "application/json, text/event-stream" }, "{}"))
    assert.are.equal("GET / HTTP/1.1\r\nhost: h\r\n\r\n", core.http_request("GET", "/", { host = "h" }))
    assert.are.equal("DELETE /s HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n",
      core.http_request("DELETE", "/s", { Host = "h" }, ""))
  end)

  it("reads back through http_server as the same request", function()
    local bytes = core.http_request("PUT", "/a/b?q=1", { Host = "h", ["X-Y"] = "z" }, "body")
    local kind, req = core.http_server():next(bytes)
    assert.are.equal("request", kind)
    assert.are.same({ "PUT", "/a/b", "q=1", "body", "z", "h" },
      { req.method, req.path, req.query, req.body, req.headers["x-y"], req.headers.host })
  end)

  it("raises for misuse", function()
    local cases = {
      { { "GET", "/", {} }, "bad argument #3 to 'f' (an HTTP/1.1 request needs one Host header)" },
      { { "GET", "/", { Host = "a", host = "b" } }, "bad argument #3 to 'f' (an HTTP/1.1 request needs one Host header)" },
      { { "G T", "/", { Host = "h" } }, "bad argument #1 to 'f' (a method must be a token)" },
      { { "", "/", { Host = "h" } }, "bad argument #1 to 'f' (empty method)" },
      { { "GET", "/ x", { Host = "h" } }, "bad argument #2 to 'f' (a target holds no spaces or control characters)" },
      { { "GET", "", { Host = "h" } }, "bad argument #2 to 'f' (empty target)" },
      { { "GET", "/", { Host = "h", ["Content-Length"] = "1" } }, "bad argument #3 to 'f' (Content-Length and Transfer-Encoding are written by jrpc)" },
      { { "GET", "/", { Host = "h\r\nX: y" } }, "bad argument #3 to 'f' (control character in header 'Host')" },
    }
    for _, c in ipairs(cases) do
      local ok, err = pcall(core.http_request, c[1][1], c[1][2], c[1][3])
      assert.is_false(ok)
      -- the function's name: 'jrpc.core.http_request' on Lua 5.4, '?' on LuaJIT
      assert.are.equal(c[2], (err:gsub("to '[^']*' %(", "to 'f' (", 1)))
    end
  end)
end)

local child = files.run_lua

describe("core.http_server while finalizers read the next pipelined request", function()
  -- the plumbing http_client shares: a request table's method, version and
  -- keep-alive were read from the reader while pushing, so a finalizer
  -- that read the next request meanwhile gave one request the next's
  it("gives every request its own method, version and keep-alive", function()
    local out, status = child([[
local core = require "jrpc.core"
local h = core.http_server()
local got, inner = {}, 0
local mt = {}
local function spawn()
  if rawget(_G, "newproxy") then local u = newproxy(true); getmetatable(u).__gc = mt.__gc
  else setmetatable({}, mt) end
end
local active = false
mt.__gc = function()
  if not active then return end
  spawn()
  local kind, v = h:next()
  if kind then inner = inner + 1; got[#got + 1] = v end
end
if rawget(_G, "jit") then collectgarbage("setpause", 1); collectgarbage("setstepmul", 1000)
else collectgarbage("incremental", 1, 1000, 0) end
local hs = {}
for i = 1, 60 do hs[#hs + 1] = ("X-H%d: %s\r\n"):format(i, ("v"):rep(i)) end
local parts = {}
for n = 1, 40 do
  parts[n] = (n % 2 == 1 and "GET /" .. n .. " HTTP/1.0\r\nConnection: keep-alive\r\n"
    or "POST /" .. n .. " HTTP/1.1\r\nContent-Length: 0\r\n") .. "Host: h\r\n" .. table.concat(hs) .. "\r\n"
end
local all = table.concat(parts)
for _ = 1, 30 do spawn() end
active = true
local kind, v = h:next(all)
while kind do
  got[#got + 1] = v
  kind, v = h:next()
end
active = false
local good, seen = 0, {}
for _, r in ipairs(got) do
  local n = tonumber(r.path:sub(2))
  if r.method == (n % 2 == 1 and "GET" or "POST") and r.version == (n % 2 == 1 and "1.0" or "1.1")
    and r.keep_alive and not seen[n] then good = good + 1 end
  seen[n] = true
end
print("requests", #got, "right", good, "reentered", inner > 0)
]])
    assert.are.equal("requests\t40\tright\t40\treentered\ttrue\n", out)
    assert.are.equal(0, status)
  end)
end)

describe("core.http_client while finalizers use it", function()
  -- A child interpreter (the ASan one under make test-asan): finalizers
  -- run at every allocation step and read the very reader that is pushing
  -- a 60-header head; each event must come out whole, exactly once.
  it("a reentrant next() gets the following event; the outer one stays intact", function()
    local out, status = child([[
local core = require "jrpc.core"
local r = core.http_client()
local got, inner = {}, 0
local mt = {}
local function spawn()
  if rawget(_G, "newproxy") then local u = newproxy(true); getmetatable(u).__gc = mt.__gc
  else setmetatable({}, mt) end
end
local active = false
mt.__gc = function()
  if not active then return end
  spawn()
  for _ = 1, 3 do  -- the body and end of the response being pushed, then the next head
    local kind, v = r:next()
    if not kind then break end
    inner = inner + 1
    got[#got + 1] = { kind, v }
  end
end
if rawget(_G, "jit") then collectgarbage("setpause", 1); collectgarbage("setstepmul", 1000)
else collectgarbage("incremental", 1, 1000, 0) end
local hs = {}
for i = 1, 60 do hs[#hs + 1] = ("X-H%d: %s\r\n"):format(i, ("v"):rep(i)) end
local parts = {}
for n = 1, 20 do  -- odd ones HTTP/1.0 kept alive, even ones HTTP/1.1 (the versions must not mix up)
  parts[n] = (n % 2 == 1 and "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\n" or "HTTP/1.1 200 OK\r\nX-Pad: p\r\n")
    .. "X-Index: " .. n .. "\r\n" .. table.concat(hs) .. "Content-Length: 3\r\n\r\nabc"
end
local all = table.concat(parts)
for _ = 1, 30 do spawn() end
active = true
local kind, v = r:next(all)
while true do
  if kind then got[#got + 1] = { kind, v } end
  kind, v = r:next()
  if kind == nil then break end
end
active = false
collectgarbage("collect")
local heads, bodies, dones, good, seen = 0, 0, 0, 0, {}
for _, e in ipairs(got) do
  if e[1] == "head" then
    heads = heads + 1
    local n = tonumber(e[2].headers["x-index"])
    local ok = e[2].status == 200 and #e[2].raw_headers == 63 and e[2].keep_alive == true
      and e[2].version == (n % 2 == 1 and "1.0" or "1.1") and not seen[n]
    seen[n] = true
    for i = 1, 60 do ok = ok and e[2].headers["x-h" .. i] == ("v"):rep(i) end
    if ok then good = good + 1 end
  elseif e[1] == "body" then bodies = bodies + (e[2] == "abc" and 1 or 0)
  elseif e[1] == "done" then dones = dones + 1 end
end
print("heads", heads, "good", good, "bodies", bodies, "dones", dones, "reentered", inner > 0)
]])
    assert.are.equal("heads\t20\tgood\t20\tbodies\t20\tdones\t20\treentered\ttrue\n", out)
    assert.are.equal(0, status)
  end)
end)
