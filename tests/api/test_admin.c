/*
** tests/api/test_admin.c: rowan_flush and rowan_compact (include/rowan.h) as an embedding
** program uses them, on the in-memory file system: a flush moves committed rows from the
** memstore into store files (the statement metrics then count store-file blocks) and every
** row reads the same; a major compaction drops deleted rows' cells (fewer cells examined by
** a full scan) and the rows still read the same, also after a reopen; a minor compaction
** keeps the answers; the errors: NULL and unopened handles, a read-only connection.
** rowan_close flushes: the reopen replays nothing and reads store files; a torn record at
** the end of the log is dropped and reported by rowan_recovery_info (bytes and segment).
** Not here: the compaction rules themselves (tests/kv/test_compaction.c).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kv/env/env.h"
#include "kv/env/env_mem.h"
#include "rowan.h"
#include "tu_api.h"

static rowan_db *open_db(kv_env *env, int read_only) {
  rowan_options o;
  rowan_options_init(&o);
  o.kv_env = env;
  o.create_if_missing = 1;
  o.read_only = read_only;
  o.max_lookback_seconds = -1; /* major compaction drops at once (no look-back window) */
  rowan_db *db = NULL;
  int rc = rowan_open("/db", &o, &db);
  if (rc != ROWAN_OK) fprintf(stderr, "open: %s\n", db ? rowan_errmsg(db) : "?");
  assert_int_equal(rc, ROWAN_OK);
  return db;
}

/* Run a one-value query; returns its integer and fills *m with the statement's metrics. */
static int64_t query_int(rowan_db *db, const char *sql, rowan_metrics *m) {
  rowan_stmt *st = NULL;
  assert_int_equal(rowan_prepare(db, sql, -1, &st, NULL), ROWAN_OK);
  assert_int_equal(rowan_step(st), ROWAN_ROW);
  int64_t v = rowan_column_int64(st, 0);
  assert_int_equal(rowan_step(st), ROWAN_DONE);
  if (m) assert_int_equal(rowan_stmt_metrics(st, m), ROWAN_OK);
  rowan_finalize(st);
  return v;
}

static uint64_t blocks(const rowan_metrics *m) {
  uint64_t n = 0;
  for (int i = 0; i < m->n_families; i++) n += m->families[i].blocks_read;
  return n;
}

static uint64_t cells(const rowan_metrics *m) {
  uint64_t n = 0;
  for (int i = 0; i < m->n_families; i++) n += m->families[i].cells_examined;
  return n;
}

static void fill(rowan_db *db, int n) {
  exec_ok(db, "CREATE TABLE t (k INTEGER NOT NULL PRIMARY KEY, v VARCHAR, w DOUBLE)");
  rowan_stmt *ins = NULL;
  assert_int_equal(rowan_prepare(db, "UPSERT INTO t VALUES (?, ?, ?)", -1, &ins, NULL), ROWAN_OK);
  for (int i = 0; i < n; i++) {
    char v[32];
    snprintf(v, sizeof v, "value %d", i);
    assert_int_equal(rowan_bind_int64(ins, 1, i), ROWAN_OK);
    assert_int_equal(rowan_bind_text(ins, 2, v, -1), ROWAN_OK);
    assert_int_equal(rowan_bind_double(ins, 3, i * 0.5), ROWAN_OK);
    assert_int_equal(rowan_step(ins), ROWAN_DONE);
    assert_int_equal(rowan_reset(ins), ROWAN_OK);
  }
  rowan_finalize(ins);
}

#define SUM_SQL "SELECT SUM(k) + COUNT(v) + CAST(SUM(w) AS BIGINT) FROM t"

static void test_flush_moves_rows_to_store_files(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(0);
  rowan_db *db = open_db(env, 0);
  fill(db, 500);
  rowan_metrics m;
  int64_t before = query_int(db, SUM_SQL, &m);
  assert_int_equal(blocks(&m), 0); /* every row is still in the memstore */
  assert_int_equal(rowan_flush(db), ROWAN_OK);
  assert_int_equal(query_int(db, SUM_SQL, &m), before);
  assert_true(blocks(&m) > 0);     /* now read from store files */
  assert_int_equal(rowan_flush(db), ROWAN_OK); /* nothing left to flush: still fine */
  assert_int_equal(rowan_close(db), ROWAN_OK);
  db = open_db(env, 0);
  assert_int_equal(query_int(db, SUM_SQL, NULL), before);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  kv_env_free(env);
}

