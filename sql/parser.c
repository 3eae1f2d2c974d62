/*
** sql/parser.c: the driver that feeds the Lemon parser (sql_parse), error reporting with
** positions, and the sql_pc_* helpers the grammar actions call (sql/parse_int.h).
**
** sql_parse() is the only loop that calls sql_lemon(): it skips whitespace and comments,
** passes an optimizer hint only right after SELECT, UPSERT or DELETE (elsewhere a hint is a
** comment), turns NOT before IN/BETWEEN/LIKE/ILIKE into NOTX and the words NEXT VALUE FOR /
** CURRENT VALUE FOR into one token (sql/parse_sequence.c), counts parenthesis depth,
** stops at the first ';' and sends a synthetic ';' at the end of input. The first error
** (tokenizer, grammar, limit or allocation) stops the loop; the Lemon parser is then freed,
** which runs the %destructors of everything on its stack.
**
** A syntax error that is a statement or clause the dialect does not have (INSERT, a join,
** ...) gets the message sql/unsupported.c chooses instead of the expected-token list.
**
** Not here: the grammar (sql/parse.y), the tokenizer (sql/tokenize.c), tree types
** (sql/ast.c), printing (sql/print.c), the "not supported" patterns (sql/unsupported.c).
*/
#include "sql/parse_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sql/token.h"

/* ---- Errors ---------------------------------------------------------------------------- */

const char *sql_status_name(int code) {
  switch (code) {
    case SQL_OK: return "SQL_OK";
    case SQL_ERR_SYNTAX: return "SQL_ERR_SYNTAX";
    case SQL_ERR_TOKEN: return "SQL_ERR_TOKEN";
    case SQL_ERR_DEPTH: return "SQL_ERR_DEPTH";
    case SQL_ERR_NOMEM: return "SQL_ERR_NOMEM";
    case SQL_ERR_RANGE: return "SQL_ERR_RANGE";
    default: return "SQL_ERR_UNKNOWN";
  }
}

uint32_t sql_pc_off(const sql_pctx *ctx, sql_token t) {
  return t.z ? (uint32_t)(t.z - ctx->sql) : (uint32_t)ctx->len;
}

/* Line and column (1-based; column in UTF-8 characters) of byte offset off. */
static void position(const char *sql, size_t off, int *line, int *col) {
  int l = 1;
  size_t bol = 0;
  for (size_t i = 0; i < off; i++)
    if (sql[i] == '\n') {
      l++;
      bol = i + 1;
    }
  int c = 1;
  for (size_t i = bol; i < off; i++)
    if (((unsigned char)sql[i] & 0xC0) != 0x80) c++;
  *line = l;
  *col = c;
}

/* Records the first error: message = head + " at line L, column C" + tail. */
static void set_error(sql_pctx *ctx, int code, size_t off, const char *head,
                      const char *tail) {
  if (ctx->rc != SQL_OK) return;
  sql_error *e = ctx->err;
  ctx->rc = code;
  e->code = code;
  e->offset = off;
  position(ctx->sql, off, &e->line, &e->column);
  /* The head (near "TOKEN") is cut at 150 bytes so the position always fits; the tail (what
  ** was expected) gets the rest of the buffer. */
  int n = snprintf(e->message, sizeof e->message, "%.150s at line %d, column %d", head,
                   e->line, e->column);
  if (n > 0 && (size_t)n < sizeof e->message)
    snprintf(e->message + n, sizeof e->message - (size_t)n, "%s", tail);
}

