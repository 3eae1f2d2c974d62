/*
** tests/catalog/test_alter.c: ALTER TABLE in the catalog (cat_alter_table, catalog/catalog.h)
** over kv/ on the in-memory env: columns added and dropped, a new family made on first use,
** column ids never given twice (a column added again under a dropped name has a new cell
** qualifier), options set in the catalog and in the store, everything kept across reopen;
** errors change nothing; a crash between the store's change and the catalog's commit ends
** with the catalog's options; a major compaction removes a dropped column's cells, also
** after a reopen, and keeps the cells of a view's own columns (ids of the table) until the
** view drops them; cat_table_def_from keeps the ids a drop left. (test_catalog.c sweeps
** faults and power cuts through an ALTER.)
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "catalog/cat_view.h"
#include "catalog/catalog.h"
#include "kv/env/env_mem.h"
#include "testutil.h"
#include "tu_cat.h"

/* T (K INTEGER PRIMARY KEY, A VARCHAR, META.B INTEGER), META with VERSIONS 2. */
static const cat_column_def t_cols[] = {{"K", NULL, {CAT_T_INTEGER, 0, 0, 0, 0}, 0},
                                        {"A", NULL, {CAT_T_VARCHAR, 0, 0, 0, 0}, 0},
                                        {"B", "META", {CAT_T_INTEGER, 0, 0, 0, 0}, 0}};
static const char *const t_pk[] = {"K"};
static const cat_family_def t_fams[] = {{"META", 2, KV_COMPRESSION_LZ4, 0}};

static void create_t(store *s) {
  cat_table_def d;
  memset(&d, 0, sizeof d);
  d.name = "T";
  d.columns = t_cols;
  d.n_columns = 3;
  d.pk = t_pk;
  d.n_pk = 1;
  d.families = t_fams;
  d.n_families = 1;
  cat_error err = {0};
  assert_int_equal(cat_create_table(s->cat, &d, NULL, &err), CAT_OK);
}

static int alter(store *s, const char *const *drop, int n_drop, const cat_column_def *add,
                 int n_add, cat_error *err) {
  cat_alter_def d = {drop, n_drop, add, n_add, NULL, 0, -1, -1};
  return cat_alter_table(s->cat, "T", &d, err);
}

static uint16_t id_of(const cat_table *t, const char *col) {
  int c = cat_find_column(t, col);
  assert_true(c >= 0);
  return t->columns[c].id;
}

static void test_add_drop_reopen(void **state) {
  (void)state;
  store s = {kv_env_mem_new(0), NULL, NULL};
  open_store(&s);
  create_t(&s);
  const cat_table *t = cat_find_table(s.cat, "T");
  uint16_t a_id = id_of(t, "A"), b_id = id_of(t, "B");
  assert_int_equal(t->next_column_id, 3);
  static const cat_column_def add[] = {{"C", "EXTRA", {CAT_T_DOUBLE, 0, 0, 0, 0}, 0},
                                       {"D", NULL, {CAT_T_VARCHAR, 0, 0, 10, 0}, 1}};
  cat_error err = {0};
  assert_int_equal(alter(&s, NULL, 0, add, 2, &err), CAT_OK);
  t = cat_find_table(s.cat, "T");
  assert_int_equal(t->n_columns, 5);
  assert_int_equal(id_of(t, "C"), 3);
  assert_int_equal(id_of(t, "D"), 4);
  int ex = cat_find_family(t, "EXTRA");
  assert_true(ex > 0);
  assert_int_equal(t->columns[cat_find_column(t, "C")].family, ex);
  assert_int_equal(t->families[ex].max_versions, 1);
  uint32_t kid;
  assert_int_equal(kv_family_id(s.db, t->kv_name, "EXTRA", &kid), KV_OK);
  assert_int_equal(kid, t->families[ex].kv_id);
  static const char *const drop_a[] = {"A"};
  assert_int_equal(alter(&s, drop_a, 1, NULL, 0, &err), CAT_OK);
  close_store(&s);

  open_store(&s);
  t = cat_find_table(s.cat, "T");
  assert_int_equal(t->n_columns, 4);
  assert_true(cat_find_column(t, "A") < 0);
  assert_int_equal(id_of(t, "B"), b_id);
  assert_true(t->columns[cat_find_column(t, "D")].type.length == 10);
  assert_int_equal(t->next_column_id, 5);
  /* A again, as an INTEGER: a new id, never the dropped one's. */
  static const cat_column_def add_a[] = {{"A", NULL, {CAT_T_INTEGER, 0, 0, 0, 0}, 0}};
  assert_int_equal(alter(&s, NULL, 0, add_a, 1, &err), CAT_OK);
  t = cat_find_table(s.cat, "T");
  assert_int_equal(id_of(t, "A"), 5);
  assert_int_not_equal(id_of(t, "A"), a_id);
  close_store(&s);
  kv_env_free(s.env);
}

