-- jrpc.core codec: the key cache of flat objects (src/tolua.c) must never
-- hand back a wrong key, and the quick 'self' check (src/udata.c) must
-- reject what the metatable check rejects, with the same errors.
local core = require "jrpc.core"

local function params_of(codec, json)
  local kind, _, params = codec:next('{"jsonrpc":"2.0","method":"m","params":' .. json .. ',"id":1}\n')
  assert.are.equal("request", kind)
  return params
end

local function keys_of(t)
  local ks = {}
  for k in pairs(t) do ks[#ks + 1] = k end
  table.sort(ks)
  return table.concat(ks, "|")
end

-- {"k1":1,"k2":2,...} and the sorted key list it must decode to
local function object(keys)
  local parts, sorted = {}, {}
  for i, k in ipairs(keys) do
    parts[i] = string.format("%q:%d", k, i)
    sorted[i] = k
  end
  table.sort(sorted)
  return "{" .. table.concat(parts, ",") .. "}", table.concat(sorted, "|")
end

local function check(codec, keys)
  local json, want = object(keys)
  local p = params_of(codec, json)
  assert.are.equal(want, keys_of(p))
  for i, k in ipairs(keys) do assert.are.equal(i, p[k]) end
end

describe("codec: object keys", function()
  it("keys alike but for one byte or the length, alternating, stay apart", function()
    local c = core.codec()
    -- same length and same end bytes: the same cache slot
    local sets = {
      {"abcd", "abxd"}, {"abxd", "abcd"}, {"a", "aa"}, {"aa", "a"},
      {"minuend", "minuenD"}, {"subtrahend", "subtrahenD"},
      {"subtrahend", "subtrahendx"}, {"", "x"}, {"x", ""},
      {"ab", "a\194\169b"},   -- a two-byte UTF-8 character inside
    }
    for _ = 1, 3 do
      for _, keys in ipairs(sets) do check(c, keys) end
    end
  end)

  it("keys longer than the cache keeps, and keys sharing a long prefix", function()
    local c = core.codec()
    local base = ("k"):rep(31)
    local sets = {
      {base .. "a"}, {base .. "b"},              -- 32 bytes
      {base .. "aa"}, {base .. "ab"},            -- 33
      {("q"):rep(64) .. "1"}, {("q"):rep(64) .. "2"},
      {("z"):rep(1000)}, {("z"):rep(999) .. "y"},
    }
    for _ = 1, 3 do
      for _, keys in ipairs(sets) do check(c, keys) end
    end
  end)

  it("many keys, more than the cache has slots, in changing orders", function()
    local c = core.codec()
    local keys = {}
    for i = 1, 100 do keys[i] = "key" .. i end
    for round = 1, 5 do
      local order = {}
      for i = 1, #keys do order[i] = keys[(i * (round * 7 + 1)) % #keys + 1] end
      local seen, uniq = {}, {}
      for _, k in ipairs(order) do
        if not seen[k] then seen[k] = true; uniq[#uniq + 1] = k end
      end
      check(c, uniq)
    end
  end)

  it("two codecs share nothing visible, interleaved", function()
    local a, b = core.codec(), core.codec()
    for i = 1, 50 do
      check(a, {"x" .. i, "same"})
      check(b, {"y" .. i, "same", "samE"})
    end
  end)

  it("escaped keys and nested objects are read as before", function()
    local c = core.codec()
    for _ = 1, 3 do
      local p = params_of(c, '{"a\\u0062":1,"ab":2}')
      assert.are.equal(2, p.ab)
      p = params_of(c, '{"ab":{"ab":1,"ac":[1]},"ac":2}')
      assert.are.same({ab = {ab = 1, ac = {1}}, ac = 2}, p)
    end
  end)

  it("results and errors decode their keys alike", function()
    local c = core.codec()
    for i = 1, 3 do
      local kind, _, v = c:next('{"jsonrpc":"2.0","result":{"abcd":' .. i .. ',"abxd":0},"id":1}\n')
      assert.are.equal("result", kind)
      assert.are.same({abcd = i, abxd = 0}, v)
      local kind2, _, err = c:next('{"jsonrpc":"2.0","error":{"code":1,"message":"m","messagE":2},"id":1}\n')
      assert.are.equal("error", kind2)
      assert.are.same({code = 1, message = "m", messagE = 2}, err)
    end
  end)

  it("method names alike but for one byte or the length, alternating", function()
    local c = core.codec()
    -- {JSON text of the name, the name}
    local names = {{"abcd", "abcd"}, {"abxd", "abxd"}, {"a", "a"}, {"aa", "aa"},
      {"tools/call", "tools/call"}, {"tools/calL", "tools/calL"},
      {("m"):rep(32), ("m"):rep(32)}, {("m"):rep(31) .. "n", ("m"):rep(31) .. "n"},
      {("m"):rep(33), ("m"):rep(33)}, {("m"):rep(34), ("m"):rep(34)},
      {"a\\u0062cd", "abcd"}, {"ab\\\\d", "ab\\d"}}
    for _ = 1, 3 do
      for _, n in ipairs(names) do
        local kind, method = c:next('{"jsonrpc":"2.0","method":"' .. n[1] .. '","id":1}\n')
        assert.are.equal("request", kind)
        assert.are.equal(n[2], method)
      end
    end
  end)

  it("keys stay right across collections", function()
    local c = core.codec()
    for i = 1, 200 do
      check(c, {"k" .. (i % 7), "kk" .. (i % 5)})
      if i % 50 == 0 then collectgarbage() end
    end
  end)
end)

describe("codec: self", function()
  local c = core.codec()
  local function msg(f, ...)
    local ok, err = pcall(f, ...)
    assert.is_false(ok)
    return tostring(err)
  end

  it("anything but an open codec is refused as before", function()
    local others = {io.stdout, core.pending and core.pending{} or io.stderr,
                    core.http_server and core.http_server{} or io.stdin,
                    core.null, "x", 1, {}, false}
    for _, v in ipairs(others) do
      for _, name in ipairs({"next", "feed", "result", "error", "want"}) do
        local m = msg(c[name], v, "1", 1, "x")
        assert.truthy(m:find("jrpc.Codec expected", 1, true), m)
      end
    end
  end)

  it("a codec closed by __close or __gc raises, also after it was used", function()
    local d = core.codec()
    assert.are.equal("request", (d:next('{"jsonrpc":"2.0","method":"m","id":1}\n')))
    getmetatable(d).__close(d)
    assert.are.equal("jrpc.Codec is closed", msg(d.next, d):match("jrpc.Codec is closed"))
    assert.are.equal("jrpc.Codec is closed", msg(d.result, d, "1", 1):match("jrpc.Codec is closed"))
    local g = core.codec()
    getmetatable(g).__gc(g)
    assert.are.equal("jrpc.Codec is closed", msg(g.feed, g, "x"):match("jrpc.Codec is closed"))
  end)
end)
