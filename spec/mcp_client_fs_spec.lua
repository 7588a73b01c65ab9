-- jrpc.mcp.client, in a coroutine on a jrpc.uv loop, against the real
-- @modelcontextprotocol/server-filesystem 2026.8.31 (node/, a legacy
-- server) spawned over stdio on a temporary directory made here: the era
-- probe's fallback, its tools, reads, a listing, a write, an edit, a path
-- it refuses, and the roots callback answering its roots/list (after which
-- it serves the roots instead of the directory it was started with).
local S = dofile("spec/uv_support.lua")
local files = dofile("spec/files.lua")
local mcp_client = require "jrpc.mcp.client"

local SERVER = "node/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"
local TOOLS = { "read_file", "read_text_file", "read_media_file", "read_multiple_files", "write_file", "edit_file",
  "create_directory", "list_directory", "list_directory_with_sizes", "directory_tree", "move_file",
  "search_files", "get_file_info", "list_allowed_directories" }
local NOTES = "first line\nsecond line\n"

local function names(items)
  local out = {}
  for i, item in ipairs(items) do out[i] = item.name end
  return out
end

local function text(result) return result.content[1].text end

describe("jrpc.mcp.client against @modelcontextprotocol/server-filesystem 2026.8.31", function()
  local dir
  before_each(function()
    dir = S.tmpdir()
    files.write(dir .. "/notes.txt", NOTES)
    assert(os.execute("mkdir '" .. dir .. "/sub'"))
  end)
  after_each(function()
    S.cleanup()
    S.rmdir(dir)
  end)

  local function connect(extra)
    local opts = { cmd = "node", args = { SERVER, dir }, stderr = "pipe" }
    for k, v in pairs(extra or {}) do opts[k] = v end
    return assert(mcp_client.connect(S.loop, opts))
  end

  it("falls back to initialize; lists, reads, lists a directory, writes, edits, refuses a path outside", function()
    assert.truthy(io.open(SERVER), "run: make node-deps")
    S.run(function()
      local client = connect()
      local verdict = assert(client:era())
      assert.same({ "legacy", "2025-11-25", "secure-filesystem-server" },
        { verdict.era, verdict.version, verdict.server_info.name })
      assert.same(TOOLS, names(assert(client:list_tools())))
      local read = assert(client:call_tool("read_text_file", { path = dir .. "/notes.txt" }))
      assert.same({ { { type = "text", text = NOTES } }, { content = NOTES } },
        { read.content, read.structuredContent })
      assert.same(NOTES, text(assert(client:call_tool("read_file", { path = dir .. "/notes.txt" }))))
      assert.same("[FILE] notes.txt\n[DIR] sub", text(assert(client:call_tool("list_directory", { path = dir }))))
      assert.same("Successfully wrote to " .. dir .. "/sub/new.txt",
        text(assert(client:call_tool("write_file", { path = dir .. "/sub/new.txt", content = "one\ntwo\n" }))))
      assert.same("one\ntwo\n", files.read(dir .. "/sub/new.txt"))
      local edit = assert(client:call_tool("edit_file", { path = dir .. "/sub/new.txt",
        edits = { { oldText = "two", newText = "three" } } }))
      assert.truthy(text(edit):find("-two\n+three", 1, true), text(edit))
      assert.same("one\nthree\n", files.read(dir .. "/sub/new.txt"))
      local refused = assert(client:call_tool("read_text_file", { path = "/etc/passwd" }))
      assert.same({ true, "Access denied - path outside allowed directories: /etc/passwd not in " .. dir },
        { refused.isError, text(refused) })
      -- a tool it does not have: its own isError result, not an error reply
      local unknown = assert(client:call_tool("nope", {}))
      assert.same({ true, "MCP error -32602: Tool nope not found" }, { unknown.isError, text(unknown) })
      -- it has no prompts: Method not found
      local _, err = client:list_prompts()
      assert.same({ -32601, "Method not found" }, { err.code, err.message })
      client:close()
      assert.same("Secure MCP Filesystem Server running on stdio\n"
        .. "Client does not support MCP Roots, using allowed directories set from server args: [ '" .. dir .. "' ]\n",
        client:stderr_text())
    end, 30)
  end)

  it("answers its roots/list with the roots callback; it then serves the roots", function()
    S.run(function()
      local other = S.tmpdir()
      files.write(other .. "/root.txt", "in the root")
      local asked = 0
      local client = connect{ roots = function()
        asked = asked + 1
        return { { uri = "file://" .. other, name = "other" } }
      end }
      local function allowed()
        return text(assert(client:call_tool("list_allowed_directories", {})))
      end
      -- it asks after notifications/initialized, on its own time
      assert.is_true(S.wait_until(function() return allowed() == "Allowed directories:\n" .. other end, 10))
      assert.same(1, asked)
      assert.same("in the root", text(assert(client:call_tool("read_text_file", { path = other .. "/root.txt" }))))
      assert.is_true(assert(client:call_tool("read_text_file", { path = dir .. "/notes.txt" })).isError)
      client:close()
      S.rmdir(other)
      assert.same("Secure MCP Filesystem Server running on stdio\nUpdated allowed directories from MCP roots: "
        .. "1 valid directories\n", client:stderr_text())
    end, 30)
  end)
end)
