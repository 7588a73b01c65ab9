/*
** pending.c — the pending-id table: matches responses to requests by id
** text (the exact JSON text of the id), with deadlines.
** Contract: CORE_API.md, section "Pending-id table".
**
** Four arrays, all from the state's allocator and freed in __gc:
**   ent[]     one PdEntry per slot; slot s lives in ent[s - 1].  A slot
**             does not move while its entry lives, so the Lua side can
**             keep waiters[slot] in a plain array.  Freed slots go on a
**             free list and are handed out again (last freed, first used).
**   bucket[]  hash heads (slot numbers, 0 = empty), chained through
**             PdEntry.chain.  A power of two >= capacity: load <= 1.
**   order[]   every live slot.  Positions [0, nheap) are a 4-ary
**   due[]     min-heap on deadline, the deadline of order[i] in due[i]
**             (heap moves then read one contiguous array, not scattered
**             entries); positions [nheap, count) hold the entries without
**             a deadline (they are not in the heap).  PdEntry.pos is the
**             entry's position, so removing any entry is O(log n) and
**             pop() takes the last position in O(1).
**
** Memory per pending entry (any platform, ids of at most 23 bytes, which
** covers every integer id): sizeof(PdEntry) 40 + order slot 4 + due slot 8
** + bucket head 4 = 56 bytes.  A longer id adds its length in a separate
** block.  Capacity doubles from 8 up to max_pending and never shrinks,
** and the bucket array is the power of two >= capacity, so the bytes
** held per live entry are 56 at best and about twice that right after a
** growth; stats() reports the actual amortized figure (bytes_per_entry).
**
** The helpers on the path of every call (hash, lookup, id check, sift-up,
** take) are 'static inline': each has two callers, and as a call each
** saved and restored registers its caller had saved already
** (bench/pending_bench.lua measures the table's own instructions).
*/


/* an array, not a literal: its one address is the table's ud_open mark */
static const char PD_TNAME[] = "jrpc.Pending";
#define PD_DEFMAX     100000        /* default max_pending */
#define PD_MAXMAX     0x7fffffffu   /* slots and positions fit a uint32 */
#define PD_MAXIDLEN   0x7fffffffu   /* key length fits a uint32 */
#define PD_INITCAP    8
#define PD_SHORTKEY   23            /* longest key kept inline */
#define PD_STACKKEY   256           /* longest key a take copies to the stack */
#define PD_FREE       0xffffffffu   /* 'pos' of a free slot */


typedef struct PdEntry {
  uint32_t hash;      /* full hash: cheap mismatch test, rehash on growth */
  uint32_t chain;     /* next slot in the bucket, or in the free list */
  uint32_t pos;       /* index in 'order'; PD_FREE when the slot is free */
  uint32_t len;       /* key length */
  union {
    char in[PD_SHORTKEY + 1];  /* short key, NUL-terminated like Lua's */
    char *out;                 /* long key, a block of exactly 'len' bytes */
  } key;
} PdEntry;


typedef struct PdTable {
  UdHead h;           /* h.closed: set by __gc */
  PdEntry *ent;       /* 'cap' entries */
  uint32_t *order;    /* 'cap' positions: heap first, then the rest */
  double *due;        /* 'cap' deadlines, meaningful in [0, nheap) */
  uint32_t *bucket;   /* 'nbucket' hash heads */
  size_t keybytes;    /* bytes held by long keys */
  size_t unmatched;   /* settle() of an unknown (or late) id */
  size_t settled;     /* settle() that found its entry */
  size_t expired;     /* entries returned by next_expired() */
  uint64_t gen;       /* bumped by every change (see pd_takeat) */
  uint32_t cap;       /* allocated entries (0 until the first add) */
  uint32_t nbucket;   /* power of two >= cap, or 0 */
  uint32_t used;      /* slots ever handed out: 1..used */
  uint32_t freelist;  /* a free slot <= used, 0 if none */
  uint32_t count;     /* live entries */
  uint32_t nheap;     /* live entries with a deadline */
  uint32_t max;       /* max_pending */
  uint32_t seed;      /* per-table hash seed */
} PdTable;


