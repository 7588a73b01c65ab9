--- `$ref`, resolved within the document when the schema is compiled. A
-- reference to anything outside it is a compile error: schemas are never
-- fetched.
local index = require "jrpc.schema.index"

local function ref(c, r, _, ptr, base)
  if type(r) ~= "string" then c:fail(ptr, "expected a URI reference string") end
  local target, tbase = index.resolve(c.ix, base, r)
  if target == nil then
    c:fail(ptr, ("cannot resolve $ref %q (%s): only references within the schema document"
      .. " are followed, none is fetched"):format(r, tbase))
  end
  local f = c:target(target, ptr, tbase)
  return function(v, _, path, errs, my) return f(v, path, errs, my) end
end

local function dynamic_ref(c, _, _, ptr)
  c:fail(ptr, "$dynamicRef is not supported")
end

return {
  { "$ref", ref },
  { "$dynamicRef", dynamic_ref },
}
