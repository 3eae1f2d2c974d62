/*
** tests/catalog/test_cat_view.c: views in the catalog (catalog/cat_view.h) over kv/ on the
** in-memory env: the 'V' row of SYSTEM.CATALOG byte for byte (docs/FORMAT_SQL.md (Part 3) section
** 4's example), views kept across reopen in an order where each follows what it reads, the
** name rules (a view and a table never share a name, a view reads only names that exist),
** DROP of several views in one commit, and records that do not decode (bad version, cut
** short, a byte too many, a 00 byte in a name, a view reading a missing name, version 2
** columns missing, with id 0 or an unknown type, cut short) failing the
** open as corrupt, never a crash; faults and a power cut during CREATE VIEW and a two-view
** DROP leave the change whole or absent; a view with a column of its own: the version 2
** record byte for byte, the table's ids it takes (ALTER VIEW ADD / DROP COLUMN, DROP VIEW),
** and CREATE VIEW with a column and ALTER VIEW ADD under faults and a power cut.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "catalog/cat_view.h"
#include "kv/env/env_mem.h"
#include "testutil.h"
#include "tu_cat.h"

static void make_table(store *s, const char *name) {
  static const cat_column_def cols[] = {{"K", NULL, {CAT_T_INTEGER, 0, 0, 0, 0}, 0}};
  static const char *const pk[] = {"K"};
  cat_table_def d;
  memset(&d, 0, sizeof d);
  d.name = name;
  d.columns = cols;
  d.n_columns = 1;
  d.pk = pk;
  d.n_pk = 1;
  cat_error err = {0};
  assert_int_equal(cat_create_table(s->cat, &d, NULL, &err), CAT_OK);
}

static const char example[] = "CREATE VIEW VA AS SELECT * FROM T WHERE K = 1";

static void test_record_bytes(void **state) {
  (void)state;
  store s = {kv_env_mem_new(0), NULL, NULL};
  open_store(&s);
  make_table(&s, "T");
  const char *deps[] = {"T"};
  cat_error err = {0};
  assert_int_equal(cat_create_view(s.cat, "VA", example, deps, 1, &err), CAT_OK);
  uint32_t fam;
  assert_int_equal(kv_family_id(s.db, CAT_SYSTEM_TABLE, CAT_DEFAULT_FAMILY, &fam), KV_OK);
  kv_scan_options so;
  memset(&so, 0, sizeof so);
  so.family_ids = &fam;
  so.n_families = 1;
  kv_scan *sc = NULL;
  kv_row row;
  assert_int_equal(kv_get(s.db, &so, "V" "VA\x00\x01", 5, &sc, &row), KV_OK);
  assert_int_equal(row.n_cells, 1);
  uint8_t want[64 + sizeof example];
  size_t n = 0;
  memcpy(want, "\x01\x02VA\x2D", 5);
  n = 5;
  memcpy(want + n, example, 45);
  n += 45;
  memcpy(want + n, "\x01\x01T", 3);
  n += 3;
  assert_int_equal(row.cells[0].value_len, n);
  assert_memory_equal(row.cells[0].value, want, n);
  kv_scan_close(sc);
  close_store(&s);
  kv_env_free(s.env);
}

static void test_reopen_order_and_rules(void **state) {
  (void)state;
  store s = {kv_env_mem_new(0), NULL, NULL};
  open_store(&s);
  make_table(&s, "T");
  cat_error err = {0};
  const char *t[] = {"T"}, *z[] = {"Z"}, *missing[] = {"NOPE"};
  /* Z reads T; A reads Z: A sorts first by key but must come after Z */
  assert_int_equal(cat_create_view(s.cat, "Z", "CREATE VIEW Z AS SELECT * FROM T", t, 1, &err), CAT_OK);
  assert_int_equal(cat_create_view(s.cat, "A", "create view a as select * from z", z, 1, &err), CAT_OK);
  assert_int_equal(cat_create_view(s.cat, "T", "x", NULL, 0, &err), CAT_ERR_EXISTS);
  assert_int_equal(cat_create_view(s.cat, "Z", "x", NULL, 0, &err), CAT_ERR_EXISTS);
  assert_int_equal(cat_create_view(s.cat, "B", "x", missing, 1, &err), CAT_ERR_NOTFOUND);
  assert_int_equal(cat_create_view(s.cat, "", "x", NULL, 0, &err), CAT_ERR_INVALID);
  cat_table_def d;
  memset(&d, 0, sizeof d);
  d.name = "A";
  assert_int_equal(cat_create_table(s.cat, &d, NULL, &err), CAT_ERR_EXISTS);
  close_store(&s);
  open_store(&s);
  assert_int_equal(cat_view_count(s.cat), 2);
  assert_string_equal(cat_view_at(s.cat, 0)->name, "Z");
  assert_string_equal(cat_view_at(s.cat, 1)->name, "A");
  assert_string_equal(cat_find_view(s.cat, "A")->sql, "create view a as select * from z");
  assert_non_null(cat_find_view_folded(s.cat, "z"));
  assert_true(cat_view_reads(cat_find_view(s.cat, "A"), "Z"));
  assert_false(cat_view_reads(cat_find_view(s.cat, "A"), "T"));
  const char *both[] = {"A", "Z"}, *none[] = {"A", "NOPE"};
  assert_int_equal(cat_drop_views(s.cat, none, 2, &err), CAT_ERR_NOTFOUND);
  assert_int_equal(cat_view_count(s.cat), 2);
  assert_int_equal(cat_drop_views(s.cat, both, 2, &err), CAT_OK);
  assert_int_equal(cat_view_count(s.cat), 0);
  close_store(&s);
  open_store(&s);
  assert_int_equal(cat_view_count(s.cat), 0);
  assert_non_null(cat_find_table(s.cat, "T"));
  close_store(&s);
  kv_env_free(s.env);
}

