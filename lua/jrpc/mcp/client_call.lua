--- One call of the MCP client, from the first request to its outcome: the
-- request's timeout (which progress may extend, up to a hard maximum), its
-- progress token and callback, the handle that cancels it, and the
-- multi-round-trip loop (`input_required` answered, then retried with a
-- new id, the server's `requestState` echoed byte for byte).
--
-- A call runs in a coroutine and waits like a blocking call. It owns its
-- own state (the `Call` table); the progress routes of a client (token to
-- call) belong to this module too (per client).
local core = require "jrpc.core"
local workers = require "jrpc.workers"
local errors = require "jrpc.errors"
local protocol = require "jrpc.mcp.protocol"
local input = require "jrpc.mcp.client_input"
local options = require "jrpc.options"

-- The era's part, required when first used: it requires this module.
local function era() return require "jrpc.mcp.client_era" end

local M = {}

M.DEFAULT_MAX_ROUNDS = 8

--- The names of a call's options (call_tool and the others).
M.OPTIONS = options.set{ "timeout", "max_timeout", "on_progress", "max_rounds", "on_handle",
  "extend_on_progress", "task" }

--- The tasks extension's identifier: a call with option `task` declares it,
--- and then accepts the `resultType` of a task.
M.TASKS = "io.modelcontextprotocol/tasks"
M.TASK_RESULT = "task"

-- Per client: `calls` (progress token -> call) and `tokens` (minted so far).
local routes = setmetatable({}, { __mode = "k" })

local function routes_of(client)
  local r = routes[client]
  if r == nil then
    r = { calls = {}, tokens = 0 }
    routes[client] = r
  end
  return r
end

-- The MCP wire member of a request's metadata.
local META = "_meta"

---@class jrpc.mcp.CallHandle
---@field id integer|string|nil  the id of the request in flight (a new one each round)
local Handle = {}
Handle.__index = Handle

---@class jrpc.mcp.Call
local Call = {}
Call.__index = Call

-- {======================================================================
-- Waiting in a coroutine for a callback
-- =======================================================================

--- In a coroutine: run `start(done)` and wait until `done(err, result)`;
--- returns result, err. A `done` that comes at once (inside `start`) is
--- kept, not woken.
---@param log fun(msg: string)
---@param start fun(done: fun(err: any, result: any))
function M.await(log, start)
  local co = workers.current() or error("jrpc.mcp.client: a call waits in a coroutine", 3)
  return workers.await(co, log, start)
end

-- }======================================================================

-- {======================================================================
-- Timeout and progress
-- =======================================================================

local function stop_timer(call)
  if call.timer then call.transport:cancel_timer(call.timer) end
  call.timer = nil
end

-- The request in flight gave up on: the transport settles it ("cancelled"),
-- and `round` reports `why` instead.
local function give_up(call, why)
  call.why = call.why or why
  if call.id ~= nil then call.transport:cancel(call.id, why.message) end
end

-- Arm the timer for `seconds` (false: none), never past the round's hard maximum.
local function arm(call, seconds)
  stop_timer(call)
  if not seconds and not call.hard_deadline then return end
  local now = call.transport:now()
  if call.hard_deadline then seconds = math.min(seconds or math.huge, call.hard_deadline - now) end
  if seconds < 0 then seconds = 0 end
  call.timer = call.transport:after(seconds, function()
    call.timer = nil
    give_up(call, errors.timeout())
  end)
end

--- A `notifications/progress` for this client: to the call that minted its
--- token, and no other (unknown tokens are dropped).
---@param client table
---@param params table
function M.route_progress(client, params)
  local call = type(params) == "table" and routes_of(client).calls[params.progressToken]
  if not call then return end
  if call.extend and call.id ~= nil then arm(call, call.timeout) end
  if call.on_progress then
    local ok, err = pcall(call.on_progress, params.progress, params.total, params.message, params)
    if not ok then call.log("progress callback failed: " .. tostring(err)) end
  end
end

local function mint_token(client)
  local r = routes_of(client)
  r.tokens = r.tokens + 1
  return "jrpc-progress-" .. r.tokens
end

-- }======================================================================

-- {======================================================================
-- One round, and the MRTR loop
-- =======================================================================

local function copy(t)
  local out = {}
  for k, v in pairs(t or {}) do out[k] = v end
  return out
end

-- The request's params for this round: the caller's, the era's `_meta`,
-- the progress token, and only this round's MRTR fields.
local function round_params(call, retry)
  local params = copy(call.params)
  local meta = era().meta(call.client)
  if call.token then
    meta = meta or {}
    meta[protocol.keys.progress_token] = call.token
  end
  if call.task and not meta and call.method == "tools/call" then
    -- 2025-11-25 (the experimental core tasks): the request asks for a task
    params.task = setmetatable({}, core.object_mt)
  end
  if call.task and meta then
    -- this request (only) declares the tasks extension, so the server may
    -- answer with a task
    local caps = copy(meta[protocol.keys.client_capabilities])
    local ext = copy(caps.extensions)
    ext[M.TASKS] = setmetatable({}, core.object_mt)
    caps.extensions = setmetatable(ext, core.object_mt)
    meta[protocol.keys.client_capabilities] = setmetatable(caps, core.object_mt)
  end
  params[META] = meta
  if retry then
    params.inputResponses = retry.responses
    params.requestState = retry.state
  end
  return params
end

-- Send one request and wait for its outcome; -32022 is retried once with a
-- version from the server's `supported` list (the client caches it).
local function round(call, retry)
  local result, err
  for attempt = 1, 2 do
    if call.why then return nil, call.why end
    -- the hard maximum bounds each request, not the user's time answering between rounds
    if call.max_timeout then call.hard_deadline = call.transport:now() + call.max_timeout end
    arm(call, call.timeout)
    result, err = M.await(call.log, function(done)
      call.id = call.transport:request(call.method, round_params(call, retry), done)
      call.handle.id = call.id
    end)
    call.id = nil
    stop_timer(call)
    if call.why then return nil, call.why end
    if not (err and attempt == 1 and era().retry_version(call.client, err)) then break end
  end
  return result, err
end

-- Answer every input request of an `input_required` result.
local function answers(call, requests)
  local responses = {}
  for key, req in pairs(requests) do
    if type(req) ~= "table" or type(req.method) ~= "string" then
      return nil, errors.new("invalid_result", "input request " .. tostring(key) .. " has no method")
    end
    local answer, err = input.answer(input.of(call.client), req.method, req.params)
    if not answer then return nil, err end
    responses[key] = answer
  end
  return responses
end

--- A 2025-11-25 CreateTaskResult (`{task = {taskId, status, ttl,
--- pollInterval, ...}}`) in the 2026-07-28 shape the client gives for both
--- eras: flat, `resultType = "task"`, `ttlMs`, `pollIntervalMs`.
---@param result table
---@return table
function M.legacy_task(result)
  local task, out = result.task, { resultType = M.TASK_RESULT, _meta = result._meta }
  for k, v in pairs(task) do out[k] = v end
  out.ttlMs, out.pollIntervalMs, out.ttl, out.pollInterval = task.ttl, task.pollInterval, nil, nil
  return out
end

-- The MRTR loop: the result of the call, or nil and an error.
local function run(call)
  local retry
  for _ = 1, call.max_rounds do
    local result, err = round(call, retry)
    if err then return nil, err end
    -- a task is a result the client accepts once it declared the extension
    -- (or, 2025-11-25, asked for one: the task comes in a `task` member)
    if call.task and type(result) == "table" then
      if result.resultType == M.TASK_RESULT then return result end
      if type(result.task) == "table" and result.task.taskId ~= nil then return M.legacy_task(result) end
    end
    local kind, why = protocol.result_kind(result)
    if not kind then return nil, errors.new("invalid_result", call.method .. ": " .. why, result) end
    if kind == protocol.result_types.complete then return result end
    local requests = result.inputRequests
    local responses, aerr = answers(call, type(requests) == "table" and requests or {})
    if not responses then return nil, aerr end
    if call.why then return nil, call.why end
    -- only what the server sent comes back: requestState byte for byte, or none
    retry = { responses = next(responses) ~= nil and responses or nil, state = result.requestState }
  end
  return nil, errors.new("too_many_rounds", ("%s: still input_required after %d rounds (option max_rounds)")
    :format(call.method, call.max_rounds))
end

-- }======================================================================

--- Cancel the call: the request in flight is cancelled (on stdio the
--- server gets notifications/cancelled) and the call settles at once with
--- code "cancelled"; a late result is dropped.
---@param reason? string
---@return boolean  false when the call had already settled
function Handle:cancel(reason)
  local call = self._call
  if call.done then return false end
  give_up(call, errors.cancelled(reason or "cancelled by the client"))
  -- a callback caller learns at once, even while a round's input is asked for
  if call.on_cancel then call.on_cancel(call.why) end
  return true
end

--- True once the call settled.
---@return boolean
function Handle:settled()
  return self._call.done == true
end

--- A new call of `method` with `params` (no `_meta`: each round adds it).
--- `opts`: timeout (seconds; default the client's), max_timeout (the hard
--- bound progress cannot extend past), on_progress(progress, total,
--- message, params), max_rounds, extend_on_progress (default true), task
--- (declare the tasks extension on this request: the result may be a task).
---@param client table
---@param method string
---@param params table|nil
---@param opts? table
---@return jrpc.mcp.Call
function M.new(client, method, params, opts)
  opts = opts or {}
  local function default(name) return client:option(name) end
  local call = setmetatable({
    client = client, transport = client:transport(), log = function(msg) client:log(msg) end,
    method = method, params = params,
    timeout = opts.timeout == nil and default("timeout") or opts.timeout,
    max_timeout = opts.max_timeout == nil and default("max_timeout") or opts.max_timeout,
    max_rounds = opts.max_rounds or default("max_rounds") or M.DEFAULT_MAX_ROUNDS,
    on_progress = opts.on_progress, extend = opts.extend_on_progress ~= false, task = opts.task == true,
  }, Call)
  call.handle = setmetatable({ _call = call }, Handle)
  return call
end

--- Run the call in the running coroutine: its result, or nil and an error.
---@return table|nil result
---@return jrpc.Error|nil err
function Call:run()
  local client = self.client
  if self.on_progress then
    self.token = mint_token(client)
    routes_of(client).calls[self.token] = self
  end
  local ok, result, err = pcall(run, self)
  if self.token then routes_of(client).calls[self.token] = nil end
  stop_timer(self)
  self.done = true
  if not ok then error(result, 0) end
  return result, err
end

return M
