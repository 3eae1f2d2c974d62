/*
** tests/planner/test_filter.c: the pushed-down typed filter (planner/filter.h). Rows are
** built by hand as kv_rows (key with catalog/keycodec.h, cells with catalog/valcodec.h, an
** older version of each cell after the newest), predicates as plan_expr trees. The main
** test is randomized and seeded: for random rows (negatives, NULLs, NaN, infinities, -0.0,
** strings with 0x00 and multi-byte characters, DESC and nullable key columns) and random
** predicates (comparisons with coercion, IN with NULLs, BETWEEN, IS NULL, LIKE with ESCAPE,
** NOT/AND/OR), a pushed filter must pass a row exactly when a direct three-valued evaluation
** of the predicate on the values (cat_value_compare, a reference LIKE) is TRUE. Fixed tests
** cover what is and is not pushed, folding, the newest version, corrupt cells and EXPLAIN.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/keycodec.h"
#include "catalog/valcodec.h"
#include "catalog/value.h"
#include "exec/engine.h"
#include "planner/filter.h"
#include "sql/ast.h"
#include "testutil.h"

/* ---- Schema: key (K0 INTEGER, K1 DOUBLE DESC NULL, K2 VARCHAR DESC NULL), then cells -- */
enum { K0, K1, K2, C_BIG, C_DBL, C_STR, C_DEC, C_FLT, C_CHR, C_DATE, C_BOOL, NCOL };
static const char *const NAMES[NCOL] = {"K0", "K1", "K2", "BIG", "DBL", "STR", "DEC", "FLT",
                                        "CHR", "DT", "B"};
static cat_key_col KEY[3];
static plan_filter_col COLS[NCOL];

static void setup_schema(void) {
  KEY[0] = (cat_key_col){cat_type_of(CAT_T_INTEGER), false, false};
  KEY[1] = (cat_key_col){cat_type_of(CAT_T_DOUBLE), true, true};
  KEY[2] = (cat_key_col){cat_type_of(CAT_T_VARCHAR), true, true};
  static const int ids[NCOL] = {CAT_T_INTEGER, CAT_T_DOUBLE, CAT_T_VARCHAR, CAT_T_BIGINT,
                                CAT_T_DOUBLE, CAT_T_VARCHAR, CAT_T_DECIMAL, CAT_T_FLOAT,
                                CAT_T_CHAR, CAT_T_DATE, CAT_T_BOOLEAN};
  for (int i = 0; i < NCOL; i++) {
    memset(&COLS[i], 0, sizeof COLS[i]);
    COLS[i].type = cat_type_of(ids[i]);
    COLS[i].key_pos = i < 3 ? i : -1;
    if (i >= 3) {
      COLS[i].family_id = i < 6 ? 1 : 2;
      /* two-byte qualifier for DEC, as cat_column_qualifier makes for ids >= 128 */
      if (i == C_DEC) { COLS[i].qual[0] = 0x81; COLS[i].qual[1] = 0x02; COLS[i].qual_len = 2; }
      else { COLS[i].qual[0] = (uint8_t)i; COLS[i].qual_len = 1; }
    }
  }
  COLS[C_DEC].type.precision = 6;
  COLS[C_DEC].type.scale = 2;
  COLS[C_CHR].type.length = 4;
}

static plan_filter_schema schema(void) {
  plan_filter_schema s = {KEY, 3, COLS, NCOL, 0};
  return s;
}

/* ---- Rows ----------------------------------------------------------------------------- */
typedef struct trow {
  cat_value v[NCOL];     /* the values (strings point into sbuf) */
  uint8_t sbuf[NCOL][16]; /* string storage */
  uint8_t key[256];      /* encoded key */
  size_t key_len;        /* its length */
  kv_cell_view cells[2 * NCOL]; /* cells, newest version first */
  uint8_t vals[2 * NCOL][32];   /* their bytes */
  uint32_t n_cells;      /* count */
  kv_row row;            /* the assembled row */
} trow;

