/*
** udata.c — the one recipe for the core's userdata types (jrpc.Codec,
** jrpc.Pending, jrpc.Http, jrpc.HttpClient, jrpc.Work; in jrpc.core_tls,
** jrpc.Tls and jrpc.TlsWork), and the check of their constructors'
** options. Every such struct starts with a UdHead.
** Methods get the type's metatable as an upvalue, so checking 'self' is a
** pointer comparison, not a registry lookup by name (the hot path); a
** closed object (after __close or __gc) raises "<type> is closed" instead
** of silently allocating again.
*/

/*
** Create the metatable 'tname' in the registry (or refill it when the
** module is loaded again in the same state, so it points at this copy)
** with the metamethods 'meta' and, unless 'methods' is NULL, __index =
** a table of 'methods'. Each method gets as upvalues the 'nup' values on
** top of the stack, then the metatable itself (upvalue nup + 1). Pops
** the 'nup' values.
*/
static void ud_newmeta (lua_State *L, const char *tname, const luaL_Reg *meta,
                        const luaL_Reg *methods, int nup) {
  int base = lua_gettop(L) - nup, i;
  luaL_newmetatable(L, tname);            /* base + nup + 1 */
  luaL_setfuncs(L, meta, 0);
  if (methods != NULL) {
    lua_newtable(L);
    for (i = 1; i <= nup; i++) lua_pushvalue(L, base + i);
    lua_pushvalue(L, base + nup + 1);     /* the metatable */
    luaL_setfuncs(L, methods, nup + 1);
    lua_setfield(L, -2, "__index");
  }
  lua_settop(L, base);
}


/*
** A type whose constructor 'ctor' keeps the metatable as its upvalue 1
** (the common case of ud_newmeta, with no upvalues of the methods' own),
** published as field 'name' of the module table on top.
*/
static void ud_newtype (lua_State *L, const char *tname, const luaL_Reg *meta,
                        const luaL_Reg *methods, lua_CFunction ctor,
                        const char *name) {
  ud_newmeta(L, tname, meta, methods, 0);   /* methods: upvalue 1 */
  luaL_getmetatable(L, tname);
  lua_pushcclosure(L, ctor, 1);
  lua_setfield(L, -2, name);
}


/*
** Mark the object at 'h' usable as a 'tname' for ud_check's fast path.
** 'tname' must be the one address the type's methods pass to ud_check
** (a static array, not a literal that may or may not be merged). Called
** once the object is complete, after its metatable (with __gc) is set:
** so every object so marked is closed by ud_close before its memory is
** freed, and stale memory never carries a mark.
*/
static inline void ud_open (UdHead *h, const char *tname) {
  h->open = tname;
}


/* clear the mark (in __gc and __close) and set 'closed' */
static inline void ud_close (UdHead *h) {
  h->open = NULL;
  h->closed = 1;
}


/*
** The object of type 'tname' at argument 1 of a method; 'mt' is the
** (pseudo-)index of its metatable. Raises for a wrong type and for a
** closed object.
** Fast path: a full userdata (a light one has no length) big enough to
** hold a UdHead whose mark is 'tname': only ud_open writes the mark,
** and only into an object of that type. Everything else (types that do
** not mark, closed objects, foreign userdata, other values) takes the
** metatable check, which raises as it always did.
*/
static void *ud_check (lua_State *L, int mt, const char *tname) {
  UdHead *h = (UdHead *)lua_touserdata(L, 1);
  int ok = 0;
  if (jr_likely(h != NULL && lua_rawlen(L, 1) >= sizeof(UdHead) &&
                h->open == tname))
    return h;
  if (h != NULL && lua_getmetatable(L, 1)) {
    ok = lua_rawequal(L, -1, mt);
    lua_pop(L, 1);
  }
  if (jr_unlikely(!ok)) h = (UdHead *)luaL_checkudata(L, 1, tname);
  if (jr_unlikely(h->closed)) luaL_error(L, "%s is closed", tname);
  return h;
}


/*
** Raise for a key of the options table at 'opts' that is not in 'known'
** (NULL-terminated); 'what' names the constructor in the message.
*/
static void ud_checkoptions (lua_State *L, int opts, const char *const *known,
                             const char *what) {
  lua_pushnil(L);
  while (lua_next(L, opts)) {
    int i, ok = 0;
    const char *k = (lua_type(L, -2) == LUA_TSTRING) ? lua_tostring(L, -2) : "?";
    for (i = 0; known[i] != NULL; i++) ok |= (strcmp(known[i], k) == 0);
    if (!ok) luaL_error(L, "unknown %s option '%s'", what, k);
    lua_pop(L, 1);
  }
}
