/*
** bench/bench_rocks.c: the RocksDB side of the benchmark (librocksdb C API).
**
** Layout: one key-value pair per row. The key is Rowan's row-key order: the station's
** bytes, a 0x00 terminator, then the timestamp descending (big-endian, sign bit flipped,
** every byte inverted), so a station's hours are contiguous, newest first. The value is a
** 16-bit NULL mask (little-endian) followed by the non-NULL doubles in column order (8
** bytes each, host order) and the WD bytes. Options: lz4 compression, a 10-bit bloom
** filter, an LRU block cache of bench_cache_bytes (as Rowan's), the WAL on without a sync per write
** (Rowan's sync=normal). Load: the bench's CSV reader, one WriteBatch per batch of rows.
** Reads: rocksdb_get for point lookups; an iterator per range query; the filtered count
** and the daily average iterate everything and decode TEMP from the value, which is what
** the SQL engines' plans do for those queries (no key predicate on the station).
** Size: after a flush and a full compaction, every file of the directory except RocksDB's
** text info logs (LOG, LOG.old.*).
**
** What it does not: secondary indexes (RocksDB has none; the index figure is Rowan's and
** SQLite's only), prefix extractors or other tuning beyond the above.
*/
#include "bench.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <rocksdb/c.h>

typedef struct rk {
  rocksdb_t *db;                   /* the database */
  rocksdb_options_t *opts;         /* its options */
  rocksdb_block_based_table_options_t *bbto; /* table options (cache, bloom) */
  rocksdb_cache_t *cache;          /* the LRU block cache */
  rocksdb_filterpolicy_t *bloom;   /* owned by bbto once set */
  rocksdb_readoptions_t *ro;       /* default read options, reused */
  rocksdb_writeoptions_t *wo;      /* WAL on, no sync */
} rk;

static int check(char *err, const char *what) {
  if (!err) return 0;
  fprintf(stderr, "bench: RocksDB: %s: %s\n", what, err);
  rocksdb_free(err);
  return -1;
}

static void rk_close(void *vh) {
  rk *h = vh;
  if (!h) return;
  if (h->db) rocksdb_close(h->db);
  if (h->ro) rocksdb_readoptions_destroy(h->ro);
  if (h->wo) rocksdb_writeoptions_destroy(h->wo);
  if (h->opts) rocksdb_options_destroy(h->opts);
  if (h->bbto) rocksdb_block_based_options_destroy(h->bbto);
  if (h->cache) rocksdb_cache_destroy(h->cache);
  free(h);
}

static int open_db(void **out, const char *dir, int create) {
  rk *h = calloc(1, sizeof *h);
  *out = h;
  if (!h) return -1;
  h->opts = rocksdb_options_create();
  rocksdb_options_set_create_if_missing(h->opts, create);
  rocksdb_options_set_compression(h->opts, rocksdb_lz4_compression);
  h->bbto = rocksdb_block_based_options_create();
  h->cache = rocksdb_cache_create_lru(bench_cache_bytes);
  rocksdb_block_based_options_set_block_cache(h->bbto, h->cache);
  h->bloom = rocksdb_filterpolicy_create_bloom(10);
  rocksdb_block_based_options_set_filter_policy(h->bbto, h->bloom);
  rocksdb_options_set_block_based_table_factory(h->opts, h->bbto);
  h->ro = rocksdb_readoptions_create();
  h->wo = rocksdb_writeoptions_create();
  rocksdb_writeoptions_set_sync(h->wo, 0);
  char *err = NULL;
  h->db = rocksdb_open(h->opts, dir, &err);
  return check(err, "open");
}

static int rk_create(void **out, const char *dir, int with_index, int *unsupported) {
  *unsupported = with_index != 0;
  if (with_index) { *out = NULL; return -1; }
  return open_db(out, dir, 1);
}

static int rk_open(void **out, const char *dir) { return open_db(out, dir, 0); }

