--- The context an MCP handler gets: the request's `_meta`, the client (its
-- version, capabilities and info, from `_meta` or from `initialize`), and
-- the request-scoped notifications it may send: progress (only when the
-- request has a progress token) and log messages (only at or above the
-- level the client asked for).
local protocol = require "jrpc.mcp.protocol"
local wire_schema = require "jrpc.mcp.wire_schema"

local M = {}

local keys, levels = protocol.keys, protocol.log_levels

---@class jrpc.mcp.Context
---@field meta table          the request's `_meta` (an empty table when it had none)
---@field client table        `{version, capabilities, info}`
---@field era "modern"|"legacy"
---@field params table        the request's params (without `_meta`)
---@field peer jrpc.Peer
local Ctx = {}
Ctx.__index = Ctx

--- A context for the jrpc context `rpc` of a request.
---@param rpc jrpc.Context
---@param params table
---@param client table   `{version, capabilities, info, log_level}`
---@param era string
---@param route? fun(id_json: string, method: string)  told before each message this request sends
---@return jrpc.mcp.Context
function M.new(rpc, params, client, era, route)
  return setmetatable({ meta = rpc.meta or {}, client = client, era = era, params = params,
    peer = rpc.peer, id = rpc.id, method = rpc.method, _rpc = rpc, _log_level = client.log_level,
    _route = route }, Ctx)
end

-- Tell the transport (if it asked) which request the next `method`
-- message belongs to: a peer holds writes during a read, so the bytes
-- reach the transport later, out of this handler's hands.
local function routed(self, method)
  if self._route then self._route(self._rpc:id_json(), method) end
end

--- True once the client cancelled this request (`notifications/cancelled`).
---@return boolean
function Ctx:cancelled()
  return self._rpc:cancelled()
end

--- Report progress (`notifications/progress`) when the request asked for it
--- with a `progressToken`; returns whether it was sent. `value` should grow
--- from one call to the next.
---@param value number
---@param total? number
---@param message? string
---@return boolean sent
function Ctx:progress(value, total, message)
  local token = self.meta[keys.progress_token]
  if token == nil or self:cancelled() then return false end
  routed(self, "notifications/progress")
  return self.peer:notify("notifications/progress",
    { progressToken = token, progress = value, total = total, message = message }) == true
end

--- Send a log message (`notifications/message`) when the client asked for
--- messages at this level or above: per request in the modern era
--- (`_meta["io.modelcontextprotocol/logLevel"]`; none unless it is there),
--- with `logging/setLevel` in the legacy one (all until it is set).
---@param level string  debug info notice warning error critical alert emergency
---@param data any
---@param logger? string
---@return boolean sent
function Ctx:log(level, data, logger)
  local rank = levels[level]
  if not rank then error("ctx:log: unknown level " .. tostring(level), 2) end
  local wanted = self._log_level
  if wanted == nil or rank < levels[wanted] or self:cancelled() then return false end
  routed(self, "notifications/message")
  return self.peer:notify("notifications/message", { level = level, logger = logger, data = data }) == true
end

--- Ask the client (legacy era: `sampling/createMessage`,
--- `elicitation/create`, `roots/list`) and wait for its answer; the request
--- goes out on this request's own stream. An elicitation's
--- `requestedSchema` given as a Lua table goes out in its JSON Schema
--- shapes (`required = {}` as `[]`). Returns the result, or nil and the
--- jrpc.Error.
---@param method string
---@param params any
---@param opts? {timeout?: number}
---@return any result
---@return jrpc.Error|nil err
function Ctx:request(method, params, opts)
  routed(self, method)
  return self.peer:request(method, wire_schema.request_params(method, params), opts)
end

return M
