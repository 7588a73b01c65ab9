---@meta jrpc.core
-- LuaCATS declarations of the C modules jrpc.core, jrpc.lineread and jrpc.resp, for
-- lua-language-server (add this `types/` directory to `workspace.library`).
-- The contract itself is src/CORE_API.md; spec/api_doc_spec.lua checks that
-- every function the built modules export is declared here. core.tls_client,
-- core.hmac_sha256, core.random_bytes, core.equal, core.sha256 and core.base64 come from the internal
-- module jrpc.core_tls (the part linked with OpenSSL), which jrpc.core's
-- table loads the first time one of them is read: call them as core.<name>.

---@class jrpc.core
---@field null lightuserdata  JSON null (a light userdata NULL, equal to cjson.null)
---@field array_mt table      marks a table as a JSON array (empty -> `[]`); decoded arrays carry it
---@field object_mt table     marks a table as a JSON object (empty -> `{}`)
local core = {}

--- Monotonic clock in seconds, for deadlines.
---@return number
function core.now() end

--- Give the C heap's free pages back to the system (glibc's malloc_trim);
--- false where there is no such call.
---@return boolean
function core.trim_memory() end

--- Compact JSON text of a value, or nil and why.
---@param value any
---@param max_depth? integer  1 to 1000, default 128
---@return string|nil json
---@return string|nil msg
function core.encode(value, max_depth) end

--- The Lua value of a JSON text, or nil and why (with the byte position).
---@param json string
---@param max_depth? integer  1 to 1000, default 128
---@param null? any           what JSON null becomes (default core.null)
---@return any value
---@return string|nil msg
function core.decode(json, max_depth, null) end

--- What a message is, told by its top-level members with nothing built (containers are
--- only validated, to `max_depth`): kind "request", "notification", "result" or "error",
--- or nil when the text does not say (not an object, a batch, both a call and a
--- response); the exact JSON text of a string or integer id; a method name without
--- escapes. Read as far as the text is valid.
---@param json string
---@param max_depth? integer  1 to 1000, default 128
---@return string|nil kind
---@return string|nil id_json
---@return string|nil method
function core.peek(json, max_depth) end

--- From now on, encode the userdata `v` as `null` (jrpc does this for `vim.NIL` in
--- Neovim). Raises for anything but a userdata.
---@param v userdata|lightuserdata
function core.add_null(v) end

--- A value the encoder writes as this JSON text (whitespace outside strings dropped, key
--- order and number tokens kept), or nil and why when it is not valid JSON.
---@param json string
---@param max_depth? integer
---@return userdata|nil raw
---@return string|nil err
function core.raw_json(json, max_depth) end

--- The JSON text of an id: integer -> `17`, string -> `"abc"` (escaped). Raises for anything else.
---@param id integer|string
---@return string
function core.rawid(id) end

---@class jrpc.CodecOptions
---@field framing? "ndjson"|"lsp"
---@field profile? "jsonrpc"|"mcp"|"lsp"
---@field max_message_bytes? integer  default 16 MiB
---@field max_depth? integer          2 to 1000, default 128
---@field max_batch? integer          default 1000
---@field null? any                   what a decoded JSON null becomes (default core.null)

--- A codec: framing, decoding and encoding for one connection.
---@param opts? jrpc.CodecOptions
---@return jrpc.Codec
function core.codec(opts) end

--- A pending-id table: matches responses to requests by id text, with deadlines.
---@param opts? {max_pending?: integer}
---@return jrpc.Pending
function core.pending(opts) end

---@class jrpc.HttpOptions
---@field max_header_bytes? integer  64 to 81920, default 8192: request target + header names and values + 4 per header
---@field max_headers? integer       1 to 1000, default 64
---@field max_body_bytes? integer    0 to 2^30, default 4 MiB (Content-Length over it: 413 before the body)

