--- An MCP server: what it offers (registry.lua) served on jrpc peers in
-- both eras. Per request it chooses the era as the dual-era rules say: a
-- request whose `_meta` names a protocol version is modern and served on
-- that `_meta` alone; without one, a connection that sent `initialize` is
-- legacy (session.lua); anything else lacks its required `_meta` (-32602).
local core = require "jrpc.core"
local options = require "jrpc.options"
local peer_mod = require "jrpc.peer"
local protocol = require "jrpc.mcp.protocol"
local registry = require "jrpc.mcp.registry"
local methods = require "jrpc.mcp.methods"
local session_mod = require "jrpc.mcp.session"
local context = require "jrpc.mcp.context"
local mrtr = require "jrpc.mcp.mrtr"
local listeners = require "jrpc.mcp.listeners"
local tasks = require "jrpc.mcp.tasks"
local events = require "jrpc.mcp.events"

local M = {}

local keys = protocol.keys

--- The names `jrpc.mcp.server{...}` takes.
M.OPTIONS = options.set{ "name", "version", "title", "instructions", "ttl_ms", "cache_scope",
  "page_size", "state_key", "run_handler", "tasks", "events" }

--- The names `server:attach(peer, hooks)` takes in `hooks`.
M.ATTACH_OPTIONS = options.set{ "route" }

--- The peer options a server's transports take from the user
--- (`serve_stdio`'s `peer_opts`, `serve_http`'s `peer`): the peer's own,
--- but for those the transport sets itself.
M.PEER_OPTIONS = {}
for name in pairs(peer_mod.OPTIONS) do
  if name ~= "send" and name ~= "profile" and name ~= "role" then M.PEER_OPTIONS[name] = true end
end

---@class jrpc.mcp.Server
local Server = {}
Server.__index = Server

