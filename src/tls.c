/*
** tls.c — a TLS client, sans-I/O (jrpc.Tls), on OpenSSL's libssl: the
** session reads the network's bytes from one memory BIO and writes its
** own into another, so the caller moves bytes and this file does no I/O.
** All cryptography is libssl's; nothing here is hand-written.
**
** Verification is on unless the caller says verify = false: the peer's
** chain must lead to a CA of the system store (or of 'ca_file' alone, when
** given), and its certificate must name 'host' (SSL_set1_host, or the IP
** address for an IP literal; SNI carries a host name, never an address).
**
** Lifetime follows udata.c: the userdata is made empty and gets its
** metatable before any OpenSSL object exists, and each object is stored
** in it as soon as it is made, so a raise at any point leaves only what
** __gc frees. OpenSSL allocates with malloc and runs no Lua code; bytes
** that come out (plaintext, network bytes) go first into this object's
** buffers (raw allocator: grown before OpenSSL writes into them, so a
** memory error loses nothing), then are swapped into the call's Work and
** pushed, so a finalizer that uses this object meanwhile gets the bytes
** that follow and cannot move what this call pushes.
*/

#define TLS_MT         "jrpc.Tls"
#define TLS_READ_STEP  16384    /* plaintext room made per SSL_read */

typedef struct Tls {
  UdHead h;
  SSL_CTX *ctx;
  SSL *ssl;
  BIO *rbio, *wbio;    /* network bytes in, network bytes out */
  int bios_owned;      /* SSL_set_bio done: SSL_free frees them */
  int verify;
  int handshaken;
  int peer_closed;     /* the peer sent close_notify */
  int failed;          /* 'err' says why; every later call gives it */
  Buf plain;           /* plaintext read, not yet returned */
  Buf net;             /* network bytes drained, not yet returned */
  Work *work;          /* the resident Work (user value 1), or NULL */
  char err[256];
} Tls;

#define check_tls(L)  ((Tls *)ud_check(L, lua_upvalueindex(1), TLS_MT))


static void tls_free (lua_State *L, Tls *T) {
  if (T->ssl != NULL) SSL_free(T->ssl);   /* and the BIOs it owns */
  if (!T->bios_owned) {
    BIO_free(T->rbio);
    BIO_free(T->wbio);
  }
  SSL_CTX_free(T->ctx);
  T->ssl = NULL;
  T->ctx = NULL;
  T->rbio = T->wbio = NULL;
  buf_free(L, &T->plain);
  buf_free(L, &T->net);
}


static int tls_gc (lua_State *L) {
  Tls *T = (Tls *)luaL_checkudata(L, 1, TLS_MT);
  tls_free(L, T);
  if (T->work != NULL && !T->work->busy) work_free(L, T->work);
  T->work = NULL;
  T->h.closed = 1;
  return 0;
}


/* the reason text of an OpenSSL error code (system errors: strerror) */
static const char *tls_reason (unsigned long code) {
  const char *reason;
  if (code == 0) return "unknown error";
  if (ERR_SYSTEM_ERROR(code)) return strerror((int)ERR_GET_REASON(code));
  reason = ERR_reason_error_string(code);
  return reason != NULL ? reason : "unknown error";
}


/*
** Note why the call that returned 'r' failed, from OpenSSL's error queue
** (the first error is the cause) and, for a refused certificate, the
** verification result; 'what' names the step.
*/
static void tls_seterr (Tls *T, int r, const char *what) {
  int e = SSL_get_error(T->ssl, r);
  unsigned long code = ERR_peek_error();
  long v = SSL_get_verify_result(T->ssl);
  if (ERR_GET_REASON(code) == SSL_R_CERTIFICATE_VERIFY_FAILED && v != X509_V_OK)
    snprintf(T->err, sizeof(T->err), "certificate verify failed: %s",
             X509_verify_cert_error_string(v));
  else if (code != 0)
    snprintf(T->err, sizeof(T->err), "%s: %s", what, tls_reason(code));
  else if (e == SSL_ERROR_ZERO_RETURN)
    snprintf(T->err, sizeof(T->err), "%s: the peer closed the session", what);
  else snprintf(T->err, sizeof(T->err), "%s (SSL error %d)", what, e);
  ERR_clear_error();
  T->failed = 1;
}


