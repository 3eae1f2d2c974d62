/*
** tests/cli/test_archive.c: the real Beijing archive (data/beijing/) loaded by the example
** scripts themselves (examples/sensor/schema.sql and load.sql) into an in-memory database,
** checked against the source files read by this test's own code.
**
** A small runner (tests/cli/tu_script.h) executes the scripts as the shell does. The test then reads the
** 12 gzip'ed CSV files itself (zlib, a plain split: the archive has no quoted delimiters)
** and checks: the row count (420,768), hours with TEMP > 30 (25,587, SQLite's count on the
** same data), TEMP NULL count (398), sampled readings (every field of every 499th row of
** each file, by point lookup on (STATION, TS)), and the META family (12 stations, with the
** coordinates of the station list, Changping under 'pingchang_aq').
**
** ROWAN_TEST_SCALE < 1 (the sanitizer run) loads fewer files (at least one); the fixed
** figures above are asserted only when all 12 are loaded, the self-computed ones always.
*/
#include <glob.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <zlib.h>

#include "cli/import.h"
#include "kv/env/env_mem.h"
#include "rowan.h"
#include "testutil.h"
#include "tu_script.h"

#define MAX_FILES 12
#define SAMPLE_EVERY 499

/* ---- the source files, read by this test ------------------------------------------ */

typedef struct truth {
  int64_t rows;        /* data rows */
  int64_t temp_hot;    /* TEMP > 30 */
  int64_t temp_null;   /* TEMP NA */
  int64_t checked;     /* sampled rows compared */
} truth;

static int64_t days_from_civil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2;
  int64_t era = (y >= 0 ? y : y - 399) / 400;
  int64_t yoe = y - era * 400;
  int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

/* Split a line of the archive into fields (quotes stripped); returns the count. */
static int split(char *line, char **f, int max) {
  int n = 0;
  char *p = line;
  for (;;) {
    char *e = strchr(p, ',');
    if (e) *e = 0;
    size_t l = strlen(p);
    while (l && (p[l - 1] == '\n' || p[l - 1] == '\r')) p[--l] = 0;
    if (l >= 2 && p[0] == '"' && p[l - 1] == '"') {
      p[l - 1] = 0;
      p++;
    }
    if (n < max) f[n++] = p;
    if (!e) break;
    p = e + 1;
  }
  return n;
}

