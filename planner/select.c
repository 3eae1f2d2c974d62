/*
** planner/select.c: planning a bound SELECT (or the row source of DELETE / UPSERT SELECT)
** into a plan_query, once the parameters are known:
**  - key ranges over the table's PK (planner/keyrange.h), or, when they bound nothing of the
**    leading key column, perhaps a skip scan by prefix (planner/skip_prefix.h); the WHERE
**    terms they do not
**    answer are split into the pushed-down typed filter (planner/filter.h) and a residual
**    the executor evaluates after decoding;
**  - families read: those of every referenced non-key column, plus the hidden key family
**    "_k" only when the query must see rows whose needed columns are all NULL (no
**    null-rejecting WHERE term, or no non-key column at all);
**  - ORDER BY in key order or its exact reverse plans no sort (a reverse scan); LIMIT and
**    OFFSET go to the kv scan when nothing after the scan filters, groups or reorders;
**    ORDER BY ... LIMIT uses a top-n heap; GROUP BY on a key prefix streams, and so does
**    one on a key prefix whose last column is rounded (TRUNC(TS, 'DAY'): plan_group_contiguous);
**  - estimates of rows and bytes read per range and the table's totals, asked of the storage
**    backend (kv/backend.h kv_be_estimate, kv_be_family_stats: the local store's block
**    indexes and memstores, or HBase's statistics, docs/HBASE.md);
**  - then, when the table has indexes, the index choice (planner/index_choice.c) may put an
**    index scan in place of the table scan; key order and GROUP BY streaming are judged by
**    the same helpers over the index's key;
**  - plan_query_rebuild (planner/plan_reuse.h): the same without estimates or index choice,
**    for a prepared statement re-run with new parameter values;
**  - a SELECT over several tables goes to planner/join.c, which plans each table with the
**    functions here.
** Not here: printing the plan (planner/explain.c), running it (exec/).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/status.h"
#include "catalog/func_sig.h"
#include "planner/filter.h"
#include "planner/index_choice.h"
#include "planner/plan.h"
#include "planner/plan_join.h"
#include "planner/plan_setop.h"
#include "planner/plan_reuse.h"
#include "planner/plan_select.h"
#include "planner/salt.h"
#include "planner/hint.h"
#include "planner/skip_prefix.h"
#include "planner/time_range.h"
#include "sql/ast.h"

/* True if e is surely NULL when every non-key column is NULL. */
static bool null_if_empty(const plan_expr *e, const cat_table *t) {
  switch (e->kind) {
    case PX_COLUMN: return t->columns[e->column].pk_pos < 0;
    case PX_CONST: return e->value.is_null;
    case PX_UNARY: case PX_CAST: return null_if_empty(e->args[0], t);
    case PX_BINARY:
      if (e->op == SQL_OP_AND || e->op == SQL_OP_OR) return false;
      return null_if_empty(e->args[0], t) || null_if_empty(e->args[1], t);
    case PX_IN: case PX_BETWEEN: case PX_LIKE:
      return e->args[0]->kind != PX_ROW && null_if_empty(e->args[0], t);
    default: return false;
  }
}

/* True if predicate e is never TRUE when every non-key column is NULL. */
static bool rejects_empty(const plan_expr *e, const cat_table *t) {
  if (e->kind == PX_BINARY && e->op == SQL_OP_AND)
    return rejects_empty(e->args[0], t) || rejects_empty(e->args[1], t);
  if (e->kind == PX_BINARY && e->op == SQL_OP_OR)
    return rejects_empty(e->args[0], t) && rejects_empty(e->args[1], t);
  if (e->kind == PX_ISNULL) return e->negated && null_if_empty(e->args[0], t);
  if (e->kind == PX_UNARY && e->op == SQL_OP_NOT) return null_if_empty(e->args[0], t);
  return null_if_empty(e, t);
}

void plan_mark_cols(const plan_expr *e, bool *cols) {
  if (!e) return;
  if (e->kind == PX_COLUMN) cols[e->column] = true;
  for (uint32_t i = 0; i < e->n_args; i++) plan_mark_cols(e->args[i], cols);
}

static void mark(const plan_expr *e, bool *cols) { plan_mark_cols(e, cols); }

