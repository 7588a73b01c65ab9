/*
** fuzz_message.c -- the message decoder and classifier (message.c, the
** batch code of codec.c, scan.c, tolua.c) under every profile and small
** limits, checked against core.decode of the same bytes.
**
** Input: 5 bytes of settings, then the message body.
**   [0] profile (mod 3); bit 0 of the rest (byte / 3): Neovim's convention,
**       the codec option empty_dict     [1] max_depth: 0 default, else itself
**   [2] max_batch: 0 default, else itself
**   [3] max_message_bytes: 0 default, else 16 * itself
**   [4] allocation failures: 0 none, else the state's allocations fail
**       from the (4 * itself)th on (then the codec must still not crash)
** The body is framed with a Content-Length header, so any bytes, newlines
** included, are one message. It must give exactly one event, and that
** event must agree with what core.decode says of the same bytes: a parse
** error (same detail) when decode fails, and else the classification
** CORE_API.md describes for the decoded value.
**
** With empty_dict, core.decode gets it too, and the decoded body goes
** round the encoder (check_round_trip): the value must differ from the
** one decoded without the option only in the marks of empty objects, both
** must encode to the same text (or fail alike), and that text, decoded
** with the option, must give the value again.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host.h"

typedef struct Msg {
  int profile, max_depth, max_batch;
  int empty_dict;  /* the codec and core.decode mark empty objects */
  long max_bytes;
  const char *body;
  size_t len;
} Msg;


/* {====================== expectations ========================= */

/* the event at 'ev' is ("invalid", code, message, ?, reply, detail?) */
static void expect_invalid (lua_State *L, int ev, int code, const char *msg,
                            int reply, const char *detail) {
  CHECK(strcmp(lua_tostring(L, ev), "invalid") == 0,
        "expected invalid '%s', got '%s'", msg, lua_tostring(L, ev));
  CHECK(lua_tointeger(L, ev + 1) == code && strcmp(lua_tostring(L, ev + 2), msg) == 0,
        "expected %d '%s', got %d '%s' (%s)", code, msg,
        (int)lua_tointeger(L, ev + 1), lua_tostring(L, ev + 2), lua_tostring(L, ev + 5));
  CHECK(lua_toboolean(L, ev + 4) == reply, "'%s' (%s): reply should be %d", msg,
        lua_tostring(L, ev + 5), reply);
  if (detail != NULL)
    CHECK(strcmp(lua_tostring(L, ev + 5), detail) == 0,
          "'%s': detail '%s', expected '%s'", msg, lua_tostring(L, ev + 5), detail);
}


static int same_dump (lua_State *L, int a, int b) {
  Str x = {NULL, 0, 0}, y = {NULL, 0, 0};
  int eq;
  dump_value(L, a, &x);
  dump_value(L, b, &y);
  eq = str_eq(&x, &y);
  if (!eq)
    fprintf(stderr, "---- got:\n%.*s\n---- expected:\n%.*s\n",
            (int)(x.n < 2000 ? x.n : 2000), x.p, (int)(y.n < 2000 ? y.n : 2000), y.p);
  str_free(&x);
  str_free(&y);
  return eq;
}


/*
** The event's id at 'id' against the decoded member at 'v': one number
** rule for ids and values (an integer token of 64 bits is exact in both),
** so they are equal as Lua values.
*/
static int same_id (lua_State *L, int id, int v) {
  return lua_rawequal(L, id, v);
}


/* the raw id text at 'raw' decodes to what the tree holds at 'v' */
static int rawid_is (lua_State *L, int raw, int v) {
  int n, eq;
  lua_pushvalue(L, raw);
  n = host_core(L, "decode", 1);
  CHECK(n >= 1, "core.decode(rawid) raised");
  eq = !lua_isnil(L, -n) && same_id(L, lua_gettop(L) - n + 1, v);
  lua_pop(L, n);
  return eq;
}


/* a field of the table at 't' onto the stack; returns its index */
static int field (lua_State *L, int t, const char *k) {
  lua_getfield(L, t, k);
  return lua_gettop(L);
}


/* 1: the id may be used in this profile, 0: not, -1: cannot tell from a
** decoded value (mcp wants integer tokens: 1.0 decodes like 1) */
static int id_allowed (lua_State *L, int id, int profile) {
  switch (lua_type(L, id)) {
    case LUA_TSTRING: return 1;
    case LUA_TLIGHTUSERDATA: return profile != P_MCP;
    case LUA_TNUMBER: {
      double d = (double)lua_tonumber(L, id);
      if (profile != P_MCP) return 1;
      if (d != floor(d)) return 0;
      return -1;
    }
    default: return 0;
  }
}


