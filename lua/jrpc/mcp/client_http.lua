--- The MCP client's Streamable HTTP transport: a jrpc peer over HTTP
-- (jrpc.http_peer; http:// and https://, certificates checked by
-- default), with MCP's rules added through its hooks. It fills the seam
-- client_stdio.lua documents. Each message is its own POST, answered with
-- JSON or an SSE stream that may carry the request's notifications
-- (progress, logs) and, from a legacy server, requests of its own (the
-- peer answers them, and the answer is POSTed). Cancelling closes the
-- response stream, which is the cancellation in 2026-07-28 (legacy
-- servers also get notifications/cancelled: a disconnect is no
-- cancellation there).
--
-- Headers (the rules are http_headers.lua's, shared with the server):
-- MCP-Protocol-Version from the body's `_meta` (legacy: the negotiated
-- version), Mcp-Method, Mcp-Name, the Mcp-Param-{Name} headers of the
-- arguments a tool marks with `x-mcp-header` (learnt from tools/list,
-- which drops tools with invalid marks, as HTTP clients must), Accept,
-- and the user's own (Authorization, say).
--
-- Authorization (option `auth`, see oauth.lua): a request answered 401, or
-- 403 insufficient_scope, waits for the OAuth flow and is POSTed again
-- with the token (at most MAX_AUTH_TRIES times: the server refused it
-- before acting on it); every exchange carries the token once there is one.
--
-- This module owns the MCP rules of the exchanges; the legacy session
-- (id, GET stream, resumption, 404, DELETE) is client_http_session.lua's.
--
-- At most once: a request (tools/call with effects, say) is POSTed again
-- only when the server provably did not act on it (see jrpc.http_peer):
-- after a 404 for the session (the server no longer knows it: MCP's
-- Streamable HTTP has it answer a request with an unknown session id 404,
-- not process it), and after -32020 for a tools/call whose Mcp-Param
-- headers were missing (the server checks them before it runs the tool).
-- A resumption is a GET with Last-Event-ID: it replays the stream, it
-- does not send the request.
local core = require "jrpc.core"
local options = require "jrpc.options"
local workers = require "jrpc.workers"
local http_peer = require "jrpc.http_peer"
local timers = require "jrpc.uv.timers"
local http_headers = require "jrpc.mcp.http_headers"
local sessions = require "jrpc.mcp.client_http_session"
local errors = require "jrpc.errors"

local M = {}

-- The codes only a 2026-07-28 server answers: such an error on the probe
-- means the server is modern, so there is no falling back to initialize.
local MODERN_CODES = { [-32020] = true, [-32021] = true, [-32022] = true }

-- The MCP wire member of a message's metadata.
local META = "_meta"

--- The names of `open`'s options (those of jrpc.mcp.client.connect it uses).
M.OPTIONS = options.set{ "url", "headers", "ca_file", "verify", "on_error", "on_debug", "max_message_bytes",
  "on_message", "auth" }

-- How many times one request is POSTed again after the flow ran for it.
M.MAX_AUTH_TRIES = 3

---@class jrpc.mcp.HttpTransport
local Transport = {}
Transport.__index = Transport

-- A message's decoded form, made once (headers, relearn).
local function decoded(info)
  local msg = info.msg
  if msg == nil then
    msg = core.decode(info.text) or {}
    info.msg = msg
  end
  return msg
end

