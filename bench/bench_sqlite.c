/*
** bench/bench_sqlite.c: the SQLite side of the benchmark (libsqlite3).
**
** Table: WITHOUT ROWID, PRIMARY KEY (station, ts DESC), ts as INTEGER milliseconds, the
** readings as REAL and wd as TEXT. WAL mode with synchronous=NORMAL (the durability of
** Rowan's sync=normal: a commit survives a process crash, not a power cut), a page cache of
** bench_cache_bytes (Rowan's block cache size). Load: the bench's CSV reader, one prepared INSERT OR
** REPLACE, committed every batch. Reads: a second connection with exclusive locking (no
** shared-memory lock traffic per statement), prepared statements reset and re-bound.
** Size: after a TRUNCATE checkpoint and close, every file of the directory.
**
** What it does not: ANALYZE, tune page size or mmap (defaults, as most users run it).
*/
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <sqlite3.h>

typedef struct sq {
  sqlite3 *db;                     /* the connection */
  sqlite3_stmt *lookup;            /* point lookup by (station, ts) */
  sqlite3_stmt *latest;            /* latest 100 rows of a station */
  sqlite3_stmt *range;             /* rows of a station in [?, ?) */
  sqlite3_stmt *daily;             /* daily average per station in [?, ?) */
} sq;

#define READ_COLS "ts, pm25, pm10, so2, no2, co, o3, temp, pres, dewp, rain, wspm, wd"

static int fail(sq *h, const char *what) {
  fprintf(stderr, "bench: SQLite: %s: %s\n", what, h->db ? sqlite3_errmsg(h->db) : "?");
  return -1;
}

static int exec_sql(sq *h, const char *sql) {
  return sqlite3_exec(h->db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : fail(h, sql);
}

static int open_db(sq *h, const char *dir, int create) {
  char path[4096];
  if (create && mkdir(dir, 0755) != 0) { fprintf(stderr, "bench: SQLite: mkdir %s\n", dir); return -1; }
  snprintf(path, sizeof path, "%s/sensor.db", dir);
  int flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0);
  if (sqlite3_open_v2(path, &h->db, flags, NULL) != SQLITE_OK) return fail(h, path);
  char sql[160];
  snprintf(sql, sizeof sql, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
           " PRAGMA cache_size=-%zu", bench_cache_bytes >> 10);
  return exec_sql(h, sql);
}

static int sq_create(void **out, const char *dir, int with_index, int *unsupported) {
  sq *h = calloc(1, sizeof *h);
  *out = h;
  *unsupported = 0;
  if (!h || open_db(h, dir, 1) != 0) return -1;
  if (exec_sql(h, "CREATE TABLE sensor (station TEXT NOT NULL, ts INTEGER NOT NULL,"
                  " pm25 REAL, pm10 REAL, so2 REAL, no2 REAL, co REAL, o3 REAL, temp REAL,"
                  " pres REAL, dewp REAL, rain REAL, wspm REAL, wd TEXT,"
                  " PRIMARY KEY (station, ts DESC)) WITHOUT ROWID") != 0)
    return -1;
  if (with_index && exec_sql(h, "CREATE INDEX sensor_temp ON sensor (temp)") != 0) return -1;
  return 0;
}

static int sq_load(void *vh, const bench_input *in, int batch_rows) {
  sq *h = vh;
  sqlite3_stmt *ins = NULL;
  const char *sql = "INSERT OR REPLACE INTO sensor (station, ts, pm25, pm10, so2, no2, co, o3,"
                    " temp, pres, dewp, rain, wspm, wd) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?,"
                    " ?, ?, ?, ?)";
  if (sqlite3_prepare_v2(h->db, sql, -1, &ins, NULL) != SQLITE_OK) return fail(h, sql);
  int in_txn = 0, rc = 0;
  int64_t n = 0;
  bench_row r;
  for (int f = 0; f < in->n_files && rc == 0; f++) {
    bench_csv c;
    if (bench_csv_open(&c, &in->files[f]) != 0) { rc = -1; break; }
    int got;
    while ((got = bench_csv_next(&c, &r)) == 1) {
      if (!in_txn) {
        if (exec_sql(h, "BEGIN") != 0) { rc = -1; break; }
        in_txn = 1;
      }
      sqlite3_bind_text(ins, 1, r.station, (int)r.station_len, SQLITE_TRANSIENT);
      sqlite3_bind_int64(ins, 2, r.ts_ms);
      for (int i = 0; i < BENCH_NDOUBLE; i++) {
        if (r.null_mask & (1u << i)) sqlite3_bind_null(ins, 3 + i);
        else sqlite3_bind_double(ins, 3 + i, r.v[i]);
      }
      if (r.null_mask & BENCH_WD_NULL_BIT) sqlite3_bind_null(ins, 14);
      else sqlite3_bind_text(ins, 14, r.wd, (int)r.wd_len, SQLITE_TRANSIENT);
      if (sqlite3_step(ins) != SQLITE_DONE) { rc = fail(h, "INSERT"); break; }
      sqlite3_reset(ins);
      if (++n % batch_rows == 0) {
        if (exec_sql(h, "COMMIT") != 0) { rc = -1; break; }
        in_txn = 0;
      }
    }
    bench_csv_close(&c);
    if (got < 0) rc = -1;
  }
  if (rc == 0 && in_txn && exec_sql(h, "COMMIT") != 0) rc = -1;
  sqlite3_finalize(ins);
  return rc;
}

static void sq_close(void *vh) {
  sq *h = vh;
  if (!h) return;
  sqlite3_finalize(h->lookup);
  sqlite3_finalize(h->latest);
  sqlite3_finalize(h->range);
  sqlite3_finalize(h->daily);
  if (h->db && sqlite3_close(h->db) != SQLITE_OK) fail(h, "close");
  free(h);
}

