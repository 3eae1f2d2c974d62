/*
** kv/backend/hbase/backend_hbase_scan.c: scans and gets of the HBase backend
** (backend_hbase.h): kv_scan_options and kv_backend_read mapped to HBase scanners.
**
** A scan reads its key ranges one after another (forward: ascending; reverse: the last
** range first), one HBase scanner each, with the scan's families, versions and time range;
** several ranges are read by one scanner from the first range's start to the last one's end
** under a MultiRowRangeFilter sent as protobuf (backend_hbase_filter.c), rows still checked
** against the ranges here.
** HBase bounds are a start row (inclusive) and a stop row (exclusive), a reversed scan's
** start being its high key: each range is given as the tightest such bounds that hold it
** (an exclusive start becomes the key followed by a 0 byte; a reversed scan's inclusive low
** bound stops at the key without its last byte), and every row is checked against the exact
** range here, so a scan ends its range at the first row past it. A resume key cuts the
** ranges before they are read. On the client: the qualifier projection, a family's TTL and
** VERSIONS (HBase keeps the table's largest VERSIONS for every family), the filter
** expression (kv_filter_expr_eval, always: exact), the limit when
** anything here may drop rows (else HBase's scanner limit). The filter expression also goes
** to the region servers in HBase's filter language (SingleColumnValueFilter with a binary
** comparator per comparison, AND / OR as filter lists; NOT and ORs holding one are left to
** the client; as protobuf beside the MultiRowRangeFilter, and on reverse scans, which HBase
** refuses with a filter that loads families on demand unless a MultiRowRangeFilter makes
** them all essential), so that most rejected rows never cross the network; the environment variable
** ROWAN_HBASE_NO_SERVER_FILTER turns that off (for comparisons). A timestamp snapshot or as_of
** is the upper end of the time range (HBase's delete markers still apply above it: an
** as_of read does not bring back a row deleted later, unlike the local store). When a
** scanner call fails (a lost connection, a restarted gateway, an expired scanner), the range
** is cut after the last row read from it and a new scanner opened, up to h->tries
** times in a scan (HBK_TRIES, or ROWAN_HBASE_TRIES): no row is handed out twice or skipped.
** A skip scan by prefix (kv_skip_prefix, KV_BE_EXT_SKIP_PREFIX) probes for each prefix with a
** one-row key-only scanner and reads the prefix's ranges with scanners of their own ("Skip
** scan by prefix" below), forward only, as the local store does.
**
** Not here: writes and DDL (backend_hbase.c), the Thrift2 calls (hb_client.c).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kv/backend/hbase/backend_hbase_filter.h"
#include "kv/backend/hbase/backend_hbase_int.h"
#include "kv/util/status.h"

typedef struct hrange {
  uint8_t *lo, *hi;       /* owned copies */
  uint32_t lo_len, hi_len;
  bool lo_has, hi_has, lo_inc, hi_inc;
} hrange;

typedef struct hproj {
  bool set;
  uint32_t n;
  uint8_t **q;
  uint32_t *len;
  hb_bytes *hq; /* the same qualifiers for the scanner's columns */
} hproj;

struct kv_backend_scan {
  hbk *h;
  hbk_conn *k;            /* the pool's connection its scanners use */
  char *hb_name;
  uint32_t nf;
  uint32_t fid[KV_SCAN_MAX_FAMILIES];
  char *fname[KV_SCAN_MAX_FAMILIES];
  int fver[KV_SCAN_MAX_FAMILIES];
  int64_t fttl_ms[KV_SCAN_MAX_FAMILIES];
  hb_bytes fams[KV_SCAN_MAX_FAMILIES];
  hproj proj[KV_SCAN_MAX_FAMILIES];
  hrange *r;
  uint32_t nr, next;      /* ranges, ranges opened so far */
  hrange *cur;            /* the range being read */
  bool reverse, client_cut; /* client_cut: rows may be dropped here (no HBase limit) */
  uint64_t limit, handed;
  const kv_filter_expr *fx;
  int64_t min_ts, max_ts, now;
  int max_versions;
  hb_scanner *sc;
  hb_row row;
  kv_cell_view *cells;
  size_t cells_cap;
  kv_scan_metrics m;
  int err;
  char *fstr;             /* the filter expression in HBase's filter language, or NULL */
  size_t fstr_len;
  bool proj_server;       /* the qualifier projection goes to the region servers too */
  uint8_t *last;          /* the last row key read from the current range's scanner */
  size_t last_len, last_cap;
  int resumes;            /* scanners opened again after a failure */
  /* a skip scan by prefix (kv_skip_prefix): s->r are the outer ranges the prefixes lie in */
  bool skip;
  kv_prefix_len_fn prefix_len;
  void *prefix_ctx;
  hrange *suf;            /* the suffix ranges, owned copies (lo/hi without the prefix) */
  uint32_t nsuf, rows_per_prefix, prefix_rows;
  hrange *sub;            /* the current prefix's ranges (prefix + suffix, cut to the outer) */
  uint32_t nsub, sub_next, outer; /* sub ranges, those opened; the outer range probed */
  uint8_t *probe;         /* the next probe key (inclusive) in the outer range, or NULL: its start */
  uint32_t probe_len;
  bool outer_done;        /* the last prefix had no successor: the outer range is read */
  uint8_t *fpb;           /* the server filter as protobuf (TScan.filterBytes), or NULL */
  size_t fpb_len;
  bool fpb_value;         /* fpb holds the value filter (then fstr is NULL) */
  bool multi;             /* one scanner for every range: `cover` under a MultiRowRangeFilter */
  hrange cover;           /* multi: the first range's low end to the last one's high end */
  uint32_t mi;            /* multi: ranges passed by the rows read (from the last in reverse) */
};

static int key_cmp(const uint8_t *a, uint32_t an, const uint8_t *b, uint32_t bn) {
  int d = memcmp(a, b, an < bn ? an : bn);
  return d ? d : (an > bn) - (an < bn);
}

