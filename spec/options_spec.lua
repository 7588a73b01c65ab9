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
