-- jrpc.peer: handlers run in place on the worker that drains the read,
-- with that worker's context and no pcall of their own; every guarantee
-- holds for them. And a long read sends its replies every few, in order.
local jrpc = require "jrpc"
local output = require "jrpc.output"

local support = dofile("spec/peer_support.lua")
local capture, line = support.capture, support.line

local function request(method, id, params)
  return line(('{"jsonrpc":"2.0","method":"%s","params":%s,"id":%s}'):format(method, params or "[]", id))
end

-- A bare handler that asks the other side through the peer it closes over.
local function asking_peer(after)
  local peer, out, logs
  peer, out, logs = capture{ methods = {
    ask = function(p)
      local name, err = peer:request("name", jrpc.array{})
      if after then return after(name, err, p) end
      return "hello " .. tostring(name)
    end,
    ping = function() return "pong" end,
  } }
  return peer, out, logs
end

describe("handlers run in place", function()
  it("wait for the other side while other requests are served", function()
    local peer, out, logs = asking_peer()
    peer:receive(request("ask", '"a"'))
    assert.same({ line '{"jsonrpc":"2.0","method":"name","params":[],"id":1}' }, out)
    assert.equal(1, peer:stats().in_flight)
    peer:receive(request("ping", '"b"'))
    assert.equal(line '{"jsonrpc":"2.0","result":"pong","id":"b"}', out[2])
    peer:receive(line '{"jsonrpc":"2.0","result":"lua","id":1}')
    assert.equal(line '{"jsonrpc":"2.0","result":"hello lua","id":"a"}', out[3])
    assert.equal(3, #out)
    assert.equal(0, peer:stats().in_flight)
    assert.same({}, logs)
  end)

  it("can be cancelled while they wait: answered -32800 once, never again", function()
    local peer, out = asking_peer()
    peer:receive(request("ask", 7))
    peer:receive(line '{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":7}}')
    assert.equal(line '{"jsonrpc":"2.0","error":{"code":-32800,"message":"Request cancelled"},"id":7}', out[2])
    peer:receive(line '{"jsonrpc":"2.0","result":"late","id":1}')
    assert.equal(2, #out)
    assert.equal(0, peer:stats().in_flight)
  end)

  it("raising at once or after a wait: -32603, logged, and the peer goes on", function()
    local peer, out, logs = asking_peer(function() error("after the wait") end)
    peer:method("boom", function() error("at once") end)
    peer:receive(request("boom", 1) .. request("ask", 2))
    assert.equal(line '{"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error"},"id":1}'
      .. line '{"jsonrpc":"2.0","method":"name","params":[],"id":1}', out[1])
    peer:receive(line '{"jsonrpc":"2.0","result":"x","id":1}')
    assert.equal(line '{"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error"},"id":2}', out[2])
    assert.equal(2, #logs)
    assert.truthy(logs[1]:find('method "boom" failed', 1, true))
    assert.truthy(logs[2]:find('method "ask" failed', 1, true))
    peer:receive(request("ping", 3))
    assert.equal(line '{"jsonrpc":"2.0","result":"pong","id":3}', out[3])
    assert.equal(0, peer:stats().in_flight)
  end)

  it("in a read of several (no pcall of their own), a raise ends only its request: the rest is served, in order", function()
    local peer, out, logs = capture{ methods = {
      ping = function() return "pong" end,
      boom = function(p) error("boom " .. tostring(p[1])) end,
    } }
    peer:receive(request("ping", 1) .. request("boom", 2, "[2]") .. request("ping", 3)
      .. request("boom", 4, "[4]") .. request("ping", 5))
    assert.same({  -- the first write after 2 replies, the next after 4 more or at the end
      line '{"jsonrpc":"2.0","result":"pong","id":1}'
      .. line '{"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error"},"id":2}',
      line '{"jsonrpc":"2.0","result":"pong","id":3}'
      .. line '{"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error"},"id":4}'
      .. line '{"jsonrpc":"2.0","result":"pong","id":5}',
    }, out)
    assert.equal(2, #logs)
    assert.truthy(logs[1]:find('method "boom" failed: .*boom 2'), logs[1])
    assert.truthy(logs[2]:find('method "boom" failed: .*boom 4'), logs[2])
    local stats = peer:stats()
    assert.same({ 5, 2, 0 }, { stats.handled, stats.failed, stats.in_flight })
  end)

  it("alone in their read (no pcall of their own), raising at once or after a wait: -32603, logged", function()
    local peer, out, logs = asking_peer(function() error("after the wait") end)
    peer:method("boom", function() error("at once") end)
    peer:receive(request("boom", 1))
    peer:receive(request("ask", 2))
    peer:receive(line '{"jsonrpc":"2.0","result":"lua","id":1}')
    assert.same({
      line '{"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error"},"id":1}',
      line '{"jsonrpc":"2.0","method":"name","params":[],"id":1}',
      line '{"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error"},"id":2}',
    }, out)
    assert.equal(2, #logs)
    assert.truthy(logs[1]:find('method "boom" failed: .*at once'), logs[1])
    assert.truthy(logs[2]:find('method "ask" failed: .*after the wait'), logs[2])
    assert.equal(0, peer:stats().in_flight)
    peer:receive(request("ping", 3))
    assert.equal(line '{"jsonrpc":"2.0","result":"pong","id":3}', out[4])
  end)

  it("alone in their read: what the handler sends goes out before its reply, each as it is written", function()
    local peer, out
    peer, out = capture{ methods = {
      tell = function(p)
        peer:notify("note", jrpc.array{ p[1] })
        return "told"
      end,
    } }
    peer:receive(request("tell", 1, "[5]"))
    assert.same({ line '{"jsonrpc":"2.0","method":"note","params":[5]}',
      line '{"jsonrpc":"2.0","result":"told","id":1}' }, out)
    assert.equal(1, peer:stats().handled)
    assert.equal(1, peer:stats().idle_workers)
  end)

  it("a jrpc error raised is answered as is, with the request's id", function()
    local peer, out = capture{ methods = {
      nope = function() jrpc.error(-32001, "nope", { why = 1 }) end,
    } }
    peer:receive(request("nope", '"x"'))
    assert.same({ line '{"jsonrpc":"2.0","error":{"code":-32001,"message":"nope","data":{"why":1}},"id":"x"}' },
      out)
  end)

  it("a handler that feeds the peer and then waits keeps its own id", function()
    local peer, out
    peer, out = capture{ methods = {
      outer = function()
        peer:receive(request("inner", 2))  -- another request, answered in between
        return peer:request("name", nil)
      end,
      inner = function() return "in" end,
    } }
    peer:receive(request("outer", 1))
    peer:receive(line '{"jsonrpc":"2.0","result":"done","id":1}')
    local all = table.concat(out)
    assert.truthy(all:find('{"jsonrpc":"2.0","result":"in","id":2}', 1, true))
    assert.truthy(all:find('{"jsonrpc":"2.0","result":"done","id":1}\n$'))
    assert.equal(0, peer:stats().in_flight)
  end)

  it("with a params declaration: the params are checked", function()
    local peer, out = capture()
    peer:method("sub", function(p) return p.a - p.b end, jrpc.params{ "a:number", "b:number" })
    peer:receive(request("sub", 1, "[5,3]") .. request("sub", 2, '["x",3]'))
    assert.equal(line '{"jsonrpc":"2.0","result":2,"id":1}'
      .. line '{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params: \\"a\\" must be a number"},"id":2}',
      out[1])
  end)

  it("every handler gets its context, whatever its arity", function()
    local peer, out = capture{ methods = {
      who = function(_, ctx) return ctx.method .. ":" .. tostring(ctx.id) end,
      any = function(...) return select("#", ...) end,
      one = function(p) return p end,
    } }
    peer:receive(request("who", 4) .. request("any", 5))
    assert.same({ line '{"jsonrpc":"2.0","result":"who:4","id":4}' .. line '{"jsonrpc":"2.0","result":2,"id":5}' },
      out)
  end)

  it("a context says its own request while its handler waits, whatever runs meanwhile", function()
    local peer, out, seen
    seen = {}
    peer, out = capture{ methods = {
      slow = function(_, ctx)
        local before = ctx.method .. ":" .. ctx:id_json()
        peer:request("name", nil)
        seen[#seen + 1] = before .. " " .. ctx.method .. ":" .. ctx:id_json() .. " " .. tostring(ctx:cancelled())
        return ctx.id
      end,
      quick = function(_, ctx) seen[#seen + 1] = ctx.method .. ":" .. ctx:id_json() return ctx.id end,
    } }
    peer:receive(request("slow", '"s1"') .. request("quick", 7) .. request("slow", 8))
    peer:receive(request("quick", 9))
    peer:receive(line '{"jsonrpc":"2.0","result":"a","id":2}' .. line '{"jsonrpc":"2.0","result":"b","id":1}')
    assert.same({ 'quick:7', 'quick:9', 'slow:8 slow:8 false', 'slow:"s1" slow:"s1" false' }, seen)
    local all = table.concat(out)
    for _, want in ipairs{ '{"jsonrpc":"2.0","result":7,"id":7}', '{"jsonrpc":"2.0","result":9,"id":9}',
        '{"jsonrpc":"2.0","result":8,"id":8}', '{"jsonrpc":"2.0","result":"s1","id":"s1"}' } do
      assert.truthy(all:find(want, 1, true), want)
    end
    assert.equal(0, peer:stats().in_flight)
  end)

  it("batch members each get a context of their own, and may wait", function()
    local peer, out
    peer, out = capture{ methods = {
      ask = function(_, ctx)
        local name = peer:request("name", nil)
        return ctx.method .. ":" .. ctx:id_json() .. ":" .. name
      end,
      now = function(_, ctx) return ctx.id end,
    } }
    peer:receive(line('[' .. request("ask", 1):sub(1, -2) .. ',' .. request("now", 2):sub(1, -2) .. ']'))
    assert.same({ line '{"jsonrpc":"2.0","method":"name","id":1}' }, out)  -- the batch waits for its last member
    peer:receive(line '{"jsonrpc":"2.0","result":"lua","id":1}')
    assert.equal(line '[{"jsonrpc":"2.0","result":"ask:1:lua","id":1},{"jsonrpc":"2.0","result":2,"id":2}]', out[#out])
    assert.equal(0, peer:stats().in_flight)
  end)
end)

describe("replies to a long read", function()
  it("go out after FIRST_FLUSH replies, then after twice as many each time up to FLUSH_PARTS, in order, the rest at the end", function()
    assert.equal(2, output.FIRST_FLUSH)
    assert.equal(16, output.FLUSH_PARTS)
    local peer, out = capture{ methods = { echo = function(p) return p[1] end } }
    local n = 2 + 4 + 8 + 16 + 16 + 3
    local input, want = {}, {}
    for i = 1, n do
      input[i] = request("echo", i, "[" .. i .. "]")
      want[i] = line(('{"jsonrpc":"2.0","result":%d,"id":%d}'):format(i, i))
    end
    peer:receive(table.concat(input))
    local sizes, first = {}, 1
    for i, bytes in ipairs(out) do
      local count = select(2, bytes:gsub("\n", "\n"))
      sizes[i] = count
      assert.equal(table.concat(want, "", first, first + count - 1), bytes)
      first = first + count
    end
    assert.same({ 2, 4, 8, 16, 16, 3 }, sizes)
    -- the next read starts again with FIRST_FLUSH
    for i = #out, 1, -1 do out[i] = nil end
    peer:receive(table.concat(input, "", 1, 7))
    assert.same({ table.concat(want, "", 1, 2), table.concat(want, "", 3, 6), want[7] }, out)
  end)
end)

describe("jrpc.output: held bytes kept by the codec", function()
  local core = require "jrpc.core"
  local function setup()
    local sent, codec = {}, core.codec{}
    return output.new(function(b) sent[#sent + 1] = b end, codec), codec, sent
  end
  local r1, r2 = '{"jsonrpc":"2.0","result":1,"id":1}\n', '{"jsonrpc":"2.0","result":2,"id":2}\n'

  it("keeps the order of the codec's messages and of plain bytes, one send per flush", function()
    local out, codec, sent = setup()
    assert.equal(r1, codec:result(1, 1))  -- not held: a string, sent at once
    out:hold()
    local held = codec:result(1, 1)
    assert.equal(true, held)
    out:write(held)
    assert.same({}, sent)
    out:write("raw\n")  -- the second write: FIRST_FLUSH
    assert.same({ r1 .. "raw\n" }, sent)
    out:write(codec:result(2, 2))
    out:write("raw\n")
    assert.same({ r1 .. "raw\n" }, sent)
    out:release()
    assert.same({ r1 .. "raw\n", r2 .. "raw\n" }, sent)
    assert.equal(r1, codec:result(1, 1))  -- released: strings again
    assert.is_nil(codec:take())
  end)

  it("writes nothing after close, and still flushes what was held before it", function()
    local out, codec, sent = setup()
    out:hold()
    out:write(codec:result(1, 1))
    out:close()
    local after = codec:result(2, 2)
    assert.equal(r2, after)  -- closed: the codec holds no more
    out:write(after)
    out:release()
    assert.same({ r1 }, sent)
  end)

  it("stops holding when the function it runs raises", function()
    local out, codec, sent = setup()
    local ok, err = out:held(function()
      out:write(codec:result(1, 1))
      error("boom", 0)
    end)
    assert.same({ false, "boom" }, { ok, err })
    assert.same({ r1 }, sent)
    assert.equal(r2, codec:result(2, 2))
  end)

  it("keeps a failed writer's message out of what is held", function()
    local out, codec, sent = setup()
    out:hold()
    out:write(codec:result(1, 1))
    assert.same({ nil, "cannot encode a function" }, { codec:result(2, print) })
    out:release()
    assert.same({ r1 }, sent)
  end)
end)
