/*
** tests/exec/test_rowcodec.c: exec/rowcodec.h over a real store (in-memory env): random rows
** of every column type (key columns ASC and DESC, nullable and not, non-key columns spread
** over three families) written with exec_row_put, committed, read back by a scan and by
** kv_get, decoded with full and random partial column masks; partial updates (set masks,
** NULL deleting a cell), row deletes, the marker cell, newest-version choice, two-byte
** qualifiers, copying into an arena, and every error (NULL key, NOT NULL, out of range,
** too long, type mismatch, corrupt cells).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../catalog/gen.h"
#include "catalog/catalog.h"
#include "catalog/value.h"
#include "exec/rowcodec.h"
#include "kv/env/env_mem.h"
#include "planner/plan.h"
#include "testutil.h"

typedef struct store {
  kv_env *env;      /* in-memory file system */
  kv_db *db;        /* the store */
  cat_catalog *cat; /* its catalog */
} store;

static void open_store(store *s) {
  s->env = kv_env_mem_new(0);
  kv_options o;
  kv_options_init(&o);
  o.env = s->env;
  o.create_if_missing = true;
  if (kv_open("/db", &o, &s->db)) fail_msg("kv_open: %s", kv_errmsg());
  cat_error err = {0};
  if (cat_open(s->db, &s->cat, &err)) fail_msg("cat_open: %s", err.msg);
}

static void close_store(store *s) {
  cat_close(s->cat);
  kv_close(s->db);
  kv_env_free(s->env);
}

/* Table NAME: PK (K <key type> [DESC], ID BIGINT), then one non-key column per gen type
** (C0..C14) in families "0", "A", "B" by turn; C0 is NOT NULL. K nullable if asked. */
static const cat_table *make_table(store *s, const char *name, const cat_type *key_type,
                                   bool desc, bool key_nullable) {
  cat_column_def cols[2 + GEN_NTYPES];
  static char names[GEN_NTYPES][8];
  static const char *const fams[] = {NULL, "A", "B"};
  cols[0] = (cat_column_def){"K", NULL, *key_type, key_nullable ? 1 : 0};
  cols[1] = (cat_column_def){"ID", NULL, cat_type_of(CAT_T_BIGINT), 0};
  for (int i = 0; i < GEN_NTYPES; i++) {
    snprintf(names[i], sizeof names[i], "C%d", i);
    cols[2 + i] = (cat_column_def){names[i], fams[i % 3], gen_types[i], i == 0 ? 2 : 0};
  }
  const char *const pk[] = {"K", "ID"};
  const bool pk_desc[] = {desc, false};
  cat_table_def def = {0};
  def.name = name;
  def.columns = cols;
  def.n_columns = 2 + GEN_NTYPES;
  def.pk = pk;
  def.pk_desc = pk_desc;
  def.n_pk = 2;
  const cat_table *t = NULL;
  cat_error err = {0};
  if (cat_create_table(s->cat, &def, &t, &err)) fail_msg("create %s: %s", name, err.msg);
  return t;
}

/* Every family id of t, key family first. */
static uint32_t all_families(const cat_table *t, uint32_t *ids) {
  for (int f = 0; f < t->n_families; f++) ids[f] = t->families[f].kv_id;
  return (uint32_t)t->n_families;
}

static bool same_value(const cat_value *a, const cat_value *b) {
  if (a->is_null || b->is_null) return a->is_null == b->is_null;
  if (a->type.id != b->type.id) return false;
  int c = 1;
  if (cat_value_compare(a, b, &c, NULL) != CAT_OK) return false;
  if (c != 0) return false;
  if (a->type.id == CAT_T_DECIMAL && a->type.precision) return a->u.dec.scale == b->u.dec.scale;
  return true;
}

static void expect_same(const cat_table *t, int col, const cat_value *got,
                        const cat_value *want, uint64_t seed) {
  if (!same_value(got, want)) {
    char g[200], w[200];
    fail_msg("seed %llu: column %s: got %s, want %s", (unsigned long long)seed,
             t->columns[col].name, gen_show(got, g, sizeof g), gen_show(want, w, sizeof w));
  }
  if (!got->is_null) assert_int_equal(got->type.id, t->columns[col].type.id);
}

