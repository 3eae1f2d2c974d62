/*
** tests/slt/slt_sqlite.c: the sqllogictest runner's SQLite back end (libsqlite3, an
** in-memory database per file). It exists to check the expected results written in
** the tests/sql .test files independently of Rowan: `slt_runner --engine sqlite FILE` runs every
** record not marked `skipif sqlite` / `onlyif rowan` against SQLite.
**
** To make SQLite answer like Rowan where the dialects differ only in spelling:
**  - `UPSERT INTO` is rewritten to `INSERT OR REPLACE INTO` (the same effect when every
**    column is given; partial UPSERTs keep other columns in Rowan, so records that rely on
**    that are marked skipif sqlite);
**  - PRAGMA case_sensitive_like = ON, as Rowan's LIKE is case-sensitive.
** Everything else (families, table options, ILIKE, Rowan's functions, EXPLAIN, error texts)
** must be kept out with skipif sqlite. A `statement error` record only requires that
** SQLite fails too; its message pattern is Rowan's and is not checked here.
** `control` directives are not supported (the record is skipped).
*/
#include "slt.h"

#include <ctype.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct slt_db {
  sqlite3 *db;  /* the in-memory database */
};

static int s_open(slt_db **out, char *err, size_t cap) {
  slt_db *d = calloc(1, sizeof *d);
  if (!d) return -1;
  if (sqlite3_open(":memory:", &d->db) != SQLITE_OK) {
    snprintf(err, cap, "sqlite3_open failed");
    sqlite3_close(d->db);
    free(d);
    return -1;
  }
  sqlite3_exec(d->db, "PRAGMA case_sensitive_like = ON", NULL, NULL, NULL);
  *out = d;
  return 0;
}

static void s_close(slt_db *d) {
  if (!d) return;
  sqlite3_close(d->db);
  free(d);
}

/* A malloc'd copy of sql with every UPSERT keyword (outside strings) made an INSERT OR
** REPLACE. */
static char *rewrite(const char *sql) {
  size_t n = strlen(sql);
  char *out = malloc(n * 3 + 1);
  if (!out) return NULL;
  size_t o = 0;
  char quote = 0;
  for (size_t i = 0; i < n;) {
    char c = sql[i];
    if (quote) {
      if (c == quote) quote = 0;
      out[o++] = sql[i++];
      continue;
    }
    if (c == '\'' || c == '"') {
      quote = c;
      out[o++] = sql[i++];
      continue;
    }
    if ((i == 0 || !(isalnum((unsigned char)sql[i - 1]) || sql[i - 1] == '_')) &&
        strncasecmp(sql + i, "UPSERT", 6) == 0 &&
        !(isalnum((unsigned char)sql[i + 6]) || sql[i + 6] == '_')) {
      memcpy(out + o, "INSERT OR REPLACE", 17);
      o += 17;
      i += 6;
      continue;
    }
    out[o++] = sql[i++];
  }
  out[o] = 0;
  return out;
}

static int s_exec(slt_db *d, const char *sql, int64_t *changes, char *err, size_t cap) {
  char *q = rewrite(sql), *msg = NULL;
  if (!q) return -1;
  int rc = sqlite3_exec(d->db, q, NULL, NULL, &msg);
  free(q);
  *changes = sqlite3_changes(d->db);
  if (rc != SQLITE_OK) {
    snprintf(err, cap, "SQLITE %d: %s", rc, msg ? msg : "");
    sqlite3_free(msg);
    return -1;
  }
  return 0;
}

static int s_query(slt_db *d, const char *sql, const char *types, slt_result *res, char *err,
                   size_t cap) {
  char *q = rewrite(sql);
  sqlite3_stmt *st = NULL;
  if (!q) return -1;
  int rc = sqlite3_prepare_v2(d->db, q, -1, &st, NULL);
  free(q);
  if (rc != SQLITE_OK) {
    snprintf(err, cap, "SQLITE %d: %s", rc, sqlite3_errmsg(d->db));
    return -1;
  }
  res->ncol = sqlite3_column_count(st);
  size_t ntypes = strlen(types);
  char buf[4096];
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    for (int i = 0; i < res->ncol; i++) {
      char t = ntypes ? types[(size_t)i < ntypes ? (size_t)i : ntypes - 1] : 'T';
      int null = sqlite3_column_type(st, i) == SQLITE_NULL;
      const char *tv = null ? NULL : (const char *)sqlite3_column_text(st, i);
      slt_format(t, null, sqlite3_column_int64(st, i), sqlite3_column_double(st, i), tv,
                 tv ? (size_t)sqlite3_column_bytes(st, i) : 0, buf, sizeof buf);
      if (slt_result_add(res, buf, strlen(buf)) != 0) {
        sqlite3_finalize(st);
        return -1;
      }
    }
  }
  if (rc != SQLITE_DONE) {
    snprintf(err, cap, "SQLITE %d: %s", rc, sqlite3_errmsg(d->db));
    sqlite3_finalize(st);
    return -1;
  }
  sqlite3_finalize(st);
  return 0;
}

static int s_control(slt_db *d, const char *what, char *err, size_t cap) { return 1; }

const slt_backend slt_sqlite_backend = {"sqlite", s_open, s_close, s_exec, s_query, s_control};
