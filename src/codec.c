/*
** codec.c — the codec userdata: one per connection. It owns the framer,
** the limits, the profile and the scratch buffers, so two codecs (two
** connections, two lua_States) never share anything.
** Methods get upvalue 1 = core.array_mt and upvalue 2 = core.object_mt.
*/

/* an array, not a literal: its one address is the codec's ud_open mark */
static const char CODEC_MT[] = "jrpc.Codec";

#define DEFAULT_MAX_BYTES  (16u * 1024u * 1024u)
#define DEFAULT_MAX_BATCH  1000
#define HEAD  48  /* room for "Content-Length: " + 20 digits + CRLFCRLF */

/* registry key of codec -> its last over-limit message (codec:oversize) */
static const char CODEC_OVERSIZE_KEY = 0;

/* methods carry the codec metatable as upvalue 6 (udata.c) */
#define check_codec(L)  ((Codec *)ud_check(L, lua_upvalueindex(6), CODEC_MT))


/*
** __gc and __close. A busy Work belongs to a call still running (this
** may be a finalizer inside it): only its own __gc frees it.
*/
static int codec_gc (lua_State *L) {
  Codec *C = (Codec *)luaL_checkudata(L, 1, CODEC_MT);
  buf_free(L, &C->F.in);
  buf_free(L, &C->out);
  buf_free(L, &C->alt);
  buf_free(L, &C->held);
  if (C->work != NULL && !C->work->busy) work_free(L, C->work);
  C->work = NULL;
  ud_close(&C->h);
  return 0;
}


/* {======================= options =============================== */

static lua_Integer opt_int (lua_State *L, const char *name, lua_Integer def,
                            lua_Integer lo, lua_Integer hi) {
  lua_Integer v;
  lua_getfield(L, 2, name);
  if (lua_isnil(L, -1)) v = def;
  else {
    lua_Number n = lua_tonumber(L, -1);
    if (lua_type(L, -1) != LUA_TNUMBER || !(n >= (lua_Number)lo && n <= (lua_Number)hi) ||
        n != (lua_Number)(lua_Integer)n)
      return luaL_error(L, "option '%s' must be an integer from %d to %d",
                        name, (int)(lo > 2147483647 ? 2147483647 : lo),
                        (int)(hi > 2147483647 ? 2147483647 : hi));
    v = (lua_Integer)n;
  }
  lua_pop(L, 1);
  return v;
}


static int opt_choice (lua_State *L, const char *name, const char *const list[],
                       int def) {
  int i;
  const char *s;
  lua_getfield(L, 2, name);
  if (lua_isnil(L, -1)) { lua_pop(L, 1); return def; }
  s = lua_tostring(L, -1);
  for (i = 0; s != NULL && list[i] != NULL; i++)
    if (strcmp(list[i], s) == 0) { lua_pop(L, 1); return i; }
  return luaL_error(L, "option '%s': unknown value '%s'", name,
                    s ? s : luaL_typename(L, -1));
}


/* raise on an option name the codec does not know (typos) */
static void check_option_names (lua_State *L) {
  static const char *const known[] = {"framing", "profile",
    "max_message_bytes", "max_depth", "max_batch", "null", "empty_dict", NULL};
  lua_pushnil(L);
  while (lua_next(L, 2)) {
    int i, ok = 0;
    const char *k = (lua_type(L, -2) == LUA_TSTRING) ? lua_tostring(L, -2) : "?";
    for (i = 0; known[i] != NULL; i++) ok |= (strcmp(known[i], k) == 0);
    if (!ok) luaL_error(L, "unknown codec option '%s'", k);
    lua_pop(L, 1);
  }
}

/*
** Push the table with weak keys kept in the registry under 'key' (codec ->
** a value of that codec's), made on first use.
*/
static void push_weak_registry (lua_State *L, const char *key) {
  lua_pushlightuserdata(L, (void *)key);
  lua_rawget(L, LUA_REGISTRYINDEX);
  if (!lua_istable(L, -1)) {
    lua_pop(L, 1);
    lua_createtable(L, 0, 1);
    lua_createtable(L, 0, 1);            /* its metatable: weak keys */
    lua_pushliteral(L, "k");
    lua_setfield(L, -2, "__mode");
    lua_setmetatable(L, -2);
    lua_pushlightuserdata(L, (void *)key);
    lua_pushvalue(L, -2);
    lua_rawset(L, LUA_REGISTRYINDEX);
  }
}


