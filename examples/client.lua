#!/usr/bin/env lua5.4
--- Spawn a JSON-RPC server and call it concurrently from coroutines.
--
--   lua5.4 examples/client.lua [--cmd "<server command>"] [--framing ndjson|lsp]
--                              [--requests N] [--concurrency C] [--timeout S]
--
-- Sends N `subtract` requests with random operands, C in flight at a time,
-- each with a timeout of S seconds, and checks every reply. --cmd runs
-- through `sh -c`; the default is examples/spec_server.lua run by the same
-- interpreter. Prints each failure with its reason, then "N ok, M failed";
-- exits 0 only when all are ok. It always ends: once one request timed out
-- the rest are not sent, and a server that exits fails what is pending at once.
local script_dir = debug.getinfo(1, "S").source:match("^@(.*)[/\\][^/\\]*$") or "."
dofile(script_dir .. "/paths.lua")  -- lua/ and build/ of this checkout

local jrpc = require "jrpc"

local USAGE = 'usage: client.lua [--cmd "<server command>"] [--framing ndjson|lsp]'
  .. " [--requests N] [--concurrency C] [--timeout S]\n"

local function usage_error()
  io.stderr:write(USAGE)
  os.exit(2)
end

local function positive(value, integer)
  local n = tonumber(value)
  if n == nil or n <= 0 or (integer and n % 1 ~= 0) then usage_error() end
  return n
end

local function parse_args(argv)
  local opts = { framing = "ndjson", requests = 1000, concurrency = 64, timeout = 5 }
  local i = 1
  while argv[i] do
    local flag, value = argv[i], argv[i + 1]
    if value == nil then usage_error() end
    if flag == "--cmd" then opts.cmd = value
    elseif flag == "--framing" and (value == "ndjson" or value == "lsp") then opts.framing = value
    elseif flag == "--requests" then opts.requests = positive(value, true)
    elseif flag == "--concurrency" then opts.concurrency = positive(value, true)
    elseif flag == "--timeout" then opts.timeout = positive(value)
    else usage_error() end
    i = i + 2
  end
  return opts
end

-- The interpreter running this script (arg[-1], or further left after options).
local function interpreter()
  local i = -1
  while arg[i - 1] do i = i - 1 end
  return arg[i] or "lua5.4"
end

local function server_command(opts)
  if opts.cmd then return "/bin/sh", { "-c", opts.cmd } end
  return interpreter(), { script_dir .. "/spec_server.lua", "--framing", opts.framing }
end

-- Why a request failed, in words.
local function describe(err)
  if err.code == "timeout" then return "timeout" end
  if err.code == "closed" then return "server exited: " .. err.message end
  if type(err.code) == "number" then return ("error reply: %d %s"):format(err.code, err.message) end
  return tostring(err)
end

-- Run each function in its own coroutine; wait (in a coroutine) until all return.
local function run_all(fns)
  local main, left, waiting = coroutine.running(), #fns, false
  for _, fn in ipairs(fns) do
    local co = coroutine.create(function()
      fn()
      left = left - 1
      if left == 0 and waiting then assert(coroutine.resume(main)) end
    end)
    assert(coroutine.resume(co))
  end
  if left > 0 then
    waiting = true
    coroutine.yield()
  end
end

local function call_server(loop, opts)
  local cmd, args = server_command(opts)
  local child, err = loop:spawn{ cmd = cmd, args = args, framing = opts.framing,
    on_error = function(msg) io.stderr:write("client: ", msg, "\n") end,
    -- routine events too (junk from the server, late replies): this is a test tool
    on_debug = function(msg) io.stderr:write("client: ", msg, "\n") end }
  if not child then
    print("cannot start the server: " .. err.message)
    return 0, opts.requests
  end
  local sent, ok_count, failed, gave_up = 0, 0, 0, nil
  local function fail(i, why)
    failed = failed + 1
    print(("request %d failed: %s"):format(i, why))
  end
  local function worker()
    while sent < opts.requests do
      sent = sent + 1
      local i, a, b = sent, math.random(-1000000, 1000000), math.random(-1000000, 1000000)
      if gave_up then
        fail(i, "not sent: " .. gave_up)
      else
        local result, rerr = child.peer:request("subtract", { a, b }, { timeout = opts.timeout })
        if rerr then
          fail(i, describe(rerr))
          if rerr.code == "timeout" then gave_up = "an earlier request timed out" end
        elseif result ~= a - b then
          fail(i, ("wrong result: %s - %s gave %s"):format(a, b, tostring(result)))
        else
          ok_count = ok_count + 1
        end
      end
    end
  end
  local workers = {}
  for w = 1, math.min(opts.concurrency, opts.requests) do workers[w] = worker end
  run_all(workers)
  -- a server that stopped answering gets little time to exit by itself
  child:shutdown(gave_up and 0.1 or math.min(1, opts.timeout))
  return ok_count, failed
end

local opts = parse_args(arg or {})
math.randomseed(os.time())
local loop = jrpc.uv.new(require "luv", { catch_sigpipe = true })
local ok_count, failed = loop:run(function() return call_server(loop, opts) end)
print(("%d ok, %d failed"):format(ok_count, failed))
io.stdout:flush()
os.exit(failed == 0 and ok_count == opts.requests and 0 or 1)
