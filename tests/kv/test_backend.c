/*
** tests/kv/test_backend.c: the storage-backend interface (kv/backend.h) over the local
** backend, on the in-memory env.
**
** Checked: the local backend's capabilities; create (split keys checked: unsorted, empty),
** alter, drop, family lookups and table listing; write and get; scans over many ranges
** forward and reverse, with and without a limit, against a model of the rows (the sorted
** keys); a scan resumed after its last key, page by page, giving exactly the full scan in
** both orders; check-and-write applied and refused (the store unchanged then); a batch with
** explicit timestamps applied twice reading the same as once; threads incrementing a counter
** by check-and-write beside plain writes, no increment lost (versions, tombstones); the
** filter expression against a model (three-valued logic), its byte form round-tripped and
** damaged; split points cutting a flushed family into chunks of rows that add up; the
** size estimate; the walk over a batch's ops; an operation a backend lacks.
*/
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kv/backend.h"
#include "kv/env/env_mem.h"
#include "kv/kv.h"
#include "testutil.h"

#define T0 1700000000000ll /* the mem env's clock (ms) */
#define NROWS 100          /* rows r000..r099 of the model table */

typedef struct st {
  kv_env *env;    /* in-memory file system */
  kv_db *db;      /* the store */
  kv_backend be;  /* the local backend over it */
  uint32_t a, b;  /* families of table t: a (VERSIONS 3), b */
} st;

static void st_open(st *s, uint32_t block_size) {
  s->env = kv_env_mem_new(T0);
  kv_options o;
  kv_options_init(&o);
  o.env = s->env;
  o.create_if_missing = true;
  assert_int_equal(kv_open("/db", &o, &s->db), KV_OK);
  kv_backend_local_init(&s->be, s->db);
  kv_family_options fo[2] = {{.name = "a", .max_versions = 3, .block_size = block_size},
                             {.name = "b", .block_size = block_size}};
  assert_int_equal(kv_be_create_table(&s->be, "t", fo, 2, NULL, NULL, 0), KV_OK);
  assert_int_equal(kv_be_family_id(&s->be, "t", "a", &s->a), KV_OK);
  assert_int_equal(kv_be_family_id(&s->be, "t", "b", &s->b), KV_OK);
}

static void st_close(st *s) {
  assert_int_equal(kv_close(s->db), KV_OK);
  kv_env_free(s->env);
}

static void key_of(int i, char *k) { snprintf(k, 8, "r%03d", i); }

/* Rows r000..r099: a:q = "v<i>" at ts 1000 + i; b:n = one byte i for even i only. */
static void fill(st *s) {
  kv_batch *b = kv_batch_new();
  for (int i = 0; i < NROWS; i++) {
    char k[8], v[8];
    key_of(i, k);
    snprintf(v, sizeof v, "v%d", i);
    assert_int_equal(kv_batch_put(b, s->a, k, 4, "q", 1, 1000 + i, v, strlen(v)), KV_OK);
    uint8_t n = (uint8_t)i;
    if (i % 2 == 0) assert_int_equal(kv_batch_put(b, s->b, k, 4, "n", 1, 1000, &n, 1), KV_OK);
  }
  assert_int_equal(kv_be_write(&s->be, b, NULL), KV_OK);
  kv_batch_free(b);
}

/* The row numbers a scan hands out into out[], their count returned; *last gets the last
** key (5 bytes room) when any. */
static int scan_rows(st *s, const kv_scan_options *o, const kv_backend_read *x, int *out,
                     char *last) {
  kv_backend_scan *sc;
  int rc = kv_be_scan_open(&s->be, o, x, &sc);
  if (rc) fail_msg("scan_open: %s", kv_errmsg());
  kv_row row;
  int n = 0;
  while ((rc = kv_be_scan_next(&s->be, sc, &row)) == KV_OK) {
    assert_int_equal(row.key_len, 4);
    char num[4]; /* the key's 3 digits: a row key is not NUL-terminated */
    memcpy(num, row.key + 1, 3);
    num[3] = 0;
    out[n++] = atoi(num);
    if (last) memcpy(last, row.key, 4);
  }
  assert_int_equal(rc, KV_ERR_NOTFOUND);
  kv_scan_metrics m;
  kv_be_scan_metrics(&s->be, sc, &m);
  assert_int_equal(m.rows_returned, (uint64_t)n);
  kv_be_scan_close(&s->be, sc);
  return n;
}

