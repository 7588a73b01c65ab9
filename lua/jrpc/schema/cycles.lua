--- A schema whose `$ref`s lead back to themselves without moving into the
-- value (`{"$defs": {"a": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"}`)
-- would recurse until the stack overflows on every check: it is refused
-- when compiled. The walk follows only the keywords that apply a subschema
-- to the same value; properties, items and the like move into the value
-- and so end any loop.
local index = require "jrpc.schema.index"
local value = require "jrpc.schema.value"

local M = {}

local ONE = { "not", "if", "then", "else" }
local LIST = { "allOf", "anyOf", "oneOf" }

-- The subschemas applied to the same value as `node`, with their bases.
local function in_place(ix, node, base)
  local out = {}
  local function add(sub, b)
    if type(sub) == "table" then out[#out + 1] = { sub, ix.base[sub] or b } end
  end
  for _, key in ipairs { "$ref", "$dynamicRef" } do
    if type(node[key]) == "string" then
      local target, tbase = index.resolve(ix, base, node[key])
      if target then add(target, tbase) end
    end
  end
  for _, k in ipairs(ONE) do add(node[k], base) end
  for _, k in ipairs(LIST) do
    local l = node[k]
    if value.is_list(l) then
      for i = 1, #l do add(l[i], base) end
    end
  end
  if type(node.dependentSchemas) == "table" then
    for _, sub in pairs(node.dependentSchemas) do add(sub, base) end
  end
  return out
end

--- The `$ref` value that closes a loop reachable from `root`, or nil.
function M.find(ix, root)
  local state = {}                                  -- node → "open" | "done"
  local function visit(node, base)
    state[node] = "open"
    for _, e in ipairs(in_place(ix, node, base)) do
      local sub = e[1]
      if state[sub] == "open" then return node["$ref"] or node["$dynamicRef"] or "(a subschema)" end
      if state[sub] == nil and value.kind(sub) == "object" then
        local found = visit(sub, e[2])
        if found then return found end
      end
    end
    state[node] = "done"
    return nil
  end
  if type(root) ~= "table" then return nil end
  return visit(root, ix.base[root] or index.ROOT)
end

return M
