-- spec/helper.lua: loaded by busted (see .busted) before any spec file.
-- Puts the repository's Lua modules and the C module built for the running
-- interpreter (build/5.4 or build/jit) in front of the search paths.
-- Defines no globals.

-- The repository root, from this file's own path: "./" when busted runs
-- from the root (source "@spec/helper.lua"), else the directory above spec/.
local source = debug.getinfo(1, "S").source
local root = source:match("^@(.-)spec[/\\]helper%.lua$")
if root == nil or root == "" then root = "./" end

local abi = rawget(_G, "jit") and "jit" or "5.4"

-- JRPC_CPATH_5_4 / JRPC_CPATH_JIT (a package.cpath template, e.g.
-- "/abs/build/asan/?.so") load another build of the core, such as the
-- sanitizer build of `make test-asan`; one variable per ABI, like Lua's
-- LUA_CPATH_5_4, so LuaJIT children never pick up a Lua 5.4 build.
local lua_path = root .. "lua/?.lua;" .. root .. "lua/?/init.lua;"
local c_path = (os.getenv(abi == "jit" and "JRPC_CPATH_JIT" or "JRPC_CPATH_5_4")
  or root .. "build/" .. abi .. "/?.so") .. ";"

-- Idempotent: busted may load the helper more than once.
if package.path:sub(1, #lua_path) ~= lua_path then
  package.path = lua_path .. package.path
end
if package.cpath:sub(1, #c_path) ~= c_path then
  package.cpath = c_path .. package.cpath
end