static uint8_t *dup_key(const uint8_t *p, size_t n, size_t extra) {
  uint8_t *d = malloc(n + extra + 1);
  if (d && n) memcpy(d, p, n);
  if (d && extra) memset(d + n, 0, extra);
  return d;
}

static void free_ranges(hrange *r, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) {
    free(r[i].lo);
    free(r[i].hi);
  }
  free(r);
}

void hbk_scan_close(kv_backend *be, kv_backend_scan *s) {
  if (!s) return;
  if (s->sc) {
    (void)hbk_conn_lock(s->k, &s->h->uri);
    hb_scan_close(s->sc);
    hbk_conn_unlock(s->k);
  }
  hbk_conn_give(s->h, s->k);
  hb_row_free(&s->row);
  for (uint32_t i = 0; i < s->nr; i++) {
    free(s->r[i].lo);
    free(s->r[i].hi);
  }
  free(s->r);
  free_ranges(s->suf, s->nsuf);
  free_ranges(s->sub, s->nsub);
  free(s->probe);
  for (uint32_t i = 0; i < s->nf; i++) {
    free(s->fname[i]);
    for (uint32_t k = 0; k < s->proj[i].n; k++) free(s->proj[i].q[k]);
    free(s->proj[i].q);
    free(s->proj[i].len);
    free(s->proj[i].hq);
  }
  free(s->hb_name);
  free(s->cells);
  free(s->last);
  free(s->fstr);
  free(s->fpb);
  free(s->cover.lo);
  free(s->cover.hi);
  free(s);
  (void)be;
}

static int refuse(const char *what) {
  return kv_error(KV_ERR_INVALID, "scan option %s is not supported by backend hbase", what);
}

/* Options the backend does not have. */
static int check_options(const kv_scan_options *o) {
  if (o->filter) return kv_error(KV_ERR_INVALID, "a callback filter is not supported by backend hbase");
  if (o->overlay) return refuse("overlay");
  if (o->skip_prefix && o->reverse)
    return kv_error(KV_ERR_INVALID, "hbase: a skip scan by prefix reads forward only");
  if (o->skip_prefix && !o->skip_prefix->prefix_len)
    return kv_error(KV_ERR_INVALID, "hbase: a skip scan by prefix without a prefix function");
  if (o->value_vectors) return refuse("value_vectors");
  if (o->existence_family) return refuse("existence_family");
  if (o->trace) return refuse("trace");
  if (o->ts_per_row) return refuse("ts_per_row");
  if (o->interrupt) return refuse("interrupt");
  if (o->max_versions < 0) return kv_error(KV_ERR_INVALID, "hbase: negative max_versions");
  if (!o->n_families || o->n_families > KV_SCAN_MAX_FAMILIES || !o->family_ids)
    return kv_error(KV_ERR_INVALID, "hbase: a scan reads 1..%u families (%u given)",
                    KV_SCAN_MAX_FAMILIES, o->n_families);
  return KV_OK;
}

/* Under h->mu: the families, their table and projections into s. */
static int set_families(kv_backend_scan *s, const kv_scan_options *o) {
  hbk_table *t0 = NULL;
  for (uint32_t i = 0; i < o->n_families; i++) {
    hbk_table *t = NULL;
    hbk_family *f = hbk_family_of(s->h, o->family_ids[i], &t);
    if (!f) return kv_error(KV_ERR_NOTFOUND, "hbase: scan of unknown family id %u", o->family_ids[i]);
    if (t0 && t != t0) return kv_error(KV_ERR_INVALID, "hbase: a scan of families of two tables");
    for (uint32_t j = 0; j < i; j++)
      if (s->fid[j] == o->family_ids[i])
        return kv_error(KV_ERR_INVALID, "hbase: family id %u listed twice", o->family_ids[i]);
    t0 = t;
    s->fid[i] = f->id;
    s->fname[i] = malloc(strlen(f->name) + 1);
    if (!s->fname[i]) return kv_error(KV_ERR_NOMEM, "hbase: out of memory");
    strcpy(s->fname[i], f->name);
    s->fams[i] = (hb_bytes){(const uint8_t *)s->fname[i], strlen(s->fname[i])};
    s->fver[i] = f->o.max_versions > 0 ? f->o.max_versions : 1;
    s->fttl_ms[i] = f->o.ttl_sec > 0 ? f->o.ttl_sec * 1000 : 0;
    if (s->fttl_ms[i]) s->client_cut = true;
    s->nf = i + 1;
    s->m.families[i].family_id = f->id;
  }
  s->m.n_families = s->nf;
  s->hb_name = malloc(strlen(t0->hb_name) + 1);
  if (!s->hb_name) return kv_error(KV_ERR_NOMEM, "hbase: out of memory");
  strcpy(s->hb_name, t0->hb_name);
  for (uint32_t k = 0; k < o->n_qualifier_sets; k++) {
    const kv_qualifier_set *qs = &o->qualifiers[k];
    uint32_t i = 0;
    while (i < s->nf && s->fid[i] != qs->family_id) i++;
    if (i == s->nf || s->proj[i].set)
      return kv_error(KV_ERR_INVALID, "hbase: qualifier set %u names a family not read or twice", k);
    hproj *p = &s->proj[i];
    p->set = true;
    s->client_cut = true;
    p->q = calloc(qs->n_quals ? qs->n_quals : 1, sizeof *p->q);
    p->len = calloc(qs->n_quals ? qs->n_quals : 1, sizeof *p->len);
    p->hq = calloc(qs->n_quals ? qs->n_quals : 1, sizeof *p->hq);
    if (!p->q || !p->len || !p->hq) return kv_error(KV_ERR_NOMEM, "hbase: out of memory");
    for (uint32_t j = 0; j < qs->n_quals; j++) {
      if (!(p->q[j] = dup_key(qs->quals[j], qs->qual_lens[j], 0)))
        return kv_error(KV_ERR_NOMEM, "hbase: out of memory");
      p->len[j] = qs->qual_lens[j];
      p->hq[j] = (hb_bytes){p->q[j], qs->qual_lens[j]};
      p->n = j + 1;
    }
  }
  return KV_OK;
}

