/*
** tests/api/test_regress_kill9.c: crash safety of committed rows on a real directory. A
** child process writes batches of rows in a loop through the public API (sync full, small
** memstores so flushes and compactions run while it writes, a secondary index maintained in
** the same WAL batches, some batches through BEGIN ... COMMIT, some DELETEs), and reports
** each batch on a pipe only after its commit returned. The parent kills it with SIGKILL at a
** random moment, reopens the directory and checks: every acknowledged batch is there whole
** with the values written, every acknowledged delete is gone, the batch in flight is all
** there or not at all, nothing beyond it exists, and the index agrees with the table. The
** child also creates and drops small tables as it goes (DDL is a catalog write in the same
** WAL): an acknowledged CREATE TABLE and its row survive, an acknowledged DROP TABLE stays
** dropped. The child then resumes on the same directory, for several rounds.
** Not here: power cuts that drop unsynced data (tests/kv/test_powercut.c, on the fault env).
*/
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "rowan.h"
#include "testutil.h"

#define MAX_BATCHES 4096 /* a child never writes more batches than this in one run */
#define MAX_ROWS 40      /* rows per batch at most */

/* What the parent knows of each batch. */
typedef struct batch_state {
  int rows;      /* rows written by the batch (0: never started) */
  bool acked;    /* the child's commit returned ROWAN_OK */
  bool deleted;  /* an acknowledged DELETE removed the batch */
  bool del_sent; /* a DELETE of the batch may be in flight */
  bool tab_acked; /* table X<b> was created and its row written (acknowledged) */
  bool tab_sent;  /* CREATE TABLE X<b> may be in flight */
  bool drop_acked; /* DROP TABLE X<b> returned */
  bool drop_sent;  /* DROP TABLE X<b> may be in flight */
} batch_state;

static batch_state g_batches[MAX_BATCHES * 16]; /* indexed by batch number */

static void die(rowan_db *db, const char *what, int rc) {
  fprintf(stderr, "child: %s: %s %s\n", what, rowan_errstr(rc), db ? rowan_errmsg(db) : "");
  _exit(3);
}

/* Rows of batch b: its row count follows from b, so the parent knows it before the ack. */
static int rows_of(int b) { return 1 + (int)((unsigned)b * 7919u % MAX_ROWS); }

static void child_exec(rowan_db *db, const char *sql) {
  int rc = rowan_exec(db, sql, NULL, NULL);
  if (rc != ROWAN_OK) die(db, sql, rc);
}

