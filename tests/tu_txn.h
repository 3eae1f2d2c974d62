/*
** tests/tu_txn.h: multi-row transactions whose rows must appear together, for the tests of
** other views of a store (read-only opens beside a writer, online backups, copies): txn i
** writes TU_TXN_ROWS rows "k<i>-<j>" in two families with the value "v<i>", and sets the
** row "zz" (the counter) to "v<i>" in both. A consistent view holds txns 0..M-1 exactly
** (every row of each, in both families, nothing of txn M or later) and the counter at M-1:
** tu_txn_check returns M, or fails the test. Through kv_commit (one WAL record) or a bulk
** load (one MANIFEST record). Include after <cmocka.h>. Not for engine code.
*/
#ifndef ROWAN_TESTS_TU_TXN_H
#define ROWAN_TESTS_TU_TXN_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kv/bulk/bulk.h"
#include "kv/kv.h"

#define TU_TXN_ROWS 5
#define TU_TXN_MAX 100000

/* The batch of txn i into b (cleared first). */
static inline void tu_txn_batch(kv_batch *b, uint32_t fa, uint32_t fb, int i) {
  char row[32], val[16];
  kv_batch_clear(b);
  snprintf(val, sizeof val, "v%06d", i);
  for (int j = 0; j < TU_TXN_ROWS; j++) {
    snprintf(row, sizeof row, "k%06d-%d", i, j);
    assert_int_equal(kv_batch_put(b, fa, row, strlen(row), "q", 1, KV_TS_NOW, val, 7), KV_OK);
    assert_int_equal(kv_batch_put(b, fb, row, strlen(row), "q", 1, KV_TS_NOW, val, 7), KV_OK);
  }
  assert_int_equal(kv_batch_put(b, fa, "zz", 2, "q", 1, KV_TS_NOW, val, 7), KV_OK);
  assert_int_equal(kv_batch_put(b, fb, "zz", 2, "q", 1, KV_TS_NOW, val, 7), KV_OK);
}

/* Commit txn i; returns kv_commit's status. */
static inline int tu_txn_commit(kv_db *db, kv_batch *b, uint32_t fa, uint32_t fb, int i) {
  tu_txn_batch(b, fa, fb, i);
  return kv_commit(db, b, NULL);
}

/* Load txn i with a bulk load (one MANIFEST record); returns its status. */
static inline int tu_txn_bulk(kv_db *db, uint32_t fa, uint32_t fb, int i) {
  kv_bulk *bl;
  int rc = kv_bulk_begin(db, NULL, &bl);
  if (rc) return rc;
  char row[32], val[16];
  snprintf(val, sizeof val, "v%06d", i);
  for (int j = 0; j < TU_TXN_ROWS && rc == KV_OK; j++) {
    snprintf(row, sizeof row, "k%06d-%d", i, j);
    rc = kv_bulk_put(bl, fa, row, strlen(row), "q", 1, KV_TS_NOW, val, 7);
    if (rc == KV_OK) rc = kv_bulk_put(bl, fb, row, strlen(row), "q", 1, KV_TS_NOW, val, 7);
  }
  if (rc == KV_OK) rc = kv_bulk_put(bl, fa, "zz", 2, "q", 1, KV_TS_NOW, val, 7);
  if (rc == KV_OK) rc = kv_bulk_put(bl, fb, "zz", 2, "q", 1, KV_TS_NOW, val, 7);
  if (rc == KV_OK) rc = kv_bulk_commit(bl, NULL);
  kv_bulk_free(bl);
  return rc;
}

/* Create table "t" with families "a" and "b"; their ids into *fa, *fb. */
static inline void tu_txn_table(kv_db *db, uint32_t *fa, uint32_t *fb) {
  kv_family_options f[2] = {{.name = "a"}, {.name = "b"}};
  assert_int_equal(kv_create_table(db, "t", f, 2), KV_OK);
  assert_int_equal(kv_family_id(db, "t", "a", fa), KV_OK);
  assert_int_equal(kv_family_id(db, "t", "b", fb), KV_OK);
}

/* Check what db shows of table "t" (looked up by name) and return M, the number of txns
** it holds: every row of txns 0..M-1 in both families, nothing else, the counter at M-1.
** `where` names the view in failure messages. */
static inline int tu_txn_check(kv_db *db, const char *where) {
  uint32_t ids[2];
  if (kv_family_id(db, "t", "a", &ids[0]) != KV_OK) return 0; /* no table yet */
  assert_int_equal(kv_family_id(db, "t", "b", &ids[1]), KV_OK);
  kv_scan_options o;
  memset(&o, 0, sizeof o);
  o.family_ids = ids;
  o.n_families = 2;
  kv_scan *s;
  int rc = kv_scan_open(db, &o, &s);
  if (rc) fprintf(stderr, "%s: kv_scan_open: %s\n", where, kv_errmsg());
  assert_int_equal(rc, KV_OK);
  static unsigned char rows[TU_TXN_MAX]; /* rows seen per txn (both families: 2 each) */
  memset(rows, 0, sizeof rows);
  int max_txn = -1, counter = -2;
  kv_row r;
  bool bad = false;
  while ((rc = kv_scan_next(s, &r)) == KV_OK) {
    int vals[2] = {-1, -1};
    for (uint32_t c = 0; c < r.n_cells; c++) {
      int v = r.cells[c].value_len == 7 ? 0 : -3;
      for (int d = 1; v >= 0 && d < 7; d++) v = v * 10 + (r.cells[c].value[d] - '0');
      vals[r.cells[c].family_id == ids[0] ? 0 : 1] = v;
    }
    if (vals[0] != vals[1]) {
      fprintf(stderr, "%s: row %.*s has %d in a, %d in b\n", where, (int)r.key_len,
              (const char *)r.key, vals[0], vals[1]);
      bad = true;
    }
    if (r.key_len == 2 && !memcmp(r.key, "zz", 2)) {
      counter = vals[0];
      continue;
    }
    int txn = 0;
    for (uint32_t d = 1; d < r.key_len && r.key[d] != '-'; d++) txn = txn * 10 + (r.key[d] - '0');
    if (txn < 0 || txn >= TU_TXN_MAX || vals[0] != txn) {
      fprintf(stderr, "%s: row %.*s holds %d\n", where, (int)r.key_len, (const char *)r.key,
              vals[0]);
      bad = true;
      continue;
    }
    rows[txn]++;
    if (txn > max_txn) max_txn = txn;
  }
  if (rc != KV_ERR_NOTFOUND) fprintf(stderr, "%s: kv_scan_next: %s\n", where, kv_errmsg());
  assert_int_equal(rc, KV_ERR_NOTFOUND);
  kv_scan_close(s);
  for (int t = 0; t <= max_txn; t++)
    if (rows[t] != TU_TXN_ROWS) {
      fprintf(stderr, "%s: txn %d has %d of its %d rows (txns up to %d seen)\n", where, t,
              rows[t], TU_TXN_ROWS, max_txn);
      bad = true;
    }
  if ((max_txn >= 0 || counter != -2) && counter != max_txn) {
    fprintf(stderr, "%s: the counter is %d, the last txn %d\n", where, counter, max_txn);
    bad = true;
  }
  assert_false(bad);
  return max_txn + 1;
}

#endif /* ROWAN_TESTS_TU_TXN_H */
