--- An HTTP/1.1 server on luv for JSON endpoints and SSE streams: the
-- transport under jrpc.mcp's Streamable HTTP. The bytes are the C core's
-- (`core.http_server` parses requests, `core.http_response`,
-- `core.http_stream_head`, `core.http_chunk` and `core.sse_event` write);
-- this module does the I/O, the limits in time and in connections, and runs
-- each request's handler in a coroutine, where it may wait in jrpc calls.
--
-- Requests on one connection are served one at a time, in order (HTTP/1.1
-- pipelining needs the responses in request order): the next one is read
-- from the codec only when the previous response has ended.
local core = require "jrpc.core"
local co = require "jrpc.uv.co"
local timers = require "jrpc.uv.timers"
local handles = require "jrpc.uv.handles"
local workers = require "jrpc.workers"
local options = require "jrpc.options"
local errors = require "jrpc.errors"

local M = {}

M.DEFAULTS = {
  max_connections = 64,         -- connections not streaming (README: "HTTP limits and refusals")
  max_streams = 64,             -- SSE streams under way, counted apart; more are answered 503
  idle_timeout = 30,            -- seconds a connection may wait for the first byte of a request
  header_timeout = 10,          -- seconds from a request's first byte to the end of its head (408)
  body_timeout = 30,            -- seconds from the end of a head to the end of its body (408)
  large_body_bytes = 64 * 1024,        -- a request with a larger body is started one per loop turn
  max_queued_bytes = 1024 * 1024,      -- response bytes queued past which a connection is not read
  max_pipelined_bytes = 64 * 1024,     -- request bytes read ahead while a response is under way
  max_write_queue = 16 * 1024 * 1024,  -- a stream whose reader lags this far is closed
  max_header_bytes = 8192, max_headers = 64, max_body_bytes = 4 * 1024 * 1024,
}

---@class jrpc.uv.HttpResponse
---@field closed boolean  true once the client went away (or the response ended and the connection closed)
---@field on_close? fun()  called once if the client goes away before the response ends
local Response = {}
Response.__index = Response

---@class jrpc.uv.HttpServer
---@field port integer  the bound TCP port
local Server = {}
Server.__index = Server