static void test_caps(void **state) {
  (void)state;
  st s;
  st_open(&s, 0);
  const kv_backend_caps *c = &s.be.caps;
  assert_string_equal(c->name, "local");
  assert_int_equal(c->atomicity, KV_BE_ATOMIC_GLOBAL);
  assert_int_equal(c->snapshot, KV_BE_SNAPSHOT_SEQUENCE);
  assert_int_equal(c->filters, KV_BE_FILTER_CALLBACK | KV_BE_FILTER_EXPR);
  assert_true(c->reverse_scans && c->check_and_write && c->split_points && c->size_estimates);
  assert_true(c->split_keys);
  assert_true(c->extensions & KV_BE_EXT_OVERLAY);
  assert_ptr_equal(kv_backend_local_db(&s.be), s.db);
  kv_backend other = s.be;
  kv_backend_ops ops = *s.be.ops;
  other.ops = &ops;
  assert_ptr_equal(kv_backend_local_db(&other), s.db); /* a wrapper over the local store */
  other.local = NULL;
  assert_null(kv_backend_local_db(&other)); /* a remote backend has none */
  ops.check_and_write = NULL;
  bool applied = true;
  kv_backend_check chk = {s.a, (const uint8_t *)"r", 1, NULL, 0, NULL, 0};
  kv_batch *b = kv_batch_new();
  assert_int_equal(kv_be_check_and_write(&other, &chk, b, &applied, NULL), KV_ERR_INVALID);
  assert_string_equal(kv_errmsg(), "check_and_write is not supported by backend local");
  kv_batch_free(b);
  st_close(&s);
}

static void test_ddl(void **state) {
  (void)state;
  st s;
  st_open(&s, 0);
  kv_family_options f = {.name = "f"};
  const uint8_t *keys[3] = {(const uint8_t *)"b", (const uint8_t *)"m", (const uint8_t *)"m"};
  uint32_t lens[3] = {1, 1, 1};
  assert_int_equal(kv_be_create_table(&s.be, "u", &f, 1, keys, lens, 3), KV_ERR_INVALID);
  assert_non_null(strstr(kv_errmsg(), "split key 2 is not above split key 1"));
  lens[0] = 0;
  assert_int_equal(kv_be_create_table(&s.be, "u", &f, 1, keys, lens, 2), KV_ERR_INVALID);
  assert_non_null(strstr(kv_errmsg(), "split key 0 is empty"));
  assert_int_equal(kv_be_table_count(&s.be), 1); /* refused: nothing created */
  lens[0] = 1;
  assert_int_equal(kv_be_create_table(&s.be, "u", &f, 1, keys, lens, 2), KV_OK);
  assert_int_equal(kv_be_table_count(&s.be), 2);
  assert_string_equal(kv_be_table_name(&s.be, 0), "t");
  assert_string_equal(kv_be_table_name(&s.be, 1), "u");
  uint32_t fid, gid;
  assert_int_equal(kv_be_family_id(&s.be, "u", "f", &fid), KV_OK);
  kv_family_options g[2] = {{.name = "f", .max_versions = 5}, {.name = "g"}};
  assert_int_equal(kv_be_alter_table(&s.be, "u", g, 2), KV_OK);
  assert_int_equal(kv_be_family_id(&s.be, "u", "g", &gid), KV_OK);
  kv_family_options info;
  assert_int_equal(kv_be_family_info(&s.be, fid, &info), KV_OK);
  assert_int_equal(info.max_versions, 5);
  const uint8_t *q = (const uint8_t *)"x";
  uint32_t ql = 1;
  assert_int_equal(kv_be_set_dropped_qualifiers(&s.be, fid, &q, &ql, 1), KV_OK);
  assert_int_equal(kv_be_drop_table(&s.be, "u"), KV_OK);
  assert_int_equal(kv_be_family_id(&s.be, "u", "f", &fid), KV_ERR_NOTFOUND);
  assert_int_equal(kv_be_drop_table(&s.be, "u"), KV_ERR_NOTFOUND);
  assert_int_equal(kv_be_flush(&s.be, "t"), KV_OK);
  st_close(&s);
}

