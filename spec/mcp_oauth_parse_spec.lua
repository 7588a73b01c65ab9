-- jrpc.mcp.oauth_parse: what the client's OAuth flow reads from servers,
-- good and bad; and the token stores.
local parse = require "jrpc.mcp.oauth_parse"
local stores = require "jrpc.mcp.oauth_store"
local core = require "jrpc.core"

describe("oauth_parse.challenges", function()
  it("reads Bearer parameters, quoted and plain", function()
    assert.same({ { scheme = "bearer", params = { scope = "mcp:basic mcp:write", error = "insufficient_scope",
      resource_metadata = "http://127.0.0.1:1/.well-known/oauth-protected-resource/mcp" } } },
      parse.challenges('Bearer error=insufficient_scope, scope="mcp:basic mcp:write", '
        .. 'resource_metadata="http://127.0.0.1:1/.well-known/oauth-protected-resource/mcp"'))
  end)

  it("reads several challenges, token68 and escapes", function()
    assert.same({
      { scheme = "basic", params = { realm = 'a "b", c' } },
      { scheme = "negotiate", params = {}, token68 = "YII==" },
      { scheme = "bearer", params = { scope = "x" } },
      { scheme = "dpop", params = {} },
    }, parse.challenges('Basic realm="a \\"b\\", c", Negotiate YII==, Bearer scope=x, DPoP'))
  end)

  it("keeps the first of a repeated parameter, lower-cases names", function()
    assert.same({ { scheme = "bearer", params = { scope = "a" } } }, parse.challenges("BEARER Scope=a, scope=b"))
  end)

  it("refuses what is no list of challenges", function()
    assert.same({ nil, "WWW-Authenticate: no auth scheme at byte 1" }, { parse.challenges('"x"') })
    assert.same({ nil, "WWW-Authenticate: expected ',' at byte 12" }, { parse.challenges("Bearer a=b c=d") })
    assert.same({ nil, "WWW-Authenticate: no auth scheme at byte 13" }, { parse.challenges('Bearer scope="open') })
    assert.same({ nil, "WWW-Authenticate: not a string" }, { parse.challenges(nil) })
  end)

  it("bearer: the Bearer parameters, or empty", function()
    assert.same({ scope = "s" }, parse.bearer("Basic realm=x, Bearer scope=s"))
    assert.same({}, parse.bearer("Basic realm=x"))
    assert.same({}, parse.bearer(nil))
    assert.same({ {}, "WWW-Authenticate: no auth scheme at byte 1" }, { parse.bearer("=") })
  end)
end)

describe("oauth_parse URLs", function()
  it("allows https, and plain http to loopback only", function()
    assert.are.equal("https://as.example", parse.allowed("https://AS.example/x").origin)
    assert.are.equal("http://127.0.0.1:8080", parse.allowed("http://127.0.0.1:8080/cb").origin)
    assert.are.equal("http://localhost", parse.allowed("http://localhost/").origin)
    assert.are.equal("http://[::1]:9", parse.allowed("http://[::1]:9/").origin)
    assert.same({ nil, "not https (plain http only to a loopback host): http://as.example/" },
      { parse.allowed("http://as.example/") })
    assert.same({ nil, "not an http(s) URL: ftp://x/" }, { parse.allowed("ftp://x/") })
    assert.same({ nil, "no host, or user info, in URL: https://u@x/" }, { parse.allowed("https://u@x/") })
    assert.same({ nil, "URL with a fragment: https://x/#f" }, { parse.allowed("https://x/#f") })
    assert.same({ nil, "URL with a control character or a space" }, { parse.allowed("https://x/ y") })
    assert.same({ nil, "bad host or port in URL: https://x:y/" }, { parse.allowed("https://x:y/") })
  end)

  it("covers: the same origin, at or above the server's path", function()
    assert.is_true(parse.covers("http://127.0.0.1:1/mcp", "http://127.0.0.1:1/mcp"))
    assert.is_true(parse.covers("http://127.0.0.1:1", "http://127.0.0.1:1/mcp"))
    assert.is_true(parse.covers("http://127.0.0.1:1/", "http://127.0.0.1:1/mcp/"))
    assert.is_false(parse.covers("http://127.0.0.1:1/mc", "http://127.0.0.1:1/mcp"))
    assert.is_false(parse.covers("https://evil.example.com/mcp", "http://127.0.0.1:1/mcp"))
    assert.is_false(parse.covers("http://127.0.0.1:2/mcp", "http://127.0.0.1:1/mcp"))
    assert.is_false(parse.covers(core.null, "http://127.0.0.1:1/mcp"))
  end)

  it("query and form: decoded and encoded", function()
    assert.same({ code = "a b", state = "x/y", iss = "https://as" },
      parse.query("code=a+b&state=x%2Fy&iss=https%3A%2F%2Fas&code=no"))
    assert.are.equal("a=1%202&c=%2B%26", parse.form{ { "a", "1 2" }, { "b", nil }, { "c", "+&" } })
  end)
end)

