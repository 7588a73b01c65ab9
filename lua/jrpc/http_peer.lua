--- A JSON-RPC peer over HTTP, the client's side (JSON-RPC over HTTP, and
-- MCP's Streamable HTTP), on jrpc.uv.http_client: every message the peer
-- writes is one POST, and every message of an answer -- a JSON body, or
-- each event of an SSE stream -- goes back to the peer.
--
--     local t = require("jrpc.http_peer").new(loop, { url = "http://127.0.0.1:8080/rpc" })
--     local result, err = t:request("sum", { 1, 2 })  -- in a coroutine
--
-- The peer (jrpc.peer) owns what JSON-RPC needs: ids, the pending table,
-- matching answers, cancellation, answering the server's requests (with
-- the peer's rules: a handler's plain error is -32603 "Internal error").
-- This module owns the exchanges: which POST carries which request; a
-- request's stream closed when the peer cancels it (closing it is the
-- cancellation: the peer's cancel notification is not sent unless a hook
-- asks); an exchange that ended without the answer turned into that
-- request's error; and the order of POSTs (what the peer writes after a
-- notification waits until the server accepted it: separate connections
-- would reorder it).
--
-- At most once: a request is POSTed once. Only a hook may POST it again
-- (`post`), after an answer that proves the server did not process it
-- (jrpc.mcp.client_http: a 404 for its session, -32020). A request whose
-- bytes left and whose connection then closed before any answer fails
-- with code "http", `failure = "outcome_unknown"` and `outcome_unknown =
-- true` (http_client sends a POST again only when none of its bytes left).
--
-- A layer above adds its rules through `hooks` (each optional):
--   headers(info) -> table         more headers for the POST of message `info`
--   head(r, res)                   the head of request `r`'s answer came
--   answered(r, msg)               `r`'s answer (peer:decode's message), before the peer gets it
--   ended(r, res, st, err) -> bool `r`'s exchange ended without its answer (`err`: the status
--                                  error, for a status other than 2xx): true when the hook took it
--   posted(info, res, err, st)     the POST of a notification or an answer ended
--   released(info, release)        a notification was accepted: `release()` sends what waits
--   cancel(r) -> bool              POST the peer's cancel notification for `r` too
--   closing(done)                  `close` ended the requests; `done()` closes the connections
-- `info` is a message: `{kind, method, id_json, text}` (a request's `r`
-- is one, with `id`).
--
-- Errors (jrpc.Error) a request settles with, besides the peer's:
--   "http"         the exchange failed; `failure`: "connect" (nothing sent;
--                  `cause` without the address), "timeout", "outcome_unknown",
--                  "closed", "failed", or "no_answer" (a 2xx answer that ended
--                  without ours; `http_status`, `http_reason`)
--   "http_status"  a status other than 2xx whose body is no JSON-RPC error
--                  (`http_status`, `http_reason`, `data = {status, body}`);
--                  with such a body, its error (numeric code) with those fields
local core = require "jrpc.core"
local errors = require "jrpc.errors"
local options = require "jrpc.options"
local peers = require "jrpc.peer"
local profiles = require "jrpc.profiles"
local workers = require "jrpc.workers"
local http_client = require "jrpc.uv.http_client"

local M = {}

-- Seconds a request's POST may wait for its head: the caller's own timeout
-- (a cancel) ends it sooner. Notifications and answers are timed by nobody
-- else: POST_TIMEOUT bounds them.
M.HEAD_TIMEOUT = 24 * 3600
M.POST_TIMEOUT = 30

-- The largest answer that is not SSE (read whole: it is one message).
M.MAX_BODY = http_client.DEFAULTS.max_body_bytes

--- The names of `new`'s own options (the peer's, peer.OPTIONS, are taken too).
M.OPTIONS = options.set{ "url", "headers", "ca_file", "verify", "head_timeout", "hooks", "on_message",
  "answers", "http" }

local HOOKS = options.set{ "headers", "head", "answered", "ended", "posted", "released", "cancel", "closing" }

---@class jrpc.HttpPeer
---@field peer jrpc.Peer
local HttpPeer = {}
HttpPeer.__index = HttpPeer

