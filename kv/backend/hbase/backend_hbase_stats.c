/*
** kv/backend/hbase/backend_hbase_stats.c: the planner's statistics on HBase (the backend's
** family_stats, estimate and split_points; docs/HBASE.md "The planner's statistics").
**
** Per Rowan kv table the backend keeps, in memory, guideposts in the manner of Phoenix's
** SYSTEM.STATS: per family, row keys that cut its rows into segments of equal row counts
** (a power of two, 1 while the family has at most HBK_STATS_KEYS rows: then every row key
** is kept and counts are exact), with each segment's rows and bytes. They are collected by
** one scan of the HBase table with KeyOnlyFilter(true) (the region servers send each cell
** without its value, the value's length in its place), at most HBK_STATS_ROWS rows, on the
** first estimate of the table in this process, and again once this backend's writes to the
** table since then pass a tenth of its rows (any write to a table of fewer than
** HBK_STATS_SMALL rows, whose collection costs a few round trips). Writes by other processes
** are not seen until then. A table larger than HBK_STATS_ROWS is counted as far as the
** collection read, the whole guessed as (regions / regions read) times that, at least twice
** (rough: regions are taken to hold equal rows).
**
** An estimate of a key range adds the segments inside it and half of each segment it cuts
** (a segment of one row: exactly); bytes are row, qualifier and value bytes plus 16 a cell,
** as the collection counted them. A range wholly past the part a partial collection read is
** measured against the part read: the same range under the heads (its ends' shared leading
** components) whose rows were read, averaged (guess_unread). Split points are the region
** boundaries; when they give fewer chunks than asked, the table's heads (a leading text key
** column's values, up to HBK_SPLIT_HEADS of them, found once per collection by one-row
** probes: probe_heads) beside them, unless the table is one region whose guideposts cover
** every row: then guideposts spaced evenly by rows (so that a parallel scan has chunks).
**
** Not here: the scans themselves (backend_hbase_scan.c), the planner (planner/select.c).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kv/backend/hbase/backend_hbase_int.h"
#include "kv/util/status.h"

#define HBK_STATS_KEYS 4096u    /* guideposts per family at most */
#define HBK_STATS_ROWS 50000u   /* rows one collection reads at most (ROWAN_HBASE_STATS_ROWS) */
#define HBK_STATS_SMALL 10000u  /* below this many rows any write makes the statistics stale */

typedef struct hbk_gp {   /* one segment: its first row key, its rows and bytes */
  uint8_t *key;
  uint32_t len;
  uint64_t rows, bytes;
} hbk_gp;

typedef struct hbk_fst {  /* one family's guideposts */
  hbk_gp *gp;
  uint32_t n;
  uint32_t key_max;       /* the longest guidepost key (guess_unread's buffers) */
  uint8_t *last;          /* the family's last row key (owned) */
  uint32_t last_len, last_cap;
  uint64_t width;         /* rows per segment (the last may hold fewer) */
  uint64_t rows, bytes;   /* totals */
  int heads;              /* split points by heads (probe_heads): 0 not probed yet, 1 found
                          ** (hk, hl, nh), -1 none to use */
  uint8_t **hk;           /* the heads found, in key order (owned) */
  uint32_t *hl, nh;
} hbk_fst;

struct hbk_stats {
  int nf;
  uint32_t fid[KV_MAX_FAMILIES];
  hbk_fst f[KV_MAX_FAMILIES];
  uint64_t rows;          /* rows read (any family) */
  bool partial;           /* the collection stopped at its cap (stats_rows) */
  uint32_t scale;         /* partial: the table's rows guessed as scale times those read */
};

void hbk_stats_free(hbk_stats *st) {
  if (!st) return;
  for (int i = 0; i < st->nf; i++) {
    for (uint32_t k = 0; k < st->f[i].n; k++) free(st->f[i].gp[k].key);
    free(st->f[i].gp);
    for (uint32_t k = 0; k < st->f[i].nh; k++) free(st->f[i].hk[k]);
    free(st->f[i].hk);
    free(st->f[i].hl);
    free(st->f[i].last);
  }
  free(st);
}

