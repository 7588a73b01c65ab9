--- The calling side of a peer: outgoing requests, notifications and batches,
-- and settling them. Every pending request settles exactly once: by its
-- reply, its deadline, a cancel, or close.
--
-- This module owns the calls state (`peer._calls`): the core pending table
-- and, per pending request, indexed by the slot `core.pending` gives:
--   waiters[slot]  the coroutine to wake, the callback to call, or the
--                  state of the batch the request belongs to
--   ids[slot]      our id (the Lua value), for the cancel notification
--   members[slot]  the request's position in its batch
local core = require "jrpc.core"
local errors = require "jrpc.errors"
local workers = require "jrpc.workers"

local status = coroutine.status
local rawid_of = core.rawid
-- the methods of the hot path as plain functions: no metatable lookup
local codec_request = getmetatable(core.codec()).__index.request
local pending_methods = getmetatable(core.pending{}).__index
local pending_add, pending_settle = pending_methods.add, pending_methods.settle
local write = require("jrpc.output").write
local current, wait, wake_co = workers.current, workers.wait, workers.wake

local M = {}

--- The calls state of a new peer.
---@param opts table  peer options: max_pending, timeout, clock
function M.new(opts)
  return {
    pending = core.pending{ max_pending = opts.max_pending },
    waiters = {}, ids = {}, members = {},
    early = {},          -- settlements that came before their coroutine waited
    next_id = 1,
    deadlines = false,   -- some request has a deadline: check them on reads
    timeout = opts.timeout, clock = opts.clock or core.now,
  }
end

-- Deliver a settlement to whoever waits. A coroutine that is not suspended
-- is still inside `request` (the reply came back synchronously, e.g. over
-- an in-process link): leave the settlement for `await` to pick up.
local function wake(peer, waiter, err, result)
  if type(waiter) == "thread" then
    if status(waiter) == "suspended" then
      wake_co(waiter, peer._log, err, result)
    else
      peer._calls.early[waiter] = { err = err, result = result }
    end
  elseif waiter ~= nil then
    local ok, msg = pcall(waiter, err, result)
    if not ok then peer._log("request callback failed: " .. tostring(msg)) end
  end
end

local function member_settled(peer, state)
  state.remaining = state.remaining - 1
  if state.remaining == 0 then wake(peer, state.waiter, nil, state.results) end
end

-- Settle the request in `slot` (already removed from the pending table):
-- wake the coroutine or fill in the batch that waits for it; a callback is
-- returned, for the caller to call.
local function take(peer, calls, slot, err, result)
  local waiter = calls.waiters[slot]
  calls.waiters[slot], calls.ids[slot] = nil, nil
  local kind = type(waiter)
  if kind == "function" then return waiter end
  if kind == "table" then  -- a batch member
    local index = calls.members[slot]
    calls.members[slot] = nil
    waiter.results[index] = err and { error = err } or { result = result }
    return member_settled(peer, waiter)
  end
  wake(peer, waiter, err, result)
end

-- The same, a callback called here, protected.
local function settle(peer, slot, err, result)
  local callback = take(peer, peer._calls, slot, err, result)
  if callback then wake(peer, callback, err, result) end
end

-- routine (a reply after its timeout or cancel): counted in `unmatched`
local function unmatched(peer, rawid)
  if peer._debug then peer._debug("response to unknown or settled request id " .. rawid .. " dropped") end
end

--- A success response arrived. Returns the callback that waits for it,
--- if one does, for the caller to call as `callback(nil, result)` (the
--- drain loop, which owns what a callback raises); any other waiter is
--- woken here.
---@return function|nil callback
function M.result(peer, rawid, result)
  local calls = peer._calls
  local slot = pending_settle(calls.pending, rawid)
  if slot == nil then return unmatched(peer, rawid) end
  return take(peer, calls, slot, nil, result)
end

--- An error response arrived: as `result`; the callback is to be called
--- as `callback(err)` with the jrpc.Error returned beside it.
---@return function|nil callback
---@return jrpc.Error err
function M.error(peer, rawid, err)
  local calls = peer._calls
  local slot = pending_settle(calls.pending, rawid)
  if slot == nil then return unmatched(peer, rawid) end
  err = errors.adopt(err)
  return take(peer, calls, slot, err), err
end

--- A response for `rawid` arrived but was invalid (say, both result and
--- error): settle the request with code "invalid_response" rather than
--- leaving it to time out.
function M.broken(peer, rawid, detail)
  local slot = peer._calls.pending:settle(rawid)
  if slot == nil then return end
  settle(peer, slot, errors.new("invalid_response", "invalid response: " .. tostring(detail)))