static void add_cell(trow *r, int c, const cat_value *v) {
  size_t len;
  cat_error err;
  kv_cell_view *cv = &r->cells[r->n_cells];
  assert_int_equal(cat_vc_encode(v, r->vals[r->n_cells], 32, &len, &err), CAT_OK);
  cv->family_id = COLS[c].family_id;
  cv->qual = COLS[c].qual;
  cv->qual_len = COLS[c].qual_len;
  cv->ts = 1000 - r->n_cells;
  cv->value = r->vals[r->n_cells];
  cv->value_len = (uint32_t)len;
  r->n_cells++;
}

/* Encode r->v into the key and cells; decoy: an older version with value `old` follows. */
static void build_row(trow *r, const cat_value *old) {
  cat_error err;
  assert_int_equal(cat_key_encode(KEY, 3, r->v, r->key, sizeof r->key, &r->key_len, &err), CAT_OK);
  r->n_cells = 0;
  /* cells sorted by family, then qualifier: family 1 (BIG, DBL, STR), family 2 (others by
     qualifier byte: 7..10 sort before 0x81) */
  static const int order[] = {C_BIG, C_DBL, C_STR, C_FLT, C_CHR, C_DATE, C_BOOL, C_DEC};
  for (size_t k = 0; k < sizeof order / sizeof order[0]; k++) {
    int c = order[k];
    if (r->v[c].is_null) continue;
    add_cell(r, c, &r->v[c]);
    if (old && !old[c].is_null) add_cell(r, c, &old[c]);
  }
  r->row.key = r->key;
  r->row.key_len = (uint32_t)r->key_len;
  r->row.cells = r->cells;
  r->row.n_cells = r->n_cells;
}

/* ---- Random values -------------------------------------------------------------------- */
static uint64_t rng;

static const char *const STRS[] = {"", "a", "ab", "abc", "b", "a\0b", "a\0", "\0", "%x", "_",
                                   "\xc3\xa9t\xc3\xa9", "zz", "ab ", "a!b", "A"};
#define NSTRS (sizeof STRS / sizeof STRS[0])
static const size_t STRLEN[NSTRS] = {0, 1, 2, 3, 1, 3, 2, 1, 2, 1, 6, 2, 3, 3, 1};

static double rand_double(void) {
  static const double sp[] = {0.0, -0.0, 1.5, -1.5, 2.0, -2.0, 1e300, -1e300, INFINITY,
                              -INFINITY, NAN, 0.1, DBL_MAX, -DBL_MAX, 3.0, 1e-300};
  return sp[tu_below(&rng, sizeof sp / sizeof sp[0])];
}

static cat_value str_val(int id, uint8_t *buf, int k) {
  memcpy(buf, STRS[k], STRLEN[k]);
  size_t n = STRLEN[k];
  if (id == CAT_T_CHAR) n = cat_char_trim(buf, n);
  return cat_v_str(id, buf, n);
}

/* A random value of column c's type (NULL sometimes when allowed). */
static cat_value rand_value(int c, uint8_t *sbuf, bool allow_null) {
  int id = COLS[c].type.id;
  if (allow_null && tu_below(&rng, 5) == 0) return cat_v_null(COLS[c].type);
  cat_value v;
  switch (id) {
    case CAT_T_INTEGER: v = cat_v_int(id, (int64_t)tu_below(&rng, 11) - 5); break;
    case CAT_T_BIGINT:
      v = cat_v_int(id, tu_below(&rng, 8) == 0 ? (tu_below(&rng, 2) ? INT64_MAX : INT64_MIN)
                                              : (int64_t)tu_below(&rng, 11) - 5);
      break;
    case CAT_T_DOUBLE: v = cat_v_double(rand_double()); break;
    case CAT_T_FLOAT: {
      static const float fs[] = {0.0f, -1.5f, 1.5f, 0.1f, 3.0f, -3.0f, FLT_MAX, INFINITY};
      v = cat_v_float(fs[tu_below(&rng, 8)]);
      break;
    }
    case CAT_T_DECIMAL: {
      cat_dec d = {(cat_i128)((int64_t)tu_below(&rng, 2001) - 1000), 2};
      v = cat_v_dec(d, 6, 2);
      break;
    }
    case CAT_T_DATE: v = cat_v_int(id, (int64_t)tu_below(&rng, 5) - 2); break;
    case CAT_T_BOOLEAN: v = cat_v_bool(tu_below(&rng, 2)); break;
    default: v = str_val(id, sbuf, (int)tu_below(&rng, NSTRS)); break;
  }
  v.type = COLS[c].type;
  return v;
}