#define NCOLS (2 + GEN_NTYPES)

/* A random row for t: K random (NULL sometimes if nullable), ID = id, non-key columns random
** or NULL (never NULL for C0). */
static void random_row(const cat_table *t, uint64_t *rng, gen_arena *a, int64_t id,
                       cat_value *row) {
  const cat_column *k = &t->columns[0];
  row[0] = k->nullable && tu_below(rng, 8) == 0 ? cat_v_null(k->type)
                                                : gen_random(&k->type, rng, a);
  row[1] = cat_v_int(CAT_T_BIGINT, id);
  for (int i = 2; i < NCOLS; i++) {
    const cat_type *ty = &t->columns[i].type;
    row[i] = (i > 2 && tu_below(rng, 4) == 0) ? cat_v_null(*ty) : gen_random(ty, rng, a);
  }
}

/* Round trip: for every key type, ASC and DESC, write random rows, scan them back (forward),
** decode all columns and random subsets; then kv_get of each row by exec_row_key. */
static void test_round_trip(void **state) {
  (void)state;
  uint64_t seed = tu_seed("rowcodec_round_trip"), rng = seed;
  int nrows = (int)tu_scaled(200, 30);
  store s;
  open_store(&s);
  gen_arena a = {malloc(1 << 22), 1 << 22, 0};
  cat_value *rows = calloc((size_t)nrows * NCOLS, sizeof *rows);
  int tables = 0;
  for (int ti = 0; ti < GEN_NTYPES; ti++) {
    for (int variant = 0; variant < 2; variant++) {
      char name[16];
      snprintf(name, sizeof name, "T%d_%d", ti, variant);
      const cat_table *t = make_table(&s, name, &gen_types[ti], variant == 1, variant == 1);
      tables++;
      exec_rowcodec rc;
      exec_error err = {0};
      assert_int_equal(exec_rowcodec_init(&rc, t, &err), EXEC_OK);
      kv_batch *b = kv_batch_new();
      a.used = 0;
      for (int r = 0; r < nrows; r++) {
        random_row(t, &rng, &a, r, rows + (size_t)r * NCOLS);
        if (exec_row_put(&rc, rows + (size_t)r * NCOLS, NULL, KV_TS_NOW, b, &err))
          fail_msg("seed %llu: put: %s", (unsigned long long)seed, err.msg);
      }
      assert_int_equal(kv_commit(s.db, b, NULL), KV_OK);
      kv_batch_free(b);

      uint32_t fams[8];
      kv_scan_options so = {0};
      so.family_ids = fams;
      so.n_families = all_families(t, fams);
      kv_scan *sc;
      assert_int_equal(kv_scan_open(s.db, &so, &sc), KV_OK);
      kv_row kr;
      int seen = 0;
      cat_value got[NCOLS];
      bool need[NCOLS];
      while (kv_scan_next(sc, &kr) == KV_OK) {
        /* Full decode; ID says which row it is; rows with equal K come out by ID (asc). */
        assert_int_equal(exec_row_decode(&rc, &kr, NULL, got, NULL, &err), EXEC_OK);
        int64_t id = got[1].u.i;
        assert_true(id >= 0 && id < nrows);
        const cat_value *want = rows + (size_t)id * NCOLS;
        for (int i = 0; i < NCOLS; i++) expect_same(t, i, &got[i], &want[i], seed);
        /* A random mask: needed slots right, others untouched. */
        for (int i = 0; i < NCOLS; i++) {
          need[i] = tu_below(&rng, 2);
          got[i] = cat_v_bool(true);
        }
        assert_int_equal(exec_row_decode(&rc, &kr, need, got, NULL, &err), EXEC_OK);
        for (int i = 0; i < NCOLS; i++) {
          if (need[i]) expect_same(t, i, &got[i], &want[i], seed);
          else assert_true(!got[i].is_null && got[i].type.id == CAT_T_BOOLEAN && got[i].u.b);
        }
        /* The same mask prepared (exec_rowcodec_prepare: the table-driven path), the same
           array with other contents prepared again: the same values, type for type. */
        for (int pass = 0; pass < 2; pass++) {
          if (pass == 1)
            for (int i = 0; i < NCOLS; i++) need[i] = tu_below(&rng, 2);
          exec_rowcodec_prepare(&rc, need, NULL);
          for (int i = 0; i < NCOLS; i++) got[i] = cat_v_bool(true);
          assert_int_equal(exec_row_decode(&rc, &kr, need, got, NULL, &err), EXEC_OK);
          for (int i = 0; i < NCOLS; i++) {
            if (need[i]) {
              expect_same(t, i, &got[i], &want[i], seed);
              assert_int_equal(got[i].type.id, t->columns[i].type.id);
            } else {
              assert_true(!got[i].is_null && got[i].type.id == CAT_T_BOOLEAN && got[i].u.b);
            }
          }
        }
        exec_rowcodec_prepare(&rc, NULL, NULL);
        seen++;
      }
      kv_scan_close(sc);
      assert_int_equal(seen, nrows);

      /* Point reads by the key exec_row_key builds. */
      for (int r = 0; r < nrows; r++) {
        uint8_t key[256];
        size_t klen;
        assert_int_equal(exec_row_key(&rc, rows + (size_t)r * NCOLS, key, sizeof key, &klen, &err),
                         EXEC_OK);
        assert_int_equal(klen, rc.key_len);
        assert_memory_equal(key, rc.key, klen);
        kv_scan *g;
        assert_int_equal(kv_get(s.db, &so, key, klen, &g, &kr), KV_OK);
        assert_int_equal(exec_row_decode(&rc, &kr, NULL, got, NULL, &err), EXEC_OK);
        for (int i = 0; i < NCOLS; i++) expect_same(t, i, &got[i], &rows[(size_t)r * NCOLS + i], seed);
        kv_scan_close(g);
      }
      exec_rowcodec_free(&rc);
    }
  }
  assert_int_equal(tables, 2 * GEN_NTYPES);
  free(rows);
  free(a.buf);
  close_store(&s);
}

