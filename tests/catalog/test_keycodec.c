/*
** tests/catalog/test_keycodec.c: property and edge tests of the row-key codec
** (catalog/keycodec.h): for every type, ASC and DESC, nullable or not, single and composite
** keys, the byte order of encodings equals the typed SQL order of the value tuples, and
** decoding gives back equal values. Also the planner's helpers (prefix bounds, LIKE prefix,
** next/prev key) and clean failure on truncated or damaged keys. Seeded (tu_seed).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "catalog/keycodec.h"
#include "gen.h"

static uint64_t total_comparisons;

typedef struct enc_row {
  cat_value vals[4];  /* the key tuple */
  uint8_t key[256];   /* its encoding */
  size_t len;         /* encoding length */
} enc_row;

/* SQL order of two tuples under the schema: column by column, DESC reversing, NULL first
** for ASC (the comparator puts NULL first; DESC reversal puts it last). */
static int tuple_cmp(const cat_key_col *cols, int n, const cat_value *a, const cat_value *b) {
  for (int i = 0; i < n; i++) {
    int c;
    cat_error err;
    assert_int_equal(cat_value_compare(&a[i], &b[i], &c, &err), CAT_OK);
    if (c) return cols[i].desc ? -c : c;
  }
  return 0;
}

static int sign(int x) { return (x > 0) - (x < 0); }

static int bytes_cmp(const uint8_t *a, size_t al, const uint8_t *b, size_t bl) {
  size_t m = al < bl ? al : bl;
  int c = m ? memcmp(a, b, m) : 0;
  if (c) return sign(c);
  return (al > bl) - (al < bl);
}

/* Encode, decode and check every row; then compare all pairs. */
static void check_rows(const cat_key_col *cols, int n, enc_row *rows, int nrows, uint64_t seed) {
  uint8_t scratch[256];
  for (int r = 0; r < nrows; r++) {
    cat_error err = {0};
    int rc = cat_key_encode(cols, n, rows[r].vals, rows[r].key, sizeof rows[r].key, &rows[r].len, &err);
    if (rc) fail_msg("seed %llu: encode failed: %s", (unsigned long long)seed, err.msg);
    cat_value back[4];
    rc = cat_key_decode(cols, n, rows[r].key, rows[r].key + rows[r].len, back, scratch, sizeof scratch, NULL, &err);
    if (rc) fail_msg("seed %llu: decode failed: %s", (unsigned long long)seed, err.msg);
    for (int i = 0; i < n; i++) {
      int c = 99;
      cat_value_compare(&rows[r].vals[i], &back[i], &c, NULL);
      if (c != 0 || back[i].is_null != rows[r].vals[i].is_null || back[i].type.id != cols[i].type.id) {
        char s1[200], s2[200];
        fail_msg("seed %llu: round trip of %s gave %s", (unsigned long long)seed,
                 gen_show(&rows[r].vals[i], s1, sizeof s1), gen_show(&back[i], s2, sizeof s2));
      }
      if (cols[i].type.id == CAT_T_DECIMAL && !back[i].is_null && cols[i].type.precision)
        assert_int_equal(back[i].u.dec.scale, cols[i].type.scale);
    }
    /* Every strict prefix of a key is not a key of the schema (self-delimiting). */
    size_t cut = (size_t)tu_below(&seed, rows[r].len);
    rc = cat_key_decode(cols, n, rows[r].key, rows[r].key + cut, back, scratch, sizeof scratch, NULL, &err);
    assert_int_equal(rc, CAT_ERR_CORRUPT);
  }
  for (int a = 0; a < nrows; a++)
    for (int b = a; b < nrows; b++) {
      int want = sign(tuple_cmp(cols, n, rows[a].vals, rows[b].vals));
      int got = bytes_cmp(rows[a].key, rows[a].len, rows[b].key, rows[b].len);
      total_comparisons++;
      if (want != got) {
        char s1[200], s2[200];
        fail_msg("seed %llu: order mismatch (want %d, bytes %d): col0 %s%s vs %s", (unsigned long long)seed,
                 want, got, gen_show(&rows[a].vals[0], s1, sizeof s1), cols[0].desc ? " DESC" : "",
                 gen_show(&rows[b].vals[0], s2, sizeof s2));
      }
    }
}

