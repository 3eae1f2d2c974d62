/*
** fuzz/fuzz_sql.c: libFuzzer target for sql/: tokenizes the whole input, then parses it
** statement by statement with sql_parse(); every statement that parses is printed,
** reparsed and printed again, and the two prints must be equal (the printer's promise).
** A print may exceed the depth limits where the input did not (printed parentheses); such
** a reparse may fail with SQL_ERR_DEPTH. Errors must carry a sane position. Crashes, leaks (ASan) and undefined behaviour (UBSan)
** are the findings. Seed corpus: fuzz/corpus/fuzz_sql/.
*/
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sql/parser.h"
#include "sql/token.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *sql = (const char *)data;
  const char *end = sql + size;
  /* the tokenizer alone: every token has a length in bounds */
  for (const char *p = sql; p < end;) {
    int type;
    size_t n = sql_next_token(p, end, &type);
    if (n == 0 || n > (size_t)(end - p)) abort();
    p += n;
  }
  const char *p = sql;
  for (int guard = 0; p < end && guard < 10000; guard++) {
    sql_stmt *st = NULL;
    sql_error err;
    const char *tail = NULL;
    int rc = sql_parse(p, (size_t)(end - p), &st, &tail, &err);
    if (tail < p || tail > end) abort();
    if (rc != SQL_OK) {
      if (st || err.code != rc || err.offset > (size_t)(end - p) || err.line < 1 ||
          err.column < 1 || strlen(err.message) >= sizeof err.message)
        abort();
      if (tail == p) break;
      p = tail;
      continue;
    }
    if (!st) break;
    for (unsigned flags = 0; flags <= SQL_PRINT_FULL_PARENS; flags++) {
      char *a = sql_print_stmt(st, flags);
      if (!a) abort();
      sql_stmt *st2 = NULL;
      int rc2 = sql_parse(a, strlen(a), &st2, NULL, &err);
      if (rc2 == SQL_ERR_DEPTH) {
        /* the print may need more parentheses than the input had (a IS NULL IS NULL
        ** prints as (a IS NULL) IS NULL): near the depth limits that is allowed to fail */
        free(a);
        continue;
      }
      if (rc2 != SQL_OK || !st2) {
        fprintf(stderr, "reparse failed: %s\n  text: %s\n", err.message, a);
        abort();
      }
      char *b = sql_print_stmt(st2, flags);
      if (!b || strcmp(a, b) != 0) {
        fprintf(stderr, "print differs:\n  %s\n  %s\n", a, b ? b : "(null)");
        abort();
      }
      free(a);
      free(b);
      sql_stmt_free(st2);
    }
    sql_stmt_free(st);
    if (tail == p) break;
    p = tail;
  }
  return 0;
}
