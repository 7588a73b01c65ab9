--- What a subschema evaluated in a value, for unevaluatedProperties and
-- unevaluatedItems: `props` (set of names), `items` (count of leading
-- items), `all` (every item), `idx` (set of item indices, from contains).
-- A subschema's annotations reach the schema around it only when it is
-- valid.
local M = {}

--- Add the annotations `from` to `into`.
function M.merge(into, from)
  local p = from.props
  if p then
    local ip = into.props
    if not ip then ip = {}; into.props = ip end
    for k in pairs(p) do ip[k] = true end
  end
  if from.items and (into.items == nil or from.items > into.items) then into.items = from.items end
  if from.all then into.all = true end
  local x = from.idx
  if x then
    local ix = into.idx
    if not ix then ix = {}; into.idx = ix end
    for k in pairs(x) do ix[k] = true end
  end
end

return M
