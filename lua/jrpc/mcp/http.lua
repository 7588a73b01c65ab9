--- Streamable HTTP (2026-07-28) for an MCP server, on jrpc.uv.http: one
-- POST is one JSON-RPC message. The message gets its own peer (profile
-- mcp) whose `send` writes into that POST's response: the modern era is
-- stateless, so nothing is shared between POSTs but the server itself, and
-- a request's notifications can only ever reach its own stream.
--
-- The answer is JSON when the result comes first, or an SSE stream opened
-- by the first request-scoped notification (progress, log) and ended by
-- the result. A client that hangs up cancels the request.
--
-- A `subscriptions/listen` request is such a stream that lasts: its
-- acknowledgement opens it, change notifications follow, and SSE comment
-- lines (`: keep-alive`) every `listen_keep_alive` seconds keep it from
-- looking dead; the client closing it ends the subscription.
local core = require "jrpc.core"
local options = require "jrpc.options"
local peer_mod = require "jrpc.peer"
local errors = require "jrpc.errors"
local http = require "jrpc.uv.http"
local co = require "jrpc.uv.co"
local timers = require "jrpc.uv.timers"
local protocol = require "jrpc.mcp.protocol"
local headers_mod = require "jrpc.mcp.http_headers"
local sessions_mod = require "jrpc.mcp.http_session"
local server_mod = require "jrpc.mcp.server"

local M = {}

local codes = protocol.codes

-- What jrpc.uv.http's listen takes from `serve_http`'s options: the
-- address, its hooks and its limits (the handler is ours).
local LISTEN_OPTIONS = options.set({ "host", "port", "on_error", "on_shutdown" }, http.DEFAULTS)

--- The names `serve_http` takes: this module's, the session table's
--- (http_session.lua) and jrpc.uv.http's.
M.OPTIONS = options.set({ "path", "allowed_origins", "allowed_hosts", "listen_keep_alive" },
  sessions_mod.OPTIONS, LISTEN_OPTIONS)

