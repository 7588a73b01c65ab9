--- A legacy (2025-11-25) Streamable HTTP session, for the MCP client's HTTP
-- transport (client_http.lua): the `MCP-Session-Id` the server gave with
-- the InitializeResult, sent on every later message with the negotiated
-- `MCP-Protocol-Version`; the GET stream that carries what the server
-- sends outside any request (list_changed, its own requests); a request
-- whose stream ended early resumed with GET + `Last-Event-ID` after the
-- server's `retry` (SEP-1699); a 404 (the server forgot the session: it
-- restarted, or the session idled out) answered by initializing again,
-- once, and sending the request again; DELETE when the client closes.
-- The modern era has no session: nothing here acts until `initialize`
-- succeeded.
local errors = require "jrpc.errors"

local M = {}

M.DEFAULT_RETRY_MS = 1000  -- before a resumption, when the server named no `retry`
M.MAX_RESUMES = 5          -- resumptions of one request
M.HEAD_TIMEOUT = 30        -- seconds for the GET stream's head
M.READY_WAIT = 2           -- seconds requests wait for the GET stream's head at most

---@class jrpc.mcp.HttpSession
local Session = {}
Session.__index = Session

--- The session state of transport `t` (its timers, requests and
--- notifications), whose exchanges are `hp`'s (a jrpc.http_peer), sending
--- the user's `headers` on every exchange of its own.
---@param t table
---@param hp jrpc.HttpPeer
---@param headers table<string, string>
---@return jrpc.mcp.HttpSession
function M.new(t, hp, headers)
  return setmetatable({ t = t, hp = hp, user_headers = headers }, Session)
end

--- True once an initialize succeeded (the legacy era).
function Session:legacy() return self.version ~= nil end

--- `initialize` is being sent: its params are kept for a re-initialization.
function Session:initializing(params)
  self.init_params = params
end

--- The head of the initialize POST's answer: the session id, if any.
function Session:saw_head(res)
  local sid = res.headers["mcp-session-id"]
  if sid and sid:find("^[\33-\126]+$") then self.next_id = sid end
end

--- The InitializeResult arrived: the session (if the server made one) and
--- the version every later message names.
function Session:initialized(result)
  if type(result) ~= "table" or type(result.protocolVersion) ~= "string" then return end
  self.version = result.protocolVersion
  self.id, self.next_id = self.next_id, nil
end

--- Add the session's headers to `h` (with `set(h, name, value)`).
function Session:add_headers(h, set)
  if self.id then set(h, "Mcp-Session-Id", self.id) end
  if self.version and h["MCP-Protocol-Version"] == nil then set(h, "MCP-Protocol-Version", self.version) end
end

local function get_headers(self, last_id)
  local h = { Accept = "text/event-stream" }
  self:add_headers(h, function(t, k, v) t[k] = v end)
  if last_id then h["Last-Event-ID"] = last_id end
  self.t:auth_headers(h)
  for k, v in pairs(self.user_headers) do h[k] = v end
  return h
end

-- {======================================================================
-- The GET stream, and resumption
-- =======================================================================

local function after_ms(self, ms, fn)
  self.t:after((ms or M.DEFAULT_RETRY_MS) / 1000, fn)
end

-- `ready()` once: at the stream's head, its end, or after READY_WAIT.
local function once(self, ready)
  local called, timer = false, nil
  local function go()
    if called then return end
    called = true
    if timer then self.t:cancel_timer(timer) end
    if ready then ready() end
  end
  if ready then timer = self.t:after(M.READY_WAIT, go) end
  return go
end

--- Open the standalone GET stream (after notifications/initialized), then
--- `ready()` once its head came (or it failed): the transport holds the
--- next requests until then, so what the server sends because of them
--- (list_changed, say) finds the stream open. A server that ends it naming
--- an event id or a retry (SEP-1699 polling) gets it opened again after
--- `retry`; an error or a refusal (405: the server offers none) leaves it
--- closed.
function Session:open_stream(ready, last_id)
  local hp = self.hp
  local go = once(self, ready)
  if not self.id or hp:closed() or self.stream then return go() end
  local sid = self.id
  self.stream = hp:exchange({ method = "GET", headers = get_headers(self, last_id),
    timeout = M.HEAD_TIMEOUT, on_head = go }, function(res, err, st)
    go()
    self.stream = nil
    if err or res.closed or res.status ~= 200 or hp:closed() or self.id ~= sid then return end
    if st.last_id or st.retry then
      after_ms(self, st.retry, function() self:open_stream(nil, st.last_id or last_id) end)
    end
  end)
end

--- Request `r`'s SSE stream ended before its answer: in a session, with an
--- event id to resume from, GET it again after the server's `retry`. True
--- when a resumption was started.
function Session:resume(r, st)
  if not self.id or not st.last_id or (r.resumes or 0) >= M.MAX_RESUMES then return false end
  r.resumes = (r.resumes or 0) + 1
  local hp = self.hp
  after_ms(self, st.retry, function()
    if not hp:waiting(r) or hp:closed() then return end
    r.handle = hp:exchange({ method = "GET", headers = get_headers(self, st.last_id) }, function(res, err, st2)
      hp:ended(r, res, err, st2)
    end)
  end)
  return true
end

-- }======================================================================

-- {======================================================================
-- 404: initialize again, once
-- =======================================================================

local function reinitialized(self, err)
  local waiting = self.reinit
  self.reinit = nil
  for _, fn in ipairs(waiting) do fn(err) end
end

--- Request `r` got 404 in a session: the server forgot it. Initialize
--- again (one re-initialization for every request that saw the 404), then
--- send `r` again; a second 404 for it is an error. True when taken.
--- Sending `r` again keeps it at most once: the Streamable HTTP spec has a
--- server answer a request whose session id it does not know with 404,
--- without processing it, so the 404 is the proof that `r` did not run.
--- (A request whose connection closed before any answer came is never
--- sent again: see jrpc.http_peer.)
function Session:expired(r)
  if not self.id or r.method == "initialize" or r.reinitialized then return false end
  r.reinitialized = true
  local t, hp = self.t, self.hp
  local retry = function(err)
    if err then
      return hp:fail(r, errors.new("session", "the server ended the session and initialize failed: "
        .. err.message))
    end
    hp:post(r)  -- after notifications/initialized: posts wait for it
  end
  if self.reinit then
    self.reinit[#self.reinit + 1] = retry
    return true
  end
  self.reinit = { retry }
  if self.stream then self.stream:close() end
  self.id = nil
  t:request("initialize", self.init_params, function(err)
    if not err then t:notify("notifications/initialized", nil) end
    reinitialized(self, err)
  end)
  return true
end

-- }======================================================================

--- End the session: the GET stream closes, the server gets DELETE (an
--- answer other than 2xx, 405 say, is fine); then `done()`.
---@param done fun()
function Session:close(done)
  if self.stream then self.stream:close() end
  local sid = self.id
  self.id = nil
  if not sid then return done() end
  local h = { ["Mcp-Session-Id"] = sid, ["MCP-Protocol-Version"] = self.version }
  self.t:auth_headers(h)
  for k, v in pairs(self.user_headers) do h[k] = v end
  self.hp:exchange({ method = "DELETE", headers = h, timeout = 5 }, function() done() end)
end

return M
