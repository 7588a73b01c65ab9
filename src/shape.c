/*
** shape.c — a declared method's params, checked as the request is decoded.
** A shape (made by jrpc.params) names the params in order: shape[i] is the
** i-th name, shape[name] its index, shape[0] a string of one type code per
** param (see shape_type_ok; upper case: required). Params that fit are
** pushed as one table keyed by name, the table the Lua checker would have
** built, without the array a positional call decodes to and without the
** checker's work. Params that do not fit are pushed as decoded, and the Lua
** checker says what is wrong: every message about params is made there.
*/

#define SHAPE_MAX  128  /* params a shape may declare (jrpc.params: 100) */

typedef struct Shape {
  int idx;                  /* stack index of the shape table */
  int n;                    /* params declared */
  char codes[SHAPE_MAX];    /* one type code per param: copied, so that no
                               finalizer can take them from under us */
} Shape;


/* push shape[i], a name, raising on a shape that jrpc.params did not make */
static void shape_name (lua_State *L, const Shape *sh, int i) {
  lua_rawgeti(L, sh->idx, i);
  if (lua_type(L, -1) != LUA_TSTRING) luaL_error(L, "codec: a params shape is malformed");
}


/* the codes at shape[0], each a known one (each name is checked where it
   is read: shape_name) */
static void shape_open (lua_State *L, Shape *sh, int idx) {
  size_t n, i;
  const char *codes;
  sh->idx = idx;
  lua_rawgeti(L, idx, 0);
  codes = lua_tolstring(L, -1, &n);
  if (lua_type(L, -1) != LUA_TSTRING || n > SHAPE_MAX)
    luaL_error(L, "codec: a params shape is malformed");
  for (i = 0; i < n; i++) {
    switch (codes[i] | 0x20) {
      case 'n': case 'i': case 's': case 'b': case 't': case 'a': case 'o': case 'x':
        sh->codes[i] = codes[i];
        break;
      default: luaL_error(L, "codec: a params shape is malformed");
    }
  }
  sh->n = (int)n;
  lua_pop(L, 1);
}


/* JSON null, as the checker counts it: core.null or a core.add_null value
   ('t': the value's type) */
static int shape_is_null (lua_State *L, int v, int t) {
  switch (t) {
    case LUA_TLIGHTUSERDATA: return lua_touserdata(L, v) == NULL;
    case LUA_TUSERDATA: return is_extra_null(L, lua_absindex(L, v));
    default: return 0;
  }
}


/* a decoded table is an array by its metatable, else when it has a [1] */
static int shape_is_array (lua_State *L, const MsgCtx *M, int v) {
  int yes;
  if (lua_getmetatable(L, v)) {
    yes = lua_rawequal(L, -1, M->amt) ? 1
        : (lua_rawequal(L, -1, M->omt) ||
           (M->emt != 0 && lua_rawequal(L, -1, M->emt))) ? 0 : -1;
    lua_pop(L, 1);
    if (yes >= 0) return yes;
  }
  lua_rawgeti(L, v, 1);
  yes = !lua_isnil(L, -1);
  lua_pop(L, 1);
  return yes;
}


/* does the value at 'v' (of type 't', not nil) have the type coded 'c'? */
static int shape_type_ok (lua_State *L, const MsgCtx *M, int c, int v, int t) {
  switch (c | 0x20) {  /* lower case */
    case 'x': return 1;                                   /* any */
    case 'n': return t == LUA_TNUMBER;                    /* number */
    case 'i': {                                           /* integer */
      lua_Number d;
      if (t != LUA_TNUMBER) return 0;
#if LUA_VERSION_NUM >= 503
      if (lua_isinteger(L, v)) return 1;
#endif
      d = lua_tonumber(L, v);
      return isfinite(d) && d == floor(d);
    }
    case 's': return t == LUA_TSTRING;                    /* string */
    case 'b': return t == LUA_TBOOLEAN;                   /* boolean */
    case 't': return t == LUA_TTABLE;                     /* table */
    case 'a': return t == LUA_TTABLE && shape_is_array(L, M, v);
    default: return t == LUA_TTABLE && !shape_is_array(L, M, v);  /* 'o' */
  }
}


