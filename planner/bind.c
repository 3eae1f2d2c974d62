/*
** planner/bind.c: binding of expressions. Turns an sql_expr (sql/ast.h) into a plan_expr
** (planner/expr.h): column names resolved against the statement's table (col, family.col,
** table.col, alias.col, table.family.col; in a join, planner/bind_from.c), literals made into typed constants, types
** inferred and checked (numeric promotion, comparable operands), constants compared with a
** column converted to the column's type where the conversion is exact, parameters given the
** type they are compared with, constant subtrees folded.
**
** Aggregates and scalar functions are resolved in planner/bind_func.c; statements (SELECT,
** UPSERT, DELETE) in planner/bind_stmt.c. Errors name the name and its position
** ("unknown column \"TEMPX\" at line 1, column 8").
*/
#include "planner/plan_bind.h"

#include <errno.h>
#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/array.h"
#include "catalog/decimal.h"
#include "catalog/value.h"
#include "catalog/status.h"
#include "catalog/func_sig.h"

int bind_error(binder *b, int code, uint32_t off, const char *fmt, ...) {
  if (b->rc) return b->rc;
  va_list ap;
  va_start(ap, fmt);
  char head[400];
  vsnprintf(head, sizeof head, fmt, ap);
  va_end(ap);
  char pos[64];
  plan_position(b->sql, off, pos, sizeof pos);
  snprintf(b->msg, b->cap, "%s%s", head, pos);
  if (b->err_off) *b->err_off = (int)off;
  b->rc = code;
  return code;
}

plan_expr *bind_node(binder *b, int kind, uint32_t off, uint32_t n_args) {
  plan_expr *e = plan_arena_alloc(b->A, sizeof *e);
  if (!e) {
    bind_error(b, EXEC_NOMEM, off, "out of memory");
    return NULL;
  }
  e->kind = (uint8_t)kind;
  e->off = off;
  e->column = -1;
  e->n_args = n_args;
  if (n_args) {
    e->args = plan_arena_alloc(b->A, n_args * sizeof *e->args);
    if (!e->args) {
      bind_error(b, EXEC_NOMEM, off, "out of memory");
      return NULL;
    }
  }
  return e;
}

plan_expr *bind_const(binder *b, cat_value v, uint32_t off) {
  plan_expr *e = bind_node(b, PX_CONST, off, 0);
  if (!e) return NULL;
  if (!v.is_null && cat_type_has_bytes(v.type.id)) {
    if (v.u.s.len) {
      char *p = plan_arena_strndup(b->A, (const char *)v.u.s.p, v.u.s.len);
      if (!p) {
        bind_error(b, EXEC_NOMEM, off, "out of memory");
        return NULL;
      }
      v.u.s.p = (const uint8_t *)p;
    }
  }
  e->value = v;
  e->type = v.type;
  e->nullable = v.is_null;
  return e;
}

/* ---- Literals ------------------------------------------------------------------------- */
static plan_expr *bind_literal(binder *b, const sql_expr *x) {
  cat_value v;
  cat_error ce = {0};
  switch (x->lit) {
    case SQL_LIT_NULL: {
      cat_type t = {0, 0, 0, 0, 0};
      v = cat_v_null(t);
      break;
    }
    case SQL_LIT_TRUE: v = cat_v_bool(true); break;
    case SQL_LIT_FALSE: v = cat_v_bool(false); break;
    case SQL_LIT_INTEGER: {
      errno = 0;
      char *end = NULL;
      long long i = strtoll(x->text, &end, 10);
      if (errno == 0 && end && *end == 0) {
        v = cat_v_int(i >= INT32_MIN && i <= INT32_MAX ? CAT_T_INTEGER : CAT_T_BIGINT, i);
        break;
      }
      /* too large for BIGINT: keep it exact as DECIMAL */
      cat_dec d;
      if (cat_dec_parse(x->text, x->text_len, &d, "DECIMAL", &ce) != CAT_OK) {
        bind_error(b, EXEC_ERROR, x->off, "%s", ce.msg);
        return NULL;
      }
      v = cat_v_dec(d, 0, 0);
      break;
    }
    case SQL_LIT_DECIMAL: {
      cat_dec d;
      if (cat_dec_parse(x->text, x->text_len, &d, "DECIMAL", &ce) != CAT_OK) {
        bind_error(b, EXEC_ERROR, x->off, "%s", ce.msg);
        return NULL;
      }
      v = cat_v_dec(d, 0, 0);
      break;
    }
    case SQL_LIT_DOUBLE: {
      cat_type t = cat_type_of(CAT_T_DOUBLE);
      if (cat_text_parse(&t, x->text, x->text_len, &v, &ce) != CAT_OK) {
        bind_error(b, EXEC_ERROR, x->off, "%s", ce.msg);
        return NULL;
      }
      break;
    }
    case SQL_LIT_STRING: v = cat_v_str(CAT_T_VARCHAR, x->text, x->text_len); break;
    case SQL_LIT_BLOB: v = cat_v_str(CAT_T_VARBINARY, x->text, x->text_len); break;
    case SQL_LIT_DATE: case SQL_LIT_TIME: case SQL_LIT_TIMESTAMP: {
      int id = x->lit == SQL_LIT_DATE ? CAT_T_DATE : x->lit == SQL_LIT_TIME ? CAT_T_TIME
                                                                            : CAT_T_TIMESTAMP;
      cat_type t = cat_type_of(id);
      if (cat_text_parse(&t, x->text, x->text_len, &v, &ce) != CAT_OK) {
        bind_error(b, EXEC_ERROR, x->off, "%s", ce.msg);
        return NULL;
      }
      break;
    }
    default:
      bind_error(b, EXEC_ERROR, x->off, "unsupported literal");
      return NULL;
  }
  return bind_const(b, v, x->off);
}

