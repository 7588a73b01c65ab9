--- The answering side of a peer: dispatch of incoming requests,
-- notifications and batches to handlers, each in a worker coroutine, and
-- their replies. Replies echo the request's id text (`rawid`) byte for byte.
--
-- This module owns the serving state (`peer._srv`): the handlers, the
-- handlers that wait (in flight), the dispatching worker and the counters.
local core = require "jrpc.core"
local errors = require "jrpc.errors"
local client = require "jrpc.client"
local result_callback = client.result_callback
local output = require "jrpc.output"
local workers = require "jrpc.workers"

local setmetatable, pcall, xpcall = setmetatable, pcall, xpcall
local getinfo = debug.getinfo
local null = core.null
local codec_methods = getmetatable(core.codec()).__index
local codec_next, codec_result = codec_methods.next, codec_methods.result
local write, hold, release = output.write, output.hold, output.release
local Pool = workers.Pool
local take, start_raw = Pool.take, Pool.start_raw
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
    handlers = {},
    bare = {},            -- method -> its handler, when that runs without a context (see add)
    direct = {},          -- method -> the declared handler itself, its params checked by the codec (see add)
    checked = {},         -- the same, for bare handlers only (the drain's one lookup)
    shapes = nil,         -- method -> its params shape, the codec's (codec:shapes), or nil
    bare_method = nil, bare_id = nil, bare_rawid = nil,  -- the bare request running in place
    waiting = {},         -- contexts whose handlers wait (requests and notifications)
    nwaiting = 0,
    by_id = {},           -- the waiting request handlers by id (for cancels)
    dispatcher = false,   -- the worker draining the codec
    running = nil,        -- the context the dispatcher runs in place
    on_idle = nil,        -- called once no handler waits (finish)
    handled = 0, invalid = 0, failed = 0, dropped_notifications = 0, unknown_cancels = 0,
    handled_here = nil,   -- how many requests M.reader's own path handled
    debug = opts.debug == true, strip_meta = profile.meta, role = opts.role,
  }
end

-- Whether the codec checks declared params (see M.add): cheaper than the
-- declaration's compiled checker on Lua 5.4, dearer on LuaJIT, whose
-- compiled checker beats the C API calls (bench/results/design-choices.md).
local CODEC_CHECKS = rawget(_G, "jit") == nil

-- Can `fn` see a second argument (the context)? C functions and varargs
-- count as yes.
local function takes_ctx(fn)
  local info = getinfo(fn, "u")
  return info.isvararg ~= false or info.nparams == nil or info.nparams >= 2
end
M.takes_ctx = takes_ctx

--- Register a handler (already wrapped by its params declaration, if it
--- has one: then `raw` is the handler itself and `shape` the declaration's
--- shape). A handler that cannot see its context is "bare": its requests
--- make no context table unless it waits or fails (a table per request
--- costs about a tenth of a round trip on Lua 5.4). Profile mcp strips
--- `_meta` into the context, and debug wants a traceback: those always get
--- one. A declared handler's params are checked by the codec as it decodes
--- them (codec:shapes): requests whose params fit come as kind "checked"
--- and go to `raw` with no wrapper between (not in profile mcp, whose
--- params carry `_meta` until the server takes it out).
function M.add(peer, name, fn, raw, shape)
  local srv = peer._srv
  srv.handlers[name] = fn
  local bare = not (takes_ctx(fn) or srv.strip_meta or srv.debug)
  srv.bare[name] = bare and fn or nil
  local direct = shape ~= nil and not srv.strip_meta and CODEC_CHECKS
  srv.direct[name] = direct and raw or nil
  srv.checked[name] = direct and bare and raw or nil
  local shapes = srv.shapes or {}
  shapes[name] = direct and shape or nil
  if next(shapes) == nil then shapes = nil end
  if shapes ~= srv.shapes then
    srv.shapes = shapes
    peer._codec:shapes(shapes)
  end
end

---@class jrpc.Context
---@field id integer|string|nil  the request id (nil for a notification)
---@field method string
---@field meta table|nil         `params._meta` (profile mcp), removed from params
---@field peer table             the peer that received the message
local Ctx = {}
Ctx.__index = Ctx

local function new_ctx(peer, method, id, rawid)
  return setmetatable({ id = id, method = method, peer = peer, _rawid = rawid }, Ctx)
end

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
  ctx._waiting = true
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

-- The slow part of serve: errors, notifications, batches, encode failures.
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