static void test_errors_change_nothing(void **state) {
  (void)state;
  store s = {kv_env_mem_new(0), NULL, NULL};
  open_store(&s);
  create_t(&s);
  uint32_t n_fam_before = 0;
  const cat_table *t = cat_find_table(s.cat, "T");
  assert_int_equal(kv_table_families(s.db, t->kv_name, NULL, 0, &n_fam_before), KV_OK);
  cat_error err = {0};
  static const char *const drop_k[] = {"K"}, *const drop_x[] = {"X"}, *const drop_ab[] = {"B", "K"};
  assert_int_equal(alter(&s, drop_k, 1, NULL, 0, &err), CAT_ERR_INVALID);
  assert_non_null(strstr(err.msg, "PRIMARY KEY"));
  assert_int_equal(alter(&s, drop_x, 1, NULL, 0, &err), CAT_ERR_NOTFOUND);
  assert_int_equal(alter(&s, drop_ab, 2, NULL, 0, &err), CAT_ERR_INVALID); /* B went first */
  static const cat_column_def dup[] = {{"A", "NEWFAM", {CAT_T_INTEGER, 0, 0, 0, 0}, 0}};
  assert_int_equal(alter(&s, NULL, 0, dup, 1, &err), CAT_ERR_EXISTS);
  static const cat_column_def nn[] = {{"Z", "NEWFAM", {CAT_T_INTEGER, 0, 0, 0, 0}, 2}};
  assert_int_equal(alter(&s, NULL, 0, nn, 1, &err), CAT_ERR_INVALID);
  static const cat_column_def twice[] = {{"Z", "NEWFAM", {CAT_T_INTEGER, 0, 0, 0, 0}, 0},
                                         {"Z", NULL, {CAT_T_INTEGER, 0, 0, 0, 0}, 0}};
  assert_int_equal(alter(&s, NULL, 0, twice, 2, &err), CAT_ERR_EXISTS);
  static const cat_column_def resv[] = {{"Z", "_X", {CAT_T_INTEGER, 0, 0, 0, 0}, 0}};
  assert_int_equal(alter(&s, NULL, 0, resv, 1, &err), CAT_ERR_INVALID);
  static const cat_family_set nofam[] = {{"NOPE", 3, -1, 0}};
  cat_alter_def d = {NULL, 0, NULL, 0, nofam, 1, -1, -1};
  assert_int_equal(cat_alter_table(s.cat, "T", &d, &err), CAT_ERR_NOTFOUND);
  assert_int_equal(cat_alter_table(s.cat, "NOSUCH", &d, &err), CAT_ERR_NOTFOUND);
  /* Nothing changed, in the catalog nor in the store, and nothing after a reopen. */
  for (int round = 0; round < 2; round++) {
    t = cat_find_table(s.cat, "T");
    assert_int_equal(t->n_columns, 3);
    assert_int_equal(t->n_families, 3);
    assert_int_equal(t->next_column_id, 3);
    assert_true(cat_find_column(t, "B") >= 0);
    uint32_t n_fam = 0;
    assert_int_equal(kv_table_families(s.db, t->kv_name, NULL, 0, &n_fam), KV_OK);
    assert_int_equal(n_fam, n_fam_before);
    close_store(&s);
    open_store(&s);
  }
  close_store(&s);
  kv_env_free(s.env);
}

