-- :JrpcHover [cmd]: hover at the cursor from clangd (or the given server),
-- through jrpc (see lua/jrpc_hover/init.lua).
vim.api.nvim_create_user_command("JrpcHover", function(args)
  require("jrpc_hover").hover{ cmd = args.args ~= "" and args.args or nil }
end, { nargs = "?", desc = "hover at the cursor, from a language server run through jrpc" })
