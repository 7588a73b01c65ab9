/*
** embed.c -- a host program that owns its frame loop, the way a game
** engine or an editor does, and runs jrpc inside it without threads.
**
** It embeds Lua 5.4, loads examples/embed/game.lua and calls its frame(dt)
** 60 times a second.  game.lua talks JSON-RPC to examples/spec_server.lua,
** run as a child process, through jrpc.uv's non-blocking loop:pump(budget).
** The host measures how long each frame's Lua work takes and sleeps the
** rest of the frame.
**
** Build and run by hand, from the repository root:
**
**   make embed && build/embed
**   build/embed --root /path/to/jrpc --seconds 10
**
** --root is the repository (default: the directory above this program's
** own directory, so build/embed finds it; "." if argv[0] has no slash);
** --seconds is the longest the loop may run (default 10).  Prints one line
** per answer, then "frames: F, answers: A, errors: E, max frame work: X.X
** ms".  Exits 0 when every expected answer arrived with its expected
** value, 1 when some did not, 2 on a usage or Lua error.
*/

#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lua.h"
#include "lauxlib.h"
#include "lualib.h"

#define FRAME_RATE      60
#define NS_PER_SEC      1000000000L
#define FRAME_NS        (NS_PER_SEC / FRAME_RATE)
#define ROOT_MAX        4096

#define EXIT_MISSING    1
#define EXIT_ERROR      2


typedef struct Options {
  char root[ROOT_MAX];
  double seconds;
} Options;


static double now (void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / NS_PER_SEC;
}


/* Advance an absolute deadline by 'ns' nanoseconds. */
static void add_ns (struct timespec *ts, long ns) {
  ts->tv_nsec += ns;
  while (ts->tv_nsec >= NS_PER_SEC) {
    ts->tv_nsec -= NS_PER_SEC;
    ts->tv_sec++;
  }
}


static int before (const struct timespec *a, const struct timespec *b) {
  return a->tv_sec < b->tv_sec
      || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}


/*
** The repository root from argv[0]: "build/embed" -> "build/..".
** A bare name (found through PATH) says nothing: use ".".
*/
static void root_from_argv0 (char *root, const char *argv0) {
  const char *slash = strrchr(argv0, '/');
  if (slash == NULL)
    strcpy(root, ".");
  else
    snprintf(root, ROOT_MAX, "%.*s/..", (int)(slash - argv0), argv0);
}


/* Print the usage; returns 0 so that parse_args can 'return usage(...)'. */
static int usage (const char *progname) {
  fprintf(stderr, "usage: %s [--root DIR] [--seconds N]\n", progname);
  return 0;
}


/* Every option takes a value.  Returns 1 when the arguments are valid. */
static int parse_args (Options *o, int argc, char **argv) {
  int i;
  root_from_argv0(o->root, argv[0]);
  o->seconds = 10;
  for (i = 1; i < argc; i += 2) {
    const char *value = (i + 1 < argc) ? argv[i + 1] : NULL;
    if (value != NULL && strcmp(argv[i], "--root") == 0) {
      if (strlen(value) >= ROOT_MAX) return usage(argv[0]);
      strcpy(o->root, value);
    }
    else if (value != NULL && strcmp(argv[i], "--seconds") == 0) {
      char *end;
      o->seconds = strtod(value, &end);
      if (*end != '\0' || !(o->seconds > 0)) return usage(argv[0]);
    }
    else return usage(argv[0]);
  }
  return 1;
}


/* Message handler: the error with a traceback (as lua.c's msghandler). */
static int traceback (lua_State *L) {
  const char *msg = lua_tostring(L, 1);
  if (msg == NULL)
    msg = lua_pushfstring(L, "(error object is a %s value)",
                          luaL_typename(L, 1));
  luaL_traceback(L, L, msg, 1);
  return 1;
}


/*
** Call the function on top of the stack, under it 'nargs' arguments, with
** a traceback on error.  Prints the error; returns 1 on success.
*/
static int docall (lua_State *L, int nargs, int nresults) {
  int base = lua_gettop(L) - nargs;
  int status;
  lua_pushcfunction(L, traceback);
  lua_insert(L, base);
  status = lua_pcall(L, nargs, nresults, base);
  lua_remove(L, base);
  if (status != LUA_OK) {
    fprintf(stderr, "embed: %s\n", lua_tostring(L, -1));
    lua_pop(L, 1);
  }
  return status == LUA_OK;
}


