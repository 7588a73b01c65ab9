/*
** lineread.c -- the jrpc.lineread module: a line read with a length cap,
** for the blocking stdio transport. Lua's own file:read("L") holds a whole
** line in memory however long it is; file:read(n) waits for n bytes even
** when a shorter message is all the other side will send before it waits
** for our reply. This reads like "L" but returns after at most 'max' bytes,
** so the codec's max_message_bytes bounds memory on this transport too.
**
** It also keeps stdout for a stdio transport's protocol alone (keep_stdout,
** write): a print() in a handler must not land in the middle of the
** message stream.
**
** It is kept out of jrpc.core on purpose: the core does no I/O.
*/
#define _POSIX_C_SOURCE 200809L  /* flockfile, getc_unlocked, F_DUPFD_CLOEXEC */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#if !defined(_WIN32)
#include <fcntl.h>
#include <unistd.h>
#endif

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


static int lr_fail (lua_State *L, const char *what) {
  lua_pushnil(L);
  lua_pushfstring(L, "%s: %s", what, strerror(errno));
  return 2;
}


#if !defined(_WIN32)

static int kept_stdout = -1;  /* the protocol's descriptor, once kept */

/*
** lineread.keep_stdout() -> fd: a private descriptor for what stdout was
** (close-on-exec, so children do not hold the protocol stream open), and
** descriptor 1 made a copy of stderr, so that everything else written to
** stdout (print, io.write, io.stdout, C code, children) goes to stderr.
** C's stdout is flushed first: bytes already buffered were meant for the
** old stdout. The same fd on later calls (descriptors are the process's);
** nil, msg when a descriptor cannot be made.
*/
static int lr_keep_stdout (lua_State *L) {
  int fd;
  if (kept_stdout >= 0) {
    lua_pushinteger(L, kept_stdout);
    return 1;
  }
  fflush(stdout);
  fd = fcntl(1, F_DUPFD_CLOEXEC, 3);
  if (fd < 0) return lr_fail(L, "cannot keep stdout");
  if (dup2(2, 1) < 0) {
    int e = errno;
    close(fd);
    errno = e;
    return lr_fail(L, "cannot point stdout at stderr");
  }
  kept_stdout = fd;
  lua_pushinteger(L, fd);
  return 1;
}


/*
** lineread.write(fd, bytes) -> true, or nil, msg: all of 'bytes' to the
** descriptor, for the blocking transport (whose descriptors block; an
** interrupted write is resumed, any other failure is the answer).
*/
static int lr_write (lua_State *L) {
  lua_Integer fd = luaL_checkinteger(L, 1);
  size_t len, done = 0;
  const char *s = luaL_checklstring(L, 2, &len);
  luaL_argcheck(L, fd >= 0 && fd <= 0x7fffffff, 1, "not a descriptor");
  while (done < len) {
    ssize_t n = write((int)fd, s + done, len - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return lr_fail(L, "write error");
    }
    done += (size_t)n;
  }
  lua_pushboolean(L, 1);
  return 1;
}

#else

static int lr_keep_stdout (lua_State *L) {
  lua_pushnil(L);
  lua_pushliteral(L, "cannot keep stdout: not supported on this system");
  return 2;
}

static int lr_write (lua_State *L) {
  return luaL_error(L, "lineread.write: not supported on this system");
}

#endif


LR_EXPORT int luaopen_jrpc_lineread (lua_State *L) {
  lua_createtable(L, 0, 3);
  lua_pushcfunction(L, lr_read);
  lua_setfield(L, -2, "read");
  lua_pushcfunction(L, lr_keep_stdout);
  lua_setfield(L, -2, "keep_stdout");
  lua_pushcfunction(L, lr_write);
  lua_setfield(L, -2, "write");
  return 1;
}
