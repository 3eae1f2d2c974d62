/*
** tests/sql/test_tokenize.c: the pure tokenizer (sql/tokenize.c): every token kind, number
** kinds, strings and quoted identifiers with escapes, comments and hints, parameters,
** keyword lookup in any case, identifier folding (sql_ident_dup), and illegal tokens that
** start where the bad construct starts.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sql/ast.h"
#include "sql/token.h"

/* Tokenizes s (skipping spaces) into types[]; returns the count. */
static int lex(const char *s, int *types, size_t *lens, int max) {
  const char *p = s, *end = s + strlen(s);
  int n = 0;
  while (p < end && n < max) {
    int t;
    size_t len = sql_next_token(p, end, &t);
    assert_true(len >= 1);
    assert_true(p + len <= end);
    if (t != TK_SPACE) {
      types[n] = t;
      if (lens) lens[n] = len;
      n++;
    }
    p += len;
  }
  return n;
}

static void expect_one(const char *s, int type) {
  int t;
  size_t n = sql_next_token(s, s + strlen(s), &t);
  if (t != type || n != strlen(s))
    fail_msg("\"%s\": got type %d length %zu, want type %d length %zu", s, t, n, type,
             strlen(s));
}

static void test_single_tokens(void **state) {
  (void)state;
  expect_one("abc", TK_ID);
  expect_one("_a1", TK_ID);
  expect_one("\"Mixed Case\"", TK_ID);
  expect_one("\"a\"\"b\"", TK_ID);
  expect_one("'it''s'", TK_STRING);
  expect_one("''", TK_STRING);
  expect_one("12", TK_INTEGER);
  expect_one("12.5", TK_DECIMAL);
  expect_one(".5", TK_DECIMAL);
  expect_one("12.", TK_DECIMAL);
  expect_one("1e10", TK_FLOAT);
  expect_one("1.5E-3", TK_FLOAT);
  expect_one(".5e+2", TK_FLOAT);
  expect_one("?", TK_VARIABLE);
  expect_one("?12", TK_VARIABLE);
  expect_one("-- comment", TK_COMMENT);
  expect_one("/* c */", TK_COMMENT);
  expect_one("/**/", TK_COMMENT);
  expect_one("/*+ INDEX(t i) */", TK_HINT);
  expect_one("/*+*/", TK_HINT);
  const struct {
    const char *s;
    int t;
  } punct[] = {{";", TK_SEMI}, {"(", TK_LP}, {")", TK_RP}, {",", TK_COMMA},
               {".", TK_DOT},  {"*", TK_STAR}, {"/", TK_SLASH}, {"%", TK_REM},
               {"+", TK_PLUS}, {"-", TK_MINUS}, {"||", TK_CONCAT}, {"=", TK_EQ},
               {"<>", TK_NE}, {"!=", TK_NE}, {"<", TK_LT}, {"<=", TK_LE},
               {">", TK_GT},  {">=", TK_GE}};
  for (size_t i = 0; i < sizeof punct / sizeof punct[0]; i++) expect_one(punct[i].s, punct[i].t);
}

static void test_keywords_any_case(void **state) {
  (void)state;
  expect_one("select", TK_SELECT);
  expect_one("SeLeCt", TK_SELECT);
  expect_one("UPSERT", TK_UPSERT);
  expect_one("analyze", TK_ANALYZE);
  expect_one("nulls", TK_NULLS);
  expect_one("selects", TK_ID);
  expect_one("\"SELECT\"", TK_ID); /* quoted: never a keyword */
  /* every keyword name maps to a code and back */
  const char *names[] = {"ALL", "AND", "ANALYZE", "AS", "ASC", "BEGIN", "BETWEEN", "BY",
                         "CASE", "CAST", "CHECK", "COMMIT", "CONSTRAINT", "CREATE", "DATE",
                         "DELETE", "DESC", "DISTINCT", "DROP", "ELSE", "END", "ESCAPE",
                         "EXISTS", "EXPLAIN", "FALSE", "FIRST", "FROM", "GROUP", "HAVING",
                         "IF", "ILIKE", "IN", "INCLUDE", "INDEX", "INTO", "IS", "KEY", "LAST",
                         "LIKE", "LIMIT", "NOT", "NULL", "NULLS", "OFFSET", "ON", "OR",
                         "ORDER", "PRIMARY", "ROLLBACK", "SELECT", "TABLE", "THEN", "TIME",
                         "TIMESTAMP", "TRUE", "UPSERT", "VALUES", "WHEN", "WHERE"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    int code = sql_keyword_code(names[i], strlen(names[i]));
    if (code == TK_ID) fail_msg("keyword %s not found", names[i]);
    assert_string_equal(sql_token_name(code), names[i]);
    assert_true(sql_is_keyword(names[i], strlen(names[i])));
  }
  assert_false(sql_is_keyword("READINGS", 8));
  assert_false(sql_is_keyword("A", 1));
}

