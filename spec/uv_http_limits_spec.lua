-- jrpc.uv.http under clients that do not play along: pipelined floods,
-- heads and bodies that never end, connections that fill the cap, streams
-- that stay, clients that never read. Raw TCP clients on 127.0.0.1 in the
-- same loop; every wait is bounded.
local S = dofile("spec/uv_support.lua")

local uv = S.uv
local loop = S.loop

local serve = S.http_serve

-- A raw client: `got` collects what it reads, `closed` once the server hung up.
local function connect(port)
  local c = { tcp = uv.new_tcp(), got = {}, closed = false, connected = false }
  c.tcp:connect("127.0.0.1", port, function(err)
    assert(not err, err)
    c.connected = true
    c.tcp:read_start(function(rerr, data)
      if rerr or not data then
        c.closed = true
        if not c.tcp:is_closing() then c.tcp:close() end
        return
      end
      c.got[#c.got + 1] = data
    end)
  end)
  assert(S.wait_until(function() return c.connected end, 2))
  function c.text() return table.concat(c.got) end
  function c.write(bytes) c.tcp:write(bytes) end
  function c.close() if not c.tcp:is_closing() then c.tcp:close() end end
  return c
end

local function post(body, extra)
  return ("POST /p HTTP/1.1\r\nHost: h\r\n%sContent-Length: %d\r\n\r\n%s"):format(extra or "", #body, body)
end

local function count(text, pattern)
  local n = 0
  for _ in text:gmatch(pattern) do n = n + 1 end
  return n
end

local function echo(req, res)
  res:send(200, {}, req.body)
end

describe("jrpc.uv.http limits", function()
  after_each(S.cleanup)

  it("answers 10,000 pipelined requests in one write, in order, from a handler that answers at once", function()
    S.run(function()
      local server = serve(echo)
      local c = connect(server.port)
      local parts = {}
      for i = 1, 10000 do parts[i] = post(tostring(i)) end
      c.write(table.concat(parts))
      assert.is_true(S.wait_until(function() return count(c.text(), "HTTP/1%.1 ") >= 10000 end, 20))
      local text = c.text()
      assert.are.equal(10000, count(text, "HTTP/1%.1 200 OK\r\n"))
      local i = 0
      for body in text:gmatch("Content%-Length: %d+\r\n\r\n(%d+)") do
        i = i + 1
        if tonumber(body) ~= i then error(("response %d has body %s"):format(i, body)) end
      end
      assert.are.equal(10000, i)
      c.close()
      server:close()
    end, 30)
  end)

  it("answers 408 to a head that does not end within header_timeout, and to a body within body_timeout", function()
    S.run(function()
      local server = serve(echo, { header_timeout = 0.2, body_timeout = 0.3, idle_timeout = 5 })
      local head = connect(server.port)
      head.write("POST /p HTTP/1.1\r\nHo")
      local body = connect(server.port)
      body.write("POST /p HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\nabc")
      local t0 = S.now()
      assert.is_true(S.wait_until(function() return head.closed and body.closed end, 3))
      assert.is_true(S.since(t0) < 1.5)
      local function refusal(msg)
        return ("HTTP/1.1 408 Request Timeout\r\nconnection: close\r\ncontent-type: text/plain\r\n"
          .. "Content-Length: %d\r\n\r\n%s"):format(#msg, msg)
      end
      assert.are.equal(refusal("request head not received within 0.2 s\n"), head.text())
      assert.are.equal(refusal("request body not received within 0.3 s\n"), body.text())
      server:close()
    end)
  end)

  it("keeps an idle connection idle_timeout, then closes it without a word", function()
    S.run(function()
      local server = serve(echo, { idle_timeout = 0.2 })
      local c = connect(server.port)
      c.write(post("x"))
      assert.is_true(S.wait_until(function() return c.closed end, 2))
      assert.are.equal("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx", c.text())
      server:close()
    end)
  end)

  it("at max_connections, lets the longest-waiting unfinished connection go for a new one", function()
    S.run(function()
      local server = serve(echo, { max_connections = 2 })
      local slow1 = connect(server.port)
      slow1.write("P")
      loop:sleep(0.02)
      local slow2 = connect(server.port)
      slow2.write("P")
      loop:sleep(0.02)
      local c = connect(server.port)
      c.write(post("ok"))
      assert.is_true(S.wait_until(function() return c.text():find("ok$") ~= nil end, 2))
      assert.are.equal("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", c.text())
      assert.is_true(S.wait_until(function() return slow1.closed end, 2))
      assert.is_false(slow2.closed)
      assert.are.equal("", slow1.text())
      assert.are.equal(1, server.evicted)
      slow2.close()
      c.close()
      server:close()
    end)
  end)

  it("answers 503 when every connection is answering", function()
    S.run(function()
      local release = false
      local server = serve(function(req, res)
        S.wait_until(function() return release end, 3)
        echo(req, res)
      end, { max_connections = 1 })
      local busy = connect(server.port)
      busy.write(post("busy"))
      loop:sleep(0.05)
      local c = connect(server.port)
      c.write(post("x"))
      assert.is_true(S.wait_until(function() return c.closed end, 2))
      assert.are.equal("HTTP/1.1 503 Service Unavailable\r\nconnection: close\r\ncontent-type: text/plain\r\n"
        .. "retry-after: 1\r\nContent-Length: 21\r\n\r\ntoo many connections\n", c.text())
      release = true
      assert.is_true(S.wait_until(function() return busy.text():find("busy$") ~= nil end, 2))
      busy.close()
      server:close()
    end)
  end)

  it("counts SSE streams apart from connections, and refuses those past max_streams with 503", function()
    S.run(function()
      local server = serve(function(req, res)
        if req.path == "/stream" then
          if res:stream(200, {}) then
            res:event('{"open":true}')
            S.wait_until(function() return res.closed end, 5)
          end
          return
        end
        echo(req, res)
      end, { max_connections = 1, max_streams = 2 })
      local s1 = connect(server.port)
      s1.write("GET /stream HTTP/1.1\r\nHost: h\r\n\r\n")
      assert.is_true(S.wait_until(function() return s1.text():find("open") ~= nil end, 2))
      local s2 = connect(server.port)
      s2.write("GET /stream HTTP/1.1\r\nHost: h\r\n\r\n")
      assert.is_true(S.wait_until(function() return s2.text():find("open") ~= nil end, 2))
      -- two streams and the one connection of max_connections is still free
      local c = connect(server.port)
      c.write(post("short"))
      assert.is_true(S.wait_until(function() return c.text():find("short$") ~= nil end, 2))
      local s3 = connect(server.port)
      c.close()
      loop:sleep(0.02)
      s3.write("GET /stream HTTP/1.1\r\nHost: h\r\n\r\n")
      assert.is_true(S.wait_until(function() return s3.text():find("streams") ~= nil end, 2))
      assert.are.equal("HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain\r\nretry-after: 5\r\n"
        .. "Content-Length: 17\r\n\r\ntoo many streams\n", s3.text())
      assert.is_false(s1.closed or s2.closed)
      s1.close(); s2.close(); s3.close()
      server:close()
    end)
  end)

  it("stops reading a client that does not read its responses, and serves it again once it does", function()
    S.run(function()
      local handled = 0
      local big = ("x"):rep(256 * 1024)
      local server = serve(function(_, res)
        handled = handled + 1
        res:send(200, {}, big)
      end, { max_queued_bytes = 64 * 1024 })
      -- a raw socket that reads nothing: the kernel's buffers fill, then ours
      local c = { tcp = uv.new_tcp() }
      local connected = false
      c.tcp:connect("127.0.0.1", server.port, function() connected = true end)
      assert.is_true(S.wait_until(function() return connected end, 2))
      local parts = {}
      for i = 1, 200 do parts[i] = post("r") end
      c.tcp:write(table.concat(parts))
      loop:sleep(0.5)
      local stuck = handled
      assert.is_true(stuck < 200, "handled " .. stuck)
      loop:sleep(0.3)
      assert.are.equal(stuck, handled)  -- it stays stuck while nothing is read
      local seen = 0
      c.tcp:read_start(function(_, data) if data then seen = seen + #data end end)
      assert.is_true(S.wait_until(function() return handled == 200 end, 10))
      assert.is_true(S.wait_until(function() return seen >= 200 * #big end, 10))
      c.tcp:close()
      server:close()
    end, 20)
  end)

  it("starts large requests one per loop turn: a small one is answered before the large ones queued", function()
    S.run(function()
      local order = {}
      local server = serve(function(req, res)
        order[#order + 1] = #req.body > 1000 and "large" or "small"
        res:send(200, {}, "")
      end, { large_body_bytes = 1000 })
      local bodies = ("y"):rep(5000)
      local conns = {}
      for i = 1, 4 do conns[i] = connect(server.port) end
      local small = connect(server.port)
      for i = 1, 4 do conns[i].write(post(bodies)) end
      small.write(post("s"))
      assert.is_true(S.wait_until(function() return #order == 5 end, 3))
      -- the small one does not wait behind all four large ones
      local at
      for i, v in ipairs(order) do if v == "small" then at = i end end
      assert.is_true(at <= 2, table.concat(order, " "))
      for i = 1, 4 do conns[i].close() end
      small.close()
      server:close()
    end)
  end)
end)

describe("jrpc.uv.http read-ahead (in process, fuzz/fake_luv.lua)", function()
  local fake_luv = dofile("fuzz/fake_luv.lua")
  local http = require "jrpc.uv.http"

  it("reads at most max_pipelined_bytes of pipelined requests while a response is under way", function()
    local co = require "jrpc.uv.co"
    local fuv = fake_luv.new()
    local waiter, served = nil, {}
    local server = assert(http.listen({ uv = fuv }, { port = 8080, handler = function(req, res)
      served[#served + 1] = req.body
      if req.body == "first" then  -- waits until the test resumes it
        waiter = co.current()
        co.wait("held by the test")
      end
      res:send(200, {}, req.body)
    end }))
    local c = fuv.connect(server.handle)
    c:send(post("first"))
    assert.is_not_nil(waiter)
    -- 16 KiB chunks of pipelined requests until the server stops reading
    local one = post(("y"):rep(1000))
    local chunk = one:rep(math.floor(16384 / #one))
    local sent = 0
    for _ = 1, 20 do
      if c.tcp.paused then break end
      c:send(chunk)
      sent = sent + #chunk
    end
    assert.is_true(c.tcp.paused, "still reading after " .. sent .. " bytes")
    assert.is_true(sent > 64 * 1024 and sent <= 64 * 1024 + #chunk, "read " .. sent .. " bytes")
    assert.are.same({ "first" }, served)
    -- the response ends: the requests held are served, and reading goes on
    co.resume(waiter)
    assert.is_false(c.tcp.paused)
    assert.are.equal(1 + sent / #one, #served)
    assert.are.equal(1 + sent / #one, count(c.out, "HTTP/1%.1 200 OK"))
    server:close()
  end)

  it("reads up to one request's worth (max_header_bytes + max_body_bytes) when no response is under way", function()
    local fuv = fake_luv.new()
    local server = assert(http.listen({ uv = fuv }, { port = 8080, max_body_bytes = 100000,
      large_body_bytes = 100000,  -- served at once (the fake has no loop turns)
      handler = function(req, res) res:send(200, {}, tostring(#req.body)) end }))
    local c = fuv.connect(server.handle)
    local head = ("POST /p HTTP/1.1\r\nHost: h\r\nContent-Length: %d\r\n\r\n"):format(100000)
    c:send(head)
    for _ = 1, 9 do
      c:send(("z"):rep(10000))
      assert.is_false(c.tcp.paused)
    end
    c:send(("z"):rep(10000))
    assert.are.equal("100000", c.out:match("\r\n\r\n(%d+)$"))
    assert.is_false(c.tcp.paused)
    server:close()
  end)
end)
