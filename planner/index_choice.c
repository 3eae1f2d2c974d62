/*
** planner/index_choice.c: choosing between a table scan and its secondary indexes (issue 7),
** Rowan's QueryOptimizer. The table scan of a SELECT is planned first (planner/select.c);
** then every ACTIVE index of the table is a candidate when the WHERE clause bounds its key
** (key ranges over the index key: the indexed values, then the data row's PK; any scan
** kind but FULL), or when it delivers the ORDER BY order of a query with a LIMIT. A
** candidate is covered when every column the query needs (projection, WHERE, GROUP BY,
** aggregate arguments, ORDER BY) is a PK column, a plain indexed column or an INCLUDE
** column; otherwise each index row that passes the filters on index columns looks its data
** row up by PK (a point lookup, kv_get) and the rest of the WHERE runs on the data row.
**
** Cost (abstract units, one unit = reading one row sequentially):
**     cost = R + 8 * L + 0.5 * S
**   R: rows the path reads from its kv table: kv_estimate_rows over its key ranges (block
**      index counts plus memstore rows); when the path delivers the ORDER BY order (or no
**      ORDER BY), nothing after the scan filters or groups and there is a LIMIT, the scan
**      stops after LIMIT + OFFSET rows, so R is capped there;
**   L: point lookups back into the table: R for an uncovered index (the selectivity of the
**      filters on index columns is not known, so every index row read is assumed to look
**      up), 0 for a covered index or the table; a lookup is a seek in every family it reads,
**      about 8 sequential rows' worth of work;
**   S: rows a sort must order when the path does not deliver the ORDER BY order (R).
** The cheapest path wins; on a tie the table wins (no surprise index). Estimates come from
** the store's own statistics only, so an unflushed table counts its memstore rows.
**
** Hints (Phoenix's): /+ INDEX(t idx [idx ...]) +/ makes the cheapest of the named indexes
** that can serve the query the plan even when the table is cheaper (an index that is not
** ACTIVE, or has a key expression the planner cannot bind, cannot; then the hint is ignored,
** as Phoenix ignores an unusable hint, and EXPLAIN says why); /+ NO_INDEX +/ keeps the table
** scan.
**
** Expression keys (Phoenix's functional indexes): the key expression is bound against the
** table (planner/index_expr.h), every WHERE subtree structurally equal to it becomes a
** virtual key slot past the table's columns for key-range derivation, so a comparison, IN,
** BETWEEN, LIKE prefix or IS NULL on it bounds the index exactly as on a column key (on the
** expression's result type, which is the type the index rows were encoded with); the terms
** handed back are mapped to their original form before filters, EXPLAIN or the executor
** see them. A term the ranges answer is not re-checked, so the expression's input columns
** are needed (and make the index uncovered) only when something else reads them. The
** expression's value itself is never read back from the index (it is not a column).
**
** Not here: the table scan itself (planner/select.c), index row codecs (exec/index.h),
** running the index scan and lookups (exec/scan.c), EXPLAIN text (planner/explain.c).
*/
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/status.h"
#include "planner/filter.h"
#include "planner/index_choice.h"
#include "planner/index_expr.h"
#include "planner/plan_select.h"

#define COST_LOOKUP PLAN_COST_LOOKUP
#define COST_SORT PLAN_COST_SORT
#define MAX_HINT_NAMES 8

/* The parsed optimizer hint. */
typedef struct hint {
  bool no_index;                 /* NO_INDEX */
  bool index;                    /* INDEX(...) naming this table */
  int n;                         /* index names given */
  char names[MAX_HINT_NAMES][128]; /* index names (case-folded unless quoted) */
} hint;

/* Next word of hint text at *p: identifiers (folded to upper case unless "quoted"), or a
** single punctuation character. Returns false at the end. */
static bool hint_word(const char **p, char *out, size_t cap) {
  const char *s = *p;
  while (*s && (isspace((unsigned char)*s) || *s == ',')) s++;
  if (!*s) return false;
  size_t n = 0;
  if (*s == '"') {
    s++;
    while (*s && *s != '"') {
      if (n + 1 < cap) out[n++] = *s;
      s++;
    }
    if (*s) s++;
  } else if (isalnum((unsigned char)*s) || *s == '_' || *s == '.' || *s == '$') {
    while (isalnum((unsigned char)*s) || *s == '_' || *s == '.' || *s == '$') {
      if (n + 1 < cap) out[n++] = (char)toupper((unsigned char)*s);
      s++;
    }
  } else {
    out[n++] = *s++;
  }
  out[n] = 0;
  *p = s;
  return true;
}

