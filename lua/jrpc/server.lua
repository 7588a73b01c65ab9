--- The answering side of a peer: dispatch of incoming requests,
-- notifications and batches to handlers, each in a worker coroutine, and
-- their replies. Replies echo the request's id text (`rawid`) byte for byte.
local core = require "jrpc.core"
local errors = require "jrpc.errors"
local workers = require "jrpc.workers"
local output = require "jrpc.output"
local client = require "jrpc.client"

local null = core.null
local codec_methods = getmetatable(core.codec()).__index
local codec_next, codec_result = codec_methods.next, codec_methods.result
local write, flush = output.write, output.flush
local run_job, take, start_job = workers.run, workers.take, workers.start
local traceback = debug.traceback
local concat = table.concat
local is_wire_error = errors.is_wire_error
local codes = errors.codes
local METHOD_NOT_FOUND, INTERNAL_ERROR = codes.METHOD_NOT_FOUND, codes.INTERNAL_ERROR
local REQUEST_CANCELLED = codes.REQUEST_CANCELLED

local M = {}

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

-- {======================================================================
-- Replies
-- =======================================================================

-- A batch collects its members' replies; the last one to finish writes them.
local function member_done(peer, batch)
  local remaining = batch.remaining - 1
  batch.remaining = remaining
  if remaining == 0 and batch.n > 0 then
    write(peer, peer._codec:frame("[" .. concat(batch, ",", 1, batch.n) .. "]"))
  end
end

local function deliver(peer, ctx, json)
  local batch = ctx._batch
  if batch == nil then return write(peer, json) end
  batch[ctx._index] = json
  member_done(peer, batch)
end

local function encode_error(peer, ctx, code, message, data)
  local codec, rawid, unframed = peer._codec, ctx._rawid, ctx._batch ~= nil
  local json, msg = codec:error(rawid, code, message, data, unframed)
  if json then return json end
  peer._log(("error reply for %q could not be encoded (%s); sent without data"):format(ctx.method, msg))
  json = codec:error(rawid, code, message, nil, unframed)
  return json or codec:error(rawid, INTERNAL_ERROR, "Internal error", nil, unframed)
end

local function answer_error(peer, ctx, code, message, data)
  deliver(peer, ctx, encode_error(peer, ctx, code, message, data))
end

local function answer_result(peer, ctx, value)
  if value == nil then value = null end
  local json, msg
  if ctx._batch == nil then
    json, msg = peer._codec:result(ctx._rawid, value)
  else
    json, msg = peer._codec:result(ctx._rawid, value, true)
  end
  if json then return deliver(peer, ctx, json) end
  peer._log(("result of %q could not be encoded: %s"):format(ctx.method, msg))
  answer_error(peer, ctx, INTERNAL_ERROR, "Internal error", peer._debug and msg or nil)
end

-- A raised jrpc error goes to the wire as is; anything else is a bug in the
-- handler: logged, and answered -32603 without details unless debug is on.
local function answer_failure(peer, ctx, err)
  if is_wire_error(err) then
    local message = err.message
    if type(message) ~= "string" then message = "Server error" end
    return answer_error(peer, ctx, err.code, message, err.data)
  end
  peer._failed = peer._failed + 1
  peer._log(("method %q failed: %s"):format(ctx.method, tostring(err)))
  answer_error(peer, ctx, INTERNAL_ERROR, "Internal error", peer._debug and tostring(err) or nil)
end

-- }======================================================================

-- {======================================================================
-- Handlers in flight (only those that wait: a cancel can reach no other)
-- =======================================================================

local function track(peer, ctx)
  ctx._waiting = true
  peer._inflight[ctx.id] = ctx
  peer._ninflight = peer._ninflight + 1
end

local function untrack(peer, ctx)
  ctx._waiting = false
  if peer._inflight[ctx.id] == ctx then peer._inflight[ctx.id] = nil end
  peer._ninflight = peer._ninflight - 1
end

--- The peer is closing: handlers still waiting can no longer answer.
function M.abandon_all(peer)
  for _, ctx in pairs(peer._inflight) do
    ctx._cancelled, ctx._waiting = true, false
  end
  peer._inflight, peer._ninflight = {}, 0
end

-- }======================================================================

-- The slow part of serve: errors, notifications, batches, encode failures.
local function conclude(peer, ctx, ok, result)
  if ctx._rawid == nil then  -- a notification: nobody to tell
    if not ok then
      peer._failed = peer._failed + 1
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

-- The job a worker runs: call the handler, answer unless that is moot.
-- The common case (a single request that returns a value) is inlined.
local function serve(fn, params, ctx)
  local peer = ctx.peer
  local ok, result
  if peer._debug then
    ok, result = xpcall(fn, traceback, params, ctx)
  else
    ok, result = pcall(fn, params, ctx)
  end
  if ctx._waiting then untrack(peer, ctx) end
  if ok and ctx._batch == nil and ctx._rawid ~= nil and not ctx._cancelled then
    if result == nil then result = null end
    local json = codec_result(peer._codec, ctx._rawid, result)
    if json then  -- inlined write(peer, json): the common case, collecting
      local n = peer._nout + 1
      if peer._depth > 0 and not peer._closed then
        peer._nout, peer._out[n] = n, json
        return
      end
      return write(peer, json)
    end
  end
  conclude(peer, ctx, ok, result)
