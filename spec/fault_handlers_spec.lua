-- Faults in handlers, across two real processes: handlers that never
-- return, that raise inside nested calls back and forth, that are
-- cancelled while they wait on the other side. Whatever happens, each
-- request is answered exactly once (or, in profile mcp after a cancel,
-- never), and each request we send settles exactly once. Replies are
-- counted per id on the wire: the bytes this process wrote to the child and
-- read from it (spec/fault/support.lua's tap).
local F = dofile("spec/fault/support.lua")
local S = F.S
local loop = S.loop
local jrpc = require "jrpc"

-- The child (spec/fault/peer.lua) with a tap, our handlers for its calls back.
local function child_peer(methods, args, opts)
  local child, _, log = assert(F.peer(opts, args))
  local tap = F.tap(child)
  for name, fn in pairs(methods or {}) do child.peer:method(name, fn) end
  return child, tap, log
end

-- A callback that records each settlement (to count them).
local function recorder()
  local calls = {}
  return calls, function(err, result) calls[#calls + 1] = { err = err, result = result } end
end

describe("fault: handlers that never return", function()
  after_each(S.cleanup)

  it("a handler that waits forever: our timeout settles it once, the child answers our cancel once", function()
    S.run(function()
      local child, tap = child_peer()
      local calls, cb = recorder()
      local t0 = S.now()
      local id = child.peer:request("hang", {}, { timeout = 0.2 }, cb)
      assert.is_true(S.wait_until(function() return #calls == 1 end, 2))
      local took = S.since(t0)
      assert.is_true(took >= 0.195 and took < 0.6, "took " .. took)
      assert.are.equal("timeout", calls[1].err.code)
      -- we told it, and it answered -32800 exactly once; that late reply is dropped
      assert.is_true(S.wait_until(function() return child.peer:stats().unmatched == 1 end, 2))
      assert.are.same({ { jsonrpc = "2.0", method = "$/cancelRequest", params = { id = id } } },
        F.calls(tap.out, "$/cancelRequest"))
      local replies = F.responses(tap.into)
      assert.are.equal(1, #replies[id])
      assert.are.equal(-32800, replies[id][1].error.code)
      -- the connection is fine afterwards
      assert.are.equal(3, child.peer:request("subtract", { 5, 2 }, { timeout = 5 }))
      loop:sleep(0.1)
      assert.are.equal(1, #calls)
      assert.are.equal(1, #F.responses(tap.into)[id])
    end)
  end)

  it("a handler stuck in a loop: our timeout settles it, this program and other children carry on", function()
    S.run(function()
      local child, tap = child_peer()
      local calls, cb = recorder()
      child.peer:request("spin", {}, { timeout = 0.2 }, cb)
      local other = assert(S.spec_server())
      -- the stuck child cannot answer anything; the other one can
      local _, err = child.peer:request("subtract", { 1, 1 }, { timeout = 0.3 })
      assert.are.equal("timeout", err.code)
      assert.are.equal(1, #calls)
      assert.are.equal("timeout", calls[1].err.code)
      assert.are.equal(19, other.peer:request("subtract", { 42, 23 }, { timeout = 5 }))
      -- it ignores the end of its input: SIGTERM after the grace
      assert.are.same({ 0, 15 }, { child:shutdown(0.1) })
      assert.are.same({}, F.responses(tap.into))  -- nothing ever came back
      assert.are.equal(1, #calls)
      assert.are.same({ 0, 0 }, { other:shutdown() })
    end)
  end)

  it("our handler that never returns: the child's timeout settles it, we answer its cancel exactly once", function()
    S.run(function()
      local never_called = 0
      local child, tap = child_peer{ never = function()
        never_called = never_called + 1
        require("jrpc.workers").wait()  -- a jrpc wait nothing will end
      end }
      assert.are.equal("timeout", child.peer:request("ask_never", { timeout = 0.1 }, { timeout = 5 }))
      assert.are.equal(1, never_called)
      local asked = F.calls(tap.into, "never")
      assert.are.equal(1, #asked)
      local id = asked[1].id
      assert.are.same({ { jsonrpc = "2.0", method = "$/cancelRequest", params = { id = id } } },
        F.calls(tap.into, "$/cancelRequest"))
      loop:sleep(0.1)
      local replies = F.responses(tap.out)
      assert.are.equal(1, #replies[id])
      assert.are.same({ code = -32800, message = "Request cancelled" }, replies[id][1].error)
      assert.are.equal(0, child.peer:stats().in_flight)
      assert.are.same({ 0, 0 }, { child:shutdown() })
    end)
  end)
end)

describe("fault: a raise inside nested awaits", function()
  after_each(S.cleanup)

  -- outer (child) awaits middle (ours) awaits inner (child), which raises
  for _, case in ipairs{
    { raise = "jrpc", code = -32001, message = "innermost failed", data = { depth = 3 } },
    { raise = "lua", code = -32603, message = "Internal error" },
  } do
    it("the innermost raises (" .. case.raise .. "): each level is answered once, with the error", function()
      S.run(function()
        local middle_saw
        local child, tap = child_peer{ middle = function(p, ctx)
          local result, err = ctx.peer:request("inner", p)
          middle_saw = err
          if err then error(err) end  -- pass it on as it came
          return result
        end }
        local calls, cb = recorder()
        local outer_id = child.peer:request("outer", { raise = case.raise }, { timeout = 5 }, cb)
        assert.is_true(S.wait_until(function() return #calls == 1 end, 5))
        local err = calls[1].err
        assert.are.equal(case.code, err.code)
        assert.are.equal(case.message, err.message)
        assert.are.same(case.data, err.data)
        assert.are.equal(case.code, middle_saw.code)
        loop:sleep(0.05)
        assert.are.equal(1, #calls)
        -- on the wire: inner and outer answered once each by the child, middle once by us
        local from_child, from_us = F.responses(tap.into), F.responses(tap.out)
        local inner_id = F.calls(tap.out, "inner")[1].id
        local middle_id = F.calls(tap.into, "middle")[1].id
        assert.are.equal(1, #from_child[outer_id])
        assert.are.equal(1, #from_child[inner_id])
        assert.are.equal(1, #from_us[middle_id])
        assert.are.equal(case.code, from_us[middle_id][1].error.code)
        local n = 0
        for _, list in pairs(from_child) do n = n + #list end
        assert.are.equal(2, n)
        assert.are.equal(0, child.peer:stats().in_flight)
        assert.are.equal(0, child.peer:stats().pending)
        assert.are.same({ 0, 0 }, { child:shutdown() })
      end)
    end)
  end

  it("100 nested chains at once, half raising: every request answered exactly once", function()
    S.run(function()
      local child, tap = child_peer{ middle = function(p, ctx)
        loop:sleep(0.001 * (p.n % 7))
        local result, err = ctx.peer:request("inner", p)
        if err then error(err) end
        return result
      end }
      local results = {}
      for n = 1, 100 do
        child.peer:request("outer", { raise = n % 2 == 0 and "jrpc" or "no", n = n }, { timeout = 5 },
          function(err, r)
            assert.is_nil(results[n], "settled twice")
            results[n] = err and err.code or r
          end)
      end
      assert.is_true(S.wait_until(function()
        for n = 1, 100 do if results[n] == nil then return false end end
        return true
      end, 5))
      for n = 1, 100 do assert.are.equal(n % 2 == 0 and -32001 or "inner ok", results[n]) end
      loop:sleep(0.05)
      local from_child, from_us = F.responses(tap.into), F.responses(tap.out)
      local count_child, count_us = 0, 0
      for _, list in pairs(from_child) do
        assert.are.equal(1, #list)
        count_child = count_child + 1
      end
      for _, list in pairs(from_us) do
        assert.are.equal(1, #list)
        count_us = count_us + 1
      end
      assert.are.equal(200, count_child)  -- 100 outer + 100 inner
      assert.are.equal(100, count_us)     -- 100 middle
      assert.are.same({ 0, 0 }, { child:shutdown() })
    end)
  end)
end)

describe("fault: a request cancelled while its handler waits on the other side", function()
  after_each(S.cleanup)

  -- Our "slow" answers after 0.3 s; the child's wait_parent waits for it.
  local function slow(p)
    loop:sleep(0.3)
    return p.value
  end

  it("jsonrpc: settles once as cancelled here, answered -32800 once there, never again when the handler finishes", function()
    S.run(function()
      local child, tap = child_peer{ slow = slow }
      local calls, cb = recorder()
      local id = child.peer:request("wait_parent", { value = 42 }, { timeout = 5 }, cb)
      assert.is_true(S.wait_until(function() return #F.calls(tap.into, "slow") == 1 end, 2))
      assert.is_true(child.peer:cancel(id, "user gave up"))
      assert.are.equal(1, #calls)
      assert.are.equal("cancelled", calls[1].err.code)
      assert.are.equal("user gave up", calls[1].err.message)
      assert.is_false(child.peer:cancel(id))  -- once only
      -- our slow handler finishes; the child's handler gets 42 and returns
      local report
      assert.is_true(S.wait_until(function()
        report = child.peer:request("report", {}, { timeout = 5 })
        return report ~= jrpc.null
      end, 3))
      assert.are.same({ result = 42, cancelled = true }, report)
      loop:sleep(0.05)
      local replies = F.responses(tap.into)
      assert.are.equal(1, #replies[id])
      assert.are.same({ code = -32800, message = "Request cancelled" }, replies[id][1].error)
      local slow_id = F.calls(tap.into, "slow")[1].id
      assert.are.equal(1, #F.responses(tap.out)[slow_id])
      assert.are.equal(1, #calls)
      assert.are.equal(1, child.peer:stats().unmatched)  -- the -32800 came after we settled
      assert.are.same({ 0, 0 }, { child:shutdown() })
    end)
  end)

  it("mcp: the cancelled request is never answered, even when its handler finishes", function()
    S.run(function()
      local child, tap = child_peer({ slow = slow }, { "--profile", "mcp" }, { profile = "mcp" })
      local calls, cb = recorder()
      local id = child.peer:request("wait_parent", { value = 7 }, { timeout = 5 }, cb)
      assert.is_true(S.wait_until(function() return #F.calls(tap.into, "slow") == 1 end, 2))
      assert.is_true(child.peer:cancel(id, "user gave up"))
      assert.are.equal("cancelled", calls[1].err.code)
      assert.are.same({ { jsonrpc = "2.0", method = "notifications/cancelled",
        params = { requestId = id, reason = "user gave up" } } }, F.calls(tap.out, "notifications/cancelled"))
      local report
      assert.is_true(S.wait_until(function()
        report = child.peer:request("report", {}, { timeout = 5 })
        return report ~= jrpc.null
      end, 3))
      assert.are.same({ result = 7, cancelled = true }, report)
      loop:sleep(0.05)
      assert.is_nil(F.responses(tap.into)[id])
      assert.are.equal(1, #calls)
      assert.are.same({ 0, 0 }, { child:shutdown() })
    end)
  end)
end)
