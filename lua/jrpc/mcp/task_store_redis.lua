--- A task store in Redis (the interface of jrpc.mcp.task_store), so the
-- workers of one server behind a balancer share their tasks: a task made
-- on one is read, answered and cancelled through any other. A record is a
-- Redis hash under `prefix .. id`, one field per member, each value its
-- JSON text (nested values are never decoded by Redis, so they come back
-- exactly as they went in); the hash expires with the task's TTL (PX).
-- `update` is one Lua script, so a status check and its change are atomic
-- however many workers race.
--
-- Every method waits for Redis (in a coroutine, as jrpc handlers run). When
-- Redis cannot answer, the method raises a -32603 error ("Task store
-- unavailable: ..."), which a request's handler answers as it is: a task
-- is never taken for unknown because its store was down.
local jrpc_core = require "jrpc.core"
local errors = require "jrpc.errors"
local options = require "jrpc.options"
local redis = require "jrpc.redis"

local M = {}

--- The names `task_store_redis.new{...}` takes: jrpc.redis.connect's and these.
M.OPTIONS = options.set({ "prefix", "scan_count" }, redis.OPTIONS)

--- Keys are `prefix .. taskId`.
M.DEFAULT_PREFIX = "jrpc:mcp:task:"

local null = jrpc_core.null

-- put: only a new id (a task id is never reused), then its TTL.
local PUT = [[
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1
]]

-- update: ARGV[1] is the number n of allowed statuses (each as JSON text,
-- ARGV[2..n+1]; n = 0: any), then pairs of field and JSON text, where an
-- empty text removes the field. Returns nil (no record), or the record
-- after and 1 (changed) or 0 (its status was not one of those).
local UPDATE = [[
if redis.call('EXISTS', KEYS[1]) == 0 then return nil end
local n = tonumber(ARGV[1])
if n > 0 then
  local status = redis.call('HGET', KEYS[1], 'status')
  local allowed = false
  for i = 2, n + 1 do if ARGV[i] == status then allowed = true end end
  if not allowed then return { redis.call('HGETALL', KEYS[1]), 0 } end
end
for i = n + 2, #ARGV, 2 do
  if ARGV[i + 1] == '' then redis.call('HDEL', KEYS[1], ARGV[i])
  else redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
end
return { redis.call('HGETALL', KEYS[1]), 1 }
]]

local Store = {}
Store.__index = Store

--- A store in the Redis at `{host = "127.0.0.1", port = 6379, timeout = 5
--- (seconds for a reply), on_error?, prefix? (default "jrpc:mcp:task:"),
--- scan_count? (keys a SCAN step asks for in list(), default 100)}`. It
--- connects when first used (in a coroutine), and again after a failure.
---@param opts? table
---@return table store
function M.new(opts)
  opts = options.check("task_store_redis.new", opts, 3, M.OPTIONS)
  local prefix = opts.prefix or M.DEFAULT_PREFIX
  if type(prefix) ~= "string" or prefix == "" or prefix:find("[%*%?%[\\]") then
    error("task_store_redis.new: prefix must be a non-empty string without * ? [ \\", 2)
  end
  local conn_opts = {}
  for name in pairs(redis.OPTIONS) do conn_opts[name] = opts[name] end
  return setmetatable({ conn_opts = conn_opts, prefix = prefix, scan_count = opts.scan_count or 100 }, Store)
end

local unpack = table.unpack or unpack  -- luacheck: ignore 143

-- Raise the -32603 the request answers with.
local function unavailable(err)
  error(errors.new(-32603, "Task store unavailable: " .. tostring(err.message), { code = err.code }), 0)
end

-- Send a command on the connection (made or made again first).
local function call(self, ...)
  local conn = self.conn
  if conn == nil or conn:failure() then
    local made, err = redis.connect(self.conn_opts)
    if not made then unavailable(err) end
    -- another coroutine may have connected while this one waited: keep one
    if self.conn ~= nil and self.conn ~= conn and not self.conn:failure() then
      made:close()
    else
      self.conn = made
    end
    conn = self.conn
  end
  return conn:call(...)
end

-- A reply, or raise the -32603 the request answers with.
local function must(reply, err)
  if err then unavailable(err) end
  return reply
end

-- A record from HGETALL's flat list of fields and JSON texts.
local function record_of(flat)
  if type(flat) ~= "table" or #flat == 0 then return nil end
  local rec = {}
  for i = 1, #flat, 2 do rec[flat[i]] = jrpc_core.decode(flat[i + 1]) end
  return rec
end

function Store:put(id, record, ttl_ms)
  if type(id) ~= "string" or type(record) ~= "table" then error("task_store: put(id, record, ttl_ms)", 2) end
  if type(ttl_ms) ~= "number" or ttl_ms <= 0 then error("task_store: ttl_ms must be a number > 0", 2) end
  local args = { "EVAL", PUT, 1, self.prefix .. id, math.ceil(ttl_ms) }
  for k, v in pairs(record) do
    args[#args + 1] = k
    args[#args + 1] = jrpc_core.encode(v)
  end
  if must(call(self, unpack(args))) == 0 then return nil, "exists" end
  return true
end

function Store:get(id)
  return record_of(must(call(self, "HGETALL", self.prefix .. id)))
end

function Store:update(id, changes, from)
  local args = { "EVAL", UPDATE, 1, self.prefix .. id, 0 }
  local n = 0
  for status in pairs(from or {}) do
    n = n + 1
    args[#args + 1] = jrpc_core.encode(status)
  end
  args[5] = n
  for k, v in pairs(changes) do
    args[#args + 1] = k
    args[#args + 1] = v == null and "" or jrpc_core.encode(v)
  end
  local reply = must(call(self, unpack(args)))
  if reply == redis.NIL or type(reply) ~= "table" then return nil end
  return record_of(reply[1]), reply[2] == 1
end

function Store:delete(id)
  must(call(self, "DEL", self.prefix .. id))
end

function Store:list()
  local ids, cursor = {}, "0"
  repeat
    local reply = must(call(self, "SCAN", cursor, "MATCH", self.prefix .. "*", "COUNT", self.scan_count))
    cursor = reply[1]
    for _, key in ipairs(reply[2]) do ids[#ids + 1] = key:sub(#self.prefix + 1) end
  until cursor == "0"
  table.sort(ids)
  return ids
end

return M
