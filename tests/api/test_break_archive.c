/*
** tests/api/test_break_archive.c: the benchmark's query shapes on a sensor archive (PRIMARY
** KEY (STATION, TS DESC), a readings family written every hour and a meta family written
** rarely), run as kept statements rebound with random values, against the same statements
** on a reference table keyed by a plain row number (every answer from a sort or a filter,
** none from the key order): the latest N readings (ORDER BY TS DESC LIMIT, and ASC with
** OFFSET), one day by a TS range, a point read of one hour, aggregates over a day, the
** newest reading per station, meta cells; stations with empty and escaped names, hours
** missing, NULL readings; rows in the memstore over store files, after compactions.
** Seeded (tu_seed; the seed is printed).
** Not here: the benchmark's timings (bench/).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kv/env/env_mem.h"
#include "rowan.h"
#include "testutil.h"
#include "tu_api.h"

#define N_ST 5
#define T0 1456790400000LL /* 2016-03-01 00:00:00 UTC, ms */
#define HOUR 3600000LL
#define OUT_CAP (1u << 20)

static rowan_db *open_mem(kv_env *env) {
  rowan_options o;
  rowan_options_init(&o);
  o.kv_env = env;
  o.sync_mode = ROWAN_SYNC_OFF;
  o.block_cache_size = 256u << 10;
  rowan_db *db = NULL;
  assert_int_equal(rowan_open("/db", &o, &db), ROWAN_OK);
  return db;
}

static const char *const stations[N_ST] = {"Aotizhongxin", "", "a\x01" "b", "It's", "Dongsi"};

/* One line per row (each value's text), then the end code. sorted: lines sorted. */
static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static void run(rowan_db *db, rowan_stmt *st, bool sorted, char *out, size_t cap) {
  char **lines = NULL;
  int n = 0, lcap = 0, rc;
  while ((rc = rowan_step(st)) == ROWAN_ROW) {
    char buf[512];
    size_t k = 0;
    buf[0] = 0;
    for (int c = 0; c < rowan_column_count(st) && k + 64 < sizeof buf; c++) {
      const char *t = rowan_column_text(st, c);
      k += (size_t)snprintf(buf + k, sizeof buf - k, "%s%s", c ? "|" : "", t ? t : "NULL");
    }
    if (n == lcap) {
      lcap = lcap ? 2 * lcap : 64;
      lines = realloc(lines, (size_t)lcap * sizeof *lines);
      assert_non_null(lines);
    }
    lines[n] = strdup(buf);
    assert_non_null(lines[n]);
    n++;
  }
  if (sorted && n) qsort(lines, (size_t)n, sizeof *lines, cmp_str);
  size_t k = 0;
  out[0] = 0;
  for (int i = 0; i < n; i++) {
    if (k + strlen(lines[i]) + 2 < cap) k += (size_t)snprintf(out + k, cap - k, "%s\n", lines[i]);
    free(lines[i]);
  }
  free(lines);
  snprintf(out + k, cap - k, "end %s %s", rowan_errstr(rc), rc == ROWAN_DONE ? "" : rowan_errmsg(db));
}

/* The statements: on R (kept) and on Q (fresh each run), and whether rows are compared as
** a sorted list (no ORDER BY) or in order. Parameters: s station, t timestamp, n count. */
typedef struct qdef {
  const char *r;      /* on the archive R */
  const char *q;      /* on the reference Q */
  const char *params; /* s, t, n per parameter */
  bool sorted;        /* compare as sorted lists */
} qdef;