/* Edge values of every type in non-key columns and in the key, DESC included. */
static void test_edge_values(void **state) {
  (void)state;
  store s;
  open_store(&s);
  gen_arena a = {malloc(1 << 16), 1 << 16, 0};
  for (int ti = 0; ti < GEN_NTYPES; ti++) {
    char name[16];
    snprintf(name, sizeof name, "E%d", ti);
    const cat_table *t = make_table(&s, name, &gen_types[ti], ti % 2 == 1, false);
    exec_rowcodec rc;
    exec_error err = {0};
    assert_int_equal(exec_rowcodec_init(&rc, t, &err), EXEC_OK);
    cat_value row[NCOLS], got[NCOLS];
    for (int e = 0;; e++) {
      a.used = 0;
      if (!gen_edge(&gen_types[ti], e, &a, &row[0])) break;
      row[1] = cat_v_int(CAT_T_BIGINT, e);
      for (int i = 2; i < NCOLS; i++) {
        int k = e;
        while (k > 0 && !gen_edge(&gen_types[i - 2], k, &a, &row[i])) k--;
        if (k == 0) assert_true(gen_edge(&gen_types[i - 2], 0, &a, &row[i]));
      }
      kv_batch *b = kv_batch_new();
      if (exec_row_put(&rc, row, NULL, KV_TS_NOW, b, &err)) fail_msg("put: %s", err.msg);
      assert_int_equal(kv_commit(s.db, b, NULL), KV_OK);
      kv_batch_free(b);
      uint32_t fams[8];
      kv_scan_options so = {0};
      so.family_ids = fams;
      so.n_families = all_families(t, fams);
      kv_scan *g;
      kv_row kr;
      assert_int_equal(kv_get(s.db, &so, rc.key, rc.key_len, &g, &kr), KV_OK);
      assert_int_equal(exec_row_decode(&rc, &kr, NULL, got, NULL, &err), EXEC_OK);
      for (int i = 0; i < NCOLS; i++) expect_same(t, i, &got[i], &row[i], 0);
      kv_scan_close(g);
    }
    exec_rowcodec_free(&rc);
  }
  free(a.buf);
  close_store(&s);
}

