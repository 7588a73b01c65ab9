--- `--trace`: every message both ways on stderr, as it is on the wire
-- (`-> ` what we send, `<- ` what we read; LSP headers left out).
--
-- The bytes come from the connection's tap (`conn:tap`), so what is shown
-- is what went over the wire, replies the peer writes by itself included
-- (a -32601 to a server's request, a cancel on timeout). They are split
-- into messages by the core's framer (`codec:split`), as the peer reads
-- them; what it skips (a line that is no LSP header, a message over the
-- limit) is shown in parentheses.
local core = require "jrpc.core"

local M = {}

-- A function that takes bytes as they come and shows each message in them.
local function shower(framing, prefix, write)
  local codec = core.codec{ framing = framing }
  local function show(text, detail)
    while text ~= nil do
      write(prefix .. (text or "(" .. detail .. ")"))
      text, detail = codec:split()
    end
  end
  return function(bytes) show(codec:split(bytes)) end
end

--- Show every message written to and read from `conn` (a jrpc.uv or
--- jrpc.socket connection, or a child) through `write(line)`.
---@param conn table
---@param framing "ndjson"|"lsp"
---@param write fun(line: string)
function M.tap(conn, framing, write)
  conn:tap(shower(framing, "-> ", write), shower(framing, "<- ", write))
end

return M
