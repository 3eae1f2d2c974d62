/*
** exec/op_parallel_attach.c: the parallel scan's setting (the session's scan threads and
** minimum rows) and its decision (exec_par_attach, exec/parallel.h): whether a query's scan
** is cut, and where: the backend's split points (region boundaries) and the local store's
** block-index cut points, sorted and spread, handed to the plan (planner/parallel.c; a
** salted table's or index's scan to plan_par_build_salted). Says why a scan that could be cut
** stays serial (the statement's reason, the SERIAL hint, a transaction's writes, an index
** scan on a row-atomic backend, whose read repair writes).
** Not here: running the chunks (exec/op_parallel.c), the merges (exec/op_parallel_merge.c).
*/
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exec/colagg.h"
#include "exec/engine_int.h"
#include "exec/parallel.h"
#include "planner/colagg.h"
#include "planner/hint.h"

/* ---- The setting --------------------------------------------------------------------- */
int exec_set_parallel(exec_session *s, int threads, int64_t min_rows, exec_error *err) {
  if (threads < 0 || threads > EXEC_PAR_THREADS_MAX)
    return exec_fail(err, EXEC_MISUSE, -1,
                     "scan threads must be 0 (the number of processors) to %d, not %d",
                     EXEC_PAR_THREADS_MAX, threads);
  s->par_threads = threads;
  s->par_min_rows = min_rows < 0 ? PLAN_PAR_MIN_ROWS_DEFAULT : (uint64_t)min_rows;
  s->par_min_set = true;
  return EXEC_OK;
}

static int n_cpus;                           /* online processors, read once */
static pthread_once_t cpus_once = PTHREAD_ONCE_INIT;

static void read_cpus(void) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  n_cpus = n < 1 ? 1 : n > EXEC_PAR_THREADS_MAX ? EXEC_PAR_THREADS_MAX : (int)n;
}

int exec_parallel_threads(const exec_session *s) {
  if (s->par_threads > 0) return s->par_threads;
  pthread_once(&cpus_once, read_cpus); /* (sysconf reads /sys: not at every statement) */
  return n_cpus;
}

uint64_t exec_parallel_min_rows(const exec_session *s) {
  return s->par_min_set ? s->par_min_rows : PLAN_PAR_MIN_ROWS_DEFAULT;
}

/* ---- The decision -------------------------------------------------------------------- */
typedef struct cuts {
  uint8_t **k;   /* keys (malloc each) */
  uint32_t *len; /* their lengths */
  uint32_t n, cap; /* count, allocated */
  bool nomem;    /* an allocation failed */
} cuts;

static void add_cut(void *ctx, const uint8_t *key, uint32_t len) {
  cuts *c = ctx;
  if (c->nomem || !len) return;
  if (c->n == c->cap) {
    uint32_t nc = c->cap ? c->cap * 2 : 16;
    uint8_t **nk = realloc(c->k, nc * sizeof *nk);
    if (nk) c->k = nk;
    uint32_t *nl = realloc(c->len, nc * sizeof *nl);
    if (nl) c->len = nl;
    if (!nk || !nl) return (void)(c->nomem = true);
    c->cap = nc;
  }
  uint8_t *p = malloc(len);
  if (!p) return (void)(c->nomem = true);
  memcpy(p, key, len);
  c->k[c->n] = p;
  c->len[c->n++] = len;
}

static int cut_cmp(const void *a, const void *b, void *ctx) {
  const cuts *c = ctx;
  uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
  size_t n = c->len[i] < c->len[j] ? c->len[i] : c->len[j];
  int r = memcmp(c->k[i], c->k[j], n);
  return r ? r : c->len[i] < c->len[j] ? -1 : c->len[i] > c->len[j];
}

static void cuts_free(cuts *c) {
  for (uint32_t i = 0; i < c->n; i++) free(c->k[i]);
  free(c->k);
  free(c->len);
}

static const char TXN_WHY[] = "the transaction's uncommitted writes are read by one scan";
static const char REPAIR_WHY[] =
    "an index scan on a row-atomic backend repairs unverified index rows (PHOENIX-5156) on "
    "the statement's thread";

