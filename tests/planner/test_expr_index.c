/*
** tests/planner/test_expr_index.c: indexes on expressions chosen by the planner
** (planner/index_expr.c, planner/index_choice.c). A query whose WHERE compares an expression
** equal to an index key expression, forced onto that index, must return exactly the rows of
** the same query kept off every index (/+ NO_INDEX +/), and its EXPLAIN must show key
** ranges on the index. Random rows with NULL expression values, several versions, updates
** that change an expression's value, deletes, store files and memstore cells; random
** operators (=, <, <=, >, >=, BETWEEN, IN, IS NULL) with literals and with bound
** parameters; VARCHAR, INTEGER and DOUBLE expression types, a DESC key, a composite
** (expression, column) key, a (column, expression DESC) key, an INCLUDE column; a TTL table
** (expired rows stay hidden) and a transaction's uncommitted writes. Seeded (tu_seed). Golden EXPLAIN text is in
** tests/sql/expr_index_plan.test.
*/
#include "../exec/test_engine_util.h"
#include "planner/index_expr.h"
#include "planner/plan_bind.h"
#include "testutil.h"

static const char *const CITIES[] = {"Oslo", "oslo", "OSLO", "Bergen", "bergen", "Cairo",
                                     "Osaka", "Zurich", "Bern", "Lima"};
#define N_CITIES 10

static void city_lit(uint64_t *rs, char *buf, size_t cap) {
  if (tu_below(rs, 6) == 0) snprintf(buf, cap, "NULL");
  else snprintf(buf, cap, "'%s'", CITIES[tu_below(rs, N_CITIES)]);
}

static void write_rows(tdb *t, uint64_t *rs, int n) {
  for (int i = 0; i < n; i++) {
    char sql[256], c[32], num[32];
    city_lit(rs, c, sizeof c);
    if (tu_below(rs, 6) == 0) snprintf(num, sizeof num, "NULL");
    else snprintf(num, sizeof num, "%d", (int)tu_below(rs, 41) - 20);
    snprintf(sql, sizeof sql, "UPSERT INTO T VALUES (%d, %s, %s, %s%d.%d)",
             (int)tu_below(rs, 120), c, num, tu_below(rs, 8) ? "" : "-", (int)tu_below(rs, 100),
             (int)tu_below(rs, 4) * 2);
    q(t, sql);
  }
}

/* One key expression of the test indexes with the values its constants are drawn from. */
typedef struct keyx {
  const char *index;  /* index name */
  const char *expr;   /* the key expression as queries write it */
  bool text;          /* compared with VARCHAR constants, else INTEGER */
  bool after_n;       /* the key follows N in the index: the WHERE pins N first */
} keyx;

static const keyx KEYS[] = {
    {"I_UP", "UPPER(CITY)", true, false},
    {"I_ABS", "ABS(N)", false, false},
    {"I_MIX", "N + 1", false, false},
    {"I_DIV", "D / 4", false, false},
    {"I_TAIL", "UPPER(CITY)", true, true},
};
#define N_KEYS 5

/* A random constant for key k: literal text into lit, the same value into *v. */
static void constant(uint64_t *rs, const keyx *k, char *lit, size_t cap, cat_value *v,
                     char *sbuf) {
  if (k->text) {
    const char *c = CITIES[tu_below(rs, N_CITIES)];
    size_t n = strlen(c);
    for (size_t i = 0; i <= n; i++) sbuf[i] = (char)(c[i] >= 'a' && c[i] <= 'z' ? c[i] - 32 : c[i]);
    if (tu_below(rs, 5) == 0) sbuf[n > 2 ? 2 : n] = 0; /* a prefix: between stored values */
    snprintf(lit, cap, "'%s'", sbuf);
    *v = cat_v_str(CAT_T_VARCHAR, sbuf, strlen(sbuf));
  } else {
    int x = (int)tu_below(rs, 45) - 22;
    snprintf(lit, cap, "%d", x);
    *v = cat_v_int(CAT_T_INTEGER, x);
  }
}

