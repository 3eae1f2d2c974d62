/*
** planner/skip_prefix.c: choosing the skip scan by prefix (contract and cost rule in
** planner/skip_prefix.h): the suffix key ranges (plan_key_ranges over key columns 2..n),
** the count of leading prefixes at plan time (kv_be_scan_prefixes, capped), the estimate of
** rows read per prefix and range, the hint, and the EXPLAIN text of the bounds (the suffix
** bounds with "*" for the leading column). Not here: the scan (exec/scan.c hands the ranges
** to kv.h kv_skip_prefix), the EXPLAIN line (planner/explain.c).
*/
#include <ctype.h>
#include <strings.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/keycodec.h"
#include "catalog/agg_sig.h"
#include "catalog/status.h"
#include "planner/plan_select.h"
#include "planner/skip_prefix.h"

uint32_t plan_skip_prefix_len(void *ctx, const uint8_t *key, uint32_t key_len) {
  const plan_skip_key *k = ctx;
  const uint8_t *e = key;
  for (int i = 0; i < k->n && e; i++) e = cat_key_skip_col(&k->cols[i], e, key + key_len);
  return e ? (uint32_t)(e - key) : 0;
}

int plan_skip_hint(const char *hint) {
  if (!hint) return 0;
  int r = 0;
  const char *p = hint;
  while (*p) {
    while (*p && !(isalnum((unsigned char)*p) || *p == '_')) p++;
    const char *w = p;
    while (*p && (isalnum((unsigned char)*p) || *p == '_')) p++;
    size_t n = (size_t)(p - w);
    if (n == 9 && strncasecmp(w, "SKIP_SCAN", 9) == 0) r = 1;
    else if (n == 10 && strncasecmp(w, "RANGE_SCAN", 10) == 0) r = -1;
    else if (n == 12 && strncasecmp(w, "NO_SKIP_SCAN", 12) == 0) r = -2;
  }
  return r;
}

/* Prefixes collected by kv_be_scan_prefixes into the arena. */
typedef struct pfx_list {
  plan_arena *A;
  const uint8_t **p;
  uint32_t *len;
  uint32_t n;
  bool oom;
} pfx_list;

static void collect(void *ctx, const uint8_t *prefix, uint32_t len) {
  pfx_list *l = ctx;
  uint8_t *c = plan_arena_alloc(l->A, len ? len : 1);
  if (!c) {
    l->oom = true;
    return;
  }
  memcpy(c, prefix, len);
  l->p[l->n] = c;
  l->len[l->n++] = len;
}

/* kv range: prefix p + suffix range r (NULL bounds: the prefix's first / past its last
** key), into buf (room for 2 * (plen + CAT_KEY_MAX)). */
static void join_range(const uint8_t *p, uint32_t pl, const plan_key_range *r, uint8_t *buf,
                       kv_range *out) {
  memset(out, 0, sizeof *out);
  uint8_t *s = buf, *e = buf + pl + (r->start ? r->start_len : 0);
  memcpy(s, p, pl);
  if (r->start) memcpy(s + pl, r->start, r->start_len);
  out->start = s;
  out->start_len = pl + (r->start ? r->start_len : 0);
  out->start_inclusive = r->start ? r->start_incl : true;
  if (r->end) {
    memcpy(e, p, pl);
    memcpy(e + pl, r->end, r->end_len);
    out->end = e;
    out->end_len = pl + r->end_len;
    out->end_inclusive = r->end_incl;
  } else {
    size_t el = 0;
    if (cat_key_prefix_end(p, pl, e, &el)) {
      out->end = e;
      out->end_len = el;
    }
  }
}

