/*
** fuzz_encode.c -- the encoder (encode.c) and the codec's writers
** (codec:result/error/request/notification/frame), checked by a model.
**
** Input: [0] mode (mod 5): 0 core.encode, 1 result, 2 error, 3 request,
** 4 notification; [1] max_depth (0: default); [2] bit 0: lsp framing,
** bit 1: ask for unframed output too, bit 2: Neovim's convention, the
** option empty_dict (core.encode and both codecs get it; built tables
** may carry its metatable, an empty unmarked table is an array, and the
** text is read back with it); then what the mode reads (ids, codes,
** methods), and Lua values built from the bytes by build().
**
** The model (predict) says whether a value can be encoded and which
** reasons may be given when it cannot (CORE_API.md's encoding rules):
** encode must succeed exactly when the model says so. When it succeeds,
** decoding the JSON must give the value the decoding rules promise
** (expect): integers are exact at any level (one rule); integral floats come back as integers within 2^53 (-0.0 as
** 0); arrays carry array_mt, objects no metatable; a string holding a NUL
** makes decode refuse the text. A writer's output must be framed, and a
** codec must read it back as the same message.
**/
#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host.h"

#define MAX_NODES  3000
#define MAX_BUILD_DEPTH  300

/* reasons the encoder may give (bits) */
#define R_NAN       0x001
#define R_UTF8      0x002
#define R_KEY_UTF8  0x004
#define R_MIXED     0x008
#define R_SPARSE    0x010
#define R_CYCLE     0x020
#define R_DEEP      0x040
#define R_TYPE      0x080
#define R_LUD       0x100

static const struct { int bit; const char *msg; } reasons[] = {
  {R_NAN, "cannot encode NaN or Infinity"},
  {R_UTF8, "cannot encode a string that is not valid UTF-8"},
  {R_KEY_UTF8, "cannot encode a key that is not valid UTF-8"},
  {R_MIXED, "cannot encode a table with mixed or non-string keys"},
  {R_SPARSE, "cannot encode a sparse array (nil inside)"},
  {R_CYCLE, "cannot encode a table that contains itself"},
  {R_DEEP, "nesting too deep"},
  {R_TYPE, "cannot encode a function"},
  {R_TYPE, "cannot encode a userdata"},
  {R_TYPE, "cannot encode a thread"},
  {R_LUD, "cannot encode a light userdata"},
  {0, NULL}
};


/* {====================== building values ====================== */

static const long long special_ints[] = {
  0, 1, -1, LLONG_MIN, LLONG_MAX, 9007199254740992LL, 9007199254740993LL,
  -9007199254740992LL, -9007199254740993LL, 4611686018427387904LL, 1000
};

static const double special_floats[] = {
  0.0, -0.0, 0.1, 1.5, -2.5, 3.0, 1e15, 1e16, 1e-7, 5e-324, 2.2250738585072014e-308,
  9007199254740992.0, 9007199254740994.0, 9223372036854775808.0,
  -9223372036854775808.0, 18446744073709551616.0, 1e300, DBL_MAX,
  123456789.125, 1.0 / 3.0
};

static const char *const special_strings[] = {
  "", "a", "\0", "a\0b", "\xc3\xa9", "\xf0\x9f\x98\x80", "\xed\xa0\x80",
  "\xc0\x80", "\xf4\x90\x80\x80", "\xff", "\"\\/\b\f\n\r\t", "\x1f\x7f",
  "\xe2\x82", "2.0", "jsonrpc", "\xe2\x80\xa8", "id", "method", "params"
};
static const size_t special_lens[] = {
  0, 1, 1, 3, 2, 4, 3, 2, 4, 1, 9, 2, 2, 3, 7, 3, 2, 6, 6
};
#define NSPECIAL_STRINGS  (sizeof(special_lens) / sizeof(special_lens[0]))

static char lud_target;  /* a light userdata that is not NULL */

/* this input encodes and decodes with empty_dict (host_empty_dict) */
static int edict;

typedef struct Build {
  Input *in;
  int nodes;
  int anc[MAX_BUILD_DEPTH + 8];  /* stack indices of tables being built */
  int nanc;
  int shared;     /* values used twice so far */
} Build;


static double special_float (unsigned i) {
  switch (i % 24) {
    case 20: return NAN;
    case 21: return INFINITY;
    case 22: return -INFINITY;
    case 23: return -NAN;
    default: return special_floats[i % 24];
  }
}


