/*
** tests/hbase/test_hbase_multirange.c: scans of several key ranges on HBase read by ONE
** scanner under a MultiRowRangeFilter sent as protobuf (TScan.filterBytes;
** kv/backend/hbase/backend_hbase_filter.c), and value filters on reverse scans, against a
** real HBase and its Thrift2 gateway (ROWAN_HBASE_THRIFT=host:port, default 127.0.0.1:9090;
** CTest label `hbase`; fails, never skips, without a gateway). Each test works in its own
** namespace and drops it at the end.
** - the backend: a table of 3,000 two-byte keys (every byte value from 0x00 to 0xFF among
**   them) and a few odd keys ("\0", "\xff\xff\xff"), in four regions cut at binary split
**   keys, and the local store's backend holding the same rows; sets of ranges (120 one-key
**   ranges, some of absent keys; empty ranges: start above end, start equal to an exclusive
**   end; ranges whose bounds hold 0x00 and 0xFF bytes; ranges across region boundaries; an
**   open first start and an open last end) read forward and reverse, with one and two
**   families, with and without a value filter, a limit and a resume key, give the same rows
**   and cells on both; HBase opened one scanner for each multi-range scan
**   (hb_scan_opens) except a reverse one whose last range has no end (one per range: the
**   reversed MultiRowRangeFilter of HBase 2.6.1 returns wrong rows below such a range); a value
**   filter ran on the region servers (no row rejected on the client), reverse scans of two
**   families included (HBase refused them before: "Reverse scan with loading CFs on demand");
** - SQL: an IN list of 120 keys and IN on the first key column with BETWEEN on the second and
**   a value condition, forward and ORDER BY ... DESC, on a table SPLIT ON into three regions,
**   answer as the local store does, with at most one scanner per region (and one per key
**   with ROWAN_HBASE_NO_MULTI_RANGE=1, the old way, same answers).
** Not here: the filter language route (test_backend_hbase.c), scans cut by a failure
** (test_fault_gateway.c).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "kv/backend.h"
#include "kv/backend/hbase/backend_hbase.h"
#include "kv/backend/hbase/hb_client.h"
#include "kv/env/env_mem.h"
#include "kv/kv.h"
#include "rowan.h"
#include "testutil.h"
#include "tu_kv.h"

static char gateway[300] = "127.0.0.1:9090";

static void uri_of(char *buf, size_t n, const char *what) {
  static int k;
  snprintf(buf, n, "hbase://%s/tm_%s_%ld_%d", gateway, what, (long)getpid(), ++k);
}

/* ---- The backend ----------------------------------------------------------------------- */
#define NROWS 3000

typedef struct pair {
  kv_backend *be[2]; /* 0: local, 1: hbase */
  uint32_t fid[2][2]; /* [side][family a, b] */
} pair;

typedef struct rng_set {
  const char *name;
  kv_range r[130];
  uint32_t n;
  uint32_t nonempty; /* ranges that can hold a key */
  uint8_t kb[130][2][4]; /* the bounds' bytes */
} rng_set;

static void key2(int i, uint8_t *k) {
  unsigned v = (unsigned)i * 21u;
  k[0] = (uint8_t)(v >> 8);
  k[1] = (uint8_t)v;
}

static void add_range(rng_set *s, const void *lo, uint32_t ll, bool li, const void *hi, uint32_t hl,
                      bool hinc, bool empty) {
  uint32_t i = s->n++;
  if (lo) memcpy(s->kb[i][0], lo, ll);
  if (hi) memcpy(s->kb[i][1], hi, hl);
  s->r[i] = (kv_range){lo ? s->kb[i][0] : NULL, ll, li, hi ? s->kb[i][1] : NULL, hl, hinc};
  if (!empty) s->nonempty++;
}