static void check_options(kv_db *db, const cat_table *t, const char *fam, int versions,
                          int compression, uint32_t block, int64_t ttl) {
  int f = cat_find_family(t, fam);
  assert_true(f >= 0);
  assert_int_equal(t->families[f].max_versions, versions);
  assert_int_equal(t->families[f].compression, compression);
  assert_int_equal(t->families[f].block_size, block);
  assert_true(t->families[f].ttl_sec == ttl);
  kv_family_options o;
  assert_int_equal(kv_family_info(db, t->families[f].kv_id, &o), KV_OK);
  assert_int_equal(o.max_versions, versions);
  assert_int_equal(o.compression, compression);
  assert_int_equal(o.block_size, block ? block : KV_DEFAULT_BLOCK_SIZE);
  assert_true(o.ttl_sec == ttl);
}

static void test_set_options(void **state) {
  (void)state;
  store s = {kv_env_mem_new(0), NULL, NULL};
  open_store(&s);
  create_t(&s);
  static const cat_family_set set[] = {{"META", 5, KV_COMPRESSION_NONE, 8192}, {"0", 0, -1, 4096}};
  cat_alter_def d = {NULL, 0, NULL, 0, set, 2, 3600, 1};
  cat_error err = {0};
  assert_int_equal(cat_alter_table(s.cat, "T", &d, &err), CAT_OK);
  for (int round = 0; round < 2; round++) {
    const cat_table *t = cat_find_table(s.cat, "T");
    assert_true(t->ttl_sec == 3600);
    assert_true(t->immutable_rows);
    check_options(s.db, t, "META", 5, KV_COMPRESSION_NONE, 8192, 3600);
    check_options(s.db, t, "0", 1, KV_COMPRESSION_LZ4, 4096, 3600);
    check_options(s.db, t, CAT_KEY_FAMILY, 1, KV_COMPRESSION_LZ4, 0, 3600);
    close_store(&s);
    open_store(&s);
  }
  close_store(&s);
  kv_env_free(s.env);
}

/* A crash after kv_alter_table and before the catalog's commit: the store has options the
** catalog never committed (and a family it does not name); the next open gives the store
** the catalog's options again. */
static void test_catalog_options_win(void **state) {
  (void)state;
  store s = {kv_env_mem_new(0), NULL, NULL};
  open_store(&s);
  create_t(&s);
  const cat_table *t = cat_find_table(s.cat, "T");
  kv_family_options fo[2] = {{"META", 9, 60, KV_COMPRESSION_NONE, 1024},
                             {"LOST", 1, 0, KV_COMPRESSION_LZ4, 0}};
  assert_int_equal(kv_alter_table(s.db, t->kv_name, fo, 2), KV_OK);
  close_store(&s);
  open_store(&s);
  t = cat_find_table(s.cat, "T");
  check_options(s.db, t, "META", 2, KV_COMPRESSION_LZ4, 0, 0);
  assert_true(cat_find_family(t, "LOST") < 0);
  /* the retried ALTER takes the family the store already has */
  static const cat_column_def add[] = {{"L", "LOST", {CAT_T_INTEGER, 0, 0, 0, 0}, 0}};
  cat_error err = {0};
  assert_int_equal(alter(&s, NULL, 0, add, 1, &err), CAT_OK);
  t = cat_find_table(s.cat, "T");
  uint32_t id;
  assert_int_equal(kv_family_id(s.db, t->kv_name, "LOST", &id), KV_OK);
  assert_int_equal(t->families[cat_find_family(t, "LOST")].kv_id, id);
  close_store(&s);
  kv_env_free(s.env);
}

/* Put cells of column ids 1 (A) and 2 (B) in rows r0..r9 of T. */
static void put_cells(store *s) {
  const cat_table *t = cat_find_table(s->cat, "T");
  uint32_t f0 = t->families[cat_find_family(t, "0")].kv_id;
  uint32_t fm = t->families[cat_find_family(t, "META")].kv_id;
  kv_batch *b = kv_batch_new();
  for (int i = 0; i < 10; i++) {
    char row[4] = {'r', (char)('0' + i), 0, 0};
    assert_int_equal(kv_batch_put(b, f0, row, 2, "\x01", 1, KV_TS_NOW, "a", 1), KV_OK);
    assert_int_equal(kv_batch_put(b, fm, row, 2, "\x02", 1, KV_TS_NOW, "bb", 2), KV_OK);
  }
  assert_int_equal(kv_commit(s->db, b, NULL), KV_OK);
  kv_batch_free(b);
}

