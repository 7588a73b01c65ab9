/*
** frame.c — push framers: bytes go in as they arrive, whole messages come
** out. Two framings: newline-delimited JSON (CRLF tolerated, blank lines
** skipped) and Content-Length headers as LSP uses them (header names in any
** case, other headers ignored, junk lines such as stray log output skipped).
** Memory stays bounded: a message over the limit is dropped as it streams
** in and reported once, and the stream stays in sync after it. Its first
** bytes (at most PEEK_BYTES) are kept long enough for frame_peek to tell
** whether it is a response and which id it carries: the event hands them
** over in [*mp, *me) (see frame_next).
*/

#define MAX_HEADER_LINE  8192
#define PEEK_BYTES  256   /* of a dropped message, read for its kind and id */
#define PEEK_ID     128   /* the longest id text frame_peek keeps */

/* Content-Length framing: 'dropping' is 2 while the first bytes of an
   oversized body are awaited (its event is reported once they are here) */
#define PEEKING  2

static void frame_init (Framer *F, int lsp, size_t max_bytes) {
  memset(F, 0, sizeof(*F));
  F->lsp = lsp;
  F->max_bytes = max_bytes;
  F->body = -1;
  F->clen = -1;
}


/* append input; drop what was consumed first so the buffer stays small */
static void frame_feed (lua_State *L, Framer *F, const char *s, size_t len) {
  if (F->off == F->in.n) F->in.n = F->off = 0;
  else if (F->off > 0 && F->off >= F->in.cap / 2) {
    memmove(F->in.p, F->in.p + F->off, F->in.n - F->off);
    F->in.n -= F->off;
    F->off = 0;
  }
  buf_fit(L, &F->in);  /* keeps [0, in.n): a fitted buffer holds more than that */
  buf_add(L, &F->in, s, len);
}


static int frame_event (FrameEvent *ev, int code, const char *msg, int reply,
                        const char *detail, size_t n) {
  ev->code = code;
  ev->msg = msg;
  ev->reply = reply;
  snprintf(ev->detail, sizeof(ev->detail), detail, (unsigned long)n);
  return FR_EVENT;
}


/* the one message text of an over-limit event (codec.c tells it so) */
static const char FRAME_TOO_LARGE[] = "Message too large";

/* the event for a message over the limit whose first bytes are [p, p + n) */
static int too_large (Framer *F, FrameEvent *ev, const char *p, size_t n,
                      const char **mp, const char **me) {
  if (n > PEEK_BYTES) n = PEEK_BYTES;
  *mp = p; *me = p + n;
  return frame_event(ev, JR_INVALID_REQUEST, FRAME_TOO_LARGE, 1,
                     "message larger than the limit of %lu bytes",
                     (unsigned long)F->max_bytes);
}


static int blank (const char *p, const char *e) {
  return scan_skipws(p, e) == e;
}


/* {====================== newline-delimited ====================== */

static int ndjson_next (Framer *F, const char **mp, const char **me,
                        FrameEvent *ev) {
  for (;;) {
    char *start = F->in.p + F->off, *end = F->in.p + F->in.n;
    char *nl = (start + F->scanned < end)
             ? memchr(start + F->scanned, '\n', (size_t)(end - start - F->scanned))
             : NULL;
    if (nl == NULL) {
      F->scanned = (size_t)(end - start);
      if (F->dropping) { F->off = F->in.n; F->scanned = 0; }
      else if (F->scanned > F->max_bytes) {  /* stop buffering it */
        F->dropping = 1;
        F->off = F->in.n; F->scanned = 0;
        /* its first max_bytes + 1 bytes are read, as when the line comes
           whole: what is found there does not depend on how bytes arrive
           (they stay where they are until the next feed) */
        return too_large(F, ev, start, F->max_bytes + 1, mp, me);
      }
      else if (F->eof && F->scanned > 0) {  /* last line without '\n' */
        F->off = F->in.n; F->scanned = 0;
        if (!blank(start, end)) { *mp = start; *me = end; return FR_MSG; }
      }
      return FR_MORE;
    }
    F->off = (size_t)(nl + 1 - F->in.p);
    F->scanned = 0;
    if (F->dropping) { F->dropping = 0; continue; }
    /* size first: a long line is too large even if blank, as it is while
       it streams in, so the events do not depend on how bytes arrive */
    if ((size_t)(nl - start) > F->max_bytes)
      return too_large(F, ev, start, F->max_bytes + 1, mp, me);
    if (blank(start, nl)) continue;
    *mp = start; *me = nl;
    return FR_MSG;
  }
}

/* }=============================================================== */


