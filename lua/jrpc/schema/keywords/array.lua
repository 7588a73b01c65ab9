--- Keywords for arrays: prefixItems, items, contains (with minContains and
-- maxContains), maxItems, minItems, uniqueItems.
local value = require "jrpc.schema.value"
local P = require "jrpc.schema.path"
local scalar = require "jrpc.schema.keywords.scalar"

local push, child, equal, is_list = P.push, P.child, value.equal, value.is_list

local function prefix_items(c, list, _, ptr)
  if not is_list(list) or #list == 0 then c:fail(ptr, "expected a non-empty array of schemas") end
  local subs, n = {}, #list
  for i = 1, n do subs[i] = c:compile(list[i], ptr .. "/" .. (i - 1)) end
  return function(v, k, path, errs, my)
    if k ~= "array" then return true end
    local len, ok = #v, true
    local last = len < n and len or n
    for i = 1, last do
      if not subs[i](v[i], errs and child(path, i - 1), errs) then
        if not errs then return false end
        ok = false
      end
    end
    if my and last > 0 and (my.items == nil or my.items < last) then my.items = last end
    return ok
  end
end

local function items(c, schema, node, ptr)
  local sub = c:compile(schema, ptr)
  local from = is_list(node.prefixItems) and #node.prefixItems or 0
  return function(v, k, path, errs, my)
    if k ~= "array" then return true end
    local ok = true
    for i = from + 1, #v do
      if not sub(v[i], errs and child(path, i - 1), errs) then
        if not errs then return false end
        ok = false
      end
    end
    if my and #v > from then my.all = true end
    return ok
  end
end

local function contains(c, schema, node, ptr)
  local sub = c:compile(schema, ptr)
  local parent = ptr:sub(1, -#"/contains" - 1)
  local min, max = node.minContains, node.maxContains
  if min ~= nil then scalar.count(c, min, parent .. "/minContains") else min = 1 end
  if max ~= nil then scalar.count(c, max, parent .. "/maxContains") end
  return function(v, k, path, errs, my)
    if k ~= "array" then return true end
    local found = 0
    for i = 1, #v do
      if sub(v[i], nil, nil) then
        found = found + 1
        if my then
          my.idx = my.idx or {}
          my.idx[i] = true
        elseif max == nil and found >= min then
          return true
        end
      end
    end
    if found < min then
      if errs then
        push(errs, path, ("expected at least %d item%s matching contains, got %d")
          :format(min, min == 1 and "" or "s", found))
      end
      return false
    end
    if max and found > max then
      if errs then
        push(errs, path, ("expected at most %d item%s matching contains, got %d")
          :format(max, max == 1 and "" or "s", found))
      end
      return false
    end
    return true
  end
end

local function size(at_most)
  return function(c, n, _, ptr)
    scalar.count(c, n, ptr)
    local text = ("expected %s %d item%s, got "):format(at_most and "at most" or "at least", n,
      n == 1 and "" or "s")
    return function(v, k, path, errs)
      if k ~= "array" then return true end
      local len = #v
      if at_most and len <= n or not at_most and len >= n then return true end
      if errs then push(errs, path, text .. len) end
      return false
    end
  end
end

local function unique_items(c, flag, _, ptr)
  if type(flag) ~= "boolean" then c:fail(ptr, "expected a boolean") end
  if not flag then return nil end
  return function(v, k, path, errs)
    if k ~= "array" then return true end
    -- Scalars by table lookup, containers pairwise (arrays are short).
    local seen, tables = {}, {}
    for i = 1, #v do
      local x = v[i]
      local dup
      if type(x) == "table" then
        for j = 1, #tables do
          if equal(tables[j][1], x) then dup = tables[j][2]; break end
        end
        tables[#tables + 1] = { x, i }
      elseif x == x then
        dup = seen[x]
        if not dup then seen[x] = i end
      end
      if dup then
        if errs then
          push(errs, path, ("expected unique items, got items %d and %d equal"):format(dup - 1, i - 1))
        end
        return false
      end
    end
    return true
  end
end

return {
  { "prefixItems", prefix_items },
  { "items", items },
  { "contains", contains },
  { "maxItems", size(true) },
  { "minItems", size(false) },
  { "uniqueItems", unique_items },
}
