/*
** kv/backend/backend_rowatomic.c: the row-atomic test backend of kv/backend/backend_rowatomic.h, a wrapper
** over the local backend (kv/backend/backend_local.c) that takes away what HBase does not give.
**
** - write: the batch's ops are grouped by row, a row being (the table of the op's family,
**   row key) as in HBase (families of one table share a row; two tables never do), in the
**   order of each row's first op, each row's ops in batch order; each row is one commit of
**   the local backend. A failure (a real one, or one injected by the test hooks) leaves the
**   rows before it applied and the rest not. Ops with KV_TS_NOW take each row's own commit
**   time, as HBase stamps each row on its region server.
** - snapshots: snapshot_acquire hands out a time (the store's commit clock: the env's clock,
**   or the last commit time if that is later) and pins a sequence number under it only so
**   that compaction keeps what the time can see; a scan or get whose kv_scan_options.snapshot
**   is such a time reads the latest state restricted to cells up to it (kv's as_of), so a
**   write committed after the snapshot with an older or equal timestamp is seen, as under an
**   HBase time range.
** - filters: the serializable expression only; a scan carrying a C callback is refused.
** - extensions: none; a scan that sets overlay, skip_prefix, value_vectors,
**   existence_family, trace, ts_per_row or interrupt is refused, naming the field.
** - check_and_write: the batch may touch the checked row only (HBase's checkAndMutate).
** - split keys: checked by the local backend, then kept as the table's region boundaries:
**   split_points reports them (HBase's region boundaries); scans are not cut at them and
**   nothing else changes (one local table underneath).
**
** The family-to-table map behind the grouping is built from kv's public calls and dropped
** at every DDL through this backend; DDL made on the same store by another backend while
** this one is open is not seen (one session per store in the tests). The commit clock is
** the one place that reads the store's internals (kv/db/db_impl.h: its env's clock and last
** commit time under its mutex), as kv/backend/backend_local.c reads them.
**
** Not here: the local store, the filter expression (kv/backend/backend_filter.c), what the SQL layer
** does without these capabilities (exec/scan.c, docs/BACKEND.md).
*/
#include "kv/backend/backend_rowatomic.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kv/util/coding.h"
#include "kv/db/db_impl.h"
#include "kv/util/status.h"

typedef struct rw_snap {
  uint64_t ts;  /* the time handed out */
  uint64_t seq; /* the sequence number pinned under it */
} rw_snap;

typedef struct rw_split {
  char *table;     /* the table's name (malloc) */
  uint8_t **keys;  /* its split keys, ascending (malloc each) */
  uint32_t *lens;  /* their lengths */
  uint32_t n;      /* their count */
} rw_split;

typedef struct rw_backend {
  kv_backend be;          /* what callers hold (first: kv_backend_rowatomic_close finds this) */
  kv_backend in;          /* the local backend underneath */
  kv_db *db;              /* the store */
  pthread_mutex_t mu;     /* guards everything below */
  uint32_t *fam_table;    /* family id -> 1 + table number (0: not looked up yet) */
  uint32_t n_fam_table;   /* entries */
  char **tables;          /* table numbers -> names (malloc), this map's own numbering */
  uint32_t n_tables, cap_tables; /* count, room */
  rw_split *splits;       /* tables created with split keys */
  uint32_t n_splits;      /* their count */
  rw_snap *snaps;         /* pinned snapshots */
  uint32_t n_snaps, cap_snaps; /* count, room */
  kv_batch *row_batch;    /* the one row being committed (reused) */
  uint64_t rows;          /* rows committed */
  uint64_t failures;      /* failures injected */
  bool after_armed;       /* kv_backend_rowatomic_fail_after is armed */
  uint64_t after_left;    /* rows still to commit before it fails */
  uint64_t rng;           /* kv_backend_rowatomic_fail_random's generator state */
  uint32_t one_in;        /* its odds (0: off) */
} rw_backend;

#define RW(b) ((rw_backend *)(b)->impl)

static const kv_backend_ops rw_ops;

bool kv_backend_is_rowatomic(const kv_backend *be) { return be && be->ops == &rw_ops; }

/* ---- The family-to-table map ------------------------------------------------------- */
/* Forget the map (a DDL went through: ids may have moved to other tables). REQUIRES mu. */
static void map_clear(rw_backend *r) {
  for (uint32_t i = 0; i < r->n_tables; i++) free(r->tables[i]);
  r->n_tables = 0;
  if (r->fam_table) memset(r->fam_table, 0, r->n_fam_table * sizeof *r->fam_table);
}