/*
** The value of param i (0-based) is on top: keep it (1), drop it as an
** absent optional (0, popped), or say it does not fit (-1).
*/
static int shape_take (lua_State *L, const MsgCtx *M, const Shape *sh, int i) {
  int c = (unsigned char)sh->codes[i], t = lua_type(L, -1);
  int required = (c < 'a');
  if (shape_is_null(L, -1, t)) {
    if (!required) { lua_pop(L, 1); return 0; }
    return (c == 'X') ? 1 : -1;  /* a required param of any type may be null */
  }
  return shape_type_ok(L, M, c, lua_gettop(L), t) ? 1 : -1;
}


/* params from 'from' (0-based) on are absent: all of them optional? */
static int shape_rest_optional (const Shape *sh, int from) {
  int i;
  for (i = from; i < sh->n; i++)
    if (sh->codes[i] < 'a') return 0;
  return 1;
}


/*
** 'count' positional params, read from the scanner's record 'R' or, when
** R is NULL, from the decoded array at 'p': named table on top, or 0.
*/
static int shape_from_list (lua_State *L, const MsgCtx *M, const Shape *sh,
                            int count, const FlatRec *R, int p) {
  int i, top = lua_gettop(L);
  if (count > sh->n || !shape_rest_optional(sh, count)) return 0;
  lua_createtable(L, 0, count);
  for (i = 0; i < count; i++) {
    int keep;
    shape_name(L, sh, i + 1);
    if (R != NULL) push_flat_item(L, &R->item[i], M->null);
    else lua_rawgeti(L, p, i + 1);
    keep = shape_take(L, M, sh, i);
    if (keep < 0) { lua_settop(L, top); return 0; }
    if (keep) lua_rawset(L, -3);
    else lua_pop(L, 1);  /* the name */
  }
  return 1;
}


/*
** Named params decoded at 'p': checked in place (every key declared, every
** value of its type), then optional nulls removed: the decoded table is
** the named one. Returns 0, the table untouched, when they do not fit.
*/
static int shape_from_object (lua_State *L, const MsgCtx *M, const Shape *sh,
                              int p) {
  int i, top = lua_gettop(L);
  lua_pushnil(L);
  while (lua_next(L, p)) {  /* every key must name a param */
    lua_Integer k;
    lua_pop(L, 1);
    if (lua_type(L, -1) != LUA_TSTRING) { lua_settop(L, top); return 0; }
    lua_pushvalue(L, -1);
    lua_rawget(L, sh->idx);
    k = lua_isnumber(L, -1) ? lua_tointeger(L, -1) : 0;
    lua_pop(L, 1);
    if (k < 1 || k > sh->n) { lua_settop(L, top); return 0; }
  }
  for (i = 0; i < sh->n; i++) {
    int keep;
    shape_name(L, sh, i + 1);
    lua_rawget(L, p);
    if (lua_isnil(L, -1)) keep = (sh->codes[i] < 'a') ? -1 : 0;
    else keep = shape_take(L, M, sh, i);
    lua_settop(L, top);
    if (keep < 0) return 0;
  }
  for (i = 0; i < sh->n; i++) {  /* it fits: drop the optional nulls */
    if (sh->codes[i] < 'a') continue;
    shape_name(L, sh, i + 1);
    lua_pushvalue(L, -1);
    lua_rawget(L, p);
    if (shape_is_null(L, -1, lua_type(L, -1))) {
      lua_pop(L, 1);
      lua_pushnil(L);
      lua_rawset(L, p);
    }
    else lua_pop(L, 2);
  }
  lua_pushvalue(L, p);
  return 1;
}


/*
** Push the params at 's' (or nil: absent) of a request for the method
** whose shape is at 'idx'; returns 1 when they fit it (pushed named), 0
** when they are pushed as decoded.
*/
static int shape_push_params (lua_State *L, MsgCtx *M, const Span *s,
                              int idx) {
  Shape sh;
  int p, fit;
  shape_open(L, &sh, idx);
  if (s->p == NULL) {
    fit = shape_rest_optional(&sh, 0);
    if (fit) lua_createtable(L, 0, 0);
    else lua_pushnil(L);
  }
  else if (*s->p == '[' && M->rec.at == s->p && M->rec.flat &&
           shape_from_list(L, M, &sh, M->rec.n, &M->rec, 0))
    fit = 1;
  else {
    push_value(L, M, s);
    p = lua_gettop(L);
    fit = (*s->p == '[') ? shape_from_list(L, M, &sh, (int)lua_rawlen(L, p), NULL, p)
                         : shape_from_object(L, M, &sh, p);
    if (fit) lua_replace(L, p);  /* the named table, over the decoded one */
  }
  return fit;
}
