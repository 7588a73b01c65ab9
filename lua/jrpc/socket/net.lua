--- TCP over LuaSocket: a non-blocking connect finished across pumps, and a
-- listening socket that accepts in every pump.
local conn_mod = require "jrpc.socket.conn"
local connection = require "jrpc.connection"
local options = require "jrpc.options"
local workers = require "jrpc.workers"

local M = {}

local ACCEPTS_PER_PUMP = 16

local ADDRESS = options.set{ "host", "port" }
M.CONNECT_OPTIONS = options.set({ "on_connect", "connect_timeout" }, ADDRESS, conn_mod.OPTIONS,
  connection.PEER_OPTIONS)
M.LISTEN_OPTIONS = options.set({ "backlog", "on_peer" }, ADDRESS, conn_mod.OPTIONS, connection.PEER_OPTIONS)

--- See Loop:connect. Option `connect_timeout` (default 10 s) bounds the connect.
function M.connect(loop, opts)
  connection.check_address("connect", opts, false, M.CONNECT_OPTIONS)
  local on_connect = opts.on_connect
  local waiter = on_connect == nil and workers.current() or nil
  local sock, err = loop.socket.tcp()
  if not sock then return nil, connection.address_error("connect", opts, err) end
  sock:settimeout(0)
  sock:setoption("tcp-nodelay", true)
  local ok
  ok, err = sock:connect(opts.host or "127.0.0.1", opts.port)
  if not ok and err ~= "timeout" then  -- "timeout": under way
    sock:close()
    return nil, connection.address_error("connect", opts, err)
  end
  local conn = conn_mod.new(loop, sock, opts, { role = "client", connecting = { address = connection.describe(opts),
    deadline = loop:now() + (opts.connect_timeout or 10), waiter = waiter, on_connect = on_connect } })
  if waiter then return connection.wait("jrpc.socket", "connect") end
  return conn
end

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
  self.loop:_forget(self)
  self.sock:close()
  for conn in pairs(self.connections) do conn:close("server closed") end
end

-- For the pump: accept what is waiting; true when something was.
function Server:_pump()
  local any = false
  local function forget(conn) self.connections[conn] = nil end
  for _ = 1, ACCEPTS_PER_PUMP do
    local client = self.sock:accept()
    if client == nil then break end
    any = true
    client:settimeout(0)
    client:setoption("tcp-nodelay", true)
    local conn = conn_mod.new(self.loop, client, self.opts, { role = "server", on_closed = forget })
    self.connections[conn] = true
    if self.opts.on_peer then
      local ok, err = pcall(self.opts.on_peer, conn)
      if not ok then conn.link:log("on_peer failed: " .. tostring(err)) end
    end
  end
  return any
end

--- See Loop:listen. Also `backlog` (default 32) and `on_peer(conn)`.
function M.listen(loop, opts)
  connection.check_address("listen", opts, false, M.LISTEN_OPTIONS)
  local sock, err = loop.socket.tcp()
  local ok = sock ~= nil
  if ok then
    sock:setoption("reuseaddr", true)
    ok, err = sock:bind(opts.host or "127.0.0.1", opts.port)
    if ok then ok, err = sock:listen(opts.backlog or 32) end
  end
  if not ok then
    if sock then sock:close() end
    return nil, connection.address_error("listen", opts, err)
  end
  sock:settimeout(0)
  local host, port = sock:getsockname()
  local server = setmetatable({ loop = loop, sock = sock, opts = opts, connections = {},
    host = host, port = math.floor(tonumber(port)), _closed = false }, Server)
  loop:_add(server)
  return server
end

-- }======================================================================

return M