/* Rows (and bytes of families fids[0..nf)) the suffix ranges hold over the prefixes. */
static void estimate_over(kv_backend *be, uint32_t rows_family, const uint32_t *fids, int nf,
                          const plan_scan_ranges *r, const uint8_t *const *pfx,
                          const uint32_t *plen, uint32_t n_pfx, uint64_t *rows,
                          uint64_t *bytes) {
  *rows = 0;
  if (bytes) *bytes = 0;
  uint8_t *buf = malloc(2 * ((size_t)CAT_KEY_MAX + 8) + 2 * CAT_KEY_MAX);
  if (!buf) return;
  /* at most PLAN_SKIP_SAMPLE prefixes, evenly spread, scaled to all of them */
  uint32_t step = (n_pfx + PLAN_SKIP_SAMPLE - 1) / PLAN_SKIP_SAMPLE, sampled = 0;
  if (step == 0) step = 1;
  uint64_t rs = 0, bs = 0;
  uint32_t allow = PLAN_EST_BLOCKS; /* cut blocks counted from their keys (plan_select.h) */
  kv_estimate_opts o = {0, false, &allow, NULL};
  kv_est_seen seen; /* prefixes and ranges in key order: a block they share counts once */
  seen.n = 0;
  kv_estimate_opts ob = {0, false, NULL, &seen};
  for (uint32_t p = 0; p < n_pfx; p += step, sampled++)
    for (uint32_t i = 0; i < r->n_ranges; i++) {
      kv_range kr;
      join_range(pfx[p], plen[p], &r->ranges[i], buf, &kr);
      uint64_t n = 0, b = 0;
      if (kv_be_estimate(be, rows_family, &kr, &o, &n, &b) == KV_OK) rs += n;
      for (int f = 0; bytes && f < nf; f++)
        if (kv_be_estimate(be, fids[f], &kr, &ob, &n, &b) == KV_OK) bs += b;
    }
  free(buf);
  double scale = sampled ? (double)n_pfx / (double)sampled : 0.0;
  *rows = (uint64_t)((double)rs * scale + 0.5);
  if (bytes) *bytes = (uint64_t)((double)bs * scale + 0.5);
}

void plan_skip_estimate(kv_backend *be, uint32_t rows_family, plan_scan *sc) {
  estimate_over(be, rows_family, sc->family_ids, sc->n_families, &sc->ranges, sc->skip_pfx,
                sc->skip_pfx_len, sc->skip_prefixes, &sc->est_rows, &sc->est_bytes);
  /* finding each prefix is a seek of its own, into the block of its first row: half the
     time another block than its ranges' */
  sc->est_bytes += plan_seek_bytes(be, sc, (sc->skip_prefixes + 1) / 2);
  if (sc->est_rows > sc->total_rows && sc->total_rows) sc->est_rows = sc->total_rows;
}

/* The suffix bounds' text with "*, " (stars of them) after every '[' outside quoted
** literals. */
static const char *star_text(plan_arena *A, const char *t, int stars) {
  size_t n = strlen(t), extra = 0;
  for (size_t i = 0; i < n; i++) extra += t[i] == '[' ? 3 * (size_t)stars : 0;
  char *o = plan_arena_alloc(A, n + extra + 1);
  if (!o) return NULL;
  bool q = false;
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    o[k++] = t[i];
    if (t[i] == '\'') q = !q; /* '' inside a literal toggles twice */
    else if (t[i] == '[' && !q) {
      for (int j = 0; j < stars; j++, k += 3) memcpy(o + k, "*, ", 3);
    }
  }
  o[k] = 0;
  return o;
}

/* The kv ranges of derived key ranges r (arena); NULL on no memory. */
static kv_range *kv_ranges_of(plan_arena *A, const plan_scan_ranges *r) {
  kv_range *k = plan_arena_alloc(A, (r->n_ranges ? r->n_ranges : 1) * sizeof *k);
  if (!k) return NULL;
  for (uint32_t i = 0; i < r->n_ranges; i++) plan_kv_range(&r->ranges[i], &k[i]);
  return k;
}

/* Whether term e is in v[0..n). */
static bool has_term(const plan_expr *const *v, uint32_t n, const plan_expr *e) {
  for (uint32_t i = 0; i < n; i++)
    if (v[i] == e) return true;
  return false;
}

