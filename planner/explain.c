/*
** planner/explain.c: EXPLAIN text of a plan (one step per line, in the order the executor
** runs them) and plan_expr_print (a bound expression back to SQL text). The forms follow
** Phoenix, made clearer:
**   RANGE SCAN OVER SENSOR ['Dongsi'] (reverse)   |  POINT LOOKUP ON 2 KEYS OVER T
**   SKIP SCAN ON 3 RANGES OVER T ...              |  FULL SCAN OVER T
**   DEGENERATE SCAN OVER T (reads nothing: the WHERE clause cannot be true)
**       KEY RANGE: STATION = 'Dongsi'  [answered by the key; not re-checked]
**       SERVER FILTER BY TEMP > 30.0 (DOUBLE) (on encoded cells, before rows are assembled)
**       CLIENT FILTER BY ... (after decoding)
**       FAMILIES: READINGS
**       SERVER AGGREGATE INTO ORDERED DISTINCT ROWS BY [STATION] | CLIENT HASH AGGREGATE ...
**       CLIENT TOP 10 ROWS SORTED BY [...] | CLIENT SORTED BY [...] | ROW LIMIT 24 ...
**       ESTIMATE: 24 rows, 1.2 KB of 420,768 rows, 13.1 MB in the table
** With actual figures (EXPLAIN ANALYZE) each step line ends with its rows in and out, the
** scan's rows examined / returned / assembled and per-family blocks and bytes, and a
** final "time=12.3ms" so tests can mask it.
** Index scans (issue 7) name the index as TABLE.INDEX, list the index's families, then
**       LOOKUP BACK INTO SENSOR BY PK (uncovered) FAMILIES: _k, READINGS
** for an uncovered index (with the lookups' figures under EXPLAIN ANALYZE), and, whenever the
** planner costed more than one access path or a hint applied,
**       COST: SENSOR (full scan) 6 rows = 6.0; SENSOR.IDX (range scan, covered) 2 rows = 2.0
**             [chosen]          (planner/index_choice.c has the formula)
**       HINT: what the optimizer hint did, or why it was ignored.
*/
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "catalog/value.h"
#include "exec/agg.h"
#include "exec/colagg.h"
#include "exec/func.h"
#include "planner/plan_select.h"
#include "planner/skip_prefix.h"
#include "sql/ast.h"

/* ---- plan_expr_print ---------------------------------------------------------------------- */
typedef struct pbuf {
  char *p;                /* output */
  size_t cap;             /* its size */
  size_t n;               /* full length so far */
  const plan_select *sel; /* names PX_AGG slots by their call text, or NULL */
} pbuf;

