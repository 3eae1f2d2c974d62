/*
** tests/kv/test_scan.c: what scans hand out, through kv.h on the in-memory env: versions
** (family VERSIONS and the scan's max_versions), every tombstone kind including the
** equal-timestamp rule, TTL against the env clock, time ranges, qualifier projection, the
** filter callback and limits, multi-range (skip) scans and reverse scans, snapshot
** isolation, rows assembled across families, and the per-family metrics (a scan of family
** A reads zero bytes of family B's store files). Each semantic test runs three ways: all in
** the memstore, all in store files, and split between both.
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

#define T0 1700000000000ll /* the mem env's clock at start (ms) */

typedef struct fx {
  kv_env *env;    /* in-memory file system */
  kv_db *db;      /* store */
  uint32_t a, b;  /* family ids of table t: a (VERSIONS 3), b (VERSIONS 1) */
  uint32_t ttl;   /* family id of table ttl_t, TTL 10 s */
  int mode;       /* 0 memstore only, 1 flush after writes, 2 flush halfway */
  int writes;     /* writes so far (mode 2 flushes at the first read) */
} fx;

static fx *fx_new(int mode) {
  fx *f = calloc(1, sizeof *f);
  f->mode = mode;
  f->env = kv_env_mem_new(T0);
  kv_options o;
  kv_options_init(&o);
  o.env = f->env;
  o.create_if_missing = true;
  o.compaction_trigger = 100;
  assert_int_equal(kv_open("/db", &o, &f->db), KV_OK);
  kv_family_options fo[2] = {{.name = "a", .max_versions = 3}, {.name = "b"}};
  assert_int_equal(kv_create_table(f->db, "t", fo, 2), KV_OK);
  assert_int_equal(kv_family_id(f->db, "t", "a", &f->a), KV_OK);
  assert_int_equal(kv_family_id(f->db, "t", "b", &f->b), KV_OK);
  kv_family_options ft = {.name = "f", .ttl_sec = 10, .max_versions = 5};
  assert_int_equal(kv_create_table(f->db, "ttl_t", &ft, 1), KV_OK);
  assert_int_equal(kv_family_id(f->db, "ttl_t", "f", &f->ttl), KV_OK);
  return f;
}

static void fx_free(fx *f) {
  assert_int_equal(kv_close(f->db), KV_OK);
  kv_env_free(f->env);
  free(f);
}

static void op(fx *f, uint32_t fid, int type, const char *row, const char *qual, int64_t ts,
               const char *val) {
  kv_batch *b = kv_batch_new();
  if (type == KV_PUT)
    assert_int_equal(kv_batch_put(b, fid, row, strlen(row), qual, strlen(qual), ts, val,
                                  strlen(val)), KV_OK);
  else
    assert_int_equal(kv_batch_delete(b, fid, type, row, strlen(row), qual, strlen(qual), ts),
                     KV_OK);
  assert_int_equal(kv_commit(f->db, b, NULL), KV_OK);
  kv_batch_free(b);
  f->writes++;
  if (f->mode == 2 && f->writes % 2 == 0) assert_int_equal(kv_flush(f->db, NULL), KV_OK);
}

/* Before reading: put everything in store files in mode 1. */
static void settle(fx *f) {
  if (f->mode == 1) assert_int_equal(kv_flush(f->db, NULL), KV_OK);
}

