/*
** allocfail.c -- allocation-failure test host for the jrpc core (ours).
**
**   build/allocfail SESSION.lua      (make test-allocfail)
**
** Compiles src/core.c in (src/core_tls.c too, its own translation unit,
** in package.preload: jrpc.core requires it on first use of TLS or
** crypto, which the session does under failures too) and runs the core
** session of SESSION.lua
** (spec/host/allocfail.lua: codecs in both framings, requests, batches,
** responses, invalid input, writers, a pending table, decode/encode, the
** HTTP reader and writers, the HTTP response reader and request writer,
** a TLS client's first steps, crypto) in a
** fresh lua_State whose allocator fails the Nth allocation request, for
** every N from 1 to the number of requests a run without failures makes,
** in two modes:
**   once    only the Nth request fails (Lua retries after an emergency
**           collection; the core's own buffers and cJSON do not);
**   sticky  the Nth and every later request fail until the host gets
**           control back (memory is gone for good).
** The runs happen in fork()ed children (CHUNK runs each, one child per
** CPU), so a crash is counted, not fatal: the child's remaining runs go
** on in a new child. A run passes when
**   - it ends either with the exact transcript of the run without
**     failures, or with a memory error: status LUA_ERRMEM, or LUA_ERRRUN
**     with the message "not enough memory" (what a C function can raise:
**     lauxlib's own buffers fail the same way); a sticky run that fails
**     at request N <= total must end with that error or lua_newstate
**     returning NULL, unless Lua absorbed the failure (string table
**     growth) and the transcript is still exact;
**   - after lua_close no byte is outstanding, counted separately for the
**     Lua allocator and for cJSON;
**   - every block is freed with the size it was allocated with (Lua's
**     allocator contract; the core passes sizes itself).
** cJSON allocates with malloc, not with the Lua allocator: cJSON_InitHooks
** routes it through the same counting (and failing) allocator here. The
** hooks are global to libcjson, which is why this is done only in this
** host, a separate process, and never in the module.
**
** The last line is "allocfail: N runs, M failures injected, L leaks,
** C crashes"; the exit status is 0 only when every run passed.
*/
#define _POSIX_C_SOURCE 200809L

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lua.h"
#include "lauxlib.h"
#include "lualib.h"

#include "core.c"   /* the whole core, one translation unit as in core.so */


/* exit statuses of a run */
#define RUN_OK        0
#define RUN_LEAK      1
#define RUN_WRONG     2    /* wrong result or wrong kind of error */
#define RUN_BADSIZE   3    /* a block freed with the wrong size */
#define RUN_ABSORBED  4    /* sticky: no error, yet an exact transcript */
#define RUN_SETUP     5    /* the host itself failed */

#define RUN_TIMEOUT   20   /* seconds a run may take */

enum { MODE_NONE, MODE_ONCE, MODE_STICKY };
static const char *const mode_names[] = {"none", "once", "sticky"};


/* {======================================================
** The counting, failing allocator (Lua's and cJSON's)
** ======================================================= */

/* every block carries its size and owner in front of it */
typedef union Header {
  struct { size_t size; unsigned magic; } h;
  long double align1;
  void *align2;
  long long align3;
} Header;

#define MAGIC_LUA    0x4c554121u
#define MAGIC_CJSON  0x434a5321u

static struct {
  long requests;      /* allocation requests so far */
  long counted;       /* requests made before the session ended */
  long fail_at;       /* request to fail (1-based); 0: never */
  int mode;
  int failing;        /* sticky: failing until the host takes over */
  long injected;      /* requests refused */
  size_t lua_bytes;   /* outstanding through the Lua allocator */
  size_t cjson_bytes; /* outstanding through cJSON's hooks */
  long bad_size;      /* frees/reallocs with a wrong old size or owner */
} K;


/* should this allocation request fail? */
static int refuse (void) {
  K.requests++;
  if (K.failing || (K.fail_at != 0 && K.requests == K.fail_at)) {
    if (K.mode == MODE_STICKY) K.failing = 1;
    K.injected++;
    return 1;
  }
  return 0;
}


