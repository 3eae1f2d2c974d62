/*
** tests/api/test_recover.c: rowan_recover (include/rowan.h) on damaged SQL databases. A small
** database is built in the in-memory env, the same way every trial: two tables with
** secondary indexes (one with two column families, one with a DESC key column), rows
** upserted, updated and deleted in three phases; the first two flushed into store files, the
** third left in the WAL (the process "dies" before close). A model (a map of the rows)
** follows every statement. Each trial damages it (a flipped byte of the MANIFEST, of a WAL
** record, of a store-file block of one family; the MANIFEST removed, with or without the
** TABLEINFO files), recovers it into a new database, and checks:
**   - the new database opens, its indexes were rebuilt and CHECK INDEX finds no problem;
**   - the rows: exactly the model's for damage that loses nothing (MANIFEST, nothing at all),
**     the model without the one statement whose WAL record was hit (the statements after it
**     as they ran: a DELETE that found no row wrote nothing, so it stays a no-op even when
**     the statement that deleted the row first is the one lost), and for a store-file
**     block: the other table exactly, the damaged family's values each the model's, an older
**     value the model once had, or gone; the rows whose marker family was hit all there
**     (markers made again);
**   - the catalog's damage sends the tables' cells to LOST_AND_FOUND, every row marker there;
**   - the report names the damaged file.
** Seeded (tu_seed); the seed is printed.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kv/env/env_mem.h"
#include "kv/db/manifest.h"
#include "rowan.h"
#include "testutil.h"
#include "tu_api.h"

#define N1 60    /* keys of T1 */
#define NG 4     /* groups of T2 */
#define NTS 12   /* timestamps per group of T2 */
#define MAXSTMT 400
#define HIST 8   /* older B values remembered per row */

/* ---- the model ----------------------------------------------------------------------------- */
typedef struct m1 {
  bool exists;
  char a[16];            /* A (never NULL while the row exists) */
  bool has_b;
  long long b;           /* F2.B */
  long long hist[HIST];  /* B values it once had */
  int n_hist;
} m1;
typedef struct m2 {
  bool exists;
  bool has_v;
  double v;
} m2;
typedef struct model {
  m1 t1[N1];
  m2 t2[NG][NTS];
} model;

/* One statement: its SQL and its effect on the model. */
typedef struct stmt {
  char sql[160];
  int kind;        /* 0 upsert T1, 1 delete T1, 2 upsert T2, 3 delete T2 */
  int k, g, ts;    /* the row */
  bool set_b;      /* the upsert sets B */
  long long b;
  double v;
  char a[16];
  int phase;       /* 1, 2 or 3 (3: only in the WAL) */
  bool no_op;      /* a DELETE of a row not there when it ran: it wrote nothing */
  int64_t wal_lo, wal_hi; /* phase 3: its WAL record's bytes */
} stmt;

typedef struct fixture {
  uint64_t seed;
  stmt s[MAXSTMT];
  int n;
  char wal[128];   /* the WAL segment of phase 3 */
} fixture;

static void apply(model *m, const stmt *s) {
  if (s->kind == 0) {
    m1 *r = &m->t1[s->k];
    if (!r->exists && r->has_b && r->n_hist < HIST) r->hist[r->n_hist++] = r->b;
    if (!r->exists) r->has_b = false; /* a deleted row's B is gone (history kept) */
    r->exists = true;
    snprintf(r->a, sizeof r->a, "%s", s->a);
    if (s->set_b) {
      if (r->has_b && r->n_hist < HIST) r->hist[r->n_hist++] = r->b;
      r->has_b = true;
      r->b = s->b;
    }
  } else if (s->kind == 1) {
    m->t1[s->k].exists = false;
  } else if (s->kind == 2) {
    m->t2[s->g][s->ts].exists = true;
    m->t2[s->g][s->ts].has_v = true;
    m->t2[s->g][s->ts].v = s->v;
  } else {
    m->t2[s->g][s->ts].exists = false;
  }
}

