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

-- The content item types of a tool result: a record with another `type`
-- member (`{type = "circle", r = 2}`) is data, not content.
local CONTENT_TYPES = { text = true, image = true, audio = true, resource_link = true, resource = true }

local function is_content(v)
  return type(v) == "table" and CONTENT_TYPES[v.type] == true
end

local function is_list(v)
  return getmetatable(v) == core.array_mt or v[1] ~= nil
end

--- What a tool handler may return, for the message that says it returned
--- something else.
M.TOOL_RESULT_FIX = "return a string, a content item (jrpc.mcp.text(...)), a list of content items, "
  .. "a table of JSON values (sent as structuredContent and as its JSON text), or a CallToolResult"

local function kind_of(v)
  local t = type(v)
  return (t == "userdata" and "a userdata") or ("a " .. t)
end

--- A tool handler's return value as a CallToolResult: a string, number or
--- boolean is one text item; a content item or a list of them is the
--- content; a table with `content` or `structuredContent` is the result; any
--- other table is a record, the structuredContent. Structured content
--- without `content` also gets its JSON as text (as the TypeScript and
--- Python SDKs send it), for clients that read only `content`. Returns nil
--- and what the value is when it cannot be made into a result (a function,
--- a list of things that are not content, a table that is not JSON).
---@param v any
---@return table|nil result
---@return string|nil what
function M.tool_result(v)
  if type(v) == "table" and v.resultType == "input_required" then return v end  -- MRTR
  if v == nil then return { content = array{} } end
  local t = type(v)
  if t == "string" or t == "number" or t == "boolean" then return { content = array{ M.text(tostring(v)) } } end
  if t ~= "table" then return nil, kind_of(v) end
  local result = v
  if is_content(v) then
    result = { content = array{ v } }
  elseif v.content == nil and v.structuredContent == nil then
    if next(v) == nil and getmetatable(v) ~= core.object_mt then return { content = array{} } end
    if is_list(v) then
      for i, item in ipairs(v) do
        if not is_content(item) then
          return nil, ("a list whose item %d is %s, not a content item"):format(i,
            type(item) == "table" and "a table without a content type" or kind_of(item))
        end
      end
      result = { content = array(v) }
    else
      result = { structuredContent = v }
    end
  end
  if result.content == nil then
    local json, err = core.encode(result.structuredContent)
    if not json then return nil, "structured content that is not JSON (" .. err .. ")" end
    result.content = array{ M.text(json) }
  end
  -- the peer encodes the result later, where a failure could only be an
  -- internal error: find it here, where the message can name the tool
  local _, err = core.encode(result)
  if err then return nil, "a result that is not JSON (" .. err .. ")" end
  return result
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
