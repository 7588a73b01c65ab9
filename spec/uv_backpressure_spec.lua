-- jrpc.uv write queue bound: a peer that does not read cannot make us
-- buffer without limit.
--
-- What happens at the bound (max_write_queue, bytes libuv holds unwritten):
-- once over it the connection is busy: it stops reading, and our new
-- requests, notifications and batches fail at once with code "busy" (the
-- message says how much is queued). What is queued stays queued and goes
-- out as the other side reads; below half the bound the connection reads
-- and sends again.
--
-- The backlog pause (pause_reading_at, default 64 KiB): while none of our
-- own requests awaits a response and more than that is queued, reading
-- stops until the queue is back at half of it; sending stays allowed.
local S = dofile("spec/uv_support.lua")
local loop = S.loop

local BOUND = 256 * 1024
local BIG = string.rep("x", 64 * 1024)

-- Send 64 KiB requests until one fails; returns how many were accepted,
-- the first failure, and the callbacks' results by index.
local function fill(conn, method)
  local results, accepted, failure = {}, 0, nil
  for i = 1, 1000 do
    conn.peer:request(method, { BIG }, nil, function(err, r)
      if err and err.code == "busy" and failure == nil and results[i] == nil then failure = err end
      results[i] = err or r
    end)
    if failure then break end
    accepted = i
  end
  return accepted, failure, results
end

