/*
** tests/exec/test_point_key.c: the point key template of prepared point lookups
** (planner/point_key.h, used by exec/engine_run.c). A kept statement whose plan is one
** point lookup gets its new key written into the plan at each rebind; every answer (rows and
** codes) must equal that of a fresh prepare of the same SQL with the same values, which
** plans in full, and every patched plan must equal, field by field and byte by byte, the
** plan plan_query_rebuild makes for the same values.
**
** Covered: composite keys with the parameter in any position and constants mixed in, DESC
** key columns (VARCHAR, CHAR, TIMESTAMP, DOUBLE), a nullable key column, VARBINARY and
** VARCHAR keys with bytes that need escaping (0x00, 0x01, 0xFF), CHAR trailing spaces, NULL
** parameters, type coercions (text into numbers and timestamps, integral doubles, numbers
** into text), values that fold to nothing (fractions, out of range) or do not convert,
** parameters in the projection, LIMIT from a parameter and a pushed filter (no template),
** an aggregate over a point; rows in store files and the memstore, several versions,
** deletes, TTL expiry, a transaction's uncommitted writes, DDL between runs (the key's
** types change), an index on the table. Bounded templates (a key prefix narrowed by the next
** key column's bounds): TIMESTAMP, INTEGER, FLOAT, DECIMAL and BIGINT columns, ASC and DESC,
** extreme values (INT64_MIN/MAX: bounds with no key after them), one-value and empty windows,
** 3,000-byte prefixes, and a ROW_TIMESTAMP column (the rebind recomputes the time range its
** bounds set); a plan cut into parallel chunks (no patch: the chunks' ranges are the first
** values'). Seeded (tu_seed).
*/
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "exec/engine_int.h"
#include "exec/parallel.h"
#include "planner/plan_reuse.h"
#include "test_engine_util.h"
#include "testutil.h"

/* ---- Formatting and running ------------------------------------------------------------ */
/* One value as unambiguous text: bytes in hex, doubles exactly. */
static size_t fmt_value(const cat_value *v, char *buf, size_t cap) {
  if (v->is_null) return (size_t)snprintf(buf, cap, "NULL");
  if (cat_type_is_string(v->type.id) || v->type.id == CAT_T_VARBINARY) {
    size_t o = (size_t)snprintf(buf, cap, "%c'", v->type.id == CAT_T_VARBINARY ? 'X' : 'S');
    for (uint32_t i = 0; i < v->u.s.len && o + 3 < cap; i++)
      o += (size_t)snprintf(buf + o, cap - o, "%02x", v->u.s.p[i]);
    return o + (size_t)snprintf(buf + o, cap - o, "'");
  }
  if (v->type.id == CAT_T_DOUBLE || v->type.id == CAT_T_FLOAT)
    return (size_t)snprintf(buf, cap, "%a", v->u.d);
  return cat_text_format(v, buf, cap);
}

/* Bind params, step st to the end, rows as text into *out (malloc). Returns the last code. */
static int run_rows(exec_stmt *st, int np, const cat_value *params, char **out, exec_error *err) {
  size_t len = 0, cap = 0;
  free(*out);
  *out = NULL;
  tdb_cat(out, &len, &cap, "", 0);
  for (int i = 0; i < np; i++) assert_int_equal(exec_bind(st, i + 1, &params[i], err), EXEC_OK);
  int rc;
  while ((rc = exec_step(st, err)) == EXEC_ROW) {
    int n = exec_column_count(st);
    for (int i = 0; i < n; i++) {
      char buf[1024];
      size_t k = fmt_value(exec_column_value(st, i), buf, sizeof buf);
      if (k >= sizeof buf) k = sizeof buf - 1;
      if (i) tdb_cat(out, &len, &cap, "|", 1);
      tdb_cat(out, &len, &cap, buf, k);
    }
    tdb_cat(out, &len, &cap, "\n", 1);
  }
  return rc;
}

static void prepare(tdb *t, const char *sql, exec_stmt **st) {
  if (exec_prepare(t->s, sql, strlen(sql), st, NULL, &t->err) != EXEC_OK)
    fail_msg("%s: %s", sql, t->err.msg);
}

/* The same SQL freshly prepared (planned in full) with the same values. */
static int fresh(tdb *t, const char *sql, int np, const cat_value *params, char **out) {
  exec_stmt *st;
  prepare(t, sql, &st);
  int rc = run_rows(st, np, params, out, &t->err);
  exec_finalize(st);
  return rc;
}

static bool same_bytes(const uint8_t *a, size_t al, const uint8_t *b, size_t bl) {
  return al == bl && (al == 0 || memcmp(a, b, al) == 0);
}

/* Range r as "[start hex, end hex)" into buf (messages). */
static void range_text(const plan_key_range *r, char *buf, size_t cap) {
  size_t o = (size_t)snprintf(buf, cap, "%c", r->start_incl ? '[' : '(');
  for (size_t i = 0; i < r->start_len && o + 4 < cap; i++)
    o += (size_t)snprintf(buf + o, cap - o, "%02x", r->start[i]);
  if (o + 4 < cap) o += (size_t)snprintf(buf + o, cap - o, ", ");
  for (size_t i = 0; i < r->end_len && o + 4 < cap; i++)
    o += (size_t)snprintf(buf + o, cap - o, "%02x", r->end[i]);
  if (o + 2 < cap) snprintf(buf + o, cap - o, "%c", r->end_incl ? ']' : ')');
}

