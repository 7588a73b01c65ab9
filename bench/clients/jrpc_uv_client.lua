#!/usr/bin/env luajit
--- bench/clients/jrpc_uv_client.lua: a load generator written as a jrpc user
-- writes a client: jrpc.uv spawns the server (libuv pipes for its stdio),
-- and `peer:request` with a callback keeps W `subtract` requests in flight,
-- each reply's callback sending the next request. The replies of one read
-- settle inside one `receive`, so the new requests leave as jrpc's output
-- sends them (after 2, 4, 8, then every FLUSH_PARTS writes, and at the end of the read), the way
-- any jrpc client on luv behaves.
--
--   luajit bench/clients/jrpc_uv_client.lua [--framing ndjson|lsp] [--inflight W]
--          [--seconds S] [--warmup S] [--latency] [--rss] -- server command...
--
-- Prints the line of node/bench_client.js: framing=, inflight=, rps= (round
-- trips/s), client_cpu= (cores this process used while measuring: os.clock
-- over wall time); with --latency (one request in flight) p50_us= and
-- p99_us=; with --rss the server's start_rss_kib= (VmRSS once it idles,
-- before the first request), start_anon_kib= (its RssAnon then) and hwm_kib=
-- (its VmHWM, the peak resident set, at the end).
-- Every reply is checked (the right result); exits 1 on a wrong reply, an
-- error reply, a dead or stalled server.
local script_dir = debug.getinfo(1, "S").source:match("^@(.*)[/\\][^/\\]*$") or "."
dofile(script_dir .. "/../../examples/paths.lua")  -- lua/ and build/ of this checkout

local uv = require "luv"
local unpack = table.unpack or unpack
local jrpc = require "jrpc"

local USAGE = "usage: jrpc_uv_client.lua [--framing ndjson|lsp] [--inflight W] [--seconds S]"
  .. " [--warmup S] [--latency] [--rss] -- server command...\n"

local function fail(msg)
  io.stderr:write("jrpc_uv_client: ", msg, "\n")
  os.exit(1)
end

local function parse_args(argv)
  local o = { framing = "ndjson", inflight = 64, seconds = 2, warmup = 0.5, latency = false, rss = false }
  local i = 1
  while argv[i] do
    local a = argv[i]
    if a == "--" then
      o.cmd = { unpack(argv, i + 1) }
      break
    elseif a == "--latency" then o.latency = true
    elseif a == "--rss" then o.rss = true
    elseif a == "--framing" and (argv[i + 1] == "ndjson" or argv[i + 1] == "lsp") then
      o.framing = argv[i + 1]; i = i + 1
    elseif (a == "--inflight" or a == "--seconds" or a == "--warmup") and tonumber(argv[i + 1]) then
      o[a:sub(3)] = tonumber(argv[i + 1]); i = i + 1
    else
      io.stderr:write(USAGE); os.exit(2)
    end
    i = i + 1
  end
  if o.latency then o.inflight = 1 end
  if not (o.cmd and o.cmd[1]) or o.inflight < 1 then io.stderr:write(USAGE); os.exit(2) end
  return o
end

local opt = parse_args(arg)

-- {====== the server's memory, from /proc (kB)
local function proc_status(pid)
  local f = io.open("/proc/" .. pid .. "/status", "r")
  if not f then return {} end
  local s = f:read("a")
  f:close()
  local r = {}
  for k, v in s:gmatch("(%w+):%s+(%d+) kB") do r[k] = tonumber(v) end
  return r
end
-- }======

local loop = jrpc.uv.new(uv, { catch_sigpipe = true })
local finished = false
local done = 0
local measuring, latencies = false, {}

local child, err = loop:spawn{
  cmd = opt.cmd[1], args = { unpack(opt.cmd, 2) },
  framing = opt.framing,
  on_exit = function(code, signal)
    if not finished then fail(("server exited early: code %d, signal %d"):format(code, signal)) end
  end,
  on_error = function(msg) io.stderr:write("jrpc_uv_client: ", msg, "\n") end,
}
if not child then fail(err) end
local peer = child.peer

-- One request; its callback checks the reply and, while running, sends the next.
local next_id = 1
local send
local function subtract_callback(a, b, sent_at)
  return function(rerr, result)
    if finished then return end
    if rerr then fail("error reply: " .. tostring(rerr.code) .. " " .. tostring(rerr.message)) end
    if result ~= a - b then fail(("wrong result: %s - %s gave %s"):format(a, b, tostring(result))) end
    done = done + 1
    if sent_at and measuring then latencies[#latencies + 1] = (uv.hrtime() - sent_at) / 1000 end
    send()
  end
end
function send()
  local id = next_id
  next_id = id + 1
  local a, b = (id % 100000) * 3, id % 1000
  local _, rerr = peer:request("subtract", { a, b }, nil, subtract_callback(a, b, opt.latency and uv.hrtime()))
  if rerr then fail("cannot send: " .. tostring(rerr.message)) end
end

local function percentile(sorted, p)
  if #sorted == 0 then return 0 end
  return sorted[math.min(#sorted, math.floor(#sorted * p) + 1)]
end

local function after(seconds, fn)
  local t = uv.new_timer()
  t:start(math.floor(seconds * 1000 + 0.5), 0, function() t:close(); fn() end)
end

-- A stalled server fails the run (unref'd: the check alone keeps no loop alive).
do
  local stall, seen, idle = uv.new_timer(), -1, 0
  stall:start(1000, 1000, function()
    if done == seen then idle = idle + 1 else seen, idle = done, 0 end
    if idle >= 5 then fail("server stalled: no reply for 5 s") end
  end)
  stall:unref()
end

local start_rss = {}
local t0, cpu0, done0

local function stop_measuring()
  local secs = (uv.hrtime() - t0) / 1e9
  local cpu = os.clock() - cpu0
  finished = true
  local fields = {
    "framing=" .. opt.framing, "inflight=" .. opt.inflight,
    ("rps=%d"):format(math.floor((done - done0) / secs + 0.5)),
    ("client_cpu=%.2f"):format(cpu / secs),
  }
  if opt.latency then
    table.sort(latencies)
    fields[#fields + 1] = ("p50_us=%.1f"):format(percentile(latencies, 0.5))
    fields[#fields + 1] = ("p99_us=%.1f"):format(percentile(latencies, 0.99))
  end
  if opt.rss then
    local now = proc_status(child.pid)
    fields[#fields + 1] = "start_rss_kib=" .. tostring(start_rss.VmRSS)
    fields[#fields + 1] = "start_anon_kib=" .. tostring(start_rss.RssAnon)
    fields[#fields + 1] = "hwm_kib=" .. tostring(now.VmHWM)
  end
  io.stdout:write(table.concat(fields, " "), "\n")
  io.stdout:flush()
  child:kill("sigterm")
  os.exit(0)
end

local function start_measuring()
  measuring = true
  t0, cpu0, done0 = uv.hrtime(), os.clock(), done
  after(opt.seconds, stop_measuring)
end

local function start_sending()
  for _ = 1, opt.inflight do send() end
  after(opt.warmup, start_measuring)
end

if opt.rss then
  -- the server's memory once it has started and waits for its first request
  after(0.5, function()
    start_rss = proc_status(child.pid)
    start_sending()
  end)
else
  start_sending()
end
loop:serve_forever{ idle_gc = true, busy_poll = true }
fail("the loop ended before the measurement did")
