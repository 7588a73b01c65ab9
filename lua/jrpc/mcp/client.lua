--- `jrpc.mcp.client`: an MCP client of both eras on a jrpc.uv loop.
--
--     local client = assert(require("jrpc.mcp.client").connect(loop,
--       { cmd = "lua5.4", args = { "examples/mcp/everything_server.lua" } }))
--     for _, tool in ipairs(assert(client:list_tools())) do print(tool.name) end
--     print(client:call_tool("test_simple_text", {}).content[1].text)
--
-- Every call waits like a blocking call inside a coroutine (returns the
-- result, or nil and a jrpc.Error) and takes a callback `fn(err, result)`
-- outside one. The parts, each the owner of its state:
--   client_era     which era the server speaks (probed once, cached)
--   client_call    one call: timeout, progress, cancel handle, MRTR rounds
--   client_input   the user's elicitation/sampling/roots callbacks
--   client_lists   pagination and the ttlMs cache
--   client_listen  subscriptions/listen
--   client_tasks   waiting for a task (the tasks extension)
--   client_stdio   the stdio transport (its header documents the seam)
--   client_http    the Streamable HTTP transport (client_http_session: legacy sessions)
local core = require "jrpc.core"
local errors = require "jrpc.errors"
local workers = require "jrpc.workers"
local logs = require "jrpc.log"
local options = require "jrpc.options"
local era = require "jrpc.mcp.client_era"
local calls = require "jrpc.mcp.client_call"
local input = require "jrpc.mcp.client_input"
local lists = require "jrpc.mcp.client_lists"
local listens = require "jrpc.mcp.client_listen"
local tasks = require "jrpc.mcp.client_tasks"

local M = {}

M.DEFAULT_TIMEOUT = 60
M.CLIENT_INFO = { name = "jrpc-mcp-client", version = "0.1.0" }

---@class jrpc.mcp.Client
local Client = {}
Client.__index = Client

-- {======================================================================
-- Coroutine or callback
-- =======================================================================

-- Run `job()` (it returns result, err and may wait): here, when the caller
-- is a coroutine and gave no callback; else in a coroutine of its own,
-- ending in `callback(err, result)`. Returns what the job returned, or
-- (callback) `call`'s handle.
local function invoke(client, job, callback, call)
  if callback == nil then
    if not workers.current() then error("jrpc.mcp.client: outside a coroutine, pass a callback", 3) end
    return job()
  end
  if type(callback) ~= "function" then error("jrpc.mcp.client: callback must be a function", 3) end
  local settled = false
  local function deliver(err, result)
    if settled then return end
    settled = true
    local ok, msg = pcall(callback, err, result)
    if not ok then client:log("callback failed: " .. tostring(msg)) end
  end
  if call then call.on_cancel = deliver end
  local co = coroutine.create(function()
    local ok, result, err = pcall(job)
    if not ok then result, err = nil, errors.new("failed", tostring(result)) end
    deliver(err, result)
  end)
  local ok, msg = coroutine.resume(co)
  if not ok then deliver(errors.new("failed", tostring(msg))) end
  return call and call.handle
end

-- The options of a call, of a list, of complete.
local CALL = calls.OPTIONS
local LIST = options.set({ "max_pages", "fresh" }, CALL)
local COMPLETE = options.set({ "context" }, CALL)

-- Every call has one form: its options (a table or nil) come before the
-- callback, never in its place. Raises at `level` (of the function that
-- checks: the public calls tail-call call_method and list).
local function one_form(method, opts, level)
  if opts ~= nil and type(opts) ~= "table" then
    error(("jrpc.mcp.client: %s: opts must be a table or nil (the callback comes after it)")
      :format(method), level + 1)
  end
end

-- A call of `method`: the era first, then the rounds; `post(result)` may
-- pick the part the caller gets. Coroutine or callback, as `invoke`. The
-- public calls tail-call it (and `list`): level 2 is their caller.
local function call_method(client, method, params, opts, callback, post, names)
  one_form(method, opts, 2)
  opts = options.check("jrpc.mcp.client: " .. method, opts, 2, names or CALL)
  local call = calls.new(client, method, params, opts)
  if opts.on_handle then opts.on_handle(call.handle) end
  return invoke(client, function()
    local verdict, err = era.ensure(client)
    if not verdict then return nil, err end
    local result, cerr = call:run()
    if result and post then return post(result) end
    return result, cerr
  end, callback, call)
end

-- }======================================================================

