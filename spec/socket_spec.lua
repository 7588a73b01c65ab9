-- jrpc.socket: the LuaSocket transport and its frame pump, on real sockets
-- on 127.0.0.1: against the luv TCP server (examples/tcp_server.lua in a
-- child process) and against its own LuaSocket server. Every wait is
-- bounded: `drive` pumps at most `limit` seconds.
local socket = require "socket"
local jsock = require "jrpc.socket"
local jrpc = require "jrpc"

local now = jrpc.core.now

local loop = jsock.new(socket)

-- Run `fn` as a task, pumping until it is done (at most `limit` seconds).
local function drive(fn, limit)
  local task = loop:spawn_task(fn)
  local deadline = now() + (limit or 10)
  while not task.done and now() < deadline do
    loop:pump(0.002)
    socket.sleep(0.001)
  end
  assert(task.done, "task still waiting after " .. (limit or 10) .. " s")
  if not task.ok then error(task.error, 0) end
  return (table.unpack or unpack)(task.results, 1, task.results.n)
end

-- Pump until cond() (at most `limit` seconds); returns whether it held.
local function pump_until(cond, limit)
  local deadline = now() + (limit or 5)
  while not cond() do
    if now() > deadline then return false end
    loop:pump(0.002)
    socket.sleep(0.001)
  end
  return true
end

-- A raw LuaSocket listener (not jrpc) and the one connection it accepts.
local function raw_server()
  local srv = assert(socket.bind("127.0.0.1", 0))
  srv:settimeout(0)
  local _, port = srv:getsockname()
  return srv, math.floor(tonumber(port))
end

local function raw_accept(srv)
  local client
  assert(pump_until(function() client = srv:accept(); return client ~= nil end, 5), "no connection")
  client:settimeout(0)
  return client
end

local function methods()
  return {
    add = function(p) return p[1] + p[2] end,
    echo = function(p) return p[1] end,
  }
end

describe("jrpc.socket against the luv TCP server (examples/tcp_server.lua)", function()
  local pid, pipe, port

  setup(function()
    pipe = assert(io.popen("exec sh -c 'echo $$; exec lua5.4 examples/tcp_server.lua --port 0 2>&1'", "r"))
    pid = assert(tonumber(pipe:read("l")))
    local line = pipe:read("l")
    port = tonumber(line and line:match("^listening on 127%.0%.0%.1:(%d+)$"))
    assert(port, "server said: " .. tostring(line))
  end)

  teardown(function()
    if pid then os.execute("kill " .. pid) end
    if pipe then pipe:close() end
  end)

  it("answers, times out by the pump, and passes an error reply on", function()
    local r = drive(function()
      -- the server answers the timed-out request once told of the timeout: logged, dropped
      local conn = assert(loop:connect{ port = port, on_error = function() end })
      local out = {}
      out.subtract = conn.peer:request("subtract", { 42, 23 })
      out.sum = conn.peer:request("sum", { 1, 2, 4 })
      local t0 = now()
      local _, err = conn.peer:request("slow", { 2 }, { timeout = 0.2 })
      out.timeout, out.waited = err.code, now() - t0
      local _, ferr = conn.peer:request("fail")
      out.fail = ferr.code
      conn:close()
      out.reason = conn.close_reason
      return out
    end)
    assert.are.equal(19, r.subtract)
    assert.are.equal(7, r.sum)
    assert.are.equal("timeout", r.timeout)
    assert.is_true(r.waited >= 0.2 and r.waited < 1, "waited " .. r.waited)
    assert.are.equal(-32603, r.fail)
    assert.are.equal("connection closed", r.reason)
  end)

  it("reports a refused connect with the address", function()
    local srv, free = raw_server()
    srv:close()  -- nobody listens on `free` now
    local conn, err = drive(function() return loop:connect{ port = free } end)
    assert.is_nil(conn)
    assert.are.equal("connect", err.code)
    assert.are.equal("connect to 127.0.0.1:" .. free .. ": connection refused", err.message)
  end)
end)