/* The ranges to read, cut by the resume key; empty ones left out. */
static int set_ranges(kv_backend_scan *s, const kv_scan_options *o, const kv_backend_read *x) {
  uint32_t n = o->n_ranges ? o->n_ranges : 1;
  s->r = calloc(n, sizeof *s->r);
  if (!s->r) return kv_error(KV_ERR_NOMEM, "hbase: out of memory");
  const uint8_t *res = x && x->resume_after && x->resume_after_len ? x->resume_after : NULL;
  uint32_t res_len = res ? x->resume_after_len : 0;
  for (uint32_t i = 0; i < n; i++) {
    const kv_range *kr = o->n_ranges ? &o->ranges[i] : NULL;
    hrange v = {0};
    v.lo_has = kr && kr->start;
    v.hi_has = kr && kr->end;
    v.lo_inc = kr ? kr->start_inclusive : true;
    v.hi_inc = kr ? kr->end_inclusive : true;
    const uint8_t *lo = v.lo_has ? kr->start : NULL, *hi = v.hi_has ? kr->end : NULL;
    v.lo_len = v.lo_has ? (uint32_t)kr->start_len : 0;
    v.hi_len = v.hi_has ? (uint32_t)kr->end_len : 0;
    if (res && !s->reverse && (!v.lo_has || key_cmp(res, res_len, lo, v.lo_len) >= 0)) {
      lo = res, v.lo_len = res_len, v.lo_has = true, v.lo_inc = false;
    }
    if (res && s->reverse && (!v.hi_has || key_cmp(res, res_len, hi, v.hi_len) <= 0)) {
      hi = res, v.hi_len = res_len, v.hi_has = true, v.hi_inc = false;
    }
    if (v.lo_has && v.hi_has) {
      int c = key_cmp(lo, v.lo_len, hi, v.hi_len);
      if (c > 0 || (c == 0 && !(v.lo_inc && v.hi_inc))) continue; /* empty */
    }
    if (v.hi_has && !v.hi_len) continue; /* at most the empty key, which HBase never holds */
    if ((v.lo_has && !(v.lo = dup_key(lo, v.lo_len, 1))) ||
        (v.hi_has && !(v.hi = dup_key(hi, v.hi_len, 1)))) {
      free(v.lo);
      return kv_error(KV_ERR_NOMEM, "hbase: out of memory");
    }
    s->r[s->nr++] = v;
  }
  return KV_OK;
}

/* The skip scan by prefix's suffix ranges copied (s->r, from set_ranges, are its outer ranges). */
static int set_skip(kv_backend_scan *s, const kv_skip_prefix *sp) {
  s->skip = true;
  s->prefix_len = sp->prefix_len;
  s->prefix_ctx = sp->ctx;
  s->rows_per_prefix = sp->rows_per_prefix;
  if (!sp->n_suffixes) return KV_OK;
  if (!sp->suffixes) return kv_error(KV_ERR_INVALID, "hbase: %u suffix ranges given as NULL", sp->n_suffixes);
  s->suf = calloc(sp->n_suffixes, sizeof *s->suf);
  if (!s->suf) return kv_error(KV_ERR_NOMEM, "hbase: out of memory");
  for (uint32_t i = 0; i < sp->n_suffixes; i++) {
    const kv_range *kr = &sp->suffixes[i];
    hrange *v = &s->suf[s->nsuf++];
    v->lo_has = kr->start != NULL;
    v->hi_has = kr->end != NULL;
    v->lo_inc = kr->start_inclusive;
    v->hi_inc = kr->end_inclusive;
    v->lo_len = v->lo_has ? (uint32_t)kr->start_len : 0;
    v->hi_len = v->hi_has ? (uint32_t)kr->end_len : 0;
    if ((v->lo_has && !(v->lo = dup_key(kr->start, v->lo_len, 1))) ||
        (v->hi_has && !(v->hi = dup_key(kr->end, v->hi_len, 1))))
      return kv_error(KV_ERR_NOMEM, "hbase: out of memory");
  }
  return KV_OK;
}

/* ---- The filter expression in HBase's filter language ---------------------------------- */
/* A growing string. */
typedef struct fbuf {
  char *p;
  size_t n, cap;
  bool oom;
} fbuf;

static void fput(fbuf *b, const void *p, size_t n) {
  if (b->oom) return;
  if (b->n + n + 1 > b->cap) {
    size_t nc = (b->n + n + 1) * 2;
    char *np = realloc(b->p, nc);
    if (!np) {
      b->oom = true;
      return;
    }
    b->p = np;
    b->cap = nc;
  }
  memcpy(b->p + b->n, p, n);
  b->n += n;
}

static void fstr(fbuf *b, const char *s) { fput(b, s, strlen(s)); }

/* A quoted argument: any bytes, a quote doubled (ParseFilter's rule). */
static void fquoted(fbuf *b, const char *prefix, const uint8_t *p, size_t n) {
  fput(b, "'", 1);
  fstr(b, prefix);
  for (size_t i = 0; i < n; i++) {
    fput(b, &p[i], 1);
    if (p[i] == '\'') fput(b, "'", 1);
  }
  fput(b, "'", 1);
}

static const char *fam_name(const kv_backend_scan *s, uint32_t id) {
  for (uint32_t i = 0; i < s->nf; i++)
    if (s->fid[i] == id) return s->fname[i];
  return NULL;
}

