--- The answering side of a peer. Every incoming message, whether read
-- alone or as a member of a batch, takes one path: a worker coroutine runs
-- the drain loop (`M.reader`), which hands requests and notifications to
-- their handlers and responses to jrpc.client, then asks the codec for the
-- next message. A handler that waits keeps its worker; another worker goes
-- on draining. Replies echo the request's id text (`rawid`) byte for byte.
--
-- This module owns the serving state (`peer._srv`) and the contexts.
local core = require "jrpc.core"
local errors = require "jrpc.errors"
local client = require "jrpc.client"
local client_result, client_error = client.result, client.error
local output = require "jrpc.output"

local setmetatable = setmetatable
local null = core.null
local codec_methods = getmetatable(core.codec()).__index
local codec_next, codec_result = codec_methods.next, codec_methods.result
local write, hold, release = output.write, output.hold, output.release
local traceback = debug.traceback
local concat = table.concat
local is_wire_error = errors.is_wire_error
local codes = errors.codes
local METHOD_NOT_FOUND, INTERNAL_ERROR = codes.METHOD_NOT_FOUND, codes.INTERNAL_ERROR
local REQUEST_CANCELLED = codes.REQUEST_CANCELLED
-- the codec's message for input over max_message_bytes (src/frame.c)
local TOO_LARGE = "Message too large"

local M = {}

--- The serving state of a new peer.
---@param opts table  peer options: debug, role
---@param profile table
function M.new(opts, profile)
  return {
    handlers = {},        -- method -> handler(params, ctx); a declared one behind its params check
    direct = {},          -- method -> a declared handler itself, for requests the codec checked
    shapes = nil,         -- method -> its params shape, the codec's (codec:shapes), or nil
    fallback = nil,       -- the handler of methods without one (see M.fallback)
    waiting = {},         -- contexts whose handlers wait (requests and notifications)
    nwaiting = 0,
    by_id = {},           -- the waiting request handlers by id (for cancels)
    on_idle = nil,        -- called once no handler waits (finish)
    invalid = 0, failed = 0, dropped_notifications = 0, unknown_cancels = 0,
    handled = nil,        -- function: how many requests and notifications the drain handled
    debug = opts.debug == true, strip_meta = profile.meta, role = opts.role,
  }
end

-- Whether the codec checks declared params as it decodes them (see M.add):
-- a fast path for params that fit, cheaper than the declaration's compiled
-- checker on Lua 5.4 and dearer on LuaJIT, whose compiled checker beats the
-- C API calls (bench/results/design-choices.md). Every params error comes
-- from the checker either way; spec/params_spec.lua runs both.
local CODEC_CHECKS = rawget(_G, "jit") == nil

--- Register a handler: `fn(params, ctx)`, already wrapped by its params
--- declaration if it has one (then `raw` is the handler itself and `shape`
--- the declaration's shape). Where the codec checks declared params
--- (codec:shapes), requests whose params fit come as kind "checked" and go
--- to `raw`, with no wrapper between; others go to the wrapper, which
--- answers -32602 naming the param. (Not in profile mcp, whose params carry
--- `_meta` until the drain takes it out.)
function M.add(peer, name, fn, raw, shape)
  local srv = peer._srv
  srv.handlers[name] = fn
  local direct = shape ~= nil and not srv.strip_meta and CODEC_CHECKS
  srv.direct[name] = direct and raw or nil
  local shapes = srv.shapes or {}
  shapes[name] = direct and shape or nil
  if next(shapes) == nil then shapes = nil end
  if shapes ~= srv.shapes then
    srv.shapes = shapes
    peer._codec:shapes(shapes)
  end
end

--- Set (or clear, with nil) the handler of every request and notification
--- whose method has no handler of its own.
function M.fallback(peer, fn)
  peer._srv.fallback = fn
end

--- The context a handler gets as its second argument. It belongs to the
--- request while the handler runs, waits included; once the handler
--- returns, the worker's next request reuses it (a table per request costs
--- a fifth of a round trip: bench/results/design-choices.md), so keep what
--- you need from it, not the context itself.
---@class jrpc.Context
---@field id integer|string|nil  the request id (nil for a notification)
---@field method string
---@field meta table|nil         `params._meta` (profile mcp), removed from params
---@field peer table             the peer that received the message
local Ctx = {}
Ctx.__index = Ctx

