/*
** sql/parse_sequence.c: the grammar actions of Phoenix's sequence statements and
** expressions (sql/parse.y "Sequences"): CREATE SEQUENCE with its option words, and NEXT
** VALUE FOR / CURRENT VALUE FOR, whose three words the driver (sql/parser.c) merges into one
** token with sql_seq_value_for so that NEXT, CURRENT and VALUE stay usable as names.
**
** Not here: which option words exist and what their values may be (exec/ddl_sequence.c),
** the sequences themselves (catalog/cat_sequence.c).
*/
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sql/parse_int.h"
#include "sql/token.h"

sql_stmt *sql_pc_create_sequence(sql_pctx *ctx, sql_token kw, int if_not_exists,
                                 sql_name name, sql_option_list *opts) {
  sql_stmt *s = sql_stmt_new(SQL_STMT_CREATE_SEQUENCE, sql_pc_off(ctx, kw));
  sql_create_sequence *c = calloc(1, sizeof *c);
  if (!s || !c || !name.z) {
    free(s);
    free(c);
    free(name.z);
    sql_option_list_free(opts);
    return sql_pc_nomem(ctx);
  }
  c->name = name.z;
  c->name_off = name.off;
  c->if_not_exists = if_not_exists != 0;
  c->opts = opts;
  s->u.create_sequence = c;
  return s;
}

sql_option_list *sql_pc_seqopt(sql_pctx *ctx, sql_option_list *l, sql_name word,
                               sql_expr *value) {
  /* the list takes no NULL value: a bare word (CYCLE) holds a stand-in until it is in */
  bool bare = !value;
  if (bare) value = sql_expr_literal(SQL_LIT_NULL, "NULL", 4, word.off);
  sql_option_list *r = sql_option_list_append(l, NULL, word.z, value, word.off);
  if (!r) return sql_pc_nomem(ctx);
  if (bare) {
    sql_expr_free(r->a[r->n - 1].value);
    r->a[r->n - 1].value = NULL;
  }
  return r;
}

sql_expr *sql_pc_seqval(sql_pctx *ctx, sql_token kw, sql_name name, int op) {
  return sql_pc_expr(ctx, sql_expr_sequence(op, name.z, sql_pc_off(ctx, kw)));
}

/* The next token after p that is not space or a comment: its start in *at, its length. */
static size_t next_real(const char *p, const char *end, const char **at, int *type) {
  while (p < end) {
    size_t n = sql_next_token(p, end, type);
    if (*type != TK_SPACE && *type != TK_COMMENT) {
      *at = p;
      return n;
    }
    p += n;
  }
  *type = 0;
  return 0;
}

/* Is the token at p[0..n) of type `type` the bare word w (any case)? */
static bool bare(const char *p, size_t n, int type, const char *w) {
  return type == TK_ID && n == strlen(w) && strncasecmp(p, w, n) == 0;
}

size_t sql_seq_value_for(const char *p, size_t n, const char *end, int *type) {
  int first = bare(p, n, TK_ID, "NEXT") ? TK_SEQNEXT
              : bare(p, n, TK_ID, "CURRENT") ? TK_SEQCURRENT : 0;
  if (!first) return 0;
  const char *v, *f;
  int tv, tf;
  size_t nv = next_real(p + n, end, &v, &tv);
  if (!nv || !bare(v, nv, tv, "VALUE")) return 0;
  size_t nf = next_real(v + nv, end, &f, &tf);
  if (!nf || (tf != TK_FOR && !bare(f, nf, tf, "FOR"))) return 0; /* FOR: a keyword of AS OF */
  *type = first;
  return (size_t)(f + nf - p);
}
