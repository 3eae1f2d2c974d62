/*
** tests/api/atomic_test_util.h: the tables and the model the tests of atomic write
** statements share (tests/api/test_atomic_stmt.c, test_atomic_kill.c): a source table S of
** n rows whose values follow from the key, a target table T with two secondary indexes,
** the statements run against T (kinds 0..AT_KINDS-1: UPSERT ... SELECT and DELETE of many
** rows) with what each does to a model of T, and a checksum of T's
** rows read through the public API that is compared with the model's.
**
** T (K INTEGER PK, V INTEGER, W VARCHAR, F.X BIGINT), indexes TV ON T (V) INCLUDE (W) and
** TW ON T (W). S (K INTEGER PK, V INTEGER, W VARCHAR) holds K = 0..n-1 with V = sv(K) and
** W = sw(K). Header-only; include after <cmocka.h>, "rowan.h" and "testutil.h".
*/
#ifndef ROWAN_TESTS_ATOMIC_TEST_UTIL_H
#define ROWAN_TESTS_ATOMIC_TEST_UTIL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rowan.h"

/* S's values. */
static inline int64_t at_sv(int64_t k) { return (k * 7919) % 1000; }
static inline void at_sw(int64_t k, char *buf, size_t cap) {
  /* the padding makes index TW's rows (and DELETE's tombstones of them) larger: a DELETE
     of a few thousand rows passes the 1 MiB bound before its commit */
  snprintf(buf, cap, "w%05lld-%lld-padding-padding-padding", (long long)((k * 31) % 997),
           (long long)k);
}

/* A model of T: keys 0..cap-1. */
typedef struct at_model {
  int64_t cap;      /* keys */
  bool *exists;     /* per key: the row exists */
  int64_t *v;       /* V (always set in these tests) */
  int64_t *wk;      /* W is at_sw(wk) */
  bool *has_x;      /* X is not NULL */
  int64_t *x;       /* X */
} at_model;

static inline at_model *at_model_new(int64_t cap) {
  at_model *m = calloc(1, sizeof *m);
  m->cap = cap;
  m->exists = calloc((size_t)cap, sizeof *m->exists);
  m->v = calloc((size_t)cap, sizeof *m->v);
  m->wk = calloc((size_t)cap, sizeof *m->wk);
  m->has_x = calloc((size_t)cap, sizeof *m->has_x);
  m->x = calloc((size_t)cap, sizeof *m->x);
  return m;
}

static inline at_model *at_model_copy(const at_model *a) {
  at_model *m = at_model_new(a->cap);
  size_t n = (size_t)a->cap;
  memcpy(m->exists, a->exists, n * sizeof *m->exists);
  memcpy(m->v, a->v, n * sizeof *m->v);
  memcpy(m->wk, a->wk, n * sizeof *m->wk);
  memcpy(m->has_x, a->has_x, n * sizeof *m->has_x);
  memcpy(m->x, a->x, n * sizeof *m->x);
  return m;
}

static inline void at_model_free(at_model *m) {
  if (!m) return;
  free(m->exists);
  free(m->v);
  free(m->wk);
  free(m->has_x);
  free(m->x);
  free(m);
}

/* FNV-1a over bytes, continuing h. */
static inline uint64_t at_fnv(uint64_t h, const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++) {
    h ^= b[i];
    h *= 1099511628211ull;
  }
  return h;
}

/* The checksum of one row as the tests print it. */
static inline uint64_t at_row_hash(uint64_t h, int64_t k, int64_t v, const char *w, bool has_x,
                                   int64_t x) {
  char line[160];
  int n = has_x ? snprintf(line, sizeof line, "%lld|%lld|%s|%lld\n", (long long)k,
                           (long long)v, w, (long long)x)
                : snprintf(line, sizeof line, "%lld|%lld|%s|N\n", (long long)k, (long long)v,
                           w);
  return at_fnv(h, line, (size_t)n);
}

/* The model's checksum of T (rows in key order). */
static inline uint64_t at_model_sum(const at_model *m, int64_t *rows) {
  uint64_t h = 1469598103934665603ull;
  int64_t n = 0;
  for (int64_t k = 0; k < m->cap; k++) {
    if (!m->exists[k]) continue;
    char w[64];
    at_sw(m->wk[k], w, sizeof w);
    h = at_row_hash(h, k, m->v[k], w, m->has_x[k], m->x[k]);
    n++;
  }
  if (rows) *rows = n;
  return h;
}

