--- mcp_host.lua -- the Lua side of fuzz/fuzz_mcp.c, and of its replays in
-- spec/fuzz_regress_spec.lua: the real jrpc.mcp server, in-process, fed
-- fuzzer bytes two ways, with every answer checked. A violated invariant
-- raises an error starting "invariant: "; the C target aborts on any error
-- at all (one escaping from the server is as much a bug).
--
--   run(input): input[1] is the mode (bit 0: 0 messages, 1 HTTP), input[2]
--   the flags, the rest the payload.
--
-- Messages: the payload is NDJSON lines fed one by one to a peer the server
-- is attached to (flags bit 0: profile "jsonrpc", so batches get through;
-- else "mcp"). The harness plays the client: it answers every request the
-- server sends (flags bit 1: with an error instead of a result). Checked:
-- every line out is a JSON-RPC message; every response has a documented
-- error code (and a message without a Lua address in it) or an object
-- result; every request in gets exactly as many responses as it had copies
-- in; nothing is reported through on_error but bad input.
--
-- HTTP: the payload is one or more connections' bytes, split on the line
-- "~~~", served by server:serve_http on a fake luv (fake_luv.lua). Flags:
-- bit 1, each connection is one request whose Content-Length the harness
-- sets to the length of what follows the head (a mutated JSON body is
-- still read whole, not cut short or run over); bit 2, the bytes come in
-- reads of 1 + (flags >> 5) bytes, else in one; bit 3, small limits (413
-- and 431 within reach); bit 4, the idle timers fire before all clients
-- hang up. Checked: each connection's output is a series of well-formed
-- HTTP/1.1 responses (the last may be a stream still open), with
-- documented statuses and JSON bodies (or SSE events) that parse as
-- JSON-RPC messages; an answer for every request the codec reads, unless
-- one is still streaming; a JSON-RPC error has its documented status;
-- nothing reported through on_error; once every client hung up, no
-- connection and no timer is left.
local core = require "jrpc.core"

local M = {}

-- Session ids and MRTR keys from a counter while an input runs (see run):
-- inputs replay the same way, and a later POST can name the session an
-- earlier one opened.
local counter = 0
local function counted_bytes(n)
  counter = counter + 1
  return ("\0"):rep(n - 1) .. string.char(counter % 256)
end

local mcp = require "jrpc.mcp"
local peer_mod = require "jrpc.peer"
local fake_luv = require "fake_luv"

local function fail(fmt, ...)
  error("invariant: " .. fmt:format(...), 0)
end

local function check(cond, fmt, ...)
  if not cond then fail(fmt, ...) end
end

local function bit(flags, n)
  return math.floor(flags / 2 ^ n) % 2 == 1
end

-- {======================================================================
-- The server: a bit of every kind of registration
-- =======================================================================

local OBJ = core.object_mt

local function object() return setmetatable({}, OBJ) end

local function fixture()
  local srv = mcp.server{ name = "fuzz", version = "1.0.0" }
  srv:tool{ name = "echo", description = "echo",
    input_schema = { type = "object", properties = { text = { type = "string" } }, required = { "text" } },
    handler = function(args) return { content = { mcp.text(args.text) }, structuredContent = { echo = args.text } } end,
    output_schema = { type = "object", properties = { echo = { type = "string" } } } }
  srv:tool{ name = "plain", description = "no schema", handler = function() return "plain" end }
  srv:tool{ name = "fail", description = "raises", handler = function() error("on purpose", 0) end }
  srv:tool{ name = "chatty", description = "progress and logs", handler = function(_, ctx)
    ctx:progress(1, 2, "half")
    ctx:log("info", "working")
    ctx:log("error", { detail = "structured" }, "fuzz")
    return "chatty"
  end }
  srv:tool{ name = "sampler", description = "needs sampling", requires = { sampling = object() },
    handler = function() return "sampled" end }
  srv:tool{ name = "ask", description = "legacy: asks the client", handler = function(_, ctx)
    local result, err = ctx:request("sampling/createMessage", { maxTokens = 1,
      messages = { { role = "user", content = { type = "text", text = "?" } } } })
    if not result then return mcp.error_result(err and err.message or "no answer") end
    return "answered"
  end }
  srv:tool{ name = "mrtr", description = "modern: input_required", handler = function(_, ctx)
    if ctx.request_state == "s1" and ctx.input_responses then return "done" end
    return mcp.input_required({ q = { method = "roots/list", params = object() } }, "s1")
  end }
  srv:resource{ uri = "test://static", name = "static", mime_type = "text/plain",
    handler = function() return "static text" end }
  srv:resource{ uri = "test://blob", name = "blob", mime_type = "image/png",
    handler = function() return { blob = "AAAA" } end }
  srv:resource_template{ uri_template = "test://item/{id}", name = "item", mime_type = "application/json",
    handler = function(uri, vars) return { uri = uri, text = tostring(vars.id) } end }
  srv:prompt{ name = "greet", description = "a prompt",
    arguments = { { name = "who", description = "whom", required = true } },
    handler = function(args) return "hello " .. (type(args.who) == "string" and args.who or "?") end }
  srv:prompt{ name = "mrtr_prompt", description = "asks", handler = function(_, ctx)
    if ctx.input_responses then return "thanks" end
    return mcp.input_required{ c = { method = "elicitation/create", params = { message = "?" } } }
  end }
  srv:completion("prompt", "greet", function(_, value)
    return { tostring(value) .. "1", tostring(value) .. "2" }
  end)
  return srv
end

-- }======================================================================