static void test_get(void **state) {
  (void)state;
  st s;
  st_open(&s, 0);
  fill(&s);
  uint32_t fams[2] = {s.a, s.b};
  kv_scan_options o = {.family_ids = fams, .n_families = 2};
  kv_backend_scan *g;
  kv_row row;
  assert_int_equal(kv_be_get(&s.be, &o, "r042", 4, &g, &row), KV_OK);
  assert_int_equal(row.n_cells, 2);
  assert_memory_equal(row.cells[0].value, "v42", 3);
  assert_int_equal(row.cells[0].ts, 1042);
  assert_int_equal(row.cells[1].value[0], 42);
  kv_be_scan_close(&s.be, g);
  assert_int_equal(kv_be_get(&s.be, &o, "r100", 4, &g, &row), KV_ERR_NOTFOUND);
  kv_be_scan_close(&s.be, g);
  uint64_t snap;
  assert_int_equal(kv_be_snapshot_acquire(&s.be, &snap), KV_OK);
  kv_batch *b = kv_batch_new();
  assert_int_equal(kv_batch_put(b, s.a, "r100", 4, "q", 1, 5, "new", 3), KV_OK);
  assert_int_equal(kv_be_write(&s.be, b, NULL), KV_OK);
  o.snapshot = snap; /* the snapshot does not see the later write */
  assert_int_equal(kv_be_get(&s.be, &o, "r100", 4, &g, &row), KV_ERR_NOTFOUND);
  kv_be_scan_close(&s.be, g);
  o.snapshot = 0;
  assert_int_equal(kv_be_get(&s.be, &o, "r100", 4, &g, &row), KV_OK);
  kv_be_scan_close(&s.be, g);
  kv_be_snapshot_release(&s.be, snap);
  kv_batch_free(b);
  st_close(&s);
}

/* Ranges of the multi-range scans: [r010, r020), [r030, r035], (r050, r060), [r097, end). */
static const kv_range RANGES[4] = {
  {(const uint8_t *)"r010", 4, true, (const uint8_t *)"r020", 4, false},
  {(const uint8_t *)"r030", 4, true, (const uint8_t *)"r035", 4, true},
  {(const uint8_t *)"r050", 4, false, (const uint8_t *)"r060", 4, false},
  {(const uint8_t *)"r097", 4, true, NULL, 0, false},
};

static bool in_ranges(int i, uint32_t n) {
  if (n == 0) return true;
  return (i >= 10 && i < 20) || (i >= 30 && i <= 35) || (i > 50 && i < 60) || i >= 97;
}

/* The model's rows in ranges (n 0: all), in order, after `after` (-1: none; else the scan
** resumed after that row) up to limit (0: none). */
static int model(uint32_t n, bool reverse, int after, int limit, int *out) {
  int k = 0;
  for (int j = 0; j < NROWS; j++) {
    int i = reverse ? NROWS - 1 - j : j;
    if (!in_ranges(i, n)) continue;
    if (after >= 0 && (reverse ? i >= after : i <= after)) continue;
    if (limit && k == limit) break;
    out[k++] = i;
  }
  return k;
}

static void test_ranges(void **state) {
  (void)state;
  st s;
  st_open(&s, 0);
  fill(&s);
  uint32_t fams[1] = {s.a};
  int got[NROWS], want[NROWS];
  for (uint32_t nr = 0; nr <= 4; nr += 4)
    for (int rev = 0; rev < 2; rev++)
      for (int limit = 0; limit <= 9; limit += 9) {
        kv_scan_options o = {.family_ids = fams, .n_families = 1, .ranges = RANGES,
                             .n_ranges = nr, .reverse = rev, .limit = (uint64_t)limit};
        int n = scan_rows(&s, &o, NULL, got, NULL);
        int m = model(nr, rev, -1, limit, want);
        assert_int_equal(n, m);
        assert_memory_equal(got, want, (size_t)n * sizeof *got);
      }
  st_close(&s);
}

