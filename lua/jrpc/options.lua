--- Checked options tables: every options table of the library goes through
-- `check`, so a misspelt option is an error that names it (and the closest
-- known name) instead of a setting silently ignored.
local M = {}

--- A set `{name = true, ...}` of the names in `list` (and in the sets given
--- after it, so a module can extend another's set).
---@param list string[]
---@return table<string, boolean>
function M.set(list, ...)
  local s = {}
  for i = 1, #list do s[list[i]] = true end
  for i = 1, select("#", ...) do
    for name in pairs((select(i, ...))) do s[name] = true end
  end
  return s
end

-- Levenshtein distance, for the "did you mean" hint (names are short).
local function distance(a, b)
  local prev = {}
  for j = 0, #b do prev[j] = j end
  for i = 1, #a do
    local cur = { [0] = i }
    for j = 1, #b do
      local cost = a:byte(i) == b:byte(j) and 0 or 1
      cur[j] = math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
    end
    prev = cur
  end
  return prev[#b]
end

local function closest(name, sets, n)
  local best, best_d
  for i = 1, n do
    for known in pairs(sets[i]) do
      local d = distance(name, known)
      if d <= 2 and (best_d == nil or d < best_d or (d == best_d and known < best)) then
        best, best_d = known, d
      end
    end
  end
  return best
end

--- Raise unless `opts` is nil or a table whose keys are all in one of the
--- sets given (see `set`). `where` names the function in the message
--- ("jrpc.peer: unknown option 'tmeout' (did you mean 'timeout'?)").
--- `level` counts as `error`'s does, from the function that calls check
--- (1: that function, 2: its caller; default 3). Returns `opts`, or an
--- empty table for nil.
---@param where string
---@param opts table|nil
---@param level integer|nil
---@return table
function M.check(where, opts, level, ...)
  level = (level or 3) + 1
  if opts == nil then return {} end
  if type(opts) ~= "table" then
    error(("%s: expected an options table, got %s"):format(where, type(opts)), level)
  end
  local n = select("#", ...)
  local sets = { ... }
  for key in pairs(opts) do
    local known = false
    for i = 1, n do
      if sets[i][key] then known = true; break end
    end
    if not known then
      if type(key) ~= "string" then
        error(("%s: options must be named, got key %s"):format(where, tostring(key)), level)
      end
      local hint = closest(key, sets, n)
      error(("%s: unknown option '%s'%s"):format(where, key,
        hint and (" (did you mean '%s'?)"):format(hint) or ""), level)
    end
  end
  return opts
end

--- The entries of `opts` whose names are in `names` (a set), as a new table:
--- a layer passes on the options that belong to the next one.
---@param opts table
---@param names table<string, boolean>
---@return table
function M.pick(opts, names)
  local o = {}
  for k, v in pairs(opts) do
    if names[k] then o[k] = v end
  end
  return o
end

return M
