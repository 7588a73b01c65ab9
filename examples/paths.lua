--- Lets an example run from a checkout with no environment set: puts the
-- repository's lua/ and build/<5.4|jit>/ in front of the module paths.
-- JRPC_CPATH_5_4 / JRPC_CPATH_JIT name another build of the core instead
-- (see spec/helper.lua). Used as `dofile(<examples dir> .. "/paths.lua")`.
local dir = debug.getinfo(1, "S").source:match("^@(.*)[/\\][^/\\]*$") or "."
local root = dir .. "/.."
local abi = rawget(_G, "jit") and "jit" or "5.4"
package.path = root .. "/lua/?.lua;" .. root .. "/lua/?/init.lua;" .. package.path
package.cpath = (os.getenv(abi == "jit" and "JRPC_CPATH_JIT" or "JRPC_CPATH_5_4")
  or root .. "/build/" .. abi .. "/?.so") .. ";" .. package.cpath