static const qdef qs[] = {
    {"SELECT TS, TEMP FROM R WHERE STATION = ? ORDER BY TS DESC LIMIT ?",
     "SELECT TS, TEMP FROM Q WHERE STATION = ? ORDER BY TS DESC LIMIT ?", "sn", false},
    {"SELECT TS, TEMP, RAIN FROM R WHERE STATION = ? AND TS >= ? AND TS < ?",
     "SELECT TS, TEMP, RAIN FROM Q WHERE STATION = ? AND TS >= ? AND TS < ?", "stt", true},
    {"SELECT TS FROM R WHERE STATION = ? ORDER BY TS LIMIT ? OFFSET ?",
     "SELECT TS FROM Q WHERE STATION = ? ORDER BY TS LIMIT ? OFFSET ?", "snn", false},
    {"SELECT COUNT(*), COUNT(TEMP), MIN(TEMP), MAX(RAIN) FROM R WHERE STATION = ? AND TS >= ? "
     "AND TS < ?",
     "SELECT COUNT(*), COUNT(TEMP), MIN(TEMP), MAX(RAIN) FROM Q WHERE STATION = ? AND TS >= ? "
     "AND TS < ?", "stt", false},
    {"SELECT * FROM R WHERE STATION = ? AND TS = ?",
     "SELECT STATION, TS, TEMP, RAIN, LOC FROM Q WHERE STATION = ? AND TS = ?", "st", false},
    {"SELECT STATION, MAX(TS), COUNT(*) FROM R GROUP BY STATION",
     "SELECT STATION, MAX(TS), COUNT(*) FROM Q GROUP BY STATION", "", true},
    {"SELECT LOC, TS FROM R WHERE STATION = ? AND LOC IS NOT NULL",
     "SELECT LOC, TS FROM Q WHERE STATION = ? AND LOC IS NOT NULL", "s", true},
    {"SELECT TS, TEMP FROM R WHERE STATION = ? AND TS < ? ORDER BY TS DESC LIMIT ?",
     "SELECT TS, TEMP FROM Q WHERE STATION = ? AND TS < ? ORDER BY TS DESC LIMIT ?", "stn", false},
    {"SELECT TEMP FROM R WHERE STATION = ? AND TEMP > ? ORDER BY TS DESC LIMIT 5",
     "SELECT TEMP FROM Q WHERE STATION = ? AND TEMP > ? ORDER BY TS DESC LIMIT 5", "sn", false},
};
#define N_QS (int)(sizeof qs / sizeof qs[0])

typedef struct world {
  rowan_db *db;      /* both tables */
  rowan_stmt *ur, *uq;/* UPSERT into R and Q */
  int64_t next_id;   /* Q's next row number */
  int hours;         /* hours written so far per station */
} world;

/* Write hours [from, to) of every station into both tables (some missing, some NULL). */
static void write_hours(world *w, uint64_t *rs, int from, int to) {
  for (int s = 0; s < N_ST; s++)
    for (int h = from; h < to; h++) {
      if ((h * 7 + s) % 11 == 3) continue; /* a missing hour */
      int64_t ts = T0 + h * HOUR;
      bool null_temp = tu_below(rs, 8) == 0;
      double temp = (double)((h * 13 + s * 7) % 400) / 10.0 - 10.0;
      int rain = (h + s) % 5;
      bool loc = h == from && tu_below(rs, 2) == 0; /* meta, rarely */
      char locs[32];
      snprintf(locs, sizeof locs, "loc%d-%d", s, h);
      for (int t = 0; t < 2; t++) {
        rowan_stmt *u = t ? w->uq : w->ur;
        rowan_reset(u);
        int p = 1;
        if (t) rowan_bind_int64(u, p++, w->next_id++);
        rowan_bind_text(u, p++, stations[s], -1);
        rowan_bind_timestamp(u, p++, ts);
        if (null_temp) rowan_bind_null(u, p++);
        else rowan_bind_double(u, p++, temp);
        rowan_bind_int64(u, p++, rain);
        if (loc) rowan_bind_text(u, p++, locs, -1);
        else rowan_bind_null(u, p++);
        if (rowan_step(u) != ROWAN_DONE) fail_msg("write: %s", rowan_errmsg(w->db));
      }
    }
  w->hours = to;
}

