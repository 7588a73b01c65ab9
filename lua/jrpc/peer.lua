--- A JSON-RPC peer: one end of a connection, both client and server.
-- Transport-agnostic: feed it bytes with `receive`, it writes through `send`.
--
-- Two faces. The peer (`jrpc.peer{...}`) is what a program uses: handlers,
-- requests, notifications, batches, cancel, close, stats, and `receive` /
-- `tick` for a program that does its own I/O. Its link (`M.link(peer)`) is
-- what a transport uses besides those: decode/deliver (a message framed by
-- HTTP), finish (end of input), busy, flush, the clock and deadlines, the
-- log hooks. See docs/architecture.md, "The transport contract".
--
-- A peer is made of parts, each the one owner of its state:
--   _codec  (jrpc.core codec)  framing, decoding, encoding
--   _out    (jrpc.output)      outgoing bytes, held during a read
--   _pool   (jrpc.workers)     worker coroutines
--   _calls  (jrpc.client)      our requests: pending table, waiters, ids
--   _srv    (jrpc.server)      handlers, handlers that wait, counters
-- and this module owns the rest: open/closed, busy, the log hook.
local core = require "jrpc.core"
local profiles = require "jrpc.profiles"
local decls = require "jrpc.params"
local output = require "jrpc.output"
local workers = require "jrpc.workers"
local server = require "jrpc.server"
local client = require "jrpc.client"
local logs = require "jrpc.log"
local options = require "jrpc.options"
local errors = require "jrpc.errors"


local M = {}

---@class jrpc.Peer
local Peer = {}
Peer.__index = Peer

--- The transport's side of a peer (see `M.link`).
---@class jrpc.Link
---@field peer jrpc.Peer
local Link = {}
Link.__index = Link

