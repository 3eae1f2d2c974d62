/*
** kv/backend/hbase/backend_hbase_write.c: the HBase backend's writes and check-and-write
** (kv_backend_ops.write and .check_and_write of backend_hbase.h; docs/HBASE.md, "The
** backend" and "Writes on several connections").
**
** A batch's ops are grouped by row (a row of one table: HBase's unit of atomicity). KV_TS_NOW
** is resolved to the backend's clock (hbk_take_ts), and within a row a put that follows a
** tombstone over it gets the next millisecond (plan_row_ts): HBase lets a delete mask a put
** of the same timestamp whatever their order, where kv lets the later op win. Every timestamp
** is explicit before the first try, so a write sent again lands on the same cells.
**
** Each row goes to HBase in one of three ways (classify), each leaving it whole to a reader:
** - puts only: a TPut of a putMultiple;
** - tombstones only, all of one kind: a TDelete of a deleteMultiple (one Delete: atomic);
** - puts and tombstones of one kind over cells none of its puts touch (an UPSERT with a
**   NULL): split into a TPut and a TDelete, the put sent first, when none of the columns
**   the tombstones cover holds a cell in HBase (one existsAll per writer for such rows):
**   then the tombstones change nothing a reader sees, and the row read between the two
**   calls, or after a failure between them, is already the row as written. Otherwise (a
**   NULL over a value: an UPSERT over an existing row) and for every other row: one
**   mutateRow.
** A table's rows of a write are cut into up to h->n_writers contiguous runs (ROWAN_HBASE_
** WRITERS; at least HBK_WRITER_MIN_ROWS rows each), each written by its own thread on its own
** connection (writer 0 on the calling thread with h->c, the others h->wc[k]) in calls of at
** most HBK_PUT_CHUNK_ROWS rows or about HBK_PUT_CHUNK_BYTES. Each writer keeps the prefix of
** its run known written; after a lost connection (the client's own retry failed too) every
** writer waits for the gateway and goes on after that prefix (h->tries, ROWAN_HBASE_TRIES),
** the same cells again; another error, or the last try, fails the write naming the writer,
** its rows and the table. A check-and-write is never repeated. The test hook
** ROWAN_HBASE_KILL_AFTER_ROWS=N writes the first rows of a table up to the N-th row of the
** process (on the writers as usual), then raises SIGKILL.
**
** Not here: the clock, the connections' opening (backend_hbase.c), scans
** (backend_hbase_scan.c), the Thrift2 calls (hb_client.c).
*/
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kv/backend/hbase/backend_hbase_int.h"
#include "kv/util/status.h"

typedef struct wop {
  kv_batch_op op;
  hbk_table *t;
  hbk_family *f;
  uint32_t seq;
  int tab;         /* index of t, for sorting */
  int64_t k;       /* the op's offset from the write's first timestamp (KV_TS_NOW ops) */
  bool dead;       /* replaced by a later put of the same cell at the same timestamp */
} wop;

typedef struct wops {
  hbk *h;
  wop *v;
  size_t n, cap;
} wops;

static int collect(void *ctx, const kv_batch_op *op) {
  wops *w = ctx;
  hbk_table *t = NULL;
  hbk_family *f = hbk_family_of(w->h, op->family_id, &t);
  if (!f) return kv_error(KV_ERR_NOTFOUND, "hbase: write to unknown family id %u", op->family_id);
  if (w->n == w->cap) {
    size_t nc = w->cap ? w->cap * 2 : 64;
    wop *nv = realloc(w->v, nc * sizeof *nv);
    if (!nv) return kv_error(KV_ERR_NOMEM, "hbase: out of memory");
    w->v = nv;
    w->cap = nc;
  }
  int tab = 0;
  while (w->h->tabs[tab] != t) tab++;
  w->v[w->n] = (wop){*op, t, f, (uint32_t)w->n, tab, 0, false};
  w->n++;
  return KV_OK;
}

static int row_cmp(const uint8_t *a, uint32_t an, const uint8_t *b, uint32_t bn) {
  int d = memcmp(a, b, an < bn ? an : bn);
  return d ? d : (an > bn) - (an < bn);
}

