-- An MCP server on stdio keeps stdout for the protocol: what a tool
-- prints (print, io.write, io.stdout, a child process) goes to stderr,
-- and the official SDK client (1.32.2, a real process) reads clean
-- messages. Under lua5.4 and luajit, with the blocking transport and on
-- the luv loop.
local P = dofile("spec/mcp_probe_support.lua")

local SERVER = [==[
local mcp = require "jrpc.mcp"
local loop = ...
local srv = mcp.server{ name = "noisy", version = "1.0.0" }
srv:tool{ name = "add", description = "Adds, chattily",
  input_schema = { type = "object", properties = { a = { type = "number" }, b = { type = "number" } } },
  handler = function(args)
    print("debug: add", args.a, args.b)
    io.write("io.write line\n")
    io.stdout:write("io.stdout line\n")
    os.execute("echo child line")
    return tostring(args.a + args.b)
  end }
srv:serve_stdio(loop)
]==]

local UV = "local loop = require('jrpc').uv.new(require 'luv')\n"

local ADD = { name = "add", arguments = { a = 1, b = 2 } }

for _, lua in ipairs(P.INTERPRETERS) do
  for _, mode in ipairs{ "blocking", "luv" } do
    describe(("MCP stdio keeps stdout for the protocol (%s, %s)"):format(lua, mode), function()
      it("sends what a tool prints to stderr", function()
        local source = mode == "luv" and SERVER:gsub("local loop = %.%.%.\n", UV) or SERVER
        local _, out, lines = P.probe(source, lua, { ADD, ADD })
        local want = {
          { step = "initialize", server = "noisy" },
          { step = "tools/list", tools = { { name = "add",
            inputSchema = lines[2] and lines[2].tools and lines[2].tools[1].inputSchema } } },
          { step = "call add", result = { content = { { type = "text", text = "3" } } } },
          { step = "call add", result = { content = { { type = "text", text = "3" } } } },
          { step = "client errors", errors = {} },
          { step = "stderr", text = ("debug: add\t1\t2\nio.write line\nio.stdout line\nchild line\n"):rep(2) },
        }
        assert.are.same(want, lines, out)
      end)
    end)
  end
end

describe("jrpc.stdout", function()
  it("keeps one descriptor for the protocol and points descriptor 1 at stderr", function()
    local path = P.script([[
      local stdout, stdio = require "jrpc.stdout", require "jrpc.stdio"
      local before, was_kept = stdout.fd(), stdout.kept()
      local fd = assert(stdout.keep())
      print("to stderr")
      stdio.send("to the protocol\n")
      io.stderr:write(before, " ", tostring(was_kept), " ", tostring(fd == stdout.keep()), " ",
        tostring(fd == stdout.fd()), " ", tostring(fd > 2), "\n")
    ]])
    for _, lua in ipairs(P.INTERPRETERS) do
      local env = P.env(lua)
      local run = ("LUA_PATH='%s' LUA_CPATH='%s' %s %s"):format(env.LUA_PATH, env.LUA_CPATH, lua, path)
      local p = assert(io.popen(run .. " 2>&1 >/dev/null"))
      assert.are.equal("to stderr\n1 false true true true\n", p:read("a"))
      p:close()
      p = assert(io.popen(run .. " 2>/dev/null"))
      assert.are.equal("to the protocol\n", p:read("a"))
      p:close()
    end
    os.remove(path)
  end)
end)
