/*
** sql/ast.c: constructors and destructors of the SQL syntax tree (sql/ast.h), and the
** identifier rules (unquoted names fold to upper case, "quoted" ones stay exact).
**
** Every constructor takes ownership of its arguments and frees them if it cannot allocate,
** so the grammar's actions never leak on an allocation failure. Heights are computed here
** (1 + the tallest child) so the parser can bound tree depth before anything recursive
** (printing, freeing, binding) walks the tree.
**
** Not here: printing (sql/print.c), parsing (sql/parser.c, sql/parse.y).
*/
#include "sql/ast.h"

#include <stdlib.h>
#include <string.h>

/* ---- Names --------------------------------------------------------------------------- */

char *sql_ident_dup(const char *z, size_t n) {
  char *out = malloc(n + 1);
  if (!out) return NULL;
  size_t j = 0;
  if (n >= 2 && z[0] == '"') {
    for (size_t i = 1; i + 1 < n; i++) {
      out[j++] = z[i];
      if (z[i] == '"') i++; /* "" -> " */
    }
  } else {
    for (size_t i = 0; i < n; i++) {
      char c = z[i];
      out[j++] = (c >= 'a' && c <= 'z') ? (char)(c - 'a' + 'A') : c;
    }
  }
  out[j] = 0;
  return out;
}

bool sql_is_bare_function(const char *name) {
  return strcmp(name, "CURRENT_DATE") == 0 || strcmp(name, "CURRENT_TIME") == 0 ||
         strcmp(name, "CURRENT_TIMESTAMP") == 0;
}

/* Unescapes the quoted literal z[0..n) ('x''y') into a new NUL-terminated buffer. */
/* The value of a hex digit the tokenizer checked. */
static int hexval(char c) {
  return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c - 'A' + 10;
}

static char *unquote_string(const char *z, size_t n, size_t *len) {
  char *out = malloc(n + 1);
  if (!out) return NULL;
  size_t j = 0;
  for (size_t i = 1; i + 1 < n; i++) {
    out[j++] = z[i];
    if (z[i] == '\'') i++;
  }
  out[j] = 0;
  *len = j;
  return out;
}

/* ---- Expressions ----------------------------------------------------------------------- */

static sql_expr *new_expr(int kind, uint32_t off) {
  sql_expr *e = calloc(1, sizeof *e);
  if (!e) return NULL;
  e->kind = kind;
  e->off = off;
  e->height = 1;
  return e;
}

static uint32_t hmax(uint32_t a, const sql_expr *e) {
  return (e && e->height > a) ? e->height : a;
}

static uint32_t list_height(const sql_expr_list *l) {
  uint32_t h = 0;
  for (int i = 0; l && i < l->n; i++) h = hmax(h, l->a[i]);
  return h;
}

/* Sets e's height from its children. */
static void fix_height(sql_expr *e) {
  uint32_t h = 0;
  h = hmax(h, e->left);
  h = hmax(h, e->right);
  h = hmax(h, e->third);
  uint32_t lh = list_height(e->list);
  if (lh > h) h = lh;
  e->height = h + 1;
}

sql_expr *sql_expr_literal(int lit, const char *text, size_t n, uint32_t off) {
  sql_expr *e = new_expr(SQL_E_LITERAL, off);
  if (!e) return NULL;
  e->lit = lit;
  if (lit == SQL_LIT_STRING || lit == SQL_LIT_DATE || lit == SQL_LIT_TIME ||
      lit == SQL_LIT_TIMESTAMP) {
    e->text = unquote_string(text, n, &e->text_len);
  } else if (lit == SQL_LIT_BLOB) { /* X'hex' (the tokenizer checked the digits) */
    size_t digits = n >= 3 ? n - 3 : 0;
    e->text = malloc(digits / 2 + 1);
    if (e->text) {
      for (size_t i = 0; i < digits; i += 2) {
        int hi = hexval(text[2 + i]), lo = hexval(text[3 + i]);
        e->text[i / 2] = (char)(hi * 16 + lo);
      }
      e->text[digits / 2] = 0;
      e->text_len = digits / 2;
    }
  } else {
    e->text = malloc(n + 1);
    if (e->text) {
      memcpy(e->text, text, n);
      e->text[n] = 0;
      e->text_len = n;
    }
  }
  if (!e->text) {
    free(e);
    return NULL;
  }
  return e;
}

