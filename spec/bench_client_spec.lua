-- spec/bench_client_spec.lua: the Node load generator of the stdio
-- benchmarks (node/bench_client.js) frames replies correctly, including
-- headers it does not use and replies split across reads, and fails
-- clearly on a wrong reply.

local source = debug.getinfo(1, "S").source
local root = source:match("^@(.-)spec[/\\]bench_client_spec%.lua$")
if root == nil or root == "" then root = "./" end

local CLIENT = root .. "node/bench_client.js"
local NULL_SERVER = root .. "build/bench/null_server"

local files = dofile(root .. "spec/files.lua")

-- Runs the client with `flags` against `cmd`; returns its exit code, its
-- key=value line as a table, and its stderr.
local function run(flags, cmd)
  return files.run_tool({ "node", CLIENT }, flags, cmd)
end

-- A Content-Length server in Lua: `reply(id, a, b)` gives the body, and
-- `write(header, body)` puts it on stdout.
local function lsp_server(reply, write)
  return { "lua5.4", "-e", [[
    local reply, write = ]] .. reply .. ", " .. write .. [[
    local n = 0
    while true do
      local len
      for line in io.lines() do
        if line == "\r" then break end
        len = tonumber(line:match("Content%-Length: (%d+)")) or len
      end
      if not len then return end
      local body = io.read(len)
      local a, b, id = body:match('"params":%[(%d+),(%d+)%],"id":(%d+)')
      n = n + 1
      write(n, reply(tonumber(id), tonumber(a), tonumber(b)))
      io.flush()
    end]] }
end

local RIGHT = [[function(id, a, b) return '{"jsonrpc":"2.0","result":' .. (a - b) .. ',"id":' .. id .. '}' end]]
local SHORT = { "--framing", "lsp", "--inflight", "4", "--warmup", "0.1", "--seconds", "0.3" }

describe("node/bench_client.js", function()
  it("measures the null server with Content-Length framing", function()
    local code, r, err = run(SHORT, { NULL_SERVER, "--framing", "lsp" })
    assert.are.equal(0, code, err)
    assert.are.equal("", err)
    assert.are.equal("lsp", r.framing)
    assert.are.equal(4, r.inflight)
    -- it measured something (how much depends on the machine's load: make bench)
    assert.is_true(r.rps > 0, "rps: " .. tostring(r.rps))
  end)

  it("reads a Content-Length after other headers, in any case, with a reply split across reads", function()
    -- the first ten replies leave in two writes, 20 ms apart
    local write = [[function(n, body)
      io.write("Content-Type: application/vscode-jsonrpc; charset=utf-8\r\ncontent-length:  ", #body, "\r\n\r\n")
      if n <= 10 then io.write(body:sub(1, 7)); io.flush(); os.execute("sleep 0.02"); body = body:sub(8) end
      io.write(body)
    end]]
    local code, r, err = run(SHORT, lsp_server(RIGHT, write))
    assert.are.equal(0, code, err)
    assert.are.equal("", err)
    assert.is_true(r.rps > 0, "rps: " .. tostring(r.rps))
  end)

  it("fails on a reply without Content-Length", function()
    local write = [[function(_, body) io.write("Content-Type: x\r\n\r\n", body) end]]
    local code, _, err = run(SHORT, lsp_server(RIGHT, write))
    assert.are.equal(1, code)
    assert.are.equal("bench_client: reply without Content-Length\n", err)
  end)

  it("fails on a wrong result", function()
    local wrong = [[function(id) return '{"jsonrpc":"2.0","result":0,"id":' .. id .. '}' end]]
    local write = [[function(_, body) io.write("Content-Length: ", #body, "\r\n\r\n", body) end]]
    local code, _, err = run(SHORT, lsp_server(wrong, write))
    assert.are.equal(1, code)
    -- id 1 is subtract [3, 1]
    assert.are.equal('bench_client: wrong result: {"jsonrpc":"2.0","result":0,"id":1}\n', err)
  end)
end)