--- True once the other side cancelled this request.
---@return boolean
function Ctx:cancelled()
  return self._cancelled == true
end

--- The request id's exact JSON text, as the reply carries it.
---@return string
function Ctx:id_json()
  local rawid = self._rawid
  return type(rawid) == "number" and ("%d"):format(rawid) or rawid
end

-- {======================================================================
-- Replies
-- =======================================================================

-- A batch collects its members' replies; the last one to finish writes them.
local function member_done(peer, batch)
  local remaining = batch.remaining - 1
  batch.remaining = remaining
  if remaining == 0 and batch.n > 0 then
    peer._out:write(peer._codec:frame("[" .. concat(batch, ",", 1, batch.n) .. "]"))
  end
end

local function deliver(peer, ctx, json)
  local batch = ctx._batch
  if batch == nil then return peer._out:write(json) end
  batch[ctx._index] = json
  member_done(peer, batch)
end

-- An error reply that can always be written: without its data if the data
-- cannot be encoded, as -32603 if even that fails (the codec refuses limits
-- under which an error without data cannot be written).
local function encode_error(peer, ctx, code, message, data)
  local codec, rawid, unframed = peer._codec, ctx._rawid, ctx._batch ~= nil
  local json, msg = codec:error(rawid, code, message, data, unframed)
  if json then return json end
  peer._log(("error reply for %q could not be encoded (%s); sent without data"):format(ctx.method, msg))
  json = codec:error(rawid, code, message, nil, unframed)
  return json or assert(codec:error(rawid, INTERNAL_ERROR, "Internal error", nil, unframed))
end

local function answer_error(peer, ctx, code, message, data)
  deliver(peer, ctx, encode_error(peer, ctx, code, message, data))
end

local function answer_result(peer, ctx, value)
  if value == nil then value = null end
  local json, msg = peer._codec:result(ctx._rawid, value, ctx._batch ~= nil)
  if json then return deliver(peer, ctx, json) end
  peer._log(("result of %q could not be encoded: %s"):format(ctx.method, msg))
  answer_error(peer, ctx, INTERNAL_ERROR, "Internal error", peer._srv.debug and msg or nil)
end

-- A raised jrpc error goes to the wire as is; anything else is a bug in the
-- handler: logged, and answered -32603 without details unless debug is on.
local function answer_failure(peer, ctx, err)
  if is_wire_error(err) then
    local message = err.message
    if type(message) ~= "string" then message = "Server error" end
    return answer_error(peer, ctx, err.code, message, err.data)
  end
  local srv = peer._srv
  srv.failed = srv.failed + 1
  peer._log(("method %q failed: %s"):format(ctx.method, tostring(err)))
  answer_error(peer, ctx, INTERNAL_ERROR, "Internal error", srv.debug and tostring(err) or nil)
end

-- }======================================================================

