--- `--http URL`: a `jrpc` subcommand's message as an HTTP POST, one
-- JSON-RPC message per request body (JSON-RPC over HTTP, and MCP's
-- Streamable HTTP), over jrpc.http_peer: the HTTP transport under a jrpc
-- peer that the MCP client uses too. The answer is `application/json` (one
-- message) or `text/event-stream` (one message per event); the peer reads
-- each message as it would a line read from a socket, so the same ids and
-- response checks apply.
--
--     local problem = cli_http.check(opts)         -- at parse time
--     local link = cli_http.open(loop, opts)
--     local result, err = cli_http.call(loop, link, opts)   -- in a coroutine
--     link.peer:close()
--
-- `err` is a jrpc.Error whose code (and `failure`, see jrpc.http_peer)
-- says what happened, for the exit code: the peer's, "timeout" (--timeout
-- bounds the whole exchange), "http" (`failure` "connect", "timeout",
-- "outcome_unknown": the request was sent, then the connection closed
-- before any byte of an answer, and it is not sent again; "closed",
-- "failed", "no_answer"), "http_status", or an error reply (its numeric
-- code; `http_status` when its status was not 2xx).
--
-- The POST is sent at most once.
local errors = require "jrpc.errors"
local http_peer = require "jrpc.http_peer"
local http_client = require "jrpc.uv.http_client"
local co = require "jrpc.uv.co"
local timers = require "jrpc.uv.timers"
local output = require "jrpc.cli.output"

local M = {}

-- A request head takes at most 64 headers (core.http_request); ours are
-- Host, Content-Type and Accept.
local MAX_HEADERS = 61

-- RFC 9110 token characters, as core.http_request checks header names.
local TOKEN = "^[%w!#$%%&'*+%-.^_`|~]+$"

--- `check` for `--header "NAME: VALUE"` -> `{name, value}` (the value's
--- surrounding blanks dropped); or nil, problem.
---@param s string
---@return table|nil header
---@return string|nil problem
function M.parse_header(s)
  local name, value = s:match("^([^:]*):(.*)$")
  if name == nil or not name:match(TOKEN) then return nil, 'expected "NAME: VALUE" (NAME a header name)' end
  if value:find("[%z\1-\8\10-\31\127]") then return nil, "control characters are not allowed in a header value" end
  local lower = name:lower()
  if lower == "content-length" or lower == "transfer-encoding" then
    return nil, "jrpc writes " .. name .. " itself"
  end
  return { name, (value:gsub("^[ \t]+", ""):gsub("[ \t]+$", "")) }
end

--- The options of the HTTP transport, for `args.parse`.
M.OPTIONS = {
  { "--http", value = "URL" },
  { "--header", value = "K: V", many = true, check = M.parse_header },
  { "--ca-file", value = "PATH" },
  { "--insecure" },
}

-- What every POST says it sends and takes (Streamable HTTP requires both
-- types in Accept; plain JSON-RPC servers answer JSON); a --header of the
-- same name replaces ours.
local DEFAULT_HEADERS = {
  { "Content-Type", "application/json" },
  { "Accept", "application/json, text/event-stream" },
}

