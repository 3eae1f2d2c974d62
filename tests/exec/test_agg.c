/*
** tests/exec/test_agg.c: aggregate accumulators (exec/agg.h): lookup and result types,
** empty input, NULLs ignored, exact integer and DECIMAL sums with overflow errors, AVG
** types and values, MIN/MAX over numbers, strings (copies that outlive their source),
** dates, incomparable values; DISTINCT equality rules (1 = 1.0, CHAR spaces, -0.0, NaN),
** COUNT(DISTINCT) over many random values against a bitmap, and merge of partial
** accumulators against one accumulator over all values (seeded).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/value.h"
#include "exec/agg.h"
#include "exec/engine.h"
#include "testutil.h"

static char msg[256];

static cat_value I(int64_t v) { return cat_v_int(CAT_T_BIGINT, v); }
static cat_value N(int64_t v) { return cat_v_int(CAT_T_INTEGER, v); }
static cat_value DC(const char *s) {
  cat_type t = cat_type_of(CAT_T_DECIMAL);
  cat_value v;
  cat_error e;
  if (cat_text_parse(&t, s, strlen(s), &v, &e) != CAT_OK) abort();
  return v;
}

/* An accumulator for name(arg_type) as cat_agg_lookup resolves it. */
static void start(exec_agg *a, const char *name, bool star, bool distinct, int arg_id) {
  cat_type at = cat_type_of(arg_id), rt;
  int id;
  if (cat_agg_lookup(name, star, distinct, &at, &id, &rt, msg, sizeof msg) != EXEC_OK)
    fail_msg("lookup %s: %s", name, msg);
  exec_agg_init(a, id, distinct, &at, &rt);
}

static void step(exec_agg *a, cat_value v) {
  if (exec_agg_step(a, &v, msg, sizeof msg) != EXEC_OK) fail_msg("step: %s", msg);
}

static const char *final_text(exec_agg *a, char *buf, size_t cap) {
  cat_value out;
  if (exec_agg_final(a, &out, NULL, msg, sizeof msg) != EXEC_OK) fail_msg("final: %s", msg);
  assert_int_equal(out.type.id, a->result_type.id);
  cat_text_format(&out, buf, cap);
  return buf;
}

static void test_lookup(void **state) {
  (void)state;
  int id;
  cat_type rt, t = cat_type_of(CAT_T_INTEGER);
  assert_int_equal(cat_agg_lookup("count", true, false, NULL, &id, &rt, msg, sizeof msg), EXEC_OK);
  assert_int_equal(id, EXEC_AGG_COUNT_STAR);
  assert_int_equal(rt.id, CAT_T_BIGINT);
  assert_int_equal(cat_agg_lookup("Sum", false, false, &t, &id, &rt, msg, sizeof msg), EXEC_OK);
  assert_int_equal(id, EXEC_AGG_SUM);
  assert_int_equal(rt.id, CAT_T_BIGINT);
  assert_int_equal(cat_agg_lookup("AVG", false, false, &t, &id, &rt, msg, sizeof msg), EXEC_OK);
  assert_int_equal(rt.id, CAT_T_DECIMAL);
  t = (cat_type){CAT_T_DECIMAL, 10, 2, 0, 0};
  assert_int_equal(cat_agg_lookup("SUM", false, false, &t, &id, &rt, msg, sizeof msg), EXEC_OK);
  assert_int_equal(rt.id, CAT_T_DECIMAL);
  assert_int_equal(rt.scale, 2);
  t = cat_type_of(CAT_T_FLOAT);
  assert_int_equal(cat_agg_lookup("AVG", false, false, &t, &id, &rt, msg, sizeof msg), EXEC_OK);
  assert_int_equal(rt.id, CAT_T_DOUBLE);
  t = (cat_type){CAT_T_VARCHAR, 0, 0, 10, 0};
  assert_int_equal(cat_agg_lookup("MIN", false, false, &t, &id, &rt, msg, sizeof msg), EXEC_OK);
  assert_int_equal(id, EXEC_AGG_MIN);
  assert_memory_equal(&rt, &t, sizeof t);
  assert_int_equal(cat_agg_lookup("SUM", false, false, &t, &id, &rt, msg, sizeof msg), EXEC_ERROR);
  assert_non_null(strstr(msg, "SUM does not accept VARCHAR"));
  assert_int_equal(cat_agg_lookup("SUM", true, false, NULL, &id, &rt, msg, sizeof msg), EXEC_ERROR);
  assert_non_null(strstr(msg, "SUM(*)"));
  assert_int_equal(cat_agg_lookup("COUNT", true, true, NULL, &id, &rt, msg, sizeof msg), EXEC_ERROR);
  assert_int_equal(cat_agg_lookup("MEDIAN", false, false, &t, &id, &rt, msg, sizeof msg), EXEC_ERROR);
  assert_non_null(strstr(msg, "MEDIAN"));
  assert_string_equal(cat_agg_name(EXEC_AGG_AVG), "AVG");
  assert_string_equal(cat_agg_name(99), "?");
}

