/*
** planner/advise_index.c: the row-key advisor's candidate secondary indexes (the model in
** planner/advise.h): which non-key columns a query's WHERE bounds, their cell values read
** once for the sampled rows (one scan of the column's family, only its qualifier), the
** index's entries (the value, then the first choice's primary key) encoded and sorted, each
** query planned over them as over a table with that key, and the index-choice rule of
** planner/index_choice.c deciding whether the query would take the index.
**
** Not here: the row-key candidates and the sample (planner/advise.c), the report
** (exec/advise.c). Nothing is written: no index is created.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/status.h"
#include "planner/advise.h"
#include "planner/advise_int.h"
#include "planner/index_choice.h"
#include "planner/skip_prefix.h"

/* Whether some query's WHERE bounds column c by itself (a key range over c alone). */
static int bounded(const cat_table *t, int c, const plan_select *const *qs, int nq, bool *yes,
                   char *msg, size_t cap) {
  const cat_column *col = &t->columns[c];
  cat_key_col kc = {col->type, false, true};
  const char *name = col->name;
  plan_key_schema ks = {&kc, &c, &name, 1};
  *yes = false;
  for (int i = 0; i < nq && !*yes; i++) {
    if (!qs[i]->where) continue;
    plan_scan_ranges r;
    memset(&r, 0, sizeof r);
    int rc = plan_key_ranges_noexplain(&ks, qs[i]->where, NULL, 0, &r, msg, cap);
    *yes = !rc && (r.kind == PLAN_SCAN_POINT || r.kind == PLAN_SCAN_RANGE ||
                   r.kind == PLAN_SCAN_SKIP);
    plan_scan_ranges_free(&r);
    if (rc) return rc;
  }
  return EXEC_OK;
}

/* Column c's cell value for each sampled row key of s (in key order) into *v. */
static int read_values(kv_db *db, const cat_table *t, int c, const plan_adv_sample *s,
                       const atomic_int *interrupt, plan_adv_sample *v, char *msg, size_t cap) {
  const cat_column *col = &t->columns[c];
  uint32_t fid = t->families[col->family].kv_id;
  uint8_t q[8];
  uint32_t ql = (uint32_t)cat_column_qualifier(col->id, q);
  const uint8_t *quals[1] = {q};
  kv_qualifier_set qs = {fid, quals, &ql, 1};
  kv_scan_options o;
  memset(&o, 0, sizeof o);
  o.family_ids = &fid;
  o.n_families = 1;
  o.qualifiers = &qs;
  o.n_qualifier_sets = 1;
  o.interrupt = interrupt;
  kv_scan *sc = NULL;
  int rc = kv_scan_open(db, &o, &sc);
  if (rc != KV_OK)
    return snprintf(msg, cap, "reading %s.%s: %s", t->name, col->name, kv_errmsg()),
           plan_adv_exec_code(rc);
  kv_row r;
  uint64_t j = 0;
  int erc = EXEC_OK;
  while (!erc && (rc = kv_scan_next(sc, &r)) == KV_OK) {
    /* sampled keys before this row have no value; a row not sampled is skipped */
    for (; j < s->n && !erc; j++) {
      const uint8_t *k = s->buf + s->off[j];
      uint32_t kl = s->klen[j];
      int cmp = memcmp(k, r.key, kl < r.key_len ? kl : r.key_len);
      if (!cmp) cmp = (kl > r.key_len) - (kl < r.key_len);
      if (cmp > 0) break;
      const uint8_t *val = NULL;
      uint32_t vl = 0;
      if (!cmp)
        for (uint32_t x = 0; x < r.n_cells; x++)
          if (r.cells[x].qual_len == ql && !memcmp(r.cells[x].qual, q, ql)) {
            val = r.cells[x].value;
            vl = r.cells[x].value_len;
            break;
          }
      if (plan_adv_sample_add(v, val, vl))
        erc = EXEC_NOMEM;
      if (!cmp) {
        j++;
        break;
      }
    }
  }
  kv_scan_close(sc);
  if (erc) return snprintf(msg, cap, "out of memory"), erc;
  if (rc != KV_ERR_NOTFOUND && rc != KV_OK)
    return snprintf(msg, cap, "reading %s.%s: %s", t->name, col->name, kv_errmsg()),
           plan_adv_exec_code(rc);
  for (; j < s->n; j++)
    if (plan_adv_sample_add(v, NULL, 0)) return snprintf(msg, cap, "out of memory"), EXEC_NOMEM;
  return EXEC_OK;
}

/* The fewest rows any row-key candidate's ranges hold for query i. */
static uint64_t min_rows_of(const plan_advice *a, int i) {
  uint64_t m = UINT64_MAX;
  for (int c = 0; c < a->n_cands; c++) {
    const plan_adv_est *e = &a->cands[c].est[i];
    if (!e->prefix_first && e->range_rows < m) m = e->range_rows;
  }
  return m;
}