-- {======================================================================
-- The calls
-- =======================================================================

--- The era verdict `{era = "modern"|"legacy", version, capabilities,
--- server_info, instructions}` (probed on first use, then cached).
---@param callback? fun(err: jrpc.Error|nil, verdict: table|nil)
function Client:era(callback)
  return invoke(self, function() return era.ensure(self) end, callback)
end

-- Every page of a list (the era first), coroutine or callback.
local function list(client, method, opts, callback)
  one_form(method, opts, 2)
  opts = options.check("jrpc.mcp.client: " .. method, opts, 2, LIST)
  return invoke(client, function()
    local verdict, err = era.ensure(client)
    if not verdict then return nil, err end
    return lists.list(client, method, opts)
  end, callback)
end

--- Every tool (all pages): the list of Tool objects. `opts`: the call
--- options, `max_pages`, `fresh` (skip the cache).
---@param opts? table
---@param callback? fun(err: jrpc.Error|nil, tools: table[]|nil)
function Client:list_tools(opts, callback)
  return list(self, "tools/list", opts, callback)
end

--- Every resource (all pages).
---@param opts? table
---@param callback? fun(err: jrpc.Error|nil, resources: table[]|nil)
function Client:list_resources(opts, callback)
  return list(self, "resources/list", opts, callback)
end

--- Every resource template (all pages).
---@param opts? table
---@param callback? fun(err: jrpc.Error|nil, templates: table[]|nil)
function Client:list_resource_templates(opts, callback)
  return list(self, "resources/templates/list", opts, callback)
end

--- Every prompt (all pages).
---@param opts? table
---@param callback? fun(err: jrpc.Error|nil, prompts: table[]|nil)
function Client:list_prompts(opts, callback)
  return list(self, "prompts/list", opts, callback)
end

--- Call a tool: the CallToolResult (a tool's own failure is a result with
--- `isError = true`, not an error). `opts`: timeout, max_timeout,
--- on_progress(progress, total, message), max_rounds, on_handle(handle).
---@param name string
---@param arguments? table
---@param opts? table
---@param callback? fun(err: jrpc.Error|nil, result: table|nil)
function Client:call_tool(name, arguments, opts, callback)
  return call_method(self, "tools/call", { name = name,
    arguments = arguments or setmetatable({}, core.object_mt) }, opts, callback)
end

-- {======================================================================
-- Tasks (2026-07-28 extension io.modelcontextprotocol/tasks): each request
-- declares the extension (call option `task`), so only these calls ever
-- get a task back
-- =======================================================================

-- `opts` (a table or nil: raises at the caller of the public call) with
-- `task` set, as a new table.
local function as_task(method, opts)
  one_form(method, opts, 3)
  local out = { task = true }
  if opts then for k, v in pairs(opts) do out[k] = v end end
  return out
end

--- Call a tool as a task: the CreateTaskResult (`resultType` "task",
--- `taskId`, `status`, `pollIntervalMs`, `ttlMs`, ...) once the server
--- made the task. A server may answer at once instead (the tool cannot be
--- a task, or was quick): then the CallToolResult (`resultType`
--- "complete"). `opts`: the call options (as call_tool).
---@param name string
---@param arguments? table
---@param opts? table
---@param callback? fun(err: jrpc.Error|nil, result: table|nil)
function Client:start_task(name, arguments, opts, callback)
  opts = as_task("tools/call", opts)
  return call_method(self, "tools/call", { name = name,
    arguments = arguments or setmetatable({}, core.object_mt) }, opts, callback)
end

--- `tasks/get`: the task as it is now (`status`, and `result`, `error` or
--- `inputRequests` as the status has them).
---@param task_id string
---@param opts? table  call options
---@param callback? fun(err: jrpc.Error|nil, task: table|nil)
function Client:get_task(task_id, opts, callback)
  opts = as_task("tasks/get", opts)
  return call_method(self, "tasks/get", { taskId = task_id }, opts, callback)
end

--- `tasks/update`: answers to a task's `inputRequests`, by key (a
--- task_result answers them itself, with the client's callbacks).
---@param task_id string
---@param responses table
---@param opts? table  call options
---@param callback? fun(err: jrpc.Error|nil, ack: table|nil)
function Client:update_task(task_id, responses, opts, callback)
  opts = as_task("tasks/update", opts)
  return call_method(self, "tasks/update", { taskId = task_id, inputResponses = responses }, opts, callback)
end

--- `tasks/cancel`: ask the server to stop the task (an ended task stays
--- as it ended); true once the server took it.
---@param task_id string
---@param opts? table  call options
---@param callback? fun(err: jrpc.Error|nil, ok: boolean|nil)
function Client:cancel_task(task_id, opts, callback)
  opts = as_task("tasks/cancel", opts)
  return call_method(self, "tasks/cancel", { taskId = task_id }, opts, callback, function() return true end)
end

--- Wait for a task to end, answering its questions with the client's
--- elicitation/sampling/roots callbacks: the tool's CallToolResult, or nil
--- and the task's error (failed), "cancelled", "timeout" (`max_wait`) or a
--- request's error. `opts`: the call options of each request,
--- `poll_interval` (seconds; default the server's), `max_wait` (seconds).
---@param task_id string
---@param opts? table
---@param callback? fun(err: jrpc.Error|nil, result: table|nil)
function Client:task_result(task_id, opts, callback)
  one_form("task_result", opts, 2)
  opts = options.check("jrpc.mcp.client: task_result", opts, 2, tasks.OPTIONS)
  if type(task_id) ~= "string" then error("jrpc.mcp.client: task_result: task_id must be a string", 2) end
  local per_request = { task = true, timeout = opts.timeout, max_timeout = opts.max_timeout }
  return invoke(self, function()
    local verdict, err = era.ensure(self)
    if not verdict then return nil, err end
    return tasks.wait(self, task_id, opts, function(method, params)
      return calls.new(self, method, params, per_request):run()
    end, verdict.era == "legacy")
  end, callback)
end

-- }======================================================================

--- Read a resource: the ReadResourceResult (`contents`).
---@param uri string
---@param opts? table  call options (as call_tool)
---@param callback? fun(err: jrpc.Error|nil, result: table|nil)
function Client:read_resource(uri, opts, callback)
  return call_method(self, "resources/read", { uri = uri }, opts, callback)
end

--- Get a prompt: the GetPromptResult (`messages`).
---@param name string
---@param arguments? table<string, string>
---@param opts? table  call options (as call_tool)
---@param callback? fun(err: jrpc.Error|nil, result: table|nil)
function Client:get_prompt(name, arguments, opts, callback)
  return call_method(self, "prompts/get", { name = name, arguments = arguments }, opts, callback)
end

--- Completion: `ref` (`{type = "ref/prompt", name}` or `{type =
--- "ref/resource", uri}`), `argument` (`{name, value}`), `opts.context`
--- (`{arguments}`); the result's `completion` (`{values, total?, hasMore?}`).
---@param ref table
---@param argument table
---@param opts? table  call options, plus `context`
---@param callback? fun(err: jrpc.Error|nil, completion: table|nil)
function Client:complete(ref, argument, opts, callback)
  one_form("completion/complete", opts, 2)
  return call_method(self, "completion/complete", { ref = ref, argument = argument,
    context = opts and opts.context }, opts, callback, function(result) return result.completion end, COMPLETE)
end

--- Any other request, with the era's `_meta` and the same rules
--- (timeout, progress, MRTR, resultType): its result.
---@param method string
---@param params? table
---@param opts? table  call options (as call_tool)
---@param callback? fun(err: jrpc.Error|nil, result: table|nil)
function Client:request(method, params, opts, callback)
  return call_method(self, method, params, opts, callback)
end

--- `subscriptions/listen` (modern era): `filter` is its `notifications`
--- object; `on_event(method, params, meta)` gets each notification (the
--- acknowledgement first), `on_end(err, result)` once. Returns the listen
--- handle (`id`, `cancel(reason)`) or nil and an error.
---@param filter? table
---@param on_event fun(method: string, params: any, meta: table|nil)
---@param on_end? fun(err: jrpc.Error|nil, result: table|nil)
---@param callback? fun(err: jrpc.Error|nil, listen: jrpc.mcp.Listen|nil)
---@return jrpc.mcp.Listen|nil
function Client:listen(filter, on_event, on_end, callback)
  if type(on_event) ~= "function" then error("listen: on_event must be a function", 2) end
  return invoke(self, function()
    local verdict, err = era.ensure(self)
    if not verdict then return nil, err end
    if verdict.era ~= "modern" then
      return nil, errors.new("unsupported", "subscriptions/listen needs the 2026-07-28 era; the server speaks "
        .. verdict.version)
    end
    return listens.start(self, filter or {}, on_event, on_end)
  end, callback)
end

--- What the server wrote on stderr (connect option stderr = "pipe"; "" over HTTP).
---@return string
function Client:stderr_text()
  return self._transport:stderr_text()
end

--- Close. stdio: the server's stdin is closed, then it is terminated
--- after `grace` seconds (default 2); in a coroutine, waits for it to exit.
--- HTTP: requests in flight end, a legacy session gets DELETE (waited for
--- in a coroutine), the connections close.
---@param grace? number
function Client:close(grace)
  return self._transport:close(grace)
end

-- {======================================================================
-- For the parts (client_era, client_call, ...)
-- =======================================================================

--- The transport (see client_stdio.lua for its seam).
---@return table
function Client:transport() return self._transport end

--- The value of connect option `name` (`timeout` and `client_info` defaulted).
---@param name string
---@return any
function Client:option(name) return self._opts[name] end

--- Report a fault through option on_error (default: stderr).
---@param msg string
function Client:log(msg) self._log(msg) end

-- }======================================================================

-- }======================================================================

-- Server notifications the client routes (the peer drops others, counted).
M.NOTIFICATIONS = {
  "notifications/progress", "notifications/message", "notifications/cancelled",
  "notifications/subscriptions/acknowledged", "notifications/resources/updated",
  "notifications/resources/list_changed", "notifications/tools/list_changed",
  "notifications/prompts/list_changed", "notifications/elicitation/complete", "notifications/tasks",
}

-- Where the server's notifications go: progress to its call, a cancel to
-- its listen, tagged ones to their listen, the rest to the user's hooks.
local function route(client, method, params, meta)
  if method == "notifications/progress" then return calls.route_progress(client, params) end
  if method == "notifications/cancelled" then return listens.cancelled(client, params) end
  lists.changed(client, method)
  if listens.route(client, method, params, meta) then return end
  local on_log, on_notification = client:option("on_log"), client:option("on_notification")
  if method == "notifications/message" and on_log then return on_log(params) end
  if on_notification then on_notification(method, params, meta) end
end

-- The handlers of the transport's peer: a legacy server's requests, and
-- every notification the client routes.
local function peer_methods(client)
  local map = input.legacy_methods(input.of(client))
  for _, name in ipairs(M.NOTIFICATIONS) do
    map[name] = function(params, ctx) route(client, name, params, ctx.meta) end
  end
  return map
end

--- The names of the client's own options (see `connect`).
M.OPTIONS = options.set{ "era", "version", "client_info", "capabilities", "timeout", "max_timeout",
  "discover_timeout", "max_rounds", "cache", "max_pages", "on_elicitation", "on_sampling", "roots",
  "on_log", "on_notification", "on_error", "on_debug", "transport" }

local function check(opts)
  if type(opts) ~= "table" then error("jrpc.mcp.client.connect: expected an options table", 3) end
  options.check("jrpc.mcp.client.connect", opts, 3, M.OPTIONS, require("jrpc.mcp.client_stdio").OPTIONS,
    require("jrpc.mcp.client_http").OPTIONS)
  for _, name in ipairs{ "on_log", "on_notification", "on_error", "on_debug" } do
    if opts[name] ~= nil and type(opts[name]) ~= "function" then
      error("jrpc.mcp.client: option " .. name .. " must be a function", 3)
    end
  end
end

-- The client for checked `opts`, its parts made, its transport opened
-- by `open(sink)`; or nil and open's error.
local function new_client(opts, open)
  local o = {}
  for k, v in pairs(opts) do o[k] = v end
  if o.timeout == nil then o.timeout = M.DEFAULT_TIMEOUT end
  o.client_info = o.client_info or M.CLIENT_INFO
  local self = setmetatable({ _opts = o,
    _log = o.on_error or function(msg) logs.report("jrpc.mcp.client: ", msg) end }, Client)
  era.new(self, o)
  input.new(self, o)
  lists.new(self)
  listens.new(self)
  local transport, err = open({ methods = peer_methods(self) })
  if not transport then return nil, err end
  self._transport = transport
  return self
end

--- Connect to an MCP server over stdio (spawn `opts.cmd` with `opts.args`)
--- or Streamable HTTP (`opts.url`, http:// or https://, with `headers`
--- `{Name = value}` sent on every request, `ca_file`, `verify`,
--- `on_message(dir, text)` for each message sent "->" and received "<-").
--- Options: env, cwd, stderr ("inherit" | "pipe" | "ignore" | function),
--- on_exit, max_message_bytes,
--- era ("modern" | "legacy" | nil: detect), version, client_info
--- (`{name, version}`), capabilities (more to declare), timeout (seconds
--- a request may take, default 60; false: none), max_timeout (the hard
--- bound progress cannot extend past), discover_timeout (the probe's,
--- default 5), max_rounds (MRTR, default 8), cache (honour ttlMs),
--- max_pages, on_elicitation(params), on_sampling(params), roots (a list
--- or a function), on_log(params), on_notification(method, params, meta),
--- on_error(msg), on_debug(msg), and `transport` (an opened transport
--- instead of cmd, or a function(sink) that opens one). A misspelt option
--- is an error that names it.
---@param loop jrpc.uv.Loop
---@param opts table
---@return jrpc.mcp.Client|nil
---@return string|nil err
function M.connect(loop, opts)
  check(opts)
  return new_client(opts, function(sink)
    local transport = opts.transport
    if transport == nil and opts.url ~= nil then return require("jrpc.mcp.client_http").open(loop, opts, sink) end
    if transport == nil then return require("jrpc.mcp.client_stdio").open(loop, opts, sink) end
    if type(transport) == "function" then return transport(sink) end
    return transport
  end)
end

return M