plan_expr *plan_and_terms(plan_arena *A, const plan_expr *const *terms, uint32_t n) {
  if (n == 0) return NULL;
  plan_expr *r = (plan_expr *)terms[0];
  for (uint32_t i = 1; i < n; i++) {
    plan_expr *e = plan_arena_alloc(A, sizeof *e);
    if (!e) return NULL;
    e->kind = PX_BINARY;
    e->op = SQL_OP_AND;
    e->type = cat_type_of(CAT_T_BOOLEAN);
    e->n_args = 2;
    e->args = plan_arena_alloc(A, 2 * sizeof *e->args);
    if (!e->args) return NULL;
    e->args[0] = r;
    e->args[1] = (plan_expr *)terms[i];
    e->off = r->off;
    r = e;
  }
  return r;
}

static plan_expr *and_of(plan_arena *A, const plan_expr *const *terms, uint32_t n) {
  return plan_and_terms(A, terms, n);
}

int plan_pinned_one(const plan_scan_ranges *r, const int *slots, int n) {
  if (r->n_ranges <= 1) return r->prefix_cols; /* one range: every pinned column is one value */
  int k = 0;
  for (; k < r->prefix_cols && k < n; k++) {
    bool eq = false; /* a key term "column = constant" pins it to one value in every range */
    for (uint32_t j = 0; j < r->n_key_terms && !eq; j++) {
      const plan_expr *e = r->key_terms[j];
      if (e->kind != PX_BINARY || e->op != SQL_OP_EQ) continue;
      for (int side = 0; side < 2; side++) {
        const plan_expr *c = e->args[side], *o = e->args[1 - side];
        if (c->kind == PX_COLUMN && c->column == slots[k] &&
            (o->kind == PX_CONST || o->kind == PX_PARAM))
          eq = true;
      }
    }
    if (!eq) break;
  }
  return k;
}

int plan_key_order_of(const plan_select *s, const int *slots, const cat_key_col *kc, int n,
                      int pinned, bool stream_agg) {
  if (s->n_order == 0 || (s->aggregate && !stream_agg)) return 0;
  int dir = 0, k = 0;
  for (int i = 0; i < s->n_order; i++) {
    const plan_expr *e = s->order_src[i];
    if (e->kind != PX_COLUMN) return 0;
    /* leading key columns pinned to one value by the key ranges may be skipped */
    while (k < pinned && k < n && slots[k] != e->column) k++;
    if (k >= n || slots[k] != e->column) return 0;
    bool rev = s->order[i].desc != kc[k].desc;
    int d = rev ? 2 : 1;
    if (dir && d != dir) return 0;
    dir = d;
    if (kc[k].nullable && s->order[i].nulls_first != (kc[k].desc == rev)) return 0;
    k++;
  }
  return dir;
}

bool plan_group_on_prefix(const plan_select *s, const int *slots, int n) {
  if (s->n_group == 0 || s->n_group > n || s->n_group > 64) return false;
  bool seen[64] = {0};
  for (int i = 0; i < s->n_group; i++) {
    const plan_expr *e = s->group[i];
    if (e->kind != PX_COLUMN) return false;
    int j = 0;
    while (j < s->n_group && (slots[j] != e->column || seen[j])) j++;
    if (j == s->n_group) return false;
    seen[j] = true;
  }
  return true;
}

/* Whether e is ROUND/FLOOR/CEIL/TRUNC of a DATE or TIMESTAMP column by a constant unit and
** multiplier (exec/func_date.c): a function of that column alone that never decreases as
** the column grows, NULL for NULL. *col gets the column. */
static bool date_round_of(const plan_expr *e, int *col) {
  if (e->kind != PX_FUNC || e->n_args < 1 || e->n_args > 3) return false;
  if (e->func != EXEC_F_ROUND && e->func != EXEC_F_FLOOR && e->func != EXEC_F_CEIL &&
      e->func != EXEC_F_TRUNC)
    return false;
  const plan_expr *a = e->args[0];
  if (a->kind != PX_COLUMN || (a->type.id != CAT_T_DATE && a->type.id != CAT_T_TIMESTAMP))
    return false;
  for (uint32_t i = 1; i < e->n_args; i++)
    if (e->args[i]->kind != PX_CONST && e->args[i]->kind != PX_PARAM) return false;
  *col = a->column;
  return true;
}