/* Write the subtree at e->nodes[*at] into b, or return false when HBase's language cannot say
** it exactly (NOT; an OR with such a child): then *at is still moved past the subtree. An AND
** keeps the children it can say (a weaker filter: the client checks the whole expression
** again). A comparison or presence is a SingleColumnValueFilter on the newest version with
** filterIfMissing (a missing cell is UNKNOWN, which rejects, as in an AND or an OR of SQL's
** three-valued logic; under NOT it would not, hence no NOT). */
static bool translate(const kv_backend_scan *s, const kv_filter_expr *e, uint32_t *at, fbuf *b) {
  const kv_fx_node *nd = &e->nodes[(*at)++];
  if (nd->kind == KV_FX_CMP || nd->kind == KV_FX_PRESENT) {
    static const char *const ops[] = {"=", "!=", "<", "<=", ">", ">="};
    const char *f = fam_name(s, nd->family_id);
    if (!f || (nd->kind == KV_FX_CMP && nd->cmp > KV_FX_GE)) return false;
    fstr(b, "SingleColumnValueFilter(");
    fquoted(b, "", (const uint8_t *)f, strlen(f));
    fstr(b, ",");
    fquoted(b, "", nd->qual, nd->qual_len);
    fstr(b, ",");
    fstr(b, nd->kind == KV_FX_CMP ? ops[nd->cmp] : ">=");
    fstr(b, ",");
    if (nd->kind == KV_FX_CMP) fquoted(b, "binary:", nd->value, nd->value_len);
    else fquoted(b, "binary:", NULL, 0);
    fstr(b, ",true,true)");
    return true;
  }
  if (nd->kind == KV_FX_NOT) {
    fbuf skip = {0};
    (void)translate(s, e, at, &skip);
    free(skip.p);
    return false;
  }
  /* AND / OR */
  bool is_and = nd->kind == KV_FX_AND, all = true;
  size_t start = b->n;
  int written = 0;
  fstr(b, "(");
  for (uint16_t c = 0; c < nd->n_children; c++) {
    fbuf part = {0};
    bool ok = translate(s, e, at, &part);
    if (ok && !part.oom) {
      if (written++) fstr(b, is_and ? " AND " : " OR ");
      fput(b, part.p, part.n);
    } else {
      all = false;
    }
    free(part.p);
  }
  fstr(b, ")");
  if (!written || (!is_and && !all)) {
    b->n = start;
    return false;
  }
  return true;
}

static bool projected(const hproj *p, const hb_bytes *q) {
  if (!p->set) return true;
  for (uint32_t j = 0; j < p->n; j++)
    if (p->len[j] == q->n && (!q->n || !memcmp(p->q[j], q->p, q->n))) return true;
  return false;
}

/* Whether every cell the filter expression names is in the scan's qualifier projection (or
** its family is read whole): a SingleColumnValueFilter sees only the columns a scan asks
** for, so only then can the projection go to the region servers beside the filter. */
static bool fx_projected(const kv_backend_scan *s) {
  for (uint32_t i = 0; i < s->fx->n_nodes; i++) {
    const kv_fx_node *nd = &s->fx->nodes[i];
    if (nd->kind != KV_FX_CMP && nd->kind != KV_FX_PRESENT) continue;
    uint32_t fi = 0;
    while (fi < s->nf && s->fid[fi] != nd->family_id) fi++;
    if (fi == s->nf) return false;
    hb_bytes q = {nd->qual, nd->qual_len};
    if (!projected(&s->proj[fi], &q)) return false;
  }
  return true;
}

/* s->fstr from the scan's filter expression (none when nothing of it can be said). */
static int set_filter_string(kv_backend_scan *s) {
  if (!s->fx) return KV_OK;
  fbuf b = {0};
  uint32_t at = 0;
  bool ok = translate(s, s->fx, &at, &b);
  if (b.oom) {
    free(b.p);
    return kv_error(KV_ERR_NOMEM, "hbase: out of memory");
  }
  if (!ok) {
    free(b.p);
    return KV_OK;
  }
  s->fstr = b.p;
  s->fstr_len = b.n;
  return KV_OK;
}

/* The server filter as protobuf (backend_hbase_filter.c), for what the filter language cannot
** say: several ranges read by one scanner under a MultiRowRangeFilter (s->multi; the
** environment variable ROWAN_HBASE_NO_MULTI_RANGE: one scanner per range), and a reverse
** scan's value filter, which HBase takes only beside a filter that makes every family
** essential (a MultiRowRangeFilter of the scan's ranges does; alone, a SingleColumnValueFilter
** leaves the other families to be loaded on demand, which reversed scans refuse). */
static int set_filter_bytes(kv_backend_scan *s, bool server_fx) {
  /* not reversed when the last range has no end: HBase 2.6.1's reversed MultiRowRangeFilter
     then returns wrong rows (seen: [k035, end) then [k022, k033] gave the first range only;
     tests/hbase/test_hbase_multirange.c's "wide" set a wrong fourth key) */
  bool multi = s->nr > 1 && !getenv("ROWAN_HBASE_NO_MULTI_RANGE") &&
               !(s->reverse && !s->r[s->nr - 1].hi_has);
  if (!s->nr || (!multi && !(s->reverse && s->fx && server_fx))) return KV_OK;
  kv_range *kr = calloc(s->nr, sizeof *kr);
  if (!kr) return kv_error(KV_ERR_NOMEM, "hbase: out of memory");
  for (uint32_t i = 0; i < s->nr; i++) {
    const hrange *v = &s->r[i];
    kr[i] = (kv_range){v->lo_has ? v->lo : NULL, v->lo_len, v->lo_inc,
                       v->hi_has ? v->hi : NULL, v->hi_len, v->hi_inc};
  }
  if (!multi) { /* one range from the first's start to the last's end, beside the value filter */
    kr[0].end = kr[s->nr - 1].end;
    kr[0].end_len = kr[s->nr - 1].end_len;
    kr[0].end_inclusive = kr[s->nr - 1].end_inclusive;
  }
  hbk_filter_fams ff = {s->fid, s->fname, s->nf};
  int rc = hbk_filter_pb(kr, multi ? s->nr : 1, server_fx ? s->fx : NULL, &ff, &s->fpb,
                         &s->fpb_len, &s->fpb_value);
  free(kr);
  if (rc) return rc;
  if (!multi && !s->fpb_value) { /* nothing the ranges do not say already */
    free(s->fpb);
    s->fpb = NULL;
    return KV_OK;
  }
  if (s->fpb_value) { /* it replaces the string */
    free(s->fstr);
    s->fstr = NULL;
  }
  if (!multi) return KV_OK;
  const hrange *a = &s->r[0], *z = &s->r[s->nr - 1];
  s->cover = (hrange){NULL, NULL, a->lo_len, z->hi_len, a->lo_has, z->hi_has, a->lo_inc, z->hi_inc};
  if ((a->lo_has && !(s->cover.lo = dup_key(a->lo, a->lo_len, 1))) ||
      (z->hi_has && !(s->cover.hi = dup_key(z->hi, z->hi_len, 1))))
    return kv_error(KV_ERR_NOMEM, "hbase: out of memory");
  s->multi = true;
  return KV_OK;
}

