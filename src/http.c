/*
** http.c — HTTP/1.1 server side, sans-I/O: the request reader (jrpc.Http)
** on llhttp 9 (Node's parser; Debian's libllhttp), and the response
** writers (a head with Content-Length, a chunked SSE head, one chunk, one
** SSE event).
**
** The reader. llhttp is a push parser that keeps no bytes: its
** callbacks copy the request being read into 'cur' (target, then each
** header's lower-cased name and value, then the body) and note offsets in
** 'spans'. Callbacks use only the raw allocator (buf_*): no Lua code can
** run while the parser runs. It is paused at the end of each request, so
** pipelined requests come out one per next(); bytes after that end wait in
** 'in'. A complete request's two buffers are swapped into this call's Work
** (a pointer swap) before anything is pushed: a finalizer that feeds or
** reads this object meanwhile (it then gets the following request, with a
** Work of its own) cannot move or overwrite what this call is pushing.
*/

#define HTTP_MT  "jrpc.Http"

#define HTTP_DEF_HEADER_BYTES  8192
#define HTTP_DEF_HEADERS       64
#define HTTP_DEF_BODY_BYTES    (4u * 1024u * 1024u)

#define check_http(L)  ((Http *)ud_check(L, lua_upvalueindex(1), HTTP_MT))


/* {======================= parser callbacks ====================== */

/*
** llhttp runs strict: none of its lenient flags is set. So a field name
** with whitespace before the colon, a bare CR, chunk data not followed by
** CRLF, a chunk size line that does not end in CRLF, Content-Length with
** Transfer-Encoding, or a repeated Content-Length is a 400 (the shapes
** that let a second, hidden request through a front proxy).
*/

static Http *http_of (llhttp_t *P) {
  return (Http *)P->data;
}


/* fail the request with 'status'; the callback then returns nonzero */
static int http_fail (Http *H, int status, const char *msg) {
  if (H->status == 0) {
    H->status = status;
    H->errmsg = msg;
  }
  return -1;
}


/* count 'len' more bytes of the head against max_header_bytes */
static int http_headbytes (Http *H, size_t len) {
  H->head_bytes += len;
  if (H->head_bytes > H->max_header_bytes)
    return http_fail(H, 431, H->response ? "response header fields too large"
                                         : "request header fields too large");
  return 0;
}


static int http_on_message_begin (llhttp_t *P) {
  Http *H = http_of(P);
  H->begun = 1;
  H->cur.n = 0;
  H->spans.n = 0;
  H->nheaders = 0;
  H->head_bytes = 0;
  H->in_value = 0;
  H->in_body = 0;
  H->target_end = 0;
  return 0;
}


static int on_url (llhttp_t *P, const char *at, size_t len) {
  Http *H = http_of(P);
  if (http_headbytes(H, len)) return -1;
  buf_add(H->L, &H->cur, at, len);   /* the target is first in 'cur' */
  H->target_end = H->cur.n;
  return 0;
}


static int http_on_header_field (llhttp_t *P, const char *at, size_t len) {
  Http *H = http_of(P);
  size_t i;
  char *d;
  if (H->in_body) return 0;          /* a trailer (chunked): dropped */
  if (http_headbytes(H, len)) return -1;
  if (H->nheaders == 0 || H->in_value) {  /* a new header */
    HttpSpan *s;
    if (H->nheaders >= H->max_headers)
      return http_fail(H, 431, H->response ? "too many response header fields"
                                           : "too many request header fields");
    if (http_headbytes(H, 4)) return -1;    /* ": " and CRLF */
    s = (HttpSpan *)(void *)buf_reserve(H->L, &H->spans, sizeof(HttpSpan));
    s->name = s->value = s->end = H->cur.n;
    H->spans.n += sizeof(HttpSpan);
    H->nheaders++;
    H->in_value = 0;
  }
  d = buf_reserve(H->L, &H->cur, len);
  for (i = 0; i < len; i++) {        /* names are ASCII tokens */
    unsigned char c = (unsigned char)at[i];
    d[i] = (char)((c >= 'A' && c <= 'Z') ? c + ('a' - 'A') : c);
  }
  H->cur.n += len;
  ((HttpSpan *)(void *)H->spans.p)[H->nheaders - 1].value = H->cur.n;
  ((HttpSpan *)(void *)H->spans.p)[H->nheaders - 1].end = H->cur.n;
  return 0;
}


