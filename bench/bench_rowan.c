/*
** bench/bench_rowan.c: the Rowan side of the benchmark, through the public API
** (include/rowan.h) as an embedding program would use it.
**
** Load: the bench's CSV reader (bench_data.c, shared by all engines) parses each row and
** one prepared UPSERT binds typed values (text station, timestamp, doubles, WD text),
** committed in BEGIN ... COMMIT batches, sync mode NORMAL. Queries: prepared SELECTs,
** reset and re-bound for every call, each result row read with one rowan_column_values.
** Size: after a flush and a major compaction (rowan_flush, rowan_compact), every file of the
** store directory. Only the block cache
** counters printed with --profile come through a test hook (api/api_test.h): the public
** API has none.
**
** What it does not: use the shell's .import (it needs the archive's year/month/day/hour
** folded into TS by a second UPSERT SELECT pass, see examples/sensor/load.sql), or kv/
** directly.
*/
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/api_test.h"
#include "rowan.h"

typedef struct rw {
  rowan_db *db;                    /* the connection */
  rowan_stmt *lookup;              /* point lookup by (STATION, TS) */
  rowan_stmt *latest;              /* latest ? rows of a station */
  rowan_stmt *range;               /* rows of a station in [?, ?) */
  rowan_stmt *daily;               /* daily average per station in [?, ?) */
  bool diag;                       /* keep each query's read counters (bench_rowan_last_read) */
  rowan_metrics last;              /* the last query's, when diag */
} rw;

#define READ_COLS "TS, PM25, PM10, SO2, NO2, CO, O3, TEMP, PRES, DEWP, RAIN, WSPM, WD"

static int fail(rw *h, const char *what) {
  fprintf(stderr, "bench: Rowan: %s: %s\n", what, rowan_errmsg(h->db));
  return -1;
}

static int exec_sql(rw *h, const char *sql) {
  return rowan_exec(h->db, sql, NULL, NULL) == ROWAN_OK ? 0 : fail(h, sql);
}

static int open_db(rw *h, const char *dir, int create) {
  rowan_options o;
  rowan_options_init(&o);
  o.create_if_missing = create;
  o.sync_mode = ROWAN_SYNC_NORMAL;
  o.block_cache_size = bench_cache_bytes;
  if (rowan_open(dir, &o, &h->db) != ROWAN_OK) {
    fprintf(stderr, "bench: Rowan: open %s: %s\n", dir, h->db ? rowan_errmsg(h->db) : "?");
    rowan_close(h->db);
    h->db = NULL;
    return -1;
  }
  return 0;
}

/* Create SENSOR in a new database in dir; salt_buckets > 0 adds SALT_BUCKETS. */
static int create_sensor(void **out, const char *dir, int with_index, int *unsupported,
                         int salt_buckets) {
  rw *h = calloc(1, sizeof *h);
  *out = h;
  *unsupported = 0;
  if (!h || open_db(h, dir, 1) != 0) return -1;
  char ddl[640], opt[96] = "";
  int o = 0;
  if (bench_block_size)
    o = snprintf(opt, sizeof opt, " READINGS.BLOCKSIZE = %u", bench_block_size);
  if (salt_buckets > 0)
    snprintf(opt + o, sizeof opt - (size_t)o, "%s SALT_BUCKETS = %d", o ? "," : "", salt_buckets);
  snprintf(ddl, sizeof ddl, "CREATE TABLE SENSOR (STATION VARCHAR NOT NULL, TS TIMESTAMP NOT NULL,"
                  " READINGS.PM25 DOUBLE, READINGS.PM10 DOUBLE, READINGS.SO2 DOUBLE,"
                  " READINGS.NO2 DOUBLE, READINGS.CO DOUBLE, READINGS.O3 DOUBLE,"
                  " READINGS.TEMP DOUBLE, READINGS.PRES DOUBLE, READINGS.DEWP DOUBLE,"
                  " READINGS.RAIN DOUBLE, READINGS.WD VARCHAR(3), READINGS.WSPM DOUBLE,"
                  " CONSTRAINT PK PRIMARY KEY (STATION, TS DESC))%s", opt);
  if (exec_sql(h, ddl) != 0) return -1;
  if (with_index && rowan_exec(h->db, "CREATE INDEX SENSOR_TEMP ON SENSOR (TEMP)", NULL,
                               NULL) != ROWAN_OK) {
    *unsupported = 1;
    return fail(h, "CREATE INDEX");
  }
  return 0;
}

