/*
** host.c -- the shared part of the fuzz targets (see host.h).
**
** One lua_State per input. Reusing a state would be faster (no
** luaL_newstate and module load per input, about 30 us), but a state that
** lives across inputs grows, hides leaks behind its garbage collector and
** lets one input change what the next one sees. A fresh state lets
** host_close() check after lua_close() that the allocator got back every
** byte, and lets LeakSanitizer see anything the core malloc()ed (cJSON
** trees) and never freed. The targets still run thousands of inputs a
** second.
*/
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host.h"

const char *const host_profiles[PROFILES] = {"jsonrpc", "mcp", "lsp"};


/* {====================== failure ============================== */

void host_fail (const char *fmt, ...) {
  va_list ap;
  fprintf(stderr, "\n==== fuzz invariant violated: ");
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, "\n");
  fflush(stderr);
  abort();
}

/* }============================================================= */


/* {====================== input ================================ */

unsigned in_u8 (Input *in) {
  if (in->n == 0) return 0;
  in->n--;
  return *in->p++;
}


uint64_t in_u64 (Input *in) {
  uint64_t v = 0;
  int i;
  for (i = 0; i < 8; i++) v |= (uint64_t)in_u8(in) << (8 * i);
  return v;
}


size_t in_take (Input *in, size_t want, const char **out) {
  size_t n = want < in->n ? want : in->n;
  *out = (const char *)in->p;
  in->p += n;
  in->n -= n;
  return n;
}

/* }============================================================= */


/* {====================== strings ============================== */

void str_add (Str *s, const char *p, size_t n) {
  if (s->cap - s->n < n + 1) {
    size_t cap = s->cap ? s->cap : 256;
    while (cap - s->n < n + 1) cap *= 2;
    s->p = (char *)realloc(s->p, cap);
    CHECK(s->p != NULL, "out of memory in the harness");
    s->cap = cap;
  }
  if (n > 0) memcpy(s->p + s->n, p, n);
  s->n += n;
  s->p[s->n] = '\0';
}


void str_addz (Str *s, const char *z) {
  str_add(s, z, strlen(z));
}


void str_addf (Str *s, const char *fmt, ...) {
  char tmp[128];
  int n;
  va_list ap;
  va_start(ap, fmt);
  n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
  va_end(ap);
  CHECK(n >= 0 && (size_t)n < sizeof(tmp), "str_addf: too long");
  str_add(s, tmp, (size_t)n);
}


void str_free (Str *s) {
  free(s->p);
  s->p = NULL;
  s->n = s->cap = 0;
}


int str_eq (const Str *a, const Str *b) {
  return a->n == b->n && (a->n == 0 || memcmp(a->p, b->p, a->n) == 0);
}

/* }============================================================= */


/* {====================== Lua state ============================ */

#define MEM_LIMIT  ((size_t)512 << 20)   /* no input needs anywhere near this */

typedef struct Mem {
  size_t live;       /* bytes held by the state */
  long count;        /* allocations that grew a block */
  long fail_after;   /* > 0: fail every growth after this many */
  int failed;
} Mem;

static Mem mem;


static void *host_alloc (void *ud, void *ptr, size_t osize, size_t nsize) {
  Mem *m = (Mem *)ud;
  size_t old = (ptr != NULL) ? osize : 0;
  void *np;
  if (nsize == 0) {
    m->live -= old;
    free(ptr);
    return NULL;
  }
  if (nsize > old) {  /* Lua assumes that shrinking never fails */
    m->count++;
    if (m->fail_after > 0 && m->count > m->fail_after) {
      m->failed = 1;
      return NULL;
    }
    CHECK(m->live + (nsize - old) <= MEM_LIMIT,
          "the state grew past %lu MiB", (unsigned long)(MEM_LIMIT >> 20));
  }
  np = realloc(ptr, nsize);
  if (np == NULL) return NULL;
  m->live = m->live - old + nsize;
  return np;
}


static int host_panic (lua_State *L) {
  host_fail("Lua panic: %s", lua_tostring(L, -1) ? lua_tostring(L, -1) : "?");
}


