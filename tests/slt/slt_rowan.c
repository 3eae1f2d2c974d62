/*
** tests/slt/slt_rowan.c: the sqllogictest runner's Rowan back end. Each database is a fresh
** store on its own in-memory file system (kv/env/env_mem.h), opened through the public API
** (include/rowan.h) exactly as an application would; `control flush` and `control compact`
** use the API's test hooks (api/api_test.h), and `control reopen` closes the connection and
** opens the same in-memory directory again, so a test can check what survives a restart.
** With ROWAN_BACKEND=hbase (a build with ROWAN_HBASE) each database is instead a fresh HBase
** namespace, `ROWAN_HBASE_URI` (default hbase://127.0.0.1:9090) with the namespace
** slt_PID_N (a namespace in the URI is used as the prefix instead of "slt"), opened by its
** hbase:// URI; `control reopen` opens the URI again, and the namespace is dropped with its
** tables when the file ends (docs/HBASE.md).
** Not here: the file format and comparisons (slt_runner.c).
*/
#include "slt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_test.h"
#include "kv/env/env_mem.h"
#include "rowan.h"
#include "tu_hbase.h"

struct slt_db {
  rowan_db *db;  /* the open connection */
  kv_env *env;   /* the in-memory file system it lives on (owned) */
  char uri[1024]; /* ROWAN_BACKEND=hbase: the database's hbase:// URI, else empty */
};

/* ROWAN_BACKEND=hbase: the next fresh namespace's URI into d->uri (tests/tu_hbase.h). */
static int hbase_uri(slt_db *d, char *err, size_t cap) {
  return tu_hbase_uri("slt", d->uri, sizeof d->uri, err, cap);
}

#define DB_DIR "slt.db"

static int open_conn(slt_db *d, char *err, size_t cap) {
  rowan_options o;
  rowan_options_init(&o);
  o.kv_env = d->env;
  o.sync_mode = ROWAN_SYNC_NORMAL;
  o.create_if_missing = 1;
  if (d->uri[0]) o.kv_env = NULL; /* on HBase: a private scratch store (api/open_remote.c) */
  int rc = rowan_open(d->uri[0] ? d->uri : DB_DIR, &o, &d->db);
  if (rc != ROWAN_OK) {
    snprintf(err, cap, "%s: %s", rowan_errstr(rc), d->db ? rowan_errmsg(d->db) : "open failed");
    rowan_close(d->db);
    d->db = NULL;
    return -1;
  }
  return 0;
}

static int r_open(slt_db **out, char *err, size_t cap) {
  slt_db *d = calloc(1, sizeof *d);
  if (!d) {
    snprintf(err, cap, "out of memory");
    return -1;
  }
  d->env = kv_env_mem_new(0);
  if (!d->env || hbase_uri(d, err, cap) != 0 || open_conn(d, err, cap) != 0) {
    if (d->env) kv_env_free(d->env);
    free(d);
    return -1;
  }
  *out = d;
  return 0;
}

static void r_close(slt_db *d) {
  if (!d) return;
  rowan_close(d->db);
  kv_env_free(d->env);
  tu_hbase_drop(d->uri);
  free(d);
}

static void set_err(slt_db *d, int rc, char *err, size_t cap) {
  snprintf(err, cap, "%s: %s", rowan_errstr(rc), rowan_errmsg(d->db));
}

static int r_exec(slt_db *d, const char *sql, int64_t *changes, char *err, size_t cap) {
  const char *p = sql;
  *changes = 0;
  while (p && *p) {
    rowan_stmt *st = NULL;
    const char *tail = NULL;
    int rc = rowan_prepare(d->db, p, -1, &st, &tail);
    if (rc != ROWAN_OK) {
      set_err(d, rc, err, cap);
      return -1;
    }
    if (!st) break;
    while ((rc = rowan_step(st)) == ROWAN_ROW) {
    }
    if (rc != ROWAN_DONE) {
      set_err(d, rc, err, cap);
      rowan_finalize(st);
      return -1;
    }
    rowan_finalize(st);
    *changes = rowan_changes(d->db);
    if (tail == p) break;
    p = tail;
  }
  return 0;
}

static int r_query(slt_db *d, const char *sql, const char *types, slt_result *res, char *err,
                   size_t cap) {
  rowan_stmt *st = NULL;
  int rc = rowan_prepare(d->db, sql, -1, &st, NULL);
  if (rc != ROWAN_OK) {
    set_err(d, rc, err, cap);
    return -1;
  }
  if (!st) {
    snprintf(err, cap, "no statement in the query text");
    return -1;
  }
  res->ncol = rowan_column_count(st);
  size_t ntypes = strlen(types);
  char buf[4096];
  while ((rc = rowan_step(st)) == ROWAN_ROW) {
    for (int i = 0; i < res->ncol; i++) {
      char t = ntypes ? types[(size_t)i < ntypes ? (size_t)i : ntypes - 1] : 'T';
      int null = rowan_column_type(st, i) == ROWAN_NULL;
      int64_t iv = 0;
      double dv = 0;
      const char *tv = NULL;
      size_t tl = 0;
      if (!null && t == 'I') iv = rowan_column_int64(st, i);
      if (!null && t == 'R') dv = rowan_column_double(st, i);
      if (!null && t != 'I' && t != 'R') {
        tv = rowan_column_text(st, i);
        tl = tv ? (size_t)rowan_column_bytes(st, i) : 0;
      }
      slt_format(t, null, iv, dv, tv, tl, buf, sizeof buf);
      if (slt_result_add(res, buf, strlen(buf)) != 0) {
        rowan_finalize(st);
        snprintf(err, cap, "out of memory");
        return -1;
      }
    }
  }
  if (rc != ROWAN_DONE) {
    set_err(d, rc, err, cap);
    rowan_finalize(st);
    return -1;
  }
  rowan_finalize(st);
  return 0;
}

static int r_control(slt_db *d, const char *what, char *err, size_t cap) {
  int rc;
  if (strcmp(what, "flush") == 0) {
    rc = api_test_flush(d->db);
  } else if (strcmp(what, "compact") == 0) {
    rc = api_test_compact(d->db);
  } else if (strncmp(what, "threads=", 8) == 0) { /* every scan cut, however small */
    rc = rowan_set_scan_threads(d->db, atoi(what + 8), 0);
  } else if (strcmp(what, "reopen") == 0) {
    rc = rowan_close(d->db);
    d->db = NULL;
    if (rc != ROWAN_OK) {
      snprintf(err, cap, "%s: close failed", rowan_errstr(rc));
      return -1;
    }
    return open_conn(d, err, cap);
  } else {
    snprintf(err, cap, "unknown control \"%s\"", what);
    return -1;
  }
  if (rc != ROWAN_OK) {
    set_err(d, rc, err, cap);
    return -1;
  }
  return 0;
}

const slt_backend slt_rowan_backend = {"rowan", r_open, r_close, r_exec, r_query, r_control};
