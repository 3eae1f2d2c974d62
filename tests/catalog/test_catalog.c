/*
** tests/catalog/test_catalog.c: the persistent catalog (catalog/catalog.h) over kv/ on the
** in-memory env: definitions and their rules (default family "0", hidden key family, PK NOT
** NULL, reserved family names), persistence across reopen, and DDL atomicity: faults armed
** at many points of CREATE TABLE, CREATE INDEX, DROP TABLE and ALTER TABLE, then a power cut
** and a reopen: the object (the change) is fully there or fully gone, never half, and no
** orphan kv table stays.
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

typedef struct store {
  kv_env *env;       /* in-memory file system */
  kv_db *db;         /* the store */
  cat_catalog *cat;  /* its catalog */
} store;

static void open_store(store *s) {
  kv_options o;
  kv_options_init(&o);
  o.env = s->env;
  o.create_if_missing = true;
  int rc = kv_open("/db", &o, &s->db);
  if (rc) fail_msg("kv_open: %s", kv_errmsg());
  cat_error err = {0};
  rc = cat_open(s->db, &s->cat, &err);
  if (rc) fail_msg("cat_open: %s", err.msg);
}

static void close_store(store *s) {
  cat_close(s->cat);
  kv_close(s->db);
  s->cat = NULL;
  s->db = NULL;
}

/* PRIMARY KEY (station VARCHAR, ts TIMESTAMP DESC), readings.temp DOUBLE, meta.location
** VARCHAR(40), note VARCHAR (default family). */
static const cat_column_def sensor_cols[] = {
    {"STATION", NULL, {CAT_T_VARCHAR, 0, 0, 0, 0}, 0},
    {"TS", NULL, {CAT_T_TIMESTAMP, 0, 0, 0, 0}, 0},
    {"TEMP", "READINGS", {CAT_T_DOUBLE, 0, 0, 0, 0}, 0},
    {"LOCATION", "META", {CAT_T_VARCHAR, 0, 0, 40, 0}, 2},
    {"PRICE", "META", {CAT_T_DECIMAL, 10, 2, 0, 0}, 0},
    {"NOTE", NULL, {CAT_T_VARCHAR, 0, 0, 0, 0}, 0}};
static const char *const sensor_pk[] = {"STATION", "TS"};
static const bool sensor_desc[] = {false, true};
static const cat_family_def sensor_fams[] = {{"READINGS", 1, KV_COMPRESSION_LZ4, 16384},
                                             {"META", 3, KV_COMPRESSION_NONE, 0}};

static cat_table_def sensor_def(const char *name) {
  cat_table_def d;
  memset(&d, 0, sizeof d);
  d.name = name;
  d.columns = sensor_cols;
  d.n_columns = 6;
  d.pk = sensor_pk;
  d.pk_desc = sensor_desc;
  d.n_pk = 2;
  d.families = sensor_fams;
  d.n_families = 2;
  d.ttl_sec = 86400;
  d.immutable_rows = true;
  return d;
}