/* The kept statement's plan (just patched) equals plan_query_rebuild's for its values. */
static void check_patched_plan(tdb *t, exec_stmt *st, const char *ctx) {
  plan_arena A;
  plan_arena_init(&A);
  plan_query r;
  char msg[256];
  kv_backend be;
  int rc = plan_query_rebuild(kv_backend_local_init(&be, t->db), st->bound.select, st->q_params, st->n_params, &A, &r, msg,
                              sizeof msg);
  if (rc) fail_msg("%s: rebuild failed: %s", ctx, msg);
  const plan_query *p = &st->q;
  const plan_scan_ranges *a = &p->scan.ranges, *b = &r.scan.ranges;
  bool same = a->kind == b->kind && a->n_ranges == b->n_ranges && a->n_residual == b->n_residual &&
              a->n_key_terms == b->n_key_terms && a->prefix_cols == b->prefix_cols &&
              a->bound_cols == b->bound_cols && !p->scan.filter == !r.scan.filter &&
              !p->scan.residual == !r.scan.residual && p->scan.reverse == r.scan.reverse &&
              p->scan.kv_limit == r.scan.kv_limit && p->sort == r.sort && p->topn == r.topn &&
              p->limit == r.limit && p->offset == r.offset && p->stream_agg == r.stream_agg &&
              p->scan.n_families == r.scan.n_families && p->scan.index == r.scan.index &&
              p->scan.ts_min == r.scan.ts_min && p->scan.ts_max == r.scan.ts_max;
  for (uint32_t i = 0; same && i < a->n_ranges; i++) {
    const plan_key_range *x = &a->ranges[i], *y = &b->ranges[i];
    same = same_bytes(x->start, x->start_len, y->start, y->start_len) &&
           same_bytes(x->end, x->end_len, y->end, y->end_len) &&
           x->start_incl == y->start_incl && x->end_incl == y->end_incl;
  }
  for (int i = 0; same && i < p->scan.n_families; i++)
    same = p->scan.family_ids[i] == r.scan.family_ids[i];
  if (!same) {
    char pa[200] = "", pb[200] = "";
    if (a->n_ranges >= 1) range_text(&a->ranges[0], pa, sizeof pa);
    if (b->n_ranges >= 1) range_text(&b->ranges[0], pb, sizeof pb);
    fail_msg("%s: the patched plan differs from plan_query_rebuild's:\n patched kind %d %u "
             "range(s) %s\n rebuilt kind %d %u range(s) %s", ctx, a->kind, a->n_ranges, pa,
             b->kind, b->n_ranges, pb);
  }
  plan_query_free(&r);
  plan_arena_free(&A);
}

/* Run kept statement st (reset first) and a fresh prepare with the same values; codes and
** rows must agree, and a patched run's plan must equal a rebuilt one. Returns the code. */
static int compare_run(tdb *t, exec_stmt *st, const char *sql, int np, const cat_value *p,
                       const char *ctx) {
  char *kept = NULL, *want = NULL;
  exec_plan_stats before, after;
  exec_get_plan_stats(st, &before);
  exec_reset(st);
  int krc = run_rows(st, np, p, &kept, &t->err);
  char kmsg[EXEC_ERRMSG_MAX];
  snprintf(kmsg, sizeof kmsg, "%s", t->err.msg);
  exec_get_plan_stats(st, &after);
  if (after.patched > before.patched) check_patched_plan(t, st, ctx);
  int frc = fresh(t, sql, np, p, &want);
  if (krc != frc || (krc == EXEC_DONE && strcmp(kept, want) != 0))
    fail_msg("%s: %s\n kept (rc %d %s):\n%s\n fresh (rc %d %s):\n%s", ctx, sql, krc, kmsg, kept,
             frc, t->err.msg, want);
  free(kept);
  free(want);
  return krc;
}

/* ---- Random values ------------------------------------------------------------------------ */
static const char *const STRS[] = {"x", "yy", "", "a\0b", "\x01", "\xff\xfe", "ab", "ab  ",
                                   "abcd", "z\0", "7", "2016-03-01 05:00:00"};
static const size_t STR_LENS[] = {1, 2, 0, 3, 1, 2, 2, 4, 4, 2, 1, 19};
#define N_STRS (sizeof STRS / sizeof STRS[0])

static cat_value rand_str(uint64_t *rs, int id) {
  size_t i = (size_t)tu_below(rs, N_STRS);
  return cat_v_str(id, STRS[i], STR_LENS[i]);
}

/* A string of STRS that is valid UTF-8 (for text columns; index 5 is not). */
static size_t rand_text_index(uint64_t *rs) {
  size_t i = (size_t)tu_below(rs, N_STRS - 1);
  return i >= 5 ? i + 1 : i;
}

#define TS0 1456790400000000LL /* 2016-03-01 00:00:00 in microseconds */

/* A value for a parameter compared with a key column of kind k: 'i' INTEGER-like, 't'
** TINYINT, 's' VARCHAR/CHAR, 'b' VARBINARY, 'T' TIMESTAMP, 'd' DOUBLE, 'f' FLOAT. Mostly
** values that exist, sometimes awkward ones; NULL one time in 14. */
static cat_value rand_param(uint64_t *rs, char k) {
  if (tu_below(rs, 14) == 0) return cat_v_null(cat_type_of(0));
  bool odd = tu_below(rs, 5) == 0;
  switch (k) {
    case 'i':
    case 't':
      if (odd) {
        switch (tu_below(rs, 6)) {
          case 0: return cat_v_double(2.5);                       /* folds to nothing */
          case 1: return cat_v_double(3.0);                       /* integral double */
          case 2: return cat_v_str(CAT_T_VARCHAR, "4", 1);        /* text that converts */
          case 3: return cat_v_str(CAT_T_VARCHAR, "abc", 3);      /* text that does not */
          case 4: return cat_v_int(CAT_T_BIGINT, 5000000000LL);   /* beyond INTEGER */
          default: return cat_v_int(CAT_T_INTEGER, 300);          /* beyond TINYINT */
        }
      }
      return cat_v_int(CAT_T_INTEGER, (int64_t)tu_below(rs, k == 't' ? 5 : 12) - 1);
    case 's':
      if (odd) return cat_v_int(CAT_T_INTEGER, 7); /* a number for a text column */
      return rand_str(rs, tu_below(rs, 4) ? CAT_T_VARCHAR : CAT_T_CHAR);
    case 'b': return rand_str(rs, odd ? CAT_T_VARCHAR : CAT_T_VARBINARY);
    case 'T':
      if (odd)
        return tu_below(rs, 2) ? cat_v_str(CAT_T_VARCHAR, "2016-03-01 05:00:00", 19)
                               : cat_v_str(CAT_T_VARCHAR, "2016-03-01 05:00:00.5", 21);
      return cat_v_int(CAT_T_TIMESTAMP, TS0 + (int64_t)tu_below(rs, 8) * 3600000000LL);
    case 'd':
      if (odd) return tu_below(rs, 2) ? cat_v_double(-0.0) : cat_v_int(CAT_T_INTEGER, 2);
      return cat_v_double((double)tu_below(rs, 8) / 2.0 - 1.0);
    case 'D': {
      static const int64_t dv[] = {-250, -1, 0, 1, 150, 299, 12345, -99999};
      int64_t x = dv[tu_below(rs, 8)];
      if (odd) return tu_below(rs, 2) ? cat_v_double((double)x / 100.0 + 0.001) : cat_v_int(CAT_T_INTEGER, x / 100);
      cat_dec d = {x, 2};
      return cat_v_dec(d, 10, 2);
    }
    case 'B': {
      static const int64_t bv[] = {INT64_MAX, INT64_MIN, -1, 0, 1, 2, INT64_MAX - 1, INT64_MIN + 1};
      return cat_v_int(CAT_T_BIGINT, bv[tu_below(rs, 8)]);
    }
    default:
      if (odd) return cat_v_double(0.1); /* not a float: nothing */
      return cat_v_double((double)tu_below(rs, 6) / 4.0);
  }
}