/* T's checksum through the API (a full scan in key order), or 0 with *rc set on an error. */
static inline uint64_t at_db_sum(rowan_db *db, int64_t *rows, int *rc_out) {
  rowan_stmt *st = NULL;
  uint64_t h = 1469598103934665603ull;
  int64_t n = 0;
  int rc = rowan_prepare(db, "SELECT K, V, W, X FROM T", -1, &st, NULL);
  while (rc == ROWAN_OK && (rc = rowan_step(st)) == ROWAN_ROW) {
    const char *w = (const char *)rowan_column_text(st, 2);
    bool has_x = rowan_column_type(st, 3) != ROWAN_NULL;
    h = at_row_hash(h, rowan_column_int64(st, 0), rowan_column_int64(st, 1), w ? w : "NULL",
                    has_x, has_x ? rowan_column_int64(st, 3) : 0);
    n++;
    rc = ROWAN_OK;
  }
  rowan_finalize(st);
  if (rc_out) *rc_out = rc == ROWAN_DONE ? ROWAN_OK : rc;
  if (rows) *rows = n;
  return rc == ROWAN_DONE ? h : 0;
}

/* The rows of both indexes as index scans give them (TV: V, K, W in (V, K) order; TW: W, K
** in (W, K) order), hashed; 0 with *rc set on an error. */
static inline uint64_t at_db_index_sum(rowan_db *db, int *rc_out) {
  static const char *const q[2] = {
      "SELECT /*+ INDEX(T TV) */ V, K, W FROM T WHERE V >= -1000000000",
      "SELECT /*+ INDEX(T TW) */ W, K FROM T WHERE W >= ''"};
  uint64_t h = 1469598103934665603ull;
  int rc = ROWAN_OK;
  for (int i = 0; i < 2 && rc == ROWAN_OK; i++) {
    rowan_stmt *st = NULL;
    rc = rowan_prepare(db, q[i], -1, &st, NULL);
    while (rc == ROWAN_OK && (rc = rowan_step(st)) == ROWAN_ROW) {
      char line[160];
      int n = i == 0 ? snprintf(line, sizeof line, "%lld|%lld|%s\n",
                                (long long)rowan_column_int64(st, 0),
                                (long long)rowan_column_int64(st, 1),
                                (const char *)rowan_column_text(st, 2))
                     : snprintf(line, sizeof line, "%s|%lld\n",
                                (const char *)rowan_column_text(st, 0),
                                (long long)rowan_column_int64(st, 1));
      h = at_fnv(h, line, (size_t)n);
      rc = ROWAN_OK;
    }
    rowan_finalize(st);
    if (rc == ROWAN_DONE) rc = ROWAN_OK;
  }
  if (rc_out) *rc_out = rc;
  return rc == ROWAN_OK ? h : 0;
}

/* The model's index rows, ordered and hashed as at_db_index_sum does. */
static const at_model *at_sort_m;
static int at_cmp_tv(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  const at_model *m = at_sort_m;
  if (m->v[x] != m->v[y]) return m->v[x] < m->v[y] ? -1 : 1;
  return (x > y) - (x < y);
}
static int at_cmp_tw(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  char wx[64], wy[64];
  at_sw(at_sort_m->wk[x], wx, sizeof wx);
  at_sw(at_sort_m->wk[y], wy, sizeof wy);
  int c = strcmp(wx, wy);
  return c ? c : (x > y) - (x < y);
}

static inline uint64_t at_model_index_sum(const at_model *m) {
  int64_t *keys = malloc((size_t)m->cap * sizeof *keys), n = 0;
  for (int64_t k = 0; k < m->cap; k++)
    if (m->exists[k]) keys[n++] = k;
  uint64_t h = 1469598103934665603ull;
  at_sort_m = m;
  for (int i = 0; i < 2; i++) {
    qsort(keys, (size_t)n, sizeof *keys, i == 0 ? at_cmp_tv : at_cmp_tw);
    for (int64_t j = 0; j < n; j++) {
      int64_t k = keys[j];
      char w[64], line[160];
      at_sw(m->wk[k], w, sizeof w);
      int len = i == 0 ? snprintf(line, sizeof line, "%lld|%lld|%s\n", (long long)m->v[k],
                                  (long long)k, w)
                       : snprintf(line, sizeof line, "%s|%lld\n", w, (long long)k);
      h = at_fnv(h, line, (size_t)len);
    }
  }
  free(keys);
  return h;
}

static int at_check_cb(void *ctx, int n, char **vals, char **names) {
  int *bad = ctx;
  if (n >= 2 && vals[0] && vals[1] && strcmp(vals[1], "0") != 0 &&
      (!strcmp(vals[0], "MISSING") || !strcmp(vals[0], "EXTRA") ||
       !strcmp(vals[0], "MISMATCHED")))
    (*bad)++;
  (void)names;
  return 0;
}

/* Problems CHECK INDEX finds in TV and TW (0: both agree with T), or -1 when it fails. */
static inline int at_index_problems(rowan_db *db) {
  int bad = 0;
  if (rowan_exec(db, "CHECK INDEX TV ON T", at_check_cb, &bad) != ROWAN_OK) return -1;
  if (rowan_exec(db, "CHECK INDEX TW ON T", at_check_cb, &bad) != ROWAN_OK) return -1;
  return bad;
}

