/*
** fuzz_mcp.c -- the MCP server (lua/jrpc/mcp/) run in-process on the input:
** JSON-RPC lines with hostile _meta and params through a peer, or raw HTTP
** request bytes through the Streamable HTTP server on a fake luv (no
** sockets). fuzz/mcp_host.lua does the driving and the checking (the input
** format is in its header comment); this file gives it a fresh Lua 5.4
** state with the standard libraries, and aborts on any error it raises,
** an invariant of its own or one escaping from the server.
**
** The Lua modules are loaded from the checkout (JRPC_ROOT, set by the
** Makefile). Parsing them for every input would take most of the time,
** so each chunk is compiled once and kept as bytecode: a fresh state loads
** those bytes (lua_load of a binary chunk) instead of the source.
*/
#define _POSIX_C_SOURCE 200809L  /* strdup */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lualib.h"

#include "host.h"

#ifndef JRPC_ROOT
#error "JRPC_ROOT must name the repository root (the Makefile sets it)"
#endif

#define MAX_CHUNKS 64
#define LUA_EDGES (1 << 16)


/* {====================== Lua coverage ========================= */

#if defined(__linux__)
__attribute__((section("__libfuzzer_extra_counters")))
#endif
static uint8_t edges[LUA_EDGES];

static unsigned prev_line = 0;


/*
** A line of a function is known by its number and the function's first
** and last lines (the file is not: its name string is new in every
** state, and hashing it on every line would cost more than the rest).
*/
static void line_hook (lua_State *L, lua_Debug *ar) {
  unsigned loc;
  if (!lua_getinfo(L, "S", ar)) return;
  loc = (unsigned)ar->currentline * 2654435761u ^ (unsigned)ar->linedefined * 40503u
        ^ (unsigned)ar->lastlinedefined;
  edges[(loc ^ prev_line) % LUA_EDGES]++;
  prev_line = loc >> 1;
}

/* }============================================================= */


/* {====================== bytecode cache ======================= */

typedef struct Chunk {
  char *name;   /* the file it came from */
  Str code;     /* its bytecode, as lua_dump wrote it */
} Chunk;

static Chunk cache[MAX_CHUNKS];
static int ncache = 0;


static int writer (lua_State *L, const void *p, size_t n, void *ud) {
  (void)L;
  str_add((Str *)ud, (const char *)p, n);
  return 0;
}


static const Chunk *cached (const char *file) {
  int i;
  for (i = 0; i < ncache; i++)
    if (strcmp(cache[i].name, file) == 0) return &cache[i];
  return NULL;
}


/*
** loadfile replacement for the searcher below: the bytecode of 'file',
** compiled from source the first time. Pushes the function, or returns
** nonzero with the error message pushed.
*/
static int load_cached (lua_State *L, const char *file) {
  const Chunk *c = cached(file);
  Chunk *nc;
  if (c != NULL)
    return luaL_loadbufferx(L, c->code.p, c->code.n, file, "b");
  if (luaL_loadfilex(L, file, "t") != LUA_OK) return 1;
  CHECK(ncache < MAX_CHUNKS, "more than %d Lua files", MAX_CHUNKS);
  nc = &cache[ncache];
  memset(nc, 0, sizeof(*nc));
  nc->name = strdup(file);
  CHECK(nc->name != NULL, "out of memory in the harness");
  CHECK(lua_dump(L, writer, &nc->code, 0) == 0, "lua_dump failed for %s", file);
  ncache++;
  return 0;
}


/*
** package.searchers[2] for our paths only: package.searchpath finds the
** file, load_cached loads it. Everything else is left to the standard
** searchers (there are no others: package.cpath is emptied).
*/
static int searcher (lua_State *L) {
  const char *name = luaL_checkstring(L, 1);
  const char *file;
  lua_getglobal(L, "package");
  lua_getfield(L, -1, "searchpath");
  lua_pushstring(L, name);
  lua_getfield(L, -3, "path");
  lua_call(L, 2, 2);
  if (lua_isnil(L, -2)) return 1;  /* the message of searchpath */
  file = lua_tostring(L, -2);
  if (load_cached(L, file) != 0) return lua_error(L);
  lua_pushstring(L, file);
  return 2;
}

/* }============================================================= */


/* {====================== the state ============================ */

static void setup (lua_State *L) {
  luaL_openlibs(L);
  prev_line = 0;
  lua_sethook(L, line_hook, LUA_MASKLINE, 0);
  lua_getglobal(L, "package");
  lua_pushliteral(L, JRPC_ROOT "/lua/?.lua;" JRPC_ROOT "/lua/?/init.lua;" JRPC_ROOT "/fuzz/?.lua");
  lua_setfield(L, -2, "path");
  lua_pushliteral(L, "");  /* no native module but the core, built in */
  lua_setfield(L, -2, "cpath");
  lua_getfield(L, -1, "searchers");
  lua_pushcfunction(L, searcher);
  lua_rawseti(L, -2, 2);
  lua_pop(L, 2);
}


/* require "mcp_host" and call its run(input); 0 or the error on the top */
static int run (lua_State *L, const uint8_t *data, size_t size) {
  lua_getglobal(L, "require");
  lua_pushliteral(L, "mcp_host");
  if (lua_pcall(L, 1, 1, 0) != LUA_OK) return 1;
  lua_getfield(L, -1, "run");
  lua_pushlstring(L, (const char *)data, size);
  return lua_pcall(L, 1, 0, 0) != LUA_OK;
}

/* }============================================================= */


int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size) {
  lua_State *L = host_open(0);
  setup(L);
  if (run(L, data, size) != 0) {
    const char *msg = lua_tostring(L, -1);
    host_fail("%s", msg ? msg : "(an error that is not a string)");
  }
  host_close(L);
  return 0;
}