static int rw_create(void **out, const char *dir, int with_index, int *unsupported) {
  return create_sensor(out, dir, with_index, unsupported, 0);
}

int bench_rowan_create_salted(void **out, const char *dir, int buckets) {
  int unsupported = 0;
  return create_sensor(out, dir, 0, &unsupported, buckets);
}

int bench_rowan_set_threads(void *vh, int threads) {
  rw *h = vh;
  return rowan_set_scan_threads(h->db, threads, -1) == ROWAN_OK ? 0 : fail(h, "rowan_set_scan_threads");
}

int bench_rowan_processors(void) { return (int)sysconf(_SC_NPROCESSORS_ONLN); }

static int rw_load(void *vh, const bench_input *in, int batch_rows) {
  rw *h = vh;
  rowan_stmt *up = NULL;
  const char *sql = "UPSERT INTO SENSOR (STATION, TS, PM25, PM10, SO2, NO2, CO, O3, TEMP,"
                    " PRES, DEWP, RAIN, WSPM, WD) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,"
                    " ?, ?, ?)";
  if (rowan_prepare(h->db, sql, -1, &up, NULL) != ROWAN_OK) return fail(h, "prepare UPSERT");
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
      rowan_bind_text(up, 1, r.station, (int)r.station_len);
      rowan_bind_timestamp(up, 2, r.ts_ms);
      for (int i = 0; i < BENCH_NDOUBLE; i++) {
        if (r.null_mask & (1u << i)) rowan_bind_null(up, 3 + i);
        else rowan_bind_double(up, 3 + i, r.v[i]);
      }
      if (r.null_mask & BENCH_WD_NULL_BIT) rowan_bind_null(up, 14);
      else rowan_bind_text(up, 14, r.wd, (int)r.wd_len);
      if (rowan_step(up) != ROWAN_DONE) { rc = fail(h, "UPSERT"); break; }
      rowan_reset(up);
      if (++n % batch_rows == 0) {
        if (exec_sql(h, "COMMIT") != 0) { rc = -1; break; }
        in_txn = 0;
      }
    }
    bench_csv_close(&c);
    if (got < 0) rc = -1;
  }
  if (rc == 0 && in_txn && exec_sql(h, "COMMIT") != 0) rc = -1;
  rowan_finalize(up);
  return rc;
}

static void rw_close(void *vh) {
  rw *h = vh;
  if (!h) return;
  rowan_finalize(h->lookup);
  rowan_finalize(h->latest);
  rowan_finalize(h->range);
  rowan_finalize(h->daily);
  if (h->db && rowan_close(h->db) != ROWAN_OK)
    fprintf(stderr, "bench: Rowan: close: %s\n", rowan_errmsg(h->db));
  free(h);
}

static int rw_finish(void *vh, const char *dir, uint64_t *bytes) {
  rw *h = vh;
  if (rowan_flush(h->db) != ROWAN_OK) return fail(h, "flush");
  if (rowan_compact(h->db, 1) != ROWAN_OK) return fail(h, "major compaction");
  rw_close(h);
  *bytes = bench_dir_bytes(dir);
  return 0;
}

static int prep(rw *h, rowan_stmt **st, const char *sql) {
  if (rowan_prepare(h->db, sql, -1, st, NULL) != ROWAN_OK) return fail(h, sql);
  return 0;
}

