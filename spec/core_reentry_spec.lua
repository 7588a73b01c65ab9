-- Finalizers that call back into the core while a core call is running.
--
-- Lua runs __gc finalizers at allocation points, and a decode allocates
-- for every table and string it pushes: a finalizer may call core.decode,
-- or feed and read the codec that is decoding, in the middle of it. Each
-- call must own what it uses (the cJSON tree, scratch buffers, the message
-- bytes), so nothing a finalizer does can free or move it.
--
-- The hostile scenarios used to crash (heap-use-after-free in push_tree),
-- so each runs in a child interpreter with this run's package paths: under
-- `make test-asan` the child is the ASan lua5.4 loading build/asan
-- (JRPC_CPATH_5_4), where a bad access aborts it.
local is_jit = rawget(_G, "jit") ~= nil
local INTERP = is_jit and "luajit" or "lua5.4"

local files = dofile("spec/files.lua")

-- Run `body` (Lua source) in a child; returns exit status, stdout, stderr.
local function child(interp, body)
  local script, out, err = os.tmpname(), os.tmpname(), os.tmpname()
  files.write(script, ("package.path = %q\npackage.cpath = %q\n"):format(package.path, package.cpath)
    .. "local core = require 'jrpc.core'\n" .. body)
  local p = assert(io.popen(("timeout -s KILL 120 %s %s > %s 2> %s; echo $?"):format(interp, script, out, err)))
  local status = tonumber(p:read("*a"))
  p:close()
  os.remove(script)
  return status, files.take(out), files.take(err)
end

local function check(body, expected)
  local status, stdout, stderr = child(INTERP, body)
  assert.are.equal("", stderr)
  assert.are.equal(0, status)
  assert.are.equal(expected, stdout)
end

