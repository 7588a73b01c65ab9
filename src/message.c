/*
** message.c — classify one JSON-RPC 2.0 message (or a batch of them)
** and push it for Lua.
** The envelope (jsonrpc, method, id, params, result, error) is read here,
** member by member, so the id keeps its exact bytes; member values are
** built by cJSON (tolua.c). See CORE_API.md for what is pushed.
*/

/* a member's value: the bytes [p, e), or p == NULL when absent; 'n': the
   size of a container (its members or elements) */
typedef struct Span { const char *p, *e; int n; } Span;

typedef struct Envelope {
  Span jsonrpc, method, id, params, result, error;
  int id_isint;      /* the id is a number without fraction or exponent */
  int value_nul;     /* params, result or error holds a \u0000 (cJSON
                        would cut it); ids and method names may hold one */
  int method_plain;  /* the method's token holds no escape: its bytes are
                        its name */
  const char *dup;   /* name of a member given twice */
} Envelope;


static void reset_scan (MsgCtx *M) {
  M->S.rec = NULL; M->rec.at = NULL;
  M->S.err = NULL; M->S.at = NULL;
  M->S.too_deep = 0; M->S.has_nul = 0; M->S.has_escape = 0;
}


/* push the 6 values of an "invalid" event */
static int msg_pushinvalid (lua_State *L, int code, const char *msg,
                            const char *rawid, size_t idlen, int reply,
                            const char *detail) {
  lua_pushliteral(L, "invalid");
  lua_pushinteger(L, code);
  lua_pushstring(L, msg);
  if (rawid != NULL) lua_pushlstring(L, rawid, idlen);
  else lua_pushliteral(L, "null");
  lua_pushboolean(L, reply);
  lua_pushstring(L, detail);
  return 6;
}


/* the invalid event for a scanner failure: bad JSON or too deep */
static int push_scan_error (lua_State *L, MsgCtx *M, const char *start) {
  char detail[128];
  snprintf(detail, sizeof(detail), "%s at byte %ld", M->S.err,
           (long)(M->S.at - start) + 1);
  if (M->S.too_deep)
    return msg_pushinvalid(L, JR_INVALID_REQUEST, "Nesting too deep", NULL, 0,
                           1, detail);
  return msg_pushinvalid(L, JR_PARSE_ERROR, "Parse error", NULL, 0, 1, detail);
}


static int span_is (const Span *s, const char *lit, size_t len) {
  return (size_t)(s->e - s->p) == len && memcmp(s->p, lit, len) == 0;
}


/* which envelope member does the key token [k, ke) name? ('escaped':
   the token holds an escape, as the scanner found) */
static Span *member_slot (lua_State *L, MsgCtx *M, Envelope *env,
                          const char *k, const char *ke, int escaped) {
  Span key;
  key.p = k + 1; key.e = ke - 1;
  if (escaped) {
    tolua_unescape(L, M->scratch, k, ke);
    key.p = M->scratch->p; key.e = M->scratch->p + M->scratch->n;
  }
  switch (key.e - key.p) {
    case 2: return span_is(&key, "id", 2) ? &env->id : NULL;
    case 5: return span_is(&key, "error", 5) ? &env->error : NULL;
    case 6:
      if (span_is(&key, "method", 6)) return &env->method;
      if (span_is(&key, "params", 6)) return &env->params;
      if (span_is(&key, "result", 6)) return &env->result;
      return NULL;
    case 7: return span_is(&key, "jsonrpc", 7) ? &env->jsonrpc : NULL;
    default: return NULL;
  }
}


