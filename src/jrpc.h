/*
** jrpc.h — the private header of the C modules, included by their unity
** files only: core.c (jrpc.core) and core_tls.c (jrpc.core_tls, which
** defines JR_CORE_TLS first). Each module is one translation unit: its
** unity file includes the src .c files it is made of, so all functions
** stay static and only its luaopen_ function is exported. The two share
** the bottom layers (buf.c, udata.c, work.c), each with its own copy;
** jrpc.core_tls alone links OpenSSL, so a process that never uses TLS or
** the crypto functions never maps libssl and libcrypto (core.c loads the
** module on first use). This header declares, grouped by the file that
** provides them, every type and every function that another file uses,
** so no file depends on the order in which a unity file includes the
** others; each module sees only the declarations of its own files (a
** static function declared but never defined is a warning).
** Cross-file names carry their file's prefix (buf_, num_, ud_, scan_,
** tolua_, enc_, work_, frame_, msg_, codec_, pd_, http_, hc_, tls_,
** crypto_); names without one are
** local to their file.
*/
#ifndef jrpc_h
#define jrpc_h

#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__GLIBC__)
#include <malloc.h>      /* malloc_trim */
#endif

#if defined(JR_CORE_TLS)
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
typedef struct cJSON cJSON;   /* Work names it; this module decodes nothing */
#else
#include <cjson/cJSON.h>
#include <llhttp.h>
#endif

#include "lua.h"
#include "lauxlib.h"

/* {======================================================
** Lua 5.1 (LuaJIT) compatibility: only what the core uses
** ======================================================= */
#if LUA_VERSION_NUM < 502
#define lua_rawlen(L, i)  lua_objlen(L, (i))
#define lua_newuserdatauv(L, sz, nuv)  lua_newuserdata(L, (sz))
#define JR_NO_INTEGERS 1   /* numbers are doubles only */
#define lua_absindex(L, i)  \
  ((i) > 0 || (i) <= LUA_REGISTRYINDEX ? (i) : lua_gettop(L) + (i) + 1)

/* LuaJIT 2.1 already has these 5.2 functions (it defines luaL_newlib) */
#if !defined(luaL_newlib)
#define luaL_newlibtable(L, l)  \
  lua_createtable(L, 0, sizeof(l) / sizeof((l)[0]) - 1)
#define luaL_newlib(L, l)  (luaL_newlibtable(L, l), luaL_setfuncs(L, l, 0))

static void luaL_setfuncs (lua_State *L, const luaL_Reg *l, int nup) {
  luaL_checkstack(L, nup + 1, "too many upvalues");
  for (; l->name != NULL; l++) {
    int i;
    for (i = 0; i < nup; i++)  /* copy upvalues to the top */
      lua_pushvalue(L, -nup);
    lua_pushcclosure(L, l->func, nup);
    lua_setfield(L, -(nup + 2), l->name);
  }
  lua_pop(L, nup);
}

static void luaL_setmetatable (lua_State *L, const char *tname) {
  luaL_getmetatable(L, tname);
  lua_setmetatable(L, -2);
}

static void *luaL_testudata (lua_State *L, int i, const char *tname) {
  void *p = lua_touserdata(L, i);
  if (p == NULL || !lua_getmetatable(L, i)) return NULL;
  luaL_getmetatable(L, tname);
  if (!lua_rawequal(L, -1, -2)) p = NULL;
  lua_pop(L, 2);
  return p;
}
#endif  /* !luaL_newlib */
#endif
/* }====================================================== */

#if defined(__GNUC__)
#define jr_likely(x)    __builtin_expect(!!(x), 1)
#define jr_unlikely(x)  __builtin_expect(!!(x), 0)
#else
#define jr_likely(x)    (x)
#define jr_unlikely(x)  (x)
#endif

#if defined(__GNUC__)
#define JR_EXPORT  __attribute__((visibility("default")))
#else
#define JR_EXPORT
#endif

/* the exported symbols, one per module */
JR_EXPORT int luaopen_jrpc_core (lua_State *L);
JR_EXPORT int luaopen_jrpc_core_tls (lua_State *L);

/* JSON-RPC 2.0 error codes */
#define JR_PARSE_ERROR      (-32700)
#define JR_INVALID_REQUEST  (-32600)


