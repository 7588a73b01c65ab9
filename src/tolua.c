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


/* 'amt' is the stack index of core.array_mt */
static void push_tree (lua_State *L, const cJSON *item, int amt) {
  switch (item->type & 0xFF) {
    case cJSON_False: lua_pushboolean(L, 0); break;
    case cJSON_True: lua_pushboolean(L, 1); break;
    case cJSON_NULL: lua_pushlightuserdata(L, NULL); break;
    case cJSON_Number: push_number(L, item->valuedouble); break;
    case cJSON_String: lua_pushstring(L, item->valuestring); break;
    case cJSON_Array: {
      const cJSON *c;
      int i = 1;
      luaL_checkstack(L, 3, "nesting too deep");
      lua_createtable(L, child_count(item), 0);
      for (c = item->child; c != NULL; c = c->next) {
        push_tree(L, c, amt);
        lua_rawseti(L, -2, i++);
      }
      lua_pushvalue(L, amt);
      lua_setmetatable(L, -2);
      break;
    }
    default: {  /* cJSON_Object */
      const cJSON *c;
      luaL_checkstack(L, 3, "nesting too deep");
      lua_createtable(L, 0, child_count(item));
      for (c = item->child; c != NULL; c = c->next) {
        lua_pushstring(L, c->string);
        push_tree(L, c, amt);
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
  push_tree(L, *slot, amt);
  cJSON_Delete(*slot);
  *slot = NULL;
}
