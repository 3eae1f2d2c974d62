/*
** sql/print.c: renders a syntax tree (sql/ast.h) back to canonical SQL text.
**
** Canonical means: keywords in upper case, single spaces, identifiers quoted only when
** they must be (not a plain upper-case name, or spelled like a keyword), strings with ''
** escapes, numbers as written, optional words dropped (ALL, ASC, AS before a FROM alias
** is always written), and parentheses only where the grammar's precedence needs them.
** The precedence levels below mirror the %left/%right/%nonassoc lines of sql/parse.y
** (ORDER PRECEDENCE): a child is parenthesized when its level is below what its position
** requires, so parsing the output always gives back the same tree, and printing that tree
** gives the same text again. SQL_PRINT_FULL_PARENS wraps every operator expression, which
** tests use to show how a statement grouped.
**
** Not here: parsing, validation. Output is malloc'd; OOM gives NULL.
*/
#include "sql/ast.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sql/token.h"

/* A growable output buffer; after an allocation failure it only records the failure. */
typedef struct buf {
  char *p;     /* text so far, NUL-terminated when non-NULL */
  size_t n;    /* bytes used */
  size_t cap;  /* bytes allocated */
  bool oom;    /* an allocation failed */
} buf;

static void put(buf *b, const char *s, size_t n) {
  if (b->oom) return;
  if (b->n + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->n + n + 1) cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) {
      b->oom = true;
      return;
    }
    b->p = p;
    b->cap = cap;
  }
  memcpy(b->p + b->n, s, n);
  b->n += n;
  b->p[b->n] = 0;
}

static void puts_(buf *b, const char *s) {
  put(b, s, strlen(s));
}

/* An identifier, quoted when the tokenizer would not give it back unchanged, or always
** when quote is set. */
static void put_name(buf *b, const char *name, bool quote) {
  size_t n = strlen(name);
  bool plain = !quote && n > 0 &&
               !((unsigned char)name[0] >= '0' && (unsigned char)name[0] <= '9');
  for (size_t i = 0; plain && i < n; i++) {
    unsigned char c = (unsigned char)name[i];
    if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c >= 0x80))
      plain = false;
  }
  if (plain && sql_is_keyword(name, n)) {
    /* DATE, TIME and TIMESTAMP are names wherever a name can stand (sql/parse.y nm) */
    int code = sql_keyword_code(name, n);
    plain = code == TK_DATE || code == TK_TIME || code == TK_TIMESTAMP;
  }
  if (plain) {
    put(b, name, n);
    return;
  }
  put(b, "\"", 1);
  for (size_t i = 0; i < n; i++) {
    if (name[i] == '"') put(b, "\"", 1);
    put(b, name + i, 1);
  }
  put(b, "\"", 1);
}

static void put_ident(buf *b, const char *name) { put_name(b, name, false); }

/* A string literal with '' escapes. */
static void put_string(buf *b, const char *s, size_t n) {
  put(b, "'", 1);
  for (size_t i = 0; i < n; i++) {
    if (s[i] == '\'') put(b, "'", 1);
    put(b, s + i, 1);
  }
  put(b, "'", 1);
}

/* ORDER PRECEDENCE: levels, lowest first, as in sql/parse.y. */
enum {
  P_OR = 1,
  P_AND,
  P_NOT,
  P_IS,
  P_CMP,
  P_IN,     /* BETWEEN, IN, LIKE, ILIKE */
  P_CONCAT,
  P_ADD,
  P_MUL,
  P_UNARY,
  P_PRIMARY
};