---@class jrpc.HttpRequest
---@field method string               "POST", "GET", "DELETE", ...
---@field target string               the request target as sent ("/mcp?x=1")
---@field path string                 the target's path ("/mcp"; absolute-form targets give their path)
---@field query string|nil            after "?", nil when there is none
---@field authority string|nil        an absolute-form target's authority, judged instead of Host
---@field version "1.0"|"1.1"
---@field headers table<string, string>  names lower-cased; repeats joined with ", " (cookie: "; ")
---@field body string                 chunked bodies are de-chunked; trailers dropped
---@field keep_alive boolean          false: answer, then close the connection
---@field upgrade boolean             Upgrade/CONNECT: the last request read on this connection

--- A sans-I/O HTTP/1.1 request reader for one server connection (llhttp).
---@param opts? jrpc.HttpOptions
---@return jrpc.Http
function core.http_server(opts) end

--- An HTTP/1.1 response: status line, headers (sorted by name), Content-Length (not for
--- 1xx/204/304), body. Raises for a bad status, a bad header name or a CR/LF in a value.
---@param status integer          100 to 599, one with a reason phrase
---@param headers? table<string, string>
---@param body? string
---@return string
function core.http_response(status, headers, body) end

--- The head of a chunked SSE response: Content-Type text/event-stream, Cache-Control
--- no-cache, X-Accel-Buffering no unless given, then Transfer-Encoding: chunked.
---@param status integer
---@param headers? table<string, string>
---@return string
function core.http_stream_head(status, headers) end

--- One chunk of a chunked body; `""` gives the last chunk `0\r\n\r\n`.
---@param bytes string
---@return string
function core.http_chunk(bytes) end

--- One SSE event: `id: <id>\n` (when given) and `data: <json>\n\n`; raises when
--- either holds CR or LF.
---@param json string
---@param id? string
---@return string
function core.sse_event(json, id) end

---@class jrpc.HttpClientOptions
---@field max_header_bytes? integer  64 to 81920, default 16384: reason phrase + header names and values + 4 per header
---@field max_headers? integer       1 to 1000, default 100
---@field max_body_bytes? integer|false  0 to 2^31-1, default 16 MiB, for the whole body of one response; false: no limit

---@class jrpc.HttpResponseHead
---@field status integer              200, 404, ... (1xx interim responses but 101 are skipped)
---@field reason string               the reason phrase as sent ("" when none)
---@field version "1.0"|"1.1"
---@field headers table<string, string>  names lower-cased; repeats joined with ", " (cookie: "; ")
---@field raw_headers string[][]      every field line in order, `{name, value}` (names lower-cased): repeats kept (set-cookie)
---@field keep_alive boolean          what the head says; the "done" event has the final word

--- A sans-I/O HTTP/1.1 response reader for one client connection (llhttp,
--- HTTP_RESPONSE mode): responses one after another on a kept-alive connection.
---@param opts? jrpc.HttpClientOptions
---@return jrpc.HttpClient
function core.http_client(opts) end

--- An HTTP/1.1 request: request line, headers (sorted by name; exactly one Host is
--- required), then `Content-Length` and the body when `body` is given (`""` too). Raises for
--- a method that is not a token, a target with spaces or control characters, a bad header,
--- or a Content-Length/Transfer-Encoding header (the writer's).
---@param method string           "GET", "POST", ...
---@param target string           "/mcp?x=1" (origin form)
---@param headers table<string, string>
---@param body? string
---@return string
function core.http_request(method, target, headers, body) end

---@class jrpc.TlsOptions
---@field host? string     the server's name (SNI and the certificate check) or IP address (checked against the certificate's IP addresses); required unless verify = false
---@field ca_file? string  PEM file of the CAs to trust instead of the system store
---@field verify? boolean  default true; false: no certificate checks at all (only when asked)

--- A sans-I/O TLS client (libssl over memory BIOs, TLS 1.2 or later): network bytes in
--- with `feed`, plaintext out with `read`; plaintext in with `write`, network bytes out
--- with `outgoing`. nil and why when the CA file or the system store cannot be loaded;
--- raises for bad options.
---@param opts jrpc.TlsOptions
---@return jrpc.Tls|nil tls
---@return string|nil msg
function core.tls_client(opts) end

