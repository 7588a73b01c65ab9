--- A light check of tool arguments against the tool's input schema: the
-- arguments are an object, required properties are there, and properties
-- whose schema names one JSON type have it. Not a JSON Schema validator: it
-- catches what a model gets wrong most often, and leaves the rest to the
-- handler (a schema this check does not understand is not held against
-- the arguments).
local core = require "jrpc.core"

local M = {}

local function is_array(v)
  return getmetatable(v) == core.array_mt or (v[1] ~= nil)
end

local checks = {
  string = function(v) return type(v) == "string" end,
  number = function(v) return type(v) == "number" end,
  integer = function(v) return type(v) == "number" and v % 1 == 0 end,
  boolean = function(v) return type(v) == "boolean" end,
  object = function(v) return type(v) == "table" and not is_array(v) end,
  array = function(v) return type(v) == "table" and (is_array(v) or next(v) == nil) end,
  null = function(v) return v == core.null end,
}

local ARGUMENTS = { whole = "arguments", member = "argument" }

--- nil when `args` fit `schema`, else why not (a sentence for -32602).
--- `names` words the sentence for other values checked the same way
--- (default `{whole = "arguments", member = "argument"}`).
---@param schema table
---@param args any
---@param names? {whole: string, member: string}
---@return string|nil problem
function M.problem(schema, args, names)
  names = names or ARGUMENTS
  if not checks.object(args) then return names.whole .. " must be an object" end
  for _, name in ipairs(type(schema.required) == "table" and schema.required or {}) do
    if args[name] == nil then return ("%s %q is required"):format(names.member, name) end
  end
  local props = type(schema.properties) == "table" and schema.properties or {}
  for name, sub in pairs(props) do
    local v, want = args[name], type(sub) == "table" and sub.type
    if v ~= nil and checks[want] and not checks[want](v) then
      return ("%s %q must be of type %s"):format(names.member, name, want)
    end
  end
  return nil
end

return M