/* *tno: this map's number of family_id's table; UINT32_MAX when kv knows no such family
** (the commit then reports it). KV_OK or KV_ERR_NOMEM. REQUIRES mu. */
static int table_of(rw_backend *r, uint32_t family_id, uint32_t *tno) {
  if (family_id < r->n_fam_table && r->fam_table[family_id]) {
    *tno = r->fam_table[family_id] - 1;
    return KV_OK;
  }
  *tno = UINT32_MAX;
  kv_family_options fo;
  if (kv_family_info(r->db, family_id, &fo) != KV_OK) return KV_OK;
  const char *name = NULL;
  for (int i = 0, n = kv_table_count(r->db); i < n && !name; i++) {
    uint32_t id;
    const char *t = kv_table_name(r->db, i);
    if (t && kv_family_id(r->db, t, fo.name, &id) == KV_OK && id == family_id) name = t;
  }
  if (!name) return KV_OK;
  uint32_t k = 0;
  while (k < r->n_tables && strcmp(r->tables[k], name) != 0) k++;
  if (k == r->n_tables) {
    if (r->n_tables == r->cap_tables) {
      uint32_t cap = r->cap_tables ? r->cap_tables * 2 : 16;
      char **t = realloc(r->tables, cap * sizeof *t);
      if (!t) return kv_error(KV_ERR_NOMEM, "rowatomic: out of memory");
      r->tables = t;
      r->cap_tables = cap;
    }
    if (!(r->tables[k] = strdup(name))) return kv_error(KV_ERR_NOMEM, "rowatomic: out of memory");
    r->n_tables++;
  }
  if (family_id >= r->n_fam_table) {
    uint32_t n = family_id * 2 + 16;
    uint32_t *ft = realloc(r->fam_table, n * sizeof *ft);
    if (!ft) return kv_error(KV_ERR_NOMEM, "rowatomic: out of memory");
    memset(ft + r->n_fam_table, 0, (n - r->n_fam_table) * sizeof *ft);
    r->fam_table = ft;
    r->n_fam_table = n;
  }
  r->fam_table[family_id] = k + 1;
  *tno = k;
  return KV_OK;
}