/* {====================== Content-Length ========================= */

static int lower (int c) { return (c >= 'A' && c <= 'Z') ? c + 32 : c; }

/* an RFC 7230 token character (header names) */
static int tchar (int c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || num_isdigit(c) ||
         (c != 0 && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}


/* parse a Content-Length value: digits with optional blanks around */
static long long parse_length (const char *p, const char *e) {
  long long v = 0;
  int digits = 0;
  while (p < e && (*p == ' ' || *p == '\t')) p++;
  while (p < e && num_isdigit(*p)) {
    if (v > (LLONG_MAX - 9) / 10) return -1;
    v = v * 10 + (*p++ - '0');
    digits++;
  }
  while (p < e && (*p == ' ' || *p == '\t')) p++;
  return (digits > 0 && p == e) ? v : -1;
}


/*
** One header line [p, e) without its line end. Returns 0 when the line
** is not a header at all (junk), 1 otherwise.
*/
static int header_line (Framer *F, const char *p, const char *e) {
  const char *c = p;
  static const char name[] = "content-length";
  while (c < e && tchar((unsigned char)*c)) c++;
  if (c == p || c >= e || *c != ':') return 0;
  if (c - p == (long)sizeof(name) - 1) {
    int i;
    for (i = 0; i < (int)sizeof(name) - 1 && lower(p[i]) == name[i]; i++) ;
    if (i == (int)sizeof(name) - 1) F->clen = parse_length(c + 1, e);
  }
  return 1;
}


/*
** Where "Content-Length:" (any case) starts in [p, e), or NULL. After a
** wrong Content-Length the next header comes glued to the end of the body
** bytes, on one line: finding it there puts the stream back in sync.
*/
static const char *find_length_header (const char *p, const char *e) {
  static const char name[] = "content-length:";
  const size_t n = sizeof(name) - 1;
  for (; (size_t)(e - p) >= n; p++) {
    size_t i;
    for (i = 0; i < n && lower((unsigned char)p[i]) == name[i]; i++) ;
    if (i == n) return p;
  }
  return NULL;
}


static int end_of_headers (Framer *F, FrameEvent *ev) {
  long long n = F->clen;
  F->in_headers = 0;
  F->clen = -1;
  if (n < 0)
    return frame_event(ev, JR_PARSE_ERROR, "Parse error", 0,
                       "header block without a valid Content-Length%.0lu", 0);
  if ((unsigned long long)n > F->max_bytes) {
    F->discard = (size_t)n;
    F->dropping = PEEKING;  /* reported once its first bytes are here */
    return FR_EVENT + 1;    /* keep going */
  }
  F->body = n;
  return FR_MORE;  /* go on reading the body */
}


/* a line no header can be: reported once, the same however it arrives */
static int long_line (FrameEvent *ev) {
  return frame_event(ev, JR_PARSE_ERROR, "Parse error", 0,
                     "skipped a line longer than %lu bytes", MAX_HEADER_LINE);
}


static int lsp_header (Framer *F, FrameEvent *ev) {
  char *start = F->in.p + F->off, *end = F->in.p + F->in.n;
  char *nl = memchr(start + F->scanned, '\n', (size_t)(end - start) - F->scanned);
  char *le;
  if (nl == NULL) {
    F->scanned = (size_t)(end - start);
    if (F->scanned > MAX_HEADER_LINE && !F->dropping) {  /* junk: drop it */
      F->dropping = 1;
      F->off = F->in.n; F->scanned = 0;
      return long_line(ev);
    }
    if (F->dropping) { F->off = F->in.n; F->scanned = 0; }
    return FR_MORE;
  }
  F->off = (size_t)(nl + 1 - F->in.p);
  F->scanned = 0;
  if (F->dropping) { F->dropping = 0; return FR_EVENT + 1; }
  if ((size_t)(nl - start) > MAX_HEADER_LINE) return long_line(ev);
  le = (nl > start && nl[-1] == '\r') ? nl - 1 : nl;
  if (le == start) {  /* blank line */
    if (!F->in_headers) return FR_EVENT + 1;  /* stray blank line */
    return end_of_headers(F, ev);
  }
  if (header_line(F, start, le)) F->in_headers = 1;
  else if (!F->in_headers) {
    const char *h = find_length_header(start + 1, le);
    if (h != NULL) {  /* resynchronize on the header glued to the junk */
      F->off = (size_t)(h - F->in.p);
      return frame_event(ev, JR_PARSE_ERROR, "Parse error", 0,
                         "skipped %lu bytes before a header",
                         (size_t)(h - start));
    }
    return frame_event(ev, JR_PARSE_ERROR, "Parse error", 0,
                       "skipped a line that is not a header (%lu bytes)",
                       (size_t)(le - start));
  }
  return FR_EVENT + 1;  /* line consumed, keep going */
}


static int lsp_next (Framer *F, const char **mp, const char **me,
                     FrameEvent *ev) {
  for (;;) {
    size_t avail = F->in.n - F->off;
    if (F->dropping == PEEKING) {  /* an oversized body: its first bytes */
      size_t need = F->discard < PEEK_BYTES ? F->discard : PEEK_BYTES;
      if (avail < need && !F->eof) return FR_MORE;
      F->dropping = 0;
      /* the body stays in the buffer until the next call drops it */
      return too_large(F, ev, F->in.p + F->off, avail < need ? avail : need,
                       mp, me);
    }
    if (F->discard > 0) {
      size_t d = avail < F->discard ? avail : F->discard;
      F->off += d;
      F->discard -= d;
      if (F->discard > 0) return FR_MORE;
      continue;
    }
    if (F->body >= 0) {
      if (avail < (size_t)F->body) {
        if (F->eof && avail + F->body > 0) {
          F->off = F->in.n;
          F->body = -1;
          return frame_event(ev, JR_PARSE_ERROR, "Parse error", 0,
                             "input ended inside a message body%.0lu", 0);
        }
        return FR_MORE;
      }
      *mp = F->in.p + F->off;
      *me = *mp + F->body;
      F->off += (size_t)F->body;
      F->body = -1;
      return FR_MSG;
    }
    if (avail == 0) return FR_MORE;
    {
      int r = lsp_header(F, ev);
      if (r == FR_MORE && F->body < 0) {
        if (F->eof && (F->in_headers || F->in.n > F->off)) {
          F->off = F->in.n;
          F->in_headers = 0;
          return frame_event(ev, JR_PARSE_ERROR, "Parse error", 0,
                             "input ended inside a header block%.0lu", 0);
        }
        return FR_MORE;
      }
      if (r == FR_EVENT) return FR_EVENT;
    }
  }
}

/* }=============================================================== */


/* {====================== peeking ============================== */

/* what the first bytes of a dropped message say it is */
enum { PEEK_UNKNOWN, PEEK_RESPONSE, PEEK_CALL, PEEK_JUNK };

typedef struct FramePeek {
  int kind;
  int error;             /* the response has an "error" member */
  int has_id;            /* how many "id" members were seen (readable or not) */
  const char *method;    /* a "method" string without escapes, and the */
  size_t methodlen;      /* text of a string or integer "id" of any length: */
  const char *idtext;    /* both point into [p, e), valid only while it is */
  size_t idtextlen;      /* (core.peek) */
  size_t idlen;          /* 0: no id could be read */
  char id[PEEK_ID];      /* its JSON text: a string without escapes, or an
                            integer that fits 64 bits (valid in every profile) */
} FramePeek;

/* a key's name, its escapes undone when it is short enough to be one
   of the members we look for (longer ones are left empty) */
typedef struct PeekKey { char s[8]; size_t n; } PeekKey;

static void peek_name (const char *k, const char *ke, int escaped, PeekKey *K) {
  K->n = 0;
  for (k++, ke--; k < ke; K->n++) {  /* inside the quotes */
    char c = *k++;
    if (K->n == sizeof(K->s)) { K->n = 0; return; }
    if (escaped && c == '\\') {  /* scan_string checked the escape */
      c = *k++;
      if (c == 'u') {
        long u = scan_hex4(k);
        k += 4;
        if (u <= 0 || u > 127) { K->n = 0; return; }  /* no name of ours */
        c = (char)u;
      }
      else if (c != '"' && c != '\\' && c != '/') { K->n = 0; return; }
    }
    K->s[K->n] = c;
  }
}

static int peek_key (const PeekKey *K, const char *lit) {
  size_t n = strlen(lit);
  return K->n == n && memcmp(K->s, lit, n) == 0;
}

/*
** Read the top-level members of the message starting [p, e) (cut short
** anywhere) while their values are scalars; stop at the first container
** (the big member, as a rule: "result", "params") or at anything unclear.
** With 'max_depth' > 0 containers are skipped instead (validated to that
** depth, never built), so every top-level member is read: core.peek.
** Keys "result"/"error" make it a response, "method" a call (a request or
** a notification; when the object was not read whole, "params" too); an
** "id" whose value is complete and clean is
** kept. Anything odd leaves the kind unknown or the id unread: the caller
** then assumes the worst. Allocates nothing, keeps no pointer into [p, e).
*/
static void frame_peek (const char *p, const char *e, FramePeek *pk,
                        int max_depth) {
  Scan S;
  const char *id = NULL, *ide = NULL;
  int response = 0, call = 0, params = 0, ids = 0, whole = 0;
  memset(&S, 0, sizeof(S));
  S.max_depth = max_depth;
  pk->kind = PEEK_UNKNOWN;
  pk->error = 0;
  pk->idlen = 0;
  pk->method = pk->idtext = NULL;
  pk->methodlen = pk->idtextlen = 0;
  p = scan_skipws(p, e);
  if (p == e || (*p != '{' && *p != '[')) { pk->kind = PEEK_JUNK; return; }
  if (*p == '[') return;  /* a batch: its ids are inside */
  for (p++;;) {
    const char *k, *v;
    PeekKey K;
    int isint = 0, is_id;
    p = scan_skipws(p, e);
    if (p == e || *p != '"') break;
    k = p;
    S.has_escape = 0;
    if ((p = scan_string(&S, p, e)) == NULL) break;
    peek_name(k, p, S.has_escape, &K);
    S.has_escape = 0;  /* from here: the value's */
    p = scan_skipws(p, e);
    if (p == e || *p != ':') break;
    p = scan_skipws(p + 1, e);
    if (peek_key(&K, "result")) response = 1;
    else if (peek_key(&K, "error")) response = pk->error = 1;
    else if (peek_key(&K, "method")) call = 1;
    else if (peek_key(&K, "params")) params = 1;
    is_id = peek_key(&K, "id");
    if (p == e) break;
    if (*p == '{' || *p == '[') {
      if (max_depth == 0) break;
      if (is_id) { ids++; id = pk->idtext = NULL; }  /* not an id we can answer */
      is_id = 0;
    }
    v = p;
    if (*p == '{' || *p == '[') p = scan_value(&S, p, e, 0);
    else if (*p == '"') p = scan_string(&S, p, e);
    else if (*p == '-' || num_isdigit((unsigned char)*p)) p = scan_number(&S, p, e, &isint);
    else if (*p == 't') p = scan_literal(&S, p, e, "true", 4);
    else if (*p == 'f') p = scan_literal(&S, p, e, "false", 5);
    else if (*p == 'n') p = scan_literal(&S, p, e, "null", 4);
    else break;
    if (p == NULL) break;
    if (peek_key(&K, "method") && *v == '"' && !S.has_escape) {
      pk->method = v + 1;
      pk->methodlen = (size_t)(p - v) - 2;
    }
    if (is_id) {  /* kept once its token is known to be whole */
      long long n;
      ids++;
      id = NULL;
      pk->idtext = NULL;
      if (*v == '"' || isint) { pk->idtext = v; pk->idtextlen = (size_t)(p - v); }
      if ((*v == '"' && !S.has_escape) || (isint && num_token_int64(v, p, &n))) {
        id = v; ide = p;
      }
    }
    p = scan_skipws(p, e);
    if (p == e || (*p != ',' && *p != '}')) {
      if (is_id) { id = NULL; pk->idtext = NULL; }
      break;
    }
    if (*p == '}') { whole = 1; break; }
    p++;
  }
  /* Read whole, only "method" makes a call, as for the codec: a response
     may carry other members. Read in part (the framer stops at the first
     container), "params" stands for the "method" it comes with. */
  if (params && !whole) call = 1;
  if (response != call) pk->kind = response ? PEEK_RESPONSE : PEEK_CALL;
  pk->has_id = ids;
  if (id != NULL && ids == 1 && (size_t)(ide - id) <= PEEK_ID) {
    pk->idlen = (size_t)(ide - id);
    memcpy(pk->id, id, pk->idlen);
  }
}

/* }=============================================================== */


/*
** The next message [*mp, *me), an event, or FR_MORE. With a message over
** the limit, the event (FRAME_TOO_LARGE) comes with its first bytes in
** [*mp, *me), for frame_peek, valid until the next feed or next.
*/
static int frame_next (Framer *F, const char **mp, const char **me,
                       FrameEvent *ev) {
  if (F->in.p == NULL) return FR_MORE;  /* nothing fed yet (no buffer) */
  return F->lsp ? lsp_next(F, mp, me, ev) : ndjson_next(F, mp, me, ev);
}


/* bytes still needed to finish the current LSP body, or 0 if unknown */
static size_t frame_want (const Framer *F) {
  if (F->lsp && F->body >= 0 && (size_t)F->body > F->in.n - F->off)
    return (size_t)F->body - (F->in.n - F->off);
  return 0;
}
