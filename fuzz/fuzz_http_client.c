/*
** fuzz_http_client.c -- the HTTP/1.1 response reader (core.http_client,
** src/http_client.c) fed the same bytes whole and in chunks whose sizes
** come from the input, then told the connection ended.
**
** Input: [0] bit 0: small limits (max_header_bytes 128, max_headers 4,
** max_body_bytes 64), else the defaults; bit 1: the first response
** answers a HEAD (no_body); [1] count of chunk sizes (mod 16), then that
** many sizes (each byte + 1); the rest is the stream.
**
** Checks: without an error, both readings give the same events in the
** same order (body pieces joined: their sizes follow the chunks); an error
** in both or in neither (the events before it may differ: what one feed
** parsed before the error is not returned); the events come in the order
** head, body..., done per response; each head has the documented fields
** (an integer status from 100 to 999, lower-cased header names, as many
** raw lines as header names at least); a body is within max_body_bytes;
** an error repeats on every later next(); the reader never buffers more
** than a head's limit plus what two chunks hold; no leak (host_close)
** and no bad access (ASan).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host.h"

#define DEF_HEADER_BYTES 16384
#define DEF_HEADERS 100
#define DEF_BODY_BYTES (16 * 1024 * 1024)

typedef HttpLimits Limits;

typedef struct Reading {
  Str log;
  Str body;          /* body bytes of the response being read */
  int in_response;   /* a head came, its done not yet */
  int failed;
} Reading;


static int reader (lua_State *L, const Limits *lim, int small, int head) {
  host_push_http_limits(L, lim, small);
  if (host_core(L, "http_client", 1) != 1)
    host_fail("core.http_client raised: %s", lua_tostring(L, -1));
  if (head && host_method(L, -1, "no_body", 0) != 0)
    host_fail("r:no_body raised: %s", lua_tostring(L, -1));
  return lua_gettop(L);
}


