-- JSON text of a value decoded by vim.lsp, with object keys sorted, so
-- results that came through different transports compare as text (used
-- by spec/nvim/lsp_cmd.lua and spec/nvim/lsp_compare.lua, inside Neovim).
local function json(v)
  if v == nil then return "nil" end
  if type(v) ~= "table" or getmetatable(v) == getmetatable(vim.empty_dict()) or (vim.islist or vim.tbl_islist)(v) then
    if type(v) ~= "table" or next(v) == nil then return vim.json.encode(v) end
    local items = {}
    for i = 1, #v do items[i] = json(v[i]) end
    return "[" .. table.concat(items, ",") .. "]"
  end
  local keys = vim.tbl_keys(v)
  table.sort(keys)
  local items = {}
  for _, k in ipairs(keys) do items[#items + 1] = vim.json.encode(k) .. ":" .. json(v[k]) end
  return "{" .. table.concat(items, ",") .. "}"
end

return json