/* Read row with key of r through the given families (NULL = all); decode into got. Returns
** false if the row has no visible cell there. */
static bool read_row(store *s, exec_rowcodec *rc, const cat_value *r, const uint32_t *fams,
                     uint32_t nf, cat_value *got, kv_scan **g) {
  uint32_t all[8];
  exec_error err = {0};
  kv_scan_options so = {0};
  if (!fams) {
    nf = all_families(rc->table, all);
    fams = all;
  }
  so.family_ids = fams;
  so.n_families = nf;
  so.max_versions = 5;
  assert_int_equal(exec_row_key(rc, r, NULL, 0, NULL, &err), EXEC_OK);
  kv_row kr;
  int k = kv_get(s->db, &so, rc->key, rc->key_len, g, &kr);
  if (k == KV_ERR_NOTFOUND) return false;
  assert_int_equal(k, KV_OK);
  assert_int_equal(exec_row_decode(rc, &kr, NULL, got, NULL, &err), EXEC_OK);
  return true;
}

static void commit_put(store *s, exec_rowcodec *rc, const cat_value *row, const bool *set,
                       int64_t ts) {
  exec_error err = {0};
  kv_batch *b = kv_batch_new();
  if (exec_row_put(rc, row, set, ts, b, &err)) fail_msg("put: %s", err.msg);
  assert_int_equal(kv_commit(s->db, b, NULL), KV_OK);
  kv_batch_free(b);
}

/* A table for the focused tests: PK (ID INTEGER), N INTEGER NOT NULL, T TINYINT, V
** VARCHAR(3) in family A, D DOUBLE in family B (VERSIONS 3), C CHAR(4). */
static const cat_table *small_table(store *s) {
  const cat_column_def cols[] = {{"ID", NULL, cat_type_of(CAT_T_INTEGER), 0},
                                 {"N", NULL, cat_type_of(CAT_T_INTEGER), 2},
                                 {"T", NULL, cat_type_of(CAT_T_TINYINT), 0},
                                 {"V", "A", {CAT_T_VARCHAR, 0, 0, 3, 0}, 0},
                                 {"D", "B", cat_type_of(CAT_T_DOUBLE), 0},
                                 {"C", NULL, {CAT_T_CHAR, 0, 0, 4, 0}, 0}};
  const char *const pk[] = {"ID"};
  const cat_family_def fd[] = {{"B", 3, KV_COMPRESSION_LZ4, 0}};
  cat_table_def def = {0};
  def.name = "SMALL";
  def.columns = cols;
  def.n_columns = 6;
  def.pk = pk;
  def.n_pk = 1;
  def.families = fd;
  def.n_families = 1;
  const cat_table *t = NULL;
  cat_error err = {0};
  if (cat_create_table(s->cat, &def, &t, &err)) fail_msg("create: %s", err.msg);
  return t;
}