/* Build a random WHERE over key k into where (parameters as ?n when params is set, their
** values in pv[0..*np), their text in sb). */
static void make_where(uint64_t *rs, const keyx *k, bool params, char *where, size_t cap,
                       cat_value *pv, int *np, char (*sb)[32]) {
  char a[40], b[40], c[40];
  cat_value va, vb, vc;
  constant(rs, k, a, sizeof a, &va, sb[0]);
  constant(rs, k, b, sizeof b, &vb, sb[1]);
  constant(rs, k, c, sizeof c, &vc, sb[2]);
  *np = 0;
  if (params) {
    pv[0] = va;
    pv[1] = vb;
    pv[2] = vc;
    snprintf(a, sizeof a, "?");
    snprintf(b, sizeof b, "?");
    snprintf(c, sizeof c, "?");
  }
  int uses = 0;
  switch (tu_below(rs, 9)) {
    case 0: snprintf(where, cap, "%s = %s", k->expr, a); uses = 1; break;
    case 1: snprintf(where, cap, "%s < %s", k->expr, a); uses = 1; break;
    case 2: snprintf(where, cap, "%s <= %s", k->expr, a); uses = 1; break;
    case 3: snprintf(where, cap, "%s > %s", k->expr, a); uses = 1; break;
    case 4: snprintf(where, cap, "%s >= %s", k->expr, a); uses = 1; break;
    case 5: snprintf(where, cap, "%s BETWEEN %s AND %s", k->expr, a, b); uses = 2; break;
    case 6: snprintf(where, cap, "%s IN (%s, %s, %s)", k->expr, a, b, c); uses = 3; break;
    case 7: snprintf(where, cap, "%s IS NULL", k->expr); break;
    default: snprintf(where, cap, "%s = %s AND ID > 40", k->expr, a); uses = 1; break;
  }
  if (params) *np = uses;
  if (k->after_n) {
    char pre[32];
    int l = snprintf(pre, sizeof pre, "N = %d AND ", (int)tu_below(rs, 41) - 20);
    size_t wl = strlen(where);
    assert_true((size_t)l + wl < cap);
    memmove(where + l, where, wl + 1);
    memcpy(where, pre, (size_t)l);
  }
}

