--- Content items for tool results and prompt messages, and the shapes a
-- handler may return, made into the results the protocol asks for.
local core = require "jrpc.core"
local options = require "jrpc.options"

local M = {}

--- The optional members of a resource link (`extra` of `resource_link`).
M.LINK_OPTIONS = options.set{ "mimeType", "title", "description", "size", "annotations", "icons", "_meta" }

local function array(t) return setmetatable(t or {}, core.array_mt) end

-- Optional members go in only when given (nil never stands for null).
local function with(item, extra)
  if extra then for k, v in pairs(extra) do item[k] = v end end
  return item
end

--- `{type = "text", text = s}`.
---@param s string
---@return table
function M.text(s)
  return { type = "text", text = tostring(s) }
end

--- An image: base64 `data` and its MIME type.
---@param data_base64 string
---@param mime_type string
---@return table
function M.image(data_base64, mime_type)
  return { type = "image", data = data_base64, mimeType = mime_type }
end

--- Audio: base64 `data` and its MIME type.
---@param data_base64 string
---@param mime_type string
---@return table
function M.audio(data_base64, mime_type)
  return { type = "audio", data = data_base64, mimeType = mime_type }
end

--- A link to a resource: `uri`, `name`, and optional `{mimeType, title,
--- description, size, annotations, icons, _meta}` (another name is an error,
--- reported at the caller's caller: jrpc.mcp.resource_link's).
---@param uri string
---@param name string
---@param extra? table
---@return table
function M.resource_link(uri, name, extra)
  options.check("jrpc.mcp.resource_link", extra, 3, M.LINK_OPTIONS)
  return with({ type = "resource_link", uri = uri, name = name }, extra)
end

--- An embedded resource: `contents` is `{uri, mimeType?, text}` or `{uri, mimeType?, blob}`.
---@param contents table
---@return table
function M.embedded(contents)
  return { type = "resource", resource = contents }
end

--- A tool result that reports a failure to the model (`isError`), not a protocol error.
---@param message string
---@return table
function M.error_result(message)
  return { content = array{ M.text(message) }, isError = true }
end

local function is_content(v)
  return type(v) == "table" and type(v.type) == "string"
end

--- A tool handler's return value as a CallToolResult: a string is one text
--- item, a content item or a list of them is the content, a table with
--- `content` or `structuredContent` is taken as the result (structured
--- content alone also gets its JSON as text, for clients that read only
--- `content`).
---@param v any
---@return table
function M.tool_result(v)
  if type(v) == "table" and v.resultType == "input_required" then return v end  -- MRTR
  if v == nil then return { content = array{} } end
  if type(v) ~= "table" then return { content = array{ M.text(tostring(v)) } } end
  if is_content(v) then return { content = array{ v } } end
  if v.content == nil and v.structuredContent == nil then return { content = array(v) } end
  if v.content == nil then v.content = array{ M.text(assert(core.encode(v.structuredContent))) } end
  return v
end

--- A prompt handler's return value as a GetPromptResult: a string is one
--- user message, a list is the messages, a table with `messages` is the
--- result. A message's `content` may be a string (a text item).
---@param v any
---@return table
function M.prompt_result(v)
  if type(v) == "table" and v.resultType == "input_required" then return v end  -- MRTR
  if type(v) ~= "table" then v = { messages = { { role = "user", content = tostring(v) } } } end
  if v.messages == nil then v = { messages = v } end
  for _, msg in ipairs(v.messages) do
    if type(msg.content) ~= "table" then msg.content = M.text(msg.content) end
    msg.role = msg.role or "user"
  end
  v.messages = array(v.messages)
  return v
end

--- A resource handler's return value as a ReadResourceResult for `uri`: a
--- string is the text, a table with `text` or `blob` is one content, a list
--- is the contents, a table with `contents` is the result. `uri` and the
--- resource's MIME type fill what a content leaves out.
---@param v any
---@param uri string
---@param mime_type? string
---@return table
function M.resource_result(v, uri, mime_type)
  if type(v) ~= "table" then v = { text = tostring(v) } end
  if v.contents == nil then
    if v.text ~= nil or v.blob ~= nil then v = { contents = { v } } else v = { contents = v } end
  end
  for _, c in ipairs(v.contents) do
    c.uri = c.uri or uri
    c.mimeType = c.mimeType or mime_type
  end
  v.contents = array(v.contents)
  return v
end

return M
