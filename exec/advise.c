/*
** exec/advise.c: the row-key advisor (contract in exec/advise.h): the query file's
** statements parsed and bound one by one (exec_prepare), each checked to be a SELECT from
** the table without parameters, with errors placed at the source's line and column; the
** model of planner/advise.h run over them; the real plan of each query under the current
** key, for its EXPLAIN lines; and the advice as text: the queries, the candidate keys
** ranked, the first choice, the candidate indexes, and per key (and per index) and query
** the plan kind, rows, bytes and seeks.
**
** Not here: the model (planner/advise.c), reading the file or printing (the shell's
** .advise, cli/dot_more.c; include/rowan.h rowan_advise).
*/
#include <ctype.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/advise.h"
#include "exec/engine_int.h"
#include "planner/advise.h"
#include "planner/plan_select.h"
#include "planner/skip_prefix.h"

/* ---- Text ---------------------------------------------------------------------------- */
typedef struct sbuf {
  char *p;      /* text (malloc) */
  size_t n;     /* length */
  size_t cap;   /* allocated */
  bool oom;     /* an allocation failed */
} sbuf;

static void put(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(sbuf *b, const char *fmt, ...) {
  if (b->oom) return;
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(b->p ? b->p + b->n : NULL, b->p ? b->cap - b->n : 0, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if (b->p && b->n + (size_t)n < b->cap) {
      b->n += (size_t)n;
      return;
    }
    size_t nc = b->cap ? b->cap * 2 : 4096;
    while (nc < b->n + (size_t)n + 1) nc *= 2;
    char *q = realloc(b->p, nc);
    if (!q) {
      b->oom = true;
      return;
    }
    b->p = q;
    b->cap = nc;
  }
}



/* Line and column (1-based, columns in bytes) of byte offset off of text. */
static void line_col(const char *text, size_t off, int *line, int *col) {
  *line = 1;
  *col = 1;
  for (size_t i = 0; i < off && text[i]; i++) {
    if (text[i] == '\n') {
      ++*line;
      *col = 1;
    } else {
      ++*col;
    }
  }
}

/* Offset of the first token at or after p (whitespace and -- and block comments skipped). */
static size_t skip_space(const char *sql, size_t len, size_t p) {
  while (p < len) {
    if (isspace((unsigned char)sql[p])) p++;
    else if (p + 1 < len && sql[p] == '-' && sql[p + 1] == '-')
      while (p < len && sql[p] != '\n') p++;
    else if (p + 1 < len && sql[p] == '/' && sql[p + 1] == '*') {
      const char *e = p + 2 < len ? strstr(sql + p + 2, "*/") : NULL;
      p = e && (size_t)(e - sql) < len ? (size_t)(e - sql) + 2 : len;
    } else {
      break;
    }
  }
  return p;
}

/* err's message with its " at line L, column C" (relative to the statement) made relative
** to the whole source: the statement starts at byte `start` of sql. */
static int rebase_error(exec_error *err, int code, const char *sql, size_t start,
                        const char *source, int stmt_offset) {
  char head[EXEC_ERRMSG_MAX], tail[EXEC_ERRMSG_MAX];
  snprintf(head, sizeof head, "%s", err->msg);
  tail[0] = 0;
  char *at = strstr(head, " at line ");
  if (at) { /* drop " at line L, column C" */
    char *q = at + 9;
    while (isdigit((unsigned char)*q)) q++;
    if (strncmp(q, ", column ", 9) == 0) {
      q += 9;
      while (isdigit((unsigned char)*q)) q++;
      snprintf(tail, sizeof tail, "%s", q);
      *at = 0;
    }
  }
  int line, col;
  size_t off = start + (size_t)(stmt_offset >= 0 ? stmt_offset : 0);
  line_col(sql, off, &line, &col);
  return exec_fail(err, code, (int)off, "%s: %s at line %d, column %d%s", source, head, line,
                   col, tail);
}

/* ---- The queries --------------------------------------------------------------------- */
typedef struct query {
  exec_stmt *st;  /* the prepared statement (owned) */
  size_t start;   /* byte offset of its first token in the source */
  int line;       /* its line */
} query;

typedef struct qlist {
  query *v;       /* malloc */
  int n, cap;     /* count / room */
} qlist;

static void qlist_free(qlist *l) {
  for (int i = 0; i < l->n; i++) exec_finalize(l->v[i].st);
  free(l->v);
  memset(l, 0, sizeof *l);
}

static int read_queries(exec_session *s, const cat_table *t, const char *sql, size_t len,
                        const char *src, qlist *l, exec_error *err) {
  size_t p = 0;
  for (;;) {
    p = skip_space(sql, len, p);
    if (p >= len) break;
    exec_stmt *st = NULL;
    const char *tail = NULL;
    int rc = exec_prepare(s, sql + p, len - p, &st, &tail, err);
    if (rc) return rebase_error(err, rc, sql, p, src, err->offset);
    if (!st) break;
    int line, col;
    line_col(sql, p, &line, &col);
    const plan_bound *b = &st->bound;
    const char *why = NULL;
    char whybuf[256];
    if (b->kind != SQL_STMT_SELECT || !b->select) {
      why = "is not a SELECT: the advisor judges queries, and this file may hold only SELECT "
            "statements";
    } else if (b->analyze) {
      why = "is an EXPLAIN ANALYZE: the advisor runs nothing; give the SELECT alone";
    } else if (b->select->n_from == 0 && b->select->table && b->select->table != t &&
               strcmp(b->select->table->name, t->name) == 0) {
      snprintf(whybuf, sizeof whybuf, "reads a view with columns of its own over %s: the "
               "advisor judges queries of the table's columns (and of views without columns)",
               t->name); /* the binder's copy of the table with the view's columns */
      why = whybuf;
    } else if (b->select->n_from > 0) {
      snprintf(whybuf, sizeof whybuf, "reads %s: the advisor judges queries of %s alone "
               "(the join's plan of each table is the one a query of it alone gets)",
               b->select->n_from > 1 ? "several tables or subqueries (a join)"
                                     : "a subquery or a set operation", t->name);
      why = whybuf;
    } else if (b->select->table && b->select->table->n_dynamic) {
      why = "reads dynamic columns (FROM table (family.column TYPE)): the advisor judges "
            "indexes on declared columns, and an index cannot be on a dynamic column";
    } else if (b->select->table != t) {
      snprintf(whybuf, sizeof whybuf, "reads %s, not %s: every query must read the table advised",
               b->select->table ? b->select->table->name : "no table", t->name);
      why = whybuf;
    } else if (b->n_params > 0) {
      why = "has parameters (?): the advisor needs literal values to count the rows they select";
    }
    if (why) {
      exec_finalize(st);
      return exec_fail(err, EXEC_ERROR, (int)p, "%s: the statement at line %d, column %d %s", src,
                       line, col, why);
    }
    if (l->n == l->cap) {
      int nc = l->cap ? l->cap * 2 : 16;
      query *v = realloc(l->v, (size_t)nc * sizeof *v);
      if (!v) {
        exec_finalize(st);
        return exec_fail(err, EXEC_NOMEM, -1, "out of memory");
      }
      l->v = v;
      l->cap = nc;
    }
    l->v[l->n++] = (query){st, p, line};
    p = tail ? (size_t)(tail - sql) : len;
  }
  if (l->n == 0) return exec_fail(err, EXEC_ERROR, -1, "%s holds no query to judge", src);
  return EXEC_OK;
}

/* The statement's text on one line, spaces collapsed, cut at max bytes ("..." added). */
static void one_line(const char *sql, size_t n, char *out, size_t max) {
  size_t o = 0;
  bool sp = false, cut = false;
  for (size_t i = 0; i < n && sql[i]; i++) {
    char c = sql[i];
    if (isspace((unsigned char)c)) {
      sp = o > 0;
      continue;
    }
    if (o + 6 > max) { /* room for a space, the byte, "..." and the NUL */
      cut = true;
      break;
    }
    if (sp) out[o++] = ' ';
    sp = false;
    out[o++] = c;
  }
  while (o > 0 && out[o - 1] == ';') o--;
  if (cut) {
    memcpy(out + o, "...", 3);
    o += 3;
  }
  out[o] = 0;
}

/* ---- EXPLAIN of the current key ------------------------------------------------------- */
typedef struct explained {
  char *first;    /* EXPLAIN's first line (malloc) */
  char *estimate; /* its ESTIMATE line, trimmed (malloc) */
} explained;

static int explain_current(exec_session *s, const exec_stmt *st, explained *x, exec_error *err) {
  plan_arena A;
  plan_arena_init(&A);
  plan_query q;
  char msg[EXEC_ERRMSG_MAX];
  int rc = plan_query_build(&s->be, st->bound.select, NULL, 0, &A, &q, msg, sizeof msg);
  char **lines = NULL;
  int n = 0;
  if (!rc) rc = plan_explain(&st->bound, &q, NULL, NULL, &A, &lines, &n);
  if (!rc) {
    for (int i = 0; i < n; i++) {
      const char *l = lines[i];
      while (*l == ' ') l++;
      if (!x->first && *l) x->first = strdup(l);
      if (strncmp(l, "ESTIMATE:", 9) == 0 && !x->estimate) x->estimate = strdup(l);
    }
  }
  plan_query_free(&q);
  plan_arena_free(&A);
  if (rc) return exec_fail(err, rc, -1, "%s", rc == EXEC_NOMEM ? "out of memory" : msg);
  return EXEC_OK;
}

/* ---- The advice ----------------------------------------------------------------------- */
static void plan_label(const plan_adv_est *e, char *buf, size_t cap) {
  const char *k = e->index && e->kind == PLAN_SCAN_POINT  ? "INDEX POINT LOOKUP"
                  : e->index && e->kind == PLAN_SCAN_SKIP ? "INDEX SKIP SCAN"
                  : e->index                              ? "INDEX RANGE SCAN"
                  : e->prefix_first                       ? "SKIP TO NEXT PREFIX"
                  : e->kind == PLAN_SCAN_PREFIX_SKIP      ? "SKIP SCAN ON EACH PREFIX"
                                                          : plan_scan_kind_name(e->kind);
  char extra[64] = "";
  if (e->kind == PLAN_SCAN_POINT || e->kind == PLAN_SCAN_SKIP)
    snprintf(extra, sizeof extra, " (%u %s)", e->n_ranges,
             e->kind == PLAN_SCAN_POINT ? (e->n_ranges == 1 ? "key" : "keys") : "ranges");
  char lk[48] = "";
  if (e->index) {
    char n[32];
    plan_grouped(e->lookups, n, sizeof n);
    if (e->lookups) snprintf(lk, sizeof lk, ", %s lookups", n);
    else snprintf(lk, sizeof lk, ", covered");
  }
  snprintf(buf, cap, "%s%s%s%s%s%s", k, extra, lk, e->reverse ? ", reverse" : "",
           e->limit_pushed ? ", LIMIT in scan" : "", e->sort ? ", then sort" : "");
}

/* The candidate indexes: total cost before and with each, the queries each serves. */
static void write_indexes(sbuf *b, const cat_table *t, const plan_advice *a, const char *key) {
  if (a->n_ix == 0) {
    put(b, "\nSecondary indexes: no query's WHERE bounds a non-key column by itself; none "
           "judged\n");
    return;
  }
  char before[32], after[32];
  plan_grouped((uint64_t)(a->cands[0].cost + 0.5), before, sizeof before);
  put(b, "\nSecondary indexes on one column, each added alone to PRIMARY KEY (%s) (the index "
         "rows each write adds are not counted):\n", key);
  for (int x = 0; x < a->n_ix; x++) {
    const plan_adv_index *ix = &a->ix[x];
    char name[300];
    snprintf(name, sizeof name, "INDEX ON (%s)", t->columns[ix->column].name);
    plan_grouped((uint64_t)(ix->cost + 0.5), after, sizeof after);
    put(b, "  %-28s cost %s -> %s; ", name, before, after);
    if (!ix->n_served) {
      put(b, "no query would use it (the table scan costs less)\n");
      continue;
    }
    put(b, "used by");
    int k = 0;
    for (int i = 0; i < a->n_queries; i++)
      if (ix->est[i].index)
        put(b, "%s Q%d%s", k++ ? "," : "", i + 1, ix->est[i].lookups ? "" : " (covered)");
    put(b, "\n");
  }
}

static void write_advice(sbuf *b, const cat_table *t, const plan_advice *a, const qlist *ql,
                         const char *src, const explained *x) {
  char r[32], by[32], sk[32], co[32], key[512];
  plan_grouped(a->table_rows, r, sizeof r);
  plan_human_bytes(a->table_bytes, by, sizeof by);
  put(b, "Row-key advice for %s: %d quer%s from %s\n", t->name, ql->n, ql->n == 1 ? "y" : "ies",
      src);
  plan_grouped(a->sampled, sk, sizeof sk);
  if (a->stride <= 1)
    put(b, "%s holds %s rows (%s); every row key counted in each key order (no store "
           "rewritten)\n", t->name, r, by);
  else
    put(b, "%s holds %s rows (%s); a sample of %s row keys (every %" PRIu64 "th) counted in "
           "each key order (no store rewritten)\n", t->name, r, by, sk, a->stride);
  put(b, "\nQueries:\n");
  for (int i = 0; i < ql->n; i++) {
    char text[80];
    one_line(ql->v[i].st->sql, ql->v[i].st->sql_len, text, sizeof text);
    put(b, "  Q%-3d line %-5d %s\n", i + 1, ql->v[i].line, text);
  }
  put(b, "\nCandidate keys, best first (cost = rows read + %.0f per seek):\n",
      PLAN_SKIP_SEEK_COST);
  put(b, "  %-4s  %-32s %14s %12s %10s %14s\n", "rank", "PRIMARY KEY", "est. rows", "est. bytes",
      "seeks", "cost");
  const plan_adv_cand *cur = NULL;
  for (int c = 0; c < a->n_cands; c++) {
    const plan_adv_cand *cd = &a->cands[c];
    if (cd->current) cur = cd;
    char kt[600];
    plan_adv_key_text(t, cd, key, sizeof key);
    snprintf(kt, sizeof kt, "(%s)%s", key, cd->current ? " *" : "");
    plan_grouped(cd->rows, r, sizeof r);
    plan_human_bytes(cd->bytes, by, sizeof by);
    plan_grouped(cd->seeks, sk, sizeof sk);
    plan_grouped((uint64_t)(cd->cost + 0.5), co, sizeof co);
    put(b, "  %-4d  %-32s %14s %12s %10s %14s\n", c + 1, kt, r, by, sk, co);
  }
  put(b, "  * the table's current key\n\n");
  const plan_adv_cand *best = &a->cands[0];
  plan_adv_key_text(t, best, key, sizeof key);
  if (best->current || !cur) {
    put(b, "First choice: PRIMARY KEY (%s), the current key\n", key);
  } else {
    char ck[512];
    plan_adv_key_text(t, cur, ck, sizeof ck);
    put(b, "First choice: PRIMARY KEY (%s); the current key (%s) costs %.1f times as much\n",
        key, ck, best->cost > 0 ? cur->cost / best->cost : 0.0);
  }
  write_indexes(b, t, a, key);
  put(b, "\nPer key and query:\n");
  for (int c = 0; c < a->n_cands; c++) {
    const plan_adv_cand *cd = &a->cands[c];
    plan_adv_key_text(t, cd, key, sizeof key);
    put(b, "%d. (%s)%s\n", c + 1, key, cd->current ? ", the current key" : "");
    put(b, "  %-5s %-48s %12s %12s %9s\n", "query", "plan", "est. rows", "est. bytes", "seeks");
    for (int i = 0; i < a->n_queries; i++) {
      const plan_adv_est *e = &cd->est[i];
      char pl[128], qn[16];
      plan_label(e, pl, sizeof pl);
      plan_grouped(e->rows, r, sizeof r);
      plan_human_bytes(e->bytes, by, sizeof by);
      plan_grouped(e->seeks, sk, sizeof sk);
      snprintf(qn, sizeof qn, "Q%d", i + 1);
      put(b, "  %-5s %-48s %12s %12s %9s\n", qn, pl, r, by, sk);
      if (cd->current && x[i].first)
        put(b, "        EXPLAIN: %s\n", x[i].first);
      if (cd->current && x[i].estimate)
        put(b, "        EXPLAIN %s\n", x[i].estimate);
    }
  }
  for (int j = 0; j < a->n_ix; j++) {
    const plan_adv_index *ix = &a->ix[j];
    if (!ix->n_served) continue;
    put(b, "INDEX ON (%s), with the first choice's key\n", t->columns[ix->column].name);
    put(b, "  %-5s %-48s %12s %12s %9s\n", "query", "plan", "est. rows", "est. bytes", "seeks");
    for (int i = 0; i < a->n_queries; i++) {
      const plan_adv_est *e = &ix->est[i];
      if (!e->index) continue;
      char pl[128], qn[16];
      plan_label(e, pl, sizeof pl);
      plan_grouped(e->rows, r, sizeof r);
      plan_human_bytes(e->bytes, by, sizeof by);
      plan_grouped(e->seeks, sk, sizeof sk);
      snprintf(qn, sizeof qn, "Q%d", i + 1);
      put(b, "  %-5s %-48s %12s %12s %9s\n", qn, pl, r, by, sk);
    }
  }
}

int exec_advise(exec_session *s, const char *table, const char *sql, size_t len,
                const char *source, char **report, exec_error *err) {
  *report = NULL;
  err->code = EXEC_OK;
  err->offset = -1;
  err->msg[0] = 0;
  const char *src = source ? source : "the queries";
  const cat_table *t = table ? cat_find_table_folded(s->cat, table) : NULL;
  if (!t) return exec_fail(err, EXEC_ERROR, -1, "no such table: %s", table ? table : "(null)");
  qlist ql = {0};
  int rc = read_queries(s, t, sql, len, src, &ql, err);
  if (rc) {
    qlist_free(&ql);
    return rc;
  }
  const plan_select **sels = malloc((size_t)ql.n * sizeof *sels);
  explained *x = calloc((size_t)ql.n, sizeof *x);
  plan_advice a;
  memset(&a, 0, sizeof a);
  if (!sels || !x) rc = exec_fail(err, EXEC_NOMEM, -1, "out of memory");
  for (int i = 0; !rc && i < ql.n; i++) sels[i] = ql.v[i].st->bound.select;
  char msg[EXEC_ERRMSG_MAX];
  if (!rc) {
    rc = plan_advise(s->db, t, sels, ql.n, s->interrupt, &a, msg, sizeof msg);
    if (rc) exec_fail(err, rc, -1, "%s", msg);
  }
  for (int i = 0; !rc && i < ql.n; i++) rc = explain_current(s, ql.v[i].st, &x[i], err);
  if (!rc) {
    sbuf b = {0};
    write_advice(&b, t, &a, &ql, src, x);
    if (b.oom) {
      free(b.p);
      rc = exec_fail(err, EXEC_NOMEM, -1, "out of memory");
    } else {
      *report = b.p;
    }
  }
  for (int i = 0; x && i < ql.n; i++) {
    free(x[i].first);
    free(x[i].estimate);
  }
  free(x);
  free(sels);
  plan_advice_free(&a);
  qlist_free(&ql);
  return rc;
}
