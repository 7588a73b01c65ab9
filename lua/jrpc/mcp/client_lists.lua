--- The list calls of the MCP client: every page fetched (`nextCursor`
-- followed until the server gives none), and, when the user asks for it
-- (client option `cache = true`), the items kept for the `ttlMs` the
-- server gave, until a `list_changed` notification says otherwise. This
-- module owns the cache (per client).
local core = require "jrpc.core"
local errors = require "jrpc.errors"
local calls = require "jrpc.mcp.client_call"

local M = {}

M.DEFAULT_MAX_PAGES = 1000

-- The list methods: the key of the items in a page, and the notification
-- that says the list changed.
M.LISTS = {
  ["tools/list"] = { items = "tools", changed = "notifications/tools/list_changed" },
  ["resources/list"] = { items = "resources", changed = "notifications/resources/list_changed" },
  ["resources/templates/list"] = { items = "resourceTemplates",
    changed = "notifications/resources/list_changed" },
  ["prompts/list"] = { items = "prompts", changed = "notifications/prompts/list_changed" },
}

--- The cache of a new client.
---@return table
local caches = setmetatable({}, { __mode = "k" })

--- The cache of a new client.
---@param client table
function M.new(client)
  caches[client] = {}
end

--- A list_changed notification: forget the lists it names.
---@param client table
---@param notification string
function M.changed(client, notification)
  for method, list in pairs(M.LISTS) do
    if list.changed == notification then caches[client][method] = nil end
  end
end

local function cached(client, method)
  local cache = caches[client]
  local entry = cache[method]
  if entry and client:transport():now() < entry.expires then return entry.items end
  cache[method] = nil
  return nil
end

-- Keep what a complete listing gave for its ttlMs (the smallest of its pages').
local function remember(client, method, items, ttl_ms)
  if client:option("cache") and type(ttl_ms) == "number" and ttl_ms > 0 then
    caches[client][method] = { items = items, expires = client:transport():now() + ttl_ms / 1000 }
  end
end

-- Every page, in order: the items, or nil and an error.
local function fetch(client, method, opts)
  local key, items, cursor, ttl = M.LISTS[method].items, {}, nil, nil
  local max_pages = opts.max_pages or client:option("max_pages") or M.DEFAULT_MAX_PAGES
  for _ = 1, max_pages do
    local result, err = calls.new(client, method, cursor and { cursor = cursor } or nil, opts):run()
    if not result then return nil, err end
    for _, item in ipairs(type(result[key]) == "table" and result[key] or {}) do items[#items + 1] = item end
    if type(result.ttlMs) == "number" then ttl = math.min(ttl or result.ttlMs, result.ttlMs) end
    cursor = result.nextCursor
    if cursor == nil or cursor == core.null then
      remember(client, method, items, ttl)
      return items
    end
  end
  return nil, errors.new("too_many_pages", ("%s: more than %d pages (option max_pages)"):format(method, max_pages))
end

--- In a coroutine: all the items of `method` (one of LISTS), or nil and an error.
---@param client table
---@param method string
---@param opts table  call options, plus max_pages and fresh (true: skip the cache)
---@return table|nil items
---@return jrpc.Error|nil err
function M.list(client, method, opts)
  if not opts.fresh then
    local items = cached(client, method)
    if items then return items end
  end
  return fetch(client, method, opts)
end

return M
