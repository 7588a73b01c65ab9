/*
** core.c — the jrpc.core module. The core is one translation unit made
** of the files included below, so every helper stays static and only
** luaopen_jrpc_core is exported. jrpc.h declares what each file provides,
** so the order below is only for reading: layers first, the codec after
** what it is made of. What needs OpenSSL (tls.c, crypto.c) is the module
** jrpc.core_tls (core_tls.c), loaded on first use: see core_index.
*/
#define _POSIX_C_SOURCE 200809L

#include "jrpc.h"

#include "buf.c"       /* byte buffers */
#include "num.c"       /* the number rules */
#include "udata.c"     /* the userdata recipe */
#include "scan.c"      /* strict JSON validation */
#include "tolua.c"     /* JSON text to Lua values */
#include "encode.c"    /* Lua values to JSON text */
#include "work.c"      /* per-call temporaries */
#include "frame.c"     /* ndjson and Content-Length framing */
#include "message.c"   /* JSON-RPC messages and batches */
#include "shape.c"     /* declared params, checked as they are decoded */
#include "codec.c"     /* jrpc.Codec */
#include "pending.c"   /* jrpc.Pending */
#include "http.c"      /* jrpc.Http and the HTTP/SSE writers */
#include "http_client.c"  /* jrpc.HttpClient and the request writer */

/* module functions: upvalues array_mt, object_mt, a scratch codec */
#define SCRATCH  ((Codec *)lua_touserdata(L, lua_upvalueindex(3)))


/*
** The metatable argument 'arg' (the codec option empty_dict, for
** core.encode and core.decode): its stack index, or 0 when absent.
*/
static int empty_dict_arg (lua_State *L, int arg) {
  if (lua_isnoneornil(L, arg)) return 0;
  luaL_argcheck(L, lua_istable(L, arg), arg, "empty_dict must be a table (a metatable)");
  return arg;
}


/*
** core.encode(value [, max_depth [, empty_dict]]) -> json | nil, msg
** The scratch codec's 'out' needs no Work: encoding runs no Lua code (raw
** access only, no allocation from the Lua heap but luaL_checkstack, which
** runs no finalizer), and the text is copied out by lua_pushlstring
** before its GC step can run one.
*/
static int core_encode (lua_State *L) {
  Codec *C = SCRATCH;
  lua_Integer depth = luaL_optinteger(L, 2, DEFAULT_MAX_DEPTH);
  int emt = empty_dict_arg(L, 3);
  Enc E;
  luaL_checkany(L, 1);
  luaL_argcheck(L, depth >= 1 && depth <= DEPTH_CEILING, 2,
                "max_depth must be from 1 to 1000");
  C->out.n = 0;
  if (!enc_into(L, &C->out, 1, AMT, OMT, emt, (int)depth, &E))
    return enc_pushfail(L, &E);
  lua_pushlstring(L, C->out.p, C->out.n);
  if (C->out.cap > 65536) buf_free(L, &C->out);  /* keep no big scratch */
  return 1;
}


/*
** core.peek(json [, max_depth]) -> kind, id, method
** What a message is, told by its top-level members without building a
** value (containers are only validated, to max_depth): kind "request",
** "notification", "result" or "error", or nil when the text does not
** say (not an object, a batch, or both a call and a response); id, the
** exact JSON text of an id that is a string or an integer, else nil;
** method, a method name without escapes, else nil. Read as far as the
** text is valid. For a
** transport that routes messages it has no need to decode.
*/
static int core_peek (lua_State *L) {
  size_t len;
  const char *s = luaL_checklstring(L, 1, &len);
  lua_Integer depth = luaL_optinteger(L, 2, DEFAULT_MAX_DEPTH);
  FramePeek pk;
  luaL_argcheck(L, depth >= 1 && depth <= DEPTH_CEILING, 2,
                "max_depth must be from 1 to 1000");
  frame_peek(s, s + len, &pk, (int)depth);
  if (pk.kind == PEEK_CALL)
    lua_pushstring(L, pk.has_id ? "request" : "notification");
  else if (pk.kind == PEEK_RESPONSE)
    lua_pushstring(L, pk.error ? "error" : "result");
  else
    lua_pushnil(L);
  if (pk.idtext != NULL && pk.has_id == 1) lua_pushlstring(L, pk.idtext, pk.idtextlen);
  else lua_pushnil(L);
  if (pk.method != NULL) lua_pushlstring(L, pk.method, pk.methodlen);
  else lua_pushnil(L);
  return 3;
}