static int wop_cmp(const void *pa, const void *pb) {
  const wop *a = pa, *b = pb;
  if (a->tab != b->tab) return a->tab < b->tab ? -1 : 1;
  int d = row_cmp(a->op.row, a->op.row_len, b->op.row, b->op.row_len);
  if (d) return d;
  return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static bool same_row(const wop *a, const wop *b) {
  return a->t == b->t && !row_cmp(a->op.row, a->op.row_len, b->op.row, b->op.row_len);
}

/* Two ops of one row that touch a common cell. */
static bool overlap(const wop *a, const wop *b) {
  if (a->f != b->f) return false;
  if (a->op.type == KV_DELETE_FAMILY || b->op.type == KV_DELETE_FAMILY) return true;
  return a->op.qual_len == b->op.qual_len &&
         (!a->op.qual_len || !memcmp(a->op.qual, b->op.qual, a->op.qual_len));
}

static bool same_cell(const wop *a, const wop *b) {
  return a->f == b->f && a->op.type != KV_DELETE_FAMILY && b->op.type != KV_DELETE_FAMILY &&
         overlap(a, b);
}

#define HBK_ROW_PLAN_MAX 4096 /* ops of one row planned one by one (beyond: one ms each) */

/* Timestamp offsets of the KV_TS_NOW ops of row v[lo..hi), so that HBase (a tombstone masks
** every put at or below its timestamp, whatever the order) reads what kv (a later op wins)
** reads: a put after a tombstone it overlaps at the current offset moves to the next
** millisecond; a tombstone masks the earlier puts at its offset; a DELETE_VERSION takes the
** offset of the latest earlier put of its cell (kv's "the version at the commit time"); a put
** of a cell an earlier put of the batch wrote at the same offset replaces it (the earlier one
** is dropped). Returns the offsets used (max + 1). */
static int64_t plan_row_ts(wop *v, size_t lo, size_t hi) {
  int64_t k = 0;
  for (size_t i = lo; i < hi; i++) {
    wop *o = &v[i];
    if (o->op.ts != KV_TS_NOW) continue;
    if (hi - lo > HBK_ROW_PLAN_MAX) {
      o->k = k++;
      continue;
    }
    if (o->op.type == KV_PUT) {
      for (size_t j = lo; j < i; j++)
        if (v[j].op.ts == KV_TS_NOW && v[j].op.type != KV_PUT && v[j].k == k && overlap(o, &v[j])) {
          k++;
          break;
        }
      o->k = k;
      for (size_t j = lo; j < i; j++)
        if (v[j].op.ts == KV_TS_NOW && v[j].op.type == KV_PUT && v[j].k == k && same_cell(o, &v[j]))
          v[j].dead = true;
    } else if (o->op.type == KV_DELETE_VERSION) {
      o->k = k;
      for (size_t j = lo; j < i; j++)
        if (v[j].op.ts == KV_TS_NOW && v[j].op.type == KV_PUT && same_cell(o, &v[j])) o->k = v[j].k;
    } else {
      o->k = k;
    }
  }
  return k + 1;
}

static int mut_kind(int type) {
  return type == KV_PUT              ? HB_MUT_PUT
         : type == KV_DELETE_VERSION ? HB_MUT_DELETE_VERSION
         : type == KV_DELETE_COLUMN  ? HB_MUT_DELETE_COLUMN
                                     : HB_MUT_DELETE_FAMILY;
}

static hb_mutation mutation_of(const wop *o, int64_t base) {
  hb_mutation m;
  m.kind = mut_kind(o->op.type);
  m.family = (hb_bytes){(const uint8_t *)o->f->name, strlen(o->f->name)};
  m.qualifier = (hb_bytes){o->op.qual, o->op.qual_len};
  m.value = (hb_bytes){o->op.value, o->op.type == KV_PUT ? o->op.value_len : 0};
  m.ts = o->op.ts == KV_TS_NOW ? base + o->k : o->op.ts;
  return m;
}

/* Collect b's ops sorted by (table, row, order) with their timestamp offsets. */
static int gather(hbk *h, const kv_batch *b, wops *w, int64_t *base) {
  w->h = h;
  int rc = kv_backend_batch_each(b, collect, w);
  if (rc) return rc;
  qsort(w->v, w->n, sizeof *w->v, wop_cmp);
  int64_t most = 1;
  for (size_t lo = 0, hi; lo < w->n; lo = hi) {
    for (hi = lo + 1; hi < w->n && same_row(&w->v[lo], &w->v[hi]); hi++) {}
    int64_t used = plan_row_ts(w->v, lo, hi);
    if (used > most) most = used;
  }
  *base = hbk_take_ts(h, most);
  return KV_OK;
}

#define HBK_PUT_CHUNK_ROWS 10000      /* rows of one putMultiple or deleteMultiple at most */
#define HBK_PUT_CHUNK_BYTES (4 << 20) /* and about this many bytes (Thrift messages stay small) */
#define HBK_WRITER_MIN_ROWS 16        /* rows of a table per writer at least */
#define HBK_SPLIT_MAX_OPS 256         /* ops of a row checked for a split (beyond: mutateRow) */

/* How a row is written. */
enum { ROW_PUT, ROW_DEL, ROW_SPLIT_ASK, ROW_SPLIT, ROW_MUT };

typedef struct wrow {
  size_t a, z; /* its ops v[a..z) */
  int how;     /* ROW_*: ROW_SPLIT_ASK until a writer asked HBase (then ROW_SPLIT or ROW_MUT) */
} wrow;

static bool is_put(const wop *o) { return o->op.type == KV_PUT; }

/* How row v[a..z) is written (the ROW_* above). */
static int classify(const wop *v, size_t a, size_t z) {
  int kind = -1;
  bool puts = false, dels = false;
  for (size_t i = a; i < z; i++) {
    if (v[i].dead) continue;
    if (is_put(&v[i])) {
      puts = true;
      continue;
    }
    if (dels && v[i].op.type != kind) return ROW_MUT; /* one TDelete has one delete type */
    dels = true;
    kind = v[i].op.type;
  }
  if (!dels) return ROW_PUT;
  if (!puts) return ROW_DEL;
  if (z - a > HBK_SPLIT_MAX_OPS) return ROW_MUT;
  for (size_t i = a; i < z; i++)
    for (size_t j = a; j < z; j++)
      if (!v[i].dead && !v[j].dead && is_put(&v[i]) && !is_put(&v[j]) && overlap(&v[i], &v[j]))
        return ROW_MUT;
  return ROW_SPLIT_ASK;
}

/* One writer's run of a table's rows [at, end) (rows before `at` known written). */
typedef struct wjob {
  hbk *h;
  hb_client **c;  /* its connection: &h->c or &h->wc[k] (opened here when NULL) */
  const hbk_table *t;
  const wop *v;
  wrow *rows;
  size_t at, end;
  int64_t base;
  int k, n;       /* writer k of n */
  int rc;
  char msg[512];  /* kv_errmsg() of the writer's thread when rc */
  kv_hbase_write_counts counts; /* what it sent (added to h's after the join) */
} wjob;

/* The tombstones of row r as one row delete, their mutations into m (returns how many). */
static size_t deletes_of(const wjob *j, const wrow *r, hb_mutation *m, hb_row_delete *d) {
  size_t n = 0;
  for (size_t i = r->a; i < r->z; i++)
    if (!j->v[i].dead && !is_put(&j->v[i])) m[n++] = mutation_of(&j->v[i], j->base);
  *d = (hb_row_delete){{j->v[r->a].op.row, j->v[r->a].op.row_len}, m, n};
  return n;
}

/* Ask HBase which of the run's ROW_SPLIT_ASK rows have a cell under their tombstones. */
static int ask_splits(wjob *j, hb_mutation *m, hb_row_delete *d, bool *ex, size_t *which) {
  size_t nd = 0, nm = 0;
  for (size_t r = j->at; r < j->end; r++)
    if (j->rows[r].how == ROW_SPLIT_ASK) {
      nm += deletes_of(j, &j->rows[r], m + nm, &d[nd]);
      which[nd++] = r;
    }
  for (size_t i = 0; i < nd; i += HBK_PUT_CHUNK_ROWS) {
    size_t k = nd - i < HBK_PUT_CHUNK_ROWS ? nd - i : HBK_PUT_CHUNK_ROWS;
    int rc = hb_cells_exist(*j->c, j->h->uri.ns, j->t->hb_name, d + i, k, ex + i);
    if (rc) return rc;
    j->counts.asked_rows += k;
    for (size_t q = i; q < i + k; q++) j->rows[which[q]].how = ex[q] ? ROW_MUT : ROW_SPLIT;
  }
  return KV_OK;
}

/* Send the pending puts, then the pending row deletes (a split row's put before its delete);
** c[ROW_PUT], c[ROW_SPLIT], c[ROW_DEL]: the pending rows of each kind. */
static int flush(wjob *j, const hb_put *p, size_t np, const hb_row_delete *d, size_t nd,
                 const size_t *c) {
  int rc = hb_put_cells(*j->c, j->h->uri.ns, j->t->hb_name, p, np);
  if (!rc) rc = hb_delete_rows(*j->c, j->h->uri.ns, j->t->hb_name, d, nd);
  if (!rc) {
    j->counts.put_rows += c[ROW_PUT];
    j->counts.split_rows += c[ROW_SPLIT];
    j->counts.delete_rows += c[ROW_DEL];
  }
  return rc;
}

/* Write the job's rows from j->at; j->at moves past the rows known written. */
static int write_run(wjob *j) {
  if (!*j->c) {
    int rc = hb_open(j->h->uri.host, j->h->uri.port, 0, j->c);
    if (rc) return rc;
  }
  size_t nops = j->rows[j->end - 1].z - j->rows[j->at].a, nrows = j->end - j->at;
  hb_put *puts = malloc(nops * sizeof *puts);
  hb_mutation *m = malloc(nops * sizeof *m);
  hb_row_delete *d = malloc(nrows * sizeof *d);
  bool *ex = malloc(nrows * sizeof *ex);
  size_t *which = malloc(nrows * sizeof *which);
  int rc = puts && m && d && ex && which ? KV_OK : kv_error(KV_ERR_NOMEM, "hbase: out of memory");
  if (!rc) rc = ask_splits(j, m, d, ex, which);
  size_t np = 0, nd = 0, nm = 0, prows = 0, pbytes = 0, kinds[ROW_MUT] = {0};
  for (size_t r = j->at; !rc && r < j->end; r++) {
    const wrow *w = &j->rows[r];
    const wop *v = j->v;
    if (w->how == ROW_MUT) {
      size_t k = 0; /* its mutations after the pending deletes' */
      for (size_t i = w->a; i < w->z; i++)
        if (!v[i].dead) m[nm + k++] = mutation_of(&v[i], j->base);
      rc = hb_mutate_row(*j->c, j->h->uri.ns, j->t->hb_name,
                         (hb_bytes){v[w->a].op.row, v[w->a].op.row_len}, m + nm, k);
      if (!rc) j->counts.mutate_rows++;
      if (!rc && !np && !nd) j->at = r + 1;
      continue;
    }
    for (size_t i = w->a; i < w->z; i++) {
      if (v[i].dead) continue;
      pbytes += v[i].op.row_len + v[i].op.qual_len + 24 + (is_put(&v[i]) ? v[i].op.value_len : 0);
      if (!is_put(&v[i])) continue;
      hb_mutation x = mutation_of(&v[i], j->base);
      puts[np++] = (hb_put){{v[i].op.row, v[i].op.row_len}, x.family, x.qualifier, x.value, x.ts};
    }
    if (w->how != ROW_PUT) nm += deletes_of(j, w, m + nm, &d[nd++]);
    kinds[w->how]++;
    if (++prows < HBK_PUT_CHUNK_ROWS && pbytes < HBK_PUT_CHUNK_BYTES) continue;
    rc = flush(j, puts, np, d, nd, kinds);
    if (!rc) {
      np = nd = nm = prows = pbytes = 0;
      memset(kinds, 0, sizeof kinds);
      j->at = r + 1;
    }
  }
  if (!rc && (np || nd)) rc = flush(j, puts, np, d, nd, kinds);
  if (!rc) j->at = j->end;
  free(puts);
  free(m);
  free(d);
  free(ex);
  free(which);
  return rc;
}

static void *run_job(void *arg) {
  wjob *j = arg;
  j->rc = write_run(j);
  if (j->rc) snprintf(j->msg, sizeof j->msg, "%s", kv_errmsg());
  return NULL;
}

/* In a writer's own thread (SIGPIPE blocked, inherited from the caller under hbk_lock): drop
** a SIGPIPE its calls raised before the thread ends. */
static void *run_job_thread(void *arg) {
  run_job(arg);
  sigset_t pend, set;
  sigemptyset(&set);
  sigaddset(&set, SIGPIPE);
  if (sigpending(&pend) == 0 && sigismember(&pend, SIGPIPE)) {
    struct timespec zero = {0, 0};
    (void)sigtimedwait(&set, NULL, &zero);
  }
  return NULL;
}

static bool connection_lost(int rc, const char *msg) {
  return rc == KV_ERR_IO && strstr(msg, "connect") != NULL;
}

/* Write rows[lo..hi) of one table (under h->mu) on up to h->n_writers writers, waiting for a
** lost gateway as the header says. */
static int write_table(hbk *h, const wop *v, wrow *rows, size_t lo, size_t hi, int64_t base) {
  if (lo == hi) return KV_OK;
  const hbk_table *t = v[rows[lo].a].t;
  size_t nrows = hi - lo;
  int n = (int)(nrows / HBK_WRITER_MIN_ROWS);
  if (n > h->n_writers) n = h->n_writers;
  if (n < 1) n = 1;
  wjob jobs[HBK_WRITERS_MAX];
  if (n > 1) h->counts.spread_writes++;
  for (int k = 0; k < n; k++) {
    size_t a = lo + nrows * (size_t)k / (size_t)n, z = lo + nrows * (size_t)(k + 1) / (size_t)n;
    jobs[k] = (wjob){h, k ? &h->wc[k] : &h->c, t, v, rows, a, z, base, k, n, KV_OK, "", {0}};
  }
  for (int fails = 0;;) {
    size_t before[HBK_WRITERS_MAX];
    pthread_t th[HBK_WRITERS_MAX];
    bool started[HBK_WRITERS_MAX] = {false};
    int first = -1; /* the first writer with rows left runs on this thread */
    for (int k = 0; k < n; k++) {
      before[k] = jobs[k].at;
      jobs[k].rc = KV_OK;
      if (jobs[k].at == jobs[k].end) continue;
      if (first < 0) first = k;
      else started[k] = pthread_create(&th[k], NULL, run_job_thread, &jobs[k]) == 0;
    }
    if (first < 0) return KV_OK;
    run_job(&jobs[first]);
    for (int k = first + 1; k < n; k++) {
      if (started[k]) pthread_join(th[k], NULL);
      else if (jobs[k].at < jobs[k].end) run_job(&jobs[k]); /* no thread: on this one */
    }
    for (int k = 0; k < n; k++) {
      kv_hbase_write_counts *a = &h->counts, *c = &jobs[k].counts;
      a->put_rows += c->put_rows, a->split_rows += c->split_rows;
      a->delete_rows += c->delete_rows, a->mutate_rows += c->mutate_rows;
      a->asked_rows += c->asked_rows;
      memset(c, 0, sizeof *c);
    }
    int bad = -1;
    bool progress = false, lost_only = true;
    for (int k = 0; k < n; k++) {
      progress |= jobs[k].at > before[k];
      if (!jobs[k].rc) continue;
      if (bad < 0) bad = k;
      if (!connection_lost(jobs[k].rc, jobs[k].msg)) {
        if (lost_only) bad = k;
        lost_only = false;
      }
    }
    if (bad < 0) continue; /* every writer done: the next round finds no rows left */
    if (progress) fails = 0;
    const wjob *j = &jobs[bad];
    if (lost_only && ++fails < h->tries) {
      /* the gateway is gone: wait for it, then every writer writes its rows not known
      ** written again, the same cells at the same timestamps */
      h->counts.lost_waits++;
      usleep(HBK_BACKOFF_US(fails));
      continue;
    }
    size_t left = 0;
    for (int k = 0; k < n; k++) left += jobs[k].end - jobs[k].at;
    char where[300];
    snprintf(where, sizeof where,
             "table %s, writer %d of %d: its rows %zu..%zu of the write's %zu not known written, "
             "%zu in all", t->kv_name, j->k + 1, n, j->at - lo + 1, j->end - lo, nrows, left);
    if (lost_only)
      return kv_error(j->rc, "hbase: a write to the gateway %s:%d given up after %d tries (%s): %s",
                      h->uri.host, h->uri.port, fails, where, j->msg);
    return kv_error(j->rc, "%s (%s)", j->msg, where);
  }
}

int hbk_write(kv_backend *be, const kv_batch *b, uint64_t *seq_out) {
  hbk *h = be->impl;
  wops w = {0};
  int64_t base = 0;
  hbk_lock(h);
  int rc = gather(h, b, &w, &base);
  wrow *rows = rc ? NULL : malloc((w.n ? w.n : 1) * sizeof *rows);
  if (!rc && !rows) rc = kv_error(KV_ERR_NOMEM, "hbase: out of memory");
  size_t nrows = 0;
  for (size_t a = 0, z; !rc && a < w.n; a = z) {
    for (z = a + 1; z < w.n && same_row(&w.v[a], &w.v[z]); z++) {}
    rows[nrows++] = (wrow){a, z, classify(w.v, a, z)};
  }
  for (size_t lo = 0, hi; !rc && lo < nrows; lo = hi) {
    hbk_table *t = w.v[rows[lo].a].t;
    for (hi = lo + 1; hi < nrows && w.v[rows[hi].a].t == t; hi++) {}
    size_t upto = hi;
    bool kill = false;
    if (h->kill_after_rows) { /* the test hook: write up to the N-th row, then die */
      if (h->rows_written + (long)(hi - lo) > h->kill_after_rows) {
        upto = lo + (size_t)(h->kill_after_rows - h->rows_written);
        kill = true;
      }
      h->rows_written += (long)(upto - lo);
    }
    t->written += hi - lo; /* the statistics grow stale (backend_hbase_stats.c) */
    rc = write_table(h, w.v, rows, lo, upto, base);
    if (kill) raise(SIGKILL);
  }
  if (seq_out) *seq_out = (uint64_t)h->last_ts;
  hbk_unlock(h);
  free(rows);
  free(w.v);
  return rc;
}

int hbk_check_and_write(kv_backend *be, const kv_backend_check *chk, const kv_batch *b,
                        bool *applied, uint64_t *seq_out) {
  hbk *h = be->impl;
  *applied = false;
  wops w = {0};
  int64_t base = 0;
  hbk_lock(h);
  hbk_table *t = NULL;
  hbk_family *cf = hbk_family_of(h, chk->family_id, &t);
  int rc = cf ? gather(h, b, &w, &base)
              : kv_error(KV_ERR_NOTFOUND, "hbase: check of unknown family id %u", chk->family_id);
  for (size_t i = 0; !rc && i < w.n; i++)
    if (w.v[i].t != t || row_cmp(w.v[i].op.row, w.v[i].op.row_len, chk->row, chk->row_len))
      rc = kv_error(KV_ERR_INVALID,
                    "check_and_write of rows other than the checked one is not supported by "
                    "backend hbase");
  hb_mutation *m = rc ? NULL : malloc((w.n ? w.n : 1) * sizeof *m);
  if (!rc && !m) rc = kv_error(KV_ERR_NOMEM, "hbase: out of memory");
  size_t nm = 0;
  for (size_t i = 0; !rc && i < w.n; i++)
    if (!w.v[i].dead) m[nm++] = mutation_of(&w.v[i], base);
  if (!rc) {
    hb_bytes expected = {chk->value, chk->value_len};
    t->written++;
    rc = hb_check_and_mutate(h->c, h->uri.ns, t->hb_name, (hb_bytes){chk->row, chk->row_len},
                             (hb_bytes){(const uint8_t *)cf->name, strlen(cf->name)},
                             (hb_bytes){chk->qual, chk->qual_len}, chk->value ? &expected : NULL,
                             m, nm, applied);
  }
  if (seq_out) *seq_out = (uint64_t)h->last_ts;
  hbk_unlock(h);
  free(m);
  free(w.v);
  return rc;
}


void kv_backend_hbase_write_counts(kv_backend *be, kv_hbase_write_counts *out) {
  hbk *h = be->impl;
  hbk_lock(h);
  *out = h->counts;
  hbk_unlock(h);
}