describe("jrpc.socket against its own server", function()
  local server

  before_each(function()
    server = assert(loop:listen{ port = 0, methods = methods() })
  end)

  after_each(function()
    server:close()
    pump_until(function() return not loop:pump(0) end, 3)
  end)

  it("serves a client; both ends are jrpc.socket", function()
    local a, b = drive(function()
      local conn = assert(loop:connect{ port = server.port })
      return conn.peer:request("add", { 2, 3 }), conn.peer:request("echo", { "hi" })
    end)
    assert.are.equal(5, a)
    assert.are.equal("hi", b)
  end)

  it("shows the bytes both ways to conn:tap", function()
    local sent, read = {}, {}
    local a = drive(function()
      local conn = assert(loop:connect{ port = server.port })
      conn:tap(function(b) sent[#sent + 1] = b end, function(b) read[#read + 1] = b end)
      return conn.peer:request("add", { 2, 3 })
    end)
    assert.are.equal(5, a)
    assert.are.same({ '{"jsonrpc":"2.0","method":"add","params":[2,3],"id":1}\n' }, sent)
    assert.are.same({ '{"jsonrpc":"2.0","result":5,"id":1}\n' }, read)
  end)

  it("writes a big message in parts across pumps", function()
    local big = string.rep("0123456789abcdef", 512 * 1024)  -- 8 MiB
    local conn = assert(loop:connect{ port = server.port, on_connect = function() end })
    assert(pump_until(function() return not conn._connecting end, 5))
    local got, gerr
    conn.peer:request("echo", { big }, nil, function(err, res) gerr, got = err, res end)
    -- more than the socket takes at once: the rest waits for later pumps
    assert.is_true(conn:write_queue_size() > 0)
    assert.is_true(pump_until(function() return got ~= nil or gerr ~= nil end, 20))
    assert.is_nil(gerr)
    assert.are.equal(#big, #got)
    assert.is_true(got == big)
    assert.are.equal(0, conn:write_queue_size())
    conn:close()
  end)

  it("returns from pump within its budget while input keeps coming", function()
    local line = '{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}\n'
    -- 2.2 MB of requests (a tenth under a sanitizer, which is ten times slower)
    local count = os.getenv("JRPC_SANITIZER") and 4000 or 40000
    local data = string.rep(line, count)
    local raw = socket.tcp()
    raw:settimeout(5)
    assert(raw:connect("127.0.0.1", server.port))
    raw:settimeout(0)
    -- as RPC clients do: with Nagle on, a loaded machine can fall into the
    -- Nagle/delayed-ACK lockstep (one small segment per 40 ms)
    assert(raw:setoption("tcp-nodelay", true))
    local pos, replies, longest, pumps = 1, 0, 0, 0
    local deadline = now() + 60
    while replies < #data / #line * #'{"jsonrpc":"2.0","result":3,"id":1}\n' and now() < deadline do
      if pos <= #data then
        local last, _, partial = raw:send(data, pos)
        pos = math.floor(tonumber(last or partial)) + 1
      end
      -- processor time, not wall time: a loaded machine may stop the
      -- process for seconds inside a pump, which is no fault of the pump
      local t0 = os.clock()
      loop:pump(0.005)
      longest, pumps = math.max(longest, os.clock() - t0), pumps + 1
      local s, _, partial = raw:receive(1024 * 1024)
      replies = replies + #(s or partial)
    end
    raw:close()
    assert.are.equal(count * #'{"jsonrpc":"2.0","result":3,"id":1}\n', replies,
      ("sent %d of %d bytes in %d pumps"):format(pos - 1, #data, pumps))
    assert.is_true(pumps > 1)
    -- one 64 KiB read and its handlers may run over the budget
    assert.is_true(longest < (os.getenv("JRPC_SANITIZER") and 0.5 or 0.05), "longest pump " .. longest)
  end)
end)

describe("jrpc.socket with a raw peer", function()
  it("settles pending requests at the end of stream with the documented reason", function()
    local srv, port = raw_server()
    local conn = assert(loop:connect{ port = port, on_connect = function() end })
    local raw = raw_accept(srv)
    local err1
    conn.peer:request("never", nil, nil, function(err) err1 = err end)
    assert(pump_until(function()
      local s, _, partial = raw:receive("*l")
      return (s or partial or "") ~= ""
    end, 5), "the request did not arrive")
    raw:close()
    assert.is_true(pump_until(function() return err1 ~= nil end, 5))
    assert.are.equal("closed", err1.code)
    assert.are.equal("connection closed by the other side", err1.message)
    assert.is_true(conn:closed())
    assert.are.equal("connection closed by the other side", conn.close_reason)
    local _, err2 = drive(function() return conn.peer:request("add", { 1, 2 }) end)
    assert.are.equal("closed", err2.code)
    srv:close()
  end)

  it("expires a request on its timeout through the pump", function()
    local srv, port = raw_server()
    local r = drive(function()
      local conn = assert(loop:connect{ port = port })
      local t0 = now()
      local res, err = conn.peer:request("never", nil, { timeout = 0.15 })
      conn:close()
      return { res = res, code = err and err.code, waited = now() - t0 }
    end)
    assert.is_nil(r.res)
    assert.are.equal("timeout", r.code)
    assert.is_true(r.waited >= 0.15 and r.waited < 0.5, "waited " .. r.waited)
    srv:close()
  end)

  it("tries a full socket once per pump, not on every send", function()
    local srv, port = raw_server()
    local conn = assert(loop:connect{ port = port, on_connect = function() end })
    local raw = raw_accept(srv)
    assert(pump_until(function() return not conn._connecting end, 5))
    assert(conn.sock:setoption("send-buffer-size", 16384))
    assert(raw:setoption("recv-buffer-size", 16384))
    -- the connection's socket, counting its sends (each one would join
    -- the queued small messages again: quadratic under a slow reader)
    local real, sends = conn.sock, 0
    conn.sock = setmetatable({}, { __index = function(_, name)
      return function(_, ...)
        if name == "send" then sends = sends + 1 end
        return real[name](real, ...)
      end
    end })
    assert(conn.peer:notify("log", { string.rep("x", 1024 * 1024) }))  -- fills the socket
    sends = 0
    for i = 1, 1000 do assert(conn.peer:notify("log", { i })) end
    assert.are.equal(0, sends)
    loop:pump(0)
    assert.is_true(sends >= 1 and sends <= 64, "sends in one pump: " .. sends)
    conn:close()
    raw:close()
    srv:close()
  end)

  it("is busy while the other side does not read, and stops reading", function()
    local srv, port = raw_server()
    local max = 64 * 1024
    local conn = assert(loop:connect{ port = port, max_write_queue = max, methods = methods(),
      on_connect = function() end })
    local raw = raw_accept(srv)
    assert(pump_until(function() return not conn._connecting end, 5))
    -- small fixed kernel buffers: autotuning would let the kernel take the
    -- queue below half the bound while the other side does not read
    assert(conn.sock:setoption("send-buffer-size", 16384))
    assert(raw:setoption("recv-buffer-size", 16384))
    -- the other side sends a request; we must not answer it while busy
    assert(raw:send('{"jsonrpc":"2.0","method":"add","params":[1,2],"id":"r1"}\n'))
    local chunk = string.rep("x", 256 * 1024)
    local sent = 0
    while not conn:busy() and sent < 400 do  -- the kernel buffers take some MB first
      assert(conn.peer:notify("log", { chunk }))
      sent = sent + 1
    end
    local why = conn:busy()
    assert.is_string(why)
    local n, m = why:match("^write queue full: (%d+) bytes not yet written %(max_write_queue (%d+)%)$")
    assert.are.equal(max, tonumber(m))
    assert.is_true(tonumber(n) > max)
    local ok, err = conn.peer:notify("log", { "more" })
    assert.is_nil(ok)
    assert.are.equal("busy", err.code)
    assert.are.equal(why, err.message)
    local _, rerr = drive(function() return conn.peer:request("add", { 1, 2 }) end)
    assert.are.equal("busy", rerr.code)
    for _ = 1, 20 do
      loop:pump(0.002)
      if conn:busy() then  -- not read while busy
        assert.are.equal(0, conn.peer:stats().handled)
      end
    end
    assert.is_string(conn:busy())
    -- the other side reads: below half the bound we read and answer again
    local reply
    assert.is_true(pump_until(function()
      repeat
        local s = raw:receive("*l")
        if s and s:find('"id":"r1"', 1, true) then reply = s end
      until not s or reply
      return reply ~= nil
    end, 20))
    assert.are.equal('{"jsonrpc":"2.0","result":3,"id":"r1"}', reply)
    assert.is_nil(conn:busy())
    assert.is_true(conn.peer:notify("log", { "again" }))
    conn:close()
    raw:close()
    srv:close()
  end)
end)
