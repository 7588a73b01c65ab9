-- jrpc.peer after faults: a raise inside dispatch, limits that cannot hold a
-- reply, handlers that yield to another scheduler, waits resumed by someone
-- else, and the failure shape of notify. (Issue 7, defects 2, 5 and 7.)
local jrpc = require "jrpc"

local support = dofile("spec/peer_support.lua")
local capture, line = support.capture, support.line
local function echo_request(id) return line(('{"jsonrpc":"2.0","method":"echo","params":[%d],"id":%d}'):format(id, id)) end
local function echo_reply(id) return line(('{"jsonrpc":"2.0","result":[%d],"id":%d}'):format(id, id)) end

describe("a raise inside dispatch", function()
  it("a clock that raises once: the read is still answered, and every later one", function()
    local broken = false
    local peer, out, logs = capture{
      timeout = 10,
      clock = function()
        if broken then broken = false; error("clock broke") end
        return 0
      end,
      methods = { echo = function(p) return p end },
    }
    peer:request("ours", nil, nil, function() end)  -- pending, with a deadline
    out[1] = nil
    broken = true
    peer:receive(echo_request(1))
    peer:receive(echo_request(2))
    assert.same({ echo_reply(1), echo_reply(2) }, out)
    assert.equal(1, #logs)
    assert.truthy(logs[1]:find("^deadline check failed: .*clock broke"), logs[1])
    assert.equal(1, peer:stats().pending)
  end)

  it("a send that raises inside a read leaves the peer answering", function()
    local fail = true
    local out = {}
    local peer = jrpc.peer{
      send = function(bytes)
        if fail then fail = false; error("transport broke") end
        out[#out + 1] = bytes
      end,
      on_error = function() end,
      methods = { echo = function(p) return p end },
    }
    assert.has_error(function() peer:receive(echo_request(1)) end, "transport broke")
    peer:receive(echo_request(2))
    assert.same({ echo_reply(2) }, out)
  end)

  it("a handler that raises while the dispatcher runs it in place: the next message is answered", function()
    local peer, out = capture{ methods = {
      boom = function() error("boom") end,
      echo = function(p) return p end,
    } }
    peer:receive(line '{"jsonrpc":"2.0","method":"boom","id":1}' .. echo_request(2))
    assert.same({ line '{"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error"},"id":1}'
      .. echo_reply(2) }, out)
  end)
end)

describe("limits that cannot hold a reply", function()
  it("max_depth below 2 is refused when the peer is made", function()
    for _, depth in ipairs{ 1, 0, -3 } do
      assert.has_error(function() jrpc.peer{ send = print, max_depth = depth } end,
        "jrpc.peer: option max_depth must be at least 2 (an error reply nests two levels)")
    end
  end)

  it("with max_depth 2 a result too deep is answered -32603, and so is a bad error", function()
    local peer, out, logs = capture{ max_depth = 2, methods = {
      deep = function() return { { 1 } } end,
      fine = function() return { 1 } end,
      bad_error = function() jrpc.error(-32001, "custom", { nested = { deeper = true } }) end,
    } }
    peer:receive(line '{"jsonrpc":"2.0","method":"deep","id":1}'
      .. line '{"jsonrpc":"2.0","method":"fine","id":2}'
      .. line '{"jsonrpc":"2.0","method":"bad_error","id":3}'
      .. line '{"jsonrpc":"2.0","method":"none","id":4}')
    assert.equal(table.concat{
      line '{"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error"},"id":1}',
      line '{"jsonrpc":"2.0","result":[1],"id":2}',
      line '{"jsonrpc":"2.0","error":{"code":-32001,"message":"custom"},"id":3}',
      line '{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found"},"id":4}',
    }, table.concat(out))
    assert.equal(2, #logs)
  end)
end)

describe("handlers that yield to another scheduler", function()
  it("are answered -32603 at once, logged, and the peer goes on", function()
    local peer, out, logs = capture{ methods = {
      copas_style = function() coroutine.yield("copas wants this") end,
      echo = function(p) return p end,
    } }
    peer:receive(line '{"jsonrpc":"2.0","method":"copas_style","id":1}' .. echo_request(2))
    assert.same({ line '{"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error"},"id":1}'
      .. echo_reply(2) }, out)
    assert.same({ 'request "copas_style": its handler yielded to another scheduler; a jrpc handler may '
      .. 'wait only in jrpc calls (peer:request, loop:sleep, ...); answered -32603' }, logs)
    local stats = peer:stats()
    assert.equal(0, stats.in_flight)
    assert.equal(1, stats.failed)
  end)

  it("after a jrpc wait too: the yield that follows the reply is caught", function()
    local peer, out, logs = capture{ methods = {
      ask_then_yield = function(_, ctx)
        ctx.peer:request("question", {})
        coroutine.yield("elsewhere")
        return "never"
      end,
    } }
    peer:receive(line '{"jsonrpc":"2.0","method":"ask_then_yield","id":"a"}')
    assert.same({ line '{"jsonrpc":"2.0","method":"question","params":{},"id":1}' }, out)
    assert.equal(1, peer:stats().in_flight)
    peer:receive(line '{"jsonrpc":"2.0","result":42,"id":1}')
    assert.same(line '{"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error"},"id":"a"}', out[2])
    assert.equal(2, #out)
    assert.equal(1, #logs)
    assert.equal(0, peer:stats().in_flight)
  end)

  it("in a batch member and in a notification handler", function()
    local peer, out, logs = capture{ methods = {
      yielder = function() coroutine.yield(1) end,
      echo = function(p) return p end,
    } }
    peer:receive(line('[{"jsonrpc":"2.0","method":"yielder","id":1},{"jsonrpc":"2.0","method":"echo","params":[2],"id":2},'
      .. '{"jsonrpc":"2.0","method":"yielder"}]'))
    assert.same({ line('[{"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error"},"id":1},'
      .. '{"jsonrpc":"2.0","result":[2],"id":2}]') }, out)
    assert.equal(2, #logs)
    assert.truthy(logs[2]:find('^notification "yielder": its handler yielded'), logs[2])
  end)
end)

describe("a waiting request resumed by something other than jrpc", function()
  it("returns nil, err 'interrupted', cancels the request and tells the other side", function()
    local peer, out, logs = capture()
    local results
    local co = coroutine.create(function()
      results = { peer:request("slow", { 1 }) }
    end)
    assert(coroutine.resume(co))
    assert.equal(1, peer:stats().pending)
    assert(coroutine.resume(co, "a foreign wake-up"))
    assert.equal("dead", coroutine.status(co))
    assert.is_nil(results[1])
    assert.equal("interrupted", results[2].code)
    assert.equal(0, peer:stats().pending)
    assert.same({ line '{"jsonrpc":"2.0","method":"slow","params":[1],"id":1}',
      line '{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1}}' }, out)
    -- the late reply matches nothing: counted, routine (not for on_error)
    peer:receive(line '{"jsonrpc":"2.0","result":1,"id":1}')
    assert.equal(1, peer:stats().unmatched)
    assert.equal(0, #logs)
  end)
end)

describe("one failure shape for request and notify", function()
  it("notify fails with the same jrpc.Error codes as request", function()
    local peer = capture()
    jrpc.link(peer):set_busy("queue full")
    local ok, err = peer:notify("n", {})
    assert.is_nil(ok)
    assert.same({ code = "busy", message = "queue full" }, err)
    assert.equal("jrpc error busy: queue full", tostring(err))
    local _, rerr = peer:request("m", {}, nil, function() end)
    assert.same(err, rerr)
  end)
end)

describe("end of input", function()
  it("lets a handler waiting on our request answer: the request settles closed first", function()
    local peer, out = capture{ methods = {
      ask = function(_, ctx)
        local _, err = ctx.peer:request("client/thing", {})
        return "asked: " .. err.code
      end,
    } }
    peer:receive(line '{"jsonrpc":"2.0","method":"ask","id":1}')
    local closed = false
    assert.is_true(jrpc.link(peer):finish("end of input", function() closed = true end))
    assert.is_true(closed)
    assert.same({ line '{"jsonrpc":"2.0","method":"client/thing","params":{},"id":1}',
      line '{"jsonrpc":"2.0","result":"asked: closed","id":1}' }, out)
  end)

  it("waits for a handler waiting on something else, and closes once it answers", function()
    local wake
    local peer, out = capture{ methods = {
      later = function()
        local co = coroutine.running()
        wake = function() require("jrpc.workers").wake(co, print) end
        require("jrpc.workers").wait()
        return "done later"
      end,
    } }
    peer:receive(line '{"jsonrpc":"2.0","method":"later","id":7}')
    local closed = false
    assert.is_false(jrpc.link(peer):finish("end of input", function() closed = true end))
    assert.is_false(closed)
    assert.is_false(peer:closed())
    wake()
    assert.same({ line '{"jsonrpc":"2.0","result":"done later","id":7}' }, out)
    assert.is_true(closed)
    assert.is_true(peer:closed())
  end)
end)

describe("null params", function()
  it("nil and jrpc.null mean no params when sending", function()
    local peer, out = capture{ profile = "lsp" }
    peer:request("shutdown", jrpc.null, nil, function() end)
    peer:request("shutdown", nil, nil, function() end)
    assert.is_true(peer:notify("exit", jrpc.null))
    local function frame(json) return "Content-Length: " .. #json .. "\r\n\r\n" .. json end
    assert.same({ frame '{"jsonrpc":"2.0","method":"shutdown","id":1}',
      frame '{"jsonrpc":"2.0","method":"shutdown","id":2}',
      frame '{"jsonrpc":"2.0","method":"exit"}' }, out)
  end)

  it("an incoming null params is absent in profile lsp, -32600 in jsonrpc", function()
    local seen = "unset"
    local methods = { shutdown = function(p) seen = p; return jrpc.null end }
    local lsp, lsp_out = capture{ profile = "lsp", framing = "ndjson", methods = methods }
    lsp:receive(line '{"jsonrpc":"2.0","method":"shutdown","params":null,"id":1}')
    assert.is_nil(seen)
    assert.same({ line '{"jsonrpc":"2.0","result":null,"id":1}' }, lsp_out)
    local plain, plain_out = capture{ methods = methods }
    plain:receive(line '{"jsonrpc":"2.0","method":"shutdown","params":null,"id":1}')
    assert.same({ line '{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request"},"id":1}' }, plain_out)
  end)
end)
