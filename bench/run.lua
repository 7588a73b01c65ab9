-- bench/run.lua: messages per second of decode -> dispatch to a Lua handler
-- -> encode, for the JSON-RPC 2.0 spec's `subtract` request (positional and
-- named), through jrpc, a lua-cjson loop and a dkjson loop.
--
--   lua5.4 bench/run.lua        (make bench)     or   luajit bench/run.lua
--
-- Environment: BENCH_SECONDS (per run, default 1.5), BENCH_RUNS (best of,
-- default 3). Time is CPU time (os.clock). Prints a Markdown table, then runs
-- bench/pending_bench.lua if it exists. Exits non-zero if a reply is wrong.

-- {====== paths: this file's directory, the repo's lua/ and build/<abi>/
local source = debug.getinfo(1, "S").source
local here = source:match("^@(.*)[/\\][^/\\]*$") or "."
local root = here .. "/.."
local abi = rawget(_G, "jit") and "jit" or "5.4"
package.path = root .. "/lua/?.lua;" .. root .. "/lua/?/init.lua;" .. package.path
package.cpath = root .. "/build/" .. abi .. "/?.so;" .. package.cpath
-- }======

local clock = os.clock
local SECONDS = tonumber(os.getenv("BENCH_SECONDS")) or 1.5
local RUNS = tonumber(os.getenv("BENCH_RUNS")) or 3
local BATCH = 64 -- steps between two clock reads

local cjson = require("cjson")

local messages = {
  {
    name = "positional",
    line = '{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1}\n',
    reply = '{"jsonrpc":"2.0","result":19,"id":1}\n',
    id = 1,
  },
  {
    name = "named",
    line = '{"jsonrpc":"2.0","method":"subtract","params":{"minuend":42,"subtrahend":23},"id":3}\n',
    reply = '{"jsonrpc":"2.0","result":19,"id":3}\n',
    id = 3,
  },
}

-- The handler gets the params value (array or object) as one argument.
local handlers = {
  subtract = function(p)
    if p[1] ~= nil then return p[1] - p[2] end
    return p.minuend - p.subtrahend
  end,
}

local impls = {
  {key = "jrpc", name = "jrpc (C core + Lua peer)", file = "jrpc_loop.lua", exact = true},
  {key = "cjson", name = "lua-cjson loop", file = "cjson_loop.lua"},
  {key = "dkjson", name = "dkjson loop", file = "dkjson_loop.lua"},
}

local notes, failed = {}, false

local function quote(s) return (("%q"):format(tostring(s)):gsub("\\\n", "\\n")) end

-- Any correct reply: lua-cjson and dkjson order object keys as `pairs` does,
-- so only jrpc (exact = true) is held to the byte-exact text.
local function check(impl, msg, got)
  if impl.exact then
    if got == msg.reply then return true end
    return false, ("expected %s, got %s"):format(quote(msg.reply), quote(got))
  end
  if type(got) ~= "string" or got:sub(-1) ~= "\n" then
    return false, "no newline-terminated reply: " .. quote(got)
  end
  local ok, r = pcall(cjson.decode, got)
  if ok and type(r) == "table" and r.jsonrpc == "2.0" and r.result == 19
      and r.id == msg.id and r.error == nil then
    return true
  end
  return false, "wrong reply " .. quote(got)
end

local function measure(step, line)
  collectgarbage()
  collectgarbage()
  local n, t0 = 0, clock()
  local t, deadline
  deadline = t0 + SECONDS
  repeat
    for _ = 1, BATCH do step(line) end
    n = n + BATCH
    t = clock()
  until t >= deadline
  return n / (t - t0), n
end

local function load_impl(impl)
  local ok, make = pcall(dofile, here .. "/" .. impl.file)
  if not ok then return nil, make end
  local ok2, step, replies = pcall(make, handlers)
  if not ok2 then return nil, step end
  return step, replies
end

local rates = {} -- rates[key][msg.name] = best msg/s

for _, impl in ipairs(impls) do
  local step, replies = load_impl(impl)
  if not step then
    local err = replies
    if type(err) == "table" and err.skip then
      notes[#notes + 1] = ("%s skipped: %s"):format(impl.name, err.skip)
    else
      failed = true -- present but broken
      notes[#notes + 1] = ("%s failed to load: %s"):format(impl.name, tostring(err))
    end
  else
    rates[impl.key] = {}
    local steps = 0 -- messages fed to this implementation so far
    for _, msg in ipairs(messages) do
      local ok, got = pcall(step, msg.line)
      steps = steps + 1
      local good, why = ok, got
      if ok then good, why = check(impl, msg, got) end
      if not good then
        failed = true
        notes[#notes + 1] = ("%s, %s: wrong reply, not timed: %s"):format(impl.name, msg.name, why)
      else
        local best = 0
        for _ = 1, RUNS do
          local rate, n = measure(step, msg.line)
          if rate > best then best = rate end
          steps = steps + n
        end
        rates[impl.key][msg.name] = best
        if replies and replies() ~= steps then
          failed = true
          notes[#notes + 1] = ("%s, %s: %d replies sent for %d messages")
            :format(impl.name, msg.name, replies(), steps)
          replies = nil
        end
      end
    end
  end
end

-- {====== report
local function fmt_rate(r) return r and ("%.0f"):format(r) or "-" end
local function fmt_ratio(r, base)
  if not (r and base) then return "-" end
  return ("%.2f"):format(r / base)
end

local engine = rawget(_G, "jit") and jit.version or _VERSION
print(("## JSON-RPC request round trip (%s, best of %d x %.1f s CPU)"):format(engine, RUNS, SECONDS))
print()
local header, rule = {"implementation"}, {"---"}
for _, msg in ipairs(messages) do
  header[#header + 1] = msg.name .. " msg/s"
  header[#header + 1] = "x lua-cjson"
  rule[#rule + 1] = "---:"
  rule[#rule + 1] = "---:"
end
print("| " .. table.concat(header, " | ") .. " |")
print("| " .. table.concat(rule, " | ") .. " |")
for _, impl in ipairs(impls) do
  local row = {impl.name}
  for _, msg in ipairs(messages) do
    local r = rates[impl.key] and rates[impl.key][msg.name]
    local base = rates.cjson and rates.cjson[msg.name]
    row[#row + 1] = fmt_rate(r)
    row[#row + 1] = fmt_ratio(r, base)
  end
  print("| " .. table.concat(row, " | ") .. " |")
end
print()
for _, m in ipairs(messages) do print(("- %s: `%s`"):format(m.name, (m.line:gsub("\n$", "")))) end
for _, n in ipairs(notes) do print("- note: " .. n) end
-- }======

local pending = here .. "/pending_bench.lua"
local f = io.open(pending, "r")
if f then
  f:close()
  print()
  local ok, err = pcall(dofile, pending)
  if not ok then
    failed = true
    print("- note: bench/pending_bench.lua failed: " .. tostring(err))
  end
end

if failed then os.exit(1) end
