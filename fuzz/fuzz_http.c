/*
** fuzz_http.c -- the HTTP/1.1 request reader (core.http_server, src/http.c)
** fed the same bytes whole and in chunks whose sizes come from the input.
**
** Input: [0] bit 0: small limits (max_header_bytes 128, max_headers 4,
** max_body_bytes 64), else the defaults; [1] count of chunk sizes (mod
** 16), then that many sizes (each byte + 1); the rest is the stream.
**
** Checks: both readings give the same requests in the same order, and an
** error in both or in neither (its status may differ: a head that is both
** too large and malformed is 431 or 400 depending on where a chunk ends);
** every request is within the limits (body, header count, head bytes);
** an error repeats on every later next(); the reader never buffers more
** than a request's limits plus the unread part of the last chunk; no
** leak (host_close) and no bad access (ASan).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host.h"

#define DEF_HEADER_BYTES 8192
#define DEF_HEADERS 64
#define DEF_BODY_BYTES (4 * 1024 * 1024)

typedef HttpLimits Limits;


static int reader (lua_State *L, const Limits *lim, int small) {
  host_push_http_limits(L, lim, small);
  if (host_core(L, "http_server", 1) != 1)
    host_fail("core.http_server raised: %s", lua_tostring(L, -1));
  return lua_gettop(L);
}


static size_t field_len (lua_State *L, int t, const char *k) {
  size_t n;
  lua_getfield(L, t, k);
  CHECK(lua_type(L, -1) == LUA_TSTRING, "request field %s is not a string", k);
  lua_tolstring(L, -1, &n);
  lua_pop(L, 1);
  return n;
}


/* check a request table at 'req' against the limits */
static void check_request (lua_State *L, int req, const Limits *lim) {
  size_t head = field_len(L, req, "target");
  long count = 0;
  CHECK((long)field_len(L, req, "body") <= lim->body, "body over max_body_bytes");
  field_len(L, req, "method");
  field_len(L, req, "path");
  lua_getfield(L, req, "headers");
  CHECK(lua_istable(L, -1), "headers is not a table");
  lua_pushnil(L);
  while (lua_next(L, -2)) {
    size_t kn, vn, i;
    const char *k;
    CHECK(lua_type(L, -2) == LUA_TSTRING && lua_type(L, -1) == LUA_TSTRING,
          "a header is not string = string");
    k = lua_tolstring(L, -2, &kn);
    lua_tolstring(L, -1, &vn);
    for (i = 0; i < kn; i++)
      CHECK(!(k[i] >= 'A' && k[i] <= 'Z'), "header name not lower-cased");
    head += kn + vn;
    count++;
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  CHECK(count <= lim->headers, "%ld headers, max_headers %ld", count, lim->headers);
  CHECK((long)head <= lim->header_bytes, "head of %lu bytes, max_header_bytes %ld",
        (unsigned long)head, lim->header_bytes);
}


/*
** h:next(chunk) then h:next() until nothing; log each request (canonical
** text) and "error"; returns 1 once an error came (it must then repeat)
*/
static int read_all (lua_State *L, int h, const char *p, size_t n, const Limits *lim,
                  Str *log) {
  int first = 1;
  for (;;) {
    int base = lua_gettop(L), nres;
    if (first) lua_pushlstring(L, p, n);
    nres = host_method(L, h, "next", first);
    first = 0;
    if (nres < 0) host_fail("h:next raised: %s", lua_tostring(L, -1));
    if (nres == 0) return 0;
    if (strcmp(lua_tostring(L, base + 1), "request") == 0) {
      CHECK(nres == 2 && lua_istable(L, base + 2), "bad request event");
      check_request(L, base + 2, lim);
      dump_value(L, base + 2, log);
      str_addz(log, "\n");
      lua_settop(L, base);
      continue;
    }
    CHECK(strcmp(lua_tostring(L, base + 1), "error") == 0 && nres == 3,
          "an event that is neither request nor error");
    {
      lua_Integer st = lua_tointeger(L, base + 2), st2;
      CHECK(st == 400 || st == 413 || st == 431 || st == 501 || st == 505 || st == 500,
            "error status %ld", (long)st);
      lua_settop(L, base);
      CHECK(host_method(L, h, "next", 0) == 3, "the error did not repeat");
      st2 = lua_tointeger(L, base + 2);
      CHECK(st2 == st, "the error changed from %ld to %ld", (long)st, (long)st2);
      lua_settop(L, base);
    }
    str_addz(log, "error\n");
    return 1;
  }
}


int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size) {
  Input in;
  unsigned sizes[16], nsizes, k = 0, i;
  int small, whole, pieces, failed = 0;
  Limits lim;
  const char *stream;
  size_t len, off;
  Str a = {NULL, 0, 0}, b = {NULL, 0, 0};
  lua_State *L;
  in.p = data; in.n = size;
  small = (int)(in_u8(&in) & 1);
  nsizes = in_u8(&in) % 16;
  for (i = 0; i < nsizes; i++) sizes[i] = in_u8(&in) + 1;
  len = in_take(&in, in.n, &stream);
  lim.header_bytes = small ? 128 : DEF_HEADER_BYTES;
  lim.headers = small ? 4 : DEF_HEADERS;
  lim.body = small ? 64 : DEF_BODY_BYTES;
  L = host_open(0);
  whole = reader(L, &lim, small);
  pieces = reader(L, &lim, small);
  read_all(L, whole, stream, len, &lim, &a);
  for (off = 0; off < len && !failed; ) {
    size_t n = nsizes ? sizes[k++ % nsizes] : 1;
    long held;
    if (n > len - off) n = len - off;
    failed = read_all(L, pieces, stream + off, n, &lim, &b);
    off += n;
    held = host_tostring_number(L, pieces, "(");
    CHECK(held <= lim.header_bytes + lim.body + (long)n,
          "the reader holds %ld bytes", held);
  }
  if (!str_eq(&a, &b)) {
    fprintf(stderr, "---- fed whole:\n%.*s\n---- fed in chunks:\n%.*s\n",
            (int)(a.n < 4000 ? a.n : 4000), a.p, (int)(b.n < 4000 ? b.n : 4000), b.p);
    host_fail("events differ when the same bytes come in chunks");
  }
  str_free(&a);
  str_free(&b);
  host_close(L);
  return 0;
}