/* {======================================================
** buf.c — growable byte buffers from the state's allocator
** ======================================================= */
/*
** A buffer that grew past BUF_KEEP for one large message gives that memory
** back once it holds little again (buf_fit), so that one 16 MiB message does
** not cost a long-lived peer 16 MiB for the rest of its life.
*/
#define BUF_KEEP  65536

typedef struct Buf {
  char *p;
  size_t n;    /* bytes in use */
  size_t cap;  /* bytes allocated */
} Buf;

static int buf_nomem (lua_State *L);
static void buf_free (lua_State *L, Buf *b);
static void buf_grow (lua_State *L, Buf *b, size_t extra);
static inline char *buf_reserve (lua_State *L, Buf *b, size_t extra);
#if !defined(JR_CORE_TLS)   /* jrpc.core_tls appends nothing */
static void buf_add (lua_State *L, Buf *b, const char *s, size_t len);
static void buf_addc (lua_State *L, Buf *b, char c);
static void buf_fit (lua_State *L, Buf *b);
static inline void buf_addfixed (lua_State *L, Buf *b, const char *s,
                                 size_t len);
#define buf_addlit(L, b, s)  buf_addfixed(L, b, "" s, sizeof(s) - 1)
#endif
/* }====================================================== */


/* {======================================================
** udata.c — the one recipe for the core's userdata types
** ======================================================= */
typedef struct UdHead {
  const char *open;   /* a type that sets it (ud_open): its name while the
                         object is usable, NULL once closed; 'self' is then
                         checked without its metatable */
  int closed;   /* set by __gc/__close: the object holds nothing any more */
} UdHead;

static void ud_newmeta (lua_State *L, const char *tname, const luaL_Reg *meta,
                        const luaL_Reg *methods, int nup);
static void ud_newtype (lua_State *L, const char *tname, const luaL_Reg *meta,
                        const luaL_Reg *methods, lua_CFunction ctor,
                        const char *name);
static void *ud_check (lua_State *L, int mt, const char *tname);
static inline void ud_open (UdHead *h, const char *tname);
static inline void ud_close (UdHead *h);
static void ud_checkoptions (lua_State *L, int opts, const char *const *known,
                             const char *what);
/* }====================================================== */


/* {======================================================
** work.c — per-call temporaries of a decode (jrpc.Work) or of a TLS
** session's call (jrpc.core_tls's own copy: jrpc.TlsWork)
** ======================================================= */
typedef struct Work {
  UdHead h;
  int busy;          /* a call is using it */
  cJSON *tree;       /* a tree being converted (freed by __gc on error) */
  Buf scratch;       /* unescaped strings, canonical ids */
  Buf spans;         /* batch member offsets */
  Buf msg;           /* a copy of the message being decoded (codec:next) */
} Work;

static void work_free (lua_State *L, Work *W);
static Work *work_acquire (lua_State *L, Work **resident, int owner);
static void work_release (lua_State *L, Work *W);
static void work_open (lua_State *L);
/* }====================================================== */


#if !defined(JR_CORE_TLS)   /* {==== jrpc.core only ==== */

/* {======================================================
** num.c — the number rules shared by decoding and encoding
** ======================================================= */
#define MAX_SAFE_INT  9007199254740992.0   /* 2^53 */

static int num_isdigit (int c);
static int num_fits_int64 (double d);
static int num_token_int64 (const char *p, const char *e, long long *v);
static void num_push (lua_State *L, double d);
#define NUM_IDTEXT  24  /* bytes num_itoa may write: a sign and 20 digits */
static size_t num_itoa (long long v, char *d);
static size_t num_idtext (lua_State *L, int arg, char *tmp);
/* }====================================================== */


/* {======================================================
** scan.c — the strict JSON validator (builds nothing)
** ======================================================= */
/*
** A record of a container of scalars (params [42, 23], {"a": 1}) made
** while it is scanned, so that tolua.c pushes it without reading its text
** again. Only one container records: the one the scanner meets next after
** a caller set Scan.rec (so nested ones do not); 'flat' tells whether
** it could be pushed from the record.
*/
#define FLAT_MAX  8   /* members or elements a record holds */

typedef struct FlatItem {
  const char *k, *ke;   /* an object's key token, quotes included */
  const char *v, *ve;   /* the value token */
} FlatItem;