/* Write value v (n bytes) as view row `VX` behind the catalog's back; the next open fails
** as corrupt. */
static void expect_corrupt(const void *v, size_t n) {
  store s = {kv_env_mem_new(0), NULL, NULL};
  open_store(&s);
  make_table(&s, "T");
  uint32_t fam;
  assert_int_equal(kv_family_id(s.db, CAT_SYSTEM_TABLE, CAT_DEFAULT_FAMILY, &fam), KV_OK);
  kv_batch *b = kv_batch_new();
  assert_int_equal(kv_batch_put(b, fam, "VVX\x00\x01", 5, "d", 1, KV_TS_NOW, v, n), KV_OK);
  assert_int_equal(kv_commit(s.db, b, NULL), KV_OK);
  kv_batch_free(b);
  close_store(&s);
  open_kv(&s);
  cat_error err = {0};
  assert_int_equal(cat_open(s.db, &s.cat, &err), CAT_ERR_CORRUPT);
  assert_null(s.cat);
  kv_close(s.db);
  kv_env_free(s.env);
}

static void test_bad_records(void **state) {
  (void)state;
  expect_corrupt("\x03\x02VX\x01x\x00", 7);        /* version 3 */
  expect_corrupt("\x02\x02VX\x01x\x01\x01T", 9);   /* version 2 without its columns */
  expect_corrupt("\x02\x02VX\x01x\x01\x01T\x00", 10); /* version 2 with no column */
  expect_corrupt("\x02\x02VX\x01x\x01\x01T\x01\x01N\x01" "0\x04\x00\x00\x00\x00", 19); /* id 0 */
  expect_corrupt("\x02\x02VX\x01x\x01\x01T\x01\x01N\x01" "0\x63\x00\x00\x00\x02", 19); /* type 99 */
  expect_corrupt("\x02\x02VX\x01x\x01\x01T\x01\x01N\x01" "0\x04\x00", 16); /* cut short */
  expect_corrupt("\x01\x02VX\x05x", 6);            /* text cut short */
  expect_corrupt("\x01\x02VX\x01x\x00\x00", 8);    /* a byte after the record */
  expect_corrupt("\x01\x02V\x00\x01x\x00", 7);     /* a 00 byte in the name */
  expect_corrupt("\x01\x02VX\x01x\x01\x04NOPE", 11); /* reads a name the catalog lacks */
  expect_corrupt("\x01\x00\x01x\x00", 5);          /* an empty name */
  expect_corrupt("", 0);                           /* nothing */
}