-- {======================================================================
-- Reading
-- =======================================================================

--- Feed bytes from the transport (any split). Complete messages are
--- dispatched and answered; their replies are sent together (a long read
--- sends every few replies: see jrpc.output).
---@param bytes string
function Peer:receive(bytes)
  return self._reader.read(self, bytes)
end

---@class jrpc.Message
---@field kind "request"|"notification"|"result"|"error"|"invalid"
---@field method string|nil  request, notification
---@field params any         request, notification (nil when absent)
---@field id any             request, result, error; invalid when its id could be read
---@field id_json string|nil  request: the id's exact JSON text, as its reply carries it
---@field result any         result
---@field error table|nil    error, invalid: `{code, message}` (data too for error)

-- The message table for one codec event: what a transport may read, and
-- the event itself (positions 1 to 6) for `deliver`.
local function message(kind, a, b, c, d, e)
  local m = { kind, a, b, c, d, e, kind = kind }
  if kind == "request" or kind == "checked" then
    m.kind, m.method, m.params, m.id = "request", a, b, c
    m.id_json = type(d) == "number" and ("%d"):format(d) or d
  elseif kind == "notification" then
    m.method, m.params = a, b
  elseif kind == "result" then
    m.id, m.result = c, b
  elseif kind == "error" then
    m.id, m.error = c, b
  elseif kind == "invalid" then
    m.error = { code = a, message = b }
    if c ~= "null" then m.id = core.decode(c) end
  end
  return m
end

--- Decode `text`, one whole message that its transport framed (an HTTP
--- body: newlines in it are whitespace), with this peer's profile and
--- limits, without dispatching it: the transport may look at it first
--- (Streamable HTTP checks headers against it). `deliver` dispatches it,
--- so the text is decoded once. Bad text is a message of kind "invalid"
--- (`error` says why), which `deliver` answers as a read would.
---@param text string
---@return jrpc.Message
function Link:decode(text)
  local peer = self.peer
  return message(peer._codec:decode(text))
end

--- Dispatch a message from `decode` (of this peer or another of the same
--- profile and limits), exactly as if `receive` had read it.
---@param msg jrpc.Message
function Link:deliver(msg)
  local peer = self.peer
  return peer._reader.decoded(msg[1], msg[2], msg[3], msg[4], msg[5], msg[6])
end

--- The input ended: decode what is left, then close with `reason` -- at
--- once when no handler is still working (returns true). Else our own
--- requests settle now with code "closed" (no reply can come any more), so
--- handlers waiting on them go on and answer, and the peer closes once no
--- handler waits, by itself or when the transport calls `close` after its
--- grace period (returns false). `on_closed()` is called once the peer has
--- closed, either way.
---@param reason? string  default "connection closed"
---@param on_closed? fun()
---@return boolean closed
function Link:finish(reason, on_closed)
  local peer = self.peer
  if peer._closed then
    if on_closed then on_closed() end
    return true
  end
  reason = reason or "connection closed"
  peer._on_closed = on_closed
  peer._codec:finish()
  peer._reader.read(peer)
  if server.waiting(peer) == 0 then peer:close(reason) end
  if peer._closed then return true end
  peer._out:collect(client.settle_all, peer, reason)
  server.when_idle(peer, function() peer:close(reason) end)
  return peer._closed
end

--- Bytes still needed to complete the current LSP body, or 0 (read a line).
---@return integer
function Link:want()
  local peer = self.peer
  return peer._codec:want()
end

-- {======================================================================
-- Handlers
-- =======================================================================

--- Register a handler: `fn(params, ctx)` returns the result (nothing → null)
--- or raises (`jrpc.error(...)` → that error, anything else → -32603).
---@param name string
---@param fn fun(params: any, ctx: jrpc.Context): any
---@param decl? table|string[]  a `jrpc.params{...}` declaration (or its list)
---@return jrpc.Peer self
function Peer:method(name, fn, decl)
  if type(name) ~= "string" then error("method name must be a string", 2) end
  if type(fn) ~= "function" then error("handler for " .. name .. " must be a function", 2) end
  if decl == nil then
    server.add(self, name, fn)
  else
    if not decls.is_decl(decl) then decl = decls.declare(decl) end
    server.add(self, name, decl:wrap(fn), fn, decl:shape())
  end
  return self
end

--- Set the fallback handler: `fn(params, ctx)` answers every request and
--- receives every notification whose method has no handler of its own
--- (`ctx.method` names it), as a handler would; raise
--- `jrpc.error(-32601, "Method not found")` for a method it does not know
--- either. Cancels (`$/cancelRequest`, `notifications/cancelled`) of our own
--- handlers' requests are still taken by the peer. `nil` removes it.
---@param fn? fun(params: any, ctx: jrpc.Context): any
---@return jrpc.Peer self
function Peer:fallback(fn)
  if fn ~= nil and type(fn) ~= "function" then error("fallback must be a function or nil", 2) end
  server.fallback(self, fn)
  return self
end

-- }======================================================================

-- {======================================================================
-- Calling the other side (see client.lua)
-- =======================================================================

--- Send a request.
--- In a coroutine (no callback): waits; returns `result`, or `nil, err`.
--- Otherwise `callback(err, result)` is required and the id is returned.
--- `err` is a jrpc.Error: numeric code from the other side, or a local
--- string code "timeout" | "cancelled" | "closed" | "too_many_pending" | "encode" | "busy"
--- | "interrupted" (the waiting coroutine was resumed by another scheduler:
--- the request is cancelled).
---@param method string
---@param params any
---@param opts? {timeout?: number, id?: integer|string}  `id` must not be in flight (raises)
---@param callback? fun(err: jrpc.Error|nil, result: any)
---@return any
function Peer:request(method, params, opts, callback)
  return client.request(self, method, params, opts, callback)
end

--- Send a notification. Returns true, or `nil, err` with a jrpc.Error whose
--- code is "closed", "busy" or "encode" (the same shape as `request`).
---@param method string
---@param params any
---@return boolean|nil ok
---@return jrpc.Error|nil err
function Peer:notify(method, params)
  return client.notify(self, method, params)
end

--- Send a batch (profile jsonrpc only; other profiles raise).
--- In a coroutine (no callback) returns the answers; else `callback(answers)`.
--- Answers are `{result = v}` or `{error = err}` in call order, notifications omitted.
---@param calls table[]  `{ "method", params }` or `{ "method", params, notify = true }`
---@param callback? fun(answers: table[])
---@return table[]|nil
function Peer:batch(calls, callback)
  return client.batch(self, calls, callback)
end

--- Cancel one of our requests: it settles with code "cancelled" and the
--- other side is told (`$/cancelRequest`, or `notifications/cancelled` in mcp).
---@param id integer|string
---@param reason? string
---@return boolean  false when the id was not in flight
function Peer:cancel(id, reason)
  return client.cancel(self, id, reason)
end

--- For transports: settle one of our requests now with `err`, a
--- jrpc.Error (its exchange failed, say an HTTP POST whose connection
--- broke). Unlike `cancel`, the other side is not told.
---@param id integer|string
---@param err jrpc.Error
---@return boolean  false when the id was not in flight
function Link:fail(id, err)
  local peer = self.peer
  if getmetatable(err) ~= errors.metatable then error("fail: err must be a jrpc.Error (jrpc.errors.new)", 2) end
  return client.fail(peer, id, err)
end

--- Expire requests whose deadline has passed (code "timeout").
---@param now? number  default: clock()
---@return number|nil next_deadline
function Peer:tick(now)
  self._out:collect(client.expire, self, now)
  return client.next_deadline(self)
end

--- The earliest deadline of our pending requests (clock seconds), or nil.
--- Transports that drive deadlines with a timer ask after each write.
---@return number|nil
function Link:next_deadline()
  local peer = self.peer
  return client.next_deadline(peer)
end

--- Seconds on the peer's clock (option `clock`, default `core.now`).
---@return number
function Link:now()
  local peer = self.peer
  return client.now(peer)
end

--- Mark the transport busy (its write queue is full): while `reason` is set,
--- new requests, notifications and batches fail at once with code "busy".
--- Replies are still written. `nil` clears it.
---@param reason? string
function Link:set_busy(reason)
  local peer = self.peer
  if reason ~= nil and type(reason) ~= "string" then error("set_busy: reason must be a string or nil", 2) end
  peer._busy = reason
end

--- Why the peer is busy (see `set_busy`), or nil.
---@return string|nil
function Link:busy()
  local peer = self.peer
  return peer._busy
end

--- Close: every pending request settles with code "closed", handlers still
--- waiting can no longer answer, later requests fail at once. Idempotent.
---@param reason? string
function Peer:close(reason)
  if self._closed then return end
  self._closed, self._close_reason = true, reason
  self._reader.close()
  self._out:close()
  server.abandon_all(self)
  -- the transport learns first, so a request settled below sees it closed
  local on_closed = self._on_closed
  self._on_closed = nil
  if on_closed then on_closed() end
  client.settle_all(self, reason)
end

--- True once closed.
---@return boolean
function Peer:closed()
  return self._closed
end

--- Hand what a read under way holds to `send` now (a transport that closes
--- in the middle of a read).
function Link:flush()
  local peer = self.peer
  peer._out:flush()
end

--- Log through the peer's `on_error` hook.
---@param msg string
function Link:log(msg)
  local peer = self.peer
  peer._log(msg)
end

--- A routine event (a notification nobody handles, a late reply, a cancel
--- for an unknown id, junk on a client's input): nothing by default, or
--- the `on_debug` hook. Faults go to `log` instead.
---@param msg string|fun(): string  a function is called only when there is a hook
function Link:debug(msg)
  local peer = self.peer
  local d = peer._debug
  if d == nil then return end
  if type(msg) == "function" then msg = msg() end
  d(msg)
end

--- The log function itself (for transports that report on the peer's behalf).
---@return fun(msg: string)
function Link:logger()
  local peer = self.peer
  return peer._log
end

--- How many of this peer's own requests await their response (what
--- `stats().pending` counts, without making a table).
---@return integer
function Link:awaiting()
  local peer = self.peer
  return client.awaiting(peer)
end

--- Counters: pending, unmatched, settled, expired, max_pending (from the
--- pending table), handled, invalid, failed, dropped_notifications (no
--- handler), unknown_cancels, in_flight (handlers that wait), idle_workers,
--- closed.
---@return table
function Peer:stats()
  local s = server.stats(self, client.stats(self))
  s.idle_workers, s.closed = self._pool:idle_count(), self._closed
  return s
end

-- }======================================================================

-- stderr, or vim.notify inside Neovim (see log.lua)
local function default_on_error(msg)
  logs.report("jrpc: ", msg)
end

-- Routine events (see `Peer:debug`) go nowhere unless on_debug is given.
local function safe_debug(on_debug)
  if on_debug == nil then return nil end
  return function(msg)
    local ok, err = pcall(on_debug, msg)
    if not ok then default_on_error("on_debug failed: " .. tostring(err) .. "; message: " .. msg) end
  end
end

-- A log hook that raises must not break dispatch.
local function safe_logger(on_error)
  return function(msg)
    local ok, err = pcall(on_error, msg)
    if not ok then default_on_error("on_error failed: " .. tostring(err) .. "; message: " .. msg) end
  end
end

--- The names of the peer's options (see jrpc.PeerOptions): a transport
--- hands the peer these and keeps the rest for itself.
M.OPTIONS = options.set{ "send", "profile", "framing", "timeout", "max_message_bytes",
  "max_depth", "max_batch", "max_pending", "debug", "on_error", "on_debug", "null", "role",
  "clock", "methods", "empty_dict" }

local function check_options(opts)
  if type(opts) ~= "table" then error("jrpc.peer: expected an options table", 3) end
  options.check("jrpc.peer", opts, 3, M.OPTIONS)
  if type(opts.send) ~= "function" then error("jrpc.peer: option send must be a function", 3) end
  local profile = profiles[opts.profile or "jsonrpc"]
  if not profile then error("jrpc.peer: unknown profile " .. tostring(opts.profile), 3) end
  if opts.on_error ~= nil and type(opts.on_error) ~= "function" then
    error("jrpc.peer: option on_error must be a function", 3)
  end
  if opts.on_debug ~= nil and type(opts.on_debug) ~= "function" then
    error("jrpc.peer: option on_debug must be a function", 3)
  end
  if opts.timeout ~= nil and type(opts.timeout) ~= "number" then
    error("jrpc.peer: option timeout must be a number of seconds", 3)
  end
  if opts.empty_dict ~= nil and type(opts.empty_dict) ~= "table" then
    error("jrpc.peer: option empty_dict must be a table (a metatable)", 3)
  end
  if opts.role ~= nil and opts.role ~= "client" and opts.role ~= "server" then
    error("jrpc.peer: option role must be \"client\" or \"server\"", 3)
  end
  -- an error reply is two levels deep: a smaller limit could answer nothing
  local depth = opts.max_depth
  if depth ~= nil and (type(depth) ~= "number" or depth < 2) then
    error("jrpc.peer: option max_depth must be at least 2 (an error reply nests two levels)", 3)
  end
  return profile
end

--- Create a peer.
---@class jrpc.PeerOptions
---@field send fun(bytes: string)   required: the transport's write
---@field profile? "jsonrpc"|"mcp"|"lsp"  default "jsonrpc"
---@field framing? "ndjson"|"lsp"    default: "lsp" for profile lsp, else "ndjson"
---@field timeout? number            default per-request timeout in seconds (nil: none)
---@field max_message_bytes? integer passed to the core codec (default 16 MiB; 64 MiB in profile
---                                  lsp). A reply over it settles the request it answers with
---                                  -32600 "reply too large: ..." (every pending request when its
---                                  id cannot be read)
---@field max_depth? integer         passed to the core codec
---@field max_batch? integer         passed to the core codec
---@field max_pending? integer       passed to the core pending table
---@field debug? boolean             -32603 replies carry the Lua error text and traceback in `data`
---@field on_error? fun(msg: string) faults (default: io.stderr; vim.notify in Neovim)
---@field on_debug? fun(msg: string) routine events (default: none; they are counted in stats)
---@field null? any                  what JSON null decodes to in values (default jrpc.null; vim.NIL)
---@field empty_dict? table          a metatable marking empty objects: decoded empty objects get it,
---                                  and an unmarked empty table encodes as [] (Neovim's
---                                  convention; jrpc.nvim.conventions() gives it)
---@field role? "client"|"server"   a client never answers input it cannot decode (default:
---                                  set by the transport: client on the side that spawned or
---                                  connected, server on the side that accepted; a bare peer
---                                  is a client when it has no handlers)
---@field clock? fun(): number       seconds, for deadlines (default core.now)
---@field methods? table<string, function>  handlers to register at once

---@param opts jrpc.PeerOptions
---@return jrpc.Peer
function M.new(opts)
  local profile = check_options(opts)
  local codec = core.codec{ framing = opts.framing or profile.framing, profile = profile.name,
    max_message_bytes = opts.max_message_bytes or profile.max_message_bytes, max_depth = opts.max_depth,
    max_batch = opts.max_batch, null = opts.null, empty_dict = opts.empty_dict }
  local peer = setmetatable({
    _profile = profile, _closed = false, _close_reason = nil, _busy = nil, _on_closed = nil,
    _log = safe_logger(opts.on_error or default_on_error),
    _debug = safe_debug(opts.on_debug),
    _codec = codec,
    _out = output.new(opts.send, codec),  -- its held bytes are kept by the codec
    _calls = client.new(opts),
    _srv = server.new(opts, profile),
  }, Peer)
  peer._pool = workers.new(peer._log, function(ctx) server.foreign(peer, ctx) end,
    function(ctx, err, co) server.raised(peer, ctx, err, co) end)
  -- the read, a closure over the parts (see server.reader)
  peer._reader = server.reader(peer)
  peer._link = setmetatable({ peer = peer }, Link)
  if opts.methods ~= nil then
    if type(opts.methods) ~= "table" then error("jrpc.peer: option methods must be a table of name = function", 2) end
    for name, fn in pairs(opts.methods) do peer:method(name, fn) end
  end
  return peer
end

--- A peer's link: the transport's side of it (jrpc.Link). A transport, or a
--- program doing its own I/O, feeds bytes with `peer:receive` and expires
--- deadlines with `peer:tick`; through the link it also decodes and
--- delivers messages another layer framed, ends the input, marks the
--- connection busy, flushes held replies and reports through the peer's
--- log hooks. Raises for anything but a peer.
---@param peer jrpc.Peer
---@return jrpc.Link
function M.link(peer)
  if getmetatable(peer) ~= Peer then error("jrpc.peer.link: expected a peer, got " .. type(peer), 2) end
  return peer._link
end

--- True for a value made by `new`.
function M.is_peer(v)
  return getmetatable(v) == Peer
end

return M