static int key_cmp(const uint8_t *a, uint32_t an, const uint8_t *b, uint32_t bn) {
  int d = memcmp(a, b, an < bn ? an : bn);
  return d ? d : (an > bn) - (an < bn);
}

/* Add one row of `bytes` bytes to family f (rows come in ascending key order). */
static int add_row(hbk_fst *f, const uint8_t *key, uint32_t len, uint64_t bytes) {
  if (!f->gp) {
    f->gp = calloc(HBK_STATS_KEYS, sizeof *f->gp);
    if (!f->gp) return kv_error(KV_ERR_NOMEM, "hbase: out of memory");
    f->width = 1;
  }
  if (!f->n || f->gp[f->n - 1].rows >= f->width) { /* a new segment */
    if (f->n == HBK_STATS_KEYS) { /* thin: pairs merge, segments twice as wide */
      uint32_t m = 0;
      for (uint32_t k = 0; k < f->n; k += 2) {
        hbk_gp g = f->gp[k];
        if (k + 1 < f->n) {
          g.rows += f->gp[k + 1].rows;
          g.bytes += f->gp[k + 1].bytes;
          free(f->gp[k + 1].key);
        }
        f->gp[m++] = g;
      }
      f->n = m;
      f->width *= 2;
    }
    if (!f->n || f->gp[f->n - 1].rows >= f->width) {
      hbk_gp *g = &f->gp[f->n];
      if (!(g->key = malloc(len ? len : 1))) return kv_error(KV_ERR_NOMEM, "hbase: out of memory");
      memcpy(g->key, key, len);
      g->len = len;
      if (len > f->key_max) f->key_max = len;
      g->rows = g->bytes = 0;
      f->n++;
    }
  }
  if (len > f->last_cap) {
    uint8_t *nl = realloc(f->last, len);
    if (!nl) return kv_error(KV_ERR_NOMEM, "hbase: out of memory");
    f->last = nl;
    f->last_cap = len;
  }
  memcpy(f->last, key, len);
  f->last_len = len;
  f->gp[f->n - 1].rows++;
  f->gp[f->n - 1].bytes += bytes;
  f->rows++;
  f->bytes += bytes;
  return KV_OK;
}

/* What collect needs of a table, copied under h->mu. */
typedef struct tcopy {
  char kv_name[1024];
  char hb_name[128];
  int nf;
  uint32_t fid[KV_MAX_FAMILIES];
  char fname[KV_MAX_FAMILIES][256];
  uint64_t written;
} tcopy;

/* The rows one collection reads at most: HBK_STATS_ROWS, or ROWAN_HBASE_STATS_ROWS when it
** is a number in 100..100,000,000 (else ignored). */
static uint64_t stats_rows(void) {
  const char *e = getenv("ROWAN_HBASE_STATS_ROWS");
  char *end = NULL;
  unsigned long long v = e && *e ? strtoull(e, &end, 10) : 0;
  return end && !*end && v >= 100 && v <= 100000000ull ? (uint64_t)v : HBK_STATS_ROWS;
}