bool plan_group_contiguous(const plan_select *s, const int *slots, int n) {
  if (s->n_group == 0 || s->n_group > 64 || n > 64) return false;
  bool plain[64] = {0};
  int last = -1; /* the last key column any GROUP BY term reads */
  for (int i = 0; i < s->n_group; i++) {
    const plan_expr *e = s->group[i];
    int col;
    bool is_plain = e->kind == PX_COLUMN;
    if (is_plain) col = e->column;
    else if (!date_round_of(e, &col)) return false;
    int j = 0;
    while (j < n && slots[j] != col) j++;
    if (j == n) return false;
    if (is_plain) plain[j] = true;
    if (j > last) last = j;
  }
  for (int j = 0; j < last; j++)
    if (!plain[j]) return false;
  return true;
}

static int eval_count(const plan_expr *e, const cat_value *params, int n_params, int64_t *out) {
  if (!e) return 0;
  cat_value v;
  if (e->kind == PX_PARAM) {
    if (e->param > n_params || !params) return -1;
    v = params[e->param - 1];
  } else {
    v = e->value;
  }
  if (v.is_null || !cat_type_is_integer(v.type.id) || v.u.i < 0) return -1;
  *out = v.u.i;
  return 0;
}

/* Totals and estimates of scan sc from kv (contract in planner/plan_select.h); shared by
** the table scan (estimate below) and the index scan (planner/index_choice.c). */
void plan_scan_estimate(kv_backend *be, uint32_t count_family, uint32_t rows_family, plan_scan *sc) {
  kv_family_stats st;
  memset(&st, 0, sizeof st);
  if (kv_be_family_stats(be, count_family, &st) == KV_OK)
    sc->total_rows = st.rows + st.memstore_cells;
  for (int i = 0; i < sc->n_families; i++) {
    kv_family_stats fs;
    if (kv_be_family_stats(be, sc->family_ids[i], &fs) == KV_OK)
      sc->total_bytes += fs.store_file_bytes + fs.memstore_bytes;
  }
  sc->est_family = rows_family;
  if (sc->ranges.kind == PLAN_SCAN_NOTHING || sc->ranges.kind == PLAN_SCAN_PREFIX_SKIP)
    return; /* a skip scan by prefix: plan_skip_estimate */
  uint32_t allow = PLAN_EST_BLOCKS;
  kv_estimate_opts o = {0, false, &allow, NULL};
  kv_est_seen seen; /* a block several ranges share is read, and its bytes counted, once */
  seen.n = 0;
  kv_estimate_opts ob = {0, false, NULL, &seen};
  uint32_t n = sc->ranges.n_ranges;
  for (uint32_t r = 0; r < (n ? n : 1); r++) {
    kv_range kr;
    if (n) plan_kv_range(&sc->ranges.ranges[r], &kr);
    uint64_t rows = 0, bytes = 0, krows = 0;
    if (plan_salt_estimate(be, sc, rows_family, n ? &kr : NULL, &o, &rows, &bytes) != KV_OK)
      rows = 0;
    /* a scan of the key family sees every row, also those with no cell in rows_family */
    if (sc->key_family && count_family != rows_family &&
        plan_salt_estimate(be, sc, count_family, n ? &kr : NULL, &o, &krows, &bytes) == KV_OK &&
        krows > rows)
      rows = krows;
    sc->est_rows += rows;
    for (int i = 0; i < sc->n_families; i++)
      if (plan_salt_estimate(be, sc, sc->family_ids[i], n ? &kr : NULL, &ob, &rows, &bytes) ==
          KV_OK)
        sc->est_bytes += bytes;
  }
  if (sc->est_rows > sc->total_rows && sc->total_rows) sc->est_rows = sc->total_rows;
  /* a memstore's bytes may still count twice: never more than the table's */
  if (sc->est_bytes > sc->total_bytes && sc->total_bytes) sc->est_bytes = sc->total_bytes;
}

