-- bench/stdio_servers.lua: the servers the stdio benchmarks measure, the
-- clients that drive them, and one client run (loaded with dofile by
-- bench/node_pipe.lua, bench/latency.lua and bench/memory.lua; not a
-- benchmark itself). Every client takes the same arguments
-- (--framing F --inflight W --seconds S ... -- server command) and prints
-- one line of key=value starting with framing=.
--
-- JRPC_CLIENT_LUA: the interpreter of the jrpc client (default luajit: the
-- faster one, so that its own ceiling is higher).
local source = debug.getinfo(1, "S").source
local here = source:match("^@(.*)[/\\][^/\\]*$") or "."
local root = here .. "/.."

local shell = dofile(here .. "/shell.lua")
local shell_quote, capture = shell.quote, shell.capture

local M = { root = root, shell = shell }

local JRPC_CLIENT_LUA = os.getenv("JRPC_CLIENT_LUA") or "luajit"

-- name: the client's label in tables and plots; cpu: it reports client_cpu
M.clients = {
  node = { name = "Node (node/bench_client.js)", cpu = true,
    cmd = { "node", root .. "/node/bench_client.js" } },
  loadgen = { name = "loadgen (C)", cpu = false, cmd = { root .. "/build/bench/loadgen" } },
  jrpc = { name = ("jrpc on luv (%s bench/clients/jrpc_uv_client.lua)"):format(JRPC_CLIENT_LUA), cpu = true,
    cmd = { JRPC_CLIENT_LUA, root .. "/bench/clients/jrpc_uv_client.lua" } },
}

-- The loop polls 100 µs before it sleeps and the collector works while it
-- waits, named here rather than left to the server's defaults (older
-- checkouts, measured side by side, take the same flags).
local function spec_server(checkout, lua, framing)
  local cmd = { lua, checkout .. "/examples/spec_server.lua", "--idle-gc", "on", "--busy-poll", "100" }
  if framing == "lsp" then cmd[#cmd + 1], cmd[#cmd + 2] = "--framing", "lsp" end
  return cmd
end

--- The jrpc spec_server rows of `checkout`, both framings, both interpreters.
---@param label string
---@param checkout string
---@return table[]
function M.jrpc_servers(label, checkout)
  local rows = {}
  for _, framing in ipairs({ "ndjson", "lsp" }) do
    for _, lua in ipairs({ { "lua5.4", "Lua 5.4" }, { "luajit", "LuaJIT" } }) do
      rows[#rows + 1] = { name = ("%s (%s)"):format(label, lua[2]), framing = framing, jrpc = true,
        cmd = spec_server(checkout, lua[1], framing) }
    end
  end
  return rows
end

-- key: the rows ratio columns divide by; null: the client's ceiling.
M.null = {
  { name = "null server (client ceiling)", framing = "ndjson", null = true,
    cmd = { root .. "/build/bench/null_server" } },
  { name = "null server (client ceiling)", framing = "lsp", null = true,
    cmd = { root .. "/build/bench/null_server", "--framing", "lsp" } },
}
M.cjson = { name = "lua-cjson loop (Lua 5.4)", framing = "ndjson", key = "cjson",
  cmd = { "lua5.4", root .. "/bench/servers/cjson_server.lua" } }
M.vscode = { name = "vscode-jsonrpc (Node)", framing = "lsp", key = "vscode",
  cmd = { "node", root .. "/bench/servers/vscode_server.js" } }

--- One client run: its key=value fields, or nil and what the client said.
---@param client table  one of M.clients
---@param server table  a server row
---@param flags (string|number)[]  client flags besides --framing
---@return table|nil fields, string|nil err
function M.run(client, server, flags)
  local words = {}
  for _, w in ipairs(client.cmd) do words[#words + 1] = shell_quote(w) end
  words[#words + 1] = "--framing " .. server.framing
  for _, f in ipairs(flags) do words[#words + 1] = shell_quote(f) end
  words[#words + 1] = "--"
  for _, a in ipairs(server.cmd) do words[#words + 1] = shell_quote(a) end
  local out, code = capture(table.concat(words, " "))
  local line = out:match("framing=[^\n]*")
  if code ~= 0 or not line then return nil, ("exit %d: %s"):format(code, (out:gsub("%s+$", ""))) end
  local r = {}
  for k, v in line:gmatch("([%w_]+)=(%S+)") do r[k] = tonumber(v) or v end
  return r
end

function M.median(xs)
  if xs == nil or #xs == 0 then return nil end
  local s = {}
  for i, x in ipairs(xs) do s[i] = x end
  table.sort(s)
  local m = (#s + 1) // 2
  if #s % 2 == 1 then return s[m] end
  return (s[m] + s[m + 1]) / 2
end

function M.first_line(cmd)
  return (capture(cmd):match("[^\n]*"))
end

--- "2 CPUs, Linux x86_64, load 1.23": what the tables' headings say of the machine.
function M.machine()
  local f = io.open("/proc/loadavg")
  local avg = f and f:read("l") or "?"
  if f then f:close() end
  return ("%s CPUs, %s, load average %s"):format(M.first_line("nproc"), M.first_line("uname -sm"),
    avg:match("^(%S+ %S+ %S+)") or avg)
end

--- Build the core and the bench tools; exits on failure.
function M.build(who)
  local out, code = capture("make -s --no-print-directory -C " .. shell_quote(root) .. " all bench-tools")
  if code ~= 0 then
    io.stderr:write(out, who, ": the build failed\n")
    os.exit(1)
  end
end

--- Where the benchmarks write their data and plots (BENCH_OUT, default
--- build/bench/out), created.
function M.out_dir()
  local dir = os.getenv("BENCH_OUT") or root .. "/build/bench/out"
  capture("mkdir -p " .. shell_quote(dir))
  return dir
end

--- The medians bench/node_pipe.lua wrote for `client` (a key of M.clients)
--- in BENCH_OUT/rps-CLIENT.tsv, in file order: { {server=, framing=, w=,
--- rps=}, ... }; nil when the file is missing.
---@param client string
---@return table[]|nil
function M.read_rps(client)
  local f = io.open(M.out_dir() .. "/rps-" .. client .. ".tsv")
  if not f then return nil end
  local rows = {}
  for line in f:lines() do
    local server, framing, w, rps = line:match("^[^#\t][^\t]*\t([^\t]+)\t([^\t]+)\t(%d+)\t(%d+)")
    if server then
      rows[#rows + 1] = { server = server, framing = framing, w = tonumber(w), rps = tonumber(rps) }
    end
  end
  f:close()
  return rows
end

return M
