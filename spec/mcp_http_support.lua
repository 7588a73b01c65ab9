-- spec/mcp_http_support.lua: curl against jrpc.mcp's Streamable HTTP on
-- 127.0.0.1, for the spec/mcp_http_*_spec.lua files (not a spec itself):
--   local H = dofile("spec/mcp_http_support.lua")(S)   -- S: spec/uv_support.lua
-- The body goes through a file and every header is shell-quoted, so bodies
-- and headers may hold any bytes but NUL (non-ASCII, controls, quotes).
local files = dofile("spec/files.lua")

return function(S)
  local M = {}

  local function quote(s)
    return "'" .. s:gsub("'", "'\\''") .. "'"
  end

  -- Response headers as curl -D wrote them: lower-case names (the last
  -- response's, should curl have seen a 100 Continue first).
  local function parse_head(text)
    local headers = {}
    for line in text:gmatch("[^\r\n]+") do
      if line:match("^HTTP/") then headers = {} end
      local name, value = line:match("^([^:]+):%s*(.-)%s*$")
      if name then headers[name:lower()] = value end
    end
    return headers
  end

  --- `curl` with `method`, `headers` (a list of "Name: value") and `body`
  --- (nil: none) at /mcp of `port`, in the running coroutine; returns the
  --- status (a number), the response headers (lower-case names) and the
  --- body text. `extra` is more curl arguments (e.g. "-m 1").
  function M.request(port, method, headers, body, extra)
    local body_file, head_file, out_file = os.tmpname(), os.tmpname(), os.tmpname()
    local args = { "curl -s -m 5", "-X " .. method, "-D " .. head_file, "-o " .. out_file, "-w '%{http_code}'" }
    for _, h in ipairs(headers or {}) do args[#args + 1] = "-H " .. quote(h) end
    if body then
      files.write(body_file, body)
      args[#args + 1] = "--data-binary @" .. body_file
    end
    args[#args + 1] = extra or ""
    args[#args + 1] = ("http://127.0.0.1:%d/mcp"):format(port)
    local _, status = S.shell_wait(table.concat(args, " "))
    local head, text = files.take(head_file), files.take(out_file)
    os.remove(body_file)
    return tonumber(status), parse_head(head), text
  end

  --- POST `body` with `headers`; as `request`.
  function M.post(port, headers, body, extra)
    return M.request(port, "POST", headers, body, extra)
  end

  --- The headers every 2026-07-28 POST carries, for `method` (and `name`,
  --- its Mcp-Name), followed by `extra` ("Name: value" strings).
  function M.modern_headers(method, name, extra)
    local h = { "Content-Type: application/json", "Accept: application/json, text/event-stream",
      "MCP-Protocol-Version: 2026-07-28", "Mcp-Method: " .. method }
    if name then h[#h + 1] = "Mcp-Name: " .. name end
    for _, x in ipairs(extra or {}) do h[#h + 1] = x end
    return h
  end

  M.META = { ["io.modelcontextprotocol/protocolVersion"] = "2026-07-28",
    ["io.modelcontextprotocol/clientCapabilities"] = {} }

  return M
end
