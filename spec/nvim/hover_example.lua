-- Run inside `nvim --clean --headless` with the repository and
-- examples/nvim on runtimepath, the C file open and the cursor on a call:
-- runs :JrpcHover (the example plugin) and writes what it showed.
local out = assert(os.getenv("JRPC_NVIM_OUT"), "JRPC_NVIM_OUT not set")
vim.cmd("runtime! plugin/jrpc_hover.lua")  -- --clean loads no plugins from rtp+= after startup
vim.fn.search("add_numbers(1")
vim.cmd("JrpcHover")
local hover = require "jrpc_hover"
local finished = vim.wait(20000, function() return hover.last ~= nil end, 10)
local floats = 0
for _, w in ipairs(vim.api.nvim_list_wins()) do
  if vim.api.nvim_win_get_config(w).relative ~= "" then floats = floats + 1 end
end
vim.fn.writefile({ "finished\t" .. tostring(finished), "floats\t" .. floats,
  "hover\t" .. tostring(hover.last):gsub("\n", "\\n") }, out)
vim.cmd(finished and "qall!" or "cquit! 3")
