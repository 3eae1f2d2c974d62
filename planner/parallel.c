/*
** planner/parallel.c: the parallel scan's plan (planner/parallel.h): which queries may run in
** chunks, the merge their chunks need, the chunks' key ranges (the scan's ranges cut at the
** split keys) and EXPLAIN's words for it. Pure: the split keys come from the caller (the
** executor asks the backend, exec/op_parallel.c), nothing here reads the store.
** Not here: running the chunks (exec/op_parallel.c).
*/
#include "planner/parallel.h"

#include <stdio.h>
#include <string.h>

#include "catalog/agg_sig.h"
#include "catalog/status.h"

bool plan_par_eligible(const plan_query *q, uint64_t min_rows, const char **why) {
  *why = NULL;
  if (!q || q->setop || q->join || !q->has_scan || !q->sel || q->sel->n_from) return false;
  const plan_scan *sc = &q->scan;
  int k = sc->ranges.kind;
  if (k != PLAN_SCAN_RANGE && k != PLAN_SCAN_SKIP && k != PLAN_SCAN_FULL) return false;
  return sc->est_rows >= min_rows;
}

int plan_par_buckets(const plan_query *q) {
  const plan_scan *sc = &q->scan;
  if (!sc->table) return 0;
  return sc->index ? sc->index->salt_buckets : sc->table->salt_buckets;
}

/* True when partial aggregates of a combine exactly into the serial answer: COUNT, MIN, MAX,
** SUM / AVG of integers (exact in 128 bits) and SUM / AVG into a DOUBLE (the exact sum rounded
** once, exec/dsum.h). A DECIMAL sum is checked against its 38-digit limit at each addition,
** so it depends on the order. */
static bool combinable(const plan_agg *a) {
  if (a->distinct || a->arg2) return false;
  switch (a->func) {
    case EXEC_AGG_COUNT_STAR: case EXEC_AGG_COUNT: case EXEC_AGG_MIN: case EXEC_AGG_MAX:
      return true;
    case EXEC_AGG_SUM: case EXEC_AGG_AVG: {
      int t = a->arg ? a->arg->type.id : 0;
      return t == CAT_T_TINYINT || t == CAT_T_SMALLINT || t == CAT_T_INTEGER ||
             t == CAT_T_BIGINT || a->type.id == CAT_T_DOUBLE;
    }
    default: return false;
  }
}

int plan_par_merge_of(const plan_query *q, const char **agg_why) {
  const plan_select *s = q->sel;
  *agg_why = NULL;
  if (s->aggregate) {
    for (int i = 0; i < s->n_aggs; i++) {
      if (!combinable(&s->aggs[i])) {
        *agg_why = s->aggs[i].text;
        return PLAN_PAR_SERIAL_AGG;
      }
    }
    return PLAN_PAR_AGG;
  }
  if (q->sort && !s->distinct && !s->n_group) return q->topn ? PLAN_PAR_TOPN : PLAN_PAR_MERGE_SORT;
  return PLAN_PAR_CONCAT;
}

/* Compare bound keys a and b (unsigned bytes, a proper prefix first). */
static int key_cmp(const uint8_t *a, size_t al, const uint8_t *b, size_t bl) {
  size_t n = al < bl ? al : bl;
  int c = n ? memcmp(a, b, n) : 0;
  if (c) return c;
  return al < bl ? -1 : al > bl ? 1 : 0;
}

/* r cut to [lo, hi) (NULL: unbounded) into *out; false when nothing of r is left. The
** bounds point into r or at lo / hi. */
static bool cut_range(const plan_key_range *r, const uint8_t *lo, uint32_t lo_len,
                      const uint8_t *hi, uint32_t hi_len, plan_key_range *out) {
  *out = *r;
  if (lo && (!out->start || key_cmp(lo, lo_len, out->start, out->start_len) > 0)) {
    out->start = (uint8_t *)lo;
    out->start_len = lo_len;
    out->start_incl = true;
  }
  if (hi && (!out->end || key_cmp(hi, hi_len, out->end, out->end_len) <= 0)) {
    out->end = (uint8_t *)hi;
    out->end_len = hi_len;
    out->end_incl = false;
  }
  if (!out->start || !out->end) return true;
  int c = key_cmp(out->start, out->start_len, out->end, out->end_len);
  return c < 0 || (c == 0 && out->start_incl && out->end_incl);
}

/* The chunk arrays of out, room for PLAN_PAR_MAX_CHUNKS chunks (salted: their buckets
** too). EXEC_OK or EXEC_NOMEM. */
static int par_alloc(plan_par *out, bool salted, plan_arena *A) {
  out->ranges = plan_arena_alloc(A, PLAN_PAR_MAX_CHUNKS * sizeof *out->ranges);
  out->n_ranges = plan_arena_alloc(A, PLAN_PAR_MAX_CHUNKS * sizeof *out->n_ranges);
  if (salted) {
    out->salt_lo = plan_arena_alloc(A, PLAN_PAR_MAX_CHUNKS * sizeof *out->salt_lo);
    out->salt_hi = plan_arena_alloc(A, PLAN_PAR_MAX_CHUNKS * sizeof *out->salt_hi);
    if (!out->salt_lo || !out->salt_hi) return EXEC_NOMEM;
  }
  return out->ranges && out->n_ranges ? EXEC_OK : EXEC_NOMEM;
}

