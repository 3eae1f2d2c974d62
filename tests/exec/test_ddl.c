/*
** tests/exec/test_ddl.c: exec/ddl.h from SQL text (sql_parse) to the catalog and the kv
** families it creates, on the in-memory env: every CREATE TABLE form and option (types
** with arguments, NULL / NOT NULL, inline and CONSTRAINT primary keys with DESC,
** family.column, VERSIONS, fam.VERSIONS, TTL, COMPRESSION, BLOCKSIZE, IMMUTABLE_ROWS),
** IF [NOT] EXISTS, DROP TABLE, CREATE/DROP INDEX catalog entries (refused on a table with
** rows), every error with its message and offset, and the schema after a reopen.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "catalog/catalog.h"
#include "exec/ddl.h"
#include "exec/rowcodec.h"
#include "kv/env/env_mem.h"
#include "sql/parser.h"
#include "testutil.h"

typedef struct store {
  kv_env *env;      /* in-memory file system */
  kv_db *db;        /* the store */
  cat_catalog *cat; /* its catalog */
} store;

static void open_db(store *s) {
  kv_options o;
  kv_options_init(&o);
  o.env = s->env;
  o.create_if_missing = true;
  if (kv_open("/db", &o, &s->db)) fail_msg("kv_open: %s", kv_errmsg());
  cat_error err = {0};
  if (cat_open(s->db, &s->cat, &err)) fail_msg("cat_open: %s", err.msg);
}

static void close_db(store *s) {
  cat_close(s->cat);
  kv_close(s->db);
  s->cat = NULL;
  s->db = NULL;
}

/* Parse and run one statement; returns the exec code, err filled. */
static int run(store *s, const char *sql, exec_error *err) {
  sql_stmt *st = NULL;
  sql_error pe;
  if (sql_parse(sql, strlen(sql), &st, NULL, &pe) != SQL_OK || !st)
    fail_msg("parse of [%s] failed: %s", sql, pe.message);
  memset(err, 0, sizeof *err);
  int rc = exec_ddl_run(s->cat, s->db, st, sql, err);
  sql_stmt_free(st);
  return rc;
}

static void ok(store *s, const char *sql) {
  exec_error err;
  if (run(s, sql, &err) != EXEC_OK) fail_msg("[%s]: %s", sql, err.msg);
}

/* Run sql expecting code, a message containing `want`, and the offset of the first
** occurrence of `at` in sql (at NULL: offset not checked). */
static void bad(store *s, const char *sql, int code, const char *want, const char *at) {
  exec_error err;
  int rc = run(s, sql, &err);
  if (rc != code) fail_msg("[%s]: want code %d, got %d (%s)", sql, code, rc, err.msg);
  assert_int_equal(err.code, code);
  if (!strstr(err.msg, want)) fail_msg("[%s]: message '%s' lacks '%s'", sql, err.msg, want);
  if (at) {
    const char *p = strstr(sql, at);
    assert_non_null(p);
    if (err.offset != (int)(p - sql))
      fail_msg("[%s]: offset %d, want %d ('%s') for '%s'", sql, err.offset, (int)(p - sql), at,
               err.msg);
  }
}

static const cat_column *col(const cat_table *t, const char *name) {
  int c = cat_find_column(t, name);
  if (c < 0) fail_msg("no column %s", name);
  return &t->columns[c];
}

static const cat_family *fam(const cat_table *t, const char *name) {
  int f = cat_find_family(t, name);
  if (f < 0) fail_msg("no family %s", name);
  return &t->families[f];
}

static const char *sensors_sql =
    "CREATE TABLE sensors (station VARCHAR(20) NOT NULL, ts TIMESTAMP NOT NULL, "
    "readings.temp DOUBLE, readings.hum DECIMAL(5,2), meta.location VARCHAR, "
    "meta.model CHAR(8) NOT NULL, note VARCHAR(100) NULL, flags TINYINT, d DECIMAL, "
    "p DECIMAL(7), c CHAR, b VARBINARY, day DATE, t TIME, ok BOOLEAN, s SMALLINT, "
    "i INTEGER, g BIGINT, f FLOAT "
    "CONSTRAINT pk PRIMARY KEY (station, ts DESC)) "
    "VERSIONS=2, meta.VERSIONS=5, TTL=86400, COMPRESSION='NONE', readings.COMPRESSION=LZ4, "
    "BLOCKSIZE=8192, meta.BLOCKSIZE=4096, IMMUTABLE_ROWS=true";

