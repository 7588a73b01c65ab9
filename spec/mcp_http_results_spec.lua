-- jrpc.mcp results over Streamable HTTP (2026-07-28), driven by curl on
-- 127.0.0.1: resource template variables reach the handler percent-decoded,
-- and a tool's structuredContent is checked against its outputSchema (an
-- object, required top-level properties, simple types; -32603 when it does
-- not fit, as it is the server's bug, not the model's).
local S = dofile("spec/uv_support.lua")
local H = dofile("spec/mcp_http_support.lua")(S)
local jrpc = require "jrpc"
local mcp = require "jrpc.mcp"

local loop = S.loop

local INFO = { name = "results-spec", version = "1.0.0" }
local SERVER_INFO = { ["io.modelcontextprotocol/serverInfo"] = INFO }

-- what the sum tool's handler returns next
local returns

local function new_server()
  local srv = mcp.server(INFO)
  srv:resource_template{ uri_template = "file:///{name}", name = "file", mime_type = "text/plain",
    handler = function(_, vars) return "name=" .. vars.name end }
  srv:resource_template{ uri_template = "docs://{+path}", name = "docs",
    handler = function(_, vars) return "path=" .. vars.path end }
  srv:tool{ name = "sum", description = "structured",
    output_schema = { type = "object", properties = { sum = { type = "number" }, note = { type = "string" } },
      required = { "sum" } },
    handler = function() return returns() end }
  return assert(srv:serve_http(loop, { port = 0, peer = { on_error = function() end } }))
end

local function request(port, id, method, name, params)
  params._meta = H.META
  local status, head, body = H.post(port, H.modern_headers(method, name),
    jrpc.encode{ jsonrpc = "2.0", id = id, method = method, params = params })
  return status, head["content-type"], jrpc.decode(body)
end

local function read(port, id, uri)
  return request(port, id, "resources/read", uri, { uri = uri })
end

local function contents(id, uri, text, mime)
  return { jsonrpc = "2.0", id = id, result = { contents = { { uri = uri, text = text, mimeType = mime } },
    ttlMs = 0, cacheScope = "private", resultType = "complete", _meta = SERVER_INFO } }
end

local function sum(port, id, result)
  returns = function() return result end
  return request(port, id, "tools/call", "sum", { name = "sum", arguments = {} })
end

local function internal(id, message)
  return { jsonrpc = "2.0", id = id, error = { code = -32603, message = message } }
end

describe("jrpc.mcp resource template variables", function()
  after_each(S.cleanup)

  it("are percent-decoded before the handler sees them", function()
    S.run(function()
      local http = new_server()
      local p = http.port
      assert.are.same({ 200, "application/json", contents(1, "file:///a%20b", "name=a b", "text/plain") },
        { read(p, 1, "file:///a%20b") })
      -- an encoded "/" stays inside one {var}; UTF-8 comes out whole
      assert.are.same({ 200, "application/json", contents(2, "file:///x%2Fy%C3%A9", "name=x/yé", "text/plain") },
        { read(p, 2, "file:///x%2Fy%C3%A9") })
      -- {+var} values too; a "%" without two hex digits stays as it is
      assert.are.same({ 200, "application/json", contents(3, "docs://a/b%41/100%/%zz", "path=a/bA/100%/%zz") },
        { read(p, 3, "docs://a/b%41/100%/%zz") })
      -- a raw "/" still does not match {var}
      assert.are.same({ 400, "application/json", { jsonrpc = "2.0", id = 4, error = { code = -32602,
        message = "Resource not found", data = { uri = "file:///a/b" } } } }, { read(p, 4, "file:///a/b") })
      http:close()
    end)
  end)
end)

describe("jrpc.mcp tool outputSchema", function()
  after_each(S.cleanup)

  local function ok(id, result)
    result.resultType, result._meta = "complete", SERVER_INFO
    return { 200, "application/json", { jsonrpc = "2.0", id = id, result = result } }
  end

  it("passes structuredContent that fits, and results that promise nothing", function()
    S.run(function()
      local http = new_server()
      local p = http.port
      assert.are.same(ok(1, { structuredContent = { sum = 3 }, content = { { type = "text", text = '{"sum":3}' } } }),
        { sum(p, 1, { structuredContent = { sum = 3 } }) })
      -- extra properties are fine (no additionalProperties engine)
      assert.are.same(ok(2, { structuredContent = { sum = 1.5, extra = true },
        content = { { type = "text", text = "1.5" } } }),
        { sum(p, 2, { structuredContent = { sum = 1.5, extra = true }, content = { mcp.text("1.5") } }) })
      -- isError results are exempt: the model reads why it failed
      assert.are.same(ok(3, { content = { { type = "text", text = "no sum today" } }, isError = true }),
        { sum(p, 3, mcp.error_result("no sum today")) })
      http:close()
    end)
  end)

  it("answers -32603 when structuredContent is missing or does not fit", function()
    S.run(function()
      local http = new_server()
      local p = http.port
      local function broke(why) return "Tool sum returned structuredContent that does not fit its outputSchema: " .. why end
      assert.are.same({ 200, "application/json", internal(1, "Tool sum has an outputSchema but returned no structuredContent") },
        { sum(p, 1, "3") })
      assert.are.same({ 200, "application/json", internal(2, broke('missing required property "sum"')) },
        { sum(p, 2, { structuredContent = { total = 3 } }) })
      assert.are.same({ 200, "application/json", internal(3, broke('/sum: expected number, got string')) },
        { sum(p, 3, { structuredContent = { sum = "3" } }) })
      assert.are.same({ 200, "application/json", internal(4, broke('/note: expected string, got number')) },
        { sum(p, 4, { structuredContent = { sum = 3, note = 4 } }) })
      assert.are.same({ 200, "application/json", internal(5, broke("expected object, got array")) },
        { sum(p, 5, { structuredContent = jrpc.array{ 3 } }) })
      http:close()
    end)
  end)
end)