-- {======================================================================
-- Handlers that wait (a cancel can reach no other; finish waits for them)
-- =======================================================================

local function track(peer, co, ctx)
  local srv = peer._srv
  ctx._waited, ctx._waiting = true, true
  srv.waiting[ctx] = true
  if ctx._rawid ~= nil then srv.by_id[ctx.id] = ctx end
  srv.nwaiting = srv.nwaiting + 1
  peer._pool:park(co, ctx)
end

local function untrack(peer, ctx)
  local srv = peer._srv
  ctx._waiting = false
  srv.waiting[ctx] = nil
  if ctx.id ~= nil and srv.by_id[ctx.id] == ctx then srv.by_id[ctx.id] = nil end
  local n = srv.nwaiting - 1
  srv.nwaiting = n
  if n == 0 and srv.on_idle then
    local on_idle = srv.on_idle
    srv.on_idle = nil
    on_idle()
  end
end

--- Number of handlers that wait.
function M.waiting(peer)
  return peer._srv.nwaiting
end

--- Call `fn()` once no handler waits (now, if none does).
function M.when_idle(peer, fn)
  local srv = peer._srv
  if srv.nwaiting == 0 then return fn() end
  srv.on_idle = fn
end

--- The peer is closing: handlers still waiting can no longer answer.
function M.abandon_all(peer)
  local srv = peer._srv
  for ctx in pairs(srv.waiting) do
    ctx._cancelled, ctx._waiting = true, false
  end
  srv.waiting, srv.by_id, srv.nwaiting, srv.on_idle = {}, {}, 0, nil
end

--- A waiting handler's worker yielded to another scheduler: jrpc can never
--- resume it, so its request is answered -32603 now (and never again).
function M.foreign(peer, ctx)
  local what = ctx._rawid and "request" or "notification"
  peer._log(("%s %q: its handler yielded to another scheduler; a jrpc handler may wait "
    .. "only in jrpc calls (peer:request, loop:sleep, ...)%s"):format(what, ctx.method,
    ctx._rawid and "; answered -32603" or ""))
  local cancelled = ctx._cancelled
  ctx._cancelled = true  -- should it ever run on, it answers nothing
  local srv = peer._srv
  srv.failed = srv.failed + 1
  if ctx._rawid ~= nil and not cancelled then
    answer_error(peer, ctx, INTERNAL_ERROR, "Internal error",
      srv.debug and "handler yielded to another scheduler" or nil)
  end
  if ctx._waiting then untrack(peer, ctx) end
end

-- }======================================================================

-- The end of a handler that did not simply return a value that encodes:
-- errors, notifications, batch members, encode failures.
local function conclude(peer, ctx, ok, result)
  if ctx._rawid == nil then  -- a notification: nobody to tell
    if not ok then
      local srv = peer._srv
      srv.failed = srv.failed + 1
      peer._log(("notification %q failed: %s"):format(ctx.method, tostring(result)))
    end
  elseif ctx._cancelled then  -- already answered (or silenced) by the cancel
    return
  elseif ok then
    answer_result(peer, ctx, result)
  else
    answer_failure(peer, ctx, result)
  end
end

-- A handler that waited returned `result`: answer unless that is moot,
-- then stop tracking it; its worker's context is clean for the next request.
local function finish_waited(peer, ctx, ok, result)
  ctx._waited = "done"  -- what raises from here on is not the handler's (see M.raised)
  conclude(peer, ctx, ok, result)
  -- after the reply: the last handler done may close a finishing peer
  if ctx._waiting then untrack(peer, ctx) end
  ctx._cancelled, ctx._waited = nil, nil
end

