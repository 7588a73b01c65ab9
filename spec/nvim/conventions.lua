-- Run inside `nvim --clean --headless` with the repository on runtimepath
-- (see spec/nvim/headless_test.lua): Neovim's JSON conventions through
-- jrpc.nvim (encode, decode, conventions) and a core codec made with them,
-- side by side with vim.json. Writes "key<TAB>value" lines to
-- $JRPC_NVIM_OUT and quits.
local out = assert(os.getenv("JRPC_NVIM_OUT"), "JRPC_NVIM_OUT not set")
local lines = {}
local function put(k, v) lines[#lines + 1] = k .. "\t" .. tostring(v):gsub("\n", "\\n") end

local ok, err = pcall(function()
  local jnvim = require "jrpc.nvim"
  local core = require "jrpc.core"
  put("mt_is_neovims", getmetatable(vim.empty_dict()) == jnvim.empty_dict_mt())

  -- encoding: as vim.json.encode writes the same tables
  local context = { context = { diagnostics = {} } }
  put("encode_context", jnvim.encode(context))
  put("vim_json_context", vim.json.encode(context))
  put("encode_dict", jnvim.encode({ settings = vim.empty_dict() }))
  put("encode_nil", jnvim.encode({ processId = vim.NIL }))

  -- decoding: what vim.json.decode gives, so vim.json.encode writes it back
  local text = '{"capabilities":{"colorProvider":{}}}'
  local v = jnvim.decode(text)
  put("reencoded", vim.json.encode(v))
  put("dict_mt", getmetatable(v.capabilities.colorProvider) == vim._empty_dict_mt)
  local list = '[{},[],null,{"a":{}},{"b":[]}]'
  put("list_reencoded", vim.json.encode(jnvim.decode(list)))
  put("list_vim_json", vim.json.encode(vim.json.decode(list)))
  put("deep_equal", vim.deep_equal(jnvim.decode(list), vim.json.decode(list)))
  put("decoded_nil", jnvim.decode(list)[3] == vim.NIL)

  -- a codec with the options jnvim.conventions fills in
  local o = jnvim.conventions{ profile = "lsp", framing = "lsp" }
  put("conventions", ("%s %s %s %s"):format(o.null == vim.NIL, o.empty_dict == vim._empty_dict_mt, o.profile,
    o.framing))
  put("conventions_kept", jnvim.conventions{ null = core.null }.null == core.null)
  local c = core.codec{ framing = "ndjson", null = o.null, empty_dict = o.empty_dict }
  local kind, _, result = c:next('{"jsonrpc":"2.0","result":{"capabilities":{"colorProvider":{},'
    .. '"hoverProvider":true}},"id":1}\n')
  put("kind", kind)
  put("codec_result", vim.json.encode(result.capabilities.colorProvider))
  put("codec_request", c:request("2", "textDocument/codeAction", { context = { diagnostics = {} } }, true))
end)
if not ok then put("error", err) end
vim.fn.writefile(lines, out)
vim.cmd(ok and "qall!" or "cquit! 3")
