/*
** crypto.c — what MRTR's requestState needs: HMAC-SHA-256, bytes from the
** CSPRNG and a constant-time comparison; and what OAuth needs (PKCE's
** SHA-256, base64 and base64url); all from OpenSSL's libcrypto
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


/* core.sha256(s) -> 32 raw bytes (OpenSSL EVP_Digest with EVP_sha256) */
static int crypto_sha256 (lua_State *L) {
  size_t len;
  const char *s = luaL_checklstring(L, 1, &len);
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int mdlen = 0;
  if (EVP_Digest(s, len, md, &mdlen, EVP_sha256(), NULL) != 1)
    return luaL_error(L, "SHA-256 failed in libcrypto");
  lua_pushlstring(L, (const char *)md, mdlen);
  return 1;
}


/*
** core.base64(s [, url]) -> the base64 of s (RFC 4648 section 4, with
** padding), or with `url` true its base64url form without padding
** (section 5: what PKCE's code challenge and JWTs use). OpenSSL's
** EVP_EncodeBlock encodes 3 bytes into 4 characters, so the input goes
** through in blocks of 3 * 256 bytes, each into a stack buffer.
*/
#define CRYPTO_B64_IN   (3 * 256)

static int crypto_base64 (lua_State *L) {
  size_t len, i;
  const unsigned char *s = (const unsigned char *)luaL_checklstring(L, 1, &len);
  int url = lua_toboolean(L, 2);
  luaL_Buffer B;
  luaL_buffinit(L, &B);
  for (i = 0; i < len; i += CRYPTO_B64_IN) {
    unsigned char out[CRYPTO_B64_IN / 3 * 4 + 1];
    size_t k = len - i < CRYPTO_B64_IN ? len - i : CRYPTO_B64_IN;
    int n = EVP_EncodeBlock(out, s + i, (int)k);
    int j;
    if (url) {  /* the URL-safe alphabet; the padding goes */
      while (n > 0 && out[n - 1] == '=') n--;
      for (j = 0; j < n; j++) {
        if (out[j] == '+') out[j] = '-';
        else if (out[j] == '/') out[j] = '_';
      }
    }
    luaL_addlstring(&B, (const char *)out, (size_t)n);
  }
  luaL_pushresult(&B);
  return 1;
}