lua_State *host_open (long fail_after) {
  lua_State *L;
  memset(&mem, 0, sizeof(mem));
  L = lua_newstate(host_alloc, &mem);
  CHECK(L != NULL, "lua_newstate failed");
  lua_atpanic(L, host_panic);
  luaL_requiref(L, "jrpc.core", luaopen_jrpc_core, 0);
  CHECK(lua_gettop(L) == HOST_CORE && lua_istable(L, HOST_CORE),
        "require jrpc.core gave no table");
  /* what jrpc.core requires on first use of TLS or crypto (fuzz_mcp) */
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
  lua_pushcfunction(L, luaopen_jrpc_core_tls);
  lua_setfield(L, -2, "jrpc.core_tls");
  lua_pop(L, 1);
  mem.count = 0;
  mem.fail_after = fail_after;
  return L;
}


void host_close (lua_State *L) {
  lua_close(L);
  CHECK(mem.live == 0, "%lu bytes of the Lua allocator never freed",
        (unsigned long)mem.live);
}


int host_alloc_failed (void) {
  return mem.failed;
}


void host_set_fail_after (long n) {
  mem.count = 0;
  mem.fail_after = n;
}


/* an error after an injected allocation failure goes on up (to the
** target's protected call); any other is returned to the caller */
static int call_top (lua_State *L, int base, int nargs) {
  if (lua_pcall(L, nargs, LUA_MULTRET, 0) != LUA_OK) {
    if (mem.failed && mem.fail_after > 0) lua_error(L);
    return -1;
  }
  return lua_gettop(L) - base;
}


int host_method (lua_State *L, int codec, const char *name, int nargs) {
  int base = lua_gettop(L) - nargs;
  codec = lua_absindex(L, codec);
  lua_getfield(L, codec, name);
  CHECK(lua_isfunction(L, -1), "codec has no method %s", name);
  lua_insert(L, base + 1);
  lua_pushvalue(L, codec);
  lua_insert(L, base + 2);
  return call_top(L, base, nargs + 1);
}


int host_core (lua_State *L, const char *name, int nargs) {
  int base = lua_gettop(L) - nargs;
  lua_getfield(L, HOST_CORE, name);
  CHECK(lua_isfunction(L, -1), "core has no function %s", name);
  lua_insert(L, base + 1);
  return call_top(L, base, nargs);
}


int host_codec (lua_State *L, int lsp, int profile, long max_bytes,
                int max_depth, int max_batch) {
  return host_codec_dict(L, lsp, profile, max_bytes, max_depth, max_batch, 0);
}


int host_codec_dict (lua_State *L, int lsp, int profile, long max_bytes,
                     int max_depth, int max_batch, int empty_dict) {
  lua_createtable(L, 0, 6);
  lua_pushstring(L, lsp ? "lsp" : "ndjson");
  lua_setfield(L, -2, "framing");
  lua_pushstring(L, host_profiles[profile]);
  lua_setfield(L, -2, "profile");
  if (max_bytes > 0) {
    lua_pushinteger(L, max_bytes);
    lua_setfield(L, -2, "max_message_bytes");
  }
  if (max_depth > 0) {
    lua_pushinteger(L, max_depth);
    lua_setfield(L, -2, "max_depth");
  }
  if (max_batch > 0) {
    lua_pushinteger(L, max_batch);
    lua_setfield(L, -2, "max_batch");
  }
  if (empty_dict) {
    host_empty_dict(L);
    lua_setfield(L, -2, "empty_dict");
  }
  if (host_core(L, "codec", 1) != 1)
    host_fail("core.codec raised: %s", lua_tostring(L, -1));
  return lua_gettop(L);
}


long host_tostring_number (lua_State *L, int idx, const char *after) {
  const char *s = luaL_tolstring(L, idx, NULL);
  const char *c = strstr(s, after);
  long n;
  CHECK(c != NULL, "unexpected tostring: %s", s);
  n = strtol(c + strlen(after), NULL, 10);
  lua_pop(L, 1);
  return n;
}


long host_buffered (lua_State *L, int codec) {
  return host_tostring_number(L, codec, ", ");
}


