--- JSON values as jrpc's core decodes them, seen the way JSON Schema sees
-- them: the kind of a value, deep equality, a string's length in code
-- points, and a short rendering for messages.
local core = require "jrpc.core"

local null, array_mt, object_mt = core.null, core.array_mt, core.object_mt
local type, getmetatable, rawget, pairs, next = type, getmetatable, rawget, pairs, next
local floor, huge = math.floor, math.huge

local M = {}

--- "null", "boolean", "integer", "number", "string", "array" or "object"
--- (nil for a value JSON has no word for). The core marks decoded arrays
--- with `array_mt`; a table without a mark is an array when it has [1],
--- else an object, which is how the encoder writes it (an empty unmarked
--- table is `{}`). A number with no fraction is an integer, as JSON Schema
--- says (1.0 is an integer), on Lua 5.4 and LuaJIT alike.
function M.kind(v)
  local t = type(v)
  if t == "string" or t == "boolean" then return t end
  if t == "number" then
    if v % 1 == 0 and v > -huge and v < huge then return "integer" end
    return "number"
  end
  if t == "table" then
    local mt = getmetatable(v)
    if mt == array_mt then return "array" end
    if mt == object_mt then return "object" end
    if rawget(v, 1) ~= nil then return "array" end
    return "object"
  end
  if v == null then return "null" end
  return nil
end
local kind = M.kind

--- The same test for a schema's own arrays (`required`, `enum`, `allOf`):
--- there an empty unmarked table is an empty array, since the keyword
--- takes one (a Lua author writes `required = {}`).
function M.is_list(v)
  if type(v) ~= "table" then return false end
  local mt = getmetatable(v)
  if mt == array_mt then return true end
  if mt == object_mt then return false end
  return rawget(v, 1) ~= nil or next(v) == nil
end

--- Deep equality by JSON's rules: 1 and 1.0 are equal, key order does not
--- matter, an array never equals an object.
local function equal(a, b)
  if a == b then return true end
  local ka = kind(a)
  if ka == "integer" or ka == "number" then
    return type(b) == "number" and a == b
  end
  if ka ~= kind(b) then return false end
  if ka == "array" then
    local n = #a
    if #b ~= n then return false end
    for i = 1, n do
      if not equal(a[i], b[i]) then return false end
    end
    return true
  end
  if ka == "object" then
    for k, va in pairs(a) do
      local vb = b[k]
      if vb == nil or not equal(va, vb) then return false end
    end
    for k in pairs(b) do
      if a[k] == nil then return false end
    end
    return true
  end
  return false
end
M.equal = equal

local utf8_len = rawget(_G, "utf8") and utf8.len
local gsub = string.gsub

--- Length in code points (a JSON Schema string length); bytes that are not
--- UTF-8 continuation bytes each start one.
function M.length(s)
  local n = utf8_len and utf8_len(s)
  if n then return n end
  local _, c = gsub(s, "[^\128-\191]", "")
  return c
end

--- A value as short JSON text for a message (cut at 60 bytes).
function M.show(v)
  local k = kind(v)
  local s
  if k == "integer" and type(v) == "number" and v == floor(v) and v > -2^53 and v < 2^53 then
    s = ("%d"):format(v)
  else
    s = core.encode(v)
  end
  if s == nil then return "a " .. type(v) end
  if #s > 60 then
    -- cut on a character boundary: the message may be sent as JSON
    local cut = 57
    while cut > 1 and s:byte(cut + 1) >= 0x80 and s:byte(cut + 1) < 0xC0 do cut = cut - 1 end
    s = s:sub(1, cut) .. "..."
  end
  return s
end

return M