/*
** Check that [s, e) is one JSON value (whitespace around it allowed) no
** deeper than 'depth' (argument 2's value): the end of the value, or NULL
** with nil and the reason pushed (core.decode and core.raw_json).
*/
static const char *check_text (lua_State *L, const char *s, const char *e,
                               lua_Integer depth) {
  Scan S;
  const char *end;
  luaL_argcheck(L, depth >= 1 && depth <= DEPTH_CEILING, 2,
                "max_depth must be from 1 to 1000");
  memset(&S, 0, sizeof(S));
  S.max_depth = (int)depth;
  end = scan_value(&S, scan_skipws(s, e), e, 0);
  if (end != NULL && scan_skipws(end, e) != e)
    end = scan_fail(&S, scan_skipws(end, e), "trailing characters");
  if (end == NULL) {
    lua_pushnil(L);
    lua_pushfstring(L, "%s at byte %d", S.err, (int)(S.at - s) + 1);
    return NULL;
  }
  if (S.has_nul) {
    lua_pushnil(L);
    lua_pushliteral(L, "strings holding \\u0000 are not supported");
    return NULL;
  }
  return end;
}


/* core.decode(json [, max_depth [, null [, empty_dict]]]) -> value | nil, msg */
static int core_decode (lua_State *L) {
  Codec *C = SCRATCH;
  Work *W;
  size_t len;
  const char *s = luaL_checklstring(L, 1, &len);
  const char *e = s + len, *p = scan_skipws(s, e), *end;
  lua_Integer depth = luaL_optinteger(L, 2, DEFAULT_MAX_DEPTH);
  int null = lua_isnoneornil(L, 3) ? 0 : 3;  /* what JSON null becomes */
  int emt = empty_dict_arg(L, 4);
  end = check_text(L, s, e, depth);
  if (end == NULL) return 2;
  /* the text is argument 1, anchored; the temporaries are this call's */
  W = work_acquire(L, &C->work, lua_upvalueindex(3));
  if (*p == '"') tolua_string(L, &W->scratch, p, end);
  else if (*p == '-' || num_isdigit(*p)) {
    Scan S;  /* checked already: the scan only says whether it is an integer */
    int isint;
    long long v;
    memset(&S, 0, sizeof(S));
    scan_number(&S, p, end, &isint);
    if (isint && num_token_int64(p, end, &v)) lua_pushinteger(L, (lua_Integer)v);
    else tolua_json(L, &W->tree, p, end, AMT, null, emt);
  }
  else tolua_json(L, &W->tree, p, end, AMT, null, emt);
  work_release(L, W);
  return 1;
}


/* core.rawid(id) -> JSON text of an integer or string id */
static int core_rawid (lua_State *L) {
  Codec *C = SCRATCH;
  if (lua_type(L, 1) == LUA_TSTRING) {
    size_t len;
    const char *s = lua_tolstring(L, 1, &len);
    C->out.n = 0;
    if (!enc_string(L, &C->out, s, len))
      return luaL_argerror(L, 1, "id is not valid UTF-8");
    lua_pushlstring(L, C->out.p, C->out.n);
    return 1;
  }
  if (lua_type(L, 1) == LUA_TNUMBER) {
    lua_Number n = lua_tonumber(L, 1);
#if !defined(JR_NO_INTEGERS)
    if (lua_isinteger(L, 1)) n = 0;  /* any integer is fine */
#endif
    luaL_argcheck(L, n == floor(n) && fabs(n) <= MAX_SAFE_INT, 1,
                  "a numeric id must be an integer (within 2^53 as a float)");
    C->out.n = 0;
#if !defined(JR_NO_INTEGERS)
    if (lua_isinteger(L, 1)) enc_integer(L, &C->out, (long long)lua_tointeger(L, 1));
    else
#endif
    enc_integer(L, &C->out, (long long)lua_tonumber(L, 1));
    lua_pushlstring(L, C->out.p, C->out.n);
    return 1;
  }
  return luaL_argerror(L, 1, "an id must be an integer or a string");
}