/* The sensor table's schema, checked the same before and after a reopen. */
static void check_sensors(store *s) {
  const cat_table *t = cat_find_table(s->cat, "SENSORS");
  assert_non_null(t);
  assert_int_equal(t->n_columns, 19);
  assert_int_equal(t->n_pk, 2);
  assert_string_equal(t->columns[t->pk[0]].name, "STATION");
  assert_string_equal(t->columns[t->pk[1]].name, "TS");
  assert_false(col(t, "STATION")->desc);
  assert_true(col(t, "TS")->desc);
  assert_false(col(t, "TS")->nullable);
  assert_int_equal(col(t, "STATION")->type.id, CAT_T_VARCHAR);
  assert_int_equal(col(t, "STATION")->type.length, 20);
  assert_int_equal(col(t, "HUM")->type.id, CAT_T_DECIMAL);
  assert_int_equal(col(t, "HUM")->type.precision, 5);
  assert_int_equal(col(t, "HUM")->type.scale, 2);
  assert_int_equal(col(t, "D")->type.precision, 0);
  assert_int_equal(col(t, "P")->type.precision, 7);
  assert_int_equal(col(t, "P")->type.scale, 0);
  assert_int_equal(col(t, "C")->type.id, CAT_T_CHAR);
  assert_int_equal(col(t, "C")->type.length, 1);
  assert_int_equal(col(t, "MODEL")->type.length, 8);
  assert_false(col(t, "MODEL")->nullable);
  assert_true(col(t, "NOTE")->nullable);
  assert_true(col(t, "FLAGS")->nullable);
  const int ids[] = {CAT_T_VARBINARY, CAT_T_DATE, CAT_T_TIME, CAT_T_BOOLEAN, CAT_T_SMALLINT,
                     CAT_T_INTEGER, CAT_T_BIGINT, CAT_T_FLOAT, CAT_T_TINYINT};
  const char *names[] = {"B", "DAY", "T", "OK", "S", "I", "G", "F", "FLAGS"};
  for (int i = 0; i < 9; i++) assert_int_equal(col(t, names[i])->type.id, ids[i]);
  assert_string_equal(t->families[col(t, "TEMP")->family].name, "READINGS");
  assert_string_equal(t->families[col(t, "LOCATION")->family].name, "META");
  assert_string_equal(t->families[col(t, "NOTE")->family].name, "0");
  assert_int_equal(col(t, "STATION")->family, 0);
  assert_int_equal(t->n_families, 4); /* _k, READINGS, META, 0 */
  assert_true(t->immutable_rows);
  assert_int_equal(t->ttl_sec, 86400);
  /* What the kv families were created with. */
  struct { const char *f; int versions, compression; uint32_t block; } want[] = {
      {"READINGS", 2, KV_COMPRESSION_LZ4, 8192},
      {"META", 5, KV_COMPRESSION_NONE, 4096},
      {"0", 2, KV_COMPRESSION_NONE, 8192}};
  for (int i = 0; i < 3; i++) {
    const cat_family *f = fam(t, want[i].f);
    assert_int_equal(f->max_versions, want[i].versions);
    assert_int_equal(f->compression, want[i].compression);
    assert_int_equal(f->block_size, want[i].block);
    assert_int_equal(f->ttl_sec, 86400);
    kv_family_options fo;
    assert_int_equal(kv_family_info(s->db, f->kv_id, &fo), KV_OK);
    assert_int_equal(fo.max_versions, want[i].versions);
    assert_int_equal(fo.compression, want[i].compression);
    assert_int_equal(fo.block_size, want[i].block);
    assert_int_equal(fo.ttl_sec, 86400);
  }
  kv_family_options fo;
  assert_int_equal(kv_family_info(s->db, t->families[0].kv_id, &fo), KV_OK);
  assert_int_equal(fo.ttl_sec, 86400); /* the marker expires with the row */
}