/* ---- Columns -------------------------------------------------------------------------- */
static plan_expr *column_expr(binder *b, int ci, uint32_t off) {
  plan_expr *e = bind_node(b, PX_COLUMN, off, 0);
  if (!e) return NULL;
  const cat_column *c = &b->table->columns[ci];
  e->column = ci;
  e->type = c->type;
  e->nullable = c->nullable;
  return e;
}

/* Does the qualifier q name the one table in scope? Its alias when it has one (the alias
** hides the name, as in a join; a merged view's name is its alias), else its name. */
static bool names_table(const binder *b, const char *q) {
  if (b->alias) return strcmp(q, b->alias) == 0;
  if (strcmp(q, b->table->name) == 0) return true;
  /* S.T tables: the last part of the name */
  const char *dot = strrchr(b->table->name, '.');
  return dot && strcmp(q, dot + 1) == 0;
}

/* HAVING's bare name `name` that no FROM item has: the select-list item aliased so, bound
** again from its SQL (a plan expression of its own: the aggregate rewrite changes
** expressions in place, so one shared with the select list would be rewritten twice), or
** NULL with *found false. */
static plan_expr *having_alias(binder *b, const char *name, bool *found) {
  const struct sql_result_list *l = b->having_aliases;
  *found = false;
  if (b->n_scope ? bind_from_has_column(b, name) : b->table && cat_find_column(b->table, name) >= 0)
    return NULL;
  for (int i = 0; i < l->n; i++) {
    if (!l->a[i].expr || !l->a[i].alias || strcmp(l->a[i].alias, name) != 0) continue;
    *found = true;
    b->having_aliases = NULL; /* the alias's own expression sees no aliases */
    plan_expr *e = bind_expr(b, l->a[i].expr);
    b->having_aliases = l;
    return e;
  }
  return NULL;
}

static plan_expr *bind_column(binder *b, const sql_expr *x) {
  if (b->having_aliases && x->nname == 1) {
    bool found;
    plan_expr *e = having_alias(b, x->name[0], &found);
    if (e) e->off = x->off; /* errors about it point at the name in HAVING */
    if (found) return e;
  }
  char full[300];
  full[0] = 0;
  for (int i = 0; i < x->nname; i++) {
    size_t l = strlen(full);
    snprintf(full + l, sizeof full - l, "%s%s", i ? "." : "", x->name[i]);
  }
  bool outer = false; /* a column of a query around this subquery (planner/bind_apply.c) */
  plan_expr *oe = b->corr ? bind_corr_column(b, x, &outer) : NULL;
  if (outer) return oe;
  if (b->n_scope) return bind_from_column(b, x); /* a join (planner/bind_from.c) */
  if (!b->table) {
    /* UPSERT ... VALUES binds its rows with no table (bind_stmt.c): a name there is not a
       value; elsewhere the SELECT has no FROM */
    if (b->agg_where && strcmp(b->agg_where, "VALUES") == 0)
      bind_error(b, EXEC_ERROR, x->off,
                 "unknown column \"%s\" (UPSERT ... VALUES takes values, not column names: "
                 "text goes in single quotes)", full);
    else
      bind_error(b, EXEC_ERROR, x->off, "unknown column \"%s\" (no table in FROM)", full);
    return NULL;
  }
  const char *col = x->name[x->nname - 1];
  const char *fam = NULL;
  bool ok = true;
  if (x->nname == 2) {
    if (!names_table(b, x->name[0])) fam = x->name[0];
  } else if (x->nname == 3) {
    ok = names_table(b, x->name[0]);
    fam = x->name[1];
  }
  int ci = ok ? cat_find_column(b->table, col) : -1;
  if (ci >= 0 && fam) {
    const cat_column *c = &b->table->columns[ci];
    if (c->pk_pos >= 0 || strcmp(b->table->families[c->family].name, fam) != 0) ci = -1;
  }
  if (ci < 0) {
    bind_error(b, EXEC_ERROR, x->off, "unknown column \"%s\"", full);
    return NULL;
  }
  return column_expr(b, ci, x->off);
}

/* ---- Types ---------------------------------------------------------------------------- */
static int tclass(int id) {
  if (id == 0) return 0;
  if (cat_type_is_numeric(id)) return 1;
  if (cat_type_is_string(id)) return 2;
  if (id == CAT_T_DATE || id == CAT_T_TIMESTAMP) return 3;
  if (id == CAT_T_TIME) return 4;
  if (id == CAT_T_BOOLEAN) return 5;
  if (id == CAT_T_ARRAY) return 7;
  return 6; /* VARBINARY */
}