int hbk_scan_open(kv_backend *be, const kv_scan_options *o, const kv_backend_read *x,
                  kv_backend_scan **out) {
  *out = NULL;
  int rc = check_options(o);
  if (!rc && x && x->filter_expr) rc = kv_filter_expr_check(x->filter_expr);
  if (rc) return rc;
  kv_backend_scan *s = calloc(1, sizeof *s);
  if (!s) return kv_error(KV_ERR_NOMEM, "hbase: out of memory");
  s->h = be->impl;
  s->k = hbk_conn_take(s->h);
  s->reverse = o->reverse;
  s->limit = o->limit;
  s->fx = x ? x->filter_expr : NULL;
  if (s->fx) s->client_cut = true;
  s->max_versions = o->max_versions > 0 ? o->max_versions : 1;
  s->now = hbk_now_ms();
  s->min_ts = o->ts_min > 0 ? o->ts_min : 0;
  s->max_ts = o->ts_max > 0 ? o->ts_max : 0;
  int64_t upto = 0; /* an exclusive upper end from a snapshot or as_of */
  if (o->snapshot) upto = (int64_t)o->snapshot + 1;
  if (o->as_of > 0 && (!upto || o->as_of + 1 < upto)) upto = o->as_of + 1;
  if (upto && (!s->max_ts || upto < s->max_ts)) s->max_ts = upto;
  if (s->min_ts && !s->max_ts) s->max_ts = INT64_MAX;
  hbk_lock(s->h);
  rc = set_families(s, o);
  hbk_unlock(s->h);
  if (!rc) rc = set_ranges(s, o, x);
  if (!rc && o->skip_prefix) rc = set_skip(s, o->skip_prefix);
  /* the string on forward scans; reverse ones take the filter as protobuf (set_filter_bytes);
     a skip scan by prefix reads its own ranges, one scanner each (its outer ranges are not
     read as such) */
  bool server_fx = !getenv("ROWAN_HBASE_NO_SERVER_FILTER");
  if (!rc && !s->reverse && server_fx) rc = set_filter_string(s);
  if (!rc && !s->skip) rc = set_filter_bytes(s, server_fx);
  s->proj_server = (!s->fstr && !s->fpb_value) || fx_projected(s);
  if (rc) {
    hbk_scan_close(be, s);
    return rc;
  }
  *out = s;
  return KV_OK;
}

/* Open the scanner of range v. */
static int open_range(kv_backend_scan *s, hrange *v) {
  s->cur = v;
  hb_scan_spec sp;
  memset(&sp, 0, sizeof sp);
  sp.reverse = s->reverse;
  if (!s->reverse) {
    if (v->lo_has) sp.start = (hb_bytes){v->lo, v->lo_len + (v->lo_inc ? 0 : 1)};
    if (v->hi_has) sp.stop = (hb_bytes){v->hi, v->hi_len + (v->hi_inc ? 1 : 0)};
  } else {
    if (v->hi_has) sp.start = (hb_bytes){v->hi, v->hi_len};
    if (v->lo_has && v->lo_len > 1) sp.stop = (hb_bytes){v->lo, v->lo_len - 1};
  }
  sp.families = s->fams;
  sp.nfamilies = s->nf;
  /* The qualifier projection read by the region servers too (a sensor row's one value of
     twelve: a twelfth of the cells through the gateway), under a server filter only when it
     holds every column the filter names (fx_projected) */
  const hb_bytes *qv[KV_SCAN_MAX_FAMILIES];
  size_t nq[KV_SCAN_MAX_FAMILIES];
  bool any = false;
  for (uint32_t i = 0; i < s->nf; i++) {
    qv[i] = s->proj[i].hq;
    nq[i] = s->proj[i].set && s->proj[i].hq ? s->proj[i].n : 0;
    any |= nq[i] > 0;
  }
  if (any && s->proj_server) {
    sp.quals = qv;
    sp.nquals = nq;
  }
  sp.max_versions = s->max_versions;
  sp.min_ts = s->min_ts;
  sp.max_ts = s->max_ts;
  if (s->fstr) sp.filter = (hb_bytes){(const uint8_t *)s->fstr, s->fstr_len};
  if (s->fpb) sp.filter_bytes = (hb_bytes){s->fpb, s->fpb_len};
  uint64_t left = s->limit ? s->limit - s->handed : 0;
  sp.caching = 1000;
  if (left && !s->client_cut) {
    sp.limit = left > 1000000 ? 1000000 : (uint32_t)left;
    /* a reversed scan's range bounds are checked here: ask one row more */
    if (s->reverse && sp.limit < 1000000) sp.limit++;
  }
  if (left && left < 1000) sp.caching = (int32_t)left + 1;
  s->m.ranges_sought++;
  int rc = hbk_conn_lock(s->k, &s->h->uri);
  if (!rc) rc = hb_scan_open(s->k->c, s->h->uri.ns, s->hb_name, &sp, &s->sc);
  hbk_conn_unlock(s->k);
  return rc;
}

/* Where key lies against range v: -1 below, 0 inside, 1 above. */
static int place(const hrange *v, const uint8_t *k, uint32_t n) {
  if (v->lo_has) {
    int c = key_cmp(k, n, v->lo, v->lo_len);
    if (c < 0 || (c == 0 && !v->lo_inc)) return -1;
  }
  if (v->hi_has) {
    int c = key_cmp(k, n, v->hi, v->hi_len);
    if (c > 0 || (c == 0 && !v->hi_inc)) return 1;
  }
  return 0;
}

