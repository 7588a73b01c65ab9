--- Neovim helpers: the loop, and getting back onto the editor's main loop.
--
--     local jnvim = require "jrpc.nvim"
--     local loop = jnvim.loop()              -- jrpc.uv on vim.uv or vim.loop, with
--                                            -- Neovim's JSON conventions (vim.NIL, [])
--     coroutine.wrap(function()
--       local child = assert(loop:spawn{ cmd = "clangd", profile = "lsp" })
--       local caps = child.peer:request("initialize", { processId = vim.NIL, ... })
--       jnvim.main()                         -- now on the main loop
--       vim.api.nvim_echo({ { vim.inspect(caps) } }, false, {})
--     end)()
--
-- Replies arrive in luv callbacks, and the coroutine that waited for one
-- resumes there: in that "fast" context most editor API calls fail with
-- E5560. `main()` waits (a jrpc wait) until `vim.schedule` runs, so what
-- follows it runs where the editor API works.
local core = require "jrpc.core"
local workers = require "jrpc.workers"
local logs = require "jrpc.log"
local options = require "jrpc.options"

local M = {}

-- Inside Neovim, vim.NIL is how plugins write null (LSP's processId =
-- vim.NIL): loading this module registers it as `require "jrpc"` does, so
-- a plugin that requires only jrpc.nvim can send it.
do
  local vim = logs.nvim()
  if vim ~= nil then require("jrpc").add_null(vim.NIL) end
end

local function editor()
  return logs.nvim() or error("jrpc.nvim: not running inside Neovim", 3)
end

-- {======================================================================
-- Neovim's JSON conventions (as vim.json and vim.lsp follow them): null is
-- vim.NIL, an empty object is vim.empty_dict() (a table with Neovim's
-- metatable), and an empty table with no marker is an array.
-- =======================================================================

--- The metatable of `vim.empty_dict()`.
---@return table
function M.empty_dict_mt()
  local vim = editor()
  return vim._empty_dict_mt or getmetatable(vim.empty_dict())
end

--- `opts` (a new table) with Neovim's conventions filled in where not
--- given: peer option `null = vim.NIL` (JSON null decodes to it) and
--- `empty_dict` (the core's codec option: decoded empty objects are
--- `vim.empty_dict()` tables, which encode as `{}`; an empty table with no
--- marker encodes as `[]`, as `vim.json.encode` writes it). Results decoded
--- so go through `vim.json.encode` unchanged. `empty_dict = false` keeps
--- jrpc's convention for empty tables (the option is left out), and
--- `null = jrpc.null` jrpc's null. `jnvim.loop()` applies it to every peer
--- it makes; for a peer made otherwise: `peer.new(jnvim.conventions{ ... })`.
---@param opts? table
---@return table
function M.conventions(opts)
  local vim = editor()
  if opts ~= nil and type(opts) ~= "table" then
    error("jrpc.nvim.conventions: expected an options table, got " .. type(opts), 2)
  end
  local o = {}
  for k, v in pairs(opts or {}) do o[k] = v end
  if o.null == nil then o.null = vim.NIL end
  if o.empty_dict == nil then
    o.empty_dict = M.empty_dict_mt()
  elseif o.empty_dict == false then
    o.empty_dict = nil
  end
  return o
end

--- JSON text of `v` written as `vim.json.encode` writes it (an empty
--- unmarked table is `[]`, `vim.empty_dict()` is `{}`, vim.NIL is null),
--- or `nil, msg`.
---@param v any
---@return string|nil json
---@return string|nil err
function M.encode(v)
  editor()
  return core.encode(v, nil, M.empty_dict_mt())
end

--- The value of a JSON text as `vim.json.decode` gives it (null is
--- vim.NIL, an empty object `vim.empty_dict()`), or `nil, msg`.
---@param s string
---@return any
---@return string|nil err
function M.decode(s)
  local vim = editor()
  return core.decode(s, nil, vim.NIL, M.empty_dict_mt())
end

-- }======================================================================

--- The luv module of this Neovim: `vim.uv` (0.10 on) or `vim.loop` (before).
---@return table
function M.uv()
  local vim = editor()
  return vim.uv or vim.loop
end

local LOOP_OPTIONS = options.set{ "conventions" }

--- The jrpc.uv loop context on Neovim's loop, with Neovim's JSON
--- conventions: `stdio`, `spawn`, `connect` and `listen` pass their options
--- through `M.conventions`, so null is vim.NIL and empty tables follow
--- vim.json, unless the options say otherwise (an explicit `null` or
--- `empty_dict` wins; peers of profile "mcp", which jrpc.mcp.client makes
--- and reads itself, are left alone). `opts.conventions = false` gives the
--- context itself, with jrpc's conventions. Neovim runs that loop: never
--- call `loop:run`, `jrpc.run` or `serve_forever` in it; start coroutines.
--- SIGPIPE is caught (`catch_sigpipe`): a child or socket whose reader is
--- gone closes its connection, never the editor. Inside Neovim a spawned
--- child's stderr is captured (`child:stderr_text()`), never written on the
--- editor's terminal, unless `spawn` is given `stderr = "inherit"`.
---@param opts? {conventions?: boolean}
---@return jrpc.uv.Loop
function M.loop(opts)
  opts = options.check("jrpc.nvim.loop", opts, 2, LOOP_OPTIONS)
  if opts.conventions ~= nil and type(opts.conventions) ~= "boolean" then
    error("jrpc.nvim.loop: option conventions must be a boolean", 2)
  end
  local base = require("jrpc.uv").new(M.uv(), { catch_sigpipe = true })
  if opts.conventions == false then return base end
  return require("jrpc.nvim.loop").of(base, M.conventions)
end

--- True when the editor API may be called from here (not in a luv callback).
---@return boolean
function M.on_main()
  local vim = editor()
  return not (vim.in_fast_event and vim.in_fast_event())
end

local function report(msg)
  logs.report("jrpc.nvim: ", msg)
end

--- In a coroutine: return once running on the editor's main loop (through
--- `vim.schedule`); at once if already there. Outside a coroutine it raises.
function M.main()
  local vim = editor()
  if M.on_main() then return end
  local co = workers.current() or error("jrpc.nvim.main: must be called in a coroutine", 2)
  vim.schedule(function() workers.wake(co, report) end)
  if not workers.wait() then
    error("jrpc.nvim.main: resumed by something other than jrpc (another scheduler?)", 2)
  end
end

--- `fn` wrapped so that each call runs it on the main loop (vim.schedule),
--- with its arguments; errors are reported through vim.notify.
---@param fn function
---@return function
function M.schedule_wrap(fn)
  local vim = editor()
  local unpack = table.unpack or unpack
  return function(...)
    local args = { n = select("#", ...), ... }
    vim.schedule(function()
      local ok, err = xpcall(function() return fn(unpack(args, 1, args.n)) end, debug.traceback)
      if not ok then report(tostring(err)) end
    end)
  end
end
M.lsp_cmd = require("jrpc.nvim.lsp").cmd  -- what vim.lsp.start{ cmd = ... } accepts (0.8+)
-- serve_mcp(server, opts): a jrpc.mcp.server over Streamable HTTP on the
-- editor's loop, its handlers on the main loop (jrpc/nvim/mcp.lua)
M.serve_mcp = require("jrpc.nvim.mcp").serve

return M