sql_expr *sql_expr_param(int number, bool numbered, uint32_t off) {
  sql_expr *e = new_expr(SQL_E_PARAM, off);
  if (!e) return NULL;
  e->param = number;
  e->param_numbered = numbered;
  return e;
}

sql_expr *sql_expr_column(int nname, char *name[], uint32_t off) {
  sql_expr *e = new_expr(SQL_E_COLUMN, off);
  bool ok = e != NULL && nname >= 1 && nname <= 3;
  for (int i = 0; i < nname && i < 3; i++)
    if (!name[i]) ok = false;
  if (!ok) {
    for (int i = 0; i < nname && i < 3; i++) free(name[i]);
    free(e);
    return NULL;
  }
  e->nname = nname;
  for (int i = 0; i < nname; i++) e->name[i] = name[i];
  return e;
}

/* Builds an operator node from its parts, or frees the parts when any is missing. */
static sql_expr *make(int kind, int op, uint32_t off, sql_expr *l, sql_expr *r, sql_expr *t,
                      sql_expr_list *list, bool need_r, bool need_list) {
  sql_expr *e = new_expr(kind, off);
  if (!e || !l || (need_r && !r) || (need_list && !list)) {
    free(e);
    sql_expr_free(l);
    sql_expr_free(r);
    sql_expr_free(t);
    sql_expr_list_free(list);
    return NULL;
  }
  e->op = op;
  e->left = l;
  e->right = r;
  e->third = t;
  e->list = list;
  fix_height(e);
  return e;
}

sql_expr *sql_expr_unary(int op, sql_expr *operand, uint32_t off) {
  return make(SQL_E_UNARY, op, off, operand, NULL, NULL, NULL, false, false);
}

sql_expr *sql_expr_binary(int op, sql_expr *left, sql_expr *right) {
  return make(SQL_E_BINARY, op, left ? left->off : 0, left, right, NULL, NULL, true, false);
}

sql_expr *sql_expr_in(sql_expr *left, sql_expr_list *list, bool negated) {
  sql_expr *e = make(SQL_E_IN, 0, left ? left->off : 0, left, NULL, NULL, list, false, true);
  if (e) e->negated = negated;
  return e;
}

sql_expr *sql_expr_between(sql_expr *left, sql_expr *lo, sql_expr *hi, bool negated) {
  if (!hi) {
    sql_expr_free(left);
    sql_expr_free(lo);
    return NULL;
  }
  sql_expr *e = make(SQL_E_BETWEEN, 0, left ? left->off : 0, left, lo, hi, NULL, true, false);
  if (e) e->negated = negated;
  return e;
}

sql_expr *sql_expr_like(sql_expr *left, sql_expr *pattern, sql_expr *escape, bool ilike,
                        bool negated) {
  sql_expr *e =
      make(SQL_E_LIKE, 0, left ? left->off : 0, left, pattern, escape, NULL, true, false);
  if (e) {
    e->ilike = ilike;
    e->negated = negated;
  }
  return e;
}

sql_expr *sql_expr_isnull(sql_expr *left, bool negated) {
  sql_expr *e = make(SQL_E_ISNULL, 0, left ? left->off : 0, left, NULL, NULL, NULL, false,
                     false);
  if (e) e->negated = negated;
  return e;
}

sql_expr *sql_expr_case(sql_expr *operand, sql_expr_list *arms, sql_expr *else_expr,
                        uint32_t off) {
  sql_expr *e = new_expr(SQL_E_CASE, off);
  if (!e || !arms || arms->n < 2 || arms->n % 2) {
    free(e);
    sql_expr_free(operand);
    sql_expr_list_free(arms);
    sql_expr_free(else_expr);
    return NULL;
  }
  e->left = operand;
  e->list = arms;
  e->third = else_expr;
  fix_height(e);
  return e;
}