static void test_compact_drops_deleted_cells(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(0);
  rowan_db *db = open_db(env, 0);
  fill(db, 400);
  assert_int_equal(rowan_flush(db), ROWAN_OK);
  exec_ok(db, "DELETE FROM t WHERE k >= 100");
  exec_ok(db, "UPSERT INTO t (k, v) VALUES (1, 'changed')");
  assert_int_equal(rowan_flush(db), ROWAN_OK);
  rowan_metrics m;
  int64_t want = query_int(db, SUM_SQL, &m);
  uint64_t cells_before = cells(&m);
  assert_int_equal(query_int(db, "SELECT COUNT(*) FROM t", NULL), 100);
  assert_int_equal(rowan_compact(db, 0), ROWAN_OK); /* minor: same answers */
  assert_int_equal(query_int(db, SUM_SQL, NULL), want);
  assert_int_equal(rowan_compact(db, 1), ROWAN_OK); /* major: deleted cells are gone */
  assert_int_equal(query_int(db, SUM_SQL, &m), want);
  assert_true(cells(&m) < cells_before);
  assert_int_equal(query_int(db, "SELECT COUNT(*) FROM t WHERE v = 'changed'", NULL), 1);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  db = open_db(env, 0);
  assert_int_equal(query_int(db, SUM_SQL, NULL), want);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  kv_env_free(env);
}

static void test_errors(void **state) {
  (void)state;
  assert_int_equal(rowan_flush(NULL), ROWAN_MISUSE);
  assert_int_equal(rowan_compact(NULL, 1), ROWAN_MISUSE);
  kv_env *env = kv_env_mem_new(0);
  rowan_db *db = open_db(env, 0);
  fill(db, 10);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  db = open_db(env, 1); /* read-only: maintenance is a write */
  int rc = rowan_flush(db);
  assert_int_equal(rc, ROWAN_READONLY);
  assert_non_null(strstr(rowan_errmsg(db), "flush failed"));
  assert_int_equal(rowan_compact(db, 1), ROWAN_READONLY);
  assert_int_equal(query_int(db, "SELECT COUNT(*) FROM t", NULL), 10);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  /* A handle whose open failed: misuse, not a crash. */
  rowan_options o;
  rowan_options_init(&o);
  o.kv_env = env;
  o.create_if_missing = 0;
  rowan_db *bad = NULL;
  assert_int_not_equal(rowan_open("/missing", &o, &bad), ROWAN_OK);
  if (bad) {
    assert_int_equal(rowan_flush(bad), ROWAN_MISUSE);
    assert_int_equal(rowan_compact(bad, 0), ROWAN_MISUSE);
    rowan_close(bad);
  }
  kv_env_free(env);
}

/* The newest wal-N.log of /db (the highest N) into path. */
typedef struct newest { uint64_t n; char path[64]; } newest;
static int note_wal(void *ctx, const char *name) {
  newest *w = ctx;
  if (strncmp(name, "wal-", 4) != 0) return 0;
  uint64_t n = strtoull(name + 4, NULL, 10);
  if (n >= w->n) {
    w->n = n;
    snprintf(w->path, sizeof w->path, "/db/%s", name);
  }
  return 0;
}

static void test_close_flushes_and_torn_tail(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(0);
  rowan_db *db = open_db(env, 0);
  fill(db, 300);
  int64_t want = query_int(db, SUM_SQL, NULL);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  /* the close flushed: nothing to replay, the rows come from store files */
  db = open_db(env, 0);
  rowan_recovery rec;
  assert_int_equal(rowan_recovery_info(db, &rec), ROWAN_OK);
  assert_int_equal(rec.replayed_records, 0);
  assert_int_equal(rec.dropped_bytes, 0);
  assert_string_equal(rec.dropped_segment, "");
  rowan_metrics m;
  assert_int_equal(query_int(db, SUM_SQL, &m), want);
  assert_true(blocks(&m) > 0);
  exec_ok(db, "UPSERT INTO t VALUES (1000, 'late', 1.0)");
  want = query_int(db, SUM_SQL, NULL);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  /* a record cut short at the end of the newest segment (a crash mid-write): dropped, said */
  newest w = {0, ""};
  assert_int_equal(env->list(env, "/db", note_wal, &w), KV_OK);
  assert_true(w.path[0] != 0);
  kv_file *f = NULL;
  assert_int_equal(env->open(env, w.path, KV_OPEN_WRITE, &f), KV_OK);
  const uint8_t torn[13] = {0x40, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  assert_int_equal(env->append(f, torn, sizeof torn), KV_OK);
  assert_int_equal(env->sync(f), KV_OK);
  env->close(f);
  db = open_db(env, 0);
  assert_int_equal(rowan_recovery_info(db, &rec), ROWAN_OK);
  assert_int_equal(rec.dropped_bytes, sizeof torn);
  assert_string_equal(rec.dropped_segment, w.path);
  assert_int_equal(query_int(db, SUM_SQL, NULL), want); /* every committed row is there */
  assert_int_equal(rowan_close(db), ROWAN_OK);
  db = open_db(env, 0); /* the tail was truncated away: the next open drops nothing */
  assert_int_equal(rowan_recovery_info(db, &rec), ROWAN_OK);
  assert_int_equal(rec.dropped_bytes, 0);
  assert_int_equal(rowan_recovery_info(NULL, &rec), ROWAN_MISUSE);
  assert_int_equal(rowan_recovery_info(db, NULL), ROWAN_MISUSE);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  kv_env_free(env);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_flush_moves_rows_to_store_files),
      cmocka_unit_test(test_compact_drops_deleted_cells),
      cmocka_unit_test(test_errors),
      cmocka_unit_test(test_close_flushes_and_torn_tail),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
