-- make test-nvim: real `nvim --headless` (LuaJIT), with --clean and the
-- repository on runtimepath only (no package.cpath edits: Neovim finds
-- lua/jrpc/core.so, which `make` installs). Run by `lua5.4 /usr/bin/busted
-- --pattern=headless_test spec/nvim`, once per Neovim: $JRPC_NVIM is the
-- command (default `nvim`, Debian 12's 0.7.2; make test-nvim runs it again
-- with Debian 13's 0.10, spec/nvim/debian13.sh), and $JRPC_NVIM_VERSION,
-- when set, the version it must report (a prefix: "0.10"). Needs clangd.
local root = (debug.getinfo(1, "S").source:match("^@(.-)spec/nvim/headless_test%.lua$") or "")
if root == "" then root = "./" end
local function abs(p)
  local h = assert(io.popen("cd " .. p .. " && pwd")); local d = h:read("l"); h:close(); return d
end
root = abs(root)

local NVIM = os.getenv("JRPC_NVIM") or "nvim"

local function slurp(path)
  local f = io.open(path, "rb"); if not f then return "" end
  local s = f:read("a"); f:close(); return s
end

-- The shell command that runs nvim with `rtp` added, running `script`
-- after loading `file`, with its key/value lines, stderr and stdout going
-- to the files of `run` (made here).
local function nvim_command(run, rtp, script, file, env)
  run.out, run.err, run.stdout = os.tmpname(), os.tmpname(), os.tmpname()
  -- no Python provider: a Python file's ftplugin would look for pynvim (seconds)
  return ("cd %q && " .. (env or "") .. " JRPC_NVIM_OUT=%q JRPC_NVIM_SOURCE=%q timeout 30 %q --clean --headless -n "
    .. "--cmd 'let g:loaded_python3_provider = 0' --cmd %q -c %q %s 2>%q </dev/null >%q"):format(root, run.out,
    root .. "/spec/nvim/hello.c", NVIM, "set rtp+=" .. rtp, "luafile " .. script, file or "", run.err, run.stdout)
end

-- The key/value lines, stderr and stdout of a finished `run`; removes its files.
local function collect(run)
  local kv = {}
  for line in slurp(run.out):gmatch("[^\n]+") do
    local k, v = line:match("^([^\t]+)\t(.*)$")
    if k then kv[k] = v:gsub("\\n", "\n") end
  end
  local stderr, written = slurp(run.err), slurp(run.stdout)
  os.remove(run.out); os.remove(run.err); os.remove(run.stdout)
  return kv, stderr, written
end

-- nvim with `rtp` added, running `script` after loading `file`; returns the
-- exit status, the key/value lines it wrote, its stderr and its stdout.
local function nvim(rtp, script, file, env)
  local run = {}
  local ok, _, status = os.execute(nvim_command(run, rtp, script, file, env))
  local kv, stderr, written = collect(run)
  return ok and 0 or status, kv, stderr, written
end

-- Several such nvims at once (each a list {rtp, script, file, env}), so
-- that two language servers start side by side (-n: no swap file, so two
-- editors may load one file); a list of
-- {status, kv, stderr, stdout} in the same order.
local function nvims(list)
  local runs, sh = {}, {}
  for i, args in ipairs(list) do
    local run = { status = os.tmpname() }
    runs[i] = run
    sh[#sh + 1] = ("(%s; echo $? >%q) &"):format(nvim_command(run, args[1], args[2], args[3], args[4]), run.status)
  end
  sh[#sh + 1] = "wait"
  os.execute(table.concat(sh, "\n"))
  local results = {}
  for i, run in ipairs(runs) do
    local status = tonumber((slurp(run.status):match("%d+")))
    os.remove(run.status)
    local kv, stderr, written = collect(run)
    results[i] = { status = status, kv = kv, stderr = stderr, stdout = written }
  end
  return results
end

-- nvim running spec/nvim/mcp_serve.lua (jrpc.nvim.serve_mcp through the
-- example plugin jrpc_editor) in the background while `client` (a node
-- script of node/, given the URL and the buffer number) talks to it; then
-- the editor is told to quit. Returns nvim's status, its key/value lines,
-- stderr and stdout, and the client's exit status and stdout.
local function nvim_serving(client)
  local out, err, stdout = os.tmpname(), os.tmpname(), os.tmpname()
  local url, done, got = os.tmpname(), os.tmpname(), os.tmpname()
  os.remove(url); os.remove(done)
  local sh = table.concat({
    "cd %q || exit 9",
    "JRPC_NVIM_OUT=%q JRPC_NVIM_URL=%q JRPC_NVIM_DONE=%q timeout 40 %q --clean --headless --cmd %q -c %q "
      .. "2>%q </dev/null >%q & pid=$!",
    "for i in $(seq 200); do [ -s %q ] && break; sleep 0.1; done",
    "line=$(cat %q 2>/dev/null); timeout 30 node %q \"${line%%%%\t*}\" \"${line##*\t}\" >%q 2>&1; rc=$?",
    "touch %q; wait $pid; nv=$?; echo \"$rc $nv\" >>%q",
  }, "\n"):format(root, out, url, done, NVIM, "set rtp+=" .. root .. "," .. root .. "/examples/nvim",
    "luafile spec/nvim/mcp_serve.lua", err, stdout, url, url, client, got, done, done)
  local h = assert(io.popen("sh", "w")); h:write(sh); h:close()
  local rcs = slurp(done)
  local client_rc, status = rcs:match("^(%d+) (%d+)")
  local kv = {}
  for l in slurp(out):gmatch("[^\n]+") do
    local k, v = l:match("^([^\t]+)\t(.*)$")
    if k then kv[k] = v:gsub("\\n", "\n") end
  end
  local result = { status = tonumber(status), kv = kv, stderr = slurp(err), stdout = slurp(stdout),
    client_rc = tonumber(client_rc), client = slurp(got) }
  for _, f in ipairs{ out, err, stdout, url, done, got } do os.remove(f) end
  return result
end

-- The Neovim's version as {major, minor}.
local function nvim_version()
  local h = assert(io.popen(("%q --version 2>&1"):format(NVIM)))
  local first = h:read("l") or ""
  h:close()
  local major, minor = first:match("^NVIM v(%d+)%.(%d+)")
  return { tonumber(major), tonumber(minor) }
end

-- A list of strings as a JSON array (for $JRPC_LSP_SERVER).
local function vim_json_list(list)
  local items = {}
  for i, v in ipairs(list) do items[i] = '"' .. v:gsub('[\\"]', "\\%0") .. '"' end
  return "[" .. table.concat(items, ",") .. "]"
end

local HOVER = "function add_numbers\n\n→ int\nParameters:\n- int a\n- int b\n"
  .. "Adds two integers and returns their sum.\n\nstatic int add_numbers(int a, int b)"

describe("Neovim (nvim --headless, jrpc from runtimepath)", function()
  it("is the Neovim asked for", function()
    local h = assert(io.popen(("%q --version 2>&1"):format(NVIM)))
    local first = h:read("l") or ""
    h:close()
    local want = os.getenv("JRPC_NVIM_VERSION")
    print(("headless_test: %s (%s)"):format(first, NVIM))
    assert.truthy(first:find("^NVIM v%d+%.%d+%.%d+"), first)
    if want then assert.are.equal("NVIM v" .. want .. ".", first:sub(1, #want + 7)) end
  end)

  it("an LSP session with clangd: initialize (processId = vim.NIL), didOpen, hover, shutdown, exit", function()
    local status, kv, stderr = nvim(root, "spec/nvim/lsp_session.lua")
    assert.are.equal("", stderr)
    assert.are.equal(0, status)
    assert.are.equal("true", kv.finished)
    assert.is_nil(kv.error)
    assert.are.equal("runtimepath", kv.core)          -- not found through package.cpath
    assert.are.equal('{"processId":null}', kv.encode_nil)
    assert.are.equal("true", kv.decoded_nil)          -- peer option null = vim.NIL
    assert.are.equal('{"a":null}', kv.vim_json)
    assert.are.equal("true", kv.hover_provider)
    assert.are.equal(HOVER, kv.hover)
    assert.truthy(kv.hover:find("function add_numbers", 1, true))
    assert.truthy(kv.hover:find("Adds two integers and returns their sum.", 1, true))
    assert.are.equal("true", kv.shutdown)             -- shutdown answered null
    assert.are.equal("0 0", kv.exit)                  -- clangd exited 0 after exit
    assert.are.equal("true", kv.in_fast_event)        -- replies resume us in a luv callback
    assert.are.equal("false", kv.after_main_fast)     -- jrpc.nvim.main() got us out
    assert.are.equal("1", kv.bufnr)
  end)

  it("the example plugin's :JrpcHover shows clangd's hover in a floating window", function()
    local status, kv, stderr = nvim(root .. "," .. root .. "/examples/nvim", "spec/nvim/hover_example.lua",
      "spec/nvim/hello.c")
    assert.are.equal("", stderr)
    assert.are.equal(0, status)
    assert.are.equal("true", kv.finished)
    assert.are.equal("1", kv.floats)
    assert.are.equal(HOVER, kv.hover)
  end)

  it("the example plugin's :JrpcMcpTools with a URL runs MCP authorization (examples/mcp/oauth_server.lua)", function()
    -- the test authorization server and the protected server, in the background
    local dir = assert(io.popen("mktemp -d /tmp/jrpc-nvim-oauth-XXXXXX")):read("l")
    local sh = table.concat({
      "cd %q || exit 9",
      "node node/oauth_test_as.js 2>%s/as.log & echo $! >%s/pids",
      "for i in $(seq 100); do grep -q listening %s/as.log 2>/dev/null && break; sleep 0.1; done",
      "lua5.4 examples/mcp/oauth_server.lua \"$(sed -n 's/^listening //p' %s/as.log)\" 2>%s/srv.log & echo $! >>%s/pids",
      "for i in $(seq 100); do grep -q listening %s/srv.log 2>/dev/null && break; sleep 0.1; done",
    }, "\n"):format(root, dir, dir, dir, dir, dir, dir, dir)
    os.execute(sh)
    local mcp_url = slurp(dir .. "/srv.log"):match("listening on (%S+)")
    local status, kv, stderr = nvim(root .. "," .. root .. "/examples/nvim", "spec/nvim/mcp_oauth_example.lua", nil,
      ("XDG_DATA_HOME=%q JRPC_NVIM_MCP_URL=%q"):format(dir, tostring(mcp_url)))
    local as_log = slurp(dir .. "/as.log")
    os.execute(("kill $(cat %q/pids) 2>/dev/null; rm -rf %q"):format(dir, dir))
    assert.are.equal("", stderr)
    assert.are.equal(0, status)
    assert.are.equal("true", kv.finished)
    assert.are.equal("2 tools of " .. mcp_url, kv.tools_title)
    assert.are.equal("whoami\tSays who the token belongs to|admin_report\tNeeds the mcp:admin scope", kv.tools)
    assert.are.equal("a client the authorization server vouches for", kv.whoami)
    assert.are.equal("1", kv.opened)
    assert.matches("^http://127%.0%.0%.1:%d+/authorize%?response_type=code&$", kv.opened_url)
    assert.are.equal("600", kv.store_mode)
    assert.matches("\nregister none\nauthorize scope=mcp:read offline_access resource=", as_log)
  end)

  it("the example plugin's :JrpcMcpTools and :JrpcMcpCall against examples/mcp/everything_server.lua", function()
    local status, kv, stderr = nvim(root .. "," .. root .. "/examples/nvim", "spec/nvim/mcp_example.lua")
    assert.are.equal("", stderr)
    assert.are.equal(0, status)
    assert.are.equal("true", kv.finished)
    assert.are.equal("no MCP server: :JrpcMcpTools {cmd} first", kv.early)
    assert.are.equal("36 tools of lua5.4 examples/mcp/everything_server.lua", kv.tools_title)
    assert.are.equal("test_simple_text\tReturns a simple text response", kv.tools_first)
    assert.are.equal("36", kv.tools_count)
    assert.are.equal("test_simple_text\n\nThis is a simple text response for testing.", kv.simple)
    assert.are.equal("test_echo\n\nhi there", kv.echo)
    assert.are.equal("test_multiple_content_types\n\nMultiple content types test:\n"
      .. "[image image/png, 96 bytes base64]\n[resource test://mixed-content-resource]\n"
      .. '{"test":"data","value":123}', kv.multiple)
    assert.are.equal("test_error_handling failed (isError)\n\nTool test_error_handling failed: internal error",
      kv.failed)
    assert.are.equal("error -32602: Invalid params: unknown tool nope", kv.unknown)
    assert.are.equal("2", kv.windows)  -- the scratch buffer's split, made once
    assert.are.equal("jrpc_mcp: no MCP server: :JrpcMcpTools {cmd} first|"
      .. "jrpc_mcp: error -32602: Invalid params: unknown tool nope", kv.notified)
  end)

  it("require 'jrpc.nvim' alone registers vim.NIL; a child's stderr is captured unless passed through", function()
    local status, kv, stderr = nvim(root, "spec/nvim/quiet.lua")
    assert.are.equal("passed through\n", stderr)       -- only the child that asked for it
    assert.are.equal(0, status)
    assert.are.equal("true", kv.finished)
    assert.is_nil(kv.error)
    assert.are.equal('{"processId":null}', kv.encode_nil)
    assert.are.equal("19", kv.subtract)
    assert.are.equal("a child's log line\n", kv.captured)
    assert.are.equal("1", kv.loud)
  end)

  it("Neovim's JSON conventions: jrpc.nvim's encode, decode and conventions agree with vim.json", function()
    local status, kv, stderr = nvim(root, "spec/nvim/conventions.lua")
    assert.are.equal("", stderr)
    assert.are.equal(0, status)
    assert.is_nil(kv.error)
    assert.are.equal("true", kv.mt_is_neovims)
    assert.are.equal('{"context":{"diagnostics":[]}}', kv.encode_context)
    assert.are.equal(kv.encode_context, kv.vim_json_context)
    assert.are.equal('{"settings":{}}', kv.encode_dict)
    assert.are.equal('{"processId":null}', kv.encode_nil)
    assert.are.equal('{"capabilities":{"colorProvider":{}}}', kv.reencoded)
    assert.are.equal("true", kv.dict_mt)
    assert.are.equal('[{},[],null,{"a":{}},{"b":[]}]', kv.list_reencoded)
    assert.are.equal(kv.list_reencoded, kv.list_vim_json)
    assert.are.equal("true", kv.deep_equal)
    assert.are.equal("true", kv.decoded_nil)
    assert.are.equal("true true lsp lsp", kv.conventions)
    assert.are.equal("true", kv.conventions_kept)
    assert.are.equal("result", kv.kind)
    assert.are.equal("{}", kv.codec_result)
    assert.are.equal('{"jsonrpc":"2.0","method":"textDocument/codeAction","params":{"context":{"diagnostics":[]}},"id":2}',
      kv.codec_request)
  end)

  it("peers made through jrpc.nvim.loop() follow Neovim's conventions: spawn, listen, connect; options win", function()
    local status, kv, stderr = nvim(root, "spec/nvim/loop_conventions.lua")
    assert.are.equal("", stderr)
    assert.are.equal(0, status)
    assert.is_nil(kv.error)
    assert.are.equal("true", kv.finished)
    assert.are.equal("true", kv.same_view)
    assert.are.equal("true", kv.plain_is_context)      -- loop{ conventions = false }
    assert.are.equal("true", kv.same_uv)
    -- a child over pipes: vim.empty_dict() is {}, an empty table [], vim.NIL null
    assert.are.equal('{"jsonrpc":"2.0","method":"show","params":[{},[],null,{"a":[]},{"b":{}}],"id":1}',
      kv.spawn_sent)
    assert.are.equal("NIL dict array plain plain NIL dict", kv.spawn_kinds)
    assert.are.equal('[null,{},[],{"a":null},{"b":{}}]', kv.spawn_vim_json)
    assert.are.equal("true", kv.spawn_deep_equal)      -- what vim.json.decode gives
    -- null = jrpc.null and empty_dict = false: jrpc's own conventions
    assert.are.equal('{"jsonrpc":"2.0","method":"show","params":[{},[],{"a":{}}],"id":1}', kv.explicit_sent)
    assert.are.equal("null plain array plain plain null plain", kv.explicit_kinds)
    -- profile "mcp" (jrpc.mcp.client's peers) is left alone
    assert.are.equal('{"jsonrpc":"2.0","method":"show","params":[{}],"id":1}', kv.mcp_sent)
    assert.are.equal("null plain array plain plain", kv.mcp_kinds)
    -- a listener's peers decode params the Neovim way and answer in kind
    assert.are.equal("NIL dict array dict", kv.listen_params)
    assert.are.equal("[{},[],null,{}]", kv.listen_result)
    -- a connection to a server with jrpc's conventions
    assert.are.equal('[[],{},null,{"x":[]}]', kv.connect_sent)
    assert.are.equal("NIL dict array plain plain NIL dict", kv.connect_kinds)
    assert.are.equal('[null,{},[],{"a":null},{"b":{}}]', kv.connect_vim_json)
    assert.are.equal("jrpc.nvim.loop: unknown option 'conventons' (did you mean 'conventions'?)", kv.bad_name)
    assert.are.equal("jrpc.nvim.loop: option conventions must be a boolean", kv.bad_value)
    assert.are.equal("spawn: expected an options table", kv.bad_spawn)
    assert.are.equal("jrpc.nvim.conventions: expected an options table, got string", kv.bad_conventions)
  end)

  it("the terminal stays silent while an LSP session runs with clangd logging verbosely", function()
    local status, kv, stderr, stdout = nvim(root, "spec/nvim/silent_session.lua")
    assert.are.equal("", stderr)
    assert.are.equal("", stdout)
    assert.are.equal(0, status)
    assert.is_nil(kv.error)
    assert.are.equal("true", kv.finished)
    assert.are.equal("true", kv.hover_provider)
    assert.are.equal("function add_numbers", kv.hover_first_line)
    assert.are.equal("true", kv.shutdown)
    assert.are.equal("0 0", kv.exit)
    assert.are.equal("true", kv.diagnostics)
    assert.are.equal("clangd version 14.0.6", kv.log_version)   -- kept on the child instead
    assert.are.equal("true", kv.log_lines)
  end)

  it("lua5.4 never loads the LuaJIT build installed in lua/jrpc/", function()
    local h = assert(io.popen(("cd %q && lua5.4 -e 'package.path=\"./lua/?.lua;./lua/?/init.lua;\"..package.path' "
      .. "-e 'print(package.searchpath(\"jrpc.core\", package.cpath))' 2>&1"):format(root)))
    local s = h:read("a"); h:close()
    assert.truthy(s:find("^nil"), s)
  end)

  local have_sdk = io.open(root .. "/node/node_modules/@modelcontextprotocol/sdk/package.json") ~= nil
  local sdk_it = have_sdk and it or function(name)
    pending(name .. ": skipped, no node/node_modules/@modelcontextprotocol/sdk (make node-deps)")
  end
  sdk_it("jrpc.nvim.serve_mcp: the example jrpc_editor's tools, from the MCP TypeScript SDK's Streamable HTTP "
    .. "client", function()
    local r = nvim_serving("node/mcp_nvim_client.js")
    assert.are.equal("", r.stderr)
    assert.are.equal("", r.stdout)
    assert.are.equal(0, r.status)
    assert.is_nil(r.kv.error)
    assert.are.equal("true", r.kv.finished)
    local url = r.kv.url
    assert.truthy(url:find("^http://127%.0%.0%.1:%d+/mcp$"), url)
    local name = (root .. "/notes.txt"):gsub("[\\\"]", "\\%0")
    assert.are.equal(table.concat({
      '{"step":"initialize","serverVersion":{"name":"nvim","version":"0.1.0"}}',
      '{"step":"tools/list","names":["list_buffers","read_buffer","replace_text","diagnostics"]}',
      '{"step":"list_buffers","structured":{"buffers":[{"bufnr":1,"current":true,"lines":3,"modified":true,'
        .. '"name":"' .. name .. '"}]}}',
      '{"step":"read_buffer","isError":false,"text":"first line\\nhello world\\nlast line"}',
      '{"step":"replace_text","isError":false,"text":"replaced: buffer 1 has 4 lines"}',
      '{"step":"read_buffer again","isError":false,"text":"first line\\nhello editor\\nfrom MCP\\nlast line"}',
      '{"step":"replace_text outside","isError":true,"text":"line 99 is past the end of buffer 1 (lines 0 to 3)"}',
      '{"step":"read_buffer missing","isError":true,"text":"no buffer 999"}',
      '{"step":"diagnostics","structured":{"bufnr":1,"diagnostics":[{"col":0,"line":2,"message":"a test diagnostic",'
        .. '"severity":"warning","source":"spec"}]}}',
      '{"step":"foreign Origin","status":403}',   -- serve_http's checks are on
      '{"step":"foreign Host","status":421}',
    }, "\n") .. "\n", r.client)
    assert.are.equal(0, r.client_rc)
    -- the editor's own view: the buffer changed, and the server stopped
    assert.are.equal("first line\nhello editor\nfrom MCP\nlast line", r.kv.final)
    assert.are.equal("true", r.kv.modified)
    assert.are.equal("true", r.kv.stopped)
    assert.are.equal("jrpc_editor: MCP server on " .. url, r.kv.notified)
    assert.are.equal("jrpc.nvim.serve_mcp: host must be a loopback address (127.0.0.1 or ::1), not 0.0.0.0",
      r.kv.bad_host)
    assert.are.equal("jrpc.nvim.serve_mcp: unknown option 'prot' (did you mean 'port'?)", r.kv.bad_option)
    assert.are.equal("jrpc.nvim.serve_mcp: expected a jrpc.mcp.server", r.kv.bad_server)
    assert.are.equal("list_buffers read_buffer replace_text diagnostics ex_command", r.kv.opt_in)
  end)

  -- vim.lsp.start{ cmd = <function> } is Neovim 0.8's: lsp_cmd is tested on 0.10
  local version = nvim_version()
  local modern = version[1] > 0 or version[2] >= 8
  local function lsp_cmd_it(name, fn)
    if modern then it(name, fn)
    else pending(("%s: skipped, vim.lsp.start takes a cmd function from Neovim 0.8 on, this is %d.%d")
      :format(name, version[1], version[2])) end
  end

  local function lsp_session(mode)
    local status, kv, stderr, stdout = nvim(root, "spec/nvim/lsp_cmd.lua", "spec/nvim/hello.c",
      "JRPC_LSP_MODE=" .. mode)
    assert.are.equal("", stderr)
    assert.are.equal("", stdout)
    assert.is_nil(kv.error)
    assert.are.equal(0, status)
    return kv
  end

  lsp_cmd_it("vim.lsp.start{ cmd = jrpc.nvim.lsp_cmd{...} } gives the results of cmd = {...}: clangd and server requests", function()
    local mine, native = lsp_session("jrpc"), lsp_session("native")
    local file = "file://" .. root .. "/spec/nvim"
    assert.are.equal("true", mine.hover_provider)
    assert.are.equal("### function `add_numbers`  \n\n---\n→ `int`  \nParameters:  \n- `int a`\n- `int b`\n\n"
      .. "Adds two integers and returns their sum.  \n\n---\n```cpp\nstatic int add_numbers(int a, int b)\n```",
      mine.hover)
    assert.are.equal("nil", mine.hover_err)
    assert.are.equal(('[{"range":{"end":{"character":22,"line":1},"start":{"character":11,"line":1}},"uri":"%s"}]')
      :format((file .. "/hello.c"):gsub("/", "\\/")), mine.definition)
    assert.are.equal("nil", mine.code_action_err)    -- context.diagnostics = {} went as []
    assert.are.equal("", mine.code_actions)          -- clangd 14 has none there
    assert.are.equal("nil nil", mine.null_hover)     -- a null result is nil
    assert.are.equal("-32602 trying to get AST for non-added document", mine.error_reply)
    -- server requests answered by vim.lsp's handlers, notifications handled before the reply's callback
    assert.are.equal(('{"configuration":{"result":[{"answer":42}]},"folders":{"result":[{"name":"%s","uri":"%s"}]},'
      .. '"progress":{"result":null},"unknown":{"error":{"code":-32601,"message":"MethodNotFound"}}}')
      :format((root .. "/spec/nvim"):gsub("/", "\\/"), file:gsub("/", "\\/")), mine.asking)
    assert.are.equal("nil", mine.asking_err)
    assert.are.equal("asking: a message", mine.asking_shown)
    assert.are.equal("1 asking: a diagnostic", mine.asking_diagnostics)
    for _, key in ipairs{ "hover_provider", "hover", "hover_err", "definition", "code_action_err", "code_actions",
      "null_hover", "error_reply", "asking", "asking_err", "asking_shown", "asking_diagnostics" } do
      assert.are.equal(native[key], mine[key], key)
    end
    assert.are.equal("0 0", native.asking_exit)
    assert.are.equal("0 0", native.stop_exit)
    assert.are.equal("", native.notified)
    -- a cancel is final with jrpc (clangd's fast reply may still reach Neovim's own client)
    assert.are.equal("settled=true called=false", mine.cancel)
    assert.are.equal('-32803 request timed out {"jrpc_code":"timeout"}', mine.asking_timeout)  -- opts.timeout = 1
    -- killed mid-request: every request settles, then on_exit
    assert.are.equal("-32803 process killed by signal 9 (SIGKILL) {\"jrpc_code\":\"closed\"}", mine.asking_killed)
    assert.are.equal("0 9", mine.asking_exit)
    assert.are.equal("3", mine.killed_settled)
    assert.are.equal("0 9", mine.killed_exit)
    assert.are.equal("true", mine.closing)
    assert.are.equal("false false", mine.after_close)
    assert.are.equal("0", mine.stderr_kept)           -- clangd --log=error wrote nothing
    local quits = {}
    for q in mine.notified:gmatch("Client (%S+) quit with exit code 0 and signal 9") do quits[#quits + 1] = q end
    assert.are.same({ "asking-jrpc", "clangd-jrpc" }, quits)
    assert.truthy(mine.notified:find("^jrpc.nvim.lsp_cmd: cannot start jrpc%-no%-such%-server: ENOENT: "
      .. "no such file or directory|"), mine.notified)
    assert.are.equal("nil", mine.no_server)
    assert.are.equal("jrpc.nvim.lsp_cmd: argv must be a list of strings, the program first", mine.bad_argv)
    assert.are.equal("jrpc.nvim.lsp_cmd: unknown option 'cwdd' (did you mean 'cwd'?)", mine.bad_option)
  end)

  -- the same requests through both transports (two editors at once), for
  -- servers run as they come
  local function compare(server, file, pos, init_json)
    local env = ("JRPC_LSP_POS=%s JRPC_LSP_SERVER=%q "):format(pos or "1,4", vim_json_list(server))
      .. (init_json and ("JRPC_LSP_INIT=%q "):format(init_json) or "") .. "JRPC_LSP_MODE="
    local results = {}
    local modes = { "jrpc", "native" }
    local runs = {}
    for i, mode in ipairs(modes) do runs[i] = { root, "spec/nvim/lsp_compare.lua", file, env .. mode } end
    for i, r in ipairs(nvims(runs)) do
      assert.are.equal("", r.stderr)
      assert.are.equal("", r.stdout)
      assert.is_nil(r.kv.error)
      assert.are.equal(0, r.status)
      assert.are.equal("0 0", r.kv.exit)
      assert.are.equal("", r.kv.notified)
      results[modes[i]] = r.kv
    end
    assert.are.same(results.native, results.jrpc)
    return results.jrpc
  end

  lsp_cmd_it("lsp_cmd and cmd = {...} give the same results: clangd", function()
    local kv = compare({ "clangd", "--log=error" }, "spec/nvim/hello.c")
    assert.are.equal("error -32601 method not found", kv["textDocument/foldingRange"])  -- clangd 14 has none
    assert.truthy(kv["textDocument/documentSymbol"]:find('"name":"add_numbers"', 1, true))
  end)

  local JSON_SERVER = root .. "/node/node_modules/.bin/vscode-json-language-server"
  local json_it = io.open(JSON_SERVER) and lsp_cmd_it or function(name)
    pending(name .. ": skipped, no " .. JSON_SERVER .. " (make node-deps)")
  end
  json_it("lsp_cmd and cmd = {...} give the same results: vscode-json-language-server (npm)", function()
    local kv = compare({ JSON_SERVER, "--stdio" }, "spec/nvim/sample.json")
    assert.are.equal('[{"endLine":4,"kind":"object","startLine":0}]', kv["textDocument/foldingRange"])
    assert.are.equal("nil", kv["textDocument/hover"])
    assert.are.equal("error -32601 Unhandled method textDocument/documentHighlight",
      kv["textDocument/documentHighlight"])
    assert.truthy(kv["textDocument/documentSymbol"]:find('"name":"nested"', 1, true))
  end)

  local BASH_SERVER = root .. "/node/node_modules/.bin/bash-language-server"
  local bash_it = io.open(BASH_SERVER) and lsp_cmd_it or function(name)
    pending(name .. ": skipped, no " .. BASH_SERVER .. " (make node-deps)")
  end
  bash_it("lsp_cmd and cmd = {...} give the same results: bash-language-server (npm)", function()
    local kv = compare({ BASH_SERVER, "start" }, "spec/nvim/sample.sh", "7,1")
    assert.are.equal('{"contents":{"kind":"markdown","value":"Function: **greet** - *defined on line 4*\n\n'
      .. '```txt\nGreets its first argument.\n```"}}', kv["textDocument/hover"])
    assert.are.equal('[{"range":{"end":{"character":5,"line":3},"start":{"character":0,"line":3}}},'
      .. '{"range":{"end":{"character":5,"line":7},"start":{"character":0,"line":7}}}]',
      kv["textDocument/documentHighlight"])
  end)

  local TS_SERVER = root .. "/node/node_modules/.bin/typescript-language-server"
  local ts_it = io.open(TS_SERVER) and lsp_cmd_it or function(name)
    pending(name .. ": skipped, no " .. TS_SERVER .. " (make node-deps)")
  end
  ts_it("lsp_cmd and cmd = {...} give the same results: typescript-language-server with typescript 5 (npm)", function()
    -- spec/nvim/ts/tsconfig.json: the file alone, no lib; and one tsserver, not two (it starts sooner)
    local kv = compare({ TS_SERVER, "--stdio" }, "spec/nvim/ts/sample.ts", "5,31",
      '{"tsserver":{"useSyntaxServer":"never"},"disableAutomaticTypingAcquisition":true}')
    assert.are.equal('{"contents":{"kind":"markdown","value":"\n```typescript\nfunction addNumbers(a: number, '
      .. 'b: number): number\n```\nAdds two numbers and returns their sum."},'
      .. '"range":{"end":{"character":39,"line":5},"start":{"character":29,"line":5}}}', kv["textDocument/hover"])
    assert.are.equal('[{"endLine":0,"kind":"comment","startLine":0},{"endLine":2,"startLine":1}]',
      kv["textDocument/foldingRange"])
    assert.are.equal('[{"newText":"    ","range":{"end":{"character":2,"line":2},"start":{"character":0,"line":2}}}]',
      kv["textDocument/formatting"])                   -- tabSize = 4
    assert.truthy(kv["textDocument/documentSymbol"]:find('"name":"addNumbers"', 1, true))
  end)

  local PY_SERVER = root .. "/node/node_modules/.bin/pyright-langserver"
  local py_it = io.open(PY_SERVER) and lsp_cmd_it or function(name)
    pending(name .. ": skipped, no " .. PY_SERVER .. " (make node-deps)")
  end
  py_it("lsp_cmd and cmd = {...} give the same results: pyright (npm)", function()
    local kv = compare({ PY_SERVER, "--stdio" }, "spec/nvim/py/sample.py", "5,9")
    assert.are.equal('{"contents":{"kind":"markdown","value":"```python\n(function) def add_numbers(\n    a: int,\n'
      .. '    b: int\n) -> int\n```\n---\nAdds two integers and returns their sum."},'
      .. '"range":{"end":{"character":19,"line":5},"start":{"character":8,"line":5}}}', kv["textDocument/hover"])
    assert.are.equal('[{"kind":2,"range":{"end":{"character":15,"line":0},"start":{"character":4,"line":0}}},'
      .. '{"kind":2,"range":{"end":{"character":19,"line":5},"start":{"character":8,"line":5}}}]',
      kv["textDocument/documentHighlight"])
    assert.are.equal("error -32601 Unhandled method textDocument/formatting", kv["textDocument/formatting"])
    assert.truthy(kv["textDocument/documentSymbol"]:find('"name":"add_numbers"', 1, true))
  end)
end)
