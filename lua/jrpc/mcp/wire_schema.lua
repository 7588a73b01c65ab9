--- A JSON Schema as it goes on the wire (a tool's; an elicitation's). A Lua table cannot tell
-- an empty list from an empty map (`required = {}` would encode as `{}`,
-- which clients reject), so the schema is copied with each keyword in the
-- shape JSON Schema gives it: lists as arrays, maps of schemas as objects,
-- subschemas walked the same way. Instance values (`const`, `default`,
-- the members of `enum` and `examples`) are left as written. A schema
-- given as JSON text is sent as that text (core.raw_json), in its
-- author's key order, and decoded once for the server's own checks.
local core = require "jrpc.core"

local M = {}

-- Keywords whose value is a list of strings or instance values.
local LISTS = { required = true, enum = true, examples = true }
-- Keywords whose value is a list of schemas.
local SCHEMA_LISTS = { allOf = true, anyOf = true, oneOf = true, prefixItems = true }
-- Keywords whose value is a map from names (or patterns) to schemas.
local SCHEMA_MAPS = { properties = true, patternProperties = true, ["$defs"] = true,
  definitions = true, dependentSchemas = true }
-- Keywords whose value is one schema.
local SCHEMAS = { additionalProperties = true, unevaluatedProperties = true, unevaluatedItems = true,
  contains = true, propertyNames = true, ["not"] = true, ["if"] = true, ["then"] = true,
  ["else"] = true, additionalItems = true, contentSchema = true }

local walk

local function array(t) return setmetatable(t, core.array_mt) end

local function is_list(v)
  return type(v) == "table" and (getmetatable(v) == core.array_mt or v[1] ~= nil)
end

local function list_of(v, f)
  local out = {}
  for i, x in ipairs(v) do out[i] = f(x) end
  return array(out)
end

local function same(x) return x end

-- A map of schemas (or, for dependentRequired, of name lists).
local function map_of(v, f)
  local out = {}
  for k, x in pairs(v) do out[k] = f(x) end
  return setmetatable(out, core.object_mt)
end

local function names(v) return type(v) == "table" and list_of(v, same) or v end

-- One keyword's value in its JSON Schema shape.
local function keyword(k, v)
  if type(v) ~= "table" then return v end
  if LISTS[k] then return list_of(v, same) end
  if SCHEMA_LISTS[k] then return list_of(v, walk) end
  if SCHEMA_MAPS[k] then return map_of(v, walk) end
  if SCHEMAS[k] then return walk(v) end
  if k == "type" then return list_of(v, same) end  -- a list of type names
  if k == "items" then  -- a schema, or (before 2020-12) a list of them
    if is_list(v) then return list_of(v, walk) end
    return walk(v)
  end
  if k == "dependentRequired" then return map_of(v, names) end
  if k == "dependencies" then  -- draft 7: a name list or a schema per name
    return map_of(v, function(x) if is_list(x) then return list_of(x, same) end return walk(x) end)
  end
  return v
end

-- A schema: a table of keywords (or a boolean schema, as it is).
function walk(s)
  if type(s) ~= "table" then return s end
  local out = {}
  for k, v in pairs(s) do out[k] = keyword(k, v) end
  return setmetatable(out, core.object_mt)
end

--- The wire form of a Lua-table schema: a copy with every keyword in its
--- JSON shape (the caller's table is not changed).
---@param schema table
---@return table
function M.from_table(schema)
  return walk(schema)
end

--- The params of an `elicitation/create` request, their `requestedSchema`
--- (a Lua table) in its wire form; other params, and other methods', as
--- they are. A copy when anything changes.
---@param method string
---@param params any
---@return any
function M.request_params(method, params)
  if method ~= "elicitation/create" or type(params) ~= "table" or type(params.requestedSchema) ~= "table" then
    return params
  end
  local out = {}
  for k, v in pairs(params) do out[k] = v end
  out.requestedSchema = walk(params.requestedSchema)
  return out
end

--- A schema given as JSON text: the table the server checks with, and the
--- value to send (the same text, whitespace aside), or nil and why.
---@param text string
---@return table|nil schema
---@return any|string wire_or_err
function M.from_text(text)
  local t, err = core.decode(text)
  if type(t) ~= "table" or is_list(t) then return nil, err or "not a JSON object" end
  return t, assert(core.raw_json(text))
end

return M