static void expr_index_equals_table(void **state) {
  (void)state;
  uint64_t seed = tu_seed("expr_index_equals_table"), rs = seed;
  tdb *t = tdb_open();
  q(t, "CREATE TABLE T (ID INTEGER NOT NULL PRIMARY KEY, CITY VARCHAR, N INTEGER, D DOUBLE) "
       "VERSIONS = 3");
  q(t, "CREATE INDEX I_UP ON T (UPPER(CITY))");
  q(t, "CREATE INDEX I_ABS ON T (ABS(N) DESC) INCLUDE (D)");
  q(t, "CREATE INDEX I_MIX ON T (N + 1, CITY)");
  q(t, "CREATE INDEX I_DIV ON T (D / 4)");
  q(t, "CREATE INDEX I_TAIL ON T (N, UPPER(CITY) DESC)");
  write_rows(t, &rs, 150);
  assert_int_equal(kv_flush(t->db, 0), KV_OK);
  write_rows(t, &rs, 80);
  q(t, "DELETE FROM T WHERE ID < 10");
  int rounds = (int)tu_scaled(600, 80);
  static const char *const SEL[] = {"ID", "ID, CITY, N, D", "ID, D", "COUNT(*)"};
  for (int r = 0; r < rounds; r++) {
    const keyx *k = &KEYS[tu_below(&rs, N_KEYS)];
    bool params = tu_below(&rs, 3) == 0;
    char where[256], sb[3][32];
    cat_value pv[3];
    int np = 0;
    make_where(&rs, k, params, where, sizeof where, pv, &np, sb);
    const char *sel = SEL[tu_below(&rs, 4)];
    const char *order = strcmp(sel, "COUNT(*)") ? " ORDER BY ID" : "";
    char s1[512], s2[512];
    snprintf(s1, sizeof s1, "SELECT /*+ INDEX(T %s) */ %s FROM T WHERE %s%s", k->index, sel,
             where, order);
    snprintf(s2, sizeof s2, "SELECT /*+ NO_INDEX */ %s FROM T WHERE %s%s", sel, where, order);
    int rc = tdb_runp(t, s1, np, pv);
    if (rc != EXEC_DONE) fail_msg("seed %llu round %d: %s: %s", (unsigned long long)seed, r, s1, t->err.msg);
    char *got = strdup(t->out);
    assert_int_equal(tdb_runp(t, s2, np, pv), EXEC_DONE);
    if (strcmp(got, t->out) != 0)
      fail_msg("seed %llu round %d: %s\n%s\n-- without the index:\n%s", (unsigned long long)seed,
               r, s1, got, t->out);
    free(got);
    if (!params) {
      /* the forced plan is an index scan bounded by the expression's key */
      char e[600];
      snprintf(e, sizeof e, "EXPLAIN %s", s1);
      const char *x = q(t, e);
      char over[64];
      snprintf(over, sizeof over, "OVER T.%s", k->index);
      if (!strstr(x, over) || !strstr(x, "KEY RANGE: ") || strstr(x, "FULL SCAN"))
        fail_msg("seed %llu round %d: %s\n%s", (unsigned long long)seed, r, e, x);
    }
    switch (tu_below(&rs, 12)) {
      case 0: write_rows(t, &rs, 6); break;
      case 1: {
        char d[96];
        snprintf(d, sizeof d, "DELETE FROM T WHERE ID = %d", (int)tu_below(&rs, 120));
        q(t, d);
        break;
      }
      case 2:
        if (tu_below(&rs, 4) == 0) assert_int_equal(kv_flush(t->db, 0), KV_OK);
        break;
      default: break;
    }
  }
  tdb_close(t);
}

/* An update that changes the expression's value moves the row in the index: the old value
** finds nothing, the new one finds the row, before and after a flush; a deleted row is
** gone from the index. */
static void update_moves_index_row(void **state) {
  (void)state;
  tdb *t = tdb_open();
  q(t, "CREATE TABLE P (ID INTEGER PRIMARY KEY, CITY VARCHAR)");
  q(t, "CREATE INDEX I_CITY ON P (UPPER(CITY))");
  q(t, "UPSERT INTO P VALUES (1, 'Oslo'), (2, 'Bergen')");
  const char *old_q = "SELECT /*+ INDEX(P I_CITY) */ ID FROM P WHERE UPPER(CITY) = 'OSLO'";
  const char *new_q = "SELECT /*+ INDEX(P I_CITY) */ ID FROM P WHERE UPPER(CITY) = 'PARIS'";
  assert_string_equal(q(t, old_q), "1\n");
  for (int i = 0; i < 2; i++) {
    q(t, "UPSERT INTO P VALUES (1, 'paris')");
    assert_string_equal(q(t, old_q), "");
    assert_string_equal(q(t, new_q), "1\n");
    assert_int_equal(kv_flush(t->db, 0), KV_OK);
    assert_string_equal(q(t, old_q), "");
    assert_string_equal(q(t, new_q), "1\n");
    q(t, "UPSERT INTO P VALUES (1, 'OSLO')");
    assert_string_equal(q(t, old_q), "1\n");
    assert_string_equal(q(t, new_q), "");
  }
  q(t, "UPSERT INTO P VALUES (1, NULL)");
  assert_string_equal(q(t, old_q), "");
  assert_string_equal(q(t, "SELECT /*+ INDEX(P I_CITY) */ ID FROM P WHERE UPPER(CITY) IS NULL"),
                      "1\n");
  q(t, "DELETE FROM P WHERE ID = 1");
  assert_string_equal(q(t, "SELECT /*+ INDEX(P I_CITY) */ ID FROM P WHERE UPPER(CITY) IS NULL"),
                      "");
  assert_string_equal(q(t, "SELECT /*+ INDEX(P I_CITY) */ ID FROM P WHERE UPPER(CITY) = 'BERGEN'"),
                      "2\n");
  tdb_close(t);
}

