-- bench/gc_inside.lua: how many requests pay for the collector, with
-- jrpc.uv.idle_gc on and off. The Node client keeps one request in flight
-- to bench/servers/gc_probe_server.lua (examples/spec_server.lua's methods,
-- newlines), which times each `receive` and counts those during which the
-- heap shrank. Lua 5.4 and LuaJIT; on and off alternate; medians of the
-- rounds.
--
--   lua5.4 bench/gc_inside.lua        (part of make bench-stdio)
--
-- Environment: GC_ROUNDS (default 3), GC_SECONDS (measured time per run,
-- default 4). Prints a Markdown table; exits non-zero if a run failed.
local source = debug.getinfo(1, "S").source
local here = source:match("^@(.*)[/\\][^/\\]*$") or "."
local bench = dofile(here .. "/stdio_servers.lua")
local median = bench.median

local ROUNDS = tonumber(os.getenv("GC_ROUNDS")) or 3
local SECONDS = tonumber(os.getenv("GC_SECONDS")) or 4
local client = bench.clients.node
local probe = bench.root .. "/bench/servers/gc_probe_server.lua"
local out = os.tmpname()

bench.build("gc_inside.lua")

local rows = {}
for _, lua in ipairs{ "lua5.4", "luajit" } do
  for _, mode in ipairs{ "off", "on" } do
    rows[#rows + 1] = { lua = lua, mode = mode, per = {}, each = {}, p50 = {}, p99 = {} }
  end
end

local failed = {}
local function measure(row)
  os.remove(out)
  local server = { framing = "ndjson", cmd = { row.lua, probe, row.mode, out } }
  local r, err = bench.run(client, server, { "--latency", "--seconds", SECONDS })
  local f = io.open(out)
  local line = f and f:read("l")
  if f then f:close() end
  if not (r and line) then
    failed[#failed + 1] = ("%s, idle_gc %s: %s"):format(row.lua, row.mode, err or "no report")
    return
  end
  local p = {}
  for k, v in line:gmatch("([%w_]+)=(%S+)") do p[k] = tonumber(v) end
  table.insert(row.per, p.collections / p.receives * 20000)
  if p.collections > 0 then table.insert(row.each, p.collection_p50_us) end
  table.insert(row.p50, p.p50_us)
  table.insert(row.p99, p.p99_us)
end

for round = 1, ROUNDS do
  for k = 0, #rows - 1 do
    local row = rows[(k + round - 1) % #rows + 1]  -- rotate the order each round
    io.stderr:write(("gc_inside.lua: round %d, %s, idle_gc %s\n"):format(round, row.lua, row.mode))
    measure(row)
  end
end
os.remove(out)
os.remove(out .. ".part")

local function num(x, fmt) return x and (fmt):format(x) or "-" end

print()  -- a blank line first: make bench-stdio concatenates the outputs
print(("## Requests that pay for the collector, idle_gc off and on (%s; Node client, "
  .. "1 in flight; median of %d rounds × %g s; %s)")
  :format(os.date("!%Y-%m-%d %H:%M UTC"), ROUNDS, SECONDS, bench.machine()))
print()
print("| interpreter | idle_gc | requests with a collection inside, per 20,000 | each, median µs"
  .. " | receive p50 µs | receive p99 µs |")
print("| --- | --- | ---: | ---: | ---: | ---: |")
for _, row in ipairs(rows) do
  print(("| %s | %s | %s | %s | %s | %s |"):format(row.lua, row.mode, num(median(row.per), "%.0f"),
    num(median(row.each), "%.1f"), num(median(row.p50), "%.1f"), num(median(row.p99), "%.1f")))
end
for _, f in ipairs(failed) do print("- failed: " .. f) end
if #failed > 0 then os.exit(1) end
