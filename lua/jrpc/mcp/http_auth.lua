--- MCP authorization, the server's side (a protected resource, RFC 9728
-- and RFC 6750), for serve_http's `auth` option: every request to the MCP
-- path carries `Authorization: Bearer TOKEN`, which the application's
-- `verify(token, req)` checks (a JWT library, token introspection: jrpc
-- has no authorization server and trusts no token by itself). A request
-- without one, or whose token `verify` refuses, or whose audience is not
-- this resource, or that has expired, is answered 401 with a
-- `WWW-Authenticate: Bearer` challenge naming the resource metadata; one
-- whose token lacks a scope (`scopes`, for every request; `tool_scopes`,
-- per tool) is answered 403 `insufficient_scope` with the scopes it needs.
-- The metadata is served at `/.well-known/oauth-protected-resource` (the
-- root) and at the same followed by the MCP path (RFC 9728 §3.1).
local core = require "jrpc.core"
local options = require "jrpc.options"

local M = {}

--- The names of serve_http's `auth` fields.
M.OPTIONS = options.set{ "verify", "authorization_servers", "resource", "scopes_supported", "scopes",
  "tool_scopes", "resource_name" }

local WELL_KNOWN = "/.well-known/oauth-protected-resource"

local function strings(v)
  if type(v) ~= "table" then return false end
  local n = 0
  for k, s in pairs(v) do
    n = n + 1
    if type(k) ~= "number" or type(s) ~= "string" or s:find('[%c"\\]') then return false end
  end
  return n == #v
end

local function check(a)
  options.check("serve_http: auth", a, 4, M.OPTIONS)
  if type(a.verify) ~= "function" then error("serve_http: auth.verify must be a function(token, req)", 4) end
  if not strings(a.authorization_servers) or #a.authorization_servers == 0 then
    error("serve_http: auth.authorization_servers must be a list of issuer URLs", 4)
  end
  for _, k in ipairs{ "scopes_supported", "scopes" } do
    if a[k] ~= nil and not strings(a[k]) then error("serve_http: auth." .. k .. " must be a list of scopes", 4) end
  end
  if a.tool_scopes ~= nil then
    if type(a.tool_scopes) ~= "table" then error("serve_http: auth.tool_scopes must be a table", 4) end
    for name, list in pairs(a.tool_scopes) do
      if type(name) ~= "string" or not strings(list) then
        error("serve_http: auth.tool_scopes must map tool names to lists of scopes", 4)
      end
    end
  end
  for _, k in ipairs{ "resource", "resource_name" } do
    if a[k] ~= nil and type(a[k]) ~= "string" then error("serve_http: auth." .. k .. " must be a string", 4) end
  end
  if a.resource ~= nil and not a.resource:match("^https?://[^/?#]+[^?#]*$") then
    error("serve_http: auth.resource must be the server's http(s) URL without query or fragment", 4)
  end
end

---@class jrpc.mcp.HttpAuth
local Auth = {}
Auth.__index = Auth

--- The protected resource of serve_http's `auth` option (checked here).
---@param a table
---@param path string  the MCP path
---@return jrpc.mcp.HttpAuth
function M.new(a, path)
  check(a)
  return setmetatable({ opts = a, path = path }, Auth)
end

--- The listener is up on `port`: the resource, unless given, is its
--- loopback URL.
function Auth:listening(port)
  self.resource = self.opts.resource or ("http://127.0.0.1:" .. port .. self.path)
  local origin, rpath = self.resource:match("^(https?://[^/]+)(.*)$")
  rpath = rpath:gsub("/$", "")
  self.metadata_url = origin .. WELL_KNOWN .. rpath
  self.metadata_paths = { [WELL_KNOWN] = true, [WELL_KNOWN .. rpath] = true }
end

--- Answer a GET of the metadata; true when `req` was one.
function Auth:well_known(req, res)
  if not self.metadata_paths[req.path] then return false end
  if req.method ~= "GET" and req.method ~= "HEAD" then
    res:send(405, { ["content-type"] = "text/plain", allow = "GET, HEAD" }, "method not allowed\n")
    return true
  end
  local o = self.opts
  res:send(200, { ["content-type"] = "application/json", ["cache-control"] = "max-age=3600" }, core.encode{
    resource = self.resource, authorization_servers = o.authorization_servers,
    scopes_supported = o.scopes_supported, bearer_methods_supported = { "header" },
    resource_name = o.resource_name })
  return true
