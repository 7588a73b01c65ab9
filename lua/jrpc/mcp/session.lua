--- The legacy era (2025-11-25 and earlier) on one connection: what
-- `initialize` negotiated (the version, the client's capabilities and
-- info) and what `logging/setLevel` and `resources/subscribe` set. This
-- module owns that per-connection state; the modern era keeps none.
local protocol = require "jrpc.mcp.protocol"

local M = {}

local Session = {}
Session.__index = Session

--- A connection that has not chosen the legacy era (yet).
---@return table
function M.new()
  return setmetatable({ client = nil, initialized = false, subscriptions = {} }, Session)
end

--- True once `initialize` has selected the legacy era.
---@return boolean
function Session:is_legacy()
  return self.client ~= nil
end

--- `initialize`: negotiate the version, remember the client. Logs go out
--- at every level until the client sets one (as legacy servers do).
---@param params table
---@return string version
function Session:initialize(params)
  if type(params.capabilities) ~= "table" then
    error(protocol.invalid_params("Invalid params: capabilities is required"), 0)
  end
  local version = protocol.negotiate_legacy(params.protocolVersion)
  self.client = { version = version, capabilities = params.capabilities,
    info = type(params.clientInfo) == "table" and params.clientInfo or nil, log_level = "debug" }
  return version
end

--- `notifications/initialized`.
function Session:mark_initialized()
  self.initialized = true
end

--- `logging/setLevel`.
---@param level any
function Session:set_level(level)
  if not protocol.log_levels[level] then
    error(protocol.invalid_params("Invalid params: unknown log level " .. protocol.quote(level)), 0)
  end
  self.client.log_level = level
end

--- `resources/subscribe` (`on` true) and `resources/unsubscribe`.
---@param uri any
---@param on boolean
function Session:subscribe(uri, on)
  if type(uri) ~= "string" then error(protocol.invalid_params("Invalid params: uri is required"), 0) end
  self.subscriptions[uri] = on or nil
end

--- True when the client subscribed to `uri`.
---@param uri string
---@return boolean
function Session:subscribed(uri)
  return self.subscriptions[uri] == true
end

return M
