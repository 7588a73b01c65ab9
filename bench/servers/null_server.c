/*
** null_server.c -- answers loadgen's `subtract` requests without parsing
** JSON, so that loadgen's rate against it is loadgen's own ceiling.
**
**   null_server [--framing ndjson|lsp] [--poll-us N]
**               [--first-write N] [--max-write M]
**
** For each input line (or Content-Length body) it copies the id and the two
** params found by a minimal scan into a canned reply; the replies to one
** read go out in one write, or, with --first-write N, in writes of N
** replies, then 2N, 4N... up to M (default 16): a client that answers each
** reply at once may go faster against that schedule. Before it blocks for input it polls for up to
** N µs (default 100, 0: never), as jrpc.uv does (lua/jrpc/uv/busy_poll.lua):
** on a virtual machine a server that blocks as soon as it runs dry pays a
** slow wakeup for every burst, and its rate would not be the client's
** ceiling. Exits 0 at the end of input, 1 on input it cannot scan.
*/

#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <time.h>
#include <unistd.h>

#define READ_CHUNK (256 * 1024)
#define MAX_MESSAGE (1024 * 1024)

static int lsp;  /* Content-Length framing, else ndjson */
static long poll_ns = 100000;  /* how long to poll before blocking */
static int first_write;  /* replies before a read's first write; 0: one write a read */
static int max_write = 16;  /* the interval between writes grows to this */

static void die (const char *msg) {
  fprintf(stderr, "null_server: %s\n", msg);
  exit(1);
}

static void *grow (void *p, size_t size) {
  p = realloc(p, size);
  if (p == NULL) die("out of memory");
  return p;
}

static const char *find (const char *s, const char *end, const char *key) {
  size_t k = strlen(key);
  while ((size_t)(end - s) >= k) {
    const char *p = (const char *)memchr(s, key[0], (size_t)(end - s) - k + 1);
    if (p == NULL) return NULL;
    if (memcmp(p, key, k) == 0) return p;
    s = p + 1;
  }
  return NULL;
}

/* An optional '-' and digits at *p; advances *p past them. */
static long long scan_int (const char **p, const char *end) {
  const char *s = *p;
  int neg = 0;
  long long v = 0;
  if (s < end && *s == '-') { neg = 1; s++; }
  if (s >= end || *s < '0' || *s > '9') die("a number was expected");
  for (; s < end && *s >= '0' && *s <= '9'; s++) v = v * 10 + (*s - '0');
  *p = s;
  return neg ? -v : v;
}

static char *put_int (char *p, long long v) {
  char tmp[24];
  int n = 0;
  unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v
                               : (unsigned long long)v;
  if (v < 0) *p++ = '-';
  do { tmp[n++] = (char)('0' + u % 10); u /= 10; } while (u != 0);
  while (n > 0) *p++ = tmp[--n];
  return p;
}

/* Append the reply to the request in [s, end) at p (room: 128 bytes). */
static char *answer (char *p, const char *s, const char *end) {
  const char *id = find(s, end, "\"id\":");
  const char *params = find(s, end, "\"params\":[");
  char body[96], *b = body;
  long long a, c;
  if (id == NULL || params == NULL) die("a request without id or params");
  id += 5;
  params += 10;
  a = scan_int(&params, end);
  if (params >= end || *params != ',') die("params are not [a, b]");
  params++;
  c = scan_int(&params, end);
  memcpy(b, "{\"jsonrpc\":\"2.0\",\"result\":", 26);
  b = put_int(b + 26, a - c);
  memcpy(b, ",\"id\":", 6);
  b = put_int(b + 6, scan_int(&id, end));
  *b++ = '}';
  if (lsp) {
    memcpy(p, "Content-Length: ", 16);
    p = put_int(p + 16, (long long)(b - body));
    memcpy(p, "\r\n\r\n", 4);
    p += 4;
  }
  memcpy(p, body, (size_t)(b - body));
  p += b - body;
  if (!lsp) *p++ = '\n';
  return p;
}

