/*
** tolua.c — JSON values to Lua values. The text was already validated by
** scan.c (grammar, UTF-8, depth), so cJSON only builds the tree here;
** the tree is parked in a slot owned by a userdata until it is freed,
** so a memory error while pushing Lua values cannot leak it.
*/
#include <cjson/cJSON.h>

#define MAX_SAFE_INT  9007199254740992.0   /* 2^53 */


static void push_number (lua_State *L, double d) {
#if !defined(JR_NO_INTEGERS)
  if (d >= -MAX_SAFE_INT && d <= MAX_SAFE_INT && d == (double)(lua_Integer)d) {
    lua_pushinteger(L, (lua_Integer)d);
    return;
  }
#endif
  lua_pushnumber(L, (lua_Number)d);
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
    else if (c == '-' || isdigit_(c)) {
      const char *s = p;
      while (p < e && (isdigit_(*p) || *p == '-' || *p == '+' || *p == '.' ||
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
        memchr(s, 'E', (size_t)(te - s)) == NULL && token_int64(s, te, &v)) {
      lua_pushinteger(L, (lua_Integer)v);
      return;
    }
  }
#else
  (void)k;
#endif
  push_number(L, d);
}


static void push_tree (lua_State *L, Tree *T, const cJSON *item) {
  switch (item->type & 0xFF) {
    case cJSON_False: lua_pushboolean(L, 0); break;
    case cJSON_True: lua_pushboolean(L, 1); break;
    case cJSON_NULL: lua_pushlightuserdata(L, NULL); break;
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
      break;
    }
  }
}


/*
** Push the Lua value of the validated JSON text [p, e). '*slot' keeps
** the cJSON tree alive only while it is being converted.
*/
static void push_json (lua_State *L, cJSON **slot, const char *p,
                       const char *e, int amt) {
  Tree T;
  /* scalars are cheap to do by hand and spare cJSON's allocations */
  switch (*p) {
    case 't': lua_pushboolean(L, 1); return;
    case 'f': lua_pushboolean(L, 0); return;
    case 'n': lua_pushlightuserdata(L, NULL); return;
    default: break;
  }
  if (*slot != NULL) { cJSON_Delete(*slot); *slot = NULL; }
  *slot = cJSON_ParseWithLengthOpts(p, (size_t)(e - p), NULL, 0);
  if (*slot == NULL) jr_nomem(L);
  T.amt = amt; T.k = 0; T.e = e; T.cur = p; T.curk = 0;
  push_tree(L, &T, *slot);
  cJSON_Delete(*slot);
  *slot = NULL;
}
