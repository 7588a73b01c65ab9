-- bench/latency.lua: the time of one round trip with one request in flight
-- (p50 and p99, microseconds, measured by the client from writing the
-- request to reading its reply), for jrpc's examples/spec_server.lua on
-- Lua 5.4 and LuaJIT, the lua-cjson loop, vscode-jsonrpc and the null
-- server (the client's own floor), driven by node/bench_client.js
-- --latency. The order of servers rotates between rounds; each figure is
-- the median of the rounds' percentiles.
--
--   lua5.4 bench/latency.lua        (part of make bench)
--
-- Environment: LATENCY_CLIENT (node, default, or jrpc), LATENCY_ROUNDS
-- (default 7), LATENCY_SECONDS (measured time per run, default 1). Prints
-- a Markdown table and whether jrpc's p50 and p99 are no worse than the
-- lua-cjson loop's (the issue's target); exits non-zero if a run failed.

local source = debug.getinfo(1, "S").source
local here = source:match("^@(.*)[/\\][^/\\]*$") or "."
local bench = dofile(here .. "/stdio_servers.lua")
local median = bench.median

local ROUNDS = tonumber(os.getenv("LATENCY_ROUNDS")) or 7
local SECONDS = tonumber(os.getenv("LATENCY_SECONDS")) or 1
local CLIENT_KEY = os.getenv("LATENCY_CLIENT") or "node"
local client = bench.clients[CLIENT_KEY]
if not (client and client.cpu) then  -- loadgen has no latency mode
  io.stderr:write("latency.lua: LATENCY_CLIENT must be node or jrpc\n")
  os.exit(2)
end

local servers = { bench.null[1], bench.null[2], bench.cjson, bench.vscode }
for _, r in ipairs(bench.jrpc_servers("jrpc spec_server", bench.root)) do servers[#servers + 1] = r end

bench.build("latency.lua")

local p50, p99, errs = {}, {}, {}
for i = 1, #servers do p50[i], p99[i] = {}, {} end
for round = 1, ROUNDS do
  for k = 0, #servers - 1 do
    local i = (k + round - 1) % #servers + 1  -- rotate the order each round
    local s = servers[i]
    io.stderr:write(("latency.lua: round %d, %s, %s\n"):format(round, s.name, s.framing))
    local r, err = bench.run(client, s, { "--latency", "--seconds", SECONDS })
    if r and r.p50_us then
      table.insert(p50[i], r.p50_us)
      table.insert(p99[i], r.p99_us)
    else
      errs[#errs + 1] = ("%s, %s: %s"):format(s.name, s.framing, err or "no p50_us")
    end
  end
end

local base50, base99
for i, s in ipairs(servers) do
  if s.key == "cjson" then base50, base99 = median(p50[i]), median(p99[i]) end
end

local function us(x) return x and ("%.1f"):format(x) or "failed" end
local function ratio(x, b) return (x and b) and ("%.2f"):format(x / b) or "-" end

print()  -- a blank line first: make bench-stdio concatenates the outputs
print(("## Latency, one request in flight, client: %s (%s; median of %d rounds × %g s; %s)")
  :format(client.name, os.date("!%Y-%m-%d %H:%M UTC"), ROUNDS, SECONDS, bench.machine()))
print()
print("| server | framing | p50 µs | p99 µs | p50 × lua-cjson | p99 × lua-cjson |")
print("| --- | --- | ---: | ---: | ---: | ---: |")
for i, s in ipairs(servers) do
  local a, b = median(p50[i]), median(p99[i])
  print(("| %s | %s | %s | %s | %s | %s |"):format(s.name, s.framing, us(a), us(b),
    ratio(a, base50), ratio(b, base99)))
end
print()
-- target: no worse than the lua-cjson loop (a ratio of at most 1)
for i, s in ipairs(servers) do
  if s.jrpc then
    local a, b = median(p50[i]), median(p99[i])
    local ok = a and b and base50 and base99 and a <= base50 and b <= base99
    print(("- %s, %s: p50 %s µs vs %s, p99 %s µs vs %s (target: no worse than the lua-cjson loop: %s)")
      :format(s.name, s.framing, us(a), us(base50), us(b), us(base99), ok and "met" or "NOT met"))
  end
end
for _, e in ipairs(errs) do print("- FAILED: " .. e) end

if #errs > 0 then os.exit(1) end
