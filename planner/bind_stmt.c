/*
** planner/bind_stmt.c: binding of whole statements: SELECT (table, WHERE, select list with
** `*` expanded, GROUP BY, aggregates, HAVING, ORDER BY by expression, alias or ordinal,
** LIMIT/OFFSET), UPSERT (target columns, VALUES rows or a SELECT) and DELETE.
**
** After binding an aggregate query, the select list, HAVING and ORDER BY are rewritten over
** the aggregate row (GROUP BY values in slots 0..n_group-1, then PX_AGG slots): a subtree
** equal to a GROUP BY expression becomes that slot; a column left outside an aggregate is
** an error. Expressions are in planner/bind.c, functions in planner/bind_func.c.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/status.h"
#include "planner/bind_view.h"
#include "planner/plan_bind.h"
#include "sql/parser.h"


/* A WHERE that folded to the constant TRUE (x OR TRUE, 1 = 1): no condition at all. */
static bool where_true(const plan_expr *e) {
  return e->kind == PX_CONST && !e->value.is_null && e->value.type.id == CAT_T_BOOLEAN &&
         e->value.u.b;
}

static const cat_table *find_table(binder *b, const char *name, uint32_t off) {
  return bind_find_table(b, name, off); /* planner/bind_from.c */
}

static const char **column_names(binder *b, const cat_table *t) {
  const char **n = plan_arena_alloc(b->A, (size_t)(t->n_columns + 1) * sizeof *n);
  if (!n) {
    bind_error(b, EXEC_NOMEM, 0, "out of memory");
    return NULL;
  }
  for (int i = 0; i < t->n_columns; i++) n[i] = t->columns[i].name;
  return n;
}

static int check_bool(binder *b, const plan_expr *e, const char *clause) {
  if (e->type.id != CAT_T_BOOLEAN && e->type.id != 0)
    return bind_error(b, EXEC_ERROR, e->off, "%s needs a BOOLEAN condition, not %s", clause,
                      cat_type_name(e->type.id));
  return EXEC_OK;
}

static char *expr_text(binder *b, const sql_expr *x) {
  char *s = sql_print_expr(x, 0);
  if (!s) {
    bind_error(b, EXEC_NOMEM, x->off, "out of memory");
    return NULL;
  }
  char *r = plan_arena_strndup(b->A, s, strlen(s));
  free(s);
  if (!r) bind_error(b, EXEC_NOMEM, x->off, "out of memory");
  return r;
}

/* ---- Aggregate rewrite ------------------------------------------------------------------ */
static plan_expr *over_groups(binder *b, plan_select *s, plan_expr *e) {
  if (!e || b->rc) return e;
  for (int i = 0; i < s->n_group; i++) {
    if (plan_expr_equal(e, s->group[i])) {
      plan_expr *c = bind_node(b, PX_COLUMN, e->off, 0);
      if (!c) return NULL;
      c->column = i;
      c->type = e->type;
      c->nullable = e->nullable;
      return c;
    }
  }
  if (e->kind == PX_COLUMN) {
    const char *name = s->table ? s->table->columns[e->column].name
                       : s->col_names ? s->col_names[e->column] : "?";
    bind_error(b, EXEC_ERROR, e->off, "column \"%s\" must appear in GROUP BY or be used in an "
               "aggregate%s", name, strncmp(name, "(subquery ", 10) ? "" : " (a correlated "
               "subquery of a grouped query may name only GROUP BY expressions of the outer "
               "query in its correlation)");
    return NULL;
  }
  for (uint32_t i = 0; i < e->n_args; i++) {
    e->args[i] = over_groups(b, s, e->args[i]);
    if (!e->args[i]) return NULL;
  }
  return e;
}

