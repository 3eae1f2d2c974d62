/*
** tests/sql/test_parse.c: the parser and printer on valid input: the corpus round trip
** (tests/sql/corpus/parse_ok.sql, parse -> print -> parse -> print gives the same text),
** statement-by-statement parsing with the tail pointer, the shape of trees users rely on
** (names folded, types, options, key order, parameters, offsets), precedence shown by the
** fully parenthesized printer, and a seeded random expression round trip.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sql/parser.h"
#include "testutil.h"

/* Parses exactly one statement from s; fails the test on error. */
static sql_stmt *parse1(const char *s) {
  sql_stmt *st = NULL;
  sql_error err;
  const char *tail;
  int rc = sql_parse(s, strlen(s), &st, &tail, &err);
  if (rc != SQL_OK) fail_msg("parse of \"%s\" failed: %s", s, err.message);
  if (!st) fail_msg("no statement in \"%s\"", s);
  return st;
}

/* print(parse(s)) with flags. */
static char *canon(const char *s, unsigned flags) {
  sql_stmt *st = parse1(s);
  char *p = sql_print_stmt(st, flags);
  assert_non_null(p);
  sql_stmt_free(st);
  return p;
}

static char *read_corpus(size_t *len) {
  const char *src = getenv("ROWAN_SOURCE_DIR");
  char path[1024];
  snprintf(path, sizeof path, "%s/tests/sql/corpus/parse_ok.sql", src ? src : ".");
  FILE *f = fopen(path, "rb");
  if (!f) fail_msg("cannot open %s", path);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc((size_t)n + 1);
  assert_non_null(buf);
  assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
  buf[n] = 0;
  fclose(f);
  *len = (size_t)n;
  return buf;
}

static void test_corpus_round_trip(void **state) {
  (void)state;
  size_t len;
  char *text = read_corpus(&len);
  const char *p = text, *end = text + len;
  int count = 0;
  int kinds[32] = {0};
  for (;;) {
    sql_stmt *st;
    sql_error err;
    const char *tail;
    int rc = sql_parse(p, (size_t)(end - p), &st, &tail, &err);
    if (rc != SQL_OK) fail_msg("corpus statement %d: %s", count + 1, err.message);
    if (!st) break;
    assert_true(tail > p && tail <= end);
    count++;
    kinds[st->kind]++;
    for (unsigned flags = 0; flags <= SQL_PRINT_FULL_PARENS; flags++) {
      char *a = sql_print_stmt(st, flags);
      assert_non_null(a);
      char *b = canon(a, flags);
      if (strcmp(a, b) != 0)
        fail_msg("round trip differs for statement %d:\n  %s\n  %s", count, a, b);
      /* the canonical text also parses to the same canonical text without flags */
      char *c = canon(a, 0);
      char *d = sql_print_stmt(st, 0);
      assert_string_equal(c, d);
      free(a);
      free(b);
      free(c);
      free(d);
    }
    sql_stmt_free(st);
    p = tail;
  }
  free(text);
  assert_true(count >= 200);
  for (int k = SQL_STMT_SELECT; k <= SQL_STMT_DROP_VIEW; k++)
    if (kinds[k] == 0) fail_msg("corpus has no statement of kind %d", k);
  printf("corpus: %d statements round-tripped\n", count);
}

