/*
** lineread.c -- the jrpc.lineread module: a line read with a length cap,
** for the blocking stdio transport. Lua's own file:read("L") holds a whole
** line in memory however long it is; file:read(n) waits for n bytes even
** when a shorter message is all the other side will send before it waits
** for our reply. This reads like "L" but returns after at most 'max' bytes,
** so the codec's max_message_bytes bounds memory on this transport too.
**
** It is kept out of jrpc.core on purpose: the core does no I/O.
*/
#define _POSIX_C_SOURCE 200809L  /* flockfile, getc_unlocked */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lua.h"
#include "lauxlib.h"
#include "lualib.h"  /* LUA_FILEHANDLE in Lua 5.1 (LuaJIT) */

#if defined(__GNUC__)
#define LR_EXPORT  __attribute__((visibility("default")))
#else
#define LR_EXPORT
#endif

LR_EXPORT int luaopen_jrpc_lineread (lua_State *L);

#define CHUNK  4096
#define DEFAULT_MAX  65536

#if defined(_WIN32)
#define lr_lock(f)    ((void)0)
#define lr_unlock(f)  ((void)0)
#define lr_getc(f)    getc(f)
#else
#define lr_lock(f)    flockfile(f)
#define lr_unlock(f)  funlockfile(f)
#define lr_getc(f)    getc_unlocked(f)
#endif


/*
** The FILE of an open Lua file handle, or a raised error. Lua 5.4's
** luaL_Stream and LuaJIT's file userdata both start with the FILE pointer;
** a closed handle has no close function (5.4) or a NULL FILE (LuaJIT).
*/
static FILE *check_file (lua_State *L) {
#if LUA_VERSION_NUM >= 502
  luaL_Stream *s = (luaL_Stream *)luaL_checkudata(L, 1, LUA_FILEHANDLE);
  if (s->closef == NULL) luaL_argerror(L, 1, "attempt to use a closed file");
  return s->f;
#else
  FILE **f = (FILE **)luaL_checkudata(L, 1, LUA_FILEHANDLE);
  if (*f == NULL) luaL_argerror(L, 1, "attempt to use a closed file");
  return *f;
#endif
}


/*
** Read into 'buf' (at most 'room' bytes) up to and including a '\n'.
** The lock is held only here, where no Lua code can run.
*/
static size_t read_some (FILE *f, char *buf, size_t room, int *nl) {
  size_t n = 0;
  int c = EOF;
  lr_lock(f);
  while (n < room && (c = lr_getc(f)) != EOF) {
    buf[n++] = (char)c;
    if (c == '\n') break;
  }
  lr_unlock(f);
  *nl = (c == '\n');
  return n;
}


/*
** lineread.read(file [, max]) -> the next line with its "\n"; or, for a
** line longer than max (default 65536) bytes, its next max bytes; the last
** bytes before the end of input without "\n"; nil at the end of input;
** nil, msg on a read error. Blocks only until a line ends or max bytes
** came, never for more input than that.
*/
static int lr_read (lua_State *L) {
  FILE *f = check_file(L);
  lua_Integer max = luaL_optinteger(L, 2, DEFAULT_MAX);
  luaL_Buffer b;
  size_t total = 0;
  int nl = 0;
  luaL_argcheck(L, max >= 1 && max <= (lua_Integer)1 << 30, 2,
                "max must be from 1 to 2^30");
  luaL_buffinit(L, &b);
  errno = 0;
  clearerr(f);
  while (!nl && total < (size_t)max) {
    char chunk[CHUNK];
    size_t want = (size_t)max - total, n;
    n = read_some(f, chunk, want < CHUNK ? want : CHUNK, &nl);
    if (n == 0) break;  /* end of input or an error */
    luaL_addlstring(&b, chunk, n);  /* may run Lua code: no lock held */
    total += n;
    f = check_file(L);  /* a finalizer may have closed it meanwhile */
  }
  if (total == 0 && ferror(f)) {
    lua_pushnil(L);
    lua_pushfstring(L, "read error: %s", strerror(errno));
    return 2;
  }
  if (total == 0) {
    lua_pushnil(L);
    return 1;
  }
  luaL_pushresult(&b);
  return 1;
}


LR_EXPORT int luaopen_jrpc_lineread (lua_State *L) {
  lua_createtable(L, 0, 1);
  lua_pushcfunction(L, lr_read);
  lua_setfield(L, -2, "read");
  return 1;
}