/* ---- SELECT --------------------------------------------------------------------------- */
static int add_proj(binder *b, plan_select *s, int *cap, plan_expr *e, char *name) {
  if (s->n_proj == *cap) {
    int nc = *cap ? *cap * 2 : 8;
    plan_expr **np = plan_arena_alloc(b->A, (size_t)nc * sizeof *np);
    char **nn = plan_arena_alloc(b->A, (size_t)nc * sizeof *nn);
    if (!np || !nn) return bind_error(b, EXEC_NOMEM, 0, "out of memory");
    if (s->n_proj) {
      memcpy(np, s->proj, (size_t)s->n_proj * sizeof *np);
      memcpy(nn, s->names, (size_t)s->n_proj * sizeof *nn);
    }
    s->proj = np;
    s->names = nn;
    *cap = nc;
  }
  s->proj[s->n_proj] = e;
  s->names[s->n_proj] = name;
  s->n_proj++;
  return EXEC_OK;
}

static int bind_select_list(binder *b, const sql_select *q, plan_select *s, int *cap) {
  b->seq_ok = s == b->seq_top; /* NEXT VALUE FOR: the statement's own select list only */
  for (int i = 0; i < q->cols->n; i++) {
    const sql_result_col *rc = &q->cols->a[i];
    if (!rc->expr && b->n_scope) { /* * or t.* over a join */
      if (bind_from_star(b, rc, s, cap, add_proj)) return b->rc;
      continue;
    }
    if (!rc->expr) { /* * or t.* */
      if (!b->table) return bind_error(b, EXEC_ERROR, rc->off, "* needs a table in FROM");
      if (rc->nqual >= 1 && !(b->alias && strcmp(rc->qual[0], b->alias) == 0) &&
          strcmp(rc->qual[0], b->table->name) != 0 &&
          !(rc->nqual == 1 && cat_find_family(b->table, rc->qual[0]) >= 0))
        return bind_error(b, EXEC_ERROR, rc->off, "unknown table or family \"%s\"",
                          rc->qual[0]);
      const char *fam = rc->nqual == 2                                        ? rc->qual[1]
                        : rc->nqual == 1 && cat_find_family(b->table, rc->qual[0]) >= 0 &&
                                  strcmp(rc->qual[0], b->table->name) != 0 &&
                                  !(b->alias && strcmp(rc->qual[0], b->alias) == 0)
                            ? rc->qual[0]
                            : NULL;
      for (int c = 0; c < b->table->n_columns; c++) {
        const cat_column *col = &b->table->columns[c];
        if (fam && (col->pk_pos >= 0 || strcmp(b->table->families[col->family].name, fam)))
          continue;
        plan_expr *e = bind_node(b, PX_COLUMN, rc->off, 0);
        if (!e) return b->rc;
        e->column = c;
        e->type = col->type;
        e->nullable = col->nullable;
        if (add_proj(b, s, cap, e, col->name)) return b->rc;
      }
      continue;
    }
    plan_expr *e = bind_expr(b, rc->expr);
    if (!e) return b->rc;
    char *name;
    if (rc->alias) name = plan_arena_strndup(b->A, rc->alias, strlen(rc->alias));
    else if (rc->expr->kind == SQL_E_COLUMN && e->kind == PX_COLUMN && b->n_scope)
      name = plan_arena_strndup(b->A, rc->expr->name[rc->expr->nname - 1],
                                strlen(rc->expr->name[rc->expr->nname - 1]));
    else if (rc->expr->kind == SQL_E_COLUMN && e->kind == PX_COLUMN)
      name = (char *)b->table->columns[e->column].name;
    else name = expr_text(b, rc->expr);
    if (!name) return bind_error(b, EXEC_NOMEM, rc->off, "out of memory");
    if (add_proj(b, s, cap, e, name)) return b->rc;
  }
  b->seq_ok = false;
  s->n_out = s->n_proj;
  return EXEC_OK;
}

