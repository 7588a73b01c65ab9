-- The Makefile's dependency check (scripts/check_deps.sh, before an ABI's first
-- compile): each missing header or library is named with the Debian package
-- that provides it, and `make nvim` needs only what Neovim's modules need.
-- Run with the checkout's Makefile in a scratch directory (a copy of src/),
-- with a compiler wrapper that hides chosen headers from the probes.
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

-- The lines of `out` that the check wrote (make's own lines apart), and
-- make's own lines.
local function split(out)
  local ours, makes = {}, {}
  for line in out:gmatch("[^\n]+") do
    if line:find("^make: %*%*%*") then makes[#makes + 1] = line else ours[#ours + 1] = line end
  end
  return table.concat(ours, "\n"), makes
end

describe("make: the dependency check", function()
  local root = assert(io.popen("pwd")):read("*l")
  local dir, cc

  before_each(function()
    dir = assert(io.popen("mktemp -d /tmp/jrpc-deps-XXXXXX")):read("*l")
    -- cc that fails on a probe including one of the headers in $HIDE
    cc = dir .. "/cc"
    files.write(cc, [[#!/bin/sh
for a in "$@"; do
  case $a in *probe.c)
    for h in $HIDE; do grep -q "#include <$h>" "$a" && { echo "fatal error: $h" >&2; exit 1; }; done ;;
  esac
done
exec cc "$@"
]])
    assert(os.execute(("chmod +x %q && cp -R %q/src %q/"):format(cc, root, dir)))
  end)

  after_each(function()
    os.execute(("rm -rf %q"):format(dir))
  end)

  local function make(args, hide)
    return sh(("HIDE=%q %s -s -C %q -f %q CC=%q %s"):format(hide or "", MAKE, dir, root .. "/Makefile", cc, args))
  end

  it("names the package of each missing header, and the apt-get line", function()
    local out, code = make("nvim", "llhttp.h openssl/ssl.h luajit.h")
    assert.are.equal(2, code)
    local ours, makes = split(out)
    assert.are.equal(table.concat({
      "make: missing luajit.h (LuaJIT): install libluajit-5.1-dev",
      "make: missing llhttp.h or -lllhttp: install libllhttp-dev (Debian 13, Ubuntu 24.04; "
        .. "Debian 12 has none: make deps-llhttp installs Debian 13's)",
      "make: missing openssl/ssl.h or -lssl -lcrypto: install libssl-dev",
      "make: Debian:  sudo apt-get install libluajit-5.1-dev libllhttp-dev libssl-dev",
    }, "\n"), ours)
    assert.are.same({ "make: *** [" .. root .. "/Makefile:" .. makes[1]:match(":(%d+):")
      .. ": build/jit/deps.ok] Error 1" }, makes)
    assert.are.equal("", (sh(("ls %q/build/jit"):format(dir))):gsub("flags.txt\n", ""))  -- nothing compiled
  end)

  it("names pkg-config when it is missing, and what it hides", function()
    local out, code = make("nvim PKG_CONFIG=/nonexistent/pkg-config")
    assert.are.equal(2, code)
    assert.are.equal(table.concat({
      "make: missing /nonexistent/pkg-config: install pkg-config",
      "make: missing luajit.h (LuaJIT): install libluajit-5.1-dev",
      "make: Debian:  sudo apt-get install pkg-config libluajit-5.1-dev",
    }, "\n"), (split(out)))
  end)

  it("a missing Lua 5.4 stops `make` with a pointer to `make nvim`", function()
    local out, code = make("all", "lua.h")
    assert.are.equal(2, code)
    assert.are.equal(table.concat({
      "make: missing lua.h of Lua 5.4: install liblua5.4-dev",
      "make: Debian:  sudo apt-get install liblua5.4-dev",
      "make: for Neovim only, 'make nvim' builds just its modules (LuaJIT; no Lua 5.4 needed)",
    }, "\n"), (split(out)))
  end)

  it("`make nvim` builds Neovim's three modules without Lua 5.4's headers or hiredis", function()
    local out, code = make("nvim", "lua.h hiredis/hiredis.h")
    assert.are.equal(0, code, out)
    assert.are.equal("", out)
    local built = sh(("cd %q && ls build/jit/jrpc lua/jrpc && ls build"):format(dir))
    assert.are.equal("build/jit/jrpc:\ncore.so\ncore_tls.so\nlineread.so\n\n"
      .. "lua/jrpc:\ncore.so\ncore_tls.so\nlineread.so\njit\n", built)
    local loaded = sh(("cd %q && luajit -e 'package.cpath=\"lua/?.so\" print(require(\"jrpc.core\").encode({1}))'")
      :format(dir))
    assert.are.equal("[1]\n", loaded)
  end)

  it("names libhiredis-dev for jrpc.resp, in a check of its own", function()
    local out, code = make("build/jit/jrpc/resp.so", "hiredis/hiredis.h")
    assert.are.equal(2, code)
    local ours, makes = split(out)
    assert.are.equal(table.concat({
      "make: missing hiredis/hiredis.h or -lhiredis: install libhiredis-dev",
      "make: Debian:  sudo apt-get install libhiredis-dev",
    }, "\n"), ours)
    assert.are.same({ "make: *** [" .. root .. "/Makefile:" .. makes[1]:match(":(%d+):")
      .. ": build/jit/deps-resp.ok] Error 1" }, makes)
    assert.are.equal("flags.txt\n", (sh(("ls %q/build/jit"):format(dir))))  -- nothing compiled
    out, code = make("build/jit/jrpc/resp.so")
    assert.are.equal(0, code, out)
    assert.are.equal("", out)
    assert.are.equal("function\n", (sh(("cd %q && luajit -e 'package.cpath=\"build/jit/?.so\" "
      .. "print(type(require(\"jrpc.resp\").command))'"):format(dir))))
  end)

  it("passes silently when everything is there, and checks once", function()
    local out, code = make("build/jit/deps.ok build/5.4/deps.ok")
    assert.are.equal(0, code, out)
    assert.are.equal("", out)
    out, code = make("build/jit/deps.ok build/5.4/deps.ok", "cjson/cJSON.h")
    assert.are.equal(0, code, out)   -- not checked again: the flags did not change
    assert.are.equal("", out)
  end)
end)