/* The suffix derivation r over the outer one o: a term is answered when either answers it,
** left to the filter when neither does. EXEC_OK or EXEC_NOMEM. */
static int combine_terms(const plan_scan_ranges *o, plan_scan_ranges *r) {
  uint32_t all = o->n_key_terms + o->n_residual;
  const plan_expr **key = malloc((all ? all : 1) * sizeof *key);
  const plan_expr **res = malloc((all ? all : 1) * sizeof *res);
  if (!key || !res) {
    free(key);
    free(res);
    return EXEC_NOMEM;
  }
  uint32_t nk = 0, nr = 0;
  for (uint32_t i = 0; i < o->n_key_terms; i++) key[nk++] = o->key_terms[i];
  for (uint32_t i = 0; i < o->n_residual; i++) {
    const plan_expr *e = o->residual[i];
    if (has_term(r->residual, r->n_residual, e)) res[nr++] = e;
    else key[nk++] = e;
  }
  free(r->key_terms);
  free(r->residual);
  r->key_terms = key;
  r->n_key_terms = nk;
  r->residual = res;
  r->n_residual = nr;
  return EXEC_OK;
}

int plan_skip_consider(kv_backend *be, const cat_table *t, const char *const *names,
                       const plan_expr *where, const cat_value *params, int n_params,
                       int hint, bool explain, plan_arena *A, plan_scan *sc, char *msg,
                       size_t cap) {
  const plan_scan_ranges *o = &sc->ranges;
  /* the prefix: the leading key column when nothing bounds it; else the key columns the
     key ranges bound (they become the outer ranges), when they leave WHERE terms to a
     filter and key columns after them */
  bool bounded = (o->kind == PLAN_SCAN_RANGE || o->kind == PLAN_SCAN_SKIP) &&
                 o->n_residual > 0 && o->bound_cols >= 1 && o->bound_cols < t->n_pk &&
                 o->n_ranges <= PLAN_SKIP_MAX_OUTER;
  int pc = o->kind == PLAN_SCAN_FULL ? 1 : bounded ? o->bound_cols : 0;
  if (hint < 0) /* the note names the hint as written */
    sc->hint_note = hint == -2 ? "hint NO_SKIP_SCAN: no skip scan by prefix"
                               : "hint RANGE_SCAN: no skip scan by prefix";
  else if (hint > 0) /* replaced below when the hint is followed */
    sc->hint_note = pc ? "hint SKIP_SCAN ignored: the WHERE bounds no key column after the "
                         "ones its key ranges bound"
                       : "hint SKIP_SCAN ignored: the key ranges leave nothing to a skip scan";
  if (t->salt_buckets && hint > 0) /* its prefixes would start with the salt byte */
    sc->hint_note = "hint SKIP_SCAN ignored: a salted table is read bucket by bucket";
  if (!where || t->n_pk < 2 || hint < 0 || pc == 0 || t->salt_buckets) return EXEC_OK;
  /* the suffix: from the first key column after the prefix whose ranges bound something
     (key columns between, unbounded, join the prefix: `P1 = 1 AND P3 = 9` seeks each
     (1, P2) and reads its P3 = 9 rows) */
  plan_scan_ranges r;
  for (;; pc++) {
    if (pc >= t->n_pk) return EXEC_OK;
    plan_key_schema ks = {t->key_cols + pc, t->pk + pc, names + pc, t->n_pk - pc};
    memset(&r, 0, sizeof r);
    int rc = explain ? plan_key_ranges(&ks, where, params, n_params, &r, msg, cap)
                     : plan_key_ranges_noexplain(&ks, where, params, n_params, &r, msg, cap);
    if (rc) return rc;
    if (r.kind != PLAN_SCAN_FULL && r.kind != PLAN_SCAN_NOTHING && r.n_ranges > 0) break;
    plan_scan_ranges_free(&r);
  }
  kv_range *outer = bounded ? kv_ranges_of(A, o) : NULL;
  if (bounded && !outer) {
    plan_scan_ranges_free(&r);
    return snprintf(msg, cap, "out of memory"), EXEC_NOMEM;
  }
  uint32_t n_outer = bounded ? o->n_ranges : 0;
  /* the prefixes: found in the key family, where every row has a cell; rows estimated in
     the family with the most blocks (the finest block index), as planner/select.c does */
  uint32_t kfam = t->families[0].kv_id, rfam = kfam;
  uint64_t most = 0;
  for (int i = 0; i < t->n_families; i++) {
    kv_family_stats fs;
    if (kv_be_family_stats(be, t->families[i].kv_id, &fs) == KV_OK && fs.blocks > most) {
      most = fs.blocks;
      rfam = t->families[i].kv_id;
    }
  }
  /* more prefixes than the rows the key ranges (or the full scan) read over the cost of
     their seeks cannot win: the count stops there (between PLAN_SKIP_MIN_PROBE and
     PLAN_SKIP_MAX_PREFIXES) */
  uint64_t full = 0, b = 0;
  if (!bounded) {
    if (kv_be_estimate(be, rfam, NULL, NULL, &full, &b) != KV_OK) full = 0;
  } else {
    for (uint32_t i = 0; i < n_outer; i++) {
      uint64_t n = 0;
      if (kv_be_estimate(be, rfam, &outer[i], NULL, &n, &b) == KV_OK) full += n;
    }
  }
  double fit = (double)full / (PLAN_SKIP_SEEK_COST * (1.0 + r.n_ranges));
  uint32_t probe = fit > PLAN_SKIP_MAX_PREFIXES ? PLAN_SKIP_MAX_PREFIXES
                   : fit < PLAN_SKIP_MIN_PROBE  ? PLAN_SKIP_MIN_PROBE
                                                : (uint32_t)fit;
  pfx_list l = {A, plan_arena_alloc(A, probe * sizeof *l.p),
                plan_arena_alloc(A, probe * sizeof *l.len), 0, false};
  if (!l.p || !l.len) {
    plan_scan_ranges_free(&r);
    return snprintf(msg, cap, "out of memory"), EXEC_NOMEM;
  }
  uint32_t n = 0;
  bool more = false;
  plan_skip_key key = {t->key_cols, pc};
  if (kv_be_scan_prefixes(be, kfam, plan_skip_prefix_len, &key, outer, n_outer, probe, collect,
                       &l, &n, &more) != KV_OK ||
      l.oom) {
    plan_scan_ranges_free(&r); /* no estimate: the plan stays */
    return EXEC_OK;
  }
  bool take = hint > 0;
  if (!take && !more) {
    uint64_t skip = 0;
    estimate_over(be, rfam, NULL, 0, &r, l.p, l.len, l.n, &skip, NULL);
    double cost = (double)skip + PLAN_SKIP_SEEK_COST * (double)l.n * (1.0 + r.n_ranges);
    take = cost < (double)full;
  }
  if (take && bounded && combine_terms(o, &r)) {
    plan_scan_ranges_free(&r);
    return snprintf(msg, cap, "out of memory"), EXEC_NOMEM;
  }
  if (!take) {
    plan_scan_ranges_free(&r);
    return EXEC_OK;
  }
  if (bounded) {
    plan_scan_ranges_free(&sc->skip_outer);
    sc->skip_outer = sc->ranges; /* moved: the outer ranges */
  } else {
    plan_scan_ranges_free(&sc->ranges);
  }
  sc->ranges = r;
  sc->ranges.kind = PLAN_SCAN_PREFIX_SKIP;
  sc->ranges.prefix_cols = 0;
  sc->skip_key = key;
  sc->skip_prefixes = l.n;
  sc->skip_more = more;
  sc->skip_probed = probe;
  sc->skip_pfx = l.p;
  sc->skip_pfx_len = l.len;
  sc->skip_explain = explain && r.explain ? star_text(A, r.explain, pc) : NULL;
  if (hint > 0) sc->hint_note = "hint SKIP_SCAN forces the skip scan by prefix";
  return EXEC_OK;
}