/* ---- Injected failures -------------------------------------------------------------- */
/* splitmix64: a seeded, deterministic stream. */
static uint64_t next_random(uint64_t *state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* Before committing row i (0-based) of a batch of n rows: KV_OK, or the injected failure.
** REQUIRES mu. */
static int before_row(rw_backend *r, uint32_t i, uint32_t n) {
  bool fail = false;
  if (r->after_armed && r->after_left == 0) {
    r->after_armed = false;
    fail = true;
  }
  if (r->one_in && next_random(&r->rng) % r->one_in == 0) fail = true;
  if (!fail) return KV_OK;
  r->failures++;
  return kv_error(KV_ERR_IO, "rowatomic: injected failure before row %u of %u of the batch",
                  i + 1, n);
}

/* Row i of a batch committed. REQUIRES mu. */
static void after_row(rw_backend *r) {
  r->rows++;
  if (r->after_armed && r->after_left) r->after_left--;
}

/* ---- Writes: a batch row by row ------------------------------------------------------ */
typedef struct rw_group {
  uint32_t tno;        /* the row's table (this map's number) */
  const uint8_t *row;  /* its key (into the batch) */
  uint32_t row_len;    /* its length */
  uint32_t n_ops;      /* ops of the row */
  uint32_t first;      /* then: where its ops start in the sorted order */
} rw_group;

typedef struct rw_split_ctx {
  rw_backend *r;        /* the backend (mu held) */
  kv_batch_op *ops;     /* the batch's ops in order (pointers into the batch) */
  uint32_t *grp;        /* each op's row group */
  uint32_t n_ops, cap_ops; /* count, room */
  rw_group *groups;     /* rows in order of first appearance */
  uint32_t n_groups, cap_groups; /* count, room */
  uint32_t *slots;      /* hash table: 1 + group, 0 empty */
  uint32_t n_slots;     /* its size (a power of two) */
} rw_split_ctx;

static uint32_t group_hash(uint32_t tno, const uint8_t *row, uint32_t len) {
  uint64_t h = 1469598103934665603ull ^ tno;
  for (uint32_t i = 0; i < len; i++) h = (h ^ row[i]) * 1099511628211ull;
  return (uint32_t)(h ^ (h >> 32));
}

static int grow_slots(rw_split_ctx *c) {
  uint32_t n = c->n_slots ? c->n_slots * 2 : 64;
  uint32_t *s = calloc(n, sizeof *s);
  if (!s) return kv_error(KV_ERR_NOMEM, "rowatomic: out of memory");
  for (uint32_t g = 0; g < c->n_groups; g++) {
    const rw_group *x = &c->groups[g];
    uint32_t h = group_hash(x->tno, x->row, x->row_len) & (n - 1);
    while (s[h]) h = (h + 1) & (n - 1);
    s[h] = g + 1;
  }
  free(c->slots);
  c->slots = s;
  c->n_slots = n;
  return KV_OK;
}

/* The row group of (tno, row), added when new. */
static int find_group(rw_split_ctx *c, uint32_t tno, const uint8_t *row, uint32_t len,
                      uint32_t *g_out) {
  if ((c->n_groups + 1) * 2 > c->n_slots) {
    int rc = grow_slots(c);
    if (rc) return rc;
  }
  uint32_t h = group_hash(tno, row, len) & (c->n_slots - 1);
  for (; c->slots[h]; h = (h + 1) & (c->n_slots - 1)) {
    const rw_group *x = &c->groups[c->slots[h] - 1];
    if (x->tno == tno && kv_bytes_cmp(x->row, x->row_len, row, len) == 0) {
      *g_out = c->slots[h] - 1;
      return KV_OK;
    }
  }
  if (c->n_groups == c->cap_groups) {
    uint32_t cap = c->cap_groups ? c->cap_groups * 2 : 64;
    rw_group *ng = realloc(c->groups, cap * sizeof *ng);
    if (!ng) return kv_error(KV_ERR_NOMEM, "rowatomic: out of memory");
    c->groups = ng;
    c->cap_groups = cap;
  }
  c->groups[c->n_groups] = (rw_group){tno, row, len, 0, 0};
  c->slots[h] = ++c->n_groups;
  *g_out = c->n_groups - 1;
  return KV_OK;
}

static int collect_op(void *ctx, const kv_batch_op *op) {
  rw_split_ctx *c = ctx;
  if (c->n_ops == c->cap_ops) {
    uint32_t cap = c->cap_ops ? c->cap_ops * 2 : 256;
    kv_batch_op *no = realloc(c->ops, cap * sizeof *no);
    if (!no) return kv_error(KV_ERR_NOMEM, "rowatomic: out of memory");
    c->ops = no;
    uint32_t *ng = realloc(c->grp, cap * sizeof *ng);
    if (!ng) return kv_error(KV_ERR_NOMEM, "rowatomic: out of memory");
    c->grp = ng;
    c->cap_ops = cap;
  }
  uint32_t tno, g;
  int rc = table_of(c->r, op->family_id, &tno);
  if (!rc) rc = find_group(c, tno, op->row, op->row_len, &g);
  if (rc) return rc;
  c->ops[c->n_ops] = *op;
  c->grp[c->n_ops++] = g;
  c->groups[g].n_ops++;
  return KV_OK;
}

static void split_free(rw_split_ctx *c) {
  free(c->ops);
  free(c->grp);
  free(c->groups);
  free(c->slots);
}

static int add_op(kv_batch *b, const kv_batch_op *op) {
  if (op->type == KV_PUT)
    return kv_batch_put(b, op->family_id, op->row, op->row_len, op->qual, op->qual_len, op->ts,
                        op->value, op->value_len);
  return kv_batch_delete(b, op->family_id, op->type, op->row, op->row_len, op->qual,
                         op->qual_len, op->ts);
}

/* Commit c's rows one by one (mu held). */
static int commit_rows(rw_backend *r, rw_split_ctx *c, uint64_t *seq_out) {
  uint32_t *order = malloc((c->n_ops ? c->n_ops : 1) * sizeof *order);
  if (!order) return kv_error(KV_ERR_NOMEM, "rowatomic: out of memory");
  uint32_t at = 0;
  for (uint32_t g = 0; g < c->n_groups; g++) {
    c->groups[g].first = at;
    at += c->groups[g].n_ops;
    c->groups[g].n_ops = 0;
  }
  for (uint32_t i = 0; i < c->n_ops; i++) {
    rw_group *x = &c->groups[c->grp[i]];
    order[x->first + x->n_ops++] = i;
  }
  int rc = KV_OK;
  for (uint32_t g = 0; g < c->n_groups && !rc; g++) {
    kv_batch_clear(r->row_batch);
    const rw_group *x = &c->groups[g];
    for (uint32_t k = 0; k < x->n_ops && !rc; k++) rc = add_op(r->row_batch, &c->ops[order[x->first + k]]);
    if (!rc) rc = before_row(r, g, c->n_groups);
    if (!rc) rc = r->in.ops->write(&r->in, r->row_batch, seq_out);
    if (!rc) after_row(r);
  }
  free(order);
  return rc;
}

static int rw_write(kv_backend *be, const kv_batch *b, uint64_t *seq_out) {
  rw_backend *r = RW(be);
  if (!b) return kv_error(KV_MISUSE, "write: NULL batch");
  pthread_mutex_lock(&r->mu);
  rw_split_ctx c = {.r = r};
  int rc = kv_backend_batch_each(b, collect_op, &c);
  if (!rc && c.n_groups <= 1) { /* one row (or none): the batch as it is */
    rc = c.n_groups ? before_row(r, 0, 1) : KV_OK;
    if (!rc) rc = r->in.ops->write(&r->in, b, seq_out);
    if (!rc && c.n_groups) after_row(r);
  } else if (!rc) {
    rc = commit_rows(r, &c, seq_out);
  }
  split_free(&c);
  pthread_mutex_unlock(&r->mu);
  return rc;
}

static int rw_check_and_write(kv_backend *be, const kv_backend_check *chk, const kv_batch *b,
                              bool *applied, uint64_t *seq_out) {
  rw_backend *r = RW(be);
  if (!chk || !b || !applied || !chk->row || chk->row_len == 0)
    return kv_error(KV_MISUSE, "check_and_write: NULL argument or empty row key");
  *applied = false;
  pthread_mutex_lock(&r->mu);
  rw_split_ctx c = {.r = r};
  uint32_t tno = UINT32_MAX, g = 0;
  int rc = table_of(r, chk->family_id, &tno);
  if (!rc) rc = find_group(&c, tno, chk->row, chk->row_len, &g); /* group 0: the checked row */
  if (!rc) rc = kv_backend_batch_each(b, collect_op, &c);
  if (!rc && c.n_groups > 1)
    rc = kv_be_unsupported(be, "check_and_write of rows other than the checked one");
  if (!rc) rc = before_row(r, 0, 1);
  if (!rc) rc = r->in.ops->check_and_write(&r->in, chk, b, applied, seq_out);
  if (!rc && *applied) after_row(r);
  split_free(&c);
  pthread_mutex_unlock(&r->mu);
  return rc;
}

/* ---- Scans: what the wrapper refuses, and timestamp snapshots --------------------------- */
/* *oo: o as the local backend reads it, or the refusal of what this backend lacks. */
static int translate(kv_backend *be, const kv_scan_options *o, kv_scan_options *oo) {
  if (!o) return kv_error(KV_MISUSE, "scan: NULL options");
  static const char *const ext[] = {"overlay", "skip_prefix", "value_vectors",
                                    "existence_family", "trace", "ts_per_row", "interrupt"};
  const bool set[] = {o->overlay != NULL, o->skip_prefix != NULL, o->value_vectors,
                      o->existence_family != 0, o->trace != NULL, o->ts_per_row,
                      o->interrupt != NULL};
  if (o->filter) return kv_be_unsupported(be, "a callback filter");
  for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++) {
    if (!set[i]) continue;
    char what[64];
    snprintf(what, sizeof what, "scan option %s", ext[i]);
    return kv_be_unsupported(be, what);
  }
  *oo = *o;
  if (o->snapshot) { /* a time of snapshot_acquire: cells up to it, at the latest state */
    int64_t t = o->snapshot > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)o->snapshot;
    oo->snapshot = 0;
    oo->as_of = o->as_of > 0 && o->as_of < t ? o->as_of : t;
  }
  return KV_OK;
}

