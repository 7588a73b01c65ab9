--- Protocol profiles as data: what differs between plain JSON-RPC 2.0, LSP
-- and MCP at the peer level. (The core applies each profile's wire rules.)

---@class jrpc.Profile
---@field name string
---@field framing string          default framing
---@field batches boolean         may we send batches
---@field cancel_method string    notification that cancels a request
---@field cancel_key string       the params member that holds the request id
---@field send_reason boolean     the cancel notification carries `reason`
---@field answer_cancelled boolean  answer a cancelled request with -32800
---@field meta boolean            move `params._meta` into `ctx.meta`
---@field quiet_prefix string|nil unknown notifications with this prefix are not logged
---@field max_message_bytes integer|nil  the codec's limit unless the peer's option says
---                               (nil: the core's 16 MiB)

return {
  jsonrpc = {
    name = "jsonrpc", framing = "ndjson", batches = true,
    cancel_method = "$/cancelRequest", cancel_key = "id", send_reason = false,
    answer_cancelled = true, meta = false,
  },
  lsp = {
    name = "lsp", framing = "lsp", batches = false,
    cancel_method = "$/cancelRequest", cancel_key = "id", send_reason = false,
    -- LSP: "$/" notifications are optional, a server may silently drop them
    answer_cancelled = true, meta = false, quiet_prefix = "$/",
    -- language servers' replies are large: documentSymbol on a 100,000-line
    -- file is 22.8 MB from typescript-language-server (the core's 16 MiB
    -- dropped it). 64 MiB leaves room for more than twice that; a message
    -- is held about twice while decoded (the framer's bytes, then its copy)
    max_message_bytes = 64 * 1024 * 1024,
  },
  mcp = {
    name = "mcp", framing = "ndjson", batches = false,
    cancel_method = "notifications/cancelled", cancel_key = "requestId", send_reason = true,
    -- MCP: after a cancel the server MUST NOT send anything for that request
    answer_cancelled = false, meta = true,
  },
}