static void test_tail_and_empty(void **state) {
  (void)state;
  const char *s = "SELECT 1; SELECT 'a;b' ; -- c\n ; UPSERT INTO t VALUES (1)";
  const char *end = s + strlen(s);
  sql_stmt *st;
  const char *tail;
  sql_error err;
  assert_int_equal(sql_parse(s, strlen(s), &st, &tail, &err), SQL_OK);
  assert_int_equal(st->kind, SQL_STMT_SELECT);
  assert_ptr_equal(tail, s + 9);
  assert_int_equal(st->off, 0);
  assert_int_equal(st->len, 8);
  sql_stmt_free(st);
  assert_int_equal(sql_parse(tail, (size_t)(end - tail), &st, &tail, &err), SQL_OK);
  assert_int_equal(st->kind, SQL_STMT_SELECT);
  assert_string_equal(st->u.select->cols->a[0].expr->text, "a;b");
  sql_stmt_free(st);
  /* empty statements and comments are skipped */
  assert_int_equal(sql_parse(tail, (size_t)(end - tail), &st, &tail, &err), SQL_OK);
  assert_int_equal(st->kind, SQL_STMT_UPSERT);
  assert_ptr_equal(tail, end);
  sql_stmt_free(st);
  assert_int_equal(sql_parse(tail, (size_t)(end - tail), &st, &tail, &err), SQL_OK);
  assert_null(st);
  /* only whitespace, comments and semicolons: no statement, tail at the end */
  const char *blank[] = {"", "   ", "-- only a comment", "/* c */ ;; -- x\n", ";"};
  for (size_t i = 0; i < sizeof blank / sizeof blank[0]; i++) {
    st = (sql_stmt *)1;
    assert_int_equal(sql_parse(blank[i], strlen(blank[i]), &st, &tail, &err), SQL_OK);
    assert_null(st);
    assert_ptr_equal(tail, blank[i] + strlen(blank[i]));
  }
  /* the length bounds the text: no NUL needed */
  assert_int_equal(sql_parse("SELECT 12345", 9, &st, &tail, &err), SQL_OK);
  char *p = sql_print_stmt(st, 0);
  assert_string_equal(p, "SELECT 12");
  free(p);
  sql_stmt_free(st);
  /* after an error the tail skips the failing statement */
  const char *bad = "SELECT FROM; SELECT 2";
  assert_int_equal(sql_parse(bad, strlen(bad), &st, &tail, &err), SQL_ERR_SYNTAX);
  assert_null(st);
  assert_ptr_equal(tail, bad + 12);
}

static void test_create_table_shape(void **state) {
  (void)state;
  sql_stmt *st = parse1(
      "create table if not exists readings (sensor_id varchar(32) not null, "
      "\"ts\" timestamp not null, readings.temp decimal(10,2), meta.location varchar, "
      "constraint pk primary key (sensor_id, \"ts\" desc)) versions=1, meta.VERSIONS=3, "
      "ttl=86400, compression='LZ4'");
  assert_int_equal(st->kind, SQL_STMT_CREATE_TABLE);
  const sql_create_table *t = st->u.create_table;
  assert_string_equal(t->name, "READINGS");
  assert_true(t->if_not_exists);
  assert_int_equal(t->ncol, 4);
  assert_string_equal(t->cols[0].name, "SENSOR_ID");
  assert_null(t->cols[0].family);
  assert_string_equal(t->cols[0].type->name, "VARCHAR");
  assert_int_equal(t->cols[0].type->nargs, 1);
  assert_int_equal(t->cols[0].type->arg[0], 32);
  assert_int_equal(t->cols[0].nullability, 2);
  assert_string_equal(t->cols[1].name, "ts");
  assert_string_equal(t->cols[1].type->name, "TIMESTAMP");
  assert_string_equal(t->cols[2].family, "READINGS");
  assert_string_equal(t->cols[2].name, "TEMP");
  assert_int_equal(t->cols[2].type->nargs, 2);
  assert_int_equal(t->cols[2].type->arg[0], 10);
  assert_int_equal(t->cols[2].type->arg[1], 2);
  assert_int_equal(t->cols[2].nullability, 0);
  assert_string_equal(t->pk_name, "PK");
  assert_int_equal(t->pk->n, 2);
  assert_false(t->pk->a[0].desc);
  assert_string_equal(t->pk->a[1].name, "ts");
  assert_true(t->pk->a[1].desc);
  assert_int_equal(t->opts->n, 4);
  assert_null(t->opts->a[0].family);
  assert_string_equal(t->opts->a[0].name, "VERSIONS");
  assert_string_equal(t->opts->a[0].value->text, "1");
  assert_string_equal(t->opts->a[1].family, "META");
  assert_string_equal(t->opts->a[1].name, "VERSIONS");
  assert_int_equal(t->opts->a[3].value->lit, SQL_LIT_STRING);
  assert_string_equal(t->opts->a[3].value->text, "LZ4");
  sql_stmt_free(st);

  st = parse1("CREATE TABLE t (k BIGINT PRIMARY KEY DESC, v INTEGER NULL)");
  t = st->u.create_table;
  assert_true(t->cols[0].pk);
  assert_true(t->cols[0].pk_desc);
  assert_int_equal(t->cols[1].nullability, 1);
  assert_null(t->pk);
  assert_null(t->opts);
  sql_stmt_free(st);
}