-- {======================================================================
-- The hooks: MCP's rules on the exchanges
-- =======================================================================

local function headers(self, info)
  local h = {}
  if info.kind == "request" or info.kind == "notification" then
    local msg = decoded(info)
    local params = type(msg.params) == "table" and msg.params or nil
    local tool = msg.method == "tools/call" and params and params.name
    h = http_headers.for_message(msg, tool and self.mirrored[tool])
  end
  self.session:add_headers(h, http_peer.set_header)
  info.sent_auth = self:auth_headers(h)
  return h
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

local function answered(self, r, msg)
  if msg.kind ~= "result" then return end
  if r.method == "tools/list" then learn_tools(self, msg.result) end
  if r.method == "initialize" then self.session:initialized(msg.result) end
end

-- A tools/call refused with -32020 for a tool whose marks we never saw (no
-- tools/list went through us yet): list the tools, every page, then send
-- it once more with its Mcp-Param-* headers. True when taken. Sending it
-- again is safe: -32020 is the server's refusal of the headers, given
-- before the tool runs.
local MAX_LEARN_PAGES = 20

local function relearn(self, r, err)
  local params = decoded(r).params
  local name = type(params) == "table" and params.name
  if err.code ~= -32020 or r.relearned or type(name) ~= "string" or self.mirrored[name] ~= nil then
    return false
  end
  r.relearned = true
  local meta
  if type(params[META]) == "table" then
    meta = {}
    for k, v in pairs(params[META]) do if k ~= "progressToken" then meta[k] = v end end
  end
  local hp, pages = self.hp, 0
  local function page(cursor)
    pages = pages + 1
    hp:request("tools/list", { cursor = cursor, [META] = meta }, function(lerr, result)
      if not hp:waiting(r) then return end
      if lerr or type(result) ~= "table" then return hp:fail(r, err) end
      if type(result.nextCursor) == "string" and pages < MAX_LEARN_PAGES then return page(result.nextCursor) end
      if self.mirrored[name] == nil then return hp:fail(r, err) end
      hp:post(r)
    end)
  end
  page(nil)
  return true
end

-- A request's exchange ended without its answer: a 404 of the session, a
-- -32020 to learn from, or an SSE stream to resume.
local function authorize(self, r, res)
  local status = res.status
  if not self.auth or (status ~= 401 and status ~= 403) or (r.auth_tries or 0) >= M.MAX_AUTH_TRIES then
    return false
  end
  local hp = self.hp
  local now = self.auth:header()
  if status == 401 and now ~= nil and now ~= r.sent_auth then
    -- sent before the token it would get now (a flow ended meanwhile): once more with it
    r.auth_tries = (r.auth_tries or 0) + 1
    hp:post(r)
    return true
  end
  -- a new token refused at once: no second flow for it (a person may be asked each time)
  if status == 401 and r.authorized_401 then return false end
  if status == 401 then r.authorized_401 = true end
  local taken = self.auth:handle(status, res.headers["www-authenticate"], function(aerr)
    if not hp:waiting(r) then return end
    if not aerr then return hp:post(r) end
    local e = errors.new("auth", aerr)
    e.http_status, e.http_reason = status, res.reason
    hp:fail(r, e)
  end)
  if taken then r.auth_tries = (r.auth_tries or 0) + 1 end
  return taken
end

local function ended(self, r, res, st, err)
  if authorize(self, r, res) then return true end
  if res.status == 404 and self.session:expired(r) then return true end
  if err then return r.method == "tools/call" and relearn(self, r, err) end
  return st.sse == true and self.session:resume(r, st)
end

local function posted(self, info, res, err, st)
  if err or (res.status or 0) >= 300 then
    self.log(("%s: %s"):format(info.method or "response", err or http_peer.status_error(res, st.body).message))
  end
end

-- After notifications/initialized the legacy session's GET stream opens
-- before the next requests go (see Session:open_stream).
local function released(self, info, release)
  if info.method ~= "notifications/initialized" then return release() end
  self.session:open_stream(release)
end

local function hooks(self)
  return {
    headers = function(info) return headers(self, info) end,
    head = function(r, res) if r.method == "initialize" then self.session:saw_head(res) end end,
    answered = function(r, msg) return answered(self, r, msg) end,
    ended = function(r, res, st, err) return ended(self, r, res, st, err) end,
    posted = function(info, res, err, st) return posted(self, info, res, err, st) end,
    released = function(info, release) return released(self, info, release) end,
    cancel = function(r) return self.session:legacy() and r.method ~= "initialize" end,
    closing = function(done) self.session:close(function() done(); self.on_closed() end) end,
  }
end

-- }======================================================================

-- {======================================================================
-- The seam
-- =======================================================================

function Transport:request(method, params, callback)
  if method == "initialize" then self.session:initializing(params) end
  return self.hp:request(method, params, callback)
end

function Transport:notify(method, params)
  return self.hp:notify(method, params)
end

--- Settle request `id` at once ("cancelled") and close its stream; a
--- legacy session also gets notifications/cancelled.
function Transport:cancel(id, reason)
  return self.hp:cancel(id, reason)
end

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
  if self.hp:closed() then return end
  local me, waiting, done = workers.current(), false, false
  self.on_closed = function()
    done = true
    if waiting then workers.wake(me, self.log) end
  end
  self.hp:close("the client was closed")
  if me and not done then
    waiting = true
    workers.wait()
  end
end

function Transport:closed() return self.hp:closed() end

--- Add the Authorization header of the OAuth flow's token to `h`, if
--- any; returns its value.
function Transport:auth_headers(h)
  local v = self.auth and self.auth:header()
  if v then http_peer.set_header(h, "Authorization", v) end
  return v
end

--- One HTTP exchange of the transport (see jrpc.http_peer's `exchange`):
--- every request, GET and DELETE goes through it.
function Transport:exchange(req, on_end)
  return self.hp:exchange(req, on_end)
end

-- }======================================================================

--- Open the transport for `opts.url` (http:// or https://): `headers`
--- (`{Name = value}`, sent on every request), `ca_file`, `verify` (as
--- jrpc.uv.http_client), `on_message(dir, text)` (each message sent "->"
--- and received "<-", as on the wire), `on_error`, `on_debug`,
--- `max_message_bytes` (the peer's), `auth` (OAuth: see jrpc.mcp.oauth).
--- Nothing is sent until the first request.
---@param loop jrpc.uv.Loop
---@param opts table  connect's options (the others are the client's)
---@param sink table
---@return jrpc.mcp.HttpTransport
function M.open(loop, opts, sink)
  local t = setmetatable({ kind = "http", loop = loop, mirrored = {},
    log = opts.on_error or function(msg) require("jrpc.log").report("jrpc.mcp.client: ", msg) end }, Transport)
  local o = options.pick(opts, M.OPTIONS)
  o.profile, o.role, o.methods, o.hooks = "mcp", "client", sink.methods, hooks(t)
  o.auth = nil
  if opts.auth ~= nil then
    if type(opts.auth) ~= "table" then error("jrpc.mcp.client: option auth must be a table", 3) end
    t.auth = require("jrpc.mcp.oauth").new(loop, opts.url, opts.auth, { ca_file = opts.ca_file, verify = opts.verify })
  end
  local hp = http_peer.new(loop, o)
  t.hp, t.origin = hp, hp.origin
  t.session = sessions.new(t, hp, o.headers or {})
  return t
end

return M