sql_expr *sql_expr_cast(sql_expr *operand, sql_type *type, uint32_t off) {
  sql_expr *e = new_expr(SQL_E_CAST, off);
  if (!e || !operand || !type) {
    free(e);
    sql_expr_free(operand);
    sql_type_free(type);
    return NULL;
  }
  e->left = operand;
  e->type = type;
  fix_height(e);
  return e;
}

sql_expr *sql_expr_func(char *name, sql_expr_list *args, bool distinct, bool star,
                        uint32_t off) {
  sql_expr *e = new_expr(SQL_E_FUNC, off);
  if (!e || !name) {
    free(e);
    free(name);
    sql_expr_list_free(args);
    return NULL;
  }
  e->text = name;
  e->text_len = strlen(name);
  e->list = args;
  e->distinct = distinct;
  e->star = star;
  fix_height(e);
  return e;
}

sql_expr *sql_expr_row(sql_expr_list *fields, uint32_t off) {
  sql_expr *e = new_expr(SQL_E_ROW, off);
  if (!e || !fields || fields->n < 1) {
    free(e);
    sql_expr_list_free(fields);
    return NULL;
  }
  e->list = fields;
  fix_height(e);
  return e;
}

sql_expr *sql_expr_subquery(int kind, sql_expr *left, sql_select *sub, bool negated,
                            uint32_t off) {
  sql_expr *e = sub && (left || kind != SQL_E_IN) ? new_expr(kind, left ? left->off : off)
                                                  : NULL;
  if (!e) {
    sql_expr_free(left);
    sql_select_free(sub);
    return NULL;
  }
  e->left = left;
  e->sub = sub;
  e->negated = negated;
  fix_height(e);
  return e;
}

sql_expr *sql_expr_sequence(int op, char *name, uint32_t off) {
  sql_expr *e = name ? new_expr(SQL_E_SEQUENCE, off) : NULL;
  if (!e) {
    free(name);
    return NULL;
  }
  e->op = op;
  e->text = name;
  e->text_len = strlen(name);
  return e;
}

void sql_expr_free(sql_expr *e) {
  if (!e) return;
  sql_select_free(e->sub);
  sql_expr_free(e->left);
  sql_expr_free(e->right);
  sql_expr_free(e->third);
  sql_expr_list_free(e->list);
  sql_type_free(e->type);
  free(e->text);
  for (int i = 0; i < 3; i++) free(e->name[i]);
  free(e);
}

/* ---- Lists ----------------------------------------------------------------------------- */

/* Makes room for one more item in a list of (n, cap, items of size sz); false on OOM. */
static bool grow(int n, int *cap, void **items, size_t sz) {
  if (n < *cap) return true;
  int ncap = *cap ? *cap * 2 : 4;
  void *p = realloc(*items, (size_t)ncap * sz);
  if (!p) return false;
  *items = p;
  *cap = ncap;
  return true;
}

sql_expr_list *sql_expr_list_append(sql_expr_list *l, sql_expr *e) {
  if (!l) l = calloc(1, sizeof *l);
  if (!l || !e || !grow(l->n, &l->cap, (void **)&l->a, sizeof *l->a)) {
    sql_expr_list_free(l);
    sql_expr_free(e);
    return NULL;
  }
  l->a[l->n++] = e;
  return l;
}

void sql_expr_list_free(sql_expr_list *l) {
  if (!l) return;
  for (int i = 0; i < l->n; i++) sql_expr_free(l->a[i]);
  free(l->a);
  free(l);
}