static int rw_get(kv_backend *be, const kv_scan_options *o, const void *row, size_t row_len,
                  kv_backend_scan **scan_out, kv_row *out_row) {
  kv_scan_options oo;
  if (scan_out) *scan_out = NULL;
  int rc = translate(be, o, &oo);
  return rc ? rc : RW(be)->in.ops->get(&RW(be)->in, &oo, row, row_len, scan_out, out_row);
}

static int rw_scan_open(kv_backend *be, const kv_scan_options *o, const kv_backend_read *x,
                        kv_backend_scan **out) {
  kv_scan_options oo;
  if (out) *out = NULL;
  int rc = translate(be, o, &oo);
  return rc ? rc : RW(be)->in.ops->scan_open(&RW(be)->in, &oo, x, out);
}

static int rw_scan_next(kv_backend *be, kv_backend_scan *s, kv_row *row) {
  return RW(be)->in.ops->scan_next(&RW(be)->in, s, row);
}
static const kv_value_vector *rw_scan_row_vectors(kv_backend *be, const kv_backend_scan *s,
                                                  uint32_t *n) {
  return RW(be)->in.ops->scan_row_vectors(&RW(be)->in, s, n);
}
static void rw_scan_metrics(kv_backend *be, const kv_backend_scan *s, kv_scan_metrics *out) {
  RW(be)->in.ops->scan_metrics(&RW(be)->in, s, out);
}
static void rw_scan_close(kv_backend *be, kv_backend_scan *s) {
  RW(be)->in.ops->scan_close(&RW(be)->in, s);
}

