/*
** work.c — per-call temporaries of a decode: the cJSON tree, the
** scratch buffers and a copy of the message bytes, in a userdata of
** their own (jrpc.Work).
**
** Why: Lua runs __gc finalizers at allocation points, and a decode
** allocates for every value it pushes. A finalizer may call core.decode,
** or feed and read the very codec that is decoding. If the temporaries
** belonged to the codec, that inner call would free the tree the outer
** call is walking, or move the input buffer under its pointers. So each
** call owns its Work: nothing Lua code can do while the call runs frees
** or moves what it uses.
**
** Cheap on the hot path: a codec keeps one resident Work (anchored by
** the codec's user value, plus a C pointer). A call takes it when it is
** not busy (anchors it on its own stack with one API call and marks it
** busy); otherwise, a reentrant call, or a call after one that died by a
** memory error and left it busy, makes a new Work the resident one. The
** old one lives as long as the call using it anchors it; its __gc frees
** what it holds.
*/

/*
** jrpc.core_tls has its own copy of this file and its own type: its Works
** never hold a tree, and it links no cJSON, so its __gc frees none; it
** must not take over the core's jrpc.Work (ud_newmeta refills by name).
*/
#if defined(JR_CORE_TLS)
#define WORK_MT    "jrpc.TlsWork"
#else
#define WORK_MT    "jrpc.Work"
#endif

static void work_free (lua_State *L, Work *W) {
#if !defined(JR_CORE_TLS)
  if (W->tree != NULL) { cJSON_Delete(W->tree); W->tree = NULL; }
#endif
  buf_free(L, &W->scratch);
  buf_free(L, &W->spans);
  buf_free(L, &W->msg);
}


static int work_gc (lua_State *L) {
  Work *W = (Work *)luaL_checkudata(L, 1, WORK_MT);
  work_free(L, W);
  W->h.closed = 1;
  return 0;
}


/*
** Push the anchor of the resident Work of the userdata at 'ud': on Lua 5.4
** its user value 1, the Work itself; on LuaJIT its environment, a table
** holding the Work at [1] that nothing ever changes (a new resident gets
** a new table), so one API call anchors the Work on either.
*/
static void work_getuv (lua_State *L, int ud) {
#if LUA_VERSION_NUM >= 504
  lua_getiuservalue(L, ud, 1);
#else
  lua_getfenv(L, ud);
#endif
}


/*
** Make the Work on top the resident one of 'ud' (the Work stays pushed).
** On LuaJIT the new environment keeps the old one's [2] (a codec's
** shapes: see codec_shapes).
*/
static void work_setuv (lua_State *L, int ud) {
#if LUA_VERSION_NUM >= 504
  lua_pushvalue(L, -1);
  lua_setiuservalue(L, ud, 1);
#else
  lua_createtable(L, 2, 0);  /* a new table: the old one may be anchored */
  lua_pushvalue(L, -2);
  lua_rawseti(L, -2, 1);
  lua_getfenv(L, ud);
  lua_rawgeti(L, -1, 2);
  lua_rawseti(L, -3, 2);
  lua_pop(L, 1);
  lua_setfenv(L, ud);
#endif
}


/*
** Take a Work for this call, for the owner at 'owner' (a codec whose
** resident Work is '*resident'), and push its anchor: the Work stays
** alive until the call returns. Busy from here on. Taking a free
** resident Work allocates nothing; making a new one allocates (a
** finalizer may run there).
*/
static Work *work_acquire (lua_State *L, Work **resident, int owner) {
  Work *W = *resident;
  if (jr_likely(W != NULL && !W->busy))
    work_getuv(L, owner);  /* no allocation between the test and busy = 1 */
  else {
    owner = lua_absindex(L, owner);
    W = (Work *)lua_newuserdatauv(L, sizeof(Work), 0);
    memset(W, 0, sizeof(*W));
    luaL_setmetatable(L, WORK_MT);
    work_setuv(L, owner);  /* the old resident, if busy, is its caller's */
    *resident = W;
  }
  W->busy = 1;
  return W;
}


/* the call is done with 'W': keep no big buffers, free it for the next */
static void work_release (lua_State *L, Work *W) {
  if (W->scratch.cap > BUF_KEEP) buf_free(L, &W->scratch);
  if (W->spans.cap > BUF_KEEP) buf_free(L, &W->spans);
  if (W->msg.cap > BUF_KEEP) buf_free(L, &W->msg);
  W->busy = 0;
}


static void work_open (lua_State *L) {
  static const luaL_Reg meta[] = {{"__gc", work_gc}, {NULL, NULL}};
  ud_newmeta(L, WORK_MT, meta, NULL, 0);
}