static int http_on_header_value (llhttp_t *P, const char *at, size_t len) {
  Http *H = http_of(P);
  if (H->in_body) return 0;
  if (http_headbytes(H, len)) return -1;
  H->in_value = 1;
  buf_add(H->L, &H->cur, at, len);
  ((HttpSpan *)(void *)H->spans.p)[H->nheaders - 1].end = H->cur.n;
  return 0;
}


/* does the header named 'name' (lower case) hold only 'coding's? */
static int http_codings_only (Http *H, const char *name, size_t nn,
                              const char *coding) {
  HttpSpan *s = (HttpSpan *)(void *)H->spans.p;
  size_t cn = strlen(coding);
  int i;
  for (i = 0; i < H->nheaders; i++) {
    const char *v = H->cur.p + s[i].value, *e = H->cur.p + s[i].end;
    if (s[i].value - s[i].name != nn || memcmp(H->cur.p + s[i].name, name, nn) != 0)
      continue;
    while (v < e) {   /* a comma-separated list; OWS around each member */
      const char *m;
      while (v < e && (*v == ' ' || *v == '\t' || *v == ',')) v++;
      m = v;
      while (v < e && *v != ',') v++;
      if (v > m) {
        const char *me = v;
        while (me > m && (me[-1] == ' ' || me[-1] == '\t')) me--;
        if (http_casecmp(m, (size_t)(me - m), coding, cn) != 0) return 0;
      }
    }
  }
  return 1;
}


/*
** An absolute-form target (RFC 9112 3.2.2) is "http" or "https", "://",
** then an authority without userinfo (RFC 9110 4.2.4), then the path:
** note where its authority is. Other forms are left as they are.
*/
static int http_absolute_target (Http *H) {
  const char *t = H->cur.p, *e = t + H->target_end, *a;
  size_t sn;
  H->auth_at = H->auth_end = 0;
  if (t == e || *t == '/' || *t == '*') return 0;
  for (a = t; a < e && *a != ':' && *a != '/'; a++) ;
  if (e - a < 3 || memcmp(a, "://", 3) != 0) return 0;  /* authority form */
  sn = (size_t)(a - t);
  if (http_casecmp(t, sn, "http", 4) != 0 && http_casecmp(t, sn, "https", 5) != 0)
    return http_fail(H, 400, "request target scheme is not http");
  a += 3;
  H->auth_at = (size_t)(a - t);
  while (a < e && *a != '/' && *a != '?' && *a != '#') {
    if (*a == '@') return http_fail(H, 400, "request target has userinfo");
    a++;
  }
  H->auth_end = (size_t)(a - t);
  if (H->auth_end == H->auth_at)
    return http_fail(H, 400, "request target has no host");
  return 0;
}


static int on_headers_complete (llhttp_t *P) {
  Http *H = http_of(P);
  HttpSpan *s = (HttpSpan *)(void *)H->spans.p;
  int i, host = 0;
  if (P->http_major != 1 || P->http_minor > 1)
    return http_fail(H, 505, "HTTP version not supported");
  if (!H->response && http_absolute_target(H)) return -1;
  for (i = 0; i < H->nheaders; i++)
    if (s[i].value - s[i].name == 4 && memcmp(H->cur.p + s[i].name, "host", 4) == 0)
      host++;
  if (P->http_minor == 1 && host != 1)  /* RFC 9112 3.2: exactly one */
    return http_fail(H, 400, host ? "more than one Host header" : "no Host header");
  if ((P->flags & F_TRANSFER_ENCODING) &&
      !http_codings_only(H, "transfer-encoding", 17, "chunked"))  /* RFC 9112 6.1 */
    return http_fail(H, 501, "transfer coding not implemented");
  if ((P->flags & F_CONTENT_LENGTH) && !(P->flags & F_CHUNKED) &&
      P->content_length > (uint64_t)H->max_body_bytes)
    return http_fail(H, 413, "request body too large");
  /* RFC 9112 6.1: an HTTP/1.0 message with Transfer-Encoding has faulty
     framing; the connection closes after the response */
  H->faulty_framing = (P->http_minor == 0 && (P->flags & F_TRANSFER_ENCODING));
  H->in_body = 1;
  H->body_at = H->cur.n;
  return 0;
}