/* ---- Tables and data ----------------------------------------------------------------------- */
static void create_tables(tdb *t, bool with_index) {
  q(t, "CREATE TABLE T (A INTEGER NOT NULL, B VARCHAR NOT NULL, C DOUBLE, D VARCHAR, "
       "CONSTRAINT PK PRIMARY KEY (A, B DESC))");
  q(t, "CREATE TABLE U (K1 TINYINT NULL, K2 CHAR(4) NOT NULL, K3 TIMESTAMP NOT NULL, "
       "K4 VARBINARY NOT NULL, V INTEGER, W VARCHAR, "
       "CONSTRAINT PK PRIMARY KEY (K1, K2 DESC, K3 DESC, K4))");
  q(t, "CREATE TABLE F (X DOUBLE NOT NULL, Y FLOAT NOT NULL, V INTEGER, "
       "CONSTRAINT PK PRIMARY KEY (X DESC, Y))");
  /* a series: the time window's bounds narrow the station's prefix (bounded templates) */
  q(t, "CREATE TABLE S (ST VARCHAR NOT NULL, TS TIMESTAMP NOT NULL, I INTEGER NOT NULL, "
       "V DOUBLE, CONSTRAINT PK PRIMARY KEY (ST, TS DESC, I))");
  q(t, "CREATE TABLE Z (K VARCHAR NOT NULL, D DECIMAL(10,2) NOT NULL, N BIGINT NOT NULL, "
       "V INTEGER, CONSTRAINT PK PRIMARY KEY (K, D, N DESC))");
  q(t, "CREATE TABLE Y (A BIGINT NOT NULL, N BIGINT NOT NULL, M BIGINT NOT NULL, V INTEGER, "
       "CONSTRAINT PK PRIMARY KEY (A, N, M))");
  q(t, "CREATE TABLE X2 (A BIGINT NOT NULL, N BIGINT NOT NULL, V INTEGER, "
       "CONSTRAINT PK PRIMARY KEY (A DESC, N DESC))");
  q(t, "UPSERT INTO Z VALUES ('x', -2.5, 1, 1), ('x', 0, 9223372036854775807, 2), "
       "('x', 1.5, -9223372036854775808, 3), ('x', 123.45, 0, 4), ('yy', -999.99, 2, 5), "
       "('x', 2.99, 1, 6)");
  q(t, "UPSERT INTO Y VALUES (9223372036854775807, 9223372036854775807, 1, 1), "
       "(9223372036854775807, 1, 2, 2), (-1, 9223372036854775807, 9223372036854775807, 3), "
       "(0, 0, 0, 4), (-9223372036854775808, -9223372036854775808, 5, 5)");
  q(t, "UPSERT INTO X2 VALUES (9223372036854775807, 9223372036854775807, 1), "
       "(-9223372036854775808, -9223372036854775808, 2), (-1, 0, 3), "
       "(0, -9223372036854775808, 4), (-9223372036854775808, 9223372036854775807, 5)");
  if (with_index) q(t, "CREATE INDEX IX ON T (D) INCLUDE (C)");
}

static void upsert(tdb *t, const char *sql, int np, const cat_value *p) {
  int rc = tdb_runp(t, sql, np, p);
  if (rc != EXEC_DONE) fail_msg("%s -> %d %s", sql, rc, t->err.msg);
}

