/*
** num.c — the number rules, in one place: what a digit is, which doubles
** and tokens are exact 64-bit integers, and which number Lua gets for a
** double (an integer within ±2^53, see CORE_API.md "Decoding numbers").
** The scanner, the decoders and the writers all ask here, so the rule
** cannot drift between them.
*/

static int num_isdigit (int c) { return c >= '0' && c <= '9'; }


/* is 'd' an integral value that a 64-bit integer holds? (NaN is not) */
static int num_fits_int64 (double d) {
  return d >= -9223372036854775808.0 && d < 9223372036854775808.0 &&
         d == (double)(long long)d;
}


/*
** Parse the integer token [p, e) (validated: -?digits) into '*v'; 0 when
** it does not fit 64 bits.
*/
static int num_token_int64 (const char *p, const char *e, long long *v) {
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


/*
** Push a decoded double: integral and within ±2^53 it is a Lua integer
** (1.0 -> 1, 2e3 -> 2000), else a float. LuaJIT has doubles only.
*/
static void num_push (lua_State *L, double d) {
#if !defined(JR_NO_INTEGERS)
  if (d >= -MAX_SAFE_INT && d <= MAX_SAFE_INT && d == (double)(lua_Integer)d) {
    lua_pushinteger(L, (lua_Integer)d);
    return;
  }
#endif
  lua_pushnumber(L, (lua_Number)d);
}