-- The handler of `ctx` raised `err` on the worker `co`: answered as a
-- failure (with the worker's traceback in debug mode).
local function fail(peer, ctx, err, co)
  if peer._srv.debug and not is_wire_error(err) then err = traceback(co, tostring(err)) end
  conclude(peer, ctx, false, err)
end

-- Profile mcp: `_meta` travels beside the params, not in them.
local function split_meta(params)
  if type(params) ~= "table" then return nil end
  local meta = params._meta
  if meta ~= nil then params._meta = nil end
  return meta
end

local function on_cancel(peer, params)
  if type(params) ~= "table" then return end
  local id = params[peer._profile.cancel_key]
  local ctx = id ~= nil and peer._srv.by_id[id]
  if not ctx then  -- finished already or unknown: races are normal (routine)
    peer._srv.unknown_cancels = peer._srv.unknown_cancels + 1
    local debug = peer._debug
    if debug then debug("cancel for unknown or finished request " .. tostring(id)) end
    return false
  end
  ctx._cancelled = true
  untrack(peer, ctx)
  if peer._profile.answer_cancelled then
    answer_error(peer, ctx, REQUEST_CANCELLED, "Request cancelled")
  end
end

local function is_quiet(peer, method)
  local prefix = peer._profile.quiet_prefix
  return prefix ~= nil and method:sub(1, #prefix) == prefix
end

-- Does this peer answer input it cannot decode? A client does not: a
-- server that logs to stdout would get an error response for each log line
-- (many such servers crash on that). `role` says: the transports set it
-- ("client" on the side that spawned or connected, "server" on the side
-- that accepted; the caller's own option wins); a bare peer without it is
-- a client when it has no handlers.
local function answers_invalid(srv)
  if srv.role ~= nil then return srv.role ~= "client" end
  return next(srv.handlers) ~= nil
end

--- A message the codec rejected; answered only when the codec says so and
--- this peer serves.
local function invalid(peer, code, message, rawid, reply, detail, batch)
  local srv = peer._srv
  srv.invalid = srv.invalid + 1
  if message == TOO_LARGE and batch == nil then
    -- it may be the reply one of our requests waits for; nobody answers a reply
    local info = peer._codec:oversize()
    client.too_large(peer, info)
    if info and info.kind == "response" then reply = false end
  end
  if reply and not answers_invalid(srv) then
    -- routine: servers print log lines on stdout; counted in `invalid`
    if peer._debug == nil then return end
    peer._debug(("dropped input that is not a valid message: %d %s%s (a client does not answer it)")
      :format(code, message, detail and ": " .. tostring(detail) or ""))
    return
  end
  -- junk without an id on a client's input (a stray line between LSP
  -- frames) is routine too; a broken response naming an id is a fault
  local routine = not reply and rawid == "null" and not answers_invalid(srv)
  if routine and peer._debug == nil then return end
  local report = routine and peer._debug or peer._log
  report(("invalid message: %d %s%s (id %s)%s"):format(code, message,
    detail and ": " .. tostring(detail) or "", rawid, reply and "" or "; not answered"))
  if not reply then
    -- a broken response that names one of our requests settles it now
    if rawid ~= "null" then client.broken(peer, rawid, detail) end
    return
  end
  if batch == nil then return peer._out:write(peer._codec:error(rawid, code, message)) end
  batch.n = batch.n + 1
  batch[batch.n] = peer._codec:error(rawid, code, message, nil, true)
end

-- {======================================================================
-- Batches: the drain loop dispatches their members one after another, as
-- it does messages read alone; their replies are collected in the batch
-- and written as one array once the last of them is done.
-- =======================================================================

-- A batch member's request gets a context of its own, which says where
-- its reply goes.
local function member_ctx(peer, batch, method, id, rawid)
  local n = batch.n + 1
  batch.n, batch.remaining = n, batch.remaining + 1
  return setmetatable({ id = id, method = method, peer = peer, _rawid = rawid,
    _batch = batch, _index = n }, Ctx)
end

-- }======================================================================

-- {======================================================================
-- Dispatch: a worker drains the codec, so one read costs one coroutine
-- resume, not one per message. A handler that waits keeps that worker;
-- another worker goes on draining, and the first one stops once its
-- handler is done (it is no longer the dispatcher).
-- =======================================================================

--- A waiting handler's worker `co` raised `err`: in its handler (then the
--- request is answered as failed; handlers run unprotected, see M.reader)
--- or, after the handler was done, in its reply's write (only logged).
function M.raised(peer, ctx, err, co)
  if ctx._waited == true then
    fail(peer, ctx, err, co)
  else
    peer._log(("method %q: its worker failed: %s"):format(ctx.method, tostring(err)))
  end
  if ctx._waiting then untrack(peer, ctx) end
  ctx._cancelled, ctx._waited = nil, nil
end

--- The read function of `peer`: `read(peer, bytes)` feeds `bytes` to the
--- codec and dispatches every complete message, with the peer's parts held
--- as upvalues rather than read from its fields on every read. The second
--- function, `decoded(kind, ...)`, dispatches one message its transport
--- decoded already (Peer:decode) through the same read.
---
--- Handlers run without a pcall of their own (one would cost about a
--- twentieth of a round trip on Lua 5.4): the worker's resume catches what
--- they raise, and `current` says whose handler was running. Whatever else
--- raises (a send, a clock, a memory error), the serving state and the
--- output are restored before the error reaches the caller of receive, so
--- the next read is answered as usual: it runs in the worker too, or
--- before any state changes (the first decode, the deadline check, which
--- guards the user's clock).
function M.reader(peer)
  local codec, srv, out = peer._codec, peer._srv, peer._out
  local handlers, direct, strip_meta = srv.handlers, srv.direct, srv.strip_meta
  local cancel_method = peer._profile.cancel_method
  -- each worker's own context, reused by the requests it runs one after another
  local run = peer._pool:runner(function() return setmetatable({ peer = peer }, Ctx) end)
  local handled = 0  -- requests and notifications dispatched (an upvalue: cheaper than a field)
  local queue = nil  -- the members of a batch still to dispatch (see next_member)
  srv.handled = function() return handled end
  -- the context whose handler runs now on the dispatching worker; false
  -- while a request's callback runs there
  local current = nil
  local closed, on_read = false, nil  -- the peer's state, as the peer tells it (see the end)
  local send_now = false  -- where the output would hand bytes now (jrpc.output: on_direct)
  out:on_direct(function(fn) send_now = fn end)

  -- Call `fn(params, ctx)` on the dispatching worker: true when it waited
  -- (then the worker no longer dispatches), and what it returned.
  -- (A handler that waited finds `current` changed when it returns: its
  -- worker's stop cleared it, and no other handler runs with its context.)
  local function call(fn, params, ctx)
    current = ctx
    local result = fn(params, ctx)
    if current ~= ctx then return true, result end
    current = nil
    return false, result
  end

  -- The next member of the batch under way, as the codec would give it
  -- (kind and up to five values), and the batch; nothing once all were
  -- dispatched. A batch read while another is under way (a handler called
  -- receive) goes first, then the other's members.
  local function next_member()
    local i = queue.i + 1
    local item = queue.items[i]
    if item == nil then
      local batch = queue.batch
      queue = queue.outer
      member_done(peer, batch)  -- the count the batch started with
      return nil
    end
    queue.i = i
    return item[1], item[2], item[3], item[4], item[5], nil, queue.batch
  end

  -- A notification, with the worker's context `ctx`: true when its handler
  -- waited (then the worker no longer dispatches).
  local function notification(ctx, method, params)
    local fn = handlers[method] or srv.fallback
    -- a cancel for none of our handlers may still matter to a handler of
    -- the cancel method: an MCP server ends a client's listen stream so
    if method == cancel_method and (on_cancel(peer, params) ~= false or fn == nil) then return false end
    if fn == nil then
      -- routine ($/progress, publishDiagnostics nobody asked for): counted, not logged
      srv.dropped_notifications = srv.dropped_notifications + 1
      if not is_quiet(peer, method) and peer._debug then
        peer._debug(("notification %q has no handler; dropped"):format(method))
      end
      return false
    end
    ctx.id, ctx.method, ctx._rawid = nil, method, nil
    if strip_meta then ctx.meta = split_meta(params) end
    local waited = call(fn, params, ctx)
    if waited then finish_waited(peer, ctx, true) end
    return waited
  end

  -- The drain loop, the job of the dispatching worker, whose context is
  -- `own`: dispatch the message given (or none: read one first), then
  -- every message after it (the rest of a batch first, then the codec's),
  -- until none is left, a handler waits (then `stopped` tracks it, another
  -- worker goes on, and this one stops once the handler is done) or the
  -- peer closes. A request's `e` says whether the codec holds any byte
  -- more: when it holds none, there is no next message to ask for (bytes a
  -- handler feeds meanwhile, through a nested receive, are drained there),
  -- and its reply goes back to `read` to write, outside the worker.
  local function drain(own, kind, a, b, c, d, e)
    local batch = nil  -- the batch of the message, if it is a member
    while true do
      if kind == nil then
        if queue ~= nil then kind, a, b, c, d, e, batch = next_member() end
        if kind == nil then
          batch = nil
          kind, a, b, c, d, e = codec_next(codec, nil, true)
          if kind == nil then return end
        end
      end
      if kind == "request" or kind == "checked" then
        handled = handled + 1
        -- "checked": the codec checked its params against the declaration
        local fn = (kind == "request" and handlers or direct)[a] or srv.fallback
        local ctx = own
        if batch == nil then
          ctx.id, ctx.method, ctx._rawid = c, a, d
        else
          ctx = member_ctx(peer, batch, a, c, d)
        end
        if strip_meta then ctx.meta = split_meta(b) end
        if fn == nil then
          answer_error(peer, ctx, METHOD_NOT_FOUND, "Method not found")
        else
          current = ctx  -- see `call`: on every request's path, so inline
          local result = fn(b, ctx)
          if current ~= ctx then return finish_waited(peer, ctx, true, result) end
          current = nil
          if batch == nil then
            if result == nil then result = null end
            local json = codec_result(codec, d, result)
            if json == nil then
              conclude(peer, ctx, true, result)
            elseif e == false and json ~= true then  -- not held: see `read`
              return json
            else
              write(out, json)
            end
          else
            conclude(peer, ctx, true, result)
          end
        end
        if e == false then return end
      elseif kind == "result" or kind == "error" then
        local callback, err
        if kind == "result" then callback = client_result(peer, a, b) else callback, err = client_error(peer, a, b) end
        if callback then
          current = false  -- a request's callback runs (see `stopped`, and `read` for a raise)
          if err == nil then callback(nil, b) else callback(err) end
          if current ~= false then return end  -- it waited: another worker dispatches now
          current = nil
        end
      elseif kind == "notification" then
        handled = handled + 1
        if notification(own, a, b) then return end
      elseif kind == "batch" then
        queue = { items = a, i = 0, batch = { n = 0, remaining = 1 }, outer = queue }
      elseif kind == "invalid" then
        invalid(peer, a, b, c, d, e, batch)
      end
      if closed then return end
      kind = nil
    end
  end

  -- The dispatching worker `co` stopped (outcome "waiting" or "foreign")
  -- in the handler of `current`: track it if it waits, answer it if it
  -- yielded to another scheduler. A request's callback that waits is not
  -- tracked: its worker only stops dispatching.
  local function stopped(outcome, co)
    local ctx = current
    current = nil
    if not ctx then return end  -- a callback (false): its worker only stops dispatching
    if outcome == "waiting" then track(peer, co, ctx) else M.foreign(peer, ctx) end
  end

  -- A read of `bytes`; or, given `kind` and the rest, of a message its
  -- transport decoded already (Peer:decode), dispatched the same way.
  local function read(_, bytes, kind, a, b, c, d, e)
    if closed then return end
    if on_read then  -- the deadline check, while there are deadlines
      on_read(peer)
      if closed then return end
    end
    if kind == nil then
      kind, a, b, c, d, e = codec_next(codec, bytes, true)  -- feeds the bytes first
      if kind == nil then return end  -- a read with no message: no worker
    end
    -- more than one message: their replies go to send together (jrpc.output)
    local held = e ~= false
    if held then hold(out) end
    local outer, failure, reply = current, nil, nil  -- outer: nested in a handler (it called receive)
    repeat
      local outcome, x, co = run(drain, kind, a, b, c, d, e)
      if outcome == "done" then
        reply = x
        break
      end
      -- the slow paths, protected: what they raise (a send, say) reaches
      -- the caller of receive once the state is restored
      local ok, why = true, nil
      if outcome == "raised" then
        local ctx = current
        current = nil
        if ctx then
          ok, why = pcall(fail, peer, ctx, x, co)
        elseif ctx == false then
          peer._log("request callback failed: " .. tostring(x))
        else
          ok, why = false, x  -- not a handler's nor a callback's: say, a send's
        end
      elseif outcome == nil then
        ok, why = false, "not enough memory for a worker coroutine"
      else
        ok, why = pcall(stopped, outcome, x)
      end
      if not ok then failure = why end
      kind = nil  -- the next worker reads the next message itself
    until failure ~= nil or closed
    current = outer
    if held then release(out) end
    if failure ~= nil then error(failure, 0) end
    if reply then  -- the one reply of a one-request read, written last
      if send_now then return send_now(reply) end
      return write(out, reply)
    end
  end
  return {
    read = read,
    decoded = function(...) return read(nil, nil, ...) end,  -- a message from Peer:decode
    close = function() closed = true end,  -- the peer closed
    on_read = function(fn) on_read = fn end,  -- the client's deadline check
  }
end

-- }======================================================================

--- Counters: handled, invalid, failed, in_flight (handlers that wait).
function M.stats(peer, into)
  local srv = peer._srv
  into.handled, into.invalid, into.failed = srv.handled(), srv.invalid, srv.failed
  into.dropped_notifications, into.unknown_cancels = srv.dropped_notifications, srv.unknown_cancels
  into.in_flight = srv.nwaiting
  return into
end

return M
