/*
** httpload.c -- a load generator for an MCP server over Streamable HTTP.
**
**   httpload --port P [--host 127.0.0.1] [--path /mcp] [--connections C]
**            (--requests N | --seconds S) [--warmup W] [--timeout T]
**            [--kill PID --kill-at K]
**
** Opens C keep-alive connections and keeps one request in flight on each:
** a 2026-07-28 `tools/call` of the tool `add` with arguments {a: ID, b: 1},
** the headers the transport requires (MCP-Protocol-Version, Mcp-Method,
** Mcp-Name, Content-Type, Accept) and `_meta` with the protocol version and
** client capabilities. ID counts 1, 2, ... over all connections. A reply
** is right when its status is 200 and its body has `"id":ID` and the text
** `"ID+1"` (JSON or one SSE event). Nothing is retried: a tools/call is not
** idempotent, so a request whose connection fails is an error, as a real
** client would see it.
**
** Every id's outcome is kept, so the counts are exact: each request sent
** is exactly one of ok, http_error (a status other than 200, e.g. nginx's
** 502), conn_error (the connection closed or failed before the whole
** reply), or bad (a 200 with a wrong body); an id answered twice counts in
** duplicates, a reply on a connection with no request in flight in
** unexpected. Prints one line:
**
**   requests=N ok=N http_errors=0 status_502=0 conn_errors=0 bad=0
**   duplicates=0 unexpected=0 unanswered=0 seconds=S rps=R p50_ms=A p99_ms=B max_ms=M
**
** rps and the latencies are of the requests sent after the warm-up W
** (default 0.5 s); with --seconds no new request is sent after W+S, and
** those in flight are waited for. --kill sends SIGKILL to PID once K
** requests have their outcome (the fault test kills a worker mid-load).
** Exit status: 0 when every request has an outcome (errors included: the
** caller judges them), 1 when the run stalls for T seconds (default 10)
** or a connection cannot be made, 2 on bad usage.
*/

#define _POSIX_C_SOURCE 200809L

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#define MAX_CONNECTIONS 1024
#define MAX_REPLY (1024 * 1024)  /* a longer reply is a bad one */
#define READ_CHUNK 65536

enum { NONE = 0, OK, HTTP_ERROR, CONN_ERROR, BAD };

typedef struct Options {
  const char *host;
  int port;
  const char *path;
  int connections;
  long long requests;       /* > 0: send exactly this many */
  double seconds;           /* else: send for this long after the warm-up */
  double warmup;
  double timeout;
  long kill_pid;
  long long kill_at;
} Options;

typedef struct Conn {
  int fd;                   /* -1: to be (re)connected */
  int connecting;
  long long id;             /* the request in flight, 0: none */
  double started;
  char out[2048];
  size_t out_len, out_done;
  char *in;
  size_t in_len, in_cap;
} Conn;

typedef struct Run {
  Options opt;
  struct sockaddr_in addr;
  Conn conns[MAX_CONNECTIONS];
  unsigned char *outcome;   /* by id; index 0 unused */
  long long outcome_cap;
  long long next_id;        /* the next id to send */
  long long settled;        /* ids with an outcome */
  long long duplicates;     /* replies naming an id already settled */
  long long unexpected;     /* replies on a connection with nothing in flight */
  long long status_502;
  double *lat;              /* ms, of the measured requests */
  long long lat_len, lat_cap;
  long long first_measured; /* the first id sent after the warm-up, 0: none yet */
  double t0, measure_from, stop_at, last_progress;
  long long measured_done;
  double last_done;         /* when the last measured request settled */
} Run;


