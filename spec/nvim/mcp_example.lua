-- Run inside `nvim --clean --headless` with the repository and
-- examples/nvim on runtimepath (see spec/nvim/headless_test.lua): the
-- example plugin's :JrpcMcpTools against examples/mcp/everything_server.lua,
-- then :JrpcMcpCall three times, and a call before any server. Writes
-- "key<TAB>value" lines to $JRPC_NVIM_OUT and quits.
local out = assert(os.getenv("JRPC_NVIM_OUT"), "JRPC_NVIM_OUT not set")
local lines = {}
local function put(k, v) lines[#lines + 1] = k .. "\t" .. tostring(v):gsub("\n", "\\n") end

vim.cmd("runtime! plugin/jrpc_mcp.lua")  -- --clean loads no plugins from rtp+= after startup
local mcp = require "jrpc_mcp"

-- Run an Ex command and wait for what it shows; false when nothing came.
local function run(cmd)
  vim.cmd(cmd)
  return vim.wait(20000, function() return mcp.last ~= nil end, 10)
end

-- The scratch buffer, as text (its title, a blank line, then the lines).
local function buffer()
  local buf = vim.fn.bufnr("jrpc-mcp")
  return table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n")
end

local notified = {}
-- the errors the example reports, kept instead of shown
vim.notify = function(msg) notified[#notified + 1] = msg end  -- luacheck: ignore 122

local ok = run("JrpcMcpCall test_simple_text")
put("early", mcp.last.lines[1])
ok = ok and run("JrpcMcpTools lua5.4 examples/mcp/everything_server.lua")
put("tools_title", mcp.last.title)
put("tools_first", mcp.last.lines[1])
put("tools_count", #mcp.last.lines)
ok = ok and run("JrpcMcpCall test_simple_text")
put("simple", buffer())
ok = ok and run([[JrpcMcpCall test_echo {"message": "hi there"}]])
put("echo", buffer())
ok = ok and run("JrpcMcpCall test_multiple_content_types")
put("multiple", buffer())
ok = ok and run("JrpcMcpCall test_error_handling")
put("failed", buffer())
ok = ok and run("JrpcMcpCall nope")
put("unknown", mcp.last.lines[1])
put("windows", #vim.api.nvim_tabpage_list_wins(0))
put("notified", table.concat(notified, "|"))
put("finished", ok)
vim.fn.writefile(lines, out)
vim.cmd(ok and "qall!" or "cquit! 3")
