/*
** encode.c — Lua values to compact JSON on one line.
** Errors that come from the value (NaN, a cycle, bad UTF-8, a mixed table)
** are expected failures: the encoder records them in 'err' and unwinds by
** returning 0, so the caller can answer 'nil, msg'. Only memory errors raise.
** Tables are read with raw access: no metamethod runs during encoding.
*/
static int enc_fail (Enc *E, const char *msg) {
  if (E->err[0] == '\0') snprintf(E->err, sizeof(E->err), "%s", msg);
  return 0;
}


/* 0: copy as is; 1: needs an escape; 2: start of a multi-byte sequence */
static const unsigned char esc_class[256] = {
  1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1, 1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,
  0,0,1,0,0,0,0,0,0,0,0,0,0,0,0,0, 0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,
  0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0, 0,0,0,0,0,0,0,0,0,0,0,0,1,0,0,0,
  0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0, 0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,
  2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2, 2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,
  2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2, 2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,
  2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2, 2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,
  2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2, 2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2
};


/* append 's' as a quoted JSON string; 0 if it is not valid UTF-8 */
static int enc_string (lua_State *L, Buf *b, const char *s, size_t len) {
  const unsigned char *p = (const unsigned char *)s, *e = p + len;
  buf_reserve(L, b, len + 2);
  b->p[b->n++] = '"';
  while (p < e) {
    const unsigned char *q = p;
    while (q < e && esc_class[*q] == 0) q++;
    buf_add(L, b, (const char *)p, (size_t)(q - p));
    if (q >= e) break;
    if (esc_class[*q] == 2) {
      int n = scan_utf8len(q, e);
      if (n == 0) return 0;
      buf_add(L, b, (const char *)q, (size_t)n);
      p = q + n;
      continue;
    }
    switch (*q) {
      case '"': buf_addlit(L, b, "\\\""); break;
      case '\\': buf_addlit(L, b, "\\\\"); break;
      case '\n': buf_addlit(L, b, "\\n"); break;
      case '\r': buf_addlit(L, b, "\\r"); break;
      case '\t': buf_addlit(L, b, "\\t"); break;
      case '\b': buf_addlit(L, b, "\\b"); break;
      case '\f': buf_addlit(L, b, "\\f"); break;
      default: {
        char u[8];
        snprintf(u, sizeof(u), "\\u%04x", (unsigned)*q);
        buf_add(L, b, u, 6);
      }
    }
    p = q + 1;
  }
  buf_addc(L, b, '"');
  return 1;
}


static void enc_integer (lua_State *L, Buf *b, long long v) {
  char *d = buf_reserve(L, b, NUM_IDTEXT);
  b->n += num_itoa(v, d);
}


/*
** Shortest text that reads back as the same double. An integral float
** gets ".0" so it comes back as a float. snprintf follows the C locale's
** decimal point, so any non-digit that is not a sign or exponent mark
** is turned back into '.'.
*/
static int enc_float (Enc *E, double d) {
  char tmp[40];
  int n, i, plain = 1;
  if (!isfinite(d)) return enc_fail(E, "cannot encode NaN or Infinity");
#if defined(JR_NO_INTEGERS)
  if (d == floor(d) && fabs(d) <= 9007199254740992.0) {
    enc_integer(E->L, E->b, (long long)d);
    return 1;
  }
#endif
  n = snprintf(tmp, sizeof(tmp), "%.15g", d);
  if (strtod(tmp, NULL) != d) {
    n = snprintf(tmp, sizeof(tmp), "%.16g", d);
    if (strtod(tmp, NULL) != d) n = snprintf(tmp, sizeof(tmp), "%.17g", d);
  }
  for (i = 0; i < n; i++) {
    char c = tmp[i];
    if (c == 'e' || c == 'E') plain = 0;
    else if (!num_isdigit(c) && c != '-' && c != '+') { tmp[i] = '.'; plain = 0; }
  }
  buf_add(E->L, E->b, tmp, (size_t)n);
  if (plain) buf_addlit(E->L, E->b, ".0");
  return 1;
}


static int enc_value (Enc *E, int idx, int depth);


/*
** Is the table at 'idx' already being encoded below us? The tables being
** encoded sit on the stack from the root up, so only that range is searched
** (and only once the depth limit is hit, to name the error precisely).
*/
static int in_cycle (Enc *E, int idx) {
  lua_State *L = E->L;
  int top = lua_gettop(L), i;
  for (i = E->root; i <= top; i++)
    if (i != idx && lua_rawequal(L, i, idx)) return 1;
  return 0;
}


