/*
** buf.c — a growable byte buffer whose memory comes from the state's
** allocator. A buffer lives inside a userdata (a codec), so a Lua error
** raised while it is being filled never leaks it: the owner's __gc frees it.
*/

/* raise a memory error with the plain message Lua itself uses */
static int jr_nomem (lua_State *L) {
  lua_pushliteral(L, "not enough memory");
  return lua_error(L);
}


/* is 'd' an integral value that a 64-bit integer holds? (NaN is not) */
static int fits_int64 (double d) {
  return d >= -9223372036854775808.0 && d < 9223372036854775808.0 &&
         d == (double)(long long)d;
}


/* parse an integer token into '*v'; 0 when it does not fit 64 bits */
static int token_int64 (const char *p, const char *e, long long *v) {
  int neg = (*p == '-');
  unsigned long long u = 0, lim;
  if (neg) p++;
  lim = neg ? (unsigned long long)LLONG_MAX + 1ULL : (unsigned long long)LLONG_MAX;
  for (; p < e; p++) {
    unsigned d = (unsigned)(*p - '0');
    if (u > (lim - d) / 10) return 0;
    u = u * 10 + d;
  }
  *v = neg ? (long long)(0ULL - u) : (long long)u;
  return 1;
}


typedef struct Buf {
  char *p;
  size_t n;    /* bytes in use */
  size_t cap;  /* bytes allocated */
} Buf;


static void buf_free (lua_State *L, Buf *b) {
  void *ud;
  lua_Alloc f = lua_getallocf(L, &ud);
  if (b->p != NULL) f(ud, b->p, b->cap, 0);
  b->p = NULL;
  b->n = b->cap = 0;
}


/*
** Make room for 'extra' more bytes. Allocate first, then commit, so the
** buffer stays consistent when the allocation fails and we raise.
*/
static char *buf_reserve (lua_State *L, Buf *b, size_t extra) {
  if (jr_unlikely(b->cap - b->n < extra)) {
    void *ud;
    lua_Alloc f = lua_getallocf(L, &ud);
    size_t need = b->n + extra;
    size_t ncap = b->cap ? b->cap : 256;
    char *np;
    if (need < b->n) luaL_error(L, "buffer size overflow");
    while (ncap < need) ncap = (ncap > ((size_t)-1) / 2) ? need : ncap * 2;
    np = (char *)f(ud, b->p, b->cap, ncap);
    if (np == NULL) jr_nomem(L);
    b->p = np;
    b->cap = ncap;
  }
  return b->p + b->n;
}


static void buf_add (lua_State *L, Buf *b, const char *s, size_t len) {
  if (len == 0) return;  /* b->p may still be NULL: memcpy(NULL, s, 0) is UB */
  memcpy(buf_reserve(L, b, len), s, len);
  b->n += len;
}

#define buf_addlit(L, b, s)  buf_add(L, b, "" s, sizeof(s) - 1)

static void buf_addc (lua_State *L, Buf *b, char c) {
  if (jr_unlikely(b->n == b->cap)) buf_reserve(L, b, 1);
  b->p[b->n++] = c;
}
