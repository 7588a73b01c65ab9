-- bench/nvim_lsp.lua: jrpc.nvim.lsp_cmd against Neovim's own vim.lsp.rpc,
-- side by side in one headless Neovim (bench/nvim_lsp_run.lua), the same
-- hover requests to the same stub server (bench/servers/lsp_stub.lua, on
-- LuaJIT). Prints a Markdown report: every round, then the median of the
-- rounds and of the per-round ratios (lsp_cmd ÷ vim.lsp.rpc), which is
-- the figure to read on a shared machine. Also written to
-- $BENCH_OUT/nvim_lsp.md when BENCH_OUT is set.
--
--   lua5.4 bench/nvim_lsp.lua        (from the repository root, after make)
--
-- JRPC_NVIM: the Neovim (default build/nvim-debian13/bin/nvim, Debian 13's
-- 0.10, which make bench unpacks); JRPC_BENCH_N (20000 pipelined),
-- JRPC_BENCH_SEQ (2000 one at a time), JRPC_BENCH_ROUNDS (7).
local NVIM = os.getenv("JRPC_NVIM") or "build/nvim-debian13/bin/nvim"
local N = os.getenv("JRPC_BENCH_N") or "20000"
local SEQ = os.getenv("JRPC_BENCH_SEQ") or "2000"
local ROUNDS = os.getenv("JRPC_BENCH_ROUNDS") or "7"

local function sh(cmd)
  local h = assert(io.popen(cmd .. " 2>/dev/null"))
  local s = h:read("a") or ""
  h:close()
  return (s:gsub("%s+$", ""))
end

local function median(list)
  local t = {}
  for i, v in ipairs(list) do t[i] = v end
  table.sort(t)
  local n = #t
  if n == 0 then return 0 / 0 end
  return n % 2 == 1 and t[(n + 1) // 2] or (t[n // 2] + t[n // 2 + 1]) / 2
end

local out = os.tmpname()
local load_before = sh("cut -d' ' -f1-3 /proc/loadavg")
local cmd = ("JRPC_NVIM_OUT=%q JRPC_BENCH_N=%s JRPC_BENCH_SEQ=%s JRPC_BENCH_ROUNDS=%s timeout 600 %q --clean "
  .. "--headless -n --cmd %q -c %q </dev/null >/dev/null 2>&1"):format(out, N, SEQ, ROUNDS, NVIM,
  "set rtp+=" .. sh("pwd"), "luafile bench/nvim_lsp_run.lua")
local ok = os.execute(cmd)
local f = assert(io.open(out))
local rows = {}        -- rows[round][client][measure] = value
local info = {}
for line in f:lines() do
  local round, client, measure, value = line:match("^([^\t]*)\t([^\t]*)\t([^\t]*)\t(.*)$")
  if round == "0" then info[client .. " " .. measure] = value
  elseif round then
    rows[tonumber(round)] = rows[tonumber(round)] or {}
    rows[tonumber(round)][client] = rows[tonumber(round)][client] or {}
    rows[tonumber(round)][client][measure] = tonumber(value) or value
  end
end
f:close()
os.remove(out)
if not ok or info["error error"] then
  io.stderr:write("bench/nvim_lsp.lua: the Neovim run failed: ", tostring(info["error error"]), "\n")
  os.exit(1)
end

local lines = {}
local function say(s) lines[#lines + 1] = s end
say("# lsp_cmd against vim.lsp.rpc, in Neovim " .. info["nvim version"])
say("")
say(("%s UTC; commit %s; %s cores, %s (%s); Neovim %s (%s) headless; load average before: %s.")
  :format(os.date("!%Y-%m-%d %H:%M"), sh("git rev-parse --short HEAD"), sh("nproc"), sh("uname -r"),
    sh("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'"), info["nvim version"], info["nvim jit"],
    load_before))
say(("Per round and client, a fresh `luajit bench/servers/lsp_stub.lua`, %s warm-up requests, then %s "
  .. "`textDocument/hover` requests pipelined (all sent, then every callback awaited) and %s one at a time. "
  .. "Rounds alternate which client goes first. CPU: the editor's user + system time per request.")
  :format("1000", N, SEQ))
say("")
say("| round | client | pipelined req/s | editor CPU µs/req | one at a time req/s | editor CPU µs/req "
  .. "| wrong answers |")
say("|---:|---|---:|---:|---:|---:|---:|")
local ratios = { pipelined_rate = {}, pipelined_cpu_us = {}, sequential_rate = {}, sequential_cpu_us = {} }
local per = { ["vim.lsp.rpc"] = {}, lsp_cmd = {} }
local wrong = 0
for round = 1, #rows do
  for _, client in ipairs{ "vim.lsp.rpc", "lsp_cmd" } do
    local r = rows[round][client]
    say(("| %d | %s | %d | %.1f | %d | %.1f | %d |"):format(round, client, r.pipelined_rate, r.pipelined_cpu_us,
      r.sequential_rate, r.sequential_cpu_us, r.wrong))
    wrong = wrong + r.wrong
    for m in pairs(ratios) do
      per[client][m] = per[client][m] or {}
      table.insert(per[client][m], r[m])
    end
  end
  for m, list in pairs(ratios) do list[#list + 1] = rows[round].lsp_cmd[m] / rows[round]["vim.lsp.rpc"][m] end
end
say("")
say("Medians of the rounds:")
say("")
say("| client | pipelined req/s | editor CPU µs/req | one at a time req/s | editor CPU µs/req |")
say("|---|---:|---:|---:|---:|")
for _, client in ipairs{ "vim.lsp.rpc", "lsp_cmd" } do
  local p = per[client]
  say(("| %s | %d | %.1f | %d | %.1f |"):format(client, median(p.pipelined_rate), median(p.pipelined_cpu_us),
    median(p.sequential_rate), median(p.sequential_cpu_us)))
end
say(("| lsp_cmd ÷ vim.lsp.rpc (median of the per-round ratios) | %.2f | %.2f | %.2f | %.2f |")
  :format(median(ratios.pipelined_rate), median(ratios.pipelined_cpu_us), median(ratios.sequential_rate),
    median(ratios.sequential_cpu_us)))
local lo, hi = math.huge, -math.huge
for _, v in ipairs(ratios.pipelined_rate) do lo, hi = math.min(lo, v), math.max(hi, v) end
say("")
say(("Pipelined rate ratio per round: %.2f to %.2f. Wrong answers: %d."):format(lo, hi, wrong))
local text = table.concat(lines, "\n") .. "\n"
io.write(text)
local dir = os.getenv("BENCH_OUT")
if dir and dir ~= "" then
  os.execute(("mkdir -p %q"):format(dir))
  local w = assert(io.open(dir .. "/nvim_lsp.md", "w"))
  w:write(text)
  w:close()
end
if wrong > 0 then os.exit(1) end