/* Whether column c is one of the first m key columns of t. */
static bool in_prefix(const cat_table *t, int m, int c) {
  for (int i = 0; i < m; i++)
    if (t->pk[i] == c) return true;
  return false;
}

/* Whether aggregate g of query s is answered by the first row of each prefix of the first m
** key columns (c1 the next key column): a function of the set of distinct prefix values
** (MIN/MAX of a prefix column, any DISTINCT aggregate of one), or with GROUP BY the prefix
** the MAX of c1 under a descending c1 (MIN under an ascending one), or FIRST_VALUE(x)
** WITHIN GROUP (ORDER BY c1) in the key's direction (LAST_VALUE in the other), when c1
** cannot be NULL: the first row of the prefix that passes the filter holds the extreme. */
static bool first_row_answers(const plan_agg *g, const cat_table *t, int m, bool grouped) {
  int c1 = t->n_pk > m ? t->pk[m] : -1;
  if (g->arg2) { /* FIRST_VALUE(x) WITHIN GROUP (ORDER BY c1 in the key's direction), LAST_VALUE
                    in the other: the x of the group's first row (any x) */
    if (!grouped || c1 < 0 || g->arg2->kind != PX_COLUMN || g->arg2->column != c1) return false;
    const cat_key_col *k = &t->key_cols[m];
    if (k->nullable) return false;
    return g->func == EXEC_AGG_FIRST_VALUE ? g->desc == k->desc
           : g->func == EXEC_AGG_LAST_VALUE ? g->desc != k->desc : false;
  }
  if (g->star || !g->arg || g->arg->kind != PX_COLUMN) return false;
  bool minmax = g->func == EXEC_AGG_MIN || g->func == EXEC_AGG_MAX;
  if (in_prefix(t, m, g->arg->column)) return g->distinct || minmax;
  if (!grouped || g->distinct || c1 < 0 || g->arg->column != c1 || !minmax) return false;
  const cat_key_col *k = &t->key_cols[m];
  if (k->nullable) return false;
  return g->func == EXEC_AGG_MAX ? k->desc : !k->desc;
}

