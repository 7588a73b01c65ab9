-- jrpc.peer: peer:fallback(fn), the handler of every method without one of
-- its own (what a bridge to another dispatcher, such as vim.lsp, needs).
local jrpc = require "jrpc"

local support = dofile("spec/peer_support.lua")
local capture, line = support.capture, support.line

describe("peer:fallback", function()
  it("answers requests and receives notifications for methods without a handler, named by ctx.method", function()
    local peer, out, logs = capture()
    local seen = {}
    peer:method("own", function() return "own handler" end)
    peer:fallback(function(params, ctx)
      seen[#seen + 1] = ctx.method .. " " .. tostring(ctx.id) .. " " .. tostring(params and params[1])
      if ctx.method == "unknown/thing" then jrpc.error(-32601, "Method not found") end
      return ctx.method
    end)
    peer:receive(line '{"jsonrpc":"2.0","method":"textDocument/hover","params":[1],"id":1}'
      .. line '{"jsonrpc":"2.0","method":"$/progress","params":[2]}'
      .. line '{"jsonrpc":"2.0","method":"own","id":2}'
      .. line '{"jsonrpc":"2.0","method":"unknown/thing","id":3}')
    assert.same({ "textDocument/hover 1 1", "$/progress nil 2", "unknown/thing 3 nil" }, seen)
    assert.equal(line '{"jsonrpc":"2.0","result":"textDocument/hover","id":1}'
      .. line '{"jsonrpc":"2.0","result":"own handler","id":2}'
      .. line '{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found"},"id":3}', table.concat(out))
    assert.same({}, logs)
    assert.equal(0, peer:stats().dropped_notifications)
  end)

  it("may wait like any handler, and is cancelled like one", function()
    local peer, out
    peer, out = capture()
    peer:fallback(function(_, ctx)
      local name = peer:request("name", nil)
      return ctx.method .. " for " .. tostring(name)
    end)
    peer:receive(line '{"jsonrpc":"2.0","method":"a","id":"x"}')
    peer:receive(line '{"jsonrpc":"2.0","method":"b","id":"y"}')
    peer:receive(line '{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"y"}}')
    peer:receive(line '{"jsonrpc":"2.0","result":"lua","id":1}' .. line '{"jsonrpc":"2.0","result":"late","id":2}')
    assert.same({
      line '{"jsonrpc":"2.0","method":"name","id":1}',
      line '{"jsonrpc":"2.0","method":"name","id":2}',
      line '{"jsonrpc":"2.0","error":{"code":-32800,"message":"Request cancelled"},"id":"y"}',
      line '{"jsonrpc":"2.0","result":"a for lua","id":"x"}',
    }, out)
    assert.equal(0, peer:stats().in_flight)
  end)

  it("is removed with nil, and refuses anything but a function", function()
    local peer, out = capture()
    assert.equal(peer, peer:fallback(function() return 1 end))
    peer:fallback(nil)
    peer:receive(line '{"jsonrpc":"2.0","method":"m","id":1}')
    assert.same({ line '{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found"},"id":1}' }, out)
    assert.has_error(function() peer:fallback("x") end, "fallback must be a function or nil")
  end)
end)