/* ORDER SQL_OP: text and level of each operator. */
static const struct {
  const char *text; /* as printed */
  int prec;         /* level */
} ops[SQL_OP_COUNT] = {
  [SQL_OP_NEG] = {"-", P_UNARY},    [SQL_OP_POS] = {"+", P_UNARY},
  [SQL_OP_NOT] = {"NOT ", P_NOT},   [SQL_OP_MUL] = {" * ", P_MUL},
  [SQL_OP_DIV] = {" / ", P_MUL},    [SQL_OP_MOD] = {" % ", P_MUL},
  [SQL_OP_ADD] = {" + ", P_ADD},    [SQL_OP_SUB] = {" - ", P_ADD},
  [SQL_OP_CONCAT] = {" || ", P_CONCAT}, [SQL_OP_EQ] = {" = ", P_CMP},
  [SQL_OP_NE] = {" <> ", P_CMP},    [SQL_OP_LT] = {" < ", P_CMP},
  [SQL_OP_LE] = {" <= ", P_CMP},    [SQL_OP_GT] = {" > ", P_CMP},
  [SQL_OP_GE] = {" >= ", P_CMP},    [SQL_OP_AND] = {" AND ", P_AND},
  [SQL_OP_OR] = {" OR ", P_OR},
};

static int prec_of(const sql_expr *e) {
  switch (e->kind) {
    case SQL_E_UNARY:
    case SQL_E_BINARY: return (e->op > 0 && e->op < SQL_OP_COUNT) ? ops[e->op].prec : P_PRIMARY;
    case SQL_E_ISNULL: return P_IS;
    case SQL_E_IN:
    case SQL_E_BETWEEN:
    case SQL_E_LIKE: return P_IN;
    default: return P_PRIMARY;
  }
}

static void put_expr(buf *b, const sql_expr *e, int minprec, unsigned flags);
static void put_select(buf *b, const sql_select *s, unsigned flags);

static void put_list(buf *b, const sql_expr_list *l, unsigned flags) {
  for (int i = 0; l && i < l->n; i++) {
    if (i) puts_(b, ", ");
    put_expr(b, l->a[i], 0, flags);
  }
}

static void put_type(buf *b, const sql_type *t) {
  put_ident(b, t->name);
  if (t->nargs > 0) {
    char tmp[48];
    if (t->nargs == 1) snprintf(tmp, sizeof tmp, "(%lld)", (long long)t->arg[0]);
    else snprintf(tmp, sizeof tmp, "(%lld, %lld)", (long long)t->arg[0], (long long)t->arg[1]);
    puts_(b, tmp);
  }
  if (t->array) puts_(b, " ARRAY");
}

static void put_literal(buf *b, const sql_expr *e) {
  switch (e->lit) {
    case SQL_LIT_NULL: puts_(b, "NULL"); break;
    case SQL_LIT_TRUE: puts_(b, "TRUE"); break;
    case SQL_LIT_FALSE: puts_(b, "FALSE"); break;
    case SQL_LIT_STRING: put_string(b, e->text, e->text_len); break;
    case SQL_LIT_BLOB: {
      static const char hx[] = "0123456789ABCDEF";
      puts_(b, "X'");
      for (size_t i = 0; i < e->text_len; i++) {
        char two[3] = {hx[(unsigned char)e->text[i] >> 4], hx[(unsigned char)e->text[i] & 15], 0};
        puts_(b, two);
      }
      puts_(b, "'");
      break;
    }
    case SQL_LIT_DATE: puts_(b, "DATE "); put_string(b, e->text, e->text_len); break;
    case SQL_LIT_TIME: puts_(b, "TIME "); put_string(b, e->text, e->text_len); break;
    case SQL_LIT_TIMESTAMP:
      puts_(b, "TIMESTAMP ");
      put_string(b, e->text, e->text_len);
      break;
    default: put(b, e->text, e->text_len); break; /* numbers as written */
  }
}