/* Compare one sampled row with the database. Columns of the file: No, year, month, day,
** hour, PM2.5, PM10, SO2, NO2, CO, O3, TEMP, PRES, DEWP, RAIN, wd, WSPM, station. */
static void check_row(rowan_stmt *st, char **f) {
  int64_t days = days_from_civil(atoll(f[1]), atoll(f[2]), atoll(f[3]));
  int64_t ts = (days * 24 + atoll(f[4])) * 3600000;
  assert_int_equal(rowan_reset(st), ROWAN_OK);
  assert_int_equal(rowan_bind_text(st, 1, f[17], -1), ROWAN_OK);
  assert_int_equal(rowan_bind_timestamp(st, 2, ts), ROWAN_OK);
  assert_int_equal(rowan_step(st), ROWAN_ROW);
  static const int file_col[12] = {5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  for (int c = 0; c < 12; c++) {
    const char *want = f[file_col[c]];
    if (strcmp(want, "NA") == 0) {
      if (rowan_column_type(st, c) != ROWAN_NULL)
        fprintf(stderr, "%s No %s: column %d should be NULL\n", f[17], f[0], c);
      assert_int_equal(rowan_column_type(st, c), ROWAN_NULL);
    } else if (c == 10) { /* WD: text */
      assert_string_equal(rowan_column_text(st, c), want);
    } else {
      double w = strtod(want, NULL), got = rowan_column_double(st, c);
      if (w != got) fprintf(stderr, "%s No %s: column %d is %.17g, file has %s\n", f[17], f[0],
                            c, got, want);
      assert_true(w == got);
    }
  }
  assert_int_equal(rowan_step(st), ROWAN_DONE);
}

static void read_truth(rowan_db *db, char **files, int n, truth *t) {
  memset(t, 0, sizeof *t);
  rowan_stmt *st = NULL;
  assert_int_equal(rowan_prepare(db, "SELECT PM25, PM10, SO2, NO2, CO, O3, TEMP, PRES, DEWP, "
                                     "RAIN, WD, WSPM FROM SENSOR WHERE STATION = ? AND TS = ?",
                                 -1, &st, NULL),
                   ROWAN_OK);
  char line[1024];
  char *f[32];
  for (int i = 0; i < n; i++) {
    gzFile gz = gzopen(files[i], "rb");
    assert_non_null(gz);
    assert_non_null(gzgets(gz, line, sizeof line)); /* header */
    int64_t k = 0;
    while (gzgets(gz, line, sizeof line)) {
      assert_int_equal(split(line, f, 32), 18);
      t->rows++;
      if (strcmp(f[11], "NA") == 0) t->temp_null++;
      else if (strtod(f[11], NULL) > 30.0) t->temp_hot++;
      if (k++ % SAMPLE_EVERY == 0) {
        check_row(st, f);
        t->checked++;
      }
    }
    gzclose(gz);
  }
  rowan_finalize(st);
}

static int64_t count_of(rowan_db *db, const char *sql) {
  rowan_stmt *st = NULL;
  assert_int_equal(rowan_prepare(db, sql, -1, &st, NULL), ROWAN_OK);
  assert_int_equal(rowan_step(st), ROWAN_ROW);
  int64_t n = rowan_column_int64(st, 0);
  rowan_finalize(st);
  return n;
}

/* ---- the test ---------------------------------------------------------------------- */

static void archive(void **state) {
  (void)state;
  const char *src = getenv("ROWAN_SOURCE_DIR");
  assert_non_null(src);
  assert_int_equal(chdir(src), 0);
  n_files_wanted = (int)tu_scaled(MAX_FILES, 1);
  if (n_files_wanted > MAX_FILES) n_files_wanted = MAX_FILES;

  kv_env *env = kv_env_mem_new(0);
  assert_non_null(env);
  rowan_options o;
  rowan_options_init(&o);
  o.kv_env = env;
  rowan_db *db = NULL;
  assert_int_equal(rowan_open("sensor", &o, &db), ROWAN_OK);
  run_script(db, "examples/sensor/schema.sql");
  run_script(db, "examples/sensor/load.sql");

  glob_t g;
  assert_int_equal(glob("data/beijing/PRSA_Data_*.csv.gz", 0, NULL, &g), 0);
  assert_int_equal(g.gl_pathc, MAX_FILES);
  truth t;
  read_truth(db, g.gl_pathv, n_files_wanted, &t);
  globfree(&g);
  fprintf(stderr, "[archive] %d files, %lld rows, %lld hot, %lld NULL TEMP, %lld sampled\n",
          n_files_wanted, (long long)t.rows, (long long)t.temp_hot, (long long)t.temp_null,
          (long long)t.checked);

  /* load.sql writes META for all 12 stations: in a scaled-down run the stations whose file
     was not loaded get a row holding META alone (TEMP NULL). */
  int64_t extra = MAX_FILES - n_files_wanted;
  assert_int_equal(count_of(db, "SELECT COUNT(*) FROM SENSOR"), t.rows + extra);
  assert_int_equal(count_of(db, "SELECT COUNT(*) FROM SENSOR WHERE TEMP > 30"), t.temp_hot);
  assert_int_equal(count_of(db, "SELECT COUNT(*) FROM SENSOR WHERE TEMP IS NULL"),
                   t.temp_null + extra);
  assert_int_equal(count_of(db, "SELECT COUNT(*) FROM SENSOR WHERE STATION = 'Dongsi' AND "
                                "TS >= TIMESTAMP '2016-07-01 00:00:00' AND "
                                "TS < TIMESTAMP '2016-07-02 00:00:00'"),
                   n_files_wanted >= 4 ? 24 : 0); /* Dongsi is the 4th file */
  if (n_files_wanted == MAX_FILES) {
    assert_int_equal(t.rows, 420768);
    assert_int_equal(t.temp_hot, 25587);
    assert_int_equal(t.temp_null, 398);
  }

  /* META: one row per loaded station, in its latest reading's row, coordinates as listed. */
  assert_int_equal(count_of(db, "SELECT COUNT(*) FROM SENSOR WHERE LATITUDE IS NOT NULL"), 12);
  assert_int_equal(count_of(db, "SELECT COUNT(*) FROM SENSOR WHERE LATITUDE IS NOT NULL AND "
                                "TS = TIMESTAMP '2017-02-28 23:00:00'"), 12);
  gzFile gz = gzopen("data/beijing/Beijing_AirQuality_Stations.csv.gz", "rb");
  assert_non_null(gz);
  char line[512];
  char *f[8];
  int matched = 0;
  rowan_stmt *st = NULL;
  assert_int_equal(rowan_prepare(db, "SELECT LONGITUDE, LATITUDE, TYPE FROM SENSOR WHERE "
                                     "STATION = ? AND TS = TIMESTAMP '2017-02-28 23:00:00'",
                                 -1, &st, NULL),
                   ROWAN_OK);
  while (gzgets(gz, line, sizeof line)) {
    if (split(line, f, 8) != 4) continue;
    const char *name = NULL;
    if (strcmp(f[0], "pingchang_aq") == 0) name = "Changping";
    else if (strcmp(f[0], "dongsi_aq") == 0) name = "Dongsi";
    else if (strcmp(f[0], "aotizhongxin_aq") == 0) name = "Aotizhongxin";
    if (!name) continue;
    rowan_reset(st);
    rowan_bind_text(st, 1, name, -1);
    assert_int_equal(rowan_step(st), ROWAN_ROW);
    assert_true(rowan_column_double(st, 0) == strtod(f[1], NULL));
    assert_true(rowan_column_double(st, 1) == strtod(f[2], NULL));
    assert_string_equal(rowan_column_text(st, 2), f[3]);
    matched++;
  }
  gzclose(gz);
  rowan_finalize(st);
  assert_int_equal(matched, 3);
  assert_int_equal(count_of(db, "SELECT COUNT(*) FROM SENSOR WHERE STATION = 'Changping' AND "
                                "LATITUDE IS NOT NULL"), 1);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  kv_env_free(env);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(archive)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