end

local function quote(s) return '"' .. s .. '"' end

-- The challenge: the metadata URL, the scopes, an error.
function Auth:_challenge(scopes, err, desc)
  local parts = { "resource_metadata=" .. quote(self.metadata_url) }
  if scopes and #scopes > 0 then parts[#parts + 1] = "scope=" .. quote(table.concat(scopes, " ")) end
  if err then parts[#parts + 1] = "error=" .. quote(err) end
  if desc then parts[#parts + 1] = "error_description=" .. quote((desc:gsub('[%c"\\]', " "))) end
  return "Bearer " .. table.concat(parts, ", ")
end

local function refuse(self, res, status, scopes, err, desc)
  res:send(status, { ["content-type"] = "application/json", ["www-authenticate"] = self:_challenge(scopes, err, desc) },
    core.encode{ error = err or "invalid_token", error_description = desc or "authorization required" })
  return nil
end

local function scope_set(info)
  local set = {}
  local list = info.scopes
  if type(list) == "table" then
    for _, s in ipairs(list) do if type(s) == "string" then set[s] = true end end
  elseif type(info.scope) == "string" then
    for s in info.scope:gmatch("%S+") do set[s] = true end
  end
  return set
end

local function audience_ok(aud, resource)
  if type(aud) == "string" then return aud == resource end
  if type(aud) ~= "table" then return false end
  for _, a in ipairs(aud) do if a == resource then return true end end
  return false
end

local function missing(have, need)
  for _, s in ipairs(need or {}) do
    if not have[s] then return true end
  end
  return false
end

--- Check the bearer token of `req` (in the request's coroutine: `verify`
--- may wait). The token's info (what `verify` gave, `scope_set` added),
--- or nil once the refusal was sent.
---@param req table
---@param res table
---@return table|nil info
function Auth:check(req, res)
  local o = self.opts
  local token = (req.headers.authorization or ""):match("^[Bb][Ee][Aa][Rr][Ee][Rr] +([%w%-._~+/]+=*) *$")
  local need = o.scopes or o.scopes_supported
  if not token then return refuse(self, res, 401, need, nil, nil) end
  local ok, info, why = pcall(o.verify, token, req)
  if not ok then
    res:send(500, { ["content-type"] = "text/plain" }, "token verification failed\n")
    error(info, 0)
  end
  if type(info) ~= "table" then
    return refuse(self, res, 401, need, "invalid_token", type(why) == "string" and why or "the token is not valid")
  end
  if not audience_ok(info.audience, self.resource) then
    return refuse(self, res, 401, need, "invalid_token", "the token is not for this resource")
  end
  if type(info.expires_at) == "number" and info.expires_at <= os.time() then
    return refuse(self, res, 401, need, "invalid_token", "the token has expired")
  end
  info.scope_set = scope_set(info)
  if missing(info.scope_set, o.scopes) then
    return refuse(self, res, 403, o.scopes, "insufficient_scope", "the token lacks a scope this server needs")
  end
  return info
end

--- A tools/call message `msg` with the token's `info`: true when its
--- tool's scopes are granted; else the 403 is sent and false returned.
function Auth:check_tool(info, msg, res)
  local scopes = self.opts.tool_scopes
  local params = type(msg.params) == "table" and msg.params or {}
  local need = scopes and type(params.name) == "string" and scopes[params.name]
  if not need or not missing(info.scope_set, need) then return true end
  local all, seen = {}, {}
  for _, list in ipairs{ self.opts.scopes or {}, need } do
    for _, s in ipairs(list) do
      if not seen[s] then seen[s], all[#all + 1] = true, s end
    end
  end
  refuse(self, res, 403, all, "insufficient_scope", "the tool " .. params.name:sub(1, 100) .. " needs more scope")
  return false
end

return M