describe("oauth_parse documents", function()
  it("protected resource metadata", function()
    assert.same({ resource = "https://r/mcp", authorization_servers = { "https://as" } },
      parse.resource_metadata('{"resource":"https://r/mcp","authorization_servers":["https://as"]}'))
    assert.same({ nil, "protected resource metadata: authorization_servers is not a list of strings" },
      { parse.resource_metadata('{"resource":"https://r","authorization_servers":"https://as"}') })
    assert.same({ nil, "protected resource metadata: authorization_servers is empty" },
      { parse.resource_metadata('{"resource":"https://r","authorization_servers":[]}') })
    assert.same({ nil, "protected resource metadata: resource is missing" },
      { parse.resource_metadata('{"authorization_servers":["https://as"]}') })
    assert.same({ nil, "protected resource metadata: not a JSON object" },
      { parse.resource_metadata('["https://as"]') })
    assert.same({ nil, "protected resource metadata: not a JSON object (unexpected end of input at byte 1)" },
      { parse.resource_metadata('') })
    assert.same({ nil, "protected resource metadata: scopes_supported is not a list of strings" },
      { parse.resource_metadata('{"resource":"r","authorization_servers":["a"],"scopes_supported":[1]}') })
  end)

  it("authorization server metadata: the issuer must be the one asked for", function()
    local doc = '{"issuer":"https://as","authorization_endpoint":"https://as/a","token_endpoint":"https://as/t"}'
    assert.are.equal("https://as/t", parse.server_metadata(doc, "https://as").token_endpoint)
    assert.same({ nil, 'authorization server metadata: issuer "https://as" is not "https://as/", '
      .. "the issuer it was asked for" }, { parse.server_metadata(doc, "https://as/") })
    assert.same({ nil, "authorization server metadata: token_endpoint is not a string" },
      { parse.server_metadata('{"issuer":"i","authorization_endpoint":"a","token_endpoint":7}', "i") })
    assert.same({ nil, "authorization server metadata: authorization_response_iss_parameter_supported is not "
      .. "a boolean" }, { parse.server_metadata('{"issuer":"i","authorization_endpoint":"a","token_endpoint":"t",'
      .. '"authorization_response_iss_parameter_supported":"yes"}', "i") })
  end)

  it("registration and token responses", function()
    assert.same({ client_id = "c", client_secret = "s" }, parse.registration('{"client_id":"c","client_secret":"s"}'))
    assert.same({ nil, "client registration response: client_id is missing" }, { parse.registration('{}') })
    assert.same({ nil, "client registration response: client_id is empty" },
      { parse.registration('{"client_id":""}') })
    local t = parse.token_response(200, '{"access_token":"at","token_type":"bearer","expires_in":60}')
    assert.same({ access_token = "at", token_type = "bearer", expires_in = 60 }, t)
    assert.same({ nil, "token response: token_type is not Bearer" },
      { parse.token_response(200, '{"access_token":"at","token_type":"mac"}') })
    assert.same({ nil, "token response: access_token is not a token a header can carry" },
      { parse.token_response(200, '{"access_token":"a\\r\\nb","token_type":"Bearer"}') })
    assert.same({ nil, "token response: expires_in is not a number" },
      { parse.token_response(200, '{"access_token":"a","token_type":"Bearer","expires_in":"1"}') })
    assert.same({ nil, "token endpoint: HTTP 400: invalid_grant (code used)" },
      { parse.token_response(400, '{"error":"invalid_grant","error_description":"code used"}') })
    assert.same({ nil, "token endpoint: HTTP 502" }, { parse.token_response(502, "<html>") })
  end)
end)

describe("oauth_store", function()
  it("memory keeps values per key", function()
    local s = stores.memory()
    assert.is_nil(s:load("k"))
    s:save("k", { a = 1 })
    assert.same({ a = 1 }, s:load("k"))
  end)

  it("file keeps them in a file of mode 0600, across stores", function()
    local uv = require "luv"
    local path = os.tmpname()
    os.remove(path)
    local s = stores.file(path, { uv = uv })
    assert.is_nil(s:load("k"))
    s:save("k", { tokens = { access_token = "t" } })
    s:save("j", { scope = "x" })
    assert.are.equal(tonumber("600", 8), uv.fs_stat(path).mode % 512)
    local again = stores.file(path, { uv = uv })
    assert.same({ tokens = { access_token = "t" } }, again:load("k"))
    assert.same({ scope = "x" }, again:load("j"))
    local f = assert(io.open(path, "w"))
    f:write("not json")
    f:close()
    assert.is_nil(again:load("k"))
    os.remove(path)
    assert.has_error(function() stores.file(path, { uvv = uv }) end,
      "jrpc.mcp.oauth_store.file: unknown option 'uvv' (did you mean 'uv'?)")
  end)
end)

describe("fuzz/oauth_parse.lua", function()
  it("mutated challenges, documents, responses, queries and URLs: nothing raises, every rule holds", function()
    local n, failures = dofile("fuzz/oauth_parse.lua").run(30000, 42)
    assert.are.equal(30000, n)
    assert.same({}, failures)
  end)
end)
