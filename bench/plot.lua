-- bench/plot.lua: a PNG of round trips/s against requests in flight, one
-- panel per client, one line per server, from the medians that
-- bench/node_pipe.lua wrote (BENCH_OUT/rps-CLIENT.tsv); drawn by gnuplot
-- (Debian's gnuplot-nox, in make deps).
--
--   lua5.4 bench/plot.lua [out.png]     (make bench runs it last;
--                                        default BENCH_OUT/pipe.png)
--
-- A client whose file is missing is left out; exits non-zero when there
-- is no data at all or gnuplot fails.

local source = debug.getinfo(1, "S").source
local here = source:match("^@(.*)[/\\][^/\\]*$") or "."
local bench = dofile(here .. "/stdio_servers.lua")
local shell_quote, capture = bench.shell.quote, bench.shell.capture

local dir = bench.out_dir()
local png = arg[1] or dir .. "/pipe.png"

-- {====== the data: panels[client] = {lines = {[label] = {{w, rps}...}}, order = {label...}}
local panels, clients = {}, {}
for _, key in ipairs({ "loadgen", "node", "jrpc" }) do
  local data = bench.read_rps(key)
  if data then
    local panel = { key = key, lines = {}, order = {} }
    for _, r in ipairs(data) do
      local label = r.server .. ", " .. r.framing
      if not panel.lines[label] then
        panel.lines[label] = {}
        panel.order[#panel.order + 1] = label
      end
      table.insert(panel.lines[label], { r.w, r.rps })
    end
    if #panel.order > 0 then panels[#panels + 1], clients[#clients + 1] = panel, key end
  end
end
if #panels == 0 then
  io.stderr:write("plot.lua: no data in " .. dir .. " (run bench/node_pipe.lua first)\n")
  os.exit(1)
end
-- }======

-- {====== the gnuplot script: data blocks, then one panel per client
local colour = {}  -- the same server gets the same colour in every panel
local palette = { "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
  "#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#000000", "#aec7e8" }
local script = {}
local function add(s) script[#script + 1] = s end
add(("set terminal png size %d,820 font ',9' noenhanced"):format(520 * #panels))  -- names have _
add("set output " .. ("%q"):format(png))
add(("set multiplot layout 1,%d title %q"):format(#panels,
  "Round trips/s over stdio against requests in flight (" .. os.date("!%Y-%m-%d %H:%M UTC") .. ", "
  .. bench.first_line("nproc") .. " CPUs; median of bench/node_pipe.lua's rounds)"))
add("set logscale x 2")
add("set logscale y 10")  -- ratios read as distances; the ceilings are 10x the rest
add("set ylabel 'round trips/s (thousands)'")
add("set grid")
add("set key below vertical maxcols 1 font ',8'")
add("set offsets graph 0.04, graph 0.04, 0, 0")
for p, panel in ipairs(panels) do
  local tics = {}
  for _, label in ipairs(panel.order) do
    local block = ("$p%d_%d"):format(p, #tics + 1)
    tics[#tics + 1] = block
    add(block .. " << EOD")
    table.sort(panel.lines[label], function(a, b) return a[1] < b[1] end)
    for _, pt in ipairs(panel.lines[label]) do add(("%d %.3f"):format(pt[1], pt[2] / 1000)) end
    add("EOD")
  end
  local xs = {}
  for _, pt in ipairs(panel.lines[panel.order[1]]) do xs[#xs + 1] = tostring(pt[1]) end
  add("set xtics (" .. table.concat(xs, ", ") .. ")")
  add(("set title %q"):format("client: " .. bench.clients[panel.key].name))
  local plots = {}
  for i, label in ipairs(panel.order) do
    if not colour[label] then
      local n = 0
      for _ in pairs(colour) do n = n + 1 end
      colour[label] = palette[n % #palette + 1]
    end
    plots[#plots + 1] = ("%s with linespoints lw 2 lc rgb %q title %q"):format(tics[i], colour[label], label)
  end
  add("plot " .. table.concat(plots, ", \\\n  "))
end
add("unset multiplot")
-- }======

local gp_path = dir .. "/pipe.gp"
local gp = assert(io.open(gp_path, "w"))
gp:write(table.concat(script, "\n"), "\n")
gp:close()
local out, code = capture("gnuplot " .. shell_quote(gp_path))
if code ~= 0 then
  io.stderr:write(out, "plot.lua: gnuplot failed (make deps installs gnuplot-nox)\n")
  os.exit(1)
end
print(("plot.lua: wrote %s (clients: %s)"):format(png, table.concat(clients, ", ")))
