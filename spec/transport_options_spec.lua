-- Every options table of the transports is checked: a misspelt option is an
-- error that names it (and the closest known name), reported at the caller,
-- instead of a setting silently ignored. Each entry takes its own names and
-- the peer's (passing only the peer's on to it).
local jrpc = require "jrpc"
local S = dofile("spec/uv_support.lua")
local loop = S.loop

local THIS = "spec/transport_options_spec.lua"

-- `fn()` raises exactly `msg`, at a line of this file.
local function raises(msg, fn)
  local ok, err = pcall(fn)
  assert.is_false(ok)
  local where, text = tostring(err):match("^(.-):%d+: (.*)$")
  assert.are.same({ THIS, msg }, { where, text })
end

describe("jrpc.uv options", function()
  it("jrpc.uv.new", function()
    raises("jrpc.uv.new: unknown option 'catch_sigpip' (did you mean 'catch_sigpipe'?)", function()
      jrpc.uv.new(S.uv, { catch_sigpip = true })
    end)
    raises("jrpc.uv.new: unknown option 'idle_gc'", function() jrpc.uv.new(S.uv, { idle_gc = true }) end)
  end)

  it("loop:run and loop:serve_forever", function()
    raises("run: unknown option 'busy_pol' (did you mean 'busy_poll'?)", function()
      loop:run(function() end, { busy_pol = 100 })
    end)
    raises("serve_forever: unknown option 'idle_cg' (did you mean 'idle_gc'?)", function()
      loop:serve_forever{ idle_cg = true }
    end)
  end)

  it("loop:stdio", function()
    raises("stdio: unknown option 'max_write_queu' (did you mean 'max_write_queue'?)", function()
      loop:stdio{ max_write_queu = 1 }
    end)
  end)

  it("loop:spawn", function()
    raises("spawn: unknown option 'timout' (did you mean 'timeout'?)", function()
      loop:spawn{ cmd = "true", timout = 1 }
    end)
    raises("spawn: unknown option 'send' (did you mean 'env'?)", function() loop:spawn{ cmd = "true", send = print } end)
  end)

  it("loop:connect and loop:listen", function()
    raises("connect: unknown option 'on_conect' (did you mean 'on_connect'?)", function()
      loop:connect{ port = 1, on_conect = function() end }
    end)
    raises("listen: unknown option 'on_per' (did you mean 'on_peer'?)", function()
      loop:listen{ port = 0, on_per = function() end }
    end)
    raises("listen: unknown option 'pause_readng_at' (did you mean 'pause_reading_at'?)", function()
      loop:listen{ path = "/nonexistent/x.sock", pause_readng_at = 1 }
    end)
  end)

  it("the HTTP server", function()
    raises("http.listen: unknown option 'max_conections' (did you mean 'max_connections'?)", function()
      require("jrpc.uv.http").listen(loop, { port = 0, handler = print, max_conections = 1 })
    end)
  end)
end)

local has_socket, socket = pcall(require, "socket")

describe("jrpc.socket options", function()
  if not has_socket then
    it("needs LuaSocket", function() pending("no LuaSocket") end)
    return
  end
  local sloop = require("jrpc.socket").new(socket)

  it("jrpc.socket.new", function()
    raises("jrpc.socket.new: unknown option 'on_eror' (did you mean 'on_error'?)", function()
      require("jrpc.socket").new(socket, { on_eror = print })
    end)
  end)

  it("loop:connect and loop:listen", function()
    raises("connect: unknown option 'conect_timeout' (did you mean 'connect_timeout'?)", function()
      sloop:connect{ port = 1, conect_timeout = 1 }
    end)
    -- the backlog pause is jrpc.uv's
    raises("connect: unknown option 'pause_reading_at'", function()
      sloop:connect{ port = 1, pause_reading_at = 1 }
    end)
    raises("listen: unknown option 'backlg' (did you mean 'backlog'?)", function()
      sloop:listen{ port = 0, backlg = 1 }
    end)
  end)
end)

describe("jrpc.stdio options", function()
  it("jrpc.stdio.peer and jrpc.stdio.serve", function()
    raises("jrpc.stdio.peer: unknown option 'framng' (did you mean 'framing'?)", function()
      jrpc.stdio.peer{ framng = "lsp" }
    end)
    raises("jrpc.stdio.peer: unknown option 'methds' (did you mean 'methods'?)", function()
      jrpc.stdio.peer{ methds = {} }
    end)
    raises("jrpc.stdio.serve: expected a peer (make one with jrpc.stdio.peer{...}), got table", function()
      jrpc.stdio.serve{ methods = {} }
    end)
  end)
end)
