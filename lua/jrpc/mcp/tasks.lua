--- Tasks (the 2026-07-28 extension `io.modelcontextprotocol/tasks`): a
-- `tools/call` of a tool that supports tasks, from a client that declared
-- the extension, answers at once with a task (`resultType` "task") while
-- the handler goes on in a coroutine of its own; the client polls
-- `tasks/get`, which inlines the tool's result when it is done (or the
-- protocol error when it failed), answers a task's questions with
-- `tasks/update` and stops it with `tasks/cancel`.
--
-- A task's record (status, times, result) is in the store (task_store.lua),
-- so another store may share it between processes; what cannot be shared
-- stays here: the coroutine that runs the handler and whether it waits for
-- answers. Records expire `ttl_ms` after they are made; the store forgets
-- them then, and their ids are unknown (-32602) from then on.
local core = require "jrpc.core"
local errors = require "jrpc.errors"
local peer_mod = require "jrpc.peer"
local options = require "jrpc.options"
local workers = require "jrpc.workers"
local protocol = require "jrpc.mcp.protocol"
local mrtr = require "jrpc.mcp.mrtr"
local task_store = require "jrpc.mcp.task_store"

local M = {}

--- The extension's identifier (in capabilities.extensions).
M.EXTENSION = "io.modelcontextprotocol/tasks"

--- The `resultType` of a result that is a task.
M.RESULT_TYPE = "task"

--- A tool's `task_support`: whether a call may (optional), must
--- (required) or must not (forbidden, the default) run as a task.
M.SUPPORT = { forbidden = true, optional = true, required = true }

--- The names the server option `tasks` takes.
M.OPTIONS = options.set{ "ttl_ms", "poll_interval_ms", "max_tasks", "store", "notify", "lease_ms" }

--- Defaults: a task is kept an hour; clients are asked to poll once a
--- second; with a shared store, a task whose process has not renewed its
--- lease for 30 s is taken for lost.
M.DEFAULTS = { ttl_ms = 3600000, poll_interval_ms = 1000, lease_ms = 30000 }

--- The shortest `lease_ms`: it is renewed every third of it.
M.MIN_LEASE_MS = 300

--- The `error` of a task whose process stopped (its lease ran out).
M.LOST = { code = -32603, message = "Task lost: the process running it stopped",
  data = { reason = "lease expired" } }

--- The longest `ttl_ms` allowed: a week.
M.MAX_TTL_MS = 7 * 24 * 3600 * 1000

local TERMINAL = { completed = true, failed = true, cancelled = true }
local ACTIVE = { working = true, input_required = true }
local null = core.null

local function fail(err) error(err, 0) end
local function invalid(message) return protocol.invalid_params("Invalid params: " .. message) end

local function object() return setmetatable({}, core.object_mt) end

local function hex(s)
  return (s:gsub(".", function(c) return ("%02x"):format(c:byte()) end))
end

-- Wall-clock time in the ISO 8601 form the wire carries.
local function now_iso() return os.date("!%Y-%m-%dT%H:%M:%SZ") end

local function positive_integer(v, max)
  return type(v) == "number" and v >= 1 and v % 1 == 0 and v <= max
end

