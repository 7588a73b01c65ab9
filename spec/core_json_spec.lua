-- jrpc.core: JSON encoding and decoding of Lua values.
local core = require "jrpc.core"

local is_jit = rawget(_G, "jit") ~= nil

local function fails(expected_msg, ...)
  local v, msg = ...
  assert.is_nil(v)
  assert.are.equal(expected_msg, msg)
end

describe("core.encode", function()
  it("writes compact JSON on one line", function()
    assert.are.equal('[1,"a",true,false,null]', core.encode({1, "a", true, false, core.null}))
    assert.are.equal('{"k":[1,2]}', core.encode({k = {1, 2}}))
    assert.are.equal('"x"', core.encode("x"))
    assert.are.equal("null", core.encode(nil))
  end)

  it("keeps integers integers and floats floats", function()
    assert.are.equal("[0,-7,2.5,0.1]", core.encode({0, -7, 2.5, 0.1}))
    if not is_jit then
      assert.are.equal("3.0", core.encode(3.0))
      assert.are.equal("9223372036854775807", core.encode(math.maxinteger))
      assert.are.equal("-9223372036854775808", core.encode(math.mininteger))
    else
      assert.are.equal("3", core.encode(3.0))
    end
    assert.are.equal("1e+300", core.encode(1e300))
    assert.are.equal(0.1, core.decode(core.encode(0.1)))
    assert.are.equal(1 / 3, core.decode(core.encode(1 / 3)))
  end)

  it("tells an empty array from an empty object", function()
    assert.are.equal("{}", core.encode({}))
    assert.are.equal("[]", core.encode(setmetatable({}, core.array_mt)))
    assert.are.equal("{}", core.encode(setmetatable({}, core.object_mt)))
    assert.are.equal('{"1":1}', core.encode(setmetatable({["1"] = 1}, core.object_mt)))
  end)

  -- sequences are written in one walk while the keys come as 1, 2, 3...
  -- and by index once they do not (keys in the hash part, in any order)
  it("writes sequences whose keys are not in order in the table", function()
    local backwards = {}
    for i = 12, 1, -1 do backwards[i] = i * 10 end
    assert.are.equal("[10,20,30,40,50,60,70,80,90,100,110,120]", core.encode(backwards))
    -- keys 4..8 in the hash part, which next() does not give in order:
    -- string keys make room there first (which many do varies by VM)
    local function grown(pad)
      local t = {1, 2, 3}
      for i = 1, pad do t["k" .. i] = i end
      for i = 1, pad do t["k" .. i] = nil end
      for i = 8, 4, -1 do t[i] = i end
      return t
    end
    local function in_order(t)
      local i = 0
      for k in pairs(t) do
        i = i + 1
        if k ~= i then return false end
      end
      return true
    end
    local shuffled
    for pad = 1, 16 do
      if not in_order(grown(pad)) then shuffled = grown(pad) break end
    end
    assert.is_table(shuffled)
    assert.are.equal("[1,2,3,4,5,6,7,8]", core.encode(shuffled))
    assert.are.equal("[1,2,3,4,5,6,7,8]", core.encode(setmetatable(shuffled, core.array_mt)))
    assert.are.equal('[{"x":1},{},[[]],"s"]',
      core.encode({{x = 1}, {}, {setmetatable({}, core.array_mt)}, "s"}))
    assert.are.equal('{"a":{"b":{}}}', core.encode({a = {b = {}}}))
  end)

  it("names the fault of a table that is neither array nor object, wherever the walk meets it", function()
    fails("cannot encode a table with mixed or non-string keys", core.encode({1, 2, 3, x = 4}))
    local string_first = {}
    string_first.x = 1
    string_first[1] = 2
    fails("cannot encode a table with mixed or non-string keys", core.encode(string_first))
    fails("cannot encode a table with mixed or non-string keys", core.encode({[1.5] = 1}))
    fails("cannot encode a table with mixed or non-string keys", core.encode({1, 2, [4] = 4}))
    fails("cannot encode a sparse array (nil inside)",
      core.encode(setmetatable({1, 2, x = 3}, core.array_mt)))
    fails("cannot encode a sparse array (nil inside)",
      core.encode(setmetatable({x = 1}, core.array_mt)))
    fails("cannot encode a sparse array (nil inside)",
      core.encode(setmetatable({[3] = 1}, core.array_mt)))
    -- a fault deep inside leaves nothing half-written behind
    fails("cannot encode a function", core.encode({1, {2, {3, print}}}))
    assert.are.equal("[1,[2]]", core.encode({1, {2}}))
  end)

  it("round-trips decoded arrays, empty ones included", function()
    assert.are.equal('{"a":[]}', core.encode(core.decode('{"a":[]}')))
    assert.are.equal('{"b":{}}', core.encode(core.decode('{"b":{}}')))
    assert.are.equal("[[],[[]]]", core.encode(core.decode("[[],[[]]]")))
  end)

  it("escapes strings and keeps UTF-8", function()
    assert.are.equal('"q\\"b\\\\n\\nt\\tc\\u0001é€😀"',
      core.encode('q"b\\n\nt\tc\1é€😀'))
    assert.are.equal('"a\\u0000b"', core.encode("a\0b"))
  end)

  it("refuses what JSON cannot hold, with a reason", function()
    fails("cannot encode NaN or Infinity", core.encode(0 / 0))
    fails("cannot encode NaN or Infinity", core.encode({x = math.huge}))
    fails("cannot encode a string that is not valid UTF-8", core.encode("\255"))
    fails("cannot encode a string that is not valid UTF-8", core.encode("\237\160\128")) -- surrogate
    fails("cannot encode a string that is not valid UTF-8", core.encode("\192\128"))     -- overlong
    fails("cannot encode a table with mixed or non-string keys", core.encode({1, x = 2}))
    fails("cannot encode a table with mixed or non-string keys", core.encode({[2] = 1}))
    fails("cannot encode a function", core.encode(print))
    fails("cannot encode a sparse array (nil inside)",
      core.encode(setmetatable({1, nil, 3}, core.array_mt)))
    local t = {}
    t.self = t
    fails("cannot encode a table that contains itself", core.encode(t))
  end)

  it("limits nesting depth", function()
    local deep = {}
    for _ = 1, 10 do deep = {deep} end
    assert.are.equal(string.rep("[", 10) .. "{}" .. string.rep("]", 10), core.encode(deep, 11))
    fails("nesting too deep", core.encode(deep, 5))
  end)

  it("raises only for misuse", function()
    assert.has_error(function() core.encode() end)
    assert.has_error(function() core.encode(1, 0) end)
  end)
end)

