--- oauth_parse.lua -- a fuzz loop over what the MCP client's OAuth flow
-- reads from servers (lua/jrpc/mcp/oauth_parse.lua: pure Lua, so a Lua
-- loop reaches all of it; no libFuzzer target needed): WWW-Authenticate
-- values, protected resource and authorization server metadata,
-- registration and token responses, redirect queries and URLs. Each input
-- is a seed mutated a few times (bytes flipped, inserted, deleted,
-- repeated; pieces of JSON and of challenge syntax spliced in). Checked:
-- no parser raises; each gives a value of its documented shape or nil
-- and an error text; what a parser accepts obeys its rules (a token a
-- header can carry, an issuer identical to the one asked for, a URL
-- https or loopback). A broken rule raises "invariant: ...".
--
--   lua5.4 fuzz/oauth_parse.lua [ITERATIONS [SEED]]   (from the repository root)
-- Prints "oauth_parse: N inputs, 0 failures". spec/mcp_oauth_parse_spec.lua
-- runs it with a fixed seed.
local M = {}

local SEEDS = {
  challenge = {
    'Bearer resource_metadata="http://127.0.0.1:1/.well-known/oauth-protected-resource/mcp", scope="a b"',
    'Bearer error="insufficient_scope", scope="mcp:write", error_description="x \\"y\\""',
    'Basic realm="r", Bearer scope=x, Negotiate YII==',
    'DPoP algs="ES256", Bearer',
  },
  resource = {
    '{"resource":"https://r.example/mcp","authorization_servers":["https://as.example"],'
      .. '"scopes_supported":["a","b"],"bearer_methods_supported":["header"]}',
  },
  server = {
    '{"issuer":"https://as.example","authorization_endpoint":"https://as.example/a",'
      .. '"token_endpoint":"https://as.example/t","registration_endpoint":"https://as.example/r",'
      .. '"code_challenge_methods_supported":["S256"],"scopes_supported":["a","offline_access"],'
      .. '"client_id_metadata_document_supported":true,"authorization_response_iss_parameter_supported":true}',
  },
  registration = { '{"client_id":"c","client_secret":"s","token_endpoint_auth_method":"client_secret_basic"}' },
  token = { '{"access_token":"at","token_type":"Bearer","expires_in":3600,"refresh_token":"rt","scope":"a b"}',
    '{"error":"invalid_grant","error_description":"used"}' },
  query = { "code=abc&state=xyz&iss=https%3A%2F%2Fas.example", "error=access_denied&state=s" },
  url = { "https://as.example/.well-known/oauth-authorization-server/tenant", "http://127.0.0.1:8080/cb?x=1",
    "http://[::1]:9/" },
}

local PIECES = { '"', "\\", ",", "=", " ", "\t", "{", "}", "[", "]", ":", "null", "true", "1e999", "-0", "\0",
  "\r\n", "%", "%2", "%zz", "&", "?", "#", "@", "//", "Bearer ", '"\\u0000"', ("a"):rep(300), "\255\254",
  '"issuer":', '"access_token":', '"token_type":"bearer"', "[1,2]", "{}", "http://", "https://" }