typedef struct FlatRec {
  const char *at;   /* the container's first byte, or NULL: no record */
  int flat;         /* at most FLAT_MAX scalars, every string and key
                       without escapes, every number an integer of at
                       most 15 digits (not -0) */
  int n;
  FlatItem item[FLAT_MAX];
} FlatRec;

typedef struct Scan {
  FlatRec *rec;        /* set: the next container records into it */
  const char *err;     /* static description of the first error */
  const char *at;      /* where it happened */
  int max_depth;
  int too_deep;        /* the error is a depth limit, not bad JSON */
  int has_nul;         /* some string holds \u0000 (cJSON would cut it) */
  int has_escape;      /* some string holds an escape (set, never cleared) */
  int count;           /* members or elements of the last container closed
                          (after a container, the container itself) */
} Scan;

static const char *scan_fail (Scan *S, const char *p, const char *msg);
static const char *scan_skipws (const char *p, const char *e);
static int scan_utf8len (const unsigned char *p, const unsigned char *e);
static long scan_hex4 (const char *p);
static const char *scan_string (Scan *S, const char *p, const char *e);
static inline const char *scan_plainrun (const char *p, const char *e);
static const char *scan_number (Scan *S, const char *p, const char *e,
                                int *isint);
static const char *scan_value (Scan *S, const char *p, const char *e,
                               int depth);
/* }====================================================== */


/* {======================================================
** tolua.c — validated JSON text to Lua values
** ======================================================= */
static void tolua_unescape (lua_State *L, Buf *b, const char *p,
                            const char *e);
static void tolua_string (lua_State *L, Buf *scratch, const char *p,
                          const char *e);
static void tolua_json (lua_State *L, cJSON **slot, const char *p,
                        const char *e, int amt, int null, int emt);
/* the key cache (tolua_keycache): two values, found by their indexes */
typedef struct KeyCache KeyCache;
typedef struct KeyRef {
  int table;     /* its strings (0: no cache) */
  int bytes;     /* a userdata: a copy of their bytes */
  KeyCache *K;   /* that userdata's block, once fetched (NULL before) */
} KeyRef;

/* what a decode knows of a value it pushes (tolua_jsonk) */
typedef struct Hint {
  KeyRef *keys;         /* the key cache, or NULL */
  const FlatRec *rec;   /* the scanner's record, if it is of this value */
  int size;             /* its members or elements, or -1 */
} Hint;

static void tolua_jsonk (lua_State *L, cJSON **slot, const char *p,
                         const char *e, int amt, int null, int emt,
                         const Hint *h);
static void tolua_keycache (lua_State *L);
static void tolua_key (lua_State *L, KeyRef *kr, const char *k, size_t len);
/* }====================================================== */


/* {======================================================
** encode.c — Lua values to compact JSON
** ======================================================= */
typedef struct Enc {
  lua_State *L;
  Buf *b;
  int array_mt;       /* index of core.array_mt (an upvalue) */
  int object_mt;      /* index of core.object_mt (an upvalue) */
  int empty_mt;       /* index of the option empty_dict's metatable, or 0 */
  int root;           /* absolute stack index of the value being encoded */
  int max_depth;
  char err[96];
} Enc;

static int enc_string (lua_State *L, Buf *b, const char *s, size_t len);
static void enc_integer (lua_State *L, Buf *b, long long v);
static int enc_into (lua_State *L, Buf *b, int idx, int amt, int omt,
                     int emt, int max_depth, Enc *E);
static int enc_pushfail (lua_State *L, const Enc *E);
/* }====================================================== */


/* {======================================================
** frame.c — push framers (ndjson, Content-Length)
** ======================================================= */
enum { FR_MORE, FR_MSG, FR_EVENT };   /* what frame_next found */

typedef struct Framer {
  Buf in;              /* received bytes; [off, in.n) not yet consumed */
  size_t off;
  size_t scanned;      /* bytes after 'off' known to hold no '\n' */
  size_t max_bytes;
  int lsp;             /* 1: Content-Length framing */
  int eof;             /* no more input will come */
  int dropping;        /* dropping an oversized line (ndjson) or junk */
  size_t discard;      /* body bytes still to drop (lsp, oversized) */
  long long body;      /* lsp: length of the body being read, or -1 */
  long long clen;      /* lsp: Content-Length seen in this header block */
  int in_headers;      /* lsp: some header line was seen */
} Framer;

/* an event to report instead of a message */
typedef struct FrameEvent {
  int code;
  const char *msg;
  int reply;
  char detail[96];
} FrameEvent;