static void push_string (lua_State *L, Input *in) {
  unsigned op = in_u8(in);
  if (op & 1) {
    const char *p;
    size_t n = in_take(in, op >> 3, &p);
    lua_pushlstring(L, p, n);
  }
  else {
    unsigned i = (op >> 1) % NSPECIAL_STRINGS;
    lua_pushlstring(L, special_strings[i], special_lens[i]);
  }
}


static void push_int (lua_State *L, Input *in) {
  unsigned op = in_u8(in);
  switch (op % 3) {
    case 0: lua_pushinteger(L, (lua_Integer)(signed char)in_u8(in)); break;
    case 1: lua_pushinteger(L, (lua_Integer)in_u64(in)); break;
    default:
      lua_pushinteger(L, (lua_Integer)special_ints[(op / 3) %
        (sizeof(special_ints) / sizeof(special_ints[0]))]);
      break;
  }
}


static void build (lua_State *L, Build *B, int depth);


/* a new table at the top gets the marker chosen by 'm' */
static void mark (lua_State *L, unsigned m) {
  switch (m % 4) {
    case 1: lua_getfield(L, HOST_CORE, "array_mt"); lua_setmetatable(L, -2); break;
    case 2: lua_getfield(L, HOST_CORE, "object_mt"); lua_setmetatable(L, -2); break;
    case 3:
      if (edict) {
        host_empty_dict(L);
        lua_setmetatable(L, -2);
      }
      break;
    default: break;
  }
}


static void build_table (lua_State *L, Build *B, int depth, unsigned kind) {
  unsigned n = in_u8(B->in), i;
  int t;
  lua_newtable(L);
  t = lua_gettop(L);
  mark(L, n >> 4);
  n &= 7;
  B->anc[B->nanc++] = t;
  for (i = 1; i <= n; i++) {
    switch (kind) {
      case 0:  /* array-like: values at 1..n (nil makes holes) */
        build(L, B, depth + 1);
        lua_rawseti(L, t, (lua_Integer)i);
        break;
      case 1:  /* object-like: string keys */
        push_string(L, B->in);
        build(L, B, depth + 1);
        lua_rawset(L, t);
        break;
      default: {  /* any keys */
        unsigned k = in_u8(B->in);
        switch (k % 5) {
          case 0: lua_pushinteger(L, (lua_Integer)(k >> 3) - 2); break;
          case 1: push_string(L, B->in); break;
          case 2: lua_pushnumber(L, 1.5); break;
          case 3: lua_pushboolean(L, 1); break;
          default: push_int(L, B->in); break;
        }
        build(L, B, depth + 1);
        lua_rawset(L, t);
        break;
      }
    }
  }
  B->nanc--;
}


/* push one value built from the input */
static void build (lua_State *L, Build *B, int depth) {
  unsigned op;
  luaL_checkstack(L, 10, "build");
  if (B->in->n == 0 || ++B->nodes > MAX_NODES || depth > MAX_BUILD_DEPTH) {
    lua_pushinteger(L, 7);
    return;
  }
  op = in_u8(B->in);
  switch (op % 16) {
    case 0: lua_pushnil(L); break;
    case 1: lua_pushboolean(L, (int)((op >> 4) & 1)); break;
    case 2: case 3: push_int(L, B->in); break;
    case 4: {
      uint64_t bits = in_u64(B->in);
      double d;
      memcpy(&d, &bits, sizeof(d));
      lua_pushnumber(L, d);
      break;
    }
    case 5: lua_pushnumber(L, special_float(in_u8(B->in))); break;
    case 6: case 7: push_string(L, B->in); break;
    case 8: lua_pushlightuserdata(L, NULL); break;
    case 9: build_table(L, B, depth, 0); break;
    case 10: build_table(L, B, depth, 1); break;
    case 11: build_table(L, B, depth, 2); break;
    case 12:  /* a table we are inside of: a cycle */
      if (B->nanc > 0) lua_pushvalue(L, B->anc[in_u8(B->in) % (unsigned)B->nanc]);
      else lua_pushlightuserdata(L, NULL);
      break;
    case 13:  /* what JSON has no text for */
      switch (in_u8(B->in) % 4) {
        case 0: lua_pushcfunction(L, luaopen_jrpc_core); break;
        case 1: lua_pushlightuserdata(L, &lud_target); break;
        case 2: lua_newuserdatauv(L, 1, 0); break;
        default: lua_newthread(L); break;
      }
      break;
    case 14: {  /* a chain of single-element arrays, to reach depth limits */
      unsigned k = in_u8(B->in), i;
      int base = lua_gettop(L);
      if ((int)k + depth > MAX_BUILD_DEPTH) k = 0;
      luaL_checkstack(L, (int)k + 10, "build");
      for (i = 0; i < k; i++) lua_createtable(L, 1, 0);
      build(L, B, depth + (int)k);
      for (i = 0; i < k; i++) lua_rawseti(L, -2, 1);
      CHECK(lua_gettop(L) == base + 1 || k == 0, "chain");
      break;
    }
    default:  /* the same value twice, side by side (not a cycle); the
                 JSON text doubles with each, so only a few per input */
      if (++B->shared > 8) { lua_pushboolean(L, 0); break; }
      build(L, B, depth + 1);
      lua_createtable(L, 2, 0);
      lua_pushvalue(L, -2);
      lua_rawseti(L, -2, 1);
      lua_pushvalue(L, -2);
      lua_rawseti(L, -2, 2);
      lua_remove(L, -2);
      break;
  }
}