/* The body of an expression, without the parentheses its context may need. */
static void put_expr_body(buf *b, const sql_expr *e, unsigned flags) {
  int p = prec_of(e);
  char tmp[32];
  switch (e->kind) {
    case SQL_E_LITERAL: put_literal(b, e); break;
    case SQL_E_PARAM:
      if (e->param_numbered) {
        snprintf(tmp, sizeof tmp, "?%d", e->param);
        puts_(b, tmp);
      } else {
        puts_(b, "?");
      }
      break;
    case SQL_E_COLUMN:
      /* a lone CURRENT_DATE (_TIME, _TIMESTAMP) is the function: a column so named is
         quoted so that the text parses back to the column */
      if (e->nname == 1 && sql_is_bare_function(e->name[0])) {
        put_name(b, e->name[0], true);
        break;
      }
      for (int i = 0; i < e->nname; i++) {
        if (i) puts_(b, ".");
        put_ident(b, e->name[i]);
      }
      break;
    case SQL_E_UNARY:
      puts_(b, ops[e->op].text);
      /* "--x" would be a comment: a sign before a sign gets a space */
      if (e->op != SQL_OP_NOT && e->left && e->left->kind == SQL_E_UNARY &&
          e->left->op != SQL_OP_NOT && !(flags & SQL_PRINT_FULL_PARENS))
        puts_(b, " ");
      put_expr(b, e->left, e->op == SQL_OP_NOT ? P_NOT : P_UNARY, flags);
      break;
    case SQL_E_BINARY: {
      bool nonassoc = p == P_CMP;
      put_expr(b, e->left, nonassoc ? p + 1 : p, flags);
      puts_(b, ops[e->op].text);
      put_expr(b, e->right, p + 1, flags);
      break;
    }
    case SQL_E_ISNULL:
      put_expr(b, e->left, P_IS + 1, flags);
      puts_(b, e->negated ? " IS NOT NULL" : " IS NULL");
      break;
    case SQL_E_IN:
      put_expr(b, e->left, P_IN + 1, flags);
      puts_(b, e->negated ? " NOT IN (" : " IN (");
      if (e->sub) put_select(b, e->sub, flags);
      else put_list(b, e->list, flags);
      puts_(b, ")");
      break;
    case SQL_E_SUBQUERY:
    case SQL_E_EXISTS:
      puts_(b, e->kind == SQL_E_EXISTS ? "EXISTS (" : "(");
      put_select(b, e->sub, flags);
      puts_(b, ")");
      break;
    case SQL_E_BETWEEN:
      put_expr(b, e->left, P_IN + 1, flags);
      puts_(b, e->negated ? " NOT BETWEEN " : " BETWEEN ");
      put_expr(b, e->right, P_IN + 1, flags);
      puts_(b, " AND ");
      put_expr(b, e->third, P_IN + 1, flags);
      break;
    case SQL_E_LIKE:
      put_expr(b, e->left, P_IN + 1, flags);
      puts_(b, e->negated ? " NOT" : "");
      puts_(b, e->ilike ? " ILIKE " : " LIKE ");
      put_expr(b, e->right, P_IN + 1, flags);
      if (e->third) {
        puts_(b, " ESCAPE ");
        put_expr(b, e->third, P_IN + 1, flags);
      }
      break;
    case SQL_E_CASE:
      puts_(b, "CASE");
      if (e->left) {
        puts_(b, " ");
        put_expr(b, e->left, 0, flags);
      }
      for (int i = 0; e->list && i + 1 < e->list->n; i += 2) {
        puts_(b, " WHEN ");
        put_expr(b, e->list->a[i], 0, flags);
        puts_(b, " THEN ");
        put_expr(b, e->list->a[i + 1], 0, flags);
      }
      if (e->third) {
        puts_(b, " ELSE ");
        put_expr(b, e->third, 0, flags);
      }
      puts_(b, " END");
      break;
    case SQL_E_CAST:
      puts_(b, "CAST(");
      put_expr(b, e->left, 0, flags);
      puts_(b, " AS ");
      put_type(b, e->type);
      puts_(b, ")");
      break;
    case SQL_E_FUNC:
      if (strcmp(e->text, "ARRAY") == 0 && !e->star && !e->distinct && !e->within) {
        puts_(b, "ARRAY["); /* the constructor (a function called "ARRAY" prints the same) */
        put_list(b, e->list, flags);
        puts_(b, "]");
        break;
      }
      put_ident(b, e->text);
      if (e->bare) break;
      if (e->within && e->list && e->list->n >= 2) {
        sql_expr_list head = *e->list;
        head.n--;
        puts_(b, "(");
        put_list(b, &head, flags);
        puts_(b, ") WITHIN GROUP (ORDER BY ");
        put_expr(b, e->list->a[e->list->n - 1], 0, flags);
        puts_(b, e->within_desc ? " DESC)" : ")");
        break;
      }
      puts_(b, "(");
      if (e->star) puts_(b, "*");
      if (e->distinct) puts_(b, "DISTINCT ");
      put_list(b, e->list, flags);
      puts_(b, ")");
      break;
    case SQL_E_ROW:
      puts_(b, "(");
      put_list(b, e->list, flags);
      puts_(b, ")");
      break;
    case SQL_E_SEQUENCE:
      puts_(b, e->op == SQL_SEQ_NEXT ? "NEXT VALUE FOR " : "CURRENT VALUE FOR ");
      put_ident(b, e->text);
      break;
    default: puts_(b, "NULL"); break;
  }
}

