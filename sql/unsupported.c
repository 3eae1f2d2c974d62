/*
** sql/unsupported.c: what to say when a syntax error is a statement or clause that Rowan's
** dialect does not have (INSERT, UPDATE, ALTER INDEX, ALTER VIEW SET, ALTER TABLE RENAME, WITH
** RECURSIVE, Oracle's MINUS, window functions, ...). The grammar rejects them like any other
** bad token; after the rejection the driver (sql/parser.c, sql_pc_syntax_error) calls
** sql_unsupported(), which re-reads the statement's tokens up to the rejected one and, when
** they match one of the patterns below, gives the message that names the missing feature
** and what to use instead (Phoenix's alternatives: UPSERT for INSERT and UPDATE, drop and
** recreate for what ALTER TABLE cannot do), and the position of the construct (the INSERT,
** the WITH of WITH RECURSIVE) for the error's line and column. Derived tables, WITH, the set
** operations, subqueries in expressions and joins parse (sql/parse.y); what they cannot do
** yet (NATURAL joins; RIGHT and FULL joins with USING; some subquery forms) the binder
** refuses.
**
** Many of these words are not keywords of the dialect, so the grammar can take some of them
** as names: in "FROM a MINUS SELECT" MINUS is a's alias and the error comes at SELECT. The
** patterns look one token back for that reason. Nothing here changes what parses: it runs only after the
** grammar has refused a token, and only chooses the message.
**
** Not here: the grammar (sql/parse.y), the driver and the generic message (sql/parser.c).
*/
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "sql/parse_int.h"
#include "sql/token.h"

/* A token of the statement as this file looks at it. */
typedef struct tok {
  int type;       /* TK_* code */
  const char *z;  /* its text, inside the statement */
  size_t n;       /* its length */
} tok;

#define LOOKBACK 4 /* tokens kept before the rejected one */

/* True when t is the bare (unquoted) word w, in any case. */
static bool is_word(const tok *t, const char *w) {
  size_t n = strlen(w);
  return t && t->n == n && strncasecmp(t->z, w, n) == 0;
}

/* MINUS (Oracle's EXCEPT), which is a name to the grammar. */
static bool is_minus(const tok *t) {
  return t && t->type == TK_ID && is_word(t, "MINUS");
}

/* The TK_* code of the first token after p in sql[..len) that is not space or a comment,
** or 0 at the end. */
static int next_type(const char *p, const char *sql, size_t len) {
  const char *end = sql + len;
  while (p < end) {
    int type;
    size_t n = sql_next_token(p, end, &type);
    if (type != TK_SPACE && type != TK_COMMENT) return type;
    p += n;
  }
  return 0;
}

/* Copy t's text, upper-cased, into out (size cap). */
static void upper(const tok *t, char *out, size_t cap) {
  size_t n = t->n < cap - 1 ? t->n : cap - 1;
  for (size_t i = 0; i < n; i++) {
    char c = t->z[i];
    out[i] = (c >= 'a' && c <= 'z') ? (char)(c - 'a' + 'A') : c;
  }
  out[n] = 0;
}

/* The statement-level patterns: e is the rejected token; verb is NULL when e is the first
** token of the statement (after EXPLAIN [ANALYZE]), or the CREATE or DROP just before it.
** sql[0..len) is the text (ALTER looks at the word after it). */
static bool leading(const tok *e, const tok *verb, char *msg, size_t cap, size_t *off,
                    const char *sql, size_t len) {
  if (e->type != TK_ID) return false;
  const char *m = NULL;
  if (!verb) {
    if (is_word(e, "INSERT")) m = "INSERT is not supported: use UPSERT";
    else if (is_word(e, "UPDATE"))
      m = "UPDATE is not supported: use UPSERT ... SELECT or UPSERT with the key";
    else if (is_word(e, "REPLACE") || is_word(e, "MERGE")) m = "%s is not supported: use UPSERT";
    else if (is_word(e, "TRUNCATE")) m = "TRUNCATE is not supported: use DELETE FROM table";
    else if (is_word(e, "SHOW") || is_word(e, "DESCRIBE"))
      m = "%s is not supported: in the rowan shell, .tables and .schema list the tables and "
          "their columns";
    else return false;
  } else if (verb->type == TK_CREATE) {
    if (is_word(e, "UNIQUE")) m = "unique indexes are not supported";
    else if (is_word(e, "LOCAL"))
      m = "local indexes are not supported: CREATE INDEX makes a global index";
    else if (is_word(e, "SCHEMA") || is_word(e, "FUNCTION") || is_word(e, "TRIGGER") ||
             is_word(e, "DATABASE"))
      m = "CREATE %s is not supported: Rowan has CREATE TABLE, CREATE INDEX, CREATE VIEW and "
          "CREATE SEQUENCE";
    else return false;
  } else if (verb->type == TK_DROP) {
    if (is_word(e, "SCHEMA") || is_word(e, "FUNCTION") || is_word(e, "TRIGGER") ||
        is_word(e, "DATABASE"))
      m = "DROP %s is not supported: Rowan has DROP TABLE, DROP INDEX, DROP VIEW and DROP "
          "SEQUENCE";
    else return false;
  } else {
    return false;
  }
  char w[24];
  upper(e, w, sizeof w);
  snprintf(msg, cap, m, w);
  *off = (size_t)((verb ? verb->z : e->z) - sql);
  return true;
}

