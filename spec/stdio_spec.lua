-- jrpc.stdio: a blocking stdio server, run as a child process.
local jrpc = require "jrpc"

-- The server under test: a handler that asks the client something (the
-- answer comes in on stdin), an echo, and a notification that logs.
local SERVER = [[
local framing = ...
local jrpc = require "jrpc"
jrpc.stdio.serve{
  framing = framing,
  methods = {
    ask = function(_, ctx)
      local answer, err = ctx.peer:request("client/name", { "?" })
      if not answer then
        io.stderr:write("ask: ", tostring(err), "\n")
        return jrpc.null
      end
      return "hello " .. answer
    end,
    echo = function(p) return p end,
    note = function(p) io.stderr:write("note ", p[1], "\n") end,
  },
}
io.stderr:write("served\n")
]]

local files = dofile("spec/files.lua")
local slurp, write_file = files.read, files.write

local server_path = os.tmpname()
write_file(server_path, SERVER)
teardown(function() os.remove(server_path) end)

-- The child finds the modules the same way spec/helper.lua does.
local function prologue(interpreter)
  local abi = interpreter == "luajit" and "jit" or "5.4"
  return string.format([[-e "package.path='./lua/?.lua;./lua/?/init.lua;'..package.path; ]]
    .. [[package.cpath='./build/%s/?.so;'..package.cpath"]], abi)
end

-- Run the server under `interpreter` with `input` on stdin.
local function serve(interpreter, framing, input)
  local inp, out, errp = os.tmpname(), os.tmpname(), os.tmpname()
  write_file(inp, input)
  local cmd = string.format("%s %s %s %s < %s > %s 2> %s; echo $?",
    interpreter, prologue(interpreter), server_path, framing, inp, out, errp)
  local p = assert(io.popen(cmd))
  local status = tonumber(p:read("*a"))
  p:close()
  local stdout, stderr = slurp(out), slurp(errp)
  os.remove(inp); os.remove(out); os.remove(errp)
  return status, stdout, stderr
end

local function frame(json, extra_header)
  return "Content-Length: " .. #json .. "\r\n" .. (extra_header or "") .. "\r\n" .. json
end

for _, interpreter in ipairs{ "lua5.4", "luajit" } do
  describe("jrpc.stdio under " .. interpreter, function()
    it("serves ndjson, asks the client through stdin, and exits 0 at EOF", function()
      local status, stdout, stderr = serve(interpreter, "ndjson", table.concat{
        '{"jsonrpc":"2.0","method":"ask","id":"q"}\n',
        '{"jsonrpc":"2.0","method":"note","params":["hi"]}\n',
        '{"jsonrpc":"2.0","result":"lua","id":1}\n',
        '{"jsonrpc":"2.0","method":"echo","params":["é"],"id":2}',  -- no final newline
      })
      assert.equal(0, status, stderr)
      assert.equal('{"jsonrpc":"2.0","method":"client/name","params":["?"],"id":1}\n'
        .. '{"jsonrpc":"2.0","result":"hello lua","id":"q"}\n'
        .. '{"jsonrpc":"2.0","result":["é"],"id":2}\n', stdout)
      assert.equal("note hi\nserved\n", stderr)
    end)

    it("serves LSP framing, reading bodies by length", function()
      local status, stdout, stderr = serve(interpreter, "lsp", table.concat{
        frame('{"jsonrpc":"2.0","method":"ask","id":1}',
          "Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n"),
        frame('{"jsonrpc":"2.0","result":"lsp\\nclient","id":1}'),
        frame('{"jsonrpc":"2.0","method":"echo","params":{"a":"\\r\\n"},"id":2}'),
      })
      assert.equal(0, status, stderr)
      assert.equal(frame('{"jsonrpc":"2.0","method":"client/name","params":["?"],"id":1}')
        .. frame('{"jsonrpc":"2.0","result":"hello lsp\\nclient","id":1}')
        .. frame('{"jsonrpc":"2.0","result":{"a":"\\r\\n"},"id":2}'), stdout)
      assert.equal("served\n", stderr)
    end)

    it("at EOF settles a call back still waiting with closed, and its handler still answers", function()
      local status, stdout, stderr = serve(interpreter, "ndjson",
        '{"jsonrpc":"2.0","method":"ask","id":"q"}\n')
      assert.equal(0, status, stderr)
      assert.equal('{"jsonrpc":"2.0","method":"client/name","params":["?"],"id":1}\n'
        .. '{"jsonrpc":"2.0","result":null,"id":"q"}\n', stdout)
      assert.equal("ask: jrpc error closed: connection closed\nserved\n", stderr)
    end)

    it("keeps logs off stdout and survives junk", function()
      local status, stdout, stderr = serve(interpreter, "ndjson",
        'junk\n{"jsonrpc":"2.0","method":"nope","id":1}\n\n{"jsonrpc":"2.0","result":1,"id":77}\n')
      assert.equal(0, status, stderr)
      assert.equal('{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"},"id":null}\n'
        .. '{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found"},"id":1}\n', stdout)
      assert.truthy(stderr:find("jrpc: invalid message: -32700", 1, true))
      assert.truthy(stderr:find("jrpc: response to unknown or settled request id 77 dropped", 1, true))
    end)
  end)
end

describe("jrpc.stdio.run", function()
  it("reads from any file handle and finishes the peer at its end", function()
    local path = os.tmpname()
    write_file(path, '{"jsonrpc":"2.0","method":"echo","params":[1],"id":1}\n')
    local out = {}
    local peer = jrpc.stdio.peer{ send = function(b) out[#out + 1] = b end }
    peer:method("echo", function(p) return p end)
    local input = assert(io.open(path, "rb"))
    jrpc.stdio.run(peer, input)
    input:close()
    os.remove(path)
    assert.same({ '{"jsonrpc":"2.0","result":[1],"id":1}\n' }, out)
    assert.is_true(peer:stats().closed)
  end)
end)
