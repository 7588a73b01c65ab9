--- The one place where a tool's values are checked against its schemas:
-- the arguments of tools/call against `input_schema`, structuredContent
-- against `output_schema`. The registry compiles both when the tool is
-- registered; methods.lua calls the checks. The checks are JSON Schema
-- 2020-12 (jrpc.schema); a message names the JSON pointer of what does not
-- fit (`/b: expected number, got string`), or none when it is the whole
-- value (`missing required property "b"`).
local schema = require "jrpc.schema"

local M = {}

--- A check of values against `schema_value` (JSON text decoded, or a
--- Lua-table schema in its wire form: a copy whose lists carry jrpc's
--- array mark, so `items = {}` is a schema and `required = {}` a list):
--- `check(value)` returns true, or false and a sentence saying what does
--- not fit. Nil and why for
--- a schema that cannot be used (an invalid keyword, a `$ref` outside the
--- document, a pattern that cannot be matched exactly).
---@param schema_value table
---@return (fun(value: any): boolean, string?)|nil
---@return string|nil why
function M.compile(schema_value)
  local check, why = schema.compile(schema_value)
  if check == nil then return nil, why end
  return function(value)
    local ok, _, failures = check(value)
    if ok then return true end
    local first = failures[1]
    if first.path == "" then return false, first.message end  -- the whole value
    return false, first.path .. ": " .. first.message
  end
end

return M