static void test_resume(void **state) {
  (void)state;
  st s;
  st_open(&s, 0);
  fill(&s);
  uint32_t fams[2] = {s.a, s.b};
  int got[NROWS], want[NROWS], page[NROWS];
  for (uint32_t nr = 0; nr <= 4; nr += 4)
    for (int rev = 0; rev < 2; rev++) {
      kv_scan_options o = {.family_ids = fams, .n_families = 2, .ranges = RANGES,
                           .n_ranges = nr, .reverse = rev, .limit = 7};
      char last[5] = {0};
      kv_backend_read x = {0};
      int total = 0, pages = 0, n;
      do { /* pages of 7 rows, each resumed after the previous page's last key */
        n = scan_rows(&s, &o, pages ? &x : NULL, page, last);
        memcpy(got + total, page, (size_t)n * sizeof *page);
        total += n;
        x.resume_after = (const uint8_t *)last;
        x.resume_after_len = 4;
        pages++;
      } while (n == 7);
      int m = model(nr, rev, -1, 0, want);
      assert_int_equal(total, m);
      assert_memory_equal(got, want, (size_t)m * sizeof *got);
      assert_int_equal(pages, m / 7 + 1);
      /* one resume against the model: after r033, and after the last row (nothing left) */
      x.resume_after = (const uint8_t *)"r033";
      o.limit = 0;
      n = scan_rows(&s, &o, &x, got, NULL);
      m = model(nr, rev, 33, 0, want);
      assert_int_equal(n, m);
      assert_memory_equal(got, want, (size_t)m * sizeof *got);
      x.resume_after = (const uint8_t *)(rev ? "r000" : "r099");
      assert_int_equal(scan_rows(&s, &o, &x, got, NULL), 0);
    }
  kv_backend_read bad = {.resume_after = (const uint8_t *)"", .resume_after_len = 0};
  kv_scan_options o = {.family_ids = fams, .n_families = 1};
  kv_backend_scan *sc;
  assert_int_equal(kv_be_scan_open(&s.be, &o, &bad, &sc), KV_ERR_INVALID);
  st_close(&s);
}

/* The newest a:q value of row `key` into v (16 bytes room), or "" when none. */
static void value_of(st *s, const char *key, char *v) {
  kv_scan_options o = {.family_ids = &s->a, .n_families = 1};
  kv_backend_scan *g;
  kv_row row;
  int rc = kv_be_get(&s->be, &o, key, strlen(key), &g, &row);
  v[0] = 0;
  if (rc == KV_OK) {
    memcpy(v, row.cells[0].value, row.cells[0].value_len);
    v[row.cells[0].value_len] = 0;
  } else {
    assert_int_equal(rc, KV_ERR_NOTFOUND);
  }
  kv_be_scan_close(&s->be, g);
}

static void test_check_and_write(void **state) {
  (void)state;
  st s;
  st_open(&s, 0);
  fill(&s);
  kv_batch *b = kv_batch_new();
  assert_int_equal(kv_batch_put(b, s.a, "r005", 4, "q", 1, 9000, "w5", 2), KV_OK);
  assert_int_equal(kv_batch_put(b, s.a, "r200", 4, "q", 1, 9000, "w200", 4), KV_OK);
  kv_backend_check chk = {s.a, (const uint8_t *)"r005", 4, (const uint8_t *)"q", 1,
                          (const uint8_t *)"v6", 2};
  bool applied = true;
  char v[16];
  /* the value differs: nothing of the batch is applied */
  assert_int_equal(kv_be_check_and_write(&s.be, &chk, b, &applied, NULL), KV_OK);
  assert_false(applied);
  value_of(&s, "r005", v);
  assert_string_equal(v, "v5");
  value_of(&s, "r200", v);
  assert_string_equal(v, "");
  /* "must not exist" on a row that exists: refused */
  chk.value = NULL;
  chk.value_len = 0;
  assert_int_equal(kv_be_check_and_write(&s.be, &chk, b, &applied, NULL), KV_OK);
  assert_false(applied);
  /* the expected value: applied, both rows */
  chk.value = (const uint8_t *)"v5";
  chk.value_len = 2;
  uint64_t seq = 0;
  assert_int_equal(kv_be_check_and_write(&s.be, &chk, b, &applied, &seq), KV_OK);
  assert_true(applied);
  assert_true(seq > 0);
  value_of(&s, "r005", v);
  assert_string_equal(v, "w5");
  value_of(&s, "r200", v);
  assert_string_equal(v, "w200");
  /* the old value no longer matches; "must not exist" on an absent row does */
  assert_int_equal(kv_be_check_and_write(&s.be, &chk, b, &applied, NULL), KV_OK);
  assert_false(applied);
  kv_backend_check none = {s.a, (const uint8_t *)"r300", 4, (const uint8_t *)"q", 1, NULL, 0};
  kv_batch_clear(b);
  assert_int_equal(kv_batch_put(b, s.a, "r300", 4, "q", 1, 9000, "w300", 4), KV_OK);
  assert_int_equal(kv_be_check_and_write(&s.be, &none, b, &applied, NULL), KV_OK);
  assert_true(applied);
  value_of(&s, "r300", v);
  assert_string_equal(v, "w300");
  assert_int_equal(kv_be_check_and_write(&s.be, &none, b, &applied, NULL), KV_OK);
  assert_false(applied);
  none.family_id = 9999; /* an unknown family is an error, not an absent cell */
  applied = true;
  assert_int_equal(kv_be_check_and_write(&s.be, &none, b, &applied, NULL), KV_ERR_NOTFOUND);
  assert_false(applied);
  none.row_len = 0;
  assert_int_equal(kv_be_check_and_write(&s.be, &none, b, &applied, NULL), KV_MISUSE);
  kv_batch_free(b);
  st_close(&s);
}

