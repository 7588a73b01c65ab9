--- The MCP protocol facts both sides need: versions, the `_meta` keys,
-- `resultType`, the error codes and their constructors, log levels, and the
-- validation of a modern request's `_meta`. No state: the server and the
-- client share this module; nothing here talks to a peer.
local errors = require "jrpc.errors"

local M = {}

--- The modern protocol versions we serve statelessly (newest first).
M.MODERN_VERSIONS = { "2026-07-28" }
--- The legacy versions `initialize` may negotiate (newest first).
M.LEGACY_VERSIONS = { "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05" }

--- Reserved `_meta` keys.
M.keys = {
  protocol_version = "io.modelcontextprotocol/protocolVersion",
  client_capabilities = "io.modelcontextprotocol/clientCapabilities",
  client_info = "io.modelcontextprotocol/clientInfo",
  log_level = "io.modelcontextprotocol/logLevel",
  server_info = "io.modelcontextprotocol/serverInfo",
  subscription_id = "io.modelcontextprotocol/subscriptionId",
  progress_token = "progressToken",
}

--- `resultType` values of the core protocol.
M.result_types = { complete = "complete", input_required = "input_required" }

--- Error codes (JSON-RPC's, and those 2026-07-28 allocates).
M.codes = {
  METHOD_NOT_FOUND = errors.codes.METHOD_NOT_FOUND,
  INVALID_PARAMS = errors.codes.INVALID_PARAMS,
  INTERNAL_ERROR = errors.codes.INTERNAL_ERROR,
  HEADER_MISMATCH = -32020,
  MISSING_CLIENT_CAPABILITY = -32021,
  UNSUPPORTED_PROTOCOL_VERSION = -32022,
  LEGACY_RESOURCE_NOT_FOUND = -32002,  -- 2025-11-25 and earlier only
}
local codes = M.codes

--- Log levels (RFC 5424), with their rank: a higher rank is more severe.
M.log_levels = { debug = 1, info = 2, notice = 3, warning = 4, error = 5, critical = 6, alert = 7,
  emergency = 8 }

local function member(list, v)
  for _, x in ipairs(list) do if x == v then return true end end
  return false
end

--- True when `version` is a modern version we serve.
---@param version any
---@return boolean
function M.is_modern_version(version)
  return member(M.MODERN_VERSIONS, version)
end

--- The legacy version `initialize` answers for a requested one: the same
--- when we support it, else our newest (the client then decides).
---@param requested any
---@return string
function M.negotiate_legacy(requested)
  if member(M.LEGACY_VERSIONS, requested) then return requested end
  return M.LEGACY_VERSIONS[1]
end

--- The first version whose tools/call answers arguments that fail the
--- input schema with an `isError` result the model can read and act on
--- (SEP-1303); earlier versions answer -32602.
M.INPUT_ERRORS_AS_RESULTS = "2025-11-25"

--- True when a client of protocol `version` hears of bad tool arguments in
--- an `isError` result (versions are dates: they compare as strings).
---@param version string
---@return boolean
function M.input_errors_are_results(version)
  return type(version) == "string" and version >= M.INPUT_ERRORS_AS_RESULTS
end

-- {======================================================================
-- Errors: each returns a jrpc error value; raise it with `error(e, 0)`.
-- =======================================================================

--- A value from the wire as an error message quotes it: a string, number
--- or boolean as itself, anything else by kind (tostring of a table would
--- put a Lua address in the answer).
---@param v any
---@return string
function M.quote(v)
  local t = type(v)
  if t == "string" or t == "number" or t == "boolean" then return tostring(v) end
  return t == "table" and "(an object or array)" or "(null)"
end

--- -32602 Invalid params.
---@param message string
---@param data? any
---@return jrpc.Error
function M.invalid_params(message, data)
  return errors.new(codes.INVALID_PARAMS, message, data)
end

--- -32601 Method not found.
---@return jrpc.Error
function M.method_not_found()
  return errors.new(codes.METHOD_NOT_FOUND, "Method not found")
end

--- -32022 with the versions we support and the one asked for.
---@param requested any
---@return jrpc.Error
function M.unsupported_version(requested)
  return errors.new(codes.UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version",
    { supported = M.MODERN_VERSIONS, requested = requested })
end

--- -32021 naming the client capabilities the request needs (an object).
---@param required table
---@return jrpc.Error
function M.missing_capability(required)
  return errors.new(codes.MISSING_CLIENT_CAPABILITY, "Missing required client capability",
    { requiredCapabilities = required })
end

--- An unknown resource: -32602 in the modern era, -32002 in the legacy one.
---@param uri string
---@param legacy? boolean
---@return jrpc.Error
function M.resource_not_found(uri, legacy)
  return errors.new(legacy and codes.LEGACY_RESOURCE_NOT_FOUND or codes.INVALID_PARAMS,
    "Resource not found", { uri = uri })
end

-- }======================================================================

--- True when a request's `_meta` chooses the modern era: it names a
--- protocol version (whether or not we support it).
---@param meta any
---@return boolean
function M.is_modern_meta(meta)
  return type(meta) == "table" and meta[M.keys.protocol_version] ~= nil
end

--- Check a modern request's `_meta`. Returns the client it describes,
--- `{version, capabilities, info, log_level}`, or nil and the error to
--- answer: -32602 when a required key is missing or malformed (or the log
--- level is unknown), -32022 when the version is not one we serve.
---@param meta any
---@return table|nil client
---@return jrpc.Error|nil err
function M.check_meta(meta)
  local k = M.keys
  if type(meta) ~= "table" then
    return nil, M.invalid_params("Invalid params: _meta is required")
  end
  local version = meta[k.protocol_version]
  if type(version) ~= "string" then
    return nil, M.invalid_params("Invalid params: _meta[\"" .. k.protocol_version .. "\"] is required")
  end
  local caps = meta[k.client_capabilities]
  if type(caps) ~= "table" or caps[1] ~= nil then
    return nil, M.invalid_params("Invalid params: _meta[\"" .. k.client_capabilities .. "\"] is required")
  end
  if not M.is_modern_version(version) then return nil, M.unsupported_version(version) end
  local level = meta[k.log_level]
  if level ~= nil and not M.log_levels[level] then
    return nil, M.invalid_params("Invalid params: unknown log level " .. M.quote(level))
  end
  local info = meta[k.client_info]
  return { version = version, capabilities = caps, info = type(info) == "table" and info or nil,
    log_level = level }
end

--- A modern request's `_meta`: the version, the capabilities and (when
--- given) the client's identity, the keys `check_meta` reads. The client
--- builds every 2026-07-28 request's `_meta` here.
---@param version string
---@param capabilities table  a ClientCapabilities object (encode `{}` as an object)
---@param info? table  Implementation `{name, version, ...}`
---@return table
function M.request_meta(version, capabilities, info)
  local k = M.keys
  return { [k.protocol_version] = version, [k.client_capabilities] = capabilities,
    [k.client_info] = info }
