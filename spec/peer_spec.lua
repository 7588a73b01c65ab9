-- jrpc.peer: handlers, contexts, awaits, timeouts, cancel, close, ids, profiles.
local jrpc = require "jrpc"

local null = jrpc.null

local support = dofile("spec/peer_support.lua")
local capture, line = support.capture, support.line

-- Two peers wired to each other through a queue (a direct wiring would
-- recurse without bound). `pump()` delivers until both are quiet.
local function link(a_opts, b_opts)
  local queue, a, b = {}, nil, nil
  local logs = {}
  a_opts, b_opts = a_opts or {}, b_opts or {}
  a_opts.send = function(bytes) queue[#queue + 1] = { b, bytes } end
  b_opts.send = function(bytes) queue[#queue + 1] = { a, bytes } end
  a_opts.on_error = function(msg) logs[#logs + 1] = "a: " .. msg end
  b_opts.on_error = function(msg) logs[#logs + 1] = "b: " .. msg end
  a, b = jrpc.peer(a_opts), jrpc.peer(b_opts)
  local function pump()
    while #queue > 0 do
      local item = table.remove(queue, 1)
      item[1]:receive(item[2])
    end
  end
  return a, b, pump, logs
end


-- Run fn in a coroutine; returns a function that gives what fn returned.
local function spawn(fn)
  local results
  local co = coroutine.create(function() results = table.pack and table.pack(fn()) or { fn() } end)
  local ok, err = coroutine.resume(co)
  assert(ok, err)
  return function() return results end
end

describe("peer handlers and contexts", function()
  it("answers with the first returned value, echoing the id", function()
    local peer, out = capture()
    peer:method("add", function(p) return p[1] + p[2], "ignored" end)
    peer:receive(line '{"jsonrpc":"2.0","method":"add","params":[2,3],"id":1}')
    assert.same({ '{"jsonrpc":"2.0","result":5,"id":1}\n' }, out)
  end)

  it("answers null when the handler returns nothing", function()
    local peer, out = capture()
    peer:method("nothing", function() end)
    peer:receive(line '{"jsonrpc":"2.0","method":"nothing","id":"x"}')
    assert.same({ '{"jsonrpc":"2.0","result":null,"id":"x"}\n' }, out)
  end)

  it("gives handlers a context with id, method, peer and cancelled()", function()
    local peer, out = capture()
    local seen
    peer:method("who", function(params, ctx)
      seen = { params = params, id = ctx.id, method = ctx.method, peer = ctx.peer,
        cancelled = ctx:cancelled(), meta = ctx.meta }
      return true
    end)
    peer:receive(line '{"jsonrpc":"2.0","method":"who","params":{"_meta":1},"id":7}')
    assert.equal(7, seen.id)
    assert.equal("who", seen.method)
    assert.equal(peer, seen.peer)
    assert.is_false(seen.cancelled)
    assert.is_nil(seen.meta)  -- _meta is moved only in profile mcp
    assert.equal(1, seen.params._meta)
    assert.same({ '{"jsonrpc":"2.0","result":true,"id":7}\n' }, out)
  end)

  it("registers methods one by one and validates declared params", function()
    local peer, out = capture()
    for name, fn in pairs{ one = function() return 1 end, two = function() return 2 end } do peer:method(name, fn) end
    peer:method("sub", function(p) return p.a - p.b end, { "a:integer", "b:integer" })
    peer:receive(line '{"jsonrpc":"2.0","method":"two","id":1}'
      .. line '{"jsonrpc":"2.0","method":"sub","params":{"b":1,"a":10},"id":2}'
      .. line '{"jsonrpc":"2.0","method":"sub","params":[1.5,1],"id":3}')
    assert.equal('{"jsonrpc":"2.0","result":2,"id":1}\n'
      .. '{"jsonrpc":"2.0","result":9,"id":2}\n'
      .. '{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params: \\"a\\" must be an integer"},"id":3}\n',
      table.concat(out))
  end)

  it("coalesces the replies to one receive into one send", function()
    local peer, out = capture()
    peer:method("echo", function(p) return p[1] end)
    peer:receive(line '{"jsonrpc":"2.0","method":"echo","params":[1],"id":1}'
      .. line '{"jsonrpc":"2.0","method":"echo","params":[2],"id":2}')
    assert.equal(1, #out)
    assert.equal('{"jsonrpc":"2.0","result":1,"id":1}\n{"jsonrpc":"2.0","result":2,"id":2}\n', out[1])
  end)

  it("handles a message split across receives", function()
    local peer, out = capture()
    peer:method("echo", function(p) return p[1] end)
    local msg = line '{"jsonrpc":"2.0","method":"echo","params":["é"],"id":1}'
    for i = 1, #msg do peer:receive(msg:sub(i, i)) end
    assert.same({ '{"jsonrpc":"2.0","result":"é","id":1}\n' }, out)
  end)

  it("answers a raised jrpc error with its code, message and data", function()
    local peer, out, logs = capture()
    peer:method("deny", function() jrpc.error(-32001, "Denied", { why = "no" }) end)
    peer:method("raw", function() error({ code = 42, message = "plain table" }) end)
    peer:receive(line '{"jsonrpc":"2.0","method":"deny","id":1}'
      .. line '{"jsonrpc":"2.0","method":"raw","id":2}')
    assert.equal('{"jsonrpc":"2.0","error":{"code":-32001,"message":"Denied","data":{"why":"no"}},"id":1}\n'
      .. '{"jsonrpc":"2.0","error":{"code":42,"message":"plain table"},"id":2}\n', out[1])
    assert.same({}, logs)  -- expected errors are not logged
  end)

  it("answers -32601 for an unknown method", function()
    local peer, out = capture()
    peer:receive(line '{"jsonrpc":"2.0","method":"nope","id":1}')
    assert.same({ '{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found"},"id":1}\n' }, out)
  end)

  it("answers -32603 and logs when the result cannot be encoded", function()
    local peer, out, logs = capture()
    peer:method("bad", function() return { f = print } end)
    peer:receive(line '{"jsonrpc":"2.0","method":"bad","id":1}')
    assert.same({ '{"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error"},"id":1}\n' }, out)
    assert.equal(1, #logs)
    assert.truthy(logs[1]:find('result of "bad" could not be encoded', 1, true))
  end)

  it("reuses one worker coroutine for handlers that do not wait", function()
    local peer = capture()
    local threads = {}
    peer:method("t", function() threads[#threads + 1] = coroutine.running() end)
    for i = 1, 3 do peer:receive(line('{"jsonrpc":"2.0","method":"t","id":' .. i .. '}')) end
    assert.equal(threads[1], threads[2])
    assert.equal(threads[1], threads[3])
    assert.equal(1, peer:stats().idle_workers)
    assert.equal(3, peer:stats().handled)
  end)
end)

describe("internal errors", function()
  local request = line '{"jsonrpc":"2.0","method":"boom","id":1}'
  local function boom() error("secret /path/to/file.lua detail") end

  it("hide the Lua error text unless debug", function()
    local peer, out, logs = capture()
    peer:method("boom", boom)
    peer:receive(request)
    assert.same({ '{"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error"},"id":1}\n' }, out)
    assert.equal(1, #logs)
    assert.truthy(logs[1]:find("secret /path/to/file.lua detail", 1, true))
    assert.equal(1, peer:stats().failed)
  end)

  it("carry the error text and a traceback in data when debug", function()
    local peer, out = capture{ debug = true }
    peer:method("boom", boom)
    peer:receive(request)
    local reply = jrpc.decode(out[1])
    assert.equal(-32603, reply.error.code)
    assert.equal("Internal error", reply.error.message)
    assert.truthy(reply.error.data:find("secret /path/to/file.lua detail", 1, true))
    assert.truthy(reply.error.data:find("stack traceback", 1, true))
  end)
end)

describe("notifications", function()
  it("are never answered, whatever happens", function()
    local peer, out, logs = capture()
    local got = {}
    peer:method("ok", function(p) got[#got + 1] = p[1]; return "ignored" end)
    peer:method("fails", function() error("oops") end)
    peer:method("denies", function() jrpc.error(-1, "no") end)
    peer:receive(line '{"jsonrpc":"2.0","method":"ok","params":[1]}'
      .. line '{"jsonrpc":"2.0","method":"fails"}'
      .. line '{"jsonrpc":"2.0","method":"denies"}'
      .. line '{"jsonrpc":"2.0","method":"unknown"}')
    assert.same({}, out)
    assert.same({ 1 }, got)
    -- a failing handler is a fault (on_error); no handler is routine (counted)
    assert.equal(2, #logs)
    assert.truthy(logs[1]:find('notification "fails" failed', 1, true))
    assert.truthy(logs[2]:find('notification "denies" failed', 1, true))
    assert.equal(1, peer:stats().dropped_notifications)
  end)

  it("without a handler are routine: silent by default, counted, shown to on_debug", function()
    local debug, errs, out = {}, {}, {}
    local peer = jrpc.peer{ send = function(b) out[#out + 1] = b end,
      on_error = function(m) errs[#errs + 1] = m end,
      on_debug = function(m) debug[#debug + 1] = m end }
    peer:receive(line '{"jsonrpc":"2.0","method":"textDocument/publishDiagnostics","params":{}}'
      .. line '{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":5}}')
    assert.same({}, out)
    assert.same({}, errs)
    assert.same({ 'notification "textDocument/publishDiagnostics" has no handler; dropped',
      "cancel for unknown or finished request 5" }, debug)
    assert.equal(1, peer:stats().dropped_notifications)
    assert.equal(1, peer:stats().unknown_cancels)
  end)
end)

describe("awaiting handlers", function()
  it("serve other requests while one waits for the other side", function()
    local peer, out = capture()
    peer:method("ask", function(_, ctx)
      local name, err = ctx.peer:request("name", jrpc.array{})
      assert(name, err)
      return "hello " .. name
    end)
    peer:method("ping", function() return "pong" end)
    peer:receive(line '{"jsonrpc":"2.0","method":"ask","id":"a"}')
    assert.same({ '{"jsonrpc":"2.0","method":"name","params":[],"id":1}\n' }, out)
    assert.equal(1, peer:stats().in_flight)
    peer:receive(line '{"jsonrpc":"2.0","method":"ping","id":"b"}')
    assert.equal('{"jsonrpc":"2.0","result":"pong","id":"b"}\n', out[2])
    peer:receive(line '{"jsonrpc":"2.0","result":"lua","id":1}')
    assert.equal('{"jsonrpc":"2.0","result":"hello lua","id":"a"}\n', out[3])
    assert.equal(3, #out)
    assert.equal(0, peer:stats().in_flight)
    assert.equal(2, peer:stats().idle_workers)  -- the worker that waited is back too
  end)

  it("work between two linked peers, nested both ways", function()
    local a, b, pump, logs = link()
    b:method("ask", function(_, ctx)
      local name = ctx.peer:request("name", nil)
      local again = ctx.peer:request("name", nil)
      return "hello " .. name .. " and " .. again
    end)
    local calls = 0
    a:method("name", function(_, ctx)
      calls = calls + 1
      -- a waits for b while b waits for a
      return ctx.peer:request("upper", { "lua" .. calls })
    end)
    b:method("upper", function(p) return p[1]:upper() end)
    local got
    a:request("ask", nil, nil, function(err, result) got = { err, result } end)
    pump()
    assert.same({ nil, "hello LUA1 and LUA2" }, got)
    assert.same({}, logs)
    assert.equal(0, a:stats().pending)
    assert.equal(0, b:stats().pending)
  end)

  it("wait in a batch: the batch reply is written when all members finish", function()
    local peer, out = capture()
    peer:method("wait", function(_, ctx) return ctx.peer:request("x", nil) end)
    peer:method("now", function() return "now" end)
    peer:receive(line '[{"jsonrpc":"2.0","method":"wait","id":1},{"jsonrpc":"2.0","method":"now","id":2}]')
    assert.same({ '{"jsonrpc":"2.0","method":"x","id":1}\n' }, out)
    peer:receive(line '{"jsonrpc":"2.0","result":"later","id":1}')
    assert.equal('[{"jsonrpc":"2.0","result":"later","id":1},{"jsonrpc":"2.0","result":"now","id":2}]\n', out[2])
    assert.equal(2, #out)
  end)

  it("settle synchronously over a direct link", function()
    local a, b
    a = jrpc.peer{ send = function(bytes) b:receive(bytes) end }
    b = jrpc.peer{ send = function(bytes) a:receive(bytes) end }
    b:method("double", function(p) return p[1] * 2 end)
    local result = spawn(function() return a:request("double", { 21 }) end)
    assert.equal(42, result()[1])
  end)

  it("report an error raised in a resumed coroutine without breaking receive", function()
    local peer, out, logs = capture()
    spawn(function()
      peer:request("x", nil)
      error("after the reply")
    end)
    peer:method("ping", function() return "pong" end)
    peer:receive(line '{"jsonrpc":"2.0","result":1,"id":1}'
      .. line '{"jsonrpc":"2.0","method":"ping","id":2}')
    assert.equal(1, #logs)
    assert.truthy(logs[1]:find("after the reply", 1, true))
    assert.equal('{"jsonrpc":"2.0","result":"pong","id":2}\n', out[2])
  end)

  it("report an error raised in a callback without breaking receive", function()
    local peer, _, logs = capture()
    peer:request("x", nil, nil, function() error("callback bug") end)
    peer:receive(line '{"jsonrpc":"2.0","result":1,"id":1}')
    assert.same({ "request callback failed: spec/peer_spec.lua:282: callback bug" }, logs)
  end)

  -- a result's callback runs unprotected in the dispatching worker (no
  -- pcall: see jrpc.server's drain); one that raises ends that worker, and
  -- the rest of the read goes on in another, as with a pcall
  it("settle the rest of a read after a callback raises, whatever settles them", function()
    local peer, out, logs = capture()
    peer:method("ping", function() return "pong" end)
    local got = {}
    local function note(i) return function(err, result) got[#got + 1] = { i, err and err.code, result } end end
    peer:request("x", nil, nil, function() error("first", 0) end)   -- 1: raises
    peer:request("x", nil, nil, note(2))
    peer:request("x", nil, nil, function(_, r) got[#got + 1] = { 3, r }; error({ "not a string" }) end)
    peer:request("x", nil, nil, note(4))
    local co_got = {}
    local co = coroutine.create(function() co_got = { peer:request("x", nil) } end)  -- 5: waits
    assert(coroutine.resume(co))
    peer:request("x", nil, nil, function() error("in a batch", 0) end)  -- 6: a batch member's reply
    peer:request("x", nil, nil, note(7))
    peer:request("x", nil, nil, function() error("on an error reply", 0) end)  -- 8
    peer:request("x", nil, nil, note(9))
    out[1] = nil; for i = 2, #out do out[i] = nil end
    peer:receive(line '{"jsonrpc":"2.0","result":"a","id":1}'
      .. line '{"jsonrpc":"2.0","result":"b","id":2}'
      .. line '{"jsonrpc":"2.0","result":"c","id":3}'
      .. line '{"jsonrpc":"2.0","method":"ping","id":"p"}'
      .. line '{"jsonrpc":"2.0","result":"d","id":4}'
      .. line '{"jsonrpc":"2.0","result":"e","id":5}'
      .. line '[{"jsonrpc":"2.0","result":"f","id":6},{"jsonrpc":"2.0","result":"g","id":7}]'
      .. line '{"jsonrpc":"2.0","error":{"code":-1,"message":"no"},"id":8}'
      .. line '{"jsonrpc":"2.0","result":"i","id":9}')
    assert.same({ { 2, nil, "b" }, { 3, "c" }, { 4, nil, "d" }, { 7, nil, "g" }, { 9, nil, "i" } }, got)
    assert.same({ "e" }, co_got)
    assert.equal(4, #logs)
    assert.equal("request callback failed: first", logs[1])
    assert.truthy(logs[2]:find("^request callback failed: table: "), logs[2])
    assert.equal("request callback failed: in a batch", logs[3])
    assert.equal("request callback failed: on an error reply", logs[4])
    assert.same({ '{"jsonrpc":"2.0","result":"pong","id":"p"}\n' }, out)
    assert.equal(0, peer:stats().pending)
    -- and the peer goes on as before
    peer:request("x", nil, nil, note(10))
    peer:receive(line '{"jsonrpc":"2.0","result":"j","id":10}')
    assert.same({ 10, nil, "j" }, got[6])
  end)
end)

describe("requests", function()
  it("number ids from 1 and match out-of-order responses", function()
    local peer, out = capture()
    local got = {}
    for i = 1, 3 do
      local id = peer:request("m", { i }, nil, function(err, result) got[#got + 1] = { i, err, result } end)
      assert.equal(i, id)
    end
    assert.same({ '{"jsonrpc":"2.0","method":"m","params":[1],"id":1}\n',
      '{"jsonrpc":"2.0","method":"m","params":[2],"id":2}\n',
      '{"jsonrpc":"2.0","method":"m","params":[3],"id":3}\n' }, out)
    peer:receive(line '{"jsonrpc":"2.0","result":"c","id":3}'
      .. line '{"jsonrpc":"2.0","error":{"code":-5,"message":"bad","data":[1]},"id":1}'
      .. line '{"jsonrpc":"2.0","result":null,"id":2}')
    assert.equal(3, got[1][1]); assert.equal("c", got[1][3])
    assert.equal(1, got[2][1]); assert.equal(-5, got[2][2].code)
    assert.equal("bad", got[2][2].message); assert.same({ 1 }, got[2][2].data)
    assert.equal("jrpc error -5: bad", tostring(got[2][2]))
    assert.equal(2, got[3][1]); assert.is_nil(got[3][2]); assert.equal(null, got[3][3])
  end)

  it("return result or nil, err inside a coroutine", function()
    local peer = capture()
    local r1 = spawn(function() return peer:request("m", nil) end)
    local r2 = spawn(function() return peer:request("m", nil) end)
    peer:receive(line '{"jsonrpc":"2.0","error":{"code":1,"message":"no"},"id":2}'
      .. line '{"jsonrpc":"2.0","result":[1,2],"id":1}')
    assert.same({ 1, 2 }, r1()[1])
    assert.is_nil(r2()[1])
    assert.equal(1, r2()[2].code)
  end)

  it("raise when called outside a coroutine without a callback", function()
    local peer = capture()
    assert.has_error(function() peer:request("m", nil) end)
  end)

  -- each message names the line of the call that misused the API (a
  -- method called through the peer and its tail calls, or the peer's own
  -- `request` field: the same levels)
  it("raise for misuse with the caller's line in the message", function()
    local peer = capture()
    local function blame(fn)
      local ok, err = pcall(fn)
      assert.is_false(ok)
      return (tostring(err):gsub("^spec/peer_spec%.lua:(%d+): ", function(n) return "line " .. n .. ": " end))
    end
    local here = debug.getinfo(1, "l").currentline
    assert.equal("line " .. here + 1 .. ": method must be a string", blame(function() peer:request(1, nil, print) end))
    assert.equal("line " .. here + 2 .. ": opts must be a table", blame(function() peer:request("m", nil, 5) end))
    assert.equal("line " .. here + 3 .. ": callback must be a function", blame(function() peer:request("m", nil, nil, 5) end))
    assert.equal("line " .. here + 4 .. ": outside a coroutine a callback is required", blame(function() peer:request("m") end))
    peer:request("m", nil, { id = "x" }, print)
    assert.equal("line " .. here + 7 .. ': request id "x" is already in flight',
      blame(function() peer:request("m", nil, { id = "x" }, print) end))
    assert.equal("line " .. here + 9 .. ": timeout must be a number of seconds",
      blame(function() peer:request("m", nil, { timeout = "1" }, print) end))
    assert.equal("line " .. here + 10 .. ": method must be a string", blame(function() peer:notify(1) end))
    assert.equal("line " .. here + 11 .. ": outside a coroutine a callback is required", blame(function() peer:batch({ { "m" } }) end))
    assert.equal("line " .. here + 12 .. ": a batch needs at least one call", blame(function() peer:batch({}, print) end))
    assert.equal("line " .. here + 14 .. ": jrpc.peer: option timeout must be a number of seconds",
      blame(function() jrpc.peer{ send = print, timeout = "1" } end))
    -- one form: the callback is always the fourth argument
    local before = peer:stats().pending
    assert.equal("line " .. debug.getinfo(1, "l").currentline + 2
      .. ": opts must be a table or nil (the callback is the fourth argument)",
      blame(function() peer:request("m", nil, print) end))
    assert.equal(before, peer:stats().pending)
  end)

  it("use the caller's id and raise on a clash with one in flight", function()
    local peer, out = capture()
    peer:request("m", nil, { id = "mine" }, function() end)
    assert.equal('{"jsonrpc":"2.0","method":"m","id":"mine"}\n', out[1])
    assert.has_error(function() peer:request("m", nil, { id = "mine" }, function() end) end)
    -- the counter skips ids taken by the caller
    peer:request("m", nil, { id = 1 }, function() end)
    assert.equal(2, peer:request("m", nil, nil, function() end))
  end)

  it("fail with code encode when params cannot be encoded", function()
    local peer, out = capture()
    local got
    peer:request("m", { print }, nil, function(err) got = err end)
    assert.equal("encode", got.code)
    assert.same({}, out)
    assert.equal(0, peer:stats().pending)
  end)

  it("fail with code too_many_pending past max_pending", function()
    local peer = capture{ max_pending = 1 }
    local got
    peer:request("m", nil, nil, function() end)
    peer:request("m", nil, nil, function(err) got = err end)
    assert.equal("too_many_pending", got.code)
  end)

  it("send notifications", function()
    local peer, out = capture()
    assert.is_true(peer:notify("n", { a = 1 }))
    assert.same({ '{"jsonrpc":"2.0","method":"n","params":{"a":1}}\n' }, out)
    local ok, err = peer:notify("n", { print })
    assert.is_nil(ok)
    assert.same({ code = "encode", message = "params could not be encoded: cannot encode a function" }, err)
    assert.equal(require("jrpc.errors").metatable, getmetatable(err))
  end)

  it("drop responses that match nothing, and count them", function()
    local peer, out, logs = capture()
    peer:request("m", nil, nil, function() end)
    peer:receive(line '{"jsonrpc":"2.0","result":1,"id":99}'
      .. line '{"jsonrpc":"2.0","result":1,"id":"1"}'
      .. line '{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"},"id":null}')
    assert.equal(1, #out)  -- our request only; no reply to a response
    assert.equal(3, peer:stats().unmatched)
    assert.equal(1, peer:stats().pending)
    assert.equal(0, #logs)  -- routine: not for on_error
  end)

  it("show dropped responses to on_debug", function()
    local debug = {}
    local peer = jrpc.peer{ send = function() end, on_debug = function(m) debug[#debug + 1] = m end }
    peer:receive(line '{"jsonrpc":"2.0","result":1,"id":99}')
    assert.same({ "response to unknown or settled request id 99 dropped" }, debug)
  end)
end)

describe("broken responses", function()
  it("settle the request they name with code invalid_response, unanswered", function()
    local peer, out = capture()
    local got = {}
    peer:request("m", nil, nil, function(err, result) got[#got + 1] = { err, result } end)
    peer:receive(line '{"jsonrpc":"2.0","result":1,"error":{"code":1,"message":"x"},"id":1}')
    assert.equal(1, #got)
    assert.equal("invalid_response", got[1][1].code)
    assert.equal("invalid response: a response must not have both result and error", got[1][1].message)
    assert.equal(1, #out)  -- our request only
    assert.equal(0, peer:stats().pending)
    peer:receive(line '{"jsonrpc":"2.0","result":2,"id":1}')  -- late: dropped
    assert.equal(1, #got)
  end)
end)

describe("invalid messages", function()
  it("are answered only when the codec says a reply is due, and always logged", function()
    local peer, out, logs = capture{ role = "server" }
    peer:receive(line '{"jsonrpc":"2.0","result":1,"error":{"code":1,"message":"x"},"id":1}'
      .. line '{"jsonrpc":"2.0","result":1}'
      .. line '{"jsonrpc":"1.0","method":"x","id":3}')
    assert.same({ '{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request"},"id":3}\n' }, out)
    assert.equal(3, #logs)
    assert.truthy(logs[1]:find("not answered", 1, true))
    assert.equal(3, peer:stats().invalid)
  end)
end)

describe("timeouts", function()
  it("expire on tick with an injected clock, exactly once", function()
    local now = 100
    local peer, out = capture{ clock = function() return now end }
    local got = {}
    peer:request("slow", nil, { timeout = 5 }, function(err) got[#got + 1] = err end)
    peer:request("other", nil, nil, function(err) got[#got + 1] = err end)
    assert.equal(105, peer:tick())
    now = 104.9
    assert.equal(105, peer:tick())
    assert.same({}, got)
    now = 105
    assert.is_nil(peer:tick())
    assert.equal(1, #got)
    assert.equal("timeout", got[1].code)
    assert.equal('{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1}}\n', out[3])
    peer:receive(line '{"jsonrpc":"2.0","result":1,"id":1}')  -- late
    assert.equal(1, #got)
    assert.equal(1, peer:stats().unmatched)
    assert.equal(1, peer:stats().expired)
  end)

  it("use the peer's default timeout and expire on receive", function()
    local now = 0
    local peer = capture{ clock = function() return now end, timeout = 1 }
    local r = spawn(function() return peer:request("m", nil) end)
    now = 2
    peer:receive(line '{"jsonrpc":"2.0","result":1,"id":1}')
    assert.is_nil(r()[1])
    assert.equal("timeout", r()[2].code)
  end)
end)

describe("cancel", function()
  it("settles our request and tells the peer ($/cancelRequest)", function()
    local peer, out = capture()
    local got = {}
    local id = peer:request("m", nil, nil, function(err) got[#got + 1] = err end)
    assert.is_true(peer:cancel(id, "user"))
    assert.is_false(peer:cancel(id))
    assert.equal(1, #got)
    assert.equal("cancelled", got[1].code)
    assert.equal("user", got[1].message)
    assert.equal('{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1}}\n', out[2])
    peer:receive(line '{"jsonrpc":"2.0","result":1,"id":1}')
    assert.equal(1, #got)
  end)

  it("sends notifications/cancelled with a reason in profile mcp", function()
    local peer, out = capture{ profile = "mcp" }
    local id = peer:request("m", nil, nil, function() end)
    peer:cancel(id, "bored")
    local n = jrpc.decode(out[2])
    assert.equal("notifications/cancelled", n.method)
    assert.same({ requestId = 1, reason = "bored" }, n.params)
  end)

  it("answers an incoming cancelled request -32800 at once and drops the late result", function()
    local peer, out = capture()
    local was_cancelled
    peer:method("slow", function(_, ctx)
      ctx.peer:request("x", nil)
      was_cancelled = ctx:cancelled()
      return "too late"
    end)
    peer:receive(line '{"jsonrpc":"2.0","method":"slow","id":"s"}')
    peer:receive(line '{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"s"}}')
    assert.equal('{"jsonrpc":"2.0","error":{"code":-32800,"message":"Request cancelled"},"id":"s"}\n', out[2])
    peer:receive(line '{"jsonrpc":"2.0","result":1,"id":1}')
    assert.is_true(was_cancelled)
    assert.equal(2, #out)
  end)

  it("ignores cancels for unknown or finished requests", function()
    local peer, out = capture()
    peer:method("fast", function() return 1 end)
    peer:receive(line '{"jsonrpc":"2.0","method":"fast","id":1}'
      .. line '{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1}}'
      .. line '{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"zz"}}'
      .. line '{"jsonrpc":"2.0","method":"$/cancelRequest","params":[1]}')
    assert.same({ '{"jsonrpc":"2.0","result":1,"id":1}\n' }, out)
  end)

  it("in profile mcp, sends nothing for a cancelled request", function()
    local peer, out = capture{ profile = "mcp" }
    local was_cancelled
    peer:method("slow", function(_, ctx)
      ctx.peer:request("x", nil)
      was_cancelled = ctx:cancelled()
      return {}
    end)
    peer:receive(line '{"jsonrpc":"2.0","method":"slow","id":5}')
    peer:receive(line '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5,"reason":"r"}}')
    peer:receive(line '{"jsonrpc":"2.0","result":{},"id":1}')
    assert.is_true(was_cancelled)
    assert.same({ '{"jsonrpc":"2.0","method":"x","id":1}\n' }, out)
  end)
end)

describe("close", function()
  it("settles every pending request exactly once, with code closed", function()
    local peer = capture()
    local calls = {}
    for i = 1, 3 do
      peer:request("m", nil, nil, function(err, result) calls[#calls + 1] = { i, err, result } end)
    end
    local r = spawn(function() return peer:request("m", nil) end)
    peer:close("bye")
    peer:close("again")
    peer:receive(line '{"jsonrpc":"2.0","result":1,"id":1}')
    assert.equal(3, #calls)
    table.sort(calls, function(x, y) return x[1] < y[1] end)
    for i = 1, 3 do
      assert.equal(i, calls[i][1])
      assert.equal("closed", calls[i][2].code)
      assert.equal("bye", calls[i][2].message)
    end
    assert.equal("closed", r()[2].code)
    assert.equal(0, peer:stats().pending)
    assert.is_true(peer:stats().closed)
  end)

  it("makes later requests fail at once", function()
    local peer, out = capture()
    peer:close()
    local got
    assert.is_nil(peer:request("m", nil, nil, function(err) got = err end))
    assert.equal("closed", got.code)
    assert.equal("connection closed", got.message)
    local r = spawn(function() return peer:request("m", nil) end)
    assert.equal("closed", r()[2].code)
    local ok, err = peer:notify("n")
    assert.is_nil(ok)
    assert.same({ code = "closed", message = "connection closed" }, err)
    assert.same({}, out)
  end)

  it("silences handlers that were waiting", function()
    local peer, out = capture()
    local after
    peer:method("wait", function(_, ctx)
      local _, err = ctx.peer:request("x", nil)
      after = { err.code, ctx:cancelled() }
      return 1
    end)
    peer:receive(line '{"jsonrpc":"2.0","method":"wait","id":1}')
    peer:close()
    assert.same({ "closed", true }, after)
    assert.equal(1, #out)
  end)

  it("from a handler: earlier replies still go out, nothing after", function()
    local peer, out = capture()
    peer:method("echo", function(p) return p[1] end)
    peer:method("bye", function(_, ctx) ctx.peer:close("bye") return "unsent" end)
    peer:receive(line '{"jsonrpc":"2.0","method":"echo","params":[1],"id":1}'
      .. line '{"jsonrpc":"2.0","method":"bye","id":2}'
      .. line '{"jsonrpc":"2.0","method":"echo","params":[3],"id":3}')
    assert.same({ '{"jsonrpc":"2.0","result":1,"id":1}\n' }, out)
  end)

  it("is what finish does at the end of input, after the last message", function()
    local peer, out = capture()
    peer:method("m", function() return 1 end)
    local got
    peer:request("x", nil, nil, function(err) got = err end)
    peer:receive('{"jsonrpc":"2.0","method":"m","id":1}')  -- no newline
    jrpc.link(peer):finish()
    assert.equal('{"jsonrpc":"2.0","result":1,"id":1}\n', out[2])
    assert.equal("closed", got.code)
  end)
end)

describe("batches we send", function()
  it("collect answers in call order, notifications omitted", function()
    local a, b, pump = link()
    local noted = {}
    b:method("echo", function(p) return p[1] end)
    b:method("note", function(p) noted[#noted + 1] = p[1] end)
    local answers
    spawn(function()
      answers = a:batch{ { "echo", { 1 } }, { "note", { "n" }, notify = true }, { "nope" }, { "echo", { 3 } } }
    end)
    pump()
    assert.same({ "n" }, noted)
    assert.equal(3, #answers)
    assert.same({ result = 1 }, answers[1])
    assert.equal(-32601, answers[2].error.code)
    assert.same({ result = 3 }, answers[3])
  end)

  it("take a callback outside a coroutine", function()
    local peer, out = capture()
    local answers
    peer:batch({ { "a" }, { "b", { 1 } } }, function(list) answers = list end)
    assert.same({ '[{"jsonrpc":"2.0","method":"a","id":1},{"jsonrpc":"2.0","method":"b","params":[1],"id":2}]\n' }, out)
    peer:receive(line '[{"jsonrpc":"2.0","result":"B","id":2},{"jsonrpc":"2.0","result":"A","id":1}]')
    assert.same({ { result = "A" }, { result = "B" } }, answers)
    assert.equal(1, #out)  -- responses inside a batch get no reply
  end)

  it("raise on a malformed call before sending anything", function()
    local peer, out = capture()
    assert.has_error(function() peer:batch({ { "a" }, { 42 } }, function() end) end)
    assert.has_error(function() peer:batch({}, function() end) end)
    assert.same({}, out)
    assert.equal(0, peer:stats().pending)
  end)

  it("are refused in profiles lsp and mcp", function()
    assert.has_error(function() capture{ profile = "lsp" }:batch({ { "a" } }, function() end) end)
    assert.has_error(function() capture{ profile = "mcp" }:batch({ { "a" } }, function() end) end)
  end)
end)

describe("ids", function()
  local function echo_peer()
    local peer, out = capture()
    peer:method("m", function() return 0 end)
    return peer, out
  end

  it("keep integer and string ids apart", function()
    local peer, out = echo_peer()
    peer:receive(line '{"jsonrpc":"2.0","method":"m","id":2}' .. line '{"jsonrpc":"2.0","method":"m","id":"2"}')
    assert.equal('{"jsonrpc":"2.0","result":0,"id":2}\n{"jsonrpc":"2.0","result":0,"id":"2"}\n', out[1])
  end)

  it("echo big integers, escapes and non-ASCII byte for byte", function()
    local peer, out = echo_peer()
    local ids = { '9007199254740993', '-9223372036854775808', '"a\\"b\\\\c\\u00e9\\n\\/"', '"é✓ 𝄞"', '1e2' }
    for _, id in ipairs(ids) do
      peer:receive(line('{"jsonrpc":"2.0","method":"m","id":' .. id .. '}'))
      assert.equal('{"jsonrpc":"2.0","result":0,"id":' .. id .. '}\n', out[#out])
    end
  end)

  it("match responses by exact id: 2 is not \"2\"", function()
    local peer = capture()
    local got
    peer:request("m", nil, { id = "2" }, function(_, r) got = r end)
    peer:receive(line '{"jsonrpc":"2.0","result":"int","id":2}')
    assert.is_nil(got)
    peer:receive(line '{"jsonrpc":"2.0","result":"str","id":"2"}')
    assert.equal("str", got)
  end)
end)

describe("profile mcp", function()
  it("moves params._meta to ctx.meta", function()
    local peer, out = capture{ profile = "mcp" }
    local seen
    peer:method("tools/call", function(p, ctx) seen = { p = p, meta = ctx.meta }; return { ok = true } end)
    peer:receive(line '{"jsonrpc":"2.0","method":"tools/call","params":{"name":"t","_meta":{"progressToken":7}},"id":1}')
    assert.same({ name = "t" }, seen.p)
    assert.same({ progressToken = 7 }, seen.meta)
    assert.same({ '{"jsonrpc":"2.0","result":{"ok":true},"id":1}\n' }, out)
  end)

  it("rejects array params, null ids and batches with -32600", function()
    local peer, out = capture{ profile = "mcp" }
    peer:method("m", function() return 1 end)
    peer:receive(line '{"jsonrpc":"2.0","method":"m","params":[1],"id":1}'
      .. line '{"jsonrpc":"2.0","method":"m","id":null}'
      .. line '[{"jsonrpc":"2.0","method":"m","id":3}]')
    assert.equal('{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request"},"id":1}\n'
      .. '{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request"},"id":null}\n'
      .. '{"jsonrpc":"2.0","error":{"code":-32600,"message":"Batches are not allowed"},"id":null}\n',
      table.concat(out))
  end)
end)

describe("profile lsp", function()
  local function frame(json) return "Content-Length: " .. #json .. "\r\n\r\n" .. json end

  it("uses Content-Length framing by default", function()
    local peer, out = capture{ profile = "lsp" }
    peer:method("initialize", function() return { capabilities = jrpc.object() } end)
    peer:receive(frame '{"jsonrpc":"2.0","method":"initialize","params":{},"id":1}')
    assert.same({ frame '{"jsonrpc":"2.0","result":{"capabilities":{}},"id":1}' }, out)
  end)

  it("answers a cancelled request -32800 and ignores unknown $/ notifications quietly", function()
    local peer, out, logs = capture{ profile = "lsp" }
    peer:method("slow", function(_, ctx) return ctx.peer:request("workspace/configuration", {}) end)
    peer:receive(frame '{"jsonrpc":"2.0","method":"slow","id":3}')
    peer:receive(frame '{"jsonrpc":"2.0","method":"$/setTrace","params":{"value":"off"}}')
    peer:receive(frame '{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":3}}')
    assert.equal(frame '{"jsonrpc":"2.0","error":{"code":-32800,"message":"Request cancelled"},"id":3}', out[2])
    assert.same({}, logs)
  end)

  it("refuses incoming batches", function()
    local peer, out = capture{ profile = "lsp", role = "server" }
    peer:receive(frame '[{"jsonrpc":"2.0","method":"m","id":1}]')
    assert.same({ frame '{"jsonrpc":"2.0","error":{"code":-32600,"message":"Batches are not allowed"},"id":null}' }, out)
  end)
end)

describe("limits", function()
  it("are per peer: one peer's max_batch does not affect another", function()
    local small, small_out = capture{ max_batch = 1 }
    local big, big_out = capture()
    for _, p in ipairs{ small, big } do p:method("m", function() return 1 end) end
    local batch = line '[{"jsonrpc":"2.0","method":"m","id":1},{"jsonrpc":"2.0","method":"m","id":2}]'
    small:receive(batch)
    big:receive(batch)
    assert.same({ '{"jsonrpc":"2.0","error":{"code":-32600,"message":"Batch too large"},"id":null}\n' }, small_out)
    assert.same({ '[{"jsonrpc":"2.0","result":1,"id":1},{"jsonrpc":"2.0","result":1,"id":2}]\n' }, big_out)
  end)
end)

describe("the jrpc facade", function()
  it("builds and raises errors with a __tostring", function()
    local e = jrpc.new_error(-32000, "Custom", { x = 1 })
    assert.equal("jrpc error -32000: Custom", tostring(e))
    local ok, raised = pcall(jrpc.error, -32001, "Raised")
    assert.is_false(ok)
    assert.equal(-32001, raised.code)
    assert.equal("Raised", raised.message)
    assert.has_error(function() jrpc.new_error(1.5, "x") end)
  end)

  it("marks arrays and objects", function()
    assert.equal("[]", jrpc.encode(jrpc.array{}))
    assert.equal("{}", jrpc.encode(jrpc.object{}))
    assert.equal("[1]", jrpc.encode(jrpc.array{ 1 }))
    assert.same(jrpc.codes, {
      PARSE_ERROR = -32700, INVALID_REQUEST = -32600, METHOD_NOT_FOUND = -32601,
      INVALID_PARAMS = -32602, INTERNAL_ERROR = -32603, REQUEST_CANCELLED = -32800 })
  end)
end)
