-- Faults: the peer dies mid-request, closes its output but lives on, or
-- stops reading. Real child processes on real pipes and sockets.
--
-- Documented outcomes (lua/jrpc/uv/process.lua, stream.lua, README):
-- every pending request settles at once with code "closed" and a reason
-- that names the end ("process killed by signal 9 (SIGKILL)", "process
-- exited with code N", "process closed its stdout", "connection closed by
-- the other side"); later requests fail at once the same way; a connection
-- whose write queue is over max_write_queue is "busy": it stops reading and
-- new requests fail with code "busy". The program itself keeps running.
local F = dofile("spec/fault/support.lua")
local S = F.S
local loop = S.loop

-- `n` requests to `method` with callbacks; returns the list of settlements
-- (filled as they come) and a function counting them.
local function send_many(conn, method, n, params)
  local settled = {}
  for i = 1, n do
    conn.peer:request(method, params or { i, 1 }, nil, function(err, result)
      settled[#settled + 1] = { i = i, err = err, result = result }
    end)
  end
  return settled
end

-- Every settlement is an error with this code and message.
local function all_closed(settled, n, message)
  assert.are.equal(n, #settled)
  local seen = {}
  for _, s in ipairs(settled) do
    assert.is_nil(s.result)
    assert.are.equal("closed", s.err.code)
    assert.are.equal(message, s.err.message)
    assert.is_nil(seen[s.i], "request " .. s.i .. " settled twice")
    seen[s.i] = true
  end
end

-- The spec server still works for this program: a fresh child answers.
local function fresh_child_works()
  local child = assert(S.spec_server())
  assert.are.equal(19, child.peer:request("subtract", { 42, 23 }, { timeout = 5 }))
  assert.are.same({ 0, 0 }, { child:shutdown() })
end

describe("fault: the peer dies mid-request", function()
  after_each(S.cleanup)

  it("killed with SIGKILL while its handlers wait: all 50 pending settle at once, then a new child works", function()
    S.run(function()
      local child = assert(F.peer())
      -- 40 requests its handlers hold, 10 it answers, then we are sure it read them all
      local hanging = send_many(child, "hang", 40, {})
      for i = 1, 10 do assert.are.equal(i - 1, child.peer:request("subtract", { i, 1 }, { timeout = 5 })) end
      local stats = child.peer:stats()
      assert.are.equal(40, stats.pending)
      assert.are.equal(0, #hanging)
      local late = send_many(child, "hang", 10, {})  -- still in the pipe when it dies
      local t0 = S.now()
      assert.is_true(child:kill("sigkill"))
      assert.is_true(S.wait_until(function() return #hanging + #late == 50 end, 2))
      local took = S.since(t0)
      assert.is_true(took < 0.5, "settled after " .. took)
      all_closed(hanging, 40, "process killed by signal 9 (SIGKILL)")
      all_closed(late, 10, "process killed by signal 9 (SIGKILL)")
      assert.are.equal(0, child.peer:stats().pending)
      assert.are.same({ 0, 9 }, { child.exit_code, child.exit_signal })
      -- later requests fail at once, with the same reason, and nothing is written
      local _, err = child.peer:request("subtract", { 1, 1 })
      assert.are.equal("closed", err.code)
      assert.are.equal("process killed by signal 9 (SIGKILL)", err.message)
      fresh_child_works()
    end)
  end)

  it("exits by itself mid-request: pending settle with its exit code, requests sent meanwhile too", function()
    S.run(function()
      -- reads one request, answers nothing, exits 3
      local child = assert(F.actor{ { "readline" }, { "sleep", 50 }, { "exit", 3 } })
      local settled = send_many(child, "subtract", 20)
      -- keep sending while it dies: each settles, none is lost or doubled
      local extra = {}
      for i = 1, 30 do
        child.peer:request("subtract", { i, 1 }, nil, function(err) extra[#extra + 1] = { i = i, err = err } end)
        loop:sleep(0.005)
      end
      assert.is_true(S.wait_until(function() return #settled == 20 and #extra == 30 end, 2))
      all_closed(settled, 20, "process exited with code 3")
      for _, s in ipairs(extra) do
        assert.are.equal("closed", s.err.code)
        assert.are.equal("process exited with code 3", s.err.message)
      end
      assert.are.same({ 3, 0 }, { child.exit_code, child.exit_signal })
      assert.are.equal("process exited with code 3", child.close_reason)
      fresh_child_works()
    end)
  end)

  it("killed from outside with SIGTERM: the reason names the signal", function()
    S.run(function()
      local child = assert(F.peer())
      assert.are.equal(1, child.peer:request("subtract", { 2, 1 }, { timeout = 5 }))
      local settled = send_many(child, "hang", 5, {})
      loop:sleep(0.05)
      local status = S.shell("kill -TERM " .. child.pid)
      assert.are.equal(0, status)
      assert.is_true(S.wait_until(function() return #settled == 5 end, 2))
      all_closed(settled, 5, "process killed by signal 15 (SIGTERM)")
    end)
  end)

  it("a TCP server process killed mid-request: the client's pending requests settle at once", function()
    S.run(function()
      local stderr = ""
      local server = assert(F.peer({ stderr = function(c) stderr = stderr .. c end }, { "--listen" }))
      assert.is_true(S.wait_until(function() return stderr:find("\n") ~= nil end, 5), stderr)
      local port = tonumber(stderr:match("^listening on 127%.0%.0%.1:(%d+)\n"))
      assert.truthy(port, stderr)
      local conn = assert(loop:connect{ port = port, on_error = function() end })
      local closed_reason
      conn.on_close = function(reason) closed_reason = reason end
      local settled = send_many(conn, "hang", 25, {})
      assert.are.equal(4, conn.peer:request("subtract", { 5, 1 }, { timeout = 5 }))  -- it read them all
      local t0 = S.now()
      assert.is_true(server:kill("sigkill"))
      assert.is_true(S.wait_until(function() return #settled == 25 end, 2))
      assert.is_true(S.since(t0) < 0.5, "settled after " .. S.since(t0))
      all_closed(settled, 25, "connection closed by the other side")
      assert.are.equal("connection closed by the other side", closed_reason)
      fresh_child_works()
    end)
  end)
end)

describe("fault: the peer closes its output but stays alive", function()
  after_each(S.cleanup)

  it("settles what is pending with 'process closed its stdout'; the child lives on until shut down", function()
    S.run(function()
      -- reads a request, closes stdout, sleeps; ignores the end of its input
      local child = assert(F.actor{ { "readline" }, { "close_stdout" }, { "sleep", 30000 } })
      local settled = send_many(child, "subtract", 10)
      local t0 = S.now()
      assert.is_true(S.wait_until(function() return #settled == 10 end, 2))
      assert.is_true(S.since(t0) < 0.5, "settled after " .. S.since(t0))
      all_closed(settled, 10, "process closed its stdout")
      assert.is_nil(child.exit_code)  -- still running
      local _, err = child.peer:request("subtract", { 1, 1 })
      assert.are.equal("process closed its stdout", err.message)
      -- another child works meanwhile
      local other = assert(S.spec_server())
      assert.are.equal(3, other.peer:request("subtract", { 5, 2 }, { timeout = 5 }))
      -- the stubborn one: end of input ignored, so SIGTERM after the grace
      assert.are.same({ 0, 15 }, { child:shutdown(0.1) })
      assert.are.same({ 0, 0 }, { other:shutdown() })
    end)
  end)
end)

describe("fault: the peer stops reading", function()
  after_each(S.cleanup)

  local BOUND = 256 * 1024

  it("busy: bounded queue, new requests fail with busy, another connection keeps working", function()
    S.run(function()
      local before = F.mem()
      local stuck = assert(S.sh("exec sleep 30", { max_write_queue = BOUND }))  -- never reads
      local other = assert(S.spec_server())
      local params = { string.rep("x", 4000) }
      local accepted, busy = 0, nil
      for _ = 1, 10000 do
        local _, err = stuck.peer:request("update", params, nil, function() end)
        if stuck:busy() then
          local _, e = stuck.peer:request("update", params)
          busy = e
          break
        end
        assert.is_nil(err)
        accepted = accepted + 1
      end
      assert.truthy(busy, "never busy")
      assert.are.equal("busy", busy.code)
      assert.is_true(accepted >= BOUND / 4100, "accepted " .. accepted)
      local queued = stuck:write_queue_size()
      assert.is_true(queued > BOUND and queued <= BOUND + 4100, "queued " .. queued)
      -- meanwhile: 1000 requests to the other child, while we keep hammering the stuck one
      local done, hammered = 0, 0
      for i = 1, 1000 do
        other.peer:request("subtract", { i, 1 }, nil, function(err, r)
          assert.is_nil(err)
          assert.are.equal(i - 1, r)
          done = done + 1
        end)
        local _, err = stuck.peer:request("update", params)
        assert.are.equal("busy", err.code)
        hammered = hammered + 1
      end
      assert.is_true(S.wait_until(function() return done == 1000 end, 5))
      assert.are.equal(1000, hammered)
      -- nothing more was queued, and our memory stays within a few times what is queued
      assert.is_true(stuck:write_queue_size() <= queued, "queue grew to " .. stuck:write_queue_size())
      local grown = (F.mem() - before) * 1024
      assert.is_true(grown < 4 * BOUND, ("Lua memory grew by %d bytes"):format(grown))
      -- it dies: what it never read settles
      stuck:kill("sigkill")
      assert.is_true(S.wait_until(function() return stuck.peer:stats().pending == 0 end, 2))
      assert.are.same({ 0, 0 }, { other:shutdown() })
    end)
  end)

  it("busy with small messages: our memory stays within three times max_write_queue", function()
    -- one uv write per message costs far more than its bytes; the bound is
    -- on bytes, so many small messages must not multiply the memory held
    S.run(function()
      local before = F.mem()
      local stuck = assert(S.sh("exec sleep 30", { max_write_queue = BOUND }))
      local sent = 0
      while stuck.peer:notify("update", { sent }) do sent = sent + 1 end
      assert.is_true(sent > 1000, "sent " .. sent)
      local grown = (F.mem() - before) * 1024
      local queued = stuck:write_queue_size()
      assert.is_true(grown < 3 * BOUND, ("%d notifications of %d bytes queued (%d bytes, max_write_queue %d):"
        .. " Lua memory grew by %d bytes (%.0f per message)"):format(sent, math.floor(queued / sent), queued, BOUND, grown, grown / sent))
    end)
  end)

  it("a TCP client that sends but never reads makes its own connection busy, not the server", function()
    S.run(function()
      local server = assert(loop:listen{ port = 0, max_write_queue = 64 * 1024, on_error = function() end,
        methods = { echo = function(p) return p end, subtract = function(p) return p[1] - p[2] end } })
      local flooder = assert(S.spawn{ cmd = S.INTERP, args = { "spec/fault/flood.lua", tostring(server.port) },
        on_error = function() end })
      -- the flooder's connection fills and stops being read
      local flood_conn
      assert.is_true(S.wait_until(function()
        for conn in pairs(server.connections) do
          if conn:busy() then flood_conn = conn end
        end
        return flood_conn ~= nil
      end, 5))
      local handled = flood_conn.peer:stats().handled
      -- a well-behaved client is served meanwhile
      local client = assert(loop:connect{ port = server.port })
      for i = 1, 200 do
        assert.are.equal(i - 1, client.peer:request("subtract", { i, 1 }, { timeout = 5 }))
      end
      -- while busy, nothing more was read from the flooder
      assert.are.equal(handled, flood_conn.peer:stats().handled)
      local queued = flood_conn:write_queue_size()
      assert.is_true(queued > 64 * 1024 and queued < 64 * 1024 + 256 * 1024, "queued " .. queued)
      flooder:kill("sigkill")
      assert.is_true(S.wait_until(function() return flood_conn:closed() end, 2))
      server:close()
    end)
  end)
end)

describe("fault: what we send just before a shutdown or a close", function()
  after_each(S.cleanup)

  -- The LSP way to stop a server: request "shutdown", notify "exit", close.
  -- The reply to "shutdown" resumes us inside the read that brought it, so
  -- "exit" is written while that read is still being handled.
  for _, case in ipairs{
    { name = "shutdown()", stop = function(child) assert.are.same({ 0, 0 }, { child:shutdown() }) end },
    { name = "close()", stop = function(child)
      child:close("done")
      assert.is_true(S.wait_until(function() return child.exit_code ~= nil end, 3))
    end },
  } do
    it("a notification sent right after a reply, then " .. case.name .. ": the child still receives it", function()
      S.run(function()
        local child = assert(F.actor{ { "readline" }, { "write", '{"jsonrpc":"2.0","result":null,"id":1}\n' }, { "drain" } })
        assert.are.equal(S.null, child.peer:request("shutdown", {}, { timeout = 5 }))
        assert.is_true(child.peer:notify("exit", {}))
        case.stop(child)
        assert.are.equal(0, child.exit_code)
        -- what the child read (its stderr), and so what reached it
        local function got_exit() return child:stderr_text():find('"method":"exit"', 1, true) ~= nil end
        assert.is_true(S.wait_until(got_exit, 1), "the child read only: " .. child:stderr_text())
      end)
    end)
  end
end)