end

-- Tell the other side we no longer wait for `id`.
local function send_cancel(peer, id, reason)
  local profile = peer._profile
  local params = { [profile.cancel_key] = id }
  if profile.send_reason then params.reason = reason end
  local bytes = peer._codec:notification(profile.cancel_method, params)
  if bytes then peer._out:write(bytes) end
end

-- The error a request settles with when its reply was over the limit
-- (`info`: codec:oversize()); `all`: the reply's id could not be read.
local function too_large_error(info, all)
  local size, limit = info.size, info.limit
  local msg
  if size then
    msg = ("reply too large: %d bytes, limit %d bytes (max_message_bytes)"):format(size, limit)
  else  -- newline framing: only known to be over the limit
    msg = ("reply too large: more than %d bytes, limit %d bytes (max_message_bytes)"):format(limit, limit)
  end
  if all then msg = msg .. "; its id could not be read, so every pending request failed" end
  return errors.new(errors.codes.INVALID_REQUEST, msg, { size = size, limit = limit })
end

--- A message over max_message_bytes was dropped (`info`: what
--- codec:oversize() read of its first bytes). A call (request or
--- notification) or junk answers none of our requests. A response whose id
--- was read settles that request. Anything else (a response whose id comes
--- after its result, a batch, a message cut short) may be the reply any of
--- them waits for, and none may wait forever: every pending request
--- settles, and the other side is told we gave them up.
function M.too_large(peer, info)
  if info == nil or info.kind == "call" or info.kind == "junk" then return end
  local calls = peer._calls
  local pending = calls.pending
  if info.kind == "response" and info.id then
    local slot = pending:settle(info.id)
    if slot == nil then return unmatched(peer, info.id) end
    return settle(peer, slot, too_large_error(info, false))
  end
  while true do
    local slot = pending:pop()
    if slot == nil then return end
    send_cancel(peer, calls.ids[slot], "reply too large")
    settle(peer, slot, too_large_error(info, true))
  end
end

-- Wait in `co` for the request in `rawid` to settle. A resume by anything
-- but jrpc (another scheduler) gives the request up: it is cancelled, so
-- it still settles exactly once, and the caller learns why.
local function await(peer, co, rawid)
  local calls = peer._calls
  local early = calls.early[co]
  local err, result
  if early then
    calls.early[co] = nil
    err, result = early.err, early.result
  else
    local woken
    woken, err, result = wait()
    if not woken then
      local slot = rawid and calls.pending:cancel(rawid)
      if slot then
        send_cancel(peer, calls.ids[slot], "interrupted")
        calls.waiters[slot], calls.ids[slot], calls.members[slot] = nil, nil, nil
      end
      err = errors.new("interrupted", "the waiting coroutine was resumed by something "
        .. "other than jrpc (another scheduler?); the request was cancelled")
    end
  end
  if err ~= nil then return nil, err end
  return result
end

-- Report an immediate failure the way the caller waits for answers.
local function fail(peer, callback, err)
  if callback then wake(peer, callback, err) end
  return nil, err
end

