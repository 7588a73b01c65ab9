--- The checks Streamable HTTP (2026-07-28) makes of a POST's headers
-- against its JSON-RPC body, before the message is dispatched: the
-- standard headers must repeat what the body says (`MCP-Protocol-Version`,
-- `Mcp-Method`, `Mcp-Name`), after decoding the base64 sentinel. Pure
-- functions: the transport (mcp/http.lua) answers what they find.
local protocol = require "jrpc.mcp.protocol"
local errors = require "jrpc.errors"

local M = {}

-- The methods whose `Mcp-Name` header repeats a params member.
local NAME_OF = { ["tools/call"] = "name", ["prompts/get"] = "name", ["resources/read"] = "uri" }

local B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
local B64_VALUE = {}
for i = 1, #B64 do B64_VALUE[B64:byte(i)] = i - 1 end

--- Decode standard base64 (padding optional); nil when `s` is not base64.
---@param s string
---@return string|nil
function M.base64_decode(s)
  s = s:gsub("=+$", "")
  if #s % 4 == 1 then return nil end
  local out, bits, nbits = {}, 0, 0
  for i = 1, #s do
    local v = B64_VALUE[s:byte(i)]
    if v == nil then return nil end
    bits, nbits = (bits % 4096) * 64 + v, nbits + 6  -- at most 18 bits kept
    if nbits >= 8 then
      nbits = nbits - 8
      out[#out + 1] = string.char(math.floor(bits / 2 ^ nbits) % 256)
    end
  end
  return table.concat(out)
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
  if value == nil then return mismatch(name .. " header has invalid characters") end
  if want ~= nil and value ~= tostring(want) then
    return mismatch(name .. " header does not match the body")
  end
  return nil
end

--- Check a decoded message `msg` against the request headers (lower-case
--- names). Returns nil, or the -32020 error to answer with HTTP 400. The
--- comparison comes before any version check, as the spec orders them: a
--- header naming our version with a body naming another is a mismatch.
---@param headers table<string, string>
---@param msg table
---@return jrpc.Error|nil
function M.check(headers, msg)
  local params = type(msg.params) == "table" and msg.params or {}
  local meta = type(params._meta) == "table" and params._meta or {}
  local is_request = msg.id ~= nil
  local body_version = meta[protocol.keys.protocol_version]
  local err = same(headers, "mcp-protocol-version", body_version, true)
    or same(headers, "mcp-method", msg.method, is_request)
  if err then return err end
  local member = NAME_OF[msg.method]
  if member and is_request then
    return same(headers, "mcp-name", params[member], true)
  end
  return nil
end

return M
