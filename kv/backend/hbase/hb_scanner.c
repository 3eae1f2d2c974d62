/*
** kv/backend/hbase/hb_scanner.c: the scanner calls of the Thrift2 client (hb_client.h):
** hb_scan_open builds a TScan from an hb_scan_spec (bounds, families or qualifiers, versions,
** time range, caching, limit, reversal, the filter as a string or as protobuf bytes) and
** opens it on the gateway (retried once after a lost connection, like the other idempotent
** calls); hb_scan_next hands out rows from getScannerRows batches, read by hand
** (hb_results.h), the first batch at most HB_FIRST_ROWS rows and the later ones `caching`;
** hb_scan_close closes the scanner on the gateway. A getScannerRows is never retried (the
** scanner lives on the gateway that failed): a lost connection or a scanner the gateway no
** longer has is KV_ERR_IO, and the backend opens a new scanner after the last row it handed
** out (backend_hbase_scan.c).
** Not here: the connection and the other calls (hb_client.c), what a scan means to Rowan:
** ranges, filters, resumes (backend_hbase_scan.c).
*/
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kv/backend/hbase/hb_client_int.h"
#include "kv/kv.h"
#include "kv/util/status.h"

#define HB_FIRST_ROWS 100 /* rows of a scanner's first getScannerRows at most */

struct hb_scanner {
  hb_client *c;
  int32_t id;
  int32_t caching;
  int32_t ask;            /* rows the next getScannerRows asks for: HB_FIRST_ROWS, then caching */
  uint32_t limit, handed; /* rows asked for at most (0: all), rows handed out */
  hb_rows rows;           /* the rows of the last getScannerRows */
  size_t at;              /* next one to hand out */
  bool end;               /* the gateway returned fewer rows than asked: no more */
  GByteArray *table;      /* the table's name (messages) */
};

static _Atomic uint64_t scan_opens; /* hb_scan_opens */

int hb_scan_open(hb_client *c, const char *ns, const char *name, const hb_scan_spec *spec,
                 hb_scanner **out) {
  *out = NULL;
  hb_scanner *s = calloc(1, sizeof *s);
  if (!s) return kv_error(KV_ERR_NOMEM, "hbase: out of memory");
  TScan *sc = g_object_new(TYPE_T_SCAN, NULL);
  if (spec->start.n) {
    sc->startRow = hbc_gba(spec->start.p, spec->start.n);
    sc->__isset_startRow = TRUE;
  }
  if (spec->stop.n) {
    sc->stopRow = hbc_gba(spec->stop.p, spec->stop.n);
    sc->__isset_stopRow = TRUE;
  }
  for (size_t i = 0; i < spec->nfamilies; i++) {
    size_t nq = spec->quals && spec->nquals ? spec->nquals[i] : 0;
    if (!nq) hbc_add_families(sc->columns, &spec->families[i], 1);
    for (size_t j = 0; j < nq; j++) {
      TColumn *col = g_object_new(TYPE_T_COLUMN, NULL);
      col->family = hbc_gba(spec->families[i].p, spec->families[i].n);
      col->qualifier = hbc_gba(spec->quals[i][j].p, spec->quals[i][j].n);
      col->__isset_qualifier = TRUE;
      g_ptr_array_add(sc->columns, col);
    }
    sc->__isset_columns = TRUE;
  }
  s->caching = spec->caching > 0 ? spec->caching : 256;
  if (spec->limit && spec->limit < (uint32_t)s->caching) s->caching = (int32_t)spec->limit;
  sc->caching = s->caching;
  sc->__isset_caching = TRUE;
  s->ask = s->caching < HB_FIRST_ROWS ? s->caching : HB_FIRST_ROWS;
  if (spec->max_versions > 1) {
    sc->maxVersions = spec->max_versions;
    sc->__isset_maxVersions = TRUE;
  }
  if (spec->max_ts > 0) {
    sc->timeRange->minStamp = spec->min_ts;
    sc->timeRange->maxStamp = spec->max_ts;
    sc->__isset_timeRange = TRUE;
  }
  if (spec->filter_bytes.n) {
    sc->filterBytes = hbc_gba(spec->filter_bytes.p, spec->filter_bytes.n);
    sc->__isset_filterBytes = TRUE;
  } else if (spec->filter.n) {
    sc->filterString = hbc_gba(spec->filter.p, spec->filter.n);
    sc->__isset_filterString = TRUE;
  }
  if (spec->reverse) {
    sc->reversed = TRUE;
    sc->__isset_reversed = TRUE;
  }
  if (spec->limit) {
    sc->limit = (gint32)(spec->limit > INT32_MAX ? INT32_MAX : spec->limit);
    sc->__isset_limit = TRUE;
  }
  GByteArray *t = hbc_table_bytes(ns, name);
  gint32 id = -1;
  int rc;
  HB_CALL(c, "openScanner", true,
          ok = t_h_base_service_if_open_scanner(c->svc, &id, t, sc, &io, &err));
  rc = hbc_table_missing(rc, "openScanner", t);
  g_object_unref(sc);
  if (rc) {
    g_byte_array_unref(t);
    free(s);
    return rc;
  }
  s->table = t;
  s->c = c;
  s->id = id;
  s->limit = spec->limit;
  atomic_fetch_add_explicit(&scan_opens, 1, memory_order_relaxed);
  *out = s;
  return KV_OK;
}

