--- What a server offers: tools, resources, resource templates, prompts and
-- completion providers, in registration order (lists page in that order).
-- This module owns the registrations; it checks them when they are made, so
-- a mistake shows where it was written, not at the first request.
local core = require "jrpc.core"
local options = require "jrpc.options"
local http_headers = require "jrpc.mcp.http_headers"
local wire_schema = require "jrpc.mcp.wire_schema"
local validation = require "jrpc.mcp.validation"

local M = {}

--- The names a definition may have, by kind: a misspelt one (`inputSchema`
--- for `input_schema`) is an error, not a member silently left out.
M.TOOL = options.set{ "name", "title", "description", "input_schema", "output_schema",
  "annotations", "requires", "task_support", "handler" }
M.RESOURCE = options.set{ "uri", "name", "title", "description", "mime_type", "size",
  "annotations", "ttl_ms", "cache_scope", "handler" }
M.TEMPLATE = options.set{ "uri_template", "name", "title", "description", "mime_type",
  "annotations", "ttl_ms", "cache_scope", "handler" }
M.PROMPT = options.set{ "name", "title", "description", "arguments", "handler" }
M.PROMPT_ARGUMENT = options.set{ "name", "title", "description", "required" }

local Registry = {}
Registry.__index = Registry

--- An empty registry.
---@return table
function M.new()
  return setmetatable({
    tools = {}, tool_by_name = {}, task_tools = 0,
    resources = {}, resource_by_uri = {},
    templates = {},
    prompts = {}, prompt_by_name = {},
    completions = {},  -- ["ref/prompt\0name"] = fn
  }, Registry)
end

local function need(t, field, kind, what)
  if type(t[field]) ~= kind then
    error(("%s: %s must be a %s"):format(what, field, kind), 4)
  end
end

-- A schema is a Lua table or JSON text: the table the server checks
-- with, and what tools/list sends (wire_schema.lua), or nil. A Lua table
-- is checked in its wire form too: a copy (later changes to the caller's
-- table change nothing), its lists marked as arrays, as a validator needs
-- to tell `items = {}` (any item) from a list of schemas.
local function schema(v, what)
  if v == nil then return nil end
  if type(v) == "string" then
    local t, err = wire_schema.from_text(v)
    if not t then error(what .. ": schema is not a JSON object: " .. tostring(err), 4) end
    return t, err
  end
  if type(v) ~= "table" then error(what .. ": schema must be a table or JSON text", 4) end
  local wire = wire_schema.from_table(v)
  return wire, wire
end

-- Check the names of definition `def` (of `kind`, named by its `key`
-- member), reported where the server method was called.
local function check(def, kind, key, names)
  if type(def) ~= "table" then error(("%s: expected a definition table, got %s"):format(kind, type(def)), 4) end
  local id = def[key]
  options.check(type(id) == "string" and kind .. " " .. id or kind, def, 4, names)
end

-- A tool's task_support (tasks.lua): may a call run as a task?
local TASK_SUPPORT = { forbidden = true, optional = true, required = true }

-- Tool names: 1-64 of [A-Za-z0-9_./-], as clients check them.
local function valid_tool_name(name)
  return #name >= 1 and #name <= 64 and not name:find("[^%w_%./%-]")
end

