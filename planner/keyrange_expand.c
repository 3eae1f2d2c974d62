/*
** planner/keyrange_expand.c: the second half of key-range derivation (planner/keyrange.h):
** expanding the boxes planner/keyrange.c built into encoded key ranges, left to right (point
** lists multiply the key prefix, the first non-point column ends it, DESC columns invert
** their bytes and swap bounds), capping the count at PLAN_MAX_SKIP_RANGES (fewer key
** columns, then the hull of the leading column), sorting and merging the ranges in key
** space, choosing the scan kind, writing the EXPLAIN bounds in column values, and sorting
** the WHERE terms into key_terms and residual. It reads no data.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/keycodec.h"
#include "catalog/valcodec.h"
#include "catalog/status.h"
#define PLAN_KEYRANGE_INTERNAL
#include "planner/keyrange.h"

#define MAX_TERMS 64     /* top-level AND terms considered for ranges */
#define EXPLAIN_RANGES 8 /* ranges spelled out in the explain text */

typedef struct xr {
  uint8_t *start;    /* inclusive start (arena), when has_start */
  size_t slen;       /* its length */
  bool has_start;    /* false: from the first key */
  uint8_t *end;      /* exclusive end (arena), when has_end */
  size_t elen;       /* its length */
  bool has_end;      /* false: to the last key */
  const char *stext; /* EXPLAIN text of the start tuple (a point: the whole key) */
  const char *etext; /* EXPLAIN text of the end tuple */
  bool pinned;       /* every constrained column pinned to one value (IN lists stay apart) */
  size_t plen;       /* bytes of the pinned prefix columns' values (start begins with them) */
} xr;

typedef struct xrs {
  xr *v;          /* ranges (malloc) */
  uint32_t n, cap; /* count, capacity */
  bool spans;     /* a merge joined ranges of different pinned prefixes: in the merged
                     range those columns are no longer one value */
} xrs;

static uint64_t sat_mul(uint64_t a, uint64_t b) {
  if (a && b > UINT64_MAX / a) return UINT64_MAX;
  return a * b;
}

/* Columns of b the expansion captures (limited to m), the range column (-1 if none) and
** the number of ranges it expands to. */
static int box_captured(const plan_kr_box *b, int n, int m, int *range_col, uint64_t *count) {
  uint64_t cnt = 1;
  int i;
  *range_col = -1;
  for (i = 0; i < m && i < n; i++) {
    const plan_kr_set *s = &b->cols[i];
    if (s->all) break;
    cnt = sat_mul(cnt, s->n);
    if (!plan_kr_set_all_points(s)) {
      *range_col = i;
      i++;
      break;
    }
  }
  *count = cnt;
  return i;
}

static uint8_t *inverted(plan_kr_ctx *c, const plan_kr_pos *p) {
  uint8_t *r = plan_kr_alloc(&c->ar, p->len ? p->len : 1);
  if (!r) return plan_kr_fail(c, EXEC_NOMEM, "out of memory deriving key ranges"), NULL;
  for (uint32_t i = 0; i < p->len; i++) r[i] = (uint8_t)~p->b[i];
  return r;
}

/* Key-space bounds of column interval v (DESC: inverted bytes, bounds swapped). */
static int map_iv(plan_kr_ctx *c, const plan_kr_iv *v, bool desc, plan_kr_pos *lo, plan_kr_pos *hi) {
  if (!desc) {
    *lo = v->lo;
    *hi = v->hi;
    return 0;
  }
  *lo = v->hi;
  *hi = v->lo;
  if (lo->kind == PLAN_KR_POS_INF) lo->kind = PLAN_KR_NEG_INF;
  else {
    lo->kind = lo->kind == PLAN_KR_BEFORE ? PLAN_KR_AFTER : PLAN_KR_BEFORE;
    if (!(lo->b = inverted(c, &v->hi))) return -1;
  }
  if (hi->kind == PLAN_KR_NEG_INF) hi->kind = PLAN_KR_POS_INF;
  else {
    hi->kind = hi->kind == PLAN_KR_BEFORE ? PLAN_KR_AFTER : PLAN_KR_BEFORE;
    if (!(hi->b = inverted(c, &v->lo))) return -1;
  }
  return 0;
}