-- HTTP status of a JSON-RPC error reply sent as JSON (the spec's table);
-- other errors are 200, as the spec leaves them unstated.
local STATUS_OF = {
  [codes.INVALID_PARAMS] = 400, [codes.HEADER_MISMATCH] = 400,
  [codes.MISSING_CLIENT_CAPABILITY] = 400, [codes.UNSUPPORTED_PROTOCOL_VERSION] = 400,
  [codes.METHOD_NOT_FOUND] = 404, [errors.codes.PARSE_ERROR] = 400,
  [errors.codes.INVALID_REQUEST] = 400,
}

-- Fresh header tables per response: jrpc.uv.http adds `connection` to them.
local function json_headers() return { ["content-type"] = "application/json" } end
local function sse_headers()
  return { ["content-type"] = "text/event-stream", ["cache-control"] = "no-cache", ["x-accel-buffering"] = "no" }
end

local function plain(res, status, text, extra)
  local h = { ["content-type"] = "text/plain" }
  for k, v in pairs(extra or {}) do h[k] = v end
  res:send(status, h, text .. "\n")
end

-- The id an answer before dispatch may repeat: one MCP allows (a string
-- or an integer), else null, as JSON-RPC answers an id it cannot read.
local function reply_id(id)
  if type(id) == "string" or (type(id) == "number" and id % 1 == 0) then return id end
  return core.null
end

-- A JSON-RPC error answered before dispatch (`id` may be anything: see reply_id).
local function error_reply(res, id, err)
  local body = core.encode{ jsonrpc = "2.0", id = reply_id(id),
    error = { code = err.code, message = err.message, data = err.data } }
  res:send(STATUS_OF[err.code] or 400, json_headers(), body)
end

-- {======================================================================
-- Origin and Host (DNS rebinding)
-- =======================================================================

-- The Host values a loopback listener answers to, with and without port.
local function loopback_hosts(port)
  local set = {}
  for _, h in ipairs{ "127.0.0.1", "localhost", "[::1]" } do
    set[h], set[h .. ":" .. port] = true, true
  end
  return set
end

-- Host names and origins compare case-insensitively (RFC 3986 3.1, 3.2.2):
-- sets of them hold lower case, and what is looked up is lowered first.
local function set_of(list)
  local set = {}
  for _, v in ipairs(list) do set[v:lower()] = true end
  return set
end

-- An Origin is allowed when listed, or (by default) when its host is one
-- the Host check allows: a page served by this very server.
local function origin_allowed(policy, origin)
  origin = origin:lower()
  if policy.origins then return policy.origins[origin] == true end
  local host = origin:match("^https?://([^/]+)$")
  return host ~= nil and policy.hosts[host] == true
end

-- }======================================================================

-- {======================================================================
-- Media types (RFC 9110 8.3, 12.5.1)
-- =======================================================================

-- The media type of a Content-Type value, lower-cased, without parameters.
local function media_type(value)
  local m = value and value:match("^%s*([^;%s]+)")
  return m and m:lower()
end

-- Does `accept` (an Accept value, nil when absent: anything) admit `mtype`
-- ("type/subtype")? Wildcards count; a range with q=0 refuses.
local function admits(accept, mtype)
  if accept == nil then return true end
  local major = mtype:match("^[^/]+")
  for range in accept:gmatch("[^,]+") do
    local r = range:match("^%s*([^;%s]+)")
    local q = range:match(";%s*[qQ]%s*=%s*([%d.]+)")
    if r and (q == nil or tonumber(q) ~= 0) then
      r = r:lower()
      if r == mtype or r == "*/*" or r == major .. "/*" then return true end
    end
  end
  return false
end

-- A POST carries one JSON message (415 otherwise, as the official SDKs
-- answer) and accepts both a JSON and an SSE answer (406 otherwise). No
-- Accept at all means any type.
local function media_refusal(req)
  if media_type(req.headers["content-type"]) ~= "application/json" then
    return 415, "unsupported media type: Content-Type must be application/json"
  end
  local accept = req.headers.accept
  if not (admits(accept, "application/json") and admits(accept, "text/event-stream")) then
    return 406, "not acceptable: Accept must allow application/json and text/event-stream"
  end
end

-- }======================================================================

-- {======================================================================
-- One POST
-- =======================================================================

-- The writer a POST's peer sends through: JSON for a lone result, else an
-- SSE stream; wakes the handler once the result is out.
local function writer(res, state)
  local function deliver(line)
    -- told by its top-level members, not decoded: a reply may be large
    local kind = core.peek(line)
    if kind == nil then return end
    if kind == "request" or kind == "notification" then
      -- a request of ours has no place on a request's stream: the modern
      -- era asks the client for input with input_required instead
      if kind == "request" or res.closed or res.ended then return end
      -- a stream refused (max_streams) was answered 503: the request is
      -- cancelled as if its client went away
      if not res.started and not res:stream(200, sse_headers()) then
        if res.on_close then res.on_close() end
        return
      end
      res:event(line)
      return
    end
    if state.done then return end
    state.done = true
    if res.streaming then
      res:event(line)
      res:finish()
    elseif not res.closed and not res.started then
      -- an error (small) is decoded for its code, which sets the status
      local err = kind == "error" and core.decode(line).error
      res:send(err and STATUS_OF[err.code] or 200, json_headers(), line)
    end
    local waiter = state.waiter
    state.waiter = nil
    if waiter then co.resume(waiter) end
  end
  return function(bytes)
    for line in bytes:gmatch("[^\n]+") do deliver(line) end
  end
end

-- The arguments the called tool mirrors in Mcp-Param-* headers; none for
-- another method or an unknown tool (tools/call itself answers that).
local function mirrored(srv, msg)
  local params = msg.method == "tools/call" and type(msg.params) == "table" and msg.params
  local tool = params and type(params.name) == "string" and srv.registry.tool_by_name[params.name]
  return tool and tool.mirrored or nil
end

-- Send `: keep-alive` on `res` every `seconds` once it streams, until it
-- ends; returns the function that stops it.
local function keep_alive(loop, res, seconds)
  local timer
  local function tick()
    timer = nil
    if res.closed or res.ended then return end
    if res.streaming then res:comment("keep-alive") end
    timer = timers.after(loop.uv, seconds, tick, "mcp keep-alive")
  end
  timer = timers.after(loop.uv, seconds, tick, "mcp keep-alive")
  return function() timers.cancel(loop.uv, timer) end
end

local DEFAULT_KEEP_ALIVE = 15  -- seconds between keep-alive comments on a listen stream

local function post(srv, loop, opts, more_peer_opts, sessions, req, res)
  local state = { done = false }
  local peer_opts = { profile = "mcp", role = "server", send = writer(res, state) }
  for k, v in pairs(more_peer_opts) do peer_opts[k] = v end
  local peer = peer_mod.new(peer_opts)
  local link = peer_mod.link(peer)
  -- decoded once, by the peer's codec: these checks read it, then the
  -- peer dispatches it
  local msg = link:decode(req.body or "")
  if msg.kind == "invalid" then return error_reply(res, msg.id, msg.error) end
  if sessions_mod.is_legacy(req, msg) then
    -- a 2025-11-25 session: its own routing (http_session.lua)
    return sessions:post(req, res, msg)
  end
  if msg.kind ~= "request" and msg.kind ~= "notification" then
    -- one request or notification a POST, never a response
    return error_reply(res, msg.id,
      errors.new(errors.codes.INVALID_REQUEST, "Invalid Request: expected one request or notification"))
  end
  local err = headers_mod.check(req.headers, msg, mirrored(srv, msg))
  if err then return error_reply(res, msg.id, err) end

  srv:attach(peer)
  if msg.id == nil then
    link:deliver(msg)
    if not res.started then res:send(202, {}, "") end
    return
  end
  res.on_close = function()
    -- the stream closing cancels the request (the handler's ctx sees it)
    local id = core.encode(msg.id)
    peer:receive('{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":'
      .. id .. ',"reason":"the HTTP client went away"}}\n')
    local waiter = state.waiter
    state.waiter = nil
    if waiter then co.resume(waiter) end
  end
  link:deliver(msg)
  local every = opts.listen_keep_alive == nil and DEFAULT_KEEP_ALIVE or opts.listen_keep_alive
  local stop = msg.method == "subscriptions/listen" and every and keep_alive(loop, res, every)
  -- (a response already ended here was refused: max_streams)
  if not state.done and not res.closed and not res.ended then
    state.waiter = co.current()
    co.wait("mcp http reply")
  end
  if stop then
    stop()
    -- a closed stream cancelled its listen: free it now, not at the next change
    srv.listeners:sweep()
  end
  -- a cancelled request answers nothing: end what was begun
  if res.streaming then res:finish() end
end

-- }======================================================================

--- Serve `srv` over Streamable HTTP on `loop` (see `Server:serve_http`).
---@param srv jrpc.mcp.Server
---@param loop table
---@param opts? table
---@return jrpc.uv.HttpServer|nil http_server
---@return jrpc.Error|nil err  code "listen": the address could not be bound
function M.serve(srv, loop, opts)
  opts = options.check("serve_http", opts, 3, M.OPTIONS)
  local peer_opts = options.check("serve_http: peer", opts.peer, 3, server_mod.PEER_OPTIONS)
  local every = opts.listen_keep_alive
  if every ~= nil and every ~= false and (type(every) ~= "number" or every <= 0) then
    error("serve_http: listen_keep_alive must be a positive number of seconds, or false", 3)
  end
  local path = opts.path or "/mcp"
  local policy = { origins = opts.allowed_origins and set_of(opts.allowed_origins) }
  local sessions = sessions_mod.new(srv, opts, loop)
  local listen = options.pick(opts, LISTEN_OPTIONS)
  listen.host = opts.host or "127.0.0.1"
  listen.port = opts.port or 0
  -- a worker told to stop ends its listen streams with their result at
  -- once: the client listens again, on another worker behind a balancer
  local on_shutdown = opts.on_shutdown
  listen.on_shutdown = function()
    srv:end_subscriptions()
    if on_shutdown then on_shutdown() end
  end
  listen.handler = function(req, res)
    -- an absolute-form target's authority stands for Host (RFC 9112 3.2.2)
    local host, origin = req.authority or req.headers.host, req.headers.origin
    if origin ~= nil and not origin_allowed(policy, origin) then
      return plain(res, 403, "forbidden origin")
    end
    if host == nil or not policy.hosts[host:lower()] then return plain(res, 421, "misdirected request") end
    if req.path ~= path then return plain(res, 404, "not found") end
    if req.method ~= "POST" then
      -- GET and DELETE belong to legacy sessions (405 without one)
      return sessions:other(req, res)
    end
    local status, why = media_refusal(req)
    if status then return plain(res, status, why) end
    return post(srv, loop, opts, peer_opts, sessions, req, res)
  end
  local server, err = http.listen(loop, listen)
  -- one shape for the MCP server's errors: a jrpc.Error, code "listen"
  if not server then
    return nil, getmetatable(err) == errors.metatable and err or errors.new("listen", tostring(err))
  end
  policy.hosts = opts.allowed_hosts and set_of(opts.allowed_hosts) or loopback_hosts(server.port)
  return server
end

return M
