-- jrpc.uv sockets: real TCP on 127.0.0.1 and Unix sockets in a temp dir,
-- servers with several clients at once, each connection its own peer.
local S = dofile("spec/uv_support.lua")
local loop = S.loop

-- A server whose handlers show which connection they serve: `whoami`
-- answers the name given to the connection, `ask` calls back the client on
-- the same connection, `hang` never answers.
local function start_server(address, extra)
  local names, n = {}, 0
  local opts = {
    on_error = function() end,
    on_peer = function(conn)
      n = n + 1
      names[conn.peer] = "conn" .. n
    end,
    methods = {
      whoami = function(_, ctx) return names[ctx.peer] end,
      ask = function(_, ctx) return "hello " .. ctx.peer:request("client/name", {}) end,
      hang = function() loop:sleep(30) end,
      subtract = function(p) return p[1] - p[2] end,
    },
  }
  for k, v in pairs(address) do opts[k] = v end
  for k, v in pairs(extra or {}) do opts[k] = v end
  return assert(loop:listen(opts))
end

-- Run each function in its own coroutine and wait for all of them.
local function all(fns)
  local left = #fns
  for _, fn in ipairs(fns) do
    coroutine.wrap(function() fn(); left = left - 1 end)()
  end
  assert.is_true(S.wait_until(function() return left == 0 end, 5))
end

local function count(set)
  local c = 0
  for _ in pairs(set) do c = c + 1 end
  return c
end

