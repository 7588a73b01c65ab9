-- The Makefile's install of the LuaJIT modules into lua/jrpc/ (what a
-- Neovim plugin manager's build step runs): the new file must replace the
-- old one by a rename, never be written into it, because a running editor
-- has the old one mapped. Run in a scratch directory with the checkout's
-- Makefile (-o: the build/jit module is taken as it is, not rebuilt).
if dofile("spec/once.lua")(pending, "a build in a scratch directory, the same whatever runs busted") then return end
local files = dofile("spec/files.lua")

-- (a make of its own: not a sub-make of a `make test` that runs this spec)
local MAKE = "env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u MAKEFILES make"

local function sh(cmd)
  local p = assert(io.popen(cmd .. " 2>&1; echo \"exit=$?\""))
  local out = p:read("*a")
  p:close()
  local body, code = out:match("^(.-)exit=(%d+)\n$")
  return body, tonumber(code)
end

-- The file's bytes, or "" while it does not exist yet.
local function peek(path)
  local f = io.open(path, "rb")
  if not f then return "" end
  local s = f:read("*a")
  f:close()
  return s
end

local function inode(path)
  local out, code = sh(("stat -c %%i %q"):format(path))
  assert(code == 0, out)
  return tonumber(out)
end

describe("make: lua/jrpc/*.so", function()
  local root = assert(io.popen("pwd")):read("*l")
  local dir

  before_each(function()
    dir = assert(io.popen("mktemp -d /tmp/jrpc-install-XXXXXX")):read("*l")
    assert(os.execute(("mkdir -p %q/lua/jrpc %q/build/jit/jrpc"):format(dir, dir)))
  end)

  after_each(function()
    os.execute(("rm -rf %q"):format(dir))
  end)

  it("replaces the installed module by a rename: a new inode, and a process using the old one runs on",
    function()
      -- The installed module is the real LuaJIT core; the "rebuilt" one is
      -- another library, so writing it in place would change the code
      -- under the running process.
      files.write(dir .. "/lua/jrpc/core.so", files.read(root .. "/build/jit/jrpc/core.so"))
      files.write(dir .. "/build/jit/jrpc/core.so", files.read(root .. "/build/jit/jrpc/lineread.so"))
      local before = inode(dir .. "/lua/jrpc/core.so")

      -- A LuaJIT process (Neovim's Lua) that loaded the installed core, then
      -- waits on its stdin, then uses the core again.
      local script = dir .. "/user.lua"
      files.write(script, ([[
package.cpath = %q
local core = require "jrpc.core"
assert(core.encode({ 1 }) == "[1]")
io.stdout:write("loaded\n"); io.stdout:flush()
io.read("*l")
local n = 0
for i = 1, 20000 do
  local v = core.decode(core.encode({ id = i, params = { "x", i / 3, true } }))
  if v.id == i then n = n + 1 end
end
print("after rebuild: " .. n)
]]):format(dir .. "/lua/?.so"))
      local fifo = dir .. "/in"
      assert(os.execute(("mkfifo %q"):format(fifo)))
      local out = dir .. "/out"
      local job = assert(io.popen(("(luajit %q < %q > %q 2>&1; echo \"exit=$?\" >> %q) &"):format(
        script, fifo, out, out)))
      local feed = assert(io.open(fifo, "w"))   -- opens once the process has its end
      for _ = 1, 200 do
        if peek(out):find("loaded\n", 1, true) then break end
        os.execute("sleep 0.05")
      end
      assert.are.equal("loaded\n", files.read(out))

      local made, code = sh((MAKE .. " -s -C %q -f %q -o build/jit/jrpc/core.so -B lua/jrpc/core.so"):format(
        dir, root .. "/Makefile"))
      assert.are.equal(0, code, made)
      assert.are.equal("", made)

      feed:write("go\n")
      feed:close()
      job:close()
      for _ = 1, 200 do
        if peek(out):find("exit=", 1, true) then break end
        os.execute("sleep 0.05")
      end
      assert.are.equal("loaded\nafter rebuild: 20000\nexit=0\n", files.read(out))
      assert.are_not.equal(before, inode(dir .. "/lua/jrpc/core.so"))
      assert.are.equal(files.read(dir .. "/build/jit/jrpc/core.so"), files.read(dir .. "/lua/jrpc/core.so"))
      local left, _ = sh(("ls -A %q/lua/jrpc"):format(dir))
      assert.are.equal("core.so\n", left)                  -- no temporary file left behind
    end)

  it("a failed copy leaves the installed module as it was, and no temporary file", function()
    files.write(dir .. "/lua/jrpc/core.so", "old")
    local made, code = sh((MAKE .. " -s -C %q -f %q -o build/jit/jrpc/core.so -B lua/jrpc/core.so"):format(
      dir, root .. "/Makefile"))
    assert.are_not.equal(0, code, made)
    assert.are.equal("old", files.read(dir .. "/lua/jrpc/core.so"))
    local left, _ = sh(("ls -A %q/lua/jrpc"):format(dir))
    assert.are.equal("core.so\n", left)
  end)
end)