describe("jrpc.uv write queue bound", function()
  after_each(S.cleanup)

  it("fails new requests with busy while a child does not read, and memory stays bounded", function()
    S.run(function()
      local child = assert(S.sh("exec sleep 30", { max_write_queue = BOUND }))  -- never reads stdin
      local accepted, failure = fill(child, "update")
      assert.truthy(failure, "never busy")
      assert.are.equal("busy", failure.code)
      local queued = child:write_queue_size()
      assert.are.equal(("write queue full: %d bytes not yet written (max_write_queue %d)"):format(queued, BOUND),
        failure.message)
      assert.is_true(queued > BOUND and queued <= BOUND + #BIG + 100, "queued " .. queued)
      assert.is_true(accepted >= BOUND / #BIG, "accepted " .. accepted)
      assert.are.equal(failure.message, child:busy())
      -- from now on everything fails at once and nothing more is queued
      collectgarbage()
      local before = collectgarbage("count")
      for _ = 1, 1000 do
        local _, err = child.peer:request("update", { BIG })
        assert.are.equal("busy", err.code)
      end
      local ok, err = child.peer:notify("update", { BIG })
      assert.is_nil(ok)
      assert.are.same({ code = "busy", message = failure.message }, err)
      local answers = child.peer:batch{ { "update", { 1 } }, { "update", { 2 }, notify = true } }
      assert.are.equal("busy", answers[1].error.code)
      assert.are.equal(queued, child:write_queue_size())
      collectgarbage()
      assert.is_true(collectgarbage("count") - before < 1024, "grew by KiB " .. (collectgarbage("count") - before))
      -- the requests that were accepted settle when the child goes
      local pending = child.peer:stats().pending
      assert.are.equal(accepted, pending)
      child:kill("sigkill")
      assert.is_true(S.wait_until(function() return child:closed() end))
      assert.are.equal(0, child.peer:stats().pending)
    end, 30)  -- a generous watchdog: the machine may be busy (it normally takes 0.3 s)
  end)

  it("sends again once the other side reads what was queued", function()
    S.run(function()
      -- the spec server, after a pause in which it reads nothing
      local child = assert(S.sh("sleep 0.3; exec " .. S.INTERP .. " examples/spec_server.lua",
        { max_write_queue = BOUND }))
      local accepted, failure, results = fill(child, "update")
      assert.are.equal("busy", failure.code)
      local function state()
        return ("queued %d, pending %d, exit %s, closed %s"):format(child:write_queue_size(),
          child.peer:stats().pending, tostring(child.exit_code), tostring(child.close_reason))
      end
      assert.is_true(S.wait_until(function() return child:busy() == nil end, 10), state())
      assert.is_true(S.wait_until(function() return child.peer:stats().pending == 0 end, 10), state())
      for i = 1, accepted do assert.are.equal(S.null, results[i], "request " .. i) end
      assert.is_true(child:write_queue_size() <= BOUND / 2)
      assert.are.equal(19, child.peer:request("subtract", { 42, 23 }))
      child:shutdown()
    end, 30)
  end)

  it("stops reading while busy, so a child that sends requests but never reads the replies is not served without bound", function()
    S.run(function()
      -- requests of 1 KiB each, without end; our replies echo them; it never reads
      local child = assert(S.spawn{ cmd = S.INTERP, args = { "-e", [[
local req = '{"jsonrpc":"2.0","method":"echo","params":["]] .. string.rep("y", 1000) .. [["],"id":1}\n'
while true do io.write(req) end
]] }, max_write_queue = 64 * 1024, on_error = function() end })
      child.peer:method("echo", function(p) return p end)
      assert.is_true(S.wait_until(function() return child:busy() ~= nil end, 5))
      local handled = child.peer:stats().handled
      loop:sleep(0.3)
      -- nothing more was read: the handled count and the queue stay put
      assert.are.equal(handled, child.peer:stats().handled)
      local queued = child:write_queue_size()
      assert.is_true(queued > 64 * 1024 and queued < 64 * 1024 + 128 * 1024, "queued " .. queued)
    end, 30)
  end)

  -- a child that writes 1 KiB echo requests without end and reads nothing;
  -- `prefix` runs first in its shell
  local function flooder(prefix, count)
    local loop_line = count and ("for _ = 1, " .. count .. [[ do io.write(req) end io.stdout:flush() os.execute("sleep 30")]])
      or "while true do io.write(req) end"
    return prefix .. "exec " .. S.INTERP .. [[ -e '
local req = [=[{"jsonrpc":"2.0","method":"echo","params":["]] .. string.rep("y", 1000) .. [["],"id":1}
]=]
]] .. loop_line .. "'"
  end

  it("stops reading while its replies back up and it awaits nothing, yet may still send", function()
    S.run(function()
      local child = assert(S.sh(flooder("")))
      child.peer:method("echo", function(p) return p end)
      assert.is_true(S.wait_until(function() return child:write_queue_size() > 64 * 1024 end, 5))
      loop:sleep(0.2)
      local handled = child.peer:stats().handled
      loop:sleep(0.3)
      assert.are.equal(handled, child.peer:stats().handled)  -- nothing more was read
      local queued = child:write_queue_size()
      assert.is_true(queued > 64 * 1024 and queued < 64 * 1024 + 128 * 1024, "queued " .. queued)
      assert.is_nil(child:busy())                          -- not the hard bound: sending is allowed
      assert.is_true(child.peer:notify("note", { 1 }))
    end, 30)
  end)

  it("reads on while a request of its own awaits a response, up to the hard bound", function()
    S.run(function()
      local child = assert(S.sh(flooder(""), { max_write_queue = 256 * 1024 }))
      child.peer:method("echo", function(p) return p end)
      local settled
      child.peer:request("never_answered", {}, nil, function(err) settled = err end)
      assert.is_true(S.wait_until(function() return child:busy() ~= nil end, 5),
        "queued " .. child:write_queue_size())
      assert.is_true(child:write_queue_size() > 256 * 1024)
      assert.are.equal(1, child.link:awaiting())
      child:kill("sigkill")
      assert.is_true(S.wait_until(function() return settled ~= nil end, 5))
      assert.are.equal(0, child.link:awaiting())
    end, 30)
  end)

  it("reads again once the other side takes the backlog", function()
    S.run(function()
      -- 500 requests; the child's stdin is drained only after 0.6 s (an
      -- asynchronous list gets /dev/null as stdin: it reads a copy, fd 3)
      local child = assert(S.sh(flooder("exec 3<&0; (sleep 0.6; exec cat <&3 >/dev/null) & ", 500)))
      child.peer:method("echo", function(p) return p end)
      loop:sleep(0.3)
      local early = child.peer:stats().handled
      assert.is_true(early < 500, "handled " .. early .. " before the backlog was read")
      assert.is_true(child:write_queue_size() < 64 * 1024 + 128 * 1024)
      assert.is_true(S.wait_until(function() return child.peer:stats().handled == 500 end, 10),
        "handled " .. child.peer:stats().handled)
      child:kill("sigkill")
    end, 30)
  end)

  it("rejects a pause_reading_at that is not a positive number", function()
    for _, bad in ipairs({ 0, -1, "64" }) do
      assert.has_error(function() S.sh("exec sleep 1", { pause_reading_at = bad }) end,
        "pause_reading_at must be a positive number")
    end
  end)
end)