/* {======================================================
** Memory and errors
** ======================================================= */

/*
** Every block goes through the allocator of the state at hand, so a
** host that limits or counts memory sees ours too.
*/
static void *pd_realloc (lua_State *L, void *block, size_t osize,
                         size_t nsize) {
  void *ud;
  lua_Alloc f = lua_getallocf(L, &ud);
  return f(ud, block, osize, nsize);
}


static void pd_free (lua_State *L, void *block, size_t size) {
  if (block != NULL)
    pd_realloc(L, block, size, 0);
}




static int pd_typeerror (lua_State *L, int arg, const char *tname) {
  const char *msg = lua_pushfstring(L, "%s expected, got %s", tname,
                                    luaL_typename(L, arg));
  return luaL_argerror(L, arg, msg);
}


/* expected failures are values, not errors */
static int pd_fail (lua_State *L, const char *msg) {
  lua_pushnil(L);
  lua_pushstring(L, msg);
  return 2;
}

/* }====================================================== */


/* {======================================================
** Hash part
** ======================================================= */

#define pd_keyof(e)  ((e)->len > PD_SHORTKEY ? (e)->key.out : (e)->key.in)


/* murmur3's finalizer: spreads every input bit into the low bits */
static uint32_t pd_mix (uint32_t h) {
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  return h ^ (h >> 16);
}


/* the 8 (or 4) bytes at 'k', whatever their alignment: one load */
static uint64_t pd_word (const char *k) {
  uint64_t w;
  memcpy(&w, k, sizeof(w));
  return w;
}


static uint32_t pd_half (const char *k) {
  uint32_t w;
  memcpy(&w, k, sizeof(w));
  return w;
}


/* murmur3's 64-bit finalizer: every input bit reaches every output bit */
static uint64_t pd_mix64 (uint64_t h) {
  h ^= h >> 33;
  h *= UINT64_C(0xff51afd7ed558ccd);
  h ^= h >> 33;
  h *= UINT64_C(0xc4ceb9fe1a85ec53);
  return h ^ (h >> 33);
}


/*
** A word at a time, not a byte at a time: every integer id of up to 8
** digits is one word, so one mix.  A key of at most 8 bytes becomes a
** word that, with its length (mixed in too), determines it: 4 to 8 bytes
** as their first and last 4 (overlapping below 8), 1 to 3 bytes as
** their first, middle and last.  A longer key is mixed 8 bytes at a
** time, its last word overlapping the one before.  The mix matters:
** ids such as "17" and "18" differ in one byte and the bucket index
** takes the low bits.
*/
static inline uint32_t pd_hash (const PdTable *p, const char *key,
                                size_t len) {
  uint64_t h = ((uint64_t)p->seed << 32) ^ (uint64_t)len;
  uint64_t w;
  if (len > 8) {
    const char *last = key + len - 8;
    for (; key < last; key += 8)
      h = pd_mix64(h ^ pd_word(key));
    w = pd_word(last);
  }
  else if (len >= 4)
    w = ((uint64_t)pd_half(key) << 32) | pd_half(key + len - 4);
  else if (len > 0)
    w = ((uint64_t)(unsigned char)key[0] << 16)
      | ((uint64_t)(unsigned char)key[len / 2] << 8)
      | (unsigned char)key[len - 1];
  else
    w = 0;
  return (uint32_t)pd_mix64(h ^ w);
}


/*
** Returns the link (bucket head or 'chain' field) that holds the entry
** with this key, so the caller can unlink it without a second walk;
** NULL when absent.
*/
static inline uint32_t *pd_find (PdTable *p, const char *key, size_t len,
                                 uint32_t h) {
  uint32_t *link;
  if (p->nbucket == 0)
    return NULL;
  link = &p->bucket[h & (p->nbucket - 1)];
  while (*link != 0) {
    PdEntry *e = &p->ent[*link - 1];
    if (e->hash == h && e->len == len && memcmp(pd_keyof(e), key, len) == 0)
      return link;
    link = &e->chain;
  }
  return NULL;
}


/* }====================================================== */