static void *l_alloc (void *ud, void *ptr, size_t osize, size_t nsize) {
  Header *h = (ptr != NULL) ? (Header *)ptr - 1 : NULL;
  Header *nh;
  (void)ud;
  if (h != NULL && (h->h.magic != MAGIC_LUA || h->h.size != osize)) {
    fprintf(stderr, "allocfail: block %p freed/resized with size %lu, "
            "allocated with %lu (magic %x)\n", ptr, (unsigned long)osize,
            (unsigned long)h->h.size, h->h.magic);
    K.bad_size++;
    osize = h->h.size;
  }
  if (nsize == 0) {
    if (h != NULL) {
      K.lua_bytes -= h->h.size;
      free(h);
    }
    return NULL;
  }
  /* Lua assumes that shrinking never fails */
  if ((h == NULL || nsize > osize) && refuse())
    return NULL;
  nh = (Header *)realloc(h, sizeof(Header) + nsize);
  if (nh == NULL) return NULL;
  if (h != NULL) K.lua_bytes -= osize;
  K.lua_bytes += nsize;
  nh->h.size = nsize;
  nh->h.magic = MAGIC_LUA;
  return nh + 1;
}


static void *cj_malloc (size_t n) {
  Header *h;
  if (refuse()) return NULL;
  h = (Header *)malloc(sizeof(Header) + n);
  if (h == NULL) return NULL;
  h->h.size = n;
  h->h.magic = MAGIC_CJSON;
  K.cjson_bytes += n;
  return h + 1;
}


static void cj_free (void *p) {
  Header *h;
  if (p == NULL) return;
  h = (Header *)p - 1;
  if (h->h.magic != MAGIC_CJSON) {
    fprintf(stderr, "allocfail: cJSON freed a block it did not allocate\n");
    K.bad_size++;
    return;
  }
  K.cjson_bytes -= h->h.size;
  free(h);
}

/* }====================================================== */


/* {======================================================
** One run
** ======================================================= */

static const char *chunk;      /* the session's source */
static size_t chunklen;
static char *reference;        /* its transcript without failures */
static size_t reflen;

/* how a run ended */
enum { END_TRANSCRIPT, END_DIFFERENT, END_ERRMEM, END_NOMEM_MSG, END_NOSTATE,
       END_OTHER, END_N };

typedef struct Report {
  int status;       /* RUN_ */
  int end;          /* END_ */
  long requests;    /* allocation requests the session made */
  long injected;    /* requests refused */
} Report;


/* runs protected: the standard libraries, the core, jrpc.core_tls to preload */
static int open_all (lua_State *L) {
  luaL_openlibs(L);
  luaL_requiref(L, "jrpc.core", luaopen_jrpc_core, 0);
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
  lua_pushcfunction(L, luaopen_jrpc_core_tls);
  lua_setfield(L, -2, "jrpc.core_tls");
  return 0;
}


/*
** Stop failing: the session is over (lua_close allocates nothing of ours;
** a finalizer it cannot call is Lua's business). Requests made after
** this are not counted.
*/
static void stop_failing (void) {
  K.fail_at = 0;
  K.failing = 0;
  K.counted = K.requests;
}


/*
** The message of a memory error raised by a C function: "not enough
** memory", as lauxlib raises it (and pending.c), or with the position
** luaL_error puts in front ("chunk:line: not enough memory").
*/
static int nomem_message (const char *msg) {
  static const char nomem[] = "not enough memory";
  size_t len = (msg != NULL) ? strlen(msg) : 0;
  if (len < sizeof(nomem) - 1) return 0;
  if (len == sizeof(nomem) - 1) return strcmp(msg, nomem) == 0;
  return strcmp(msg + len - (sizeof(nomem) - 1), nomem) == 0 &&
         msg[len - sizeof(nomem)] == ' ' && msg[len - sizeof(nomem) - 1] == ':';
}