/* A random row of table `which` (0 T, 1 U, 2 F, 3 S), or a new version of one. */
static void write_row(tdb *t, uint64_t *rs, int which) {
  cat_value p[6];
  if (which == 0) {
    p[0] = cat_v_int(CAT_T_INTEGER, (int64_t)tu_below(rs, 12) - 1);
    size_t b = rand_text_index(rs);
    p[1] = cat_v_str(CAT_T_VARCHAR, STRS[b], STR_LENS[b]);
    p[2] = tu_below(rs, 5) ? cat_v_double((double)tu_below(rs, 40) / 4.0) : cat_v_null(cat_type_of(0));
    size_t d = rand_text_index(rs);
    p[3] = tu_below(rs, 5) ? cat_v_str(CAT_T_VARCHAR, STRS[d], STR_LENS[d]) : cat_v_null(cat_type_of(0));
    upsert(t, "UPSERT INTO T VALUES (?, ?, ?, ?)", 4, p);
  } else if (which == 1) {
    p[0] = tu_below(rs, 6) ? cat_v_int(CAT_T_INTEGER, (int64_t)tu_below(rs, 5) - 1)
                           : cat_v_null(cat_type_of(0));
    size_t i = rand_text_index(rs);
    p[1] = cat_v_str(CAT_T_VARCHAR, STRS[i], STR_LENS[i] > 4 ? 4 : STR_LENS[i]);
    p[2] = cat_v_int(CAT_T_TIMESTAMP, TS0 + (int64_t)tu_below(rs, 8) * 3600000000LL);
    p[3] = rand_str(rs, CAT_T_VARBINARY);
    p[4] = cat_v_int(CAT_T_INTEGER, (int64_t)tu_below(rs, 1000));
    size_t w = rand_text_index(rs);
    p[5] = tu_below(rs, 4) ? cat_v_str(CAT_T_VARCHAR, STRS[w], STR_LENS[w]) : cat_v_null(cat_type_of(0));
    upsert(t, "UPSERT INTO U VALUES (?, ?, ?, ?, ?, ?)", 6, p);
  } else if (which == 3) {
    size_t i = rand_text_index(rs);
    p[0] = cat_v_str(CAT_T_VARCHAR, STRS[i], STR_LENS[i]);
    p[1] = cat_v_int(CAT_T_TIMESTAMP, TS0 + (int64_t)tu_below(rs, 8) * 3600000000LL);
    p[2] = cat_v_int(CAT_T_INTEGER, (int64_t)tu_below(rs, 12) - 1);
    p[3] = tu_below(rs, 5) ? cat_v_double((double)tu_below(rs, 40) / 4.0) : cat_v_null(cat_type_of(0));
    upsert(t, "UPSERT INTO S VALUES (?, ?, ?, ?)", 4, p);
  } else {
    p[0] = cat_v_double((double)tu_below(rs, 8) / 2.0 - 1.0);
    p[1] = cat_v_double((double)tu_below(rs, 6) / 4.0);
    p[2] = cat_v_int(CAT_T_INTEGER, (int64_t)tu_below(rs, 1000));
    upsert(t, "UPSERT INTO F VALUES (?, ?, ?)", 3, p);
  }
}

/* Change the data: new rows and versions, a delete (tombstones), now and then a flush. */
static void churn(tdb *t, uint64_t *rs) {
  for (int i = 0, n = 1 + (int)tu_below(rs, 4); i < n; i++) write_row(t, rs, (int)tu_below(rs, 4));
  cat_value p[2];
  switch (tu_below(rs, 6)) {
    case 0:
      p[0] = cat_v_int(CAT_T_INTEGER, (int64_t)tu_below(rs, 12) - 1);
      upsert(t, "DELETE FROM T WHERE A = ?", 1, p);
      break;
    case 1:
      p[0] = cat_v_int(CAT_T_INTEGER, 1000 + (int64_t)tu_below(rs, 1000));
      upsert(t, "DELETE FROM U WHERE V < ?", 1, p);
      break;
    case 2:
      p[0] = cat_v_double((double)tu_below(rs, 8) / 2.0 - 1.0);
      upsert(t, "DELETE FROM F WHERE X = ?", 1, p);
      break;
    case 3: assert_int_equal(kv_flush(t->db, 0), KV_OK); break;
    case 4:
      p[0] = cat_v_int(CAT_T_TIMESTAMP, TS0 + (int64_t)tu_below(rs, 8) * 3600000000LL);
      upsert(t, "DELETE FROM S WHERE TS = ?", 1, p);
      break;
    default: break;
  }
}

/* ---- Random rebinds against fresh prepares ----------------------------------------------- */
#define NQ 35
static const char *const QS[NQ] = {
    "SELECT A, B, C, D FROM T WHERE A = ? AND B = ?",
    "SELECT D, C FROM T WHERE B = ? AND ? = A",
    "SELECT A, B, C FROM T WHERE A = 3 AND B = ?",
    "SELECT * FROM U WHERE K3 = ? AND K1 = ? AND K4 = ? AND K2 = ?",
    "SELECT K1, V, W FROM U WHERE K1 = ? AND K2 = 'ab' AND K3 = ? AND K4 = ?",
    "SELECT X, Y, V FROM F WHERE Y = ? AND X = ?",
    "SELECT ?, C, B FROM T WHERE A = ? AND B = ?",
    "SELECT A, B FROM T WHERE A = ? AND B = ? LIMIT ?",
    "SELECT COUNT(*), MAX(C) FROM T WHERE B = ? AND A = ?",
    "SELECT A, C FROM T WHERE A = ? AND B = ? AND C > ?",
    "SELECT A, B, C FROM T WHERE D = ? ORDER BY A, B DESC",
    "SELECT V FROM U WHERE K1 = ? AND K2 = ? AND K3 = ? AND K4 = ? AND V > 10",
    /* key-prefix ranges (the template's RANGE form): forward, reverse, with LIMIT */
    "SELECT A, B, C FROM T WHERE A = ? ORDER BY B DESC",
    "SELECT B, D FROM T WHERE A = ? ORDER BY B LIMIT 3",
    "SELECT K3, K4, V FROM U WHERE K2 = ? AND K1 = ?",
    "SELECT X, Y, V FROM F WHERE X = ? ORDER BY Y DESC LIMIT 2",
    "SELECT K1, K2, K3, V FROM U WHERE K1 = ? AND K2 = 'ab' AND K3 = ?",
    /* a key prefix narrowed by the next key column (the bounded form): a time window on a
       DESC column (S.TS, U.K3), one side, reversed with LIMIT, the column on the right, >
       and <= (positions after the value, on columns that are not the key's last), ASC
       columns with an INTEGER's folding (I > 2.5 is I >= 3) and a FLOAT's; a text range
       column, two bounds on one side and a filter beside have no template */
    "SELECT ST, TS, I, V FROM S WHERE ST = ? AND TS >= ? AND TS < ?",
    "SELECT TS, I, V FROM S WHERE ST = ? AND TS > ? AND TS <= ?",
    "SELECT TS, V FROM S WHERE ST = ? AND TS >= ? ORDER BY TS DESC LIMIT 3",
    "SELECT COUNT(*), SUM(V) FROM S WHERE ? > TS AND ST = ?",
    "SELECT I, V FROM S WHERE ST = ? AND TS = ? AND I > ? AND I <= ?",
    "SELECT X, Y, V FROM F WHERE X = ? AND Y >= ? AND Y < ?",
    "SELECT K3, V FROM U WHERE K1 = ? AND K2 = 'ab' AND K3 >= ? AND K3 < ?",
    "SELECT A, B FROM T WHERE A = ? AND B >= ? AND B < ?",
    "SELECT TS, V FROM S WHERE ST = ? AND TS > ? AND TS >= ?",
    "SELECT TS, V FROM S WHERE ST = ? AND TS >= ? AND TS < ? AND V > 1",
    "SELECT K, D, N, V FROM Z WHERE K = ? AND D >= ? AND D < ?",
    "SELECT K, D, N, V FROM Z WHERE K = ? AND D > ? AND D <= ?",
    "SELECT K, D, N, V FROM Z WHERE K = ? AND D = ? AND N > ? AND N <= ?",
    "SELECT K, D, N, V FROM Z WHERE K = ? AND D = ? AND N >= ? AND N < ?",
    "SELECT A, N, M, V FROM Y WHERE A = ? AND N > ? AND N <= ?",
    "SELECT A, N, M, V FROM Y WHERE A = ? AND N >= ? AND N < ?",
    "SELECT A, N, V FROM X2 WHERE A = ? AND N >= ? AND N < ?",
    "SELECT A, N, V FROM X2 WHERE A = ? AND N > ? AND N <= ?"};