/*
** Scan the object at 'p' (the message itself), recording the envelope
** members. Unknown members are validated and ignored.
*/
static const char *scan_envelope (lua_State *L, MsgCtx *M, Envelope *env,
                                  const char *p, const char *e) {
  Scan *S = &M->S;
  /* field by field: a memset of the whole struct costs more */
  env->jsonrpc.p = env->method.p = env->id.p = NULL;
  env->params.p = env->result.p = env->error.p = NULL;
  env->id_isint = 0; env->value_nul = 0; env->method_plain = 0;
  env->dup = NULL;
  p = scan_skipws(p + 1, e);
  if (p < e && *p == '}') return p + 1;
  for (;;) {
    const char *k = p, *v;
    Span *slot;
    int nul;
    if (p >= e || *p != '"') return scan_fail(S, p, "expected a key");
    S->has_escape = 0;
    if ((p = scan_string(S, p, e)) == NULL) return NULL;
    slot = member_slot(L, M, env, k, p, S->has_escape);
    p = scan_skipws(p, e);
    if (p >= e || *p != ':') return scan_fail(S, p, "expected ':'");
    v = scan_skipws(p + 1, e);
    nul = S->has_nul;
    S->has_nul = 0;
    if (slot == &env->id && v < e && (*v == '-' || num_isdigit(*v)))
      p = scan_number(S, v, e, &env->id_isint);
    else {
      /* the values Lua gets as tables: recorded, to be pushed from it */
      if (slot == &env->params || slot == &env->result || slot == &env->error)
        S->rec = &M->rec;
      p = scan_value(S, v, e, 1);
      S->rec = NULL;   /* a scalar took no record */
    }
    if (p == NULL) return NULL;
    if (slot == &env->method)   /* has_escape: of its key and its value */
      env->method_plain = !S->has_escape;
    if (S->has_nul && (slot == &env->params || slot == &env->result ||
                       slot == &env->error))
      env->value_nul = 1;
    S->has_nul |= nul;
    if (slot != NULL) {
      if (slot->p != NULL && env->dup == NULL) env->dup = "duplicate member";
      slot->p = v; slot->e = p; slot->n = S->count;
    }
    p = scan_skipws(p, e);
    if (p < e && *p == ',') p = scan_skipws(p + 1, e);
    else if (p < e && *p == '}') return p + 1;
    else return scan_fail(S, p, "expected ',' or '}'");
  }
}


/* is the JSON string token in 's' exactly "2.0"? */
static int is_version (MsgCtx *M, lua_State *L, const Span *s) {
  if (s->p == NULL || *s->p != '"') return 0;
  if (span_is(s, "\"2.0\"", 5)) return 1;
  if (memchr(s->p, '\\', (size_t)(s->e - s->p)) == NULL) return 0;
  tolua_unescape(L, M->scratch, s->p, s->e);
  return M->scratch->n == 3 && memcmp(M->scratch->p, "2.0", 3) == 0;
}


/* check the id member: 0 if its type is not allowed by the profile */
static int id_ok (MsgCtx *M, const Envelope *env, const char **why) {
  const Span *id = &env->id;
  long long v;
  switch (*id->p) {
    case '"': return 1;
    case 'n':
      if (M->profile == PROFILE_MCP) { *why = "id must not be null"; return 0; }
      return 1;
    case '-': case '0': case '1': case '2': case '3': case '4':
    case '5': case '6': case '7': case '8': case '9':
      if (M->profile == PROFILE_MCP &&
          (!env->id_isint || !num_token_int64(id->p, id->e, &v))) {
        *why = "id must be a string or a 64-bit integer";
        return 0;
      }
      return 1;
    default:
      *why = "id must be a string, a number or null";
      return 0;
  }
}


/* push the Lua value of a valid id token */
static void push_id (lua_State *L, MsgCtx *M, const Envelope *env) {
  const Span *id = &env->id;
  long long v;
  if (*id->p == '"') tolua_string(L, M->scratch, id->p, id->e);
  else if (*id->p == 'n') lua_pushlightuserdata(L, NULL);
  else if (env->id_isint && num_token_int64(id->p, id->e, &v))
    lua_pushinteger(L, (lua_Integer)v);
  else {  /* fractional or huge: Lua sees a float; the reply echoes rawid */
    cJSON *n = cJSON_ParseWithLength(id->p, (size_t)(id->e - id->p));
    if (n == NULL) buf_nomem(L);  /* the token is valid: only memory fails */
    lua_pushnumber(L, (lua_Number)n->valuedouble);
    cJSON_Delete(n);
  }
}


/*
** Push the id text used to match a response with our request. Escapes
** in a string id are normalized (decoded and encoded our way), so a peer
** that re-escapes "é" as "\u00e9" still matches.
*/
static void push_match_text (lua_State *L, MsgCtx *M, const Span *id) {
  if (*id->p == '"' && memchr(id->p, '\\', (size_t)(id->e - id->p))) {
    Buf *b = M->scratch;
    size_t len;
    const char *s;
    tolua_string(L, b, id->p, id->e);  /* the decoded text, as a Lua string */
    s = lua_tolstring(L, -1, &len);    /* stable while on the stack */
    b->n = 0;
    enc_string(L, b, s, len);  /* valid UTF-8: it came from a valid token */
    lua_pop(L, 1);
    lua_pushlstring(L, b->p, b->n);
  }
  else lua_pushlstring(L, id->p, (size_t)(id->e - id->p));
}


