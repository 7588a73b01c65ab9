--- `--http URL`: a `jrpc` subcommand's messages as HTTP POSTs, one
-- JSON-RPC message per request body (JSON-RPC over HTTP, and MCP's
-- Streamable HTTP). The answer is `application/json` (one message) or
-- `text/event-stream` (one message per event); either way each message
-- comes back to the caller as text, so a subcommand feeds it to its jrpc
-- peer (`call`) or MCP client (`mcp`) as it would feed bytes read from a
-- socket. This module knows HTTP and nothing of JSON-RPC:
--
--     local problem = cli_http.check(opts)            -- at parse time
--     local res, err, kind = cli_http.post(loop, opts, body, function(text)
--       peer:receive(text .. "\n")
--       return settled                                -- true: stop reading
--     end)
--
-- `res` is `{status, reason, headers, body}`; `kind` names a failure for
-- the exit code: "connect" (no connection, TLS refused), "timeout",
-- "outcome_unknown" (the request was sent, then the connection closed
-- before any byte of a response: the server may or may not have acted on
-- it, and it is not sent again), "closed" (the connection ended before the
-- response did), "failed" (anything else).
--
-- Each POST is sent at most once: a request's own connection
-- (http_client.request, no keep-alive) is never retried.
local http_client = require "jrpc.uv.http_client"
local timers = require "jrpc.uv.timers"
local output = require "jrpc.cli.output"

local M = {}

-- A buffered (non-SSE) body larger than this is refused, as
-- http_client's own default for a buffered body: we stream every body (an
-- SSE answer must be read as it comes), so its limit is ours to keep.
local MAX_BODY = http_client.DEFAULTS.max_body_bytes

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

-- {======================================================================
-- Reading the answer
-- =======================================================================

local function is_sse(res)
  local ctype = res.headers["content-type"] or ""
  return ctype:lower():match("^%s*text/event%-stream%s*[;]?") ~= nil
end

-- The body of an answer that is not SSE: kept whole (a JSON-RPC message
-- is parsed whole), up to MAX_BODY.
local function buffered_reader(state)
  local parts, size = {}, 0
  state.finish = function()
    state.body = table.concat(parts)
    if state.body ~= "" then state.deliver(state.body) end
  end
  return function(bytes, stream)
    size = size + #bytes
    if size > MAX_BODY then
      state.problem = "response body too large"
      return stream:close()
    end
    parts[#parts + 1] = bytes
  end
end

-- An SSE answer: each event's data is a message, handed over as it comes
-- (an event without data, such as a priming event, carries no message).
local function sse_reader(state)
  local sse = http_client.sse_parser()
  state.body = ""
  return function(bytes, stream)
    for _, event in ipairs(sse:feed(bytes)) do
      if event.data ~= "" and state.deliver(event.data) then return stream:close() end
    end
  end
end

-- }======================================================================

-- A message as one line, for newline-framed readers (and --trace): line
-- breaks in a JSON text can only be whitespace between tokens (inside a
-- string they are escaped), so they become spaces; a pretty-printed body or
-- an SSE event of several `data:` lines stays the same JSON.
local function one_line(text)
  return (text:gsub("[\r\n]+$", ""):gsub("[\r\n]", " "))
end

-- http_client's failures (its documented messages) -> ours and their kind.
-- A connect or TLS failure names the host and port: we name the URL.
local function failure(opts, err)
  local u = opts.url_parts
  local where = u.host .. ":" .. u.port
  local reason = err:match("^connect to " .. where:gsub("%p", "%%%0") .. ": (.*)$")
    or err:match("^https://" .. where:gsub("%p", "%%%0") .. ": (.*)$")
    or err:match("^tls_client: .*$")
  if reason then return "cannot connect to " .. opts.http .. ": " .. reason, "connect" end
  if err:match("^timeout after ") then return err, "timeout" end
  local unknown = http_client.OUTCOME_UNKNOWN  -- sent, then no answer: never sent again
  if err:sub(1, #unknown) == unknown then return err, "outcome_unknown" end
  if err:match("^connection closed before ") or err:match("^read: ") or err:match("^write: ") then
    return err, "closed"
  end
  return opts.http .. ": " .. err, "failed"
end

-- --timeout bounds the whole exchange. http_client's own timeout ends at a
-- streamed response's head; from there our timer closes the stream.
local function stream_deadline(loop, state, deadline)
  return function(_, stream)
    local uv = loop.uv
    uv.update_time()
    local left = deadline - uv.now() / 1000
    if left <= 0 then left = 0 end
    state.timer = timers.after(uv, left, function()
      state.timer = nil
      state.timed_out = true
      stream:close()
    end, "http --timeout")
  end
end

--- In a coroutine on `loop`: POST `body` to `opts.http` (checked by
--- `check`), with --header, --ca-file, --insecure, --timeout and --trace
--- (`-> ` the body, `<- ` each message received, on stderr). Each message
--- of the answer is passed to `on_message(text)` as one line (see
--- `one_line`), which returns true when it wants no more (the stream is
--- closed). Returns `{status, reason, headers, body}` (`headers` as
--- http_client gives them, lower-case names; `body` "" for SSE), or nil,
--- message, kind.
---@param loop jrpc.uv.Loop
---@param opts table
---@param body string
---@param on_message fun(text: string): boolean?
---@return table|nil res
---@return string|nil err
---@return string|nil kind  "connect", "timeout", "outcome_unknown", "closed" or "failed"
function M.post(loop, opts, body, on_message)
  if opts.trace then output.err("-> " .. body) end
  local state = {}
  state.deliver = function(text)
    text = one_line(text)
    if opts.trace then output.err("<- " .. text) end
    return on_message(text)
  end
  local uv = loop.uv
  uv.update_time()
  local read_body
  local on_headers = stream_deadline(loop, state, uv.now() / 1000 + opts.timeout)
  local res, err = http_client.request(loop, {
    url = opts.http, method = "POST", headers = opts.http_headers, body = body,
    timeout = opts.timeout, ca_file = opts.ca_file, verify = not opts.insecure,
    on_headers = function(r, stream)
      read_body = is_sse(r) and sse_reader(state) or buffered_reader(state)
      on_headers(r, stream)
    end,
    on_chunk = function(bytes, stream) read_body(bytes, stream) end,
  })
  timers.cancel(uv, state.timer)
  if state.timed_out then return nil, ("timeout after %g s"):format(opts.timeout), "timeout" end
  if res == nil then return nil, failure(opts, err) end
  if state.problem then return nil, opts.http .. ": " .. state.problem, "failed" end
  if state.finish then state.finish() end
  return { status = res.status, reason = res.reason, headers = res.headers, body = state.body }
end

return M