/* One scan of the table (KeyOnlyFilter(true)) into *out. */
static int collect(hbk *h, const tcopy *tc, hbk_stats **out) {
  *out = NULL;
  const uint64_t cap = stats_rows();
  hbk_stats *st = calloc(1, sizeof *st);
  if (!st) return kv_error(KV_ERR_NOMEM, "hbase: out of memory");
  st->nf = tc->nf;
  hb_bytes fams[KV_MAX_FAMILIES];
  for (int i = 0; i < tc->nf; i++) {
    st->fid[i] = tc->fid[i];
    fams[i] = (hb_bytes){(const uint8_t *)tc->fname[i], strlen(tc->fname[i])};
  }
  static const char filter[] = "KeyOnlyFilter(true)";
  hb_scan_spec sp;
  memset(&sp, 0, sizeof sp);
  sp.families = fams;
  sp.nfamilies = (size_t)tc->nf;
  sp.max_versions = 1;
  sp.caching = 1000;
  sp.filter = (hb_bytes){(const uint8_t *)filter, sizeof filter - 1};
  hbk_conn *k = hbk_conn_take(h);
  hb_scanner *sc = NULL;
  hb_row r;
  memset(&r, 0, sizeof r);
  int rc = hbk_conn_lock(k, &h->uri);
  if (!rc) rc = hb_scan_open(k->c, h->uri.ns, tc->hb_name, &sp, &sc);
  while (!rc) {
    bool done = false;
    if ((rc = hb_scan_next(sc, &r, &done)) != KV_OK || done) break;
    if (st->rows >= cap) {
      st->partial = true;
      break;
    }
    st->rows++;
    for (int fi = 0; fi < tc->nf && !rc; fi++) {
      uint64_t bytes = 0;
      bool any = false;
      for (size_t c = 0; c < r.ncells; c++) {
        const hb_cell *cell = &r.cells[c];
        if (cell->family.n != fams[fi].n || memcmp(cell->family.p, fams[fi].p, fams[fi].n)) continue;
        uint64_t vlen = cell->value.n; /* the value's length as a 4-byte big-endian int */
        if (cell->value.n == 4)
          vlen = (uint64_t)cell->value.p[0] << 24 | (uint64_t)cell->value.p[1] << 16 |
                 (uint64_t)cell->value.p[2] << 8 | cell->value.p[3];
        bytes += cell->qualifier.n + vlen + 16;
        any = true;
      }
      if (any) rc = add_row(&st->f[fi], r.key, (uint32_t)r.key_len, bytes + r.key_len);
    }
  }
  if (sc) {
    char msg[600];
    snprintf(msg, sizeof msg, "%s", rc ? kv_errmsg() : "");
    hb_scan_close(sc);
    if (rc) kv_error(rc, "%s", msg);
  }
  if (!rc && st->partial) { /* regions read / regions in all: the read ones stand for the rest */
    hb_region *reg = NULL;
    size_t n = 0, i = 0;
    st->scale = 2;
    if (hb_regions(k->c, h->uri.ns, tc->hb_name, &reg, &n) == KV_OK && n > 1) {
      while (i + 1 < n && key_cmp(reg[i + 1].start, (uint32_t)reg[i + 1].start_len, r.key,
                                  (uint32_t)r.key_len) < 0)
        i++;
      st->scale = (uint32_t)(n / (i + 1)) > 2 ? (uint32_t)(n / (i + 1)) : 2;
    }
    hb_regions_free(reg, n);
    kv_error_clear();
  }
  hbk_conn_unlock(k);
  hbk_conn_give(h, k);
  hb_row_free(&r);
  if (rc) {
    hbk_stats_free(st);
    return rc;
  }
  *out = st;
  return KV_OK;
}

static bool stale(const hbk_table *t) {
  if (!t->stats) return true;
  if (!t->written) return false;
  return t->stats->rows < HBK_STATS_SMALL || t->written * 10 > t->stats->rows;
}