-- {======================================================================
-- JSON-RPC messages out
-- =======================================================================

-- The codes the server may answer with (README, mcp/protocol.lua).
local CODES = { [-32700] = true, [-32600] = true, [-32601] = true, [-32602] = true, [-32603] = true,
  [-32800] = true, [-32002] = true, [-32020] = true, [-32021] = true, [-32022] = true }

local function pack(...) return { n = select("#", ...), ... } end

-- The events of a codec of `profile` (default jsonrpc: it takes batches)
-- reading `bytes` as NDJSON. A codec, not core.decode, so ids and strings
-- holding \u0000 are read too.
local function events(bytes, profile)
  local c = core.codec{ profile = profile or "jsonrpc" }
  c:feed(bytes)
  c:finish()
  local list = {}
  while true do
    local ev = pack(c:next())
    if ev.n == 0 then return list end
    list[#list + 1] = ev
  end
end

-- The key of an id as the peer matches them: a string by its normalized
-- raw text (as core.rawid gives it), a number by its value.
local function key_of(id, rawid)
  if type(id) == "string" then return core.rawid(id) end
  if type(id) == "number" then return core.encode(id) end
  return rawid
end

-- The messages in one event: a batch's members, or the event itself.
local function members(ev)
  if ev[1] ~= "batch" then return { ev } end
  local list = {}
  for i, m in ipairs(ev[2]) do list[i] = m end
  return list
end

-- Check one message the server wrote (a codec event): never invalid, an
-- error with a documented code, a result an object. Returns its kind and
-- the key of its id.
local function check_out(ev, where)
  local kind = ev[1]
  check(kind ~= "invalid", "%s: wrote an invalid message: %s %s (%s)", where, tostring(ev[3]),
    tostring(ev[6]), tostring(ev[4]))
  if kind == "request" then return kind, key_of(ev[4], ev[5]) end
  if kind == "notification" then return kind end
  if kind == "error" then
    local e = ev[3]
    check(CODES[e.code], "%s: undocumented error code %s (%s)", where, tostring(e.code), tostring(e.message))
    -- tostring of a table or a function: an address, different every run
    check(not e.message:find("%a: 0x%x%x%x%x"), "%s: a Lua address in the message: %s", where, e.message)
    return kind, key_of(ev[4], ev[2])
  end
  check(kind == "result", "%s: a %s event", where, tostring(kind))
  check(type(ev[3]) == "table" and getmetatable(ev[3]) ~= core.array_mt, "%s: result is not an object", where)
  return kind, key_of(ev[4], ev[2])
end

-- Note the ids in one line of input (a batch under profile jsonrpc: each
-- member's): `want` counts the valid requests, owed an answer each;
-- `maybe` the invalid messages the codec answers (naming an id or not).
local function note_ids(line, want, maybe, jsonrpc)
  for _, ev in ipairs(events(line, jsonrpc and "jsonrpc" or "mcp")) do
    for _, m in ipairs(members(ev)) do
      if m[1] == "request" then
        local k = key_of(m[4], m[5])
        want[k] = (want[k] or 0) + 1
      elseif m[1] == "invalid" and m[5] then
        local ok, id = pcall(core.decode, m[4])
        local k = key_of(ok and id or nil, m[4])
        maybe[k] = (maybe[k] or 0) + 1
      end
    end
  end
end

local ANSWER = { role = "assistant", model = "fuzz", content = { type = "text", text = "ok" },
  action = "accept", roots = {} }

-- }======================================================================

-- {======================================================================
-- Messages to a peer
-- =======================================================================

-- What on_error may say about bad input (the peer reports input that
-- breaks the protocol, and a notification whose handler refused it with a
-- JSON-RPC error, such as a tools/call without an id: routine here);
-- anything else is a fault of ours, a handler or a write that failed.
local ROUTINE = { "^invalid message: ", '^notification ".*" failed: jrpc error %-%d+: ',
  '^tool "fail" failed: .*on purpose$' }

local function reporter(reports)
  return function(msg)
    for _, p in ipairs(ROUTINE) do if msg:find(p) then return end end
    reports[#reports + 1] = msg
  end
end

local function check_reports(reports)
  check(#reports == 0, "reported: %s", tostring(reports[1]))
end

function M.messages(flags, payload)
  local jsonrpc, refuse = bit(flags, 0), bit(flags, 1)
  local reports, pending, want, maybe, got = {}, {}, {}, {}, {}
  local peer
  local written = {}
  local function send(bytes)
    written[#written + 1] = bytes
    for _, ev in ipairs(events(bytes)) do
      check(jsonrpc or ev[1] ~= "batch", "wrote a batch on profile mcp")
      for _, m in ipairs(members(ev)) do
        local kind, k = check_out(m, "message out")
        if kind == "request" then pending[#pending + 1] = m[4]
        elseif kind == "result" or kind == "error" then got[k] = (got[k] or 0) + 1 end
      end
    end
  end
  local srv = fixture()
  peer = srv:attach(peer_mod.new{ profile = jsonrpc and "jsonrpc" or "mcp", role = "server", send = send,
    on_error = reporter(reports) })
  -- the client's side: answer what the server asked, until it asks no more
  local function answer()
    for _ = 1, 64 do
      if #pending == 0 then return end
      local id = table.remove(pending, 1)
      local reply = { jsonrpc = "2.0", id = id }
      if refuse then reply.error = { code = -32603, message = "refused" } else reply.result = ANSWER end
      peer:receive(core.encode(reply) .. "\n")
    end
  end
  for line in payload:gmatch("[^\n]*\n?") do
    if line == "" then break end
    note_ids(line, want, maybe, jsonrpc)
    peer:receive(line)
    answer()
  end
  peer:receive("\n")
  answer()
  for k, n in pairs(want) do
    check((got[k] or 0) >= n, "request id %s: %d in, %d answers", k, n, got[k] or 0)
  end
  for k, n in pairs(got) do
    check(k == "null" or n <= (want[k] or 0) + (maybe[k] or 0),
      "id %s: %d answers for %d requests (%d invalid)", k, n, want[k] or 0, maybe[k] or 0)
  end
  check_reports(reports)
  peer:close("done")
  check_reports(reports)
  return table.concat(written)
end

-- }======================================================================

-- {======================================================================
-- HTTP
-- =======================================================================

-- The statuses README documents for Streamable HTTP and core.http_server.
local STATUSES = { [200] = true, [202] = true, [204] = true, [400] = true, [403] = true, [404] = true,
  [405] = true, [406] = true, [408] = true, [409] = true, [413] = true, [415] = true, [421] = true, [431] = true,
  [501] = true, [503] = true, [505] = true }

-- The HTTP status of a modern JSON error answer (mcp/http.lua, README).
local STATUS_OF = { [-32602] = 400, [-32020] = 400, [-32021] = 400, [-32022] = 400, [-32700] = 400,
  [-32600] = 400, [-32601] = 404 }

local SMALL = { max_header_bytes = 256, max_headers = 8, max_body_bytes = 256 }

local TOKEN = "^[!#$%%&'*+%-.^_`|~%w]+$"

-- Parse one response head at `pos`: status, headers (lower-case names),
-- the position after it.
local function parse_head(out, pos, where)
  local s, e, status = out:find("^HTTP/1%.1 (%d%d%d) [^\r\n]*\r\n", pos)
  check(s, "%s: no status line at byte %d: %q", where, pos, out:sub(pos, pos + 40))
  pos = e + 1
  local headers = {}
  while out:sub(pos, pos + 1) ~= "\r\n" do
    local hs, he, name, value = out:find("^([^:\r\n]*): ([^\r\n]*)\r\n", pos)
    check(hs, "%s: bad header line at byte %d: %q", where, pos, out:sub(pos, pos + 60))
    check(name:find(TOKEN), "%s: header name %q", where, name)
    check(not value:find("[%z\1-\8\10-\31\127]"), "%s: header %s has controls", where, name)
    name = name:lower()
    check(headers[name] == nil, "%s: header %s twice", where, name)
    headers[name] = value
    pos = he + 1
  end
  return tonumber(status), headers, pos + 2
end

-- The chunked body at `pos`: its bytes, the position after it, and
-- whether it ended (a stream still open has no last chunk yet).
local function parse_chunked(out, pos, where)
  local parts = {}
  while pos <= #out do
    local s, e, hex = out:find("^(%x+)\r\n", pos)
    check(s, "%s: bad chunk size at byte %d: %q", where, pos, out:sub(pos, pos + 20))
    local n = tonumber(hex, 16)
    check(e + n + 2 <= #out, "%s: a chunk cut short", where)
    check(out:sub(e + n + 1, e + n + 2) == "\r\n", "%s: a chunk without its CRLF", where)
    if n == 0 then return table.concat(parts), e + 3, true end
    parts[#parts + 1] = out:sub(e + 1, e + n)
    pos = e + n + 3
  end
  return table.concat(parts), pos, false
end

-- The one JSON-RPC message `text` holds (checked): its event and kind.
local function decode_message(text, where)
  check(not text:find("\n"), "%s: a message on more than one line", where)
  local list = events(text .. "\n")
  check(#list == 1 and list[1][1] ~= "batch", "%s: not one message: %q", where, text:sub(1, 200))
  return list[1], (check_out(list[1], where))
end

-- Check one response's body against its status and content type.
local function check_body(r, where)
  check(STATUSES[r.status], "%s: undocumented status %d (body %q)", where, r.status, r.body:sub(1, 200))
  local ctype = r.headers["content-type"]
  if r.status == 202 or r.status == 204 then
    check(r.body == "", "%s: %d with a body", where, r.status)
  elseif ctype == "application/json" then
    local ev, kind = decode_message(r.body, where)
    check(kind == "result" or kind == "error", "%s: a JSON answer that is a %s", where, kind)
    if r.headers["mcp-session-id"] == nil then  -- modern: the status says the error
      local code = kind == "error" and ev[3].code
      local want = code and STATUS_OF[code] or 200
      check(r.status == want, "%s: status %d for %s %s", where, r.status, kind, tostring(code))
    end
  elseif ctype == "text/event-stream" then
    check(r.status == 200, "%s: a stream with status %d", where, r.status)
    local rest = r.body
    while rest ~= "" do
      -- a legacy session's events carry an id first (SSE resumption)
      local data, after = rest:gsub("^id: %d+%-%d+\n", "", 1):match("^data: ([^\n]*)\n\n(.*)$")
      check(data, "%s: a bad SSE event: %q", where, rest:sub(1, 100))
      decode_message(data, where .. " (event)")
      rest = after
    end
  else
    check(ctype == "text/plain", "%s: content type %s", where, tostring(ctype))
  end
end

-- The responses in `out`; the last may be a stream still open.
local function parse_responses(out, where)
  local list, pos = {}, 1
  while pos <= #out do
    local w = ("%s, response %d"):format(where, #list + 1)
    local status, headers, p = parse_head(out, pos, w)
    local r = { status = status, headers = headers, ended = true }
    if headers["transfer-encoding"] ~= nil then
      check(headers["transfer-encoding"] == "chunked" and headers["content-length"] == nil,
        "%s: transfer-encoding %s", w, headers["transfer-encoding"])
      r.body, pos, r.ended = parse_chunked(out, p, w)
    elseif status == 204 then  -- no body, so no length (RFC 9110 8.6)
      check(headers["content-length"] == nil, "%s: 204 with a content-length", w)
      r.body, pos = "", p
    else
      local n = tonumber(headers["content-length"] or "")
      check(n, "%s: no content-length", w)
      check(p + n - 1 <= #out, "%s: a body cut short", w)
      r.body, pos = out:sub(p, p + n - 1), p + n
    end
    check_body(r, w)
    list[#list + 1] = r
  end
  return list
end

-- How many answers the server owes for `bytes`: one per request the codec
-- reads, the error one included, up to one that ends the connection.
local function owed(bytes, limits)
  local reader = core.http_server(limits)
  local n = 0
  local kind, req = reader:next(bytes)
  while kind ~= nil do
    n = n + 1
    if kind == "error" or not req.keep_alive then break end
    kind, req = reader:next()
  end
  return n
end

local SEP = "\n~~~\n"

-- One request with its Content-Length made right: the head up to the
-- first blank line, less any Content-Length, and the rest as the body.
local function fix_length(bytes)
  local s, e = bytes:find("\r\n\r\n", 1, true)
  if not s then return bytes end
  local head, body = bytes:sub(1, s - 1), bytes:sub(e + 1)
  head = ("\r\n" .. head):gsub("\r\n[Cc][Oo][Nn][Tt][Ee][Nn][Tt]%-[Ll][Ee][Nn][Gg][Tt][Hh]:[^\r]*", "")
  return head:sub(3) .. "\r\nContent-Length: " .. #body .. "\r\n\r\n" .. body
end

local function connections(payload)
  local list, pos = {}, 1
  while true do
    local s, e = payload:find(SEP, pos, true)
    if not s then
      list[#list + 1] = payload:sub(pos)
      return list
    end
    list[#list + 1] = payload:sub(pos, s - 1)
    pos = e + 1
  end
end

function M.http(flags, payload)
  local split, small = bit(flags, 2), bit(flags, 3)
  local uv = fake_luv.new()
  local reports = {}
  local log = reporter(reports)
  local opts = { port = 8080, on_error = log, peer = { on_error = log }, max_sessions = 2 }
  local limits = small and SMALL or nil
  for k, v in pairs(limits or {}) do opts[k] = v end
  local srv = fixture()
  local http = assert(srv:serve_http({ uv = uv }, opts))
  local clients, inputs = {}, connections(payload)
  if bit(flags, 1) then
    for i, bytes in ipairs(inputs) do inputs[i] = fix_length(bytes) end
  end
  for i, bytes in ipairs(inputs) do
    local c = uv.connect(http.handle)
    clients[i] = c
    local step = split and 1 + math.floor(flags / 32) or math.max(#bytes, 1)
    for at = 1, #bytes, step do c:send(bytes:sub(at, at + step - 1)) end
  end
  -- before anyone hangs up: answered in full, or a stream still open
  for i, c in ipairs(clients) do
    local where = "connection " .. i
    local list = parse_responses(c.out, where)
    local last = list[#list]
    if not (last and not last.ended) then
      local n = owed(inputs[i], limits)
      check(#list == n, "%s: %d answers for %d requests", where, #list, n)
    end
  end
  if bit(flags, 4) then uv.fire() end  -- idle connections close
  for _, c in ipairs(clients) do c:eof() end
  for i, c in ipairs(clients) do parse_responses(c.out, "connection " .. i .. " (after eof)") end
  -- every connection gone, with its idle timer
  check(http.count == 0 and next(http.connections) == nil, "%d connections left after eof", http.count)
  check(#uv.ref_timers() == 0, "%d timers left after eof", #uv.ref_timers())
  check_reports(reports)
  http:close()
  check_reports(reports)
  local outs = {}
  for i, c in ipairs(clients) do outs[i] = c.out end
  return outs
end

-- }======================================================================

--- One fuzz input (see the header comment). Raises what it found wrong;
--- returns what the server wrote (messages: the bytes; HTTP: a string a
--- connection).
---@param input string
---@return string|string[]
function M.run(input)
  local mode, flags = input:byte(1, 2)
  mode, flags = mode or 0, flags or 0
  local random_bytes = core.random_bytes
  counter = 0
  core.random_bytes = counted_bytes
  local ok, out = pcall(mode % 2 == 0 and M.messages or M.http, flags, input:sub(3))
  core.random_bytes = random_bytes  -- a spec process goes on with the real one
  if not ok then error(out, 0) end
  return out
end

return M
