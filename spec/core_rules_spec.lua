-- One rule each for: integers anywhere in a value, shortest float text,
-- \u0000 per member, marker metatables per state, params = null, and the
-- max_depth a codec accepts (issue 7, C side).
local core = require "jrpc.core"

local is_jit = rawget(_G, "jit") ~= nil
local mtype = math.type or function() return "float" end

describe("core rules: integers", function()
  it("an integer token that fits 64 bits is an exact integer anywhere in a value", function()
    if is_jit then return end  -- LuaJIT has only doubles
    local v = core.decode('[9007199254740993,{"a":-9223372036854775808,"b":[9223372036854775807]},"9007199254740993",9007199254740993]')
    assert.are.equal("integer", mtype(v[1]))
    assert.are.equal(9007199254740993, v[1])
    assert.are.equal(math.mininteger, v[2].a)
    assert.are.equal(math.maxinteger, v[2].b[1])
    assert.are.equal("9007199254740993", v[3])
    assert.are.equal(9007199254740993, v[4])
    local c = core.codec{}
    c:feed('{"jsonrpc":"2.0","method":"m","params":{"x":1.5,"n":[1e300,18446744073709551616,-9007199254740993]},"id":1}\n')
    local _, _, params = c:next()
    assert.are.equal(1.5, params.x)
    assert.are.equal("float", mtype(params.n[1]))
    assert.are.equal("float", mtype(params.n[2]))
    assert.are.equal(-9007199254740993, params.n[3])
    assert.are.equal("integer", mtype(params.n[3]))
  end)

  it("integral floats within 2^53 are integers, others stay floats", function()
    if is_jit then return end
    local v = core.decode("[1.0,2e3,1e20,1e16]")
    assert.are.same({"integer", "integer", "float", "float"},
      {mtype(v[1]), mtype(v[2]), mtype(v[3]), mtype(v[4])})
  end)
end)

describe("core rules: floats", function()
  it("are written with the shortest text that reads back exactly", function()
    assert.are.equal("0.7999999999999999", core.encode(0.1 + 0.7))
    assert.are.equal("[0.1,0.30000000000000004,1.5,1e+300]", core.encode({0.1, 0.1 + 0.2, 1.5, 1e300}))
    assert.are.equal(0.1 + 0.7, core.decode(core.encode(0.1 + 0.7)))
  end)
end)

describe("core rules: \\u0000", function()
  it("in the id: the request is decoded, the exact id echoed", function()
    local c = core.codec{}
    c:feed('{"jsonrpc":"2.0","method":"m","params":[1],"id":"a\\u0000b"}\n')
    assert.are.same({"request", "m", 1, "a\0b", '"a\\u0000b"'},
      (function(k, m, p, id, raw) return {k, m, p[1], id, raw} end)(c:next()))
    assert.are.equal('{"jsonrpc":"2.0","result":1,"id":"a\\u0000b"}\n', c:result('"a\\u0000b"', 1))
  end)

  it("in the method of a notification is kept", function()
    local c = core.codec{}
    c:feed('{"jsonrpc":"2.0","method":"m\\u0000"}\n')
    assert.are.same({"notification", "m\0"}, {c:next()})
  end)

  it("in params is still refused, and blamed on params", function()
    local c = core.codec{}
    c:feed('{"jsonrpc":"2.0","method":"m","params":["\\u0000"],"id":"a\\u0000"}\n')
    local kind, code, _, rawid, reply, detail = c:next()
    assert.are.same({"invalid", -32600, '"a\\u0000"', true, "strings holding \\u0000 are not supported in params"},
      {kind, code, rawid, reply, detail})
  end)

  it("in a response id: the response is decoded", function()
    local c = core.codec{}
    c:feed('{"jsonrpc":"2.0","result":[1],"id":"x\\u0000"}\n')
    local kind, rawid, result, id = c:next()
    assert.are.same({"result", '"x\\u0000"', 1, "x\0"}, {kind, rawid, result[1], id})
  end)
end)