int exec_par_attach(exec_session *s, plan_query *q, plan_arena *A, const char *serial_why,
                    bool declined, exec_error *err) {
  const char *why = NULL;
  uint64_t min_rows = exec_parallel_min_rows(s);
  /* the columnar aggregate's chunks follow the scan threads setting once one is made
     (exec_set_parallel: rowan_set_scan_threads, the shell's .threads), at most its own
     limit, whatever the scan's size; unset, PLAN_COLAGG_THREADS on any machine, as before */
  int cth = s->par_min_set ? exec_parallel_threads(s) : PLAN_COLAGG_THREADS;
  q->colagg_threads = cth < EXEC_COLAGG_THREADS ? cth : EXEC_COLAGG_THREADS;
  if (serial_why || plan_hint_has(q->sel->hint, "SERIAL")) q->colagg_threads = 1;
  if (!plan_par_eligible(q, min_rows, &why) && !why) { /* a point lookup, a small scan ... */
    q->par = NULL;
    return EXEC_OK;
  }
  int threads = exec_parallel_threads(s);
  if (q->par && q->par->asked == threads && q->par->min_rows == min_rows &&
      q->par->serial_why != TXN_WHY)
    return EXEC_OK; /* a kept plan, cut for these settings (and not kept serial by writes a
                       transaction may have committed since) */
  q->par = NULL;
  /* the columnar aggregate has its chunks: a plan it takes is cut only once it declined at
     run time (exec_query_next). Where the backend cannot run it (HBase) the plan does not
     take it (plan_scan.no_columnar) and the rows path is cut here like any scan */
  if (!declined && plan_colagg_check(q, NULL)) return EXEC_OK;
  if (!why && serial_why) why = serial_why;
  if (!why && plan_hint_has(q->sel->hint, "SERIAL")) why = "the SERIAL hint";
  if (!why && s->txn && kv_batch_count(s->txn))
    why = TXN_WHY;
  if (!why && q->scan.index && s->be.caps.atomicity == KV_BE_ATOMIC_ROW)
    why = REPAIR_WHY; /* (exec/scan.c: the repair writes through the backend) */
  int asked = threads; /* the setting the plan is made for */
  if (why) threads = 1;
  /* region boundaries from the backend, and the local store's block-index cut points (the
     guideposts) under it; a backend without split points gives none */
  cuts c = {0};
  uint32_t want = threads > 1 ? (uint32_t)threads * 4 : 1;
  if (want > PLAN_PAR_MAX_CHUNKS) want = PLAN_PAR_MAX_CHUNKS;
  uint32_t fam = q->scan.est_family ? q->scan.est_family : q->scan.family_ids[0];
  if (threads > 1) {
    kv_backend *be = &s->be;
    if (be->caps.split_points) (void)kv_be_split_points(be, fam, want, add_cut, &c);
    kv_db *db = kv_backend_local_db(be);
    if (db && strcmp(be->caps.name, "local") != 0) {
      kv_backend local;
      (void)kv_be_split_points(kv_backend_local_init(&local, db), fam, want, add_cut, &c);
    }
  }
  int rc = EXEC_OK;
  uint32_t *ord = c.n ? malloc(c.n * sizeof *ord) : NULL;
  const uint8_t **keys = c.n ? malloc(c.n * sizeof *keys) : NULL;
  uint32_t *lens = c.n ? malloc(c.n * sizeof *lens) : NULL;
  plan_par *p = plan_arena_alloc(A, sizeof *p);
  if (c.nomem || !p || (c.n && (!ord || !keys || !lens))) {
    rc = exec_fail(err, EXEC_NOMEM, -1, "out of memory");
  } else {
    for (uint32_t i = 0; i < c.n; i++) ord[i] = i;
    if (c.n > 1) qsort_r(ord, c.n, sizeof *ord, cut_cmp, &c);
    uint32_t n = 0; /* sorted, distinct */
    for (uint32_t i = 0; i < c.n; i++) {
      if (n && cut_cmp(&ord[i], &ord[i - 1], &c) == 0) continue;
      keys[n] = c.k[ord[i]];
      lens[n++] = c.len[ord[i]];
    }
    int buckets = plan_par_buckets(q);
    if (!buckets && n > want - 1) { /* more than asked (regions and guideposts): spread evenly
                                       (a salted scan's are picked by the plan) */
      uint32_t m = want - 1;
      for (uint32_t k = 0; k < m; k++) {
        uint32_t at = (uint32_t)(((uint64_t)(k + 1) * (n + 1)) / (m + 1)) - 1;
        keys[k] = keys[at];
        lens[k] = lens[at];
      }
      n = m;
    }
    rc = buckets ? plan_par_build_salted(q, buckets, keys, lens, n, threads, A, p)
                 : plan_par_build(q, keys, lens, n, threads, A, p);
    if (rc) rc = exec_fail(err, rc, -1, "out of memory");
    if (!rc && why) p->serial_why = why;
    p->asked = asked;
    p->min_rows = min_rows;
    if (!rc) q->par = p;
  }
  free(ord);
  free(keys);
  free(lens);
  cuts_free(&c);
  return rc;
}

