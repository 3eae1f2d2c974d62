/* tests/hbase/phoenix/rowan_runner.c: the Rowan side of the Phoenix differential harness
** (tests/hbase/phoenix/phoenix_diff.py, issue 18). It reads statements from stdin, one a
** line, runs each through the public C API (include/rowan.h) on the database a "#CONNECT
** URI" line opened (hbase://HOST:PORT/NAMESPACE, or a local directory), and prints each
** outcome in the canonical form of tests/hbase/phoenix/PhoenixRunner.java:
**
**   #S                  a statement begins
**   v1 TAB v2 ...       a result row; values tagged N, i:INTEGER, f:NUMBER, s:TEXT (\\ \t \n
**                       escaped), t:MS (ms since the epoch of a DATE, TIME or TIMESTAMP),
**                       b:0/1 (BOOLEAN), x:HEX (VARBINARY)
**   #OK n               done: n rows (a query) or n rows changed (a write)
**   #ERR code message   refused: rowan_errstr of the code and rowan_errmsg on one line
**
** "#DROPNS URI" closes the database and drops URI's namespace with its tables (the harness's
** clean-up). A DECIMAL (exact, given as text by the API) prints as f:; so does a text value of an
** expression without a declared type whose text is a number: the API gives such results
** (a SUM of DECIMAL) as text. Not here: generating statements, comparing answers. */
#include "kv/backend/hbase/backend_hbase.h"
#include "rowan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void put_escaped(const char *s, int n) {
  for (int i = 0; i < n; i++) {
    char c = s[i];
    if (c == '\\') fputs("\\\\", stdout);
    else if (c == '\t') fputs("\\t", stdout);
    else if (c == '\n') fputs("\\n", stdout);
    else if (c == '\r') fputs("\\r", stdout);
    else putchar(c);
  }
}

static void put_message(const char *m) {
  for (; *m && *m != '\n'; m++) putchar(*m == '\t' ? ' ' : *m);
}

static int is_number(const char *s) {
  char *end;
  if (!s || !*s) return 0;
  strtod(s, &end);
  return *end == '\0';
}

static void put_value(rowan_stmt *st, int i) {
  int type = rowan_column_type(st, i);
  const char *decl = rowan_column_decltype(st, i);
  switch (type) {
  case ROWAN_NULL: fputs("N", stdout); return;
  case ROWAN_INTEGER:
    if (decl && strcmp(decl, "BOOLEAN") == 0)
      printf("b:%d", rowan_column_int64(st, i) ? 1 : 0);
    else
      printf("i:%lld", (long long)rowan_column_int64(st, i));
    return;
  case ROWAN_FLOAT: printf("f:%.17g", rowan_column_double(st, i)); return;
  case ROWAN_TIMESTAMP: printf("t:%lld", (long long)rowan_column_timestamp(st, i)); return;
  case ROWAN_BLOB: {
    const unsigned char *b = rowan_column_blob(st, i);
    int n = rowan_column_bytes(st, i);
    fputs("x:", stdout);
    for (int k = 0; k < n; k++) printf("%02x", b[k]);
    return;
  }
  default: {
    const char *t = rowan_column_text(st, i);
    if (decl && (strncmp(decl, "DATE", 4) == 0 || strncmp(decl, "TIME", 4) == 0) &&
        strstr(decl, "ARRAY") == NULL) {
      printf("t:%lld", (long long)rowan_column_int64(st, i));
      return;
    }
    if ((decl && strncmp(decl, "DECIMAL", 7) == 0 && strstr(decl, "ARRAY") == NULL) ||
        (!decl && is_number(t))) {
      printf("f:%s", t);
      return;
    }
    fputs("s:", stdout);
    put_escaped(t ? t : "", rowan_column_bytes(st, i));
    return;
  }
  }
}

/* Run every statement of sql (a record may hold several, separated by ';'), printing the
** rows of each; one #OK (the last statement's count) or the first #ERR ends the block. */
static void run(rowan_db *db, const char *sql) {
  fputs("#S\n", stdout);
  if (!db) {
    fputs("#ERR ROWAN_MISUSE no database: #CONNECT first\n", stdout);
    return;
  }
  long long count = 0;
  const char *tail = sql;
  while (tail && *tail) {
    rowan_stmt *st = NULL;
    const char *next = NULL;
    int rc = rowan_prepare(db, tail, -1, &st, &next);
    if (rc != ROWAN_OK) {
      printf("#ERR %s ", rowan_errstr(rc));
      put_message(rowan_errmsg(db));
      putchar('\n');
      return;
    }
    if (!st) break; /* only blanks or comments left */
    int cols = rowan_column_count(st);
    long long rows = 0;
    while ((rc = rowan_step(st)) == ROWAN_ROW) {
      for (int i = 0; i < cols; i++) {
        if (i) putchar('\t');
        put_value(st, i);
      }
      putchar('\n');
      rows++;
    }
    if (rc != ROWAN_DONE) {
      printf("#ERR %s ", rowan_errstr(rc));
      put_message(rowan_errmsg(db));
      putchar('\n');
      rowan_finalize(st);
      return;
    }
    count = cols > 0 ? rows : (long long)rowan_changes(db);
    rowan_finalize(st);
    tail = next;
  }
  printf("#OK %lld\n", count);
}

int main(void) {
  static char line[1 << 20];
  rowan_db *db = NULL;
  while (fgets(line, sizeof line, stdin)) {
    size_t n = strlen(line);
    while (n && (line[n - 1] == '\n' || line[n - 1] == '\r')) line[--n] = '\0';
    if (n == 0) continue;
    if (strncmp(line, "#CONNECT ", 9) == 0) {
      if (db) rowan_close(db);
      db = NULL;
      rowan_options o = {0};
      o.create_if_missing = 1;
      int rc = rowan_open(line + 9, &o, &db);
      if (rc != ROWAN_OK) {
        fprintf(stderr, "rowan_runner: cannot open %s: %s\n", line + 9,
                db ? rowan_errmsg(db) : rowan_errstr(rc));
        return 1;
      }
      fputs("#CONNECTED\n", stdout);
    } else if (strncmp(line, "#DROPNS ", 8) == 0) {
      if (db) rowan_close(db);
      db = NULL;
      int rc = kv_backend_hbase_drop_namespace(line + 8);
      printf("#DROPPED %d\n", rc);
    } else {
      run(db, line);
    }
    fflush(stdout);
  }
  if (db) rowan_close(db);
  return 0;
}
