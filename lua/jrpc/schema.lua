--- jrpc.schema: JSON Schema 2020-12 validation, for MCP tool arguments and
-- structured results. A schema is compiled once into closures; the check
-- it returns is called for every value.
--
--   local check, err = schema.compile(schema_value [, opts])
--   local ok, msg, failures = check(value)
--
-- See docs/schema.md for what is supported.
local options = require "jrpc.options"
local compile = require "jrpc.schema.compile"
local P = require "jrpc.schema.path"

local M = {}

--- compile's options: `formats` (true: `format` is an assertion for the
--- formats in docs/schema.md; default false, an annotation as 2020-12 says).
M.OPTIONS = options.set { "formats" }

--- A check function for `schema_value` (a decoded JSON schema: a table,
--- or a boolean), or nil and why the schema cannot be used (invalid, an
--- unsupported pattern, a `$ref` outside the document). The check returns
--- true, or false, the first failure as "path: message", and the list of
--- all failures ({path = JSON pointer, message = ...}).
---@param schema_value table|boolean
---@param opts? {formats: boolean}
---@return (fun(value: any): boolean, string?, table?)|nil check
---@return string|nil err
function M.compile(schema_value, opts)
  opts = options.check("jrpc.schema.compile", opts, 2, M.OPTIONS)
  if opts.formats ~= nil and type(opts.formats) ~= "boolean" then
    error("jrpc.schema.compile: option 'formats' must be a boolean", 2)
  end
  local ok, f = pcall(compile.compile, schema_value, opts)
  if not ok then
    if type(f) == "table" and f.schema_error then return nil, f.schema_error end
    error(f, 0)
  end
  return function(v)
    if f(v, nil, nil) then return true end
    local errs = {}
    f(v, "", errs)
    if errs[1] == nil then
      -- Cannot happen unless a keyword fails without saying why.
      errs[1] = { path = "", message = "invalid" }
    end
    return false, P.format(errs[1]), errs
  end
end

return M
