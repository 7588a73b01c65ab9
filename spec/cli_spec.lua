-- bin/jrpc as a real process, run by the interpreter running this spec
-- (lua5.4 or luajit), against real servers: examples/spec_server.lua on
-- stdio (both framings), examples/tcp_server.lua over TCP, the node
-- vscode-jsonrpc server (Content-Length on stdio), the node jayson server
-- (TCP), and clangd (a real language server) when it is installed.
-- Every check is on the exact stdout, stderr and exit status.
if dofile("spec/once.lua")(pending, "the CLI's words and exit codes, run as child processes; its C paths are the other specs'", { "asan" }) then return end
local jrpc = require "jrpc"
local S = dofile("spec/uv_support.lua")
local C = dofile("spec/cli_support.lua")(S)

local unpack = table.unpack or unpack
local LUA = S.INTERP
local USAGE = C.CALL_USAGE
local q, timed_cli, jrpc_cli, wait_for = C.q, C.timed_cli, C.jrpc_cli, C.wait_for

local SPEC_SERVER = LUA .. " examples/spec_server.lua"
local TCP_SERVER = LUA .. " examples/tcp_server.lua --port 0"

-- Start a server in the background (stopped by its pid); returns the pid and
-- the capture of `pattern` in what it writes to `from` ("stdout"/"stderr").
local function start_background(cmd, pattern, from)
  local log, pidfile = os.tmpname(), os.tmpname()
  local redirect = from == "stderr" and ("2> %s"):format(log) or ("> %s"):format(log)
  assert(os.execute(("%s %s & echo $! > %s"):format(cmd, redirect, pidfile)))
  local pid = assert(tonumber(io.open(pidfile):read("*a")))
  os.remove(pidfile)
  local capture = wait_for(log, pattern)
  os.remove(log)
  if capture then return pid, capture end
  os.execute("kill " .. pid)
  error("server did not start: " .. cmd)
end

local function stop_background(pid)
  if pid then os.execute("kill " .. pid .. " 2>/dev/null") end
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

-- os.execute gives true in Lua 5.4, the status 0 in LuaJIT
local function has(cmd)
  local r = os.execute("command -v " .. cmd .. " > /dev/null 2>&1")
  return r == true or r == 0
end

local function rockspec_version()
  local f = assert(io.open("rockspec/jrpc-scm-1.rockspec"))
  local text = f:read("*a")
  f:close()
  return text:match('\nversion = "([^"]+)"')
end