/* check a head table at 'hd' against CORE_API.md and the limits */
static void check_head (lua_State *L, int hd, const Limits *lim) {
  long count = 0, raw;
  lua_Integer st;
  lua_getfield(L, hd, "status");
  CHECK(lua_type(L, -1) == LUA_TNUMBER, "status is not a number");
  st = lua_tointeger(L, -1);
  CHECK(st >= 100 && st <= 999 && (st / 100 != 1 || st == 101), "status %ld", (long)st);
  lua_pop(L, 1);
  lua_getfield(L, hd, "reason");
  CHECK(lua_type(L, -1) == LUA_TSTRING, "reason is not a string");
  lua_pop(L, 1);
  lua_getfield(L, hd, "headers");
  CHECK(lua_istable(L, -1), "headers is not a table");
  lua_pushnil(L);
  while (lua_next(L, -2)) {
    size_t kn, i;
    const char *k;
    CHECK(lua_type(L, -2) == LUA_TSTRING && lua_type(L, -1) == LUA_TSTRING,
          "a header is not string = string");
    k = lua_tolstring(L, -2, &kn);
    for (i = 0; i < kn; i++)
      CHECK(!(k[i] >= 'A' && k[i] <= 'Z'), "header name not lower-cased");
    count++;
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  CHECK(count <= lim->headers, "%ld headers, max_headers %ld", count, lim->headers);
  lua_getfield(L, hd, "raw_headers");
  CHECK(lua_istable(L, -1), "raw_headers is not a table");
  raw = (long)lua_rawlen(L, -1);
  CHECK(raw >= count && raw <= lim->headers, "%ld raw lines for %ld names", raw, count);
  lua_pop(L, 1);
}


/* the body of the response being read ends: log it, check its size */
static void end_body (Reading *R, const Limits *lim) {
  CHECK((long)R->body.n <= lim->body, "body of %lu bytes over max_body_bytes %ld",
        (unsigned long)R->body.n, lim->body);
  str_addf(&R->log, "body %lu\n", (unsigned long)R->body.n);
  str_add(&R->log, R->body.p, R->body.n);
  str_addz(&R->log, "\n");
  R->body.n = 0;
}


/*
** r:next(chunk) (or r:finish() then r:next() when 'eof') then r:next()
** until nothing; log each event; returns 1 once an error came (it must
** then repeat)
*/
static int read_all (lua_State *L, int h, const char *p, size_t n, int eof,
                     const Limits *lim, Reading *R) {
  int first = !eof;
  if (eof && host_method(L, h, "finish", 0) != 0)
    host_fail("r:finish raised: %s", lua_tostring(L, -1));
  for (;;) {
    int base = lua_gettop(L), nres;
    const char *kind;
    if (first) lua_pushlstring(L, p, n);
    nres = host_method(L, h, "next", first);
    first = 0;
    if (nres < 0) host_fail("r:next raised: %s", lua_tostring(L, -1));
    if (nres == 0) return 0;
    if (lua_isnil(L, base + 1)) {
      CHECK(nres == 2 && lua_type(L, base + 2) == LUA_TSTRING, "bad error event");
      lua_settop(L, base);
      CHECK(host_method(L, h, "next", 0) == 2 && lua_isnil(L, base + 1),
            "the error did not repeat");
      lua_settop(L, base);
      str_addz(&R->log, "error\n");
      R->failed = 1;
      return 1;
    }
    CHECK(nres == 2, "an event of %d values", nres);
    kind = lua_tostring(L, base + 1);
    CHECK(kind != NULL, "an event without a kind");
    if (strcmp(kind, "head") == 0) {
      CHECK(!R->in_response, "a head inside a response");
      CHECK(lua_istable(L, base + 2), "head is not a table");
      check_head(L, base + 2, lim);
      str_addz(&R->log, "head ");
      dump_value(L, base + 2, &R->log);
      str_addz(&R->log, "\n");
      R->in_response = 1;
    }
    else if (strcmp(kind, "body") == 0) {
      size_t bn;
      const char *b;
      CHECK(R->in_response, "body outside a response");
      CHECK(lua_type(L, base + 2) == LUA_TSTRING, "body is not a string");
      b = lua_tolstring(L, base + 2, &bn);
      CHECK(bn > 0, "an empty body event");
      str_add(&R->body, b, bn);
      CHECK((long)R->body.n <= lim->body, "body over max_body_bytes");
    }
    else if (strcmp(kind, "done") == 0) {
      CHECK(R->in_response, "done outside a response");
      CHECK(lua_isboolean(L, base + 2), "done without a boolean");
      end_body(R, lim);
      str_addf(&R->log, "done %d\n", lua_toboolean(L, base + 2));
      R->in_response = 0;
    }
    else host_fail("an event '%s'", kind);
    lua_settop(L, base);
  }
}


int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size) {
  Input in;
  unsigned sizes[16], nsizes, k = 0, i, flags;
  int small, head, whole, pieces;
  Limits lim;
  const char *stream;
  size_t len, off;
  Reading a, b;
  lua_State *L;
  memset(&a, 0, sizeof(a));
  memset(&b, 0, sizeof(b));
  in.p = data; in.n = size;
  flags = in_u8(&in);
  small = (int)(flags & 1);
  head = (int)((flags >> 1) & 1);
  nsizes = in_u8(&in) % 16;
  for (i = 0; i < nsizes; i++) sizes[i] = in_u8(&in) + 1;
  len = in_take(&in, in.n, &stream);
  lim.header_bytes = small ? 128 : DEF_HEADER_BYTES;
  lim.headers = small ? 4 : DEF_HEADERS;
  lim.body = small ? 64 : DEF_BODY_BYTES;
  L = host_open(0);
  whole = reader(L, &lim, small, head);
  pieces = reader(L, &lim, small, head);
  if (!read_all(L, whole, stream, len, 0, &lim, &a))
    read_all(L, whole, NULL, 0, 1, &lim, &a);
  for (off = 0; off < len && !b.failed; ) {
    size_t n = nsizes ? sizes[k++ % nsizes] : 1;
    long held;
    if (n > len - off) n = len - off;
    read_all(L, pieces, stream + off, n, 0, &lim, &b);
    off += n;
    held = host_tostring_number(L, pieces, "(");
    CHECK(held <= lim.header_bytes + 2 * (long)n + 64, "the reader holds %ld bytes", held);
  }
  if (!b.failed) read_all(L, pieces, NULL, 0, 1, &lim, &b);
  CHECK(a.failed == b.failed, "an error when fed %s only", a.failed ? "whole" : "in chunks");
  if (!a.failed && !str_eq(&a.log, &b.log)) {
    fprintf(stderr, "---- fed whole:\n%.*s\n---- fed in chunks:\n%.*s\n",
            (int)(a.log.n < 4000 ? a.log.n : 4000), a.log.p,
            (int)(b.log.n < 4000 ? b.log.n : 4000), b.log.p);
    host_fail("events differ when the same bytes come in chunks");
  }
  str_free(&a.log);
  str_free(&a.body);
  str_free(&b.log);
  str_free(&b.body);
  host_close(L);
  return 0;
}