/* }============================================================= */


/* {====================== the model ============================ */

/* RFC 3629 UTF-8: no overlongs, no surrogates, nothing past U+10FFFF */
static int utf8_ok (const unsigned char *s, size_t n) {
  size_t i = 0;
  while (i < n) {
    unsigned c = s[i], need, cp, min;
    if (c < 0x80) { i++; continue; }
    if (c >= 0xC0 && c < 0xE0) { need = 1; cp = c & 0x1F; min = 0x80; }
    else if (c >= 0xE0 && c < 0xF0) { need = 2; cp = c & 0x0F; min = 0x800; }
    else if (c >= 0xF0 && c < 0xF8) { need = 3; cp = c & 0x07; min = 0x10000; }
    else return 0;
    if (n - i <= need) return 0;
    for (i++; need > 0; need--, i++) {
      if ((s[i] & 0xC0) != 0x80) return 0;
      cp = (cp << 6) | (s[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  }
  return 1;
}


typedef struct Pred {
  int reasons;     /* R_* bits found */
  int nul;         /* some string or key holds a NUL byte */
  int anc[1100];   /* stack indices of the tables above */
  int nanc;
} Pred;


static void check_string (lua_State *L, int idx, Pred *P, int bit) {
  size_t len;
  const char *s = lua_tolstring(L, idx, &len);
  if (!utf8_ok((const unsigned char *)s, len)) P->reasons |= bit;
  if (memchr(s, '\0', len) != NULL) P->nul = 1;
}


/* 'A' array, 'O' object, 0 neither (an error is recorded) */
static int table_shape (lua_State *L, int t, Pred *P) {
  int tag = mt_tag(L, t);
  lua_Integer count = 0, ints = 0;
  int strings = 1;
  lua_pushnil(L);
  while (lua_next(L, t)) {
    count++;
    if (lua_type(L, -2) != LUA_TSTRING) strings = 0;
    if (lua_isinteger(L, -2) && lua_tointeger(L, -2) >= 1) ints++;
    lua_pop(L, 1);
  }
  /* integer keys >= 1, as many as keys, no key above count: exactly 1..n */
  if (ints == count) {
    lua_Integer k;
    for (k = 1; k <= count; k++) {
      lua_rawgeti(L, t, k);
      if (lua_isnil(L, -1)) ints = -1;
      lua_pop(L, 1);
      if (ints < 0) break;
    }
  }
  else ints = -1;
  switch (tag) {
    case 'O': case 'E':  /* the empty-dict mark makes an object too */
      if (strings) return 'O';
      P->reasons |= R_MIXED;
      return 0;
    case 'A':
      if (ints == count) return 'A';
      P->reasons |= R_SPARSE;
      return 0;
    default:
      if (count > 0 && ints == count) return 'A';
      if (count == 0 && edict) return 'A';  /* Neovim's convention: [] */
      if (strings) return 'O';
      P->reasons |= R_MIXED | R_SPARSE;  /* the border decides which */
      return 0;
  }
}


/* record what encoding the value at 'idx' at table depth 'depth' meets */
static void predict (lua_State *L, int idx, int depth, int max_depth, Pred *P) {
  idx = lua_absindex(L, idx);
  luaL_checkstack(L, 6, "predict");
  switch (lua_type(L, idx)) {
    case LUA_TNIL: case LUA_TBOOLEAN: break;
    case LUA_TLIGHTUSERDATA:
      if (!is_null(L, idx)) P->reasons |= R_LUD;
      break;
    case LUA_TNUMBER:
      if (!lua_isinteger(L, idx) && !isfinite((double)lua_tonumber(L, idx)))
        P->reasons |= R_NAN;
      break;
    case LUA_TSTRING: check_string(L, idx, P, R_UTF8); break;
    case LUA_TTABLE: {
      int i, shape;
      for (i = 0; i < P->nanc; i++)
        if (lua_rawequal(L, P->anc[i], idx)) {
          /* the encoder goes round until max_depth, where the table it
             stands at may be one that is not in the cycle */
          P->reasons |= R_CYCLE | R_DEEP;
          return;
        }
      if (depth >= max_depth) {
        P->reasons |= R_DEEP;
        return;
      }
      shape = table_shape(L, idx, P);
      /* a bad table fails, but the encoder may meet a value of it first
         (and its reason): look at every key and value then */
      P->anc[P->nanc++] = idx;
      lua_pushnil(L);
      while (lua_next(L, idx)) {
        if (shape == 'O' || (shape == 0 && lua_type(L, -2) == LUA_TSTRING))
          check_string(L, -2, P, R_KEY_UTF8);
        predict(L, -1, depth + 1, max_depth, P);
        lua_pop(L, 1);
      }
      P->nanc--;
      break;
    }
    default: P->reasons |= R_TYPE; break;
  }
}


static int encodable (lua_State *L, int idx, int max_depth, Pred *P) {
  memset(P, 0, sizeof(*P));
  predict(L, idx, 0, max_depth, P);
  return P->reasons == 0;
}


/* the failure message must be one of the reasons the model found */
static void check_reason (const char *msg, const Pred *P) {
  int i;
  for (i = 0; reasons[i].msg != NULL; i++)
    if (strcmp(reasons[i].msg, msg) == 0) {
      CHECK(P->reasons & reasons[i].bit, "encode failed with '%s', model: %#x",
            msg, P->reasons);
      return;
    }
  host_fail("encode failed with an unknown reason '%s'", msg);
}


/*
** Push what decoding the encoded value at 'idx' gives ('nested': inside
** a container). Integers come back exact at any level (one rule). With
** empty_dict an empty object comes back with its metatable.
*/
static void expect (lua_State *L, int idx, int nested) {
  (void)nested;  /* kept for the callers; no longer changes numbers */
  idx = lua_absindex(L, idx);
  luaL_checkstack(L, 6, "expect");
  switch (lua_type(L, idx)) {
    case LUA_TNIL: lua_pushlightuserdata(L, NULL); break;
    case LUA_TNUMBER:
      if (lua_isinteger(L, idx)) lua_pushvalue(L, idx);  /* exact anywhere */
      else push_decoded_number(L, (double)lua_tonumber(L, idx));
      break;
    case LUA_TTABLE: {
      Pred P;
      int shape;
      memset(&P, 0, sizeof(P));
      shape = table_shape(L, idx, &P);
      lua_newtable(L);
      if (shape == 'A') {
        lua_Integer i, n = (lua_Integer)lua_rawlen(L, idx);
        for (i = 1; i <= n; i++) {
          lua_rawgeti(L, idx, i);
          expect(L, -1, 1);
          lua_rawseti(L, -3, i);
          lua_pop(L, 1);
        }
        lua_getfield(L, HOST_CORE, "array_mt");
        lua_setmetatable(L, -2);
      }
      else {
        lua_pushnil(L);
        while (lua_next(L, idx)) {
          lua_pushvalue(L, -2);
          expect(L, -2, 1);
          lua_rawset(L, -5);
          lua_pop(L, 1);
        }
        lua_pushnil(L);
        if (lua_next(L, -2)) lua_pop(L, 2);
        else if (edict) {
          host_empty_dict(L);
          lua_setmetatable(L, -2);
        }
      }
      break;
    }
    default: lua_pushvalue(L, idx); break;
  }
}


/* compare the values at 'got' and 'want' by their canonical text */
static void same (lua_State *L, int got, int want, const char *what) {
  Str a = {NULL, 0, 0}, b = {NULL, 0, 0};
  dump_value(L, got, &a);
  dump_value(L, want, &b);
  if (!str_eq(&a, &b)) {
    fprintf(stderr, "---- got:\n%.*s\n---- expected:\n%.*s\n",
            (int)(a.n < 3000 ? a.n : 3000), a.p, (int)(b.n < 3000 ? b.n : 3000), b.p);
    host_fail("%s: the value read back differs", what);
  }
  str_free(&a);
  str_free(&b);
}

/* }============================================================= */


/* {====================== core.encode ========================== */

#define NUL_MSG "strings holding \\u0000 are not supported"

static void fuzz_encode (lua_State *L, Input *in, int max_depth) {
  Build B;
  Pred P;
  int v, n, ok;
  memset(&B, 0, sizeof(B));
  B.in = in;
  build(L, &B, 0);
  v = lua_gettop(L);
  ok = encodable(L, v, max_depth > 0 ? max_depth : DEFAULT_MAX_DEPTH, &P);
  lua_pushvalue(L, v);
  if (max_depth > 0 || edict) lua_pushinteger(L, max_depth > 0 ? max_depth : DEFAULT_MAX_DEPTH);
  if (edict) host_empty_dict(L);
  n = host_core(L, "encode", edict ? 3 : max_depth > 0 ? 2 : 1);
  CHECK(n >= 1, "core.encode raised: %s", lua_tostring(L, -1));
  if (lua_isnil(L, v + 1)) {
    CHECK(!ok, "core.encode refused an encodable value: %s", lua_tostring(L, v + 2));
    check_reason(lua_tostring(L, v + 2), &P);
    return;
  }
  CHECK(ok, "core.encode accepted a value the model refuses (%#x): %s",
        P.reasons, lua_tostring(L, v + 1));
  {
    size_t len, i;
    const char *j = lua_tolstring(L, v + 1, &len);
    for (i = 0; i < len; i++)
      CHECK((unsigned char)j[i] >= 0x20, "encoded JSON holds byte %d",
            (unsigned char)j[i]);
  }
  lua_settop(L, v + 1);
  lua_pushvalue(L, v + 1);
  lua_pushinteger(L, 1000);
  if (edict) {
    lua_getfield(L, HOST_CORE, "null");
    host_empty_dict(L);
  }
  n = host_core(L, "decode", edict ? 4 : 2);
  CHECK(n >= 1, "core.decode raised: %s", lua_tostring(L, -1));
  if (P.nul) {
    CHECK(lua_isnil(L, v + 2) && strcmp(lua_tostring(L, v + 3), NUL_MSG) == 0,
          "a NUL in a string did not make decode refuse: %s", lua_tostring(L, v + 1));
    return;
  }
  CHECK(!lua_isnil(L, v + 2), "decode refused what encode wrote: %s (%s)",
        lua_tostring(L, v + 3), lua_tostring(L, v + 1));
  expect(L, v, 0);
  same(L, v + 2, lua_gettop(L), "core.decode(core.encode(v))");
}

/* }============================================================= */


/* {====================== writers ============================== */

/* a raw id and what a response with it is matched by ("" if the same) */
static const char *const raw_ids[][2] = {
  {"null", ""}, {"1.5", ""}, {"-0", ""}, {"1e2", ""}, {"1E-2", ""},
  {"123456789012345678901234567890", ""}, {"-9223372036854775808", ""},
  {"\"\\u00e9\"", "\"\xc3\xa9\""}, {"\"a\\/b\"", "\"a/b\""},
  {"\"\\ud83d\\ude00\"", "\"\xf0\x9f\x98\x80\""}
};
#define NRAW_IDS  (sizeof(raw_ids) / sizeof(raw_ids[0]))


/*
** Push three values for an id: the rawid text given to the writer, the
** text a response to it is matched by, and the id a decoded message
** gives. Returns 0 (pushing nothing) when core.rawid refuses the id (a
** string that is not UTF-8: misuse, it raises).
*/
static int push_rawid (lua_State *L, Input *in) {
  unsigned op = in_u8(in);
  int v;
  if (op % 3 < 2) {
    if (op % 3 == 0) push_int(L, in);
    else push_string(L, in);
    v = lua_gettop(L);
    lua_pushvalue(L, v);
    if (host_core(L, "rawid", 1) < 0) {
      size_t len;
      const char *s = lua_tolstring(L, v, &len);
      CHECK(lua_type(L, v) == LUA_TSTRING && !utf8_ok((const unsigned char *)s, len),
            "core.rawid raised: %s", lua_tostring(L, -1));
      lua_settop(L, v - 1);
      return 0;
    }
    lua_pushvalue(L, -1);       /* matched by the same text */
    lua_pushvalue(L, v);        /* the id itself */
    lua_remove(L, v);
  }
  else {
    const char *raw = raw_ids[(op / 3) % NRAW_IDS][0];
    const char *m = raw_ids[(op / 3) % NRAW_IDS][1];
    lua_pushstring(L, raw);
    lua_pushstring(L, m[0] ? m : raw);
    if (raw[0] == 'n') lua_pushlightuserdata(L, NULL);
    else if (raw[0] == '"') lua_pushlstring(L, m + 1, strlen(m) - 2);
    else {
      long long i;
      errno = 0;
      i = strtoll(raw, NULL, 10);
      if (strpbrk(raw, ".eE") == NULL && errno == 0) lua_pushinteger(L, i);
      else lua_pushnumber(L, strtod(raw, NULL));  /* push_id: cJSON's double */
    }
  }
  return 1;
}


/*
** Read back what a writer wrote (at 'out'), with a codec like the writer's
** ('lsp' framing, jsonrpc profile, 'max_depth', empty_dict): exactly one event, pushed
** as its values; returns how many.
*/
static int read_back (lua_State *L, int out, int lsp, int max_depth) {
  int codec = host_codec_dict(L, lsp, P_JSONRPC, 0, max_depth, 0, edict), base, n;
  lua_pushvalue(L, out);
  CHECK(host_method(L, codec, "feed", 1) >= 0, "feed raised");
  CHECK(host_method(L, codec, "finish", 0) >= 0, "finish raised");
  base = lua_gettop(L);
  n = host_method(L, codec, "next", 0);
  CHECK(n > 0, "a written message gave no event: %s", lua_tostring(L, out));
  check_event(L, base + 1, n, P_JSONRPC, 0);
  lua_pushnil(L);  /* keep the event; the next one must not exist */
  CHECK(host_method(L, codec, "next", 0) == 0, "a written message gave two events");
  lua_pop(L, 1);
  lua_remove(L, codec);
  return n;
}


/*
** Push the rawid (or match id) that a decoded message gives for the id
** text at 'idx': a plain integer of at most 15 digits, not "-0", comes
** out as that integer (CORE_API.md); any other text as itself.
*/
static void push_decoded_rawid (lua_State *L, int idx) {
  size_t len, i, sign;
  const char *s;
  if (lua_type(L, idx) == LUA_TSTRING) {
    s = lua_tolstring(L, idx, &len);
    sign = (len > 0 && s[0] == '-');
    for (i = sign; i < len && s[i] >= '0' && s[i] <= '9'; i++) ;
    if (i == len && len > sign && len - sign <= 15 && !(sign && s[1] == '0')) {
      lua_pushinteger(L, (lua_Integer)strtoll(s, NULL, 10));
      return;
    }
  }
  lua_pushvalue(L, idx);
}


/* push the values of an invalid event for a message holding \u0000 */
static int push_nul_invalid (lua_State *L, int match, int reply, const char *detail) {
  lua_pushliteral(L, "invalid");
  lua_pushinteger(L, -32600);
  lua_pushliteral(L, "Invalid Request");
  lua_pushvalue(L, match);
  lua_pushboolean(L, reply);
  lua_pushstring(L, detail);
  return 6;
}


/* compare the 'n' values at 'got' with the 'n' on the top */
static void same_event (lua_State *L, int got, int n, const char *what) {
  int want = lua_gettop(L) - n + 1, i;
  lua_createtable(L, n, 0);
  for (i = 0; i < n; i++) {
    lua_pushvalue(L, got + i);
    lua_rawseti(L, -2, i + 1);
  }
  lua_createtable(L, n, 0);
  for (i = 0; i < n; i++) {
    lua_pushvalue(L, want + i);
    lua_rawseti(L, -2, i + 1);
  }
  same(L, -2, -1, what);
  lua_pop(L, 2);
}


static void fuzz_writer (lua_State *L, Input *in, int mode, int max_depth,
                         unsigned flags) {
  static const char *const names[] = {"", "result", "error", "request", "notification"};
  int lsp = flags & 1, codec, depth = max_depth > 0 ? max_depth : DEFAULT_MAX_DEPTH;
  int rawid = 0, match = 0, evid = 0, method = 0, code = 0, msg = 0, value = 0;
  int ok = 1, nul = 0, raises = 0, msg_ok = 1, args, nargs, outs[2], k;
  lua_Integer icode = 0;
  Pred P;
  Build B;
  memset(&B, 0, sizeof(B));
  B.in = in;
  memset(&P, 0, sizeof(P));
  codec = host_codec_dict(L, lsp, P_JSONRPC, 0, max_depth, 0, edict);
  if (mode != 4) {  /* an id */
    if (!push_rawid(L, in)) return;
    evid = lua_gettop(L);
    match = evid - 1;
    rawid = evid - 2;
    /* a \u0000 in the id is fine: ids are unescaped by the core itself */
  }
  if (mode >= 3) {  /* a method name: must be UTF-8, else misuse */
    size_t len;
    const char *s;
    push_string(L, in);
    method = lua_gettop(L);
    s = lua_tolstring(L, method, &len);
    if (!utf8_ok((const unsigned char *)s, len)) raises = 1;
    /* a \u0000 in the method is fine too (unescaped by the core) */
  }
  if (mode == 2) {  /* a code (an integral number, else misuse) and a message */
    unsigned c = in_u8(in);
    size_t len;
    const char *s;
    if (c & 1) {
      push_int(L, in);
      icode = lua_tointeger(L, -1);
    }
    else {
      double d = special_float(c >> 1);
      lua_pushnumber(L, d);
      if (d != floor(d) || !(d >= -9223372036854775808.0 && d < 9223372036854775808.0))
        raises = 1;  /* not an integer, or not one of 64 bits */
      else icode = (lua_Integer)d;
    }
    if (icode < -9007199254740992LL || icode > 9007199254740992LL)
      raises = 1;  /* codes must read back exactly everywhere: within 2^53 */
    code = lua_gettop(L);
    push_string(L, in);
    msg = lua_gettop(L);
    s = lua_tolstring(L, msg, &len);
    if (!utf8_ok((const unsigned char *)s, len)) msg_ok = 0;
    if (memchr(s, '\0', len) != NULL) nul = 1;
  }
  build(L, &B, 0);  /* the result, the error data or the params */
  value = lua_gettop(L);
  if (mode != 1 && lua_isnil(L, value)) value = 0;  /* absent */
  if (mode >= 3 && value != 0 && lua_type(L, value) == LUA_TLIGHTUSERDATA &&
      lua_touserdata(L, value) == NULL)
    value = 0;  /* params = core.null: no params member, like nil */
  if (mode == 2 && depth < 2) {  /* the error object itself is too deep */
    ok = 0;
    P.reasons |= R_DEEP;
  }
  else if (value != 0) {
    if (mode >= 3 && !lua_istable(L, value)) ok = 0;
    /* the value nests inside the envelope (and error data inside the
       error object): the writer leaves room for them, so that a codec
       with the same max_depth reads back what it wrote */
    else ok = encodable(L, value, depth - (mode == 2 ? 2 : 1), &P);
    nul |= P.nul;
  }
  if (mode == 2 && depth < 2) {  /* no room for the error object itself */
    ok = 0;
    P.reasons |= R_DEEP;
  }
  /* the arguments of codec:NAME(...) */
  args = lua_gettop(L) + 1;
  if (rawid) lua_pushvalue(L, rawid);
  if (method) lua_pushvalue(L, method);
  if (code) { lua_pushvalue(L, code); lua_pushvalue(L, msg); }
  if (value) lua_pushvalue(L, value); else lua_pushnil(L);
  nargs = lua_gettop(L) - args + 1;
  for (k = 0; k < ((flags & 2) ? 2 : 1); k++) {  /* framed, then unframed */
    int i, n;
    for (i = 0; i < nargs; i++) lua_pushvalue(L, args + i);
    if (k == 1) lua_pushboolean(L, 1);
    n = host_method(L, codec, names[mode], nargs + k);
    if (raises) {
      CHECK(n < 0, "codec:%s did not raise for a bad argument", names[mode]);
      return;
    }
    CHECK(n >= 1, "codec:%s raised: %s", names[mode], lua_tostring(L, -1));
    if (!msg_ok) {
      CHECK(lua_isnil(L, -n) && n == 2 && strcmp(lua_tostring(L, -1),
            "cannot encode an error message that is not valid UTF-8") == 0,
            "codec:error took a message that is not UTF-8");
      return;
    }
    if (!ok) {
      CHECK(lua_isnil(L, -n) && n == 2, "codec:%s encoded what the model refuses (%#x)",
            names[mode], P.reasons);
      if (mode >= 3 && !lua_istable(L, value))
        CHECK(strncmp(lua_tostring(L, -1), "params must be a table, not a ", 30) == 0,
              "codec:%s: '%s' for params that are not a table", names[mode],
              lua_tostring(L, -1));
      else check_reason(lua_tostring(L, -1), &P);
      return;
    }
    CHECK(n == 1 && lua_type(L, -1) == LUA_TSTRING, "codec:%s gave a %s",
          names[mode], luaL_typename(L, -n));
    outs[k] = lua_gettop(L);
  }
  if (flags & 2) {  /* codec:frame(bare) is the framed output */
    lua_pushvalue(L, outs[1]);
    CHECK(host_method(L, codec, "frame", 1) == 1, "codec:frame raised");
    CHECK(lua_rawequal(L, -1, outs[0]), "codec:frame(bare) differs from the framed output");
    lua_pop(L, 1);
  }
  {
    size_t len;
    const char *s = lua_tolstring(L, outs[0], &len);
    if (lsp) {
      const char *body = strstr(s, "\r\n\r\n");
      CHECK(body != NULL && strncmp(s, "Content-Length: ", 16) == 0 &&
            strtoul(s + 16, NULL, 10) == len - (size_t)(body + 4 - s),
            "lsp output is not framed: %.60s", s);
    }
    else
      CHECK(len > 0 && memchr(s, '\n', len) == s + len - 1, "ndjson output is not one line");
  }
  /* read it back: the same message, or the documented refusal */
  {
    int got = lua_gettop(L) + 1, m = read_back(L, outs[0], lsp, max_depth), n;
    if (mode <= 2 && nul)
      n = push_nul_invalid(L, match, 0, NUL_MSG);
    else if (mode <= 2) {
      lua_pushstring(L, names[mode]);
      push_decoded_rawid(L, match);
      if (mode == 1) expect(L, value, 1);
      else {
        lua_createtable(L, 0, 3);
        push_decoded_number(L, (double)icode);
        lua_setfield(L, -2, "code");
        lua_pushvalue(L, msg);
        lua_setfield(L, -2, "message");
        if (value) {
          expect(L, value, 1);
          lua_setfield(L, -2, "data");
        }
      }
      lua_pushvalue(L, evid);
      n = 4;
    }
    else if (nul && value) {
      if (rawid) lua_pushvalue(L, rawid); else lua_pushliteral(L, "null");
      n = push_nul_invalid(L, lua_gettop(L), 1,
                           "strings holding \\u0000 are not supported in params");
      lua_remove(L, -n - 1);
    }
    else {
      lua_pushstring(L, names[mode]);
      lua_pushvalue(L, method);
      if (value) expect(L, value, 1); else lua_pushnil(L);
      if (mode == 3) {
        lua_pushvalue(L, evid);
        push_decoded_rawid(L, rawid);
        n = 5;
      }
      else n = 3;
    }
    CHECK(m == n, "codec:%s read back as %d values ('%s'), expected %d", names[mode], m,
          lua_tostring(L, got), n);
    same_event(L, got, n, names[mode]);
  }
}

/* }============================================================= */


int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size) {
  Input in;
  unsigned mode, flags;
  int max_depth;
  lua_State *L;
  in.p = data; in.n = size;
  mode = in_u8(&in) % 5;
  max_depth = (int)in_u8(&in);
  flags = in_u8(&in);
  edict = (flags & 4) != 0;
  L = host_open(0);
  if (mode == 0) fuzz_encode(L, &in, max_depth);
  else if (max_depth == 1) max_depth = 2;  /* a codec takes 2 to 1000 */
  if (mode != 0) fuzz_writer(L, &in, (int)mode, max_depth, flags);
  host_close(L);
  return 0;
}