static gen_arena arena;

static void arena_reset(void) { arena.used = 0; }

/* Every type alone, ASC/DESC x nullable/not: edge values plus random values. */
static void test_single_column_order(void **state) {
  (void)state;
  uint64_t seed = tu_seed("single_column_order"), rng = seed;
  int per = (int)tu_scaled(260, 60);
  enc_row *rows = calloc((size_t)per + 40, sizeof *rows);
  for (int t = 0; t < GEN_NTYPES; t++)
    for (int mode = 0; mode < 4; mode++) {
      cat_key_col col = {gen_types[t], mode & 1, (mode & 2) != 0};
      arena_reset();
      int nrows = 0;
      cat_value v;
      for (int e = 0; gen_edge(&col.type, e, &arena, &v); e++) rows[nrows++].vals[0] = v;
      if (col.nullable) rows[nrows++].vals[0] = cat_v_null(col.type);
      while (nrows < per + 20) {
        rows[nrows].vals[0] = col.nullable && tu_below(&rng, 20) == 0 ? cat_v_null(col.type)
                                                                      : gen_random(&col.type, &rng, &arena);
        nrows++;
      }
      check_rows(&col, 1, rows, nrows, seed);
    }
  free(rows);
}

/* Random composite schemas of 2-4 columns (var-length and nullable columns anywhere), rows
** drawn from small per-column pools so that leading columns tie and later ones decide. */
static void test_composite_order(void **state) {
  (void)state;
  uint64_t seed = tu_seed("composite_order"), rng = seed;
  int schemas = (int)tu_scaled(120, 30), nrows = 100;
  enc_row *rows = calloc((size_t)nrows, sizeof *rows);
  for (int s = 0; s < schemas; s++) {
    arena_reset();
    int n = 2 + (int)tu_below(&rng, 3);
    cat_key_col cols[4];
    cat_value pool[4][6];
    for (int i = 0; i < n; i++) {
      /* bias towards variable-length columns in the middle */
      int t = i < n - 1 && tu_below(&rng, 2) ? 9 + (int)tu_below(&rng, 3) : (int)tu_below(&rng, GEN_NTYPES);
      cols[i].type = gen_types[t];
      cols[i].desc = tu_below(&rng, 2);
      cols[i].nullable = tu_below(&rng, 3) == 0;
      for (int k = 0; k < 6; k++) {
        cat_value v;
        if (k < 2 && gen_edge(&cols[i].type, (int)tu_below(&rng, 8), &arena, &v)) pool[i][k] = v;
        else pool[i][k] = gen_random(&cols[i].type, &rng, &arena);
      }
      if (cols[i].nullable) pool[i][5] = cat_v_null(cols[i].type);
    }
    for (int r = 0; r < nrows; r++)
      for (int i = 0; i < n; i++) rows[r].vals[i] = pool[i][tu_below(&rng, 6)];
    check_rows(cols, n, rows, nrows, seed);
  }
  free(rows);
  fprintf(stderr, "key codec comparisons so far: %llu\n", (unsigned long long)total_comparisons);
}

static void enc1(const cat_key_col *c, cat_value v, uint8_t *buf, size_t *len) {
  cat_error err;
  assert_int_equal(cat_key_encode(c, 1, &v, buf, 64, len, &err), CAT_OK);
}

