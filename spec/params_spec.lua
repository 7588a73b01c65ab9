-- jrpc.params: declared params, positional or named, handed over named.
local jrpc = require "jrpc"

local decode = jrpc.decode

-- check(decl, params as JSON text) → named table or nil, msg
local function check(specs, json)
  local params = json and assert(decode(json))
  return jrpc.params(specs):check(params)
end

describe("jrpc.params", function()
  local subtract = { "minuend:number", "subtrahend:number", "note:string?" }

  it("names positional params", function()
    assert.same({ minuend = 42, subtrahend = 23 }, check(subtract, "[42, 23]"))
    assert.same({ minuend = 42, subtrahend = 23, note = "n" }, check(subtract, '[42, 23, "n"]'))
  end)

  it("passes named params through, in a new table", function()
    local params = decode('{"subtrahend": 23, "minuend": 42}')
    local named = jrpc.params(subtract):check(params)
    assert.same({ minuend = 42, subtrahend = 23 }, named)
    assert.are_not.equal(params, named)
  end)

  local failures = {
    { "[42]", 'Invalid params: "subtrahend" is required' },
    { '{"minuend": 42}', 'Invalid params: "subtrahend" is required' },
    { '[42, "23"]', 'Invalid params: "subtrahend" must be a number' },
    { '{"minuend": 42, "subtrahend": true}', 'Invalid params: "subtrahend" must be a number' },
    { '[1, 2, "n", 4]', "Invalid params: expected at most 3 params, got 4" },
    { '{"minuend": 1, "subtrahend": 2, "extra": 3}', 'Invalid params: unknown param "extra"' },
    { '[1, 2, 3]', 'Invalid params: "note" must be a string' },
    { '[null, 2]', 'Invalid params: "minuend" must be a number' },
    { nil, 'Invalid params: "minuend" is required' },
    { '"42, 23"', "Invalid params: expected an array or an object" },
    { "true", "Invalid params: expected an array or an object" },
  }
  for _, f in ipairs(failures) do
    it("rejects " .. tostring(f[1]) .. " with " .. f[2], function()
      local named, msg = check(subtract, f[1])
      assert.is_nil(named)
      assert.equal(f[2], msg)
    end)
  end

  it("treats null as absent for an optional param", function()
    assert.same({ minuend = 1, subtrahend = 2 }, check(subtract, "[1, 2, null]"))
    assert.same({ minuend = 1, subtrahend = 2 }, check(subtract, '{"minuend":1,"subtrahend":2,"note":null}'))
  end)

  it("accepts absent params when nothing is required", function()
    assert.same({}, check({ "x:any?" }, nil))
    assert.same({}, check({ "x:any?" }, "[]"))
    assert.same({}, check({ "x:any?" }, "{}"))
  end)

  local types = {
    { "integer", "[3]", true }, { "integer", "[3.5]", false }, { "integer", '["3"]', false },
    { "number", "[3.5]", true },
    { "string", '[""]', true }, { "string", "[1]", false },
    { "boolean", "[false]", true }, { "boolean", "[0]", false },
    { "table", "[[1]]", true }, { "table", '[{"a":1}]', true }, { "table", '["x"]', false },
    { "array", "[[1]]", true }, { "array", "[[]]", true }, { "array", '[{"a":1}]', false },
    { "array", "[{}]", false },
    { "object", '[{"a":1}]', true }, { "object", "[{}]", true }, { "object", "[[1]]", false },
    { "object", "[[]]", false },
    { "any", "[null]", true }, { "any", '[{"a":[1]}]', true },
  }
  for _, t in ipairs(types) do
    local type_name, json, ok = t[1], t[2], t[3]
    it(type_name .. (ok and " accepts " or " rejects ") .. json, function()
      local named, msg = check({ "v:" .. type_name }, json)
      if ok then
        assert.is_table(named, msg)
        assert.is_not_nil(named.v)
      else
        assert.is_nil(named)
        assert.equal('Invalid params: "v" must be ' .. (type_name:match("^[aeiou]") and "an " or "a ")
          .. type_name, msg)
      end
    end)
  end

  it("types an undeclared type as any", function()
    assert.same({ v = "x" }, check({ "v" }, '["x"]'))
  end)

  it("raises on bad declarations", function()
    assert.has_error(function() jrpc.params{ "x:float" } end)
    assert.has_error(function() jrpc.params{ "x:number", "x:string" } end)
    assert.has_error(function() jrpc.params{ 1 } end)
    assert.has_error(function() jrpc.params("x:number") end)
  end)

  -- the checker is compiled from the declaration (Lua source with each
  -- name as a quoted literal): names with the punctuation a name may hold
  it("handles names with every character a name may hold", function()
    local specs = { "a-b:number", "$ref:string?", "x.y/z:integer", "_k" }
    assert.same({ ["a-b"] = 1, ["$ref"] = "r", ["x.y/z"] = 3, _k = false },
      check(specs, '[1, "r", 3, false]'))
    assert.same({ ["a-b"] = 1, ["x.y/z"] = 3, _k = jrpc.null },
      check(specs, '{"x.y/z": 3, "a-b": 1, "_k": null}'))
    local named, msg = check(specs, '{"a-b": 1, "x.y/z": 3.5, "_k": 1}')
    assert.is_nil(named)
    assert.equal('Invalid params: "x.y/z" must be an integer', msg)
  end)

  it("takes params given as plain Lua tables as well as decoded ones", function()
    local decl = jrpc.params(subtract)
    assert.same({ minuend = 5, subtrahend = 2 }, decl:check({ 5, 2 }))
    assert.same({ minuend = 5, subtrahend = 2 }, decl:check({ subtrahend = 2, minuend = 5 }))
    assert.same({ minuend = 5, subtrahend = 2 }, decl:check(jrpc.array{ 5, 2 }))
    assert.same({}, jrpc.params{ "x:any?" }:check({}))
  end)

  it("declares up to MAX_PARAMS params, and raises past it", function()
    local max = require("jrpc.params").MAX_PARAMS
    assert.equal(100, max)
    local specs, values, want = {}, {}, {}
    for i = 1, max do specs[i], values[i], want["p" .. i] = "p" .. i .. ":integer", i, i end
    assert.same(want, jrpc.params(specs):check(values))
    local _, msg = jrpc.params(specs):check({ p1 = 1 })
    assert.equal('Invalid params: "p2" is required', msg)
    specs[max + 1] = "one_more"
    assert.has_error(function() jrpc.params(specs) end, "jrpc.params: at most 100 params, got 101")
  end)

  it("answers -32602 through a peer, naming the param", function()
    local out = {}
    local peer = jrpc.peer{ send = function(b) out[#out + 1] = b end }
    peer:method("subtract", function(p) return p.minuend - p.subtrahend end, jrpc.params(subtract))
    peer:receive('{"jsonrpc":"2.0","method":"subtract","params":{"minuend":1,"subtrahend":"2"},"id":1}\n'
      .. '{"jsonrpc":"2.0","method":"subtract","params":{"minuend":1,"subtrahend":2},"id":2}\n')
    assert.equal('{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params: \\"subtrahend\\" must be a number"},"id":1}\n'
      .. '{"jsonrpc":"2.0","result":-1,"id":2}\n', out[1])
  end)

  -- the codec checks a declared handler's params as it decodes them
  -- (src/shape.c): those that fit reach the handler with no wrapper
  -- between (a call, not the wrapper's tail call); the others go through
  -- the wrapper, which answers -32602 as before
  it("serves declared handlers from the codec's check, params that do not fit through the wrapper", function()
    local out, seen = {}, {}
    local peer = jrpc.peer{ send = function(b) out[#out + 1] = b end }
    local function note(p)
      -- LuaJIT's debug.getinfo has no "t" (it raises)
      seen[#seen + 1] = rawget(_G, "jit") == nil and debug.getinfo(1, "t").istailcall
      return p.minuend - p.subtrahend
    end
    peer:method("subtract", note, jrpc.params(subtract))
    peer:method("with_ctx", function(p, ctx)
      seen[#seen + 1] = rawget(_G, "jit") == nil and debug.getinfo(1, "t").istailcall
      return ctx.method .. ":" .. (p.minuend - p.subtrahend)
    end, jrpc.params(subtract))
    peer:receive('{"jsonrpc":"2.0","method":"subtract","params":[5,3],"id":1}\n'
      .. '{"jsonrpc":"2.0","method":"subtract","params":[5,"3"],"id":2}\n'
      .. '{"jsonrpc":"2.0","method":"subtract","params":{"subtrahend":1,"minuend":5},"id":3}\n'
      .. '{"jsonrpc":"2.0","method":"with_ctx","params":[5,3],"id":4}\n'
      .. '[{"jsonrpc":"2.0","method":"subtract","params":[9,3],"id":5},'
      .. '{"jsonrpc":"2.0","method":"subtract","params":[9],"id":6}]\n'
      .. '{"jsonrpc":"2.0","method":"with_ctx","params":{"minuend":5,"subtrahend":3,"x":1},"id":7}\n')
    assert.equal('{"jsonrpc":"2.0","result":2,"id":1}\n'
      .. '{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params: \\"subtrahend\\" must be a number"},"id":2}\n'
      .. '{"jsonrpc":"2.0","result":4,"id":3}\n'
      .. '{"jsonrpc":"2.0","result":"with_ctx:2","id":4}\n'
      .. '[{"jsonrpc":"2.0","result":6,"id":5},'
      .. '{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params: \\"subtrahend\\" is required"},"id":6}]\n'
      .. '{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params: unknown param \\"x\\""},"id":7}\n',
      table.concat(out))
    if rawget(_G, "jit") == nil then
      -- ids 1, 3, 4 and 5 (a batch member) from the codec's check; on
      -- LuaJIT (whose compiled checker is cheaper) all through the wrapper
      assert.same({ false, false, false, false }, seen)
    end
    assert.equal(4, #seen)
  end)

  it("forgets a method's declaration when its handler is replaced", function()
    local out, got = {}, {}
    local peer = jrpc.peer{ send = function(b) out[#out + 1] = b end }
    peer:method("m", function(p) return p.minuend end, jrpc.params(subtract))
    peer:receive('{"jsonrpc":"2.0","method":"m","params":[7,1],"id":1}\n')
    peer:method("m", function(p) got[#got + 1] = p; return #p end)
    peer:receive('{"jsonrpc":"2.0","method":"m","params":[7,1],"id":2}\n')
    assert.equal('{"jsonrpc":"2.0","result":7,"id":1}\n{"jsonrpc":"2.0","result":2,"id":2}\n',
      table.concat(out))
    assert.equal(jrpc.core.array_mt, getmetatable(got[1]))
  end)
end)
