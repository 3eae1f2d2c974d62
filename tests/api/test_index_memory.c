/*
** tests/api/test_index_memory.c: rowan_options.index_memory through the public API, on a
** database on disk (paged block indexes need mapped store files; the in-memory env keeps
** whole indexes). A table of two families with small blocks gets three store files per
** family; reopened with index_memory = 1 every file is opened past the bound, and
** rowan_table_layout says so (paged_files = store_files, less memory held than the whole
** indexes); reopened with no bound (SIZE_MAX) or the default none is paged. Every reopen
** answers the same point lookups (present and absent), a range, a reverse LIMIT read and
** aggregates (grouped, filtered, over a key range); files written while paged (a flush, a
** major compaction) are opened paged as well and the answers stay the same.
** Not here: the paged index itself (tests/kv/test_sf_index_pages.c), the layout's blocks
** (tests/api/test_keymap.c).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "rowan.h"
#include "tu_api.h"

#define HOURS 600 /* rows per station and file */

static const char *const stations[] = {"Aa", "Bb", "Cc", "Dd"};

/* Hours [h0, h1) of every station (a third file's rows overwrite some of the first's). */
static void fill(rowan_db *db, int h0, int h1) {
  char sql[256];
  exec_ok(db, "BEGIN");
  for (int s = 0; s < 4; s++)
    for (int h = h0; h < h1; h++) {
      snprintf(sql, sizeof sql,
               "UPSERT INTO S (STATION, TS, TEMP, NOTE, LAT) VALUES ('%s', TIMESTAMP "
               "'2020-01-01 00:00:00' + %d / 24.0, %d, 'n%d', %d.5)",
               stations[s], h, (h * 7 + s) % 41, h % 13, s);
      exec_ok(db, sql);
    }
  exec_ok(db, "COMMIT");
}

static rowan_db *open_with(const char *dir, size_t index_memory) {
  rowan_options o;
  rowan_options_init(&o);
  o.sync_mode = ROWAN_SYNC_OFF;
  o.index_memory = index_memory;
  rowan_db *db = NULL;
  assert_int_equal(rowan_open(dir, &o, &db), ROWAN_OK);
  return db;
}

/* Every row of every query below, as text, appended to out (cap bytes). */
static void answers(rowan_db *db, char *out, size_t cap) {
  static const char *const qs[] = {
      "SELECT * FROM S WHERE STATION = 'Bb' AND TS = TIMESTAMP '2020-01-10 05:00:00'",
      "SELECT * FROM S WHERE STATION = 'Cc' AND TS = TIMESTAMP '2020-02-20 23:00:00'",
      "SELECT * FROM S WHERE STATION = 'Zz' AND TS = TIMESTAMP '2020-01-10 05:00:00'",
      "SELECT STATION, TS, TEMP FROM S WHERE STATION = 'Dd' AND TS >= TIMESTAMP "
      "'2020-01-20 00:00:00' AND TS < TIMESTAMP '2020-01-21 00:00:00'",
      "SELECT STATION, TS, TEMP FROM S WHERE STATION = 'Aa' ORDER BY TS DESC LIMIT 7",
      "SELECT STATION, COUNT(*), SUM(TEMP), MIN(NOTE), MAX(LAT) FROM S GROUP BY STATION",
      "SELECT COUNT(*) FROM S WHERE TEMP > 30",
      "SELECT COUNT(*), SUM(TEMP) FROM S WHERE TS >= TIMESTAMP '2020-01-15 00:00:00' AND TS < "
      "TIMESTAMP '2020-01-16 00:00:00'",
  };
  size_t at = strlen(out);
  for (size_t q = 0; q < sizeof qs / sizeof *qs; q++) {
    rowan_stmt *st = NULL;
    assert_int_equal(rowan_prepare(db, qs[q], -1, &st, NULL), ROWAN_OK);
    int rc;
    while ((rc = rowan_step(st)) == ROWAN_ROW) {
      for (int c = 0; c < rowan_column_count(st); c++) {
        const char *t = (const char *)rowan_column_text(st, c);
        int n = snprintf(out + at, cap - at, "%s|", t ? t : "NULL");
        assert_true(n > 0 && (size_t)n < cap - at);
        at += (size_t)n;
      }
      assert_true(at + 1 < cap);
      out[at++] = '\n';
      out[at] = 0;
    }
    assert_int_equal(rc, ROWAN_DONE);
    assert_int_equal(rowan_finalize(st), ROWAN_OK);
  }
}

