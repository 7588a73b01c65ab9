/*
** loadgen.c -- a JSON-RPC load generator for a server on a pipe.
**
**   loadgen [options] -- command [args...]
**
** Spawns the command with pipes for its stdin and stdout (its stderr is
** ours), keeps K `subtract` requests in flight, checks every reply (its id
** must be one in flight and its result right) and prints one line:
**
**   framing=ndjson inflight=64 replies=N seconds=S rps=R hwm_kib=H
**
** Options:
**   --framing ndjson|lsp  newline-delimited JSON (default) or Content-Length
**   --inflight K          requests kept in flight (default 64)
**   --seconds S           measured duration (default 2)
**   --warmup W            unmeasured time before it (default 0.5)
**   --peak N              memory mode: send N requests at once, wait for all
**                         N replies; rps is then N over the time that took
**   --timeout T           longest wait without progress (default 5)
**
** hwm_kib is the server's VmHWM (peak resident set) from /proc/PID/status,
** sampled while it runs (so give the server itself, not a shell around it).
** Exit status: 0 on success; 1 with a message on stderr when the server
** dies, stalls, answers wrongly or does not exit at the end of its input;
** 2 on bad usage.
*/

#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define READ_CHUNK (256 * 1024)     /* room we want free before each read */
#define MAX_MESSAGE (1024 * 1024)   /* a longer reply is an error */
#define MAX_HEADER 4096             /* a longer LSP header block is an error */
#define POLL_MS 50                  /* longest sleep: clock and VmHWM checks */
#define EXCERPT 200                 /* bytes of a bad reply shown */


typedef struct Options {
  int lsp;              /* Content-Length framing, else ndjson */
  long inflight;        /* requests kept in flight (throughput mode) */
  long peak;            /* > 0: memory mode with this many in flight */
  double seconds;
  double warmup;
  double timeout;
  char **command;       /* the server's argv, NULL-terminated */
} Options;

/* Bytes in [start, len) are pending (unwritten or unparsed). */
typedef struct Buffer {
  char *data;
  size_t start;
  size_t len;
  size_t cap;
} Buffer;

/* A request in flight, found by id & mask; id 0 marks a free slot. */
typedef struct Slot {
  long long id;
  long long expect;
} Slot;

typedef struct Run {
  const Options *opt;
  pid_t pid;            /* 0 once reaped */
  int status;           /* waitpid status, valid once pid == 0 */
  int to_server;        /* its stdin */
  int from_server;      /* its stdout */
  Buffer in;            /* replies read, not yet parsed */
  Buffer out;           /* requests queued, not yet written */
  Slot *slots;
  size_t mask;
  long long next_id;
  long inflight;
  long long replies;
  long target;          /* in flight to keep while refilling */
  int refill;           /* send a new request for each reply */
  double last_progress; /* last time bytes moved either way */
  double next_sample;   /* next VmHWM sample */
  long hwm_kib;
} Run;


static double now (void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void sleep_ms (long ms) {
  struct timespec ts;
  ts.tv_sec = ms / 1000;
  ts.tv_nsec = (ms % 1000) * 1000000L;
  nanosleep(&ts, NULL);
}


/* {======================================================
** The server process: spawn, reap, describe, kill
** ======================================================= */

/* Wait up to `seconds` for the server to exit; 1 once it has. */
static int wait_exit (Run *r, double seconds) {
  double until = now() + seconds;
  while (r->pid > 0) {
    pid_t p = waitpid(r->pid, &r->status, WNOHANG);
    if (p == r->pid || (p < 0 && errno != EINTR)) {
      r->pid = 0;
      break;
    }
    if (now() >= until) return 0;
    sleep_ms(5);
  }
  return 1;
}

static void describe_exit (const Run *r, char *buf, size_t size) {
  if (r->pid > 0)
    snprintf(buf, size, "still running");
  else if (WIFEXITED(r->status))
    snprintf(buf, size, "exited with code %d", WEXITSTATUS(r->status));
  else if (WIFSIGNALED(r->status))
    snprintf(buf, size, "killed by signal %d", WTERMSIG(r->status));
  else
    snprintf(buf, size, "status %d", r->status);
}

/* Print the message, kill the server if it still runs, exit 1. */
static void fail (Run *r, const char *fmt, ...) {
  va_list ap;
  fputs("loadgen: ", stderr);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  if (r != NULL && r->pid > 0) {
    kill(r->pid, SIGKILL);
    wait_exit(r, 2.0);
  }
  exit(1);
}

/* The server closed a pipe: say how it ended (if it did within 1 s). */
static void server_gone (Run *r, const char *what) {
  char how[64];
  wait_exit(r, 1.0);
  describe_exit(r, how, sizeof how);
  fail(r, "server %s (%s) with %ld requests in flight, after %lld replies",
       what, how, r->inflight, r->replies);
}

static void set_flags (Run *r, int fd) {
  int fl = fcntl(fd, F_GETFL);
  if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 ||
      fcntl(fd, F_SETFD, FD_CLOEXEC) < 0)
    fail(r, "fcntl: %s", strerror(errno));
}

