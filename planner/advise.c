/*
** planner/advise.c: the row-key advisor's model (contract and model in planner/advise.h):
** the candidate keys, the sample of the table's row keys re-encoded and sorted in each
** candidate's order, each query planned against a hypothetical table with that key (no
** store behind it, so nothing of kv is read for it), and the rows, bytes and seeks the plan
** would read, counted in the sample; the ranking.
**
** Not here: the candidate indexes (planner/advise_index.c, with the pieces both share in
** planner/advise_int.h), parsing the queries or printing the advice (exec/advise.c), the
** real plan of the current key (planner/select.c, through exec/advise.c). Nothing is
** written anywhere.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/salt.h"
#include "catalog/status.h"
#include "catalog/valcodec.h"
#include "planner/advise.h"
#include "planner/advise_int.h"
#include "planner/plan_select.h"
#include "planner/skip_prefix.h"

/* ---- The sample of row keys ---------------------------------------------------------- */

void plan_adv_sample_free(plan_adv_sample *s) {
  free(s->buf);
  free(s->off);
  free(s->klen);
  memset(s, 0, sizeof *s);
}

int plan_adv_sample_add(plan_adv_sample *s, const uint8_t *k, uint32_t len) {
  bool none = !k;
  if (none) len = 0;
  if (s->n == s->capn) {
    uint64_t nc = s->capn ? s->capn * 2 : 1024;
    size_t *o = realloc(s->off, nc * sizeof *o);
    if (o) s->off = o;
    uint32_t *l = realloc(s->klen, nc * sizeof *l);
    if (l) s->klen = l;
    if (!o || !l) return -1;
    s->capn = nc;
  }
  if (s->len + len > s->cap) {
    size_t nc = s->cap ? s->cap * 2 : 65536;
    while (nc < s->len + len) nc *= 2;
    uint8_t *b = realloc(s->buf, nc);
    if (!b) return -1;
    s->buf = b;
    s->cap = nc;
  }
  if (len) memcpy(s->buf + s->len, k, len);
  s->off[s->n] = s->len;
  s->klen[s->n++] = none ? PLAN_ADV_NO_VALUE : len;
  s->len += len;
  return 0;
}

int plan_adv_exec_code(int rc) {
  switch (rc) {
    case KV_ERR_NOMEM: return EXEC_NOMEM;
    case KV_ERR_CORRUPT: return EXEC_CORRUPT;
    case KV_ERR_IO: return EXEC_IOERR;
    case KV_ERR_INTERRUPTED: return EXEC_INTERRUPT;
    default: return EXEC_ERROR;
  }
}

/* Every stride-th row key of t's key family into *s; *rows gets the rows seen (all). */
static int read_sample(kv_db *db, const cat_table *t, uint64_t stride,
                       const atomic_int *interrupt, plan_adv_sample *s, uint64_t *rows,
                       char *msg, size_t cap) {
  uint32_t fid = t->families[0].kv_id;
  kv_scan_options o;
  memset(&o, 0, sizeof o);
  o.family_ids = &fid;
  o.n_families = 1;
  o.interrupt = interrupt;
  kv_scan *sc = NULL;
  int rc = kv_scan_open(db, &o, &sc);
  if (rc != KV_OK) return snprintf(msg, cap, "reading the row keys: %s", kv_errmsg()),
                        plan_adv_exec_code(rc);
  kv_row r;
  uint64_t i = 0;
  while ((rc = kv_scan_next(sc, &r)) == KV_OK) {
    if (i++ % stride == 0 && plan_adv_sample_add(s, r.key, r.key_len)) {
      kv_scan_close(sc);
      return snprintf(msg, cap, "out of memory"), EXEC_NOMEM;
    }
  }
  if (rc != KV_ERR_NOTFOUND) {
    snprintf(msg, cap, "reading the row keys: %s", kv_errmsg());
    kv_scan_close(sc);
    return plan_adv_exec_code(rc);
  }
  kv_scan_close(sc);
  *rows = i;
  return EXEC_OK;
}