/* True if hint table name w names t ("T" or, for "S.T", also its last part). */
static bool names_table(const char *w, const cat_table *t) {
  if (strcmp(w, t->name) == 0) return true;
  const char *dot = strrchr(t->name, '.');
  return dot && strcmp(w, dot + 1) == 0;
}

static void parse_hint(const char *text, const cat_table *t, hint *h) {
  memset(h, 0, sizeof *h);
  if (!text) return;
  const char *p = text;
  char w[128];
  while (hint_word(&p, w, sizeof w)) {
    if (strcmp(w, "NO_INDEX") == 0) {
      h->no_index = true;
      continue;
    }
    if (strcmp(w, "INDEX") != 0) continue;
    const char *save = p;
    if (!hint_word(&p, w, sizeof w) || strcmp(w, "(") != 0) {
      p = save;
      continue;
    }
    bool first = true, mine = false;
    while (hint_word(&p, w, sizeof w) && strcmp(w, ")") != 0) {
      if (first) {
        mine = names_table(w, t);
        first = false;
        if (mine) h->index = true;
      } else if (mine && h->n < MAX_HINT_NAMES) {
        snprintf(h->names[h->n++], sizeof h->names[0], "%s", w);
      }
    }
  }
}

static bool hinted(const hint *h, const cat_index *ix) {
  for (int i = 0; i < h->n; i++)
    if (strcmp(h->names[i], ix->name) == 0) return true;
  return false;
}

/* Rows a path reads: est, capped at LIMIT + OFFSET when the scan can stop there. */
static uint64_t rows_read(uint64_t est, const plan_select *s, const plan_query *q,
                          bool ordered, bool filters_after) {
  bool stops = q->limit >= 0 && (ordered || s->n_order == 0) && !s->aggregate &&
               !s->distinct && !filters_after;
  uint64_t k = (uint64_t)q->limit + (uint64_t)q->offset;
  return stops && est > k ? k : est;
}

static double path_cost(uint64_t r, uint64_t lookups, bool sort) {
  return (double)r + COST_LOOKUP * (double)lookups + (sort ? COST_SORT * (double)r : 0.0);
}

/* ---- Building the scan of one index ------------------------------------------------------ */
/* True if every column e references has cov[] set. */
static bool all_covered(const plan_expr *e, const bool *cov) {
  if (!e) return true;
  if (e->kind == PX_COLUMN && !cov[e->column]) return false;
  for (uint32_t i = 0; i < e->n_args; i++)
    if (!all_covered(e->args[i], cov)) return false;
  return true;
}

/* One index candidate under construction. */
typedef struct cand {
  plan_scan sc;      /* the index scan (owns ranges and filter) */
  int *slots;        /* key column slots (arena) */
  int n;             /* key columns */
  int dir;           /* ORDER BY served: 0 no, 1 forward, 2 reverse */
  bool stream_agg;   /* GROUP BY streams over the index key */
} cand;

static int nomem(char *msg, size_t cap) {
  snprintf(msg, cap, "out of memory");
  return EXEC_NOMEM;
}

/* Map the terms of ranges r (key terms and residual) that refer to virtual expression-key
** slots back to their original form. false on out of memory. */
static bool unsub_terms(plan_arena *A, plan_scan_ranges *r, plan_expr *const *kx, int nk,
                        int base) {
  bool oom = false;
  for (uint32_t i = 0; i < r->n_key_terms && !oom; i++)
    r->key_terms[i] = plan_index_expr_unsub(A, r->key_terms[i], kx, nk, base, &oom);
  for (uint32_t i = 0; i < r->n_residual && !oom; i++)
    r->residual[i] = plan_index_expr_unsub(A, r->residual[i], kx, nk, base, &oom);
  return !oom;
}

