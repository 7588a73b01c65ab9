/*
** crypto.c — what MRTR's requestState needs: HMAC-SHA-256, bytes from the
** CSPRNG and a constant-time comparison, all from OpenSSL's libcrypto
** (never hand-written). Pure functions; the output is built in a stack
** buffer or the scratch codec's 'out' (module upvalue 3) and copied out.
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
** give them (not seeded: an environment failure, like an I/O error)
*/
static int crypto_random_bytes (lua_State *L) {
  lua_Integer n = luaL_checkinteger(L, 1);
  Buf *b = &((Codec *)lua_touserdata(L, lua_upvalueindex(3)))->out;
  luaL_argcheck(L, n >= 0 && n <= CRYPTO_MAX_RANDOM, 1,
                "n must be an integer from 0 to 1048576");
  b->n = 0;
  buf_reserve(L, b, (size_t)n + 1);
  if (n > 0 && RAND_bytes((unsigned char *)b->p, (int)n) != 1) {
    char err[120];
    ERR_error_string_n(ERR_get_error(), err, sizeof(err));
    lua_pushnil(L);
    lua_pushfstring(L, "random_bytes: %s", err);
    return 2;
  }
  lua_pushlstring(L, b->p, (size_t)n);
  if (b->cap > 65536) buf_free(L, b);
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