static void check_sensor_table(const cat_table *t) {
  assert_non_null(t);
  assert_int_equal(t->n_columns, 6);
  assert_int_equal(t->n_pk, 2);
  assert_string_equal(t->columns[t->pk[0]].name, "STATION");
  assert_string_equal(t->columns[t->pk[1]].name, "TS");
  assert_true(t->key_cols[1].desc);
  assert_false(t->key_cols[0].nullable); /* PK NOT NULL by default */
  assert_true(t->immutable_rows);
  assert_true(t->ttl_sec == 86400);
  assert_int_equal(t->n_families, 4);
  assert_string_equal(t->families[0].name, CAT_KEY_FAMILY);
  int r = cat_find_family(t, "READINGS"), m = cat_find_family(t, "META"), z = cat_find_family(t, "0");
  assert_true(r > 0 && m > 0 && z > 0);
  assert_int_equal(t->families[m].max_versions, 3);
  assert_int_equal(t->families[m].compression, KV_COMPRESSION_NONE);
  assert_int_equal(t->families[r].block_size, 16384);
  assert_true(t->families[r].ttl_sec == 86400);
  int note = cat_find_column(t, "NOTE"), loc = cat_find_column(t, "LOCATION"), pr = cat_find_column(t, "PRICE");
  assert_int_equal(t->columns[note].family, z); /* unqualified -> "0" */
  assert_false(t->columns[loc].nullable);
  assert_true(t->columns[note].nullable);
  assert_int_equal(t->columns[loc].type.length, 40);
  assert_int_equal(t->columns[pr].type.precision, 10);
  assert_int_equal(t->columns[pr].type.scale, 2);
  /* distinct non-zero column ids for non-key columns, 0 for key columns */
  assert_int_equal(t->columns[t->pk[0]].id, 0);
  for (int i = 0; i < t->n_columns; i++)
    for (int j = i + 1; j < t->n_columns; j++)
      if (t->columns[i].pk_pos < 0 && t->columns[j].pk_pos < 0) assert_int_not_equal(t->columns[i].id, t->columns[j].id);
}

static bool kv_has_table_like(kv_db *db, const char *suffix) {
  for (int i = 0; i < kv_table_count(db); i++) {
    const char *n = kv_table_name(db, i);
    size_t nl = strlen(n), sl = strlen(suffix);
    if (n[0] == '$' && nl >= sl && strcmp(n + nl - sl, suffix) == 0) return true;
  }
  return false;
}

static void test_create_reopen_drop(void **state) {
  (void)state;
  store s = {kv_env_mem_new(0), NULL, NULL};
  open_store(&s);
  cat_error err = {0};
  cat_table_def d = sensor_def("SENSORS");
  const cat_table *t;
  assert_int_equal(cat_create_table(s.cat, &d, &t, &err), CAT_OK);
  check_sensor_table(t);
  assert_int_equal(cat_create_table(s.cat, &d, &t, &err), CAT_ERR_EXISTS);
  assert_string_equal(err.msg, "table SENSORS already exists");
  static const char *const ikeys[] = {"TEMP"};
  static const char *const iinc[] = {"LOCATION"};
  cat_index_def idx = {"TEMP_IDX", ikeys, NULL, 1, iinc, 1, 0};
  assert_int_equal(cat_create_index(s.cat, "SENSORS", &idx, &err), CAT_OK);
  assert_int_equal(cat_set_index_state(s.cat, "SENSORS", "TEMP_IDX", CAT_INDEX_ACTIVE, &err), CAT_OK);
  /* The row-existence marker can be written to the hidden key family. */
  t = cat_find_table(s.cat, "SENSORS");
  kv_batch *b = kv_batch_new();
  assert_int_equal(kv_batch_put(b, t->families[0].kv_id, "k", 1, CAT_MARKER_QUALIFIER, 1, KV_TS_NOW, "", 0), KV_OK);
  assert_int_equal(kv_commit(s.db, b, NULL), KV_OK);
  kv_batch_free(b);
  close_store(&s);

  open_store(&s);
  assert_int_equal(cat_table_count(s.cat), 1);
  t = cat_find_table(s.cat, "SENSORS");
  check_sensor_table(t);
  const cat_index *x = cat_find_index(t, "TEMP_IDX");
  assert_non_null(x);
  assert_int_equal(x->state, CAT_INDEX_ACTIVE);
  assert_string_equal(x->keys[0], "TEMP");
  assert_string_equal(x->include[0], "LOCATION");
  /* A second table gets a fresh generation; names are exact (case-sensitive). */
  cat_table_def d2 = sensor_def("sensors");
  assert_int_equal(cat_create_table(s.cat, &d2, &t, &err), CAT_OK);
  assert_string_not_equal(t->kv_name, cat_find_table(s.cat, "SENSORS")->kv_name);
  assert_int_equal(cat_drop_table(s.cat, "SENSORS", &err), CAT_OK);
  assert_false(kv_has_table_like(s.db, ".SENSORS"));
  assert_false(kv_has_table_like(s.db, ".SENSORS.TEMP_IDX"));
  assert_int_equal(cat_drop_table(s.cat, "SENSORS", &err), CAT_ERR_NOTFOUND);
  close_store(&s);

  open_store(&s);
  assert_null(cat_find_table(s.cat, "SENSORS"));
  assert_non_null(cat_find_table(s.cat, "sensors"));
  /* Dropped and re-created: a new table, empty. */
  assert_int_equal(cat_create_table(s.cat, &d, &t, &err), CAT_OK);
  check_sensor_table(t);
  assert_int_equal(cat_drop_index(s.cat, "SENSORS", "TEMP_IDX", &err), CAT_ERR_NOTFOUND);
  close_store(&s);
  kv_env_free(s.env);
}