/* the match id of a response: a plain integer id is its own (the pending
   table takes an integer for its text), any other its text */
static void push_match_id (lua_State *L, MsgCtx *M, const Envelope *env) {
  long long v;
  if (env->id_isint && num_token_idint(env->id.p, env->id.e, &v))
    lua_pushinteger(L, (lua_Integer)v);
  else push_match_text(L, M, &env->id);
}


/*
** Push the table of the strings that name a message's kind. Codec methods
** keep it as an upvalue: a string pushed from there costs a table read,
** where lua_pushstring hashes and looks it up again for every message.
*/
static void msg_kinds (lua_State *L) {
  lua_createtable(L, 5, 0);
  lua_pushliteral(L, "request"); lua_rawseti(L, -2, KIND_REQUEST);
  lua_pushliteral(L, "notification"); lua_rawseti(L, -2, KIND_NOTIFICATION);
  lua_pushliteral(L, "result"); lua_rawseti(L, -2, KIND_RESULT);
  lua_pushliteral(L, "error"); lua_rawseti(L, -2, KIND_ERROR);
  lua_pushliteral(L, "checked"); lua_rawseti(L, -2, KIND_CHECKED);
}


/* push the params, result or error value 's' */
static void push_value (lua_State *L, MsgCtx *M, const Span *s) {
  Hint h;
  h.keys = &M->keys;
  h.rec = (M->rec.at == s->p) ? &M->rec : NULL;
  h.size = s->n;
  tolua_jsonk(L, M->tree, s->p, s->e, M->amt, M->null, M->emt, &h);
}


static int shape_push_params (lua_State *L, MsgCtx *M, const Span *s,
                              int idx);  /* shape.c */

/* a request whose method has a params shape: its params (kind "checked"
   when they fit the shape); 0 when the method has none, nothing pushed */
static int push_shaped (lua_State *L, MsgCtx *M, const Envelope *env) {
  lua_pushvalue(L, -1);  /* the method */
  lua_rawget(L, M->shapes);
  if (!lua_istable(L, -1)) { lua_pop(L, 1); return 0; }
  if (shape_push_params(L, M, &env->params, lua_gettop(L))) {
    lua_rawgeti(L, M->kinds, KIND_CHECKED);
    lua_replace(L, -5);  /* the kind */
  }
  lua_replace(L, -2);  /* the params, over the shape */
  return 1;
}


static int push_request (lua_State *L, MsgCtx *M, const Envelope *env) {
  int isreq = (env->id.p != NULL);
  long long v;
  lua_rawgeti(L, M->kinds, isreq ? KIND_REQUEST : KIND_NOTIFICATION);
  if (env->method_plain)   /* no escape (the scanner saw): a repeated name */
    tolua_key(L, &M->keys, env->method.p + 1,
              (size_t)(env->method.e - env->method.p - 2));
  else tolua_string(L, M->scratch, env->method.p, env->method.e);
  if (isreq && M->shapes != 0 && push_shaped(L, M, env))
    ;
  else if (env->params.p != NULL)
    push_value(L, M, &env->params);
  else lua_pushnil(L);
  if (!isreq) return 3;
  push_id(L, M, env);
  if (env->id_isint && num_token_idint(env->id.p, env->id.e, &v))
    lua_pushvalue(L, -1);  /* the integer stands for its own text */
  else lua_pushlstring(L, env->id.p, (size_t)(env->id.e - env->id.p));
  return 5;
}


/* a request or notification: check its members, then push it */
static int classify_call (lua_State *L, MsgCtx *M, const Envelope *env) {
  const char *why = NULL;
  const char *rawid = NULL;
  size_t idlen = 0;
  if (env->id.p != NULL) {
    if (!id_ok(M, env, &why))
      return msg_pushinvalid(L, JR_INVALID_REQUEST, "Invalid Request", NULL, 0,
                             1, why);
    rawid = env->id.p; idlen = (size_t)(env->id.e - env->id.p);
  }
  if (env->dup) why = "a member is given twice";
  else if (!is_version(M, L, &env->jsonrpc)) why = "jsonrpc must be \"2.0\"";
  else if (*env->method.p != '"') why = "method must be a string";
  else if (env->result.p || env->error.p)
    why = "a request must not have result or error";
  else if (env->params.p && *env->params.p != '{' &&
           (*env->params.p != '[' || M->profile == PROFILE_MCP))
    why = (M->profile == PROFILE_MCP) ? "params must be an object"
                                      : "params must be an array or an object";
  else if (env->value_nul && env->params.p)
    why = "strings holding \\u0000 are not supported in params";
  if (why != NULL)
    return msg_pushinvalid(L, JR_INVALID_REQUEST, "Invalid Request", rawid,
                           idlen, 1, why);
  return push_request(L, M, env);
}