/* Build the scan of index ix for s into c. need: columns the query needs (used plus every
** WHERE column). kx: NULL when every key is a plain column, else per key its bound
** expression (NULL for a plain column key): such a key gets the virtual slot
** t->n_columns + k, the WHERE is matched against it (planner/index_expr.h), and the
** columns only the answered key terms read are not needed from the data row. EXEC_OK, or
** an error (c->sc to be freed). */
static int build_index_scan(kv_backend *be, const plan_select *s, const cat_index *ix,
                            plan_expr *const *kx, const bool *used, const bool *need,
                            const cat_value *params, int n_params, plan_arena *A, cand *c,
                            char *msg, size_t cap) {
  const cat_table *t = s->table;
  plan_scan *sc = &c->sc;
  memset(c, 0, sizeof *c);
  sc->table = t;
  sc->index = ix;
  int nk = ix->n_keys, n = nk + t->n_pk;
  c->n = n;
  c->slots = plan_arena_alloc(A, (size_t)n * sizeof *c->slots);
  sc->ix_key_cols = plan_arena_alloc(A, (size_t)n * sizeof *sc->ix_key_cols);
  const char **names = plan_arena_alloc(A, (size_t)n * sizeof *names);
  bool *cov = plan_arena_alloc(A, (size_t)t->n_columns * sizeof *cov);
  int *key_pos = plan_arena_alloc(A, (size_t)t->n_columns * sizeof *key_pos);
  if (!c->slots || !sc->ix_key_cols || !names || !cov || !key_pos) return nomem(msg, cap);
  sc->ix_n_keys = nk;
  for (int i = 0; i < t->n_columns; i++) key_pos[i] = -1;
  for (int k = 0; k < n; k++) {
    if (kx && k < nk && kx[k]) {
      /* an expression key: a virtual slot, named by its text, typed by its result */
      c->slots[k] = t->n_columns + k;
      names[k] = ix->keys[k];
      sc->ix_key_cols[k].type = kx[k]->type;
      sc->ix_key_cols[k].desc = ix->key_desc[k];
      sc->ix_key_cols[k].nullable = true;
      continue;
    }
    int col = k < nk ? cat_find_column(t, ix->keys[k]) : t->pk[k - nk];
    c->slots[k] = col;
    names[k] = t->columns[col].name;
    if (k < nk) {
      sc->ix_key_cols[k].type = t->columns[col].type;
      sc->ix_key_cols[k].desc = ix->key_desc[k];
      sc->ix_key_cols[k].nullable = true;
    } else {
      sc->ix_key_cols[k] = t->key_cols[k - nk];
    }
    cov[col] = true;
    if (key_pos[col] < 0) key_pos[col] = k;
  }
  for (int i = 0; i < ix->n_include; i++) {
    int col = cat_find_column(t, ix->include[i]);
    if (col >= 0) cov[col] = true;
  }
  const plan_expr *where = s->where;
  bool oom = false;
  if (kx) where = plan_index_expr_sub(A, s->where, kx, nk, t->n_columns, &oom);
  if (oom) return nomem(msg, cap);
  plan_key_schema ks = {sc->ix_key_cols, c->slots, names, n};
  int rc = plan_key_ranges(&ks, where, params, n_params, &sc->ranges, msg, cap);
  if (rc) return rc;
  sc->have_ranges = true;
  int pinned = plan_pinned_one(&sc->ranges, c->slots, n);
  if (kx) {
    if (!unsub_terms(A, &sc->ranges, kx, nk, t->n_columns)) return nomem(msg, cap);
    /* the WHERE columns needed are those of the terms left to filter: an answered key
       term over an expression is not re-checked, so its input columns are not read */
    bool *need2 = plan_arena_alloc(A, (size_t)t->n_columns * sizeof *need2);
    if (!need2) return nomem(msg, cap);
    for (int i = 0; i < t->n_columns; i++) need2[i] = used && used[i];
    for (int i = 0; i < s->n_order; i++) plan_mark_cols(s->order_src[i], need2);
    for (uint32_t i = 0; i < sc->ranges.n_residual; i++)
      plan_mark_cols(sc->ranges.residual[i], need2);
    need = need2;
  }
  /* a table with a TTL expires data rows on its own clock: always confirm by lookup */
  bool covered = t->ttl_sec == 0;
  for (int i = 0; i < t->n_columns && covered; i++)
    if (need[i] && !cov[i]) covered = false;
  sc->lookup = !covered;
  /* residual terms: over index columns (filter before any lookup) or not (after it) */
  uint32_t nr = sc->ranges.n_residual;
  const plan_expr **pre = plan_arena_alloc(A, (nr + 1) * sizeof *pre);
  const plan_expr **post = plan_arena_alloc(A, (nr + 1) * sizeof *post);
  if (!pre || !post) return nomem(msg, cap);
  uint32_t n_pre = 0, n_post = 0;
  for (uint32_t i = 0; i < nr; i++) {
    const plan_expr *e = sc->ranges.residual[i];
    if (all_covered(e, cov)) pre[n_pre++] = e;
    else post[n_post++] = e;
  }
  /* the index's row layout for the pushed filter */
  plan_filter_col *fc = plan_arena_alloc(A, (size_t)t->n_columns * sizeof *fc);
  if (!fc) return nomem(msg, cap);
  for (int i = 0; i < t->n_columns; i++) {
    fc[i].type = t->columns[i].type;
    fc[i].key_pos = key_pos[i];
    if (key_pos[i] < 0 && cov[i]) {
      fc[i].family_id = ix->kv_data_family;
      fc[i].qual_len = (uint32_t)cat_column_qualifier(t->columns[i].id, fc[i].qual);
    }
  }
  plan_filter_schema fs = {sc->ix_key_cols, n, fc, t->n_columns,
                           sc->index->salt_buckets ? 1 : 0}; /* a salted index's salt byte */
  const plan_expr **not_pushed = NULL;
  uint32_t n_np = 0;
  plan_filter *f = NULL;
  if (n_pre) {
    rc = plan_filter_build_schema(&fs, pre, n_pre, params, n_params, &f, &not_pushed, &n_np,
                                  msg, cap);
    if (rc) return rc;
  }
  sc->filter = f;
  if (f) {
    const plan_expr **pushed = plan_arena_alloc(A, (n_pre + 1) * sizeof *pushed);
    uint32_t np = 0;
    for (uint32_t i = 0; pushed && i < n_pre; i++) {
      bool in = false;
      for (uint32_t j = 0; j < n_np; j++) in |= not_pushed[j] == pre[i];
      if (!in) pushed[np++] = pre[i];
    }
    sc->pushed = pushed ? plan_and_terms(A, pushed, np) : NULL;
    char buf[2048];
    const char **cn = plan_arena_alloc(A, (size_t)t->n_columns * sizeof *cn);
    for (int i = 0; cn && i < t->n_columns; i++) cn[i] = t->columns[i].name;
    plan_filter_explain(f, cn, buf, sizeof buf);
    sc->filter_text = plan_arena_strndup(A, buf, strlen(buf));
  }
  plan_expr *client_pre = plan_and_terms(A, (const plan_expr *const *)not_pushed, n_np);
  free(not_pushed);
  if (sc->lookup) {
    sc->ix_filter = client_pre;
    sc->residual = plan_and_terms(A, post, n_post);
  } else {
    sc->residual = client_pre;
  }
  /* columns decoded: from the index, and (uncovered) from the looked-up data row */
  sc->need = plan_arena_alloc(A, (size_t)t->n_columns * sizeof *sc->need);
  sc->read = plan_arena_alloc(A, (size_t)t->n_columns * sizeof *sc->read);
  sc->lookup_need = plan_arena_alloc(A, (size_t)t->n_columns * sizeof *sc->lookup_need);
  if (!sc->need || !sc->read || !sc->lookup_need) return nomem(msg, cap);
  for (int i = 0; i < t->n_columns; i++) sc->need[i] = used && used[i];
  plan_mark_cols(sc->residual, sc->need);
  plan_mark_cols(sc->ix_filter, sc->need);
  for (int i = 0; i < t->n_columns; i++) sc->read[i] = sc->need[i];
  for (uint32_t i = 0; i < n_pre; i++) plan_mark_cols(pre[i], sc->read);
  /* index families: "_k" always (every index row has its marker), "0" for INCLUDE values */
  sc->families[0] = 0;
  sc->family_ids[0] = ix->kv_key_family;
  sc->n_families = 1;
  bool inc_read = false;
  for (int i = 0; i < t->n_columns; i++) inc_read |= sc->read[i] && cov[i] && key_pos[i] < 0;
  if (inc_read) {
    sc->families[1] = 1;
    sc->family_ids[1] = ix->kv_data_family;
    sc->n_families = 2;
  }
  if (sc->lookup) {
    bool fam[KV_MAX_FAMILIES] = {0};
    sc->lookup_families[0] = 0;
    sc->lookup_family_ids[0] = t->families[0].kv_id;
    sc->n_lookup_families = 1;
    for (int i = 0; i < t->n_columns; i++) {
      sc->lookup_need[i] = sc->need[i] && !cov[i];
      if (sc->lookup_need[i] && t->columns[i].pk_pos < 0) fam[t->columns[i].family] = true;
    }
    for (int f2 = 1; f2 < t->n_families && sc->n_lookup_families < PLAN_MAX_FAMILIES; f2++) {
      if (!fam[f2]) continue;
      sc->lookup_families[sc->n_lookup_families] = f2;
      sc->lookup_family_ids[sc->n_lookup_families++] = t->families[f2].kv_id;
    }
  }
  /* rows and bytes of the index scan: rows counted in the index's key family */
  plan_scan_estimate(be, ix->kv_key_family, ix->kv_key_family, sc);
  c->stream_agg = s->aggregate && plan_group_on_prefix(s, c->slots, n);
  c->dir = plan_key_order_of(s, c->slots, sc->ix_key_cols, n, pinned, c->stream_agg);
  return EXEC_OK;
}