/* The rows after every statement but `skip` (-1: none). The statements after `skip` are
** taken as they ran, with every statement before them: a DELETE that then found no row wrote
** nothing, and losing `skip`'s WAL record does not make it delete anything. */
static void model_of(const fixture *f, int skip, model *m) {
  memset(m, 0, sizeof *m);
  for (int i = 0; i < f->n; i++)
    if (i != skip && !f->s[i].no_op) apply(m, &f->s[i]);
}

/* Mark the DELETEs of a row that is not there when they run (no_op). */
static void mark_no_ops(fixture *f) {
  model m;
  memset(&m, 0, sizeof m);
  for (int i = 0; i < f->n; i++) {
    stmt *s = &f->s[i];
    s->no_op = (s->kind == 1 && !m.t1[s->k].exists) ||
               (s->kind == 3 && !m.t2[s->g][s->ts].exists);
    apply(&m, s);
  }
}

/* The statements, from the seed. */
static void plan(fixture *f) {
  uint64_t rng = f->seed;
  f->n = 0;
  int per_phase[3] = {120, 80, 30};
  for (int ph = 1; ph <= 3; ph++)
    for (int i = 0; i < per_phase[ph - 1]; i++) {
      stmt *s = &f->s[f->n++];
      memset(s, 0, sizeof *s);
      s->phase = ph;
      int r = (int)tu_below(&rng, 10);
      s->kind = r < 5 ? 0 : r < 6 ? 1 : r < 9 ? 2 : 3;
      if (ph == 1 && s->kind % 2 == 1) s->kind--; /* phase 1 fills */
      s->k = (int)tu_below(&rng, N1);
      s->g = (int)tu_below(&rng, NG);
      s->ts = (int)tu_below(&rng, NTS);
      s->set_b = tu_below(&rng, 4) != 0;
      s->b = (long long)tu_below(&rng, 100000) - 50000;
      s->v = (double)tu_below(&rng, 1000) / 8.0;
      char a[16];
      snprintf(a, sizeof a, "a%d-%d", s->k, (int)tu_below(&rng, 50));
      memcpy(s->a, a, sizeof a);
      if (s->kind == 0 && s->set_b)
        snprintf(s->sql, sizeof s->sql, "UPSERT INTO T1 (K, A, B) VALUES (%d, '%s', %lld)", s->k,
                 a, s->b);
      else if (s->kind == 0)
        snprintf(s->sql, sizeof s->sql, "UPSERT INTO T1 (K, A) VALUES (%d, '%s')", s->k, a);
      else if (s->kind == 1)
        snprintf(s->sql, sizeof s->sql, "DELETE FROM T1 WHERE K = %d", s->k);
      else if (s->kind == 2)
        snprintf(s->sql, sizeof s->sql, "UPSERT INTO T2 VALUES ('g%d', %d, %.3f)", s->g, s->ts, s->v);
      else
        snprintf(s->sql, sizeof s->sql, "DELETE FROM T2 WHERE G = 'g%d' AND TS = %d", s->g, s->ts);
    }
  mark_no_ops(f);
}

typedef struct walk_ctx {
  char names[64][64];
  int n;
} walk_ctx;
static int collect(void *ctx, const char *name) {
  walk_ctx *w = ctx;
  if (w->n < 64) snprintf(w->names[w->n++], sizeof w->names[0], "%s", name);
  return 0;
}

/* The newest WAL segment of /db. */
static void newest_wal(kv_env *env, char *out, size_t cap) {
  walk_ctx w = {.n = 0};
  env->list(env, "/db", collect, &w);
  unsigned long long best = 0;
  out[0] = 0;
  for (int i = 0; i < w.n; i++) {
    unsigned long long num;
    if (sscanf(w.names[i], "wal-%llu.log", &num) == 1 && num >= best) {
      best = num;
      snprintf(out, cap, "/db/%s", w.names[i]);
    }
  }
}

