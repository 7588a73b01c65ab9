--- Legacy (2025-11-25) Streamable HTTP sessions, on the endpoint the
-- modern era shares: `initialize` without modern `_meta` mints an
-- `MCP-Session-Id`, and every later POST, GET and DELETE names it. One MCP
-- peer serves the whole session (so its legacy state, session.lua, lives
-- as long as the session); its `send` routes each outgoing message to an
-- HTTP response:
--   * a response goes to the POST that carried its request;
--   * a notification or request of ours goes to the stream of the request
--     whose handler sent it, else to the standalone GET stream, else
--     nowhere (the spec allows dropping). The handler's context names the
--     request before it writes (`route`): the peer holds writes during a
--     read, so the bytes arrive later, in order, as a FIFO of routes.
-- This module owns the session table and that routing, the checks of a
-- session's `MCP-Protocol-Version` header and the idle clock that ends
-- sessions; http.lua owns the HTTP checks shared by both eras.
local core = require "jrpc.core"
local options = require "jrpc.options"
local peer_mod = require "jrpc.peer"
local errors = require "jrpc.errors"
local co = require "jrpc.uv.co"
local timers = require "jrpc.uv.timers"
local protocol = require "jrpc.mcp.protocol"
local replay_mod = require "jrpc.mcp.http_replay"

local M = {}

--- The names of `serve_http`'s options this module reads.
M.OPTIONS = options.set{ "max_sessions", "session_idle_timeout", "session_id_prefix", "peer", "sse_replay" }

local function json_headers(sid)
  return { ["content-type"] = "application/json", ["mcp-session-id"] = sid }
end
local function sse_headers(sid)
  return { ["content-type"] = "text/event-stream", ["cache-control"] = "no-cache",
    ["x-accel-buffering"] = "no", ["mcp-session-id"] = sid }
end

local function plain(res, status, text)
  res:send(status, { ["content-type"] = "text/plain" }, text .. "\n")
end

local function hex(bytes)
  return (bytes:gsub(".", function(c) return ("%02x"):format(c:byte()) end))
end

---@class jrpc.mcp.HttpSessions
local Sessions = {}
Sessions.__index = Sessions

-- Write `line` to `res` as SSE, opening the stream first if need be.
local function to_stream(sess, res, line)
  if res.closed or res.ended then return false end
  if not res.started and not res:stream(200, sse_headers(sess.id)) then return false end
  return res:event(line)
end

-- Write `line` on the SSE stream of `post`, opening it first if need be;
-- false when it cannot go there. With resumption the stream (not the
-- response) takes it: it outlives the POST's connection.
local function to_post(sess, post, line)
  if post.stream then
    -- (kept, or dropped with the stream: never on another stream)
    sess.replay:write(post.stream, line)
    return true
  end
  local res = post.res
  if not sess.replay or res.started then return to_stream(sess, res, line) end
  if res.closed or not res:stream(200, sse_headers(sess.id)) then return false end
  post.stream = sess.replay:open(res)
  return sess.replay:write(post.stream, line)
end

-- Write `line` on the standalone GET stream, if there is one.
local function to_standalone(sess, line)
  if sess.standalone_stream then return sess.replay:write(sess.standalone_stream, line) end
  if sess.standalone then return to_stream(sess, sess.standalone, line) end
  return false
end

-- The request key the next `method` message belongs to: the first route
-- queued for that method (those before it never got written: dropped).
local function take_route(sess, method)
  local q = sess.routes
  for i = q.first, q.last do
    if q[i].method == method then
      local key = q[i].key
      for j = q.first, i do q[j] = nil end
      q.first = i + 1
      return key
    end
  end
  return false
end