/* m when the columns of exprs v[0..n) (plain columns, repeats allowed) are exactly the
** first m key columns of t, m < t->n_pk; else 0. */
static int leading_set(const cat_table *t, plan_expr *const *v, int n) {
  if (n < 1) return 0;
  int m = 0;
  for (int i = 0; i < n; i++) {
    if (v[i]->kind != PX_COLUMN) return 0;
    bool seen = false;
    for (int j = 0; j < i && !seen; j++) seen = v[j]->column == v[i]->column;
    if (!seen) m++;
  }
  if (m >= t->n_pk) return 0;
  for (int i = 0; i < n; i++)
    if (!in_prefix(t, m, v[i]->column)) return 0;
  return m;
}

int plan_prefix_first_cols(const plan_select *s) {
  const cat_table *t = s->table;
  if (!t || t->n_pk < 2) return 0;
  if (!s->aggregate) return s->distinct ? leading_set(t, s->proj, s->n_proj) : 0;
  int m = 1;
  if (s->n_group == 0) {
    if (s->n_aggs == 0) return 0;
  } else {
    m = leading_set(t, s->group, s->n_group);
    if (!m) return 0;
  }
  for (int i = 0; i < s->n_aggs; i++)
    if (!first_row_answers(&s->aggs[i], t, m, s->n_group > 0)) return 0;
  return m;
}

bool plan_prefix_first_shape(const plan_select *s) { return plan_prefix_first_cols(s) == 1; }

