-- Run inside `nvim --clean --headless` (see spec/nvim/headless_test.lua):
-- the example plugin's :JrpcMcpTools with the URL of a server that needs
-- authorization ($JRPC_NVIM_MCP_URL: examples/mcp/oauth_server.lua behind
-- node/oauth_test_as.js), the URL to open "opened" by a fetch that follows
-- the authorization server's redirect to the plugin's listener; then
-- :JrpcMcpCall whoami on the token. Writes "key<TAB>value" lines to
-- $JRPC_NVIM_OUT and quits.
local out = assert(os.getenv("JRPC_NVIM_OUT"), "JRPC_NVIM_OUT not set")
local url = assert(os.getenv("JRPC_NVIM_MCP_URL"), "JRPC_NVIM_MCP_URL not set")
local lines = {}
local function put(k, v) lines[#lines + 1] = k .. "\t" .. tostring(v):gsub("\n", "\\n") end

vim.cmd("runtime! plugin/jrpc_mcp.lua")
local mcp = require "jrpc_mcp"

local opened = {}
mcp.open_url = function(u)
  opened[#opened + 1] = u
  vim.fn.jobstart({ "node", "-e", "fetch(process.argv[1], { redirect: 'manual' })"
    .. ".then((r) => fetch(r.headers.get('location'))).then((r) => process.exit(r.status === 200 ? 0 : 1))", u })
end

local function run(cmd)
  mcp.last = nil
  vim.cmd(cmd)
  return vim.wait(20000, function() return mcp.last ~= nil end, 10)
end

local ok = run("JrpcMcpTools " .. url)
put("tools_title", mcp.last and mcp.last.title)
put("tools", mcp.last and table.concat(mcp.last.lines, "|"))
ok = ok and run("JrpcMcpCall whoami")
put("whoami", mcp.last and table.concat(mcp.last.lines, "|"))
put("opened", #opened)
put("opened_url", (opened[1] or ""):match("^(http://127%.0%.0%.1:%d+/authorize%?response_type=code&)") or opened[1])
local stat = vim.loop.fs_stat(vim.fn.stdpath("data") .. "/jrpc_mcp_tokens.json")
put("store_mode", stat and ("%o"):format(stat.mode % 512))
mcp.stop()
put("finished", ok)
vim.fn.writefile(lines, out)
vim.cmd(ok and "qall!" or "cquit! 3")
