-- bench/servers/gc_probe_server.lua: examples/spec_server.lua's methods on
-- jrpc.uv stdio, timing every `receive` and counting those during which the
-- heap shrank (a collection, or a step of one, ran inside the request).
-- Used by bench/gc_inside.lua; not a benchmark itself.
--
--   lua5.4 bench/servers/gc_probe_server.lua on|off OUT
--
-- on|off: the loop's idle_gc. Every 10,000 receives it rewrites OUT with
-- `receives=N collections=C p50_us=... p99_us=... collection_p50_us=...`
-- (the client ends it with SIGTERM, so there is no last word at exit).
local here = debug.getinfo(1, "S").source:match("^@(.*)[/\\][^/\\]*$") or "."
local examples = here .. "/../../examples"
dofile(examples .. "/paths.lua")
local jrpc = require "jrpc"
local uv = require "luv"
local install = assert(loadfile(examples .. "/spec_server.lua"))("--module")

-- Receives between two reports: each sorts what was timed so far, so not
-- often (what comes after the last report is not counted).
local REPORT_EVERY = 10000

local mode, out = arg[1], arg[2]
if (mode ~= "on" and mode ~= "off") or not out then
  io.stderr:write("usage: gc_probe_server.lua on|off OUT\n")
  os.exit(2)
end

local loop = jrpc.uv.new(uv, { catch_sigpipe = true })
local conn = assert(loop:stdio{})
install(conn.peer)

local times, inside = {}, {}  -- ns per receive; ns of those with a collection

-- of `xs`, sorted
local function percentile(xs, p)
  if #xs == 0 then return 0 end
  return xs[math.max(1, math.ceil(#xs * p))]
end

-- Sorted in place (a copy would be garbage of the probe's own, and the
-- collections it brings on are what this counts); written aside and
-- renamed, since the SIGTERM may come in the middle of a write.
local function report()
  table.sort(times)
  table.sort(inside)
  local p50, p99, collection_p50 = percentile(times, 0.5), percentile(times, 0.99), percentile(inside, 0.5)
  local f = assert(io.open(out .. ".part", "w"))
  f:write(("receives=%d collections=%d p50_us=%.1f p99_us=%.1f collection_p50_us=%.1f\n"):format(
    #times, #inside, p50 / 1e3, p99 / 1e3, collection_p50 / 1e3))
  f:close()
  assert(os.rename(out .. ".part", out))
end

local receive, hrtime, count = conn.peer.receive, uv.hrtime, collectgarbage
conn.peer.receive = function(self, bytes)
  local before, t0 = count("count"), hrtime()
  receive(self, bytes)
  local dt = hrtime() - t0
  times[#times + 1] = dt
  if count("count") < before then inside[#inside + 1] = dt end
  if #times % REPORT_EVERY == 0 then report() end
end

loop:serve_forever{ idle_gc = mode == "on", busy_poll = true }  -- as examples/spec_server.lua