-- The peer's `send`: route each outgoing line (see the header comment).
local function router(sess)
  local function deliver(line)
    -- told by its top-level members, not decoded: a reply may be large
    local kind, id, method = core.peek(line)
    if kind == nil then return end
    if kind == "result" or kind == "error" then
      -- posts are keyed by the exact id text their replies carry
      local post = id and sess.posts[id]
      if not post then return end
      sess.posts[id] = nil
      local res = post.res
      if post.stream then
        sess.replay:write(post.stream, line)
        sess.replay:finish(post.stream)
      elseif res.streaming then
        res:event(line)
        res:finish()
      elseif not res.closed then
        res:send(200, json_headers(sess.id), line)
      end
      local waiter = post.waiter
      post.waiter = nil
      if waiter then co.resume(waiter) end
      -- a POST whose client left waited for this answer: it may rest now
      if post.detached then sess.sessions:rest(sess) end
      return
    end
    local post = sess.posts[take_route(sess, method or core.decode(line).method)]
    if post and to_post(sess, post, line) then return end
    to_standalone(sess, line)
  end
  return function(bytes)
    for line in bytes:gmatch("[^\n]+") do deliver(line) end
  end
end

-- A new session with its own peer.
function Sessions:open()
  -- the prefix lets a balancer send the session's requests back to the
  -- worker that holds it (examples/deploy/nginx.conf maps on it)
  local sess = { id = self.id_prefix .. hex(core.random_bytes(16)), posts = {}, routes = { first = 1, last = 0 },
    sessions = self, replay = self.replay_cfg and replay_mod.new(self.replay_cfg) }
  local peer_opts = { profile = "mcp", role = "server", send = router(sess) }
  for k, v in pairs(self.opts.peer or {}) do peer_opts[k] = v end
  sess.peer = self.srv:attach(peer_mod.new(peer_opts), {
    route = function(id_json, method)
      local q = sess.routes
      if q.last - q.first >= 255 then  -- bounded: unwritten routes age out
        q[q.first] = nil
        q.first = q.first + 1
      end
      q.last = q.last + 1
      q[q.last] = { key = id_json, method = method }
    end,
  })
  sess.link = peer_mod.link(sess.peer)
  self.by_id[sess.id] = sess
  self.count = self.count + 1
  self:find(sess.id)
  return sess
end

-- The session `sid`, marked as just used (so not idle); nil when unknown.
function Sessions:find(sid)
  local sess = self.by_id[sid]
  if sess then
    self.uses = self.uses + 1
    sess.used = self.uses
    timers.cancel(self.uv, sess.idle_timer)
    sess.idle_timer = nil
  end
  return sess
end

-- A session is idle while none of its POSTs is in flight and no GET stream
-- is open. Idle for `session_idle_timeout` seconds it ends: clients that
-- vanish without DELETE free their sessions, and a late one gets 404 and
-- re-initializes, as the spec has it. Called when something of `sess`
-- ended; the timer is unref'd, so an idle session keeps no loop alive.
function Sessions:rest(sess)
  if not self.idle_timeout or self.by_id[sess.id] ~= sess or sess.idle_timer then return end
  if next(sess.posts) ~= nil or sess.standalone ~= nil then return end
  if sess.replay and sess.replay:held() then return end
  sess.idle_timer = timers.after(self.uv, self.idle_timeout, function()
    sess.idle_timer = nil
    self:close(sess)
  end, "mcp session idle")
  sess.idle_timer:unref()
end

-- The session used longest ago: the one to drop when the table is full
-- (clients that vanish without DELETE must not lock new ones out).
function Sessions:least_recent()
  local oldest
  for _, sess in pairs(self.by_id) do
    if oldest == nil or sess.used < oldest.used then oldest = sess end
  end
  return oldest
end

-- End a session: its streams close, its peer too.
function Sessions:close(sess)
  if self.by_id[sess.id] ~= sess then return end
  self.by_id[sess.id] = nil
  self.count = self.count - 1
  timers.cancel(self.uv, sess.idle_timer)
  if sess.standalone then sess.standalone:finish() end
  if sess.replay then sess.replay:close() end
  sess.peer:close("session ended")
end

local function error_reply(res, sid, id, err)
  res:send(400, json_headers(sid), core.encode{ jsonrpc = "2.0", id = id == nil and core.null or id,
    error = { code = err.code, message = err.message, data = err.data } })