/* Why index ix cannot serve any query, or NULL if it can. *kx gets NULL when every key is
** a plain column, else the bound key expressions (NULL entries for plain column keys; in
** A). why[0..wcap) holds the reason text when it is not static. */
static const char *unusable(const cat_table *t, const cat_index *ix, plan_arena *A,
                            plan_expr ***kx, char *why, size_t wcap) {
  *kx = NULL;
  if (ix->state == CAT_INDEX_BUILDING) return "is still being built";
  if (ix->state != CAT_INDEX_ACTIVE) return "is disabled";
  for (int k = 0; k < ix->n_keys; k++) {
    if (cat_find_column(t, ix->keys[k]) >= 0) continue;
    if (!*kx) {
      *kx = plan_arena_alloc(A, (size_t)ix->n_keys * sizeof **kx);
      if (!*kx) return "could not be considered (out of memory)";
      memset(*kx, 0, (size_t)ix->n_keys * sizeof **kx);
    }
    char m[256];
    if (plan_index_key_bind(t, ix->keys[k], A, &(*kx)[k], m, sizeof m)) {
      snprintf(why, wcap, "has a key expression the planner cannot match (%s)", m);
      return why;
    }
  }
  return NULL;
}

static _Thread_local int64_t plan_as_of_ms; /* plan_index_set_as_of */