/* The store's commit clock: the env's time, or the last commit time when that is later
** (commit times never go back, kv/kv.h KV_TS_NOW). */
static int64_t commit_clock(kv_db *db) {
  int64_t now = db->env->now_ms(db->env);
  pthread_mutex_lock(&db->mu);
  if (db->last_commit_ts > now) now = db->last_commit_ts;
  pthread_mutex_unlock(&db->mu);
  return now > 0 ? now : 1; /* 0 is "latest" to kv_scan_options.snapshot */
}

static int rw_snapshot_acquire(kv_backend *be, uint64_t *snap_out) {
  rw_backend *r = RW(be);
  if (!snap_out) return kv_error(KV_MISUSE, "snapshot_acquire: NULL argument");
  pthread_mutex_lock(&r->mu);
  int rc = KV_OK;
  if (r->n_snaps == r->cap_snaps) {
    uint32_t cap = r->cap_snaps ? r->cap_snaps * 2 : 8;
    rw_snap *ns = realloc(r->snaps, cap * sizeof *ns);
    if (!ns) rc = kv_error(KV_ERR_NOMEM, "rowatomic: out of memory");
    else {
      r->snaps = ns;
      r->cap_snaps = cap;
    }
  }
  uint64_t seq = 0;
  if (!rc) rc = r->in.ops->snapshot_acquire(&r->in, &seq);
  if (!rc) {
    *snap_out = (uint64_t)commit_clock(r->db);
    r->snaps[r->n_snaps++] = (rw_snap){*snap_out, seq};
  }
  pthread_mutex_unlock(&r->mu);
  return rc;
}

static void rw_snapshot_release(kv_backend *be, uint64_t snap) {
  rw_backend *r = RW(be);
  pthread_mutex_lock(&r->mu);
  for (uint32_t i = r->n_snaps; i-- > 0;) {
    if (r->snaps[i].ts != snap) continue;
    r->in.ops->snapshot_release(&r->in, r->snaps[i].seq);
    r->snaps[i] = r->snaps[--r->n_snaps];
    break;
  }
  pthread_mutex_unlock(&r->mu);
}

/* ---- DDL and split keys ------------------------------------------------------------- */
static void split_forget(rw_backend *r, const char *name) {
  for (uint32_t i = 0; i < r->n_splits; i++) {
    rw_split *s = &r->splits[i];
    if (strcmp(s->table, name) != 0) continue;
    for (uint32_t k = 0; k < s->n; k++) free(s->keys[k]);
    free(s->keys);
    free(s->lens);
    free(s->table);
    r->splits[i] = r->splits[--r->n_splits];
    return;
  }
}

