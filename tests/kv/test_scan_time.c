/*
** tests/kv/test_scan_time.c: reads by time through kv.h on the in-memory env: a scan's time
** range skips store files whose trailer timestamps lie before it (always) or at and after
** it (only with ts_per_row, since such a file's tombstones and newer versions may hide
** cells inside the range), counted in files_skipped_ts; and reads as of a timestamp
** (kv_scan_options.as_of): newer puts and tombstones do not exist for them, VERSIONS counts
** back from the as-of time, files wholly newer are not opened, memstore cells obey it too.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "kv/env_mem.h"
#include "kv/kv.h"
#include "testutil.h"

typedef struct fx {
  kv_env *env; /* in-memory file system */
  kv_db *db;   /* store */
  uint32_t a;  /* family a of table t (VERSIONS 1) */
} fx;

static fx *fx_new(void) {
  fx *f = calloc(1, sizeof *f);
  f->env = kv_env_mem_new(1700000000000ll);
  kv_options o;
  kv_options_init(&o);
  o.env = f->env;
  o.create_if_missing = true;
  o.compaction_trigger = 100; /* no automatic compaction: one store file per flush */
  assert_int_equal(kv_open("/db", &o, &f->db), KV_OK);
  kv_family_options fo = {.name = "a", .max_versions = 1};
  assert_int_equal(kv_create_table(f->db, "t", &fo, 1), KV_OK);
  assert_int_equal(kv_family_id(f->db, "t", "a", &f->a), KV_OK);
  return f;
}

static void fx_free(fx *f) {
  assert_int_equal(kv_close(f->db), KV_OK);
  kv_env_free(f->env);
  free(f);
}

static void put(fx *f, const char *row, const char *val, int64_t ts) {
  kv_batch *b = kv_batch_new();
  assert_int_equal(kv_batch_put(b, f->a, row, strlen(row), "q", 1, ts, val, strlen(val)), KV_OK);
  assert_int_equal(kv_commit(f->db, b, NULL), KV_OK);
  kv_batch_free(b);
}

static void del(fx *f, const char *row, int64_t ts) {
  kv_batch *b = kv_batch_new();
  assert_int_equal(kv_batch_delete(b, f->a, KV_DELETE_COLUMN, row, strlen(row), "q", 1, ts),
                   KV_OK);
  assert_int_equal(kv_commit(f->db, b, NULL), KV_OK);
  kv_batch_free(b);
}

static void flush(fx *f) { assert_int_equal(kv_flush(f->db, NULL), KV_OK); }

/* "row=value@ts " per cell of a full scan with so's time fields; *m gets the metrics. */
static void dump(fx *f, const kv_scan_options *time, char *out, size_t cap,
                 kv_scan_metrics *m) {
  kv_scan_options so = *time;
  so.family_ids = &f->a;
  so.n_families = 1;
  kv_scan *s;
  assert_int_equal(kv_scan_open(f->db, &so, &s), KV_OK);
  kv_row r;
  size_t len = 0;
  out[0] = 0;
  while (kv_scan_next(s, &r) == KV_OK)
    for (uint32_t i = 0; i < r.n_cells; i++) {
      len += (size_t)snprintf(out + len, cap - len, "%.*s=%.*s@%lld ", (int)r.key_len,
                              (const char *)r.key, (int)r.cells[i].value_len,
                              (const char *)r.cells[i].value, (long long)r.cells[i].ts);
      assert_true(len < cap);
    }
  kv_scan_get_metrics(s, m);
  kv_scan_close(s);
}

/* Three store files: rows a (ts 100), b (ts 200), c (ts 300), one per file. */
static void three_files(fx *f) {
  put(f, "a", "1", 100);
  flush(f);
  put(f, "b", "2", 200);
  flush(f);
  put(f, "c", "3", 300);
  flush(f);
}

