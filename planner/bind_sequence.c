/*
** planner/bind_sequence.c: NEXT VALUE FOR and CURRENT VALUE FOR in a statement (Phoenix's
** sequence expressions; plan_seqref in planner/plan.h).
**
** Where they may be written (Phoenix's rule): in the select list of the statement's query
** (a SELECT, or the source of UPSERT SELECT) and in the VALUES of an UPSERT; not in WHERE,
** GROUP BY, HAVING, ORDER BY, a subquery (a derived table or WITH item too), a join's ON, a
** branch of a set operation, nor in a query that aggregates or is DISTINCT (one value per row has no meaning there). Each is a BIGINT, never NULL. All
** NEXT VALUE FOR s of a statement share one reference, so every one of them gives the same
** value within a row; the CURRENT VALUE FOR s of that row gives it too (the executor sets
** NEXT before CURRENT). The sequence must exist when the statement is bound; a DROP
** SEQUENCE after it makes the statement bind again (every DDL does) and fail then.
**
** Not here: handing out the values (catalog/cat_sequence.c, exec/sequence.c).
*/
#include <stdlib.h>
#include <string.h>

#include "catalog/status.h"
#include "planner/plan_bind.h"

plan_expr *bind_sequence(binder *b, const sql_expr *x) {
  bool next = x->op == SQL_SEQ_NEXT;
  const char *what = next ? "NEXT VALUE FOR" : "CURRENT VALUE FOR";
  if (!b->seq_ok) {
    bind_error(b, EXEC_ERROR, x->off, "%s may only be used in the select list of a query or "
               "in the VALUES of an UPSERT (not in WHERE, GROUP BY, ORDER BY, a subquery, a "
               "join condition or a branch of UNION, INTERSECT or EXCEPT)", what);
    return NULL;
  }
  if (!cat_find_sequence(b->cat, x->text)) {
    bind_error(b, EXEC_ERROR, x->off, "sequence %s does not exist", x->text);
    return NULL;
  }
  plan_bound *pb = b->bound;
  int k = 0;
  while (k < pb->n_seqs && !(pb->seqs[k].next == next && strcmp(pb->seqs[k].name, x->text) == 0))
    k++;
  if (k == pb->n_seqs) { /* a new reference: the arena copy of the list grows by one */
    plan_seqref *a = plan_arena_alloc(b->A, (size_t)(k + 1) * sizeof *a);
    char *name = plan_arena_strndup(b->A, x->text, x->text_len);
    if (!a || !name) {
      bind_error(b, EXEC_NOMEM, x->off, "out of memory");
      return NULL;
    }
    if (k) memcpy(a, pb->seqs, (size_t)k * sizeof *a);
    a[k].name = name;
    a[k].next = next;
    a[k].off = x->off;
    pb->seqs = a;
    pb->n_seqs++;
  }
  plan_seqref *r = &pb->seqs[k];
  plan_expr *e = bind_node(b, PX_PARAM, x->off, 0);
  plan_expr **nodes = plan_arena_alloc(b->A, (size_t)(r->n_nodes + 1) * sizeof *nodes);
  size_t tn = strlen(what) + 1 + x->text_len;
  char *text = plan_arena_alloc(b->A, tn + 1);
  if (!e || !nodes || !text) {
    if (!b->rc) bind_error(b, EXEC_NOMEM, x->off, "out of memory");
    return NULL;
  }
  if (r->n_nodes) memcpy(nodes, r->nodes, (size_t)r->n_nodes * sizeof *nodes);
  nodes[r->n_nodes++] = e;
  r->nodes = nodes;
  memcpy(text, what, strlen(what));
  text[strlen(what)] = ' ';
  memcpy(text + strlen(what) + 1, x->text, x->text_len);
  e->func = -1 - k;
  e->type = cat_type_of(CAT_T_BIGINT);
  e->nullable = false;
  e->value = cat_v_str(CAT_T_VARCHAR, text, tn); /* EXPLAIN's text */
  return e;
}

int bind_sequence_finish(binder *b, const plan_select *s) {
  plan_bound *pb = b->bound;
  if (!pb->n_seqs) return EXEC_OK;
  if (s && (s->aggregate || s->distinct))
    return bind_error(b, EXEC_ERROR, pb->seqs[0].off, "%s VALUE FOR may not be used in a query "
                      "with %s (it gives one value per row)", pb->seqs[0].next ? "NEXT" : "CURRENT",
                      s->distinct ? "DISTINCT" : "aggregates or GROUP BY");
  for (int k = 0; k < pb->n_seqs; k++) {
    plan_seqref *r = &pb->seqs[k];
    r->param = pb->n_params + pb->n_subs + k + 1;
    for (int i = 0; i < r->n_nodes; i++) r->nodes[i]->param = r->param;
  }
  return EXEC_OK;
}