static void test_other_statement_shapes(void **state) {
  (void)state;
  sql_stmt *st = parse1("CREATE INDEX IF NOT EXISTS i ON t (a DESC, b + 1) INCLUDE (m.c, d)");
  const sql_create_index *ci = st->u.create_index;
  assert_string_equal(ci->name, "I");
  assert_string_equal(ci->table, "T");
  assert_true(ci->if_not_exists);
  assert_int_equal(ci->keys->n, 2);
  assert_true(ci->keys->a[0].desc);
  assert_int_equal(ci->keys->a[1].expr->kind, SQL_E_BINARY);
  assert_int_equal(ci->include->n, 2);
  assert_string_equal(ci->include->a[0].family, "M");
  sql_stmt_free(st);

  st = parse1("DROP INDEX IF EXISTS i ON t");
  assert_int_equal(st->kind, SQL_STMT_DROP_INDEX);
  assert_true(st->u.drop->if_exists);
  assert_string_equal(st->u.drop->table, "T");
  sql_stmt_free(st);
  st = parse1("CHECK INDEX i ON t");
  assert_int_equal(st->kind, SQL_STMT_CHECK_INDEX);
  sql_stmt_free(st);

  st = parse1("UPSERT INTO t (k, meta.v) VALUES (1, ?), (?5, ?)");
  const sql_upsert *u = st->u.upsert;
  assert_int_equal(u->cols->n, 2);
  assert_string_equal(u->cols->a[1].family, "META");
  assert_int_equal(u->rows->n, 2);
  assert_int_equal(u->rows->a[0]->kind, SQL_E_ROW);
  assert_int_equal(u->rows->a[1]->list->a[0]->param, 5);
  assert_int_equal(u->rows->a[1]->list->a[1]->param, 6); /* a bare ? after ?5 is 6 */
  assert_int_equal(u->rows->a[0]->list->a[1]->param, 1);
  assert_int_equal(st->nparam, 6);
  sql_stmt_free(st);

  st = parse1("EXPLAIN ANALYZE DELETE /*+ NO_INDEX */ FROM t WHERE k = 1 LIMIT 10");
  assert_true(st->explain);
  assert_true(st->analyze);
  assert_int_equal(st->kind, SQL_STMT_DELETE);
  assert_string_equal(st->u.del->hint, "NO_INDEX");
  assert_non_null(st->u.del->limit);
  sql_stmt_free(st);

  /* a hint only counts right after SELECT/UPSERT/DELETE; elsewhere it is a comment */
  st = parse1("SELECT a /*+ INDEX(t i) */ FROM t");
  assert_null(st->u.select->hint);
  sql_stmt_free(st);

  st = parse1("SELECT /*+  INDEX(t i)\n */ DISTINCT t.*, x.f.*, a AS \"b\", c d FROM t x "
              "WHERE a IS NOT NULL GROUP BY a HAVING COUNT(*) > 1 "
              "ORDER BY a DESC NULLS LAST LIMIT 5 OFFSET 2");
  const sql_select *s = st->u.select;
  assert_string_equal(s->hint, "INDEX(t i)");
  assert_true(s->distinct);
  assert_int_equal(s->cols->n, 4);
  assert_null(s->cols->a[0].expr);
  assert_int_equal(s->cols->a[0].nqual, 1);
  assert_int_equal(s->cols->a[1].nqual, 2);
  assert_string_equal(s->cols->a[1].qual[1], "F");
  assert_string_equal(s->cols->a[2].alias, "b");
  assert_string_equal(s->cols->a[3].alias, "D");
  assert_string_equal(s->table, "T");
  assert_string_equal(s->alias, "X");
  assert_int_equal(s->where->kind, SQL_E_ISNULL);
  assert_true(s->where->negated);
  assert_int_equal(s->order->a[0].nulls, 2);
  assert_string_equal(s->limit->text, "5");
  assert_string_equal(s->offset->text, "2");
  sql_stmt_free(st);

  /* joins: the first table in table/alias, the others in joins with their kind, words'
     offsets, ON or USING */
  st = parse1("SELECT 1 FROM a x JOIN b AS y ON x.k = y.k LEFT OUTER JOIN c USING (k), d "
              "CROSS JOIN e NATURAL RIGHT JOIN f");
  s = st->u.select;
  assert_string_equal(s->table, "A");
  assert_string_equal(s->alias, "X");
  assert_int_equal(s->alias_off, 16);
  assert_int_equal(s->joins->n, 5);
  const sql_join *jn = s->joins->a;
  assert_int_equal(jn[0].kind, SQL_JOIN_INNER);
  assert_int_equal(jn[0].off, 18);
  assert_string_equal(jn[0].table, "B");
  assert_string_equal(jn[0].alias, "Y");
  assert_int_equal(jn[0].on->kind, SQL_E_BINARY);
  assert_int_equal(jn[1].kind, SQL_JOIN_LEFT);
  assert_null(jn[1].alias);
  assert_int_equal(jn[1].using->n, 1);
  assert_int_equal(jn[2].kind, SQL_JOIN_COMMA);
  assert_int_equal(jn[3].kind, SQL_JOIN_CROSS);
  assert_int_equal(jn[4].kind, SQL_JOIN_RIGHT);
  assert_true(jn[4].natural);
  sql_stmt_free(st);

  /* Phoenix's dynamic columns: a type after a column of UPSERT's list, a typed list after a
     FROM item (after its alias) and after DELETE's table; offsets at the first name part */
  st = parse1("UPSERT INTO t (k, extra.note VARCHAR(5)) VALUES (1, 'a')");
  const sql_colname_list *cl = st->u.upsert->cols;
  assert_int_equal(cl->n, 2);
  assert_null(cl->a[0].type);
  assert_string_equal(cl->a[1].family, "EXTRA");
  assert_string_equal(cl->a[1].type->name, "VARCHAR");
  assert_int_equal(cl->a[1].type->arg[0], 5);
  assert_int_equal(cl->a[1].off, 18);
  sql_stmt_free(st);
  st = parse1("SELECT 1 FROM a x (f.c INTEGER, d DATE) JOIN b (g.e DOUBLE) ON x.k = b.k");
  s = st->u.select;
  assert_string_equal(s->alias, "X");
  assert_int_equal(s->dyn->n, 2);
  assert_int_equal(s->dyn->a[0].off, 19);
  assert_null(s->dyn->a[1].family);
  assert_string_equal(s->dyn->a[1].type->name, "DATE");
  assert_int_equal(s->joins->a[0].dyn->n, 1);
  assert_string_equal(s->joins->a[0].dyn->a[0].name, "E");
  sql_stmt_free(st);
  st = parse1("SELECT 1 FROM a AS OF TIMESTAMP '2024-01-01 00:00:00' x (f.c INTEGER) JOIN b "
              "FOR SYSTEM_TIME AS OF TIMESTAMP '2024-01-01 00:00:00' ON 1 = 1");
  assert_int_equal(st->u.select->dyn->n, 1);
  assert_null(st->u.select->joins->a[0].dyn);
  sql_stmt_free(st);
  st = parse1("DELETE FROM t (f.c BIGINT) WHERE c = 1");
  assert_int_equal(st->u.del->dyn->n, 1);
  assert_int_equal(st->u.del->dyn->a[0].off, 15);
  sql_stmt_free(st);

  const char *tx[] = {"BEGIN", "commit", "RollBack"};
  const int kinds[] = {SQL_STMT_BEGIN, SQL_STMT_COMMIT, SQL_STMT_ROLLBACK};
  for (int i = 0; i < 3; i++) {
    st = parse1(tx[i]);
    assert_int_equal(st->kind, kinds[i]);
    sql_stmt_free(st);
  }
}