/* Append to out the chunks of ranges rs[0..nr) cut at keys[0..n) (ascending; copied into A),
** each reading buckets [b_lo, b_hi) when out is salted; chunks holding none of the ranges
** are dropped. At most PLAN_PAR_MAX_CHUNKS in all (the caller's counts keep to it).
** EXEC_OK or EXEC_NOMEM. */
static int add_chunks(plan_par *out, const plan_key_range *rs, uint32_t nr,
                      const uint8_t *const *cut, const uint32_t *cut_len, uint32_t n_cut,
                      uint16_t b_lo, uint16_t b_hi, plan_arena *A) {
  uint8_t **keys = n_cut ? plan_arena_alloc(A, n_cut * sizeof *keys) : NULL;
  if (n_cut && !keys) return EXEC_NOMEM;
  for (uint32_t c = 0; c < n_cut; c++) { /* the plan keeps its own copy of the split keys */
    keys[c] = plan_arena_alloc(A, cut_len[c] ? cut_len[c] : 1);
    if (!keys[c]) return EXEC_NOMEM;
    memcpy(keys[c], cut[c], cut_len[c]);
  }
  for (uint32_t c = 0; c <= n_cut && out->n_chunks < PLAN_PAR_MAX_CHUNKS; c++) {
    const uint8_t *lo = c > 0 ? keys[c - 1] : NULL, *hi = c < n_cut ? keys[c] : NULL;
    uint32_t lo_len = c > 0 ? cut_len[c - 1] : 0, hi_len = c < n_cut ? cut_len[c] : 0;
    plan_key_range tmp;
    uint32_t n = 0; /* the ranges the chunk holds: counted, then kept (a skip scan's many
                       ranges are not copied into every chunk) */
    for (uint32_t i = 0; i < nr; i++) n += cut_range(&rs[i], lo, lo_len, hi, hi_len, &tmp);
    if (!n) continue;
    plan_key_range *mine = plan_arena_alloc(A, n * sizeof *mine);
    if (!mine) return EXEC_NOMEM;
    n = 0;
    for (uint32_t i = 0; i < nr; i++)
      if (cut_range(&rs[i], lo, lo_len, hi, hi_len, &mine[n])) n++;
    out->ranges[out->n_chunks] = mine;
    out->n_ranges[out->n_chunks] = n;
    if (out->salt_lo) {
      out->salt_lo[out->n_chunks] = b_lo;
      out->salt_hi[out->n_chunks] = b_hi;
    }
    out->n_chunks++;
  }
  return EXEC_OK;
}

/* The chunks built: a reverse scan's put in descending key order, then the threads, the
** merge and the reason to stay serial. EXEC_OK or EXEC_NOMEM. */
static int par_finish(const plan_query *q, const plan_key_range *rs, uint32_t nr, int threads,
                      plan_arena *A, plan_par *out) {
  if (out->n_chunks == 0) { /* every range empty (cannot be from the planner): one chunk */
    out->ranges[0] = (plan_key_range *)rs;
    out->n_ranges[0] = nr;
    if (out->salt_lo) {
      out->salt_lo[0] = 0;
      out->salt_hi[0] = (uint16_t)plan_par_buckets(q);
    }
    out->n_chunks = 1;
  }
  if (q->scan.reverse) /* the serial scan's order: the last chunk first */
    for (uint32_t i = 0, j = out->n_chunks - 1; i < j; i++, j--) {
      plan_key_range *r = out->ranges[i];
      out->ranges[i] = out->ranges[j];
      out->ranges[j] = r;
      uint32_t n = out->n_ranges[i];
      out->n_ranges[i] = out->n_ranges[j];
      out->n_ranges[j] = n;
      if (out->salt_lo) {
        uint16_t t = out->salt_lo[i];
        out->salt_lo[i] = out->salt_lo[j];
        out->salt_lo[j] = t;
        t = out->salt_hi[i];
        out->salt_hi[i] = out->salt_hi[j];
        out->salt_hi[j] = t;
      }
    }
  out->threads = threads < 1 ? 1 : threads;
  if ((uint32_t)out->threads > out->n_chunks) out->threads = (int)out->n_chunks;
  out->merge = plan_par_merge_of(q, &out->agg_why);
  if (out->merge == PLAN_PAR_SERIAL_AGG) { /* its rows would all cross threads: serial */
    size_t n = strlen(out->agg_why) + 64;
    char *why = plan_arena_alloc(A, n);
    if (!why) return EXEC_NOMEM;
    snprintf(why, n, "%s is not combined from partial aggregates", out->agg_why);
    out->serial_why = why;
    out->threads = 1;
  } else if (q->sel->aggregate && q->stream_agg && !q->sort && q->limit >= 0) {
    out->serial_why = "the LIMIT stops the scan of groups in key order early";
    out->threads = 1; /* (in chunks every group would be aggregated first) */
  } else if (threads <= 1) out->serial_why = "the session's scan threads are 1";
  else if (out->n_chunks == 1)
    out->serial_why = out->salt_lo ? "one salt bucket" : "no split point inside the key ranges";
  return EXEC_OK;
}