--- HMAC-SHA-256 of `msg` under `key` (libcrypto): 32 raw bytes.
---@param key string
---@param msg string
---@return string
function core.hmac_sha256(key, msg) end

--- `n` bytes (0 to 1048576) from OpenSSL's CSPRNG, or nil and why when it cannot give them.
---@param n integer
---@return string|nil bytes
---@return string|nil msg
function core.random_bytes(n) end

--- SHA-256 of `s`: 32 raw bytes (libcrypto).
---@param s string
---@return string
function core.sha256(s) end

--- Base64 of `s` with padding (RFC 4648 section 4), or with `url` true
--- base64url without padding (section 5).
---@param s string
---@param url? boolean
---@return string
function core.base64(s, url) end

--- Whether two strings are equal, in time that depends on their lengths only (CRYPTO_memcmp).
---@param a string
---@param b string
---@return boolean
function core.equal(a, b) end

---@class jrpc.Codec
local Codec = {}

--- Append received bytes (any split).
---@param chunk string
function Codec:feed(chunk) end

--- End of input: a last line without "\n" is decoded; a partial LSP frame becomes an event.
function Codec:finish() end

--- Bytes still needed to complete the current LSP body, or 0 (read a line).
---@return integer
function Codec:want() end

---@class jrpc.CodecOversize
---@field limit integer  max_message_bytes
---@field size? integer  the message's Content-Length (absent with newline framing)
---@field kind? "response"|"call"|"junk"  nil: unknown
---@field id? string  the id's JSON text when it came before the first container and is clean

--- What is known of the last message dropped for being over max_message_bytes (its
--- "invalid" event, -32600 "Message too large", came just before), or nil.
---@return jrpc.CodecOversize|nil
function Codec:oversize() end