/* check the error member of an error response, pushed as a table */
static const char *check_error_table (lua_State *L) {
  lua_Number c;
  lua_getfield(L, -1, "code");
  c = lua_tonumber(L, -1);
  if (lua_type(L, -1) != LUA_TNUMBER || !num_fits_int64((double)c)) {
    lua_pop(L, 1);
    return "error.code must be an integer";
  }
  lua_pop(L, 1);
  lua_getfield(L, -1, "message");
  if (lua_type(L, -1) != LUA_TSTRING) {
    lua_pop(L, 1);
    return "error.message must be a string";
  }
  lua_pop(L, 1);
  return NULL;
}


/* a response: check it, then push "result"/"error", matchid, value, id */
static int classify_response (lua_State *L, MsgCtx *M, const Envelope *env) {
  const char *why = NULL;
  int top = lua_gettop(L);
  if (env->id.p == NULL) why = "a response must have an id";
  else if (!id_ok(M, env, &why)) ;
  else if (env->dup) why = "a member is given twice";
  else if (!is_version(M, L, &env->jsonrpc)) why = "jsonrpc must be \"2.0\"";
  else if (env->result.p && env->error.p)
    why = "a response must not have both result and error";
  else if (env->error.p && *env->error.p != '{')
    why = "error must be an object";
  else if (env->value_nul)
    why = "strings holding \\u0000 are not supported";
  if (why == NULL) {
    lua_rawgeti(L, M->kinds, env->result.p ? KIND_RESULT : KIND_ERROR);
    push_match_id(L, M, env);
    if (env->result.p)
      push_value(L, M, &env->result);
    else {
      push_value(L, M, &env->error);
      why = check_error_table(L);
    }
    if (why == NULL) {
      push_id(L, M, env);
      return 4;
    }
    lua_settop(L, top);
  }
  /* broken responses get no reply; the id lets Lua settle the request */
  if (env->id.p != NULL && (*env->id.p == '"' || *env->id.p == '-' ||
                            num_isdigit(*env->id.p))) {
    int n;
    push_match_text(L, M, &env->id);  /* invalid events carry text */
    n = msg_pushinvalid(L, JR_INVALID_REQUEST, "Invalid Request", NULL, 0, 0,
                        why);
    lua_pushvalue(L, top + 1);  /* the match id */
    lua_replace(L, top + 5);    /* the rawid slot of the event */
    lua_remove(L, top + 1);
    return n;
  }
  return msg_pushinvalid(L, JR_INVALID_REQUEST, "Invalid Request", NULL, 0, 0,
                         why);
}


/* one message that is not a batch: [p, e) with no leading whitespace */
static int decode_one (lua_State *L, MsgCtx *M, const char *p,
                       const char *e) {
  Envelope env;
  const char *end;
  reset_scan(M);
  if (p >= e || *p != '{') {  /* valid JSON that is not an object? */
    end = scan_value(&M->S, p, e, 0);
    if (end != NULL && scan_skipws(end, e) != e)
      end = scan_fail(&M->S, scan_skipws(end, e), "trailing characters");
    if (end == NULL) return push_scan_error(L, M, p);
    return msg_pushinvalid(L, JR_INVALID_REQUEST, "Invalid Request", NULL, 0, 1,
                           "a message must be an object");
  }
  end = scan_envelope(L, M, &env, p, e);
  if (end != NULL && scan_skipws(end, e) != e)
    end = scan_fail(&M->S, scan_skipws(end, e), "trailing characters");
  if (end == NULL) return push_scan_error(L, M, p);
  if (env.method.p != NULL) {
    /* LSP clients (e.g. eglot) send "params": null: read it as absent */
    if (M->profile == PROFILE_LSP && env.params.p != NULL && *env.params.p == 'n')
      env.params.p = NULL;
    return classify_call(L, M, &env);
  }
  if (env.result.p != NULL || env.error.p != NULL)
    return classify_response(L, M, &env);
  if (env.id.p != NULL && *env.id.p != '{' && *env.id.p != '[' &&
      *env.id.p != 't' && *env.id.p != 'f' &&
      !(M->profile == PROFILE_MCP && *env.id.p == 'n'))
    return msg_pushinvalid(L, JR_INVALID_REQUEST, "Invalid Request", env.id.p,
                           (size_t)(env.id.e - env.id.p), 1, "method is missing");
  return msg_pushinvalid(L, JR_INVALID_REQUEST, "Invalid Request", NULL, 0, 1,
                         "method is missing");
}


