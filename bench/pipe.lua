-- bench/pipe.lua: round trips per second over a pipe to a child process,
-- jrpc's examples/spec_server.lua next to the same work done by a lua-cjson
-- loop, a json-rpc-2.0 (npm) server and a vscode-jsonrpc server, measured by
-- build/bench/loadgen (C); plus loadgen's ceiling against a server that
-- answers without parsing (build/bench/null_server).
--
--   lua5.4 bench/pipe.lua        (part of make bench; builds what it needs)
--
-- Environment: PIPE_SECONDS (measured time per run, default 2), PIPE_RUNS
-- (best of, default 3), PIPE_INFLIGHT (default 64), PIPE_PEAK (requests in
-- flight for the memory column, default 10000). Prints a Markdown table.
-- Exits non-zero if any run failed (a server died, stalled or answered
-- wrongly); missing targets are reported, not fatal.

local source = debug.getinfo(1, "S").source
local here = source:match("^@(.*)[/\\][^/\\]*$") or "."
local root = here .. "/.."

local SECONDS = tonumber(os.getenv("PIPE_SECONDS")) or 2
local RUNS = tonumber(os.getenv("PIPE_RUNS")) or 3
local INFLIGHT = tonumber(os.getenv("PIPE_INFLIGHT")) or 64
local PEAK = tonumber(os.getenv("PIPE_PEAK")) or 10000

local LOADGEN = root .. "/build/bench/loadgen"

-- key: the rows the ratio columns divide by; jrpc: the rows held to targets.
local servers = {
  {name = "null server (loadgen ceiling)", framing = "ndjson",
   cmd = {root .. "/build/bench/null_server"}},
  {name = "null server (loadgen ceiling)", framing = "lsp",
   cmd = {root .. "/build/bench/null_server", "--framing", "lsp"}},
  {name = "lua-cjson loop (Lua 5.4)", framing = "ndjson", key = "cjson",
   cmd = {"lua5.4", root .. "/bench/servers/cjson_server.lua"}},
  {name = "json-rpc-2.0 (Node)", framing = "ndjson",
   cmd = {"node", root .. "/bench/servers/jsonrpc2_server.js"}},
  {name = "vscode-jsonrpc (Node)", framing = "lsp", key = "vscode",
   cmd = {"node", root .. "/bench/servers/vscode_server.js"}},
  {name = "jrpc spec_server (Lua 5.4)", framing = "ndjson", jrpc = true,
   cmd = {"lua5.4", root .. "/examples/spec_server.lua"}},
  {name = "jrpc spec_server (LuaJIT)", framing = "ndjson", jrpc = true,
   cmd = {"luajit", root .. "/examples/spec_server.lua"}},
  {name = "jrpc spec_server (Lua 5.4)", framing = "lsp", jrpc = true,
   cmd = {"lua5.4", root .. "/examples/spec_server.lua", "--framing", "lsp"}},
  {name = "jrpc spec_server (LuaJIT)", framing = "lsp", jrpc = true,
   cmd = {"luajit", root .. "/examples/spec_server.lua", "--framing", "lsp"}},
}

local TARGETS = {cjson = 1.5, vscode = 6}
local LABELS = {cjson = "lua-cjson loop", vscode = "vscode-jsonrpc"}

local shell = dofile(here .. "/shell.lua")
local shell_quote, capture = shell.quote, shell.capture

--- One loadgen run: its key=value result, or nil and loadgen's message.
---@param server table  a row of `servers`
---@param flags string[]  loadgen flags
---@return table|nil result, string|nil err
local function loadgen(server, flags)
  local words = {shell_quote(LOADGEN), "--framing", server.framing}
  for _, f in ipairs(flags) do words[#words + 1] = shell_quote(f) end
  words[#words + 1] = "--"
  for _, a in ipairs(server.cmd) do words[#words + 1] = shell_quote(a) end
  local out, code = capture(table.concat(words, " "))
  local line = out:match("framing=[^\n]*")
  if code ~= 0 or not line then
    local why = out:match("loadgen: [^\n]*") or out:gsub("%s+$", "")
    return nil, ("exit %d: %s"):format(code, why)
  end
  local r = {}
  for k, v in line:gmatch("([%w_]+)=(%S+)") do r[k] = tonumber(v) or v end
  return r
end

--- Best round trips/s of RUNS runs and the peak RSS at PEAK in flight.
---@param server table
---@return table result  {rps=, hwm_kib=, err=}
local function measure(server)
  local best, err = nil, nil
  for _ = 1, RUNS do
    local r, e = loadgen(server, {"--inflight", INFLIGHT, "--seconds", SECONDS})
    if r then
      if not best or r.rps > best then best = r.rps end
    else
      err = e
    end
  end
  local peak, perr = loadgen(server, {"--peak", PEAK})
  return {rps = best, hwm_kib = peak and peak.hwm_kib, err = err or perr}
end

local function ratio(r, base)
  if not (r and base) then return "-" end
  return ("%.2f"):format(r / base)
end

local function mib(kib)
  if not kib then return "-" end
  return ("%.1f MiB"):format(kib / 1024)
end

local function thousands(n)
  local s = ("%d"):format(n)
  repeat
    local k
    s, k = s:gsub("^(%d+)(%d%d%d)", "%1,%2")
  until k == 0
  return s
end

local function first_line(cmd)
  local out = capture(cmd)
  return (out:match("[^\n]*"))
end

-- {====== build, measure, report
local built_out, built = capture("make -s --no-print-directory -C " .. shell_quote(root)
  .. " all bench-tools")
if built ~= 0 then
  io.stderr:write(built_out, "pipe.lua: the build failed\n")
  os.exit(1)
end

local results, base, failed = {}, {}, false
for i, s in ipairs(servers) do
  io.stderr:write(("pipe.lua: %s, %s ...\n"):format(s.name, s.framing))
  results[i] = measure(s)
  if s.key then base[s.key] = results[i].rps end
  if results[i].err then failed = true end
end

print(("## Round trips over a pipe (%s; %d in flight; best of %d × %g s; %s CPUs, %s)")
  :format(os.date("!%Y-%m-%d %H:%M UTC"), INFLIGHT, RUNS, SECONDS,
    first_line("nproc"), first_line("uname -sm")))
print()
print(("| server | framing | round trips/s | × lua-cjson loop | × vscode-jsonrpc"
  .. " | peak RSS, %s in flight |"):format(thousands(PEAK)))
print("| --- | --- | ---: | ---: | ---: | ---: |")
for i, s in ipairs(servers) do
  local r = results[i]
  print(("| %s | %s | %s | %s | %s | %s |"):format(s.name, s.framing,
    r.rps and ("%.0f"):format(r.rps) or "failed", ratio(r.rps, base.cjson),
    ratio(r.rps, base.vscode), mib(r.hwm_kib)))
end
print()
for i, s in ipairs(servers) do
  if s.jrpc and results[i].rps then
    local verdicts = {}
    for _, key in ipairs({"cjson", "vscode"}) do
      local x = base[key] and results[i].rps / base[key]
      verdicts[#verdicts + 1] = ("%s× %s (target %g×: %s)"):format(
        x and ("%.2f"):format(x) or "-", LABELS[key], TARGETS[key],
        x and (x >= TARGETS[key] and "met" or "NOT met") or "-")
    end
    print(("- %s, %s: %s"):format(s.name, s.framing, table.concat(verdicts, ", ")))
  end
end
for i, s in ipairs(servers) do
  if results[i].err then
    print(("- FAILED: %s, %s: %s"):format(s.name, s.framing, results[i].err))
  end
end
-- }======

if failed then os.exit(1) end
