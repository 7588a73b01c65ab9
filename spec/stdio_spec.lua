-- jrpc.stdio: a blocking stdio server, run as a child process.
local jrpc = require "jrpc"

-- The server under test: a handler that asks the client something (the
-- answer comes in on stdin), an echo, and a notification that logs.
local SERVER = [[
local framing = ...
local jrpc = require "jrpc"
jrpc.stdio.serve(jrpc.stdio.peer{
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
})
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
      assert.equal("ask: jrpc error closed: end of input\nserved\n", stderr)
    end)

    it("keeps logs off stdout and survives junk", function()
      local status, stdout, stderr = serve(interpreter, "ndjson",
        'junk\n{"jsonrpc":"2.0","method":"nope","id":1}\n\n{"jsonrpc":"2.0","result":1,"id":77}\n')
      assert.equal(0, status, stderr)
      assert.equal('{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"},"id":null}\n'
        .. '{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found"},"id":1}\n', stdout)
      assert.truthy(stderr:find("jrpc: invalid message: -32700", 1, true))
      -- a late reply is routine: counted, not written
      assert.falsy(stderr:find("request id 77", 1, true))
    end)
  end)
end

describe("jrpc.stdio.serve", function()
  it("reads from any file handle and finishes the peer at its end", function()
    local path = os.tmpname()
    write_file(path, '{"jsonrpc":"2.0","method":"echo","params":[1],"id":1}\n')
    local out = {}
    local peer = jrpc.stdio.peer{ send = function(b) out[#out + 1] = b end }
    peer:method("echo", function(p) return p end)
    local input = assert(io.open(path, "rb"))
    jrpc.stdio.serve(peer, input)
    input:close()
    os.remove(path)
    assert.same({ '{"jsonrpc":"2.0","result":[1],"id":1}\n' }, out)
    assert.is_true(peer:stats().closed)
  end)
end)

-- Peak RSS (VmHWM, KiB) of the server, written by a wrapper after it ran.
local PEAK_SERVER = [[
local framing = ...
package.path = './lua/?.lua;./lua/?/init.lua;' .. package.path
local abi = rawget(_G, "jit") and "jit" or "5.4"
package.cpath = (os.getenv(abi == "jit" and "JRPC_CPATH_JIT" or "JRPC_CPATH_5_4")
  or './build/' .. abi .. '/?.so') .. ';' .. package.cpath
local jrpc = require "jrpc"
jrpc.stdio.serve(jrpc.stdio.peer{ framing = framing, on_error = function() end,
  methods = { subtract = function(p) return p[1] - p[2] end } })
local f = io.open("/proc/self/status")
local hwm = f:read("a"):match("VmHWM:%s*(%d+)")
f:close()
io.stderr:write("peak ", hwm, " bounded ", tostring(jrpc.stdio.bounded), "\n")
]]

describe("jrpc.stdio memory", function()
  local peak_path = os.tmpname()
  write_file(peak_path, PEAK_SERVER)
  teardown(function() os.remove(peak_path) end)

  for _, interpreter in ipairs{ "lua5.4", "luajit" } do
    it("a 200 MiB line under " .. interpreter .. " is answered -32600, the next request normally, "
      .. "and memory stays near the 16 MiB limit", function()
      local out, errp = os.tmpname(), os.tmpname()
      local cmd = string.format("{ head -c 209715200 /dev/zero | tr '\\0' x; echo; "
        .. "echo '{\"jsonrpc\":\"2.0\",\"method\":\"subtract\",\"params\":[42,23],\"id\":1}'; } "
        .. "| %s %s ndjson > %s 2> %s; echo $?", interpreter, peak_path, out, errp)
      local p = assert(io.popen(cmd))
      local status = tonumber(p:read("a"))
      p:close()
      local stdout, stderr = slurp(out), slurp(errp)
      os.remove(out); os.remove(errp)
      assert.equal(0, status, stderr)
      assert.equal('{"jsonrpc":"2.0","error":{"code":-32600,"message":"Message too large"},"id":null}\n'
        .. '{"jsonrpc":"2.0","result":19,"id":1}\n', stdout)
      local peak, bounded = stderr:match("^peak (%d+) bounded (%a+)\n$")
      assert.equal("true", bounded, stderr)
      -- about 400 MiB when a line was read whole (RSS means nothing under ASan)
      if os.getenv("JRPC_SANITIZER") == nil then
        assert.is_true(tonumber(peak) < 64 * 1024, "peak RSS " .. peak .. " KiB")
      end
    end)
  end
end)

describe("jrpc.lineread", function()
  local lineread = require "jrpc.lineread"

  local function reader(text)
    local path = os.tmpname()
    write_file(path, text)
    local f = assert(io.open(path, "rb"))
    os.remove(path)
    return f
  end

  it("reads lines with their newline, long ones in pieces of at most max bytes", function()
    local f = reader("ab\n" .. ("x"):rep(10) .. "\nlast")
    assert.equal("ab\n", lineread.read(f, 4))
    assert.equal("xxxx", lineread.read(f, 4))
    assert.equal("xxxx", lineread.read(f, 4))
    assert.equal("xx\n", lineread.read(f, 4))
    assert.equal("last", lineread.read(f, 4))
    assert.is_nil(lineread.read(f, 4))
    f:close()
  end)

  it("keeps NUL bytes and mixes with file:read", function()
    local f = reader("a\0b\nrest\n")
    assert.equal("a\0b\n", lineread.read(f))
    assert.equal("re", f:read(2))
    assert.equal("st\n", lineread.read(f))
    f:close()
  end)

  it("refuses a closed file and a bad max", function()
    local f = reader("x\n")
    assert.has_error(function() lineread.read(f, 0) end)
    f:close()
    assert.has_error(function() lineread.read(f) end)
    assert.has_error(function() lineread.read("not a file") end)
  end)
end)
