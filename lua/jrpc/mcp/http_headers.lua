--- The checks Streamable HTTP (2026-07-28) makes of a POST's headers
-- against its JSON-RPC body, before the message is dispatched: the
-- standard headers must repeat what the body says (`MCP-Protocol-Version`,
-- `Mcp-Method`, `Mcp-Name`), and so must the `Mcp-Param-{Name}` headers of
-- the tool arguments its input schema marks with `x-mcp-header`, after
-- decoding the base64 sentinel. Also the rules for those marks, checked
-- when a tool is registered. Pure functions: the transport (mcp/http.lua)
-- answers what they find.
local core = require "jrpc.core"
local protocol = require "jrpc.mcp.protocol"
local errors = require "jrpc.errors"

local M = {}

-- The methods whose `Mcp-Name` header repeats a params member.
-- (the tasks extension's methods name their task so)
local NAME_OF = { ["tools/call"] = "name", ["prompts/get"] = "name", ["resources/read"] = "uri",
  ["tasks/get"] = "taskId", ["tasks/update"] = "taskId", ["tasks/cancel"] = "taskId" }

local B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
local B64_VALUE = {}
for i = 1, #B64 do B64_VALUE[B64:byte(i)] = i - 1 end

--- Decode standard base64 (RFC 4648 section 4, with its padding); nil
--- when `s` is not canonical base64: a length that is not a multiple of 4,
--- a character outside the alphabet, padding anywhere but at the end, or
--- bits left over after the last byte. Strict, so that one body value has
--- one header spelling (the conformance suite rejects missing padding).
---@param s string
---@return string|nil
function M.base64_decode(s)
  local pad = #s:match("=*$")
  if #s % 4 ~= 0 or pad > 2 then return nil end
  local out, bits, nbits = {}, 0, 0
  for i = 1, #s - pad do
    local v = B64_VALUE[s:byte(i)]
    if v == nil then return nil end
    bits, nbits = (bits % 4096) * 64 + v, nbits + 6  -- at most 18 bits kept
    if nbits >= 8 then
      nbits = nbits - 8
      out[#out + 1] = string.char(math.floor(bits / 2 ^ nbits) % 256)
    end
  end
  if bits % 2 ^ nbits ~= 0 then return nil end
  return table.concat(out)
end

--- Encode standard base64 (RFC 4648 section 4, padded): what
--- `base64_decode` takes back.
---@param s string
---@return string
function M.base64_encode(s)
  local out = {}
  for i = 1, #s, 3 do
    local a, b, c = s:byte(i, i + 2)
    local n = a * 65536 + (b or 0) * 256 + (c or 0)
    local quad = {}
    for k = 1, 4 do
      local v = math.floor(n / 2 ^ (6 * (4 - k))) % 64
      quad[k] = B64:sub(v + 1, v + 1)
    end
    if b == nil then quad[3] = "=" end
    if c == nil then quad[4] = "=" end
    out[#out + 1] = table.concat(quad)
  end
  return table.concat(out)
end

--- A body value spelt as a header value (the inverse of `decode_value`):
--- a string as is, an integer in decimal, a boolean `true`/`false`; the
--- `=?base64?...?=` sentinel when the plain spelling is not safe (controls,
--- non-ASCII, leading or trailing blanks) or would itself read as one.
---@param v string|number|boolean
---@return string
function M.encode_value(v)
  if type(v) == "boolean" then return tostring(v) end
  if type(v) == "number" then
    return (v % 1 == 0 and v > -2 ^ 53 and v < 2 ^ 53) and ("%d"):format(v) or tostring(v)
  end
  local s = tostring(v)
  local unsafe = s:find("[%z\1-\31\127-\255]") or s:find("^[ \t]") or s:find("[ \t]$")
    or s:find("^=%?base64%?.*%?=$")
  if unsafe then return "=?base64?" .. M.base64_encode(s) .. "?=" end
  return s
end

--- A header value as the body would spell it: the `=?base64?...?=`
--- sentinel decoded. Nil when the value has characters RFC 9110 does not
--- allow (controls other than HTAB, or non-ASCII) or a broken sentinel.
---@param value string
---@return string|nil
function M.decode_value(value)
  if value:find("[%z\1-\8\10-\31\127-\255]") then return nil end
  local inner = value:match("^=%?base64%?(.*)%?=$")
  if inner then return M.base64_decode(inner) end
  return value
end

local function mismatch(what)
  return errors.new(protocol.codes.HEADER_MISMATCH, "Header mismatch: " .. what)
end

-- The header must be there and, decoded, equal `want`; `want` nil means
-- the body has nothing to compare with (its own check answers that).
local function same(headers, name, want, required)
  local got = headers[name]
  if got == nil then
    if required then return mismatch(name .. " header is required") end
    return nil
  end
  local value = M.decode_value(got)
  if value == nil then return mismatch(name .. " header has invalid characters or bad base64") end
  if want ~= nil and value ~= tostring(want) then
    return mismatch(name .. " header does not match the body")
  end
  return nil
end

-- {======================================================================
-- x-mcp-header: tool arguments mirrored in Mcp-Param-{Name} headers
-- =======================================================================

-- The types an annotated property may have: the spec leaves out `number`
-- (a float has too many spellings to compare) and anything structured.
local MIRRORABLE = { string = true, integer = true, boolean = true }

-- Schema keywords whose values are data, not schemas: an "x-mcp-header"
-- key inside them marks nothing.
local DATA = { const = true, enum = true, default = true, examples = true }

-- RFC 9110 token (1*tchar): what may follow "Mcp-Param-" in a header name.
local function is_token(s)
  return type(s) == "string" and s:find("^[%w!#$%%&'*+%-.^_`|~]+$") ~= nil
end

-- True when the schema part `t` holds a mark anywhere: a part off the pure
-- `properties` path must hold none.
local function marked(t)
  if t["x-mcp-header"] ~= nil then return true end
  for k, v in pairs(t) do
    if type(v) == "table" and not DATA[k] and marked(v) then return true end
  end
  return false
end

local function copy(list)
  local out = {}
  for i, v in ipairs(list) do out[i] = v end
  return out
end

-- The mark of `node` (reached from the root by the property names in
-- `path`), if any, added to `found`; an error message when it is invalid.
local function add_mark(node, path, found, seen)
  local name = node["x-mcp-header"]
  if name == nil then return nil end
  local where = #path > 0 and ("property %q"):format(table.concat(path, ".")) or "the schema root"
  if not is_token(name) then
    return ("x-mcp-header of %s must be a header-name token (RFC 9110)"):format(where)
  end
  if not MIRRORABLE[node.type] then
    return ("x-mcp-header of %s: only a string, integer or boolean property may be mirrored"):format(where)
  end
  local header = "mcp-param-" .. name:lower()
  if seen[header] then return ("x-mcp-header %q is declared twice (names are case-insensitive)"):format(name) end
  seen[header] = true
  found[#found + 1] = { header = header, name = name, path = copy(path) }
  return nil
end

-- Collect the marks along pure `properties` paths from `node`; an error
-- message for the first invalid or misplaced one.
local function collect(node, path, found, seen)
  local err = add_mark(node, path, found, seen)
  if err then return err end
  for k, v in pairs(node) do
    if k == "properties" and type(v) == "table" then
      for prop, sub in pairs(v) do
        if type(sub) == "table" then
          path[#path + 1] = tostring(prop)
          err = collect(sub, path, found, seen)
          path[#path] = nil
          if err then return err end
        end
      end
    elseif type(v) == "table" and not DATA[k] and marked(v) then
      return ("x-mcp-header may be used only along properties, not under %q"):format(tostring(k))
    end
  end
  return nil
end

--- The arguments a tool's input schema marks with `x-mcp-header`, as a list
--- of `{header, name, path}` (`header` the lower-case header name, `path`
--- the property names from the root); or nil and why a mark is invalid (a
--- client drops such a tool, so the registry refuses it).
---@param schema table
---@return table|nil mirrored
---@return string|nil err
function M.mirrored_arguments(schema)
  local found = {}
  local err = collect(schema, {}, found, {})
  if err then return nil, err end
  return found
end

-- The argument at `path` in `args`: nil when absent or null (either way the
-- client sends no header).
local function argument(args, path)
  local v = args
  for _, name in ipairs(path) do
    if type(v) ~= "table" then return nil end
    v = v[name]
  end
  if v == core.null then return nil end
  return v
end

-- True when the decoded header value spells the body's `value`.
local function spells(value, decoded)
  if type(value) == "number" then
    -- integers are compared as numbers (the spec's SHOULD): "007" is 7
    return decoded:find("^%-?%d+$") ~= nil and tonumber(decoded) == value
  end
  return decoded == tostring(value)
end

-- Each mirrored argument's header must be there exactly when the argument
-- is, and spell it. An object or array where a mark stands is left to the
-- arguments check (-32602): no header can spell it.
local function same_arguments(headers, mirrored, args)
  for _, m in ipairs(mirrored) do
    local value, got = argument(args, m.path), headers[m.header]
    local label = "Mcp-Param-" .. m.name .. " header"
    if value == nil then
      if got ~= nil then return mismatch(label .. " names an argument the body does not have") end
    elseif type(value) ~= "table" then
      if got == nil then return mismatch(label .. " is required: the body has the argument") end
      local decoded = M.decode_value(got)
      if decoded == nil then return mismatch(label .. " has invalid characters or bad base64") end
      if not spells(value, decoded) then return mismatch(label .. " does not match the body") end
    end
  end
  return nil
end

--- The headers a client sends with message `msg` (the other side of
--- `check`): `MCP-Protocol-Version` from its `_meta` (when it names one),
--- `Mcp-Method`, `Mcp-Name`, and for a `tools/call` the `Mcp-Param-{Name}`
--- header of each argument `mirrored` lists that the call has (absent and
--- null ones have none; so have objects and arrays, which no header spells).
---@param msg table
---@param mirrored? table  from `mirrored_arguments`
---@return table<string, string>
function M.for_message(msg, mirrored)
  local params = type(msg.params) == "table" and msg.params or {}
  local meta = type(params._meta) == "table" and params._meta or {}
  local h = {}
  local version = meta[protocol.keys.protocol_version]
  if version ~= nil then h["MCP-Protocol-Version"] = tostring(version) end
  if msg.method then h["Mcp-Method"] = msg.method end
  local member = NAME_OF[msg.method]
  if member and params[member] ~= nil then h["Mcp-Name"] = M.encode_value(params[member]) end
  if msg.method == "tools/call" then
    for _, m in ipairs(mirrored or {}) do
      local v = argument(params.arguments, m.path)
      if v ~= nil and type(v) ~= "table" then h["Mcp-Param-" .. m.name] = M.encode_value(v) end
    end
  end
  return h
end

-- }======================================================================

--- Check a decoded message `msg` against the request headers (lower-case
--- names). Returns nil, or the -32020 error to answer with HTTP 400. The
--- comparison comes before any version check, as the spec orders them: a
--- header naming our version with a body naming another is a mismatch.
--- `mirrored` (from `mirrored_arguments`) lists the called tool's
--- arguments that `Mcp-Param-*` headers repeat; other `Mcp-Param-*`
--- headers are ignored, as the spec gives them no meaning.
---@param headers table<string, string>
---@param msg table
---@param mirrored? table
---@return jrpc.Error|nil
function M.check(headers, msg, mirrored)
  local params = type(msg.params) == "table" and msg.params or {}
  local meta = type(params._meta) == "table" and params._meta or {}
  local is_request = msg.id ~= nil
  local body_version = meta[protocol.keys.protocol_version]
  local err = same(headers, "mcp-protocol-version", body_version, true)
    or same(headers, "mcp-method", msg.method, is_request)
  if err then return err end
  local member = NAME_OF[msg.method]
  if member and is_request then
    err = same(headers, "mcp-name", params[member], true)
    if err then return err end
  end
  if mirrored and is_request then return same_arguments(headers, mirrored, params.arguments) end
  return nil
end

return M