/* A fault at the nth operation of each kind during CREATE VIEW (create) or the DROP of two
** views, then a crash and a power cut: after reopen the change is whole or absent, and a
** reported one is there; the store keeps working (the DDL can be run again). */
static void sweep(bool create) {
  static const int ops[] = {KV_FAULT_APPEND, KV_FAULT_SYNC, KV_FAULT_RENAME, KV_FAULT_SYNC_DIR,
                            KV_FAULT_OPEN};
  const char *t[] = {"T"}, *v[] = {"V"}, *both[] = {"W", "V"};
  int max_n = (int)tu_scaled(12, 6), present = 0, absent = 0;
  for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
    for (int n = 1; n <= max_n; n++) {
      store s = {kv_env_mem_new(0), NULL, NULL};
      open_store(&s);
      make_table(&s, "T");
      cat_error err = {0};
      if (!create) {
        assert_int_equal(cat_create_view(s.cat, "V", "CREATE VIEW V AS SELECT * FROM T", t, 1, &err), CAT_OK);
        assert_int_equal(cat_create_view(s.cat, "W", "CREATE VIEW W AS SELECT * FROM V", v, 1, &err), CAT_OK);
      }
      kv_env_mem_fail(s.env, ops[o], (uint64_t)n, NULL, KV_FAULT_EIO, 0);
      int rc = create ? cat_create_view(s.cat, "V", example, t, 1, &err)
                      : cat_drop_views(s.cat, both, 2, &err);
      kv_env_mem_set_crashed(s.env, true);
      close_store(&s);
      kv_env_mem_power_cut(s.env);
      kv_env_mem_clear_faults(s.env);
      open_store(&s);
      const cat_view *cv = cat_find_view(s.cat, "V"), *cw = cat_find_view(s.cat, "W");
      assert_non_null(cat_find_table(s.cat, "T"));
      bool there = create ? cv != NULL : cv == NULL;
      if (create && cv) assert_string_equal(cv->sql, example);
      if (!create) assert_true((cv == NULL) == (cw == NULL)); /* one commit: both or none */
      if (rc == CAT_OK) assert_true(there);
      there ? present++ : absent++;
      if (!there)
        assert_int_equal(create ? cat_create_view(s.cat, "V", example, t, 1, &err)
                                : cat_drop_views(s.cat, both, 2, &err), CAT_OK);
      close_store(&s);
      kv_env_free(s.env);
    }
  fprintf(stderr, "%s: %d outcomes present, %d absent\n", create ? "CREATE VIEW" : "DROP VIEW",
          present, absent);
  assert_true(present > 0);
}

static void test_power_cut_create(void **state) { (void)state; sweep(true); }

/* docs/FORMAT_SQL.md section 4's example of a view with a column of its own: T (K, A id 1). */
static void make_table_ka(store *s) {
  static const cat_column_def cols[] = {{"K", NULL, {CAT_T_INTEGER, 0, 0, 0, 0}, 0},
                                        {"A", NULL, {CAT_T_VARCHAR, 0, 0, 0, 0}, 0}};
  static const char *const pk[] = {"K"};
  cat_table_def d;
  memset(&d, 0, sizeof d);
  d.name = "T";
  d.columns = cols;
  d.n_columns = 2;
  d.pk = pk;
  d.n_pk = 1;
  cat_error err = {0};
  assert_int_equal(cat_create_table(s->cat, &d, NULL, &err), CAT_OK);
}

static const char example2[] = "CREATE VIEW VX (N INTEGER) AS SELECT * FROM T";
static const cat_column_def col_n[] = {{"N", NULL, {CAT_T_INTEGER, 0, 0, 0, 0}, 0}};

