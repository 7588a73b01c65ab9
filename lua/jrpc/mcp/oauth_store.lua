--- Where the MCP client's OAuth keeps what it learnt per server: the
-- tokens and the client registrations (one per authorization server).
-- A store is any table with `load(key) -> table|nil` and `save(key,
-- value)` (`key`: the server's URL; `value`: a table of strings, numbers
-- and tables, JSON-encodable). Two come with jrpc: `memory()` (the
-- default: gone when the process ends) and `file(path)`, one JSON
-- document readable and writable by its owner only (mode 0600, set on
-- every write), for the command line between runs.
local core = require "jrpc.core"
local options = require "jrpc.options"

local M = {}

--- A store in memory.
---@return table
function M.memory()
  local data = {}
  return {
    load = function(_, key) return data[key] end,
    save = function(_, key, value) data[key] = value end,
  }
end

local function read_all(uv, path)
  local fd = uv.fs_open(path, "r", 0)
  if not fd then return nil end
  local stat = uv.fs_fstat(fd)
  local text = stat and stat.size <= 4 * 1024 * 1024 and uv.fs_read(fd, stat.size, 0) or nil
  uv.fs_close(fd)
  return text
end

--- A store in the file `path` (JSON; created with mode 0600). Options:
--- `uv` (luv: the loop's `loop.uv`, or require "luv"). A file that is no
--- JSON object counts as empty (and is replaced on the next save); a save
--- that fails raises with the reason (the tokens would be lost).
---@param path string
---@param opts? table
---@return table
function M.file(path, opts)
  opts = options.check("jrpc.mcp.oauth_store.file", opts, 2, options.set{ "uv" })
  if type(path) ~= "string" or path == "" then error("jrpc.mcp.oauth_store.file: path must be a string", 2) end
  local uv = opts.uv or require "luv"
  local function all()
    local doc = core.decode(read_all(uv, path) or "")
    return type(doc) == "table" and doc or {}
  end
  return {
    load = function(_, key)
      local v = all()[key]
      return type(v) == "table" and v or nil
    end,
    save = function(_, key, value)
      local doc = all()
      doc[key] = value
      local tmp = path .. ".tmp"
      local fd, err = uv.fs_open(tmp, "w", tonumber("600", 8))
      if not fd then error("jrpc.mcp.oauth_store: " .. tostring(err), 2) end
      uv.fs_fchmod(fd, tonumber("600", 8))  -- an old file's mode too
      local ok, werr = uv.fs_write(fd, core.encode(doc), 0)
      uv.fs_close(fd)
      if not ok then error("jrpc.mcp.oauth_store: " .. tostring(werr), 2) end
      local rok, rerr = uv.fs_rename(tmp, path)
      if not rok then error("jrpc.mcp.oauth_store: " .. tostring(rerr), 2) end
    end,
  }
end

return M