static int sq_finish(void *vh, const char *dir, uint64_t *bytes) {
  sq *h = vh;
  if (exec_sql(h, "PRAGMA wal_checkpoint(TRUNCATE)") != 0) return -1;
  sq_close(h);
  *bytes = bench_dir_bytes(dir);
  return 0;
}

static int prep(sq *h, sqlite3_stmt **st, const char *sql) {
  return sqlite3_prepare_v2(h->db, sql, -1, st, NULL) == SQLITE_OK ? 0 : fail(h, sql);
}

static int sq_open(void **out, const char *dir) {
  sq *h = calloc(1, sizeof *h);
  *out = h;
  if (!h || open_db(h, dir, 0) != 0) return -1;
  if (exec_sql(h, "PRAGMA locking_mode=EXCLUSIVE") != 0) return -1;
  if (prep(h, &h->lookup, "SELECT " READ_COLS " FROM sensor WHERE station = ? AND ts = ?") ||
      prep(h, &h->latest,
           "SELECT " READ_COLS " FROM sensor WHERE station = ? ORDER BY ts DESC LIMIT 100") ||
      prep(h, &h->range, "SELECT " READ_COLS " FROM sensor WHERE station = ? AND ts >= ?"
                         " AND ts < ? ORDER BY ts DESC") ||
      prep(h, &h->daily, "SELECT station, ts / 86400000 AS d, AVG(temp) FROM sensor"
                         " WHERE ts >= ? AND ts < ? GROUP BY station, d"))
    return -1;
  return 0;
}

static int count_query(sq *h, const char *sql, int64_t *n) {
  sqlite3_stmt *st = NULL;
  if (prep(h, &st, sql) != 0) return -1;
  int rc = sqlite3_step(st);
  if (rc == SQLITE_ROW) *n = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return rc == SQLITE_ROW ? 0 : fail(h, sql);
}

static int sq_count_all(void *h, int64_t *n) { return count_query(h, "SELECT COUNT(*) FROM sensor", n); }
static int sq_count_temp_gt(void *h, double t, int64_t *n) {
  char sql[128];
  snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM sensor WHERE temp > %.1f", t);
  return count_query(h, sql, n);
}
static int sq_count_temp_gt_index(void *h, double t, int64_t *n) {
  char sql[128];
  snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM sensor INDEXED BY sensor_temp WHERE temp > %.1f", t);
  return count_query(h, sql, n);
}
static int sq_count_temp_null(void *h, int64_t *n) {
  return count_query(h, "SELECT COUNT(*) FROM sensor WHERE temp IS NULL", n);
}

static int drain(sq *h, sqlite3_stmt *st, bench_digest *d) {
  int rc;
  bench_row r;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    r.ts_ms = sqlite3_column_int64(st, 0);
    r.null_mask = 0;
    for (int i = 0; i < BENCH_NDOUBLE; i++) {
      if (sqlite3_column_type(st, 1 + i) == SQLITE_NULL) r.null_mask |= 1u << i;
      else r.v[i] = sqlite3_column_double(st, 1 + i);
    }
    const unsigned char *wd = sqlite3_column_text(st, 12);
    if (!wd) { r.null_mask |= BENCH_WD_NULL_BIT; r.wd_len = 0; }
    else { r.wd[0] = (char)wd[0]; r.wd_len = wd[0] ? 1 : 0; }
    bench_digest_row(d, &r);
  }
  sqlite3_reset(st);
  return rc == SQLITE_DONE ? 0 : fail(h, "query");
}

static int sq_lookup(void *vh, const char *station, int64_t ts_ms, bench_digest *d) {
  sq *h = vh;
  sqlite3_bind_text(h->lookup, 1, station, -1, SQLITE_STATIC);
  sqlite3_bind_int64(h->lookup, 2, ts_ms);
  return drain(h, h->lookup, d);
}

static int sq_latest(void *vh, const char *station, int n, bench_digest *d) {
  sq *h = vh;
  (void)n; /* the statement says LIMIT 100, as bench_main.c asks */
  sqlite3_bind_text(h->latest, 1, station, -1, SQLITE_STATIC);
  return drain(h, h->latest, d);
}

static int sq_range(void *vh, const char *station, int64_t from, int64_t to, bench_digest *d) {
  sq *h = vh;
  sqlite3_bind_text(h->range, 1, station, -1, SQLITE_STATIC);
  sqlite3_bind_int64(h->range, 2, from);
  sqlite3_bind_int64(h->range, 3, to);
  return drain(h, h->range, d);
}

static int sq_daily_avg(void *vh, int64_t from, int64_t to, bench_digest *d) {
  sq *h = vh;
  sqlite3_bind_int64(h->daily, 1, from);
  sqlite3_bind_int64(h->daily, 2, to);
  int rc;
  while ((rc = sqlite3_step(h->daily)) == SQLITE_ROW) {
    d->rows++;
    if (sqlite3_column_type(h->daily, 2) != SQLITE_NULL) d->sum += sqlite3_column_double(h->daily, 2);
  }
  sqlite3_reset(h->daily);
  return rc == SQLITE_DONE ? 0 : fail(h, "daily average");
}

const bench_engine bench_sqlite = {
    "SQLite",      sq_create,          sq_load,   sq_finish,   sq_open,
    sq_count_all,  sq_count_temp_gt,   sq_count_temp_null,     sq_count_temp_gt_index, sq_lookup,
    sq_latest,     sq_range,           sq_daily_avg,           sq_close};