--- Bytes of buffer memory the codec keeps between calls (input, output, held bytes, the
--- decoder's scratch). A buffer grown past 64 KiB for one large message gives it back
--- once it holds little again.
---@return integer
function Codec:memory() end

--- Feed `chunk` (if given), then the next event, or nothing when more bytes are needed:
--- "request", method, params, id, rawid | "notification", method, params |
--- "result", rawid, result, id | "error", rawid, err, id | "batch", items |
--- "invalid", code, message, rawid, reply, detail. A request's or response's rawid is the
--- id's JSON text, or for a plain integer id (at most 15 digits) that integer; an invalid
--- event's rawid is always text. `more`: a request gets a sixth value, false when no byte
--- is left. After `codec:shapes`, a request whose params fit its method's shape is
--- "checked", method, named, id, rawid.
---@param chunk? string
---@param more? boolean
---@return string|nil kind
---@return any ...
function Codec:next(chunk, more) end

--- Feed `chunk` (if given), then the next message's text as framed, not decoded; or
--- false and a detail for what the framer skipped (a line that is no header, a message
--- over max_message_bytes); or nothing when more bytes are needed. For a codec that only
--- splits (a tap on a stream): `next` on the same codec would take the same bytes.
---@param chunk? string
---@return string|false|nil text
---@return string|nil detail
function Codec:split(chunk) end

--- Decode `text` as one whole message that its transport framed (an HTTP body: newlines
--- in it are whitespace), with this codec's profile, limits and shapes: the values of
--- `next` (no `more`). The framer is neither used nor touched. Text over
--- max_message_bytes is the over-limit event, its size in `oversize()`.
---@param text string
---@return string kind
---@return any ...
function Codec:decode(text) end

--- Check declared params while decoding: `shapes` maps a method to `decl:shape()` of its
--- `jrpc.params` declaration (kept, not copied: changes to it count from the next call;
--- nil: check none). A request whose params fit comes from `next` as "checked", its params
--- the named table the declaration's checker would build; any other comes as decoded.
---@param shapes table<string, table>|nil
function Codec:shapes(shapes) end

--- A framed success response, or nil and why.
---@param rawid string|integer  the id's JSON text, or an integer for its own
---@param value any
---@param unframed? boolean
---@return string|true|nil bytes  true while holding
---@return string|nil msg
function Codec:result(rawid, value, unframed) end

--- A framed error response, or nil and why.
---@param rawid string|integer
---@param code integer
---@param message string
---@param data? any
---@param unframed? boolean
---@return string|true|nil bytes  true while holding
---@return string|nil msg
function Codec:error(rawid, code, message, data, unframed) end

--- A framed request, or nil and why (params nil or null: none).
---@param rawid string|integer
---@param method string
---@param params? table
---@param unframed? boolean
---@return string|true|nil bytes  true while holding
---@return string|nil msg
function Codec:request(rawid, method, params, unframed) end

--- A framed notification, or nil and why (params nil or null: none).
---@param method string
---@param params? table
---@param unframed? boolean
---@return string|true|nil bytes  true while holding
---@return string|nil msg
function Codec:notification(method, params, unframed) end

--- Frame an already-encoded JSON text.
---@param json string
---@return string|true bytes  true while holding (the codec keeps the bytes)
function Codec:frame(json) end

--- While `on`, framed writers append their message to the held bytes and return true.
---@param on boolean
function Codec:hold(on) end

--- Append bytes that are framed already to the held bytes.
---@param bytes string
function Codec:append(bytes) end

--- Everything held, as one string (emptied), or nil when nothing is held.
---@return string|nil bytes
function Codec:take() end

---@class jrpc.Pending
local Pending = {}

--- Add an id: its slot, or nil and "duplicate id" / "too many pending requests".
---@param rawid string|integer  the id's JSON text, or an integer for its own
---@param deadline? number
---@return integer|nil slot
---@return string|nil msg
function Pending:add(rawid, deadline) end

--- Remove an id a response names: its slot, or nil (unknown or late: counted).
---@param rawid string|integer
---@return integer|nil slot
function Pending:settle(rawid) end

--- Remove an id we gave up: its slot, or nil (not counted).
---@param rawid string|integer
---@return integer|nil slot
function Pending:cancel(rawid) end

--- Remove and return one entry whose deadline is at or before `now`, or nothing.
---@param now number
---@return integer|nil slot
---@return string|nil rawid
function Pending:next_expired(now) end

--- The earliest deadline, or nil.
---@return number|nil
function Pending:next_deadline() end

--- Remove and return any entry, or nothing (to settle everything on close).
---@return integer|nil slot
---@return string|nil rawid
function Pending:pop() end

--- How many are pending.
---@return integer
function Pending:count() end

--- Counters: pending, unmatched, settled, expired, max_pending, bytes_per_entry.
---@return table
function Pending:stats() end

---@class jrpc.Http
local Http = {}

--- Feed `chunk` (when given), then the next request: `"request", req`; or
--- `"error", status, message` for a request that cannot be served (400, 413, 431, 501, 505;
--- answer it with that status and close: every later call returns the same error);
--- or nothing when more bytes are needed. Call again until it returns nothing.
---@param chunk? string
---@return "request"|"error"|nil kind
---@return jrpc.HttpRequest|integer|nil req_or_status
---@return string|nil message
function Http:next(chunk) end

--- How far the request being read has come: "head", "body", or nil when
--- none has begun since the last one came out (a server times each apart).
---@return "head"|"body"|nil
function Http:phase() end

--- The bytes fed that no request has come out of yet (the request being read and any
--- pipelined after it).
---@return integer
function Http:buffered() end

---@class jrpc.HttpClient
local HttpClient = {}

--- Feed `chunk` (when given), then the next event of the response being read:
--- `"head", head`; `"body", bytes` (de-chunked, as they arrive: call again, there may be
--- more); `"done", keep_alive` (the response ended; false: close the connection); nothing
--- when more bytes are needed; or nil and why: "malformed response: <llhttp's
--- reason>", "response header fields too large", "too many response header fields",
--- "response body too large", "connection closed before the response ended" (every later
--- call gives the same).
---@param chunk? string
---@return "head"|"body"|"done"|nil kind
---@return jrpc.HttpResponseHead|string|boolean|nil value
function HttpClient:next(chunk) end

--- The connection ended (EOF): a body read until the close ends here, a response cut
--- short fails. Call `next` after it for the events.
function HttpClient:finish() end

--- The response being read (or the next) answers a HEAD request: it has no body.
function HttpClient:no_body() end

---@class jrpc.Tls
local Tls = {}

--- Drive the handshake: true when done; false when it needs the peer's answer (send
--- `outgoing()`, `feed` what comes back, call again); nil and why when refused, e.g.
--- "certificate verify failed: unable to get local issuer certificate",
--- "certificate verify failed: hostname mismatch", "TLS handshake failed: <libssl's reason>".
---@return boolean|nil done
---@return string|nil msg
function Tls:handshake() end

