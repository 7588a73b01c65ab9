/*
** http_client.c — HTTP/1.1 client side, sans-I/O: the response reader
** (jrpc.HttpClient) on llhttp in HTTP_RESPONSE mode, and the request
** writer (core.http_request).
**
** The reader is a jrpc.Http (http.c's struct, its header callbacks, its
** byte keeping and its parse loop) with a head of its own: the status
** line's reason phrase goes first into 'cur', as a request's target does.
** Unlike a request, a response comes out in pieces, one per next(): its
** head, then its body bytes as they arrive (de-chunked; a streamed SSE
** body is read while it lasts), then its end. The parser pauses at the
** end of each response, so the next one on a kept-alive connection stays
** in 'in' until this one's events are out. Each event's bytes are swapped
** into the call's Work before anything is pushed, as http.c does, so a
** finalizer that feeds or reads this reader meanwhile gets the following
** event and cannot move what this call is pushing.
*/

#define HC_MT  "jrpc.HttpClient"

#define HC_DEF_HEADER_BYTES  16384
#define HC_DEF_HEADERS       100
#define HC_DEF_BODY_BYTES    (16 * 1024 * 1024)
#define HC_MAX_BODY_OPT      0x7fffffff   /* max_body_bytes, when a number */

typedef struct HttpClient {
  Http H;              /* first: P.data points here, and at the UdHead */
  int head_ready;      /* a head is parsed, not yet returned */
  int interim;         /* the response being read is a 1xx: dropped */
  int no_body;         /* it answers a HEAD request: no body */
  int eof;             /* finish(): the connection ended */
  int eof_fed;         /* ... and the parser was told */
  int status_code;     /* of the head in 'cur' */
  int keep_head;       /* llhttp_should_keep_alive at the head */
  size_t body_total;   /* body bytes of this response so far */
} HttpClient;

#define check_hc(L)  ((HttpClient *)ud_check(L, lua_upvalueindex(1), HC_MT))


/* {======================= parser callbacks ====================== */

static int hc_on_message_begin (llhttp_t *P) {
  HttpClient *C = (HttpClient *)(void *)http_of(P);
  C->interim = 0;
  C->body_total = 0;
  return http_on_message_begin(P);
}


static int hc_on_status (llhttp_t *P, const char *at, size_t len) {
  Http *H = http_of(P);
  if (http_headbytes(H, len)) return -1;
  buf_add(H->L, &H->cur, at, len);   /* the reason phrase is first in 'cur' */
  H->target_end = H->cur.n;
  return 0;
}


/*
** A 1xx other than 101 is an interim response (100 Continue, 103 Early
** Hints): it is dropped, and the final one follows. Returning 1 tells
** llhttp that the response has no body (an answer to HEAD).
*/
static int hc_on_headers_complete (llhttp_t *P) {
  HttpClient *C = (HttpClient *)(void *)http_of(P);
  Http *H = &C->H;
  if (P->http_major != 1 || P->http_minor > 1)
    return http_fail(H, 400, "HTTP version not supported");
  if (P->status_code < 100)   /* llhttp takes 3 digits; 0xx is not a status */
    return http_fail(H, 400, "invalid HTTP status code");
  H->in_body = 1;
  H->body_at = H->cur.n;
  H->minor = P->http_minor;
  if (P->status_code / 100 == 1 && P->status_code != 101) {
    C->interim = 1;
    return 0;
  }
  if ((P->flags & F_CONTENT_LENGTH) && !(P->flags & F_CHUNKED) &&
      !C->no_body && P->content_length > (uint64_t)H->max_body_bytes)
    return http_fail(H, 1, "response body too large");
  C->status_code = P->status_code;
  C->keep_head = llhttp_should_keep_alive(P);
  C->head_ready = 1;
  return C->no_body ? 1 : 0;
}


static int hc_on_body (llhttp_t *P, const char *at, size_t len) {
  HttpClient *C = (HttpClient *)(void *)http_of(P);
  Http *H = &C->H;
  if (C->interim) return 0;  /* a 1xx has no content (RFC 9110 15.2): dropped */
  if (len > H->max_body_bytes - C->body_total)
    return http_fail(H, 1, "response body too large");
  C->body_total += len;
  buf_add(H->L, &H->cur, at, len);
  return 0;
}