/* The named edge cases of the issue, one by one. */
static void test_named_edges(void **state) {
  (void)state;
  uint8_t a[64], b[64];
  size_t al, bl;
  cat_key_col d = {{CAT_T_DOUBLE, 0, 0, 0, 0}, false, false};
  enc1(&d, cat_v_double(-0.0), a, &al);
  enc1(&d, cat_v_double(0.0), b, &bl);
  assert_int_equal(al, 8);
  assert_memory_equal(a, b, 8); /* -0.0 and 0.0: one encoding */
  double nan2;
  uint64_t bits = 0x7FF0000000000123ull;
  memcpy(&nan2, &bits, 8);
  enc1(&d, cat_v_double(NAN), a, &al);
  enc1(&d, cat_v_double(nan2), b, &bl);
  assert_memory_equal(a, b, 8); /* one canonical NaN */
  enc1(&d, cat_v_double(INFINITY), b, &bl);
  assert_true(memcmp(a, b, 8) > 0); /* NaN above +inf */
  enc1(&d, cat_v_double(-1.0), a, &al);
  enc1(&d, cat_v_double(-2.0), b, &bl);
  assert_true(memcmp(a, b, 8) > 0); /* -1 > -2 */

  cat_key_col dec = {{CAT_T_DECIMAL, 0, 0, 0, 0}, false, false};
  cat_dec x15 = {15, 1}, x150 = {150, 2}, m001 = {-1, 3}, m01 = {-1, 2};
  enc1(&dec, cat_v_dec(x15, 0, 0), a, &al);
  enc1(&dec, cat_v_dec(x150, 0, 0), b, &bl);
  assert_int_equal(al, bl);
  assert_memory_equal(a, b, al); /* 1.5 = 1.50 */
  enc1(&dec, cat_v_dec(m001, 0, 0), a, &al);
  enc1(&dec, cat_v_dec(m01, 0, 0), b, &bl);
  assert_true(bytes_cmp(a, al, b, bl) > 0); /* -0.001 above -0.01 */

  cat_key_col ints[2] = {{{CAT_T_INTEGER, 0, 0, 0, 0}, false, false}, {{CAT_T_BIGINT, 0, 0, 0, 0}, false, false}};
  enc1(&ints[0], cat_v_int(CAT_T_INTEGER, INT32_MIN), a, &al);
  enc1(&ints[0], cat_v_int(CAT_T_INTEGER, INT32_MAX), b, &bl);
  assert_int_equal(al, 4);
  static const uint8_t imin[4] = {0, 0, 0, 0}, imax[4] = {0xFF, 0xFF, 0xFF, 0xFF};
  assert_memory_equal(a, imin, 4);
  assert_memory_equal(b, imax, 4);
  enc1(&ints[1], cat_v_int(CAT_T_BIGINT, -1), a, &al);
  enc1(&ints[1], cat_v_int(CAT_T_BIGINT, 0), b, &bl);
  assert_int_equal(al, 8);
  assert_true(memcmp(a, b, 8) < 0);

  /* '' vs NULL in a nullable VARCHAR, ASC: NULL first; DESC: NULL last. */
  cat_key_col vs = {{CAT_T_VARCHAR, 0, 0, 0, 0}, false, true};
  enc1(&vs, cat_v_null(vs.type), a, &al);
  enc1(&vs, cat_v_str(CAT_T_VARCHAR, "", 0), b, &bl);
  assert_true(bytes_cmp(a, al, b, bl) < 0);
  vs.desc = true;
  enc1(&vs, cat_v_null(vs.type), a, &al);
  enc1(&vs, cat_v_str(CAT_T_VARCHAR, "", 0), b, &bl);
  assert_true(bytes_cmp(a, al, b, bl) > 0);

  /* A prefix sorts first also when the column is not last, and reversed under DESC. */
  for (int desc = 0; desc < 2; desc++) {
    cat_key_col two[2] = {{{CAT_T_VARCHAR, 0, 0, 0, 0}, desc, false}, {{CAT_T_VARCHAR, 0, 0, 0, 0}, false, false}};
    cat_value r1[2] = {cat_v_str(CAT_T_VARCHAR, "ab", 2), cat_v_str(CAT_T_VARCHAR, "\xff\xff", 0)};
    cat_value r2[2] = {cat_v_str(CAT_T_VARCHAR, "ab\0", 3), cat_v_str(CAT_T_VARCHAR, "", 0)};
    cat_value r3[2] = {cat_v_str(CAT_T_VARCHAR, "abc", 3), cat_v_str(CAT_T_VARCHAR, "", 0)};
    r1[1] = cat_v_str(CAT_T_VARCHAR, "zzz", 3);
    cat_error err;
    assert_int_equal(cat_key_encode(two, 2, r1, a, 64, &al, &err), CAT_OK);
    assert_int_equal(cat_key_encode(two, 2, r2, b, 64, &bl, &err), CAT_OK);
    uint8_t c[64];
    size_t cl;
    assert_int_equal(cat_key_encode(two, 2, r3, c, 64, &cl, &err), CAT_OK);
    int s = desc ? -1 : 1;
    assert_int_equal(bytes_cmp(a, al, b, bl), -s); /* 'ab' < 'ab\0' */
    assert_int_equal(bytes_cmp(b, bl, c, cl), -s); /* 'ab\0' < 'abc' */
  }

  /* CHAR padding: 'ab ' equals 'ab'. */
  cat_key_col ch = {{CAT_T_CHAR, 0, 0, 5, 0}, false, false};
  enc1(&ch, cat_v_str(CAT_T_CHAR, "ab ", 3), a, &al);
  enc1(&ch, cat_v_str(CAT_T_CHAR, "ab", 2), b, &bl);
  assert_int_equal(al, bl);
  assert_memory_equal(a, b, al);

  /* NULL in a NOT NULL column is refused; a value of another type is refused. */
  cat_error err;
  size_t n;
  cat_value nv = cat_v_null(d.type);
  assert_int_equal(cat_key_encode(&d, 1, &nv, a, 64, &n, &err), CAT_ERR_NULL);
  cat_value iv = cat_v_int(CAT_T_INTEGER, 1);
  assert_int_equal(cat_key_encode(&d, 1, &iv, a, 64, &n, &err), CAT_ERR_TYPE);
  /* A buffer too small is CAT_ERR_TOOBIG, not an overrun. */
  cat_value sv = cat_v_str(CAT_T_VARCHAR, "abcdef", 6);
  vs.desc = false;
  assert_int_equal(cat_key_encode(&vs, 1, &sv, a, 4, &n, &err), CAT_ERR_TOOBIG);
}

