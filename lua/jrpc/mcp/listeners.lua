--- Who hears about changes to what a server offers, in both eras:
--   * modern `subscriptions/listen` streams: one long request each, whose
--     handler waits here; every notification on it carries the listen id
--     in `_meta["io.modelcontextprotocol/subscriptionId"]`;
--   * legacy connections (after `initialize`): list_changed to all, and
--     `resources/updated` to those that sent `resources/subscribe` (what
--     they subscribed to is session.lua's; this module only asks).
-- This module owns both sets. A stream ends when the server ends it (its
-- handler is woken and answers), or when its request is cancelled or its
-- peer closes: the peer then never wakes the handler, so dead entries are
-- swept whenever the set is used (a listen, a change, a count). The set
-- thus never holds more than the live entries plus those that ended since.
local peer_mod = require "jrpc.peer"
local core = require "jrpc.core"
local workers = require "jrpc.workers"
local protocol = require "jrpc.mcp.protocol"

local M = {}

local SUBSCRIPTION_ID = protocol.keys.subscription_id
local ACKNOWLEDGED = "notifications/subscriptions/acknowledged"
local UPDATED = "notifications/resources/updated"
local TASKS = "notifications/tasks"

--- The list kinds whose changes are notified, with the listen filter field
--- that asks for each and the notification it gets.
M.KINDS = {
  tools = { filter = "toolsListChanged", method = "notifications/tools/list_changed" },
  prompts = { filter = "promptsListChanged", method = "notifications/prompts/list_changed" },
  resources = { filter = "resourcesListChanged", method = "notifications/resources/list_changed" },
}

local Listeners = {}
Listeners.__index = Listeners

--- An empty set.
---@return table
function M.new()
  return setmetatable({ streams = {}, legacy = {} }, Listeners)
end

local function invalid(what)
  error(protocol.invalid_params("Invalid params: " .. what), 0)
end

-- The filter of a listen request, checked: the kinds it wants, the URIs it
-- subscribes to, and the acknowledged subset (we honour all of it: every
-- registration change is notified, and any URI may be announced updated).
local function filter(notifications)
  if type(notifications) ~= "table" or notifications[1] ~= nil then
    invalid("notifications must be an object")
  end
  local want, uris, honoured = {}, {}, setmetatable({}, core.object_mt)
  for kind, k in pairs(M.KINDS) do
    local v = notifications[k.filter]
    if v ~= nil and type(v) ~= "boolean" then invalid(k.filter .. " must be a boolean") end
    if v then want[kind], honoured[k.filter] = true, true end
  end
  local list = notifications.resourceSubscriptions
  if list ~= nil then
    if type(list) ~= "table" then invalid("resourceSubscriptions must be an array of URIs") end
    local kept = setmetatable({}, core.array_mt)
    for i, uri in ipairs(list) do
      if type(uri) ~= "string" then invalid("resourceSubscriptions must be an array of URIs") end
      uris[uri], kept[i] = true, uri
    end
    honoured.resourceSubscriptions = kept
  end
  -- the tasks extension: the tasks whose status changes this stream hears
  local ids, task_ids = notifications.taskIds, {}
  if ids ~= nil then
    if type(ids) ~= "table" then invalid("taskIds must be an array of task ids") end
    local kept = setmetatable({}, core.array_mt)
    for i, id in ipairs(ids) do
      if type(id) ~= "string" then invalid("taskIds must be an array of task ids") end
      task_ids[id], kept[i] = true, id
    end
    honoured.taskIds = kept
  end
  return want, uris, honoured, task_ids
end

local function tag(id) return { [SUBSCRIPTION_ID] = id } end

-- A stream is live until ended here, cancelled by the client (stdio:
-- notifications/cancelled; HTTP: the stream closed) or its peer closed.
local function live(stream)
  return not stream.ended and not stream.ctx:cancelled() and not stream.ctx.peer:closed()
end

-- A legacy connection hears changes once initialized, until it closes.
local function legacy_live(peer) return not peer:closed() end

--- Drop the streams and connections that ended (see the header comment).
function Listeners:sweep()
  for stream in pairs(self.streams) do
    if not live(stream) then self.streams[stream] = nil end
  end
  for peer in pairs(self.legacy) do
    if not legacy_live(peer) then self.legacy[peer] = nil end
  end
end

--- How many listen streams and legacy connections are live.
---@return integer streams
---@return integer legacy
function Listeners:count()
  self:sweep()
  local s, l = 0, 0
  for _ in pairs(self.streams) do s = s + 1 end
  for _ in pairs(self.legacy) do l = l + 1 end
  return s, l
end

--- Serve `subscriptions/listen` for the MCP context `ctx`: acknowledge,
--- then wait (in the handler's worker) until `end_all`; returns the
--- graceful end's result. A cancelled stream never returns (nor answers).
---@param params table
---@param ctx jrpc.mcp.Context
---@return table result
function Listeners:listen(params, ctx)
  local want, uris, honoured, task_ids = filter(params.notifications)
  local co = workers.current()
  if co == nil then error("subscriptions/listen: the handler is not in a worker coroutine", 0) end
  self:sweep()
  local stream = { ctx = ctx, want = want, uris = uris, task_ids = task_ids, co = co, ended = false }
  self.streams[stream] = true
  -- first on the stream: nothing can be emitted between these two lines
  ctx.peer:notify(ACKNOWLEDGED, { notifications = honoured, _meta = tag(ctx.id) })
  -- (the acknowledgement itself may have cancelled it: its stream refused)
  while live(stream) do
    -- only end_all wakes us; anything else that resumes us is not ours
    if not workers.wait() then break end
  end
  self.streams[stream] = nil
  return { _meta = tag(ctx.id) }
end

--- A legacy connection (`peer`, its session.lua state) chose the era.
---@param peer jrpc.Peer
---@param session table
function Listeners:add_legacy(peer, session)
  self:sweep()
  self.legacy[peer] = session
end

-- The live streams and initialized legacy connections, as lists taken
-- before any is told (a notification may end one: the sets must not
-- change under `pairs`).
function Listeners:snapshot()
  self:sweep()
  local streams, legacy = {}, {}
  for stream in pairs(self.streams) do streams[#streams + 1] = stream end
  for peer, session in pairs(self.legacy) do
    if session.initialized then legacy[#legacy + 1] = { peer = peer, session = session } end
  end
  return streams, legacy
end

--- The list of `kind` ("tools", "prompts" or "resources") changed.
---@param kind string
function Listeners:list_changed(kind)
  local method = M.KINDS[kind].method
  local streams, legacy = self:snapshot()
  for _, stream in ipairs(streams) do
    if stream.want[kind] and live(stream) then
      stream.ctx.peer:notify(method, { _meta = tag(stream.ctx.id) })
    end
  end
  for _, l in ipairs(legacy) do l.peer:notify(method) end
end

--- The resource `uri` changed: tell those subscribed to it.
---@param uri string
function Listeners:updated(uri)
  local streams, legacy = self:snapshot()
  for _, stream in ipairs(streams) do
    if stream.uris[uri] and live(stream) then
      stream.ctx.peer:notify(UPDATED, { uri = uri, _meta = tag(stream.ctx.id) })
    end
  end
  for _, l in ipairs(legacy) do
    if l.session:subscribed(uri) then l.peer:notify(UPDATED, { uri = uri }) end
  end
end

--- A task's status changed (tasks.lua): the streams whose listen filter
--- names it in `taskIds` hear `notifications/tasks` with `task` (the task
--- as tasks/get shows it).
---@param task table
function Listeners:task_status(task)
  local streams = self:snapshot()
  for _, stream in ipairs(streams) do
    if stream.task_ids[task.taskId] and live(stream) then
      local params = { _meta = tag(stream.ctx.id) }
      for k, v in pairs(task) do params[k] = v end
      stream.ctx.peer:notify(TASKS, params)
    end
  end
end

--- End every live stream (of `peer` only, if given) gracefully: each
--- handler wakes and answers its result (`resultType` "complete", the
--- subscription id in `_meta`).
---@param peer? jrpc.Peer
function Listeners:end_all(peer)
  local streams = self:snapshot()
  for _, stream in ipairs(streams) do
    if peer == nil or stream.ctx.peer == peer then
      stream.ended = true
      workers.wake(stream.co, function(msg) peer_mod.link(stream.ctx.peer):log(msg) end)
    end
  end
end

return M
