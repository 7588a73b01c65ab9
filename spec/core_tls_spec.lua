-- core.tls_client (src/tls.c): the sans-I/O TLS client on libssl. Its
-- options and misuse, the ClientHello it writes, failures without a server;
-- then real handshakes over TCP on 127.0.0.1 against `openssl s_server`
-- with a test CA made here: trusted through ca_file (the exact bytes),
-- refused without it, refused for another name or address, and
-- verify = false only when asked.
local core = require "jrpc.core"
local T = dofile("spec/tls_support.lua")

describe("core.tls_client (no network)", function()
  it("raises for bad options", function()
    assert.has_error(function() core.tls_client{} end,
      "tls_client: option 'host' is needed to verify the certificate (or verify = false)")
    assert.has_error(function() core.tls_client{ host = "h", bogus = 1 } end, "unknown tls_client option 'bogus'")
    assert.has_error(function() core.tls_client{ host = "h", verify = "no" } end,
      "tls_client: option 'verify' must be a boolean")
    assert.has_error(function() core.tls_client{ host = 1 } end, "tls_client: option 'host' must be a string")
    assert.has_error(function() core.tls_client{ host = "" } end,
      "tls_client: option 'host' must be a non-empty string without NUL")
    assert.has_error(function() core.tls_client() end)
  end)

  it("answers nil, msg for a ca_file it cannot load", function()
    assert.are.same({ nil, "tls_client: cannot load ca_file '/nonexistent/ca.pem': No such file or directory" },
      { core.tls_client{ host = "h", ca_file = "/nonexistent/ca.pem" } })
    local f = os.tmpname()
    assert.are.same({ nil, ("tls_client: cannot load ca_file '%s': no certificate or crl found"):format(f) },
      { core.tls_client{ host = "h", ca_file = f } })
    os.remove(f)
  end)

  it("writes a ClientHello with SNI for a name, none for an IP address", function()
    local t = core.tls_client{ host = "example.org" }
    assert.are.equal("jrpc.Tls (handshaking)", tostring(t))
    assert.is_false(t:handshake())
    local hello = t:outgoing()
    assert.are.same({ 22, 3 }, { hello:byte(1, 2) })          -- a handshake record
    assert.is_truthy(hello:find("example.org", 1, true))
    assert.are.equal("", t:outgoing())                          -- drained
    local t2 = core.tls_client{ host = "127.0.0.1" }
    assert.is_false(t2:handshake())
    assert.is_nil(t2:outgoing():find("127.0.0.1", 1, true))
  end)

  it("fails the handshake on bytes that are not TLS, and keeps failing", function()
    local t = core.tls_client{ host = "example.org" }
    t:handshake()
    t:outgoing()
    t:feed("HTTP/1.1 400 Bad Request\r\n\r\n")
    assert.are.same({ nil, "TLS handshake failed: wrong version number" }, { t:handshake() })
    assert.are.same({ nil, "TLS handshake failed: wrong version number" }, { t:handshake() })
    assert.are.same({ nil, "TLS handshake failed: wrong version number" }, { t:write("x") })
    assert.are.same({ nil, "TLS handshake failed: wrong version number" }, { t:read() })
    assert.are.equal("jrpc.Tls (failed)", tostring(t))
  end)

  it("raises for reading or writing before the handshake, and once closed", function()
    local t = core.tls_client{ host = "h" }
    assert.has_error(function() t:read() end, "jrpc.Tls: the handshake is not done")
    assert.has_error(function() t:write("x") end, "jrpc.Tls: the handshake is not done")
    assert.has_error(function() t:info() end, "jrpc.Tls: the handshake is not done")
    t:close()
    t:close()                                                   -- idempotent
    assert.are.equal("jrpc.Tls (closed)", tostring(t))
    for _, m in ipairs({ "handshake", "outgoing", "shutdown" }) do
      assert.has_error(function() t[m](t) end, "jrpc.Tls is closed")
    end
    assert.has_error(function() t:feed("x") end, "jrpc.Tls is closed")
  end)
end)