/* An expression in a position that needs at least level minprec. */
static void put_expr(buf *b, const sql_expr *e, int minprec, unsigned flags) {
  if (!e) {
    puts_(b, "NULL");
    return;
  }
  int p = prec_of(e);
  bool paren = p < minprec || ((flags & SQL_PRINT_FULL_PARENS) && p < P_PRIMARY);
  if (paren) puts_(b, "(");
  put_expr_body(b, e, flags);
  if (paren) puts_(b, ")");
}

static void put_hint(buf *b, const char *hint) {
  if (!hint) return;
  puts_(b, "/*+ ");
  puts_(b, hint);
  puts_(b, hint[0] ? " */ " : "*/ ");
}

static void put_colname(buf *b, const sql_colname *c) {
  if (c->family) {
    put_ident(b, c->family);
    puts_(b, ".");
  }
  put_ident(b, c->name);
}

static void put_colnames(buf *b, const sql_colname_list *l) {
  puts_(b, "(");
  for (int i = 0; l && i < l->n; i++) {
    if (i) puts_(b, ", ");
    put_colname(b, &l->a[i]);
    if (l->a[i].type) {
      puts_(b, " ");
      put_type(b, l->a[i].type);
    }
    if (l->a[i].desc) puts_(b, " DESC");
    if (l->a[i].row_timestamp) puts_(b, " ROW_TIMESTAMP");
  }
  puts_(b, ")");
}

static void put_order(buf *b, const sql_order_list *l, unsigned flags) {
  for (int i = 0; l && i < l->n; i++) {
    if (i) puts_(b, ", ");
    put_expr(b, l->a[i].expr, 0, flags);
    if (l->a[i].desc) puts_(b, " DESC");
    if (l->a[i].nulls == 1) puts_(b, " NULLS FIRST");
    else if (l->a[i].nulls == 2) puts_(b, " NULLS LAST");
  }
}

static void put_options(buf *b, const sql_option_list *l, unsigned flags) {
  for (int i = 0; l && i < l->n; i++) {
    puts_(b, i ? ", " : " ");
    if (l->a[i].family) {
      put_ident(b, l->a[i].family);
      puts_(b, ".");
    }
    put_ident(b, l->a[i].name);
    puts_(b, " = ");
    put_expr(b, l->a[i].value, 0, flags);
  }
}

static void put_core(buf *b, const sql_select *s, unsigned flags);

/* A FROM item: a table or (derived table), then its alias. */
static void put_from_item(buf *b, const char *table, const sql_select *sub, const char *alias,
                          const sql_colname_list *dyn, unsigned flags) {
  if (sub) {
    puts_(b, "(");
    put_select(b, sub, flags);
    puts_(b, ")");
  } else {
    put_ident(b, table);
  }
  if (alias) {
    puts_(b, " AS ");
    put_ident(b, alias);
  }
  if (dyn) { /* Phoenix's dynamic columns: (f.c TYPE, ...) */
    puts_(b, " ");
    put_colnames(b, dyn);
  }
}