static int rw_open(void **out, const char *dir) {
  rw *h = calloc(1, sizeof *h);
  *out = h;
  if (!h || open_db(h, dir, 0) != 0) return -1;
  if (prep(h, &h->lookup, "SELECT " READ_COLS " FROM SENSOR WHERE STATION = ? AND TS = ?") ||
      prep(h, &h->latest,
           "SELECT " READ_COLS " FROM SENSOR WHERE STATION = ? ORDER BY TS DESC LIMIT 100") ||
      prep(h, &h->range, "SELECT " READ_COLS " FROM SENSOR WHERE STATION = ? AND TS >= ?"
                         " AND TS < ? ORDER BY TS DESC") ||
      prep(h, &h->daily, "SELECT STATION, TRUNC(TS, 'DAY') AS D, AVG(TEMP) FROM SENSOR"
                         " WHERE TS >= ? AND TS < ? GROUP BY STATION, D"))
    return -1;
  return 0;
}

static int count_query(rw *h, const char *sql, int64_t *n) {
  rowan_stmt *st = NULL;
  if (prep(h, &st, sql) != 0) return -1;
  int rc = rowan_step(st);
  if (rc == ROWAN_ROW) *n = rowan_column_int64(st, 0);
  rowan_finalize(st);
  return rc == ROWAN_ROW ? 0 : fail(h, sql);
}

static int rw_count_all(void *h, int64_t *n) { return count_query(h, "SELECT COUNT(*) FROM SENSOR", n); }
static int rw_count_temp_gt(void *h, double t, int64_t *n) {
  char sql[128];
  snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM SENSOR WHERE TEMP > %.1f", t);
  return count_query(h, sql, n);
}
static int rw_count_temp_gt_index(void *h, double t, int64_t *n) {
  char sql[160];
  snprintf(sql, sizeof sql, "SELECT /*+ INDEX(SENSOR SENSOR_TEMP) */ COUNT(*) FROM SENSOR"
           " WHERE TEMP > %.1f", t);
  return count_query(h, sql, n);
}
static int rw_count_temp_null(void *h, int64_t *n) {
  return count_query(h, "SELECT COUNT(*) FROM SENSOR WHERE TEMP IS NULL", n);
}

/* Step st to the end, folding each row (columns as READ_COLS) into d. The row's 13 values
** come in one rowan_column_values call (TS as ms, the doubles, WD's bytes), not 14 getters. */
static int drain(rw *h, rowan_stmt *st, bench_digest *d) {
  int rc;
  bench_row r;
  rowan_value v[2 + BENCH_NDOUBLE];
  while ((rc = rowan_step(st)) == ROWAN_ROW) {
    if (rowan_column_values(st, 0, 2 + BENCH_NDOUBLE, v) != ROWAN_OK) {
      rc = fail(h, "rowan_column_values");
      rowan_reset(st);
      return rc;
    }
    r.ts_ms = v[0].i;
    r.null_mask = 0;
    for (int i = 0; i < BENCH_NDOUBLE; i++) {
      if (v[1 + i].type == ROWAN_NULL) r.null_mask |= 1u << i;
      else r.v[i] = v[1 + i].d;
    }
    const rowan_value *wd = &v[1 + BENCH_NDOUBLE];
    if (wd->type == ROWAN_NULL) { r.null_mask |= BENCH_WD_NULL_BIT; r.wd_len = 0; }
    else { r.wd[0] = wd->bytes ? *(const char *)wd->p : 0; r.wd_len = wd->bytes ? 1 : 0; }
    bench_digest_row(d, &r);
  }
  if (h->diag && rowan_stmt_metrics(st, &h->last) != ROWAN_OK) memset(&h->last, 0, sizeof h->last);
  rowan_reset(st);
  return rc == ROWAN_DONE ? 0 : fail(h, "query");
}

void bench_rowan_diag(void *vh, bool on) {
  ((rw *)vh)->diag = on;
}

void bench_rowan_last_read(void *vh, uint64_t *blocks, uint64_t *hits) {
  const rw *h = vh;
  *blocks = *hits = 0;
  for (int i = 0; i < h->last.n_families; i++) {
    *blocks += h->last.families[i].blocks_read;
    *hits += h->last.families[i].blocks_cache_hit;
  }
}

