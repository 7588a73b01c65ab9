--- `format` assertions (used when compile's option `formats` is true):
-- date-time, date, time (RFC 3339), email (RFC 5321's dot-atom local part
-- at a host name or an address literal), hostname (RFC 1123), uri
-- (absolute, RFC 3986), uri-reference, uuid (RFC 4122), ipv4, ipv6.
local M = {}

local DAYS = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 }

local function date(s)
  local y, m, d = s:match("^(%d%d%d%d)%-(%d%d)%-(%d%d)$")
  if not y then return false end
  y, m, d = tonumber(y), tonumber(m), tonumber(d)
  if m < 1 or m > 12 or d < 1 then return false end
  local max = DAYS[m]
  if m == 2 and y % 4 == 0 and (y % 100 ~= 0 or y % 400 == 0) then max = 29 end
  return d <= max
end

-- HH:MM:SS[.frac](Z|±HH:MM); a leap second (60) only where the time in UTC
-- is 23:59.
local function time(s)
  local h, mi, sec, rest = s:match("^(%d%d):(%d%d):(%d%d)(.*)$")
  if not h then return false end
  local frac = rest:match("^%.%d+")
  if frac then rest = rest:sub(#frac + 1) end
  h, mi, sec = tonumber(h), tonumber(mi), tonumber(sec)
  if h > 23 or mi > 59 or sec > 60 then return false end
  local oh, om = 0, 0
  if rest ~= "Z" and rest ~= "z" then
    local sign, a, b = rest:match("^([+-])(%d%d):(%d%d)$")
    if not sign then return false end
    a, b = tonumber(a), tonumber(b)
    if a > 23 or b > 59 then return false end
    if sign == "+" then oh, om = a, b else oh, om = -a, -b end
  end
  if sec == 60 then
    local minutes = ((h - oh) * 60 + (mi - om)) % 1440
    if minutes ~= 23 * 60 + 59 then return false end
  end
  return true
end

local function date_time(s)
  local d, t = s:match("^(%d%d%d%d%-%d%d%-%d%d)[Tt](.*)$")
  return d ~= nil and date(d) and time(t)
end

local function ipv4(s)
  local parts = { s:match("^(%d+)%.(%d+)%.(%d+)%.(%d+)$") }
  if #parts ~= 4 then return false end
  for i = 1, 4 do
    local p = parts[i]
    if #p > 3 or (#p > 1 and p:sub(1, 1) == "0") or tonumber(p) > 255 then return false end
  end
  return true
end

local function ipv6(s)
  if s:find("[^%x:%.]") then return false end
  local head, tail = s:match("^(.-)::(.*)$")
  local groups, double = 0, head ~= nil
  if double and tail:find("::", 1, true) then return false end
  local function count(part, last)
    if part == "" then return true end
    local list = {}
    for g in (part .. ":"):gmatch("([^:]*):") do list[#list + 1] = g end
    for i, g in ipairs(list) do
      if last and i == #list and g:find(".", 1, true) then
        if not ipv4(g) then return false end
        groups = groups + 2
      elseif g:match("^%x%x?%x?%x?$") then
        groups = groups + 1
      else
        return false
      end
    end
    return true
  end
  if double then
    if not count(head, tail == "") or not count(tail, true) then return false end
    return groups <= 7
  end
  return count(s, true) and groups == 8
end

-- RFC 1123 labels of letters, digits and hyphens (no IDNA checks).
local function hostname(s)
  if #s == 0 or #s > 253 then return false end
  for label in (s .. "."):gmatch("([^.]*)%.") do
    if #label == 0 or #label > 63 or label:find("[^%w-]")
      or label:sub(1, 1) == "-" or label:sub(-1) == "-" then
      return false
    end
  end
  return true
end

local ATEXT = "[%w!#$%%&'*+/=?^_`{|}~-]"

local function email(s)
  local lp, domain = s:match("^(.+)@([^@]+)$")
  if not lp then return false end
  if lp:match('^".*"$') then
    if lp:find('[^\32-\126]') then return false end
  else
    if lp:sub(1, 1) == "." or lp:sub(-1) == "." or lp:find("..", 1, true) then return false end
    if lp:gsub(ATEXT, ""):gsub("%.", "") ~= "" then return false end
  end
  local literal = domain:match("^%[(.*)%]$")
  if literal then
    local v6 = literal:match("^IPv6:(.*)$")
    if v6 then return ipv6(v6) end
    return ipv4(literal)
  end
  return hostname(domain)
end

-- RFC 3986 characters: unreserved, reserved, and %HH escapes.
local function uri_chars(s)
  if s:find("[^%w%-%._~:/%?#%[%]@!%$&'%(%)%*%+,;=%%]") then return false end
  for pct in s:gmatch("%%(..)") do
    if not pct:match("^%x%x$") then return false end
  end
  return not s:find("%%.?$") or s:find("%%%x%x$") ~= nil
end

local function authority_ok(a)
  local userinfo, hostport = a:match("^(.*)@(.*)$")
  if userinfo and userinfo:find("[@%[%]]") then return false end
  hostport = hostport or a
  local literal, port = hostport:match("^%[(.*)%](.*)$")
  local host
  if literal then
    if not (literal:match("^[vV]%x+%.") or ipv6(literal)) then return false end
  else
    host, port = hostport:match("^([^:]*)(.*)$")
    if host:find("[%[%]]") then return false end
  end
  return port == "" or port:match("^:%d*$") ~= nil
end

local function uri_reference(s)
  if not uri_chars(s) then return false end
  local scheme = s:match("^([^:/?#]+):")
  if scheme and not scheme:match("^%a[%w+.-]*$") then return false end
  local rest = scheme and s:sub(#scheme + 2) or s
  local authority = rest:match("^//([^/?#]*)")
  if authority then
    if not authority_ok(authority) then return false end
    rest = rest:sub(#authority + 3)
  end
  local path = rest:match("^[^?#]*")
  return not path:find("[%[%]]")
end

local function uri(s)
  return s:match("^%a[%w+.-]*:") ~= nil and uri_reference(s)
end

local function uuid(s)
  return s:match("^%x%x%x%x%x%x%x%x%-%x%x%x%x%-%x%x%x%x%-%x%x%x%x%-%x%x%x%x%x%x%x%x%x%x%x%x$") ~= nil
end

M.check = {
  ["date-time"] = date_time, date = date, time = time, email = email, hostname = hostname,
  uri = uri, ["uri-reference"] = uri_reference, uuid = uuid, ipv4 = ipv4, ipv6 = ipv6,
}

local NOUN = {
  ["date-time"] = "an RFC 3339 date-time", date = "an RFC 3339 date", time = "an RFC 3339 time",
  email = "an email address", hostname = "a host name", uri = "an absolute URI",
  ["uri-reference"] = "a URI reference", uuid = "a UUID", ipv4 = "an IPv4 address",
  ipv6 = "an IPv6 address",
}

--- How a message names a value of the format `name`.
function M.noun(name) return NOUN[name] or ("a " .. name) end

return M