end

-- Dispatch a decoded POST body `msg` (raw `body`) on session `sess`.
local function dispatch(sess, msg, res)
  if msg.method == nil or msg.id == nil then
    -- a notification, or a response to one of our requests: accepted
    sess.link:deliver(msg)
    return res:send(202, { ["mcp-session-id"] = sess.id }, "")
  end
  local key = msg.id_json
  if sess.posts[key] then
    -- its answer could reach only one of the two POSTs: the first would hang
    return error_reply(res, sess.id, msg.id, errors.new(errors.codes.INVALID_REQUEST,
      ("Invalid Request: id %s is already in use by a request in flight in this session"):format(key)))
  end
  local post = { res = res }
  sess.posts[key] = post
  -- a disconnect is not a cancellation in this era: the answer is dropped,
  -- or kept for a resumption once the answer is an SSE stream
  res.on_close = function()
    if post.stream then sess.replay:detach(post.stream, res) end
    local waiter = post.waiter
    post.waiter = nil
    if waiter then co.resume(waiter) end
  end
  sess.link:deliver(msg)
  if sess.posts[key] == post and not res.closed then
    post.waiter = co.current()
    co.wait("mcp legacy http reply")
  end
  if sess.posts[key] == post then
    -- still unanswered: a resumable stream waits for its answer (the
    -- router ends it), else the answer has nowhere to go
    if post.stream then post.detached = true else sess.posts[key] = nil end
  end
  if res.streaming and not post.stream then res:finish() end
end

--- True when this POST belongs to the legacy era: it names a session, or
--- it is an `initialize` without modern `_meta`.
---@param req table
---@param msg table
---@return boolean
function M.is_legacy(req, msg)
  if req.headers["mcp-session-id"] ~= nil then return true end
  local params = type(msg) == "table" and msg.method == "initialize" and msg.params
  if type(params) ~= "table" then return type(msg) == "table" and msg.method == "initialize" end
  return not (type(params._meta) == "table" and params._meta["io.modelcontextprotocol/protocolVersion"] ~= nil)
end

-- The error for a session POST's `MCP-Protocol-Version` header, or nil.
-- Absent is fine: the spec then has the server rely on the version
-- initialize negotiated (or else assume 2025-03-26, which we serve too).
-- Present, it must be a legacy version we serve (400 otherwise, as the spec
-- says); the spec asks the client for the negotiated one only as a SHOULD.
-- -32600, not -32602 (the params are fine) nor -32022 (a 2026-07-28 code,
-- whose `supported` lists modern versions).
local function version_error(header)
  if header == nil then return nil end
  for _, v in ipairs(protocol.LEGACY_VERSIONS) do
    if header == v then return nil end
  end
  return errors.new(errors.codes.INVALID_REQUEST,
    ("Invalid Request: unsupported MCP-Protocol-Version %q in a session (supported: %s)")
      :format(header, table.concat(protocol.LEGACY_VERSIONS, ", ")),
    { supported = protocol.LEGACY_VERSIONS, requested = header })
end

--- A legacy POST (already decoded to `msg`).
---@param req table
---@param res table
---@param msg table
function Sessions:post(req, res, msg)
  local sid = req.headers["mcp-session-id"]
  local sess
  if sid == nil then
    if msg.method ~= "initialize" then return plain(res, 400, "missing MCP-Session-Id") end
    if self.count >= self.max then self:close(self:least_recent()) end
    sess = self:open()
  else
    sess = self:find(sid)
    if not sess then return plain(res, 404, "unknown session") end
    local err = version_error(req.headers["mcp-protocol-version"])
    if err then
      error_reply(res, sid, msg.id, err)
      return self:rest(sess)
    end
  end
  dispatch(sess, msg, res)
  self:rest(sess)
end

