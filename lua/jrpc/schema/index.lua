--- One pass over a schema document before it is compiled: the base URI of
-- every subschema (`$id`), the resources and anchors `$ref` can name, and
-- whether any subschema asks for `unevaluated*` (then the checks keep track
-- of what was evaluated; otherwise they skip that work).
local uri = require "jrpc.schema.uri"
local value = require "jrpc.schema.value"

local M = {}

--- The base URI of a document without `$id`: `$ref`s that are fragments or
--- relative resolve against it, so they stay within the document.
M.ROOT = "jrpc:/schema"

-- Keywords whose value is one schema, a map of schemas, a list of schemas.
M.ONE = { "additionalProperties", "unevaluatedProperties", "unevaluatedItems", "items",
  "contains", "propertyNames", "not", "if", "then", "else" }
M.MAP = { "properties", "patternProperties", "$defs", "dependentSchemas" }
M.LIST = { "allOf", "anyOf", "oneOf", "prefixItems" }

local function walk(ix, node, base)
  if type(node) ~= "table" or value.kind(node) ~= "object" then return end
  local id = node["$id"]
  if type(id) == "string" then
    local abs = uri.split(uri.resolve(base, id))
    base = abs
    ix.resources[abs] = node
  end
  ix.base[node] = base
  local anchor = node["$anchor"]
  if type(anchor) == "string" then ix.anchors[base .. "#" .. anchor] = node end
  local dyn = node["$dynamicAnchor"]
  if type(dyn) == "string" then
    ix.anchors[base .. "#" .. dyn] = node
    local set = ix.dynamic[base]
    if not set then set = {}; ix.dynamic[base] = set end
    set[dyn] = node
  end
  if node["$dynamicRef"] ~= nil then ix.scoped = true end
  if node.unevaluatedProperties ~= nil or node.unevaluatedItems ~= nil then ix.track = true end
  for _, k in ipairs(M.ONE) do walk(ix, node[k], base) end
  for _, k in ipairs(M.MAP) do
    local m = node[k]
    if type(m) == "table" then
      for _, sub in pairs(m) do walk(ix, sub, base) end
    end
  end
  for _, k in ipairs(M.LIST) do
    local l = node[k]
    if value.is_list(l) then
      for i = 1, #l do walk(ix, l[i], base) end
    end
  end
end

--- The index of the document `root`: `resources` (absolute URI → schema),
--- `anchors` (URI#name → schema), `base` (schema → its base URI),
--- `dynamic` (base URI → $dynamicAnchor name → schema), `track` (some
--- schema uses unevaluated*), `scoped` (some schema uses $dynamicRef).
function M.build(root)
  local ix = { resources = {}, anchors = {}, base = {}, dynamic = {}, track = false, scoped = false }
  ix.resources[M.ROOT] = root
  walk(ix, root, M.ROOT)
  return ix
end

--- The schema that `ref` names, seen from a schema whose base URI is
--- `base`, and the target's own base URI; nil and the absolute URI when
--- the document has no such place.
function M.resolve(ix, base, ref)
  local abs = uri.resolve(base, ref)
  local doc, fragment = uri.split(abs)
  local node = ix.resources[doc]
  if node == nil then return nil, abs end
  if fragment == nil or fragment == "" then return node, ix.base[node] or doc end
  local tokens = uri.pointer_tokens(fragment)
  if tokens == nil then
    local target = ix.anchors[doc .. "#" .. fragment]
    if target == nil then return nil, abs end
    return target, ix.base[target] or doc
  end
  local at, at_base = node, doc
  for _, tok in ipairs(tokens) do
    if type(at) ~= "table" then return nil, abs end
    if value.kind(at) == "array" then
      local i = tok:match("^%d+$") and tonumber(tok)
      at = i and at[i + 1]
    else
      at = at[tok]
    end
    if at == nil then return nil, abs end
    if type(at) == "table" and ix.base[at] then at_base = ix.base[at] end
  end
  return at, at_base
end

return M
