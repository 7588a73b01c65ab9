-- jrpc.uv child processes: real children on real pipes (libuv gives them
-- socket pairs), their exit, their stderr, their shutdown.
local S = dofile("spec/uv_support.lua")
local loop = S.loop

describe("jrpc.uv spawn", function()
  after_each(S.cleanup)

  it("answers 1000 concurrent requests from the spec server, every reply matched", function()
    S.run(function()
      local child = assert(S.spec_server())
      local results, settled = {}, 0
      for i = 1, 1000 do
        child.peer:request("subtract", { i * 3, i }, nil, function(err, result)
          results[i] = err or result
          settled = settled + 1
        end)
      end
      assert.is_true(S.wait_until(function() return settled == 1000 end))
      for i = 1, 1000 do assert.are.equal(2 * i, results[i]) end
      -- and one from this coroutine, reading like a blocking call
      assert.are.equal(19, child.peer:request("subtract", { minuend = 42, subtrahend = 23 }))
      assert.are.same({ 0, 0 }, { child:shutdown() })
      assert.is_true(child:closed())
    end)
  end)

  it("settles every pending request at once with closed when the child is killed", function()
    S.run(function()
      local child = assert(S.sh("exec sleep 30"))  -- never answers, keeps stdout open
      local errs = {}
      for i = 1, 10 do
        child.peer:request("subtract", { i, 1 }, nil, function(err) errs[#errs + 1] = err end)
      end
      loop:sleep(0.05)
      assert.are.equal(0, #errs)
      local t0 = S.now()
      assert.is_true(child:kill("sigkill"))
      assert.is_true(S.wait_until(function() return #errs == 10 end, 2))
      assert.is_true(S.since(t0) < 0.5, "settled after " .. S.since(t0))
      for _, err in ipairs(errs) do
        assert.are.equal("closed", err.code)
        assert.are.equal("process killed by signal 9 (SIGKILL)", err.message)
      end
      assert.are.equal(9, child.exit_signal)
      assert.is_true(child:closed())
      -- later requests fail at once, with the same reason
      local _, err = child.peer:request("subtract", { 1, 1 })
      assert.are.equal("process killed by signal 9 (SIGKILL)", err.message)
    end)
  end)

  it("reads replies written just before the exit, then settles the rest with the exit code", function()
    S.run(function()
      local child = assert(S.sh([[read x; echo '{"jsonrpc":"2.0","result":7,"id":1}'; exit 3]]))
      local first, second
      child.peer:request("subtract", { 8, 1 }, nil, function(err, r) first = err or r end)
      child.peer:request("subtract", { 9, 1 }, nil, function(err) second = err end)
      assert.is_true(S.wait_until(function() return second ~= nil end, 2))
      assert.are.equal(7, first)
      assert.are.equal("closed", second.code)
      assert.are.equal("process exited with code 3", second.message)
      assert.are.equal(3, child.exit_code)
      assert.are.equal(0, child.exit_signal)
    end)
  end)

  it("settles pending requests when the child closes its stdout but lives on", function()
    S.run(function()
      local child = assert(S.sh("exec >&-; exec sleep 30"))
      local closed_reason
      child.on_close = function(reason) closed_reason = reason end
      local result, err = child.peer:request("subtract", { 2, 1 })
      assert.is_nil(result)
      assert.are.equal("closed", err.code)
      assert.are.equal("process closed its stdout", err.message)
      assert.is_true(child:closed())
      assert.is_nil(child.exit_code)  -- still running
      local t0 = S.now()
      assert.are.same({ 0, 15 }, { child:shutdown(0.1) })  -- it ignores EOF: SIGTERM
      assert.is_true(S.since(t0) >= 0.09 and S.since(t0) < 1, "took " .. S.since(t0))
      assert.are.equal("process closed its stdout", closed_reason)
    end)
  end)

  describe("shutdown", function()
    it("closes stdin and the spec server exits by itself with code 0", function()
      S.run(function()
        local child = assert(S.spec_server())
        local pending
        child.peer:request("subtract", { 5, 2 }, nil, function(err, r) pending = err or r end)
        local t0 = S.now()
        -- a grace long enough for a loaded machine under ASan: the point is
        -- that it exits by itself (no signal), well before the grace ends
        assert.are.same({ 0, 0 }, { child:shutdown(6) })
        assert.is_true(S.since(t0) < 5, "took " .. S.since(t0))
        assert.are.equal(3, pending)  -- sent before the shutdown: still answered
        -- nothing new is sent once the shutdown began
        local _, err = child.peer:request("subtract", { 1, 1 })
        assert.are.equal("closed", err.code)
      end)
    end)

    it("escalates to SIGTERM for a child that ignores the end of its input", function()
      S.run(function()
        local child = assert(S.sh("exec sleep 30"))
        local exited
        child.on_exit = function(code, signal) exited = { code, signal } end
        local t0 = S.now()
        assert.are.same({ 0, 15 }, { child:shutdown(0.2) })
        assert.are.same({ 0, 15 }, exited)
        assert.is_true(S.since(t0) >= 0.19 and S.since(t0) < 1.5, "took " .. S.since(t0))
      end)
    end)

    it("escalates to SIGKILL for a child that ignores SIGTERM too", function()
      S.run(function()
        local child = assert(S.sh("trap '' TERM; exec sleep 30"))
        loop:sleep(0.05)  -- let the shell install its trap
        local t0 = S.now()
        assert.are.same({ 0, 9 }, { child:shutdown(0.2) })
        assert.is_true(S.since(t0) >= 0.39 and S.since(t0) < 2, "took " .. S.since(t0))
      end)
    end)
  end)

  describe("stderr", function()
    it("is captured with stderr = \"pipe\"", function()
      S.run(function()
        local child = assert(S.sh("echo oops >&2; echo more >&2", { stderr = "pipe" }))
        assert.are.same({ 0, 0 }, { child:shutdown() })
        assert.is_true(S.wait_until(function() return child:stderr_text() == "oops\nmore\n" end, 2),
          child:stderr_text())
      end)
    end)

    it("is handed to a function chunk by chunk", function()
      S.run(function()
        local chunks = {}
        local child = assert(S.sh("echo one >&2; sleep 0.05; echo two >&2",
          { stderr = function(chunk) chunks[#chunks + 1] = chunk end }))
        child:shutdown()
        assert.is_true(S.wait_until(function() return table.concat(chunks) == "one\ntwo\n" end, 2))
        assert.are.equal(2, #chunks)
      end)
    end)

    it("is inherited by default", function()
      local script = os.tmpname()
      local f = assert(io.open(script, "w"))
      f:write([[
package.path = "./lua/?.lua;./lua/?/init.lua;" .. package.path
package.cpath = "./build/]], S.INTERP == "luajit" and "jit" or "5.4", [[/?.so;" .. package.cpath
local jrpc = require "jrpc"
jrpc.run(function(loop)
  local child = assert(loop:spawn{ cmd = "/bin/sh", args = { "-c", "echo from-the-child >&2" } })
  print("exit", child:shutdown())
end)
]])
      f:close()
      local status, out, err = S.shell(S.INTERP .. " " .. script)
      os.remove(script)
      assert.are.equal(0, status, err)
      assert.are.equal("exit\t0\t0\n", out)
      assert.are.equal("from-the-child\n", err)
    end)
  end)

  it("returns nil and a message for a command that does not exist", function()
    S.run(function()
      local child, err = loop:spawn{ cmd = "/nonexistent/jrpc-test-server" }
      assert.is_nil(child)
      assert.are.equal("spawn", err.code)
      assert.are.equal("cannot start /nonexistent/jrpc-test-server: ENOENT: no such file or directory", err.message)
    end)
    -- outside the loop too, and the process still exits cleanly afterwards
    local status, out = S.shell(S.INTERP .. [[ -e "package.path='./lua/?.lua;./lua/?/init.lua;'..package.path;]]
      .. [[ package.cpath='./build/]] .. (S.INTERP == "luajit" and "jit" or "5.4") .. [[/?.so;'..package.cpath;]]
      .. [[ local loop = require('jrpc').uv.new(require 'luv');]]
      .. [[ print(loop:spawn{ cmd = '/nonexistent/x' })"]])
    assert.are.equal(0, status)
    assert.are.equal("nil\tjrpc error spawn: cannot start /nonexistent/x: ENOENT: no such file or directory\n", out)
  end)

  it("raises on misuse", function()
    assert.has_error(function() loop:spawn{} end, "spawn: cmd must be a string")
    assert.has_error(function() loop:spawn{ cmd = "true", stderr = 3 } end,
      'spawn: stderr must be "inherit", "pipe", "ignore" or a function')
  end)
end)

describe("jrpc.uv deadlines", function()
  after_each(S.cleanup)

  it("settle a request the server never answers with timeout, driven by a timer", function()
    S.run(function()
      local child = assert(S.sh("exec sleep 30"))
      local t0 = S.now()
      local result, err = child.peer:request("subtract", { 1, 2 }, { timeout = 0.2 })
      local took = S.since(t0)
      assert.is_nil(result)
      assert.are.equal("timeout", err.code)
      assert.is_true(took >= 0.195 and took < 0.6, "took " .. took)
    end)
  end)

  it("follow the peer's default timeout, earliest first, for many requests", function()
    S.run(function()
      local child = assert(S.sh("exec sleep 30", { timeout = 0.3 }))
      local t0, times = S.now(), {}
      child.peer:request("a", {}, { timeout = 0.1 }, function(err) times.a = { err.code, S.since(t0) } end)
      child.peer:request("b", {}, nil, function(err) times.b = { err.code, S.since(t0) } end)
      child.peer:request("c", {}, { timeout = 0.05 }, function(err) times.c = { err.code, S.since(t0) } end)
      assert.is_true(S.wait_until(function() return times.b ~= nil end, 2))
      assert.are.equal("timeout", times.a[1])
      assert.is_true(times.c[2] >= 0.045 and times.c[2] < times.a[2], "c " .. times.c[2])
      assert.is_true(times.a[2] >= 0.095 and times.a[2] < times.b[2], "a " .. times.a[2])
      assert.is_true(times.b[2] >= 0.295 and times.b[2] < 0.8, "b " .. times.b[2])
    end)
  end)
end)