/*
** Option 'null': the value decoded JSON null becomes (any Lua value, e.g.
** vim.NIL); kept in a registry table with weak keys, by codec. Absent, nil
** or core.null: the default, and the codec pays nothing.
*/
static void opt_null (lua_State *L, Codec *C) {
  lua_getfield(L, 2, "null");
  if (lua_isnil(L, -1) ||
      (lua_type(L, -1) == LUA_TLIGHTUSERDATA && lua_touserdata(L, -1) == NULL)) {
    lua_pop(L, 1);
    return;
  }
  push_weak_registry(L, &CODEC_NULL_KEY);
  lua_pushvalue(L, 1);                   /* the codec */
  lua_pushvalue(L, -3);                  /* its null */
  lua_rawset(L, -3);
  lua_pop(L, 2);
  C->has_null = 1;
}


/*
** Option 'empty_dict': a metatable (Neovim's, the one vim.empty_dict()
** sets) that switches the codec to Neovim's convention for empty tables:
** a decoded empty object gets it, a table that has it encodes as an
** object, and an empty table without a marker encodes as [] (as
** vim.json does). Kept like 'null'; absent or nil: jrpc's own convention
** (an empty unmarked table is {}), and the codec pays nothing.
*/
static void opt_empty_dict (lua_State *L, Codec *C) {
  lua_getfield(L, 2, "empty_dict");
  if (lua_isnil(L, -1)) { lua_pop(L, 1); return; }
  if (!lua_istable(L, -1))
    luaL_error(L, "option 'empty_dict' must be a table (a metatable), not a %s",
               luaL_typename(L, -1));
  push_weak_registry(L, &CODEC_EMPTY_KEY);
  lua_pushvalue(L, 1);                   /* the codec */
  lua_pushvalue(L, -3);                  /* its metatable */
  lua_rawset(L, -3);
  lua_pop(L, 2);
  C->has_empty = 1;
}


/*
** Push the codec's value kept under 'key' (a CODEC_*_KEY table), return
** its stack index. Raw lookups with a light userdata key: nothing is
** allocated, no Lua code runs.
*/
static int push_codec_kept (lua_State *L, const char *key) {
  lua_pushlightuserdata(L, (void *)key);
  lua_rawget(L, LUA_REGISTRYINDEX);
  lua_pushvalue(L, 1);
  lua_rawget(L, -2);
  lua_remove(L, -2);
  return lua_gettop(L);
}


/* Push the codec's null value, return its stack index (0: core.null). */
static int push_codec_null (lua_State *L, const Codec *C) {
  return C->has_null ? push_codec_kept(L, &CODEC_NULL_KEY) : 0;
}


/* Push the codec's empty_dict metatable, return its stack index (0: none). */
static int push_codec_empty (lua_State *L, const Codec *C) {
  return C->has_empty ? push_codec_kept(L, &CODEC_EMPTY_KEY) : 0;
}


/*
** The codec's params shapes (codec:shapes) are its user value 2 on Lua
** 5.4, its environment's [2] on LuaJIT (work_setuv keeps it there).
*/
static int push_codec_shapes (lua_State *L, const Codec *C) {
  if (!C->has_shapes) return 0;
#if LUA_VERSION_NUM >= 504
  lua_getiuservalue(L, 1, 2);
#else
  lua_getfenv(L, 1);
  lua_rawgeti(L, -1, 2);
  lua_remove(L, -2);
#endif
  if (!lua_istable(L, -1)) { lua_pop(L, 1); return 0; }  /* never, but cheap */
  return lua_gettop(L);
}


/*
** codec:shapes(t): from now on `next` checks the params of requests for
** the methods in t (method -> a jrpc.params shape: see shape.c); the
** table is kept, not copied, so its owner may change it between calls.
** nil: check none.
*/
static int codec_shapes (lua_State *L) {
  Codec *C = check_codec(L);
  int given = !lua_isnoneornil(L, 2);
  if (given) luaL_checktype(L, 2, LUA_TTABLE);
  lua_settop(L, 2);
#if LUA_VERSION_NUM >= 504
  lua_setiuservalue(L, 1, 2);
#else
  lua_getfenv(L, 1);  /* the Work's anchor; work_setuv carries [2] over */
  lua_insert(L, 2);
  lua_rawseti(L, 2, 2);
#endif
  C->has_shapes = given;
  return 0;
}