static int bind_order(binder *b, const sql_select *q, plan_select *s, int *cap) {
  if (!q->order) return EXEC_OK;
  int n = q->order->n;
  s->n_order = n;
  s->order = plan_arena_alloc(b->A, (size_t)n * sizeof *s->order);
  s->order_src = plan_arena_alloc(b->A, (size_t)n * sizeof *s->order_src);
  if (!s->order || !s->order_src) return bind_error(b, EXEC_NOMEM, 0, "out of memory");
  for (int i = 0; i < n; i++) {
    const sql_order_term *t = &q->order->a[i];
    plan_order *o = &s->order[i];
    o->desc = t->desc;
    o->nulls_first = t->nulls ? t->nulls == 1 : !t->desc;
    o->slot = -1;
    const sql_expr *x = t->expr;
    if (x->kind == SQL_E_LITERAL && x->lit == SQL_LIT_INTEGER) {
      long k = strtol(x->text, NULL, 10);
      if (k < 1 || k > s->n_out)
        return bind_error(b, EXEC_ERROR, x->off, "ORDER BY position %s is not in the select "
                          "list (1..%d)", x->text, s->n_out);
      o->slot = (int)k - 1;
      s->order_src[i] = s->proj[o->slot];
      continue;
    }
    if (x->kind == SQL_E_COLUMN && x->nname == 1) {
      for (int j = 0; j < s->n_out; j++) {
        if (strcmp(s->names[j], x->name[0]) == 0) { /* an output name wins (as SQLite) */
          o->slot = j;
          break;
        }
      }
      if (o->slot >= 0) {
        s->order_src[i] = s->proj[o->slot];
        continue;
      }
    }
    plan_expr *e = bind_expr(b, x);
    if (!e) return b->rc;
    s->order_src[i] = e;
    for (int j = 0; j < s->n_proj; j++)
      if (plan_expr_equal(e, s->proj[j])) {
        o->slot = j;
        break;
      }
    if (o->slot < 0) {
      if (s->distinct)
        return bind_error(b, EXEC_ERROR, x->off,
                          "ORDER BY term of a SELECT DISTINCT must be in the select list");
      o->slot = s->n_proj;
      if (add_proj(b, s, cap, e, "")) return b->rc;
    }
  }
  return EXEC_OK;
}

static int bind_limit(binder *b, const sql_expr *x, plan_expr **out, const char *what) {
  if (!x) return EXEC_OK;
  const cat_table *t = b->table;
  int n_scope = b->n_scope;
  b->table = NULL;
  b->n_scope = 0;
  int mode = b->agg_mode;
  b->agg_mode = BIND_AGG_NO;
  b->agg_where = what;
  plan_expr *e = bind_expr(b, x);
  b->table = t;
  b->n_scope = n_scope;
  b->agg_mode = mode;
  if (!e) return b->rc;
  if (e->kind == PX_PARAM) {
    cat_type bt = cat_type_of(CAT_T_BIGINT);
    e->type = bt;
    if (b->bound->param_types && e->param >= 1 && e->param <= b->bound->n_params)
      b->bound->param_types[e->param - 1] = bt;
  } else if (e->kind != PX_CONST || !cat_type_is_integer(e->type.id) || e->value.is_null ||
             e->value.u.i < 0) {
    return bind_error(b, EXEC_ERROR, x->off, "%s needs a non-negative integer", what);
  }
  *out = e;
  return EXEC_OK;
}

static bool has_agg(const plan_expr *e) {
  if (e->kind == PX_AGG) return true;
  for (uint32_t i = 0; i < e->n_args; i++)
    if (has_agg(e->args[i])) return true;
  return false;
}