-- {======================================================================
-- Registration: each change is notified to the listeners that asked
-- (listeners.lua), so registering while serving is how a server's
-- offer changes.
-- =======================================================================

--- Add a tool: `{name, title?, description, input_schema? (a Lua table or
--- JSON text; default an object with any properties), output_schema?,
--- annotations?, requires? (client capabilities it needs, e.g.
--- `{sampling = {}}`: -32021 without them), task_support? ("forbidden",
--- the default; "optional" or "required": a call from a client that
--- declared the tasks extension runs as a task, see tasks.lua and
--- docs/mcp.md), handler = function(args, ctx)}`.
--- The handler returns a string, a content item, a list of them, a record
--- of JSON values (`{sum = 3}`: the structuredContent, sent with its JSON as
--- text, and checked against `output_schema` when there is one) or a
--- CallToolResult table; a Lua error it raises, or a value that is none of
--- these, becomes an `isError` result (and a line in the log).
---@param def table
---@return jrpc.mcp.Server self
function Server:tool(def)
  self.registry:add_tool(def)
  self.events:list_changed("tools")
  return self
end

--- Add a resource: `{uri, name, title?, description?, mime_type?, ttl_ms?,
--- cache_scope?, handler = function(uri, ctx)}` returning the text, a
--- content (`{text}` or `{blob}`), a list of them, or a ReadResourceResult.
---@param def table
---@return jrpc.mcp.Server self
function Server:resource(def)
  self.registry:add_resource(def)
  self.events:list_changed("resources")
  return self
end

--- Add a resource template: `{uri_template = "file:///{path}", name, ...,
--- handler = function(uri, vars, ctx)}`. `{var}` matches one path segment,
--- `{+var}` anything (slashes too).
---@param def table
---@return jrpc.mcp.Server self
function Server:resource_template(def)
  self.registry:add_template(def)
  self.events:list_changed("resources")
  return self
end

--- Add a prompt: `{name, title?, description, arguments = { {name,
--- description?, required?}, ... }, handler = function(args, ctx)}`
--- returning a string (one user message), a list of messages `{role,
--- content}` (content a string or a content item), or a GetPromptResult.
---@param def table
---@return jrpc.mcp.Server self
function Server:prompt(def)
  self.registry:add_prompt(def)
  self.events:list_changed("prompts")
  return self
end

-- Notify `kind`'s list change when `removed`; returns `removed`.
local function removed_from(srv, kind, removed)
  if removed then srv.events:list_changed(kind) end
  return removed
end

--- Remove tool `name` (listeners hear `notifications/tools/list_changed`);
--- returns whether it was registered.
---@param name string
---@return boolean removed
function Server:remove_tool(name)
  return removed_from(self, "tools", self.registry:remove_tool(name))
end

--- Remove the resource `uri`; returns whether it was registered.
---@param uri string
---@return boolean removed
function Server:remove_resource(uri)
  return removed_from(self, "resources", self.registry:remove_resource(uri))
end

--- Remove the resource template `uri_template` (and its completions);
--- returns whether it was registered.
---@param uri_template string
---@return boolean removed
function Server:remove_resource_template(uri_template)
  return removed_from(self, "resources", self.registry:remove_template(uri_template))
end

--- Remove prompt `name` (and its completions); returns whether it was registered.
---@param name string
---@return boolean removed
function Server:remove_prompt(name)
  return removed_from(self, "prompts", self.registry:remove_prompt(name))
end

--- The resource `uri` changed: `notifications/resources/updated` goes to
--- the listen streams that name it in `resourceSubscriptions` and to the
--- legacy connections that sent `resources/subscribe` for it.
---@param uri string
---@return jrpc.mcp.Server self
function Server:resource_updated(uri)
  if type(uri) ~= "string" then error("server:resource_updated: uri must be a string", 2) end
  self.events:updated(uri)
  return self
end

--- End every open `subscriptions/listen` stream gracefully: each gets its
--- result (`resultType` "complete", its subscription id in `_meta`), which
--- ends an HTTP stream too. For a server that shuts down.
---@return jrpc.mcp.Server self
function Server:end_subscriptions()
  self.listeners:end_all()
  return self
end

--- How many `subscriptions/listen` streams are open, and how many legacy
--- connections hear change notifications (those that ended are not counted).
---@return integer streams
---@return integer legacy
function Server:listeners_count()
  return self.listeners:count()
end

--- Complete the arguments of prompt `name` (`ref_type` "prompt") or the
--- variables of resource template `name` ("resource"): `fn(arg_name,
--- value, ctx)` returns a list of strings, or `{values, total?, hasMore?}`.
--- `ctx.params.context.arguments` holds the arguments already given.
---@param ref_type "prompt"|"resource"
---@param name string
---@param fn fun(arg_name: string, value: string, ctx: jrpc.mcp.Context): table
---@return jrpc.mcp.Server self
function Server:completion(ref_type, name, fn)
  self.registry:add_completion(ref_type, name, fn)
  return self
end

-- }======================================================================

