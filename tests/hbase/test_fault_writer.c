/*
** tests/hbase/test_fault_writer.c SOURCE_DIR ROWAN_SHELL: a writer of an indexed table on
** HBase killed with SIGKILL between the row writes of its batch (issue 18's fault tests), and
** what the next connection finds. The writer is this program run again as a child
** (`--writer MODE URI`) with the HBase backend's test hook ROWAN_HBASE_KILL_AFTER_ROWS=N
** (docs/HBASE.md, "Test hooks"): the backend writes N rows, then raises SIGKILL. The child
** prints each statement the C API acknowledged (rowan_step returned ROWAN_DONE) on its
** stdout, which the parent reads. Label `hbase`; the gateway from ROWAN_HBASE_THRIFT.
** Table T (K VARCHAR PRIMARY KEY, V INTEGER, W VARCHAR) over two regions with a global
** index IX ON T (V) INCLUDE (W), 200 rows (V = i, W = 'w' || V) to begin with.
** - autocommit: UPSERTs, each one statement (new rows, and updates that move a row's index
**   entry), killed inside the 22nd statement (after its first step of the PHOENIX-5156
**   protocol: its index rows UNVERIFIED, its data row not written);
** - a transaction: 300 UPSERTs (150 updates, 150 new rows) then COMMIT, killed in the middle
**   of the commit's data rows (its second step: 120 of 300 written, by 4 writer connections
**   at once, ROWAN_HBASE_WRITERS=4: 30 rows each).
** After each: the child died of SIGKILL; a fresh connection finds every acknowledged row
** with its acknowledged values; every row whole (W = 'w' || V: per-row atomicity); CHECK
** INDEX reports no MISSING, EXTRA or MISMATCHED row and counts UNVERIFIED ones apart (the
** cut left some); the same queries through the index and through the table agree (the index
** scans repair what they meet); then CHECK INDEX and the shell's `.check` are clean and no
** row is UNVERIFIED any more.
** Not here: the gateway killed (test_fault_gateway.c, test_fault_batch.c).
*/
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "fault_util.h"
#include "kv/backend/hbase/backend_hbase.h"
#include "rowan.h"

static const char *self = "hbase_test_fault_writer", *rowan_shell = "rowan";
static char uri[400];

#define NKEYS 3000 /* keys k00000 .. k02999 */
/* the model: a row's V (-1: absent); rows whose last write was cut: either value */
static int model[NKEYS], maybe[NKEYS];


static rowan_db *open_db(void) {
  rowan_db *db = NULL;
  if (rowan_open(uri, NULL, &db) != ROWAN_OK) fail_msg("rowan_open(%s): %s", uri, rowan_errmsg(db));
  return db;
}

/* ---- The writer (the child) ------------------------------------------------------------ */
/* One UPSERT of (key k, V v, W 'w' || v); prints "k v" once acknowledged. */
static int upsert(rowan_db *db, rowan_stmt *st, int k, int v, bool ack) {
  char key[16], w[16];
  snprintf(key, sizeof key, "k%05d", k);
  snprintf(w, sizeof w, "w%d", v);
  rowan_bind_text(st, 1, key, -1);
  rowan_bind_int64(st, 2, v);
  rowan_bind_text(st, 3, w, -1);
  if (rowan_step(st) != ROWAN_DONE) {
    fprintf(stderr, "writer: %s\n", rowan_errmsg(db));
    return 1;
  }
  rowan_reset(st);
  if (ack) {
    char line[40];
    int n = snprintf(line, sizeof line, "%d %d\n", k, v);
    if (write(1, line, (size_t)n) != n) return 1;
  }
  return 0;
}

/* MODE a: autocommit UPSERTs, new rows (k01000 + j, V 5000 + j) and updates of the first
** rows (k0000j, V 6000 + j) in turn; MODE t: one transaction of 150 updates (k00050 + j,
** V 8000 + j) and 150 new rows (k02000 + j, V 7000 + j), acknowledged at its COMMIT. */
static int writer(const char *mode, const char *u) {
  rowan_db *db = NULL;
  if (rowan_open(u, NULL, &db) != ROWAN_OK) return 1;
  rowan_stmt *st = NULL;
  if (rowan_prepare(db, "UPSERT INTO T VALUES (?, ?, ?)", -1, &st, NULL) != ROWAN_OK) return 1;
  if (mode[0] == 'a') {
    for (int j = 0; j < 100; j++)
      if (upsert(db, st, 1000 + j, 5000 + j, true) || upsert(db, st, j, 6000 + j, true)) return 1;
  } else {
    if (rowan_exec(db, "BEGIN", NULL, NULL) != ROWAN_OK) return 1;
    for (int j = 0; j < 150; j++)
      if (upsert(db, st, 50 + j, 8000 + j, false) || upsert(db, st, 2000 + j, 7000 + j, false))
        return 1;
    if (rowan_exec(db, "COMMIT", NULL, NULL) != ROWAN_OK) return 1;
    for (int j = 0; j < 150; j++) printf("%d %d\n%d %d\n", 50 + j, 8000 + j, 2000 + j, 7000 + j);
  }
  rowan_finalize(st);
  rowan_close(db);
  return 0;
}