/* The rows of a hinted query on the expression index of E and of the same query without
** any index, which must be equal; returns the rows (t->out). */
static const char *both(tdb *t, const char *where) {
  char s1[256], s2[256];
  snprintf(s1, sizeof s1, "SELECT /*+ INDEX(E I_V) */ K, V FROM E WHERE %s ORDER BY K", where);
  snprintf(s2, sizeof s2, "SELECT /*+ NO_INDEX */ K, V FROM E WHERE %s ORDER BY K", where);
  char *got = strdup(q(t, s1));
  q(t, s2);
  if (strcmp(got, t->out) != 0) fail_msg("%s\n%s\n-- without the index:\n%s", s1, got, t->out);
  free(got);
  return t->out;
}

/* A TTL table: the index is never trusted alone (each row is confirmed by its lookup), so
** expired rows do not come back through the index; a transaction's uncommitted writes that
** change an expression's value are seen through the index as through the table. */
static void ttl_and_transaction(void **state) {
  (void)state;
  tdb *t = tdb_open();
  q(t, "CREATE TABLE E (K INTEGER PRIMARY KEY, V VARCHAR) TTL = 10");
  q(t, "CREATE INDEX I_V ON E (UPPER(V))");
  q(t, "UPSERT INTO E VALUES (1, 'Oslo'), (2, 'oslo'), (3, 'Rome')");
  assert_int_equal(kv_flush(t->db, 0), KV_OK);
  kv_env_mem_set_time(t->env, 1500000000000LL + 6000);
  q(t, "UPSERT INTO E VALUES (4, 'OSLO'), (5, 'Lima')");
  const char *x = q(t, "EXPLAIN SELECT /*+ INDEX(E I_V) */ K FROM E WHERE UPPER(V) = 'OSLO'");
  if (!strstr(x, "RANGE SCAN OVER E.I_V") || !strstr(x, "LOOKUP BACK INTO E"))
    fail_msg("a TTL table's index scan must look rows up:\n%s", x);
  assert_string_equal(both(t, "UPPER(V) = 'OSLO'"), "1|Oslo\n2|oslo\n4|OSLO\n");
  kv_env_mem_set_time(t->env, 1500000000000LL + 12000); /* rows 1..3 expired */
  assert_string_equal(both(t, "UPPER(V) = 'OSLO'"), "4|OSLO\n");
  assert_string_equal(both(t, "UPPER(V) >= 'LIMA'"), "4|OSLO\n5|Lima\n");
  q(t, "BEGIN");
  q(t, "UPSERT INTO E VALUES (4, 'Rome'), (6, 'oslo')");
  assert_string_equal(both(t, "UPPER(V) = 'OSLO'"), "6|oslo\n");
  assert_string_equal(both(t, "UPPER(V) IN ('ROME', 'LIMA')"), "4|Rome\n5|Lima\n");
  q(t, "DELETE FROM E WHERE K = 5");
  assert_string_equal(both(t, "UPPER(V) IN ('ROME', 'LIMA')"), "4|Rome\n");
  q(t, "ROLLBACK");
  assert_string_equal(both(t, "UPPER(V) = 'OSLO'"), "4|OSLO\n");
  assert_string_equal(both(t, "UPPER(V) IN ('ROME', 'LIMA')"), "5|Lima\n");
  tdb_close(t);
}