static int on_body (llhttp_t *P, const char *at, size_t len) {
  Http *H = http_of(P);
  if (H->cur.n - H->body_at + len > H->max_body_bytes)
    return http_fail(H, 413, "request body too large");
  buf_add(H->L, &H->cur, at, len);
  return 0;
}


static int on_message_complete (llhttp_t *P) {
  Http *H = http_of(P);
  H->done = 1;
  H->begun = 0;
  H->keep_alive = llhttp_should_keep_alive(P) && !H->faulty_framing;
  H->method = P->method;
  H->minor = P->http_minor;
  return HPE_PAUSED;                 /* one request per next() */
}


/* llhttp keeps a pointer to these (llhttp_init) */
static const llhttp_settings_t http_settings = {
  .on_message_begin = http_on_message_begin,
  .on_url = on_url,
  .on_header_field = http_on_header_field,
  .on_header_value = http_on_header_value,
  .on_headers_complete = on_headers_complete,
  .on_body = on_body,
  .on_message_complete = on_message_complete
};

/* }=============================================================== */


/* {======================= the reader ============================ */

static void http_free (lua_State *L, Http *H) {
  buf_free(L, &H->in);
  buf_free(L, &H->cur);
  buf_free(L, &H->spans);
  H->off = 0;
}


static int http_gc (lua_State *L) {
  Http *H = (Http *)luaL_checkudata(L, 1, HTTP_MT);
  http_free(L, H);
  if (H->work != NULL && !H->work->busy) work_free(L, H->work);
  H->work = NULL;
  H->h.closed = 1;
  return 0;
}


/*
** Run the parser on [p, p + n); returns the bytes it consumed. Stops at
** the end of a request (H->done), at an error (H->status) or at an
** upgrade (H->upgraded: what follows is not HTTP).
*/
static size_t http_run (Http *H, const char *p, size_t n) {
  llhttp_errno_t e = (n > 0) ? llhttp_execute(&H->P, p, n) : llhttp_finish(&H->P);
  size_t used = n;
  H->perr = (int)e;
  if (e == HPE_PAUSED || e == HPE_PAUSED_UPGRADE) {
    if (n > 0) used = (size_t)(llhttp_get_error_pos(&H->P) - p);
    llhttp_resume(&H->P);
  }
  else if (e != HPE_OK) {
    const char *why = llhttp_get_error_reason(&H->P);
    if (H->status == 0 && ((e == HPE_INVALID_VERSION && why != NULL &&
        strcmp(why, "Invalid HTTP version") == 0)   /* HTTP/1.2, 3.0 */
        || e == HPE_PAUSED_H2_UPGRADE))             /* the HTTP/2 preface */
      http_fail(H, 505, "HTTP version not supported");
    else if (H->status == 0) {     /* the parser's own error, not ours */
      H->status = 400;
      H->errmsg = (why != NULL) ? why : llhttp_errno_name(e);
    }
    H->done = 0;
    return n;
  }
  if (H->P.upgrade && H->done) H->upgraded = 1;
  return used;
}


/* keep the bytes [p, p + n) for later, after those already kept */
static void http_keep (lua_State *L, Http *H, const char *p, size_t n) {
  if (H->off > 0) {                /* compact first */
    memmove(H->in.p, H->in.p + H->off, H->in.n - H->off);
    H->in.n -= H->off;
    H->off = 0;
  }
  buf_add(L, &H->in, p, n);
}


/*
** Feed the kept bytes, then 'chunk', until a request is complete or
** everything was consumed. Raw allocations only: no Lua code runs here.
*/
static void http_parse (lua_State *L, Http *H, const char *chunk, size_t len) {
  H->L = L;
  if (H->off < H->in.n) {
    H->off += http_run(H, H->in.p + H->off, H->in.n - H->off);
    if (H->done || H->status || H->upgraded) {
      if (!H->status && !H->upgraded && len > 0) http_keep(L, H, chunk, len);
      return;
    }
  }
  H->in.n = H->off = 0;
  if (len > 0) {
    size_t used = http_run(H, chunk, len);
    if (H->done && !H->status && !H->upgraded && used < len)
      http_keep(L, H, chunk + used, len - used);
  }
}


/* push the error event of a failed reader: "error", status, message */
static int http_pusherror (lua_State *L, Http *H) {
  lua_pushliteral(L, "error");
  lua_pushinteger(L, H->status);
  lua_pushstring(L, H->errmsg);
  return 3;
}


