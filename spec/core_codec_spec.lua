-- jrpc.core codec: classification, exact ids, framing, limits, writers.
local core = require "jrpc.core"

local unpack = table.unpack or unpack
local function pack(...) return {n = select("#", ...), ...} end
local is_jit = rawget(_G, "jit") ~= nil

-- every event the codec yields for 'input', as arrays of values
local function events(codec, input, finish)
  if input then codec:feed(input) end
  if finish then codec:finish() end
  local out = {}
  while true do
    local ev = pack(codec:next())
    if ev[1] == nil then break end
    out[#out + 1] = ev
  end
  return out
end

local function one(input, opts)
  local evs = events(core.codec(opts), input .. "\n")
  assert.are.equal(1, #evs)
  return unpack(evs[1], 1, evs[1].n)
end

-- an event rendered as text, tables as JSON, for exact comparison
local function show(ev)
  local parts = {}
  for i = 1, ev.n or #ev do
    local v = ev[i]
    if type(v) == "table" then
      if ev[1] == "batch" then
        local items = {}
        for j, item in ipairs(v) do items[j] = "{" .. show(item) .. "}" end
        -- batch members are plain arrays: a trailing nil is not counted
        v = table.concat(items, " ")
      else v = core.encode(v) end
    end
    parts[#parts + 1] = tostring(v)
  end
  return table.concat(parts, " ")
end

describe("codec: message classification", function()
  it("classifies the four forms", function()
    local kind, method, params, id, rawid =
      one('{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1}')
    assert.are.same({"request", "subtract", 42, 23, 1, 1},
      {kind, method, params[1], params[2], id, rawid})
    assert.are.equal("notification update [1,2]",
      show(pack(one('{"jsonrpc":"2.0","method":"update","params":[1,2]}'))))
    assert.are.equal('result 7 19 7', show(pack(one('{"jsonrpc":"2.0","result":19,"id":7}'))))
    local kind2, rawid2, err, id2 = one('{"jsonrpc":"2.0","error":{"code":-32601,"message":"nf"},"id":"x"}')
    assert.are.same({"error", '"x"', {code = -32601, message = "nf"}, "x"}, {kind2, rawid2, err, id2})
  end)

  -- plain numbers and strings are read without cJSON; the rest falls back
  -- to it: each must come out as the same Lua value either way (integral
  -- values within 2^53 as integers, whatever their spelling)
  it("decodes scalar results of every shape to the same value", function()
    local cases = {
      { "42", 42, "integer" }, { "-7", -7, "integer" }, { "0", 0, "integer" },
      { "123456789012345", 123456789012345, "integer" },
      { "1234567890123456", 1234567890123456, "integer" },
      { "1.5", 1.5, "float" }, { "-2.25", -2.25, "float" }, { "1e3", 1000, "integer" },
      { "1.0", 1, "integer" }, { "-0", 0, "integer" },
      { '"abc"', "abc" }, { '""', "" }, { '"a\\nb"', "a\nb" }, { '"\\u00e9"', "\195\169" },
    }
    for _, c in ipairs(cases) do
      local kind, _, result = one('{"jsonrpc":"2.0","result":' .. c[1] .. ',"id":1}')
      assert.are.equal("result", kind)
      assert.are.equal(c[2], result, c[1])
      if c[3] and math.type then assert.are.equal(c[3], math.type(result), c[1]) end
    end
  end)

  it("tells a request's reader whether bytes are left, when asked", function()
    local c = core.codec()
    local a = '{"jsonrpc":"2.0","method":"a","id":1}\n'
    local b = '{"jsonrpc":"2.0","method":"b","id":2}\n'
    local ev = pack(c:next(a .. b .. '{"jsonrpc"', true))
    assert.are.same({ n = 6, "request", "a", nil, 1, 1, true }, ev)
    ev = pack(c:next(nil, true))
    assert.are.equal(true, ev[6])  -- the partial third message
    ev = pack(c:next(':"2.0","method":"c","id":3}\n', true))
    assert.are.same({ n = 6, "request", "c", nil, 3, 3, false }, ev)
    assert.are.equal(0, select("#", c:next(nil, true)))
    -- not asked: five values, as ever
    assert.are.equal(5, select("#", c:next(a)))
    -- only requests carry it
    assert.are.equal(3, select("#", c:next('{"jsonrpc":"2.0","method":"n"}\n', true)))
  end)

  it("gives params nil when absent and keeps named params", function()
    local kind, method, params = one('{"jsonrpc":"2.0","method":"m","id":1}')
    assert.are.same({"request", "m"}, {kind, method})
    assert.is_nil(params)
    local _, _, named = one('{"id":2,"params":{"minuend":42,"subtrahend":23},"method":"s","jsonrpc":"2.0"}')
    assert.are.same({minuend = 42, subtrahend = 23}, named)
  end)

  local invalid = {
    {'{"jsonrpc":"2.0","method":"foobar,"params":"bar","baz]', -32700, "Parse error", "null", true},
    {'{"jsonrpc":"2.0","method":1,"params":"bar"}', -32600, "Invalid Request", "null", true},
    {'{"jsonrpc":"1.0","method":"m","id":4}', -32600, "Invalid Request", "4", true},
    {'{"method":"m","id":4}', -32600, "Invalid Request", "4", true},
    {'{"jsonrpc":"2.0","method":"m","params":3,"id":"a"}', -32600, "Invalid Request", '"a"', true},
    {'{"jsonrpc":"2.0","method":"m","id":[1]}', -32600, "Invalid Request", "null", true},
    {'{"jsonrpc":"2.0","method":"m","id":true}', -32600, "Invalid Request", "null", true},
    {'{"jsonrpc":"2.0","method":"m","method":"n","id":1}', -32600, "Invalid Request", "1", true},
    {'{"jsonrpc":"2.0","method":"m","result":1,"id":1}', -32600, "Invalid Request", "1", true},
    {'{"jsonrpc":"2.0","id":1}', -32600, "Invalid Request", "1", true},
    {'{"jsonrpc":"2.0"}', -32600, "Invalid Request", "null", true},
    {'"just a string"', -32600, "Invalid Request", "null", true},
    {'[]', -32600, "Invalid Request", "null", true},
    {'{"jsonrpc":"2.0","result":1,"error":{"code":1,"message":"m"},"id":5}', -32600, "Invalid Request", "5", false},
    {'{"jsonrpc":"2.0","error":{"code":1.5,"message":"m"},"id":5}', -32600, "Invalid Request", "5", false},
    {'{"jsonrpc":"2.0","error":{"code":1},"id":5}', -32600, "Invalid Request", "5", false},
    {'{"jsonrpc":"2.0","result":1}', -32600, "Invalid Request", "null", false},
    {'{"jsonrpc":"2.0","method":"m"} x', -32700, "Parse error", "null", true},
    {'{"jsonrpc":"2.0","method":"m\255"}', -32700, "Parse error", "null", true},
  }
  for i, case in ipairs(invalid) do
    it("rejects invalid message #" .. i .. ": " .. case[1], function()
      local kind, code, msg, rawid, reply, detail = one(case[1])
      assert.are.same({"invalid", case[2], case[3], case[4], case[5]},
        {kind, code, msg, rawid, reply})
      assert.is_string(detail)
    end)
  end

  it("explains why in the detail", function()
    local _, _, _, _, _, detail = one('{"jsonrpc":"2.0","method":"m","params":3,"id":1}')
    assert.are.equal("params must be an array or an object", detail)
    _, _, _, _, _, detail = one('{"jsonrpc":"2.0","method":"foobar, "params":1}')
    assert.are.equal("expected ',' or '}' at byte 37", detail)
  end)
end)

describe("codec: ids are kept exactly", function()
  local c = core.codec{}
  local function echo(idtext)
    local kind, _, _, id, rawid = one('{"jsonrpc":"2.0","method":"m","id":' .. idtext .. '}')
    assert.are.equal("request", kind)
    local reply = c:result(rawid, 1)
    return id, reply
  end

  it("tells 2 from \"2\"", function()
    local id, reply = echo("2")
    assert.are.equal(2, id)
    assert.are.equal('{"jsonrpc":"2.0","result":1,"id":2}\n', reply)
    id, reply = echo('"2"')
    assert.are.equal("2", id)
    assert.are.equal('{"jsonrpc":"2.0","result":1,"id":"2"}\n', reply)
  end)

  it("echoes integers beyond 2^53 byte for byte", function()
    local id, reply = echo("9007199254740993")
    assert.are.equal('{"jsonrpc":"2.0","result":1,"id":9007199254740993}\n', reply)
    if not is_jit then
      assert.are.equal(9007199254740993, id)
      assert.are.equal("integer", math.type(id))
    end
    reply = select(2, echo("-9223372036854775808"))
    assert.are.equal('{"jsonrpc":"2.0","result":1,"id":-9223372036854775808}\n', reply)
  end)

  it("echoes fractional and huge ids without rounding", function()
    local id, reply = echo("1.50")
    assert.are.equal(1.5, id)
    assert.are.equal('{"jsonrpc":"2.0","result":1,"id":1.50}\n', reply)
    reply = select(2, echo("123456789012345678901234567890"))
    assert.are.equal('{"jsonrpc":"2.0","result":1,"id":123456789012345678901234567890}\n', reply)
    reply = select(2, echo("1e2"))
    assert.are.equal('{"jsonrpc":"2.0","result":1,"id":1e2}\n', reply)
  end)

  it("echoes string ids with escapes and non-ASCII as sent", function()
    local id, reply = echo('"a\\u00e9\\n\\"é😀"')
    assert.are.equal('aé\n"é😀', id)
    assert.are.equal('{"jsonrpc":"2.0","result":1,"id":"a\\u00e9\\n\\"é😀"}\n', reply)
  end)

  it("echoes null ids", function()
    local id, reply = echo("null")
    assert.are.equal(core.null, id)
    assert.are.equal('{"jsonrpc":"2.0","result":1,"id":null}\n', reply)
  end)

  -- a plain integer of at most 15 digits is its own rawid (no string per
  -- message); every other spelling keeps its text, so the reply echoes it
  it("gives a plain integer id as its own rawid, any other id as its text", function()
    local cases = {
      { "0", 0 }, { "7", 7 }, { "-5", -5 }, { "123456789012345", 123456789012345 },
      { "-123456789012345", -123456789012345 },
      { "1234567890123456", "1234567890123456" }, { "-0", "-0" }, { "1.0", "1.0" },
      { "1e3", "1e3" }, { '"7"', '"7"' }, { "null", "null" },
    }
    for _, case in ipairs(cases) do
      local text, want = case[1], case[2]
      local kind, _, _, _, rawid = one('{"jsonrpc":"2.0","method":"m","id":' .. text .. '}')
      assert.are.same({"request", want}, {kind, rawid}, text)
      if type(want) == "number" and not is_jit then assert.are.equal("integer", math.type(rawid), text) end
      assert.are.equal('{"jsonrpc":"2.0","result":1,"id":' .. text .. '}\n', c:result(rawid, 1), text)
      if text ~= "null" then
        local rkind, match = one('{"jsonrpc":"2.0","result":1,"id":' .. text .. '}')
        assert.are.same({"result", want}, {rkind, match}, text)
      end
    end
    -- a broken response's id in an "invalid" event stays text, as every rawid there
    local ev = { one('{"jsonrpc":"2.0","result":1,"error":{"code":1,"message":"m"},"id":5}') }
    assert.are.same({"invalid", "5", false}, {ev[1], ev[4], ev[5]})
  end)

  it("normalizes response ids for matching", function()
    local _, rawid = one('{"jsonrpc":"2.0","result":1,"id":"\\u00e9"}')
    assert.are.equal(core.rawid("é"), rawid)
    _, rawid = one('{"jsonrpc":"2.0","result":1,"id":"é"}')
    assert.are.equal(core.rawid("é"), rawid)
  end)
end)

describe("codec: the mcp profile", function()
  local mcp = {profile = "mcp"}
  it("takes object params and string or integer ids", function()
    assert.are.equal('request tools/list {"_meta":{}} 1 1',
      show(pack(one('{"jsonrpc":"2.0","method":"tools/list","params":{"_meta":{}},"id":1}', mcp))))
    assert.are.equal('request m nil x "x"', show(pack(one('{"jsonrpc":"2.0","method":"m","id":"x"}', mcp))))
  end)
  local bad = {
    {'{"jsonrpc":"2.0","method":"m","params":[1],"id":1}', "1", "params must be an object"},
    {'{"jsonrpc":"2.0","method":"m","id":null}', "null", "id must not be null"},
    {'{"jsonrpc":"2.0","method":"m","id":1.5}', "null", "id must be a string or a 64-bit integer"},
    {'[{"jsonrpc":"2.0","method":"m","id":1}]', "null", "this profile has no batches"},
  }
  for i, case in ipairs(bad) do
    it("rejects " .. i .. ": " .. case[1], function()
      local kind, code, _, rawid, reply, detail = one(case[1], mcp)
      assert.are.same({"invalid", -32600, case[2], true, case[3]}, {kind, code, rawid, reply, detail})
    end)
  end
  it("refuses batches in the lsp profile too", function()
    local kind, code, msg = one('[{"jsonrpc":"2.0","method":"m","id":1}]', {profile = "lsp"})
    assert.are.same({"invalid", -32600, "Batches are not allowed"}, {kind, code, msg})
  end)
end)

describe("codec: batches", function()
  it("yields each member, invalid ones included", function()
    local kind, items = one('[{"jsonrpc":"2.0","method":"sum","params":[1,2,4],"id":"1"},'
      .. '{"jsonrpc":"2.0","method":"notify_hello","params":[7]},1,{"foo":"boo"},'
      .. '{"jsonrpc":"2.0","result":3,"id":9}]')
    assert.are.equal("batch", kind)
    assert.are.equal(5, #items)
    assert.are.equal('request sum [1,2,4] 1 "1"', show(items[1]))
    assert.are.equal("notification notify_hello [7]", show(items[2]))
    assert.are.equal("invalid -32600 Invalid Request null true a message must be an object", show(items[3]))
    assert.are.equal("invalid -32600 Invalid Request null true method is missing", show(items[4]))
    assert.are.equal("result 9 3 9", show(items[5]))
  end)

  it("answers a batch of invalid JSON with one parse error", function()
    local kind, code = one('[{"jsonrpc":"2.0","method":"sum","params":[1,2,4],"id":"1"},{"jsonrpc":"2.0","method"]')
    assert.are.same({"invalid", -32700}, {kind, code})
  end)

  it("limits the batch length", function()
    local kind, code, msg, _, _, detail = one("[1,2,3]", {max_batch = 2})
    assert.are.same({"invalid", -32600, "Batch too large", "more than 2 members"},
      {kind, code, msg, detail})
    assert.are.equal("batch", (one("[1,2]", {max_batch = 2})))
  end)
end)

describe("codec: newline framing", function()
  local stream = '{"jsonrpc":"2.0","method":"a","id":1}\r\n\n  \n'
    .. '{"jsonrpc":"2.0","method":"é","params":{"x":"y\\n"},"id":"k"}\n'
    .. '[{"jsonrpc":"2.0","method":"n"}]\n'
  local expected = {
    'request a nil 1 1',
    'request é {"x":"y\\n"} k "k"',
    'batch {notification n nil}',
  }

  local function render(evs)
    local out = {}
    for i, ev in ipairs(evs) do out[i] = show(ev) end
    return out
  end

  it("decodes many messages in one chunk", function()
    assert.are.same(expected, render(events(core.codec{}, stream)))
  end)

  it("decodes the same at every split point", function()
    for cut = 1, #stream - 1 do
      local c = core.codec{}
      local evs = events(c, stream:sub(1, cut))
      for _, ev in ipairs(events(c, stream:sub(cut + 1))) do evs[#evs + 1] = ev end
      assert.are.same(expected, render(evs), "split at " .. cut)
    end
  end)

  it("decodes the same fed one byte at a time", function()
    local c, evs = core.codec{}, {}
    for i = 1, #stream do
      for _, ev in ipairs(events(c, stream:sub(i, i))) do evs[#evs + 1] = ev end
    end
    assert.are.same(expected, render(evs))
  end)

  it("decodes a last line without a newline at the end of input", function()
    local c = core.codec{}
    assert.are.same({}, events(c, '{"jsonrpc":"2.0","method":"a"}'))
    assert.are.same({"notification a nil"}, render(events(c, nil, true)))
  end)

  it("drops an oversized line as it streams in and stays in sync", function()
    local c = core.codec{max_message_bytes = 64}
    local big = '{"jsonrpc":"2.0","method":"a","params":["' .. string.rep("x", 200) .. '"]}'
    local evs = events(c, big:sub(1, 100))
    assert.are.same({"invalid -32600 Message too large null true message larger than the limit of 64 bytes"},
      render(evs))
    evs = events(c, big:sub(101) .. '\n{"jsonrpc":"2.0","method":"b"}\n')
    assert.are.same({"notification b nil"}, render(evs))
    assert.are.equal("jrpc.Codec (ndjson, 0 bytes buffered)", tostring(c))
  end)
end)

describe("codec: Content-Length framing", function()
  local function frame(body) return "Content-Length: " .. #body .. "\r\n\r\n" .. body end
  local b1 = '{"jsonrpc":"2.0","method":"a","params":["é"],"id":1}'
  local b2 = '{"jsonrpc":"2.0","result":{"ok":true},"id":1}'
  local stream = frame(b1) .. "content-length:" .. #b2 .. "\nX-Other: 1\n\n" .. b2
  local expected = {'request a ["é"] 1 1', 'result 1 {"ok":true} 1'}

  local function decode_all(c, chunks)
    local out = {}
    for _, chunk in ipairs(chunks) do
      for _, ev in ipairs(events(c, chunk)) do out[#out + 1] = show(ev) end
    end
    return out
  end

  it("counts Content-Length in bytes and tolerates header case and LF endings", function()
    assert.are.same(expected, decode_all(core.codec{framing = "lsp"}, {stream}))
  end)

  it("decodes the same at every split point", function()
    for cut = 1, #stream - 1 do
      assert.are.same(expected,
        decode_all(core.codec{framing = "lsp"}, {stream:sub(1, cut), stream:sub(cut + 1)}),
        "split at " .. cut)
    end
  end)

  it("says how many body bytes it still wants", function()
    local c = core.codec{framing = "lsp"}
    c:feed("Content-Length: 10\r\n\r\n0123")
    assert.is_nil(c:next())
    assert.are.equal(6, c:want())
  end)

  it("skips log lines between messages and reports them without a reply", function()
    local out = decode_all(core.codec{framing = "lsp"}, {"[info] server started\n" .. frame(b1)})
    assert.are.same({"invalid -32700 Parse error null false skipped a line that is not a header (21 bytes)",
      expected[1]}, out)
  end)

  it("reports a header block without Content-Length and goes on", function()
    local out = decode_all(core.codec{framing = "lsp"}, {"Content-Type: x\r\n\r\n" .. frame(b1)})
    assert.are.same({"invalid -32700 Parse error null false header block without a valid Content-Length",
      expected[1]}, out)
  end)

  it("skips an oversized body without buffering it and stays in sync", function()
    local c = core.codec{framing = "lsp", max_message_bytes = 20}
    local out = decode_all(c, {"Content-Length: 100000\r\n\r\n", string.rep("x", 99990),
      string.rep("y", 10) .. frame('{"jsonrpc":"2.0","method":"a"}')})
    assert.are.same({"invalid -32600 Message too large null true message larger than the limit of 20 bytes",
      "invalid -32600 Message too large null true message larger than the limit of 20 bytes"}, out)
    c = core.codec{framing = "lsp", max_message_bytes = 40}
    out = decode_all(c, {"Content-Length: 100000\r\n\r\n", string.rep("x", 99990),
      string.rep("y", 10) .. frame('{"jsonrpc":"2.0","method":"a"}')})
    assert.are.same({"invalid -32600 Message too large null true message larger than the limit of 40 bytes",
      "notification a nil"}, out)
  end)

  it("finds the next header after a Content-Length that was too short", function()
    local c = core.codec{framing = "lsp"}
    local out = decode_all(c, {"Content-Length: 10\r\n\r\n" .. b1 .. frame(b2)})
    assert.are.same({"invalid -32700 Parse error null true expected ':' at byte 11",
      "invalid -32700 Parse error null false skipped " .. (#b1 - 10) .. " bytes before a header",
      expected[2]}, out)
  end)

  it("reports a truncated body at the end of input", function()
    local c = core.codec{framing = "lsp"}
    local out = decode_all(c, {"Content-Length: 50\r\n\r\n{\"jsonrpc\""})
    assert.are.same({}, out)
    assert.are.same({"invalid -32700 Parse error null false input ended inside a message body"},
      {show(events(c, nil, true)[1])})
  end)
end)

describe("codec: limits are per codec", function()
  it("two codecs with different limits do not affect each other", function()
    local small = core.codec{max_message_bytes = 50, max_depth = 3}
    local large = core.codec{}
    local msg = '{"jsonrpc":"2.0","method":"m","params":[[[["deep"]]]],"id":1}\n'
    local a = events(small, msg)
    local b = events(large, msg)
    local c = events(small, '{"jsonrpc":"2.0","method":"m","params":[[[1]]]}\n')
    assert.are.equal("Message too large", a[1][3])
    assert.are.equal("request", b[1][1])
    assert.are.equal("Nesting too deep", c[1][3])
  end)

  it("raises on bad or unknown options", function()
    assert.has_error(function() core.codec{framing = "xml"} end, "option 'framing': unknown value 'xml'")
    assert.has_error(function() core.codec{max_depth = 0} end)
    assert.has_error(function() core.codec{max_depth = 1001} end)
    assert.has_error(function() core.codec{max_message_bytes = 1.5} end)
    assert.has_error(function() core.codec{maxdepth = 3} end, "unknown codec option 'maxdepth'")
  end)
end)

describe("codec: writers", function()
  local c = core.codec{}
  local l = core.codec{framing = "lsp"}

  it("writes the four forms, framed", function()
    assert.are.equal('{"jsonrpc":"2.0","result":[1,2],"id":1}\n', c:result("1", {1, 2}))
    assert.are.equal('{"jsonrpc":"2.0","result":null,"id":"a"}\n', c:result('"a"', nil))
    assert.are.equal('{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found"},"id":null}\n',
      c:error("null", -32601, "Method not found"))
    assert.are.equal('{"jsonrpc":"2.0","error":{"code":1,"message":"m","data":{"k":"v"}},"id":2}\n',
      c:error("2", 1, "m", {k = "v"}))
    assert.are.equal('{"jsonrpc":"2.0","method":"sum","params":[1,2],"id":3}\n', c:request("3", "sum", {1, 2}))
    assert.are.equal('{"jsonrpc":"2.0","method":"ping","id":4}\n', c:request("4", "ping"))
    assert.are.equal('{"jsonrpc":"2.0","method":"note","params":{"a":1}}\n', c:notification("note", {a = 1}))
    local body = '{"jsonrpc":"2.0","result":"é","id":1}'
    assert.are.equal("Content-Length: " .. #body .. "\r\n\r\n" .. body, l:result("1", "é"))
  end)

  it("takes an integer id for its own text: the same bytes as its rawid", function()
    for _, id in ipairs({0, 7, -12, 123456789012, 9007199254740992}) do
      local raw = core.rawid(id)
      assert.are.equal(c:request(raw, "m", {1}), c:request(id, "m", {1}))
      assert.are.equal(c:result(raw, 1), c:result(id, 1))
      assert.are.equal(c:error(raw, 1, "x"), c:error(id, 1, "x"))
      assert.are.equal(l:request(raw, "m"), l:request(id, "m"))
    end
    assert.are.equal('{"jsonrpc":"2.0","method":"m","id":-12}\n', c:request(-12, "m"))
  end)

  it("writes integers digit for digit at every length (two digits per division)", function()
    local x = 1
    for _ = 1, 15 do  -- up to 10^15 - 1: integers on LuaJIT too (within 2^53)
      for _, v in ipairs({ x - 1, x, x + 1, -x, -(x - 1), 10 * x - 1 }) do
        local want = ("%d"):format(v)
        assert.are.equal('{"jsonrpc":"2.0","result":' .. want .. ',"id":' .. want .. '}', c:result(v, v, true))
        assert.are.equal(want, core.rawid(v))
      end
      x = x * 10
    end
    if math.maxinteger then  -- Lua 5.4: the 64-bit ends
      for _, v in ipairs({ math.maxinteger, math.mininteger }) do
        assert.are.equal(tostring(v), core.rawid(v))
        assert.are.equal('{"jsonrpc":"2.0","result":' .. tostring(v) .. ',"id":1}', c:result(1, v, true))
      end
    end
  end)

  it("writes bare JSON for batch members, and frames a batch", function()
    local parts = {c:result("1", 1, true), c:error("2", -32601, "Method not found", nil, true)}
    assert.are.equal('[{"jsonrpc":"2.0","result":1,"id":1},{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found"},"id":2}]\n',
      c:frame("[" .. table.concat(parts, ",") .. "]"))
  end)

  it("returns nil and a reason for values it cannot encode", function()
    assert.are.same({nil, "cannot encode NaN or Infinity"}, {c:result("1", 0 / 0)})
    assert.are.same({nil, "params must be a table, not a number"}, {c:request("1", "m", 5)})
    assert.are.same({nil, "cannot encode a function"}, {c:error("1", 1, "m", print)})
  end)

  it("raises for misuse", function()
    assert.has_error(function() c:result("1 2", 1) end)
    assert.has_error(function() c:result("{}", 1) end)
    assert.has_error(function() c:error("1", 1.5, "m") end)
    assert.has_error(function() c.result({}, "1", 1) end)
  end)
end)

describe("codec: next(chunk) feeds, then reads", function()
  local nd = '{"jsonrpc":"2.0","method":"a","id":1}\r\n\n'
    .. '{"jsonrpc":"2.0","method":"é","params":{"x":"y\\n"},"id":"k"}\n'
    .. '[{"jsonrpc":"2.0","method":"n"}]\n'
  local nd_expected = {
    'request a nil 1 1',
    'request é {"x":"y\\n"} k "k"',
    'batch {notification n nil}',
  }
  local body = '{"jsonrpc":"2.0","result":{"ok":true},"id":1}'
  local lsp = "Content-Length: " .. #body .. "\r\n\r\n" .. body .. "Content-Length: "
    .. #body .. "\r\n\r\n" .. body
  local lsp_expected = {'result 1 {"ok":true} 1', 'result 1 {"ok":true} 1'}

  -- each chunk goes in through next(chunk), then next() drains
  local function read_all(c, chunks, finish)
    local out = {}
    local function take(...)
      local ev = pack(...)
      if ev[1] == nil then return false end
      out[#out + 1] = show(ev)
      return true
    end
    for _, chunk in ipairs(chunks) do
      if take(c:next(chunk)) then
        while take(c:next()) do end
      end
    end
    if finish then
      c:finish()
      while take(c:next()) do end
    end
    return out
  end

  it("decodes the same as feed at every split point, in both framings", function()
    for _, case in ipairs{{"ndjson", nd, nd_expected}, {"lsp", lsp, lsp_expected}} do
      local framing, stream, expected = case[1], case[2], case[3]
      for cut = 1, #stream - 1 do
        assert.are.same(expected,
          read_all(core.codec{framing = framing}, {stream:sub(1, cut), stream:sub(cut + 1)}),
          framing .. " split at " .. cut)
      end
    end
  end)

  it("decodes the same fed one byte at a time", function()
    local chunks = {}
    for i = 1, #nd do chunks[i] = nd:sub(i, i) end
    assert.are.same(nd_expected, read_all(core.codec{}, chunks))
  end)

  it("returns the first message the chunk completes and keeps the rest", function()
    local c = core.codec{}
    assert.are.same({"request", "a", nil, 1, 1}, {c:next(nd)})
    assert.are.same("request", (c:next("")))
    assert.are.same("batch", (c:next()))
    assert.is_nil(c:next())
    assert.are.equal(0, select("#", c:next()))
  end)

  it("an empty chunk or none only reads", function()
    local c = core.codec{}
    assert.are.equal(0, select("#", c:next("")))
    assert.are.equal(0, select("#", c:next(nil)))
    assert.are.equal(0, select("#", c:next('{"jsonrpc":"2.0",')))
    assert.are.same({"notification", "b"}, {c:next('"method":"b"}\n')})
  end)

  it("works with finish: the last line without a newline comes out", function()
    local c = core.codec{}
    assert.are.same({}, read_all(c, {'{"jsonrpc":"2.0","met', 'hod":"a"}'}))
    assert.are.same({"notification a nil"}, read_all(c, {}, true))
    local l = core.codec{framing = "lsp"}
    assert.are.same({}, read_all(l, {"Content-Length: 99\r\n\r\n{"}, false))
    assert.are.same({"invalid -32700 Parse error null false input ended inside a message body"},
      read_all(l, {}, true))
  end)

  it("raises like feed after finish, and for a chunk that is not a string", function()
    local c = core.codec{}
    c:finish()
    assert.has_error(function() c:next("x") end, "codec: feed after finish")
    assert.has_error(function() c:feed("x") end, "codec: feed after finish")
    assert.are.equal(0, select("#", c:next()))
    assert.are.equal(0, select("#", c:next(nil)))
    assert.has_error(function() core.codec{}:next({}) end)
    assert.has_error(function() core.codec{}:feed({}) end)
  end)

  it("raises on a closed codec", function()
    local c = core.codec{}
    getmetatable(c).__gc(c)
    assert.has_error(function() c:next("x") end, "jrpc.Codec is closed")
  end)
end)

describe("codec: holding", function()
  it("appends every framed writer's message to the held bytes, in order; take empties them", function()
    for _, framing in ipairs({ "ndjson", "lsp" }) do
      local plain, c = core.codec{ framing = framing }, core.codec{ framing = framing }
      local want = plain:result(1, "a") .. plain:error(2, -32601, "nf") .. plain:request(3, "m", { 1 })
        .. plain:notification("n") .. "raw" .. plain:frame("[1]")
      c:hold(true)
      assert.same({ true, true, true, true }, { c:result(1, "a"), c:error(2, -32601, "nf"),
        c:request(3, "m", { 1 }), c:notification("n") })
      c:append("raw")
      assert.equal(true, c:frame("[1]"))
      -- unframed writers (batch members) still return their JSON, holding nothing
      assert.equal('{"jsonrpc":"2.0","result":5,"id":5}', c:result(5, 5, true))
      assert.equal(want, c:take(), framing)
      assert.equal(0, select("#", c:take()))
      c:hold(false)
      assert.equal(plain:result(1, "a"), c:result(1, "a"))
      assert.equal(0, select("#", c:take()))
    end
  end)

  it("takes more than fits on the C stack in one piece", function()
    local c = core.codec{}
    c:hold(true)
    local want = {}
    for i = 1, 500 do
      assert.equal(true, c:result(i, string.rep("x", 40)))
      want[i] = ('{"jsonrpc":"2.0","result":"%s","id":%d}\n'):format(string.rep("x", 40), i)
    end
    assert.equal(table.concat(want), c:take())
    assert.equal(0, select("#", c:take()))
  end)
end)

describe("codec: memory after a large message", function()
  local BIG = string.rep("x", 4 * 1024 * 1024)
  local function framed(framing, body)
    if framing == "lsp" then return ("Content-Length: %d\r\n\r\n%s"):format(#body, body) end
    return body .. "\n"
  end
  local function request(framing, id, text)
    return framed(framing, ('{"jsonrpc":"2.0","method":"echo","params":["%s"],"id":%d}'):format(text, id))
  end
  local function reply(framing, id, text)
    return framed(framing, ('{"jsonrpc":"2.0","result":"%s","id":%d}'):format(text, id))
  end
  -- one small round trip through every buffer: read a request, write a
  -- reply, hold one and take it
  local function small_round(c, framing, id)
    local kind, _, _, _, rawid = c:next(request(framing, id, "small"))
    assert.equal("request", kind)
    assert.is_string(c:result(rawid, "ok"))
    c:hold(true)
    assert.equal(true, c:result(rawid, "ok"))
    assert.is_string(c:take())
    c:hold(false)
  end

  it("goes back once small messages follow (input, output, held bytes), in both framings", function()
    for _, framing in ipairs({ "ndjson", "lsp" }) do
      local c = core.codec{ framing = framing }
      small_round(c, framing, 1)
      local base = c:memory()
      assert.is_true(base > 0 and base < 65536 * 4, framing .. " " .. base)
      -- each buffer in turn grows past 4 MiB, then a small round trip follows
      local kind, _, params = c:next(request(framing, 2, BIG))
      assert.equal("request", kind)
      assert.equal(#BIG, #params[1])
      assert.is_true(c:memory() > #BIG, framing)
      small_round(c, framing, 3)
      assert.equal(base, c:memory(), framing .. ": after a large request")
      assert.equal(reply(framing, 4, BIG), c:result(4, BIG))
      assert.is_true(c:memory() > #BIG)
      small_round(c, framing, 5)
      assert.equal(base, c:memory(), framing .. ": after a large reply")
      c:hold(true)
      for i = 1, 4 do assert.equal(true, c:result(i, BIG)) end
      assert.equal(reply(framing, 1, BIG) .. reply(framing, 2, BIG) .. reply(framing, 3, BIG)
        .. reply(framing, 4, BIG), c:take())
      c:hold(false)
      small_round(c, framing, 6)
      assert.equal(base, c:memory(), framing .. ": after large held bytes")
    end
  end)

  it("goes back down when a large message is followed by part of the next in the same read", function()
    local c = core.codec{}
    small_round(c, "ndjson", 1)
    local base = c:memory()
    local half = request("ndjson", 3, "small"):sub(1, 20)
    assert.equal("request", (c:next(request("ndjson", 2, BIG) .. half)))
    assert.is_nil((c:next()))
    local rest = request("ndjson", 3, "small"):sub(21)
    local kind, _, params = c:next(rest)
    assert.equal("request", kind)
    assert.same({ "small" }, params)
    assert.is_true(c:memory() <= base + 65536, tostring(c:memory()))
  end)
end)

describe("codec replies: the rawid argument", function()
  it("is one JSON scalar id text; anything else is misuse and raises", function()
    local c = core.codec{}
    for _, rawid in ipairs{ "0", "7", "123456789012345", "1234567890123456789", "-1", "1.5", '"x"', "null" } do
      assert.are.equal('{"jsonrpc":"2.0","result":true,"id":' .. rawid .. '}\n', c:result(rawid, true))
    end
    for _, rawid in ipairs{ "", "01", "1a", "a1", "abc", "1 ", '"x', "[1]", "+1" } do
      assert.has_error(function() c:result(rawid, true) end,
        "bad argument #1 to 'result' (not the JSON text of an id)")
    end
  end)
end)

describe("codec:split", function()
  -- every value split gives for `chunks` fed one at a time, then after finish
  local function splits(codec, chunks)
    local out = {}
    local function drain(chunk)
      local a, b = codec:split(chunk)
      while a ~= nil do
        out[#out + 1] = a == false and "skipped: " .. b or a
        a, b = codec:split()
      end
    end
    for _, chunk in ipairs(chunks) do drain(chunk) end
    codec:finish()
    drain()
    return out
  end

  it("gives each ndjson line as sent, however the bytes arrive", function()
    local input = 'starting up\r\n\n{"id":1,"result":[1,2]}\n  \n{"a":"\\n"}'
    local want = { "starting up", '{"id":1,"result":[1,2]}', '{"a":"\\n"}' }
    assert.are.same(want, splits(core.codec{}, { input }))
    local bytes = {}
    for i = 1, #input do bytes[i] = input:sub(i, i) end
    assert.are.same(want, splits(core.codec{}, bytes))
  end)

  it("gives each LSP body, and says what the framer skipped", function()
    local input = "Content-Length: 2\r\n\r\n{}log line\r\ncontent-length: 3\r\nX: y\r\n\r\n[1]"
      .. "X: only\r\n\r\nContent-Length: 40\r\n\r\n" .. ("x"):rep(40)
    assert.are.same({ "{}", "skipped: skipped a line that is not a header (8 bytes)", "[1]",
      "skipped: header block without a valid Content-Length",
      "skipped: message larger than the limit of 20 bytes" },
      splits(core.codec{ framing = "lsp", max_message_bytes = 20 }, { input }))
  end)

  it("says when an ndjson line is over the limit, then goes on", function()
    assert.are.same({ "skipped: message larger than the limit of 4 bytes", "[1]" },
      splits(core.codec{ max_message_bytes = 4 }, { "[1,2,3]\n", "[1]\n" }))
  end)
end)
