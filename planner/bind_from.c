/*
** planner/bind_from.c: binding of a FROM with joins (issue 16, first slice): the tables and
** their names in the query (alias, else table name), the joined row's layout (each table's
** columns after the previous table's: plan_from.base), ON conditions (bound over the tables
** up to their join, as SQL scopes them), USING (cols) made into `left.c = right.c`
** equalities, and column references inside such a query: `c`, `t.c`, `t.family.c` and
** `family.c`, where an unqualified name must belong to exactly one table in scope (a USING
** column counts once: its left table's). `*` lists every table's columns in FROM order (a
** USING column once, as SQLite does); `t.*` one table's.
**
** Errors name what was wrong and where: an ambiguous column names the tables that have it,
** an unknown qualifier names the tables and aliases in scope, a table named twice asks for
** aliases, and the joins not run (NATURAL; RIGHT and FULL with USING) say so at their first
** word. A FROM item may also be a derived table or a WITH name (planner/bind_subquery.c
** binds its query and makes its stand-in table); a FROM of that one item is bound here too.
**
** Not here: single-table binding (planner/bind.c, planner/bind_stmt.c), planning a join
** (planner/join.c), running it (exec/op_join.c).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/status.h"
#include "planner/bind_view.h"
#include "planner/plan_bind.h"

/* True when q names table f of the scope: its alias, or its name when it has no alias (or
** the last part of an S.T name). */
static bool names_from(const plan_from *f, const char *q) {
  if (strcmp(q, f->name) == 0) return true;
  if (f->name != f->table->name) return false; /* aliased: the table name is hidden */
  const char *dot = strrchr(f->table->name, '.');
  return dot && strcmp(q, dot + 1) == 0;
}

/* "S, T (STATIONS)": the tables in scope as the query names them, for messages. */
static void scope_text(const binder *b, char *buf, size_t cap) {
  size_t n = 0;
  buf[0] = 0;
  for (int i = 0; i < b->n_scope && n < cap; i++) {
    const plan_from *f = &b->scope[i];
    int k = f->name != f->table->name
                ? snprintf(buf + n, cap - n, "%s%s (%s)", i ? ", " : "", f->name, f->table->name)
                : snprintf(buf + n, cap - n, "%s%s", i ? ", " : "",
                           f->name[0] ? f->name : "(subquery)");
    if (k > 0) n += (size_t)k;
  }
}

static bool hidden_using(const binder *b, int from, const char *col) {
  for (int i = 0; i < b->n_using; i++)
    if (b->usings[i].from == from && strcmp(b->usings[i].name, col) == 0) return true;
  return false;
}

static plan_expr *slot_expr(binder *b, int from, int ci, uint32_t off) {
  plan_expr *e = bind_node(b, PX_COLUMN, off, 0);
  if (!e) return NULL;
  const plan_from *f = &b->scope[from];
  const cat_column *c = &f->table->columns[ci];
  e->column = f->base + ci;
  e->type = c->type;
  /* a table on the right of a LEFT JOIN may be padded with NULLs */
  e->nullable = c->nullable || f->join == SQL_JOIN_LEFT;
  return e;
}

/* Column ci of table `from` when fam (NULL: any) is its family. */
static int find_in(const plan_from *f, const char *col, const char *fam) {
  int ci = cat_find_column(f->table, col);
  if (ci >= 0 && fam && f->sub) return -1; /* a derived table's columns have no family */
  if (ci >= 0 && fam) {
    const cat_column *c = &f->table->columns[ci];
    if (c->pk_pos >= 0 || strcmp(f->table->families[c->family].name, fam) != 0) ci = -1;
  }
  return ci;
}

