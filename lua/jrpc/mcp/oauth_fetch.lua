--- The HTTP exchanges of the MCP client's OAuth flow: GET a metadata
-- document, POST a form (token endpoint) or JSON (registration), each
-- following redirects as the flow allows them: every URL, the first and
-- each Location, must be https or plain http to a loopback host
-- (oauth_parse.allowed), at most MAX_REDIRECTS of them; a POST follows
-- only 307 and 308 (which keep its method and body) and only within its
-- origin, so a client secret never goes to another host. In a coroutine
-- (jrpc.uv.http_client waits there). Responses: `{status, headers, body}`.
local http_client = require "jrpc.uv.http_client"
local parse = require "jrpc.mcp.oauth_parse"

local M = {}

M.MAX_REDIRECTS = 5
M.TIMEOUT = 30

local REDIRECT = { [301] = true, [302] = true, [303] = true, [307] = true, [308] = true }
local KEEPS_BODY = { [307] = true, [308] = true }

-- `location` resolved against `base` (absolute, origin-relative or
-- path-relative), or nil.
local function resolve(base, location)
  if type(location) ~= "string" or location == "" then return nil end
  if location:match("^%a[%w+.-]*://") then return location end
  local b = parse.url(base)
  if not b then return nil end
  if location:sub(1, 2) == "//" then return b.scheme .. ":" .. location end
  if location:sub(1, 1) == "/" then return b.origin .. location end
  return b.origin .. b.path:gsub("[^/]*$", "") .. location
end

--- One request (`req`: method, headers, body) to `url`, following the
--- redirects allowed; the final response, or nil and why.
---@param loop table
---@param url string
---@param req table
---@return table|nil res
---@return string|nil err
function M.request(loop, url, req)
  local first, err = parse.allowed(url)
  local u = first
  for _ = 0, M.MAX_REDIRECTS do
    if not u then return nil, err end
    local res, rerr = http_client.request(loop, { url = url, method = req.method, headers = req.headers,
      body = req.body, timeout = req.timeout or M.TIMEOUT, max_body_bytes = parse.MAX_TEXT,
      ca_file = req.ca_file, verify = req.verify })
    if not res then return nil, ("%s %s: %s"):format(req.method or "GET", url, tostring(rerr)) end
    if not REDIRECT[res.status] then return res end
    local to = resolve(url, res.headers.location)
    if not to then return nil, ("%s: HTTP %d without a usable Location"):format(url, res.status) end
    u, err = parse.allowed(to)
    if req.body and not KEEPS_BODY[res.status] then
      return nil, ("%s: HTTP %d would turn the POST into a GET; not followed"):format(url, res.status)
    end
    if req.body and u and u.origin ~= first.origin then
      return nil, ("%s: redirect of a POST to another origin (%s); not followed"):format(url, u.origin)
    end
    url = to
  end
  return nil, ("%s: more than %d redirects"):format(url, M.MAX_REDIRECTS)
end

--- GET `url` asking for JSON.
function M.get(loop, url, tls)
  return M.request(loop, url, { method = "GET", headers = { Accept = "application/json" },
    ca_file = tls and tls.ca_file, verify = tls and tls.verify })
end

--- POST `body` (already encoded) as `content_type`, with `headers` more.
function M.post(loop, url, content_type, body, headers, tls)
  local h = { ["Content-Type"] = content_type, Accept = "application/json" }
  for k, v in pairs(headers or {}) do h[k] = v end
  return M.request(loop, url, { method = "POST", headers = h, body = body,
    ca_file = tls and tls.ca_file, verify = tls and tls.verify })
end

return M