static void test_create_table(void **state) {
  (void)state;
  store s = {kv_env_mem_new(0), NULL, NULL};
  open_db(&s);
  ok(&s, sensors_sql);
  check_sensors(&s);
  /* Inline PRIMARY KEY DESC; defaults: VERSIONS 1, LZ4, no TTL, mutable. */
  ok(&s, "CREATE TABLE k1 (id BIGINT PRIMARY KEY DESC, v VARCHAR)");
  const cat_table *t = cat_find_table(s.cat, "K1");
  assert_non_null(t);
  assert_int_equal(t->n_pk, 1);
  assert_true(col(t, "ID")->desc);
  assert_false(col(t, "ID")->nullable);
  assert_int_equal(fam(t, "0")->max_versions, 1);
  assert_int_equal(fam(t, "0")->compression, KV_COMPRESSION_LZ4);
  assert_int_equal(t->ttl_sec, 0);
  assert_false(t->immutable_rows);
  /* A nullable key column; quoted names stay exact; TTL FOREVER; family option creates an
  ** empty family; IMMUTABLE_ROWS=false. */
  ok(&s, "CREATE TABLE \"Mixed\" (\"k\" INTEGER NULL, \"v\" INTEGER, CONSTRAINT p PRIMARY KEY "
         "(\"k\")) TTL=FOREVER, extra.VERSIONS=3, IMMUTABLE_ROWS=false");
  t = cat_find_table(s.cat, "Mixed");
  assert_non_null(t);
  assert_true(col(t, "k")->nullable);
  assert_int_equal(fam(t, "EXTRA")->max_versions, 3);
  assert_int_equal(t->ttl_sec, 0);
  /* IF NOT EXISTS on an existing table leaves it as it was. */
  ok(&s, "CREATE TABLE IF NOT EXISTS k1 (other INTEGER PRIMARY KEY)");
  t = cat_find_table(s.cat, "K1");
  assert_int_equal(t->n_columns, 2);
  assert_int_equal(cat_find_column(t, "OTHER"), -1);
  /* Reopen: the same schema, options included. */
  close_db(&s);
  open_db(&s);
  check_sensors(&s);
  assert_true(col(cat_find_table(s.cat, "K1"), "ID")->desc);
  assert_int_equal(cat_table_count(s.cat), 3);
  close_db(&s);
  kv_env_free(s.env);
}

