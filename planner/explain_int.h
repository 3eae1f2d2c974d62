/*
** planner/explain_int.h: the JSON side of EXPLAIN (FORMAT JSON), shared by planner/explain.c
** (which says, next to each text line it makes, what the line holds) and
** planner/explain_json.c (which writes it as JSON). docs/EXPLAIN.md "EXPLAIN (FORMAT JSON)"
** describes the document: {"statement": ..., "analyze": ..., "plan": [node, ...]} with one
** node per text line, in the same order, each node an object whose "step" names the line and
** whose other members hold the line's figures and texts.
**
** Use: xj_node opens the node of the next line, xj_* add its members (nested objects and
** arrays with xj_obj / xj_arr and xj_end), and explain.c's line() closes it (xj_line). With
** the builder off (text EXPLAIN) every call returns at once. Also the text buffer both
** explain.c and planner/expr_print.c write with (plan_pbuf). Not a public header.
*/
#ifndef ROWAN_PLANNER_EXPLAIN_INT_H
#define ROWAN_PLANNER_EXPLAIN_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define XJ_DEPTH 8 /* nesting inside one node */

typedef struct xjson {
  bool on;                 /* building JSON (EXPLAIN (FORMAT JSON)) */
  char *p;                 /* the document so far (malloc) */
  size_t n, cap;           /* its length / bytes allocated */
  int lvl;                 /* nesting: 0 outside a node, 1 in a node, more in its members */
  bool first[XJ_DEPTH];    /* per level: no member written yet */
  bool arr[XJ_DEPTH];      /* per level: an array (elements have no key) */
  int nodes;               /* nodes written */
  bool oom;                /* an allocation failed */
} xjson;

/* Start the document: {"statement": stmt, "analyze": analyze, "plan": [ */
void xj_begin(xjson *j, const char *stmt, bool analyze);
/* Open the node of the next line: {"step": step */
void xj_node(xjson *j, const char *step);
/* Members of the open node (or of the object opened with xj_obj); in an array (xj_arr) the
** key is ignored. xj_str with v NULL writes nothing. */
void xj_str(xjson *j, const char *key, const char *v);
void xj_uint(xjson *j, const char *key, uint64_t v);
void xj_int(xjson *j, const char *key, int64_t v);
void xj_dbl(xjson *j, const char *key, double v); /* one decimal, as the text prints it */
void xj_bool(xjson *j, const char *key, bool v);
void xj_obj(xjson *j, const char *key);
void xj_arr(xjson *j, const char *key);
void xj_end(xjson *j);
/* The line `text` was made: close its node (one without xj_node gets {"step": "?", "text":
** text}, which tests/planner/test_explain_json.c refuses). */
void xj_line(xjson *j, const char *text);
/* End the document; the malloc'ed text (the caller frees it), or NULL when out of memory. */
char *xj_finish(xjson *j);

/* A text buffer of cap bytes at p that keeps counting past its end (n, the full length), and
** the names PX_AGG slots print by (sel's aggregate call texts, or none): EXPLAIN's lines and
** plan_expr_print write through it (planner/expr_print.c). */
struct plan_select;
struct plan_expr;
typedef struct plan_pbuf {
  char *p;                       /* output */
  size_t cap;                    /* its size */
  size_t n;                      /* full length so far */
  const struct plan_select *sel; /* names PX_AGG slots by their call text, or NULL */
} plan_pbuf;
void plan_pbuf_put(plan_pbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* e as SQL text, in parentheses when paren and e is an operator (names: the column names by
** slot, or NULL for $slot). */
void plan_pbuf_expr(plan_pbuf *b, const struct plan_expr *e, const char *const *names,
                    bool paren);

#endif /* ROWAN_PLANNER_EXPLAIN_INT_H */
