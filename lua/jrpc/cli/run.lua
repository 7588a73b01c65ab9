--- `jrpc run SCRIPT [ARG...]`: run a Lua script in this process, with the
-- module search paths this `jrpc` was started with. An MCP host launches a
-- server with a command and arguments and no LUA_PATH/LUA_CPATH of the
-- user's; the installed `jrpc` (LuaRocks' wrapper) already knows where
-- jrpc and its tree's other rocks are, so `jrpc run server.lua` finds them.
local output = require "jrpc.cli.output"

local M = {}

M.name = "run"
M.summary = "run a Lua script with this jrpc's module paths (for MCP hosts)"
M.usage = "jrpc run SCRIPT [ARG...]"
M.help = [[
Runs the Lua script SCRIPT in this process, with the interpreter and the
module search paths this jrpc runs with (those of the LuaRocks tree it was
installed in, or of the checkout bin/jrpc is in), so a script that does
require "jrpc" works without LUA_PATH or LUA_CPATH. The script gets ARG...
as `arg` (arg[0] is SCRIPT) and as `...`, as under `lua SCRIPT ARG...`.
Everything after SCRIPT is the script's, options too.

An MCP host's configuration for a server written with jrpc:
  {"command": "jrpc", "args": ["run", "/path/to/server.lua"]}

Exit status: 0 when the script returns (or what it passes to os.exit);
1 when it cannot be loaded or raises an error (the message and a traceback
on stderr); 2 usage error.]]

M.options = {}

--- Words after SCRIPT are the script's own: the dispatcher passes them
--- on unparsed (only `jrpc run --help` is ours).
M.raw = true

local unpack = table.unpack or unpack  -- luacheck: ignore 143

--- Run `words[1]` with `words[2..]` as its arguments; the exit code, or
--- nil and a usage problem.
---@param _ table
---@param words string[]
---@return integer|nil code
---@return string|nil problem
function M.run(_, words)
  local script = words[1]
  if script == nil then return nil, "SCRIPT is missing" end
  local file, why = io.open(script, "r")  -- its message is the same under 5.4 and LuaJIT
  if file == nil then
    output.err("jrpc run: cannot open " .. why)
    return output.FAILED
  end
  file:close()
  local chunk, err = loadfile(script)
  if chunk == nil then
    output.err("jrpc run: " .. err)
    return output.FAILED
  end
  local script_arg = { [0] = script }
  for i = 2, #words do script_arg[i - 1] = words[i] end
  rawset(_G, "arg", script_arg)  -- what the script reads, as under `lua SCRIPT`
  local ok, failure = xpcall(chunk, debug.traceback, unpack(script_arg, 1, #script_arg))
  if not ok then
    output.err("jrpc run: " .. tostring(failure))
    return output.FAILED
  end
  return output.OK
end

return M