/* ---- Candidate keys ------------------------------------------------------------------ */
static bool is_time(const cat_column *c) {
  return c->type.id == CAT_T_DATE || c->type.id == CAT_T_TIME || c->type.id == CAT_T_TIMESTAMP;
}

typedef struct cand_list {
  plan_adv_cand *v; /* candidates (malloc) */
  int n;            /* count */
  bool oom;         /* an allocation failed */
} cand_list;

static void add_cand(cand_list *L, const cat_table *t, const int *cols, const bool *desc) {
  if (L->oom || L->n >= PLAN_ADV_MAX_CANDIDATES) return;
  plan_adv_cand *c = &L->v[L->n];
  memset(c, 0, sizeof *c);
  c->n = t->n_pk;
  c->cols = malloc((size_t)t->n_pk * sizeof *c->cols);
  c->desc = malloc((size_t)t->n_pk * sizeof *c->desc);
  if (!c->cols || !c->desc) {
    free(c->cols);
    free(c->desc);
    L->oom = true;
    return;
  }
  memcpy(c->cols, cols, (size_t)t->n_pk * sizeof *cols);
  memcpy(c->desc, desc, (size_t)t->n_pk * sizeof *desc);
  c->seq = L->n;
  c->current = true;
  for (int i = 0; i < t->n_pk; i++)
    c->current &= cols[i] == t->pk[i] && desc[i] == t->columns[t->pk[i]].desc;
  L->n++;
}

/* Every direction variant of the column order cols: time columns both ways. */
static void add_directions(cand_list *L, const cat_table *t, const int *cols) {
  int n = t->n_pk, nt = 0, tpos[8];
  for (int i = 0; i < n; i++)
    if (is_time(&t->columns[cols[i]]) && nt < 8) tpos[nt++] = i;
  for (int m = 0; m < (1 << nt); m++) {
    bool desc[8];
    for (int i = 0; i < n; i++) desc[i] = t->columns[cols[i]].desc;
    for (int j = 0; j < nt; j++) desc[tpos[j]] = (m >> (nt - 1 - j)) & 1;
    add_cand(L, t, cols, desc);
  }
}

/* Permutations of t's PK in lexicographic order of their positions (Heap's algorithm would
** mix the order; this keeps the current order first). */
static void permute(cand_list *L, const cat_table *t, int *cols, bool *used, int k) {
  if (k == t->n_pk) {
    add_directions(L, t, cols);
    return;
  }
  for (int i = 0; i < t->n_pk; i++) {
    if (used[i]) continue;
    used[i] = true;
    cols[k] = t->pk[i];
    permute(L, t, cols, used, k + 1);
    used[i] = false;
  }
}

static int candidates(const cat_table *t, cand_list *L) {
  L->v = calloc(PLAN_ADV_MAX_CANDIDATES, sizeof *L->v);
  if (!L->v) return -1;
  int cols[8] = {0};
  bool used[8] = {false};
  if (t->n_pk <= 4) {
    permute(L, t, cols, used, 0);
  } else {
    int *c = malloc((size_t)t->n_pk * sizeof *c);
    bool *d = malloc((size_t)t->n_pk * sizeof *d);
    if (!c || !d) {
      free(c);
      free(d);
      return -1;
    }
    for (int f = 0; f < t->n_pk; f++) { /* column f first, the others in their order */
      int k = 0;
      c[k] = t->pk[f];
      d[k++] = t->columns[t->pk[f]].desc;
      for (int i = 0; i < t->n_pk; i++)
        if (i != f) {
          c[k] = t->pk[i];
          d[k++] = t->columns[t->pk[i]].desc;
        }
      add_cand(L, t, c, d);
    }
    free(c);
    free(d);
  }
  return L->oom ? -1 : 0;
}

/* ---- A hypothetical table: t with candidate c's key ------------------------------------ */

void plan_adv_hyp_free(plan_adv_hyp *h) {
  free(h->cols);
  free(h->pk);
  free(h->kc);
  free(h->names);
}

