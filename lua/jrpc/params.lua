--- Declared method parameters: `jrpc.params{ "minuend:number", "note:string?" }`.
-- A declaration validates both positional (`[42, 23]`) and named
-- (`{"minuend": 42}`) params and always hands the handler a NAMED table, so
-- handlers read `p.minuend` whatever form the caller chose.
local core = require "jrpc.core"
local errors = require "jrpc.errors"

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

-- Values registered with `add_null` (vim.NIL), which count as null too.
local extra_nulls = setmetatable({}, { __mode = "k" })

-- The most params one declaration may name: each is a local of the
-- compiled checker (Lua allows 200 locals per function).
M.MAX_PARAMS = 100

-- The message of each way params can fail a declaration. `x` is the
-- param's index (required, type), the count given, or the unknown key.
local reasons = {
  shape = function() return "expected an array or an object" end,
  count = function(decl, n) return ("expected at most %d params, got %d"):format(#decl, n) end,
  unknown = function(_, key) return ("unknown param %q"):format(tostring(key)) end,
  required = function(decl, i) return ("%q is required"):format(decl[i].name) end,
  type = function(decl, i) return ("%q must be %s"):format(decl[i].name, article(decl[i].type)) end,
}

-- Types checked inline as `type(v) == name`; the others call their check.
local plain_types = { number = true, string = true, boolean = true, table = true }

-- Lua source of the checker: one local per param, the positional or named
-- form read into them, each validated in declaration order, and the named
-- table built by one constructor (sized at once, no rehash). With `call`
-- it tail-calls the handler with that table instead of returning it.
-- Names are quoted with %q, so any declared name is a safe literal.
local function checker_source(decl, call)
  local n, out = #decl, {}
  local function add(line, ...) out[#out + 1] = line:format(...) end
  local locals, positional, named, fields = {}, {}, {}, {}
  for i = 1, n do
    local key = ("%q"):format(decl[i].name)
    locals[i], positional[i], named[i] = "v" .. i, "params[" .. i .. "]", "params[" .. key .. "]"
    fields[i] = "[" .. key .. "] = v" .. i
  end
  add("local type, getmetatable, rawget, pairs, array_mt, object_mt, null, extra_nulls, by_name,"
    .. " checks, fail, fn = ...")
  add("return function(params%s)", call and ", ctx" or "")
  if n > 0 then add("  local %s", table.concat(locals, ", ")) end
  -- decoded params carry array_mt or object_mt: one getmetatable call
  -- tells their form (a string's metatable is neither)
  add("  if params ~= nil then")
  add("    local mt = getmetatable(params)")
  add("    if mt ~= array_mt and mt ~= object_mt and type(params) ~= \"table\" then")
  add("      return fail(\"shape\")")
  add("    end")
  add("    if mt == array_mt or (mt ~= object_mt and rawget(params, 1) ~= nil) then")
  add("      local count = #params")
  add("      if count > %d then return fail(\"count\", count) end", n)
  if n > 0 then add("      %s = %s", table.concat(locals, ", "), table.concat(positional, ", ")) end
  add("    else")
  add("      for key in pairs(params) do")
  add("        if by_name[key] == nil then return fail(\"unknown\", key) end")
  add("      end")
  if n > 0 then add("      %s = %s", table.concat(locals, ", "), table.concat(named, ", ")) end
  add("    end")
  add("  end")
  for i = 1, n do
    local p, v = decl[i], "v" .. i
    local bad = plain_types[p.type] and ("type(%s) ~= %q"):format(v, p.type)
      or p.type ~= "any" and ("not checks[%d](%s)"):format(i, v)
    if p.optional then
      add("  if %s ~= nil then", v)
      add("    if %s == null or extra_nulls[%s] then %s = nil", v, v, v)
      if bad then add("    elseif %s then return fail(\"type\", %d)", bad, i) end
      add("    end")
      add("  end")
    else
      add("  if %s == nil then return fail(\"required\", %d) end", v, i)
      if bad then add("  if %s then return fail(\"type\", %d) end", bad, i) end
    end
  end
  local built = "{ " .. table.concat(fields, ", ") .. " }"
  if call then
    add("  return fn(%s%s)", built, call and ", ctx" or "")
  else
    add("  return %s", built)
  end
  add("end")
  return table.concat(out, "\n")
end

-- Compile the checker. `call`: the handler to call with the named table
-- (failures raise -32602); without it, failures return nil, msg.
local function compile(decl, call)
  local source = checker_source(decl, call)
  local chunk = assert(load(source, "=jrpc.params", "t"))
  local function fail(kind, x)
    local msg = "Invalid params: " .. reasons[kind](decl, x)
    if call then errors.raise(INVALID_PARAMS, msg) end
    return nil, msg
  end
  local check_of = {}
  for i = 1, #decl do check_of[i] = decl[i].check end
  return chunk(type, getmetatable, rawget, pairs, array_mt, object_mt, null, extra_nulls,
    decl.by_name, check_of, fail, call)
end

--- Validate params as they came off the wire.
---@param params table|nil  positional array, named object, or nil (absent)
---@return table|nil named  a new table keyed by param name, or nil
---@return string|nil msg   `Invalid params: ...` naming the param
function Decl:check(params)
  return self._check(params)
end

--- Wrap a handler so it gets validated, named params; bad params answer -32602.
--- The wrapper is compiled for this declaration and handler: the checks
--- inline, the named table built in one constructor, the handler tail-called.
---@param fn fun(params: table, ctx: table): any
---@return fun(params: any, ctx: table): any
function Decl:wrap(fn)
  return compile(self, fn)
end

--- Declare a method's params.
---@param specs string[]  `"name:type"` or `"name:type?"` (optional); type is one of
---  number|integer|string|boolean|table|array|object|any (omitted: any)
---@return table decl  with `decl:check(params)` and `decl:wrap(fn)`
function M.declare(specs)
  if type(specs) ~= "table" then
    error("jrpc.params: expected a list of \"name:type\" strings", 2)
  end
  if #specs > M.MAX_PARAMS then
    error(("jrpc.params: at most %d params, got %d"):format(M.MAX_PARAMS, #specs), 2)
  end
  local decl = setmetatable({ by_name = {} }, Decl)
  for i = 1, #specs do
    local p = parse_spec(specs[i], i)
    if decl.by_name[p.name] then
      error("jrpc.params: duplicate param " .. string.format("%q", p.name), 2)
    end
    decl[i], decl.by_name[p.name] = p, p
  end
  decl._check = compile(decl)
  return decl
end

-- The type codes of the codec's params shapes (src/shape.c): upper case
-- for a required param.
local shape_codes = { number = "n", integer = "i", string = "s", boolean = "b", table = "t",
  array = "a", object = "o", any = "x" }

--- The declaration as the codec checks it while decoding (codec:shapes):
--- names in order, each name's index, and at [0] one type code per param.
--- The codec hands over params that fit as the named table the checker
--- would build; any others come as decoded, for the checker.
---@return table shape
function Decl:shape()
  local shape, codes = {}, {}
  for i = 1, #self do
    local p = self[i]
    local code = shape_codes[p.type]
    codes[i] = p.optional and code or code:upper()
    shape[i], shape[p.name] = p.name, i
  end
  shape[0] = table.concat(codes)
  return shape
end

--- Count the userdata `v` as JSON null for optional params (see jrpc.add_null).
function M.add_null(v)
  extra_nulls[v] = true
  -- the codec's check of declared params (src/shape.c) asks the core's set
  if type(v) == "userdata" then core.add_null(v) end
end

--- True for a value made by `declare`.
function M.is_decl(v)
  return getmetatable(v) == Decl
end

return M
