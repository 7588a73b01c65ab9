--- `subscriptions/listen` (2026-07-28): one long request whose
-- notifications, tagged with its id in `_meta.subscriptionId`, reach the
-- listener's `on_event`, until it ends: with its result (the server's
-- graceful end), the server's `notifications/cancelled` for its id (stdio),
-- the client's cancel, or the connection's end; `on_end` is called once.
-- This module owns the open listens of a client (per client, by id).
local errors = require "jrpc.errors"
local protocol = require "jrpc.mcp.protocol"
local era = require "jrpc.mcp.client_era"

local M = {}

---@class jrpc.mcp.Listen
---@field id integer|string  the subscription id (the listen request's id)
local Listen = {}
Listen.__index = Listen

local open = setmetatable({}, { __mode = "k" })

-- The MCP wire member of a request's metadata.
local META = "_meta"

--- The listens of a new client.
---@param client table
function M.new(client)
  open[client] = {}
end

local function finish(listen, err, result)
  if listen.ended then return end
  listen.ended = true
  open[listen.client][listen.id] = nil
  if listen.on_end then
    local ok, msg = pcall(listen.on_end, err, result)
    if not ok then listen.client:log("listen on_end failed: " .. tostring(msg)) end
  end
end

--- A notification tagged with a subscription id: to its listener. True
--- when some listen took it.
---@param client table
---@param method string
---@param params any
---@param meta table|nil
---@return boolean
function M.route(client, method, params, meta)
  local id = type(meta) == "table" and meta[protocol.keys.subscription_id]
  local listen = id ~= nil and open[client][id]
  if not listen then return false end
  local ok, msg = pcall(listen.on_event, method, params, meta)
  if not ok then client:log("listen on_event failed: " .. tostring(msg)) end
  return true
end

--- The server's `notifications/cancelled`: the end of a listen (the only
--- request a server may cancel). Our side settles the request locally.
---@param client table
---@param params any
function M.cancelled(client, params)
  local listen = type(params) == "table" and open[client][params.requestId]
  if not listen then return end
  local reason = type(params.reason) == "string" and params.reason or "the server ended the subscription"
  finish(listen, errors.new("ended_by_server", reason))
  -- settles the request still pending on the transport (the server ignores a cancel for it)
  listen.client:transport():cancel(listen.id, "ended by the server")
end

--- Start listening (the era must be modern): `filter` is the
--- `notifications` object (`toolsListChanged`, `promptsListChanged`,
--- `resourcesListChanged`, `resourceSubscriptions`); `on_event(method,
--- params, meta)` gets the acknowledgement and every notification;
--- `on_end(err, result)` once.
---@param client table
---@param filter table
---@param on_event fun(method: string, params: any, meta: table|nil)
---@param on_end? fun(err: jrpc.Error|nil, result: table|nil)
---@return jrpc.mcp.Listen
function M.start(client, filter, on_event, on_end)
  local listen = setmetatable({ client = client, on_event = on_event, on_end = on_end }, Listen)
  local params = { notifications = filter, [META] = era.meta(client) }
  listen.id = client:transport():request("subscriptions/listen", params, function(err, result)
    finish(listen, err, result)
  end)
  if not listen.ended then open[client][listen.id] = listen end
  return listen
end

--- End the subscription from our side (stdio: notifications/cancelled);
--- `on_end` gets code "cancelled".
---@param reason? string
function Listen:cancel(reason)
  if self.ended then return false end
  return self.client:transport():cancel(self.id, reason or "the client ended the subscription")
end

return M