void host_push_http_limits (lua_State *L, const HttpLimits *lim, int small) {
  lua_createtable(L, 0, 3);
  if (small) {
    lua_pushinteger(L, lim->header_bytes);
    lua_setfield(L, -2, "max_header_bytes");
    lua_pushinteger(L, lim->headers);
    lua_setfield(L, -2, "max_headers");
    lua_pushinteger(L, lim->body);
    lua_setfield(L, -2, "max_body_bytes");
  }
}

/* }============================================================= */


/* {====================== values =============================== */

int is_null (lua_State *L, int idx) {
  return lua_type(L, idx) == LUA_TLIGHTUSERDATA && lua_touserdata(L, idx) == NULL;
}


int mt_tag (lua_State *L, int idx) {
  int tag = '-';
  idx = lua_absindex(L, idx);
  if (lua_getmetatable(L, idx)) {
    lua_getfield(L, HOST_CORE, "array_mt");
    lua_getfield(L, HOST_CORE, "object_mt");
    lua_getfield(L, LUA_REGISTRYINDEX, HOST_EMPTY_DICT);
    tag = lua_rawequal(L, -4, -3) ? 'A' : lua_rawequal(L, -4, -2) ? 'O' :
          lua_rawequal(L, -4, -1) ? 'E' : '?';
    lua_pop(L, 4);
  }
  return tag;
}


int host_empty_dict (lua_State *L) {
  lua_getfield(L, LUA_REGISTRYINDEX, HOST_EMPTY_DICT);
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_REGISTRYINDEX, HOST_EMPTY_DICT);
  }
  return lua_gettop(L);
}


void push_decoded_number (lua_State *L, double d) {
  if (d == floor(d) && d >= -MAX_SAFE && d <= MAX_SAFE)
    lua_pushinteger(L, (lua_Integer)d);
  else
    lua_pushnumber(L, d);
}


static int cmp_str (const void *a, const void *b) {
  const Str *x = (const Str *)a, *y = (const Str *)b;
  size_t n = x->n < y->n ? x->n : y->n;
  int c = n ? memcmp(x->p, y->p, n) : 0;
  if (c != 0) return c;
  return (x->n > y->n) - (x->n < y->n);
}


static void dump (lua_State *L, int idx, Str *o, int depth) {
  idx = lua_absindex(L, idx);
  CHECK(depth < 3000, "dump: value nested too deep (a cycle?)");
  switch (lua_type(L, idx)) {
    case LUA_TNIL: str_addz(o, "nil"); break;
    case LUA_TBOOLEAN: str_addz(o, lua_toboolean(L, idx) ? "true" : "false"); break;
    case LUA_TLIGHTUSERDATA:
      str_addz(o, lua_touserdata(L, idx) == NULL ? "null" : "lightuserdata");
      break;
    case LUA_TNUMBER:
      if (lua_isinteger(L, idx)) str_addf(o, "i%lld", (long long)lua_tointeger(L, idx));
      else {
        double d = (double)lua_tonumber(L, idx);
        if (d != d) str_addz(o, "fnan");
        else str_addf(o, "f%a", d);
      }
      break;
    case LUA_TSTRING: {
      size_t len;
      const char *s = lua_tolstring(L, idx, &len);
      str_addf(o, "s%lu:", (unsigned long)len);
      str_add(o, s, len);
      break;
    }
    case LUA_TTABLE: {
      Str *items = NULL;
      size_t n = 0, cap = 0, i;
      luaL_checkstack(L, 4, "dump");
      str_addf(o, "{%c", mt_tag(L, idx));
      lua_pushnil(L);
      while (lua_next(L, idx)) {
        if (n == cap) {
          cap = cap ? cap * 2 : 8;
          items = (Str *)realloc(items, cap * sizeof(Str));
          CHECK(items != NULL, "out of memory in the harness");
        }
        memset(&items[n], 0, sizeof(Str));
        dump(L, -2, &items[n], depth + 1);
        str_addz(&items[n], "=");
        dump(L, -1, &items[n], depth + 1);
        n++;
        lua_pop(L, 1);
      }
      if (n > 1) qsort(items, n, sizeof(Str), cmp_str);
      for (i = 0; i < n; i++) {
        if (i > 0) str_addz(o, ",");
        str_add(o, items[i].p, items[i].n);
        str_free(&items[i]);
      }
      free(items);
      str_addz(o, "}");
      break;
    }
    default:
      str_addf(o, "<%s>", luaL_typename(L, idx));
      break;
  }
}


