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
** A sort-merge join (both inputs read in join-key order) is
**   INNER SORT-MERGE JOIN ON [A.K = B.K]  (estimate: n rows)
**       MERGE A (left input, ...; read in join-key order) / MERGE B (right input, ...)
** A left input that is itself a join is printed the same way, one level deeper. A derived
** table's input shows its query's plan (a FROM of it alone under a SUBQUERY line), with the
** terms checked on its rows as FILTER name BY ...; a set operation shows
**   UNION  (estimate: 9 rows; distinct rows held in a hash set)
**       LEFT INPUT (estimate: 5 rows)
**           FULL SCAN OVER A ...
**       RIGHT INPUT (estimate: 4 rows)
**           ... Under
** EXPLAIN ANALYZE the join line ends with the rows read from each input, the rows out, the
** rows held and the most memory they took (and, for a hash join past the join memory, what
** it wrote to disk), and each leaf's lines carry its own figures.
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
#include "planner/plan_setop.h"
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
  const char *r = s->from[n->leaf ? n->from : n->right->from].name;
  if (!r[0]) r = "(subquery)";
  if (n->leaf) {
    snprintf(buf, cap, "%s", r);
    return;
  }
  char l[200];
  input_name(n->left, s, l, sizeof l);
  int w = snprintf(buf, cap, "%s JOIN %s", l, r);
  if (w >= 0 && (size_t)w >= cap && cap > 4) memcpy(buf + cap - 4, "...", 4); /* cut: say so */
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
    else if (a->cp_state == PLAN_CP_SPILLED)
      snprintf(act, sizeof act, "  (actual: not applied: the build input spilled to disk; "
               "the whole input was read)");
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
  bool merge = n->algo == PLAN_JOIN_MERGE;
  bool built = n->algo == PLAN_JOIN_HASH ? n->build_left == left : !left && !merge;
  const char *role = merge                        ? "MERGE"
                     : n->algo == PLAN_JOIN_HASH ? (built ? "BUILD" : "PROBE")
                                                 : (left ? "OUTER" : "INNER");
  const char *held = merge ? (left ? "; read in join-key order"
                                   : "; read in join-key order, one key's rows held")
                     : !built                    ? ""
                     : n->algo == PLAN_JOIN_HASH ? "; held in a hash table"
                                                 : "; held in memory";
  add(o, indent + 4, "%s %s (%s input, estimate: %" PRIu64 " %s%s)", role, name,
      left ? "left" : "right", in->est_rows, rows_word(in->est_rows), held);
  if (n->cp_n && !built) cp_line(o, n, in, s, analyzed, indent + 8);
  node_lines(o, in, s, analyzed, indent + 8);
}

/* The lines of a query's plan q (a table's, a derived table's, or a set operation's). */
static void query_plan_lines(out *o, const plan_query *q, const plan_actuals *a, bool analyzed,
                             int indent);

/* ORDER SQL_SETOP: the words of each set operator. */
static const char *const setop_words[] = {"?", "UNION ALL", "UNION", "INTERSECT", "EXCEPT"};

/* A set operation: its line, then each operand's label and lines one level deeper. */
static void setop_lines(out *o, const plan_query *q, bool analyzed, int indent) {
  const plan_setop *p = q->setop;
  int op = q->sel->setop;
  const char *held = op == SQL_SETOP_UNION_ALL ? ""
                     : op == SQL_SETOP_UNION   ? "; distinct rows held in a hash set"
                                               : "; the right input's distinct rows held in a "
                                                 "hash set";
  char act[256] = "";
  if (analyzed) {
    char mem[32];
    plan_human_bytes(p->act->peak_bytes, mem, sizeof mem);
    char spill[96] = "";
    if (p->act->spill_parts) {
      char sb[32];
      plan_human_bytes(p->act->spill_bytes, sb, sizeof sb);
      snprintf(spill, sizeof spill, " spilled=%s in %d partitions, %" PRIu64 " passed", sb,
               p->act->spill_parts, p->act->spill_batches);
    }
    snprintf(act, sizeof act, "  (actual rows left=%" PRIu64 " right=%" PRIu64 " out=%" PRIu64
             " held=%" PRIu64 " peak memory=%s%s)", p->act->rows_left, p->act->rows_right,
             p->act->rows_out, p->act->held, mem, spill);
  }
  add(o, indent, "%s  (estimate: %" PRIu64 " %s%s)%s",
      op >= 1 && op <= SQL_SETOP_EXCEPT ? setop_words[op] : "?", p->est_rows,
      rows_word(p->est_rows), held, act);
  for (int side = 0; side < 2; side++) {
    const plan_query *in = side ? &p->right : &p->left;
    uint64_t est = plan_query_est_rows(in);
    add(o, indent + 4, "%s INPUT (estimate: %" PRIu64 " %s)", side ? "RIGHT" : "LEFT", est,
        rows_word(est));
    query_plan_lines(o, in, side ? p->act_right : p->act_left, analyzed, indent + 8);
  }
}

