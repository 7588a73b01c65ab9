-- bench/cjson_loop.lua: the JSON-RPC 2.0 server loop as a Lua user writes it
-- today with lua-cjson. make(handlers) -> step(line) -> reply line or nil.
local cjson = require("cjson")

local decode, encode, null = cjson.decode, cjson.encode, cjson.null

local function reply_error(id, code, message)
  return encode{jsonrpc = "2.0", error = {code = code, message = message}, id = id} .. "\n"
end

return function(handlers)
  return function(line)
    local ok, m = pcall(decode, line)
    if not ok then return reply_error(null, -32700, "Parse error") end
    if type(m) ~= "table" or m.jsonrpc ~= "2.0" or type(m.method) ~= "string" then
      return reply_error(null, -32600, "Invalid Request")
    end
    local id = m.id
    local handler = handlers[m.method]
    if handler == nil then
      if id == nil then return nil end
      return reply_error(id, -32601, "Method not found")
    end
    local hok, r = pcall(handler, m.params)
    if id == nil then return nil end
    if not hok then return reply_error(id, -32603, "Internal error") end
    return encode{jsonrpc = "2.0", result = r, id = id} .. "\n"
  end
end