local function mutate(s, rnd)
  for _ = 1, rnd(1, 4) do
    local n = #s
    local op = rnd(1, 6)
    local i = rnd(1, n + 1)
    if op == 1 and n > 0 then      -- flip a byte
      s = s:sub(1, i - 1) .. string.char(rnd(0, 255)) .. s:sub(i + 1)
    elseif op == 2 then            -- insert a piece
      s = s:sub(1, i - 1) .. PIECES[rnd(1, #PIECES)] .. s:sub(i)
    elseif op == 3 and n > 0 then  -- delete a span
      s = s:sub(1, i - 1) .. s:sub(i + rnd(1, 8))
    elseif op == 4 and n > 0 then  -- repeat a span
      local j = math.min(n, i + rnd(0, 16))
      s = s:sub(1, j) .. s:sub(i, j) .. s:sub(j + 1)
    elseif op == 5 then            -- truncate
      s = s:sub(1, i - 1)
    else                           -- insert a random byte
      s = s:sub(1, i - 1) .. string.char(rnd(0, 255)) .. s:sub(i)
    end
  end
  return s
end

local function invariant(ok, what)
  if not ok then error("invariant: " .. what, 2) end
end

local function fails(v, err)  -- nil and a text, the expected failure
  invariant(v == nil and type(err) == "string" and err ~= "", "a failure without an error text")
end

-- Each kind: run the parser on `s` and check what it gave.
local CHECK = {}

function CHECK.challenge(parse, s)
  local list, err = parse.challenges(s)
  if list == nil then return fails(list, err) end
  for _, ch in ipairs(list) do
    invariant(type(ch.scheme) == "string" and ch.scheme == ch.scheme:lower(), "scheme not lower-case")
    for k, v in pairs(ch.params) do invariant(type(k) == "string" and type(v) == "string", "param not a string") end
  end
  invariant(type(parse.bearer(s)) == "table", "bearer gave no table")
end

function CHECK.resource(parse, s)
  local doc, err = parse.resource_metadata(s)
  if doc == nil then return fails(doc, err) end
  invariant(type(doc.resource) == "string", "resource not a string")
  invariant(#doc.authorization_servers > 0, "no authorization server")
  for _, a in ipairs(doc.authorization_servers) do invariant(type(a) == "string", "server not a string") end
  parse.covers(doc.resource, "https://r.example/mcp")
end

function CHECK.server(parse, s)
  local doc, err = parse.server_metadata(s, "https://as.example")
  if doc == nil then return fails(doc, err) end
  invariant(doc.issuer == "https://as.example", "issuer not the one asked for")
  invariant(type(doc.token_endpoint) == "string" and type(doc.authorization_endpoint) == "string", "endpoints")
end

function CHECK.registration(parse, s)
  local doc, err = parse.registration(s)
  if doc == nil then return fails(doc, err) end
  invariant(type(doc.client_id) == "string" and doc.client_id ~= "", "client_id")
end

function CHECK.token(parse, s, rnd)
  local doc, err = parse.token_response(rnd(1, 4) == 1 and 400 or 200, s)
  if doc == nil then return fails(doc, err) end
  invariant(doc.access_token:match("^[\33-\126]+$") ~= nil, "a token a header cannot carry")
  invariant(doc.token_type:lower() == "bearer", "not a Bearer token")
end

function CHECK.query(parse, s)
  for k, v in pairs(parse.query(s)) do invariant(type(k) == "string" and type(v) == "string", "query pair") end
end

function CHECK.url(parse, s)
  local u, err = parse.allowed(s)
  if u == nil then return fails(u, err) end
  invariant(u.scheme == "https" or u.host == "127.0.0.1" or u.host == "localhost" or u.host == "[::1]",
    "plain http allowed to a host not loopback")
  invariant(not s:find("#", 1, true), "a fragment allowed")
end

local KINDS = { "challenge", "resource", "server", "registration", "token", "query", "url" }

--- Run `iterations` inputs from `seed`; returns the count and the failures
--- (a list of {kind, input, error}).
function M.run(iterations, seed)
  local parse = require "jrpc.mcp.oauth_parse"
  local state = seed
  local function rnd(a, b)  -- a small LCG: the same inputs under Lua 5.4 and LuaJIT
    state = (state * 1103515245 + 12345) % 2147483648
    return a + math.floor(state / 65536) % (b - a + 1)  -- the high bits: the low ones cycle
  end
  local failures = {}
  for n = 1, iterations do
    local kind = KINDS[(n - 1) % #KINDS + 1]
    local seeds = SEEDS[kind]
    local input = mutate(seeds[rnd(1, #seeds)], rnd)
    local ok, err = pcall(CHECK[kind], parse, input, rnd)
    if not ok then failures[#failures + 1] = { kind, input, tostring(err) } end
  end
  return iterations, failures
end

if arg and arg[0] and arg[0]:match("oauth_parse%.lua$") and not package.loaded["busted"] then
  package.path = "lua/?.lua;lua/?/init.lua;" .. package.path
  package.cpath = "build/" .. (rawget(_G, "jit") and "jit" or "5.4") .. "/?.so;" .. package.cpath
  local n, failures = M.run(tonumber(arg[1]) or 100000, tonumber(arg[2]) or os.time())
  for _, f in ipairs(failures) do io.stderr:write(("%s %q: %s\n"):format(f[1], f[2], f[3])) end
  print(("oauth_parse: %d inputs, %d failures"):format(n, #failures))
  os.exit(#failures == 0 and 0 or 1)
end

return M