/* ---- The parent ------------------------------------------------------------------------ */
/* Run the writer with the hook at kill_after rows; apply its acknowledgements to the model;
** the rows of `cut_keys` (the statement cut) may hold either value. */
static void run_writer(const char *mode, long kill_after, int *acks) {
  int p[2];
  if (pipe(p)) fail_msg("pipe: %s", strerror(errno));
  char n[32];
  snprintf(n, sizeof n, "%ld", kill_after);
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) fail_msg("fork: %s", strerror(errno));
  if (pid == 0) {
    dup2(p[1], 1);
    close(p[0]), close(p[1]);
    setenv("ROWAN_HBASE_KILL_AFTER_ROWS", n, 1);
    setenv("ROWAN_HBASE_WRITERS", "4", 1); /* the commit's 300 rows on 4 connections */
    execl(self, self, "--writer", mode, uri, (char *)NULL);
    _exit(127);
  }
  close(p[1]);
  FILE *f = fdopen(p[0], "r");
  int k, v;
  *acks = 0;
  while (fscanf(f, "%d %d", &k, &v) == 2) {
    assert_true(k >= 0 && k < NKEYS);
    model[k] = v;
    maybe[k] = -1;
    (*acks)++;
  }
  fclose(f);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL)
    fail_msg("the writer (%s, hook at %ld rows) was not killed: status %d", mode, kill_after,
             status);
}


/* The rows of a query (K, V, W) as "K V" lines in one string (the caller frees); each row
** must be whole (W = 'w' || V). */
static char *rows_of(rowan_db *db, const char *sql, int *count) {
  rowan_stmt *st = NULL;
  if (rowan_prepare(db, sql, -1, &st, NULL) != ROWAN_OK) fail_msg("%s: %s", sql, rowan_errmsg(db));
  size_t cap = 1 << 16, len = 0;
  char *out = malloc(cap);
  assert_non_null(out);
  *count = 0;
  int rc;
  while ((rc = rowan_step(st)) == ROWAN_ROW) {
    const char *k = rowan_column_text(st, 0), *w = rowan_column_text(st, 2);
    long long v = rowan_column_int64(st, 1);
    char want[24];
    snprintf(want, sizeof want, "w%lld", v);
    if (!w || strcmp(w, want)) fail_msg("%s: row %s is not whole: V %lld, W %s", sql, k, v, w);
    if (len + 64 > cap) assert_non_null(out = realloc(out, cap *= 2));
    len += (size_t)snprintf(out + len, cap - len, "%s %lld\n", k, v);
    (*count)++;
  }
  if (rc != ROWAN_DONE) fail_msg("%s: %s", sql, rowan_errmsg(db));
  rowan_finalize(st);
  return out;
}