/* Build the database in a new env; the phase-3 statements stay in the WAL. */
static kv_env *build(fixture *f) {
  kv_env *env = kv_env_mem_new(1700000000000ll);
  rowan_db *db = tu_open_mem_sync(env, ROWAN_SYNC_NORMAL);
  exec_ok(db, "CREATE TABLE T1 (K INTEGER PRIMARY KEY, A VARCHAR, F2.B BIGINT)");
  exec_ok(db, "CREATE INDEX I1 ON T1 (A) INCLUDE (B)");
  exec_ok(db, "CREATE TABLE T2 (G VARCHAR NOT NULL, TS INTEGER NOT NULL, V DOUBLE, "
              "CONSTRAINT PK PRIMARY KEY (G, TS DESC))");
  exec_ok(db, "CREATE INDEX I2 ON T2 (V)");
  for (int i = 0; i < f->n; i++) {
    stmt *s = &f->s[i];
    if (s->phase == 3 && (i == 0 || f->s[i - 1].phase != 3)) newest_wal(env, f->wal, sizeof f->wal);
    if (s->phase == 3) s->wal_lo = kv_env_mem_file_size(env, f->wal);
    exec_ok(db, s->sql);
    if (s->phase == 3) {
      s->wal_hi = kv_env_mem_file_size(env, f->wal);
      /* the model's no-ops are the statements that wrote nothing, no others */
      if ((s->wal_hi == s->wal_lo) != s->no_op)
        fail_msg("statement %d (%s) wrote %lld WAL bytes; the model says %s", i, s->sql,
                 (long long)(s->wal_hi - s->wal_lo), s->no_op ? "none" : "some");
    }
    if (i + 1 < f->n && f->s[i + 1].phase != s->phase) assert_int_equal(rowan_flush(db), ROWAN_OK);
  }
  kv_env_mem_set_crashed(env, true); /* the process dies: phase 3 stays in the WAL */
  rowan_close(db);
  kv_env_mem_recover(env);
  return env;
}

/* ---- checking the new database ------------------------------------------------------------- */
typedef enum { EXACT, FAMILY_B_HIT, MARKERS_HIT } how;

static long long query_int(rowan_db *db, const char *sql) {
  rowan_stmt *st;
  assert_int_equal(rowan_prepare(db, sql, -1, &st, NULL), ROWAN_OK);
  long long v = -1;
  if (rowan_step(st) == ROWAN_ROW) v = rowan_column_int64(st, 0);
  rowan_finalize(st);
  return v;
}

static void check_index(rowan_db *db, const char *idx, const char *t) {
  char sql[100];
  snprintf(sql, sizeof sql, "CHECK INDEX %s ON %s", idx, t);
  rowan_stmt *st;
  assert_int_equal(rowan_prepare(db, sql, -1, &st, NULL), ROWAN_OK);
  while (rowan_step(st) == ROWAN_ROW) {
    const char *item = (const char *)rowan_column_text(st, 0);
    if (!strcmp(item, "MISSING") || !strcmp(item, "EXTRA") || !strcmp(item, "MISMATCHED"))
      assert_int_equal(rowan_column_int64(st, 1), 0);
  }
  rowan_finalize(st);
}