static void test_empty_and_nulls(void **state) {
  (void)state;
  const char *names[] = {"COUNT", "COUNT", "SUM", "AVG", "MIN", "MAX"};
  const char *want_empty[] = {"0", "0", "NULL", "NULL", "NULL", "NULL"};
  char b[64];
  for (int i = 0; i < 6; i++) {
    exec_agg a;
    start(&a, names[i], i == 0, false, CAT_T_INTEGER);
    assert_string_equal(final_text(&a, b, sizeof b), want_empty[i]);
    step(&a, cat_v_null(cat_type_of(CAT_T_INTEGER)));
    step(&a, cat_v_null(cat_type_of(CAT_T_INTEGER)));
    const char *after = i == 0 ? "2" : want_empty[i]; /* COUNT(*) counts NULL rows */
    assert_string_equal(final_text(&a, b, sizeof b), after);
    step(&a, N(4));
    step(&a, cat_v_null(cat_type_of(CAT_T_INTEGER)));
    step(&a, N(2));
    const char *want[] = {"5", "2", "6", "3", "2", "4"};
    assert_string_equal(final_text(&a, b, sizeof b), want[i]);
    exec_agg_free(&a);
    exec_agg_free(&a); /* twice is safe */
  }
  exec_agg a;
  start(&a, "COUNT", true, false, 0);
  assert_int_equal(exec_agg_step(&a, NULL, msg, sizeof msg), EXEC_OK);
  assert_string_equal(final_text(&a, b, sizeof b), "1");
  exec_agg_free(&a);
}

static void test_sums(void **state) {
  (void)state;
  char b[64];
  exec_agg a;
  start(&a, "SUM", false, false, CAT_T_BIGINT);
  for (int i = 1; i <= 100; i++) step(&a, I(i));
  assert_string_equal(final_text(&a, b, sizeof b), "5050");
  exec_agg_free(&a);
  /* exact: a running sum past BIGINT that comes back is fine */
  start(&a, "SUM", false, false, CAT_T_BIGINT);
  step(&a, I(INT64_MAX));
  step(&a, I(INT64_MAX));
  step(&a, I(-INT64_MAX));
  assert_string_equal(final_text(&a, b, sizeof b), "9223372036854775807");
  step(&a, I(1));
  cat_value out;
  assert_int_equal(exec_agg_final(&a, &out, NULL, msg, sizeof msg), EXEC_CONSTRAINT);
  assert_non_null(strstr(msg, "SUM overflow: value 9223372036854775808 out of range for BIGINT"));
  exec_agg_free(&a);
  start(&a, "SUM", false, false, CAT_T_DECIMAL);
  step(&a, DC("1.10"));
  step(&a, DC("2.205"));
  step(&a, DC("-0.005"));
  assert_string_equal(final_text(&a, b, sizeof b), "3.300");
  exec_agg_free(&a);
  start(&a, "SUM", false, false, CAT_T_DECIMAL);
  step(&a, DC("99999999999999999999999999999999999999"));
  assert_int_equal(exec_agg_step(&a, (cat_value[]){DC("1")}, msg, sizeof msg), EXEC_CONSTRAINT);
  assert_non_null(strstr(msg, "SUM overflow"));
  exec_agg_free(&a);
  start(&a, "SUM", false, false, CAT_T_DOUBLE);
  step(&a, cat_v_double(0.5));
  step(&a, cat_v_double(1.25));
  assert_string_equal(final_text(&a, b, sizeof b), "1.75");
  size_t narrow = exec_agg_bytes(&a);
  step(&a, cat_v_double(1e300)); /* 2^-2 to past 2^996: wide digits, counted for the bound */
  assert_true(exec_agg_bytes(&a) >= narrow + 500);
  step(&a, cat_v_double(-1e300));
  assert_string_equal(final_text(&a, b, sizeof b), "1.75");
  exec_agg_free(&a);
  start(&a, "SUM", false, false, CAT_T_INTEGER);
  assert_int_equal(exec_agg_step(&a, (cat_value[]){cat_v_str(CAT_T_VARCHAR, "x", 1)}, msg,
                                 sizeof msg), EXEC_ERROR);
  exec_agg_free(&a);
}