end

--- What a result's `resultType` says: "complete" (also when it is absent:
--- legacy servers send none) or "input_required"; any other value is
--- invalid (nil and a message), as 2026-07-28 tells a client to treat it.
---@param result any
---@return string|nil kind
---@return string|nil why
function M.result_kind(result)
  if type(result) ~= "table" then return nil, "the result is not an object" end
  local kind = result.resultType
  if kind == nil or kind == M.result_types.complete then return M.result_types.complete end
  if kind == M.result_types.input_required then return kind end
  return nil, "unknown resultType " .. (type(kind) == "string" and ("%q"):format(kind) or tostring(kind))
end

--- A modern version both we and a server (its `supported` list, from
--- -32022's data or `server/discover`) speak, newest of ours first, or nil.
---@param supported any
---@return string|nil
function M.mutual_modern(supported)
  if type(supported) ~= "table" then return nil end
  for _, ours in ipairs(M.MODERN_VERSIONS) do
    if member(supported, ours) then return ours end
  end
  return nil
end

--- The capabilities in `required` (a ClientCapabilities-shaped table) that
--- `declared` lacks, or nil when it has them all (top-level keys only).
---@param declared table|nil
---@param required table
---@return table|nil missing
function M.missing_capabilities(declared, required)
  local missing
  for name, value in pairs(required) do
    if type(declared) ~= "table" or declared[name] == nil then
      missing = missing or {}
      missing[name] = value
    end
  end
  return missing
end

return M
