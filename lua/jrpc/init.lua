--- jrpc: JSON-RPC 2.0 for Lua 5.4 and LuaJIT, on a C core.
--
--     local jrpc = require "jrpc"
--     local peer = jrpc.peer{ send = function(bytes) sock:write(bytes) end }
--     peer:method("subtract", function(p) return p.minuend - p.subtrahend end,
--       jrpc.params{ "minuend:number", "subtrahend:number" })
--     peer:receive(bytes_from_the_socket)
-- Lua 5.4 and LuaJIT 2.1 only. PUC Lua 5.1 has the same C ABI as LuaJIT,
-- so LuaRocks cannot tell them apart, but its xpcall takes no arguments and
-- its coroutines cannot yield across pcall: refuse it here, clearly.
if _VERSION == "Lua 5.1" and rawget(_G, "jit") == nil then
  error("jrpc needs Lua 5.4 or LuaJIT 2.1; PUC Lua 5.1 is not supported", 2)
end
if _VERSION == "Lua 5.2" or _VERSION == "Lua 5.3" then
  error("jrpc needs Lua 5.4 or LuaJIT 2.1, not " .. _VERSION, 2)
end

local core = require "jrpc.core"
local errors = require "jrpc.errors"
local params = require "jrpc.params"
local peer = require "jrpc.peer"

local M = {}

--- The C core (`jrpc.core`), for codecs and pending tables of your own.
M.core = core

--- JSON `null` (a light userdata; equal to `cjson.null`).
M.null = core.null

--- Treat the userdata `v` as JSON null from now on: it encodes as `null`
--- and counts as null for optional params. Done for `vim.NIL` when jrpc
--- loads inside Neovim.
---@param v userdata
function M.add_null(v)
  core.add_null(v)
  params.add_null(v)
end

--- Mark a table as a JSON array (so an empty one encodes as `[]`).
---@param t? table  default: a new table
---@return table t
function M.array(t)
  return setmetatable(t or {}, core.array_mt)
end

--- Mark a table as a JSON object (so an empty one encodes as `{}`).
---@param t? table  default: a new table
---@return table t
function M.object(t)
  return setmetatable(t or {}, core.object_mt)
end

--- Compact JSON text of a value, or `nil, msg`.
---@type fun(v: any, max_depth?: integer): string|nil, string|nil
M.encode = core.encode

--- The value of a JSON text, or `nil, msg`.
---@type fun(s: string, max_depth?: integer): any, string|nil
M.decode = core.decode

--- Raise a JSON-RPC error from a handler: the request is answered with it.
---@type fun(code: integer, message: string, data?: any)
M.error = errors.raise

--- Build a JSON-RPC error value without raising it.
---@type fun(code: integer|string, message: string, data?: any): jrpc.Error
M.new_error = errors.new

--- The standard error codes (and LSP's REQUEST_CANCELLED).
M.codes = errors.codes

--- Declare a method's params: `jrpc.params{ "minuend:number", "note:string?" }`.
--- Types: number|integer|string|boolean|table|array|object|any; `?` = optional.
--- The handler then gets a named table whatever form the caller used; bad
--- params answer -32602 `Invalid params: "subtrahend" must be a number`.
---@type fun(specs: string[]): table
M.params = params.declare

--- Create a peer (see jrpc.peer).
---@type fun(opts: table): jrpc.Peer
M.peer = peer.new

--- A peer's transport side (see jrpc.peer.link): what a transport, or a
--- program doing its own I/O, uses besides `peer:receive` and `peer:tick`.
---@type fun(peer: jrpc.Peer): jrpc.Link
M.link = peer.link

--- Transports on libuv: `jrpc.uv.new(require "luv")` (or `vim.uv`). Loading
--- it does not load luv: the luv module is always passed in.
M.uv = require "jrpc.uv"

-- Loaded on first use (a program on libuv never maps the blocking
-- transport's C module, about 100 KiB of resident memory):
--   jrpc.stdio  the blocking stdio transport: `jrpc.stdio.serve(jrpc.stdio.peer{ methods = {...} })`
--   jrpc.nvim   Neovim helpers (`jrpc.nvim.main()`, `schedule_wrap`, `loop()`),
--               only meaningful inside Neovim
local lazy = { stdio = "jrpc.stdio", nvim = "jrpc.nvim" }
setmetatable(M, { __index = function(t, k)
  local name = lazy[k]
  if name then
    local mod = require(name)
    rawset(t, k, mod)
    return mod
  end
end })

-- Inside Neovim, vim.NIL is how plugins write null (LSP's processId = vim.NIL).
do
  local vim = require("jrpc.log").nvim()
  if vim ~= nil then M.add_null(vim.NIL) end
end

--- Run `fn(loop)` on a luv loop until it returns (`uv` default: require "luv").
---@param fn fun(loop: table): ...
---@param uv? table
function M.run(fn, uv)
  return M.uv.new(uv or require "luv"):run(fn)
end

return M