int plan_adv_hyp_make(const cat_table *t, const int *cols, const bool *desc, int n,
                      plan_adv_hyp *h) {
  memset(h, 0, sizeof *h);
  h->t = *t;
  h->t.salt_buckets = 0; /* a candidate key is judged unsalted */
  h->cols = malloc((size_t)t->n_columns * sizeof *h->cols);
  h->pk = malloc((size_t)n * sizeof *h->pk);
  h->kc = malloc((size_t)n * sizeof *h->kc);
  h->names = malloc((size_t)n * sizeof *h->names);
  if (!h->cols || !h->pk || !h->kc || !h->names) return -1;
  memcpy(h->cols, t->columns, (size_t)t->n_columns * sizeof *h->cols);
  for (int i = 0; i < t->n_columns; i++) h->cols[i].pk_pos = -1;
  for (int i = 0; i < n; i++) {
    cat_column *col = &h->cols[cols[i]];
    col->pk_pos = i;
    col->desc = desc[i];
    if (t->columns[cols[i]].pk_pos < 0) col->nullable = true; /* an index's value column */
    h->pk[i] = cols[i];
    h->kc[i] = (cat_key_col){col->type, col->desc, col->nullable};
    h->names[i] = col->name;
  }
  h->t.columns = h->cols;
  h->t.pk = h->pk;
  h->t.n_pk = n;
  h->t.key_cols = h->kc;
  h->t.n_indexes = 0;
  h->t.indexes = NULL;
  return 0;
}

/* ---- The sample in a candidate's order ------------------------------------------------ */

void plan_adv_keys_free(plan_adv_keys *k) {
  free(k->buf);
  free(k->off);
  free(k->len);
  free(k->pfx);
  memset(k, 0, sizeof *k);
}

static int key_cmp(const uint8_t *a, size_t an, const uint8_t *b, size_t bn) {
  int c = memcmp(a, b, an < bn ? an : bn);
  return c ? c : (an > bn) - (an < bn);
}

static _Thread_local const uint8_t *g_sort_buf; /* qsort has no context argument in C11 */
typedef struct kref {
  size_t off;
  uint32_t len;
} kref;
static int kref_cmp(const void *a, const void *b) {
  const kref *x = a, *y = b;
  return key_cmp(g_sort_buf + x->off, x->len, g_sort_buf + y->off, y->len);
}

/* Append p[0..n) to k->buf, growing it; -1 when out of memory. */
static int keys_put(plan_adv_keys *k, size_t *room, size_t *pos, const uint8_t *p, size_t n) {
  if (*pos + n > *room) {
    size_t nc = *room ? *room * 2 : 65536;
    while (nc < *pos + n) nc *= 2;
    uint8_t *b = realloc(k->buf, nc);
    if (!b) return -1;
    k->buf = b;
    *room = nc;
  }
  memcpy(k->buf + *pos, p, n);
  *pos += n;
  return 0;
}

