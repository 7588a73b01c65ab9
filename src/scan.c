/*
** scan.c — a strict JSON (RFC 8259) validator that builds nothing.
** cJSON is lenient (it accepts "+1", "01", bad \u escapes and invalid
** UTF-8), keeps numbers as doubles and has a compile-time depth limit.
** So every message is first scanned here: grammar, UTF-8, escapes and
** depth are checked, and the spans of the envelope members are found
** (with the exact bytes of the id). Only then does cJSON build values.
*/

static const char *scan_fail (Scan *S, const char *p, const char *msg) {
  if (S->err == NULL) { S->err = msg; S->at = p; }
  return NULL;
}


static const char *scan_skipws (const char *p, const char *e) {
  while (p < e && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t'))
    p++;
  return p;
}


/*
** Length of the valid UTF-8 sequence at 'p' (1..4), or 0. Rejects
** overlong forms, surrogates (U+D800..DFFF) and code points past U+10FFFF.
*/
static int scan_utf8len (const unsigned char *p, const unsigned char *e) {
  unsigned c = p[0];
  if (c < 0x80) return 1;
  if (c < 0xC2) return 0;
  if (c < 0xE0) {
    return (e - p >= 2 && (p[1] & 0xC0) == 0x80) ? 2 : 0;
  }
  if (c < 0xF0) {
    unsigned lo = (c == 0xE0) ? 0xA0 : 0x80;
    unsigned hi = (c == 0xED) ? 0x9F : 0xBF;
    if (e - p < 3 || p[1] < lo || p[1] > hi || (p[2] & 0xC0) != 0x80)
      return 0;
    return 3;
  }
  if (c < 0xF5) {
    unsigned lo = (c == 0xF0) ? 0x90 : 0x80;
    unsigned hi = (c == 0xF4) ? 0x8F : 0xBF;
    if (e - p < 4 || p[1] < lo || p[1] > hi || (p[2] & 0xC0) != 0x80 ||
        (p[3] & 0xC0) != 0x80)
      return 0;
    return 4;
  }
  return 0;
}


static int hexval (int c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}


/* read 4 hex digits at 'p' (p + 4 <= e checked by the caller), or -1 */
static long scan_hex4 (const char *p) {
  long v = 0;
  int i;
  for (i = 0; i < 4; i++) {
    int h = hexval((unsigned char)p[i]);
    if (h < 0) return -1;
    v = v * 16 + h;
  }
  return v;
}


/*
** Validate the escape after a backslash at 'p' (p points at the
** backslash); return the position after it.
*/
static const char *scan_escape (Scan *S, const char *p, const char *e) {
  long u;
  if (e - p < 2) return scan_fail(S, p, "unfinished escape");
  switch (p[1]) {
    case '"': case '\\': case '/': case 'b': case 'f':
    case 'n': case 'r': case 't':
      return p + 2;
    case 'u': break;
    default: return scan_fail(S, p, "invalid escape");
  }
  if (e - p < 6 || (u = scan_hex4(p + 2)) < 0)
    return scan_fail(S, p, "invalid \\u escape");
  if (u == 0) S->has_nul = 1;
  if (u >= 0xDC00 && u <= 0xDFFF)
    return scan_fail(S, p, "lone low surrogate in \\u escape");
  if (u >= 0xD800 && u <= 0xDBFF) {  /* must pair with a low surrogate */
    long lo;
    if (e - p < 12 || p[6] != '\\' || p[7] != 'u' ||
        (lo = scan_hex4(p + 8)) < 0xDC00 || lo > 0xDFFF)
      return scan_fail(S, p, "lone high surrogate in \\u escape");
    return p + 12;
  }
  return p + 6;
}


/*
** Bytes that a string may hold as they are: printable ASCII but the quote
** and the backslash. Looked up a byte at a time in the loop every string
** of every message takes (one load and test per byte, not four tests).
*/
#define ZERO16 0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0
#define ONE16 1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1
static const unsigned char scan_plain[256] = {
  ZERO16, ZERO16,                                 /* 0x00, 0x10: controls */
  1,1,0,1,1,1,1,1,1,1,1,1,1,1,1,1,               /* 0x20: '"' at 0x22 */
  ONE16, ONE16,                                   /* 0x30, 0x40 */
  1,1,1,1,1,1,1,1,1,1,1,1,0,1,1,1,               /* 0x50: '\\' at 0x5C */
  ONE16, ONE16                                    /* 0x60, 0x70 */
};                                                /* 0x80..: zero */
#undef ONE16
#undef ZERO16


/*
** Plain bytes eight at a time, where the byte order lets the first
** non-plain one be found by counting trailing zeros: most strings are
** short names ("jsonrpc", "method", keys), and a byte loop spends several
** instructions on each byte. A byte is not plain when it is a control
** (< 0x20), '"', '\\' or from 0x80 on; each test below sets bit 7 of
** every such byte and, through borrows, possibly of bytes after it, never
** before: so the lowest set bit is exact.
*/
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && \
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define ONES  0x0101010101010101ULL
#define HIGH  0x8080808080808080ULL
static inline const char *scan_plainrun (const char *p, const char *e) {
  while (e - p >= 8) {
    unsigned long long v, q, b, m;
    memcpy(&v, p, 8);   /* one unaligned load */
    q = v ^ (ONES * '"');
    b = v ^ (ONES * '\\');
    m = ((v - ONES * 0x20) | (q - ONES) | (b - ONES)) & ~v & HIGH;
    m |= v & HIGH;
    if (m != 0) return p + (__builtin_ctzll(m) >> 3);
    p += 8;
  }
  return p;
}
#undef HIGH
#undef ONES
#else
static inline const char *scan_plainrun (const char *p, const char *e) {
  (void)e;
  return p;
}
#endif


/* 'p' is at the opening quote; return the position after the closing one */
static const char *scan_string (Scan *S, const char *p, const char *e) {
  p = scan_plainrun(p + 1, e);
  while (p < e) {
    unsigned char c = (unsigned char)*p;
    if (scan_plain[c]) { p++; continue; }
    if (c == '"') return p + 1;
    if (c == '\\') {
      S->has_escape = 1;
      if ((p = scan_escape(S, p, e)) == NULL) return NULL;
    }
    else if (c < 0x20) return scan_fail(S, p, "control character in string");
    else if (c < 0x80) p++;
    else {
      int n = scan_utf8len((const unsigned char *)p, (const unsigned char *)e);
      if (n == 0) return scan_fail(S, p, "invalid UTF-8");
      p += n;
    }
  }
  return scan_fail(S, p, "unfinished string");
}


/*
** Number grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
** '*isint' tells whether it has neither fraction nor exponent.
*/
static const char *scan_number (Scan *S, const char *p, const char *e,
                                int *isint) {
  const char *s = p;
  *isint = 1;
  if (p < e && *p == '-') p++;
  if (p < e && *p == '0') p++;
  else if (p < e && num_isdigit(*p)) { while (p < e && num_isdigit(*p)) p++; }
  else return scan_fail(S, s, "invalid number");
  if (p < e && *p == '.') {
    *isint = 0;
    p++;
    if (p >= e || !num_isdigit(*p)) return scan_fail(S, s, "invalid number");
    while (p < e && num_isdigit(*p)) p++;
  }
  if (p < e && (*p == 'e' || *p == 'E')) {
    *isint = 0;
    p++;
    if (p < e && (*p == '+' || *p == '-')) p++;
    if (p >= e || !num_isdigit(*p)) return scan_fail(S, s, "invalid number");
    while (p < e && num_isdigit(*p)) p++;
  }
  return p;
}


static const char *scan_literal (Scan *S, const char *p, const char *e,
                                 const char *lit, size_t len) {
  if ((size_t)(e - p) < len || memcmp(p, lit, len) != 0)
    return scan_fail(S, p, "invalid literal");
  return p + len;
}


static const char *scan_value (Scan *S, const char *p, const char *e,
                               int depth);


/*
** Scan the value at 'p' as scan_value does and, with a record 'R' that is
** still flat, note it as its item 'n' (its key, if any, is noted by the
** caller). Numbers go to scan_number directly, as scan_value sends them,
** so that their form is known.
*/
static inline const char *scan_item (Scan *S, FlatRec *R, int n,
                                     const char *p, const char *e, int depth) {
  const char *q;
  int isint, esc;
  if (R == NULL || !R->flat) return scan_value(S, p, e, depth);
  if (n >= FLAT_MAX) { R->flat = 0; return scan_value(S, p, e, depth); }
  if (p < e && (*p == '-' || num_isdigit(*p))) {
    if ((q = scan_number(S, p, e, &isint)) == NULL) return NULL;
    if (!isint || q - p > 15 || (q - p == 2 && *p == '-' && p[1] == '0'))
      R->flat = 0;   /* fractions, -0, big ones: the general path */
  }
  else {
    esc = S->has_escape;
    S->has_escape = 0;
    if ((q = scan_value(S, p, e, depth)) == NULL) return NULL;
    if (S->has_escape || *p == '{' || *p == '[') R->flat = 0;
    S->has_escape |= esc;
  }
  R->item[n].v = p;
  R->item[n].ve = q;
  return q;
}


/* take the record armed for this container, if any (nested ones make none) */
static FlatRec *take_record (Scan *S, const char *p) {
  FlatRec *R = S->rec;
  if (R != NULL) {
    S->rec = NULL;
    R->at = p; R->flat = 1; R->n = 0;
  }
  return R;
}


/*
** Containers count their values into S->count as they close: the
** outermost closes last, so after scanning a value S->count is its size
** (tables are then made to size).
*/
static const char *scan_array (Scan *S, const char *p, const char *e,
                               int depth) {
  FlatRec *R = take_record(S, p);
  int n = 0;
  p = scan_skipws(p + 1, e);
  if (p < e && *p == ']') { S->count = 0; return p + 1; }
  for (;;) {
    if ((p = scan_item(S, R, n, p, e, depth)) == NULL) return NULL;
    n++;
    p = scan_skipws(p, e);
    if (p < e && *p == ',') p = scan_skipws(p + 1, e);
    else if (p < e && *p == ']') {
      S->count = n;
      if (R != NULL) R->n = n;
      return p + 1;
    }
    else return scan_fail(S, p, "expected ',' or ']'");
  }
}


static const char *scan_object (Scan *S, const char *p, const char *e,
                                int depth) {
  FlatRec *R = take_record(S, p);
  int n = 0;
  p = scan_skipws(p + 1, e);
  if (p < e && *p == '}') { S->count = 0; return p + 1; }
  for (;;) {
    const char *k = p;
    if (p >= e || *p != '"') return scan_fail(S, p, "expected a key");
    if (R != NULL && R->flat && n < FLAT_MAX) {  /* note the key */
      int esc = S->has_escape;
      S->has_escape = 0;
      if ((p = scan_string(S, p, e)) == NULL) return NULL;
      if (S->has_escape) R->flat = 0;
      S->has_escape |= esc;
      R->item[n].k = k; R->item[n].ke = p;
    }
    else if ((p = scan_string(S, p, e)) == NULL) return NULL;
    p = scan_skipws(p, e);
    if (p >= e || *p != ':') return scan_fail(S, p, "expected ':'");
    if ((p = scan_item(S, R, n, scan_skipws(p + 1, e), e, depth)) == NULL)
      return NULL;
    n++;
    p = scan_skipws(p, e);
    if (p < e && *p == ',') p = scan_skipws(p + 1, e);
    else if (p < e && *p == '}') {
      S->count = n;
      if (R != NULL) R->n = n;
      return p + 1;
    }
    else return scan_fail(S, p, "expected ',' or '}'");
  }
}


/*
** Scan one value at 'p' (no leading whitespace). 'depth' counts the
** containers around it; opening one more than max_depth is an error.
*/
static const char *scan_value (Scan *S, const char *p, const char *e,
                               int depth) {
  int isint;
  if (p >= e) return scan_fail(S, p, "unexpected end of input");
  switch (*p) {
    case '{': case '[':
      if (depth >= S->max_depth) {
        S->too_deep = 1;
        return scan_fail(S, p, "nesting too deep");
      }
      return (*p == '{') ? scan_object(S, p, e, depth + 1)
                         : scan_array(S, p, e, depth + 1);
    case '"': return scan_string(S, p, e);
    case 't': return scan_literal(S, p, e, "true", 4);
    case 'f': return scan_literal(S, p, e, "false", 5);
    case 'n': return scan_literal(S, p, e, "null", 4);
    default:
      if (*p == '-' || num_isdigit(*p)) return scan_number(S, p, e, &isint);
      return scan_fail(S, p, "unexpected character");
  }
}