/* Compare the new database at /new with model m; with FAMILY_B_HIT, T1's B may be an older
** value or gone. Returns the differences found (printed). */
static int compare(kv_env *env, const model *m, how h, const char *what) {
  rowan_options o;
  rowan_options_init(&o);
  o.kv_env = env;
  o.create_if_missing = 0;
  rowan_db *db = NULL;
  if (rowan_open("/new", &o, &db) != ROWAN_OK) {
    fprintf(stderr, "%s: the new database does not open: %s\n", what, db ? rowan_errmsg(db) : "");
    rowan_close(db);
    return 1;
  }
  check_index(db, "I1", "T1");
  check_index(db, "I2", "T2");
  int bad = 0;
  bool seen1[N1] = {false};
  rowan_stmt *st;
  assert_int_equal(rowan_prepare(db, "SELECT K, A, B FROM T1", -1, &st, NULL), ROWAN_OK);
  while (rowan_step(st) == ROWAN_ROW) {
    int k = (int)rowan_column_int64(st, 0);
    const char *a = (const char *)rowan_column_text(st, 1);
    bool null_b = rowan_column_type(st, 2) == ROWAN_NULL;
    long long b = rowan_column_int64(st, 2);
    const m1 *r = k >= 0 && k < N1 ? &m->t1[k] : NULL;
    bool ok = r && r->exists && a && !strcmp(a, r->a);
    if (!ok && h == MARKERS_HIT && r && !r->exists && !a && null_b) {
      /* a deleted row whose marker tombstone was lost: an older marker shows it again,
         its columns' tombstones keep them NULL */
      continue;
    }
    if (ok && h != FAMILY_B_HIT) ok = null_b == !r->has_b && (null_b || b == r->b);
    if (ok && h == FAMILY_B_HIT && !null_b) {
      bool known = r->has_b && b == r->b;
      for (int i = 0; i < r->n_hist; i++) known |= b == r->hist[i];
      ok = known;
    }
    if (!ok && bad++ < 5)
      fprintf(stderr, "%s: T1 row %d: got A %s B %s%lld; model: %s A %s B %lld\n", what, k,
              a ? a : "NULL", null_b ? "NULL " : "", b, r && r->exists ? "row" : "no row",
              r ? r->a : "-", r ? r->b : 0);
    if (k >= 0 && k < N1) seen1[k] = true;
  }
  rowan_finalize(st);
  for (int k = 0; k < N1; k++)
    if (m->t1[k].exists != seen1[k] && bad++ < 5)
      fprintf(stderr, "%s: T1 row %d: %s\n", what, k, seen1[k] ? "extra" : "missing");
  bool seen2[NG][NTS] = {{false}};
  assert_int_equal(rowan_prepare(db, "SELECT G, TS, V FROM T2", -1, &st, NULL), ROWAN_OK);
  while (rowan_step(st) == ROWAN_ROW) {
    int g = ((const char *)rowan_column_text(st, 0))[1] - '0';
    int ts = (int)rowan_column_int64(st, 1);
    double v = rowan_column_double(st, 2);
    bool ok = g >= 0 && g < NG && ts >= 0 && ts < NTS && m->t2[g][ts].exists &&
              m->t2[g][ts].v == v;
    if (!ok && bad++ < 5) fprintf(stderr, "%s: T2 row g%d %d: got %g\n", what, g, ts, v);
    if (ok) seen2[g][ts] = true;
  }
  rowan_finalize(st);
  for (int g = 0; g < NG; g++)
    for (int ts = 0; ts < NTS; ts++)
      if (m->t2[g][ts].exists != seen2[g][ts] && bad++ < 5)
        fprintf(stderr, "%s: T2 row g%d %d missing\n", what, g, ts);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  return bad;
}

/* The damage entry of `file` in the report (NULL: none). */
static const rowan_recover_damage *damage_of(const rowan_recover_report *rep, const char *file) {
  const char *bn = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
  for (int i = 0; i < rep->n_damage; i++) {
    size_t a = strlen(rep->damage[i].file), b = strlen(bn);
    if (a >= b && !strcmp(rep->damage[i].file + a - b, bn)) return &rep->damage[i];
  }
  return NULL;
}

static bool report_names(const rowan_recover_report *rep, const char *file) {
  return damage_of(rep, file) != NULL;
}

static rowan_recover_report *recover(kv_env *env) {
  rowan_recover_options ro = {.kv_env = env};
  rowan_recover_report *rep = NULL;
  int rc = rowan_recover("/db", "/new", &ro, &rep);
  if (rc != ROWAN_OK) fail_msg("rowan_recover: %s: %s", rowan_errstr(rc), rep ? rep->errmsg : "");
  return rep;
}

static fixture *fixture_new(const char *name) {
  fixture *f = calloc(1, sizeof *f);
  f->seed = tu_seed(name);
  plan(f);
  return f;
}

/* ---- the tests ------------------------------------------------------------------------------- */

