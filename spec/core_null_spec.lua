-- jrpc.core: extra null values (core.add_null) and what JSON null decodes
-- to (codec option `null`, core.decode's third argument), as Neovim needs
-- for vim.NIL. The stand-in for vim.NIL is a userdata of our own (a codec:
-- any full userdata will do), so this runs under plain Lua 5.4 and LuaJIT.
local core = require "jrpc.core"

local function fake_nil()
  return core.codec{}
end

describe("core.add_null", function()
  it("makes the encoder write a registered userdata as null", function()
    local NIL = fake_nil()
    local ok, msg = core.encode{ processId = NIL }
    assert.is_nil(ok)
    assert.are.equal("cannot encode a userdata", msg)
    core.add_null(NIL)
    assert.are.equal('{"processId":null}', core.encode{ processId = NIL })
    assert.are.equal("[1,null,null]", core.encode{ 1, NIL, core.null })
    assert.are.equal("null", core.encode(NIL))
  end)

  it("is used by the codec's writers too (params, results, error data)", function()
    local NIL = fake_nil()
    core.add_null(NIL)
    local c = core.codec{}
    assert.are.equal('{"jsonrpc":"2.0","method":"initialize","params":{"processId":null},"id":1}\n',
      c:request("1", "initialize", { processId = NIL }))
    assert.are.equal('{"jsonrpc":"2.0","result":[null],"id":1}\n', c:result("1", { NIL }))
    assert.are.equal('{"jsonrpc":"2.0","error":{"code":1,"message":"m","data":null},"id":1}\n',
      c:error("1", 1, "m", NIL))
  end)

  it("leaves other userdata alone", function()
    core.add_null(fake_nil())
    local ok, msg = core.encode{ fake_nil() }
    assert.is_nil(ok)
    assert.are.equal("cannot encode a userdata", msg)
  end)

  it("raises for a value that is not a userdata", function()
    assert.has_error(function() core.add_null({}) end)
    assert.has_error(function() core.add_null("null") end)
    assert.has_error(function() core.add_null() end)
  end)
end)

describe("decoding null", function()
  it("gives core.null by default", function()
    assert.are.equal(core.null, core.decode("null"))
    assert.are.equal(core.null, core.decode("[null]")[1])
  end)

  it("gives core.decode's third argument when given", function()
    local NIL = fake_nil()
    assert.are.equal(NIL, core.decode("null", nil, NIL))
    local v = core.decode('{"a":null,"b":[1,null,{"c":null}]}', 10, NIL)
    assert.are.equal(NIL, v.a)
    assert.are.equal(NIL, v.b[2])
    assert.are.equal(NIL, v.b[3].c)
    assert.are.equal(1, v.b[1])
    assert.are.equal(core.null, core.decode("null", nil, nil))
  end)

  it("gives the codec's option null in params, results and error data", function()
    local NIL = fake_nil()
    local c = core.codec{ null = NIL }
    local kind, method, params = c:next('{"jsonrpc":"2.0","method":"m","params":{"x":null,"y":[null]}}\n')
    assert.are.equal("notification", kind)
    assert.are.equal("m", method)
    assert.are.equal(NIL, params.x)
    assert.are.equal(NIL, params.y[1])
    local k2, rawid, result = c:next('{"jsonrpc":"2.0","result":null,"id":7}\n')
    assert.are.equal("result", k2)
    assert.are.equal(7, rawid)
    assert.are.equal(NIL, result)
    local k3, _, err = c:next('{"jsonrpc":"2.0","error":{"code":-1,"message":"m","data":null},"id":8}\n')
    assert.are.equal("error", k3)
    assert.are.equal(NIL, err.data)
  end)

  it("keeps a null id as core.null (ids are envelope, not values)", function()
    local NIL = fake_nil()
    local c = core.codec{ null = NIL }
    local kind, method, params, id, rawid = c:next('{"jsonrpc":"2.0","method":"m","params":[null],"id":null}\n')
    assert.are.equal("request", kind)
    assert.are.equal("m", method)
    assert.are.equal(NIL, params[1])
    assert.are.equal(core.null, id)
    assert.are.equal("null", rawid)
  end)

  it("gives null in batch members too", function()
    local NIL = fake_nil()
    local c = core.codec{ null = NIL }
    local kind, items = c:next('[{"jsonrpc":"2.0","method":"m","params":[null]}]\n')
    assert.are.equal("batch", kind)
    assert.are.equal(NIL, items[1][3][1])
  end)

  it("option null = core.null or nil is the default", function()
    local a = core.codec{ null = core.null }
    local _, _, params = a:next('{"jsonrpc":"2.0","method":"m","params":[null]}\n')
    assert.are.equal(core.null, params[1])
  end)

  it("a codec's null survives garbage collection of other codecs", function()
    local NIL = fake_nil()
    local c = core.codec{ null = NIL }
    for _ = 1, 100 do core.codec{ null = fake_nil() } end
    collectgarbage(); collectgarbage()
    local _, _, params = c:next('{"jsonrpc":"2.0","method":"m","params":[null]}\n')
    assert.are.equal(NIL, params[1])
  end)
end)