/* Render a scan as text: "row:fam/qual@ts=val,...;" per row. */
static void render(kv_db *db, const kv_scan_options *so, char *out, size_t cap,
                   kv_scan_metrics *m) {
  kv_scan *s;
  int rc = kv_scan_open(db, so, &s);
  if (rc) fprintf(stderr, "kv_scan_open: %s\n", kv_errmsg());
  assert_int_equal(rc, KV_OK);
  size_t len = 0;
  out[0] = 0;
  kv_row r;
  while ((rc = kv_scan_next(s, &r)) == KV_OK) {
    len += (size_t)snprintf(out + len, cap - len, "%.*s:", (int)r.key_len, (const char *)r.key);
    for (uint32_t i = 0; i < r.n_cells; i++) {
      const kv_cell_view *c = &r.cells[i];
      len += (size_t)snprintf(out + len, cap - len, "%s%u/%.*s@%lld=%.*s", i ? "," : "",
                              c->family_id, (int)c->qual_len, (const char *)c->qual,
                              (long long)c->ts, (int)c->value_len, (const char *)c->value);
    }
    len += (size_t)snprintf(out + len, cap - len, ";");
    assert_true(len < cap);
  }
  assert_int_equal(rc, KV_ERR_NOTFOUND);
  if (m) kv_scan_get_metrics(s, m);
  kv_scan_close(s);
}

static void scan1(fx *f, uint32_t fid, int max_versions, char *out, size_t cap) {
  kv_scan_options so = {0};
  so.family_ids = &fid;
  so.n_families = 1;
  so.max_versions = max_versions;
  render(f->db, &so, out, cap, NULL);
}

/* tmpl with every "%u" replaced by fid. */
static void expand(const char *tmpl, uint32_t fid, char *out, size_t cap) {
  size_t len = 0;
  for (const char *p = tmpl; *p && len + 12 < cap; p++) {
    if (p[0] == '%' && p[1] == 'u') {
      len += (size_t)snprintf(out + len, cap - len, "%u", fid);
      p++;
    } else {
      out[len++] = *p;
    }
  }
  out[len] = 0;
}

static void expect(fx *f, uint32_t fid, int mv, const char *tmpl) {
  char buf[4096], want[1024];
  settle(f);
  scan1(f, fid, mv, buf, sizeof buf);
  expand(tmpl, fid, want, sizeof want);
  assert_string_equal(buf, want);
}
#define EXPECT(f, fid, mv, text) expect(f, fid, mv, text)

static void run_modes(void (*fn)(fx *)) {
  for (int mode = 0; mode < 3; mode++) {
    fx *f = fx_new(mode);
    fn(f);
    fx_free(f);
  }
}

/* ---- versions ---- */
static void versions_body(fx *f) {
  for (int ts = 1; ts <= 5; ts++) {
    char v[8];
    snprintf(v, sizeof v, "v%d", ts);
    op(f, f->a, KV_PUT, "r", "q", ts, v);
    op(f, f->b, KV_PUT, "r", "q", ts, v);
  }
  /* an equal-timestamp put replaces the version */
  op(f, f->a, KV_PUT, "r", "q", 4, "v4b");
  EXPECT(f, f->a, 1, "r:%u/q@5=v5;");
  EXPECT(f, f->a, 10, "r:%u/q@5=v5,%u/q@4=v4b,%u/q@3=v3;"); /* VERSIONS 3 caps */
  EXPECT(f, f->a, 2, "r:%u/q@5=v5,%u/q@4=v4b;");
  EXPECT(f, f->b, 10, "r:%u/q@5=v5;"); /* VERSIONS 1 */
}
static void test_versions(void **state) { run_modes(versions_body); }

/* ---- tombstones ---- */
static void delete_version_body(fx *f) {
  op(f, f->a, KV_PUT, "r", "q", 10, "a");
  op(f, f->a, KV_PUT, "r", "q", 20, "b");
  op(f, f->a, KV_DELETE_VERSION, "r", "q", 20, "");
  EXPECT(f, f->a, 5, "r:%u/q@10=a;");
  op(f, f->a, KV_DELETE_VERSION, "r", "q", 15, ""); /* no version at 15: nothing masked */
  EXPECT(f, f->a, 5, "r:%u/q@10=a;");
  /* a put written after the tombstone at the same timestamp is visible */
  op(f, f->a, KV_PUT, "r", "q", 20, "c");
  EXPECT(f, f->a, 5, "r:%u/q@20=c,%u/q@10=a;");
}
static void test_delete_version(void **state) { run_modes(delete_version_body); }