/* Read the scan on both sides; compare; the scanners HBase opened into *opens and its
** metrics into *m. */
static void compare(pair *p, const rng_set *rs, int nf, bool reverse, const kv_filter_expr *fx,
                    uint64_t limit, const uint8_t *resume, uint32_t resume_len, uint64_t *opens,
                    kv_scan_metrics *m, uint64_t *rows) {
  kv_backend_scan *sc[2];
  uint64_t before = hb_scan_opens();
  uint64_t n = 0;
  kv_fx_node nodes[2][4];
  kv_filter_expr e[2];
  for (int s = 0; s < 2; s++) {
    kv_scan_options o;
    memset(&o, 0, sizeof o);
    o.family_ids = p->fid[s];
    o.n_families = (uint32_t)nf;
    o.ranges = rs->r;
    o.n_ranges = rs->n;
    o.reverse = reverse;
    o.limit = limit;
    kv_backend_read x = {NULL, resume, resume_len};
    if (fx) { /* the same expression with this side's family ids */
      memcpy(nodes[s], fx->nodes, fx->n_nodes * sizeof *fx->nodes);
      for (uint32_t i = 0; i < fx->n_nodes; i++)
        if (nodes[s][i].kind >= KV_FX_CMP) nodes[s][i].family_id = p->fid[s][nodes[s][i].family_id];
      e[s] = (kv_filter_expr){nodes[s], fx->n_nodes};
      x.filter_expr = &e[s];
    }
    if (kv_be_scan_open(p->be[s], &o, &x, &sc[s]))
      fail_msg("%s: scan_open side %d: %s", rs->name, s, kv_errmsg());
  }
  for (;; n++) {
    kv_row row[2];
    int rc[2];
    for (int s = 0; s < 2; s++) rc[s] = kv_be_scan_next(p->be[s], sc[s], &row[s]);
    if (rc[0] != rc[1])
      fail_msg("%s rev=%d nf=%d fx=%d lim=%llu row %llu: local %d, hbase %d (%s)", rs->name,
               reverse, nf, fx != NULL, (unsigned long long)limit, (unsigned long long)n, rc[0],
               rc[1], kv_errmsg());
    if (rc[0] == KV_ERR_NOTFOUND) break;
    assert_int_equal(rc[0], KV_OK);
    if (row[0].key_len != row[1].key_len || memcmp(row[0].key, row[1].key, row[0].key_len))
      fail_msg("%s rev=%d nf=%d fx=%d row %llu: keys differ (%u bytes, %u bytes)", rs->name,
               reverse, nf, fx != NULL, (unsigned long long)n, row[0].key_len, row[1].key_len);
    assert_int_equal(row[0].n_cells, row[1].n_cells);
    for (uint32_t i = 0; i < row[0].n_cells; i++) {
      assert_int_equal(row[0].cells[i].value_len, row[1].cells[i].value_len);
      assert_memory_equal(row[0].cells[i].value, row[1].cells[i].value, row[0].cells[i].value_len);
    }
  }
  kv_be_scan_metrics(p->be[1], sc[1], m);
  *opens = hb_scan_opens() - before;
  *rows = n;
  for (int s = 0; s < 2; s++) kv_be_scan_close(p->be[s], sc[s]);
}

static void fill(pair *p) {
  kv_batch *b[2] = {kv_batch_new(), kv_batch_new()};
  static const char *const odd[] = {"\0", "\0\0", "\xff", "\xff\xff", "\xff\xff\xff", "\0\xff"};
  static const uint32_t odd_len[] = {1, 2, 1, 2, 3, 2};
  for (int i = 0; i < NROWS + 6; i++) {
    uint8_t k[3];
    const uint8_t *kp = k;
    uint32_t kl = 2;
    if (i < NROWS) key2(i, k);
    else kp = (const uint8_t *)odd[i - NROWS], kl = odd_len[i - NROWS];
    char v[8];
    snprintf(v, sizeof v, "v%02d", i % 97);
    for (int s = 0; s < 2; s++) {
      assert_int_equal(kv_batch_put(b[s], p->fid[s][0], kp, kl, "v", 1, 1000, v, strlen(v)), KV_OK);
      if (i % 3) assert_int_equal(kv_batch_put(b[s], p->fid[s][1], kp, kl, "w", 1, 1000, "w", 1), KV_OK);
    }
  }
  for (int s = 0; s < 2; s++)
    if (kv_be_write(p->be[s], b[s], NULL)) fail_msg("write side %d: %s", s, kv_errmsg());
  kv_batch_free(b[0]);
  kv_batch_free(b[1]);
}