/* ---- Skip scan by prefix (kv_skip_prefix) ------------------------------------------------- */
/* The local store seeks inside one scan; HBase's scanners cannot be moved, so here each seek
** is a scanner: a probe (one row, its first cell's key only: FirstKeyOnlyFilter and
** KeyOnlyFilter) from the probe key to the outer range's end finds the next row, its prefix p
** is cut, the ranges p + suffix (cut to the outer range) are read as ranges of their own, and
** the next probe starts at p's successor (p without its trailing 0xFF bytes, its last byte plus
** one: the first key after every key beginning with p). So the rows between the ranges never
** cross the network, at two scanners per prefix. */
static const char probe_filter[] = "FirstKeyOnlyFilter() AND KeyOnlyFilter()";

/* p followed by b (b may be NULL), with the spare 0 byte open_range needs (dup_key's rule). */
static uint8_t *cat_key(const uint8_t *p, uint32_t pn, const uint8_t *b, uint32_t bn) {
  uint8_t *d = malloc((size_t)pn + bn + 2);
  if (!d) return NULL;
  memcpy(d, p, pn);
  if (bn) memcpy(d + pn, b, bn);
  d[pn + bn] = 0;
  return d;
}

/* The length of p's successor (0: none, p is all 0xFF bytes); the successor is p[0..len)
** with its last byte plus one. */
static uint32_t succ_len(const uint8_t *p, uint32_t n) {
  while (n && p[n - 1] == 0xFF) n--;
  return n;
}

/* After a scanner call that failed with rc: true, having waited and counted one more try,
** when it may be tried again (a lost connection, within h->tries in the scan). */
static bool again(kv_backend_scan *s, int rc) {
  if (rc != KV_ERR_IO || s->resumes >= s->h->tries) return false;
  usleep(HBK_BACKOFF_US(s->resumes));
  s->resumes++;
  return true;
}

/* The first row key at or after the probe key in outer range o, into *key (malloc'd) or NULL
** when the range holds none. A failed call is tried again as a scanner is (h->tries). */
static int probe(kv_backend_scan *s, const hrange *o, uint8_t **key, uint32_t *key_len) {
  *key = NULL;
  hb_scan_spec sp;
  memset(&sp, 0, sizeof sp);
  if (s->probe) sp.start = (hb_bytes){s->probe, s->probe_len};
  else if (o->lo_has) sp.start = (hb_bytes){o->lo, o->lo_len + (o->lo_inc ? 0 : 1)};
  if (o->hi_has) sp.stop = (hb_bytes){o->hi, o->hi_len + (o->hi_inc ? 1 : 0)};
  sp.families = s->fams;
  sp.nfamilies = s->nf;
  sp.max_versions = 1;
  sp.min_ts = s->min_ts;
  sp.max_ts = s->max_ts;
  sp.limit = 1;
  sp.caching = 1;
  sp.filter = (hb_bytes){(const uint8_t *)probe_filter, sizeof probe_filter - 1};
  for (;;) {
    hb_scanner *sc = NULL;
    hb_row r = {0};
    bool done = true;
    int rc = hbk_conn_lock(s->k, &s->h->uri);
    if (!rc) rc = hb_scan_open(s->k->c, s->h->uri.ns, s->hb_name, &sp, &sc);
    if (!rc) rc = hb_scan_next(sc, &r, &done);
    if (sc) {
      char msg[600];
      snprintf(msg, sizeof msg, "%s", rc ? kv_errmsg() : "");
      hb_scan_close(sc); /* clears the error message */
      if (rc) kv_error(rc, "%s", msg);
    }
    hbk_conn_unlock(s->k);
    if (!rc && !done && place(o, r.key, (uint32_t)r.key_len) == 0) {
      if (!(*key = dup_key(r.key, r.key_len, 0))) rc = kv_error(KV_ERR_NOMEM, "hbase: out of memory");
      *key_len = (uint32_t)r.key_len;
    }
    hb_row_free(&r);
    if (!again(s, rc)) return rc;
  }
}

/* Cut v's low end to o's when o's is higher (cut_hi: its high end to o's when lower). */
static int cut_lo(hrange *v, const hrange *o) {
  if (!o->lo_has) return KV_OK;
  int c = v->lo_has ? key_cmp(o->lo, o->lo_len, v->lo, v->lo_len) : 1;
  if (c < 0) return KV_OK;
  if (c == 0) {
    v->lo_inc = v->lo_inc && o->lo_inc;
    return KV_OK;
  }
  free(v->lo);
  if (!(v->lo = dup_key(o->lo, o->lo_len, 1))) return kv_error(KV_ERR_NOMEM, "hbase: out of memory");
  v->lo_len = o->lo_len, v->lo_has = true, v->lo_inc = o->lo_inc;
  return KV_OK;
}

static int cut_hi(hrange *v, const hrange *o) {
  if (!o->hi_has) return KV_OK;
  int c = v->hi_has ? key_cmp(o->hi, o->hi_len, v->hi, v->hi_len) : -1;
  if (c > 0) return KV_OK;
  if (c == 0) {
    v->hi_inc = v->hi_inc && o->hi_inc;
    return KV_OK;
  }
  free(v->hi);
  if (!(v->hi = dup_key(o->hi, o->hi_len, 1))) return kv_error(KV_ERR_NOMEM, "hbase: out of memory");
  v->hi_len = o->hi_len, v->hi_has = true, v->hi_inc = o->hi_inc;
  return KV_OK;
}