/* a decoded table's tag (mt_tag) that an object has: none, or the
** empty-dict mark on an empty one */
static int object_tag (int tag) {
  return tag == '-' || tag == 'E';
}


/* is the value at 'i' a string equal to 's'? */
static int is_string (lua_State *L, int i, const char *s) {
  return lua_type(L, i) == LUA_TSTRING && strcmp(lua_tostring(L, i), s) == 0;
}


/* the rawid of an invalid event that echoes the id of a bad call */
static void check_echoed_id (lua_State *L, int raw, int id, int ok) {
  if (ok == 1 && lua_type(L, id) != LUA_TLIGHTUSERDATA)
    CHECK(rawid_is(L, raw, id), "invalid: rawid %s is not the message's id",
          lua_tostring(L, raw));
  else if (ok == 0)
    CHECK(strcmp(lua_tostring(L, raw), "null") == 0,
          "invalid: rawid %s for an id that is not allowed", lua_tostring(L, raw));
}


/* a call (the object has a method member) */
static void oracle_call (lua_State *L, const Msg *m, int v, int ev,
                         int method, int ver, int params, int id, int result,
                         int error) {
  const char *kind = lua_tostring(L, ev);
  int ptag = lua_istable(L, params) ? mt_tag(L, params) : 0;
  int idok = lua_isnil(L, id) ? 1 : id_allowed(L, id, m->profile);
  int ok = lua_type(L, method) == LUA_TSTRING && is_string(L, ver, "2.0") &&
           lua_isnil(L, result) && lua_isnil(L, error) &&
           (lua_isnil(L, params) || object_tag(ptag) || (ptag == 'A' && m->profile != P_MCP));
  (void)v;
  if (ok && idok != 1) ok = idok;  /* 0 or -1 */
  if (strcmp(kind, "request") == 0 || strcmp(kind, "notification") == 0) {
    CHECK(ok != 0, "a bad call was taken as a %s", kind);
    CHECK(lua_rawequal(L, ev + 1, method), "%s: method differs", kind);
    CHECK(same_dump(L, ev + 2, params), "%s: params differ", kind);
    CHECK((kind[0] == 'r') == !lua_isnil(L, id), "%s with id %s", kind, luaL_typename(L, id));
    if (kind[0] == 'r') CHECK(same_id(L, ev + 3, id), "request: id differs");
    return;
  }
  CHECK(strcmp(kind, "invalid") == 0, "a call gave a '%s' event", kind);
  expect_invalid(L, ev, -32600, "Invalid Request", 1, NULL);
  if (ok == 1)
    CHECK(strcmp(lua_tostring(L, ev + 5), "a member is given twice") == 0,
          "a valid call was refused: %s", lua_tostring(L, ev + 5));
  if (!lua_isnil(L, id)) check_echoed_id(L, ev + 3, id, idok);
}


/* is the table at 'e' an error member: {code = integer, message = string} */
static int error_ok (lua_State *L, int e) {
  int ok = 0;
  if (lua_istable(L, e) && object_tag(mt_tag(L, e))) {
    double c;
    lua_getfield(L, e, "code");
    lua_getfield(L, e, "message");
    c = (double)lua_tonumber(L, -2);
    ok = lua_type(L, -2) == LUA_TNUMBER && c == floor(c) &&
         c >= -9223372036854775808.0 && c < 9223372036854775808.0 &&
         lua_type(L, -1) == LUA_TSTRING;
    lua_pop(L, 2);
  }
  return ok;
}