/* Cells of family `fam` of T with qualifier q (one byte), at every version. */
static int count_cells(store *s, const char *fam, uint8_t q) {
  const cat_table *t = cat_find_table(s->cat, "T");
  uint32_t fid = t->families[cat_find_family(t, fam)].kv_id;
  kv_scan_options so;
  memset(&so, 0, sizeof so);
  so.family_ids = &fid;
  so.n_families = 1;
  kv_scan *sc = NULL;
  assert_int_equal(kv_scan_open(s->db, &so, &sc), KV_OK);
  kv_row row;
  int n = 0, rc;
  while ((rc = kv_scan_next(sc, &row)) == KV_OK)
    for (uint32_t i = 0; i < row.n_cells; i++)
      if (row.cells[i].qual_len == 1 && row.cells[i].qual[0] == q) n++;
  assert_int_equal(rc, KV_ERR_NOTFOUND);
  kv_scan_close(sc);
  return n;
}

static void test_compaction_removes_dropped(void **state) {
  (void)state;
  store s = {kv_env_mem_new(0), NULL, NULL};
  open_store(&s);
  create_t(&s);
  put_cells(&s);
  assert_int_equal(kv_flush(s.db, NULL), KV_OK);
  static const char *const drop_a[] = {"A"};
  cat_error err = {0};
  assert_int_equal(alter(&s, drop_a, 1, NULL, 0, &err), CAT_OK);
  const cat_table *t = cat_find_table(s.cat, "T");
  assert_int_equal(count_cells(&s, "0", 1), 10); /* dropped, not yet compacted */
  assert_int_equal(kv_compact(s.db, t->kv_name, false), KV_OK);
  assert_int_equal(count_cells(&s, "0", 1), 10); /* a minor compaction keeps everything */
  close_store(&s);
  open_store(&s); /* the list of dropped qualifiers is given again at open */
  t = cat_find_table(s.cat, "T");
  assert_int_equal(kv_compact(s.db, t->kv_name, true), KV_OK);
  assert_int_equal(count_cells(&s, "0", 1), 0);
  assert_int_equal(count_cells(&s, "META", 2), 10); /* B's cells stay */
  /* B dropped too, in the same session: its cells go at the next major compaction. */
  static const char *const drop_b[] = {"B"};
  assert_int_equal(alter(&s, drop_b, 1, NULL, 0, &err), CAT_OK);
  t = cat_find_table(s.cat, "T");
  assert_int_equal(kv_compact(s.db, t->kv_name, true), KV_OK);
  assert_int_equal(count_cells(&s, "META", 2), 0);
  close_store(&s);
  kv_env_free(s.env);
}