static void delete_column_body(fx *f) {
  op(f, f->a, KV_PUT, "r", "q", 10, "a");
  op(f, f->a, KV_PUT, "r", "q", 20, "b");
  op(f, f->a, KV_PUT, "r", "q", 30, "c");
  op(f, f->a, KV_PUT, "r", "x", 10, "other");
  op(f, f->a, KV_DELETE_COLUMN, "r", "q", 20, "");
  EXPECT(f, f->a, 5, "r:%u/q@30=c,%u/x@10=other;");
  op(f, f->a, KV_PUT, "r", "q", 20, "again"); /* equal ts, written later: visible */
  op(f, f->a, KV_PUT, "r", "q", 5, "older");  /* lower ts, written later: visible too */
  EXPECT(f, f->a, 5, "r:%u/q@30=c,%u/q@20=again,%u/q@5=older,%u/x@10=other;");
}
static void test_delete_column(void **state) { run_modes(delete_column_body); }

static void delete_family_body(fx *f) {
  op(f, f->a, KV_PUT, "r", "q", 10, "a");
  op(f, f->a, KV_PUT, "r", "x", 30, "b");
  op(f, f->a, KV_PUT, "r", "", 10, "empty-qual");
  op(f, f->b, KV_PUT, "r", "q", 10, "other-family");
  op(f, f->a, KV_PUT, "s", "q", 10, "other-row");
  op(f, f->a, KV_DELETE_FAMILY, "r", "", 20, "");
  EXPECT(f, f->a, 5, "r:%u/x@30=b;s:%u/q@10=other-row;");
  EXPECT(f, f->b, 5, "r:%u/q@10=other-family;");
  op(f, f->a, KV_PUT, "r", "q", 20, "after"); /* equal ts, written later: visible */
  EXPECT(f, f->a, 5, "r:%u/q@20=after,%u/x@30=b;s:%u/q@10=other-row;");
  op(f, f->a, KV_DELETE_FAMILY, "s", "", 10, "");
  EXPECT(f, f->a, 5, "r:%u/q@20=after,%u/x@30=b;");
}
static void test_delete_family(void **state) { run_modes(delete_family_body); }

/* Tombstone and put in one batch: the later op wins. */
static void test_same_batch_order(void **state) {
  fx *f = fx_new(0);
  kv_batch *b = kv_batch_new();
  kv_batch_put(b, f->a, "r", 1, "q", 1, 7, "1", 1);
  kv_batch_delete(b, f->a, KV_DELETE_COLUMN, "r", 1, "q", 1, 7);
  kv_batch_put(b, f->a, "s", 1, "q", 1, 7, "1", 1);
  kv_batch_delete(b, f->a, KV_DELETE_COLUMN, "s", 1, "q", 1, 7);
  kv_batch_put(b, f->a, "s", 1, "q", 1, 7, "2", 1);
  uint64_t seq;
  assert_int_equal(kv_commit(f->db, b, &seq), KV_OK);
  assert_int_equal(seq, kv_last_sequence(f->db));
  kv_batch_free(b);
  EXPECT(f, f->a, 5, "s:%u/q@7=2;");
  fx_free(f);
}

/* ---- TTL and time range ---- */
static void ttl_body(fx *f) {
  op(f, f->ttl, KV_PUT, "r", "q", T0 - 20000, "old");
  op(f, f->ttl, KV_PUT, "r", "q", T0 - 5000, "young");
  op(f, f->ttl, KV_PUT, "s", "q", T0 - 9000, "s");
  EXPECT(f, f->ttl, 5, "r:%u/q@1699999995000=young;s:%u/q@1699999991000=s;");
  kv_env_mem_set_time(f->env, T0 + 2000);
  EXPECT(f, f->ttl, 5, "r:%u/q@1699999995000=young;");
  kv_env_mem_set_time(f->env, T0 + 6000);
  EXPECT(f, f->ttl, 5, "");
}
static void test_ttl(void **state) { run_modes(ttl_body); }

