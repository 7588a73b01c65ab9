-- The server option `run_handler` and `server:run_handlers(wrap)`: every
-- tool, resource, template, prompt and completion handler is called
-- through them (jrpc.nvim.serve_mcp uses this to start handlers on
-- Neovim's main loop), with the handler's arguments, and what they return
-- is the handler's result.
local jrpc = require "jrpc"
local mcp = require "jrpc.mcp"

local V = "2026-07-28"
local META = { ["io.modelcontextprotocol/protocolVersion"] = V,
  ["io.modelcontextprotocol/clientCapabilities"] = jrpc.object() }

-- A served peer and a function that sends one request and returns its reply, decoded.
local function setup(opts)
  local server = mcp.server(opts)
  local out
  local peer = jrpc.peer{ profile = "mcp", role = "server", on_error = function() end,
    send = function(bytes) out = assert(jrpc.decode((bytes:gsub("\n$", "")))) end }
  server:attach(peer)
  local id = 0
  local function call(method, params)
    id = id + 1
    params._meta = META
    peer:receive(assert(jrpc.encode{ jsonrpc = "2.0", id = id, method = method, params = params }) .. "\n")
    return out
  end
  return server, call
end

-- Registers one handler of each kind; each returns what it was called with.
local function offer(server)
  server:tool{ name = "t", description = "T", handler = function(args) return "tool " .. args.x end }
  server:tool{ name = "boom", description = "B", handler = function() error("oops") end }
  server:resource{ uri = "mem://a", name = "a", handler = function(uri) return "resource " .. uri end }
  server:resource_template{ uri_template = "mem://f/{name}", name = "f",
    handler = function(uri, vars) return { uri = uri, text = "template " .. vars.name } end }
  server:prompt{ name = "p", description = "P", arguments = { { name = "x" } },
    handler = function(args) return "prompt " .. tostring(args.x) end }
  server:completion("prompt", "p", function(name, value) return { name .. "=" .. value } end)
end

-- Every kind of handler, called once each; returns what each answered.
local function every(call)
  return {
    tool = call("tools/call", { name = "t", arguments = { x = "1" } }).result.content[1].text,
    boom = call("tools/call", { name = "boom", arguments = {} }).result.content[1].text,
    resource = call("resources/read", { uri = "mem://a" }).result.contents[1].text,
    template = call("resources/read", { uri = "mem://f/b" }).result.contents[1].text,
    prompt = call("prompts/get", { name = "p", arguments = { x = "2" } }).result.messages[1].content.text,
    complete = call("completion/complete", { ref = { type = "ref/prompt", name = "p" },
      argument = { name = "x", value = "v" } }).result.completion.values[1],
  }
end

describe("jrpc.mcp server: run_handler", function()
  it("calls every tool, resource, template, prompt and completion handler through the option", function()
    local seen = {}
    local server, call = setup{ name = "s", version = "1", run_handler = function(fn, ...)
      seen[#seen + 1] = select("#", ...)
      local a, b = fn(...)
      if type(a) == "string" then a = a .. "!" end
      return a, b
    end }
    offer(server)
    assert.same({ tool = "tool 1!", boom = "Tool boom failed: internal error", resource = "resource mem://a!",
      template = "template b", prompt = "prompt 2!", complete = "x=v" }, every(call))
    -- the handlers' own arguments: (args, ctx), (args, ctx), (uri, ctx),
    -- (uri, vars, ctx), (args, ctx), (name, value, ctx)
    assert.same({ 2, 2, 2, 3, 2, 3 }, seen)
  end)

  it("server:run_handlers wraps what came before: the last given runs first", function()
    local order = {}
    local server, call = setup{ name = "s", version = "1", run_handler = function(fn, ...)
      order[#order + 1] = "option"; return fn(...)
    end }
    offer(server)
    assert.equal(server, server:run_handlers(function(fn, ...) order[#order + 1] = "first"; return fn(...) end))
    server:run_handlers(function(fn, ...) order[#order + 1] = "second"; return fn(...) end)
    assert.equal("tool 1", every(call).tool)
    assert.same({ "second", "first", "option" }, { order[1], order[2], order[3] })
  end)

  it("without one, handlers are called as they are", function()
    local server, call = setup{ name = "s", version = "1" }
    offer(server)
    assert.same({ tool = "tool 1", boom = "Tool boom failed: internal error", resource = "resource mem://a",
      template = "template b", prompt = "prompt 2", complete = "x=v" }, every(call))
    server:run_handlers(function(fn, ...) return fn(...) end)
    assert.equal("prompt 2", every(call).prompt)
  end)

  it("a run_handler that raises makes a tool's call an isError result", function()
    local server, call = setup{ name = "s", version = "1", run_handler = function() error("not now") end }
    offer(server)
    local r = call("tools/call", { name = "t", arguments = { x = "1" } }).result
    assert.same({ true, "Tool t failed: internal error" }, { r.isError, r.content[1].text })
  end)

  it("is checked", function()
    assert.has_error(function() mcp.server{ name = "s", version = "1", run_handler = 1 } end,
      "jrpc.mcp.server: run_handler must be a function(call, ...)")
    local server = mcp.server{ name = "s", version = "1" }
    assert.has_error(function() server:run_handlers("x") end, "server:run_handlers: expected a function")
  end)
end)