-- A handler with a context returned (ok, result): answer unless that is
-- moot, then stop tracking it. The common case (a single request that
-- returns a value) is inlined.
local function answer_done(peer, ctx, ok, result)
  if ok and ctx._batch == nil and ctx._rawid ~= nil and not ctx._cancelled then
    if result == nil then result = null end
    local json = codec_result(peer._codec, ctx._rawid, result)
    if json then
      write(peer._out, json)
      -- after the reply: the last handler done may close a finishing peer
      if ctx._waiting then untrack(peer, ctx) end
      return
    end
  end
  conclude(peer, ctx, ok, result)
  if ctx._waiting then untrack(peer, ctx) end
end

-- The job a worker runs: call the handler, answer (see answer_done).
-- The common case (a single request that returns a value) is inlined.
local function serve(fn, params, ctx)
  local peer = ctx.peer
  local ok, result
  if peer._srv.debug then
    ok, result = xpcall(fn, traceback, params, ctx)
  else
    ok, result = pcall(fn, params, ctx)
  end
  return answer_done(peer, ctx, ok, result)
end

-- The contexts made for bare requests whose handler stopped (waits, or
-- yielded elsewhere), by worker: the handler's job finds it when it returns.
local made = setmetatable({}, { __mode = "k" })

-- Marks `srv.running` while a bare request runs in place (no context yet).
local BARE = setmetatable({}, { __tostring = function() return "jrpc.BARE" end })
-- Marks it while the dispatching worker calls a request's callback.
local CALLBACK = setmetatable({}, { __tostring = function() return "jrpc.CALLBACK" end })

-- A bare request's handler waited (so it has a context) and returned
-- `result`. (A raise never gets here: see M.raised.)
local function serve_bare_waited(peer, me, result)
  local ctx = made[me]
  made[me] = nil  -- from here on, the same as any request
  ctx._answered = true  -- whatever raises from here on, see M.raised
  return answer_done(peer, ctx, true, result)
end

