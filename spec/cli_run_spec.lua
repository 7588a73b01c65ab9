-- `jrpc run SCRIPT [ARG...]` from the checkout's bin/jrpc, under lua5.4 and
-- luajit, with no LUA_PATH/LUA_CPATH: the script finds jrpc, gets its
-- arguments (options too) as `arg` and `...`, and its failures are exit 1.
local P = dofile("spec/mcp_probe_support.lua")

local SCRIPT = [[
local jrpc = require "jrpc"
print(type(jrpc.encode), arg[0] == SELF, table.concat(arg, "|"), table.concat({ ... }, "|"))
]]

local S = dofile("spec/uv_support.lua")

-- Run bin/jrpc under `lua` with a bare environment; status, stdout, stderr.
local function jrpc_run(lua, words)
  local status, out, err = S.shell(("env -i PATH=/usr/bin:/bin %s bin/jrpc run %s"):format(lua, words))
  return { status, out, err }
end

for _, lua in ipairs(P.INTERPRETERS) do
  describe("jrpc run under " .. lua, function()
    it("runs the script with jrpc's paths and passes every argument on", function()
      local path = P.script("")
      local f = assert(io.open(path, "w"))
      f:write((SCRIPT:gsub("SELF", ("%q"):format(path))))
      f:close()
      assert.are.same({ 0, "function\ttrue\t--http|127.0.0.1:0|--help\t--http|127.0.0.1:0|--help\n", "" },
        jrpc_run(lua, path .. " --http 127.0.0.1:0 --help"))
      os.remove(path)
    end)

    it("exits 1 with the reason when the script cannot be loaded or raises", function()
      assert.are.same({ 1, "", "jrpc run: cannot open /nonexistent/server.lua: No such file or directory\n" },
        jrpc_run(lua, "/nonexistent/server.lua"))
      local path = P.script("local x = 1\nerror('boom', 0)\n")
      local got = jrpc_run(lua, path)
      assert.are.same({ 1, "", "jrpc run: boom\nstack traceback:" }, { got[1], got[2], got[3]:match("^[^\n]*\n[^\n]*") })
      os.remove(path)
    end)

    it("exits 2 without a script", function()
      assert.are.same({ 2, "", "jrpc run: SCRIPT is missing\nusage: jrpc run SCRIPT [ARG...]\n" }, jrpc_run(lua, ""))
    end)
  end)
end