/* The child: write batches first..first+MAX_BATCHES, acknowledging each on fd. A process
** crash loses nothing acknowledged in sync modes full and normal (kv/kv.h). */
static void child_run(const char *dir, int first, int fd, uint64_t seed, int sync_mode) {
  rowan_options o;
  rowan_options_init(&o);
  o.sync_mode = sync_mode;
  o.memstore_size = 96 << 10;
  rowan_db *db = NULL;
  int rc = rowan_open(dir, &o, &db);
  if (rc != ROWAN_OK) die(db, "open", rc);
  if (first == 0) {
    child_exec(db, "CREATE TABLE IF NOT EXISTS C (B INTEGER NOT NULL, I INTEGER NOT NULL, "
                   "V VARCHAR, W DOUBLE, M.X BIGINT, CONSTRAINT PK PRIMARY KEY (B, I))");
    child_exec(db, "CREATE INDEX IF NOT EXISTS CV ON C (V) INCLUDE (W)");
    if (write(fd, "R\n", 2) != 2) _exit(4);
  }
  static char sql[MAX_ROWS * 160 + 256];
  for (int b = first; b < first + MAX_BATCHES; b++) {
    uint64_t r = tu_rand(&seed);
    int n = rows_of(b);
    bool txn = r % 4 == 0;
    size_t len = 0;
    if (txn) child_exec(db, "BEGIN");
    len = (size_t)snprintf(sql, sizeof sql, "UPSERT INTO C (B, I, V, W, M.X) VALUES ");
    for (int i = 0; i < n; i++) {
      if (txn && i > 0 && i % 8 == 0) {
        sql[len - 1] = 0; /* the trailing comma */
        child_exec(db, sql);
        len = (size_t)snprintf(sql, sizeof sql, "UPSERT INTO C (B, I, V, W, M.X) VALUES ");
      }
      len += (size_t)snprintf(sql + len, sizeof sql - len,
                              "(%d, %d, 'row %d/%d padding padding padding padding', %d.25, "
                              "%lld),",
                              b, i, b, i, b * 100 + i, (long long)b * 1000003LL * (i + 1));
    }
    sql[len - 1] = 0;
    child_exec(db, sql);
    if (txn) child_exec(db, "COMMIT");
    char ack[64];
    int an = snprintf(ack, sizeof ack, "A %d\n", b);
    if (write(fd, ack, (size_t)an) != an) _exit(4);
    if (b % 7 == 3) { /* a small table of its own */
      an = snprintf(ack, sizeof ack, "c %d\n", b);
      if (write(fd, ack, (size_t)an) != an) _exit(4);
      snprintf(sql, sizeof sql, "CREATE TABLE IF NOT EXISTS X%d (K INTEGER PRIMARY KEY, V VARCHAR); "
               "UPSERT INTO X%d VALUES (%d, 'table %d')", b, b, b, b);
      child_exec(db, sql);
      an = snprintf(ack, sizeof ack, "C %d\n", b);
      if (write(fd, ack, (size_t)an) != an) _exit(4);
    }
    if (b % 7 == 3 && b >= 21) { /* drop the table of three weeks ago */
      an = snprintf(ack, sizeof ack, "x %d\n", b - 21);
      if (write(fd, ack, (size_t)an) != an) _exit(4);
      snprintf(sql, sizeof sql, "DROP TABLE IF EXISTS X%d", b - 21);
      child_exec(db, sql);
      an = snprintf(ack, sizeof ack, "X %d\n", b - 21);
      if (write(fd, ack, (size_t)an) != an) _exit(4);
    }
    if (b >= 5 && r % 5 == 1) { /* delete an older batch */
      int victim = b - 5;
      an = snprintf(ack, sizeof ack, "S %d\n", victim);
      if (write(fd, ack, (size_t)an) != an) _exit(4);
      snprintf(sql, sizeof sql, "DELETE FROM C WHERE B = %d", victim);
      child_exec(db, sql);
      an = snprintf(ack, sizeof ack, "D %d\n", victim);
      if (write(fd, ack, (size_t)an) != an) _exit(4);
    }
  }
  rowan_close(db);
  _exit(0);
}

/* Record one acknowledgement line from the child; true for a batch ack ("A b"). */
static bool take_ack(const char *line) {
  int b = 0;
  if (sscanf(line + 2, "%d", &b) != 1 || b < 0 || b >= MAX_BATCHES * 16) return false;
  batch_state *s = &g_batches[b];
  switch (line[0]) {
    case 'A': s->acked = true; return true;
    case 'S': s->del_sent = true; break;
    case 'D': s->deleted = true; break;
    case 'c': s->tab_sent = true; break;
    case 'C': s->tab_acked = true; break;
    case 'x': s->drop_sent = true; break;
    case 'X': s->drop_acked = true; break;
    default: break;
  }
  return false;
}

/* The row count of table X<b>, or -1 if the table does not exist. */
static int64_t side_table_rows(rowan_db *db, int b) {
  char sql[96];
  snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM X%d WHERE V = 'table %d'", b, b);
  rowan_stmt *st = NULL;
  int rc = rowan_prepare(db, sql, -1, &st, NULL);
  if (rc != ROWAN_OK) {
    if (!strstr(rowan_errmsg(db), "unknown table")) {
      fprintf(stderr, "%s: %s\n", sql, rowan_errmsg(db));
      fail();
    }
    return -1;
  }
  assert_int_equal(rowan_step(st), ROWAN_ROW);
  int64_t n = rowan_column_int64(st, 0);
  assert_int_equal(rowan_step(st), ROWAN_DONE);
  rowan_finalize(st);
  return n;
}