static int tls_pusherr (lua_State *L, Tls *T) {
  lua_pushnil(L);
  lua_pushstring(L, T->err);
  return 2;
}


/* raise for an OpenSSL call that failed where only memory can be short */
static int tls_raise (lua_State *L, const char *what) {
  unsigned long code = ERR_get_error();
  const char *reason = code ? tls_reason(code) : "not enough memory";
  ERR_clear_error();
  return luaL_error(L, "tls_client: %s failed: %s", what, reason);
}


/*
** Take this call's Work. Making one allocates, and a finalizer run there
** may close this very object: then raise as for any closed object.
*/
static Work *tls_work (lua_State *L, Tls *T) {
  Work *W = work_acquire(L, &T->work, 1);
  if (jr_unlikely(T->h.closed)) {
    work_release(L, W);
    luaL_error(L, "%s is closed", TLS_MT);
  }
  return W;
}


/* raise unless the handshake is done (reading, writing need it) */
static void tls_needshake (lua_State *L, Tls *T) {
  if (!T->handshaken && !T->failed)
    luaL_error(L, "jrpc.Tls: the handshake is not done");
}


/*
** t:handshake() -> true (done) | false (send outgoing(), feed the answer,
** call again) | nil, msg (refused: certificate, protocol, alert)
*/
static int tls_handshake (lua_State *L) {
  Tls *T = check_tls(L);
  int r;
  if (T->failed) return tls_pusherr(L, T);
  if (!T->handshaken) {
    ERR_clear_error();
    r = SSL_do_handshake(T->ssl);
    if (r != 1) {
      int e = SSL_get_error(T->ssl, r);
      if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
        lua_pushboolean(L, 0);
        return 1;
      }
      tls_seterr(T, r, "TLS handshake failed");
      return tls_pusherr(L, T);
    }
    T->handshaken = 1;
  }
  lua_pushboolean(L, 1);
  return 1;
}


/* t:feed(bytes): bytes from the network */
static int tls_feed (lua_State *L) {
  Tls *T = check_tls(L);
  size_t len;
  const char *s = luaL_checklstring(L, 2, &len);
  luaL_argcheck(L, len <= INT_MAX, 2, "too many bytes at once");
  if (len > 0 && BIO_write(T->rbio, s, (int)len) != (int)len)
    return tls_raise(L, "BIO_write");
  return 0;
}


/*
** t:read() -> plaintext (maybe ""), closed | nil, msg
** 'closed' is true once the peer ended the session (close_notify). Bytes
** read before a failure come out first; the failure on the next call.
*/
static int tls_read (lua_State *L) {
  Tls *T = check_tls(L);
  Work *W;
  Buf tmp;
  int closed;
  tls_needshake(L, T);
  W = tls_work(L, T);
  while (!T->failed && !T->peer_closed) {
    char *p = buf_reserve(L, &T->plain, TLS_READ_STEP);
    int r, e;
    ERR_clear_error();
    r = SSL_read(T->ssl, p, TLS_READ_STEP);
    if (r > 0) { T->plain.n += (size_t)r; continue; }
    e = SSL_get_error(T->ssl, r);
    if (e == SSL_ERROR_WANT_READ) break;
    if (e == SSL_ERROR_ZERO_RETURN) T->peer_closed = 1;
    else tls_seterr(T, r, "TLS read failed");
  }
  if (T->plain.n == 0 && T->failed) {
    work_release(L, W);
    return tls_pusherr(L, T);
  }
  tmp = W->msg; W->msg = T->plain; T->plain = tmp;
  T->plain.n = 0;
  closed = T->peer_closed;
  lua_pushlstring(L, W->msg.p, W->msg.n);
  lua_pushboolean(L, closed);
  work_release(L, W);
  return 2;
}


