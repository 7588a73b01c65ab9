-- bench/pending_bench.lua: the C pending-id table (core.pending) against a
-- plain-Lua baseline (pending[rawid] = cb plus an indexed deadline heap in
-- Lua), both keyed by the same rawid strings, both with one shared callback.
--
--   lua5.4 bench/pending_bench.lua [CPATH_DIR]     (dir holding jrpc/core.so)
--   LUA_CPATH='build/5.4/?.so' lua5.4 bench/pending_bench.lua
--
-- Also run by bench/run.lua (dofile, after it set package.cpath).
-- Time is CPU time (os.clock), best of BENCH_RUNS (default 3).
-- Memory: the C blocks are invisible to collectgarbage("count"), so the C
-- side reports stats().bytes_per_entry; the Lua side (the waiters[slot]
-- array for the C table, everything for the baseline) is measured as the
-- growth of collectgarbage("count") after a full collection.

local dir = ...
if type(dir) == "string" and dir ~= "" then
  package.cpath = dir .. "/?.so;" .. package.cpath
end

local core = require "jrpc.core"

local N = 100000
local RUNS = tonumber(os.getenv("BENCH_RUNS")) or 3
local clock = os.clock

-- {====== inputs: rawids, deadlines, a random settle order (fixed seed)
local ids, deadlines, order = {}, {}, {}
do
  local x = 42
  local function rand(n)  -- Park-Miller: same sequence on 5.4 and LuaJIT
    x = (x * 16807) % 2147483647
    return x % n + 1
  end
  for i = 1, N do
    ids[i] = tostring(i)          -- the JSON text of integer id i
    deadlines[i] = 1000 + rand(1000000) / 1000
    order[i] = i
  end
  for i = N, 2, -1 do
    local j = rand(i)
    order[i], order[j] = order[j], order[i]
  end
end
local function cb() end
-- }======

-- {====== plain-Lua baseline: same semantics (exact next deadline,
-- removal of a settled entry from the heap)
local function lua_table()
  local pending, pos = {}, {}       -- rawid -> cb, rawid -> heap index
  local hid, hdl, n = {}, {}, 0     -- heap of rawids and their deadlines

  local function put(i, id, dl)
    hid[i], hdl[i], pos[id] = id, dl, i
  end

  local function up(i, id, dl)
    while i > 1 do
      local parent = (i - i % 2) / 2
      if hdl[parent] <= dl then break end
      put(i, hid[parent], hdl[parent])
      i = parent
    end
    put(i, id, dl)
  end

  local function down(i, id, dl)
    while true do
      local c = 2 * i
      if c > n then break end
      if c < n and hdl[c + 1] < hdl[c] then c = c + 1 end
      if hdl[c] >= dl then break end
      put(i, hid[c], hdl[c])
      i = c
    end
    put(i, id, dl)
  end

  local function unheap(id)
    local i = pos[id]
    pos[id] = nil
    local lid, ldl = hid[n], hdl[n]
    hid[n], hdl[n] = nil, nil
    n = n - 1
    if i <= n then
      if i > 1 and ldl < hdl[(i - i % 2) / 2] then up(i, lid, ldl)
      else down(i, lid, ldl) end
    end
  end

  local t = {}
  function t.add(id, dl, fn)
    if pending[id] ~= nil then return nil, "duplicate id" end
    pending[id] = fn
    n = n + 1
    up(n, id, dl)
    return true
  end
  function t.settle(id)
    local fn = pending[id]
    if fn == nil then return nil end
    pending[id] = nil
    unheap(id)
    return fn
  end
  function t.next_expired(now)
    if n == 0 or hdl[1] > now then return nil end
    local id = hid[1]
    local fn = pending[id]
    pending[id] = nil
    unheap(id)
    return id, fn
  end
  return t
end
-- }======

