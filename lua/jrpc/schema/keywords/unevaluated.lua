--- unevaluatedItems and unevaluatedProperties: they apply to what the
-- other keywords of the same schema (and the subschemas those apply in
-- place: allOf, $ref, if/then/else...) did not evaluate. They come last so
-- the annotations of the others are in (`my`, see compile.lua).
local P = require "jrpc.schema.path"
local object = require "jrpc.schema.keywords.object"

local child = P.child

local function unevaluated_items(c, schema, _, ptr)
  local sub = c:compile(schema, ptr)
  return function(v, k, path, errs, my)
    if k ~= "array" then return true end
    if my.all then return true end
    local from, idx, ok = (my.items or 0) + 1, my.idx, true
    for i = from, #v do
      if not (idx and idx[i]) then
        if not sub(v[i], errs and child(path, i - 1), errs) then
          if not errs then return false end
          ok = false
        end
      end
    end
    my.all = true
    return ok
  end
end

local function unevaluated_properties(c, schema, _, ptr)
  local sub = c:compile(schema, ptr)
  return function(v, k, path, errs, my)
    if k ~= "object" then return true end
    local seen = my.props
    local ok = object.each(v, errs, function(key, x)
      if seen and seen[key] then return true end
      return sub(x, errs and child(path, key), errs)
    end)
    if ok then
      seen = seen or {}
      my.props = seen
      for key in pairs(v) do seen[key] = true end
    end
    return ok
  end
end

return {
  { "unevaluatedItems", unevaluated_items },
  { "unevaluatedProperties", unevaluated_properties },
}
