--- jrpc_hover: hover from a language server, with jrpc in Neovim.
--
-- :JrpcHover starts clangd (or opts.cmd) as a child process, initializes
-- it, opens the current buffer, asks for hover at the cursor, shows the
-- answer in a floating window, and shuts the server down. A whole LSP
-- client in one coroutine: each request waits without blocking the editor.
local jnvim = require "jrpc.nvim"

local M = {}

--- The last hover text shown (for tests), or nil.
M.last = nil

local function hover_text(contents)
  if type(contents) == "table" and type(contents.value) == "string" then return contents.value end
  if type(contents) == "string" then return contents end
  return vim.inspect(contents)
end

--- Hover at the cursor of the current buffer.
---@param opts? {cmd?: string, args?: string[]}
function M.hover(opts)
  opts = opts or {}
  -- editor state is read now, on the main loop
  local buf = vim.api.nvim_get_current_buf()
  local path = vim.api.nvim_buf_get_name(buf)
  local uri = vim.uri_from_fname(path)
  local filetype = vim.bo[buf].filetype
  local root = vim.uri_from_fname(vim.fn.getcwd())
  local text = table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n") .. "\n"
  local pos = vim.api.nvim_win_get_cursor(0)   -- {row (1-based), col (0-based bytes)}
  local loop = jnvim.loop()   -- its peers follow Neovim's conventions: null is vim.NIL
  coroutine.wrap(function()
    local child, err = loop:spawn{ cmd = opts.cmd or "clangd", args = opts.args or { "--log=error" },
      profile = "lsp", stderr = "ignore" }
    if not child then
      jnvim.main()
      return vim.notify("jrpc_hover: " .. err.message, vim.log.levels.ERROR)
    end
    local peer = child.peer
    local _, ierr = peer:request("initialize", { processId = vim.NIL,
      rootUri = root, capabilities = vim.empty_dict() }, { timeout = 10 })
    local result, herr
    if not ierr then
      peer:notify("initialized", vim.empty_dict())
      peer:notify("textDocument/didOpen", { textDocument = { uri = uri, languageId = filetype,
        version = 1, text = text } })
      result, herr = peer:request("textDocument/hover", { textDocument = { uri = uri },
        position = { line = pos[1] - 1, character = pos[2] } }, { timeout = 10 })
      peer:request("shutdown", nil, { timeout = 5 })
      peer:notify("exit", nil)
    end
    child:shutdown()
    -- we resumed in a luv callback: back to the main loop for the editor API
    jnvim.main()
    if ierr or herr then
      return vim.notify("jrpc_hover: " .. tostring(ierr or herr), vim.log.levels.ERROR)
    end
    if result == vim.NIL or result == nil then
      M.last = ""
      return vim.notify("jrpc_hover: nothing here", vim.log.levels.INFO)
    end
    M.last = hover_text(result.contents)
    vim.lsp.util.open_floating_preview(vim.split(M.last, "\n"), "markdown", { border = "single" })
  end)()
end

return M
