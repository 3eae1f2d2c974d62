/*
** tests/exec/test_break_reverse.c: reads through the block cache in every direction must
** agree with each other (kv/scan/scan.c, kv/sf/sf_iter.c, the packed cached blocks of kv/sf/sf_cblock.c):
** a key range read in key order and the same range read in reverse (ORDER BY the key's
** reverse) hold the same rows, LIMIT on the reverse read is the tail of the forward read,
** and a point lookup of each key gives that key's row from the forward read. The table has
** a DESC key column, two families, rows with new versions (VERSIONS=2), cell deletes and
** row deletes spread over memstore, several store files and compactions; the block cache is
** small (evicting all the time), off, or the default. Seeded (tu_seed).
** Not here: concurrent readers (tests/kv/test_break_readers.c).
*/
#include "test_engine_util.h"
#include "testutil.h"

static tdb *open_with_cache(size_t cache) {
  tdb *t = calloc(1, sizeof *t);
  t->env = kv_env_mem_new(1500000000000LL);
  kv_options o;
  kv_options_init(&o);
  o.env = t->env;
  o.create_if_missing = true;
  o.sync_mode = KV_SYNC_OFF;
  o.block_cache_size = cache;
  assert_int_equal(kv_open("/db", &o, &t->db), KV_OK);
  assert_int_equal(exec_session_open(t->db, &t->s, &t->err), EXEC_OK);
  return t;
}

#define NA 40

static void write_some(tdb *t, uint64_t *rs, int n) {
  char sql[512];
  for (int i = 0; i < n; i++) {
    int a = (int)tu_below(rs, NA);
    char b[8];
    snprintf(b, sizeof b, "%c%c", 'a' + (int)tu_below(rs, 4), 'a' + (int)tu_below(rs, 3));
    int r = (int)tu_below(rs, 10);
    if (r == 0) {
      snprintf(sql, sizeof sql, "DELETE FROM T WHERE A = %d AND B = '%s'", a, b);
    } else if (r == 1) {
      snprintf(sql, sizeof sql, "UPSERT INTO T (A, B, V) VALUES (%d, '%s', NULL)", a, b);
    } else {
      char pad[200];
      size_t pl = (size_t)tu_below(rs, sizeof pad - 1);
      memset(pad, 'p', pl);
      pad[pl] = 0;
      snprintf(sql, sizeof sql, "UPSERT INTO T VALUES (%d, '%s', %d, '%s', %d)", a, b,
               (int)tu_below(rs, 1000), pad, (int)tu_below(rs, 50));
    }
    assert_int_equal(tdb_run(t, sql), EXEC_DONE);
  }
}

/* Split text into lines (pointers into buf, which is modified). */
static int lines(char *buf, char **out, int cap) {
  int n = 0;
  for (char *p = buf; *p && n < cap;) {
    out[n++] = p;
    char *e = strchr(p, '\n');
    if (!e) break;
    *e = 0;
    p = e + 1;
  }
  return n;
}

static void check_ranges(tdb *t, uint64_t *rs, uint64_t seed, int n) {
  char sql[512];
  static char *fl[20000], *rl[20000];
  for (int i = 0; i < n; i++) {
    int lo = (int)tu_below(rs, NA), hi = lo + (int)tu_below(rs, 15);
    const char *extra = tu_below(rs, 3) == 0 ? " AND W > 20" : tu_below(rs, 2) ? " AND B >= 'b'" : "";
    snprintf(sql, sizeof sql, "SELECT A, B, V, LENGTH(P), W FROM T WHERE A BETWEEN %d AND %d%s ORDER BY A, B DESC", lo, hi, extra);
    char *fwd = strdup(q(t, sql));
    snprintf(sql, sizeof sql, "SELECT A, B, V, LENGTH(P), W FROM T WHERE A BETWEEN %d AND %d%s ORDER BY A DESC, B", lo, hi, extra);
    char *rev = strdup(q(t, sql));
    int nf = lines(fwd, fl, 20000), nr = lines(rev, rl, 20000);
    if (nf != nr) fprintf(stderr, "seed %llu: %s: %d rows forward, %d in reverse\n", (unsigned long long)seed, sql, nf, nr);
    assert_int_equal(nf, nr);
    for (int j = 0; j < nf; j++) {
      if (strcmp(fl[j], rl[nf - 1 - j]) != 0)
        fprintf(stderr, "seed %llu: %s: row %d\n", (unsigned long long)seed, sql, j);
      assert_string_equal(fl[j], rl[nf - 1 - j]);
    }
    /* LIMIT on the reverse read: the forward read's tail */
    int lim = 1 + (int)tu_below(rs, 5);
    snprintf(sql, sizeof sql, "SELECT A, B, V, LENGTH(P), W FROM T WHERE A BETWEEN %d AND %d%s ORDER BY A DESC, B LIMIT %d", lo, hi, extra, lim);
    char *rl2 = strdup(q(t, sql));
    char *ll[8];
    int nl = lines(rl2, ll, 8);
    assert_int_equal(nl, nf < lim ? nf : lim);
    for (int j = 0; j < nl; j++) assert_string_equal(ll[j], fl[nf - 1 - j]);
    free(rl2);
    /* point lookups of a few of the rows */
    for (int j = 0; j < nf && j < 4; j++) {
      int k = (int)tu_below(rs, (uint64_t)nf);
      char a[16], b[16];
      if (sscanf(fl[k], "%15[^|]|%15[^|]|", a, b) != 2) fail_msg("bad row %s", fl[k]);
      snprintf(sql, sizeof sql, "SELECT A, B, V, LENGTH(P), W FROM T WHERE A = %s AND B = '%s'", a, b);
      const char *got = q(t, sql);
      size_t gl = strlen(got);
      assert_true(gl > 0);
      if (strncmp(got, fl[k], gl - 1) != 0 || fl[k][gl - 1] != 0)
        fprintf(stderr, "seed %llu: %s -> %s (want %s)\n", (unsigned long long)seed, sql, got, fl[k]);
      assert_int_equal(strncmp(got, fl[k], gl - 1), 0);
      assert_int_equal(fl[k][gl - 1], 0);
    }
    free(fwd);
    free(rev);
  }
}

static void run(size_t cache, const char *name) {
  uint64_t seed = tu_seed(name), rs = seed;
  tdb *t = open_with_cache(cache);
  q(t, "CREATE TABLE T (A INTEGER NOT NULL, B VARCHAR NOT NULL, R.V INTEGER, R.P VARCHAR, "
       "S.W INTEGER, CONSTRAINT PK PRIMARY KEY (A, B DESC)) BLOCKSIZE=512, VERSIONS=2");
  int n = (int)tu_scaled(600, 150), nq = (int)tu_scaled(40, 15);
  for (int round = 0; round < 6; round++) {
    write_some(t, &rs, n);
    check_ranges(t, &rs, seed, nq);
    if (round % 3 == 0) assert_int_equal(kv_flush(t->db, NULL), KV_OK);
    if (round == 2) assert_int_equal(kv_compact(t->db, NULL, false), KV_OK);
    if (round == 4) assert_int_equal(kv_compact(t->db, NULL, true), KV_OK);
    check_ranges(t, &rs, seed, nq);
  }
  tdb_close(t);
}

static void small_cache(void **state) { (void)state; run(64 << 10, "small_cache"); }
static void no_cache(void **state) { (void)state; run(KV_BLOCK_CACHE_OFF, "no_cache"); }
static void default_cache(void **state) { (void)state; run(0, "default_cache"); }

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(small_cache),
      cmocka_unit_test(no_cache),
      cmocka_unit_test(default_cache),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