/* P + b into arena; NULL on error. */
static uint8_t *join(plan_kr_ctx *c, const uint8_t *p, size_t pl, const uint8_t *b, size_t bl, size_t extra) {
  if (pl + bl > CAT_KEY_MAX) return plan_kr_fail(c, EXEC_TOOBIG, "key bound longer than the largest key"), NULL;
  uint8_t *r = plan_kr_alloc(&c->ar, pl + bl + extra + 1);
  if (!r) return plan_kr_fail(c, EXEC_NOMEM, "out of memory deriving key ranges"), NULL;
  if (pl) memcpy(r, p, pl);
  if (bl) memcpy(r + pl, b, bl);
  return r;
}

/* The key after every key starting with k[0..n) into *out; false if none. */
static bool after_prefix(plan_kr_ctx *c, const uint8_t *k, size_t n, uint8_t **out, size_t *olen) {
  if (n == 0) return false;
  uint8_t *r = plan_kr_alloc(&c->ar, n);
  if (!r) { plan_kr_fail(c, EXEC_NOMEM, "out of memory deriving key ranges"); return false; }
  if (!cat_key_prefix_end(k, n, r, olen)) return false;
  *out = r;
  return true;
}

static int xrs_push(plan_kr_ctx *c, xrs *r, const xr *x) {
  if (r->n == r->cap) {
    uint32_t nc = r->cap ? r->cap * 2 : 16;
    xr *nv = realloc(r->v, nc * sizeof *nv);
    if (!nv) return plan_kr_fail(c, EXEC_NOMEM, "out of memory deriving key ranges");
    r->v = nv;
    r->cap = nc;
  }
  r->v[r->n++] = *x;
  return 0;
}

/* Tuple text "[a, b, X]" (mark: ']' or ')') into the arena. */
static const char *tuple_text(plan_kr_ctx *c, const char *const *pts, int np, const char *last, char mark) {
  if (c->no_explain) return ""; /* only EXPLAIN reads the texts: none is made */
  char buf[1024];
  size_t o = 0;
  buf[o++] = '[';
  for (int i = 0; i < np + (last != NULL); i++) {
    const char *t = i < np ? pts[i] : last;
    size_t tl = strlen(t), w = tl + (i ? 2 : 0); /* ", " then the text, without printf */
    if (w >= sizeof buf - o) { o = sizeof buf - 8; break; }
    if (i) {
      buf[o++] = ',';
      buf[o++] = ' ';
    }
    memcpy(buf + o, t, tl);
    o += tl;
  }
  buf[o++] = mark;
  buf[o] = 0;
  char *r = plan_kr_alloc(&c->ar, o + 1);
  if (!r) return plan_kr_fail(c, EXEC_NOMEM, "out of memory deriving key ranges"), NULL;
  memcpy(r, buf, o + 1);
  return r;
}

static const char *lo_text(const plan_kr_pos *p, char *mark) {
  if (p->kind == PLAN_KR_NEG_INF) { *mark = ']'; return "*"; }
  *mark = p->kind == PLAN_KR_BEFORE ? ']' : ')';
  return p->text;
}
static const char *hi_text(const plan_kr_pos *p, char *mark) {
  if (p->kind == PLAN_KR_POS_INF) { *mark = ']'; return "*"; }
  *mark = p->kind == PLAN_KR_AFTER ? ']' : ')';
  return p->text;
}