-- {======================================================================
-- Errors
-- =======================================================================

--- The error of an answer whose status is not 2xx: its JSON-RPC error when
--- the body is one, else code "http_status" with the status and the body's
--- first line. Both carry `http_status` and `http_reason`.
---@param res table  http_client's response
---@param body? string
---@return jrpc.Error
function M.status_error(res, body)
  local msg = core.decode(body or "")
  local e
  if type(msg) == "table" and errors.is_wire_error(msg.error) then
    local w = msg.error
    e = errors.new(w.code, type(w.message) == "string" and w.message or "", w.data)
  else
    local line = (body or ""):match("^[^\r\n]*"):sub(1, 200)
    e = errors.new("http_status", ("HTTP %d %s%s"):format(res.status, res.reason or "",
      line ~= "" and (": " .. line) or ""), { status = res.status, body = body })
  end
  e.http_status, e.http_reason = res.status, res.reason
  return e
end

--- The error of an exchange that failed (`err`: http_client's text; `st`:
--- the exchange's state, see `exchange`): code "http" with its `failure`.
---@param err string
---@param st table
---@return jrpc.Error
function M.exchange_error(err, st)
  local e = errors.new("http", err)
  e.failure, e.cause = st.kind or "failed", st.cause
  if st.kind == "outcome_unknown" then e.outcome_unknown = true end  -- it was sent; not again
  return e
end

local function no_answer(r, res)
  local e = errors.new("http", ("HTTP %d: the response ended without an answer to %s (id %s)")
    :format(res.status, tostring(r.method), tostring(r.id_json)))
  e.failure, e.http_status, e.http_reason = "no_answer", res.status, res.reason
  return e
end

-- }======================================================================

-- {======================================================================
-- Headers
-- =======================================================================

-- Set header `name`, replacing any spelling of it (names are case-insensitive).
local function set(h, name, value)
  local lower = name:lower()
  for k in pairs(h) do
    if k:lower() == lower then h[k] = nil end
  end
  h[name] = value
end
M.set_header = set

--- The headers of the POST of message `info`: ours, the hook's, then the user's.
---@param info table
---@return table
function HttpPeer:headers(info)
  local h = { ["Content-Type"] = "application/json", Accept = "application/json, text/event-stream" }
  if self.hooks.headers then
    for k, v in pairs(self.hooks.headers(info)) do set(h, k, v) end
  end
  for k, v in pairs(self.user_headers) do set(h, k, v) end
  return h
end

-- }======================================================================

-- {======================================================================
-- Exchanges, and the messages their answers carry
-- =======================================================================

-- A response for one of our requests: the hook sees it first, and the
-- request's exchange is done.
-- The request waiting here under `id` (a string or an integer), which no
-- longer waits: nil when none does.
local function take_request(self, id)
  local t = type(id)
  if t ~= "string" and not (t == "number" and id % 1 == 0) then return nil end
  local key = core.rawid(id)
  local r = self.requests[key]
  if r then self.requests[key] = nil end
  return r
end

local function answered(self, msg)
  local r = take_request(self, msg.id)
  if not r then return end
  if self.hooks.answered then self.hooks.answered(r, msg) end
end

--- One message the server sent (a framed text: a body, an SSE event's
--- data): to the peer, decoded once.
---@param text string
function HttpPeer:receive(text)
  if self.on_message then self.on_message("<-", text) end
  local msg = self.link:decode(text)
  if msg.kind == "result" or msg.kind == "error" then answered(self, msg) end
  -- what the peer writes meanwhile is held until the read ends; a POST
  -- made here meanwhile (`post`) waits for the end too, to keep the order
  self.reading = self.reading + 1
  self.link:deliver(msg)
  self.reading = self.reading - 1
  local deferred = self.reading == 0 and self.deferred
  if not deferred then return end
  self.deferred = nil
  for _, start in ipairs(deferred) do start() end
end

--- Send one HTTP request (`req`: method, headers, body?, timeout?,
--- on_head?(res)) to the URL; each JSON-RPC message of the answer (a JSON
--- body, or each SSE event) goes to the peer, then `on_end(res, err, st)`
--- once (`st`: `status`, `sse`, `body` when not SSE, `last_id` and
--- `retry` of the SSE stream, `kind` and `cause` of a failure). Returns
--- the request handle (`close()` ends it at any stage).
---@param req table
---@param on_end fun(res: table|nil, err: string|nil, st: table)
---@return table handle
function HttpPeer:exchange(req, on_end)
  local st, chunks, size, handle = {}, {}, 0, nil
  self.http:request{ url = self.url, method = req.method, headers = req.headers, body = req.body,
    timeout = req.timeout or self.head_timeout, ca_file = self.ca_file, verify = self.verify,
    on_start = function(h) handle = h end,
    on_headers = function(res)
      st.status = res.status
      st.sse = res.status < 300 and (res.headers["content-type"] or ""):lower()
        :find("text/event-stream", 1, true) ~= nil
      if st.sse then st.parser = http_client.sse_parser() end
      if req.on_head then req.on_head(res) end
    end,
    on_chunk = function(bytes, stream)
      if not st.sse then
        size = size + #bytes
        if size > M.MAX_BODY then
          st.problem = "response body too large"
          return stream:close()
        end
        chunks[#chunks + 1] = bytes
        return
      end
      for _, ev in ipairs(st.parser:feed(bytes)) do
        if st.finished then return end  -- closed by what a message did
        st.retry = ev.retry or st.retry
        if ev.data:find("%S") then self:receive(ev.data) end
      end
    end,
    on_done = function(res, err, kind, cause)
      st.finished = true
      st.body, st.kind, st.cause = table.concat(chunks), kind, cause
      st.last_id = st.parser and st.parser.last_id
      if res and not res.closed and not st.sse and res.status and res.status < 300 and st.body:find("%S") then
        self:receive(st.body)
      end
      if st.problem then err, st.kind = st.problem, "failed" end
      on_end(res, err, st)
    end }
  return handle
end

--- True while request `r` waits for its answer here.
---@param r table
---@return boolean
function HttpPeer:waiting(r)
  return self.requests[r.id_json] == r
end

--- Settle request `r` with `err` (a jrpc.Error): the peer forgets it
--- (its cancel is not sent: the exchange is over) and the caller gets `err`.
---@param r table
---@param err jrpc.Error
function HttpPeer:fail(r, err)
  local key = r.id_json
  if self.requests[key] ~= r then return end
  self.requests[key] = nil
  if r.handle then r.handle:close() end
  self.link:fail(r.id, err)
end

--- Request `r`'s exchange (its POST, or a hook's resumption) ended.
---@param r table
---@param res table|nil
---@param err string|nil
---@param st table
function HttpPeer:ended(r, res, err, st)
  if self.requests[r.id_json] ~= r then return end  -- answered, cancelled, closed
  if err then return self:fail(r, M.exchange_error(err, st)) end
  if res.closed or not res.status then return end
  local serr = res.status >= 300 and M.status_error(res, st.body) or nil
  if self.hooks.ended and self.hooks.ended(r, res, st, serr) then return end
  self:fail(r, serr or no_answer(r, res))
end

-- }======================================================================

-- {======================================================================
-- What the peer writes: each message its POST, in order
-- =======================================================================

--- Run `start` now, or once the notification in flight was accepted.
---@param start fun()
function HttpPeer:queue(start)
  if self.held then self.held[#self.held + 1] = start else start() end
end

local function release(self)
  local held = self.held
  self.held = nil
  for i, start in ipairs(held or {}) do
    start()
    if self.held then  -- another notification: the rest waits for it
      for j = i + 1, #held do self.held[#self.held + 1] = held[j] end
      return
    end
  end
end

--- POST request `r` (in order); a hook calls it again only when the
--- server provably did not process it.
---@param r table
function HttpPeer:post(r)
  if self.reading > 0 then
    self.deferred = self.deferred or {}
    self.deferred[#self.deferred + 1] = function() self:post(r) end
    return
  end
  self:queue(function()
    if self._closed or self.requests[r.id_json] ~= r then return end
    if self.on_message then self.on_message("->", r.text) end
    local hook = self.hooks.head
    r.handle = self:exchange({ method = "POST", headers = self:headers(r), body = r.text,
      on_head = hook and function(res) hook(r, res) end },
      function(res, err, st) self:ended(r, res, err, st) end)
  end)
end

-- A notification or an answer: POSTed, and nobody waits for it. What comes
-- after a notification waits until it was accepted.
local function post_message(self, info)
  self:queue(function()
    if self._closed then return end
    local hold = info.kind == "notification"
    if hold then self.held = self.held or {} end
    if self.on_message then self.on_message("->", info.text) end
    self:exchange({ method = "POST", headers = self:headers(info), body = info.text, timeout = M.POST_TIMEOUT },
      function(res, err, st)
        local hooks = self.hooks
        if hooks.posted then
          hooks.posted(info, res, err, st)
        elseif err or (res.status or 0) >= 300 then
          self.link:log(("%s: %s"):format(info.method or "response", err or M.status_error(res, st.body).message))
        end
        if not hold then return end
        if hooks.released then return hooks.released(info, function() release(self) end) end
        release(self)
      end)
  end)
end

-- The peer gave a request up: its stream closes (the cancellation over
-- HTTP); its cancel notification is POSTed only when the hook asks.
local function cancelled(self, text)
  local msg = core.decode(text)
  local id = type(msg) == "table" and type(msg.params) == "table" and msg.params[self.profile.cancel_key]
  local r = take_request(self, id)
  if not r then return end
  if r.handle then r.handle:close() end
  if self.hooks.cancel and self.hooks.cancel(r) then
    post_message(self, { kind = "notification", method = self.profile.cancel_method, text = text })
  end
end

local function outgoing(self, text)
  local kind, id_json, method = core.peek(text)
  if kind == "request" and id_json then
    local r = { kind = kind, id_json = id_json, id = core.decode(id_json), method = method, text = text }
    self.requests[id_json] = r
    return self:post(r)
  end
  if kind == "notification" and method == self.profile.cancel_method then return cancelled(self, text) end
  if kind ~= "notification" and not self.answers then return end
  post_message(self, { kind = kind, method = method, id_json = id_json, text = text })
end

-- The peer's `send`: one message a line (ndjson), several after a read.
local function send(self, bytes)
  local pos, n = 1, #bytes
  while pos <= n do
    local stop = bytes:find("\n", pos, true) or n + 1
    if stop > pos then outgoing(self, bytes:sub(pos, stop - 1)) end
    pos = stop + 1
  end
end

-- }======================================================================

-- {======================================================================
-- The calls
-- =======================================================================

-- In a coroutine: `start(done)`, then wait for `done(err, result)`.
local function await(log, start)
  local co = workers.current() or error("jrpc.http_peer: outside a coroutine, pass a callback", 3)
  local result, err = workers.await(co, log, start)
  if err ~= nil then return nil, err end
  return result
end

--- Send a request: `callback(err, result)` once, and the id is returned;
--- without a callback, in a coroutine: waits, returns result or nil, err.
---@param method string
---@param params any
---@param callback? fun(err: jrpc.Error|nil, result: any)
function HttpPeer:request(method, params, callback)
  if callback == nil then
    return await(self.link:logger(), function(done) self:request(method, params, done) end)
  end
  return self.peer:request(method, params, {}, callback)
end

--- Send a notification (true, or nil and the peer's error).
function HttpPeer:notify(method, params)
  return self.peer:notify(method, params)
end

--- Cancel request `id`: it settles at once ("cancelled") and its stream closes.
---@return boolean  false when it was not in flight
function HttpPeer:cancel(id, reason)
  return self.peer:cancel(id, reason)
end

--- Close: requests in flight settle with code "closed" (`reason`), then
--- (after the `closing` hook, if any) every connection closes.
---@param reason? string
function HttpPeer:close(reason)
  if self._closed then return end
  self._closed = true
  for _, r in pairs(self.requests) do
    if r.handle then r.handle:close() end
  end
  self.requests = {}
  self.peer:close(reason or "the client was closed")
  local function done() self.http:close() end
  if self.hooks.closing then return self.hooks.closing(done) end
  done()
end

--- True once closed.
---@return boolean
function HttpPeer:closed()
  return self._closed
end

-- }======================================================================

local function check(opts)
  local u, err = http_client.parse_url(opts.url)
  if not u then error("jrpc.http_peer: option url: " .. err, 3) end
  if opts.headers ~= nil and type(opts.headers) ~= "table" then
    error("jrpc.http_peer: option headers must be a table of name = value", 3)
  end
  for k, v in pairs(opts.headers or {}) do
    if type(k) ~= "string" or type(v) ~= "string" or (k .. v):find("[\r\n%z]") then
      error("jrpc.http_peer: header " .. tostring(k) .. " must be a string name and value without CR/LF", 3)
    end
  end
  options.check("jrpc.http_peer: hooks", opts.hooks, 3, HOOKS)
  return u
end

--- A peer over HTTP to `opts.url` (http:// or https://). Options: the
--- peer's (jrpc.PeerOptions but `send`; `role` defaults to "client"),
--- `headers` (`{Name = value}` on every POST, replacing ours), `ca_file`,
--- `verify` (as jrpc.uv.http_client), `head_timeout` (seconds a request's
--- POST waits for its head), `hooks` (see above), `on_message(dir, text)`
--- (each message sent, "->", and received, "<-"), `answers` (false: the
--- peer's answers to the server's requests are dropped, not POSTed), and
--- `http` (a jrpc.uv.http_client client to share). Nothing is sent
--- until the first message.
---@param loop jrpc.uv.Loop
---@param opts table
---@return jrpc.HttpPeer
function M.new(loop, opts)
  options.check("jrpc.http_peer", opts, 2, M.OPTIONS, peers.OPTIONS)
  local u = check(opts)
  local self = setmetatable({ loop = loop, url = opts.url, origin = u.scheme .. "://" .. u.authority,
    http = opts.http or http_client.new(loop), user_headers = opts.headers or {}, ca_file = opts.ca_file,
    verify = opts.verify, head_timeout = opts.head_timeout or M.HEAD_TIMEOUT, hooks = opts.hooks or {},
    on_message = opts.on_message, answers = opts.answers ~= false, _closed = false,
    requests = {}, held = nil, reading = 0, deferred = nil,
    profile = profiles[opts.profile or "jsonrpc"] }, HttpPeer)
  local peer_opts = options.pick(opts, peers.OPTIONS)
  peer_opts.role = peer_opts.role or "client"
  peer_opts.framing = "ndjson"  -- `send` splits what it gets into lines
  peer_opts.send = function(bytes) send(self, bytes) end
  self.peer = peers.new(peer_opts)
  self.link = peers.link(self.peer)
  return self
end

return M
