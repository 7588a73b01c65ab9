--- mcp_seeds.lua -- writes the seeds of fuzz_mcp (fuzz/corpus/fuzz_mcp/):
-- the messages the MCP conformance suite sends (both eras), the same with
-- broken _meta, and HTTP requests with good and bad headers, in the input
-- format of fuzz/mcp_host.lua. Run from the repository root:
--   lua5.4 fuzz/mcp_seeds.lua
package.path = "lua/?.lua;lua/?/init.lua;" .. package.path
package.cpath = "build/5.4/?.so;" .. package.cpath
local core = require "jrpc.core"

local dir = "fuzz/corpus/fuzz_mcp/"
os.execute("mkdir -p " .. dir)

local function write(name, bytes)
  local f = assert(io.open(dir .. name, "wb"))
  f:write(bytes)
  f:close()
end

local V = "2026-07-28"
local META = '"_meta":{"io.modelcontextprotocol/protocolVersion":"' .. V .. '",'
  .. '"io.modelcontextprotocol/clientCapabilities":{}}'
local META_SAMPLING = '"_meta":{"io.modelcontextprotocol/protocolVersion":"' .. V .. '",'
  .. '"io.modelcontextprotocol/clientCapabilities":{"sampling":{}},'
  .. '"io.modelcontextprotocol/clientInfo":{"name":"fuzz","version":"1"},'
  .. '"io.modelcontextprotocol/logLevel":"debug","progressToken":"p1"}'

-- the state the fixture's "mrtr" tool keeps, sealed as the server does
-- (its key is the first 32 "random" bytes mcp_host.lua gives: 31 zeros, 1)
local function hex(s) return (s:gsub(".", function(c) return ("%02x"):format(c:byte()) end)) end
local SEALED = "s1." .. hex(core.hmac_sha256(("\0"):rep(31) .. "\1", "s1"))

local function req(id, method, params)
  return ('{"jsonrpc":"2.0","id":%s,"method":"%s","params":%s}'):format(id, method, params)
end
local function modern(id, method, body, meta)
  body = body and body .. "," or ""
  return req(id, method, "{" .. body .. (meta or META) .. "}")
end