-- {======================================================================
-- Serving
-- =======================================================================

-- Methods that exist only in the legacy era: with modern `_meta` they are
-- unknown (-32601), as 2026-07-28 removed them.
local LEGACY_ONLY = { initialize = true, ping = true, ["logging/setLevel"] = true,
  ["resources/subscribe"] = true, ["resources/unsubscribe"] = true }

-- Results whose modern form carries ttlMs and cacheScope.
local CACHEABLE = { ["server/discover"] = true, ["tools/list"] = true, ["prompts/list"] = true,
  ["resources/list"] = true, ["resources/templates/list"] = true, ["resources/read"] = true }

-- What every modern result carries; `entry` (a resource) may set its own
-- cache policy, and so may the handler's result.
local function modern_result(srv, method, result, entry)
  result.resultType = result.resultType or protocol.result_types.complete
  local meta = result._meta or {}
  meta[keys.server_info] = srv.info
  result._meta = meta
  if CACHEABLE[method] then
    if result.ttlMs == nil then result.ttlMs = entry and entry.ttl_ms or srv.ttl_ms end
    if result.cacheScope == nil then result.cacheScope = entry and entry.cache_scope or srv.cache_scope end
  end
  return result
end

-- The era and client of one request, or raise the error to answer.
local function choose_era(session, method, meta)
  if protocol.is_modern_meta(meta) then
    if LEGACY_ONLY[method] then error(protocol.method_not_found(), 0) end
    local client, err = protocol.check_meta(meta)
    if not client then error(err, 0) end
    return "modern", client
  end
  if session:is_legacy() then return "legacy", session.client end
  local _, err = protocol.check_meta(meta)
  error(err, 0)
end

-- Which registrations a method needs: without them it is unknown (-32601),
-- so `server/discover`'s capabilities and the methods agree.
local NEEDS = { ["tools/list"] = "tools", ["tools/call"] = "tools", ["prompts/list"] = "prompts",
  ["prompts/get"] = "prompts", ["resources/list"] = "resources", ["resources/read"] = "resources",
  ["resources/templates/list"] = "resources", ["completion/complete"] = "completions",
  ["resources/subscribe"] = "resources", ["resources/unsubscribe"] = "resources",
  ["tasks/get"] = "tasks", ["tasks/update"] = "tasks", ["tasks/cancel"] = "tasks" }

-- Methods that exist only in the modern era: a legacy connection asks
-- for changes with its initialize capabilities and resources/subscribe.
-- Tasks are an extension of the modern era only.
local MODERN_ONLY = { ["subscriptions/listen"] = true, ["tasks/get"] = true, ["tasks/update"] = true,
  ["tasks/cancel"] = true }

-- The methods whose handlers may answer input_required (MRTR).
local MRTR = { ["tools/call"] = true, ["prompts/get"] = true }

-- The jrpc handler for an era-dependent method `impl(srv, params, ctx)`.
local function handler(srv, session, method, impl, hooks)
  return function(params, rpc)
    params = params or {}
    local meta = rpc.meta
    if meta == nil then meta = params._meta; params._meta = nil end  -- a peer without profile mcp
    local era, client = choose_era(session, method, meta)
    if era == "legacy" and MODERN_ONLY[method] then error(protocol.method_not_found(), 0) end
    local need = NEEDS[method]
    if need and not srv.registry:offers()[need] then error(protocol.method_not_found(), 0) end
    local ctx = context.new(rpc, params, client, era, hooks.route)
    if era == "modern" and MRTR[method] then
      -- a retry: its state must be one we sealed (a stateless server's
      -- only memory of the earlier rounds)
      if params.requestState ~= nil then
        local payload, err = mrtr.open(srv.state_key, params.requestState)
        if not payload then error(err, 0) end
        ctx.request_state = payload
      end
      ctx.input_responses = type(params.inputResponses) == "table" and params.inputResponses or nil
    end
    local result, entry = impl(srv, params, ctx, session)
    local state = mrtr.take_state(result)
    if era == "modern" then
      if state ~= nil and result.resultType == protocol.result_types.input_required then
        result.requestState = mrtr.seal(srv.state_key, state)
      end
      return modern_result(srv, method, result, entry)
    end
    return result
  end
end

-- Legacy methods, before or after `initialize`.
local function empty() return setmetatable({}, core.object_mt) end
local legacy = {
  ["logging/setLevel"] = function(_, params, _, session) session:set_level(params.level); return empty() end,
  ["resources/subscribe"] = function(_, params, _, session) session:subscribe(params.uri, true); return empty() end,
  ["resources/unsubscribe"] = function(_, params, _, session)
    session:subscribe(params.uri, false); return empty()
  end,
}

--- Serve this server's methods on `peer` (made with profile "mcp"; one
--- connection: its legacy state, if it chooses that era, is its own).
--- `hooks.route(id_json, method)`, if given, is told before a handler's
--- context sends a message of its own (progress, log, a request to the
--- client): which request it belongs to, by the exact JSON text of its id
--- (a transport routes by it).
---@param peer jrpc.Peer
---@param hooks? {route?: fun(id_json: string, method: string)}
---@return jrpc.Peer peer
function Server:attach(peer, hooks)
  hooks = options.check("server:attach", hooks, 2, M.ATTACH_OPTIONS)
  local session = session_mod.new()
  local function add(name, impl) peer:method(name, handler(self, session, name, impl, hooks)) end
  add("server/discover", methods.discover)
  add("tools/list", methods.tools_list)
  add("tools/call", methods.tools_call)
  add("resources/list", methods.resources_list)
  add("resources/templates/list", methods.templates_list)
  add("resources/read", methods.resources_read)
  add("prompts/list", methods.prompts_list)
  add("prompts/get", methods.prompts_get)
  add("completion/complete", methods.complete)
  add("subscriptions/listen", methods.listen)
  add("tasks/get", methods.tasks_get)
  add("tasks/update", methods.tasks_update)
  add("tasks/cancel", methods.tasks_cancel)
  for name, impl in pairs(legacy) do add(name, impl) end
  -- ping is allowed before initialize too: answer it in any legacy state
  peer:method("ping", function(_, rpc)
    if protocol.is_modern_meta(rpc.meta) then error(protocol.method_not_found(), 0) end
    return empty()
  end)
  peer:method("initialize", function(params, rpc)
    if protocol.is_modern_meta(rpc.meta) then error(protocol.method_not_found(), 0) end
    if type(params) ~= "table" then error(protocol.invalid_params("Invalid params: expected an object"), 0) end
    local result = methods.initialize(self, params, session)
    self.listeners:add_legacy(peer, session)
    return result
  end)
  peer:method("notifications/initialized", function(_, rpc)
    -- sent as a request it is no method of ours (its answer would be null)
    if rpc.id ~= nil then error(protocol.method_not_found(), 0) end
    session:mark_initialized()
  end)
  return peer