--- Bytes that came from the network.
---@param bytes string
function Tls:feed(bytes) end

--- The plaintext fed so far (maybe ""), and true once the peer closed the session
--- (close_notify); nil and why after a failure. Raises before the handshake is done.
---@return string|nil plaintext
---@return boolean|string closed_or_msg
function Tls:read() end

--- Encrypt `plaintext` for the peer (then send `outgoing()`): true, or nil and why.
--- Raises before the handshake is done.
---@param plaintext string
---@return boolean|nil ok
---@return string|nil msg
function Tls:write(plaintext) end

--- The bytes to send to the network now ("" when none). Call after every other method.
---@return string
function Tls:outgoing() end

--- Queue a close_notify for the peer (then send `outgoing()`).
function Tls:shutdown() end

--- The session after the handshake: `{version = "TLSv1.3", cipher = "...", verified = true}`.
---@return table|nil info
---@return string|nil msg
function Tls:info() end

--- Free the session now (idempotent); any other method then raises "jrpc.Tls is closed".
function Tls:close() end

---@class jrpc.lineread
local lineread = {}

--- The next line with its "\n", or at most `max` bytes of a longer one; nil at the end of
--- input; nil, msg on a read error. Blocks only until a line ends or `max` bytes came.
---@param file file*
---@param max? integer  default 65536
---@return string|nil line
---@return string|nil msg
function lineread.read(file, max) end

--- Keep stdout for the protocol: a private close-on-exec copy of descriptor 1 (returned),
--- and descriptor 1 made a copy of stderr. The same fd on later calls; nil, msg on failure.
---@return integer|nil fd
---@return string|nil msg
function lineread.keep_stdout() end

--- Write all of `bytes` to descriptor `fd` (blocking); true, or nil, msg.
---@param fd integer
---@param bytes string
---@return true|nil ok
---@return string|nil msg
function lineread.write(fd, bytes) end

--- RESP2, the Redis protocol, on hiredis (the C module beside the core that jrpc.redis uses).
---@class jrpc.resp
---@field NIL table  the default value of a nil bulk string or array (tostring: "resp.NIL")
local resp = {}

---@class jrpc.RespReader
local RespReader = {}

--- A reader of replies: no I/O, any split of the stream reads the same. `nil_value`: what a
--- nil bulk string or array reads as (default resp.NIL); `max_elements`: the most array
--- elements one reply may declare in all (1 to 2^31-1, default 2^20). hiredis reads arrays
--- nested at most 7 levels below the top one. Raises for an unknown option or a bad value.
---@param opts? {nil_value?: any, max_elements?: integer}
---@return jrpc.RespReader
function resp.reader(opts) end

--- Add bytes from the server: true, or nil, msg once the reader has failed.
---@param bytes string
---@return true|nil ok
---@return string|nil msg
function RespReader:feed(bytes) end

--- The next complete reply: a string (status or bulk), an integer, `{err = text}` (an error
--- reply), the nil value, or a list of replies; nothing while none is complete; nil, msg on
--- bytes that are no RESP (and on every call after).
---@return any reply
---@return string|nil msg
function RespReader:next() end

--- The RESP bytes of a command: an array of strings and numbers (integer values as their
--- digits), at least one. Raises for any other value, NaN or an empty array.
---@param args (string|number)[]
---@return string
function resp.command(args) end

return core