static int rw_lookup(void *vh, const char *station, int64_t ts_ms, bench_digest *d) {
  rw *h = vh;
  rowan_bind_text(h->lookup, 1, station, -1);
  rowan_bind_timestamp(h->lookup, 2, ts_ms);
  return drain(h, h->lookup, d);
}

static int rw_latest(void *vh, const char *station, int n, bench_digest *d) {
  rw *h = vh;
  (void)n; /* the statement says LIMIT 100, as bench_main.c asks */
  rowan_bind_text(h->latest, 1, station, -1);
  return drain(h, h->latest, d);
}

static int rw_range(void *vh, const char *station, int64_t from, int64_t to, bench_digest *d) {
  rw *h = vh;
  rowan_bind_text(h->range, 1, station, -1);
  rowan_bind_timestamp(h->range, 2, from);
  rowan_bind_timestamp(h->range, 3, to);
  return drain(h, h->range, d);
}

static int rw_daily_avg(void *vh, int64_t from, int64_t to, bench_digest *d) {
  rw *h = vh;
  rowan_bind_timestamp(h->daily, 1, from);
  rowan_bind_timestamp(h->daily, 2, to);
  int rc;
  while ((rc = rowan_step(h->daily)) == ROWAN_ROW) {
    d->rows++;
    if (rowan_column_type(h->daily, 2) != ROWAN_NULL) d->sum += rowan_column_double(h->daily, 2);
  }
  rowan_reset(h->daily);
  return rc == ROWAN_DONE ? 0 : fail(h, "daily average");
}

/* Two-digit zero-padded copy of a 1-2 digit field; returns 0 or -1. */
static int pad2(char *out, const char *s, size_t n) {
  if (n == 1) { out[0] = '0'; out[1] = s[0]; return 0; }
  if (n == 2) { out[0] = s[0]; out[1] = s[1]; return 0; }
  return -1;
}

/* One archive file's rows into the bulk load b; station (NULL: the file's own) and
** year_add (years added to each row's year) rewrite every row of a synthetic copy. */
static int bulk_file(rw *h, rowan_bulk *b, const bench_file *file, const char *station,
                     int year_add) {
  /* CSV field of each bulk column after STATION and TS (see bench_csv_fields) */
  static const int src[12] = {5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 16, 15};
  const char *fs[BENCH_CSV_FIELDS], *vals[14];
  size_t fn[BENCH_CSV_FIELDS];
  int lens[14];
  char buf[BENCH_CSV_FIELDS][64];
  char ts[20] = "0000-00-00 00:00:00";
  int rc = 0, got;
  bench_csv c;
  if (bench_csv_open(&c, file) != 0) return -1;
  while ((got = bench_csv_fields(&c, fs, fn, buf)) == 1) {
    /* TS as a TIMESTAMP literal from year, month, day, hour */
    if (fn[1] != 4 || pad2(ts + 5, fs[2], fn[2]) || pad2(ts + 8, fs[3], fn[3]) ||
        pad2(ts + 11, fs[4], fn[4])) {
      fprintf(stderr, "bench: Rowan bulk: bad date fields at line %lld\n", (long long)c.line);
      rc = -1;
      break;
    }
    memcpy(ts, fs[1], 4);
    if (year_add) {
      int y = (fs[1][0] - '0') * 1000 + (fs[1][1] - '0') * 100 + (fs[1][2] - '0') * 10 +
              (fs[1][3] - '0') + year_add;
      ts[0] = (char)('0' + y / 1000); ts[1] = (char)('0' + y / 100 % 10);
      ts[2] = (char)('0' + y / 10 % 10); ts[3] = (char)('0' + y % 10);
    }
    vals[0] = station ? station : fs[17];
    lens[0] = station ? (int)strlen(station) : (int)fn[17];
    vals[1] = ts; lens[1] = 19;
    for (int i = 0; i < 12; i++) {
      size_t n = fn[src[i]];
      const char *v = fs[src[i]];
      int na = n == 0 || (n == 2 && v[0] == 'N' && v[1] == 'A');
      vals[2 + i] = na ? NULL : v;
      lens[2 + i] = (int)n;
    }
    if (rowan_bulk_add_text(b, vals, lens) != ROWAN_OK) { rc = fail(h, "rowan_bulk_add_text"); break; }
  }
  bench_csv_close(&c);
  return got < 0 ? -1 : rc;
}

