/*
** jrpc.h — shared declarations of the C core.
** The core is one translation unit: core.c includes every other src .c file,
** so all functions stay static and only luaopen_jrpc_core is exported.
*/
#ifndef jrpc_h
#define jrpc_h

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "lua.h"
#include "lauxlib.h"

/* {======================================================
** Lua 5.1 (LuaJIT) compatibility: only what the core uses
** ======================================================= */
#if LUA_VERSION_NUM < 502
#define lua_rawlen(L, i)  lua_objlen(L, (i))
#define lua_newuserdatauv(L, sz, nuv)  lua_newuserdata(L, (sz))
#define JR_NO_INTEGERS 1   /* numbers are doubles only */
#define lua_absindex(L, i)  \
  ((i) > 0 || (i) <= LUA_REGISTRYINDEX ? (i) : lua_gettop(L) + (i) + 1)

/* LuaJIT 2.1 already has these 5.2 functions (it defines luaL_newlib) */
#if !defined(luaL_newlib)
#define luaL_newlibtable(L, l)  \
  lua_createtable(L, 0, sizeof(l) / sizeof((l)[0]) - 1)
#define luaL_newlib(L, l)  (luaL_newlibtable(L, l), luaL_setfuncs(L, l, 0))

static void luaL_setfuncs (lua_State *L, const luaL_Reg *l, int nup) {
  luaL_checkstack(L, nup + 1, "too many upvalues");
  for (; l->name != NULL; l++) {
    int i;
    for (i = 0; i < nup; i++)  /* copy upvalues to the top */
      lua_pushvalue(L, -nup);
    lua_pushcclosure(L, l->func, nup);
    lua_setfield(L, -(nup + 2), l->name);
  }
  lua_pop(L, nup);
}

static void luaL_setmetatable (lua_State *L, const char *tname) {
  luaL_getmetatable(L, tname);
  lua_setmetatable(L, -2);
}

static void *luaL_testudata (lua_State *L, int i, const char *tname) {
  void *p = lua_touserdata(L, i);
  if (p == NULL || !lua_getmetatable(L, i)) return NULL;
  luaL_getmetatable(L, tname);
  if (!lua_rawequal(L, -1, -2)) p = NULL;
  lua_pop(L, 2);
  return p;
}
#endif  /* !luaL_newlib */
#endif
/* }====================================================== */

#if defined(__GNUC__)
#define jr_likely(x)    __builtin_expect(!!(x), 1)
#define jr_unlikely(x)  __builtin_expect(!!(x), 0)
#else
#define jr_likely(x)    (x)
#define jr_unlikely(x)  (x)
#endif

#if defined(__GNUC__)
#define JR_EXPORT  __attribute__((visibility("default")))
#else
#define JR_EXPORT
#endif

/* the one exported symbol */
JR_EXPORT int luaopen_jrpc_core (lua_State *L);

/* JSON-RPC 2.0 error codes */
#define JR_PARSE_ERROR      (-32700)
#define JR_INVALID_REQUEST  (-32600)

#endif