static int split_keep(rw_backend *r, const char *name, const uint8_t *const *keys,
                      const uint32_t *lens, uint32_t n) {
  rw_split *ns = realloc(r->splits, (r->n_splits + 1) * sizeof *ns);
  if (!ns) return kv_error(KV_ERR_NOMEM, "rowatomic: out of memory");
  r->splits = ns;
  rw_split s = {strdup(name), calloc(n, sizeof *s.keys), calloc(n, sizeof *s.lens), n};
  bool ok = s.table && s.keys && s.lens;
  for (uint32_t k = 0; k < n && ok; k++) {
    ok = (s.keys[k] = malloc(lens[k])) != NULL;
    if (ok) memcpy(s.keys[k], keys[k], lens[k]);
    s.lens[k] = lens[k];
  }
  r->splits[r->n_splits++] = s;
  if (!ok) {
    split_forget(r, name);
    return kv_error(KV_ERR_NOMEM, "rowatomic: out of memory");
  }
  return KV_OK;
}

static int rw_create_table(kv_backend *be, const char *name, const kv_family_options *families,
                           int n_families, const uint8_t *const *split_keys,
                           const uint32_t *split_lens, uint32_t n_splits) {
  rw_backend *r = RW(be);
  pthread_mutex_lock(&r->mu);
  map_clear(r);
  int rc = r->in.ops->create_table(&r->in, name, families, n_families, split_keys, split_lens,
                                   n_splits);
  if (!rc && n_splits) {
    split_forget(r, name);
    rc = split_keep(r, name, split_keys, split_lens, n_splits);
  }
  pthread_mutex_unlock(&r->mu);
  return rc;
}

static int rw_alter_table(kv_backend *be, const char *name, const kv_family_options *families,
                          int n_families) {
  rw_backend *r = RW(be);
  pthread_mutex_lock(&r->mu);
  map_clear(r);
  int rc = r->in.ops->alter_table(&r->in, name, families, n_families);
  pthread_mutex_unlock(&r->mu);
  return rc;
}

static int rw_drop_table(kv_backend *be, const char *name) {
  rw_backend *r = RW(be);
  pthread_mutex_lock(&r->mu);
  map_clear(r);
  int rc = r->in.ops->drop_table(&r->in, name);
  if (!rc && name) split_forget(r, name);
  pthread_mutex_unlock(&r->mu);
  return rc;
}

/* Region boundaries: the split keys given at create, at most max_chunks - 1 of them, spread
** evenly over the list when there are more. None for a table created without. */
static int rw_split_points(kv_backend *be, uint32_t family_id, uint32_t max_chunks,
                           kv_be_split_fn each, void *ctx) {
  rw_backend *r = RW(be);
  if (!each) return kv_error(KV_MISUSE, "split_points: NULL callback");
  pthread_mutex_lock(&r->mu);
  uint32_t tno;
  int rc = table_of(r, family_id, &tno);
  if (!rc && tno == UINT32_MAX) rc = kv_error(KV_ERR_NOTFOUND, "split_points: no family %u", family_id);
  for (uint32_t i = 0; !rc && i < r->n_splits; i++) {
    const rw_split *s = &r->splits[i];
    if (strcmp(s->table, r->tables[tno]) != 0 || max_chunks < 2) continue;
    uint32_t want = s->n < max_chunks - 1 ? s->n : max_chunks - 1;
    for (uint32_t k = 0; k < want; k++) {
      uint32_t at = (uint32_t)(((uint64_t)(k + 1) * (s->n + 1)) / (want + 1)) - 1;
      each(ctx, s->keys[at], s->lens[at]);
    }
  }
  pthread_mutex_unlock(&r->mu);
  return rc;
}

/* ---- The rest: as the local backend ------------------------------------------------- */
static int rw_family_id(kv_backend *be, const char *table, const char *family, uint32_t *id) {
  return RW(be)->in.ops->family_id(&RW(be)->in, table, family, id);
}
static int rw_family_info(kv_backend *be, uint32_t family_id, kv_family_options *out) {
  return RW(be)->in.ops->family_info(&RW(be)->in, family_id, out);
}
static int rw_table_count(kv_backend *be) { return RW(be)->in.ops->table_count(&RW(be)->in); }
static const char *rw_table_name(kv_backend *be, int i) {
  return RW(be)->in.ops->table_name(&RW(be)->in, i);
}
static int rw_set_dropped_qualifiers(kv_backend *be, uint32_t family_id,
                                     const uint8_t *const *quals, const uint32_t *lens,
                                     uint32_t n) {
  return RW(be)->in.ops->set_dropped_qualifiers(&RW(be)->in, family_id, quals, lens, n);
}
static int rw_flush(kv_backend *be, const char *table) {
  return RW(be)->in.ops->flush(&RW(be)->in, table);
}
static int rw_estimate(kv_backend *be, uint32_t family_id, const kv_range *range,
                       const kv_estimate_opts *opts, uint64_t *rows, uint64_t *bytes) {
  return RW(be)->in.ops->estimate(&RW(be)->in, family_id, range, opts, rows, bytes);
}