bool bind_comparable(const cat_type *a, const cat_type *b2) {
  int x = tclass(a->id), y = tclass(b2->id);
  if (x == 7 && y == 7) { /* arrays compare element by element */
    cat_type ea = cat_type_elem(a), eb = cat_type_elem(b2);
    return bind_comparable(&ea, &eb);
  }
  return x == 0 || y == 0 || x == y;
}

cat_type bind_numeric_result(const cat_type *a, const cat_type *b2) {
  if (cat_type_is_float(a->id) || cat_type_is_float(b2->id)) return cat_type_of(CAT_T_DOUBLE);
  if (a->id == CAT_T_DECIMAL || b2->id == CAT_T_DECIMAL) return cat_type_of(CAT_T_DECIMAL);
  return cat_type_of(CAT_T_BIGINT);
}

/* The common type of two result types (CASE arms, COALESCE, IN lists); ok false if none. */
cat_type bind_common_type(const cat_type *a, const cat_type *b2, bool *ok) {
  *ok = true;
  if (a->id == 0) return *b2;
  if (b2->id == 0) return *a;
  if (a->id == CAT_T_ARRAY && b2->id == CAT_T_ARRAY) { /* the arrays of the common element */
    cat_type ea = cat_type_elem(a), eb = cat_type_elem(b2);
    cat_type e = bind_common_type(&ea, &eb, ok);
    return *ok ? cat_type_array_of(&e) : *a;
  }
  if (a->id == b2->id) {
    cat_type t = *a;
    if (a->length != b2->length || a->precision != b2->precision || a->scale != b2->scale) {
      t.length = 0;
      t.precision = 0;
      t.scale = 0;
    }
    return t;
  }
  int x = tclass(a->id), y = tclass(b2->id);
  if (x != y) {
    *ok = false;
    return *a;
  }
  if (x == 1) {
    if (cat_type_is_integer(a->id) && cat_type_is_integer(b2->id))
      return cat_type_of(a->id > b2->id ? a->id : b2->id);
    return bind_numeric_result(a, b2);
  }
  if (x == 2) return cat_type_of(CAT_T_VARCHAR);
  if (x == 3) return cat_type_of(CAT_T_TIMESTAMP);
  return *a;
}

/* A constant compared with an expression of type t: converted to t where that is exact
** (INTEGER column = 5 keeps 5 as INTEGER; = 5.5 stays DECIMAL; '2016-01-01' becomes a DATE).
** A string that does not parse as t is an error naming the value and the type. */
int bind_coerce_const(binder *b, plan_expr *c, const cat_type *t) {
  if (c->kind != PX_CONST || c->value.is_null || t->id == 0) {
    if (c->kind == PX_CONST && c->value.is_null && t->id) {
      c->value = cat_v_null(*t);
      c->type = *t;
    }
    return EXEC_OK;
  }
  int from = c->type.id;
  if (from == t->id && !cat_type_is_string(from)) return EXEC_OK;
  cat_error ce = {0};
  cat_value out;
  uint8_t buf[80];
  bool from_str = cat_type_is_string(from);
  if (from_str && (cat_type_is_string(t->id) || t->id == CAT_T_VARBINARY)) return EXEC_OK;
  if (from_str && t->id == CAT_T_ARRAY) { /* tags = '[''a'', ''b'']': the text form */
    size_t len = 0;
    int rc = cat_array_parse(t, (const char *)c->value.u.s.p, c->value.u.s.len, NULL, 0, &len,
                             &out, &ce);
    uint8_t *p = rc == CAT_ERR_TOOBIG ? plan_arena_alloc(b->A, len) : NULL;
    if (p) rc = cat_array_parse(t, (const char *)c->value.u.s.p, c->value.u.s.len, p, len, &len,
                                &out, &ce);
    else if (rc == CAT_ERR_TOOBIG) return bind_error(b, EXEC_NOMEM, c->off, "out of memory");
    if (rc) {
      char tt[48];
      return bind_error(b, EXEC_ERROR, c->off, "cannot compare %s with '%.*s': %s",
                        cat_type_format(t, tt, sizeof tt),
                        (int)(c->value.u.s.len > 60 ? 60 : c->value.u.s.len),
                        (const char *)c->value.u.s.p, ce.msg);
    }
    c->value = out;
    c->type = out.type;
    return EXEC_OK;
  }
  if (from_str) {
    /* parse as the other side's type; string vs number or date needs the parse to work */
    cat_type pt = *t;
    if (cat_type_is_integer(pt.id) || pt.id == CAT_T_DECIMAL) pt = cat_type_of(CAT_T_DECIMAL);
    if (pt.id == CAT_T_FLOAT) pt = cat_type_of(CAT_T_DOUBLE);
    if (pt.id == CAT_T_DATE) pt = cat_type_of(CAT_T_TIMESTAMP); /* '2016-01-01 12:00' too */
    if (cat_text_parse(&pt, (const char *)c->value.u.s.p, c->value.u.s.len, &out, &ce)) {
      char tt[32];
      /* The text was parsed as a wider type (DECIMAL for an integer column, TIMESTAMP for a
         DATE): say what was expected in the column's terms, not the wider type's. */
      const char *why = pt.id == t->id ? ce.msg
                        : pt.id == CAT_T_TIMESTAMP ? "not a date or timestamp"
                                                   : "not a number";
      return bind_error(b, EXEC_ERROR, c->off, "cannot compare %s with '%.*s': %s",
                        cat_type_format(t, tt, sizeof tt), (int)(c->value.u.s.len > 60 ? 60 : c->value.u.s.len),
                        (const char *)c->value.u.s.p, why);
    }
    c->value = out;
    c->type = out.type;
    from = out.type.id;
    if (from == t->id) return EXEC_OK;
  }
  if (!bind_comparable(&c->type, t)) return EXEC_OK; /* the caller reports the mismatch */
  if (cat_type_has_bytes(t->id)) return EXEC_OK;
  if (cat_type_is_float(from) && !cat_type_is_float(t->id)) {
    /* A FLOAT/DOUBLE constant against an exact column compares as doubles (docs/TYPES.md).
       Turning it into the column's type is the same comparison only for an integer column
       and |c| < 2^53, where double(k) equals c exactly when k does; beyond that (and for
       DECIMAL, whose values may carry more digits than a double) it stays a double. */
    if (!cat_type_is_integer(t->id) || !(fabs(c->value.u.d) < 9007199254740992.0)) return EXEC_OK;
  }
  cat_type target = *t;
  if (target.id == CAT_T_DECIMAL) target.precision = 0;
  if (cat_value_cast(&c->value, &target, &out, buf, sizeof buf, &ce) != CAT_OK) return EXEC_OK;
  int cmp = 1;
  if (cat_value_compare(&out, &c->value, &cmp, &ce) != CAT_OK || cmp != 0) return EXEC_OK;
  if (cat_type_is_float(target.id) && !cat_type_is_float(from)) {
    /* exact only if the double converts back to the same exact value */
    cat_value back;
    if (cat_value_cast(&out, &c->type, &back, buf, sizeof buf, &ce) != CAT_OK) return EXEC_OK;
    if (cat_value_compare(&back, &c->value, &cmp, &ce) != CAT_OK || cmp != 0) return EXEC_OK;
  }
  c->value = out;
  c->type = out.type;
  return EXEC_OK;
}

