--- The loop `jrpc.nvim.loop()` gives: jrpc.uv's context on Neovim's luv,
-- seen through Neovim's JSON conventions. `stdio`, `spawn`, `connect` and
-- `listen` fill in `jrpc.nvim.conventions` (null = vim.NIL, empty_dict =
-- Neovim's empty-dict metatable) where the options do not name them, so a
-- plugin's peers read and write values as vim.json and vim.lsp do. Every
-- other method and field is the context's own: the view holds no state,
-- and two views of one context drive the same loop.
--
-- Peers of profile "mcp" are left as they are: jrpc.mcp.client makes them
-- and reads and writes their messages itself, with jrpc's conventions
-- (`{}` is an object there, a null cursor is jrpc.null).
local M = {}

-- The loop methods that make a peer: each takes the peer's options.
local MAKERS = { "stdio", "spawn", "connect", "listen" }

local views = {}

--- The view of `base` (a jrpc.uv loop context): the same one for the
--- same context. `conventions(opts)` is jrpc.nvim.conventions.
---@param base jrpc.uv.Loop
---@param conventions fun(opts?: table): table
---@return jrpc.uv.Loop
function M.of(base, conventions)
  local view = views[base]
  if view ~= nil then return view end
  view = {}
  for _, name in ipairs(MAKERS) do
    local make = base[name]
    view[name] = function(_, opts)
      -- anything not a table goes on as it is: the context's own check reports it
      if opts == nil or type(opts) == "table" and opts.profile ~= "mcp" then opts = conventions(opts) end
      return make(base, opts)  -- a tail call: errors point at the caller
    end
  end
  setmetatable(view, {
    -- methods run on the context itself, so its state stays in one place
    __index = function(_, key)
      local v = base[key]
      if type(v) ~= "function" then return v end
      return function(_, ...) return v(base, ...) end
    end,
    __newindex = base,
  })
  views[base] = view
  return view
end

return M
