--- The calling side of a peer: outgoing requests, notifications and batches,
-- and settling them. Every pending request settles exactly once: by its
-- reply, its deadline, a cancel, or close.
--
-- Bookkeeping per pending request, indexed by the slot `core.pending` gives:
--   _waiters[slot]  the coroutine to resume, the callback to call, or the
--                   state of the batch the request belongs to
--   _ids[slot]      our id (the Lua value), for the cancel notification
--   _members[slot]  the request's position in its batch
local core = require "jrpc.core"
local errors = require "jrpc.errors"
local workers = require "jrpc.workers"
local output = require "jrpc.output"

local yield, running, status = coroutine.yield, coroutine.running, coroutine.status
local isyieldable = coroutine.isyieldable
local rawid_of = core.rawid
local write = output.write
local resume = workers.resume

local M = {}

-- The running coroutine if we may yield from here, else nil.
local function current_coroutine()
  local co, main = running()
  if co == nil or main then return nil end
  if isyieldable and not isyieldable() then return nil end
  return co
end

-- Deliver a settlement to whoever waits. A coroutine that is not suspended
-- is still inside `request` (the reply came back synchronously, e.g. over
-- an in-process link): leave the settlement for `await` to pick up.
local function wake(peer, waiter, err, result)
  if type(waiter) == "thread" then
    if status(waiter) == "suspended" then
      resume(peer, waiter, err, result)
    else
      peer._early[waiter] = { err = err, result = result }
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

local function settle_member(peer, state, index, err, result)
  state.results[index] = err and { error = err } or { result = result }
  member_settled(peer, state)
end

-- Settle the request in `slot` (already removed from the pending table).
local function settle(peer, slot, err, result)
  local waiter, index = peer._waiters[slot], peer._members[slot]
  peer._waiters[slot], peer._ids[slot], peer._members[slot] = nil, nil, nil
  if index then return settle_member(peer, waiter, index, err, result) end
  wake(peer, waiter, err, result)
end

local function unmatched(peer, rawid)
  peer._log("response to unknown or settled request id " .. rawid .. " dropped")
end

--- A success response arrived.
function M.result(peer, rawid, result)
  local slot = peer._pending:settle(rawid)
  if slot == nil then return unmatched(peer, rawid) end
  settle(peer, slot, nil, result)
end

--- An error response arrived.
function M.error(peer, rawid, err)
  local slot = peer._pending:settle(rawid)
  if slot == nil then return unmatched(peer, rawid) end
  settle(peer, slot, errors.adopt(err))
end

--- A response for `rawid` arrived but was invalid (say, both result and
--- error): settle the request with code "invalid_response" rather than
--- leaving it to time out.
function M.broken(peer, rawid, detail)
  local slot = peer._pending:settle(rawid)
  if slot == nil then return end
  settle(peer, slot, errors.new("invalid_response", "invalid response: " .. tostring(detail)))
end

local function await(peer, co)
  local early = peer._early[co]
  local err, result
  if early then
    peer._early[co] = nil
    err, result = early.err, early.result
  else
    err, result = yield()  -- resumed by wake()
  end
  if err ~= nil then return nil, err end
  return result
end

-- Report an immediate failure the way the caller waits for answers.
local function fail(peer, callback, err)
  if callback then wake(peer, callback, err) end
  return nil, err
end

local function deadline_of(peer, opts)
  local timeout = opts and opts.timeout
  if timeout == nil then timeout = peer._timeout end
  if not timeout then return nil end
  if type(timeout) ~= "number" then error("timeout must be a number of seconds", 4) end
  peer._deadlines = true  -- receive checks deadlines from now on
  return peer._clock() + timeout
end

-- Pick an id and a pending slot: the caller's id, or the next counter value
-- that is not in flight. Returns id, rawid, slot or id, rawid, nil, why.
local function reserve(peer, chosen, deadline)
  local pending = peer._pending
  if chosen ~= nil then
    local rawid = rawid_of(chosen)
    local slot, why = pending:add(rawid, deadline)
    if slot == nil and why == "duplicate id" then
      error("request id " .. rawid .. " is already in flight", 4)
    end
    return chosen, rawid, slot, why
  end
  while true do
    local id = peer._next_id
    peer._next_id = id + 1
    local rawid = rawid_of(id)
    local slot, why = pending:add(rawid, deadline)
    if slot ~= nil or why ~= "duplicate id" then return id, rawid, slot, why end
  end
end

local function check_call(method, callback)
  if type(method) ~= "string" then error("method must be a string", 4) end
  if callback ~= nil and type(callback) ~= "function" then
    error("callback must be a function", 4)
  end
  if callback == nil then
    return current_coroutine()
      or error("outside a coroutine a callback is required", 4)
  end
end

