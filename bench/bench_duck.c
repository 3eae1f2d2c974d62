/*
** bench/bench_duck.c: the DuckDB side of the benchmark, through a child process.
**
** DuckDB's C library is not a Debian package, and the PyPI wheel carries only the Python
** module, so the bench drives DuckDB through bench/duck_peer.py (the `duckdb` package in
** a venv under build/, installed by bench/run.sh): one interpreter started at the first
** use and kept for the whole bench, one command line per operation over a pipe, one
** answer line back. The child times each statement itself (the pipe and the interpreter
** start are not in the figures) and returns it in bench_self_seconds. Load: DuckDB's own
** CSV reader over the same prepared files (input_*.csv of the data set), TS built from the
** year/month/day/hour columns, one INSERT ... SELECT. Reads: COUNT(*) (for the agreement
** checks and the filtered scan) and the daily average; the other reads are NULL in the
** vtable (DuckDB is a peer for the analytic figures). Size: after CHECKPOINT and close,
** every file of the directory. Settings (threads, memory_limit): bench_duck_threads and
** bench_duck_memory, passed to the child in its environment.
**
** What it does not: secondary indexes, point or range reads, or parse CSV in C.
*/
#include "bench.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

const char *bench_duck_python = NULL;   /* interpreter with duckdb; NULL: no DuckDB */
const char *bench_duck_script = "bench/duck_peer.py";
int bench_duck_threads = 2;
const char *bench_duck_memory = "64MB";
double bench_self_seconds = -1;

static FILE *to_child, *from_child;     /* the pipes to and from the child */
static pid_t child;                     /* its pid, 0 before the first start */

typedef struct dk {
  char dir[4096];                       /* the database directory */
} dk;

static int start(void) {
  if (child) return 0;
  if (!bench_duck_python) return -1;
  int in[2], out[2];
  if (pipe(in) != 0 || pipe(out) != 0) return -1;
  char threads[16];
  snprintf(threads, sizeof threads, "%d", bench_duck_threads);
  fflush(NULL);
  child = fork();
  if (child < 0) return -1;
  if (child == 0) {
    dup2(in[0], 0);
    dup2(out[1], 1);
    close(in[0]); close(in[1]); close(out[0]); close(out[1]);
    setenv("ROWAN_DUCK_THREADS", threads, 1);
    setenv("ROWAN_DUCK_MEMORY", bench_duck_memory, 1);
    execl(bench_duck_python, bench_duck_python, bench_duck_script, (char *)NULL);
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  to_child = fdopen(in[1], "w");
  from_child = fdopen(out[0], "r");
  return to_child && from_child ? 0 : -1;
}

/* Send one command; parse "ok SECONDS A B" into *a, *b and bench_self_seconds. */
static int call(const char *cmd, int64_t *a, double *b) {
  if (start() != 0) { fprintf(stderr, "bench: DuckDB: cannot start %s\n", bench_duck_script); return -1; }
  fprintf(to_child, "%s\n", cmd);
  fflush(to_child);
  char line[4096];
  if (!fgets(line, sizeof line, from_child)) {
    fprintf(stderr, "bench: DuckDB: the child process ended (command: %s)\n", cmd);
    return -1;
  }
  double s = 0, bb = 0;
  long long aa = 0;
  if (strncmp(line, "ok ", 3) != 0 || sscanf(line + 3, "%lf %lld %lf", &s, &aa, &bb) != 3) {
    fprintf(stderr, "bench: DuckDB: %s: %s", cmd, line);
    return -1;
  }
  bench_self_seconds = s;
  if (a) *a = aa;
  if (b) *b = bb;
  return 0;
}

void bench_duck_stop(void) {
  if (!child) return;
  fclose(to_child);
  fclose(from_child);
  waitpid(child, NULL, 0);
  child = 0;
}

static int dk_create(void **out, const char *dir, int with_index, int *unsupported) {
  *out = NULL;
  *unsupported = with_index != 0;
  if (with_index) return -1;
  dk *h = calloc(1, sizeof *h);
  *out = h;
  if (!h) return -1;
  snprintf(h->dir, sizeof h->dir, "%s", dir);
  char cmd[4200];
  snprintf(cmd, sizeof cmd, "create %s", dir);
  return call(cmd, NULL, NULL);
}

static int dk_open(void **out, const char *dir) {
  dk *h = calloc(1, sizeof *h);
  *out = h;
  if (!h) return -1;
  snprintf(h->dir, sizeof h->dir, "%s", dir);
  char cmd[4200];
  snprintf(cmd, sizeof cmd, "open %s", dir);
  return call(cmd, NULL, NULL);
}

static int dk_load(void *vh, const bench_input *in, int batch_rows) {
  (void)vh; (void)batch_rows;
  char cmd[4200];
  int64_t n = 0;
  snprintf(cmd, sizeof cmd, "load %s/input_*.csv", in->dir);
  if (call(cmd, &n, NULL) != 0) return -1;
  if (n != in->rows) {
    fprintf(stderr, "bench: DuckDB: loaded %lld rows, expected %lld\n", (long long)n,
            (long long)in->rows);
    return -1;
  }
  return 0;
}

static int dk_finish(void *vh, const char *dir, uint64_t *bytes) {
  free(vh);
  if (call("finish", NULL, NULL) != 0) return -1;
  *bytes = bench_dir_bytes(dir);
  return 0;
}

static void dk_close(void *vh) {
  if (!vh) return;
  free(vh);
  call("close", NULL, NULL);
}

static int dk_count_all(void *h, int64_t *n) { (void)h; return call("count all", n, NULL); }
static int dk_count_temp_gt(void *h, double t, int64_t *n) {
  char cmd[64];
  (void)h;
  snprintf(cmd, sizeof cmd, "count gt %.1f", t);
  return call(cmd, n, NULL);
}
static int dk_count_temp_null(void *h, int64_t *n) { (void)h; return call("count null", n, NULL); }

static int dk_daily_avg(void *h, int64_t from, int64_t to, bench_digest *d) {
  char cmd[128];
  int64_t groups = 0;
  double sum = 0;
  (void)h;
  snprintf(cmd, sizeof cmd, "daily %lld %lld", (long long)from, (long long)to);
  if (call(cmd, &groups, &sum) != 0) return -1;
  d->rows += groups;
  d->sum += sum;
  return 0;
}

const bench_engine bench_duck = {
    "DuckDB",      dk_create,          dk_load,   dk_finish,   dk_open,
    dk_count_all,  dk_count_temp_gt,   dk_count_temp_null,     NULL,                   NULL,
    NULL,          NULL,               dk_daily_avg,           dk_close};