static void rand_row(trow *r) {
  for (int c = 0; c < NCOL; c++) r->v[c] = rand_value(c, r->sbuf[c], c != K0);
}

/* ---- Random predicates ---------------------------------------------------------------- */
#define POOL 4096
static plan_expr pool[POOL];
static plan_expr *argpool[3 * POOL];
static uint8_t strpool[POOL][16];
static int np, nap, nsp;

static plan_expr *node(int kind, int n) {
  assert_true(np < POOL && nap + n <= 3 * POOL);
  plan_expr *e = &pool[np++];
  memset(e, 0, sizeof *e);
  e->kind = (uint8_t)kind;
  e->type = cat_type_of(CAT_T_BOOLEAN);
  e->n_args = (uint32_t)n;
  e->args = &argpool[nap];
  nap += n;
  return e;
}
static plan_expr *col(int slot) {
  plan_expr *e = node(PX_COLUMN, 0);
  e->column = slot;
  e->type = COLS[slot].type;
  return e;
}
static plan_expr *cval(cat_value v) {
  plan_expr *e = node(PX_CONST, 0);
  e->value = v;
  e->type = v.type;
  return e;
}
static plan_expr *bin(int op, plan_expr *a, plan_expr *b) {
  plan_expr *e = node(PX_BINARY, 2);
  e->op = (uint8_t)op;
  e->args[0] = a;
  e->args[1] = b;
  return e;
}

/* A constant comparable with column c: often of another type (coercion). */
static cat_value rand_const(int c) {
  int id = COLS[c].type.id;
  if (tu_below(&rng, 12) == 0) return cat_v_null(cat_type_of(CAT_T_INTEGER));
  switch (id) {
    case CAT_T_INTEGER: case CAT_T_BIGINT: case CAT_T_DECIMAL: {
      int k = (int)tu_below(&rng, 4);
      if (k == 0) return cat_v_int(CAT_T_INTEGER, (int64_t)tu_below(&rng, 13) - 6);
      if (k == 1) {
        cat_dec d = {(cat_i128)((int64_t)tu_below(&rng, 2001) - 1000), (int32_t)tu_below(&rng, 4)};
        return cat_v_dec(d, 0, 0);
      }
      if (k == 2 && id != CAT_T_DECIMAL) return cat_v_double(((double)tu_below(&rng, 41) - 20) / 4);
      if (id == CAT_T_BIGINT && tu_below(&rng, 2))
        return cat_v_int(CAT_T_BIGINT, tu_below(&rng, 2) ? INT64_MAX : INT64_MIN);
      return cat_v_int(CAT_T_BIGINT, (int64_t)tu_below(&rng, 7) - 3);
    }
    case CAT_T_DOUBLE: case CAT_T_FLOAT:
      if (tu_below(&rng, 4) == 0) return cat_v_int(CAT_T_INTEGER, (int64_t)tu_below(&rng, 7) - 3);
      return cat_v_double(rand_double());
    case CAT_T_DATE:
      if (tu_below(&rng, 2))
        return cat_v_int(CAT_T_TIMESTAMP, ((int64_t)tu_below(&rng, 9) - 4) * (CAT_US_PER_DAY / 2));
      return cat_v_int(CAT_T_DATE, (int64_t)tu_below(&rng, 5) - 2);
    case CAT_T_BOOLEAN: return cat_v_bool(tu_below(&rng, 2));
    default: {
      uint8_t *b = strpool[nsp++ % POOL];
      return str_val(tu_below(&rng, 3) ? CAT_T_VARCHAR : CAT_T_CHAR, b, (int)tu_below(&rng, NSTRS));
    }
  }
}

static const char *const PATS[] = {"a%", "%b", "a_", "_", "%", "a!%%", "ab%", "a%b", "%\0%",
                                   "\xc3\xa9_\xc3\xa9", "_t%", "", "a", "!_", "%!!%", "a!!b"};
#define NPATS (sizeof PATS / sizeof PATS[0])
static const size_t PATLEN[NPATS] = {2, 2, 2, 1, 1, 4, 3, 3, 3, 5, 3, 0, 1, 2, 4, 4};