/* Set masks: unset columns keep their value, set NULL deletes the cell; the marker keeps a
** row with only NULLs; delete removes every family; newest version wins. */
static void test_updates(void **state) {
  (void)state;
  store s;
  open_store(&s);
  const cat_table *t = small_table(&s);
  exec_rowcodec rc;
  exec_error err = {0};
  assert_int_equal(exec_rowcodec_init(&rc, t, &err), EXEC_OK);
  cat_value row[6] = {cat_v_int(CAT_T_INTEGER, 7), cat_v_int(CAT_T_INTEGER, 1),
                      cat_v_int(CAT_T_TINYINT, -5), cat_v_str(CAT_T_VARCHAR, "ab", 2),
                      cat_v_double(2.5), cat_v_str(CAT_T_CHAR, "xy  ", 4)};
  commit_put(&s, &rc, row, NULL, 1000);
  cat_value got[6];
  kv_scan *g;
  assert_true(read_row(&s, &rc, row, NULL, 0, got, &g));
  assert_int_equal(got[5].u.s.len, 2); /* CHAR trailing spaces dropped */
  assert_memory_equal(got[5].u.s.p, "xy", 2);
  kv_scan_close(g);

  /* Update only D (newer version) and V to NULL. */
  cat_value upd[6];
  memcpy(upd, row, sizeof upd);
  upd[3] = cat_v_null(t->columns[3].type);
  upd[4] = cat_v_double(-1.0);
  upd[1] = cat_v_null(t->columns[1].type); /* not set: the NOT NULL check does not apply */
  bool set[6] = {false, false, false, true, true, false};
  commit_put(&s, &rc, upd, set, 2000);
  assert_true(read_row(&s, &rc, row, NULL, 0, got, &g));
  assert_int_equal(got[1].u.i, 1);
  assert_int_equal(got[2].u.i, -5);
  assert_true(got[3].is_null);
  assert_true(got[4].u.d == -1.0); /* the newest of two versions in family B */
  assert_memory_equal(got[5].u.s.p, "xy", 2);
  kv_scan_close(g);

  /* Everything nullable set to NULL: the row still exists through its marker. */
  cat_value nul[6] = {row[0], row[1], cat_v_null(t->columns[2].type),
                      cat_v_null(t->columns[3].type), cat_v_null(t->columns[4].type),
                      cat_v_null(t->columns[5].type)};
  bool set2[6] = {false, false, true, true, true, true};
  commit_put(&s, &rc, nul, set2, 3000);
  uint32_t only_a = t->families[cat_find_family(t, "A")].kv_id;
  assert_false(read_row(&s, &rc, row, &only_a, 1, got, &g)); /* no cell in A */
  kv_scan_close(g);
  uint32_t key_and_a[2] = {t->families[0].kv_id, only_a};
  assert_true(read_row(&s, &rc, row, key_and_a, 2, got, &g));
  assert_int_equal(got[0].u.i, 7);
  for (int i = 2; i < 6; i++) assert_true(got[i].is_null);
  kv_scan_close(g);

  /* Delete: gone in every family. */
  kv_batch *b = kv_batch_new();
  assert_int_equal(exec_row_delete(&rc, rc.key, rc.key_len, 4000, b, &err), EXEC_OK);
  assert_int_equal(kv_batch_count(b), (size_t)t->n_families);
  assert_int_equal(kv_commit(s.db, b, NULL), KV_OK);
  kv_batch_free(b);
  assert_false(read_row(&s, &rc, row, NULL, 0, got, &g));
  kv_scan_close(g);
  b = kv_batch_new();
  assert_int_equal(exec_row_delete(&rc, rc.key, 0, 4000, b, &err), EXEC_ERROR);
  kv_batch_free(b);
  exec_rowcodec_free(&rc);
  close_store(&s);
}

static void expect_put_error(exec_rowcodec *rc, const cat_value *row, const bool *set, int code,
                             const char *w1, const char *w2) {
  exec_error err = {0};
  kv_batch *b = kv_batch_new();
  int r = exec_row_put(rc, row, set, KV_TS_NOW, b, &err);
  if (r != code) fail_msg("want code %d, got %d (%s)", code, r, err.msg);
  assert_int_equal(err.code, code);
  if (!strstr(err.msg, w1) || (w2 && !strstr(err.msg, w2)))
    fail_msg("message '%s' should name '%s' and '%s'", err.msg, w1, w2 ? w2 : "");
  assert_int_equal(kv_batch_count(b), 0); /* nothing added */
  kv_batch_free(b);
}

