/*
** resp.c -- the jrpc.resp module: RESP2, the Redis protocol, on hiredis
** (Debian's libhiredis). Its reader is sans-I/O like the core: bytes go
** in with reader:feed, complete replies come out with reader:next, so
** any split of the stream reads the same and the caller owns the socket.
** resp.command formats a command with hiredis's own formatter.
**
** It is kept out of jrpc.core on purpose: only a process that talks to
** Redis (jrpc.redis) maps libhiredis, and building the core needs no
** hiredis.
**
** Limits. hiredis itself refuses arrays nested more than 7 levels below
** the top one (a protocol error, "No support for nested multi bulk
** replies with depth > 7"), so converting a reply recurses at most 8
** levels. The reader refuses a reply whose arrays declare more than
** 'max_elements' elements in all (default 2^20): hiredis allocates an
** array's element vector when it reads the array's header, before its
** elements arrive. A bulk string is kept until it is complete, so its
** size is bounded by what the caller feeds.
*/
#define _POSIX_C_SOURCE 200809L  /* hiredis.h: struct timeval */

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "lua.h"
#include "lauxlib.h"

#if defined(__GNUC__)
#define RESP_EXPORT  __attribute__((visibility("default")))
#else
#define RESP_EXPORT
#endif

RESP_EXPORT int luaopen_jrpc_resp (lua_State *L);

#if LUA_VERSION_NUM < 502
#define lua_rawlen(L, i)  lua_objlen(L, (i))
#endif

#if LUA_VERSION_NUM >= 504
#define resp_newuserdata(L, sz)  lua_newuserdatauv(L, (sz), 1)
#define resp_setuservalue(L, i)  lua_setiuservalue(L, (i), 1)
#define resp_getuservalue(L, i)  lua_getiuservalue(L, (i), 1)
#else  /* LuaJIT: the one value is kept in the userdata's environment */
#define resp_newuserdata(L, sz)  lua_newuserdata(L, (sz))
#define resp_setuservalue(L, i)  lua_setfenv(L, (i))
#define resp_getuservalue(L, i)  lua_getfenv(L, (i))
#endif

#define READER_MT   "jrpc.resp.Reader"
#define COMMAND_MT  "jrpc.resp.Command"

#define DEFAULT_MAX_ELEMENTS  (1 << 20)

/* the longest text of a number argument ("%.17g" of a double, "%lld") */
#define NUMBUF  32


/* {======================= the reader ============================= */

typedef struct Reader {
  redisReader *r;           /* NULL once collected */
  redisReply *held;         /* the reply being converted (drop_held) */
  long long declared;       /* array elements declared by the reply so far */
  long long max_elements;
  long long refused;        /* the count that broke 'max_elements', or 0 */
  /* hiredis's default reply functions, with createArray checked */
  redisReplyObjectFunctions fn;
  void *(*create_array) (const redisReadTask *, int);
} Reader;


/*
** createArray for the reader: hiredis's own, unless the reply would then
** declare more than 'max_elements' elements. Returning NULL makes hiredis
** stop with an error (which reader:next reports with 'refused').
*/
static void *checked_array (const redisReadTask *task, int elements) {
  Reader *R = (Reader *)task->privdata;
  if (elements > 0) {
    R->declared += elements;
    if (R->declared > R->max_elements) {
      R->refused = R->declared;
      return NULL;
    }
  }
  return R->create_array(task, elements);
}


static Reader *check_reader (lua_State *L) {
  Reader *R = (Reader *)luaL_checkudata(L, 1, READER_MT);
  if (R->r == NULL) luaL_error(L, "resp reader is closed");
  return R;
}


/* free what a conversion interrupted by an error left behind */
static void drop_held (Reader *R) {
  if (R->held != NULL) {
    freeReplyObject(R->held);
    R->held = NULL;
  }
}


static int reader_gc (lua_State *L) {
  Reader *R = (Reader *)luaL_checkudata(L, 1, READER_MT);
  drop_held(R);
  if (R->r != NULL) {
    redisReaderFree(R->r);
    R->r = NULL;
  }
  return 0;
}


/* the reader's error: nil, message */
static int reader_fail (lua_State *L, Reader *R) {
  lua_pushnil(L);
  if (R->refused > 0)
    lua_pushfstring(L, "reply declares %d array elements, over max_elements (%d)",
                    (int)(R->refused > INT_MAX ? INT_MAX : R->refused),
                    (int)R->max_elements);
  else
    lua_pushstring(L, R->r->errstr);
  return 2;
}