/* ORDER SQL_JOIN: the words of each join kind. */
static void put_join(buf *b, const sql_join *j, unsigned flags) {
  static const char *const words[] = {"?", ",", " JOIN", " LEFT JOIN", " RIGHT JOIN",
                                      " FULL JOIN", " CROSS JOIN"};
  if (j->natural) puts_(b, " NATURAL");
  puts_(b, j->kind >= 1 && j->kind <= SQL_JOIN_CROSS ? words[j->kind] : "?");
  puts_(b, " ");
  put_from_item(b, j->table, j->sub, j->alias, j->dyn, flags);
  if (j->on) {
    puts_(b, " ON ");
    put_expr(b, j->on, 0, flags);
  }
  if (j->using) {
    puts_(b, " USING (");
    for (int i = 0; i < j->using->n; i++) {
      if (i) puts_(b, ", ");
      put_ident(b, j->using->a[i].name);
    }
    puts_(b, ")");
  }
}

/* ORDER SQL_SETOP: the words of each set operator. */
static const char *const setop_words[] = {"?", " UNION ALL ", " UNION ", " INTERSECT ",
                                          " EXCEPT "};

static void put_select(buf *b, const sql_select *s, unsigned flags) {
  if (s->with) {
    puts_(b, "WITH ");
    for (int i = 0; i < s->with->n; i++) {
      const sql_cte *c = &s->with->a[i];
      if (i) puts_(b, ", ");
      put_ident(b, c->name);
      if (c->cols) {
        puts_(b, " (");
        for (int k = 0; k < c->cols->n; k++) {
          if (k) puts_(b, ", ");
          put_ident(b, c->cols->a[k].name);
        }
        puts_(b, ")");
      }
      puts_(b, " AS (");
      put_select(b, c->select, flags);
      puts_(b, ") ");
    }
  }
  if (s->setop) {
    put_select(b, s->left, flags);
    puts_(b, s->setop >= 1 && s->setop <= SQL_SETOP_EXCEPT ? setop_words[s->setop] : "?");
    put_select(b, s->right, flags);
  } else {
    put_core(b, s, flags);
  }
  if (s->order) {
    puts_(b, " ORDER BY ");
    put_order(b, s->order, flags);
  }
  if (s->limit) {
    puts_(b, " LIMIT ");
    put_expr(b, s->limit, 0, flags);
  }
  if (s->offset) {
    puts_(b, " OFFSET ");
    put_expr(b, s->offset, 0, flags);
  }
}

/* One SELECT without WITH, ORDER BY, LIMIT and OFFSET. */
static void put_core(buf *b, const sql_select *s, unsigned flags) {
  puts_(b, "SELECT ");
  put_hint(b, s->hint);
  if (s->distinct) puts_(b, "DISTINCT ");
  for (int i = 0; s->cols && i < s->cols->n; i++) {
    const sql_result_col *c = &s->cols->a[i];
    if (i) puts_(b, ", ");
    if (c->expr) {
      put_expr(b, c->expr, 0, flags);
      if (c->alias) {
        puts_(b, " AS ");
        put_ident(b, c->alias);
      }
    } else {
      for (int q = 0; q < c->nqual; q++) {
        put_ident(b, c->qual[q]);
        puts_(b, ".");
      }
      puts_(b, "*");
    }
  }
  if (s->table || s->sub) {
    puts_(b, " FROM ");
    put_from_item(b, s->table, s->sub, s->alias, s->dyn, flags);
  }
  for (int i = 0; s->joins && i < s->joins->n; i++) put_join(b, &s->joins->a[i], flags);
  if (s->where) {
    puts_(b, " WHERE ");
    put_expr(b, s->where, 0, flags);
  }
  if (s->group) {
    puts_(b, " GROUP BY ");
    put_list(b, s->group, flags);
  }
  if (s->having) {
    puts_(b, " HAVING ");
    put_expr(b, s->having, 0, flags);
  }
}

