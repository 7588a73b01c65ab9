--- The user's answers to a server's questions: elicitation, sampling and
-- roots. One set of callbacks serves both eras: a modern server asks inside
-- an `input_required` result (MRTR), a legacy one with a request of its
-- own, and both reach `answer`. The capabilities the client declares are
-- derived from which callbacks exist, so a server never asks for what
-- nobody can answer. This module owns the callbacks (`client._input`).
local jrpc_core = require "jrpc.core"
local errors = require "jrpc.errors"
local protocol = require "jrpc.mcp.protocol"

local M = {}

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
---@param opts table
---@return table
function M.new(opts)
  check(opts)
  return { on_elicitation = opts.on_elicitation, on_sampling = opts.on_sampling, roots = opts.roots,
    extra_capabilities = opts.capabilities }
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

--- Answer one question from the server: the result object, or nil and a
--- jrpc.Error (-32601 when no callback answers that method). May wait when
--- called in a coroutine (a callback may ask a user).
---@param input table
---@param method string
---@param params any
---@return table|nil result
---@return jrpc.Error|nil err
function M.answer(input, method, params)
  local kind = KINDS[method]
  local fn = kind and input[kind.callback]
  if fn == nil then
    return nil, errors.new(protocol.codes.METHOD_NOT_FOUND, "the client has no " ..
      (kind and kind.callback or "handler") .. " for " .. tostring(method))
  end
  if method == "roots/list" then return roots_result(input) end
  local ok, result = pcall(fn, params)
  if not ok then
    if errors.is_wire_error(result) then return nil, result end
    return nil, errors.new(protocol.codes.INTERNAL_ERROR, method .. " callback failed: " .. tostring(result))
  end
  if type(result) ~= "table" then
    return nil, errors.new(protocol.codes.INTERNAL_ERROR, method .. " callback returned no result object")
  end
  return result
end

--- Handlers for a legacy server's requests (the peer runs them in workers):
--- the same callbacks, plus `ping`.
---@param input table
---@return table<string, function>
function M.legacy_methods(input)
  local map = { ping = function() return object() end }
  for method in pairs(KINDS) do
    map[method] = function(params)
      local result, err = M.answer(input, method, params)
      if not result then error(err, 0) end
      return result
    end
  end
  return map
end

return M
