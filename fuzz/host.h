/*
** host.h -- what the libFuzzer targets in fuzz/ share: a fresh lua_State
** per input with a counting allocator, a reader of the fuzz input, a
** canonical dump of Lua values (for exact comparisons), the checks of the
** events that codec:next() returns (CORE_API.md), and the framer driver.
**
** Every violated invariant calls host_fail(), which prints what was wrong
** and aborts, so libFuzzer reports the input as a crash.
*/
#ifndef host_h
#define host_h

#include <stddef.h>
#include <stdint.h>

#include "lua.h"
#include "lauxlib.h"

/* the fuzz entry point (libFuzzer calls it; declared for -Wmissing-prototypes) */
int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

/* the one symbol of src/core.c, and of src/core_tls.c (jrpc.core_tls) */
int luaopen_jrpc_core (lua_State *L);
int luaopen_jrpc_core_tls (lua_State *L);

#define PROFILES 3               /* jsonrpc, mcp, lsp */
#define P_JSONRPC 0
#define P_MCP 1
#define P_LSP 2
#define MAX_HEADER_LINE 8192      /* src/frame.c: longest LSP header line */
#define DEFAULT_MAX_BYTES (16 * 1024 * 1024)
#define DEFAULT_MAX_DEPTH 128
#define MAX_SAFE 9007199254740992.0  /* 2^53 */

extern const char *const host_profiles[PROFILES];


/* {====================== failure ============================== */
void host_fail (const char *fmt, ...)
#if defined(__GNUC__)
  __attribute__((noreturn, format(printf, 1, 2)))
#endif
  ;
#define CHECK(c, ...)  do { if (!(c)) host_fail(__VA_ARGS__); } while (0)
/* }============================================================= */


/* {====================== input ================================ */
typedef struct Input {
  const uint8_t *p;
  size_t n;
} Input;

unsigned in_u8 (Input *in);          /* 0 when exhausted */
uint64_t in_u64 (Input *in);         /* little-endian, zero-padded */
/* take up to 'want' bytes; returns how many, '*out' points at them */
size_t in_take (Input *in, size_t want, const char **out);
/* }============================================================= */


/* {====================== strings ============================== */
typedef struct Str {
  char *p;
  size_t n, cap;
} Str;

void str_add (Str *s, const char *p, size_t n);
void str_addz (Str *s, const char *z);
void str_addf (Str *s, const char *fmt, ...)
#if defined(__GNUC__)
  __attribute__((format(printf, 2, 3)))
#endif
  ;
void str_free (Str *s);
int str_eq (const Str *a, const Str *b);
/* }============================================================= */


/* {====================== Lua state ============================ */
/*
** A fresh state per input: nothing carries over from one input to the
** next, and host_close() checks that every byte the state allocated was
** given back (a leak through the Lua allocator aborts). 'fail_after' > 0
** makes the allocation after that many succeed fail (0: never), to test
** the memory-error paths. The module table of jrpc.core is left at stack
** index 1 (HOST_CORE).
*/
#define HOST_CORE 1
lua_State *host_open (long fail_after);
void host_close (lua_State *L);
int host_alloc_failed (void);       /* an injected failure happened */
void host_set_fail_after (long n);  /* 0: no more failures */

/* call method 'name' of the codec at 'codec' with 'nargs' arguments on the
** top; returns the number of results (LUA_MULTRET) or -1 on error (the
** message is then on the top). While allocations are failing on purpose,
** an error is raised on instead (the target runs in a protected call). */
int host_method (lua_State *L, int codec, const char *name, int nargs);
/* call core.<name> with 'nargs' arguments on the top, same convention */
int host_core (lua_State *L, const char *name, int nargs);
/* core.codec{framing=, profile=, max_message_bytes=, max_depth=, max_batch=}
** (0: the default); pushes the codec and returns its index */
int host_codec (lua_State *L, int lsp, int profile, long max_bytes,
                int max_depth, int max_batch);
/* the same, with empty_dict = the state's empty-dict metatable when
** 'empty_dict' (Neovim's convention: see host_empty_dict) */
int host_codec_dict (lua_State *L, int lsp, int profile, long max_bytes,
                     int max_depth, int max_batch, int empty_dict);
/* push the metatable that stands for Neovim's vim.empty_dict() in this
** state (made on first use, kept in the registry); returns its index */
#define HOST_EMPTY_DICT "fuzz.empty_dict"
int host_empty_dict (lua_State *L);
/* bytes buffered in the codec, from its __tostring */
long host_buffered (lua_State *L, int codec);
/* the number that follows the first 'after' in the __tostring of the value
** at 'idx' (how core objects show what they buffer) */
long host_tostring_number (lua_State *L, int idx, const char *after);

/* the HTTP readers' limits (fuzz_http, fuzz_http_client) */
typedef struct HttpLimits {
  long header_bytes, headers, body;
} HttpLimits;
/* push the options table of an HTTP reader: the limits when 'small',
** else empty (the defaults) */
void host_push_http_limits (lua_State *L, const HttpLimits *lim, int small);
/* }============================================================= */


/* {====================== values =============================== */
/* canonical text of the value at 'idx': tables with sorted keys and their
** marker metatable, numbers with their subtype and exact bits */
void dump_value (lua_State *L, int idx, Str *out);
int is_null (lua_State *L, int idx);
/* metatable tag: 'A' array_mt, 'O' object_mt, 'E' the empty-dict
** metatable (host_empty_dict), '-' none, '?' other */
int mt_tag (lua_State *L, int idx);
/* push the number decode gives for the double 'd' (tolua.c push_number) */
void push_decoded_number (lua_State *L, double d);
/* }============================================================= */


/* {====================== events =============================== */
/*
** Check the event of 'n' values at stack [base, base + n) against
** CORE_API.md for 'profile' ('in_batch': a batch member); abort if not.
*/
void check_event (lua_State *L, int base, int n, int profile, int in_batch);

/*
** Call codec:next() until it returns nothing; check each event; append
** its canonical text to 'log' (when not NULL). Returns the count.
*/
int drain (lua_State *L, int codec, int profile, Str *log);
/* }============================================================= */


/* the framer target (fuzz_ndjson.c, fuzz_lsp.c): see host.c */
int fuzz_framer (const uint8_t *data, size_t size, int lsp);

#endif