int plan_adv_keys_build(const cat_table *t, const int *cols, const cat_key_col *kc, int n,
                        const plan_adv_sample *s, const plan_adv_sample *lead, plan_adv_keys *k,
                        char *msg, size_t cap) {
  memset(k, 0, sizeof *k);
  int npk = t->n_pk;
  cat_value *vals = malloc((size_t)npk * sizeof *vals), *row = malloc((size_t)n * sizeof *row);
  uint8_t *scratch = malloc(CAT_KEY_MAX + 16), *enc = malloc(CAT_KEY_MAX + 16);
  kref *r = malloc((s->n ? s->n : 1) * sizeof *r);
  k->off = malloc((s->n ? s->n : 1) * sizeof *k->off);
  k->len = malloc((s->n ? s->n : 1) * sizeof *k->len);
  size_t pos = 0, room = 0;
  int rc = !vals || !row || !scratch || !enc || !r || !k->off || !k->len ? EXEC_NOMEM : EXEC_OK;
  if (rc) snprintf(msg, cap, "out of memory");
  for (uint64_t i = 0; i < s->n && !rc; i++) {
    const uint8_t *p = s->buf + s->off[i];
    size_t salt = s->klen[i] ? cat_salt_len(t) : 0; /* a salted table's sampled key */
    cat_error e;
    if (cat_key_decode(t->key_cols, npk, p + salt, p + s->klen[i], vals, scratch, CAT_KEY_MAX + 16,
                       NULL, &e) != CAT_OK) {
      rc = EXEC_CORRUPT;
      snprintf(msg, cap, "a row key of %s does not decode: %s", t->name, e.msg);
      break;
    }
    for (int j = 0; j < n && !rc; j++) {
      const cat_column *col = &t->columns[cols[j]];
      if (col->pk_pos >= 0) {
        row[j] = vals[col->pk_pos];
      } else if (!lead || lead->klen[i] == PLAN_ADV_NO_VALUE) {
        row[j] = cat_v_null(col->type);
      } else if (cat_vc_decode(&col->type, lead->buf + lead->off[i], lead->klen[i], &row[j],
                               &e) != CAT_OK) {
        rc = EXEC_CORRUPT;
        snprintf(msg, cap, "a value of %s.%s does not decode: %s", t->name, col->name, e.msg);
      }
    }
    size_t len = 0;
    if (!rc && cat_key_encode(kc, n, row, enc, CAT_KEY_MAX + 16, &len, &e) != CAT_OK) {
      rc = EXEC_TOOBIG;
      snprintf(msg, cap, "a row of %s does not encode in the candidate key: %s", t->name, e.msg);
    }
    if (!rc && keys_put(k, &room, &pos, enc, len)) {
      rc = EXEC_NOMEM;
      snprintf(msg, cap, "out of memory");
    }
    if (!rc) r[i] = (kref){pos - len, (uint32_t)len};
  }
  free(vals);
  free(row);
  free(scratch);
  free(enc);
  if (rc) {
    free(r);
    return rc;
  }
  g_sort_buf = k->buf;
  if (s->n > 1) qsort(r, s->n, sizeof *r, kref_cmp);
  k->n = s->n;
  k->bytes = pos;
  for (uint64_t i = 0; i < s->n; i++) {
    k->off[i] = r[i].off;
    k->len[i] = r[i].len;
  }
  free(r);
  /* distinct leading-column prefixes */
  uint64_t np = 0;
  const uint8_t *prev = NULL;
  size_t prev_len = 0;
  k->pfx = malloc((k->n + 1) * sizeof *k->pfx);
  if (!k->pfx) return snprintf(msg, cap, "out of memory"), EXEC_NOMEM;
  for (uint64_t i = 0; i < k->n; i++) {
    const uint8_t *p = k->buf + k->off[i];
    const uint8_t *e = cat_key_skip_col(&kc[0], p, p + k->len[i]);
    size_t pl = e ? (size_t)(e - p) : k->len[i];
    if (!prev || pl != prev_len || memcmp(prev, p, pl) != 0) k->pfx[np++] = i;
    prev = p;
    prev_len = pl;
  }
  k->pfx[np] = k->n;
  k->n_pfx = (uint32_t)np;
  return EXEC_OK;
}