end

-- Start a handler: in place when we are the dispatching worker (the
-- dispatcher notes the context, in case the handler waits), else on a worker
-- of its own (batch members).
local function start(peer, fn, params, ctx, inplace)
  if inplace then
    peer._running = ctx
    return serve(fn, params, ctx)
  end
  if run_job(peer, serve, fn, params, ctx) and ctx._rawid ~= nil then
    track(peer, ctx)  -- the handler waits; a cancel may come meanwhile
  end
end

-- Profile mcp: `_meta` travels beside the params, not in them.
local function split_meta(params)
  if type(params) ~= "table" then return nil end
  local meta = params._meta
  if meta ~= nil then params._meta = nil end
  return meta
end

--- An incoming request (or a batch member: `batch`, `index` say where its
--- reply goes; `inplace`: run it on the dispatching worker).
function M.request(peer, method, params, id, rawid, batch, index, inplace)
  peer._handled = peer._handled + 1
  local ctx
  if batch == nil then
    ctx = setmetatable({ id = id, method = method, peer = peer, _rawid = rawid }, Ctx)
  else
    ctx = setmetatable({ id = id, method = method, peer = peer, _rawid = rawid,
      _batch = batch, _index = index }, Ctx)
  end
  if peer._strip_meta then ctx.meta = split_meta(params) end
  local fn = peer._handlers[method]
  if fn == nil then
    return answer_error(peer, ctx, METHOD_NOT_FOUND, "Method not found")
  end
  start(peer, fn, params, ctx, inplace)
end

local function on_cancel(peer, params)
  if type(params) ~= "table" then return end
  local id = params[peer._profile.cancel_key]
  local ctx = id ~= nil and peer._inflight[id]
  if not ctx then return end  -- finished already or unknown: races are normal
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
  peer._handled = peer._handled + 1
  if method == peer._profile.cancel_method then return on_cancel(peer, params) end
  local fn = peer._handlers[method]
  if fn == nil then
    if not is_quiet(peer, method) then
      peer._log(("notification %q has no handler; dropped"):format(method))
    end
    return
  end
  local ctx = setmetatable({ method = method, peer = peer }, Ctx)
  if peer._strip_meta then ctx.meta = split_meta(params) end
  start(peer, fn, params, ctx, inplace)
end

--- A message the codec rejected; answered only when the codec says so.
function M.invalid(peer, code, message, rawid, reply, detail, batch)
  peer._invalid = peer._invalid + 1
  peer._log(("invalid message: %d %s%s (id %s)%s"):format(code, message,
    detail and ": " .. tostring(detail) or "", rawid, reply and "" or "; not answered"))
  if not reply then
    -- a broken response that names one of our requests settles it now
    if rawid ~= "null" then client.broken(peer, rawid, detail) end
    return
  end
  if batch == nil then return write(peer, peer._codec:error(rawid, code, message)) end
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
    if kind == "request" then
      batch.n, batch.remaining = batch.n + 1, batch.remaining + 1
      M.request(peer, item[2], item[3], item[4], item[5], batch, batch.n)
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

-- Act on one decoded message.
local function act(peer, kind, a, b, c, d, e)
  if kind == "request" then
    M.request(peer, a, b, c, d, nil, nil, true)
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

-- The dispatching worker's job: the message already decoded, then the rest.
-- The common case, a request for a known method, is inlined.
local function drain(peer, me, kind, a, b, c, d, e)
  local codec, handlers = peer._codec, peer._handlers
  while true do
    local fn = kind == "request" and handlers[a]
    if fn and not peer._strip_meta then
      peer._handled = peer._handled + 1
      local ctx = setmetatable({ id = c, method = a, peer = peer, _rawid = d }, Ctx)
      peer._running = ctx
      serve(fn, b, ctx)
    else
      act(peer, kind, a, b, c, d, e)
    end
    if peer._dispatcher ~= me or peer._closed then return end
    kind, a, b, c, d, e = codec_next(codec)
    if kind == nil then return end
  end
end

--- Act on every complete message the codec holds; what they write goes to
--- `send` in one call at the end (unless this is nested in another read).
--- A read with no complete message costs no coroutine switch.
function M.dispatch(peer)
  local outer_dispatcher, outer_running = peer._dispatcher, peer._running
  local codec = peer._codec
  peer._depth = peer._depth + 1
  if peer._deadlines then client.check_deadlines(peer) end
  while not peer._closed do
    local kind, a, b, c, d, e = codec_next(codec)
    if kind == nil then break end
    local co = take(peer)
    peer._dispatcher, peer._running = co, nil
    if not start_job(peer, co, drain, peer, co, kind, a, b, c, d, e) then break end
    local ctx = peer._running  -- its handler waits: track it, drain on
    if ctx ~= nil and ctx._rawid ~= nil and not ctx._waiting then track(peer, ctx) end
  end
  peer._dispatcher, peer._running = outer_dispatcher, outer_running
  local depth = peer._depth - 1
  peer._depth = depth
  if depth == 0 then flush(peer) end
end

-- }======================================================================

return M