/* {======================================================
** Order part: deadline heap followed by the undated entries
** ======================================================= */

static void pd_place (PdTable *p, uint32_t i, uint32_t s) {
  p->order[i] = s;
  p->ent[s - 1].pos = i;
}


static void pd_hplace (PdTable *p, uint32_t i, uint32_t s, double d) {
  p->due[i] = d;
  pd_place(p, i, s);
}


/*
** The heap is 4-ary: the children of position i are 4i+1 .. 4i+4, its
** parent (i - 1) / 4.  Half the depth of a binary heap, so an expiry
** moves half as many entries (each move writes a scattered PdEntry.pos),
** while the earliest of four siblings is found in one contiguous run of
** 'due'.
*/
#define pd_parent(i)  (((i) - 1) / 4)


/* put slot 's' with deadline 'd' in the hole at 'i', moving it up */
static inline void pd_siftup (PdTable *p, uint32_t i, uint32_t s, double d) {
  while (i > 0) {
    uint32_t parent = pd_parent(i);
    if (!(d < p->due[parent]))
      break;
    pd_hplace(p, i, p->order[parent], p->due[parent]);  /* parent down */
    i = parent;
  }
  pd_hplace(p, i, s, d);
}


/* put slot 's' with deadline 'd' in the hole at 'i', moving it down */
static void pd_siftdown (PdTable *p, uint32_t i, uint32_t s, double d) {
  const double *due = p->due;
  uint32_t n = p->nheap;
  /* i < lim means 4i + 1 < n, without computing 4i (no overflow) */
  uint32_t lim = (n + 2) / 4;
  while (i < lim) {
    uint32_t c = 4 * i + 1, m = c;  /* c < n */
    double md = due[c];
    if (jr_likely(c + 3 < n)) {  /* four children */
      if (due[c + 1] < md) md = due[m = c + 1];
      if (due[c + 2] < md) md = due[m = c + 2];
      if (due[c + 3] < md) md = due[m = c + 3];
    }
    else {  /* the last parent may have fewer */
      for (c++; c < n; c++)
        if (due[c] < md) md = due[m = c];
    }
    if (!(md < d))
      break;
    pd_hplace(p, i, p->order[m], md);  /* the earliest child moves up */
    i = m;
  }
  pd_hplace(p, i, s, d);
}


static void pd_enorder (PdTable *p, uint32_t s, int dated, double d) {
  uint32_t i = p->count++;
  if (dated) {
    if (i != p->nheap)  /* make room: first undated entry goes to the end */
      pd_place(p, i, p->order[p->nheap]);
    pd_siftup(p, p->nheap++, s, d);
  }
  else
    pd_place(p, i, s);
}


/*
** Take out the entry at position 'i'.  A heap entry is replaced by the
** heap's last one, which moves the hole to the border of the two parts;
** then the last live entry fills the hole, so both parts stay contiguous.
*/
static void pd_unorder (PdTable *p, uint32_t i) {
  if (i < p->nheap) {
    uint32_t last = --p->nheap;
    if (i != last) {
      uint32_t s = p->order[last];
      double d = p->due[last];
      if (i > 0 && d < p->due[pd_parent(i)])
        pd_siftup(p, i, s, d);
      else
        pd_siftdown(p, i, s, d);
    }
    i = last;
  }
  if (i != --p->count)
    pd_place(p, i, p->order[p->count]);
}

/* }====================================================== */


/* {======================================================
** Slots, growth and removal
** ======================================================= */

static uint32_t pd_newslot (PdTable *p) {
  uint32_t s = p->freelist;
  if (s != 0)
    p->freelist = p->ent[s - 1].chain;
  else
    s = ++p->used;
  return s;
}


static uint32_t pd_nextcap (const PdTable *p) {
  if (p->cap == 0)
    return (p->max < PD_INITCAP) ? p->max : PD_INITCAP;
  return (p->cap > p->max / 2) ? p->max : 2 * p->cap;
}