uint64_t plan_seek_bytes(kv_backend *be, const plan_scan *sc, uint64_t seeks) {
  uint64_t b = 0;
  for (int i = 0; i < sc->n_families; i++) {
    kv_family_stats fs;
    if (kv_be_family_stats(be, sc->family_ids[i], &fs) == KV_OK && fs.blocks)
      b += fs.store_file_bytes / fs.blocks * (seeks < fs.blocks ? seeks : fs.blocks);
  }
  return b;
}

void plan_scan_estimate_limit(kv_backend *be, plan_scan *sc, uint64_t limit) {
  if (sc->est_rows <= limit) return; /* the range ends first: it is read whole */
  if (limit == 0) { /* LIMIT 0: the executor stops at once */
    sc->est_rows = sc->est_bytes = 0;
    return;
  }
  uint32_t n = sc->ranges.n_ranges;
  if (sc->ranges.kind == PLAN_SCAN_PREFIX_SKIP || sc->ranges.kind == PLAN_SCAN_NOTHING ||
      !sc->est_family) {
    /* the scan stops after limit rows: it reads that share of the ranges' bytes */
    sc->est_bytes = (uint64_t)((double)sc->est_bytes * (double)limit / (double)sc->est_rows);
    sc->est_rows = limit;
    return;
  }
  uint32_t allow = PLAN_EST_BLOCKS;
  uint64_t left = limit, bytes_sum = 0;
  for (uint32_t k = 0; k < (n ? n : 1) && left; k++) {
    uint32_t r = sc->reverse && n ? n - 1 - k : k; /* the ranges in scan order */
    kv_range kr;
    if (n) plan_kv_range(&sc->ranges.ranges[r], &kr);
    kv_estimate_opts o = {left, sc->reverse, &allow, NULL};
    uint64_t rows = 0, bytes = 0, fr, fb;
    if (plan_salt_estimate(be, sc, sc->est_family, n ? &kr : NULL, &o, &rows, &bytes) != KV_OK)
      continue;
    for (int i = 0; i < sc->n_families; i++)
      if (plan_salt_estimate(be, sc, sc->family_ids[i], n ? &kr : NULL, &o, &fr, &fb) == KV_OK)
        bytes_sum += fb;
    left -= rows < left ? rows : left;
  }
  sc->est_bytes = bytes_sum;
  sc->est_rows = limit;
}

/* The family among those read (fam[f]) whose row cover (cat_row_cover_of) lets a scan
** leave out the key family, or 0: the one whose own columns not yet read (refd) are fewest,
** since the scan must read them all. A family of more than PLAN_COVER_MAX_COLUMNS own
** columns is not taken (a wide family read whole to spare the key family would cost more
** than the key family), nor one with more than max_extra columns not yet read (on a remote
** backend 0: each cell crosses the network, and the key family's marker is one a row). */
#define PLAN_COVER_MAX_COLUMNS 64
static int cover_family(const cat_table *t, const bool *fam, const bool *refd, int max_extra) {
  uint64_t cover = cat_row_cover_of(t);
  int best = 0, best_extra = PLAN_COVER_MAX_COLUMNS + 1;
  for (int f = 1; cover && f < t->n_families && f < 64; f++) {
    if (!fam[f] || !(cover & (1ull << f))) continue;
    int extra = 0, own = 0;
    for (int i = 0; i < t->n_columns; i++) {
      const cat_column *c = &t->columns[i];
      if (c->family != f || !cat_column_counts_for_cover(c)) continue;
      own++;
      extra += !refd[i];
    }
    if (own <= PLAN_COVER_MAX_COLUMNS && extra <= max_extra && extra < best_extra)
      best = f, best_extra = extra;
  }
  return best;
}