/* GROUP BY terms: expressions over the input row; an integer is a select-list position
** and a bare name that is no column of the table may name a select-list alias (as SQLite
** and PostgreSQL allow). Bound after the select list for that reason. */
static int bind_group(binder *b, const sql_select *q, plan_select *s) {
  b->agg_mode = BIND_AGG_NO;
  b->agg_where = "GROUP BY";
  s->n_group = q->group->n;
  s->group = plan_arena_alloc(b->A, (size_t)s->n_group * sizeof *s->group);
  if (!s->group) return bind_error(b, EXEC_NOMEM, 0, "out of memory");
  for (int i = 0; i < s->n_group; i++) {
    const sql_expr *x = q->group->a[i];
    plan_expr *e = NULL;
    if (x->kind == SQL_E_LITERAL && x->lit == SQL_LIT_INTEGER) {
      long k = strtol(x->text, NULL, 10);
      if (k < 1 || k > s->n_out)
        return bind_error(b, EXEC_ERROR, x->off, "GROUP BY position %s is not in the select "
                          "list (1..%d)", x->text, s->n_out);
      e = s->proj[k - 1];
    } else if (x->kind == SQL_E_COLUMN && x->nname == 1 &&
               (b->n_scope ? !bind_from_has_column(b, x->name[0])
                           : !b->table || cat_find_column(b->table, x->name[0]) < 0)) {
      for (int j = 0; j < s->n_out && !e; j++)
        if (strcmp(s->names[j], x->name[0]) == 0) e = s->proj[j];
    }
    if (e && has_agg(e))
      return bind_error(b, EXEC_ERROR, x->off, "aggregate is not allowed in GROUP BY");
    if (!e) e = bind_expr(b, x);
    if (!e) return b->rc;
    s->group[i] = e;
  }
  b->agg_mode = BIND_AGG_OK;
  return EXEC_OK;
}

int bind_select_core(binder *b, const sql_select *q, plan_select *s) {
  if (bind_eager(b, q, &q)) return b->rc; /* planner/bind_eager.c */
  plan_expr *view_cond = NULL;
  int view = bind_view_from(b, q, s, &view_cond); /* planner/bind_view.c */
  if (b->rc) return b->rc;
  if (view != BIND_VIEW_NONE && bind_dyn_refuse(b, q->dyn, q->table, "a view")) return b->rc;
  if (view == BIND_VIEW_DERIVED || q->joins || q->sub || b->pre_from ||
      (q->table && bind_find_cte(b, q->table))) {
    if (bind_from_joins(b, q, s)) return b->rc; /* planner/bind_from.c */
  } else if (q->table && view == BIND_VIEW_NONE) {
    b->table = s->table = find_table(b, q->table, q->table_off);
    if (s->table) /* Phoenix's dynamic columns: planner/bind_dyncol.c */
      b->table = s->table = bind_dyn_table(b, s->table, q->dyn, NULL);
    if (!s->table) return b->rc;
    b->alias = q->alias;
    s->col_names = column_names(b, s->table);
    if (!s->col_names) return b->rc;
  }
  if (q->hint) s->hint = plan_arena_strndup(b->A, q->hint, strlen(q->hint));
  s->distinct = q->distinct;
  b->sel = s;
  if (q->where) {
    b->agg_mode = BIND_AGG_NO;
    b->agg_where = "WHERE";
    s->where = bind_where(b, q->where); /* planner/bind_subquery.c: IN (SELECT) apart */
    if (b->rc || (s->where && check_bool(b, s->where, "WHERE"))) return b->rc;
    if (s->where && where_true(s->where)) s->where = NULL; /* folded to TRUE: no condition */
  }
  if (view_cond && !(s->where = bind_view_and(b, view_cond, s->where, q->table_off)))
    return b->rc;
  b->agg_mode = BIND_AGG_OK;
  int cap = 0;
  if (bind_select_list(b, q, s, &cap)) return b->rc;
  if (q->group && bind_group(b, q, s)) return b->rc;
  if (q->having) {
    b->having_aliases = q->cols;
    s->having = bind_expr(b, q->having);
    b->having_aliases = NULL;
    if (!s->having || check_bool(b, s->having, "HAVING")) return b->rc;
  }
  if (bind_order(b, q, s, &cap)) return b->rc;
  if (bind_limit(b, q->limit, &s->limit, "LIMIT") || bind_limit(b, q->offset, &s->offset, "OFFSET"))
    return b->rc;
  if (bind_semis(b, s)) return b->rc; /* after the select list: not in its scope */
  s->aggregate = s->n_group > 0 || s->n_aggs > 0;
  if (q->having && !s->aggregate)
    return bind_error(b, EXEC_ERROR, q->having->off, "HAVING needs GROUP BY or an aggregate");
  if (s->aggregate) {
    for (int i = 0; i < s->n_proj; i++)
      if (!(s->proj[i] = over_groups(b, s, s->proj[i]))) return b->rc;
    if (s->having && !(s->having = over_groups(b, s, s->having))) return b->rc;
    s->agg_names = plan_arena_alloc(b->A, (size_t)(s->n_group + s->n_aggs + 1) * sizeof(char *));
    if (!s->agg_names) return bind_error(b, EXEC_NOMEM, 0, "out of memory");
    for (int i = 0; i < s->n_group; i++) {
      char buf[256];
      plan_expr_print(s->group[i], s->col_names, buf, sizeof buf);
      s->agg_names[i] = plan_arena_strndup(b->A, buf, strlen(buf));
    }
    for (int i = 0; i < s->n_aggs; i++) s->agg_names[s->n_group + i] = s->aggs[i].text;
  }
  return EXEC_OK;
}

