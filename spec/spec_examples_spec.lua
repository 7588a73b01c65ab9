-- Every example of the JSON-RPC 2.0 specification, section 7, replayed
-- (a) through examples/spec_server.lua as a child process, under Lua 5.4 and
-- LuaJIT, with ndjson and LSP framing, and (b) in-process through a peer.
local jrpc = require "jrpc"

-- Each case: the message as sent (one line) and the replies expected.
-- A reply given as a string is compared byte for byte (its member order is
-- ours); a batch reply is a list of members, compared as decoded tables
-- ordered by id, since a batch may be answered in any order.
local function err(code, message, id)
  return '{"jsonrpc":"2.0","error":{"code":' .. code .. ',"message":"' .. message .. '"},"id":' .. id .. '}'
end
local INVALID = err(-32600, "Invalid Request", "null")

local cases = {
  { "positional params",
    '{"jsonrpc": "2.0", "method": "subtract", "params": [42, 23], "id": 1}',
    '{"jsonrpc":"2.0","result":19,"id":1}' },
  { "positional params, swapped",
    '{"jsonrpc": "2.0", "method": "subtract", "params": [23, 42], "id": 2}',
    '{"jsonrpc":"2.0","result":-19,"id":2}' },
  { "named params",
    '{"jsonrpc": "2.0", "method": "subtract", "params": {"subtrahend": 23, "minuend": 42}, "id": 3}',
    '{"jsonrpc":"2.0","result":19,"id":3}' },
  { "named params, reordered",
    '{"jsonrpc": "2.0", "method": "subtract", "params": {"minuend": 42, "subtrahend": 23}, "id": 4}',
    '{"jsonrpc":"2.0","result":19,"id":4}' },
  { "notification",
    '{"jsonrpc": "2.0", "method": "update", "params": [1,2,3,4,5]}' },
  { "notification of an unknown method",
    '{"jsonrpc": "2.0", "method": "foobar"}' },
  { "non-existent method",
    '{"jsonrpc": "2.0", "method": "foobar", "id": "1"}',
    err(-32601, "Method not found", '"1"') },
  { "invalid JSON",
    '{"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]',
    err(-32700, "Parse error", "null") },
  { "invalid Request object",
    '{"jsonrpc": "2.0", "method": 1, "params": "bar"}',
    INVALID },
  { "batch, invalid JSON",
    '[ {"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"}, {"jsonrpc": "2.0", "method" ]',
    err(-32700, "Parse error", "null") },
  { "empty array",
    '[]',
    INVALID },
  { "invalid batch, not empty",
    '[1]',
    { INVALID } },
  { "invalid batch",
    '[1,2,3]',
    { INVALID, INVALID, INVALID } },
  { "mixed batch",
    '[ {"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},'
      .. ' {"jsonrpc": "2.0", "method": "notify_hello", "params": [7]},'
      .. ' {"jsonrpc": "2.0", "method": "subtract", "params": [42,23], "id": "2"},'
      .. ' {"foo": "boo"},'
      .. ' {"jsonrpc": "2.0", "method": "foo.get", "params": {"name": "myself"}, "id": "5"},'
      .. ' {"jsonrpc": "2.0", "method": "get_data", "id": "9"} ]',
    { '{"jsonrpc": "2.0", "result": 7, "id": "1"}',
      '{"jsonrpc": "2.0", "result": 19, "id": "2"}',
      '{"jsonrpc": "2.0", "error": {"code": -32600, "message": "Invalid Request"}, "id": null}',
      '{"jsonrpc": "2.0", "error": {"code": -32601, "message": "Method not found"}, "id": "5"}',
      '{"jsonrpc": "2.0", "result": ["hello", 5], "id": "9"}' } },
  { "batch of notifications only",
    '[ {"jsonrpc": "2.0", "method": "notify_sum", "params": [1,2,4]},'
      .. ' {"jsonrpc": "2.0", "method": "notify_hello", "params": [7]} ]' },
  -- beyond section 7: the example server's other behaviours
  { "sum of non-numbers",
    '{"jsonrpc": "2.0", "method": "sum", "params": [1, "2"], "id": 10}',
    err(-32602, "Invalid params: item 2 is not a number", 10) },
  { "subtract with too many params",
    '{"jsonrpc": "2.0", "method": "subtract", "params": [1, 2, 3], "id": 11}',
    err(-32602, "Invalid params: expected at most 2 params, got 3", 11) },
  { "a handler that fails",
    '{"jsonrpc": "2.0", "method": "fail", "id": 12}',
    err(-32603, "Internal error", 12) },
}

-- Batch members sorted by id (null first), decoded for comparison.
local function sorted_members(list)
  local members = {}
  for i, m in ipairs(list) do
    members[i] = type(m) == "string" and assert(jrpc.decode(m)) or m
  end
  table.sort(members, function(x, y)
    local a = x.id == jrpc.null and "" or tostring(x.id)
    local b = y.id == jrpc.null and "" or tostring(y.id)
    return a < b
  end)
  return members
end