/* key = station 0x00 ~(ts ^ sign) big-endian; returns its length */
static size_t make_key(uint8_t *k, const char *station, size_t slen, int64_t ts) {
  memcpy(k, station, slen);
  k[slen] = 0;
  uint64_t u = ~((uint64_t)ts ^ (UINT64_C(1) << 63));
  for (int i = 0; i < 8; i++) k[slen + 1 + i] = (uint8_t)(u >> (56 - 8 * i));
  return slen + 9;
}

static int64_t key_ts(const uint8_t *k, size_t klen) {
  uint64_t u = 0;
  for (int i = 0; i < 8; i++) u = (u << 8) | k[klen - 8 + i];
  return (int64_t)(~u ^ (UINT64_C(1) << 63));
}

static size_t make_value(uint8_t *v, const bench_row *r) {
  size_t n = 2;
  v[0] = (uint8_t)r->null_mask;
  v[1] = (uint8_t)(r->null_mask >> 8);
  for (int i = 0; i < BENCH_NDOUBLE; i++)
    if (!(r->null_mask & (1u << i))) { memcpy(v + n, &r->v[i], 8); n += 8; }
  if (!(r->null_mask & BENCH_WD_NULL_BIT)) { memcpy(v + n, r->wd, r->wd_len); n += r->wd_len; }
  return n;
}

/* Decode a value into r (not station). Returns 0, or -1 when the value is malformed. */
static int parse_value(const uint8_t *v, size_t n, bench_row *r) {
  if (n < 2) return -1;
  r->null_mask = (uint32_t)v[0] | ((uint32_t)v[1] << 8);
  size_t p = 2;
  for (int i = 0; i < BENCH_NDOUBLE; i++) {
    if (r->null_mask & (1u << i)) continue;
    if (p + 8 > n) return -1;
    memcpy(&r->v[i], v + p, 8);
    p += 8;
  }
  r->wd_len = 0;
  r->wd[0] = 0;
  if (!(r->null_mask & BENCH_WD_NULL_BIT)) {
    if (n - p > 3) return -1;
    memcpy(r->wd, v + p, n - p);
    r->wd_len = (uint32_t)(n - p);
    r->wd[r->wd_len] = 0;
  }
  return 0;
}

/* TEMP of a value: 1 with *t, 0 when NULL, -1 when malformed. */
static int value_temp(const uint8_t *v, size_t n, double *t) {
  if (n < 2) return -1;
  uint32_t mask = (uint32_t)v[0] | ((uint32_t)v[1] << 8);
  if (mask & (1u << BENCH_TEMP)) return 0;
  size_t off = 2 + 8 * (size_t)(BENCH_TEMP - __builtin_popcount(mask & ((1u << BENCH_TEMP) - 1)));
  if (off + 8 > n) return -1;
  memcpy(t, v + off, 8);
  return 1;
}

static int rk_load(void *vh, const bench_input *in, int batch_rows) {
  rk *h = vh;
  rocksdb_writebatch_t *wb = rocksdb_writebatch_create();
  int rc = 0;
  int64_t n = 0;
  bench_row r;
  uint8_t key[BENCH_MAX_STATION + 9], val[128];
  for (int f = 0; f < in->n_files && rc == 0; f++) {
    bench_csv c;
    if (bench_csv_open(&c, &in->files[f]) != 0) { rc = -1; break; }
    int got;
    while ((got = bench_csv_next(&c, &r)) == 1) {
      size_t kl = make_key(key, r.station, r.station_len, r.ts_ms);
      size_t vl = make_value(val, &r);
      rocksdb_writebatch_put(wb, (const char *)key, kl, (const char *)val, vl);
      if (++n % batch_rows == 0) {
        char *err = NULL;
        rocksdb_write(h->db, h->wo, wb, &err);
        if (check(err, "write") != 0) { rc = -1; break; }
        rocksdb_writebatch_clear(wb);
      }
    }
    bench_csv_close(&c);
    if (got < 0) rc = -1;
  }
  if (rc == 0 && rocksdb_writebatch_count(wb) > 0) {
    char *err = NULL;
    rocksdb_write(h->db, h->wo, wb, &err);
    rc = check(err, "write");
  }
  rocksdb_writebatch_destroy(wb);
  return rc;
}