/* ---- UPSERT ----------------------------------------------------------------------------- */
/* A value for an ARRAY column: an array of another element type, or text (a parameter, a
** string, the '[...]' that .dump writes), goes through CAST to the column's type, which
** converts each element (the row writer only checks). Other values are left as they are. */
static plan_expr *to_array_column(binder *b, plan_expr *e, const cat_type *ct) {
  if (ct->id != CAT_T_ARRAY || cat_type_equal(&e->type, ct)) return e;
  if (e->type.id != CAT_T_ARRAY && !cat_type_is_string(e->type.id)) return e;
  plan_expr *c = bind_node(b, PX_CAST, e->off, 1);
  if (!c) return NULL;
  c->args[0] = e;
  c->type = *ct;
  c->nullable = e->nullable;
  return bind_fold(b, c);
}

static int bind_upsert(binder *b, const sql_upsert *u, plan_upsert *p) {
  bind_view_target vt; /* UPSERT INTO an updatable view (planner/bind_view.c) */
  if (bind_view_dml(b, u->table, u->table_off, "UPSERT INTO", &vt)) return b->rc;
  if (vt.table && bind_dyn_refuse(b, u->cols, u->table, "a view")) return b->rc;
  const cat_table *t = vt.table ? vt.table : find_table(b, u->table, u->table_off);
  if (t) t = bind_dyn_table(b, t, u->cols, p); /* dynamic columns: planner/bind_dyncol.c */
  p->table = t;
  if (!t) return b->rc;
  int n = u->cols ? u->cols->n : t->n_columns;
  p->n_cols = n;
  p->cols = plan_arena_alloc(b->A, (size_t)n * sizeof *p->cols);
  if (!p->cols) return bind_error(b, EXEC_NOMEM, 0, "out of memory");
  for (int i = 0; i < n; i++) {
    if (!u->cols) {
      p->cols[i] = i;
      continue;
    }
    const sql_colname *cn = &u->cols->a[i];
    int ci = cat_find_column(t, cn->name);
    if (ci >= 0 && cn->family) {
      const cat_column *c = &t->columns[ci];
      if (c->pk_pos >= 0 || strcmp(t->families[c->family].name, cn->family) != 0) ci = -1;
    }
    if (ci < 0)
      return bind_error(b, EXEC_ERROR, cn->off, "unknown column \"%s%s%s\" in table %s",
                        cn->family ? cn->family : "", cn->family ? "." : "", cn->name, t->name);
    for (int j = 0; j < i; j++)
      if (p->cols[j] == ci)
        return bind_error(b, EXEC_ERROR, cn->off, "column \"%s\" listed twice", cn->name);
    p->cols[i] = ci;
  }
  for (int k = 0; k < t->n_pk; k++) {
    bool found = t->pk[k] == t->row_ts; /* unnamed: the server time (exec/write.c) */
    for (int i = 0; i < n; i++) found |= p->cols[i] == t->pk[k];
    if (!found && !bind_view_fills(&vt, t->pk[k]))
      return bind_error(b, EXEC_CONSTRAINT, u->table_off,
                        "missing value for primary key column \"%s\" of %s",
                        t->columns[t->pk[k]].name, t->name);
  }
  if (u->select) {
    binder sb = *b;
    sb.table = NULL;
    sb.alias = NULL;
    sb.sel = NULL;
    sb.agg_cap = 0;
    p->select = plan_arena_alloc(b->A, sizeof *p->select);
    if (!p->select) return bind_error(b, EXEC_NOMEM, 0, "out of memory");
    sb.seq_top = p->select;
    int rc = bind_query(&sb, u->select, p->select);
    b->rc = sb.rc;
    if (rc) return rc;
    if (p->select->n_out != n)
      return bind_error(b, EXEC_ERROR, u->select->off,
                        "UPSERT SELECT gives %d column%s for %d target column%s",
                        p->select->n_out, p->select->n_out == 1 ? "" : "s", n,
                        n == 1 ? "" : "s");
    for (int i = 0; i < n; i++) {
      const cat_type *ct = &t->columns[p->cols[i]].type;
      const plan_expr *e = p->select->proj[i];
      if (!bind_comparable(ct, &e->type) && !cat_type_is_string(ct->id) &&
          !(ct->id == CAT_T_ARRAY && cat_type_is_string(e->type.id))) {
        char te[48], tc[48];
        return bind_error(b, EXEC_ERROR, e->off, "cannot store %s in column \"%s\" (%s)",
                          cat_type_format(&e->type, te, sizeof te), t->columns[p->cols[i]].name,
                          cat_type_format(ct, tc, sizeof tc));
      }
      if (!(p->select->proj[i] = to_array_column(b, p->select->proj[i], ct))) return b->rc;
    }
    return bind_view_upsert(b, &vt, u, p);
  }
  p->n_rows = u->rows ? u->rows->n : 0;
  p->rows = plan_arena_alloc(b->A, (size_t)(p->n_rows + 1) * sizeof *p->rows);
  if (!p->rows) return bind_error(b, EXEC_NOMEM, 0, "out of memory");
  b->table = NULL; /* VALUES may not name columns */
  b->agg_mode = BIND_AGG_NO;
  b->agg_where = "VALUES";
  for (int r = 0; r < p->n_rows; r++) {
    const sql_expr *row = u->rows->a[r];
    int nv = row->kind == SQL_E_ROW ? (row->list ? row->list->n : 0) : 1;
    if (nv != n)
      return bind_error(b, EXEC_ERROR, row->off, "VALUES row %d has %d value%s for %d column%s",
                        r + 1, nv, nv == 1 ? "" : "s", n, n == 1 ? "" : "s");
    p->rows[r] = plan_arena_alloc(b->A, (size_t)n * sizeof(plan_expr *));
    if (!p->rows[r]) return bind_error(b, EXEC_NOMEM, 0, "out of memory");
    for (int i = 0; i < n; i++) {
      const sql_expr *x = row->kind == SQL_E_ROW ? row->list->a[i] : row;
      b->seq_ok = true; /* NEXT VALUE FOR: one value per VALUES row */
      plan_expr *e = bind_expr(b, x);
      b->seq_ok = false;
      if (!e) return b->rc;
      const cat_type *ct = &t->columns[p->cols[i]].type;
      if (e->kind == PX_PARAM && b->bound->param_types && e->param >= 1 &&
          e->param <= b->bound->n_params && b->bound->param_types[e->param - 1].id == 0) {
        b->bound->param_types[e->param - 1] = *ct;
        e->type = *ct;
      }
      if (e->kind == PX_PARAM && ct->id == CAT_T_ARRAY) { /* bound as text: '[a, b]' */
        e->type = cat_type_of(CAT_T_VARCHAR);
        if (b->bound->param_types && e->param >= 1 && e->param <= b->bound->n_params)
          b->bound->param_types[e->param - 1] = e->type;
      }
      if (!(e = to_array_column(b, e, ct))) return b->rc;
      p->rows[r][i] = e;
    }
  }
  b->table = t;
  return bind_view_upsert(b, &vt, u, p);
}