void sql_pc_error(sql_pctx *ctx, int code, size_t off, const char *fmt, ...) {
  char head[SQL_ERRMSG_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(head, sizeof head, fmt, ap);
  va_end(ap);
  set_error(ctx, code, off, head, "");
}

void *sql_pc_nomem(sql_pctx *ctx) {
  sql_pc_error(ctx, SQL_ERR_NOMEM, 0, "out of memory");
  return NULL;
}

/* Writes token text z[0..n) for a message into out (size cap): at most 40 bytes, cut on a
** UTF-8 boundary, control bytes as \xHH. */
static void quote_token(char *out, size_t cap, const char *z, size_t n) {
  size_t j = 0;
  size_t lim = n > 40 ? 40 : n;
  while (lim > 0 && lim < n && ((unsigned char)z[lim] & 0xC0) == 0x80) lim--;
  for (size_t i = 0; i < lim && j + 5 < cap; i++) {
    unsigned char c = (unsigned char)z[i];
    if (c < 0x20 || c == 0x7f) j += (size_t)snprintf(out + j, cap - j, "\\x%02X", c);
    else out[j++] = (char)c;
  }
  if (lim < n && j + 4 < cap) {
    memcpy(out + j, "...", 3);
    j += 3;
  }
  out[j < cap ? j : cap - 1] = 0;
}

void sql_pc_expect(sql_pctx *ctx, int code) {
  if (code == TK_SPACE || code == TK_COMMENT || code == TK_ILLEGAL || code == TK_HINT ||
      code == TK_UMINUS || code == TK_SEQNEXT || code == TK_SEQCURRENT)
    return;
  if (code == TK_NOTX) code = TK_NOT;
  for (int i = 0; i < ctx->nexpect; i++)
    if (ctx->expect[i] == code) return;
  if (ctx->nexpect < SQL_MAX_EXPECT) ctx->expect[ctx->nexpect++] = code;
}

void sql_pc_syntax_error(sql_pctx *ctx, int major, sql_token t) {
  char head[200], tail[160];
  size_t j = 0;
  tail[0] = 0;
  if (ctx->nexpect > 0) j = (size_t)snprintf(tail, sizeof tail, "; expected ");
  for (int i = 0; i < ctx->nexpect; i++) {
    const char *nm = sql_token_name(ctx->expect[i]);
    bool word = strcmp(nm, "identifier") == 0 || strcmp(nm, "string") == 0 ||
                strcmp(nm, "integer") == 0 || strcmp(nm, "decimal") == 0 ||
                strcmp(nm, "number") == 0 || strcmp(nm, "parameter") == 0;
    if (j + strlen(nm) + 12 >= sizeof tail) {
      snprintf(tail + j, sizeof tail - j, ", ...");
      break;
    }
    j += (size_t)snprintf(tail + j, sizeof tail - j, "%s%s%s%s", i ? ", " : "",
                          word ? "" : "\"", nm, word ? "" : "\"");
  }
  if (t.n == 0 || major == 0) {
    set_error(ctx, SQL_ERR_SYNTAX, sql_pc_off(ctx, t), "syntax error at end of input", tail);
    return;
  }
  char near[160];
  /* A statement or clause the dialect does not have: say so (and what to use instead) at the
  ** construct's position, instead of listing the tokens expected. */
  char why[140];
  size_t at = 0;
  if (sql_unsupported(ctx->sql, ctx->len, ctx->first, sql_pc_off(ctx, t), why, sizeof why,
                      &at)) {
    int ty;
    size_t n = sql_next_token(ctx->sql + at, ctx->sql + ctx->len, &ty);
    quote_token(near, sizeof near, ctx->sql + at, n);
    snprintf(head, sizeof head, "syntax error near \"%s\"", near);
    snprintf(tail, sizeof tail, ": %s", why);
    set_error(ctx, SQL_ERR_SYNTAX, at, head, tail);
    return;
  }
  quote_token(near, sizeof near, t.z, t.n);
  snprintf(head, sizeof head, "syntax error near \"%s\"", near);
  set_error(ctx, SQL_ERR_SYNTAX, sql_pc_off(ctx, t), head, tail);
}

void sql_pc_overflow(sql_pctx *ctx) {
  sql_pc_error(ctx, SQL_ERR_DEPTH, ctx->len,
               "statement too deeply nested (parser stack overflow)");
}

/* ---- Helpers for the grammar actions -------------------------------------------------------- */

sql_name sql_pc_name(sql_pctx *ctx, sql_token t) {
  sql_name n;
  n.off = sql_pc_off(ctx, t);
  n.z = sql_ident_dup(t.z, t.n);
  if (!n.z) sql_pc_nomem(ctx);
  return n;
}

sql_expr *sql_pc_expr(sql_pctx *ctx, sql_expr *e) {
  if (!e) return sql_pc_nomem(ctx);
  if (e->height > SQL_MAX_EXPR_HEIGHT)
    sql_pc_error(ctx, SQL_ERR_DEPTH, e->off, "expression nested too deeply (limit %d)",
                 SQL_MAX_EXPR_HEIGHT);
  return e;
}

sql_expr *sql_pc_literal(sql_pctx *ctx, int lit, sql_token t, uint32_t off) {
  return sql_pc_expr(ctx, sql_expr_literal(lit, t.z, t.n, off));
}

sql_expr *sql_pc_param(sql_pctx *ctx, sql_token t) {
  uint32_t off = sql_pc_off(ctx, t);
  int num;
  bool numbered = t.n > 1;
  if (numbered) {
    long v = 0;
    for (uint32_t i = 1; i < t.n && v <= SQL_MAX_PARAM; i++) v = v * 10 + (t.z[i] - '0');
    if (v < 1 || v > SQL_MAX_PARAM) {
      char tok[64];
      quote_token(tok, sizeof tok, t.z, t.n);
      sql_pc_error(ctx, SQL_ERR_TOKEN, off, "parameter number \"%s\" out of range (1..%d)",
                   tok, SQL_MAX_PARAM);
      v = 1;
    }
    num = (int)v;
  } else {
    num = ctx->nparam + 1;
    if (num > SQL_MAX_PARAM) {
      sql_pc_error(ctx, SQL_ERR_TOKEN, off, "too many parameters (limit %d)", SQL_MAX_PARAM);
      num = SQL_MAX_PARAM;
    }
  }
  if (num > ctx->nparam) ctx->nparam = num;
  return sql_pc_expr(ctx, sql_expr_param(num, numbered, off));
}

sql_expr *sql_pc_column(sql_pctx *ctx, int n, sql_name a, sql_name b, sql_name c) {
  /* an unquoted lone CURRENT_DATE, CURRENT_TIME or CURRENT_TIMESTAMP is the SQL standard's
     call without parentheses; "CURRENT_DATE" in quotes stays a column name */
  if (n == 1 && a.z && a.off < ctx->len && ctx->sql[a.off] != '"' &&
      sql_is_bare_function(a.z)) {
    sql_expr *f = sql_pc_func(ctx, a, NULL, false, false);
    if (f) f->bare = true;
    return f;
  }
  char *parts[3] = {a.z, b.z, c.z};
  return sql_pc_expr(ctx, sql_expr_column(n, parts, a.off));
}

sql_expr *sql_pc_func(sql_pctx *ctx, sql_name name, sql_expr_list *args, bool distinct,
                      bool star) {
  return sql_pc_expr(ctx, sql_expr_func(name.z, args, distinct, star, name.off));
}

sql_expr *sql_pc_extract(sql_pctx *ctx, sql_name fn, int distinct, sql_name unit,
                         sql_expr *x) {
  static const char *const units[][2] = {
      {"YEAR", "YEAR"},   {"QUARTER", "QUARTER"}, {"MONTH", "MONTH"},
      {"WEEK", "WEEK"},   {"DAY", "DAYOFMONTH"},  {"HOUR", "HOUR"},
      {"MINUTE", "MINUTE"}, {"SECOND", "SECOND"}, {"DAYOFWEEK", "DAYOFWEEK"},
      {"ISODOW", "DAYOFWEEK"}, {"DAYOFYEAR", "DAYOFYEAR"}, {"DOY", "DAYOFYEAR"},
  };
  const char *to = NULL;
  if (!fn.z || strcasecmp(fn.z, "EXTRACT") != 0 || distinct) {
    sql_pc_error(ctx, SQL_ERR_SYNTAX, fn.off, "near \"FROM\": syntax error (only EXTRACT takes "
                 "field FROM value)");
  } else {
    for (size_t i = 0; unit.z && i < sizeof units / sizeof units[0]; i++)
      if (strcasecmp(unit.z, units[i][0]) == 0) to = units[i][1];
    if (!to)
      sql_pc_error(ctx, SQL_ERR_SYNTAX, unit.off,
                   "EXTRACT: unknown field \"%.40s\" (YEAR, QUARTER, MONTH, WEEK, DAY, HOUR, "
                   "MINUTE, SECOND, DAYOFWEEK or ISODOW, DAYOFYEAR or DOY)", unit.z ? unit.z : "");
  }
  free(fn.z);
  free(unit.z);
  if (!to) {
    sql_expr_free(x);
    return NULL;
  }
  sql_name f = {strdup(to), fn.off};
  sql_expr_list *l = sql_pc_list(ctx, NULL, x);
  if (!l || !f.z) {
    free(f.z);
    sql_expr_list_free(l);
    return sql_pc_nomem(ctx);
  }
  return sql_pc_func(ctx, f, l, false, false);
}

sql_expr *sql_pc_within(sql_pctx *ctx, sql_name fn, int distinct, sql_expr_list *args,
                        sql_expr *x, int desc) {
  if (distinct)
    sql_pc_error(ctx, SQL_ERR_SYNTAX, fn.off, "%.40s: DISTINCT is not allowed with WITHIN GROUP",
                 fn.z ? fn.z : "");
  sql_expr_list *l = sql_pc_list(ctx, args, x);
  if (!l) {
    free(fn.z);
    sql_expr_list_free(args);
    return NULL;
  }
  sql_expr *e = sql_pc_func(ctx, fn, l, false, false);
  if (e) {
    e->within = true;
    e->within_desc = desc != 0;
  }
  return e;
}

sql_expr_list *sql_pc_list(sql_pctx *ctx, sql_expr_list *l, sql_expr *e) {
  sql_expr_list *r = sql_expr_list_append(l, e);
  if (!r) sql_pc_nomem(ctx);
  return r;
}

sql_expr *sql_pc_row(sql_pctx *ctx, sql_expr *first, sql_expr_list *rest, uint32_t off) {
  sql_expr_list *l = sql_pc_list(ctx, NULL, first);
  for (int i = 0; l && rest && i < rest->n; i++) {
    l = sql_pc_list(ctx, l, rest->a[i]);
    rest->a[i] = NULL;
  }
  sql_expr_list_free(rest); /* only the items not moved (after a failure) and the shell */
  if (!l) return sql_pc_nomem(ctx);
  return sql_pc_expr(ctx, sql_expr_row(l, off));
}

sql_expr_list *sql_pc_arm(sql_pctx *ctx, sql_expr_list *l, sql_expr *w, sql_expr *t) {
  l = sql_pc_list(ctx, l, w);
  if (!l) {
    sql_expr_free(t);
    return NULL;
  }
  return sql_pc_list(ctx, l, t);
}

sql_order_list *sql_pc_order(sql_pctx *ctx, sql_order_list *l, sql_expr *e, int desc,
                             int nulls) {
  sql_order_list *r = sql_order_list_append(l, e, desc != 0, nulls);
  if (!r) sql_pc_nomem(ctx);
  return r;
}

sql_colname_list *sql_pc_colname(sql_pctx *ctx, sql_colname_list *l, sql_qname q, int desc) {
  uint32_t off = q.family.z ? q.family.off : q.name.off;
  sql_colname_list *r = sql_colname_list_append(l, q.family.z, q.name.z, off, (desc & 1) != 0);
  if (!r) sql_pc_nomem(ctx);
  else r->a[r->n - 1].row_timestamp = (desc & 4) != 0; /* ROW_TIMESTAMP (parse.y) */
  return r;
}

sql_colname_list *sql_pc_dyncol(sql_pctx *ctx, sql_colname_list *l, sql_qname q,
                                sql_type *type) {
  sql_colname_list *r = sql_pc_colname(ctx, l, q, 0);
  if (!r) sql_type_free(type);
  else r->a[r->n - 1].type = type;
  return r;
}

sql_result_list *sql_pc_result(sql_pctx *ctx, sql_result_list *l, sql_expr *e, char *alias,
                               int nqual, sql_name q1, sql_name q2, uint32_t off) {
  char *qual[2] = {q1.z, q2.z};
  sql_result_list *r = sql_result_list_append(l, e, alias, nqual, qual, off);
  if (!r) sql_pc_nomem(ctx);
  return r;
}

sql_option_list *sql_pc_option(sql_pctx *ctx, sql_option_list *l, sql_qname q,
                               sql_expr *value) {
  uint32_t off = q.family.z ? q.family.off : q.name.off;
  sql_option_list *r = sql_option_list_append(l, q.family.z, q.name.z, value, off);
  if (!r) sql_pc_nomem(ctx);
  return r;
}

/* Reads an INTEGER token as a type argument in [0, INT32_MAX]. */
static int64_t type_arg(sql_pctx *ctx, sql_token t) {
  int64_t v = 0;
  for (uint32_t i = 0; i < t.n; i++) {
    v = v * 10 + (t.z[i] - '0');
    if (v > INT32_MAX) {
      char tok[64];
      quote_token(tok, sizeof tok, t.z, t.n);
      sql_pc_error(ctx, SQL_ERR_RANGE, sql_pc_off(ctx, t),
                   "type argument \"%s\" out of range", tok);
      return 0;
    }
  }
  return v;
}

sql_type *sql_pc_type(sql_pctx *ctx, sql_name name, int n, sql_token x, sql_token y) {
  int64_t arg[2] = {0, 0};
  if (n >= 1) arg[0] = type_arg(ctx, x);
  if (n >= 2) arg[1] = type_arg(ctx, y);
  sql_type *t = sql_type_new(name.z, n, arg, name.off);
  if (!t) sql_pc_nomem(ctx);
  return t;
}

sql_type *sql_pc_type_array(sql_pctx *ctx, sql_type *t) {
  (void)ctx;
  if (t) t->array = true;
  return t;
}

sql_expr *sql_pc_array(sql_pctx *ctx, sql_token kw, sql_expr_list *list) {
  char *name = strdup("ARRAY");
  if (!name) {
    sql_expr_list_free(list);
    return sql_pc_nomem(ctx);
  }
  return sql_pc_expr(ctx, sql_expr_func(name, list, false, false, sql_pc_off(ctx, kw)));
}

sql_expr *sql_pc_subscript(sql_pctx *ctx, sql_expr *a, sql_expr *i) {
  char *name = strdup("ARRAY_ELEM");
  uint32_t off = a ? a->off : 0;
  sql_expr_list *l = name && a && i ? sql_expr_list_append(NULL, a) : NULL;
  if (l) l = sql_expr_list_append(l, i);
  else {
    sql_expr_free(a);
    sql_expr_free(i);
  }
  if (!l) {
    free(name);
    return a && i ? sql_pc_nomem(ctx) : NULL;
  }
  return sql_pc_expr(ctx, sql_expr_func(name, l, false, false, off));
}

char *sql_pc_hint(sql_pctx *ctx, sql_token t) {
  /* t is "/" "*" "+" text "*" "/" */
  const char *b = t.z + 3, *e = t.z + t.n - 2;
  while (b < e && (*b == ' ' || *b == '\t' || *b == '\n' || *b == '\r')) b++;
  while (e > b && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r')) e--;
  char *s = malloc((size_t)(e - b) + 1);
  if (!s) return sql_pc_nomem(ctx);
  memcpy(s, b, (size_t)(e - b));
  s[e - b] = 0;
  return s;
}

sql_select *sql_pc_select(sql_pctx *ctx, sql_token kw, char *hint, int distinct,
                          sql_result_list *cols, sql_from from, sql_expr *where,
                          sql_expr_list *group, sql_expr *having) {
  sql_select *s = sql_select_new();
  if (!s) {
    free(hint);
    sql_result_list_free(cols);
    free(from.table.z);
    free(from.alias.z);
    sql_select_free(from.sub);
    sql_join_list_free(from.joins);
    sql_colname_list_free(from.dyn);
    sql_expr_free(where);
    sql_expr_list_free(group);
    sql_expr_free(having);
    return sql_pc_nomem(ctx);
  }
  s->off = sql_pc_off(ctx, kw);
  s->hint = hint;
  s->distinct = distinct != 0;
  s->cols = cols;
  s->table = from.table.z;
  s->table_off = from.table.off;
  s->sub = from.sub;
  s->alias = from.alias.z;
  s->alias_off = from.alias.z ? from.alias.off : 0;
  s->joins = from.joins;
  s->dyn = from.dyn;
  s->where = where;
  s->group = group;
  s->having = having;
  return s;
}

sql_select *sql_pc_select_tail(sql_pctx *ctx, sql_cte_list *with, sql_select *s,
                               sql_order_list *order, sql_expr *limit, sql_expr *offset) {
  if (!s) {
    sql_cte_list_free(with);
    sql_order_list_free(order);
    sql_expr_free(limit);
    sql_expr_free(offset);
    return NULL; /* the error is recorded already */
  }
  (void)ctx;
  s->with = with;
  s->order = order;
  s->limit = limit;
  s->offset = offset;
  return s;
}

sql_select *sql_pc_compound(sql_pctx *ctx, sql_select *left, sql_joinop op, sql_select *right) {
  sql_select *s = left && right ? sql_select_new() : NULL;
  if (!s) {
    sql_select_free(left);
    sql_select_free(right);
    return sql_pc_nomem(ctx);
  }
  s->off = left->off;
  s->setop = op.kind;
  s->setop_off = op.off;
  s->left = left;
  s->right = right;
  return s;
}

sql_cte_list *sql_pc_cte(sql_pctx *ctx, sql_cte_list *l, sql_name name, sql_colname_list *cols,
                         sql_select *select) {
  sql_cte_list *r = sql_cte_list_append(l, name.z, name.off, cols, select);
  if (!r) sql_pc_nomem(ctx);
  return r;
}

sql_join_list *sql_pc_join(sql_pctx *ctx, sql_join_list *l, sql_joinop op, sql_from item,
                           sql_expr *on, sql_colname_list *using) {
  sql_join_list *r = sql_join_list_append(l, op.kind, op.natural, op.off, item.table.z,
                                          item.sub, item.table.off, item.alias.z,
                                          item.alias.z ? item.alias.off : 0, on, using);
  if (!r) {
    sql_colname_list_free(item.dyn);
    sql_pc_nomem(ctx);
  } else {
    r->a[r->n - 1].dyn = item.dyn;
  }
  return r;
}

sql_joinop sql_pc_joinop(sql_pctx *ctx, int kind, sql_token k) {
  sql_joinop o = {kind, false, sql_pc_off(ctx, k)};
  return o;
}

sql_stmt *sql_pc_stmt_select(sql_pctx *ctx, sql_select *sel) {
  sql_stmt *s = sql_stmt_new(SQL_STMT_SELECT, sel ? sel->off : 0);
  if (!s) {
    sql_select_free(sel);
    return sql_pc_nomem(ctx);
  }
  s->u.select = sel;
  return s;
}

sql_stmt *sql_pc_upsert(sql_pctx *ctx, sql_token kw, char *hint, sql_name table,
                        sql_colname_list *cols, sql_expr_list *rows, sql_select *select) {
  sql_stmt *s = sql_stmt_new(SQL_STMT_UPSERT, sql_pc_off(ctx, kw));
  sql_upsert *u = sql_upsert_new();
  if (!s || !u) {
    free(s);
    free(u);
    free(hint);
    free(table.z);
    sql_colname_list_free(cols);
    sql_expr_list_free(rows);
    sql_select_free(select);
    return sql_pc_nomem(ctx);
  }
  u->hint = hint;
  u->table = table.z;
  u->table_off = table.off;
  u->cols = cols;
  u->rows = rows;
  u->select = select;
  s->u.upsert = u;
  return s;
}

sql_stmt *sql_pc_delete(sql_pctx *ctx, sql_token kw, char *hint, sql_name table,
                        sql_colname_list *dyn, sql_expr *where, sql_expr *limit) {
  sql_stmt *s = sql_stmt_new(SQL_STMT_DELETE, sql_pc_off(ctx, kw));
  sql_delete *d = sql_delete_new();
  if (!s || !d) {
    free(s);
    free(d);
    free(hint);
    free(table.z);
    sql_colname_list_free(dyn);
    sql_expr_free(where);
    sql_expr_free(limit);
    return sql_pc_nomem(ctx);
  }
  d->hint = hint;
  d->dyn = dyn;
  d->table = table.z;
  d->table_off = table.off;
  d->where = where;
  d->limit = limit;
  s->u.del = d;
  return s;
}

sql_create_table *sql_pc_coldef(sql_pctx *ctx, sql_create_table *t, sql_qname q,
                                sql_type *type, int nullability, int pk) {
  if (!t) t = sql_create_table_new();
  uint32_t off = q.family.z ? q.family.off : q.name.off;
  if (!t) {
    free(q.family.z);
    free(q.name.z);
    sql_type_free(type);
    return sql_pc_nomem(ctx);
  }
  if (sql_create_table_add(t, q.family.z, q.name.z, type, nullability, (pk & 3) != 0,
                           (pk & 3) == 2, off) != 0)
    sql_pc_nomem(ctx);
  else t->cols[t->ncol - 1].row_timestamp = (pk & 4) != 0; /* ROW_TIMESTAMP (parse.y) */
  return t;
}

sql_create_table *sql_pc_pk(sql_pctx *ctx, sql_create_table *t, sql_name name,
                            sql_colname_list *cols) {
  if (!t || !name.z || !cols) {
    free(name.z);
    sql_colname_list_free(cols);
    if (!t || ctx->rc == SQL_OK) sql_pc_nomem(ctx);
    return t;
  }
  t->pk_name = name.z;
  t->pk = cols;
  return t;
}

sql_split *sql_pc_split(sql_pctx *ctx, sql_token kw, sql_expr_list *values) {
  sql_split *s = calloc(1, sizeof *s);
  if (!s) {
    sql_expr_list_free(values);
    sql_pc_nomem(ctx);
    return NULL;
  }
  s->values = values;
  s->off = sql_pc_off(ctx, kw);
  return s;
}

sql_stmt *sql_pc_create_table(sql_pctx *ctx, sql_token kw, int if_not_exists, sql_name name,
                              sql_create_table *t, sql_option_list *opts, sql_split *split) {
  sql_stmt *s = sql_stmt_new(SQL_STMT_CREATE_TABLE, sql_pc_off(ctx, kw));
  if (!s || !t || !name.z) {
    free(s);
    free(name.z);
    sql_create_table_free(t);
    sql_option_list_free(opts);
    sql_split_free(split);
    return sql_pc_nomem(ctx);
  }
  t->split = split;
  t->name = name.z;
  t->name_off = name.off;
  t->if_not_exists = if_not_exists != 0;
  t->opts = opts;
  s->u.create_table = t;
  return s;
}

sql_stmt *sql_pc_create_index(sql_pctx *ctx, sql_token kw, int if_not_exists, sql_name name,
                              sql_name table, sql_order_list *keys,
                              sql_colname_list *include, sql_option_list *opts) {
  sql_stmt *s = sql_stmt_new(SQL_STMT_CREATE_INDEX, sql_pc_off(ctx, kw));
  sql_create_index *ci = sql_create_index_new();
  if (!s || !ci || !name.z || !table.z || !keys) {
    free(s);
    free(ci);
    free(name.z);
    free(table.z);
    sql_order_list_free(keys);
    sql_colname_list_free(include);
    sql_option_list_free(opts);
    return sql_pc_nomem(ctx);
  }
  ci->name = name.z;
  ci->table = table.z;
  ci->if_not_exists = if_not_exists != 0;
  ci->keys = keys;
  ci->include = include;
  ci->opts = opts;
  s->u.create_index = ci;
  return s;
}

sql_stmt *sql_pc_drop(sql_pctx *ctx, int kind, sql_token kw, int if_exists, sql_name name,
                      sql_name table) {
  sql_stmt *s = sql_stmt_new(kind, sql_pc_off(ctx, kw));
  sql_drop *d = sql_drop_new();
  bool need_table = kind != SQL_STMT_DROP_TABLE && kind != SQL_STMT_DROP_SEQUENCE &&
                    kind != SQL_STMT_DROP_VIEW;
  if (!s || !d || !name.z || (need_table && !table.z)) {
    free(s);
    free(d);
    free(name.z);
    free(table.z);
    return sql_pc_nomem(ctx);
  }
  d->name = name.z;
  d->table = table.z;
  d->if_exists = if_exists != 0;
  s->u.drop = d;
  return s;
}

sql_stmt *sql_pc_alter(sql_pctx *ctx, sql_token kw, sql_name name, int action, int if_flag,
                       sql_create_table *add, sql_colname_list *drop, sql_option_list *opts) {
  sql_stmt *s = sql_stmt_new(SQL_STMT_ALTER_TABLE, sql_pc_off(ctx, kw));
  sql_alter_table *a = calloc(1, sizeof *a);
  if (!s || !a || !name.z || (!add && !drop && !opts)) {
    free(s);
    free(a);
    free(name.z);
    sql_create_table_free(add);
    sql_colname_list_free(drop);
    sql_option_list_free(opts);
    return sql_pc_nomem(ctx);
  }
  a->name = name.z;
  a->name_off = name.off;
  a->action = action;
  a->if_flag = if_flag != 0;
  a->add = add;
  a->drop = drop;
  a->opts = opts;
  s->u.alter = a;
  return s;
}

sql_stmt *sql_pc_simple(sql_pctx *ctx, int kind, sql_token kw) {
  sql_stmt *s = sql_stmt_new(kind, sql_pc_off(ctx, kw));
  if (!s) return sql_pc_nomem(ctx);
  return s;
}

sql_stmt *sql_pc_explain(sql_pctx *ctx, sql_stmt *s, int flags) {
  if (s) {
    s->explain = true;
    s->analyze = (flags & SQL_EXPLAIN_ANALYZE) != 0;
    s->explain_json = (flags & SQL_EXPLAIN_JSON) != 0;
  }
  return s;
}

int sql_pc_explain_opt(sql_pctx *ctx, sql_name name, sql_name *value) {
  int r = 0;
  const char *n = name.z ? name.z : "";
  const char *v = value && value->z ? value->z : NULL;
  if (!strcmp(n, "ANALYZE") && !value) {
    r = SQL_EXPLAIN_ANALYZE;
  } else if (!strcmp(n, "FORMAT") && v && (!strcmp(v, "JSON") || !strcmp(v, "TEXT"))) {
    r = !strcmp(v, "JSON") ? SQL_EXPLAIN_JSON : 0;
  } else if (!strcmp(n, "FORMAT")) {
    sql_pc_error(ctx, SQL_ERR_SYNTAX, value ? value->off : name.off,
                 "EXPLAIN option FORMAT takes TEXT or JSON, not %s", v ? v : "nothing");
  } else {
    sql_pc_error(ctx, SQL_ERR_SYNTAX, name.off,
                 "unknown EXPLAIN option %s%s%s: the options are ANALYZE and FORMAT TEXT|JSON",
                 n, v ? " " : "", v ? v : "");
  }
  free(name.z);
  if (value) free(value->z);
  return r;
}

void sql_pc_done(sql_pctx *ctx, sql_stmt *s) {
  if (!s) {
    if (ctx->rc == SQL_OK) sql_pc_nomem(ctx);
    return;
  }
  sql_stmt_free(ctx->stmt);
  ctx->stmt = s;
}

/* ---- The driver ------------------------------------------------------------------------------ */

/* The type of the next token after p that the grammar would see (0 at the end). */
static int peek(const char *p, const char *end) {
  while (p < end) {
    int t;
    size_t n = sql_next_token(p, end, &t);
    if (t != TK_SPACE && t != TK_COMMENT && t != TK_HINT) return t;
    p += n;
  }
  return 0;
}

/* Reports the illegal token z[0..n) with a message that names what is wrong. */
static void token_error(sql_pctx *ctx, const char *z, size_t n) {
  size_t off = (size_t)(z - ctx->sql);
  char tok[64];
  quote_token(tok, sizeof tok, z, n);
  const char *nul = memchr(z, 0, n);
  if (nul) {
    sql_pc_error(ctx, SQL_ERR_TOKEN, (size_t)(nul - ctx->sql), "NUL byte in SQL text");
    return;
  }
  switch (z[0]) {
    case '\'':
      sql_pc_error(ctx, SQL_ERR_TOKEN, off, "unterminated string literal");
      break;
    case '"':
      if (n == 2) sql_pc_error(ctx, SQL_ERR_TOKEN, off, "zero-length quoted identifier");
      else sql_pc_error(ctx, SQL_ERR_TOKEN, off, "unterminated quoted identifier");
      break;
    case '/':
      sql_pc_error(ctx, SQL_ERR_TOKEN, off, "unterminated comment");
      break;
    case '?':
      sql_pc_error(ctx, SQL_ERR_TOKEN, off, "malformed parameter \"%s\"", tok);
      break;
    default:
      if ((z[0] >= '0' && z[0] <= '9') || z[0] == '.')
        sql_pc_error(ctx, SQL_ERR_TOKEN, off, "malformed number \"%s\"", tok);
      else
        sql_pc_error(ctx, SQL_ERR_TOKEN, off, "unrecognized token \"%s\"", tok);
      break;
  }
}

/* Before feeding major: if the parser would reject it, record the terminals it would take
** for the error message that follows (identifier first). Where an identifier is expected,
** the non-reserved keywords and DATE/TIME/TIMESTAMP are not listed: they are names there. */
static void collect_expected(sql_pctx *ctx, void *parser, int major) {
  if (sql_lemonAccepts(parser, major)) return;
  ctx->nexpect = 0;
  bool id_ok = sql_lemonAccepts(parser, TK_ID) != 0;
  if (id_ok) sql_pc_expect(ctx, TK_ID);
  int n = sql_lemonTokenCount();
  for (int t = 1; t < n; t++) {
    if (t == TK_ID) continue;
    if (id_ok && (sql_lemonIsFallback(t) || t == TK_DATE || t == TK_TIME || t == TK_TIMESTAMP))
      continue;
    if (sql_lemonAccepts(parser, t)) sql_pc_expect(ctx, t);
  }
}

/* Just past the next ';' at or after p, or end: where the statement after a failed one
** starts. */
static const char *skip_statement(const char *p, const char *end) {
  while (p < end) {
    int t;
    p += sql_next_token(p, end, &t);
    if (t == TK_SEMI) break;
  }
  return p;
}

int sql_parse(const char *sql, size_t len, sql_stmt **out, const char **tail,
              sql_error *err) {
  sql_error local;
  if (!err) err = &local;
  memset(err, 0, sizeof *err);
  if (out) *out = NULL;
  if (!sql) {
    sql = "";
    len = 0;
  }
  if (tail) *tail = sql + len;
  sql_pctx ctx;
  memset(&ctx, 0, sizeof ctx);
  ctx.sql = sql;
  ctx.len = len;
  ctx.err = err;
  if (len > UINT32_MAX / 2) {
    sql_pc_error(&ctx, SQL_ERR_RANGE, 0, "statement text too long");
    return ctx.rc;
  }

  const char *p = sql, *end = sql + len;
  void *parser = NULL;
  int depth = 0, prev = 0;
  uint32_t first = 0, last_end = 0;
  bool ended = false; /* the statement's ';' (or the end) has been consumed */
  while (ctx.rc == SQL_OK && !ended) {
    int type;
    size_t n;
    sql_token tok;
    if (p >= end) {
      if (!parser) break; /* nothing but space, comments and ';' */
      tok.z = end;
      tok.n = 0;
      collect_expected(&ctx, parser, TK_SEMI);
      sql_lemon(parser, TK_SEMI, tok);
      if (ctx.rc == SQL_OK) sql_lemon(parser, 0, tok);
      ended = true;
      break;
    }
    n = sql_next_token(p, end, &type);
    tok.z = p;
    tok.n = (uint32_t)n;
    if (type == TK_SPACE || type == TK_COMMENT ||
        (type == TK_HINT && prev != TK_SELECT && prev != TK_UPSERT && prev != TK_DELETE)) {
      p += n;
      continue;
    }
    if (type == TK_ILLEGAL) {
      token_error(&ctx, p, n);
      break;
    }
    if (type == TK_SEMI) {
      p += n;
      if (!parser) continue; /* an empty statement */
      ended = true;
      collect_expected(&ctx, parser, TK_SEMI);
      sql_lemon(parser, TK_SEMI, tok);
      tok.z = p;
      tok.n = 0;
      if (ctx.rc == SQL_OK) sql_lemon(parser, 0, tok);
      break;
    }
    if (type == TK_ID) {
      size_t m = sql_seq_value_for(p, n, end, &type);
      if (m) tok.n = (uint32_t)(n = m);
      else type = TK_ID;
    }
    if (type == TK_NOT) {
      int next = peek(p + n, end);
      if (next == TK_IN || next == TK_BETWEEN || next == TK_LIKE || next == TK_ILIKE)
        type = TK_NOTX;
    } else if (type == TK_LP) {
      if (++depth > SQL_MAX_PAREN_DEPTH) {
        sql_pc_error(&ctx, SQL_ERR_DEPTH, (size_t)(p - sql),
                     "too many nested parentheses (limit %d)", SQL_MAX_PAREN_DEPTH);
        break;
      }
    } else if (type == TK_RP && depth > 0) {
      depth--;
    }
    if (!parser) {
      parser = sql_lemonAlloc(malloc, &ctx);
      if (!parser) {
        sql_pc_nomem(&ctx);
        break;
      }
      first = (uint32_t)(p - sql);
      ctx.first = first;
    }
    collect_expected(&ctx, parser, type);
    sql_lemon(parser, type, tok);
    if (ctx.rc != SQL_OK) break;
    prev = type;
    p += n;
    last_end = (uint32_t)(p - sql);
  }
  if (parser) sql_lemonFree(parser, free);
  if (ctx.rc == SQL_OK && ended && !ctx.stmt) sql_pc_nomem(&ctx);
  if (ctx.rc != SQL_OK) {
    sql_expr_free(ctx.as_of);
    sql_stmt_free(ctx.stmt);
    if (tail) *tail = ended ? p : skip_statement(p, end);
    return ctx.rc;
  }
  if (ctx.stmt) { /* the AS OF clauses of the statement (sql_pc_as_of) */
    ctx.stmt->as_of = ctx.as_of;
    ctx.stmt->n_as_of = ctx.n_as_of;
    ctx.stmt->as_of_mixed = ctx.as_of_mixed;
    ctx.as_of = NULL;
  }
  sql_expr_free(ctx.as_of);
  if (ctx.stmt) {
    ctx.stmt->off = first;
    ctx.stmt->len = last_end - first;
    ctx.stmt->nparam = ctx.nparam;
  }
  if (out) *out = ctx.stmt;
  else sql_stmt_free(ctx.stmt);
  if (tail) *tail = p;
  return SQL_OK;
}

void sql_pc_as_of(sql_pctx *ctx, sql_token kw, sql_token lit) {
  sql_expr *e = sql_expr_literal(SQL_LIT_TIMESTAMP, lit.z, lit.n, sql_pc_off(ctx, kw));
  if (!e) {
    sql_pc_nomem(ctx);
    return;
  }
  ctx->n_as_of++;
  if (!ctx->as_of) {
    ctx->as_of = e;
    return;
  }
  if (e->text_len != ctx->as_of->text_len || memcmp(e->text, ctx->as_of->text, e->text_len) != 0)
    ctx->as_of_mixed = true;
  sql_expr_free(e);
}
