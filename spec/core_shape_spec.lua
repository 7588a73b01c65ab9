-- codec:next's params shapes (src/shape.c): the codec checks a declared
-- method's params while it decodes the request. Params that fit come as
-- kind "checked", already the named table jrpc.params' checker would build;
-- any others come as kind "request", exactly as decoded, for the checker.
-- The specs below hold the codec to the checker: the same verdict and the
-- same table, for every declaration and params tried.
local jrpc = require "jrpc"
local core = require "jrpc.core"

local math_type = math.type or function(v) return type(v) == "number" and "float" or nil end

-- Deep equality that also tells 1 from 1.0, the metatables apart and
-- core.null from a missing key.
local function same(a, b)
  if type(a) ~= "table" or type(b) ~= "table" then
    return rawequal(a, b) and math_type(a) == math_type(b)
  end
  if getmetatable(a) ~= getmetatable(b) then return false end
  for k, v in pairs(a) do
    if not same(v, rawget(b, k)) then return false end
  end
  for k in pairs(b) do
    if rawget(a, k) == nil then return false end
  end
  return true
end

local function show(v)
  if v == core.null then return "null" end
  if type(v) ~= "table" then return tostring(v) .. "(" .. type(v) .. ")" end
  local keys = {}
  for k in pairs(v) do keys[#keys + 1] = tostring(k) end
  table.sort(keys)
  local parts = {}
  for i, k in ipairs(keys) do parts[i] = k .. "=" .. show(v[k] == nil and v[tonumber(k)] or v[k]) end
  return (getmetatable(v) == core.array_mt and "A{" or "{") .. table.concat(parts, ",") .. "}"
end

-- The request line for `params` (JSON text, or nil: absent).
local function request(params, id)
  return ('{"jsonrpc":"2.0","method":"m",%s"id":%d}\n')
    :format(params and ('"params":' .. params .. ",") or "", id or 1)
end

-- What the codec gives for the request with those params, with shapes.
local function next_shaped(decl, params, opts)
  local c = core.codec(opts)
  c:shapes{ m = decl:shape() }
  return c:next(request(params))
end

-- The params as a codec decodes them without shapes.
local function decoded(params, opts)
  local c = core.codec(opts)
  local kind, _, p = c:next(request(params))
  assert(kind == "request")
  return p
end

-- The codec and the checker agree on `params` for `decl`: checked when the
-- checker accepts them, with the same table; decoded as usual otherwise.
local function agree(decl, params, opts)
  local kind, method, p, id, rawid = next_shaped(decl, params, opts)
  assert.equal("m", method)
  assert.equal(1, id)
  assert.equal(1, rawid)
  local named, msg = decl:check(decoded(params, opts))
  if named then
    assert(kind == "checked", ("%s: the checker accepts it, the codec says %s"):format(params, kind))
    assert(same(named, p), ("%s: checker %s, codec %s"):format(params, show(named), show(p)))
  else
    assert(kind == "request", ("%s: the checker says %s, the codec %s"):format(params, msg, kind))
    assert(same(decoded(params, opts), p), ("%s: not as decoded: %s"):format(params, show(p)))
  end
  return kind
end

describe("codec params shapes", function()
  local subtract = jrpc.params{ "minuend:number", "subtrahend:number", "note:string?" }

  it("hands params that fit over as the named table, with kind checked", function()
    local kind, method, p, id, rawid = next_shaped(subtract, "[42, 23]")
    assert.equal("checked", kind)
    assert.equal("m", method)
    assert.same({ minuend = 42, subtrahend = 23 }, p)
    assert.is_nil(getmetatable(p))
    assert.equal(1, id)
    assert.equal(1, rawid)
    kind, method, p = next_shaped(subtract, '{"subtrahend": 23, "note": "n", "minuend": 42}')
    assert.equal("m", method)
    assert.equal("checked", kind)
    assert.same({ minuend = 42, subtrahend = 23, note = "n" }, p)
  end)

  it("hands params that do not fit over as decoded, with kind request", function()
    local kind, _, p = next_shaped(subtract, '[42, "23"]')
    assert.equal("request", kind)
    assert.equal(core.array_mt, getmetatable(p))
    assert.equal(42, p[1])
    assert.equal("23", p[2])
    assert.equal(2, #p)
  end)

  -- every case of spec/params_spec.lua, and the edges of each rule
  local cases = {
    "[42, 23]", '[42, 23, "n"]', '{"subtrahend": 23, "minuend": 42}', "[42]", '{"minuend": 42}',
    '[42, "23"]', '{"minuend": 42, "subtrahend": true}', '[1, 2, "n", 4]',
    '{"minuend": 1, "subtrahend": 2, "extra": 3}', "[1, 2, 3]", "[null, 2]", false,
    "[1, 2, null]", '{"minuend":1,"subtrahend":2,"note":null}', "[]", "{}",
    "[1.5, -2e3]", "[1e400, 2]", '[1, 2, "a\\nb\\u00e9"]', '{"minuend":1,"subtrahend":2,"note":"\\""}',
    '[1, 2, ["n"]]', '[1, 2, {"a": 1}]', '[1, [2]]', '{"minuend": [1], "subtrahend": 2}',
    '{"minuend": 1, "subtrahend": 2, "minuend": 3}', '{"minuend\\u0031": 1}',
    "[123456789012345678, 2]", "[-0, 0.0]",
  }
  for _, params in ipairs(cases) do
    it("agrees with the checker on " .. tostring(params), function()
      agree(subtract, params or nil)
    end)
  end

  local types = {
    { "integer", { "[3]", "[3.0]", "[3e2]", "[-0]", "[3.5]", '["3"]', "[1e400]", "[9007199254740993]" } },
    { "number", { "[3.5]", "[3]", '["3"]', "[true]" } },
    { "string", { '[""]', "[1]", '["\\u0041"]' } },
    { "boolean", { "[false]", "[true]", "[0]", "[null]" } },
    { "table", { "[[1]]", '[{"a":1}]', '["x"]', "[[]]", "[{}]" } },
    { "array", { "[[1]]", "[[]]", '[{"a":1}]', "[{}]", "[[[1],{}]]" } },
    { "object", { '[{"a":1}]', "[{}]", "[[1]]", "[[]]", '[{"1":1}]' } },
    { "any", { "[null]", '[{"a":[1]}]', "[]", '{"v":null}' } },
  }
  for _, t in ipairs(types) do
    for _, optional in ipairs({ "", "?" }) do
      local decl = jrpc.params{ "v:" .. t[1] .. optional }
      for _, params in ipairs(t[2]) do
        it(t[1] .. optional .. " agrees with the checker on " .. params, function()
          agree(decl, params)
        end)
      end
    end
  end

  it("keeps a null for a required param of type any, drops it for an optional one", function()
    local _, _, p = next_shaped(jrpc.params{ "a", "b?" }, "[null, null]")
    assert.equal(core.null, p.a)
    assert.is_nil(p.b)
    local kind
    kind, _, p = next_shaped(jrpc.params{ "a", "b?" }, '{"a": null, "b": null}')
    assert.equal("checked", kind)
    assert.equal(core.null, p.a)
    assert.is_nil(rawget(p, "b"))
  end)

  it("counts the codec's own null and core.add_null's values as null", function()
    local my_null = core.add_null and newproxy and newproxy(false) or io.stdout
    jrpc.add_null(my_null)
    local opts = { null = my_null }
    assert.equal("checked", agree(jrpc.params{ "a:number", "b:string?" }, "[1, null]", opts))
    local _, _, p = next_shaped(jrpc.params{ "a:number", "b:string?" }, "[1, null]", opts)
    assert.same({ a = 1 }, p)
    assert.equal("request", agree(jrpc.params{ "a:number" }, "[null]", opts))
    _, _, p = next_shaped(jrpc.params{ "a:any" }, "[null]", opts)
    assert.equal(my_null, p.a)
  end)

  -- Random declarations and params, checker and codec side by side.
  it("agrees with the checker on 4000 random declarations and params", function()
    local seed = 20261203
    local function rand(n)  -- a small LCG: the same cases on Lua 5.4 and LuaJIT
      seed = (seed * 1103515245 + 12345) % 2147483648
      return seed % n + 1
    end
    local type_names = { "number", "integer", "string", "boolean", "table", "array", "object", "any" }
    local values = { "1", "-7", "2.5", "3e2", "1e400", '"s"', '"\\u00e9\\n"', '""', "true", "false",
      "null", "[]", "[1]", '[{"a":1}]', "{}", '{"a":1}', '{"1":2}', "0.0", "123456789012345678" }
    local names = { "a", "b", "c", "d" }
    local checked, refused = 0, 0
    for _ = 1, 4000 do
      local n, specs = rand(5) - 1, {}
      for i = 1, n do
        specs[i] = names[i] .. ":" .. type_names[rand(#type_names)] .. (rand(2) == 1 and "?" or "")
      end
      local decl = jrpc.params(specs)
      local form, params = rand(5), nil
      if form <= 2 then  -- positional, up to one more than declared
        local parts = {}
        for i = 1, rand(n + 2) - 1 do parts[i] = values[rand(#values)] end
        params = "[" .. table.concat(parts, ",") .. "]"
      elseif form <= 4 then  -- named: any of the names, now and then one undeclared
        local parts = {}
        for i = 1, #names do
          if rand(3) > 1 and (i <= n or rand(4) == 1) then
            parts[#parts + 1] = ('"%s":%s'):format(names[i], values[rand(#values)])
          end
        end
        params = "{" .. table.concat(parts, ",") .. "}"
      end
      if agree(decl, params) == "checked" then checked = checked + 1 else refused = refused + 1 end
    end
    -- both verdicts are well represented (the generator is not one-sided)
    assert.is_true(checked > 500, "checked " .. checked)
    assert.is_true(refused > 500, "refused " .. refused)
  end)

  it("checks requests only: notifications, other methods and no shapes come as decoded", function()
    local c = core.codec()
    local shapes = { m = subtract:shape() }
    c:shapes(shapes)
    local kind, method, p = c:next('{"jsonrpc":"2.0","method":"m","params":[1,2]}\n')
    assert.equal("notification", kind)
    assert.equal("m", method)
    assert.equal(core.array_mt, getmetatable(p))
    kind, method, p = c:next('{"jsonrpc":"2.0","method":"other","params":[1,2],"id":2}\n')
    assert.equal("request", kind)
    assert.equal("other", method)
    assert.equal(core.array_mt, getmetatable(p))
    -- the table is the codec's own: a method added to it is checked from then on
    shapes.other = subtract:shape()
    kind, method, p = c:next('{"jsonrpc":"2.0","method":"other","params":[1,2],"id":3}\n')
    assert.equal("checked", kind)
    assert.equal("other", method)
    assert.same({ minuend = 1, subtrahend = 2 }, p)
    c:shapes(nil)
    kind, method, p = c:next(request("[1, 2]"))
    assert.equal("m", method)
    assert.equal("request", kind)
    assert.equal(core.array_mt, getmetatable(p))
    assert.has_error(function() c:shapes("m") end)
    -- another codec is not told
    kind = core.codec():next(request("[1, 2]"))
    assert.equal("request", kind)
  end)

  it("checks the requests of a batch too", function()
    local c = core.codec()
    c:shapes{ m = subtract:shape() }
    local kind, items = c:next("[" .. request("[1, 2]"):sub(1, -2) .. "," .. request('[1, "x"]', 2):sub(1, -2)
      .. "]\n")
    assert.equal("batch", kind)
    assert.equal("checked", items[1][1])
    assert.same({ minuend = 1, subtrahend = 2 }, items[1][3])
    assert.equal("request", items[2][1])
    assert.equal(core.array_mt, getmetatable(items[2][3]))
  end)

  it("raises on a shape jrpc.params did not make", function()
    local bad = {
      { [0] = 5 },                      -- no codes
      { "a", [0] = "NN", a = 1 },       -- a name missing
      { [0] = "q" , "a" },              -- an unknown code
      { [0] = string.rep("n", 200) },   -- more params than a shape may have
    }
    for i, shape in ipairs(bad) do
      local c = core.codec()
      c:shapes{ m = shape }
      assert.has_error(function() c:next(request("[1, 2]")) end,
        "codec: a params shape is malformed", "shape " .. i)
    end
  end)
end)
