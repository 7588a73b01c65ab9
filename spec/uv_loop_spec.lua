-- jrpc.uv loop context: run, serve_forever/stop, pump within a budget.
local jrpc = require "jrpc"
local S = dofile("spec/uv_support.lua")
local loop = S.loop
local uv = S.uv

local ABI = S.INTERP == "luajit" and "jit" or "5.4"

-- A Lua program run by the interpreter under test, with the repo's paths.
local function lua_program(body)
  local path = os.tmpname()
  local f = assert(io.open(path, "w"))
  f:write('package.path = "./lua/?.lua;./lua/?/init.lua;" .. package.path\n',
    'package.cpath = "./build/', ABI, '/?.so;" .. package.cpath\n', body)
  f:close()
  return path
end

describe("jrpc.uv loop:run", function()
  after_each(S.cleanup)

  it("returns what the function returned, holes included", function()
    local n, a, b, c = (function(...) return select("#", ...), ... end)(loop:run(function(l)
      assert.are.equal(loop, l)
      return 1, nil, "x"
    end))
    assert.are.same({ 3, 1, nil, "x" }, { n, a, b, c })
  end)

  it("raises the function's error, even after it waited", function()
    local value = { "mine" }
    local ok, err = pcall(loop.run, loop, function()
      loop:sleep(0.01)
      error(value)
    end)
    assert.is_false(ok)
    assert.are.equal(value, err)
    ok, err = pcall(loop.run, loop, function() error("boom") end)
    assert.is_false(ok)
    assert.truthy(err:find("boom", 1, true))
  end)

  it("is also jrpc.run, and jrpc.uv.new gives one context per luv module", function()
    assert.are.equal(loop, jrpc.uv.new(uv))
    assert.are.equal(42, jrpc.run(function(l)
      assert.are.equal(loop, l)
      l:sleep(0.005)
      return 42
    end))
  end)

  -- A child whose stdin is closed (no reader left), then a write to it:
  -- `catch_sigpipe` turns the signal into EPIPE; without it, SIGPIPE ends
  -- the process (the shell's status 128 + 13).
  local SIGPIPE_PROGRAM = [[
local jrpc = require "jrpc"
local uv = require "luv"
-- SIGPIPE back to its default: a parent may have left it ignored (LuaSocket
-- ignores it when loaded), and children inherit that
local reset = uv.new_signal()
reset:start("sigpipe", function() end)
reset:stop()
reset:close()
local loop = jrpc.uv.new(uv, arg[1] == "catch" and { catch_sigpipe = true } or nil)
loop:run(function()
  local child = assert(loop:spawn{ cmd = "/bin/sh", args = { "-c", "exec 0<&-; exec sleep 5" },
    on_error = function() end })
  loop:sleep(0.2)
  child.peer:notify("x", { ("y"):rep(1000) })
  loop:sleep(0.3)
  io.stdout:write(tostring(child.close_reason), "\n")
  child:kill("sigkill")
end)
]]

  it("leaves SIGPIPE alone unless jrpc.uv.new is asked to catch it", function()
    local path = lua_program(SIGPIPE_PROGRAM)
    local caught = { S.shell(S.INTERP .. " " .. path .. " catch") }
    local left = { S.shell(S.INTERP .. " " .. path) }
    os.remove(path)
    assert.are.same({ 0, "write error: EPIPE\n", "" }, { caught[1], caught[2], caught[3] })
    assert.are.same({ 141, "", "" }, { left[1], left[2], left[3] })
  end)

  it("raises on misuse", function()
    assert.has_error(function() loop:run(nil) end, "run: expected a function")
    assert.has_error(function() loop:sleep(1) end, "sleep: must be called in a coroutine (inside loop:run)")
    assert.has_error(function() jrpc.uv.new({}) end,
      'jrpc.uv.new: expected the luv module (require "luv" or vim.uv)')
    local ok, err = pcall(loop.run, loop, function() loop:run(function() end) end)
    assert.is_false(ok)
    assert.truthy(err:find("jrpc.uv: run called while the loop is running", 1, true), err)
  end)

  it("raises when stop() is called before the function's first wait", function()
    local timer = uv.new_timer()
    timer:start(50, 0, function() end)  -- something alive, so only stop() can end it
    local ok, err = pcall(loop.run, loop, function()
      loop:stop()
      loop:sleep(0.02)
      return "not reached"
    end)
    timer:close()
    assert.is_false(ok)
    assert.are.equal("loop:run: stopped (loop:stop()) before the function returned", err)
  end)

  it("raises instead of hanging when the function waits for nothing", function()
    local path = lua_program([[
local ok, err = pcall(require("jrpc").run, function() coroutine.yield() end)
print(ok, err)
]])
    local status, out, _, took = S.shell(S.INTERP .. " " .. path)
    os.remove(path)
    assert.are.equal(0, status)
    assert.are.equal("false\tloop:run: the function waits, but nothing on the loop can wake it\n", out)
    assert.is_true(took < 2)
  end)
end)

describe("jrpc.uv loop:serve_forever", function()
  after_each(S.cleanup)

  it("serves until loop:stop()", function()
    local server = assert(loop:listen{ port = 0, methods = { add = function(p) return p[1] + p[2] end } })
    local got
    loop:connect{ port = server.port, on_connect = function(conn)
      conn.peer:request("add", { 1, 2 }, nil, function(_, r)
        got = r
        loop:stop()
      end)
    end }
    local t0 = S.now()
    loop:serve_forever()
    assert.are.equal(3, got)
    assert.is_true(S.since(t0) < 2)
    server:close()
  end)

  it("ends by itself at the end of input when serving stdio (the spec server)", function()
    local status, out = S.shell("printf '%s\\n' '{\"jsonrpc\":\"2.0\",\"method\":\"subtract\",\"params\":[42,23],\"id\":1}' | "
      .. S.INTERP .. " examples/spec_server.lua --transport uv | cat")
    assert.are.equal(0, status)
    assert.are.equal('{"jsonrpc":"2.0","result":19,"id":1}\n', out)
  end)
end)

describe("examples/spec_server.lua --transport", function()
  it("uv and blocking answer the same bytes, and a bad value is refused", function()
    local input = os.tmpname()
    local f = assert(io.open(input, "wb"))
    f:write('{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1}\n',
      '[{"jsonrpc":"2.0","method":"sum","params":[1,2,4],"id":"1"},{"jsonrpc":"2.0","method":"nope","id":2}]\n',
      'junk\n{"jsonrpc":"2.0","method":"get_data","id":3}')  -- no final newline
    f:close()
    local outs = {}
    for _, transport in ipairs{ "uv", "blocking" } do
      local status, out = S.shell(("cat %s | %s examples/spec_server.lua --transport %s | cat")
        :format(input, S.INTERP, transport))
      assert.are.equal(0, status, transport)
      outs[transport] = out
    end
    os.remove(input)
    assert.are.equal(outs.blocking, outs.uv)
    assert.are.equal('{"jsonrpc":"2.0","result":19,"id":1}\n', outs.uv:match("^[^\n]*\n"))
    assert.truthy(outs.uv:find('{"jsonrpc":"2.0","result":["hello",5],"id":3}\n', 1, true), outs.uv)
    local status, out = S.shell(S.INTERP .. " examples/spec_server.lua --transport tcp < /dev/null")
    assert.are.equal(2, status)
    assert.are.equal("", out)
  end)
end)

describe("jrpc.uv loop:pump", function()
  after_each(S.cleanup)

  it("returns within its budget while a request is in flight; the answer comes after a few pumps", function()
    -- the server starts 50 ms late, so no single pump can see the answer
    local child = assert(S.sh("sleep 0.05; exec " .. S.INTERP .. " examples/spec_server.lua"))
    local got
    child.peer:request("subtract", { 42, 23 }, nil, function(err, r) got = err or r end)
    local pumps, slowest = 0, 0
    while got == nil and pumps < 2000 do
      local t0 = os.clock()  -- processor time: a loaded machine may stop us mid-pump
      loop:pump(0.005)
      slowest = math.max(slowest, os.clock() - t0)
      pumps = pumps + 1
      uv.sleep(1)  -- the host's frame
    end
    assert.are.equal(19, got)
    assert.is_true(pumps > 5, "answered after " .. pumps .. " pumps")
    assert.is_true(slowest < 0.05, "slowest pump " .. slowest)
    child:shutdown()
    while child.exit_code == nil do loop:pump(0.005); uv.sleep(1) end
    assert.are.same({ 0, 0 }, { child.exit_code, child.exit_signal })
  end)

  it("stays within its budget while a child floods it with messages", function()
    local N = 100000
    local child = assert(S.spawn{ cmd = S.INTERP, args = { "-e", ([[
local msg = '{"jsonrpc":"2.0","method":"tick","params":[1]}\n'
io.write(string.rep(msg, %d))
io.flush()
io.read("a")  -- then wait for the end of input
]]):format(N) } })
    local ticks = 0
    child.peer:method("tick", function() ticks = ticks + 1 end)
    local pumps, slowest, over, paused = 0, 0, 0, 0
    local t_start = S.now()
    while ticks < N and S.since(t_start) < 20 do
      local t0 = os.clock()  -- processor time, as above
      loop:pump(0.005)
      local took = os.clock() - t0
      slowest = math.max(slowest, took)
      if took >= 0.05 then over = over + 1 end
      pumps = pumps + 1
      if child._paused then paused = paused + 1 end
    end
    assert.are.equal(N, ticks)
    -- one read's handlers may run over the budget; so may a pump that a
    -- collection of this process's whole heap lands in (busted runs every
    -- spec file in one process): a few, never most
    assert.is_true(over <= math.max(1, math.floor(pumps / 50)), over .. " of " .. pumps .. " pumps over 50 ms")
    assert.is_true(slowest < 0.5, "slowest pump " .. slowest)
    assert.is_true(paused > 0, "the budget never ran out")
    assert.is_true(pumps > 5)
    child:shutdown(0.5)
    while child.exit_code == nil do loop:pump(0.005) end
    assert.are.equal(0, child.exit_code)
  end)

  it("raises when called while the loop runs", function()
    local ok, err = pcall(loop.run, loop, function() loop:pump() end)
    assert.is_false(ok)
    assert.truthy(err:find("pump called while the loop is running", 1, true), err)
  end)
end)

