--- TCP and Unix domain sockets: connect to a server, or listen and serve
-- many connections at once, each with its own peer.
local stream = require "jrpc.uv.stream"
local co = require "jrpc.uv.co"
local handles = require "jrpc.uv.handles"
local connection = require "jrpc.connection"
local options = require "jrpc.options"

local M = {}

local EOF_REASON = "connection closed by the other side"

local ADDRESS = options.set{ "host", "port", "path" }
M.CONNECT_OPTIONS = options.set({ "on_connect" }, ADDRESS, stream.OPTIONS, connection.PEER_OPTIONS)
M.LISTEN_OPTIONS = options.set({ "backlog", "on_peer" }, ADDRESS, stream.OPTIONS, connection.PEER_OPTIONS)

local function is_ip(host)
  return host:match("^%d+%.%d+%.%d+%.%d+$") ~= nil or host:find(":", 1, true) ~= nil
end

local function new_socket(uv, opts)
  if opts.path then return uv.new_pipe(false) end
  return uv.new_tcp()
end

-- {======================================================================
-- Connecting
-- =======================================================================

-- Connect `handle` to the address (resolving a host name first); calls
-- done(err) once. Returns nil, err when it fails at once.
local function start_connect(uv, handle, opts, done)
  if opts.path then return handle:connect(opts.path, done) end
  local host = opts.host or "127.0.0.1"
  if is_ip(host) then
    local ok, res, err = pcall(handle.connect, handle, host, opts.port, done)
    if not ok then return nil, tostring(res) end
    return res, err
  end
  return uv.getaddrinfo(host, nil, { socktype = "stream" }, co.guard(function(err, addrs)
    if err or not addrs or not addrs[1] then return done(err or "no address for " .. host) end
    local ok, res, err2 = pcall(handle.connect, handle, addrs[1].addr, opts.port, done)
    if not ok or not res then done(ok and err2 or tostring(res)) end
  end, "resolve"))
end

--- Connect to a TCP (`host`, `port`) or Unix socket (`path`) server.
--- In a coroutine (no on_connect): waits, returns conn or nil, err.
--- Otherwise `opts.on_connect(conn, err)` is called later and this returns
--- true (or nil, err when it fails at once, without calling on_connect).
--- `err` is a jrpc.Error with code "connect".
---@param loop table
---@param opts table
---@return jrpc.uv.Connection|boolean|nil
---@return jrpc.Error|nil err
function M.connect(loop, opts)
  connection.check_address("connect", opts, true, M.CONNECT_OPTIONS)
  local on_connect = opts.on_connect
  local waiter = on_connect == nil and co.current() or nil
  if on_connect == nil and waiter == nil then
    error("connect: outside a coroutine, on_connect = function(conn, err) is required", 2)
  end
  local uv = loop.uv
  local handle = new_socket(uv, opts)
  local function deliver(conn, err)
    loop.events = loop.events + 1
    if err then err = connection.address_error("connect", opts, err) end
    if waiter then return co.resume(waiter, nil, conn, err) end
    co.call(on_connect, "on_connect", nil, conn, err)
  end
  local ok, err = start_connect(uv, handle, opts, co.guard(function(err)
    if err then
      handles.close(uv, handle)
      return deliver(nil, err)
    end
    if not opts.path then handle:nodelay(true) end
    deliver(stream.new(loop, handle, handle, opts, { eof_reason = EOF_REASON, role = "client" }):start())
  end, "connect"))
  if not ok then
    handles.close(uv, handle)
    return nil, connection.address_error("connect", opts, err)
  end
  if waiter then return co.wait("connect") end
  return true
end

-- }======================================================================

-- {======================================================================
-- Listening
-- =======================================================================

---@class jrpc.uv.Server
---@field port integer|nil   the bound TCP port
---@field path string|nil    the Unix socket path
---@field connections table<jrpc.uv.Connection, true>  the live connections
local Server = {}
Server.__index = Server

--- Stop listening and close every connection it accepted (reason "server
--- closed"). A Unix socket file we created is removed. Idempotent.
function Server:close()
  if self._closed then return end
  self._closed = true
  handles.close(self.uv, self.handle)
  for conn in pairs(self.connections) do conn:close("server closed") end
  if self.path then os.remove(self.path) end
end

local function accept(server, loop, opts)
  local uv = loop.uv
  local client = new_socket(uv, opts)
  local ok, err = server.handle:accept(client)
  if not ok then
    handles.close(uv, client)
    return co.report("accept failed: " .. tostring(err))
  end
  if not opts.path then client:nodelay(true) end
  local conn = stream.new(loop, client, client, opts, { eof_reason = EOF_REASON, role = "server",
    on_closed = function(c) server.connections[c] = nil end })
  server.connections[conn] = true
  if opts.on_peer then co.call(opts.on_peer, "on_peer", conn.link:logger(), conn) end
  conn:start()
end

local function bind(handle, opts)
  if opts.path then return handle:bind(opts.path) end
  return handle:bind(opts.host or "127.0.0.1", opts.port)
end

--- Listen on a TCP port (`host`, default 127.0.0.1; `port`, 0 for any free
--- one) or a Unix socket `path`. Each accepted connection gets its own peer
--- made from `opts` (methods, peer and transport options) and is handed to
--- `opts.on_peer(conn)` before it starts reading.
---@param loop table
---@param opts table
---@return jrpc.uv.Server|nil server
---@return jrpc.Error|nil err  code "listen"
function M.listen(loop, opts)
  connection.check_address("listen", opts, true, M.LISTEN_OPTIONS)
  local uv = loop.uv
  local handle = new_socket(uv, opts)
  local server = setmetatable({ uv = uv, handle = handle, connections = {}, path = opts.path,
    _closed = false }, Server)
  local ok, err = bind(handle, opts)
  if ok then
    ok, err = handle:listen(opts.backlog or 128, co.guard(function(lerr)
      loop.events = loop.events + 1
      if lerr then return co.report("listen: " .. tostring(lerr)) end
      accept(server, loop, opts)
    end, "accept"))
  end
  if not ok then
    handles.close(uv, handle)
    return nil, connection.address_error("listen", opts, err)
  end
  if not opts.path then
    local name = handle:getsockname()
    server.host, server.port = name.ip, name.port
  end
  return server
end

-- }======================================================================

return M