/* Errors name the column and the value; conversions that fit are accepted. */
static void test_errors(void **state) {
  (void)state;
  store s;
  open_store(&s);
  const cat_table *t = small_table(&s);
  exec_rowcodec rc;
  exec_error err = {0};
  assert_int_equal(exec_rowcodec_init(&rc, t, &err), EXEC_OK);
  cat_value ok[6] = {cat_v_int(CAT_T_INTEGER, 1), cat_v_int(CAT_T_INTEGER, 1),
                     cat_v_int(CAT_T_TINYINT, 1), cat_v_str(CAT_T_VARCHAR, "a", 1),
                     cat_v_double(1), cat_v_str(CAT_T_CHAR, "c", 1)};
  cat_value r[6];
  memcpy(r, ok, sizeof r);
  r[0] = cat_v_null(t->columns[0].type);
  expect_put_error(&rc, r, NULL, EXEC_CONSTRAINT, "ID", "NULL");
  memcpy(r, ok, sizeof r);
  r[1] = cat_v_null(t->columns[1].type);
  expect_put_error(&rc, r, NULL, EXEC_CONSTRAINT, "column N", "NULL");
  memcpy(r, ok, sizeof r);
  r[2] = cat_v_int(CAT_T_INTEGER, 300); /* cast to TINYINT fails */
  expect_put_error(&rc, r, NULL, EXEC_CONSTRAINT, "column T", "300");
  memcpy(r, ok, sizeof r);
  r[3] = cat_v_str(CAT_T_VARCHAR, "abcd", 4);
  expect_put_error(&rc, r, NULL, EXEC_CONSTRAINT, "column V", "abcd");
  memcpy(r, ok, sizeof r);
  r[0] = cat_v_int(CAT_T_BIGINT, 5000000000LL); /* key out of INTEGER range */
  expect_put_error(&rc, r, NULL, EXEC_CONSTRAINT, "column ID", "5000000000");
  memcpy(r, ok, sizeof r);
  r[4] = cat_v_bool(true);
  expect_put_error(&rc, r, NULL, EXEC_ERROR, "column D", NULL);
  memcpy(r, ok, sizeof r);
  r[2] = cat_v_str(CAT_T_VARCHAR, "x1", 2); /* not a TINYINT literal */
  expect_put_error(&rc, r, NULL, EXEC_CONSTRAINT, "column T", "x1");
  /* An unset bad value is not looked at. */
  bool set[6] = {true, true, false, true, true, true};
  kv_batch *b = kv_batch_new();
  r[2] = cat_v_int(CAT_T_INTEGER, 300);
  assert_int_equal(exec_row_put(&rc, r, set, KV_TS_NOW, b, &err), EXEC_OK);
  kv_batch_free(b);
  /* Conversions that fit: INTEGER 5 into DOUBLE, '12' into TINYINT, DOUBLE 3.0 key. */
  memcpy(r, ok, sizeof r);
  r[0] = cat_v_double(3.0);
  r[2] = cat_v_str(CAT_T_VARCHAR, "12", 2);
  r[4] = cat_v_int(CAT_T_INTEGER, 5);
  commit_put(&s, &rc, r, NULL, KV_TS_NOW);
  cat_value got[6];
  kv_scan *g;
  assert_true(read_row(&s, &rc, r, NULL, 0, got, &g));
  assert_int_equal(got[0].u.i, 3);
  assert_int_equal(got[2].u.i, 12);
  assert_true(got[4].type.id == CAT_T_DOUBLE && got[4].u.d == 5.0);
  kv_scan_close(g);
  /* exec_row_key into a short buffer. */
  size_t klen;
  uint8_t small[2];
  assert_int_equal(exec_row_key(&rc, r, small, sizeof small, &klen, &err), EXEC_TOOBIG);

  /* A corrupt cell (INTEGER with 3 bytes) is EXEC_CORRUPT naming the column. */
  b = kv_batch_new();
  uint8_t q[2];
  size_t ql = cat_column_qualifier(t->columns[1].id, q);
  assert_int_equal(exec_row_key(&rc, r, NULL, 0, NULL, &err), EXEC_OK);
  assert_int_equal(kv_batch_put(b, t->families[1].kv_id, rc.key, rc.key_len, q, ql, KV_TS_NOW,
                                "abc", 3), KV_OK);
  assert_int_equal(kv_commit(s.db, b, NULL), KV_OK);
  kv_batch_free(b);
  uint32_t fams[8];
  kv_scan_options so = {0};
  so.family_ids = fams;
  so.n_families = all_families(t, fams);
  kv_row kr;
  assert_int_equal(kv_get(s.db, &so, rc.key, rc.key_len, &g, &kr), KV_OK);
  assert_int_equal(exec_row_decode(&rc, &kr, NULL, got, NULL, &err), EXEC_CORRUPT);
  assert_non_null(strstr(err.msg, "N"));
  kv_scan_close(g);
  /* A corrupt key. */
  kv_row bad = {(const uint8_t *)"\x01", 1, NULL, 0};
  assert_int_equal(exec_row_decode(&rc, &bad, NULL, got, NULL, &err), EXEC_CORRUPT);
  exec_rowcodec_free(&rc);
  close_store(&s);
}