/* Rows are estimated from the table's family with the most blocks (the finest block index;
** every row has a cell in the key family, and most in the busiest family); bytes from the
** families read. A scan that does not read the key family sees only the rows with a cell in
** a family it reads (WHERE LATITUDE IS NOT NULL reads META alone): its rows are estimated
** from the busiest of those families, not from the table's. */
static void estimate(kv_backend *be, plan_scan *sc) {
  const cat_table *t = sc->table;
  uint32_t fid = sc->key_family || sc->n_families == 0 ? t->families[0].kv_id
                                                        : sc->family_ids[0];
  uint64_t best_blocks = 0;
  for (int i = 0; i < t->n_families; i++) {
    bool read = sc->key_family;
    for (int j = 0; j < sc->n_families && !read; j++) read = sc->families[j] == i;
    if (!read) continue;
    kv_family_stats fs;
    if (kv_be_family_stats(be, t->families[i].kv_id, &fs) != KV_OK) continue;
    if (fs.blocks > best_blocks) {
      best_blocks = fs.blocks;
      fid = t->families[i].kv_id;
    }
  }
  plan_scan_estimate(be, t->families[0].kv_id, fid, sc);
  if (sc->ranges.kind == PLAN_SCAN_PREFIX_SKIP) plan_skip_estimate(be, fid, sc);
  uint32_t n = sc->ranges.n_ranges;
  if (sc->ranges.kind == PLAN_SCAN_POINT && sc->est_rows > n) sc->est_rows = n;
}

/* plan_scan_build; with_estimates false leaves the estimates and totals 0 and makes no
** EXPLAIN text of the key bounds or the filter (plan reuse). skip: the skip scan by prefix
** may be considered (planner/skip_prefix.h) with plan_skip_hint `skip_hint`. */
static int scan_build(kv_backend *be, const cat_table *t, const plan_expr *where, const bool *used,
                      const cat_value *params, int n_params, plan_arena *A, plan_scan *sc,
                      char *msg, size_t cap, bool with_estimates, bool skip, int skip_hint) {
  memset(sc, 0, sizeof *sc);
  sc->table = t;
  sc->no_columnar =
      be && (!(be->caps.extensions & KV_BE_EXT_COLUMNAR) || !kv_backend_local_db(be));
  const char **names = plan_arena_alloc(A, (size_t)t->n_pk * sizeof *names);
  if (!names) return snprintf(msg, cap, "out of memory"), EXEC_NOMEM;
  for (int i = 0; i < t->n_pk; i++) names[i] = t->columns[t->pk[i]].name;
  plan_key_schema ks = {t->key_cols, t->pk, names, t->n_pk};
  int rc = with_estimates
               ? plan_key_ranges(&ks, where, params, n_params, &sc->ranges, msg, cap)
               : plan_key_ranges_noexplain(&ks, where, params, n_params, &sc->ranges, msg, cap);
  if (rc) return rc;
  sc->have_ranges = true;
  if (skip) {
    rc = plan_skip_consider(be, t, names, where, params, n_params, skip_hint, with_estimates,
                            A, sc, msg, cap);
    if (rc) return rc;
  } else if (skip_hint > 0) {
    sc->hint_note = "hint SKIP_SCAN ignored: the scan runs in reverse key order";
  }
  /* residual terms: pushed into the kv scan where possible */
  const plan_expr **not_pushed = NULL;
  uint32_t n_np = 0;
  plan_filter *f = NULL;
  if (sc->ranges.n_residual) {
    rc = plan_filter_build(t, sc->ranges.residual, sc->ranges.n_residual, params, n_params, &f,
                           &not_pushed, &n_np, msg, cap);
    if (rc) return rc;
  }
  sc->filter = f;
  sc->residual = and_of(A, (const plan_expr *const *)not_pushed, n_np);
  if (f) {
    /* the pushed terms, for EXPLAIN and family choice */
    const plan_expr **pushed = plan_arena_alloc(A, (sc->ranges.n_residual + 1) * sizeof *pushed);
    uint32_t np = 0;
    for (uint32_t i = 0; pushed && i < sc->ranges.n_residual; i++) {
      bool in = false;
      for (uint32_t j = 0; j < n_np; j++) in |= not_pushed[j] == sc->ranges.residual[i];
      if (!in) pushed[np++] = sc->ranges.residual[i];
    }
    sc->pushed = pushed ? and_of(A, pushed, np) : NULL;
  }
  if (f && with_estimates) { /* the EXPLAIN text (a reused plan is never explained) */
    char buf[2048];
    const char **cn = plan_arena_alloc(A, (size_t)t->n_columns * sizeof *cn);
    for (int i = 0; cn && i < t->n_columns; i++) cn[i] = t->columns[i].name;
    plan_filter_explain(f, cn, buf, sizeof buf);
    sc->filter_text = plan_arena_strndup(A, buf, strlen(buf));
  }
  free(not_pushed);
  /* columns decoded and families read */
  sc->need = plan_arena_alloc(A, (size_t)t->n_columns * sizeof *sc->need);
  bool *refd = plan_arena_alloc(A, (size_t)t->n_columns * sizeof *refd);
  if (!sc->need || !refd) return snprintf(msg, cap, "out of memory"), EXEC_NOMEM;
  for (int i = 0; i < t->n_columns; i++) sc->need[i] = used && used[i];
  mark(sc->residual, sc->need);
  for (int i = 0; i < t->n_columns; i++) refd[i] = sc->need[i];
  for (uint32_t i = 0; i < sc->ranges.n_residual; i++) mark(sc->ranges.residual[i], refd);
  sc->read = refd;
  bool fam[KV_MAX_FAMILIES] = {0};
  int n_nonkey = 0;
  for (int i = 0; i < t->n_columns; i++) {
    if (!refd[i] || t->columns[i].pk_pos >= 0) continue;
    fam[t->columns[i].family] = true;
    n_nonkey++;
  }
  bool rejects = false;
  for (uint32_t i = 0; i < sc->ranges.n_residual; i++)
    rejects |= rejects_empty(sc->ranges.residual[i], t);
  if (n_nonkey == 0) {
    sc->key_family = true;
    sc->key_family_why = "only key columns are needed";
  } else if (!rejects &&
             (sc->cover_family = cover_family(t, fam, refd, be && be->caps.remote
                                                                ? 0
                                                                : PLAN_COVER_MAX_COLUMNS)) > 0) {
    /* every row has a cell of the family's own columns: read them all and the family alone
       sees every row (a row whose read columns are all NULL still has one of the others) */
    for (int i = 0; i < t->n_columns; i++)
      if (cat_column_counts_for_cover(&t->columns[i]) && t->columns[i].family == sc->cover_family)
        refd[i] = true;
  } else if (!rejects) {
    sc->key_family = true;
    sc->key_family_why = "rows whose needed columns are all NULL count";
  }
  if (sc->key_family) {
    sc->families[sc->n_families] = 0;
    sc->family_ids[sc->n_families++] = t->families[0].kv_id;
  }
  for (int f2 = 1; f2 < t->n_families && sc->n_families < PLAN_MAX_FAMILIES; f2++) {
    if (!fam[f2]) continue;
    sc->families[sc->n_families] = f2;
    sc->family_ids[sc->n_families++] = t->families[f2].kv_id;
  }
  if (!sc->index) plan_time_range(t, where, params, n_params, sc);
  if (with_estimates) estimate(be, sc);
  return EXEC_OK;
}

