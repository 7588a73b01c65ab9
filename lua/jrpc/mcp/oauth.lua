--- MCP authorization, the client's side (OAuth 2.1 as MCP's authorization
-- spec has it), for the Streamable HTTP transport (client_http.lua): a
-- request answered 401, or 403 with `error="insufficient_scope"`, starts
-- the flow, and is POSTed again once it got a token (the server refused
-- it before acting on it, so this keeps it at most once).
--
-- The flow: the Bearer challenge of `WWW-Authenticate` (its
-- `resource_metadata` and `scope`); the protected resource metadata
-- (RFC 9728: the URL the challenge names, else the path-based well-known
-- URL, then the root one), whose `resource` must cover the server's URL
-- (RFC 8707: a mismatch stops the flow); the first authorization server's
-- metadata (RFC 8414, then OpenID Connect discovery, in the order MCP
-- gives), whose `issuer` must be the one asked for; a client: the one
-- given (`client_id`), a client ID metadata document (`client_metadata_url`,
-- when the server supports them), or dynamic registration (RFC 7591), kept
-- per authorization server so none is shown to another (a server that
-- moves to a new one gets a new registration); authorization code with
-- PKCE S256 and `state` through `authorize(url)` (the host opens the URL
-- and gives back the redirect's URL), whose `iss` must be the issuer
-- (RFC 9207, compared as strings); the token request with `resource`, the
-- client authenticated as it registered (`none`, `client_secret_basic`,
-- `client_secret_post`). A 401 with a refresh token of the same
-- authorization server refreshes first.
--
-- Scopes: the challenge's `scope`, else the metadata's `scopes_supported`,
-- else none sent; with what was asked before (a step-up keeps what was
-- granted), and `offline_access` when the authorization server lists it.
-- A step-up (403) for the same scopes happens at most `max_step_ups`
-- times.
--
-- Tokens are kept in `store` (oauth_store.lua) under the server's URL and
-- never logged: errors and `on_debug` lines name endpoints and steps only.
local core = require "jrpc.core"
local options = require "jrpc.options"
local workers = require "jrpc.workers"
local parse = require "jrpc.mcp.oauth_parse"
local fetch = require "jrpc.mcp.oauth_fetch"
local stores = require "jrpc.mcp.oauth_store"

local M = {}

--- The names of the `auth` option's fields (jrpc.mcp.client.connect).
M.OPTIONS = options.set{ "authorize", "redirect_uri", "client_id", "client_secret", "client_metadata_url",
  "client_name", "scope", "store", "token", "offline_access", "max_step_ups", "on_debug" }

M.MAX_STEP_UPS = 2

---@class jrpc.mcp.OAuth
local Auth = {}
Auth.__index = Auth

local function check(opts)
  options.check("jrpc.mcp.client: auth", opts, 4, M.OPTIONS)
  for _, k in ipairs{ "client_id", "client_secret", "client_metadata_url", "client_name", "scope", "token" } do
    if opts[k] ~= nil and type(opts[k]) ~= "string" then
      error("jrpc.mcp.client: auth." .. k .. " must be a string", 4)
    end
  end
  for _, k in ipairs{ "authorize", "on_debug" } do
    if opts[k] ~= nil and type(opts[k]) ~= "function" then
      error("jrpc.mcp.client: auth." .. k .. " must be a function", 4)
    end
  end
  local r = opts.redirect_uri
  if r ~= nil and type(r) ~= "string" and type(r) ~= "function" then
    error("jrpc.mcp.client: auth.redirect_uri must be a string or a function", 4)
  end
  local s = opts.store
  if s ~= nil and (type(s) ~= "table" or type(s.load) ~= "function" or type(s.save) ~= "function") then
    error("jrpc.mcp.client: auth.store must have load and save (see jrpc.mcp.oauth_store)", 4)
  end
  local m = opts.max_step_ups
  if m ~= nil and (type(m) ~= "number" or m < 0 or m % 1 ~= 0) then
    error("jrpc.mcp.client: auth.max_step_ups must be a non-negative integer", 4)
  end
  if opts.client_metadata_url ~= nil and not parse.url(opts.client_metadata_url) then
    error("jrpc.mcp.client: auth.client_metadata_url must be an http(s) URL", 4)
  end
end

--- The flow for the server at `url` (its MCP endpoint). `opts`: the
--- `auth` option (see M.OPTIONS and docs/mcp.md); `tls`: `{ca_file,
--- verify}` for the flow's own requests.
---@param loop table
---@param url string
---@param opts table
---@param tls? table
---@return jrpc.mcp.OAuth
function M.new(loop, url, opts, tls)
  check(opts)
  local self = setmetatable({ loop = loop, url = url:gsub("#.*$", ""), opts = opts, tls = tls or {},
    store = opts.store or stores.memory(), step_ups = {}, waiting = nil,
    debug = opts.on_debug or function() end }, Auth)
  self.state = self.store:load(self.url) or {}
  if opts.token then self.state.tokens = { access_token = opts.token } end
  return self
end

--- The Authorization header's value, or nil before any token.
---@return string|nil
function Auth:header()
  local t = self.state.tokens
  return t and t.access_token and ("Bearer " .. t.access_token) or nil
end

function Auth:_save()
  self.store:save(self.url, self.state)
end

-- {======================================================================
-- Discovery
-- =======================================================================

local function get_json(self, url, reader, ...)
  local res, err = fetch.get(self.loop, url, self.tls)
  if not res then return nil, err, "fetch" end
  if res.status ~= 200 then return nil, ("%s: HTTP %d"):format(url, res.status), res.status end
  local doc, perr = reader(res.body, ...)
  if not doc then return nil, url .. ": " .. perr, "bad" end
  return doc
end

-- Protected resource metadata: from the challenge's URL, else the
-- well-known ones (path-based first). Nil and an error for a document
-- that is wrong (or names another resource); nil, nil when none is found
-- (a 2025-03-26 server: the authorization server is the server's origin).
function Auth:_resource_metadata(named)
  local u = parse.url(self.url)
  local urls = {}
  if named then
    if not parse.allowed(named) then return nil, "resource_metadata URL not allowed: " .. named end
    urls[1] = named
  else
    local path = u.path:gsub("/$", "")
    if path ~= "" then urls[#urls + 1] = u.origin .. "/.well-known/oauth-protected-resource" .. path end
    urls[#urls + 1] = u.origin .. "/.well-known/oauth-protected-resource"
  end
  for _, where in ipairs(urls) do
    self.debug("oauth: protected resource metadata " .. where)
    local doc, err, why = get_json(self, where, parse.resource_metadata)
    if doc then
      if not parse.covers(doc.resource, self.url) then
        return nil, ("protected resource metadata names resource %q, not this server (%s): refused")
          :format(doc.resource, self.url)
      end
      return doc
    end
    if why == "bad" or why == "fetch" or named then return nil, err end
  end
  return nil, nil
end

-- The authorization server's metadata URLs for `issuer`, in MCP's order.
local function server_metadata_urls(issuer)
  local u = parse.url(issuer)
  local path = u.path:gsub("/$", "")
  if path == "" then
    return { u.origin .. "/.well-known/oauth-authorization-server", u.origin .. "/.well-known/openid-configuration" }
  end
  return { u.origin .. "/.well-known/oauth-authorization-server" .. path,
    u.origin .. "/.well-known/openid-configuration" .. path,
    u.origin .. path .. "/.well-known/openid-configuration" }
end

function Auth:_server_metadata(issuer)
  if not parse.allowed(issuer) or parse.url(issuer).query then
    return nil, "authorization server not allowed: " .. tostring(issuer)
  end
  local last
  for _, where in ipairs(server_metadata_urls(issuer)) do
    self.debug("oauth: authorization server metadata " .. where)
    local doc, err, why = get_json(self, where, parse.server_metadata, issuer)
    if doc then
      local methods = doc.code_challenge_methods_supported or {}
      local s256 = false
      for _, m in ipairs(methods) do if m == "S256" then s256 = true end end
      if not s256 then return nil, where .. ": the authorization server does not list PKCE S256; refused" end
      for _, k in ipairs{ "authorization_endpoint", "token_endpoint", "registration_endpoint" } do
        if doc[k] ~= nil and not parse.allowed(doc[k]) then
          return nil, ("%s: %s not allowed: %s"):format(where, k, doc[k])
        end
      end
      return doc
    end
    if why == "bad" or why == "fetch" then return nil, err end
    last = err
  end
  return nil, "no authorization server metadata for " .. issuer .. " (" .. tostring(last) .. ")"
end

-- }======================================================================

-- {======================================================================
-- The client, the scopes
-- =======================================================================

local function has(list, v)
  for _, x in ipairs(list or {}) do if x == v then return true end end
  return false
end

-- The token endpoint authentication for a client with or without a
-- secret, from what the server supports (RFC 8414's default: basic).
local function auth_method(meta, secret)
  local supported = meta.token_endpoint_auth_methods_supported or { "client_secret_basic" }
  if not secret then return "none" end
  if has(supported, "client_secret_basic") then return "client_secret_basic" end
  if has(supported, "client_secret_post") then return "client_secret_post" end
  return "client_secret_basic"
end

function Auth:_redirect_uri()
  local r = self.opts.redirect_uri
  if type(r) == "function" then r = r() end
  if r == nil then return nil, "the server needs authorization: give auth.redirect_uri and auth.authorize" end
  if type(r) ~= "string" then return nil, "auth.redirect_uri gave no URL" end
  if not parse.allowed(r) then return nil, "auth.redirect_uri must be https or http to a loopback host: " .. r end
  return r
end

function Auth:_client(issuer, meta, redirect_uri)
  local opts = self.opts
  if opts.client_id then
    return { client_id = opts.client_id, client_secret = opts.client_secret,
      method = auth_method(meta, opts.client_secret) }
  end
  self.state.clients = self.state.clients or {}
  local kept = self.state.clients[issuer]
  if kept and kept.redirect_uri == redirect_uri then return kept end
  if opts.client_metadata_url and meta.client_id_metadata_document_supported == true then
    return { client_id = opts.client_metadata_url, method = "none" }
  end
  if not meta.registration_endpoint then
    return nil, issuer .. " offers no registration: give auth.client_id (a client registered there)"
  end
  local supported = meta.token_endpoint_auth_methods_supported
  local want = (not supported or has(supported, "none")) and "none"
    or has(supported, "client_secret_basic") and "client_secret_basic" or "client_secret_post"
  local body = core.encode{ client_name = opts.client_name or "jrpc", redirect_uris = { redirect_uri },
    grant_types = { "authorization_code", "refresh_token" }, response_types = { "code" },
    token_endpoint_auth_method = want, application_type = "native" }
  self.debug("oauth: registering at " .. meta.registration_endpoint)
  local res, err = fetch.post(self.loop, meta.registration_endpoint, "application/json", body, nil, self.tls)
  if not res then return nil, err end
  if res.status ~= 201 and res.status ~= 200 then
    return nil, ("%s: registration refused: HTTP %d"):format(meta.registration_endpoint, res.status)
  end
  local doc, perr = parse.registration(res.body)
  if not doc then return nil, meta.registration_endpoint .. ": " .. perr end
  local client = { client_id = doc.client_id, client_secret = doc.client_secret, redirect_uri = redirect_uri,
    method = doc.token_endpoint_auth_method or auth_method(meta, doc.client_secret) }
  self.state.clients[issuer] = client
  self:_save()
  return client
end

local function words(s)
  local out = {}
  for w in (s or ""):gmatch("%S+") do out[#out + 1] = w end
  return out
end

-- The scope to ask for (a string, or nil to send none): see the top.
function Auth:_scope(challenge, prm, meta)
  local list = {}
  local function add(w) if not has(list, w) then list[#list + 1] = w end end
  for _, w in ipairs(words(self.state.scope)) do add(w) end
  if self.opts.scope then
    for _, w in ipairs(words(self.opts.scope)) do add(w) end
  elseif challenge.scope then
    for _, w in ipairs(words(challenge.scope)) do add(w) end
  elseif prm and prm.scopes_supported then
    for _, w in ipairs(prm.scopes_supported) do add(w) end
  end
  if #list == 0 then return nil end
  if self.opts.offline_access ~= false and has(meta.scopes_supported, "offline_access") then
    add("offline_access")
  end
  return table.concat(list, " ")
end

-- }======================================================================

-- {======================================================================
-- Tokens
-- =======================================================================

-- The headers and form fields that authenticate `client` at the token endpoint.
local function client_auth(client, fields)
  if client.method == "client_secret_basic" and client.client_secret then
    local pair = parse.escape(client.client_id) .. ":" .. parse.escape(client.client_secret)
    return { Authorization = "Basic " .. core.base64(pair) }
  end
  fields[#fields + 1] = { "client_id", client.client_id }
  if client.method == "client_secret_post" then fields[#fields + 1] = { "client_secret", client.client_secret } end
  return {}
end

function Auth:_token(meta, client, fields, issuer)
  local headers = client_auth(client, fields)
  self.debug("oauth: token request to " .. meta.token_endpoint)
  local res, err = fetch.post(self.loop, meta.token_endpoint, "application/x-www-form-urlencoded",
    parse.form(fields), headers, self.tls)
  if not res then return nil, err end
  local doc, terr = parse.token_response(res.status, res.body)
  if not doc then return nil, terr end
  local old = self.state.tokens or {}
  self.state.tokens = { access_token = doc.access_token, issuer = issuer,
    refresh_token = doc.refresh_token or (old.issuer == issuer and old.refresh_token) or nil,
    scope = doc.scope, expires_at = doc.expires_in and (os.time() + doc.expires_in) or nil }
  self:_save()
  return true
end

local function random(n)
  local bytes, err = core.random_bytes(n)
  if not bytes then return nil, err end
  return core.base64(bytes, true)
end

-- The authorization code flow with PKCE; true, or nil and why.
function Auth:_authorize(issuer, meta, client, redirect_uri, scope, resource)
  local authorize = self.opts.authorize
  if not authorize then return nil, "the server needs authorization and no auth.authorize was given" end
  local verifier, err = random(32)
  if not verifier then return nil, err end
  local state = random(16)
  local fields = { { "response_type", "code" }, { "client_id", client.client_id },
    { "redirect_uri", redirect_uri }, { "code_challenge", core.base64(core.sha256(verifier), true) },
    { "code_challenge_method", "S256" }, { "state", state }, { "scope", scope }, { "resource", resource } }
  local ep = meta.authorization_endpoint
  local url = ep .. (ep:find("?", 1, true) and "&" or "?") .. parse.form(fields)
  self.debug("oauth: authorization at " .. ep)
  local back, aerr = authorize(url)
  if type(back) ~= "string" then return nil, "authorization: " .. tostring(aerr or "no redirect came back") end
  local q = parse.query(back:match("%?([^#]*)") or "")
  if q.state == nil or not core.equal(q.state, state) then
    return nil, "authorization: state does not match; refused"
  end
  if q.iss ~= nil and q.iss ~= issuer then
    return nil, ("authorization: iss %q is not the issuer %q; refused"):format(q.iss, issuer)
  end
  if q.iss == nil and meta.authorization_response_iss_parameter_supported == true then
    return nil, "authorization: the server promised iss and sent none; refused"
  end
  if q.error then
    return nil, ("authorization refused: %s%s"):format(q.error:sub(1, 100),
      q.error_description and (" (" .. q.error_description:sub(1, 300) .. ")") or "")
  end
  if not q.code or q.code == "" then return nil, "authorization: no code in the redirect" end
  self.state.scope = scope
  return self:_token(meta, client, { { "grant_type", "authorization_code" }, { "code", q.code },
    { "redirect_uri", redirect_uri }, { "code_verifier", verifier }, { "resource", resource } }, issuer)
end

-- }======================================================================

-- The whole flow for a `status` answer with challenge `ch`; true, or nil and why.
function Auth:_run(status, ch)
  if status == 403 then
    local key = table.concat(words(ch.scope), " ")
    self.step_ups[key] = (self.step_ups[key] or 0) + 1
    if self.step_ups[key] > (self.opts.max_step_ups or M.MAX_STEP_UPS) then
      return nil, "insufficient scope" .. (key ~= "" and (" (" .. key .. ")") or "") .. ": step-up limit reached"
    end
  end
  local prm, err = self:_resource_metadata(ch.resource_metadata)
  if err then return nil, err end
  local issuer = prm and prm.authorization_servers[1] or parse.url(self.url).origin
  local meta
  meta, err = self:_server_metadata(issuer)
  if not meta then return nil, err end
  local tokens = self.state.tokens
  if tokens and tokens.issuer and tokens.issuer ~= issuer then  -- the server moved: nothing carries over
    self.state.tokens, self.state.scope = nil, nil
    tokens = nil
  end
  local resource = prm and prm.resource or self.url
  local redirect_uri
  redirect_uri, err = self:_redirect_uri()
  if not redirect_uri then return nil, err end
  local client
  client, err = self:_client(issuer, meta, redirect_uri)
  if not client then return nil, err end
  if status == 401 and tokens and tokens.refresh_token then
    tokens.access_token = nil
    local ok = self:_token(meta, client, { { "grant_type", "refresh_token" },
      { "refresh_token", tokens.refresh_token }, { "resource", resource } }, issuer)
    if ok then return true end
    self.debug("oauth: refresh failed; authorizing again")
    self.state.tokens = nil
  end
  return self:_authorize(issuer, meta, client, redirect_uri, self:_scope(ch, prm, meta), resource)
end

--- Whether an answer with `status` and `www_authenticate` is the flow's
--- to handle (401; 403 insufficient_scope). When it is, the flow runs (or
--- the one running is joined) and `done(err)` is called once: nil to send
--- the request again, an error text to give up.
---@param status integer
---@param www_authenticate string|nil
---@param done fun(err: string|nil)
---@return boolean
function Auth:handle(status, www_authenticate, done)
  local ch = parse.bearer(www_authenticate)
  if status ~= 401 and not (status == 403 and ch.error == "insufficient_scope") then return false end
  if self.waiting then
    self.waiting[#self.waiting + 1] = done
    return true
  end
  self.waiting = { done }
  local co = coroutine.create(function()
    -- an error raised here (a store that cannot save, a callback) ends the
    -- flow like any failure: the waiting requests must hear of it
    local ran, ok, err = pcall(self._run, self, status, ch)
    if not ran then ok, err = nil, ok end
    local waiting = self.waiting
    self.waiting = nil
    for _, fn in ipairs(waiting) do fn(not ok and ("authorization: " .. tostring(err)) or nil) end
  end)
  workers.wake(co, function(msg)
    local waiting = self.waiting or {}
    self.waiting = nil
    for _, fn in ipairs(waiting) do fn("authorization failed: " .. msg) end
  end)
  return true
end

return M