/* Parameter kinds per query (rand_param); 'n' a LIMIT count, 'x' any value. */
static const char *const KINDS[NQ] = {"is", "si", "s", "Ttbs", "tTb", "fd", "xis", "isn", "si",
                                      "isd", "s", "tsTb", "i", "i", "st", "d", "tT",
                                      "sTT", "sTT", "sT", "Ts", "sTii", "dff", "tTT", "iss",
                                      "sTT", "sTT", "sDD", "sDD", "sDBB", "sDBB", "BBB", "BBB", "BBB", "BBB"};
#define FIRST_BOUNDED 17 /* QS[17..]: the bounded form */
/* Queries whose plan has a template (when the values give one). */
static const bool TEMPLATED[NQ] = {1, 1, 1, 1, 1, 1, 1, 0, 1, 0, 0, 0, 1, 1, 1, 1, 1,
                                   1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1};

static void rebinds(const char *name, bool with_index) {
  uint64_t seed = tu_seed(name), rs = seed;
  tdb *t = tdb_open();
  create_tables(t, with_index);
  for (int i = 0; i < 320; i++) write_row(t, &rs, i % 4);
  assert_int_equal(kv_flush(t->db, 0), KV_OK);
  for (int i = 0; i < 80; i++) write_row(t, &rs, i % 4);
  exec_stmt *st[NQ];
  for (int i = 0; i < NQ; i++) prepare(t, QS[i], &st[i]);
  int rounds = (int)tu_scaled(3000, 300);
  for (int r = 0; r < rounds; r++) {
    int qi = (int)tu_below(&rs, NQ), np = (int)strlen(KINDS[qi]);
    cat_value p[8];
    for (int i = 0; i < np; i++) {
      char k = KINDS[qi][i];
      p[i] = k == 'n' ? cat_v_int(CAT_T_BIGINT, (int64_t)tu_below(&rs, 3))
             : k == 'x' ? cat_v_int(CAT_T_INTEGER, (int64_t)r)
                        : rand_param(&rs, k);
    }
    char ctx[96];
    snprintf(ctx, sizeof ctx, "seed %llu round %d query %d", (unsigned long long)seed, r, qi);
    compare_run(t, st[qi], QS[qi], np, p, ctx);
    if (tu_below(&rs, 3) == 0) churn(t, &rs);
  }
  uint64_t patched = 0, b_runs = 0, b_patched = 0;
  for (int i = 0; i < NQ; i++) {
    exec_plan_stats s;
    exec_get_plan_stats(st[i], &s);
    uint64_t runs = s.full + s.rebuilt + s.reused;
    if (!TEMPLATED[i]) {
      assert_int_equal(s.patched, 0);
    } else if (i >= FIRST_BOUNDED) { /* random windows are often empty or one value: a few
                                        percent patch, so these are counted together */
      b_runs += runs;
      b_patched += s.patched;
    } else if (runs > 20) {
      assert_true(s.patched > 0);
    }
    patched += s.patched;
    exec_finalize(st[i]);
  }
  if (b_runs > 100) assert_true(b_patched > 0);
  fprintf(stderr, "[%s] %d runs, %llu with a patched point key\n", name, rounds,
          (unsigned long long)patched);
  tdb_close(t);
}

static void rebinds_match_fresh(void **state) {
  (void)state;
  rebinds("rebinds_match_fresh", false);
}

static void rebinds_match_fresh_with_index(void **state) {
  (void)state;
  rebinds("rebinds_match_fresh_with_index", true);
}

