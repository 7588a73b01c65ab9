--- The MCP client's Streamable HTTP transport, on jrpc.uv.http_client
-- (http:// and https://, certificates checked by default). It fills the
-- seam client_stdio.lua documents: each message is its own POST, answered
-- with JSON or an SSE stream that may carry the request's notifications
-- (progress, logs: to the sink) and, from a legacy server, requests of its
-- own (answered with a POST of ours). Cancelling closes the response
-- stream, which is the cancellation in 2026-07-28 (legacy servers also get
-- notifications/cancelled: a disconnect is no cancellation there).
--
-- Headers (the rules are http_headers.lua's, shared with the server):
-- MCP-Protocol-Version from the body's `_meta` (legacy: the negotiated
-- version), Mcp-Method, Mcp-Name, the Mcp-Param-{Name} headers of the
-- arguments a tool marks with `x-mcp-header` (learnt from tools/list,
-- which drops tools with invalid marks, as HTTP clients must), Accept,
-- and the user's own (Authorization, say).
--
-- This module owns the POSTs and what their answers carry; the legacy
-- session (id, GET stream, resumption, 404, DELETE) is
-- client_http_session.lua's.
--
-- At most once: a request (tools/call with effects, say) is POSTed again
-- only when the server provably did not act on it. http_client re-sends a
-- POST only if none of its bytes left (RFC 9110 §9.2.2); one that was sent
-- and whose connection then closed before any answer settles with an
-- "http" error whose message starts with http_client.OUTCOME_UNKNOWN and
-- whose `outcome_unknown` is true. The two re-POSTs here follow a refusal
-- that says the request was not processed: a 404 for the session (the
-- server no longer knows it: MCP's Streamable HTTP has it answer a
-- request with an unknown session id 404, not process it), and -32020 for
-- a tools/call whose Mcp-Param headers were missing (the server checks
-- them before it runs the tool). A resumption is a GET with
-- Last-Event-ID: it replays the stream, it does not send the request.
local core = require "jrpc.core"
local errors = require "jrpc.errors"
local http_client = require "jrpc.uv.http_client"
local timers = require "jrpc.uv.timers"
local workers = require "jrpc.workers"
local http_headers = require "jrpc.mcp.http_headers"
local sessions = require "jrpc.mcp.client_http_session"

local M = {}

-- Seconds an exchange may wait for its head. A call's own timeout (the
-- client's) closes it sooner; this bounds what no call times: notifications,
-- answers to the server, the GET stream's head, DELETE.
M.INTERNAL_TIMEOUT = 30
M.HEAD_TIMEOUT = 24 * 3600

-- The codes only a 2026-07-28 server answers: such an error on the probe
-- means the server is modern, so there is no falling back to initialize.
local MODERN_CODES = { [-32020] = true, [-32021] = true, [-32022] = true }

---@class jrpc.mcp.HttpTransport
local Transport = {}
Transport.__index = Transport

-- {======================================================================
-- Headers and errors
-- =======================================================================

-- Set header `name`, replacing any spelling of it (names are case-insensitive).
local function set(h, name, value)
  local lower = name:lower()
  for k in pairs(h) do
    if k:lower() == lower then h[k] = nil end
  end
  h[name] = value
end

function Transport:_headers(msg)
  local h = { ["Content-Type"] = "application/json", Accept = "application/json, text/event-stream" }
  local tool = msg.method == "tools/call" and type(msg.params) == "table" and msg.params.name
  for k, v in pairs(http_headers.for_message(msg, tool and self.mirrored[tool])) do h[k] = v end
  self.session:add_headers(h, set)
  for k, v in pairs(self.user_headers) do set(h, k, v) end
  return h
end

-- The error for a response that is not 2xx: its JSON-RPC error when the
-- body is one, else the status and the body's first line. `http_status`
-- says which (the probe's fallback looks at it).
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
  e.http_status = res.status
  return e
end

-- }======================================================================

-- {======================================================================
-- One HTTP exchange, and what its answer carries
-- =======================================================================

--- Send one HTTP request (`req`: method, headers, body?, timeout?,
--- on_head?(res)) to the endpoint; each JSON-RPC message of the
--- answer (a JSON body, or each SSE event) goes to `deliver`, then
--- `on_end(res, err, st)` once (`st`: `status`, `sse`, `body` when not
--- SSE, `last_id` and `retry` of the SSE stream). Returns the request
--- handle (`close()` ends it at any stage).
function Transport:_exchange(req, on_end)
  local st, chunks, handle = {}, {}, nil
  self.http:request{ url = self.url, method = req.method, headers = req.headers, body = req.body,
    timeout = req.timeout or M.HEAD_TIMEOUT, ca_file = self.ca_file, verify = self.verify,
    on_start = function(h) handle = h end,
    on_headers = function(res)
      st.status = res.status
      st.sse = res.status < 300 and (res.headers["content-type"] or ""):find("text/event-stream", 1, true) ~= nil
      if st.sse then st.parser = http_client.sse_parser() end
      if req.on_head then req.on_head(res) end
    end,
    on_chunk = function(bytes)
      if not st.sse then chunks[#chunks + 1] = bytes; return end
      for _, ev in ipairs(st.parser:feed(bytes)) do
        st.retry = ev.retry or st.retry
        if ev.data:find("%S") then self:_deliver(core.decode(ev.data)) end
      end
    end,
    on_done = function(res, err)
      st.body = table.concat(chunks)
      st.last_id = st.parser and st.parser.last_id
      if res and not st.sse and res.status and res.status < 300 and st.body:find("%S") then
        self:_deliver(core.decode(st.body))
      end
      on_end(res, err, st)
    end }
  return handle
end

-- tools/list over HTTP: remember each tool's mirrored arguments, and drop
-- the tools whose marks are invalid.
local function learn_tools(self, result)
  if type(result) ~= "table" or type(result.tools) ~= "table" then return end
  local kept = {}
  for _, tool in ipairs(result.tools) do
    local mirrored = type(tool.inputSchema) == "table" and http_headers.mirrored_arguments(tool.inputSchema)
      or (tool.inputSchema == nil and {})
    if mirrored and type(tool.name) == "string" then
      self.mirrored[tool.name] = mirrored
      kept[#kept + 1] = tool
    end
  end
  result.tools = kept
end

local function settle(self, p, err, result)
  if self.pending[p.id] ~= p then return end
  self.pending[p.id] = nil
  p.callback(err, result)
end

-- A legacy server's request (sampling, elicitation, roots, ping): the
-- sink's handler runs in a coroutine of its own (it may ask the user and
-- wait), and its answer is POSTed back.
local function answer(self, msg)
  local fn = self.sink.methods[msg.method]
  local job = coroutine.create(function()
    local reply = { jsonrpc = "2.0", id = msg.id }
    local ok, result = true, nil
    if fn then ok, result = pcall(fn, msg.params) end
    if not fn then
      reply.error = { code = errors.codes.METHOD_NOT_FOUND, message = "Method not found" }
    elseif ok then
      reply.result = result
    elseif errors.is_wire_error(result) then
      reply.error = { code = result.code, message = result.message, data = result.data }
    else
      reply.error = { code = errors.codes.INTERNAL_ERROR, message = tostring(result) }
    end
    self:_post_message(reply)
  end)
  workers.wake(job, self.log)
end

--- A message the server sent on any stream: a response settles its
--- request (a late one, for a request cancelled, is dropped), a
--- notification goes to the client, a request is answered.
function Transport:_deliver(msg)
  if type(msg) ~= "table" then return end
  if msg.method == nil then
    local p = self.pending[msg.id]
    if not p then return end
    if type(msg.error) == "table" then
      local w = msg.error
      return settle(self, p, errors.new(errors.is_wire_error(w) and w.code or "invalid_error",
        tostring(w.message), w.data))
    end
    if p.method == "tools/list" then learn_tools(self, msg.result) end
    if p.method == "initialize" then self.session:initialized(msg.result) end
    return settle(self, p, nil, msg.result)
  end
  local params = msg.params
  if msg.id == nil then
    return self.sink.notification(msg.method, params, type(params) == "table" and params._meta or nil)
  end
  answer(self, msg)
end

-- }======================================================================

-- {======================================================================
-- Requests, notifications, answers
-- =======================================================================

-- Run `start` now, or once the notification in flight has been accepted:
-- separate connections would otherwise reorder what we sent in order
-- (notifications/initialized before the next request, say).
local function in_order(self, start)
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

-- A tools/call refused with -32020 for a tool whose marks we never saw (no
-- tools/list went through us yet): list the tools, every page, then send
-- it once more with its Mcp-Param-* headers. True when taken. Sending it
-- again is safe: -32020 is the server's refusal of the headers, given
-- before the tool runs.
local MAX_LEARN_PAGES = 20

local function relearn(self, p, err)
  local params = p.msg.params
  local name = type(params) == "table" and params.name
  if err.code ~= -32020 or p.relearned or type(name) ~= "string" or self.mirrored[name] ~= nil then
    return false
  end
  p.relearned = true
  local meta
  if type(params._meta) == "table" then
    meta = {}
    for k, v in pairs(params._meta) do if k ~= "progressToken" then meta[k] = v end end
  end
  local pages = 0
  local function page(cursor)
    pages = pages + 1
    self:request("tools/list", { cursor = cursor, _meta = meta }, function(lerr, result)
      if self.pending[p.id] ~= p then return end
      if lerr or type(result) ~= "table" then return settle(self, p, err) end
      if type(result.nextCursor) == "string" and pages < MAX_LEARN_PAGES then return page(result.nextCursor) end
      if self.mirrored[name] == nil then return settle(self, p, err) end
      self:_send(p)
    end)
  end
  page(nil)
  return true
end

--- Run `start` in order with the notifications (see `in_order`).
function Transport:_queue(start) in_order(self, start) end

--- The answer to request `p`'s POST (or its resumption) ended.
function Transport:_ended(p, res, err, st)
  if self.pending[p.id] ~= p then return end  -- settled: by its response, a cancel, the close
  if err then
    local e = errors.new("http", err)
    local unknown = http_client.OUTCOME_UNKNOWN
    if err:sub(1, #unknown) == unknown then e.outcome_unknown = true end  -- it was sent; not again
    return settle(self, p, e)
  end
  if res.closed or not res.status then return end
  if res.status == 404 and self.session:expired(p) then return end
  if res.status >= 300 then
    local e = M.status_error(res, st.body)
    if p.method == "tools/call" and relearn(self, p, e) then return end
    return settle(self, p, e)
  end
  if st.sse and self.session:resume(p, st) then return end
  settle(self, p, errors.new("http", ("HTTP %d: the response ended without an answer to %s (id %s)")
    :format(res.status, p.method, tostring(p.id))))
end

--- POST request `p`; again only after a refusal that proves the server
--- did not process it (a 404 for its session, see Session:expired; -32020,
--- see relearn), never after a connection lost.
function Transport:_send(p)
  if self._closed or self.pending[p.id] ~= p then return end
  local on_head = p.method == "initialize" and function(res) self.session:saw_head(res) end or nil
  p.handle = self:_exchange({ method = "POST", headers = self:_headers(p.msg), body = core.encode(p.msg),
    on_head = on_head }, function(res, err, st) self:_ended(p, res, err, st) end)
end

--- POST a message nobody waits for (a notification, an answer); `done`
--- when it was accepted or refused.
function Transport:_post_message(msg, done)
  if self._closed then return done and done() end
  self:_exchange({ method = "POST", headers = self:_headers(msg), body = core.encode(msg),
    timeout = M.INTERNAL_TIMEOUT }, function(res, err, st)
    if err or (res.status or 0) >= 300 then
      self.log(("%s: %s"):format(msg.method or "response", err or M.status_error(res, st.body).message))
    end
    if done then done() end
  end)
end

function Transport:request(method, params, callback)
  local id = self.next_id
  self.next_id = id + 1
  local p = { id = id, method = method, callback = callback,
    msg = { jsonrpc = "2.0", id = id, method = method, params = params } }
  self.pending[id] = p
  if method == "initialize" then self.session:initializing(params) end
  in_order(self, function() self:_send(p) end)
  return id
end

function Transport:notify(method, params)
  in_order(self, function()
    self.held = self.held or {}
    self:_post_message({ jsonrpc = "2.0", method = method, params = params }, function()
      if method ~= "notifications/initialized" then return release(self) end
      self.session:open_stream(function() release(self) end)
    end)
  end)
  return true
end

--- Settle request `id` at once ("cancelled") and close its stream; a
--- legacy session also gets notifications/cancelled.
function Transport:cancel(id, reason)
  local p = self.pending[id]
  if not p then return false end
  self.pending[id] = nil
  if p.handle then p.handle:close() end
  if self.session:legacy() and p.method ~= "initialize" then
    self:notify("notifications/cancelled", { requestId = id, reason = reason })
  end
  p.callback(errors.new("cancelled", reason or "request cancelled"))
  return true
end

-- }======================================================================

function Transport:after(seconds, fn)
  return timers.after(self.loop.uv, seconds, function()
    self.loop.events = self.loop.events + 1
    fn()
  end, "mcp http client timer")
end

function Transport:cancel_timer(timer) timers.cancel(self.loop.uv, timer) end
function Transport:now() return self.loop.uv.hrtime() / 1e9 end
function Transport.stderr_text() return "" end

--- The era probe's fallback, as the spec says for HTTP: a 400 (or a 404 or
--- 405, which legacy servers answer too) whose body is no modern error.
---@param err jrpc.Error
---@return boolean
function Transport.probe_fallback(_, err)
  local status = err.http_status
  return (status == 400 or status == 404 or status == 405) and not MODERN_CODES[err.code]
end

--- Close: requests in flight end ("closed"), a legacy session is ended
--- with DELETE (waited for in a coroutine), then every connection closes.
function Transport:close()
  if self._closed then return end
  self._closed = true
  local open = {}
  for _, p in pairs(self.pending) do open[#open + 1] = p end
  self.pending = {}
  for _, p in ipairs(open) do
    if p.handle then p.handle:close() end
    p.callback(errors.new("closed", "the client was closed"))
  end
  local me, waiting, done = workers.current(), false, false
  self.session:close(function()
    self.http:close()
    done = true
    if waiting then workers.wake(me, self.log) end
  end)
  if me and not done then
    waiting = true
    workers.wait()
  end
end

function Transport:closed() return self._closed == true end

local function check(opts)
  local u, err = http_client.parse_url(opts.url)
  if not u then error("jrpc.mcp.client: option url: " .. err, 4) end
  if opts.headers ~= nil and type(opts.headers) ~= "table" then
    error("jrpc.mcp.client: option headers must be a table of name = value", 4)
  end
  for k, v in pairs(opts.headers or {}) do
    if type(k) ~= "string" or type(v) ~= "string" or (k .. v):find("[\r\n%z]") then
      error("jrpc.mcp.client: header " .. tostring(k) .. " must be a string name and value without CR/LF", 4)
    end
  end
  return u
end

--- Open the transport for `opts.url` (http:// or https://): `headers`
--- (`{Name = value}`, sent on every request), `ca_file`, `verify` (as
--- jrpc.uv.http_client). Nothing is sent until the first request.
---@param loop jrpc.uv.Loop
---@param opts table
---@param sink table
---@return jrpc.mcp.HttpTransport
function M.open(loop, opts, sink)
  local u = check(opts)
  local t = setmetatable({ kind = "http", loop = loop, url = opts.url, sink = sink,
    origin = u.scheme .. "://" .. u.authority, http = http_client.new(loop),
    user_headers = opts.headers or {}, ca_file = opts.ca_file, verify = opts.verify,
    next_id = 1, pending = {}, mirrored = {},
    log = opts.on_error or function(msg) require("jrpc.log").report("jrpc.mcp.client: ", msg) end }, Transport)
  t.session = sessions.new(t)
  return t
end

return M
