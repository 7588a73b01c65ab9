/*
** crypto.c — what MRTR's requestState needs: HMAC-SHA-256, bytes from the
** CSPRNG and a constant-time comparison, all from OpenSSL's libcrypto
** (never hand-written). Pure functions; the output is built in a stack
** buffer or a luaL_Buffer. Part of jrpc.core_tls (core_tls.c), which
** jrpc.core loads on the first use of one of them (core.c).
*/

#define CRYPTO_MAX_RANDOM  (1 << 20)


/* core.hmac_sha256(key, msg) -> 32 raw bytes */
static int crypto_hmac_sha256 (lua_State *L) {
  size_t klen, mlen;
  const char *key = luaL_checklstring(L, 1, &klen);
  const char *msg = luaL_checklstring(L, 2, &mlen);
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int mdlen = 0;
  luaL_argcheck(L, klen <= INT_MAX, 1, "key too long");
  if (HMAC(EVP_sha256(), key, (int)klen, (const unsigned char *)msg, mlen,
           md, &mdlen) == NULL)
    return luaL_error(L, "HMAC-SHA-256 failed in libcrypto");
  lua_pushlstring(L, (const char *)md, mdlen);
  return 1;
}


/*
** core.random_bytes(n) -> n bytes, or nil, msg when the CSPRNG cannot
** give them (not seeded: an environment failure, like an I/O error).
** Drawn into a luaL_Buffer LUAL_BUFFERSIZE bytes at a time: a key or an
** id (tens of bytes) fits its first block, on the C stack.
*/
static int crypto_random_bytes (lua_State *L) {
  lua_Integer n = luaL_checkinteger(L, 1);
  size_t left;
  luaL_Buffer B;
  luaL_argcheck(L, n >= 0 && n <= CRYPTO_MAX_RANDOM, 1,
                "n must be an integer from 0 to 1048576");
  luaL_buffinit(L, &B);
  for (left = (size_t)n; left > 0; ) {
    size_t k = left < LUAL_BUFFERSIZE ? left : LUAL_BUFFERSIZE;
    char *p = luaL_prepbuffer(&B);
    if (RAND_bytes((unsigned char *)p, (int)k) != 1) {
      char err[120];
      ERR_error_string_n(ERR_get_error(), err, sizeof(err));
      lua_pushnil(L);
      lua_pushfstring(L, "random_bytes: %s", err);
      return 2;
    }
    luaL_addsize(&B, k);
    left -= k;
  }
  luaL_pushresult(&B);
  return 1;
}


/*
** core.equal(a, b) -> boolean, in time that depends on the lengths only
** (CRYPTO_memcmp): for comparing MACs. Strings of different lengths are
** unequal at once (a MAC's length is no secret).
*/
static int crypto_equal (lua_State *L) {
  size_t an, bn;
  const char *a = luaL_checklstring(L, 1, &an);
  const char *b = luaL_checklstring(L, 2, &bn);
  lua_pushboolean(L, an == bn && CRYPTO_memcmp(a, b, an) == 0);
  return 1;
}