/* ---- Directed cases ------------------------------------------------------------------------ */
/* NULL and a fraction give no point (the plan is made again), the next value patches again;
** the counters say which path each run took. */
static void template_leaves_and_returns(void **state) {
  (void)state;
  tdb *t = tdb_open();
  q(t, "CREATE TABLE K (A INTEGER NOT NULL, B VARCHAR NOT NULL, V INTEGER, "
       "CONSTRAINT PK PRIMARY KEY (A DESC, B))");
  q(t, "UPSERT INTO K VALUES (1, 'a', 10), (2, 'a', 20), (2, 'b\\', 30)");
  const char *sql = "SELECT V FROM K WHERE B = ? AND A = ?";
  exec_stmt *st;
  prepare(t, sql, &st);
  char *out = NULL;
  struct { cat_value b, a; const char *want; } runs[] = {
      {cat_v_str(CAT_T_VARCHAR, "a", 1), cat_v_int(CAT_T_INTEGER, 1), "10\n"},     /* full */
      {cat_v_str(CAT_T_VARCHAR, "a", 1), cat_v_int(CAT_T_INTEGER, 2), "20\n"},     /* patched */
      {cat_v_str(CAT_T_VARCHAR, "b\\", 2), cat_v_double(2.0), "30\n"},            /* patched */
      {cat_v_str(CAT_T_VARCHAR, "a", 1), cat_v_null(cat_type_of(0)), ""},          /* rebuilt */
      {cat_v_str(CAT_T_VARCHAR, "a", 1), cat_v_int(CAT_T_INTEGER, 2), "20\n"},     /* rebuilt */
      {cat_v_str(CAT_T_VARCHAR, "a", 1), cat_v_double(1.5), ""},                   /* rebuilt */
      {cat_v_str(CAT_T_VARCHAR, "a", 1), cat_v_int(CAT_T_INTEGER, 1), "10\n"},     /* rebuilt */
      {cat_v_str(CAT_T_VARCHAR, "a", 1), cat_v_int(CAT_T_INTEGER, 1), "10\n"},     /* reused */
      {cat_v_str(CAT_T_VARCHAR, "zz", 2), cat_v_int(CAT_T_INTEGER, 1), ""},        /* patched */
  };
  for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
    cat_value p[2] = {runs[i].b, runs[i].a};
    exec_reset(st);
    assert_int_equal(run_rows(st, 2, p, &out, &t->err), EXEC_DONE);
    assert_string_equal(out, runs[i].want);
  }
  exec_plan_stats s;
  exec_get_plan_stats(st, &s);
  assert_int_equal(s.full, 1);
  assert_int_equal(s.patched, 3);
  assert_int_equal(s.rebuilt, 4);
  assert_int_equal(s.reused, 1);
  free(out);
  exec_finalize(st);
  tdb_close(t);
}

/* A key longer than any before grows the plan's range; the longest key is still found. */
static void long_keys(void **state) {
  (void)state;
  tdb *t = tdb_open();
  q(t, "CREATE TABLE L (K VARCHAR NOT NULL PRIMARY KEY, V INTEGER)");
  char big[3000];
  memset(big, 'q', sizeof big);
  big[100] = 0; /* an escaped byte inside */
  cat_value w[2] = {cat_v_str(CAT_T_VARCHAR, big, sizeof big), cat_v_int(CAT_T_INTEGER, 7)};
  upsert(t, "UPSERT INTO L VALUES (?, ?)", 2, w);
  q(t, "UPSERT INTO L VALUES ('a', 1), ('b', 2)");
  const char *sql = "SELECT V FROM L WHERE K = ?";
  exec_stmt *st;
  prepare(t, sql, &st);
  size_t lens[] = {1, 1, 3000, 1, 2999, 3000};
  const char *heads[] = {"a", "b", big, "a", big, big};
  for (int i = 0; i < 6; i++) {
    cat_value p = cat_v_str(CAT_T_VARCHAR, heads[i], lens[i]);
    compare_run(t, st, sql, 1, &p, "long_keys");
  }
  exec_plan_stats s;
  exec_get_plan_stats(st, &s);
  assert_int_equal(s.patched, 5);
  exec_finalize(st);
  tdb_close(t);
}

/* A transaction's uncommitted writes (the scan overlay) are seen through a patched plan;
** after ROLLBACK they are gone. TTL expiry between runs of a patched plan. */
static void overlay_and_ttl(void **state) {
  (void)state;
  tdb *t = tdb_open();
  q(t, "CREATE TABLE E (A INTEGER NOT NULL, B VARCHAR NOT NULL, V VARCHAR, "
       "CONSTRAINT PK PRIMARY KEY (A, B DESC)) TTL = 10");
  q(t, "UPSERT INTO E VALUES (1, 'x', 'one'), (2, 'x', 'two'), (3, 'y', 'three')");
  assert_int_equal(kv_flush(t->db, 0), KV_OK);
  const char *sql = "SELECT A, B, V FROM E WHERE A = ? AND B = ?";
  exec_stmt *st;
  prepare(t, sql, &st);
  char *out = NULL;
  cat_value p[2] = {cat_v_int(CAT_T_INTEGER, 1), cat_v_str(CAT_T_VARCHAR, "x", 1)};
  compare_run(t, st, sql, 2, p, "before");
  q(t, "BEGIN");
  q(t, "UPSERT INTO E VALUES (2, 'x', 'TWO'), (4, 'z', 'four')");
  q(t, "DELETE FROM E WHERE A = 3");
  const int as[] = {2, 4, 3, 1};
  const char *bs[] = {"x", "z", "y", "x"};
  const char *want[] = {"2|S'78'|S'54574f'\n", "4|S'7a'|S'666f7572'\n", "", "1|S'78'|S'6f6e65'\n"};
  for (int i = 0; i < 4; i++) {
    p[0] = cat_v_int(CAT_T_INTEGER, as[i]);
    p[1] = cat_v_str(CAT_T_VARCHAR, bs[i], 1);
    compare_run(t, st, sql, 2, p, "in the transaction");
    exec_reset(st);
    assert_int_equal(run_rows(st, 2, p, &out, &t->err), EXEC_DONE);
    assert_string_equal(out, want[i]);
  }
  q(t, "ROLLBACK");
  p[0] = cat_v_int(CAT_T_INTEGER, 4);
  p[1] = cat_v_str(CAT_T_VARCHAR, "z", 1);
  exec_reset(st);
  assert_int_equal(run_rows(st, 2, p, &out, &t->err), EXEC_DONE);
  assert_string_equal(out, "");
  p[0] = cat_v_int(CAT_T_INTEGER, 3);
  p[1] = cat_v_str(CAT_T_VARCHAR, "y", 1);
  exec_reset(st);
  assert_int_equal(run_rows(st, 2, p, &out, &t->err), EXEC_DONE);
  assert_string_equal(out, "3|S'79'|S'7468726565'\n");
  kv_env_mem_set_time(t->env, 1500000000000LL + 6000);
  q(t, "UPSERT INTO E VALUES (2, 'x', 'later')");
  kv_env_mem_set_time(t->env, 1500000000000LL + 12000); /* the first rows are past TTL */
  for (int a = 1; a <= 3; a++) {
    p[0] = cat_v_int(CAT_T_INTEGER, a);
    p[1] = cat_v_str(CAT_T_VARCHAR, a == 3 ? "y" : "x", 1);
    compare_run(t, st, sql, 2, p, "after TTL");
    exec_reset(st);
    assert_int_equal(run_rows(st, 2, p, &out, &t->err), EXEC_DONE);
    assert_string_equal(out, a == 2 ? "2|S'78'|S'6c61746572'\n" : "");
  }
  exec_plan_stats s;
  exec_get_plan_stats(st, &s);
  assert_true(s.patched >= 6);
  free(out);
  exec_finalize(st);
  tdb_close(t);
}

