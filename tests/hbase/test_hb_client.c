/*
** tests/hbase/test_hb_client.c: the Thrift2 client (kv/backend/hbase/hb_client.h) against a
** real HBase 2.6.1 and its Thrift2 gateway (scripts/hbase-up.sh; ROWAN_HBASE_THRIFT=host:port,
** default 127.0.0.1:9090). CTest label `hbase`, built only with ROWAN_HBASE=ON; it fails, never
** skips, when no gateway answers.
** - a table with two families and two split keys has three regions with those boundaries; a
**   second create is KV_ERR_EXISTS; unsorted, duplicate or empty split keys are refused
**   before any call, naming the key;
** - randomized rows (seeded) written with putMultiple read back through get, forward and
**   reverse scans (whole, bounded, limited, one family) across the regions, equal to a
**   sorted model;
** - explicit timestamps: the newest wins whatever the order written, a repeated write reads as
**   one (idempotent), older versions are readable with max_versions;
** - check-and-put: insert-if-absent applies once; an equal value applies, another does not;
**   an empty expected value and cells of another row are refused;
** - delete of a row, drop of the table (then KV_ERR_NOTFOUND), a closed port's KV_ERR_IO
**   naming the address.
** Not here: the SQL layer on HBase (the backend is issue 18's next step).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "kv/backend/hbase/hb_client.h"
#include "kv/kv.h"
#include "testutil.h"

#define NS "rowan_test"

static char host[256] = "127.0.0.1";
static int port = 9090;

static void gateway_address(void) {
  const char *e = getenv("ROWAN_HBASE_THRIFT");
  if (!e || !*e) return;
  const char *colon = strrchr(e, ':');
  size_t hl = colon ? (size_t)(colon - e) : strlen(e);
  if (hl >= sizeof host) hl = sizeof host - 1;
  memcpy(host, e, hl);
  host[hl] = 0;
  if (colon) port = atoi(colon + 1);
}

static hb_client *connect_or_fail(void) {
  hb_client *c = NULL;
  int rc = hb_open(host, port, 60000, &c);
  if (rc) fail_msg("no Thrift2 gateway at %s:%d (scripts/hbase-up.sh): %s", host, port, kv_errmsg());
  assert_int_equal(hb_ensure_namespace(c, NS), KV_OK);
  return c;
}

/* A table name no other run uses. */
static void fresh_name(char *buf, size_t n, const char *what) {
  snprintf(buf, n, "%s_%ld_%ld", what, (long)getpid(), (long)time(NULL));
}

static hb_bytes B(const char *s) { return (hb_bytes){(const uint8_t *)s, strlen(s)}; }

static int bytes_cmp(hb_bytes a, hb_bytes b) {
  size_t m = a.n < b.n ? a.n : b.n;
  int d = m ? memcmp(a.p, b.p, m) : 0;
  return d ? d : (a.n < b.n ? -1 : a.n > b.n);
}

