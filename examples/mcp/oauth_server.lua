-- An MCP server protected by OAuth (serve_http's `auth`): every request
-- needs a Bearer token that the authorization server at AS_URL vouches
-- for (RFC 7662 introspection), for this server (its audience) and with
-- the scope `mcp:read`; the tool `admin_report` needs `mcp:admin` too.
--   lua5.4 examples/mcp/oauth_server.lua AS_URL [HOST:PORT]
-- Prints "listening on http://HOST:PORT/mcp" on stderr. The specs run it
-- with node/oauth_test_as.js as the authorization server.
dofile((debug.getinfo(1, "S").source:match("^@(.*)[/\\]") or ".") .. "/../paths.lua")
local jrpc = require "jrpc"
local mcp = require "jrpc.mcp"
local http_client = require "jrpc.uv.http_client"

local as_url = assert(arg[1], "usage: oauth_server.lua AS_URL [HOST:PORT]")
local host, port = (arg[2] or "127.0.0.1:0"):match("^(.+):(%d+)$")
local loop = jrpc.uv.new(require "luv", { catch_sigpipe = true })

local server = mcp.server{ name = "jrpc-oauth-example", version = "1.0.0" }
local NO_ARGS = { type = "object", properties = jrpc.object() }
server:tool{ name = "whoami", description = "Says who the token belongs to", input_schema = NO_ARGS,
  handler = function() return "a client the authorization server vouches for" end }
server:tool{ name = "admin_report", description = "Needs the mcp:admin scope", input_schema = NO_ARGS,
  handler = function() return "all systems nominal" end }

-- The verification: ask the authorization server (in the request's
-- coroutine). Its answer's `aud` is checked against this server by jrpc.
local function verify(token)
  local res, err = http_client.request(loop, { url = as_url .. "/introspect", method = "POST",
    headers = { ["Content-Type"] = "application/x-www-form-urlencoded" },
    body = "token=" .. token:gsub("[^%w%-._~]", function(c) return ("%%%02X"):format(c:byte()) end) })
  if not res or res.status ~= 200 then return nil, "introspection failed: " .. tostring(err or res.status) end
  local info = jrpc.decode(res.body)
  if type(info) ~= "table" or info.active ~= true then return nil, "the token is not active" end
  return { scope = info.scope, audience = info.aud, expires_at = info.exp }
end

local srv = assert(server:serve_http(loop, { host = host, port = tonumber(port), auth = {
  verify = verify, authorization_servers = { as_url }, scopes_supported = { "mcp:read", "mcp:admin" },
  scopes = { "mcp:read" }, tool_scopes = { admin_report = { "mcp:admin" } },
} }))
io.stderr:write(("listening on http://%s:%d/mcp\n"):format(host, srv.port))
io.stderr:flush()
loop:serve_forever()