/* t:write(plaintext) -> true | nil, msg */
static int tls_write (lua_State *L) {
  Tls *T = check_tls(L);
  size_t len;
  const char *s = luaL_checklstring(L, 2, &len);
  int r;
  luaL_argcheck(L, len <= INT_MAX, 2, "too many bytes at once");
  tls_needshake(L, T);
  if (T->failed) return tls_pusherr(L, T);
  if (len > 0) {
    ERR_clear_error();
    r = SSL_write(T->ssl, s, (int)len);
    if (r != (int)len) {
      tls_seterr(T, r, "TLS write failed");
      return tls_pusherr(L, T);
    }
  }
  lua_pushboolean(L, 1);
  return 1;
}


/* t:outgoing() -> the bytes to send to the network ("" when none) */
static int tls_outgoing (lua_State *L) {
  Tls *T = check_tls(L);
  Work *W = tls_work(L, T);
  size_t n = BIO_ctrl_pending(T->wbio);
  Buf tmp;
  if (n > INT_MAX) n = INT_MAX;
  if (n > 0) {
    char *p = buf_reserve(L, &T->net, n);   /* before the bytes leave the BIO */
    int r = BIO_read(T->wbio, p, (int)n);
    if (r > 0) T->net.n += (size_t)r;
  }
  tmp = W->msg; W->msg = T->net; T->net = tmp;
  T->net.n = 0;
  lua_pushlstring(L, W->msg.p, W->msg.n);
  work_release(L, W);
  return 1;
}


/* t:shutdown(): a close_notify for the peer (then send outgoing()) */
static int tls_shutdown (lua_State *L) {
  Tls *T = check_tls(L);
  if (T->handshaken && !T->failed && !(SSL_get_shutdown(T->ssl) & SSL_SENT_SHUTDOWN)) {
    ERR_clear_error();
    SSL_shutdown(T->ssl);
    ERR_clear_error();
  }
  return 0;
}


/* t:info() -> { version, cipher, verified } of a finished handshake */
static int tls_info (lua_State *L) {
  Tls *T = check_tls(L);
  const char *version, *cipher;
  int verified;
  tls_needshake(L, T);
  if (T->failed) return tls_pusherr(L, T);
  version = SSL_get_version(T->ssl);
  cipher = SSL_get_cipher_name(T->ssl);
  verified = T->verify && SSL_get_verify_result(T->ssl) == X509_V_OK;
  lua_createtable(L, 0, 3);
  lua_pushstring(L, version);
  lua_setfield(L, -2, "version");
  lua_pushstring(L, cipher);
  lua_setfield(L, -2, "cipher");
  lua_pushboolean(L, verified);
  lua_setfield(L, -2, "verified");
  return 1;
}


/* t:close(): free the session now (idempotent); other methods then raise */
static int tls_close (lua_State *L) {
  luaL_checkudata(L, 1, TLS_MT);
  return tls_gc(L);
}


static int tls_tostring (lua_State *L) {
  Tls *T = (Tls *)luaL_checkudata(L, 1, TLS_MT);
  lua_pushfstring(L, "jrpc.Tls (%s)", T->h.closed ? "closed" :
                  T->failed ? "failed" : T->handshaken ? "established" :
                  "handshaking");
  return 1;
}


/* the string option 'name' of the table at 1, or NULL; left on the stack */
static const char *tls_stropt (lua_State *L, const char *name) {
  size_t len;
  const char *s;
  lua_getfield(L, 1, name);
  if (lua_isnil(L, -1)) return NULL;
  if (lua_type(L, -1) != LUA_TSTRING)
    luaL_error(L, "tls_client: option '%s' must be a string", name);
  s = lua_tolstring(L, -1, &len);
  if (len == 0 || strlen(s) != len)
    luaL_error(L, "tls_client: option '%s' must be a non-empty string without NUL", name);
  return s;
}