/* No damage: every row, every index, the same report of nothing. */
static void test_sound(void **state) {
  (void)state;
  fixture *f = fixture_new("recover_sound");
  kv_env *env = build(f);
  rowan_recover_report *rep = recover(env);
  assert_int_equal(rep->n_damage, 0);
  assert_int_equal(rep->catalog, ROWAN_CATALOG_WHOLE);
  assert_null(rep->lost_and_found);
  assert_int_equal(rep->n_tables, 2);
  assert_int_equal(rep->tables[0].indexes + rep->tables[1].indexes, 2);
  assert_true(rep->wal_ops > 0);
  model m;
  model_of(f, -1, &m);
  assert_int_equal(compare(env, &m, EXACT, "sound"), 0);
  rowan_recover_report_free(rep);
  kv_env_free(env);
  free(f);
}

/* A flipped byte of the MANIFEST, or no MANIFEST: nothing lost. */
static void test_manifest(void **state) {
  (void)state;
  fixture *f = fixture_new("recover_manifest");
  model m;
  model_of(f, -1, &m);
  uint64_t rng = f->seed;
  int trials = (int)tu_scaled(24, 4);
  for (int t = 0; t <= trials; t++) {
    kv_env *env = build(f);
    int64_t size = kv_env_mem_file_size(env, "/db/MANIFEST");
    char what[80];
    if (t == trials) {
      assert_int_equal(env->remove(env, "/db/MANIFEST"), KV_OK);
      snprintf(what, sizeof what, "MANIFEST removed");
    } else {
      uint64_t off = tu_below(&rng, (uint64_t)size);
      uint8_t v;
      assert_int_equal(kv_env_mem_get_byte(env, "/db/MANIFEST", off, &v), KV_OK);
      assert_int_equal(kv_env_mem_set_byte(env, "/db/MANIFEST", off, v ^ 0x10), KV_OK);
      snprintf(what, sizeof what, "MANIFEST byte %llu (seed %llu)", (unsigned long long)off,
               (unsigned long long)f->seed);
    }
    rowan_recover_report *rep = recover(env);
    assert_true(report_names(rep, "/db/MANIFEST"));
    assert_false(rep->manifest_whole);
    assert_int_equal(compare(env, &m, EXACT, what), 0);
    rowan_recover_report_free(rep);
    kv_env_free(env);
  }
  free(f);
}

/* Build f's database, flip a bit of byte `off` of the WAL record of phase-3 statement i
** (which must have written one), recover it and compare with the model without statement i:
** the differences found (printed). */
static int wal_trial(fixture *f, int i, uint64_t off) {
  kv_env *env = build(f);
  stmt *s = &f->s[i];
  assert_true(s->phase == 3 && (int64_t)off >= s->wal_lo && (int64_t)off < s->wal_hi);
  uint8_t v;
  assert_int_equal(kv_env_mem_get_byte(env, f->wal, off, &v), KV_OK);
  assert_int_equal(kv_env_mem_set_byte(env, f->wal, off, v ^ 0x04), KV_OK);
  rowan_recover_report *rep = recover(env);
  assert_true(report_names(rep, f->wal));
  model m;
  model_of(f, i, &m);
  char what[300];
  snprintf(what, sizeof what, "WAL byte %llu of statement %d (%s), seed %llu",
           (unsigned long long)off, i, s->sql, (unsigned long long)f->seed);
  int bad = compare(env, &m, EXACT, what);
  rowan_recover_report_free(rep);
  kv_env_free(env);
  return bad;
}

/* A flipped byte of a phase-3 WAL record: that statement is lost, no other. */
static void test_wal_record(void **state) {
  (void)state;
  fixture *f = fixture_new("recover_wal");
  uint64_t rng = f->seed ^ 0x55;
  int trials = (int)tu_scaled(16, 4);
  kv_env_free(build(f)); /* the records' bytes (every build writes the same) */
  for (int t = 0; t < trials; t++) {
    int i = f->n - 1 - (int)tu_below(&rng, 30);
    stmt *s = &f->s[i];
    assert_true(s->phase == 3);
    if (s->no_op) continue; /* a DELETE of a row not there writes nothing */
    uint64_t off = (uint64_t)s->wal_lo + tu_below(&rng, (uint64_t)(s->wal_hi - s->wal_lo));
    assert_int_equal(wal_trial(f, i, off), 0);
  }
  free(f);
}

