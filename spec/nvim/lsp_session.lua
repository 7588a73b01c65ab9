-- Run inside `nvim --clean --headless` with the repository on runtimepath
-- (see spec/nvim/headless_test.lua): jrpc loads from runtimepath alone, then
-- an LSP session with clangd. Writes "key<TAB>value" lines to $JRPC_NVIM_OUT
-- and quits; exit status 0 when the session ran to its end.
local out = assert(os.getenv("JRPC_NVIM_OUT"), "JRPC_NVIM_OUT not set")
local source = assert(os.getenv("JRPC_NVIM_SOURCE"), "JRPC_NVIM_SOURCE not set")
local lines = {}
local function put(k, v) lines[#lines + 1] = k .. "\t" .. tostring(v):gsub("\n", "\\n") end

local jrpc = require "jrpc"
local jnvim = require "jrpc.nvim"
put("core", package.searchpath("jrpc.core", package.cpath) or "runtimepath")
put("encode_nil", jrpc.encode{ processId = vim.NIL })
-- a peer with null = vim.NIL decodes null as vim.NIL
local got
local p = jrpc.peer{ send = function() end, null = vim.NIL }
p:request("m", nil, nil, function(_, result) got = result end)
p:receive('{"jsonrpc":"2.0","result":{"a":null},"id":1}\n')
put("decoded_nil", got.a == vim.NIL)
put("vim_json", vim.json.encode(got))

local done = false
local loop = jnvim.loop()
coroutine.wrap(function()
  local ok, err = pcall(function()
    local child = assert(loop:spawn{ cmd = "clangd", args = { "--log=error" }, profile = "lsp",
      stderr = "pipe", null = vim.NIL })
    local peer = child.peer
    local uri = vim.uri_from_fname(source)
    local init = assert(peer:request("initialize", { processId = vim.NIL, rootUri = vim.NIL,
      capabilities = jrpc.object() }, { timeout = 10 }))
    put("hover_provider", init.capabilities.hoverProvider)
    assert(peer:notify("initialized", jrpc.object()))
    local f = assert(io.open(source)); local text = f:read("a"); f:close()
    assert(peer:notify("textDocument/didOpen", { textDocument = { uri = uri, languageId = "c",
      version = 1, text = text } }))
    -- line 3 (0-based) is `int main(void) { return add_numbers(1, 2) - 3; }`
    local col = text:match("int main[^\n]*"):find("add_numbers", 1, true) + 2
    local hover = assert(peer:request("textDocument/hover", { textDocument = { uri = uri },
      position = { line = 3, character = col } }, { timeout = 10 }))
    put("hover_kind", hover.contents.kind)
    put("hover", hover.contents.value)
    put("shutdown", peer:request("shutdown", nil, { timeout = 5 }) == vim.NIL)
    assert(peer:notify("exit", nil))
    local code, signal = child:shutdown()
    put("exit", code .. " " .. signal)
    put("dropped_notifications", peer:stats().dropped_notifications)
    put("in_fast_event", vim.in_fast_event())
    jnvim.main()  -- the editor API works after this
    put("after_main_fast", vim.in_fast_event())
    put("bufnr", vim.api.nvim_get_current_buf())
  end)
  if not ok then put("error", err) end
  done = true
end)()

local finished = vim.wait(20000, function() return done end, 10)
put("finished", finished)
vim.fn.writefile(lines, out)
vim.cmd(finished and "qall!" or "cquit! 3")