/* Every version of rows x and y (max_versions 3) as text. */
static void render_xy(st *s, char *out, size_t cap) {
  uint32_t fams[2] = {s->a, s->b};
  kv_scan_options o = {.family_ids = fams, .n_families = 2, .max_versions = 3};
  kv_backend_scan *sc;
  assert_int_equal(kv_be_scan_open(&s->be, &o, NULL, &sc), KV_OK);
  kv_row row;
  size_t len = 0;
  out[0] = 0;
  while (kv_be_scan_next(&s->be, sc, &row) == KV_OK)
    for (uint32_t c = 0; c < row.n_cells; c++) {
      const kv_cell_view *v = &row.cells[c];
      len += (size_t)snprintf(out + len, cap - len, "%.*s|%u:%.*s@%lld=%.*s;",
                              (int)row.key_len, (const char *)row.key, v->family_id,
                              (int)v->qual_len, (const char *)v->qual, (long long)v->ts,
                              (int)v->value_len, (const char *)v->value);
      assert_true(len < cap);
    }
  kv_be_scan_close(&s->be, sc);
}

static void test_idempotent(void **state) {
  (void)state;
  st s;
  st_open(&s, 0);
  kv_batch *pre = kv_batch_new();
  assert_int_equal(kv_batch_put(pre, s.a, "x", 1, "q", 1, 50, "old", 3), KV_OK);
  assert_int_equal(kv_batch_put(pre, s.b, "y", 1, "n", 1, 50, "old", 3), KV_OK);
  assert_int_equal(kv_be_write(&s.be, pre, NULL), KV_OK);
  kv_batch *b = kv_batch_new();
  assert_int_equal(kv_batch_put(b, s.a, "x", 1, "q", 1, 100, "one", 3), KV_OK);
  assert_int_equal(kv_batch_put(b, s.a, "x", 1, "q", 1, 200, "two", 3), KV_OK);
  assert_int_equal(kv_batch_delete(b, s.b, KV_DELETE_COLUMN, "y", 1, "n", 1, 60), KV_OK);
  assert_int_equal(kv_batch_put(b, s.b, "y", 1, "m", 1, 70, "m70", 3), KV_OK);
  char once[512], twice[512], thrice[512];
  assert_int_equal(kv_be_write(&s.be, b, NULL), KV_OK);
  render_xy(&s, once, sizeof once);
  char want[256];
  snprintf(want, sizeof want, "x|%u:q@200=two;x|%u:q@100=one;x|%u:q@50=old;y|%u:m@70=m70;",
           s.a, s.a, s.a, s.b);
  assert_string_equal(once, want);
  assert_int_equal(kv_be_write(&s.be, b, NULL), KV_OK);
  render_xy(&s, twice, sizeof twice);
  assert_string_equal(twice, once);
  assert_int_equal(kv_be_flush(&s.be, "t"), KV_OK); /* the same from store files */
  assert_int_equal(kv_be_write(&s.be, b, NULL), KV_OK);
  render_xy(&s, thrice, sizeof thrice);
  assert_string_equal(thrice, once);
  kv_batch_free(pre);
  kv_batch_free(b);
  st_close(&s);
}

/* The filter expression: (a:q >= "v5" AND NOT b:n = 0x08) OR (b:n PRESENT AND a:q < "v1"). */
static const kv_fx_node FX[] = {
  {.kind = KV_FX_OR, .n_children = 2},
  {.kind = KV_FX_AND, .n_children = 2},
  {.kind = KV_FX_CMP, .cmp = KV_FX_GE, .qual = (const uint8_t *)"q", .qual_len = 1,
   .value = (const uint8_t *)"v5", .value_len = 2},
  {.kind = KV_FX_NOT, .n_children = 1},
  {.kind = KV_FX_CMP, .cmp = KV_FX_EQ, .qual = (const uint8_t *)"n", .qual_len = 1,
   .value = (const uint8_t *)"\x08", .value_len = 1},
  {.kind = KV_FX_AND, .n_children = 2},
  {.kind = KV_FX_PRESENT, .qual = (const uint8_t *)"n", .qual_len = 1},
  {.kind = KV_FX_CMP, .cmp = KV_FX_LT, .qual = (const uint8_t *)"q", .qual_len = 1,
   .value = (const uint8_t *)"v1", .value_len = 2},
};
#define NFX (sizeof FX / sizeof FX[0])

