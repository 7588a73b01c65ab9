--- Where task records live: the store interface and its in-memory
-- implementation (the default, for one process). A record is a table of
-- JSON values, so a store shared by several processes can hold it as
-- JSON; nothing else about a task (its coroutine, who waits for it) is
-- stored. The interface, which another store (one shared by the workers
-- behind a balancer) implements the same way:
--
--   store:put(id, record, ttl_ms)   keep `record` for `ttl_ms` ms from now;
--                                   true, or nil and a reason ("full")
--   store:get(id)                   the record, or nil (unknown, expired)
--   store:update(id, changes, from) merge `changes` into the record (a
--                                   member set to jrpc.null is removed) when
--                                   its `status` is in the set `from` (any
--                                   status when `from` is nil); returns the
--                                   record after, and whether it changed;
--                                   nil when there is no such record
--   store:delete(id)                forget it
--   store:list()                    the ids of the records held
--
-- Records are values: the caller changes one only through `update`, and a
-- store may return copies.
local core = require "jrpc.core"
local options = require "jrpc.options"

local M = {}

--- The names `M.memory{...}` takes.
M.OPTIONS = options.set{ "max_tasks", "clock" }

--- The most records a memory store holds unless told otherwise.
M.MAX_TASKS = 1000

local null = core.null

local Memory = {}
Memory.__index = Memory

--- An in-memory store: `{max_tasks? (default 1000: a put past it is
--- refused with "full"), clock? (seconds, default jrpc.core.now)}`.
---@param opts? table
---@return table store
function M.memory(opts)
  opts = options.check("task_store.memory", opts, 3, M.OPTIONS)
  local max = opts.max_tasks or M.MAX_TASKS
  if type(max) ~= "number" or max < 1 or max % 1 ~= 0 then
    error("task_store.memory: max_tasks must be an integer >= 1", 2)
  end
  if opts.clock ~= nil and type(opts.clock) ~= "function" then
    error("task_store.memory: clock must be a function", 2)
  end
  return setmetatable({ records = {}, expires = {}, count = 0, max = max, clock = opts.clock or core.now },
    Memory)
end

-- A record whose time is up is gone, whether or not anyone asked since.
local function expired(self, id)
  local at = self.expires[id]
  return at ~= nil and self.clock() >= at
end

function Memory:delete(id)
  if self.records[id] ~= nil then
    self.records[id], self.expires[id] = nil, nil
    self.count = self.count - 1
  end
end

-- Forget every expired record (a full store first makes room this way:
-- so memory stays bounded by max_tasks without a timer).
local function sweep(self)
  local now = self.clock()
  for id, at in pairs(self.expires) do
    if now >= at then self:delete(id) end
  end
end

function Memory:put(id, record, ttl_ms)
  if type(id) ~= "string" or type(record) ~= "table" then error("task_store: put(id, record, ttl_ms)", 2) end
  if type(ttl_ms) ~= "number" or ttl_ms <= 0 then error("task_store: ttl_ms must be a number > 0", 2) end
  if self.records[id] == nil then
    if self.count >= self.max then sweep(self) end
    if self.count >= self.max then return nil, "full" end
    self.count = self.count + 1
  end
  self.records[id], self.expires[id] = record, self.clock() + ttl_ms / 1000
  return true
end

function Memory:get(id)
  if expired(self, id) then self:delete(id) end
  return self.records[id]
end

function Memory:update(id, changes, from)
  local record = self:get(id)
  if record == nil then return nil end
  if from ~= nil and not from[record.status] then return record, false end
  for k, v in pairs(changes) do
    if v == null then record[k] = nil else record[k] = v end
  end
  return record, true
end

function Memory:list()
  sweep(self)
  local ids = {}
  for id in pairs(self.records) do ids[#ids + 1] = id end
  table.sort(ids)
  return ids
end

return M
