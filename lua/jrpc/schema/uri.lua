--- URI references (RFC 3986, section 5) and JSON pointers (RFC 6901),
-- enough to resolve `$id` and `$ref` inside one schema document.
local M = {}

-- scheme, authority, path, query, fragment; absent parts are nil.
local function parse(u)
  local rest, fragment = u:match("^([^#]*)#(.*)$")
  if not rest then rest = u end
  local query
  local r2, q = rest:match("^([^?]*)%?(.*)$")
  if r2 then rest, query = r2, q end
  local scheme, r3 = rest:match("^([%a][%w+.-]*):(.*)$")
  if scheme then rest = r3 end
  local authority
  local a, r4 = rest:match("^//([^/]*)(.*)$")
  if a then authority, rest = a, r4 end
  return scheme, authority, rest, query, fragment
end

local function remove_dots(path)
  local out = {}
  local absolute = path:sub(1, 1) == "/"
  local segs = {}
  for seg in (path .. "/"):gmatch("([^/]*)/") do segs[#segs + 1] = seg end
  if absolute then table.remove(segs, 1) end
  for i, seg in ipairs(segs) do
    if seg == ".." then
      if #out > 0 then table.remove(out) end
      if i == #segs then out[#out + 1] = "" end
    elseif seg == "." then
      if i == #segs then out[#out + 1] = "" end
    else
      out[#out + 1] = seg
    end
  end
  return (absolute and "/" or "") .. table.concat(out, "/")
end

local function join(scheme, authority, path, query, fragment)
  local s = {}
  if scheme then s[#s + 1] = scheme .. ":" end
  if authority then s[#s + 1] = "//" .. authority end
  s[#s + 1] = path
  if query then s[#s + 1] = "?" .. query end
  if fragment then s[#s + 1] = "#" .. fragment end
  return table.concat(s)
end

--- The reference `ref` resolved against the absolute URI `base`.
function M.resolve(base, ref)
  local rs, ra, rp, rq, rf = parse(ref)
  if rs then return join(rs, ra, remove_dots(rp), rq, rf) end
  local bs, ba, bp, bq = parse(base)
  if ra then return join(bs, ra, remove_dots(rp), rq, rf) end
  if rp == "" then return join(bs, ba, bp, rq or bq, rf) end
  if rp:sub(1, 1) == "/" then return join(bs, ba, remove_dots(rp), rq, rf) end
  local merged
  if ba and bp == "" then
    merged = "/" .. rp
  else
    merged = (bp:match("^(.*/)") or "") .. rp
  end
  return join(bs, ba, remove_dots(merged), rq, rf)
end

--- `uri` without its fragment, and the fragment (nil when there is none).
function M.split(uri)
  local rest, fragment = uri:match("^([^#]*)#(.*)$")
  if rest then return rest, fragment end
  return uri, nil
end

local function hex(h) return string.char(tonumber(h, 16)) end

--- The tokens of a JSON pointer given as a URI fragment ("/a/b~1c" →
--- {"a", "b/c"}), or nil when it is not one.
function M.pointer_tokens(fragment)
  fragment = fragment:gsub("%%(%x%x)", hex)
  if fragment == "" then return {} end
  if fragment:sub(1, 1) ~= "/" then return nil end
  local tokens = {}
  for tok in (fragment:sub(2) .. "/"):gmatch("([^/]*)/") do
    tokens[#tokens + 1] = (tok:gsub("~1", "/"):gsub("~0", "~"))
  end
  return tokens
end

--- One pointer token written for a path ("a/b" → "a~1b").
function M.escape(token)
  token = tostring(token)
  if token:find("[~/]") then
    token = token:gsub("~", "~0"):gsub("/", "~1")
  end
  return token
end

return M