-- Ours, then the user's: names compared case-insensitively, a name the
-- user repeats joined with ", " (HTTP's rule for a repeated field).
local function merge_headers(given)
  local by_lower, order, from_user = {}, {}, {}
  local function put(name, value, user)
    local lower = name:lower()
    local h = by_lower[lower]
    if h == nil then
      order[#order + 1] = lower
    elseif user and from_user[lower] then
      value = h[2] .. ", " .. value
    end
    by_lower[lower] = { name, value }
    from_user[lower] = user
  end
  for _, h in ipairs(DEFAULT_HEADERS) do put(h[1], h[2], false) end
  for _, h in ipairs(given or {}) do put(h[1], h[2], true) end
  local headers = {}
  for _, lower in ipairs(order) do
    local h = by_lower[lower]
    headers[h[1]] = h[2]
  end
  return headers, #order
end

--- Check the HTTP options of parsed `opts` (`opts.http` is set): the URL,
--- and no option that has no meaning over HTTP. Fills `opts.url_parts`
--- and `opts.http_headers`.
---@param opts table
---@return string|nil problem
function M.check(opts)
  if opts.framing then return "--framing is for --stdio and --tcp: over --http each message is one request body" end
  if opts.ca_file and opts.insecure then return "give at most one of --ca-file PATH and --insecure" end
  local parts, err = http_client.parse_url(opts.http)
  if parts == nil then return "--http " .. opts.http .. ": " .. err end
  local headers, count = merge_headers(opts.header)
  if count > MAX_HEADERS then return ("at most %d --header names"):format(MAX_HEADERS - #DEFAULT_HEADERS) end
  opts.url_parts, opts.http_headers = parts, headers
end

--- The options that only mean something with --http, of those given in
--- `opts` (for the "needs --http" usage error), or nil.
---@param opts table
---@return string|nil option
function M.given_without_url(opts)
  if opts.http then return nil end
  if opts.header then return "--header" end
  if opts.ca_file then return "--ca-file" end
  if opts.insecure then return "--insecure" end
end

--- A message as one line, for --trace: line breaks in a JSON text can only
--- be whitespace between tokens (inside a string they are escaped), so they
--- become spaces; a pretty-printed body or an SSE event of several `data:`
--- lines stays the same JSON.
---@param text string
---@return string
function M.one_line(text)
  return (text:gsub("[\r\n]+$", ""):gsub("[\r\n]", " "))
end

-- Failures of the exchange (jrpc.http_peer's `failure`): what to print
-- and the exit code.
local FAILURES = {
  connect = function(err, opts)
    output.say(("cannot connect to %s: %s"):format(opts.http, tostring(err.cause or err.message)))
    return output.CONNECT
  end,
  outcome_unknown = function(err)  -- the message says it all; never sent again
    output.say(err.message)
    return output.CONNECT
  end,
  closed = function(err)
    output.say("the connection ended before the reply: " .. err.message)
    return output.CONNECT
  end,
  no_answer = function(err, _, what)
    output.say(("HTTP %d %s without a reply to %s"):format(err.http_status, err.http_reason, what))
    return output.FAILED
  end,
  failed = function(err, opts)
    output.say(("%s: %s"):format(opts.http, err.message))
    return output.FAILED
  end,
}

--- Report an HTTP error (one with a `failure`, or an `http_status`: see
--- jrpc.http_peer) on stderr and return the exit code; nil for any other
--- error. A status other than 2xx fails whatever the body says: the status
--- line, then the body's JSON-RPC error when it holds one. `what` names
--- the request (a 2xx answer without a reply to it).
---@param err jrpc.Error
---@param opts table
---@param what string
---@return integer|nil code
function M.report(err, opts, what)
  local failure = err.failure
  if failure then
    local fn = FAILURES[failure] or FAILURES.failed
    return fn(err, opts, what)
  end
  if err.http_status == nil then return nil end
  output.say(("HTTP %d %s"):format(err.http_status, err.http_reason))
  if type(err.code) == "number" then output.error_object(err) end
  return output.FAILED
end

--- The link for checked `opts` (`check`): `link.peer`, the peer over HTTP
--- with --header, --ca-file, --insecure, --trace (`-> ` each POST's body,
--- `<- ` each message received, on stderr). A pure client: its answers to
--- a server's requests (-32601) are not POSTed.
---@param loop jrpc.uv.Loop
---@param opts table
---@return table link
function M.open(loop, opts)
  local on_message
  if opts.trace then
    on_message = function(dir, text) output.err(dir .. " " .. (dir == "<-" and M.one_line(text) or text)) end
  end
  local link = {}
  -- the outcome of a notification's POST: `call` waits for it
  local function posted(_, res, err, st)
    local on_posted = link.on_posted
    if on_posted == nil or (res and res.closed) then return end
    if err then return on_posted(http_peer.exchange_error(err, st)) end
    if res.status < 200 or res.status > 299 then return on_posted(http_peer.status_error(res, st.body)) end
    on_posted(nil)
  end
  link.peer = http_peer.new(loop, { url = opts.http, headers = opts.http_headers, ca_file = opts.ca_file,
    verify = not opts.insecure, on_message = on_message, answers = false, role = "client",
    hooks = { posted = posted } })
  return link
end

--- In a coroutine on `loop`: send `opts.method` with `opts.params` over
--- `link` (from `open`) as a request, or a notification with `opts.notify`
--- (done once the server answered its POST), within `opts.timeout`
--- seconds. Returns the result (true for a notification), or nil and a
--- jrpc.Error (see the header).
---@param loop jrpc.uv.Loop
---@param link table
---@param opts table
---@return any result
---@return jrpc.Error|nil err
function M.call(loop, link, opts)
  local t = link.peer
  local me = co.current() or error("jrpc.cli.http.call: in a coroutine", 2)
  local outcome, waiting = nil, false
  local function settle(err, result)
    if outcome then return end
    outcome = { err = err, result = result }
    if waiting then
      waiting = false
      co.resume(me)
    end
  end
  local id
  if opts.notify then
    link.on_posted = function(err) settle(err, err == nil or nil) end
    local ok, nerr = t:notify(opts.method, opts.params)
    if not ok then settle(nerr) end
  else
    id = t:request(opts.method, opts.params, settle)
  end
  local uv = loop.uv
  uv.update_time()  -- libuv counts from its cached loop time, which may be old
  local timer = timers.after(uv, opts.timeout, function()
    settle(errors.timeout())
    if id ~= nil then t:cancel(id, "timeout") end
  end, "http --timeout")
  if not outcome then
    waiting = true
    co.wait("jrpc --http")
  end
  timers.cancel(uv, timer)
  return outcome.result, outcome.err
end

return M
