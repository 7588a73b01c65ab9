--- `jrpc call`: send one JSON-RPC request and print the result, or send a
-- notification (`--notify`).
local jrpc = require "jrpc"
local cli_http = require "jrpc.cli.http"
local output = require "jrpc.cli.output"
local transport = require "jrpc.cli.transport"
local trace = require "jrpc.cli.trace"

local M = {}

M.name = "call"
M.summary = "send one JSON-RPC request and print its result (or --notify)"
M.usage = "jrpc call (--stdio CMD | --tcp HOST:PORT | --http URL) [--framing ndjson|lsp]"
  .. " [--header \"K: V\"]... [--ca-file PATH] [--insecure] [--notify] [--trace] [--timeout S]"
  .. " METHOD [PARAMS_JSON]"
M.help = [[
Sends METHOD with PARAMS_JSON (a JSON array or object; absent if not given)
and prints the result as one line of JSON on stdout (object keys sorted).
An error reply's error object is printed on stderr instead.

  --stdio CMD          run CMD with /bin/sh -c and talk over its stdin/stdout;
                       its stderr goes to ours
  --tcp HOST:PORT      connect to a TCP server
  --http URL           POST the message to an http:// or https:// URL; the
                       answer is application/json or text/event-stream (its
                       other messages are skipped; --trace shows them)
  --framing ndjson|lsp one message per line (default), or Content-Length headers
                       (not with --http)
  --header "K: V"      (--http, repeatable) send this header too; replaces
                       our Content-Type or Accept of the same name
  --ca-file PATH       (--http) trust the CAs in this PEM file instead of the
                       system store
  --insecure           (--http) do not check the server's certificate: for
                       tests only
  --notify             send a notification; exit 0 once it is written (--http:
                       once the server answers 2xx, such as 202)
  --trace              print every message on stderr: "-> " sent, "<- " received
  --timeout S          seconds to wait for the reply (and a TCP connect; with
                       --http, the whole exchange); default 30

Exit status: 0 result (or notification written); 1 error reply, or no reply
within the timeout, or (--http) an HTTP status other than 2xx; 2 usage
error; 3 cannot spawn or connect (--http: TLS refused too), or the
connection ended before the reply.

With --http the request is sent at most once: when the connection closes
after it was sent and before any answer came, jrpc exits 3 with "jrpc call:
connection closed after the request was sent; its outcome is unknown (not
retried)" (the server may have acted on it) and does not send it again.]]

-- The transport's options, and ours.
local options = {}
for i, spec in ipairs(transport.OPTIONS) do options[i] = spec end
options[#options + 1] = { "--notify" }
M.options = options

-- METHOD [PARAMS_JSON] -> method, params; or nil, problem.
local function positional(list)
  local method, text = list[1], list[2]
  if method == nil then return nil, "METHOD is missing" end
  if #list > 2 then return nil, "unexpected argument " .. list[3] end
  if text == nil then return method, nil end
  local params, msg = jrpc.decode(text)
  if params == nil then return nil, "PARAMS_JSON is not JSON: " .. tostring(msg) end
  if type(params) ~= "table" then return nil, "PARAMS_JSON must be a JSON array or object" end
  return method, params
end

-- The peer is a pure client: it answers a server's requests with -32601,
-- and never answers a server's log lines on stdout.
local function peer_options()
  return { role = "client" }
end

-- An error from the peer (a jrpc.Error: its code, and over --http its
-- `failure` or `http_status`) -> what to print and the exit code.
local function report_failure(err, opts)
  if err.code == "timeout" or err.failure == "timeout" then
    output.say(("no reply to %s within %g s (--timeout)"):format(opts.method, opts.timeout))
    return output.FAILED
  end
  local code = cli_http.report(err, opts, opts.method)
  if code then return code end
  if type(err.code) == "number" then
    output.error_object(err)
    return output.FAILED
  elseif err.code == "closed" then
    output.say("the connection ended before the reply: " .. tostring(err.message))
    return output.CONNECT
  end
  output.say(tostring(err))
  return output.FAILED
end

local function request(peer, opts)
  local result, err = peer:request(opts.method, opts.params, { timeout = opts.timeout })
  if err ~= nil then return report_failure(err, opts) end
  output.value(result)
  return output.OK
end

local function notify(peer, opts)
  local ok, err = peer:notify(opts.method, opts.params)
  if not ok then
    output.say(tostring(err))
    return output.FAILED
  end
  return output.OK
end

local function connect_timed_out(opts)
  return function()
    output.say(("connect to %s: no connection within %g s (--timeout)"):format(opts.tcp, opts.timeout))
    os.exit(output.CONNECT)
  end
end

-- --http: the message is a POST's body, its answer comes in the response
-- (jrpc.cli.http, on the peer over HTTP the MCP client uses too).
local function http_session(loop, opts)
  local link = cli_http.open(loop, opts)
  local result, err = cli_http.call(loop, link, opts)
  link.peer:close("done")
  if err ~= nil then return report_failure(err, opts) end
  if not opts.notify then output.value(result) end
  return output.OK
end

-- In a coroutine on the loop: the whole call; returns the exit code.
local function session(loop, opts)
  if opts.http then return http_session(loop, opts) end
  local conn, err = transport.open(loop, opts, peer_options(), connect_timed_out(opts))
  if conn == nil then
    output.say(tostring(err))
    return output.CONNECT
  end
  if opts.trace then trace.tap(conn, opts.framing, output.err) end
  local code = (opts.notify and notify or request)(conn.peer, opts)
  transport.close(conn)
  return code
end

--- Run with parsed options and positional words; returns the exit code,
--- or nil and a usage problem.
---@param opts table
---@param list string[]
---@return integer|nil code
---@return string|nil problem
function M.run(opts, list)
  local problem = transport.check(opts)
  if problem then return nil, problem end
  local method, params = positional(list)
  if method == nil then return nil, params end
  opts.method, opts.params = method, params
  local ok, uv = pcall(require, "luv")
  if not ok then
    output.say("cannot load luv, which the jrpc command needs (Debian: lua-luv; LuaRocks: luv)")
    return output.CONNECT
  end
  local loop = jrpc.uv.new(uv, { catch_sigpipe = true })
  local code = loop:run(function() return session(loop, opts) end)
  loop:serve_forever()  -- what is still being written goes out before we exit
  return code
end

return M