/* Columns of a view's own over T (catalog/cat_view.h) hold ids of T: their cells are not a
** dropped column's, across ALTER TABLE DROP COLUMN (which gives the dropped list again) and
** a reopen; ALTER VIEW DROP COLUMN and DROP VIEW make theirs dropped. */
static void test_compaction_keeps_view_columns(void **state) {
  (void)state;
  store s = {kv_env_mem_new(0), NULL, NULL};
  open_store(&s);
  create_t(&s);
  static const cat_column_def vcols[] = {{"N", NULL, {CAT_T_INTEGER, 0, 0, 0, 0}, 0},
                                         {"M", NULL, {CAT_T_VARCHAR, 0, 0, 0, 0}, 0}};
  const char *deps[] = {"T"};
  const char *text = "CREATE VIEW VX (N INTEGER, M VARCHAR) AS SELECT * FROM T";
  cat_error err = {0};
  assert_int_equal(cat_create_view_columns(s.cat, "VX", text, deps, 1, vcols, 2, &err), CAT_OK);
  const cat_view *v = cat_find_view(s.cat, "VX");
  assert_int_equal(v->columns[0].id, 3);
  assert_int_equal(v->columns[1].id, 4);
  const cat_table *t = cat_find_table(s.cat, "T");
  uint32_t f0 = t->families[cat_find_family(t, "0")].kv_id;
  kv_batch *b = kv_batch_new();
  for (int i = 0; i < 10; i++) {
    char row[2] = {'r', (char)('0' + i)};
    assert_int_equal(kv_batch_put(b, f0, row, 2, "\x01", 1, KV_TS_NOW, "a", 1), KV_OK);
    assert_int_equal(kv_batch_put(b, f0, row, 2, "\x03", 1, KV_TS_NOW, "n", 1), KV_OK);
    assert_int_equal(kv_batch_put(b, f0, row, 2, "\x04", 1, KV_TS_NOW, "m", 1), KV_OK);
  }
  assert_int_equal(kv_commit(s.db, b, NULL), KV_OK);
  kv_batch_free(b);
  assert_int_equal(kv_flush(s.db, NULL), KV_OK);
  static const char *const drop_a[] = {"A"};
  assert_int_equal(alter(&s, drop_a, 1, NULL, 0, &err), CAT_OK);
  t = cat_find_table(s.cat, "T");
  assert_int_equal(kv_compact(s.db, t->kv_name, true), KV_OK);
  assert_int_equal(count_cells(&s, "0", 1), 0);  /* A's */
  assert_int_equal(count_cells(&s, "0", 3), 10); /* the view's stay */
  assert_int_equal(count_cells(&s, "0", 4), 10);
  close_store(&s);
  open_store(&s);
  t = cat_find_table(s.cat, "T");
  assert_int_equal(kv_compact(s.db, t->kv_name, true), KV_OK);
  assert_int_equal(count_cells(&s, "0", 3), 10);
  const char *drop_n[] = {"N"};
  assert_int_equal(cat_alter_view(s.cat, "VX", "CREATE VIEW VX (M VARCHAR) AS SELECT * FROM T",
                                  NULL, 0, drop_n, 1, &err), CAT_OK);
  t = cat_find_table(s.cat, "T");
  assert_int_equal(kv_compact(s.db, t->kv_name, true), KV_OK);
  assert_int_equal(count_cells(&s, "0", 3), 0);
  assert_int_equal(count_cells(&s, "0", 4), 10);
  const char *vx[] = {"VX"};
  assert_int_equal(cat_drop_views(s.cat, vx, 1, &err), CAT_OK);
  t = cat_find_table(s.cat, "T");
  assert_int_equal(kv_compact(s.db, t->kv_name, true), KV_OK);
  assert_int_equal(count_cells(&s, "0", 4), 0);
  close_store(&s);
  kv_env_free(s.env);
}

/* After a DROP COLUMN the ids have a gap: a definition taken from the table keeps them. */
static void test_def_from_keeps_ids(void **state) {
  (void)state;
  store s = {kv_env_mem_new(0), NULL, NULL}, s2 = {kv_env_mem_new(0), NULL, NULL};
  open_store(&s);
  open_store(&s2);
  create_t(&s);
  static const char *const drop_a[] = {"A"};
  static const cat_column_def add_c[] = {{"C", NULL, {CAT_T_INTEGER, 0, 0, 0, 0}, 0}};
  cat_error err = {0};
  assert_int_equal(alter(&s, drop_a, 1, add_c, 1, &err), CAT_OK);
  const cat_table *t = cat_find_table(s.cat, "T"), *t2 = NULL;
  cat_table_def def;
  assert_int_equal(cat_table_def_from(t, &def, &err), CAT_OK);
  assert_int_equal(cat_create_table(s2.cat, &def, &t2, &err), CAT_OK);
  cat_table_def_free(&def);
  assert_int_equal(id_of(t2, "B"), id_of(t, "B"));
  assert_int_equal(id_of(t2, "C"), 3);
  assert_int_equal(t2->next_column_id, t->next_column_id);
  close_store(&s);
  close_store(&s2);
  kv_env_free(s.env);
  kv_env_free(s2.env);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_add_drop_reopen),       cmocka_unit_test(test_errors_change_nothing),
      cmocka_unit_test(test_set_options),           cmocka_unit_test(test_catalog_options_win),
      cmocka_unit_test(test_compaction_removes_dropped), cmocka_unit_test(test_def_from_keeps_ids),
      cmocka_unit_test(test_compaction_keeps_view_columns),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