static void write_all (const char *s, const char *end) {
  while (s < end) {
    ssize_t n = write(1, s, (size_t)(end - s));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) die(strerror(errno));
    s += n;
  }
}

static long long now_ns (void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* Poll stdin without blocking until it has input or poll_ns has passed. */
static void wait_briefly (void) {
  struct pollfd p;
  long long until = now_ns() + poll_ns;
  p.fd = 0;
  p.events = POLLIN;
  while (poll_ns > 0 && poll(&p, 1, 0) == 0 && now_ns() < until) {}
}

/* The next complete message at s: its body [*body, *bend) and its end. */
static const char *next_message (const char *s, const char *end,
                                 const char **body, const char **bend) {
  if (!lsp) {
    const char *nl = (const char *)memchr(s, '\n', (size_t)(end - s));
    if (nl == NULL) return NULL;
    *body = s;
    *bend = nl;
    return nl + 1;
  }
  else {
    const char *hend = find(s, end, "\r\n\r\n"), *len = find(s, end, ": ");
    long long n;
    if (hend == NULL) return NULL;
    if (len == NULL || len > hend) die("no Content-Length");
    len += 2;
    n = scan_int(&len, hend);
    if (n < 0 || end - (hend + 4) < n) return NULL;
    *body = hend + 4;
    *bend = hend + 4 + n;
    return *bend;
  }
}

int main (int argc, char **argv) {
  char *in = NULL, *out = NULL;
  size_t len = 0, cap = 0, outcap = 0;
  int a;
  for (a = 1; a + 1 < argc; a += 2) {
    if (strcmp(argv[a], "--framing") == 0) lsp = strcmp(argv[a + 1], "lsp") == 0;
    else if (strcmp(argv[a], "--poll-us") == 0) {
      char *end;
      poll_ns = strtol(argv[a + 1], &end, 10) * 1000;
      if (*end != '\0' || end == argv[a + 1]) break;  /* not a number */
    }
    else if (strcmp(argv[a], "--first-write") == 0) first_write = atoi(argv[a + 1]);
    else if (strcmp(argv[a], "--max-write") == 0) max_write = atoi(argv[a + 1]);
    else break;
  }
  if (a != argc || poll_ns < 0 || first_write < 0 || max_write < 1)
    die("usage: null_server [--framing ndjson|lsp] [--poll-us N] [--first-write N] [--max-write M]");
  for (;;) {
    const char *s, *body, *bend, *next;
    char *o;
    ssize_t n;
    size_t done, most;
    if (cap - len < READ_CHUNK) in = (char *)grow(in, cap = len + READ_CHUNK);
    wait_briefly();
    n = read(0, in + len, cap - len);
    if (n == 0) return 0;
    if (n < 0) {
      if (errno == EINTR) continue;
      die(strerror(errno));
    }
    len += (size_t)n;
    most = (len / 40 + 1) * 128;  /* a request: 40+ bytes, a reply: < 128 */
    if (outcap < most) out = (char *)grow(out, outcap = most);
    o = out;
    {
      int count = 0, next_write = first_write;
      char *w = out;  /* replies in [w, o) are not written yet */
      for (s = in; (next = next_message(s, in + len, &body, &bend)) != NULL;
           s = next) {
        if (bend > body) o = answer(o, body, bend);
        if (first_write > 0 && ++count >= next_write) {
          write_all(w, o);
          w = o;
          count = 0;
          next_write = 2 * next_write < max_write ? 2 * next_write : max_write;
        }
      }
      if (w != out) { memmove(out, w, (size_t)(o - w)); o = out + (o - w); }
    }
    done = (size_t)(s - in);
    memmove(in, s, len - done);
    len -= done;
    if (len > MAX_MESSAGE) die("a message longer than 1 MiB");
    write_all(out, o);
  }
}