/* A parameter compared with type t takes t as its type. */
static void infer_param(binder *b, plan_expr *p, const cat_type *t) {
  if (p->kind != PX_PARAM || t->id == 0) return;
  if (p->type.id == 0) p->type = *t;
  if (b->bound->param_types && p->param >= 1 && p->param <= b->bound->n_params &&
      b->bound->param_types[p->param - 1].id == 0)
    b->bound->param_types[p->param - 1] = *t;
}

/* Make the two sides of a comparison meet: coerce constants, type parameters, check. */
int bind_compare_pair(binder *b, plan_expr *l, plan_expr *r, uint32_t off) {
  if (l->kind == PX_CONST && r->kind != PX_CONST) {
    if (bind_coerce_const(b, l, &r->type)) return b->rc;
  } else if (r->kind == PX_CONST && l->kind != PX_CONST) {
    if (bind_coerce_const(b, r, &l->type)) return b->rc;
  }
  infer_param(b, l, &r->type);
  infer_param(b, r, &l->type);
  if (!bind_comparable(&l->type, &r->type)) {
    char ta[32], tb[32];
    return bind_error(b, EXEC_ERROR, off, "cannot compare %s with %s",
                      cat_type_format(&l->type, ta, sizeof ta),
                      cat_type_format(&r->type, tb, sizeof tb));
  }
  return EXEC_OK;
}

/* ---- Constant folding ------------------------------------------------------------------- */
static bool all_const(const plan_expr *e) {
  for (uint32_t i = 0; i < e->n_args; i++)
    if (e->args[i]->kind != PX_CONST) return false;
  return true;
}

/* 1 for a TRUE constant, 0 for FALSE, -1 otherwise (NULL included). */
static int bool_const(const plan_expr *e) {
  if (e->kind != PX_CONST || e->value.is_null || e->value.type.id != CAT_T_BOOLEAN) return -1;
  return e->value.u.b ? 1 : 0;
}

/* The executor's evaluator of constant expressions (plan_set_const_eval). */
static plan_const_eval_fn const_eval;

void plan_set_const_eval(plan_const_eval_fn fn) {
  __atomic_store_n(&const_eval, fn, __ATOMIC_RELEASE);
}

