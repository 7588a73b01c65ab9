--- Command-line parsing for the `jrpc` command: options described as data,
-- so every subcommand (call, mcp) parses the same way.
--
--     local opts, words = args.parse(argv, 2, {
--       { "--timeout", value = "S", check = args.positive_number },
--       { "--header", value = "K: V", many = true },   -- repeatable: a list
--       { "--trace" },
--     })
--
-- Options may come before, between or after the positional words, as
-- `--name VALUE` or `--name=VALUE`; `--` ends the options (a METHOD that
-- starts with "-"). A problem is returned as `nil, message`, never raised:
-- the caller turns it into a usage error (exit 2).
local options = require "jrpc.options"

local M = {}

-- The named fields of an option spec (its name is spec[1]).
local SPEC = options.set{ "value", "check", "many" }

--- `check` for a number of seconds > 0 (e.g. `--timeout 0.5`).
---@param s string
---@return number|nil value
---@return string|nil problem
function M.positive_number(s)
  local n = tonumber(s)
  if n == nil or n ~= n or n <= 0 or n == math.huge then return nil, "must be a number of seconds > 0" end
  return n
end

--- `check` for one word of a fixed set: `args.one_of{ "ndjson", "lsp" }`.
---@param words string[]
---@return fun(s: string): string|nil, string|nil
function M.one_of(words)
  return function(s)
    for _, w in ipairs(words) do
      if s == w then return s end
    end
    return nil, "must be one of " .. table.concat(words, ", ")
  end
end

-- A spec's fields are checked like any options table: a misspelt one
-- (`vaule`) raises instead of making the option a flag.
local function check_specs(specs)
  for _, spec in ipairs(specs) do
    local named = {}
    for k, v in pairs(spec) do
      if k ~= 1 then named[k] = v end
    end
    options.check("jrpc.cli.args: option " .. tostring(spec[1]), named, 3, SPEC)
  end
end

local function find_spec(specs, name)
  for _, spec in ipairs(specs) do
    if spec[1] == name then return spec end
  end
end

-- The key an option is stored under: "--tcp" -> "tcp", "--no-x" -> "no_x".
local function key_of(name)
  return (name:gsub("^%-%-", ""):gsub("%-", "_"))
end

-- Store one option; `value` is nil for a flag. Returns the problem, if any.
-- A `many` option may repeat: its values are kept in order, in a list.
local function store(opts, spec, value)
  local key = key_of(spec[1])
  if opts[key] ~= nil and not spec.many then return spec[1] .. " given twice" end
  if not spec.value then
    opts[key] = true
    return nil
  end
  if spec.check then
    local checked, problem = spec.check(value)
    if checked == nil then return ("%s %s: %s"):format(spec[1], value, problem) end
    value = checked
  end
  if spec.many then
    local list = opts[key] or {}
    list[#list + 1] = value
    value = list
  end
  opts[key] = value
end

-- Take the option at argv[i] (with its value); returns the next index, or
-- nil and the problem.
local function take_option(opts, specs, argv, i)
  local name, inline = argv[i]:match("^(%-%-[^=]+)=(.*)$")
  name = name or argv[i]
  local spec = find_spec(specs, name)
  if spec == nil then return nil, "unknown option " .. name end
  local value, next_i = inline, i + 1
  if spec.value and value == nil then
    value = argv[i + 1]
    if value == nil then return nil, name .. " needs a value (" .. spec.value .. ")" end
    next_i = i + 2
  elseif not spec.value and value ~= nil then
    return nil, name .. " takes no value"
  end
  local problem = store(opts, spec, value)
  if problem then return nil, problem end
  return next_i
end

--- Parse `argv[first..]` against `specs` (a list of `{ "--name", value =
--- "METAVAR"?, check = fn?, many = true? }`). Returns the options by key
--- (`--tcp` -> `tcp`; flags are `true`; a `many` option's values a list)
--- and the positional words, or `nil, problem`.
---@param argv string[]
---@param first integer
---@param specs table[]
---@return table|nil opts
---@return string[]|string words_or_problem
function M.parse(argv, first, specs)
  check_specs(specs)
  local opts, words, only_words = {}, {}, false
  local i = first
  while argv[i] ~= nil do
    local a = argv[i]
    if only_words or a == "-" or a:sub(1, 1) ~= "-" then
      words[#words + 1] = a
      i = i + 1
    elseif a == "--" then
      only_words, i = true, i + 1
    elseif a:sub(1, 2) ~= "--" then
      return nil, "unknown option " .. a
    else
      local next_i, problem = take_option(opts, specs, argv, i)
      if next_i == nil then return nil, problem end
      i = next_i
    end
  end
  return opts, words
end

return M
