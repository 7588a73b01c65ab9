--- `jrpc.mcp`: Model Context Protocol servers on jrpc peers, serving the
-- 2026-07-28 (stateless) and 2025-11-25 (initialize) eras on one
-- connection. The server is in mcp/server.lua, the protocol facts both
-- sides share in mcp/protocol.lua, the content helpers in mcp/content.lua.
local server = require "jrpc.mcp.server"
local content = require "jrpc.mcp.content"
local mrtr = require "jrpc.mcp.mrtr"

local M = {}

--- The shared protocol facts: versions, `_meta` keys, error codes and constructors.
M.protocol = require "jrpc.mcp.protocol"

--- A new server: `{name, version, title?, instructions?, ttl_ms? (default
--- 0), cache_scope? ("private" by default, or "public"), page_size? (list
--- items a page, default 100), state_key? (the key that seals MRTR states,
--- 16 bytes or more: the same in every worker; default random per process),
--- tasks? (the tasks extension's options: ttl_ms, poll_interval_ms,
--- max_tasks, store, notify; see docs/mcp.md)}`.
--- An unknown name is an error.
---@param opts table
---@return jrpc.mcp.Server
function M.server(opts)
  -- not a tail call: errors in `opts` are reported at our caller
  local srv = server.new(opts)
  return srv
end

--- A text content item.
---@param s string
---@return table
function M.text(s) return content.text(s) end

--- An image content item (base64 data).
---@param data_base64 string
---@param mime_type string
---@return table
function M.image(data_base64, mime_type) return content.image(data_base64, mime_type) end

--- An audio content item (base64 data).
---@param data_base64 string
---@param mime_type string
---@return table
function M.audio(data_base64, mime_type) return content.audio(data_base64, mime_type) end

--- A resource link content item; `extra` may hold mimeType, title,
--- description, size, annotations, icons and _meta (another name is an error).
---@param uri string
---@param name string
---@param extra? table
---@return table
function M.resource_link(uri, name, extra)
  -- not a tail call: a misspelt `extra` is reported at our caller
  local link = content.resource_link(uri, name, extra)
  return link
end

--- An embedded resource content item: `contents` is `{uri, mimeType?, text}` or `{uri, mimeType?, blob}`.
---@param contents table
---@return table
function M.embedded(contents) return content.embedded(contents) end

--- A tool or prompt result asking the client for input (MRTR):
--- `requests` = `{ key = {method = "elicitation/create" | "sampling/createMessage"
--- | "roots/list", params}, ... }`; `state` (a string) comes back on the
--- retry, sealed by the server, as `ctx.request_state`, with the client's
--- answers in `ctx.input_responses`. A forged state is refused (-32602).
---@param requests table
---@param state? string
---@return table
function M.input_required(requests, state) return mrtr.input_required(requests, state) end

--- A tool result reporting a failure the model should see (`isError = true`).
---@param message string
---@return table
function M.error_result(message) return content.error_result(message) end

return M
