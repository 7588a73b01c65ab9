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
--   t:closed() -> boolean
--   t:stderr_text() -> string         what the server wrote on stderr ("" when none is kept)
--   t.kind                            "stdio" or "http"
--   t.origin                          (optional) the server's origin: detected eras are cached per origin
--   t:probe_fallback(err) -> boolean  (optional) whether the era probe's error means a legacy
--                                     server (without it: any error but closed/cancelled does)
-- The client hands `open` a sink: `sink.methods`, the handlers of a jrpc
-- peer (jrpc.mcp.client's: a legacy server's requests -- roots, sampling,
-- elicitation, ping -- and every server notification the client routes).
-- This module owns the child and nothing else.
local options = require "jrpc.options"
local timers = require "jrpc.uv.timers"
local peer_mod = require "jrpc.peer"

local M = {}

---@class jrpc.mcp.StdioTransport
local Transport = {}
Transport.__index = Transport

--- The names of `open`'s options (those of jrpc.mcp.client.connect it uses).
M.OPTIONS = options.set{ "cmd", "args", "env", "cwd", "stderr", "on_exit", "on_error", "on_debug",
  "max_message_bytes" }

local function spawn_options(opts, sink)
  local o = options.pick(opts, M.OPTIONS)
  o.profile, o.role, o.methods = "mcp", "client", sink.methods
  return o
end

--- Spawn `opts.cmd` (`args`, `env`, `cwd`, `stderr`: "inherit" (default; "pipe" inside Neovim),
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
  return peer_mod.link(self.peer):now()
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
