--- A stand-in Streamable HTTP transport for jrpc.mcp.client, through the
-- `curl` command (one curl process per POST, its output read as it comes):
-- enough for the conformance suite's mock servers on loopback, until
-- jrpc.uv.http_client (in the core's sans-I/O style, with TLS) fills the
-- same seam. It is an example, not part of the library.
--
-- It implements the seam of lua/jrpc/mcp/client_stdio.lua: request, cancel
-- (kills curl: closing the response stream is the cancellation on HTTP),
-- notify, after/cancel_timer/now, close. Per 2026-07-28 it sends
-- MCP-Protocol-Version (the body's `_meta` version), Mcp-Method, Mcp-Name
-- and the Mcp-Param-{Name} headers of `x-mcp-header` arguments (tools with
-- an invalid mark are dropped from tools/list: HTTP clients must); legacy:
-- the MCP-Session-Id from initialize and the negotiated version.
local jrpc = require "jrpc"
local timers = require "jrpc.uv.timers"
local handles = require "jrpc.uv.handles"
local co = require "jrpc.uv.co"
local protocol = require "jrpc.mcp.protocol"
local http_headers = require "jrpc.mcp.http_headers"

local M = {}

local Transport = {}
Transport.__index = Transport

local NAME_OF = { ["tools/call"] = "name", ["prompts/get"] = "name", ["resources/read"] = "uri" }

-- {======================================================================
-- Header values (SEP-2243): plain when safe, else the base64 sentinel
-- =======================================================================

local B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

local function base64(s)
  local out = {}
  for i = 1, #s, 3 do
    local a, b, c = s:byte(i, i + 2)
    local n = a * 65536 + (b or 0) * 256 + (c or 0)
    local chars = {}
    for k = 3, 0, -1 do
      local v = math.floor(n / 64 ^ k) % 64
      chars[#chars + 1] = B64:sub(v + 1, v + 1)
    end
    if c == nil then chars[4] = "=" end
    if b == nil then chars[3] = "=" end
    out[#out + 1] = table.concat(chars)
  end
  return table.concat(out)
end

local function header_value(v)
  if type(v) == "boolean" then return tostring(v) end
  if type(v) == "number" then
    return (v % 1 == 0 and v > -2^53 and v < 2^53) and ("%d"):format(v) or tostring(v)
  end
  local s = tostring(v)
  local unsafe = s:find("[%z\1-\31\127-\255]") or s:find("^[ \t]") or s:find("[ \t]$")
    or s:find("^=%?base64%?.*%?=$")
  if unsafe then return "=?base64?" .. base64(s) .. "?=" end
  return s
end

local function argument(args, path)
  local v = args
  for _, name in ipairs(path) do
    if type(v) ~= "table" then return nil end
    v = v[name]
  end
  if v == jrpc.null or type(v) == "table" then return nil end
  return v
end

-- }======================================================================

-- tools/list through HTTP: remember each tool's mirrored arguments, and
-- drop the tools whose marks are invalid.
local function learn_tools(self, result)
  if type(result) ~= "table" or type(result.tools) ~= "table" then return end
  local kept = {}
  for _, tool in ipairs(result.tools) do
    local mirrored = type(tool.inputSchema) == "table" and http_headers.mirrored_arguments(tool.inputSchema)
      or (tool.inputSchema == nil and {})
    if mirrored then
      self.mirrored[tool.name] = mirrored
      kept[#kept + 1] = tool
    end
  end
  result.tools = kept
end

-- "Name: value"; curl sends an empty value only when spelt "Name;"
local function header(name, value)
  if value == "" then return name .. ";" end
  return name .. ": " .. value
end

local function request_headers(self, msg)
  local params = type(msg.params) == "table" and msg.params or {}
  local meta = type(params._meta) == "table" and params._meta or {}
  local h = { "Content-Type: application/json", "Accept: application/json, text/event-stream", "Expect:" }
  local version = meta[protocol.keys.protocol_version] or self.version
  if version then h[#h + 1] = "MCP-Protocol-Version: " .. version end
  if self.session then h[#h + 1] = "Mcp-Session-Id: " .. self.session end
  if msg.method then h[#h + 1] = "Mcp-Method: " .. msg.method end
  local member = NAME_OF[msg.method]
  if member and params[member] ~= nil then h[#h + 1] = header("Mcp-Name", header_value(params[member])) end
  if msg.method == "tools/call" then
    for _, m in ipairs(self.mirrored[params.name] or {}) do
      local v = argument(params.arguments, m.path)
      if v ~= nil then h[#h + 1] = header("Mcp-Param-" .. m.name, header_value(v)) end
    end
  end
  for _, extra in ipairs(self.extra_headers) do h[#h + 1] = extra end
  return h
end

-- {======================================================================
-- One POST: a curl process
-- =======================================================================

local function parse_head(text)
  local status, headers = nil, {}
  for line in text:gmatch("[^\r\n]+") do
    local code = line:match("^HTTP/%S+ (%d+)")
    if code then status, headers = tonumber(code), {} end
    local name, value = line:match("^([^:]+):%s*(.-)%s*$")
    if name and not code then headers[name:lower()] = value end
  end
  return status, headers
end

-- A message the server sent us on a response: a response settles its
-- request, a notification goes to the client, a (legacy) request is
-- answered with a POST of its own.
local function deliver(self, msg)
  if type(msg) ~= "table" then return end
  if msg.method == nil then
    local pending = self.pending[msg.id]
    if not pending then return end
    self.pending[msg.id] = nil
    if msg.error then return pending.callback(jrpc.new_error(msg.error.code, msg.error.message, msg.error.data)) end
    if pending.method == "tools/list" then learn_tools(self, msg.result) end
    return pending.callback(nil, msg.result)
  end
  local params = msg.params
  local meta = type(params) == "table" and params._meta or nil
  if msg.id == nil then return self.sink.notification(msg.method, params, meta) end
  local fn = self.sink.methods[msg.method]
  coroutine.wrap(function()
    local ok, result = pcall(fn or error, params)
    local reply = { jsonrpc = "2.0", id = msg.id }
    if ok then reply.result = result
    else reply.error = type(result) == "table" and result or { code = -32603, message = tostring(result) } end
    self:_post(reply)
  end)()
end

local function on_line(self, post, line)
  local event_id, retry = line:match("^id: ?(.*)$"), line:match("^retry: ?(%d+)$")
  if event_id then post.last_event_id = event_id end
  if retry then self.retry_ms = tonumber(retry) end
  local data = line:match("^data: ?(.*)$") or (line:sub(1, 1) == "{" and line)
  if data and data ~= "" then deliver(self, jrpc.decode(data)) end
end

-- Bytes from curl: the head (with -i), then the body as it comes.
local function on_chunk(self, post, chunk)
  post.buf = post.buf .. chunk
  if not post.status then
    local head_end = post.buf:find("\r\n\r\n", 1, true)
    if not head_end then return end
    post.status, post.headers = parse_head(post.buf:sub(1, head_end))
    if post.status == 100 then post.status = nil end
    post.buf = post.buf:sub(head_end + 4)
    if not post.status then return on_chunk(self, post, "") end
    if post.headers["mcp-session-id"] then self.session = post.headers["mcp-session-id"] end
    post.sse = (post.headers["content-type"] or ""):find("text/event-stream", 1, true) ~= nil
  end
  if not post.sse then return end
  while true do
    local nl = post.buf:find("\n", 1, true)
    if not nl then return end
    local line = post.buf:sub(1, nl - 1):gsub("\r$", "")
    post.buf = post.buf:sub(nl + 1)
    on_line(self, post, line)
  end
end

local resume

-- curl exited: a JSON body is one message; a request still unanswered
-- fails, unless its (legacy) stream gave an event id to resume from.
local function on_done(self, post)
  if post.status and not post.sse and post.buf:find("%S") then deliver(self, jrpc.decode(post.buf)) end
  if post.on_done then post.on_done() end
  local pending = post.id ~= nil and self.pending[post.id]
  if not (pending and pending.post == post) then return end
  if post.last_event_id and self.session and not pending.resumed then return resume(self, pending, post) end
  self.pending[post.id] = nil
  pending.callback(jrpc.new_error("http", ("HTTP %s without a response"):format(tostring(post.status))))
end

function Transport:_post(msg, id)
  return self:_spawn("POST", msg, request_headers(self, msg), { id = id, buf = "" })
end

-- A GET stream (legacy): the session's standalone stream, or a resumption.
function Transport:_get(last_event_id, id)
  local h = { "Accept: text/event-stream", "Mcp-Session-Id: " .. self.session,
    "MCP-Protocol-Version: " .. tostring(self.version) }
  if last_event_id then h[#h + 1] = "Last-Event-ID: " .. last_event_id end
  return self:_spawn("GET", nil, h, { id = id, buf = "" })
end

-- SEP-1699: wait the server's `retry` (ms), then GET with Last-Event-ID.
resume = function(self, pending, post)
  pending.resumed = true
  timers.after(self.uv, (self.retry_ms or 1000) / 1000, function()
    if self.pending[post.id] ~= pending then return end
    pending.post = self:_get(post.last_event_id, post.id)
  end, "sse resume")
end

function Transport:_spawn(verb, msg, headers, post)
  local uv = self.uv
  local stdin, stdout = uv.new_pipe(false), uv.new_pipe(false)
  local args = { "-sS", "-N", "-i", "-X", verb }
  if msg then args[#args + 1] = "--data-binary"; args[#args + 1] = "@-" end
  for _, h in ipairs(headers) do args[#args + 1] = "-H"; args[#args + 1] = h end
  args[#args + 1] = self.url
  local log = self.log
  post.proc = uv.spawn("curl", { args = args, stdio = { stdin, stdout, 2 } }, co.guard(function()
    handles.close(uv, post.proc)
    post.exited = true
    self.streams[post] = nil
    if post.eof then on_done(self, post) end
  end, "curl exit", log))
  stdout:read_start(co.guard(function(err, chunk)
    if chunk then return on_chunk(self, post, chunk) end
    handles.close(uv, stdout)
    post.eof = true
    if post.exited or err then on_done(self, post) end
  end, "curl read", log))
  if msg then stdin:write(assert(jrpc.encode(msg))) end
  stdin:shutdown(function() handles.close(uv, stdin) end)
  self.streams[post] = true
  return post
end

-- }======================================================================

-- Run `start` now, or once the notifications in flight have been accepted:
-- separate curl processes would otherwise reorder what we sent in order
-- (notifications/initialized before the next request, say).
local function in_order(self, start)
  if self.held then self.held[#self.held + 1] = start else start() end
end

local function release(self)
  local held = self.held
  self.held = nil
  for _, start in ipairs(held or {}) do start() end
end

function Transport:request(method, params, callback)
  local id = self.next_id
  self.next_id = id + 1
  local pending = { callback = callback, method = method }
  self.pending[id] = pending
  in_order(self, function()
    if self.pending[id] == pending then
      pending.post = self:_post({ jsonrpc = "2.0", id = id, method = method, params = params }, id)
    end
  end)
  if method == "initialize" then
    local inner = callback
    self.pending[id].callback = function(err, result)
      if result then self.version = result.protocolVersion end
      inner(err, result)
    end
  end
  return id
end

function Transport:cancel(id, reason)
  local pending = self.pending[id]
  if not pending then return false end
  self.pending[id] = nil
  local post = pending.post
  if post and post.proc and not post.exited then post.proc:kill("sigterm") end
  pending.callback(jrpc.new_error("cancelled", reason or "request cancelled"))
  return true
end

function Transport:notify(method, params)
  in_order(self, function()
    local post = self:_post({ jsonrpc = "2.0", method = method, params = params })
    self.held = self.held or {}
    post.on_done = function()
      release(self)
      -- a legacy session's server requests may come on the standalone stream
      if method == "notifications/initialized" and self.session and not self.standalone then
        self.standalone = self:_get(nil, nil)
      end
    end
  end)
  return true
end

function Transport:after(seconds, fn)
  return timers.after(self.uv, seconds, function()
    self.loop.events = self.loop.events + 1
    fn()
  end, "curl transport timer")
end

function Transport:cancel_timer(timer) timers.cancel(self.uv, timer) end
function Transport:now() return self.uv.hrtime() / 1e9 end
function Transport.stderr_text() return "" end  -- curl's stderr is inherited
function Transport:close()
  for post in pairs(self.streams) do
    if post.proc and not post.exited then post.proc:kill("sigterm") end
  end
end

--- The transport for `jrpc.mcp.client.connect{ transport = ... }`:
--- `M.opener(loop, url, {headers = {"K: V", ...}})` returns the function
--- connect calls with its sink.
function M.opener(loop, url, opts)
  return function(sink)
    return setmetatable({ kind = "http", loop = loop, uv = loop.uv, url = url, sink = sink,
      next_id = 1, pending = {}, mirrored = {}, streams = {}, extra_headers = opts and opts.headers or {},
      log = co.report }, Transport)
  end
end

return M