/* Over 127 non-key columns: two-byte qualifiers decode to the right columns; strings copied
** into an arena outlive the scan. */
static void test_wide_and_copy(void **state) {
  (void)state;
  store s;
  open_store(&s);
  enum { NW = 300 };
  cat_column_def cols[NW];
  static char names[NW][8];
  for (int i = 0; i < NW; i++) {
    snprintf(names[i], sizeof names[i], "W%d", i);
    cols[i] = (cat_column_def){names[i], i % 2 ? "F" : NULL,
                               i == 0 ? (cat_type){CAT_T_VARCHAR, 0, 0, 0, 0}
                                      : (cat_type){CAT_T_VARCHAR, 0, 0, 0, 0}, 0};
  }
  const char *const pk[] = {"W0"};
  cat_table_def def = {0};
  def.name = "WIDE";
  def.columns = cols;
  def.n_columns = NW;
  def.pk = pk;
  def.n_pk = 1;
  const cat_table *t = NULL;
  cat_error ce = {0};
  if (cat_create_table(s.cat, &def, &t, &ce)) fail_msg("create: %s", ce.msg);
  exec_rowcodec rc;
  exec_error err = {0};
  assert_int_equal(exec_rowcodec_init(&rc, t, &err), EXEC_OK);
  assert_true(rc.max_id >= 128);
  static char text[4][NW][12];
  cat_value row[NW];
  kv_batch *b = kv_batch_new();
  for (int r = 0; r < 4; r++) {
    for (int i = 0; i < NW; i++) {
      int n = snprintf(text[r][i], sizeof text[r][i], "r%d\x01%d", r, i);
      row[i] = (i + r) % 7 == 3 ? cat_v_null(t->columns[i].type)
                                : cat_v_str(CAT_T_VARCHAR, text[r][i], (size_t)n);
    }
    row[0] = cat_v_str(CAT_T_VARCHAR, text[r][0], strlen(text[r][0]));
    assert_int_equal(exec_row_put(&rc, row, NULL, KV_TS_NOW, b, &err), EXEC_OK);
  }
  assert_int_equal(kv_commit(s.db, b, NULL), KV_OK);
  kv_batch_free(b);
  uint32_t fams[8];
  kv_scan_options so = {0};
  so.family_ids = fams;
  so.n_families = all_families(t, fams);
  kv_scan *sc;
  assert_int_equal(kv_scan_open(s.db, &so, &sc), KV_OK);
  plan_arena arena;
  plan_arena_init(&arena);
  static cat_value kept[4][NW];
  kv_row kr;
  int r = 0;
  while (kv_scan_next(sc, &kr) == KV_OK) {
    assert_true(r < 4);
    assert_int_equal(exec_row_decode(&rc, &kr, NULL, kept[r], &arena, &err), EXEC_OK);
    r++;
  }
  kv_scan_close(sc); /* the row memory is gone; the copies must stay */
  assert_int_equal(r, 4);
  for (r = 0; r < 4; r++) /* keys "r0.." .. "r3.." come out in order */
    for (int i = 0; i < NW; i++) {
      if (i > 0 && (i + r) % 7 == 3) {
        assert_true(kept[r][i].is_null);
        continue;
      }
      assert_false(kept[r][i].is_null);
      assert_int_equal(kept[r][i].u.s.len, strlen(text[r][i]));
      assert_memory_equal(kept[r][i].u.s.p, text[r][i], kept[r][i].u.s.len);
    }
  plan_arena_free(&arena);
  exec_rowcodec_free(&rc);
  close_store(&s);
}

