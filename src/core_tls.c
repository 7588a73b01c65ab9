/*
** core_tls.c — the jrpc.core_tls module: the core's functions that need
** OpenSSL (core.tls_client on libssl; core.hmac_sha256, core.random_bytes,
** core.equal, core.sha256, core.base64 on libcrypto), apart so that only a process that uses one
** of them maps OpenSSL's libraries (about 1.7 MiB of RSS, much of it
** dirtied by relocations). jrpc.core loads this module the first time one
** of those names is read from its table and copies them in (core.c), so
** callers keep calling core.<name>; nothing else needs to require it.
** One translation unit, like core.c: it includes its own copy of the
** bottom layers, so everything stays static and only
** luaopen_jrpc_core_tls is exported. JR_CORE_TLS selects this module's
** part of jrpc.h.
*/
#define _POSIX_C_SOURCE 200809L
#define JR_CORE_TLS 1

#include "jrpc.h"

#include "buf.c"       /* byte buffers */
#include "udata.c"     /* the userdata recipe */
#include "work.c"      /* per-call temporaries (here jrpc.TlsWork) */
#include "tls.c"       /* jrpc.Tls: a TLS client over memory BIOs */
#include "crypto.c"    /* HMAC, SHA-256, base64, random bytes, constant-time equality */


static const luaL_Reg core_tls_funcs[] = {
  {"hmac_sha256", crypto_hmac_sha256},
  {"random_bytes", crypto_random_bytes},
  {"equal", crypto_equal},
  {"sha256", crypto_sha256},
  {"base64", crypto_base64},
  {NULL, NULL}
};


JR_EXPORT int luaopen_jrpc_core_tls (lua_State *L) {
  work_open(L);
  lua_createtable(L, 0, 4);              /* the module */
  luaL_setfuncs(L, core_tls_funcs, 0);
  tls_open(L);
  return 1;
}