static void frame_init (Framer *F, int lsp, size_t max_bytes);
static void frame_feed (lua_State *L, Framer *F, const char *s, size_t len);
static int frame_next (Framer *F, const char **mp, const char **me,
                       FrameEvent *ev);
static size_t frame_want (const Framer *F);
/* }====================================================== */


/* {======================================================
** message.c — classify JSON-RPC messages and push them
** ======================================================= */
enum { PROFILE_JSONRPC, PROFILE_MCP, PROFILE_LSP };

/* what decoding a message needs from its codec */
typedef struct MsgCtx {
  int profile;
  int max_batch;
  Scan S;          /* scanner settings (max_depth) and last error */
  Buf *scratch;    /* unescaped strings, canonical ids */
  Buf *spans;      /* batch member offsets */
  cJSON **tree;    /* the cJSON tree being converted, if any */
  int amt;         /* stack index of core.array_mt */
  int omt;         /* stack index of core.object_mt */
  int null;        /* stack index of the value for JSON null; 0: core.null */
  int emt;         /* stack index of the empty objects' metatable, or 0 */
  int shapes;      /* stack index of the params shapes by method, or 0 */
  int kinds;       /* stack index of the kind strings (msg_kinds) */
  KeyRef keys;     /* the key cache, or keys.table == 0 */
  FlatRec rec;     /* the params', result's or error's record */
} MsgCtx;

/* indexes into the table of kind strings */
enum { KIND_REQUEST = 1, KIND_NOTIFICATION, KIND_RESULT, KIND_ERROR, KIND_CHECKED };
static void msg_kinds (lua_State *L);

static int msg_pushinvalid (lua_State *L, int code, const char *msg,
                            const char *rawid, size_t idlen, int reply,
                            const char *detail);
static int msg_decode (lua_State *L, MsgCtx *M, const char *p,
                       const char *e);
/* }====================================================== */


/* {======================================================
** codec.c — the codec userdata (jrpc.Codec)
** ======================================================= */
#define AMT  lua_upvalueindex(1)   /* core.array_mt, in codec methods */
#define OMT  lua_upvalueindex(2)   /* core.object_mt */
#define MSG_KINDS  lua_upvalueindex(3)  /* the kind strings (msg_kinds) */
#define KEY_CACHE  lua_upvalueindex(4)  /* object keys (tolua_keycache): */
#define KEY_BYTES  lua_upvalueindex(5)  /* their strings, their bytes */

#define DEFAULT_MAX_DEPTH  128
#define DEPTH_CEILING      1000    /* cJSON's own nesting limit */

typedef struct Codec {
  UdHead h;
  Framer F;
  int profile;
  int max_depth;
  int max_batch;
  Buf out;           /* encoder output (encoding runs no Lua code) */
  Buf alt;           /* the writers' buffer while 'out' is being pushed */
  Buf held;          /* framed messages held while 'holding' (see codec:hold) */
  int holding;       /* framed writers append to 'held' and return true */
  Work *work;        /* the resident Work (user value 1), or NULL */
  int has_null;      /* option 'null' given: kept in CODEC_NULL_KEY's table */
  int has_empty;     /* option 'empty_dict' given: in CODEC_EMPTY_KEY's table */
  int has_shapes;    /* codec:shapes(t) given (see push_codec_shapes) */
} Codec;

/*
** Registry keys, pushed as light userdata: a lookup allocates nothing,
** so the encoder (which must run no Lua code) may do one.
*/
static const char NULLS_KEY = 0;       /* core.add_null's set: {[v] = true} */
static const char CODEC_NULL_KEY = 0;  /* codec -> its option 'null' (weak keys) */
static const char RAWS_KEY = 0;        /* core.raw_json's values: {[ud] = text} */
static const char CODEC_EMPTY_KEY = 0; /* codec -> its option 'empty_dict' (weak keys) */

static int codec_new (lua_State *L);
static void codec_open (lua_State *L);
/* }====================================================== */


/* {======================================================
** pending.c — the pending-id table (jrpc.Pending)
** ======================================================= */
static void pd_open (lua_State *L);
/* }====================================================== */