static void test_literals_and_offsets(void **state) {
  (void)state;
  const char *sql = "SELECT 12, 12.5, .5, 1.5E-3, 'it''s', DATE '2024-01-01', NULL, TRUE,\n"
                    "  t.f.c, ?3 FROM t";
  sql_stmt *st = parse1(sql);
  const sql_result_list *c = st->u.select->cols;
  const int lits[] = {SQL_LIT_INTEGER, SQL_LIT_DECIMAL, SQL_LIT_DECIMAL, SQL_LIT_DOUBLE,
                      SQL_LIT_STRING, SQL_LIT_DATE, SQL_LIT_NULL, SQL_LIT_TRUE};
  const char *texts[] = {"12", "12.5", ".5", "1.5E-3", "it's", "2024-01-01"};
  for (int i = 0; i < 8; i++) {
    assert_int_equal(c->a[i].expr->kind, SQL_E_LITERAL);
    assert_int_equal(c->a[i].expr->lit, lits[i]);
    if (i < 6) assert_string_equal(c->a[i].expr->text, texts[i]);
  }
  assert_int_equal(c->a[0].expr->off, 7);
  assert_int_equal(c->a[5].expr->off, strstr(sql, "DATE") - sql); /* the keyword */
  const sql_expr *col = c->a[8].expr;
  assert_int_equal(col->kind, SQL_E_COLUMN);
  assert_int_equal(col->nname, 3);
  assert_string_equal(col->name[0], "T");
  assert_string_equal(col->name[2], "C");
  assert_int_equal(col->off, strstr(sql, "t.f.c") - sql);
  assert_int_equal(c->a[9].expr->param, 3);
  assert_true(c->a[9].expr->param_numbered);
  sql_stmt_free(st);
}