describe("core.tls_client while finalizers use it", function()
  -- A child interpreter (the ASan one under make test-asan): finalizers run
  -- at every allocation step and drain, feed and close the very objects
  -- whose bytes are being pushed; every ClientHello byte comes out exactly
  -- once, and nothing crashes or leaks.
  it("a reentrant outgoing() takes the bytes that follow; closing meanwhile is safe", function()
    local files = dofile("spec/files.lua")
    local script, out = os.tmpname(), os.tmpname()
    files.write(script, ("package.path = %q\npackage.cpath = %q\n"):format(package.path, package.cpath) .. [[
local core = require "jrpc.core"
local current, inner_bytes, closes = nil, 0, 0  -- luacheck: ignore
local mt = {}
local function spawn()
  if rawget(_G, "newproxy") then local u = newproxy(true); getmetatable(u).__gc = mt.__gc
  else setmetatable({}, mt) end
end
local active, reentries = false, 0
mt.__gc = function()
  if not active or current == nil then return end
  spawn()
  reentries = reentries + 1
  local ok, s = pcall(current.outgoing, current)
  if ok then inner_bytes = inner_bytes + #s end
  -- every 20th reentry closes, the first included: LuaJIT's collector may
  -- reenter only a few times in the whole run (4 seen), so a random pick
  -- could miss them all
  if reentries % 20 == 1 then current:close(); closes = closes + 1 end
end
if rawget(_G, "jit") then collectgarbage("setpause", 1); collectgarbage("setstepmul", 1000)
else collectgarbage("incremental", 1, 1000, 0) end
local exact, cut, reentered = 0, 0, 0
for round = 1, 300 do
  local host = "h" .. round .. ".example"
  local ref = core.tls_client{ host = host, verify = false }   -- the length to expect
  ref:handshake()
  local want = #ref:outgoing()
  ref:close()
  local t = core.tls_client{ host = host, verify = false }
  t:handshake()
  current, inner_bytes = t, 0
  local closed_before = closes
  for _ = 1, 10 do spawn() end
  active = true
  local ok, got = pcall(t.outgoing, t)
  active = false
  current = nil
  local n = (ok and #got or 0) + inner_bytes
  if inner_bytes > 0 then reentered = reentered + 1 end
  if closes > closed_before then cut = cut + 1             -- closed in the middle: fewer bytes, no crash
  elseif ok and n == want then exact = exact + 1 end
  t:close()
end
collectgarbage("collect")
print("exact or closed", exact + cut, "reentered", reentered > 0, "closed meanwhile", cut > 0)
]])
    local p = assert(io.popen(("timeout -s KILL 120 %s %s > %s 2>&1; echo $?"):format(
      rawget(_G, "jit") and "luajit" or "lua5.4", script, out)))
    local status = tonumber(p:read("*a"))
    p:close()
    os.remove(script)
    assert.are.equal("exact or closed\t300\treentered\ttrue\tclosed meanwhile\ttrue\n", files.take(out))
    assert.are.equal(0, status)
  end)
end)

describe("core.tls_client against openssl s_server on 127.0.0.1", function()
  local S = dofile("spec/uv_support.lua")
  local uv = S.uv
  local port, wrong_port, pids

  setup(function()
    local pid1, pid2
    port, pid1 = T.s_server("srv")
    wrong_port, pid2 = T.s_server("wrong")
    pids = { pid1, pid2 }
  end)

  teardown(function()
    for _, pid in ipairs(pids or {}) do T.kill(pid) end
    T.cleanup()
  end)

  -- Connect, handshake with `opts`, send `request` (when the handshake
  -- succeeds), read until the peer closes. Returns
  -- { err?, plain, closed, info } (err: the first failure).
  local function exchange(p, opts, request)
    return S.run(function()
      local tls = assert(core.tls_client(opts))
      local tcp = uv.new_tcp()
      local r = { plain = {} }
      local over = false
      local function flush() local o = tls:outgoing(); if o ~= "" then tcp:write(o) end end
      local function finish(err) if not over then r.err = r.err or err; over = true end end
      tcp:connect("127.0.0.1", p, function(cerr)
        if cerr then return finish(cerr) end
        tls:handshake()
        flush()
        tcp:read_start(function(rerr, data)
          if over then return end
          if rerr or not data then return finish(rerr) end
          tls:feed(data)
          if not r.info then
            local done, herr = tls:handshake()
            flush()
            if done == nil then return finish(herr) end
            if not done then return end
            r.info = tls:info()
            assert(tls:write(request))
            flush()
          end
          local s, closed = tls:read()
          flush()
          if s == nil then return finish(closed) end
          r.plain[#r.plain + 1] = s
          if closed then r.closed = true; finish() end
        end)
      end)
      S.wait_until(function() return over end, 5)
      require("jrpc.uv.handles").close(uv, tcp)
      tls:close()
      r.plain = table.concat(r.plain)
      return r
    end)
  end

  local GET = "GET /hello.txt HTTP/1.0\r\n\r\n"

  it("trusts the server through ca_file: the exact bytes, TLS 1.3, verified", function()
    local r = exchange(port, { host = "localhost", ca_file = T.pki().ca }, GET)
    assert.is_nil(r.err)
    assert.are.equal("HTTP/1.0 200 ok\r\nContent-type: text/plain\r\n\r\nhello over TLS\n", r.plain)
    assert.is_true(r.closed)                                    -- s_server sent close_notify
    assert.are.equal("TLSv1.3", r.info.version)
    assert.is_true(r.info.verified)
    local r2 = exchange(port, { host = "127.0.0.1", ca_file = T.pki().ca }, GET)  -- the IP SAN
    assert.is_nil(r2.err)
    assert.are.equal("HTTP/1.0 200 ok\r\nContent-type: text/plain\r\n\r\nhello over TLS\n", r2.plain)
  end)

  it("refuses it against the system store (the test CA is not in it)", function()
    local r = exchange(port, { host = "localhost" }, GET)
    assert.are.equal("certificate verify failed: unable to get local issuer certificate", r.err)
    assert.is_nil(r.info)
  end)

  it("refuses a certificate for another name, or for another address", function()
    assert.are.equal("certificate verify failed: hostname mismatch",
      exchange(wrong_port, { host = "localhost", ca_file = T.pki().ca }, GET).err)
    assert.are.equal("certificate verify failed: hostname mismatch",
      exchange(port, { host = "other.localhost", ca_file = T.pki().ca }, GET).err)
    assert.are.equal("certificate verify failed: IP address mismatch",
      exchange(port, { host = "127.0.0.2", ca_file = T.pki().ca }, GET).err)
  end)

  it("skips every check only with verify = false", function()
    local r = exchange(wrong_port, { host = "localhost", verify = false }, GET)
    assert.is_nil(r.err)
    assert.are.equal("HTTP/1.0 200 ok\r\nContent-type: text/plain\r\n\r\nhello over TLS\n", r.plain)
    assert.is_false(r.info.verified)
  end)
end)