static double now (void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die (const char *msg, const char *detail) {
  fprintf(stderr, "httpload: %s%s%s\n", msg, detail ? ": " : "", detail ? detail : "");
  exit(1);
}

static void *grow (void *p, long long *cap, long long need, size_t size) {
  if (need <= *cap) return p;
  long long n = *cap ? *cap : 1024;
  while (n < need) n *= 2;
  p = realloc(p, (size_t)n * size);
  if (p == NULL) die("out of memory", NULL);
  if (size == 1) memset((char *)p + *cap, 0, (size_t)(n - *cap));
  *cap = n;
  return p;
}


/* {======================================================
** Outcomes
** ======================================================= */

static void settle (Run *r, Conn *c, int what) {
  long long id = c->id;
  double t = now();
  if (id == 0) { r->unexpected++; return; }  /* a reply with no request in flight */
  c->id = 0;
  r->outcome[id] = (unsigned char)what;
  r->settled++;
  r->last_progress = t;
  if (r->first_measured > 0 && id >= r->first_measured) {
    r->lat = grow(r->lat, &r->lat_cap, r->lat_len + 1, sizeof *r->lat);
    r->lat[r->lat_len++] = (t - c->started) * 1000.0;
    r->measured_done++;
    r->last_done = t;
  }
  if (r->opt.kill_pid > 0 && r->settled == r->opt.kill_at) {
    if (kill((pid_t)r->opt.kill_pid, SIGKILL) != 0) die("kill", strerror(errno));
    fprintf(stderr, "httpload: SIGKILL to %ld after %lld outcomes\n", r->opt.kill_pid, r->settled);
  }
}

static int cmp_double (const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double percentile (const Run *r, double p) {
  long long i;
  if (r->lat_len == 0) return 0.0;
  i = (long long)(p * (double)r->lat_len + 0.5) - 1;  /* nearest rank */
  if (i < 0) i = 0;
  if (i >= r->lat_len) i = r->lat_len - 1;
  return r->lat[i];
}

static void report (Run *r) {
  long long n = r->next_id - 1, count[BAD + 1] = {0};
  double span = r->measured_done > 0 ? r->last_done - r->measure_from : 0.0;
  for (long long id = 1; id <= n; id++) count[r->outcome[id]]++;
  qsort(r->lat, (size_t)r->lat_len, sizeof *r->lat, cmp_double);
  printf("requests=%lld ok=%lld http_errors=%lld status_502=%lld conn_errors=%lld bad=%lld"
         " duplicates=%lld unexpected=%lld unanswered=%lld seconds=%.3f rps=%.0f p50_ms=%.3f p99_ms=%.3f"
         " max_ms=%.3f\n",
         n, count[OK], count[HTTP_ERROR], r->status_502, count[CONN_ERROR], count[BAD],
         r->duplicates, r->unexpected, count[NONE], span, span > 0 ? (double)r->measured_done / span : 0.0,
         percentile(r, 0.50), percentile(r, 0.99), r->lat_len ? r->lat[r->lat_len - 1] : 0.0);
}
/* }====================================================== */


/* {======================================================
** Connections
** ======================================================= */

static void drop (Conn *c) {
  if (c->fd >= 0) close(c->fd);
  c->fd = -1;
  c->in_len = 0;
  c->out_len = c->out_done = 0;
}

static void open_conn (Run *r, Conn *c) {
  int one = 1;
  c->fd = socket(AF_INET, SOCK_STREAM, 0);
  if (c->fd < 0) die("socket", strerror(errno));
  if (fcntl(c->fd, F_SETFL, O_NONBLOCK) < 0) die("fcntl", strerror(errno));
  setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  c->connecting = 1;
  if (connect(c->fd, (struct sockaddr *)&r->addr, sizeof r->addr) == 0) c->connecting = 0;
  else if (errno != EINPROGRESS) die("connect", strerror(errno));
}

/* Whether another request may be sent now. */
static int may_send (const Run *r, double t) {
  if (r->opt.requests > 0) return r->next_id <= r->opt.requests;
  return t < r->stop_at;
}

static void send_next (Run *r, Conn *c, double t) {
  long long id = r->next_id++;
  char body[512];
  int blen = snprintf(body, sizeof body,
    "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"method\":\"tools/call\",\"params\":{\"name\":\"add\","
    "\"arguments\":{\"a\":%lld,\"b\":1},\"_meta\":{"
    "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
    "\"io.modelcontextprotocol/clientCapabilities\":{}}}}", id, id);
  c->out_len = (size_t)snprintf(c->out, sizeof c->out,
    "POST %s HTTP/1.1\r\nHost: %s:%d\r\nContent-Type: application/json\r\n"
    "Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n"
    "Mcp-Method: tools/call\r\nMcp-Name: add\r\nContent-Length: %d\r\n\r\n%s",
    r->opt.path, r->opt.host, r->opt.port, blen, body);
  c->out_done = 0;
  c->id = id;
  c->started = t;
  r->outcome = grow(r->outcome, &r->outcome_cap, id + 1, 1);
  if (r->first_measured == 0 && t >= r->measure_from) r->first_measured = id;
}
/* }====================================================== */


/* {======================================================
** Replies: status line, Content-Length or chunked body
** ======================================================= */

/* The header value of `name` in head[0, len), or NULL. */
static const char *header (const char *head, size_t len, const char *name, size_t *vlen) {
  size_t n = strlen(name);
  const char *p = memchr(head, '\n', len), *end = head + len;
  while (p != NULL && p + 1 < end) {
    const char *line = p + 1, *eol = memchr(line, '\n', (size_t)(end - line));
    if (eol == NULL) eol = end;
    if ((size_t)(eol - line) > n && line[n] == ':' && strncasecmp(line, name, n) == 0) {
      const char *v = line + n + 1;
      while (v < eol && *v == ' ') v++;
      *vlen = (size_t)(eol - v);
      if (*vlen > 0 && v[*vlen - 1] == '\r') (*vlen)--;
      return v;
    }
    p = eol;
  }
  return NULL;
}

/* Decode a chunked body in place; its length, or -1 while incomplete. */
static long dechunk (char *body, size_t len) {
  size_t in = 0, out = 0;
  for (;;) {
    char *eol = memchr(body + in, '\n', len - in);
    unsigned long size;
    if (eol == NULL) return -1;
    size = strtoul(body + in, NULL, 16);
    in = (size_t)(eol - body) + 1;
    if (size == 0) return len - in >= 2 ? (long)out : -1;  /* the last CRLF */
    if (len - in < size + 2) return -1;
    memmove(body + out, body + in, size);
    out += size;
    in += size + 2;
  }
}

/* A whole reply in c->in: 1 (and its outcome settled), 0 while partial. */
static int take_reply (Run *r, Conn *c) {
  char *sep = NULL, *body;
  size_t head_len, vlen, have;
  const char *v;
  long body_len;
  int status, chunked;
  char want[96];
  if (c->in_len >= 4) {
    for (size_t i = 0; i + 3 < c->in_len; i++)
      if (memcmp(c->in + i, "\r\n\r\n", 4) == 0) { sep = c->in + i; break; }
  }
  if (sep == NULL) return 0;
  head_len = (size_t)(sep - c->in) + 4;
  body = sep + 4;
  have = c->in_len - head_len;
  status = c->in_len > 12 ? atoi(c->in + 9) : 0;
  v = header(c->in, head_len, "Transfer-Encoding", &vlen);
  chunked = v != NULL && vlen >= 7 && strncasecmp(v, "chunked", 7) == 0;
  if (chunked) {
    char *copy = malloc(have + 1);
    if (copy == NULL) die("out of memory", NULL);
    memcpy(copy, body, have);
    body_len = dechunk(copy, have);
    if (body_len >= 0) memcpy(body, copy, (size_t)body_len);
    free(copy);
    if (body_len < 0) return 0;
  } else {
    v = header(c->in, head_len, "Content-Length", &vlen);
    if (v == NULL) return 0;  /* no framing: wait for the close */
    body_len = atol(v);
    if (have < (size_t)body_len) return 0;
  }
  body[body_len] = '\0';
  if (status != 200) {
    if (status == 502) r->status_502++;
    settle(r, c, HTTP_ERROR);
  } else {
    /* the id the reply names: another one already settled is a duplicate */
    const char *idp = strstr(body, "\"id\":");
    long long id = idp ? atoll(idp + 5) : 0;
    snprintf(want, sizeof want, "\"text\":\"%lld\"", c->id + 1);
    if (id != c->id && id > 0 && id < r->next_id && r->outcome[id] != NONE) r->duplicates++;
    if (id == c->id && strstr(body, want)) settle(r, c, OK);
    else {
      fprintf(stderr, "httpload: bad reply to id %lld: %.200s\n", c->id, body);
      settle(r, c, BAD);
    }
  }
  v = header(c->in, head_len, "Connection", &vlen);
  if (v != NULL && vlen >= 5 && strncasecmp(v, "close", 5) == 0) drop(c);
  c->in_len = 0;  /* one request in flight: nothing can follow the reply */
  return 1;
}

static void on_readable (Run *r, Conn *c) {
  ssize_t n;
  for (;;) {
    if (c->in_cap - c->in_len < READ_CHUNK + 1) {
      c->in_cap = c->in_len + READ_CHUNK + 1;
      c->in = realloc(c->in, c->in_cap);
      if (c->in == NULL) die("out of memory", NULL);
    }
    n = read(c->fd, c->in + c->in_len, READ_CHUNK);
    if (n > 0) {
      c->in_len += (size_t)n;
      if (c->in_len > MAX_REPLY) { settle(r, c, BAD); drop(c); return; }
      if (take_reply(r, c)) return;
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (n < 0 && errno == EINTR) continue;
    /* closed or reset: the request in flight (if any) failed */
    if (c->id != 0) settle(r, c, CONN_ERROR);
    drop(c);
    return;
  }
}

static void on_writable (Run *r, Conn *c) {
  if (c->connecting) {
    int err = 0;
    socklen_t len = sizeof err;
    getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) die("connect", strerror(err));
    c->connecting = 0;
    return;
  }
  while (c->out_done < c->out_len) {
    ssize_t n = write(c->fd, c->out + c->out_done, c->out_len - c->out_done);
    if (n > 0) { c->out_done += (size_t)n; continue; }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (n < 0 && errno == EINTR) continue;
    settle(r, c, CONN_ERROR);
    drop(c);
    return;
  }
}
/* }====================================================== */


static void usage (const char *msg) {
  fprintf(stderr, "httpload: %s\nusage: httpload --port P [--host H] [--path /mcp]"
          " [--connections C] (--requests N | --seconds S) [--warmup W] [--timeout T]"
          " [--kill PID --kill-at K]\n", msg);
  exit(2);
}

static void parse (Options *o, int argc, char **argv) {
  o->host = "127.0.0.1"; o->path = "/mcp"; o->connections = 16;
  o->warmup = 0.5; o->timeout = 10.0;
  for (int i = 1; i < argc; i += 2) {
    const char *f = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (v == NULL) usage("an option needs a value");
    if (strcmp(f, "--host") == 0) o->host = v;
    else if (strcmp(f, "--port") == 0) o->port = atoi(v);
    else if (strcmp(f, "--path") == 0) o->path = v;
    else if (strcmp(f, "--connections") == 0) o->connections = atoi(v);
    else if (strcmp(f, "--requests") == 0) o->requests = atoll(v);
    else if (strcmp(f, "--seconds") == 0) o->seconds = atof(v);
    else if (strcmp(f, "--warmup") == 0) o->warmup = atof(v);
    else if (strcmp(f, "--timeout") == 0) o->timeout = atof(v);
    else if (strcmp(f, "--kill") == 0) o->kill_pid = atol(v);
    else if (strcmp(f, "--kill-at") == 0) o->kill_at = atoll(v);
    else usage("unknown option");
  }
  if (o->port <= 0 || o->port > 65535) usage("--port is required");
  if (o->connections < 1 || o->connections > MAX_CONNECTIONS) usage("--connections out of range");
  if ((o->requests > 0) == (o->seconds > 0)) usage("give one of --requests and --seconds");
  if ((o->kill_pid > 0) != (o->kill_at > 0)) usage("--kill and --kill-at go together");
}

int main (int argc, char **argv) {
  static Run run;
  Run *r = &run;
  struct pollfd pfd[MAX_CONNECTIONS];
  int busy;
  parse(&r->opt, argc, argv);
  signal(SIGPIPE, SIG_IGN);
  r->addr.sin_family = AF_INET;
  r->addr.sin_port = htons((unsigned short)r->opt.port);
  if (inet_pton(AF_INET, r->opt.host, &r->addr.sin_addr) != 1) usage("--host must be an IPv4 address");
  r->next_id = 1;
  r->t0 = r->last_progress = now();
  r->measure_from = r->t0 + r->opt.warmup;
  r->stop_at = r->measure_from + r->opt.seconds;
  for (int i = 0; i < r->opt.connections; i++) r->conns[i].fd = -1;
  do {
    double t = now();
    busy = 0;
    for (int i = 0; i < r->opt.connections; i++) {
      Conn *c = &r->conns[i];
      if (c->id == 0 && may_send(r, t)) {
        if (c->fd < 0) open_conn(r, c);
        send_next(r, c, t);
      }
      pfd[i].fd = c->fd;
      pfd[i].events = (short)((c->connecting || c->out_done < c->out_len) ? POLLOUT : POLLIN);
      pfd[i].revents = 0;
      busy |= c->id != 0;
    }
    if (!busy) break;
    if (poll(pfd, (nfds_t)r->opt.connections, 100) < 0 && errno != EINTR) die("poll", strerror(errno));
    for (int i = 0; i < r->opt.connections; i++) {
      Conn *c = &r->conns[i];
      if (c->fd < 0 || pfd[i].revents == 0) continue;
      if (pfd[i].revents & POLLOUT) on_writable(r, c);
      else on_readable(r, c);  /* POLLIN, POLLHUP, POLLERR: read tells which */
    }
    if (now() - r->last_progress > r->opt.timeout) {
      report(r);
      die("no reply for the timeout", NULL);
    }
  } while (busy);
  report(r);
  return 0;
}
