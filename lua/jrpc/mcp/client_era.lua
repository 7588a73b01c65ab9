--- Which era the server speaks, found once per client and cached (this
-- module owns that state, per client):
--   * pinned by the user (`era = "modern"` or `"legacy"`), or
--   * known for the server's origin (HTTP: a verdict found before), or
--   * probed as the specification says: `server/discover` with
--     our preferred modern version. A DiscoverResult, or a recognized
--     modern error (-32022 with `supported`), means modern; any other error
--     or a timeout means legacy, and `initialize` follows (stdio; over
--     HTTP the transport's `probe_fallback` decides: a 400 whose body is
--     no modern error). The fallback is never keyed on one error code
--     (legacy servers answer -32601, -32602, or nothing at all).
-- The verdict: `{era, version, capabilities?, server_info?, instructions?}`.
local errors = require "jrpc.errors"
local protocol = require "jrpc.mcp.protocol"
local calls = require "jrpc.mcp.client_call"
local input = require "jrpc.mcp.client_input"
local workers = require "jrpc.workers"

local M = {}

M.DEFAULT_DISCOVER_TIMEOUT = 5

local states = setmetatable({}, { __mode = "k" })

-- The MCP wire member of a result's metadata.
local META = "_meta"

--- Detected verdicts per origin (`scheme://host:port`) of HTTP servers, as
--- the spec has clients cache them: a later client of the same origin
--- does not probe again. Module-wide; clear an entry to probe again.
M.by_origin = {}

local function member(list, v)
  for _, x in ipairs(list) do if x == v then return true end end
  return false
end

--- The era state of a new client: `era` ("modern" | "legacy" | nil: probe),
--- `version` (the modern version to offer first, or the legacy one to ask
--- for when pinned legacy).
---@param client table
---@param opts table
function M.new(client, opts)
  if opts.era ~= nil and opts.era ~= "modern" and opts.era ~= "legacy" then
    error('jrpc.mcp.client: option era must be "modern", "legacy" or nil (detect)', 4)
  end
  local legacy = opts.era == "legacy"
  states[client] = { pinned = opts.era, mode = legacy and "legacy" or "modern",
    version = opts.version or (legacy and protocol.LEGACY_VERSIONS[1] or protocol.MODERN_VERSIONS[1]),
    verdict = nil, waiters = nil }
end

--- The `_meta` a request carries in the current era (nil for legacy).
---@param client table
---@return table|nil
function M.meta(client)
  local state = states[client]
  if state.mode == "legacy" then return nil end
  return protocol.request_meta(state.version, input.capabilities(input.of(client)), client:option("client_info"))
end

--- A -32022 answer: switch to a version from its `supported` list that we
--- speak too. True when the request should be sent again.
---@param client table
---@param err jrpc.Error
---@return boolean
function M.retry_version(client, err)
  local state = states[client]
  if state.mode == "legacy" or err.code ~= protocol.codes.UNSUPPORTED_PROTOCOL_VERSION then return false end
  local version = protocol.mutual_modern(type(err.data) == "table" and err.data.supported)
  if not version then return false end
  state.version = version
  return true
end

local function modern_verdict(state, discovered)
  local verdict = { era = "modern", version = state.version }
  if type(discovered) == "table" then
    local supported = discovered.supportedVersions
    if type(supported) == "table" and not member(supported, state.version) then
      local version = protocol.mutual_modern(supported)
      if not version then
        return nil, errors.new("unsupported_version", "the server speaks none of our modern versions", supported)
      end
      state.version, verdict.version = version, version
    end
    local meta = discovered[META]
    verdict.capabilities, verdict.instructions = discovered.capabilities, discovered.instructions
    verdict.server_info = type(meta) == "table" and meta[protocol.keys.server_info] or nil
  end
  return verdict
end

-- `initialize`, then `notifications/initialized` (legacy handshake).
local function initialize(client)
  local state = states[client]
  state.mode = "legacy"
  local version = state.pinned == "legacy" and state.version or protocol.LEGACY_VERSIONS[1]
  local call = calls.new(client, "initialize", { protocolVersion = version,
    capabilities = input.capabilities(input.of(client)),
    clientInfo = client:option("client_info") }, { timeout = client:option("timeout"), max_rounds = 1 })
  local result, err = call:run()
  if not result then return nil, err end
  if not member(protocol.LEGACY_VERSIONS, result.protocolVersion) then
    return nil, errors.new("unsupported_version", "initialize: the server chose protocol version "
      .. tostring(result.protocolVersion) .. ", which this client does not speak", result)
  end
  client:transport():notify("notifications/initialized", nil)
  state.version = result.protocolVersion
  return { era = "legacy", version = result.protocolVersion, capabilities = result.capabilities,
    server_info = result.serverInfo, instructions = result.instructions }
end

-- Probe with server/discover; fall back to initialize.
local function probe(client)
  local call = calls.new(client, "server/discover", nil,
    { timeout = client:option("discover_timeout") or M.DEFAULT_DISCOVER_TIMEOUT, max_rounds = 1 })
  local result, err = call:run()
  if result then return modern_verdict(states[client], result) end
  if err.code == protocol.codes.UNSUPPORTED_PROTOCOL_VERSION then
    -- a modern server that shares no version with us: no fallback
    return nil, errors.new("unsupported_version", "the server speaks none of our modern versions", err.data)
  end
  if err.code == "closed" or err.code == "cancelled" then return nil, err end
  -- HTTP has its own rule (a 400 without a modern error); stdio falls back on anything
  local transport = client:transport()
  if transport.probe_fallback and not transport:probe_fallback(err) then return nil, err end
  return initialize(client)
end

local function copy(t)
  local out = {}
  for k, v in pairs(t) do out[k] = v end
  return out
end

-- A verdict known for the transport's origin (HTTP): modern is used as
-- it is; legacy still needs its own initialize (a session of its own).
local function known(client, verdict)
  if verdict.era == "legacy" then return initialize(client) end
  states[client].version = verdict.version
  return copy(verdict)
end

local function detect(client)
  local state = states[client]
  if state.pinned == "modern" then return modern_verdict(state, nil) end
  if state.pinned == "legacy" then return initialize(client) end
  local origin = client:transport().origin
  if origin and M.by_origin[origin] then return known(client, M.by_origin[origin]) end
  local verdict, err = probe(client)
  if verdict and origin then M.by_origin[origin] = copy(verdict) end
  return verdict, err
end

local function wake_all(client, waiters, verdict, err)
  local log = function(msg) client:log(msg) end
  for _, co in ipairs(waiters) do workers.wake(co, log, verdict, err) end
end

--- In a coroutine: the verdict, detected on first use (one detection at
--- a time; calls made meanwhile wait for it), or nil and an error (then the
--- next call tries again).
---@param client table
---@return table|nil verdict
---@return jrpc.Error|nil err
function M.ensure(client)
  local state = states[client]
  if state.verdict then return state.verdict end
  if state.waiters then
    local waiters = state.waiters
    waiters[#waiters + 1] = workers.current()
    local woken, verdict, err = workers.wait()
    if not woken then return nil, errors.new("interrupted", "resumed by something other than jrpc") end
    return verdict, err
  end
  state.waiters = {}
  local ok, verdict, err = pcall(detect, client)
  local waiters = state.waiters
  state.waiters = nil
  if not ok then verdict, err = nil, errors.new("era", "era detection failed: " .. tostring(verdict)) end
  if verdict then
    state.verdict = verdict
  else
    state.mode = state.pinned == "legacy" and "legacy" or "modern"
  end
  wake_all(client, waiters, verdict, err)
  return verdict, err
end

return M