/*
** Called only when every slot is live (count == used == cap).  All new
** blocks are obtained before anything changes: 'order', 'due' and
** 'bucket' are fresh, 'ent' is reallocated last (a failed realloc keeps
** the old block), so a failure leaves the whole table as it was.
*/
static void pd_grow (lua_State *L, PdTable *p) {
  uint32_t ncap = pd_nextcap(p);
  uint32_t nb = (p->nbucket == 0) ? 1 : p->nbucket;
  uint32_t *order, *bucket;
  double *due;
  PdEntry *ent = NULL;
  uint32_t i;
  while (nb < ncap)
    nb *= 2;
  order = (uint32_t *)pd_realloc(L, NULL, 0, ncap * sizeof(uint32_t));
  due = (double *)pd_realloc(L, NULL, 0, ncap * sizeof(double));
  bucket = (uint32_t *)pd_realloc(L, NULL, 0, nb * sizeof(uint32_t));
  if (order != NULL && due != NULL && bucket != NULL)
    ent = (PdEntry *)pd_realloc(L, p->ent, p->cap * sizeof(PdEntry),
                                ncap * sizeof(PdEntry));
  if (jr_unlikely(ent == NULL)) {
    pd_free(L, order, ncap * sizeof(uint32_t));
    pd_free(L, due, ncap * sizeof(double));
    pd_free(L, bucket, nb * sizeof(uint32_t));
    buf_nomem(L);
  }
  /* commit */
  if (p->count > 0)
    memcpy(order, p->order, p->count * sizeof(uint32_t));
  if (p->nheap > 0)
    memcpy(due, p->due, p->nheap * sizeof(double));
  pd_free(L, p->order, p->cap * sizeof(uint32_t));
  pd_free(L, p->due, p->cap * sizeof(double));
  pd_free(L, p->bucket, p->nbucket * sizeof(uint32_t));
  memset(bucket, 0, nb * sizeof(uint32_t));
  p->ent = ent;
  p->order = order;
  p->due = due;
  p->bucket = bucket;
  p->cap = ncap;
  p->nbucket = nb;
  p->gen++;  /* the blocks moved, even if the add then fails */
  for (i = 0; i < p->count; i++) {  /* every slot is live: rehash in turn */
    uint32_t *head = &bucket[ent[i].hash & (nb - 1)];
    ent[i].chain = *head;
    *head = i + 1;
  }
}


/*
** Free slot 's', already unlinked from its bucket.  Nothing here can
** raise, so callers push their results before calling it.
*/
static void pd_release (lua_State *L, PdTable *p, uint32_t s) {
  PdEntry *e = &p->ent[s - 1];
  pd_unorder(p, e->pos);
  if (e->len > PD_SHORTKEY) {
    pd_free(L, e->key.out, e->len);
    p->keybytes -= e->len;
  }
  e->pos = PD_FREE;
  e->chain = p->freelist;
  p->freelist = s;
  p->gen++;
}


/* unlink slot 's', reached by position rather than by key */
static void pd_unhash (PdTable *p, uint32_t s) {
  uint32_t *link = &p->bucket[p->ent[s - 1].hash & (p->nbucket - 1)];
  while (*link != s)
    link = &p->ent[*link - 1].chain;
  *link = p->ent[s - 1].chain;
}


