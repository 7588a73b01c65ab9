--- jrpc_mcp: an MCP server's tools in Neovim, through jrpc.mcp.client.
--
-- :JrpcMcpTools {cmd} starts {cmd} (a shell command) as an MCP server of
-- either era, lists its tools in a scratch buffer and keeps it running;
-- given an http(s) URL instead, it connects to that Streamable HTTP
-- server, running MCP's authorization flow when the server asks for it
-- (the URL to open is shown, and opened with vim.ui.open where Neovim has
-- it; a listener on 127.0.0.1 takes the browser's redirect; the tokens are
-- kept in stdpath("data")/jrpc_mcp_tokens.json, mode 0600);
-- :JrpcMcpCall {tool} [{json}] calls one of them and shows the result
-- there. Each command runs in a coroutine on Neovim's own libuv loop
-- (vim.uv, or vim.loop before 0.10): every request waits without blocking
-- the editor, and jrpc.nvim.main() brings it back to the main loop before
-- the buffer is touched.
local jrpc = require "jrpc"
local jnvim = require "jrpc.nvim"
local mcp_client = require "jrpc.mcp.client"

local M = {}

--- What the last command showed (for tests): `{title, lines}`, or nil.
M.last = nil

local state = { client = nil, cmd = nil, buf = nil, loopback = nil }

--- Open the authorization URL: vim.ui.open (Neovim 0.10) after saying it;
--- a plugin or a test may replace this.
function M.open_url(url)
  vim.notify("jrpc_mcp: authorize in your browser: " .. url, vim.log.levels.INFO)
  if vim.ui.open then vim.ui.open(url) end
end

-- {======================================================================
-- The scratch buffer
-- =======================================================================

-- One buffer, reused: shown in a window of this tab (split when none is).
local function scratch()
  if not (state.buf and vim.api.nvim_buf_is_valid(state.buf)) then
    state.buf = vim.api.nvim_create_buf(false, true)
    vim.bo[state.buf].bufhidden = "hide"
    vim.api.nvim_buf_set_name(state.buf, "jrpc-mcp")
  end
  if vim.fn.bufwinid(state.buf) == -1 then
    vim.cmd("botright split")
    vim.api.nvim_win_set_buf(0, state.buf)
  end
  return state.buf
end

local function show(title, lines)
  M.last = { title = title, lines = lines }
  local buf = scratch()
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, vim.list_extend({ title, "" }, lines))
  vim.bo[buf].modifiable = false
end

local function fail(msg)
  M.last = { title = "error", lines = { msg } }
  vim.notify("jrpc_mcp: " .. msg, vim.log.levels.ERROR)
end

-- }======================================================================

-- {======================================================================
-- Results as lines
-- =======================================================================

local function add_text(out, text)
  for _, line in ipairs(vim.split(text, "\n", { plain = true, trimempty = true })) do out[#out + 1] = line end
end

-- A tool's content: text as it is, anything else in one line.
local function content_lines(result)
  local out = {}
  for _, c in ipairs(result.content or {}) do
    if c.type == "text" then
      add_text(out, c.text)
    elseif c.type == "image" or c.type == "audio" then
      out[#out + 1] = ("[%s %s, %d bytes base64]"):format(c.type, tostring(c.mimeType), #(c.data or ""))
    elseif c.type == "resource" and type(c.resource) == "table" then
      out[#out + 1] = "[resource " .. tostring(c.resource.uri) .. "]"
      if c.resource.text then add_text(out, c.resource.text) end
    else
      out[#out + 1] = "[" .. tostring(c.type) .. "]"
    end
  end
  return out
end

local function first_line(s)
  return type(s) == "string" and s:match("^[^\n]*") or ""
end

-- }======================================================================

-- A jrpc.Error as one line: a server's code and message, or ours.
local function describe(err)
  if type(err.code) == "number" then return ("error %d: %s"):format(err.code, err.message) end
  return tostring(err.message)
end

-- Run `job(client)` in a coroutine; what it returns (title, lines, or
-- nil and a message) is shown once back on the main loop.
local function run(job)
  coroutine.wrap(function()
    local ok, title, lines = pcall(job)
    jnvim.main()
    if not ok then return fail(tostring(title)) end
    if title == nil then return fail(lines) end
    show(title, lines)
  end)()
end

--- Close the server :JrpcMcpTools started (its stdin; SIGTERM after 1 s).
function M.stop()
  if state.client then state.client:close(1) end
  if state.loopback then state.loopback.close() end
  state.client, state.cmd, state.loopback = nil, nil, nil
end

-- The connect options for `target`: a shell command, or an http(s) URL
-- with the authorization flow (its URL opened on the main loop).
local function connect_options(loop, target)
  if not target:match("^https?://") then
    return { cmd = "/bin/sh", args = { "-c", target }, stderr = "pipe", timeout = 30 }
  end
  local lb = require("jrpc.mcp.oauth_loopback").new(loop, {
    on_url = function(url) vim.schedule(function() M.open_url(url) end) end })
  state.loopback = lb
  local data = vim.fn.stdpath("data")
  vim.fn.mkdir(data, "p")
  local store = require("jrpc.mcp.oauth_store").file(data .. "/jrpc_mcp_tokens.json", { uv = loop.uv })
  return { url = target, timeout = 300, auth = { redirect_uri = lb.redirect_uri, authorize = lb.authorize,
    client_name = "jrpc_mcp (Neovim)", store = store } }
end

--- Start `cmd` (a shell command) as the MCP server, or connect to the
--- server at `cmd` (an http(s) URL), replacing any other, and list its
--- tools.
---@param cmd string
function M.tools(cmd)
  M.stop()
  M.last = nil
  local loop = jnvim.loop()
  run(function()
    local client, err = mcp_client.connect(loop, connect_options(loop, cmd))
    if not client then return nil, tostring(err) end
    local tools, terr = client:list_tools()
    if not tools then
      local text = client:stderr_text()
      client:close(0)
      return nil, describe(terr) .. (text ~= "" and (" (its stderr: " .. first_line(text) .. ")") or "")
    end
    state.client, state.cmd = client, cmd
    local lines = {}
    for _, t in ipairs(tools) do lines[#lines + 1] = t.name .. "\t" .. first_line(t.description) end
    return ("%d tools of %s"):format(#tools, cmd), lines
  end)
end

--- Call `tool` with `json` (a JSON object; none: {}) on the server
--- :JrpcMcpTools started, and show the result.
---@param tool string
---@param json? string
function M.call(tool, json)
  M.last = nil
  local client = state.client
  if not client then return fail("no MCP server: :JrpcMcpTools {cmd} first") end
  local arguments, problem = jrpc.object(), nil
  if json then arguments, problem = jrpc.decode(json) end
  if type(arguments) ~= "table" then return fail("arguments: not a JSON object: " .. tostring(problem or json)) end
  run(function()
    local result, err = client:call_tool(tool, arguments)
    if not result then return nil, describe(err) end
    local title = tool .. (result.isError and " failed (isError)" or "")
    return title, content_lines(result)
  end)
end

return M
