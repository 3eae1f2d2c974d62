/*
** tests/api/test_break_bulk_nulls.c: the bulk load's NULLs without tombstones (a family
** that held no cell at begin, a key not seen before in the load: exec/bulk.c key_check)
** against the same rows written by UPSERT, on key sequences shaped to fool the check that
** decides "not seen before" without a lookup: ascending and descending runs that touch or
** overlap at their ends, zigzags, a repeat after more than 64 runs (the seen set takes
** over), a repeat of a run's first key from inside a later run, shuffled keys with repeats,
** one key many times. Each row sets two nullable columns in two families to a value or
** NULL, so a missed repeat shows as an earlier value that a NULL should have deleted. The
** tables must be equal after the load and after a major compaction. Seeded (tu_seed).
** Not here: NULLs into tables with rows, fresh families written during the load
** (tests/api/test_bulk_nulls.c).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kv/env/env_mem.h"
#include "rowan.h"
#include "testutil.h"
#include "tu_api.h"

#define OUT_CAP (4u << 20)

static void dump(rowan_db *db, const char *sql, char *out, size_t cap) {
  size_t n = 0;
  out[0] = 0;
  rowan_stmt *st;
  assert_int_equal(rowan_prepare(db, sql, -1, &st, NULL), ROWAN_OK);
  int rc;
  while ((rc = rowan_step(st)) == ROWAN_ROW && n + 100 < cap)
    for (int c = 0; c < rowan_column_count(st); c++) {
      const char *t = rowan_column_text(st, c);
      n += (size_t)snprintf(out + n, cap - n, "%s%s", t ? t : "NULL",
                            c + 1 < rowan_column_count(st) ? "|" : "\n");
    }
  snprintf(out + n, cap - n, "end %s", rowan_errstr(rc));
  rowan_finalize(st);
}

/* Key sequences (as numbers; the key is INTEGER, DESC in some tables). */
static int make_keys(uint64_t *rs, int shape, int *k, int cap) {
  int n = 0;
  switch (shape) {
  case 0: /* ascending runs that overlap the one before by a few keys */
    for (int r = 0, base = 0; r < 30 && n + 60 < cap; r++, base += 40)
      for (int i = 0; i < 50; i++) k[n++] = base + i;
    break;
  case 1: /* zigzag: up 1..20, down 20..1, up again: every turn repeats the turning key */
    for (int r = 0; r < 40 && n + 25 < cap; r++)
      for (int i = 0; i < 20; i++) k[n++] = r % 2 ? 20 - i : 1 + i;
    break;
  case 2: /* 100 disjoint runs, then a key of run 3 */
    for (int r = 0; r < 100 && n + 12 < cap; r++)
      for (int i = 0; i < 10; i++) k[n++] = r * 100 + (r % 2 ? 9 - i : i);
    k[n++] = 305;
    k[n++] = 10000; /* and the table goes on */
    break;
  case 3: /* a run's first key again from inside a later run */
    for (int i = 0; i < 50; i++) k[n++] = 1000 + i;
    for (int i = 0; i < 50; i++) k[n++] = 500 + 20 * i; /* passes 1000 again */
    break;
  case 4: /* shuffled, with repeats */
    for (int i = 0; i < cap / 2; i++) k[n++] = (int)tu_below(rs, (uint64_t)cap / 3);
    break;
  case 5: /* one key many times among others */
    for (int i = 0; i < 300; i++) k[n++] = i % 3 == 0 ? 77 : i;
    break;
  default: /* descending runs touching at their ends: 100..51, 51..2, ... */
    for (int r = 0; r < 20 && n + 55 < cap; r++)
      for (int i = 0; i <= 49; i++) k[n++] = 1000 - r * 49 - i;
    break;
  }
  return n;
}

