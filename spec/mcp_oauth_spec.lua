-- MCP authorization end to end, with real processes on loopback: a test
-- authorization server (node/oauth_test_as.js), a jrpc server protected by
-- serve_http's `auth` (examples/mcp/oauth_server.lua, which verifies
-- tokens by introspection), and as clients `jrpc mcp --http` (the flow,
-- with its loopback redirect listener; the spec plays the browser) and
-- the official TypeScript SDK 1.32.2 with its own OAuth provider.
if dofile("spec/once.lua")(pending, "the authorization flow in Lua against servers it starts; the C paths (HTTP, TLS, SHA-256) are the other specs'", { "asan" }) then return end
local S = dofile("spec/uv_support.lua")
local cli = dofile("spec/cli_support.lua")(S)
local jrpc = require "jrpc"
local http_client = require "jrpc.uv.http_client"
local slurp = dofile("spec/files.lua").take

local uv = S.uv

-- The authorization server and the protected server: their URLs, and the
-- authorization server's log (its events, one line each, from now on).
local function start()
  local as_log = { text = "" }
  assert(S.spawn{ cmd = "node", args = { "node/oauth_test_as.js" },
    stderr = function(chunk) as_log.text = as_log.text .. chunk end })
  assert(S.wait_until(function() return as_log.text:find("\n") ~= nil end, 10), "no AS line: " .. as_log.text)
  local as_url = assert(as_log.text:match("^listening (http://127%.0%.0%.1:%d+)\n"), as_log.text)
  local log = { text = "" }
  assert(S.spawn{ cmd = S.INTERP, args = { "examples/mcp/oauth_server.lua", as_url },
    stderr = function(chunk) log.text = log.text .. chunk end })
  assert(S.wait_until(function() return log.text:find("\n") ~= nil end, 5), "no server line: " .. log.text)
  local url = assert(log.text:match("^listening on (http://127%.0%.0%.1:%d+/mcp)\n"), log.text)
  as_log.text = ""
  return as_url, url, as_log, log
end

-- The browser: open `url` (the authorization server approves at once)
-- and follow its redirect to the client's listener.
local function browse(url)
  local res = assert(http_client.request(S.loop, { url = url }))
  assert.are.equal(302, res.status)
  local back = assert(http_client.request(S.loop, { url = res.headers.location }))
  assert.are.equal(200, back.status)
end