/* }=============================================================== */


/* core.codec([opts]) */
static int codec_new (lua_State *L) {
  static const char *const framings[] = {"ndjson", "lsp", NULL};
  static const char *const profiles[] = {"jsonrpc", "mcp", "lsp", NULL};
  Codec *C;
  int lsp;
  lua_Integer max_bytes;
  if (lua_isnoneornil(L, 1)) { lua_settop(L, 0); lua_newtable(L); }
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_settop(L, 1);
  C = (Codec *)lua_newuserdatauv(L, sizeof(Codec), 2);  /* Work, shapes */
  memset(C, 0, sizeof(*C));   /* empty first: __gc is safe from here on */
  luaL_setmetatable(L, CODEC_MT);
#if LUA_VERSION_NUM < 504
  lua_createtable(L, 1, 0);   /* LuaJIT: a userdata's env must be a table */
  lua_setfenv(L, -2);
#endif
  lua_insert(L, 1);           /* codec at 1, options at 2 */
  check_option_names(L);
  lsp = opt_choice(L, "framing", framings, 0);
  C->profile = opt_choice(L, "profile", profiles, PROFILE_JSONRPC);
  max_bytes = opt_int(L, "max_message_bytes", DEFAULT_MAX_BYTES, 1,
                      (lua_Integer)1 << 40);
  /* 2 at least: an error reply nests its error object in the envelope */
  C->max_depth = (int)opt_int(L, "max_depth", DEFAULT_MAX_DEPTH, 2,
                              DEPTH_CEILING);
  C->max_batch = (int)opt_int(L, "max_batch", DEFAULT_MAX_BATCH, 1,
                              1 << 30);
  opt_null(L, C);
  opt_empty_dict(L, C);
  frame_init(&C->F, lsp, (size_t)max_bytes);
  ud_open(&C->h, CODEC_MT);   /* complete: its methods may take it */
  lua_settop(L, 1);
  return 1;
}


static void msg_ctx (Codec *C, Work *W, MsgCtx *M, int null, int emt,
                     int shapes) {
  M->profile = C->profile;
  M->max_batch = C->max_batch;
  M->S.max_depth = C->max_depth;
  M->scratch = &W->scratch;
  M->spans = &W->spans;
  M->tree = &W->tree;
  M->amt = AMT;
  M->omt = OMT;
  M->null = null;
  M->emt = emt;
  M->shapes = shapes;
  M->kinds = MSG_KINDS;
  M->keys.table = KEY_CACHE;
  M->keys.bytes = KEY_BYTES;
  M->keys.K = NULL;
}


/* {======================= reading =============================== */

/* append the chunk at argument 2 (feed and next share it) */
static void feed_arg (lua_State *L, Codec *C) {
  size_t len;
  const char *s = luaL_checklstring(L, 2, &len);
  if (C->F.eof) luaL_error(L, "codec: feed after finish");
  frame_feed(L, &C->F, s, len);
}


static int codec_feed (lua_State *L) {
  feed_arg(L, check_codec(L));
  return 0;
}


static int codec_finish (lua_State *L) {
  check_codec(L)->F.eof = 1;
  return 0;
}


static int codec_want (lua_State *L) {
  lua_pushinteger(L, (lua_Integer)frame_want(&check_codec(L)->F));
  return 1;
}


/*
** codec:memory(): the bytes of buffer memory the codec keeps between calls
** (its input, output and held bytes, its decoder's scratch), to check that
** a large message's memory went back (see buf_fit).
*/
static int codec_memory (lua_State *L) {
  Codec *C = check_codec(L);
  size_t n = C->F.in.cap + C->out.cap + C->alt.cap + C->held.cap;
  if (C->work != NULL) n += C->work->scratch.cap + C->work->spans.cap + C->work->msg.cap;
  lua_pushinteger(L, (lua_Integer)n);
  return 1;
}