static void test_avg(void **state) {
  (void)state;
  char b[64];
  exec_agg a;
  start(&a, "AVG", false, false, CAT_T_INTEGER);
  step(&a, N(1));
  step(&a, N(2));
  assert_string_equal(final_text(&a, b, sizeof b), "1.5");
  step(&a, N(2));
  assert_string_equal(final_text(&a, b, sizeof b), "1.6666666666666666666666666666666666667");
  exec_agg_free(&a);
  start(&a, "AVG", false, false, CAT_T_INTEGER);
  step(&a, N(4));
  step(&a, N(2));
  assert_string_equal(final_text(&a, b, sizeof b), "3");
  exec_agg_free(&a);
  start(&a, "AVG", false, false, CAT_T_DECIMAL);
  step(&a, DC("1.10"));
  step(&a, DC("1.20"));
  assert_string_equal(final_text(&a, b, sizeof b), "1.15");
  exec_agg_free(&a);
  start(&a, "AVG", false, false, CAT_T_DOUBLE);
  step(&a, cat_v_double(1.0));
  step(&a, cat_v_double(2.0));
  assert_string_equal(final_text(&a, b, sizeof b), "1.5");
  exec_agg_free(&a);
  /* AVG of big integers stays exact */
  start(&a, "AVG", false, false, CAT_T_BIGINT);
  step(&a, I(INT64_MAX));
  step(&a, I(INT64_MAX));
  assert_string_equal(final_text(&a, b, sizeof b), "9223372036854775807");
  exec_agg_free(&a);
}

static void test_min_max(void **state) {
  (void)state;
  char b[64];
  exec_agg mn, mx;
  start(&mn, "MIN", false, false, CAT_T_VARCHAR);
  start(&mx, "MAX", false, false, CAT_T_VARCHAR);
  const char *words[] = {"pear", "apple", "zebra", "mango", "apple"};
  char src[16];
  for (int i = 0; i < 5; i++) {
    strcpy(src, words[i]); /* the source buffer is overwritten after each step */
    cat_value v = cat_v_str(CAT_T_VARCHAR, src, strlen(src));
    step(&mn, v);
    step(&mx, v);
    memset(src, '#', sizeof src);
  }
  assert_string_equal(final_text(&mn, b, sizeof b), "apple");
  assert_string_equal(final_text(&mx, b, sizeof b), "zebra");
  exec_arena ar;
  exec_arena_init(&ar);
  cat_value out;
  assert_int_equal(exec_agg_final(&mx, &out, &ar, msg, sizeof msg), EXEC_OK);
  exec_agg_free(&mx);
  assert_int_equal(out.u.s.len, 5);
  assert_memory_equal(out.u.s.p, "zebra", 5); /* the arena copy outlives the accumulator */
  exec_arena_free(&ar);
  exec_agg_free(&mn);
  start(&mn, "MIN", false, false, CAT_T_DATE);
  start(&mx, "MAX", false, false, CAT_T_DATE);
  for (int d = -5; d <= 5; d++) {
    step(&mn, cat_v_int(CAT_T_DATE, d * 100));
    step(&mx, cat_v_int(CAT_T_DATE, d * 100));
  }
  assert_string_equal(final_text(&mn, b, sizeof b), "1968-08-19");
  assert_string_equal(final_text(&mx, b, sizeof b), "1971-05-16");
  exec_agg_free(&mn);
  exec_agg_free(&mx);
  /* numbers of mixed types compare by value */
  start(&mx, "MAX", false, false, CAT_T_DOUBLE);
  step(&mx, cat_v_double(2.5));
  step(&mx, I(3));
  step(&mx, DC("2.9"));
  assert_int_equal(exec_agg_final(&mx, &out, NULL, msg, sizeof msg), EXEC_OK);
  assert_int_equal(out.u.i, 3);
  assert_int_equal(exec_agg_step(&mx, (cat_value[]){cat_v_str(CAT_T_VARCHAR, "x", 1)}, msg,
                                 sizeof msg), EXEC_ERROR);
  exec_agg_free(&mx);
}

