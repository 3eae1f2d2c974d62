/*
** sql/parser.h: parse one SQL statement of Rowan's dialect into an AST (sql/ast.h).
**
** sql_parse() is the one entry point: it tokenizes (sql/token.h), feeds the Lemon parser
** generated from sql/parse.y, and returns one statement plus the unparsed tail, so a caller
** (prepare) can run a script statement by statement. A syntax error is described in an
** sql_error with its byte offset, 1-based line and column (column counted in characters of
** that line, UTF-8 aware) and a message naming the token ("near \"FROM\"") or the end of
** input, with the tokens the grammar expected where it can tell.
**
** Limits: parentheses may nest SQL_MAX_PAREN_DEPTH deep and an expression tree may be
** SQL_MAX_EXPR_HEIGHT tall; beyond that the statement is rejected with SQL_ERR_DEPTH, never
** a stack overflow. Parameter numbers (?NNN) go up to SQL_MAX_PARAM.
**
** Not here: binding names against the catalog, type checks (planner/).
*/
#ifndef ROWAN_SQL_PARSER_H
#define ROWAN_SQL_PARSER_H

#include <stddef.h>
#include <stdint.h>

#include "sql/ast.h"

#define SQL_MAX_PAREN_DEPTH 200  /* nested parentheses in one statement */
#define SQL_MAX_EXPR_HEIGHT 1000 /* height of one expression tree */
#define SQL_MAX_PARAM 32767      /* largest ?NNN */
#define SQL_ERRMSG_MAX 256       /* bytes of sql_error.message, NUL included */

/* ORDER SQL_STATUS: status codes of sql_parse(). */
enum sql_status {
  SQL_OK = 0,         /* parsed (or nothing left to parse) */
  SQL_ERR_SYNTAX = 1, /* a syntax error: the grammar rejected a token */
  SQL_ERR_TOKEN = 2,  /* a bad token: unterminated string, quoted name or comment,
                         malformed number, stray character, parameter out of range */
  SQL_ERR_DEPTH = 3,  /* nesting beyond SQL_MAX_PAREN_DEPTH / SQL_MAX_EXPR_HEIGHT */
  SQL_ERR_NOMEM = 4,  /* an allocation failed */
  SQL_ERR_RANGE = 5   /* a number in the grammar (type length) is out of range */
};

/* Where and why a parse failed. */
typedef struct sql_error {
  int code;                      /* enum sql_status; SQL_OK when there is no error */
  char message[SQL_ERRMSG_MAX];  /* e.g. syntax error near "FROM" at line 1, column 8 */
  size_t offset;                 /* byte offset of the offending token in the text */
  int line;                      /* 1-based line of that token */
  int column;                    /* 1-based column, in characters of the line */
} sql_error;

/* Parses the first statement of sql[0..len) (need not be NUL-terminated).
**  - out: receives the statement (caller frees with sql_stmt_free), or NULL when the text
**    holds nothing but whitespace, comments and ';' (then SQL_OK and *tail = sql + len).
**  - tail: if not NULL, receives a pointer just past the statement and its ';' (or sql +
**    len), where the next statement starts; on an error it points at the end of input.
**  - err: if not NULL, filled in (code SQL_OK on success). Offsets in err and in the tree
**    are relative to sql.
** Returns SQL_OK or an error code of enum sql_status; on error *out is NULL and nothing
** is leaked. */
int sql_parse(const char *sql, size_t len, sql_stmt **out, const char **tail,
              sql_error *err);

/* The name of a status code ("SQL_ERR_SYNTAX"); never NULL. */
const char *sql_status_name(int code);

#endif /* ROWAN_SQL_PARSER_H */