/* Prefix p's ranges (p + each suffix range, or all of p without suffixes), cut to outer range
** o, empty ones left out, into s->sub. */
static int set_sub(kv_backend_scan *s, const hrange *o, const uint8_t *p, uint32_t pn) {
  free_ranges(s->sub, s->nsub);
  s->nsub = s->sub_next = 0;
  uint32_t n = s->nsuf ? s->nsuf : 1;
  if (!(s->sub = calloc(n, sizeof *s->sub))) return kv_error(KV_ERR_NOMEM, "hbase: out of memory");
  uint32_t sn = succ_len(p, pn);
  for (uint32_t i = 0; i < n; i++) {
    const hrange *f = s->nsuf ? &s->suf[i] : NULL;
    hrange v = {0};
    v.lo_has = true;
    v.lo_inc = f && f->lo_has ? f->lo_inc : true;
    v.lo_len = pn + (f && f->lo_has ? f->lo_len : 0);
    v.lo = cat_key(p, pn, f && f->lo_has ? f->lo : NULL, f && f->lo_has ? f->lo_len : 0);
    int rc = v.lo ? KV_OK : kv_error(KV_ERR_NOMEM, "hbase: out of memory");
    if (!rc && f && f->hi_has) {
      v.hi_has = true, v.hi_inc = f->hi_inc, v.hi_len = pn + f->hi_len;
      if (!(v.hi = cat_key(p, pn, f->hi, f->hi_len))) rc = kv_error(KV_ERR_NOMEM, "hbase: out of memory");
    } else if (!rc && sn) { /* to p's last key: below its successor */
      v.hi_has = true, v.hi_inc = false, v.hi_len = sn;
      if (!(v.hi = cat_key(p, sn, NULL, 0))) rc = kv_error(KV_ERR_NOMEM, "hbase: out of memory");
      else v.hi[sn - 1]++;
    }
    if (!rc) rc = cut_lo(&v, o);
    if (!rc) rc = cut_hi(&v, o);
    bool empty = false;
    if (!rc && v.hi_has) {
      int c = key_cmp(v.lo, v.lo_len, v.hi, v.hi_len);
      empty = c > 0 || (c == 0 && !(v.lo_inc && v.hi_inc));
    }
    if (rc || empty) {
      free(v.lo);
      free(v.hi);
      if (rc) return rc;
      continue;
    }
    s->sub[s->nsub++] = v;
  }
  return KV_OK;
}

/* The next range of a skip scan by prefix: the current prefix's next one, or the next
** prefix's first, found by probing; *none at the end of the last outer range. */
static int skip_next(kv_backend_scan *s, hrange **out, bool *none) {
  *none = false;
  for (;;) {
    if (s->sub_next < s->nsub) {
      *out = &s->sub[s->sub_next++];
      return KV_OK;
    }
    if (s->outer >= s->nr) {
      *none = true;
      return KV_OK;
    }
    const hrange *o = &s->r[s->outer];
    uint8_t *k = NULL;
    uint32_t kn = 0;
    int rc = s->outer_done ? KV_OK : probe(s, o, &k, &kn);
    if (rc) return rc;
    if (!k) { /* the outer range is read: on to the next one's start */
      s->outer++;
      s->outer_done = false;
      free(s->probe);
      s->probe = NULL;
      continue;
    }
    uint32_t pn = s->prefix_len(s->prefix_ctx, k, kn);
    if (!pn || pn > kn) {
      free(k);
      return kv_error(KV_ERR_INVALID, "hbase: skip scan by prefix: a row key of %u bytes has no prefix", kn);
    }
    s->m.prefixes_sought++;
    s->prefix_rows = 0;
    rc = set_sub(s, o, k, pn);
    uint32_t sn = succ_len(k, pn);
    free(s->probe);
    s->probe = NULL;
    if (!sn) {
      s->outer_done = true; /* p is all 0xFF bytes: no key after its keys */
      free(k);
    } else {
      k[sn - 1]++;
      s->probe = k;
      s->probe_len = sn;
      if (place(o, k, sn) > 0) s->outer_done = true;
    }
    if (rc) return rc;
  }
}

/* open_range, tried again after a lost connection (a gateway down between two ranges), as a
** scanner is (h->tries in the scan, waiting longer each time). */
static int open_range_tried(kv_backend_scan *s, hrange *v) {
  int rc;
  do rc = open_range(s, v); while (again(s, rc));
  return rc;
}

/* Open the scanner of the next range; *none when none is left. */
static int open_next(kv_backend_scan *s, bool *none) {
  if (s->skip) {
    hrange *v = NULL;
    int rc = skip_next(s, &v, none);
    if (rc || *none) return rc;
    s->last_len = 0;
    return open_range_tried(s, v);
  }
  *none = s->next >= s->nr;
  if (*none) return KV_OK;
  if (s->multi) { /* one scanner for them all */
    s->next = s->nr;
    s->last_len = 0;
    s->m.ranges_sought += s->nr - 1;
    return open_range_tried(s, &s->cover);
  }
  hrange *v = &s->r[s->reverse ? s->nr - 1 - s->next : s->next];
  s->next++;
  s->last_len = 0;
  return open_range_tried(s, v);
}

/* The scanner of the current range failed (a lost connection, a restarted gateway, an
** expired scanner): cut the range after the last row read from it and open it again (the
** client connects again first). KV_OK, or the error of the new try. */
static int resume(kv_backend_scan *s) {
  hrange *v = s->cur;
  if (s->last_len) {
    uint8_t *k = dup_key(s->last, s->last_len, 1);
    if (!k) return kv_error(KV_ERR_NOMEM, "hbase: out of memory");
    if (!s->reverse) {
      free(v->lo);
      v->lo = k, v->lo_len = s->last_len, v->lo_has = true, v->lo_inc = false;
    } else {
      free(v->hi);
      v->hi = k, v->hi_len = s->last_len, v->hi_has = true, v->hi_inc = false;
    }
  }
  s->resumes++;
  return open_range(s, v);
}

/* Remember key as the last row read from the current range's scanner. */
static int note_last(kv_backend_scan *s, const uint8_t *key, size_t n) {
  if (n > s->last_cap) {
    uint8_t *nk = realloc(s->last, n);
    if (!nk) return kv_error(KV_ERR_NOMEM, "hbase: out of memory");
    s->last = nk;
    s->last_cap = n;
  }
  memcpy(s->last, key, n);
  s->last_len = n;
  return KV_OK;
}

/* multi: whether key (at or past the rows read before, in the scan's order) is in a range. */
static bool in_ranges(kv_backend_scan *s, const uint8_t *k, uint32_t n) {
  int past = s->reverse ? -1 : 1;
  while (s->mi < s->nr && place(&s->r[s->reverse ? s->nr - 1 - s->mi : s->mi], k, n) == past)
    s->mi++;
  return s->mi < s->nr && !place(&s->r[s->reverse ? s->nr - 1 - s->mi : s->mi], k, n);
}