/*
** core.tls_client{ host = name_or_ip, ca_file? = path, verify? = true }
** -> a jrpc.Tls | nil, msg (the ca_file or the system store cannot be
** loaded). Raises for bad options, and for no host while verifying.
*/
static int tls_new (lua_State *L) {
  static const char *const known[] = {"host", "ca_file", "verify", NULL};
  const char *host, *ca_file;
  int verify = 1;
  Tls *T;
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_settop(L, 1);
  ud_checkoptions(L, 1, known, "tls_client");
  host = tls_stropt(L, "host");             /* 2 */
  ca_file = tls_stropt(L, "ca_file");       /* 3 */
  lua_getfield(L, 1, "verify");             /* 4 */
  if (!lua_isnil(L, -1)) {
    if (!lua_isboolean(L, -1)) luaL_error(L, "tls_client: option 'verify' must be a boolean");
    verify = lua_toboolean(L, -1);
  }
  if (verify && host == NULL)
    luaL_error(L, "tls_client: option 'host' is needed to verify the certificate (or verify = false)");
  T = (Tls *)lua_newuserdatauv(L, sizeof(Tls), 1);
  memset(T, 0, sizeof(*T));   /* empty first: __gc is safe from here on */
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_setmetatable(L, -2);
#if LUA_VERSION_NUM < 504
  lua_createtable(L, 1, 0);   /* LuaJIT: a userdata's env must be a table */
  lua_setfenv(L, -2);
#endif
  T->verify = verify;
  ERR_clear_error();
  T->ctx = SSL_CTX_new(TLS_client_method());
  if (T->ctx == NULL) return tls_raise(L, "SSL_CTX_new");
  SSL_CTX_set_min_proto_version(T->ctx, TLS1_2_VERSION);
  SSL_CTX_set_verify(T->ctx, verify ? SSL_VERIFY_PEER : SSL_VERIFY_NONE, NULL);
  if (verify) {
    int ok = (ca_file != NULL) ? SSL_CTX_load_verify_locations(T->ctx, ca_file, NULL)
                               : SSL_CTX_set_default_verify_paths(T->ctx);
    if (ok != 1) {
      const char *reason = tls_reason(ERR_peek_error());
      lua_pushnil(L);
      if (ca_file != NULL)
        lua_pushfstring(L, "tls_client: cannot load ca_file '%s': %s", ca_file, reason);
      else lua_pushfstring(L, "tls_client: cannot load the system CA store: %s", reason);
      ERR_clear_error();
      return 2;
    }
  }
  T->ssl = SSL_new(T->ctx);
  if (T->ssl == NULL) return tls_raise(L, "SSL_new");
  T->rbio = BIO_new(BIO_s_mem());
  if (T->rbio == NULL) return tls_raise(L, "BIO_new");
  T->wbio = BIO_new(BIO_s_mem());
  if (T->wbio == NULL) return tls_raise(L, "BIO_new");
  SSL_set_bio(T->ssl, T->rbio, T->wbio);
  T->bios_owned = 1;
  SSL_set_connect_state(T->ssl);
  if (host != NULL) {
    /* an IP literal is checked against the certificate's IP addresses */
    int ip = X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(T->ssl), host) == 1;
    ERR_clear_error();
    if (!ip) {
      if (SSL_set_tlsext_host_name(T->ssl, host) != 1)
        return tls_raise(L, "SSL_set_tlsext_host_name");
      SSL_set_hostflags(T->ssl, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
      if (verify && SSL_set1_host(T->ssl, host) != 1)
        return tls_raise(L, "SSL_set1_host");
    }
  }
  return 1;
}


static const luaL_Reg tls_methods[] = {
  {"handshake", tls_handshake},
  {"feed", tls_feed},
  {"read", tls_read},
  {"write", tls_write},
  {"outgoing", tls_outgoing},
  {"shutdown", tls_shutdown},
  {"info", tls_info},
  {"close", tls_close},
  {NULL, NULL}
};


/* the jrpc.Tls metatable and core.tls_client into the module on top */
static void tls_open (lua_State *L) {
  static const luaL_Reg meta[] = {
    {"__gc", tls_gc}, {"__close", tls_gc}, {"__tostring", tls_tostring},
    {NULL, NULL}
  };
  ud_newtype(L, TLS_MT, meta, tls_methods, tls_new, "tls_client");
}