/*
** Push slot and id of the entry at the heap top when 'expiry' is set
** (if due by 'now'), else of the entry at the last position, then remove
** it.  Pushing the id may raise (the table is then intact) or run a
** finalizer that uses this very table; 'gen' tells whether one did, so
** the common case re-checks nothing: when the table changed (or was
** closed), the pushed values are dropped and we start over.
** The id is pushed from a copy of our own: LuaJIT's lua_pushlstring runs
** the GC step, and so any finalizer, before it reads the bytes, and a
** finalizer may free the key block (settle, close) or move the entries
** (add).  The copy is on the C stack, or for a key longer than
** PD_STACKKEY (rare) in a userdata anchored on the Lua stack.
*/
static inline int pd_takeat (lua_State *L, PdTable *p, int expiry,
                             double now) {
  for (;;) {
    char buf[PD_STACKKEY];
    const char *key = buf;
    uint32_t s, len;
    uint64_t gen = p->gen;
    int copies = 0;  /* userdata copies pushed */
    PdEntry *e;
    if (expiry ? (p->nheap == 0 || !(p->due[0] <= now)) : p->count == 0)
      return 0;
    s = p->order[expiry ? 0 : p->count - 1];
    e = &p->ent[s - 1];
    len = e->len;
    if (len <= PD_SHORTKEY)
      memcpy(buf, e->key.in, sizeof(e->key.in));  /* fixed size: no call */
    else if (len <= PD_STACKKEY)
      memcpy(buf, e->key.out, len);
    else {
      char *u = (char *)lua_newuserdatauv(L, len, 0);  /* may run Lua code */
      copies = 1;
      if (jr_unlikely(p->gen != gen || p->h.closed)) {
        lua_pop(L, 1);
        continue;
      }
      memcpy(u, p->ent[s - 1].key.out, len);  /* unchanged: 'e' is valid */
      key = u;
    }
    lua_pushinteger(L, (lua_Integer)s);  /* no allocation, no GC step */
    lua_pushlstring(L, key, len);  /* may run Lua code */
    if (jr_likely(p->gen == gen && !p->h.closed)) {
      pd_unhash(p, s);
      pd_release(L, p, s);
      if (copies)
        lua_remove(L, -3);  /* the copy; no allocation */
      return 2;
    }
    lua_pop(L, 2 + copies);  /* a finalizer changed the table: look again */
  }
}

/* }====================================================== */


/* {======================================================
** Arguments
** ======================================================= */

/*
** Methods carry the metatable as upvalue 1: checking the type is then a
** pointer comparison, not a registry lookup by name (hot path).
*/
#define pd_check(L)  ((PdTable *)ud_check(L, lua_upvalueindex(1), PD_TNAME))


/*
** An id is its JSON text (a rawid, a Lua string), or a Lua integer that
** stands for its own text: 2 is the id "2" (what core.rawid(2) gives),
** read into 'tmp' (NUM_IDTEXT bytes) without making a string.
*/
static inline const char *pd_checkid (lua_State *L, int arg, size_t *len, char *tmp) {
  const char *s;
  if (lua_type(L, arg) != LUA_TSTRING) {
    *len = num_idtext(L, arg, tmp);
    if (*len == 0) pd_typeerror(L, arg, "string or integer");
    return tmp;
  }
  s = lua_tolstring(L, arg, len);
  luaL_argcheck(L, *len <= PD_MAXIDLEN, arg, "id too long");
  return s;
}


/*
** A real number (no numeric strings); NaN would break the heap order.
** 'type' is lua_type(L, arg), which pending_add needs anyway.
*/
static double pd_checktime (lua_State *L, int arg, int type) {
  double d;
  if (type != LUA_TNUMBER)
    pd_typeerror(L, arg, "number");
  d = (double)lua_tonumber(L, arg);
  luaL_argcheck(L, d == d, arg, "time is NaN");
  return d;
}


static uint32_t pd_optmax (lua_State *L, int arg) {
  lua_Number n;
  if (lua_isnoneornil(L, arg))
    return PD_DEFMAX;
  if (lua_type(L, arg) != LUA_TTABLE)
    pd_typeerror(L, arg, "table");
  lua_getfield(L, arg, "max_pending");
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    return PD_DEFMAX;
  }
  if (lua_type(L, -1) != LUA_TNUMBER)
    luaL_argerror(L, arg, lua_pushfstring(L,
                  "max_pending: number expected, got %s",
                  luaL_typename(L, -1)));
  n = lua_tonumber(L, -1);
  lua_pop(L, 1);
  if (!(n >= 1 && n <= PD_MAXMAX && (lua_Number)(uint32_t)n == n
        && n <= (lua_Number)((size_t)-1 / sizeof(PdEntry))))  /* 32 bits */
    luaL_argerror(L, arg, lua_pushfstring(L,
                  "max_pending must be an integer in [1, %d]",
                  (int)PD_MAXMAX));
  return (uint32_t)n;
}

/* }====================================================== */


/* {======================================================
** Methods
** ======================================================= */