static void one_shape(uint64_t *rs, uint64_t seed, int shape, bool desc) {
  enum { CAP = 4000 };
  int *keys = malloc(CAP * sizeof *keys);
  assert_non_null(keys);
  int n = make_keys(rs, shape, keys, CAP);
  kv_env *ea = kv_env_mem_new(0), *eb = kv_env_mem_new(0);
  rowan_db *a = tu_open_mem(ea), *b = tu_open_mem(eb);
  const char *ddl = desc ? "CREATE TABLE T (K INTEGER NOT NULL, F.A VARCHAR, G.B BIGINT, "
                           "CONSTRAINT PK PRIMARY KEY (K DESC))"
                         : "CREATE TABLE T (K INTEGER NOT NULL PRIMARY KEY, F.A VARCHAR, "
                           "G.B BIGINT)";
  exec_ok(a, ddl);
  exec_ok(b, ddl);
  static const char *const cols[] = {"K", "A", "B"};
  rowan_bulk *bulk;
  assert_int_equal(rowan_bulk_begin(a, "T", 3, cols, &bulk), ROWAN_OK);
  rowan_stmt *up;
  assert_int_equal(rowan_prepare(b, "UPSERT INTO T (K, A, B) VALUES (?, ?, ?)", -1, &up, NULL),
                   ROWAN_OK);
  for (int i = 0; i < n; i++) {
    char k[16], va[16], vb[16];
    snprintf(k, sizeof k, "%d", keys[i]);
    snprintf(va, sizeof va, "a%d", i);
    snprintf(vb, sizeof vb, "%d", i);
    /* values mostly on a key's earlier rows, NULLs often on later ones */
    bool na = tu_below(rs, 3) == 0, nb = tu_below(rs, 3) == 0;
    const char *f[3] = {k, na ? NULL : va, nb ? NULL : vb};
    assert_int_equal(rowan_bulk_add_text(bulk, f, NULL), ROWAN_OK);
    rowan_reset(up);
    for (int c = 0; c < 3; c++) {
      if (f[c]) rowan_bind_text(up, c + 1, f[c], -1);
      else rowan_bind_null(up, c + 1);
    }
    assert_int_equal(rowan_step(up), ROWAN_DONE);
  }
  rowan_finalize(up);
  assert_int_equal(rowan_bulk_commit(bulk), ROWAN_OK);
  char *oa = malloc(OUT_CAP), *ob = malloc(OUT_CAP);
  assert_non_null(oa);
  assert_non_null(ob);
  for (int pass = 0; pass < 2; pass++) {
    dump(a, "SELECT K, A, B FROM T", oa, OUT_CAP);
    dump(b, "SELECT K, A, B FROM T", ob, OUT_CAP);
    if (strcmp(oa, ob) != 0) {
      size_t d = 0;
      while (oa[d] && oa[d] == ob[d]) d++;
      while (d > 0 && oa[d - 1] != '\n') d--;
      fail_msg("seed %llu shape %d%s (%d rows)%s: the bulk load differs from UPSERT at\n"
               "bulk:   %.80s\nupsert: %.80s", (unsigned long long)seed, shape,
               desc ? " DESC" : "", n, pass ? " after major compaction" : "", oa + d, ob + d);
    }
    dump(a, "SELECT COUNT(A), COUNT(B), COUNT(*) FROM T", oa, OUT_CAP);
    dump(b, "SELECT COUNT(A), COUNT(B), COUNT(*) FROM T", ob, OUT_CAP);
    assert_string_equal(oa, ob);
    assert_int_equal(rowan_compact(a, 1), ROWAN_OK);
    assert_int_equal(rowan_compact(b, 1), ROWAN_OK);
  }
  free(oa);
  free(ob);
  free(keys);
  assert_int_equal(rowan_close(a), ROWAN_OK);
  assert_int_equal(rowan_close(b), ROWAN_OK);
  kv_env_free(ea);
  kv_env_free(eb);
}

static void repeated_keys_keep_their_nulls(void **state) {
  (void)state;
  uint64_t seed = tu_seed("repeated_keys_keep_their_nulls"), rs = seed;
  for (int shape = 0; shape < 7; shape++)
    for (int desc = 0; desc < 2; desc++) one_shape(&rs, seed, shape, desc != 0);
}

/* A family that is not empty at begin because of cells only in the memstore, only in a
** store file, only tombstones, or in a transaction's own writes: a NULL of the load must
** still delete the older value of its row. */
static void older_values_anywhere(void **state) {
  (void)state;
  static const char *const setups[] = {
      "UPSERT INTO T VALUES (5, 'old', 50)",                 /* memstore only */
      "UPSERT INTO T VALUES (5, 'old', 50); control-flush",  /* a store file only */
      "UPSERT INTO T VALUES (6, 'x', 60); DELETE FROM T WHERE K = 6; UPSERT INTO T VALUES "
      "(5, 'old', 50)",                                      /* a tombstone, then the row */
      "UPSERT INTO T (K, B) VALUES (5, 50)",                 /* only the other family */
  };
  for (int i = 0; i < 4; i++) {
    kv_env *env = kv_env_mem_new(0);
    rowan_db *db = tu_open_mem(env);
    exec_ok(db, "CREATE TABLE T (K INTEGER NOT NULL PRIMARY KEY, F.A VARCHAR, G.B BIGINT)");
    char setup[256];
    snprintf(setup, sizeof setup, "%s", setups[i]);
    char *flush = strstr(setup, "; control-flush");
    if (flush) *flush = 0;
    exec_ok(db, setup);
    if (flush) assert_int_equal(rowan_flush(db), ROWAN_OK);
    static const char *const cols[] = {"K", "A", "B"};
    rowan_bulk *bulk;
    assert_int_equal(rowan_bulk_begin(db, "T", 3, cols, &bulk), ROWAN_OK);
    for (int k = 0; k < 10; k++) {
      char ks[8], bs[8];
      snprintf(ks, sizeof ks, "%d", k);
      snprintf(bs, sizeof bs, "%d", k * 10 + 1);
      const char *f[3] = {ks, NULL, k == 5 ? NULL : bs};
      assert_int_equal(rowan_bulk_add_text(bulk, f, NULL), ROWAN_OK);
    }
    assert_int_equal(rowan_bulk_commit(bulk), ROWAN_OK);
    char out[512];
    dump(db, "SELECT K, A, B FROM T WHERE K = 5", out, sizeof out);
    if (strcmp(out, "5|NULL|NULL\nend ROWAN_DONE") != 0)
      fail_msg("setup '%s': the loaded row 5 (A, B NULL) reads\n%s", setups[i], out);
    dump(db, "SELECT COUNT(A), COUNT(B), COUNT(*) FROM T", out, sizeof out);
    assert_string_equal(out, "0|9|10\nend ROWAN_DONE");
    assert_int_equal(rowan_close(db), ROWAN_OK);
    kv_env_free(env);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(repeated_keys_keep_their_nulls),
      cmocka_unit_test(older_values_anywhere),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