/* What a fresh connection must find after a cut. */
static void check_after_cut(const char *what) {
  rowan_db *db = open_db();
  int64_t unverified = 0;
  int64_t problems = fu_check_index(db, "IX", "T", &unverified, NULL, NULL);
  printf("# %s: CHECK INDEX before any read: %lld problems, %lld unverified\n", what,
         (long long)problems, (long long)unverified);
  assert_int_equal(problems, 0);
  if (unverified == 0) fail_msg("%s: the cut left no UNVERIFIED index row: not inside a batch", what);
  /* the table through its key: the model, each row whole */
  int nt = 0, ni = 0;
  char *t = rows_of(db, "SELECT /*+ NO_INDEX */ K, V, W FROM T ORDER BY K", &nt);
  int expect = 0;
  const char *p = t;
  for (int k = 0; k < NKEYS; k++) {
    char key[16];
    snprintf(key, sizeof key, "k%05d", k);
    bool here = !strncmp(p, key, 6) && p[6] == ' ';
    int v = here ? atoi(p + 7) : -1;
    if (v != model[k] && (maybe[k] < 0 || v != maybe[k]))
      fail_msg("%s: %s has V %d, want %d (or %d)", what, key, v, model[k], maybe[k]);
    if (maybe[k] >= 0) model[k] = v; /* settled now */
    maybe[k] = -1;
    if (here) p = strchr(p, '\n') + 1;
    if (model[k] >= 0) expect++;
  }
  assert_int_equal(nt, expect);
  /* the same rows through the index (its scan repairs the UNVERIFIED rows it meets) */
  char *i = rows_of(db, "SELECT /*+ INDEX(T IX) */ K, V, W FROM T WHERE V >= 0 ORDER BY K", &ni);
  assert_int_equal(ni, nt);
  assert_string_equal(i, t);
  free(i);
  /* a range of V both ways */
  const char *r1 = "SELECT /*+ INDEX(T IX) */ K, V, W FROM T WHERE V BETWEEN 5000 AND 8100 ORDER BY V";
  const char *r2 = "SELECT /*+ NO_INDEX */ K, V, W FROM T WHERE V BETWEEN 5000 AND 8100 ORDER BY V";
  char *a = rows_of(db, r1, &ni), *b = rows_of(db, r2, &nt);
  assert_int_equal(ni, nt);
  assert_string_equal(a, b);
  free(a), free(b), free(t);
  assert_int_equal(fu_check_index(db, "IX", "T", &unverified, NULL, NULL), 0);
  assert_int_equal(unverified, 0);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  /* the shell's .check: its exit status is non-zero when the index has problems */
  char cmd[1200];
  snprintf(cmd, sizeof cmd, "echo '.check IX T' | '%s' '%s' >/dev/null", rowan_shell, uri);
  assert_int_equal(system(cmd), 0);
}

static void test_writer_killed(void **state) {
  (void)state;
  rowan_db *db = open_db();
  fu_exec_ok(db, "CREATE TABLE T (K VARCHAR PRIMARY KEY, V INTEGER, W VARCHAR) SPLIT ON ('k00100')");
  fu_exec_ok(db, "CREATE INDEX IX ON T (V) INCLUDE (W)");
  fu_exec_ok(db, "BEGIN");
  for (int k = 0; k < NKEYS; k++) model[k] = maybe[k] = -1;
  for (int k = 0; k < 200; k++) {
    char sql[120];
    snprintf(sql, sizeof sql, "UPSERT INTO T VALUES ('k%05d', %d, 'w%d')", k, k, k);
    fu_exec_ok(db, sql);
    model[k] = k;
  }
  fu_exec_ok(db, "COMMIT");
  assert_int_equal(rowan_close(db), ROWAN_OK);

  /* autocommit: a new row is 3 row writes (index row UNVERIFIED, data row, index row
  ** VERIFIED), an update that moves its index entry 5 (2 + 1 + 2); 10 pairs and a new row
  ** are 83; 85 cuts the 22nd statement (the update of k00010) after its first step */
  int acks = 0;
  maybe[1010] = 5010;
  maybe[10] = 6010;
  run_writer("a", 85, &acks);
  printf("# autocommit writer: %d statements acknowledged\n", acks);
  assert_true(acks >= 20);
  check_after_cut("autocommit");

  /* a transaction: its commit writes 150 + 2 * 150 index rows UNVERIFIED, then the 300 data
  ** rows (the updates' keys first): cut after 120 of them */
  for (int j = 0; j < 150; j++) maybe[50 + j] = 8000 + j, maybe[2000 + j] = 7000 + j;
  run_writer("t", 450 + 120, &acks);
  assert_int_equal(acks, 0);
  check_after_cut("transaction");
  int changed = 0;
  for (int j = 0; j < 150; j++) changed += model[50 + j] == 8000 + j;
  printf("# transaction: %d of its 150 updates were written before the kill\n", changed);
  assert_true(changed > 0 && changed < 150); /* the cut was inside the data rows */
  assert_int_equal(kv_backend_hbase_drop_namespace(uri), KV_OK);
}

int main(int argc, char **argv) {
  if (argc == 4 && !strcmp(argv[1], "--writer")) return writer(argv[2], argv[3]);
  self = argv[0];
  if (argc > 2) rowan_shell = argv[2];
  setvbuf(stdout, NULL, _IONBF, 0);
  snprintf(uri, sizeof uri, "hbase://%s/tfw_%ld", fu_gateway(), (long)getpid());
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_writer_killed)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
