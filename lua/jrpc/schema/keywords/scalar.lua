--- Keywords for any value (type, enum, const) and for numbers and strings.
local value = require "jrpc.schema.value"
local regex = require "jrpc.schema.regex"
local format = require "jrpc.schema.format"
local push = require("jrpc.schema.path").push

local show, equal, kind, is_list = value.show, value.equal, value.kind, value.is_list
local floor, abs, huge = math.floor, math.abs, math.huge
local mtype = math.type

local TYPES = { null = true, boolean = true, object = true, array = true, number = true,
  string = true, integer = true }

-- The word for a value's type in a message: JSON has one kind of number.
local function noun(k)
  if k == "integer" then return "number" end
  return k or "a value JSON cannot hold"
end

local function type_(c, t, _, ptr)
  local names = {}
  if type(t) == "string" then
    names[1] = t
  elseif is_list(t) and #t > 0 then
    for i = 1, #t do names[i] = t[i] end
  else
    c:fail(ptr, "expected a type name or a non-empty list of them")
  end
  local set = {}
  for _, name in ipairs(names) do
    if not TYPES[name] then
      c:fail(ptr, ("unknown type %s"):format(show(name)))
    end
    set[name] = true
  end
  if set.number then set.integer = true end
  local want = "expected " .. table.concat(names, " or ")
  return function(_, k, path, errs)
    if set[k] then return true end
    if errs then push(errs, path, want .. ", got " .. noun(k)) end
    return false
  end
end

local function enum(c, list, _, ptr)
  if not is_list(list) then c:fail(ptr, "expected an array") end
  -- Scalars are found by table lookup (Lua keys 1 and 1.0 alike, as JSON
  -- equality wants); null, arrays and objects by deep equality.
  local set, deep = {}, {}
  for i = 1, #list do
    local e = list[i]
    if type(e) == "table" or kind(e) == "null" then deep[#deep + 1] = e else set[e] = true end
  end
  local want = "expected one of " .. show(list)
  return function(v, _, path, errs)
    if type(v) ~= "table" and v ~= nil and set[v] then return true end
    for i = 1, #deep do
      if equal(v, deep[i]) then return true end
    end
    if errs then push(errs, path, want .. ", got " .. show(v)) end
    return false
  end
end

local function const(_, want)
  local text = "expected " .. show(want)
  return function(v, _, path, errs)
    if equal(v, want) then return true end
    if errs then push(errs, path, text .. ", got " .. show(v)) end
    return false
  end
end

local function is_number(x) return type(x) == "number" and x == x and x > -huge and x < huge end

local function bound(test, words)
  return function(c, limit, _, ptr)
    if not is_number(limit) then c:fail(ptr, "expected a number") end
    local text = "expected " .. words .. " " .. show(limit)
    return function(v, k, path, errs)
      if (k ~= "integer" and k ~= "number") or test(v, limit) then return true end
      if errs then push(errs, path, text .. ", got " .. show(v)) end
      return false
    end
  end
end

local function multiple_of(c, m, _, ptr)
  if not is_number(m) or m <= 0 then c:fail(ptr, "expected a number greater than 0") end
  local text = "expected a multiple of " .. show(m)
  local int_m = mtype and mtype(m) == "integer"
  return function(v, k, path, errs)
    if k ~= "integer" and k ~= "number" then return true end
    local ok
    if int_m and mtype(v) == "integer" then
      ok = v % m == 0
    else
      -- Decimal multiples are not exact in binary (0.0075 / 0.0001 is not
      -- 75): a quotient within a relative 1e-9 of an integer counts.
      local q = v / m
      if q ~= q or q == huge or q == -huge then
        ok = false
      else
        local r = floor(q + 0.5)
        ok = abs(q - r) <= 1e-9 * (abs(q) > 1 and abs(q) or 1)
      end
    end
    if ok then return true end
    if errs then push(errs, path, text .. ", got " .. show(v)) end
    return false
  end
end

local function count(c, n, ptr)
  if not (is_number(n) and n >= 0 and n % 1 == 0) then
    c:fail(ptr, "expected a non-negative integer")
  end
end

local function length(at_most)
  return function(c, n, _, ptr)
    count(c, n, ptr)
    local text = ("expected %s %s character%s, got "):format(at_most and "at most" or "at least",
      show(n), n == 1 and "" or "s")
    return function(v, k, path, errs)
      if k ~= "string" then return true end
      local len = value.length(v)
      if at_most and len <= n or not at_most and len >= n then return true end
      if errs then push(errs, path, text .. len) end
      return false
    end
  end
end

local function pattern(c, source, _, ptr)
  if type(source) ~= "string" then c:fail(ptr, "expected a regular expression string") end
  local find, bad = regex.compile(source)
  if not find then c:fail(ptr, ("unsupported pattern %s: %s"):format(show(source), bad)) end
  local text = "expected a string matching " .. show(source)
  return function(v, k, path, errs)
    if k ~= "string" then return true end
    local hit, why = find(v)
    if hit then return true end
    if errs then
      if hit == nil then
        push(errs, path, ("cannot tell whether the string matches %s: %s"):format(show(source), why))
      else
        push(errs, path, text .. ", got " .. show(v))
      end
    end
    return false
  end
end

local function format_(c, name, _, ptr)
  if type(name) ~= "string" then c:fail(ptr, "expected a format name") end
  if not c.opts.formats then return nil end
  local test = format.check[name]
  if not test then return nil end
  local text = "expected " .. format.noun(name) .. ", got "
  return function(v, k, path, errs)
    if k ~= "string" or test(v) then return true end
    if errs then push(errs, path, text .. show(v)) end
    return false
  end
end

return {
  { "type", type_ },
  { "enum", enum },
  { "const", const },
  { "multipleOf", multiple_of },
  { "maximum", bound(function(v, l) return v <= l end, "at most") },
  { "exclusiveMaximum", bound(function(v, l) return v < l end, "less than") },
  { "minimum", bound(function(v, l) return v >= l end, "at least") },
  { "exclusiveMinimum", bound(function(v, l) return v > l end, "more than") },
  { "maxLength", length(true) },
  { "minLength", length(false) },
  { "pattern", pattern },
  { "format", format_ },
  count = count,
  noun = noun,
}
