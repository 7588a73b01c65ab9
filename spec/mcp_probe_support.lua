-- spec/mcp_probe_support.lua: a user's MCP server (Lua source) run as a
-- real process under lua5.4 or luajit and driven over stdio by the
-- official SDK client (node/mcp_sdk1_probe.js), which prints one JSON line
-- per step. `probe` returns those lines by step name.
local jrpc = require "jrpc"

local M = {}

local function read_cmd(cmd)
  local p = assert(io.popen(cmd))
  local out = p:read("a")
  p:close()
  return out
end

M.ROOT = read_cmd("pwd"):gsub("\n$", "")
M.INTERPRETERS = { "lua5.4", "luajit" }

local function quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

--- Write `source` to a temporary file; its path (remove it with os.remove).
function M.script(source)
  local path = os.tmpname() .. ".lua"
  local f = assert(io.open(path, "w"))
  f:write(source)
  f:close()
  return path
end

--- The environment a server needs to load this checkout under `lua`.
function M.env(lua)
  local abi = lua == "luajit" and "jit" or "5.4"
  return { PATH = os.getenv("PATH"), LUA_PATH = M.ROOT .. "/lua/?.lua;" .. M.ROOT .. "/lua/?/init.lua;;",
    LUA_CPATH = M.ROOT .. "/build/" .. abi .. "/?.so;;" }
end

--- Run the probe with `plan` ({command, args, env, calls, version}); the
--- lines by step name (the last of a name), all of the output (for
--- messages), and the lines in order.
function M.run(plan)
  local out = read_cmd(("timeout -k 2 20 node node/mcp_sdk1_probe.js %s 2>&1"):format(quote(jrpc.encode(plan))))
  local steps, lines = {}, {}
  for line in out:gmatch("[^\n]+") do
    local v = jrpc.decode(line)
    if type(v) == "table" and v.step then
      steps[v.step] = v
      lines[#lines + 1] = v
    end
  end
  return steps, out, lines
end

--- Serve `source` under `lua` and run `calls` (and `extra` plan members).
function M.probe(source, lua, calls, extra)
  local path = M.script(source)
  local plan = { command = lua, args = jrpc.array{ path }, env = M.env(lua), calls = jrpc.array(calls or {}) }
  for k, v in pairs(extra or {}) do plan[k] = v end
  local steps, out, lines = M.run(plan)
  os.remove(path)
  return steps, out, lines
end

--- JSON text with object keys sorted, arrays as arrays (decoded arrays
--- carry jrpc.array's mark): compares a schema's shapes, not its order.
function M.canonical(v)
  if type(v) ~= "table" then return jrpc.encode(v) end
  local parts = {}
  if getmetatable(v) == getmetatable(jrpc.array{}) then
    for i, x in ipairs(v) do parts[i] = M.canonical(x) end
    return "[" .. table.concat(parts, ",") .. "]"
  end
  local keys = {}
  for k in pairs(v) do keys[#keys + 1] = k end
  table.sort(keys)
  for i, k in ipairs(keys) do parts[i] = jrpc.encode(k) .. ":" .. M.canonical(v[k]) end
  return "{" .. table.concat(parts, ",") .. "}"
end

return M
