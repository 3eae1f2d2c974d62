/*
** examples/kv_demo.c: the main job until the SQL layer exists. Loads the bundled Beijing
** air-quality archive (12 gzip'ed CSV files, 420,768 hourly readings) straight into kv/,
** Rowan's storage layer, and runs a few reads that show what a row-key design buys:
** the newest 24 readings of one station (a short range scan), one station's day, a filtered
** full scan (TEMP > 30) and the per-family bytes read, so you can see that a scan of the
** `readings` family never touches the `meta` family's files.
**
** The row key is built by hand here, the way an HBase user would: the station name, a 0x00
** separator, then the timestamp as 8 big-endian bytes with the sign bit flipped and every
** bit inverted (newest first). The SQL layer builds the same kind of key from
** PRIMARY KEY (station, ts DESC) by itself (catalog/). Times are Beijing local time as
** given in the files (UTC+8, no daylight saving), stored as if they were UTC.
**
** It does not parse SQL, use the catalog, or validate the CSV beyond what it needs: it is a
** demo of kv/, not the importer (that is the shell's .import).
**
** Usage: kv_demo DATA_DIR STORE_DIR   (STORE_DIR must not exist or be an earlier demo store)
*/
#include <csv.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#include "kv/kv.h"

#define N_READINGS 12
/* Readings in file order, qualifier 1..12: PM2.5, PM10, SO2, NO2, CO, O3, TEMP, PRES,
** DEWP, RAIN, wd (text), WSPM. */
#define Q_TEMP 7 /* qualifier (1-based column id) of TEMP */
#define Q_PM25 1
#define Q_WD 11

static const char *const stations[] = {
  "Aotizhongxin", "Changping", "Dingling", "Dongsi", "Guanyuan", "Gucheng", "Huairou",
  "Nongzhanguan", "Shunyi", "Tiantan", "Wanliu", "Wanshouxigong"};
#define N_STATIONS 12

