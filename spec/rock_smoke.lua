-- spec/rock_smoke.lua: run by `make test-rock` (spec/rock/test_rock.sh) with
-- a plain lua5.4 or luajit whose search paths come from `luarocks path` for a
-- fresh tree. Usage: lua5.4 spec/rock_smoke.lua TREE; prints "rock ok".
local tree = assert(arg[1], "usage: lua5.4 rock_smoke.lua TREE")

local function inside(path, what)
  assert(path, what .. " not found on the search path")
  assert(path:sub(1, #tree + 1) == tree .. "/",
         what .. " loaded from " .. path .. ", not from the tree " .. tree)
end

local jrpc = require("jrpc")
assert(type(jrpc) == "table", "require 'jrpc' did not return a table")
inside(package.searchpath("jrpc", package.path), "jrpc")
inside(package.searchpath("jrpc.core", package.cpath), "jrpc.core")
inside(package.searchpath("jrpc.lineread", package.cpath), "jrpc.lineread")
inside(package.searchpath("jrpc.core_tls", package.cpath), "jrpc.core_tls")
inside(package.searchpath("jrpc.resp", package.cpath), "jrpc.resp")

local core = require("jrpc.core")

-- decode: one ndjson line in, one request out
local function read_one(bytes)
  local codec = core.codec{}
  codec:feed(bytes)
  local kind, method, params, id, rawid = codec:next()
  assert(kind == "request", "kind: " .. tostring(kind))
  assert(method == "subtract", "method: " .. tostring(method))
  assert(type(params) == "table" and params[1] == 42 and params[2] == 23, "params")
  assert(id == 1 and (math.type == nil or math.type(id) == "integer"), "id: " .. tostring(id))
  assert(rawid == 1, "rawid (a plain integer id is its own): " .. tostring(rawid))
  assert(codec:next() == nil, "a second message out of one line")
  return params, rawid
end

local msg = '{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1}'
local params, rawid = read_one(msg .. "\n")

-- encode: the same request written by the codec must read back the same
local codec = core.codec{}
local bytes = assert(codec:request(rawid, "subtract", params))
read_one(bytes)

-- and a result for it
local reply = assert(codec:result(rawid, params[1] - params[2]))
local r = assert(core.decode(reply))
assert(r.jsonrpc == "2.0" and r.result == 19 and r.id == 1, "reply: " .. reply)

-- core.hmac_sha256 loads jrpc.core_tls (the tree's) on first use: RFC 4231 case 2
assert(package.loaded["jrpc.core_tls"] == nil, "jrpc.core_tls loaded before its first use")
local mac = core.hmac_sha256("Jefe", "what do ya want for nothing?")
assert(mac:gsub(".", function(c) return ("%02x"):format(c:byte()) end)
  == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843", "hmac_sha256")
assert(package.loaded["jrpc.core_tls"], "jrpc.core_tls not loaded by core.hmac_sha256")

-- jrpc.resp (the tree's, on hiredis): a command's bytes read back
assert(package.loaded["jrpc.resp"] == nil, "jrpc.resp loaded by require 'jrpc'")
local resp = require("jrpc.resp")
local reader = resp.reader()
reader:feed(resp.command{ "SET", "k", 10 })
local args = reader:next()
assert(type(args) == "table" and table.concat(args, " ") == "SET k 10", "resp.command read back")

print("rock ok")