/* package.path and package.cpath: the repository's lua/ and build/5.4/. */
static void set_paths (lua_State *L, const char *root) {
  lua_getglobal(L, "package");
  lua_pushfstring(L, "%s/lua/?.lua;%s/lua/?/init.lua;", root, root);
  lua_getfield(L, -2, "path");
  lua_concat(L, 2);
  lua_setfield(L, -2, "path");
  lua_pushfstring(L, "%s/build/5.4/?.so;", root);
  lua_getfield(L, -2, "cpath");
  lua_concat(L, 2);
  lua_setfield(L, -2, "cpath");
  lua_pop(L, 1);
}


/* Load game.lua and leave its table on the stack; 1 on success. */
static int load_game (lua_State *L, const char *root) {
  const char *path = lua_pushfstring(L, "%s/examples/embed/game.lua", root);
  int status = luaL_loadfile(L, path);
  lua_remove(L, -2);  /* the path */
  if (status != LUA_OK) {
    fprintf(stderr, "embed: %s\n", lua_tostring(L, -1));
    lua_pop(L, 1);
    return 0;
  }
  if (!docall(L, 0, 1)) return 0;
  if (!lua_istable(L, -1)) {
    fprintf(stderr, "embed: game.lua must return a table\n");
    lua_pop(L, 1);
    return 0;
  }
  return 1;
}


/* Call game[name](args...) where the game table is at index 'game'. */
static int call_game (lua_State *L, int game, const char *name, int nargs,
                      int nresults) {
  lua_getfield(L, game, name);
  lua_insert(L, -(nargs + 1));
  return docall(L, nargs, nresults);
}


/*
** The fixed-rate loop: one frame(dt) per 1/60 s until it returns false or
** time runs out.  A frame that overran does not make the next ones rush:
** the schedule restarts from now.  Returns 1 unless Lua raised an error.
*/
static int run_frames (lua_State *L, int game, double seconds,
                       long *frames, double *max_work) {
  struct timespec next;
  double start = now(), last = start;
  clock_gettime(CLOCK_MONOTONIC, &next);
  while (now() - start < seconds) {
    double t0 = now(), work;
    int more;
    lua_pushnumber(L, t0 - last);
    last = t0;
    if (!call_game(L, game, "frame", 1, 1)) return 0;
    more = lua_toboolean(L, -1);
    lua_pop(L, 1);
    work = now() - t0;
    if (work > *max_work) *max_work = work;
    (*frames)++;
    if (!more) break;
    add_ns(&next, FRAME_NS);
    {
      struct timespec current;
      clock_gettime(CLOCK_MONOTONIC, &current);
      if (before(&next, &current)) next = current;
    }
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
  }
  return 1;
}


/*
** game.summary() returns answers, errors and whether every expected
** answer arrived; print them with the frame statistics.
*/
static int report (lua_State *L, int game, long frames, double max_work) {
  int complete;
  if (!call_game(L, game, "summary", 0, 3)) return EXIT_ERROR;
  complete = lua_toboolean(L, -1);
  printf("frames: %ld, answers: %ld, errors: %ld, max frame work: %.1f ms\n",
         frames, (long)lua_tointeger(L, -3), (long)lua_tointeger(L, -2),
         max_work * 1000);
  lua_pop(L, 3);
  if (complete) return EXIT_SUCCESS;
  fprintf(stderr, "embed: some expected answers are missing or wrong\n");
  return EXIT_MISSING;
}


static int run (lua_State *L, const Options *o) {
  long frames = 0;
  double max_work = 0;
  int game;
  set_paths(L, o->root);
  if (!load_game(L, o->root)) return EXIT_ERROR;
  game = lua_gettop(L);
  lua_pushstring(L, o->root);
  if (!call_game(L, game, "start", 1, 0)) return EXIT_ERROR;
  if (!run_frames(L, game, o->seconds, &frames, &max_work)) return EXIT_ERROR;
  return report(L, game, frames, max_work);
}


int main (int argc, char **argv) {
  Options o;
  lua_State *L;
  int status;
  if (!parse_args(&o, argc, argv)) return EXIT_ERROR;
  setvbuf(stdout, NULL, _IOLBF, 0);  /* answers show as they arrive */
  L = luaL_newstate();
  if (L == NULL) {
    fprintf(stderr, "embed: cannot create the Lua state: not enough memory\n");
    return EXIT_ERROR;
  }
  luaL_openlibs(L);
  status = run(L, &o);
  lua_close(L);
  return status;
}
