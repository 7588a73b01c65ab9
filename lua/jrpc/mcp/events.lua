--- The changes a server announces to its listen streams, as events that
-- may go to every worker of a deployment: a list changed (a tool, prompt
-- or resource registered or removed), a resource was updated, a task's
-- status changed. Each is delivered to this process's listeners
-- (listeners.lua) at once, then handed to the server's `events` bus, if
-- it has one, which carries it to the other processes; each of them
-- delivers what it receives to its own listeners. Without a bus (the
-- default) an event stays in its process.
--
-- An event is a table of JSON values, so a bus may send it as JSON:
--   {type = "list_changed", kind = "tools" | "prompts" | "resources"}
--   {type = "resource_updated", uri = URI}
--   {type = "task", task = the task as tasks/get shows it}
--
-- A bus is any table with two methods:
--   bus:start(deliver, name)  called once, by jrpc.mcp.server, with the
--                             function that delivers an event received
--                             from elsewhere to this process's listeners
--                             (it returns false for an event it does not
--                             know) and the server's name
--   bus:publish(event)        carry `event` to the other processes; must
--                             return at once (it is called inside handlers
--                             and registrations) and never deliver it back
--                             to this process (it already was)
-- jrpc.mcp.events_redis is one, on Redis pub/sub.
local listeners_mod = require "jrpc.mcp.listeners"

local M = {}

---@class jrpc.mcp.Events
local Hub = {}
Hub.__index = Hub

--- The events of a server: `listeners` its listeners.lua set, `bus` the
--- server option `events` (nil: this process only), `name` the server's.
---@param listeners table
---@param bus? table
---@param name string
---@param level integer  where option errors are reported
---@return jrpc.mcp.Events
function M.new(listeners, bus, name, level)
  if bus ~= nil and (type(bus) ~= "table" or type(bus.start) ~= "function" or type(bus.publish) ~= "function") then
    error("jrpc.mcp.server: events must be a table with the methods start and publish (see jrpc.mcp.events)", level)
  end
  local self = setmetatable({ listeners = listeners, bus = bus }, Hub)
  if bus then bus:start(function(event) return self:deliver(event) end, name) end
  return self
end

--- Deliver `event` to this process's listeners; false when it is no event
--- of a known shape (a newer worker's: ignored).
---@param event table
---@return boolean delivered
function Hub:deliver(event)
  if type(event) ~= "table" then return false end
  local kind, uri, task = event.kind, event.uri, event.task
  if event.type == "list_changed" and listeners_mod.KINDS[kind] then
    self.listeners:list_changed(kind)
  elseif event.type == "resource_updated" and type(uri) == "string" then
    self.listeners:updated(uri)
  elseif event.type == "task" and type(task) == "table" and type(task.taskId) == "string" then
    self.listeners:task_status(task)
  else
    return false
  end
  return true
end

-- Here first, then to the others.
local function emit(self, event)
  self:deliver(event)
  if self.bus then self.bus:publish(event) end
end

--- The list of `kind` ("tools", "prompts" or "resources") changed.
---@param kind string
function Hub:list_changed(kind) emit(self, { type = "list_changed", kind = kind }) end

--- The resource `uri` changed.
---@param uri string
function Hub:updated(uri) emit(self, { type = "resource_updated", uri = uri }) end

--- A task's status changed: `task` as tasks/get shows it.
---@param task table
function Hub:task_status(task) emit(self, { type = "task", task = task }) end

return M