/* length of the line at 's' (at most 300 bytes) */
static int linelen (const char *s, size_t n) {
  const char *nl = (const char *)memchr(s, '\n', n);
  size_t len = nl ? (size_t)(nl - s) : n;
  return (int)(len < 300 ? len : 300);
}


/* compare the transcript on top with the reference */
static int exact (lua_State *L, long fail_at) {
  size_t len, i = 0;
  const char *s = lua_tolstring(L, -1, &len);
  if (s != NULL && len == reflen && memcmp(s, reference, len) == 0)
    return 1;
  fprintf(stderr, "allocfail: mode %s, request %ld: the session succeeded "
          "with a different transcript\n", mode_names[K.mode], fail_at);
  if (s != NULL) {
    while (i < len && i < reflen && s[i] == reference[i]) i++;
    while (i > 0 && s[i - 1] != '\n') i--;  /* start of the line */
    fprintf(stderr, "  expected: %.*s\n  got:      %.*s\n",
            linelen(reference + i, reflen - i), reference + i,
            linelen(s + i, len - i), s + i);
  }
  return 0;
}


/*
** One session with request 'fail_at' failing in 'mode'. In MODE_NONE the
** transcript is kept as the reference.
*/
static Report run (int mode, long fail_at) {
  Report R;
  lua_State *L;
  int status;
  memset(&K, 0, sizeof(K));
  memset(&R, 0, sizeof(R));
  K.mode = mode;
  K.fail_at = fail_at;
  L = lua_newstate(l_alloc, NULL);
  if (L == NULL) {  /* a failure inside lua_newstate: nothing may be left */
    stop_failing();
    R.end = END_NOSTATE;
    R.status = (mode == MODE_NONE) ? RUN_SETUP : RUN_OK;
    goto check;
  }
  lua_pushcfunction(L, open_all);
  status = lua_pcall(L, 0, 0, 0);
  if (status == LUA_OK)
    status = luaL_loadbuffer(L, chunk, chunklen, "=allocfail.lua");
  if (status == LUA_OK)
    status = lua_pcall(L, 0, 1, 0);
  stop_failing();
  if (status == LUA_OK) {
    R.end = END_TRANSCRIPT;
    if (mode == MODE_NONE) {
      size_t len;
      const char *s = lua_tolstring(L, -1, &len);
      reference = (char *)malloc(len + 1);
      if (reference == NULL || s == NULL) R.status = RUN_SETUP;
      else { memcpy(reference, s, len); reflen = len; }
    }
    else if (!exact(L, fail_at)) {
      R.end = END_DIFFERENT;
      R.status = RUN_WRONG;
    }
    else if (mode == MODE_STICKY && K.injected > 0) R.status = RUN_ABSORBED;
  }
  else {
    const char *msg = lua_tostring(L, -1);
    if (status == LUA_ERRMEM) R.end = END_ERRMEM;
    else if (status == LUA_ERRRUN && nomem_message(msg))
      R.end = END_NOMEM_MSG;
    else R.end = END_OTHER;
    if (mode == MODE_NONE || R.end == END_OTHER) {
      fprintf(stderr, "allocfail: mode %s, request %ld: error (status %d): "
              "%s\n", mode_names[mode], fail_at, status,
              msg ? msg : "(not a string)");
      R.status = RUN_WRONG;
    }
  }
  lua_close(L);
 check:
  R.requests = K.counted;
  R.injected = K.injected;
  if (K.lua_bytes != 0 || K.cjson_bytes != 0) {
    fprintf(stderr, "allocfail: mode %s, request %ld: %lu bytes (Lua) and "
            "%lu bytes (cJSON) still allocated after lua_close\n",
            mode_names[mode], fail_at, (unsigned long)K.lua_bytes,
            (unsigned long)K.cjson_bytes);
    R.status = RUN_LEAK;
  }
  else if (K.bad_size != 0) R.status = RUN_BADSIZE;
  return R;
}

/* }====================================================== */