static int hc_on_message_complete (llhttp_t *P) {
  HttpClient *C = (HttpClient *)(void *)http_of(P);
  Http *H = &C->H;
  if (C->interim) {        /* forget it: the final response comes next */
    H->cur.n = H->spans.n = 0;
    H->nheaders = 0;
    H->in_body = 0;
    return 0;
  }
  H->done = 1;
  H->keep_alive = llhttp_should_keep_alive(P);
  C->no_body = 0;          /* said for this response only */
  return HPE_PAUSED;       /* the next response waits in 'in' */
}


/* llhttp keeps a pointer to these (llhttp_init) */
static const llhttp_settings_t hc_settings = {
  .on_message_begin = hc_on_message_begin,
  .on_status = hc_on_status,
  .on_header_field = http_on_header_field,
  .on_header_value = http_on_header_value,
  .on_headers_complete = hc_on_headers_complete,
  .on_body = hc_on_body,
  .on_message_complete = hc_on_message_complete
};

/* }=============================================================== */


/* {======================= the reader ============================ */

static int hc_gc (lua_State *L) {
  HttpClient *C = (HttpClient *)luaL_checkudata(L, 1, HC_MT);
  http_free(L, &C->H);
  if (C->H.work != NULL && !C->H.work->busy) work_free(L, C->H.work);
  C->H.work = NULL;
  C->H.h.closed = 1;
  return 0;
}


/* body bytes parsed and not yet returned */
static size_t hc_body_pending (const HttpClient *C) {
  const Http *H = &C->H;
  return (H->in_body && !C->head_ready && !C->interim) ? H->cur.n - H->body_at : 0;
}


/* nil and the reader's error; every later call gives the same */
static int hc_pusherror (lua_State *L, Http *H) {
  lua_pushnil(L);
  if (H->status == 400)
    lua_pushfstring(L, "malformed response: %s", H->errmsg);
  else lua_pushstring(L, H->errmsg);
  return 2;
}


/*
** Feed the kept bytes and 'chunk' when no event is waiting (else keep
** 'chunk'); at the end of input, tell the parser once everything kept
** was read. Raw allocations only.
*/
static void hc_parse (lua_State *L, HttpClient *C, const char *chunk,
                      size_t len) {
  Http *H = &C->H;
  H->L = L;
  if (C->head_ready || hc_body_pending(C) > 0 || H->done) {
    if (len > 0) http_keep(L, H, chunk, len);
    return;
  }
  http_parse(L, H, chunk, len);
  if (C->eof && !C->eof_fed && !H->done && !H->status && !H->upgraded &&
      H->off == H->in.n) {
    C->eof_fed = 1;
    http_run(H, NULL, 0);
    if (H->status == 400 &&
        H->perr == HPE_INVALID_EOF_STATE) {
      H->status = 1;
      H->errmsg = "connection closed before the response ended";
    }
  }
}


/* what a head table says besides its bytes, taken before any push */
typedef struct HcHead {
  int status, minor, keep_alive, nheaders;
  size_t reason_end;
} HcHead;


/*
** Push the head table of the head now in W (reason first, then headers).
** Reads nothing of the reader: a finalizer run by a push may read the
** next response into it.
*/
static void hc_pushhead (lua_State *L, Work *W, const HcHead *hd) {
  int i, nheaders = hd->nheaders;
  lua_createtable(L, 0, 7);
  lua_pushinteger(L, hd->status);
  lua_setfield(L, -2, "status");
  http_setlfield(L, "reason", hd->reason_end > 0 ? W->msg.p : "", hd->reason_end);
  lua_pushstring(L, hd->minor ? "1.1" : "1.0");
  lua_setfield(L, -2, "version");
  http_pushheaders(L, W, nheaders);
  lua_setfield(L, -2, "headers");
  lua_createtable(L, nheaders, 0);   /* every field line, in order */
  for (i = 0; i < nheaders; i++) {
    const HttpSpan *s = &((const HttpSpan *)(const void *)W->spans.p)[i];
    size_t vn = s->end - s->value;
    while (vn > 0 && (W->msg.p[s->value + vn - 1] == ' ' ||
                      W->msg.p[s->value + vn - 1] == '\t')) vn--;
    lua_createtable(L, 2, 0);
    lua_pushlstring(L, W->msg.p + s->name, s->value - s->name);
    lua_rawseti(L, -2, 1);
    lua_pushlstring(L, W->msg.p + s->value, vn);
    lua_rawseti(L, -2, 2);
    lua_rawseti(L, -2, i + 1);
  }
  lua_setfield(L, -2, "raw_headers");
  lua_pushboolean(L, hd->keep_alive);
  lua_setfield(L, -2, "keep_alive");
}