/* elements from..n of the sequence at 'idx' ('[' and elements before 'from' written) */
static int enc_array (Enc *E, int idx, size_t from, size_t n, int depth) {
  lua_State *L = E->L;
  size_t i;
  for (i = from; i <= n; i++) {
    if (i > 1) buf_addc(L, E->b, ',');
    lua_rawgeti(L, idx, (lua_Integer)i);
    if (lua_isnil(L, -1))
      return enc_fail(E, "cannot encode a sparse array (nil inside)");
    if (!enc_value(E, lua_gettop(L), depth)) return 0;
    lua_pop(L, 1);
  }
  buf_addc(L, E->b, ']');
  return 1;
}


static int enc_object (Enc *E, int idx, int depth) {
  lua_State *L = E->L;
  int first = 1;
  buf_addc(L, E->b, '{');
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    size_t len;
    const char *k;
    if (lua_type(L, -2) != LUA_TSTRING)
      return enc_fail(E, "cannot encode a table with mixed or non-string keys");
    if (!first) buf_addc(L, E->b, ',');
    first = 0;
    k = lua_tolstring(L, -2, &len);
    if (!enc_string(L, E->b, k, len))
      return enc_fail(E, "cannot encode a key that is not valid UTF-8");
    buf_addc(L, E->b, ':');
    if (!enc_value(E, lua_gettop(L), depth)) return 0;
    lua_pop(L, 1);
  }
  buf_addc(L, E->b, '}');
  return 1;
}


/*
** What is left of an array whose walk met a key (on the stack, with its
** value) where it expected integer 'i': the table is a sequence only if
** its key count is its border (keys 1..i-1 were seen, in order).
*/
static int enc_array_rest (Enc *E, int idx, size_t i, int depth, int marked) {
  lua_State *L = E->L;
  size_t keys = i;  /* 1..i-1, and the one on the stack */
  size_t n;
  lua_pop(L, 1);
  while (lua_next(L, idx)) { keys++; lua_pop(L, 1); }
  n = lua_rawlen(L, idx);
  if (keys != n)
    return enc_fail(E, marked ? "cannot encode a sparse array (nil inside)"
                              : "cannot encode a table with mixed or non-string keys");
  return enc_array(E, idx, i, n, depth);
}


/*
** A table: an object when marked so, or when it has no integer key 1
** (and no other integer keys: they fail in enc_object); else a sequence,
** written in one walk while the keys come as 1, 2, 3... (an array part
** does, in both Lua 5.4 and LuaJIT), by index once they do not. An empty
** unmarked table is {}, or [] when the caller gave the metatable that
** marks empty objects (codec option empty_dict: Neovim's convention, as
** vim.json writes it); a table with that metatable is an object too.
*/
static int enc_table (Enc *E, int idx, int depth) {
  lua_State *L = E->L;
  size_t i = 1, mark;
  int marked = 0;  /* 1: array_mt, 2: object_mt */
  if (depth >= E->max_depth)
    return enc_fail(E, in_cycle(E, idx) ? "cannot encode a table that contains itself"
                                        : "nesting too deep");
  luaL_checkstack(L, 4, "nesting too deep");
  if (lua_getmetatable(L, idx)) {
    if (lua_rawequal(L, -1, E->array_mt)) marked = 1;
    else if (lua_rawequal(L, -1, E->object_mt) ||
             (E->empty_mt != 0 && lua_rawequal(L, -1, E->empty_mt))) marked = 2;
    lua_pop(L, 1);
  }
  if (marked == 2) return enc_object(E, idx, depth + 1);
  mark = E->b->n;
  buf_addc(L, E->b, '[');
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    if (lua_type(L, -2) != LUA_TNUMBER || lua_tonumber(L, -2) != (lua_Number)i) {
      if (i == 1 && !marked && lua_type(L, -2) == LUA_TSTRING) {
        lua_pop(L, 2);  /* a string key first: an object */
        E->b->n = mark;
        return enc_object(E, idx, depth + 1);
      }
      return enc_array_rest(E, idx, i, depth + 1, marked);
    }
    if (i > 1) buf_addc(L, E->b, ',');
    if (!enc_value(E, lua_gettop(L), depth + 1)) return 0;
    lua_pop(L, 1);
    i++;
  }
  if (i == 1 && !marked && E->empty_mt == 0) {  /* empty and unmarked: {} */
    E->b->n = mark;
    return enc_object(E, idx, depth + 1);
  }
  buf_addc(L, E->b, ']');
  return 1;
}