static plan_expr *rand_pred(int depth) {
  int k = (int)tu_below(&rng, depth > 0 ? 9 : 6);
  int c = (int)tu_below(&rng, NCOL);
  int id = COLS[c].type.id;
  bool str = cat_type_is_string(id);
  switch (k) {
    case 0: case 1: {
      static const int ops[] = {SQL_OP_EQ, SQL_OP_NE, SQL_OP_LT, SQL_OP_LE, SQL_OP_GT, SQL_OP_GE};
      int op = ops[tu_below(&rng, 6)];
      return tu_below(&rng, 2) ? bin(op, col(c), cval(rand_const(c)))
                               : bin(op, cval(rand_const(c)), col(c));
    }
    case 2: {
      int n = 1 + (int)tu_below(&rng, 4);
      plan_expr *e = node(PX_IN, n + 1);
      e->negated = tu_below(&rng, 3) == 0;
      e->args[0] = col(c);
      for (int i = 0; i < n; i++) e->args[i + 1] = cval(rand_const(c));
      return e;
    }
    case 3: {
      plan_expr *e = node(PX_BETWEEN, 3);
      e->negated = tu_below(&rng, 3) == 0;
      e->args[0] = col(c);
      e->args[1] = cval(rand_const(c));
      e->args[2] = cval(rand_const(c));
      return e;
    }
    case 4: {
      plan_expr *e = node(PX_ISNULL, 1);
      e->negated = tu_below(&rng, 2);
      e->args[0] = col(c);
      return e;
    }
    case 5: {
      if (!str) c = (int)(tu_below(&rng, 2) ? K2 : (tu_below(&rng, 2) ? C_STR : C_CHR));
      int p = (int)tu_below(&rng, NPATS);
      bool esc = tu_below(&rng, 2);
      plan_expr *e = node(PX_LIKE, esc ? 3 : 2);
      e->negated = tu_below(&rng, 4) == 0;
      e->args[0] = col(c);
      e->args[1] = cval(cat_v_str(CAT_T_VARCHAR, PATS[p], PATLEN[p]));
      if (esc) e->args[2] = cval(cat_v_str(CAT_T_VARCHAR, "!", 1));
      return e;
    }
    case 6: {
      plan_expr *e = node(PX_UNARY, 1);
      e->op = SQL_OP_NOT;
      e->args[0] = rand_pred(depth - 1);
      return e;
    }
    default:
      return bin(k == 7 ? SQL_OP_AND : SQL_OP_OR, rand_pred(depth - 1), rand_pred(depth - 1));
  }
}

/* ---- Reference evaluation (three-valued: 0 F, 1 T, 2 U) ------------------------------- */
static size_t ref_charlen(const uint8_t *s, size_t n) {
  size_t L = s[0] < 0x80 ? 1 : s[0] >= 0xF0 ? 4 : s[0] >= 0xE0 ? 3 : s[0] >= 0xC0 ? 2 : 1;
  return L <= n ? L : 1;
}
static bool ref_like(const uint8_t *s, size_t sn, const uint8_t *p, size_t pn, int esc) {
  if (pn == 0) return sn == 0;
  if (esc >= 0 && p[0] == esc) {
    if (pn < 2) return false;
    return sn >= 1 && s[0] == p[1] && ref_like(s + 1, sn - 1, p + 2, pn - 2, esc);
  }
  if (p[0] == '%') {
    for (size_t i = 0;; i += ref_charlen(s + i, sn - i)) {
      if (ref_like(s + i, sn - i, p + 1, pn - 1, esc)) return true;
      if (i >= sn) return false;
    }
  }
  if (p[0] == '_') {
    if (sn == 0) return false;
    size_t L = ref_charlen(s, sn);
    return ref_like(s + L, sn - L, p + 1, pn - 1, esc);
  }
  return sn >= 1 && s[0] == p[0] && ref_like(s + 1, sn - 1, p + 1, pn - 1, esc);
}

static int not3(int t) { return t == 2 ? 2 : !t; }

