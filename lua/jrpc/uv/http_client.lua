--- An HTTP/1.1 client on luv, over TCP or TLS: the client side of MCP's
-- Streamable HTTP. The bytes are the C core's (`core.http_request` writes
-- the request, `core.http_client` reads the response, `core.tls_client`
-- does TLS with certificate checks on by default); this module does the
-- I/O, the timeout, and the waiting: in a coroutine a request reads like
-- a blocking call.
--
--     local http_client = require "jrpc.uv.http_client"
--     jrpc.run(function(loop)
--       local res, err = http_client.request(loop, { url = "https://example.org/" })
--       print(res and res.status, res and res.body or err)
--     end)
--
-- Streaming (an SSE response): `on_chunk(bytes, stream)` gets each body
-- piece as it arrives, `stream:close()` ends the response early (MCP
-- cancels a request over HTTP by closing its stream); `sse_parser()`
-- splits the bytes into events.
--
-- Connections: `request` uses one connection per call and asks the server
-- to close it; `new(loop)` makes a client that keeps idle connections per
-- scheme, host, port and trust settings and reuses them.
--
-- At most once (RFC 9110 §9.2.2: a client does not automatically retry a
-- non-idempotent request): a request is sent again on a new connection
-- only when a reused connection failed before any byte of the response
-- came, and then only if no byte of the request was handed to the socket
-- (the write was refused at once), or its method is safe (GET, HEAD,
-- OPTIONS, TRACE: repeating one has no effect the first did not have);
-- once at most. A request whose bytes went out and whose connection then
-- failed before any byte of a response came fails with OUTCOME_UNKNOWN
-- (the server may or may not have acted on it: the caller decides).
--
-- A failed request gives its error text and its kind (M.KINDS), so a
-- caller never reads the text to learn what happened; a connect failure
-- also gives its cause without the address ("ECONNREFUSED").
local core = require "jrpc.core"
local co = require "jrpc.uv.co"
local timers = require "jrpc.uv.timers"
local handles = require "jrpc.uv.handles"
local options = require "jrpc.options"

local M = {}

local request_handle