int plan_scan_build(kv_backend *be, const cat_table *t, const plan_expr *where, const bool *used,
                    const cat_value *params, int n_params, plan_arena *A, plan_scan *sc,
                    char *msg, size_t cap) {
  return scan_build(be, t, where, used, params, n_params, A, sc, msg, cap, true, false, 0);
}

void plan_scan_free(plan_scan *sc) {
  if (sc->have_ranges) plan_scan_ranges_free(&sc->ranges);
  plan_scan_ranges_free(&sc->skip_outer);
  plan_filter_free(sc->filter);
  sc->filter = NULL;
  sc->have_ranges = false;
}

/* plan_query_build; full false: the table scan without estimates or index choice (plan
** reuse, planner/plan_reuse.h). */
static int query_build(kv_backend *be, const plan_select *s, const cat_value *params, int n_params,
                       plan_arena *A, plan_query *q, char *msg, size_t cap, bool full) {
  memset(q, 0, sizeof *q);
  q->sel = s;
  q->limit = -1;
  if (s->limit && eval_count(s->limit, params, n_params, &q->limit))
    return snprintf(msg, cap, "LIMIT needs a non-negative integer"), EXEC_ERROR;
  if (s->offset && eval_count(s->offset, params, n_params, &q->offset))
    return snprintf(msg, cap, "OFFSET needs a non-negative integer"), EXEC_ERROR;
  if (s->setop) { /* a set operation (planner/setop.c) */
    return plan_setop_build(be, s, params, n_params, A, q, msg, cap, full);
  }
  if (s->n_from) { /* a join (planner/join.c) */
    q->sort = s->n_order > 0;
    q->topn = q->sort && q->limit >= 0;
    return plan_join_build(be, s, params, n_params, A, q, msg, cap, full);
  }
  if (!s->table) {
    q->sort = s->n_order > 0;
    q->topn = q->sort && q->limit >= 0;
    return EXEC_OK;
  }
  const cat_table *t = s->table;
  q->has_scan = true;
  bool *used = plan_arena_alloc(A, (size_t)t->n_columns * sizeof *used);
  if (!used) return snprintf(msg, cap, "out of memory"), EXEC_NOMEM;
  if (s->aggregate) {
    for (int i = 0; i < s->n_group; i++) mark(s->group[i], used);
    for (int i = 0; i < s->n_aggs; i++) {
      mark(s->aggs[i].arg, used);
      mark(s->aggs[i].arg2, used);
    }
  } else {
    for (int i = 0; i < s->n_proj; i++) mark(s->proj[i], used);
  }
  q->stream_agg = s->aggregate && plan_group_on_prefix(s, t->pk, t->n_pk);
  /* the skip scan by prefix reads forward only: not when the order asked is the reverse of
     the key (nothing of the leading column is pinned then) */
  bool skip = plan_key_order_of(s, t->pk, t->key_cols, t->n_pk, 0, q->stream_agg) != 2;
  int rc = scan_build(be, t, s->where, used, params, n_params, A, &q->scan, msg, cap, full,
                      skip, plan_skip_hint(s->hint));
  if (rc) return rc;
  int dir = plan_key_order_of(s, t->pk, t->key_cols, t->n_pk,
                              plan_pinned_one(&q->scan.ranges, t->pk, t->n_pk), q->stream_agg);
  if (t->n_indexes > 0 && full) {
    rc = plan_index_choose(be, s, used, params, n_params, A, q, &dir, msg, cap);
    if (rc) return rc;
  }
  /* a query that needs only the first row of each leading-key value reads that row alone
     (planner/skip_prefix.h plan_prefix_first) */
  int hint = plan_skip_hint(s->hint);
  int pfm = plan_prefix_first_cols(s);
  if (!q->scan.index && dir != 2 && hint >= 0 && pfm > 0) {
    if (q->scan.ranges.kind == PLAN_SCAN_FULL && s->where) {
      /* the WHERE's bounds on later key columns, left to a filter by the skip scan's cost
         rule, become its suffix ranges (as SKIP_SCAN would make them): each prefix is then
         sought at its first row in them */
      plan_scan alt;
      rc = scan_build(be, t, s->where, used, params, n_params, A, &alt, msg, cap, full, true, 1);
      if (rc) {
        plan_scan_free(&alt);
        return rc;
      }
      if (alt.ranges.kind == PLAN_SCAN_PREFIX_SKIP && !alt.residual && alt.skip_key.n == pfm &&
          alt.skip_outer.n_ranges == 0) {
        alt.hint_note = q->scan.hint_note;
        alt.n_access = q->scan.n_access;
        alt.access = q->scan.access;
        plan_scan_free(&q->scan);
        q->scan = alt;
      } else {
        plan_scan_free(&alt);
      }
    }
    rc = plan_prefix_first(be, s, hint, A, &q->scan, msg, cap);
    if (rc) return rc;
  }
  /* GROUP BY STATION, TRUNC(TS, 'DAY') over the key (STATION, TS): each group's rows come
     one after another too, so they stream (key order above is judged without this) */
  if (s->aggregate && !q->stream_agg && !q->scan.index &&
      plan_group_contiguous(s, t->pk, t->n_pk))
    q->stream_agg = true;
  q->scan.reverse = dir == 2;
  q->sort = s->n_order > 0 && dir == 0;
  q->topn = q->sort && q->limit >= 0;
  if (q->limit >= 0 && !q->sort && !s->aggregate && !s->distinct && !q->scan.residual &&
      !q->scan.lookup && !q->scan.ix_filter) {
    q->limit_pushed = true;
    q->scan.kv_limit = (uint64_t)q->limit + (uint64_t)q->offset;
    if (q->scan.kv_limit == 0) q->scan.kv_limit = 0; /* LIMIT 0: the executor stops at once */
    if (full) plan_scan_estimate_limit(be, &q->scan, q->scan.kv_limit);
  }
  return EXEC_OK;
}