-- Shared prologue: a finalizer chain. Every finalizer runs `work()` and
-- leaves one more finalized object behind as garbage, so while the GC is
-- kept busy there is always a finalizer ready to run at the next step.
local PROLOGUE = [[
local inner = '{"a":[1,2,{"b":"c"}],"d":"' .. string.rep("x", 60) .. '","e":[true,false,null,1.5]}'
local fired, bad, budget = 0, 0, 0
local work  -- set by each scenario
local mt = {}
local function spawn()
  if rawget(_G, "newproxy") then  -- LuaJIT: tables have no __gc
    local u = newproxy(true)
    getmetatable(u).__gc = mt.__gc
  else
    setmetatable({}, mt)
  end
end
local stop = false  -- set at the end: lua_close runs the last finalizers
mt.__gc = function()
  if stop then return end
  fired = fired + 1
  local v = core.decode(inner)
  if not (type(v) == "table" and v.a[3].b == "c" and v.e[4] == 1.5 and #v.d == 60) then
    bad = bad + 1
  end
  if work then work() end
  if budget > 0 then budget = budget - 1; spawn() end
end
-- before each outer call: fresh garbage and a budget of finalizer runs
local function arm()
  budget = 3000
  for _ = 1, 30 do spawn() end
end
if rawget(_G, "jit") then
  collectgarbage("setpause", 1)
  collectgarbage("setstepmul", 1000)
else
  collectgarbage("incremental", 1, 1000, 0)  -- a cycle right after the last
end

local function element(i)
  return ('{"i":%d,"s":"str %d","arr":[%d,%d,"%d"],"o":{"x":true,"k":"%s"}}')
    :format(i, i, i, i + 1, i, string.rep("k", i % 17))
end
local function check_element(v, i)
  return type(v) == "table" and v.i == i and v.s == "str " .. i and v.arr[1] == i and
    v.arr[2] == i + 1 and v.arr[3] == tostring(i) and #v.arr == 3 and v.o.x == true and
    v.o.k == string.rep("k", i % 17)
end
]]

describe("core reentry: finalizers calling the core during a call", function()
  it("core.decode of a 200-element array while finalizers call core.decode", function()
    check(PROLOGUE .. [[
local parts = {}
for i = 1, 200 do parts[i] = element(i) end
local text = "[" .. table.concat(parts, ",") .. "]"
local ok, during = 0, 0
for _ = 1, 20 do
  arm()
  local before = fired
  local v = assert(core.decode(text))
  if fired > before then during = during + 1 end
  local good = #v == 200
  for i = 1, 200 do good = good and check_element(v[i], i) end
  if good then ok = ok + 1 end
end
print("decodes right", ok)
print("finalizers ran during decodes", during > 0)
print("inner decodes wrong", bad)
stop = true
]], "decodes right\t20\nfinalizers ran during decodes\ttrue\ninner decodes wrong\t0\n")
  end)

  it("codec:next of a batch and of big params while finalizers feed the same codec", function()
    check(PROLOGUE .. [[
local c = core.codec{}
local fed, feeding = 0, false
work = function()
  if not feeding then return end  -- feed only while the outer next runs
  fed = fed + 1
  c:feed(('{"jsonrpc":"2.0","method":"fed","params":[%d]}\n'):format(fed))
end
local members = {}
for i = 1, 200 do
  members[i] = ('{"jsonrpc":"2.0","method":"m%d","params":%s,"id":%d}'):format(i, element(i), i)
end
local big = {}
for i = 1, 200 do big[i] = ('"k%d":%s'):format(i, element(i)) end
-- built before each feed: a finalizer run while building them would feed
-- its bytes first
local batch_text = "[" .. table.concat(members, ",") .. "]\n"
local big_text = '{"jsonrpc":"2.0","method":"big","params":{' .. table.concat(big, ",") .. '},"id":"b"}\n'
local batch_ok, big_ok, during = 0, 0, 0
local want_fed, fed_ok, fed_bad = 1, 0, 0
local function drain_fed()
  while true do
    local kind, method, params = c:next()
    if kind == nil then return end
    if kind == "notification" and method == "fed" and params[1] == want_fed then
      fed_ok = fed_ok + 1
    else
      fed_bad = fed_bad + 1
    end
    want_fed = want_fed + 1
  end
end
for _ = 1, 10 do
  arm()
  c:feed(batch_text)
  local before = fired
  feeding = true
  local kind, items = c:next()
  feeding = false
  if fired > before then during = during + 1 end
  local good = kind == "batch" and #items == 200
  for i = 1, 200 do
    local it = type(items) == "table" and items[i] or {}
    good = good and it[1] == "request" and it[2] == "m" .. i and check_element(it[3], i) and
      it[4] == i and it[5] == i and it.n == 5
  end
  if good then batch_ok = batch_ok + 1 end
  drain_fed()  -- the bytes fed during that next, as messages, in order
  arm()
  c:feed(big_text)
  before = fired
  feeding = true
  local k2, m2, p2, id2, raw2 = c:next()
  feeding = false
  if fired > before then during = during + 1 end
  good = k2 == "request" and m2 == "big" and id2 == "b" and raw2 == '"b"'
  for i = 1, 200 do good = good and type(p2) == "table" and check_element(p2["k" .. i], i) end
  if good then big_ok = big_ok + 1 end
  drain_fed()
end
work = nil
collectgarbage("collect")
drain_fed()
print("batches right", batch_ok, "big params right", big_ok)
print("finalizers ran during next", during > 0)
print("fed messages in order", fed_ok == fed and fed > 0, "out of order", fed_bad)
print("inner decodes wrong", bad)
stop = true
]], "batches right\t10\tbig params right\t10\nfinalizers ran during next\ttrue\n"
      .. "fed messages in order\ttrue\tout of order\t0\ninner decodes wrong\t0\n")
  end)

  it("a reentrant codec:next returns the following message; the outer one stays intact", function()
    check(PROLOGUE .. [[
local c = core.codec{framing = "lsp"}
local got = {}
work = function()
  local kind, method, params = c:next()
  if kind then got[#got + 1] = method .. ":" .. params[1] .. params[2].x end
end
local function frame(s) return "Content-Length: " .. #s .. "\r\n\r\n" .. s end
local members = {}
for i = 1, 200 do members[i] = ('"k%d":%s'):format(i, element(i)) end
local text = '{"jsonrpc":"2.0","method":"outer","params":{' .. table.concat(members, ",") .. '}}'
local outer_ok, n = 0, 0
local rounds = {}
for round = 1, 10 do
  local fr = {frame(text)}
  for j = 1, 50 do fr[j + 1] = frame(('{"jsonrpc":"2.0","method":"r%d.%d","params":[%d,{"x":"y"}]}'):format(round, j, j)) end
  rounds[round] = table.concat(fr)
end
for round = 1, 10 do
  arm()
  c:feed(rounds[round])  -- one feed, then next: "outer" comes out first
  while true do
    local kind, method, params = c:next()
    if kind == nil then break end
    if method == "outer" then
      local good = kind == "notification"
      for i = 1, 200 do good = good and check_element(params["k" .. i], i) end
      if good then outer_ok = outer_ok + 1 end
    else
      got[#got + 1] = method .. ":" .. params[1] .. params[2].x
    end
  end
end
work = nil
-- a message taken by a reentrant next comes out before the one being
-- decoded around it: every message exactly once, in no promised order
local seen = {}
for _, m in ipairs(got) do seen[m] = (seen[m] or 0) + 1 end
for round = 1, 10 do
  for j = 1, 50 do
    if seen[("r%d.%d:%dy"):format(round, j, j)] == 1 then n = n + 1 end
  end
end
print("outer right", outer_ok, "others", #got, "each once", n)
stop = true
]], "outer right\t10\tothers\t500\teach once\t500\n")
  end)

  -- LuaJIT's lua_pushlstring may run finalizers before it copies: a writer
  -- of the same codec there wrote over the outer writer's bytes (1 reply in
  -- 20,000 came out as the inner one's, before the writers' buffers swapped)
  it("a writer's reply stays intact while finalizers write with the same codec", function()
    check(PROLOGUE .. [[
local c = core.codec{}
local inner_bad = 0
work = function()
  local s = c:result(999999, string.rep("z", 100))
  if s ~= '{"jsonrpc":"2.0","result":"' .. string.rep("z", 100) .. '","id":999999}\n' then
    inner_bad = inner_bad + 1
  end
end
local bad, during = 0, 0
for i = 1, 20000 do
  if i % 100 == 1 then arm() end
  local before = fired
  local s = c:result(i, "abc")
  if fired > before then during = during + 1 end
  if s ~= ('{"jsonrpc":"2.0","result":"abc","id":%d}\n'):format(i) then bad = bad + 1 end
end
work = nil
print("outer wrong", bad, "inner wrong", inner_bad, "finalizers ran during writes", during > 0)
stop = true
]], "outer wrong\t0\tinner wrong\t0\tfinalizers ran during writes\ttrue\n")
  end)

  it("codec:take while finalizers write with the same holding codec: every message once, in order", function()
    check(PROLOGUE .. [[
local c = core.codec{}
c:hold(true)
local written, intake = 0, false
-- a finalizer run while take makes its string writes the next message
work = function()
  if not intake then return end
  written = written + 1
  assert(c:request(written, "m", {written}) == true)
end
local out, during = {}, 0
for _ = 1, 20 do
  for _ = 1, 50 do
    written = written + 1
    assert(c:request(written, "m", {written}) == true)
  end
  arm()
  local before = fired
  intake = true
  local s = c:take()
  intake = false
  if fired > before then during = during + 1 end
  out[#out + 1] = s
end
work = nil
out[#out + 1] = c:take()  -- what the last finalizers wrote
local r = core.codec{}
r:feed(table.concat(out))
local n, in_order = 0, true
while true do
  local kind, _, params, id = r:next()
  if kind == nil then break end
  n = n + 1
  in_order = in_order and kind == "request" and id == n and params[1] == n
end
print("messages", n == written, "in order", in_order, "finalizers ran during take", during > 0)
stop = true
]], "messages\ttrue\tin order\ttrue\tfinalizers ran during take\ttrue\n")
  end)

  it("p:pop() and p:next_expired() while finalizers pop and settle the same table", function()
    check(PROLOGUE .. [[
local p = core.pending{}
local out, dup = {}, 0
local function take(slot, id)
  if slot == nil then return end
  if out[id] then dup = dup + 1 end
  out[id] = slot
end
work = function() take(p:pop()); take(p:next_expired(1e9)) end
local n = 0
for round = 1, 20 do
  for i = 1, 100 do
    n = n + 1
    p:add(("%s-%d"):format(string.rep("long id ", 4), n), i % 2 == 0 and i or nil)
  end
  while true do
    spawn()  -- garbage with a finalizer at every step: some run inside pop
    local slot, id = p:next_expired(1e9)
    if slot == nil then slot, id = p:pop() end
    if slot == nil then break end
    take(slot, id)
  end
end
work = nil
local got = 0
for _ in pairs(out) do got = got + 1 end
print("ids out", got, "twice", dup, "left", p:count(), "stats", p:stats().pending)
stop = true
]], "ids out\t2000\ttwice\t0\tleft\t0\tstats\t0\n")
  end)

  it("next_expired and pop while finalizers add, settle and close the same table", function()
    check(PROLOGUE .. [[
local p = core.pending{}
local added, settled, taken, twice, k = 0, {}, {}, 0, 0
local function add(id)
  if p:add(id, added % 3 ~= 0 and added or nil) then added = added + 1 end
end
-- ids inline, in a block, and longer than the copy a take makes on the C stack
local function oid(i)
  return ("o-%d-%s"):format(i, string.rep("y", i % 7 == 0 and 300 + i % 5 or i % 30))
end
-- finalizers add an id (the first 3000 runs) and settle an older one
-- (maybe the one being taken)
work = function()
  k = k + 1
  if k <= 3000 then add(("w-%d-%s"):format(k, string.rep("x", k % 300))) end
  local id = oid(k)
  if p:settle(id) then settled[id] = true end
end
local function take(slot, id)
  if slot == nil then return false end
  if taken[id] or settled[id] then twice = twice + 1 end
  taken[id] = true
  return true
end
for i = 1, 2000 do add(oid(i)) end
arm()
while true do
  spawn()  -- garbage with a finalizer at every step: some run inside the call
  if not take(p:next_expired(1e9)) and not take(p:pop()) then break end
end
work = nil
while take(p:pop()) do end  -- what finalizers added after the last call
local out = 0
for _ in pairs(taken) do out = out + 1 end
for _ in pairs(settled) do out = out + 1 end
print("lost", added - out, "twice", twice, "left", p:count())
-- a finalizer closes the table while next_expired pushes the id (its one
-- allocation): the call returns nothing, and the table then refuses every use
for i = 1, 100 do add("c" .. i) end
local incall, got = false, 0
work = function() if incall then getmetatable(p).__close(p) end end
arm()
local ok, err = true, nil
while ok do
  spawn()
  local slot
  incall = true
  ok, slot, err = pcall(p.next_expired, p, 1e9)
  incall = false
  if ok and slot ~= nil then got = got + 1 end
  if ok and slot == nil then break end
end
work = nil
print("taken", got < 100, "nothing", ok)
ok, err = pcall(p.count, p)
print("closed", not ok and tostring(err):find("jrpc.Pending is closed", 1, true) ~= nil)
stop = true
]], "lost\t0\ttwice\t0\tleft\t0\ntaken\ttrue\tnothing\ttrue\nclosed\ttrue\n")
  end)

  -- src/shape.c reads the shape while it builds tables (each may run a
  -- finalizer): one that rewrites the shape mid-check gets a clean error,
  -- or the params as the shape was read; never a crash or a bad read.
  -- A finalizer that runs before the outer next has taken the line reads
  -- it itself (the outer one then finds nothing): each line is delivered
  -- exactly once, by one of the two.
  it("codec:next with a params shape while finalizers rewrite that shape", function()
    check(PROLOGUE .. [[
local c = core.codec{}
local shape
local shapes = {}
c:shapes(shapes)  -- once: the codec keeps this table through every Work it makes
local vandal = false
local inner_took, inner_wrong = 0, 0
work = function()
  if not vandal then return end
  shape[0], shape[1], shape[2], shape.b = "x", nil, 42, nil
  local ok, kind = pcall(c.next, c)  -- reentrant: a Work of its own
  if not ok then
    inner_took = inner_took + 1
    if not tostring(kind):find("codec: a params shape is malformed", 1, true) then
      inner_wrong = inner_wrong + 1
    end
    error({ inner = kind }, 0)  -- on as before (LuaJIT passes it to the outer call)
  end
  if kind ~= nil then inner_took = inner_took + 1 end
  collectgarbage("step")
end
local parts = {}
for i = 1, 60 do parts[i] = element(i) end
local nested = "[" .. table.concat(parts, ",") .. "]"
local lines = {
  '{"jsonrpc":"2.0","method":"m","params":[' .. nested .. ',"' .. string.rep("s", 80) .. '"],"id":1}\n',
  '{"jsonrpc":"2.0","method":"m","params":{"a":' .. nested .. ',"b":"' .. string.rep("s", 80) .. '"},"id":1}\n',
  '{"jsonrpc":"2.0","method":"m","params":[1,"' .. string.rep("s", 80) .. '"],"id":1}\n',
}
local right, during = 0, 0
for round = 1, 30 do
  shape = { [0] = "AS", "a", "b", a = 1, b = 2 }
  shapes.m = shape
  arm()
  c:feed(lines[round % 3 + 1])
  local before, took_before = fired, inner_took
  vandal = true
  local ok, kind, method, p = pcall(c.next, c)
  vandal = false
  if fired > before then during = during + 1 end
  local outer, wrong = 0, false
  if ok and kind ~= nil then
    outer = 1
    wrong = not ((kind == "checked" or kind == "request") and method == "m" and type(p) == "table")
  elseif not ok and not (type(kind) == "table" and kind.inner) then
    outer = 1
    wrong = not tostring(kind):find("codec: a params shape is malformed", 1, true)
  end
  if not wrong and outer + inner_took - took_before == 1 then right = right + 1 end
end
shapes.m = { [0] = "N", "x", x = 1 }
local kind = c:next('{"jsonrpc":"2.0","method":"m","params":[1],"id":2}\n')
print("rounds right", right, "finalizers ran during next", during > 0)
print("then", kind)
print("inner decodes wrong", bad, "inner reads wrong", inner_wrong)
stop = true
]], "rounds right\t30\tfinalizers ran during next\ttrue\nthen\tchecked\ninner decodes wrong\t0\tinner reads wrong\t0\n")
  end)
end)