--- The client capabilities a task-required tool asks for (-32021's data).
---@return table
function M.required_capabilities()
  return { extensions = { [M.EXTENSION] = object() } }
end

--- True when the client declared the extension (on this request).
---@param client table  the request's client (`{capabilities, ...}`)
---@return boolean
function M.declared(client)
  local caps = client and client.capabilities
  local ext = type(caps) == "table" and caps.extensions
  return type(ext) == "table" and ext[M.EXTENSION] ~= nil
end

---@class jrpc.mcp.Tasks
local Tasks = {}
Tasks.__index = Tasks

--- The task manager of a server, from its option `tasks` (see docs/mcp.md):
--- `{ttl_ms?, poll_interval_ms?, max_tasks? (of the default store), store?,
--- notify? (default true: notifications/tasks to the listen streams that
--- name the task in their filter's taskIds), lease_ms? (with a store)}`.
--- `listeners` is where the notifications go: the server's events
--- (events.lua; its task_status).
---@param opts? table
---@param listeners table
---@param level integer  where option errors are reported
---@return jrpc.mcp.Tasks
function M.new(opts, listeners, level)
  opts = options.check("jrpc.mcp.server: tasks", opts, level, M.OPTIONS)
  local ttl = opts.ttl_ms or M.DEFAULTS.ttl_ms
  if not positive_integer(ttl, M.MAX_TTL_MS) then
    error(("jrpc.mcp.server: tasks.ttl_ms must be an integer from 1 to %d"):format(M.MAX_TTL_MS), level)
  end
  local poll = opts.poll_interval_ms or M.DEFAULTS.poll_interval_ms
  if not positive_integer(poll, ttl) then
    error("jrpc.mcp.server: tasks.poll_interval_ms must be an integer from 1 to ttl_ms", level)
  end
  local store = opts.store
  if store ~= nil and opts.max_tasks ~= nil then
    error("jrpc.mcp.server: tasks.max_tasks is the default store's; give it to your store instead", level)
  end
  if store == nil then
    local max = opts.max_tasks or task_store.MAX_TASKS
    if not positive_integer(max, math.huge) then
      error("jrpc.mcp.server: tasks.max_tasks must be an integer >= 1", level)
    end
    store = task_store.memory{ max_tasks = max }
  else
    for _, name in ipairs{ "get", "put", "update", "delete", "list" } do
      if type(store[name]) ~= "function" then
        error("jrpc.mcp.server: tasks.store lacks the method " .. name .. " (see jrpc.mcp.task_store)", level)
      end
    end
  end
  if opts.notify ~= nil and type(opts.notify) ~= "boolean" then
    error("jrpc.mcp.server: tasks.notify must be a boolean", level)
  end
  local lease = opts.lease_ms
  if lease ~= nil and opts.store == nil then
    error("jrpc.mcp.server: tasks.lease_ms is for a shared store (tasks.store)", level)
  end
  lease = lease or M.DEFAULTS.lease_ms
  if not positive_integer(lease, math.huge) or lease < M.MIN_LEASE_MS then
    error(("jrpc.mcp.server: tasks.lease_ms must be an integer >= %d"):format(M.MIN_LEASE_MS), level)
  end
  -- running[id]: this process's part of a task: {co, cancelled, wake, log};
  -- shared: a store of the user's, which other processes may change
  return setmetatable({ store = store, shared = opts.store ~= nil, ttl_ms = ttl, poll_ms = poll,
    notify = opts.notify ~= false, lease_ms = lease, beating = false,
    listeners = listeners, running = {} }, Tasks)
end

-- {======================================================================
-- Wire shapes
-- =======================================================================

-- The Task fields every shape carries.
local function task_fields(record, out)
  out.taskId, out.status, out.statusMessage = record.taskId, record.status, record.statusMessage
  out.createdAt, out.lastUpdatedAt = record.createdAt, record.lastUpdatedAt
  out.ttlMs, out.pollIntervalMs = record.ttlMs, record.pollIntervalMs
  return out
end

-- A `tasks/get` answer (DetailedTask): the task, with its questions while
-- it waits for answers, its result when completed, its error when failed.
local function detailed(record)
  local out = task_fields(record, {})
  if record.status == "input_required" then out.inputRequests = record.inputRequests end
  if record.status == "completed" then out.result = record.result end
  if record.status == "failed" then out.error = record.error end
  return out
end

-- Tell listen streams (when asked to) what became of a task.
local function announce(self, record)
  if self.notify and record then self.listeners:task_status(detailed(record)) end
end

-- Change task `id` when it is still active; returns the record after.
local function change(self, id, changes)
  changes.lastUpdatedAt = now_iso()
  local record, changed = self.store:update(id, changes, ACTIVE)
  if changed then announce(self, record) end
  return record, changed
end

-- }======================================================================

-- {======================================================================
-- The context a task's handler gets
-- =======================================================================

-- luv, when there is one: a handler waiting for answers through a shared
-- store looks at it every poll interval, since the tasks/update may reach
-- another process, which cannot wake it.
local has_luv, luv = pcall(require, "luv")

-- Wait (in the task's coroutine) until `wake(run)`, or a poll interval
-- when the store is shared; false when something else resumed it.
local function wait_for_answers(tasks, run)
  local timer
  local _, err = workers.await(run.co, run.log, function(done)
    run.wake = done
    if tasks.shared and has_luv then
      timer = luv.new_timer()
      timer:start(tasks.poll_ms, 0, function() done(nil, "poll") end)
    end
  end)
  run.wake = nil
  if timer and not timer:is_closing() then timer:close() end
  return err == nil
end

-- Wake a task's handler that waits in wait_for_answers.
local function wake(run)
  if run and run.wake then run.wake(nil, "woken") end
end

-- }======================================================================

-- {======================================================================
-- Leases: with a shared store (on luv), the process that runs a task
-- renews its `leaseUntil` (wall-clock ms) every third of lease_ms while the
-- handler runs; a process that finds an active task of another past its
-- lease marks it failed (M.LOST): the process running it died, or stalled
-- longer than the lease, and nothing will finish it. Processes sharing a
-- store must agree on the time to well within lease_ms.
-- =======================================================================

local function leased(self) return self.shared and has_luv end

local function now_ms()
  local s, us = luv.gettimeofday()
  return s * 1000 + math.floor(us / 1000)
end

-- Renew this process's leases until none of its tasks runs.
local function renew_all(self, co)
  while next(self.running) ~= nil do
    workers.await(co, function() end, function(done)
      local timer = luv.new_timer()
      timer:start(math.floor(self.lease_ms / 3), 0, function()
        timer:close()
        done(nil, true)
      end)
      timer:unref()  -- the handlers, not their leases, keep the loop running
    end)
    local ids = {}
    for id in pairs(self.running) do ids[#ids + 1] = id end
    local until_ms = now_ms() + self.lease_ms
    for _, id in ipairs(ids) do
      local ok, err = pcall(self.store.update, self.store, id, { leaseUntil = until_ms }, ACTIVE)
      local run = self.running[id]
      if not ok and run then
        run.log(("task %s: lease not renewed: %s"):format(id, tostring(type(err) == "table" and err.message or err)))
      end
    end
  end
end

local function heartbeat(self)
  if self.beating or not leased(self) then return end
  self.beating = true
  local co
  co = coroutine.create(function()
    pcall(renew_all, self, co)
    self.beating = false
  end)
  coroutine.resume(co)
end

-- `record` (active, read from the store) as it is once its lease is
-- checked: failed with M.LOST when another process held it and let the
-- lease run out.
local function unless_lost(self, record)
  local id, until_ms = record.taskId, record.leaseUntil
  if not (leased(self) and ACTIVE[record.status] and type(until_ms) == "number") then return record end
  if self.running[id] or now_ms() <= until_ms then return record end
  local after = change(self, id, { status = "failed", error = M.LOST, inputRequests = null })
  return after or record
end

---@class jrpc.mcp.TaskContext
local TaskCtx = {}
TaskCtx.__index = TaskCtx

--- True once the task was cancelled (tasks/cancel, here or through
--- another process sharing the store) or is gone (expired).
---@return boolean
function TaskCtx:cancelled()
  local run = self._tasks.running[self.task_id]
  if run and run.cancelled then return true end
  local record = self._tasks.store:get(self.task_id)
  return record == nil or record.status == "cancelled"
end

--- A task has no stream of its own: progress and log messages are not sent.
---@return boolean sent  always false
function TaskCtx.progress() return false end
---@return boolean sent  always false
function TaskCtx.log() return false end

--- A task asks the client with `ctx:input`, not with requests: nil and
--- an "unsupported" error.
---@param method string
---@return nil
---@return jrpc.Error err
function TaskCtx:request(method)
  return nil, errors.new("unsupported", ("task %s cannot send %s: ask with ctx:input"):format(self.task_id,
    tostring(method)))
end

--- Set the task's `statusMessage` (what a poll shows while it works).
---@param message string
function TaskCtx:status(message)
  if type(message) ~= "string" then error("ctx:status: message must be a string", 2) end
  change(self._tasks, self.task_id, { statusMessage = message })
end

--- Ask the client and wait for every answer: `requests` maps keys to
--- `{method, params}` as `jrpc.mcp.input_required` takes them. The task
--- shows `input_required` with these `inputRequests` until `tasks/update`
--- has answered them all (in one update or several). Returns the answers
--- by key, or nil and why ("cancelled", or "no loop" where nothing could
--- wake the handler).
---@param requests table
---@return table|nil responses
---@return string|nil why
function TaskCtx:input(requests)
  if type(requests) ~= "table" or next(requests) == nil then
    error("ctx:input: expected a table of input requests", 2)
  end
  local tasks, id = self._tasks, self.task_id
  local run = tasks.running[id]
  if not run or workers.current() ~= run.co then return nil, "no loop" end
  local shaped = mrtr.input_required(requests).inputRequests
  local record, changed = change(tasks, id, { status = "input_required", inputRequests = shaped,
    answers = object() })
  if not changed then return nil, "cancelled" end
  while record and record.status == "input_required" and not run.cancelled do
    if not wait_for_answers(tasks, run) then break end
    record = tasks.store:get(id)
  end
  if not record or record.status ~= "working" or run.cancelled then return nil, "cancelled" end
  local answers = record.answers
  tasks.store:update(id, { answers = null })
  return answers
end

-- }======================================================================

-- {======================================================================
-- Running a task
-- =======================================================================

-- The `error` of a failed task, from what the handler raised.
local function wire_error(err)
  if errors.is_wire_error(err) then return { code = err.code, message = err.message, data = err.data } end
  return { code = protocol.codes.INTERNAL_ERROR, message = "Internal error" }
end

-- Record how the handler ended (unless the task ended first: cancelled).
local function settle(self, id, ok, result, log)
  if ok and type(result) == "table" and result.resultType == protocol.result_types.input_required then
    ok, result = false, errors.new(protocol.codes.INTERNAL_ERROR,
      "A task cannot answer input_required once it runs: ask with ctx:input")
  end
  if ok then
    result.resultType = result.resultType or protocol.result_types.complete
    change(self, id, { status = "completed", result = result, inputRequests = null })
  else
    if not errors.is_wire_error(result) then log(("task %s failed: %s"):format(id, tostring(result))) end
    change(self, id, { status = "failed", error = wire_error(result), inputRequests = null })
  end
end

--- Start a task for a call of `tool`: `run(ctx)` runs the handler (and
--- raises what it raises); `ctx` is the call's context. The handler begins
--- at once, in a coroutine of its own. Returns the CreateTaskResult once
--- the task is stored, or the handler's own answer when it answers
--- `input_required` before it first waits (MRTR rounds come before the
--- task: the task is then never made).
---@param ctx jrpc.mcp.Context
---@param run fun(ctx: table): table
---@return table result
function Tasks:start(ctx, run)
  local id = hex(assert(core.random_bytes(16)))
  local at = now_iso()
  local record = { taskId = id, status = "working", createdAt = at, lastUpdatedAt = at,
    ttlMs = self.ttl_ms, pollIntervalMs = self.poll_ms }
  if leased(self) then record.leaseUntil = now_ms() + self.lease_ms end
  local ok, why = self.store:put(id, record, self.ttl_ms)
  if not ok then
    fail(errors.new(protocol.codes.INTERNAL_ERROR, "Cannot start a task: " .. tostring(why),
      { reason = why }))
  end
  local tctx = setmetatable({ task_id = id, _tasks = self, meta = ctx.meta, client = ctx.client, era = ctx.era,
    params = ctx.params, peer = ctx.peer, input_responses = ctx.input_responses,
    request_state = ctx.request_state }, TaskCtx)
  local peer = ctx.peer
  local function log(msg) peer_mod.link(peer):log(msg) end
  local entry = { cancelled = false, log = log }
  local started, immediate = false, nil
  entry.co = coroutine.create(function()
    local done, result = pcall(run, tctx)
    self.running[id] = nil
    if not started and done and type(result) == "table"
      and result.resultType == protocol.result_types.input_required then
      immediate = result
      return
    end
    settle(self, id, done, result, log)
  end)
  self.running[id] = entry
  heartbeat(self)
  local resumed, err = coroutine.resume(entry.co)
  started = true
  if not resumed then
    self.running[id] = nil
    settle(self, id, false, err, log)
  end
  if immediate then
    self.store:delete(id)
    return immediate
  end
  -- the handler may have changed the task already (or finished it)
  local now = self.store:get(id) or record
  local out = task_fields(now, {})
  out.resultType = M.RESULT_TYPE
  return out
end

-- }======================================================================

-- {======================================================================
-- The methods: tasks/get, tasks/update, tasks/cancel
-- =======================================================================

-- The task a request names, or raise -32602.
local function named(self, params)
  local id = params.taskId
  if type(id) ~= "string" then fail(invalid("taskId must be a string")) end
  local record = self.store:get(id)
  if not record then fail(invalid("unknown task " .. protocol.quote(id))) end
  return unless_lost(self, record)
end

--- `tasks/get`: the task as it is now.
---@param params table
---@return table
function Tasks:get(params)
  return detailed(named(self, params))
end

--- `tasks/update`: answers to the task's questions, by the keys it asked
--- with. Answers to keys it did not ask (or no longer asks) are ignored;
--- once every question is answered the task works again.
---@param params table
---@return table ack
function Tasks:update(params)
  local record = named(self, params)
  local given = params.inputResponses
  if type(given) ~= "table" or given[1] ~= nil then fail(invalid("inputResponses must be an object")) end
  if record.status ~= "input_required" then return object() end
  local pending, answers, left = {}, {}, false
  for k, v in pairs(record.answers or {}) do answers[k] = v end
  for key, request in pairs(record.inputRequests or {}) do
    if given[key] ~= nil then answers[key] = given[key] else pending[key], left = request, true end
  end
  local changes = { answers = setmetatable(answers, core.object_mt) }
  if left then
    changes.inputRequests = pending
  else
    changes.status, changes.inputRequests = "working", null
  end
  change(self, record.taskId, changes)
  local run = self.running[record.taskId]
  if not left then wake(run) end
  return object()
end

--- `tasks/cancel`: an active task ends as cancelled (its handler sees
--- `ctx:cancelled()`; one waiting for answers wakes); an ended one stays
--- as it is. Either way the answer is an empty result.
---@param params table
---@return table ack
function Tasks:cancel(params)
  local record = named(self, params)
  if TERMINAL[record.status] then return object() end
  change(self, record.taskId, { status = "cancelled", statusMessage = "Cancelled by the client",
    inputRequests = null })
  local run = self.running[record.taskId]
  if run then
    run.cancelled = true
    wake(run)
  end
  return object()
end

-- }======================================================================

return M
