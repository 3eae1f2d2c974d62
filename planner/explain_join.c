/*
** planner/explain_join.c: the EXPLAIN lines of a join tree (planner/plan_join.h), which
** planner/explain.c prints in place of the scan of a single-table query:
**   INNER HASH JOIN ON [S.STATION = T.STATION]  (estimate: 5 rows)
**       FILTER AFTER KEY MATCH: S.TEMP > T.LAT
**       PROBE S (left input, estimate: 5 rows)
**           FULL SCAN OVER SENSOR ...          <- the leaf's own plan, indented
**       BUILD T (right input, estimate: 4 rows; held in a hash table)
**           RANGE SCAN OVER STATIONS ...
** and, for a join without an equality between its inputs,
**   LEFT OUTER NESTED LOOP JOIN ON [A.LAT < B.LAT]  (estimate: 6 rows)
**       OUTER A (left input, ...) / INNER B (right input, ...; held in memory)
** A child/parent join's probe leaf has a line of its own above its plan:
**       PROBE S (left input, ...)
**           DYNAMIC SKIP SCAN ON [S.STATION] IN THE BUILD INPUT'S KEYS (child/parent join)
** A left input that is itself a join is printed the same way, one level deeper. Under
** EXPLAIN ANALYZE the join line ends with the rows read from each input, the rows out, the
** rows held and the most memory they took, and each leaf's lines carry its own figures.
**
** Not here: the statement's other lines (planner/explain.c).
*/
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "planner/keyrange.h"
#include "planner/plan_join.h"
#include "planner/plan_select.h"
#include "sql/ast.h"

typedef struct out {
  plan_arena *A;  /* storage */
  char **v;       /* lines */
  int n, cap;     /* count, allocated */
  int rc;         /* EXEC_NOMEM (10) after a failure */
} out;

static void add(out *o, int indent, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void add(out *o, int indent, const char *fmt, ...) {
  if (o->rc) return;
  char buf[4096];
  int k = snprintf(buf, sizeof buf, "%*s", indent, "");
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf + k, sizeof buf - (size_t)k, fmt, ap);
  va_end(ap);
  if (o->n == o->cap) {
    int nc = o->cap ? o->cap * 2 : 16;
    char **nv = plan_arena_alloc(o->A, (size_t)nc * sizeof *nv);
    if (!nv) {
      o->rc = 10;
      return;
    }
    if (o->n) memcpy(nv, o->v, (size_t)o->n * sizeof *nv);
    o->v = nv;
    o->cap = nc;
  }
  o->v[o->n] = plan_arena_strndup(o->A, buf, strlen(buf));
  if (!o->v[o->n]) o->rc = 10;
  else o->n++;
}

static const char *rows_word(uint64_t n) { return n == 1 ? "row" : "rows"; }

/* The name of a node's input: the table's name in the query, or "the join of A, B". */
static void input_name(const plan_join_node *n, const plan_select *s, char *buf, size_t cap) {
  if (n->leaf) {
    snprintf(buf, cap, "%s", s->from[n->from].name);
    return;
  }
  char l[200];
  input_name(n->left, s, l, sizeof l);
  snprintf(buf, cap, "%s JOIN %s", l, s->from[n->right->from].name);
}

static void node_lines(out *o, const plan_join_node *n, const plan_select *s, bool analyzed,
                       int indent);

/* The child/parent join's line over probe leaf `in` of join n (planner/join_cp.c):
**   DYNAMIC SKIP SCAN ON [S.STATION] IN THE BUILD INPUT'S KEYS (child/parent join)
** and under EXPLAIN ANALYZE how many key prefixes the leaf read, or why it read them all. */
static void cp_line(out *o, const plan_join_node *n, const plan_join_node *in,
                    const plan_select *s, bool analyzed, int indent) {
  char cols[512];
  size_t k = 0;
  cols[0] = 0;
  for (int i = 0; i < n->cp_n && k < sizeof cols; i++) {
    int w = snprintf(cols + k, sizeof cols - k, "%s%s", i ? ", " : "",
                     s->col_names[in->lo + n->cp_col[i]]);
    if (w > 0) k += (size_t)w;
  }
  char act[160] = "";
  if (analyzed) {
    const plan_join_actual *a = n->act;
    if (a->cp_state == PLAN_CP_APPLIED)
      snprintf(act, sizeof act, "  (actual: %" PRIu64 " key %s)", a->cp_keys,
               a->cp_keys == 1 ? "prefix" : "prefixes");
    else if (a->cp_state == PLAN_CP_TOO_MANY)
      snprintf(act, sizeof act, "  (actual: not applied: %" PRIu64 " keys, more than %d; the "
               "whole input was read)", a->cp_keys, PLAN_MAX_SKIP_RANGES);
    else
      snprintf(act, sizeof act, "  (actual: not needed: the build input held no row)");
  }
  add(o, indent, "DYNAMIC SKIP SCAN ON [%s] IN THE BUILD INPUT'S KEYS (child/parent join)%s",
      cols, act);
}