/***
** p:add(rawid [, deadline]) -> slot      (rawid: text, or an integer)
**                           | nil, "duplicate id"
**                           | nil, "too many pending requests"
*/
static int pending_add (lua_State *L) {
  PdTable *p = pd_check(L);
  size_t len;
  char tmp[NUM_IDTEXT];
  const char *key = pd_checkid(L, 2, &len, tmp);
  int t = lua_type(L, 3);
  int dated = (t != LUA_TNONE && t != LUA_TNIL);
  double d = dated ? pd_checktime(L, 3, t) : 0;
  uint32_t h = pd_hash(p, key, len);
  char *out = NULL;
  uint32_t s, *head;
  PdEntry *e;
  if (pd_find(p, key, len, h) != NULL)
    return pd_fail(L, "duplicate id");
  if (p->count >= p->max)
    return pd_fail(L, "too many pending requests");
  if (p->freelist == 0 && p->used == p->cap)
    pd_grow(L, p);
  if (len > PD_SHORTKEY) {
    out = (char *)pd_realloc(L, NULL, 0, len);
    if (jr_unlikely(out == NULL))
      buf_nomem(L);
    memcpy(out, key, len);
  }
  /* from here on nothing can fail */
  s = pd_newslot(p);
  e = &p->ent[s - 1];
  e->hash = h;
  e->len = (uint32_t)len;
  if (out != NULL) {
    e->key.out = out;
    p->keybytes += len;
  }
  else {
    memcpy(e->key.in, key, len);
    e->key.in[len] = '\0';
  }
  head = &p->bucket[h & (p->nbucket - 1)];
  e->chain = *head;
  *head = s;
  pd_enorder(p, s, dated, d);
  p->gen++;
  lua_pushinteger(L, (lua_Integer)s);
  return 1;
}


/* settle and cancel differ only in what they count */
static int pd_remove (lua_State *L, int counted) {
  PdTable *p = pd_check(L);
  size_t len;
  char tmp[NUM_IDTEXT];
  const char *key = pd_checkid(L, 2, &len, tmp);
  uint32_t *link = pd_find(p, key, len, pd_hash(p, key, len));
  uint32_t s;
  if (link == NULL) {
    if (counted)
      p->unmatched++;
    lua_pushnil(L);
    return 1;
  }
  s = *link;
  *link = p->ent[s - 1].chain;  /* unhash through the link we hold */
  pd_release(L, p, s);
  if (counted)
    p->settled++;
  lua_pushinteger(L, (lua_Integer)s);
  return 1;
}


/***
** p:settle(rawid) -> slot | nil   (nil counts as unmatched)
*/
static int pending_settle (lua_State *L) {
  return pd_remove(L, 1);
}


/***
** p:cancel(rawid) -> slot | nil   (not counted)
*/
static int pending_cancel (lua_State *L) {
  return pd_remove(L, 0);
}


/***
** p:next_expired(now) -> slot, rawid | nothing
*/
static int pending_next_expired (lua_State *L) {
  PdTable *p = pd_check(L);
  double now = pd_checktime(L, 2, lua_type(L, 2));
  if (pd_takeat(L, p, 1, now) == 0)
    return 0;
  p->expired++;
  return 2;
}


/***
** p:next_deadline() -> earliest deadline | nil
*/
static int pending_next_deadline (lua_State *L) {
  PdTable *p = pd_check(L);
  if (p->nheap == 0)
    lua_pushnil(L);
  else
    lua_pushnumber(L, (lua_Number)p->due[0]);
  return 1;
}


/***
** p:pop() -> slot, rawid | nothing
** Takes the last position: an undated entry, or the heap's last leaf,
** so draining a table on close costs O(1) per entry.
*/
static int pending_pop (lua_State *L) {
  return pd_takeat(L, pd_check(L), 0, 0);
}


/***
** p:count() -> number pending
*/
static int pending_count (lua_State *L) {
  PdTable *p = pd_check(L);
  lua_pushinteger(L, (lua_Integer)p->count);
  return 1;
}


static size_t pd_bytes (const PdTable *p) {
  return (size_t)p->cap * (sizeof(PdEntry) + sizeof(uint32_t) + sizeof(double))
       + (size_t)p->nbucket * sizeof(uint32_t) + p->keybytes;
}