static void test_create_errors(void **state) {
  (void)state;
  store s = {kv_env_mem_new(0), NULL, NULL};
  open_db(&s);
  ok(&s, "CREATE TABLE t (k INTEGER PRIMARY KEY, v INTEGER)");
  bad(&s, "CREATE TABLE t (k INTEGER PRIMARY KEY)", EXEC_ERROR, "already exists", "t (");
  bad(&s, "CREATE TABLE u (k INTEGER, v INTEGER)", EXEC_ERROR, "no PRIMARY KEY", "u (");
  bad(&s, "CREATE TABLE u (k FOO PRIMARY KEY)", EXEC_ERROR, "unknown type FOO", "FOO");
  bad(&s, "CREATE TABLE u (k INTEGER(5) PRIMARY KEY)", EXEC_ERROR, "takes no arguments",
      "INTEGER");
  bad(&s, "CREATE TABLE u (k INTEGER PRIMARY KEY, v VARCHAR(0))", EXEC_ERROR, "length 0",
      "VARCHAR");
  bad(&s, "CREATE TABLE u (k INTEGER PRIMARY KEY, v CHAR(40000))", EXEC_ERROR, "CHAR length",
      "CHAR");
  bad(&s, "CREATE TABLE u (k INTEGER PRIMARY KEY, v VARCHAR(3,1))", EXEC_ERROR, "one length",
      "VARCHAR");
  bad(&s, "CREATE TABLE u (k INTEGER PRIMARY KEY, v DECIMAL(39))", EXEC_ERROR,
      "precision 39", "DECIMAL");
  bad(&s, "CREATE TABLE u (k INTEGER PRIMARY KEY, v DECIMAL(0))", EXEC_ERROR, "precision 0",
      "DECIMAL");
  bad(&s, "CREATE TABLE u (k INTEGER PRIMARY KEY, v DECIMAL(5,6))", EXEC_ERROR,
      "scale 6 exceeds", "DECIMAL");
  bad(&s, "CREATE TABLE u (k INTEGER PRIMARY KEY, v INTEGER, v BIGINT)", EXEC_ERROR,
      "duplicate column V", "v BIGINT");
  bad(&s, "CREATE TABLE u (a INTEGER PRIMARY KEY, b INTEGER PRIMARY KEY)", EXEC_ERROR,
      "both declared PRIMARY KEY", "b INTEGER");
  bad(&s, "CREATE TABLE u (a INTEGER PRIMARY KEY, b INTEGER CONSTRAINT p PRIMARY KEY (b))",
      EXEC_ERROR, "both on column A", "a INTEGER");
  bad(&s, "CREATE TABLE u (a INTEGER, CONSTRAINT p PRIMARY KEY (a, zz))", EXEC_ERROR,
      "unknown column ZZ", "zz");
  bad(&s, "CREATE TABLE u (a INTEGER, CONSTRAINT p PRIMARY KEY (a, a DESC))", EXEC_ERROR,
      "twice", "a DESC");
  bad(&s, "CREATE TABLE u (f.a INTEGER, CONSTRAINT p PRIMARY KEY (a))", EXEC_ERROR,
      "cannot be in a family", "f.a");
  bad(&s, "CREATE TABLE u (_f.a INTEGER, k INTEGER PRIMARY KEY)", EXEC_ERROR, "reserved",
      "_f.a");
  bad(&s, "CREATE TABLE u (k INTEGER PRIMARY KEY) _k.VERSIONS=2", EXEC_ERROR, "reserved",
      "_k.");
  bad(&s, "CREATE TABLE u (k INTEGER PRIMARY KEY) SALT_BYTES=4", EXEC_ERROR,
      "unknown table option SALT_BYTES", "SALT");
  bad(&s, "CREATE TABLE u (k INTEGER PRIMARY KEY) VERSIONS=0", EXEC_ERROR,
      "VERSIONS must be an integer >= 1", "VERSIONS");
  bad(&s, "CREATE TABLE u (k INTEGER PRIMARY KEY) VERSIONS='x'", EXEC_ERROR, "VERSIONS",
      "VERSIONS");
  bad(&s, "CREATE TABLE u (k INTEGER PRIMARY KEY) x.VERSIONS=-1", EXEC_ERROR, "X.VERSIONS",
      "x.VERSIONS");
  bad(&s, "CREATE TABLE u (k INTEGER PRIMARY KEY) TTL=-5", EXEC_ERROR, "TTL", "TTL");
  bad(&s, "CREATE TABLE u (k INTEGER PRIMARY KEY, f.v INTEGER) f.TTL=5", EXEC_ERROR,
      "TTL is a table option", "f.TTL");
  bad(&s, "CREATE TABLE u (k INTEGER PRIMARY KEY) COMPRESSION='GZ'", EXEC_ERROR,
      "'LZ4' or 'NONE'", "COMPRESSION");
  bad(&s, "CREATE TABLE u (k INTEGER PRIMARY KEY) BLOCKSIZE=0", EXEC_ERROR, "BLOCKSIZE",
      "BLOCKSIZE");
  bad(&s, "CREATE TABLE u (k INTEGER PRIMARY KEY) BLOCKSIZE=67108865", EXEC_ERROR, "BLOCKSIZE",
      "BLOCKSIZE");
  bad(&s, "CREATE TABLE u (k INTEGER PRIMARY KEY) IMMUTABLE_ROWS=7", EXEC_ERROR,
      "TRUE or FALSE", "IMMUTABLE_ROWS");
  bad(&s, "CREATE TABLE u (k INTEGER PRIMARY KEY) VERSIONS=2, TTL=5, versions=3", EXEC_ERROR,
      "given twice", "versions=3");
  /* None of the failed statements left a table behind. */
  assert_int_equal(cat_table_count(s.cat), 1);
  assert_null(cat_find_table(s.cat, "U"));
  /* Not DDL. */
  exec_error err;
  assert_int_equal(run(&s, "SELECT 1", &err), EXEC_MISUSE);
  close_db(&s);
  kv_env_free(s.env);
}

