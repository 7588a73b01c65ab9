--- `jrpc.nvim.serve_mcp`: a `jrpc.mcp.server` served over Streamable HTTP
-- on Neovim's own loop, so an MCP host (Claude Code, an IDE agent) talks
-- to the running editor.
--
-- Requests arrive in luv callbacks, the "fast" context where most editor
-- API calls raise E5560. Every tool, resource, prompt and completion
-- handler is therefore called through the server's `run_handlers` hook,
-- which first waits (`jrpc.nvim.main()`) for `vim.schedule` to run it: a
-- handler starts on the main loop and may call `vim.api` at once. Handlers
-- run in jrpc worker coroutines, so that wait blocks only the one request.
--
-- The editor's API is a great deal of power: the listener is on loopback
-- only, and serve_http's Origin and Host checks (on by default, and not
-- to be turned off here) keep web pages from reaching it through the
-- user's browser (DNS rebinding, cross-origin POSTs).
local options = require "jrpc.options"

local M = {}

--- The names `serve_mcp(server, opts)` takes.
M.OPTIONS = options.set{ "host", "port", "path", "allowed_origins", "peer", "on_error" }

-- Loopback addresses only: anything else would offer the editor to the network.
local LOOPBACK = { ["127.0.0.1"] = true, ["::1"] = true }

-- `host` as it goes in a URL (an IPv6 address in brackets).
local function url_host(host)
  return host:find(":", 1, true) and "[" .. host .. "]" or host
end

--- Serve `server` (a `jrpc.mcp.server`) over Streamable HTTP on Neovim's
--- loop. `opts`: `host` ("127.0.0.1" or "::1"; default "127.0.0.1"),
--- `port` (default 0: a free one), `path` (default "/mcp"),
--- `allowed_origins` (exact Origin values; default those of loopback),
--- `peer` (more peer options), `on_error`. Returns a handle `{url, port,
--- close = function()}`, or nil and a jrpc.Error (code "listen") when the
--- address cannot be bound. Handlers start on the editor's main loop
--- (after a wait of their own, such as a request to the client, they
--- resume in a luv callback: call `jrpc.nvim.main()` again before
--- using `vim.api`).
---@param server jrpc.mcp.Server
---@param opts? table
---@return table|nil handle
---@return jrpc.Error|nil err
function M.serve(server, opts)
  local nvim = require "jrpc.nvim"
  opts = options.check("jrpc.nvim.serve_mcp", opts, 2, M.OPTIONS)
  local is_server = type(server) == "table" and type(server.serve_http) == "function"
    and type(server.run_handlers) == "function"
  if not is_server then
    error("jrpc.nvim.serve_mcp: expected a jrpc.mcp.server", 2)
  end
  local host = opts.host or "127.0.0.1"
  if not LOOPBACK[host] then
    error(("jrpc.nvim.serve_mcp: host must be a loopback address (127.0.0.1 or ::1), not %s")
      :format(tostring(host)), 2)
  end
  local path = opts.path or "/mcp"
  if type(path) ~= "string" or path:sub(1, 1) ~= "/" then
    error("jrpc.nvim.serve_mcp: path must be a string starting with /", 2)
  end
  server:run_handlers(function(call, ...)
    nvim.main()
    return call(...)
  end)
  local http, err = server:serve_http(nvim.loop(), {
    host = host, port = opts.port or 0, path = path, allowed_origins = opts.allowed_origins,
    peer = opts.peer, on_error = opts.on_error,
  })
  if not http then return nil, err end
  local handle = { port = http.port, url = ("http://%s:%d%s"):format(url_host(host), http.port, path) }
  local closed = false
  function handle.close()
    if closed then return end
    closed = true
    http:close()
  end
  return handle
end

return M