bool sql_unsupported(const char *sql, size_t len, size_t first, size_t err_off, char *msg,
                     size_t cap, size_t *off) {
  if (err_off >= len || first > err_off || cap == 0) return false;
  tok back[LOOKBACK]; /* back[0] is the token just before the rejected one */
  int nback = 0, ntok = 0;
  tok verb = {0, NULL, 0};      /* CREATE or DROP when the statement starts with it */
  int lead = 0;                 /* tokens of EXPLAIN [ANALYZE] before the statement */
  int first_type = 0;           /* TK_* of the statement's first token after those */
  int since_limit = -1;         /* tokens after the last LIMIT; -1: none */
  int limit_depth = 0;          /* parentheses opened since that LIMIT and not closed */
  const char *p = sql + first, *end = sql + len;
  tok e = {0, NULL, 0};
  while (p < end) {
    int type;
    size_t n = sql_next_token(p, end, &type);
    if (type == TK_SPACE || type == TK_COMMENT || type == TK_HINT) {
      p += n;
      continue;
    }
    tok t = {type, p, n};
    if ((size_t)(p - sql) >= err_off) {
      e = t;
      break;
    }
    if (ntok == lead && (type == TK_EXPLAIN || (type == TK_ANALYZE && lead == 1)))
      lead++;
    else if (ntok == lead && (type == TK_CREATE || type == TK_DROP))
      verb = t;
    if (ntok == lead) first_type = type;
    if (type == TK_LIMIT) {
      since_limit = 0;
      limit_depth = 0;
    } else if (since_limit >= 0) {
      since_limit++;
      if (type == TK_LP) limit_depth++;
      else if (type == TK_RP) limit_depth--;
    }
    memmove(back + 1, back, sizeof back[0] * (LOOKBACK - 1));
    back[0] = t;
    if (nback < LOOKBACK) nback++;
    ntok++;
    p += n;
  }
  if (!e.z) return false;
  const tok *b0 = nback > 0 ? &back[0] : NULL;
  const tok *b1 = nback > 1 ? &back[1] : NULL;
  const tok *b2 = nback > 2 ? &back[2] : NULL;

  /* Statements: INSERT ..., CREATE VIEW ... (the rejected token starts the statement). */
  if (ntok == lead && leading(&e, NULL, msg, cap, off, sql, len)) return true;
  if (verb.z && ntok == lead + 1 && leading(&e, &verb, msg, cap, off, sql, len)) return true;

  /* ALTER of something else than a table (ALTER is a keyword: the word after it is the one
  ** refused), and ALTER TABLE t with another action than ADD, DROP COLUMN and SET. */
  if (first_type == TK_ALTER && ntok == lead + 1) {
    char w[24];
    upper(&e, w, sizeof w);
    if (e.type == TK_INDEX)
      snprintf(msg, cap, "ALTER INDEX is not supported: drop and recreate the index");
    else
      snprintf(msg, cap, "ALTER %s is not supported: ALTER TABLE is (ADD, DROP COLUMN, SET)", w);
    *off = (size_t)(b0->z - sql);
    return true;
  }
  if (first_type == TK_ALTER && ntok == lead + 3 && b1 && b1->type == TK_VIEW) {
    char w[24];
    upper(&e, w, sizeof w);
    snprintf(msg, cap, "ALTER VIEW ... %s is not supported: ALTER VIEW takes ADD and DROP "
             "COLUMN", w);
    *off = (size_t)(e.z - sql);
    return true;
  }
  if (first_type == TK_ALTER && ntok == lead + 3 && b1 && b1->type == TK_TABLE &&
      (e.type == TK_ID || e.type == TK_ALTER)) {
    char w[24];
    upper(&e, w, sizeof w);
    snprintf(msg, cap, "ALTER TABLE ... %s is not supported: ALTER TABLE takes ADD, DROP COLUMN "
             "and SET", w);
    *off = (size_t)(e.z - sql);
    return true;
  }

  if (first_type == TK_ALTER && b0 && b0->type == TK_ADD &&
      (e.type == TK_CONSTRAINT || e.type == TK_PRIMARY)) {
    snprintf(msg, cap, "ALTER TABLE ... ADD %s is not supported: the PRIMARY KEY is the row key, "
             "fixed when the table is created", e.type == TK_PRIMARY ? "PRIMARY KEY" : "CONSTRAINT");
    *off = (size_t)(e.z - sql);
    return true;
  }

  /* WITH RECURSIVE name ...: RECURSIVE was taken as the first item's name. */
  if (b0 && b1 && b1->type == TK_WITH && b0->type == TK_ID && is_word(b0, "RECURSIVE")) {
    snprintf(msg, cap, "WITH RECURSIVE is not supported: a WITH item may use only the items "
             "before it");
    *off = (size_t)(b1->z - sql);
    return true;
  }
  /* Oracle's MINUS, taken as an alias: the error comes at the SELECT after it. */
  if (is_minus(b0) && (e.type == TK_SELECT || e.type == TK_ALL || e.type == TK_DISTINCT)) {
    snprintf(msg, cap, "MINUS is not supported: use EXCEPT");
    *off = (size_t)(b0->z - sql);
    return true;
  }
  /* UPSERT INTO t (SELECT ...), which needs no parentheses (subqueries in expressions and
  ** in FROM parse). */
  if (e.type == TK_SELECT && b0 && b0->type == TK_LP && first_type == TK_UPSERT && b1 && b2 &&
      b2->type == TK_INTO) {
    snprintf(msg, cap, "UPSERT INTO table SELECT ... takes the SELECT without parentheses");
    *off = (size_t)(e.z - sql);
    return true;
  }
  /* UPSERT INTO t (k, v) (SELECT ...): the grammar refuses the '(' after the column list. */
  if (e.type == TK_LP && first_type == TK_UPSERT && b0 && b0->type == TK_RP &&
      next_type(e.z + e.n, sql, len) == TK_SELECT) {
    snprintf(msg, cap, "UPSERT INTO table SELECT ... takes the SELECT without parentheses");
    *off = (size_t)(e.z - sql);
    return true;
  }
  /* Window functions: f(...) OVER (...), OVER taken as an alias. */
  if (e.type == TK_LP && b0 && b0->type == TK_ID && is_word(b0, "OVER")) {
    snprintf(msg, cap, "window functions (OVER) are not supported");
    *off = (size_t)(b0->z - sql);
    return true;
  }
  /* MySQL's LIMIT offset, count. */
  if (e.type == TK_COMMA && since_limit >= 1 && limit_depth == 0) {
    snprintf(msg, cap, "LIMIT offset, count is not supported: use LIMIT count OFFSET offset");
    *off = (size_t)(e.z - sql);
    return true;
  }
  /* SQL Server's SELECT TOP n. */
  if (b0 && b1 && is_word(b0, "TOP") && b0->type == TK_ID &&
      (b1->type == TK_SELECT || b1->type == TK_DISTINCT || b1->type == TK_ALL)) {
    snprintf(msg, cap, "TOP is not supported: use LIMIT");
    *off = (size_t)(b0->z - sql);
    return true;
  }
  /* a == b: rejected at its second '=', or at its first after another comparison
     (a = b == c: comparisons do not chain) */
  if (e.type == TK_EQ && b0 && b0->type == TK_EQ && b0->z + b0->n == e.z) {
    snprintf(msg, cap, "== is not an operator: use = to compare");
    *off = (size_t)(b0->z - sql);
    return true;
  }
  if (e.type == TK_EQ && (size_t)(e.z + e.n - sql) < len && e.z[e.n] == '=') {
    snprintf(msg, cap, "== is not an operator: use = to compare");
    *off = (size_t)(e.z - sql);
    return true;
  }
  /* Generated keys. */
  if (e.type == TK_ID && (is_word(&e, "AUTO_INCREMENT") || is_word(&e, "AUTOINCREMENT") ||
                          is_word(&e, "IDENTITY") || is_word(&e, "SERIAL"))) {
    char w[24];
    upper(&e, w, sizeof w);
    snprintf(msg, cap, "%s is not supported: the primary key is the row key, and an UPSERT "
             "gives its values", w);
    *off = (size_t)(e.z - sql);
    return true;
  }
  /* UPSERT ... VALUES (...) ON DUPLICATE KEY ... (Phoenix's atomic upsert). */
  if (e.type == TK_ON && first_type == TK_UPSERT && b0 && b0->type == TK_RP) {
    snprintf(msg, cap, "ON DUPLICATE KEY is not supported: an UPSERT always writes the row");
    *off = (size_t)(e.z - sql);
    return true;
  }
  return false;
}