/* a response (result or error member, no method) */
static void oracle_response (lua_State *L, const Msg *m, int ev, int ver,
                             int id, int result, int error) {
  const char *kind = lua_tostring(L, ev);
  int idok = lua_isnil(L, id) ? 0 : id_allowed(L, id, m->profile);
  int ok = is_string(L, ver, "2.0") && (lua_isnil(L, result) || lua_isnil(L, error)) &&
           (lua_isnil(L, error) || error_ok(L, error));
  if (ok && idok != 1) ok = idok;
  if (strcmp(kind, "result") == 0 || strcmp(kind, "error") == 0) {
    int val = kind[0] == 'r' ? result : error;
    CHECK(ok != 0, "a bad response was taken as a %s", kind);
    CHECK(same_dump(L, ev + 2, val), "%s: the value differs", kind);
    CHECK(same_id(L, ev + 3, id), "%s: id differs", kind);
    return;
  }
  CHECK(strcmp(kind, "invalid") == 0, "a response gave a '%s' event", kind);
  expect_invalid(L, ev, -32600, "Invalid Request", 0, NULL);
  if (ok == 1)
    CHECK(strcmp(lua_tostring(L, ev + 5), "a member is given twice") == 0,
          "a valid response was refused: %s", lua_tostring(L, ev + 5));
  if (lua_type(L, id) == LUA_TSTRING) {
    int n;
    lua_pushvalue(L, id);
    n = host_core(L, "rawid", 1);
    CHECK(n == 1 && lua_rawequal(L, -1, ev + 3),
          "invalid response: rawid %s is not core.rawid(id)", lua_tostring(L, ev + 3));
    lua_pop(L, 1);
  }
  else if (lua_type(L, id) == LUA_TNUMBER)
    CHECK(rawid_is(L, ev + 3, id), "invalid response: rawid %s is not the id",
          lua_tostring(L, ev + 3));
  else
    CHECK(strcmp(lua_tostring(L, ev + 3), "null") == 0,
          "invalid response: rawid %s without an id", lua_tostring(L, ev + 3));
}


/* one message that is not a batch: the tree value at 'v', the event at 'ev' */
static void oracle_one (lua_State *L, const Msg *m, int v, int ev) {
  int top = lua_gettop(L), method, ver, params, id, result, error;
  if (!lua_istable(L, v) || mt_tag(L, v) == 'A') {
    expect_invalid(L, ev, -32600, "Invalid Request", 1, "a message must be an object");
    CHECK(strcmp(lua_tostring(L, ev + 3), "null") == 0, "non-object: rawid");
    return;
  }
  method = field(L, v, "method");
  ver = field(L, v, "jsonrpc");
  params = field(L, v, "params");
  id = field(L, v, "id");
  result = field(L, v, "result");
  error = field(L, v, "error");
  if (!lua_isnil(L, method))
    oracle_call(L, m, v, ev, method, ver, params, id, result, error);
  else if (!lua_isnil(L, result) || !lua_isnil(L, error))
    oracle_response(L, m, ev, ver, id, result, error);
  else {
    int t = lua_type(L, id);
    expect_invalid(L, ev, -32600, "Invalid Request", 1, "method is missing");
    if (t == LUA_TSTRING || t == LUA_TNUMBER)
      CHECK(rawid_is(L, ev + 3, id), "method missing: rawid %s is not the id",
            lua_tostring(L, ev + 3));
    else
      CHECK(strcmp(lua_tostring(L, ev + 3), "null") == 0,
            "method missing: rawid %s", lua_tostring(L, ev + 3));
  }
  lua_settop(L, top);
}


/*
** The value at 'a' (decoded without empty_dict) and at 'b' (with it) are
** the same but for marks: where 'a' has an object (no metatable), 'b' has
** one too, marked 'E' exactly when it is empty; arrays are 'A' in both.
*/
static void same_but_marks (lua_State *L, int a, int b, int depth) {
  int ta = lua_type(L, a), tag;
  long na = 0, nb = 0;
  a = lua_absindex(L, a);
  b = lua_absindex(L, b);
  CHECK(ta == lua_type(L, b), "empty_dict: a %s decoded as a %s", lua_typename(L, ta),
        luaL_typename(L, b));
  if (ta != LUA_TTABLE) {
    CHECK(lua_rawequal(L, a, b) && (ta != LUA_TNUMBER || lua_isinteger(L, a) == lua_isinteger(L, b)),
          "empty_dict: a %s decoded differently", lua_typename(L, ta));
    return;
  }
  CHECK(depth < 1100, "empty_dict: value nested too deep (a cycle?)");
  luaL_checkstack(L, 6, "same_but_marks");
  tag = mt_tag(L, a);
  lua_pushnil(L);
  if (lua_next(L, a)) lua_pop(L, 2);  /* empty or not */
  else na = -1;
  if (tag == 'A')
    CHECK(mt_tag(L, b) == 'A', "empty_dict: an array is marked '%c'", mt_tag(L, b));
  else {
    CHECK(tag == '-', "decode gave an object marked '%c'", tag);
    CHECK(mt_tag(L, b) == (na < 0 ? 'E' : '-'), "empty_dict: an %s object is marked '%c'",
          na < 0 ? "empty" : "non-empty", mt_tag(L, b));
  }
  na = 0;
  lua_pushnil(L);
  while (lua_next(L, a)) {
    lua_pushvalue(L, -2);
    lua_rawget(L, b);
    same_but_marks(L, -2, -1, depth + 1);
    lua_pop(L, 2);
    na++;
  }
  lua_pushnil(L);
  while (lua_next(L, b)) { lua_pop(L, 1); nb++; }
  CHECK(na == nb, "empty_dict: %ld members decoded as %ld", na, nb);
}


