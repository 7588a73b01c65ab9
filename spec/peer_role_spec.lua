-- Who answers garbage (issue 27, point 9). The side that started a
-- connection (spawn, connect) is role "client": it never answers input it
-- cannot decode (log lines, broken JSON, a message over max_message_bytes),
-- even when it has handlers (an LSP client serves workspace/configuration),
-- and only reports it through on_debug. The side that accepted a connection
-- (listen, stdio) is role "server" and answers it. Option `role` wins.
--
-- The misbehaving side is a real child process (spec/fault/actor.lua): it
-- writes exactly the bytes it is told to and copies what it reads to its
-- stderr, so we see every byte our peer wrote to it.
local F = dofile("spec/fault/support.lua")
local S = F.S
local jrpc = require "jrpc"

local LIMIT = 64 * 1024
local BIG = 100 * 1024

local function frame_as(json, framing)
  return framing == "lsp" and F.frame(json) or json .. "\n"
end

-- the garbage of each framing, then a request our handler answers
local function garbage(framing)
  local head, tail = '{"jsonrpc":"2.0","id":5,"method":"workspace/symbol","params":{"query":"', '"}}'
  local list = {}
  if framing == "lsp" then
    list[#list + 1] = { "write", "server starting...\n" }          -- skipped, answered by nobody
    list[#list + 1] = { "write", F.frame("{not json") }             -- -32700
    list[#list + 1] = { "write", "Content-Length: " .. (#head + BIG + #tail) .. "\r\n\r\n" .. head }
  else
    list[#list + 1] = { "write", "server starting...\n" }           -- -32700
    list[#list + 1] = { "write", "{not json\n" }                    -- -32700
    list[#list + 1] = { "write", head }
  end
  list[#list + 1] = { "rep", "x", BIG }                             -- -32600 with id 5
  list[#list + 1] = { "write", framing == "lsp" and tail or tail .. "\n" }
  list[#list + 1] = { "write", frame_as('{"jsonrpc":"2.0","id":6,"method":"workspace/configuration","params":{}}', framing) }
  list[#list + 1] = { framing == "lsp" and "readframe" or "readline" }
  list[#list + 1] = { "drain" }
  return list
end

local function handlers()
  return { ["workspace/configuration"] = function() return { { tabSize = 2 } } end }
end

-- Spawn the actor writing garbage to a peer that has handlers; once the
-- request is answered, end it; returns what it read (decoded), our
-- on_debug reports and our on_error reports.
local function run_actor(framing, role)
  local opts = { framing = framing, max_message_bytes = LIMIT, methods = handlers(), role = role }
  local child, _, log, debug = assert(F.actor(garbage(framing), opts))
  assert.is_true(S.wait_until(function() return child.peer:stats().handled >= 1 end, 5))
  assert.are.same({ 0, 0 }, { child:shutdown() })
  return F.decode_all({ child:stderr_text() }, framing), debug, log
end

local function error_reply(code, message, id)
  return { jsonrpc = "2.0", error = { code = code, message = message }, id = id }
end

local CONFIG = { jsonrpc = "2.0", result = { { tabSize = 2 } }, id = 6 }

describe("role: a spawned child's peer (loop:spawn) is a client", function()
  after_each(S.cleanup)

  for _, framing in ipairs{ "ndjson", "lsp" } do
    it(framing .. ": with handlers and no role given, garbage and an over-limit request get no answer", function()
      S.run(function()
        local got, debug, log = run_actor(framing)
        assert.are.same({ CONFIG }, got)
        assert.are.same({}, log)
        -- reported as routine: on_debug, never on_error
        local dropped = 0
        for _, line in ipairs(debug) do
          if line:find("^dropped input that is not a valid message: ") then dropped = dropped + 1 end
        end
        assert.are.equal(framing == "lsp" and 2 or 3, dropped, table.concat(debug, "\n"))
      end)
    end)

    it(framing .. ": role = \"server\" given explicitly answers them", function()
      S.run(function()
        local got = run_actor(framing, "server")
        local parse = error_reply(-32700, "Parse error", jrpc.null)
        local large = error_reply(-32600, "Message too large", 5)
        if framing == "lsp" then
          assert.are.same({ parse, large, CONFIG }, got)  -- the stray line is skipped by every role
        else
          assert.are.same({ parse, parse, large, CONFIG }, got)
        end
      end)
    end)
  end
end)

-- A raw luv TCP listener (not jrpc): writes `bytes` to the one connection
-- it accepts and keeps what it reads in `state.read`.
local function raw_tcp_server(bytes)
  local uv = S.uv
  local state = { read = {} }
  local server = uv.new_tcp()
  assert(server:bind("127.0.0.1", 0))
  state.port = server:getsockname().port
  server:listen(8, function()
    local client = uv.new_tcp()
    server:accept(client)
    state.client = client
    client:read_start(function(_, data)
      if data then state.read[#state.read + 1] = data else client:close() end
    end)
    client:write(bytes)
  end)
  state.server = server
  return state
end

local function close_raw(state)
  if state.client and not state.client:is_closing() then state.client:close() end
  state.server:close()
end

describe("role: loop:connect and loop:listen (jrpc.uv, TCP)", function()
  it("a connecting peer with handlers is a client: it answers a request, not garbage", function()
    S.run(function()
      local raw = raw_tcp_server("log line\n{not json\n"
        .. '{"jsonrpc":"2.0","id":6,"method":"workspace/configuration","params":{}}\n')
      local debug = {}
      local conn = assert(S.loop:connect{ port = raw.port, methods = handlers(),
        on_debug = function(msg) debug[#debug + 1] = msg end })
      assert.is_true(S.wait_until(function() return conn.peer:stats().handled >= 1 end, 5))
      assert.is_true(S.wait_until(function() return #table.concat(raw.read) > 0 end, 5))
      S.loop:sleep(0.05)  -- anything written after the reply would be here by now
      assert.are.same({ CONFIG }, F.decode_all(raw.read, "ndjson"))
      assert.are.equal(2, #debug)
      conn:close()
      close_raw(raw)
    end)
  end)

  it("the same with role = \"server\" answers the garbage too", function()
    S.run(function()
      local raw = raw_tcp_server("log line\n"
        .. '{"jsonrpc":"2.0","id":6,"method":"workspace/configuration","params":{}}\n')
      local conn = assert(S.loop:connect{ port = raw.port, methods = handlers(), role = "server",
        on_error = function() end })
      assert.is_true(S.wait_until(function() return #F.decode_all(raw.read, "ndjson") >= 2 end, 5))
      assert.are.same({ error_reply(-32700, "Parse error", jrpc.null), CONFIG }, F.decode_all(raw.read, "ndjson"))
      conn:close()
      close_raw(raw)
    end)
  end)

  it("an accepted connection is a server, even without handlers", function()
    S.run(function()
      local server = assert(S.loop:listen{ port = 0, on_error = function() end })
      local uv = S.uv
      local sock, read, connected = uv.new_tcp(), {}, false
      sock:connect("127.0.0.1", server.port, function(err)
        assert(not err, err)
        connected = true
        sock:read_start(function(_, data) if data then read[#read + 1] = data end end)
        sock:write("log line\n")
      end)
      assert.is_true(S.wait_until(function() return #table.concat(read) > 0 end, 5))
      assert.is_true(connected)
      assert.are.same({ error_reply(-32700, "Parse error", jrpc.null) }, F.decode_all(read, "ndjson"))
      sock:close()
      server:close()
    end)
  end)
end)

describe("role: this process's stdio (loop:stdio) is a server", function()
  it("answers garbage even without handlers", function()
    local code = 'package.path = "lua/?.lua;lua/?/init.lua;" .. package.path; '
      .. 'package.cpath = "build/' .. (rawget(_G, "jit") and "jit" or "5.4") .. '/?.so;" .. package.cpath; '
      .. 'local jrpc = require "jrpc"; '
      .. 'local loop = jrpc.uv.new(require "luv"); '
      .. 'assert(loop:stdio{ on_error = function() end }); loop:serve_forever()'
    local status, out, err = S.shell(("printf 'log line\\n' | %s -e %s"):format(S.INTERP, F.shell_quote(code)))
    assert.are.equal(0, status, err)
    assert.are.equal('{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"},"id":null}\n', out)
  end)
end)

local has_socket, socket = pcall(require, "socket")

describe("role: jrpc.socket (LuaSocket) connect and listen", function()
  if not has_socket then
    pending("LuaSocket is not installed")
    return
  end
  local jsock = require "jrpc.socket"
  local now = jrpc.core.now
  local loop = jsock.new(socket)

  local function pump_until(cond, limit)
    local deadline = now() + (limit or 5)
    while not cond() do
      if now() > deadline then return false end
      loop:pump(0.002)
      socket.sleep(0.001)
    end
    return true
  end

  it("a connecting peer with handlers is a client; role = \"server\" answers", function()
    for _, role in ipairs{ "default", "server" } do
      local srv = assert(socket.bind("127.0.0.1", 0))
      srv:settimeout(0)
      local _, port = srv:getsockname()
      local conn = assert(loop:connect{ port = tonumber(port), methods = handlers(), on_debug = function() end,
        on_error = function() end, role = role ~= "default" and role or nil })
      local client
      assert(pump_until(function() client = srv:accept(); return client ~= nil end), "no connection")
      client:settimeout(0)
      client:send("log line\n" .. '{"jsonrpc":"2.0","id":6,"method":"workspace/configuration","params":{}}\n')
      local got = {}
      local want = role == "server" and 2 or 1
      assert(pump_until(function()
        local data, _, partial = client:receive("*a")
        data = data or partial
        if data and #data > 0 then got[#got + 1] = data end
        return #F.decode_all(got, "ndjson") >= want
      end), "no reply")
      pump_until(function() return false end, 0.05)  -- nothing more comes
      local data, _, partial = client:receive("*a")
      got[#got + 1] = data or partial
      local expected = role == "server" and { error_reply(-32700, "Parse error", jrpc.null), CONFIG } or { CONFIG }
      assert.are.same(expected, F.decode_all(got, "ndjson"))
      conn:close()
      client:close()
      srv:close()
    end
  end)

  it("an accepted connection is a server, even without handlers", function()
    local server = assert(loop:listen{ port = 0, on_error = function() end })
    local client = assert(socket.connect("127.0.0.1", server.port))
    client:settimeout(0)
    client:send("log line\n")
    local got = {}
    assert(pump_until(function()
      local data, _, partial = client:receive("*a")
      data = data or partial
      if data and #data > 0 then got[#got + 1] = data end
      return #F.decode_all(got, "ndjson") >= 1
    end), "no reply")
    assert.are.same({ error_reply(-32700, "Parse error", jrpc.null) }, F.decode_all(got, "ndjson"))
    client:close()
    server:close()
  end)
end)
