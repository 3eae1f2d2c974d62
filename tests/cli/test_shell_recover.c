/*
** tests/cli/test_shell_recover.c: `rowan --recover DAMAGED NEW` as a user runs it, on the
** real disk: a sound database recovers to the same rows, schema and index (and says it
** found no damage); a database with a flipped byte in a store file and its MANIFEST removed
** recovers with the report naming both files, the damaged block's byte range and the cells
** it held, the rows of the other blocks back and the index passing .check; the refusals
** (a NEW that is not empty, a missing DAMAGED, a NEW whose parent folder is missing, wrong
** arguments) fail with exit status 1 and say why. Drives the built binary.
** Not here: the recovery's rules on every kind of damage (tests/api/test_recover.c,
** tests/kv/test_salvage.c).
*/
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <dirent.h>

#include "test_shell_util.h"

static sh_fixture *make(void) {
  char sql[200000];
  size_t n = (size_t)snprintf(sql, sizeof sql, "UPSERT INTO T VALUES ");
  for (int i = 0; i < 3000; i++)
    n += (size_t)snprintf(sql + n, sizeof sql - n, "%s(%d, 'name %d', %d.5)", i ? ", " : "", i,
                          i, i % 97);
  const char *cmds[] = {"CREATE TABLE T (K INTEGER PRIMARY KEY, NAME VARCHAR, W DOUBLE)",
                        "CREATE INDEX TW ON T (W) INCLUDE (NAME)", sql, NULL};
  return sh_fixture_new(cmds);
}

/* Run `rowan --recover f->db NEW` (NEW under f's directory); returns the status. */
static int recover(sh_fixture *f, const char *newname, sh_result *r) {
  char dst[700];
  snprintf(dst, sizeof dst, "%s/%s", f->dir, newname);
  const char *args[] = {"--recover", f->db, dst, NULL};
  return sh_run(f->dir, args, NULL, r);
}

/* Run SQL on NEW; its stdout. */
static char *on_new(sh_fixture *f, const char *newname, const char *sql) {
  char dst[700];
  snprintf(dst, sizeof dst, "%s/%s", f->dir, newname);
  const char *args[] = {"-list", dst, sql, NULL};
  sh_result r;
  sh_run(f->dir, args, NULL, &r);
  if (r.status != 0) sh_dump(&r);
  assert_int_equal(r.status, 0);
  free(r.err);
  return r.out;
}

static void test_sound(void **state) {
  (void)state;
  sh_fixture *f = make();
  assert_non_null(f);
  sh_result r;
  if (recover(f, "new", &r) != 0) sh_dump(&r);
  assert_int_equal(r.status, 0);
  assert_non_null(strstr(r.out, "no damage found"));
  assert_non_null(strstr(r.out, "table T: 3000 rows, 1 index built again and checked"));
  sh_result_free(&r);
  char *out = on_new(f, "new", "SELECT COUNT(*), SUM(K), SUM(W) FROM T");
  assert_string_equal(out, "3000|4498500|145185.0\n");
  free(out);
  out = on_new(f, "new", ".indexes");
  assert_string_equal(out, "TW ON T (W) INCLUDE (NAME)\n");
  free(out);
  out = on_new(f, "new", ".check TW T");
  assert_non_null(strstr(out, "MISSING|0"));
  free(out);
  /* NEW holds a database now: refused */
  assert_int_equal(recover(f, "new", &r), 1);
  assert_non_null(strstr(r.err, "not empty"));
  sh_result_free(&r);
  sh_fixture_free(f);
}

/* The largest store file of table T (its folder's TABLEINFO names "$t<n>.T"): the default
** family's, where the 3000 rows' names and weights are. */
static void biggest_sf(const char *db, char *out, size_t cap) {
  char cmd[800];
  snprintf(cmd, sizeof cmd,
           "ls -S $(dirname $(grep -l 't1[.]T' %s/data/*/TABLEINFO))/*/*.sf | head -1", db);
  FILE *p = popen(cmd, "r");
  assert_non_null(p);
  assert_non_null(fgets(out, (int)cap, p));
  pclose(p);
  out[strcspn(out, "\n")] = 0;
}

static void test_damaged(void **state) {
  (void)state;
  sh_fixture *f = make();
  assert_non_null(f);
  char sf[700], man[700];
  biggest_sf(f->db, sf, sizeof sf);
  FILE *fp = fopen(sf, "r+b");
  assert_non_null(fp);
  fseek(fp, 100, SEEK_SET); /* inside the first block */
  int c = fgetc(fp);
  fseek(fp, 100, SEEK_SET);
  fputc(c ^ 0x40, fp);
  fclose(fp);
  snprintf(man, sizeof man, "%s/MANIFEST", f->db);
  assert_int_equal(remove(man), 0);
  sh_result r;
  if (recover(f, "new", &r) != 0) sh_dump(&r);
  assert_int_equal(r.status, 0);
  assert_non_null(strstr(r.out, "could not be read"));
  assert_non_null(strstr(r.out, "MANIFEST: "));
  assert_non_null(strstr(r.out, "store file block: "));
  assert_non_null(strstr(r.out, strrchr(sf, '/') + 1));
  assert_non_null(strstr(r.out, "bytes 0.."));
  assert_non_null(strstr(r.out, "cells"));
  sh_result_free(&r);
  char *out = on_new(f, "new", "SELECT COUNT(*) FROM T");
  int n = atoi(out);
  free(out);
  assert_true(n == 3000); /* the markers are in another family: every row is there */
  out = on_new(f, "new", "SELECT COUNT(W) FROM T");
  int w = atoi(out);
  free(out);
  assert_true(w > 2000 && w < 3000); /* one block of values lost, the others back */
  out = on_new(f, "new", ".check TW T");
  assert_non_null(strstr(out, "MISSING|0"));
  assert_non_null(strstr(out, "EXTRA|0"));
  free(out);
  sh_fixture_free(f);
}

static void test_refusals(void **state) {
  (void)state;
  char *dir = sh_tmp_make();
  sh_result r;
  char missing[700], dst[700];
  snprintf(missing, sizeof missing, "%s/nothing", dir);
  snprintf(dst, sizeof dst, "%s/new", dir);
  const char *a1[] = {"--recover", missing, dst, NULL};
  assert_int_equal(sh_run(dir, a1, NULL, &r), 1);
  assert_non_null(strstr(r.err, "no store directory"));
  sh_result_free(&r);
  snprintf(dst, sizeof dst, "%s/no/such/new", dir);
  const char *a2[] = {"--recover", dir, dst, NULL};
  assert_int_equal(sh_run(dir, a2, NULL, &r), 1);
  assert_non_null(strstr(r.err, "parent directory does not exist"));
  sh_result_free(&r);
  const char *a3[] = {"--recover", dir, NULL};
  assert_int_equal(sh_run(dir, a3, NULL, &r), 1);
  assert_non_null(strstr(r.err, "usage: rowan --recover DAMAGED NEW"));
  sh_result_free(&r);
  sh_tmp_remove(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_sound),
      cmocka_unit_test(test_damaged),
      cmocka_unit_test(test_refusals),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