/* The model of FX on row i (a:q = "v<i>"; b:n = i only for even i; NOT of a missing b:n is
** UNKNOWN, so an odd row passes the first arm never). */
static bool fx_model(int i) {
  char v[8];
  snprintf(v, sizeof v, "v%d", i);
  bool has_n = i % 2 == 0;
  bool arm1 = strcmp(v, "v5") >= 0 && has_n && i != 8;
  bool arm2 = has_n && strcmp(v, "v1") < 0;
  return arm1 || arm2;
}

static void fx_families(st *s, kv_fx_node *nodes) {
  memcpy(nodes, FX, sizeof FX);
  for (size_t i = 0; i < NFX; i++)
    nodes[i].family_id = nodes[i].qual && nodes[i].qual[0] == 'q' ? s->a : s->b;
}

static void test_filter_expr(void **state) {
  (void)state;
  st s;
  st_open(&s, 0);
  fill(&s);
  kv_fx_node nodes[NFX];
  fx_families(&s, nodes);
  kv_filter_expr e = {nodes, NFX};
  assert_int_equal(kv_filter_expr_check(&e), KV_OK);
  uint32_t fams[2] = {s.a, s.b};
  int got[NROWS];
  for (int rev = 0; rev < 2; rev++) {
    kv_scan_options o = {.family_ids = fams, .n_families = 2, .reverse = rev};
    kv_backend_read x = {.filter_expr = &e};
    int n = scan_rows(&s, &o, &x, got, NULL), k = 0;
    for (int j = 0; j < NROWS; j++) {
      int i = rev ? NROWS - 1 - j : j;
      if (!fx_model(i)) continue;
      assert_true(k < n);
      assert_int_equal(got[k++], i);
    }
    assert_int_equal(k, n);
    assert_true(n > 10);
  }
  /* the byte form: round trip, then damage */
  uint8_t buf[256];
  size_t len = kv_filter_expr_encode(&e, buf, sizeof buf);
  assert_true(len > 4 && len <= sizeof buf);
  assert_int_equal(kv_filter_expr_encode(&e, buf, 3), len); /* the size needed, whatever cap */
  kv_fx_node back[NFX];
  kv_filter_expr d;
  assert_int_equal(kv_filter_expr_decode(buf, len, back, NFX, &d), KV_OK);
  assert_int_equal(d.n_nodes, NFX);
  uint8_t again[256];
  assert_int_equal(kv_filter_expr_encode(&d, again, sizeof again), len);
  assert_memory_equal(again, buf, len);
  assert_int_equal(kv_filter_expr_decode(buf, len - 1, back, NFX, &d), KV_ERR_CORRUPT);
  assert_non_null(strstr(kv_errmsg(), "cut short"));
  assert_int_equal(kv_filter_expr_decode(buf, len, back, NFX - 1, &d), KV_ERR_TOOBIG);
  buf[0] = 'X';
  assert_int_equal(kv_filter_expr_decode(buf, len, back, NFX, &d), KV_ERR_CORRUPT);
  buf[0] = 'R';
  buf[4] = 0x7f; /* more nodes than the bytes hold */
  kv_fx_node room[128];
  assert_int_equal(kv_filter_expr_decode(buf, len, room, 128, &d), KV_ERR_CORRUPT);
  /* bad shapes */
  kv_fx_node bad[2] = {{.kind = KV_FX_NOT, .n_children = 2}, {.kind = KV_FX_PRESENT}};
  kv_filter_expr be = {bad, 2};
  assert_int_equal(kv_filter_expr_check(&be), KV_ERR_INVALID);
  bad[0].n_children = 1;
  bad[0].kind = 9;
  assert_int_equal(kv_filter_expr_check(&be), KV_ERR_INVALID);
  assert_non_null(strstr(kv_errmsg(), "node 0 has unknown kind 9"));
  bad[0].kind = KV_FX_PRESENT;
  bad[0].n_children = 0;
  assert_int_equal(kv_filter_expr_check(&be), KV_ERR_INVALID); /* node 1 outside the tree */
  /* a callback and an expression together */
  kv_scan_options o = {.family_ids = fams, .n_families = 2, .filter = kv_filter_expr_eval,
                       .filter_ctx = &e};
  kv_backend_read x = {.filter_expr = &e};
  kv_backend_scan *sc;
  assert_int_equal(kv_be_scan_open(&s.be, &o, &x, &sc), KV_ERR_INVALID);
  st_close(&s);
}