-- The end of a bare request run in place by the dispatching worker `me`
-- (see M.reader's drain) whose handler returned, but not simply a value
-- that encodes: one that does not, or it waited first (then the dispatcher
-- made its context: see `made_for`). A raise is answered by
-- dispatch_decoded.
local function bare_done(peer, me, method, id, rawid, result)
  if made[me] == nil then return conclude(peer, new_ctx(peer, method, id, rawid), true, result) end
  return serve_bare_waited(peer, me, result)
end

-- The context of the bare request that runs in place now (its method and
-- ids are kept in srv while it runs).
local function bare_ctx(peer)
  local srv = peer._srv
  return new_ctx(peer, srv.bare_method, srv.bare_id, srv.bare_rawid)
end

-- The worker `co` stopped inside a bare request's handler: make its context
-- now, from what the dispatcher noted, and leave it for the job.
local function made_for(peer, co)
  local ctx = bare_ctx(peer)
  ctx._unprotected = true  -- no pcall around it: a raise after its wait, see M.raised
  made[co] = ctx
  return ctx
end

-- What to do with a worker after its start (or a wake) came back.
local function after_start(peer, co, ctx, outcome)
  if outcome == "waiting" then
    track(peer, co, ctx)
  elseif outcome == "foreign" then
    M.foreign(peer, ctx)
  end
end

-- Start a handler: in place when we are the dispatching worker (the
-- dispatcher notes the context, in case the handler waits), else on a worker
-- of its own (batch members).
local function start(peer, fn, params, ctx, inplace)
  if inplace then
    peer._srv.running = ctx
    return serve(fn, params, ctx)
  end
  local pool = peer._pool
  local co = pool:take() or error("not enough memory for a worker coroutine")
  after_start(peer, co, ctx, pool:start(co, serve, fn, params, ctx))
end

-- Profile mcp: `_meta` travels beside the params, not in them.
local function split_meta(params)
  if type(params) ~= "table" then return nil end
  local meta = params._meta
  if meta ~= nil then params._meta = nil end
  return meta
end

--- An incoming request with a context (`inplace`: run it on the dispatching
--- worker; or a batch member: `batch`, `index` say where its reply goes;
--- `checked`: its params fit the method's declaration, see M.add).
--- Requests for bare handlers run in place are served by the drain itself.
function M.request(peer, method, params, id, rawid, inplace, batch, index, checked)
  local srv = peer._srv
  srv.handled = srv.handled + 1
  local ctx
  if batch == nil then
    ctx = setmetatable({ id = id, method = method, peer = peer, _rawid = rawid }, Ctx)
  else
    ctx = setmetatable({ id = id, method = method, peer = peer, _rawid = rawid,
      _batch = batch, _index = index }, Ctx)
  end
  if srv.strip_meta then ctx.meta = split_meta(params) end
  local fn = checked and srv.direct[method] or srv.handlers[method]
  if fn == nil then
    return answer_error(peer, ctx, METHOD_NOT_FOUND, "Method not found")
  end
  if inplace then  -- start(), inlined: this is every request's path
    srv.running = ctx
    return serve(fn, params, ctx)
  end
  start(peer, fn, params, ctx)
end

local function on_cancel(peer, params)
  if type(params) ~= "table" then return end
  local id = params[peer._profile.cancel_key]
  local ctx = id ~= nil and peer._srv.by_id[id]
  if not ctx then  -- finished already or unknown: races are normal (routine)
    peer._srv.unknown_cancels = peer._srv.unknown_cancels + 1
    peer:debug(function() return "cancel for unknown or finished request " .. tostring(id) end)
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

--- An incoming notification: never answered, whatever happens.
function M.notification(peer, method, params, inplace)
  local srv = peer._srv
  srv.handled = srv.handled + 1
  local fn = srv.handlers[method]
  -- a cancel for none of our handlers may still matter to a handler of
  -- the cancel method: an MCP server ends a client's listen stream so
  if method == peer._profile.cancel_method and (on_cancel(peer, params) ~= false or fn == nil) then
    return
  end
  if fn == nil then
    -- routine ($/progress, publishDiagnostics nobody asked for): counted, not logged
    srv.dropped_notifications = srv.dropped_notifications + 1
    if not is_quiet(peer, method) and peer._debug then
      peer._debug(("notification %q has no handler; dropped"):format(method))
    end
    return
  end
  local ctx = setmetatable({ method = method, peer = peer }, Ctx)
  if srv.strip_meta then ctx.meta = split_meta(params) end
  start(peer, fn, params, ctx, inplace)
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
function M.invalid(peer, code, message, rawid, reply, detail, batch)
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

--- An incoming batch: requests answered in one array (notifications omitted),
--- responses routed to our pending requests.
function M.batch(peer, items)
  -- remaining starts at 1 for this loop, so members that finish at once
  -- cannot complete the batch before all of them have started
  local batch = { n = 0, remaining = 1 }
  for i = 1, #items do
    local item = items[i]
    local kind = item[1]
    if kind == "request" or kind == "checked" then
      batch.n, batch.remaining = batch.n + 1, batch.remaining + 1
      M.request(peer, item[2], item[3], item[4], item[5], false, batch, batch.n, kind == "checked")
    elseif kind == "notification" then
      M.notification(peer, item[2], item[3])
    elseif kind == "result" then
      client.result(peer, item[2], item[3])
    elseif kind == "error" then
      client.error(peer, item[2], item[3])
    elseif kind == "invalid" then
      M.invalid(peer, item[2], item[3], item[4], item[5], item[6], batch)
    end
  end
  member_done(peer, batch)
end

-- {======================================================================
-- Dispatch: a worker drains the codec and runs handlers in place, so one
-- read costs one coroutine resume, not one per message. A handler that
-- waits keeps that worker; another worker goes on draining, and the first
-- one stops once its handler is done (it is no longer the dispatcher).
-- =======================================================================

-- Act on one decoded message (not a request run in place).
local function act(peer, kind, a, b, c, d, e)
  peer._srv.running = nil  -- no handler of ours runs in place (yet)
  if kind == "request" or kind == "checked" then
    M.request(peer, a, b, c, d, true, nil, nil, kind == "checked")
  elseif kind == "notification" then
    M.notification(peer, a, b, true)
  elseif kind == "result" then
    client.result(peer, a, b)
  elseif kind == "error" then
    client.error(peer, a, b)
  elseif kind == "batch" then
    M.batch(peer, a)
  elseif kind == "invalid" then
    M.invalid(peer, a, b, c, d, e)
  end
end

-- A worker stopped inside a handler: it waits (track it) or yielded
-- elsewhere. The slow path, so it may afford a pcall: nothing that
-- dispatch does outside a worker may raise past its restore.
local function stopped(peer, co, ctx, outcome)
  local ok, err = pcall(after_start, peer, co, ctx, outcome)
  if not ok then peer._log("dispatch: " .. tostring(err)) end
end

-- The dispatching worker raised `err`. In a bare handler (no pcall around
-- it: `srv.running` is still BARE), that request is answered as a handler
-- failure; in a request's callback (CALLBACK) it is logged as the
-- callback's; anything else is only logged, as a worker's failure.
local function raised_in_drain(peer, co, err)
  local running = peer._srv.running
  if running == BARE then
    conclude(peer, bare_ctx(peer), false, err)
  elseif running == CALLBACK then
    peer._log("request callback failed: " .. tostring(err))
  else
    peer._log("coroutine failed: " .. traceback(co, tostring(err)))
  end
end

-- The rest of a read's one bare request (see `M.reader`) when the handler
-- did not simply return a value that encodes: it returned one that does
-- not, raised, waited or yielded elsewhere. It gets its context now.
local function one_bare_slow(peer, outcome, json, ok, result, method, id, rawid)
  if outcome == "done" then
    return conclude(peer, new_ctx(peer, method, id, rawid), ok, result)
  elseif outcome == "raised" then
    return conclude(peer, new_ctx(peer, method, id, rawid), false, json)
  end
  if outcome == nil then error("not enough memory for a worker coroutine", 0) end
  local co = json  -- it stopped inside the handler: waits, or yielded elsewhere
  local ctx = new_ctx(peer, method, id, rawid)
  ctx._unprotected = true
  made[co] = ctx
  stopped(peer, co, ctx, outcome)
end

--- A waiting handler's worker raised `err` (a bare request run by
--- `one_bare`, whose handler has no pcall): answered as a handler failure,
--- unless its reply was already written (then it is only logged).
function M.raised(peer, ctx, err)
  if ctx._unprotected and not ctx._answered then
    conclude(peer, ctx, false, err)
  else
    peer._log(("method %q: its worker failed: %s"):format(ctx.method, tostring(err)))
  end
  if ctx._waiting then untrack(peer, ctx) end
end

-- The general path of a read (see `M.reader`), from its first message,
-- decoded, on: act on every complete message the codec holds; what they
-- write goes to `send` in one call at the end (unless this is nested in
-- another read).
--
-- Whatever raises (a handler, a clock, a memory error), the serving state
-- and the output are restored, so the next read is answered as usual. A
-- pcall per read would cost a noticeable share of a round trip
-- (bench/results/design-choices.md), so the guarantee comes from the
-- structure instead: everything that can raise runs in the
-- worker (whose resume catches it), or before any state changes (the first
-- decode, the deadline check, which guards the user's clock), or on a slow
-- path under its own pcall.
local function dispatch_decoded(peer, kind, a, b, c, d, e)
  local srv, pool, out = peer._srv, peer._pool, peer._out
  local outer_dispatcher, outer_running = srv.dispatcher, srv.running
  -- nested in a bare handler (it called receive): keep what made_for needs
  local outer_bare = outer_running == BARE and { srv.bare_method, srv.bare_id, srv.bare_rawid }
  local starved = false  -- no memory for a worker coroutine
  hold(out)
  repeat
    local co = take(pool)
    if co == nil then starved = true; break end
    srv.dispatcher, srv.running = co, nil
    local outcome, err = start_raw(pool, co, srv.drain, peer, co, kind, a, b, c, d, e)
    -- done: the worker drained the codec; else it stopped inside a handler
    -- (that waits or yielded elsewhere) or raised, and another worker goes on
    if outcome == "done" then break end
    if outcome == "raised" then
      local ok, why = pcall(raised_in_drain, peer, co, err)
      if not ok then peer._log("dispatch: " .. tostring(why)) end
    else
      local ctx = srv.running
      if ctx == BARE then ctx = made_for(peer, co)
      elseif ctx == CALLBACK then ctx = nil end  -- a callback that waits: no request of ours
      if ctx ~= nil then stopped(peer, co, ctx, outcome) end
    end
    kind = nil  -- the next worker reads the codec itself
  until peer._closed
  srv.dispatcher, srv.running = outer_dispatcher, outer_running
  if outer_bare then srv.bare_method, srv.bare_id, srv.bare_rawid = outer_bare[1], outer_bare[2], outer_bare[3] end
  release(out)
  if starved then error("not enough memory for a worker coroutine", 0) end
end

--- The read function of `peer`: `read(peer, bytes)` does what `dispatch`
--- does, with the peer's parts held as upvalues rather than read from its
--- fields on every read (each field read costs about as much as the
--- handler's own work on Lua 5.4). A read that holds one request for a bare
--- handler, the common case, takes a path of its own: no general loop and
--- none of its state (a nested read, should the handler receive, finds none
--- of ours to restore), no hold (the reply is the read's one write, made
--- here, after the worker yields it back, so a failing send reaches the
--- caller of receive as after a hold) and no pcall around the handler (the
--- worker's resume catches a raise: see Pool.run). The second function,
--- `decoded(kind, ...)`, dispatches one message its transport decoded
--- already (Peer:decode) through the same read, as if it had decoded it.
function M.reader(peer)
  local codec, srv, out = peer._codec, peer._srv, peer._out
  local bare, checked, run = srv.bare, srv.checked, peer._pool:runner()
  local handled = 0  -- requests this path served (an upvalue: cheaper than a field)
  srv.handled_here = function() return handled end
  -- The job: the reply for the dispatcher to write when the handler did not
  -- wait: (json) or (nil, true, result) for `conclude`. A handler that
  -- waited answers by itself, as any request does.
  -- The dispatching worker's job (see dispatch_decoded): the message
  -- already decoded (or none: read the codec first), then the rest.
  -- Requests for bare handlers, the common case, are served here, inline;
  -- other messages take `M.request` and `act`. The codec is asked for
  -- `more` (a request's `e`): false when it holds no byte more, so there
  -- is no next message to ask for (bytes a handler feeds meanwhile,
  -- through a nested receive, are drained by that receive).
  srv.drain = function(_, me, kind, a, b, c, d, e)
    if kind == nil then
      kind, a, b, c, d, e = codec_next(codec, nil, true)
      if kind == nil then return end
    end
    while true do
      if kind == "request" or kind == "checked" then
        -- "checked": its params fit the declaration of a bare handler (see
        -- M.add); a method in `checked` is in `bare` too, so a request whose
        -- method is not in `bare` finds nothing in `checked` either
        local fn = kind == "request" and bare[a] or checked[a]
        if fn then
          handled = handled + 1
          srv.running, srv.bare_method, srv.bare_id, srv.bare_rawid = BARE, a, c, d
          -- no pcall (see dispatch_decoded): a raise ends this worker, and
          -- dispatch_decoded answers it while srv.running is BARE
          local result = fn(b)
          local json
          if made[me] == nil then
            srv.running = nil  -- it returned: a raise from here on is not the handler's
            if result == nil then result = null end
            json = codec_result(codec, d, result)
          end
          if json then write(out, json) else bare_done(peer, me, a, c, d, result) end
        else
          M.request(peer, a, b, c, d, true, nil, nil, kind == "checked")
        end
        if e == false then return end
      elseif kind == "result" then
        -- settled by jrpc.client; a callback is called here without the
        -- pcall `act` would give it: a raise ends this worker, and
        -- dispatch_decoded logs it as the callback's while srv.running is
        -- CALLBACK
        local callback = result_callback(peer, a, b)
        if callback then
          srv.running = CALLBACK
          callback(nil, b)
        end
        srv.running = nil
      else
        act(peer, kind, a, b, c, d, e)
      end
      if srv.dispatcher ~= me or peer._closed then return end
      kind, a, b, c, d, e = codec_next(codec, nil, true)
      if kind == nil then return end
    end
  end
  local function serve_one(me, fn, params, rawid)
    local result = fn(params)
    if made[me] == nil then
      if result == nil then result = null end
      local json = codec_result(codec, rawid, result)
      if json then return json end
      return nil, true, result
    end
    return serve_bare_waited(peer, me, result)
  end
  -- A read of `bytes`; or, given `kind` and the rest, of a message its
  -- transport decoded already (Peer:decode), dispatched the same way.
  local function read(_, bytes, kind, a, b, c, d, e)
    if peer._closed then return end
    local on_read = peer._on_read  -- the deadline check, while there are deadlines
    if on_read then
      on_read(peer)
      if peer._closed then return end
    end
    if kind == nil then
      kind, a, b, c, d, e = codec_next(codec, bytes, true)  -- feeds the bytes first
      if kind == nil then return end  -- a read with no message: no switch
    end
    if e == false then  -- only requests, checked or not, have an `e`
      local fn = kind == "request" and bare[a] or checked[a]
      if fn then
        handled = handled + 1
        local outcome, json, ok, result = run(serve_one, fn, b, d)
        if json and outcome == "done" then
          local direct = out.direct
          if direct then return direct(json) end
          return write(out, json)
        end
        return one_bare_slow(peer, outcome, json, ok, result, a, c, d)
      end
    end
    return dispatch_decoded(peer, kind, a, b, c, d, e)
  end
  return read, function(...) return read(nil, nil, ...) end
end

-- }======================================================================

--- Counters: handled, invalid, failed, in_flight (handlers that wait).
function M.stats(peer, into)
  local srv = peer._srv
  into.handled, into.invalid, into.failed = srv.handled + srv.handled_here(), srv.invalid, srv.failed
  into.dropped_notifications, into.unknown_cancels = srv.dropped_notifications, srv.unknown_cancels
  into.in_flight = srv.nwaiting
  return into
end

return M
