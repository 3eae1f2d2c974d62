/*
** tests/catalog/test_sequence.c: sequences in the catalog (catalog/cat_sequence.c) over kv/
** on the in-memory env: the 'S' row's bytes are those of docs/FORMAT_SQL.md's worked example
** before and after a claim; blocks of CACHE values, fewer at the end of the range; the end
** without CYCLE and the start over with it; the state after a reopen (the rest of a block
** skipped); CURRENT VALUE FOR before NEXT VALUE FOR; the checks of the options; DROP; a
** record that does not decode fails the open with CAT_ERR_CORRUPT.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "catalog/catalog.h"
#include "kv/env/env_mem.h"
#include "testutil.h"
#include "tu_cat.h"

/* The record of sequence `name` as stored in SYSTEM.CATALOG into rec; returns its length
** (0 when the row has no cell). */
static size_t stored_record(store *s, const char *name, uint8_t *rec, size_t cap) {
  uint32_t fam;
  assert_int_equal(kv_family_id(s->db, CAT_SYSTEM_TABLE, CAT_DEFAULT_FAMILY, &fam), KV_OK);
  uint8_t key[64];
  size_t n = strlen(name);
  key[0] = 'S';
  memcpy(key + 1, name, n);
  key[n + 1] = 0x00;
  key[n + 2] = 0x01;
  kv_scan_options so;
  memset(&so, 0, sizeof so);
  so.family_ids = &fam;
  so.n_families = 1;
  kv_scan *sc = NULL;
  kv_row row;
  int rc = kv_get(s->db, &so, key, n + 3, &sc, &row);
  size_t len = 0;
  if (rc == KV_OK && row.n_cells == 1 && row.cells[0].value_len <= cap) {
    len = row.cells[0].value_len;
    memcpy(rec, row.cells[0].value, len);
  } else {
    assert_int_equal(rc, KV_ERR_NOTFOUND);
  }
  kv_scan_close(sc);
  return len;
}

static int64_t next(store *s, const char *name) {
  int64_t v = 0;
  cat_error err = {0};
  if (cat_sequence_next(s->cat, name, false, &v, &err)) fail_msg("next %s: %s", name, err.msg);
  return v;
}

static cat_sequence_def def_of(const char *name, int64_t start, int64_t inc, int64_t lo,
                               int64_t hi, bool cycle, int64_t cache) {
  cat_sequence_def d = {name, start, inc, lo, hi, cycle, cache};
  return d;
}

/* docs/FORMAT_SQL.md (Part 3), "SYSTEM.CATALOG": the worked example, byte for byte. */
static void test_record_bytes(void **state) {
  (void)state;
  store s = {kv_env_mem_new(0), NULL, NULL};
  open_store(&s);
  cat_error err = {0};
  cat_sequence_def d = def_of("S", 5, -1, 1, 10, false, 3);
  assert_int_equal(cat_create_sequence(s.cat, &d, &err), CAT_OK);
  uint8_t rec[64];
  const uint8_t created[] = {0x01, 0x01, 0x53, 0x0A, 0x01, 0x02, 0x14, 0x03, 0x00, 0x0A};
  assert_int_equal(stored_record(&s, "S", rec, sizeof rec), sizeof created);
  assert_memory_equal(rec, created, sizeof created);
  assert_int_equal(next(&s, "S"), 5);
  const uint8_t claimed[] = {0x01, 0x01, 0x53, 0x0A, 0x01, 0x02, 0x14, 0x03, 0x00, 0x04};
  assert_int_equal(stored_record(&s, "S", rec, sizeof rec), sizeof claimed);
  assert_memory_equal(rec, claimed, sizeof claimed);
  assert_int_equal(next(&s, "S"), 4);
  assert_int_equal(next(&s, "S"), 3);
  assert_int_equal(next(&s, "S"), 2); /* the last block: 2 and 1, and done */
  assert_int_equal(stored_record(&s, "S", rec, sizeof rec), sizeof claimed);
  assert_int_equal(rec[8], 0x02);
  assert_int_equal(next(&s, "S"), 1);
  int64_t v = 0;
  assert_int_equal(cat_sequence_next(s.cat, "S", false, &v, &err), CAT_ERR_RANGE);
  assert_non_null(strstr(err.msg, "Reached MINVALUE of sequence S"));
  assert_int_equal(cat_drop_sequence(s.cat, "S", &err), CAT_OK);
  assert_int_equal(stored_record(&s, "S", rec, sizeof rec), 0);
  close_store(&s);
  kv_env_free(s.env);
}