/* The column definitions of CREATE TABLE or ALTER TABLE ADD, comma-separated. */
static void put_coldefs(buf *b, const sql_create_table *t) {
  for (int i = 0; i < t->ncol; i++) {
    const sql_coldef *c = &t->cols[i];
    if (i) puts_(b, ", ");
    if (c->family) {
      put_ident(b, c->family);
      puts_(b, ".");
    }
    put_ident(b, c->name);
    puts_(b, " ");
    put_type(b, c->type);
    if (c->nullability == 1) puts_(b, " NULL");
    else if (c->nullability == 2) puts_(b, " NOT NULL");
    if (c->pk) puts_(b, c->pk_desc ? " PRIMARY KEY DESC" : " PRIMARY KEY");
    if (c->row_timestamp) puts_(b, " ROW_TIMESTAMP");
  }
}

static void put_create_table(buf *b, const sql_create_table *t, unsigned flags) {
  puts_(b, "CREATE TABLE ");
  if (t->if_not_exists) puts_(b, "IF NOT EXISTS ");
  put_ident(b, t->name);
  puts_(b, " (");
  put_coldefs(b, t);
  if (t->pk) {
    puts_(b, ", CONSTRAINT ");
    put_ident(b, t->pk_name);
    puts_(b, " PRIMARY KEY ");
    put_colnames(b, t->pk);
  }
  puts_(b, ")");
  put_options(b, t->opts, flags);
}

/* CREATE SEQUENCE with its options in their canonical words (START WITH, INCREMENT BY). */
static void put_create_sequence(buf *b, const sql_create_sequence *c, unsigned flags) {
  puts_(b, c->if_not_exists ? "CREATE SEQUENCE IF NOT EXISTS " : "CREATE SEQUENCE ");
  put_ident(b, c->name);
  for (int i = 0; c->opts && i < c->opts->n; i++) {
    const sql_option *o = &c->opts->a[i];
    puts_(b, " ");
    put_ident(b, o->name);
    if (strcmp(o->name, "START") == 0) puts_(b, " WITH");
    else if (strcmp(o->name, "INCREMENT") == 0) puts_(b, " BY");
    const sql_expr *v = o->value;
    if (!v) continue;
    puts_(b, " ");
    if (v->kind == SQL_E_UNARY && v->op == SQL_OP_NEG && v->left) { /* -n: never in ( ) */
      puts_(b, "-");
      v = v->left;
    }
    put_expr(b, v, 0, flags);
  }
}