static void test_definition_rules(void **state) {
  (void)state;
  store s = {kv_env_mem_new(0), NULL, NULL};
  open_store(&s);
  cat_error err = {0};
  const cat_table *t;
  cat_table_def d = sensor_def("T1");
  cat_family_def bad_fam[] = {{"_k", 1, 0, 0}};
  d.families = bad_fam;
  d.n_families = 1;
  assert_int_equal(cat_create_table(s.cat, &d, &t, &err), CAT_ERR_INVALID);
  assert_non_null(strstr(err.msg, "reserved"));
  cat_column_def cols[] = {{"A", NULL, {CAT_T_INTEGER, 0, 0, 0, 0}, 1}, {"B", "_X", {CAT_T_INTEGER, 0, 0, 0, 0}, 0}};
  const char *pk[] = {"A"};
  cat_table_def d2;
  memset(&d2, 0, sizeof d2);
  d2.name = "T2";
  d2.columns = cols;
  d2.n_columns = 2;
  d2.pk = pk;
  d2.n_pk = 1;
  assert_int_equal(cat_create_table(s.cat, &d2, &t, &err), CAT_ERR_INVALID); /* family _X */
  assert_non_null(strstr(err.msg, "family name '_X' is reserved"));
  /* Names over the limit say which name, its length and the limit. */
  char longname[302];
  memset(longname, 'N', 301);
  longname[301] = '\0';
  cols[1].family = longname;
  assert_int_equal(cat_create_table(s.cat, &d2, &t, &err), CAT_ERR_INVALID);
  assert_non_null(strstr(err.msg, "family name NNNN"));
  assert_non_null(strstr(err.msg, "is 301 bytes long; the limit is 200 bytes"));
  cols[1].family = NULL;
  cols[1].name = longname;
  assert_int_equal(cat_create_table(s.cat, &d2, &t, &err), CAT_ERR_INVALID);
  assert_non_null(strstr(err.msg, "column name NNNN"));
  cols[1].name = "B";
  d2.name = longname;
  assert_int_equal(cat_create_table(s.cat, &d2, &t, &err), CAT_ERR_INVALID);
  assert_non_null(strstr(err.msg, "table name NNNN"));
  assert_non_null(strstr(err.msg, "is 301 bytes long"));
  d2.name = "T2";
  d2.n_pk = 0;
  assert_int_equal(cat_create_table(s.cat, &d2, &t, &err), CAT_ERR_INVALID); /* no PK */
  d2.n_pk = 1;
  const char *pk_bad[] = {"Z"};
  d2.pk = pk_bad;
  assert_int_equal(cat_create_table(s.cat, &d2, &t, &err), CAT_ERR_INVALID);
  d2.pk = pk;
  cols[1].type.id = CAT_T_DECIMAL;
  cols[1].type.precision = 5;
  cols[1].type.scale = 7;
  assert_int_equal(cat_create_table(s.cat, &d2, &t, &err), CAT_ERR_INVALID);
  cols[1].type = (cat_type){CAT_T_INTEGER, 0, 0, 0, 0};
  assert_int_equal(cat_create_table(s.cat, &d2, &t, &err), CAT_OK);
  assert_true(t->key_cols[0].nullable); /* declared NULL */
  assert_int_equal(t->n_families, 2);    /* "_k" and "0" */
  uint8_t q[2];
  assert_int_equal(cat_column_qualifier(5, q), 1);
  assert_int_equal(cat_column_qualifier(300, q), 2);
  assert_int_equal(q[0], 0x81);
  assert_int_equal(q[1], 300 & 0xFF);
  /* no kv table was left behind by the failed attempts */
  assert_int_equal(kv_table_count(s.db), 2); /* SYSTEM.CATALOG and T2 */
  close_store(&s);
  kv_env_free(s.env);
}