/*
** r:next([chunk]) -> "head", head | "body", bytes | "done", keep_alive |
** nothing (more bytes needed) | nil, msg (the response is malformed or
** over a limit, or the connection ended too soon)
*/
static int hc_next (lua_State *L) {
  HttpClient *C = check_hc(L);
  Http *H = &C->H;
  const char *chunk = NULL;
  size_t len = 0;
  Work *W;
  Buf tmp;
  if (lua_gettop(L) >= 2 && !lua_isnil(L, 2)) chunk = luaL_checklstring(L, 2, &len);
  if (H->status) return hc_pusherror(L, H);
  if (H->upgraded && !H->done) return 0;   /* what follows is not HTTP */
  if (H->parsing) {  /* a memory error left the parser between two states */
    http_fail(H, 1, "an earlier call failed (out of memory)");
    http_free(L, H);
    return hc_pusherror(L, H);
  }
  W = work_acquire(L, &H->work, 1);
  if (jr_unlikely(H->h.closed)) {  /* a finalizer run there closed it */
    work_release(L, W);
    return luaL_error(L, "%s is closed", HC_MT);
  }
  H->parsing = 1;
  hc_parse(L, C, chunk, len);
  if (H->status) {
    H->parsing = 0;
    work_release(L, W);
    http_free(L, H);     /* nothing more is read: keep no bytes */
    return hc_pusherror(L, H);
  }
  if (C->head_ready) {
    size_t body_at = H->body_at;
    HcHead hd;
    hd.status = C->status_code;
    hd.minor = H->minor;
    hd.keep_alive = C->keep_head;
    hd.nheaders = H->nheaders;
    hd.reason_end = H->target_end;
    C->head_ready = 0;
    tmp = W->msg; W->msg = H->cur; H->cur = tmp;
    tmp = W->spans; W->spans = H->spans; H->spans = tmp;
    H->cur.n = H->spans.n = 0;
    /* body bytes parsed with the head stay for the next call */
    if (W->msg.n > body_at)   /* (an empty head may have no buffer at all) */
      buf_add(L, &H->cur, W->msg.p + body_at, W->msg.n - body_at);
    H->body_at = 0;
    H->parsing = 0;
    lua_pushliteral(L, "head");
    hc_pushhead(L, W, &hd);
    work_release(L, W);
    return 2;
  }
  if (hc_body_pending(C) > 0) {
    size_t body_at = H->body_at;
    tmp = W->msg; W->msg = H->cur; H->cur = tmp;
    H->cur.n = 0;
    H->body_at = 0;
    H->parsing = 0;
    lua_pushliteral(L, "body");
    lua_pushlstring(L, W->msg.p + body_at, W->msg.n - body_at);
    work_release(L, W);
    return 2;
  }
  H->parsing = 0;
  work_release(L, W);
  if (H->done) {
    int keep = H->keep_alive && !H->upgraded;   /* before any push */
    H->done = 0;
    H->in_body = 0;
    H->cur.n = H->body_at = 0;
    if (H->upgraded) http_free(L, H);
    lua_pushliteral(L, "done");
    lua_pushboolean(L, keep);
    return 2;
  }
  return 0;
}


/*
** r:finish(): the connection ended. A body read until the close ends
** here; a response cut short makes next() fail. Call next() after it.
*/
static int hc_finish (lua_State *L) {
  HttpClient *C = check_hc(L);
  C->eof = 1;
  return 0;
}


/* r:no_body(): the response being read (or the next) answers a HEAD */
static int hc_no_body (lua_State *L) {
  HttpClient *C = check_hc(L);
  C->no_body = 1;
  return 0;
}


static int hc_tostring (lua_State *L) {
  HttpClient *C = (HttpClient *)luaL_checkudata(L, 1, HC_MT);
  lua_pushfstring(L, "jrpc.HttpClient (%d bytes buffered)",
                  (int)(C->H.in.n - C->H.off + C->H.cur.n));
  return 1;
}