static void test_backend_ranges(void **state) {
  (void)state;
  char uri[400];
  uri_of(uri, sizeof uri, "be");
  kv_env *env = kv_env_mem_new(0);
  kv_db *db = tu_kv_open_mem(env, 0);
  kv_backend local;
  pair p;
  memset(&p, 0, sizeof p);
  p.be[0] = kv_backend_local_init(&local, db);
  if (kv_backend_hbase_open(uri, &p.be[1]))
    fail_msg("cannot open %s (scripts/hbase-up.sh): %s", uri, kv_errmsg());
  kv_family_options fo[2] = {{"a", 1, 0, 0, 0}, {"b", 1, 0, 0, 0}};
  const uint8_t *splits[3] = {(const uint8_t *)"\x00\x80", (const uint8_t *)"\x7f",
                              (const uint8_t *)"\xff\x00"};
  uint32_t lens[3] = {2, 1, 2};
  for (int s = 0; s < 2; s++) {
    assert_int_equal(kv_be_create_table(p.be[s], "R", fo, 2, splits, lens, 3), KV_OK);
    for (int f = 0; f < 2; f++)
      assert_int_equal(kv_be_family_id(p.be[s], "R", fo[f].name, &p.fid[s][f]), KV_OK);
  }
  fill(&p);

  static rng_set sets[4];
  /* 120 one-key ranges over every region, every fifth of an absent key */
  rng_set *pts = &sets[0];
  pts->name = "points";
  for (int i = 0; i < 120; i++) {
    uint8_t k[2];
    key2(i * 25, k);
    if (i % 5 == 4) k[1] ^= 1; /* 21 * j never differs from 21 * i in the last bit only */
    add_range(pts, k, 2, true, k, 2, true, false);
  }
  /* odd ranges: empty ones, bounds with 0x00 and 0xFF bytes, an open start */
  rng_set *odd = &sets[1];
  odd->name = "odd";
  add_range(odd, NULL, 0, true, "\0\0", 2, true, false);        /* "", "\0", "\0\0" */
  add_range(odd, "\0\x10", 2, true, "\0\x05", 2, true, true);    /* start above end */
  add_range(odd, "\0\x20", 2, true, "\0\x20", 2, false, true);   /* start = exclusive end */
  add_range(odd, "\0\x2a", 2, false, "\0\x2a", 2, true, true);   /* exclusive start = end */
  add_range(odd, "\0\x3f", 2, true, "\0\x3f", 2, true, false);   /* one key: 21 * 3 */
  add_range(odd, "\0\xfe", 2, false, "\x01\x00", 2, true, false);
  add_range(odd, "\x7e\xff", 2, true, "\x7f", 1, true, false);   /* to the split key */
  add_range(odd, "\xfe\xff\xff", 3, false, "\xff", 1, true, false);
  add_range(odd, "\xff\0", 2, true, "\xff\xff\xff", 3, false, false);
  /* ranges across region boundaries, an open end */
  rng_set *wide = &sets[2];
  wide->name = "wide";
  add_range(wide, "\0\x10", 2, true, "\0\x90", 2, false, false);
  add_range(wide, "\x7e\0", 2, false, "\x80\0", 2, true, false);
  add_range(wide, "\xa0", 1, true, "\xa1", 1, true, false);
  add_range(wide, "\xfe", 1, true, NULL, 0, true, false);
  /* the same without the open end: reverse scans use one scanner */
  rng_set *wide2 = &sets[3];
  *wide2 = *wide;
  wide2->name = "wide, bounded";
  wide2->r[3].end = (const uint8_t *)"\xff\x00\x01";
  wide2->r[3].end_len = 3;

  kv_fx_node ge = {KV_FX_CMP, KV_FX_GE, 0, 0, (const uint8_t *)"v", 1, (const uint8_t *)"v50", 3};
  kv_filter_expr fx = {&ge, 1};
  uint64_t opens, rows;
  kv_scan_metrics m;
  for (int si = 0; si < 4; si++)
    for (int rev = 0; rev < 2; rev++)
      for (int nf = 1; nf <= 2; nf++)
        for (int f = 0; f < 2; f++) {
          const rng_set *rs = &sets[si];
          compare(&p, rs, nf, rev, f ? &fx : NULL, 0, NULL, 0, &opens, &m, &rows);
          bool one = !(rev && !rs->r[rs->n - 1].end);
          if (one && opens != 1)
            fail_msg("%s rev=%d nf=%d fx=%d: %llu scanners", rs->name, rev, nf, f,
                     (unsigned long long)opens);
          if (!one) assert_int_equal(opens, rs->nonempty);
          assert_int_equal(m.rows_returned, rows);
          if (f) assert_int_equal(m.rows_filtered, 0); /* the region servers filtered */
          assert_true(rows > (si == 1 ? 2u : 10u));
        }
  /* a limit; a resume key inside the ranges */
  for (int rev = 0; rev < 2; rev++) {
    compare(&p, &sets[0], 2, rev, NULL, 7, NULL, 0, &opens, &m, &rows);
    assert_int_equal(rows, 7);
    assert_int_equal(opens, 1);
    uint8_t mid[2];
    key2(60 * 25, mid);
    compare(&p, &sets[0], 1, rev, &fx, 0, mid, 2, &opens, &m, &rows);
    assert_int_equal(opens, 1);
    compare(&p, &sets[2], 2, rev, NULL, 0, (const uint8_t *)"\x7f\x50", 2, &opens, &m, &rows);
  }
  /* a reverse scan of one range, two families, a value filter on the region servers */
  static rng_set all = {"all", {{NULL, 0, true, NULL, 0, true}}, 1, 1, {{{0}}}};
  static rng_set top = {"top", {{(const uint8_t *)"\x80", 1, true, NULL, 0, true}}, 1, 1, {{{0}}}};
  for (int k = 0; k < 2; k++) {
    compare(&p, k ? &top : &all, 2, true, &fx, 0, NULL, 0, &opens, &m, &rows);
    assert_int_equal(opens, 1);
    assert_int_equal(m.rows_filtered, 0);
    assert_true(rows > 100);
  }
  kv_backend_hbase_close(p.be[1]);
  assert_int_equal(kv_backend_hbase_drop_namespace(uri), KV_OK);
  kv_close(db);
  kv_env_free(env);
}