/* set field 'k' of the table on top to the bytes [p, p + n) */
static void http_setlfield (lua_State *L, const char *k, const char *p, size_t n) {
  lua_pushlstring(L, p, n);
  lua_setfield(L, -2, k);
}


/* push the headers table from the spans of a complete request in 'W' */
static void http_pushheaders (lua_State *L, Work *W, int nheaders) {
  int i;
  lua_createtable(L, 0, nheaders);
  for (i = 0; i < nheaders; i++) {
    const HttpSpan *s = &((const HttpSpan *)(const void *)W->spans.p)[i];
    const char *v = W->msg.p + s->value;
    size_t vn = s->end - s->value;
    while (vn > 0 && (v[vn - 1] == ' ' || v[vn - 1] == '\t')) vn--;  /* OWS */
    lua_pushlstring(L, W->msg.p + s->name, s->value - s->name);
    lua_pushvalue(L, -1);
    lua_rawget(L, -3);
    if (lua_isnil(L, -1)) {
      lua_pop(L, 1);
      lua_pushlstring(L, v, vn);
    }
    else {  /* repeated: joined with ", " (RFC 9110 5.3), cookies with "; " */
      int cookie = (s->value - s->name == 6 &&
                    memcmp(W->msg.p + s->name, "cookie", 6) == 0);
      lua_pushstring(L, cookie ? "; " : ", ");
      lua_pushlstring(L, v, vn);
      lua_concat(L, 3);
    }
    lua_rawset(L, -3);
  }
}


/* what a request table says besides its bytes, taken before any push */
typedef struct HttpReqInfo {
  int method, minor, keep_alive, upgraded;
  size_t auth_at, auth_end;   /* an absolute-form target's authority */
} HttpReqInfo;


/*
** Push the request table of the complete request in 'W' (target first in
** W->msg, the body from 'body_at'). Only this call reads 'W'; nothing of
** the reader is read (a finalizer run by a push may read the next request
** into it), so 'ri' holds its flags.
*/
static void http_pushrequest (lua_State *L, const HttpReqInfo *ri, Work *W,
                              size_t target_end, size_t body_at, int nheaders) {
  const char *t;
  size_t tn = target_end, pn, q;
  lua_createtable(L, 0, 9);
  lua_pushstring(L, llhttp_method_name((llhttp_method_t)ri->method));
  lua_setfield(L, -2, "method");
  http_setlfield(L, "target", W->msg.p, tn);
  t = W->msg.p;
  /* path and query: origin form "/p?q"; absolute form "http://h/p?q" */
  pn = 0;
  if (ri->auth_end > 0) {
    t += ri->auth_end;
    tn -= ri->auth_end;
  }
  while (pn < tn && t[pn] != '?' && t[pn] != '#') pn++;
  if (pn == 0 && tn == 0) http_setlfield(L, "path", "/", 1);
  else http_setlfield(L, "path", t, pn);
  if (pn < tn && t[pn] == '?') {
    for (q = pn + 1; q < tn && t[q] != '#'; q++) ;
    http_setlfield(L, "query", t + pn + 1, q - pn - 1);
  }
  lua_pushstring(L, ri->minor ? "1.1" : "1.0");
  lua_setfield(L, -2, "version");
  http_pushheaders(L, W, nheaders);
  lua_setfield(L, -2, "headers");
  if (ri->auth_end > 0)  /* RFC 9112 3.2.2: judged instead of Host */
    http_setlfield(L, "authority", W->msg.p + ri->auth_at, ri->auth_end - ri->auth_at);
  http_setlfield(L, "body", W->msg.p + body_at, W->msg.n - body_at);
  lua_pushboolean(L, ri->keep_alive && !ri->upgraded);
  lua_setfield(L, -2, "keep_alive");
  lua_pushboolean(L, ri->upgraded);
  lua_setfield(L, -2, "upgrade");
}


