-- bench/http_edges.lua: jrpc's MCP Streamable HTTP server at its edges,
-- next to the official TypeScript SDK v2 server, in one run on 127.0.0.1.
--
--   lua5.4 bench/http_edges.lua        (needs lua-luv; part of make bench)
--
-- The servers, each started fresh for its turn and stopped after it:
--   jrpc (lua5.4), jrpc (luajit)  examples/mcp/everything_server.lua --http 127.0.0.1:0
--   SDK v2 (node)                 node/mcp_edge_server.js 0 (@modelcontextprotocol/server
--                                 + @modelcontextprotocol/node, stateless)
-- Every request is a 2026-07-28 `tools/call` of the tool `test_echo` (both
-- servers have it: text and structured content echo `message`), with the
-- headers the transport requires (MCP-Protocol-Version, Mcp-Method,
-- Mcp-Name) and the `_meta` envelope. (2026-07-28 has no `ping`: both
-- servers answer it -32601, so the small request is this tools/call.)
--   small   arguments {message = "ping"}: about 420 bytes on the wire
--   large   arguments {message = "large", data = [0,1,...,9,0,1,...]} with
--           2,000,000 one-digit integers: a body of 4,000,2xx bytes (3.81
--           MiB, under jrpc's 4 MiB limit); `data` is not in the schema,
--           so both servers decode it and answer a small result
--
-- Per server:
--  1. idle: 50 small requests unmeasured, then IDLE_PROBES measured, one
--     at a time on one connection; VmRSS then is "start".
--  2. burst: LARGE_CLIENTS connections each send LARGE_EACH large requests
--     one after the other (a connection stops at its first wrong answer;
--     no new request after LARGE_SECONDS; the run fails
--     after LARGE_SECONDS + 30), while one more connection sends small
--     requests one after the other (at most 100,000) until the last large
--     answer. Reported: the small requests' p50/p99/max latency, the
--     burst's wall time, the large requests' latency, the server's CPU
--     seconds per large request; VmRSS sampled every 20 ms (its peak),
--     VmHWM, and VmRSS SETTLE seconds after the burst ("after").
--  3. non-reading connections, two shapes: HOLD_CONNS connections each
--     write HOLD_SMALL small requests (pipelined, one write) or HOLD_BIG
--     requests whose message is HOLD_BIG_BYTES long (results about twice
--     that), and never read. After HOLD_WAIT seconds: VmRSS growth over
--     the server's VmRSS before, per connection; how many requests the
--     client could write (the server read them or the kernel's socket
--     buffers hold them: the bytes still queued in the client tell);
--     a small request on a fresh connection still answered (and its
--     latency). Then they close, and after 1.5 s VmRSS again and another
--     small request.
-- Any answer that is not 200 with a result, a connection failure, or a
-- server that exits is counted and printed, and the exit status is 1.
--
-- Environment: SERVERS (default "lua5.4 luajit node"), LARGE_CLIENTS (32),
-- LARGE_EACH (2), LARGE_SECONDS (60), IDLE_PROBES (300), SETTLE (3),
-- HOLD_CONNS (8), HOLD_SMALL (2000), HOLD_BIG (256), HOLD_BIG_BYTES
-- (65536), HOLD_WAIT (3). Markdown tables on stdout, progress on stderr.
local uv = require "luv"

local source = debug.getinfo(1, "S").source
local here = source:match("^@(.*)[/\\][^/\\]*$") or "."
local ROOT = uv.fs_realpath(here .. "/..")

local function env(name, default) return tonumber(os.getenv(name)) or default end
local SERVERS = os.getenv("SERVERS") or "lua5.4 luajit node"
local LARGE_CLIENTS = env("LARGE_CLIENTS", 32)
local LARGE_EACH = env("LARGE_EACH", 2)
local LARGE_SECONDS = env("LARGE_SECONDS", 60)
local IDLE_PROBES = env("IDLE_PROBES", 300)
local SETTLE = env("SETTLE", 3)
local HOLD_CONNS = env("HOLD_CONNS", 8)
local HOLD_SMALL = env("HOLD_SMALL", 2000)
local HOLD_BIG = env("HOLD_BIG", 256)
local HOLD_BIG_BYTES = env("HOLD_BIG_BYTES", 65536)
local HOLD_WAIT = env("HOLD_WAIT", 3)
local MAX_PROBES = 100000
local ELEMENTS = 2000000

local failures = {}
local function fail(what) failures[#failures + 1] = what; io.stderr:write("http_edges: " .. what .. "\n") end
local function log(fmt, ...) io.stderr:write(("http_edges: " .. fmt .. "\n"):format(...)) end

-- {======================================================================
-- Coroutines on the luv loop
-- =======================================================================

local function resume(co, ...)
  local ok, err = coroutine.resume(co, ...)
  if not ok then
    io.stderr:write("http_edges: " .. debug.traceback(co, err) .. "\n")
    os.exit(2)
  end
end

local function go(fn, ...) resume(coroutine.create(fn), ...) end

local function sleep(seconds)
  local co, t = coroutine.running(), uv.new_timer()
  t:start(math.floor(seconds * 1000), 0, function() t:close(); resume(co) end)
  coroutine.yield()
end

-- Run each fn(i) for i = 1..n in its own coroutine; return when all have.
local function all(n, fn)
  if n == 0 then return end
  local co, left, waiting = coroutine.running(), n, false
  for i = 1, n do
    go(function()
      fn(i)
      left = left - 1
      if left == 0 and waiting then resume(co) end
    end)
  end
  if left > 0 then waiting = true; coroutine.yield() end
end

local function now() return uv.hrtime() / 1e9 end

-- }======================================================================

-- {======================================================================
-- HTTP/1.1 client: one request in flight, or pipelined writes never read
-- =======================================================================

-- One whole response at the start of buf: status, body, the rest; nil while
-- incomplete. Content-Length or chunked bodies.
local function parse(buf)
  local he = buf:find("\r\n\r\n", 1, true)
  if not he then return nil end
  local head = buf:sub(1, he + 1):lower()
  local status = tonumber(head:match("^http/1%.%d (%d%d%d)"))
  local len = head:match("\r\ncontent%-length:%s*(%d+)")
  local pos = he + 4
  if len then
    local stop = pos + tonumber(len) - 1
    if #buf < stop then return nil end
    return status, buf:sub(pos, stop), buf:sub(stop + 1)
  elseif head:find("\r\ntransfer%-encoding:%s*chunked") then
    local parts = {}
    while true do
      local eol = buf:find("\r\n", pos, true)
      if not eol then return nil end
      local size = tonumber(buf:sub(pos, eol - 1):match("^%x+"), 16)
      if not size then return status, "bad chunk", "" end
      if size == 0 then
        if #buf < eol + 3 then return nil end
        return status, table.concat(parts), buf:sub(eol + 4)
      end
      if #buf < eol + 2 + size + 1 then return nil end
      parts[#parts + 1] = buf:sub(eol + 2, eol + 1 + size)
      pos = eol + 2 + size + 2
    end
  end
  return status, "", buf:sub(pos)
end

local Conn = {}
Conn.__index = Conn

local function connect(port)
  local tcp, co = uv.new_tcp(), coroutine.running()
  tcp:connect("127.0.0.1", port, function(err) resume(co, err) end)
  local err = coroutine.yield()
  if err then tcp:close(); return nil, err end
  tcp:nodelay(true)
  return setmetatable({ tcp = tcp, buf = "" }, Conn)
end

function Conn:_fail(err)
  self.dead = self.dead or tostring(err)
  if not self.tcp:is_closing() then self.tcp:close() end
  local co = self.waiting
  self.waiting = nil
  if co then resume(co, nil, self.dead) end
end

function Conn:_on_read(err, data)
  if err or not data then return self:_fail(err or "closed by the server") end
  self.buf = self.buf .. data
  local status, body, rest = parse(self.buf)
  if status then
    self.buf = rest
    local co = self.waiting
    self.waiting = nil
    if co then resume(co, status, body) end
  end
end

-- Send bytes (one request), wait for its response: status (nil when the
-- connection failed), body or error, milliseconds.
function Conn:request(bytes)
  if self.dead then return nil, self.dead, 0 end
  if not self.reading then
    self.reading = true
    self.tcp:read_start(function(err, data) self:_on_read(err, data) end)
  end
  self.waiting = coroutine.running()
  local t0 = uv.hrtime()
  local ok, err = self.tcp:write(bytes, function(e) if e then self:_fail(e) end end)
  if not ok then self.waiting = nil; self:_fail(err); return nil, self.dead, 0 end
  local status, body = coroutine.yield()
  return status, body, (uv.hrtime() - t0) / 1e6
end

function Conn:close()
  self.dead = self.dead or "closed"
  if not self.tcp:is_closing() then self.tcp:close() end
end

-- }======================================================================

-- {======================================================================
-- Requests
-- =======================================================================

local META = '"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
  .. '"io.modelcontextprotocol/clientCapabilities":{}}'

local function echo_body(id, message, extra)
  return ('{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"test_echo",'
    .. '"arguments":{"message":"%s"%s},%s}}'):format(id, message, extra or "", META)
end

local function http_request(port, body)
  return ("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
    .. "Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n"
    .. "Mcp-Method: tools/call\r\nMcp-Name: test_echo\r\nContent-Length: %d\r\n\r\n%s")
    :format(port, #body, body)
end

local DATA = ',"data":[' .. ("0,1,2,3,4,5,6,7,8,9,"):rep(ELEMENTS // 10 - 1) .. '0,1,2,3,4,5,6,7,8,9]'
local LARGE_BODY = echo_body(1, "large", DATA)
assert(#LARGE_BODY < 4 * 1024 * 1024)

-- Right: 200 and a result echoing the message (JSON, or one SSE event).
local function answered(status, body, message)
  return status == 200 and body:find('"result"', 1, true) ~= nil
    and body:find('"text":"' .. message .. '"', 1, true) ~= nil
end

-- }======================================================================

-- {======================================================================
-- The server process
-- =======================================================================

local function read_file(path)
  local f = io.open(path, "r")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end

local function status_kib(pid, field)
  local s = read_file("/proc/" .. pid .. "/status")
  return s and tonumber(s:match(field .. ":%s*(%d+)"))
end

local TICK = 100  -- CLK_TCK on Linux
local function cpu_seconds(pid)
  local s = read_file("/proc/" .. pid .. "/stat")
  if not s then return nil end
  local rest = s:match("%) (.*)$")
  local f = {}
  for w in rest:gmatch("%S+") do f[#f + 1] = w end
  return (tonumber(f[12]) + tonumber(f[13])) / TICK  -- utime, stime (fields 14, 15)
end

local function spawn_server(kind)
  local cmd, args
  if kind == "node" then
    cmd, args = "node", { "node/mcp_edge_server.js", "0" }
  else
    cmd, args = kind, { "examples/mcp/everything_server.lua", "--http", "127.0.0.1:0" }
  end
  local err_pipe = uv.new_pipe(false)
  local srv = { kind = kind, lines = {}, exited = false }
  local co = coroutine.running()
  local handle, pid = uv.spawn(cmd, { args = args, cwd = ROOT, stdio = { nil, nil, err_pipe } },
    function(code, signal)
      srv.exited, srv.code, srv.signal = true, code, signal
      if srv.on_exit then srv.on_exit() end
    end)
  if not handle then error("cannot start " .. cmd .. ": " .. tostring(pid)) end
  srv.handle, srv.pid = handle, pid
  local partial, waiting = "", true
  err_pipe:read_start(function(err, data)
    if err or not data then err_pipe:close(); return end
    partial = partial .. data
    for line in partial:gmatch("([^\n]*)\n") do
      srv.lines[#srv.lines + 1] = line
      local port = line:match("^listening on http://127%.0%.0%.1:(%d+)/mcp")
      if port and waiting then
        waiting = false
        srv.port = tonumber(port)
        resume(co)
      end
    end
    partial = partial:match("[^\n]*$")
  end)
  local t = uv.new_timer()
  t:start(15000, 0, function() t:close(); if waiting then waiting = false; resume(co) end end)
  coroutine.yield()
  if not t:is_closing() then t:stop(); t:close() end
  if not srv.port then error(kind .. " server did not say it listens:\n" .. table.concat(srv.lines, "\n")) end
  return srv
end

local function stop_server(srv)
  if srv.exited then return end
  local co = coroutine.running()
  srv.on_exit = function() resume(co) end
  srv.handle:kill("sigterm")
  local t = uv.new_timer()
  t:start(5000, 0, function()
    t:close()
    if not srv.exited then srv.handle:kill("sigkill") end
  end)
  coroutine.yield()
  if not t:is_closing() then t:stop(); t:close() end
  srv.handle:close()
end

-- }======================================================================

-- {======================================================================
-- Measurements
-- =======================================================================

local function pct(sorted, p)
  if #sorted == 0 then return nil end
  return sorted[math.max(1, math.ceil(p * #sorted))]
end

local function stats(list)
  local s = {}
  for i, v in ipairs(list) do s[i] = v end
  table.sort(s)
  return { n = #s, p50 = pct(s, 0.5), p99 = pct(s, 0.99), max = s[#s] }
end

-- Small requests one after the other on conn until stop() or n of them;
-- their latencies (ms). Wrong answers are counted in errs.
local function probe_loop(conn, port, n, stop, errs, id0)
  local lat = {}
  for i = 1, n do
    if stop and stop() then break end
    local status, body, ms = conn:request(http_request(port, echo_body(id0 + i, "ping")))
    if not answered(status, body, "ping") then
      errs[#errs + 1] = ("small request: %s %s"):format(tostring(status), tostring(body):sub(1, 200):gsub("%s+$", ""))
      if status == nil then break end
    else
      lat[#lat + 1] = ms
    end
  end
  return lat
end

-- A timer that samples the server's VmRSS every 20 ms: its peak.
local function rss_sampler(pid)
  local s = { peak = 0 }
  local t = uv.new_timer()
  t:start(0, 20, function()
    local v = status_kib(pid, "VmRSS")
    if v and v > s.peak then s.peak = v end
  end)
  function s.stop() t:stop(); t:close() end
  return s
end

local function measure(kind)
  local r = { kind = kind, errs = {} }
  local srv = spawn_server(kind)
  local pid, port = srv.pid, srv.port
  r.pid = pid
  log("%s: pid %d, port %d", kind, pid, port)

  -- 1. idle
  local probe = assert(connect(port))
  probe_loop(probe, port, 50, nil, r.errs, 0)
  r.idle = stats(probe_loop(probe, port, IDLE_PROBES, nil, r.errs, 100))
  sleep(0.5)
  r.rss_start = status_kib(pid, "VmRSS")

  -- 2. burst of large requests, small ones behind them
  local large_req = http_request(port, LARGE_BODY)
  local clients = {}
  all(LARGE_CLIENTS, function(i) clients[i] = assert(connect(port)) end)
  local sampler = rss_sampler(pid)
  local cpu0 = cpu_seconds(pid)
  local t0 = now()
  local deadline, done = t0 + LARGE_SECONDS, false
  local large_lat, large_sent, large_ok = {}, 0, 0
  local watchdog = uv.new_timer()
  watchdog:start(math.floor((LARGE_SECONDS + 30) * 1000), 0, function()
    fail(("%s: burst not over %d s after its start: connections closed"):format(kind, LARGE_SECONDS + 30))
    for _, c in ipairs(clients) do c:_fail("watchdog") end
  end)
  local small_lat
  all(2, function(which)
    if which == 1 then
      all(LARGE_CLIENTS, function(i)
        local c = clients[i]
        for _ = 1, LARGE_EACH do
          if now() >= deadline then break end
          large_sent = large_sent + 1
          local status, body, ms = c:request(large_req)
          if answered(status, body, "large") then
            large_ok = large_ok + 1
            large_lat[#large_lat + 1] = ms / 1000
          else  -- this connection sends no more
            r.errs[#r.errs + 1] = ("large request on connection %d: %s %s (answered %.1f s after the burst"
              .. " began)"):format(i, tostring(status), (tostring(body):sub(1, 200):gsub("%s+$", "")), now() - t0)
            break
          end
        end
      end)
      done = true
    else
      small_lat = probe_loop(probe, port, MAX_PROBES, function() return done end, r.errs, 1000)
    end
  end)
  local t1 = now()
  watchdog:stop(); watchdog:close()
  sampler.stop()
  r.cpu_large = (cpu_seconds(pid) or 0) - (cpu0 or 0)
  for _, c in ipairs(clients) do c:close() end
  r.burst_s, r.large_sent, r.large_ok = t1 - t0, large_sent, large_ok
  r.large = stats(large_lat)
  r.small = stats(small_lat)
  r.rss_peak, r.hwm = sampler.peak, status_kib(pid, "VmHWM")
  sleep(SETTLE)
  r.rss_after = status_kib(pid, "VmRSS")
  log("%s: burst %.1f s, %d/%d large ok, small p99 %.1f ms, RSS %d -> %d -> %d KiB", kind, r.burst_s,
    large_ok, large_sent, r.small.p99 or -1, r.rss_start or -1, r.rss_peak, r.rss_after or -1)

  -- 3. non-reading connections
  local shapes = {
    { name = "small", n = HOLD_SMALL, message = "ping" },
    { name = "big", n = HOLD_BIG, message = ("x"):rep(HOLD_BIG_BYTES) },
  }
  r.hold = {}
  for _, shape in ipairs(shapes) do
    local h = { name = shape.name, n = shape.n }
    local one = http_request(port, echo_body(7, shape.message))
    local pipelined = one:rep(shape.n)
    sleep(1)
    h.before = status_kib(pid, "VmRSS")
    local conns = {}
    all(HOLD_CONNS, function(i) conns[i] = assert(connect(port)) end)
    for _, c in ipairs(conns) do
      c.tcp:write(pipelined, function(e) if e then c.dead = tostring(e) end end)
    end
    local sampler2 = rss_sampler(pid)
    sleep(HOLD_WAIT)
    sampler2.stop()
    h.held = status_kib(pid, "VmRSS")
    h.peak = sampler2.peak
    local unread = 0
    for _, c in ipairs(conns) do unread = unread + c.tcp:get_write_queue_size() end
    h.read_per_conn = (#pipelined * HOLD_CONNS - unread) / #one / HOLD_CONNS
    local fresh = connect(port)
    local lat = fresh and probe_loop(fresh, port, 20, nil, r.errs, 5000) or {}
    if fresh then fresh:close() end
    h.probe_ms = stats(lat).p50
    h.probe_ok = #lat
    for _, c in ipairs(conns) do
      if c.dead and c.dead ~= "closed" then r.errs[#r.errs + 1] = "held connection: " .. c.dead end
      c:close()
    end
    sleep(1.5)
    h.after = status_kib(pid, "VmRSS")
    local again = connect(port)
    h.after_ok = again and #probe_loop(again, port, 5, nil, r.errs, 6000) or 0
    if again then again:close() end
    r.hold[#r.hold + 1] = h
    log("%s: %d non-reading connections x %d %s: RSS %d -> %d KiB, %.0f requests read per connection",
      kind, HOLD_CONNS, shape.n, shape.name, h.before or -1, h.held or -1, h.read_per_conn)
  end

  probe:close()
  r.alive = not srv.exited
  if srv.exited then
    fail(("%s: server exited (code %s, signal %s)"):format(kind, tostring(srv.code), tostring(srv.signal)))
  end
  stop_server(srv)
  r.stderr = {}
  for _, line in ipairs(srv.lines) do
    if not line:match("^listening on ") and not line:match("^worker %-: draining$")
      and not line:match("^worker %-: stopped$") then
      r.stderr[#r.stderr + 1] = line
    end
  end
  for _, e in ipairs(r.errs) do fail(kind .. ": " .. e) end
  for _, l in ipairs(r.stderr) do fail(kind .. " stderr: " .. l) end
  return r
end

-- }======================================================================

-- {======================================================================
-- Report
-- =======================================================================

local function cmd_out(cmd)
  local p = io.popen(cmd .. " 2>&1")
  local s = p:read("a")
  p:close()
  return (s:gsub("%s+$", ""))
end

local function f1(x) return x and ("%.1f"):format(x) or "-" end
local function f2(x) return x and ("%.2f"):format(x) or "-" end
local function mib(kib) return kib and ("%.1f"):format(kib / 1024) or "-" end
local function ratio(a, b) return (a and b and b > 0) and ("%.2f"):format(a / b) or "-" end

local NAMES = { ["lua5.4"] = "jrpc (lua5.4)", luajit = "jrpc (luajit)", node = "SDK v2 (node)" }

local function main()
  local results = {}
  for kind in SERVERS:gmatch("%S+") do results[#results + 1] = measure(kind) end
  local sdk
  for _, r in ipairs(results) do if r.kind == "node" then sdk = r end end

  local function version(package)
    return cmd_out(("node -p 'require(\"%s/node/node_modules/%s/package.json\").version'"):format(ROOT, package))
  end
  local sdk_version, adapter = version("@modelcontextprotocol/server"), version("@modelcontextprotocol/node")
  print(("## HTTP edges (%s)"):format(os.date("!%Y-%m-%d %H:%M UTC")))
  print()
  print(("Machine: %s cores, Linux %s; %s, %s, libuv %s (luv); node %s, @modelcontextprotocol/server %s"
    .. " + @modelcontextprotocol/node %s."):format(cmd_out("nproc"), cmd_out("uname -r"),
      cmd_out("lua5.4 -v"):match("^Lua %S+"), cmd_out("luajit -v"):match("^LuaJIT %S+"), uv.version_string(),
      cmd_out("node --version"), sdk_version, adapter))
  print(("Code: commit %s%s."):format(cmd_out("git -C " .. ROOT .. " rev-parse --short HEAD"),
    cmd_out("git -C " .. ROOT .. " status --porcelain -uno lua src examples") ~= ""
      and " with uncommitted changes in lua/, src/ or examples/" or ""))
  print(("Large request: tools/call test_echo, arguments {message, data: %d one-digit integers}, body %d bytes"
    .. " (%.2f MiB). Small request: tools/call test_echo {message = \"ping\"}."):format(ELEMENTS, #LARGE_BODY,
      #LARGE_BODY / 1048576))
  print()
  print(("### 1. Small requests behind large ones (%d connections x %d large requests; one connection of small"
    .. " requests one after the other)"):format(LARGE_CLIENTS, LARGE_EACH))
  print()
  print("| server | idle p50 ms | idle p99 ms | under load p50 ms | p99 ms | max ms | small answered"
    .. " | p50 load/idle | large ok/sent | burst s | large p50 s | large max s | server CPU s per large"
    .. " | burst s vs SDK | p99 vs SDK |")
  print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
  for _, r in ipairs(results) do
    print(("| %s | %s | %s | %s | %s | %s | %d | %s | %d/%d | %s | %s | %s | %s | %s | %s |"):format(NAMES[r.kind],
      f2(r.idle.p50), f2(r.idle.p99), f1(r.small.p50), f1(r.small.p99), f1(r.small.max), r.small.n,
      ratio(r.small.p50, r.idle.p50), r.large_ok, r.large_sent, f1(r.burst_s), f2(r.large.p50), f2(r.large.max),
      f2(r.large_sent > 0 and r.cpu_large / r.large_sent or nil),
      sdk and ratio(r.burst_s, sdk.burst_s) or "-", sdk and ratio(r.small.p99, sdk.small.p99) or "-"))
  end
  print()
  print(("### 3. RSS around the burst (start: after the idle requests; peak: sampled every 20 ms; after: %g s"
    .. " after the last large answer)"):format(SETTLE))
  print()
  print("| server | start MiB | peak MiB | VmHWM MiB | after MiB | peak/start | after/start | after ≤ 3x start |")
  print("|---|---:|---:|---:|---:|---:|---:|---|")
  for _, r in ipairs(results) do
    local ar = r.rss_after and r.rss_start and r.rss_after / r.rss_start
    print(("| %s | %s | %s | %s | %s | %s | %s | %s |"):format(NAMES[r.kind], mib(r.rss_start), mib(r.rss_peak),
      mib(r.hwm), mib(r.rss_after), ratio(r.rss_peak, r.rss_start), ratio(r.rss_after, r.rss_start),
      ar and (ar <= 3 and "yes" or "no") or "-"))
  end
  print()
  print(("### 2. Non-reading connections (%d connections, requests pipelined in one write, never read; measured"
    .. " %g s later)"):format(HOLD_CONNS, HOLD_WAIT))
  print()
  print(("small: %d tools/call test_echo {message = \"ping\"} a connection; big: %d with a %d-byte message"
    .. " (result about %d KiB) a connection."):format(HOLD_SMALL, HOLD_BIG, HOLD_BIG_BYTES,
      2 * HOLD_BIG_BYTES // 1024))
  print()
  print("| server | shape | RSS before MiB | RSS held MiB | peak MiB | growth per connection KiB"
    .. " | growth per connection / start RSS | requests the client could write per connection"
    .. " | small request while held ms"
    .. " | RSS after close MiB | after close/before | answered after close |")
  print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
  for _, r in ipairs(results) do
    for _, h in ipairs(r.hold) do
      local growth = h.held and h.before and (h.held - h.before) / HOLD_CONNS
      print(("| %s | %s x%d | %s | %s | %s | %s | %s | %.0f | %s | %s | %s | %d/5 |"):format(NAMES[r.kind], h.name,
        h.n, mib(h.before), mib(h.held), mib(h.peak), growth and ("%.0f"):format(growth) or "-",
        ratio(growth, r.rss_start), h.read_per_conn, h.probe_ok == 20 and f2(h.probe_ms) or ("%d/20 answered")
          :format(h.probe_ok), mib(h.after), ratio(h.after, h.before), h.after_ok))
    end
  end
  print()
  if #failures > 0 then
    print("Failures:")
    print()
    for _, f in ipairs(failures) do print("- " .. f) end
  else
    print("Every request answered 200 with its result; no server exited or wrote to stderr.")
  end
  return #failures == 0
end

local ok
go(function() ok = main() end)
uv.run()
os.exit(ok and 0 or 1)
