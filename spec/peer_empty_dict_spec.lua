-- jrpc.peer's option empty_dict: Neovim's empty-table convention on a
-- peer's wire, both ways (what jrpc.nvim.conventions() turns on).
local jrpc = require "jrpc"

describe("jrpc.peer{ empty_dict = mt }", function()
  it("sends an unmarked empty table as [] and a marked one as {}; decodes empty objects marked", function()
    local mt = {}
    local out = {}
    local peer = jrpc.peer{ send = function(b) out[#out + 1] = b end, empty_dict = mt }
    local got
    peer:request("textDocument/codeAction", { context = { diagnostics = {} } },
      nil, function(err, result) got = { err, result } end)
    peer:request("workspace/symbol", { options = setmetatable({}, mt) }, nil, function() end)
    assert.same({ '{"jsonrpc":"2.0","method":"textDocument/codeAction","params":{"context":{"diagnostics":[]}},"id":1}\n',
      '{"jsonrpc":"2.0","method":"workspace/symbol","params":{"options":{}},"id":2}\n' }, out)
    peer:receive('{"jsonrpc":"2.0","result":{"capabilities":{"colorProvider":{}},"list":[]},"id":1}\n')
    assert.is_nil(got[1])
    assert.equal(mt, getmetatable(got[2].capabilities.colorProvider))
    assert.not_equal(mt, getmetatable(got[2].list))
    assert.equal('{"colorProvider":{}}', jrpc.encode(got[2].capabilities, nil, mt))
  end)

  it("is a table or nothing", function()
    local ok, err = pcall(function() jrpc.peer{ send = print, empty_dict = true } end)
    assert.is_false(ok)
    assert.equal("spec/peer_empty_dict_spec.lua:24: jrpc.peer: option empty_dict must be a table (a metatable)", err)
  end)
end)