/* Index ix on column c over the first choice's key: each query's path and the totals. */
static int judge_index(kv_db *db, const cat_table *t, int c, const plan_select *const *qs,
                       int nq, const plan_adv_model *m, const plan_adv_sample *s,
                       const plan_advice *a, plan_adv_index *ix, char *msg, size_t cap) {
  const plan_adv_cand *w = &a->cands[0];
  int n = w->n + 1;
  int cols[65];
  bool desc[65];
  if (n > 65) return EXEC_OK; /* keys that long are not judged */
  cols[0] = c;
  desc[0] = false;
  for (int i = 0; i < w->n; i++) {
    cols[i + 1] = w->cols[i];
    desc[i + 1] = w->desc[i];
  }
  ix->column = c;
  ix->est = calloc(nq ? (size_t)nq : 1, sizeof *ix->est);
  if (!ix->est) return snprintf(msg, cap, "out of memory"), EXEC_NOMEM;
  plan_adv_sample v = {0};
  plan_adv_hyp h;
  plan_adv_keys k;
  memset(&h, 0, sizeof h);
  memset(&k, 0, sizeof k);
  int rc = read_values(db, t, c, s, m->interrupt, &v, msg, cap);
  if (!rc && plan_adv_hyp_make(t, cols, desc, n, &h))
    rc = EXEC_NOMEM, snprintf(msg, cap, "out of memory");
  if (!rc) rc = plan_adv_keys_build(t, cols, h.kc, n, s, &v, &k, msg, cap);
  double entry_bytes = k.n ? (double)k.bytes / (double)k.n : 0;
  for (int i = 0; i < nq && !rc; i++) {
    const plan_adv_est *te = &w->est[i];
    plan_adv_est e;
    rc = plan_adv_judge(m, &h, &k, qs[i], false, &e, msg, cap);
    if (rc) break;
    ix->est[i] = *te;
    if (e.kind != PLAN_SCAN_POINT && e.kind != PLAN_SCAN_RANGE && e.kind != PLAN_SCAN_SKIP)
      continue; /* the WHERE does not bound the index: the planner does not consider it */
    uint64_t mr = min_rows_of(a, i);
    e.row_share = 1; /* every row has an index entry */
    plan_adv_finish(&e, mr < e.range_rows ? mr : e.range_rows);
    double R = (double)e.rows, L = e.key_only ? 0 : R;
    double ix_cost = R + PLAN_COST_LOOKUP * L + (e.sort ? PLAN_COST_SORT * R : 0);
    double t_cost = (double)te->rows + (te->sort ? PLAN_COST_SORT * (double)te->rows : 0);
    if (!(ix_cost < t_cost)) continue; /* on a tie the table wins, as in index_choice.c */
    e.index = true;
    e.lookups = (uint64_t)L;
    e.bytes = (uint64_t)(R * entry_bytes + (L > 0 ? (double)e.bytes : 0) + 0.5);
    e.rows = (uint64_t)(R + L);
    e.seeks += (uint64_t)L;
    e.cost = (double)e.rows + PLAN_SKIP_SEEK_COST * (double)e.seeks;
    ix->est[i] = e;
    ix->n_served++;
  }
  for (int i = 0; i < nq && !rc; i++) {
    ix->rows += ix->est[i].rows;
    ix->bytes += ix->est[i].bytes;
    ix->seeks += ix->est[i].seeks;
    ix->cost += ix->est[i].cost;
  }
  plan_adv_keys_free(&k);
  plan_adv_hyp_free(&h);
  plan_adv_sample_free(&v);
  return rc;
}

static int ix_cmp(const void *a, const void *b) {
  const plan_adv_index *x = a, *y = b;
  if (x->cost != y->cost) return x->cost < y->cost ? -1 : 1;
  return (x->column > y->column) - (x->column < y->column);
}

int plan_adv_indexes(kv_db *db, const cat_table *t, const plan_select *const *qs, int nq,
                     const plan_adv_model *m, const plan_adv_sample *s, plan_advice *out,
                     char *msg, size_t cap) {
  if (out->n_cands == 0) return EXEC_OK;
  out->ix = calloc(PLAN_ADV_MAX_INDEXES, sizeof *out->ix);
  if (!out->ix) return snprintf(msg, cap, "out of memory"), EXEC_NOMEM;
  for (int c = 0; c < t->n_columns && out->n_ix < PLAN_ADV_MAX_INDEXES; c++) {
    if (t->columns[c].pk_pos >= 0) continue;
    bool yes = false;
    int rc = bounded(t, c, qs, nq, &yes, msg, cap);
    if (!rc && yes) rc = judge_index(db, t, c, qs, nq, m, s, out, &out->ix[out->n_ix++], msg, cap);
    if (rc) return rc;
  }
  qsort(out->ix, (size_t)out->n_ix, sizeof *out->ix, ix_cmp);
  return EXEC_OK;
}