/* Row keys cut short: key columns of the key's fixed-width tail are read from the key's end,
** the columns before it walked; a key of any shorter length must give EXEC_CORRUPT when a
** walked column (or the whole key) is needed, and never a read outside the key (each cut key
** is its own allocation, so ASan sees an overrun). Tables: (K VARCHAR, ID BIGINT) and
** (K BIGINT DESC, ID BIGINT): a variable column before the tail, and a key all tail. */
static void test_cut_keys(void **state) {
  (void)state;
  store s;
  open_store(&s);
  const cat_type vt = {CAT_T_VARCHAR, 0, 0, 0, 0}, bt = {CAT_T_BIGINT, 0, 0, 0, 0};
  const cat_table *tv = make_table(&s, "CUTV", &vt, false, false);
  const cat_table *tb = make_table(&s, "CUTB", &bt, true, false);
  const cat_table *ts[2] = {tv, tb};
  for (int k = 0; k < 2; k++) {
    const cat_table *t = ts[k];
    exec_rowcodec rc;
    exec_error err = {0};
    assert_int_equal(exec_rowcodec_init(&rc, t, &err), EXEC_OK);
    assert_int_equal(rc.fixed_from, k == 0 ? 1 : 0);
    cat_value row[NCOLS];
    for (int i = 0; i < NCOLS; i++) row[i] = cat_v_null(t->columns[i].type);
    row[0] = k == 0 ? cat_v_str(CAT_T_VARCHAR, "ab\x00c", 4) : cat_v_int(CAT_T_BIGINT, -77);
    row[1] = cat_v_int(CAT_T_BIGINT, 123456789);
    uint8_t key[64];
    size_t len = 0;
    assert_int_equal(exec_row_key(&rc, row, key, sizeof key, &len, &err), EXEC_OK);
    bool need_k[NCOLS] = {0}, need_id[NCOLS] = {0};
    need_k[0] = true;
    need_id[1] = true;
    const bool *needs[3] = {NULL, need_k, need_id};
    for (size_t cut = 0; cut <= len; cut++) {
      uint8_t *kb = malloc(cut ? cut : 1);
      memcpy(kb, key, cut);
      kv_row kr = {kb, (uint32_t)cut, NULL, 0};
      for (int n = 0; n < 6; n++) { /* n >= 3: the same needs, prepared (table-driven path) */
        cat_value got[NCOLS];
        exec_rowcodec_prepare(&rc, n >= 3 ? needs[n - 3] : NULL, NULL);
        int rc2 = exec_row_decode(&rc, &kr, needs[n % 3], got, NULL, &err);
        /* CUTB's key is all tail (16 bytes): shorter is corrupt whatever is needed. CUTV:
           K is walked and must end where the 8-byte tail starts; ID alone is read from the
           end, so only a key shorter than the tail is refused. */
        bool must_fail = k == 1 || n % 3 != 2 || cut < 8;
        if (cut == len) {
          assert_int_equal(rc2, EXEC_OK);
          if (n % 3 != 2) assert_true(same_value(&got[0], &row[0]));
          if (n % 3 != 1) assert_int_equal(got[1].u.i, 123456789);
        } else if (must_fail) {
          assert_int_equal(rc2, EXEC_CORRUPT);
        }
      }
      free(kb);
    }
    exec_rowcodec_free(&rc);
  }
  close_store(&s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_round_trip),   cmocka_unit_test(test_edge_values),
      cmocka_unit_test(test_updates),      cmocka_unit_test(test_errors),
      cmocka_unit_test(test_wide_and_copy), cmocka_unit_test(test_cut_keys),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