/*
** A message over max_message_bytes (frame.c), told by its first bytes
** [p, e), read before anything is allocated (they are in the framer's
** input). The event is the one it always was (reply due, id null), but a
** call whose id could be read is answered with that id. What is known of
** it is kept for codec:oversize() (a peer does not answer a response):
** registry[CODEC_OVERSIZE_KEY] (weak keys) maps the codec to {size, limit,
** kind, id}.
*/
static int push_too_large (lua_State *L, Codec *C, Work *W, FrameEvent *ev,
                           const char *p, const char *e, lua_Integer size) {
  static const char *const kinds[] = {NULL, "response", "call", "junk"};
  FramePeek pk;
  lua_Integer limit = (lua_Integer)C->F.max_bytes;
  frame_peek(p, e, &pk, 0);  /* copies what it keeps: [p, e) is not read again */
  if (W != NULL) work_release(L, W);
  luaL_checkstack(L, 12, "codec:next");
  msg_pushinvalid(L, ev->code, ev->msg, pk.kind == PEEK_CALL && pk.idlen > 0 ? pk.id : NULL,
                  pk.idlen, ev->reply, ev->detail);
  push_weak_registry(L, &CODEC_OVERSIZE_KEY);
  lua_pushvalue(L, 1);                   /* the codec */
  lua_createtable(L, 0, 4);
  if (size >= 0) {
    lua_pushinteger(L, size);
    lua_setfield(L, -2, "size");
  }
  lua_pushinteger(L, limit);
  lua_setfield(L, -2, "limit");
  if (kinds[pk.kind] != NULL) {
    lua_pushstring(L, kinds[pk.kind]);
    lua_setfield(L, -2, "kind");
  }
  if (pk.idlen > 0) {
    lua_pushlstring(L, pk.id, pk.idlen);
    lua_setfield(L, -2, "id");
  }
  lua_rawset(L, -3);
  lua_pop(L, 1);
  return 6;
}


/*
** codec:oversize(): what is known of the last message dropped for being
** over max_message_bytes (see push_too_large), or nothing.
*/
static int codec_oversize (lua_State *L) {
  check_codec(L);
  lua_settop(L, 1);
  lua_pushlightuserdata(L, (void *)&CODEC_OVERSIZE_KEY);
  lua_rawget(L, LUA_REGISTRYINDEX);
  if (!lua_istable(L, -1)) return 0;
  lua_pushvalue(L, 1);
  lua_rawget(L, -2);
  return lua_isnil(L, -1) ? 0 : 1;
}


/*
** Decode the message [p, p + len) as a copy in W (see codec_next), then
** release W: the values of one event.
*/
static int decode_in (lua_State *L, Codec *C, Work *W, const char *p,
                      size_t len, int null, int emt, int shapes) {
  MsgCtx M;
  int n;
  W->msg.n = 0;
  memcpy(buf_reserve(L, &W->msg, len + 1), p, len);
  msg_ctx(C, W, &M, null, emt, shapes);
  n = msg_decode(L, &M, W->msg.p, W->msg.p + len);
  work_release(L, W);
  return n;
}


/*
** codec:next([chunk]): feed 'chunk' if given, then the next message.
** The message is copied into this call's Work before decoding: a
** finalizer run while values are pushed may feed this codec (the input
** buffer then moves) or read from it (that reentrant next takes the
** following message, with a Work of its own). A free resident Work is
** taken only once the framer found a message (an empty next, which ends
** every drain, takes none): taking it allocates nothing, so no Lua code
** runs from frame_next to the copy. Making a new Work allocates (a
** finalizer could feed there, under the pointers frame_next returns), so
** when one must be made, it is made before the framer is asked.
*/
static int codec_next (lua_State *L) {
  Codec *C = check_codec(L);
  Work *W = NULL;
  const char *p = NULL, *e = NULL;  /* an event sets them for push_too_large */
  FrameEvent ev;
  int n, null, emt, top = lua_gettop(L);  /* gettop: cheap on LuaJIT */
  int more = top >= 3 && lua_toboolean(L, 3), shapes;
  if (top >= 2 && !lua_isnil(L, 2))
    feed_arg(L, C);
  null = push_codec_null(L, C);
  emt = push_codec_empty(L, C);
  shapes = push_codec_shapes(L, C);
  if (jr_unlikely(C->work == NULL || C->work->busy))
    W = work_acquire(L, &C->work, 1);
  switch (frame_next(&C->F, &p, &e, &ev)) {
    case FR_MSG: {
      if (W == NULL) W = work_acquire(L, &C->work, 1);  /* the free resident */
      n = decode_in(L, C, W, p, (size_t)(e - p), null, emt, shapes);
      if (more && n == 5) {  /* a request (5 values), asked: bytes left? */
        lua_pushboolean(L, C->F.off < C->F.in.n);
        n = 6;
      }
      return n;
    }
    case FR_EVENT:
      if (ev.msg == FRAME_TOO_LARGE)  /* Content-Length: the body's size */
        return push_too_large(L, C, W, &ev, p, e,
                              C->F.lsp ? (lua_Integer)C->F.discard : -1);
      if (W != NULL) work_release(L, W);
      return msg_pushinvalid(L, ev.code, ev.msg, NULL, 0, ev.reply, ev.detail);
    default:
      if (W != NULL) work_release(L, W);
      return 0;
  }
}