/* Under h->mu on return (KV_OK): *t the table of family_id with fresh statistics and *fi the
** family's index in them. On failure h->mu is not held. */
static int fresh(hbk *h, uint32_t family_id, hbk_table **t_out, int *fi) {
  hbk_lock(h);
  hbk_table *t = NULL;
  if (!hbk_family_of(h, family_id, &t)) {
    hbk_unlock(h);
    return kv_error(KV_ERR_NOTFOUND, "hbase: no family id %u", family_id);
  }
  if (stale(t)) {
    tcopy *tc = calloc(1, sizeof *tc);
    if (!tc) {
      hbk_unlock(h);
      return kv_error(KV_ERR_NOMEM, "hbase: out of memory");
    }
    snprintf(tc->kv_name, sizeof tc->kv_name, "%s", t->kv_name);
    snprintf(tc->hb_name, sizeof tc->hb_name, "%s", t->hb_name);
    tc->nf = t->n_families;
    for (int i = 0; i < t->n_families; i++) {
      tc->fid[i] = t->fam[i].id;
      snprintf(tc->fname[i], sizeof tc->fname[i], "%s", t->fam[i].name);
    }
    tc->written = t->written;
    hbk_unlock(h); /* the scan runs on a connection of the pool */
    hbk_stats *st = NULL;
    int rc = collect(h, tc, &st);
    if (rc) {
      free(tc);
      return rc;
    }
    hbk_lock(h);
    if (!hbk_family_of(h, family_id, &t) || strcmp(t->kv_name, tc->kv_name)) {
      hbk_unlock(h);
      hbk_stats_free(st);
      free(tc);
      return kv_error(KV_ERR_NOTFOUND, "hbase: no family id %u", family_id);
    }
    hbk_stats_free(t->stats);
    t->stats = st;
    t->written = t->written > tc->written ? t->written - tc->written : 0;
    free(tc);
  }
  int i = 0;
  while (i < t->stats->nf && t->stats->fid[i] != family_id) i++;
  if (i == t->stats->nf) { /* a family added after the collection */
    hbk_stats_free(t->stats);
    t->stats = NULL;
    hbk_unlock(h);
    return fresh(h, family_id, t_out, fi);
  }
  *t_out = t;
  *fi = i;
  return KV_OK;
}

int hbk_family_stats(kv_backend *be, uint32_t family_id, kv_family_stats *out) {
  memset(out, 0, sizeof *out);
  hbk *h = be->impl;
  hbk_table *t = NULL;
  int fi = 0;
  int rc = fresh(h, family_id, &t, &fi);
  if (rc) return rc;
  const hbk_fst *f = &t->stats->f[fi];
  uint64_t scale = t->stats->partial ? t->stats->scale : 1;
  out->rows = f->rows * scale;
  out->store_file_bytes = f->bytes * scale;
  out->blocks = out->store_file_bytes / 65536; /* HBase's default block size */
  out->cells = out->rows;
  out->store_files = out->blocks ? 1 : 0;
  hbk_unlock(h);
  return KV_OK;
}

/* Where key lies against range r: -1 below, 0 inside, 1 above. */
static int place(const kv_range *r, const uint8_t *k, uint32_t n) {
  if (!r) return 0;
  if (r->start) {
    int c = key_cmp(k, n, r->start, (uint32_t)r->start_len);
    if (c < 0 || (c == 0 && !r->start_inclusive)) return -1;
  }
  if (r->end) {
    int c = key_cmp(k, n, r->end, (uint32_t)r->end_len);
    if (c > 0 || (c == 0 && !r->end_inclusive)) return 1;
  }
  return 0;
}

/* Rows and bytes of range counted from f's guideposts alone (the part read). */
static void count_read(const hbk_fst *f, const kv_range *range, uint64_t *rows, uint64_t *bytes) {
  *rows = *bytes = 0;
  uint32_t i = 0;
  if (range && range->start) { /* the last segment starting below the range's start */
    uint32_t lo = 0, hi = f->n;
    while (lo < hi) {
      uint32_t mid = lo + (hi - lo) / 2;
      if (place(range, f->gp[mid].key, f->gp[mid].len) < 0) lo = mid + 1;
      else hi = mid;
    }
    i = lo ? lo - 1 : 0;
  }
  for (; i < f->n; i++) {
    const hbk_gp *g = &f->gp[i];
    int a = place(range, g->key, g->len);
    if (a > 0) break; /* this segment and the later ones lie above the range */
    if (g->rows == 1) { /* one row: its key is the segment */
      if (a == 0) *rows += 1, *bytes += g->bytes;
      continue;
    }
    /* the segment holds keys in [g->key, the next one's key), the last one [g->key, last] */
    bool is_last = i + 1 == f->n;
    const uint8_t *hk = is_last ? f->last : f->gp[i + 1].key;
    uint32_t hl = is_last ? f->last_len : f->gp[i + 1].len;
    int ha = place(range, hk, hl);
    bool whole = a == 0 && (ha == 0 || (!is_last && ha > 0 && range && range->end &&
                                        key_cmp(hk, hl, range->end, (uint32_t)range->end_len) <= 0));
    bool cut = !whole && ha >= 0; /* starts inside or below, ends inside or above */
    if (whole) *rows += g->rows, *bytes += g->bytes;
    else if (cut) *rows += (g->rows + 1) / 2, *bytes += (g->bytes + 1) / 2;
  }
}