describe("jrpc.uv TCP", function()
  after_each(S.cleanup)

  it("serves several clients at once, each connection its own peer", function()
    S.run(function()
      local server = start_server{ host = "127.0.0.1", port = 0 }
      assert.is_true(server.port > 0)
      local seen = {}
      local clients = {}
      local work = {}
      for c = 1, 3 do
        work[c] = function()
          local conn = assert(loop:connect{ host = "127.0.0.1", port = server.port })
          clients[c] = conn
          conn.peer:method("client/name", function() return "client" .. c end)
          for i = 1, 100 do
            assert.are.equal(c * 1000 - i, conn.peer:request("subtract", { c * 1000, i }))
          end
          seen[c] = { conn.peer:request("whoami", {}), conn.peer:request("ask", {}) }
        end
      end
      all(work)
      assert.are.equal(3, count(server.connections))
      local names = {}
      for c = 1, 3 do
        assert.are.equal("hello client" .. c, seen[c][2])  -- the call back reached its own client
        names[seen[c][1]] = true
      end
      assert.are.same({ conn1 = true, conn2 = true, conn3 = true }, names)
      -- a client leaving closes its connection on the server
      clients[1]:close()
      assert.is_true(S.wait_until(function() return count(server.connections) == 2 end))
      server:close()
      assert.is_true(S.wait_until(function() return clients[2]:closed() and clients[3]:closed() end))
      assert.are.equal("connection closed by the other side", clients[2].close_reason)
    end)
  end)

  it("settles a client's pending request with closed when the server goes away", function()
    S.run(function()
      local server = start_server{ port = 0 }
      local conn = assert(loop:connect{ port = server.port })
      local got
      conn.peer:request("hang", {}, nil, function(err) got = err end)
      assert.is_true(S.wait_until(function() return count(server.connections) == 1 end))
      loop:sleep(0.02)
      local t0 = S.now()
      server:close()
      assert.is_true(S.wait_until(function() return got ~= nil end, 2))
      assert.is_true(S.since(t0) < 0.5)
      assert.are.equal("closed", got.code)
      assert.are.equal("connection closed by the other side", got.message)
    end)
  end)

  it("chooses the framing per connection", function()
    S.run(function()
      local server = start_server({ port = 0 }, { framing = "lsp" })
      local conn = assert(loop:connect{ port = server.port, framing = "lsp" })
      local bytes = {}
      local send
      send = conn.peer._out:set_send(function(b) bytes[#bytes + 1] = b; return send(b) end)
      assert.are.equal(5, conn.peer:request("subtract", { 7, 2 }))
      local body = '{"jsonrpc":"2.0","method":"subtract","params":[7,2],"id":1}'
      assert.are.equal("Content-Length: " .. #body .. "\r\n\r\n" .. body, bytes[1])
      -- a client that frames by lines gets no answer from it
      local other = assert(loop:connect{ port = server.port, on_error = function() end })
      local _, err = other.peer:request("subtract", { 7, 2 }, { timeout = 0.2 })
      assert.are.equal("timeout", err.code)
      server:close()
    end)
  end)

  it("shows the bytes both ways to conn:tap, until it is taken off", function()
    S.run(function()
      local server = start_server{ port = 0 }
      local conn = assert(loop:connect{ port = server.port })
      local sent, read = {}, {}
      conn:tap(function(b) sent[#sent + 1] = b end, function(b) read[#read + 1] = b end)
      assert.are.equal(5, conn.peer:request("subtract", { 7, 2 }))
      assert.are.same({ '{"jsonrpc":"2.0","method":"subtract","params":[7,2],"id":1}\n' }, sent)
      assert.are.same({ '{"jsonrpc":"2.0","result":5,"id":1}\n' }, read)
      conn:tap()
      assert.are.equal(1, conn.peer:request("subtract", { 3, 2 }))
      assert.are.same({ 1, 1 }, { #sent, #read })
      assert.has_error(function() conn:tap(1) end, "tap: on_sent must be a function")
      server:close()
    end)
  end)

  it("connects with a callback outside a coroutine", function()
    local server, got
    S.run(function()
      server = start_server{ port = 0 }
    end)
    assert.is_true(loop:connect{ port = server.port, on_connect = function(conn, err)
      assert.is_nil(err)
      conn.peer:request("subtract", { 10, 4 }, nil, function(rerr, result)
        got = rerr or result
        server:close()
      end)
    end })
    S.run(function() assert.is_true(S.wait_until(function() return got ~= nil end)) end)
    assert.are.equal(6, got)
  end)

  it("reports a refused connection", function()
    S.run(function()
      local server = start_server{ port = 0 }
      local port = server.port
      server:close()
      local conn, err = loop:connect{ port = port }
      assert.is_nil(conn)
      assert.are.equal("connect", err.code)
      assert.are.equal("connect to 127.0.0.1:" .. port .. ": ECONNREFUSED", err.message)
    end)
  end)

  it("raises on misuse", function()
    assert.has_error(function() loop:connect{ port = 1 } end,
      "connect: outside a coroutine, on_connect = function(conn, err) is required")
    assert.has_error(function() loop:listen{ host = "127.0.0.1" } end,
      "listen: needs port = number (TCP) or path = string (Unix socket)")
  end)

  it("runs examples/tcp_server.lua: listening line on stderr, then serves", function()
    S.run(function()
      local stderr = ""
      local child = assert(S.spawn{ cmd = S.INTERP, args = { "examples/tcp_server.lua", "--port", "0" },
        stderr = function(chunk) stderr = stderr .. chunk end })
      assert.is_true(S.wait_until(function() return stderr:find("\n") ~= nil end, 5), stderr)
      local port = tonumber(stderr:match("^listening on 127%.0%.0%.1:(%d+)\n$"))
      assert.truthy(port, stderr)
      local conns = {}
      for i = 1, 2 do conns[i] = assert(loop:connect{ port = port }) end
      assert.are.equal(19, conns[1].peer:request("subtract", { 42, 23 }))
      assert.are.equal(7, conns[2].peer:request("sum", { 1, 2, 4 }))
      local _, err = conns[2].peer:request("nope", {})
      assert.are.equal(-32601, err.code)
      assert.is_true(child:kill())
      assert.is_true(S.wait_until(function() return conns[1]:closed() and conns[2]:closed() end))
      assert.is_true(S.wait_until(function() return child.exit_signal ~= nil end))
      assert.are.equal(15, child.exit_signal)
    end)
  end)
end)

describe("jrpc.uv Unix sockets", function()
  local dir
  before_each(function() dir = S.tmpdir() end)
  after_each(function() S.cleanup(); S.rmdir(dir) end)

  it("serve and connect by path; closing the server removes the socket file", function()
    S.run(function()
      local path = dir .. "/rpc.sock"
      local server = start_server{ path = path }
      assert.is_nil(server.port)
      assert.are.equal("socket", S.uv.fs_stat(path).type)
      local a = assert(loop:connect{ path = path })
      local b = assert(loop:connect{ path = path })
      assert.are.equal(1, a.peer:request("subtract", { 3, 2 }))
      assert.are.same({ "conn1", "conn2" }, { a.peer:request("whoami", {}), b.peer:request("whoami", {}) })
      -- the path is taken while the server listens
      local again, err = loop:listen{ path = path }
      assert.is_nil(again)
      assert.are.equal("listen", err.code)
      assert.are.equal("listen on " .. path .. ": EADDRINUSE: address already in use", err.message)
      server:close()
      assert.is_nil(S.uv.fs_stat(path))
      assert.is_true(S.wait_until(function() return a:closed() and b:closed() end))
    end)
  end)

  it("reports a path nobody listens on", function()
    S.run(function()
      local conn, err = loop:connect{ path = dir .. "/nobody.sock" }
      assert.is_nil(conn)
      assert.are.same({ "connect", "connect to " .. dir .. "/nobody.sock: ENOENT" }, { err.code, err.message })
    end)
  end)
end)