plan_expr *bind_from_column(binder *b, const sql_expr *x) {
  char full[300], scope[400];
  full[0] = 0;
  for (int i = 0; i < x->nname; i++) {
    size_t l = strlen(full);
    snprintf(full + l, sizeof full - l, "%s%s", i ? "." : "", x->name[i]);
  }
  const char *col = x->name[x->nname - 1];
  if (x->nname >= 2) {
    int hit = -1;
    for (int i = 0; i < b->n_scope; i++) {
      if (!names_from(&b->scope[i], x->name[0])) continue;
      hit = i;
      break;
    }
    if (hit >= 0) {
      const char *fam = x->nname == 3 ? x->name[1] : NULL;
      int ci = find_in(&b->scope[hit], col, fam);
      if (ci < 0) {
        const plan_from *f = &b->scope[hit];
        bind_error(b, EXEC_ERROR, x->off, "unknown column \"%s\": %s%s%s%s has no column %s%s%s",
                   full, f->name, f->name != f->table->name ? " (" : "",
                   f->name != f->table->name ? f->table->name : "",
                   f->name != f->table->name ? ")" : "", fam ? fam : "", fam ? "." : "", col);
        return NULL;
      }
      return slot_expr(b, hit, ci, x->off);
    }
    if (x->nname == 2) { /* family.column of exactly one table */
      int found = -1, n = 0;
      for (int i = 0; i < b->n_scope; i++) {
        int ci = cat_find_family(b->scope[i].table, x->name[0]) >= 0
                     ? find_in(&b->scope[i], col, x->name[0])
                     : -1;
        if (ci >= 0) {
          if (n++ == 0) found = i;
        }
      }
      if (n == 1) return slot_expr(b, found, find_in(&b->scope[found], col, x->name[0]), x->off);
      if (n > 1) {
        bind_error(b, EXEC_ERROR, x->off, "column \"%s\" is ambiguous: more than one table has "
                   "family %s with column %s (qualify it with the table: %s.%s)", full,
                   x->name[0], col, b->scope[found].name, full);
        return NULL;
      }
    }
    scope_text(b, scope, sizeof scope);
    bind_error(b, EXEC_ERROR, x->off, "unknown table or alias \"%s\" in \"%s\" (in scope: %s)",
               x->name[0], full, scope);
    return NULL;
  }
  int found = -1, ci_found = -1, n = 0;
  char tables[400];
  size_t tn = 0;
  tables[0] = 0;
  for (int i = 0; i < b->n_scope; i++) {
    int ci = find_in(&b->scope[i], col, NULL);
    if (ci < 0 || hidden_using(b, i, col)) continue;
    if (n++ == 0) {
      found = i;
      ci_found = ci;
    }
    if (tn < sizeof tables) {
      int k = snprintf(tables + tn, sizeof tables - tn, "%s%s", n > 1 ? " and " : "",
                       b->scope[i].name);
      if (k > 0) tn += (size_t)k;
    }
  }
  if (n == 1) return slot_expr(b, found, ci_found, x->off);
  if (n > 1) {
    bind_error(b, EXEC_ERROR, x->off,
               "column \"%s\" is ambiguous: %s have it (qualify it, e.g. %s.%s)",
               full, tables, b->scope[found].name, col);
    return NULL;
  }
  scope_text(b, scope, sizeof scope);
  bind_error(b, EXEC_ERROR, x->off, "unknown column \"%s\" (no table in scope has it: %s)", full,
             scope);
  return NULL;
}

bool bind_from_has_column(const binder *b, const char *name) {
  for (int i = 0; i < b->n_scope; i++)
    if (cat_find_column(b->scope[i].table, name) >= 0) return true;
  return false;
}

