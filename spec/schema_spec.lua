-- jrpc.schema: the messages (exact, with JSON pointer paths), the list of
-- all failures, compile errors, options, and values as Lua and jrpc's core
-- make them (marked and unmarked tables, null, integers on both
-- interpreters). The JSON Schema Test Suite runs in schema_suite_spec.lua.
local jrpc = require "jrpc"
local schema = require "jrpc.schema"

local function J(text)
  local v, err = jrpc.decode(text)
  assert(err == nil, err)
  return v
end

-- The check of a schema given as JSON text (asserted to compile).
local function C(text, opts)
  local check, err = schema.compile(J(text), opts)
  assert(check, err)
  return check
end

-- The first failure's line for `data` (JSON text), or true.
local function first(check, data)
  local ok, msg = check(J(data))
  if ok then return true end
  return msg
end

describe("jrpc.schema messages", function()
  it("name the path of the first failure", function()
    local check = C[[{"type":"object","properties":{"items":{"type":"array","items":{
      "type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}},
      "required":["items"],"additionalProperties":false}]]
    assert.are.equal("/items/2/name: expected string, got number",
      first(check, [[{"items":[{"name":"a"},{"name":"b"},{"name":3}]}]]))
    assert.are.equal('/items/1: missing required property "name"', first(check, [[{"items":[{"name":"a"},{}]}]]))
    assert.are.equal('(root): missing required property "items"', first(check, "{}"))
    assert.are.equal("(root): expected object, got array", first(check, "[]"))
    assert.are.equal("/extra: not allowed", first(check, [[{"items":[],"extra":1}]]))
    assert.is_true(first(check, [[{"items":[{"name":"x"}]}]]))
  end)

  it("list every failure, properties in name order", function()
    local check = C[[{"properties":{"b":{"type":"integer"},"a":{"minimum":3}},
      "required":["c"],"additionalProperties":false}]]
    local ok, msg, all = check(J[[{"z":1,"b":1.5,"a":2,"y":null}]])
    assert.is_false(ok)
    assert.are.equal('(root): missing required property "c"', msg)
    assert.are.same({
      { path = "", message = 'missing required property "c"' },
      { path = "/a", message = "expected at least 3, got 2" },
      { path = "/b", message = "expected integer, got number" },
      { path = "/y", message = "not allowed" },
      { path = "/z", message = "not allowed" },
    }, all)
  end)

  it("escape ~ and / in paths (RFC 6901)", function()
    local check = C[[{"additionalProperties":{"type":"string"}}]]
    assert.are.equal("/a~1b~0c: expected string, got boolean", first(check, [[{"a/b~c":true}]]))
  end)

  it("word each keyword", function()
    local cases = {
      { [[{"type":["string","null"]}]], "1", "(root): expected string or null, got number" },
      { [[{"type":"integer"}]], "1.5", "(root): expected integer, got number" },
      { [[{"type":"null"}]], "{}", "(root): expected null, got object" },
      { [[{"enum":["red","green",null]}]], '"blue"', '(root): expected one of ["red","green",null], got "blue"' },
      { [[{"const":{"a":[1]}}]], '{"a":[2]}', '(root): expected {"a":[1]}, got {"a":[2]}' },
      { [[{"minimum":1}]], "0", "(root): expected at least 1, got 0" },
      { [[{"maximum":1.5}]], "2", "(root): expected at most 1.5, got 2" },
      { [[{"exclusiveMinimum":1}]], "1", "(root): expected more than 1, got 1" },
      { [[{"exclusiveMaximum":1}]], "1", "(root): expected less than 1, got 1" },
      { [[{"multipleOf":0.5}]], "1.25", "(root): expected a multiple of 0.5, got 1.25" },
      { [[{"minLength":3}]], '"né"', "(root): expected at least 3 characters, got 2" },
      { [[{"maxLength":1}]], '"ab"', "(root): expected at most 1 character, got 2" },
      { [[{"pattern":"^[A-Z]{3}$"}]], '"ABCD"', '(root): expected a string matching "^[A-Z]{3}$", got "ABCD"' },
      { [[{"minItems":2}]], "[1]", "(root): expected at least 2 items, got 1" },
      { [[{"maxItems":1}]], "[1,2]", "(root): expected at most 1 item, got 2" },
      { [[{"uniqueItems":true}]], '[1,{"a":1},2,{"a":1.0}]', "(root): expected unique items, got items 1 and 3 equal" },
      { [[{"contains":{"type":"string"}}]], "[1,2]", "(root): expected at least 1 item matching contains, got 0" },
      { [[{"contains":{"type":"string"},"maxContains":1}]], '["a","b"]',
        "(root): expected at most 1 item matching contains, got 2" },
      { [[{"prefixItems":[{"type":"string"}],"items":false}]], '["a",2]', "/1: not allowed" },
      { [[{"minProperties":1}]], "{}", "(root): expected at least 1 property, got 0" },
      { [[{"maxProperties":1}]], '{"a":1,"b":2}', "(root): expected at most 1 property, got 2" },
      { [[{"dependentRequired":{"card":["cvv"]}}]], '{"card":1}',
        '(root): missing property "cvv" (required when "card" is present)' },
      { [[{"propertyNames":{"maxLength":3}}]], '{"long":1}', "/long: invalid property name: expected at most 3 characters, got 4" },
      { [[{"not":{"type":"string"}}]], '"a"', "(root): must not match the schema in not" },
      { [[{"anyOf":[{"type":"string"},{"properties":{"a":{"type":"integer"}}}]}]], '{"a":true}',
        "(root): matches no schema of anyOf: [0] (root): expected string, got object; [1] /a: expected integer, got boolean" },
      { [[{"oneOf":[{"type":"integer"},{"minimum":0}]}]], "1", "(root): matches more than one schema of oneOf (0 and 1)" },
      { [[{"oneOf":[{"type":"integer"},{"type":"string"}]}]], "null",
        "(root): matches no schema of oneOf: [0] (root): expected integer, got null; [1] (root): expected string, got null" },
      { [[{"if":{"properties":{"kind":{"const":"a"}}},"then":{"required":["x"]},"else":{"required":["y"]}}]],
        '{"kind":"b"}', '(root): missing required property "y"' },
      { [[{"properties":{"a":{"$ref":"#/$defs/pos"}},"$defs":{"pos":{"exclusiveMinimum":0}}}]], '{"a":-1}',
        "/a: expected more than 0, got -1" },
      { [[{"properties":{"a":true},"unevaluatedProperties":false}]], '{"a":1,"b":2}', "/b: not allowed" },
      { [[{"prefixItems":[true],"unevaluatedItems":{"type":"string"}}]], '[1,2]', "/1: expected string, got number" },
      { "false", "1", "(root): not allowed" },
    }
    for _, c in ipairs(cases) do
      assert.are.equal(c[3], first(C(c[1]), c[2]), c[1])
    end
  end)

  it("follow $ref through $defs, $anchor, $id and recursion", function()
    local tree = C[[{"$id":"https://example.com/tree","type":"object",
      "properties":{"value":{"$ref":"#num"},"kids":{"type":"array","items":{"$ref":"tree"}}},
      "$defs":{"n":{"$anchor":"num","type":"number"}}}]]
    assert.is_true(first(tree, [[{"value":1,"kids":[{"value":2,"kids":[]}]}]]))
    assert.are.equal("/kids/0/kids/1/value: expected number, got string",
      first(tree, [[{"value":1,"kids":[{"kids":[{},{"value":"x"}]}]}]]))
  end)

  it("ask for formats (off by default: format is an annotation)", function()
    local text = [[{"properties":{"when":{"format":"date-time"},"id":{"format":"uuid"},
      "ip":{"format":"ipv6"},"mail":{"format":"email"},"home":{"format":"uri"}}}]]
    assert.is_true(first(C(text), [[{"when":"yesterday"}]]))
    local check = C(text, { formats = true })
    assert.are.equal('/when: expected an RFC 3339 date-time, got "yesterday"', first(check, [[{"when":"yesterday"}]]))
    assert.are.equal('/id: expected a UUID, got "1234"', first(check, [[{"id":"1234"}]]))
    assert.are.equal('/ip: expected an IPv6 address, got "1::2::3"', first(check, [[{"ip":"1::2::3"}]]))
    assert.are.equal('/mail: expected an email address, got "a@@b"', first(check, [[{"mail":"a@@b"}]]))
    assert.are.equal('/home: expected an absolute URI, got "/x"', first(check, [[{"home":"/x"}]]))
    assert.is_true(first(check, [[{"when":"2026-12-05T10:00:00Z","id":"2f1c9a8e-0c1d-4b7e-9a55-0123456789ab",
      "ip":"::ffff:127.0.0.1","mail":"a.b@example.com","home":"https://example.com/a?b#c"}]]))
    -- a format it does not know stays an annotation
    assert.is_true(first(C([[{"format":"int32"}]], { formats = true }), '"x"'))
  end)

  it("fail a string the pattern matcher cannot decide on, saying so", function()
    local check = C[[{"properties":{"a":{"pattern":"^(a+)+$"}},"patternProperties":{"^(b+)+$":true},
      "additionalProperties":false}]]
    local evil = ("a"):rep(30) .. "!"
    local ok, msg = check { a = evil }
    assert.is_false(ok)
    assert.are.equal('/a: cannot tell whether the string matches "^(a+)+$": the match took more than 250000 steps', msg)
    ok, msg = check { [("b"):rep(30) .. "!"] = 1 }
    assert.is_false(ok)
    assert.are.equal("/" .. ("b"):rep(30) .. '!: cannot tell whether the name matches "^(b+)+$": the match took more'
      .. " than 250000 steps", msg)
    assert.is_true((check { a = "aaa", bbb = 1 }))
  end)

  it("match long strings without deep recursion", function()
    local check = C[[{"pattern":"^(?:ab)*$"}]]
    assert.is_true((check(("ab"):rep(100000))))
    assert.is_false((check(("ab"):rep(100000) .. "a")))
    check = C[[{"pattern":"^(?:a|b)+c$"}]]
    assert.is_true((check(("ab"):rep(100000) .. "c")))
  end)

  it("cut long values on a character boundary", function()
    local check = C[[{"const":"x"}]]
    local long = ("é"):rep(40)
    local _, msg = check(long)
    assert.are.equal('(root): expected "x", got "' .. ("é"):rep(28) .. '...', msg)
    assert.is_string(jrpc.encode(msg))
  end)
end)

describe("jrpc.schema values", function()
  it("takes Lua tables: unmarked lists in the schema's list keywords, marked or [1] arrays", function()
    local check = assert(schema.compile { type = "object", properties = {
      tags = { type = "array", items = { type = "string" } } }, required = {} })
    assert.is_true(check {})
    assert.is_true(check { tags = { "a", "b" } })
    assert.is_true(check { tags = jrpc.array() })
    -- an empty unmarked table encodes as {}: it is an object
    assert.are.equal("/tags: expected array, got object", select(2, check { tags = {} }))
    assert.are.equal("/tags/1: expected string, got number", select(2, check { tags = { "a", 2 } }))
    assert.are.equal("(root): expected object, got array", select(2, check(jrpc.array())))
    assert.is_true(check(jrpc.object()))
  end)

  it("counts 1.0 as an integer, from Lua or decoded, on every interpreter", function()
    local check = assert(schema.compile { type = "integer" })
    assert.is_true(check(1.0))
    assert.is_true(check(J"1.0"))
    assert.is_true(check(J"2e3"))
    assert.is_true(check(J"9007199254740993"))
    assert.are.equal("(root): expected integer, got number", select(2, check(1.5)))
  end)

  it("knows jrpc.null", function()
    local check = assert(schema.compile { type = "object", properties = { a = { type = "null" } } })
    assert.is_true(check { a = jrpc.null })
    assert.are.equal("/a: expected null, got boolean", select(2, check { a = false }))
  end)

  it("takes boolean schemas", function()
    assert.is_true((assert(schema.compile(true)))({ 1 }))
    assert.are.equal("(root): not allowed", select(2, assert(schema.compile(false))(1)))
  end)
end)

describe("jrpc.schema.compile refuses", function()
  local function refused(text)
    local check, err = schema.compile(type(text) == "string" and J(text) or text)
    assert.is_nil(check)
    return err
  end

  it("a $ref outside the document, naming it; never fetching", function()
    assert.are.equal('schema /properties/a/$ref: cannot resolve $ref "https://example.com/s.json" '
      .. "(https://example.com/s.json): only references within the schema document are followed, none is fetched",
      refused [[{"properties":{"a":{"$ref":"https://example.com/s.json"}}}]])
    assert.are.equal('schema /$ref: cannot resolve $ref "#/$defs/nope" (jrpc:/schema#/$defs/nope): '
      .. "only references within the schema document are followed, none is fetched",
      refused [[{"$ref":"#/$defs/nope"}]])
  end)

  it("a pattern it cannot match exactly", function()
    assert.are.equal('schema /pattern: unsupported pattern "^\\\\p{L}+$": Unicode property escapes (\\p{...}) are not supported',
      refused [[{"pattern":"^\\p{L}+$"}]])
    assert.are.equal('schema /patternProperties/(a)\\1: unsupported pattern "(a)\\\\1": backreferences (\\1) are not supported',
      refused [[{"patternProperties":{"(a)\\1":true}}]])
    assert.are.equal('schema /pattern: unsupported pattern "(?<=a)b": lookbehind is not supported',
      refused [[{"pattern":"(?<=a)b"}]])
    assert.are.equal('schema /pattern: unsupported pattern "a**": nothing to repeat', refused [[{"pattern":"a**"}]])
    assert.are.equal('schema /pattern: unsupported pattern "[a": unterminated character class', refused [[{"pattern":"[a"}]])
  end)

  it("a schema that is not one", function()
    assert.are.equal('schema /properties/a/type: unknown type "strin"', refused [[{"properties":{"a":{"type":"strin"}}}]])
    assert.are.equal("schema /type: expected a type name or a non-empty list of them", refused [[{"type":[]}]])
    assert.are.equal("schema /minLength: expected a non-negative integer", refused [[{"minLength":-1}]])
    assert.are.equal("schema /required/1: expected a string", refused [[{"required":["a",1]}]])
    assert.are.equal("schema /allOf: expected a non-empty array of schemas", refused [[{"allOf":[]}]])
    assert.are.equal("schema /items: expected a schema (an object or a boolean), got number", refused [[{"items":1}]])
    assert.are.equal("schema (root): expected a schema (an object or a boolean), got number", refused(42))
  end)

  it("a $ref loop that never moves into the value (it would overflow the stack)", function()
    assert.are.equal('schema (root): $ref "#/$defs/a" leads back to itself without moving into the value',
      refused [[{"$defs":{"a":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"}]])
    assert.are.equal('schema (root): $ref "#" leads back to itself without moving into the value',
      refused [[{"$defs":{"a":{"allOf":[{"$ref":"#"}]}},"anyOf":[{"$ref":"#/$defs/a"}]}]])
    -- through properties it is a recursive schema, which is fine
    assert.is_function(schema.compile(J[[{"properties":{"a":{"$ref":"#"}}}]]))
  end)

  it("options it does not know (a raise: misuse)", function()
    assert.has_error(function() schema.compile({}, { format = true }) end,
      "jrpc.schema.compile: unknown option 'format' (did you mean 'formats'?)")
    assert.has_error(function() schema.compile({}, { formats = "yes" }) end,
      "jrpc.schema.compile: option 'formats' must be a boolean")
  end)
end)