void dump_value (lua_State *L, int idx, Str *out) {
  dump(L, idx, out, 0);
}

/* }============================================================= */


/* {====================== events =============================== */

static int is_kind (const char *k, const char *name) {
  return strcmp(k, name) == 0;
}


static int count_of (const char *kind) {
  if (is_kind(kind, "request")) return 5;
  if (is_kind(kind, "notification")) return 3;
  if (is_kind(kind, "result") || is_kind(kind, "error")) return 4;
  if (is_kind(kind, "batch")) return 2;
  if (is_kind(kind, "invalid")) return 6;
  return -1;
}


/* does the raw id text at 'idx' hold one JSON scalar an id may be? */
static void check_rawid_text (lua_State *L, int idx, const char *what) {
  size_t len;
  const char *s = lua_tolstring(L, idx, &len);
  int n;
  CHECK(lua_type(L, idx) == LUA_TSTRING && len > 0, "%s: rawid is not a string", what);
  if (len == 4 && memcmp(s, "null", 4) == 0) return;
  CHECK(s[0] == '"' || s[0] == '-' || (s[0] >= '0' && s[0] <= '9'),
        "%s: rawid %s is not an id", what, s);
  lua_pushvalue(L, idx);
  n = host_core(L, "decode", 1);
  CHECK(n >= 1, "%s: core.decode(rawid) raised", what);
  if (lua_isnil(L, -n)) {
    const char *msg = lua_tostring(L, -n + 1);
    CHECK(msg != NULL && strcmp(msg, "strings holding \\u0000 are not supported") == 0,
          "%s: rawid %s is not JSON: %s", what, s, msg ? msg : "?");
  }
  else
    CHECK(lua_type(L, -n) == (s[0] == '"' ? LUA_TSTRING : LUA_TNUMBER),
          "%s: rawid %s decodes to a %s", what, s, luaL_typename(L, -n));
  lua_pop(L, n);
}


/*
** A request's rawid or a response's match id that is a number: a plain
** integer id of at most 15 digits is its own rawid (CORE_API.md), equal
** to the id. Returns 0 when 'raw' is text, for the checks of text.
*/
static int check_int_rawid (lua_State *L, int id, int raw, const char *what) {
  lua_Integer v;
  if (lua_type(L, raw) != LUA_TNUMBER) return 0;
  CHECK(lua_isinteger(L, raw), "%s: rawid is a float", what);
  v = lua_tointeger(L, raw);
  CHECK(lua_rawequal(L, id, raw), "%s: rawid %lld is not the id", what, (long long)v);
  CHECK(v > -1000000000000000LL && v < 1000000000000000LL,
        "%s: rawid %lld has more than 15 digits", what, (long long)v);
  return 1;
}


/* the id at 'id' against its raw text at 'raw' (request events) */
static void check_id_matches (lua_State *L, int id, int raw, const char *what) {
  const char *s = lua_tostring(L, raw);
  int n;
  if (s[0] == 'n') {
    CHECK(is_null(L, id), "%s: rawid null but id is a %s", what, luaL_typename(L, id));
    return;
  }
  lua_pushvalue(L, raw);
  n = host_core(L, "decode", 1);
  CHECK(n >= 1, "%s: core.decode(rawid) raised", what);
  if (lua_isnil(L, -n)) {  /* a string holding \u0000 */
    size_t len;
    const char *v = lua_tolstring(L, id, &len);
    CHECK(lua_type(L, id) == LUA_TSTRING && memchr(v, '\0', len) != NULL,
          "%s: rawid %s does not decode, id has no NUL", what, s);
  }
  else {
    /* integer tokens are exact; others are what cJSON's double gives */
    CHECK(lua_type(L, id) == lua_type(L, -n) && lua_rawequal(L, id, -n),
          "%s: id does not match rawid %s", what, s);
  }
  lua_pop(L, n);
}