static void test_ts_now_and_time_range(void **state) {
  fx *f = fx_new(0);
  op(f, f->a, KV_PUT, "r", "q", KV_TS_NOW, "now");
  EXPECT(f, f->a, 1, "r:%u/q@1700000000000=now;");
  op(f, f->a, KV_PUT, "r", "q", 100, "a");
  op(f, f->a, KV_PUT, "r", "q", 200, "b");
  kv_scan_options so = {0};
  so.family_ids = &f->a;
  so.n_families = 1;
  so.max_versions = 5;
  so.ts_min = 100;
  so.ts_max = 200;
  char buf[512], want[512];
  render(f->db, &so, buf, sizeof buf, NULL);
  snprintf(want, sizeof want, "r:%u/q@100=a;", f->a);
  assert_string_equal(buf, want);
  so.ts_min = 150;
  so.ts_max = 0; /* no upper bound */
  render(f->db, &so, buf, sizeof buf, NULL);
  snprintf(want, sizeof want, "r:%u/q@1700000000000=now,%u/q@200=b;", f->a, f->a);
  assert_string_equal(buf, want);
  fx_free(f);
}

/* ---- projection, filter, limit ---- */
static bool keep_even(void *ctx, const kv_row *row) {
  int *calls = ctx;
  (*calls)++;
  return (row->key[row->key_len - 1] - '0') % 2 == 0;
}

static void projection_filter_body(fx *f) {
  for (int i = 0; i < 6; i++) {
    char row[16];
    snprintf(row, sizeof row, "r%d", i);
    op(f, f->a, KV_PUT, row, "x", 1, "X");
    op(f, f->a, KV_PUT, row, "y", 1, "Y");
    op(f, f->a, KV_PUT, row, "z", 1, "Z");
  }
  settle(f);
  const uint8_t *quals[2] = {(const uint8_t *)"x", (const uint8_t *)"z"};
  uint32_t lens[2] = {1, 1};
  kv_qualifier_set qs = {f->a, quals, lens, 2};
  int calls = 0;
  kv_scan_options so = {0};
  so.family_ids = &f->a;
  so.n_families = 1;
  so.qualifiers = &qs;
  so.n_qualifier_sets = 1;
  so.filter = keep_even;
  so.filter_ctx = &calls;
  so.limit = 2;
  char buf[512], want[512];
  kv_scan_metrics m;
  render(f->db, &so, buf, sizeof buf, &m);
  snprintf(want, sizeof want, "r0:%u/x@1=X,%u/z@1=Z;r2:%u/x@1=X,%u/z@1=Z;", f->a, f->a, f->a,
           f->a);
  assert_string_equal(buf, want);
  assert_int_equal(calls, 3);
  assert_int_equal(m.rows_examined, 3);
  assert_int_equal(m.rows_filtered, 1);
  assert_int_equal(m.rows_returned, 2);
}
static void test_projection_filter_limit(void **state) { run_modes(projection_filter_body); }

/* ---- ranges and reverse ---- */
static void fill_rows(fx *f, int n) {
  for (int i = 0; i < n; i++) {
    char row[16];
    snprintf(row, sizeof row, "k%02d", i);
    op(f, f->a, KV_PUT, row, "q", 1, row);
  }
  settle(f);
}

static void keys(fx *f, const kv_range *r, uint32_t n, bool reverse, uint64_t limit,
                 char *out, size_t cap, kv_scan_metrics *m) {
  kv_scan_options so = {0};
  so.family_ids = &f->a;
  so.n_families = 1;
  so.ranges = r;
  so.n_ranges = n;
  so.reverse = reverse;
  so.limit = limit;
  kv_scan *s;
  assert_int_equal(kv_scan_open(f->db, &so, &s), KV_OK);
  kv_row row;
  size_t len = 0;
  out[0] = 0;
  while (kv_scan_next(s, &row) == KV_OK)
    len += (size_t)snprintf(out + len, cap - len, "%.*s ", (int)row.key_len,
                            (const char *)row.key);
  if (m) kv_scan_get_metrics(s, m);
  kv_scan_close(s);
}

