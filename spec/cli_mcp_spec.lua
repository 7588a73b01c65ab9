-- `jrpc mcp` (bin/jrpc as a real process, run by the interpreter running
-- this spec: lua5.4 or luajit) against real MCP servers over stdio:
--   * examples/mcp/everything_server.lua (ours, both eras: pinned and probed);
--   * @modelcontextprotocol/server-everything 2026.8.31 (npm, legacy);
--   * @modelcontextprotocol/server-filesystem 2026.8.31 (npm, legacy) on a
--     temporary directory made here;
-- and commands that exit at once, never answer, or are given wrong.
-- Every check is on the exact stdout, stderr and exit status.
if dofile("spec/once.lua")(pending, "the CLI's words and exit codes, run as child processes; its C paths are the other specs'", { "asan" }) then return end
local jrpc = require "jrpc"
local S = dofile("spec/uv_support.lua")
local files = dofile("spec/files.lua")

local LUA = S.INTERP
local EVERYTHING = LUA .. " examples/mcp/everything_server.lua"
local NPM_EVERYTHING = "node/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
local NPM_FILESYSTEM = "node/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"
local USAGE = 'jrpc mcp (--stdio CMD | --http URL) [--header "K: V"]... [--ca-file PATH] [--insecure]'
  .. " [--token TOKEN | --no-auth | [--client-id ID] [--redirect-port N] [--token-store PATH]]"
  .. " [--era modern|legacy] [--trace] [--timeout S]"
  .. " (tools | call TOOL [ARGS_JSON] | resources | read URI | prompts | prompt NAME [ARGS_JSON])\n"

local function q(s)
  return "'" .. s:gsub("'", [['\'']]) .. "'"
end