static void archive_queries_equal_reference(void **state) {
  (void)state;
  uint64_t seed = tu_seed("archive_queries_equal_reference"), rs = seed;
  kv_env *env = kv_env_mem_new(0);
  world w;
  memset(&w, 0, sizeof w);
  w.db = open_mem(env);
  exec_ok(w.db, "CREATE TABLE R (STATION VARCHAR NOT NULL, TS TIMESTAMP NOT NULL, "
                "READINGS.TEMP DOUBLE, READINGS.RAIN INTEGER, META.LOC VARCHAR, "
                "CONSTRAINT PK PRIMARY KEY (STATION, TS DESC)) READINGS.BLOCKSIZE = 1024");
  exec_ok(w.db, "CREATE TABLE Q (ID BIGINT NOT NULL PRIMARY KEY, STATION VARCHAR, "
                "TS TIMESTAMP, TEMP DOUBLE, RAIN INTEGER, LOC VARCHAR)");
  assert_int_equal(rowan_prepare(w.db, "UPSERT INTO R (STATION, TS, TEMP, RAIN, LOC) VALUES "
                                 "(?, ?, ?, ?, ?)", -1, &w.ur, NULL), ROWAN_OK);
  assert_int_equal(rowan_prepare(w.db, "UPSERT INTO Q VALUES (?, ?, ?, ?, ?, ?)", -1, &w.uq,
                                 NULL), ROWAN_OK);
  int days = (int)tu_scaled(12, 4);
  write_hours(&w, &rs, 0, days * 24 / 2);
  assert_int_equal(rowan_flush(w.db), ROWAN_OK);
  assert_int_equal(rowan_compact(w.db, 1), ROWAN_OK);
  write_hours(&w, &rs, days * 24 / 2, days * 24 * 3 / 4);
  assert_int_equal(rowan_flush(w.db), ROWAN_OK);
  write_hours(&w, &rs, days * 24 * 3 / 4, days * 24); /* memstore over two files */
  rowan_stmt *kept[N_QS];
  for (int i = 0; i < N_QS; i++)
    if (rowan_prepare(w.db, qs[i].r, -1, &kept[i], NULL) != ROWAN_OK)
      fail_msg("%s: %s", qs[i].r, rowan_errmsg(w.db));
  char *a = malloc(OUT_CAP), *b = malloc(OUT_CAP);
  assert_non_null(a);
  assert_non_null(b);
  int rounds = (int)tu_scaled(1500, 400), nonempty = 0;
  for (int r = 0; r < rounds; r++) {
    int i = (int)tu_below(&rs, N_QS);
    rowan_stmt *fresh;
    assert_int_equal(rowan_prepare(w.db, qs[i].q, -1, &fresh, NULL), ROWAN_OK);
    rowan_reset(kept[i]);
    char desc[200] = "";
    for (int p = 0; qs[i].params[p]; p++) {
      size_t dl = strlen(desc);
      char kind = qs[i].params[p];
      if (kind == 's') {
        int s = (int)tu_below(&rs, N_ST + 1);
        const char *name = s < N_ST ? stations[s] : "nobody";
        assert_int_equal(rowan_bind_text(kept[i], p + 1, name, -1), ROWAN_OK);
        assert_int_equal(rowan_bind_text(fresh, p + 1, name, -1), ROWAN_OK);
        snprintf(desc + dl, sizeof desc - dl, " '%s'", name);
      } else if (kind == 't') {
        int64_t ts = T0 + (int64_t)tu_below(&rs, (uint64_t)w.hours + 48) * HOUR - 24 * HOUR;
        if (tu_below(&rs, 4) == 0) ts += (int64_t)tu_below(&rs, HOUR); /* between hours */
        assert_int_equal(rowan_bind_timestamp(kept[i], p + 1, ts), ROWAN_OK);
        assert_int_equal(rowan_bind_timestamp(fresh, p + 1, ts), ROWAN_OK);
        snprintf(desc + dl, sizeof desc - dl, " ts %lld", (long long)ts);
      } else {
        int64_t n = tu_below(&rs, 10) == 0 ? 0 : (int64_t)tu_below(&rs, 150);
        if (i == 8) n = (int64_t)tu_below(&rs, 40) - 10; /* a TEMP threshold */
        assert_int_equal(rowan_bind_int64(kept[i], p + 1, n), ROWAN_OK);
        assert_int_equal(rowan_bind_int64(fresh, p + 1, n), ROWAN_OK);
        snprintf(desc + dl, sizeof desc - dl, " %lld", (long long)n);
      }
    }
    run(w.db, kept[i], qs[i].sorted, a, OUT_CAP);
    run(w.db, fresh, qs[i].sorted, b, OUT_CAP);
    rowan_finalize(fresh);
    if (strcmp(a, b) != 0) {
      size_t d = 0;
      while (a[d] && a[d] == b[d]) d++;
      while (d > 0 && a[d - 1] != '\n') d--;
      fail_msg("seed %llu round %d: %s with%s\narchive:   %.300s\nreference: %.300s",
               (unsigned long long)seed, r, qs[i].r, desc, a + d, b + d);
    }
    nonempty += strncmp(a, "end ", 4) != 0;
    switch (tu_below(&rs, 60)) {
    case 0: write_hours(&w, &rs, w.hours, w.hours + 3); break;
    case 1: assert_int_equal(rowan_flush(w.db), ROWAN_OK); break;
    case 2: assert_int_equal(rowan_compact(w.db, (int)tu_below(&rs, 2)), ROWAN_OK); break;
    default: break;
    }
  }
  fprintf(stderr, "[archive] %d of %d runs returned rows\n", nonempty, rounds);
  assert_true(nonempty * 2 >= rounds); /* most runs found readings */
  free(a);
  free(b);
  for (int i = 0; i < N_QS; i++) rowan_finalize(kept[i]);
  rowan_finalize(w.ur);
  rowan_finalize(w.uq);
  assert_int_equal(rowan_close(w.db), ROWAN_OK);
  kv_env_free(env);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(archive_queries_equal_reference),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