static size_t slen(const char *s) { return s ? strlen(s) : 0; }
#define R(s, si, e, ei) {(const uint8_t *)(s), slen(s), si, (const uint8_t *)(e), slen(e), ei}

static void ranges_body(fx *f) {
  fill_rows(f, 10);
  char buf[256];
  kv_scan_metrics m;
  kv_range one[1] = {R("k02", true, "k05", false)};
  keys(f, one, 1, false, 0, buf, sizeof buf, NULL);
  assert_string_equal(buf, "k02 k03 k04 ");
  keys(f, one, 1, true, 0, buf, sizeof buf, NULL);
  assert_string_equal(buf, "k04 k03 k02 ");
  kv_range excl[1] = {R("k02", false, "k05", true)};
  keys(f, excl, 1, false, 0, buf, sizeof buf, NULL);
  assert_string_equal(buf, "k03 k04 k05 ");
  keys(f, excl, 1, true, 0, buf, sizeof buf, NULL);
  assert_string_equal(buf, "k05 k04 k03 ");
  kv_range skip[3] = {R("k01", true, "k01", true), R("k03", true, "k05", false),
                      R("k08", true, NULL, false)};
  keys(f, skip, 3, false, 0, buf, sizeof buf, &m);
  assert_string_equal(buf, "k01 k03 k04 k08 k09 ");
  assert_int_equal(m.ranges_sought, 3);
  keys(f, skip, 3, true, 0, buf, sizeof buf, &m);
  assert_string_equal(buf, "k09 k08 k04 k03 k01 ");
  assert_int_equal(m.ranges_sought, 3);
  keys(f, skip, 3, true, 3, buf, sizeof buf, NULL);
  assert_string_equal(buf, "k09 k08 k04 ");
  keys(f, NULL, 0, true, 0, buf, sizeof buf, NULL);
  assert_string_equal(buf, "k09 k08 k07 k06 k05 k04 k03 k02 k01 k00 ");
  kv_range prefix[1] = {R(NULL, true, "k0", false)};
  keys(f, prefix, 1, false, 0, buf, sizeof buf, NULL);
  assert_string_equal(buf, "");
  kv_range empty[1] = {R("k05", true, "k05", false)};
  keys(f, empty, 1, false, 0, buf, sizeof buf, NULL);
  assert_string_equal(buf, "");
}
static void test_ranges_and_reverse(void **state) { run_modes(ranges_body); }

/* Reverse scans with versions and tombstones inside rows, and deleted rows skipped. */
static void reverse_rows_body(fx *f) {
  op(f, f->a, KV_PUT, "a", "q", 1, "a1");
  op(f, f->a, KV_PUT, "a", "q", 2, "a2");
  op(f, f->a, KV_PUT, "b", "q", 1, "b1");
  op(f, f->a, KV_DELETE_FAMILY, "b", "", 5, "");
  op(f, f->a, KV_PUT, "c", "p", 1, "c1");
  op(f, f->a, KV_PUT, "c", "q", 1, "c2");
  settle(f);
  kv_scan_options so = {0};
  so.family_ids = &f->a;
  so.n_families = 1;
  so.max_versions = 2;
  so.reverse = true;
  char buf[512], want[512];
  render(f->db, &so, buf, sizeof buf, NULL);
  snprintf(want, sizeof want, "c:%u/p@1=c1,%u/q@1=c2;a:%u/q@2=a2,%u/q@1=a1;", f->a, f->a,
           f->a, f->a);
  assert_string_equal(buf, want);
}
static void test_reverse_rows(void **state) { run_modes(reverse_rows_body); }

