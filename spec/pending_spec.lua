-- Pending-id table (src/pending.c): CORE_API.md, section "Pending-id table".
-- Keys are id texts (rawid): the exact JSON text of an id.
local core = require "jrpc.core"

-- pcall f, require that it raised an error containing 'text' (plain)
local function raises(text, f, ...)
  local ok, err = pcall(f, ...)
  assert.is_false(ok, "expected an error containing: " .. text)
  assert.is_truthy(tostring(err):find(text, 1, true),
    "error '" .. tostring(err) .. "' lacks '" .. text .. "'")
end

local function nresults(...) return select("#", ...) end

-- a small deterministic PRNG, identical under Lua 5.4 and LuaJIT
local function prng(seed)
  local x = seed
  return function(n)  -- integer in [1, n]; products stay below 2^53
    x = (x * 16807) % 2147483647
    return x % n + 1
  end
end

local function shuffle(t, rand)
  for i = #t, 2, -1 do
    local j = rand(i)
    t[i], t[j] = t[j], t[i]
  end
  return t
end

describe("core.pending", function()

  describe("construction", function()
    it("returns a jrpc.Pending userdata with the documented metatable", function()
      local p = core.pending{max_pending = 10}
      assert.equal("userdata", type(p))
      local mt = getmetatable(p)
      assert.equal(debug.getregistry()["jrpc.Pending"], mt)
      assert.equal("function", type(mt.__gc))
      assert.equal("function", type(mt.__tostring))
      assert.equal("table", type(mt.__index))
      assert.matches("^jrpc%.Pending %(0/10%): ", tostring(p))
      p:add("1")
      assert.matches("^jrpc%.Pending %(1/10%): ", tostring(p))
    end)

    it("defaults max_pending to 100000", function()
      assert.equal(100000, core.pending():stats().max_pending)
      assert.equal(100000, core.pending{}:stats().max_pending)
      assert.equal(7, core.pending{max_pending = 7}:stats().max_pending)
      assert.equal(1, core.pending{max_pending = 1}:stats().max_pending)
    end)

    it("raises on bad options", function()
      raises("table expected, got number", core.pending, 5)
      raises("table expected, got string", core.pending, "x")
      raises("max_pending: number expected, got string", core.pending,
        {max_pending = "10"})
      raises("max_pending: number expected, got boolean", core.pending,
        {max_pending = true})
      raises("max_pending must be an integer", core.pending, {max_pending = 0})
      raises("max_pending must be an integer", core.pending, {max_pending = -1})
      raises("max_pending must be an integer", core.pending, {max_pending = 1.5})
      raises("max_pending must be an integer", core.pending, {max_pending = 2^40})
      raises("max_pending must be an integer", core.pending, {max_pending = 0/0})
    end)
  end)

  describe("add / settle / cancel", function()
    it("settles in any order and returns the slot given by add", function()
      local p = core.pending{}
      assert.equal(1, p:add("1"))
      assert.equal(2, p:add("2", 10))
      assert.equal(3, p:add('"x"'))
      assert.equal(3, p:count())
      assert.equal(2, p:settle("2"))
      assert.equal(3, p:settle('"x"'))
      assert.equal(1, p:settle("1"))
      assert.equal(0, p:count())
      assert.is_nil(p:settle("1"))  -- late reply
    end)

    it("returns integer slots", function()
      if not math.type then return end  -- LuaJIT: numbers only
      local p = core.pending{}
      assert.equal("integer", math.type(p:add("1")))
      assert.equal("integer", math.type(p:count()))
      assert.equal("integer", math.type(p:settle("1")))
    end)

    it("tells 2 and \"2\" apart", function()
      local p = core.pending{}
      assert.equal(1, p:add("2"))
      assert.equal(2, p:add('"2"'))
      assert.equal(2, p:settle('"2"'))
      assert.is_nil(p:settle('"2"'))
      assert.equal(1, p:settle("2"))
    end)

    it("rejects duplicate ids until the first one is settled", function()
      local p = core.pending{}
      assert.equal(1, p:add("7", 5))
      local slot, err = p:add("7")
      assert.is_nil(slot)
      assert.equal("duplicate id", err)
      assert.equal(2, nresults(p:add("7", 1)))
      assert.equal(1, p:count())
      assert.equal(5, p:next_deadline())  -- the failed add left no trace
      assert.equal(1, p:settle("7"))
      assert.equal(1, p:add("7"))
    end)

    it("enforces max_pending", function()
      local p = core.pending{max_pending = 2}
      assert.equal(1, p:add("a"))
      assert.equal(2, p:add("b", 1))
      local slot, err = p:add("c")
      assert.is_nil(slot)
      assert.equal("too many pending requests", err)
      assert.same({nil, "duplicate id"}, {p:add("a")})  -- checked first
      assert.equal(2, p:count())
      assert.equal(2, p:settle("b"))
      assert.equal(2, p:add("c"))
      assert.same({nil, "too many pending requests"}, {p:add("d")})
    end)

    it("reuses freed slots, last freed first", function()
      local p = core.pending{}
      for i = 1, 5 do assert.equal(i, p:add(tostring(i))) end
      assert.equal(2, p:settle("2"))
      assert.equal(4, p:cancel("4"))
      assert.equal(4, p:add("x"))
      assert.equal(2, p:add("y"))
      assert.equal(6, p:add("z"))
      assert.equal(2, p:settle("y"))
      assert.equal(2, p:add("w", 3))
    end)

    it("cancel removes like settle but counts nothing", function()
      local p = core.pending{}
      p:add("1", 4)
      assert.equal(1, p:cancel("1"))
      assert.is_nil(p:cancel("1"))
      assert.is_nil(p:next_deadline())
      local s = p:stats()
      assert.equal(0, s.settled)
      assert.equal(0, s.unmatched)
      assert.equal(0, s.pending)
    end)
  end)

  describe("deadlines", function()
    it("next_deadline is nil when nothing has a deadline", function()
      local p = core.pending{}
      assert.is_nil(p:next_deadline())
      p:add("1")
      assert.is_nil(p:next_deadline())
      assert.equal(1, nresults(p:next_deadline()))
      assert.equal(0, nresults(p:next_expired(math.huge)))
      p:add("2", 7.5)
      p:add("3", 2.25)
      p:add("4")
      assert.equal(2.25, p:next_deadline())
    end)

    it("expire in deadline order, only when due", function()
      local p = core.pending{}
      p:add("a", 30)
      p:add("b", 10)
      p:add("c")           -- no deadline: never expires
      p:add("d", 20)
      assert.equal(0, nresults(p:next_expired(9.999)))
      assert.same({2, "b"}, {p:next_expired(10)})  -- deadline <= now
      assert.equal(0, nresults(p:next_expired(19)))
      assert.same({4, "d"}, {p:next_expired(25)})
      assert.same({1, "a"}, {p:next_expired(1e9)})
      assert.equal(0, nresults(p:next_expired(math.huge)))
      assert.equal(1, p:count())
      assert.equal(3, p:settle("c"))
      assert.equal(3, p:stats().expired)
    end)

    it("expire 1000 shuffled deadlines in order, mixed with undated ids", function()
      local rand = prng(1)
      local p = core.pending{}
      local order = {}
      for i = 1, 1000 do order[i] = i end
      shuffle(order, rand)
      local slotof = {}
      for k, i in ipairs(order) do
        assert.equal(2 * k - 1, p:add("d" .. i, i / 8))
        assert.equal(2 * k, p:add("u" .. i))
        slotof[i] = 2 * k - 1
      end
      assert.equal(1 / 8, p:next_deadline())
      for i = 1, 1000 do
        local slot, id = p:next_expired(i / 8)
        assert.equal("d" .. i, id)
        assert.equal(slotof[i], slot)
        assert.equal(0, nresults(p:next_expired(i / 8)))
      end
      assert.is_nil(p:next_deadline())
      assert.equal(1000, p:count())
      assert.equal(1000, p:stats().expired)
    end)

    it("settle and cancel take an entry out of the heap", function()
      local p = core.pending{}
      p:add("a", 10)
      p:add("b", 5)
      p:add("c", 7)
      assert.equal(5, p:next_deadline())
      assert.equal(2, p:settle("b"))
      assert.equal(7, p:next_deadline())
      assert.equal(3, p:cancel("c"))
      assert.equal(10, p:next_deadline())
      assert.same({1, "a"}, {p:next_expired(100)})
      assert.equal(0, nresults(p:next_expired(100)))
      assert.is_nil(p:next_deadline())
    end)

    it("keeps heap order when entries leave from the middle", function()
      local rand = prng(7)
      local p = core.pending{}
      local ids = {}
      for i = 1, 2000 do ids[i] = i end
      shuffle(ids, rand)
      for _, i in ipairs(ids) do p:add(tostring(i), i) end
      for i = 2, 2000, 3 do p:settle(tostring(i)) end   -- drop a third
      for i = 3, 2000, 3 do p:cancel(tostring(i)) end   -- and another
      local expect = {}
      for i = 1, 2000, 3 do expect[#expect + 1] = tostring(i) end
      local got = {}
      while true do
        local slot, id = p:next_expired(math.huge)
        if not slot then break end
        got[#got + 1] = id
      end
      assert.same(expect, got)
    end)

    it("raises on a non-number or NaN deadline or now", function()
      local p = core.pending{}
      raises("number expected, got string", p.add, p, "1", "5")
      raises("number expected, got table", p.add, p, "1", {})
      raises("time is NaN", p.add, p, "1", 0/0)
      raises("number expected, got no value", p.next_expired, p)
      raises("number expected, got string", p.next_expired, p, "1")
      raises("time is NaN", p.next_expired, p, 0/0)
      assert.equal(0, p:count())
    end)

    it("accepts infinite deadlines", function()
      local p = core.pending{}
      p:add("inf", math.huge)
      p:add("ninf", -math.huge)
      assert.equal(-math.huge, p:next_deadline())
      assert.same({2, "ninf"}, {p:next_expired(-1e308)})
      assert.equal(0, nresults(p:next_expired(1e308)))
      assert.same({1, "inf"}, {p:next_expired(math.huge)})
    end)
  end)

  describe("pop", function()
    it("drains every entry exactly once, then returns nothing", function()
      local p = core.pending{}
      local want = {}
      for i = 1, 300 do
        local id = tostring(i)
        want[p:add(id, (i % 3 == 0) and i or nil)] = id
      end
      p:settle("150")
      want[150] = nil
      local seen, n = {}, 0
      while true do
        local slot, id = p:pop()
        if slot == nil then break end
        assert.is_nil(seen[slot])
        assert.equal(want[slot], id)
        seen[slot] = true
        n = n + 1
      end
      assert.equal(299, n)
      assert.equal(0, p:count())
      assert.is_nil(p:next_deadline())
      assert.equal(0, nresults(p:pop()))
      assert.equal(1, p:stats().settled)  -- pop counts as nothing
      assert.equal(0, p:stats().expired)
    end)

    it("keeps the heap valid while popping", function()
      local p = core.pending{}
      for i = 1, 50 do p:add("d" .. i, 100 - i) end
      for i = 1, 50 do p:add("u" .. i) end
      for _ = 1, 75 do p:pop() end        -- all undated, then 25 dated
      local last = -math.huge
      local n = 0
      while p:next_deadline() do
        local d = p:next_deadline()
        assert.is_true(d >= last)
        last = d
        assert.equal(2, nresults(p:next_expired(d)))
        n = n + 1
      end
      assert.equal(25, n)
      assert.equal(0, p:count())
    end)
  end)

  describe("stats", function()
    it("counts settled, unmatched and expired exactly", function()
      local p = core.pending{max_pending = 50}
      p:add("1", 1)
      p:add("2", 2)
      p:add("3")
      p:add("4")
      p:settle("3")
      p:settle("3")      -- late: unmatched
      p:settle("99")     -- unknown: unmatched
      p:cancel("4")
      p:cancel("98")     -- not counted
      p:next_expired(1.5)
      local s = p:stats()
      assert.equal(1, s.pending)
      assert.equal(1, s.settled)
      assert.equal(2, s.unmatched)
      assert.equal(1, s.expired)
      assert.equal(50, s.max_pending)
      p:pop()
      s = p:stats()
      assert.same({0, 1, 2, 1}, {s.pending, s.settled, s.unmatched, s.expired})
    end)

    it("reports the exact memory held per entry", function()
      local p = core.pending{max_pending = 8}
      local s = p:stats()
      assert.equal(0, s.bytes)        -- nothing allocated before the first add
      assert.equal(0, s.bytes_per_entry)
      for i = 1, 8 do p:add(tostring(i), i) end
      s = p:stats()
      assert.equal(8, s.capacity)
      -- 40-byte entry + 4-byte order slot + 8-byte deadline slot
      -- + 4-byte bucket head
      assert.equal(8 * 56, s.bytes)
      assert.equal(56, s.bytes_per_entry)
    end)

    it("counts long keys in bytes", function()
      local p = core.pending{max_pending = 8}
      p:add("1")
      local base = p:stats().bytes
      p:add(string.rep("k", 23))                -- inline
      assert.equal(base, p:stats().bytes)
      p:add(string.rep("k", 24))                -- allocated
      assert.equal(base + 24, p:stats().bytes)
      p:add(string.rep("q", 5000))
      assert.equal(base + 5024, p:stats().bytes)
      p:settle(string.rep("k", 24))
      assert.equal(base + 5000, p:stats().bytes)
      p:pop()
      assert.equal(base, p:stats().bytes)
    end)
  end)

  describe("keys", function()
    it("handles short/long boundary, >1 KiB and 100 KiB keys", function()
      local p = core.pending{}
      local keys = {
        string.rep("a", 23), string.rep("a", 24), string.rep("a", 22),
        string.rep("b", 1025), string.rep("b", 1024) .. "c",
        string.rep("z", 100 * 1024), "",
      }
      for i, k in ipairs(keys) do assert.equal(i, p:add(k, i)) end
      for _, k in ipairs(keys) do
        assert.same({nil, "duplicate id"}, {p:add(k)})
      end
      assert.is_nil(p:settle(string.rep("b", 1026)))
      assert.equal(5, p:settle(string.rep("b", 1024) .. "c"))
      assert.equal(2, p:cancel(string.rep("a", 24)))
      assert.same({1, string.rep("a", 23)}, {p:next_expired(1)})
      assert.same({3, string.rep("a", 22)}, {p:next_expired(3)})
      assert.same({4, string.rep("b", 1025)}, {p:next_expired(4)})
      assert.same({6, string.rep("z", 100 * 1024)}, {p:next_expired(6)})
      assert.same({7, ""}, {p:next_expired(7)})
      assert.equal(0, p:count())
    end)

    it("treats NUL bytes as ordinary bytes", function()
      local p = core.pending{}
      assert.equal(1, p:add("a\0b"))
      assert.equal(2, p:add("a\0c"))
      assert.equal(3, p:add("a"))
      assert.equal(4, p:add("\0"))
      local long = string.rep("\0", 40) .. "x"
      assert.equal(5, p:add(long, 1))
      assert.equal(6, p:add(string.rep("\0", 41), 2))
      assert.equal(2, p:settle("a\0c"))
      assert.is_nil(p:settle("a\0"))
      assert.same({5, long}, {p:next_expired(1)})
      local got = {}
      while true do
        local slot, id = p:pop()
        if not slot then break end
        got[slot] = id
      end
      assert.same({[1] = "a\0b", [3] = "a", [4] = "\0",
                   [6] = string.rep("\0", 41)}, got)
    end)

    it("takes an integer for its own text, without a string", function()
      local p = core.pending{}
      assert.equal(1, p:add(17, 5))
      assert.same({nil, "duplicate id"}, {p:add("17")})
      assert.equal(2, p:add("-3"))
      assert.same({nil, "duplicate id"}, {p:add(-3)})
      assert.equal(3, p:add(0))
      assert.equal(1, p:settle("17"))
      assert.equal(2, p:cancel(-3))
      assert.equal(3, p:settle(0))
      assert.equal(3, p:add(9007199254740992))  -- 2^53 (slots are reused last freed first)
      assert.same({3, "9007199254740992"}, {p:pop()})
      assert.equal(0, p:count())
    end)

    it("raises on ids that are neither strings nor integers, and a wrong self", function()
      local p = core.pending{}
      raises("string or integer expected, got number", p.add, p, 2.5)
      raises("string or integer expected, got nil", p.add, p, nil)
      raises("string or integer expected, got no value", p.add, p)
      raises("string or integer expected, got number", p.settle, p, 0.5)
      raises("string or integer expected, got table", p.cancel, p, {})
      raises("string or integer expected, got number", p.add, p, 2^53 * 4 + 0.5 * 0)
      if rawget(_G, "jit") then
        assert.equal(1, p:add(2.0))  -- LuaJIT: numbers are doubles
        assert.equal(1, p:settle("2"))
      else
        raises("string or integer expected, got number", p.add, p, 2.0)
      end
      raises("jrpc.Pending expected", p.add, {}, "1")
      raises("jrpc.Pending expected", p.count, io.stdout)
      raises("jrpc.Pending expected", p.stats, nil)
      assert.equal(0, p:count())
      assert.equal(0, p:stats().unmatched)
    end)
  end)

  describe("scale", function()
    it("adds 100,000 ids and pops them all with distinct slots", function()
      local N = 100000
      local p = core.pending{max_pending = N}
      for i = 1, N do
        assert(p:add(tostring(i), (i * 7919) % N) == i)
      end
      assert.equal(N, p:count())
      assert.same({nil, "too many pending requests"}, {p:add("x")})
      local s = p:stats()
      assert.equal(N, s.capacity)
      -- 100000 entries of 40 + 4 + 8 bytes + 131072 bucket heads of 4
      assert.equal(N * 52 + 131072 * 4, s.bytes)
      local seen, n = {}, 0
      while true do
        local slot, id = p:pop()
        if not slot then break end
        assert(slot >= 1 and slot <= N and not seen[slot])
        assert(id == tostring(slot))
        seen[slot] = true
        n = n + 1
      end
      assert.equal(N, n)
      assert.equal(0, p:count())
      assert.is_nil(p:next_deadline())
      -- every slot is free again: the next adds reuse them, not N + 1
      assert(p:add("again") <= N)
    end)

    it("matches a plain Lua model under random operations", function()
      local rand = prng(12345)
      local p = core.pending{max_pending = 300}
      local live, slots, count = {}, {}, 0   -- id -> {slot, deadline}
      local settled, unmatched, expired = 0, 0, 0
      local function mindl()
        local m
        for _, e in pairs(live) do
          if e.dl and (not m or e.dl < m) then m = e.dl end
        end
        return m
      end
      for step = 1, 20000 do
        local op = rand(10)
        local id = tostring(rand(400))
        if op <= 4 then
          local dl = (rand(2) == 1) and (rand(1000000) + step / 1e6) or nil
          local slot, err = p:add(id, dl)
          if live[id] then
            assert.equal("duplicate id", err)
          elseif count == 300 then
            assert.equal("too many pending requests", err)
          else
            assert(slot and not slots[slot], "slot in use")
            live[id] = {slot = slot, dl = dl}
            slots[slot] = id
            count = count + 1
          end
        elseif op <= 7 then
          local slot
          if op == 7 then slot = p:cancel(id) else slot = p:settle(id) end
          if live[id] then
            assert.equal(live[id].slot, slot)
            slots[slot], live[id] = nil, nil
            count = count - 1
            if op ~= 7 then settled = settled + 1 end
          else
            assert.is_nil(slot)
            if op ~= 7 then unmatched = unmatched + 1 end
          end
        elseif op <= 9 then
          local m = mindl()
          assert.equal(m, p:next_deadline())
          local now = rand(1000000)
          local slot, xid = p:next_expired(now)
          if m and m <= now then
            assert.equal(live[xid].dl, m)
            assert.equal(live[xid].slot, slot)
            slots[slot], live[xid] = nil, nil
            count = count - 1
            expired = expired + 1
          else
            assert.is_nil(slot)
          end
        else
          local slot, xid = p:pop()
          if count == 0 then
            assert.is_nil(slot)
          else
            assert.equal(live[xid].slot, slot)
            slots[slot], live[xid] = nil, nil
            count = count - 1
          end
        end
        assert.equal(count, p:count())
      end
      local s = p:stats()
      assert.same({count, settled, unmatched, expired},
                  {s.pending, s.settled, s.unmatched, s.expired})
    end)
  end)

  describe("isolation", function()
    it("two tables with different max_pending do not affect each other", function()
      local small = core.pending{max_pending = 1}
      local big = core.pending{max_pending = 3}
      assert.equal(1, small:add("1", 5))
      assert.same({nil, "too many pending requests"}, {small:add("2")})
      assert.equal(1, big:add("1", 9))
      assert.equal(2, big:add("2"))
      assert.equal(3, big:add("3"))
      assert.same({nil, "too many pending requests"}, {big:add("4")})
      assert.equal(1, small:settle("1"))   -- same id text, other table
      assert.equal(0, small:count())
      assert.equal(3, big:count())
      assert.equal(9, big:next_deadline())
      assert.is_nil(small:next_deadline())
      assert.equal(1, small:stats().max_pending)
      assert.equal(3, big:stats().max_pending)
      assert.equal(1, small:stats().settled)
      assert.equal(0, big:stats().settled)
      assert.equal(1, small:add("9"))      -- room again in the small one
      assert.same({nil, "too many pending requests"}, {big:add("9")})
    end)

    it("is freed by the garbage collector, long keys included", function()
      local mt = debug.getregistry()["jrpc.Pending"]
      local gc = mt.__gc
      do
        local p = core.pending{}
        for i = 1, 1000 do p:add(string.rep("x", 30) .. i, i) end
      end
      collectgarbage()
      collectgarbage()
      -- __gc is idempotent; a collected table refuses further use
      local p = core.pending{}
      p:add(string.rep("y", 64))
      gc(p)
      gc(p)
      raises("jrpc.Pending is closed", p.add, p, "1")
      raises("jrpc.Pending is closed", p.count, p)
    end)
  end)
end)
