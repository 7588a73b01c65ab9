--- Keywords for objects: required, properties, patternProperties,
-- additionalProperties, dependentRequired, dependentSchemas, propertyNames,
-- maxProperties, minProperties.
local value = require "jrpc.schema.value"
local regex = require "jrpc.schema.regex"
local P = require "jrpc.schema.path"
local scalar = require "jrpc.schema.keywords.scalar"

local push, child, kind, is_list, show = P.push, P.child, value.kind, value.is_list, value.show
local pairs, type, sort = pairs, type, table.sort

local M = {}

--- The string keys of the object `v`, sorted (reports list failures in a
--- stable order; the fast path uses pairs).
local function sorted_keys(v)
  local list = {}
  for key in pairs(v) do
    if type(key) == "string" then list[#list + 1] = key end
  end
  sort(list)
  return list
end
M.sorted_keys = sorted_keys

--- Call visit(key, val) for each property: any order on the fast path
--- (stops at the first false), sorted when failures are listed.
local function each(v, errs, visit)
  local ok = true
  if errs then
    local keys = sorted_keys(v)
    for i = 1, #keys do
      if not visit(keys[i], v[keys[i]]) then ok = false end
    end
    return ok
  end
  for key, val in pairs(v) do
    if type(key) == "string" and not visit(key, val) then return false end
  end
  return true
end
M.each = each

local function string_list(c, list, ptr)
  if not is_list(list) then c:fail(ptr, "expected an array of strings") end
  for i = 1, #list do
    if type(list[i]) ~= "string" then c:fail(ptr .. "/" .. (i - 1), "expected a string") end
  end
  return list
end

local function schema_map(c, map, ptr)
  if type(map) ~= "table" or kind(map) ~= "object" then c:fail(ptr, "expected an object of schemas") end
  local subs = {}
  for name, s in pairs(map) do
    subs[name] = c:compile(s, P.child(ptr, name))
  end
  return subs
end

local function required(c, list, _, ptr)
  string_list(c, list, ptr)
  local n = #list
  if n == 0 then return nil end
  return function(v, k, path, errs)
    if k ~= "object" then return true end
    local ok = true
    for i = 1, n do
      if v[list[i]] == nil then
        if not errs then return false end
        push(errs, path, "missing required property " .. show(list[i]))
        ok = false
      end
    end
    return ok
  end
end

local function properties(c, map, _, ptr)
  local subs = schema_map(c, map, ptr)
  local names = sorted_keys(subs)
  local n = #names
  return function(v, k, path, errs, my)
    if k ~= "object" then return true end
    local ok = true
    for i = 1, n do
      local name = names[i]
      local x = v[name]
      if x ~= nil then
        if not subs[name](x, errs and child(path, name), errs) then
          if not errs then return false end
          ok = false
        end
        if my then
          my.props = my.props or {}
          my.props[name] = true
        end
      end
    end
    return ok
  end
end

-- A property name the matcher could not decide on (see regex.lua) fails:
-- a name is never let through unchecked.
local function undecided(errs, path, key, source, why)
  if errs then
    push(errs, child(path, key), ("cannot tell whether the name matches %s: %s"):format(show(source), why))
  end
  return false
end

-- patternProperties as a list of {find, check, source}, sorted by pattern.
local function compile_patterns(c, map, ptr)
  local subs = schema_map(c, map, ptr)
  local list = {}
  for _, source in ipairs(sorted_keys(subs)) do
    local find, why = regex.compile(source)
    if not find then c:fail(P.child(ptr, source), ("unsupported pattern %s: %s"):format(show(source), why)) end
    list[#list + 1] = { find, subs[source], source }
  end
  return list
end

local function pattern_properties(c, map, _, ptr)
  local list = compile_patterns(c, map, ptr)
  local n = #list
  return function(v, k, path, errs, my)
    if k ~= "object" then return true end
    return each(v, errs, function(key, x)
      local ok = true
      for i = 1, n do
        local hit, why = list[i][1](key)
        if hit == nil then return undecided(errs, path, key, list[i][3], why) end
        if hit then
          if not list[i][2](x, errs and child(path, key), errs) then ok = false end
          if my then
            my.props = my.props or {}
            my.props[key] = true
          end
          if not ok and not errs then return false end
        end
      end
      return ok
    end)
  end
end

local function additional_properties(c, schema, node, ptr)
  local sub = c:compile(schema, ptr)
  local parent = ptr:sub(1, -#"/additionalProperties" - 1)
  local declared = type(node.properties) == "table" and node.properties or {}
  local patterns = node.patternProperties ~= nil
    and compile_patterns(c, node.patternProperties, parent .. "/patternProperties") or {}
  local np = #patterns
  return function(v, k, path, errs, my)
    if k ~= "object" then return true end
    return each(v, errs, function(key, x)
      if declared[key] ~= nil then return true end
      for i = 1, np do
        local hit, why = patterns[i][1](key)
        if hit == nil then return undecided(errs, path, key, patterns[i][3], why) end
        if hit then return true end
      end
      if my then
        my.props = my.props or {}
        my.props[key] = true
      end
      return sub(x, errs and child(path, key), errs)
    end)
  end
end

local function dependent_required(c, map, _, ptr)
  if type(map) ~= "table" or kind(map) ~= "object" then c:fail(ptr, "expected an object") end
  local names = sorted_keys(map)
  for _, name in ipairs(names) do string_list(c, map[name], P.child(ptr, name)) end
  return function(v, k, path, errs)
    if k ~= "object" then return true end
    local ok = true
    for _, name in ipairs(names) do
      if v[name] ~= nil then
        local list = map[name]
        for i = 1, #list do
          if v[list[i]] == nil then
            if not errs then return false end
            push(errs, path, ("missing property %s (required when %s is present)")
              :format(show(list[i]), show(name)))
            ok = false
          end
        end
      end
    end
    return ok
  end
end

local function dependent_schemas(c, map, _, ptr)
  local subs = schema_map(c, map, ptr)
  local names = sorted_keys(subs)
  return function(v, k, path, errs, my)
    if k ~= "object" then return true end
    local ok = true
    for _, name in ipairs(names) do
      if v[name] ~= nil and not subs[name](v, path, errs, my) then
        if not errs then return false end
        ok = false
      end
    end
    return ok
  end
end

local function property_names(c, schema, _, ptr)
  local sub = c:compile(schema, ptr)
  return function(v, k, path, errs)
    if k ~= "object" then return true end
    return each(v, errs, function(key)
      if sub(key, nil, nil) then return true end
      if errs then
        local inner = {}
        sub(key, "", inner)
        local why = inner[1] and inner[1].message or "not allowed"
        push(errs, child(path, key), "invalid property name: " .. why)
      end
      return false
    end)
  end
end

local function count_props(v)
  local n = 0
  for key in pairs(v) do
    if type(key) == "string" then n = n + 1 end
  end
  return n
end

local function size(at_most)
  return function(c, n, _, ptr)
    scalar.count(c, n, ptr)
    local text = ("expected %s %d propert%s, got "):format(at_most and "at most" or "at least", n,
      n == 1 and "y" or "ies")
    return function(v, k, path, errs)
      if k ~= "object" then return true end
      local len = count_props(v)
      if at_most and len <= n or not at_most and len >= n then return true end
      if errs then push(errs, path, text .. len) end
      return false
    end
  end
end

local keywords = {
  { "required", required },
  { "properties", properties },
  { "patternProperties", pattern_properties },
  { "additionalProperties", additional_properties },
  { "dependentRequired", dependent_required },
  { "dependentSchemas", dependent_schemas },
  { "propertyNames", property_names },
  { "maxProperties", size(true) },
  { "minProperties", size(false) },
}

for i, kw in ipairs(keywords) do M[i] = kw end
return M