int bind_from_star(binder *b, const sql_result_col *rc, plan_select *s, int *cap,
                   int (*add)(binder *, plan_select *, int *, plan_expr *, char *)) {
  int only = -1;
  if (rc->nqual >= 1) {
    for (int i = 0; i < b->n_scope && only < 0; i++)
      if (names_from(&b->scope[i], rc->qual[0])) only = i;
    if (only < 0 || rc->nqual == 2) {
      char scope[400];
      scope_text(b, scope, sizeof scope);
      if (only < 0)
        return bind_error(b, EXEC_ERROR, rc->off, "unknown table or alias \"%s\" in %s.* "
                          "(in scope: %s)", rc->qual[0], rc->qual[0], scope);
      return bind_error(b, EXEC_ERROR, rc->off, "%s.%s.* is not supported in a join: use %s.*",
                        rc->qual[0], rc->qual[1], rc->qual[0]);
    }
  }
  for (int i = 0; i < b->n_scope; i++) {
    if (only >= 0 && i != only) continue;
    const cat_table *t = b->scope[i].table;
    for (int c = 0; c < t->n_columns; c++) {
      if (only < 0 && hidden_using(b, i, t->columns[c].name)) continue;
      plan_expr *e = slot_expr(b, i, c, rc->off);
      if (!e || add(b, s, cap, e, (char *)t->columns[c].name)) return b->rc;
    }
  }
  return EXEC_OK;
}

/* USING (cols) of join k: each name must be a column of table k and of exactly one table
** before it (a USING column of an earlier join counts once); the equalities are ANDed. */
static plan_expr *bind_using(binder *b, int k, const sql_colname_list *u) {
  plan_expr *all = NULL;
  const plan_from *right = &b->scope[k];
  for (int i = 0; i < u->n; i++) {
    const sql_colname *cn = &u->a[i];
    if (cn->family) {
      bind_error(b, EXEC_ERROR, cn->off, "USING takes column names without a family: %s.%s",
                 cn->family, cn->name);
      return NULL;
    }
    for (int j = 0; j < i; j++)
      if (strcmp(u->a[j].name, cn->name) == 0) {
        bind_error(b, EXEC_ERROR, cn->off, "column \"%s\" is listed twice in USING", cn->name);
        return NULL;
      }
    int rci = cat_find_column(right->table, cn->name);
    if (rci < 0) {
      if (right->name != right->table->name)
        bind_error(b, EXEC_ERROR, cn->off, "USING column \"%s\" is not in %s (%s)", cn->name,
                   right->name, right->table->name);
      else
        bind_error(b, EXEC_ERROR, cn->off, "USING column \"%s\" is not in %s", cn->name,
                   right->name);
      return NULL;
    }
    int left = -1, n = 0, lci = -1;
    for (int j = 0; j < k; j++) {
      int ci = cat_find_column(b->scope[j].table, cn->name);
      if (ci < 0 || hidden_using(b, j, cn->name)) continue;
      if (n++ == 0) {
        left = j;
        lci = ci;
      }
    }
    if (n != 1) {
      bind_error(b, EXEC_ERROR, cn->off, n == 0 ? "USING column \"%s\" is in no table before "
                 "the join" : "USING column \"%s\" is in more than one table before the join: "
                 "use ON", cn->name);
      return NULL;
    }
    plan_expr *l = slot_expr(b, left, lci, cn->off), *r = slot_expr(b, k, rci, cn->off);
    plan_expr *eq = bind_node(b, PX_BINARY, cn->off, 2);
    if (!l || !r || !eq || bind_compare_pair(b, l, r, cn->off)) return NULL;
    eq->op = SQL_OP_EQ;
    eq->type = cat_type_of(CAT_T_BOOLEAN);
    eq->nullable = l->nullable || r->nullable;
    eq->args[0] = l;
    eq->args[1] = r;
    if (all) {
      plan_expr *a = bind_node(b, PX_BINARY, cn->off, 2);
      if (!a) return NULL;
      a->op = SQL_OP_AND;
      a->type = eq->type;
      a->nullable = all->nullable || eq->nullable;
      a->args[0] = all;
      a->args[1] = eq;
      eq = a;
    }
    all = eq;
    struct bind_using *nu = plan_arena_alloc(b->A, (size_t)(b->n_using + 1) * sizeof *nu);
    if (!nu) {
      bind_error(b, EXEC_NOMEM, cn->off, "out of memory");
      return NULL;
    }
    if (b->n_using) memcpy(nu, b->usings, (size_t)b->n_using * sizeof *nu);
    nu[b->n_using].from = k;
    nu[b->n_using].name = right->table->columns[rci].name;
    b->usings = nu;
    b->n_using++;
  }
  return all;
}

