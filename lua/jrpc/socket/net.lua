--- TCP over LuaSocket: a non-blocking connect finished across pumps, and a
-- listening socket that accepts in every pump.
local conn_mod = require "jrpc.socket.conn"
local workers = require "jrpc.workers"

local M = {}

local ACCEPTS_PER_PUMP = 16

local function describe(opts)
  return tostring(opts.host or "127.0.0.1") .. ":" .. tostring(opts.port)
end

local function check_address(opts, what)
  if type(opts) ~= "table" then error(what .. ": expected an options table", 3) end
  if type(opts.port) ~= "number" or opts.port % 1 ~= 0 then error(what .. ": needs port = number", 3) end
  if opts.host ~= nil and type(opts.host) ~= "string" then error(what .. ": host must be a string", 3) end
end

-- {======================================================================
-- Connecting
-- =======================================================================

-- The connect ended: tell whoever waits; a failed one closes the
-- connection with the error as reason (requests already made settle "closed").
local function connected(conn, err)
  conn._connecting = false
  local waiter, on_connect = conn._waiter, conn._on_connect
  conn._waiter, conn._on_connect = nil, nil
  if err then
    conn._failed = err
    conn:close(err)
  else
    conn:_flush()  -- what was sent while connecting
  end
  local log = conn.peer:logger()
  if waiter then
    workers.wake(waiter, log, (not err) and conn or nil, err)
  elseif on_connect then
    local ok, msg = pcall(on_connect, (not err) and conn or nil, err)
    if not ok then log("on_connect failed: " .. tostring(msg)) end
  end
end

--- For the pump: has the connect of `conn` ended? Returns true when it did.
function M.connect_step(conn)
  local loop, sock = conn.loop, conn.sock
  local _, writable = loop.socket.select(nil, { sock }, 0)
  if writable == nil or writable[1] == nil then
    if loop.clock() < conn._connect_deadline then return false end
    connected(conn, ("connect to %s: timeout"):format(conn._address))
    return true
  end
  if sock:getpeername() then
    connected(conn)
  else
    local ok, why = pcall(sock.getoption, sock, "error")
    connected(conn, ("connect to %s: %s"):format(conn._address, ok and why or "failed"))
  end
  return true
end

--- See Loop:connect. Option `connect_timeout` (default 10 s) bounds the connect.
function M.connect(loop, opts)
  check_address(opts, "connect")
  local on_connect = opts.on_connect
  if on_connect ~= nil and type(on_connect) ~= "function" then error("connect: on_connect must be a function", 2) end
  local waiter = on_connect == nil and workers.current() or nil
  local sock, err = loop.socket.tcp()
  if not sock then return nil, ("connect to %s: %s"):format(describe(opts), tostring(err)) end
  sock:settimeout(0)
  sock:setoption("tcp-nodelay", true)
  local ok
  ok, err = sock:connect(opts.host or "127.0.0.1", opts.port)
  if not ok and err ~= "timeout" then  -- "timeout": under way
    sock:close()
    return nil, ("connect to %s: %s"):format(describe(opts), tostring(err))
  end
  local conn = conn_mod.new(loop, sock, opts, true, "client")
  conn._address, conn._waiter, conn._on_connect = describe(opts), waiter, on_connect
  conn._connect_deadline = loop.clock() + (opts.connect_timeout or 10)
  loop:_add(conn)
  if waiter then return require("jrpc.socket")._wait("connect") end
  return conn
end

-- }======================================================================

-- {======================================================================
-- Listening
-- =======================================================================

---@class jrpc.socket.Server
---@field port integer  the bound port
---@field connections table<jrpc.socket.Connection, true>  the live connections
local Server = {}
Server.__index = Server

--- Stop listening and close every connection it accepted ("server closed").
function Server:close()
  if self._closed then return end
  self._closed = true
  self.loop._servers[self] = nil
  self.sock:close()
  for conn in pairs(self.connections) do conn:close("server closed") end
end

-- For the pump: accept what is waiting; true when something was.
function Server:_accept()
  local any = false
  for _ = 1, ACCEPTS_PER_PUMP do
    local client = self.sock:accept()
    if client == nil then break end
    any = true
    client:settimeout(0)
    client:setoption("tcp-nodelay", true)
    local conn = conn_mod.new(self.loop, client, self.opts, false, "server")
    self.connections[conn] = true
    conn._close_hooks[#conn._close_hooks + 1] = function() self.connections[conn] = nil end
    self.loop:_add(conn)
    if self.opts.on_peer then
      local ok, err = pcall(self.opts.on_peer, conn)
      if not ok then conn.peer:log("on_peer failed: " .. tostring(err)) end
    end
  end
  return any
end

--- See Loop:listen. Also `backlog` (default 32) and `on_peer(conn)`.
function M.listen(loop, opts)
  check_address(opts, "listen")
  if opts.on_peer ~= nil and type(opts.on_peer) ~= "function" then error("listen: on_peer must be a function", 2) end
  local sock, err = loop.socket.tcp()
  local ok = sock ~= nil
  if ok then
    sock:setoption("reuseaddr", true)
    ok, err = sock:bind(opts.host or "127.0.0.1", opts.port)
    if ok then ok, err = sock:listen(opts.backlog or 32) end
  end
  if not ok then
    if sock then sock:close() end
    return nil, ("listen on %s: %s"):format(describe(opts), tostring(err))
  end
  sock:settimeout(0)
  local host, port = sock:getsockname()
  local server = setmetatable({ loop = loop, sock = sock, opts = opts, connections = {},
    host = host, port = math.floor(tonumber(port)), _closed = false }, Server)
  loop._servers[server] = true
  return server
end

-- }======================================================================

return M