/* Set q->direct and q->slots (planner/plan.h). Out of memory just leaves direct false. */
static void direct_projection(plan_query *q, plan_arena *A) {
  const plan_select *s = q->sel;
  const cat_table *t = s->table;
  q->direct = false;
  if (!q->has_scan || !t || q->scan.index || q->scan.residual || s->aggregate || q->sort ||
      s->distinct || t->n_columns > 64 || s->n_proj > 64 || !q->scan.need)
    return;
  int16_t *slots = plan_arena_alloc(A, (size_t)t->n_columns * sizeof *slots);
  if (!slots) return;
  for (int c = 0; c < t->n_columns; c++) slots[c] = -1;
  for (int i = 0; i < s->n_proj; i++) {
    const plan_expr *e = s->proj[i];
    if (e->kind != PX_COLUMN || e->column < 0 || e->column >= t->n_columns || slots[e->column] >= 0)
      return;
    slots[e->column] = (int16_t)i;
  }
  for (int c = 0; c < t->n_columns; c++)
    if (q->scan.need[c] && slots[c] < 0) return;
  q->slots = slots;
  q->direct = true;
}

int plan_query_build(kv_backend *be, const plan_select *s, const cat_value *params, int n_params,
                     plan_arena *A, plan_query *q, char *msg, size_t cap) {
  int rc = query_build(be, s, params, n_params, A, q, msg, cap, true);
  if (!rc) direct_projection(q, A);
  if (!rc && q->has_scan) q->scan.hint_unknown = plan_hint_unknown(A, s->hint);
  return rc;
}