/* core.encode(value at 'v', max_depth[, empty_dict]): pushes json, err */
static void encode_with (lua_State *L, const Msg *m, int v, int empty_dict) {
  int n;
  lua_pushvalue(L, v);
  lua_pushinteger(L, m->max_depth > 0 ? m->max_depth : DEFAULT_MAX_DEPTH);
  if (empty_dict) host_empty_dict(L);
  n = host_core(L, "encode", empty_dict ? 3 : 2);
  CHECK(n >= 1, "core.encode raised: %s", lua_tostring(L, -1));
  if (n == 1) lua_pushnil(L);
  CHECK(n <= 2, "core.encode gave %d values", n);
}


/*
** The body 't' (of 'len' bytes) decoded with empty_dict is at 'v': the
** round trip decode -> encode -> decode under Neovim's convention.
*/
static void check_round_trip (lua_State *L, const Msg *m, const char *t, size_t len,
                              int v) {
  int top = lua_gettop(L), v0, s1, s0, n;
  v = lua_absindex(L, v);
  lua_pushlstring(L, t, len);
  lua_pushinteger(L, m->max_depth > 0 ? m->max_depth : DEFAULT_MAX_DEPTH);
  n = host_core(L, "decode", 2);
  CHECK(n >= 1 && !lua_isnil(L, top + 1), "decodes with empty_dict only: %s",
        n >= 2 ? lua_tostring(L, top + 2) : "?");
  lua_settop(L, top + 1);
  v0 = top + 1;
  same_but_marks(L, v0, v, 0);
  encode_with(L, m, v, 1);    /* Neovim's convention */
  s1 = lua_gettop(L) - 1;
  encode_with(L, m, v0, 0);   /* jrpc's */
  s0 = lua_gettop(L) - 1;
  if (lua_isnil(L, s0)) {
    /* only an infinity (a number too large for a double) cannot go back */
    CHECK(strcmp(lua_tostring(L, s0 + 1), "cannot encode NaN or Infinity") == 0,
          "a decoded value cannot be encoded: %s", lua_tostring(L, s0 + 1));
    CHECK(lua_isnil(L, s1) && strcmp(lua_tostring(L, s1 + 1), lua_tostring(L, s0 + 1)) == 0,
          "empty_dict: encode gave %s, without it %s",
          lua_isnil(L, s1) ? lua_tostring(L, s1 + 1) : "text", lua_tostring(L, s0 + 1));
    lua_settop(L, top);
    return;
  }
  CHECK(!lua_isnil(L, s1), "empty_dict: encode failed (%s), without it not",
        lua_tostring(L, s1 + 1));
  CHECK(lua_rawequal(L, s0, s1), "empty_dict: encode gave\n%s\nwithout it\n%s",
        lua_tostring(L, s1), lua_tostring(L, s0));
  lua_pushvalue(L, s1);
  lua_pushinteger(L, m->max_depth > 0 ? m->max_depth : DEFAULT_MAX_DEPTH);
  lua_getfield(L, HOST_CORE, "null");
  host_empty_dict(L);
  n = host_core(L, "decode", 4);
  CHECK(n >= 1 && !lua_isnil(L, -n), "empty_dict: its own text does not decode: %s",
        n >= 2 ? lua_tostring(L, -1) : "?");
  CHECK(same_dump(L, lua_gettop(L) - n + 1, v), "empty_dict: the round trip changed the value");
  lua_settop(L, top);
}