/* The layout's R family: store files, paged files and the memory they hold. */
static void family_r(rowan_db *db, uint64_t *files, uint64_t *paged, uint64_t *bytes) {
  rowan_layout *l = NULL;
  assert_int_equal(rowan_table_layout(db, "S", &l), ROWAN_OK);
  bool found = false;
  for (int f = 0; f < l->n_families; f++) {
    assert_true(l->families[f].paged_files <= l->families[f].store_files);
    if (strcmp(l->families[f].name, "R") != 0) continue;
    *files = l->families[f].store_files;
    *paged = l->families[f].paged_files;
    *bytes = l->families[f].index_bytes;
    found = true;
  }
  rowan_layout_free(l);
  assert_true(found);
}

/* The answers of db, which must be want. */
static void same_answers(rowan_db *db, const char *want) {
  static char got[1 << 16];
  got[0] = 0;
  answers(db, got, sizeof got);
  assert_string_equal(got, want);
}

static void test_index_memory(void **state) {
  (void)state;
  char dir[] = "/tmp/rowan_test_index_memory_XXXXXX"; /* mkdtemp's template */
  assert_non_null(mkdtemp(dir));
  rowan_db *db = open_with(dir, 0);
  exec_ok(db, "CREATE TABLE S (STATION VARCHAR NOT NULL, TS TIMESTAMP NOT NULL, R.TEMP DOUBLE,"
              " R.NOTE VARCHAR, M.LAT DOUBLE, CONSTRAINT PK PRIMARY KEY (STATION, TS))"
              " BLOCKSIZE = 512");
  fill(db, 0, HOURS);
  assert_int_equal(rowan_flush(db), ROWAN_OK);
  fill(db, HOURS, 2 * HOURS);
  assert_int_equal(rowan_flush(db), ROWAN_OK);
  fill(db, HOURS / 2, HOURS + HOURS / 2);
  assert_int_equal(rowan_flush(db), ROWAN_OK);
  static char want[1 << 16];
  want[0] = 0;
  answers(db, want, sizeof want);
  assert_non_null(strstr(want, "Bb|2020-01-10 05:00:00|"));
  uint64_t files, paged, whole_bytes, paged_bytes;
  family_r(db, &files, &paged, &whole_bytes);
  assert_int_equal(files, 3);
  assert_int_equal(paged, 0); /* the default bound holds these files whole */
  assert_int_equal(rowan_close(db), ROWAN_OK);

  /* one byte: every file is opened past the bound */
  db = open_with(dir, 1);
  family_r(db, &files, &paged, &paged_bytes);
  assert_int_equal(files, 3);
  assert_int_equal(paged, 3);
  assert_true(paged_bytes < whole_bytes);
  same_answers(db, want);
  same_answers(db, want); /* again, the pages now cached */
  /* a flush (four files: a minor compaction may merge them) and a major compaction while
     paged: the new files are paged too */
  exec_ok(db, "UPSERT INTO S (STATION, TS, TEMP, NOTE, LAT) VALUES ('Ee', TIMESTAMP "
              "'2021-01-01 00:00:00', 1, 'x', 2)");
  assert_int_equal(rowan_flush(db), ROWAN_OK);
  family_r(db, &files, &paged, &paged_bytes);
  assert_true(files >= 1 && files <= 4);
  assert_int_equal(paged, files);
  exec_ok(db, "DELETE FROM S WHERE STATION = 'Ee'");
  assert_int_equal(rowan_compact(db, 1), ROWAN_OK);
  family_r(db, &files, &paged, &paged_bytes);
  assert_int_equal(files, 1);
  assert_int_equal(paged, 1);
  same_answers(db, want);
  assert_int_equal(rowan_close(db), ROWAN_OK);

  /* no bound: whole again, the same answers */
  db = open_with(dir, SIZE_MAX);
  family_r(db, &files, &paged, &whole_bytes);
  assert_int_equal(files, 1);
  assert_int_equal(paged, 0);
  assert_true(paged_bytes < whole_bytes);
  same_answers(db, want);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  assert_int_equal(system(cmd), 0);
}

int main(void) {
  /* the bound alone decides here: scripts/test.sh's second pass pages every file
     (ROWAN_SF_PAGED_MIN=0, read once at the first open) */
  unsetenv("ROWAN_SF_PAGED_MIN");
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_index_memory),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
