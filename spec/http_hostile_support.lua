-- spec/http_hostile_support.lua: raw TCP clients against a real
-- examples/mcp/everything_server.lua --http process, for
-- spec/http_hostile_spec.lua (loaded with dofile(...)(S); not a spec itself):
--   local H = dofile("spec/http_hostile_support.lua")(S)   -- S: spec/uv_support.lua
-- Loopback only. Every wait is bounded in time (S.wait_until); the
-- responses are parsed as they arrive (no quadratic re-scan of a long
-- pipelined answer), and every byte received is kept for exact assertions.
return function(S)
  local uv = S.uv
  local handles = require "jrpc.uv.handles"

  local M = {}

  M.PROTOCOL = "2026-07-28"
  M.META = '"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
    .. '"io.modelcontextprotocol/clientCapabilities":{}}'

  -- {====================================================================
  -- The server process
  -- =====================================================================

  --- Start everything_server.lua --http 127.0.0.1:0 under the interpreter
  --- running the specs (S.INTERP), in the running coroutine, with the
  --- jrpc.uv.http limits in `limits` (`{name = value}`: `--limit` options);
  --- returns {port, pid, child, log} once it printed its listening line.
  function M.start_server(limits)
    local log = { text = "" }
    local args = { "examples/mcp/everything_server.lua", "--http", "127.0.0.1:0" }
    for name, value in pairs(limits or {}) do
      args[#args + 1] = "--limit"
      args[#args + 1] = name .. "=" .. value
    end
    local child = assert(S.spawn{ cmd = S.INTERP, args = args,
      stderr = function(chunk) log.text = log.text .. chunk end })
    assert(S.wait_until(function() return log.text:find("\n", 1, true) ~= nil end, 10),
      "everything_server did not start: " .. log.text)
    local port = log.text:match("^listening on http://127%.0%.0%.1:(%d+)/mcp\n")
    assert(port, "unexpected first line: " .. log.text)
    return { port = tonumber(port), pid = child.pid, child = child, log = log }
  end

  --- The resident set size of process `pid`, in KiB (Linux /proc).
  function M.rss_kib(pid)
    local f = assert(io.open("/proc/" .. pid .. "/status"))
    local text = f:read("*a")
    f:close()
    local kib = assert(text:match("VmRSS:%s*(%d+) kB"), "no VmRSS")
    return tonumber(kib)
  end

  --- Have the server collect its garbage and give memory back, so that its
  --- RSS is what it keeps alive: a request over large_body_bytes (64 KiB)
  --- arms jrpc.uv.http's settle timer (a full GC and core.trim_memory() 1 s
  --- after the last large request); wait for it. In the running coroutine.
  function M.settle(port)
    local c = M.connect(port, { raw = false })
    c:send(M.post(port, "ping", ("x"):rep(70000)))   -- not JSON: a quick 400
    assert(c:wait_responses(1, 5), "no answer to the large request")
    c:close()
    S.loop:sleep(1.5)
  end

  --- Is process `pid` alive (not gone, not a zombie)?
  function M.alive(pid)
    local f = io.open("/proc/" .. pid .. "/status")
    if not f then return false end
    local text = f:read("*a")
    f:close()
    return text:match("State:%s*Z") == nil
  end

  -- }====================================================================

  -- {====================================================================
  -- Requests
  -- =====================================================================

  --- The JSON-RPC ping with id `id`.
  function M.ping_body(id)
    return ('{"jsonrpc":"2.0","id":%d,"method":"ping"}'):format(id)
  end

  --- A valid MCP POST of `body` for `method` to /mcp on `port`, with the
  --- header lines `extra` (a string of "Name: value\r\n" lines) before
  --- Content-Length.
  function M.post(port, method, body, extra)
    return ("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
      .. "Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: %s\r\nMcp-Method: %s\r\n"
      .. "%sContent-Length: %d\r\n\r\n%s"):format(port, M.PROTOCOL, method, extra or "", #body, body)
  end

  --- A valid ping POST with id `id` (and `extra` header lines).
  function M.ping(port, id, extra)
    return M.post(port, "ping", M.ping_body(id), extra)
  end

  --- The body of a `subscriptions/listen` for tool list changes, id `id`.
  function M.listen_body(id)
    return ('{"jsonrpc":"2.0","id":%d,"method":"subscriptions/listen","params":{%s,'
      .. '"notifications":{"toolsListChanged":true}}}'):format(id, M.META)
  end

  --- A `tools/call` of test_echo with `message`, id `id`, as a POST.
  function M.echo(port, id, message)
    local body = ('{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"test_echo",'
      .. '"arguments":{"message":"%s"},%s}}'):format(id, message, M.META)
    return M.post(port, "tools/call", body, "Mcp-Name: test_echo\r\n")
  end

  -- }====================================================================

  -- {====================================================================
  -- Expected responses (the exact bytes: core.http_response sorts the
  -- header names case-insensitively and puts Content-Length last)
  -- =====================================================================

  local function head(status, headers, length)
    local names = {}
    for k in pairs(headers) do names[#names + 1] = k end
    table.sort(names)
    local out = { "HTTP/1.1 " .. status .. "\r\n" }
    for _, k in ipairs(names) do out[#out + 1] = k .. ": " .. headers[k] .. "\r\n" end
    if length then out[#out + 1] = "Content-Length: " .. length .. "\r\n" end
    out[#out + 1] = "\r\n"
    return table.concat(out)
  end

  --- A text/plain response: `status` is "400 Bad Request" and the like,
  --- `close` adds `connection: close`, `extra` more (lower-case) headers.
  function M.plain(status, text, close, extra)
    local h = { ["content-type"] = "text/plain" }
    if close then h.connection = "close" end
    for k, v in pairs(extra or {}) do h[k] = v end
    return head(status, h, #text) .. text
  end

  --- An application/json response.
  function M.json(status, body, close)
    local h = { ["content-type"] = "application/json" }
    if close then h.connection = "close" end
    return head(status, h, #body) .. body
  end

  --- The head alone of an application/json response with a body of `length` bytes.
  function M.json_head(status, length, close)
    local h = { ["content-type"] = "application/json" }
    if close then h.connection = "close" end
    return head(status, h, length)
  end

  --- The answer to ping `id`.
  function M.pong(id, close)
    return M.json("200 OK", ('{"jsonrpc":"2.0","result":{},"id":%d}'):format(id), close)
  end

  --- The head of an SSE stream as mcp/http.lua opens it.
  M.SSE_HEAD = "HTTP/1.1 200 OK\r\ncache-control: no-cache\r\ncontent-type: text/event-stream\r\n"
    .. "x-accel-buffering: no\r\nTransfer-Encoding: chunked\r\n\r\n"

  -- }====================================================================

  -- {====================================================================
  -- Raw clients
  -- =====================================================================

  local Conn = {}
  Conn.__index = Conn
  local open = {}

  -- Parse what `c.pending` holds from `c.pos`: complete heads, bodies of a
  -- known length, chunked bodies chunk by chunk. Responses go to
  -- `c.responses` as {status = n, line = "...", headers = {}, body = "",
  -- complete = bool}.
  local function parse(c)
    local buf, pos = c.pending, 1
    for _ = 1, 100000 do
      local r = c.current
      if r == nil then
        local e = buf:find("\r\n\r\n", pos, true)
        if not e then break end
        local text = buf:sub(pos, e - 1)
        local line = text:match("^[^\r\n]*")
        r = { line = line, status = tonumber(line:match("^HTTP/1%.1 (%d%d%d) ")), headers = {}, body = "",
          complete = false }
        for name, value in text:gmatch("\r\n([^:\r\n]+):%s*([^\r\n]*)") do r.headers[name:lower()] = value end
        pos = e + 4
        c.responses[#c.responses + 1] = r
        if r.headers["transfer-encoding"] == "chunked" then
          r.chunked = true
          c.current = r
        else
          r.length = tonumber(r.headers["content-length"] or "0")
          c.current = r
        end
      elseif r.chunked then
        local e = buf:find("\r\n", pos, true)
        if not e then break end
        local size = tonumber(buf:sub(pos, e - 1), 16)
        if size == nil then error("bad chunk size line: " .. buf:sub(pos, e - 1)) end
        if #buf < e + 2 + size + 1 then break end
        r.body = r.body .. buf:sub(e + 2, e + 1 + size)
        assert(buf:sub(e + 2 + size, e + 3 + size) == "\r\n", "chunk not ended by CRLF")
        pos = e + 4 + size
        if size == 0 then r.complete, c.current = true, nil end
      else
        if #buf - pos + 1 < r.length then break end
        r.body = buf:sub(pos, pos + r.length - 1)
        pos = pos + r.length
        r.complete, c.current = true, nil
      end
    end
    c.pending = buf:sub(pos)
  end

  --- Connect to 127.0.0.1:`port` (in the running coroutine, at most 5 s).
  --- `opts.raw == false` keeps no copy of the bytes (long pipelines);
  --- `opts.parse == false` does not parse them (a client that never reads
  --- still reads from the kernel otherwise: use `opts.paused`).
  --- `opts.paused`: do not read at all until `c:resume()`.
  function M.connect(port, opts)
    opts = opts or {}
    local c = setmetatable({ tcp = uv.new_tcp(), raw = {}, keep_raw = opts.raw ~= false,
      parse = opts.parse ~= false, pending = "", responses = {}, nbytes = 0, closed = false,
      written = 0, write_errors = 0 }, Conn)
    open[#open + 1] = c
    local done
    assert(c.tcp:connect("127.0.0.1", port, function(err) done = err or true end))
    assert(S.wait_until(function() return done ~= nil end, 5), "connect timed out")
    assert(done == true, "connect failed: " .. tostring(done))
    if not opts.paused then c:resume() end
    return c
  end

  --- Start (or restart) reading.
  function Conn:resume()
    self.tcp:read_start(function(err, data)
      if err or data == nil then
        self.closed, self.read_error, self.closed_at = true, err, S.now()
        if not self.tcp:is_closing() then self.tcp:read_stop() end
        return
      end
      self.nbytes = self.nbytes + #data
      if self.keep_raw then self.raw[#self.raw + 1] = data end
      if self.parse then
        self.pending = self.pending .. data
        parse(self)
      end
    end)
  end

  --- Stop reading (what the server sends then waits in the kernel).
  function Conn:pause()
    self.tcp:read_stop()
  end

  --- Write `bytes`; `self.written` counts the writes that completed.
  function Conn:send(bytes)
    if self.tcp:is_closing() then return false end
    local ok = self.tcp:write(bytes, function(err)
      if err then self.write_errors = self.write_errors + 1 else self.written = self.written + 1 end
    end)
    if not ok then self.write_errors = self.write_errors + 1 end
    return ok and true or false
  end

  --- Every byte received so far.
  function Conn:text()
    if #self.raw > 1 then self.raw = { table.concat(self.raw) } end
    return self.raw[1] or ""
  end

  --- Wait (at most `limit` seconds, default 3) until the server closed
  --- the connection; returns whether it did.
  function Conn:wait_closed(limit)
    return S.wait_until(function() return self.closed end, limit or 3)
  end

  --- Wait (at most `limit` seconds, default 3) until `n` complete
  --- responses came; returns whether they did.
  function Conn:wait_responses(n, limit)
    return S.wait_until(function()
      local r = self.responses[n]
      return r ~= nil and r.complete
    end, limit or 3)
  end

  --- Wait until `n` responses began (their heads came).
  function Conn:wait_heads(n, limit)
    return S.wait_until(function() return self.responses[n] ~= nil end, limit or 3)
  end

  --- Wait (at most `limit` seconds) until the body of response `i` holds `pattern` (plain).
  function Conn:wait_body(i, pattern, limit)
    return S.wait_until(function()
      local r = self.responses[i]
      return r ~= nil and r.body:find(pattern, 1, true) ~= nil
    end, limit or 3)
  end

  --- Half-close: send a FIN (no more requests), keep reading.
  function Conn:shutdown()
    self.tcp:shutdown()
  end

  --- Close the socket (a client that hangs up).
  function Conn:close()
    handles.close(uv, self.tcp)
  end

  --- Close every client a test left open.
  function M.close_all()
    for _, c in ipairs(open) do c:close() end
    open = {}
  end

  --- Send `bytes` on a fresh connection and wait until the server closed it
  --- (at most `limit` seconds, default 3); returns everything received and
  --- whether the server closed it.
  function M.exchange_closed(port, bytes, limit)
    local c = M.connect(port)
    c:send(bytes)
    local closed = c:wait_closed(limit)
    return c:text(), closed, c
  end

  --- Send `bytes` on a fresh connection, wait for `n` complete responses
  --- (default 1), then linger `linger` seconds (default 0.1) for anything
  --- more; returns the bytes received, whether the server closed, the client.
  function M.exchange(port, bytes, n, linger)
    local c = M.connect(port)
    c:send(bytes)
    c:wait_responses(n or 1, 3)
    if (linger or 0.1) > 0 then S.loop:sleep(linger or 0.1) end
    return c:text(), c.closed, c
  end

  -- }====================================================================

  return M
end
