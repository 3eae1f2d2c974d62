/*
** tests/exec/test_parallel_regions.c: a parallel scan cut at region boundaries (issue 23).
** The table is created through the row-atomic backend (kv/backend/backend_rowatomic.h, HBase's
** guarantees) with split keys at K = 1000, 2000 and 3000 (its regions; the SQL layer's own
** SPLIT ON is not used here: the backend's create_table gets them from the test's wrapper),
** and nothing is flushed, so the local store under it gives no block-index cut point: the
** scan's chunks are the regions and only them. Checked: EXPLAIN's chunk count follows the
** regions the key ranges touch (4 for a full scan, 2 for K in [1500, 2500), none for a
** range inside one region), and every query's answer with 4 threads equals its serial
** answer, in order.
** Not here: chunks at block-index cut points (tests/sql/parallel_scan.test,
** tests/api/test_parallel_scan.c).
*/
#include "test_engine_util.h"

#include "catalog/keycodec.h"
#include "exec/parallel.h"
#include "kv/backend/backend_rowatomic.h"

static kv_backend_ops split_ops;       /* the row-atomic backend's, create_table wrapped */
static const kv_backend_ops *rw_ops_of; /* its own */
static bool give_splits;               /* the next user table gets the split keys */
static uint8_t split_key[3][8];        /* K = 1000, 2000, 3000 encoded */
static uint32_t split_len[3];

static int create_with_splits(kv_backend *be, const char *name, const kv_family_options *f,
                              int n, const uint8_t *const *keys, const uint32_t *lens,
                              uint32_t n_keys) {
  if (give_splits && n_keys == 0) {
    give_splits = false;
    const uint8_t *k[3] = {split_key[0], split_key[1], split_key[2]};
    return rw_ops_of->create_table(be, name, f, n, k, split_len, 3);
  }
  return rw_ops_of->create_table(be, name, f, n, keys, lens, n_keys);
}

static void encode_splits(void) {
  cat_key_col col = {cat_type_of(CAT_T_INTEGER), false, false};
  for (int i = 0; i < 3; i++) {
    cat_value v = cat_v_int(CAT_T_INTEGER, 1000 * (i + 1));
    size_t len = 0;
    cat_error e;
    assert_int_equal(cat_key_encode(&col, 1, &v, split_key[i], sizeof split_key[i], &len, &e),
                     CAT_OK);
    split_len[i] = (uint32_t)len;
  }
}

static void regions(void **state) {
  (void)state;
  encode_splits();
  tdb *t = tdb_open();
  assert_int_equal(exec_session_close(t->s), EXEC_OK);
  t->s = NULL;
  kv_backend *rw = NULL;
  assert_int_equal(kv_backend_rowatomic_open(t->db, &rw), KV_OK);
  rw_ops_of = rw->ops;
  split_ops = *rw->ops;
  split_ops.create_table = create_with_splits;
  kv_backend wrapped = *rw;
  wrapped.ops = &split_ops;
  assert_int_equal(exec_session_open_backend(t->db, &wrapped, &t->s, &t->err), EXEC_OK);
  give_splits = true;
  q(t, "CREATE TABLE T (K INTEGER NOT NULL PRIMARY KEY, G INTEGER, V INTEGER, S VARCHAR)");
  assert_false(give_splits); /* the table took them */
  for (int k = 0; k < 4000; k += 50) {
    char buf[8192] = "UPSERT INTO T VALUES ";
    size_t len = strlen(buf);
    for (int i = k; i < k + 50; i++)
      len += (size_t)snprintf(buf + len, sizeof buf - len, "%s(%d, %d, %d, 's%d')",
                              i > k ? ", " : "", i, i % 7, (i * 37) % 1001 - 400, i % 13);
    q(t, buf);
  }
  assert_int_equal(exec_set_parallel(t->s, 4, 0, &t->err), EXEC_OK);
  /* the chunks are the regions the ranges touch */
  assert_non_null(strstr(explain(t, "EXPLAIN SELECT * FROM T"), "CLIENT 4-CHUNK PARALLEL 4-WAY"));
  assert_non_null(strstr(explain(t, "EXPLAIN SELECT * FROM T WHERE K >= 1500 AND K < 2500"),
                         "CLIENT 2-CHUNK PARALLEL 2-WAY"));
  assert_non_null(strstr(explain(t, "EXPLAIN SELECT * FROM T WHERE K >= 2100 AND K < 2900"),
                         "CLIENT 1-CHUNK SERIAL"));
  static const char *const qs[] = {
      "SELECT * FROM T",
      "SELECT K, V FROM T WHERE V > 500",
      "SELECT * FROM T WHERE K >= 1500 AND K < 2500 AND G = 3",
      "SELECT K FROM T WHERE K IN (5, 999, 1000, 2000, 2999, 3000) OR K > 3990",
      "SELECT * FROM T LIMIT 5 OFFSET 998",
      "SELECT K, V FROM T ORDER BY V DESC, K LIMIT 12",
      "SELECT K, V FROM T WHERE K > 500 ORDER BY V, K",
      "SELECT G, COUNT(*), SUM(V), MIN(S), MAX(V), AVG(V) FROM T GROUP BY G ORDER BY G",
      "SELECT COUNT(*), SUM(V) FROM T WHERE V + G > 100",
      "SELECT DISTINCT S FROM T",
  };
  for (size_t i = 0; i < sizeof qs / sizeof *qs; i++) {
    assert_int_equal(exec_set_parallel(t->s, 1, 0, &t->err), EXEC_OK);
    char *serial = strdup(q(t, qs[i]));
    assert_int_equal(exec_set_parallel(t->s, 4, 0, &t->err), EXEC_OK);
    const char *par = q(t, qs[i]);
    if (strcmp(serial, par) != 0)
      fail_msg("%s: 4 threads over the regions answer otherwise than 1 thread", qs[i]);
    free(serial);
  }
  assert_int_equal(exec_session_close(t->s), EXEC_OK);
  t->s = NULL;
  kv_backend_rowatomic_close(rw);
  kv_close(t->db);
  kv_env_free(t->env);
  free(t->out);
  free(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(regions)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