/*
** codec:split([chunk]): feed 'chunk' if given, then the next message's
** text as the framer found it, not decoded; or false and the detail of
** what the framer skipped instead of a message (a line that is no header,
** a message over the limit); or nothing when more bytes are needed. A tap
** that shows a stream message by message splits it as the reader does.
** The text is copied before anything else is pushed: a finalizer run by
** an allocation may feed this codec and move its input buffer.
*/
static int codec_split (lua_State *L) {
  Codec *C = check_codec(L);
  const char *p = NULL, *e = NULL;
  FrameEvent ev;
  if (lua_gettop(L) >= 2 && !lua_isnil(L, 2))
    feed_arg(L, C);
  switch (frame_next(&C->F, &p, &e, &ev)) {
    case FR_MSG:
      if (!C->F.lsp && e > p && e[-1] == '\r') e--;  /* a CRLF line end */
      lua_pushlstring(L, p, (size_t)(e - p));
      return 1;
    case FR_EVENT:
      lua_pushboolean(L, 0);
      lua_pushstring(L, ev.detail);
      return 2;
    default:
      return 0;
  }
}


/*
** codec:decode(text): 'text' as one whole message that its transport
** framed (an HTTP body: newlines in it are whitespace), with this codec's
** profile, limits and shapes; the values of codec:next, the framer
** neither used nor touched. Text over max_message_bytes is the
** over-limit event, as next gives it (its size known).
*/
static int codec_decode (lua_State *L) {
  Codec *C = check_codec(L);
  size_t len;
  const char *s = luaL_checklstring(L, 2, &len);
  int null, emt, shapes;
  lua_settop(L, 2);
  null = push_codec_null(L, C);
  emt = push_codec_empty(L, C);
  shapes = push_codec_shapes(L, C);
  if (len > C->F.max_bytes) {
    FrameEvent ev;
    frame_event(&ev, JR_INVALID_REQUEST, FRAME_TOO_LARGE, 1,
                "message larger than the limit of %lu bytes",
                (unsigned long)C->F.max_bytes);
    return push_too_large(L, C, NULL, &ev, s,
                          s + (len < PEEK_BYTES ? len : PEEK_BYTES),
                          (lua_Integer)len);
  }
  /* 's' is held by the stack: a finalizer run while the Work is made
     cannot move it */
  return decode_in(L, C, work_acquire(L, &C->work, 1), s, len, null, emt,
                   shapes);
}

/* }=============================================================== */


/* {======================= writing =============================== */

/*
** Writers fetch every argument before out_begin: converting a number to
** a string allocates, and a finalizer run there may write with this
** codec. From out_begin on no Lua code runs (encoding uses raw access),
** and out_push copies the text before its GC step.
*/

/* check that a rawid argument is one JSON scalar id (misuse raises) */
static void check_rawid (lua_State *L, int arg, const char *s, size_t len) {
  Scan S;
  const char *end;
  if (len > 0 && len <= 15 && (*s != '0' || len == 1)) {  /* most ids: 1, 2, ... */
    size_t i = 0;
    while (i < len && num_isdigit(s[i])) i++;
    if (i == len) return;
  }
  memset(&S, 0, sizeof(S));
  S.max_depth = 0;
  end = (len > 0 && (*s == '"' || *s == '-' || num_isdigit(*s) || *s == 'n'))
      ? scan_value(&S, s, s + len, 0) : NULL;
  if (end != s + len) luaL_argerror(L, arg, "not the JSON text of an id");
}