#define HBK_STATS_GROUPS 64u /* groups a range past the part read is measured against */

/* The length of key's first z components: up to and with its z-th 0 byte (a text key
** column's terminator), 0 when it has fewer. */
static uint32_t head_len(const uint8_t *k, uint32_t n, uint32_t z) {
  for (uint32_t i = 0; i < n; i++)
    if (!k[i] && !--z) return i + 1;
  return 0;
}

/* A range wholly past the part read (a partial collection) whose two ends share a head (the
** bytes up to the first 0 byte, when they share one: a leading text key column and its
** terminator in Rowan's key encoding; else every byte they share): guessed as the average of
** the same range under the first HBK_STATS_GROUPS distinct heads of the part read whose rows
** were all read (a skip scan's range of one station's month past the stations read counts as
** one station's month that was read). False when those hold no row of it (a head that is
** not a key column, such as the first bytes of a BIGINT): the caller guesses otherwise. */
static bool guess_unread(const hbk_fst *f, const kv_range *r, uint64_t *rows, uint64_t *bytes) {
  if (!r || !r->start || !r->end || !f->n) return false;
  uint32_t sl = (uint32_t)r->start_len, el = (uint32_t)r->end_len, L = 0, z = 0;
  if (key_cmp(r->start, sl, f->last, f->last_len) <= 0) return false;
  while (L < sl && L < el && r->start[L] == r->end[L]) L++;
  for (uint32_t i = 0; i < L && !z; i++) z = !r->start[i]; /* the first key column is text */
  uint32_t P = z ? head_len(r->start, L, z) : L; /* the head's length in the range */
  if (!P) return false;
  uint32_t qmax = f->key_max;
  uint8_t *ks = malloc((size_t)qmax * 2 + sl + el);
  if (!ks) return false;
  uint8_t *ke = ks + qmax + sl;
  uint32_t last_q = z ? head_len(f->last, f->last_len, z) : (f->last_len >= P ? P : 0);
  uint64_t rs = 0, bs = 0;
  uint32_t groups = 0;
  const uint8_t *prev = NULL;
  uint32_t prev_len = 0;
  for (uint32_t i = 0; i < f->n && groups < HBK_STATS_GROUPS; i++) {
    const hbk_gp *g = &f->gp[i];
    uint32_t q = z ? head_len(g->key, g->len, z) : (g->len >= P ? P : 0);
    if (!q || (prev && prev_len == q && !memcmp(prev, g->key, q))) continue;
    prev = g->key, prev_len = q;
    if (last_q && key_cmp(g->key, q, f->last, last_q) >= 0) break; /* the last row's: partial */
    memcpy(ks, g->key, q);
    memcpy(ks + q, r->start + P, sl - P);
    memcpy(ke, g->key, q);
    memcpy(ke + q, r->end + P, el - P);
    kv_range m = {ks, q + sl - P, r->start_inclusive, ke, q + el - P, r->end_inclusive};
    uint64_t n = 0, b = 0;
    count_read(f, &m, &n, &b);
    rs += n, bs += b, groups++;
  }
  free(ks);
  if (!groups || !rs) return false;
  *rows = (rs + groups / 2) / groups;
  *bytes = (bs + groups / 2) / groups;
  return true;
}