static int ref_cmp(const cat_value *a, int op, const cat_value *b) {
  if (a->is_null || b->is_null) return 2;
  int c;
  cat_error err;
  assert_int_equal(cat_value_compare(a, b, &c, &err), CAT_OK);
  switch (op) {
    case SQL_OP_EQ: return c == 0;
    case SQL_OP_NE: return c != 0;
    case SQL_OP_LT: return c < 0;
    case SQL_OP_LE: return c <= 0;
    case SQL_OP_GT: return c > 0;
    default: return c >= 0;
  }
}

static int ref_eval(const plan_expr *e, const cat_value *row) {
  switch (e->kind) {
    case PX_UNARY: return not3(ref_eval(e->args[0], row));
    case PX_BINARY: {
      if (e->op == SQL_OP_AND || e->op == SQL_OP_OR) {
        int a = ref_eval(e->args[0], row), b = ref_eval(e->args[1], row);
        if (e->op == SQL_OP_AND) return (a == 0 || b == 0) ? 0 : (a == 1 && b == 1) ? 1 : 2;
        return (a == 1 || b == 1) ? 1 : (a == 0 && b == 0) ? 0 : 2;
      }
      const plan_expr *l = e->args[0], *r = e->args[1];
      const cat_value *lv = l->kind == PX_COLUMN ? &row[l->column] : &l->value;
      const cat_value *rv = r->kind == PX_COLUMN ? &row[r->column] : &r->value;
      return ref_cmp(lv, e->op, rv);
    }
    case PX_IN: {
      int t = 0;
      for (uint32_t i = 1; i < e->n_args && t != 1; i++) {
        int x = ref_cmp(&row[e->args[0]->column], SQL_OP_EQ, &e->args[i]->value);
        if (x == 1) t = 1;
        else if (x == 2) t = 2;
      }
      return e->negated ? not3(t) : t;
    }
    case PX_BETWEEN: {
      const cat_value *v = &row[e->args[0]->column];
      int a = ref_cmp(v, SQL_OP_GE, &e->args[1]->value), b = ref_cmp(v, SQL_OP_LE, &e->args[2]->value);
      int t = (a == 0 || b == 0) ? 0 : (a == 1 && b == 1) ? 1 : 2;
      return e->negated ? not3(t) : t;
    }
    case PX_ISNULL: return row[e->args[0]->column].is_null != e->negated;
    case PX_LIKE: {
      const cat_value *v = &row[e->args[0]->column];
      if (v->is_null) return 2;
      const cat_value *p = &e->args[1]->value;
      bool m = ref_like(v->u.s.p, v->u.s.len, p->u.s.p, p->u.s.len, e->n_args > 2 ? '!' : -1);
      return m != e->negated;
    }
    default: fail(); return 2;
  }
}

/* Does the pattern end in a lone escape (the executor's error; never pushed)? */
static bool has_dangling_escape(const plan_expr *e) {
  if (e->kind == PX_LIKE && e->n_args > 2) {
    const cat_value *p = &e->args[1]->value;
    size_t i = 0;
    while (i < p->u.s.len) {
      if (p->u.s.p[i] == '!') {
        if (i + 1 >= p->u.s.len) return true;
        i += 2;
      } else {
        i++;
      }
    }
  }
  for (uint32_t i = 0; i < e->n_args; i++)
    if (e->args[i] && has_dangling_escape(e->args[i])) return true;
  return false;
}