static int64_t query_int(rowan_db *db, const char *sql) {
  rowan_stmt *st = NULL;
  int rc = rowan_prepare(db, sql, -1, &st, NULL);
  if (rc != ROWAN_OK) fprintf(stderr, "%s: %s\n", sql, rowan_errmsg(db));
  assert_int_equal(rc, ROWAN_OK);
  assert_int_equal(rowan_step(st), ROWAN_ROW);
  int64_t v = rowan_column_int64(st, 0);
  assert_int_equal(rowan_step(st), ROWAN_DONE);
  rowan_finalize(st);
  return v;
}

/* Check every batch against what was acknowledged; returns the next batch number to use. */
static int verify(const char *dir, int limit, uint64_t seed) {
  rowan_options o;
  rowan_options_init(&o);
  o.create_if_missing = 0;
  rowan_db *db = NULL;
  int rc = rowan_open(dir, &o, &db);
  if (rc != ROWAN_OK) fprintf(stderr, "reopen: %s (seed %llu)\n", db ? rowan_errmsg(db) : "?",
                              (unsigned long long)seed);
  assert_int_equal(rc, ROWAN_OK);
  rowan_stmt *st = NULL;
  assert_int_equal(rowan_prepare(db, "SELECT B, I, V, W, M.X FROM C", -1, &st, NULL), ROWAN_OK);
  static int seen[MAX_BATCHES * 16];
  memset(seen, 0, sizeof seen);
  int64_t total = 0;
  while ((rc = rowan_step(st)) == ROWAN_ROW) {
    int b = (int)rowan_column_int64(st, 0), i = (int)rowan_column_int64(st, 1);
    if (b < 0 || b >= limit) {
      fprintf(stderr, "row of batch %d never written (limit %d, seed %llu)\n", b, limit,
              (unsigned long long)seed);
      fail();
    }
    char want[96];
    snprintf(want, sizeof want, "row %d/%d padding padding padding padding", b, i);
    const char *v = rowan_column_text(st, 2);
    if (!v || strcmp(v, want) != 0 || rowan_column_double(st, 3) != b * 100 + i + 0.25 ||
        rowan_column_int64(st, 4) != (int64_t)b * 1000003LL * (i + 1)) {
      fprintf(stderr, "batch %d row %d has wrong values (v=%s, seed %llu)\n", b, i,
              v ? v : "NULL", (unsigned long long)seed);
      fail();
    }
    seen[b]++;
    total++;
  }
  assert_int_equal(rc, ROWAN_DONE);
  rowan_finalize(st);
  int next = 0;
  for (int b = 0; b < limit; b++) {
    batch_state *s = &g_batches[b];
    int n = rows_of(b);
    bool ok;
    if (s->deleted) ok = seen[b] == 0;
    else if (s->acked && s->del_sent) ok = seen[b] == 0 || seen[b] == n;
    else if (s->acked) ok = seen[b] == n;
    else ok = seen[b] == 0 || seen[b] == n; /* the batch in flight: all or nothing */
    if (!ok) {
      fprintf(stderr, "batch %d: %d rows after the crash, %d written, acked %d deleted %d "
                      "(seed %llu)\n", b, seen[b], n, s->acked, s->deleted,
              (unsigned long long)seed);
      fail();
    }
    if (seen[b] == n && !s->acked) s->acked = true; /* it made it: treat as committed */
    if (seen[b] == 0 && s->del_sent) s->deleted = true;
    if (s->acked || seen[b]) next = b + 1;
  }
  /* Side tables: an acknowledged CREATE (with its row) survives unless a DROP was sent; an
     acknowledged DROP stays dropped; one in flight is either way, but never half a table. */
  for (int b = 0; b < limit; b++) {
    batch_state *s = &g_batches[b];
    if (!s->tab_sent) continue;
    int64_t n = side_table_rows(db, b);
    bool ok;
    if (s->drop_acked) ok = n == -1;
    else if (s->drop_sent) ok = n == -1 || n == 1;
    else if (s->tab_acked) ok = n == 1;
    else ok = n == -1 || n == 0 || n == 1; /* CREATE and UPSERT are two statements */
    if (!ok) {
      fprintf(stderr, "table X%d: %lld rows after the crash (created %d, drop sent %d, dropped "
                      "%d, seed %llu)\n", b, (long long)n, s->tab_acked, s->drop_sent,
              s->drop_acked, (unsigned long long)seed);
      fail();
    }
    if (n == -1 && s->drop_sent) s->drop_acked = true;
  }
  /* The index holds one row per table row and agrees with the table. */
  assert_int_equal(query_int(db, "SELECT /*+ INDEX(C CV) */ COUNT(*) FROM C WHERE V >= ''"), total);
  assert_int_equal(query_int(db, "SELECT /*+ NO_INDEX */ COUNT(*) FROM C WHERE V >= ''"),
                   total);
  assert_int_equal(query_int(db, "SELECT COUNT(*) FROM C"), total);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  return next;
}

