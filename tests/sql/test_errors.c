/*
** tests/sql/test_errors.c: what a user sees when SQL is wrong: the error code, byte
** offset, line and column (in characters) of the offending token, the near "TOKEN" or "end
** of input" text and the expected tokens; tokenizer errors at the start of the bad
** construct; the depth limits (an error, never a stack overflow); and that every prefix of
** every corpus statement either parses or fails cleanly (run under ASan for leaks).
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

typedef struct bad_case {
  const char *sql;   /* input */
  int code;          /* expected status */
  int line, column;  /* expected position */
  const char *near;  /* a substring the message must contain */
} bad_case;

static void check_bad(const bad_case *c) {
  sql_stmt *st = (sql_stmt *)1;
  sql_error err;
  int rc = sql_parse(c->sql, strlen(c->sql), &st, NULL, &err);
  if (rc != c->code)
    fail_msg("\"%s\": rc %s (%s), want %s", c->sql, sql_status_name(rc), err.message,
             sql_status_name(c->code));
  assert_null(st);
  assert_int_equal(err.code, rc);
  if (err.line != c->line || err.column != c->column)
    fail_msg("\"%s\": at %d:%d, want %d:%d (%s)", c->sql, err.line, err.column, c->line,
             c->column, err.message);
  if (!strstr(err.message, c->near))
    fail_msg("\"%s\": message \"%s\" lacks \"%s\"", c->sql, err.message, c->near);
  char pos[64];
  snprintf(pos, sizeof pos, "line %d, column %d", c->line, c->column);
  if (!strstr(err.message, pos)) fail_msg("message \"%s\" lacks \"%s\"", err.message, pos);
  assert_true(err.offset <= strlen(c->sql));
}