end

--- Serve on this process's stdin/stdout until the input ends: on the luv
--- loop context `loop` (`jrpc.uv.new(require "luv")`; handlers may then
--- wait in `loop:sleep`) or, without one, with the blocking `jrpc.stdio`.
--- `peer_opts` are more peer options (`on_error`, `debug`, ...).
--- Stdout is kept for the protocol alone (jrpc.stdout): from
--- here on `print`, `io.write` and anything else written to stdout go to
--- stderr, where the host shows or logs them.
---@param loop? table
---@param peer_opts? table
---@return jrpc.Peer peer
function Server:serve_stdio(loop, peer_opts)
  local opts = { profile = "mcp", role = "server" }
  for k, v in pairs(options.check("server:serve_stdio", peer_opts, 2, M.PEER_OPTIONS)) do opts[k] = v end
  local kept, why = require("jrpc.stdout").keep()
  if not kept then io.stderr:write("jrpc: ", why, "; a print() to stdout will corrupt the protocol\n") end
  if loop then
    local conn = assert(loop:stdio(opts))
    self:attach(conn.peer)
    -- at the end of input, end this connection's listen streams with their
    -- result: else they would hold the connection open for its finish grace
    conn.on_ended = function(c, reason)
      self.listeners:end_all(c.peer)
      c:finish(reason)
    end
    loop:serve_forever()
    return conn.peer
  end
  local stdio = require "jrpc.stdio"
  local peer = self:attach(stdio.peer(opts))
  stdio.serve(peer)
  return peer
end