-- `jrpc mcp WORDS...` as a process: when it prints a URL to open, the
-- browser opens it. Its status, stdout, stderr.
local function jrpc_mcp(words)
  local out_pipe, err_pipe = uv.new_pipe(false), uv.new_pipe(false)
  local out, err, code, eofs = {}, {}, nil, 0
  local args = { "bin/jrpc", "mcp" }
  for _, w in ipairs(words) do args[#args + 1] = w end
  local handle
  handle = uv.spawn(S.INTERP, { args = args, stdio = { nil, out_pipe, err_pipe } }, function(c)
    code = c
    handle:close()
  end)
  local function reader(into, pipe)
    return function(_, data)
      if data then into[#into + 1] = data return end
      eofs = eofs + 1
      pipe:close()
    end
  end
  out_pipe:read_start(reader(out, out_pipe))
  err_pipe:read_start(reader(err, err_pipe))
  local opened = false
  assert(S.wait_until(function()
    local u = not opened and table.concat(err):match("Open this URL to authorize: (%S+)\n")
    if u then
      opened = true
      browse(u)
    end
    return code ~= nil and eofs == 2
  end, 20), "jrpc mcp did not end: " .. table.concat(err))
  return code, table.concat(out), table.concat(err)
end

local TOOLS = "whoami\tSays who the token belongs to\nadmin_report\tNeeds the mcp:admin scope\n"
-- The line that asks to open the authorization URL, as a pattern, for
-- the scope and the resource (form-encoded).
local function open_line(scope, resource)
  return "^Open this URL to authorize: http://127%.0%.0%.1:%d+/authorize%?response_type=code&client_id=[%w_-]+"
    .. "&redirect_uri=http%%3A%%2F%%2F127%.0%.0%.1%%3A%d+%%2Fcallback&code_challenge=[%w_-]+"
    .. "&code_challenge_method=S256&state=[%w_-]+&scope=" .. scope:gsub("%%", "%%%%") .. "&resource="
    .. resource:gsub("%%", "%%%%") .. "\n$"
end

local function escaped(s)
  return (s:gsub("[^%w%-._~]", function(c) return ("%%%02X"):format(c:byte()) end))
end

local function pattern_of(s) return (s:gsub("%p", "%%%0")) end

describe("MCP authorization: serve_http's auth", function()
  after_each(S.cleanup)

  it("answers 401 with a challenge, serves the resource metadata, refuses bad tokens and audiences", function()
    S.run(function()
      local as_url, url = start()
      local port = url:match(":(%d+)/mcp$")
      local meta_url = "http://127.0.0.1:" .. port .. "/.well-known/oauth-protected-resource/mcp"
      local body = '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}'
      local function post(headers)
        local h = { ["Content-Type"] = "application/json", Accept = "application/json, text/event-stream" }
        for k, v in pairs(headers or {}) do h[k] = v end
        return assert(http_client.request(S.loop, { url = url, method = "POST", headers = h, body = body }))
      end
      local res = post()
      assert.are.equal(401, res.status)
      assert.are.equal(('Bearer resource_metadata="%s", scope="mcp:read"'):format(meta_url),
        res.headers["www-authenticate"])
      assert.same({ error = "invalid_token", error_description = "authorization required" }, jrpc.decode(res.body))
      res = post{ Authorization = "Bearer not-a-token" }
      assert.are.equal(401, res.status)
      assert.are.equal(('Bearer resource_metadata="%s", scope="mcp:read", error="invalid_token", '
        .. 'error_description="the token is not active"'):format(meta_url), res.headers["www-authenticate"])
      res = post{ Authorization = "Basic eDp5" }
      assert.are.equal(401, res.status)
      for _, where in ipairs{ meta_url, "http://127.0.0.1:" .. port .. "/.well-known/oauth-protected-resource" } do
        res = assert(http_client.request(S.loop, { url = where }))
        assert.are.equal(200, res.status)
        assert.same({ resource = url, authorization_servers = { as_url }, scopes_supported = { "mcp:read", "mcp:admin" },
          bearer_methods_supported = { "header" } }, jrpc.decode(res.body))
      end
    end, 20)
  end)

  it("checks the audience, the expiry and each tool's scopes (verify in process)", function()
    S.run(function()
      local mcp = require "jrpc.mcp"
      local server = mcp.server{ name = "x", version = "1" }
      server:tool{ name = "open", input_schema = { type = "object" }, handler = function() return "ok" end }
      server:tool{ name = "guarded", input_schema = { type = "object" }, handler = function() return "ok" end }
      local TOKENS = {
        other = { audience = "https://other.example/mcp", scope = "read" },
        old = { audience = "https://mcp.example/mcp", scope = "read", expires_at = os.time() - 1 },
        good = { audience = { "https://x", "https://mcp.example/mcp" }, scopes = { "read" } },
        both = { audience = "https://mcp.example/mcp", scope = "read write" },
      }
      local srv = assert(server:serve_http(S.loop, { auth = {
        verify = function(token) return TOKENS[token] end, resource = "https://mcp.example/mcp",
        authorization_servers = { "https://as.example" }, scopes = { "read" }, tool_scopes = { guarded = { "write" } },
      } }))
      local url = "http://127.0.0.1:" .. srv.port .. "/mcp"
      local meta = 'resource_metadata="https://mcp.example/.well-known/oauth-protected-resource/mcp"'
      local function call(token, tool)
        local res = assert(http_client.request(S.loop, { url = url, method = "POST", body = jrpc.encode{
          jsonrpc = "2.0", id = 1, method = "tools/call", params = { name = tool, arguments = jrpc.object(),
            _meta = { ["io.modelcontextprotocol/protocolVersion"] = "2026-07-28",
              ["io.modelcontextprotocol/clientCapabilities"] = jrpc.object() } } },
          headers = { ["Content-Type"] = "application/json", Accept = "application/json, text/event-stream",
            Authorization = "Bearer " .. token, ["MCP-Protocol-Version"] = "2026-07-28",
            ["Mcp-Method"] = "tools/call", ["Mcp-Name"] = tool } }))
        return res.status, res.headers["www-authenticate"]
      end
      assert.same({ 401, "Bearer " .. meta .. ', scope="read", error="invalid_token", '
        .. 'error_description="the token is not for this resource"' }, { call("other", "open") })
      assert.same({ 401, "Bearer " .. meta .. ', scope="read", error="invalid_token", '
        .. 'error_description="the token has expired"' }, { call("old", "open") })
      assert.same({ 200 }, { call("good", "open") })
      assert.same({ 403, "Bearer " .. meta .. ', scope="read write", error="insufficient_scope", '
        .. 'error_description="the tool guarded needs more scope"' }, { call("good", "guarded") })
      assert.same({ 200 }, { call("both", "guarded") })
      srv:close()
    end, 20)
  end)

  it("checks its options", function()
    local mcp = require "jrpc.mcp"
    local server = mcp.server{ name = "x", version = "1" }
    assert.has_error(function() server:serve_http(S.loop, { auth = { verify = print } }) end,
      "serve_http: auth.authorization_servers must be a list of issuer URLs")
    assert.has_error(function()
      server:serve_http(S.loop, { auth = { verify = print, authorization_servers = { "https://as" }, scope = { "a" } } })
    end, "serve_http: auth: unknown option 'scope' (did you mean 'scopes'?)")
    assert.has_error(function() server:serve_http(S.loop, { auth = { authorization_servers = { "https://as" } } }) end,
      "serve_http: auth.verify must be a function(token, req)")
  end)
end)

describe("MCP authorization: jrpc mcp --http runs the flow", function()
  after_each(S.cleanup)

  it("authorizes through its loopback listener, keeps the tokens in a 0600 file, steps up for a tool", function()
    S.run(function()
      local _, url, as_log = start()
      local store = os.tmpname()
      os.remove(store)
      local code, out, err = jrpc_mcp{ "--http", url, "--token-store", store, "tools" }
      assert.are.equal(0, code, err)
      assert.are.equal(TOOLS, out)
      assert.matches(open_line(escaped("mcp:read offline_access"), escaped(url)), err)
      assert.are.equal("register none\nauthorize scope=mcp:read offline_access resource=" .. url
        .. "\ntoken authorization_code\nintrospect active\nintrospect active\n", as_log.text)
      assert.are.equal(tonumber("600", 8), uv.fs_stat(store).mode % 512)
      local f = assert(io.open(store))
      local token = jrpc.decode(f:read("a"))[url].tokens.access_token
      f:close()

      -- the next run uses the stored token: no browser, no new grant;
      -- --trace shows the messages and never the token
      as_log.text = ""
      code, out, err = jrpc_mcp{ "--http", url, "--token-store", store, "--trace", "call", "whoami" }
      assert.are.equal(0, code, err)
      assert.are.equal("a client the authorization server vouches for\n", out)
      assert.are.equal("introspect active\nintrospect active\n", as_log.text)
      assert.is_nil(err:find(token, 1, true))
      assert.matches('^%-> {"jsonrpc":"2.0","method":"server/discover"', err)

      -- a tool that needs mcp:admin: 403 insufficient_scope, authorized again with it
      as_log.text = ""
      code, out, err = jrpc_mcp{ "--http", url, "--token-store", store, "call", "admin_report" }
      assert.are.equal(0, code, err)
      assert.are.equal("all systems nominal\n", out)
      assert.matches(open_line(escaped("mcp:read offline_access mcp:admin"), escaped(url)), err)
      assert.matches("^introspect active\nintrospect active\nregister none\nauthorize scope="
        .. pattern_of("mcp:read offline_access mcp:admin resource=" .. url) .. "\ntoken authorization_code\n"
        .. "introspect active\n$", as_log.text)
      os.remove(store)
    end, 40)
  end)

  it("--no-auth and --token send no flow: the 401 is an error", function()
    S.run(function()
      local _, url, as_log = start()
      local code, out, err = jrpc_mcp{ "--http", url, "--no-auth", "--era", "modern", "tools" }
      assert.same({ 1, "", "jrpc mcp: HTTP 401 Unauthorized\n" }, { code, out, err })
      code, out, err = jrpc_mcp{ "--http", url, "--token", "not-a-token", "--era", "modern", "tools" }
      assert.same({ 1, "", "jrpc mcp: HTTP 401 Unauthorized\n" }, { code, out, err })
      assert.are.equal("introspect inactive\n", as_log.text)
    end, 20)
  end)

  it("refuses a server whose metadata names another resource, before any authorization", function()
    S.run(function()
      local prm = '{"resource":"https://evil.example/mcp","authorization_servers":["https://as.example"]}'
      local server = S.http_serve(function(req, res)
        if req.path == "/.well-known/oauth-protected-resource/mcp" then
          return res:send(200, { ["content-type"] = "application/json" }, prm)
        end
        res:send(401, { ["www-authenticate"] = "Bearer" }, "")
      end)
      local url = "http://127.0.0.1:" .. server.port .. "/mcp"
      local code, out, err = jrpc_mcp{ "--http", url, "--era", "modern", "tools" }
      server:close()
      assert.same({ 1, "", ('jrpc mcp: authorization: protected resource metadata names resource '
        .. '"https://evil.example/mcp", not this server (%s): refused\n'):format(url) }, { code, out, err })
    end, 20)
  end)

  it("checks its options", function()
    local status, _, err = cli.jrpc_cli("mcp", "--http", "http://127.0.0.1:1/mcp", "--token", "t", "--no-auth", "tools")
    assert.are.equal(2, status)
    assert.matches("^jrpc mcp: give at most one of %-%-token TOKEN and %-%-no%-auth\nusage: jrpc mcp ", err)
    status, _, err = cli.jrpc_cli("mcp", "--stdio", "true", "--token-store", "/tmp/x", "tools")
    assert.are.equal(2, status)
    assert.matches("^jrpc mcp: %-%-token%-store needs %-%-http URL\n", err)
    status, _, err = cli.jrpc_cli("mcp", "--http", "http://127.0.0.1:1/mcp", "--token", "a b", "tools")
    assert.are.equal(2, status)
    assert.matches("^jrpc mcp: %-%-token: expected a token %(visible ASCII characters%)\n", err)
  end)
end)

describe("MCP authorization: the client's flow refuses what it must, with clear errors", function()
  it("no PKCE S256, a wrong state, a refused token, no registration, no redirect back", function()
    S.run(function()
      local mcp_client = require "jrpc.mcp.client"
      local case, base = {}, nil
      local server = S.http_serve(function(req, res)
        local json = { ["content-type"] = "application/json" }
        if req.path == "/mcp" then
          return res:send(401, { ["www-authenticate"] = 'Bearer resource_metadata="' .. base .. '/prm"' }, "")
        elseif req.path == "/prm" then
          return res:send(200, json, jrpc.encode{ resource = base .. "/mcp", authorization_servers = { base } })
        elseif req.path == "/.well-known/oauth-authorization-server" then
          local meta = { issuer = base, authorization_endpoint = base .. "/authorize", token_endpoint = base .. "/token",
            registration_endpoint = base .. "/register", code_challenge_methods_supported = { "S256" } }
          for k, v in pairs(case.meta or {}) do meta[k] = v ~= false and v or nil end
          return res:send(200, json, jrpc.encode(meta))
        elseif req.path == "/register" then
          return res:send(201, json, '{"client_id":"c"}')
        elseif req.path == "/authorize" then
          local q = require("jrpc.mcp.oauth_parse").query(req.query)
          return res:send(302, { location = q.redirect_uri .. "?code=k&state=" .. (case.state or q.state) }, "")
        elseif req.path == "/token" then
          return res:send(400, json, '{"error":"invalid_grant","error_description":"nope"}')
        end
        res:send(404, {}, "")
      end)
      base = "http://127.0.0.1:" .. server.port
      local function attempt(c, authorize)
        case = c
        local client = assert(mcp_client.connect(S.loop, { url = base .. "/mcp", era = "modern", auth = {
          redirect_uri = "http://127.0.0.1:9/cb", authorize = authorize or function(u)
            return assert(http_client.request(S.loop, { url = u })).headers.location
          end } }))
        local _, err = client:list_tools()
        client:close()
        return err.code, err.http_status, err.message
      end
      assert.same({ "auth", 401, "authorization: " .. base .. "/.well-known/oauth-authorization-server: the "
        .. "authorization server does not list PKCE S256; refused" },
        { attempt{ meta = { code_challenge_methods_supported = { "plain" } } } })
      assert.same({ "auth", 401, "authorization: authorization: state does not match; refused" },
        { attempt{ state = "forged" } })
      assert.same({ "auth", 401, "authorization: token endpoint: HTTP 400: invalid_grant (nope)" }, { attempt{} })
      assert.same({ "auth", 401, "authorization: " .. base .. " offers no registration: give auth.client_id "
        .. "(a client registered there)" }, { attempt{ meta = { registration_endpoint = false } } })
      assert.same({ "auth", 401, "authorization: authorization: the browser was closed" },
        { attempt({}, function() return nil, "the browser was closed" end) })
      server:close()
    end, 20)
  end)

  it("checks the auth option", function()
    local mcp_client = require "jrpc.mcp.client"
    assert.has_error(function()
      mcp_client.connect(S.loop, { url = "http://127.0.0.1:1/mcp", auth = { authorise = print } })
    end, "jrpc.mcp.client: auth: unknown option 'authorise' (did you mean 'authorize'?)")
    assert.has_error(function()
      mcp_client.connect(S.loop, { url = "http://127.0.0.1:1/mcp", auth = { store = {} } })
    end, "jrpc.mcp.client: auth.store must have load and save (see jrpc.mcp.oauth_store)")
    assert.has_error(function()
      mcp_client.connect(S.loop, { url = "http://127.0.0.1:1/mcp", auth = { max_step_ups = -1 } })
    end, "jrpc.mcp.client: auth.max_step_ups must be a non-negative integer")
  end)
end)

describe("MCP authorization: the flow's HTTP (jrpc.mcp.oauth_fetch)", function()
  it("follows redirects as allowed: GET any, POST 307/308 in its origin, never to plain http elsewhere", function()
    S.run(function()
      local fetch = require "jrpc.mcp.oauth_fetch"
      local base
      local server = S.http_serve(function(req, res)
        local to = ({ ["/a"] = "/b", ["/b"] = base .. "/c", ["/away"] = "http://example.com/x",
          ["/post303"] = "/c", ["/loop"] = "/loop" })[req.path]
        if req.path == "/post307" then return res:send(307, { location = "/c" }, "") end
        if to then return res:send(req.path == "/post303" and 303 or 302, { location = to }, "") end
        res:send(200, { ["content-type"] = "application/json" }, req.method .. " " .. req.path .. " " .. (req.body or ""))
      end)
      base = "http://127.0.0.1:" .. server.port
      local res = assert(fetch.get(S.loop, base .. "/a"))
      assert.same({ 200, "GET /c " }, { res.status, res.body })
      res = assert(fetch.post(S.loop, base .. "/post307", "application/x-www-form-urlencoded", "x=1"))
      assert.same({ 200, "POST /c x=1" }, { res.status, res.body })
      assert.same({ nil, base .. "/post303: HTTP 303 would turn the POST into a GET; not followed" },
        { fetch.post(S.loop, base .. "/post303", "text/plain", "x") })
      assert.same({ nil, "not https (plain http only to a loopback host): http://example.com/x" },
        { fetch.get(S.loop, base .. "/away") })
      assert.same({ nil, base .. "/loop: more than 5 redirects" }, { fetch.get(S.loop, base .. "/loop") })
      assert.same({ nil, "not https (plain http only to a loopback host): http://example.com/" },
        { fetch.get(S.loop, "http://example.com/") })
      server:close()
    end, 20)
  end)
end)

describe("MCP authorization: the official TypeScript SDK's OAuth client", function()
  after_each(S.cleanup)

  it("@modelcontextprotocol/sdk 1.32.2 authorizes and reaches a jrpc server protected by serve_http's auth", function()
    S.run(function()
      local _, url, as_log = start()
      local errfile = os.tmpname()
      local code, out = S.shell_wait(("timeout -k 2 20 node node/mcp_sdk1_oauth_client.js %s 2>%s"):format(url, errfile))
      local err = slurp(errfile)
      assert.are.equal(0, code, err)
      local lines = {}
      S.split_lines(out, lines)
      for i, line in ipairs(lines) do lines[i] = jrpc.decode(line) end
      assert.same({
        { step = "authorization", status = 302, scope = "mcp:read", resource = url, iss = true },
        { step = "unauthorized" },
        { step = "connected", token_type = "Bearer", has_refresh = true },
        { step = "tools/list", names = { "whoami", "admin_report" } },
        { step = "tools/call whoami", result = { content = { { type = "text",
          text = "a client the authorization server vouches for" } } } },
        { step = "tools/call admin_report", refused = true,
          message = "Streamable HTTP error: Server returned 403 after trying upscoping" },
      }, lines)
      assert.matches("^register client_secret_basic\nauthorize scope=mcp:read resource=" .. pattern_of(url)
        .. "\ntoken authorization_code\n", as_log.text)
    end, 40)
  end)
end)