static uint64_t info_log_bytes(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return 0;
  uint64_t total = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, "LOG") != 0 && strncmp(e->d_name, "LOG.old", 7) != 0) continue;
    char p[4096];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
    if (stat(p, &st) == 0) total += (uint64_t)st.st_size;
  }
  closedir(d);
  return total;
}

static int rk_finish(void *vh, const char *dir, uint64_t *bytes) {
  rk *h = vh;
  rocksdb_flushoptions_t *fo = rocksdb_flushoptions_create();
  rocksdb_flushoptions_set_wait(fo, 1);
  char *err = NULL;
  rocksdb_flush(h->db, fo, &err);
  rocksdb_flushoptions_destroy(fo);
  if (check(err, "flush") != 0) return -1;
  rocksdb_compact_range(h->db, NULL, 0, NULL, 0);
  rk_close(h);
  *bytes = bench_dir_bytes(dir) - info_log_bytes(dir);
  return 0;
}

/* Iterate everything; call fn(ctx, key, klen, value, vlen) per pair. */
static int scan_all(rk *h, int (*fn)(void *, const uint8_t *, size_t, const uint8_t *, size_t),
                    void *ctx) {
  rocksdb_iterator_t *it = rocksdb_create_iterator(h->db, h->ro);
  int rc = 0;
  for (rocksdb_iter_seek_to_first(it); rocksdb_iter_valid(it); rocksdb_iter_next(it)) {
    size_t kl, vl;
    const char *k = rocksdb_iter_key(it, &kl), *v = rocksdb_iter_value(it, &vl);
    if (fn(ctx, (const uint8_t *)k, kl, (const uint8_t *)v, vl) != 0) { rc = -1; break; }
  }
  char *err = NULL;
  rocksdb_iter_get_error(it, &err);
  rocksdb_iter_destroy(it);
  if (check(err, "scan") != 0) rc = -1;
  return rc;
}

typedef struct count_ctx {
  int mode;                        /* 0 all, 1 TEMP > t, 2 TEMP NULL */
  double t;                        /* threshold of mode 1 */
  int64_t n;                       /* rows counted */
} count_ctx;

static int count_fn(void *vc, const uint8_t *k, size_t kl, const uint8_t *v, size_t vl) {
  count_ctx *c = vc;
  (void)k; (void)kl;
  if (c->mode == 0) { c->n++; return 0; }
  double t;
  int got = value_temp(v, vl, &t);
  if (got < 0) return -1;
  if (c->mode == 1 ? (got == 1 && t > c->t) : got == 0) c->n++;
  return 0;
}

static int count(rk *h, int mode, double t, int64_t *n) {
  count_ctx c = {mode, t, 0};
  int rc = scan_all(h, count_fn, &c);
  *n = c.n;
  return rc;
}
static int rk_count_all(void *h, int64_t *n) { return count(h, 0, 0, n); }
static int rk_count_temp_gt(void *h, double t, int64_t *n) { return count(h, 1, t, n); }
static int rk_count_temp_null(void *h, int64_t *n) { return count(h, 2, 0, n); }

static int rk_lookup(void *vh, const char *station, int64_t ts_ms, bench_digest *d) {
  rk *h = vh;
  uint8_t key[BENCH_MAX_STATION + 9];
  size_t kl = make_key(key, station, strlen(station), ts_ms), vl;
  char *err = NULL;
  char *v = rocksdb_get(h->db, h->ro, (const char *)key, kl, &vl, &err);
  if (check(err, "get") != 0) return -1;
  if (!v) return 0;
  bench_row r;
  r.ts_ms = ts_ms;
  int rc = parse_value((const uint8_t *)v, vl, &r);
  rocksdb_free(v);
  if (rc != 0) { fprintf(stderr, "bench: RocksDB: malformed value\n"); return -1; }
  bench_digest_row(d, &r);
  return 0;
}