describe("core.decode", function()
  it("builds Lua values", function()
    local v = core.decode('{"a":[1,2.5,"x",true,null],"b":{"c":{}}}')
    assert.are.equal(1, v.a[1])
    assert.are.equal(2.5, v.a[2])
    assert.are.equal("x", v.a[3])
    assert.are.equal(true, v.a[4])
    assert.are.equal(core.null, v.a[5])
    assert.are.equal(core.array_mt, getmetatable(v.a))
    assert.are.same({}, v.b.c)
  end)

  it("gives integers the integer subtype", function()
    if is_jit then return end
    assert.are.equal("integer", math.type(core.decode("42")))
    assert.are.equal("integer", math.type(core.decode("[42]")[1]))
    assert.are.equal("float", math.type(core.decode("[4.5]")[1]))
    assert.are.equal(9223372036854775807, core.decode("9223372036854775807"))
  end)

  it("decodes escapes and surrogate pairs", function()
    assert.are.equal('A"\\/\b\f\n\r\té😀', core.decode('"\\u0041\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\ud83d\\ude00"'))
  end)

  it("rejects what RFC 8259 rejects, with the byte position", function()
    fails("trailing characters at byte 2", core.decode("01"))
    fails("unexpected character at byte 1", core.decode("+1"))
    fails("invalid number at byte 1", core.decode("1."))
    fails("unexpected character at byte 2", core.decode("[.5]"))
    fails("unexpected character at byte 1", core.decode("NaN"))
    fails("invalid literal at byte 2", core.decode("[tru]"))
    fails("trailing characters at byte 3", core.decode("1 2"))
    fails("expected ',' or ']' at byte 3", core.decode("[1"))
    fails("unexpected end of input at byte 1", core.decode(""))
    fails("invalid escape at byte 2", core.decode('"\\x"'))
    fails("invalid \\u escape at byte 2", core.decode('"\\u00zz"'))
    fails("lone high surrogate in \\u escape at byte 2", core.decode('"\\ud800"'))
    fails("lone low surrogate in \\u escape at byte 2", core.decode('"\\udc00"'))
    fails("invalid UTF-8 at byte 2", core.decode('"\255"'))
    fails("invalid UTF-8 at byte 2", core.decode('"\237\160\128"'))
    fails("control character in string at byte 2", core.decode('"\1"'))
    fails("expected a key at byte 2", core.decode("{1:2}"))
    fails("strings holding \\u0000 are not supported", core.decode('"a\\u0000"'))
  end)

  it("limits nesting depth", function()
    local s = string.rep("[", 50) .. string.rep("]", 50)
    assert.is_table(core.decode(s, 50))
    fails("nesting too deep at byte 50", core.decode(s, 49))
    fails("nesting too deep at byte 129", core.decode(string.rep("[", 2000)))
  end)
end)