sql_order_list *sql_order_list_append(sql_order_list *l, sql_expr *e, bool desc, int nulls) {
  if (!l) l = calloc(1, sizeof *l);
  if (!l || !e || !grow(l->n, &l->cap, (void **)&l->a, sizeof *l->a)) {
    sql_order_list_free(l);
    sql_expr_free(e);
    return NULL;
  }
  l->a[l->n].expr = e;
  l->a[l->n].desc = desc;
  l->a[l->n].nulls = nulls;
  l->n++;
  return l;
}

void sql_order_list_free(sql_order_list *l) {
  if (!l) return;
  for (int i = 0; i < l->n; i++) sql_expr_free(l->a[i].expr);
  free(l->a);
  free(l);
}

sql_colname_list *sql_colname_list_append(sql_colname_list *l, char *family, char *name,
                                          uint32_t off, bool desc) {
  if (!l) l = calloc(1, sizeof *l);
  if (!l || !name || !grow(l->n, &l->cap, (void **)&l->a, sizeof *l->a)) {
    sql_colname_list_free(l);
    free(family);
    free(name);
    return NULL;
  }
  sql_colname *c = &l->a[l->n++];
  c->family = family;
  c->name = name;
  c->off = off;
  c->desc = desc;
  c->row_timestamp = false;
  c->type = NULL;
  return l;
}

void sql_colname_list_free(sql_colname_list *l) {
  if (!l) return;
  for (int i = 0; i < l->n; i++) {
    free(l->a[i].family);
    free(l->a[i].name);
    sql_type_free(l->a[i].type);
  }
  free(l->a);
  free(l);
}

sql_join_list *sql_join_list_append(sql_join_list *l, int kind, bool natural, uint32_t off,
                                    char *table, sql_select *sub, uint32_t table_off,
                                    char *alias, uint32_t alias_off, sql_expr *on,
                                    sql_colname_list *using) {
  if (!l) l = calloc(1, sizeof *l);
  if (!l || (!table && !sub) || !grow(l->n, &l->cap, (void **)&l->a, sizeof *l->a)) {
    sql_join_list_free(l);
    free(table);
    sql_select_free(sub);
    free(alias);
    sql_expr_free(on);
    sql_colname_list_free(using);
    return NULL;
  }
  sql_join *j = &l->a[l->n++];
  j->kind = kind;
  j->natural = natural;
  j->off = off;
  j->table = table;
  j->sub = sub;
  j->table_off = table_off;
  j->alias = alias;
  j->alias_off = alias_off;
  j->on = on;
  j->using = using;
  return l;
}

sql_cte_list *sql_cte_list_append(sql_cte_list *l, char *name, uint32_t off,
                                  sql_colname_list *cols, sql_select *select) {
  if (!l) l = calloc(1, sizeof *l);
  if (!l || !name || !select || !grow(l->n, &l->cap, (void **)&l->a, sizeof *l->a)) {
    sql_cte_list_free(l);
    free(name);
    sql_colname_list_free(cols);
    sql_select_free(select);
    return NULL;
  }
  sql_cte *c = &l->a[l->n++];
  c->name = name;
  c->off = off;
  c->cols = cols;
  c->select = select;
  return l;
}

void sql_cte_list_free(sql_cte_list *l) {
  if (!l) return;
  for (int i = 0; i < l->n; i++) {
    free(l->a[i].name);
    sql_colname_list_free(l->a[i].cols);
    sql_select_free(l->a[i].select);
  }
  free(l->a);
  free(l);
}

void sql_join_list_free(sql_join_list *l) {
  if (!l) return;
  for (int i = 0; i < l->n; i++) {
    free(l->a[i].table);
    sql_select_free(l->a[i].sub);
    free(l->a[i].alias);
    sql_expr_free(l->a[i].on);
    sql_colname_list_free(l->a[i].using);
    sql_colname_list_free(l->a[i].dyn);
  }
  free(l->a);
  free(l);
}