/*
** Is the userdata at 'idx' one of core.add_null's values (vim.NIL)? Only
** userdata pay for the lookup, which allocates nothing (raw access, a
** light userdata key), so encoding still runs no Lua code.
*/
static int is_extra_null (lua_State *L, int idx) {
  int yes;
  luaL_checkstack(L, 2, "nesting too deep");
  lua_pushlightuserdata(L, (void *)&NULLS_KEY);
  lua_rawget(L, LUA_REGISTRYINDEX);
  if (!lua_istable(L, -1)) { lua_pop(L, 1); return 0; }
  lua_pushvalue(L, idx);
  lua_rawget(L, -2);
  yes = lua_toboolean(L, -1);
  lua_pop(L, 2);
  return yes;
}


/*
** Append the text of the userdata at 'idx' when it is one of
** core.raw_json's values (its text was checked and made one line when it
** was made); 0 when it is not one. A lookup like is_extra_null's.
*/
static int enc_raw (lua_State *L, Buf *b, int idx) {
  int found = 0;
  luaL_checkstack(L, 2, "nesting too deep");
  lua_pushlightuserdata(L, (void *)&RAWS_KEY);
  lua_rawget(L, LUA_REGISTRYINDEX);
  if (!lua_istable(L, -1)) { lua_pop(L, 1); return 0; }
  lua_pushvalue(L, idx);
  lua_rawget(L, -2);
  if (lua_type(L, -1) == LUA_TSTRING) {
    size_t len;
    const char *s = lua_tolstring(L, -1, &len);
    buf_add(L, b, s, len);
    found = 1;
  }
  lua_pop(L, 2);
  return found;
}


static int enc_value (Enc *E, int idx, int depth) {
  lua_State *L = E->L;
  switch (lua_type(L, idx)) {
    case LUA_TSTRING: {
      size_t len;
      const char *s = lua_tolstring(L, idx, &len);
      if (!enc_string(L, E->b, s, len))
        return enc_fail(E, "cannot encode a string that is not valid UTF-8");
      return 1;
    }
    case LUA_TNUMBER:
#if !defined(JR_NO_INTEGERS)
      if (lua_isinteger(L, idx)) {
        enc_integer(L, E->b, (long long)lua_tointeger(L, idx));
        return 1;
      }
#endif
      return enc_float(E, (double)lua_tonumber(L, idx));
    case LUA_TBOOLEAN:
      if (lua_toboolean(L, idx)) buf_addlit(L, E->b, "true");
      else buf_addlit(L, E->b, "false");
      return 1;
    case LUA_TNIL:
      buf_addlit(L, E->b, "null");
      return 1;
    case LUA_TLIGHTUSERDATA:
      if (lua_touserdata(L, idx) == NULL) {
        buf_addlit(L, E->b, "null");
        return 1;
      }
      /* FALLTHROUGH */
    case LUA_TUSERDATA:
      if (is_extra_null(L, idx)) {
        buf_addlit(L, E->b, "null");
        return 1;
      }
      if (lua_type(L, idx) == LUA_TUSERDATA && enc_raw(L, E->b, idx)) return 1;
      return enc_fail(E, lua_type(L, idx) == LUA_TUSERDATA ? "cannot encode a userdata"
                                                          : "cannot encode a light userdata");
    case LUA_TTABLE:
      return enc_table(E, idx, depth);
    default: {
      char msg[64];
      snprintf(msg, sizeof(msg), "cannot encode a %s", luaL_typename(L, idx));
      return enc_fail(E, msg);
    }
  }
}


/*
** Encode the value at 'idx' into 'b'. 'amt'/'omt' are the stack indices
** of the marker metatables; 'emt' that of the empty objects' metatable
** (option empty_dict), or 0. Returns 1, or 0 with the reason in E->err.
*/
static int enc_into (lua_State *L, Buf *b, int idx, int amt, int omt,
                     int emt, int max_depth, Enc *E) {
  E->L = L;
  E->b = b;
  E->array_mt = amt;
  E->object_mt = omt;
  E->empty_mt = emt;
  E->max_depth = max_depth;
  E->err[0] = '\0';
  E->root = lua_absindex(L, idx);
  return enc_value(E, E->root, 0);
}


/* an expected failure of an encoding: push nil and the reason */
static int enc_pushfail (lua_State *L, const Enc *E) {
  lua_pushnil(L);
  lua_pushstring(L, E->err);
  return 2;
}