static int rw_family_stats(kv_backend *be, uint32_t family_id, kv_family_stats *out) {
  return kv_be_family_stats(&RW(be)->in, family_id, out);
}

static const kv_backend_ops rw_ops = {
  .create_table = rw_create_table,
  .alter_table = rw_alter_table,
  .drop_table = rw_drop_table,
  .family_id = rw_family_id,
  .family_info = rw_family_info,
  .table_count = rw_table_count,
  .table_name = rw_table_name,
  .set_dropped_qualifiers = rw_set_dropped_qualifiers,
  .write = rw_write,
  .check_and_write = rw_check_and_write,
  .flush = rw_flush,
  .get = rw_get,
  .scan_open = rw_scan_open,
  .scan_next = rw_scan_next,
  .scan_row_vectors = rw_scan_row_vectors,
  .scan_metrics = rw_scan_metrics,
  .scan_close = rw_scan_close,
  .snapshot_acquire = rw_snapshot_acquire,
  .snapshot_release = rw_snapshot_release,
  .split_points = rw_split_points,
  .estimate = rw_estimate,
  .family_stats = rw_family_stats,
};

int kv_backend_rowatomic_open(kv_db *db, kv_backend **out) {
  if (!out) return kv_error(KV_MISUSE, "kv_backend_rowatomic_open: NULL argument");
  *out = NULL;
  if (!db) return kv_error(KV_MISUSE, "kv_backend_rowatomic_open: NULL argument");
  rw_backend *r = calloc(1, sizeof *r);
  if (!r || !(r->row_batch = kv_batch_new())) {
    free(r);
    return kv_error(KV_ERR_NOMEM, "kv_backend_rowatomic_open: out of memory");
  }
  pthread_mutex_init(&r->mu, NULL);
  r->db = db;
  kv_backend_local_init(&r->in, db);
  r->be.ops = &rw_ops;
  r->be.impl = r;
  r->be.local = db;
  r->be.caps = (kv_backend_caps){
    .name = "rowatomic",
    .atomicity = KV_BE_ATOMIC_ROW,
    .snapshot = KV_BE_SNAPSHOT_TIMESTAMP,
    .filters = KV_BE_FILTER_EXPR,
    .reverse_scans = true,
    .check_and_write = true,
    .split_points = true,
    .size_estimates = true,
    .split_keys = true,
    .extensions = 0,
  };
  *out = &r->be;
  return KV_OK;
}

void kv_backend_rowatomic_close(kv_backend *be) {
  if (!kv_backend_is_rowatomic(be)) return;
  rw_backend *r = RW(be);
  for (uint32_t i = 0; i < r->n_snaps; i++) r->in.ops->snapshot_release(&r->in, r->snaps[i].seq);
  while (r->n_splits) split_forget(r, r->splits[0].table);
  map_clear(r);
  free(r->tables);
  free(r->fam_table);
  free(r->splits);
  free(r->snaps);
  kv_batch_free(r->row_batch);
  pthread_mutex_destroy(&r->mu);
  free(r);
}

void kv_backend_rowatomic_fail_after(kv_backend *be, uint64_t n) {
  if (!kv_backend_is_rowatomic(be)) return;
  rw_backend *r = RW(be);
  pthread_mutex_lock(&r->mu);
  r->after_armed = true;
  r->after_left = n;
  pthread_mutex_unlock(&r->mu);
}

void kv_backend_rowatomic_fail_random(kv_backend *be, uint64_t seed, uint32_t one_in) {
  if (!kv_backend_is_rowatomic(be)) return;
  rw_backend *r = RW(be);
  pthread_mutex_lock(&r->mu);
  r->rng = seed;
  r->one_in = one_in;
  pthread_mutex_unlock(&r->mu);
}

uint64_t kv_backend_rowatomic_rows(const kv_backend *be) {
  return kv_backend_is_rowatomic(be) ? RW(be)->rows : 0;
}

uint64_t kv_backend_rowatomic_failures(const kv_backend *be) {
  return kv_backend_is_rowatomic(be) ? RW(be)->failures : 0;
}
