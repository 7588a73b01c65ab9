-- Handlers that wait in the scheduler that runs jrpc (here cqueues, a real
-- one): a yield that is not jrpc's passes up from the handler's worker to
-- the coroutine that called peer:receive, and back down, so the handler
-- waits there while the peer goes on answering other reads.
local cqueues = require "cqueues"

local support = dofile("spec/peer_support.lua")
local capture, line = support.capture, support.line

local function request(method, id, params)
  return line(('{"jsonrpc":"2.0","method":"%s","params":%s,"id":%s}'):format(method, params or "[]", id))
end

describe("a handler waiting in the scheduler that runs the read (cqueues)", function()
  it("sleeps there while another read is answered, then answers", function()
    local peer, out, logs = capture{ methods = {
      nap = function(p, ctx)
        cqueues.sleep(p[1])
        return "rested " .. ctx:id_json()
      end,
      ping = function() return "pong" end,
    } }
    local cq = cqueues.new()
    cq:wrap(function() peer:receive(request("nap", 1, "[0.3]")) end)
    cq:wrap(function()
      cqueues.sleep(0.02)
      peer:receive(request("ping", 2))
    end)
    assert(cq:loop())
    assert.same({ line '{"jsonrpc":"2.0","result":"pong","id":2}', line '{"jsonrpc":"2.0","result":"rested 1","id":1}' },
      out)
    assert.same({}, logs)
    assert.equal(0, peer:stats().in_flight)
  end)

  it("may wait for jrpc and for the scheduler in one handler, and raise after", function()
    local peer, out, logs
    peer, out, logs = capture{ methods = {
      both = function()
        local name = peer:request("name", nil)  -- jrpc's wait
        cqueues.sleep(0.02)                        -- the scheduler's
        if name == "boom" then error("after both") end
        return "hello " .. name
      end,
    } }
    local cq = cqueues.new()
    cq:wrap(function()
      peer:receive(request("both", 1) .. request("both", 2))
      peer:receive(line '{"jsonrpc":"2.0","result":"lua","id":1}' .. line '{"jsonrpc":"2.0","result":"boom","id":2}')
    end)
    assert(cq:loop())
    local all = table.concat(out)
    assert.truthy(all:find('{"jsonrpc":"2.0","result":"hello lua","id":1}', 1, true), all)
    assert.truthy(all:find('{"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error"},"id":2}', 1, true), all)
    assert.equal(1, #logs)
    assert.truthy(logs[1]:find("after both", 1, true), logs[1])
    assert.equal(0, peer:stats().in_flight)
  end)

  it("outside any coroutine, a foreign yield is still the handler's failure", function()
    -- (cqueues.sleep outside a controller blocks rather than yields)
    local peer, out, logs = capture{ methods = { nap = function() coroutine.yield("another scheduler's") end } }
    peer:receive(request("nap", 1))
    assert.same({ line '{"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error"},"id":1}' }, out)
    assert.equal(1, #logs)
    assert.truthy(logs[1]:find("yielded to another scheduler", 1, true), logs[1])
  end)
end)