static void query_plan_lines(out *o, const plan_query *q, const plan_actuals *a, bool analyzed,
                             int indent) {
  if (o->rc) return;
  if (q->setop) {
    setop_lines(o, q, analyzed, indent);
    return;
  }
  char **l = NULL;
  int nl = 0;
  if (plan_explain_query(q, analyzed ? a : NULL, o->A, &l, &nl)) {
    o->rc = 10;
    return;
  }
  for (int i = 0; i < nl; i++) add(o, indent, "%s", l[i]);
}

static void node_lines(out *o, const plan_join_node *n, const plan_select *s, bool analyzed,
                       int indent) {
  if (o->rc) return;
  if (n->leaf) {
    query_plan_lines(o, &n->leaf_q, n->leaf_act, analyzed, indent);
    if (n->leaf_filter) {
      char f[2048];
      plan_expr_print(n->leaf_filter, s->col_names, f, sizeof f);
      add(o, indent + 4, "FILTER %s BY %s", s->from[n->from].name[0] ? s->from[n->from].name
                                                                     : "(subquery)", f);
    }
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
                     : n->kind == SQL_JOIN_SEMI  ? "SEMI"
                     : n->kind == SQL_JOIN_ANTI || n->kind == SQL_JOIN_ANTI_EXISTS ? "ANTI"
                                                 : "INNER";
  char act[320] = "";
  if (analyzed) {
    char mem[32];
    plan_human_bytes(n->act->peak_bytes, mem, sizeof mem);
    char spill[96] = "";
    if (n->act->spill_parts) {
      char sb[32];
      plan_human_bytes(n->act->spill_bytes, sb, sizeof sb);
      int w = snprintf(spill, sizeof spill, " spilled=%s in %d partitions", sb,
                       n->act->spill_parts);
      if (w > 0 && (size_t)w < sizeof spill)
        snprintf(spill + w, sizeof spill - (size_t)w, ", %" PRIu64 " %s",
                 n->act->spill_batches, n->act->spill_batches == 1 ? "batch" : "batches");
    }
    snprintf(act, sizeof act, "  (actual rows left=%" PRIu64 " right=%" PRIu64 " out=%" PRIu64
             " held=%" PRIu64 " peak memory=%s%s)", n->act->rows_left, n->act->rows_right,
             n->act->rows_out, n->act->build_rows, mem, spill);
  }
  if (n->algo == PLAN_JOIN_HASH || n->algo == PLAN_JOIN_MERGE) {
    add(o, indent, "%s %s JOIN ON [%s]  (estimate: %" PRIu64 " %s)%s", kind,
        n->algo == PLAN_JOIN_HASH ? "HASH" : "SORT-MERGE", on, n->est_rows,
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
  int indent = 0;
  if (n->leaf && n->derived && !s->from[n->from].setop_wrap) { /* FROM (SELECT ...) alone */
    const char *name = s->from[n->from].name;
    add(&o, 0, "SUBQUERY %s (estimate: %" PRIu64 " %s)", name[0] ? name : "(no alias)",
        n->est_rows, rows_word(n->est_rows));
    indent = 4;
  }
  node_lines(&o, n, s, analyzed, indent);
  *lines = o.v;
  *n_lines = o.n;
  return o.rc;
}

int plan_subqueries_explain(const plan_bound *b, const plan_query *q, const plan_actuals *a,
                            plan_arena *A, char ***lines, int *n_lines) {
  out o = {A, NULL, 0, 0, 0};
  bool analyzed = a != NULL;
  for (int k = 0; q && k < q->n_subs; k++) {
    const plan_query *sq = &q->subs[k];
    bool scalar = sq->sel->setop == 0 && sq->sel->n_out == 1;
    (void)scalar;
    uint64_t est = plan_query_est_rows(sq);
    add(&o, 0, "SUBQUERY %d (run once before the query; estimate: %" PRIu64 " %s)", k + 1, est,
        rows_word(est));
    query_plan_lines(&o, sq, &q->sub_acts[k], analyzed, 4);
  }
  for (int k = 0; k < b->n_applies; k++) { /* planned at each run with the outer values */
    const plan_apply *p = &b->applies[k];
    const char *what = p->kind == SQL_E_EXISTS ? "EXISTS" : p->kind == SQL_E_IN ? "IN" : "value";
    if (a && a->applies)
      add(&o, 0, "CORRELATED SUBQUERY %d (%s; run per outer row with %s bound, again only when "
          "they change; planned at each run)  (actual runs=%" PRIu64 " reused=%" PRIu64 ")", k + 1,
          what, p->outer_text, a->applies[k].runs, a->applies[k].reused);
    else
      add(&o, 0, "CORRELATED SUBQUERY %d (%s; run per outer row with %s bound, again only when "
          "they change; planned at each run)", k + 1, what, p->outer_text);
  }
  *lines = o.v;
  *n_lines = o.n;
  return o.rc;
}
