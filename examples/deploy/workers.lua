-- Start N workers of an MCP HTTP server script, each its own process and
-- luv loop on its own port (127.0.0.1:BASE+i), all sealing requestState
-- with the same key, for a balancer in front (examples/deploy/nginx.conf):
--   lua5.4 examples/deploy/workers.lua --workers 4 --base-port 8801 \
--     [--state-key-file FILE] [--allowed-host HOST]... \
--     -- examples/mcp/everything_server.lua
-- Each worker is run as `SCRIPT --http 127.0.0.1:PORT --worker I
-- --state-key-file FILE [--allowed-host HOST]...` with this interpreter.
--
-- Distinct ports, not SO_REUSEPORT: luv's tcp bind offers no reuseport
-- flag, and with one port per worker the balancer chooses (round robin,
-- least connections, health) and can send a legacy session back to its
-- worker by the index in the session id.
--
-- The key: --state-key-file, else $JRPC_MCP_STATE_KEY_FILE, else 32 random
-- bytes written to a fresh 0600 file removed at exit (the workers then
-- share a key only among themselves: a restart of the launcher changes it).
--
-- SIGTERM or SIGINT is passed on to every worker, which drains (answers
-- its requests in flight, refuses new connections) and exits; the launcher
-- exits when all have, non-zero if any failed. It restarts nothing: a
-- supervisor (systemd, a container runtime) owns that decision.
dofile((debug.getinfo(1, "S").source:match("^@(.*)[/\\]") or ".") .. "/../paths.lua")
local core = require "jrpc.core"
local uv = require "luv"

local function usage(msg)
  io.stderr:write("workers: " .. msg .. "\nusage: workers.lua --workers N --base-port PORT"
    .. " [--state-key-file FILE] [--allowed-host HOST]... -- SCRIPT [ARGS...]\n")
  os.exit(2)
end

local function parse(argv)
  local o, i = { hosts = {} }, 1
  while argv[i] and argv[i] ~= "--" do
    local flag, value = argv[i], argv[i + 1]
    if value == nil then usage(flag .. " needs a value") end
    if flag == "--workers" then o.n = tonumber(value)
    elseif flag == "--base-port" then o.base = tonumber(value)
    elseif flag == "--state-key-file" then o.key_file = value
    elseif flag == "--allowed-host" then o.hosts[#o.hosts + 1] = value
    else usage("unknown option " .. flag) end
    i = i + 2
  end
  o.script = { (table.unpack or unpack)(argv, i + 1) }  -- LuaJIT: unpack
  if not (o.n and o.n >= 1 and o.n % 1 == 0) then usage("--workers must be a positive integer") end
  if not (o.base and o.base >= 1 and o.base + o.n - 1 <= 65535) then usage("--base-port out of range") end
  if #o.script == 0 then usage("no server script after --") end
  return o
end

-- A key file for this run only: 0600, so only this user's processes read it.
local function fresh_key_file()
  local path = os.tmpname()
  local fd = assert(uv.fs_open(path, "w", tonumber("600", 8)))
  assert(uv.fs_write(fd, assert(core.random_bytes(32))))
  uv.fs_close(fd)
  return path, true
end

local function worker_args(o, i, key_file)
  local a = { o.script[1], "--http", ("127.0.0.1:%d"):format(o.base + i), "--worker", tostring(i),
    "--state-key-file", key_file }
  for _, h in ipairs(o.hosts) do a[#a + 1] = "--allowed-host"; a[#a + 1] = h end
  for k = 2, #o.script do a[#a + 1] = o.script[k] end
  return a
end

-- The interpreter running this script (arg[-1]), so workers run on the same Lua.
local function interpreter()
  local k = -1
  while arg[k - 1] do k = k - 1 end
  return arg[k]
end

local function main()
  local o = parse(arg)
  local key_file, temporary = o.key_file or os.getenv("JRPC_MCP_STATE_KEY_FILE"), false
  if not key_file then key_file, temporary = fresh_key_file() end
  local live, failed, procs = 0, false, {}
  local function exited(i, code, signal)
    io.stderr:write(("workers: worker %d exited (code %d, signal %d)\n"):format(i, code, signal))
    if code ~= 0 or (signal ~= 0 and signal ~= 15) then failed = true end
    live = live - 1
    if live == 0 then uv.stop() end
  end
  for i = 0, o.n - 1 do
    local handle, err
    handle, err = uv.spawn(interpreter(), { args = worker_args(o, i, key_file), stdio = { 0, 1, 2 } },
      function(code, signal) handle:close(); exited(i, code, signal) end)
    if not handle then usage("cannot start worker " .. i .. ": " .. tostring(err)) end
    procs[i], live = handle, live + 1
  end
  local function forward(signame)
    local sig = uv.new_signal()
    sig:start(signame, function()
      for _, p in pairs(procs) do if not p:is_closing() then p:kill("sigterm") end end
    end)
    sig:unref()  -- the workers, not the signal handlers, keep the loop running
  end
  forward("sigterm"); forward("sigint")
  io.stderr:write(("workers: %d started on 127.0.0.1:%d-%d\n"):format(o.n, o.base, o.base + o.n - 1))
  uv.run()
  if temporary then os.remove(key_file) end
  os.exit(failed and 1 or 0)
end

main()
