-- spec/files.lua: whole-file reads and writes for the specs, and Lua source
-- run in a child interpreter (loaded with dofile; not a spec itself).
local M = {}

--- The bytes of a file.
function M.read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("*a")
  f:close()
  return s
end

--- The bytes of a temporary file, which is then removed.
function M.take(path)
  local s = M.read(path)
  os.remove(path)
  return s
end

--- Write `s` as the whole file.
function M.write(path, s)
  local f = assert(io.open(path, "wb"))
  f:write(s)
  f:close()
end

--- Run Lua source `body` in a fresh interpreter like this one (luajit or
--- lua5.4), with this run's package paths (the ASan lua5.4 and build/asan
--- under make test-asan), killed after `seconds` (default 120). Returns its
--- output (stdout and stderr together) and its exit status.
---@param body string
---@param seconds? number
---@return string output, integer status
function M.run_lua(body, seconds)
  local script, out = os.tmpname(), os.tmpname()
  M.write(script, ("package.path = %q\npackage.cpath = %q\n"):format(package.path, package.cpath) .. body)
  local p = assert(io.popen(("timeout -s KILL %d %s %s > %s 2>&1; echo $?"):format(
    seconds or 120, rawget(_G, "jit") and "luajit" or "lua5.4", script, out)))
  local status = tonumber(p:read("*a"))
  p:close()
  os.remove(script)
  return M.take(out), status
end

return M