-- Deadlines on or off: while on, every read first expires what is due
-- (through the peer's read hook, so reads pay nothing while none is set).
local function set_deadlines(peer, on)
  local calls = peer._calls
  if calls.deadlines == on then return end
  calls.deadlines = on
  peer._reader.on_read(on and M.check_deadlines or nil)
end

-- The deadline of a request that may take `timeout` seconds (raises at
-- level 3, the caller of peer:request or peer:batch, for a bad timeout).
local function deadline_in(peer, timeout)
  if type(timeout) ~= "number" then error("timeout must be a number of seconds", 3) end
  set_deadlines(peer, true)
  return peer._calls.clock() + timeout
end

-- The counter's next value not in flight (some are: ids the caller chose).
-- A counter id is its own rawid: the pending table and the codec take an
-- integer for its text, so no string is made for it.
local function next_free(calls, deadline)
  local pending = calls.pending
  while true do
    local id = calls.next_id
    calls.next_id = id + 1
    local slot, why = pending:add(id, deadline)
    if slot ~= nil or why ~= "duplicate id" then return id, id, slot, why end
  end
end

-- Pick an id and a pending slot: the caller's id, or the next counter value
-- that is not in flight. Returns id, rawid, slot or id, rawid, nil, why.
local function reserve(calls, chosen, deadline)
  local pending = calls.pending
  if chosen ~= nil then
    local rawid = rawid_of(chosen)
    local slot, why = pending:add(rawid, deadline)
    if slot == nil and why == "duplicate id" then
      error("request id " .. rawid .. " is already in flight", 3)
    end
    return chosen, rawid, slot, why
  end
  -- the next counter value; skipping ids the caller chose is the rare case,
  -- in a loop of its own (an inner loop would keep LuaJIT from compiling
  -- the whole request path as one trace)
  local id = calls.next_id
  calls.next_id = id + 1
  local slot, why = pending_add(pending, id, deadline)
  if slot ~= nil or why ~= "duplicate id" then return id, id, slot, why end
  return next_free(calls, deadline)
end

-- Why nothing can be sent now (a jrpc.Error), or nil.
local function refusal(peer)
  if peer._closed then return errors.closed(peer._close_reason) end
  if peer._busy then return errors.busy(peer._busy) end
end

--- Send a request. In a coroutine without callback: waits, returns
--- `result` or `nil, err`. With a callback: returns the id at once and calls
--- `callback(err, result)` when the request settles. Peer:request
--- tail-calls this: level 2 is the caller of peer:request.
---@param peer table
---@param method string
---@param params any
---@param opts? {timeout?: number, id?: integer|string}
---@param callback? fun(err: jrpc.Error|nil, result: any)
function M.request(peer, method, params, opts, callback)
  if type(method) ~= "string" then error("method must be a string", 2) end
  local co = nil  -- the coroutine that waits, when there is no callback
  if opts ~= nil and type(opts) ~= "table" then
    error(type(opts) == "function" and "opts must be a table or nil (the callback is the fourth argument)"
      or "opts must be a table", 2)
  end
  if callback == nil then
    co = current() or error("outside a coroutine a callback is required", 2)
  elseif type(callback) ~= "function" then
    error("callback must be a function", 2)
  end
  local calls = peer._calls
  local timeout, chosen = calls.timeout, nil
  if opts ~= nil then
    if opts.timeout ~= nil then timeout = opts.timeout end
    chosen = opts.id
  end
  if peer._closed or peer._busy then return fail(peer, callback, refusal(peer)) end
  local id, rawid, slot, why = reserve(calls, chosen, timeout and deadline_in(peer, timeout))
  if slot == nil then return fail(peer, callback, errors.too_many_pending(why)) end
  local bytes, msg = codec_request(peer._codec, rawid, method, params)
  if bytes == nil then
    calls.pending:cancel(rawid)
    return fail(peer, callback, errors.encode(msg))
  end
  calls.waiters[slot], calls.ids[slot] = co or callback, id
  write(peer._out, bytes)
  if co == nil then return id end
  return await(peer, co, rawid)
end

--- Send a notification. Returns true, or `nil, err` with a jrpc.Error
--- (code "closed", "busy" or "encode"), the same shape as `request`.
function M.notify(peer, method, params)
  if type(method) ~= "string" then error("method must be a string", 2) end
  local refused = refusal(peer)
  if refused then return nil, refused end
  local bytes, msg = peer._codec:notification(method, params)
  if bytes == nil then return nil, errors.encode(msg) end
  peer._out:write(bytes)
  return true
end

-- One batch member: a request whose answer lands in state.results[index].
local function add_member(peer, state, call, deadline)
  local calls = peer._calls
  local index = #state.results + 1
  state.results[index] = false  -- keeps the position until it settles
  local id, rawid, slot, why = reserve(calls, nil, deadline)
  if slot == nil then
    state.results[index] = { error = errors.too_many_pending(why) }
    return nil
  end
  local json, msg = peer._codec:request(rawid, call[1], call[2], true)
  if json == nil then
    calls.pending:cancel(rawid)
    state.results[index] = { error = errors.encode(msg) }
    return nil
  end
  calls.waiters[slot], calls.ids[slot], calls.members[slot] = state, id, index
  state.remaining = state.remaining + 1
  return json
end

local function batch_parts(peer, calls, state)
  local timeout = peer._calls.timeout
  local parts, deadline = {}, timeout and deadline_in(peer, timeout)
  for i = 1, #calls do
    local call = calls[i]
    local json, msg
    if call.notify then
      json, msg = peer._codec:notification(call[1], call[2], true)
      if json == nil then peer._log("batch notification dropped: " .. msg) end
    else
      json = add_member(peer, state, call, deadline)
    end
    parts[#parts + 1] = json
  end
  return parts
end

-- Every request of a batch that cannot be sent fails with the same error.
local function failed_results(calls, err)
  local results = {}
  for i = 1, #calls do
    if not calls[i].notify then results[#results + 1] = { error = err } end
  end
  return results
end

--- Send a batch (profile jsonrpc only). Answers are `{result=}`/`{error=}` in
--- call order, notifications omitted.
---@param peer table
---@param calls table[]  `{ "method", params [, notify = true] }`
---@param callback? fun(results: table[])
function M.batch(peer, calls, callback)
  if not peer._profile.batches then
    error("batches are not allowed in profile " .. peer._profile.name, 2)
  end
  if type(calls) ~= "table" or calls[1] == nil then
    error("a batch needs at least one call", 2)
  end
  for i = 1, #calls do  -- all checked before any is sent
    local call = calls[i]
    if type(call) ~= "table" or type(call[1]) ~= "string" then
      error("batch call " .. i .. " must be {\"method\", params}", 2)
    end
  end
  local co = nil
  if callback == nil then
    co = current() or error("outside a coroutine a callback is required", 2)
  elseif type(callback) ~= "function" then
    error("callback must be a function", 2)
  end
  -- waiters get (err, result); a batch callback gets just the answers
  local waiter = co or function(_, answers) return callback(answers) end
  local refused = refusal(peer)
  if refused then
    local results = failed_results(calls, refused)
    if callback then wake(peer, waiter, nil, results) end
    return results
  end
  local state = { results = {}, remaining = 1, waiter = waiter }
  local parts = batch_parts(peer, calls, state)
  if parts[1] then peer._out:write(peer._codec:frame("[" .. table.concat(parts, ",") .. "]")) end
  -- the 1 we started with kept a fast reply from completing a half-built batch
  member_settled(peer, state)
  if co then return await(peer, co, nil) end
end

--- Cancel one of our requests: it settles now with code "cancelled" and the
--- other side is told. Returns false when the id is not in flight.
function M.cancel(peer, id, reason)
  local calls = peer._calls
  local slot = calls.pending:cancel(rawid_of(id))
  if slot == nil then return false end
  send_cancel(peer, calls.ids[slot], reason)
  settle(peer, slot, errors.cancelled(reason))
  return true
end

--- Settle one of our requests now with `err` (a transport learnt it
--- failed: its exchange broke). The other side is not told: there is no
--- exchange left to cancel. Returns false when the id was not in flight.
function M.fail(peer, id, err)
  local slot = peer._calls.pending:cancel(rawid_of(id))
  if slot == nil then return false end
  settle(peer, slot, err)
  return true
end

local function expire_due(peer)
  local calls = peer._calls
  local deadline = calls.pending:next_deadline()
  if deadline == nil then set_deadlines(peer, false)
  elseif deadline <= calls.clock() then M.expire(peer) end
end

--- Expire what is due, cheaply: every read calls this once timeouts were
--- used. Never raises (a clock that raises is reported): a read must go on.
function M.check_deadlines(peer)
  if not peer._calls.deadlines then return end
  local ok, err = pcall(expire_due, peer)
  if not ok then peer._log("deadline check failed: " .. tostring(err)) end
end

--- Settle every request whose deadline is past; tell the other side we gave up.
function M.expire(peer, now)
  local calls = peer._calls
  now = now or calls.clock()
  local pending = calls.pending
  while true do
    local slot = pending:next_expired(now)
    if slot == nil then return end
    send_cancel(peer, calls.ids[slot], "timeout")
    settle(peer, slot, errors.timeout())
  end
end

--- The earliest deadline of our pending requests (clock seconds), or nil.
function M.next_deadline(peer)
  local calls = peer._calls
  if not calls.deadlines then return nil end
  return calls.pending:next_deadline()
end

--- Seconds on the peer's clock.
function M.now(peer)
  return peer._calls.clock()
end

--- Settle everything still pending with code "closed".
function M.settle_all(peer, reason)
  local pending = peer._calls.pending
  while true do
    local slot = pending:pop()
    if slot == nil then return end
    settle(peer, slot, errors.closed(reason))
  end
end

--- How many of our requests await their response.
---@return integer
function M.awaiting(peer)
  return peer._calls.pending:count()
end

--- Counters of the pending table.
function M.stats(peer)
  return peer._calls.pending:stats()
end

return M
