-- Run inside `nvim --clean --headless` (0.8 or later) by bench/nvim_lsp.lua:
-- the same hover requests through Neovim's own RPC client
-- (`vim.lsp.rpc.start`) and through `jrpc.nvim.lsp_cmd`, each against a
-- fresh bench/servers/lsp_stub.lua, in rounds whose order alternates.
-- Per round and client: N requests pipelined (all sent, then every
-- callback awaited), then SEQ requests one at a time; the rate of each,
-- and the editor's CPU time per request (getrusage, user + system).
-- Writes "round<TAB>client<TAB>measure<TAB>value" lines to $JRPC_NVIM_OUT.
local out = assert(os.getenv("JRPC_NVIM_OUT"), "JRPC_NVIM_OUT not set")
local N = tonumber(os.getenv("JRPC_BENCH_N")) or 20000
local SEQ = tonumber(os.getenv("JRPC_BENCH_SEQ")) or 2000
local ROUNDS = tonumber(os.getenv("JRPC_BENCH_ROUNDS")) or 5
local WARM = 1000
local uv = vim.uv or vim.loop
local root = vim.fn.getcwd()
local SERVER = { os.getenv("JRPC_BENCH_LUA") or "luajit", root .. "/bench/servers/lsp_stub.lua" }

local lines = {}
local function put(...) lines[#lines + 1] = table.concat({ ... }, "\t") end

local PARAMS = { textDocument = { uri = "file:///tmp/hello.c" }, position = { line = 3, character = 24 } }
local EXPECTED = "static int add_numbers(int a, int b)"

local CLIENTS = {
  ["vim.lsp.rpc"] = function(dispatchers) return vim.lsp.rpc.start(SERVER, dispatchers) end,
  ["lsp_cmd"] = function(dispatchers) return require("jrpc.nvim").lsp_cmd(SERVER)(dispatchers) end,
}

local function cpu_seconds()
  local r = uv.getrusage()
  return r.utime.sec + r.utime.usec / 1e6 + r.stime.sec + r.stime.usec / 1e6
end

-- `n` requests, `depth` at a time at most (n: all pipelined; 1: one by one).
-- Returns requests per second, editor CPU µs per request, wrong answers.
local function run(rpc, n, depth)
  local sent, got, bad = 0, 0, 0
  local function callback(err, res)
    got = got + 1
    if err ~= nil or type(res) ~= "table" or not res.contents.value:find(EXPECTED, 1, true) then bad = bad + 1 end
  end
  collectgarbage()
  local c0, t0 = cpu_seconds(), uv.hrtime()
  while got < n do
    while sent < n and sent - got < depth do
      sent = sent + 1
      assert(rpc.request("textDocument/hover", PARAMS, callback), "request not sent")
    end
    local want = math.min(n, got + 1)
    assert(vim.wait(60000, function() return got >= want end, 1), "no answer")
  end
  local seconds, cpu = (uv.hrtime() - t0) / 1e9, cpu_seconds() - c0
  return n / seconds, cpu / n * 1e6, bad
end

local function session(name, round)
  local exited
  local rpc = CLIENTS[name]({ on_exit = function(code, signal) exited = code .. " " .. signal end })
  run(rpc, WARM, WARM)
  local rate, cpu, bad = run(rpc, N, N)
  put(round, name, "pipelined_rate", ("%.0f"):format(rate))
  put(round, name, "pipelined_cpu_us", ("%.2f"):format(cpu))
  local srate, scpu, sbad = run(rpc, SEQ, 1)
  put(round, name, "sequential_rate", ("%.0f"):format(srate))
  put(round, name, "sequential_cpu_us", ("%.2f"):format(scpu))
  put(round, name, "wrong", bad + sbad)
  local down
  rpc.request("shutdown", nil, function() down = true end)
  assert(vim.wait(10000, function() return down end, 1), "no shutdown answer")
  rpc.notify("exit", nil)
  assert(vim.wait(10000, function() return exited ~= nil end, 1), "the stub did not exit")
  put(round, name, "exit", exited)
end

local ok, err = pcall(function()
  put("0", "nvim", "version", tostring(vim.version()))
  put("0", "nvim", "jit", jit and jit.version or _VERSION)
  for round = 1, ROUNDS do
    local order = round % 2 == 1 and { "vim.lsp.rpc", "lsp_cmd" } or { "lsp_cmd", "vim.lsp.rpc" }
    for _, name in ipairs(order) do session(name, tostring(round)) end
  end
end)
if not ok then put("0", "error", "error", tostring(err):gsub("[\t\n]", " ")) end
vim.fn.writefile(lines, out)
vim.cmd(ok and "qall!" or "cquit! 3")