describe("core rules: marker metatables", function()
  it("are the same tables after the core is loaded a second time in a state", function()
    local first = package.loaded["jrpc.core"]
    package.loaded["jrpc.core"] = nil
    local second = require "jrpc.core"
    package.loaded["jrpc.core"] = first
    assert.are_not.equal(first, second)
    assert.are.equal(first.array_mt, second.array_mt)
    assert.are.equal(first.object_mt, second.object_mt)
    assert.are.equal("[]", second.encode(setmetatable({}, first.array_mt)))
    assert.are.equal("[]", first.encode(setmetatable({}, second.array_mt)))
    assert.are.equal("{}", second.encode(setmetatable({}, first.object_mt)))
    assert.are.equal(first.array_mt, getmetatable(second.decode("[1]")))
    local c = second.codec{}
    assert.are.equal('{"jsonrpc":"2.0","result":[],"id":1}\n', c:result("1", setmetatable({}, first.array_mt)))
  end)
end)

describe("core rules: params = null", function()
  it("writers omit params for nil and core.null", function()
    local c = core.codec{}
    assert.are.equal('{"jsonrpc":"2.0","method":"m","id":1}\n', c:request("1", "m", core.null))
    assert.are.equal('{"jsonrpc":"2.0","method":"m","id":1}\n', c:request("1", "m", nil))
    assert.are.equal('{"jsonrpc":"2.0","method":"n"}\n', c:notification("n", core.null))
    assert.are.equal('{"jsonrpc":"2.0","method":"n"}', c:notification("n", core.null, true))
  end)

  it("incoming params null: absent in profile lsp, Invalid Request otherwise", function()
    local text = '{"jsonrpc":"2.0","method":"shutdown","params":null,"id":3}\n'
    local c = core.codec{profile = "lsp"}
    c:feed(text)
    assert.are.same({"request", "shutdown", nil, 3, 3}, {c:next()})
    for _, profile in ipairs({"jsonrpc", "mcp"}) do
      c = core.codec{profile = profile}
      c:feed(text)
      local kind, code, _, rawid, reply = c:next()
      assert.are.same({"invalid", -32600, "3", true}, {kind, code, rawid, reply}, profile)
    end
  end)
end)

describe("core rules: max_depth of a codec", function()
  it("is from 2 to 1000, so its own error replies can always be written", function()
    assert.has_error(function() core.codec{max_depth = 1} end,
      "option 'max_depth' must be an integer from 2 to 1000")
    local c = core.codec{max_depth = 2}
    assert.are.equal('{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request"},"id":null}\n',
      c:error("null", -32600, "Invalid Request"))
  end)
end)

describe("core rules: a closed codec", function()
  it("raises instead of allocating again", function()
    local c = core.codec{}
    c:feed("{}")
    getmetatable(c).__gc(c)
    assert.has_error(function() c:feed("x") end, "jrpc.Codec is closed")
    assert.has_error(function() c:next() end, "jrpc.Codec is closed")
    assert.has_error(function() c:result("1", 1) end, "jrpc.Codec is closed")
  end)
end)

describe("core rules: escaped envelope keys", function()
  it("name the same member as the plain key, and one escape does not leak to the next key", function()
    local c = core.codec{}
    c:feed('{"jsonrpc":"2.0","\\u006dethod":"sum","p\\u0061rams":[1,2],"id":7}\n'
      .. '{"a\\"b":0,"jsonrpc":"2.0","method":"m","id":8}\n'
      .. '{"jsonrpc":"2.0","method":"m","\\u0069d":9,"id":10}\n')
    assert.are.same({"request", "sum", {1, 2}, 7, 7}, {c:next()})
    assert.are.same({"request", "m", nil, 8, 8}, {c:next()})
    local kind, code, message, rawid, reply, detail = c:next()
    assert.are.same({"invalid", -32600, "Invalid Request", "10", true, "a member is given twice"},
      {kind, code, message, rawid, reply, detail})
  end)
end)
