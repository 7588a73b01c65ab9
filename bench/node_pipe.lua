-- bench/node_pipe.lua: round trips per second over stdio with a Node.js
-- client (node/bench_client.js: child_process, so stdio is a socketpair as
-- under editors and MCP hosts; bursts of new requests in one write), for
-- jrpc's examples/spec_server.lua, the lua-cjson loop, vscode-jsonrpc and
-- the null server (the client's own ceiling), at several counts in flight.
-- The same client drives every server; the order of servers rotates
-- between rounds, and each figure is the median of the rounds.
--
--   lua5.4 bench/node_pipe.lua        (part of make bench; needs make node-deps)
--
-- Environment: NODE_INFLIGHT (default "16 64 256"), NODE_ROUNDS (default 3),
-- NODE_SECONDS (measured time per run, default 1), NODE_BASELINE (another
-- checkout, e.g. /work/main: its spec_server is measured in the same run,
-- for before/after ratios), NODE_CLIENT=loadgen (drive the same matrix with
-- build/bench/loadgen instead: pipes, not a socketpair; its CPU column is
-- then "-"). Prints a Markdown table; exits non-zero if any run failed.

local source = debug.getinfo(1, "S").source
local here = source:match("^@(.*)[/\\][^/\\]*$") or "."
local root = here .. "/.."

local INFLIGHT = {}
for w in (os.getenv("NODE_INFLIGHT") or "16 64 256"):gmatch("%d+") do INFLIGHT[#INFLIGHT + 1] = tonumber(w) end
local ROUNDS = tonumber(os.getenv("NODE_ROUNDS")) or 3
local SECONDS = tonumber(os.getenv("NODE_SECONDS")) or 1
local BASELINE = os.getenv("NODE_BASELINE")
local CLIENT = os.getenv("NODE_CLIENT") == "loadgen" and "loadgen" or "node"

local function spec_server(checkout, lua, framing)
  local cmd = {lua, checkout .. "/examples/spec_server.lua"}
  if framing == "lsp" then cmd[3], cmd[4] = "--framing", "lsp" end
  return cmd
end

-- key: the rows the ratio columns divide by.
local servers = {
  {name = "null server (client ceiling)", framing = "ndjson", cmd = {root .. "/build/bench/null_server"}},
  {name = "null server (client ceiling)", framing = "lsp",
   cmd = {root .. "/build/bench/null_server", "--framing", "lsp"}},
  {name = "lua-cjson loop (Lua 5.4)", framing = "ndjson", key = "cjson",
   cmd = {"lua5.4", root .. "/bench/servers/cjson_server.lua"}},
  {name = "vscode-jsonrpc (Node)", framing = "lsp", key = "vscode",
   cmd = {"node", root .. "/bench/servers/vscode_server.js"}},
}
local function add_jrpc(label, checkout)
  for _, framing in ipairs({"ndjson", "lsp"}) do
    for _, lua in ipairs({{"lua5.4", "Lua 5.4"}, {"luajit", "LuaJIT"}}) do
      servers[#servers + 1] = {name = ("%s (%s)"):format(label, lua[2]), framing = framing,
        cmd = spec_server(checkout, lua[1], framing)}
    end
  end
end
add_jrpc("jrpc spec_server", root)
if BASELINE then add_jrpc("jrpc spec_server at " .. BASELINE, BASELINE) end

local shell = dofile(here .. "/shell.lua")
local shell_quote, capture = shell.quote, shell.capture

--- One client run: its key=value fields, or nil and the client's message.
local function run(server, inflight)
  local words = {"node", shell_quote(root .. "/node/bench_client.js")}
  if CLIENT == "loadgen" then words = {shell_quote(root .. "/build/bench/loadgen")} end
  for _, w in ipairs({"--framing", server.framing, "--inflight", inflight, "--seconds", SECONDS, "--"}) do
    words[#words + 1] = w
  end
  for _, a in ipairs(server.cmd) do words[#words + 1] = shell_quote(a) end
  local out, code = capture(table.concat(words, " "))
  local line = out:match("framing=[^\n]*")
  if code ~= 0 or not line then return nil, ("exit %d: %s"):format(code, (out:gsub("%s+$", ""))) end
  local r = {}
  for k, v in line:gmatch("([%w_]+)=(%S+)") do r[k] = tonumber(v) or v end
  return r
end

local function median(xs)
  if #xs == 0 then return nil end
  local s = {}
  for i, x in ipairs(xs) do s[i] = x end
  table.sort(s)
  local m = (#s + 1) // 2
  if #s % 2 == 1 then return s[m] end
  return (s[m] + s[m + 1]) / 2
end

-- {====== build, measure, report
local built_out, built = capture("make -s --no-print-directory -C " .. shell_quote(root) .. " all bench-tools")
if built ~= 0 then
  io.stderr:write(built_out, "node_pipe.lua: the build failed\n")
  os.exit(1)
end

-- rps[i][w], cpu[i][w]: lists over rounds
local rps, cpu, errs = {}, {}, {}
for i = 1, #servers do rps[i], cpu[i] = {}, {} end
for round = 1, ROUNDS do
  for _, w in ipairs(INFLIGHT) do
    for k = 0, #servers - 1 do
      local i = (k + round - 1) % #servers + 1  -- rotate the order each round
      local s = servers[i]
      io.stderr:write(("node_pipe.lua: round %d, %d in flight, %s, %s\n"):format(round, w, s.name, s.framing))
      local r, err = run(s, w)
      rps[i][w] = rps[i][w] or {}
      cpu[i][w] = cpu[i][w] or {}
      if r then
        table.insert(rps[i][w], r.rps)
        table.insert(cpu[i][w], r.client_cpu)
      else
        errs[#errs + 1] = ("%s, %s, %d in flight: %s"):format(s.name, s.framing, w, err)
      end
    end
  end
end

local function first_line(cmd)
  return (capture(cmd):match("[^\n]*"))
end

local base = {}
for i, s in ipairs(servers) do
  if s.key then
    base[s.key] = {}
    for _, w in ipairs(INFLIGHT) do base[s.key][w] = median(rps[i][w]) end
  end
end

local function ratio(x, b)
  if not (x and b) then return "-" end
  return ("%.2f"):format(x / b)
end

print(("## Round trips over stdio, client %s (%s; median of %d rounds × %g s; %s CPUs, %s, node %s)")
  :format(CLIENT == "loadgen" and "build/bench/loadgen" or "node/bench_client.js",
    os.date("!%Y-%m-%d %H:%M UTC"), ROUNDS, SECONDS, first_line("nproc"),
    first_line("uname -sm"), first_line("node --version")))
print()
local head, rule = {"| server | framing"}, {"| --- | ---"}
for _, w in ipairs(INFLIGHT) do
  head[#head + 1] = (" | %d: round trips/s | × lua-cjson | × vscode | client CPU"):format(w)
  rule[#rule + 1] = " | ---: | ---: | ---: | ---:"
end
print(table.concat(head) .. " |")
print(table.concat(rule) .. " |")
for i, s in ipairs(servers) do
  local cells = {("| %s | %s"):format(s.name, s.framing)}
  for _, w in ipairs(INFLIGHT) do
    local m, c = median(rps[i][w]), median(cpu[i][w])
    cells[#cells + 1] = (" | %s | %s | %s | %s"):format(m and ("%.0f"):format(m) or "failed",
      ratio(m, base.cjson and base.cjson[w]), ratio(m, base.vscode and base.vscode[w]),
      c and ("%.2f"):format(c) or "-")
  end
  print(table.concat(cells) .. " |")
end
print()
for _, e in ipairs(errs) do print("- FAILED: " .. e) end
-- }======

if #errs > 0 then os.exit(1) end