static void put_stmt(buf *b, const sql_stmt *s, unsigned flags) {
  if (s->explain) puts_(b, s->analyze ? "EXPLAIN ANALYZE " : "EXPLAIN ");
  if (s->explain && s->explain_json) puts_(b, "(FORMAT JSON) ");
  switch (s->kind) {
    case SQL_STMT_SELECT: put_select(b, s->u.select, flags); break;
    case SQL_STMT_UPSERT: {
      const sql_upsert *u = s->u.upsert;
      puts_(b, "UPSERT ");
      put_hint(b, u->hint);
      puts_(b, "INTO ");
      put_ident(b, u->table);
      if (u->cols) {
        puts_(b, " ");
        put_colnames(b, u->cols);
      }
      if (u->select) {
        puts_(b, " ");
        put_select(b, u->select, flags);
      } else {
        puts_(b, " VALUES ");
        put_list(b, u->rows, flags);
      }
      break;
    }
    case SQL_STMT_DELETE: {
      const sql_delete *d = s->u.del;
      puts_(b, "DELETE ");
      put_hint(b, d->hint);
      puts_(b, "FROM ");
      put_ident(b, d->table);
      if (d->dyn) {
        puts_(b, " ");
        put_colnames(b, d->dyn);
      }
      if (d->where) {
        puts_(b, " WHERE ");
        put_expr(b, d->where, 0, flags);
      }
      if (d->limit) {
        puts_(b, " LIMIT ");
        put_expr(b, d->limit, 0, flags);
      }
      break;
    }
    case SQL_STMT_CREATE_TABLE: put_create_table(b, s->u.create_table, flags); break;
    case SQL_STMT_CREATE_INDEX: {
      const sql_create_index *ci = s->u.create_index;
      puts_(b, "CREATE INDEX ");
      if (ci->if_not_exists) puts_(b, "IF NOT EXISTS ");
      put_ident(b, ci->name);
      puts_(b, " ON ");
      put_ident(b, ci->table);
      puts_(b, " (");
      put_order(b, ci->keys, flags);
      puts_(b, ")");
      if (ci->include) {
        puts_(b, " INCLUDE ");
        put_colnames(b, ci->include);
      }
      put_options(b, ci->opts, flags);
      break;
    }
    case SQL_STMT_CREATE_VIEW: {
      const sql_create_view *v = s->u.create_view;
      puts_(b, v->if_not_exists ? "CREATE VIEW IF NOT EXISTS " : "CREATE VIEW ");
      put_ident(b, v->name);
      if (v->cols) {
        puts_(b, " (");
        put_coldefs(b, v->cols);
        puts_(b, ")");
      }
      puts_(b, " AS ");
      put_select(b, v->select, flags);
      break;
    }
    case SQL_STMT_DROP_TABLE:
    case SQL_STMT_DROP_INDEX:
    case SQL_STMT_DROP_VIEW:
    case SQL_STMT_CHECK_INDEX: {
      const sql_drop *d = s->u.drop;
      if (s->kind == SQL_STMT_DROP_TABLE) puts_(b, "DROP TABLE ");
      else if (s->kind == SQL_STMT_DROP_VIEW) puts_(b, "DROP VIEW ");
      else if (s->kind == SQL_STMT_DROP_INDEX) puts_(b, "DROP INDEX ");
      else puts_(b, "CHECK INDEX ");
      if (d->if_exists) puts_(b, "IF EXISTS ");
      put_ident(b, d->name);
      if (d->table) {
        puts_(b, " ON ");
        put_ident(b, d->table);
      }
      if (d->cascade) puts_(b, " CASCADE");
      break;
    }
    case SQL_STMT_ALTER_TABLE: {
      const sql_alter_table *a = s->u.alter;
      puts_(b, a->view ? "ALTER VIEW " : "ALTER TABLE ");
      put_ident(b, a->name);
      if (a->action == SQL_ALTER_ADD) {
        puts_(b, a->if_flag ? " ADD IF NOT EXISTS " : " ADD ");
        put_coldefs(b, a->add);
      } else if (a->action == SQL_ALTER_DROP_COLUMN) {
        puts_(b, a->if_flag ? " DROP COLUMN IF EXISTS " : " DROP COLUMN ");
        for (int i = 0; i < a->drop->n; i++) {
          if (i) puts_(b, ", ");
          put_colname(b, &a->drop->a[i]);
        }
      } else {
        puts_(b, " SET");
        put_options(b, a->opts, flags);
      }
      break;
    }
    case SQL_STMT_CREATE_SEQUENCE: put_create_sequence(b, s->u.create_sequence, flags); break;
    case SQL_STMT_DROP_SEQUENCE:
      puts_(b, s->u.drop->if_exists ? "DROP SEQUENCE IF EXISTS " : "DROP SEQUENCE ");
      put_ident(b, s->u.drop->name);
      break;
    case SQL_STMT_BEGIN: puts_(b, "BEGIN"); break;
    case SQL_STMT_COMMIT: puts_(b, "COMMIT"); break;
    case SQL_STMT_ROLLBACK: puts_(b, "ROLLBACK"); break;
    default: break;
  }
}

/* Finishes a buffer: its text, or NULL (freed) after an allocation failure. */
static char *finish(buf *b) {
  if (!b->oom && !b->p) put(b, "", 0);
  if (b->oom) {
    free(b->p);
    return NULL;
  }
  return b->p;
}

char *sql_print_stmt(const sql_stmt *s, unsigned flags) {
  buf b = {0};
  if (s) put_stmt(&b, s, flags);
  return finish(&b);
}

char *sql_print_expr(const sql_expr *e, unsigned flags) {
  buf b = {0};
  put_expr(&b, e, 0, flags);
  return finish(&b);
}

char *sql_print_ident(const char *name) {
  buf b = {0};
  put_ident(&b, name);
  return finish(&b);
}