/* The worked example of docs/FORMAT_SQL.md (Part 3). */
static void test_worked_example(void **state) {
  (void)state;
  cat_key_col cols[2] = {{{CAT_T_VARCHAR, 0, 0, 0, 0}, false, false}, {{CAT_T_TIMESTAMP, 0, 0, 0, 0}, true, false}};
  cat_value v[2];
  cat_error err;
  cat_type ts = cat_type_of(CAT_T_TIMESTAMP), vc = cat_type_of(CAT_T_VARCHAR);
  assert_int_equal(cat_text_parse(&vc, "sensor042", 9, &v[0], &err), CAT_OK);
  assert_int_equal(cat_text_parse(&ts, "2016-01-01 00:00:00", 19, &v[1], &err), CAT_OK);
  uint8_t k[64];
  size_t n;
  assert_int_equal(cat_key_encode(cols, 2, v, k, sizeof k, &n, &err), CAT_OK);
  static const uint8_t want[] = {'s', 'e', 'n', 's', 'o', 'r', '0', '4', '2', 0x00, 0x01,
                                 0x7F, 0xFA, 0xD7, 0xC5, 0x8C, 0x2C, 0x9F, 0xFF};
  assert_int_equal(n, sizeof want);
  assert_memory_equal(k, want, n);
}

