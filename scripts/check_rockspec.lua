-- scripts/check_rockspec.lua: every lua/jrpc/**/*.lua must be a module of
-- the rockspec named by $ROCKSPEC, under its dotted name (init.lua -> its
-- directory), and every listed path must exist. Run from the repository
-- root by `make check-rockspec`; prints "check-rockspec: ok" or each problem.
local env = {}
local chunk = assert(loadfile(os.getenv("ROCKSPEC"), "t", env))
chunk()
local mods = assert(env.build and env.build.modules, "rockspec has no build.modules")
local listed, bad = {}, 0
for name, v in pairs(mods) do
  if type(v) == "string" then
    listed[v] = name
    local f = io.open(v, "r")
    if f then f:close() else print("rockspec: module " .. name .. ": no file " .. v); bad = bad + 1 end
  end
end
local p = assert(io.popen("find lua/jrpc -name '*.lua' 2>/dev/null | LC_ALL=C sort"))
for file in p:lines() do
  local want = file:gsub("^lua/", ""):gsub("%.lua$", ""):gsub("/init$", ""):gsub("/", ".")
  if listed[file] ~= want then
    print(("rockspec: %s must be listed as [%q] = %q"):format(file, want, file)); bad = bad + 1
  end
end
p:close()
if bad > 0 then os.exit(1) end
print("check-rockspec: ok")
