-- bench/shell.lua: running the benchmark's commands (loaded with dofile by
-- bench/pipe.lua and bench/node_pipe.lua; not a benchmark itself).
local M = {}

--- `s` quoted for /bin/sh.
function M.quote(s)
  return "'" .. tostring(s):gsub("'", "'\\''") .. "'"
end

--- Run a shell command; returns its output (stdout and stderr) and exit code.
---@param cmd string
---@return string output, integer code
function M.capture(cmd)
  local p = assert(io.popen(cmd .. " 2>&1; echo \"exit=$?\""))
  local out = p:read("a")
  p:close()
  local code = tonumber(out:match("exit=(%d+)%s*$"))
  return (out:gsub("exit=%d+%s*$", "")), code or -1
end

return M
