--- Soak: many requests through a pipe against examples/spec_server.lua,
-- driven by build/bench/loadgen (which checks every reply), while this
-- script samples the server's resident memory (VmRSS) from /proc. Fails
-- when loadgen fails or when the RSS grew by more than the tolerance after
-- the warm-up (the first fifth of the run). Run by `make soak`.
--
--   lua5.4 spec/fault/soak.lua [--server-lua lua5.4|luajit] [--requests N]
--                              [--inflight K] [--tolerance-kib T]
--
-- loadgen runs for a duration, not a count: a short calibration run
-- measures the rate first, and the soak runs long enough for N requests
-- plus a margin. The count printed is the one loadgen checked.
local uv = require "luv"

local LOADGEN = "build/bench/loadgen"
local SERVER = "examples/spec_server.lua"
local MARGIN = 1.5         -- run this much longer than the calibration says
local SAMPLE_MS = 100      -- VmRSS sampling period
local WARMUP_SHARE = 0.2   -- the start RSS is taken after this share of the run

local opts = { ["server-lua"] = "lua5.4", requests = 1000000, inflight = 256, ["tolerance-kib"] = 1024 }
do
  local i = 1
  while arg[i] do
    local key = arg[i]:match("^%-%-(.+)$")
    if key == nil or opts[key] == nil or arg[i + 1] == nil then
      io.stderr:write("usage: soak.lua [--server-lua L] [--requests N] [--inflight K] [--tolerance-kib T]\n")
      os.exit(2)
    end
    opts[key] = key == "server-lua" and arg[i + 1] or assert(tonumber(arg[i + 1]), "not a number: " .. arg[i + 1])
    i = i + 2
  end
end

local function say(fmt, ...)
  io.stdout:write("soak: ", fmt:format(...), "\n")
  io.stdout:flush()
end

local function fail(fmt, ...)
  say("FAILED: " .. fmt, ...)
  os.exit(1)
end

local function now() return uv.hrtime() / 1e9 end

local function read_file(path)
  local f = io.open(path, "r")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end

local function rss_kib(pid)
  local status = read_file("/proc/" .. pid .. "/status")
  return status and tonumber(status:match("VmRSS:%s*(%d+)"))
end

-- The pid of `parent`'s child: /proc/PID/task/PID/children, or a scan of
-- /proc/*/stat for kernels without it.
local function child_of(parent)
  local list = read_file(("/proc/%d/task/%d/children"):format(parent, parent))
  if list then return tonumber(list:match("%d+")) end
  local dir = uv.fs_scandir("/proc")
  while dir do
    local name = uv.fs_scandir_next(dir)
    if name == nil then break end
    if name:match("^%d+$") then
      local stat = read_file("/proc/" .. name .. "/stat")
      local ppid = stat and tonumber(stat:match("%) %S+ (%d+)"))
      if ppid == parent then return tonumber(name) end
    end
  end
  return nil
end

--- Run loadgen with `flags` against the server; `on_sample(t, rss)` is
--- called every SAMPLE_MS with the server's VmRSS. Returns exit code,
--- stdout, stderr, seconds.
local function loadgen(flags, on_sample)
  local args = {}
  for _, f in ipairs(flags) do args[#args + 1] = f end
  args[#args + 1] = "--"
  args[#args + 1] = opts["server-lua"]
  args[#args + 1] = SERVER
  local out_pipe, err_pipe = uv.new_pipe(false), uv.new_pipe(false)
  local out, err, code = {}, {}, nil
  local t0 = now()
  local handle, pid = uv.spawn(LOADGEN, { args = args, stdio = { nil, out_pipe, err_pipe } }, function(c)
    code = c
  end)
  if not handle then fail("cannot run %s: %s (run make bench-tools)", LOADGEN, tostring(pid)) end
  local function reader(into, pipe)
    pipe:read_start(function(e, chunk)
      if e or chunk == nil then pipe:close() else into[#into + 1] = chunk end
    end)
  end
  reader(out, out_pipe)
  reader(err, err_pipe)
  local server
  local timer = uv.new_timer()
  timer:start(SAMPLE_MS, SAMPLE_MS, function()
    if code ~= nil then return timer:close() end
    server = server or child_of(pid)
    local rss = server and rss_kib(server)
    if rss and on_sample then on_sample(now() - t0, rss) end
  end)
  uv.run("default")
  handle:close()
  uv.run("default")
  return code, table.concat(out), table.concat(err), now() - t0
end

local function field(out, name)
  return tonumber(out:match(name .. "=(%S+)"))
end

local inflight = tostring(opts.inflight)
say("server %s %s, %d in flight, target %d requests", opts["server-lua"], SERVER, opts.inflight, opts.requests)

-- Calibration: how fast this server goes on this machine now.
local code, out, err = loadgen{ "--inflight", inflight, "--warmup", "0.2", "--seconds", "0.8" }
if code ~= 0 then fail("calibration: loadgen exited %s: %s", tostring(code), err) end
local rate = field(out, "rps")
local seconds = math.max(1, opts.requests / rate * MARGIN)
say("calibrated at %.0f requests/s: running %.1f s", rate, seconds)

-- The soak: every reply checked by loadgen; RSS sampled here.
local warmup_end = seconds * WARMUP_SHARE
local samples, start_rss, max_rss, last_rss = 0, nil, 0, nil
code, out, err = loadgen({ "--inflight", inflight, "--warmup", "0", "--seconds", tostring(seconds), "--timeout", "10" },
  function(t, rss)
    samples = samples + 1
    if t >= warmup_end then
      start_rss = start_rss or rss
      if rss > max_rss then max_rss = rss end
      last_rss = rss
    end
  end)
if code ~= 0 then fail("loadgen exited %s: %s", tostring(code), err) end
local replies, took, hwm = field(out, "replies"), field(out, "seconds"), field(out, "hwm_kib")
if start_rss == nil then fail("no RSS sample after the warm-up (%d samples)", samples) end
say("%d requests checked in %.2f s (%.0f/s), %d in flight; server VmRSS after warm-up %d KiB, at the end %d KiB,"
  .. " max %d KiB (%+d KiB; tolerance %d KiB); VmHWM %d KiB; %d samples",
  replies, took, replies / took, opts.inflight, start_rss, last_rss, max_rss, max_rss - start_rss,
  opts["tolerance-kib"], hwm, samples)
if replies < opts.requests then
  say("note: %d requests is fewer than the %d targeted (the machine was slower than at calibration)",
    replies, opts.requests)
end
if max_rss - start_rss > opts["tolerance-kib"] then
  fail("server RSS grew by %d KiB after the warm-up (tolerance %d KiB)", max_rss - start_rss, opts["tolerance-kib"])
end
say("ok")