static void test_distinct_rules(void **state) {
  (void)state;
  char b[64];
  exec_agg a;
  start(&a, "COUNT", false, true, CAT_T_DECIMAL);
  step(&a, DC("1"));
  step(&a, DC("1.0"));
  step(&a, DC("1.00"));
  step(&a, I(1));
  step(&a, DC("1.5"));
  step(&a, DC("1.50"));
  step(&a, cat_v_null(cat_type_of(CAT_T_DECIMAL)));
  assert_string_equal(final_text(&a, b, sizeof b), "2");
  exec_agg_free(&a);
  start(&a, "COUNT", false, true, CAT_T_CHAR);
  step(&a, cat_v_str(CAT_T_CHAR, "ab  ", 4));
  step(&a, cat_v_str(CAT_T_CHAR, "ab", 2));
  step(&a, cat_v_str(CAT_T_CHAR, "a", 1));
  step(&a, cat_v_str(CAT_T_CHAR, "", 0));
  assert_string_equal(final_text(&a, b, sizeof b), "3");
  exec_agg_free(&a);
  start(&a, "COUNT", false, true, CAT_T_DOUBLE);
  step(&a, cat_v_double(0.0));
  step(&a, cat_v_double(-0.0));
  step(&a, cat_v_double(NAN));
  step(&a, cat_v_double(-NAN));
  step(&a, cat_v_double(INFINITY));
  assert_string_equal(final_text(&a, b, sizeof b), "3");
  exec_agg_free(&a);
  start(&a, "COUNT", false, true, CAT_T_TIMESTAMP);
  step(&a, cat_v_int(CAT_T_DATE, 1));
  step(&a, cat_v_int(CAT_T_TIMESTAMP, CAT_US_PER_DAY));
  step(&a, cat_v_int(CAT_T_TIMESTAMP, CAT_US_PER_DAY + 1));
  assert_string_equal(final_text(&a, b, sizeof b), "2");
  exec_agg_free(&a);
  start(&a, "SUM", false, true, CAT_T_INTEGER);
  step(&a, N(1));
  step(&a, N(1));
  step(&a, N(2));
  assert_string_equal(final_text(&a, b, sizeof b), "3");
  exec_agg_free(&a);
  start(&a, "AVG", false, true, CAT_T_INTEGER);
  step(&a, N(1));
  step(&a, N(1));
  step(&a, N(4));
  assert_string_equal(final_text(&a, b, sizeof b), "2.5");
  exec_agg_free(&a);
  /* the set replays values with their types */
  exec_agg_set *set = NULL;
  bool added;
  cat_value v = cat_v_str(CAT_T_VARCHAR, "hello", 5), back;
  assert_int_equal(exec_agg_set_add(&set, &v, &added), EXEC_OK);
  assert_true(added);
  v = cat_v_int(CAT_T_DATE, -3);
  assert_int_equal(exec_agg_set_add(&set, &v, &added), EXEC_OK);
  v = DC("2.50");
  assert_int_equal(exec_agg_set_add(&set, &v, &added), EXEC_OK);
  assert_int_equal(exec_agg_set_add(&set, &v, &added), EXEC_OK);
  assert_false(added);
  assert_int_equal(exec_agg_set_count(set), 3);
  exec_agg_set_value(set, 0, &back);
  assert_int_equal(back.type.id, CAT_T_VARCHAR);
  assert_memory_equal(back.u.s.p, "hello", 5);
  exec_agg_set_value(set, 1, &back);
  assert_int_equal(back.type.id, CAT_T_DATE);
  assert_int_equal(back.u.i, -3);
  exec_agg_set_value(set, 2, &back);
  cat_text_format(&back, b, sizeof b);
  assert_string_equal(b, "2.50");
  v = DC("3.000");
  assert_int_equal(exec_agg_set_add(&set, &v, &added), EXEC_OK);
  exec_agg_set_value(set, 3, &back);
  cat_text_format(&back, b, sizeof b);
  assert_string_equal(b, "3.000");
  exec_agg_set_free(set);
  assert_int_equal(exec_agg_set_count(NULL), 0);
}

