/*
** exec/index_check.c: CHECK INDEX (contract in exec/index.h). Two passes at one pinned
** snapshot (plus a transaction's uncommitted batch as overlay):
**   1. every data row: build its index row key, look the index row up (a point lookup);
**      absent: MISSING; present with other INCLUDE values: MISMATCH;
**   2. every index row: decode the data row key from its tail, look the data row up, build
**      that row's index key; no data row or another key: EXTRA (a stale index row).
** An index row marked UNVERIFIED (written on a row-atomic backend before its data row's
** commit, exec/index_phase.c) is not judged as the others: a read repairs it from its data
** row (exec/index_repair.c), so it is counted apart (unverified; unverified_stale when the
** repair would delete it) and named in the first detail line, neither EXTRA nor MISMATCH nor its
** data row MISSING. CHECK INDEX writes nothing: exec_index_repair_all repairs.
** It holds nothing in memory beyond one row of each side, so it runs on tables of any size,
** at the cost of one point lookup per row and side. The first EXEC_INDEX_CHECK_DETAILS
** problems are described in text, with the key values.
**
** Not here: running it as a statement with a result set (exec/engine_run.c).
*/
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/salt.h"
#include "catalog/value.h"
#include "exec/backend_caps.h"
#include "exec/index_int.h"
#include "exec/rowcodec.h"

typedef struct checker {
  kv_backend *be;          /* the store's backend */
  const cat_table *t;      /* the table */
  exec_index_codec ic;     /* the index codec */
  exec_rowcodec rc;        /* the table's row codec */
  uint32_t dfams[KV_SCAN_MAX_FAMILIES]; /* data families read (key family first) */
  uint32_t n_dfams;        /* count */
  uint32_t ifams[2];       /* the index's "_k" and "0" */
  uint64_t seq;            /* pinned snapshot */
  const kv_batch *overlay; /* uncommitted writes, or NULL */
  cat_value *slots;        /* data row slots */
  cat_value *islots;       /* index row slots */
  cat_value *kv2;          /* decoded index key values */
  uint8_t *scratch;        /* decode scratch (CAT_KEY_MAX) */
  uint8_t *ikey;           /* a copy of an index row key (CAT_KEY_MAX) */
  exec_index_check_result *out; /* the result */
} checker;

static void scan_opts(const checker *ck, kv_scan_options *so, const uint32_t *fams, uint32_t n) {
  memset(so, 0, sizeof *so);
  so->family_ids = fams;
  so->n_families = n;
  so->snapshot = ck->seq;
  so->overlay = ck->overlay;
}

static bool has_family(const kv_row *row, uint32_t fam) {
  for (uint32_t i = 0; i < row->n_cells; i++)
    if (row->cells[i].family_id == fam) return true;
  return false;
}

/* Text of the values v[0..n) as "(a, b, ...)" into buf. */
static void values_text(const cat_value *v, int n, char *buf, size_t cap) {
  size_t len = (size_t)snprintf(buf, cap, "(");
  for (int i = 0; i < n && len < cap; i++) {
    char tmp[64];
    cat_text_format(&v[i], tmp, sizeof tmp);
    bool str = !v[i].is_null && cat_type_is_string(v[i].type.id);
    len += (size_t)snprintf(buf + len, cap - len, "%s%s%s%s", i ? ", " : "", str ? "'" : "",
                            tmp, str ? "'" : "");
  }
  if (len < cap) snprintf(buf + len, cap - len, ")");
}