static void test_syntax_positions(void **state) {
  (void)state;
  const bad_case cases[] = {
      {"SELECT FROM t", SQL_ERR_SYNTAX, 1, 8, "near \"FROM\""},
      {"SELECT a FROM", SQL_ERR_SYNTAX, 1, 14, "end of input"},
      {"SELECT a FROM t WHERE", SQL_ERR_SYNTAX, 1, 22, "end of input"},
      {"SELECT a,\n  b\n  FROM t WHERE a = = 1", SQL_ERR_SYNTAX, 3, 20, "near \"=\""},
      {"SELEC a FROM t", SQL_ERR_SYNTAX, 1, 1, "near \"SELEC\""},
      {"SELECT a b c FROM t", SQL_ERR_SYNTAX, 1, 12, "near \"c\""},
      {"SELECT 1 2", SQL_ERR_SYNTAX, 1, 10, "near \"2\""},
      {"SELECT (1, 2", SQL_ERR_SYNTAX, 1, 13, "end of input"},
      {"SELECT a FROM t WHERE a IN ()", SQL_ERR_SYNTAX, 1, 29, "near \")\""},
      {"SELECT a = b = c", SQL_ERR_SYNTAX, 1, 14, "near \"=\""},
      {"CREATE TABLE t (k INTEGER PRIMARY KEY,)", SQL_ERR_SYNTAX, 1, 39, "near \")\""},
      {"CREATE TABLE t (k INTEGER", SQL_ERR_SYNTAX, 1, 26, "end of input"},
      {"CREATE TABLE t (k VARCHAR(x))", SQL_ERR_SYNTAX, 1, 27, "near \"x\""},
      {"CREATE INDEX i ON t", SQL_ERR_SYNTAX, 1, 20, "end of input"},
      {"DROP TABLE", SQL_ERR_SYNTAX, 1, 11, "end of input"},
      {"UPSERT INTO t VALUES 1", SQL_ERR_SYNTAX, 1, 22, "near \"1\""},
      {"UPSERT t VALUES (1)", SQL_ERR_SYNTAX, 1, 8, "near \"t\""},
      {"DELETE t", SQL_ERR_SYNTAX, 1, 8, "near \"t\""},
      {"EXPLAIN CREATE TABLE t (k INTEGER)", SQL_ERR_SYNTAX, 1, 9, "near \"CREATE\""},
      {"EXPLAIN BEGIN", SQL_ERR_SYNTAX, 1, 9, "near \"BEGIN\""},
      {"SELECT CASE END", SQL_ERR_SYNTAX, 1, 13, "near \"END\""},
      {"SELECT CAST(a) FROM t", SQL_ERR_SYNTAX, 1, 14, "near \")\""},
      {"SELECT a FROM t ORDER a", SQL_ERR_SYNTAX, 1, 23, "near \"a\""},
      {"SELECT a FROM t LIMIT", SQL_ERR_SYNTAX, 1, 22, "end of input"},
      {"-- c\n/* c */ SELECT ;", SQL_ERR_SYNTAX, 2, 16, "near \";\""},
      {"SELECT 'ünï' + ", SQL_ERR_SYNTAX, 1, 16, "end of input"},
      {"SELECT 'ünï' + FROM", SQL_ERR_SYNTAX, 1, 16, "near \"FROM\""},
      {"SELECT a FROM t WHERE a NOT NULL", SQL_ERR_SYNTAX, 1, 25, "near \"NOT\""},
      {"BEGIN TRANSACTION", SQL_ERR_SYNTAX, 1, 7, "near \"TRANSACTION\""},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_bad(&cases[i]);
}

static void test_expected_tokens(void **state) {
  (void)state;
  sql_error err;
  sql_stmt *st;
  assert_int_equal(sql_parse("DROP TABLE IF t", 15, &st, NULL, &err), SQL_ERR_SYNTAX);
  assert_non_null(strstr(err.message, "expected \"EXISTS\""));
  const char *s = "SELECT a FROM t ORDER a";
  assert_int_equal(sql_parse(s, strlen(s), &st, NULL, &err), SQL_ERR_SYNTAX);
  assert_non_null(strstr(err.message, "expected \"BY\""));
  s = "CREATE TABLE t (k INTEGER";
  assert_int_equal(sql_parse(s, strlen(s), &st, NULL, &err), SQL_ERR_SYNTAX);
  assert_non_null(strstr(err.message, "\")\""));
  assert_non_null(strstr(err.message, "\",\""));
  assert_non_null(strstr(err.message, "\"PRIMARY\""));
  /* what could follow an expression, not what follows a reduced clause */
  s = "SELECT a FROM t WHERE a NOT NULL";
  assert_int_equal(sql_parse(s, strlen(s), &st, NULL, &err), SQL_ERR_SYNTAX);
  assert_non_null(strstr(err.message, "\"IS\""));
  assert_non_null(strstr(err.message, "\"AND\""));
  /* where a name is expected, non-reserved keywords are not listed separately */
  s = "SELECT a FROM";
  assert_int_equal(sql_parse(s, strlen(s), &st, NULL, &err), SQL_ERR_SYNTAX);
  assert_non_null(strstr(err.message, "expected identifier"));
  assert_null(strstr(err.message, "DATE"));
  s = "SELECT a FROM";
  assert_int_equal(sql_parse(s, strlen(s), &st, NULL, &err), SQL_ERR_SYNTAX);
  assert_non_null(strstr(err.message, "identifier"));
  /* a long token is shortened in the message */
  char longsql[300] = "SELECT 1 a ";
  for (int i = 0; i < 200; i++) strcat(longsql, "x");
  assert_int_equal(sql_parse(longsql, strlen(longsql), &st, NULL, &err), SQL_ERR_SYNTAX);
  assert_non_null(strstr(err.message, "xxx...\""));
  assert_true(strlen(err.message) < SQL_ERRMSG_MAX);
}

static void test_token_errors(void **state) {
  (void)state;
  const bad_case cases[] = {
      {"SELECT 'abc", SQL_ERR_TOKEN, 1, 8, "unterminated string"},
      {"SELECT a,\n 'it''s\n more", SQL_ERR_TOKEN, 2, 2, "unterminated string"},
      {"SELECT \"abc FROM t", SQL_ERR_TOKEN, 1, 8, "unterminated quoted identifier"},
      {"SELECT \"\" FROM t", SQL_ERR_TOKEN, 1, 8, "zero-length quoted identifier"},
      {"SELECT a /* open", SQL_ERR_TOKEN, 1, 10, "unterminated comment"},
      {"SELECT /*+ open", SQL_ERR_TOKEN, 1, 8, "unterminated comment"},
      {"SELECT 12abc", SQL_ERR_TOKEN, 1, 8, "malformed number \"12abc\""},
      {"SELECT 1.2.3", SQL_ERR_TOKEN, 1, 8, "malformed number"},
      {"SELECT 1e+", SQL_ERR_TOKEN, 1, 8, "malformed number"},
      {"SELECT ?1x", SQL_ERR_TOKEN, 1, 8, "malformed parameter"},
      {"SELECT ?0", SQL_ERR_TOKEN, 1, 8, "out of range"},
      {"SELECT ?99999999999999999999", SQL_ERR_TOKEN, 1, 8, "out of range"},
      {"SELECT a # b", SQL_ERR_TOKEN, 1, 10, "unrecognized token \"#\""},
      {"SELECT ünï $", SQL_ERR_TOKEN, 1, 12, "unrecognized token \"$\""},
      {"SELECT a | b", SQL_ERR_TOKEN, 1, 10, "unrecognized token \"|\""},
      {"SELECT CAST(a AS VARCHAR(99999999999))", SQL_ERR_RANGE, 1, 26, "out of range"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_bad(&cases[i]);
  /* a NUL byte inside the text is an error, not the end */
  const char nul[] = "SELECT 1\0 FROM t";
  sql_stmt *st;
  sql_error err;
  assert_int_equal(sql_parse(nul, sizeof nul - 1, &st, NULL, &err), SQL_ERR_TOKEN);
  assert_int_equal(err.offset, 8);
  assert_non_null(strstr(err.message, "NUL byte"));
  const char nul2[] = "SELECT 'a\0b' /* x\0 */ FROM t";
  assert_int_equal(sql_parse(nul2, sizeof nul2 - 1, &st, NULL, &err), SQL_ERR_TOKEN);
  assert_int_equal(err.offset, 9);
  const char nul3[] = "SELECT 1 /* x\0 */ FROM t";
  assert_int_equal(sql_parse(nul3, sizeof nul3 - 1, &st, NULL, &err), SQL_ERR_TOKEN);
  assert_int_equal(err.offset, 13);
  const char nul4[] = "SELECT 1 -- x\0\n FROM t";
  assert_int_equal(sql_parse(nul4, sizeof nul4 - 1, &st, NULL, &err), SQL_ERR_TOKEN);
  assert_int_equal(err.offset, 13);
}

static void test_depth_limits(void **state) {
  (void)state;
  size_t cap = 200000;
  char *s = malloc(cap);
  assert_non_null(s);
  sql_stmt *st;
  sql_error err;
  /* nesting at the limit parses */
  int n = SQL_MAX_PAREN_DEPTH;
  size_t k = (size_t)sprintf(s, "SELECT ");
  for (int i = 0; i < n; i++) s[k++] = '(';
  s[k++] = '1';
  for (int i = 0; i < n; i++) s[k++] = ')';
  assert_int_equal(sql_parse(s, k, &st, NULL, &err), SQL_OK);
  sql_stmt_free(st);
  /* one deeper is an error at the parenthesis that went over */
  k = (size_t)sprintf(s, "SELECT ");
  for (int i = 0; i <= n; i++) s[k++] = '(';
  s[k++] = '1';
  for (int i = 0; i <= n; i++) s[k++] = ')';
  assert_int_equal(sql_parse(s, k, &st, NULL, &err), SQL_ERR_DEPTH);
  assert_int_equal(err.offset, 7 + (size_t)n);
  /* a very deep nesting is rejected quickly, never a crash */
  k = (size_t)sprintf(s, "SELECT ");
  for (int i = 0; i < 100000; i++) s[k++] = '(';
  assert_int_equal(sql_parse(s, k, &st, NULL, &err), SQL_ERR_DEPTH);
  /* long operator chains: the tree height limit */
  k = (size_t)sprintf(s, "SELECT a");
  for (int i = 0; i < SQL_MAX_EXPR_HEIGHT + 10; i++) k += (size_t)sprintf(s + k, " + a");
  assert_int_equal(sql_parse(s, k, &st, NULL, &err), SQL_ERR_DEPTH);
  assert_non_null(strstr(err.message, "nested too deeply"));
  /* ... a shorter chain is fine */
  k = (size_t)sprintf(s, "SELECT a");
  for (int i = 0; i < 500; i++) k += (size_t)sprintf(s + k, " + a");
  assert_int_equal(sql_parse(s, k, &st, NULL, &err), SQL_OK);
  sql_stmt_free(st);
  /* prefix operators pile up on the parser stack: an error, not an overflow */
  k = (size_t)sprintf(s, "SELECT ");
  for (int i = 0; i < 20000; i++) k += (size_t)sprintf(s + k, "NOT ");
  s[k++] = 'a';
  assert_int_equal(sql_parse(s, k, &st, NULL, &err), SQL_ERR_DEPTH);
  k = (size_t)sprintf(s, "SELECT ");
  for (int i = 0; i < 20000; i++) k += (size_t)sprintf(s + k, "- ");
  s[k++] = '1';
  assert_int_equal(sql_parse(s, k, &st, NULL, &err), SQL_ERR_DEPTH);
  free(s);
}

/* Every prefix of every corpus statement: parses or fails with a status, no leak (ASan). */
static void test_prefixes_fail_cleanly(void **state) {
  (void)state;
  const char *src = getenv("ROWAN_SOURCE_DIR");
  char path[1024];
  snprintf(path, sizeof path, "%s/tests/sql/corpus/parse_ok.sql", src ? src : ".");
  FILE *f = fopen(path, "rb");
  if (!f) fail_msg("cannot open %s", path);
  static char text[1 << 16];
  size_t len = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  uint64_t seed = tu_seed("test_prefixes_fail_cleanly");
  uint64_t rng = seed;
  uint64_t keep = tu_scaled(100, 25); /* percent of statements whose prefixes are tried */
  const char *p = text, *end = text + len;
  int errors = 0, oks = 0;
  while (p < end) {
    sql_stmt *st;
    const char *tail;
    sql_error err;
    assert_int_equal(sql_parse(p, (size_t)(end - p), &st, &tail, &err), SQL_OK);
    if (!st) break;
    sql_stmt_free(st);
    if (tu_below(&rng, 100) < keep) {
      for (const char *q = p; q < tail; q++) {
        int rc = sql_parse(p, (size_t)(q - p), &st, NULL, &err);
        if (rc == SQL_OK) {
          oks++;
          sql_stmt_free(st);
        } else {
          errors++;
          assert_int_equal(err.code, rc);
          assert_true(err.line >= 1 && err.column >= 1);
          assert_true(err.offset <= (size_t)(q - p));
          assert_null(st);
        }
      }
    }
    p = tail;
  }
  assert_true(errors > 1000);
  assert_true(oks > 100);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_syntax_positions), cmocka_unit_test(test_expected_tokens),
      cmocka_unit_test(test_token_errors),     cmocka_unit_test(test_depth_limits),
      cmocka_unit_test(test_prefixes_fail_cleanly),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