/* Expand box b over its first `capn` columns (range column rc or -1) into r. */
static int expand_box(plan_kr_ctx *c, const plan_kr_box *b, int capn, int rcol, xrs *r) {
  int n = c->s->n, npts = rcol >= 0 ? rcol : capn;
  uint32_t idx[64] = {0};
  const char *pts[64];
  for (;;) {
    /* prefix of points */
    size_t pl = 0;
    for (int i = 0; i < npts; i++) {
      const plan_kr_pos *p = &b->cols[i].v[idx[i]].lo;
      if (pl + p->len > CAT_KEY_MAX) return plan_kr_fail(c, EXEC_TOOBIG, "key bound longer than the largest key");
      for (uint32_t k = 0; k < p->len; k++) c->buf[pl + k] = c->s->cols[i].desc ? (uint8_t)~p->b[k] : p->b[k];
      pl += p->len;
      pts[i] = p->text;
    }
    const uint8_t *P = plan_kr_copy_bytes(c, c->buf, pl);
    if (!P) return -1;
    uint32_t nr = rcol >= 0 ? b->cols[rcol].n : 1;
    for (uint32_t k = 0; k < nr; k++) {
      xr x;
      memset(&x, 0, sizeof x);
      x.plen = pl;
      if (rcol < 0) {
        x.pinned = true;
        x.has_start = pl > 0;
        x.start = (uint8_t *)P;
        x.slen = pl;
        if (capn == n) { /* one full key: [P, P+00) */
          x.end = join(c, P, pl, NULL, 0, 1);
          if (!x.end) return -1;
          x.elen = cat_key_next(P, pl, x.end);
          x.has_end = true;
          x.stext = x.etext = tuple_text(c, pts, npts, NULL, ']');
        } else {
          x.has_end = after_prefix(c, P, pl, &x.end, &x.elen);
          x.stext = x.etext = tuple_text(c, pts, npts, "*", ']');
        }
        if (c->rc || !x.stext) return -1;
        if (xrs_push(c, r, &x)) return -1;
        continue;
      }
      plan_kr_pos lo, hi;
      x.pinned = plan_kr_iv_is_point(&b->cols[rcol].v[k]);
      if (map_iv(c, &b->cols[rcol].v[k], c->s->cols[rcol].desc, &lo, &hi)) return -1;
      char m1, m2;
      const char *t1 = lo_text(&lo, &m1), *t2 = hi_text(&hi, &m2);
      x.stext = tuple_text(c, pts, npts, t1, m1);
      x.etext = tuple_text(c, pts, npts, t2, m2);
      if (!x.stext || !x.etext) return -1;
      bool empty = false;
      if (lo.kind == PLAN_KR_NEG_INF) {
        x.has_start = pl > 0;
        x.start = (uint8_t *)P;
        x.slen = pl;
      } else {
        uint8_t *k0 = join(c, P, pl, lo.b, lo.len, 0);
        if (!k0) return -1;
        x.has_start = true;
        if (lo.kind == PLAN_KR_BEFORE) { x.start = k0; x.slen = pl + lo.len; }
        else if (!after_prefix(c, k0, pl + lo.len, &x.start, &x.slen)) empty = true;
      }
      if (hi.kind == PLAN_KR_POS_INF) {
        x.has_end = after_prefix(c, P, pl, &x.end, &x.elen);
      } else {
        uint8_t *k1 = join(c, P, pl, hi.b, hi.len, 0);
        if (!k1) return -1;
        if (hi.kind == PLAN_KR_BEFORE) { x.end = k1; x.elen = pl + hi.len; x.has_end = true; }
        else x.has_end = after_prefix(c, k1, pl + hi.len, &x.end, &x.elen);
      }
      if (c->rc) return -1;
      if (!empty && x.has_start && x.has_end && cat_vc_compare(x.start, x.slen, x.end, x.elen) >= 0)
        empty = true;
      if (!empty && xrs_push(c, r, &x)) return -1;
    }
    /* next combination of points (odometer, last column fastest) */
    int i = npts - 1;
    while (i >= 0 && ++idx[i] == b->cols[i].n) idx[i--] = 0;
    if (i < 0) return 0;
  }
}

static int xr_cmp(const void *a, const void *b) {
  const xr *x = a, *y = b;
  if (!x->has_start || !y->has_start) return (int)x->has_start - (int)y->has_start;
  return cat_vc_compare(x->start, x->slen, y->start, y->slen);
}

static bool same_bytes(const uint8_t *a, size_t al, const uint8_t *b, size_t bl) {
  return al == bl && (al == 0 || memcmp(a, b, al) == 0);
}

static void merge_ranges(xrs *r) {
  if (r->n < 2) return;
  qsort(r->v, r->n, sizeof(xr), xr_cmp);
  uint32_t o = 0;
  for (uint32_t i = 1; i < r->n; i++) {
    xr *cur = &r->v[o], *nx = &r->v[i];
    int d = !cur->has_end || !nx->has_start ? -1
            : cat_vc_compare(nx->start, nx->slen, cur->end, cur->elen);
    bool overlap = d < 0 || (d == 0 && !(cur->pinned && nx->pinned));
    if (!overlap) { r->v[++o] = *nx; continue; }
    /* e.g. C0 IN (-2, -3) AND (K0 < 3 OR K0 > 0): each C0 value's two ranges join into
       its whole prefix, and the two prefixes touch and join too: C0 is not pinned */
    if (!same_bytes(cur->start, cur->plen, nx->start, nx->plen)) r->spans = true;
    if (!cur->has_end) continue;
    if (!nx->has_end || cat_vc_compare(nx->end, nx->elen, cur->end, cur->elen) > 0) {
      /* the same point twice (an IN list naming a value again) stays a point */
      bool same = cur->pinned && nx->pinned && same_bytes(cur->start, cur->slen, nx->start, nx->slen) &&
                  same_bytes(cur->end, cur->elen, nx->end, nx->elen);
      cur->has_end = nx->has_end;
      cur->end = nx->end;
      cur->elen = nx->elen;
      if (!same) {
        cur->etext = nx->etext;
        cur->pinned = false;
      }
    }
  }
  r->n = o + 1;
}

