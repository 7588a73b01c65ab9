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


/*
** Write the decimal text of 'v' at 'd' (NUM_IDTEXT bytes of room: a sign
** and 20 digits); returns its length. Counted first, then written in place.
*/
static size_t num_itoa (long long v, char *d) {
  static const char pairs[] =   /* "00" "01" ... "99": two digits per division */
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";
  unsigned long long u = (v < 0) ? 0ULL - (unsigned long long)v
                                 : (unsigned long long)v, t;
  size_t nd = 1, i, len;
  for (t = u; t >= 100; t /= 100) nd += 2;
  if (t >= 10) nd++;
  len = nd + (v < 0);
  if (v < 0) *d = '-';
  for (i = len; u >= 100; u /= 100) {
    const char *p = pairs + 2 * (u % 100);
    d[--i] = p[1];
    d[--i] = p[0];
  }
  if (u >= 10) {
    d[--i] = pairs[2 * u + 1];
    d[--i] = pairs[2 * u];
  }
  else d[--i] = (char)('0' + u);
  return len;
}


/*
** Is the integer token [p, e) (validated: -?digits, no leading zero) an
** id that a Lua number holds exactly and that num_itoa writes back byte
** for byte? Then '*v' is its value. At most 15 digits (within ±2^53 on
** LuaJIT too), and not "-0" (it would come back as "0"). The decoder
** gives such an id as its own rawid: no string per message.
*/
static int num_token_idint (const char *p, const char *e, long long *v) {
  size_t digits = (size_t)(e - p) - (*p == '-');
  if (digits > 15 || (*p == '-' && p[1] == '0')) return 0;
  return num_token_int64(p, e, v);
}

/*
** The JSON text of an integer id at 'arg', written into 'tmp' (at least
** NUM_IDTEXT bytes): its length, or 0 when 'arg' is no such number (not a
** number, a fraction, or a float beyond ±2^53: what core.rawid rejects).
** Lua 5.4 integers only (a float 2.0 keeps its old path and text "2.0");
** on LuaJIT any integral double within ±2^53. No Lua string is made: the
** client's request path and the pending table take integer ids without
** one (converting a number to a string allocates, and interns it).
*/
static size_t num_idtext (lua_State *L, int arg, char *tmp) {
  if (lua_type(L, arg) != LUA_TNUMBER) return 0;
#if !defined(JR_NO_INTEGERS)
  if (!lua_isinteger(L, arg)) return 0;
  return num_itoa((long long)lua_tointeger(L, arg), tmp);
#else
  {
    double d = (double)lua_tonumber(L, arg);
    if (!(d >= -MAX_SAFE_INT && d <= MAX_SAFE_INT && d == (double)(long long)d)) return 0;
    return num_itoa((long long)d, tmp);
  }
#endif
}
