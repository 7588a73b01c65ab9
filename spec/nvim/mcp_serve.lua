-- Run inside `nvim --clean --headless` with the repository and
-- examples/nvim on runtimepath (see spec/nvim/headless_test.lua): the
-- example plugin jrpc_editor serves buffer 1 (three known lines and a
-- diagnostic) through jrpc.nvim.serve_mcp. Writes "URL<TAB>BUFNR" to
-- $JRPC_NVIM_URL, stays up (vim.wait) until $JRPC_NVIM_DONE exists (the
-- MCP client is done), then writes "key<TAB>value" lines to $JRPC_NVIM_OUT
-- and quits.
local out = assert(os.getenv("JRPC_NVIM_OUT"), "JRPC_NVIM_OUT not set")
local url_file = assert(os.getenv("JRPC_NVIM_URL"), "JRPC_NVIM_URL not set")
local done_file = assert(os.getenv("JRPC_NVIM_DONE"), "JRPC_NVIM_DONE not set")
local lines = {}
local function put(k, v) lines[#lines + 1] = k .. "\t" .. tostring(v):gsub("\n", "\\n") end

local notified = {}
vim.notify = function(msg) notified[#notified + 1] = msg end  -- luacheck: ignore 122

vim.cmd("runtime! plugin/jrpc_editor.lua")  -- --clean loads no plugins from rtp+= after startup
local buf = vim.api.nvim_get_current_buf()
vim.api.nvim_buf_set_name(buf, "notes.txt")
vim.api.nvim_buf_set_lines(buf, 0, -1, false, { "first line", "hello world", "last line" })
local ns = vim.api.nvim_create_namespace("mcp_serve_spec")
vim.diagnostic.set(ns, buf, { { lnum = 2, col = 0, end_lnum = 2, end_col = 4, message = "a test diagnostic",
  severity = vim.diagnostic.severity.WARN, source = "spec" } })

local editor = require "jrpc_editor"
-- misuse is an error (through pcall: no position in the message)
local jnvim = require "jrpc.nvim"
local function misuse(server, opts) return select(2, pcall(jnvim.serve_mcp, server, opts)) end
put("bad_host", misuse(editor.server(), { host = "0.0.0.0" }))
put("bad_option", misuse(editor.server(), { prot = 1 }))
put("bad_server", misuse({}, {}))
local opt_in = {}
for _, t in ipairs(editor.server{ ex_commands = true }.registry.tools) do opt_in[#opt_in + 1] = t.name end
put("opt_in", table.concat(opt_in, " "))
vim.cmd("JrpcEditorServe")
local url = editor.handle and editor.handle.url
put("url", url)
local ok = url ~= nil
if ok then vim.fn.writefile({ url .. "\t" .. buf }, url_file) end
ok = ok and vim.wait(25000, function() return vim.fn.filereadable(done_file) == 1 end, 20)
put("final", table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n"))
put("modified", vim.bo[buf].modified)
vim.cmd("JrpcEditorStop")
put("stopped", editor.handle == nil)
put("notified", table.concat(notified, "|"))
put("finished", ok)
vim.fn.writefile(lines, out)
vim.cmd(ok and "qall!" or "cquit! 3")
