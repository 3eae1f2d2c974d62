/*
** tests/kv/test_scan_time.c: reads by time through kv.h on the in-memory env: a scan's time
** range skips store files whose trailer timestamps lie before it (always) or at and after
** it (only with ts_per_row, since such a file's tombstones and newer versions may hide
** cells inside the range), counted in files_skipped_ts; and reads as of a timestamp
** (kv_scan_options.as_of): newer puts and tombstones do not exist for them, VERSIONS counts
** back from the as-of time, files wholly newer are not opened, memstore cells obey it too;
** and major compaction's look-back window (kv_options.max_lookback_ms): every cell newer
** than now - window is kept (versions beyond VERSIONS, tombstones, the puts they mask),
** below it what a read as of the cutoff sees, so reads as of times inside it are unchanged;
** kv_lookback_horizon says from when.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "kv/env/env_mem.h"
#include "kv/kv.h"
#include "testutil.h"

typedef struct fx {
  kv_env *env; /* in-memory file system */
  kv_db *db;   /* store */
  uint32_t a;  /* family a of table t (VERSIONS 1) */
} fx;

#define T0 1700000000000ll

static fx *fx_new_window(int64_t lookback_ms) {
  fx *f = calloc(1, sizeof *f);
  f->env = kv_env_mem_new(T0);
  kv_options o;
  kv_options_init(&o);
  o.env = f->env;
  o.create_if_missing = true;
  o.max_lookback_ms = lookback_ms;
  o.compaction_trigger = 100; /* no automatic compaction: one store file per flush */
  assert_int_equal(kv_open("/db", &o, &f->db), KV_OK);
  kv_family_options fo = {.name = "a", .max_versions = 1};
  assert_int_equal(kv_create_table(f->db, "t", &fo, 1), KV_OK);
  assert_int_equal(kv_family_id(f->db, "t", "a", &f->a), KV_OK);
  return f;
}

static fx *fx_new(void) { return fx_new_window(0); }

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

/* A history around the cutoff T0 - 1000 of a 1 s window: v1 long before it, v2 and a
** tombstone inside it, then the latest put. */
static void window_history(fx *f) {
  put(f, "r", "v0", T0 - 9000);
  put(f, "r", "v1", T0 - 5000);
  flush(f);
  put(f, "r", "v2", T0 - 500);
  del(f, "r", T0 - 200);
  flush(f);
  put(f, "r", "v3", T0 - 100);
  flush(f);
}

/* Reads as of these times, joined: "v1|v2||v3" for as of T0-2000, -300, -150, now. */
static void reads(fx *f, char *out, size_t cap) {
  static const int64_t at[] = {T0 - 2000, T0 - 300, T0 - 150, 0};
  size_t len = 0;
  out[0] = 0;
  for (int i = 0; i < 4; i++) {
    kv_scan_options so = {0};
    so.as_of = at[i];
    char one[128];
    kv_scan_metrics m;
    dump(f, &so, one, sizeof one, &m);
    len += (size_t)snprintf(out + len, cap - len, "%s%s", i ? "|" : "", one);
  }
}

static void test_compaction_keeps_the_window(void **state) {
  (void)state;
  fx *f = fx_new_window(1000);
  window_history(f);
  char before[512], after[512];
  reads(f, before, sizeof before);
  assert_string_equal(before, "r=v1@1699999995000 |r=v2@1699999999500 ||r=v3@1699999999900 ");
  assert_int_equal(kv_lookback_horizon(f->db), T0 - 1000);
  assert_int_equal(kv_compact(f->db, NULL, true), KV_OK);
  reads(f, after, sizeof after);
  assert_string_equal(after, before);
  kv_family_stats st;
  assert_int_equal(kv_family_get_stats(f->db, f->a, &st), KV_OK);
  assert_int_equal(st.cells, 4); /* v1 (the cutoff's view), v2, the tombstone, v3; not v0 */
  /* later, the window has moved past v2 and the tombstone: a new major compaction keeps
     only what a read as of the new cutoff sees (v3), and the horizon moves with it */
  kv_env_mem_set_time(f->env, T0 + 10000);
  assert_int_equal(kv_compact(f->db, NULL, true), KV_OK);
  assert_int_equal(kv_family_get_stats(f->db, f->a, &st), KV_OK);
  assert_int_equal(st.cells, 1);
  assert_int_equal(kv_lookback_horizon(f->db), T0 + 9000);
  fx_free(f);
}

/* A put written after a tombstone, at an older timestamp the tombstone covers, is not
** masked (kv.h: a tombstone never masks a later write); both are inside the window, so the
** compaction keeps both and must keep their order (sequence numbers): the put stays. */
static void test_window_keeps_write_order(void **state) {
  (void)state;
  fx *f = fx_new_window(1000);
  put(f, "r", "old", T0 - 400);
  del(f, "r", T0 - 200);
  put(f, "r", "again", T0 - 300); /* after the delete, below its timestamp */
  put(f, "s", "s1", T0 - 300);
  flush(f);
  char before[256], after[256];
  kv_scan_metrics m;
  kv_scan_options so = {0};
  so.max_versions = 5;
  dump(f, &so, before, sizeof before, &m);
  assert_string_equal(before, "r=again@1699999999700 s=s1@1699999999700 ");
  assert_int_equal(kv_compact(f->db, NULL, true), KV_OK);
  dump(f, &so, after, sizeof after, &m);
  assert_string_equal(after, before);
  so.as_of = T0 - 350; /* before the delete and the second put: the first put */
  dump(f, &so, after, sizeof after, &m);
  assert_string_equal(after, "r=old@1699999999600 ");
  fx_free(f);
}