/* {======================================================
** Runs in child processes, a few at a time
** ======================================================= */

#define MAXJOBS  8
#define CHUNK    200   /* runs per child: 200 reports fit a pipe's buffer */

typedef struct Range {
  int mode;
  long from, to;    /* requests to fail, one run each */
} Range;

typedef struct Job {
  pid_t pid;        /* 0: free */
  int fd;           /* read end of the child's report pipe */
  Range r;
} Job;

typedef struct Tally {
  long runs, injected, leaks, crashes, wrong, badsize;
  long absorbed[3];
  long ends[3][END_N];
} Tally;


static void start_job (Job *J, const Range *r) {
  int fd[2];
  fflush(stdout);
  fflush(stderr);
  if (pipe(fd) != 0) { perror("allocfail: pipe"); exit(2); }
  J->pid = fork();
  if (J->pid < 0) { perror("allocfail: fork"); exit(2); }
  if (J->pid == 0) {
    long n;
    close(fd[0]);
    for (n = r->from; n <= r->to; n++) {
      Report R;
      alarm(RUN_TIMEOUT);
      R = run(r->mode, n);
      if (write(fd[1], &R, sizeof(R)) != (ssize_t)sizeof(R)) _exit(1);
    }
    _exit(0);
  }
  close(fd[1]);
  J->fd = fd[0];
  J->r = *r;
}


static void count (Tally *T, int mode, long n, const Report *R) {
  T->runs++;
  T->injected += R->injected;
  T->ends[mode][R->end]++;
  switch (R->status) {
    case RUN_ABSORBED: T->absorbed[mode]++; break;
    case RUN_LEAK: T->leaks++; break;
    case RUN_WRONG: T->wrong++; break;
    case RUN_BADSIZE: T->badsize++; break;
    case RUN_OK: break;
    default:
      fprintf(stderr, "allocfail: mode %s, request %ld: host error\n",
              mode_names[mode], n);
      T->crashes++;
      break;
  }
}


/*
** Wait for any child and count the runs it reported. If it died in the
** middle, the next run of its range is a crash; the rest of the range
** goes into '*rest' (returns 1).
*/
static int finish_job (Job *jobs, Tally *T, Range *rest) {
  Report R;
  Job *J = NULL;
  long n;
  int st, i;
  pid_t pid;
  do {
    pid = waitpid(-1, &st, 0);
    if (pid < 0) { perror("allocfail: waitpid"); exit(2); }
    for (i = 0; i < MAXJOBS; i++)
      if (jobs[i].pid == pid) J = &jobs[i];
  } while (J == NULL);
  for (n = J->r.from; n <= J->r.to; n++) {
    if (read(J->fd, &R, sizeof(R)) != (ssize_t)sizeof(R)) break;
    count(T, J->r.mode, n, &R);
  }
  close(J->fd);
  J->pid = 0;
  if (n > J->r.to && WIFEXITED(st) && WEXITSTATUS(st) == 0)
    return 0;
  T->runs++;
  T->crashes++;
  if (WIFSIGNALED(st))
    fprintf(stderr, "allocfail: mode %s, request %ld: killed by signal %d\n",
            mode_names[J->r.mode], n, WTERMSIG(st));
  else
    fprintf(stderr, "allocfail: mode %s, request %ld: exit status %d\n",
            mode_names[J->r.mode], n, WEXITSTATUS(st));
  if (n >= J->r.to) return 0;
  rest->mode = J->r.mode;
  rest->from = n + 1;
  rest->to = J->r.to;
  return 1;
}