sql_result_list *sql_result_list_append(sql_result_list *l, sql_expr *expr, char *alias,
                                        int nqual, char *qual[], uint32_t off) {
  bool ok = true;
  if (!l) l = calloc(1, sizeof *l);
  for (int i = 0; i < nqual; i++)
    if (!qual[i]) ok = false;
  if (!l || !ok || !grow(l->n, &l->cap, (void **)&l->a, sizeof *l->a)) {
    sql_result_list_free(l);
    sql_expr_free(expr);
    free(alias);
    for (int i = 0; i < nqual; i++) free(qual[i]);
    return NULL;
  }
  sql_result_col *c = &l->a[l->n++];
  memset(c, 0, sizeof *c);
  c->expr = expr;
  c->alias = alias;
  c->nqual = nqual;
  for (int i = 0; i < nqual && i < 2; i++) c->qual[i] = qual[i];
  c->off = off;
  return l;
}

void sql_result_list_free(sql_result_list *l) {
  if (!l) return;
  for (int i = 0; i < l->n; i++) {
    sql_expr_free(l->a[i].expr);
    free(l->a[i].alias);
    free(l->a[i].qual[0]);
    free(l->a[i].qual[1]);
  }
  free(l->a);
  free(l);
}

sql_option_list *sql_option_list_append(sql_option_list *l, char *family, char *name,
                                        sql_expr *value, uint32_t off) {
  if (!l) l = calloc(1, sizeof *l);
  if (!l || !name || !value || !grow(l->n, &l->cap, (void **)&l->a, sizeof *l->a)) {
    sql_option_list_free(l);
    free(family);
    free(name);
    sql_expr_free(value);
    return NULL;
  }
  sql_option *o = &l->a[l->n++];
  o->family = family;
  o->name = name;
  o->value = value;
  o->off = off;
  return l;
}

void sql_option_list_free(sql_option_list *l) {
  if (!l) return;
  for (int i = 0; i < l->n; i++) {
    free(l->a[i].family);
    free(l->a[i].name);
    sql_expr_free(l->a[i].value);
  }
  free(l->a);
  free(l);
}

/* ---- Types and statements ------------------------------------------------------------------ */

sql_type *sql_type_new(char *name, int nargs, const int64_t *arg, uint32_t off) {
  sql_type *t = calloc(1, sizeof *t);
  if (!t || !name) {
    free(t);
    free(name);
    return NULL;
  }
  t->name = name;
  t->nargs = nargs;
  for (int i = 0; i < nargs && i < 2; i++) t->arg[i] = arg[i];
  t->off = off;
  return t;
}

void sql_type_free(sql_type *t) {
  if (!t) return;
  free(t->name);
  free(t);
}

sql_select *sql_select_new(void) {
  return calloc(1, sizeof(sql_select));
}

void sql_select_free(sql_select *s) {
  if (!s) return;
  sql_cte_list_free(s->with);
  sql_select_free(s->left);
  sql_select_free(s->right);
  sql_select_free(s->sub);
  free(s->hint);
  sql_result_list_free(s->cols);
  free(s->table);
  free(s->alias);
  sql_join_list_free(s->joins);
  sql_colname_list_free(s->dyn);
  sql_expr_free(s->where);
  sql_expr_list_free(s->group);
  sql_expr_free(s->having);
  sql_order_list_free(s->order);
  sql_expr_free(s->limit);
  sql_expr_free(s->offset);
  free(s);
}

sql_create_table *sql_create_table_new(void) {
  return calloc(1, sizeof(sql_create_table));
}

int sql_create_table_add(sql_create_table *t, char *family, char *name, sql_type *type,
                         int nullability, bool pk, bool pk_desc, uint32_t off) {
  if (!name || !type || !grow(t->ncol, &t->capcol, (void **)&t->cols, sizeof *t->cols)) {
    free(family);
    free(name);
    sql_type_free(type);
    return -1;
  }
  sql_coldef *c = &t->cols[t->ncol++];
  c->family = family;
  c->name = name;
  c->type = type;
  c->nullability = nullability;
  c->pk = pk;
  c->pk_desc = pk_desc;
  c->off = off;
  c->row_timestamp = false;
  return 0;
}

