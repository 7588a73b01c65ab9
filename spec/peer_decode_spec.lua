-- link:decode and link:deliver: a transport that frames messages itself
-- (an HTTP body) decodes one with the peer's codec, looks at it, then has
-- it dispatched exactly as `receive` would: one decode.
local jrpc = require "jrpc"

local function peer_with(out, opts)
  opts = opts or {}
  opts.send = function(bytes) out[#out + 1] = bytes end
  opts.on_error = function() end
  return jrpc.peer(opts)
end

describe("link:decode", function()
  it("gives a request's parts, undispatched", function()
    local out = {}
    local p = peer_with(out, { methods = { add = function(ps) return ps[1] + ps[2] end } })
    local msg = jrpc.link(p):decode('{\n"jsonrpc":"2.0",\n"id":"x\\u0031","method":"add","params":[2,3]}')
    assert.are.same({ "request", "add", { 2, 3 }, "x1", '"x\\u0031"' },
      { msg.kind, msg.method, msg.params, msg.id, msg.id_json })
    assert.are.same({}, out)
    jrpc.link(p):deliver(msg)
    assert.are.same({ '{"jsonrpc":"2.0","result":5,"id":"x\\u0031"}\n' }, out)
  end)

  it("gives the id text of an integer id", function()
    local p = peer_with({})
    assert.are.equal("123456789012345", jrpc.link(p):decode('{"jsonrpc":"2.0","id":123456789012345,"method":"m"}').id_json)
  end)

  it("gives a notification, a result and an error", function()
    local p = peer_with({})
    local n = jrpc.link(p):decode('{"jsonrpc":"2.0","method":"note","params":{"a":1}}')
    assert.are.same({ "notification", "note", { a = 1 } }, { n.kind, n.method, n.params })
    local r = jrpc.link(p):decode('{"jsonrpc":"2.0","id":4,"result":[1]}')
    assert.are.same({ "result", 4, { 1 } }, { r.kind, r.id, r.result })
    local e = jrpc.link(p):decode('{"jsonrpc":"2.0","id":4,"error":{"code":-1,"message":"m"}}')
    assert.are.same({ "error", 4, { code = -1, message = "m" } }, { e.kind, e.id, e.error })
  end)

  it("gives bad text as kind invalid, which deliver answers as a read would", function()
    local out = {}
    local p = peer_with(out, { role = "server", max_message_bytes = 40 })
    local bad = jrpc.link(p):decode('{"jsonrpc":"1.0","id":3,"method":"m"}')
    assert.are.same({ "invalid", 3, { code = -32600, message = "Invalid Request" } }, { bad.kind, bad.id, bad.error })
    jrpc.link(p):deliver(bad)
    local big = jrpc.link(p):decode('{"jsonrpc":"2.0","id":8,"method":"m","params":["' .. ("x"):rep(40) .. '"]}')
    assert.are.same({ "invalid", 8, { code = -32600, message = "Message too large" } }, { big.kind, big.id, big.error })
    jrpc.link(p):deliver(big)
    assert.are.same({ '{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request"},"id":3}\n',
      '{"jsonrpc":"2.0","error":{"code":-32600,"message":"Message too large"},"id":8}\n' }, out)
  end)

  it("delivers into another peer of the same profile", function()
    local out = {}
    local decoder = peer_with({})
    local p = peer_with(out, { methods = { echo = function(ps) return ps end } })
    jrpc.link(p):deliver(jrpc.link(decoder):decode('{"jsonrpc":"2.0","id":1,"method":"echo","params":{"k":"v"}}'))
    assert.are.same({ '{"jsonrpc":"2.0","result":{"k":"v"},"id":1}\n' }, out)
  end)

  it("delivers nothing into a closed peer", function()
    local out = {}
    local p = peer_with(out, { methods = { echo = function(ps) return ps end } })
    local msg = jrpc.link(p):decode('{"jsonrpc":"2.0","id":1,"method":"echo","params":[1]}')
    p:close("done")
    jrpc.link(p):deliver(msg)
    assert.are.same({}, out)
  end)
end)