/*
** core.add_null(v): the encoder writes the userdata 'v' as null, like
** core.null (Neovim's vim.NIL). Per lua_State (a registry set with weak
** keys); the encoder looks it up only when it meets a userdata.
*/
/* push the registry table with weak keys under 'key', made on first use */
static void core_weakset (lua_State *L, const char *key) {
  lua_pushlightuserdata(L, (void *)key);
  lua_rawget(L, LUA_REGISTRYINDEX);
  if (!lua_istable(L, -1)) {
    lua_pop(L, 1);
    lua_createtable(L, 0, 1);
    lua_createtable(L, 0, 1);
    lua_pushliteral(L, "k");
    lua_setfield(L, -2, "__mode");
    lua_setmetatable(L, -2);
    lua_pushlightuserdata(L, (void *)key);
    lua_pushvalue(L, -2);
    lua_rawset(L, LUA_REGISTRYINDEX);
  }
}


static int core_add_null (lua_State *L) {
  int t = lua_type(L, 1);
  luaL_argcheck(L, t == LUA_TUSERDATA || t == LUA_TLIGHTUSERDATA, 1,
                "a userdata expected");
  lua_settop(L, 1);
  core_weakset(L, &NULLS_KEY);
  lua_pushvalue(L, 1);
  lua_pushboolean(L, 1);
  lua_rawset(L, -3);
  return 0;
}


/*
** core.raw_json(json [, max_depth]) -> a value the encoder writes as this
** very text, or nil, msg when it is not valid JSON. Whitespace outside
** strings is dropped (a message stays one line); nothing else changes:
** the key order, number tokens and escapes are the author's (a decoded
** table would lose the order). The value is a userdata, so its checked
** text cannot change; the text is kept in a registry table with weak
** keys, looked up only when the encoder meets a userdata.
*/
static int core_raw_json (lua_State *L) {
  Codec *C = SCRATCH;
  size_t len, i;
  const char *s = luaL_checklstring(L, 1, &len);
  const char *e = s + len, *end;
  lua_Integer depth = luaL_optinteger(L, 2, DEFAULT_MAX_DEPTH);
  int in_string = 0;
  end = check_text(L, s, e, depth);
  if (end == NULL) return 2;
  C->out.n = 0;
  buf_reserve(L, &C->out, len);
  for (i = 0; i < len; i++) {  /* valid JSON: a quote inside a string is escaped */
    char c = s[i];
    if (in_string) {
      if (c == '\\') C->out.p[C->out.n++] = s[i++];
      else if (c == '"') in_string = 0;
    }
    else if (c == '"') in_string = 1;
    else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') continue;
    C->out.p[C->out.n++] = s[i];
  }
  lua_settop(L, 1);
  /* the text first: what allocates later may run a finalizer that
     encodes, with this same scratch buffer */
  lua_pushlstring(L, C->out.p, C->out.n);        /* 2 */
  if (C->out.cap > 65536) buf_free(L, &C->out);  /* keep no big scratch */
  lua_newuserdatauv(L, 1, 0);                    /* 3 */
  core_weakset(L, &RAWS_KEY);                    /* 4 */
  lua_pushvalue(L, 3);
  lua_pushvalue(L, 2);
  lua_rawset(L, 4);
  lua_pushvalue(L, 3);
  return 1;
}


/* core.now() -> monotonic seconds */
static int core_now (lua_State *L) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  lua_pushnumber(L, (lua_Number)ts.tv_sec + (lua_Number)ts.tv_nsec * 1e-9);
  return 1;
}


/*
** core.trim_memory() -> boolean: give the C heap's free pages back to the
** system (glibc's malloc_trim). After a burst of large messages the heap
** keeps its peak size although everything was freed; a server calls this
** once the burst is over (after a full GC). False where there is no
** such call (not glibc): nothing was done.
*/
static int core_trim_memory (lua_State *L) {
#if defined(__GLIBC__)
  malloc_trim(0);
  lua_pushboolean(L, 1);
#else
  lua_pushboolean(L, 0);
#endif
  return 1;
}


/*
** Push the marker metatable kept in the registry under 'key', made on the
** first load: a second load of the core in the same state (after
** package.loaded["jrpc.core"] = nil) must agree on which tables are arrays.
*/
static void marker_mt (lua_State *L, const char *key, const char *type) {
  lua_getfield(L, LUA_REGISTRYINDEX, key);
  if (lua_istable(L, -1)) return;
  lua_pop(L, 1);
  lua_createtable(L, 0, 1);
  lua_pushstring(L, type);
  lua_setfield(L, -2, "__jsontype");
  lua_pushvalue(L, -1);
  lua_setfield(L, LUA_REGISTRYINDEX, key);
}


