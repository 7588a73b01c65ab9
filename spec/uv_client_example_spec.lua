-- examples/client.lua end to end: a real spec server child, a server that
-- dies, one that hangs, one that writes garbage.
local S = dofile("spec/uv_support.lua")

local function client(args)
  local status, out, err, took = S.shell(S.INTERP .. " examples/client.lua " .. args)
  local lines = {}
  for line in out:gmatch("[^\n]+") do lines[#lines + 1] = line end
  return status, lines, err, took
end

-- How many lines end with `suffix`.
local function count(lines, suffix)
  local n = 0
  for _, line in ipairs(lines) do
    if line:sub(-#suffix) == suffix then n = n + 1 end
  end
  return n
end

describe("examples/client.lua", function()
  it("makes 1000 concurrent requests to the spec server, all ok", function()
    local status, lines, err = client("")
    assert.are.equal(0, status, err)
    assert.are.same({ "1000 ok, 0 failed" }, lines)
  end)

  it("does the same with LSP framing and other counts", function()
    local status, lines, err = client("--framing lsp --requests 300 --concurrency 7")
    assert.are.equal(0, status, err)
    assert.are.same({ "300 ok, 0 failed" }, lines)
  end)

  it("names the failures and ends at once when the server dies", function()
    local status, lines, _, took = client([[--cmd "read x; exit 3" --requests 200]])
    assert.are.equal(1, status)
    assert.are.equal("0 ok, 200 failed", lines[#lines])
    assert.are.equal(201, #lines)
    assert.are.equal(200, count(lines, " failed: server exited: process exited with code 3"))
    assert.is_true(took < 3, "took " .. took)
  end)

  it("ends after the timeout when the server hangs", function()
    local status, lines, _, took = client([[--cmd "exec sleep 30" --requests 100 --concurrency 10 --timeout 0.3]])
    assert.are.equal(1, status)
    assert.are.equal("0 ok, 100 failed", lines[#lines])
    assert.are.equal(10, count(lines, " failed: timeout"))
    assert.are.equal(90, count(lines, " failed: not sent: an earlier request timed out"))
    assert.is_true(took >= 0.3 and took < 3, "took " .. took)
  end)

  it("reports a wrong result and survives garbage", function()
    local status, lines, err = client([[--cmd "printf 'garbage\n{\"jsonrpc\":\"2.0\",\"result\":1,\"id\":1}\n'; exec sleep 30" --requests 3 --concurrency 1 --timeout 0.3]])
    assert.are.equal(1, status)
    assert.truthy(lines[1]:match("^request 1 failed: wrong result: %-?%d+ %- %-?%d+ gave 1$"), lines[1])
    assert.are.same({ "request 2 failed: timeout", "request 3 failed: not sent: an earlier request timed out",
      "0 ok, 3 failed" }, { lines[2], lines[3], lines[4] })
    assert.truthy(err:find("dropped input that is not a valid message: -32700 Parse error", 1, true), err)
  end)

  it("rejects bad arguments with status 2", function()
    for _, args in ipairs{ "--requests 0", "--framing xml", "--bogus 1", "--timeout" } do
      local status, lines = client(args)
      assert.are.equal(2, status, args)
      assert.are.same({}, lines)
    end
  end)
end)
