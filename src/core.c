/*
** core.c — the jrpc.core module: one translation unit made of the files below.
*/
#include "jrpc.h"

#include "pending.c"

static const luaL_Reg core_funcs[] = {
  {NULL, NULL}
};

#if defined(__GNUC__)
__attribute__((visibility("default")))
#endif
int luaopen_jrpc_core (lua_State *L) {
  luaL_newlib(L, core_funcs);
  pending_open(L);
  return 1;
}