--- Serve over Streamable HTTP (2026-07-28: one POST a message, JSON or SSE
--- answers) on the luv loop context `loop`: `opts` = `{host = "127.0.0.1",
--- port = 0 (a free one), path = "/mcp", allowed_origins? (exact Origin
--- values; default those of the allowed hosts), allowed_hosts? (Host
--- values; default 127.0.0.1, localhost and [::1], with and without the
--- port), peer? (more peer options), and the limits of jrpc.uv.http}`.
--- Returns the HTTP server (its `port`, `close()`), or nil and a
--- jrpc.Error with code "listen" when the address cannot be bound; the
--- caller runs the loop. An unknown option name is an error.
---@param loop table
---@param opts? table
---@return jrpc.uv.HttpServer|nil http_server
---@return jrpc.Error|nil err
function Server:serve_http(loop, opts)
  -- not a tail call: errors in `opts` are reported at our caller
  local server, err = require("jrpc.mcp.http").serve(self, loop, opts)
  return server, err
end

-- }======================================================================

-- Calls each handler as it is: the default `run_handler`.
local function call_directly(fn, ...) return fn(...) end

--- Call every tool, resource, prompt and completion handler through
--- `wrap(call, ...)`: `call(...)` runs the handler with its arguments and
--- returns its values, which `wrap` returns. One place to run handlers
--- where they need to be (`jrpc.nvim.serve_mcp` goes onto Neovim's main
--- loop first). Each call wraps those given before it (as the option
--- `run_handler` does), so the last given runs first.
---@param wrap fun(call: function, ...): ...
---@return jrpc.mcp.Server self
function Server:run_handlers(wrap)
  if type(wrap) ~= "function" then error("server:run_handlers: expected a function", 2) end
  local inner = self.run_handler
  if inner == call_directly then
    self.run_handler = wrap
  else
    self.run_handler = function(fn, ...) return wrap(function(...) return inner(fn, ...) end, ...) end
  end
  return self
end

local SCOPES = { public = true, private = true }

--- A new server (see `jrpc.mcp.server`).
---@param opts table
---@return jrpc.mcp.Server
function M.new(opts)
  if type(opts) == "table" then options.check("jrpc.mcp.server", opts, 3, M.OPTIONS) end
  if type(opts) ~= "table" or type(opts.name) ~= "string" or type(opts.version) ~= "string" then
    error("jrpc.mcp.server: expected {name = string, version = string, ...}", 3)
  end
  local ttl, scope = opts.ttl_ms or 0, opts.cache_scope or "private"
  if type(ttl) ~= "number" or ttl < 0 or ttl % 1 ~= 0 then
    error("jrpc.mcp.server: ttl_ms must be an integer >= 0", 3)
  end
  if not SCOPES[scope] then error("jrpc.mcp.server: cache_scope must be \"public\" or \"private\"", 3) end
  local key = opts.state_key
  if key ~= nil and (type(key) ~= "string" or #key < 16) then
    -- a short key would make sealed states guessable
    error("jrpc.mcp.server: state_key must be a string of at least 16 bytes", 3)
  end
  if opts.run_handler ~= nil and type(opts.run_handler) ~= "function" then
    error("jrpc.mcp.server: run_handler must be a function(call, ...)", 3)
  end
  local heard = listeners.new()  -- listen streams and legacy connections that hear changes
  -- changes go to `heard`, and through the bus (option events) to other workers'
  local hub = events.new(heard, opts.events, opts.name, 4)
  return setmetatable({
    registry = registry.new(),
    listeners = heard,
    events = hub,
    -- tools that run as tasks, their records and the store that keeps them
    tasks = tasks.new(opts.tasks, hub, 4),
    info = { name = opts.name, version = opts.version, title = opts.title },
    instructions = opts.instructions, ttl_ms = ttl, cache_scope = scope,
    page_size = opts.page_size or 100,
    -- seals MRTR requestState: random per process unless configured, and
    -- then the same in every worker, so a retry may land on any of them
    state_key = key or mrtr.new_key(),
    -- every handler is called through it (see run_handlers)
    run_handler = opts.run_handler or call_directly,
  }, Server)
end

return M