static bool xr_is_point(const xr *x) {
  return x->has_start && x->has_end && x->elen == x->slen + 1 && x->end[x->slen] == 0 &&
         memcmp(x->start, x->end, x->slen) == 0;
}

static char *dup_bytes(const uint8_t *p, size_t n) {
  char *r = malloc(n ? n : 1);
  if (r && n) memcpy(r, p, n);
  return r;
}

/* Fill out from the merged ranges. */
static int finish(plan_kr_ctx *c, xrs *r, plan_scan_ranges *out) {
  if (r->n <= 1 && (r->n == 0 || (!r->v[0].has_start && !r->v[0].has_end))) {
    out->kind = r->n == 0 ? PLAN_SCAN_NOTHING : PLAN_SCAN_FULL;
    if (c->no_explain) return 0;
    out->explain = dup_bytes((const uint8_t *)"", 1);
    return out->explain ? 0 : plan_kr_fail(c, EXEC_NOMEM, "out of memory deriving key ranges");
  }
  out->ranges = calloc(r->n, sizeof(plan_key_range));
  if (!out->ranges) return plan_kr_fail(c, EXEC_NOMEM, "out of memory deriving key ranges");
  out->n_ranges = r->n;
  bool all_points = true;
  bool want_text = !c->no_explain;
  size_t tcap = 256, tl = 0;
  char *text = want_text ? malloc(tcap) : NULL;
  if (want_text && !text) return plan_kr_fail(c, EXEC_NOMEM, "out of memory deriving key ranges");
  if (text) text[0] = 0;
  for (uint32_t i = 0; i < r->n; i++) {
    xr *x = &r->v[i];
    plan_key_range *k = &out->ranges[i];
    bool pt = xr_is_point(x);
    all_points = all_points && pt;
    if (x->has_start) {
      if (!(k->start = (uint8_t *)dup_bytes(x->start, x->slen))) goto nomem;
      k->start_len = x->slen;
    }
    k->start_incl = true;
    if (pt) {
      if (!(k->end = (uint8_t *)dup_bytes(x->start, x->slen))) goto nomem;
      k->end_len = x->slen;
      k->end_incl = true;
    } else if (x->has_end) {
      if (!(k->end = (uint8_t *)dup_bytes(x->end, x->elen))) goto nomem;
      k->end_len = x->elen;
    }
    if (!want_text) continue;
    if (i < EXPLAIN_RANGES) {
      char one[2200];
      int w = pt ? snprintf(one, sizeof one, "%s%s", i ? ", " : "", x->stext)
                 : snprintf(one, sizeof one, "%s%s .. %s", i ? ", " : "", x->stext, x->etext);
      if (w < 0) w = 0;
      if ((size_t)w >= sizeof one) w = (int)sizeof one - 1;
      if (tl + (size_t)w + 64 > tcap) {
        tcap = (tl + (size_t)w + 64) * 2;
        char *nt = realloc(text, tcap);
        if (!nt) goto nomem;
        text = nt;
      }
      memcpy(text + tl, one, (size_t)w);
      tl += (size_t)w;
      text[tl] = 0;
    } else if (i == EXPLAIN_RANGES) {
      tl += (size_t)snprintf(text + tl, tcap - tl, ", ... (%u more)", r->n - EXPLAIN_RANGES);
    }
  }
  out->explain = text;
  out->kind = all_points ? PLAN_SCAN_POINT : r->n == 1 ? PLAN_SCAN_RANGE : PLAN_SCAN_SKIP;
  return 0;
nomem:
  free(text);
  return plan_kr_fail(c, EXEC_NOMEM, "out of memory deriving key ranges");
}

/* Hull of column 0 over all boxes (one interval), or ALL. */
static int hull_box(plan_kr_ctx *c, const plan_kr_boxes *bs, plan_kr_box *h) {
  if (plan_kr_box_init(c, h)) return -1;
  plan_kr_pos lo = {PLAN_KR_POS_INF, false, NULL, 0, NULL}, hi = {PLAN_KR_NEG_INF, false, NULL, 0, NULL};
  for (uint32_t i = 0; i < bs->n; i++) {
    const plan_kr_set *s = &bs->v[i].cols[0];
    if (s->all) return 0;
    if (!s->n) continue;
    if (plan_kr_pos_cmp(&s->v[0].lo, &lo) < 0) lo = s->v[0].lo;
    if (plan_kr_pos_cmp(&s->v[s->n - 1].hi, &hi) > 0) hi = s->v[s->n - 1].hi;
  }
  plan_kr_set *s = plan_kr_set_new(c, 1);
  if (!s) return -1;
  s->v[0].lo = lo;
  s->v[0].hi = hi;
  s->n = plan_kr_pos_cmp(&lo, &hi) < 0;
  h->cols[0] = *s;
  return 0;
}