/* The version 2 record byte for byte, the table's next column id moved in the same commit,
** both kept across reopen; ALTER VIEW and a new table column never reuse an id; DROP VIEW
** forgets the columns. */
static void test_columns_record(void **state) {
  (void)state;
  store s = {kv_env_mem_new(0), NULL, NULL};
  open_store(&s);
  make_table_ka(&s);
  const char *deps[] = {"T"};
  cat_error err = {0};
  assert_int_equal(cat_create_view_columns(s.cat, "VX", example2, deps, 1, col_n, 1, &err), CAT_OK);
  uint32_t fam;
  assert_int_equal(kv_family_id(s.db, CAT_SYSTEM_TABLE, CAT_DEFAULT_FAMILY, &fam), KV_OK);
  kv_scan_options so;
  memset(&so, 0, sizeof so);
  so.family_ids = &fam;
  so.n_families = 1;
  kv_scan *sc = NULL;
  kv_row row;
  assert_int_equal(kv_get(s.db, &so, "V" "VX\x00\x01", 5, &sc, &row), KV_OK);
  uint8_t want[128];
  memcpy(want, "\x02\x02VX\x2D", 5);
  memcpy(want + 5, example2, 45);
  memcpy(want + 50, "\x01\x01T" "\x01" "\x01N" "\x01" "0" "\x04\x00\x00\x00" "\x02", 13);
  assert_int_equal(row.cells[0].value_len, 63);
  assert_memory_equal(row.cells[0].value, want, 63);
  kv_scan_close(sc);
  assert_int_equal(cat_find_table(s.cat, "T")->next_column_id, 3);
  close_store(&s);
  open_store(&s);
  const cat_view *v = cat_find_view(s.cat, "VX");
  assert_non_null(v);
  assert_int_equal(v->n_columns, 1);
  assert_string_equal(v->columns[0].name, "N");
  assert_int_equal(v->columns[0].id, 2);
  assert_ptr_equal(cat_view_table(s.cat, v), cat_find_table(s.cat, "T"));
  assert_int_equal(cat_find_table(s.cat, "T")->next_column_id, 3);
  /* a name the table or the view has is refused; ALTER VIEW takes the next id */
  static const cat_column_def col_a[] = {{"A", NULL, {CAT_T_INTEGER, 0, 0, 0, 0}, 0}};
  static const cat_column_def col_m[] = {{"M", "F", {CAT_T_DOUBLE, 0, 0, 0, 0}, 0}};
  assert_int_equal(cat_alter_view(s.cat, "VX", example2, col_a, 1, NULL, 0, &err), CAT_ERR_EXISTS);
  assert_int_equal(cat_alter_view(s.cat, "VX", example2, col_n, 1, NULL, 0, &err), CAT_ERR_EXISTS);
  assert_int_equal(cat_alter_view(s.cat, "VX", example2, col_m, 1, NULL, 0, &err), CAT_OK);
  const cat_table *t = cat_find_table(s.cat, "T");
  assert_int_equal(t->next_column_id, 4);
  assert_true(cat_find_family(t, "F") > 0);
  const char *drop[] = {"N"}, *nope[] = {"A"};
  assert_int_equal(cat_alter_view(s.cat, "VX", example2, NULL, 0, nope, 1, &err), CAT_ERR_NOTFOUND);
  assert_int_equal(cat_alter_view(s.cat, "VX", example2, NULL, 0, drop, 1, &err), CAT_OK);
  close_store(&s);
  open_store(&s);
  v = cat_find_view(s.cat, "VX");
  assert_int_equal(v->n_columns, 1);
  assert_string_equal(v->columns[0].name, "M");
  assert_string_equal(v->columns[0].family, "F");
  assert_int_equal(v->columns[0].id, 3);
  const char *vx[] = {"VX"};
  assert_int_equal(cat_drop_views(s.cat, vx, 1, &err), CAT_OK);
  assert_int_equal(cat_find_table(s.cat, "T")->next_column_id, 4); /* ids never given again */
  close_store(&s);
  kv_env_free(s.env);
}