plan_expr *bind_fold(binder *b, plan_expr *e) {
  /* x OR TRUE is TRUE and x AND FALSE FALSE whatever x is (NULL included); x OR FALSE and
     x AND TRUE are x: a redundant condition is no filter */
  if (e && !b->rc && e->kind == PX_BINARY && e->n_args == 2 &&
      (e->op == SQL_OP_AND || e->op == SQL_OP_OR)) {
    int absorb = e->op == SQL_OP_OR ? 1 : 0;
    for (int i = 0; i < 2; i++) {
      int k = bool_const(e->args[i]);
      if (k == absorb) return e->args[i];
      if (k == !absorb) return e->args[1 - i];
    }
  }
  if (!e || b->rc || e->kind == PX_CONST || e->kind == PX_COLUMN || e->kind == PX_PARAM ||
      e->kind == PX_AGG || e->kind == PX_ROW || !all_const(e))
    return e;
  if (e->kind == PX_FUNC && !bind_func_foldable(e->func)) return e;
  plan_const_eval_fn ev = __atomic_load_n(&const_eval, __ATOMIC_ACQUIRE);
  if (!ev) return e; /* no evaluator registered: evaluated at run time instead */
  char msg[256];
  msg[0] = 0;
  cat_value v;
  int rc = ev(e, b->A, &v, msg, sizeof msg);
  if (rc != EXEC_OK) {
    /* an error a constant expression always raises is reported now */
    bind_error(b, rc, e->off, "%s", msg);
    return NULL;
  }
  cat_type t = e->type;
  if (v.is_null) v = cat_v_null(t);
  plan_expr *k = bind_const(b, v, e->off);
  if (!k) return NULL;
  if (!v.is_null && cat_type_is_integer(v.type.id)) {
    /* an integer constant keeps the literal rule: INTEGER when it fits */
    k->value.type = cat_type_of(v.u.i >= INT32_MIN && v.u.i <= INT32_MAX ? CAT_T_INTEGER
                                                                         : CAT_T_BIGINT);
    k->type = k->value.type;
  }
  return k;
}

/* ---- Operators ------------------------------------------------------------------------ */
static bool is_bool(const plan_expr *e) { return e->type.id == CAT_T_BOOLEAN || e->type.id == 0; }

static plan_expr *bind_unary(binder *b, const sql_expr *x) {
  plan_expr *a = bind_expr(b, x->left);
  if (!a) return NULL;
  if (x->op == SQL_OP_POS) {
    if (!cat_type_is_numeric(a->type.id) && a->type.id) {
      bind_error(b, EXEC_ERROR, x->off, "unary + needs a number, not %s", cat_type_name(a->type.id));
      return NULL;
    }
    return a;
  }
  plan_expr *e = bind_node(b, PX_UNARY, x->off, 1);
  if (!e) return NULL;
  e->op = (uint8_t)x->op;
  e->args[0] = a;
  e->nullable = a->nullable;
  if (x->op == SQL_OP_NOT) {
    if (!is_bool(a)) {
      bind_error(b, EXEC_ERROR, x->off, "NOT needs a BOOLEAN, not %s", cat_type_name(a->type.id));
      return NULL;
    }
    e->type = cat_type_of(CAT_T_BOOLEAN);
  } else {
    char m[256];
    int fid;
    cat_type rt;
    if (cat_func_lookup("-", 1, &a->type, &fid, &rt, m, sizeof m) != EXEC_OK) {
      bind_error(b, EXEC_ERROR, x->off, "%s", m);
      return NULL;
    }
    e->func = fid;
    e->type = rt;
  }
  return bind_fold(b, e);
}

/* The call ANY(l, a, op) (BOOLEAN, NULL when nothing matches and a NULL is met), or NULL. */
static plan_expr *any_call(binder *b, plan_expr *l, plan_expr *a, int op, uint32_t off,
                           uint32_t op_off) {
  plan_expr *o = bind_const(b, cat_v_int(CAT_T_INTEGER, op), op_off);
  plan_expr *e = o ? bind_node(b, PX_FUNC, off, 3) : NULL;
  if (!e) return NULL;
  e->func = EXEC_F_ANY;
  e->args[0] = l;
  e->args[1] = a;
  e->args[2] = o;
  e->type = cat_type_of(CAT_T_BOOLEAN);
  e->nullable = true;
  return e;
}

/* x op ANY(a) (Phoenix): the call ANY(x, a, op) of exec/func.h. */
static plan_expr *bind_any(binder *b, const sql_expr *x) {
  const sql_expr *ax = x->right->list->a[0];
  plan_expr *l = bind_expr(b, x->left);
  plan_expr *a = l ? bind_expr(b, ax) : NULL;
  if (!a) return NULL;
  if (a->type.id != CAT_T_ARRAY) {
    char t[48];
    bind_error(b, EXEC_ERROR, ax->off, "ANY needs an ARRAY, not %s",
               a->type.id ? cat_type_format(&a->type, t, sizeof t) : "an untyped value");
    return NULL;
  }
  cat_type et = cat_type_elem(&a->type);
  infer_param(b, l, &et);
  if (l->kind == PX_CONST && bind_coerce_const(b, l, &et)) return NULL;
  if (l->kind == PX_ROW || !bind_comparable(&l->type, &et)) {
    char t1[48], t2[48];
    bind_error(b, EXEC_ERROR, x->left->off, "cannot compare %s with the elements of %s",
               l->kind == PX_ROW ? "a row value" : cat_type_format(&l->type, t1, sizeof t1),
               cat_type_format(&a->type, t2, sizeof t2));
    return NULL;
  }
  plan_expr *e = any_call(b, l, a, x->op, x->left->off, x->right->off);
  return e ? bind_fold(b, e) : NULL;
}