describe("jrpc.uv stdio at the end of input", function()
  -- a server whose handlers wait on the loop; stdin is a pipe that ends at once
  local SERVER = [[
local jrpc = require "jrpc"
local uv = require "luv"
local loop = jrpc.uv.new(uv)
local grace = tonumber(arg[1])
local conn = assert(loop:stdio{ finish_grace = grace, on_error = function(m) io.stderr:write(m, "\n") end,
  on_close = function(reason) io.stderr:write("closed: ", reason, "\n") end,
  methods = {
    slow = function(p) loop:sleep(p[1]); return "slept " .. p[1] end,
    forever = function() require("jrpc.workers").wait() end,
  } })
loop:serve_forever()
io.stderr:write("exit\n")
]]

  -- `first` and `second` on the server's stdin, which then ends
  local function serve_piped(first, second, grace)
    local path = lua_program(SERVER)
    local status, out, err, took = S.shell(("printf '%s\\n%s\\n' | %s %s %s"):format(
      first, second, S.INTERP, path, grace))
    os.remove(path)
    return status, out, err, took
  end

  it("lets handlers still working answer, then exits", function()
    local status, out, err, took = serve_piped('{"jsonrpc":"2.0","method":"slow","params":[0.2],"id":1}',
      '{"jsonrpc":"2.0","method":"slow","params":[0.1],"id":2}', 5)
    assert.are.equal(0, status, err)
    assert.are.equal('{"jsonrpc":"2.0","result":"slept 0.1","id":2}\n'
      .. '{"jsonrpc":"2.0","result":"slept 0.2","id":1}\n', out)
    assert.are.equal("closed: end of input\nexit\n", err)
    assert.is_true(took < 2, "took " .. took)
  end)

  it("closes after finish_grace when a handler never answers", function()
    local status, out, err, took = serve_piped('{"jsonrpc":"2.0","method":"forever","id":1}',
      '{"jsonrpc":"2.0","method":"slow","params":[0.05],"id":2}', 0.3)
    assert.are.equal(0, status, err)
    assert.are.equal('{"jsonrpc":"2.0","result":"slept 0.05","id":2}\n', out)
    assert.are.equal("closed: end of input\nexit\n", err)
    assert.is_true(took >= 0.3 and took < 2, "took " .. took)
  end)
end)
