/*
** tests/kv/test_sf_size.c: the store file size target on the real sensor archive (issue 2,
** item 6; issue 8). Reads the 12 gzip'ed CSV files of $ROWAN_DATA_DIR/beijing, writes one
** store file for the readings family (one cell per non-NA reading) and one for the key
** family (one empty marker cell per row), each station's rows newest first, then asserts
** that both files together cost at most 32 bytes per row, and prints the figures.
**
** It also reads the readings file back and checks what the archive is known to hold
** (420,768 rows; 25,587 with TEMP > 30; 398 with TEMP NULL), so the size is that of a file
** that really holds the data. The decode rate it prints is informative, not asserted.
**
** Row key: station name, 0x00, timestamp (ms, as given in the files, read as UTC) as 8
** big-endian bytes, sign bit flipped then every bit inverted (ts DESC). Qualifiers 1..12
** (one byte) in CSV order PM2.5, PM10, SO2, NO2, CO, O3, TEMP, PRES, DEWP, RAIN, wd, WSPM;
** values are 8-byte order-preserving doubles (IEEE bits big-endian, sign bit flipped for
** positives, all bits inverted for negatives), wd is its text. Every cell has the load's
** timestamp; sequence numbers advance once per 1,000 rows (one import batch).
*/
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>
#include <zlib.h>

#include "kv/env/env_mem.h"
#include "kv/sf/sf.h"
#include "testutil.h"

#define NSTATIONS 12
#define NREAD 12
#define ARCHIVE_ROWS 420768u

typedef struct srow {
  int64_t ts;            /* ms since the epoch */
  double v[NREAD];       /* readings; NAN for NA (index 10, wd, unused) */
  char wd[4];            /* wind direction text, "" for NA */
} srow;

typedef struct station {
  char name[32];         /* station name */
  srow *rows;            /* rows in file order (oldest first) */
  size_t n, cap;         /* rows used / allocated */
} station;

static const char *const FILES[NSTATIONS] = {
  "Aotizhongxin", "Changping", "Dingling", "Dongsi", "Guanyuan", "Gucheng", "Huairou",
  "Nongzhanguan", "Shunyi", "Tiantan", "Wanliu", "Wanshouxigong"};

static int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  int64_t era = (y >= 0 ? y : y - 399) / 400;
  unsigned yoe = (unsigned)(y - era * 400);
  unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + (int64_t)doe - 719468;
}

static void load_station(station *st, const char *name) {
  char path[1024];
  snprintf(path, sizeof path, "%s/beijing/PRSA_Data_%s_20130301-20170228.csv.gz",
           tu_data_dir(), name);
  gzFile f = gzopen(path, "rb");
  if (!f) fail_msg("cannot open %s", path);
  snprintf(st->name, sizeof st->name, "%s", name);
  char line[512];
  assert_non_null(gzgets(f, line, sizeof line)); /* header */
  while (gzgets(f, line, sizeof line)) {
    char *fld[18];
    int nf = 0;
    for (char *p = line; nf < 18;) {
      fld[nf++] = p;
      char *c = strchr(p, ',');
      if (!c) break;
      *c = 0;
      p = c + 1;
    }
    assert_int_equal(nf, 18);
    if (st->n == st->cap) {
      st->cap = st->cap ? st->cap * 2 : 40000;
      st->rows = realloc(st->rows, st->cap * sizeof *st->rows);
      assert_non_null(st->rows);
    }
    srow *r = &st->rows[st->n++];
    int64_t days = days_from_civil(atoi(fld[1]), (unsigned)atoi(fld[2]), (unsigned)atoi(fld[3]));
    r->ts = (days * 24 + atoi(fld[4])) * 3600000ll;
    for (int i = 0; i < NREAD; i++) {
      const char *s = fld[5 + i];
      if (i == 10) {                     /* wd: quoted text or NA */
        r->v[i] = NAN;
        r->wd[0] = 0;
        if (s[0] == '"') {
          size_t l = strcspn(s + 1, "\"");
          assert_true(l < sizeof r->wd);
          memcpy(r->wd, s + 1, l);
          r->wd[l] = 0;
        }
        continue;
      }
      r->v[i] = strcmp(s, "NA") == 0 ? NAN : strtod(s, NULL);
    }
  }
  gzclose(f);
}

static void put_be64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (56 - 8 * i));
}

static void encode_double(double d, uint8_t out[8]) {
  uint64_t b;
  memcpy(&b, &d, 8);
  b = (b >> 63) ? ~b : (b ^ (1ull << 63));
  put_be64(out, b);
}

static double decode_double(const uint8_t *p) {
  uint64_t b = 0;
  for (int i = 0; i < 8; i++) b = (b << 8) | p[i];
  b = (b >> 63) ? (b ^ (1ull << 63)) : ~b;
  double d;
  memcpy(&d, &b, 8);
  return d;
}