/* {======================================================
** http.c — HTTP/1.1 requests in (jrpc.Http), responses out; the
** parser plumbing http_client.c shares
** ======================================================= */
typedef struct Http {
  UdHead h;
  llhttp_t P;          /* P.data: this Http */
  lua_State *L;        /* the caller's state, for the callbacks' buffers */
  Buf in;              /* bytes after a complete message; [off, n) unread */
  size_t off;
  Buf cur;             /* the message being read: target/reason, headers, body */
  Buf spans;           /* its headers (HttpSpan, offsets into cur) */
  size_t max_header_bytes, max_body_bytes;
  int max_headers;
  size_t head_bytes;   /* of the message being read */
  size_t target_end, body_at;
  int nheaders;
  int in_value;        /* the last header callback was a value */
  int in_body;         /* headers done: later header callbacks are trailers */
  int done;            /* a complete message is in cur */
  int begun;           /* a message's first byte was read, and not its end */
  int keep_alive, method, minor;
  int faulty_framing;  /* HTTP/1.0 with Transfer-Encoding: close after it */
  size_t auth_at, auth_end;  /* an absolute-form target's authority in cur */
  int upgraded;        /* an Upgrade/CONNECT request: nothing more is read */
  int parsing;         /* set while the parser runs (a memory error left it) */
  int response;        /* 1: a response reader (http_client.c) */
  int perr;            /* llhttp's last error (llhttp_errno_t) */
  int status;          /* the request cannot be served: this status, */
  const char *errmsg;  /* and why (static) */
  Work *work;          /* the resident Work (user value 1), or NULL */
} Http;

/* a header in 'spans': offsets into 'cur' */
typedef struct HttpSpan {
  size_t name, value, end;   /* name is [name, value), value [value, end) */
} HttpSpan;

/* a header given to a writer */
typedef struct HttpHeader {
  const char *k, *v;
  size_t kn, vn;
} HttpHeader;

#define HTTP_MAX_WRITE_HEADERS 64    /* headers a writer takes */

/* the writers' output: the scratch codec's 'out' (module upvalue 3) */
#define HTTP_OUT  (&((Codec *)lua_touserdata(L, lua_upvalueindex(3)))->out)

static Http *http_of (llhttp_t *P);
static int http_fail (Http *H, int status, const char *msg);
static int http_headbytes (Http *H, size_t len);
static int http_on_message_begin (llhttp_t *P);
static int http_on_header_field (llhttp_t *P, const char *at, size_t len);
static int http_on_header_value (llhttp_t *P, const char *at, size_t len);
static void http_free (lua_State *L, Http *H);
static size_t http_run (Http *H, const char *p, size_t n);
static void http_keep (lua_State *L, Http *H, const char *p, size_t n);
static void http_parse (lua_State *L, Http *H, const char *chunk, size_t len);
static void http_setlfield (lua_State *L, const char *k, const char *p,
                            size_t n);
static void http_pushheaders (lua_State *L, Work *W, int nheaders);
static lua_Integer http_opt (lua_State *L, int opts, const char *name,
                             lua_Integer def, lua_Integer lo, lua_Integer hi);
static int http_tchar (int c);
static int http_casecmp (const char *a, size_t an, const char *b, size_t bn);
static int http_checkheaders (lua_State *L, int arg, HttpHeader *hs, int room);
static void http_addheaders (lua_State *L, Buf *b, HttpHeader *hs, int n);
static int http_pushout (lua_State *L, Buf *b);
static void http_open (lua_State *L);
static int http_response (lua_State *L);
static int http_stream_head (lua_State *L);
static int http_chunk (lua_State *L);
static int sse_event (lua_State *L);
/* }====================================================== */


/* {======================================================
** http_client.c — HTTP/1.1 responses in (jrpc.HttpClient), requests out
** ======================================================= */
static void hc_open (lua_State *L);
static int hc_request (lua_State *L);
/* }====================================================== */

#else   /* }{==== jrpc.core_tls only ==== */

/* {======================================================
** tls.c — a TLS client over memory BIOs (jrpc.Tls), on libssl
** ======================================================= */
static void tls_open (lua_State *L);
/* }====================================================== */


/* {======================================================
** crypto.c — HMAC-SHA-256, CSPRNG bytes, constant-time equality
** ======================================================= */
static int crypto_hmac_sha256 (lua_State *L);
static int crypto_random_bytes (lua_State *L);
static int crypto_equal (lua_State *L);
/* }====================================================== */

#endif   /* }==== */

#endif