int bench_rowan_bulk_load(void *vh, const bench_input *in) {
  rw *h = vh;
  static const char *const cols[14] = {"STATION", "TS", "PM25", "PM10", "SO2", "NO2", "CO",
                                       "O3", "TEMP", "PRES", "DEWP", "RAIN", "WSPM", "WD"};
  rowan_bulk *b = NULL;
  if (rowan_bulk_begin(h->db, "SENSOR", 14, cols, &b) != ROWAN_OK) return fail(h, "rowan_bulk_begin");
  int rc = 0;
  if (!in->synth_groups) {
    for (int f = 0; f < in->n_files && rc == 0; f++) rc = bulk_file(h, b, &in->files[f], NULL, 0);
  } else {
    /* the synthetic set: each station's copies one after another, oldest first; one bulk
    ** load per station group (4.2M rows with 10 shifts), as a loader of 100M rows would
    ** commit in parts: one load of 12.6M rows (the 30x set) ran 20 times slower per row
    ** than one of 4.2M on the 2-core machine (bench/HISTORY.md, issue 22 baseline) */
    for (int g = 0; g < in->synth_groups && rc == 0; g++) {
      if (g > 0) {
        if (rowan_bulk_commit(b) != ROWAN_OK) return fail(h, "rowan_bulk_commit");
        b = NULL;
        if (rowan_bulk_begin(h->db, "SENSOR", 14, cols, &b) != ROWAN_OK)
          return fail(h, "rowan_bulk_begin");
      }
      for (int f = 0; f < in->n_files && rc == 0; f++)
        for (int s = 0; s < in->synth_shifts && rc == 0; s++)
          rc = bulk_file(h, b, &in->files[f], in->stations[g * in->n_files + f], 4 * s);
    }
  }
  if (rc != 0) { rowan_bulk_abort(b); return -1; }
  if (rowan_bulk_commit(b) != ROWAN_OK) return fail(h, "rowan_bulk_commit");
  return 0;
}

uint64_t bench_rowan_cache_inserts(void *vh) {
  kv_block_cache_stats cs;
  if (kv_block_cache_get_stats(api_test_kv(((rw *)vh)->db), &cs) != KV_OK) return 0;
  return cs.inserts;
}

uint64_t bench_rowan_reader_bytes(void *vh) {
  kv_db *db = api_test_kv(((rw *)vh)->db);
  uint64_t sum = 0;
  for (int t = 0; t < kv_table_count(db); t++) {
    const char *name = kv_table_name(db, t);
    uint32_t ids[64], n = 0;
    if (!name || kv_table_families(db, name, ids, 64, &n) != KV_OK) continue;
    for (uint32_t i = 0; i < n && i < 64; i++) {
      kv_family_stats st;
      if (kv_family_get_stats(db, ids[i], &st) == KV_OK) sum += st.reader_bytes;
    }
  }
  return sum;
}

void bench_rowan_print_cache(void *vh, FILE *out) {
  rw *h = vh;
  kv_block_cache_stats cs;
  if (kv_block_cache_get_stats(api_test_kv(h->db), &cs) != KV_OK) return;
  fprintf(out, "Rowan block cache: %llu hits, %llu misses, %llu inserts, %llu evictions,"
          " %zu of %zu bytes used\n", (unsigned long long)cs.hits,
          (unsigned long long)cs.misses, (unsigned long long)cs.inserts,
          (unsigned long long)cs.evictions, cs.usage, cs.capacity);
}

const bench_engine bench_rowan = {
    "Rowan",       rw_create,          rw_load,   rw_finish,   rw_open,
    rw_count_all,  rw_count_temp_gt,   rw_count_temp_null,     rw_count_temp_gt_index, rw_lookup,
    rw_latest,     rw_range,           rw_daily_avg,           rw_close};