/* One DDL step under a fault: returns whether the DDL call reported success. */
typedef int (*ddl_fn)(store *s, cat_error *err);

static int ddl_create(store *s, cat_error *err) {
  cat_table_def d = sensor_def("B");
  return cat_create_table(s->cat, &d, NULL, err);
}
static int ddl_drop(store *s, cat_error *err) { return cat_drop_table(s->cat, "A", err); }
static int ddl_index(store *s, cat_error *err) {
  static const char *const keys[] = {"TEMP"};
  cat_index_def idx = {"IX", keys, NULL, 1, NULL, 0, 0};
  return cat_create_index(s->cat, "A", &idx, err);
}

/* ALTER TABLE A: a column X in a new family EXTRA, META's VERSIONS 5, TTL 7200. */
static const cat_column_def alter_add[] = {{"X", "EXTRA", {CAT_T_INTEGER, 0, 0, 0, 0}, 0}};
static const cat_family_set alter_fams[] = {{"META", 5, -1, 0}};
static int ddl_alter(store *s, cat_error *err) {
  cat_alter_def d = {NULL, 0, alter_add, 1, alter_fams, 1, 7200, -1};
  return cat_alter_table(s->cat, "A", &d, err);
}

/* The store's options of every family of t are the catalog's. */
static void check_kv_options(kv_db *db, const cat_table *t) {
  for (int i = 0; i < t->n_families; i++) {
    kv_family_options o;
    assert_int_equal(kv_family_info(db, t->families[i].kv_id, &o), KV_OK);
    assert_string_equal(o.name, t->families[i].name);
    assert_int_equal(o.max_versions, t->families[i].max_versions);
    assert_true(o.ttl_sec == t->families[i].ttl_sec);
    assert_int_equal(o.compression, t->families[i].compression);
  }
}

