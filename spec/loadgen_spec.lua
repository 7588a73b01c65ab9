-- spec/loadgen_spec.lua: the benchmark's load generator (build/bench/loadgen,
-- built by make test) measures real servers over real pipes, and fails with
-- a clear message when the server dies, stalls or answers wrongly.

local source = debug.getinfo(1, "S").source
local root = source:match("^@(.-)spec[/\\]loadgen_spec%.lua$")
if root == nil or root == "" then root = "./" end

local LOADGEN = root .. "build/bench/loadgen"
local NULL_SERVER = root .. "build/bench/null_server"
local CJSON_SERVER = root .. "bench/servers/cjson_server.lua"

local files = dofile(root .. "spec/files.lua")

-- Runs loadgen with `flags` against the server `cmd` (argv lists); returns
-- its exit code, its stdout result as a table, and its stderr.
local function loadgen(flags, cmd)
  return files.run_tool({ LOADGEN }, flags, cmd)
end

local SHORT = {"--warmup", "0.1", "--seconds", "0.3"}

-- A server in Lua that answers every line with `reply(id, a, b)`.
local function fake_server(reply)
  return {"lua5.4", "-e", [[
    local reply = ]] .. reply .. [[
    for l in io.lines() do
      local a, b, id = l:match('"params":%[(%d+),(%d+)%],"id":(%d+)')
      io.write(reply(tonumber(id), tonumber(a), tonumber(b)), "\n")
      io.flush()
    end]]}
end