static void check_method_params (lua_State *L, int base, int profile,
                                 const char *what) {
  CHECK(lua_type(L, base + 1) == LUA_TSTRING, "%s: method is a %s", what,
        luaL_typename(L, base + 1));
  if (!lua_isnil(L, base + 2)) {
    int tag;
    CHECK(lua_istable(L, base + 2), "%s: params is a %s", what,
          luaL_typename(L, base + 2));
    tag = mt_tag(L, base + 2);
    if (tag == 'E') {  /* Neovim's convention marks only empty objects */
      lua_pushnil(L);
      CHECK(!lua_next(L, base + 2), "%s: non-empty params marked as an empty object", what);
    }
    CHECK(tag == 'A' || tag == '-' || tag == 'E', "%s: params has an unexpected metatable", what);
    CHECK(profile != P_MCP || tag != 'A', "%s: mcp params is an array", what);
  }
}


static void check_id (lua_State *L, int idx, int profile, const char *what) {
  switch (lua_type(L, idx)) {
    case LUA_TSTRING: return;
    case LUA_TNUMBER:
      CHECK(profile != P_MCP || lua_isinteger(L, idx), "%s: mcp id is a float", what);
      return;
    case LUA_TLIGHTUSERDATA:
      CHECK(is_null(L, idx) && profile != P_MCP, "%s: id is null in mcp", what);
      return;
    default:
      host_fail("%s: id is a %s", what, luaL_typename(L, idx));
  }
}


/* result/error: a string id's rawid is core.rawid(id) (normalized) */
static void check_match_id (lua_State *L, int id, int raw, const char *what) {
  if (check_int_rawid(L, id, raw, what)) return;
  check_rawid_text(L, raw, what);
  if (lua_type(L, id) == LUA_TSTRING) {
    int n;
    lua_pushvalue(L, id);
    n = host_core(L, "rawid", 1);
    CHECK(n == 1, "%s: core.rawid(id) raised: %s", what, lua_tostring(L, -1));
    CHECK(lua_rawequal(L, -1, raw), "%s: rawid %s is not core.rawid(id) %s",
          what, lua_tostring(L, raw), lua_tostring(L, -1));
    lua_pop(L, 1);
  }
  else if (lua_type(L, id) == LUA_TLIGHTUSERDATA)
    CHECK(strcmp(lua_tostring(L, raw), "null") == 0, "%s: null id, rawid %s",
          what, lua_tostring(L, raw));
}


static void check_invalid (lua_State *L, int base) {
  static const char *const msgs[] = {"Parse error", "Invalid Request",
    "Message too large", "Nesting too deep", "Batch too large",
    "Batches are not allowed", NULL};
  lua_Integer code;
  const char *msg;
  int i;
  CHECK(lua_isinteger(L, base + 1), "invalid: code is not an integer");
  code = lua_tointeger(L, base + 1);
  CHECK(code == -32700 || code == -32600, "invalid: code %lld", (long long)code);
  CHECK(lua_type(L, base + 2) == LUA_TSTRING, "invalid: message is not a string");
  msg = lua_tostring(L, base + 2);
  for (i = 0; msgs[i] != NULL && strcmp(msgs[i], msg) != 0; i++) ;
  CHECK(msgs[i] != NULL, "invalid: unknown message '%s'", msg);
  CHECK((code == -32700) == (i == 0), "invalid: code %lld with message '%s'",
        (long long)code, msg);
  check_rawid_text(L, base + 3, "invalid");
  CHECK(lua_type(L, base + 4) == LUA_TBOOLEAN, "invalid: reply is not a boolean");
  CHECK(lua_type(L, base + 5) == LUA_TSTRING, "invalid: detail is not a string");
  CHECK(lua_toboolean(L, base + 4) || strcmp(lua_tostring(L, base + 3), "null") == 0 ||
        strcmp(msg, "Invalid Request") == 0,
        "invalid: no reply but an id for '%s'", msg);
}


