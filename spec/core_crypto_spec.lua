-- jrpc.core crypto for MRTR's requestState: HMAC-SHA-256 (RFC 4231 test
-- vectors), CSPRNG bytes, constant-time equality; for OAuth: SHA-256 (FIPS
-- 180-2 vectors), base64 and base64url (RFC 4648 vectors), PKCE's S256
-- (RFC 7636 appendix B); all from libcrypto.
local core = require "jrpc.core"

local function hex(s)
  return (s:gsub(".", function(c) return ("%02x"):format(c:byte()) end))
end
local function unhex(h)
  return (h:gsub("%x%x", function(x) return string.char(tonumber(x, 16)) end))
end

describe("core.hmac_sha256", function()
  -- RFC 4231 section 4: test cases 1-7, HMAC-SHA-256
  local cases = {
    {("0b"):rep(20), hex("Hi There"),
      "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"},
    {hex("Jefe"), hex("what do ya want for nothing?"),
      "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"},
    {("aa"):rep(20), ("dd"):rep(50),
      "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"},
    {"0102030405060708090a0b0c0d0e0f10111213141516171819", ("cd"):rep(50),
      "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"},
    {("0c"):rep(20), hex("Test With Truncation"),
      "a3b6167473100ee06e0c796c2955552b", true},
    {("aa"):rep(131), hex("Test Using Larger Than Block-Size Key - Hash Key First"),
      "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"},
    {("aa"):rep(131), hex("This is a test using a larger than block-size key and a larger t"
      .. "han block-size data. The key needs to be hashed before being used by the HMAC algorithm."),
      "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"},
  }
  for i, c in ipairs(cases) do
    it("RFC 4231 test case " .. i, function()
      local mac = core.hmac_sha256(unhex(c[1]), unhex(c[2]))
      assert.are.equal(32, #mac)
      if c[4] then mac = mac:sub(1, 16) end  -- case 5: truncated to 128 bits
      assert.are.equal(c[3], hex(mac))
    end)
  end

  it("takes an empty key and message, and bytes with NULs", function()
    assert.are.equal("b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad",
      hex(core.hmac_sha256("", "")))
    assert.are_not.equal(core.hmac_sha256("k\0a", "m"), core.hmac_sha256("k\0b", "m"))
  end)

  it("raises for arguments that are not strings", function()
    assert.has_error(function() core.hmac_sha256(nil, "m") end)
    assert.has_error(function() core.hmac_sha256("k", {}) end)
  end)
end)

describe("core.random_bytes", function()
  it("gives n bytes, different each time", function()
    assert.are.equal("", core.random_bytes(0))
    local a, b = core.random_bytes(32), core.random_bytes(32)
    assert.are.equal(32, #a)
    assert.are_not.equal(a, b)
    assert.are.equal(1048576, #core.random_bytes(1048576))
  end)

  it("raises for n out of 0..1048576 or not an integer", function()
    assert.has_error(function() core.random_bytes(-1) end)
    assert.has_error(function() core.random_bytes(1048577) end)
    assert.has_error(function() core.random_bytes("x") end)
  end)
end)

describe("core.equal", function()
  it("compares strings (NULs included); lengths differ: false", function()
    assert.is_true(core.equal("", ""))
    assert.is_true(core.equal("a\0b", "a\0b"))
    assert.is_false(core.equal("a\0b", "a\0c"))
    assert.is_false(core.equal("abc", "ab"))
    local mac = core.hmac_sha256("k", "m")
    assert.is_true(core.equal(mac, core.hmac_sha256("k", "m")))
    assert.is_false(core.equal(mac, core.hmac_sha256("k", "n")))
  end)

  it("raises for arguments that are not strings", function()
    assert.has_error(function() core.equal("a") end)
    assert.has_error(function() core.equal({}, "a") end)
  end)
end)

-- OpenSSL on first use: these functions and core.tls_client live in the
-- module jrpc.core_tls (src/core_tls.c), the only one linked against
-- libssl and libcrypto; jrpc.core's table loads it when one of its names
-- is first read (src/core.c, core_index), so a process that never uses
-- them never maps OpenSSL (about 1.7 MiB of RSS).
describe("jrpc.core_tls, loaded on first use", function()
  local files = dofile("spec/files.lua")
  local NAMES = { "base64", "equal", "hmac_sha256", "random_bytes", "sha256", "tls_client" }

  local function child(body) return files.run_lua(body, 60) end

  -- in the child: which of OpenSSL's libraries its address space maps
  local MAPPED = [[
local function mapped()
  local f = assert(io.open("/proc/self/maps"))
  local maps = f:read("*a")
  f:close()
  local found = {}
  for _, lib in ipairs{ "libssl", "libcrypto" } do
    if maps:find("/" .. lib .. "[^/\n]*%.so") then found[#found + 1] = lib end
  end
  return #found > 0 and table.concat(found, " ") or "none"
end
local function hex(s) return (s:gsub(".", function(c) return ("%02x"):format(c:byte()) end)) end
]]

  it("is not mapped after require 'jrpc' and a round trip; core.hmac_sha256 maps it", function()
    local out, status = child(MAPPED .. [[
local jrpc = require "jrpc"
local queue, a, b = {}, nil, nil
a = jrpc.peer{ send = function(bytes) queue[#queue + 1] = { b, bytes } end }
b = jrpc.peer{ send = function(bytes) queue[#queue + 1] = { a, bytes } end }
b:method("subtract", function(p) return p[1] - p[2] end)
local got
a:request("subtract", { 42, 23 }, nil, function(err, result) got = err or result end)
while #queue > 0 do
  local item = table.remove(queue, 1)
  item[1]:receive(item[2])
end
print("result " .. tostring(got))
print("before " .. mapped() .. " " .. tostring(package.loaded["jrpc.core_tls"]))
local core = require "jrpc.core"
print("hmac " .. hex(core.hmac_sha256("Jefe", "what do ya want for nothing?")))
print("after " .. mapped() .. " " .. type(package.loaded["jrpc.core_tls"]))
]])
    assert.are.equal("result 19\nbefore none nil\n"
      .. "hmac 5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843\n"
      .. "after libssl libcrypto table\n", out)
    assert.are.equal(0, status)
  end)

  it("is loaded by the first read of any of its names, each from a fresh jrpc.core", function()
    local out, status = child(MAPPED .. [[
for _, name in ipairs{ ]] .. '"' .. table.concat(NAMES, '", "') .. '"' .. [[ } do
  package.loaded["jrpc.core"], package.loaded["jrpc.core_tls"] = nil, nil
  local core = require "jrpc.core"
  local before = rawget(core, name) == nil and package.loaded["jrpc.core_tls"] == nil
  local f = core[name]
  print(name, before, type(f), type(package.loaded["jrpc.core_tls"]), rawget(core, name) == f)
end
print(mapped())
]])
    local want = {}
    for _, name in ipairs(NAMES) do want[#want + 1] = name .. "\ttrue\tfunction\ttable\ttrue\n" end
    assert.are.equal(table.concat(want) .. "libssl libcrypto\n", out)
    assert.are.equal(0, status)
  end)

  it("gives jrpc.core exactly its functions, and other missing names stay nil", function()
    local tls = require "jrpc.core_tls"
    local names = {}
    for name, f in pairs(tls) do
      names[#names + 1] = name
      assert.are.equal(f, core[name])
      assert.are.equal(f, rawget(core, name))  -- copied in: later reads are plain
    end
    table.sort(names)
    assert.same(NAMES, names)
    assert.is_nil(core.no_such_function)
    assert.is_nil(core[1])
    assert.is_nil(core["equal\0"])
    assert.is_nil(rawget(core, "no_such_function"))
  end)

  it("raises a clear error when jrpc.core_tls cannot be found", function()
    local out, status = child([[
local core = require "jrpc.core"
local searchers = package.searchers or package.loaders  -- LuaJIT: loaders
local c_searcher = searchers[3]
searchers[3] = function(name)
  if name == "jrpc.core_tls" then return "\n\tno jrpc.core_tls in this test" end
  return c_searcher(name)
end
print(core.encode{ 1 })
print(pcall(function() return core.hmac_sha256("k", "m") end))
]])
    assert.are.equal(0, status)
    assert.matches("^%[1%]\nfalse\t.*module 'jrpc.core_tls' not found.*no jrpc.core_tls in this test", out)
  end)
end)

describe("core.sha256", function()
  it("gives the FIPS 180-2 digests", function()
    assert.are.equal("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", hex(core.sha256("")))
    assert.are.equal("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", hex(core.sha256("abc")))
    assert.are.equal("248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
      hex(core.sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")))
    assert.are.equal("cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0",
      hex(core.sha256(("a"):rep(1000000))))
  end)

  it("raises for a non-string", function()
    assert.has_error(function() core.sha256({}) end)
  end)
end)

describe("core.base64", function()
  it("gives RFC 4648's vectors, padded", function()
    local want = { [""] = "", f = "Zg==", fo = "Zm8=", foo = "Zm9v", foob = "Zm9vYg==",
      fooba = "Zm9vYmE=", foobar = "Zm9vYmFy" }
    for input, out in pairs(want) do assert.are.equal(out, core.base64(input)) end
  end)

  it("gives base64url without padding when asked", function()
    assert.are.equal("Zg", core.base64("f", true))
    assert.are.equal("-_-_", core.base64("\251\255\191", true))
    assert.are.equal("+/+/", core.base64("\251\255\191"))
  end)

  it("encodes across its 768-byte blocks", function()
    local s = {}
    for i = 0, 2999 do s[#s + 1] = string.char(i % 256) end
    s = table.concat(s)
    local out = core.base64(s)
    assert.are.equal(4000, #out)
    assert.are.equal(core.base64(s:sub(1, 768)), out:sub(1, 1024))
    assert.are.equal(core.base64(s:sub(769)), out:sub(1025))
  end)

  it("makes PKCE's S256 challenge (RFC 7636 appendix B)", function()
    assert.are.equal("E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
      core.base64(core.sha256("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"), true))
  end)
end)
