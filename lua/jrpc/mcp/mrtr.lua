--- Multi-round-trip requests (2026-07-28 MRTR): a handler that needs the
-- client's input answers `input_required` with `inputRequests`, and the
-- client retries with `inputResponses` and the `requestState` it was
-- given. The server keeps no state between rounds, so the state travels
-- with the client, sealed: `payload.tag`, where tag is the hex HMAC-SHA256
-- of the payload under a key only this server (process) knows. A state
-- whose tag does not match was not ours, and is refused.
local core = require "jrpc.core"
local protocol = require "jrpc.mcp.protocol"
local wire_schema = require "jrpc.mcp.wire_schema"

local M = {}

-- The unsealed state of each input_required result, beside it rather than
-- in it: the result is what goes on the wire. Weak: a result never
-- answered takes its state with it.
local states = setmetatable({}, { __mode = "k" })

local function hex(s)
  return (s:gsub(".", function(c) return ("%02x"):format(c:byte()) end))
end

--- A new sealing key (32 random bytes); raises when the CSPRNG cannot give one.
---@return string
function M.new_key()
  return assert(core.random_bytes(32))
end

--- Seal `payload` (a string the handler chose) into a `requestState`.
---@param key string
---@param payload string
---@return string
function M.seal(key, payload)
  return payload .. "." .. hex(core.hmac_sha256(key, payload))
end

--- The payload of a sealed state, or nil and the -32602 error to answer.
---@param key string
---@param state any
---@return string|nil payload
---@return jrpc.Error|nil err
function M.open(key, state)
  local payload, tag
  if type(state) == "string" then payload, tag = state:match("^(.*)%.(%x+)$") end
  if payload and core.equal(tag, hex(core.hmac_sha256(key, payload))) then return payload end
  return nil, protocol.invalid_params("Invalid params: requestState is not one this server issued")
end

--- A result asking the client for input: `requests` maps keys to
--- `{method, params}` (an elicitation's `requestedSchema`, a Lua table,
--- goes out in its JSON Schema shapes: see wire_schema.lua); `state` (a
--- string, optional) comes back sealed.
---@param requests table
---@param state? string
---@return table
function M.input_required(requests, state)
  if type(requests) == "table" then
    local shaped = {}
    for key, r in pairs(requests) do
      if type(r) == "table" then
        local copy = {}
        for k, v in pairs(r) do copy[k] = v end
        copy.params = wire_schema.request_params(r.method, r.params)
        r = copy
      end
      shaped[key] = r
    end
    requests = shaped
  end
  local result = { resultType = protocol.result_types.input_required, inputRequests = requests }
  states[result] = state
  return result
end

--- The state `input_required` was given for `result` (nil if none), to
--- seal; asked once, as the result is answered.
---@param result table
---@return string|nil
function M.take_state(result)
  local state = states[result]
  states[result] = nil
  return state
end

return M
