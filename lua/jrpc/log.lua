--- Where jrpc's messages go when the user gave no hook.
--
-- Outside Neovim: stderr, one line each. Inside Neovim (a `vim` global with
-- `vim.NIL`), stderr is the terminal the editor draws on, so a line there
-- garbles the screen: the message goes to `vim.notify` instead, through
-- `vim.schedule`, since faults are often reported from luv callbacks where
-- most editor API calls fail (E5560).
local M = {}

--- The Neovim `vim` module when running inside Neovim, else nil.
---@return table|nil
function M.nvim()
  local vim = rawget(_G, "vim")
  if type(vim) == "table" and vim.NIL ~= nil and type(vim.schedule) == "function" then
    return vim
  end
  return nil
end

--- Report `msg` (prefixed by `prefix`, e.g. "jrpc: ") where the user can see it.
---@param prefix string
---@param msg string
function M.report(prefix, msg)
  local vim = M.nvim()
  if vim == nil then
    io.stderr:write(prefix, msg, "\n")
    return
  end
  vim.schedule(function()
    vim.notify(prefix .. msg, vim.log and vim.log.levels.WARN or nil)
  end)
end

return M