static double now_sec(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void die(const char *what, int rc) {
  fprintf(stderr, "kv_demo: %s: %s: %s\n", what, kv_status_name(rc), kv_errmsg());
  exit(1);
}

/* Days from 1970-01-01 to y-m-d (proleptic Gregorian), Howard Hinnant's algorithm. */
static int64_t days_from_civil(int y, int m, int d) {
  y -= m <= 2;
  int64_t era = (y >= 0 ? y : y - 399) / 400;
  int64_t yoe = y - era * 400;
  int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

/* Order-preserving 8-byte encoding of a double (the catalog's DOUBLE cell encoding). */
static void encode_double(double v, uint8_t out[8]) {
  uint64_t b;
  if (v == 0) v = 0; /* -0.0 -> 0.0 */
  memcpy(&b, &v, 8);
  b = (b >> 63) ? ~b : b | (1ull << 63);
  for (int i = 0; i < 8; i++) out[i] = (uint8_t)(b >> (56 - 8 * i));
}
static double decode_double(const uint8_t in[8]) {
  uint64_t b = 0;
  for (int i = 0; i < 8; i++) b = (b << 8) | in[i];
  b = (b >> 63) ? b & ~(1ull << 63) : ~b;
  double v;
  memcpy(&v, &b, 8);
  return v;
}

/* Row key: station, 0x00, inverted sign-flipped big-endian ms timestamp. */
static size_t make_key(uint8_t *key, const char *station, int64_t ts_ms) {
  size_t n = strlen(station);
  memcpy(key, station, n);
  key[n++] = 0;
  uint64_t u = ~((uint64_t)ts_ms ^ (1ull << 63));
  for (int i = 0; i < 8; i++) key[n++] = (uint8_t)(u >> (56 - 8 * i));
  return n;
}
static int64_t key_ts(const uint8_t *key, uint32_t len) {
  uint64_t u = 0;
  for (uint32_t i = len - 8; i < len; i++) u = (u << 8) | key[i];
  return (int64_t)(~u ^ (1ull << 63));
}

/* ---- Loading ---- */
typedef struct loader {
  kv_db *db;
  kv_batch *batch;
  uint32_t f_readings, f_key;
  char fields[18][64]; /* the current record's fields */
  int nfield;
  long line;
  uint64_t rows;
} loader;

static void on_field(void *s, size_t len, void *ctx) {
  loader *L = ctx;
  if (L->nfield < 18) {
    if (len > 63) len = 63;
    memcpy(L->fields[L->nfield], s, len);
    L->fields[L->nfield][len] = 0;
  }
  L->nfield++;
}

static void on_record(int c, void *ctx) {
  loader *L = ctx;
  (void)c;
  L->line++;
  if (L->line == 1 || L->nfield != 18) { L->nfield = 0; return; } /* header */
  int y = atoi(L->fields[1]), mo = atoi(L->fields[2]), d = atoi(L->fields[3]),
      h = atoi(L->fields[4]);
  int64_t ts = (days_from_civil(y, mo, d) * 24 + h) * 3600000LL;
  uint8_t key[64];
  size_t klen = make_key(key, L->fields[17], ts);
  int rc = kv_batch_put(L->batch, L->f_key, key, klen, "", 0, ts, "", 0);
  if (rc) die("batch", rc);
  for (int q = 1; q <= N_READINGS; q++) {
    const char *f = L->fields[4 + q];
    if (strcmp(f, "NA") == 0) continue;
    uint8_t qual = (uint8_t)q, val[8];
    if (q == Q_WD) {
      rc = kv_batch_put(L->batch, L->f_readings, key, klen, &qual, 1, ts, f, strlen(f));
    } else {
      encode_double(strtod(f, NULL), val);
      rc = kv_batch_put(L->batch, L->f_readings, key, klen, &qual, 1, ts, val, 8);
    }
    if (rc) die("batch", rc);
  }
  L->rows++;
  if (kv_batch_count(L->batch) >= 20000) {
    if ((rc = kv_commit(L->db, L->batch, NULL))) die("commit", rc);
    kv_batch_clear(L->batch);
  }
  L->nfield = 0;
}

static void load_file(loader *L, const char *path) {
  gzFile gz = gzopen(path, "rb");
  if (!gz) { fprintf(stderr, "kv_demo: cannot open %s\n", path); exit(1); }
  struct csv_parser p;
  csv_init(&p, CSV_APPEND_NULL);
  char buf[1 << 16];
  int n;
  L->line = 0;
  L->nfield = 0;
  while ((n = gzread(gz, buf, sizeof buf)) > 0) {
    if (csv_parse(&p, buf, (size_t)n, on_field, on_record, L) != (size_t)n) {
      fprintf(stderr, "kv_demo: %s: %s\n", path, csv_strerror(csv_error(&p)));
      exit(1);
    }
  }
  csv_fini(&p, on_field, on_record, L);
  csv_free(&p);
  gzclose(gz);
}

/* ---- Reads ---- */
static uint32_t fam_ids[3]; /* readings, meta, _k */
static const char *family_name(uint32_t id) {
  return id == fam_ids[0] ? "readings" : id == fam_ids[1] ? "meta" : id == fam_ids[2] ? "_k" : "?";
}

static const char *family_name(uint32_t id);

static void print_metrics(const char *what, kv_scan *s) {
  kv_scan_metrics m;
  kv_scan_get_metrics(s, &m);
  printf("  -- %s: rows examined %llu, returned %llu, filtered %llu, ranges %llu\n", what,
         (unsigned long long)m.rows_examined, (unsigned long long)m.rows_returned,
         (unsigned long long)m.rows_filtered, (unsigned long long)m.ranges_sought);
  for (uint32_t i = 0; i < m.n_families; i++)
    printf("     family %-8s: cells %llu, blocks %llu, bytes %llu, store files %llu\n",
           family_name(m.families[i].family_id),
           (unsigned long long)m.families[i].cells_examined,
           (unsigned long long)m.families[i].blocks_read,
           (unsigned long long)m.families[i].bytes_read,
           (unsigned long long)m.families[i].files_opened);
}

static const kv_cell_view *find_cell(const kv_row *r, uint8_t q) {
  for (uint32_t i = 0; i < r->n_cells; i++)
    if (r->cells[i].qual_len == 1 && r->cells[i].qual[0] == q) return &r->cells[i];
  return NULL;
}

static void format_reading(char *buf, size_t cap, const kv_cell_view *c) {
  if (!c) snprintf(buf, cap, "NULL");
  else if (c->value_len == 8) snprintf(buf, cap, "%g", decode_double(c->value));
  else snprintf(buf, cap, "%.*s", (int)c->value_len, (const char *)c->value);
}

static void print_reading_row(const kv_row *r) {
  int64_t ts = key_ts(r->key, r->key_len);
  time_t t = (time_t)(ts / 1000);
  struct tm tm;
  gmtime_r(&t, &tm);
  char when[32], pm[32], temp[32], wd[32];
  strftime(when, sizeof when, "%Y-%m-%d %H:%M", &tm);
  format_reading(pm, sizeof pm, find_cell(r, Q_PM25));
  format_reading(temp, sizeof temp, find_cell(r, Q_TEMP));
  format_reading(wd, sizeof wd, find_cell(r, Q_WD));
  printf("  %-14s %s  PM2.5=%-6s TEMP=%-6s wd=%s\n", (const char *)r->key, when, pm, temp, wd);
}

static bool temp_over_30(void *ctx, const kv_row *r) {
  (void)ctx;
  const kv_cell_view *t = find_cell(r, Q_TEMP);
  if (!t || t->value_len != 8) return false;
  static uint8_t bound[8];
  static int init;
  if (!init) { encode_double(30.0, bound); init = 1; }
  return memcmp(t->value, bound, 8) > 0; /* compares encoded bytes: numeric order */
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s DATA_DIR STORE_DIR\n", argv[0]);
    return 2;
  }
  kv_options o;
  kv_options_init(&o);
  o.create_if_missing = true;
  o.sync_mode = KV_SYNC_NORMAL;
  kv_db *db;
  int rc = kv_open(argv[2], &o, &db);
  if (rc) die("open", rc);

  kv_family_options fams[3] = {{.name = "readings", .max_versions = 1},
                               {.name = "meta", .max_versions = 1},
                               {.name = "_k", .max_versions = 1}};
  rc = kv_create_table(db, "SENSOR", fams, 3);
  bool fresh = rc == KV_OK;
  if (rc == KV_ERR_EXISTS) {
    printf("store %s already loaded; reusing it\n", argv[2]);
  } else if (rc) {
    die("create table", rc);
  }
  loader L = {.db = db, .batch = kv_batch_new()};
  uint32_t f_meta;
  if ((rc = kv_family_id(db, "SENSOR", "readings", &L.f_readings)) ||
      (rc = kv_family_id(db, "SENSOR", "meta", &f_meta)) ||
      (rc = kv_family_id(db, "SENSOR", "_k", &L.f_key)))
    die("family id", rc);

  if (fresh) {
    double t0 = now_sec();
    for (int i = 0; i < N_STATIONS; i++) {
      char path[4096];
      snprintf(path, sizeof path, "%s/PRSA_Data_%s_20130301-20170228.csv.gz", argv[1],
               stations[i]);
      load_file(&L, path);
      /* The meta family: written once per station, on the station's newest row. */
      uint8_t key[64];
      size_t klen = make_key(key, stations[i], (days_from_civil(2017, 2, 28) * 24 + 23) *
                                                   3600000LL);
      kv_batch_put(L.batch, f_meta, key, klen, "type", 4, KV_TS_NOW,
                   i == 1 || i == 6 || i == 8 ? "suburban" : i == 2 ? "control" : "urban",
                   i == 1 || i == 6 || i == 8 ? 8 : i == 2 ? 7 : 5);
    }
    if (kv_batch_count(L.batch) && (rc = kv_commit(db, L.batch, NULL))) die("commit", rc);
    double t1 = now_sec();
    if ((rc = kv_flush(db, NULL))) die("flush", rc);
    if ((rc = kv_compact(db, NULL, true))) die("compact", rc);
    printf("loaded %llu rows in %.2f s (%.0f rows/s), flushed and compacted in %.2f s\n",
           (unsigned long long)L.rows, t1 - t0, (double)L.rows / (t1 - t0), now_sec() - t1);
  }
  kv_batch_free(L.batch);

  fam_ids[0] = L.f_readings;
  fam_ids[1] = f_meta;
  fam_ids[2] = L.f_key;
  uint64_t total = 0;
  uint32_t fids[3] = {L.f_readings, f_meta, L.f_key};
  for (int i = 0; i < 3; i++) {
    kv_family_stats st;
    if ((rc = kv_family_get_stats(db, fids[i], &st))) die("stats", rc);
    printf("family %-8s: %llu store files, %llu bytes, %llu blocks, %llu cells\n",
           i == 0 ? "readings" : i == 1 ? "meta" : "_k", (unsigned long long)st.store_files,
           (unsigned long long)st.store_file_bytes, (unsigned long long)st.blocks,
           (unsigned long long)st.cells);
    total += st.store_file_bytes;
  }
  printf("on disk: %.1f bytes per row (every store file of the table; 420,768 rows)\n\n",
         (double)total / 420768.0);

  /* 1. Newest 24 readings of Dongsi: one range scan, newest first because ts is inverted. */
  uint8_t start[64], end[64];
  size_t slen = strlen("Dongsi") + 1, elen = slen;
  memcpy(start, "Dongsi", slen);
  memcpy(end, "Dongsi", slen);
  end[elen - 1] = 1; /* all keys with prefix "Dongsi\0" are < "Dongsi\1" */
  kv_range rg = {start, slen, true, end, elen, false};
  kv_scan_options so = {.family_ids = &L.f_readings, .n_families = 1, .ranges = &rg,
                        .n_ranges = 1, .limit = 24};
  kv_scan *s;
  kv_row row;
  printf("RANGE SCAN over readings [\"Dongsi\", \"Dongsi\\x01\") LIMIT 24: newest first\n");
  if ((rc = kv_scan_open(db, &so, &s))) die("scan", rc);
  int shown = 0;
  while ((rc = kv_scan_next(s, &row)) == KV_OK)
    if (shown++ < 5) print_reading_row(&row);
  if (rc != KV_ERR_NOTFOUND) die("scan", rc);
  printf("  ... (%d rows)\n", shown);
  print_metrics("range scan", s);
  kv_scan_close(s);

  /* 2. One station's day: 2016-01-01, a key range on (station, ts). */
  uint8_t a[64], b[64];
  size_t alen = make_key(a, "Tiantan", (days_from_civil(2016, 1, 1) * 24 + 23) * 3600000LL);
  size_t blen = make_key(b, "Tiantan", days_from_civil(2016, 1, 1) * 24 * 3600000LL);
  kv_range day = {a, alen, true, b, blen, true};
  so.ranges = &day;
  so.limit = 0;
  printf("\nRANGE SCAN over readings, Tiantan 2016-01-01 23:00 down to 00:00\n");
  if ((rc = kv_scan_open(db, &so, &s))) die("scan", rc);
  shown = 0;
  while ((rc = kv_scan_next(s, &row)) == KV_OK)
    if (shown++ < 3) print_reading_row(&row);
  if (rc != KV_ERR_NOTFOUND) die("scan", rc);
  printf("  ... (%d rows)\n", shown);
  print_metrics("day scan", s);
  kv_scan_close(s);

  /* 3. Hours with TEMP > 30 anywhere: a full scan of one qualifier with a filter. */
  uint8_t qt = Q_TEMP;
  const uint8_t *qp = &qt;
  uint32_t ql = 1;
  kv_qualifier_set qs = {L.f_readings, &qp, &ql, 1};
  kv_scan_options fo = {.family_ids = &L.f_readings, .n_families = 1, .qualifiers = &qs,
                        .n_qualifier_sets = 1, .filter = temp_over_30};
  printf("\nFULL SCAN over readings, qualifier TEMP, filter TEMP > 30 (on encoded bytes)\n");
  double t0 = now_sec();
  if ((rc = kv_scan_open(db, &fo, &s))) die("scan", rc);
  uint64_t hot = 0;
  while ((rc = kv_scan_next(s, &row)) == KV_OK) hot++;
  if (rc != KV_ERR_NOTFOUND) die("scan", rc);
  double dt = now_sec() - t0;
  printf("  %llu hours with TEMP > 30 (the source files say 25,587) in %.3f s\n",
         (unsigned long long)hot, dt);
  print_metrics("filtered full scan", s);
  kv_scan_close(s);

  /* 4. Row count from the small key family alone. */
  kv_scan_options ko = {.family_ids = &L.f_key, .n_families = 1};
  if ((rc = kv_scan_open(db, &ko, &s))) die("scan", rc);
  uint64_t rows = 0;
  while ((rc = kv_scan_next(s, &row)) == KV_OK) rows++;
  if (rc != KV_ERR_NOTFOUND) die("scan", rc);
  printf("\nFULL SCAN over the key family: %llu rows (the source files: 420,768)\n",
         (unsigned long long)rows);
  print_metrics("count", s);
  kv_scan_close(s);

  if ((rc = kv_close(db))) die("close", rc);
  return hot == 25587 && rows == 420768 ? 0 : 1;
}
