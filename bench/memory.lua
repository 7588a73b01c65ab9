-- bench/memory.lua: the server's resident memory while a client keeps
-- 10,000 requests in flight, for jrpc's examples/spec_server.lua (Lua 5.4
-- and LuaJIT, both framings) against the lua-cjson loop. The client is
-- bench/clients/jrpc_uv_client.lua --rss: it spawns the server, reads its
-- VmRSS and RssAnon from /proc once it idles (0.5 s, before the first
-- request), keeps MEMORY_INFLIGHT requests in flight for MEMORY_SECONDS,
-- then reads its VmHWM (peak resident set). Start and peak apart tell the
-- memory of the program (interpreter, libraries, modules: "start") from
-- the memory of the load ("growth").
--
--   lua5.4 bench/memory.lua        (part of make bench)
--
-- Environment: MEMORY_INFLIGHT (default 10000), MEMORY_SECONDS (default 2).
-- Prints a Markdown table and whether jrpc's peak is within 2× the
-- lua-cjson loop's (the issue's target); exits non-zero if a run failed.

local source = debug.getinfo(1, "S").source
local here = source:match("^@(.*)[/\\][^/\\]*$") or "."
local bench = dofile(here .. "/stdio_servers.lua")

local INFLIGHT = tonumber(os.getenv("MEMORY_INFLIGHT")) or 10000
local SECONDS = tonumber(os.getenv("MEMORY_SECONDS")) or 2
local TARGET = 2

-- rows without the backlog pause (pause_reading_at at the 16 MiB write
-- bound, as before 2026-12-01's fourth session): what the pause saves
local NO_PAUSE = 16 * 1024 * 1024

local servers = { bench.cjson }
for _, r in ipairs(bench.jrpc_servers("jrpc spec_server", bench.root)) do servers[#servers + 1] = r end
for _, lua in ipairs({ { "lua5.4", "Lua 5.4" }, { "luajit", "LuaJIT" } }) do
  servers[#servers + 1] = { name = ("jrpc spec_server --pause-reading-at %d (%s)"):format(NO_PAUSE, lua[2]),
    framing = "ndjson", jrpc = true, comparison = true,
    cmd = { lua[1], bench.root .. "/examples/spec_server.lua", "--pause-reading-at", NO_PAUSE } }
end

bench.build("memory.lua")

local results, errs = {}, {}
for i, s in ipairs(servers) do
  io.stderr:write(("memory.lua: %s, %s\n"):format(s.name, s.framing))
  local r, err = bench.run(bench.clients.jrpc, s, { "--rss", "--inflight", INFLIGHT, "--seconds", SECONDS })
  if r and tonumber(r.hwm_kib) then
    results[i] = r
  else
    errs[#errs + 1] = ("%s, %s: %s"):format(s.name, s.framing, err or "no hwm_kib")
  end
end

local base = results[1] and results[1].hwm_kib

local function kib(x) return tonumber(x) and ("%d"):format(x) or "-" end

print()  -- a blank line first: make bench-stdio concatenates the outputs
print(("## Server memory, %d requests kept in flight (%s; client %s; %g s; %s)")
  :format(INFLIGHT, os.date("!%Y-%m-%d %H:%M UTC"), bench.clients.jrpc.name, SECONDS, bench.machine()))
print()
print("| server | framing | RSS at start, KiB | of it anonymous | peak RSS (VmHWM), KiB | growth, KiB"
  .. " | peak × lua-cjson |")
print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
for i, s in ipairs(servers) do
  local r = results[i] or {}
  local start, hwm = tonumber(r.start_rss_kib), tonumber(r.hwm_kib)
  print(("| %s | %s | %s | %s | %s | %s | %s |"):format(s.name, s.framing, kib(start),
    kib(r.start_anon_kib), kib(hwm), (start and hwm) and kib(hwm - start) or "-",
    (hwm and base) and ("%.2f"):format(hwm / base) or "-"))
end
print()
for i, s in ipairs(servers) do
  local hwm = results[i] and results[i].hwm_kib
  if s.jrpc and hwm and base then
    local ratio = hwm / base
    local verdict = s.comparison and "for comparison, the backlog pause off"  -- not the default: no target
      or ("target ≤ %g×: %s"):format(TARGET, ratio <= TARGET and "met" or "NOT met")
    print(("- %s, %s: peak %.2f× the lua-cjson loop's (%s)"):format(s.name, s.framing, ratio, verdict))
  end
end
for _, e in ipairs(errs) do print("- FAILED: " .. e) end
print()

-- {====== where the memory at start goes: each probe loads a little more and
-- prints its own VmRSS and Lua heap, idle (Lua 5.4, as the lua-cjson loop)
local shell_quote, capture = bench.shell.quote, bench.shell.capture
-- (OpenSSL is linked by jrpc.core_tls, which jrpc.core loads on first use)
local libssl = capture("ldd " .. shell_quote(bench.root .. "/build/5.4/jrpc/core_tls.so")):match("=> (%S*libssl%S*)")
local PRELUDE = ("package.path = %q .. package.path; package.cpath = %q .. package.cpath; ")
  :format(bench.root .. "/lua/?.lua;" .. bench.root .. "/lua/?/init.lua;", bench.root .. "/build/5.4/?.so;")
local REPORT = [[collectgarbage(); collectgarbage()
local f = io.open("/proc/self/status"); local s = f:read("a"); f:close()
print(s:match("VmRSS:%s*(%d+)"), s:match("RssAnon:%s*(%d+)"), math.floor(collectgarbage("count")))]]
local probes = {
  { "lua5.4, nothing loaded", "" },
  { "lua5.4 + lua-cjson (the loop's whole program)", "require 'cjson'" },
  { "lua5.4 + OpenSSL only (" .. tostring(libssl) .. " and its libcrypto)",
    libssl and ("assert(package.loadlib(%q, '*'))"):format(libssl) or "error('no libssl')" },
  { "lua5.4 + jrpc.core (cJSON, llhttp; OpenSSL not loaded)", "require 'jrpc.core'" },
  { "lua5.4 + require 'jrpc' (jrpc.core and the Lua modules)", "require 'jrpc'" },
  { "the same + luv and a jrpc.uv stdio connection (spec_server idle)",
    "require('jrpc').uv.new(require 'luv'):stdio{}" },
  { "the same + one core.hmac_sha256 (loads jrpc.core_tls and OpenSSL)",
    "require('jrpc').uv.new(require 'luv'):stdio{}; require('jrpc.core').hmac_sha256(('k'):rep(32), 'x')" },
}
print("Resident memory at start, idle, Lua 5.4 (each row is one process loading what it names):")
print()
print("| probe | VmRSS, KiB | RssAnon, KiB | Lua heap, KiB |")
print("| --- | ---: | ---: | ---: |")
for _, p in ipairs(probes) do
  local out = capture("lua5.4 -e " .. shell_quote(PRELUDE .. p[2] .. "\n" .. REPORT) .. " < /dev/null")
  local rss, anon, heap = out:match("(%d+)%s+(%d+)%s+(%d+)")
  print(("| %s | %s | %s | %s |"):format(p[1], rss or "failed", anon or "-", heap or "-"))
end
-- }======

if #errs > 0 then os.exit(1) end