static void pd_setint (lua_State *L, const char *k, size_t v) {
  lua_pushinteger(L, (lua_Integer)v);
  lua_setfield(L, -2, k);
}


/***
** p:stats() -> {pending=, unmatched=, settled=, expired=, max_pending=,
**               capacity=, bytes=, bytes_per_entry=}
** 'bytes' counts every block this table holds; 'bytes_per_entry' is
** bytes / pending (0 when empty).
*/
static int pending_stats (lua_State *L) {
  PdTable *p = pd_check(L);
  size_t bytes = pd_bytes(p);
  lua_createtable(L, 0, 8);
  pd_setint(L, "pending", p->count);
  pd_setint(L, "unmatched", p->unmatched);
  pd_setint(L, "settled", p->settled);
  pd_setint(L, "expired", p->expired);
  pd_setint(L, "max_pending", p->max);
  pd_setint(L, "capacity", p->cap);
  pd_setint(L, "bytes", bytes);
  lua_pushnumber(L, p->count ? (lua_Number)bytes / p->count : 0);
  lua_setfield(L, -2, "bytes_per_entry");
  return 1;
}


static int pending_tostring (lua_State *L) {
  PdTable *p = (PdTable *)luaL_checkudata(L, 1, PD_TNAME);
  lua_pushfstring(L, "%s (%d/%d): %p", PD_TNAME, (int)p->count,
                  (int)p->max, (void *)p);
  return 1;
}


/* idempotent: a resurrected table is marked closed and holds nothing */
static int pending_gc (lua_State *L) {
  PdTable *p = (PdTable *)luaL_checkudata(L, 1, PD_TNAME);
  uint32_t i;
  if (p->h.closed)
    return 0;
  for (i = 0; i < p->count; i++) {
    PdEntry *e = &p->ent[p->order[i] - 1];
    if (e->len > PD_SHORTKEY)
      pd_free(L, e->key.out, e->len);
  }
  pd_free(L, p->ent, p->cap * sizeof(PdEntry));
  pd_free(L, p->order, p->cap * sizeof(uint32_t));
  pd_free(L, p->due, p->cap * sizeof(double));
  pd_free(L, p->bucket, p->nbucket * sizeof(uint32_t));
  memset(p, 0, sizeof(*p));
  ud_close(&p->h);
  return 0;
}


/***
** core.pending{max_pending = 100000} -> a new, empty pending table
** Nothing is allocated until the first add, so a failure while
** building the userdata cannot leak.
*/
static int pending_new (lua_State *L) {
  uint32_t max = pd_optmax(L, 1);
  PdTable *p = (PdTable *)lua_newuserdatauv(L, sizeof(PdTable), 0);
  memset(p, 0, sizeof(*p));
  p->max = max;
  /* not a secret (ids are our own); it only keeps tables apart */
  p->seed = pd_mix((uint32_t)(uintptr_t)p ^ 0x9e3779b9u);
  luaL_getmetatable(L, PD_TNAME);
  lua_setmetatable(L, -2);
  ud_open(&p->h, PD_TNAME);   /* complete: its methods may take it */
  return 1;
}

/* }====================================================== */


static const luaL_Reg pending_methods[] = {
  {"add", pending_add},
  {"settle", pending_settle},
  {"cancel", pending_cancel},
  {"next_expired", pending_next_expired},
  {"next_deadline", pending_next_deadline},
  {"pop", pending_pop},
  {"count", pending_count},
  {"stats", pending_stats},
  {NULL, NULL}
};


static const luaL_Reg pending_metamethods[] = {
  {"__gc", pending_gc},
  {"__close", pending_gc},
  {"__tostring", pending_tostring},
  {NULL, NULL}
};


/* module table on top; the metatable is upvalue 1 of every method */
static void pd_open (lua_State *L) {
  ud_newmeta(L, PD_TNAME, pending_metamethods, pending_methods, 0);
  lua_pushcfunction(L, pending_new);
  lua_setfield(L, -2, "pending");
}
