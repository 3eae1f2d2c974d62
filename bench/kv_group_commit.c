/*
** bench/kv_group_commit.c: group commit measured under concurrent writers, on the real disk.
** For 1, 2, 4 and 8 writer threads, each committing small batches (one row, four cells)
** to one store opened with KV_SYNC_FULL, it prints commits per second and fdatasyncs per
** commit (counted by wrapping the POSIX env's sync). Group commit shows as syncs per commit
** falling below 1 as writers are added while commits per second rise.
** Usage: bench_kv_group_commit [dir [seconds-per-run]] (default: a new folder under /tmp,
** 2 s). Run by hand; not a test. Each run uses a fresh store that is left in dir.
*/
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kv/env/env.h"
#include "kv/kv.h"

static kv_env counting_env;             /* the POSIX env with a counting sync */
static atomic_uint_least64_t n_syncs;   /* data syncs (WAL and others) */
static int (*posix_sync)(kv_file *f);   /* the wrapped sync */

static int counting_sync(kv_file *f) {
  atomic_fetch_add(&n_syncs, 1);
  return posix_sync(f);
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

typedef struct writer_arg {
  kv_db *db;          /* the store */
  uint32_t fid;       /* family written */
  int id;             /* writer number (row key prefix) */
  double until;       /* stop time */
  uint64_t commits;   /* commits done */
  int err;            /* first error */
} writer_arg;

static void *writer(void *p) {
  writer_arg *a = p;
  kv_batch *b = kv_batch_new();
  char row[32], val[16];
  while (now_s() < a->until) {
    kv_batch_clear(b);
    int rl = snprintf(row, sizeof row, "w%02d-%012llu", a->id, (unsigned long long)a->commits);
    if (rl < 0 || rl >= (int)sizeof row) rl = (int)sizeof row - 1; /* truncated: its bytes */
    for (int q = 0; q < 4; q++) {
      char qual[2] = {(char)('a' + q), 0};
      int vl = snprintf(val, sizeof val, "%d", q * 7);
      kv_batch_put(b, a->fid, row, (size_t)rl, qual, 1, KV_TS_NOW, val, (size_t)vl);
    }
    int rc = kv_commit(a->db, b, NULL);
    if (rc) {
      a->err = rc;
      break;
    }
    a->commits++;
  }
  kv_batch_free(b);
  return NULL;
}

int main(int argc, char **argv) {
  char base[256];
  if (argc > 1) snprintf(base, sizeof base, "%s", argv[1]);
  else {
    snprintf(base, sizeof base, "/tmp/kv_group_commit.XXXXXX");
    if (!mkdtemp(base)) {
      perror("mkdtemp");
      return 1;
    }
  }
  double secs = argc > 2 ? atof(argv[2]) : 2.0;
  counting_env = *kv_env_posix();
  posix_sync = counting_env.sync;
  counting_env.sync = counting_sync;
  counting_env.destroy = NULL;
  printf("group commit, KV_SYNC_FULL, store under %s, %.1f s per run\n", base, secs);
  printf("%8s %12s %12s %16s\n", "writers", "commits", "commits/s", "syncs/commit");
  const int counts[] = {1, 2, 4, 8};
  for (int c = 0; c < 4; c++) {
    int nw = counts[c];
    char path[300];
    snprintf(path, sizeof path, "%s/w%d", base, nw);
    kv_options o;
    kv_options_init(&o);
    o.env = &counting_env;
    o.create_if_missing = true;
    o.sync_mode = KV_SYNC_FULL;
    kv_db *db;
    if (kv_open(path, &o, &db) != KV_OK) {
      fprintf(stderr, "kv_open %s: %s\n", path, kv_errmsg());
      return 1;
    }
    kv_family_options f = {.name = "f"};
    uint32_t fid;
    if (kv_create_table(db, "t", &f, 1) != KV_OK || kv_family_id(db, "t", "f", &fid) != KV_OK) {
      fprintf(stderr, "create table: %s\n", kv_errmsg());
      return 1;
    }
    pthread_t th[8];
    writer_arg args[8];
    uint64_t syncs0 = atomic_load(&n_syncs);
    double t0 = now_s();
    for (int i = 0; i < nw; i++) {
      args[i] = (writer_arg){db, fid, i, t0 + secs, 0, 0};
      pthread_create(&th[i], NULL, writer, &args[i]);
    }
    uint64_t commits = 0;
    for (int i = 0; i < nw; i++) {
      pthread_join(th[i], NULL);
      commits += args[i].commits;
      if (args[i].err) fprintf(stderr, "writer %d: %s\n", i, kv_status_name(args[i].err));
    }
    double el = now_s() - t0;
    uint64_t syncs = atomic_load(&n_syncs) - syncs0;
    printf("%8d %12llu %12.0f %16.3f\n", nw, (unsigned long long)commits,
           (double)commits / el, commits ? (double)syncs / (double)commits : 0.0);
    kv_close(db);
  }
  return 0;
}