/* {======================= batches =============================== */

static int batch_error (lua_State *L, MsgCtx *M, const char *p,
                        const char *e) {
  const char *end = scan_value(&M->S, p, e, 0);
  if (end != NULL && scan_skipws(end, e) != e)
    end = scan_fail(&M->S, scan_skipws(end, e), "trailing characters");
  return end == NULL ? push_scan_error(L, M, p) : 0;
}


/*
** Pack the 'n' values on top of the stack into a new array with field
** 'n' (values may be nil, e.g. absent params: use unpack(t, 1, t.n)).
*/
static void pack_top (lua_State *L, int n) {
  int i, base = lua_gettop(L) - n;
  lua_createtable(L, n, 1);
  for (i = 1; i <= n; i++) {
    lua_pushvalue(L, base + i);
    lua_rawseti(L, -2, i);
  }
  lua_pushinteger(L, n);
  lua_setfield(L, -2, "n");
  lua_replace(L, base + 1);
  lua_settop(L, base + 1);
}


/* a batch: [p, e) starts with '[' */
static int decode_batch (lua_State *L, MsgCtx *M, const char *p,
                         const char *e) {
  const char *q;
  size_t count = 0, i;
  size_t *off;
  reset_scan(M);
  if (M->profile != PROFILE_JSONRPC) {
    int n = batch_error(L, M, p, e);
    return n ? n : msg_pushinvalid(L, JR_INVALID_REQUEST, "Batches are not allowed",
                                   NULL, 0, 1, "this profile has no batches");
  }
  M->spans->n = 0;
  q = scan_skipws(p + 1, e);
  if (q < e && *q == ']') {
    int n = batch_error(L, M, p, e);
    return n ? n : msg_pushinvalid(L, JR_INVALID_REQUEST, "Invalid Request", NULL,
                                   0, 1, "empty batch");
  }
  for (;;) {
    const char *end = scan_value(&M->S, q, e, 1);
    size_t pair[2];
    if (end == NULL) return push_scan_error(L, M, p);
    if (++count > (size_t)M->max_batch) {
      char detail[64];
      snprintf(detail, sizeof(detail), "more than %d members", M->max_batch);
      return msg_pushinvalid(L, JR_INVALID_REQUEST, "Batch too large", NULL, 0,
                             1, detail);
    }
    pair[0] = (size_t)(q - p); pair[1] = (size_t)(end - p);
    buf_add(L, M->spans, (const char *)pair, sizeof(pair));
    q = scan_skipws(end, e);
    if (q < e && *q == ',') { q = scan_skipws(q + 1, e); continue; }
    if (q < e && *q == ']') break;
    scan_fail(&M->S, q, "expected ',' or ']'");
    return push_scan_error(L, M, p);
  }
  if (scan_skipws(q + 1, e) != e) {
    scan_fail(&M->S, scan_skipws(q + 1, e), "trailing characters");
    return push_scan_error(L, M, p);
  }
  lua_pushliteral(L, "batch");
  lua_createtable(L, (int)count, 0);
  off = (size_t *)M->spans->p;  /* stable: spans is this call's, not written below */
  for (i = 0; i < count; i++) {
    luaL_checkstack(L, 8, "batch too large");
    pack_top(L, decode_one(L, M, p + off[2 * i], p + off[2 * i + 1]));
    lua_rawseti(L, -2, (int)i + 1);
  }
  return 2;
}

/* }=============================================================== */


/* decode the message [p, e) */
static int msg_decode (lua_State *L, MsgCtx *M, const char *p,
                       const char *e) {
  p = scan_skipws(p, e);
  if (p < e && *p == '[') return decode_batch(L, M, p, e);
  return decode_one(L, M, p, e);
}