/* A row deleted twice in the WAL, the first DELETE's record damaged: the second found no row
** and wrote nothing, so the row is back with its flushed values (T1, with B in the second
** family; T2, with its DESC key). A statement after them is kept. The first, a middle and the
** last byte of the record are tried. */
static void test_wal_lost_delete(void **state) {
  (void)state;
  static const char *sql[] = {
      "UPSERT INTO T1 (K, A, B) VALUES (29, 'a29-7', -40235)",
      "UPSERT INTO T2 VALUES ('g1', 3, 2.5)",
      "DELETE FROM T1 WHERE K = 29",
      "DELETE FROM T1 WHERE K = 29",
      "DELETE FROM T2 WHERE G = 'g1' AND TS = 3",
      "DELETE FROM T2 WHERE G = 'g1' AND TS = 3",
      "UPSERT INTO T1 (K, A) VALUES (7, 'a7-1')",
  };
  fixture *f = calloc(1, sizeof *f);
  f->n = (int)(sizeof sql / sizeof sql[0]);
  for (int i = 0; i < f->n; i++) {
    stmt *s = &f->s[i];
    snprintf(s->sql, sizeof s->sql, "%s", sql[i]);
    s->phase = i < 2 ? 1 : 3;
    s->kind = i == 1 ? 2 : i == 2 || i == 3 ? 1 : i == 4 || i == 5 ? 3 : 0;
    s->k = i == 6 ? 7 : 29;
    s->g = 1;
    s->ts = 3;
    s->set_b = i == 0;
    s->b = -40235;
    s->v = 2.5;
    snprintf(s->a, sizeof s->a, i == 6 ? "a7-1" : "a29-7");
  }
  mark_no_ops(f);
  assert_true(f->s[3].no_op && f->s[5].no_op && !f->s[2].no_op && !f->s[4].no_op);
  kv_env_free(build(f)); /* the records' bytes */
  for (int i = 2; i <= 4; i += 2) {
    model m;
    model_of(f, i, &m);
    assert_true(i == 2 ? m.t1[29].exists : m.t2[1][3].exists); /* the row comes back */
    int64_t lo = f->s[i].wal_lo, hi = f->s[i].wal_hi;
    int64_t offs[3] = {lo, lo + (hi - lo) / 2, hi - 1};
    for (int o = 0; o < 3; o++) assert_int_equal(wal_trial(f, i, (uint64_t)offs[o]), 0);
  }
  free(f);
}

/* The store files of one family of a table: "/db/data/<tid>/<fid>/n.sf" paths. */
static int family_files(kv_env *env, const char *kv_prefix, const char *table_suffix,
                        const char *family, char out[8][128]) {
  int n = 0;
  walk_ctx tw = {.n = 0};
  env->list(env, "/db/data", collect, &tw);
  for (int t = 0; t < tw.n; t++) {
    char p[128];
    snprintf(p, sizeof p, "/db/data/%s/TABLEINFO", tw.names[t]);
    kv_table_meta tm;
    if (kv_tableinfo_read(env, p, &tm) != KV_OK) continue;
    size_t L = strlen(tm.name), sl = strlen(table_suffix);
    bool match = !strncmp(tm.name, kv_prefix, strlen(kv_prefix)) && L >= sl &&
                 !strcmp(tm.name + L - sl, table_suffix);
    for (uint32_t i = 0; match && i < tm.n_families; i++) {
      if (strcmp(tm.families[i].name, family)) continue;
      char dir[96];
      snprintf(dir, sizeof dir, "/db/data/%.16s/%u", tw.names[t], tm.families[i].id);
      walk_ctx fw = {.n = 0};
      env->list(env, dir, collect, &fw);
      for (int k = 0; k < fw.n && n < 8; k++)
        snprintf(out[n++], 128, "%s/%.30s", dir, fw.names[k]);
    }
    kv_table_meta_free(&tm);
  }
  return n;
}