/* core.http_client([opts]) -> a jrpc.HttpClient; upvalue 1: its metatable */
static int hc_new (lua_State *L) {
  static const char *const known[] = {"max_header_bytes", "max_headers",
    "max_body_bytes", NULL};
  HttpClient *C;
  int nolimit;
  if (lua_isnoneornil(L, 1)) { lua_settop(L, 0); lua_newtable(L); }
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_settop(L, 1);
  ud_checkoptions(L, 1, known, "http_client");
  lua_getfield(L, 1, "max_body_bytes");
  nolimit = lua_isboolean(L, -1) && !lua_toboolean(L, -1);  /* false */
  lua_pop(L, 1);
  C = (HttpClient *)lua_newuserdatauv(L, sizeof(HttpClient), 1);
  memset(C, 0, sizeof(*C));   /* empty first: __gc is safe from here on */
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_setmetatable(L, -2);
#if LUA_VERSION_NUM < 504
  lua_createtable(L, 1, 0);   /* LuaJIT: a userdata's env must be a table */
  lua_setfenv(L, -2);
#endif
  C->H.max_header_bytes = (size_t)http_opt(L, 1, "max_header_bytes",
                                           HC_DEF_HEADER_BYTES, 64, 80 * 1024);
  C->H.max_headers = (int)http_opt(L, 1, "max_headers", HC_DEF_HEADERS, 1, 1000);
  C->H.max_body_bytes = nolimit ? (size_t)-1 :
    (size_t)http_opt(L, 1, "max_body_bytes", HC_DEF_BODY_BYTES, 0,
                     HC_MAX_BODY_OPT);
  C->H.response = 1;
  llhttp_init(&C->H.P, HTTP_RESPONSE, &hc_settings);
  C->H.P.data = &C->H;
  return 1;
}

/* }=============================================================== */


/* {======================= the request writer ==================== */

/*
** core.http_request(method, target [, headers [, body]]) -> bytes
** The request line, the headers (sorted by name; Host is required), then
** Content-Length and the body when a body is given ("" too). Raises for
** a method that is not a token, a target with spaces or control
** characters, and what http_response refuses in headers.
*/
static int hc_request (lua_State *L) {
  HttpHeader hs[HTTP_MAX_WRITE_HEADERS];
  size_t mlen, tlen, blen = 0, i;
  const char *method = luaL_checklstring(L, 1, &mlen);
  const char *target = luaL_checklstring(L, 2, &tlen);
  const char *body = NULL;
  int n, j, host = 0;
  Buf *b = HTTP_OUT;
  luaL_argcheck(L, mlen > 0, 1, "empty method");
  for (i = 0; i < mlen; i++)
    luaL_argcheck(L, http_tchar((unsigned char)method[i]), 1,
                  "a method must be a token");
  luaL_argcheck(L, tlen > 0, 2, "empty target");
  for (i = 0; i < tlen; i++) {
    unsigned char c = (unsigned char)target[i];
    luaL_argcheck(L, c > 0x20 && c != 0x7f, 2,
                  "a target holds no spaces or control characters");
  }
  /* the body first: converting a number allocates (see http_response) */
  if (!lua_isnoneornil(L, 4)) body = luaL_checklstring(L, 4, &blen);
  n = http_checkheaders(L, 3, hs, HTTP_MAX_WRITE_HEADERS);
  for (j = 0; j < n; j++)
    host += (http_casecmp(hs[j].k, hs[j].kn, "host", 4) == 0);
  luaL_argcheck(L, host == 1, 3, "an HTTP/1.1 request needs one Host header");
  b->n = 0;
  buf_add(L, b, method, mlen);
  buf_addc(L, b, ' ');
  buf_add(L, b, target, tlen);
  buf_addlit(L, b, " HTTP/1.1\r\n");
  http_addheaders(L, b, hs, n);
  if (body != NULL) {
    char line[48];
    snprintf(line, sizeof(line), "Content-Length: %lu\r\n", (unsigned long)blen);
    buf_add(L, b, line, strlen(line));
  }
  buf_addlit(L, b, "\r\n");
  if (body != NULL) buf_add(L, b, body, blen);
  return http_pushout(L, b);
}

/* }=============================================================== */


static const luaL_Reg hc_methods[] = {
  {"next", hc_next},
  {"finish", hc_finish},
  {"no_body", hc_no_body},
  {NULL, NULL}
};


/* the jrpc.HttpClient metatable and core.http_client into the module on top */
static void hc_open (lua_State *L) {
  static const luaL_Reg meta[] = {
    {"__gc", hc_gc}, {"__close", hc_gc}, {"__tostring", hc_tostring},
    {NULL, NULL}
  };
  ud_newtype(L, HC_MT, meta, hc_methods, hc_new, "http_client");
}