--- GET (a standalone SSE stream) and DELETE (end the session).
---@param req table
---@param res table
function Sessions:other(req, res)
  local sid = req.headers["mcp-session-id"]
  if sid == nil then
    return res:send(405, { ["content-type"] = "text/plain", allow = "POST" }, "method not allowed\n")
  end
  local sess = self:find(sid)
  if not sess then return plain(res, 404, "unknown session") end
  if req.method == "DELETE" then
    self:close(sess)
    return res:send(204, {}, "")
  end
  if req.method ~= "GET" then
    res:send(405, { ["content-type"] = "text/plain", allow = "GET, POST, DELETE" }, "method not allowed\n")
    return self:rest(sess)
  end
  local last_id = req.headers["last-event-id"]
  if sess.replay and last_id ~= nil then return self:resume(sess, last_id, res) end
  if sess.replay then return self:listen(sess, res) end
  -- one standalone stream a session: a second replaces the first
  if sess.standalone then sess.standalone:finish() end
  sess.standalone = res
  res.on_close = function()
    if sess.standalone == res then
      sess.standalone = nil
      self:rest(sess)
    end
  end
  if not res:stream(200, sse_headers(sess.id)) then  -- refused: max_streams
    sess.standalone = nil
    self:rest(sess)
  end
end

-- A GET with resumption on: a new standalone stream, which replaces the
-- last (that one ends, though a resumption may still replay it).
function Sessions:listen(sess, res)
  if not res:stream(200, sse_headers(sess.id)) then return self:rest(sess) end  -- refused: max_streams
  if sess.standalone_stream then sess.replay:finish(sess.standalone_stream) end
  local st = sess.replay:open(res)
  sess.standalone_stream = st
  res.on_close = function()
    sess.replay:detach(st, res)
    self:rest(sess)
  end
end

-- A GET with Last-Event-ID: the stream that id names goes on here, after
-- the events it missed; an id not known, or older than what is kept, is
-- 409 (replaying part of a stream would lose messages silently).
function Sessions:resume(sess, last_id, res)
  local st, why = sess.replay:find(last_id)
  if not st then
    plain(res, 409, "cannot resume: " .. why)
    return self:rest(sess)
  end
  if not res:stream(200, sse_headers(sess.id)) then return self:rest(sess) end
  res.on_close = function()
    sess.replay:detach(st, res)
    self:rest(sess)
  end
  sess.replay:resume(st, last_id, res)
end

M.DEFAULT_IDLE_TIMEOUT = 1800  -- seconds: half an hour without a POST or an open GET stream

-- `session_idle_timeout`: seconds (> 0), or false for sessions that never expire.
local function idle_timeout_of(opts)
  local t = opts.session_idle_timeout
  if t == nil then return M.DEFAULT_IDLE_TIMEOUT end
  if t == false then return nil end
  if type(t) ~= "number" or t ~= t or t <= 0 or t == math.huge then  -- NaN too
    error("serve_http: session_idle_timeout must be a positive number of seconds, or false", 5)
  end
  return t
end

--- The session table of one HTTP server for `srv` on the jrpc.uv loop
--- context `loop` (`opts.max_sessions`, default 64, past which the least
--- recently used session ends; `opts.session_idle_timeout`, seconds,
--- default 1800, or false; `opts.session_id_prefix`, visible ASCII put
--- before each minted id; `opts.peer`: more peer options).
---@param srv jrpc.mcp.Server
---@param opts table
---@param loop? table  without one, sessions never expire
---@return jrpc.mcp.HttpSessions
function M.new(srv, opts, loop)
  local idle = idle_timeout_of(opts)
  local prefix = opts.session_id_prefix or ""
  if type(prefix) ~= "string" or not prefix:match("^[\33-\126]*$") then
    error("serve_http: session_id_prefix must be a string of visible ASCII", 4)
  end
  return setmetatable({ srv = srv, opts = opts, by_id = {}, count = 0, uses = 0, id_prefix = prefix,
    replay_cfg = replay_mod.config(opts.sse_replay),
    max = opts.max_sessions or 64, uv = loop and loop.uv, idle_timeout = loop and idle }, Sessions)
end

return M