int plan_query_rebuild(kv_backend *be, const plan_select *s, const cat_value *params, int n_params,
                       plan_arena *A, plan_query *q, char *msg, size_t cap) {
  int rc = query_build(be, s, params, n_params, A, q, msg, cap, false);
  if (!rc) direct_projection(q, A);
  return rc;
}

int plan_delete_scan_build(kv_backend *be, const plan_delete *d, const cat_value *params,
                           int n_params, plan_arena *A, plan_scan *sc, char *msg, size_t cap) {
  /* an IMMUTABLE_ROWS table's index may hold stale rows (docs/INDEXES.md): a SELECT may
     return one, but a DELETE through it would remove a row its WHERE does not match */
  if (d->table->immutable_rows) {
    int rc = scan_build(be, d->table, d->where, NULL, params, n_params, A, sc, msg, cap, true,
                        true, plan_skip_hint(d->hint));
    if (!rc) sc->hint_unknown = plan_hint_unknown(A, d->hint);
    return rc;
  }
  memset(sc, 0, sizeof *sc);
  /* the SELECT of no columns with the same table, WHERE and hint; no LIMIT (the DELETE
     counts the rows it deletes itself), so nothing is pushed into the scan for it */
  plan_select *s = plan_arena_alloc(A, sizeof *s);
  if (!s) return snprintf(msg, cap, "out of memory"), EXEC_NOMEM;
  s->table = d->table;
  s->col_names = d->col_names;
  s->where = d->where;
  s->hint = d->hint;
  plan_query q;
  int rc = query_build(be, s, params, n_params, A, &q, msg, cap, true);
  if (!rc && q.has_scan) q.scan.hint_unknown = plan_hint_unknown(A, d->hint);
  if (q.has_scan) *sc = q.scan; /* the caller frees it, after an error too */
  return rc;
}

void plan_query_free(plan_query *q) {
  if (q->has_scan) plan_scan_free(&q->scan);
  q->has_scan = false;
  plan_join_free(q->join);
  q->join = NULL;
  plan_setop_free(q->setop);
  q->setop = NULL;
}