/*
** The id argument of a writer: its JSON text (a rawid string, checked),
** or an integer written as its digits into 'tmp' (NUM_IDTEXT bytes), so
** a client's integer ids need no string of their own.
*/
static const char *check_idarg (lua_State *L, int arg, char *tmp, size_t *len) {
  const char *s;
  if (lua_type(L, arg) != LUA_TSTRING) {  /* a server's rawids are strings: one test */
    *len = num_idtext(L, arg, tmp);
    if (*len > 0) return tmp;
  }
  s = luaL_checklstring(L, arg, len);
  check_rawid(L, arg, s, *len);
  return s;
}


/*
** Start a message in C->out. (C->alt is never fitted: while a writer runs
** in a finalizer, C->alt holds the bytes of the push it interrupted.)
*/
static void out_begin (lua_State *L, Codec *C) {
  C->out.n = 0;
  buf_fit(L, &C->out);
  buf_reserve(L, &C->out, HEAD + 64);
  C->out.n = HEAD;
}


/*
** Push the 'len' bytes at 'p', which lie in C->out. LuaJIT's
** lua_pushlstring may take a GC step, and so run finalizers, before it
** copies them, and a finalizer that writes with this codec would write
** over them. So while the string is made the writers use the other
** buffer (the two swap, and swap back after). One spare is enough: a
** finalizer is never interrupted by another (both VMs stop the collector
** while one runs). If the push raises, the two just stay swapped.
*/
static void push_out (lua_State *L, Codec *C, const char *p, size_t len) {
  Buf mine = C->out;
  C->out = C->alt;
  C->alt = mine;
  lua_pushlstring(L, p, len);
  mine = C->out;
  C->out = C->alt;
  C->alt = mine;
}


/*
** Push the message written after HEAD, framed unless 'bare'. A framed
** message of a holding codec is appended to its held bytes instead, and
** the result is true: no string is made for it (see codec:hold).
*/
static int out_push (lua_State *L, Codec *C, int bare) {
  Buf *b = &C->out;
  size_t len = b->n - HEAD;
  const char *p = b->p + HEAD;
  if (bare) {
    push_out(L, C, p, len);
    return 1;
  }
  if (!C->F.lsp) {
    buf_addc(L, b, '\n');
    p = b->p + HEAD;  /* the buffer may have moved */
    len++;
  }
  else {  /* write the header right to left, just before the body */
    static const char name[] = "Content-Length: ";
    char *h = b->p + HEAD;
    size_t n = len;
    *--h = '\n'; *--h = '\r'; *--h = '\n'; *--h = '\r';
    do { *--h = (char)('0' + n % 10); n /= 10; } while (n != 0);
    h -= sizeof(name) - 1;
    memcpy(h, name, sizeof(name) - 1);
    len += (size_t)(b->p + HEAD - h);
    p = h;
  }
  if (C->holding) {
    buf_add(L, &C->held, p, len);  /* the state's allocator: no Lua code runs */
    lua_pushboolean(L, 1);
  }
  else push_out(L, C, p, len);
  return 1;
}


static int codec_result (lua_State *L) {
  Codec *C = check_codec(L);
  size_t idlen;
  char tmp[NUM_IDTEXT];
  const char *id = check_idarg(L, 2, tmp, &idlen);
  Enc E;
  int emt;
  luaL_checkany(L, 3);
  lua_settop(L, 4);  /* the metatable goes above the arguments */
  emt = push_codec_empty(L, C);
  out_begin(L, C);
  buf_addlit(L, &C->out, "{\"jsonrpc\":\"2.0\",\"result\":");
  if (!enc_into(L, &C->out, 3, AMT, OMT, emt, C->max_depth - 1, &E))
    return enc_pushfail(L, &E);
  buf_addlit(L, &C->out, ",\"id\":");
  buf_add(L, &C->out, id, idlen);
  buf_addc(L, &C->out, '}');
  return out_push(L, C, lua_toboolean(L, 4));
}