static void oracle (lua_State *L, const Msg *m, int ev) {
  const char *t = m->body, *e = m->body + m->len;
  long limit = m->max_bytes > 0 ? m->max_bytes : DEFAULT_MAX_BYTES;
  int max_batch = m->max_batch > 0 ? m->max_batch : 1000;
  int n, v;
  if ((long)m->len > limit) {
    expect_invalid(L, ev, -32600, "Message too large", 1, NULL);
    return;
  }
  while (t < e && (*t == ' ' || *t == '\t' || *t == '\n' || *t == '\r')) t++;
  lua_pushlstring(L, t, (size_t)(e - t));
  lua_pushinteger(L, m->max_depth > 0 ? m->max_depth : DEFAULT_MAX_DEPTH);
  if (m->empty_dict) {
    lua_getfield(L, HOST_CORE, "null");
    host_empty_dict(L);
  }
  n = host_core(L, "decode", m->empty_dict ? 4 : 2);
  CHECK(n >= 1, "core.decode raised: %s", lua_tostring(L, -1));
  v = lua_gettop(L) - n + 1;
  if (m->empty_dict && !lua_isnil(L, v))
    check_round_trip(L, m, t, (size_t)(e - t), v);
  if (lua_isnil(L, v)) {
    const char *msg = lua_tostring(L, v + 1);
    if (strcmp(msg, "strings holding \\u0000 are not supported") == 0) {
      CHECK(strcmp(lua_tostring(L, ev), "invalid") != 0 ||
            lua_tointeger(L, ev + 1) != -32700,
            "valid JSON with \\u0000 gave a parse error: %s", lua_tostring(L, ev + 5));
      return;
    }
    if (m->profile == P_JSONRPC && t < e && *t == '[' &&
        strcmp(lua_tostring(L, ev), "invalid") == 0 &&
        strcmp(lua_tostring(L, ev + 2), "Batch too large") == 0)
      return;  /* counted members before reaching the bad part */
    if (strncmp(msg, "nesting too deep", 16) == 0)
      expect_invalid(L, ev, -32600, "Nesting too deep", 1, msg);
    else
      expect_invalid(L, ev, -32700, "Parse error", 1, msg);
    CHECK(strcmp(lua_tostring(L, ev + 3), "null") == 0, "parse error with rawid");
    return;
  }
  if (lua_istable(L, v) && mt_tag(L, v) == 'A') {  /* a batch */
    lua_Integer i, len = (lua_Integer)lua_rawlen(L, v);
    if (m->profile != P_JSONRPC)
      expect_invalid(L, ev, -32600, "Batches are not allowed", 1,
                     "this profile has no batches");
    else if (len == 0)
      expect_invalid(L, ev, -32600, "Invalid Request", 1, "empty batch");
    else if (len > max_batch)
      expect_invalid(L, ev, -32600, "Batch too large", 1, NULL);
    else {
      CHECK(strcmp(lua_tostring(L, ev), "batch") == 0, "a batch gave '%s'",
            lua_tostring(L, ev));
      CHECK((lua_Integer)lua_rawlen(L, ev + 1) == len, "batch of %d gave %d items",
            (int)len, (int)lua_rawlen(L, ev + 1));
      for (i = 1; i <= len; i++) {
        int top = lua_gettop(L), j, k;
        lua_rawgeti(L, v, i);
        lua_rawgeti(L, ev + 1, i);
        lua_getfield(L, -1, "n");
        k = (int)lua_tointeger(L, -1);
        lua_pop(L, 1);
        for (j = 1; j <= k; j++) lua_rawgeti(L, top + 2, j);
        for (; j <= 6; j++) lua_pushnil(L);
        oracle_one(L, m, top + 1, top + 3);
        lua_settop(L, top);
      }
    }
    return;
  }
  oracle_one(L, m, v, ev);
}

/* }============================================================= */


static void feed_message (lua_State *L, int codec, const Msg *m) {
  char head[64];
  int hn = snprintf(head, sizeof(head), "Content-Length: %lu\r\n\r\n",
                    (unsigned long)m->len);
  lua_pushlstring(L, head, (size_t)hn);
  if (host_method(L, codec, "feed", 1) < 0) lua_error(L);
  lua_pushlstring(L, m->body, m->len);
  if (host_method(L, codec, "feed", 1) < 0) lua_error(L);
  if (host_method(L, codec, "finish", 0) < 0) lua_error(L);
}


