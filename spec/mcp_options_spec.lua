-- Every options table of the MCP server is checked: a misspelt name is an
-- error that names it (and the closest known name), reported where the
-- public function was called. Each call below sits on the line after
-- `at()`, so the expected position is that line.
local mcp = require "jrpc.mcp"
local jrpc = require "jrpc"
local server_mod = require "jrpc.mcp.server"
local http_mod = require "jrpc.mcp.http"

local FILE = "spec/mcp_options_spec.lua"

-- The line after the caller's: where the call under test is.
local function at() return debug.getinfo(2, "l").currentline + 1 end

-- The error `fn` raises (fn must not tail-call the entry: the position
-- would be lost with the frame).
local function raised(fn)
  local ok, err = pcall(fn)
  assert.is_false(ok)
  return err
end

local function handler() return "ok" end

local function new_server() return mcp.server{ name = "opts", version = "1.0.0" } end

describe("jrpc.mcp options", function()
  it("mcp.server refuses an unknown option, at its caller", function()
    local line = at()
    local err = raised(function() local s = mcp.server{ name = "x", version = "1", page_sise = 10 }; return s end)
    assert.are.equal(FILE .. ":" .. line .. ": jrpc.mcp.server: unknown option 'page_sise' (did you mean 'page_size'?)", err)
    line = at()
    err = raised(function() local s = mcp.server{ name = "x", version = "1", state_key = "short" }; return s end)
    assert.are.equal(FILE .. ":" .. line .. ": jrpc.mcp.server: state_key must be a string of at least 16 bytes", err)
  end)

  it("a tool definition with a misspelt key is refused (inputSchema for input_schema)", function()
    local srv = new_server()
    local line = at()
    local err = raised(function() srv:tool{ name = "echo", inputSchema = { type = "object" }, handler = handler } end)
    assert.are.equal(FILE .. ":" .. line .. ": tool echo: unknown option 'inputSchema' (did you mean 'input_schema'?)", err)
    line = at()
    err = raised(function() srv:tool{ nme = "echo", handler = handler } end)
    assert.are.equal(FILE .. ":" .. line .. ": tool: unknown option 'nme' (did you mean 'name'?)", err)
    line = at()
    err = raised(function() srv:tool("echo") end)
    assert.are.equal(FILE .. ":" .. line .. ": tool: expected a definition table, got string", err)
    -- nothing was registered
    assert.are.same({}, srv.registry.tools)
  end)

  it("resource, template and prompt definitions (and a prompt's arguments) are checked", function()
    local srv = new_server()
    local line = at()
    local err = raised(function() srv:resource{ uri = "file:///a", name = "a", mimeType = "text/plain", handler = handler } end)
    assert.are.equal(FILE .. ":" .. line .. ": resource file:///a: unknown option 'mimeType' (did you mean 'mime_type'?)", err)
    line = at()
    err = raised(function() srv:resource_template{ uriTemplate = "file:///{p}", name = "t", handler = handler } end)
    assert.are.equal(FILE .. ":" .. line .. ": resource template: unknown option 'uriTemplate' (did you mean 'uri_template'?)", err)
    line = at()
    err = raised(function() srv:prompt{ name = "greet", argument = { "who" }, handler = handler } end)
    assert.are.equal(FILE .. ":" .. line .. ": prompt greet: unknown option 'argument' (did you mean 'arguments'?)", err)
    line = at()
    err = raised(function() srv:prompt{ name = "greet", arguments = { { name = "who", require = true } }, handler = handler } end)
    assert.are.equal(FILE .. ":" .. line .. ": prompt greet: argument 1: unknown option 'require' (did you mean 'required'?)", err)
    -- every known name is accepted
    srv:tool{ name = "t", title = "T", description = "d", input_schema = "{}", output_schema = { type = "object" },
      annotations = {}, requires = {}, task_support = "optional", handler = handler }
    srv:resource{ uri = "file:///a", name = "a", title = "A", description = "d", mime_type = "text/plain", size = 1,
      annotations = {}, ttl_ms = 1, cache_scope = "public", handler = handler }
    srv:resource_template{ uri_template = "file:///{p}", name = "t", title = "T", description = "d",
      mime_type = "text/plain", annotations = {}, ttl_ms = 1, cache_scope = "public", handler = handler }
    srv:prompt{ name = "greet", title = "G", description = "d",
      arguments = { { name = "who", title = "W", description = "d", required = true } }, handler = handler }
    assert.are.same({ tools = true, resources = true, prompts = true, completions = false, tasks = true },
      srv.registry:offers())
  end)

  it("attach checks its hooks", function()
    local srv = new_server()
    local peer = jrpc.peer{ send = function() end, profile = "mcp", role = "server" }
    local line = at()
    local err = raised(function() srv:attach(peer, { rout = function() end }) end)
    assert.are.equal(FILE .. ":" .. line .. ": server:attach: unknown option 'rout' (did you mean 'route'?)", err)
  end)

  it("serve_stdio checks its peer options before it serves", function()
    local srv = new_server()
    local line = at()
    local err = raised(function() srv:serve_stdio(nil, { on_eror = print }) end)
    assert.are.equal(FILE .. ":" .. line .. ": server:serve_stdio: unknown option 'on_eror' (did you mean 'on_error'?)", err)
    -- the transport sets send, profile and role itself
    line = at()
    err = raised(function() srv:serve_stdio(nil, { send = print }) end)
    assert.are.equal(FILE .. ":" .. line .. ": server:serve_stdio: unknown option 'send'", err)
  end)

  it("serve_http checks its options, its limits and its peer options before it listens", function()
    local srv = new_server()
    local loop = {}  -- never reached: the checks come first
    local line = at()
    local err = raised(function() srv:serve_http(loop, { max_session = 3 }) end)
    assert.are.equal(FILE .. ":" .. line .. ": serve_http: unknown option 'max_session' (did you mean 'max_sessions'?)", err)
    line = at()
    err = raised(function() srv:serve_http(loop, { max_body_byte = 10 }) end)
    assert.are.equal(FILE .. ":" .. line .. ": serve_http: unknown option 'max_body_byte' (did you mean 'max_body_bytes'?)", err)
    line = at()
    err = raised(function() srv:serve_http(loop, { peer = { tmeout = 1 } }) end)
    assert.are.equal(FILE .. ":" .. line .. ": serve_http: peer: unknown option 'tmeout' (did you mean 'timeout'?)", err)
    line = at()
    err = raised(function() srv:serve_http(loop, { session_idle_timeout = 0 }) end)
    assert.are.equal(FILE .. ":" .. line
      .. ": serve_http: session_idle_timeout must be a positive number of seconds, or false", err)
  end)

  it("exports the name sets a transport passes through", function()
    assert.is_nil(server_mod.PEER_OPTIONS.send)
    assert.is_true(server_mod.PEER_OPTIONS.on_error)
    assert.is_true(server_mod.PEER_OPTIONS.timeout)
    assert.is_true(http_mod.OPTIONS.max_sessions)
    assert.is_true(http_mod.OPTIONS.max_body_bytes)
    assert.is_true(http_mod.OPTIONS.peer)
    assert.is_nil(http_mod.OPTIONS.handler)  -- the HTTP handler is the MCP server's own
    assert.is_true(server_mod.OPTIONS.state_key)
  end)

  it("mcp.resource_link checks its extra members", function()
    local line = at()
    local err = raised(function() local l = mcp.resource_link("file:///a", "a", { mimetype = "text/plain" }); return l end)
    assert.are.equal(FILE .. ":" .. line .. ": jrpc.mcp.resource_link: unknown option 'mimetype' (did you mean 'mimeType'?)", err)
    assert.are.same({ type = "resource_link", uri = "file:///a", name = "a", mimeType = "text/plain", size = 3 },
      mcp.resource_link("file:///a", "a", { mimeType = "text/plain", size = 3 }))
  end)
end)

describe("jrpc.mcp serve_http errors", function()
  local S = dofile("spec/uv_support.lua")
  after_each(S.cleanup)

  it("an address that cannot be bound is nil and a jrpc.Error with code \"listen\"", function()
    S.run(function()
      local srv = mcp.server{ name = "opts", version = "1.0.0" }
      local first = assert(srv:serve_http(S.loop, { port = 0 }))
      local http, err = srv:serve_http(S.loop, { port = first.port })
      assert.is_nil(http)
      assert.are.equal(require("jrpc.errors").metatable, getmetatable(err))
      assert.are.same({ code = "listen", message = ("http: cannot listen on 127.0.0.1:%d: EADDRINUSE: address already in use")
        :format(first.port) }, { code = err.code, message = err.message })
      first:close()
    end)
  end)
end)