/*
** Push 'rep' as a Lua value; the reply's nil is the value at 'nilv'.
** Recursion is bounded by hiredis's nesting limit (see the top).
*/
static void push_reply (lua_State *L, const redisReply *rep, int nilv) {
  size_t i;
  switch (rep->type) {
    case REDIS_REPLY_STATUS:
    case REDIS_REPLY_STRING:
      lua_pushlstring(L, rep->str, rep->len);
      break;
    case REDIS_REPLY_ERROR:
      lua_createtable(L, 0, 1);
      lua_pushlstring(L, rep->str, rep->len);
      lua_setfield(L, -2, "err");
      break;
    case REDIS_REPLY_INTEGER:
      lua_pushinteger(L, (lua_Integer)rep->integer);
      break;
    case REDIS_REPLY_NIL:
      lua_pushvalue(L, nilv);
      break;
    case REDIS_REPLY_ARRAY:
      luaL_checkstack(L, 2, "resp: reply nested too deep");
      lua_createtable(L, (int)rep->elements, 0);
      for (i = 0; i < rep->elements; i++) {
        push_reply(L, rep->element[i], nilv);
        lua_rawseti(L, -2, (int)(i + 1));
      }
      break;
    default:  /* no other type in RESP2 */
      luaL_error(L, "resp: unknown reply type %d", rep->type);
  }
}


/*
** reader:feed(bytes) -> true; or nil, message once the reader has
** failed (a protocol error; it stays failed).
*/
static int reader_feed (lua_State *L) {
  Reader *R = check_reader(L);
  size_t len;
  const char *s = luaL_checklstring(L, 2, &len);
  if (R->r->err) return reader_fail(L, R);
  if (redisReaderFeed(R->r, s, len) != REDIS_OK) return reader_fail(L, R);
  lua_pushboolean(L, 1);
  return 1;
}


/*
** reader:next() -> the next complete reply; nothing when none is
** complete yet; nil, message on a protocol error (and on every call
** after it).
*/
static int reader_next (lua_State *L) {
  Reader *R = check_reader(L);
  void *reply = NULL;
  drop_held(R);
  if (redisReaderGetReply(R->r, &reply) != REDIS_OK) return reader_fail(L, R);
  if (reply == NULL) return 0;
  R->held = (redisReply *)reply;  /* freed by drop_held if Lua raises */
  R->declared = 0;
  lua_settop(L, 1);
  resp_getuservalue(L, 1);
  lua_rawgeti(L, 2, 1);             /* the nil value, at 3 */
  push_reply(L, R->held, 3);
  drop_held(R);
  return 1;
}


/* Option 'max_elements' of the table at 1 */
static long long opt_max_elements (lua_State *L) {
  lua_Number n;
  lua_getfield(L, 1, "max_elements");
  if (lua_isnil(L, -1)) { lua_pop(L, 1); return DEFAULT_MAX_ELEMENTS; }
  n = lua_tonumber(L, -1);
  if (lua_type(L, -1) != LUA_TNUMBER || !(n >= 1 && n <= INT_MAX) ||
      n != floor(n))
    luaL_error(L, "resp.reader: max_elements must be an integer from 1 to %d",
               INT_MAX);
  lua_pop(L, 1);
  return (long long)n;
}


static void check_option_names (lua_State *L) {
  static const char *const known[] = {"nil_value", "max_elements", NULL};
  lua_pushnil(L);
  while (lua_next(L, 1)) {
    int i, ok = 0;
    const char *k = (lua_type(L, -2) == LUA_TSTRING) ? lua_tostring(L, -2) : "?";
    for (i = 0; known[i] != NULL; i++) ok |= (strcmp(known[i], k) == 0);
    if (!ok) luaL_error(L, "resp.reader: unknown option '%s'", k);
    lua_pop(L, 1);
  }
}


/*
** resp.reader([{nil_value = v, max_elements = n}]) -> a reader. A nil
** bulk string or array reads as 'nil_value' (default resp.NIL, the
** upvalue); 'max_elements' bounds the array elements one reply declares.
*/
static int resp_reader (lua_State *L) {
  Reader *R;
  long long max_elements;
  if (lua_isnoneornil(L, 1)) { lua_settop(L, 0); lua_newtable(L); }
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_settop(L, 1);
  check_option_names(L);
  max_elements = opt_max_elements(L);
  R = (Reader *)resp_newuserdata(L, sizeof(Reader));   /* at 2 */
  memset(R, 0, sizeof(*R));    /* empty first: __gc is safe from here on */
  luaL_setmetatable(L, READER_MT);
  lua_createtable(L, 1, 0);    /* the uservalue: {nil_value} */
  lua_getfield(L, 1, "nil_value");
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    lua_pushvalue(L, lua_upvalueindex(1));
  }
  lua_rawseti(L, -2, 1);
  resp_setuservalue(L, 2);
  R->max_elements = max_elements;
  R->r = redisReaderCreate();
  if (R->r == NULL) return luaL_error(L, "resp.reader: not enough memory");
  R->fn = *R->r->fn;           /* hiredis's default reply objects... */
  R->create_array = R->fn.createArray;
  R->fn.createArray = checked_array;   /* ...with the element bound */
  R->r->fn = &R->fn;           /* a userdata does not move */
  redisReaderSetPrivdata(R->r, R);
  return 1;
}

/* }================================================================ */


/* {======================= commands =============================== */

/*
** The scratch memory of one resp.command call: a userdata, so that an
** error frees it, and the formatted command until it is a Lua string.
*/
typedef struct Command {
  char *cmd;                /* from redisFormatCommandArgv, or NULL */
} Command;