/*
** codec:decode of the same body must give the event next gave (at 'ev',
** 'n' values), and core.peek must tell the same kind, with the exact id
** text when it reads one.
*/
static void check_decode_and_peek (lua_State *L, int codec, const Msg *m,
                                   int ev, int n) {
  static const char *const kinds[][2] = {
    {"request", "request"}, {"checked", "request"},
    {"notification", "notification"}, {"result", "result"},
    {"error", "error"}, {NULL, NULL}};
  int top = lua_gettop(L), k, i;
  lua_pushlstring(L, m->body, m->len);
  k = host_method(L, codec, "decode", 1);
  if (k < 0) lua_error(L);
  CHECK(k == n, "decode gave %d values, next %d", k, n);
  for (i = 0; i < k; i++)
    CHECK(same_dump(L, top + 1 + i, ev + i), "decode and next differ at value %d", i + 1);
  lua_settop(L, top);
  lua_pushlstring(L, m->body, m->len);
  lua_pushinteger(L, 1000);
  k = host_core(L, "peek", 2);
  if (k < 0) lua_error(L);
  for (i = 0; kinds[i][0] != NULL; i++) {
    if (strcmp(lua_tostring(L, ev), kinds[i][0]) != 0) continue;
    CHECK(is_string(L, top + 1, kinds[i][1]), "peek: %s, the event: %s",
          lua_isnil(L, top + 1) ? "nil" : lua_tostring(L, top + 1), kinds[i][0]);
    if (strcmp(kinds[i][1], "request") == 0 && !lua_isnil(L, top + 2)) {
      lua_pushvalue(L, ev + 4);  /* the rawid: its text (a copy converted) */
      CHECK(lua_rawequal(L, top + 2, -1) ||
            strcmp(lua_tostring(L, -1), lua_tostring(L, top + 2)) == 0,
            "peek id %s, rawid %s", lua_tostring(L, top + 2), lua_tostring(L, -1));
    }
  }
  lua_settop(L, top);
}


/* the run, inside a protected call: codec at 1 after it is made */
static int run (lua_State *L) {
  const Msg *m = (const Msg *)lua_touserdata(L, 1);
  int codec, n, base;
  lua_settop(L, 0);
  lua_pushvalue(L, lua_upvalueindex(1));  /* the module at HOST_CORE */
  codec = host_codec_dict(L, 1, m->profile, m->max_bytes, m->max_depth, m->max_batch,
                          m->empty_dict);
  lua_pushvalue(L, codec);
  lua_setfield(L, LUA_REGISTRYINDEX, "fuzz.codec");  /* for after an error */
  feed_message(L, codec, m);
  base = lua_gettop(L);
  n = host_method(L, codec, "next", 0);
  if (n < 0) lua_error(L);
  CHECK(n > 0, "a message gave no event");
  check_event(L, base + 1, n, m->profile, 0);
  if (!host_alloc_failed()) {
    oracle(L, m, base + 1);
    check_decode_and_peek(L, codec, m, base + 1, n);
  }
  lua_settop(L, base);
  n = host_method(L, codec, "next", 0);
  if (n < 0) lua_error(L);
  CHECK(n == 0, "a message gave more than one event");
  return 0;
}


/* after a memory error: the codec must go on without crashing */
static int after_error (lua_State *L) {
  int profile = (int)lua_tointeger(L, 1);
  lua_settop(L, 0);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_getfield(L, LUA_REGISTRYINDEX, "fuzz.codec");
  if (!lua_isnil(L, 2)) drain(L, 2, profile, NULL);
  return 0;
}


int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size) {
  Input in;
  Msg m;
  unsigned settings, fail;
  int st;
  lua_State *L;
  in.p = data; in.n = size;
  settings = in_u8(&in);
  m.profile = (int)(settings % PROFILES);
  m.empty_dict = (int)((settings / PROFILES) & 1);
  m.max_depth = (int)in_u8(&in);
  if (m.max_depth == 1) m.max_depth = 2;  /* a codec takes 2 to 1000 */
  m.max_batch = (int)in_u8(&in);
  m.max_bytes = 16L * (long)in_u8(&in);
  fail = in_u8(&in);
  m.len = in_take(&in, in.n, &m.body);
  L = host_open(fail ? 4L * fail : 0);
  lua_pushvalue(L, HOST_CORE);
  lua_pushcclosure(L, run, 1);
  lua_pushlightuserdata(L, &m);
  st = lua_pcall(L, 1, 0, 0);
  if (st != LUA_OK) {
    const char *msg = lua_tostring(L, -1);
    CHECK(host_alloc_failed() && (st == LUA_ERRMEM ||
          (msg != NULL && strstr(msg, "not enough memory") != NULL)),
          "the decoder raised: %s", msg ? msg : "?");
    lua_pop(L, 1);
    host_set_fail_after(0);
    lua_pushvalue(L, HOST_CORE);
    lua_pushcclosure(L, after_error, 1);
    lua_pushinteger(L, m.profile);
    st = lua_pcall(L, 1, 0, 0);
    CHECK(st == LUA_OK, "the codec raised after a memory error: %s",
          lua_tostring(L, -1) ? lua_tostring(L, -1) : "?");
  }
  host_close(L);
  return 0;
}