int plan_par_build(const plan_query *q, const uint8_t *const *cut, const uint32_t *cut_len,
                   uint32_t n_cut, int threads, plan_arena *A, plan_par *out) {
  memset(out, 0, sizeof *out);
  const plan_scan_ranges *pr = &q->scan.ranges;
  static const plan_key_range all = {0};
  const plan_key_range *rs = pr->n_ranges ? pr->ranges : &all; /* FULL: one unbounded range */
  uint32_t nr = pr->n_ranges ? pr->n_ranges : 1;
  if (n_cut > PLAN_PAR_MAX_CHUNKS - 1) n_cut = PLAN_PAR_MAX_CHUNKS - 1;
  int rc = par_alloc(out, false, A);
  if (!rc) rc = add_chunks(out, rs, nr, cut, cut_len, n_cut, 0, 0, A);
  return rc ? rc : par_finish(q, rs, nr, threads, A, out);
}

int plan_par_build_salted(const plan_query *q, int buckets, const uint8_t *const *cut,
                          const uint32_t *cut_len, uint32_t n_cut, int threads, plan_arena *A,
                          plan_par *out) {
  memset(out, 0, sizeof *out);
  const plan_scan_ranges *pr = &q->scan.ranges;
  static const plan_key_range all = {0};
  const plan_key_range *rs = pr->n_ranges ? pr->ranges : &all;
  uint32_t nr = pr->n_ranges ? pr->n_ranges : 1;
  uint32_t nb = buckets < 1 ? 1 : (uint32_t)buckets;
  int rc = par_alloc(out, true, A);
  if (rc) return rc;
  const char *agg_why;
  bool rows = plan_par_merge_of(q, &agg_why) == PLAN_PAR_CONCAT;
  uint32_t want = threads <= 1 ? 1 : rows ? (uint32_t)threads : (uint32_t)threads * 4;
  if (want > PLAN_PAR_MAX_CHUNKS) want = PLAN_PAR_MAX_CHUNKS;
  out->keyed = rows;
  if (nb >= want) { /* runs of whole buckets, each merged in key order inside its chunk */
    for (uint32_t g = 0; g < want; g++) {
      uint16_t lo = (uint16_t)(g * nb / want), hi = (uint16_t)((g + 1) * nb / want);
      rc = add_chunks(out, rs, nr, NULL, NULL, 0, lo, hi, A);
      if (rc) return rc;
    }
    return par_finish(q, rs, nr, threads, A, out);
  }
  /* a chunk per bucket, and the split keys inside the buckets (the bucket byte then more)
     cut them again: at most want - nb of those, spread over them all */
  uint32_t inner = 0;
  for (uint32_t c = 0; c < n_cut; c++) inner += cut_len[c] > 1 && cut[c][0] < nb;
  uint32_t room = want - nb, take = inner < room ? inner : room, seen = 0, k = 0;
  const uint8_t **ik = take ? plan_arena_alloc(A, take * sizeof *ik) : NULL;
  uint32_t *il = take ? plan_arena_alloc(A, take * sizeof *il) : NULL;
  uint8_t *ib = take ? plan_arena_alloc(A, take * sizeof *ib) : NULL;
  if (take && (!ik || !il || !ib)) return EXEC_NOMEM;
  for (uint32_t c = 0; c < n_cut && k < take; c++) {
    if (cut_len[c] <= 1 || cut[c][0] >= nb) continue;
    /* the k-th of take cuts is the inner cut at (k + 1) * (inner + 1) / (take + 1) - 1 */
    uint32_t at = (uint32_t)(((uint64_t)(k + 1) * (inner + 1)) / (take + 1)) - 1;
    if (seen++ != at) continue;
    ib[k] = cut[c][0];
    ik[k] = cut[c] + 1; /* the cut in the bucket's unsalted keys */
    il[k++] = cut_len[c] - 1;
  }
  uint32_t at = 0;
  for (uint32_t b = 0; b < nb; b++) {
    uint32_t first = at;
    while (at < k && ib[at] == b) at++;
    rc = add_chunks(out, rs, nr, ik ? ik + first : NULL, il ? il + first : NULL, at - first,
                    (uint16_t)b, (uint16_t)(b + 1), A); /* (no inner cuts: ik, il NULL) */
    if (rc) return rc;
  }
  return par_finish(q, rs, nr, threads, A, out);
}

void plan_par_prefix(const plan_par *p, char *buf, size_t cap) {
  if (plan_par_parallel(p))
    snprintf(buf, cap, "CLIENT %u-CHUNK PARALLEL %d-WAY ", p->n_chunks, p->threads);
  else
    snprintf(buf, cap, "CLIENT 1-CHUNK SERIAL ");
}
