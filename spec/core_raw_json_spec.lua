-- core.raw_json: JSON text the encoder writes as it is (whitespace outside
-- strings dropped), for values whose key order matters to their author.
local core = require "jrpc.core"

describe("core.raw_json", function()
  it("is written verbatim inside any value, on one line", function()
    local raw = assert(core.raw_json(' {"z" : [1, 2.50, "a b\\" c\\n"],\n\t"a":{}, "m": []}\r\n'))
    assert.are.equal('{"x":{"z":[1,2.50,"a b\\" c\\n"],"a":{},"m":[]}}', core.encode({ x = raw }))
    assert.are.equal('[{"z":[1,2.50,"a b\\" c\\n"],"a":{},"m":[]},1]', core.encode({ raw, 1 }))
  end)

  it("goes out through a codec's writers too", function()
    local codec = core.codec{ framing = "ndjson" }
    local raw = assert(core.raw_json('{"b":1,"a":2}'))
    assert.are.equal('{"jsonrpc":"2.0","result":{"b":1,"a":2},"id":1}\n', codec:result(1, raw))
  end)

  it("refuses text that is not JSON, saying where", function()
    assert.are.same({ nil, "unexpected end of input at byte 6" }, { core.raw_json('{"a":') })
    assert.are.same({ nil, "trailing characters at byte 5" }, { core.raw_json("[1] x") })
    assert.are.same({ nil, "strings holding \\u0000 are not supported" }, { core.raw_json('"a\\u0000"') })
  end)

  it("raises for misuse", function()
    assert.has_error(function() core.raw_json({}) end)
    assert.has_error(function() core.raw_json("1", 0) end, "bad argument #2 to 'raw_json' (max_depth must be from 1 to 1000)")
  end)

  it("leaves other userdata unencodable", function()
    assert.are.same({ nil, "cannot encode a userdata" }, { core.encode(io.stdout) })
  end)
end)