-- `bin/jrpc mcp` with `words` (each quoted): { status, stdout, stderr }.
local function mcp(...)
  local parts = { LUA, "bin/jrpc", "mcp" }
  for _, w in ipairs({ ... }) do parts[#parts + 1] = q(w) end
  local status, out, err = S.shell(table.concat(parts, " "))
  return { status, out, err }
end

local function lines(list)
  return table.concat(list, "\n") .. "\n"
end

-- The messages of a --trace: { "->" or "<-", decoded message } each (the
-- keys of a message are in no fixed order: it is compared decoded).
local function traced(stderr)
  local out = {}
  for line in stderr:gmatch("[^\n]+") do
    local dir, text = line:match("^([-<][->]) (.*)$")
    if dir then out[#out + 1] = { dir, jrpc.decode(text) } end
  end
  return out
end

-- {======================================================================
-- examples/mcp/everything_server.lua
-- =======================================================================

local TOOLS = lines{
  "test_simple_text\tReturns a simple text response",
  "test_image_content\tReturns an image",
  "test_audio_content\tReturns audio",
  "test_embedded_resource\tReturns an embedded resource",
  "test_multiple_content_types\tReturns text, an image and a resource",
  "test_tool_with_logging\tLogs three messages while it runs",
  "test_logging_tool\tLogs only when the request asks for a log level",
  "test_tool_with_progress\tReports progress 0, 50, 100 of 100",
  "test_error_handling\tAlways fails (an isError result)",
  "test_missing_capability\tNeeds the client's sampling capability",
  "test_streaming_elicitation\tWould ask the user; answers without a request on its stream",
  "test_echo\tEchoes its message (structured content too)",
  "test_custom_headers\tNames its region (mirrored in the Mcp-Param-Region header)",
  "json_schema_2020_12_tool\tTakes a contact: a phone or an email, as contactMethod says",
  "test_sampling\tAsks the client's model (sampling/createMessage)",
  "test_elicitation\tAsks the user (elicitation/create)",
  "test_elicitation_sep1034_defaults\tAsks with defaults for every primitive type",
  "test_elicitation_sep1330_enums\tAsks with the five enum schema forms",
  "test_input_required_result_elicitation\tAsks the user's name (MRTR)",
  "test_input_required_result_sampling\tAsks the client's model (MRTR)",
  "test_input_required_result_list_roots\tAsks the client's roots (MRTR)",
  "test_input_required_result_request_state\tAsks to confirm, keeping state (MRTR)",
  "test_input_required_result_multiple_inputs\tAsks three things at once (MRTR)",
  "test_input_required_result_multi_round\tTwo rounds of questions (MRTR)",
  "test_input_required_result_tampered_state\tKeeps a sealed state (MRTR)",
  "test_input_required_result_capabilities\tAsks only what the client can answer (MRTR)",
  "greet\tGreets by name (never a task)",
  "slow_compute\tWorks `seconds` seconds, then answers (a task when the client can)",
  "failing_job\tFails after a second (an isError result; always a task)",
  "protocol_error_job\tFails with a protocol error (the task fails)",
  "confirm_delete\tAsks to confirm, then deletes (pretends to)",
  "multi_input\tAsks two things at once, then answers",
  "test_tool_with_task\tAsks the user's name (MRTR), then greets in a task",
  "test_trigger_tool_change\tChanges the tool list (tools/list_changed)",
  "test_trigger_prompt_change\tChanges the prompt list (prompts/list_changed)",
  "test_trigger_resource_update\tAnnounces test://watched-resource updated (resources/updated)",
}
local PNG_1X1_BASE64 = 96
-- what the server logs on its (inherited) stderr: the error with its line
local function line_of(path, text)
  local n = 0
  for line in io.lines(path) do
    n = n + 1
    if line:find(text, 1, true) then return n end
  end
  error(text .. " not in " .. path)
end
local ERROR_TOOL_STDERR = ('jrpc: tool "test_error_handling" failed: examples/mcp/everything_server.lua:%d: '
  .. "This tool intentionally returns an error for testing\n")
  :format(line_of("examples/mcp/everything_server.lua", "This tool intentionally returns an error for testing"))

for _, era in ipairs{ "modern", "legacy", "probed" } do
  local era_args = era ~= "probed" and { "--era", era } or {}
  local function ev(...)
    local words = { "--stdio", EVERYTHING }
    for _, w in ipairs(era_args) do words[#words + 1] = w end
    for _, w in ipairs({ ... }) do words[#words + 1] = w end
    return mcp((table.unpack or unpack)(words))
  end

  describe("jrpc mcp against everything_server.lua (" .. era .. ")", function()
    it("tools: a line per tool, its name, a tab, its description", function()
      assert.same({ 0, TOOLS, "" }, ev("tools"))
    end)

    it("call: the text content; other content summarized", function()
      assert.same({ 0, "This is a simple text response for testing.\n", "" }, ev("call", "test_simple_text"))
      assert.same({ 0, ("[image image/png, %d bytes base64]\n"):format(PNG_1X1_BASE64), "" },
        ev("call", "test_image_content"))
      assert.same({ 0, "[audio audio/wav, 60 bytes base64]\n", "" }, ev("call", "test_audio_content"))
      assert.same({ 0, "[resource test://embedded-resource]\nThis is an embedded resource content.\n", "" },
        ev("call", "test_embedded_resource"))
      assert.same({ 0, lines{ "Multiple content types test:", "[image image/png, 96 bytes base64]",
        "[resource test://mixed-content-resource]", '{"test":"data","value":123}' }, "" },
        ev("call", "test_multiple_content_types"))
      -- its structuredContent is not printed: its text content is
      assert.same({ 0, "hi\n", "" }, ev("call", "test_echo", '{"message":"hi"}'))
    end)

    it("call: a result with isError prints its text on stdout, then exits 1", function()
      assert.same({ 1, "Tool test_error_handling failed: internal error\n",
        ERROR_TOOL_STDERR .. "jrpc mcp: tool test_error_handling returned an error (isError)\n" },
        ev("call", "test_error_handling"))
    end)

    it("call: an error reply (an unknown tool) is its error object on stderr, exit 1", function()
      assert.same({ 1, "", '{"code":-32602,"message":"Invalid params: unknown tool nope"}\n' }, ev("call", "nope"))
    end)

    it("call: a missing argument is an isError result (2025-11-25 and later), exit 1", function()
      assert.same({ 1, 'Invalid arguments for tool test_echo: missing required property "message"\n',
        "jrpc mcp: tool test_echo returned an error (isError)\n" }, ev("call", "test_echo"))
    end)

    it("resources (then the resource templates), read (text; a blob summarized), and an unknown URI", function()
      assert.same({ 0, lines{ "test://static-text\tStatic Text Resource", "test://static-binary\tStatic Binary Resource",
        "test://watched-resource\tWatched Resource", "test://template/{id}/data\tResource Template" }, "" },
        ev("resources"))
      assert.same({ 0, "This is the content of the static text resource.\n", "" }, ev("read", "test://static-text"))
      assert.same({ 0, "[blob image/png, 96 bytes base64]\n", "" }, ev("read", "test://static-binary"))
      local not_found = era == "legacy"
        and '{"code":-32002,"data":{"uri":"test://nope"},"message":"Resource not found"}\n'
        or '{"code":-32602,"data":{"uri":"test://nope"},"message":"Resource not found"}\n'
      assert.same({ 1, "", not_found }, ev("read", "test://nope"))
    end)

    it("prompts, and prompt with arguments: the messages' text", function()
      assert.same({ 0, lines{ "test_input_required_result_prompt\tA prompt that asks for context (MRTR)",
        "test_simple_prompt\tA simple prompt without arguments", "test_prompt_with_arguments\tA prompt with two arguments",
        "test_prompt_with_embedded_resource\tA prompt with an embedded resource",
        "test_prompt_with_image\tA prompt with an image" }, "" }, ev("prompts"))
      assert.same({ 0, "Prompt with arguments: arg1='a', arg2='b'\n", "" },
        ev("prompt", "test_prompt_with_arguments", '{"arg1":"a","arg2":"b"}'))
      assert.same({ 0, "[image image/png, 96 bytes base64]\nPlease analyze the image above.\n", "" },
        ev("prompt", "test_prompt_with_image"))
      assert.same({ 1, "", '{"code":-32602,"message":"Invalid params: unknown prompt nope"}\n' }, ev("prompt", "nope"))
    end)

    it("--trace: every message both ways on stderr, the answer alone on stdout", function()
      local r = ev("--trace", "call", "test_simple_text")
      assert.same({ 0, "This is a simple text response for testing.\n" }, { r[1], r[2] })
      local t = traced(r[3])
      local want = era == "legacy" and { "-> initialize", "<- 1", "-> notifications/initialized",
        "-> tools/call", "<- 2" } or era == "probed" and { "-> server/discover", "<- 1", "-> tools/call", "<- 2" }
        or { "-> tools/call", "<- 1" }
      local got = {}
      for i, m in ipairs(t) do got[i] = m[1] .. " " .. tostring(m[2].method or m[2].id) end
      assert.same(want, got)
      assert.same("This is a simple text response for testing.", t[#t][2].result.content[1].text)
      -- nothing else on stderr
      assert.same(#t, select(2, r[3]:gsub("\n", "")))
    end)
  end)
end

describe("jrpc mcp: commands that fail", function()
  it("a command that exits at once: exit 3", function()
    assert.same({ 3, "", "jrpc mcp: the connection ended before the reply: process exited with code 0\n" },
      mcp("--stdio", "exit 0", "tools"))
    assert.same({ 3, "", "jrpc mcp: the connection ended before the reply: process exited with code 7\n" },
      mcp("--stdio", "exit 7", "call", "t"))
  end)

  it("a server that never answers: --timeout, exit 1, and how long it really waited", function()
    assert.same({ 1, "", "jrpc mcp: no reply to tools within 0.3 s (--timeout)\n" },
      mcp("--stdio", "cat > /dev/null", "--era", "modern", "--timeout", "0.3", "tools"))
    -- probed: server/discover gets no answer, nor does initialize after it
    -- the whole wait is measured: at least 0.4 s, more on a loaded machine
    local got = mcp("--stdio", "cat > /dev/null", "--timeout", "0.2", "read", "x://y")
    local status, out, err = got[1], got[2], got[3]
    assert.same({ 1, "" }, { status, out })
    local waited = tonumber(err:match("^jrpc mcp: no reply to read within ([%d.]+) s %(server/discover "
      .. "waited up to 0%.2 s, then %-%-timeout 0%.2 s%)\n$"))
    assert.is_true(waited ~= nil and waited >= 0.4 and waited < 3, err)
  end)

  it("--http to a port nobody listens on: exit 3, worded as jrpc call --http words it", function()
    assert.same({ 3, "", "jrpc mcp: cannot connect to http://127.0.0.1:1/mcp: ECONNREFUSED\n" },
      mcp("--http", "http://127.0.0.1:1/mcp", "tools"))
    local status, out, err = S.shell("bin/jrpc call --http http://127.0.0.1:1/mcp tools/list")
    assert.same({ 3, "", "jrpc call: cannot connect to http://127.0.0.1:1/mcp: ECONNREFUSED\n" }, { status, out, err })
  end)
end)

describe("jrpc mcp over Streamable HTTP (everything_server.lua --http)", function()
  local T = dofile("spec/tls_support.lua")
  local url, pid

  setup(function()
    local port
    port, pid = T.start("exec " .. EVERYTHING .. " --http 127.0.0.1:0", "listening on http://127%.0%.0%.1:(%d+)/mcp")
    url = "http://127.0.0.1:" .. port .. "/mcp"
  end)

  teardown(function() T.kill(pid) end)

  for _, era in ipairs{ "modern", "legacy" } do
    it(era .. ": tools and call print what they print over stdio", function()
      local over_stdio = mcp("--stdio", EVERYTHING, "--era", era, "tools")
      assert.are.equal(0, over_stdio[1])
      assert.are.equal("test_simple_text\tReturns a simple text response\n", over_stdio[2]:match("^[^\n]*\n"))
      assert.same(over_stdio, mcp("--http", url, "--era", era, "tools"))
      assert.same({ 0, "This is a simple text response for testing.\n", "" },
        mcp("--http", url, "--era", era, "call", "test_simple_text"))
      assert.same({ 1, "", '{"code":-32602,"message":"Invalid params: unknown tool nope"}\n' },
        mcp("--http", url, "--era", era, "call", "nope"))
    end)

    it(era .. ": --trace shows each POST's body and each message of the answers", function()
      local r = mcp("--http", url, "--era", era, "--trace", "call", "test_simple_text")
      assert.same({ 0, "This is a simple text response for testing.\n" }, { r[1], r[2] })
      local t = traced(r[3])
      local got = {}
      for i, m in ipairs(t) do got[i] = m[1] .. " " .. tostring(m[2].method or m[2].id) end
      assert.same(era == "legacy" and { "-> initialize", "<- 1", "-> notifications/initialized", "-> tools/call",
        "<- 2" } or { "-> tools/call", "<- 1" }, got)
      assert.same("This is a simple text response for testing.", t[#t][2].result.content[1].text)
      assert.same(#t, select(2, r[3]:gsub("\n", "")))  -- nothing else on stderr
    end)
  end
end)

describe("jrpc mcp usage errors: exit 2, the problem and the usage line on stderr", function()
  local X = { "--stdio", "x" }
  local cases = {
    { { "tools" }, "give exactly one of --stdio CMD and --http URL" },
    { { "--stdio", "x", "--http", "http://h/", "tools" }, "give exactly one of --stdio CMD and --http URL" },
    { X, "what to do is missing (tools, call, resources, read, prompts, prompt)" },
    { { "--stdio", "x", "frob" }, 'unknown action "frob" (tools, call, resources, read, prompts, prompt)' },
    { { "--stdio", "x", "tools", "more" }, "unexpected argument more" },
    { { "--stdio", "x", "call" }, "call: TOOL is missing" },
    { { "--stdio", "x", "read" }, "read: URI is missing" },
    { { "--stdio", "x", "prompt" }, "prompt: NAME is missing" },
    { { "--stdio", "x", "call", "t", "{}", "more" }, "unexpected argument more" },
    { { "--stdio", "x", "call", "t", "[1]" }, "ARGS_JSON must be a JSON object" },
    { { "--stdio", "x", "prompt", "p", "42" }, "ARGS_JSON must be a JSON object" },
    { { "--stdio", "x", "call", "t", "{nope" }, "ARGS_JSON is not JSON: " .. select(2, jrpc.decode("{nope")) },
    { { "--stdio", "x", "--era", "new", "tools" }, "--era new: must be one of modern, legacy" },
    { { "--stdio", "x", "--timeout", "0", "tools" }, "--timeout 0: must be a number of seconds > 0" },
    { { "--stdio", "x", "--header", "A: b", "tools" }, "--header needs --http URL" },
    { { "--stdio", "x", "--insecure", "tools" }, "--insecure needs --http URL" },
    { { "--http", "ftp://h/", "tools" }, "--http ftp://h/: " .. select(2, require("jrpc.uv.http_client").parse_url("ftp://h/")) },
    { { "--http", "https://h/", "--insecure", "--ca-file", "f", "tools" },
      "give at most one of --ca-file PATH and --insecure" },
    { { "--tcp", "h:1", "tools" }, "unknown option --tcp" },
    { { "--stdio", "x", "--framing", "lsp", "tools" }, "unknown option --framing" },
  }
  for _, case in ipairs(cases) do
    it("jrpc mcp " .. table.concat(case[1], " "), function()
      assert.same({ 2, "", "jrpc mcp: " .. case[2] .. "\nusage: " .. USAGE }, mcp((table.unpack or unpack)(case[1])))
    end)
  end

  it("--help: the usage line, the actions and the exit codes, on stdout", function()
    local r = mcp("--help")
    assert.same({ 0, "" }, { r[1], r[3] })
    assert.same("usage: " .. USAGE, r[2]:sub(1, #USAGE + 7))
    assert.truthy(r[2]:find("Exit status: 0 done; 1 an error reply (its error object on stderr), a\n"
      .. "result with isError, no reply within the timeout, or any other failure\n"
      .. "(its message on stderr); 2 usage error; 3 cannot spawn or connect, or the\n"
      .. "connection ended before the reply (a command that exits at once; over\n"
      .. "--http, a request whose connection closed after it was sent: its outcome\n"
      .. "is unknown and it is not sent again).\n", 1, true), r[2])
  end)
end)

-- }======================================================================

-- {======================================================================
-- @modelcontextprotocol/server-everything (npm; legacy era, probed)
-- =======================================================================

describe("jrpc mcp against @modelcontextprotocol/server-everything 2026.8.31", function()
  local CMD = "node " .. NPM_EVERYTHING .. " stdio"
  -- what it writes on its stderr (ours: inherited) before it reads anything
  local BANNER = "Starting default (STDIO) server...\n"

  -- it lists get-roots-list, trigger-elicitation-request and
  -- trigger-sampling-request only to clients that declare roots, elicitation
  -- and sampling: `jrpc mcp` declares none (it cannot answer them)
  it("tools: its 13 tools for a client without roots, sampling or elicitation", function()
    assert.truthy(io.open(NPM_EVERYTHING), "run: make node-deps")
    local r = mcp("--stdio", CMD, "tools")
    local names = {}
    for name in r[2]:gmatch("([^\t\n]+)[^\n]*\n") do names[#names + 1] = name end
    assert.same({ 0, BANNER }, { r[1], r[3] })
    assert.same({ "echo", "get-annotated-message", "get-env", "get-resource-links", "get-resource-reference",
      "get-structured-content", "get-sum", "get-tiny-image", "gzip-file-as-resource", "toggle-simulated-logging",
      "toggle-subscriber-updates", "trigger-long-running-operation", "simulate-research-query" }, names)
    assert.same("echo\tEchoes back the input string\n", r[2]:match("^[^\n]*\n"))
  end)

  it("call: text, an image summarized; an unknown tool is its isError result, exit 1", function()
    assert.same({ 0, "Echo: hi\n", BANNER }, mcp("--stdio", CMD, "call", "echo", '{"message":"hi"}'))
    assert.same({ 0, "The sum of 2 and 3 is 5.\n", BANNER }, mcp("--stdio", CMD, "call", "get-sum", '{"a":2,"b":3}'))
    assert.same({ 0, lines{ "Here's the image you requested:", "[image image/png, 5380 bytes base64]",
      "The image above is the MCP logo." }, BANNER }, mcp("--stdio", CMD, "call", "get-tiny-image"))
    assert.same({ 1, "MCP error -32602: Tool nope not found\n",
      BANNER .. "jrpc mcp: tool nope returned an error (isError)\n" }, mcp("--stdio", CMD, "call", "nope"))
  end)

  it("resources, read (the document it ships, byte for byte), prompts, prompt", function()
    local r = mcp("--stdio", CMD, "resources")
    assert.same({ 0, BANNER }, { r[1], r[3] })
    assert.same("demo://resource/static/document/architecture.md\tarchitecture.md\n", r[2]:match("^[^\n]*\n"))
    assert.same(9, select(2, r[2]:gsub("\n", "")))  -- 7 resources, then 2 templates
    assert.same("demo://resource/dynamic/text/{resourceId}\tDynamic Text Resource\n"
      .. "demo://resource/dynamic/blob/{resourceId}\tDynamic Blob Resource\n", r[2]:match("demo://resource/dynamic.*$"))
    local doc = files.read("node/node_modules/@modelcontextprotocol/server-everything/dist/docs/architecture.md")
    assert.same({ 0, doc:sub(-1) == "\n" and doc or doc .. "\n", BANNER },
      mcp("--stdio", CMD, "read", "demo://resource/static/document/architecture.md"))
    assert.same({ 0, lines{ "simple-prompt\tA prompt with no arguments",
      "args-prompt\tA prompt with two arguments, one required and one optional",
      "completable-prompt\tFirst argument choice narrows values for second argument.",
      "resource-prompt\tA prompt that includes an embedded resource reference" }, BANNER },
      mcp("--stdio", CMD, "prompts"))
    assert.same({ 0, "This is a simple prompt without arguments.\n", BANNER },
      mcp("--stdio", CMD, "prompt", "simple-prompt"))
  end)
end)

-- }======================================================================

-- {======================================================================
-- @modelcontextprotocol/server-filesystem (npm; legacy era, probed), on a
-- directory made here. Its stderr goes to a file of its own (2> in CMD),
-- so ours is exactly what jrpc wrote, and its own is checked too.
-- =======================================================================

describe("jrpc mcp against @modelcontextprotocol/server-filesystem 2026.8.31", function()
  local dir, log
  before_each(function()
    dir = S.tmpdir()
    log = dir .. ".stderr"
    files.write(dir .. "/notes.txt", "first line\nsecond line, with ünïcode\n")
    files.write(dir .. "/b.md", "# B")
    assert(os.execute("mkdir " .. q(dir .. "/sub")))
  end)
  after_each(function()
    S.rmdir(dir)
    os.remove(log)
  end)

  local function fs(...)
    return mcp("--stdio", "node " .. NPM_FILESYSTEM .. " " .. q(dir) .. " 2>" .. q(log), ...)
  end

  local function server_stderr()
    return files.read(log)
  end

  it("tools: its 14 tools, by exact name", function()
    assert.truthy(io.open(NPM_FILESYSTEM), "run: make node-deps")
    local r = fs("tools")
    assert.same({ 0, "" }, { r[1], r[3] })
    local names = {}
    for name in r[2]:gmatch("([^\t\n]+)[^\n]*\n") do names[#names + 1] = name end
    assert.same({ "read_file", "read_text_file", "read_media_file", "read_multiple_files", "write_file", "edit_file",
      "create_directory", "list_directory", "list_directory_with_sizes", "directory_tree", "move_file",
      "search_files", "get_file_info", "list_allowed_directories" }, names)
    assert.same("list_allowed_directories\tReturns the list of directories that this server is allowed to access. "
      .. "Subdirectories within these allowed directories are also accessible. Use this to understand which "
      .. "directories and their nested paths are available before trying to access files.\n", r[2]:match("[^\n]*\n$"))
    assert.same("Secure MCP Filesystem Server running on stdio\n", server_stderr():match("^[^\n]*\n"))
  end)

  it("call read_text_file and read_file: the file's exact content", function()
    local content = "first line\nsecond line, with ünïcode\n"
    assert.same({ 0, content, "" }, fs("call", "read_text_file", '{"path":"' .. dir .. '/notes.txt"}'))
    assert.same({ 0, content, "" }, fs("call", "read_file", '{"path":"' .. dir .. '/notes.txt"}'))
    -- a text without a newline at its end gets one
    assert.same({ 0, "first line\n", "" }, fs("call", "read_text_file", '{"path":"' .. dir .. '/notes.txt","head":1}'))
    assert.same({ 0, "# B\n", "" }, fs("call", "read_text_file", '{"path":"' .. dir .. '/b.md"}'))
    assert.same(lines{ "Secure MCP Filesystem Server running on stdio",
      "Client does not support MCP Roots, using allowed directories set from server args: [ '" .. dir .. "' ]" },
      server_stderr())
  end)

  it("call list_directory: the exact listing; write_file writes the file", function()
    assert.same({ 0, "[FILE] b.md\n[FILE] notes.txt\n[DIR] sub\n", "" },
      fs("call", "list_directory", '{"path":"' .. dir .. '"}'))
    assert.same({ 0, "Successfully wrote to " .. dir .. "/sub/new.txt\n", "" },
      fs("call", "write_file", '{"path":"' .. dir .. '/sub/new.txt","content":"made by jrpc"}'))
    assert.same("made by jrpc", files.read(dir .. "/sub/new.txt"))
  end)

  it("a path outside the allowed directory: its error text on stdout, exit 1", function()
    assert.same({ 1, "Access denied - path outside allowed directories: /etc/passwd not in " .. dir .. "\n",
      "jrpc mcp: tool read_text_file returned an error (isError)\n" },
      fs("call", "read_text_file", '{"path":"/etc/passwd"}'))
  end)

  it("resources and prompts: none (it has neither: its error reply, exit 1)", function()
    local r = fs("prompts")
    assert.same({ 1, "" }, { r[1], r[2] })
    assert.same('{"code":-32601,"message":"Method not found"}\n', r[3])
  end)
end)

-- }======================================================================
