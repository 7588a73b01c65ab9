-- bench/summary.lua: one Markdown table of the three clients side by side,
-- from the medians bench/node_pipe.lua wrote (BENCH_OUT/rps-CLIENT.tsv):
-- round trips/s in thousands for the baselines and ceilings, and for jrpc
-- × the lua-cjson loop with × vscode-jsonrpc in brackets (each client's
-- own rows). make bench-stdio prints it with the other tables.
--
--   lua5.4 bench/summary.lua

local source = debug.getinfo(1, "S").source
local here = source:match("^@(.*)[/\\][^/\\]*$") or "."
local bench = dofile(here .. "/stdio_servers.lua")

local dir = bench.out_dir()
local CLIENTS = { { "loadgen", "loadgen" }, { "node", "Node" }, { "jrpc", "jrpc client" } }

-- rps[client][row label][w]; rows in first-seen order; counts in flight seen
local rps, rows, seen_row, ws, seen_w = {}, {}, {}, {}, {}
local present = {}
for _, c in ipairs(CLIENTS) do
  local data = bench.read_rps(c[1])
  if data then
    present[#present + 1] = c
    rps[c[1]] = {}
    for _, r in ipairs(data) do
      local row, w = r.server .. "\t" .. r.framing, r.w
      if not seen_row[row] then seen_row[row] = true; rows[#rows + 1] = row end
      if not seen_w[w] then seen_w[w] = true; ws[#ws + 1] = w end
      rps[c[1]][row] = rps[c[1]][row] or {}
      rps[c[1]][row][w] = r.rps
    end
  end
end
if #present == 0 then
  io.stderr:write("summary.lua: no data in " .. dir .. "\n")
  os.exit(1)
end
table.sort(ws)

local CJSON = bench.cjson.name .. "\t" .. bench.cjson.framing
local VSCODE = bench.vscode.name .. "\t" .. bench.vscode.framing

local function thousands(x)
  if x >= 1e6 then return ("%d,%03d"):format(x // 1e6, (x % 1e6) // 1e3) end
  if x >= 1e5 then return ("%d"):format(math.floor(x / 1e3 + 0.5)) end
  return ("%.1f"):format(x / 1e3)
end

local function cell(client, row, w)
  local x = rps[client][row] and rps[client][row][w]
  if not x then return "-" end
  if not row:match("^jrpc") then return thousands(x) end
  local c = rps[client][CJSON] and rps[client][CJSON][w]
  local v = rps[client][VSCODE] and rps[client][VSCODE][w]
  return ("%s (%s)"):format(c and ("%.2f"):format(x / c) or "-", v and ("%.2f"):format(x / v) or "-")
end

print()
print("## The three clients side by side")
print()
print("Round trips/s in thousands; for jrpc, × the lua-cjson loop (× vscode-jsonrpc)"
  .. " under the same client, medians of bench/node_pipe.lua:")
print()
local head, rule = { "| server | framing" }, { "|---|---" }
for _, c in ipairs(present) do
  for i, w in ipairs(ws) do
    head[#head + 1] = i == 1 and (" | %s %d"):format(c[2], w) or (" | %d"):format(w)
    rule[#rule + 1] = "|---:"
  end
end
print(table.concat(head) .. " |")
print(table.concat(rule) .. "|")
for _, row in ipairs(rows) do
  local server, framing = row:match("^(.-)\t(.*)$")
  local cells = { ("| %s | %s"):format(server, framing) }
  for _, c in ipairs(present) do
    for _, w in ipairs(ws) do cells[#cells + 1] = " | " .. cell(c[1], row, w) end
  end
  print(table.concat(cells) .. " |")
end

-- A server cannot be measured faster than its client can drive a server that
-- answers without parsing (the null server). Where that ceiling is under
-- 1.5× the lua-cjson loop, no server can show 1.5× with that client.
local function ceiling_row(client, framing)
  return rps[client][bench.null[1].name .. "\t" .. framing]
end

print()
print("The clients' ceilings ÷ the lua-cjson loop (the highest ratio any server can show under that"
  .. " client), and each jrpc row as a share of its client's ceiling in the same framing:")
print()
print(table.concat(head) .. " |")
print(table.concat(rule) .. "|")
for _, framing in ipairs({ "ndjson", "lsp" }) do
  local cells = { ("| ceiling ÷ lua-cjson loop | %s"):format(framing) }
  for _, c in ipairs(present) do
    for _, w in ipairs(ws) do
      local top = ceiling_row(c[1], framing)
      local base = rps[c[1]][CJSON]
      top, base = top and top[w], base and base[w]
      cells[#cells + 1] = " | " .. ((top and base) and ("%.2f"):format(top / base) or "-")
    end
  end
  print(table.concat(cells) .. " |")
end
for _, row in ipairs(rows) do
  local server, framing = row:match("^(.-)\t(.*)$")
  if server:match("^jrpc") then
    local cells = { ("| %s, share of the ceiling | %s"):format(server, framing) }
    for _, c in ipairs(present) do
      for _, w in ipairs(ws) do
        local top, x = ceiling_row(c[1], framing), rps[c[1]][row]
        top, x = top and top[w], x and x[w]
        cells[#cells + 1] = " | " .. ((top and x) and ("%d%%"):format(math.floor(100 * x / top + 0.5)) or "-")
      end
    end
    print(table.concat(cells) .. " |")
  end
end
