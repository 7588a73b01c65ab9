--- The user's answers to a server's questions: elicitation, sampling and
-- roots. One set of callbacks serves both eras: a modern server asks inside
-- an `input_required` result (MRTR), a legacy one with a request of its
-- own, and both reach `answer`. The capabilities the client declares are
-- derived from which callbacks exist, so a server never asks for what
-- nobody can answer. This module owns the callbacks (its state per client).
local jrpc_core = require "jrpc.core"
local errors = require "jrpc.errors"
local protocol = require "jrpc.mcp.protocol"

local M = {}

local states = setmetatable({}, { __mode = "k" })

-- The method a callback answers, and the capability that announces it.
local KINDS = {
  ["elicitation/create"] = { callback = "on_elicitation", capability = "elicitation" },
  ["sampling/createMessage"] = { callback = "on_sampling", capability = "sampling" },
  ["roots/list"] = { callback = "roots", capability = "roots" },
}
M.METHODS = KINDS

local function object(t)
  return setmetatable(t or {}, jrpc_core.object_mt)
end

local function check(opts)
  for _, kind in pairs(KINDS) do
    local v = opts[kind.callback]
    local ok = v == nil or type(v) == "function" or (kind.callback == "roots" and type(v) == "table")
    if not ok then error("jrpc.mcp.client: option " .. kind.callback .. " must be a function", 4) end
  end
end

--- The input state of a new client from its options: `on_elicitation(params)`,
--- `on_sampling(params)` (each returns the result object) and `roots` (a list
--- of `{uri, name?}` or a function returning one).
---@param client table
---@param opts table
---@return table
function M.new(client, opts)
  check(opts)
  local state = { on_elicitation = opts.on_elicitation, on_sampling = opts.on_sampling, roots = opts.roots,
    extra_capabilities = opts.capabilities }
  states[client] = state
  return state
end

--- The input state of `client`.
---@param client table
---@return table
function M.of(client)
  return states[client]
end

--- The ClientCapabilities to declare: one per callback present, plus the
--- user's own `capabilities` option (which wins).
---@param input table
---@return table
function M.capabilities(input)
  local caps = object()
  for _, kind in pairs(KINDS) do
    if input[kind.callback] ~= nil then caps[kind.capability] = object() end
  end
  for k, v in pairs(input.extra_capabilities or {}) do caps[k] = v end
  return caps
end

local function roots_result(input)
  local roots = input.roots
  if type(roots) == "function" then roots = roots() end
  return { roots = roots or {} }
end

-- The callback's answer to one question from the server, or what it
-- raises (-32601 when no callback answers that method).
local function ask(input, method, params)
  local kind = KINDS[method]
  local fn = kind and input[kind.callback]
  if fn == nil then
    errors.raise(protocol.codes.METHOD_NOT_FOUND, "the client has no " ..
      (kind and kind.callback or "handler") .. " for " .. tostring(method))
  end
  if method == "roots/list" then return roots_result(input) end
  local result = fn(params)
  if type(result) ~= "table" then error(method .. " callback returned no result object", 0) end
  return result
end

--- Answer one question from the server (a modern server's, inside an
--- `input_required` result): the result object, or nil and a jrpc.Error
--- (-32601 when no callback answers that method; a callback's plain error
--- is -32603 with its text: it stays on this side). May wait when called in
--- a coroutine (a callback may ask a user).
---@param input table
---@param method string
---@param params any
---@return table|nil result
---@return jrpc.Error|nil err
function M.answer(input, method, params)
  local ok, result = pcall(ask, input, method, params)
  if ok then return result end
  if errors.is_wire_error(result) then return nil, result end
  return nil, errors.new(protocol.codes.INTERNAL_ERROR, method .. " callback failed: " .. tostring(result))
end

--- Handlers for a legacy server's requests (the peer runs them in workers):
--- the same callbacks, plus `ping`. What a callback raises goes to the
--- peer, whose rule answers it: a jrpc error as it is, anything else -32603
--- "Internal error" without the text (logged on this side).
---@param input table
---@return table<string, function>
function M.legacy_methods(input)
  local map = { ping = function() return object() end }
  for method in pairs(KINDS) do
    map[method] = function(params) return ask(input, method, params) end
  end
  return map
end

return M