--- Send a request. In a coroutine without callback: waits, returns
--- `result` or `nil, err`. With a callback: returns the id at once and calls
--- `callback(err, result)` when the request settles.
---@param peer table
---@param method string
---@param params any
---@param opts? {timeout?: number, id?: integer|string}
---@param callback? fun(err: jrpc.Error|nil, result: any)
function M.request(peer, method, params, opts, callback)
  if type(opts) == "function" then opts, callback = nil, opts end
  if opts ~= nil and type(opts) ~= "table" then error("opts must be a table", 3) end
  local co = check_call(method, callback)
  if peer._closed then return fail(peer, callback, errors.closed(peer._close_reason)) end
  if peer._busy then return fail(peer, callback, errors.busy(peer._busy)) end
  local id, rawid, slot, why = reserve(peer, opts and opts.id, deadline_of(peer, opts))
  if slot == nil then return fail(peer, callback, errors.too_many_pending(why)) end
  local bytes, msg = peer._codec:request(rawid, method, params)
  if bytes == nil then
    peer._pending:cancel(rawid)
    return fail(peer, callback, errors.encode(msg))
  end
  peer._waiters[slot], peer._ids[slot] = co or callback, id
  write(peer, bytes)
  if co == nil then return id end
  return await(peer, co)
end

--- Send a notification. Returns true, or nil, msg (closed, or params that
--- cannot be encoded).
function M.notify(peer, method, params)
  if type(method) ~= "string" then error("method must be a string", 3) end
  if peer._closed then return nil, "closed" end
  if peer._busy then return nil, "busy: " .. peer._busy end
  local bytes, msg = peer._codec:notification(method, params)
  if bytes == nil then return nil, msg end
  write(peer, bytes)
  return true
end

-- One batch member: a request whose answer lands in state.results[index].
local function add_member(peer, state, call, deadline)
  local index = #state.results + 1
  state.results[index] = false  -- keeps the position until it settles
  local id, rawid, slot, why = reserve(peer, nil, deadline)
  if slot == nil then
    state.results[index] = { error = errors.too_many_pending(why) }
    return nil
  end
  local json, msg = peer._codec:request(rawid, call[1], call[2], true)
  if json == nil then
    peer._pending:cancel(rawid)
    state.results[index] = { error = errors.encode(msg) }
    return nil
  end
  peer._waiters[slot], peer._ids[slot], peer._members[slot] = state, id, index
  state.remaining = state.remaining + 1
  return json
end

local function batch_parts(peer, calls, state)
  local parts, deadline = {}, deadline_of(peer, nil)
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
    error("batches are not allowed in profile " .. peer._profile.name, 3)
  end
  if type(calls) ~= "table" or calls[1] == nil then
    error("a batch needs at least one call", 3)
  end
  for i = 1, #calls do  -- all checked before any is sent
    local call = calls[i]
    if type(call) ~= "table" or type(call[1]) ~= "string" then
      error("batch call " .. i .. " must be {\"method\", params}", 3)
    end
  end
  local co = check_call("batch", callback)
  -- waiters get (err, result); a batch callback gets just the answers
  local waiter = co or function(_, answers) return callback(answers) end
  if peer._closed or peer._busy then
    local err = peer._closed and errors.closed(peer._close_reason) or errors.busy(peer._busy)
    local results = failed_results(calls, err)
    if callback then wake(peer, waiter, nil, results) end
    return results
  end
  local state = { results = {}, remaining = 1, waiter = waiter }
  local parts = batch_parts(peer, calls, state)
  if parts[1] then write(peer, peer._codec:frame("[" .. table.concat(parts, ",") .. "]")) end
  -- the 1 we started with kept a fast reply from completing a half-built batch
  member_settled(peer, state)
  if co then return await(peer, co) end
end

local function send_cancel(peer, id, reason)
  local profile = peer._profile
  local params = { [profile.cancel_key] = id }
  if profile.send_reason then params.reason = reason end
  local bytes = peer._codec:notification(profile.cancel_method, params)
  if bytes then write(peer, bytes) end
end

--- Cancel one of our requests: it settles now with code "cancelled" and the
--- other side is told. Returns false when the id is not in flight.
function M.cancel(peer, id, reason)
  local slot = peer._pending:cancel(rawid_of(id))
  if slot == nil then return false end
  send_cancel(peer, peer._ids[slot], reason)
  settle(peer, slot, errors.cancelled(reason))
  return true
end

--- Expire what is due, cheaply: receive calls this once timeouts were used.
function M.check_deadlines(peer)
  local deadline = peer._pending:next_deadline()
  if deadline == nil then peer._deadlines = false
  elseif deadline <= peer._clock() then M.expire(peer) end
end

--- Settle every request whose deadline is past; tell the other side we gave up.
function M.expire(peer, now)
  now = now or peer._clock()
  local pending = peer._pending
  while true do
    local slot = pending:next_expired(now)
    if slot == nil then return end
    send_cancel(peer, peer._ids[slot], "timeout")
    settle(peer, slot, errors.timeout())
  end
end

--- Settle everything still pending with code "closed".
function M.settle_all(peer, reason)
  local pending = peer._pending
  while true do
    local slot = pending:pop()
    if slot == nil then return end
    settle(peer, slot, errors.closed(reason))
  end
end

return M