static void test_regions_and_bad_splits(void **state) {
  (void)state;
  hb_client *c = connect_or_fail();
  char name[96];
  fresh_name(name, sizeof name, "regions");
  const char *fams[] = {"d", "k"};
  hb_bytes splits[] = {B("g"), B("p")};
  assert_int_equal(hb_create_table(c, NS, name, fams, 2, 3, splits, 2), KV_OK);
  bool ex = false;
  assert_int_equal(hb_table_exists(c, NS, name, &ex), KV_OK);
  assert_true(ex);
  hb_region *r = NULL;
  size_t n = 0;
  assert_int_equal(hb_regions(c, NS, name, &r, &n), KV_OK);
  assert_int_equal(n, 3);
  assert_int_equal(r[0].start_len, 0);
  assert_int_equal(bytes_cmp((hb_bytes){r[0].end, r[0].end_len}, B("g")), 0);
  assert_int_equal(bytes_cmp((hb_bytes){r[1].start, r[1].start_len}, B("g")), 0);
  assert_int_equal(bytes_cmp((hb_bytes){r[1].end, r[1].end_len}, B("p")), 0);
  assert_int_equal(bytes_cmp((hb_bytes){r[2].start, r[2].start_len}, B("p")), 0);
  assert_int_equal(r[2].end_len, 0);
  assert_non_null(strchr(r[0].server, ':'));
  hb_regions_free(r, n);
  /* a second create */
  assert_int_equal(hb_create_table(c, NS, name, fams, 2, 1, NULL, 0), KV_ERR_EXISTS);
  /* bad split keys: refused before the call, naming the key */
  char other[96];
  fresh_name(other, sizeof other, "badsplit");
  hb_bytes unsorted[] = {B("p"), B("g")};
  assert_int_equal(hb_create_table(c, NS, other, fams, 2, 1, unsorted, 2), KV_ERR_INVALID);
  assert_non_null(strstr(kv_errmsg(), "split key 1 is not above split key 0"));
  hb_bytes dup[] = {B("g"), B("g")};
  assert_int_equal(hb_create_table(c, NS, other, fams, 2, 1, dup, 2), KV_ERR_INVALID);
  hb_bytes empty[] = {B("g"), B("")};
  assert_int_equal(hb_create_table(c, NS, other, fams, 2, 1, empty, 2), KV_ERR_INVALID);
  assert_non_null(strstr(kv_errmsg(), "split key 1 is empty"));
  assert_int_equal(hb_create_table(c, NS, other, fams, 0, 1, NULL, 0), KV_ERR_INVALID);
  assert_int_equal(hb_table_exists(c, NS, other, &ex), KV_OK);
  assert_false(ex);
  assert_int_equal(hb_drop_table(c, NS, name), KV_OK);
  assert_int_equal(hb_table_exists(c, NS, name, &ex), KV_OK);
  assert_false(ex);
  assert_int_equal(hb_drop_table(c, NS, name), KV_ERR_NOTFOUND);
  hb_close(c);
}

/* The model: NROWS rows "r%05u" (a random subset of the key space), each with a value in
** family d and one in family k. */
enum { SPACE = 3000, NROWS = 600 };
typedef struct mrow {
  char key[16];
  char dval[32], kval[32];
} mrow;

static int mrow_cmp(const void *a, const void *b) {
  return strcmp(((const mrow *)a)->key, ((const mrow *)b)->key);
}

/* Check one row read back against the model row. */
static void check_row(const hb_row *got, const mrow *want, bool both) {
  assert_int_equal(bytes_cmp((hb_bytes){got->key, got->key_len}, B(want->key)), 0);
  assert_int_equal(got->ncells, both ? 2 : 1);
  assert_int_equal(bytes_cmp(got->cells[0].family, B("d")), 0);
  assert_int_equal(bytes_cmp(got->cells[0].value, B(want->dval)), 0);
  if (both) {
    assert_int_equal(bytes_cmp(got->cells[1].family, B("k")), 0);
    assert_int_equal(bytes_cmp(got->cells[1].value, B(want->kval)), 0);
  }
}

/* Scan [lo, hi) of the model (indexes) through spec and compare, in the scan's order. */
static void scan_and_check(hb_client *c, const char *name, const hb_scan_spec *spec,
                           const mrow *m, size_t lo, size_t hi, bool reverse, bool both) {
  hb_scanner *s = NULL;
  assert_int_equal(hb_scan_open(c, NS, name, spec, &s), KV_OK);
  hb_row row = {0};
  size_t got = 0, want = hi - lo;
  for (;;) {
    bool done = false;
    assert_int_equal(hb_scan_next(s, &row, &done), KV_OK);
    if (done) break;
    assert_true(got < want);
    size_t i = reverse ? hi - 1 - got : lo + got;
    check_row(&row, &m[i], both);
    got++;
  }
  assert_int_equal(got, want);
  hb_row_free(&row);
  hb_scan_close(s);
}

