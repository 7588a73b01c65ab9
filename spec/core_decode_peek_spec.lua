-- jrpc.core: codec:decode (one whole message that its transport framed)
-- and core.peek (what a message is, from its top-level members, nothing
-- built).
local core = require "jrpc.core"

local function pack(...) return { n = select("#", ...), ... } end

describe("codec:decode", function()
  it("decodes one message whose JSON spans lines, as next decodes it on one line", function()
    local c = core.codec{ profile = "mcp" }
    assert.are.same(pack("request", "tools/list", { cursor = "x" }, 1, 1),
      pack(c:decode('{\n "jsonrpc": "2.0",\n "id": 1,\n "method": "tools/list",\n "params": {"cursor": "x"}\n}\n')))
    assert.are.same(pack(c:next('{"jsonrpc":"2.0","id":"a","method":"m","params":{"k":[1,2]}}\n')),
      pack(c:decode('{"jsonrpc":"2.0","id":"a","method":"m","params":{"k":[1,2]}}')))
  end)

  it("neither feeds nor reads the framer", function()
    local c = core.codec{}
    c:feed('{"jsonrpc":"2.0","method":"first"}\n{"jsonrpc"')
    assert.are.same(pack("notification", "second", nil), pack(c:decode('{"jsonrpc":"2.0","method":"second"}')))
    assert.are.same(pack("notification", "first", nil), pack(c:next()))
    assert.are.same(pack(), pack(c:next()))
    assert.are.same(pack("notification", "third", nil), pack(c:next(':"2.0","method":"third"}\n')))
  end)

  it("gives text that is not one JSON value the invalid event", function()
    local c = core.codec{}
    assert.are.same(pack("invalid", -32700, "Parse error", "null", true, "trailing characters at byte 32"),
      pack(c:decode('{"jsonrpc":"2.0","method":"x"} {}')))
    assert.are.same(pack("invalid", -32700, "Parse error", "null", true, "unexpected end of input at byte 1"),
      pack(c:decode("")))
  end)

  it("refuses text over max_message_bytes before decoding it, keeping the call's id and the size", function()
    local c = core.codec{ max_message_bytes = 64 }
    local text = '{"jsonrpc":"2.0","id":7,"method":"m","params":["' .. ("x"):rep(100) .. '"]}'
    assert.are.same(pack("invalid", -32600, "Message too large", "7", true,
      "message larger than the limit of 64 bytes"), pack(c:decode(text)))
    assert.are.same({ size = #text, limit = 64, kind = "call", id = "7" }, c:oversize())
  end)

  it("checks declared params as next does", function()
    local c = core.codec{}
    c:shapes{ add = { "a", "b", a = 1, b = 2, [0] = "II" } }
    assert.are.same(pack("checked", "add", { a = 1, b = 2 }, 5, 5),
      pack(c:decode('{"jsonrpc":"2.0","id":5,"method":"add","params":[1,2]}')))
  end)
end)

describe("core.peek", function()
  local c = core.codec{}
  local cases = {
    { c:request(7, "a/b", { x = { 1, 2 } }), "request", "7", "a/b" },
    { c:request('"r\\u0031"', "a/b", { x = 1 }), "request", '"r\\u0031"', "a/b" },
    { c:notification("note", { deep = { { {} } } }), "notification", nil, "note" },
    { c:result("12345678901234567890", { x = 1 }), "result", "12345678901234567890", nil },
    { c:error('"s"', -32602, "bad", { d = 1 }), "error", '"s"', nil },
    { '{"jsonrpc":"2.0","id":' .. ("1"):rep(200) .. ',"result":1}', "result", ("1"):rep(200), nil },
    { '{"method":"a\\/b","id":null}', "request", nil, nil },
    { '{"id":1.5,"result":1}', "result", nil, nil },
    { '{"id":{"a":1},"result":1}', "result", nil, nil },
    { '{"id":1,"id":2,"result":1}', "result", nil, nil },
    { '{"id":1,"result":1,"method":"x"}', nil, "1", "x" },
    { '{"id":1,"result":1,"params":{"a":1}}', "result", "1", nil },
    { '{"id":1,"params":[1]}', nil, "1", nil },
    { '{"jsonrpc":"2.0","\\u006d\\u0065thod":"m","par\\u00e9ms":{},"\\u0069d":0}', "request", "0", "m" },
    { '{"jsonrpc":"2.0","method":"m","i\\nd":0}', "notification", nil, "m" },
    { '[{"jsonrpc":"2.0","method":"x"}]', nil, nil, nil },
    { "junk", nil, nil, nil },
    { "", nil, nil, nil },
  }
  for i, case in ipairs(cases) do
    it(("tells case %d: %s"):format(i, case[1]:sub(1, 48)), function()
      assert.are.same(pack(case[2], case[3], case[4]), pack(core.peek(case[1])))
    end)
  end

  it("validates containers to max_depth and stops reading at one too deep", function()
    local deep = '{"jsonrpc":"2.0","params":' .. ("["):rep(5) .. ("]"):rep(5) .. ',"method":"m","id":1}'
    assert.are.same(pack("request", "1", "m"), pack(core.peek(deep, 5)))
    -- at depth 4 the params are not valid to it: the method and id after them are unread
    assert.are.same(pack("notification", nil, nil), pack(core.peek(deep, 4)))
    assert.has_error(function() core.peek(deep, 0) end, "bad argument #2 to 'peek' (max_depth must be from 1 to 1000)")
  end)
end)