/* DDL between runs: the table made again with other key types and order; the kept
** statement binds again and encodes keys for the new columns. */
static void ddl_changes_the_key(void **state) {
  (void)state;
  tdb *t = tdb_open();
  q(t, "CREATE TABLE T (A INTEGER NOT NULL, B VARCHAR NOT NULL, V VARCHAR, "
       "CONSTRAINT PK PRIMARY KEY (A, B))");
  q(t, "UPSERT INTO T VALUES (1, 'p', 'int-first'), (2, 'q', 'int-second')");
  const char *sql = "SELECT V FROM T WHERE A = ? AND B = ?";
  exec_stmt *st;
  prepare(t, sql, &st);
  char *out = NULL;
  cat_value p[2] = {cat_v_str(CAT_T_VARCHAR, "1", 1), cat_v_str(CAT_T_VARCHAR, "p", 1)};
  for (int i = 0; i < 2; i++) {
    p[0] = cat_v_str(CAT_T_VARCHAR, i ? "2" : "1", 1);
    p[1] = cat_v_str(CAT_T_VARCHAR, i ? "q" : "p", 1);
    compare_run(t, st, sql, 2, p, "first table");
  }
  q(t, "DROP TABLE T");
  exec_reset(st);
  assert_int_equal(run_rows(st, 2, p, &out, &t->err), EXEC_ERROR);
  q(t, "CREATE TABLE T (A VARCHAR NOT NULL, B BIGINT NOT NULL, V VARCHAR, "
       "CONSTRAINT PK PRIMARY KEY (B DESC, A DESC))");
  q(t, "UPSERT INTO T VALUES ('1', 5, 'text-first'), ('2', 6, 'text-second')");
  const char *as[] = {"1", "2", "1", "3"};
  const int64_t bs[] = {5, 6, 6, 5};
  const char *want[] = {"S'746578742d6669727374'\n", "S'746578742d7365636f6e64'\n", "", ""};
  for (int i = 0; i < 4; i++) {
    p[0] = cat_v_str(CAT_T_VARCHAR, as[i], 1);
    p[1] = cat_v_int(CAT_T_INTEGER, bs[i]);
    compare_run(t, st, sql, 2, p, "second table");
    exec_reset(st);
    assert_int_equal(run_rows(st, 2, p, &out, &t->err), EXEC_DONE);
    assert_string_equal(out, want[i]);
  }
  exec_plan_stats s;
  exec_get_plan_stats(st, &s);
  assert_int_equal(s.full, 2);
  assert_true(s.patched >= 4);
  free(out);
  exec_finalize(st);
  tdb_close(t);
}

/* The bounded template with prefixes of 1 and 3,000 bytes in turn (the range's buffers grow
** and are reused), on a DESC BIGINT column, each run against a fresh prepare. */
static void bounded_long(void **state) {
  (void)state;
  tdb *t = tdb_open();
  q(t, "CREATE TABLE LB (K VARCHAR NOT NULL, N BIGINT NOT NULL, V INTEGER, "
       "CONSTRAINT PK PRIMARY KEY (K, N DESC))");
  static char big[3000];
  memset(big, 'q', sizeof big);
  big[100] = 0;
  for (int i = 0; i < 5; i++) {
    cat_value w[3] = {cat_v_str(CAT_T_VARCHAR, big, sizeof big), cat_v_int(CAT_T_BIGINT, i),
                      cat_v_int(CAT_T_INTEGER, i)};
    upsert(t, "UPSERT INTO LB VALUES (?, ?, ?)", 3, w);
  }
  q(t, "UPSERT INTO LB VALUES ('a', 1, 1), ('a', 2, 2), ('b', 3, 3)");
  const char *sqls[] = {"SELECT N, V FROM LB WHERE K = ? AND N >= ? AND N < ?",
                        "SELECT N, V FROM LB WHERE K = ? AND N > ?",
                        "SELECT N, V FROM LB WHERE K = ? AND N <= ?"};
  for (int qn = 0; qn < 3; qn++) {
    exec_stmt *st;
    prepare(t, sqls[qn], &st);
    size_t lens[] = {1, 1, 3000, 1, 2999, 3000, 1, 3000};
    const char *heads[] = {"a", "b", big, "a", big, big, "a", big};
    for (int i = 0; i < 8; i++) {
      cat_value p[3] = {cat_v_str(CAT_T_VARCHAR, heads[i], lens[i]),
                        cat_v_int(CAT_T_BIGINT, i % 3), cat_v_int(CAT_T_BIGINT, 2 + i % 3)};
      if (qn == 2) p[1] = p[2];
      compare_run(t, st, sqls[qn], qn == 0 ? 3 : 2, p, "bounded_long");
    }
    exec_plan_stats s;
    exec_get_plan_stats(st, &s);
    assert_true(s.patched > 0); /* the long prefixes went through the bounded template */
    exec_finalize(st);
  }
  tdb_close(t);
}