/* Threads that add 1 to a counter cell by check-and-write (read it, write value + 1 if it
** still holds what was read) while others write other rows: every applied increment
** counts, none is lost. */
#define CW_THREADS 4
#define CW_TRIES 500

typedef struct cw_arg {
  st *s;        /* the store */
  int id;       /* thread number */
  int applied;  /* increments applied */
} cw_arg;

static void *cw_thread(void *p) {
  cw_arg *a = p;
  st *s = a->s;
  kv_batch *b = kv_batch_new();
  for (int i = 0; i < CW_TRIES; i++) {
    char cur[16];
    value_of(s, "ctr", cur); /* "" the first time */
    int n = cur[0] ? atoi(cur) : 0;
    char next[16], other[16];
    snprintf(next, sizeof next, "%d", n + 1);
    snprintf(other, sizeof other, "o%d-%d", a->id, i);
    kv_batch_clear(b);
    if (kv_batch_put(b, s->a, "ctr", 3, "q", 1, KV_TS_NOW, next, strlen(next)) != KV_OK) abort();
    if (kv_batch_put(b, s->a, other, strlen(other), "q", 1, KV_TS_NOW, "x", 1) != KV_OK) abort();
    kv_backend_check chk = {s->a, (const uint8_t *)"ctr", 3, (const uint8_t *)"q", 1,
                            cur[0] ? (const uint8_t *)cur : NULL, (uint32_t)strlen(cur)};
    bool applied = false;
    if (kv_be_check_and_write(&s->be, &chk, b, &applied, NULL) != KV_OK) abort();
    a->applied += applied;
    kv_batch_clear(b); /* a plain write beside them */
    snprintf(other, sizeof other, "p%d-%d", a->id, i);
    if (kv_batch_put(b, s->b, other, strlen(other), "n", 1, KV_TS_NOW, "y", 1) != KV_OK) abort();
    if (kv_be_write(&s->be, b, NULL) != KV_OK) abort();
  }
  kv_batch_free(b);
  return NULL;
}

static void test_check_and_write_threads(void **state) {
  (void)state;
  st s;
  st_open(&s, 0);
  pthread_t th[CW_THREADS];
  cw_arg args[CW_THREADS];
  for (int i = 0; i < CW_THREADS; i++) {
    args[i] = (cw_arg){&s, i, 0};
    assert_int_equal(pthread_create(&th[i], NULL, cw_thread, &args[i]), 0);
  }
  int applied = 0;
  for (int i = 0; i < CW_THREADS; i++) {
    assert_int_equal(pthread_join(th[i], NULL), 0);
    applied += args[i].applied;
  }
  char v[16];
  value_of(&s, "ctr", v);
  assert_int_equal(atoi(v), applied);
  assert_true(applied >= CW_TRIES); /* each round has a winner */
  /* the applied batches' other rows are there, the refused ones' are not */
  uint32_t fams[1] = {s.a};
  kv_range orows = {(const uint8_t *)"o", 1, true, (const uint8_t *)"p", 1, false};
  kv_scan_options o = {.family_ids = fams, .n_families = 1, .ranges = &orows, .n_ranges = 1};
  kv_backend_scan *sc;
  assert_int_equal(kv_be_scan_open(&s.be, &o, NULL, &sc), KV_OK);
  kv_row row;
  int n = 0;
  while (kv_be_scan_next(&s.be, sc, &row) == KV_OK) n++;
  kv_be_scan_close(&s.be, sc);
  assert_int_equal(n, applied);
  st_close(&s);
}

typedef struct splits {
  char key[8][8]; /* keys given */
  int n;          /* their count */
} splits;

static void on_split(void *ctx, const uint8_t *key, uint32_t len) {
  splits *sp = ctx;
  assert_true(sp->n < 8 && len == 4);
  memcpy(sp->key[sp->n], key, 4);
  sp->key[sp->n++][4] = 0;
}