int hbk_estimate(kv_backend *be, uint32_t family_id, const kv_range *range,
                 const kv_estimate_opts *opts, uint64_t *rows, uint64_t *bytes) {
  *rows = *bytes = 0;
  hbk *h = be->impl;
  hbk_table *t = NULL;
  int fi = 0;
  int rc = fresh(h, family_id, &t, &fi);
  if (rc) return rc;
  const hbk_fst *f = &t->stats->f[fi];
  count_read(f, range, rows, bytes);
  if (t->stats->partial && f->n &&
      (!range || !range->end ||
       key_cmp(f->last, f->last_len, range->end, (uint32_t)range->end_len) < 0)) {
    uint64_t gr = 0, gb = 0;
    if (guess_unread(f, range, &gr, &gb)) {
      *rows += gr, *bytes += gb;
    } else {
      *rows += f->rows * (t->stats->scale - 1); /* the part not read, guessed */
      *bytes += f->bytes * (t->stats->scale - 1);
    }
  }
  hbk_unlock(h);
  if (opts && opts->limit && *rows > opts->limit) /* the scan stops after limit rows */
    *bytes = (uint64_t)((double)*bytes * (double)opts->limit / (double)*rows);
  return KV_OK;
}

#define HBK_SPLIT_HEADS 64u /* heads probe_heads finds at most */

/* Under h->mu: the first row key of family fam of HBase table hb_name at or after from
** (from_len 0: the table's start) into *key (malloc'd, *len), or NULL when there is none: one
** scanner of one row that sends its first cell's key only. False when a call failed (its
** error cleared: split points are a help, never a failure). */
static bool first_key(hbk *h, const char *hb_name, const char *fam, const uint8_t *from,
                      uint32_t from_len, uint8_t **key, uint32_t *len) {
  static const char probe[] = "FirstKeyOnlyFilter() AND KeyOnlyFilter()";
  hb_bytes f = {(const uint8_t *)fam, strlen(fam)};
  hb_scan_spec sp;
  memset(&sp, 0, sizeof sp);
  if (from_len) sp.start = (hb_bytes){from, from_len};
  sp.families = &f;
  sp.nfamilies = 1;
  sp.max_versions = 1;
  sp.limit = 1;
  sp.caching = 1;
  sp.filter = (hb_bytes){(const uint8_t *)probe, sizeof probe - 1};
  hb_scanner *sc = NULL;
  hb_row r = {0};
  bool done = true;
  int rc = hb_scan_open(h->c, h->uri.ns, hb_name, &sp, &sc);
  if (!rc) rc = hb_scan_next(sc, &r, &done);
  hb_scan_close(sc);
  *key = NULL;
  if (!rc && !done && r.key_len) {
    if ((*key = malloc(r.key_len))) memcpy(*key, r.key, r.key_len);
    else rc = KV_ERR_NOMEM;
    *len = (uint32_t)r.key_len;
  }
  hb_row_free(&r);
  kv_error_clear();
  return rc == KV_OK;
}