static void spawn (Run *r, char **argv) {
  int in[2], out[2];
  if (pipe(in) != 0 || pipe(out) != 0) fail(r, "pipe: %s", strerror(errno));
  r->pid = fork();
  if (r->pid < 0) fail(r, "fork: %s", strerror(errno));
  if (r->pid == 0) {  /* child: its stdin and stdout are the pipes */
    if (dup2(in[0], 0) < 0 || dup2(out[1], 1) < 0) _exit(127);
    close(in[0]); close(in[1]); close(out[0]); close(out[1]);
    execvp(argv[0], argv);
    fprintf(stderr, "loadgen: cannot run %s: %s\n", argv[0], strerror(errno));
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  r->to_server = in[1];
  r->from_server = out[0];
  set_flags(r, r->to_server);
  set_flags(r, r->from_server);
}

/* The peak resident set so far; /proc keeps it only while the server runs. */
static void sample_hwm (Run *r) {
  char path[64], line[256];
  FILE *f;
  if (r->pid <= 0) return;
  snprintf(path, sizeof path, "/proc/%ld/status", (long)r->pid);
  f = fopen(path, "r");
  if (f == NULL) return;
  while (fgets(line, sizeof line, f) != NULL) {
    if (strncmp(line, "VmHWM:", 6) == 0) {
      long kib = strtol(line + 6, NULL, 10);
      if (kib > r->hwm_kib) r->hwm_kib = kib;
      break;
    }
  }
  fclose(f);
}

/* }====================================================== */


/* {======================================================
** Buffers
** ======================================================= */

/* Make room for `more` bytes after len, sliding pending bytes to the front. */
static void reserve (Run *r, Buffer *b, size_t more) {
  if (b->start > 0 && b->cap - b->len < more) {
    memmove(b->data, b->data + b->start, b->len - b->start);
    b->len -= b->start;
    b->start = 0;
  }
  if (b->cap - b->len < more) {
    size_t cap = b->cap ? b->cap : 4096;
    char *p;
    while (cap - b->len < more) cap *= 2;
    p = (char *)realloc(b->data, cap);
    if (p == NULL) fail(r, "out of memory (%lu bytes)", (unsigned long)cap);
    b->data = p;
    b->cap = cap;
  }
}

static char *put_str (char *p, const char *s) {
  size_t n = strlen(s);
  memcpy(p, s, n);
  return p + n;
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

/* }====================================================== */


/* {======================================================
** Requests
** ======================================================= */

/* A fresh id whose slot is free (a late reply may still hold a slot). */
static long long take_id (Run *r) {
  for (;;) {
    long long id = r->next_id++;
    if (r->slots[(size_t)id & r->mask].id == 0) return id;
  }
}

/* Queue one `subtract` request; params vary with the id (some negative). */
static void queue_request (Run *r) {
  char body[128], *p = body;
  long long id = take_id(r);
  long long a = (id % 100000) * 3, b = id % 1000;
  Slot *slot = &r->slots[(size_t)id & r->mask];
  size_t n;
  p = put_str(p, "{\"jsonrpc\":\"2.0\",\"method\":\"subtract\",\"params\":[");
  p = put_int(p, a);
  *p++ = ',';
  p = put_int(p, b);
  p = put_str(p, "],\"id\":");
  p = put_int(p, id);
  *p++ = '}';
  n = (size_t)(p - body);
  reserve(r, &r->out, n + 40);
  p = r->out.data + r->out.len;
  if (r->opt->lsp) {
    p = put_str(p, "Content-Length: ");
    p = put_int(p, (long long)n);
    p = put_str(p, "\r\n\r\n");
  }
  memcpy(p, body, n);
  p += n;
  if (!r->opt->lsp) *p++ = '\n';
  r->out.len = (size_t)(p - r->out.data);
  slot->id = id;
  slot->expect = a - b;
  r->inflight++;
}

/* Write what the pipe takes now; the rest waits for POLLOUT. */
static void flush_writes (Run *r) {
  Buffer *b = &r->out;
  while (b->start < b->len) {
    ssize_t n = write(r->to_server, b->data + b->start, b->len - b->start);
    if (n > 0) {
      b->start += (size_t)n;
      r->last_progress = now();
    }
    else if (n < 0 && errno == EINTR)
      continue;
    else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
      return;
    else if (n < 0 && errno == EPIPE)
      server_gone(r, "closed its stdin");
    else
      fail(r, "write to server: %s", strerror(errno));
  }
  b->start = b->len = 0;
}

static void top_up (Run *r) {
  while (r->inflight < r->target) queue_request(r);
  flush_writes(r);
}

/* }====================================================== */


/* {======================================================
** Replies: framing, then a minimal scan for the id and the result
** ======================================================= */

static const char *find (const char *s, size_t n, const char *key) {
  size_t k = strlen(key);
  const char *end = s + n;
  while ((size_t)(end - s) >= k) {
    const char *p = (const char *)memchr(s, key[0], (size_t)(end - s) - k + 1);
    if (p == NULL) return NULL;
    if (memcmp(p, key, k) == 0) return p;
    s = p + 1;
  }
  return NULL;
}

static const char *skip_space (const char *p, const char *end) {
  while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')) p++;
  return p;
}

/* The integer value of "key": an optional '-', digits, and an optional
** fraction of zeros (a JSON number like 19.0 is the integer 19). */
static int find_int (const char *s, size_t n, const char *key, long long *v) {
  const char *end = s + n, *p = find(s, n, key);
  int neg = 0, digits = 0;
  long long x = 0;
  if (p == NULL) return 0;
  p = skip_space(p + strlen(key), end);
  if (p >= end || *p != ':') return 0;
  p = skip_space(p + 1, end);
  if (p < end && *p == '-') { neg = 1; p++; }
  for (; p < end && *p >= '0' && *p <= '9'; p++) {
    if (++digits > 18) return 0;
    x = x * 10 + (*p - '0');
  }
  if (digits == 0) return 0;
  if (p < end && *p == '.') {
    for (p++; p < end && *p == '0'; p++) {}
  }
  if (p < end && ((*p >= '0' && *p <= '9') || *p == '.' || *p == 'e' ||
                  *p == 'E'))
    return 0;
  *v = neg ? -x : x;
  return 1;
}

static void check_reply (Run *r, const char *s, size_t n) {
  int shown = n > EXCERPT ? EXCERPT : (int)n;
  long long id, result;
  Slot *slot;
  if (n == 0) return;  /* a blank line between messages */
  if (!find_int(s, n, "\"id\"", &id))
    fail(r, "a reply without an integer id: %.*s", shown, s);
  if (find(s, n, "\"error\"") != NULL)
    fail(r, "server answered id %lld with an error: %.*s", id, shown, s);
  if (!find_int(s, n, "\"result\"", &result))
    fail(r, "a reply without an integer result: %.*s", shown, s);
  slot = &r->slots[(size_t)id & r->mask];
  if (id <= 0 || slot->id != id)
    fail(r, "a reply for id %lld, which is not in flight: %.*s", id, shown, s);
  if (result != slot->expect)
    fail(r, "wrong result for id %lld: got %lld, want %lld",
         id, result, slot->expect);
  slot->id = 0;
  r->inflight--;
  r->replies++;
}

/* Case-insensitive: does the header line at p start with `name`? */
static int header_is (const char *p, const char *end, const char *name) {
  for (; *name != '\0'; p++, name++) {
    char c;
    if (p >= end) return 0;
    c = *p;
    if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
    if (c != *name) return 0;
  }
  return 1;
}

/* An LSP message at p: 1 and its body's offset and length once complete. */
static int next_lsp (Run *r, const char *p, size_t avail,
                     size_t *body, size_t *len) {
  const char *end = find(p, avail < MAX_HEADER ? avail : MAX_HEADER,
                         "\r\n\r\n");
  const char *line;
  long long n = -1;
  if (end == NULL) {
    if (avail >= MAX_HEADER)
      fail(r, "no end of LSP headers in %d bytes: %.*s",
           MAX_HEADER, EXCERPT, p);
    return 0;
  }
  for (line = p; line < end; ) {
    const char *eol = find(line, (size_t)(end + 2 - line), "\r\n");
    if (header_is(line, eol, "content-length:")) {
      const char *q = skip_space(line + 15, eol);
      for (n = 0; q < eol && *q >= '0' && *q <= '9' && n <= MAX_MESSAGE; q++)
        n = n * 10 + (*q - '0');
    }
    line = eol + 2;
  }
  if (n < 0 || n > MAX_MESSAGE)
    fail(r, "a reply without a valid Content-Length: %.*s",
         (int)(end - p) < EXCERPT ? (int)(end - p) : EXCERPT, p);
  *body = (size_t)(end + 4 - p);
  *len = (size_t)n;
  return *body + *len <= avail;
}

/* The next complete message at p: 1 and its body; *total is its size. */
static int next_message (Run *r, const char *p, size_t avail,
                         size_t *body, size_t *len, size_t *total) {
  if (r->opt->lsp) {
    if (!next_lsp(r, p, avail, body, len)) return 0;
    *total = *body + *len;
    return 1;
  }
  else {
    const char *nl = (const char *)memchr(p, '\n', avail);
    if (nl == NULL) return 0;
    *body = 0;
    *len = (size_t)(nl - p);
    if (*len > 0 && p[*len - 1] == '\r') (*len)--;
    *total = (size_t)(nl - p) + 1;
    return 1;
  }
}

static void parse_replies (Run *r) {
  Buffer *b = &r->in;
  size_t body, len, total;
  while (next_message(r, b->data + b->start, b->len - b->start,
                      &body, &len, &total)) {
    check_reply(r, b->data + b->start + body, len);
    b->start += total;
  }
  if (b->start == b->len) b->start = b->len = 0;
  if (b->len - b->start > MAX_MESSAGE)
    fail(r, "a reply longer than %d bytes (or a missing newline): %.*s",
         MAX_MESSAGE, EXCERPT, b->data + b->start);
}

static void read_replies (Run *r) {
  Buffer *b = &r->in;
  ssize_t n;
  reserve(r, b, READ_CHUNK);
  n = read(r->from_server, b->data + b->len, b->cap - b->len);
  if (n == 0) server_gone(r, "closed its stdout");
  if (n < 0) {
    if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) return;
    fail(r, "read from server: %s", strerror(errno));
  }
  b->len += (size_t)n;
  r->last_progress = now();
  parse_replies(r);
  if (r->refill) top_up(r);
}

/* }====================================================== */


/* {======================================================
** Driving the run
** ======================================================= */

/* Wait (at most POLL_MS) for the pipes, move bytes, check for a stall. */
static void step (Run *r) {
  struct pollfd fds[2];
  int nfds = 1;
  double t;
  fds[0].fd = r->from_server;
  fds[0].events = POLLIN;
  fds[0].revents = 0;
  if (r->out.start < r->out.len) {
    fds[1].fd = r->to_server;
    fds[1].events = POLLOUT;
    fds[1].revents = 0;
    nfds = 2;
  }
  if (poll(fds, (nfds_t)nfds, POLL_MS) < 0 && errno != EINTR)
    fail(r, "poll: %s", strerror(errno));
  if (nfds == 2 && fds[1].revents != 0) flush_writes(r);
  if (fds[0].revents != 0) read_replies(r);
  t = now();
  if (t >= r->next_sample) {
    sample_hwm(r);
    r->next_sample = t + POLL_MS / 1000.0;
  }
  if (r->inflight > 0 && t - r->last_progress > r->opt->timeout)
    fail(r, "server stalled: no progress for %.1f s with %ld requests in "
         "flight, after %lld replies", r->opt->timeout, r->inflight,
         r->replies);
}

static void drain (Run *r) {
  r->refill = 0;
  while (r->inflight > 0) step(r);
}

/* K in flight: warm up, then count replies over the measured time. */
static void run_throughput (Run *r, long long *count, double *elapsed) {
  const Options *o = r->opt;
  double start = now(), mark = 0, t;
  long long marked = -1;
  r->target = o->inflight;
  r->refill = 1;
  r->last_progress = start;
  top_up(r);
  for (;;) {
    step(r);
    t = now();
    if (marked < 0 && t >= start + o->warmup) {
      mark = t;
      marked = r->replies;
    }
    if (marked >= 0 && t >= mark + o->seconds) break;
  }
  *count = r->replies - marked;
  *elapsed = t - mark;
  drain(r);
}

/* N in flight at once, no refill: how long all N take, and the peak RSS. */
static void run_peak (Run *r, long long *count, double *elapsed) {
  double start = now();
  r->target = r->opt->peak;
  r->last_progress = start;
  top_up(r);
  drain(r);
  *count = r->replies;
  *elapsed = now() - start;
}

/* Close the server's stdin: it must write nothing more and exit 0. */
static void finish (Run *r) {
  double until = now() + r->opt->timeout;
  char how[64];
  sample_hwm(r);
  close(r->to_server);
  for (;;) {  /* its stdout, until EOF */
    struct pollfd fd;
    char buf[4096];
    ssize_t n;
    double left = until - now();
    if (left <= 0)
      fail(r, "server did not close its stdout within %.1f s of the end of "
           "its input", r->opt->timeout);
    fd.fd = r->from_server;
    fd.events = POLLIN;
    fd.revents = 0;
    poll(&fd, 1, (int)(left * 1000) + 1);
    n = read(r->from_server, buf, sizeof buf);
    if (n == 0) break;
    if (n > 0)
      fail(r, "server wrote after its last reply: %.*s",
           (int)n < EXCERPT ? (int)n : EXCERPT, buf);
    if (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK)
      fail(r, "read from server: %s", strerror(errno));
  }
  close(r->from_server);
  if (!wait_exit(r, until - now()))
    fail(r, "server did not exit within %.1f s of the end of its input",
         r->opt->timeout);
  describe_exit(r, how, sizeof how);
  if (!WIFEXITED(r->status) || WEXITSTATUS(r->status) != 0)
    fail(r, "server %s at the end of its input", how);
}

/* }====================================================== */


/* {======================================================
** Options and main
** ======================================================= */

static void usage (const char *msg) {
  fprintf(stderr, "loadgen: %s\n"
          "usage: loadgen [--framing ndjson|lsp] [--inflight K] "
          "[--seconds S] [--warmup W]\n"
          "               [--peak N] [--timeout T] -- command [args...]\n",
          msg);
  exit(2);
}

static double number (const char *flag, const char *s, double lo, double hi) {
  char *end;
  double v;
  if (s == NULL) usage("a flag without its value");
  v = strtod(s, &end);
  if (end == s || *end != '\0' || !(v >= lo && v <= hi)) {
    fprintf(stderr, "loadgen: %s wants a number in [%g, %g], not '%s'\n",
            flag, lo, hi, s);
    exit(2);
  }
  return v;
}

static void parse_options (Options *o, int argc, char **argv) {
  int i;
  o->lsp = 0;
  o->inflight = 64;
  o->peak = 0;
  o->seconds = 2;
  o->warmup = 0.5;
  o->timeout = 5;
  o->command = NULL;
  for (i = 1; i < argc; i += 2) {
    const char *flag = argv[i], *val = argv[i + 1];
    if (strcmp(flag, "--") == 0) {
      o->command = argv + i + 1;
      break;
    }
    else if (strcmp(flag, "--framing") == 0) {
      if (val == NULL || (strcmp(val, "ndjson") != 0 && strcmp(val, "lsp") != 0))
        usage("--framing is ndjson or lsp");
      o->lsp = strcmp(val, "lsp") == 0;
    }
    else if (strcmp(flag, "--inflight") == 0)
      o->inflight = (long)number(flag, val, 1, 1e6);
    else if (strcmp(flag, "--peak") == 0)
      o->peak = (long)number(flag, val, 1, 1e7);
    else if (strcmp(flag, "--seconds") == 0)
      o->seconds = number(flag, val, 0.01, 3600);
    else if (strcmp(flag, "--warmup") == 0)
      o->warmup = number(flag, val, 0, 3600);
    else if (strcmp(flag, "--timeout") == 0)
      o->timeout = number(flag, val, 0.01, 3600);
    else
      usage("unknown option");
  }
  if (o->command == NULL || o->command[0] == NULL)
    usage("no server command after --");
}

/* Slots: a power of two at least twice the most ever in flight. */
static void init_run (Run *r, const Options *o) {
  size_t size = 1024, most = (size_t)(o->peak > 0 ? o->peak : o->inflight);
  memset(r, 0, sizeof *r);
  r->opt = o;
  r->next_id = 1;
  while (size < 2 * most) size *= 2;
  r->slots = (Slot *)calloc(size, sizeof(Slot));
  if (r->slots == NULL) fail(r, "out of memory");
  r->mask = size - 1;
}

int main (int argc, char **argv) {
  Options opt;
  Run run;
  long long count;
  double elapsed;
  parse_options(&opt, argc, argv);
  init_run(&run, &opt);
  signal(SIGPIPE, SIG_IGN);  /* a dead server is EPIPE, not our death */
  spawn(&run, opt.command);
  if (opt.peak > 0)
    run_peak(&run, &count, &elapsed);
  else
    run_throughput(&run, &count, &elapsed);
  finish(&run);
  printf("framing=%s inflight=%ld replies=%lld seconds=%.3f rps=%.0f "
         "hwm_kib=%ld\n", opt.lsp ? "lsp" : "ndjson",
         opt.peak > 0 ? opt.peak : opt.inflight, count, elapsed,
         elapsed > 0 ? (double)count / elapsed : 0.0, run.hwm_kib);
  return 0;
}

/* }====================================================== */
