--- `$ref`, resolved within the document when the schema is compiled. A
-- reference to anything outside it is a compile error: schemas are never
-- fetched.
local index = require "jrpc.schema.index"
local uri = require "jrpc.schema.uri"

local function ref(c, r, _, ptr, base)
  if type(r) ~= "string" then c:fail(ptr, "expected a URI reference string") end
  local target, tbase = index.resolve(c.ix, base, r)
  if target == nil then
    c:fail(ptr, ("cannot resolve $ref %q (%s): only references within the schema document"
      .. " are followed, none is fetched"):format(r, tbase))
  end
  local f = c:target(target, ptr, tbase)
  return function(v, _, path, errs, my) return f(v, path, errs, my) end, target
end

-- $dynamicRef: like $ref, unless its target has a $dynamicAnchor of the
-- fragment's name; then the outermost resource of the dynamic scope that
-- has a $dynamicAnchor of that name is used (that is how a generic schema
-- lets the schema that refers to it extend it).
local function dynamic_ref(c, r, _, ptr, base)
  local static, target = ref(c, r, nil, ptr, base)
  local _, fragment = uri.split(uri.resolve(base, r))
  local name = fragment and fragment ~= "" and fragment:sub(1, 1) ~= "/" and fragment
  if not name or type(target) ~= "table" or target["$dynamicAnchor"] ~= name then return static end
  local candidates = {}
  for b, set in pairs(c.ix.dynamic) do
    if set[name] then candidates[b] = c:target(set[name], ptr, b) end
  end
  local scope = c.scope
  return function(v, k, path, errs, my)
    for i = 1, scope.n do
      local f = candidates[scope[i]]
      if f then return f(v, path, errs, my) end
    end
    return static(v, k, path, errs, my)
  end
end

return {
  { "$ref", ref },
  { "$dynamicRef", dynamic_ref },
}