plan_expr *bind_in_values(binder *b, const sql_expr *x, plan_expr *set, const cat_type *t,
                          int n) {
  bool row = x->left->kind == SQL_E_ROW;
  plan_expr *e = bind_node(b, PX_FUNC, x->off, (uint32_t)n + 1);
  if (!e) return NULL;
  for (int i = 0; i < n; i++) {
    const sql_expr *lx = row ? x->left->list->a[i] : x->left;
    plan_expr *l = bind_expr(b, lx);
    if (!l) return NULL;
    infer_param(b, l, &t[i]);
    if (l->kind == PX_CONST && bind_coerce_const(b, l, &t[i])) return NULL;
    if (l->kind == PX_ROW || !bind_comparable(&l->type, &t[i])) {
      char t1[48], t2[48], what[64];
      if (row) snprintf(what, sizeof what, "column %d of the subquery (%s)", i + 1,
                        cat_type_format(&t[i], t2, sizeof t2));
      else snprintf(what, sizeof what, "the subquery's %s values",
                    cat_type_format(&t[i], t2, sizeof t2));
      bind_error(b, EXEC_ERROR, lx->off, "cannot compare %s with %s",
                 l->kind == PX_ROW ? "a row value" : cat_type_format(&l->type, t1, sizeof t1),
                 what);
      return NULL;
    }
    e->args[i] = l;
  }
  e->args[n] = set;
  e->func = EXEC_F_IN_SET;
  e->type = cat_type_of(CAT_T_BOOLEAN);
  e->nullable = true;
  if (!x->negated) return e;
  plan_expr *no = bind_node(b, PX_UNARY, x->off, 1);
  if (!no) return NULL;
  no->op = SQL_OP_NOT;
  no->type = e->type;
  no->nullable = true;
  no->args[0] = e;
  return no;
}

static plan_expr *bind_binary(binder *b, const sql_expr *x) {
  const sql_expr *rx = x->right;
  if (x->op >= SQL_OP_EQ && x->op <= SQL_OP_GE && rx && rx->kind == SQL_E_FUNC &&
      strcmp(rx->text, "ANY") == 0 && rx->list && rx->list->n == 1 && !rx->star &&
      !rx->distinct && !rx->within)
    return bind_any(b, x);
  plan_expr *l = bind_expr(b, x->left);
  if (!l) return NULL;
  plan_expr *r = bind_expr(b, x->right);
  if (!r) return NULL;
  plan_expr *e = bind_node(b, PX_BINARY, x->left->off, 2);
  if (!e) return NULL;
  e->op = (uint8_t)x->op;
  e->args[0] = l;
  e->args[1] = r;
  e->nullable = l->nullable || r->nullable;
  switch (x->op) {
    case SQL_OP_AND: case SQL_OP_OR:
      if (!is_bool(l) || !is_bool(r)) {
        bind_error(b, EXEC_ERROR, is_bool(l) ? r->off : l->off, "%s needs BOOLEAN operands",
                   x->op == SQL_OP_AND ? "AND" : "OR");
        return NULL;
      }
      e->type = cat_type_of(CAT_T_BOOLEAN);
      break;
    case SQL_OP_EQ: case SQL_OP_NE: case SQL_OP_LT: case SQL_OP_LE: case SQL_OP_GT:
    case SQL_OP_GE:
      if (l->kind == PX_ROW || r->kind == PX_ROW) {
        if (l->kind != PX_ROW || r->kind != PX_ROW || l->n_args != r->n_args) {
          bind_error(b, EXEC_ERROR, x->left->off,
                     "row value constructors compared need the same number of fields");
          return NULL;
        }
        for (uint32_t i = 0; i < l->n_args; i++)
          if (bind_compare_pair(b, l->args[i], r->args[i], l->args[i]->off)) return NULL;
      } else if (bind_compare_pair(b, l, r, x->left->off)) {
        return NULL;
      }
      e->type = cat_type_of(CAT_T_BOOLEAN);
      break;
    default: { /* arithmetic and ||: exec/func.h types them */
      const char *ops = x->op == SQL_OP_ADD   ? "+"
                        : x->op == SQL_OP_SUB ? "-"
                        : x->op == SQL_OP_MUL ? "*"
                        : x->op == SQL_OP_DIV ? "/"
                        : x->op == SQL_OP_MOD ? "%"
                                              : "||";
      cat_type at[2] = {l->type, r->type};
      int fid = plan_func_of_op(x->op);
      if (l->kind == PX_PARAM && l->type.id == 0) {
        cat_type h = cat_func_arg_hint(fid, 2, at, 0);
        infer_param(b, l, &h);
      }
      if (r->kind == PX_PARAM && r->type.id == 0) {
        cat_type h = cat_func_arg_hint(fid, 2, at, 1);
        infer_param(b, r, &h);
      }
      at[0] = l->type;
      at[1] = r->type;
      char m[256];
      cat_type rt;
      if (cat_func_lookup(ops, 2, at, &fid, &rt, m, sizeof m) != EXEC_OK) {
        bind_error(b, EXEC_ERROR, x->left->off, "%s", m);
        return NULL;
      }
      e->func = fid;
      e->type = rt;
      break;
    }
  }
  return bind_fold(b, e);
}