/* The refusals and the ON / USING rules of join j (the (k)-th table). */
static int check_join(binder *b, const sql_join *j) {
  if (j->natural)
    return bind_error(b, EXEC_ERROR, j->off,
                      "NATURAL JOIN is not supported: name the columns with USING (...)");
  bool outer2 = j->kind == SQL_JOIN_RIGHT || j->kind == SQL_JOIN_FULL;
  if (outer2 && j->using) /* the USING column would be COALESCE(left.c, right.c) */
    return bind_error(b, EXEC_ERROR, j->off, "%s JOIN ... USING is not supported yet: write ON "
                      "left.c = right.c", j->kind == SQL_JOIN_RIGHT ? "RIGHT" : "FULL");
  if (j->on && j->using)
    return bind_error(b, EXEC_ERROR, j->off, "a join takes ON or USING, not both");
  if (j->kind == SQL_JOIN_CROSS && (j->on || j->using))
    return bind_error(b, EXEC_ERROR, j->off,
                      "CROSS JOIN takes no ON or USING condition: use JOIN ... ON");
  if ((j->kind == SQL_JOIN_INNER || j->kind == SQL_JOIN_LEFT || outer2) && !j->on && !j->using)
    return bind_error(b, EXEC_ERROR, j->off, "%s needs an ON or USING condition (or use "
                      "CROSS JOIN)", j->kind == SQL_JOIN_LEFT    ? "LEFT JOIN"
                                     : j->kind == SQL_JOIN_RIGHT ? "RIGHT JOIN"
                                     : j->kind == SQL_JOIN_FULL  ? "FULL JOIN"
                                                                 : "JOIN");
  return EXEC_OK;
}

const cat_table *bind_find_table(binder *b, const char *name, uint32_t off) {
  if (b->cte_self && strcmp(name, b->cte_self) == 0) {
    bind_error(b, EXEC_ERROR, off, "WITH RECURSIVE is not supported: the query of %s names %s "
               "itself", name, name);
    return NULL;
  }
  const cat_table *t = cat_find_table(b->cat, name);
  if (t && b->bound) b->bound->n_tables++; /* for AS OF (planner/bind_as_of.c) */
  if (t) return t;
  if (!b->ctes) {
    char foreign[400]; /* HBase: a table Apache Phoenix created (docs/HBASE.md) */
    (void)cat_foreign_table(b->cat, name, foreign, sizeof foreign);
    if (foreign[0]) bind_error(b, EXEC_ERROR, off, "%s", foreign);
    else bind_error(b, EXEC_ERROR, off, "unknown table \"%s\"", name);
    return NULL;
  }
  char names[300];
  size_t k = 0;
  names[0] = 0;
  for (const struct bind_cte *w = b->ctes; w && k < sizeof names; w = w->up) {
    int m = snprintf(names + k, sizeof names - k, "%s%s", k ? ", " : "", w->def->name);
    if (m > 0) k += (size_t)m;
  }
  bind_error(b, EXEC_ERROR, off, "unknown table or WITH name \"%s\" (WITH names in scope: %s)",
             name, names);
  return NULL;
}

/* FROM item i (table name tname, or the derived table sub) into f: a WITH name or a
** derived table is bound as a subquery, another name is the catalog's table. */
static int bind_item(binder *b, const char *tname, const sql_select *sub, const char *alias,
                     const sql_colname_list *dyn, uint32_t toff, plan_from *f) {
  if (sub) return bind_derived(b, sub, NULL, alias, toff, f);
  const sql_cte *c = b->cte_self && strcmp(tname, b->cte_self) == 0 ? NULL
                                                                     : bind_find_cte(b, tname);
  if (c && bind_dyn_refuse(b, dyn, tname, "a WITH name")) return b->rc;
  if (c) return bind_derived(b, c->select, c->cols, alias ? alias : c->name, toff, f);
  const cat_view *v = cat_find_view(b->cat, tname); /* a view: planner/bind_view.c */
  if (v && bind_dyn_refuse(b, dyn, tname, "a view")) return b->rc;
  if (v) return bind_view_derived(b, v, alias, toff, f);
  const cat_table *t = bind_find_table(b, tname, toff);
  if (t) t = bind_dyn_table(b, t, dyn, NULL); /* Phoenix's dynamic columns: planner/bind_dyncol.c */
  if (!t) return b->rc;
  f->table = t;
  f->name = alias ? plan_arena_strndup(b->A, alias, strlen(alias)) : t->name;
  if (!f->name) return bind_error(b, EXEC_NOMEM, toff, "out of memory");
  return EXEC_OK;
}