void plan_index_set_as_of(int64_t ms) { plan_as_of_ms = ms; }

int64_t plan_as_of(void) { return plan_as_of_ms; }

int plan_index_choose(kv_backend *be, const plan_select *s, const bool *used,
                      const cat_value *params, int n_params, plan_arena *A, plan_query *q,
                      int *dir, char *msg, size_t cap) {
  const cat_table *t = s->table;
  hint h;
  parse_hint(s->hint, t, &h);
  char note[512] = "";
  if (h.no_index) {
    q->scan.hint_note = "hint NO_INDEX: indexes not considered";
    return EXEC_OK;
  }
  if (plan_as_of_ms) { /* plan_index_set_as_of */
    q->scan.hint_note = "AS OF: secondary indexes are not used (their rows need not reflect "
                        "the past)";
    return EXEC_OK;
  }
  bool *need = plan_arena_alloc(A, (size_t)t->n_columns * sizeof *need);
  plan_access *acc = plan_arena_alloc(A, (size_t)(t->n_indexes + 1) * sizeof *acc);
  if (!need || !acc) return nomem(msg, cap);
  for (int i = 0; i < t->n_columns; i++) need[i] = used && used[i];
  plan_mark_cols(s->where, need);
  for (int i = 0; i < s->n_order; i++) plan_mark_cols(s->order_src[i], need);
  /* the table scan */
  bool tsort = s->n_order > 0 && *dir == 0;
  bool tfilt = q->scan.residual != NULL;
  uint64_t tr = rows_read(q->scan.est_rows, s, q, *dir != 0, tfilt);
  acc[0] = (plan_access){NULL, q->scan.ranges.kind, true, s->n_order > 0 && *dir != 0, tr, 0,
                         path_cost(tr, 0, tsort), false};
  int n_acc = 1, best = 0;
  bool best_hinted = false;
  cand bestc;
  memset(&bestc, 0, sizeof bestc);
  bool have_bestc = false;
  int rc = EXEC_OK;
  bool hint_usable = false;
  for (int i = 0; i < t->n_indexes; i++) {
    const cat_index *ix = &t->indexes[i];
    bool forced = h.index && hinted(&h, ix);
    plan_expr **kx = NULL;
    char whybuf[320];
    const char *why = unusable(t, ix, A, &kx, whybuf, sizeof whybuf);
    if (why) {
      if (forced) {
        size_t l = strlen(note);
        snprintf(note + l, sizeof note - l, "%shint INDEX(%s %s) ignored: the index %s",
                 l ? "; " : "", t->name, ix->name, why);
      }
      continue;
    }
    cand c;
    rc = build_index_scan(be, s, ix, kx, used, need, params, n_params, A, &c, msg, cap);
    if (rc) {
      plan_scan_free(&c.sc);
      break;
    }
    bool ordered = s->n_order > 0 && c.dir != 0;
    bool useful = c.sc.ranges.kind != PLAN_SCAN_FULL || (ordered && q->limit >= 0) ||
                  (c.stream_agg && !q->stream_agg);
    if (!useful && !forced) {
      plan_scan_free(&c.sc);
      continue;
    }
    bool isort = s->n_order > 0 && c.dir == 0;
    bool filt = c.sc.residual != NULL || c.sc.ix_filter != NULL;
    uint64_t r = rows_read(c.sc.est_rows, s, q, c.dir != 0, filt);
    uint64_t lk = c.sc.lookup ? r : 0;
    c.sc.est_lookups = lk;
    acc[n_acc] = (plan_access){ix, c.sc.ranges.kind, !c.sc.lookup, ordered, r, lk,
                               path_cost(r, lk, isort), false};
    /* a forced index beats every unforced path; among equals the cheaper wins */
    bool better = forced ? (!best_hinted || acc[n_acc].cost < acc[best].cost)
                         : (!best_hinted && acc[n_acc].cost < acc[best].cost);
    if (forced) hint_usable = true;
    if (better) {
      if (have_bestc) plan_scan_free(&bestc.sc);
      bestc = c;
      have_bestc = true;
      best = n_acc;
      best_hinted = forced;
    } else {
      plan_scan_free(&c.sc);
    }
    n_acc++;
  }
  if (rc) {
    if (have_bestc) plan_scan_free(&bestc.sc);
    return rc;
  }
  if (h.index && h.n == 0 && !note[0])
    snprintf(note, sizeof note, "hint INDEX(%s) ignored: it names no index", t->name);
  else if (h.index && !hint_usable && !note[0])
    snprintf(note, sizeof note, "hint INDEX ignored: %s has no index of that name", t->name);
  else if (best_hinted)
    snprintf(note + strlen(note), sizeof note - strlen(note), "%shint INDEX(%s %s) forces the index",
             note[0] ? "; " : "", t->name, acc[best].index->name);
  acc[best].chosen = true;
  if (have_bestc) {
    /* the index wins: it replaces the table scan */
    plan_scan_free(&q->scan);
    q->scan = bestc.sc;
    q->stream_agg = bestc.stream_agg;
    *dir = bestc.dir;
  }
  if (n_acc > 1 || have_bestc) {
    q->scan.access = acc;
    q->scan.n_access = n_acc;
  }
  if (note[0]) q->scan.hint_note = plan_arena_strndup(A, note, strlen(note));
  return EXEC_OK;
}
