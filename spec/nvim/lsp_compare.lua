-- Run inside `nvim --clean --headless` (0.8 or later) with a file loaded
-- (see spec/nvim/headless_test.lua): vim.lsp.start with the server of
-- $JRPC_LSP_SERVER (a JSON list: program and arguments), through
-- `jrpc.nvim.lsp_cmd` when $JRPC_LSP_MODE is "jrpc", else Neovim's own
-- `cmd`, with the initializationOptions of $JRPC_LSP_INIT (JSON) if set.
-- Waits until the server lists the file's symbols, then asks what
-- most servers answer without settings and writes each
-- result as "key<TAB>JSON" (keys sorted) to $JRPC_NVIM_OUT, then stops it.
local out = assert(os.getenv("JRPC_NVIM_OUT"), "JRPC_NVIM_OUT not set")
local mode = assert(os.getenv("JRPC_LSP_MODE"), "JRPC_LSP_MODE not set")
local argv = vim.json.decode((assert(os.getenv("JRPC_LSP_SERVER"), "JRPC_LSP_SERVER not set")))
local lines = {}
local function put(k, v) lines[#lines + 1] = k .. "\t" .. tostring(v):gsub("\n", "\\n") end
local notified = {}
vim.notify = function(msg) notified[#notified + 1] = msg end  -- luacheck: ignore 122

local json = dofile(vim.fn.getcwd() .. "/spec/nvim/sorted_json.lua")

local function wait(ms, cond) return vim.wait(ms, cond, 10) end
local bufnr = vim.api.nvim_get_current_buf()
local doc = { uri = vim.uri_from_bufnr(bufnr) }
-- the position hover and documentHighlight ask about: $JRPC_LSP_POS, "line,character"
local line, character = (os.getenv("JRPC_LSP_POS") or "1,4"):match("^(%d+),(%d+)$")
local at = { line = tonumber(line), character = tonumber(character) }
-- the server's initializationOptions: $JRPC_LSP_INIT, a JSON object (none: nil)
local init_options = os.getenv("JRPC_LSP_INIT") and vim.json.decode(os.getenv("JRPC_LSP_INIT")) or nil

local ok, err = pcall(function()
  local exited
  local id = assert(vim.lsp.start({ name = "compare-" .. mode,
    cmd = mode == "jrpc" and require("jrpc.nvim").lsp_cmd(argv) or argv,
    root_dir = vim.fs.dirname(vim.api.nvim_buf_get_name(bufnr)),
    init_options = init_options,
    on_exit = function(code, signal) exited = code .. " " .. signal end }))
  local client = vim.lsp.get_client_by_id(id)
  assert(wait(15000, function() return client.initialized end), "not initialized")
  -- servers that analyse a file in the background answer [] until done
  local symbols = {}
  local deadline = vim.loop.now() + 10000
  while #symbols == 0 and vim.loop.now() < deadline do
    local got
    client.request("textDocument/documentSymbol", { textDocument = doc }, function(_, res) got = res or {} end, bufnr)
    wait(5000, function() return got ~= nil end)
    symbols = got or {}
    if #symbols == 0 then wait(100, function() return false end) end
  end
  local requests = {
    { "textDocument/documentSymbol", { textDocument = doc } },
    { "textDocument/foldingRange", { textDocument = doc } },
    { "textDocument/formatting", { textDocument = doc, options = { tabSize = 4, insertSpaces = true } } },
    { "textDocument/hover", { textDocument = doc, position = at } },
    { "textDocument/documentHighlight", { textDocument = doc, position = at } },
    { "textDocument/selectionRange", { textDocument = doc, positions = { { line = 2, character = 5 } } } },
  }
  for _, r in ipairs(requests) do
    local got
    assert(client.request(r[1], r[2], function(e, res) got = { e, res } end, bufnr), r[1])
    assert(wait(15000, function() return got ~= nil end), r[1] .. ": no answer")
    put(r[1], got[1] and ("error " .. got[1].code .. " " .. got[1].message) or json(got[2]))
  end
  client.stop()
  assert(wait(5000, function() return exited ~= nil end), "no exit")
  put("exit", exited)
end)
if not ok then put("error", err) end
put("notified", table.concat(notified, "|"))
vim.fn.writefile(lines, out)
vim.cmd(ok and "qall!" or "cquit! 3")
