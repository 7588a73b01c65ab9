--- jrpc_editor: the running editor as an MCP server, for an MCP host
-- such as Claude Code (jrpc.nvim.serve_mcp).
--
-- :JrpcEditorServe [port] serves these tools on http://127.0.0.1:PORT/mcp
-- (loopback only, with serve_http's Origin and Host checks):
--   list_buffers   the listed buffers: number, name, line count, modified
--   read_buffer    a buffer's text
--   replace_text   replace a range of a buffer (as nvim_buf_set_text)
--   diagnostics    a buffer's diagnostics (vim.diagnostic)
--   ex_command     run an Ex command: only with `ex_commands = true`, since
--                  it can do anything the editor can (:!rm, :write ...)
-- :JrpcEditorStop stops it. jrpc.nvim.serve_mcp starts every handler on
-- the main loop, so they call vim.api directly.
local jrpc = require "jrpc"
local jnvim = require "jrpc.nvim"
local mcp = require "jrpc.mcp"

local M = {}

--- What :JrpcEditorServe started: the handle of jrpc.nvim.serve_mcp, or nil.
M.handle = nil

-- {======================================================================
-- The tools' work (on the main loop)
-- =======================================================================

local BUFNR = { type = "integer", description = "buffer number (0: the current buffer)" }

-- The buffer `n` names, or nil and why not.
local function buffer(n)
  if n == nil or n == 0 then return vim.api.nvim_get_current_buf() end
  if type(n) ~= "number" or n % 1 ~= 0 or not vim.api.nvim_buf_is_valid(n) then
    return nil, ("no buffer %s"):format(tostring(n))
  end
  return n
end

local function list_buffers()
  local current, list = vim.api.nvim_get_current_buf(), {}
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.bo[b].buflisted then
      list[#list + 1] = { bufnr = b, name = vim.api.nvim_buf_get_name(b), lines = vim.api.nvim_buf_line_count(b),
        modified = vim.bo[b].modified, current = b == current }
    end
  end
  return { buffers = jrpc.array(list) }
end

local function read_buffer(args)
  local b, err = buffer(args.bufnr)
  if not b then return mcp.error_result(err) end
  return table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), "\n")
end

local function replace_text(args)
  local b, err = buffer(args.bufnr)
  if not b then return mcp.error_result(err) end
  if not vim.bo[b].modifiable then return mcp.error_result(("buffer %d is not modifiable"):format(b)) end
  local count = vim.api.nvim_buf_line_count(b)
  for _, line in ipairs{ args.start_line, args.end_line } do
    if line >= count then
      return mcp.error_result(("line %d is past the end of buffer %d (lines 0 to %d)"):format(line, b, count - 1))
    end
  end
  local lines = vim.split(args.text, "\n", { plain = true })
  -- other bad positions raise: the model gets the editor's own message
  local ok, why = pcall(vim.api.nvim_buf_set_text, b, args.start_line, args.start_col, args.end_line,
    args.end_col, lines)
  if not ok then return mcp.error_result(tostring(why):gsub("^.-:%d+: ", "")) end
  return ("replaced: buffer %d has %d lines"):format(b, vim.api.nvim_buf_line_count(b))
end

local SEVERITY = { "error", "warning", "info", "hint" }

local function diagnostics(args)
  local b, err = buffer(args.bufnr)
  if not b then return mcp.error_result(err) end
  local list = {}
  for _, d in ipairs(vim.diagnostic.get(b)) do
    list[#list + 1] = { line = d.lnum, col = d.col, severity = SEVERITY[d.severity] or "error",
      message = d.message, source = d.source }
  end
  return { bufnr = b, diagnostics = jrpc.array(list) }
end

local function ex_command(args)
  -- nvim_exec2 from 0.9; nvim_exec before
  local ok, out = pcall(function()
    if vim.api.nvim_exec2 then return vim.api.nvim_exec2(args.command, { output = true }).output end
    return vim.api.nvim_exec(args.command, true)
  end)
  if not ok then return mcp.error_result(tostring(out):gsub("^.-:%d+: ", "")) end
  return out ~= "" and out or "(no output)"
end

-- }======================================================================

local function object(properties, required)
  return { type = "object", properties = properties, required = required and jrpc.array(required) }
end

--- The MCP server of the editor's tools; `opts.ex_commands = true` adds
--- `ex_command`.
---@param opts? table
---@return jrpc.mcp.Server
function M.server(opts)
  opts = opts or {}
  local srv = mcp.server{ name = "nvim", version = "0.1.0",
    instructions = "Tools of the user's running Neovim: its buffers, their text and diagnostics." }
  srv:tool{ name = "list_buffers", description = "List the editor's buffers: number, file name, line count, "
      .. "whether modified and which one is current.", input_schema = object({}), handler = list_buffers }
  srv:tool{ name = "read_buffer", description = "The text of a buffer (lines joined with newlines).",
    input_schema = object({ bufnr = BUFNR }), handler = read_buffer }
  local position = { type = "integer", minimum = 0 }
  srv:tool{ name = "replace_text", description = "Replace text in a buffer: lines and columns count from 0 "
      .. "(columns in bytes), the end is exclusive; an empty range inserts.",
    input_schema = object({ bufnr = BUFNR, start_line = position, start_col = position, end_line = position,
      end_col = position, text = { type = "string", description = "the new text (newlines split lines)" } },
      { "start_line", "start_col", "end_line", "end_col", "text" }),
    handler = replace_text }
  srv:tool{ name = "diagnostics", description = "A buffer's diagnostics (line and column from 0).",
    input_schema = object({ bufnr = BUFNR }), handler = diagnostics }
  if opts.ex_commands == true then
    srv:tool{ name = "ex_command", description = "Run an Ex command in the editor and return its output.",
      input_schema = object({ command = { type = "string" } }, { "command" }), handler = ex_command }
  end
  return srv
end

--- Serve the editor's tools on loopback (stopping any served before):
--- `opts` = `{port? (0: a free one), ex_commands? (true to expose Ex
--- commands)}`. Returns the URL, or nil and an error message.
---@param opts? table
---@return string|nil url
---@return string|nil err
function M.start(opts)
  opts = opts or {}
  M.stop()
  local handle, err = jnvim.serve_mcp(M.server(opts), { host = "127.0.0.1", port = opts.port or 0 })
  if not handle then return nil, tostring(err) end
  M.handle = handle
  return handle.url
end

--- Stop serving (nothing when not serving).
function M.stop()
  if M.handle then
    M.handle.close()
    M.handle = nil
  end
end

return M