/* First index in [lo, hi) whose key is >= key (strict: > key). */
static uint64_t lower(const plan_adv_keys *k, uint64_t lo, uint64_t hi, const uint8_t *key, size_t len,
                      bool strict) {
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo) / 2;
    int c = key_cmp(k->buf + k->off[mid], k->len[mid], key, len);
    if (c < 0 || (strict && c == 0)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* Keys in [lo, hi) inside range r, whose bounds are prefixed by pfx[0..pl). */
uint64_t plan_adv_count_range(const plan_adv_keys *k, uint64_t lo, uint64_t hi, const uint8_t *pfx,
                            size_t pl, const plan_key_range *r, uint8_t *buf) {
  uint64_t a = lo, b = hi;
  if (r->start) {
    if (pl) memcpy(buf, pfx, pl);
    memcpy(buf + pl, r->start, r->start_len);
    a = lower(k, lo, hi, buf, pl + r->start_len, !r->start_incl);
  }
  if (r->end) {
    if (pl) memcpy(buf, pfx, pl);
    memcpy(buf + pl, r->end, r->end_len);
    b = lower(k, a, hi, buf, pl + r->end_len, r->end_incl);
  }
  return b > a ? b - a : 0;
}

/* ---- Judging one query under one candidate -------------------------------------------- */

int plan_adv_judge(const plan_adv_model *m, const plan_adv_hyp *h, const plan_adv_keys *k,
                   const plan_select *sel, bool by_prefix, plan_adv_est *est, char *msg,
                   size_t cap) {
  memset(est, 0, sizeof *est);
  plan_select s2 = *sel;
  s2.table = &h->t;
  plan_arena A;
  plan_arena_init(&A);
  plan_query q;
  int rc = plan_query_build(NULL, &s2, NULL, 0, &A, &q, msg, cap);
  if (rc) {
    plan_query_free(&q);
    plan_arena_free(&A);
    return rc;
  }
  const plan_scan *sc = &q.scan;
  const cat_table *t = &h->t;
  int kind = sc->ranges.kind;
  uint64_t in = 0, seeks = 0;
  uint32_t nr = sc->ranges.n_ranges;
  bool prefix_first = false;
  if (kind == PLAN_SCAN_NOTHING) {
    in = 0;
  } else if (kind == PLAN_SCAN_FULL) {
    in = k->n;
    seeks = 1;
    int hint = plan_skip_hint(sel->hint);
    double P = k->n_pfx;
    bool few = by_prefix && k->n_pfx <= PLAN_SKIP_MAX_PREFIXES;
    /* the skip scan by prefix (planner/skip_prefix.c's rule over the sample) */
    if (!sc->reverse && hint >= 0 && sel->where && t->n_pk >= 2 && few) {
      plan_key_schema ks = {t->key_cols + 1, t->pk + 1, h->names + 1, t->n_pk - 1};
      plan_scan_ranges r;
      memset(&r, 0, sizeof r);
      rc = plan_key_ranges_noexplain(&ks, sel->where, NULL, 0, &r, msg, cap);
      if (rc) {
        plan_scan_ranges_free(&r);
        goto out;
      }
      if (r.kind != PLAN_SCAN_FULL && r.kind != PLAN_SCAN_NOTHING && r.n_ranges > 0) {
        uint64_t skip = 0;
        for (uint32_t p = 0; p < k->n_pfx; p++) {
          uint64_t a = k->pfx[p], b = k->pfx[p + 1];
          const uint8_t *key = k->buf + k->off[a];
          const uint8_t *e = cat_key_skip_col(&t->key_cols[0], key, key + k->len[a]);
          size_t pl = e ? (size_t)(e - key) : k->len[a];
          for (uint32_t j = 0; j < r.n_ranges; j++)
            skip += plan_adv_count_range(k, a, b, key, pl, &r.ranges[j], m->buf);
        }
        double cost = (double)skip * m->w + PLAN_SKIP_SEEK_COST * P * (1.0 + r.n_ranges);
        if (hint > 0 || cost < (double)m->N) {
          kind = PLAN_SCAN_PREFIX_SKIP;
          in = skip;
          nr = r.n_ranges;
          seeks = (uint64_t)P * (1 + r.n_ranges);
        }
      }
      plan_scan_ranges_free(&r);
    }
    /* the first row of each prefix (plan_prefix_first) */
    if (!sc->reverse && hint >= 0 && !sc->residual && few && plan_prefix_first_shape(&s2) &&
        PLAN_SKIP_SEEK_COST * P < (double)m->N) {
      prefix_first = true;
      kind = PLAN_SCAN_PREFIX_SKIP;
      seeks = (uint64_t)P;
    }
  } else {
    for (uint32_t j = 0; j < nr; j++)
      in += plan_adv_count_range(k, 0, k->n, NULL, 0, &sc->ranges.ranges[j], m->buf);
    seeks = nr;
  }
  est->kind = kind;
  est->prefix_first = prefix_first;
  est->reverse = sc->reverse;
  est->sort = q.sort;
  est->limit_pushed = q.limit_pushed;
  est->n_ranges = nr;
  est->range_rows = prefix_first ? (uint64_t)k->n_pfx : (uint64_t)((double)in * m->w + 0.5);
  if (est->range_rows > m->N) est->range_rows = m->N;
  est->seeks = seeks;
  /* rows per family read: the scan sees the rows with a cell in a family it reads */
  double share = 0, bpr = 0;
  for (int i = 0; i < sc->n_families; i++) {
    int f = sc->families[i];
    bpr += m->bpr[f];
    if (m->rows_share[f] > share) share = m->rows_share[f];
  }
  if (sc->key_family || share <= 0) share = 1;
  est->row_bytes = bpr;
  est->key_only = sc->n_families == 0 || (sc->n_families == 1 && sc->key_family);
  est->row_share = share;
  est->kv_limit = sc->kv_limit;
  rc = EXEC_OK; /* rows, bytes and cost: finish() */
out:
  plan_query_free(&q);
  plan_arena_free(&A);
  return rc;
}

/* Rows, bytes and cost of e, once every candidate's ranges are counted: min_rows is the
** fewest rows any candidate's ranges hold for the query (the rows its key terms pass, at
** best). A pushed LIMIT stops the scan once LIMIT rows passed its filter: after LIMIT /
** (min_rows / range_rows) rows. */
void plan_adv_finish(plan_adv_est *e, uint64_t min_rows) {
  double rows = (double)e->range_rows;
  if (e->limit_pushed && e->range_rows && !e->prefix_first) {
    double pass = (double)min_rows / (double)e->range_rows;
    double need = pass > 0 ? (double)e->kv_limit / pass : rows;
    if (need < rows) rows = need;
  }
  e->bytes = (uint64_t)(rows * e->row_bytes + 0.5);
  e->rows = e->prefix_first ? e->range_rows : (uint64_t)(rows * e->row_share + 0.5);
  e->cost = (double)e->rows + PLAN_SKIP_SEEK_COST * (double)e->seeks;
}

/* ---- Ranking --------------------------------------------------------------------------- */
static int cand_cmp(const void *a, const void *b) {
  const plan_adv_cand *x = a, *y = b;
  if (x->cost != y->cost) return x->cost < y->cost ? -1 : 1;
  if (x->bytes != y->bytes) return x->bytes < y->bytes ? -1 : 1;
  if (x->reverse_rows != y->reverse_rows) return x->reverse_rows < y->reverse_rows ? -1 : 1;
  if (x->current != y->current) return x->current ? -1 : 1;
  return (x->seq > y->seq) - (x->seq < y->seq); /* qsort is not stable */
}

void plan_advice_free(plan_advice *a) {
  if (!a) return;
  for (int i = 0; i < a->n_cands; i++) {
    free(a->cands[i].cols);
    free(a->cands[i].desc);
    free(a->cands[i].est);
  }
  free(a->cands);
  for (int i = 0; i < a->n_ix; i++) free(a->ix[i].est);
  free(a->ix);
  memset(a, 0, sizeof *a);
}

void plan_adv_key_text(const cat_table *t, const plan_adv_cand *c, char *buf, size_t cap) {
  size_t k = 0;
  buf[0] = 0;
  for (int i = 0; i < c->n && k < cap; i++) {
    int n = snprintf(buf + k, cap - k, "%s%s%s", i ? ", " : "", t->columns[c->cols[i]].name,
                     c->desc[i] ? " DESC" : "");
    if (n < 0) break;
    k += (size_t)n;
  }
}

int plan_advise(kv_db *db, const cat_table *t, const plan_select *const *qs, int nq,
                const atomic_int *interrupt, plan_advice *out, char *msg, size_t cap) {
  memset(out, 0, sizeof *out);
  cand_list L = {0};
  if (candidates(t, &L)) {
    for (int i = 0; i < L.n; i++) {
      free(L.v[i].cols);
      free(L.v[i].desc);
    }
    free(L.v);
    return snprintf(msg, cap, "out of memory"), EXEC_NOMEM;
  }
  out->cands = L.v;
  out->n_cands = L.n;
  out->n_queries = nq;
  for (int i = 0; i < L.n; i++) {
    L.v[i].est = calloc(nq ? (size_t)nq : 1, sizeof *L.v[i].est);
    if (!L.v[i].est) return snprintf(msg, cap, "out of memory"), EXEC_NOMEM;
  }
  /* the table's size and the sample */
  plan_adv_model m;
  memset(&m, 0, sizeof m);
  kv_family_stats ks;
  uint64_t est_rows = 0;
  if (kv_family_get_stats(db, t->families[0].kv_id, &ks) == KV_OK)
    est_rows = ks.rows + ks.memstore_cells;
  uint64_t stride = est_rows > PLAN_ADV_SAMPLE_MAX
                        ? (est_rows + PLAN_ADV_SAMPLE_MAX - 1) / PLAN_ADV_SAMPLE_MAX
                        : 1;
  plan_adv_sample s = {0};
  m.interrupt = interrupt;
  int rc = read_sample(db, t, stride, interrupt, &s, &m.N, msg, cap);
  if (rc) {
    plan_adv_sample_free(&s);
    return rc;
  }
  out->table_rows = m.N;
  out->sampled = s.n;
  out->stride = stride;
  m.w = s.n ? (double)m.N / (double)s.n : 0;
  for (int f = 0; f < t->n_families && f < (int)KV_MAX_FAMILIES; f++) {
    kv_family_stats fs;
    if (kv_family_get_stats(db, t->families[f].kv_id, &fs) != KV_OK) continue;
    uint64_t bytes = fs.store_file_bytes + fs.memstore_bytes;
    out->table_bytes += bytes;
    m.bpr[f] = m.N ? (double)bytes / (double)m.N : 0;
    uint64_t fr = fs.rows + fs.memstore_cells;
    m.rows_share[f] = m.N ? (fr > m.N ? 1.0 : (double)fr / (double)m.N) : 0;
  }
  m.buf = malloc(2 * (size_t)CAT_KEY_MAX + 16);
  if (!m.buf) {
    plan_adv_sample_free(&s);
    return snprintf(msg, cap, "out of memory"), EXEC_NOMEM;
  }
  for (int c = 0; c < L.n && !rc; c++) {
    plan_adv_hyp h;
    plan_adv_keys k;
    memset(&k, 0, sizeof k);
    if (plan_adv_hyp_make(t, L.v[c].cols, L.v[c].desc, L.v[c].n, &h))
      rc = EXEC_NOMEM, snprintf(msg, cap, "out of memory");
    if (!rc) rc = plan_adv_keys_build(t, L.v[c].cols, h.kc, t->n_pk, &s, NULL, &k, msg, cap);
    for (int i = 0; i < nq && !rc; i++)
      rc = plan_adv_judge(&m, &h, &k, qs[i], true, &L.v[c].est[i], msg, cap);
    plan_adv_keys_free(&k);
    plan_adv_hyp_free(&h);
  }
  for (int i = 0; i < nq && !rc; i++) {
    uint64_t min_rows = UINT64_MAX;
    for (int c = 0; c < L.n; c++) {
      const plan_adv_est *e = &L.v[c].est[i];
      if (!e->prefix_first && e->range_rows < min_rows) min_rows = e->range_rows;
    }
    for (int c = 0; c < L.n; c++) plan_adv_finish(&L.v[c].est[i], min_rows);
  }
  for (int c = 0; c < L.n && !rc; c++) {
    plan_adv_cand *cd = &L.v[c];
    for (int i = 0; i < nq; i++) {
      cd->rows += cd->est[i].rows;
      cd->bytes += cd->est[i].bytes;
      cd->seeks += cd->est[i].seeks;
      cd->cost += cd->est[i].cost;
      if (cd->est[i].reverse) cd->reverse_rows += cd->est[i].rows;
    }
  }
  if (!rc) {
    qsort(L.v, (size_t)L.n, sizeof *L.v, cand_cmp);
    rc = plan_adv_indexes(db, t, qs, nq, &m, &s, out, msg, cap);
  }
  plan_adv_sample_free(&s);
  free(m.buf);
  return rc;
}
