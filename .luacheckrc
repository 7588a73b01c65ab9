-- luacheck configuration (`make lint` checks lua spec examples bench fuzz).
-- Code must run on both Lua 5.4 and LuaJIT: "max" is the union of their
-- standard globals, so feature tests like `table.unpack or unpack` pass.
std = "max"
read_globals = {"jit"}

-- Specs hold literal JSON test vectors on one line: no line-length limit.
files["spec"] = {std = "+busted", max_line_length = false}

-- Code that runs inside Neovim: its `vim` module is a global there.
-- vim.bo[buf].x = v sets a buffer option (the 0.7 to 0.11 way alike).
files["examples/nvim"] = {read_globals = {"vim"}, globals = {"vim.bo"}}
files["spec/nvim"] = {read_globals = {"vim"}}
files["bench/nvim_lsp_run.lua"] = {read_globals = {"vim"}}