local function assert_reply(case, got)
  local name, expected = case[1], case[3]
  if type(expected) == "string" then
    assert.are.equal(expected, got, name)
  else
    local batch = assert(jrpc.decode(got), name)
    assert.are.equal(#expected, #batch, name)
    assert.are.same(sorted_members(expected), sorted_members(batch), name)
  end
end

local function frame(json)
  return "Content-Length: " .. #json .. "\r\n\r\n" .. json
end

-- Split a server's output into messages.
local function split_ndjson(out)
  local msgs = {}
  for m in out:gmatch("([^\n]*)\n") do msgs[#msgs + 1] = m end
  assert.are.equal(out, #msgs == 0 and "" or table.concat(msgs, "\n") .. "\n", "every message ends with a newline")
  return msgs
end

local function split_lsp(out)
  local msgs, pos = {}, 1
  while pos <= #out do
    local len, body = out:match("^Content%-Length: (%d+)\r\n\r\n()", pos)
    assert(len, "bad frame at byte " .. pos .. ": " .. out:sub(pos, pos + 40))
    msgs[#msgs + 1] = out:sub(body, body + tonumber(len) - 1)
    pos = body + tonumber(len)
  end
  return msgs
end

local files = dofile("spec/files.lua")
local slurp, write_file = files.read, files.write

-- Run the example server; returns exit status, stdout, stderr.
local function run_server(interpreter, args, input)
  local inp, out, errp = os.tmpname(), os.tmpname(), os.tmpname()
  write_file(inp, input)
  local cmd = string.format("%s examples/spec_server.lua %s < %s > %s 2> %s; echo $?",
    interpreter, args, inp, out, errp)
  local p = assert(io.popen(cmd))
  local status = tonumber(p:read("*a"))
  p:close()
  local stdout, stderr = slurp(out), slurp(errp)
  os.remove(inp); os.remove(out); os.remove(errp)
  return status, stdout, stderr
end

local function expected_replies()
  local list = {}
  for _, case in ipairs(cases) do
    if case[3] then list[#list + 1] = case end
  end
  return list
end

for _, interpreter in ipairs{ "lua5.4", "luajit" } do
  for _, framing in ipairs{ "ndjson", "lsp" } do
    describe("spec examples through " .. interpreter .. " examples/spec_server.lua --framing " .. framing, function()
      it("answer every request exactly, in order, and exit 0", function()
        local input = {}
        for i, case in ipairs(cases) do
          input[i] = framing == "lsp" and frame(case[2]) or case[2] .. "\n"
        end
        local status, stdout, stderr = run_server(interpreter, "--framing " .. framing, table.concat(input))
        assert.are.equal(0, status, stderr)
        local replies = framing == "lsp" and split_lsp(stdout) or split_ndjson(stdout)
        local expected = expected_replies()
        assert.are.equal(#expected, #replies, stdout)
        for i, case in ipairs(expected) do assert_reply(case, replies[i]) end
        assert.truthy(stderr:find('method "fail" failed', 1, true), stderr)
      end)
    end)
  end
end

describe("spec examples in-process through jrpc.peer", function()
  local install = assert(loadfile("examples/spec_server.lua"))("--module")

  for _, case in ipairs(cases) do
    it(case[1], function()
      local out = {}
      local peer = jrpc.peer{ send = function(b) out[#out + 1] = b end, on_error = function() end }
      install(peer)
      peer:receive(case[2] .. "\n")
      if case[3] == nil then
        assert.are.same({}, out)
      else
        assert.are.equal(1, #out)
        assert.are.equal("\n", out[1]:sub(-1))
        assert_reply(case, out[1]:sub(1, -2))
      end
    end)
  end
end)

describe("the example server", function()
  it("survives hostile input and still answers after it", function()
    local junk = {
      "\0\1\2", "{", "]", '{"jsonrpc":"2.0","method":"sum","params":[1e999],"id":1}',
      string.rep("[", 5000), '"\\ud800"', '{"jsonrpc":"2.0","method":"subtract","params":{"x":1},"id":{}}',
      "\255\254", '{"jsonrpc":"2.0","method":"subtract","params":[1,2],"id":"last"}',
    }
    local status, stdout = run_server("lua5.4", "", table.concat(junk, "\n") .. "\n")
    assert.are.equal(0, status)
    local replies = split_ndjson(stdout)
    assert.are.equal('{"jsonrpc":"2.0","result":-1,"id":"last"}', replies[#replies])
  end)

  it("serves profile mcp (no batches)", function()
    local status, stdout = run_server("lua5.4", "--profile mcp",
      '{"jsonrpc":"2.0","method":"subtract","params":{"minuend":5,"subtrahend":3,"_meta":{}},"id":1}\n'
      .. '[{"jsonrpc":"2.0","method":"get_data","id":2}]\n')
    assert.are.equal(0, status)
    assert.are.same({ '{"jsonrpc":"2.0","result":2,"id":1}',
      err(-32600, "Batches are not allowed", "null") }, split_ndjson(stdout))
  end)

  it("rejects unknown arguments with status 2", function()
    for _, args in ipairs{ "--bogus", "--framing", "--profile nope" } do
      local status, stdout = run_server("lua5.4", args, "")
      assert.are.equal(2, status, args)
      assert.are.equal("", stdout)
    end
  end)
end)
