--- A transport for vim.lsp (Neovim 0.8 and later): `cmd(argv, opts)` is
-- what `vim.lsp.start{ cmd = ... }` accepts, a function of the client's
-- dispatchers that starts the server with jrpc and returns the RPC client
-- vim.lsp talks to (request, notify, is_closing, terminate).
--
--     vim.lsp.start{ name = "clangd", cmd = require("jrpc.nvim").lsp_cmd{ "clangd" } }
--
-- It keeps vim.lsp.rpc's contract: callbacks, notifications and server
-- requests run on the main loop (vim.schedule), in the order they arrived;
-- a null result is nil; RequestCancelled (-32800) never reaches a callback;
-- notify_reply_callback runs once the request is no longer pending. Where
-- jrpc does more, the client sees it: `$/cancelRequest` cancels the request
-- at once (its callback is never called), and when the server dies every
-- request still pending settles with an error.
local errors = require "jrpc.errors"
local options = require "jrpc.options"

local M = {}

M.OPTIONS = options.set{ "cwd", "env", "stderr", "timeout", "on_debug" }

-- LSP's "RequestFailed": given to a callback whose request ended on this
-- side (the server died, a timeout, params that could not be encoded).
M.REQUEST_FAILED = -32803
local REQUEST_CANCELLED = -32800
local INTERNAL_ERROR = -32603

local unpack = table.unpack or unpack

local function editor()
  return require("jrpc.log").nvim() or error("jrpc.nvim.lsp_cmd: not running inside Neovim", 3)
end

-- vim.lsp.rpc's error kinds for on_error (numbers; looked up, not copied).
local function client_error(name)
  local ok, rpc = pcall(require, "vim.lsp.rpc")
  return ok and rpc.client_errors and rpc.client_errors[name] or name
end

-- An error as vim.lsp callbacks expect it: a plain {code, message, data}
-- table with a numeric code, printed as vim.lsp.rpc prints its own.
local function lsp_error(err)
  local e
  if type(err.code) == "number" then
    e = { code = err.code, message = err.message, data = err.data }
  else
    e = { code = M.REQUEST_FAILED, message = err.message, data = { jrpc_code = err.code } }
  end
  local ok, rpc = pcall(require, "vim.lsp.rpc")
  if ok and rpc.format_rpc_error then setmetatable(e, { __tostring = rpc.format_rpc_error }) end
  return e
end

local function check(argv, opts)
  if type(argv) ~= "table" or type(argv[1]) ~= "string" then
    error("jrpc.nvim.lsp_cmd: argv must be a list of strings, the program first", 3)
  end
  for i = 2, #argv do
    if type(argv[i]) ~= "string" then error("jrpc.nvim.lsp_cmd: argv[" .. i .. "] must be a string", 3) end
  end
  if opts ~= nil and type(opts) ~= "table" then error("jrpc.nvim.lsp_cmd: opts must be a table", 3) end
  options.check("jrpc.nvim.lsp_cmd", opts or {}, 3, M.OPTIONS)
end

