--- The one place where a tool's values are checked against its schemas:
-- the arguments of tools/call against `input_schema`, structuredContent
-- against `output_schema`. The registry compiles both when the tool is
-- registered; methods.lua calls the checks. Today the check is the light
-- one of arguments.lua (an object, required members, one-type members);
-- a full JSON Schema validator with the same shape (compile once, then
-- `check(value)` -> ok, message) replaces it here and nowhere else.
local arguments = require "jrpc.mcp.arguments"

local M = {}

--- What the messages call the checked value and its members.
M.ARGUMENTS = { whole = "arguments", member = "argument" }
M.OUTPUT = { whole = "structuredContent", member = "property" }

--- A check of values against `schema` (JSON text decoded, or a Lua-table
--- schema in its wire form: a copy whose lists carry jrpc's array mark, so
--- `items = {}` is a schema and `required = {}` a list): `check(value)`
--- returns true, or false and a sentence saying what does not fit,
--- worded with `names` (M.ARGUMENTS or M.OUTPUT).
---@param schema table
---@param names {whole: string, member: string}
---@return fun(value: any): boolean, string?
function M.compile(schema, names)
  return function(value)
    local problem = arguments.problem(schema, value, names)
    if problem then return false, problem end
    return true
  end
end

return M
