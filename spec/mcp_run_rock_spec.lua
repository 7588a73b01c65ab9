-- `jrpc run` as MCP hosts use it: jrpc installed by LuaRocks (5.4) into a
-- temporary tree, and the official SDK client (1.32.2, a real process)
-- launching {"command": "<tree>/bin/jrpc", "args": ["run", "server.lua"]}
-- with a bare environment (PATH only, no LUA_PATH or LUA_CPATH): the
-- server finds jrpc through the installed wrapper's paths. Launched as
-- `lua5.4 server.lua` with the same environment, it cannot.
if dofile("spec/once.lua")(pending, "a LuaRocks (Lua 5.4) install launched by a Node client") then return end
local P = dofile("spec/mcp_probe_support.lua")
local S = dofile("spec/uv_support.lua")
local jrpc = require "jrpc"

local SERVER = [==[
local mcp = require "jrpc.mcp"
local srv = mcp.server{ name = "launched " .. table.concat(arg, " "), version = "1.0.0" }
srv:tool{ name = "add", description = "Adds a and b",
  input_schema = { type = "object", properties = { a = { type = "number" }, b = { type = "number" } },
    required = { "a", "b" } },
  handler = function(args) return { sum = args.a + args.b } end }
srv:serve_stdio()
]==]

local BARE = { PATH = "/usr/bin:/bin" }

local function pkg(var, name)
  local p = assert(io.popen(("pkg-config --variable=%s %s"):format(var, name)))
  local v = p:read("l")
  p:close()
  return v
end

describe("jrpc run, installed by LuaRocks, launched by the SDK client with a bare environment", function()
  local work, tree, script

  setup(function()
    work = S.tmpdir()
    tree = work .. "/tree"
    local copy = work .. "/src"
    -- LuaRocks builds in its current directory: a throw-away copy of the sources
    local status, out, err = S.shell(("mkdir %s && cp -R src lua bin rockspec %s/ && cd %s && "
      -- the system's PATH: under test-asan `lua5.4` on ours is a launcher, whose place
      -- LuaRocks would take for the interpreter's (and look for headers beside it)
      .. "env PATH=/usr/bin:/bin nice luarocks --lua-version 5.4 make rockspec/jrpc-scm-1.rockspec --tree %s "
      .. "CJSON_INCDIR=%s CJSON_LIBDIR=%s")
      :format(copy, copy, copy, tree, pkg("includedir", "libcjson"), pkg("libdir", "libcjson")))
    assert(status == 0, out .. err)
    script = work .. "/server.lua"
    local f = assert(io.open(script, "w"))
    f:write(SERVER)
    f:close()
  end)

  teardown(function() if work then S.rmdir(work) end end)

  it("serves: the server gets its arguments and its tools work", function()
    local steps, out = P.run{ command = tree .. "/bin/jrpc", args = jrpc.array{ "run", script, "--for", "host" },
      env = BARE, calls = jrpc.array{ { name = "add", arguments = { a = 1, b = 2 } } } }
    assert.are.same({ step = "initialize", server = "launched --for host" }, steps.initialize, out)
    assert.are.same({ structuredContent = { sum = 3 }, content = { { type = "text", text = '{"sum":3}' } } },
      steps["call add"].result)
    assert.are.same({ step = "stderr", text = "" }, steps.stderr)
  end)

  it("is needed: plain lua5.4 with the same environment does not find jrpc", function()
    local status, _, err = S.shell(("env -i PATH=/usr/bin:/bin lua5.4 %s </dev/null"):format(script))
    assert.are.same({ 1, "lua5.4: " .. script .. ":1: module 'jrpc.mcp' not found:" },
      { status, err:match("^[^\n]*") })
  end)
end)