/* Key bounds for `c0 = x` and `c0 LIKE 'p%'`: a key is inside [start, end) exactly when its
** first column equals x / starts with p. */
static void test_prefix_bounds(void **state) {
  (void)state;
  uint64_t seed = tu_seed("prefix_bounds"), rng = seed;
  int rounds = (int)tu_scaled(40, 10), nrows = 150;
  enc_row *rows = calloc((size_t)nrows, sizeof *rows);
  for (int round = 0; round < rounds; round++) {
    arena_reset();
    int t0 = 9 + (int)tu_below(&rng, 3); /* CHAR, VARCHAR, VARBINARY */
    cat_key_col cols[2] = {{gen_types[t0], tu_below(&rng, 2), tu_below(&rng, 2)},
                           {gen_types[tu_below(&rng, GEN_NTYPES)], tu_below(&rng, 2), false}};
    for (int r = 0; r < nrows; r++) {
      rows[r].vals[0] = cols[0].nullable && tu_below(&rng, 10) == 0 ? cat_v_null(cols[0].type)
                                                                    : gen_random(&cols[0].type, &rng, &arena);
      rows[r].vals[1] = gen_random(&cols[1].type, &rng, &arena);
      cat_error err;
      assert_int_equal(cat_key_encode(cols, 2, rows[r].vals, rows[r].key, sizeof rows[r].key, &rows[r].len, &err), CAT_OK);
    }
    for (int probe = 0; probe < 10; probe++) {
      const cat_value *x = &rows[tu_below(&rng, nrows)].vals[0];
      uint8_t start[128], end[128];
      size_t sl, el;
      cat_error err;
      /* equality */
      assert_int_equal(cat_key_encode(cols, 1, x, start, sizeof start, &sl, &err), CAT_OK);
      bool has_end = cat_key_prefix_end(start, sl, end, &el);
      for (int r = 0; r < nrows; r++) {
        bool in = bytes_cmp(rows[r].key, rows[r].len, start, sl) >= 0 &&
                  (!has_end || bytes_cmp(rows[r].key, rows[r].len, end, el) < 0);
        int c;
        cat_value_compare(&rows[r].vals[0], x, &c, NULL);
        if (in != (c == 0)) fail_msg("seed %llu: equality range wrong", (unsigned long long)seed);
      }
      /* LIKE prefix: a prefix of x's bytes */
      if (x->is_null) continue;
      size_t xl = x->u.s.len, pl = (size_t)tu_below(&rng, xl + 1);
      sl = 0;
      assert_int_equal(cat_key_encode_string_prefix(&cols[0], x->u.s.p, pl, start, sizeof start, &sl, &err), CAT_OK);
      has_end = cat_key_prefix_end(start, sl, end, &el);
      for (int r = 0; r < nrows; r++) {
        bool in = bytes_cmp(rows[r].key, rows[r].len, start, sl) >= 0 &&
                  (!has_end || bytes_cmp(rows[r].key, rows[r].len, end, el) < 0);
        const cat_value *y = &rows[r].vals[0];
        size_t yl = y->is_null ? 0 : (y->type.id == CAT_T_CHAR ? cat_char_trim(y->u.s.p, y->u.s.len) : y->u.s.len);
        bool starts = !y->is_null && yl >= pl && (pl == 0 || memcmp(y->u.s.p, x->u.s.p, pl) == 0);
        if (in != starts) fail_msg("seed %llu: LIKE prefix range wrong (prefix len %zu)", (unsigned long long)seed, pl);
      }
    }
  }
  free(rows);
}