/* COUNT(DISTINCT) over many random values against a bitmap of the values seen. */
static void test_count_distinct_many(void **state) {
  (void)state;
  uint64_t seed = tu_seed("test_count_distinct_many"), st = seed;
  uint64_t n = tu_scaled(300000, 10000), range = 50000;
  uint8_t *seen = calloc(range, 1);
  assert_non_null(seen);
  exec_agg ci, cs;
  start(&ci, "COUNT", false, true, CAT_T_BIGINT);
  start(&cs, "COUNT", false, true, CAT_T_VARCHAR);
  uint64_t distinct = 0;
  for (uint64_t k = 0; k < n; k++) {
    uint64_t x = tu_below(&st, range);
    if (!seen[x]) { seen[x] = 1; distinct++; }
    step(&ci, I((int64_t)x - 25000));
    char s[24];
    int len = snprintf(s, sizeof s, "v%llu", (unsigned long long)x);
    step(&cs, cat_v_str(CAT_T_VARCHAR, s, (size_t)len));
  }
  cat_value out;
  assert_int_equal(exec_agg_final(&ci, &out, NULL, msg, sizeof msg), EXEC_OK);
  if ((uint64_t)out.u.i != distinct)
    fail_msg("seed %llu: COUNT(DISTINCT) %lld, want %llu", (unsigned long long)seed,
             (long long)out.u.i, (unsigned long long)distinct);
  assert_int_equal(exec_agg_final(&cs, &out, NULL, msg, sizeof msg), EXEC_OK);
  assert_int_equal((uint64_t)out.u.i, distinct);
  exec_agg_free(&ci);
  exec_agg_free(&cs);
  free(seen);
}

/* Values split over two accumulators and merged give the same result as one accumulator. */
static void test_merge(void **state) {
  (void)state;
  uint64_t seed = tu_seed("test_merge"), st = seed;
  struct { const char *name; bool star, distinct; } kinds[] = {
      {"COUNT", true, false}, {"COUNT", false, false}, {"COUNT", false, true},
      {"SUM", false, false},  {"SUM", false, true},    {"AVG", false, false},
      {"AVG", false, true},   {"MIN", false, false},   {"MAX", false, false},
  };
  int types[] = {CAT_T_BIGINT, CAT_T_DECIMAL, CAT_T_DOUBLE};
  for (int round = 0; round < 30; round++) {
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
      int t = types[tu_below(&st, 3)];
      exec_agg all, p1, p2;
      start(&all, kinds[k].name, kinds[k].star, kinds[k].distinct, t);
      start(&p1, kinds[k].name, kinds[k].star, kinds[k].distinct, t);
      start(&p2, kinds[k].name, kinds[k].star, kinds[k].distinct, t);
      int n = (int)tu_below(&st, 200);
      for (int i = 0; i < n; i++) {
        int64_t x = (int64_t)tu_below(&st, 40) - 20;
        cat_value v;
        if (tu_below(&st, 10) == 0) v = cat_v_null(cat_type_of(t));
        else if (t == CAT_T_BIGINT) v = I(x);
        else if (t == CAT_T_DOUBLE) v = cat_v_double((double)x / 4);
        else v = cat_v_dec((cat_dec){x * 25, 2}, 0, 2);
        step(&all, v);
        step(tu_below(&st, 2) ? &p1 : &p2, v);
      }
      assert_int_equal(exec_agg_merge(&p1, &p2, msg, sizeof msg), EXEC_OK);
      char a[64], b[64];
      final_text(&all, a, sizeof a);
      final_text(&p1, b, sizeof b);
      if (strcmp(a, b) != 0)
        fail_msg("seed %llu: %s%s over %s: merged %s, whole %s", (unsigned long long)seed,
                 kinds[k].name, kinds[k].distinct ? "(DISTINCT)" : "", cat_type_name(t), b, a);
      exec_agg_free(&all);
      exec_agg_free(&p1);
      exec_agg_free(&p2);
    }
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_lookup),         cmocka_unit_test(test_empty_and_nulls),
      cmocka_unit_test(test_sums),           cmocka_unit_test(test_avg),
      cmocka_unit_test(test_min_max),        cmocka_unit_test(test_distinct_rules),
      cmocka_unit_test(test_count_distinct_many), cmocka_unit_test(test_merge),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
