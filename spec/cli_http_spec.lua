-- `jrpc call --http` (bin/jrpc as a real process, run by the interpreter
-- running this spec: lua5.4 or luajit) against real servers on 127.0.0.1:
-- our MCP everything server's Streamable HTTP (JSON answers, an SSE answer
-- with progress before the result, 202 for a notification, 400/404/421),
-- node/jayson_http_server.js over HTTP (results, errors, a header echoed
-- back, 204 for a notification, 415), node/sse_http_server.js (an SSE
-- answer with other messages first that stays open, a pretty-printed JSON
-- body), jayson over HTTPS with a certificate
-- from a test CA made here (trusted through --ca-file, refused without
-- it, --insecure), a refused connection and a server that never answers.
-- Every check is on the exact stdout, stderr and exit status.
if dofile("spec/once.lua")(pending, "the CLI's words and exit codes, run as child processes; its C paths are the other specs'", { "asan" }) then return end
local jrpc = require "jrpc"
local S = dofile("spec/uv_support.lua")
local C = dofile("spec/cli_support.lua")(S)
local T = dofile("spec/tls_support.lua")

local unpack = table.unpack or unpack
local LUA = S.INTERP
local USAGE = C.CALL_USAGE
local timed_cli, jrpc_cli, wait_for = C.timed_cli, C.jrpc_cli, C.wait_for

-- A node server of node/ (`script` with `args`), which prints {"port":N}:
-- it exits when its stdin ends, and its stdin is a pipe from us: `stop()`
-- closes it.
local function start_server(script, args)
  local log = os.tmpname()
  local node = assert(io.popen("exec node " .. script .. " " .. (args or "") .. " > " .. log, "w"))
  local port = wait_for(log, '{"port":(%d+)}')
  os.remove(log)
  local function stop() node:close() end
  if port == nil then stop(); error(script .. " did not start") end
  return tonumber(port), stop
end

-- A TCP port nothing listens on: bound, read, closed again.
local function free_port()
  local uv = require "luv"
  local tcp = uv.new_tcp()
  assert(tcp:bind("127.0.0.1", 0))
  local port = tcp:getsockname().port
  tcp:close()
  uv.run("nowait")
  return port
end

local function has_node()
  local r = os.execute("command -v node > /dev/null 2>&1")
  return (r == true or r == 0) and io.open("node/node_modules/jayson/package.json") ~= nil
end