/* Rows of station from the seek key on, newest first, while ts >= from and at most n. */
static int range_from(rk *h, const char *station, int64_t seek_ts, int64_t from, int n,
                      bench_digest *d) {
  uint8_t key[BENCH_MAX_STATION + 9];
  size_t slen = strlen(station), kl = make_key(key, station, slen, seek_ts);
  rocksdb_iterator_t *it = rocksdb_create_iterator(h->db, h->ro);
  int rc = 0, got = 0;
  for (rocksdb_iter_seek(it, (const char *)key, kl); rocksdb_iter_valid(it) && got < n;
       rocksdb_iter_next(it)) {
    size_t ikl, vl;
    const uint8_t *k = (const uint8_t *)rocksdb_iter_key(it, &ikl);
    if (ikl != slen + 9 || memcmp(k, key, slen + 1) != 0) break;
    bench_row r;
    r.ts_ms = key_ts(k, ikl);
    if (r.ts_ms < from) break;
    const uint8_t *v = (const uint8_t *)rocksdb_iter_value(it, &vl);
    if (parse_value(v, vl, &r) != 0) { rc = -1; break; }
    bench_digest_row(d, &r);
    got++;
  }
  char *err = NULL;
  rocksdb_iter_get_error(it, &err);
  rocksdb_iter_destroy(it);
  if (check(err, "iterator") != 0) rc = -1;
  return rc;
}

static int rk_latest(void *h, const char *station, int n, bench_digest *d) {
  return range_from(h, station, INT64_MAX, INT64_MIN, n, d);
}

static int rk_range(void *h, const char *station, int64_t from, int64_t to, bench_digest *d) {
  return range_from(h, station, to - 1, from, 1 << 30, d);
}

typedef struct daily_ctx {
  int64_t from, to;                /* the time range */
  uint8_t cur[BENCH_MAX_STATION];  /* station of the open group (with its 0x00) */
  size_t cur_len;                  /* its length; 0 = no open group */
  int64_t cur_day;                 /* day number of the open group */
  double sum;                      /* TEMP sum of the open group */
  int64_t n;                       /* non-NULL TEMPs of the open group */
  bench_digest *d;                 /* groups and the sum of their averages */
} daily_ctx;

static void daily_emit(daily_ctx *c) {
  if (!c->cur_len) return;
  c->d->rows++;
  if (c->n) c->d->sum += c->sum / (double)c->n;
}

/* Rows arrive by station, newest first, so each (station, day) group is contiguous. */
static int daily_fn(void *vc, const uint8_t *k, size_t kl, const uint8_t *v, size_t vl) {
  daily_ctx *c = vc;
  if (kl < 9) return -1;
  int64_t ts = key_ts(k, kl);
  if (ts < c->from || ts >= c->to) return 0;
  int64_t day = ts / 86400000;
  size_t slen = kl - 8;
  if (slen > sizeof c->cur) return -1;
  if (c->cur_len != slen || day != c->cur_day || memcmp(c->cur, k, slen) != 0) {
    daily_emit(c);
    memcpy(c->cur, k, slen);
    c->cur_len = slen;
    c->cur_day = day;
    c->sum = 0;
    c->n = 0;
  }
  double t;
  int got = value_temp(v, vl, &t);
  if (got < 0) return -1;
  if (got) { c->sum += t; c->n++; }
  return 0;
}

static int rk_daily_avg(void *h, int64_t from, int64_t to, bench_digest *d) {
  daily_ctx c;
  memset(&c, 0, sizeof c);
  c.from = from;
  c.to = to;
  c.d = d;
  int rc = scan_all(h, daily_fn, &c);
  daily_emit(&c);
  return rc;
}

const bench_engine bench_rocks = {
    "RocksDB",     rk_create,          rk_load,   rk_finish,   rk_open,
    rk_count_all,  rk_count_temp_gt,   rk_count_temp_null,     NULL,                   rk_lookup,
    rk_latest,     rk_range,           rk_daily_avg,           rk_close};