static void t_random_agreement(void **st) {
  (void)st;
  setup_schema();
  uint64_t seed = tu_seed("filter_random");
  rng = seed;
  uint64_t rounds = tu_scaled(4000, 200), pushed = 0, checks = 0, passed = 0;
  static trow rows[24];
  plan_filter_schema s = schema();
  for (uint64_t round = 0; round < rounds; round++) {
    np = nap = 0;
    for (int i = 0; i < 24; i++) {
      trow old;
      rand_row(&rows[i]);
      rand_row(&old);
      build_row(&rows[i], tu_below(&rng, 2) ? old.v : NULL);
    }
    const plan_expr *term = rand_pred(3);
    plan_filter *f = NULL;
    const plan_expr **np_terms = NULL;
    uint32_t n_np = 0;
    char msg[128];
    assert_int_equal(plan_filter_build_schema(&s, &term, 1, NULL, 0, &f, &np_terms, &n_np, msg,
                                              sizeof msg), EXEC_OK);
    assert_true((f != NULL) != (n_np == 1));
    if (has_dangling_escape(term)) assert_null(f);
    if (f) {
      pushed++;
      assert_int_equal(plan_filter_term_count(f), 1);
      for (int i = 0; i < 24; i++) {
        bool got = plan_filter_eval(f, &rows[i].row);
        bool want = ref_eval(term, rows[i].v) == 1;
        if (got != want) {
          char text[512];
          plan_filter_explain(f, NAMES, text, sizeof text);
          fprintf(stderr, "seed %llu round %llu row %d: filter %s gave %d, expected %d\n",
                  (unsigned long long)seed, (unsigned long long)round, i, text, got, want);
          for (int c = 0; c < NCOL; c++) {
            char v[64];
            plan_value_literal(&rows[i].v[c], v, sizeof v);
            fprintf(stderr, "  %s = %s\n", NAMES[c], v);
          }
          fail();
        }
        checks++;
        passed += got;
      }
    } else {
      assert_ptr_equal(np_terms[0], term);
    }
    plan_filter_free(f);
    free(np_terms);
  }
  fprintf(stderr, "[filter_random] %llu predicates, %llu pushed, %llu row checks, %llu passed\n",
          (unsigned long long)rounds, (unsigned long long)pushed, (unsigned long long)checks,
          (unsigned long long)passed);
  assert_true(pushed * 10 >= rounds * 7); /* most random predicates are pushable */
  assert_true(passed > checks / 20 && passed < checks);
}

/* ---- Fixed cases ---------------------------------------------------------------------- */
static trow R1;

static void row_fixture(void) {
  setup_schema();
  np = nap = 0;
  for (int c = 0; c < NCOL; c++) R1.v[c] = cat_v_null(COLS[c].type);
  R1.v[K0] = cat_v_int(CAT_T_INTEGER, 6);
  R1.v[K1] = cat_v_double(-2.5);
  R1.v[K2] = str_val(CAT_T_VARCHAR, R1.sbuf[K2], 5); /* "a\0b" */
  R1.v[C_DBL] = cat_v_double(31.5);
  R1.v[C_BIG] = cat_v_int(CAT_T_BIGINT, -7);
  R1.v[C_STR] = str_val(CAT_T_VARCHAR, R1.sbuf[C_STR], 3); /* "abc" */
  build_row(&R1, NULL);
}

static bool eval1(plan_expr *e, uint32_t *n_np) {
  plan_filter_schema s = schema();
  plan_filter *f = NULL;
  const plan_expr **npt = NULL;
  char msg[64];
  const plan_expr *t = e;
  assert_int_equal(plan_filter_build_schema(&s, &t, 1, NULL, 0, &f, &npt, n_np, msg, sizeof msg),
                   EXEC_OK);
  bool r = f ? plan_filter_eval(f, &R1.row) : false;
  plan_filter_free(f);
  free(npt);
  return r;
}

static void t_numeric_not_text(void **st) {
  (void)st;
  row_fixture();
  uint32_t n;
  /* 31.5 > 9.0 numerically (as text "31.5" < "9.0") */
  assert_true(eval1(bin(SQL_OP_GT, col(C_DBL), cval(cat_v_double(9.0))), &n));
  assert_int_equal(n, 0);
  assert_false(eval1(bin(SQL_OP_GT, col(C_DBL), cval(cat_v_double(30.0 + 10))), &n));
  assert_true(eval1(bin(SQL_OP_LT, col(C_BIG), cval(cat_v_int(CAT_T_INTEGER, -6))), &n));
}

static void t_folding(void **st) {
  (void)st;
  row_fixture();
  uint32_t n;
  cat_dec d55 = {55, 1};
  /* K0 = 6: K0 > 5.5 is K0 >= 6; K0 = 5.5 never; K0 <> 5.5 always */
  assert_true(eval1(bin(SQL_OP_GT, col(K0), cval(cat_v_dec(d55, 0, 0))), &n));
  assert_false(eval1(bin(SQL_OP_EQ, col(K0), cval(cat_v_dec(d55, 0, 0))), &n));
  assert_true(eval1(bin(SQL_OP_NE, col(K0), cval(cat_v_dec(d55, 0, 0))), &n));
  assert_true(eval1(bin(SQL_OP_LT, col(K0), cval(cat_v_double(1e300))), &n));
  assert_false(eval1(bin(SQL_OP_GT, col(K0), cval(cat_v_int(CAT_T_BIGINT, 1LL << 40))), &n));
  assert_int_equal(n, 0);
}

