/*
** exec/op_setop.c: runs a derived table's plan (exec/op_setop.h): one query's pipeline, or a
** set operation over two such nodes (planner/plan_setop.h has the rules): UNION ALL streams
** the left rows then the right ones; UNION streams both and drops a row already passed;
** INTERSECT and EXCEPT first read the whole right operand into a hash set, then stream the
** left one, passing each row once, when it is (INTERSECT) or is not (EXCEPT) in the set.
** Rows compare with NULL equal to NULL (exec_rowset). At close each query's figures and
** each set operation's counts go to the plan, for EXPLAIN ANALYZE.
**
** Not here: the join tree that reads the rows (exec/op_join.c), the pipeline (exec/op_query.c).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/op_join.h"
#include "exec/op_setop.h"
#include "sql/ast.h"

static int nomem(exec_error *err) {
  err->code = EXEC_NOMEM;
  err->offset = -1;
  snprintf(err->msg, sizeof err->msg, "out of memory");
  return EXEC_NOMEM;
}

static const char *op_word(int op) {
  switch (op) {
    case SQL_SETOP_UNION: return "UNION";
    case SQL_SETOP_INTERSECT: return "INTERSECT";
    case SQL_SETOP_EXCEPT: return "EXCEPT";
    default: return "UNION ALL";
  }
}

int exec_setop_open(exec_setop **out, const plan_query *q, plan_actuals *act,
                    struct exec_join_ctx *cx, exec_error *err) {
  exec_setop *s = calloc(1, sizeof *s);
  *out = s;
  if (!s) return nomem(err);
  s->q = q;
  s->cx = cx;
  s->act = act;
  if (!q->setop) {
    s->query = calloc(1, sizeof *s->query);
    if (!s->query) return nomem(err);
    int rc = exec_query_open(s->query, cx->db, q, cx->params, cx->n_params, cx->now_us, 0,
                             cx->overlay, err);
    s->query->timing = cx->timing;
    s->query->join_mem = cx->mem_limit;
    return rc;
  }
  const plan_setop *p = q->setop;
  memset(p->act, 0, sizeof *p->act);
  int n = q->sel->n_out;
  s->seen.n_key = n;
  s->passed.n_key = n;
  int op = q->sel->setop;
  s->phase = op == SQL_SETOP_INTERSECT || op == SQL_SETOP_EXCEPT ? 0 : 1;
  int rc = exec_setop_open(&s->left, &p->left, p->act_left, cx, err);
  if (!rc) rc = exec_setop_open(&s->right, &p->right, p->act_right, cx, err);
  return rc;
}

/* Into set: the row's key; 1 added, 0 there already, or -error (memory). */
static int remember(exec_setop *s, exec_rowset *set, const cat_value *row, exec_error *err) {
  bool added, oom;
  exec_rowset_find(set, row, set->n_key, 0, true, &added, &oom);
  if (oom) return -nomem(err);
  if (!added) return 0;
  plan_setop_actual *a = s->q->setop->act;
  a->held = s->seen.n + s->passed.n;
  uint64_t mem = s->seen.bytes + s->passed.bytes +
                 (s->seen.cap + s->passed.cap) * sizeof(exec_mrow *);
  if (mem > a->peak_bytes) a->peak_bytes = mem;
  if (mem > s->cx->mem_limit) {
    err->code = EXEC_TOOBIG;
    err->offset = -1;
    snprintf(err->msg, sizeof err->msg, "%s needs more than %zu bytes of memory for its "
             "distinct rows (the join memory limit)", op_word(s->q->sel->setop),
             s->cx->mem_limit);
    return -EXEC_TOOBIG;
  }
  return 1;
}

int exec_setop_next(exec_setop *s, exec_error *err) {
  if (s->query) {
    int rc = exec_query_next(s->query, err);
    if (rc == EXEC_ROW) s->row = s->query->out;
    return rc;
  }
  plan_setop_actual *a = s->q->setop->act;
  int op = s->q->sel->setop;
  for (;;) {
    if (s->phase == 3) return EXEC_DONE;
    if (s->phase == 0) { /* INTERSECT, EXCEPT: hold the right operand's rows */
      int rc = exec_setop_next(s->right, err);
      if (rc == EXEC_DONE) {
        s->phase = 1;
        continue;
      }
      if (rc != EXEC_ROW) return rc;
      a->rows_right++;
      int r = remember(s, &s->seen, s->right->row, err);
      if (r < 0) return -r;
      continue;
    }
    exec_setop *in = s->phase == 1 ? s->left : s->right;
    int rc = exec_setop_next(in, err);
    if (rc == EXEC_DONE) {
      s->phase = s->phase == 1 && (op == SQL_SETOP_UNION_ALL || op == SQL_SETOP_UNION) ? 2 : 3;
      continue;
    }
    if (rc != EXEC_ROW) return rc;
    if (s->phase == 1) a->rows_left++;
    else a->rows_right++;
    const cat_value *row = in->row;
    if (op == SQL_SETOP_UNION) {
      int r = remember(s, &s->seen, row, err);
      if (r < 0) return -r;
      if (r == 0) continue;
    } else if (op == SQL_SETOP_INTERSECT || op == SQL_SETOP_EXCEPT) {
      bool in_right = exec_rowset_find(&s->seen, row, s->seen.n_key, 0, false, NULL, NULL);
      if (in_right != (op == SQL_SETOP_INTERSECT)) continue;
      int r = remember(s, &s->passed, row, err);
      if (r < 0) return -r;
      if (r == 0) continue;
    }
    a->rows_out++;
    s->row = row;
    return EXEC_ROW;
  }
}

void exec_setop_drop_overlay(exec_setop *s) {
  if (!s) return;
  if (s->query) exec_query_drop_overlay(s->query);
  exec_setop_drop_overlay(s->left);
  exec_setop_drop_overlay(s->right);
}

void exec_setop_close(exec_setop *s) {
  if (!s) return;
  if (s->query) {
    exec_query_close(s->query);
    if (s->act) *s->act = s->query->act;
    free(s->query);
  }
  exec_setop_close(s->left);
  exec_setop_close(s->right);
  exec_rowset_free(&s->seen, 0);
  exec_rowset_free(&s->passed, 0);
  free(s);
}
