-- Faults at scale: 100,000 requests pending when the connection closes.
-- All settle, exactly once each, with code "closed"; the pending table is
-- empty; and once the connection is gone our Lua memory is back where it
-- started (after a full collection, within a small tolerance).
--
-- Each case runs in a fresh interpreter (spec/fault/pending.lua, with the
-- interpreter under test), so that the memory it measures is its own and
-- not what earlier specs left in this process.
local F = dofile("spec/fault/support.lua")
local S = F.S

local N = 100000
local TOLERANCE_KIB = 1024  -- about 10 bytes per request

local function run(how)
  local status, out, err = S.shell(("timeout -s KILL 90 %s spec/fault/pending.lua %s %d"):format(S.INTERP, how, N))
  assert.are.equal(0, status, err)
  local chunk = assert(load(out, "=pending.lua output", "t", {}), out)
  return chunk()
end

describe("fault: 100,000 pending requests when the connection closes", function()
  for _, case in ipairs{
    { how = "kill", what = "the child is killed", message = "process killed by signal 9 (SIGKILL)" },
    { how = "close", what = "we close the connection", message = "giving up" },
  } do
    it(case.what .. ": 100,000 callbacks, each closed; 0 pending; memory back to its start", function()
      local r = run(case.how)
      assert.are.equal(N, r.pending_before)
      assert.is_true(r.drained, "the child did not read what we sent")
      assert.are.equal(0, r.settled_before)
      assert.are.equal(N, r.count)
      assert.are.same({ closed = N }, r.by_code)
      assert.are.same({ [case.message] = N }, r.by_message)
      assert.are.equal(0, r.pending_after)
      assert.are.equal(0, r.in_flight_after)
      assert.is_true(r.exited)
      -- linear, not quadratic; the bound leaves room for a loaded machine
      assert.is_true(r.took < 5, "settling took " .. r.took .. " s")
      assert.is_true(r.grown_kib < TOLERANCE_KIB, ("after %d requests settled and the connection was dropped, Lua memory"
        .. " is %.0f KiB above where it started (%.0f KiB while they were pending); Lua registry entries %d -> %d")
        :format(N, r.grown_kib, r.held_kib, r.registry_start, r.registry_end))
    end)
  end
end)