/* Sweep: for each fault op kind and each n, a fresh store with table A, the nth operation
** of that kind fails during the DDL, then the process "dies" and the power is cut. After
** reopen, the object is whole or absent, and no orphan kv table remains. */
static void sweep(ddl_fn fn, int which) {
  static const int ops[] = {KV_FAULT_APPEND, KV_FAULT_SYNC, KV_FAULT_RENAME, KV_FAULT_SYNC_DIR, KV_FAULT_OPEN};
  int max_n = (int)tu_scaled(12, 6);
  int present = 0, absent = 0;
  for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
    for (int n = 1; n <= max_n; n++) {
      store s = {kv_env_mem_new(0), NULL, NULL};
      open_store(&s);
      cat_table_def a = sensor_def("A");
      cat_error err = {0};
      assert_int_equal(cat_create_table(s.cat, &a, NULL, &err), CAT_OK);
      kv_env_mem_fail(s.env, ops[o], (uint64_t)n, NULL, KV_FAULT_EIO, 0);
      int rc = fn(&s, &err);
      kv_env_mem_set_crashed(s.env, true);
      close_store(&s);
      kv_env_mem_power_cut(s.env);
      kv_env_mem_clear_faults(s.env);
      open_store(&s);
      const cat_table *ta = cat_find_table(s.cat, "A"), *tb = cat_find_table(s.cat, "B");
      bool there;
      if (which == 0) { /* CREATE TABLE B */
        there = tb != NULL;
        assert_non_null(ta);
        if (there) check_sensor_table(tb);
        assert_int_equal(kv_has_table_like(s.db, ".B"), there);
      } else if (which == 1) { /* DROP TABLE A */
        there = ta != NULL;
        if (there) check_sensor_table(ta);
        assert_int_equal(kv_has_table_like(s.db, ".A"), there);
        if (rc == CAT_OK) assert_false(there); /* a reported DROP is durable */
      } else if (which == 2) { /* CREATE INDEX IX ON A */
        assert_non_null(ta);
        there = cat_find_index(ta, "IX") != NULL;
        assert_int_equal(kv_has_table_like(s.db, ".A.IX"), there);
      } else { /* ALTER TABLE A: all of it or none, and the store's options are the catalog's */
        assert_non_null(ta);
        there = cat_find_column(ta, "X") >= 0;
        assert_int_equal(cat_find_family(ta, "EXTRA") >= 0, there);
        assert_int_equal(ta->families[cat_find_family(ta, "META")].max_versions, there ? 5 : 3);
        assert_true(ta->ttl_sec == (there ? 7200 : 86400));
        assert_int_equal(ta->n_columns, there ? 7 : 6);
        check_kv_options(s.db, ta);
      }
      if (rc == CAT_OK && which != 1) assert_true(there); /* a reported CREATE is durable */
      there ? present++ : absent++;
      /* The store keeps working: the same DDL can be retried to completion. */
      if (which == 1 ? there : !there) assert_int_equal(fn(&s, &err), CAT_OK);
      close_store(&s);
      kv_env_free(s.env);
    }
  fprintf(stderr, "ddl %d: %d outcomes present, %d absent\n", which, present, absent);
  assert_true(present > 0 || which == 1);
  assert_true(absent > 0 || which != 1);
}

/* An orphan (a kv table a crash left between CREATE's two steps) in a store opened
** read-only: the catalog opens, ignores it, and the next writable open drops it. */
static void test_read_only_open_with_orphan(void **state) {
  (void)state;
  store s = {kv_env_mem_new(0), NULL, NULL};
  open_store(&s);
  kv_family_options fo = {.name = "0", .max_versions = 1};
  assert_int_equal(kv_create_table(s.db, "$t77.ORPHAN", &fo, 1), KV_OK);
  close_store(&s);
  kv_options o;
  kv_options_init(&o);
  o.env = s.env;
  o.read_only = true;
  assert_int_equal(kv_open("/db", &o, &s.db), KV_OK);
  cat_error err = {0};
  int rc = cat_open(s.db, &s.cat, &err);
  if (rc) fail_msg("read-only cat_open: %s", err.msg);
  assert_null(cat_find_table(s.cat, "ORPHAN"));
  close_store(&s);
  open_store(&s);
  uint32_t id;
  assert_int_equal(kv_family_id(s.db, "$t77.ORPHAN", "0", &id), KV_ERR_NOTFOUND);
  close_store(&s);
  kv_env_free(s.env);
}

static void test_power_cut_create(void **state) { (void)state; sweep(ddl_create, 0); }
static void test_power_cut_drop(void **state) { (void)state; sweep(ddl_drop, 1); }
static void test_power_cut_index(void **state) { (void)state; sweep(ddl_index, 2); }
static void test_power_cut_alter(void **state) { (void)state; sweep(ddl_alter, 3); }

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_create_reopen_drop), cmocka_unit_test(test_definition_rules),
      cmocka_unit_test(test_power_cut_create),   cmocka_unit_test(test_power_cut_drop),
      cmocka_unit_test(test_power_cut_index),    cmocka_unit_test(test_read_only_open_with_orphan),
      cmocka_unit_test(test_power_cut_alter),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