-- {======================================================================
-- One connection
--
-- A connection reads one request at a time: its bytes go to the codec
-- until a request is whole, then the handler answers it; bytes that come
-- meanwhile are held (not parsed) until the response ends. `pump` serves
-- what is there in a loop, so a handler that answers at once does not
-- serve the next pipelined request from inside its own call.
-- =======================================================================

local Conn = {}
Conn.__index = Conn

local function log_of(server)
  return server.on_error or co.report
end

function Conn:_close()
  if self.closed then return end
  self.closed = true
  timers.cancel(self.uv, self.timer)
  local server = self.server
  server.connections[self] = nil
  if self.streaming then server.streams = server.streams - 1 else server.count = server.count - 1 end
  local res = self.res
  if res and not res.ended then
    res.closed = true
    if res.on_close then co.call(res.on_close, "on_close", log_of(server)) end
  end
  handles.flush_then_close(self.uv, self.tcp, 2)
  if server.draining then server:_drained_check() end
end

-- The timer of a connection between responses: idle_timeout until a
-- request's first byte, header_timeout for its head, body_timeout for its
-- body. Re-armed only when that phase changes.
function Conn:_arm(phase)
  if self.phase == phase and self.timer then return end
  self.phase = phase
  timers.cancel(self.uv, self.timer)
  local l = self.server.limits
  local seconds = phase == "head" and l.header_timeout or phase == "body" and l.body_timeout or l.idle_timeout
  self.waiting_since = self.uv.now()
  self.timer = timers.after(self.uv, seconds, function()
    self.timer = nil
    if self.res ~= nil or self.closed then return end
    if phase == nil then return self:_close() end
    self:_refuse(408, "request " .. phase .. " not received within " .. seconds .. " s")
  end, "http " .. (phase or "idle"))
end

-- Read while the client takes its responses and the bytes held unserved
-- (ours and the reader's) stay under one request's worth, or, while a
-- response is under way, under max_pipelined_bytes: pipelined requests
-- wait for it anyway, and reading on only tells when the client leaves.
function Conn:_update_reading()
  if self.closed then return end
  local l = self.server.limits
  local held = (self.nheld or 0) + self.codec:buffered()
  local want = not self.backlogged and held <= (self.res ~= nil and l.max_pipelined_bytes
    or l.max_header_bytes + l.max_body_bytes)
  if want == self.reading then return end
  self.reading = want
  if want then self.tcp:read_start(self.on_read) else self.tcp:read_stop() end
end

function Conn:_write(bytes)
  if self.closed then return false end
  local ok = self.tcp:write(bytes)
  if not ok then self:_close(); return false end
  local queued = self.tcp:get_write_queue_size()
  local l = self.server.limits
  if self.streaming and queued > l.max_write_queue then
    self:_close()  -- a reader that lags this far is gone in all but name
    return false
  end
  if queued > l.max_queued_bytes and not self.backlogged then
    -- the client does not read its responses: read (and serve) no more of
    -- its requests until what is queued is written
    self.backlogged = true
    self:_update_reading()
    self.tcp:write("", function()
      self.backlogged = false
      if self.closed then return end
      self:_update_reading()
      self:_pump()
    end)
  end
  return true
end

-- The current response ended: serve the next request, or close.
function Conn:_done(keep_alive)
  self.res = nil
  if self.streaming then
    local server = self.server
    self.streaming = false
    server.streams, server.count = server.streams - 1, server.count + 1
  end
  -- a draining server answers what it took, then lets the connection go
  if not keep_alive or self.server.draining then
    self.closed_after = true
    return self:_close()
  end
  self:_pump()  -- re-arms the timer (_handle cancelled it)
end

-- The job a worker runs for one request: the handler, and a 500 when it
-- raised or returned without answering (a stream it started is its own).
local function run_handler(handler, req, res, log)
  local ok, err = xpcall(handler, debug.traceback, req, res)
  if not ok then log("http handler failed: " .. tostring(err)) end
  if not res.started then
    res:send(500, { ["content-type"] = "text/plain" }, ok and "no response\n" or "internal error\n")
  end
end

-- A handler that yielded to another scheduler: nothing would resume it.
local function foreign(res)
  local conn = res.conn
  log_of(conn.server)("http handler yielded to another scheduler; answered 500")
  if not res.started then res:send(500, { ["content-type"] = "text/plain" }, "internal error\n")
  elseif not res.ended then conn:_close() end
end

-- Take `req`: its handler runs now, or, for a large body, in a later
-- loop turn (Server:_defer).
function Conn:_handle(req)
  timers.cancel(self.uv, self.timer)
  self.timer = nil
  local res = setmetatable({ conn = self, closed = false, ended = false, keep_alive = req.keep_alive,
    head_only = req.method == "HEAD" }, Response)
  self.res = res
  if #req.body > self.server.limits.large_body_bytes then return self.server:_defer(self, req, res) end
  self:_run(req, res)
end

-- Run the handler for `req` on a worker (it may wait in jrpc calls).
function Conn:_run(req, res)
  local server = self.server
  local pool = server.pool
  local worker = pool:take()
  if worker == nil then return res:send(503, { ["content-type"] = "text/plain" }, "out of memory\n") end
  local outcome = pool:start(worker, run_handler, server.handler, req, res, log_of(server))
  if outcome == "waiting" then pool:park(worker, res)
  elseif outcome == "foreign" then foreign(res) end
end

-- Answer `status` with `text` and close after it: a request that cannot be served.
function Conn:_refuse(status, text)
  self.res = setmetatable({ conn = self, closed = false, ended = false, keep_alive = false }, Response)
  self.res:send(status, { ["content-type"] = "text/plain", connection = "close" }, text .. "\n")
end

-- Serve the requests that are whole, one after the other, until one is
-- answered later, the codec needs more bytes, or the client is backlogged.
function Conn:_pump()
  if self.pumping then self.again = true; return end
  self.pumping = true
  repeat
    self.again = false
    while not self.closed and self.res == nil and not self.backlogged do
      local held = self.held
      self.held, self.nheld = nil, 0
      local kind, a, b = self.codec:next(held and (held[2] and table.concat(held) or held[1]))
      if kind == "request" then
        self:_handle(a)
      elseif kind == "error" then
        self:_refuse(a, b)
      else
        self:_arm(self.codec:phase())
        break
      end
    end
  until not self.again
  self.pumping = false
  self:_update_reading()
end

function Conn:_on_read(err, data)
  if self.closed then return end
  if err or data == nil then return self:_close() end
  local held = self.held or {}
  self.held, self.nheld = held, (self.nheld or 0) + #data
  held[#held + 1] = data
  if self.res ~= nil or self.backlogged then
    -- a pipelined request: kept for when this response ends (reading
    -- stops once a request's worth is held)
    return self:_update_reading()
  end
  self:_pump()
end

-- }======================================================================

-- {======================================================================
-- Responses
-- =======================================================================

--- A whole response: status, headers (lower-case names), body.
---@param status integer
---@param headers? table<string, string>
---@param body? string
function Response:send(status, headers, body)
  if self.started then error("http: response already started", 2) end
  self.started, self.ended = true, true
  headers = headers or {}
  if not self.keep_alive then headers.connection = "close" end
  local conn = self.conn
  body = body or ""
  local bytes = core.http_response(status, headers, body)
  -- an answer to HEAD has the head GET would get, and no content (RFC 9110 9.3.2)
  if self.head_only and #body > 0 then bytes = bytes:sub(1, #bytes - #body) end
  if conn:_write(bytes) then
    conn:_done(self.keep_alive)
  end
end

--- Start an SSE response; then `event(json)` per message and `finish()`.
--- A stream counts against `max_streams`, not `max_connections`; when
--- `max_streams` are under way it is refused: the client gets `503 too many
--- streams` (with `Retry-After`), and this returns false.
---@param status? integer  default 200
---@param headers? table<string, string>
---@return boolean started
function Response:stream(status, headers)
  if self.started then error("http: response already started", 2) end
  local conn = self.conn
  local server = conn.server
  if server.streams >= server.limits.max_streams then
    self:send(503, { ["content-type"] = "text/plain", ["retry-after"] = "5" }, "too many streams\n")
    return false
  end
  self.started, self.streaming = true, true
  if not conn.closed then
    conn.streaming = true
    server.count, server.streams = server.count - 1, server.streams + 1
  end
  conn:_write(core.http_stream_head(status or 200, headers or {}))
  return true
end

--- One SSE message (`data: <json>`, after `id: <id>` when given) on a
--- stream from `stream`. Returns false once the client is gone.
---@param json string  one line of JSON
---@param id? string  the event id: one line
---@return boolean sent
function Response:event(json, id)
  if not self.streaming or self.ended then error("http: no stream under way", 2) end
  if self.closed then return false end
  return self.conn:_write(core.http_chunk(core.sse_event(json, id)))
end

--- An SSE comment line (`: <text>`) on a stream from `stream`: clients
--- ignore it, and it keeps a quiet stream from looking dead to them and to
--- proxies. Returns false once the client is gone.
---@param text string  one line
---@return boolean sent
function Response:comment(text)
  if not self.streaming or self.ended then error("http: no stream under way", 2) end
  if self.closed then return false end
  return self.conn:_write(core.http_chunk(": " .. text .. "\n\n"))
end

--- End a stream from `stream` (the connection then serves its next request).
function Response:finish()
  if not self.streaming or self.ended then return end
  self.ended = true
  local conn = self.conn
  if not self.closed and conn:_write(core.http_chunk("")) then conn:_done(self.keep_alive) end
end

-- }======================================================================

local function limits_of(opts)
  local l = {}
  for k, v in pairs(M.DEFAULTS) do
    local given = opts[k]
    if given ~= nil and (type(given) ~= "number" or given <= 0) then
      error("http.listen: " .. k .. " must be a positive number", 4)
    end
    l[k] = given or v
  end
  return l
end

-- At the connection cap, the connection that has waited longest for (the
-- rest of) a request makes room: one that is answering or streaming is
-- never chosen. Nil when every connection is busy.
local function evictable(server)
  local victim
  for conn in pairs(server.connections) do
    if conn.res == nil and not conn.streaming and not conn.closed
      and (victim == nil or conn.waiting_since < victim.waiting_since) then
      victim = conn
    end
  end
  return victim
end

local function accept(server)
  local uv = server.uv
  local tcp = uv.new_tcp()
  if not server.handle:accept(tcp) then return handles.close(uv, tcp) end
  tcp:nodelay(true)
  local l = server.limits
  if server.count >= l.max_connections then
    local victim = evictable(server)
    if victim == nil then  -- every connection is answering: say so, close
      tcp:write(core.http_response(503, { connection = "close", ["content-type"] = "text/plain",
        ["retry-after"] = "1" }, "too many connections\n"))
      return handles.flush_then_close(uv, tcp, 1)
    end
    server.evicted = server.evicted + 1
    victim:_close()
  end
  local conn = setmetatable({ server = server, uv = uv, tcp = tcp, closed = false, reading = true,
    codec = core.http_server{ max_header_bytes = l.max_header_bytes, max_headers = l.max_headers,
      max_body_bytes = l.max_body_bytes } }, Conn)
  server.count = server.count + 1
  server.connections[conn] = true
  conn:_arm(nil)
  conn.on_read = co.guard(function(err, data) conn:_on_read(err, data) end, "http read", log_of(server))
  tcp:read_start(conn.on_read)
end

--- The names `listen` takes: its own and the limits in M.DEFAULTS.
M.OPTIONS = options.set({ "host", "port", "handler", "on_error", "on_shutdown" }, M.DEFAULTS)

--- Listen for HTTP on `host` (default 127.0.0.1) and `port` (0: a free one);
--- `handler(req, res)` runs for each request in a coroutine: `req` as
--- `core.http_server` gives it, `res` a jrpc.uv.HttpResponse.
---@param loop table  the jrpc.uv loop
---@param opts table  host, port, handler, on_error, on_shutdown (called once when
---  `shutdown` begins: end long-lived streams there, so they finish cleanly
---  rather than being cut after the grace), and the limits in M.DEFAULTS
---@return jrpc.uv.HttpServer|nil server
---@return jrpc.Error|nil err  code "listen"
function M.listen(loop, opts)
  if type(opts) ~= "table" or type(opts.handler) ~= "function" then
    error("http.listen: needs { port = n, handler = function(req, res) }", 2)
  end
  options.check("http.listen", opts, 2, M.OPTIONS)
  local uv = loop.uv
  local server = setmetatable({ uv = uv, handler = opts.handler, on_error = opts.on_error,
    on_shutdown = opts.on_shutdown, limits = limits_of(opts), connections = {}, count = 0,
    streams = 0, evicted = 0, large = { first = 1, last = 0 } }, Server)
  server.pool = workers.new(log_of(server), foreign)
  local handle = uv.new_tcp()
  local ok, err = handle:bind(opts.host or "127.0.0.1", opts.port or 0)
  if ok then ok, err = handle:listen(128, co.guard(function(e)
    if not e then accept(server) end
  end, "http accept", log_of(server))) end
  if not ok then
    handles.close(uv, handle)
    return nil, errors.new("listen", ("http: cannot listen on %s:%s: %s"):format(opts.host or "127.0.0.1",
      opts.port or 0, tostring(err)))
  end
  server.handle = handle
  server.port = handle:getsockname().port
  return server
end

-- {======================================================================
-- Large requests
--
-- Decoding a request of megabytes holds the loop for a good part of a
-- second. Such requests wait in a queue and start one per loop turn, so
-- every turn also reads and answers the small requests that came
-- meanwhile: a small request waits for at most one large one, not for all
-- of them. Once a burst is over (a second without a new large request)
-- the garbage is collected and the C heap trimmed, so the memory a burst
-- took goes back to the system.
-- =======================================================================

local SETTLE_AFTER = 1  -- seconds without a large request before the memory is given back

-- (An idle handle, not a 0 s timer: libuv runs a timer started from a
-- timer callback in the same pass when it is already due, so chained
-- timers would run every queued request before the next read.)
function Server:_defer(conn, req, res)
  local q = self.large
  q.last = q.last + 1
  q[q.last] = { conn = conn, req = req, res = res }
  if not self.large_idle then
    self.large_idle = self.uv.new_idle()
    self.run_large = co.guard(function() self:_run_large() end, "http large request", log_of(self))
  end
  if not self.large_idle:is_active() then self.large_idle:start(self.run_large) end
end

-- Once per loop turn while large requests wait: start the first one.
function Server:_run_large()
  local q = self.large
  if q.first <= q.last then
    local job = q[q.first]
    q[q.first], q.first = nil, q.first + 1
    if not job.conn.closed then job.conn:_run(job.req, job.res) end
  end
  if q.first > q.last and self.large_idle then self.large_idle:stop() end
  timers.cancel(self.uv, self.settle_timer)
  self.settle_timer = timers.after(self.uv, SETTLE_AFTER, function()
    self.settle_timer = nil
    collectgarbage("collect")
    core.trim_memory()
  end, "http settle memory")
end

-- }======================================================================

--- Stop listening and close every connection. Idempotent.
function Server:close()
  if self.closed then return end
  self.closed = true
  timers.cancel(self.uv, self.grace_timer)
  timers.cancel(self.uv, self.settle_timer)
  self.settle_timer = nil
  if self.large_idle then handles.close(self.uv, self.large_idle) end
  self.large_idle = nil
  handles.close(self.uv, self.handle)
  for conn in pairs(self.connections) do conn:_close() end
  self:_drained_check()
end

-- Once draining and no connection is left: tell the caller, once.
function Server:_drained_check()
  if self.count > 0 or not self.on_drained then return end
  local done = self.on_drained
  self.on_drained = nil
  timers.cancel(self.uv, self.grace_timer)
  co.call(done, "http drained", log_of(self))
end

--- Stop gracefully: stop listening (new connections are refused by the
--- kernel), close the connections waiting between requests, and let each
--- request in flight be answered, its connection closing after it
--- (`Connection: close`); the listen option `on_shutdown` is called. After
--- `opts.grace` seconds (default 10) what is still open (a long SSE stream)
--- is closed. `opts.on_done()` runs once
--- every connection is gone. Idempotent; `close()` still closes at once.
---@param opts? {grace?: number, on_done?: fun()}
function Server:shutdown(opts)
  opts = opts or {}
  local grace = opts.grace or 10
  if type(grace) ~= "number" or grace <= 0 then error("http.shutdown: grace must be a positive number", 2) end
  if self.draining or self.closed then return end
  self.draining, self.on_drained = true, opts.on_done
  handles.close(self.uv, self.handle)
  for conn in pairs(self.connections) do
    if conn.res == nil then
      conn:_close()
    elseif not conn.res.started then
      conn.res.keep_alive = false  -- its answer says Connection: close
    end
  end
  self.grace_timer = timers.after(self.uv, grace, function()
    self.grace_timer = nil
    self:close()
  end, "http shutdown grace")
  -- streams the owner ends now finish their responses, and their
  -- connections close after them (a draining server keeps none)
  if self.on_shutdown then co.call(self.on_shutdown, "http on_shutdown", log_of(self)) end
  self:_drained_check()
end

return M