/*
** An error code: an integer within ±2^53, so that every reader (a double in
** cJSON, in JavaScript, in LuaJIT) gets back exactly the code we wrote.
*/
static long long check_code (lua_State *L, int arg) {
  long long v;
#if !defined(JR_NO_INTEGERS)
  if (lua_isinteger(L, arg)) v = (long long)lua_tointeger(L, arg);
  else
#endif
  {
    lua_Number n = luaL_checknumber(L, arg);
    luaL_argcheck(L, num_fits_int64((double)n), arg, "error code must be an integer");
    v = (long long)n;
  }
  luaL_argcheck(L, v >= -9007199254740992LL && v <= 9007199254740992LL, arg,
                "error code must be within 2^53");
  return v;
}


static int codec_error (lua_State *L) {
  Codec *C = check_codec(L);
  size_t idlen, mlen;
  char tmp[NUM_IDTEXT];
  const char *id = check_idarg(L, 2, tmp, &idlen);
  long long code = check_code(L, 3);
  const char *msg = luaL_checklstring(L, 4, &mlen);
  int emt;
  Enc E;
  lua_settop(L, 6);  /* the metatable goes above the arguments */
  emt = push_codec_empty(L, C);
  out_begin(L, C);
  buf_addlit(L, &C->out, "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":");
  enc_integer(L, &C->out, code);
  buf_addlit(L, &C->out, ",\"message\":");
  if (!enc_string(L, &C->out, msg, mlen)) {
    lua_pushnil(L);
    lua_pushliteral(L, "cannot encode an error message that is not valid UTF-8");
    return 2;
  }
  if (!lua_isnoneornil(L, 5)) {
    buf_addlit(L, &C->out, ",\"data\":");
    if (!enc_into(L, &C->out, 5, AMT, OMT, emt, C->max_depth - 2, &E))
      return enc_pushfail(L, &E);
  }
  buf_addlit(L, &C->out, "},\"id\":");
  buf_add(L, &C->out, id, idlen);
  buf_addc(L, &C->out, '}');
  return out_push(L, C, lua_toboolean(L, 6));
}


/* write ,"params":<params> for the value at 'arg' (absent: nothing) */
static int add_params (lua_State *L, Codec *C, int arg, int emt, Enc *E) {
  if (lua_isnoneornil(L, arg) ||  /* nil and core.null: no params member */
      (lua_type(L, arg) == LUA_TLIGHTUSERDATA && lua_touserdata(L, arg) == NULL))
    return 1;
  if (lua_type(L, arg) != LUA_TTABLE) {
    snprintf(E->err, sizeof(E->err), "params must be a table, not a %s",
             luaL_typename(L, arg));
    return 0;
  }
  buf_addlit(L, &C->out, ",\"params\":");
  return enc_into(L, &C->out, arg, AMT, OMT, emt, C->max_depth - 1, E);
}


static void add_method (lua_State *L, Codec *C, int arg, const char *m,
                        size_t len) {
  buf_addlit(L, &C->out, "{\"jsonrpc\":\"2.0\",\"method\":");
  if (!enc_string(L, &C->out, m, len))
    luaL_argerror(L, arg, "method name is not valid UTF-8");
}


static int codec_request (lua_State *L) {
  Codec *C = check_codec(L);
  size_t idlen;
  char tmp[NUM_IDTEXT];
  const char *id = check_idarg(L, 2, tmp, &idlen);
  size_t mlen;
  const char *m = luaL_checklstring(L, 3, &mlen);  /* before out_begin */
  int emt;
  Enc E;
  lua_settop(L, 5);  /* the metatable goes above the arguments */
  emt = push_codec_empty(L, C);
  out_begin(L, C);
  add_method(L, C, 3, m, mlen);
  if (!add_params(L, C, 4, emt, &E)) return enc_pushfail(L, &E);
  buf_addlit(L, &C->out, ",\"id\":");
  buf_add(L, &C->out, id, idlen);
  buf_addc(L, &C->out, '}');
  return out_push(L, C, lua_toboolean(L, 5));
}


static int codec_notification (lua_State *L) {
  Codec *C = check_codec(L);
  size_t mlen;
  const char *m = luaL_checklstring(L, 2, &mlen);  /* before out_begin */
  int emt;
  Enc E;
  lua_settop(L, 4);  /* the metatable goes above the arguments */
  emt = push_codec_empty(L, C);
  out_begin(L, C);
  add_method(L, C, 2, m, mlen);
  if (!add_params(L, C, 3, emt, &E)) return enc_pushfail(L, &E);
  buf_addc(L, &C->out, '}');
  return out_push(L, C, lua_toboolean(L, 4));
}


/* codec:hold(on): while on, framed writers append to the held bytes */
static int codec_hold (lua_State *L) {
  Codec *C = check_codec(L);
  C->holding = lua_toboolean(L, 2);
  return 0;
}


/* codec:append(bytes): add bytes (already framed) to the held bytes */
static int codec_append (lua_State *L) {
  Codec *C = check_codec(L);
  size_t len;
  const char *s = luaL_checklstring(L, 2, &len);
  buf_add(L, &C->held, s, len);
  return 0;
}


#define TAKE_LOCAL  4096  /* held bytes copied on the C stack before the push */

/*
** codec:take() -> the held bytes as one string (emptied), or nothing when
** there are none. The bytes are copied to memory of this call's own
** before the string is made, with no Lua code between reading and
** emptying them: a finalizer run by an allocation (LuaJIT's
** lua_pushlstring may run one before it copies) then appends to an empty
** buffer, for the next take, and cannot write over or move what this
** take returns. More than TAKE_LOCAL bytes go through a userdata, made
** first; a finalizer run while it is made may change what is held, so the
** size is read again after.
*/
static int codec_take (lua_State *L) {
  Codec *C = check_codec(L);
  char local[TAKE_LOCAL];
  char *copy = local;
  size_t n;
  for (;;) {
    n = C->held.n;
    if (n == 0) return 0;
    if (n <= sizeof(local)) break;
    copy = (char *)lua_newuserdatauv(L, n, 0);
    if (C->held.n == n) break;
    lua_pop(L, 1);  /* a finalizer changed what is held meanwhile */
    copy = local;
  }
  memcpy(copy, C->held.p, n);
  C->held.n = 0;
  buf_fit(L, &C->held);  /* frees no Lua object: runs no Lua code */
  lua_pushlstring(L, copy, n);
  if (copy != local) lua_remove(L, -2);
  return 1;
}


static int codec_frame (lua_State *L) {
  Codec *C = check_codec(L);
  size_t len;
  const char *s = luaL_checklstring(L, 2, &len);
  out_begin(L, C);
  buf_add(L, &C->out, s, len);
  return out_push(L, C, 0);
}

/* }=============================================================== */


static int codec_tostring (lua_State *L) {
  Codec *C = (Codec *)luaL_checkudata(L, 1, CODEC_MT);
  lua_pushfstring(L, "jrpc.Codec (%s, %d bytes buffered)",
                  C->F.lsp ? "lsp" : "ndjson", (int)(C->F.in.n - C->F.off));
  return 1;
}


static const luaL_Reg codec_methods[] = {
  {"feed", codec_feed},
  {"finish", codec_finish},
  {"want", codec_want},
  {"memory", codec_memory},
  {"oversize", codec_oversize},
  {"next", codec_next},
  {"decode", codec_decode},
  {"split", codec_split},
  {"shapes", codec_shapes},
  {"result", codec_result},
  {"error", codec_error},
  {"request", codec_request},
  {"notification", codec_notification},
  {"frame", codec_frame},
  {"hold", codec_hold},
  {"append", codec_append},
  {"take", codec_take},
  {NULL, NULL}
};


/* create the codec metatable; expects array_mt, object_mt on the top */
static void codec_open (lua_State *L) {
  static const luaL_Reg meta[] = {
    {"__gc", codec_gc}, {"__close", codec_gc}, {"__tostring", codec_tostring},
    {NULL, NULL}
  };
  lua_pushvalue(L, -2);  /* array_mt: upvalue 1 */
  lua_pushvalue(L, -2);  /* object_mt: upvalue 2 */
  msg_kinds(L);          /* the kind strings: upvalue 3 (MSG_KINDS) */
  tolua_keycache(L);     /* object keys: upvalues 4 and 5 (KEY_CACHE) */
  ud_newmeta(L, CODEC_MT, meta, codec_methods, 5);  /* metatable: upvalue 6 */
}