static void put(pbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(pbuf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *dst = b->n < b->cap ? b->p + b->n : NULL;
  size_t room = b->n < b->cap ? b->cap - b->n : 0;
  char tmp[1];
  int k = vsnprintf(dst ? dst : tmp, dst ? room : 0, fmt, ap);
  va_end(ap);
  if (k > 0) b->n += (size_t)k;
}

static const char *op_text(int op) {
  static const char *const t[] = {"?", "-", "+", "NOT ", "*", "/", "%", "+", "-", "||",
                                  "=", "<>", "<", "<=", ">", ">=", "AND", "OR"};
  return op > 0 && op < (int)(sizeof t / sizeof t[0]) ? t[op] : "?";
}

static void pr(pbuf *b, const plan_expr *e, const char *const *names, bool paren);

static void pr_value(pbuf *b, const cat_value *v) {
  if (v->is_null) {
    put(b, "NULL");
    return;
  }
  char t[128];
  cat_text_format(v, t, sizeof t);
  int id = v->type.id;
  if (cat_type_is_string(id)) {
    put(b, "'");
    for (uint32_t i = 0; i < v->u.s.len && i < 200; i++) {
      char ch = (char)v->u.s.p[i];
      put(b, ch == '\'' ? "''" : "%c", ch);
    }
    put(b, "'");
  } else if (id == CAT_T_DATE) put(b, "DATE '%s'", t);
  else if (id == CAT_T_TIME) put(b, "TIME '%s'", t);
  else if (id == CAT_T_TIMESTAMP) put(b, "TIMESTAMP '%s'", t);
  else if (id == CAT_T_VARBINARY) put(b, "X'...'");
  else if (id == CAT_T_DOUBLE || id == CAT_T_FLOAT) {
    if (isnan(v->u.d) || isinf(v->u.d)) {
      put(b, "%s", t);
      return;
    }
    snprintf(t, sizeof t, "%.15g", v->u.d);
    if (strtod(t, NULL) != v->u.d) snprintf(t, sizeof t, "%.17g", v->u.d);
    put(b, "%s%s", t, strpbrk(t, ".e") ? "" : ".0");
  } else put(b, "%s", t);
}

static void pr_list(pbuf *b, const plan_expr *e, uint32_t from, const char *const *names) {
  for (uint32_t i = from; i < e->n_args; i++) {
    if (i > from) put(b, ", ");
    pr(b, e->args[i], names, false);
  }
}

static void pr(pbuf *b, const plan_expr *e, const char *const *names, bool paren) {
  switch (e->kind) {
    case PX_CONST: pr_value(b, &e->value); return;
    case PX_COLUMN:
      if (names && names[e->column]) put(b, "%s", names[e->column]);
      else put(b, "$%d", e->column);
      return;
    case PX_PARAM: put(b, "?%d", e->param); return;
    case PX_AGG:
      if (b->sel && e->func >= 0 && e->func < b->sel->n_aggs) put(b, "%s", b->sel->aggs[e->func].text);
      else put(b, "AGG%d", e->func);
      return;
    case PX_UNARY:
      put(b, "%s", op_text(e->op));
      pr(b, e->args[0], names, true);
      return;
    case PX_BINARY:
      if (paren) put(b, "(");
      pr(b, e->args[0], names, true);
      put(b, " %s ", op_text(e->op));
      pr(b, e->args[1], names, true);
      if (paren) put(b, ")");
      return;
    case PX_IN:
      pr(b, e->args[0], names, true);
      put(b, e->negated ? " NOT IN (" : " IN (");
      pr_list(b, e, 1, names);
      put(b, ")");
      return;
    case PX_BETWEEN:
      pr(b, e->args[0], names, true);
      put(b, e->negated ? " NOT BETWEEN " : " BETWEEN ");
      pr(b, e->args[1], names, true);
      put(b, " AND ");
      pr(b, e->args[2], names, true);
      return;
    case PX_LIKE:
      pr(b, e->args[0], names, true);
      put(b, "%s%s ", e->negated ? " NOT" : "", e->ilike ? " ILIKE" : " LIKE");
      pr(b, e->args[1], names, true);
      if (e->n_args > 2) {
        put(b, " ESCAPE ");
        pr(b, e->args[2], names, true);
      }
      return;
    case PX_ISNULL:
      pr(b, e->args[0], names, true);
      put(b, e->negated ? " IS NOT NULL" : " IS NULL");
      return;
    case PX_CASE: {
      uint32_t k = 0;
      put(b, "CASE");
      if (e->has_operand) {
        put(b, " ");
        pr(b, e->args[k++], names, true);
      }
      uint32_t end = e->n_args - (e->has_else ? 1 : 0);
      for (; k + 1 < end; k += 2) {
        put(b, " WHEN ");
        pr(b, e->args[k], names, false);
        put(b, " THEN ");
        pr(b, e->args[k + 1], names, false);
      }
      if (e->has_else) {
        put(b, " ELSE ");
        pr(b, e->args[e->n_args - 1], names, false);
      }
      put(b, " END");
      return;
    }
    case PX_CAST: {
      char t[40];
      put(b, "CAST(");
      pr(b, e->args[0], names, false);
      put(b, " AS %s)", cat_type_format(&e->type, t, sizeof t));
      return;
    }
    case PX_FUNC:
      put(b, "%s(", exec_func_name(e->func));
      pr_list(b, e, 0, names);
      put(b, ")");
      return;
    case PX_ROW:
      put(b, "(");
      pr_list(b, e, 0, names);
      put(b, ")");
      return;
    default: put(b, "?"); return;
  }
}

size_t plan_expr_print(const plan_expr *e, const char *const *names, char *buf, size_t cap) {
  pbuf b = {buf, cap, 0, NULL};
  if (cap) buf[0] = 0;
  pr(&b, e, names, false);
  if (cap) buf[b.n < cap ? b.n : cap - 1] = 0;
  return b.n;
}

/* ---- Lines ------------------------------------------------------------------------------ */
typedef struct lines {
  plan_arena *A;  /* storage */
  char **v;       /* lines */
  int n, cap;     /* count, allocated */
  int rc;         /* EXEC_NOMEM after a failure */
} lines;

static void line(lines *L, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void line(lines *L, const char *fmt, ...) {
  if (L->rc) return;
  char buf[4096];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (L->n == L->cap) {
    int nc = L->cap ? L->cap * 2 : 16;
    char **nv = plan_arena_alloc(L->A, (size_t)nc * sizeof *nv);
    if (!nv) {
      L->rc = 10;
      return;
    }
    if (L->n) memcpy(nv, L->v, (size_t)L->n * sizeof *nv);
    L->v = nv;
    L->cap = nc;
  }
  L->v[L->n] = plan_arena_strndup(L->A, buf, strlen(buf));
  if (!L->v[L->n]) L->rc = 10;
  else L->n++;
}

static void human_bytes(uint64_t n, char *buf, size_t cap) {
  if (n < 1024) snprintf(buf, cap, "%" PRIu64 " B", n);
  else if (n < (1u << 20)) snprintf(buf, cap, "%.1f KB", (double)n / 1024);
  else if (n < (1u << 30)) snprintf(buf, cap, "%.1f MB", (double)n / (1 << 20));
  else snprintf(buf, cap, "%.1f GB", (double)n / (1 << 30));
}

static void grouped(uint64_t n, char *buf, size_t cap) {
  char t[32];
  snprintf(t, sizeof t, "%" PRIu64, n);
  size_t len = strlen(t), o = 0;
  for (size_t i = 0; i < len && o + 2 < cap; i++) {
    buf[o++] = t[i];
    size_t left = len - i - 1;
    if (left && left % 3 == 0) buf[o++] = ',';
  }
  buf[o] = 0;
}

static const char *act_text(const plan_actuals *a, int step, char *buf, size_t cap) {
  if (!a) return "";
  const plan_step_actual *s = &a->step[step];
  snprintf(buf, cap, "  (actual rows in=%" PRIu64 " out=%" PRIu64 ")", s->rows_in, s->rows_out);
  return buf;
}

static void terms_text(const plan_expr *const *t, uint32_t n, const char *const *names,
                       char *buf, size_t cap) {
  pbuf b = {buf, cap, 0, NULL};
  if (cap) buf[0] = 0;
  for (uint32_t i = 0; i < n; i++) {
    if (i) put(&b, " AND ");
    pr(&b, t[i], names, t[i]->kind == PX_BINARY && t[i]->op == SQL_OP_OR);
  }
}

/* Per-family figures of metrics m for family id fid, appended to fb. */
static void family_actual(pbuf *fb, const kv_scan_metrics *m, uint32_t fid) {
  for (uint32_t k = 0; k < m->n_families; k++) {
    const kv_family_metrics *fm = &m->families[k];
    if (fm->family_id != fid) continue;
    char hb[32];
    human_bytes(fm->bytes_read, hb, sizeof hb);
    put(fb, " (blocks=%" PRIu64 " cache hits=%" PRIu64 " bytes=%s)", fm->blocks_read,
        fm->blocks_cache_hit, hb);
  }
}

/* The lines of an index scan after its scan line: filters, families, lookup. */
static void index_scan_lines(lines *L, const plan_scan *sc, const char *const *names,
                             const plan_actuals *a) {
  const cat_table *t = sc->table;
  char buf[2048], ab[160];
  const plan_scan_ranges *r = &sc->ranges;
  if (r->n_key_terms) {
    terms_text(r->key_terms, r->n_key_terms, names, buf, sizeof buf);
    line(L, "    KEY RANGE: %s  [answered by the index key; not re-checked]", buf);
  }
  if (sc->filter_text)
    line(L, "    SERVER FILTER BY %s (on encoded index cells, before rows are assembled)",
         sc->filter_text);
  if (sc->ix_filter) {
    plan_expr_print(sc->ix_filter, names, buf, sizeof buf);
    if (a)
      snprintf(ab, sizeof ab, "  (actual rows in=%" PRIu64 " out=%" PRIu64 ")", a->ix_filter_in,
               a->ix_filter_out);
    line(L, "    CLIENT FILTER BY %s (on index columns, before the lookup)%s", buf, a ? ab : "");
  }
  if (sc->residual && !sc->lookup) {
    plan_expr_print(sc->residual, names, buf, sizeof buf);
    line(L, "    CLIENT FILTER BY %s (after decoding)%s", buf,
         act_text(a, PLAN_STEP_FILTER, ab, sizeof ab));
  }
  static const char *const ix_fam[2] = {CAT_KEY_FAMILY, CAT_DEFAULT_FAMILY};
  pbuf fb = {buf, sizeof buf, 0, NULL};
  for (int i = 0; i < sc->n_families; i++) {
    put(&fb, "%s%s", i ? ", " : "", ix_fam[sc->families[i] ? 1 : 0]);
    if (a) family_actual(&fb, &a->kv, sc->family_ids[i]);
  }
  line(L, "    INDEX FAMILIES: %s", buf);
  if (sc->lookup) {
    pbuf lb = {buf, sizeof buf, 0, NULL};
    put(&lb, "    LOOKUP BACK INTO %s BY PK (uncovered) FAMILIES: ", t->name);
    for (int i = 0; i < sc->n_lookup_families; i++) {
      put(&lb, "%s%s", i ? ", " : "", t->families[sc->lookup_families[i]].name);
      if (a) family_actual(&lb, &a->lookup_kv, sc->lookup_family_ids[i]);
    }
    if (a)
      put(&lb, "  (actual lookups=%" PRIu64 " found=%" PRIu64 ")", a->lookups, a->lookups_found);
    line(L, "%s", buf);
    if (sc->residual) {
      plan_expr_print(sc->residual, names, buf, sizeof buf);
      line(L, "    CLIENT FILTER BY %s (after the lookup)%s", buf,
           act_text(a, PLAN_STEP_FILTER, ab, sizeof ab));
    }
  }
  if (sc->kv_limit) line(L, "    ROW LIMIT %" PRIu64 " (pushed into the scan)", sc->kv_limit);
}

static void scan_lines(lines *L, const plan_scan *sc, const char *const *names,
                       const plan_actuals *a, const char *chunks) {
  const cat_table *t = sc->table;
  const plan_scan_ranges *r = &sc->ranges;
  const char *rev = sc->reverse ? " (reverse)" : "";
  char over[512];
  if (sc->index) snprintf(over, sizeof over, "%s.%s", t->name, sc->index->name);
  else snprintf(over, sizeof over, "%s", t->name);
  char actual[512] = "";
  if (a) {
    const kv_scan_metrics *m = &a->kv;
    snprintf(actual, sizeof actual,
             "  (actual rows examined=%" PRIu64 " filtered=%" PRIu64 " returned=%" PRIu64
             " assembled=%" PRIu64 " ranges=%" PRIu64 ")",
             m->rows_examined, m->rows_filtered, m->rows_returned, a->rows_assembled,
             m->ranges_sought);
    if (a->step[PLAN_STEP_SCAN].ms > 0 || a->analyzed) {
      size_t l = strlen(actual);
      snprintf(actual + l, sizeof actual - l, " time=%.1fms", a->step[PLAN_STEP_SCAN].ms);
    }
  }
  switch (r->kind) {
    case PLAN_SCAN_NOTHING:
      line(L, "DEGENERATE SCAN OVER %s (reads nothing: the WHERE clause cannot be true)%s",
           over, actual);
      break;
    case PLAN_SCAN_POINT:
      line(L, "POINT LOOKUP ON %u KEY%s OVER %s %s%s%s", r->n_ranges, r->n_ranges == 1 ? "" : "S",
           over, r->explain ? r->explain : "", rev, actual);
      break;
    case PLAN_SCAN_RANGE:
      line(L, "RANGE SCAN OVER %s %s%s%s", over, r->explain ? r->explain : "", rev, actual);
      break;
    case PLAN_SCAN_SKIP:
      line(L, "SKIP SCAN ON %u RANGES OVER %s %s%s%s", r->n_ranges, over,
           r->explain ? r->explain : "", rev, actual);
      break;
    case PLAN_SCAN_PREFIX_SKIP: {
      char found[48];
      if (sc->skip_more) snprintf(found, sizeof found, "over %u found", sc->skip_probed);
      else snprintf(found, sizeof found, "%u found", sc->skip_prefixes);
      char pa[64] = "";
      if (a) snprintf(pa, sizeof pa, " prefixes=%" PRIu64, a->kv.prefixes_sought);
      size_t al = strlen(actual);
      if (pa[0] && al > 0) { /* "... ranges=n) time=..." gets the prefixes after ranges */
        char *close = strchr(actual, ')');
        if (close) {
          char tail[512];
          snprintf(tail, sizeof tail, "%s", close);
          snprintf(close, sizeof actual - (size_t)(close - actual), "%s%s", pa, tail);
        }
      }
      if (sc->prefix_first) /* no suffix ranges: no bounds after the table's name */
        line(L, "SKIP TO NEXT PREFIX OF [%s] (%s) OVER %s%s%s%s", t->columns[t->pk[0]].name,
             found, over, sc->skip_explain ? " " : "", sc->skip_explain ? sc->skip_explain : "",
             actual);
      else
        line(L, "SKIP SCAN ON EACH [%s] PREFIX (%s) OVER %s %s%s", t->columns[t->pk[0]].name,
             found, over, sc->skip_explain ? sc->skip_explain : "", actual);
      break;
    }
    default: line(L, "%sFULL SCAN OVER %s%s%s", chunks, over, rev, actual); break;
  }
  if (sc->index) {
    index_scan_lines(L, sc, names, a);
    return;
  }
  char buf[2048];
  if (r->n_key_terms) {
    terms_text(r->key_terms, r->n_key_terms, names, buf, sizeof buf);
    line(L, "    KEY RANGE: %s  [answered by the key; not re-checked]", buf);
  }
  if (sc->filter_text)
    line(L, "    SERVER FILTER BY %s (on encoded cells, before rows are assembled)",
         sc->filter_text);
  if (sc->residual) {
    plan_expr_print(sc->residual, names, buf, sizeof buf);
    char ab[128];
    line(L, "    CLIENT FILTER BY %s (after decoding)%s", buf, act_text(a, PLAN_STEP_FILTER, ab, sizeof ab));
  }
  pbuf fb = {buf, sizeof buf, 0, NULL};
  for (int i = 0; i < sc->n_families; i++) {
    const cat_family *f = &t->families[sc->families[i]];
    put(&fb, "%s%s", i ? ", " : "", f->name);
    if (a) {
      for (uint32_t k = 0; k < a->kv.n_families; k++) {
        const kv_family_metrics *fm = &a->kv.families[k];
        if (fm->family_id != f->kv_id) continue;
        char hb[32];
        human_bytes(fm->bytes_read, hb, sizeof hb);
        put(&fb, " (blocks=%" PRIu64 " cache hits=%" PRIu64 " bytes=%s)", fm->blocks_read,
            fm->blocks_cache_hit, hb);
      }
    }
  }
  if (sc->key_family && sc->key_family_why)
    put(&fb, "  [%s reads the key family: %s]", CAT_KEY_FAMILY, sc->key_family_why);
  line(L, "    FAMILIES: %s", buf);
  if (sc->kv_limit) line(L, "    ROW LIMIT %" PRIu64 " (pushed into the scan)", sc->kv_limit);
}

static void estimate_line(lines *L, const plan_scan *sc) {
  const plan_scan_ranges *r = &sc->ranges;
  char er[32], eb[32], tr[32], tb[32];
  grouped(sc->est_rows, er, sizeof er);
  human_bytes(sc->est_bytes, eb, sizeof eb);
  grouped(sc->total_rows, tr, sizeof tr);
  human_bytes(sc->total_bytes, tb, sizeof tb);
  const char *what = sc->index ? "index" : "table";
  char lk[96] = "";
  if (sc->lookup) {
    char n[32];
    grouped(sc->est_lookups, n, sizeof n);
    snprintf(lk, sizeof lk, "; %s lookup%s into %s", n, sc->est_lookups == 1 ? "" : "s",
             sc->table->name);
  }
  if (r->kind == PLAN_SCAN_NOTHING)
    line(L, "    ESTIMATE: 0 rows, 0 B of %s rows, %s in the %s", tr, tb, what);
  else
    line(L, "    ESTIMATE: %s row%s, %s of %s rows, %s in the %s%s", er,
         sc->est_rows == 1 ? "" : "s", eb, tr, tb, what, lk);
}

/* The COST line (every access path costed, the chosen one marked) and the HINT line. */
static void access_lines(lines *L, const plan_scan *sc) {
  if (sc->n_access > 0) {
    char buf[2048];
    pbuf b = {buf, sizeof buf, 0, NULL};
    put(&b, "    COST: ");
    for (int i = 0; i < sc->n_access; i++) {
      const plan_access *p = &sc->access[i];
      char kind[32];
      snprintf(kind, sizeof kind, "%s", plan_scan_kind_name(p->kind));
      for (char *c = kind; *c; c++) *c = (char)(*c >= 'A' && *c <= 'Z' ? *c + 32 : *c);
      char rows[32];
      grouped(p->rows, rows, sizeof rows);
      put(&b, "%s%s%s%s (%s%s%s) %s row%s", i ? "; " : "", sc->table->name,
          p->index ? "." : "", p->index ? p->index->name : "", kind,
          p->index ? (p->covered ? ", covered" : ", uncovered") : "",
          p->ordered ? ", in ORDER BY order" : "", rows, p->rows == 1 ? "" : "s");
      if (p->lookups) {
        grouped(p->lookups, rows, sizeof rows);
        put(&b, " + %s lookup%s", rows, p->lookups == 1 ? "" : "s");
      }
      put(&b, " = %.1f%s", p->cost, p->chosen ? " [chosen]" : "");
    }
    line(L, "%s", buf);
  }
  if (sc->hint_note) line(L, "    HINT: %s", sc->hint_note);
}


static void order_text(const plan_select *s, char *buf, size_t cap) {
  pbuf b = {buf, cap, 0, s};
  if (cap) buf[0] = 0;
  for (int i = 0; i < s->n_order; i++) {
    const plan_order *o = &s->order[i];
    const plan_expr *e = s->order_src[i];
    if (i) put(&b, ", ");
    if (s->aggregate) put(&b, "%s", s->names[o->slot][0] ? s->names[o->slot] : "?");
    else pr(&b, e, s->col_names, false);
    put(&b, "%s", o->desc ? " DESC" : "");
    if (o->nulls_first == o->desc) put(&b, o->nulls_first ? " NULLS FIRST" : " NULLS LAST");
  }
}

/* The columnar aggregate pushdown (exec/colagg.h): what it does, and under EXPLAIN ANALYZE
** what it read or why the rows path ran instead. */
static void colagg_line(lines *L, int threads, const plan_actuals *a) {
  char act[256] = "";
  const plan_colagg_actual *c = a ? &a->colagg : NULL;
  if (c && c->ran)
    snprintf(act, sizeof act, "  (actual blocks=%" PRIu64 " row-way blocks=%" PRIu64
             " row-way ranges=%" PRIu64 " row-way rows=%" PRIu64 " threads=%d)", c->blocks,
             c->blocks_fallback, c->ranges, c->rows_fallback, c->threads);
  else if (c && c->tried && c->why)
    snprintf(act, sizeof act, "  (not used: %s; the rows were assembled)", c->why);
  line(L, "    SERVER COLUMNAR AGGREGATE: filter and aggregates evaluated per block on the "
       "value streams, %s; rows not assembled%s",
       threads > 1 ? "blocks split into contiguous chunks" : "blocks in key order (a FLOAT, DOUBLE or DECIMAL sum)",
       act);
}

static void query_lines(lines *L, const plan_query *q, const plan_actuals *a) {
  const plan_select *s = q->sel;
  char buf[2048], ab[128];
  int cth = 0;
  bool col = exec_colagg_check(q, &cth);
  char chunks[64] = "";
  if (col && cth > 1) snprintf(chunks, sizeof chunks, "CLIENT %d-CHUNK PARALLEL %d-WAY ", cth, cth);
  else if (col) snprintf(chunks, sizeof chunks, "CLIENT 1-CHUNK SERIAL ");
  if (q->has_scan) scan_lines(L, &q->scan, s->col_names, a, chunks);
  else line(L, "VALUES (one row, no table)");
  if (!q->has_scan && s->where) {
    plan_expr_print(s->where, NULL, buf, sizeof buf);
    line(L, "    CLIENT FILTER BY %s%s", buf, act_text(a, PLAN_STEP_FILTER, ab, sizeof ab));
  }
  if (s->aggregate) {
    pbuf b = {buf, sizeof buf, 0, NULL};
    for (int i = 0; i < s->n_group; i++) put(&b, "%s%s", i ? ", " : "", s->agg_names[i]);
    char aggs[1024];
    pbuf c = {aggs, sizeof aggs, 0, NULL};
    aggs[0] = 0;
    for (int i = 0; i < s->n_aggs; i++) put(&c, "%s%s", i ? ", " : "", s->aggs[i].text);
    if (s->n_group == 0) {
      line(L, "    SERVER AGGREGATE INTO SINGLE ROW [%s]%s", aggs,
           act_text(a, PLAN_STEP_AGG, ab, sizeof ab));
      if (col) colagg_line(L, cth, a);
    } else if (q->stream_agg)
      line(L, "    SERVER AGGREGATE INTO ORDERED DISTINCT ROWS BY [%s] [%s] (key order, "
           "streaming)%s", buf, aggs, act_text(a, PLAN_STEP_AGG, ab, sizeof ab));
    else
      line(L, "    CLIENT HASH AGGREGATE INTO DISTINCT ROWS BY [%s] [%s]%s", buf, aggs,
           act_text(a, PLAN_STEP_AGG, ab, sizeof ab));
    if (s->having) {
      pbuf h = {buf, sizeof buf, 0, s};
      buf[0] = 0;
      pr(&h, s->having, s->agg_names, false);
      line(L, "    CLIENT FILTER BY %s (HAVING)%s", buf,
           act_text(a, PLAN_STEP_HAVING, ab, sizeof ab));
    }
  }
  if (s->distinct) line(L, "    CLIENT DISTINCT%s", act_text(a, PLAN_STEP_DISTINCT, ab, sizeof ab));
  if (q->sort) {
    order_text(s, buf, sizeof buf);
    if (q->topn)
      line(L, "    CLIENT TOP %" PRId64 " ROWS SORTED BY [%s]%s", q->limit + q->offset, buf,
           act_text(a, PLAN_STEP_SORT, ab, sizeof ab));
    else
      line(L, "    CLIENT SORTED BY [%s]%s", buf, act_text(a, PLAN_STEP_SORT, ab, sizeof ab));
  } else if (s->n_order) {
    order_text(s, buf, sizeof buf);
    line(L, "    ORDER BY [%s] is the key order%s: no sort", buf,
         q->scan.reverse ? " reversed" : "");
  }
  if (q->offset) line(L, "    CLIENT OFFSET %" PRId64 "%s", q->offset, act_text(a, PLAN_STEP_LIMIT, ab, sizeof ab));
  if (q->limit >= 0 && !q->limit_pushed && !q->topn)
    line(L, "    CLIENT LIMIT %" PRId64 "%s", q->limit, act_text(a, PLAN_STEP_LIMIT, ab, sizeof ab));
  if (q->has_scan) {
    access_lines(L, &q->scan);
    estimate_line(L, &q->scan);
  }
}

int plan_explain(const plan_bound *bound, const plan_query *q, const plan_scan *del_scan,
                 const plan_actuals *a, plan_arena *A, char ***out, int *n) {
  lines L = {A, NULL, 0, 0, 0};
  char ab[128];
  if (bound->kind == SQL_STMT_UPSERT) {
    const plan_upsert *u = bound->upsert;
    if (u->select) line(L.A ? &L : &L, "UPSERT SELECT INTO %s%s", u->table->name, act_text(a, PLAN_STEP_WRITE, ab, sizeof ab));
    else line(&L, "UPSERT %d ROW%s INTO %s%s", u->n_rows, u->n_rows == 1 ? "" : "S",
              u->table->name, act_text(a, PLAN_STEP_WRITE, ab, sizeof ab));
  } else if (bound->kind == SQL_STMT_DELETE) {
    line(&L, "DELETE ROWS FROM %s%s", bound->del->table->name,
         act_text(a, PLAN_STEP_WRITE, ab, sizeof ab));
  }
  if (q) query_lines(&L, q, a);
  if (del_scan) {
    scan_lines(&L, del_scan, bound->del->col_names, a, "");
    access_lines(&L, del_scan);
    estimate_line(&L, del_scan);
  }
  if (a) line(&L, "TOTAL time=%.1fms", a->total_ms);
  *out = L.v;
  *n = L.n;
  return L.rc;
}
