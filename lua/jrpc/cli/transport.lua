--- The connection a `jrpc` subcommand talks over: `--stdio "CMD"` (a child
-- started through the shell) or `--tcp HOST:PORT`; or `--http URL`, which
-- has no connection to keep: jrpc.cli.http POSTs each message. Shared by
-- the subcommands, so they all accept the same options the same way.
local args = require "jrpc.cli.args"
local cli_http = require "jrpc.cli.http"
local timers = require "jrpc.uv.timers"

local M = {}

--- The options every connecting subcommand takes, for `args.parse`.
M.OPTIONS = {
  { "--stdio", value = "CMD" },
  { "--tcp", value = "HOST:PORT" },
  { "--framing", value = "ndjson|lsp", check = args.one_of{ "ndjson", "lsp" } },
  { "--timeout", value = "S", check = args.positive_number },
  { "--trace" },
}
for _, spec in ipairs(cli_http.OPTIONS) do M.OPTIONS[#M.OPTIONS + 1] = spec end

--- How long a reply (or a TCP connect) may take when --timeout is not given.
M.DEFAULT_TIMEOUT = 30

-- How long a child may take to exit once its stdin is closed, before
-- SIGTERM (and as long again before SIGKILL).
local CHILD_GRACE = 1

--- HOST:PORT (`[::1]:PORT` for an IPv6 address) -> host, port; or nil, problem.
---@param s string
---@return string|nil host
---@return integer|string port_or_problem
function M.parse_hostport(s)
  local host, port = s:match("^%[([^%]]+)%]:(%d+)$")
  if host == nil then host, port = s:match("^([^:]+):(%d+)$") end
  port = tonumber(port)
  if host == nil or port < 1 or port > 65535 then
    return nil, "--tcp " .. s .. ": expected HOST:PORT (PORT 1-65535)"
  end
  return host, port
end

-- How many of --stdio, --tcp and --http were given.
local function count_given(opts)
  local n = 0
  for _, key in ipairs({ "stdio", "tcp", "http" }) do
    if opts[key] ~= nil then n = n + 1 end
  end
  return n
end

--- Check the transport options of parsed `opts`: exactly one of --stdio,
--- --tcp and --http. Fills `opts.host`, `opts.port`, `opts.framing`,
--- `opts.timeout` (and, for --http, what jrpc.cli.http.check fills).
---@param opts table
---@return string|nil problem
function M.check(opts)
  if count_given(opts) ~= 1 then return "give exactly one of --stdio CMD, --tcp HOST:PORT and --http URL" end
  local lone = cli_http.given_without_url(opts)
  if lone then return lone .. " needs --http URL" end
  opts.timeout = opts.timeout or M.DEFAULT_TIMEOUT
  if opts.http then return cli_http.check(opts) end
  if opts.tcp then
    local host, port = M.parse_hostport(opts.tcp)
    if host == nil then return port end
    opts.host, opts.port = host, port
  end
  opts.framing = opts.framing or "ndjson"
end

-- A connect that neither succeeds nor fails (a dropped SYN) would wait for
-- the kernel's minutes-long retry: give up after the timeout, at once. No
-- child exists yet and nothing was sent, so there is nothing to clean up.
local function connect_watchdog(loop, opts, on_expire)
  local uv = loop.uv
  uv.update_time()  -- libuv counts from its cached loop time, which may be old
  local timer = timers.after(uv, opts.timeout, on_expire, "connect timeout")
  return function() timers.cancel(uv, timer) end
end

-- The child's stderr is inherited (file descriptor 2 itself): what it
-- writes reaches our stderr as it is, and is never read as protocol.
local function spawn(loop, opts, peer_opts)
  peer_opts.cmd, peer_opts.args, peer_opts.stderr = "/bin/sh", { "-c", opts.stdio }, "inherit"
  local child, err = loop:spawn(peer_opts)
  if child == nil then return nil, err.message end  -- "cannot start /bin/sh: ..."
  return child
end

local function connect(loop, opts, peer_opts, on_connect_timeout)
  peer_opts.host, peer_opts.port = opts.host, opts.port
  local cancel = connect_watchdog(loop, opts, on_connect_timeout)
  local conn, err = loop:connect(peer_opts)
  cancel()
  if conn == nil then return nil, "cannot " .. err.message end  -- "cannot connect to H:P: ECONNREFUSED"
  return conn
end

--- In a coroutine on `loop`: the connection for `opts` with a peer made of
--- `peer_opts`, or nil, err. `on_connect_timeout()` is called (from a
--- callback) when a TCP connect takes longer than opts.timeout.
---@param loop jrpc.uv.Loop
---@param opts table  checked by M.check
---@param peer_opts table  peer options (framing is set here)
---@param on_connect_timeout fun()
---@return jrpc.uv.Connection|nil conn
---@return string|nil err
function M.open(loop, opts, peer_opts, on_connect_timeout)
  peer_opts.framing = opts.framing
  if opts.stdio then return spawn(loop, opts, peer_opts) end
  return connect(loop, opts, peer_opts, on_connect_timeout)
end

--- In a coroutine: end the connection and wait until what we wrote is
--- handed over. A child gets its stdin closed (after what is queued), then
--- has CHILD_GRACE seconds to exit before it is terminated.
---@param conn jrpc.uv.Connection
function M.close(conn)
  if conn.shutdown then
    conn:shutdown(CHILD_GRACE)
  else
    conn:close("done")
  end
end

return M