void sql_create_table_free(sql_create_table *t) {
  if (!t) return;
  free(t->name);
  for (int i = 0; i < t->ncol; i++) {
    free(t->cols[i].family);
    free(t->cols[i].name);
    sql_type_free(t->cols[i].type);
  }
  free(t->cols);
  free(t->pk_name);
  sql_colname_list_free(t->pk);
  sql_option_list_free(t->opts);
  sql_split_free(t->split);
  free(t);
}

void sql_split_free(sql_split *s) {
  if (!s) return;
  sql_expr_list_free(s->values);
  free(s);
}

sql_create_index *sql_create_index_new(void) {
  return calloc(1, sizeof(sql_create_index));
}

void sql_create_index_free(sql_create_index *ci) {
  if (!ci) return;
  free(ci->name);
  free(ci->table);
  sql_order_list_free(ci->keys);
  sql_colname_list_free(ci->include);
  sql_option_list_free(ci->opts);
  free(ci);
}

sql_drop *sql_drop_new(void) {
  return calloc(1, sizeof(sql_drop));
}

void sql_create_view_free(sql_create_view *v) {
  if (!v) return;
  free(v->name);
  sql_create_table_free(v->cols);
  sql_select_free(v->select);
  free(v);
}

void sql_drop_free(sql_drop *d) {
  if (!d) return;
  free(d->name);
  free(d->table);
  free(d);
}

void sql_alter_table_free(sql_alter_table *a) {
  if (!a) return;
  free(a->name);
  sql_create_table_free(a->add);
  sql_colname_list_free(a->drop);
  sql_option_list_free(a->opts);
  free(a);
}

sql_upsert *sql_upsert_new(void) {
  return calloc(1, sizeof(sql_upsert));
}

void sql_upsert_free(sql_upsert *u) {
  if (!u) return;
  free(u->hint);
  free(u->table);
  sql_colname_list_free(u->cols);
  sql_expr_list_free(u->rows);
  sql_select_free(u->select);
  free(u);
}

sql_delete *sql_delete_new(void) {
  return calloc(1, sizeof(sql_delete));
}

void sql_delete_free(sql_delete *d) {
  if (!d) return;
  free(d->hint);
  free(d->table);
  sql_colname_list_free(d->dyn);
  sql_expr_free(d->where);
  sql_expr_free(d->limit);
  free(d);
}

void sql_create_sequence_free(sql_create_sequence *c) {
  if (!c) return;
  free(c->name);
  sql_option_list_free(c->opts);
  free(c);
}

sql_stmt *sql_stmt_new(int kind, uint32_t off) {
  sql_stmt *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->kind = kind;
  s->off = off;
  return s;
}

void sql_stmt_free(sql_stmt *s) {
  if (!s) return;
  switch (s->kind) {
    case SQL_STMT_SELECT: sql_select_free(s->u.select); break;
    case SQL_STMT_UPSERT: sql_upsert_free(s->u.upsert); break;
    case SQL_STMT_DELETE: sql_delete_free(s->u.del); break;
    case SQL_STMT_CREATE_TABLE: sql_create_table_free(s->u.create_table); break;
    case SQL_STMT_CREATE_INDEX: sql_create_index_free(s->u.create_index); break;
    case SQL_STMT_DROP_TABLE:
    case SQL_STMT_DROP_INDEX:
    case SQL_STMT_DROP_SEQUENCE:
    case SQL_STMT_CHECK_INDEX:
    case SQL_STMT_DROP_VIEW: sql_drop_free(s->u.drop); break;
    case SQL_STMT_CREATE_VIEW: sql_create_view_free(s->u.create_view); break;
    case SQL_STMT_ALTER_TABLE: sql_alter_table_free(s->u.alter); break;
    case SQL_STMT_CREATE_SEQUENCE: sql_create_sequence_free(s->u.create_sequence); break;
    default: break;
  }
  sql_expr_free(s->as_of);
  free(s);
}
