-- spec/redis_support.lua (loaded with dofile; not a spec itself): a real
-- redis-server on 127.0.0.1 and everything servers that keep their tasks
-- in it, for the specs of jrpc.redis, the Redis task store and the events
-- bus. Takes the spec's uv_support (S), whose children it registers.
return function(S)
  local uv = S.uv
  local R = {}

  --- A free TCP port on loopback (bound, read, released).
  function R.free_port()
    local tcp = uv.new_tcp()
    assert(tcp:bind("127.0.0.1", 0))
    local port = tcp:getsockname().port
    tcp:close()
    return port
  end

  --- redis-server on `port` (default a free one), no persistence: its port
  --- once it is ready, and its process.
  function R.start_redis(port)
    assert(os.execute("command -v redis-server > /dev/null"), "redis-server is not installed: run make deps")
    local log = { text = "" }
    port = port or R.free_port()
    -- its log goes to stderr: a child's stdout is the protocol pipe
    local child = assert(S.sh(("exec redis-server --port %d --bind 127.0.0.1 --save '' --appendonly no 1>&2")
      :format(port), { stderr = function(chunk) log.text = log.text .. chunk end }))
    assert(S.wait_until(function() return log.text:find("Ready to accept connections", 1, true) ~= nil end, 10),
      "redis-server did not start: " .. log.text)
    return port, child
  end

  --- An everything server over HTTP with its tasks in the Redis at `port`,
  --- and `extra` arguments: its URL, its process and its stderr so far.
  function R.everything(port, extra)
    local log = { text = "" }
    local args = { "examples/mcp/everything_server.lua", "--http", "127.0.0.1:0",
      "--task-store-redis", "127.0.0.1:" .. port }
    for _, a in ipairs(extra or {}) do args[#args + 1] = a end
    local child = assert(S.spawn{ cmd = S.INTERP, args = args,
      stderr = function(chunk) log.text = log.text .. chunk end })
    local pattern = "listening on (http://127%.0%.0%.1:%d+/mcp)\n"
    assert(S.wait_until(function() return log.text:match(pattern) ~= nil end, 10), "did not start: " .. log.text)
    return log.text:match(pattern), child, log
  end

  return R
end