/* ---- families ---- */
static void test_rows_across_families(void **state) {
  fx *f = fx_new(2);
  op(f, f->a, KV_PUT, "r1", "q", 1, "a1");
  op(f, f->b, KV_PUT, "r1", "q", 1, "b1");
  op(f, f->b, KV_PUT, "r2", "q", 1, "b2");
  op(f, f->a, KV_PUT, "r3", "q", 1, "a3");
  uint32_t fams[2] = {f->b, f->a};
  kv_scan_options so = {0};
  so.family_ids = fams;
  so.n_families = 2;
  char buf[512], want[512];
  render(f->db, &so, buf, sizeof buf, NULL);
  snprintf(want, sizeof want, "r1:%u/q@1=b1,%u/q@1=a1;r2:%u/q@1=b2;r3:%u/q@1=a3;", f->b,
           f->a, f->b, f->a);
  assert_string_equal(buf, want);
  so.reverse = true;
  render(f->db, &so, buf, sizeof buf, NULL);
  snprintf(want, sizeof want, "r3:%u/q@1=a3;r2:%u/q@1=b2;r1:%u/q@1=b1,%u/q@1=a1;", f->a,
           f->b, f->b, f->a);
  assert_string_equal(buf, want);
  fx_free(f);
}

static void test_family_isolation_metrics(void **state) {
  fx *f = fx_new(0);
  int n = (int)tu_scaled(2000, 300);
  kv_batch *b = kv_batch_new();
  for (int i = 0; i < n; i++) {
    char row[16];
    snprintf(row, sizeof row, "s%06d", i);
    kv_batch_clear(b);
    kv_batch_put(b, f->a, row, strlen(row), "temp", 4, 1, "21.5", 4);
    kv_batch_put(b, f->b, row, strlen(row), "loc", 3, 1, "somewhere far away", 18);
    assert_int_equal(kv_commit(f->db, b, NULL), KV_OK);
  }
  kv_batch_free(b);
  assert_int_equal(kv_flush(f->db, NULL), KV_OK);
  kv_scan_options so = {0};
  so.family_ids = &f->a;
  so.n_families = 1;
  kv_scan *s;
  kv_env_mem_stats before, after;
  kv_env_mem_get_stats(f->env, &before);
  assert_int_equal(kv_scan_open(f->db, &so, &s), KV_OK);
  kv_row r;
  int cnt = 0;
  while (kv_scan_next(s, &r) == KV_OK) {
    assert_int_equal(r.n_cells, 1);
    assert_int_equal(r.cells[0].family_id, f->a);
    cnt++;
  }
  kv_scan_metrics m;
  kv_scan_get_metrics(s, &m);
  kv_scan_close(s);
  kv_env_mem_get_stats(f->env, &after);
  assert_int_equal(cnt, n);
  assert_int_equal(m.n_families, 1);
  assert_int_equal(m.families[0].family_id, f->a);
  assert_int_equal(m.families[0].files_opened, 1);
  assert_true(m.families[0].bytes_read > 0);
  assert_true(m.families[0].blocks_read > 0);
  assert_int_equal(m.families[0].cells_examined, (uint64_t)n);
  assert_int_equal(m.rows_returned, (uint64_t)n);
  /* family b's store file was not read at all: every byte read was family a's */
  kv_family_stats sa;
  assert_int_equal(kv_family_get_stats(f->db, f->a, &sa), KV_OK);
  assert_true(after.bytes_read - before.bytes_read <= sa.store_file_bytes);
  assert_true(m.families[0].bytes_read <= sa.store_file_bytes);
  /* and a scan of b reads b's bytes, which are more than a's */
  so.family_ids = &f->b;
  assert_int_equal(kv_scan_open(f->db, &so, &s), KV_OK);
  while (kv_scan_next(s, &r) == KV_OK) {}
  kv_scan_get_metrics(s, &m);
  kv_scan_close(s);
  assert_int_equal(m.families[0].family_id, f->b);
  assert_true(m.families[0].bytes_read > 0);
  fx_free(f);
}