int bind_from_joins(binder *b, const sql_select *q, plan_select *s) {
  int n = 1 + (q->joins ? q->joins->n : 0);
  plan_from *pre = b->pre_from;
  b->pre_from = NULL;
  b->sel = s; /* aggregates in ON are refused as such */
  plan_from *from = pre ? pre : plan_arena_alloc(b->A, (size_t)n * sizeof *from);
  if (!from) return bind_error(b, EXEC_NOMEM, 0, "out of memory");
  int base = 0;
  for (int i = 0; i < n; i++) {
    const sql_join *j = i ? &q->joins->a[i - 1] : NULL;
    const char *alias = j ? j->alias : q->alias;
    uint32_t toff = j ? j->table_off : q->table_off;
    if (j && check_join(b, j)) return b->rc;
    if (!pre && bind_item(b, j ? j->table : q->table, j ? j->sub : q->sub, alias,
                          j ? j->dyn : q->dyn, toff, &from[i]))
      return b->rc;
    const cat_table *t = from[i].table;
    from[i].base = base;
    from[i].join = j ? j->kind : 0;
    from[i].off = j ? j->off : toff;
    for (int k = 0; k < i && from[i].name[0]; k++) /* "": a derived table without alias */
      if (strcmp(from[k].name, from[i].name) == 0)
        return bind_error(b, EXEC_ERROR, alias ? (j ? j->alias_off : q->alias_off) : toff,
                          alias ? "alias \"%s\" is used twice in FROM"
                                : "table \"%s\" is named twice in FROM: give each an alias "
                                  "(FROM %s a JOIN %s b ...)",
                          from[i].name, from[i].name, from[i].name);
    base += t->n_columns;
  }
  s->n_from = n;
  s->from = from;
  s->n_slots = base;
  s->col_names = plan_arena_alloc(b->A, (size_t)(base + 1) * sizeof *s->col_names);
  if (!s->col_names) return bind_error(b, EXEC_NOMEM, 0, "out of memory");
  for (int i = 0; i < n; i++)
    for (int c = 0; c < from[i].table->n_columns; c++) {
      char buf[300];
      snprintf(buf, sizeof buf, "%s%s%s", from[i].name, from[i].name[0] ? "." : "",
               from[i].table->columns[c].name);
      s->col_names[from[i].base + c] = plan_arena_strndup(b->A, buf, strlen(buf));
      if (!s->col_names[from[i].base + c]) return bind_error(b, EXEC_NOMEM, 0, "out of memory");
    }
  b->scope = from;
  /* ON and USING of each join see the tables up to it */
  b->agg_mode = BIND_AGG_NO;
  for (int i = 1; i < n; i++) {
    const sql_join *j = &q->joins->a[i - 1];
    b->n_scope = i + 1;
    if (j->using) {
      from[i].on = bind_using(b, i, j->using);
      if (!from[i].on) return b->rc;
    } else if (j->on) {
      b->agg_where = "ON";
      from[i].on = bind_expr(b, j->on);
      if (!from[i].on) return b->rc;
      if (from[i].on->type.id != CAT_T_BOOLEAN && from[i].on->type.id != 0)
        return bind_error(b, EXEC_ERROR, from[i].on->off, "ON needs a BOOLEAN condition, not %s",
                          cat_type_name(from[i].on->type.id));
    }
  }
  b->n_scope = n;
  return EXEC_OK;
}