static void kill9_rounds(int sync_mode) {
  uint64_t seed = tu_seed(sync_mode == ROWAN_SYNC_FULL ? "kill9 sync full" : "kill9 sync normal");
  char dir[] = "/tmp/rowan_kill9_XXXXXX";
  assert_non_null(mkdtemp(dir));
  char db_dir[64];
  snprintf(db_dir, sizeof db_dir, "%s/db", dir);
  memset(g_batches, 0, sizeof g_batches);
  int rounds = (int)tu_scaled(8, 3);
  int first = 0;
  bool schema = false;
  for (int round = 0; round < rounds; round++) {
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    uint64_t child_seed = tu_rand(&seed);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
      close(fds[0]);
      child_run(db_dir, first, fds[1], child_seed, sync_mode);
    }
    close(fds[1]);
    /* Wait for some acknowledgements (at least one batch, or the schema), then kill at a
       random point up to ~150 ms later. */
    FILE *in = fdopen(fds[0], "r");
    assert_non_null(in);
    int want_acks = 1 + (int)tu_below(&seed, 12);
    int acks = 0;
    char line[64];
    while (acks < want_acks && fgets(line, sizeof line, in)) {
      if (line[0] == 'R') schema = true;
      else if (take_ack(line)) acks++;
    }
    struct timespec ts = {0, (long)tu_below(&seed, 150) * 1000000L};
    nanosleep(&ts, NULL);
    kill(pid, SIGKILL);
    /* Everything the child acknowledged before it died counts. */
    while (fgets(line, sizeof line, in)) {
      if (line[0] == 'R') schema = true;
      else take_ack(line);
    }
    fclose(in);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (!(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)) {
      fprintf(stderr, "child ended by itself: status %d (seed %llu)\n", status,
              (unsigned long long)seed);
      fail();
    }
    assert_true(schema);
    first = verify(db_dir, first + MAX_BATCHES, seed);
  }
  fprintf(stderr, "[kill9] %d rounds, %d batches written\n", rounds, first);
  char cmd[160];
  snprintf(cmd, sizeof cmd, "echo \"[kill9] files in the store: $(find '%s' -type f | wc -l)\" >&2",
           dir);
  assert_int_equal(system(cmd), 0);
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  assert_int_equal(system(cmd), 0);
}

static void test_kill9_keeps_acknowledged_rows(void **state) {
  (void)state;
  kill9_rounds(ROWAN_SYNC_FULL);
}

static void test_kill9_sync_normal_keeps_acknowledged_rows(void **state) {
  (void)state;
  kill9_rounds(ROWAN_SYNC_NORMAL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_kill9_keeps_acknowledged_rows),
      cmocka_unit_test(test_kill9_sync_normal_keeps_acknowledged_rows),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