/* ---- snapshots ---- */
static void test_snapshot_isolation(void **state) {
  fx *f = fx_new(0);
  op(f, f->a, KV_PUT, "r1", "q", 1, "old");
  kv_scan_options so = {0};
  so.family_ids = &f->a;
  so.n_families = 1;
  kv_scan *s;
  assert_int_equal(kv_scan_open(f->db, &so, &s), KV_OK);
  /* committed after the scan opened: invisible to it, even in rows it has not reached */
  kv_batch *b = kv_batch_new();
  kv_batch_put(b, f->a, "r1", 2, "q", 1, 2, "new", 3);
  kv_batch_put(b, f->a, "r2", 2, "q", 1, 2, "new", 3);
  assert_int_equal(kv_commit(f->db, b, NULL), KV_OK);
  assert_int_equal(kv_flush(f->db, NULL), KV_OK); /* even once flushed */
  kv_row r;
  assert_int_equal(kv_scan_next(s, &r), KV_OK);
  assert_int_equal(r.n_cells, 1);
  assert_memory_equal(r.cells[0].value, "old", 3);
  assert_int_equal(kv_scan_next(s, &r), KV_ERR_NOTFOUND);
  kv_scan_close(s);
  /* an explicit snapshot reads the past */
  uint64_t snap;
  assert_int_equal(kv_snapshot_acquire(f->db, &snap), KV_OK);
  kv_batch_clear(b);
  kv_batch_delete(b, f->a, KV_DELETE_FAMILY, "r1", 2, NULL, 0, 100);
  assert_int_equal(kv_commit(f->db, b, NULL), KV_OK);
  so.snapshot = snap;
  char buf[512], want[512];
  render(f->db, &so, buf, sizeof buf, NULL);
  snprintf(want, sizeof want, "r1:%u/q@2=new;r2:%u/q@2=new;", f->a, f->a);
  assert_string_equal(buf, want);
  so.snapshot = 0;
  render(f->db, &so, buf, sizeof buf, NULL);
  snprintf(want, sizeof want, "r2:%u/q@2=new;", f->a);
  assert_string_equal(buf, want);
  kv_snapshot_release(f->db, snap);
  kv_batch_free(b);
  fx_free(f);
}

static void test_scan_open_at_close(void **state) {
  fx *f = fx_new(1);
  op(f, f->a, KV_PUT, "r1", "q", 1, "v");
  settle(f);
  kv_scan_options so = {0};
  so.family_ids = &f->a;
  so.n_families = 1;
  kv_scan *s;
  assert_int_equal(kv_scan_open(f->db, &so, &s), KV_OK);
  assert_int_equal(kv_close(f->db), KV_OK);
  kv_row r;
  assert_int_equal(kv_scan_next(s, &r), KV_MISUSE);
  assert_non_null(strstr(kv_errmsg(), "closed"));
  kv_scan_close(s);
  kv_env_free(f->env);
  free(f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_versions),
    cmocka_unit_test(test_delete_version),
    cmocka_unit_test(test_delete_column),
    cmocka_unit_test(test_delete_family),
    cmocka_unit_test(test_same_batch_order),
    cmocka_unit_test(test_ttl),
    cmocka_unit_test(test_ts_now_and_time_range),
    cmocka_unit_test(test_projection_filter_limit),
    cmocka_unit_test(test_ranges_and_reverse),
    cmocka_unit_test(test_reverse_rows),
    cmocka_unit_test(test_rows_across_families),
    cmocka_unit_test(test_family_isolation_metrics),
    cmocka_unit_test(test_snapshot_isolation),
    cmocka_unit_test(test_scan_open_at_close),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
