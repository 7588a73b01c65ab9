--- SSE resumption for a legacy (2025-11-25) Streamable HTTP session: event
-- ids, a bounded replay buffer per stream, and the `Last-Event-ID` lookup
-- a resuming GET makes.
--
-- Each SSE stream of the session (a POST's answer, the standalone GET
-- stream) gets a number; each event an id `<stream>-<n>`, n counted
-- across the whole session, so ids are unique in the session and name the
-- stream a resumption continues (the spec: replay only that stream, never
-- another's messages). A stream outlives its connection: events sent while
-- no client holds it are kept, and a GET with the id of the last event
-- seen gets the later ones in order, then the rest as they come.
--
-- Memory is bounded three ways: a stream keeps its newest `max_events`
-- events within `max_bytes` (older ones drop, and a resumption from before
-- them is refused: it could not be whole), and a session keeps at most
-- `max_streams` streams not held by a client (the oldest go).
-- The 2026-07-28 era has no resumption at all (a broken stream loses its
-- request), so only sessions use this.
local options = require "jrpc.options"

local M = {}

--- The names the `sse_replay` option of `serve_http` takes.
M.OPTIONS = options.set{ "max_events", "max_bytes", "max_streams" }

--- Their defaults.
M.DEFAULTS = { max_events = 100, max_bytes = 1048576, max_streams = 16 }

--- The limits `opt` (the `sse_replay` option) sets: nil for the
--- defaults, false for no resumption (returns nil: events carry no id).
---@param opt table|false|nil
---@return table|nil
function M.config(opt)
  if opt == false then return nil end
  if opt ~= nil and type(opt) ~= "table" then
    error("serve_http: sse_replay must be a table of limits, or false", 5)
  end
  opt = options.check("serve_http: sse_replay", opt, 5, M.OPTIONS)
  local cfg = {}
  for k, default in pairs(M.DEFAULTS) do
    local v = opt[k]
    if v == nil then v = default end
    -- (no math.type: LuaJIT has none)
    if type(v) ~= "number" or v < 1 or v % 1 ~= 0 or v == math.huge then
      error(("serve_http: sse_replay.%s must be a positive integer"):format(k), 5)
    end
    cfg[k] = v
  end
  return cfg
end

---@class jrpc.mcp.HttpReplay
local Replay = {}
Replay.__index = Replay

--- A session's streams under the limits `cfg` (from `config`).
---@param cfg table
---@return jrpc.mcp.HttpReplay
function M.new(cfg)
  return setmetatable({ cfg = cfg, streams = {}, count = 0, last_stream = 0, last_event = 0 }, Replay)
end

-- Is `res` a response a client still reads?
local function live(res)
  return res ~= nil and not res.closed and not res.ended
end

-- Keep at most max_streams streams no client holds: the oldest go.
function Replay:trim_streams()
  if self.count <= self.cfg.max_streams then return end
  local free = {}
  for no, st in pairs(self.streams) do
    if not live(st.res) then free[#free + 1] = no end
  end
  table.sort(free)
  for i = 1, math.min(#free, self.count - self.cfg.max_streams) do
    self.streams[free[i]] = nil
    self.count = self.count - 1
  end
end

--- A new stream, written to `res` (an SSE response already begun).
---@param res table
---@return table stream
function Replay:open(res)
  self.last_stream = self.last_stream + 1
  local st = { no = self.last_stream, res = res, first = 1, last = 0, bytes = 0,
    since = self.last_event, dropped = self.last_event, done = false }
  self.streams[st.no] = st
  self.count = self.count + 1
  self:trim_streams()
  return st
end

--- Write the JSON line `line` as the next event of `st`: kept for replay,
--- and sent when a client holds the stream. True when it is kept.
---@param st table
---@param line string
---@return boolean
function Replay:write(st, line)
  if self.streams[st.no] ~= st then return false end  -- dropped: no one can resume it
  self.last_event = self.last_event + 1
  local n = self.last_event
  st.last = st.last + 1
  st[st.last] = { n = n, line = line }
  st.bytes = st.bytes + #line
  local cfg = self.cfg
  while st.last - st.first + 1 > cfg.max_events or st.bytes > cfg.max_bytes do
    local old = st[st.first]
    st[st.first] = nil
    st.first = st.first + 1
    st.bytes = st.bytes - #old.line
    st.dropped = old.n
  end
  if live(st.res) then st.res:event(line, st.no .. "-" .. n) end
  return true
end

--- `st` has its last event: its client's response ends (a resumption then
--- gets what it missed, and the end).
---@param st table
function Replay:finish(st)
  st.done = true
  if live(st.res) then st.res:finish() end
  st.res = nil
  self:trim_streams()
end

--- The client of `st` went away: later events wait for a resumption.
---@param st table
---@param res table  the response that closed (a newer one may hold `st`)
function Replay:detach(st, res)
  if st.res == res then st.res = nil end
  self:trim_streams()
end

--- Is any stream of the session held by a client?
---@return boolean
function Replay:held()
  for _, st in pairs(self.streams) do
    if live(st.res) then return true end
  end
  return false
end

--- The session ends: every client holding a stream gets its end.
function Replay:close()
  for _, st in pairs(self.streams) do
    if live(st.res) then st.res:finish() end
    st.res = nil
  end
end

--- The stream `last_id` (a `Last-Event-ID`) belongs to, if it can resume
--- from there; else nil and why.
---@param last_id string
---@return table|nil stream
---@return string|nil why
function Replay:find(last_id)
  local no, n = last_id:match("^(%d+)%-(%d+)$")
  local st = no and self.streams[tonumber(no)]
  if not st then return nil, ("unknown event id %q"):format(last_id) end
  n = tonumber(n)
  -- n must be an event of this stream (numbers after `since`), with
  -- nothing after it dropped
  local newest = st.last >= st.first and st[st.last].n or st.dropped
  if n <= st.since or n > newest then return nil, ("unknown event id %q"):format(last_id) end
  if n < st.dropped then
    return nil, ("event id %q is past the replay window: later events were dropped"):format(last_id)
  end
  if n == st.dropped then return st end
  for i = st.first, st.last do
    if st[i].n == n then return st end
  end
  return nil, ("unknown event id %q"):format(last_id)
end

--- Continue `st` (from `find`) on `res` (an SSE response already begun):
--- the events after number `after` (that of the Last-Event-ID), then, if
--- the stream has not ended, those to come. A client holding it before
--- loses it.
---@param st table
---@param last_id string
---@param res table
function Replay:resume(st, last_id, res)
  local after = tonumber(last_id:match("%-(%d+)$"))
  if live(st.res) then st.res:finish() end
  st.res = res
  for i = st.first, st.last do
    local ev = st[i]
    if ev.n > after then res:event(ev.line, st.no .. "-" .. ev.n) end
  end
  if st.done then self:finish(st) end
end

return M