static void test_drop_and_indexes(void **state) {
  (void)state;
  store s = {kv_env_mem_new(0), NULL, NULL};
  open_db(&s);
  ok(&s, "CREATE TABLE t (k INTEGER PRIMARY KEY, a INTEGER, f.b VARCHAR, c DOUBLE)");
  ok(&s, "CREATE INDEX ia ON t (a DESC, f.b) INCLUDE (c)");
  ok(&s, "CREATE INDEX ie ON t (a + 1, UPPER(b))");
  ok(&s, "CREATE INDEX IF NOT EXISTS ia ON t (c)");
  const cat_table *t = cat_find_table(s.cat, "T");
  assert_int_equal(t->n_indexes, 2);
  const cat_index *ia = cat_find_index(t, "IA");
  assert_non_null(ia);
  assert_int_equal(ia->n_keys, 2);
  assert_string_equal(ia->keys[0], "A");
  assert_true(ia->key_desc[0]);
  assert_string_equal(ia->keys[1], "B");
  assert_false(ia->key_desc[1]);
  assert_int_equal(ia->n_include, 1);
  assert_string_equal(ia->include[0], "C");
  assert_int_equal(ia->state, CAT_INDEX_ACTIVE); /* backfilled (empty table) */
  const cat_index *ie = cat_find_index(t, "IE");
  assert_non_null(ie);
  assert_non_null(strstr(ie->keys[0], "A"));
  assert_non_null(strstr(ie->keys[1], "UPPER"));
  bad(&s, "CREATE INDEX ia ON t (c)", EXEC_ERROR, "already exists", NULL);
  bad(&s, "CREATE INDEX ix ON nope (c)", EXEC_ERROR, "table NOPE does not exist", NULL);
  bad(&s, "CREATE INDEX ix ON t (zz)", EXEC_ERROR, "no column ZZ", "zz");
  bad(&s, "CREATE INDEX ix ON t (g.a)", EXEC_ERROR, "no column G.A", "g.a");
  bad(&s, "CREATE INDEX ix ON t (a) INCLUDE (q)", EXEC_ERROR, "unknown column Q", "q)");
  /* Reopen keeps the indexes; DROP INDEX. */
  close_db(&s);
  open_db(&s);
  t = cat_find_table(s.cat, "T");
  assert_int_equal(t->n_indexes, 2);
  ok(&s, "DROP INDEX ie ON t");
  ok(&s, "DROP INDEX IF EXISTS ie ON t");
  ok(&s, "DROP INDEX IF EXISTS ie ON nope");
  bad(&s, "DROP INDEX ie ON t", EXEC_ERROR, "index IE does not exist", NULL);
  bad(&s, "DROP INDEX ie ON nope", EXEC_ERROR, "table NOPE does not exist", NULL);
  t = cat_find_table(s.cat, "T");
  assert_int_equal(t->n_indexes, 1);

  /* A table with a row gets its index backfilled (exec/index.h; tests/exec/test_index.c). */
  exec_rowcodec rc;
  exec_error err;
  assert_int_equal(exec_rowcodec_init(&rc, t, &err), EXEC_OK);
  cat_value row[4] = {cat_v_int(CAT_T_INTEGER, 1), cat_v_null(cat_type_of(CAT_T_INTEGER)),
                      cat_v_null(cat_type_of(CAT_T_VARCHAR)),
                      cat_v_null(cat_type_of(CAT_T_DOUBLE))};
  kv_batch *b = kv_batch_new();
  assert_int_equal(exec_row_put(&rc, row, NULL, KV_TS_NOW, b, &err), EXEC_OK);
  assert_int_equal(kv_commit(s.db, b, NULL), KV_OK);
  kv_batch_free(b);
  exec_rowcodec_free(&rc);
  ok(&s, "CREATE INDEX iz ON t (c)");
  assert_int_equal(cat_find_index(cat_find_table(s.cat, "T"), "IZ")->state, CAT_INDEX_ACTIVE);

  /* DROP TABLE drops the table and its data; the name can be reused, empty. */
  ok(&s, "DROP TABLE t");
  assert_null(cat_find_table(s.cat, "T"));
  ok(&s, "DROP TABLE IF EXISTS t");
  bad(&s, "DROP TABLE t", EXEC_ERROR, "table T does not exist", NULL);
  ok(&s, "CREATE TABLE t (k INTEGER PRIMARY KEY, a INTEGER)");
  ok(&s, "CREATE INDEX iz ON t (a)"); /* the new T has no rows */
  close_db(&s);
  open_db(&s);
  t = cat_find_table(s.cat, "T");
  assert_non_null(t);
  assert_int_equal(t->n_columns, 2);
  assert_non_null(cat_find_index(t, "IZ"));
  close_db(&s);
  kv_env_free(s.env);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_create_table),
      cmocka_unit_test(test_create_errors),
      cmocka_unit_test(test_drop_and_indexes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
