-- :JrpcEditorServe [port] and :JrpcEditorStop: the editor's buffers as MCP
-- tools on http://127.0.0.1:PORT/mcp (see lua/jrpc_editor/init.lua). Ex
-- commands are exposed only when g:jrpc_editor_ex_commands is true.
vim.api.nvim_create_user_command("JrpcEditorServe", function(args)
  local port = tonumber(args.args ~= "" and args.args or "0")
  if not port then
    vim.notify("jrpc_editor: the port must be a number", vim.log.levels.ERROR)
    return
  end
  local url, err = require("jrpc_editor").start{ port = port, ex_commands = vim.g.jrpc_editor_ex_commands == true }
  if url then
    vim.notify("jrpc_editor: MCP server on " .. url)
  else
    vim.notify("jrpc_editor: " .. err, vim.log.levels.ERROR)
  end
end, { nargs = "?", desc = "serve the editor's buffers as MCP tools on loopback" })

vim.api.nvim_create_user_command("JrpcEditorStop", function()
  require("jrpc_editor").stop()
end, { desc = "stop the MCP server :JrpcEditorServe started" })
