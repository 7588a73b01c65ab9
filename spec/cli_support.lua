-- spec/cli_support.lua: what the specs of the `jrpc` command share (loaded
-- with dofile(...)(S); not a spec itself): running bin/jrpc as a process
-- under the interpreter running the spec, shell quoting, and waiting for
-- a line a background server writes.
return function(S)
  local M = {}

  M.LUA = S.INTERP
  M.CALL_USAGE = "jrpc call (--stdio CMD | --tcp HOST:PORT | --http URL) [--framing ndjson|lsp]"
    .. ' [--header "K: V"]... [--ca-file PATH] [--insecure] [--notify] [--trace] [--timeout S]'
    .. " METHOD [PARAMS_JSON]\n"

  --- `s` quoted for /bin/sh.
  function M.q(s)
    return "'" .. s:gsub("'", [['\'']]) .. "'"
  end

  --- bin/jrpc with `words` (each quoted): status, stdout, stderr, seconds.
  function M.timed_cli(...)
    local parts = { M.LUA, "bin/jrpc" }
    for _, w in ipairs({ ... }) do parts[#parts + 1] = M.q(w) end
    return S.shell(table.concat(parts, " "))
  end

  --- The same without the time, so that `{ jrpc_cli(...) }` is exactly
  --- { status, stdout, stderr }.
  function M.jrpc_cli(...)
    local status, out, err = M.timed_cli(...)
    return status, out, err
  end

  --- The first capture of `pattern` in the file `log`, waited for (10 s at most).
  function M.wait_for(log, pattern)
    local t0 = S.now()
    while S.since(t0) < 10 do
      local f = io.open(log)
      local capture = f and f:read("*a"):match(pattern)
      if f then f:close() end
      if capture then return capture end
      os.execute("sleep 0.05")
    end
  end

  return M
end