static void test_sequences(void **state) {
  (void)state;
  int t[32];
  size_t l[32];
  int n = lex("SELECT a.b, 'x''y' FROM t WHERE c>=1.5e3||?2;", t, l, 32);
  const int want[] = {TK_SELECT, TK_ID, TK_DOT, TK_ID, TK_COMMA, TK_STRING, TK_FROM,
                      TK_ID, TK_WHERE, TK_ID, TK_GE, TK_FLOAT, TK_CONCAT, TK_VARIABLE,
                      TK_SEMI};
  assert_int_equal(n, (int)(sizeof want / sizeof want[0]));
  for (int i = 0; i < n; i++) assert_int_equal(t[i], want[i]);
  assert_int_equal(l[5], 6); /* 'x''y' */
  /* a-1 is three tokens, a--1 is an identifier and a comment */
  n = lex("a-1", t, NULL, 32);
  assert_int_equal(n, 3);
  n = lex("a--1", t, NULL, 32);
  assert_int_equal(n, 2);
  assert_int_equal(t[1], TK_COMMENT);
  /* a line comment ends at the newline */
  n = lex("-- x\nb", t, NULL, 32);
  assert_int_equal(n, 2);
  assert_int_equal(t[1], TK_ID);
  /* UTF-8 letters are identifier characters */
  n = lex("naïve ÄÖ", t, l, 32);
  assert_int_equal(n, 2);
  assert_int_equal(t[0], TK_ID);
  assert_int_equal(l[0], strlen("naïve"));
}

static void test_illegal(void **state) {
  (void)state;
  const char *bad[] = {"'open", "\"open", "/* open", "/*+ open", "\"\"", "12abc", "1.2.3",
                       "1e", "1e+", "?1a", "#", "!", "|", "$", "\x01"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    int t;
    sql_next_token(bad[i], bad[i] + strlen(bad[i]), &t);
    if (t != TK_ILLEGAL) fail_msg("\"%s\" should be illegal, got %d", bad[i], t);
  }
  /* NUL ends nothing: a string or quoted name with a NUL inside is unterminated */
  const char nul[] = {'\'', 'a', 0, '\'', 0};
  int t;
  sql_next_token(nul, nul + 4, &t);
  assert_int_equal(t, TK_ILLEGAL);
  /* the tokenizer never reads past limit: "'ab'" cut to "'ab" is unterminated */
  sql_next_token("'ab'", "'ab'" + 3, &t);
  assert_int_equal(t, TK_ILLEGAL);
  size_t n = sql_next_token("12.5", "12.5" + 2, &t);
  assert_int_equal(n, 2);
  assert_int_equal(t, TK_INTEGER);
}

static void test_ident_folding(void **state) {
  (void)state;
  const struct {
    const char *in, *out;
  } cases[] = {{"abc", "ABC"}, {"MiXeD_1", "MIXED_1"}, {"\"MiXeD\"", "MiXeD"},
               {"\"a\"\"b\"", "a\"b"}, {"\"with space\"", "with space"},
               {"naïve", "NAïVE"}, {"\"select\"", "select"}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char *s = sql_ident_dup(cases[i].in, strlen(cases[i].in));
    assert_non_null(s);
    assert_string_equal(s, cases[i].out);
    free(s);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_single_tokens), cmocka_unit_test(test_keywords_any_case),
      cmocka_unit_test(test_sequences),     cmocka_unit_test(test_illegal),
      cmocka_unit_test(test_ident_folding),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
