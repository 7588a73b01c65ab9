-- jrpc.mcp's legacy (2025-11-25) Streamable HTTP sessions: the
-- MCP-Protocol-Version header of a session's POSTs (absent is fine, a
-- legacy version we serve is fine, anything else is 400 with -32600), and
-- idle sessions ending after session_idle_timeout (their id then gets 404,
-- so the client re-initializes). Driven by curl on 127.0.0.1.
if dofile("spec/once.lua")(pending, "session timers and routing in Lua, mostly waiting; the HTTP codec's C paths are the other specs'", { "asan" }) then return end
local S = dofile("spec/uv_support.lua")
local H = dofile("spec/mcp_http_support.lua")(S)
local jrpc = require "jrpc"
local mcp = require "jrpc.mcp"
local sessions_mod = require "jrpc.mcp.http_session"

local loop = S.loop

local function new_server(opts)
  local srv = mcp.server{ name = "session-spec", version = "1.0.0" }
  srv:tool{ name = "echo", description = "echo", handler = function(args) return args.text end }
  local o = { port = 0, peer = { on_error = function() end } }
  for k, v in pairs(opts or {}) do o[k] = v end
  return assert(srv:serve_http(loop, o))
end

local BASE = { "Content-Type: application/json", "Accept: application/json, text/event-stream" }