/*
** h:next([chunk]) -> "request", req | "error", status, message | nothing
** The Work is taken before parsing (taking a free resident one allocates
** nothing; making one allocates, and a finalizer may feed there, which is
** fine: no parse is under way).
*/
static int http_next (lua_State *L) {
  Http *H = check_http(L);
  const char *chunk = NULL;
  size_t len = 0, target_end, body_at;
  int nheaders;
  HttpReqInfo ri;
  Work *W;
  Buf tmp;
  if (lua_gettop(L) >= 2 && !lua_isnil(L, 2)) chunk = luaL_checklstring(L, 2, &len);
  if (H->status) return http_pusherror(L, H);
  if (H->upgraded) return 0;
  if (H->parsing) {  /* a memory error left the parser between two states */
    http_fail(H, 500, "an earlier call failed (out of memory)");
    http_free(L, H);
    return http_pusherror(L, H);
  }
  W = work_acquire(L, &H->work, 1);
  H->parsing = 1;
  http_parse(L, H, chunk, len);
  H->parsing = 0;
  if (H->status) {
    work_release(L, W);
    http_free(L, H);     /* nothing more is read: keep no bytes */
    return http_pusherror(L, H);
  }
  if (!H->done) {
    work_release(L, W);
    return 0;
  }
  /* the request is this call's: swap its buffers into the Work */
  H->done = 0;
  target_end = H->target_end;
  body_at = H->body_at;
  nheaders = H->nheaders;
  tmp = W->msg; W->msg = H->cur; H->cur = tmp;
  tmp = W->spans; W->spans = H->spans; H->spans = tmp;
  H->cur.n = H->spans.n = 0;
  ri.method = H->method;
  ri.minor = H->minor;
  ri.keep_alive = H->keep_alive;
  ri.upgraded = H->upgraded;
  ri.auth_at = H->auth_at;
  ri.auth_end = H->auth_end;
  if (H->upgraded) http_free(L, H);
  lua_pushliteral(L, "request");
  http_pushrequest(L, &ri, W, target_end, body_at, nheaders);
  work_release(L, W);
  return 2;
}


static int http_tostring (lua_State *L) {
  Http *H = (Http *)luaL_checkudata(L, 1, HTTP_MT);
  lua_pushfstring(L, "jrpc.Http (%d bytes buffered)",
                  (int)(H->in.n - H->off + H->cur.n));
  return 1;
}


static lua_Integer http_opt (lua_State *L, int opts, const char *name,
                             lua_Integer def, lua_Integer lo, lua_Integer hi) {
  lua_Integer v = def;
  lua_getfield(L, opts, name);
  if (!lua_isnil(L, -1)) {
    lua_Number n = lua_tonumber(L, -1);
    if (lua_type(L, -1) != LUA_TNUMBER || !(n >= (lua_Number)lo && n <= (lua_Number)hi)
        || n != floor(n))
      luaL_error(L, "option '%s' must be an integer from %d to %d", name,
                 (int)lo, (int)hi);
    v = (lua_Integer)n;
  }
  lua_pop(L, 1);
  return v;
}


/* core.http_server([opts]) -> a jrpc.Http; upvalue 1: its metatable */
static int http_new (lua_State *L) {
  Http *H;
  if (lua_isnoneornil(L, 1)) { lua_settop(L, 0); lua_newtable(L); }
  luaL_checktype(L, 1, LUA_TTABLE);
  static const char *const known[] = {"max_header_bytes", "max_headers",
    "max_body_bytes", NULL};
  lua_settop(L, 1);
  ud_checkoptions(L, 1, known, "http_server");
  H = (Http *)lua_newuserdatauv(L, sizeof(Http), 1);
  memset(H, 0, sizeof(*H));   /* empty first: __gc is safe from here on */
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_setmetatable(L, -2);
#if LUA_VERSION_NUM < 504
  lua_createtable(L, 1, 0);   /* LuaJIT: a userdata's env must be a table */
  lua_setfenv(L, -2);
#endif
  /* a head is at most 80 KiB whatever the option (llhttp sets no bound) */
  H->max_header_bytes = (size_t)http_opt(L, 1, "max_header_bytes",
                                         HTTP_DEF_HEADER_BYTES, 64, 80 * 1024);
  H->max_headers = (int)http_opt(L, 1, "max_headers", HTTP_DEF_HEADERS, 1, 1000);
  H->max_body_bytes = (size_t)http_opt(L, 1, "max_body_bytes",
                                       HTTP_DEF_BODY_BYTES, 0, (lua_Integer)1 << 30);
  llhttp_init(&H->P, HTTP_REQUEST, &http_settings);
  H->P.data = H;
  return 1;
}

/* }=============================================================== */


/* {======================= writers =============================== */