/* every request 1..total of the session fails once in each mode */
static void run_all (long total, int njobs, Tally *T) {
  Job jobs[MAXJOBS];
  /* a crash pops one range and pushes at most one back */
  Range *todo = (Range *)malloc(sizeof(Range) *
                                (size_t)(2 * (total / CHUNK + 1) + MAXJOBS));
  int ntodo = 0, active = 0, i, mode;
  long n;
  if (todo == NULL) { perror("allocfail"); exit(2); }
  memset(jobs, 0, sizeof(jobs));
  for (mode = MODE_STICKY; mode >= MODE_ONCE; mode--)  /* a stack */
    for (n = ((total - 1) / CHUNK) * CHUNK + 1; n >= 1; n -= CHUNK) {
      todo[ntodo].mode = mode;
      todo[ntodo].from = n;
      todo[ntodo].to = (n + CHUNK - 1 < total) ? n + CHUNK - 1 : total;
      ntodo++;
    }
  while (ntodo > 0 || active > 0) {
    if (ntodo > 0 && active < njobs) {
      for (i = 0; jobs[i].pid != 0; i++) ;
      start_job(&jobs[i], &todo[--ntodo]);
      active++;
    }
    else {
      active--;
      if (finish_job(jobs, T, &todo[ntodo])) ntodo++;
    }
  }
  free(todo);
}

/* }====================================================== */


static char *read_file (const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  char *buf = NULL;
  size_t cap = 0, n = 0;
  if (f == NULL) return NULL;
  for (;;) {
    size_t got;
    if (cap - n < 4096) {
      char *nb = (char *)realloc(buf, cap + 65536);
      if (nb == NULL) { free(buf); fclose(f); return NULL; }
      buf = nb;
      cap += 65536;
    }
    got = fread(buf + n, 1, cap - n, f);
    n += got;
    if (got == 0) break;
  }
  fclose(f);
  *len = n;
  return buf;
}


int main (int argc, char **argv) {
  cJSON_Hooks hooks;
  Report R;
  Tally T;
  long total, ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  int mode, njobs = (ncpu < 1) ? 1 : (ncpu > MAXJOBS) ? MAXJOBS : (int)ncpu;
  char *src;
  if (argc != 2) {
    fprintf(stderr, "usage: allocfail SESSION.lua\n");
    return 2;
  }
  src = read_file(argv[1], &chunklen);
  if (src == NULL) {
    fprintf(stderr, "allocfail: cannot read %s\n", argv[1]);
    return 2;
  }
  chunk = src;
  hooks.malloc_fn = cj_malloc;
  hooks.free_fn = cj_free;
  cJSON_InitHooks(&hooks);
  /* the reference run, in this process: its transcript and its count */
  R = run(MODE_NONE, 0);
  if (R.status != RUN_OK) {
    fprintf(stderr, "allocfail: the session fails with no failure injected\n");
    return 1;
  }
  total = R.requests;
  printf("allocfail: the session makes %ld allocation requests (transcript "
         "of %lu bytes); %d runs at a time\n", total, (unsigned long)reflen,
         njobs);
  memset(&T, 0, sizeof(T));
  run_all(total, njobs, &T);
  for (mode = MODE_ONCE; mode <= MODE_STICKY; mode++)
    printf("allocfail: mode %s: %ld exact transcripts%s, %ld different "
           "transcripts, %ld LUA_ERRMEM, %ld \"not enough memory\" errors "
           "raised by C functions, %ld lua_newstate NULL, %ld other errors\n",
           mode_names[mode], T.ends[mode][END_TRANSCRIPT], (mode == MODE_ONCE)
             ? " (Lua retried after a collection)"
             : (T.absorbed[mode] ? " (a failure Lua absorbed)" : ""),
           T.ends[mode][END_DIFFERENT],
           T.ends[mode][END_ERRMEM], T.ends[mode][END_NOMEM_MSG],
           T.ends[mode][END_NOSTATE], T.ends[mode][END_OTHER]);
  printf("allocfail: %ld wrong outcomes, %ld size mismatches\n", T.wrong,
         T.badsize);
  printf("allocfail: %ld runs, %ld failures injected, %ld leaks, %ld "
         "crashes\n", T.runs, T.injected, T.leaks, T.crashes);
  free(src);
  free(reference);
  return (T.leaks || T.crashes || T.wrong || T.badsize) ? 1 : 0;
}