/* Create S with n rows (a bulk load) and an empty T with its indexes. */
static inline void at_setup(rowan_db *db, int64_t n) {
  const char *ddl = "CREATE TABLE S (K INTEGER NOT NULL PRIMARY KEY, V INTEGER, W VARCHAR);"
                    "CREATE TABLE T (K INTEGER NOT NULL PRIMARY KEY, V INTEGER, W VARCHAR, "
                    "F.X BIGINT);"
                    "CREATE INDEX TV ON T (V) INCLUDE (W);"
                    "CREATE INDEX TW ON T (W)";
  int rc = rowan_exec(db, ddl, NULL, NULL);
  if (rc != ROWAN_OK) fail_msg("setup: %s", rowan_errmsg(db));
  const char *cols[] = {"K", "V", "W"};
  rowan_bulk *b = NULL;
  assert_int_equal(rowan_bulk_begin(db, "S", 3, cols, &b), ROWAN_OK);
  for (int64_t k = 0; k < n; k++) {
    char ks[24], vs[24], ws[64];
    snprintf(ks, sizeof ks, "%lld", (long long)k);
    snprintf(vs, sizeof vs, "%lld", (long long)at_sv(k));
    at_sw(k, ws, sizeof ws);
    const char *f[] = {ks, vs, ws};
    assert_int_equal(rowan_bulk_add_text(b, f, NULL), ROWAN_OK);
  }
  assert_int_equal(rowan_bulk_commit(b), ROWAN_OK);
}

/* The statements: kind 0..AT_KINDS-1 with parameter r, as SQL, and their effect on a model
** of T (S has n rows; keys of T stay below 2n). */
#define AT_KINDS 6

static inline void at_sql(int kind, int64_t r, int64_t n, char *sql, size_t cap) {
  switch (kind) {
    case 0: /* every row of S, in key order: data rows ordered, index rows not */
      snprintf(sql, cap, "UPSERT INTO T (K, V, W) SELECT K, V + %lld, W FROM S", (long long)r);
      break;
    case 1: /* each key of T written about 7 times, far apart: the journal's case */
      snprintf(sql, cap, "UPSERT INTO T (K, V, W, X) SELECT K / 7 + %lld, V, W, K FROM S",
               (long long)(r % n));
      break;
    case 2: /* a DELETE through index TV (an index range) */
      snprintf(sql, cap, "DELETE FROM T WHERE V >= %lld AND V < %lld", (long long)(r % 500),
               (long long)(r % 500 + 400));
      break;
    case 3: /* a DELETE of a key range with a filter on a column */
      snprintf(sql, cap, "DELETE FROM T WHERE K >= %lld AND W < 'w00500'", (long long)(r % n));
      break;
    case 4: /* descending keys, in a second key range */
      snprintf(sql, cap, "UPSERT INTO T (K, V, W) SELECT %lld - K, V, W FROM S",
               (long long)(2 * n - 1));
      break;
    default: /* most rows */
      snprintf(sql, cap, "DELETE FROM T WHERE V > %lld", (long long)(r % 50));
      break;
  }
}

static inline void at_apply(at_model *m, int kind, int64_t r, int64_t n) {
  switch (kind) {
    case 0:
      for (int64_t k = 0; k < n; k++) {
        if (!m->exists[k]) m->has_x[k] = false;
        m->exists[k] = true;
        m->v[k] = at_sv(k) + r;
        m->wk[k] = k;
      }
      break;
    case 1:
      for (int64_t k = 0; k < n; k++) {
        int64_t t = k / 7 + r % n;
        m->exists[t] = true;
        m->v[t] = at_sv(k);
        m->wk[t] = k;
        m->has_x[t] = true;
        m->x[t] = k;
      }
      break;
    case 2:
      for (int64_t k = 0; k < m->cap; k++)
        if (m->exists[k] && m->v[k] >= r % 500 && m->v[k] < r % 500 + 400) m->exists[k] = false;
      break;
    case 3:
      for (int64_t k = r % n; k < m->cap; k++) {
        char w[64];
        at_sw(m->wk[k], w, sizeof w);
        if (m->exists[k] && strcmp(w, "w00500") < 0) m->exists[k] = false;
      }
      break;
    case 5:
      for (int64_t k = 0; k < m->cap; k++)
        if (m->exists[k] && m->v[k] > r % 50) m->exists[k] = false;
      break;
    default:
      for (int64_t k = 0; k < n; k++) {
        int64_t t = 2 * n - 1 - k;
        if (!m->exists[t]) m->has_x[t] = false;
        m->exists[t] = true;
        m->v[t] = at_sv(k);
        m->wk[t] = k;
      }
      break;
  }
}

#endif /* ROWAN_TESTS_ATOMIC_TEST_UTIL_H */