local function with(list, more)
  local out = {}
  for _, h in ipairs(list) do out[#out + 1] = h end
  for _, h in ipairs(more or {}) do out[#out + 1] = h end
  return out
end

-- initialize; returns the session id
local function initialize(port)
  local status, head = H.post(port, BASE, jrpc.encode{ jsonrpc = "2.0", id = 0, method = "initialize",
    params = { protocolVersion = "2025-11-25", capabilities = {}, clientInfo = { name = "spec", version = "1" } } })
  assert.are.equal(200, status)
  return head["mcp-session-id"]
end

-- ping in session `sid`, with `version` as MCP-Protocol-Version (nil: none);
-- the status, the content type, and the body (decoded when JSON)
local function ping(port, sid, id, version)
  local h = with(BASE, { "MCP-Session-Id: " .. sid })
  if version then h[#h + 1] = "MCP-Protocol-Version: " .. version end
  local status, head, body = H.post(port, h, jrpc.encode{ jsonrpc = "2.0", id = id, method = "ping" })
  local ctype = head["content-type"]
  return status, ctype, ctype == "application/json" and jrpc.decode(body) or body
end

local function PONG(id) return { jsonrpc = "2.0", id = id, result = {} } end
local UNKNOWN = "unknown session\n"

local function unsupported(id, requested)
  return { jsonrpc = "2.0", id = id, error = { code = -32600,
    message = ('Invalid Request: unsupported MCP-Protocol-Version "%s" in a session '
      .. "(supported: 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05)"):format(requested),
    data = { supported = { "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05" }, requested = requested } } }
end

describe("jrpc.mcp legacy session MCP-Protocol-Version", function()
  after_each(S.cleanup)

  it("takes the negotiated version, another legacy one, or none", function()
    S.run(function()
      local http = new_server()
      local sid = initialize(http.port)
      assert.are.same({ 200, "application/json", PONG(1) }, { ping(http.port, sid, 1, "2025-11-25") })
      -- absent: the negotiated version (else 2025-03-26) is assumed
      assert.are.same({ 200, "application/json", PONG(2) }, { ping(http.port, sid, 2) })
      -- another version we serve: the spec asks for the negotiated one only as a SHOULD
      assert.are.same({ 200, "application/json", PONG(3) }, { ping(http.port, sid, 3, "2025-03-26") })
      http:close()
    end)
  end)

  it("is 400 with -32600 naming the legacy versions for any other, notifications too", function()
    S.run(function()
      local http = new_server()
      local sid = initialize(http.port)
      for i, v in ipairs{ "2099-01-01", "2026-07-28", "2025-11-25x", "2025" } do
        local status, ctype, body = ping(http.port, sid, 10 + i, v)
        assert.are.same({ 400, "application/json", unsupported(10 + i, v) }, { status, ctype, body })
      end
      -- whitespace around a value is not part of it (RFC 9110)
      assert.are.same({ 200, "application/json", PONG(15) }, { ping(http.port, sid, 15, "2025-11-25 ") })
      local status, head, body = H.post(http.port, with(BASE, { "MCP-Session-Id: " .. sid,
        "MCP-Protocol-Version: 1.0" }), '{"jsonrpc":"2.0","method":"notifications/initialized"}')
      local want = unsupported(nil, "1.0")
      want.id = jrpc.null
      assert.are.same({ 400, sid, want }, { status, head["mcp-session-id"], jrpc.decode(body, nil, jrpc.null) })
      -- the session itself lives on
      assert.are.same({ 200, "application/json", PONG(20) }, { ping(http.port, sid, 20, "2025-11-25") })
      http:close()
    end)
  end)
end)

describe("jrpc.mcp legacy session idle timeout", function()
  after_each(S.cleanup)

  it("defaults to half an hour and refuses a bad value", function()
    assert.are.equal(1800, sessions_mod.DEFAULT_IDLE_TIMEOUT)
    for _, bad in ipairs{ 0, -1, "60", 0 / 0, math.huge, true } do
      local ok, err = pcall(new_server, { session_idle_timeout = bad })
      assert.is_false(ok)
      assert.matches("serve_http: session_idle_timeout must be a positive number of seconds, or false$", err)
    end
    S.run(function()
      new_server{ session_idle_timeout = false }:close()  -- sessions that never expire
    end)
  end)

  it("ends a session idle that long (404 after), while use keeps it alive", function()
    S.run(function()
      local http = new_server{ session_idle_timeout = 2 }
      local busy, idle = initialize(http.port), initialize(http.port)
      -- busy is used every 0.3 s, then once more after 0.9 s: never idle
      -- 2 s (a ping, curl included, may take a second on a loaded
      -- machine), while idle is past it by 0.4 s at least
      for i = 1, 5 do
        loop:sleep(0.3)
        assert.are.same({ 200, "application/json", PONG(i) }, { ping(http.port, busy, i, "2025-11-25") })
      end
      loop:sleep(0.9)
      assert.are.same({ 404, "text/plain", UNKNOWN }, { ping(http.port, idle, 9, "2025-11-25") })
      loop:sleep(2.5)
      assert.are.same({ 404, "text/plain", UNKNOWN }, { ping(http.port, busy, 6, "2025-11-25") })
      -- a new initialize is a new session
      local again = initialize(http.port)
      assert.are.same({ 200, "application/json", PONG(7) }, { ping(http.port, again, 7, "2025-11-25") })
      http:close()
    end)
  end)

  it("is not idle while its GET stream is open; the clock starts when it closes", function()
    -- seconds chosen so that curl may start up to about two seconds late
    -- on a loaded machine and every step still means what it says
    S.run(function()
      local http = new_server{ session_idle_timeout = 2.0 }
      local sid = initialize(http.port)
      -- a standalone stream for 6 s (curl gives up then), in the background
      S.shell_wait(("curl -s -m 6 -o /dev/null -H 'Accept: text/event-stream' -H 'MCP-Session-Id: %s' "
        .. "http://127.0.0.1:%d/mcp > /dev/null 2>&1 &"):format(sid, http.port))
      -- POSTs that end while the stream is open start no clock either
      loop:sleep(1.2)
      assert.are.same({ 200, "application/json", PONG(1) }, { ping(http.port, sid, 1) })
      loop:sleep(3.2)  -- past the idle timeout since that POST: the stream keeps it
      assert.are.same({ 200, "application/json", PONG(2) }, { ping(http.port, sid, 2) })
      loop:sleep(2.8)  -- the stream closed at about 6 s; idle less than 2 s
      assert.are.same({ 200, "application/json", PONG(3) }, { ping(http.port, sid, 3) })
      loop:sleep(4.0)
      assert.are.same({ 404, "text/plain", UNKNOWN }, { ping(http.port, sid, 4) })
      http:close()
    end, 30)
  end)
end)
