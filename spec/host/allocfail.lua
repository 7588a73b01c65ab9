-- spec/host/allocfail.lua: the core session that spec/host/allocfail.c runs
-- again and again, failing a different allocation each time. Not a spec
-- (busted does not load it). Returns a transcript of every value the core
-- gave back; the host compares it with the transcript of a run where no
-- allocation failed. Object keys are sorted: string hashes are seeded per
-- state, so table traversal order differs between runs.
local core = require "jrpc.core"

local out = {}

local function show(v)
  if v == core.null then return "null" end
  local t = type(v)
  if t == "string" then return string.format("%q", v) end
  if t ~= "table" then return tostring(v) end  -- 1 and 1.0 differ
  local keys = {}
  for k in pairs(v) do keys[#keys + 1] = k end
  table.sort(keys, function(a, b)  -- numbers first; allocates nothing
    if type(a) ~= type(b) then return type(a) == "number" end
    return a < b
  end)
  local parts = {}
  for i, k in ipairs(keys) do parts[i] = tostring(k) .. "=" .. show(v[k]) end
  return (getmetatable(v) == core.array_mt and "A{" or "{") .. table.concat(parts, ",") .. "}"
end

local function rec(label, ...)
  local parts = { label }
  for i = 1, select("#", ...) do parts[#parts + 1] = show((select(i, ...))) end
  out[#out + 1] = table.concat(parts, " ")
end

-- feed 'input' in chunks of the given sizes (the rest at once), draining
-- the events after each chunk; then finish and drain again
local function run_codec(label, c, input, sizes)
  local pos = 1
  local function drain()
    while true do
      local ev = table.pack(c:next())
      if ev[1] == nil then break end
      rec(label, table.unpack(ev, 1, ev.n))
    end
    rec(label .. " want", c:want())
  end
  for _, n in ipairs(sizes) do
    c:feed(input:sub(pos, pos + n - 1))
    pos = pos + n
    drain()
  end
  c:feed(input:sub(pos))
  drain()
  c:finish()
  drain()
end

local function lsp_frame(body) return "Content-Length: " .. #body .. "\r\n\r\n" .. body end

-- {=================== reading: newline framing, jsonrpc ===================
local lines = {
  '{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1}',
  '{"jsonrpc":"2.0","method":"update","params":{"a":[1,2,{"b":null}],"c":"d\\u00e9\\n"}}',
  '{"jsonrpc":"2.0","method":"m","id":"ab\\"c\\u00e9"}',
  '{"jsonrpc":"2.0","method":"m","params":[],"id":1.5}',
  '{"jsonrpc":"2.0","method":"m","id":123456789012345678901234567890}',
  '{"jsonrpc":"2.0","result":{"x":[1.25,-3,true,false,null]},"id":7}',
  '{"jsonrpc":"2.0","result":1,"id":"\\u00e9x"}',
  '{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found","data":{"m":"x"}},"id":"7"}',
  '{"jsonrpc":"2.0","error":{"code":"x","message":"m"},"id":8}',
  '{"jsonrpc":"2.0","result":[1],"error":{"code":1,"message":"m"},"id":"\\u0041"}',
  '[{"jsonrpc":"2.0","method":"sum","params":[1,2],"id":"1"},{"jsonrpc":"2.0","method":"n"},'
    .. '{"foo":"boo"},1,{"jsonrpc":"2.0","result":{"k":[3]},"id":9}]',
  "[]",
  '{"jsonrpc":"2.0","method":"foobar,"params":"bar","baz]',
  '{"jsonrpc":"2.0","method":"m","params":["\255"]}',
  '{"jsonrpc":"2.0","method":"m","params":["\\ud800"]}',
  '{"jsonrpc":"2.0","method":1,"id":2}',
  '{"jsonrpc":"2.0","id":"no method"}',
  "", "  ",
  '{"jsonrpc":"2.0","method":"crlf","params":{"\\u006b":"v"}}\r',
}
local ndjson = table.concat(lines, "\n") .. "\n"
  .. '{"jsonrpc":"2.0","method":"last","params":{"k":"\\ud83d\\ude00"}}'
run_codec("nd", core.codec{}, ndjson, { 1, 7, 64, 300 })

local limited = table.concat({
  '{"jsonrpc":"2.0","method":"big","params":["' .. string.rep("x", 300) .. '"]}',
  '{"jsonrpc":"2.0","method":"deep","params":[[[[[[[[[[1]]]]]]]]]]}',
  '[{"jsonrpc":"2.0","method":"a"},{"jsonrpc":"2.0","method":"b"},{"jsonrpc":"2.0","method":"c"}]',
  '{"jsonrpc":"2.0","method":"ok","params":{"a":[1,{"b":[2]}]},"id":"x"}',
}, "\n") .. "\n"
run_codec("lim", core.codec{ max_message_bytes = 200, max_depth = 6, max_batch = 2 }, limited, { 150 })
-- }=========================================================================

-- {=================== reading: Content-Length framing =====================
local lsp = table.concat({
  lsp_frame('{"jsonrpc":"2.0","method":"initialize","params":{"capabilities":{}},"id":1}'),
  "stray log line\r\n",
  "Content-Type: application/json\r\n\r\n",
  lsp_frame('{"jsonrpc":"2.0","method":"n","params":[1,2]}'),
  lsp_frame('[{"jsonrpc":"2.0","method":"n"}]'),
  lsp_frame('{"jsonrpc":"2.0","method":"m","id":null}'),
  lsp_frame('{"jsonrpc":"2.0","result":{"ok":true},"id":"\\u00e9"}'),
  "content-length: 5000\r\n\r\n", string.rep(" ", 5000),
  lsp_frame('{"jsonrpc":"2.0","method":"after"}'),
  "Content-Length: 40\r\n\r\n{\"jsonrpc\":",
})
run_codec("mcp", core.codec{ framing = "lsp", profile = "mcp", max_message_bytes = 1000 }, lsp, { 3, 40, 90 })
run_codec("lsp", core.codec{ framing = "lsp", profile = "lsp" }, lsp, {})

-- params shapes (src/shape.c): checked from the text, from a decoded array
-- and in place in a decoded object; fitting and not
local shaped = core.codec{}
shaped:shapes{
  m = { [0] = "NSo", "a", "b", "c", a = 1, b = 2, c = 3 },
  any = { [0] = "Xx", "p", "q", p = 1, q = 2 },
}
run_codec("shape", shaped, table.concat({
  '{"jsonrpc":"2.0","method":"m","params":[1,"two"],"id":1}',
  '{"jsonrpc":"2.0","method":"m","params":[1,"t\\u00e9",{"k":[1,2]}],"id":2}',
  '{"jsonrpc":"2.0","method":"m","params":{"b":"x","a":2.5,"c":null},"id":3}',
  '{"jsonrpc":"2.0","method":"m","params":{"b":"x","a":2,"z":1},"id":4}',
  '{"jsonrpc":"2.0","method":"m","params":[1,2],"id":5}',
  '{"jsonrpc":"2.0","method":"any","params":[null,null],"id":6}',
  '{"jsonrpc":"2.0","method":"any","id":7}',
  '[{"jsonrpc":"2.0","method":"m","params":[3,"b"],"id":8}]',
}, "\n") .. "\n", { 40, 100 })
-- }=========================================================================

-- {=================== writing ==============================================
for _, framing in ipairs{ "ndjson", "lsp" } do
  local c = core.codec{ framing = framing }
  rec("result", c:result("1", { 1, 2.5, "x\n\"", { k = core.null }, setmetatable({}, core.array_mt) }))
  rec("result", c:result('"\\u00e9"', { big = string.rep("y", 700) }, true))
  rec("error", c:error("7", -32601, "Method not found", { "data", 1 }))
  rec("error", c:error("null", -32700, "Parse error", nil, true))
  rec("request", c:request('"r-1"', "sum", { 1, 2, 3 }))
  rec("request", c:request("2", "obj", setmetatable({}, core.object_mt), true))
  rec("notification", c:notification("note", { x = { y = { z = "é" } } }))
  rec("frame", c:frame("[" .. table.concat({ '{"a":1}', '{"b":2}' }, ",") .. "]"))
  rec("fail", c:result("1", 0 / 0))
  rec("fail", c:request("3", "m", { 1, nil, 3 }))
  rec("fail", c:notification("m", { "\255" }))
  rec("fail", c:error("1", 1, "\255"))
end
-- }=========================================================================

-- {=================== pending-id table =====================================
local p = core.pending{ max_pending = 40 }
for i = 1, 30 do
  local id = (i % 3 == 0) and ('"a-long-string-id-number-' .. i .. '-xxxxxxxx"') or tostring(i)
  rec("add", p:add(id, (i % 2 == 0) and i * 0.5 or nil))
end
rec("dup", p:add("1"))
rec("settle", p:settle("2"), p:settle("nope"), p:cancel("3"), p:cancel('"a-long-string-id-number-9-xxxxxxxx"'))
rec("deadline", p:next_deadline())
while true do
  local s, id = p:next_expired(6)
  if not s then break end
  rec("expired", s, id)
end
for i = 31, 45 do rec("add2", p:add(tostring(i), 100 - i)) end
local st = p:stats()
rec("stats", st.pending, st.unmatched, st.settled, st.expired, st.capacity, st.bytes)
rec("deadline", p:next_deadline())
while true do
  local s, id = p:pop()
  if not s then break end
  rec("pop", s, id)
end
rec("count", p:count(), p:next_deadline())
-- }=========================================================================

-- {=================== decode / encode / rawid ==============================
local doc = core.decode('{"a":[1,2,{"b":"c"}],"d":1.5e10,"e":-0.0,"f":"\\u00e9\\t","g":[],"h":{}}')
rec("decode", doc)
rec("encode", core.encode(doc.a), core.encode(doc.g), core.encode(doc.h), core.encode(doc.f))
rec("decode", core.decode("[1, 2"), core.decode('"\\u0000"'), core.decode("[[[1]]]", 2))
rec("decode", core.decode("12345678901234567890"), core.decode('"x"'), core.decode("null"))
local cyc = {}
cyc[1] = cyc
rec("encode", core.encode(cyc), core.encode({ 1, x = 2 }), core.encode(print), core.encode({ { { 1 } } }, 2))
rec("rawid", core.rawid("é\"\n"), core.rawid(-17), core.rawid(2 ^ 53))
local raw = core.raw_json(' {"z" : [1, 2.50],\n "a": {}} ')
rec("raw_json", core.encode({ raw, { raw } }), core.raw_json("[1"), core.raw_json('"\\u0000"'))
-- }=========================================================================

-- {=================== HTTP reader, writers, crypto ==========================
do
  local h = core.http_server{ max_body_bytes = 64 }
  local req = "POST /mcp?x=1 HTTP/1.1\r\nHost: h\r\nX-A: 1\r\nx-a: 2\r\nCookie: a\r\nCookie: b\r\n"
    .. "Content-Length: 5\r\n\r\nhello"
  local chunked = "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"
  local input = req .. chunked .. req
  for i = 1, #input, 7 do
    local kind, r = h:next(input:sub(i, i + 6))
    while kind do
      rec("http", kind, r)
      kind, r = h:next()
    end
  end
  rec("http", h:next("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 65\r\n\r\n"))
  rec("http", h:next())
  local h2 = core.http_server{}
  rec("http", h2:next("GET / HTTP/1.1\r\nHost: h\r\n\r\nGET / HTTP/2.0\r\n\r\n"))
  rec("http", h2:next())
  rec("http_response", core.http_response(200, { ["Content-Type"] = "application/json", B = "x" }, "{}"))
  rec("http_stream_head", core.http_stream_head(200, { ["Mcp-Session-Id"] = "s" }))
  rec("http_chunk", core.http_chunk(core.sse_event("{}", "1")), core.http_chunk(""))
  rec("crypto", #core.hmac_sha256("key", "msg"), core.equal("a", "a"), #core.random_bytes(16))
end
-- }=========================================================================

-- {=================== HTTP client reader, request writer, TLS client =======
do
  local r = core.http_client{ max_body_bytes = 64 }
  local resp = "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nSet-Cookie: a\r\nSet-Cookie: b\r\n"
    .. "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\nHTTP/1.1 204 No Content\r\nX: 1\r\n\r\n"
  for i = 1, #resp, 9 do
    local kind, v = r:next(resp:sub(i, i + 8))
    while kind do
      rec("http_client", kind, v)
      kind, v = r:next()
    end
  end
  rec("http_client", r:next("HTTP/1.1 200 OK\r\nContent-Length: 65\r\n\r\n"))
  rec("http_client", r:next())
  local r2 = core.http_client{}
  rec("http_client", r2:next("HTTP/1.0 200 OK\r\n\r\nuntil close"))
  rec("http_client", r2:next())
  r2:finish()
  rec("http_client", r2:next())
  rec("http_request", core.http_request("POST", "/mcp", { Host = "h", ["Content-Type"] = "application/json" }, "{}"))
  local t = core.tls_client{ host = "example.org", verify = false }
  rec("tls", t:handshake(), #t:outgoing() > 100, t:outgoing())
  t:feed("HTTP/1.1 400 Bad Request\r\n\r\n")
  rec("tls", t:handshake())
  rec("tls", t:read())
  local t2 = core.tls_client{ host = "127.0.0.1", verify = false }  -- left to the collector
  rec("tls", t2:handshake(), tostring(t2))
  t:close()
  rec("tls", tostring(t))
end
-- }=========================================================================

-- {=================== garbage: finalizers at collection and at close ======
for _ = 1, 3 do
  local c = core.codec{ framing = "lsp" }
  c:feed("Content-Length: 30\r\n\r\n{")
  local q = core.pending{}
  q:add('"an id longer than twenty-three bytes"', 1)
  q:add("1")
end
collectgarbage()
local keep = { codec = core.codec{}, pending = core.pending{} }  -- alive until lua_close
keep.codec:feed('{"jsonrpc":"2.0",')
keep.pending:add('"another id longer than twenty-three bytes"', 5)
package.loaded["allocfail.keep"] = keep
-- }=========================================================================

return table.concat(out, "\n") .. "\n"
