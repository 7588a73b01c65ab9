-- jrpc.resp (src/resp.c): RESP2 on Debian's hiredis. The reader's values
-- for every reply type, on every split of the stream; several replies in
-- one feed; protocol errors, which stay; the nesting and element bounds;
-- the bytes of commands; the errors raised for misuse.
local resp = require "jrpc.resp"

-- Every complete reply the reader has, in order (stops at nothing or an error).
local function drain(reader)
  local got = {}
  for v in reader.next, reader do got[#got + 1] = v end
  return got
end

-- What Lua calls the number's subtype: "integer" on Lua 5.4; LuaJIT has none.
local function number_kind(v)
  return math.type and math.type(v) or "number"
end

local INT = math.type and "integer" or "number"

describe("jrpc.resp.reader", function()
  -- one reply of each type, and arrays holding each
  local replies = {
    "+OK\r\n",
    "-ERR wrong type\r\n",
    ":42\r\n",
    ":-7\r\n",
    ":9007199254740991\r\n",
    "$5\r\nhello\r\n",
    "$0\r\n\r\n",
    "$4\r\na\r\nb\r\n",           -- a bulk string holds CR LF as bytes
    "$3\r\n\0\1\255\r\n",
    "$-1\r\n",
    "*-1\r\n",
    "*0\r\n",
    "*5\r\n+s\r\n-E x\r\n:1\r\n$1\r\nb\r\n$-1\r\n",
    "*2\r\n*2\r\n:1\r\n*1\r\n$1\r\nx\r\n*0\r\n",
  }
  local stream = table.concat(replies)
  local want = {
    "OK",
    { err = "ERR wrong type" },
    42,
    -7,
    9007199254740991,
    "hello",
    "",
    "a\r\nb",
    "\0\1\255",
    resp.NIL,
    resp.NIL,
    {},
    { "s", { err = "E x" }, 1, "b", resp.NIL },
    { { 1, { "x" } }, {} },
  }

  it("reads every reply type as its exact Lua value", function()
    local reader = resp.reader()
    assert.is_true(reader:feed(stream))
    local got = drain(reader)
    assert.are.same(want, got)
    assert.are.equal(#want, #got)
    assert.are.equal(resp.NIL, got[10])
    assert.are.equal(resp.NIL, got[13][5])
    assert.are.equal(INT, number_kind(got[3]))
    assert.are.equal(INT, number_kind(got[13][3]))
    assert.are.equal("resp.NIL", tostring(resp.NIL))
    -- nothing more: no value at all, not a nil
    assert.are.equal(0, select("#", reader:next()))
  end)

  it("reads the same on every split of the stream into two feeds", function()
    for cut = 0, #stream do
      local reader = resp.reader()
      assert.is_true(reader:feed(stream:sub(1, cut)))
      local got = drain(reader)
      assert.is_true(reader:feed(stream:sub(cut + 1)))
      for _, v in ipairs(drain(reader)) do got[#got + 1] = v end
      assert.are.same(want, got, "split at byte " .. cut)
    end
  end)

  it("reads the same fed one byte at a time, each reply once it is complete", function()
    local reader, got, complete_at = resp.reader(), {}, {}
    for i = 1, #stream do
      reader:feed(stream:sub(i, i))
      for _, v in ipairs(drain(reader)) do
        got[#got + 1] = v
        complete_at[#complete_at + 1] = i
      end
    end
    assert.are.same(want, got)
    -- each reply came out at its own last byte
    local ends, at = {}, 0
    for _, reply in ipairs(replies) do
      at = at + #reply
      ends[#ends + 1] = at
    end
    assert.are.same(ends, complete_at)
  end)

  it("gives several replies of one feed one per call, and nothing before a reply is complete", function()
    local reader = resp.reader()
    reader:feed("+a\r\n+b\r\n:3\r\n*2\r\n:1\r\n")
    assert.are.equal("a", reader:next())
    assert.are.equal("b", reader:next())
    assert.are.equal(3, reader:next())
    assert.are.equal(0, select("#", reader:next()))
    reader:feed(":2")
    assert.are.equal(0, select("#", reader:next()))
    reader:feed("\r\n+c\r\n")
    assert.are.same({ 1, 2 }, reader:next())
    assert.are.equal("c", reader:next())
    assert.are.equal(0, select("#", reader:next()))
  end)

  it("reads a large bulk string fed in pieces", function()
    local body = ("0123456789abcdef"):rep(65536)  -- 1 MiB
    local bytes = "$" .. #body .. "\r\n" .. body .. "\r\n+after\r\n"
    local reader = resp.reader()
    for i = 1, #bytes, 4093 do
      reader:feed(bytes:sub(i, i + 4092))
      if i + 4093 <= #bytes - 10 then assert.are.equal(0, select("#", reader:next())) end
    end
    assert.are.equal(body, reader:next())
    assert.are.equal("after", reader:next())
  end)

  it("uses the nil_value option for a nil bulk string or array", function()
    local marker = setmetatable({}, { __tostring = function() return "marker" end })
    local reader = resp.reader{ nil_value = marker }
    reader:feed("$-1\r\n*-1\r\n*2\r\n$-1\r\n:0\r\n")
    assert.are.same({ marker, marker, { marker, 0 } }, drain(reader))
    local falsy = resp.reader{ nil_value = false }
    falsy:feed("$-1\r\n")
    assert.are.same({ false }, { falsy:next() })
  end)

  it("reports a protocol error as nil, message, and stays failed", function()
    local reader = resp.reader()
    reader:feed("+OK\r\n?what\r\n+later\r\n")
    assert.are.equal("OK", reader:next())
    local msg = 'Protocol error, got "?" as reply type byte'
    assert.are.same({ nil, msg }, { reader:next() })
    assert.are.same({ nil, msg }, { reader:next() })
    assert.are.same({ nil, msg }, { reader:feed("+more\r\n") })
    assert.are.same({ nil, msg }, { reader:next() })
  end)

  it("reports hiredis's checks of lengths and integers", function()
    for _, case in ipairs{
      { ":12x\r\n", "Bad integer value" },
      { "$-2\r\n", "Bulk string length out of range" },
      { "$1x\r\n", "Bad bulk string length" },
      { "*-2\r\n", "Multi-bulk length out of range" },
      { "*3000000000\r\n", "Multi-bulk length out of range" },
    } do
      local reader = resp.reader()
      reader:feed(case[1])
      assert.are.same({ nil, case[2] }, { reader:next() }, case[1])
    end
  end)

  it("reads arrays nested 7 levels below the top one, and refuses an 8th (hiredis's limit)", function()
    local reader = resp.reader()
    reader:feed(("*1\r\n"):rep(8) .. ":5\r\n")
    assert.are.same({ { { { { { { { 5 } } } } } } } }, reader:next())
    reader = resp.reader()
    reader:feed(("*1\r\n"):rep(9) .. ":5\r\n")
    assert.are.same({ nil, "No support for nested multi bulk replies with depth > 7" }, { reader:next() })
  end)

  it("refuses a reply whose arrays declare more than max_elements elements in all", function()
    local reader = resp.reader{ max_elements = 4 }
    reader:feed("*2\r\n*2\r\n:1\r\n:2\r\n:3\r\n")   -- 4 declared: read
    assert.are.same({ { 1, 2 }, 3 }, reader:next())
    reader:feed("*4\r\n:1\r\n:2\r\n:3\r\n:4\r\n")   -- each reply counts anew
    assert.are.same({ 1, 2, 3, 4 }, reader:next())
    reader:feed("*2\r\n*3\r\n")                        -- 5, before any element came
    assert.are.same({ nil, "reply declares 5 array elements, over max_elements (4)" }, { reader:next() })
    assert.are.same({ nil, "reply declares 5 array elements, over max_elements (4)" }, { reader:feed(":1\r\n") })
    -- the default: 2^20
    reader = resp.reader()
    reader:feed("*1048577\r\n")
    assert.are.same({ nil, "reply declares 1048577 array elements, over max_elements (1048576)" },
      { reader:next() })
  end)

  it("frees readers left with a partial reply or a failure (run under valgrind)", function()
    for i = 1, 200 do
      local reader = resp.reader()
      reader:feed("*3\r\n$5\r\nhello\r\n*2\r\n:1\r\n" .. (i % 2 == 0 and "?" or ""))
      reader:next()
    end
    collectgarbage()
    collectgarbage()
  end)

  it("raises for bad options and a bad self", function()
    assert.has_error(function() resp.reader{ nil_valeu = 1 } end, "resp.reader: unknown option 'nil_valeu'")
    assert.has_error(function() resp.reader{ max_elements = 0 } end,
      "resp.reader: max_elements must be an integer from 1 to 2147483647")
    assert.has_error(function() resp.reader{ max_elements = 1.5 } end,
      "resp.reader: max_elements must be an integer from 1 to 2147483647")
    assert.has_error(function() resp.reader{ max_elements = "9" } end,
      "resp.reader: max_elements must be an integer from 1 to 2147483647")
    assert.has_error(function() resp.reader("x") end)
    local reader = resp.reader()
    assert.has_error(function() reader:feed({}) end)
    assert.has_error(function() reader.next({}) end)
    assert.has_error(function() reader.feed(io.stdout, "x") end)
  end)
end)

describe("jrpc.resp.command", function()
  it("formats an array of bulk strings, byte for byte", function()
    assert.are.equal("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nhello\r\n", resp.command{ "SET", "k", "hello" })
    assert.are.equal("*1\r\n$4\r\nPING\r\n", resp.command{ "PING" })
    assert.are.equal("*2\r\n$3\r\nGET\r\n$0\r\n\r\n", resp.command{ "GET", "" })
    -- binary arguments as they are: CR LF and NUL inside a bulk string
    assert.are.equal("*2\r\n$4\r\nECHO\r\n$5\r\na\r\n\0b\r\n", resp.command{ "ECHO", "a\r\n\0b" })
  end)

  it("writes integers as integers, other numbers in the fewest digits that read back", function()
    assert.are.equal("*7\r\n$6\r\nEXPIRE\r\n$2\r\n10\r\n$2\r\n-3\r\n$1\r\n0\r\n$2\r\n10\r\n"
      .. "$16\r\n9007199254740992\r\n$20\r\n-9223372036854775808\r\n",
      resp.command{ "EXPIRE", 10, -3, 0, 10.0, 2 ^ 53, -2 ^ 63 })
    assert.are.equal("*6\r\n$1\r\nX\r\n$3\r\n1.5\r\n$3\r\n0.1\r\n$19\r\n0.30000000000000004\r\n"
      .. "$3\r\ninf\r\n$4\r\n-inf\r\n",
      resp.command{ "X", 1.5, 0.1, 0.1 + 0.2, math.huge, -math.huge })
    assert.are.equal("*2\r\n$1\r\nX\r\n$21\r\n9.223372036854776e+18\r\n", resp.command{ "X", 2 ^ 63 })
  end)

  it("raises for anything but a non-empty array of strings and numbers", function()
    assert.has_error(function() resp.command{ "SET", {} } end,
      "resp.command: argument 2 is a table (strings and numbers only)")
    assert.has_error(function() resp.command{ "SET", "k", true } end,
      "resp.command: argument 3 is a boolean (strings and numbers only)")
    assert.has_error(function() resp.command{ "SET", resp.command } end,
      "resp.command: argument 2 is a function (strings and numbers only)")
    assert.has_error(function() resp.command{ "SET", 0 / 0 } end, "resp.command: argument 2 is NaN")
    assert.has_error(function() resp.command{} end, "resp.command: no arguments (the command name comes first)")
    assert.has_error(function() resp.command("PING") end)
    assert.has_error(function() resp.command() end)
  end)

  it("reads back through the reader as the server would see it", function()
    local reader = resp.reader()
    reader:feed(resp.command{ "HSET", "task:1", "status", "working", "ttl", 300 })
    assert.are.same({ "HSET", "task:1", "status", "working", "ttl", "300" }, reader:next())
  end)
end)
