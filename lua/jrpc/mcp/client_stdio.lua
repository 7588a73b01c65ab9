--- The MCP client's stdio transport: a server spawned as a child process
-- on a jrpc.uv loop, one JSON-RPC message a line on its stdin/stdout, its
-- stderr inherited, captured or handed to a function (never read as
-- protocol: it is another pipe).
--
-- The transport seam (what jrpc.mcp.client needs of any transport;
-- client_http.lua, Streamable HTTP, implements the same methods):
--   t:request(method, params, callback) -> id   callback(err, result) exactly once
--   t:cancel(id, reason) -> boolean   settles that request's callback at once
--                                     ("cancelled") and tells the server
--   t:notify(method, params)
--   t:after(seconds, fn) -> timer; t:cancel_timer(timer); t:now()
--   t:close()                         in a coroutine: waits until it is closed
--   t.kind                            "stdio" (cancel sends notifications/cancelled) or "http"
--   t.origin                          (optional) the server's origin: detected eras are cached per origin
--   t:probe_fallback(err) -> boolean  (optional) whether the era probe's error means a legacy
--                                     server (without it: any error but closed/cancelled does)
-- The client hands `open` a sink: `sink.notification(method, params, meta)`
-- for every server notification, and `sink.methods`, the handlers that
-- answer a legacy server's requests (roots, sampling, elicitation, ping).
-- This module owns the child and nothing else.
local timers = require "jrpc.uv.timers"

local M = {}

---@class jrpc.mcp.StdioTransport
local Transport = {}
Transport.__index = Transport

-- Server notifications the client routes (the peer drops others, counted).
M.NOTIFICATIONS = {
  "notifications/progress", "notifications/message", "notifications/cancelled",
  "notifications/subscriptions/acknowledged", "notifications/resources/updated",
  "notifications/resources/list_changed", "notifications/tools/list_changed",
  "notifications/prompts/list_changed", "notifications/elicitation/complete",
}

local function handlers(sink)
  local map = {}
  for name, fn in pairs(sink.methods) do map[name] = fn end
  for _, name in ipairs(M.NOTIFICATIONS) do
    map[name] = function(params, ctx) sink.notification(name, params, ctx.meta) end
  end
  return map
end

local function spawn_options(opts, sink)
  local o = { cmd = opts.cmd, args = opts.args, env = opts.env, cwd = opts.cwd,
    stderr = opts.stderr, on_exit = opts.on_exit, on_error = opts.on_error,
    on_debug = opts.on_debug, max_message_bytes = opts.max_message_bytes,
    profile = "mcp", role = "client", methods = handlers(sink) }
  return o
end

--- Spawn `opts.cmd` (`args`, `env`, `cwd`, `stderr`: "inherit" (default),
--- "pipe" (see `stderr_text`), "ignore" or a function(chunk)) on `loop`.
---@param loop jrpc.uv.Loop
---@param opts table
---@param sink table
---@return jrpc.mcp.StdioTransport|nil
---@return string|nil err
function M.open(loop, opts, sink)
  local child, err = loop:spawn(spawn_options(opts, sink))
  if not child then return nil, err.message end
  return setmetatable({ kind = "stdio", loop = loop, child = child, peer = child.peer }, Transport)
end

function Transport:request(method, params, callback)
  return self.peer:request(method, params, {}, callback)
end

function Transport:cancel(id, reason)
  return self.peer:cancel(id, reason)
end

function Transport:notify(method, params)
  return self.peer:notify(method, params)
end

function Transport:after(seconds, fn)
  return timers.after(self.loop.uv, seconds, function()
    self.loop.events = self.loop.events + 1
    fn()
  end, "mcp client timer")
end

function Transport:cancel_timer(timer)
  timers.cancel(self.loop.uv, timer)
end

function Transport:now()
  return self.peer:now()
end

--- What the server wrote on stderr (option stderr = "pipe").
---@return string
function Transport:stderr_text()
  return self.child:stderr_text()
end

--- Close the server's stdin, then SIGTERM and SIGKILL after `grace`
--- seconds each (the spec's shutdown); in a coroutine waits for its exit.
---@param grace? number
function Transport:close(grace)
  return self.child:shutdown(grace)
end

function Transport:closed()
  return self.peer:closed()
end

return M