void check_event (lua_State *L, int base, int n, int profile, int in_batch) {
  const char *kind;
  CHECK(lua_type(L, base) == LUA_TSTRING, "event kind is a %s", luaL_typename(L, base));
  kind = lua_tostring(L, base);
  CHECK(count_of(kind) >= 0, "unknown event kind '%s'", kind);
  CHECK(n == count_of(kind), "%s: %d values, expected %d", kind, n, count_of(kind));
  luaL_checkstack(L, 10, "check_event");
  if (is_kind(kind, "request")) {
    check_method_params(L, base, profile, kind);
    check_id(L, base + 3, profile, kind);
    if (!check_int_rawid(L, base + 3, base + 4, kind)) {
      check_rawid_text(L, base + 4, kind);
      check_id_matches(L, base + 3, base + 4, kind);
    }
  }
  else if (is_kind(kind, "notification"))
    check_method_params(L, base, profile, kind);
  else if (is_kind(kind, "result") || is_kind(kind, "error")) {
    check_id(L, base + 3, profile, kind);
    check_match_id(L, base + 3, base + 1, kind);
    CHECK(!lua_isnil(L, base + 2), "%s: the value is nil", kind);
    if (is_kind(kind, "error")) {
      double c;
      CHECK(lua_istable(L, base + 2), "error: err is a %s", luaL_typename(L, base + 2));
      lua_getfield(L, base + 2, "code");
      c = (double)lua_tonumber(L, -1);
      CHECK(lua_type(L, -1) == LUA_TNUMBER && c == floor(c) && isfinite(c),
            "error: code is not an integer");
      lua_getfield(L, base + 2, "message");
      CHECK(lua_type(L, -1) == LUA_TSTRING, "error: message is not a string");
      lua_pop(L, 2);
    }
  }
  else if (is_kind(kind, "batch")) {
    lua_Integer i, len;
    CHECK(!in_batch, "a batch inside a batch");
    CHECK(profile == P_JSONRPC, "a batch in profile %s", host_profiles[profile]);
    CHECK(lua_istable(L, base + 1), "batch: items is a %s", luaL_typename(L, base + 1));
    len = (lua_Integer)lua_rawlen(L, base + 1);
    CHECK(len >= 1, "batch: no items");
    for (i = 1; i <= len; i++) {
      int top = lua_gettop(L), j, m;
      lua_rawgeti(L, base + 1, i);
      CHECK(lua_istable(L, -1), "batch: item %d is a %s", (int)i, luaL_typename(L, -1));
      lua_getfield(L, -1, "n");
      CHECK(lua_isinteger(L, -1), "batch: item %d has no n", (int)i);
      m = (int)lua_tointeger(L, -1);
      lua_pop(L, 1);
      CHECK(m >= 1 && m <= 6, "batch: item %d has n = %d", (int)i, m);
      luaL_checkstack(L, m + 10, "check_event");
      for (j = 1; j <= m; j++) lua_rawgeti(L, top + 1, j);
      check_event(L, top + 2, m, profile, 1);
      lua_settop(L, top);
    }
  }
  else
    check_invalid(L, base);
}


int drain (lua_State *L, int codec, int profile, Str *log) {
  int count = 0;
  codec = lua_absindex(L, codec);
  for (;;) {
    int base = lua_gettop(L), n, i;
    n = host_method(L, codec, "next", 0);
    if (n < 0) host_fail("codec:next() raised: %s", lua_tostring(L, -1));
    if (n == 0) break;
    check_event(L, base + 1, n, profile, 0);
    if (log != NULL) {
      for (i = 1; i <= n; i++) {
        if (i > 1) str_addz(log, " ");
        dump_value(L, base + i, log);
      }
      str_addz(log, "\n");
    }
    lua_settop(L, base);
    count++;
  }
  return count;
}

/* }============================================================= */


/* {====================== framers ============================== */

/*
** Input: 5 bytes of settings, then up to 15 chunk sizes, then the stream.
**   [0] profile (mod 3)   [1] max_message_bytes: 0 default, < 200 itself,
**   else (b - 199) * 256  [2] max_depth: 0 default, else itself
**   [3] max_batch: 0 default, else itself   [4] count of chunk sizes (mod 16)
**   then that many bytes: each chunk is that byte + 1 long (cycled; none:
**   one byte at a time).
** The stream is decoded twice: fed whole, and fed in those chunks with
** codec:next() drained after each. The events must be the same, valid,
** and the codec must buffer no more than a message (or a header line).
*/
static long pick_bytes (unsigned b) {
  if (b == 0) return 0;
  if (b < 200) return (long)b;
  return (long)(b - 199) * 256;
}


