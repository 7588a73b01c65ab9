/*
** buf.c — a growable byte buffer whose memory comes from the state's
** allocator. A buffer lives inside a userdata (a codec), so a Lua error
** raised while it is being filled never leaks it: the owner's __gc frees it.
*/

/*
** Raise a memory error with the plain message Lua itself uses (also for
** cJSON's and the pending table's allocations).
*/
static int buf_nomem (lua_State *L) {
  lua_pushliteral(L, "not enough memory");
  return lua_error(L);
}


static void buf_free (lua_State *L, Buf *b) {
  void *ud;
  lua_Alloc f = lua_getallocf(L, &ud);
  if (b->p != NULL) f(ud, b->p, b->cap, 0);
  b->p = NULL;
  b->n = b->cap = 0;
}


/*
** Grow the buffer to hold 'extra' more bytes. Allocate first, then commit,
** so the buffer stays consistent when the allocation fails and we raise.
** (Out of line: the common case, room enough, is buf_reserve's one test.)
*/
static void buf_grow (lua_State *L, Buf *b, size_t extra) {
  void *ud;
  lua_Alloc f = lua_getallocf(L, &ud);
  size_t need = b->n + extra;
  size_t ncap = b->cap ? b->cap : 256;
  char *np;
  if (need < b->n) luaL_error(L, "buffer size overflow");
  while (ncap < need) ncap = (ncap > ((size_t)-1) / 2) ? need : ncap * 2;
  np = (char *)f(ud, b->p, b->cap, ncap);
  if (np == NULL) buf_nomem(L);
  b->p = np;
  b->cap = ncap;
}


/* make room for 'extra' more bytes; returns where they go */
static inline char *buf_reserve (lua_State *L, Buf *b, size_t extra) {
  if (jr_unlikely(b->cap - b->n < extra)) buf_grow(L, b, extra);
  return b->p + b->n;
}


#if !defined(JR_CORE_TLS)   /* jrpc.core_tls appends nothing */
static void buf_add (lua_State *L, Buf *b, const char *s, size_t len) {
  if (len == 0) return;  /* b->p may still be NULL: memcpy(NULL, s, 0) is UB */
  memcpy(buf_reserve(L, b, len), s, len);
  b->n += len;
}

/*
** buf_add for a length known when compiling (buf_addlit): inline, the
** copy becomes a few moves instead of a library call.
*/
static inline void buf_addfixed (lua_State *L, Buf *b, const char *s,
                                 size_t len) {
  memcpy(buf_reserve(L, b, len), s, len);
  b->n += len;
}

static void buf_addc (lua_State *L, Buf *b, char c) {
  if (jr_unlikely(b->n == b->cap)) buf_grow(L, b, 1);
  b->p[b->n++] = c;
}

/*
** Call where the buffer's owner has just emptied it or dropped most of it:
** past BUF_KEEP bytes of room with at most half that in use, the memory
** goes back (all of it when empty, else down to BUF_KEEP). Shrinking
** cannot fail by Lua's allocator contract; if an allocator fails anyway,
** the buffer just stays as it was.
*/
static void buf_fit (lua_State *L, Buf *b) {
  void *ud;
  lua_Alloc f;
  char *np;
  if (jr_likely(b->cap <= BUF_KEEP) || b->n > BUF_KEEP / 2) return;
  if (b->n == 0) {
    buf_free(L, b);
    return;
  }
  f = lua_getallocf(L, &ud);
  np = (char *)f(ud, b->p, b->cap, BUF_KEEP);
  if (np == NULL) return;
  b->p = np;
  b->cap = BUF_KEEP;
}
#endif