-- {======================================================================
-- Modern requests (the conformance suite's, then hostile _meta)
-- =======================================================================
local good = {
  discover = modern(1, "server/discover"),
  tools_list = modern(2, "tools/list"),
  tools_list_cursor = modern(3, "tools/list", '"cursor":"1"'),
  call_echo = modern(4, "tools/call", '"name":"echo","arguments":{"text":"hi"}'),
  call_echo_bad_args = modern(5, "tools/call", '"name":"echo","arguments":{"text":7}'),
  call_plain = modern(6, "tools/call", '"name":"plain"'),
  call_fail = modern(7, "tools/call", '"name":"fail","arguments":{}'),
  call_chatty = modern(8, "tools/call", '"name":"chatty","arguments":{}', META_SAMPLING),
  call_sampler = modern(9, "tools/call", '"name":"sampler","arguments":{}'),
  call_sampler_ok = modern(10, "tools/call", '"name":"sampler","arguments":{}', META_SAMPLING),
  call_mrtr = modern(11, "tools/call", '"name":"mrtr","arguments":{}'),
  call_mrtr_retry = modern(12, "tools/call", '"name":"mrtr","arguments":{},"requestState":"' .. SEALED
    .. '","inputResponses":{"q":{"roots":[]}}'),
  call_mrtr_forged = modern(13, "tools/call", '"name":"mrtr","requestState":"s1.00","inputResponses":{}'),
  call_unknown = modern(14, "tools/call", '"name":"nope"'),
  resources_list = modern(15, "resources/list"),
  templates_list = modern(16, "resources/templates/list"),
  read_static = modern(17, "resources/read", '"uri":"test://static"'),
  read_blob = modern(18, "resources/read", '"uri":"test://blob"'),
  read_template = modern(19, "resources/read", '"uri":"test://item/42"'),
  read_missing = modern(20, "resources/read", '"uri":"test://missing"'),
  prompts_list = modern(21, "prompts/list"),
  prompt_get = modern(22, "prompts/get", '"name":"greet","arguments":{"who":"you"}'),
  prompt_missing_arg = modern(23, "prompts/get", '"name":"greet","arguments":{}'),
  prompt_mrtr = modern(24, "prompts/get", '"name":"mrtr_prompt"'),
  complete = modern(25, "completion/complete",
    '"ref":{"type":"ref/prompt","name":"greet"},"argument":{"name":"who","value":"a"}'),
  complete_resource = modern(26, "completion/complete",
    '"ref":{"type":"ref/resource","uri":"test://item/{id}"},"argument":{"name":"id","value":""}'),
  removed_initialize = modern(27, "initialize", '"protocolVersion":"' .. V .. '","capabilities":{}'),
  removed_ping = modern(28, "ping"),
  removed_set_level = modern(29, "logging/setLevel", '"level":"info"'),
  unknown_method = modern(30, "no/such"),
  string_id = modern('"abc\\u00e9"', "tools/list"),
}
local hostile = {
  meta_missing = req(1, "tools/list", "{}"),
  meta_not_object = req(2, "tools/list", '{"_meta":[]}'),
  meta_version_number = req(3, "tools/list", '{"_meta":{"io.modelcontextprotocol/protocolVersion":20260728,'
    .. '"io.modelcontextprotocol/clientCapabilities":{}}}'),
  meta_version_unsupported = req(4, "tools/list", '{"_meta":{"io.modelcontextprotocol/protocolVersion":"v999",'
    .. '"io.modelcontextprotocol/clientCapabilities":{}}}'),
  meta_caps_missing = req(5, "tools/list", '{"_meta":{"io.modelcontextprotocol/protocolVersion":"' .. V .. '"}}'),
  meta_caps_array = req(6, "tools/list", '{"_meta":{"io.modelcontextprotocol/protocolVersion":"' .. V .. '",'
    .. '"io.modelcontextprotocol/clientCapabilities":[1]}}'),
  meta_level_unknown = req(7, "tools/list", '{"_meta":{"io.modelcontextprotocol/protocolVersion":"' .. V .. '",'
    .. '"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":"loud"}}'),
  meta_level_table = req(8, "tools/list", '{"_meta":{"io.modelcontextprotocol/protocolVersion":"' .. V .. '",'
    .. '"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":{}}}'),
  meta_info_string = req(9, "tools/list", '{"_meta":{"io.modelcontextprotocol/protocolVersion":"' .. V .. '",'
    .. '"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":"x"}}'),
  meta_null = req(10, "tools/list", '{"_meta":null}'),
  meta_progress_token_object = modern(11, "tools/call", '"name":"chatty"',
    '"_meta":{"io.modelcontextprotocol/protocolVersion":"' .. V .. '",'
    .. '"io.modelcontextprotocol/clientCapabilities":{},"progressToken":{"a":1}}'),
  params_array = req(12, "tools/list", "[1,2]"),
  params_string = req(13, "tools/call", '"x"'),
  name_number = modern(14, "tools/call", '"name":5'),
  arguments_array = modern(15, "tools/call", '"name":"echo","arguments":["hi"]'),
  uri_number = modern(16, "resources/read", '"uri":{}'),
  cursor_number = modern(17, "tools/list", '"cursor":1e999'),
  state_number = modern(18, "tools/call", '"name":"mrtr","requestState":1,"inputResponses":"x"'),
  ref_missing = modern(19, "completion/complete", '"argument":{"name":"who","value":"a"}'),
  argument_value_object = modern(20, "completion/complete",
    '"ref":{"type":"ref/prompt","name":"greet"},"argument":{"name":"who","value":{}}'),
  id_float = '{"jsonrpc":"2.0","id":1.5,"method":"tools/list","params":{' .. META .. '}}',
  id_null = '{"jsonrpc":"2.0","id":null,"method":"tools/list","params":{' .. META .. '}}',
  notification_call = '{"jsonrpc":"2.0","method":"tools/call","params":{"name":"plain"}}',
}
local legacy = table.concat({
  req(1, "initialize", '{"protocolVersion":"2025-11-25","capabilities":{"sampling":{}},'
    .. '"clientInfo":{"name":"c","version":"1"}}'),
  '{"jsonrpc":"2.0","method":"notifications/initialized"}',
  req(2, "tools/list", "{}"),
  req(3, "tools/call", '{"name":"ask","arguments":{}}'),
  req(4, "tools/call", '{"name":"chatty","arguments":{},"_meta":{"progressToken":7}}'),
  req(5, "logging/setLevel", '{"level":"debug"}'),
  req(6, "resources/subscribe", '{"uri":"test://static"}'),
  req(7, "resources/read", '{"uri":"test://missing"}'),
  req(8, "ping", "{}"),
  req(9, "prompts/get", '{"name":"mrtr_prompt"}'),
  req(10, "resources/unsubscribe", '{"uri":"test://static"}'),
  '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}',
}, "\n") .. "\n"

for name, line in pairs(good) do write("msg_" .. name, "\0\0" .. line .. "\n") end
for name, line in pairs(hostile) do write("msg_bad_" .. name, "\0\0" .. line .. "\n") end
write("msg_legacy_session", "\0\0" .. legacy)
write("msg_legacy_refused", "\0\2" .. legacy)
write("msg_legacy_old_version", "\0\0" .. legacy:gsub("2025%-11%-25", "2024-11-05", 1))
write("msg_batch_jsonrpc", "\0\1[" .. good.tools_list .. "," .. good.call_echo .. ',{"jsonrpc":"2.0","method":"x"}]\n')
write("msg_batch_mcp", "\0\0[" .. good.tools_list .. "," .. good.call_echo .. "]\n")
write("msg_batch_legacy", "\0\1" .. req(1, "initialize", '{"protocolVersion":"2025-03-26","capabilities":{}}')
  .. "\n[" .. req(2, "tools/call", '{"name":"ask"}') .. "," .. req(3, "ping", "{}") .. "]\n")
write("msg_duplicate_ids", "\0\0" .. good.call_echo .. "\n" .. good.call_echo .. "\n")
write("msg_junk", "\0\0{\n[]\n\"x\"\n{\"jsonrpc\":\"2.0\"}\n")

-- }======================================================================

-- {======================================================================
-- HTTP
-- =======================================================================
local SEP = "\n~~~\n"

local function http(method, headers, body, target)
  local lines = { ("%s %s HTTP/1.1"):format(method, target or "/mcp") }
  for _, h in ipairs(headers) do lines[#lines + 1] = h end
  if body then lines[#lines + 1] = "Content-Length: " .. #body end
  return table.concat(lines, "\r\n") .. "\r\n\r\n" .. (body or "")
end

local BASE = { "Host: 127.0.0.1:8080", "Content-Type: application/json",
  "Accept: application/json, text/event-stream" }
local function post(body, extra, base)
  local h = {}
  for _, v in ipairs(base or BASE) do h[#h + 1] = v end
  for _, v in ipairs(extra or {}) do h[#h + 1] = v end
  return http("POST", h, body)
end
local function std(method, name)
  local h = { "MCP-Protocol-Version: " .. V, "Mcp-Method: " .. method }
  if name then h[#h + 1] = "Mcp-Name: " .. name end
  return h
end

local h = {
  discover = post(good.discover, std("server/discover")),
  call_echo = post(good.call_echo, std("tools/call", "echo")),
  call_echo_b64 = post(good.call_echo, std("tools/call", "=?base64?ZWNobw==?=")),
  call_echo_bad_b64 = post(good.call_echo, std("tools/call", "=?base64?ZW!obw?=")),
  call_chatty_sse = post(good.call_chatty, std("tools/call", "chatty")),
  call_fail = post(good.call_fail, std("tools/call", "fail")),
  call_mrtr = post(good.call_mrtr, std("tools/call", "mrtr")),
  read_missing = post(good.read_missing, std("resources/read", "test://missing")),
  name_missing = post(good.call_echo, std("tools/call")),
  name_differs = post(good.call_echo, std("tools/call", "other")),
  method_differs = post(good.call_echo, std("tools/list", "echo")),
  version_differs = post(good.discover, { "MCP-Protocol-Version: 2025-11-25", "Mcp-Method: server/discover" }),
  version_missing = post(good.discover, { "Mcp-Method: server/discover" }),
  version_unsupported = post(hostile.meta_version_unsupported, { "MCP-Protocol-Version: v999",
    "Mcp-Method: tools/list" }),
  meta_missing = post(hostile.meta_missing, std("tools/list")),
  unknown_method = post(good.unknown_method, std("no/such")),
  notification = post('{"jsonrpc":"2.0","method":"notifications/initialized"}', { "MCP-Protocol-Version: " .. V }),
  response_posted = post('{"jsonrpc":"2.0","id":1,"result":{}}', { "MCP-Protocol-Version: " .. V }),
  batch = post("[" .. good.discover .. "]", std("server/discover")),
  parse_error = post("{", std("server/discover")),
  empty_body = post("", std("server/discover")),
  origin_bad = post(good.discover, { "Origin: http://evil.example", "MCP-Protocol-Version: " .. V,
    "Mcp-Method: server/discover" }),
  origin_good = post(good.discover, { "Origin: http://localhost:8080", "MCP-Protocol-Version: " .. V,
    "Mcp-Method: server/discover" }),
  host_bad = post(good.discover, std("server/discover"), { "Host: evil.example", "Content-Type: application/json" }),
  no_host = "POST /mcp HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}",
  path_bad = http("POST", { "Host: localhost" }, "{}", "/other"),
  get = http("GET", { "Host: localhost" }),
  delete = http("DELETE", { "Host: [::1]" }),
  put_session = http("PUT", { "Host: localhost", "Mcp-Session-Id: 00000000000000000000000000000001" }),
  header_ctl = post(good.call_echo, { "MCP-Protocol-Version: " .. V, "Mcp-Method: tools/call",
    "Mcp-Name: ec\tho" }),
  chunked = "POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
    .. "Transfer-Encoding: chunked\r\nMCP-Protocol-Version: " .. V .. "\r\nMcp-Method: server/discover\r\n\r\n"
    .. ("%x"):format(#good.discover) .. "\r\n"
    .. good.discover .. "\r\n0\r\n\r\n",
  pipelined = post(good.discover, std("server/discover")) .. post(good.tools_list, std("tools/list"))
    .. http("GET", { "Host: localhost" }),
  close = post(good.discover, std("server/discover"), { "Host: localhost", "Content-Type: application/json",
    "Connection: close" })
    .. post(good.tools_list, std("tools/list")),
  http10 = "POST /mcp HTTP/1.0\r\nHost: localhost\r\nContent-Type: application/json\r\n"
    .. "Content-Length: " .. #good.discover .. "\r\nMCP-Protocol-Version: " .. V
    .. "\r\nMcp-Method: server/discover\r\n\r\n" .. good.discover,
  http2 = "GET /mcp HTTP/2.0\r\nHost: localhost\r\n\r\n",
  bad_line = "POST  /mcp HTTP/1.1\r\n\r\n",
  smuggle = "POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n{}",
  smuggle_space = "POST /mcp HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding : chunked\r\n"
    .. "Content-Length: 5\r\n\r\n0\r\n\r\n",
  media_text = post(good.discover, std("server/discover"), { "Host: localhost", "Content-Type: text/plain" }),
  accept_json_only = post(good.discover, std("server/discover"), { "Host: localhost",
    "Content-Type: application/json", "Accept: application/json" }),
  upgrade = "GET /mcp HTTP/1.1\r\nHost: localhost\r\nConnection: upgrade\r\nUpgrade: websocket\r\n\r\n",
}
for name, bytes in pairs(h) do
  write("http_" .. name, "\1\0" .. bytes)
  -- and with the length the harness sets (mcp_host.lua, flags bit 1)
  local one = bytes:match("^(.-\r\n\r\n)") and bytes:gsub("\r\nContent%-Length: %d+", "")
  if one and name ~= "chunked" and name ~= "smuggle" then write("http_len_" .. name, "\1\2" .. one) end
end
write("http_small_limits_body", "\1\8" .. h.call_echo)
write("http_small_limits_headers", "\1\8" .. post(good.discover, { "A: 1", "B: 2", "C: 3", "D: 4", "E: 5",
  "F: 6", "MCP-Protocol-Version: " .. V, "Mcp-Method: server/discover" }))
write("http_split", "\1\4" .. h.pipelined)

-- legacy: initialize opens session 2 (mcp_host.lua counts its "random" bytes from 1, and the MRTR key took 1);
-- later connections name it
local SID = "Mcp-Session-Id: " .. ("0"):rep(31) .. "2"
local function lpost(body, sid)
  return post(body, { sid or nil })
end
local init = lpost(req(1, "initialize", '{"protocolVersion":"2025-11-25","capabilities":{"sampling":{}},'
  .. '"clientInfo":{"name":"c","version":"1"}}'))
write("http_legacy_session", "\1\0" .. table.concat({
  init,
  lpost('{"jsonrpc":"2.0","method":"notifications/initialized"}', SID),
  lpost(req(2, "tools/list", "{}"), SID) .. lpost(req(5, "tools/call", '{"name":"chatty","arguments":{}}'), SID),
  http("GET", { "Host: localhost", SID }),
  lpost(req(3, "tools/call", '{"name":"ask","arguments":{}}'), SID),
  lpost('{"jsonrpc":"2.0","id":1,"result":{"role":"assistant","model":"m","content":{"type":"text","text":"x"}}}',
    SID),
  lpost(req(4, "logging/setLevel", '{"level":"debug"}'), SID),
  http("DELETE", { "Host: localhost", SID }),
  lpost(req(6, "tools/list", "{}"), SID),
}, SEP))
write("http_legacy_no_session", "\1\0" .. lpost(req(2, "tools/list", "{}")) .. SEP
  .. lpost(req(2, "tools/list", "{}"), "Mcp-Session-Id: nope"))
write("http_legacy_many_sessions", "\1\0" .. init .. SEP .. init .. SEP .. init .. SEP
  .. lpost(req(2, "tools/list", "{}"), SID))
write("http_legacy_ask_hangup", "\1\0" .. init .. SEP .. lpost(req(3, "tools/call", '{"name":"ask"}'), SID))
-- }======================================================================