/* Under h->mu: f->heads set from the heads of family fam of table t: each distinct head of
** its row keys (the bytes up to and with the first 0 byte: a leading text key column and
** its terminator in Rowan's key encoding), in key order, found by one probe (first_key) from
** the previous head's successor (its last byte, the 0, made 1), so a table of 12 stations
** costs 13 probes. None (f->heads -1) when a row key holds no 0 byte (a leading key column
** that is not text), when there are more than HBK_SPLIT_HEADS heads (the probes would cost
** more than an even split earns), or when a probe fails. */
static void probe_heads(hbk *h, const hbk_table *t, const char *fam, hbk_fst *f) {
  f->heads = -1;
  uint8_t **hk = calloc(HBK_SPLIT_HEADS, sizeof *hk);
  uint32_t *hl = calloc(HBK_SPLIT_HEADS, sizeof *hl), n = 0;
  bool ok = hk && hl;
  uint8_t *from = NULL;
  uint32_t from_len = 0;
  while (ok) {
    uint8_t *k = NULL;
    uint32_t kl = 0;
    if (!(ok = first_key(h, t->hb_name, fam, from, from_len, &k, &kl)) || !k) break;
    uint32_t q = head_len(k, kl, 1);
    ok = q && n < HBK_SPLIT_HEADS && (!from || key_cmp(k, q, from, from_len) >= 0);
    if (ok) {
      hk[n] = k;
      hl[n] = q;
      from = k, from_len = q;
      k[q - 1] = 1; /* the successor of the head, read back as its terminator below */
      n++;
    } else {
      free(k);
    }
  }
  for (uint32_t i = 0; i < n; i++) hk[i][hl[i] - 1] = 0;
  if (!ok || n < 2) {
    for (uint32_t i = 0; i < n; i++) free(hk[i]);
    free(hk);
    free(hl);
    return;
  }
  f->hk = hk, f->hl = hl, f->nh = n, f->heads = 1;
}

int hbk_split_points(kv_backend *be, uint32_t family_id, uint32_t max_chunks,
                     kv_be_split_fn each, void *ctx) {
  hbk *h = be->impl;
  hbk_lock(h);
  hbk_table *t = NULL;
  hb_region *r = NULL;
  size_t n = 0;
  int rc = hbk_family_of(h, family_id, &t)
               ? hb_regions(h->c, h->uri.ns, t->hb_name, &r, &n)
               : kv_error(KV_ERR_NOTFOUND, "hbase: no family id %u", family_id);
  hbk_unlock(h);
  if (rc) return rc;
  size_t cuts = n > 1 ? n - 1 : 0, want = max_chunks > 1 ? max_chunks - 1 : 0;
  /* fewer regions than chunks wanted: the table's heads, when it has a few (probe_heads),
     unless one region's guideposts cover every row (then they cut it evenly by rows) */
  int fi = 0;
  const hbk_fst *f = NULL;
  if (cuts < want) {
    if (fresh(h, family_id, &t, &fi) == KV_OK) {
      hbk_fst *fw = &t->stats->f[fi];
      const hbk_family *fam = hbk_family_of(h, family_id, NULL);
      if (!fw->heads && fam && (cuts || t->stats->partial)) probe_heads(h, t, fam->name, fw);
      f = fw;
    } else {
      kv_error_clear(); /* no statistics: the regions alone */
    }
  }
  size_t given = 0;
  if (f && f->heads > 0 && f->nh - 1 > cuts) {
    /* each head's first key cuts; the region boundaries beside them (the caller keeps
       max_chunks - 1 of them, evenly spread) */
    for (uint32_t i = 1; i < f->nh; i++) each(ctx, f->hk[i], f->hl[i]);
    given = f->nh - 1;
  }
  if (f) hbk_unlock(h);
  if (cuts <= want) {
    for (size_t i = 1; i < n; i++) each(ctx, r[i].start, (uint32_t)r[i].start_len);
  } else {
    for (size_t k = 1; k <= want; k++) {
      size_t i = 1 + (k * cuts) / (want + 1);
      if (i >= 1 && i < n) each(ctx, r[i].start, (uint32_t)r[i].start_len);
    }
  }
  hb_regions_free(r, n);
  if (cuts || given || !want) return KV_OK;
  /* one region: cut at guideposts, evenly by rows */
  if (fresh(h, family_id, &t, &fi) != KV_OK) {
    kv_error_clear(); /* no statistics: one chunk */
    return KV_OK;
  }
  f = &t->stats->f[fi];
  uint64_t acc = 0;
  for (uint32_t i = 0; i + 1 < f->n && given < want; i++) {
    acc += f->gp[i].rows;
    if (acc * (want + 1) >= f->rows * (given + 1)) {
      each(ctx, f->gp[i + 1].key, f->gp[i + 1].len);
      given++;
    }
  }
  hbk_unlock(h);
  return KV_OK;
}