static void t_null_cells_three_valued(void **st) {
  (void)st;
  row_fixture();
  uint32_t n;
  plan_expr *u = bin(SQL_OP_GT, col(C_FLT), cval(cat_v_double(0))); /* FLT is NULL */
  assert_false(eval1(u, &n));
  plan_expr *nt = node(PX_UNARY, 1);
  nt->op = SQL_OP_NOT;
  nt->args[0] = u;
  assert_false(eval1(nt, &n)); /* NOT UNKNOWN is UNKNOWN */
  assert_true(eval1(bin(SQL_OP_OR, u, bin(SQL_OP_EQ, col(K0), cval(cat_v_int(CAT_T_INTEGER, 6)))), &n));
  plan_expr *isn = node(PX_ISNULL, 1);
  isn->args[0] = col(C_FLT);
  assert_true(eval1(isn, &n));
  plan_expr *inl = node(PX_IN, 3);
  inl->negated = true;
  inl->args[0] = col(K0);
  inl->args[1] = cval(cat_v_int(CAT_T_INTEGER, 1));
  inl->args[2] = cval(cat_v_null(cat_type_of(CAT_T_INTEGER)));
  assert_false(eval1(inl, &n)); /* 6 NOT IN (1, NULL) is UNKNOWN */
}

static void t_desc_key_and_zero_bytes(void **st) {
  (void)st;
  row_fixture();
  uint32_t n;
  assert_true(eval1(bin(SQL_OP_LT, col(K1), cval(cat_v_double(-2.0))), &n));
  assert_false(eval1(bin(SQL_OP_GT, col(K1), cval(cat_v_double(-2.0))), &n));
  assert_true(eval1(bin(SQL_OP_EQ, col(K2), cval(cat_v_str(CAT_T_VARCHAR, "a\0b", 3))), &n));
  assert_true(eval1(bin(SQL_OP_GT, col(K2), cval(cat_v_str(CAT_T_VARCHAR, "a\0", 2))), &n));
  assert_true(eval1(bin(SQL_OP_LT, col(K2), cval(cat_v_str(CAT_T_VARCHAR, "a\1", 2))), &n));
  plan_expr *lk = node(PX_LIKE, 2);
  lk->args[0] = col(K2);
  lk->args[1] = cval(cat_v_str(CAT_T_VARCHAR, "a_b", 3));
  assert_true(eval1(lk, &n));
  assert_int_equal(n, 0);
}

static void t_newest_version(void **st) {
  (void)st;
  row_fixture();
  trow old = R1;
  old.v[C_DBL] = cat_v_double(1.0);
  build_row(&R1, old.v); /* older DBL = 1.0 follows the newest 31.5 */
  uint32_t n;
  assert_true(eval1(bin(SQL_OP_EQ, col(C_DBL), cval(cat_v_double(31.5))), &n));
  assert_false(eval1(bin(SQL_OP_EQ, col(C_DBL), cval(cat_v_double(1.0))), &n));
}

static void t_corrupt_cell_fails(void **st) {
  (void)st;
  row_fixture();
  uint32_t n;
  plan_expr *ok = bin(SQL_OP_NE, col(C_DBL), cval(cat_v_double(0)));
  assert_true(eval1(ok, &n));
  R1.cells[1].value_len = 3; /* DBL cell: 3 bytes for an 8-byte type */
  assert_false(eval1(ok, &n));
  R1.cells[1].value_len = 8;
  R1.row.key_len = 2; /* truncated key */
  assert_false(eval1(bin(SQL_OP_EQ, col(K2), cval(cat_v_str(CAT_T_VARCHAR, "a", 1))), &n));
}