static void test_archive_size(void **state) {
  (void)state;
  clock_t t0 = clock();
  station *st = calloc(NSTATIONS, sizeof *st);
  size_t total_rows = 0;
  for (int i = 0; i < NSTATIONS; i++) {
    load_station(&st[i], FILES[i]);
    total_rows += st[i].n;
    if (i) assert_true(strcmp(st[i - 1].name, st[i].name) < 0); /* row key order */
  }
  assert_int_equal(total_rows, ARCHIVE_ROWS);
  kv_env *env = kv_env_mem_new(1);
  assert_int_equal(env->mkdir(env, "/db"), KV_OK);
  kv_sf_writer_options o = {0, KV_COMPRESSION_LZ4, 10, 0};
  kv_sf_writer *wr, *wk;
  assert_int_equal(kv_sf_writer_open(env, "/db/readings.sf", &o, &wr), KV_OK);
  assert_int_equal(kv_sf_writer_open(env, "/db/key.sf", &o, &wk), KV_OK);
  const int64_t load_ts = 1700000000000ll;
  uint64_t rowno = 0, readings = 0;
  for (int i = 0; i < NSTATIONS; i++) {
    size_t nl = strlen(st[i].name);
    for (size_t k = st[i].n; k-- > 0; rowno++) {     /* newest first */
      const srow *r = &st[i].rows[k];
      uint8_t key[48];
      memcpy(key, st[i].name, nl);
      key[nl] = 0;
      put_be64(key + nl + 1, ~((uint64_t)r->ts ^ (1ull << 63)));
      uint32_t klen = (uint32_t)nl + 9;
      uint64_t seq = 1 + rowno / 1000;
      kv_cell mark = {key, klen, (const uint8_t *)"", 0, load_ts, seq, KV_PUT,
                      (const uint8_t *)"", 0};
      assert_int_equal(kv_sf_writer_add(wk, &mark), KV_OK);
      for (int q = 0; q < NREAD; q++) {
        uint8_t qual = (uint8_t)(q + 1), val[8];
        kv_cell c = {key, klen, &qual, 1, load_ts, seq, KV_PUT, val, 8};
        if (q == 10) {
          if (!r->wd[0]) continue;
          c.value = (const uint8_t *)r->wd;
          c.value_len = (uint32_t)strlen(r->wd);
        } else {
          if (isnan(r->v[q])) continue;
          encode_double(r->v[q], val);
        }
        assert_int_equal(kv_sf_writer_add(wr, &c), KV_OK);
        readings++;
      }
    }
  }
  kv_sf_props pr, pk;
  assert_int_equal(kv_sf_writer_finish(wr, &pr), KV_OK);
  assert_int_equal(kv_sf_writer_finish(wk, &pk), KV_OK);
  assert_int_equal(pk.rows, ARCHIVE_ROWS);
  assert_int_equal(pr.cells, readings);
  double per_row = (double)(pr.file_size + pk.file_size) / ARCHIVE_ROWS;
  fprintf(stderr,
          "[sf_size] readings file %llu B (%llu blocks, raw %llu B), key file %llu B: "
          "%.2f B/row (readings %.2f + key %.2f), %.2f B per stored reading; target <= 32\n",
          (unsigned long long)pr.file_size, (unsigned long long)pr.blocks,
          (unsigned long long)pr.raw_bytes, (unsigned long long)pk.file_size, per_row,
          (double)pr.file_size / ARCHIVE_ROWS, (double)pk.file_size / ARCHIVE_ROWS,
          (double)pr.file_size / (double)readings);
  assert_true(per_row <= 32.0);
  /* Read it back: rows, TEMP > 30 and TEMP NULL as the archive is known to hold. */
  kv_sf_reader *rd;
  assert_int_equal(kv_sf_open(env, "/db/readings.sf", &rd), KV_OK);
  kv_sf_io io = {0};
  kv_iter *it = kv_sf_iter_new(rd, &io);
  uint64_t rows = 0, hot = 0, temp_null = 0, cells = 0;
  uint8_t prow[64];      /* the previous row key (copied: cells move with blocks) */
  uint32_t prow_len = 0;
  int has_temp = 0;
  clock_t s0 = clock();
  for (it->ops->seek_first(it); it->ops->valid(it); it->ops->next(it)) {
    const kv_cell *c = it->ops->cell(it);
    cells++;
    if (c->row_len != prow_len || memcmp(c->row, prow, prow_len) != 0) {
      if (rows && !has_temp) temp_null++;
      rows++;
      has_temp = 0;
      assert_true(c->row_len <= sizeof prow);
      memcpy(prow, c->row, c->row_len);
      prow_len = c->row_len;
    }
    if (c->qual[0] == 7) {
      has_temp = 1;
      assert_int_equal(c->value_len, 8);
      hot += decode_double(c->value) > 30.0;
    }
  }
  if (rows && !has_temp) temp_null++;
  double secs = (double)(clock() - s0) / CLOCKS_PER_SEC;
  assert_int_equal(it->ops->status(it), KV_OK);
  assert_int_equal(cells, readings);
  assert_int_equal(rows, ARCHIVE_ROWS);  /* every row has at least one reading */
  assert_int_equal(hot, 25587);
  assert_int_equal(temp_null, 398);
  fprintf(stderr, "[sf_size] scan: %llu cells, %llu blocks, %.1f M rows/s (cell by cell); "
          "total test time %.2f s\n", (unsigned long long)cells,
          (unsigned long long)io.blocks_read, secs > 0 ? (double)rows / secs / 1e6 : 0.0,
          (double)(clock() - t0) / CLOCKS_PER_SEC);
  it->ops->destroy(it);
  kv_sf_close(rd);
  kv_env_free(env);
  for (int i = 0; i < NSTATIONS; i++) free(st[i].rows);
  free(st);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_archive_size),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