/* ---- DELETE ----------------------------------------------------------------------------- */
static int bind_delete(binder *b, const sql_delete *d, plan_delete *p) {
  bind_view_target vt; /* DELETE FROM an updatable view (planner/bind_view.c) */
  if (bind_view_dml(b, d->table, d->table_off, "DELETE FROM", &vt)) return b->rc;
  if (vt.table && bind_dyn_refuse(b, d->dyn, d->table, "a view")) return b->rc;
  b->table = p->table = vt.table ? vt.table : find_table(b, d->table, d->table_off);
  if (p->table) b->table = p->table = bind_dyn_table(b, p->table, d->dyn, NULL);
  if (!p->table) return b->rc;
  p->col_names = column_names(b, p->table);
  if (!p->col_names) return b->rc;
  if (d->hint) {
    p->hint = plan_arena_strndup(b->A, d->hint, strlen(d->hint));
    if (!p->hint) return bind_error(b, EXEC_NOMEM, 0, "out of memory");
  }
  b->agg_mode = BIND_AGG_NO;
  b->agg_where = "WHERE";
  if (d->where) {
    p->where = bind_expr(b, d->where);
    if (!p->where || check_bool(b, p->where, "WHERE")) return b->rc;
    if (where_true(p->where)) p->where = NULL; /* folded to TRUE: every row */
  }
  if (vt.cond && !(p->where = bind_view_and(b, vt.cond, p->where, d->table_off))) return b->rc;
  return bind_limit(b, d->limit, &p->limit, "LIMIT");
}