/* The chunks [start, p0), [p0, p1), [p1, p2), [p2, end) of family a at sp's three cuts:
** keys ascending, each about a quarter of the rows, summing up to all of them. */
static void check_quarters(st *s, const splits *sp) {
  uint32_t fams[1] = {s->a};
  int got[NROWS], total = 0;
  for (int c = 0; c <= sp->n; c++) {
    kv_range r = {c ? (const uint8_t *)sp->key[c - 1] : NULL, c ? 4 : 0, true,
                  c < sp->n ? (const uint8_t *)sp->key[c] : NULL, c < sp->n ? 4 : 0, false};
    if (c) assert_true(c == sp->n || strcmp(sp->key[c - 1], sp->key[c]) < 0);
    kv_scan_options o = {.family_ids = fams, .n_families = 1, .ranges = &r, .n_ranges = 1};
    int n = scan_rows(s, &o, NULL, got, NULL);
    assert_true(n >= NROWS / 8 && n <= NROWS / 2);
    total += n;
  }
  assert_int_equal(total, NROWS);
}

static void test_split_points(void **state) {
  (void)state;
  st s;
  st_open(&s, 64); /* small blocks: many per family */
  splits sp = {0};
  assert_int_equal(kv_be_split_points(&s.be, s.a, 4, on_split, &sp), KV_OK);
  assert_int_equal(sp.n, 0); /* no store file yet */
  fill(&s);
  assert_int_equal(kv_be_flush(&s.be, "t"), KV_OK);
  uint64_t rows = 0, bytes = 0;
  assert_int_equal(kv_be_estimate(&s.be, s.a, NULL, NULL, &rows, &bytes), KV_OK);
  assert_int_equal(rows, NROWS);
  assert_true(bytes > 0);
  kv_range half = {(const uint8_t *)"r050", 4, true, NULL, 0, false};
  assert_int_equal(kv_be_estimate(&s.be, s.a, &half, NULL, &rows, &bytes), KV_OK);
  assert_true(rows >= 40 && rows <= 60);
  assert_int_equal(kv_be_split_points(&s.be, s.a, 4, on_split, &sp), KV_OK);
  assert_int_equal(sp.n, 3);
  check_quarters(&s, &sp);
  /* a second file over the same keys: the blocks come file by file, out of key order, and
     are sorted before the cuts (kv_block_keys) */
  fill(&s);
  assert_int_equal(kv_be_flush(&s.be, "t"), KV_OK);
  sp.n = 0;
  assert_int_equal(kv_be_split_points(&s.be, s.a, 4, on_split, &sp), KV_OK);
  assert_int_equal(sp.n, 3);
  check_quarters(&s, &sp);
  sp.n = 0;
  assert_int_equal(kv_be_split_points(&s.be, s.a, 1, on_split, &sp), KV_OK);
  assert_int_equal(sp.n, 0);
  assert_int_equal(kv_be_split_points(&s.be, 9999, 4, on_split, &sp), KV_ERR_NOTFOUND);
  st_close(&s);
}

typedef struct walk {
  char text[256]; /* the ops as text */
  size_t len;     /* its length */
} walk;

static int on_op(void *ctx, const kv_batch_op *op) {
  walk *w = ctx;
  w->len += (size_t)snprintf(w->text + w->len, sizeof w->text - w->len,
                             "%d:%u:%.*s:%.*s:%lld:%.*s;", op->type, op->family_id,
                             (int)op->row_len, (const char *)op->row, (int)op->qual_len,
                             (const char *)op->qual, (long long)op->ts,
                             (int)op->value_len, op->value ? (const char *)op->value : "");
  return 0;
}

static void test_batch_each(void **state) {
  (void)state;
  kv_batch *b = kv_batch_new();
  assert_int_equal(kv_batch_put(b, 3, "r1", 2, "q", 1, 10, "v", 1), KV_OK);
  assert_int_equal(kv_batch_delete(b, 4, KV_DELETE_FAMILY, "r2", 2, NULL, 0, KV_TS_NOW), KV_OK);
  walk w = {{0}, 0};
  assert_int_equal(kv_backend_batch_each(b, on_op, &w), KV_OK);
  char want[128];
  snprintf(want, sizeof want, "0:3:r1:q:10:v;3:4:r2::%lld:;", (long long)KV_TS_NOW);
  assert_string_equal(w.text, want);
  assert_int_equal(kv_backend_batch_each(NULL, on_op, &w), KV_MISUSE);
  kv_batch_free(b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_caps),          cmocka_unit_test(test_ddl),
    cmocka_unit_test(test_get),           cmocka_unit_test(test_ranges),
    cmocka_unit_test(test_resume),        cmocka_unit_test(test_check_and_write),
    cmocka_unit_test(test_idempotent),    cmocka_unit_test(test_filter_expr),
    cmocka_unit_test(test_check_and_write_threads),
    cmocka_unit_test(test_split_points),  cmocka_unit_test(test_batch_each),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