static void test_range_skips_older_files(void **state) {
  (void)state;
  fx *f = fx_new();
  three_files(f);
  char out[256];
  kv_scan_metrics m;
  kv_scan_options so = {0};
  so.ts_min = 150;
  so.ts_max = 250;
  dump(f, &so, out, sizeof out, &m);
  assert_string_equal(out, "b=2@200 ");
  /* the file of a (max 100 < 150) is skipped; the file of c (min 300 >= 250) may hold
     tombstones or newer versions that matter: it is read */
  assert_int_equal(m.families[0].files_skipped_ts, 1);
  assert_int_equal(m.families[0].files_opened, 2);
  /* with ts_per_row both are skipped, and the answer is the same */
  so.ts_per_row = true;
  dump(f, &so, out, sizeof out, &m);
  assert_string_equal(out, "b=2@200 ");
  assert_int_equal(m.families[0].files_skipped_ts, 2);
  assert_int_equal(m.families[0].files_opened, 1);
  /* no time range: every file */
  memset(&so, 0, sizeof so);
  dump(f, &so, out, sizeof out, &m);
  assert_string_equal(out, "a=1@100 b=2@200 c=3@300 ");
  assert_int_equal(m.families[0].files_skipped_ts, 0);
  assert_int_equal(m.families[0].files_opened, 3);
  fx_free(f);
}

/* Why the upper side needs ts_per_row: a newer tombstone (in a file wholly after the range)
** hides the older put inside it; without the promise that file is read and the put stays
** hidden. */
static void test_newer_tombstone_file_is_read(void **state) {
  (void)state;
  fx *f = fx_new();
  put(f, "r", "old", 200);
  flush(f);
  del(f, "r", 300); /* masks the put at 200 */
  flush(f);
  char out[256];
  kv_scan_metrics m;
  kv_scan_options so = {0};
  so.ts_min = 150;
  so.ts_max = 250;
  dump(f, &so, out, sizeof out, &m);
  assert_string_equal(out, "");
  assert_int_equal(m.families[0].files_skipped_ts, 0);
  fx_free(f);
}

static void test_as_of(void **state) {
  (void)state;
  fx *f = fx_new();
  put(f, "r", "v1", 100);
  flush(f);
  put(f, "r", "v2", 200); /* VERSIONS 1 hides v1 now; as of 150 it is the newest */
  flush(f);
  del(f, "r", 300);
  flush(f);
  put(f, "r", "v4", 400); /* in the memstore */
  put(f, "s", "s5", 500);
  char out[256];
  kv_scan_metrics m;
  kv_scan_options so = {0};
  dump(f, &so, out, sizeof out, &m);
  assert_string_equal(out, "r=v4@400 s=s5@500 ");
  so.as_of = 99;
  dump(f, &so, out, sizeof out, &m);
  assert_string_equal(out, "");
  assert_int_equal(m.families[0].files_skipped_ts, 3); /* every file is newer */
  so.as_of = 150;
  dump(f, &so, out, sizeof out, &m);
  assert_string_equal(out, "r=v1@100 ");
  assert_int_equal(m.families[0].files_skipped_ts, 2);
  so.as_of = 200; /* at T: cells at T count */
  dump(f, &so, out, sizeof out, &m);
  assert_string_equal(out, "r=v2@200 ");
  so.as_of = 350; /* the tombstone at 300 applies, the put at 400 does not exist yet */
  dump(f, &so, out, sizeof out, &m);
  assert_string_equal(out, "");
  so.as_of = 450;
  dump(f, &so, out, sizeof out, &m);
  assert_string_equal(out, "r=v4@400 ");
  /* with a time range and versions: as of 250 with max_versions 5 gives v2 only
     (VERSIONS 1 counts back from 250) */
  so.as_of = 250;
  so.max_versions = 5;
  dump(f, &so, out, sizeof out, &m);
  assert_string_equal(out, "r=v2@200 ");
  /* a major compaction drops what VERSIONS and the tombstone hid: v1 and v2 are gone */
  assert_int_equal(kv_compact(f->db, NULL, true), KV_OK);
  dump(f, &so, out, sizeof out, &m);
  assert_string_equal(out, "");
  /* bad input */
  so.as_of = -1;
  so.family_ids = &f->a;
  so.n_families = 1;
  kv_scan *s = NULL;
  assert_int_equal(kv_scan_open(f->db, &so, &s), KV_ERR_INVALID);
  assert_null(s);
  assert_non_null(strstr(kv_errmsg(), "negative as_of -1"));
  fx_free(f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_range_skips_older_files),
      cmocka_unit_test(test_newer_tombstone_file_is_read),
      cmocka_unit_test(test_as_of),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