static void detail(checker *ck, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void detail(checker *ck, const char *fmt, ...) {
  exec_index_check_result *o = ck->out;
  if (o->n_details >= EXEC_INDEX_CHECK_DETAILS) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(o->details[o->n_details++], sizeof o->details[0], fmt, ap); /* truncates */
  va_end(ap);
}

/* The PK values of the data row in slots, as text. */
static void pk_text(const checker *ck, const cat_value *slots, char *buf, size_t cap) {
  cat_value pk[64];
  int n = ck->t->n_pk < 64 ? ck->t->n_pk : 64;
  for (int j = 0; j < n; j++) pk[j] = slots[ck->t->pk[j]];
  values_text(pk, n, buf, cap);
}

/* Pass 1: each data row has its index row with equal INCLUDE values. */
static int check_data(checker *ck, exec_error *err) {
  exec_index_codec *ic = &ck->ic;
  kv_scan_options so;
  scan_opts(ck, &so, ck->dfams, ck->n_dfams);
  kv_backend_scan *s = NULL;
  int k = kv_be_scan_open(ck->be, &so, NULL, &s);
  if (k != KV_OK) return exec_index_kv_fail(err, k, "CHECK INDEX scan");
  kv_row row;
  int r = EXEC_OK;
  char a[160];
  while (!r && (k = kv_be_scan_next(ck->be, s, &row)) == KV_OK) {
    if (!has_family(&row, ck->dfams[0])) continue;
    ck->out->data_rows++;
    r = exec_row_decode(&ck->rc, &row, ic->need, ck->slots, NULL, err);
    if (r) break;
    exec_error e2;
    if (exec_index_row_key(ic, ck->slots, &e2) != EXEC_OK) {
      ck->out->missing++;
      pk_text(ck, ck->slots, a, sizeof a);
      detail(ck, "MISSING data row %s: no index key (%s)", a, e2.msg);
      continue;
    }
    kv_scan_options go;
    scan_opts(ck, &go, ck->ifams, 2);
    kv_backend_scan *g = NULL;
    kv_row irow;
    k = kv_be_get(ck->be, &go, ic->key, ic->key_len, &g, &irow);
    if (k == KV_ERR_NOTFOUND || (k == KV_OK && !has_family(&irow, ck->ifams[0]))) {
      ck->out->missing++;
      pk_text(ck, ck->slots, a, sizeof a);
      detail(ck, "MISSING index row of data row %s", a);
      k = KV_OK;
    } else if (k == KV_OK && !exec_index_row_unverified(ic, &irow)) {
      /* an unverified row found by its data row's key: a read verifies it (pass 2 counts) */
      r = exec_index_decode_row(ic, &irow, ck->islots, NULL, err);
      for (int i = 0; !r && i < ic->n_include; i++) {
        int c = ic->include_col[i];
        int cmp = 0;
        const cat_value *dv = &ck->slots[c], *iv = &ck->islots[c];
        if (dv->is_null || iv->is_null) cmp = dv->is_null != iv->is_null;
        else if (cat_value_compare(dv, iv, &cmp, NULL) != CAT_OK) cmp = 1;
        if (cmp) {
          ck->out->mismatched++;
          pk_text(ck, ck->slots, a, sizeof a);
          char dt[40], it[40];
          cat_text_format(dv, dt, sizeof dt);
          cat_text_format(iv, it, sizeof it);
          detail(ck, "MISMATCH data row %s: %.30s: table %.24s, index %.24s", a,
                 ck->t->columns[c].name, dt, it);
          break;
        }
      }
    }
    kv_be_scan_close(ck->be, g);
    if (k != KV_OK) r = exec_index_kv_fail(err, k, "CHECK INDEX lookup");
  }
  if (!r && k != KV_ERR_NOTFOUND && k != KV_OK) r = exec_index_kv_fail(err, k, "CHECK INDEX scan");
  kv_be_scan_close(ck->be, s);
  return r;
}

/* Pass 2: each index row is the index row of an existing data row. */
static int check_index(checker *ck, exec_error *err) {
  exec_index_codec *ic = &ck->ic;
  kv_scan_options so;
  scan_opts(ck, &so, ck->ifams, 1);
  kv_backend_scan *s = NULL;
  int k = kv_be_scan_open(ck->be, &so, NULL, &s);
  if (k != KV_OK) return exec_index_kv_fail(err, k, "CHECK INDEX scan");
  kv_row row;
  int r = EXEC_OK;
  char a[200];
  while (!r && (k = kv_be_scan_next(ck->be, s, &row)) == KV_OK) {
    ck->out->index_rows++;
    size_t pk_off = 0;
    exec_error e2;
    if (exec_index_decode_key(ic, row.key, row.key + row.key_len, ck->kv2, ck->scratch,
                              CAT_KEY_MAX, &pk_off, &e2) != EXEC_OK) {
      ck->out->extra++;
      detail(ck, "EXTRA index row that does not decode: %s", e2.msg);
      continue;
    }
    memcpy(ck->ikey, row.key, row.key_len);
    size_t ilen = row.key_len;
    kv_scan_options go;
    scan_opts(ck, &go, ck->dfams, ck->n_dfams);
    kv_backend_scan *g = NULL;
    kv_row drow;
    /* a salted table's stored key: the salt byte over the byte before the data key, put
       back after the read (the index key is compared below) */
    uint8_t keep = pk_off ? ck->ikey[pk_off - 1] : 0;
    const uint8_t *dk = pk_off ? cat_salt_before(ck->t, ck->ikey + pk_off, ilen - pk_off)
                               : ck->ikey;
    k = kv_be_get(ck->be, &go, dk, ilen - (size_t)(dk - ck->ikey), &g, &drow);
    if (pk_off) ck->ikey[pk_off - 1] = keep;
    bool ok = false;
    if (k == KV_OK && has_family(&drow, ck->dfams[0])) {
      r = exec_row_decode(&ck->rc, &drow, ic->need, ck->slots, NULL, err);
      ok = !r && exec_index_row_key(ic, ck->slots, &e2) == EXEC_OK && ic->key_len == ilen &&
           memcmp(ic->key, ck->ikey, ilen) == 0;
    }
    if (k == KV_ERR_NOTFOUND) k = KV_OK;
    kv_be_scan_close(ck->be, g);
    if (k != KV_OK) r = exec_index_kv_fail(err, k, "CHECK INDEX lookup");
    if (r) break;
    if (exec_index_row_unverified(ic, &row)) { /* what a read repair would make of it */
      ck->out->unverified++;
      if (!ok) ck->out->unverified_stale++;
    } else if (!ok) {
      ck->out->extra++;
      values_text(ck->kv2, ic->n_key_cols, a, sizeof a);
      detail(ck, "EXTRA index row %s", a);
    }
  }
  if (!r && k != KV_ERR_NOTFOUND && k != KV_OK) r = exec_index_kv_fail(err, k, "CHECK INDEX scan");
  kv_be_scan_close(ck->be, s);
  return r;
}

int exec_index_check(const cat_catalog *cat, kv_backend *be, const char *table, const char *index,
                     const kv_batch *overlay, exec_index_check_result *out, exec_error *err) {
  memset(out, 0, sizeof *out);
  const cat_table *t;
  const cat_index *ix;
  int fr = exec_index_find(cat, table, index, &t, &ix, err);
  if (fr) return fr;
  checker ck;
  memset(&ck, 0, sizeof ck);
  ck.be = be;
  ck.t = t;
  ck.out = out;
  ck.overlay = overlay;
  int r = exec_index_codec_init(&ck.ic, cat, t, ix, err);
  if (!r) r = exec_rowcodec_init(&ck.rc, t, err);
  size_t nc = (size_t)t->n_columns + 1;
  ck.slots = calloc(nc, sizeof *ck.slots);
  ck.islots = calloc(nc, sizeof *ck.islots);
  ck.kv2 = calloc((size_t)ck.ic.n_key_cols + 1, sizeof *ck.kv2);
  ck.scratch = malloc(CAT_KEY_MAX);
  ck.ikey = malloc(CAT_KEY_MAX);
  if (!r && (!ck.slots || !ck.islots || !ck.kv2 || !ck.scratch || !ck.ikey))
    r = exec_error_set(err, EXEC_NOMEM, "out of memory");
  ck.ifams[0] = ix->kv_key_family;
  ck.ifams[1] = ix->kv_data_family;
  if (!r) exec_index_data_families(t, ck.ic.need, ck.dfams, KV_SCAN_MAX_FAMILIES, &ck.n_dfams);
  bool pinned = false;
  if (!r) {
    int k = exec_backend_snapshot(be, &ck.seq);
    if (k != KV_OK) r = exec_index_kv_fail(err, k, "CHECK INDEX snapshot");
    else pinned = ck.seq != 0;
  }
  if (!r) r = check_data(&ck, err);
  if (!r) r = check_index(&ck, err);
  if (!r && out->unverified) { /* first of the lines (the last problem line gives way) */
    int n = out->n_details < EXEC_INDEX_CHECK_DETAILS ? out->n_details : out->n_details - 1;
    memmove(out->details[1], out->details[0], (size_t)n * sizeof out->details[0]);
    snprintf(out->details[0], sizeof out->details[0],
             "UNVERIFIED %llu index rows (a read repairs them: %llu match their data row, "
             "%llu are stale and go)",
             (unsigned long long)out->unverified,
             (unsigned long long)(out->unverified - out->unverified_stale),
             (unsigned long long)out->unverified_stale);
    out->n_details = n + 1;
  }
  if (pinned) kv_be_snapshot_release(be, ck.seq);
  free(ck.slots);
  free(ck.islots);
  free(ck.kv2);
  free(ck.scratch);
  free(ck.ikey);
  exec_rowcodec_free(&ck.rc);
  exec_index_codec_free(&ck.ic);
  return r;
}