/* The rows of T1 whose marker is only in the store file of `phase` (1 or 2): rows there at
** the end whose last statement is an UPSERT of that phase, with no statement of an earlier
** phase or a DELETE as the last one there (a later phase's statements are in a newer file or
** the WAL). When that file's markers are lost, each of these rows gets a new one and no other
** row does. *rows gets the rows with a cell in that file. */
static int markers_only_in(const fixture *f, int phase, int *rows) {
  int need = 0;
  *rows = 0;
  for (int k = 0; k < N1; k++) {
    int last = -1, last_before = -1;
    bool in_phase = false;
    for (int i = 0; i < f->n; i++) {
      const stmt *s = &f->s[i];
      if (s->kind > 1 || s->k != k || s->no_op) continue;
      last = i;
      if (s->phase < phase) last_before = i;
      in_phase |= s->phase == phase;
    }
    *rows += in_phase;
    need += last >= 0 && f->s[last].kind == 0 && f->s[last].phase == phase &&
            (last_before < 0 || f->s[last_before].kind == 1);
  }
  return need;
}

/* A flipped byte in a store file of T1's family F2 (B): T2 and A exact, B the model's, an
** older value or gone; of T1's marker family: every row still there, a marker made again for
** exactly the rows whose marker was only in that file (none when every row of the file has
** one in the other file or the WAL). The file is one block: the damage covers all its rows. */
static void test_store_file_block(void **state) {
  (void)state;
  fixture *f = fixture_new("recover_block");
  model m;
  model_of(f, -1, &m);
  uint64_t rng = f->seed ^ 0x77;
  int trials = (int)tu_scaled(8, 2);
  for (int fam = 0; fam < 2; fam++)
    for (int t = 0; t < trials; t++) {
      kv_env *env = build(f);
      char files[8][128];
      int n = family_files(env, "$t", ".T1", fam == 0 ? "F2" : "_k", files);
      assert_true(n >= 1);
      const char *file = files[tu_below(&rng, (uint64_t)n)];
      uint64_t off = 9 + tu_below(&rng, 40); /* inside the first block */
      uint8_t v;
      assert_int_equal(kv_env_mem_get_byte(env, file, off, &v), KV_OK);
      assert_int_equal(kv_env_mem_set_byte(env, file, off, v ^ 0x01), KV_OK);
      rowan_recover_report *rep = recover(env);
      assert_true(report_names(rep, file));
      assert_true(rep->blocks_lost >= 1);
      char what[200];
      snprintf(what, sizeof what, "%.128s byte %llu (seed %llu)", file, (unsigned long long)off,
               (unsigned long long)f->seed);
      if (fam == 1) { /* the markers were hit: every row is back through its other cells */
        assert_int_equal(n, 2); /* phase 1's flush, then phase 2's */
        int other = file == files[0] ? 1 : 0;
        int phase = atoi(strrchr(file, '/') + 1) < atoi(strrchr(files[other], '/') + 1) ? 1 : 2;
        int rows;
        int need = markers_only_in(f, phase, &rows);
        const rowan_recover_damage *d = damage_of(rep, file);
        assert_non_null(d);
        assert_int_equal(d->rows, rows);
        int64_t made = 0;
        for (int i = 0; i < rep->n_tables; i++) made += rep->tables[i].markers_added;
        if (made != need)
          fprintf(stderr, "%s: %lld markers made, the model needs %d\n", what, (long long)made,
                  need);
        assert_int_equal(made, need);
      }
      assert_int_equal(compare(env, &m, fam == 0 ? FAMILY_B_HIT : MARKERS_HIT, what), 0);
      rowan_recover_report_free(rep);
      kv_env_free(env);
    }
  free(f);
}