uint64_t hb_scan_opens(void) { return atomic_load_explicit(&scan_opens, memory_order_relaxed); }

/* Test hook ROWAN_HBASE_EXPIRE_SCANNER_AFTER_ROWS=N: once per process, the first scanner
** that has handed out N rows is closed on the gateway before its next batch is asked for, as
** if its lease had expired there (tests/hbase/test_fault_gateway.c). */
static void expire_hook(hb_scanner *s) {
  static int fired;
  if (fired) return;
  const char *e = getenv("ROWAN_HBASE_EXPIRE_SCANNER_AFTER_ROWS"); /* once a batch */
  long after = e && atol(e) > 0 ? atol(e) : 0;
  if (!after || s->handed < (uint32_t)after || !s->c->svc) return;
  fired = 1;
  TIOError *io = NULL;
  TIllegalArgument *ia = NULL;
  GError *err = NULL;
  if (!t_h_base_service_if_close_scanner(s->c->svc, s->id, &io, &ia, &err))
    (void)hbc_call_failed(s->c, "closeScanner", io, ia, err, NULL);
  kv_error_clear();
}

int hb_scan_next(hb_scanner *s, hb_row *out, bool *done) {
  *done = false;
  if (s->limit && s->handed >= s->limit) {
    *done = true;
    return KV_OK;
  }
  if (s->at >= s->rows.n) {
    if (s->end) {
      *done = true;
      return KV_OK;
    }
    s->at = 0;
    hb_rows_clear(&s->rows);
    hb_client *c = s->c;
    int rc;
    expire_hook(s);
    if ((rc = hbc_ensure(c)) == KV_OK) { /* not retried: the scanner lives on the gateway */
      GError *err = NULL;
      bool again;
      gboolean sent = t_h_base_service_client_send_get_scanner_rows(c->svc, s->id, s->ask, &err);
      rc = hbc_hand_reply(c, "getScannerRows", HB_RES_LIST | HB_RES_IA, &s->rows, sent, err, &again);
    }
    rc = hbc_table_missing(rc, "getScannerRows", s->table);
    if (rc == KV_ERR_INVALID && strstr(kv_errmsg(), "Invalid scanner Id")) {
      /* the gateway dropped the scanner (its lease expired, the scanner cache was cleaned):
         lost like a connection, so that the backend opens a new one after the last row */
      char msg[500];
      snprintf(msg, sizeof msg, "%s", kv_errmsg());
      rc = kv_error(KV_ERR_IO, "%s (the gateway no longer has this scanner)", msg);
    }
    if (rc) return rc;
    if (s->rows.n < (size_t)s->ask) s->end = true;
    s->ask = s->caching; /* the first batch small: a query that stops early (a LIMIT the
                            scan did not get, a lookup) reads little; then full batches */
    if (s->rows.n == 0) {
      *done = true;
      return KV_OK;
    }
  }
  hb_rows_take(&s->rows, s->at++, out);
  s->handed++;
  return KV_OK;
}

void hb_scan_close(hb_scanner *s) {
  if (!s) return;
  hb_client *c = s->c;
  if (c->svc) { /* a scanner of a lost connection died with it */
    TIOError *io = NULL;
    TIllegalArgument *ia = NULL;
    GError *err = NULL;
    if (!t_h_base_service_if_close_scanner(c->svc, s->id, &io, &ia, &err))
      (void)hbc_call_failed(c, "closeScanner", io, ia, err, NULL);
    kv_error_clear();
  }
  hb_rows_free(&s->rows);
  if (s->table) g_byte_array_unref(s->table);
  free(s);
}
