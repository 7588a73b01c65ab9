/*
** tolua.c — JSON values to Lua values: every Lua value a decode makes is
** pushed here. The text was already validated by scan.c (grammar, UTF-8,
** depth), so nothing here checks it again. Envelope strings (methods,
** ids) are unescaped by hand; other values are built by cJSON, whose
** tree is parked in a slot owned by a userdata until it is freed, so a
** memory error while pushing Lua values cannot leak it.
*/

/*
** Decode the JSON string token [p, e) (quotes included, already
** validated) into 'b'. Used for envelope strings only (method, ids);
** values go through cJSON.
*/
static void tolua_unescape (lua_State *L, Buf *b, const char *p,
                            const char *e) {
  p++; e--;  /* drop the quotes */
  b->n = 0;
  while (p < e) {
    const char *q = p;
    while (q < e && *q != '\\') q++;
    buf_add(L, b, p, (size_t)(q - p));
    if (q >= e) break;
    switch (q[1]) {
      case 'b': buf_addc(L, b, '\b'); p = q + 2; break;
      case 'f': buf_addc(L, b, '\f'); p = q + 2; break;
      case 'n': buf_addc(L, b, '\n'); p = q + 2; break;
      case 'r': buf_addc(L, b, '\r'); p = q + 2; break;
      case 't': buf_addc(L, b, '\t'); p = q + 2; break;
      case 'u': {
        unsigned long cp = (unsigned long)scan_hex4(q + 2);
        char u[4];
        int n;
        p = q + 6;
        if (cp >= 0xD800 && cp <= 0xDBFF) {  /* validated pair */
          cp = 0x10000 + ((cp - 0xD800) << 10) + ((unsigned long)scan_hex4(q + 8) - 0xDC00);
          p = q + 12;
        }
        if (cp < 0x80) { u[0] = (char)cp; n = 1; }
        else if (cp < 0x800) {
          u[0] = (char)(0xC0 | (cp >> 6)); u[1] = (char)(0x80 | (cp & 0x3F));
          n = 2;
        }
        else if (cp < 0x10000) {
          u[0] = (char)(0xE0 | (cp >> 12));
          u[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
          u[2] = (char)(0x80 | (cp & 0x3F));
          n = 3;
        }
        else {
          u[0] = (char)(0xF0 | (cp >> 18));
          u[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
          u[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
          u[3] = (char)(0x80 | (cp & 0x3F));
          n = 4;
        }
        buf_add(L, b, u, (size_t)n);
        break;
      }
      default: buf_addc(L, b, q[1]); p = q + 2; break;  /* " \ / */
    }
  }
}


/* push the Lua string of a validated JSON string token */
static void tolua_string (lua_State *L, Buf *scratch, const char *p,
                          const char *e) {
  if (memchr(p, '\\', (size_t)(e - p)) == NULL)
    lua_pushlstring(L, p + 1, (size_t)(e - p - 2));
  else {
    tolua_unescape(L, scratch, p, e);
    lua_pushlstring(L, scratch->p, scratch->n);
  }
}


static int child_count (const cJSON *item) {
  int n = 0;
  const cJSON *c;
  for (c = item->child; c != NULL; c = c->next) n++;
  return n;
}


/* a tree being pushed, with the text it was parsed from */
typedef struct Tree {
  int amt;             /* stack index of core.array_mt */
  int null;            /* stack index of the value for JSON null; 0: core.null */
  int emt;             /* stack index of the empty objects' metatable, or 0 */
  int k;               /* number nodes pushed so far */
  const char *e;       /* end of the text */
  const char *cur;     /* where to look for number token 'curk' */
  int curk;
} Tree;


/*
** The k-th number token of the text (counted from 0): cJSON keeps members
** and elements in text order (duplicates included), so the k-th number
** node in tree order is the k-th number token. Strings are skipped, so
** digits inside them do not count. Lookups only go forward.
*/
#if !defined(JR_NO_INTEGERS)
static const char *number_token (Tree *T, int k, const char **te) {
  const char *p = T->cur, *e = T->e;
  int i = T->curk;
  while (p < e) {
    char c = *p;
    if (c == '"') {
      for (p++; p < e && *p != '"'; p++)
        if (*p == '\\') p++;
      p++;
    }
    else if (c == '-' || num_isdigit(c)) {
      const char *s = p;
      while (p < e && (num_isdigit(*p) || *p == '-' || *p == '+' || *p == '.' ||
                       *p == 'e' || *p == 'E')) p++;
      if (i++ == k) { T->cur = p; T->curk = i; *te = p; return s; }
    }
    else p++;
  }
  return NULL;  /* not reached: the tree came from this text */
}
#endif


/*
** A number node. A double from ±2^53 on may have lost digits: if its token
** is an integer that fits 64 bits, push that exact integer instead (the
** rare case is the only one that pays for finding the token).
*/
static void push_tree_number (lua_State *L, Tree *T, double d) {
  int k = T->k++;
#if !defined(JR_NO_INTEGERS)
  if (jr_unlikely(fabs(d) >= MAX_SAFE_INT && fabs(d) <= 9223372036854775808.0)) {
    const char *te, *s = number_token(T, k, &te);
    long long v;
    if (s != NULL && memchr(s, '.', (size_t)(te - s)) == NULL &&
        memchr(s, 'e', (size_t)(te - s)) == NULL &&
        memchr(s, 'E', (size_t)(te - s)) == NULL && num_token_int64(s, te, &v)) {
      lua_pushinteger(L, (lua_Integer)v);
      return;
    }
  }
#else
  (void)k;
#endif
  num_push(L, d);
}


/* JSON null: core.null, or the caller's value (a codec's option 'null') */
static void push_null (lua_State *L, int null) {
  if (null == 0) lua_pushlightuserdata(L, NULL);
  else lua_pushvalue(L, null);
}


static void push_tree (lua_State *L, Tree *T, const cJSON *item) {
  switch (item->type & 0xFF) {
    case cJSON_False: lua_pushboolean(L, 0); break;
    case cJSON_True: lua_pushboolean(L, 1); break;
    case cJSON_NULL: push_null(L, T->null); break;
    case cJSON_Number: push_tree_number(L, T, item->valuedouble); break;
    case cJSON_String: lua_pushstring(L, item->valuestring); break;
    case cJSON_Array: {
      const cJSON *c;
      int i = 1;
      luaL_checkstack(L, 3, "nesting too deep");
      lua_createtable(L, child_count(item), 0);
      for (c = item->child; c != NULL; c = c->next) {
        push_tree(L, T, c);
        lua_rawseti(L, -2, i++);
      }
      lua_pushvalue(L, T->amt);
      lua_setmetatable(L, -2);
      break;
    }
    default: {  /* cJSON_Object */
      const cJSON *c;
      luaL_checkstack(L, 3, "nesting too deep");
      lua_createtable(L, 0, child_count(item));
      for (c = item->child; c != NULL; c = c->next) {
        lua_pushstring(L, c->string);
        push_tree(L, T, c);
        lua_rawset(L, -3);
      }
      if (T->emt != 0 && item->child == NULL) {
        lua_pushvalue(L, T->emt);
        lua_setmetatable(L, -2);
      }
      break;
    }
  }
}


/* skip JSON whitespace */
static const char *flat_ws (const char *p, const char *e) {
  while (p < e && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
  return p;
}


/*
** Push the flat scalar at p (an integer of at most 15 digits, a string
** without escapes, true, false or null) and return the end of its token;
** NULL, with nothing pushed, for anything else (cJSON's case).
*/
static const char *flat_scalar (lua_State *L, const char *p, const char *e,
                                int null) {
  const char *s = p;
  if (*p == '"') {
    for (p++; p < e && *p != '"'; p++)
      if (*p == '\\') return NULL;
    lua_pushlstring(L, s + 1, (size_t)(p - s - 1));
    return p + 1;
  }
  if (*p == '-' || num_isdigit(*p)) {
    long long v;
    if (*p == '-') p++;
    while (p < e && num_isdigit(*p)) p++;
    if (p - s > 15 || (p < e && (*p == '.' || *p == 'e' || *p == 'E'))) return NULL;
    if (!num_token_int64(s, p, &v) || (v == 0 && *s == '-')) return NULL;  /* -0: a float */
    num_push(L, (double)v);
    return p;
  }
  switch (*p) {
    case 't': lua_pushboolean(L, 1); return p + 4;
    case 'f': lua_pushboolean(L, 0); return p + 5;
    case 'n': push_null(L, null); return p + 4;
    default: return NULL;
  }
}


/*
** The key cache, one per module instance (upvalues of the codec
** methods): the keys and method names every message repeats ("minuend",
** "uri", "tools/call") are pushed by a table read instead of
** lua_pushlstring, which hashes the
** bytes and compares them again in the string table. A table holds the
** strings (so the collector keeps them) and a userdata a copy of their
** bytes (so a lookup is a C comparison); a key goes to the slot its
** length and end bytes pick. Both change together, with no Lua code run
** in between (the store goes to the table's array part: no allocation),
** so a finalizer that reenters a decode and refills a slot leaves them
** agreeing. Keys longer than KEY_MAX are not kept: bounded memory. The
** userdata is an upvalue of the running method, so its block (KeyRef.K,
** fetched once per decode) stays where it is while the decode runs.
*/
#define KEY_SLOTS  32   /* a power of 2 */
#define KEY_MAX    32

struct KeyCache {
  unsigned char len[KEY_SLOTS];   /* 0: empty (an empty key is not kept) */
  char s[KEY_SLOTS][KEY_MAX];
};


/* push the key cache's two values */
static void tolua_keycache (lua_State *L) {
  KeyCache *K;
  lua_createtable(L, KEY_SLOTS, 0);   /* slots 1..KEY_SLOTS: array part */
  K = (KeyCache *)lua_newuserdatauv(L, sizeof(KeyCache), 0);
  memset(K, 0, sizeof(*K));
}


/*
** Are the 'len' (1..KEY_MAX) bytes at 'a' and 'b' the same? Compared a
** word at a time, the last word overlapping the one before it, so no
** load reaches past the key (a library memcmp call costs more than the
** comparison itself at these lengths).
*/
static int same_key (const char *a, const char *b, size_t len) {
  uint64_t x, y;
  uint32_t u, v;
  size_t i;
  if (len >= 8) {
    for (i = 0; i + 8 < len; i += 8) {
      memcpy(&x, a + i, 8); memcpy(&y, b + i, 8);
      if (x != y) return 0;
    }
    memcpy(&x, a + len - 8, 8); memcpy(&y, b + len - 8, 8);
    return x == y;
  }
  if (len >= 4) {
    memcpy(&u, a, 4); memcpy(&v, b, 4);
    if (u != v) return 0;
    memcpy(&u, a + len - 4, 4); memcpy(&v, b + len - 4, 4);
    return u == v;
  }
  for (i = 0; i < len; i++)
    if (a[i] != b[i]) return 0;
  return 1;
}


/* push the key [k, k + len) (no escapes), through the cache in 'kr' */
static inline void push_key (lua_State *L, KeyRef *kr, const char *k,
                             size_t len) {
  KeyCache *K;
  unsigned slot;
  if (kr == NULL || kr->table == 0 || len == 0 || len > KEY_MAX) {
    lua_pushlstring(L, k, len);
    return;
  }
  if ((K = kr->K) == NULL)   /* fetched once per decode */
    K = kr->K = (KeyCache *)lua_touserdata(L, kr->bytes);
  slot = (unsigned)(len * 7 + (unsigned char)k[0] +
                    (unsigned char)k[len - 1] * 3) & (KEY_SLOTS - 1);
  if (K->len[slot] == len && same_key(K->s[slot], k, len)) {
    lua_rawgeti(L, kr->table, (int)slot + 1);   /* a hit */
    return;
  }
  lua_pushlstring(L, k, len);   /* may run a finalizer that decodes */
  lua_pushvalue(L, -1);
  lua_rawseti(L, kr->table, (int)slot + 1);
  K->len[slot] = (unsigned char)len;
  memcpy(K->s[slot], k, len);
}


/* push the string [k, k + len) through the key cache (method names) */
static void tolua_key (lua_State *L, KeyRef *kr, const char *k, size_t len) {
  push_key(L, kr, k, len);
}


/*
** An array or object of flat scalars (the common params: [42, 23],
** {"a": 1, "b": "x"}), built without cJSON: no tree to allocate, no
** strtod. The text is validated, so only what is flat needs telling apart.
** 'emt': the metatable of an empty object, or 0; 'keys': the key cache,
** or NULL; 'size': its members or elements, or -1
** when not known. Returns 0, with the stack as
** it was, for anything else.
*/
static int tolua_flat (lua_State *L, const char *p, const char *e, int amt,
                       int null, int emt, KeyRef *keys, int size) {
  int top = lua_gettop(L), object = (*p == '{'), i = 1;
  /* unknown: room for the common few; a cap, as the table may be dropped */
  if (size < 0 || size > 64) size = (size < 0) ? 4 : 64;
  lua_createtable(L, object ? 0 : size, object ? size : 0);
  p = flat_ws(p + 1, e);
  while (p < e && *p != ']' && *p != '}') {
    if (object) {  /* "key": with no escapes */
      const char *k = p + 1;
      for (p = scan_plainrun(k, e); p < e && *p != '"'; p++)
        if (*p == '\\') goto not_flat;
      push_key(L, keys, k, (size_t)(p - k));
      p = flat_ws(p + 1, e) + 1;  /* the ':' */
      p = flat_ws(p, e);
    }
    if ((p = flat_scalar(L, p, e, null)) == NULL) goto not_flat;
    if (object) { lua_rawset(L, -3); i++; }  /* i - 1: members so far */
    else lua_rawseti(L, -2, i++);
    p = flat_ws(p, e);
    if (p < e && *p == ',') p = flat_ws(p + 1, e);
  }
  if (!object) {
    lua_pushvalue(L, amt);
    lua_setmetatable(L, -2);
  }
  else if (emt != 0 && i == 1) {  /* {}: marked the way the caller asked */
    lua_pushvalue(L, emt);
    lua_setmetatable(L, -2);
  }
  return 1;
not_flat:
  lua_settop(L, top);
  return 0;
}


/* push the value of a record's item (a scalar of the simple kinds) */
static void push_flat_item (lua_State *L, const FlatItem *it, int null) {
  const char *v = it->v;
  switch (*v) {
    case '"': lua_pushlstring(L, v + 1, (size_t)(it->ve - v - 2)); break;
    case 't': lua_pushboolean(L, 1); break;
    case 'f': lua_pushboolean(L, 0); break;
    case 'n': push_null(L, null); break;
    default: {  /* an integer of at most 15 digits: no overflow */
      const char *q = v + (*v == '-');
      long long n = 0;
      for (; q < it->ve; q++) n = n * 10 + (*q - '0');
      num_push(L, (double)(*v == '-' ? -n : n));
      break;
    }
  }
}


/*
** Push a container from the scanner's record 'R' (R->flat): its tokens
** are known and of the simple kinds, so nothing is read twice.
*/
static void push_record (lua_State *L, const FlatRec *R, int amt, int null,
                         int emt, KeyRef *keys) {
  int i, object = (*R->at == '{');
  lua_createtable(L, object ? 0 : R->n, object ? R->n : 0);
  for (i = 0; i < R->n; i++) {
    const FlatItem *it = &R->item[i];
    if (object) push_key(L, keys, it->k + 1, (size_t)(it->ke - it->k - 2));
    push_flat_item(L, it, null);
    if (object) lua_rawset(L, -3);
    else lua_rawseti(L, -2, i + 1);
  }
  if (!object) {
    lua_pushvalue(L, amt);
    lua_setmetatable(L, -2);
  }
  else if (emt != 0 && R->n == 0) {
    lua_pushvalue(L, emt);
    lua_setmetatable(L, -2);
  }
}


/*
** Push the Lua value of the validated JSON text [p, e). '*slot' keeps
** the cJSON tree alive only while it is being converted. 'null' is the
** stack index of the value to push for JSON null, or 0 for core.null;
** 'emt', of the metatable an empty object gets, or 0 for none (option
** empty_dict: Neovim's vim.empty_dict()); 'h': what the decode knows of the value (the key cache, the scanner's
** record, its size), or NULL.
*/
static void tolua_jsonk (lua_State *L, cJSON **slot, const char *p,
                         const char *e, int amt, int null, int emt,
                         const Hint *h) {
  Tree T;
  /* scalars are cheap to do by hand and spare cJSON's allocations */
  switch (*p) {
    case 't': lua_pushboolean(L, 1); return;
    case 'f': lua_pushboolean(L, 0); return;
    case 'n': push_null(L, null); return;
    case '[': case '{':
      if (h == NULL) {
        if (tolua_flat(L, p, e, amt, null, emt, NULL, -1)) return;
      }
      else if (h->rec != NULL && h->rec->flat) {
        push_record(L, h->rec, amt, null, emt, h->keys);
        return;
      }
      else if (tolua_flat(L, p, e, amt, null, emt, h->keys, h->size)) return;
      break;
    default:  /* a number or string result: the common reply */
      if (flat_scalar(L, p, e, null) != NULL) return;
      break;
  }
  if (*slot != NULL) { cJSON_Delete(*slot); *slot = NULL; }
  *slot = cJSON_ParseWithLengthOpts(p, (size_t)(e - p), NULL, 0);
  if (*slot == NULL) buf_nomem(L);
  T.amt = amt; T.null = null; T.emt = emt; T.k = 0; T.e = e; T.cur = p; T.curk = 0;
  push_tree(L, &T, *slot);
  cJSON_Delete(*slot);
  *slot = NULL;
}


/* tolua_jsonk without the key cache */
static void tolua_json (lua_State *L, cJSON **slot, const char *p,
                        const char *e, int amt, int null, int emt) {
  tolua_jsonk(L, slot, p, e, amt, null, emt, NULL);
}
