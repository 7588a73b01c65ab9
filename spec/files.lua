-- spec/files.lua: whole-file reads and writes for the specs, Lua source
-- run in a child interpreter, and the benchmark tools run as they are in a
-- shell (loaded with dofile; not a spec itself).
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

--- The `.lua` files under `dir` (a path relative to the checkout), sorted.
function M.lua_files(dir)
  local list = {}
  local p = assert(io.popen("find " .. dir .. " -name '*.lua' | sort"))
  for path in p:lines() do list[#list + 1] = path end
  p:close()
  return list
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

local function shell_quote(s)
  return "'" .. tostring(s):gsub("'", "'\\''") .. "'"
end

--- Run `tool` (an argv list) with `flags`, `--`, then the server's argv
--- `cmd`, as the benchmark load generators are run. Returns its exit code,
--- the key=value words of its stdout as a table (numbers as numbers), and
--- its stderr.
---@param tool string[]
---@param flags string[]
---@param cmd string[]
---@return integer code, table result, string err
function M.run_tool(tool, flags, cmd)
  local words = {}
  for _, w in ipairs(tool) do words[#words + 1] = shell_quote(w) end
  for _, f in ipairs(flags) do words[#words + 1] = shell_quote(f) end
  words[#words + 1] = "--"
  for _, a in ipairs(cmd) do words[#words + 1] = shell_quote(a) end
  local err_file = os.tmpname()
  local p = assert(io.popen(table.concat(words, " ") .. " 2>" .. shell_quote(err_file)
    .. "; echo \"exit=$?\""))
  local out = p:read("*a")
  p:close()
  local err = M.take(err_file)
  local result = {}
  for k, v in out:gmatch("([%w_]+)=(%S+)") do result[k] = tonumber(v) or v end
  local code = result.exit
  result.exit = nil
  return code, result, err
end

return M
