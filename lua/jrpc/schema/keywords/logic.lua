--- Keywords that combine subschemas on the same value: allOf, anyOf,
-- oneOf, not, and if/then/else.
local value = require "jrpc.schema.value"
local P = require "jrpc.schema.path"
local merge = require("jrpc.schema.annotations").merge

local push, format, is_list = P.push, P.format, value.is_list

local function schema_list(c, list, ptr)
  if not is_list(list) or #list == 0 then c:fail(ptr, "expected a non-empty array of schemas") end
  local subs = {}
  for i = 1, #list do subs[i] = c:compile(list[i], ptr .. "/" .. (i - 1)) end
  return subs
end

-- Why each branch failed, for the message of anyOf and oneOf: the first
-- failure of each, "[0] /a: expected string, got number; [1] ...".
local function reasons(subs, v, path)
  local parts = {}
  for i = 1, #subs do
    local errs = {}
    if not subs[i](v, path, errs) and errs[1] then
      parts[#parts + 1] = ("[%d] %s"):format(i - 1, format(errs[1]))
    end
  end
  return table.concat(parts, "; ")
end

local function all_of(c, list, _, ptr)
  local subs = schema_list(c, list, ptr)
  local n = #subs
  return function(v, _, path, errs, my)
    local ok = true
    for i = 1, n do
      if not subs[i](v, path, errs, my) then
        if not errs then return false end
        ok = false
      end
    end
    return ok
  end
end

local function any_of(c, list, _, ptr)
  local subs = schema_list(c, list, ptr)
  local n = #subs
  return function(v, _, path, errs, my)
    local ok = false
    for i = 1, n do
      -- With annotations wanted, every branch runs: each valid one counts.
      if subs[i](v, nil, nil, my) then
        ok = true
        if not my then break end
      end
    end
    if ok then return true end
    if errs then push(errs, path, "matches no schema of anyOf: " .. reasons(subs, v, path)) end
    return false
  end
end

local function one_of(c, list, _, ptr)
  local subs = schema_list(c, list, ptr)
  local n = #subs
  return function(v, _, path, errs, my)
    local first, second
    local keep = my and {}
    for i = 1, n do
      if subs[i](v, nil, nil, keep) then
        if first then second = i; break end
        first = i
      end
    end
    if first and not second then
      if my then merge(my, keep) end
      return true
    end
    if errs then
      if first then
        push(errs, path, ("matches more than one schema of oneOf (%d and %d)"):format(first - 1, second - 1))
      else
        push(errs, path, "matches no schema of oneOf: " .. reasons(subs, v, path))
      end
    end
    return false
  end
end

local function not_(c, schema, _, ptr)
  local sub = c:compile(schema, ptr)
  return function(v, _, path, errs)
    if not sub(v, nil, nil) then return true end
    if errs then push(errs, path, "must not match the schema in not") end
    return false
  end
end

local function if_(c, schema, node, ptr)
  local parent = ptr:sub(1, -#"/if" - 1)
  local cond = c:compile(schema, ptr)
  local yes = node["then"] ~= nil and c:compile(node["then"], parent .. "/then")
  local no = node["else"] ~= nil and c:compile(node["else"], parent .. "/else")
  if not yes and not no and not c.track then return nil end
  return function(v, _, path, errs, my)
    if cond(v, nil, nil, my) then
      return not yes or yes(v, path, errs, my)
    end
    return not no or no(v, path, errs, my)
  end
end

return {
  { "allOf", all_of },
  { "anyOf", any_of },
  { "oneOf", one_of },
  { "not", not_ },
  { "if", if_ },
}