static plan_expr *bind_in(binder *b, const sql_expr *x) {
  plan_expr *l = bind_expr(b, x->left);
  if (!l) return NULL;
  int n = x->list ? x->list->n : 0;
  plan_expr *e = bind_node(b, PX_IN, x->off, (uint32_t)(n + 1));
  if (!e) return NULL;
  e->negated = x->negated;
  e->args[0] = l;
  e->type = cat_type_of(CAT_T_BOOLEAN);
  e->nullable = l->nullable;
  for (int i = 0; i < n; i++) {
    plan_expr *r = bind_expr(b, x->list->a[i]);
    if (!r) return NULL;
    if (l->kind == PX_ROW || r->kind == PX_ROW) {
      if (l->kind != PX_ROW || r->kind != PX_ROW || l->n_args != r->n_args) {
        bind_error(b, EXEC_ERROR, r->off, "IN list item needs as many fields as the left side");
        return NULL;
      }
      for (uint32_t j = 0; j < l->n_args; j++)
        if (bind_compare_pair(b, l->args[j], r->args[j], r->args[j]->off)) return NULL;
    } else if (bind_compare_pair(b, l, r, r->off)) {
      return NULL;
    }
    e->nullable |= r->nullable;
    e->args[i + 1] = r;
  }
  return bind_fold(b, e);
}

static plan_expr *bind_between(binder *b, const sql_expr *x) {
  plan_expr *v = bind_expr(b, x->left);
  plan_expr *lo = v ? bind_expr(b, x->right) : NULL;
  plan_expr *hi = lo ? bind_expr(b, x->third) : NULL;
  if (!hi) return NULL;
  if (bind_compare_pair(b, v, lo, x->right->off) || bind_compare_pair(b, v, hi, x->third->off))
    return NULL;
  plan_expr *e = bind_node(b, PX_BETWEEN, x->off, 3);
  if (!e) return NULL;
  e->negated = x->negated;
  e->args[0] = v;
  e->args[1] = lo;
  e->args[2] = hi;
  e->type = cat_type_of(CAT_T_BOOLEAN);
  e->nullable = v->nullable || lo->nullable || hi->nullable;
  return bind_fold(b, e);
}

static plan_expr *bind_like(binder *b, const sql_expr *x) {
  int n = x->third ? 3 : 2;
  plan_expr *e = bind_node(b, PX_LIKE, x->off, (uint32_t)n);
  if (!e) return NULL;
  const sql_expr *src[3] = {x->left, x->right, x->third};
  for (int i = 0; i < n; i++) {
    plan_expr *a = bind_expr(b, src[i]);
    if (!a) return NULL;
    if (a->kind == PX_PARAM && a->type.id == 0) {
      a->type = cat_type_of(CAT_T_VARCHAR);
      infer_param(b, a, &a->type);
    }
    if (a->type.id && !cat_type_is_string(a->type.id) && a->type.id != CAT_T_VARBINARY) {
      bind_error(b, EXEC_ERROR, a->off, "LIKE needs strings, not %s", cat_type_name(a->type.id));
      return NULL;
    }
    e->args[i] = a;
    e->nullable |= a->nullable;
  }
  e->negated = x->negated;
  e->ilike = x->ilike;
  e->type = cat_type_of(CAT_T_BOOLEAN);
  return bind_fold(b, e);
}

static plan_expr *bind_isnull(binder *b, const sql_expr *x) {
  plan_expr *a = bind_expr(b, x->left);
  if (!a) return NULL;
  plan_expr *e = bind_node(b, PX_ISNULL, x->off, 1);
  if (!e) return NULL;
  e->negated = x->negated;
  e->args[0] = a;
  e->type = cat_type_of(CAT_T_BOOLEAN);
  return bind_fold(b, e);
}

static plan_expr *bind_case(binder *b, const sql_expr *x) {
  int arms = x->list ? x->list->n : 0;
  int n = (x->left ? 1 : 0) + arms + (x->third ? 1 : 0);
  plan_expr *e = bind_node(b, PX_CASE, x->off, (uint32_t)n);
  if (!e) return NULL;
  e->has_operand = x->left != NULL;
  e->has_else = x->third != NULL;
  int k = 0;
  plan_expr *operand = NULL;
  if (x->left) {
    operand = e->args[k++] = bind_expr(b, x->left);
    if (!operand) return NULL;
  }
  cat_type rt = cat_type_of(0);
  bool nullable = !x->third;
  for (int i = 0; i < arms; i++) {
    plan_expr *a = bind_expr(b, x->list->a[i]);
    if (!a) return NULL;
    e->args[k++] = a;
    if (i % 2 == 0) {
      if (operand) {
        if (bind_compare_pair(b, operand, a, a->off)) return NULL;
      } else if (!is_bool(a)) {
        bind_error(b, EXEC_ERROR, a->off, "CASE WHEN needs a BOOLEAN condition");
        return NULL;
      }
    } else {
      bool ok;
      rt = bind_common_type(&rt, &a->type, &ok);
      if (!ok) {
        bind_error(b, EXEC_ERROR, a->off, "CASE results of different types (%s and %s)",
                   cat_type_name(rt.id), cat_type_name(a->type.id));
        return NULL;
      }
      nullable |= a->nullable;
    }
  }
  if (x->third) {
    plan_expr *a = e->args[k++] = bind_expr(b, x->third);
    if (!a) return NULL;
    bool ok;
    rt = bind_common_type(&rt, &a->type, &ok);
    if (!ok) {
      bind_error(b, EXEC_ERROR, a->off, "CASE results of different types (%s and %s)",
                 cat_type_name(rt.id), cat_type_name(a->type.id));
      return NULL;
    }
    nullable |= a->nullable;
  }
  e->type = rt;
  e->nullable = nullable;
  return bind_fold(b, e);
}

