local options = require "jrpc.options"
local jrpc = require "jrpc"

describe("jrpc.options.check", function()
  local known = options.set{ "timeout", "send" }

  it("accepts known names and nil", function()
    local o = { timeout = 1 }
    assert.are.equal(o, options.check("f", o, 1, known))
    assert.are.same({}, options.check("f", nil, 1, known))
  end)

  it("names an unknown option and the closest known one", function()
    local ok, err = pcall(options.check, "jrpc.x", { tmeout = 1 }, 1, known)
    assert.is_false(ok)
    assert.are.equal("jrpc.x: unknown option 'tmeout' (did you mean 'timeout'?)", err)
    ok, err = pcall(options.check, "jrpc.x", { zzzzzzzz = 1 }, 1, known)
    assert.is_false(ok)
    assert.are.equal("jrpc.x: unknown option 'zzzzzzzz'", err)
  end)

  it("takes names from several sets, and refuses positional entries and non-tables", function()
    assert.has_no.errors(function() options.check("f", { a = 1, send = 2 }, 1, known, options.set{ "a" }) end)
    local ok, err = pcall(options.check, "f", { 1 }, 1, known)
    assert.is_false(ok)
    assert.are.equal("f: options must be named, got key 1", err)
    ok, err = pcall(options.check, "f", "x", 1, known)
    assert.is_false(ok)
    assert.are.equal("f: expected an options table, got string", err)
  end)

  it("pick keeps the named entries only", function()
    assert.are.same({ send = 1 }, options.pick({ send = 1, other = 2 }, known))
  end)
end)

describe("jrpc.peer options", function()
  it("a misspelt option is an error that names it, reported at the caller", function()
    local ok, err = pcall(function()
      local peer = jrpc.peer{ send = print, tmeout = 5 }
      return peer
    end)
    assert.is_false(ok)
    assert.matches("options_spec.lua:%d+: jrpc.peer: unknown option 'tmeout' %(did you mean 'timeout'%?%)$", err)
  end)
end)

describe("checked options of the MCP client, the HTTP transport and the command line", function()
  local mcp_client = require "jrpc.mcp.client"

  -- the error of `fn`, which must raise
  local function raised(fn)
    local ok, err = pcall(fn)
    assert.is_false(ok)
    return err
  end

  it("jrpc.mcp.client.connect names a misspelt option, at the caller", function()
    assert.matches("options_spec.lua:%d+: jrpc.mcp.client.connect: unknown option 'tmeout' %(did you mean 'timeout'%?%)$",
      raised(function() local _ = mcp_client.connect(nil, { cmd = "x", tmeout = 5 }) end))
    assert.matches("options_spec.lua:%d+: jrpc.mcp.client.connect: unknown option 'hedaers' %(did you mean 'headers'%?%)$",
      raised(function() local _ = mcp_client.connect(nil, { url = "http://127.0.0.1:1/mcp", hedaers = {} }) end))
  end)

  it("each call of the client checks its options: a call's, a list's, complete's", function()
    local client = assert(mcp_client.connect(nil, { transport = {} }))
    assert.matches("options_spec.lua:%d+: jrpc.mcp.client: tools/call: unknown option 'on_progres' "
      .. "%(did you mean 'on_progress'%?%)$",
      raised(function() local _ = client:call_tool("t", {}, { on_progres = print }, print) end))
    assert.matches("options_spec.lua:%d+: jrpc.mcp.client: tools/list: unknown option 'fersh' %(did you mean 'fresh'%?%)$",
      raised(function() local _ = client:list_tools({ fersh = true }, print) end))
    assert.matches("options_spec.lua:%d+: jrpc.mcp.client: completion/complete: unknown option 'contxt' "
      .. "%(did you mean 'context'%?%)$",
      raised(function() local _ = client:complete({}, {}, { contxt = {} }, print) end))
  end)

  it("jrpc.http_peer takes its own options and the peer's, and its hooks by name", function()
    local http_peer = require "jrpc.http_peer"
    assert.matches("options_spec.lua:%d+: jrpc.http_peer: unknown option 'on_mesage' %(did you mean 'on_message'%?%)$",
      raised(function() local _ = http_peer.new(nil, { url = "http://127.0.0.1:1/", on_mesage = print }) end))
    assert.matches("options_spec.lua:%d+: jrpc.http_peer: hooks: unknown option 'anwsered' "
      .. "%(did you mean 'answered'%?%)$",
      raised(function() local _ = http_peer.new(nil, { url = "http://127.0.0.1:1/", hooks = { anwsered = print } }) end))
  end)

  it("jrpc.uv.http_client.request, and an option spec of the command line", function()
    local hc = require "jrpc.uv.http_client"
    assert.matches("http_client.request: unknown option 'timout' %(did you mean 'timeout'%?%)$",
      raised(function() local _ = hc.request(nil, { url = "http://h/", timout = 1 }) end))
    local args = require "jrpc.cli.args"
    assert.matches("options_spec.lua:%d+: jrpc.cli.args: option %-%-x: unknown option 'vaule' %(did you mean 'value'%?%)$",
      raised(function() local _ = args.parse({}, 1, { { "--x", vaule = "X" } }) end))
  end)
end)