static int command_gc (lua_State *L) {
  Command *C = (Command *)luaL_checkudata(L, 1, COMMAND_MT);
  if (C->cmd != NULL) {
    redisFreeCommand(C->cmd);
    C->cmd = NULL;
  }
  return 0;
}


/*
** The text of the number at the top of the stack in 'buf': an integer
** (or a float with an integer value in range) as its digits; another
** float in the fewest digits that read back as the same double. Raises
** for NaN, which no Redis command takes.
*/
static size_t format_number (lua_State *L, int i, char *buf) {
  lua_Number d;
  int n, digits;
#if LUA_VERSION_NUM >= 503
  if (lua_isinteger(L, -1))
    return (size_t)snprintf(buf, NUMBUF, LUA_INTEGER_FMT,
                            (LUAI_UACINT)lua_tointeger(L, -1));
#endif
  d = lua_tonumber(L, -1);
  if (d != d) luaL_error(L, "resp.command: argument %d is NaN", i);
  if (d == floor(d) && d >= -9223372036854775808.0 && d < 9223372036854775808.0)
    return (size_t)snprintf(buf, NUMBUF, "%lld", (long long)d);
  for (digits = 15; ; digits++) {  /* 17 digits always read back */
    n = snprintf(buf, NUMBUF, "%.*g", digits, (double)d);
    if (digits == 17 || strtod(buf, NULL) == (double)d) return (size_t)n;
  }
}


/*
** resp.command(args) -> the RESP bytes of the command 'args' (an array of
** strings and numbers, at least one), an array of bulk strings. Raises
** for anything else.
*/
static int resp_command (lua_State *L) {
  Command *C;
  const char **argv;
  size_t *argvlen;
  char *nums;
  size_t n, i;
  int len;
  luaL_checktype(L, 1, LUA_TTABLE);
  n = lua_rawlen(L, 1);
  if (n == 0) return luaL_error(L, "resp.command: no arguments (the command name comes first)");
  if (n > (size_t)INT_MAX / (sizeof(char *) + sizeof(size_t) + NUMBUF))
    return luaL_error(L, "resp.command: too many arguments");
  lua_settop(L, 1);
  C = (Command *)lua_newuserdata(L, sizeof(Command) +
                                 n * (sizeof(char *) + sizeof(size_t) + NUMBUF));
  C->cmd = NULL;
  luaL_setmetatable(L, COMMAND_MT);
  argv = (const char **)(void *)(C + 1);
  argvlen = (size_t *)(void *)(argv + n);
  nums = (char *)(argvlen + n);
  for (i = 0; i < n; i++) {
    int t;
    lua_rawgeti(L, 1, (int)(i + 1));
    t = lua_type(L, -1);
    if (t == LUA_TSTRING)   /* the table keeps it alive */
      argv[i] = lua_tolstring(L, -1, &argvlen[i]);
    else if (t == LUA_TNUMBER) {
      argv[i] = nums + i * NUMBUF;
      argvlen[i] = format_number(L, (int)(i + 1), nums + i * NUMBUF);
    }
    else
      return luaL_error(L, "resp.command: argument %d is a %s (strings and numbers only)",
                        (int)(i + 1), luaL_typename(L, -1));
    lua_pop(L, 1);
  }
  len = redisFormatCommandArgv(&C->cmd, (int)n, argv, argvlen);
  if (len < 0) return luaL_error(L, "resp.command: not enough memory");
  lua_pushlstring(L, C->cmd, (size_t)len);
  redisFreeCommand(C->cmd);
  C->cmd = NULL;
  return 1;
}

/* }================================================================ */


static int nil_tostring (lua_State *L) {
  lua_pushliteral(L, "resp.NIL");
  return 1;
}


RESP_EXPORT int luaopen_jrpc_resp (lua_State *L) {
  static const luaL_Reg reader_methods[] = {
    {"feed", reader_feed},
    {"next", reader_next},
    {NULL, NULL}
  };
  luaL_newmetatable(L, READER_MT);
  lua_pushcfunction(L, reader_gc);
  lua_setfield(L, -2, "__gc");
  lua_newtable(L);
  luaL_setfuncs(L, reader_methods, 0);
  lua_setfield(L, -2, "__index");
  lua_pop(L, 1);
  luaL_newmetatable(L, COMMAND_MT);
  lua_pushcfunction(L, command_gc);
  lua_setfield(L, -2, "__gc");
  lua_pop(L, 1);
  lua_createtable(L, 0, 3);     /* the module */
  lua_newtable(L);              /* resp.NIL: a value of its own */
  lua_createtable(L, 0, 1);
  lua_pushcfunction(L, nil_tostring);
  lua_setfield(L, -2, "__tostring");
  lua_setmetatable(L, -2);
  lua_pushvalue(L, -1);
  lua_setfield(L, -3, "NIL");
  lua_pushcclosure(L, resp_reader, 1);
  lua_setfield(L, -2, "reader");
  lua_pushcfunction(L, resp_command);
  lua_setfield(L, -2, "command");
  return 1;
}