/* The catalog's store file damaged: the tables' rows are in LOST_AND_FOUND, a marker for each
** row of T1 among them; the catalog is reported as partly lost. Without the MANIFEST and the
** TABLEINFO files no name is known: everything is in LOST_AND_FOUND, the catalog lost. */
static void test_catalog_lost(void **state) {
  (void)state;
  fixture *f = fixture_new("recover_catalog");
  model m;
  model_of(f, -1, &m);
  int rows1 = 0;
  for (int k = 0; k < N1; k++) rows1 += m.t1[k].exists;
  for (int round = 0; round < 2; round++) {
    kv_env *env = build(f);
    if (round == 0) {
      char files[8][128];
      int n = family_files(env, "SYSTEM", "CATALOG", "0", files);
      assert_true(n >= 1);
      for (int i = 0; i < n; i++) {
        uint8_t v;
        assert_int_equal(kv_env_mem_get_byte(env, files[i], 12, &v), KV_OK);
        assert_int_equal(kv_env_mem_set_byte(env, files[i], 12, v ^ 0x20), KV_OK);
      }
    } else {
      walk_ctx tw = {.n = 0};
      env->list(env, "/db/data", collect, &tw);
      for (int t = 0; t < tw.n; t++) {
        char p[128];
        snprintf(p, sizeof p, "/db/data/%s/TABLEINFO", tw.names[t]);
        env->remove(env, p);
      }
      assert_int_equal(env->remove(env, "/db/MANIFEST"), KV_OK);
    }
    rowan_recover_report *rep = recover(env);
    assert_int_equal(rep->catalog, round == 0 ? ROWAN_CATALOG_PARTIAL : ROWAN_CATALOG_LOST);
    assert_non_null(rep->lost_and_found);
    assert_true(rep->lost_and_found_cells > 0);
    rowan_options o;
    rowan_options_init(&o);
    o.kv_env = env;
    rowan_db *db = NULL;
    assert_int_equal(rowan_open("/new", &o, &db), ROWAN_OK);
    if (round == 0) {
      long long markers = query_int(db, "SELECT COUNT(*) FROM LOST_AND_FOUND WHERE KV_TABLE "
                                        "LIKE '$t%.T1' AND FAMILY = '_k'");
      assert_int_equal(markers, rows1);
      assert_int_equal(rowan_exec(db, "SELECT * FROM T1", NULL, NULL), ROWAN_ERROR);
    } else {
      assert_true(query_int(db, "SELECT COUNT(*) FROM LOST_AND_FOUND WHERE FAMILY LIKE '#%'") > 0);
    }
    assert_int_equal(rowan_close(db), ROWAN_OK);
    rowan_recover_report_free(rep);
    kv_env_free(env);
  }
  free(f);
}

/* Refusals: a destination that holds something, a damaged directory that is not there, a
** NULL report; the report of a failure says why. */
static void test_refusals(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1700000000000ll);
  rowan_db *db = tu_open_mem(env);
  exec_ok(db, "CREATE TABLE T (K INTEGER PRIMARY KEY)");
  assert_int_equal(rowan_close(db), ROWAN_OK);
  rowan_recover_options ro = {.kv_env = env};
  rowan_recover_report *rep = NULL;
  assert_int_equal(rowan_recover("/db", "/db", &ro, &rep), ROWAN_MISUSE);
  assert_true(strlen(rep->errmsg) > 0);
  rowan_recover_report_free(rep);
  assert_int_equal(rowan_recover("/nothing", "/new", &ro, &rep), ROWAN_NOTFOUND);
  rowan_recover_report_free(rep);
  assert_int_equal(rowan_recover("/db", "/new", &ro, NULL), ROWAN_MISUSE);
  assert_int_equal(rowan_recover("/db", "/new", &ro, &rep), ROWAN_OK);
  rowan_recover_report_free(rep);
  assert_int_equal(rowan_recover("/db", "/new", &ro, &rep), ROWAN_MISUSE); /* not empty */
  assert_non_null(strstr(rep->errmsg, "not empty"));
  rowan_recover_report_free(rep);
  db = tu_open_mem(env);
  assert_int_equal(rowan_recover("/db", "/new2", &ro, &rep), ROWAN_LOCKED);
  rowan_recover_report_free(rep);
  assert_int_equal(rowan_close(db), ROWAN_OK);
  rowan_recover_report_free(NULL);
  kv_env_free(env);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_sound),
      cmocka_unit_test(test_manifest),
      cmocka_unit_test(test_wal_record),
      cmocka_unit_test(test_wal_lost_delete),
      cmocka_unit_test(test_store_file_block),
      cmocka_unit_test(test_catalog_lost),
      cmocka_unit_test(test_refusals),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