/* The row's visible cells as views, in the scan's family order; returns their count. */
static int assemble(kv_backend_scan *s, size_t *n_out) {
  const hb_row *r = &s->row;
  if (r->ncells > s->cells_cap) {
    size_t nc = r->ncells + 16;
    kv_cell_view *nv = realloc(s->cells, nc * sizeof *nv);
    if (!nv) return kv_error(KV_ERR_NOMEM, "hbase: out of memory");
    s->cells = nv;
    s->cells_cap = nc;
  }
  size_t n = 0;
  for (uint32_t fi = 0; fi < s->nf; fi++) {
    int cap = s->max_versions < s->fver[fi] ? s->max_versions : s->fver[fi];
    const hb_bytes *prevq = NULL;
    int seen = 0;
    for (size_t i = 0; i < r->ncells; i++) {
      const hb_cell *c = &r->cells[i];
      if (c->family.n != s->fams[fi].n || memcmp(c->family.p, s->fams[fi].p, c->family.n)) continue;
      if (!projected(&s->proj[fi], &c->qualifier)) continue;
      if (s->fttl_ms[fi] && s->now - c->ts >= s->fttl_ms[fi]) continue;
      if (prevq && prevq->n == c->qualifier.n &&
          (!c->qualifier.n || !memcmp(prevq->p, c->qualifier.p, c->qualifier.n)))
        seen++;
      else
        seen = 1;
      prevq = &c->qualifier;
      if (seen > cap) continue;
      s->cells[n++] = (kv_cell_view){s->fid[fi], c->qualifier.p, (uint32_t)c->qualifier.n, c->ts,
                                     c->value.p, (uint32_t)c->value.n};
    }
  }
  *n_out = n;
  return KV_OK;
}

int hbk_scan_next(kv_backend *be, kv_backend_scan *s, kv_row *row) {
  (void)be;
  if (s->err) return s->err;
  for (;;) {
    if (s->limit && s->handed >= s->limit) return KV_ERR_NOTFOUND;
    if (!s->sc) {
      bool none = false;
      int rc = open_next(s, &none);
      if (rc) return s->err = rc;
      if (none) return KV_ERR_NOTFOUND;
    }
    bool done = false;
    (void)hbk_conn_lock(s->k, &s->h->uri); /* opened: its scanner is open */
    int rc = hb_scan_next(s->sc, &s->row, &done);
    if (rc || done) {
      char msg[600];
      snprintf(msg, sizeof msg, "%s", rc ? kv_errmsg() : "");
      hb_scan_close(s->sc); /* clears the error message */
      s->sc = NULL;
      if (rc) kv_error(rc, "%s", msg);
    }
    hbk_conn_unlock(s->k);
    if (rc == KV_ERR_IO && s->resumes < s->h->tries) {
      char msg[400];
      snprintf(msg, sizeof msg, "%s", kv_errmsg());
      do { /* at once, then waiting 0.2 s, 0.4 s, ... for a gateway that restarts */
        if (s->resumes) usleep(HBK_BACKOFF_US(s->resumes));
        rc = resume(s);
      } while (rc == KV_ERR_IO && s->resumes < s->h->tries);
      if (!rc) continue;
      kv_error(rc, "%s (after: %s)", kv_errmsg(), msg);
    }
    if (rc) return s->err = rc;
    if (done) continue;
    if ((rc = note_last(s, s->row.key, s->row.key_len)) != KV_OK) return s->err = rc;
    int at = place(s->cur, s->row.key, (uint32_t)s->row.key_len);
    if ((!s->reverse && at > 0) || (s->reverse && at < 0)) { /* past the range's end */
      (void)hbk_conn_lock(s->k, &s->h->uri);
      hb_scan_close(s->sc);
      hbk_conn_unlock(s->k);
      s->sc = NULL;
      continue;
    }
    if (at || (s->multi && !in_ranges(s, s->row.key, (uint32_t)s->row.key_len))) continue;
    s->m.rows_examined++;
    s->m.cells_examined += s->row.ncells;
    size_t n = 0;
    if ((rc = assemble(s, &n)) != KV_OK) return s->err = rc;
    if (!n) continue;
    row->key = s->row.key;
    row->key_len = (uint32_t)s->row.key_len;
    row->cells = s->cells;
    row->n_cells = (uint32_t)n;
    if (s->fx && !kv_filter_expr_eval((void *)s->fx, row)) {
      s->m.rows_filtered++;
      continue;
    }
    s->handed++;
    s->m.rows_returned++;
    if (s->skip && s->rows_per_prefix && ++s->prefix_rows >= s->rows_per_prefix) {
      if (s->sc) { /* enough of this prefix: on to the next (the row is s->row's, not the scanner's) */
        (void)hbk_conn_lock(s->k, &s->h->uri);
        hb_scan_close(s->sc);
        hbk_conn_unlock(s->k);
        s->sc = NULL;
      }
      s->sub_next = s->nsub;
    }
    return KV_OK;
  }
}

const kv_value_vector *hbk_scan_row_vectors(kv_backend *be, const kv_backend_scan *s,
                                            uint32_t *n) {
  (void)be;
  (void)s;
  *n = 0;
  return NULL;
}

void hbk_scan_metrics(kv_backend *be, const kv_backend_scan *s, kv_scan_metrics *out) {
  (void)be;
  *out = s->m;
}

int hbk_get(kv_backend *be, const kv_scan_options *o, const void *row, size_t row_len,
            kv_backend_scan **scan_out, kv_row *out_row) {
  *scan_out = NULL;
  if (!row || !row_len) return kv_error(KV_ERR_INVALID, "hbase: get of an empty row key");
  kv_scan_options g = *o;
  kv_range r = {row, row_len, true, row, row_len, true};
  g.ranges = &r;
  g.n_ranges = 1;
  g.reverse = false;
  g.limit = 1;
  int rc = hbk_scan_open(be, &g, NULL, scan_out);
  if (rc) return rc;
  return hbk_scan_next(be, *scan_out, out_row);
}