static int push_term(const plan_expr ***v, uint32_t *n, const plan_expr *e, uint32_t cap) {
  if (!*v) {
    *v = malloc((cap ? cap : 1) * sizeof **v);
    if (!*v) return -1;
  }
  (*v)[(*n)++] = e;
  return 0;
}

void plan_kr_derive(plan_kr_ctx *c, const plan_expr *const *terms, uint32_t nt, plan_scan_ranges *out) {
  int n = c->s->n;
  plan_kr_boxes acc;
  bool extracted[MAX_TERMS] = {false};
  plan_kr_tinfo ti[MAX_TERMS];
  xrs r = {NULL, 0, 0, false};
  if (n > 64) n = 64; /* wider keys: only the first 64 columns are ranged */
  if (plan_kr_boxes_alloc(c, &acc, 1) || plan_kr_box_init(c, &acc.v[0])) return;
  acc.n = 1;
  for (uint32_t j = 0; j < nt && j < MAX_TERMS; j++) {
    plan_kr_boxes tb, nb;
    int rc = plan_kr_term_boxes(c, terms[j], &tb, &ti[j]);
    if (rc < 0) goto done;
    if (rc == 0) continue;
    for (uint32_t k = 0; k < tb.n; k++)
      for (int i = 0; i < n; i++)
        if (tb.v[k].ct[i]) tb.v[k].ct[i] = (uint64_t)1 << j;
    rc = plan_kr_boxes_and(c, &acc, &tb, &nb);
    if (rc < 0) goto done;
    if (rc > 0) continue;
    acc = nb;
    extracted[j] = true;
  }
  /* expansion, capped */
  int m = n, rcol;
  bool hull = false;
  uint64_t cnt;
  for (;; m--) {
    uint64_t total = 0;
    for (uint32_t i = 0; i < acc.n; i++) {
      box_captured(&acc.v[i], n, m, &rcol, &cnt);
      total = total + cnt < total ? UINT64_MAX : total + cnt;
    }
    if (total <= PLAN_MAX_SKIP_RANGES) break;
    if (m == 1) { hull = true; break; }
  }
  int min_prefix = n, max_cap = 0;
  if (hull) {
    plan_kr_box h;
    if (hull_box(c, &acc, &h)) goto done;
    int capn = box_captured(&h, n, 1, &rcol, &cnt);
    if (expand_box(c, &h, capn, rcol, &r)) goto done;
    min_prefix = 0;
    max_cap = capn;
  } else {
    for (uint32_t i = 0; i < acc.n; i++) {
      int capn = box_captured(&acc.v[i], n, m, &rcol, &cnt);
      if (expand_box(c, &acc.v[i], capn, rcol, &r)) goto done;
      int pre = rcol >= 0 ? rcol : capn;
      if (pre < min_prefix) min_prefix = pre;
      if (capn > max_cap) max_cap = capn;
      for (int k = capn; k < n; k++)
        for (uint32_t j = 0; j < nt && j < MAX_TERMS; j++)
          if (acc.v[i].ct[k] >> j & 1) ti[j].exact = false;
    }
  }
  merge_ranges(&r);
  if (finish(c, &r, out)) goto done;
  if (out->kind != PLAN_SCAN_NOTHING && out->kind != PLAN_SCAN_FULL) {
    /* a merge across different pinned prefixes leaves no column known to be one value */
    out->prefix_cols = (min_prefix == n && acc.n == 0) || r.spans ? 0 : min_prefix;
    out->bound_cols = max_cap;
  }
  for (uint32_t j = 0; j < nt; j++) {
    bool key = j < MAX_TERMS && extracted[j] &&
               (out->kind == PLAN_SCAN_NOTHING || (ti[j].exact && (!hull || ti[j].cols == 0)));
    int rc = key ? push_term(&out->key_terms, &out->n_key_terms, terms[j], nt)
                 : push_term(&out->residual, &out->n_residual, terms[j], nt);
    if (rc) { plan_kr_fail(c, EXEC_NOMEM, "out of memory deriving key ranges"); goto done; }
  }
done:
  free(r.v);
}