-- The error of a request that was sent and whose connection then closed
-- before any byte of a response came: the server may have acted on it or
-- not, and it is not sent again (a safe method's one retry aside). The
-- error is this text, or this text, ": " and the cause ("read: ECONNRESET:
-- connection reset by peer"): callers tell it apart by this prefix.
M.OUTCOME_UNKNOWN = "connection closed after the request was sent; its outcome is unknown (not retried)"

--- The kinds of failure, the third value a failed request gives:
---   connect          no connection (refused, resolve, TLS): nothing was sent
---   timeout          no head within the timeout
---   outcome_unknown  sent, then the connection closed before any answer (OUTCOME_UNKNOWN)
---   closed           the connection ended or failed otherwise (before the request
---                    was sent, or after part of the response came; or `close` on the client)
---   failed           anything else: a response that is no HTTP, a callback that raised
M.KINDS = { connect = true, timeout = true, outcome_unknown = true, closed = true, failed = true }

-- Methods whose repetition has no effect the first request did not have
-- (RFC 9110 §9.2.1 safe, hence §9.2.2 idempotent): the only ones sent again
-- after their bytes may have left. PUT and DELETE are idempotent too, but
-- a server is trusted less there (as Go's net/http does).
local SAFE = { GET = true, HEAD = true, OPTIONS = true, TRACE = true }

M.DEFAULTS = {
  timeout = 30,                      -- seconds for the whole exchange (streams: up to the head)
  max_header_bytes = 16384, max_headers = 100,
  max_body_bytes = 16 * 1024 * 1024, -- a buffered body; streamed bodies have no total limit
}

--- The names of `request`'s options.
M.OPTIONS = options.set{ "url", "method", "headers", "body", "timeout", "ca_file", "verify",
  "on_headers", "on_chunk", "on_done", "on_start", "max_header_bytes", "max_headers", "max_body_bytes" }

-- {======================================================================
-- URLs
-- =======================================================================

--- The parts of an absolute http(s) URL, or nil and why.
---@param url string
---@return table|nil parts  scheme, host, port, target, authority
---@return string|nil err
function M.parse_url(url)
  local scheme, rest = tostring(url):match("^(%a[%w+.-]*)://(.*)$")
  if not scheme then return nil, "not an absolute URL: " .. tostring(url) end
  scheme = scheme:lower()
  if scheme ~= "http" and scheme ~= "https" then return nil, "unsupported URL scheme: " .. scheme end
  local authority, target = rest:match("^([^/?#]*)(.*)$")
  target = target:gsub("#.*$", "")
  if target == "" then target = "/" elseif target:sub(1, 1) == "?" then target = "/" .. target end
  if authority:find("@", 1, true) then return nil, "user info in URLs is not supported" end
  local host, port
  if authority:sub(1, 1) == "[" then host, port = authority:match("^%[([%x:.]+)%]:?(%d*)$")
  else host, port = authority:match("^([^:]+):?(%d*)$") end
  if not host then return nil, "no host in URL: " .. url end
  local default = scheme == "https" and 443 or 80
  port = port ~= "" and tonumber(port) or default
  if port < 1 or port > 65535 then return nil, "bad port in URL: " .. url end
  host = host:lower()
  local shown = host:find(":", 1, true) and "[" .. host .. "]" or host
  return { scheme = scheme, host = host, port = port, target = target,
    authority = port == default and shown or shown .. ":" .. port }
end

-- }======================================================================

-- {======================================================================
-- Connections: TCP, and TLS on it
-- =======================================================================

local Conn = {}
Conn.__index = Conn

local function is_ip(host)
  return host:match("^%d+%.%d+%.%d+%.%d+$") ~= nil or host:find(":", 1, true) ~= nil
end

-- Close the socket and the TLS session; the exchange under way (if any)
-- ends with `err`: as a connection lost (see Exchange:_lost), unless
-- `deliberate` (our own close: the error as it is).
function Conn:_fail(err, deliberate)
  if self.closed then return end
  self:close()
  if self.on_up then return self:_up(err) end  -- still connecting
  local ex = self.exchange
  if not ex then return end
  if deliberate or ex.got_bytes then return ex:_finish(nil, err, false, "closed") end
  ex:_lost(err)
end

--- Close the connection now (idempotent).
function Conn:close()
  if self.closed then return end
  self.closed = true
  if self.pool then self.pool:_forget(self) end
  if self.tls then self.tls:close() end
  handles.close(self.uv, self.tcp)
end

-- Hand `bytes` to the socket. False when it refused them at once (then
-- none of them left) and the connection failed. A write that fails later
-- shows as the read's error or end (a response already read stays read).
function Conn:_send_raw(bytes)
  if bytes == "" then return true end
  local ok, err = self.tcp:write(bytes)
  if not ok then self:_fail("write: " .. tostring(err)); return false end
  return true
end

function Conn:_write(bytes)
  if self.closed then return false end
  if self.tls then
    local ok, err = self.tls:write(bytes)
    if not ok then self:_fail(err); return false end
    bytes = self.tls:outgoing()
  end
  return self:_send_raw(bytes)
end

-- The connection is up (TCP connected; TLS handshake done).
function Conn:_up(err)
  local cb = self.on_up
  self.on_up = nil
  if cb then cb(err) end
end

function Conn:_plain(data)
  local ex = self.exchange
  if ex then return ex:_data(data) end
  self:close()  -- bytes on an idle connection: not HTTP we asked for
end

function Conn:_eof()
  local ex = self.exchange
  self:close()
  if ex then ex:_eof() end
end

function Conn:_on_read(err, data)
  self.loop.events = self.loop.events + 1
  if self.closed then return end
  if err then
    if self.on_up then self:close(); return self:_up("read: " .. tostring(err)) end
    return self:_fail("read: " .. tostring(err))
  end
  if data == nil then
    if self.on_up then self:close(); return self:_up("connection closed during the TLS handshake") end
    return self:_eof()
  end
  local tls = self.tls
  if not tls then return self:_plain(data) end
  tls:feed(data)
  if self.on_up then
    local done, herr = tls:handshake()
    self:_send_raw(tls:outgoing())  -- an alert, when it failed
    if done == nil then self:close(); return self:_up(herr) end
    if not done then return end
    self:_up(nil)
    if self.closed then return end
  end
  local plain, closed = tls:read()
  if plain == nil then return self:_fail(closed) end
  self:_send_raw(tls:outgoing())
  if plain ~= "" then self:_plain(plain) end
  if closed and not self.closed then self:_eof() end
end

-- Connect to `u` (parse_url's parts) with `opts` (ca_file, verify);
-- cb(conn) or cb(nil, err, cause) once (`cause`: err without the
-- address). A name's addresses are tried in turn
-- ("localhost" may give ::1 first to a server on 127.0.0.1). Returns the
-- connection at once: closing it cancels the attempt.
local function open(loop, u, opts, cb)
  local uv = loop.uv
  local conn = setmetatable({ loop = loop, uv = uv, tcp = uv.new_tcp(), closed = false }, Conn)
  local where = u.host .. ":" .. u.port

  local function up()
    local tcp = conn.tcp
    tcp:nodelay(true)
    if u.scheme == "https" then
      local tls, terr = core.tls_client{ host = u.host, ca_file = opts.ca_file, verify = opts.verify }
      if not tls then conn:close(); return cb(nil, terr, terr) end
      conn.tls = tls
    end
    conn.on_up = function(uerr)
      if uerr then return cb(nil, ("https://%s: %s"):format(where, uerr), uerr) end
      cb(conn)
    end
    tcp:read_start(co.guard(function(rerr, data) conn:_on_read(rerr, data) end, "http client read"))
    if conn.tls then
      local done, herr = conn.tls:handshake()  -- the ClientHello
      if done == nil then conn:close(); return conn:_up(herr) end
      conn:_send_raw(conn.tls:outgoing())
    else
      conn:_up(nil)
    end
  end

  local function try(addrs, i, last_err)
    if conn.closed then return cb(nil, ("connect to %s: cancelled"):format(where), "cancelled") end
    local addr = addrs[i]
    if addr == nil then
      conn:close()
      return cb(nil, ("connect to %s: %s"):format(where, tostring(last_err)), tostring(last_err))
    end
    if i > 1 then  -- a handle that failed to connect is not used again
      handles.close(uv, conn.tcp)
      conn.tcp = uv.new_tcp()
    end
    local tcp = conn.tcp
    local ok, res, err = pcall(tcp.connect, tcp, addr, u.port, co.guard(function(cerr)
      if cerr then return try(addrs, i + 1, cerr) end
      if conn.closed then return cb(nil, ("connect to %s: cancelled"):format(where), "cancelled") end
      up()
    end, "http client connect"))
    if not ok or not res then return try(addrs, i + 1, ok and err or res) end
  end

  if is_ip(u.host) then
    try({ u.host }, 1)
    return conn
  end
  uv.getaddrinfo(u.host, nil, { socktype = "stream" }, co.guard(function(err, addrs)
    if err or not addrs or not addrs[1] then
      if conn.closed then return cb(nil, ("connect to %s: cancelled"):format(where), "cancelled") end
      conn:close()
      local cause = tostring(err or "no address")
      return cb(nil, ("connect to %s: %s"):format(where, cause), cause)
    end
    local list = {}
    for i, a in ipairs(addrs) do list[i] = a.addr end
    try(list, 1)
  end, "http client resolve"))
  return conn
end

-- }======================================================================

-- {======================================================================
-- One exchange: a request and its response
-- =======================================================================

---@class jrpc.uv.HttpStream
---@field closed boolean  true once the response ended or was closed
local Stream = {}
Stream.__index = Stream

--- End a streamed response now: the connection closes, and `request`
--- returns the response with `closed = true`. Idempotent.
function Stream:close()
  local ex = self.exchange
  if ex.finished then return end
  ex.res = ex.res or {}
  ex.res.closed = true
  local conn = ex.conn
  ex.conn = nil
  if conn then conn.exchange = nil; conn:close() end
  ex:_finish(ex.res)
end

local Exchange = {}
Exchange.__index = Exchange

-- `again`: the request may be sent once more on a new connection (see
-- Exchange:_lost); `err` is its error if it is not, `kind` its kind (M.KINDS).
function Exchange:_finish(res, err, again, kind)
  if self.finished then return end
  self.finished = true
  self.stream.closed = true
  local conn = self.conn
  if conn then conn.exchange = nil end
  if res then  -- streamed: "" (the bytes went to on_chunk); closed early: what came
    if self.on_chunk == nil then res.body = table.concat(self.chunks) else res.body = "" end
  end
  self.done(res, err, again, kind)
end

-- The connection failed or closed (`cause`: why, or nil for an orderly
-- close) before any byte of the response came. A request of which no byte
-- left provably did nothing; one whose bytes were handed to the socket may
-- have been acted on, and only a safe method may go again. Either goes
-- again only from a reused connection (a new one failing this way would
-- fail again), and once (the request's `st.retried`).
function Exchange:_lost(cause)
  if self.finished then return end
  if not self.sent then
    return self:_finish(nil, cause or "connection closed before the request was sent", self.reused, "closed")
  end
  local err = cause and (M.OUTCOME_UNKNOWN .. ": " .. cause) or M.OUTCOME_UNKNOWN
  self:_finish(nil, err, self.reused and SAFE[self.method] == true, "outcome_unknown")
end

-- Call a user callback; one that raises ends the exchange with its error.
function Exchange:_call(fn, what, ...)
  local ok, err = xpcall(fn, debug.traceback, ...)
  if not ok then
    local conn = self.conn
    self:_finish(nil, what .. " failed: " .. tostring(err), false, "failed")
    if conn then conn:close() end
    return false
  end
  return not self.finished
end

-- Take the parser's events for the bytes `data` (nil: just drain).
function Exchange:_events(data)
  local parser = self.parser
  local kind, v = parser:next(data)
  while kind and not self.finished do
    if kind == "head" then
      self.got_bytes = true
      self.res = { status = v.status, reason = v.reason, version = v.version,
        headers = v.headers, raw_headers = v.raw_headers }
      if self.on_chunk then  -- a stream lasts as long as it lasts
        timers.cancel(self.uv, self.st.timer)
        self.st.timer = nil
      end
      if self.on_headers and not self:_call(self.on_headers, "on_headers", self.res, self.stream) then return end
    elseif kind == "body" then
      if self.on_chunk then
        if not self:_call(self.on_chunk, "on_chunk", v, self.stream) then return end
      else
        self.chunks[#self.chunks + 1] = v
      end
    elseif kind == "done" then
      -- the connection goes back to the pool first: finishing may resume
      -- the caller, whose next request should find it there
      local conn = self.conn
      self.conn = nil
      if conn then
        conn.exchange = nil
        if v and conn.pool and not conn.closed then conn.pool:_release(conn) else conn:close() end
      end
      self:_finish(self.res)
      return
    end
    kind, v = parser:next()
  end
  if kind == nil and v ~= nil then
    local conn = self.conn
    self:_finish(nil, v, false, "failed")
    if conn then conn:close() end
  end
end

function Exchange:_data(data)
  self.got_bytes = true
  self:_events(data)
end

function Exchange:_eof()
  if self.finished then return end
  if not self.got_bytes then return self:_lost(nil) end
  self.parser:finish()
  self:_events(nil)
  if not self.finished then self:_finish(nil, "connection closed before the response ended", false, "closed") end
end

local function check_opts(opts)
  if type(opts) ~= "table" then error("http_client.request: expected an options table", 3) end
  options.check("http_client.request", opts, 2, M.OPTIONS)
  for _, k in ipairs({ "on_headers", "on_chunk", "on_done", "on_start" }) do
    if opts[k] ~= nil and type(opts[k]) ~= "function" then
      error("http_client.request: " .. k .. " must be a function", 3)
    end
  end
  if opts.headers ~= nil and type(opts.headers) ~= "table" then
    error("http_client.request: headers must be a table", 3)
  end
  if opts.body ~= nil and type(opts.body) ~= "string" then
    error("http_client.request: body must be a string", 3)
  end
  if opts.ca_file ~= nil and type(opts.ca_file) ~= "string" then
    error("http_client.request: ca_file must be a string", 3)
  end
  if opts.verify ~= nil and type(opts.verify) ~= "boolean" then
    error("http_client.request: verify must be a boolean", 3)
  end
  if opts.method ~= nil and type(opts.method) ~= "string" then
    error("http_client.request: method must be a string", 3)
  end
  if opts.timeout ~= nil and (type(opts.timeout) ~= "number" or opts.timeout <= 0) then
    error("http_client.request: timeout must be a positive number", 3)
  end
end

-- The request's bytes: our Host (unless given) and, without a pool,
-- Connection: close. Raises for what core.http_request refuses.
local function request_bytes(opts, u, keep)
  local headers, has = {}, {}
  for k, v in pairs(opts.headers or {}) do
    headers[k] = v
    has[k:lower()] = true
  end
  if not has.host then headers.Host = u.authority end
  if not keep and not has.connection then headers.Connection = "close" end
  local method = opts.method or (opts.body and "POST" or "GET")
  return core.http_request(method, u.target, headers, opts.body), method
end

---@class jrpc.uv.HttpRequest
local Request = {}
Request.__index = Request

--- End the request now, at any stage: still connecting, waiting for the
--- head (a server that answers only when done sees the connection go:
--- MCP's cancellation over HTTP), or streaming. The request then ends with
--- `res.closed = true` (no `status` when no head came). Idempotent.
function Request:close()
  local st = self.st
  if st.finished then return end
  local ex = st.ex
  if ex and not ex.finished then return ex.stream:close() end
  if st.opening then st.opening:close() end
  self.finish({ closed = true, headers = {}, raw_headers = {}, body = "" })
end

-- The handle `on_start` gets: the whole request, across a retry.
request_handle = function(st, finish)
  return setmetatable({ st = st, finish = finish }, Request)
end

-- Run one exchange; done(res, err, kind, cause) once. `pool`: a Client, or nil. A
-- request on a reused connection that ends before any byte came back is
-- sent again once on a new one when Exchange:_lost allows it: none of its
-- bytes left, or its method is safe.
local function exchange(loop, opts, pool, done)
  local u, uerr = M.parse_url(opts.url)
  if not u then return done(nil, uerr, "failed") end
  local bytes, method = request_bytes(opts, u, pool ~= nil)
  local limits = {}
  for _, k in ipairs({ "max_header_bytes", "max_headers", "max_body_bytes" }) do
    if opts[k] ~= nil then limits[k] = opts[k] else limits[k] = M.DEFAULTS[k] end
  end
  if opts.on_chunk ~= nil and opts.max_body_bytes == nil then limits.max_body_bytes = false end
  local key = table.concat({ u.scheme, u.host, u.port, tostring(opts.ca_file), tostring(opts.verify) }, "|")
  local timeout = opts.timeout or M.DEFAULTS.timeout
  local st = { finished = false, retried = false }  -- the whole request, across a retry
  local connected

  local function finish(res, err, kind, cause)
    if st.finished then return end
    st.finished = true
    timers.cancel(loop.uv, st.timer)
    st.timer = nil
    done(res, err, kind, cause)
  end

  local function start(conn)
    local ex = setmetatable({ uv = loop.uv, st = st, conn = conn, parser = core.http_client(limits),
      chunks = {}, on_headers = opts.on_headers, on_chunk = opts.on_chunk, reused = conn.reused == true,
      method = method, sent = false, finished = false }, Exchange)
    ex.stream = setmetatable({ exchange = ex, closed = false }, Stream)
    ex.done = function(res, err, again, kind)
      if again and pool and not pool.closed and not st.retried and not st.finished then
        st.retried = true
        st.opening = pool:_connect(u, key, opts, connected)
        return
      end
      finish(res, err, kind)
    end
    st.ex = ex
    if method == "HEAD" then ex.parser:no_body() end
    conn.exchange = ex
    if conn.closed then return ex:_lost(nil) end  -- found closed: nothing was written
    -- from here some bytes may have left, unless the write is refused at once
    if conn:_write(bytes) then ex.sent = true end
  end

  connected = function(conn, err, cause)
    if st.finished then if conn then conn:close() end return end
    if not conn then return finish(nil, err, "connect", cause) end
    start(conn)
  end

  st.timer = timers.after(loop.uv, timeout, function()
    st.timer = nil
    local err = ("timeout after %g s"):format(timeout)
    local ex = st.ex
    if ex and not ex.finished then
      local conn = ex.conn
      ex:_finish(nil, err, false, "timeout")
      if conn then conn:close() end
    end
    finish(nil, err, "timeout")
    -- a connection still being made is not waited for (nor left to linger)
    if st.opening then st.opening:close() end
  end, "http client timeout")
  if opts.on_start then opts.on_start(request_handle(st, finish)) end
  if st.finished then return end
  if pool then st.opening = pool:_get(u, key, opts, connected)
  else st.opening = open(loop, u, opts, connected) end
end

--- One request. In a coroutine (no `on_done`): waits, returns the
--- response `{status, reason, version, headers, raw_headers, body}` or
--- nil, err, kind (see M.KINDS), cause (a connect failure's, without the
--- address). Otherwise `opts.on_done(res, err, kind, cause)` is called later.
--- `opts`: `url` (http:// or https://), `method` (default GET, or POST
--- with a body), `headers`, `body`, `timeout` (seconds, default 30),
--- `ca_file`, `verify` (false turns certificate checks off),
--- `on_headers(res, stream)`, `on_chunk(bytes, stream)` (streams the
--- body: `res.body` is then ""), `on_start(request)` (at once: its
--- `close()` ends the request at any stage), limits `max_header_bytes`, `max_headers`,
--- `max_body_bytes`.
---@param loop table  the jrpc.uv loop
---@param opts table
---@return table|boolean|nil res
---@return string|nil err
function M.request(loop, opts)
  return M._request(loop, opts, nil)
end

function M._request(loop, opts, pool)
  check_opts(opts)
  local on_done = opts.on_done
  local waiter = on_done == nil and co.current() or nil
  if on_done == nil and waiter == nil then
    error("http_client.request: outside a coroutine, on_done = function(res, err) is required", 3)
  end
  local sync, waiting = nil, false
  exchange(loop, opts, pool, function(res, err, kind, cause)
    loop.events = loop.events + 1
    if waiter then
      if not waiting then sync = { res, err, kind, cause }; return end  -- done before the wait
      return co.resume(waiter, nil, res, err, kind, cause)
    end
    co.call(on_done, "on_done", nil, res, err, kind, cause)
  end)
  if waiter then
    if sync then return sync[1], sync[2], sync[3], sync[4] end
    waiting = true
    return co.wait("http request")
  end
  return true
end

-- }======================================================================

-- {======================================================================
-- A client that reuses connections
-- =======================================================================

---@class jrpc.uv.HttpClient
local Client = {}
Client.__index = Client

--- A client keeping idle connections (keep-alive) for reuse, per scheme,
--- host, port and trust settings; `max_idle` per key (default 4).
---@param loop table
---@param opts? table  max_idle
---@return jrpc.uv.HttpClient
function M.new(loop, opts)
  opts = options.check("http_client.new", opts, 2, options.set{ "max_idle" })
  return setmetatable({ loop = loop, idle = {}, live = {}, max_idle = opts.max_idle or 4 }, Client)
end

--- Like `http_client.request`, on a kept connection when one is idle.
---@param opts table
---@return table|boolean|nil res
---@return string|nil err
function Client:request(opts)
  if self.closed then error("http_client: client is closed", 2) end
  return M._request(self.loop, opts, self)
end

function Client:_connect(u, key, opts, cb)
  return open(self.loop, u, opts, function(conn, err, cause)
    if not conn then return cb(nil, err, cause) end
    conn.key, conn.pool = key, self
    self.live[conn] = true
    cb(conn)
  end)
end

function Client:_get(u, key, opts, cb)
  local list = self.idle[key]
  while list and #list > 0 do
    local conn = table.remove(list)
    if not conn.closed then
      conn.reused = true
      conn.tcp:ref()
      cb(conn)
      return conn
    end
  end
  return self:_connect(u, key, opts, cb)
end

function Client:_release(conn)
  if self.closed then return conn:close() end
  local list = self.idle[conn.key] or {}
  self.idle[conn.key] = list
  if #list >= self.max_idle then return conn:close() end
  conn.tcp:unref()  -- an idle connection does not keep the loop running
  list[#list + 1] = conn
end

function Client:_forget(conn)
  self.live[conn] = nil
  local list = self.idle[conn.key]
  if not list then return end
  for i = #list, 1, -1 do
    if list[i] == conn then table.remove(list, i) end
  end
end

--- How many idle connections are kept now.
---@return integer
function Client:idle_count()
  local n = 0
  for _, list in pairs(self.idle) do n = n + #list end
  return n
end

--- Close every connection (idle or busy; busy requests end with an error).
function Client:close()
  self.closed = true
  local all = {}
  for conn in pairs(self.live) do all[#all + 1] = conn end
  for _, conn in ipairs(all) do conn:_fail("client closed", true) end
  self.idle = {}
end

-- }======================================================================

-- {======================================================================
-- Server-Sent Events
-- =======================================================================

---@class jrpc.uv.SseParser
local Sse = {}
Sse.__index = Sse

--- A splitter of an SSE byte stream (text/event-stream) into events, as
--- the WHATWG rules say: lines end in CRLF, LF or CR; `data` lines join
--- with "\n"; `:` lines are comments; a blank line ends an event.
---@return jrpc.uv.SseParser
function M.sse_parser()
  return setmetatable({ buf = "", data = nil, event = nil, id = nil, last_id = nil,
    cr = false }, Sse)
end

local function field(self, line, out)
  if line == "" then
    if self.data ~= nil then
      out[#out + 1] = { event = self.event or "message", data = self.data, id = self.last_id,
        retry = self.retry }
    end
    self.data, self.event, self.retry = nil, nil, nil
    return
  end
  if line:sub(1, 1) == ":" then return end
  local name, value = line:match("^([^:]*):? ?(.*)$")
  if not line:find(":", 1, true) then name, value = line, "" end
  if name == "data" then
    self.data = self.data and (self.data .. "\n" .. value) or value
  elseif name == "event" then
    self.event = value
  elseif name == "id" then
    if not value:find("\0", 1, true) then self.last_id = value end
  elseif name == "retry" then
    if value:match("^%d+$") then self.retry = tonumber(value) end
  end
end

--- Feed bytes; returns the events they completed (a list, maybe empty),
--- each `{event, data, id, retry}` (`event` "message" unless named; `id`
--- the last event id seen, which lasts across events).
---@param bytes string
---@return table events
function Sse:feed(bytes)
  local out = {}
  local s = self.buf .. bytes
  local pos = 1
  if not self.started then  -- a byte order mark at the very start is dropped
    if #s < 3 and ("\239\187\191"):sub(1, #s) == s then self.buf = s; return out end
    self.started = true
    if s:sub(1, 3) == "\239\187\191" then pos = 4 end
  end
  if self.cr and s:sub(pos, pos) == "\n" then pos = pos + 1 end  -- the LF of a CRLF split between feeds
  self.cr = false
  while true do
    local a, b = s:find("[\r\n]", pos)
    if not a then break end
    if s:sub(a, a) == "\r" then
      if a == #s then self.cr = true; b = a  -- maybe CRLF: a LF may come next
      elseif s:sub(a + 1, a + 1) == "\n" then b = a + 1 end
    end
    field(self, s:sub(pos, a - 1), out)
    pos = b + 1
  end
  self.buf = s:sub(pos)
  return out
end

-- }======================================================================

return M