/* Cells equal but for their sequence numbers (a put replaced at its timestamp; a put at a
** tombstone's own timestamp written after it) inside the window: kept in order, and the
** read is unchanged (a regression: zeroing their sequence numbers broke the file order). */
static void test_window_equal_timestamps(void **state) {
  (void)state;
  fx *f = fx_new_window(1000);
  put(f, "r", "first", T0 - 100);
  put(f, "r", "second", T0 - 100); /* replaces it: one version */
  del(f, "s", T0 - 100);
  put(f, "s", "after", T0 - 100); /* after the tombstone: not masked */
  flush(f);
  char before[256], after[256];
  kv_scan_metrics m;
  kv_scan_options so = {0};
  dump(f, &so, before, sizeof before, &m);
  assert_string_equal(before, "r=second@1699999999900 s=after@1699999999900 ");
  assert_int_equal(kv_compact(f->db, NULL, true), KV_OK);
  dump(f, &so, after, sizeof after, &m);
  assert_string_equal(after, before);
  fx_free(f);
}

/* Tombstones of the window that mask nothing (an UPSERT's NULL into a new row writes one per
** NULL column) are dropped by the major compaction; those with a put under them are kept,
** and every read as of a time inside the window is unchanged. */
static void test_window_drops_lone_tombstones(void **state) {
  (void)state;
  fx *f = fx_new_window(1000);
  del(f, "a", T0 - 500); /* masks nothing: row a never had the column */
  put(f, "b", "b1", T0 - 600);
  del(f, "b", T0 - 400); /* masks b1 */
  del(f, "c", T0 - 300); /* nothing under it (c's put comes later, above it) */
  put(f, "c", "c1", T0 - 200);
  kv_batch *b = kv_batch_new(); /* a DeleteFamily alone in its row, and one over a put */
  assert_int_equal(kv_batch_delete(b, f->a, KV_DELETE_FAMILY, "d", 1, NULL, 0, T0 - 300), KV_OK);
  assert_int_equal(kv_batch_put(b, f->a, "e", 1, "q", 1, T0 - 700, "e1", 2), KV_OK);
  assert_int_equal(kv_commit(f->db, b, NULL), KV_OK);
  kv_batch_free(b);
  b = kv_batch_new();
  assert_int_equal(kv_batch_delete(b, f->a, KV_DELETE_FAMILY, "e", 1, NULL, 0, T0 - 350), KV_OK);
  assert_int_equal(kv_commit(f->db, b, NULL), KV_OK);
  kv_batch_free(b);
  flush(f);
  static const int64_t at[] = {T0 - 650, T0 - 450, T0 - 250, T0 - 100, 0};
  char before[5][256], after[256];
  kv_scan_metrics m;
  for (int i = 0; i < 5; i++) {
    kv_scan_options so = {0};
    so.as_of = at[i];
    dump(f, &so, before[i], sizeof before[i], &m);
  }
  assert_string_equal(before[0], "e=e1@1699999999300 ");
  assert_string_equal(before[1], "b=b1@1699999999400 e=e1@1699999999300 ");
  assert_string_equal(before[2], ""); /* b1 and e1 masked, c1 not written yet */
  assert_string_equal(before[3], "c=c1@1699999999800 ");
  assert_string_equal(before[4], "c=c1@1699999999800 ");
  assert_int_equal(kv_compact(f->db, NULL, true), KV_OK);
  for (int i = 0; i < 5; i++) {
    kv_scan_options so = {0};
    so.as_of = at[i];
    dump(f, &so, after, sizeof after, &m);
    assert_string_equal(after, before[i]);
  }
  kv_family_stats st;
  assert_int_equal(kv_family_get_stats(f->db, f->a, &st), KV_OK);
  assert_int_equal(st.cells, 5); /* b1 and its tombstone, c1, e1 and its DeleteFamily */
  /* c1, alone in its column, lost its sequence number: a later write at its timestamp
     still replaces it, and a later tombstone masks it, before and after a flush */
  put(f, "c", "c2", T0 - 200);
  kv_scan_options so = {0};
  dump(f, &so, after, sizeof after, &m);
  assert_string_equal(after, "c=c2@1699999999800 ");
  flush(f);
  dump(f, &so, after, sizeof after, &m);
  assert_string_equal(after, "c=c2@1699999999800 ");
  del(f, "c", T0 - 200);
  dump(f, &so, after, sizeof after, &m);
  assert_string_equal(after, "");
  fx_free(f);
}

static void test_compaction_without_window(void **state) {
  (void)state;
  fx *f = fx_new();
  window_history(f);
  assert_int_equal(kv_lookback_horizon(f->db), T0); /* no window: nothing of the past */
  assert_int_equal(kv_compact(f->db, NULL, true), KV_OK);
  char after[512];
  reads(f, after, sizeof after); /* the past is gone: only v3 is left */
  assert_string_equal(after, "|||r=v3@1699999999900 ");
  fx_free(f);
}

static void test_bad_window(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(T0);
  kv_options o;
  kv_options_init(&o);
  o.env = env;
  o.create_if_missing = true;
  o.max_lookback_ms = -1;
  kv_db *db = NULL;
  assert_int_equal(kv_open("/db", &o, &db), KV_ERR_INVALID);
  assert_non_null(strstr(kv_errmsg(), "negative max_lookback_ms -1"));
  kv_env_free(env);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_range_skips_older_files),
      cmocka_unit_test(test_newer_tombstone_file_is_read),
      cmocka_unit_test(test_as_of),
      cmocka_unit_test(test_compaction_keeps_the_window),
      cmocka_unit_test(test_window_keeps_write_order),
      cmocka_unit_test(test_window_equal_timestamps),
      cmocka_unit_test(test_window_drops_lone_tombstones),
      cmocka_unit_test(test_compaction_without_window),
      cmocka_unit_test(test_bad_window),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