static const luaL_Reg core_funcs[] = {
  {"encode", core_encode},
  {"decode", core_decode},
  {"peek", core_peek},
  {"rawid", core_rawid},
  {"raw_json", core_raw_json},
  {"http_response", http_response},
  {"http_stream_head", http_stream_head},
  {"http_chunk", http_chunk},
  {"http_request", hc_request},
  {"sse_event", sse_event},
  {NULL, NULL}
};


/*
** The names jrpc.core_tls provides (core_tls.c: libssl and libcrypto,
** about 1.7 MiB of RSS once mapped). They are not in the module table
** until one of them is first read: the table's metatable has this
** __index, which then loads jrpc.core_tls with require (so
** package.loaded, package.preload, package.cpath and Neovim's
** runtimepath all apply), copies every one of them into the table (later
** reads are plain table reads) and returns the one asked for. Any other
** missing name is nil, as in a table without a metatable; a process that
** never uses TLS or the crypto functions never maps OpenSSL.
*/
static const char *const core_tls_names[] = {
  "tls_client", "hmac_sha256", "random_bytes", "equal", "sha256", "base64", NULL
};


/* __index(core, key) */
static int core_index (lua_State *L) {
  size_t len = 0;
  const char *key = NULL;
  int i;
  if (lua_type(L, 2) == LUA_TSTRING) key = lua_tolstring(L, 2, &len);
  for (i = 0; key != NULL && core_tls_names[i] != NULL; i++)
    if (strlen(core_tls_names[i]) == len && memcmp(core_tls_names[i], key, len) == 0)
      break;
  if (key == NULL || core_tls_names[i] == NULL) return 0;
  lua_settop(L, 2);
  lua_getglobal(L, "require");                      /* 3 */
  if (lua_type(L, 3) != LUA_TFUNCTION)
    return luaL_error(L, "jrpc.core: '%s' is in jrpc.core_tls, and there is "
                      "no require to load it", key);
  lua_pushliteral(L, "jrpc.core_tls");
  lua_call(L, 1, 1);                                /* 3: raises if not found */
  if (!lua_istable(L, 3))
    return luaL_error(L, "jrpc.core: require 'jrpc.core_tls' gave no table");
  for (i = 0; core_tls_names[i] != NULL; i++) {
    lua_pushstring(L, core_tls_names[i]);
    lua_pushvalue(L, -1);
    lua_rawget(L, 3);
    if (lua_isnil(L, -1))
      return luaL_error(L, "jrpc.core: jrpc.core_tls has no '%s' (another "
                        "build's?)", core_tls_names[i]);
    lua_rawset(L, 1);
  }
  lua_pushvalue(L, 2);
  lua_rawget(L, 1);
  return 1;
}


JR_EXPORT int luaopen_jrpc_core (lua_State *L) {
  work_open(L);
  lua_createtable(L, 0, 24);             /* the module */
  marker_mt(L, "jrpc.array_mt", "array");
  marker_mt(L, "jrpc.object_mt", "object");
  codec_open(L);
  lua_pushvalue(L, -2);
  lua_setfield(L, -4, "array_mt");
  lua_pushvalue(L, -1);
  lua_setfield(L, -4, "object_mt");
  /* a private codec gives the module functions their scratch buffers */
  lua_pushcfunction(L, codec_new);
  lua_call(L, 0, 1);
  luaL_setfuncs(L, core_funcs, 3);       /* pops array_mt, object_mt, codec */
  lua_pushcfunction(L, codec_new);
  lua_setfield(L, -2, "codec");
  lua_pushcfunction(L, core_now);
  lua_setfield(L, -2, "now");
  lua_pushcfunction(L, core_add_null);
  lua_setfield(L, -2, "add_null");
  lua_pushcfunction(L, core_trim_memory);
  lua_setfield(L, -2, "trim_memory");
  lua_pushlightuserdata(L, NULL);
  lua_setfield(L, -2, "null");
  pd_open(L);
  http_open(L);
  hc_open(L);
  lua_createtable(L, 0, 1);              /* jrpc.core_tls on first use */
  lua_pushcfunction(L, core_index);
  lua_setfield(L, -2, "__index");
  lua_setmetatable(L, -2);
  return 1;
}