/* next / prev / prefix_end never overflow and are tight. */
static void test_next_prev(void **state) {
  (void)state;
  uint8_t k[8], o[16];
  size_t ol;
  memset(k, 0xFF, sizeof k);
  assert_false(cat_key_prefix_end(k, sizeof k, o, &ol)); /* all 0xFF: no upper bound */
  assert_false(cat_key_prefix_end(k, 0, o, &ol));
  assert_int_equal(cat_key_next(k, 8, o), 9);
  assert_int_equal(o[8], 0x00);
  assert_true(bytes_cmp(o, 9, k, 8) > 0);
  static const uint8_t ab_ff[3] = {'a', 'b', 0xFF};
  assert_true(cat_key_prefix_end(ab_ff, 3, o, &ol));
  assert_int_equal(ol, 2);
  assert_int_equal(o[0], 'a');
  assert_int_equal(o[1], 'c');
  assert_false(cat_key_prev(k, 0, 4, o, &ol));
  static const uint8_t a0[2] = {'a', 0x00};
  assert_true(cat_key_prev(a0, 2, 4, o, &ol));
  assert_int_equal(ol, 1); /* exact predecessor of "a\0" is "a" */
  /* Random check: prev(k) < k and no string of length <= len+pad lies in (prev, k). */
  uint64_t seed = tu_seed("next_prev"), rng = seed;
  for (int i = 0; i < 20000; i++) {
    uint8_t key[4], s[6], p[8];
    size_t kl = 1 + tu_below(&rng, 3), sl = tu_below(&rng, 6), pl;
    for (size_t j = 0; j < kl; j++) key[j] = (uint8_t)(tu_below(&rng, 3) == 0 ? 0 : tu_below(&rng, 2) ? 0xFF : tu_below(&rng, 3));
    for (size_t j = 0; j < sl; j++) s[j] = (uint8_t)(tu_below(&rng, 3) == 0 ? 0 : tu_below(&rng, 2) ? 0xFF : tu_below(&rng, 3));
    assert_true(cat_key_prev(key, kl, 2, p, &pl));
    assert_true(bytes_cmp(p, pl, key, kl) < 0);
    if (sl <= kl + 2 && bytes_cmp(s, sl, key, kl) < 0 && bytes_cmp(s, sl, p, pl) > 0)
      fail_msg("seed %llu: a key lies between prev(k) and k", (unsigned long long)seed);
    uint8_t e[8];
    size_t elen;
    if (cat_key_prefix_end(key, kl, e, &elen)) {
      bool has_prefix = sl >= kl && memcmp(s, key, kl) == 0;
      if (has_prefix) assert_true(bytes_cmp(s, sl, e, elen) < 0);
      if (bytes_cmp(s, sl, key, kl) > 0 && !has_prefix) assert_true(bytes_cmp(s, sl, e, elen) >= 0);
    }
  }
}

/* Damaged keys never crash or overrun: random byte flips and cuts of valid keys. */
static void test_bad_bytes(void **state) {
  (void)state;
  uint64_t seed = tu_seed("bad_bytes"), rng = seed;
  int iters = (int)tu_scaled(40000, 5000);
  for (int it = 0; it < iters; it++) {
    arena_reset();
    int n = 1 + (int)tu_below(&rng, 3);
    cat_key_col cols[3];
    cat_value v[3];
    for (int i = 0; i < n; i++) {
      cols[i].type = gen_types[tu_below(&rng, GEN_NTYPES)];
      cols[i].desc = tu_below(&rng, 2);
      cols[i].nullable = tu_below(&rng, 2);
      v[i] = gen_random(&cols[i].type, &rng, &arena);
    }
    uint8_t key[200], scratch[200];
    size_t len;
    cat_error err;
    assert_int_equal(cat_key_encode(cols, n, v, key, sizeof key, &len, &err), CAT_OK);
    int flips = 1 + (int)tu_below(&rng, 3);
    for (int f = 0; f < flips && len; f++) key[tu_below(&rng, len)] = (uint8_t)tu_rand(&rng);
    size_t cut = tu_below(&rng, 4) == 0 ? tu_below(&rng, len + 1) : len;
    /* Copy to a heap buffer of exactly `cut` bytes so ASan catches any overrun. */
    uint8_t *h = malloc(cut ? cut : 1);
    memcpy(h, key, cut);
    cat_value back[3];
    int rc = cat_key_decode(cols, n, h, h + cut, back, scratch, sizeof scratch, NULL, &err);
    assert_true(rc == CAT_OK || rc == CAT_ERR_CORRUPT);
    free(h);
  }
}

int main(void) {
  arena.cap = 1 << 22;
  arena.buf = malloc(arena.cap);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_named_edges),      cmocka_unit_test(test_worked_example),
      cmocka_unit_test(test_single_column_order), cmocka_unit_test(test_composite_order),
      cmocka_unit_test(test_prefix_bounds),    cmocka_unit_test(test_next_prev),
      cmocka_unit_test(test_bad_bytes),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  fprintf(stderr, "key codec: %llu order comparisons\n", (unsigned long long)total_comparisons);
  free(arena.buf);
  return rc;
}
