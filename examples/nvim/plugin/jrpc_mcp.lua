-- :JrpcMcpTools {cmd} and :JrpcMcpCall {tool} [{json}]: an MCP server's
-- tools, listed and called through jrpc (see lua/jrpc_mcp/init.lua).
vim.api.nvim_create_user_command("JrpcMcpTools", function(args)
  require("jrpc_mcp").tools(args.args)
end, { nargs = "+", complete = "shellcmd", desc = "start an MCP server (a shell command) and list its tools" })

vim.api.nvim_create_user_command("JrpcMcpCall", function(args)
  local tool, json = args.args:match("^(%S+)%s*(.*)$")
  require("jrpc_mcp").call(tool, json ~= "" and json or nil)
end, { nargs = "+", desc = "call a tool of the MCP server :JrpcMcpTools started; arguments as JSON" })

vim.api.nvim_create_autocmd("VimLeavePre", {
  -- only if it was used: loading jrpc on the way out would be waste
  callback = function() if package.loaded.jrpc_mcp then package.loaded.jrpc_mcp.stop() end end,
  desc = "close the MCP server jrpc_mcp started",
})