describe("core.rawid", function()
  it("gives the JSON text of integer and string ids", function()
    assert.are.equal("17", core.rawid(17))
    assert.are.equal("-3", core.rawid(-3))
    assert.are.equal('"17"', core.rawid("17"))
    assert.are.equal('"é\\"\\n"', core.rawid('é"\n'))
  end)

  it("raises for ids that cannot be ids", function()
    assert.has_error(function() core.rawid(1.5) end)
    assert.has_error(function() core.rawid({}) end)
    assert.has_error(function() core.rawid(nil) end)
    assert.has_error(function() core.rawid("\255") end)
  end)
end)

-- Flat arrays and objects (scalars only) are built without cJSON; nested
-- ones go through cJSON. The inner value of [[...]] takes cJSON's path, so
-- comparing it with the flat decode checks that the two agree exactly.
describe("core.decode of flat arrays and objects", function()
  local function same_value(a, b)
    if type(a) ~= type(b) then return false end
    if type(a) ~= "table" then
      if a ~= b then return false end
      if type(a) == "number" then
        if math.type and math.type(a) ~= math.type(b) then return false end
        if a == 0 and 1 / a ~= 1 / b then return false end  -- -0.0 stays a float -0
      end
      return true
    end
    if getmetatable(a) ~= getmetatable(b) then return false end
    for k, v in pairs(a) do if not same_value(v, b[k]) then return false end end
    for k in pairs(b) do if a[k] == nil then return false end end
    return true
  end

  local texts = {
    "[]", "{}", "[42,23]", " [ 1 , -2 ,\t3\n] ", '{"minuend":42,"subtrahend":23}',
    '{ "a" : 1 , "b" : "x" }', "[-0]", "[0]", "[-0.0]", "[1.5,2e3,1E2]",
    "[123456789012345]", "[1234567890123456]", "[-12345678901234]", "[9007199254740993]",
    '["é","a\\"b","\\u00e9"]', '{"k\\n":1}', '{"a":1,"a":2}', "[true,false,null]",
    '{"n":null}', '["", ""]', "[[1]]", '{"o":{}}',
  }
  for _, text in ipairs(texts) do
    it("agrees with cJSON's path on " .. text, function()
      local flat = core.decode(text)
      local nested = core.decode("[" .. text .. "]")[1]
      assert.is_true(same_value(nested, flat), text)
    end)
  end

  it("keeps the array marker and the null option", function()
    assert.are.equal(core.array_mt, getmetatable(core.decode("[1,2]")))
    assert.are.equal(core.null, core.decode("[null]")[1])
  end)
end)