/* ---- SQL ----------------------------------------------------------------------------------- */
static void exec_ok(rowan_db *db, const char *sql) {
  if (rowan_exec(db, sql, NULL, NULL) != ROWAN_OK) fail_msg("%s: %s", sql, rowan_errmsg(db));
}

/* The query's rows as text, one line each. */
static char *rows_of(rowan_db *db, const char *sql, int *nrows) {
  rowan_stmt *st = NULL;
  if (rowan_prepare(db, sql, -1, &st, NULL) != ROWAN_OK) fail_msg("%s: %s", sql, rowan_errmsg(db));
  size_t cap = 1 << 16, n = 0;
  char *out = malloc(cap);
  assert_non_null(out);
  out[0] = 0;
  int rc;
  *nrows = 0;
  while ((rc = rowan_step(st)) == ROWAN_ROW) {
    for (int i = 0; i < rowan_column_count(st); i++) {
      const char *t = rowan_column_text(st, i);
      size_t l = strlen(t ? t : "NULL") + 2;
      if (n + l + 1 > cap) {
        cap = (n + l + 1) * 2;
        out = realloc(out, cap);
        assert_non_null(out);
      }
      n += (size_t)snprintf(out + n, cap - n, "%s%c", t ? t : "NULL",
                            i + 1 < rowan_column_count(st) ? '|' : '\n');
    }
    (*nrows)++;
  }
  if (rc != ROWAN_DONE) fail_msg("%s: %s", sql, rowan_errmsg(db));
  rowan_finalize(st);
  return out;
}

static void load(rowan_db *db) {
  exec_ok(db, "CREATE TABLE K (ID INTEGER NOT NULL PRIMARY KEY, V INTEGER, W VARCHAR) "
              "SPLIT ON (1000, 2000)");
  exec_ok(db, "CREATE TABLE S (ST VARCHAR NOT NULL, TS INTEGER NOT NULL, V INTEGER "
              "CONSTRAINT PK PRIMARY KEY (ST, TS)) SPLIT ON ('s07', 's14')");
  char *sql = malloc(1 << 20);
  assert_non_null(sql);
  for (int part = 0; part < 3; part++) {
    size_t n = (size_t)sprintf(sql, "UPSERT INTO K VALUES ");
    for (int i = part * 1000; i < part * 1000 + 1000; i++)
      n += (size_t)sprintf(sql + n, "%s(%d, %d, 'w%d')", i % 1000 ? "," : "", i, (i * 37) % 1000,
                           i % 13);
    exec_ok(db, sql);
  }
  for (int st = 0; st < 20; st++) {
    size_t n = (size_t)sprintf(sql, "UPSERT INTO S VALUES ");
    for (int ts = 0; ts < 150; ts++)
      n += (size_t)sprintf(sql + n, "%s('s%02d', %d, %d)", ts ? "," : "", st, ts,
                           (st * 151 + ts * 7) % 1000);
    exec_ok(db, sql);
  }
  free(sql);
}