static void feed (lua_State *L, int codec, const char *p, size_t n) {
  lua_pushlstring(L, p, n);
  if (host_method(L, codec, "feed", 1) < 0)
    host_fail("codec:feed raised: %s", lua_tostring(L, -1));
}


static void check_bounded (lua_State *L, int codec, long max_bytes, int lsp) {
  long limit = max_bytes > 0 ? max_bytes : DEFAULT_MAX_BYTES;
  long buffered = host_buffered(L, codec), want;
  if (lsp && limit < MAX_HEADER_LINE) limit = MAX_HEADER_LINE;
  CHECK(buffered <= limit, "codec buffers %ld bytes (limit %ld)", buffered, limit);
  if (host_method(L, codec, "want", 0) != 1 || !lua_isinteger(L, -1))
    host_fail("codec:want() did not return an integer");
  want = (long)lua_tointeger(L, -1);
  lua_pop(L, 1);
  CHECK(want >= 0 && (lsp || want == 0), "codec:want() = %ld", want);
  CHECK(want == 0 || want + buffered <= (max_bytes > 0 ? max_bytes : DEFAULT_MAX_BYTES),
        "codec:want() = %ld with %ld buffered", want, buffered);
}


static void finish (lua_State *L, int codec) {
  if (host_method(L, codec, "finish", 0) < 0)
    host_fail("codec:finish raised: %s", lua_tostring(L, -1));
}


static void mismatch (const Str *a, const Str *b) {
  size_t i = 0, line = 1;
  while (i < a->n && i < b->n && a->p[i] == b->p[i]) {
    if (a->p[i] == '\n') line++;
    i++;
  }
  fprintf(stderr, "---- fed whole:\n%.*s\n---- fed in chunks:\n%.*s\n",
          (int)(a->n < 4000 ? a->n : 4000), a->p,
          (int)(b->n < 4000 ? b->n : 4000), b->p);
  host_fail("events differ when the same bytes come in chunks (event %lu)",
            (unsigned long)line);
}


int fuzz_framer (const uint8_t *data, size_t size, int lsp) {
  Input in;
  unsigned sizes[16], nsizes, k = 0, i;
  int profile, max_depth, max_batch, whole, pieces, count = 0;
  long max_bytes;
  const char *stream;
  size_t len, off;
  Str a = {NULL, 0, 0}, b = {NULL, 0, 0};
  lua_State *L;
  in.p = data; in.n = size;
  profile = (int)(in_u8(&in) % PROFILES);
  max_bytes = pick_bytes(in_u8(&in));
  max_depth = (int)in_u8(&in);
  if (max_depth == 1) max_depth = 2;  /* a codec takes 2 to 1000 */
  max_batch = (int)in_u8(&in);
  nsizes = in_u8(&in) % 16;
  for (i = 0; i < nsizes; i++) sizes[i] = in_u8(&in) + 1;
  len = in_take(&in, in.n, &stream);
  L = host_open(0);
  whole = host_codec(L, lsp, profile, max_bytes, max_depth, max_batch);
  pieces = host_codec(L, lsp, profile, max_bytes, max_depth, max_batch);
  if (len > 0) feed(L, whole, stream, len);
  count += drain(L, whole, profile, &a);
  finish(L, whole);
  count += drain(L, whole, profile, &a);
  CHECK(host_buffered(L, whole) == 0, "bytes left buffered after finish");
  for (off = 0; off < len; ) {
    size_t n = nsizes ? sizes[k++ % nsizes] : 1;
    if (n > len - off) n = len - off;
    feed(L, pieces, stream + off, n);
    off += n;
    drain(L, pieces, profile, &b);
    check_bounded(L, pieces, max_bytes, lsp);
  }
  finish(L, pieces);
  drain(L, pieces, profile, &b);
  CHECK(host_buffered(L, pieces) == 0, "bytes left buffered after finish");
  if (!str_eq(&a, &b)) mismatch(&a, &b);
  CHECK((size_t)count <= len + 1, "%d events from %lu bytes", count,
        (unsigned long)len);
  /* feeding after finish is misuse: it raises */
  lua_pushliteral(L, "x");
  CHECK(host_method(L, pieces, "feed", 1) < 0, "feed after finish did not raise");
  str_free(&a);
  str_free(&b);
  host_close(L);
  return 0;
}

/* }============================================================= */
