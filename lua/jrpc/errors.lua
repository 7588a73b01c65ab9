--- JSON-RPC error values.
-- Wire errors carry a numeric `code`; errors made on this side of the
-- connection (timeout, close, ...) carry a string `code`, so they can never be
-- confused with a code a peer sent.
local M = {}

---@class jrpc.Error
---@field code integer|string  numeric: from the wire or for the wire; string: local
---@field message string
---@field data any

--- Standard codes, plus LSP's RequestCancelled.
M.codes = {
  PARSE_ERROR = -32700,
  INVALID_REQUEST = -32600,
  METHOD_NOT_FOUND = -32601,
  INVALID_PARAMS = -32602,
  INTERNAL_ERROR = -32603,
  REQUEST_CANCELLED = -32800,
}

local Error = {}
Error.__index = Error
M.metatable = Error

function Error.__tostring(e)
  return "jrpc error " .. tostring(e.code) .. ": " .. tostring(e.message)
end

local function check_code(code, level)
  local t = type(code)
  if t ~= "string" and not (t == "number" and code % 1 == 0) then
    error("error code must be an integer or a string, got " .. tostring(code), level + 1)
  end
end

--- Build an error value without raising it.
---@param code integer|string
---@param message string
---@param data any
---@return jrpc.Error
function M.new(code, message, data)
  check_code(code, 2)
  if type(message) ~= "string" then
    error("error message must be a string", 2)
  end
  return setmetatable({ code = code, message = message, data = data }, Error)
end

--- Raise a JSON-RPC error from a handler; the peer answers with it.
---@param code integer
---@param message string
---@param data any
function M.raise(code, message, data)
  if type(code) ~= "number" or code % 1 ~= 0 then
    error("jrpc.error: code must be an integer, got " .. tostring(code), 2)
  end
  error(setmetatable({ code = code, message = tostring(message), data = data }, Error))
end

--- Give a decoded wire error (`{code, message, data}` from the core) the
--- error metatable, so it prints well.
---@param err table
---@return jrpc.Error
function M.adopt(err)
  return setmetatable(err, Error)
end

--- A table raised by a handler counts as a JSON-RPC error when its code is an
--- integer; anything else is a bug in the handler (-32603).
---@param v any
---@return boolean
function M.is_wire_error(v)
  if type(v) ~= "table" then return false end
  local code = v.code
  return type(code) == "number" and code % 1 == 0
    and code >= -2147483648 and code <= 2147483647
end

--- Every local (string) code the library gives, and what it means. An
--- API that fails with a local code returns `nil, err` with one of these
--- (docs/errors.md lists them; spec/errors_spec.lua checks that the code
--- uses no other).
M.LOCAL_CODES = {
  -- a request of ours (jrpc.peer, every transport)
  timeout = "no reply within the request's timeout (the other side was told)",
  cancelled = "cancelled by peer:cancel (the other side was told)",
  closed = "the connection closed before the reply came",
  busy = "the transport's write queue is full: nothing new is sent until it drains",
  too_many_pending = "max_pending requests already await their replies",
  encode = "the params could not be encoded as JSON",
  interrupted = "the waiting coroutine was resumed by another scheduler; the request was cancelled",
  invalid_response = "the reply was not a valid JSON-RPC response",
  -- transports
  connect = "a connection could not be made",
  listen = "an address could not be listened on",
  spawn = "a child process could not be started",
  stdio = "stdin/stdout could not be opened as streams",
  http = "an HTTP exchange failed (its `failure` says how: connect, timeout, outcome_unknown, "
    .. "closed, failed, no_answer)",
  http_status = "an HTTP answer had a status that is not success (`data.status`, `data.body`)",
  -- the MCP client
  session = "the server ended the MCP session and it could not be opened again",
  era = "the server's protocol era could not be found out",
  unsupported_version = "the server speaks none of the protocol versions the client does",
  unsupported = "the server's era does not offer what was asked",
  invalid_result = "the server's result does not have the shape the method requires",
  too_many_rounds = "a tool call still asked for input after max_rounds rounds",
  too_many_pages = "a list had more than max_pages pages",
  ended_by_server = "the server ended a subscriptions/listen stream",
  failed = "a client callback raised (its text is the message)",
  auth = "the MCP authorization flow failed (`http_status`: the 401 or 403 that started it)",
  redis = "the Redis server answered a command with an error (its text is the message)",
}

--- Local (non-wire) errors.
function M.timeout() return M.new("timeout", "request timed out") end
function M.cancelled(reason) return M.new("cancelled", reason or "request cancelled") end
function M.closed(reason) return M.new("closed", reason or "connection closed") end
function M.busy(reason) return M.new("busy", reason or "transport busy") end
function M.too_many_pending(msg) return M.new("too_many_pending", msg or "too many pending requests") end
function M.encode(msg)
  return M.new("encode", "params could not be encoded: " .. tostring(msg))
end

return M
