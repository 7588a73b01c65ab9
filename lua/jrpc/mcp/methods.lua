--- The MCP methods a server answers, as functions of (server, params, ctx)
-- that return the bare result; server.lua chooses the era, checks `_meta`
-- and adds what every result of that era carries (resultType, serverInfo,
-- ttlMs/cacheScope).
local peer_mod = require "jrpc.peer"
local core = require "jrpc.core"
local errors = require "jrpc.errors"
local protocol = require "jrpc.mcp.protocol"
local content = require "jrpc.mcp.content"
local tasks = require "jrpc.mcp.tasks"

local M = {}

local function array(t) return setmetatable(t or {}, core.array_mt) end
local invalid = protocol.invalid_params

local function fail(err) error(err, 0) end

-- {======================================================================
-- Lists: opaque cursors (the offset of the next page, in a form clients
-- have no reason to read), `page_size` items a page.
-- =======================================================================

local CURSOR_PREFIX = "jrpc-mcp-page:"
local CURSOR_PATTERN = "^" .. CURSOR_PREFIX:gsub("%p", "%%%0") .. "(%d+)$"

local function page(srv, items, params, key)
  local start = 1
  if params.cursor ~= nil then
    local n = type(params.cursor) == "string" and params.cursor:match(CURSOR_PATTERN)
    start = tonumber(n)
    if not start or start < 1 or start > #items then fail(invalid("Invalid params: invalid cursor")) end
  end
  local out, stop = {}, math.min(#items, start + srv.page_size - 1)
  for i = start, stop do out[#out + 1] = items[i].listed end
  local result = { [key] = array(out) }
  if stop < #items then result.nextCursor = CURSOR_PREFIX .. (stop + 1) end
  return result
end

-- Tasks are the modern era's extension: a legacy client is not told
-- which tools run as tasks (it could not ask for one).
local function without_execution(listed)
  if listed.execution == nil then return listed end
  local copy = {}
  for k, v in pairs(listed) do copy[k] = v end
  copy.execution = nil
  return copy
end

function M.tools_list(srv, params, ctx)
  local result = page(srv, srv.registry.tools, params, "tools")
  if ctx.era == "legacy" and srv.registry:offers().tasks then
    for i, listed in ipairs(result.tools) do result.tools[i] = without_execution(listed) end
  end
  return result
end
function M.resources_list(srv, params) return page(srv, srv.registry.resources, params, "resources") end
function M.prompts_list(srv, params) return page(srv, srv.registry.prompts, params, "prompts") end
function M.templates_list(srv, params)
  return page(srv, srv.registry.templates, params, "resourceTemplates")
end

-- }======================================================================

-- A tool's own failure is a result the model can read (`isError`); a
-- raised jrpc error is a protocol error and goes out as it is. Nothing of
-- a Lua error's text (paths, stack) reaches the client; the log has it.
-- A value that is no result is the server's bug: the log and the client
-- hear what it was and what to return instead.
local function run_tool(srv, tool, args, ctx)
  local ok, result = pcall(srv.run_handler, tool.handler, args, ctx)
  if ok then
    local made, what = content.tool_result(result)
    if made then return made end
    local message = ("Tool %s returned %s, which is not a tool result: %s"):format(tool.name, what,
      content.TOOL_RESULT_FIX)
    peer_mod.link(ctx.peer):log(message)
    return content.error_result(message)
  end
  if errors.is_wire_error(result) then fail(result) end
  peer_mod.link(ctx.peer):log(("tool %q failed: %s"):format(tool.name, tostring(result)))
  return content.error_result(("Tool %s failed: internal error"):format(tool.name))
end

-- A tool with an outputSchema promises structuredContent that fits it; one
-- that breaks the promise is the server's bug, which no other input from
-- the model would fix: a protocol error (-32603), not an isError result.
-- Checked with JSON Schema 2020-12, as arguments are (jrpc.mcp.validation);
-- isError and input_required results promise nothing.
local function check_output(tool, result)
  if not tool.check_output or result.isError or result.resultType == protocol.result_types.input_required then
    return
  end
  local message
  if result.structuredContent == nil then
    message = ("Tool %s has an outputSchema but returned no structuredContent"):format(tool.name)
  else
    local ok, problem = tool.check_output(result.structuredContent)
    message = not ok and ("Tool %s returned structuredContent that does not fit its outputSchema: %s")
      :format(tool.name, problem)
  end
  if message then fail(errors.new(protocol.codes.INTERNAL_ERROR, message)) end
end

function M.tools_call(srv, params, ctx)
  if type(params.name) ~= "string" then fail(invalid("Invalid params: name is required")) end
  local tool = srv.registry.tool_by_name[params.name]
  if not tool then fail(invalid("Invalid params: unknown tool " .. params.name)) end
  local args = params.arguments
  if args == nil then args = {} end
  -- arguments that do not fit: from 2025-11-25 a result the model can
  -- read and retry after; before, a protocol error
  local ok, problem = tool.check_arguments(args)
  if not ok then
    if protocol.input_errors_are_results(ctx.client.version) then
      return content.error_result(("Invalid arguments for tool %s: %s"):format(tool.name, problem))
    end
    fail(invalid("Invalid params: " .. problem))
  end
  if tool.requires then
    local missing = protocol.missing_capabilities(ctx.client.capabilities, tool.requires)
    if missing then fail(protocol.missing_capability(missing)) end
  end
  local function run(c)
    local result = run_tool(srv, tool, args, c)
    check_output(tool, result)
    return result
  end
  -- a task when the tool may be one and the client declared tasks on this
  -- request (the modern era's extension); a tool that must be one cannot
  -- answer a client that did not
  local support = tool.task_support
  if support ~= "forbidden" and ctx.era == "modern" and tasks.declared(ctx.client) then
    return srv.tasks:start(ctx, run)
  end
  if support == "required" then fail(protocol.missing_capability(tasks.required_capabilities())) end
  return run(ctx)
end

--- `tasks/get`, `tasks/update`, `tasks/cancel` (tasks.lua), for a client
--- that declared the extension on the request: else -32021.
local function task_method(name)
  return function(srv, params, ctx)
    if not tasks.declared(ctx.client) then fail(protocol.missing_capability(tasks.required_capabilities())) end
    return srv.tasks[name](srv.tasks, params)
  end
end
M.tasks_get = task_method("get")
M.tasks_update = task_method("update")
M.tasks_cancel = task_method("cancel")

function M.resources_read(srv, params, ctx)
  local uri = params.uri
  if type(uri) ~= "string" then fail(invalid("Invalid params: uri is required")) end
  local entry, vars = srv.registry:find_resource(uri)
  if not entry then fail(protocol.resource_not_found(uri, ctx.era == "legacy")) end
  local v
  if vars then
    v = srv.run_handler(entry.handler, uri, vars, ctx)
  else
    v = srv.run_handler(entry.handler, uri, ctx)
  end
  return content.resource_result(v, uri, entry.mime_type), entry
end

function M.prompts_get(srv, params, ctx)
  if type(params.name) ~= "string" then fail(invalid("Invalid params: name is required")) end
  local prompt = srv.registry.prompt_by_name[params.name]
  if not prompt then fail(invalid("Invalid params: unknown prompt " .. params.name)) end
  local args = params.arguments or {}
  if type(args) ~= "table" then fail(invalid("Invalid params: arguments must be an object")) end
  for _, a in ipairs(prompt.arguments) do
    if a.required and args[a.name] == nil then
      fail(invalid(("Invalid params: argument %q is required"):format(a.name)))
    end
  end
  return content.prompt_result(srv.run_handler(prompt.handler, args, ctx))
end

local MAX_COMPLETIONS = 100  -- the protocol's cap on values in one answer

function M.complete(srv, params, ctx)
  local arg = params.argument
  if type(params.ref) ~= "table" or type(arg) ~= "table" or type(arg.name) ~= "string" then
    fail(invalid("Invalid params: ref and argument {name, value} are required"))
  end
  local fn = srv.registry:completion_for(params.ref)
  local got = fn and srv.run_handler(fn, arg.name, arg.value or "", ctx) or {}
  if got.values == nil then got = { values = got } end
  local values, n = {}, #got.values
  for i = 1, math.min(n, MAX_COMPLETIONS) do values[i] = got.values[i] end
  local more = got.hasMore
  if more == nil and n > MAX_COMPLETIONS then more = true end
  return { completion = { values = array(values), total = got.total or (n > MAX_COMPLETIONS and n or nil),
    hasMore = more } }
end

--- The server's capabilities, from what is registered: the same in both
--- eras, but for the modern era's extensions (tasks), which only
--- `server/discover` advertises.
---@param srv table
---@param modern? boolean
---@return table
function M.capabilities(srv, modern)
  local offers, caps = srv.registry:offers(), { logging = {} }
  -- every registration change is notified (modern: on listen streams;
  -- legacy: to the connection), and any resource may be subscribed to
  -- (modern: resourceSubscriptions; legacy: resources/subscribe)
  if offers.tools then caps.tools = { listChanged = true } end
  if offers.prompts then caps.prompts = { listChanged = true } end
  if offers.completions then caps.completions = {} end
  if offers.resources then caps.resources = { subscribe = true, listChanged = true } end
  if modern and offers.tasks then caps.extensions = { [tasks.EXTENSION] = setmetatable({}, core.object_mt) } end
  return caps
end

-- Waits until the server ends the stream (listeners.lua).
function M.listen(srv, params, ctx)
  return srv.listeners:listen(params, ctx)
end

function M.discover(srv)
  return { supportedVersions = protocol.MODERN_VERSIONS, capabilities = M.capabilities(srv, true),
    instructions = srv.instructions }
end

function M.initialize(srv, params, session)
  local version = session:initialize(params)
  return { protocolVersion = version, capabilities = M.capabilities(srv),
    serverInfo = srv.info, instructions = srv.instructions }
end

return M