/* A fault at the nth operation of each kind during CREATE VIEW with a column of its own in a
** new family (alter false), or during ALTER VIEW ADD of one (alter true), then a crash and a
** power cut: after reopen the view's column and the table's moved next column id are both
** there or both absent (one batch). */
static void sweep_columns(bool alter) {
  static const int ops[] = {KV_FAULT_APPEND, KV_FAULT_SYNC, KV_FAULT_RENAME, KV_FAULT_SYNC_DIR,
                            KV_FAULT_OPEN};
  static const cat_column_def col_fn[] = {{"N", "F", {CAT_T_INTEGER, 0, 0, 0, 0}, 0}};
  static const cat_column_def col_fn2[] = {{"N2", "F", {CAT_T_INTEGER, 0, 0, 0, 0}, 0}};
  const char *deps[] = {"T"};
  int max_n = (int)tu_scaled(12, 6), present = 0, absent = 0;
  for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
    for (int n = 1; n <= max_n; n++) {
      store s = {kv_env_mem_new(0), NULL, NULL};
      open_store(&s);
      make_table_ka(&s);
      cat_error err = {0};
      if (alter) /* VX with N (id 2); the ALTER adds F.N2 (id 3) */
        assert_int_equal(cat_create_view_columns(s.cat, "VX", example2, deps, 1, col_n, 1, &err),
                         CAT_OK);
      int base = alter ? 3 : 2; /* the table's next column id before the change */
      kv_env_mem_fail(s.env, ops[o], (uint64_t)n, NULL, KV_FAULT_EIO, 0);
      int rc = alter ? cat_alter_view(s.cat, "VX", example2, col_fn2, 1, NULL, 0, &err)
                     : cat_create_view_columns(s.cat, "VX", example2, deps, 1, col_fn, 1, &err);
      kv_env_mem_set_crashed(s.env, true);
      close_store(&s);
      kv_env_mem_power_cut(s.env);
      kv_env_mem_clear_faults(s.env);
      open_store(&s);
      const cat_view *v = cat_find_view(s.cat, "VX");
      const cat_table *t = cat_find_table(s.cat, "T");
      assert_non_null(t);
      if (alter) assert_non_null(v);
      int i = v ? cat_view_find_column(v, alter ? "N2" : "N") : -1;
      bool there = i >= 0;
      assert_int_equal(t->next_column_id, there ? base + 1 : base);
      if (there) assert_int_equal(v->columns[i].id, base);
      if (there) assert_true(cat_find_family(t, "F") > 0);
      if (rc == CAT_OK) assert_true(there);
      there ? present++ : absent++;
      if (!there)
        assert_int_equal(alter ? cat_alter_view(s.cat, "VX", example2, col_fn2, 1, NULL, 0, &err)
                               : cat_create_view_columns(s.cat, "VX", example2, deps, 1, col_fn,
                                                         1, &err),
                         CAT_OK);
      close_store(&s);
      kv_env_free(s.env);
    }
  fprintf(stderr, "%s: %d outcomes present, %d absent\n", alter ? "ALTER VIEW ADD" :
          "CREATE VIEW with a column", present, absent);
  assert_true(present > 0);
}

static void test_power_cut_create_columns(void **state) { (void)state; sweep_columns(false); }
static void test_power_cut_alter_add(void **state) { (void)state; sweep_columns(true); }
static void test_power_cut_drop(void **state) { (void)state; sweep(false); }

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_record_bytes),
      cmocka_unit_test(test_reopen_order_and_rules),
      cmocka_unit_test(test_bad_records),
      cmocka_unit_test(test_power_cut_create),
      cmocka_unit_test(test_power_cut_drop),
      cmocka_unit_test(test_columns_record),
      cmocka_unit_test(test_power_cut_create_columns),
      cmocka_unit_test(test_power_cut_alter_add),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