--- Add a tool (see `server:tool`).
---@param def table
function Registry:add_tool(def)
  check(def, "tool", "name", M.TOOL)
  local what = "tool " .. tostring(def.name)
  need(def, "name", "string", "tool")
  need(def, "handler", "function", what)
  if not valid_tool_name(def.name) then error(what .. ": names are 1-64 characters of A-Z a-z 0-9 _ . / -", 3) end
  if self.tool_by_name[def.name] then error(what .. ": already registered", 3) end
  local input, input_wire = schema(def.input_schema, what)
  if not input then input = { type = "object" }; input_wire = input end
  local output, output_wire = schema(def.output_schema, what)
  -- x-mcp-header marks: a client drops a tool with an invalid one
  local mirrored, bad = http_headers.mirrored_arguments(input)
  if not mirrored then error(what .. ": " .. bad, 3) end
  local support = def.task_support or "forbidden"
  if not TASK_SUPPORT[support] then
    error(what .. ': task_support must be "forbidden", "optional" or "required"', 3)
  end
  local listed = { name = def.name, title = def.title, description = def.description,
    inputSchema = input_wire, outputSchema = output_wire, annotations = def.annotations,
    execution = support ~= "forbidden" and { taskSupport = support } or nil }
  local check_arguments, why = validation.compile(input)
  if not check_arguments then error(what .. ": input_schema: " .. why, 3) end
  local check_output
  if output then
    check_output, why = validation.compile(output)
    if not check_output then error(what .. ": output_schema: " .. why, 3) end
  end
  local tool = { name = def.name, handler = def.handler, listed = listed, requires = def.requires,
    mirrored = mirrored, has_output_schema = output ~= nil, task_support = support,
    check_arguments = check_arguments, check_output = check_output }
  self.tools[#self.tools + 1] = tool
  self.tool_by_name[def.name] = tool
  if support ~= "forbidden" then self.task_tools = self.task_tools + 1 end
end

--- Add a resource (see `server:resource`).
---@param def table
function Registry:add_resource(def)
  check(def, "resource", "uri", M.RESOURCE)
  need(def, "uri", "string", "resource")
  local what = "resource " .. def.uri
  need(def, "name", "string", what)
  need(def, "handler", "function", what)
  if self.resource_by_uri[def.uri] then error(what .. ": already registered", 3) end
  local r = { uri = def.uri, handler = def.handler, mime_type = def.mime_type,
    ttl_ms = def.ttl_ms, cache_scope = def.cache_scope,
    listed = { uri = def.uri, name = def.name, title = def.title, description = def.description,
      mimeType = def.mime_type, size = def.size, annotations = def.annotations } }
  self.resources[#self.resources + 1] = r
  self.resource_by_uri[def.uri] = r
end

-- A URI template's variables as a Lua pattern: `{var}` matches one path
-- segment (no "/"), `{+var}` (reserved expansion) anything.
local function compile(template)
  local names, pattern, pos = {}, { "^" }, 1
  while true do
    local s, e, plus, name = template:find("{(%+?)([%w_]+)}", pos)
    local literal = template:sub(pos, (s or 0) - 1)
    pattern[#pattern + 1] = literal:gsub("%p", "%%%0")
    if not s then break end
    names[#names + 1] = name
    pattern[#pattern + 1] = plus == "+" and "(.+)" or "([^/]+)"
    pos = e + 1
  end
  pattern[#pattern + 1] = "$"
  return table.concat(pattern), names
end

--- Add a resource template (see `server:resource_template`).
---@param def table
function Registry:add_template(def)
  check(def, "resource template", "uri_template", M.TEMPLATE)
  need(def, "uri_template", "string", "resource template")
  local what = "resource template " .. def.uri_template
  need(def, "name", "string", what)
  need(def, "handler", "function", what)
  local pattern, names = compile(def.uri_template)
  if #names == 0 then error(what .. ": has no {variable}; register it with server:resource", 3) end
  self.templates[#self.templates + 1] = { uri_template = def.uri_template, pattern = pattern, names = names,
    handler = def.handler,
    mime_type = def.mime_type, ttl_ms = def.ttl_ms, cache_scope = def.cache_scope,
    listed = { uriTemplate = def.uri_template, name = def.name, title = def.title,
      description = def.description, mimeType = def.mime_type, annotations = def.annotations } }
end

--- Add a prompt (see `server:prompt`).
---@param def table
function Registry:add_prompt(def)
  check(def, "prompt", "name", M.PROMPT)
  need(def, "name", "string", "prompt")
  local what = "prompt " .. def.name
  need(def, "handler", "function", what)
  if self.prompt_by_name[def.name] then error(what .. ": already registered", 3) end
  local args = {}
  for i, a in ipairs(def.arguments or {}) do
    if type(a) == "string" then a = { name = a } end
    if type(a) == "table" then options.check(what .. ": argument " .. i, a, 3, M.PROMPT_ARGUMENT) end
    if type(a) ~= "table" or type(a.name) ~= "string" then error(what .. ": argument " .. i .. " has no name", 3) end
    args[i] = { name = a.name, title = a.title, description = a.description, required = a.required }
  end
  local p = { name = def.name, handler = def.handler, arguments = args,
    listed = { name = def.name, title = def.title, description = def.description,
      arguments = #args > 0 and setmetatable(args, core.array_mt) or nil } }
  self.prompts[#self.prompts + 1] = p
  self.prompt_by_name[def.name] = p
end

local REF_TYPES = { prompt = "ref/prompt", resource = "ref/resource" }

--- Add a completion provider for a prompt's arguments (`ref_type` "prompt",
--- `name` the prompt) or a resource template's variables ("resource", the
--- URI template).
---@param ref_type string
---@param name string
---@param fn function
function Registry:add_completion(ref_type, name, fn)
  local ref = REF_TYPES[ref_type]
  if not ref then error("completion: ref_type must be \"prompt\" or \"resource\"", 3) end
  if type(name) ~= "string" then error("completion: name must be a string", 3) end
  if type(fn) ~= "function" then error("completion: provider must be a function", 3) end
  self.completions[ref .. "\0" .. name] = fn
end

--- The completion provider for a `ref` of `completion/complete`, or nil.
---@param ref table
---@return function|nil
function Registry:completion_for(ref)
  if type(ref) ~= "table" then return nil end
  return self.completions[tostring(ref.type) .. "\0" .. tostring(ref.name or ref.uri)]
end

-- A matched variable as the handler wants it: %XX escapes decoded (a
-- client encodes what the template's expansion would, e.g. a space as
-- %20); a "%" not followed by two hex digits stays as it is.
local function percent_decode(s)
  return (s:gsub("%%(%x%x)", function(h) return string.char(tonumber(h, 16)) end))
end

-- Remove the entry whose `key` field is `value` from the ordered `list`
-- (lists page in registration order, so the rest keep theirs).
local function remove_from(list, key, value)
  for i, entry in ipairs(list) do
    if entry[key] == value then
      table.remove(list, i)
      return entry
    end
  end
  return nil
end

--- Remove tool `name`; returns whether it was registered.
---@param name string
---@return boolean
function Registry:remove_tool(name)
  local tool = self.tool_by_name[name]
  self.tool_by_name[name] = nil
  if tool and tool.task_support ~= "forbidden" then self.task_tools = self.task_tools - 1 end
  return remove_from(self.tools, "name", name) ~= nil
end

--- Remove the resource `uri`; returns whether it was registered.
---@param uri string
---@return boolean
function Registry:remove_resource(uri)
  self.resource_by_uri[uri] = nil
  return remove_from(self.resources, "uri", uri) ~= nil
end

--- Remove the resource template `uri_template` (and its completions);
--- returns whether it was registered.
---@param uri_template string
---@return boolean
function Registry:remove_template(uri_template)
  self.completions[REF_TYPES.resource .. "\0" .. uri_template] = nil
  return remove_from(self.templates, "uri_template", uri_template) ~= nil
end

--- Remove prompt `name` (and its completions); returns whether it was registered.
---@param name string
---@return boolean
function Registry:remove_prompt(name)
  self.prompt_by_name[name] = nil
  self.completions[REF_TYPES.prompt .. "\0" .. name] = nil
  return remove_from(self.prompts, "name", name) ~= nil
end

--- The resource or template that serves `uri`, and the template's
--- variables, percent-decoded (nil for a plain resource); nil when nothing
--- does.
---@param uri string
---@return table|nil entry
---@return table|nil vars
function Registry:find_resource(uri)
  local r = self.resource_by_uri[uri]
  if r then return r end
  for _, t in ipairs(self.templates) do
    local found = { uri:match(t.pattern) }
    if found[1] ~= nil then
      local vars = {}
      for i, name in ipairs(t.names) do vars[name] = percent_decode(found[i]) end
      return t, vars
    end
  end
  return nil
end

--- What the server's capabilities are, given what is registered.
---@return table
function Registry:offers()
  return { tools = #self.tools > 0, resources = #self.resources > 0 or #self.templates > 0,
    prompts = #self.prompts > 0, completions = next(self.completions) ~= nil, tasks = self.task_tools > 0 }
end

return M