int plan_prefix_first(kv_backend *be, const plan_select *s, int hint, plan_arena *A, plan_scan *sc,
                      char *msg, size_t cap) {
  const cat_table *t = s->table;
  int m = plan_prefix_first_cols(s);
  int kind = sc->ranges.kind;
  /* key ranges over the prefix columns alone bound the prefixes (`WHERE STATION IN (...)
     GROUP BY STATION`): the first row of each prefix inside them */
  bool bounded = (kind == PLAN_SCAN_RANGE || kind == PLAN_SCAN_SKIP) &&
                 sc->ranges.bound_cols <= m && sc->ranges.n_ranges <= PLAN_SKIP_MAX_OUTER;
  if (hint < 0 || sc->index || sc->residual || sc->lookup || sc->reverse || m == 0 ||
      t->salt_buckets /* its prefixes would start with the salt byte */ ||
      (kind != PLAN_SCAN_FULL && kind != PLAN_SCAN_PREFIX_SKIP && !bounded) ||
      (kind == PLAN_SCAN_PREFIX_SKIP && (sc->skip_key.n != m || sc->skip_outer.n_ranges)))
    return EXEC_OK;
  uint32_t n = sc->skip_prefixes;
  bool more = sc->skip_more;
  const uint8_t **pfx = sc->skip_pfx;
  uint32_t *pfx_len = sc->skip_pfx_len;
  if (kind != PLAN_SCAN_PREFIX_SKIP) {
    /* count the prefixes, up to the number whose seeks would cost the scan */
    uint32_t kfam = t->families[0].kv_id;
    uint64_t full = 0, b = 0;
    kv_range *outer = bounded ? kv_ranges_of(A, &sc->ranges) : NULL;
    uint32_t n_outer = bounded ? sc->ranges.n_ranges : 0;
    if (bounded && !outer) return snprintf(msg, cap, "out of memory"), EXEC_NOMEM;
    if (!bounded) {
      if (kv_be_estimate(be, kfam, NULL, NULL, &full, &b) != KV_OK) full = 0;
    } else {
      for (uint32_t i = 0; i < n_outer; i++) {
        uint64_t r = 0;
        if (kv_be_estimate(be, kfam, &outer[i], NULL, &r, &b) == KV_OK) full += r;
      }
    }
    double fit = (double)full / PLAN_SKIP_SEEK_COST;
    uint32_t probe = fit > PLAN_SKIP_MAX_PREFIXES ? PLAN_SKIP_MAX_PREFIXES
                     : fit < PLAN_SKIP_MIN_PROBE  ? PLAN_SKIP_MIN_PROBE
                                                  : (uint32_t)fit;
    pfx_list l = {A, plan_arena_alloc(A, probe * sizeof *l.p),
                  plan_arena_alloc(A, probe * sizeof *l.len), 0, false};
    if (!l.p || !l.len) return snprintf(msg, cap, "out of memory"), EXEC_NOMEM;
    plan_skip_key key = {t->key_cols, m};
    if (kv_be_scan_prefixes(be, kfam, plan_skip_prefix_len, &key, outer, n_outer, probe, collect,
                         &l, &n, &more) != KV_OK ||
        l.oom)
      return EXEC_OK; /* no count: the plan stays */
    pfx = l.p;
    pfx_len = l.len;
    if (more || (full && PLAN_SKIP_SEEK_COST * (double)n >= (double)full)) return EXEC_OK;
    sc->skip_probed = probe;
    if (bounded) { /* the key ranges move to skip_outer; no suffix range (every key of a
                      prefix), the terms they answer stay answered */
      plan_scan_ranges r;
      memset(&r, 0, sizeof r);
      uint32_t nk = sc->ranges.n_key_terms;
      r.key_terms = malloc((nk ? nk : 1) * sizeof *r.key_terms);
      if (!r.key_terms) return snprintf(msg, cap, "out of memory"), EXEC_NOMEM;
      if (nk) memcpy(r.key_terms, sc->ranges.key_terms, nk * sizeof *r.key_terms);
      r.n_key_terms = nk;
      plan_scan_ranges_free(&sc->skip_outer);
      sc->skip_outer = sc->ranges;
      sc->ranges = r;
      sc->skip_explain = NULL;
    }
  } else if (more) {
    return EXEC_OK; /* too many prefixes for one seek each to pay */
  }
  sc->ranges.kind = PLAN_SCAN_PREFIX_SKIP;
  sc->ranges.prefix_cols = 0;
  sc->skip_key = (plan_skip_key){t->key_cols, m};
  sc->skip_prefixes = n;
  sc->skip_more = false;
  sc->skip_pfx = pfx;
  sc->skip_pfx_len = pfx_len;
  sc->prefix_first = true;
  /* one row of each prefix (more where the filter rejects the first ones): a seek each,
     which reads a block of every family (a memstore alone: the row's share of the bytes) */
  double per_row = sc->total_rows ? (double)sc->total_bytes / (double)sc->total_rows : 0;
  uint64_t seek = plan_seek_bytes(be, sc, n);
  sc->est_rows = n;
  sc->est_bytes = seek ? seek : (uint64_t)(per_row * n + 0.5);
  return EXEC_OK;
}
