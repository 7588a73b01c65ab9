--- Declared method parameters: `jrpc.params{ "minuend:number", "note:string?" }`.
-- A declaration validates both positional (`[42, 23]`) and named
-- (`{"minuend": 42}`) params and always hands the handler a NAMED table, so
-- handlers read `p.minuend` whatever form the caller chose.
local core = require "jrpc.core"
local errors = require "jrpc.errors"
local takes_ctx = require("jrpc.server").takes_ctx

local INVALID_PARAMS = errors.codes.INVALID_PARAMS
local null, array_mt, object_mt = core.null, core.array_mt, core.object_mt

local M = {}

-- Decoded arrays carry array_mt; an unmarked table is an array when it has
-- a [1] (an empty unmarked table is an object, as the encoder sees it).
local function is_array(v)
  local mt = getmetatable(v)
  if mt == array_mt then return true end
  if mt == object_mt then return false end
  return rawget(v, 1) ~= nil
end

-- Each check says whether a value (never nil) has the declared type.
local checks = {
  any = function() return true end,
  number = function(v) return type(v) == "number" end,
  integer = function(v)
    return type(v) == "number" and v % 1 == 0 and v - v == 0  -- v - v rules out inf
  end,
  string = function(v) return type(v) == "string" end,
  boolean = function(v) return type(v) == "boolean" end,
  table = function(v) return type(v) == "table" end,
  array = function(v) return type(v) == "table" and is_array(v) end,
  object = function(v) return type(v) == "table" and not is_array(v) end,
}

-- "an integer", "a number": the message names the type the way people say it.
local function article(type_name)
  return (type_name:match("^[aeiou]") and "an " or "a ") .. type_name
end

local function parse_spec(spec, i)
  if type(spec) ~= "string" then
    error("jrpc.params: entry " .. i .. " must be a string like \"name:type\"", 3)
  end
  local name, type_name, optional = spec:match("^([%w_%-%.%$/]+):(%a+)(%??)$")
  if not name then
    name, optional = spec:match("^([%w_%-%.%$/]+)(%??)$")
    type_name = "any"
  end
  if not name or not checks[type_name] then
    error("jrpc.params: bad declaration " .. string.format("%q", spec), 3)
  end
  return { name = name, type = type_name, check = checks[type_name], optional = optional == "?" }
end

local Decl = {}
Decl.__index = Decl

local function fail(fmt, ...)
  return nil, "Invalid params: " .. string.format(fmt, ...)
end

-- Values registered with `add_null` (vim.NIL), which count as null too.
local extra_nulls = setmetatable({}, { __mode = "k" })

-- Checks one present value; JSON null counts as absent for an optional param
-- and passes only `any` for a required one.
local function check_value(p, v, out)
  if p.optional and (v == null or extra_nulls[v]) then return true end
  if not p.check(v) then
    return fail("%q must be %s", p.name, article(p.type))
  end
  out[p.name] = v
  return true
end

-- One declared param's value as given (nil: absent).
local function take_value(p, v, out)
  if v == nil then
    if p.optional then return true end
    return fail("%q is required", p.name)
  end
  return check_value(p, v, out)
end

local function from_positional(self, params, out)
  local n = #params
  if n > #self then
    return fail("expected at most %d params, got %d", #self, n)
  end
  for i = 1, #self do
    local ok, msg = take_value(self[i], params[i], out)
    if not ok then return nil, msg end
  end
  return out
end

local function from_named(self, params, out)
  for key in pairs(params) do
    if not self.by_name[key] then
      return fail("unknown param %q", tostring(key))
    end
  end
  for i = 1, #self do
    local p = self[i]
    local ok, msg = take_value(p, params[p.name], out)
    if not ok then return nil, msg end
  end
  return out
end

--- Validate params as they came off the wire.
---@param params table|nil  positional array, named object, or nil (absent)
---@return table|nil named  a new table keyed by param name, or nil
---@return string|nil msg   `Invalid params: ...` naming the param
function Decl:check(params)
  if params == nil then return from_named(self, {}, {}) end
  if type(params) ~= "table" then
    return fail("expected an array or an object")
  end
  if is_array(params) then return from_positional(self, params, {}) end
  return from_named(self, params, {})
end

--- Wrap a handler so it gets validated, named params; bad params answer -32602.
---@param fn fun(params: table, ctx: table): any
---@return fun(params: any, ctx: table): any
function Decl:wrap(fn)
  -- a handler that cannot see its context gets a wrapper that cannot
  -- either: the server then makes none (see server.add)
  if not takes_ctx(fn) then
    return function(params)
      local named, msg = self:check(params)
      if not named then errors.raise(INVALID_PARAMS, msg) end
      return fn(named)
    end
  end
  return function(params, ctx)
    local named, msg = self:check(params)
    if not named then errors.raise(INVALID_PARAMS, msg) end
    return fn(named, ctx)
  end
end

--- Declare a method's params.
---@param specs string[]  `"name:type"` or `"name:type?"` (optional); type is one of
---  number|integer|string|boolean|table|array|object|any (omitted: any)
---@return table decl  with `decl:check(params)` and `decl:wrap(fn)`
function M.declare(specs)
  if type(specs) ~= "table" then
    error("jrpc.params: expected a list of \"name:type\" strings", 2)
  end
  local decl = setmetatable({ by_name = {} }, Decl)
  for i = 1, #specs do
    local p = parse_spec(specs[i], i)
    if decl.by_name[p.name] then
      error("jrpc.params: duplicate param " .. string.format("%q", p.name), 2)
    end
    decl[i], decl.by_name[p.name] = p, p
  end
  return decl
end

--- True for a value made by `declare`.
--- Count the userdata `v` as JSON null for optional params (see jrpc.add_null).
function M.add_null(v)
  extra_nulls[v] = true
end

function M.is_decl(v)
  return getmetatable(v) == Decl
end

return M