static void t_not_pushed_terms(void **st) {
  (void)st;
  row_fixture();
  plan_filter_schema s = schema();
  plan_expr *t[5];
  t[0] = bin(SQL_OP_GT, col(C_DBL), cval(cat_v_double(30.0)));
  t[1] = bin(SQL_OP_GT, bin(SQL_OP_ADD, col(K0), cval(cat_v_int(CAT_T_INTEGER, 1))),
             cval(cat_v_int(CAT_T_INTEGER, 5)));                            /* expression */
  t[2] = bin(SQL_OP_EQ, col(K0), col(C_BIG));                               /* two columns */
  t[3] = bin(SQL_OP_GT, col(C_DEC), cval(cat_v_double(1.5)));               /* DECIMAL vs DOUBLE */
  t[4] = bin(SQL_OP_EQ, col(C_BIG), node(PX_PARAM, 0));                     /* unbound param */
  t[4]->args[1]->param = 1;
  plan_filter *f = NULL;
  const plan_expr **npt = NULL;
  uint32_t n = 0;
  char msg[64];
  assert_int_equal(plan_filter_build_schema(&s, (const plan_expr *const *)t, 5, NULL, 0, &f, &npt,
                                            &n, msg, sizeof msg), EXEC_OK);
  assert_non_null(f);
  assert_int_equal(plan_filter_term_count(f), 1);
  assert_int_equal(n, 4);
  assert_ptr_equal(npt[0], t[1]);
  assert_ptr_equal(npt[1], t[2]);
  assert_ptr_equal(npt[2], t[3]);
  assert_ptr_equal(npt[3], t[4]);
  char text[256];
  plan_filter_explain(f, NAMES, text, sizeof text);
  assert_string_equal(text, "DBL > 30.0 (DOUBLE)");
  assert_true(plan_filter_eval(f, &R1.row));
  plan_filter_free(f);
  free(npt);
  /* with the parameter bound (-7), it is pushed */
  cat_value p = cat_v_int(CAT_T_BIGINT, -7);
  assert_int_equal(plan_filter_build_schema(&s, (const plan_expr *const *)&t[4], 1, &p, 1, &f, &npt,
                                            &n, msg, sizeof msg), EXEC_OK);
  assert_non_null(f);
  assert_int_equal(n, 0);
  assert_null(npt);
  assert_true(plan_filter_eval(f, &R1.row));
  plan_filter_free(f);
}

static void t_explain(void **st) {
  (void)st;
  row_fixture();
  plan_filter_schema s = schema();
  plan_expr *in = node(PX_IN, 3);
  in->args[0] = col(K0);
  in->args[1] = cval(cat_v_int(CAT_T_INTEGER, 1));
  in->args[2] = cval(cat_v_int(CAT_T_INTEGER, 2));
  plan_expr *lk = node(PX_LIKE, 3);
  lk->args[0] = col(C_STR);
  lk->args[1] = cval(cat_v_str(CAT_T_VARCHAR, "B!%%", 4));
  lk->args[2] = cval(cat_v_str(CAT_T_VARCHAR, "!", 1));
  plan_expr *t[2] = {bin(SQL_OP_OR, in, lk), bin(SQL_OP_LE, cval(cat_v_double(2.5)), col(K1))};
  plan_filter *f = NULL;
  const plan_expr **npt = NULL;
  uint32_t n = 0;
  char msg[64], text[256];
  assert_int_equal(plan_filter_build_schema(&s, (const plan_expr *const *)t, 2, NULL, 0, &f, &npt,
                                            &n, msg, sizeof msg), EXEC_OK);
  size_t len = plan_filter_explain(f, NAMES, text, sizeof text);
  assert_string_equal(text, "(K0 IN (1, 2) (INTEGER) OR STR LIKE 'B!%%' ESCAPE '!' (VARCHAR)) AND "
                            "K1 >= 2.5 (DOUBLE)");
  assert_int_equal(len, strlen(text));
  char small[10];
  assert_int_equal(plan_filter_explain(f, NAMES, small, sizeof small), len);
  assert_int_equal(strlen(small), sizeof small - 1);
  plan_filter_free(f);
  free(npt);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(t_random_agreement), cmocka_unit_test(t_numeric_not_text),
      cmocka_unit_test(t_folding),          cmocka_unit_test(t_null_cells_three_valued),
      cmocka_unit_test(t_desc_key_and_zero_bytes), cmocka_unit_test(t_newest_version),
      cmocka_unit_test(t_corrupt_cell_fails), cmocka_unit_test(t_not_pushed_terms),
      cmocka_unit_test(t_explain),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