/* Precedence: the fully parenthesized print of "SELECT <expr>" shows the grouping. */
static void check_groups(const char *expr, const char *want) {
  char sql[512];
  snprintf(sql, sizeof sql, "SELECT %s", expr);
  char *p = canon(sql, SQL_PRINT_FULL_PARENS);
  if (strcmp(p + 7, want) != 0) fail_msg("%s\n  got  %s\n  want %s", expr, p + 7, want);
  free(p);
}

static void test_precedence(void **state) {
  (void)state;
  check_groups("a OR b AND c", "(A OR (B AND C))");
  check_groups("a AND b OR c", "((A AND B) OR C)");
  check_groups("NOT a AND b", "((NOT A) AND B)");
  check_groups("NOT a = b", "(NOT (A = B))");
  check_groups("a = b AND c < d", "((A = B) AND (C < D))");
  check_groups("a + b * c", "(A + (B * C))");
  check_groups("a - b - c", "((A - B) - C)");
  check_groups("a / b * c % d", "(((A / B) * C) % D)");
  check_groups("-a * b", "((-A) * B)");
  check_groups("-a.b + 1", "((-A.B) + 1)");
  check_groups("a || b + c", "(A || (B + C))");
  check_groups("a || b || c", "((A || B) || C)");
  check_groups("a + b = c || d", "((A + B) = (C || D))");
  check_groups("a = b IS NULL", "((A = B) IS NULL)");
  check_groups("NOT a IS NOT NULL", "(NOT (A IS NOT NULL))");
  check_groups("a = b IN (1, 2)", "(A = (B IN (1, 2)))");
  check_groups("a = b NOT IN (1)", "(A = (B NOT IN (1)))");
  check_groups("NOT a IN (1)", "(NOT (A IN (1)))");
  check_groups("a + 1 IN (2)", "((A + 1) IN (2))");
  check_groups("a BETWEEN 1 AND 2 AND b", "((A BETWEEN 1 AND 2) AND B)");
  check_groups("a NOT BETWEEN b + 1 AND c * 2 OR d",
               "((A NOT BETWEEN (B + 1) AND (C * 2)) OR D)");
  check_groups("a < b BETWEEN c AND d", "(A < (B BETWEEN C AND D))");
  check_groups("a LIKE b || c ESCAPE d", "(A LIKE (B || C) ESCAPE D)");
  check_groups("a || b NOT ILIKE c", "((A || B) NOT ILIKE C)");
  check_groups("a LIKE b = c", "((A LIKE B) = C)");
  check_groups("a LIKE b AND c", "((A LIKE B) AND C)");
  check_groups("(a, b) > (1, 2) OR a = 1", "(((A, B) > (1, 2)) OR (A = 1))");
  check_groups("CASE WHEN a OR b THEN c + 1 END * 2", "(CASE WHEN (A OR B) THEN (C + 1) END * 2)");
  check_groups("CAST(a + b AS INTEGER) - 1", "(CAST((A + B) AS INTEGER) - 1)");
  check_groups("f(a + b, c) * -d", "(F((A + B), C) * (-D))");
}

/* ---- Random expressions: print, parse, print must agree ------------------------------------ */

static void gen(char *out, size_t cap, size_t *n, uint64_t *rng, int depth);

static void emit(char *out, size_t cap, size_t *n, const char *s) {
  size_t l = strlen(s);
  if (*n + l + 1 < cap) {
    memcpy(out + *n, s, l);
    *n += l;
    out[*n] = 0;
  }
}