-- The lines of `text` starting with `prefix`, without it, decoded (a Lua
-- table's key order differs between runs: the messages are compared as
-- values, not as text).
local function decoded_lines(text, prefix)
  local list = {}
  for line in text:gmatch("[^\n]+") do
    if line:sub(1, #prefix) == prefix then list[#list + 1] = assert(jrpc.decode(line:sub(#prefix + 1))) end
  end
  return list
end

describe("jrpc call --http: usage errors (exit 2)", function()
  local cases = {
    { { "call", "--http", "http://127.0.0.1:1/", "--framing", "lsp", "m" },
      "jrpc call: --framing is for --stdio and --tcp: over --http each message is one request body\n" },
    { { "call", "--http", "http://127.0.0.1:1/", "--tcp", "127.0.0.1:1", "m" },
      "jrpc call: give exactly one of --stdio CMD, --tcp HOST:PORT and --http URL\n" },
    { { "call", "--tcp", "127.0.0.1:1", "--header", "A: b", "m" }, "jrpc call: --header needs --http URL\n" },
    { { "call", "--stdio", "cat", "--ca-file", "ca.pem", "m" }, "jrpc call: --ca-file needs --http URL\n" },
    { { "call", "--stdio", "cat", "--insecure", "m" }, "jrpc call: --insecure needs --http URL\n" },
    { { "call", "--http", "https://127.0.0.1:1/", "--ca-file", "ca.pem", "--insecure", "m" },
      "jrpc call: give at most one of --ca-file PATH and --insecure\n" },
    { { "call", "--http", "ftp://127.0.0.1/", "m" }, "jrpc call: --http ftp://127.0.0.1/: unsupported URL scheme: ftp\n" },
    { { "call", "--http", "127.0.0.1:80", "m" }, "jrpc call: --http 127.0.0.1:80: not an absolute URL: 127.0.0.1:80\n" },
    { { "call", "--http", "http://127.0.0.1:1/", "--header", "no colon", "m" },
      'jrpc call: --header no colon: expected "NAME: VALUE" (NAME a header name)\n' },
    { { "call", "--http", "http://127.0.0.1:1/", "--header", "Two words: x", "m" },
      'jrpc call: --header Two words: x: expected "NAME: VALUE" (NAME a header name)\n' },
    { { "call", "--http", "http://127.0.0.1:1/", "--header", "X: a\rb", "m" },
      "jrpc call: --header X: a\rb: control characters are not allowed in a header value\n" },
    { { "call", "--http", "http://127.0.0.1:1/", "--header", "content-length: 5", "m" },
      "jrpc call: --header content-length: 5: jrpc writes content-length itself\n" },
    { { "call", "--http", "http://127.0.0.1:1/", "--header", "Transfer-Encoding: chunked", "m" },
      "jrpc call: --header Transfer-Encoding: chunked: jrpc writes Transfer-Encoding itself\n" },
  }
  for _, case in ipairs(cases) do
    it("jrpc " .. table.concat(case[1], " "):gsub("\r", "\\r"), function()
      assert.are.same({ 2, "", case[2] .. "usage: " .. USAGE }, { jrpc_cli(unpack(case[1])) })
    end)
  end

  it("call --help documents --http, --header, --ca-file and --insecure", function()
    local status, out, err = jrpc_cli("call", "--help")
    assert.are.same({ 0, "" }, { status, err })
    assert.are.equal("usage: " .. USAGE, out:sub(1, #USAGE + 7))
    for _, text in ipairs({ "  --http URL           POST the message to an http:// or https:// URL;",
      '  --header "K: V"      (--http, repeatable) send this header too;',
      "  --insecure           (--http) do not check the server's certificate: for\n                       tests only" }) do
      assert.truthy(out:find(text, 1, true), text)
    end
  end)
end)

describe("jrpc call --http against examples/mcp/everything_server.lua", function()
  local url, pid
  local META = '"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
    .. '"io.modelcontextprotocol/clientCapabilities":{}}'
  local VERSION = "MCP-Protocol-Version: 2026-07-28"
  local SERVER_INFO = '"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"jrpc-everything-server","version":"1.0.0"}}'
  local PROGRESS_CALL = '{"name":"test_tool_with_progress","arguments":{},'
    .. '"_meta":{"progressToken":"p1","io.modelcontextprotocol/protocolVersion":"2026-07-28",'
    .. '"io.modelcontextprotocol/clientCapabilities":{}}}'

  setup(function()
    url, pid = T.start(LUA .. " examples/mcp/everything_server.lua --http 127.0.0.1:0",
      "listening on (http://127%.0%.0%.1:%d+/mcp)\n")
  end)

  teardown(function() T.kill(pid) end)

  it("server/discover answered application/json: the result on stdout", function()
    assert.are.same({ 0, '{' .. SERVER_INFO .. ',"cacheScope":"private","capabilities":{"completions":{},"extensions":{"io.modelcontextprotocol/tasks":{}},"logging":{},'
      .. '"prompts":{"listChanged":true},"resources":{"listChanged":true,"subscribe":true},'
      .. '"tools":{"listChanged":true}},"instructions":"Fixtures for MCP conformance testing.",'
      .. '"resultType":"complete","supportedVersions":["2026-07-28"],"ttlMs":0}\n', "" },
      { jrpc_cli("call", "--http", url, "--header", VERSION, "--header", "Mcp-Method: server/discover",
        "server/discover", "{" .. META .. "}") })
  end)

  it("a 400 with a JSON-RPC error: the status, then the error object; exit 1 (the header left out)", function()
    assert.are.same({ 1, "", "jrpc call: HTTP 400 Bad Request\n"
      .. '{"code":-32020,"message":"Header mismatch: mcp-method header is required"}\n' },
      { jrpc_cli("call", "--http", url, "--header", VERSION, "server/discover", "{" .. META .. "}") })
  end)

  it("a 404 with a JSON-RPC error (an unknown method)", function()
    assert.are.same({ 1, "", 'jrpc call: HTTP 404 Not Found\n{"code":-32601,"message":"Method not found"}\n' },
      { jrpc_cli("call", "--http", url, "--header", VERSION, "--header", "Mcp-Method: nope", "nope", "{" .. META .. "}") })
  end)

  it("a status without a JSON-RPC body: the status alone (--header Host overrides ours: 421)", function()
    assert.are.same({ 1, "", "jrpc call: HTTP 421 Misdirected Request\n" },
      { jrpc_cli("call", "--http", url, "--header", "Host: evil.example", "ping") })
  end)

  local function progress_call(...)
    return jrpc_cli("call", "--http", url, "--header", VERSION, "--header", "Mcp-Method: tools/call",
      "--header", "Mcp-Name: test_tool_with_progress", ...)
  end
  local RESULT = '{' .. SERVER_INFO .. ',"content":[{"text":"Progress test completed","type":"text"}],'
    .. '"resultType":"complete"}\n'

  it("an SSE answer: progress notifications skipped, the result with our id printed", function()
    assert.are.same({ 0, RESULT, "" }, { progress_call("tools/call", PROGRESS_CALL) })
  end)

  it("--trace on SSE: the POST body, then each message of the stream", function()
    local status, out, err = progress_call("--trace", "tools/call", PROGRESS_CALL)
    assert.are.same({ 0, RESULT }, { status, out })
    local lines = {}
    for line in err:gmatch("[^\n]+") do lines[#lines + 1] = line:sub(1, 3) end
    assert.are.same({ "-> ", "<- ", "<- ", "<- ", "<- " }, lines)
    local sent = decoded_lines(err, "-> ")
    assert.are.same({ { jsonrpc = "2.0", method = "tools/call", id = 1, params = jrpc.decode(PROGRESS_CALL) } }, sent)
    local got = decoded_lines(err, "<- ")
    for i, value in ipairs({ 0, 50, 100 }) do
      assert.are.same({ jsonrpc = "2.0", method = "notifications/progress", params = { progressToken = "p1",
        progress = value, total = 100, message = ("step %d of 3"):format(i) } }, got[i])
    end
    assert.are.same(jrpc.decode('{"jsonrpc":"2.0","id":1,"result":' .. RESULT .. "}"), got[4])
  end)

  it("--timeout bounds the whole exchange, an SSE stream too (the tool takes 0.15 s)", function()
    local status, out, err, took = timed_cli("call", "--http", url, "--header", VERSION, "--header",
      "Mcp-Method: tools/call", "--header", "Mcp-Name: test_tool_with_progress", "--timeout", "0.08",
      "tools/call", PROGRESS_CALL)
    assert.are.same({ 1, "", "jrpc call: no reply to tools/call within 0.08 s (--timeout)\n" }, { status, out, err })
    assert.is_true(took < 2, "took " .. took)
  end)

  it("--notify: 202, exit 0; --trace shows the POST body", function()
    local words = { "--http", url, "--header", VERSION, "--header", "Mcp-Method: notifications/roots/list_changed",
      "--notify", "notifications/roots/list_changed", "{" .. META .. "}" }
    assert.are.same({ 0, "", "" }, { jrpc_cli("call", unpack(words)) })
    local status, out, err = jrpc_cli("call", "--trace", unpack(words))
    assert.are.same({ 0, "" }, { status, out })
    assert.are.same({ { jsonrpc = "2.0", method = "notifications/roots/list_changed", params = jrpc.decode("{" .. META .. "}") } },
      decoded_lines(err, "-> "))
    assert.are.equal(1, select(2, err:gsub("\n", "")))
  end)

  it("--notify answered with another status: exit 1", function()
    assert.are.same({ 1, "", "jrpc call: HTTP 421 Misdirected Request\n" },
      { jrpc_cli("call", "--http", url, "--header", "Host: evil.example", "--notify", "note") })
  end)
end)

describe("jrpc call --http against node/jayson_http_server.js", function()
  local port, stop, at

  setup(function()
    if not has_node() then return end
    port, stop = start_server("node/jayson_http_server.js")
    at = ("http://127.0.0.1:%d/"):format(port)
  end)

  teardown(function() if stop then stop() end end)

  local function need_node()
    if not has_node() then pending("needs node and `make node-deps`") return false end
    return true
  end

  it("a result; an error reply (200 with an error) is exit 1 with its error object", function()
    if not need_node() then return end
    assert.are.same({ 0, "3\n", "" }, { jrpc_cli("call", "--http", at, "add", "[1,2]") })
    assert.are.same({ 1, "", '{"code":-32000,"data":{"list":[1,2]},"message":"custom failure"}\n' },
      { jrpc_cli("call", "--http", at, "fail") })
    assert.are.same({ 1, "", '{"code":-32601,"message":"Method not found"}\n' }, { jrpc_cli("call", "--http", at, "nope") })
  end)

  it("--trace: the POST body and the response, exactly", function()
    if not need_node() then return end
    assert.are.same({ 0, "3\n", '-> {"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}\n'
      .. '<- {"jsonrpc":"2.0","id":1,"result":3}\n' }, { jrpc_cli("call", "--trace", "--http", at, "add", "[1,2]") })
  end)

  it("--header reaches the server (it echoes the header back); repeats are joined", function()
    if not need_node() then return end
    assert.are.same({ 0, '"hello there"\n', "" },
      { jrpc_cli("call", "--http", at, "--header", "X-Probe:   hello there ", "header", '["x-probe"]') })
    assert.are.same({ 0, '"a, b"\n', "" },
      { jrpc_cli("call", "--http", at, "--header", "X-Probe: a", "--header", "x-probe: b", "header", '["x-probe"]') })
    assert.are.same({ 0, "null\n", "" }, { jrpc_cli("call", "--http", at, "header", '["x-probe"]') })
    assert.are.same({ 0, '"application/json, text/event-stream"\n', "" },
      { jrpc_cli("call", "--http", at, "header", '["accept"]') })
  end)

  it("--header replaces our Accept, and our Content-Type: jayson refuses that one, 415, exit 1", function()
    if not need_node() then return end
    assert.are.same({ 0, '"text/plain"\n', "" },
      { jrpc_cli("call", "--http", at, "--header", "accept: text/plain", "header", '["accept"]') })
    assert.are.same({ 1, "", "jrpc call: HTTP 415 Unsupported Media Type\n" },
      { jrpc_cli("call", "--http", at, "--header", "content-type: text/plain", "add", "[1,2]") })
  end)

  it("--notify: 204, exit 0, and the server got it", function()
    if not need_node() then return end
    assert.are.same({ 0, "", "" }, { jrpc_cli("call", "--http", at, "--notify", "note", "[7]") })
    assert.are.same({ 0, "[[7]]\n", "" }, { jrpc_cli("call", "--http", at, "notes") })
  end)
end)

describe("jrpc call --http against node/sse_http_server.js (answers shaped to be read carefully)", function()
  local port, stop

  setup(function()
    if not has_node() then return end
    port, stop = start_server("node/sse_http_server.js")
  end)

  teardown(function() if stop then stop() end end)

  it("SSE: the other messages skipped, our response read from two data lines, the open stream closed", function()
    if not has_node() then return pending("needs node and `make node-deps`") end
    local status, out, err, took = timed_cli("call", "--trace", "--timeout", "5", "--http",
      ("http://127.0.0.1:%d/sse"):format(port), "m", '[1,"x"]')
    assert.are.same({ 0, '{"echo":[1,"x"]}\n', '-> {"jsonrpc":"2.0","method":"m","params":[1,"x"],"id":1}\n'
      .. '<- {"jsonrpc":"2.0","method":"note","params":{"n":1}}\n'
      .. '<- {"jsonrpc":"2.0","id":"s1","method":"roots/list"}\n'
      .. '<- {"jsonrpc":"2.0","id":999,"result":"not yours"}\n'
      .. '<- {"jsonrpc":"2.0","id":1, "result":{"echo":[1,"x"]}}\n' }, { status, out, err })
    assert.is_true(took < 2, "took " .. took)  -- the stream never ends by itself
  end)

  it("a pretty-printed JSON body: one message, shown on one line", function()
    if not has_node() then return pending("needs node and `make node-deps`") end
    assert.are.same({ 0, '{"echo":[1]}\n', '-> {"jsonrpc":"2.0","method":"m","params":[1],"id":1}\n'
      .. '<- {   "jsonrpc": "2.0",   "id": 1,   "result": {     "echo": [       1     ]   } }\n' },
      { jrpc_cli("call", "--trace", "--http", ("http://127.0.0.1:%d/pretty"):format(port), "m", "[1]") })
  end)

  it("a 200 with no response in it: exit 1", function()
    if not has_node() then return pending("needs node and `make node-deps`") end
    assert.are.same({ 1, "", "jrpc call: HTTP 200 OK without a reply to m\n" },
      { jrpc_cli("call", "--http", ("http://127.0.0.1:%d/empty"):format(port), "m") })
  end)
end)

describe("jrpc call --http over HTTPS (jayson with a certificate from a test CA)", function()
  local port, stop, at

  setup(function()
    if not has_node() then return end
    local dir = T.pki().dir
    port, stop = start_server("node/jayson_http_server.js", ("'%s/srv.key' '%s/srv.pem'"):format(dir, dir))
    at = ("https://127.0.0.1:%d/"):format(port)
  end)

  teardown(function()
    if stop then stop() end
    T.cleanup()
  end)

  it("trusted through --ca-file: the result", function()
    if not has_node() then return pending("needs node and `make node-deps`") end
    assert.are.same({ 0, "3\n", "" }, { jrpc_cli("call", "--http", at, "--ca-file", T.pki().ca, "add", "[1,2]") })
    assert.are.same({ 0, "5\n", "" }, { jrpc_cli("call", "--http", ("https://localhost:%d/"):format(port),
      "--ca-file", T.pki().ca, "add", "[2,3]") })
  end)

  it("untrusted (the system store does not hold the test CA): exit 3, libssl's reason", function()
    if not has_node() then return pending("needs node and `make node-deps`") end
    assert.are.same({ 3, "", ("jrpc call: cannot connect to %s: certificate verify failed: unable to get local issuer "
      .. "certificate\n"):format(at) }, { jrpc_cli("call", "--http", at, "add", "[1,2]") })
  end)

  it("--insecure: no certificate check, the result", function()
    if not has_node() then return pending("needs node and `make node-deps`") end
    assert.are.same({ 0, "3\n", "" }, { jrpc_cli("call", "--http", at, "--insecure", "add", "[1,2]") })
  end)

  it("a --ca-file that holds no certificate: exit 3", function()
    if not has_node() then return pending("needs node and `make node-deps`") end
    local status, out, err = jrpc_cli("call", "--http", at, "--ca-file", "README.md", "add", "[1,2]")
    assert.are.same({ 3, "" }, { status, out })
    local want = ("jrpc call: cannot connect to %s: tls_client: cannot load ca_file 'README.md': "):format(at)
    assert.are.equal(want, err:sub(1, #want))
    assert.are.equal(1, select(2, err:gsub("\n", "")), err)
  end)
end)

describe("jrpc call --http: no connection, no answer", function()
  it("connection refused: exit 3", function()
    local port = free_port()
    assert.are.same({ 3, "", ("jrpc call: cannot connect to http://127.0.0.1:%d/mcp: ECONNREFUSED\n"):format(port) },
      { jrpc_cli("call", "--http", ("http://127.0.0.1:%d/mcp"):format(port), "ping") })
  end)

  -- The kernel completes the connection (the listen backlog) and takes the
  -- request, but nothing ever reads it: no response comes.
  it("a server that never answers: --timeout, exit 1", function()
    local uv = require "luv"
    local tcp = uv.new_tcp()
    assert(tcp:bind("127.0.0.1", 0))
    assert(tcp:listen(8, function() end))
    local port = tcp:getsockname().port
    finally(function() tcp:close(); uv.run("nowait") end)
    local status, out, err, took = timed_cli("call", "--http", ("http://127.0.0.1:%d/"):format(port),
      "--timeout", "0.3", "ping")
    assert.are.same({ 1, "", "jrpc call: no reply to ping within 0.3 s (--timeout)\n" }, { status, out, err })
    assert.is_true(took >= 0.3 and took < 2, "took " .. took)
  end)
end)