-- {====== the runs; each returns its CPU time
local function c_settle()
  local p, waiters = core.pending{max_pending = N}, {}
  local t0 = clock()
  for i = 1, N do
    waiters[p:add(ids[i], deadlines[i])] = cb
  end
  for k = 1, N do
    local slot = p:settle(ids[order[k]])
    local fn = waiters[slot]
    waiters[slot] = nil
    fn()
  end
  local t = clock() - t0
  assert(p:count() == 0)
  return t
end

local function lua_settle()
  local p = lua_table()
  local t0 = clock()
  for i = 1, N do
    p.add(ids[i], deadlines[i], cb)
  end
  for k = 1, N do
    p.settle(ids[order[k]])()
  end
  return clock() - t0
end

local function c_expire()
  local p, waiters = core.pending{max_pending = N}, {}
  for i = 1, N do
    waiters[p:add(ids[i], deadlines[i])] = cb
  end
  local t0, n = clock(), 0
  while true do
    local slot = p:next_expired(math.huge)
    if not slot then break end
    local fn = waiters[slot]
    waiters[slot] = nil
    fn()
    n = n + 1
  end
  local t = clock() - t0
  assert(n == N)
  return t
end

local function lua_expire()
  local p = lua_table()
  for i = 1, N do
    p.add(ids[i], deadlines[i], cb)
  end
  local t0, n = clock(), 0
  while true do
    local id, fn = p.next_expired(math.huge)
    if not id then break end
    fn()
    n = n + 1
  end
  local t = clock() - t0
  assert(n == N)
  return t
end

local function best(f)
  local b = math.huge
  for _ = 1, RUNS do
    collectgarbage()
    local t = f()
    if t < b then b = t end
  end
  return b
end
-- }======

-- {====== memory held per pending entry with N pending
local function luakb()
  collectgarbage()
  collectgarbage()
  return collectgarbage("count")
end

local function c_memory()
  local before = luakb()
  local p, waiters = core.pending{max_pending = N}, {}
  for i = 1, N do
    waiters[p:add(ids[i], deadlines[i])] = cb
  end
  local luabytes = (luakb() - before) * 1024
  assert(#waiters == N)  -- keeps waiters alive until measured
  local s = p:stats()
  return s.bytes_per_entry, luabytes / N, s
end

local function lua_memory()
  local before = luakb()
  local p = lua_table()
  for i = 1, N do
    p.add(ids[i], deadlines[i], cb)
  end
  local bytes = (luakb() - before) * 1024
  assert(p.settle(ids[1]))  -- keep p alive until measured
  return bytes / N
end
-- }======

local cs, ls = best(c_settle), best(lua_settle)
local ce, le = best(c_expire), best(lua_expire)
local cbytes, wbytes, s = c_memory()
local lbytes = lua_memory()

local interp = rawget(_G, "jit") and jit.version or _VERSION
print(("### pending-id table, %d entries, %s (best of %d, CPU time)")
      :format(N, interp, RUNS))
print()
print("| measure | C core.pending | plain Lua | Lua / C |")
print("|---|---:|---:|---:|")
print(("| add %d with deadlines + settle all (random order) | %.1f ms | %.1f ms | %.2f |")
      :format(N, cs * 1e3, ls * 1e3, ls / cs))
print(("| add %d with deadlines (untimed) + expire all | %.1f ms | %.1f ms | %.2f |")
      :format(N, ce * 1e3, le * 1e3, le / ce))
print(("| bytes per pending entry, C blocks (stats().bytes_per_entry) | %.1f | | |")
      :format(cbytes))
print(("| bytes per pending entry, Lua heap (waiters[slot] / whole baseline) | %.1f | %.1f | |")
      :format(wbytes, lbytes))
print(("| bytes per pending entry, total | %.1f | %.1f | %.2f |")
      :format(cbytes + wbytes, lbytes, lbytes / (cbytes + wbytes)))
print()
print(("C table: capacity %d, %d bytes in C blocks; 56 bytes per entry at a full power-of-two capacity.")
      :format(s.capacity, s.bytes))
