-- jrpc.core: Neovim's convention for empty tables, the codec option
-- `empty_dict` (and core.encode's third, core.decode's fourth argument):
-- a decoded empty object gets that metatable (vim.empty_dict()'s), a table
-- with it encodes as an object, and an empty table with no marker encodes
-- as an array, as vim.json does. The stand-in for Neovim's metatable is a
-- table of our own, so this runs under plain Lua 5.4 and LuaJIT.
local jrpc = require "jrpc"
local core = require "jrpc.core"

local MT = {}
local function dict(t) return setmetatable(t or {}, MT) end

describe("codec option empty_dict: encoding", function()
  local c = core.codec{ empty_dict = MT }

  it("writes an unmarked empty table as [] and a marked one as {}", function()
    assert.are.equal('{"jsonrpc":"2.0","method":"textDocument/codeAction","params":'
      .. '{"context":{"diagnostics":[]}},"id":1}\n',
      c:request("1", "textDocument/codeAction", { context = { diagnostics = {} } }))
    assert.are.equal('{"jsonrpc":"2.0","method":"m","params":[{"settings":{}}],"id":2}\n',
      c:request("2", "m", { { settings = dict() } }))
    assert.are.equal('{"jsonrpc":"2.0","result":[],"id":7}\n', c:result("7", {}))
    assert.are.equal('{"jsonrpc":"2.0","result":{},"id":7}\n', c:result("7", dict()))
    assert.are.equal('{"jsonrpc":"2.0","method":"initialized","params":{}}\n', c:notification("initialized", dict()))
    assert.are.equal('{"jsonrpc":"2.0","method":"n","params":[]}\n', c:notification("n", {}))
    assert.are.equal('{"jsonrpc":"2.0","error":{"code":1,"message":"m","data":[[],{}]},"id":1}\n',
      c:error("1", 1, "m", { {}, dict() }))
  end)

  it("keeps jrpc's own markers and what is not empty", function()
    assert.are.equal('{"jsonrpc":"2.0","result":[{},[],[1],{"a":1},{"k":"v"}],"id":1}\n',
      c:result("1", { jrpc.object(), jrpc.array(), { 1 }, { a = 1 }, dict{ k = "v" } }))
  end)

  it("refuses a marked table with integer keys, as for jrpc.object", function()
    local ok, msg = c:result("1", dict{ 1, 2 })
    assert.is_nil(ok)
    assert.are.equal("cannot encode a table with mixed or non-string keys", msg)
  end)

  it("reads the writers' last argument (bare) as before", function()
    assert.are.equal('{"jsonrpc":"2.0","result":[],"id":1}', c:result("1", {}, true))
    assert.are.equal('{"jsonrpc":"2.0","method":"m","params":[],"id":2}', c:request("2", "m", {}, true))
    assert.are.equal('{"jsonrpc":"2.0","method":"n","params":[]}', c:notification("n", {}, true))
    assert.are.equal('{"jsonrpc":"2.0","error":{"code":1,"message":"m","data":[]},"id":3}',
      c:error("3", 1, "m", {}, true))
    assert.are.equal('{"jsonrpc":"2.0","error":{"code":1,"message":"m"},"id":4}', c:error("4", 1, "m", nil, true))
    assert.are.equal('{"jsonrpc":"2.0","method":"n"}\n', c:notification("n"))
  end)

  it("is the codec's own: another codec keeps jrpc's convention", function()
    local plain = core.codec{}
    assert.are.equal('{"jsonrpc":"2.0","result":{},"id":1}\n', plain:result("1", {}))
    assert.are.equal('{"jsonrpc":"2.0","result":{},"id":1}\n', plain:result("1", dict()))
  end)
end)

describe("codec option empty_dict: decoding", function()
  local function result_of(line)
    local c = core.codec{ empty_dict = MT, null = core.null }
    local kind, _, value = c:next(line)
    assert.are.equal("result", kind)
    return value, c
  end

  it("marks every decoded empty object, on each of the decoder's paths", function()
    -- a flat result, a nested one (cJSON's tree), an array of objects
    assert.are.equal(MT, getmetatable(result_of('{"jsonrpc":"2.0","result":{},"id":1}\n')))
    assert.are.equal(MT, getmetatable(result_of('{"jsonrpc":"2.0","result":{ },"id":1}\n')))
    local v = result_of('{"jsonrpc":"2.0","result":{"capabilities":{"colorProvider":{},'
      .. '"list":[],"hover":true}},"id":1}\n')
    assert.are.equal(MT, getmetatable(v.capabilities.colorProvider))
    assert.are.equal(core.array_mt, getmetatable(v.capabilities.list))
    assert.is_nil(getmetatable(v.capabilities))   -- not empty: a plain table, as vim.json gives
    assert.is_nil(getmetatable(v))
    v = result_of('{"jsonrpc":"2.0","result":[{},{"a":{}},{"b":"\\u00e9"}],"id":1}\n')
    assert.are.equal(MT, getmetatable(v[1]))
    assert.are.equal(MT, getmetatable(v[2].a))
    assert.is_nil(getmetatable(v[3]))
  end)

  it("marks empty params and error data; codec:decode too", function()
    local c = core.codec{ empty_dict = MT }
    local kind, _, params = c:next('{"jsonrpc":"2.0","method":"initialized","params":{}}\n')
    assert.are.equal("notification", kind)
    assert.are.equal(MT, getmetatable(params))
    local _, _, err = c:next('{"jsonrpc":"2.0","error":{"code":1,"message":"m","data":{}},"id":1}\n')
    assert.are.equal(MT, getmetatable(err.data))
    local _, _, p = c:decode('{"jsonrpc":"2.0","method":"m","params":{"x":{}},"id":1}')
    assert.are.equal(MT, getmetatable(p.x))
  end)

  it("gives back exactly what it read when it writes the value again", function()
    local text = '{"capabilities":{"colorProvider":{},"triggerCharacters":[],"n":{"a":[{}]}}}'
    local v, c = result_of('{"jsonrpc":"2.0","result":' .. text .. ',"id":1}\n')
    local plain = core.codec{}
    local _, _, pv = plain:next('{"jsonrpc":"2.0","result":' .. text .. ',"id":1}\n')
    local order = core.encode(pv)  -- the key order the encoder gives this table shape
    assert.are.equal('{"jsonrpc":"2.0","result":' .. order .. ',"id":2}\n', c:result("2", v))
    assert.truthy(order:find('"colorProvider":{}', 1, true))
    assert.truthy(order:find('"triggerCharacters":[]', 1, true))
    assert.truthy(order:find('"a":[{}]', 1, true))
  end)

  it("leaves decoded objects unmarked without the option", function()
    local _, _, v = core.codec{}:next('{"jsonrpc":"2.0","result":{"a":{}},"id":1}\n')
    assert.is_nil(getmetatable(v.a))
  end)

  it("counts a marked empty object as an object for declared params", function()
    local c = core.codec{ empty_dict = MT }
    c:shapes{ m = jrpc.params{ "opts:object" }:shape() }
    local kind, _, p = c:next('{"jsonrpc":"2.0","method":"m","params":{"opts":{}},"id":1}\n')
    assert.are.equal("checked", kind)
    assert.are.equal(MT, getmetatable(p.opts))
    c:shapes{ m = jrpc.params{ "opts:array" }:shape() }
    kind = c:next('{"jsonrpc":"2.0","method":"m","params":{"opts":{}},"id":2}\n')
    assert.are.equal("request", kind)
  end)
end)

describe("codec option empty_dict: checked", function()
  it("must be a table", function()
    assert.has_error(function() core.codec{ empty_dict = true } end,
      "option 'empty_dict' must be a table (a metatable), not a boolean")
    assert.has_error(function() core.codec{ empty_dict = "nvim" } end,
      "option 'empty_dict' must be a table (a metatable), not a string")
    assert.has_error(function() core.codec{ empty_dicts = MT } end, "unknown codec option 'empty_dicts'")
  end)
end)

describe("core.encode and core.decode with empty_dict", function()
  it("follow the same convention", function()
    assert.are.equal("[]", core.encode({}, nil, MT))
    assert.are.equal("{}", core.encode(dict(), nil, MT))
    assert.are.equal('[[],{},{"a":[]}]', core.encode({ {}, dict(), { a = {} } }, 10, MT))
    assert.are.equal("{}", core.encode({}))
    local v = core.decode('{"a":{},"b":[]}', nil, nil, MT)
    assert.are.equal(MT, getmetatable(v.a))
    assert.are.equal(core.array_mt, getmetatable(v.b))
    assert.are.equal(MT, getmetatable(core.decode("{}", nil, nil, MT)))
    assert.is_nil(getmetatable(core.decode("{}")))
  end)

  it("raise for an empty_dict that is not a table", function()
    assert.has_error(function() core.encode({}, nil, "x") end)
    assert.has_error(function() core.decode("{}", nil, nil, 1) end)
  end)
end)