/* A ROW_TIMESTAMP key column's bounds also set the scan's time range (planner/time_range.c),
** which a template would keep from the first values (none when the first bound is before
** 1970): the rebind computes it again, equal to a fresh plan's at every run. */
static void row_timestamp_bounds(void **state) {
  (void)state;
  tdb *t = tdb_open();
  q(t, "CREATE TABLE RT (K INTEGER NOT NULL, TS TIMESTAMP NOT NULL, V VARCHAR "
       "CONSTRAINT PK PRIMARY KEY (K, TS ROW_TIMESTAMP))");
  q(t, "UPSERT INTO RT VALUES (1, TIMESTAMP '2016-03-01 00:00:00', 'a')");
  q(t, "UPSERT INTO RT VALUES (1, TIMESTAMP '2016-03-02 00:00:00', 'b')");
  const char *sqls[] = {"SELECT V FROM RT WHERE K = ? AND TS >= ?",
                        "SELECT V FROM RT WHERE K = ? AND TS = ?",
                        "SELECT V FROM RT WHERE K = ? AND TS >= ? AND TS < ?"};
  /* the kept plan is patched for each set of values, its time range computed again: before
     1970 (none), 2016, a day later, before 1970 again */
  static const int64_t ts[] = {-1000000000LL, TS0, TS0 + 86400000000LL, -2000000000LL};
  for (int qn = 0; qn < 3; qn++) {
    exec_stmt *st;
    prepare(t, sqls[qn], &st);
    for (int k = 0; k < 4; k++) {
      cat_value p[3] = {cat_v_int(CAT_T_INTEGER, 1), cat_v_int(CAT_T_TIMESTAMP, ts[k]),
                        cat_v_int(CAT_T_TIMESTAMP, ts[k] + 2 * 86400000000LL)};
      compare_run(t, st, sqls[qn], qn == 2 ? 3 : 2, p, "row timestamp");
      exec_stmt *f;
      prepare(t, sqls[qn], &f);
      char *out = NULL;
      assert_int_equal(run_rows(f, qn == 2 ? 3 : 2, p, &out, &t->err), EXEC_DONE);
      assert_int_equal(st->q.scan.ts_min, f->q.scan.ts_min); /* the kept plan's time range */
      assert_int_equal(st->q.scan.ts_max, f->q.scan.ts_max);
      if (k == 2) assert_true(st->q.scan.ts_min > 0); /* 2016: a range, not the first's none */
      free(out);
      exec_finalize(f);
    }
    exec_plan_stats s;
    exec_get_plan_stats(st, &s);
    assert_true(s.patched > 0); /* the template was used */
    exec_finalize(st);
  }
  tdb_close(t);
}

/* A range large enough to be cut into parallel chunks: the kept plan's chunks hold key ranges
** cut from the first values' range at the store's split points, so the template must not
** patch the key under them (other stations' rows were counted): it plans again (a light
** rebuild has no estimates, so later runs are serial and patched). Every run against a fresh
** prepare, on a plain table and on one with a ROW_TIMESTAMP column, chunks forced (2
** threads, any estimate). */
static void parallel_chunks(void **state) {
  (void)state;
  tdb *t = tdb_open();
  q(t, "CREATE TABLE PC (ST VARCHAR NOT NULL, TS BIGINT NOT NULL, V INTEGER, "
       "CONSTRAINT PK PRIMARY KEY (ST, TS)) BLOCKSIZE=256");
  q(t, "CREATE TABLE PR (ST VARCHAR NOT NULL, TS BIGINT NOT NULL, V INTEGER, "
       "CONSTRAINT PK PRIMARY KEY (ST, TS ROW_TIMESTAMP)) BLOCKSIZE=256");
  static const char *const sts[] = {"b", "dd", "a", "c"};
  for (int tb = 0; tb < 2; tb++)
    for (int s = 0; s < 4; s++)
      for (int i = 0; i < 400; i++) {
        cat_value w[3] = {cat_v_str(CAT_T_VARCHAR, sts[s], strlen(sts[s])),
                          cat_v_int(CAT_T_BIGINT, 1000 + i), cat_v_int(CAT_T_INTEGER, s + 1)};
        upsert(t, tb ? "UPSERT INTO PR VALUES (?, ?, ?)" : "UPSERT INTO PC VALUES (?, ?, ?)",
               3, w);
      }
  assert_int_equal(kv_flush(t->db, 0), KV_OK);
  assert_int_equal(exec_set_parallel(t->s, 2, 1, &t->err), EXEC_OK);
  const char *sqls[] = {"SELECT COUNT(*), SUM(V + 0) FROM PC WHERE ST = ? AND TS >= ? AND TS < ?",
                        "SELECT COUNT(*), SUM(V + 0) FROM PR WHERE ST = ? AND TS >= ? AND TS < ?",
                        "SELECT COUNT(*), SUM(V + 0) FROM PC WHERE ST = ?"};
  for (int qn = 0; qn < 3; qn++) {
    exec_stmt *st;
    prepare(t, sqls[qn], &st);
    for (int k = 0; k < 8; k++) {
      const char *h = sts[k % 4];
      cat_value p[3] = {cat_v_str(CAT_T_VARCHAR, h, strlen(h)),
                        cat_v_int(CAT_T_BIGINT, 1000 + 50 * (k % 3)),
                        cat_v_int(CAT_T_BIGINT, 1400 - 70 * (k % 2))};
      compare_run(t, st, sqls[qn], qn == 2 ? 1 : 3, p, "parallel chunks");
      if (k == 0) assert_non_null(st->q.par); /* the first plan (estimated) was cut */
    }
    exec_finalize(st);
  }
  tdb_close(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(rebinds_match_fresh),
      cmocka_unit_test(rebinds_match_fresh_with_index),
      cmocka_unit_test(template_leaves_and_returns),
      cmocka_unit_test(long_keys),
      cmocka_unit_test(overlay_and_ttl),
      cmocka_unit_test(ddl_changes_the_key),
      cmocka_unit_test(bounded_long),
      cmocka_unit_test(row_timestamp_bounds),
      cmocka_unit_test(parallel_chunks),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