int bind_type(binder *b, const sql_type *st, cat_type *out) {
  int id = cat_type_lookup(st->name);
  if (!id) {
    const char *hint = cat_type_hint(st->name);
    if (hint)
      return bind_error(b, EXEC_ERROR, st->off, "unknown type \"%s\" (use %s)", st->name, hint);
    return bind_error(b, EXEC_ERROR, st->off, "unknown type \"%s\"", st->name);
  }
  cat_error ce = {0};
  if (cat_type_with_args(id, st->nargs, st->arg, st->array, out, &ce) != CAT_OK)
    return bind_error(b, EXEC_ERROR, st->off, "%s", ce.msg);
  return EXEC_OK;
}

static plan_expr *bind_cast(binder *b, const sql_expr *x) {
  plan_expr *a = bind_expr(b, x->left);
  if (!a) return NULL;
  cat_type t;
  if (bind_type(b, x->type, &t)) return NULL;
  plan_expr *e = bind_node(b, PX_CAST, x->off, 1);
  if (!e) return NULL;
  e->args[0] = a;
  e->type = t;
  e->nullable = a->nullable;
  infer_param(b, a, &t);
  return bind_fold(b, e);
}

static plan_expr *bind_row(binder *b, const sql_expr *x) {
  int n = x->list ? x->list->n : 0;
  plan_expr *e = bind_node(b, PX_ROW, x->off, (uint32_t)n);
  if (!e) return NULL;
  for (int i = 0; i < n; i++) {
    e->args[i] = bind_expr(b, x->list->a[i]);
    if (!e->args[i]) return NULL;
    e->nullable |= e->args[i]->nullable;
  }
  return e;
}

plan_expr *bind_expr(binder *b, const sql_expr *x) {
  if (b->rc) return NULL;
  switch (x->kind) {
    case SQL_E_LITERAL: return bind_literal(b, x);
    case SQL_E_PARAM: {
      plan_expr *e = bind_node(b, PX_PARAM, x->off, 0);
      if (!e) return NULL;
      e->param = x->param;
      e->nullable = true;
      if (b->bound->param_types && x->param >= 1 && x->param <= b->bound->n_params)
        e->type = b->bound->param_types[x->param - 1];
      return e;
    }
    case SQL_E_COLUMN: return bind_column(b, x);
    case SQL_E_UNARY: return bind_unary(b, x);
    case SQL_E_BINARY: return bind_binary(b, x);
    case SQL_E_IN: return x->sub ? bind_subquery_expr(b, x) : bind_in(b, x);
    case SQL_E_SUBQUERY:
    case SQL_E_EXISTS: return bind_subquery_expr(b, x); /* planner/bind_subquery.c */
    case SQL_E_BETWEEN: return bind_between(b, x);
    case SQL_E_LIKE: return bind_like(b, x);
    case SQL_E_ISNULL: return bind_isnull(b, x);
    case SQL_E_CASE: return bind_case(b, x);
    case SQL_E_CAST: return bind_cast(b, x);
    case SQL_E_FUNC: return bind_func(b, x);
    case SQL_E_ROW: return bind_row(b, x);
    case SQL_E_SEQUENCE: return bind_sequence(b, x); /* planner/bind_sequence.c */
    default:
      bind_error(b, EXEC_ERROR, x->off, "unsupported expression");
      return NULL;
  }
}

bool plan_expr_equal(const plan_expr *a, const plan_expr *b2) {
  if (a->kind != b2->kind || a->op != b2->op || a->negated != b2->negated ||
      a->ilike != b2->ilike || a->n_args != b2->n_args || a->has_else != b2->has_else ||
      a->has_operand != b2->has_operand)
    return false;
  switch (a->kind) {
    case PX_CONST: {
      if (a->value.is_null || b2->value.is_null) return a->value.is_null && b2->value.is_null;
      if (a->type.id != b2->type.id) return false;
      int cmp = 0;
      return cat_value_compare(&a->value, &b2->value, &cmp, NULL) == CAT_OK && cmp == 0;
    }
    case PX_COLUMN: if (a->column != b2->column) return false; break;
    case PX_PARAM: if (a->param != b2->param) return false; break;
    case PX_FUNC: case PX_AGG: if (a->func != b2->func) return false; break;
    case PX_CAST:
      if (a->type.id != b2->type.id || a->type.length != b2->type.length ||
          a->type.precision != b2->type.precision || a->type.scale != b2->type.scale)
        return false;
      break;
    default: break;
  }
  for (uint32_t i = 0; i < a->n_args; i++)
    if (!plan_expr_equal(a->args[i], b2->args[i])) return false;
  return true;
}
