-- link:fail(id, err): a transport settles one request with the error its
-- exchange ended in; nothing is sent to the other side.
local jrpc = require "jrpc"
local errors = require "jrpc.errors"

describe("link:fail", function()
  it("settles the request with the error given and sends no cancel", function()
    local out = {}
    local peer = jrpc.peer{ send = function(b) out[#out + 1] = b end }
    local got
    local id = peer:request("slow", nil, nil, function(err, result) got = { err, result } end)
    assert.are.equal(1, #out)
    assert.is_true(jrpc.link(peer):fail(id, errors.new("http", "connection reset")))
    assert.are.equal("http", got[1].code)
    assert.are.equal("connection reset", got[1].message)
    assert.is_nil(got[2])
    assert.are.equal(1, #out)  -- no cancel notification
    assert.are.equal(0, peer:stats().pending)
    assert.is_false(jrpc.link(peer):fail(id, errors.new("http", "again")))
    -- a late reply is dropped as unmatched
    peer:receive('{"jsonrpc":"2.0","result":1,"id":' .. id .. '}\n')
    assert.are.equal("connection reset", got[1].message)
  end)

  it("refuses an error that is not a jrpc.Error", function()
    local peer = jrpc.peer{ send = function() end }
    local ok, err = pcall(function()
      local r = jrpc.link(peer):fail(1, "oops")
      return r
    end)
    assert.is_false(ok)
    assert.matches("peer_fail_spec.lua:%d+: fail: err must be a jrpc.Error %(jrpc.errors.new%)$", err)
  end)
end)
