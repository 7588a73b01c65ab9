--- `jrpc mcp`: talk to an MCP server through jrpc.mcp.client (either era,
-- found by the client's probe unless --era pins it) and print what a
-- person wants to read: tool names, a tool's text, a resource's text.
--
-- The server is a command on stdio (the client's stdio transport) or a
-- Streamable HTTP URL (the client's HTTP transport, jrpc.mcp.client_http,
-- when this jrpc has it). stdout carries only the answer; errors and
-- --trace go to stderr, as for `jrpc call`.
local jrpc = require "jrpc"
local args = require "jrpc.cli.args"
local cli_http = require "jrpc.cli.http"
local output = require "jrpc.cli.output"
local trace = require "jrpc.cli.trace"
local http_client = require "jrpc.uv.http_client"

local M = {}

M.name = "mcp"
M.summary = "talk to an MCP server: list and call tools, read resources, get prompts"
M.usage = 'jrpc mcp (--stdio CMD | --http URL) [--header "K: V"]... [--ca-file PATH] [--insecure]'
  .. " [--token TOKEN | --no-auth | [--client-id ID] [--redirect-port N] [--token-store PATH]]"
  .. " [--era modern|legacy] [--trace] [--timeout S]"
  .. " (tools | call TOOL [ARGS_JSON] | resources | read URI | prompts | prompt NAME [ARGS_JSON])"
M.help = [[
Connects to an MCP server (2026-07-28 or 2025-11-25: the era is probed
once, server/discover then initialize, unless --era pins it), does one
thing and prints it on stdout:

  tools                   one line per tool: its name, a tab, the first
                          line of its description
  call TOOL [ARGS_JSON]   call TOOL with ARGS_JSON (a JSON object; {} if not
                          given) and print its content: text as it is, other
                          content summarized, e.g. [image image/png, 1234
                          bytes base64]; a result with isError is printed
                          too (on stdout), then exits 1
  resources               one line per resource: its URI, a tab, its name;
                          then one per resource template: its URI
                          template, a tab, its name
  read URI                the resource's text (a blob summarized)
  prompts                 one line per prompt: its name, a tab, the first
                          line of its description
  prompt NAME [ARGS_JSON] the prompt's messages, their text (ARGS_JSON an
                          object of strings)

A text that does not end with a newline gets one.

  --stdio CMD          run CMD with /bin/sh -c and talk over its stdin/stdout;
                       its stderr goes to ours
  --http URL           a Streamable HTTP server at an http:// or https:// URL
  --header "K: V"      (--http, repeatable) send this header on every request
                       (Authorization: Bearer ...); a name given twice is sent
                       once, the values joined by ", "
  --ca-file PATH       (--http) trust the CAs in this PEM file instead of the
                       system store
  --insecure           (--http) do not check the server's certificate: for
                       tests only
  --token TOKEN        (--http) send "Authorization: Bearer TOKEN"; no
                       authorization flow
  --no-auth            (--http) no authorization flow: a 401 is an error
  --client-id ID       (--http) a client registered at the authorization
                       server (else: dynamic registration)
  --redirect-port N    (--http) the port of the redirect listener on
                       127.0.0.1 (default: a free one)
  --token-store PATH   (--http) keep tokens and registrations in PATH (JSON,
                       mode 0600) for the next runs; default: this run only
  --era modern|legacy  do not probe: speak 2026-07-28 (modern) or initialize
                       with 2025-11-25 (legacy)
  --trace              print every message on stderr: "-> " sent, "<- " received
                       (--http: as the client sends and receives them)
  --timeout S          seconds each request may take; default 30

Authorization (--http): when the server answers 401, the OAuth flow runs
(MCP authorization: discovery, registration, PKCE): the URL to open is
printed on stderr, and a listener on 127.0.0.1 takes the browser's
redirect; --timeout covers the time to authorize too (give more when a
person needs it); --trace also shows the flow's steps ("-- oauth: ...").
Tokens are never printed.

Exit status: 0 done; 1 an error reply (its error object on stderr), a
result with isError, no reply within the timeout, or any other failure
(its message on stderr); 2 usage error; 3 cannot spawn or connect, or the
connection ended before the reply (a command that exits at once; over
--http, a request whose connection closed after it was sent: its outcome
is unknown and it is not sent again).]]

M.options = {
  { "--stdio", value = "CMD" },
  { "--era", value = "modern|legacy", check = args.one_of{ "modern", "legacy" } },
  { "--timeout", value = "S", check = args.positive_number },
  { "--trace" },
  { "--token", value = "TOKEN" },
  { "--no-auth" },
  { "--client-id", value = "ID" },
  { "--redirect-port", value = "N", check = args.positive_number },
  { "--token-store", value = "PATH" },
}

-- The options that only mean something with --http.
local AUTH_OPTIONS = { "token", "no_auth", "client_id", "redirect_port", "token_store" }
for _, spec in ipairs(cli_http.OPTIONS) do M.options[#M.options + 1] = spec end

--- How long a request may take when --timeout is not given (as `jrpc call`).
M.DEFAULT_TIMEOUT = 30

-- How long the server may take to exit once its stdin is closed, before
-- SIGTERM (and as long again before SIGKILL); as `jrpc call`.
local CHILD_GRACE = 1

-- {======================================================================
-- The command line
-- =======================================================================

-- ARGS_JSON -> a table for the request (absent: an empty object); or nil, problem.
local function arguments(text)
  if text == nil then return jrpc.object() end
  local value, msg = jrpc.decode(text)
  if value == nil then return nil, "ARGS_JSON is not JSON: " .. tostring(msg) end
  if type(value) ~= "table" or getmetatable(value) == jrpc.core.array_mt then
    return nil, "ARGS_JSON must be a JSON object"
  end
  return value
end

-- Each action: the names of its words (a trailing "?" is optional).
local ACTIONS = {
  tools = {}, resources = {}, prompts = {},
  call = { "TOOL", "ARGS_JSON?" }, read = { "URI" }, prompt = { "NAME", "ARGS_JSON?" },
}
local ACTION_LIST = "tools, call, resources, read, prompts, prompt"

-- ACTION WORDS... -> {name, target, arguments}; or nil, problem.
local function positional(list)
  local name = list[1]
  if name == nil then return nil, "what to do is missing (" .. ACTION_LIST .. ")" end
  local wants = ACTIONS[name]
  if wants == nil then return nil, ("unknown action %q (%s)"):format(name, ACTION_LIST) end
  for i, word in ipairs(wants) do
    if list[i + 1] == nil and not word:match("%?$") then return nil, name .. ": " .. word .. " is missing" end
  end
  if #list > #wants + 1 then return nil, "unexpected argument " .. list[#wants + 2] end
  local action = { name = name, target = list[2] }
  if wants[2] then
    local value, problem = arguments(list[3])
    if value == nil then return nil, problem end
    action.arguments = value
  end
  return action
end

-- --header values -> `{Name = value}` for the client: a name repeated (in
-- any case) is sent once, with the values joined (HTTP's rule).
local function header_map(given)
  local map, spelled = {}, {}
  for _, h in ipairs(given or {}) do
    local lower = h[1]:lower()
    local name = spelled[lower] or h[1]
    spelled[lower] = name
    map[name] = map[name] and (map[name] .. ", " .. h[2]) or h[2]
  end
  return map
end

-- The options, checked: exactly one server, HTTP options only with --http.
local function check(opts)
  if (opts.stdio == nil) == (opts.http == nil) then return "give exactly one of --stdio CMD and --http URL" end
  local lone = cli_http.given_without_url(opts)
  if lone then return lone .. " needs --http URL" end
  if opts.ca_file and opts.insecure then return "give at most one of --ca-file PATH and --insecure" end
  for _, name in ipairs(AUTH_OPTIONS) do
    if opts[name] ~= nil and not opts.http then return "--" .. name:gsub("_", "-") .. " needs --http URL" end
  end
  if opts.token and opts.no_auth then return "give at most one of --token TOKEN and --no-auth" end
  if (opts.token or opts.no_auth) and (opts.client_id or opts.redirect_port or opts.token_store) then
    return "--client-id, --redirect-port and --token-store are for the authorization flow (not with "
      .. (opts.token and "--token" or "--no-auth") .. ")"
  end
  if opts.redirect_port and (opts.redirect_port % 1 ~= 0 or opts.redirect_port > 65535) then
    return "--redirect-port: expected a port number"
  end
  if opts.token and (opts.token == "" or opts.token:find("[^\33-\126]")) then
    return "--token: expected a token (visible ASCII characters)"
  end
  if opts.http then
    local parts, err = http_client.parse_url(opts.http)
    if parts == nil then return "--http " .. opts.http .. ": " .. err end
  end
  opts.timeout = opts.timeout or M.DEFAULT_TIMEOUT
end

-- }======================================================================

-- {======================================================================
-- Connecting
-- =======================================================================

-- The client options every transport shares. The probe waits at most 5 s
-- for a legacy server that never answers server/discover; never longer
-- than --timeout.
local function discover_wait(opts)
  return math.min(5, opts.timeout)
end

local function client_options(opts)
  return { era = opts.era, timeout = opts.timeout, discover_timeout = discover_wait(opts) }
end

-- Over stdio the messages are shown as the bytes on the pipe (the same tap
-- as `jrpc call`): what the client's peer answers by itself shows too.
local function stdio_transport(loop, opts, copts)
  local stdio = require "jrpc.mcp.client_stdio"
  copts.cmd, copts.args, copts.stderr = "/bin/sh", { "-c", opts.stdio }, "inherit"
  if not opts.trace then return copts end
  copts.transport = function(sink)
    local t, err = stdio.open(loop, copts, sink)
    if t then trace.tap(t.child, "ndjson", output.err) end
    return t, err
  end
  return copts
end

-- The authorization flow's options: a loopback redirect that prints the
-- URL to open; --trace shows the flow's steps (never a token).
local function auth_options(loop, opts)
  if opts.no_auth or opts.token then return nil end
  local lb = require("jrpc.mcp.oauth_loopback").new(loop, { port = opts.redirect_port,
    on_url = function(url) output.err("Open this URL to authorize: " .. url) end })
  local store = opts.token_store and require("jrpc.mcp.oauth_store").file(opts.token_store, { uv = loop.uv })
  return { redirect_uri = lb.redirect_uri, authorize = lb.authorize, client_id = opts.client_id,
    client_name = "jrpc", store = store,
    on_debug = opts.trace and function(line) output.err("-- " .. line) end }, lb
end

-- Over HTTP the messages are shown as the transport sends and receives
-- them (each POST's body, each message of an answer).
local function http_transport(loop, opts, copts)
  copts.url, copts.headers = opts.http, header_map(opts.header)
  copts.ca_file, copts.verify = opts.ca_file, not opts.insecure
  if opts.token then copts.headers.Authorization = "Bearer " .. opts.token end
  copts.auth, opts.loopback = auth_options(loop, opts)
  if opts.trace then
    copts.on_message = function(dir, text) output.err(dir .. " " .. cli_http.one_line(text)) end
  end
  return copts
end

-- In a coroutine: the client, or nil and the message (exit 3).
local function connect(loop, opts)
  local copts = client_options(opts)
  if opts.http then
    copts = http_transport(loop, opts, copts)
  else
    copts = stdio_transport(loop, opts, copts)
  end
  local ok, client, cerr = pcall(require("jrpc.mcp.client").connect, loop, copts)
  if not ok then return nil, tostring(client) end
  return client, cerr
end

-- }======================================================================

-- {======================================================================
-- Printing
-- =======================================================================

local function first_line(s)
  return type(s) == "string" and s:match("^[^\r\n]*") or ""
end

-- A text on stdout, ending with a newline (added when it has none).
local function put(text)
  io.stdout:write(text)
  if text:sub(-1) ~= "\n" then io.stdout:write("\n") end
end

-- "[image image/png, 1234 bytes base64]"
local function summary(kind, mime, data)
  return ("[%s %s, %d bytes base64]"):format(kind, tostring(mime or "?"), #tostring(data or ""))
end

-- A resource's contents (read, or embedded in content): its text, or its
-- blob summarized.
local function resource_text(r)
  if type(r) ~= "table" then return "[resource]" end
  if type(r.text) == "string" then return r.text end
  if r.blob ~= nil then return summary("blob", r.mimeType, r.blob) end
  return "[resource " .. tostring(r.uri) .. "]"
end

-- One content block as text.
local function content_text(c)
  if type(c) ~= "table" then return output.encode(c) end
  if c.type == "text" then return tostring(c.text) end
  if c.type == "image" or c.type == "audio" then return summary(c.type, c.mimeType, c.data) end
  if c.type == "resource" then
    local r = type(c.resource) == "table" and c.resource or {}
    return "[resource " .. tostring(r.uri) .. "]\n" .. resource_text(r)
  end
  if c.type == "resource_link" then return "[resource link " .. tostring(c.uri) .. "]" end
  return "[" .. tostring(c.type) .. " content]"
end

local function put_lines(items, key, second)
  for _, item in ipairs(items) do
    local line = tostring(item[key])
    local rest = second(item)
    if rest ~= "" then line = line .. "\t" .. rest end
    io.stdout:write(line, "\n")
  end
end

-- A tool's result: each content block; structured content alone as JSON.
local function put_result(result)
  local content = type(result.content) == "table" and result.content or {}
  for _, c in ipairs(content) do put(content_text(c)) end
  if #content == 0 and result.structuredContent ~= nil then put(output.encode(result.structuredContent)) end
end

-- }======================================================================

-- {======================================================================
-- The actions: each prints its answer and returns the exit code, or
-- returns nil and the client's error
-- =======================================================================

local RUN = {}

function RUN.tools(client)
  local tools, err = client:list_tools()
  if not tools then return nil, err end
  put_lines(tools, "name", function(t) return first_line(t.description) end)
  return output.OK
end

-- Resources, then resource templates (a server without templates may
-- not know the method: -32601 is no templates).
function RUN.resources(client)
  local resources, err = client:list_resources()
  if not resources then return nil, err end
  put_lines(resources, "uri", function(r) return tostring(r.name or "") end)
  local templates, terr = client:list_resource_templates()
  if not templates then
    if terr.code == jrpc.codes.METHOD_NOT_FOUND then return output.OK end
    return nil, terr
  end
  put_lines(templates, "uriTemplate", function(t) return tostring(t.name or "") end)
  return output.OK
end

function RUN.prompts(client)
  local prompts, err = client:list_prompts()
  if not prompts then return nil, err end
  put_lines(prompts, "name", function(p) return first_line(p.description) end)
  return output.OK
end

-- A tool that fails says so in its result (isError): its text is printed,
-- as for any result, and the exit status is 1.
function RUN.call(client, action)
  local result, err = client:call_tool(action.target, action.arguments)
  if not result then return nil, err end
  put_result(result)
  if result.isError == true then
    io.stdout:flush()
    output.say(("tool %s returned an error (isError)"):format(action.target))
    return output.FAILED
  end
  return output.OK
end

function RUN.read(client, action)
  local result, err = client:read_resource(action.target)
  if not result then return nil, err end
  for _, r in ipairs(type(result.contents) == "table" and result.contents or {}) do put(resource_text(r)) end
  return output.OK
end

function RUN.prompt(client, action)
  local result, err = client:get_prompt(action.target, action.arguments)
  if not result then return nil, err end
  for _, m in ipairs(type(result.messages) == "table" and result.messages or {}) do
    put(content_text(type(m) == "table" and m.content or m))
  end
  return output.OK
end

-- The client's error -> what to print and the exit code. `waited`: the
-- seconds since the session began; more than --timeout when the era
-- probe (server/discover, then initialize) waited first, so the message
-- says how long it really was.
local function report(err, opts, action, waited)
  if err.code == "timeout" then
    local why = opts.era == nil and ("server/discover waited up to %g s, then --timeout %g s")
      :format(discover_wait(opts), opts.timeout) or "--timeout"
    output.say(("no reply to %s within %g s (%s)"):format(action.name, math.floor(waited * 10 + 0.5) / 10, why))
    return output.FAILED
  end
  if type(err.code) == "number" then  -- an error reply, whatever its HTTP status
    output.error_object(err)
    return output.FAILED
  end
  if err.code == "auth" then  -- the authorization flow failed: its reason
    output.say(tostring(err.message))
    return output.FAILED
  end
  local code = cli_http.report(err, opts, action.name)  -- over --http: how the exchange went
  if code then return code end
  if err.code == "closed" then
    output.say("the connection ended before the reply: " .. tostring(err.message))
    return output.CONNECT
  end
  output.say(tostring(err.message))
  return output.FAILED
end

-- }======================================================================

-- In a coroutine on the loop: the whole session; returns the exit code.
local function session(loop, opts, action)
  local started = jrpc.core.now()
  local client, err = connect(loop, opts)
  if client == nil then
    output.say(tostring(err))
    return output.CONNECT
  end
  local code, cerr = RUN[action.name](client, action)
  if code == nil then code = report(cerr, opts, action, jrpc.core.now() - started) end
  io.stdout:flush()
  client:close(CHILD_GRACE)
  if opts.loopback then opts.loopback.close() end
  return code
end

--- Run with parsed options and positional words; returns the exit code,
--- or nil and a usage problem.
---@param opts table
---@param list string[]
---@return integer|nil code
---@return string|nil problem
function M.run(opts, list)
  local problem = check(opts)
  if problem then return nil, problem end
  local action, aproblem = positional(list)
  if action == nil then return nil, aproblem end
  local ok, uv = pcall(require, "luv")
  if not ok then
    output.say("cannot load luv, which the jrpc command needs (Debian: lua-luv; LuaRocks: luv)")
    return output.CONNECT
  end
  local loop = jrpc.uv.new(uv, { catch_sigpipe = true })
  local code = loop:run(function() return session(loop, opts, action) end)
  loop:serve_forever()  -- what is still being written goes out before we exit
  return code
end

return M