/* Count the PX_COLUMN nodes of e with slot `slot`. */
static int count_slot(const plan_expr *e, int slot) {
  if (!e) return 0;
  int n = e->kind == PX_COLUMN && e->column == slot;
  for (uint32_t i = 0; i < e->n_args; i++) n += count_slot(e->args[i], slot);
  return n;
}

/* plan_index_key_bind binds key text against the table alone and refuses what cannot be an
** index key with a message; plan_index_expr_sub replaces exactly the equal subtrees
** (not LOWER for UPPER, not another column, not another constant argument) and
** plan_index_expr_unsub gives back an equal tree. */
static void key_bind_and_rewrite(void **state) {
  (void)state;
  tdb *t = tdb_open();
  q(t, "CREATE TABLE P (ID INTEGER PRIMARY KEY, CITY VARCHAR, C2 VARCHAR)");
  cat_catalog *cat = NULL;
  cat_error ce;
  memset(&ce, 0, sizeof ce);
  assert_int_equal(cat_open(t->db, &cat, &ce), CAT_OK);
  const cat_table *tb = cat_find_table(cat, "P");
  assert_non_null(tb);
  plan_arena A;
  plan_arena_init(&A);
  char msg[256];
  plan_expr *key = NULL, *w = NULL;
  assert_int_equal(plan_index_key_bind(tb, "upper( CITY )", &A, &key, msg, sizeof msg), EXEC_OK);
  assert_int_equal(key->kind, PX_FUNC);
  assert_int_equal(key->type.id, CAT_T_VARCHAR);
  static const char *const bad[][2] = {
      {"NOW()", "not deterministic"}, {"COUNT(*)", "an index key"},
      {"UPPER(NOPE)", "NOPE"},        {"UPPER(", "does not parse"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    plan_expr *e = NULL;
    msg[0] = 0;
    assert_int_equal(plan_index_key_bind(tb, bad[i][0], &A, &e, msg, sizeof msg), EXEC_ERROR);
    assert_null(e);
    if (!strstr(msg, bad[i][1])) fail_msg("%s: %s", bad[i][0], msg);
  }
  const char *where = "UPPER(CITY) = 'A' AND (LOWER(CITY) = 'a' OR UPPER(C2) = 'A') AND "
                      "LENGTH(UPPER(CITY)) > 2 AND SUBSTR(UPPER(CITY), 1, 2) IN ('AB')";
  assert_int_equal(plan_index_key_bind(tb, where, &A, &w, msg, sizeof msg), EXEC_OK);
  plan_expr *keys[2] = {NULL, key};
  bool oom = false;
  plan_expr *sub = plan_index_expr_sub(&A, w, keys, 2, 10, &oom);
  assert_false(oom);
  assert_int_equal(count_slot(sub, 11), 3);
  assert_int_equal(count_slot(sub, 10), 0);
  char buf[512];
  const char *names[] = {"ID", "CITY", "C2"};
  plan_expr *back = plan_index_expr_unsub(&A, sub, keys, 2, 10, &oom);
  assert_false(oom);
  assert_true(plan_expr_equal(back, w));
  plan_expr_print(back, names, buf, sizeof buf);
  assert_non_null(strstr(buf, "LOWER(CITY) = 'a'"));
  /* another constant argument does not match */
  plan_expr *k2 = NULL;
  assert_int_equal(plan_index_key_bind(tb, "SUBSTR(CITY, 1, 3)", &A, &k2, msg, sizeof msg), 0);
  assert_int_equal(plan_index_key_bind(tb, "SUBSTR(CITY, 1, 2) = 'x'", &A, &w, msg, sizeof msg), 0);
  assert_ptr_equal(plan_index_expr_sub(&A, w, &k2, 1, 10, &oom), w);
  plan_arena_free(&A);
  cat_close(cat);
  tdb_close(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(expr_index_equals_table),
      cmocka_unit_test(update_moves_index_row),
      cmocka_unit_test(ttl_and_transaction),
      cmocka_unit_test(key_bind_and_rewrite),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