/*
** The writers build into the scratch codec's 'out' (module upvalue 3):
** every argument is checked first, then no Lua code runs (raw table
** access only) until lua_pushlstring copies the bytes.
*/

static int http_tchar (int c) {   /* RFC 9110 5.6.2 token characters */
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || num_isdigit(c) ||
         (c != 0 && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}


static int http_casecmp (const char *a, size_t an, const char *b, size_t bn) {
  size_t i;
  for (i = 0; i < an && i < bn; i++) {
    int x = (unsigned char)a[i], y = (unsigned char)b[i];
    if (x >= 'A' && x <= 'Z') x += 'a' - 'A';
    if (y >= 'A' && y <= 'Z') y += 'a' - 'A';
    if (x != y) return x - y;
  }
  return (an > bn) - (an < bn);
}


static int http_hcmp (const void *a, const void *b) {
  const HttpHeader *x = (const HttpHeader *)a, *y = (const HttpHeader *)b;
  return http_casecmp(x->k, x->kn, y->k, y->kn);
}


static int http_has (const HttpHeader *hs, int n, const char *name) {
  int i;
  for (i = 0; i < n; i++)
    if (http_casecmp(hs[i].k, hs[i].kn, name, strlen(name)) == 0) return 1;
  return 0;
}


/* the registered status codes (IANA, RFC 9110 15) and their reason phrases */
static const struct { short code; const char *reason; } http_reasons[] = {
  {100, "Continue"}, {101, "Switching Protocols"}, {102, "Processing"},
  {103, "Early Hints"}, {200, "OK"}, {201, "Created"}, {202, "Accepted"},
  {203, "Non-Authoritative Information"}, {204, "No Content"},
  {205, "Reset Content"}, {206, "Partial Content"}, {207, "Multi-Status"},
  {208, "Already Reported"}, {226, "IM Used"}, {300, "Multiple Choices"},
  {301, "Moved Permanently"}, {302, "Found"}, {303, "See Other"},
  {304, "Not Modified"}, {305, "Use Proxy"}, {307, "Temporary Redirect"},
  {308, "Permanent Redirect"}, {400, "Bad Request"}, {401, "Unauthorized"},
  {402, "Payment Required"}, {403, "Forbidden"}, {404, "Not Found"},
  {405, "Method Not Allowed"}, {406, "Not Acceptable"},
  {407, "Proxy Authentication Required"}, {408, "Request Timeout"},
  {409, "Conflict"}, {410, "Gone"}, {411, "Length Required"},
  {412, "Precondition Failed"}, {413, "Content Too Large"},
  {414, "URI Too Long"}, {415, "Unsupported Media Type"},
  {416, "Range Not Satisfiable"}, {417, "Expectation Failed"},
  {418, "I'm a teapot"}, {421, "Misdirected Request"},
  {422, "Unprocessable Content"}, {423, "Locked"}, {424, "Failed Dependency"},
  {425, "Too Early"}, {426, "Upgrade Required"}, {428, "Precondition Required"},
  {429, "Too Many Requests"}, {431, "Request Header Fields Too Large"},
  {451, "Unavailable For Legal Reasons"}, {500, "Internal Server Error"},
  {501, "Not Implemented"}, {502, "Bad Gateway"}, {503, "Service Unavailable"},
  {504, "Gateway Timeout"}, {505, "HTTP Version Not Supported"},
  {506, "Variant Also Negotiates"}, {507, "Insufficient Storage"},
  {508, "Loop Detected"}, {510, "Not Extended"},
  {511, "Network Authentication Required"}
};


/*
** Check the status at 'arg' (a registered code from 100 to 599) and
** return it; '*reason' gets its reason phrase.
*/
static int http_checkstatus (lua_State *L, int arg, const char **reason) {
  lua_Number n = luaL_checknumber(L, arg);
  size_t i;
  luaL_argcheck(L, n >= 100 && n <= 599 && n == floor(n), arg,
                "status must be an integer from 100 to 599");
  for (i = 0; i < sizeof(http_reasons) / sizeof(http_reasons[0]); i++)
    if (http_reasons[i].code == (int)n) {
      *reason = http_reasons[i].reason;
      return (int)n;
    }
  return luaL_argerror(L, arg, "unknown status code");
}


/*
** Collect the headers table at 'arg' (string names and values) into 'hs',
** sorted by name, case-insensitively (so the bytes are reproducible);
** names must be tokens, values hold no control characters but HTAB;
** Content-Length and Transfer-Encoding are the writer's. Returns the count.
*/
static int http_checkheaders (lua_State *L, int arg, HttpHeader *hs, int room) {
  int n = 0, i;
  if (lua_isnoneornil(L, arg)) return 0;
  luaL_checktype(L, arg, LUA_TTABLE);
  lua_pushnil(L);
  while (lua_next(L, arg)) {
    HttpHeader *h = &hs[n];
    size_t j;
    if (lua_type(L, -2) != LUA_TSTRING || lua_type(L, -1) != LUA_TSTRING)
      luaL_argerror(L, arg, "header names and values must be strings");
    if (n == room) luaL_argerror(L, arg, "too many headers");
    h->k = lua_tolstring(L, -2, &h->kn);
    h->v = lua_tolstring(L, -1, &h->vn);
    if (h->kn == 0) luaL_argerror(L, arg, "empty header name");
    for (j = 0; j < h->kn; j++)
      if (!http_tchar((unsigned char)h->k[j]))
        luaL_argerror(L, arg, lua_pushfstring(L, "bad character in header name '%s'", h->k));
    for (j = 0; j < h->vn; j++) {
      unsigned char c = (unsigned char)h->v[j];
      if ((c < 0x20 && c != '\t') || c == 0x7f)
        luaL_argerror(L, arg, lua_pushfstring(L, "control character in header '%s'", h->k));
    }
    n++;
    lua_pop(L, 1);
  }
  for (i = 0; i < n; i++)
    if (http_casecmp(hs[i].k, hs[i].kn, "content-length", 14) == 0 ||
        http_casecmp(hs[i].k, hs[i].kn, "transfer-encoding", 17) == 0)
      luaL_argerror(L, arg, "Content-Length and Transfer-Encoding are written by jrpc");
  return n;
}


/* the header lines of 'hs', sorted by name (the bytes are reproducible) */
static void http_addheaders (lua_State *L, Buf *b, HttpHeader *hs, int n) {
  int i;
  qsort(hs, (size_t)n, sizeof(*hs), http_hcmp);
  for (i = 0; i < n; i++) {
    buf_add(L, b, hs[i].k, hs[i].kn);
    buf_addlit(L, b, ": ");
    buf_add(L, b, hs[i].v, hs[i].vn);
    buf_addlit(L, b, "\r\n");
  }
}


static void http_addhead (lua_State *L, Buf *b, int status, const char *reason,
                          HttpHeader *hs, int n) {
  char line[32];
  snprintf(line, sizeof(line), "HTTP/1.1 %d ", status);
  buf_add(L, b, line, strlen(line));
  buf_add(L, b, reason, strlen(reason));
  buf_addlit(L, b, "\r\n");
  http_addheaders(L, b, hs, n);
}


static int http_pushout (lua_State *L, Buf *b) {
  lua_pushlstring(L, b->p, b->n);
  if (b->cap > 65536) buf_free(L, b);   /* keep no big scratch */
  return 1;
}


/* core.http_response(status [, headers [, body]]) -> bytes */
static int http_response (lua_State *L) {
  HttpHeader hs[HTTP_MAX_WRITE_HEADERS];
  const char *reason, *body;
  size_t blen = 0;
  int status = http_checkstatus(L, 1, &reason), n, nobody;
  Buf *b = HTTP_OUT;
  /* the body first: converting a number allocates, and a finalizer run
  ** there could change the headers table after its strings were taken */
  body = luaL_optlstring(L, 3, "", &blen);
  n = http_checkheaders(L, 2, hs, HTTP_MAX_WRITE_HEADERS);
  nobody = status < 200 || status == 204 || status == 304;
  luaL_argcheck(L, !nobody || blen == 0, 3, "this status has no body");
  b->n = 0;
  http_addhead(L, b, status, reason, hs, n);
  if (!nobody) {
    char line[48];
    snprintf(line, sizeof(line), "Content-Length: %lu\r\n", (unsigned long)blen);
    buf_add(L, b, line, strlen(line));
  }
  buf_addlit(L, b, "\r\n");
  buf_add(L, b, body, blen);
  return http_pushout(L, b);
}


/* core.http_stream_head(status [, headers]) -> bytes (chunked, SSE) */
static int http_stream_head (lua_State *L) {
  static const char *const defaults[][2] = {
    {"Content-Type", "text/event-stream"}, {"Cache-Control", "no-cache"},
    {"X-Accel-Buffering", "no"}
  };
  HttpHeader hs[HTTP_MAX_WRITE_HEADERS + 3];
  const char *reason;
  int status = http_checkstatus(L, 1, &reason);
  int n = http_checkheaders(L, 2, hs, HTTP_MAX_WRITE_HEADERS), i;
  Buf *b = HTTP_OUT;
  luaL_argcheck(L, status >= 200 && status != 204 && status != 304, 1,
                "a stream needs a status that has a body");
  for (i = 0; i < 3; i++)
    if (!http_has(hs, n, defaults[i][0])) {
      hs[n].k = defaults[i][0]; hs[n].kn = strlen(hs[n].k);
      hs[n].v = defaults[i][1]; hs[n].vn = strlen(hs[n].v);
      n++;
    }
  b->n = 0;
  http_addhead(L, b, status, reason, hs, n);
  buf_addlit(L, b, "Transfer-Encoding: chunked\r\n\r\n");
  return http_pushout(L, b);
}


/* core.http_chunk(bytes) -> one chunk; "" -> the last chunk */
static int http_chunk (lua_State *L) {
  size_t len;
  const char *s = luaL_checklstring(L, 1, &len);
  char line[24];
  Buf *b = HTTP_OUT;
  b->n = 0;
  if (len == 0) buf_addlit(L, b, "0\r\n\r\n");
  else {
    snprintf(line, sizeof(line), "%lx\r\n", (unsigned long)len);
    buf_add(L, b, line, strlen(line));
    buf_add(L, b, s, len);
    buf_addlit(L, b, "\r\n");
  }
  return http_pushout(L, b);
}


/* refuse CR and LF in the SSE field at 'arg' (one line per field) */
static void http_checkline (lua_State *L, int arg, const char *s, size_t len) {
  luaL_argcheck(L, memchr(s, '\n', len) == NULL && memchr(s, '\r', len) == NULL,
                arg, "must not hold CR or LF");
}


/* core.sse_event(json [, id]) -> "id: <id>\ndata: <json>\n\n" */
static int sse_event (lua_State *L) {
  size_t len, idlen = 0;
  const char *s = luaL_checklstring(L, 1, &len);
  const char *id = luaL_optlstring(L, 2, NULL, &idlen);
  Buf *b = HTTP_OUT;
  http_checkline(L, 1, s, len);
  if (id != NULL) http_checkline(L, 2, id, idlen);
  b->n = 0;
  if (id != NULL) {
    buf_addlit(L, b, "id: ");
    buf_add(L, b, id, idlen);
    buf_addc(L, b, '\n');
  }
  buf_addlit(L, b, "data: ");
  buf_add(L, b, s, len);
  buf_addlit(L, b, "\n\n");
  return http_pushout(L, b);
}

/* }=============================================================== */


/*
** h:phase() -> "head" | "body" | nil: how far the request being read has
** come (nil: none begun since the last one came out). A server times the
** head and the body of a request apart from the wait between requests.
*/
static int http_phase (lua_State *L) {
  Http *H = check_http(L);
  if (!H->begun || H->status) return 0;
  if (H->in_body) lua_pushliteral(L, "body");
  else lua_pushliteral(L, "head");
  return 1;
}


/*
** h:buffered() -> integer: the bytes fed that no request has come out of
** yet (the request being read and any pipelined after it). A server
** counts them against what it lets a connection hold before it stops
** reading it.
*/
static int http_buffered (lua_State *L) {
  Http *H = check_http(L);
  lua_pushinteger(L, (lua_Integer)(H->in.n - H->off + H->cur.n));
  return 1;
}


static const luaL_Reg http_methods[] = {
  {"next", http_next},
  {"phase", http_phase},
  {"buffered", http_buffered},
  {NULL, NULL}
};


/* the jrpc.Http metatable and core.http_server into the module on top */
static void http_open (lua_State *L) {
  static const luaL_Reg meta[] = {
    {"__gc", http_gc}, {"__close", http_gc}, {"__tostring", http_tostring},
    {NULL, NULL}
  };
  ud_newtype(L, HTTP_MT, meta, http_methods, http_new, "http_server");
}