/* One input of join n: its label line, then its own lines one level deeper. */
static void input_lines(out *o, const plan_join_node *n, const plan_join_node *in, bool left,
                        const plan_select *s, bool analyzed, int indent) {
  char name[256];
  input_name(in, s, name, sizeof name);
  bool built = n->algo == PLAN_JOIN_HASH ? n->build_left == left : !left;
  const char *role = n->algo == PLAN_JOIN_HASH ? (built ? "BUILD" : "PROBE")
                                               : (left ? "OUTER" : "INNER");
  const char *held = !built ? ""
                     : n->algo == PLAN_JOIN_HASH ? "; held in a hash table"
                                                 : "; held in memory";
  add(o, indent + 4, "%s %s (%s input, estimate: %" PRIu64 " %s%s)", role, name,
      left ? "left" : "right", in->est_rows, rows_word(in->est_rows), held);
  if (n->cp_n && !built) cp_line(o, n, in, s, analyzed, indent + 8);
  node_lines(o, in, s, analyzed, indent + 8);
}

static void node_lines(out *o, const plan_join_node *n, const plan_select *s, bool analyzed,
                       int indent) {
  if (o->rc) return;
  if (n->leaf) {
    char **l = NULL;
    int nl = 0;
    if (plan_explain_query(&n->leaf_q, analyzed ? n->leaf_act : NULL, o->A, &l, &nl)) {
      o->rc = 10;
      return;
    }
    for (int i = 0; i < nl; i++) add(o, indent, "%s", l[i]);
    return;
  }
  char on[2048];
  size_t k = 0;
  on[0] = 0;
  for (int i = 0; i < n->n_keys && k < sizeof on; i++) {
    char a[512], b[512];
    plan_expr_print(n->lkeys[i], s->col_names, a, sizeof a);
    plan_expr_print(n->rkeys[i], s->col_names, b, sizeof b);
    int w = snprintf(on + k, sizeof on - k, "%s%s = %s", i ? " AND " : "", a, b);
    if (w > 0) k += (size_t)w;
  }
  char res[2048] = "";
  if (n->residual) plan_expr_print(n->residual, s->col_names, res, sizeof res);
  const char *kind = n->kind == SQL_JOIN_LEFT    ? "LEFT OUTER"
                     : n->kind == SQL_JOIN_RIGHT ? "RIGHT OUTER"
                     : n->kind == SQL_JOIN_FULL  ? "FULL OUTER"
                     : n->kind == SQL_JOIN_CROSS ? "CROSS"
                                                 : "INNER";
  char act[256] = "";
  if (analyzed) {
    char mem[32];
    plan_human_bytes(n->act->peak_bytes, mem, sizeof mem);
    snprintf(act, sizeof act, "  (actual rows left=%" PRIu64 " right=%" PRIu64 " out=%" PRIu64
             " held=%" PRIu64 " peak memory=%s)", n->act->rows_left, n->act->rows_right,
             n->act->rows_out, n->act->build_rows, mem);
  }
  if (n->algo == PLAN_JOIN_HASH) {
    add(o, indent, "%s HASH JOIN ON [%s]  (estimate: %" PRIu64 " %s)%s", kind, on, n->est_rows,
        rows_word(n->est_rows), act);
    if (n->residual) add(o, indent + 4, "FILTER AFTER KEY MATCH: %s", res);
  } else if (n->residual) {
    add(o, indent, "%s NESTED LOOP JOIN ON [%s]  (estimate: %" PRIu64 " %s)%s", kind, res,
        n->est_rows, rows_word(n->est_rows), act);
  } else {
    add(o, indent, "%s NESTED LOOP JOIN (every pair)  (estimate: %" PRIu64 " %s)%s", kind,
        n->est_rows, rows_word(n->est_rows), act);
  }
  input_lines(o, n, n->left, true, s, analyzed, indent);
  input_lines(o, n, n->right, false, s, analyzed, indent);
}

int plan_join_explain(const plan_join_node *n, const plan_select *s, bool analyzed,
                      plan_arena *A, char ***lines, int *n_lines) {
  out o = {A, NULL, 0, 0, 0};
  node_lines(&o, n, s, analyzed, 0);
  *lines = o.v;
  *n_lines = o.n;
  return o.rc;
}