describe("jrpc (bin/jrpc)", function()
  it("--version prints the rock's version", function()
    local status, out, err = jrpc_cli("--version")
    assert.are.same({ 0, "jrpc " .. rockspec_version() .. "\n", "" }, { status, out, err })
  end)

  it("runs by its #! line (lua5.4) from any directory", function()
    local root = assert(io.popen("pwd")):read("*l")
    local function shell(cmd)
      local status, out, err = S.shell("cd /tmp && " .. q(root .. "/bin/jrpc") .. " " .. cmd)
      return { status, out, err }
    end
    assert.are.same({ 0, "jrpc " .. rockspec_version() .. "\n", "" }, shell("--version"))
    assert.are.same({ 0, "19\n", "" },
      shell("call --stdio " .. q("lua5.4 " .. root .. "/examples/spec_server.lua") .. " subtract '[42,23]'"))
  end)

  it("--help lists the commands that exist, on stdout", function()
    local status, out, err = jrpc_cli("--help")
    assert.are.same({ 0, "" }, { status, err })
    assert.are.equal(table.concat({
      "usage: jrpc COMMAND [OPTIONS] ...",
      "",
      "commands:",
      "  call   send one JSON-RPC request and print its result (or --notify)",
      "  mcp    talk to an MCP server: list and call tools, read resources, get prompts",
      "  run    run a Lua script with this jrpc's module paths (for MCP hosts)",
      "",
      "  jrpc COMMAND --help   a command's options and exit status",
      "  jrpc --version        the version",
      "" }, "\n"), out)
  end)

  it("call --help prints the usage line and the exit codes", function()
    local status, out, err = jrpc_cli("call", "--help")
    assert.are.same({ 0, "" }, { status, err })
    assert.are.equal("usage: " .. USAGE, out:sub(1, #USAGE + 7))
    assert.truthy(out:find("Exit status: 0 result (or notification written); 1 error reply, or no reply\n"
      .. "within the timeout, or (--http) an HTTP status other than 2xx; 2 usage\n"
      .. "error; 3 cannot spawn or connect (--http: TLS refused too), or the\n"
      .. "connection ended before the reply.\n", 1, true), out)
  end)
end)

describe("jrpc usage errors: exit 2, the problem and the usage line on stderr", function()
  local cases = {
    { {}, "jrpc: no command given\nusage: jrpc COMMAND [OPTIONS] ... (jrpc --help for the commands)\n" },
    { { "frob" }, 'jrpc: unknown command "frob"\nusage: jrpc COMMAND [OPTIONS] ... (jrpc --help for the commands)\n' },
    { { "MCP", "tools" }, 'jrpc: unknown command "MCP"\nusage: jrpc COMMAND [OPTIONS] ... (jrpc --help for the commands)\n' },
    { { "call", "ping" }, "jrpc call: give exactly one of --stdio CMD, --tcp HOST:PORT and --http URL\n" .. "usage: " .. USAGE },
    { { "call", "--stdio", "x", "--tcp", "h:1", "ping" },
      "jrpc call: give exactly one of --stdio CMD, --tcp HOST:PORT and --http URL\n" .. "usage: " .. USAGE },
    { { "call", "--stdio", "x" }, "jrpc call: METHOD is missing\nusage: " .. USAGE },
    { { "call", "--stdio", "x", "m", "[1]", "more" }, "jrpc call: unexpected argument more\nusage: " .. USAGE },
    { { "call", "--stdio", "x", "m", "{nope" },
      "jrpc call: PARAMS_JSON is not JSON: " .. select(2, jrpc.decode("{nope")) .. "\nusage: " .. USAGE },
    { { "call", "--stdio", "x", "m", "42" }, "jrpc call: PARAMS_JSON must be a JSON array or object\nusage: " .. USAGE },
    { { "call", "--bogus", "m" }, "jrpc call: unknown option --bogus\nusage: " .. USAGE },
    { { "call", "-x", "m" }, "jrpc call: unknown option -x\nusage: " .. USAGE },
    { { "call", "--stdio" }, "jrpc call: --stdio needs a value (CMD)\nusage: " .. USAGE },
    { { "call", "--trace=yes", "m" }, "jrpc call: --trace takes no value\nusage: " .. USAGE },
    { { "call", "--trace", "--trace", "m" }, "jrpc call: --trace given twice\nusage: " .. USAGE },
    { { "call", "--timeout", "0", "--stdio", "x", "m" },
      "jrpc call: --timeout 0: must be a number of seconds > 0\nusage: " .. USAGE },
    { { "call", "--framing=xml", "--stdio", "x", "m" },
      "jrpc call: --framing xml: must be one of ndjson, lsp\nusage: " .. USAGE },
    { { "call", "--tcp", "localhost", "m" },
      "jrpc call: --tcp localhost: expected HOST:PORT (PORT 1-65535)\nusage: " .. USAGE },
    { { "call", "--tcp", "h:70000", "m" }, "jrpc call: --tcp h:70000: expected HOST:PORT (PORT 1-65535)\nusage: " .. USAGE },
  }
  for _, case in ipairs(cases) do
    it("jrpc " .. table.concat(case[1], " "), function()
      local status, out, err = jrpc_cli(unpack(case[1]))
      assert.are.same({ 2, "", case[2] }, { status, out, err })
    end)
  end
end)

describe("jrpc call --stdio against examples/spec_server.lua", function()
  local function call(...)
    return jrpc_cli("call", "--stdio", SPEC_SERVER, ...)
  end

  it("prints the result as one JSON line", function()
    assert.are.same({ 0, "19\n", "" }, { call("subtract", "[42,23]") })
    assert.are.same({ 0, "-1\n", "" }, { call("subtract", '{"minuend":1,"subtrahend":2}') })
    assert.are.same({ 0, '["hello",5]\n', "" }, { call("get_data") })
    assert.are.same({ 0, "null\n", "" }, { call("update", "[1,2]") })
  end)

  it("accepts options after the words, and --name=value", function()
    assert.are.same({ 0, "6\n", "" }, { jrpc_cli("call", "sum", "[1,2,3]", "--stdio=" .. SPEC_SERVER, "--timeout=5") })
  end)

  it("prints an error reply's error object on stderr and exits 1", function()
    assert.are.same({ 1, "", '{"code":-32601,"message":"Method not found"}\n' }, { call("nope") })
    assert.are.same({ 1, "", '{"code":-32602,"message":"Invalid params: \\"subtrahend\\" is required"}\n' },
      { call("subtract", '{"minuend":1}') })
  end)

  it("forwards the server's stderr, not read as protocol", function()
    local status, out, err = call("fail")
    assert.are.same({ 1, "" }, { status, out })
    assert.are.equal('jrpc: method "fail" failed: examples/spec_server.lua:47: this method always fails\n'
      .. '{"code":-32603,"message":"Internal error"}\n', err)
  end)

  it("--trace prints both messages on stderr, the result on stdout", function()
    assert.are.same({ 0, "19\n", '-> {"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1}\n'
      .. '<- {"jsonrpc":"2.0","result":19,"id":1}\n' }, { call("--trace", "subtract", "[42,23]") })
  end)

  it("docs/cli.md's example: --trace of an error reply", function()
    assert.are.same({ 1, "", '-> {"jsonrpc":"2.0","method":"nope","id":1}\n'
      .. '<- {"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found"},"id":1}\n'
      .. '{"code":-32601,"message":"Method not found"}\n' }, { call("--trace", "nope") })
  end)

  it("-- ends the options (a METHOD starting with -)", function()
    assert.are.same({ 1, "", '-> {"jsonrpc":"2.0","method":"--odd","params":[],"id":1}\n'
      .. '<- {"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found"},"id":1}\n'
      .. '{"code":-32601,"message":"Method not found"}\n' }, { call("--trace", "--", "--odd", "[]") })
  end)

  it("--notify sends a notification, prints nothing, exits 0", function()
    assert.are.same({ 0, "", "" }, { call("--notify", "update", "[1]") })
    assert.are.same({ 0, "", '-> {"jsonrpc":"2.0","method":"update","params":[1]}\n' },
      { call("--notify", "--trace", "update", "[1]") })
  end)

  it("--framing lsp talks Content-Length", function()
    local server = SPEC_SERVER .. " --framing lsp"
    assert.are.same({ 0, "19\n", '-> {"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1}\n'
      .. '<- {"jsonrpc":"2.0","result":19,"id":1}\n' },
      { jrpc_cli("call", "--stdio", server, "--framing", "lsp", "--trace", "subtract", "[42,23]") })
  end)

  it("--timeout: no reply in time is exit 1 with a clear message", function()
    local status, out, err, took = timed_cli("call", "--stdio", "cat > /dev/null", "--timeout", "0.3", "slow")
    assert.are.same({ 1, "", "jrpc call: no reply to slow within 0.3 s (--timeout)\n" }, { status, out, err })
    assert.is_true(took >= 0.3 and took < 2, "took " .. took)
  end)

  it("a command that answers but does not exit: SIGTERM after 1 s, SIGKILL 1 s later", function()
    local reply = [[printf '{"jsonrpc":"2.0","result":1,"id":1}\n'; ]]
    local status, out, err, took = timed_cli("call", "--stdio", reply .. "exec sleep 30", "m")
    assert.are.same({ 0, "1\n", "" }, { status, out, err })
    assert.is_true(took >= 1 and took < 1.9, "took " .. took)  -- SIGKILL would be at 2 s
    status, out, err, took = timed_cli("call", "--stdio", "trap '' TERM; " .. reply .. "exec sleep 30", "m")
    assert.are.same({ 0, "1\n", "" }, { status, out, err })
    assert.is_true(took >= 2 and took < 4, "took " .. took)
  end)

  it("numbers are printed by jrpc's number rules (LuaJIT: doubles)", function()
    local reply = [[printf '{"jsonrpc":"2.0","result":[9007199254740993,1.50,3.0,1e300],"id":1}\n']]
    local big = rawget(_G, "jit") and "9007199254740992" or "9007199254740993"
    assert.are.same({ 0, "[" .. big .. ",1.5,3,1e+300]\n", "" }, { jrpc_cli("call", "--stdio", reply, "m") })
  end)

  it("a server's log lines on stdout are not answered, and are shown by --trace", function()
    local server = [[printf 'starting up\n{"jsonrpc":"2.0","result":"ok","id":1}\n'; exec cat > /dev/null]]
    assert.are.same({ 0, '"ok"\n', '-> {"jsonrpc":"2.0","method":"m","id":1}\n<- starting up\n'
      .. '<- {"jsonrpc":"2.0","result":"ok","id":1}\n' }, { jrpc_cli("call", "--trace", "--stdio", server, "m") })
  end)

  it("--trace with --framing lsp shows what the framer skipped in parentheses", function()
    local body = '{"jsonrpc":"2.0","result":"ok","id":1}'
    local server = ([[printf 'log line\r\nContent-Length: %d\r\n\r\n%s'; exec cat > /dev/null]]):format(#body, body)
    assert.are.same({ 0, '"ok"\n', '-> {"jsonrpc":"2.0","method":"m","id":1}\n'
      .. '<- (skipped a line that is not a header (8 bytes))\n<- ' .. body .. '\n' },
      { jrpc_cli("call", "--trace", "--framing", "lsp", "--stdio", server, "m") })
  end)

  it("a command that ends before the reply is exit 3", function()
    assert.are.same({ 3, "", "jrpc call: the connection ended before the reply: process exited with code 7\n" },
      { jrpc_cli("call", "--stdio", "exit 7", "ping") })
    local status, out, err = jrpc_cli("call", "--stdio", "./no-such-command-here", "ping")
    assert.are.same({ 3, "" }, { status, out })
    assert.truthy(err:find("no-such-command-here: not found\n"
      .. "jrpc call: the connection ended before the reply: process exited with code 127\n", 1, true), err)
  end)
end)

describe("jrpc call --tcp against examples/tcp_server.lua", function()
  local ndjson_pid, ndjson_port, lsp_pid, lsp_port
  local LISTENING = "listening on 127%.0%.0%.1:(%d+)\n"

  setup(function()
    ndjson_pid, ndjson_port = start_background(TCP_SERVER, LISTENING, "stderr")
    lsp_pid, lsp_port = start_background(TCP_SERVER .. " --framing lsp", LISTENING, "stderr")
  end)

  teardown(function()
    stop_background(ndjson_pid)
    stop_background(lsp_pid)
  end)

  it("prints the result; error replies on stderr", function()
    local at = "127.0.0.1:" .. ndjson_port
    assert.are.same({ 0, "6\n", "" }, { jrpc_cli("call", "--tcp", at, "sum", "[1,2,3]") })
    assert.are.same({ 0, "2\n", "" }, { jrpc_cli("call", "--tcp", "localhost:" .. ndjson_port, "subtract", "[5,3]") })
    assert.are.same({ 1, "", '{"code":-32602,"message":"Invalid params: sum takes an array of numbers"}\n' },
      { jrpc_cli("call", "--tcp", at, "sum", '{"a":1}') })
  end)

  it("--notify and --trace", function()
    assert.are.same({ 0, "", '-> {"jsonrpc":"2.0","method":"update","params":[1]}\n' },
      { jrpc_cli("call", "--tcp", "127.0.0.1:" .. ndjson_port, "--notify", "--trace", "update", "[1]") })
  end)

  it("--framing lsp", function()
    assert.are.same({ 0, '["hello",5]\n', "" },
      { jrpc_cli("call", "--tcp", "127.0.0.1:" .. lsp_port, "--framing", "lsp", "get_data") })
  end)

  it("--timeout against a slow method: exit 1", function()
    local status, out, err, took = timed_cli("call", "--tcp", "127.0.0.1:" .. ndjson_port, "--timeout", "0.2",
      "slow", "[5]")
    assert.are.same({ 1, "", "jrpc call: no reply to slow within 0.2 s (--timeout)\n" }, { status, out, err })
    assert.is_true(took < 2, "took " .. took)
  end)

  -- This machine's network answers every connect (refused or accepted), so
  -- a connect that never completes is played by a stand-in loop:connect.
  it("--timeout bounds a TCP connect (in-process: a connect that never completes)", function()
    local transport = require "jrpc.cli.transport"
    local co = require "jrpc.uv.co"
    local waiter, fired_after
    local stuck = setmetatable({ connect = function()
      waiter = co.current()
      return co.wait("a connect that never completes")
    end }, { __index = S.loop })
    local opts = { tcp = "192.0.2.1:9", timeout = 0.2 }
    assert.is_nil(transport.check(opts))
    local t0 = S.now()
    local conn, err = S.loop:run(function()
      return transport.open(stuck, opts, {}, function()
        fired_after = S.since(t0)
        co.resume(waiter, nil, nil, require("jrpc.errors").new("connect", "gave up"))
      end)
    end)
    assert.are.same({ nil, "cannot gave up" }, { conn, err })
    assert.is_true(fired_after >= 0.2 and fired_after < 1, "fired after " .. tostring(fired_after))
  end)

  it("connection refused: exit 3", function()
    local port = free_port()
    assert.are.same({ 3, "", ("jrpc call: cannot connect to 127.0.0.1:%d: ECONNREFUSED\n"):format(port) },
      { jrpc_cli("call", "--tcp", "127.0.0.1:" .. port, "ping") })
  end)
end)

describe("jrpc call against node servers (node/)", function()
  local have_node = has("node") and io.open("node/node_modules/vscode-jsonrpc/package.json") ~= nil

  it("vscode-jsonrpc on stdio, --framing lsp (node/vscode_server.js)", function()
    if not have_node then return pending("needs node and `make node-deps`") end
    local server = "node node/vscode_server.js"
    local function call(...) return jrpc_cli("call", "--stdio", server, "--framing", "lsp", ...) end
    local status, out, err = call("add", '{"a":1,"b":2}')
    assert.are.same({ 0, "3\n" }, { status, out })
    -- its own log of what it read and wrote, forwarded from its stderr
    assert.truthy(err:find('{"dir":"out","msg":{"jsonrpc":"2.0","id":1,"result":3}}\n', 1, true), err)
    -- the result's object keys sorted, a newline in a string escaped: one line
    status, out = call("echo", '{"b":2,"a":[1,{"d":null,"c":"x\\ny"}]}')
    assert.are.same({ 0, '{"a":[1,{"c":"x\\ny","d":null}],"b":2}\n' }, { status, out })
    status, out, err = call("fail", '{"tag":"t"}')
    assert.are.same({ 1, "" }, { status, out })
    assert.are.equal('{"code":-32001,"data":{"list":[1,2],"tag":"t"},"message":"custom failure"}',
      err:match("([^\n]*)\n$"))
  end)

  it("vscode-jsonrpc: a server's request gets -32601, and --notify is delivered", function()
    if not have_node then return pending("needs node and `make node-deps`") end
    local server = "node node/vscode_server.js"
    local status, out, err = jrpc_cli("call", "--stdio", server, "--framing", "lsp", "--trace", "greet", '{"who":"x"}')
    assert.are.same({ 1, "" }, { status, out })
    local ours = {}
    for line in err:gmatch("[^\n]+") do
      if line:match("^[-<]") or line:match("^{\"code\"") then ours[#ours + 1] = line end
    end
    assert.are.same({
      '-> {"jsonrpc":"2.0","method":"greet","params":{"who":"x"},"id":1}',
      '<- {"jsonrpc":"2.0","id":0,"method":"client/name","params":{"asked":"x"}}',
      '-> {"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found"},"id":0}',
      '<- {"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}',
      '{"code":-32601,"message":"Method not found"}',
    }, ours)
    -- the notification was read by the server before jrpc exited
    status, out, err = jrpc_cli("call", "--stdio", server, "--framing", "lsp", "--notify", "note", '[7]')
    assert.are.same({ 0, "" }, { status, out })
    assert.truthy(err:find('{"dir":"in","msg":{"jsonrpc":"2.0","method":"note","params":[7]}}\n', 1, true), err)
  end)

  it("jayson over TCP (node/jayson_server.js)", function()
    if not have_node then return pending("needs node and `make node-deps`") end
    -- it exits when its stdin ends: its stdin is a pipe from us, closed at the end
    local log = os.tmpname()
    local node = assert(io.popen("exec node node/jayson_server.js > " .. log, "w"))
    finally(function() node:close(); os.remove(log) end)
    local port = assert(wait_for(log, '{"port":(%d+)}'), "jayson_server.js did not start")
    local at = "127.0.0.1:" .. port
    assert.are.same({ 0, "3\n", "" }, { jrpc_cli("call", "--tcp", at, "add", "[1,2]") })
    assert.are.same({ 1, "", '{"code":-32000,"data":{"list":[1,2],"tag":"t"},"message":"custom failure"}\n' },
      { jrpc_cli("call", "--tcp", at, "fail", '{"tag":"t"}') })
  end)
end)

describe("jrpc call against clangd (a real language server)", function()
  it("initialize over --stdio with --framing lsp: a result with capabilities", function()
    if not has("clangd") then return pending("clangd is not installed") end
    local status, out = jrpc_cli("call", "--stdio", "clangd", "--framing", "lsp", "initialize",
      '{"processId":null,"rootUri":null,"capabilities":{}}')
    assert.are.equal(0, status)
    assert.truthy(out:match("^[^\n]+\n$"), "one line")
    local result = assert(jrpc.decode(out))
    assert.are.equal("table", type(result.capabilities))
    assert.are.equal("clangd", result.serverInfo.name)
  end)
end)