-- {======================================================================
-- The client vim.lsp holds
-- =======================================================================

local Client = {}
Client.__index = Client

-- Run `fn(...)` on the main loop; a raise goes to the on_error dispatcher
-- as vim.lsp.rpc reports a failing callback or handler.
function Client:_later(kind, fn, ...)
  local args = { n = select("#", ...), ... }
  self.vim.schedule(function()
    local ok, err = pcall(fn, unpack(args, 1, args.n))
    if not ok then self:_error(kind, err) end
  end)
end

function Client:_error(kind, err)
  local on_error = self.dispatchers.on_error
  if on_error then pcall(on_error, client_error(kind), err) end
end

-- A request of ours settled (reply, error, cancel, or the end of the server).
function Client:_settled(id, err, result)
  local entry = self.pending[id]
  if entry == nil then return end
  if entry.sending then  -- settled inside peer:request: request decides
    entry.early = { err = err, result = result }
    return
  end
  self.pending[id] = nil
  if entry.notify_reply then self:_later("SERVER_RESULT_CALLBACK_ERROR", entry.notify_reply, id) end
  if err ~= nil and (err.code == "cancelled" or err.code == REQUEST_CANCELLED) then return end
  if err ~= nil then
    self:_later("SERVER_RESULT_CALLBACK_ERROR", entry.callback, lsp_error(err), nil)
  else
    if result == self.vim.NIL then result = nil end
    self:_later("SERVER_RESULT_CALLBACK_ERROR", entry.callback, nil, result)
  end
end

function Client:request(method, params, callback, notify_reply)
  if type(callback) ~= "function" then error("request: callback must be a function", 2) end
  if notify_reply ~= nil and type(notify_reply) ~= "function" then
    error("request: notify_reply_callback must be a function", 2)
  end
  self.last_id = self.last_id + 1
  local id = self.last_id
  local entry = { callback = callback, notify_reply = notify_reply, sending = true }
  self.pending[id] = entry
  local sent = self.child.peer:request(method, params, { id = id },
    function(err, result) self:_settled(id, err, result) end)
  entry.sending = nil
  if sent == nil then  -- not sent (closed, busy, params not encodable): vim.lsp sees false
    self.pending[id] = nil
    return false
  end
  -- sent, then settled at once (the write failed and the connection closed)
  if entry.early then self:_settled(id, entry.early.err, entry.early.result) end
  return true, id
end

function Client:notify(method, params)
  if method == "$/cancelRequest" and type(params) == "table" and self.pending[params.id] then
    -- settles it (notify_reply only) and tells the server
    self.child.peer:cancel(params.id)
    return true
  elseif method == "$/cancelRequest" then
    return true  -- already answered: nothing to cancel
  end
  return self.child.peer:notify(method, params) == true
end

function Client:is_closing()
  return self.terminating or self.child:closed()
end

function Client:terminate()
  self.terminating = true
  if self.child.exit_code == nil then self.child:kill("sigterm") end
end

-- A server request: answered with what server_request returns on the main
-- loop; a notification: handed to the notification dispatcher there.
function Client:_incoming(params, ctx)
  local method = ctx.method
  if ctx.id == nil then
    local notification = self.dispatchers.notification
    if notification then self:_later("NOTIFICATION_HANDLER_ERROR", notification, method, params) end
    return
  end
  require("jrpc.nvim").main()
  local server_request = self.dispatchers.server_request
  if server_request == nil then errors.raise(-32601, "Method not found: " .. method) end
  local ok, result, err = pcall(server_request, method, params)
  if not ok then
    self:_error("SERVER_REQUEST_HANDLER_ERROR", result)
    errors.raise(INTERNAL_ERROR, tostring(result))
  end
  if err ~= nil then
    local code = type(err) == "table" and type(err.code) == "number" and err.code % 1 == 0 and err.code
      or INTERNAL_ERROR
    local message = type(err) == "table" and err.message
    if type(message) ~= "string" then
      local names = require("vim.lsp.protocol").ErrorCodes
      message = type(names[code]) == "string" and names[code] or "error " .. code
    end
    errors.raise(code, message, type(err) == "table" and err.data or nil)
  end
  if result == nil then
    errors.raise(INTERNAL_ERROR, ("method %q: server_request gave neither a result nor an error"):format(method))
  end
  return result
end

-- on_exit once the process exited and its connection closed, so every
-- request has settled (and its callback been scheduled) before it.
function Client:_ended()
  if self.exited == nil or not self.child:closed() or self.exit_told then return end
  self.exit_told = true
  local on_exit = self.dispatchers.on_exit
  if on_exit then self:_later("NOTIFICATION_HANDLER_ERROR", on_exit, self.exited[1], self.exited[2]) end
end

-- }======================================================================

local function start(argv, opts, dispatchers, config)
  local vim = editor()
  local jnvim = require "jrpc.nvim"
  local self = setmetatable({ vim = vim, dispatchers = dispatchers or {}, pending = {}, last_id = 0 }, Client)
  local args = { unpack(argv, 2) }
  -- the loop fills in Neovim's conventions, as vim.lsp.rpc encodes and decodes
  local child, err = jnvim.loop():spawn{
    cmd = argv[1], args = args, profile = "lsp", cwd = opts.cwd or (config and config.cmd_cwd),
    env = opts.env, stderr = opts.stderr, timeout = opts.timeout, on_debug = opts.on_debug,
    on_exit = function(code, signal) self.exited = { code, signal }; self:_ended() end,
    on_close = function() self:_ended() end,
  }
  if child == nil then error("jrpc.nvim.lsp_cmd: " .. err.message, 0) end
  self.child = child
  child.peer:fallback(function(params, ctx) return self:_incoming(params, ctx) end)
  return {
    request = function(...) return self:request(...) end,
    notify = function(...) return self:notify(...) end,
    is_closing = function() return self:is_closing() end,
    terminate = function() return self:terminate() end,
    child = child,  -- the jrpc child: its peer's stats, stderr_text()
  }
end

--- What `vim.lsp.start{ cmd = ... }` accepts: a function of the dispatchers
--- that starts `argv` (program and arguments) over jrpc.
---@param argv string[]
---@param opts? {cwd?: string, env?: table, stderr?: any, timeout?: number, on_debug?: function}
---@return fun(dispatchers: table, config?: table): table
function M.cmd(argv, opts)
  check(argv, opts)
  opts = opts or {}
  return function(dispatchers, config) return start(argv, opts, dispatchers, config) end
end

return M