static void gen(char *out, size_t cap, size_t *n, uint64_t *rng, int depth) {
  static const char *leaves[] = {"a", "b.c", "1", "2.5", "'s'", "NULL", "TRUE", "?", "x.y.z",
                                 "1e3", "DATE '2024-01-01'", "COUNT(*)"};
  static const char *bin[] = {" OR ", " AND ", " = ", " <> ", " < ", " >= ", " || ", " + ",
                              " - ", " * ", " / ", " % "};
  if (depth <= 0 || tu_below(rng, 4) == 0) {
    emit(out, cap, n, leaves[tu_below(rng, sizeof leaves / sizeof leaves[0])]);
    return;
  }
  switch (tu_below(rng, 11)) {
    case 0: emit(out, cap, n, "NOT "); gen(out, cap, n, rng, depth - 1); break;
    case 1: emit(out, cap, n, "-"); gen(out, cap, n, rng, depth - 1); break;
    case 2:
      gen(out, cap, n, rng, depth - 1);
      emit(out, cap, n, tu_below(rng, 2) ? " IS NULL" : " IS NOT NULL");
      break;
    case 3:
      gen(out, cap, n, rng, depth - 1);
      emit(out, cap, n, tu_below(rng, 2) ? " IN (" : " NOT IN (");
      gen(out, cap, n, rng, depth - 1);
      emit(out, cap, n, ", ");
      gen(out, cap, n, rng, depth - 1);
      emit(out, cap, n, ")");
      break;
    case 4:
      gen(out, cap, n, rng, depth - 1);
      emit(out, cap, n, tu_below(rng, 2) ? " BETWEEN " : " NOT BETWEEN ");
      gen(out, cap, n, rng, depth - 1);
      emit(out, cap, n, " AND ");
      gen(out, cap, n, rng, depth - 1);
      break;
    case 5:
      gen(out, cap, n, rng, depth - 1);
      emit(out, cap, n, tu_below(rng, 2) ? " LIKE " : " NOT ILIKE ");
      gen(out, cap, n, rng, depth - 1);
      if (tu_below(rng, 2)) {
        emit(out, cap, n, " ESCAPE ");
        gen(out, cap, n, rng, depth - 1);
      }
      break;
    case 6:
      emit(out, cap, n, "(");
      gen(out, cap, n, rng, depth - 1);
      emit(out, cap, n, ")");
      break;
    case 7:
      emit(out, cap, n, "CASE WHEN ");
      gen(out, cap, n, rng, depth - 1);
      emit(out, cap, n, " THEN ");
      gen(out, cap, n, rng, depth - 1);
      emit(out, cap, n, " END");
      break;
    default:
      gen(out, cap, n, rng, depth - 1);
      emit(out, cap, n, bin[tu_below(rng, sizeof bin / sizeof bin[0])]);
      gen(out, cap, n, rng, depth - 1);
      break;
  }
}

static void test_random_round_trip(void **state) {
  (void)state;
  uint64_t seed = tu_seed("test_random_round_trip");
  uint64_t rng = seed;
  uint64_t iters = tu_scaled(3000, 200);
  int parsed = 0;
  for (uint64_t i = 0; i < iters; i++) {
    char sql[4096] = "SELECT ";
    size_t n = strlen(sql);
    gen(sql, sizeof sql, &n, &rng, 5);
    sql_stmt *st;
    sql_error err;
    /* some random mixes are not valid (a = b = c is non-associative): skip those */
    if (sql_parse(sql, n, &st, NULL, &err) != SQL_OK) {
      assert_int_equal(err.code, SQL_ERR_SYNTAX);
      continue;
    }
    parsed++;
    for (unsigned flags = 0; flags <= SQL_PRINT_FULL_PARENS; flags++) {
      char *a = sql_print_stmt(st, flags);
      sql_stmt *st2;
      if (sql_parse(a, strlen(a), &st2, NULL, &err) != SQL_OK)
        fail_msg("seed %llu: reparse of \"%s\" (from \"%s\") failed: %s",
                 (unsigned long long)seed, a, sql, err.message);
      char *b = sql_print_stmt(st2, flags);
      if (strcmp(a, b) != 0)
        fail_msg("seed %llu: \"%s\"\n  print  %s\n  again  %s", (unsigned long long)seed, sql,
                 a, b);
      /* the minimal and the full print describe the same tree */
      char *fa = sql_print_stmt(st, SQL_PRINT_FULL_PARENS);
      char *fb = sql_print_stmt(st2, SQL_PRINT_FULL_PARENS);
      assert_string_equal(fa, fb);
      free(fa);
      free(fb);
      free(a);
      free(b);
      sql_stmt_free(st2);
    }
    sql_stmt_free(st);
  }
  assert_true(parsed > (int)(iters / 4));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_corpus_round_trip),   cmocka_unit_test(test_tail_and_empty),
      cmocka_unit_test(test_create_table_shape),  cmocka_unit_test(test_other_statement_shapes),
      cmocka_unit_test(test_literals_and_offsets), cmocka_unit_test(test_precedence),
      cmocka_unit_test(test_random_round_trip),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
