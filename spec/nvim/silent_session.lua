-- Run inside `nvim --clean --headless` with the repository on runtimepath
-- (see spec/nvim/headless_test.lua): an LSP session with clangd logging
-- verbosely on its stderr, spawned through jrpc.nvim with spawn's defaults
-- (no stderr option): the editor's terminal must stay silent, and what
-- clangd wrote is kept on the child. Writes "key<TAB>value" lines to
-- $JRPC_NVIM_OUT and quits.
local out = assert(os.getenv("JRPC_NVIM_OUT"), "JRPC_NVIM_OUT not set")
local source = assert(os.getenv("JRPC_NVIM_SOURCE"), "JRPC_NVIM_SOURCE not set")
local lines = {}
local function put(k, v) lines[#lines + 1] = k .. "\t" .. tostring(v):gsub("\n", "\\n") end

local jnvim = require "jrpc.nvim"
local jrpc = require "jrpc"
local done = false
coroutine.wrap(function()
  local ok, err = pcall(function()
    local diagnostics = 0
    local child = assert(jnvim.loop():spawn{ cmd = "clangd", args = { "--log=verbose" }, profile = "lsp",
      null = vim.NIL })
    local peer = child.peer
    peer:method("textDocument/publishDiagnostics", function() diagnostics = diagnostics + 1 end)
    local uri = vim.uri_from_fname(source)
    local init = assert(peer:request("initialize", { processId = vim.NIL, rootUri = vim.NIL,
      capabilities = jrpc.object() }, { timeout = 10 }))
    put("hover_provider", init.capabilities.hoverProvider)
    assert(peer:notify("initialized", jrpc.object()))
    local f = assert(io.open(source)); local text = f:read("a"); f:close()
    assert(peer:notify("textDocument/didOpen", { textDocument = { uri = uri, languageId = "c",
      version = 1, text = text } }))
    local col = text:match("int main[^\n]*"):find("add_numbers", 1, true) + 2
    local hover = assert(peer:request("textDocument/hover", { textDocument = { uri = uri },
      position = { line = 3, character = col } }, { timeout = 10 }))
    put("hover_first_line", hover.contents.value:match("^[^\n]*"))
    put("shutdown", peer:request("shutdown", nil, { timeout = 5 }) == vim.NIL)
    assert(peer:notify("exit", nil))
    local code, signal = child:shutdown()
    put("exit", code .. " " .. signal)
    put("diagnostics", diagnostics >= 1)
    local log = child:stderr_text()
    put("log_version", log:match("clangd version [%d.]+") or "")
    put("log_lines", select(2, log:gsub("\n", "")) >= 20)
  end)
  if not ok then put("error", err) end
  done = true
end)()

local finished = vim.wait(20000, function() return done end, 10)
put("finished", finished)
vim.fn.writefile(lines, out)
vim.cmd(finished and "qall!" or "cquit! 3")
