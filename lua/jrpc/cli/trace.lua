--- `--trace`: every message both ways on stderr, as it is on the wire
-- (`-> ` what we send, `<- ` what we read; LSP headers left out).
--
-- The bytes are taken where a jrpc.uv connection writes and reads them,
-- so what is shown is what went over the wire, replies the peer writes by
-- itself included (a -32601 to a server's request, a cancel on timeout).
-- jrpc.uv has no public hook for this: the tap overrides the connection's
-- `_send` and `_on_read` on the instance, the one place that knows it.
local M = {}

-- Newline framing: one message per line; CR before LF and blank lines are
-- framing, not message.
local function ndjson_splitter(emit)
  local buf = ""
  return function(bytes)
    buf = buf .. bytes
    while true do
      local nl = buf:find("\n", 1, true)
      if nl == nil then return end
      local line = buf:sub(1, nl - 1):gsub("\r$", "")
      buf = buf:sub(nl + 1)
      if line:find("%S") then emit(line) end
    end
  end
end

-- The Content-Length of a header block, or nil when it has none.
local function content_length(headers)
  for line in (headers .. "\r\n"):gmatch("(.-)\r\n") do
    local n = line:lower():match("^content%-length:%s*(%d+)%s*$")
    if n then return tonumber(n) end
  end
end

-- Content-Length framing: a header block, a blank line, then the body.
-- A header block without a length is shown as it is (it is not a message).
local function lsp_splitter(emit)
  local buf, want = "", nil
  return function(bytes)
    buf = buf .. bytes
    while true do
      if want == nil then
        local stop = buf:find("\r\n\r\n", 1, true)
        if stop == nil then return end
        local headers = buf:sub(1, stop - 1)
        buf = buf:sub(stop + 4)
        want = content_length(headers)
        if want == nil then emit(headers) end
      elseif #buf >= want then
        emit(buf:sub(1, want))
        buf, want = buf:sub(want + 1), nil
      else
        return
      end
    end
  end
end

local function splitter(framing, emit)
  if framing == "lsp" then return lsp_splitter(emit) end
  return ndjson_splitter(emit)
end

--- Show every message written to and read from `conn` (a jrpc.uv
--- connection or child) through `write(line)`.
---@param conn table
---@param framing "ndjson"|"lsp"
---@param write fun(line: string)
function M.tap(conn, framing, write)
  local sent = splitter(framing, function(msg) write("-> " .. msg) end)
  local read = splitter(framing, function(msg) write("<- " .. msg) end)
  local send, on_read = conn._send, conn._on_read
  conn._send = function(self, bytes)
    sent(bytes)
    return send(self, bytes)
  end
  conn._on_read = function(self, err, data)
    if data then read(data) end
    return on_read(self, err, data)
  end
end

return M