static void test_sql_in_list(void **state) {
  (void)state;
  char uri[400], dir[] = "/tmp/rowan_multirange_XXXXXX";
  uri_of(uri, sizeof uri, "sql");
  assert_non_null(mkdtemp(dir));
  rowan_db *db[2] = {NULL, NULL}; /* 0: local, 1: hbase */
  assert_int_equal(rowan_open(dir, NULL, &db[0]), ROWAN_OK);
  if (rowan_open(uri, NULL, &db[1]) != ROWAN_OK) fail_msg("rowan_open(%s) failed", uri);
  for (int s = 0; s < 2; s++) load(db[s]);
  char in[2000];
  size_t n = (size_t)sprintf(in, "SELECT ID, V, W FROM K WHERE ID IN (");
  for (int i = 0; i < 120; i++) n += (size_t)sprintf(in + n, "%s%d", i ? "," : "", i * 24 + 7);
  char q[6][2400];
  snprintf(q[0], sizeof q[0], "%s)", in);
  snprintf(q[1], sizeof q[1], "%s) ORDER BY ID DESC", in);
  snprintf(q[2], sizeof q[2], "%s) AND V > 500", in);
  snprintf(q[3], sizeof q[3], "%s) AND V > 500 ORDER BY ID DESC", in);
#define SQ "SELECT ST, TS, V FROM S WHERE ST IN ('s01', 's04', 's07', 's09', 's12', 's15', " \
           "'s19') AND TS BETWEEN 20 AND 60 AND V < 500"
  snprintf(q[4], sizeof q[4], "%s", SQ);
  snprintf(q[5], sizeof q[5], "%s", SQ " ORDER BY ST DESC, TS DESC");
  for (int k = 0; k < 6; k++) {
    int nr[2];
    char *local = rows_of(db[0], q[k], &nr[0]);
    uint64_t before = hb_scan_opens();
    char *hb = rows_of(db[1], q[k], &nr[1]);
    uint64_t opens = hb_scan_opens() - before;
    setenv("ROWAN_HBASE_NO_MULTI_RANGE", "1", 1);
    before = hb_scan_opens();
    char *old = rows_of(db[1], q[k], &nr[1]);
    uint64_t old_opens = hb_scan_opens() - before;
    unsetenv("ROWAN_HBASE_NO_MULTI_RANGE");
    if (strcmp(local, hb) || strcmp(local, old))
      fail_msg("query %d: HBase's answer differs from the local store's:\n%.300s\n---\n%.300s\n"
               "---\n%.300s", k, local, hb, old);
    assert_true(nr[0] > 20);
    print_message("query %d: %d rows, %llu scanners (%llu one per range)\n", k, nr[0],
                  (unsigned long long)opens, (unsigned long long)old_opens);
    if (opens > 3) fail_msg("query %d: %llu scanners for 3 regions", k, (unsigned long long)opens);
    assert_true(old_opens >= (k < 4 ? 100u : 7u));
    free(local);
    free(hb);
    free(old);
  }
  assert_int_equal(rowan_close(db[0]), ROWAN_OK);
  assert_int_equal(rowan_close(db[1]), ROWAN_OK);
  assert_int_equal(kv_backend_hbase_drop_namespace(uri), KV_OK);
  char cmd[200];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  assert_int_equal(system(cmd), 0);
}

int main(void) {
  const char *g = getenv("ROWAN_HBASE_THRIFT");
  if (g && *g) snprintf(gateway, sizeof gateway, "%s", g);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_backend_ranges),
      cmocka_unit_test(test_sql_in_list),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
