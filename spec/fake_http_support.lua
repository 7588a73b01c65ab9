-- POSTs to an MCP Streamable HTTP server running in process on
-- fuzz/fake_luv.lua (no sockets), for the specs that drive one that way.
local M = {}

-- The bytes of a POST to /mcp carrying `body` (JSON text), with the
-- headers every POST needs and `headers` ({name = value}).
function M.request_bytes(body, headers)
  local lines = { "POST /mcp HTTP/1.1", "Host: 127.0.0.1:8080", "Content-Type: application/json",
    "Accept: application/json, text/event-stream", "Content-Length: " .. #body }
  for k, v in pairs(headers or {}) do lines[#lines + 1] = k .. ": " .. v end
  return table.concat(lines, "\r\n") .. "\r\n\r\n" .. body
end

--- One POST of `body` on a new fake connection to `http` (a server made on
--- the fake `uv`); returns the connection (its `out` grows while a stream
--- stays open).
function M.post(uv, http, body, headers)
  local c = uv.connect(http.handle)
  c:send(M.request_bytes(body, headers))
  return c
end

function M.status_of(out) return tonumber(out:match("^HTTP/1%.1 (%d+)")) end
function M.body_of(out) return out:match("\r\n\r\n(.*)$") end

return M