/* Blocks, reopen, CYCLE, CURRENT VALUE FOR. */
static void test_blocks_and_reopen(void **state) {
  (void)state;
  store s = {kv_env_mem_new(0), NULL, NULL};
  open_store(&s);
  cat_error err = {0};
  cat_sequence_def a = def_of("A", 10, 10, 10, 1000, false, 4);
  cat_sequence_def c = def_of("C", 1, 1, 1, 3, true, 2);
  assert_int_equal(cat_create_sequence(s.cat, &a, &err), CAT_OK);
  assert_int_equal(cat_create_sequence(s.cat, &c, &err), CAT_OK);
  int64_t v = 0;
  assert_int_equal(cat_sequence_current(s.cat, "A", &v, &err), CAT_ERR_INVALID);
  assert_non_null(strstr(err.msg, "before any NEXT VALUE FOR A"));
  assert_int_equal(next(&s, "A"), 10);
  assert_int_equal(next(&s, "A"), 20);
  assert_int_equal(cat_sequence_current(s.cat, "A", &v, &err), CAT_OK);
  assert_int_equal(v, 20);
  int64_t want_c[] = {1, 2, 3, 1, 2};
  for (int i = 0; i < 5; i++) assert_int_equal(next(&s, "C"), want_c[i]);
  assert_int_equal(cat_sequence_restart(cat_find_sequence(s.cat, "A")), 50);
  close_store(&s);
  open_store(&s); /* 30 and 40 were claimed with 10 and 20: skipped */
  assert_int_equal(cat_sequence_count(s.cat), 2);
  assert_string_equal(cat_sequence_at(s.cat, 0)->name, "A");
  assert_int_equal(cat_sequence_current(s.cat, "A", &v, &err), CAT_ERR_INVALID);
  assert_int_equal(next(&s, "A"), 50);
  assert_int_equal(next(&s, "C"), 3); /* the block 1..2 was used up: 3 is the next */
  const cat_sequence *cs = cat_find_sequence(s.cat, "C");
  assert_true(cs->done);
  assert_int_equal(cat_sequence_restart(cs), 1); /* CYCLE: starts over at MINVALUE */
  close_store(&s);
  kv_env_free(s.env);
}

/* Bad options change nothing; names are unique. */
static void test_bad_definitions(void **state) {
  (void)state;
  store s = {kv_env_mem_new(0), NULL, NULL};
  open_store(&s);
  struct {
    cat_sequence_def d; /* the definition */
    int code;           /* the error */
    const char *msg;    /* part of its message */
  } cases[] = {
      {def_of("B", 1, 0, 0, 9, false, 1), CAT_ERR_INVALID, "INCREMENT BY must not be 0"},
      {def_of("B", 1, 1, 9, 0, false, 1), CAT_ERR_INVALID, "greater than MAXVALUE"},
      {def_of("B", 10, 1, 0, 9, false, 1), CAT_ERR_INVALID, "outside"},
      {def_of("B", 1, 1, 0, 9, false, 0), CAT_ERR_INVALID, "CACHE must be at least 1"},
      {def_of("", 1, 1, 0, 9, false, 1), CAT_ERR_INVALID, "name"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    cat_error err = {0};
    assert_int_equal(cat_create_sequence(s.cat, &cases[i].d, &err), cases[i].code);
    assert_non_null(strstr(err.msg, cases[i].msg));
  }
  assert_int_equal(cat_sequence_count(s.cat), 0);
  cat_error err = {0};
  cat_sequence_def d = def_of("B", INT64_MAX, 1, INT64_MIN, INT64_MAX, false, 100);
  assert_int_equal(cat_create_sequence(s.cat, &d, &err), CAT_OK);
  assert_int_equal(cat_create_sequence(s.cat, &d, &err), CAT_ERR_EXISTS);
  assert_int_equal(next(&s, "B"), INT64_MAX); /* the range's last value, then the end */
  int64_t v;
  assert_int_equal(cat_sequence_next(s.cat, "B", false, &v, &err), CAT_ERR_RANGE);
  assert_int_equal(cat_sequence_next(s.cat, "NONE", false, &v, &err), CAT_ERR_NOTFOUND);
  assert_int_equal(cat_drop_sequence(s.cat, "NONE", &err), CAT_ERR_NOTFOUND);
  close_store(&s);
  kv_env_free(s.env);
}

/* A sequence record that does not decode (here: cut short) makes the open fail. */
static void test_corrupt_record(void **state) {
  (void)state;
  store s = {kv_env_mem_new(0), NULL, NULL};
  open_store(&s);
  uint32_t fam;
  assert_int_equal(kv_family_id(s.db, CAT_SYSTEM_TABLE, CAT_DEFAULT_FAMILY, &fam), KV_OK);
  const uint8_t key[] = {'S', 'X', 0x00, 0x01};
  const uint8_t bad[] = {0x01, 0x01, 'X', 0x0A, 0x01};
  kv_batch *b = kv_batch_new();
  assert_int_equal(kv_batch_put(b, fam, key, sizeof key, "d", 1, KV_TS_NOW, bad, sizeof bad),
                   KV_OK);
  assert_int_equal(kv_commit(s.db, b, NULL), KV_OK);
  kv_batch_free(b);
  cat_close(s.cat);
  cat_error err = {0};
  assert_int_equal(cat_open(s.db, &s.cat, &err), CAT_ERR_CORRUPT);
  assert_non_null(strstr(err.msg, "sequence"));
  kv_close(s.db);
  kv_env_free(s.env);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_record_bytes),
      cmocka_unit_test(test_blocks_and_reopen),
      cmocka_unit_test(test_bad_definitions),
      cmocka_unit_test(test_corrupt_record),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
