--- What the MCP client's OAuth reads from servers it does not trust yet:
-- `WWW-Authenticate` challenges (RFC 9110 §11.6.1, RFC 6750 §3), protected
-- resource metadata (RFC 9728), authorization server metadata (RFC 8414,
-- and OpenID Connect discovery's document), registration (RFC 7591) and
-- token (RFC 6749 §5) responses, and the query of the redirect back.
-- Pure functions over strings: each gives its value, or nil and an error
-- text that names what was wrong; none raises on any input (bad input is
-- the other side's, not a misuse), which fuzz/oauth_parse.lua checks.
-- Also the URL rules the flow applies to every endpoint it is told of.
local core = require "jrpc.core"

local M = {}

-- The longest text any of these reads: far more than any real document,
-- small enough that a hostile one costs nothing.
M.MAX_TEXT = 256 * 1024

-- {======================================================================
-- WWW-Authenticate
-- =======================================================================

local TCHAR = "[%w!#$%%&'*+.^_`|~-]"

-- A quoted-string at `pos` (its opening quote): its value, and the
-- position after it; nil when it does not end.
local function quoted(s, pos)
  local out, i, n = {}, pos + 1, #s
  while i <= n do
    local c = s:sub(i, i)
    if c == '"' then return table.concat(out), i + 1 end
    if c == "\\" then
      i = i + 1
      if i > n then return nil end
      c = s:sub(i, i)
    end
    out[#out + 1] = c
    i = i + 1
  end
  return nil
end

-- An auth-param at `pos`: name (lower-cased), value, position after; nil
-- when what is there is none.
local function param(s, pos)
  local name, after = s:match("^(" .. TCHAR .. "+)[ \t]*=[ \t]*()", pos)
  if not name then return nil end
  if s:sub(after, after) == '"' then
    local value, stop = quoted(s, after)
    if not value then return nil end
    return name:lower(), value, stop
  end
  local value, stop = s:match("^(" .. TCHAR .. "+)()", after)
  if not value then return nil end
  return name:lower(), value, stop
end

--- The challenges of a `WWW-Authenticate` value (several fields joined
--- with ", " are one value): a list of `{scheme = lower-cased, params =
--- {name = value}, token68 = string|nil}`; nil and why for a value that
--- is no list of challenges.
---@param value string
---@return table|nil challenges
---@return string|nil err
function M.challenges(value)
  if type(value) ~= "string" then return nil, "WWW-Authenticate: not a string" end
  if #value > M.MAX_TEXT then return nil, "WWW-Authenticate: too long" end
  local out, pos, n = {}, 1, #value
  while true do
    pos = value:match("^[%s,]*()", pos)
    if pos > n then break end
    local scheme, after = value:match("^(" .. TCHAR .. "+)()", pos)
    if not scheme then return nil, ("WWW-Authenticate: no auth scheme at byte %d"):format(pos) end
    local ch = { scheme = scheme:lower(), params = {} }
    out[#out + 1] = ch
    pos = after
    local sp = value:match("^[ \t]+()", pos)
    if sp then
      pos = sp
      local t68, t68_after = value:match("^([%w%-._~+/]+=*)[ \t]*()", pos)
      local name, v, stop = param(value, pos)
      if t68 and not name and (t68_after > n or value:sub(t68_after, t68_after) == ",") then
        ch.token68, pos = t68, t68_after
      else
        -- auth-params, comma-separated, until one that is no param (the next challenge)
        while name do
          if ch.params[name] == nil then ch.params[name] = v end
          pos = value:match("^[ \t]*()", stop)
          if pos > n then break end
          if value:sub(pos, pos) ~= "," then
            return nil, ("WWW-Authenticate: expected ',' at byte %d"):format(pos)
          end
          local nxt = value:match("^[%s,]*()", pos)
          name, v, stop = param(value, nxt)
          if name then pos = nxt end
        end
      end
    end
  end
  return out
end

--- The parameters of the `Bearer` challenge among `value`'s (`scope`,
--- `resource_metadata`, `error`...): a table (empty when there is no
--- Bearer challenge, or the value does not parse: a 401 still means
--- "authorize"), and the parse error if any.
---@param value string|nil
---@return table params
---@return string|nil err
function M.bearer(value)
  if value == nil then return {} end
  local list, err = M.challenges(value)
  if not list then return {}, err end
  for _, ch in ipairs(list) do
    if ch.scheme == "bearer" then return ch.params end
  end
  return {}
end

-- }======================================================================

-- {======================================================================
-- URLs
-- =======================================================================

local LOOPBACK = { localhost = true, ["127.0.0.1"] = true, ["::1"] = true, ["[::1]"] = true }

--- The parts of an absolute http(s) URL without user info or fragment:
--- `{scheme, host, port (string or nil), path, query (or nil), origin}`,
--- or nil and why.
---@param url any
---@return table|nil
---@return string|nil err
function M.url(url)
  if type(url) ~= "string" then return nil, "not a URL: " .. type(url) end
  if #url > 8192 then return nil, "URL too long" end
  if url:find("[%z\1-\32\127]") then return nil, "URL with a control character or a space" end
  local scheme, authority, rest = url:match("^(%a[%w+.-]*)://([^/?#]*)(.*)$")
  if not scheme then return nil, "not an absolute URL: " .. url end
  scheme = scheme:lower()
  if scheme ~= "http" and scheme ~= "https" then return nil, "not an http(s) URL: " .. url end
  if authority == "" or authority:find("@", 1, true) then return nil, "no host, or user info, in URL: " .. url end
  if rest:find("#", 1, true) then return nil, "URL with a fragment: " .. url end
  local host, port
  if authority:sub(1, 1) == "[" then host, port = authority:match("^(%[[%x:.]+%])(.*)$")
  else host, port = authority:match("^([^:]+)(.*)$") end
  if not host or not (port == "" or port:match("^:%d+$")) then return nil, "bad host or port in URL: " .. url end
  local path, query = rest:match("^([^?]*)%??(.*)$")
  if rest:find("?", 1, true) == nil then query = nil end
  host = host:lower()
  port = port ~= "" and port:sub(2) or nil
  return { scheme = scheme, host = host, port = port, path = path, query = query,
    origin = scheme .. "://" .. host .. (port and (":" .. port) or "") }
end

--- Whether the flow may talk to `url`: https, or http to a loopback host
--- (a local server in development), as OAuth 2.1 §1.5 has it. Nil and
--- why when not.
---@param url any
---@return table|nil parts
---@return string|nil err
function M.allowed(url)
  local u, err = M.url(url)
  if not u then return nil, err end
  if u.scheme == "http" and not LOOPBACK[u.host] then
    return nil, "not https (plain http only to a loopback host): " .. url
  end
  return u
end

--- Whether the protected resource `resource` (from its metadata) covers
--- the server URL `server` (RFC 8707, RFC 9728 §7.3): the same origin, and
--- `server`'s path at or under `resource`'s.
---@param resource string
---@param server string
---@return boolean
function M.covers(resource, server)
  local r, s = M.url(resource), M.url(server)
  if not r or not s or r.origin ~= s.origin or r.query then return false end
  local rp = r.path:gsub("/$", "") .. "/"
  return (s.path:gsub("/$", "") .. "/"):sub(1, #rp) == rp
end

local function unescape(s)
  return (s:gsub("+", " "):gsub("%%(%x%x)", function(h) return string.char(tonumber(h, 16)) end))
end

--- The parameters of a query string (`a=1&b=2`, form-decoded); the first
--- of a repeated name wins. Never fails.
---@param query string|nil
---@return table<string, string>
function M.query(query)
  local out = {}
  if type(query) ~= "string" then return out end
  for pair in query:sub(1, M.MAX_TEXT):gmatch("[^&]+") do
    local k, v = pair:match("^([^=]*)=?(.*)$")
    k = unescape(k)
    if out[k] == nil then out[k] = unescape(v) end
  end
  return out
end

local function escape(s)
  return (tostring(s):gsub("[^%w%-._~]", function(c) return ("%%%02X"):format(c:byte()) end))
end
M.escape = escape

--- `application/x-www-form-urlencoded` of the pairs `{{name, value}, ...}`
--- (nil values left out), in order.
---@param pairs_ table
---@return string
function M.form(pairs_)
  local out = {}
  for _, p in ipairs(pairs_) do
    if p[2] ~= nil then out[#out + 1] = escape(p[1]) .. "=" .. escape(p[2]) end
  end
  return table.concat(out, "&")
end

-- }======================================================================

-- {======================================================================
-- JSON documents
-- =======================================================================

local function object(text, what)
  if type(text) ~= "string" then return nil, what .. ": no body" end
  if #text > M.MAX_TEXT then return nil, what .. ": too large" end
  local doc, err = core.decode(text)
  if type(doc) ~= "table" or doc[1] ~= nil or (next(doc) == nil and text:match("^%s*%[")) then
    return nil, what .. ": not a JSON object" .. (err and (" (" .. err .. ")") or "")
  end
  return doc
end
M.object = object

local function strings(v, what, name, required)
  if v == nil and not required then return true end
  if type(v) ~= "table" then return nil, ("%s: %s is not a list of strings"):format(what, name) end
  local n = 0
  for k, s in pairs(v) do
    n = n + 1
    if type(k) ~= "number" or type(s) ~= "string" then
      return nil, ("%s: %s is not a list of strings"):format(what, name)
    end
  end
  if n ~= #v then return nil, ("%s: %s is not a list of strings"):format(what, name) end
  if required and n == 0 then return nil, ("%s: %s is empty"):format(what, name) end
  return true
end

local function check_fields(doc, what, str_fields, list_fields, required)
  for _, name in ipairs(str_fields) do
    local v = doc[name]
    if (v ~= nil or required[name]) and type(v) ~= "string" then
      return nil, ("%s: %s is %s"):format(what, name, v == nil and "missing" or "not a string")
    end
  end
  for _, name in ipairs(list_fields) do
    local ok, err = strings(doc[name], what, name, required[name])
    if not ok then return nil, err end
  end
  return doc
end

--- Protected resource metadata (RFC 9728 §2): `resource` and
--- `authorization_servers` (a non-empty list of URLs) are required here
--- (MCP's servers name their authorization servers); `scopes_supported`
--- a list of strings when given.
---@param text string
---@return table|nil doc
---@return string|nil err
function M.resource_metadata(text)
  local what = "protected resource metadata"
  local doc, err = object(text, what)
  if not doc then return nil, err end
  return check_fields(doc, what, { "resource" }, { "authorization_servers", "scopes_supported",
    "bearer_methods_supported" }, { resource = true, authorization_servers = true })
end

--- Authorization server metadata (RFC 8414 §2; OpenID Connect discovery's
--- document has the same fields): `issuer` identical to the one the URL
--- was made from (§3.3: no normalization), `authorization_endpoint` and
--- `token_endpoint` required, the lists lists of strings.
---@param text string
---@param issuer string
---@return table|nil doc
---@return string|nil err
function M.server_metadata(text, issuer)
  local what = "authorization server metadata"
  local doc, err = object(text, what)
  if not doc then return nil, err end
  doc, err = check_fields(doc, what, { "issuer", "authorization_endpoint", "token_endpoint",
    "registration_endpoint" }, { "scopes_supported", "response_types_supported", "grant_types_supported",
    "code_challenge_methods_supported", "token_endpoint_auth_methods_supported" },
    { issuer = true, authorization_endpoint = true, token_endpoint = true })
  if not doc then return nil, err end
  if doc.issuer ~= issuer then
    return nil, ("%s: issuer %q is not %q, the issuer it was asked for"):format(what, doc.issuer, issuer)
  end
  local v = doc.client_id_metadata_document_supported
  if v ~= nil and type(v) ~= "boolean" then
    return nil, what .. ": client_id_metadata_document_supported is not a boolean"
  end
  v = doc.authorization_response_iss_parameter_supported
  if v ~= nil and type(v) ~= "boolean" then
    return nil, what .. ": authorization_response_iss_parameter_supported is not a boolean"
  end
  return doc
end

--- A dynamic client registration response (RFC 7591 §3.2.1): `client_id`
--- required, `client_secret` and `token_endpoint_auth_method` strings
--- when given.
---@param text string
---@return table|nil doc
---@return string|nil err
function M.registration(text)
  local what = "client registration response"
  local doc, err = object(text, what)
  if not doc then return nil, err end
  doc, err = check_fields(doc, what, { "client_id", "client_secret", "token_endpoint_auth_method" }, {},
    { client_id = true })
  if doc and doc.client_id == "" then return nil, what .. ": client_id is empty" end
  return doc, err
end

--- A token endpoint's answer with status `status`: on 200, `{access_token,
--- token_type, expires_in?, refresh_token?, scope?}` (a Bearer token:
--- RFC 6749 §5.1, the type compared case-insensitively); otherwise nil
--- and the error the server gave (§5.2: `error`, `error_description`).
---@param status integer
---@param text string
---@return table|nil tokens
---@return string|nil err
function M.token_response(status, text)
  local what = "token response"
  local doc, err = object(text, what)
  if status ~= 200 then
    local code = doc and type(doc.error) == "string" and doc.error:sub(1, 100) or nil
    local desc = doc and type(doc.error_description) == "string" and doc.error_description:sub(1, 300) or nil
    return nil, ("token endpoint: HTTP %s%s%s"):format(tostring(status), code and (": " .. code) or "",
      desc and (" (" .. desc .. ")") or "")
  end
  if not doc then return nil, err end
  doc, err = check_fields(doc, what, { "access_token", "token_type", "refresh_token", "scope" }, {},
    { access_token = true, token_type = true })
  if not doc then return nil, err end
  if doc.token_type:lower() ~= "bearer" then return nil, what .. ": token_type is not Bearer" end
  if doc.access_token == "" or doc.access_token:find("[^\33-\126]") then
    return nil, what .. ": access_token is not a token a header can carry"
  end
  local e = doc.expires_in
  if e ~= nil and (type(e) ~= "number" or e ~= e or e < 0) then return nil, what .. ": expires_in is not a number" end
  return doc
end

-- }======================================================================

return M
