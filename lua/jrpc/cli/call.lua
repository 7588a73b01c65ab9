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
after it was sent and before any answer came, jrpc exits 3 with "jrpc:
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

-- An error from `peer:request` -> what to print and the exit code.
local function report_failure(err, opts)
  if type(err.code) == "number" then
    output.error_object(err)
    return output.FAILED
  elseif err.code == "timeout" then
    output.err(("jrpc: no reply to %s within %g s (--timeout)"):format(opts.method, opts.timeout))
    return output.FAILED
  elseif err.code == "closed" then
    output.err("jrpc: the connection ended before the reply: " .. tostring(err.message))
    return output.CONNECT
  end
  output.err("jrpc: " .. tostring(err))
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
    output.err("jrpc: " .. tostring(err))
    return output.FAILED
  end
  return output.OK
end

local function connect_timed_out(opts)
  return function()
    output.err(("jrpc: connect to %s: no connection within %g s (--timeout)"):format(opts.tcp, opts.timeout))
    os.exit(output.CONNECT)
  end
end

-- {======================================================================
-- --http: the message is a POST's body, the answer comes in its response
-- =======================================================================

-- The error object of a JSON-RPC error response in `body`, or nil.
local function error_in(body)
  local msg = jrpc.decode(body or "", nil, jrpc.null)
  if type(msg) == "table" and type(msg.error) == "table" and type(msg.error.code) == "number" then
    return msg.error
  end
end

-- A status other than 2xx fails the call, whatever the body says: the
-- status line, then the body's JSON-RPC error when it holds one.
local function http_status_failure(res)
  output.err(("jrpc: HTTP %d %s"):format(res.status, res.reason))
  local e = error_in(res.body)
  if e then output.error_object(e) end
  return output.FAILED
end

local function http_failure(opts, err, kind)
  if kind == "timeout" then
    output.err(("jrpc: no reply to %s within %g s (--timeout)"):format(opts.method, opts.timeout))
    return output.FAILED
  elseif kind == "closed" then
    output.err("jrpc: the connection ended before the reply: " .. err)
    return output.CONNECT
  elseif kind == "outcome_unknown" then  -- the message says it all; never sent again
    output.err("jrpc: " .. err)
    return output.CONNECT
  end
  output.err("jrpc: " .. err)
  return kind == "connect" and output.CONNECT or output.FAILED
end

-- The peer makes the message and reads the answer, as over a socket: the
-- same bytes, ids and response checks. What it sends is the POST's body;
-- what it would send back (a -32601 to a server's request on the stream)
-- has nowhere to go over HTTP, and is dropped.
local function http_peer()
  local out = {}
  local peer = jrpc.peer{ role = "client", send = function(bytes) out[#out + 1] = bytes end }
  return peer, function() return (table.remove(out, 1):gsub("\n$", "")) end
end

-- A 2xx answer: for a request, what our response says, as over a socket.
local function http_answered(res, settled, opts)
  if opts.notify then return output.OK end
  if settled == nil then
    output.err(("jrpc: HTTP %d %s without a reply to %s"):format(res.status, res.reason, opts.method))
    return output.FAILED
  end
  if settled.err ~= nil then return report_failure(settled.err, opts) end
  output.value(settled.result)
  return output.OK
end

local function http_session(loop, opts)
  local peer, take = http_peer()
  local settled
  if opts.notify then
    assert(peer:notify(opts.method, opts.params))
  else
    peer:request(opts.method, opts.params, nil, function(err, result) settled = { err = err, result = result } end)
  end
  local res, err, kind = cli_http.post(loop, opts, take(), function(text)
    peer:receive(text .. "\n")
    return settled ~= nil  -- our response came: the rest of a stream is not waited for
  end)
  if res == nil then return http_failure(opts, err, kind) end
  if res.status < 200 or res.status > 299 then return http_status_failure(res) end
  return http_answered(res, settled, opts)
end

-- }======================================================================

-- In a coroutine on the loop: the whole call; returns the exit code.
local function session(loop, opts)
  if opts.http then return http_session(loop, opts) end
  local conn, err = transport.open(loop, opts, peer_options(), connect_timed_out(opts))
  if conn == nil then
    output.err("jrpc: " .. tostring(err))
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
    output.err("jrpc: cannot load luv, which the jrpc command needs (Debian: lua-luv; LuaRocks: luv)")
    return output.CONNECT
  end
  local loop = jrpc.uv.new(uv, { catch_sigpipe = true })
  local code = loop:run(function() return session(loop, opts) end)
  loop:serve_forever()  -- what is still being written goes out before we exit
  return code
end

return M