describe("loadgen", function()
  it("is built (make test and make bench build it)", function()
    local f = io.open(LOADGEN, "rb")
    assert.is_truthy(f, LOADGEN .. " is missing: run make bench-tools")
    f:close()
  end)

  it("measures the null server with ndjson framing", function()
    local code, r, err = loadgen(SHORT, {NULL_SERVER})
    assert.are.equal(0, code, err)
    assert.are.equal("", err)
    assert.are.equal("ndjson", r.framing)
    assert.are.equal(64, r.inflight)
    assert.is_true(r.replies > 1000, "replies: " .. tostring(r.replies))
    assert.is_true(r.seconds >= 0.3 and r.seconds < 1, "seconds: " .. tostring(r.seconds))
    assert.is_true(r.hwm_kib > 0 and r.hwm_kib < 65536, "hwm_kib: " .. tostring(r.hwm_kib))
  end)

  it("measures the null server with Content-Length framing", function()
    local flags = {"--framing", "lsp", "--inflight", "16", SHORT[1], SHORT[2], SHORT[3], SHORT[4]}
    local code, r, err = loadgen(flags, {NULL_SERVER, "--framing", "lsp"})
    assert.are.equal(0, code, err)
    assert.are.equal("lsp", r.framing)
    assert.are.equal(16, r.inflight)
    assert.is_true(r.replies > 1000, "replies: " .. tostring(r.replies))
  end)

  it("measures the null server with and without polling before it blocks", function()
    for _, us in ipairs({"0", "500"}) do
      local code, r, err = loadgen(SHORT, {NULL_SERVER, "--poll-us", us, "--framing", "ndjson"})
      assert.are.equal(0, code, err)
      assert.is_true(r.replies > 1000, us .. " µs, replies: " .. tostring(r.replies))
    end
    local code, _, err = files.run_tool({ NULL_SERVER }, {"--poll-us", "-1"}, {})
    assert.are.equal(1, code)
    assert.are.equal("null_server: usage: null_server [--framing ndjson|lsp] [--poll-us N]"
      .. " [--first-write N] [--max-write M]\n", err)
  end)

  it("measures the null server writing as it goes (--first-write, --max-write)", function()
    local code, r, err = loadgen(SHORT, {NULL_SERVER, "--first-write", "1", "--max-write", "4"})
    assert.are.equal(0, code, err)
    assert.is_true(r.replies > 1000, "replies: " .. tostring(r.replies))
    local input, want = {}, {}
    for id = 1, 9 do
      input[id] = ('{"jsonrpc":"2.0","method":"subtract","params":[%d,2],"id":%d}\n'):format(id + 2, id)
      want[id] = ('{"jsonrpc":"2.0","result":%d,"id":%d}\n'):format(id, id)
    end
    local function null_server(flags)  -- its stdout, stderr and exit code on the input above
      local path, err_path = os.tmpname(), os.tmpname()
      files.write(path, table.concat(input))
      local p = assert(io.popen(("%s %s <%s 2>%s; echo \"exit=$?\""):format(NULL_SERVER, flags, path, err_path)))
      local out = p:read("*a")
      p:close()
      os.remove(path)
      local exit = tonumber(out:match("exit=(%d+)\n$"))
      return out:gsub("exit=%d+\n$", ""), files.take(err_path), exit
    end
    assert.are.same({ table.concat(want), "", 0 }, { null_server("--first-write 2 --max-write 4") })
    assert.are.same({ table.concat(want), "", 0 }, { null_server("") })
    assert.are.same({ "", "null_server: usage: null_server [--framing ndjson|lsp] [--poll-us N]"
      .. " [--first-write N] [--max-write M]\n", 1 }, { null_server("--max-write 0") })
  end)

  -- a Lua server's rate depends on what else the machine runs (a loaded
  -- CI host gave 448 replies in 0.3 s), so this asserts a measurement, not
  -- a speed: some replies, and a rate that is replies over seconds
  it("measures the lua-cjson loop", function()
    local code, r, err = loadgen(SHORT, {"lua5.4", CJSON_SERVER})
    assert.are.equal(0, code, err)
    assert.are.equal("", err)
    assert.is_true(r.replies > 0, "replies: " .. tostring(r.replies))
    assert.is_true(r.seconds >= 0.3 and r.seconds < 1, "seconds: " .. tostring(r.seconds))
    assert.is_true(math.abs(r.rps - r.replies / r.seconds) <= 0.01 * r.rps + 1,
      ("rps %s for %s replies in %s s"):format(r.rps, r.replies, r.seconds))
  end)

  it("waits for all of --peak N replies and reports the server's peak RSS", function()
    local code, r, err = loadgen({"--peak", "3000"}, {"lua5.4", CJSON_SERVER})
    assert.are.equal(0, code, err)
    assert.are.equal(3000, r.inflight)
    assert.are.equal(3000, r.replies)
    assert.is_true(r.hwm_kib > 0, "hwm_kib: " .. tostring(r.hwm_kib))
  end)

  it("fails when the server dies", function()
    local code, r, err = loadgen(SHORT, {"sh", "-c", "head -c 100 >/dev/null; exit 3"})
    assert.are.equal(1, code)
    assert.is_nil(r.replies)
    assert.matches("^loadgen: server closed its std[a-z]+ %(exited with code 3%) "
      .. "with 64 requests in flight, after 0 replies\n$", err)
  end)

  it("fails when the server stalls", function()
    local code, _, err = loadgen({"--timeout", "0.3"}, {"sleep", "30"})
    assert.are.equal(1, code)
    assert.are.equal("loadgen: server stalled: no progress for 0.3 s with 64 requests "
      .. "in flight, after 0 replies\n", err)
  end)

  it("fails on a wrong result", function()
    local code, _, err = loadgen(SHORT, fake_server([[function(id)
      return '{"jsonrpc":"2.0","result":0,"id":' .. id .. '}' end]]))
    assert.are.equal(1, code)
    -- id 1 is subtract [3, 1]
    assert.are.equal("loadgen: wrong result for id 1: got 0, want 2\n", err)
  end)

  it("fails on a reply for an id not in flight", function()
    local code, _, err = loadgen(SHORT, fake_server([[function(id, a, b)
      return '{"jsonrpc":"2.0","result":' .. (a - b) .. ',"id":' .. (id + 1000) .. '}' end]]))
    assert.are.equal(1, code)
    assert.are.equal('loadgen: a reply for id 1001, which is not in flight: '
      .. '{"jsonrpc":"2.0","result":2,"id":1001}\n', err)
  end)

  it("fails on an error reply", function()
    local code, _, err = loadgen(SHORT, fake_server([[function(id)
      return '{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found"},"id":'
        .. id .. '}' end]]))
    assert.are.equal(1, code)
    assert.are.equal('loadgen: server answered id 1 with an error: {"jsonrpc":"2.0",'
      .. '"error":{"code":-32601,"message":"Method not found"},"id":1}\n', err)
  end)

  it("fails when the server exits non-zero at the end of its input", function()
    local code, _, err = loadgen(SHORT, {"sh", "-c", "lua5.4 " .. CJSON_SERVER .. "; exit 4"})
    assert.are.equal(1, code)
    assert.are.equal("loadgen: server exited with code 4 at the end of its input\n", err)
  end)
end)