static size_t lower_bound(const mrow *m, size_t n, const char *key) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (strcmp(m[mid].key, key) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

static void test_rows_across_regions(void **state) {
  (void)state;
  uint64_t seed = tu_seed("hb_rows");
  hb_client *c = connect_or_fail();
  char name[96];
  fresh_name(name, sizeof name, "rows");
  const char *fams[] = {"d", "k"};
  hb_bytes splits[] = {B("r01000"), B("r02000")};
  assert_int_equal(hb_create_table(c, NS, name, fams, 2, 3, splits, 2), KV_OK);
  /* NROWS distinct keys out of SPACE */
  mrow *m = calloc(NROWS, sizeof *m);
  unsigned char *used = calloc(SPACE, 1);
  for (size_t i = 0; i < NROWS; i++) {
    unsigned k;
    do k = (unsigned)tu_below(&seed, SPACE); while (used[k]);
    used[k] = 1;
    snprintf(m[i].key, sizeof m[i].key, "r%05u", k);
    snprintf(m[i].dval, sizeof m[i].dval, "d%llu", (unsigned long long)tu_rand(&seed));
    snprintf(m[i].kval, sizeof m[i].kval, "k%llu", (unsigned long long)tu_below(&seed, 1000));
  }
  /* written in the model's random order, in batches of 100 rows */
  hb_put *cells = calloc(2 * NROWS, sizeof *cells);
  for (size_t i = 0; i < NROWS; i++) {
    cells[2 * i] = (hb_put){B(m[i].key), B("d"), B("v"), B(m[i].dval), 1000};
    cells[2 * i + 1] = (hb_put){B(m[i].key), B("k"), B("v"), B(m[i].kval), 1000};
  }
  for (size_t i = 0; i < NROWS; i += 100)
    assert_int_equal(hb_put_cells(c, NS, name, cells + 2 * i, 200), KV_OK);
  qsort(m, NROWS, sizeof *m, mrow_cmp);
  /* gets: every 7th row, and absent keys */
  hb_row row = {0};
  bool found = false;
  for (size_t i = 0; i < NROWS; i += 7) {
    assert_int_equal(hb_get(c, NS, name, B(m[i].key), NULL, 0, &row, &found), KV_OK);
    assert_true(found);
    check_row(&row, &m[i], true);
  }
  for (unsigned k = 0; k < SPACE; k += 97) {
    if (used[k]) continue;
    char key[16];
    snprintf(key, sizeof key, "r%05u", k);
    assert_int_equal(hb_get(c, NS, name, B(key), NULL, 0, &row, &found), KV_OK);
    assert_false(found);
  }
  hb_row_free(&row);
  /* whole scans, forward and reverse, small caching so several round trips are made */
  hb_scan_spec all = {.caching = 37};
  scan_and_check(c, name, &all, m, 0, NROWS, false, true);
  hb_scan_spec rall = {.caching = 41, .reverse = true};
  scan_and_check(c, name, &rall, m, 0, NROWS, true, true);
  /* bounded ranges that cross region boundaries: [r00800, r02400) */
  size_t lo = lower_bound(m, NROWS, "r00800"), hi = lower_bound(m, NROWS, "r02400");
  hb_scan_spec mid = {.start = B("r00800"), .stop = B("r02400"), .caching = 50};
  scan_and_check(c, name, &mid, m, lo, hi, false, true);
  /* reverse: from the high key (inclusive) down to the low one (exclusive) */
  char high[16];
  snprintf(high, sizeof high, "%s", m[hi - 1].key);
  hb_scan_spec rmid = {.start = B(high), .stop = B(m[lo].key), .reverse = true};
  scan_and_check(c, name, &rmid, m, lo + 1, hi, true, true);
  /* a limit, and one family only */
  hb_scan_spec lim = {.start = B("r01500"), .limit = 25, .caching = 10};
  size_t l0 = lower_bound(m, NROWS, "r01500");
  scan_and_check(c, name, &lim, m, l0, l0 + 25 <= NROWS ? l0 + 25 : NROWS, false, true);
  hb_bytes fam_d = B("d");
  hb_scan_spec one = {.families = &fam_d, .nfamilies = 1};
  scan_and_check(c, name, &one, m, 0, NROWS, false, false);
  /* delete a row: gone from gets and scans */
  assert_int_equal(hb_delete_row(c, NS, name, B(m[3].key), NULL, -1), KV_OK);
  assert_int_equal(hb_get(c, NS, name, B(m[3].key), NULL, 0, &row, &found), KV_OK);
  assert_false(found);
  memmove(&m[3], &m[4], (NROWS - 4) * sizeof *m);
  scan_and_check(c, name, &all, m, 0, NROWS - 1, false, true);
  assert_int_equal(hb_drop_table(c, NS, name), KV_OK);
  free(cells);
  free(used);
  free(m);
  hb_close(c);
}

static void test_timestamps_and_check_and_put(void **state) {
  (void)state;
  hb_client *c = connect_or_fail();
  char name[96];
  fresh_name(name, sizeof name, "ts");
  const char *fams[] = {"d"};
  assert_int_equal(hb_create_table(c, NS, name, fams, 1, 5, NULL, 0), KV_OK);
  /* newer timestamp written first: it still wins */
  hb_put a = {B("row1"), B("d"), B("q"), B("newer"), 500};
  hb_put b = {B("row1"), B("d"), B("q"), B("older"), 300};
  assert_int_equal(hb_put_cells(c, NS, name, &a, 1), KV_OK);
  assert_int_equal(hb_put_cells(c, NS, name, &b, 1), KV_OK);
  assert_int_equal(hb_put_cells(c, NS, name, &a, 1), KV_OK); /* a retried write */
  hb_row row = {0};
  bool found = false;
  assert_int_equal(hb_get(c, NS, name, B("row1"), NULL, 0, &row, &found), KV_OK);
  assert_true(found);
  assert_int_equal(row.ncells, 1);
  assert_int_equal(bytes_cmp(row.cells[0].value, B("newer")), 0);
  assert_int_equal(row.cells[0].ts, 500);
  /* all versions: exactly two (the retry wrote no third) */
  hb_scan_spec v = {.max_versions = 5};
  hb_scanner *s = NULL;
  assert_int_equal(hb_scan_open(c, NS, name, &v, &s), KV_OK);
  bool done = false;
  assert_int_equal(hb_scan_next(s, &row, &done), KV_OK);
  assert_false(done);
  assert_int_equal(row.ncells, 2);
  assert_int_equal(row.cells[0].ts, 500);
  assert_int_equal(row.cells[1].ts, 300);
  assert_int_equal(bytes_cmp(row.cells[1].value, B("older")), 0);
  assert_int_equal(hb_scan_next(s, &row, &done), KV_OK);
  assert_true(done);
  hb_scan_close(s);
  /* a time range [0, 400): the older version only */
  hb_scan_spec tr = {.min_ts = 0, .max_ts = 400};
  assert_int_equal(hb_scan_open(c, NS, name, &tr, &s), KV_OK);
  assert_int_equal(hb_scan_next(s, &row, &done), KV_OK);
  assert_false(done);
  assert_int_equal(bytes_cmp(row.cells[0].value, B("older")), 0);
  hb_scan_close(s);
  /* check-and-put: insert if absent, once */
  hb_put g1 = {B("seq"), B("d"), B("next"), B("1"), 10};
  bool applied = false;
  assert_int_equal(hb_check_and_put(c, NS, name, B("seq"), B("d"), B("next"), NULL, &g1, 1,
                                    &applied),
                   KV_OK);
  assert_true(applied);
  assert_int_equal(hb_check_and_put(c, NS, name, B("seq"), B("d"), B("next"), NULL, &g1, 1,
                                    &applied),
                   KV_OK);
  assert_false(applied);
  /* compare-and-set 1 -> 2, then a stale 1 -> 3 fails */
  hb_bytes one = B("1");
  hb_put g2 = {B("seq"), B("d"), B("next"), B("2"), 11};
  assert_int_equal(hb_check_and_put(c, NS, name, B("seq"), B("d"), B("next"), &one, &g2, 1,
                                    &applied),
                   KV_OK);
  assert_true(applied);
  hb_put g3 = {B("seq"), B("d"), B("next"), B("3"), 12};
  assert_int_equal(hb_check_and_put(c, NS, name, B("seq"), B("d"), B("next"), &one, &g3, 1,
                                    &applied),
                   KV_OK);
  assert_false(applied);
  assert_int_equal(hb_get(c, NS, name, B("seq"), NULL, 0, &row, &found), KV_OK);
  assert_int_equal(bytes_cmp(row.cells[0].value, B("2")), 0);
  /* refused: an empty expected value, a cell of another row, bad cells */
  hb_bytes emptyv = B("");
  assert_int_equal(hb_check_and_put(c, NS, name, B("seq"), B("d"), B("next"), &emptyv, &g2, 1,
                                    &applied),
                   KV_ERR_INVALID);
  assert_int_equal(hb_check_and_put(c, NS, name, B("other"), B("d"), B("next"), NULL, &g2, 1,
                                    &applied),
                   KV_ERR_INVALID);
  assert_non_null(strstr(kv_errmsg(), "cell 0 is of another row"));
  hb_put neg = {B("x"), B("d"), B("q"), B("v"), -1};
  assert_int_equal(hb_put_cells(c, NS, name, &neg, 1), KV_ERR_INVALID);
  assert_non_null(strstr(kv_errmsg(), "cell 0 has a negative timestamp"));
  hb_put nofam = {B("x"), B(""), B("q"), B("v"), 1};
  assert_int_equal(hb_put_cells(c, NS, name, &nofam, 1), KV_ERR_INVALID);
  /* a family the table does not have: HBase's own error, and the connection stays usable */
  hb_put badfam = {B("x"), B("nosuch"), B("q"), B("v"), 1};
  assert_int_not_equal(hb_put_cells(c, NS, name, &badfam, 1), KV_OK);
  assert_int_equal(hb_get(c, NS, name, B("seq"), NULL, 0, &row, &found), KV_OK);
  assert_true(found);
  hb_row_free(&row);
  assert_int_equal(hb_drop_table(c, NS, name), KV_OK);
  hb_close(c);
}

static void test_bad_addresses(void **state) {
  (void)state;
  hb_client *c = NULL;
  assert_int_equal(hb_open("127.0.0.1", 1, 2000, &c), KV_ERR_IO);
  assert_null(c);
  assert_non_null(strstr(kv_errmsg(), "cannot connect to 127.0.0.1:1"));
  assert_int_equal(hb_open("", 9090, 0, &c), KV_ERR_INVALID);
  assert_int_equal(hb_open("127.0.0.1", 70000, 0, &c), KV_ERR_INVALID);
  assert_non_null(strstr(kv_errmsg(), "port 70000"));
  /* a missing table */
  c = connect_or_fail();
  hb_row row = {0};
  bool found = true;
  assert_int_equal(hb_get(c, NS, "no_such_table_here", B("k"), NULL, 0, &row, &found),
                   KV_ERR_NOTFOUND);
  assert_non_null(strstr(kv_errmsg(), "no table rowan_test:no_such_table_here"));
  assert_false(found);
  hb_put p = {B("k"), B("d"), B("q"), B("v"), 1};
  /* a put's error is HBase's RetriesExhaustedWithDetailsException, naming the table */
  assert_int_equal(hb_put_cells(c, NS, "no_such_table_here", &p, 1), KV_ERR_IO);
  assert_non_null(strstr(kv_errmsg(), "rowan_test:no_such_table_here"));
  hb_scanner *s = NULL;
  hb_scan_spec all = {0};
  /* a scanner on a missing table opens (HBase opens it lazily); its first rows fail */
  assert_int_equal(hb_scan_open(c, NS, "no_such_table_here", &all, &s), KV_OK);
  bool done = false;
  assert_int_equal(hb_scan_next(s, &row, &done), KV_ERR_NOTFOUND);
  assert_non_null(strstr(kv_errmsg(), "no table rowan_test:no_such_table_here"));
  hb_scan_close(s);
  hb_close(c);
}

int main(void) {
  gateway_address();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_bad_addresses),
      cmocka_unit_test(test_regions_and_bad_splits),
      cmocka_unit_test(test_rows_across_regions),
      cmocka_unit_test(test_timestamps_and_check_and_put),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