int plan_bind(const cat_catalog *cat, const sql_stmt *st, const char *sql, plan_arena *arena,
              plan_bound *out, char *msg, size_t cap, int *err_off) {
  return plan_bind_opt(cat, st, sql, arena, out, msg, cap, err_off, 0);
}

int plan_bind_opt(const cat_catalog *cat, const sql_stmt *st, const char *sql,
                  plan_arena *arena, plan_bound *out, char *msg, size_t cap, int *err_off,
                  unsigned flags) {
  memset(out, 0, sizeof *out);
  binder b;
  memset(&b, 0, sizeof b);
  b.no_key_lists = (flags & PLAN_BIND_NO_KEY_LISTS) != 0;
  b.cat = cat;
  b.sql = sql;
  b.A = arena;
  b.msg = msg;
  b.cap = cap;
  b.err_off = err_off;
  b.bound = out;
  if (err_off) *err_off = -1;
  out->kind = st->kind;
  out->explain = st->explain;
  out->analyze = st->analyze;
  out->json = st->explain_json;
  out->n_params = st->nparam;
  if (st->nparam > 0) {
    out->param_types = plan_arena_alloc(arena, (size_t)st->nparam * sizeof *out->param_types);
    if (!out->param_types) return bind_error(&b, EXEC_NOMEM, 0, "out of memory");
  }
  int rc = EXEC_OK;
  switch (st->kind) {
    case SQL_STMT_SELECT:
      out->select = plan_arena_alloc(arena, sizeof *out->select);
      if (!out->select) return bind_error(&b, EXEC_NOMEM, 0, "out of memory");
      b.seq_top = out->select;
      if (bind_query(&b, st->u.select, out->select)) return b.rc;
      rc = bind_sequence_finish(&b, out->select);
      break;
    case SQL_STMT_UPSERT:
      out->upsert = plan_arena_alloc(arena, sizeof *out->upsert);
      if (!out->upsert) return bind_error(&b, EXEC_NOMEM, 0, "out of memory");
      if (bind_upsert(&b, st->u.upsert, out->upsert)) return b.rc;
      rc = bind_sequence_finish(&b, out->upsert->select);
      break;
    case SQL_STMT_DELETE:
      out->del = plan_arena_alloc(arena, sizeof *out->del);
      if (!out->del) return bind_error(&b, EXEC_NOMEM, 0, "out of memory");
      rc = bind_delete(&b, st->u.del, out->del);
      break;
    default:
      return EXEC_OK;
  }
  if (!rc) rc = bind_apply_finish(&b); /* planner/bind_apply.c */
  return rc ? rc : bind_as_of(&b, st, out); /* planner/bind_as_of.c */
}
