/*
** planner/explain.c: EXPLAIN text of a plan (one step per line, in the order the executor
** runs them); a bound expression's text is planner/expr_print.c's. The forms follow
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
** EXPLAIN (FORMAT JSON) (plan_explain_json) walks the same lines: next to each line it makes,
** the code says what the line holds (xj_node, xj_str, ... of planner/explain_int.h), and the
** document gets one node per line, so the two forms cannot drift apart.
*/
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "catalog/value.h"
#include "catalog/agg_sig.h"
#include "catalog/func_sig.h"
#include "planner/plan_join.h"
#include "planner/plan_select.h"
#include "planner/colagg.h"
#include "planner/explain_int.h"
#include "planner/salt.h"
#include "planner/hint.h"
#include "planner/parallel.h"
#include "planner/skip_prefix.h"
#include "planner/selectivity.h"
#include "planner/time_range.h"
#include "sql/ast.h"

/* ---- Lines ------------------------------------------------------------------------------ */
typedef struct lines {
  plan_arena *A;  /* storage */
  char **v;       /* lines */
  int n, cap;     /* count, allocated */
  int rc;         /* EXEC_NOMEM after a failure */
  xjson *j;       /* the JSON form being built next to the lines (j->on false: text only) */
} lines;

/* "[K1]" or "[K1, K2]": the key columns of a skip scan's prefix (the text lives until the
** thread's next call). */
static const char *prefix_names(const cat_table *t, const plan_scan *sc) {
  static _Thread_local char buf[512];
  int n = sc->skip_key.n > 0 ? sc->skip_key.n : 1;
  size_t k = 0;
  buf[k++] = '[';
  for (int i = 0; i < n && i < t->n_pk; i++) {
    int w = snprintf(buf + k, sizeof buf - k, "%s%s", i ? ", " : "", t->columns[t->pk[i]].name);
    if (w < 0 || (size_t)w >= sizeof buf - k - 2) break;
    k += (size_t)w;
  }
  buf[k++] = ']';
  buf[k] = 0;
  return buf;
}

static void line(lines *L, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void line(lines *L, const char *fmt, ...) {
  if (L->rc) return;
  char buf[4096];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  xj_line(L->j, buf); /* the node describing this line, if JSON is built */
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

void plan_human_bytes(uint64_t n, char *buf, size_t cap) {
  if (n < 1024) snprintf(buf, cap, "%" PRIu64 " B", n);
  else if (n < (1u << 20)) snprintf(buf, cap, "%.1f KB", (double)n / 1024);
  else if (n < (1u << 30)) snprintf(buf, cap, "%.1f MB", (double)n / (1 << 20));
  else snprintf(buf, cap, "%.1f GB", (double)n / (1 << 30));
}

void plan_grouped(uint64_t n, char *buf, size_t cap) {
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

/* The "actual" member of a step's node: rows in and out. */
static void act_json(xjson *j, const plan_actuals *a, int step) {
  if (!a) return;
  xj_obj(j, "actual");
  xj_uint(j, "rows_in", a->step[step].rows_in);
  xj_uint(j, "rows_out", a->step[step].rows_out);
  xj_end(j);
}

static const char *act_text(const plan_actuals *a, int step, char *buf, size_t cap) {
  if (!a) return "";
  const plan_step_actual *s = &a->step[step];
  snprintf(buf, cap, "  (actual rows in=%" PRIu64 " out=%" PRIu64 ")", s->rows_in, s->rows_out);
  return buf;
}

static void terms_text(const plan_expr *const *t, uint32_t n, const char *const *names,
                       char *buf, size_t cap) {
  plan_pbuf b = {buf, cap, 0, NULL};
  if (cap) buf[0] = 0;
  for (uint32_t i = 0; i < n; i++) {
    if (i) plan_pbuf_put(&b, " AND ");
    plan_pbuf_expr(&b, t[i], names, t[i]->kind == PX_BINARY && t[i]->op == SQL_OP_OR);
  }
}

/* Per-family figures of metrics m for family id fid, appended to fb (and its "actual"
** member to the family's JSON object). */
static void family_actual(plan_pbuf *fb, xjson *j, const kv_scan_metrics *m, uint32_t fid) {
  for (uint32_t k = 0; k < m->n_families; k++) {
    const kv_family_metrics *fm = &m->families[k];
    if (fm->family_id != fid) continue;
    char hb[32];
    plan_human_bytes(fm->bytes_read, hb, sizeof hb);
    plan_pbuf_put(fb, " (blocks=%" PRIu64 " cache hits=%" PRIu64 " bytes=%s)", fm->blocks_read,
        fm->blocks_cache_hit, hb);
    xj_obj(j, "actual");
    xj_uint(j, "blocks", fm->blocks_read);
    xj_uint(j, "cache_hits", fm->blocks_cache_hit);
    xj_uint(j, "bytes", fm->bytes_read);
    xj_end(j);
  }
}

/* A filter line's node. */
static void filter_node(xjson *j, const char *step, const char *filter, const char *where) {
  xj_node(j, step);
  xj_str(j, "filter", filter);
  xj_str(j, "evaluated", where);
}

/* The lines of an index scan after its scan line: filters, families, lookup. */
static void index_scan_lines(lines *L, const plan_scan *sc, const char *const *names,
                             const plan_actuals *a) {
  const cat_table *t = sc->table;
  xjson *j = L->j;
  char buf[2048], ab[160];
  const plan_scan_ranges *r = &sc->ranges;
  if (r->n_key_terms) {
    terms_text(r->key_terms, r->n_key_terms, names, buf, sizeof buf);
    xj_node(j, "KEY RANGE");
    xj_str(j, "terms", buf);
    xj_str(j, "answered_by", "the index key");
    xj_bool(j, "rechecked", false);
    line(L, "    KEY RANGE: %s  [answered by the index key; not re-checked]", buf);
  }
  if (sc->filter_text) {
    filter_node(j, "SERVER FILTER BY", sc->filter_text, "on encoded index cells");
    line(L, "    SERVER FILTER BY %s (on encoded index cells, before rows are assembled)",
         sc->filter_text);
  }
  if (sc->ix_filter) {
    plan_expr_print(sc->ix_filter, names, buf, sizeof buf);
    filter_node(j, "CLIENT FILTER BY", buf, "on index columns, before the lookup");
    if (a) {
      snprintf(ab, sizeof ab, "  (actual rows in=%" PRIu64 " out=%" PRIu64 ")", a->ix_filter_in,
               a->ix_filter_out);
      xj_obj(j, "actual");
      xj_uint(j, "rows_in", a->ix_filter_in);
      xj_uint(j, "rows_out", a->ix_filter_out);
      xj_end(j);
    }
    line(L, "    CLIENT FILTER BY %s (on index columns, before the lookup)%s", buf, a ? ab : "");
  }
  if (sc->residual && !sc->lookup) {
    plan_expr_print(sc->residual, names, buf, sizeof buf);
    filter_node(j, "CLIENT FILTER BY", buf, "after decoding");
    act_json(j, a, PLAN_STEP_FILTER);
    line(L, "    CLIENT FILTER BY %s (after decoding)%s", buf,
         act_text(a, PLAN_STEP_FILTER, ab, sizeof ab));
  }
  static const char *const ix_fam[2] = {CAT_KEY_FAMILY, CAT_DEFAULT_FAMILY};
  plan_pbuf fb = {buf, sizeof buf, 0, NULL};
  xj_node(j, "INDEX FAMILIES");
  xj_arr(j, "families");
  for (int i = 0; i < sc->n_families; i++) {
    const char *fname = ix_fam[sc->families[i] ? 1 : 0];
    plan_pbuf_put(&fb, "%s%s", i ? ", " : "", fname);
    xj_obj(j, NULL);
    xj_str(j, "name", fname);
    if (a) family_actual(&fb, j, &a->kv, sc->family_ids[i]);
    xj_end(j);
  }
  xj_end(j);
  line(L, "    INDEX FAMILIES: %s", buf);
  if (sc->lookup) {
    plan_pbuf lb = {buf, sizeof buf, 0, NULL};
    xj_node(j, "LOOKUP BACK INTO");
    xj_str(j, "table", t->name);
    xj_str(j, "by", "PK");
    xj_bool(j, "covered", false);
    xj_arr(j, "families");
    plan_pbuf_put(&lb, "    LOOKUP BACK INTO %s BY PK (uncovered) FAMILIES: ", t->name);
    for (int i = 0; i < sc->n_lookup_families; i++) {
      const char *fname = t->families[sc->lookup_families[i]].name;
      plan_pbuf_put(&lb, "%s%s", i ? ", " : "", fname);
      xj_obj(j, NULL);
      xj_str(j, "name", fname);
      if (a) family_actual(&lb, j, &a->lookup_kv, sc->lookup_family_ids[i]);
      xj_end(j);
    }
    xj_end(j);
    if (a) {
      plan_pbuf_put(&lb, "  (actual lookups=%" PRIu64 " found=%" PRIu64 ")", a->lookups, a->lookups_found);
      xj_obj(j, "actual");
      xj_uint(j, "lookups", a->lookups);
      xj_uint(j, "found", a->lookups_found);
      xj_end(j);
    }
    line(L, "%s", buf);
    if (sc->residual) {
      plan_expr_print(sc->residual, names, buf, sizeof buf);
      filter_node(j, "CLIENT FILTER BY", buf, "after the lookup");
      act_json(j, a, PLAN_STEP_FILTER);
      line(L, "    CLIENT FILTER BY %s (after the lookup)%s", buf,
           act_text(a, PLAN_STEP_FILTER, ab, sizeof ab));
    }
  }
  if (sc->kv_limit) {
    xj_node(j, "ROW LIMIT");
    xj_uint(j, "rows", sc->kv_limit);
    xj_bool(j, "pushed_into_scan", true);
    line(L, "    ROW LIMIT %" PRIu64 " (pushed into the scan)", sc->kv_limit);
  }
}

/* The scan line's node: its kind, what it reads, its bounds and actual figures. */
static void scan_node(xjson *j, const plan_scan *sc, const char *over, const char *chunks,
                      const char *bounds, const plan_actuals *a) {
  const plan_scan_ranges *r = &sc->ranges;
  const cat_table *t = sc->table;
  switch (r->kind) {
    case PLAN_SCAN_NOTHING:
      xj_node(j, "DEGENERATE SCAN");
      xj_str(j, "reads", "nothing: the WHERE clause cannot be true");
      break;
    case PLAN_SCAN_POINT:
      xj_node(j, "POINT LOOKUP");
      xj_uint(j, "keys", r->n_ranges);
      break;
    case PLAN_SCAN_RANGE: xj_node(j, "RANGE SCAN"); break;
    case PLAN_SCAN_SKIP:
      xj_node(j, "SKIP SCAN");
      xj_uint(j, "ranges", r->n_ranges);
      break;
    case PLAN_SCAN_PREFIX_SKIP:
      xj_node(j, "SKIP SCAN ON EACH");
      xj_str(j, "prefix_column", t->columns[t->pk[0]].name);
      xj_str(j, "prefix", prefix_names(t, sc));
      if (sc->skip_outer.n_ranges && sc->skip_outer.explain)
        xj_str(j, "prefix_bounds", sc->skip_outer.explain);
      xj_uint(j, "prefixes_found", sc->skip_more ? sc->skip_probed : sc->skip_prefixes);
      xj_bool(j, "more_prefixes", sc->skip_more);
      break;
    default:
      xj_node(j, "FULL SCAN");
      break;
  }
  if (chunks[0]) { /* the columnar aggregate's chunks, over whatever ranges it reads */
    char c[64];
    snprintf(c, sizeof c, "%.*s", (int)strlen(chunks) - 1, chunks); /* no trailing ' ' */
    xj_str(j, "parallel", c);
  }
  xj_str(j, "over", over);
  xj_str(j, "table", t->name);
  if (sc->index) xj_str(j, "index", sc->index->name);
  if (r->kind == PLAN_SCAN_PREFIX_SKIP) xj_str(j, "bounds", sc->skip_explain);
  else if (r->kind != PLAN_SCAN_NOTHING && r->kind != PLAN_SCAN_FULL && bounds && bounds[0])
    xj_str(j, "bounds", bounds);
  if (plan_salt_chunks(sc) > 1) xj_bool(j, "client_merge_sort", true); /* planner/salt.h */
  if (r->kind != PLAN_SCAN_NOTHING) xj_bool(j, "reverse", sc->reverse);
  if (a) {
    const kv_scan_metrics *m = &a->kv;
    xj_obj(j, "actual");
    xj_uint(j, "rows_examined", m->rows_examined);
    xj_uint(j, "filtered", m->rows_filtered);
    xj_uint(j, "returned", m->rows_returned);
    xj_uint(j, "assembled", a->rows_assembled);
    xj_uint(j, "ranges", m->ranges_sought);
    if (r->kind == PLAN_SCAN_PREFIX_SKIP) xj_uint(j, "prefixes", m->prefixes_sought);
    if (a->step[PLAN_STEP_SCAN].ms > 0 || a->analyzed)
      xj_dbl(j, "time_ms", a->step[PLAN_STEP_SCAN].ms);
    xj_end(j);
  }
}

static void scan_lines(lines *L, const plan_scan *sc, const char *const *names,
                       const plan_actuals *a, const char *chunks, const plan_par *par) {
  const cat_table *t = sc->table;
  const plan_scan_ranges *r = &sc->ranges;
  xjson *j = L->j;
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
  /* a salted table (planner/salt.h): its bucket scans as chunks, the buckets in the bounds */
  char salt_chunks[64];
  int nb = plan_salt_chunks(sc);
  if (nb && !chunks[0]) {
    snprintf(salt_chunks, sizeof salt_chunks, "CLIENT %d-CHUNK PARALLEL %d-WAY ", nb, nb);
    chunks = salt_chunks;
  }
  char *salt_bounds = plan_salt_bounds(sc);
  const char *bounds = salt_bounds ? salt_bounds : r->explain ? r->explain : "";
  scan_node(j, sc, over, chunks, bounds, a);
  switch (r->kind) {
    case PLAN_SCAN_NOTHING:
      line(L, "DEGENERATE SCAN OVER %s (reads nothing: the WHERE clause cannot be true)%s",
           over, actual);
      break;
    case PLAN_SCAN_POINT:
      line(L, "%sPOINT LOOKUP ON %u KEY%s OVER %s %s%s%s", chunks, r->n_ranges, r->n_ranges == 1 ? "" : "S",
           over, r->explain ? r->explain : "", rev, actual);
      break;
    case PLAN_SCAN_RANGE:
      line(L, "%sRANGE SCAN OVER %s %s%s%s", chunks, over, bounds, rev, actual);
      break;
    case PLAN_SCAN_SKIP:
      line(L, "%sSKIP SCAN ON %u RANGES OVER %s %s%s%s", chunks, r->n_ranges, over, bounds, rev,
           actual);
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
        line(L, "SKIP TO NEXT PREFIX OF %s%s%s (%s) OVER %s%s%s%s", prefix_names(t, sc),
             sc->skip_outer.n_ranges ? " IN " : "",
             sc->skip_outer.n_ranges && sc->skip_outer.explain ? sc->skip_outer.explain : "",
             found, over, sc->skip_explain ? " " : "", sc->skip_explain ? sc->skip_explain : "",
             actual);
      else
        line(L, "%sSKIP SCAN ON EACH %s PREFIX%s%s (%s) OVER %s %s%s", chunks, prefix_names(t, sc),
             sc->skip_outer.n_ranges ? " IN " : "",
             sc->skip_outer.n_ranges && sc->skip_outer.explain ? sc->skip_outer.explain : "",
             found, over, sc->skip_explain ? sc->skip_explain : "", actual);
      break;
    }
    default: line(L, "%sFULL SCAN OVER %s%s%s", chunks, over, rev, actual); break;
  }
  free(salt_bounds);
  if (nb > 1 && !plan_par_parallel(par)) /* Phoenix's line for the merge of the buckets */
    line(L, "    CLIENT MERGE SORT (the %d salt buckets merged in key order)", nb);
  else if (nb > 1 && par->keyed) /* each chunk's buckets merged, then the chunks */
    line(L, "    CLIENT MERGE SORT (the %u chunks of the %d salt buckets merged in key order)",
         par->n_chunks, nb);
  else if (nb > 1 && par->n_chunks < (uint32_t)nb) /* sorted or aggregated per chunk */
    line(L, "    CLIENT MERGE SORT (each chunk's salt buckets merged in key order)");
  if (sc->index) {
    index_scan_lines(L, sc, names, a);
    return;
  }
  char buf[2048];
  if (r->n_key_terms) {
    terms_text(r->key_terms, r->n_key_terms, names, buf, sizeof buf);
    xj_node(j, "KEY RANGE");
    xj_str(j, "terms", buf);
    xj_str(j, "answered_by", "the key");
    xj_bool(j, "rechecked", false);
    line(L, "    KEY RANGE: %s  [answered by the key; not re-checked]", buf);
  }
  if (sc->filter_text) {
    filter_node(j, "SERVER FILTER BY", sc->filter_text, "on encoded cells");
    line(L, "    SERVER FILTER BY %s (on encoded cells, before rows are assembled)",
         sc->filter_text);
  }
  if (sc->residual) {
    plan_expr_print(sc->residual, names, buf, sizeof buf);
    char ab[128];
    filter_node(j, "CLIENT FILTER BY", buf, "after decoding");
    act_json(j, a, PLAN_STEP_FILTER);
    line(L, "    CLIENT FILTER BY %s (after decoding)%s", buf, act_text(a, PLAN_STEP_FILTER, ab, sizeof ab));
  }
  if (plan_time_range_explain(sc, a ? &a->kv : NULL, j, buf, sizeof buf)) /* time_range.h */
    line(L, "%s", buf);
  plan_pbuf fb = {buf, sizeof buf, 0, NULL};
  xj_node(j, "FAMILIES");
  xj_arr(j, "families");
  for (int i = 0; i < sc->n_families; i++) {
    const cat_family *f = &t->families[sc->families[i]];
    plan_pbuf_put(&fb, "%s%s", i ? ", " : "", f->name);
    if (f->max_versions > 1) plan_pbuf_put(&fb, " (VERSIONS %d)", f->max_versions); /* as set */
    xj_obj(j, NULL);
    xj_str(j, "name", f->name);
    if (f->max_versions > 1) xj_uint(j, "versions", (uint64_t)f->max_versions);
    if (a) family_actual(&fb, j, &a->kv, f->kv_id);
    xj_end(j);
  }
  xj_end(j);
  if (sc->cover_family > 0 && sc->table) {
    const char *cf = sc->table->families[sc->cover_family].name;
    plan_pbuf_put(&fb, "  [%s not read: every row has a cell in %s]", CAT_KEY_FAMILY, cf);
    xj_str(j, "key_family_not_read_because_every_row_in", cf);
  }
  if (sc->key_family && sc->key_family_why) {
    plan_pbuf_put(&fb, "  [%s reads the key family: %s]", CAT_KEY_FAMILY, sc->key_family_why);
    xj_str(j, "key_family_read_because", sc->key_family_why);
  }
  if (t->ttl_sec > 0) {
    plan_pbuf_put(&fb, "  [TTL %lld s: older cells are not read]", (long long)t->ttl_sec);
    xj_uint(j, "ttl_seconds", (uint64_t)t->ttl_sec);
  }
  line(L, "    FAMILIES: %s", buf);
  if (sc->kv_limit) {
    xj_node(j, "ROW LIMIT");
    xj_uint(j, "rows", sc->kv_limit);
    xj_bool(j, "pushed_into_scan", true);
    line(L, "    ROW LIMIT %" PRIu64 " (pushed into the scan)", sc->kv_limit);
  }
}

static void estimate_line(lines *L, const plan_scan *sc) {
  const plan_scan_ranges *r = &sc->ranges;
  char er[32], eb[32], tr[32], tb[32];
  plan_grouped(sc->est_rows, er, sizeof er);
  plan_human_bytes(sc->est_bytes, eb, sizeof eb);
  plan_grouped(sc->total_rows, tr, sizeof tr);
  plan_human_bytes(sc->total_bytes, tb, sizeof tb);
  const char *what = sc->index ? "index" : "table";
  bool none = r->kind == PLAN_SCAN_NOTHING;
  xj_node(L->j, "ESTIMATE");
  xj_uint(L->j, "rows", none ? 0 : sc->est_rows);
  xj_uint(L->j, "bytes", none ? 0 : sc->est_bytes);
  xj_uint(L->j, "total_rows", sc->total_rows);
  xj_uint(L->j, "total_bytes", sc->total_bytes);
  xj_str(L->j, "of", what);
  char lk[160] = "";
  if (sc->lookup && !none) {
    char n[32];
    plan_grouped(sc->est_lookups, n, sizeof n);
    snprintf(lk, sizeof lk, "; %s lookup%s into %s", n, sc->est_lookups == 1 ? "" : "s",
             sc->table->name);
    xj_uint(L->j, "lookups", sc->est_lookups);
    xj_str(L->j, "lookups_into", sc->table->name);
  }
  if (!none && (sc->pushed || sc->ix_filter || sc->residual)) {
    /* the rows the filters pass, by default selectivities (planner/selectivity.h) */
    double sel = plan_selectivity(sc->pushed) * plan_selectivity(sc->ix_filter) *
                 plan_selectivity(sc->residual);
    uint64_t after = (uint64_t)((double)sc->est_rows * sel + 0.5);
    if (after == 0 && sc->est_rows > 0) after = 1; /* a guess of none is never right */
    char n[32];
    plan_grouped(after, n, sizeof n);
    size_t k = strlen(lk);
    snprintf(lk + k, sizeof lk - k, "; ~%s row%s after filter", n, after == 1 ? "" : "s");
    xj_uint(L->j, "rows_after_filter", after);
  }
  const char *ts = sc->total_rows == 1 ? "" : "s";
  if (none)
    line(L, "    ESTIMATE: 0 rows, 0 B of %s row%s, %s in the %s", tr, ts, tb, what);
  else
    line(L, "    ESTIMATE: %s row%s, %s of %s row%s, %s in the %s%s", er,
         sc->est_rows == 1 ? "" : "s", eb, tr, ts, tb, what, lk);
}

/* The COST line (every access path costed, the chosen one marked) and the HINT line. */
static void access_lines(lines *L, const plan_scan *sc) {
  xjson *j = L->j;
  if (sc->n_access > 0) {
    char buf[2048];
    plan_pbuf b = {buf, sizeof buf, 0, NULL};
    plan_pbuf_put(&b, "    COST: ");
    xj_node(j, "COST");
    xj_arr(j, "paths");
    for (int i = 0; i < sc->n_access; i++) {
      const plan_access *p = &sc->access[i];
      char kind[32];
      snprintf(kind, sizeof kind, "%s", plan_scan_kind_name(p->kind));
      for (char *c = kind; *c; c++) *c = (char)(*c >= 'A' && *c <= 'Z' ? *c + 32 : *c);
      char rows[32];
      plan_grouped(p->rows, rows, sizeof rows);
      plan_pbuf_put(&b, "%s%s%s%s (%s%s%s) %s row%s", i ? "; " : "", sc->table->name,
          p->index ? "." : "", p->index ? p->index->name : "", kind,
          p->index ? (p->covered ? ", covered" : ", uncovered") : "",
          p->ordered ? ", in ORDER BY order" : "", rows, p->rows == 1 ? "" : "s");
      xj_obj(j, NULL);
      xj_str(j, "table", sc->table->name);
      if (p->index) xj_str(j, "index", p->index->name);
      xj_str(j, "kind", kind);
      if (p->index) xj_bool(j, "covered", p->covered);
      xj_bool(j, "in_order_by_order", p->ordered);
      xj_uint(j, "rows", p->rows);
      if (p->lookups) {
        plan_grouped(p->lookups, rows, sizeof rows);
        plan_pbuf_put(&b, " + %s lookup%s", rows, p->lookups == 1 ? "" : "s");
        xj_uint(j, "lookups", p->lookups);
      }
      plan_pbuf_put(&b, " = %.1f%s", p->cost, p->chosen ? " [chosen]" : "");
      xj_dbl(j, "cost", p->cost);
      xj_bool(j, "chosen", p->chosen);
      xj_end(j);
    }
    xj_end(j);
    line(L, "%s", buf);
  }
  if (sc->hint_note) {
    xj_node(j, "HINT");
    xj_str(j, "note", sc->hint_note);
    line(L, "    HINT: %s", sc->hint_note);
  }
  if (sc->hint_unknown) {
    xj_node(j, "HINT");
    xj_str(j, "note", sc->hint_unknown);
    line(L, "    HINT: %s", sc->hint_unknown);
  }
}


static void order_text(const plan_select *s, char *buf, size_t cap) {
  plan_pbuf b = {buf, cap, 0, s};
  if (cap) buf[0] = 0;
  for (int i = 0; i < s->n_order; i++) {
    const plan_order *o = &s->order[i];
    const plan_expr *e = s->order_src[i];
    if (i) plan_pbuf_put(&b, ", ");
    if (s->aggregate) plan_pbuf_put(&b, "%s", s->names[o->slot][0] ? s->names[o->slot] : "?");
    else plan_pbuf_expr(&b, e, s->col_names, false);
    plan_pbuf_put(&b, "%s", o->desc ? " DESC" : "");
    if (o->nulls_first == o->desc) plan_pbuf_put(&b, o->nulls_first ? " NULLS FIRST" : " NULLS LAST");
  }
}

/* The columnar aggregate pushdown (exec/colagg.h): what it does, and under EXPLAIN ANALYZE
** what it read or why the rows path ran instead. */
static void colagg_line(lines *L, int threads, bool ordered, const plan_actuals *a) {
  char act[256] = "";
  xjson *j = L->j;
  const plan_colagg_actual *c = a ? &a->colagg : NULL;
  const char *how = ordered       ? "blocks in key order (a DECIMAL sum)"
                    : threads > 1 ? "blocks split into contiguous chunks"
                                  : "blocks in key order, one chunk";
  xj_node(j, "SERVER COLUMNAR AGGREGATE");
  xj_str(j, "blocks", how);
  if (c && c->ran) {
    snprintf(act, sizeof act, "  (actual blocks=%" PRIu64 " row-way blocks=%" PRIu64
             " row-way ranges=%" PRIu64 " row-way rows=%" PRIu64 " threads=%d)", c->blocks,
             c->blocks_fallback, c->ranges, c->rows_fallback, c->threads);
    xj_obj(j, "actual");
    xj_uint(j, "blocks", c->blocks);
    xj_uint(j, "row_way_blocks", c->blocks_fallback);
    xj_uint(j, "row_way_ranges", c->ranges);
    xj_uint(j, "row_way_rows", c->rows_fallback);
    xj_int(j, "threads", c->threads);
    xj_end(j);
  } else if (c && c->tried && c->why) {
    snprintf(act, sizeof act, "  (not used: %s; the rows were assembled)", c->why);
    xj_str(j, "not_used", c->why);
  }
  line(L, "    SERVER COLUMNAR AGGREGATE: filter and aggregates evaluated per block on the "
       "value streams, %s; rows not assembled%s", how, act);
}

/* The parallel scan's line under the scan (planner/parallel.h): why it stays serial, or
** under EXPLAIN ANALYZE the rows each chunk handed on. */
static void par_line(lines *L, const plan_par *p, const plan_actuals *a) {
  xjson *j = L->j;
  if (!plan_par_parallel(p)) {
    xj_node(j, "SERIAL");
    xj_str(j, "why", p->serial_why);
    line(L, "    SERIAL: %s", p->serial_why ? p->serial_why : "one chunk");
    return;
  }
  if (!a || !a->par.ran) return;
  char buf[PLAN_PAR_MAX_CHUNKS * 24 + 64];
  size_t n = 0;
  xj_node(j, "CHUNKS");
  xj_arr(j, "rows");
  for (uint32_t i = 0; i < a->par.n && i < PLAN_PAR_MAX_CHUNKS; i++) {
    xj_uint(j, NULL, a->par.rows[i]);
    n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%" PRIu64, i ? ", " : "", a->par.rows[i]);
  }
  xj_end(j);
  line(L, "    CHUNKS: %u on %d threads (actual rows per chunk=[%s])", p->n_chunks, p->threads,
       buf);
}

/* A JSON array of the n strings texts[i]. */
static void str_array(xjson *j, const char *key, const char *const *texts, int n) {
  xj_arr(j, key);
  for (int i = 0; i < n; i++) xj_str(j, NULL, texts[i]);
  xj_end(j);
}

static void query_lines(lines *L, const plan_query *q, const plan_actuals *a) {
  const plan_select *s = q->sel;
  xjson *j = L->j;
  char buf[2048], ab[128];
  int cth = 0;
  bool col = plan_colagg_check(q, &cth);
  /* the pushdown declined at run time: the rows path ran, in the plan's chunks when it has
     them (exec_query_next), and EXPLAIN ANALYZE says what ran */
  bool declined = col && a && a->colagg.tried && !a->colagg.ran;
  bool col_chunks = col && !declined; /* the pushdown's chunks, else the plan's (q->par) */
  char chunks[64] = "";
  if (col_chunks && cth > 1)
    snprintf(chunks, sizeof chunks, "CLIENT %d-CHUNK PARALLEL %d-WAY ", cth, cth);
  else if (col_chunks || (declined && !q->par))
    snprintf(chunks, sizeof chunks, "CLIENT 1-CHUNK SERIAL ");
  else if (q->par) plan_par_prefix(q->par, chunks, sizeof chunks);
  const plan_par *par = col_chunks ? NULL : q->par; /* planner/parallel.h */
  bool pp = plan_par_parallel(par);
  if (q->join) { /* planner/explain_join.c: the tree, each leaf's own lines under it */
    char **jl = NULL;
    int nj = 0;
    if (plan_join_explain(q->join, s, a != NULL, L->A, &jl, &nj)) L->rc = 10;
    for (int i = 0; i < nj; i++) {
      xj_node(j, "JOIN PLAN");
      xj_str(j, "text", jl[i]);
      line(L, "%s", jl[i]);
    }
    bool merged = false;
    for (const plan_join_node *n = q->join; !merged && n && !n->leaf; n = n->left)
      merged = n->algo == PLAN_JOIN_MERGE;
    if (q->join_order) {
      xj_node(j, "JOIN ORDER");
      xj_str(j, "text", q->join_order);
      line(L, "    JOIN ORDER: %s  [fewest estimated rows first, then connected tables]",
           q->join_order);
    }
    const char *notes[4];
    int nn = plan_join_hint_notes(L->A, s->hint, merged, notes);
    for (int i = 0; i < nn; i++) {
      xj_node(j, "HINT");
      xj_str(j, "note", notes[i]);
      line(L, "    HINT: %s", notes[i]);
    }
  } else if (q->has_scan) {
    scan_lines(L, &q->scan, s->col_names, a, chunks, par);
    if (par) par_line(L, par, a);
  } else {
    xj_node(j, "VALUES");
    xj_str(j, "rows", "one row, no table");
    line(L, "VALUES (one row, no table)");
  }
  const plan_expr *after = q->join ? q->join_filter : !q->has_scan ? s->where : NULL;
  if (after) {
    plan_expr_print(after, q->join ? s->col_names : NULL, buf, sizeof buf);
    filter_node(j, "CLIENT FILTER BY", buf, NULL);
    act_json(j, a, PLAN_STEP_FILTER);
    line(L, "    CLIENT FILTER BY %s%s", buf, act_text(a, PLAN_STEP_FILTER, ab, sizeof ab));
  }
  if (s->aggregate) {
    plan_pbuf b = {buf, sizeof buf, 0, NULL};
    for (int i = 0; i < s->n_group; i++) plan_pbuf_put(&b, "%s%s", i ? ", " : "", s->agg_names[i]);
    char aggs[1024];
    plan_pbuf c = {aggs, sizeof aggs, 0, NULL};
    aggs[0] = 0;
    for (int i = 0; i < s->n_aggs; i++) plan_pbuf_put(&c, "%s%s", i ? ", " : "", s->aggs[i].text);
    /* over a join the rows are aggregated after the join, as in Phoenix: CLIENT */
    const char *step = s->n_group == 0 ? (q->join ? "CLIENT AGGREGATE INTO SINGLE ROW"
                                                  : "SERVER AGGREGATE INTO SINGLE ROW")
                       : q->stream_agg ? "SERVER AGGREGATE INTO ORDERED DISTINCT ROWS"
                                       : "CLIENT HASH AGGREGATE INTO DISTINCT ROWS";
    xj_node(j, step);
    if (s->n_group) str_array(j, "group_by", (const char *const *)s->agg_names, s->n_group);
    xj_arr(j, "aggregates");
    for (int i = 0; i < s->n_aggs; i++) xj_str(j, NULL, s->aggs[i].text);
    xj_end(j);
    if (s->n_group && q->stream_agg) xj_str(j, "order", "key order, streaming");
    act_json(j, a, PLAN_STEP_AGG);
    if (s->n_group == 0) {
      line(L, "    %s [%s]%s", step, aggs,
           act_text(a, PLAN_STEP_AGG, ab, sizeof ab));
    } else if (q->stream_agg) {
      line(L, "    SERVER AGGREGATE INTO ORDERED DISTINCT ROWS BY [%s] [%s] (key order, "
           "streaming)%s", buf, aggs, act_text(a, PLAN_STEP_AGG, ab, sizeof ab));
    } else {
      line(L, "    CLIENT HASH AGGREGATE INTO DISTINCT ROWS BY [%s] [%s]%s", buf, aggs,
           act_text(a, PLAN_STEP_AGG, ab, sizeof ab));
    }
    if (col) colagg_line(L, cth, plan_colagg_ordered(q), a);
    if (pp && par->merge == PLAN_PAR_AGG) {
      const char *into = s->n_group ? "DISTINCT ROWS" : "SINGLE ROW";
      xj_node(j, "CLIENT AGGREGATE");
      xj_str(j, "into", into);
      xj_str(j, "from", "partial aggregates per chunk");
      line(L, "CLIENT AGGREGATE INTO %s (partial aggregates of %u chunks combined)", into,
           par->n_chunks);
    }
    if (s->having) {
      plan_pbuf h = {buf, sizeof buf, 0, s};
      buf[0] = 0;
      plan_pbuf_expr(&h, s->having, s->agg_names, false);
      filter_node(j, "CLIENT FILTER BY", buf, "HAVING");
      act_json(j, a, PLAN_STEP_HAVING);
      line(L, "    CLIENT FILTER BY %s (HAVING)%s", buf,
           act_text(a, PLAN_STEP_HAVING, ab, sizeof ab));
    }
  }
  if (s->distinct) {
    xj_node(j, "CLIENT DISTINCT");
    act_json(j, a, PLAN_STEP_DISTINCT);
    line(L, "    CLIENT DISTINCT%s", act_text(a, PLAN_STEP_DISTINCT, ab, sizeof ab));
  }
  if (q->sort) {
    order_text(s, buf, sizeof buf);
    /* in parallel every chunk sorts (SERVER, as Phoenix says), then the client merges */
    bool per_chunk = pp && (par->merge == PLAN_PAR_MERGE_SORT || par->merge == PLAN_PAR_TOPN);
    const char *by = per_chunk ? "SERVER" : "CLIENT";
    if (q->topn) {
      xj_node(j, per_chunk ? "SERVER TOP" : "CLIENT TOP");
      xj_int(j, "rows", q->limit + q->offset);
    } else {
      xj_node(j, per_chunk ? "SERVER SORTED BY" : "CLIENT SORTED BY");
    }
    xj_str(j, "order_by", buf);
    act_json(j, a, PLAN_STEP_SORT);
    if (q->topn)
      line(L, "    %s TOP %" PRId64 " ROWS SORTED BY [%s]%s", by, q->limit + q->offset, buf,
           act_text(a, PLAN_STEP_SORT, ab, sizeof ab));
    else
      line(L, "    %s SORTED BY [%s]%s", by, buf, act_text(a, PLAN_STEP_SORT, ab, sizeof ab));
    if (by[0] == 'S') {
      xj_node(j, "CLIENT MERGE SORT");
      xj_uint(j, "chunks", par->n_chunks);
      line(L, "CLIENT MERGE SORT");
      if (q->topn && q->limit >= 0) {
        xj_node(j, "CLIENT LIMIT");
        xj_int(j, "rows", q->limit);
        line(L, "CLIENT LIMIT %" PRId64, q->limit);
      }
    }
  } else if (s->n_order) {
    order_text(s, buf, sizeof buf);
    xj_node(j, "ORDER BY");
    xj_str(j, "order_by", buf);
    xj_bool(j, "sort", false);
    xj_bool(j, "key_order_reversed", q->scan.reverse);
    line(L, "    ORDER BY [%s] is the key order%s: no sort", buf,
         q->scan.reverse ? " reversed" : "");
  }
  if (q->offset) {
    xj_node(j, "CLIENT OFFSET");
    xj_int(j, "rows", q->offset);
    act_json(j, a, PLAN_STEP_LIMIT);
    line(L, "    CLIENT OFFSET %" PRId64 "%s", q->offset, act_text(a, PLAN_STEP_LIMIT, ab, sizeof ab));
  }
  if (q->limit >= 0 && !q->limit_pushed && !q->topn) {
    xj_node(j, "CLIENT LIMIT");
    xj_int(j, "rows", q->limit);
    act_json(j, a, PLAN_STEP_LIMIT);
    line(L, "    CLIENT LIMIT %" PRId64 "%s", q->limit, act_text(a, PLAN_STEP_LIMIT, ab, sizeof ab));
  }
  if (q->has_scan) {
    access_lines(L, &q->scan);
    estimate_line(L, &q->scan);
  }
}

int plan_explain_query(const plan_query *q, const plan_actuals *a, plan_arena *A,
                       char ***out, int *n) {
  xjson off;
  memset(&off, 0, sizeof off);
  lines L = {A, NULL, 0, 0, 0, &off};
  query_lines(&L, q, a);
  *out = L.v;
  *n = L.n;
  return L.rc;
}

/* Every line of the plan into L (and, with L->j on, its node). */
static void walk(lines *L, const plan_bound *bound, const plan_query *q,
                 const plan_scan *del_scan, const plan_actuals *a) {
  char ab[128];
  xjson *j = L->j;
  if (bound->kind == SQL_STMT_UPSERT) {
    const plan_upsert *u = bound->upsert;
    xj_node(j, u->select ? "UPSERT SELECT" : "UPSERT");
    if (!u->select) xj_int(j, "rows", u->n_rows);
    xj_str(j, "into", u->table->name);
    act_json(j, a, PLAN_STEP_WRITE);
    if (u->select) line(L, "UPSERT SELECT INTO %s%s", u->table->name, act_text(a, PLAN_STEP_WRITE, ab, sizeof ab));
    else line(L, "UPSERT %d ROW%s INTO %s%s", u->n_rows, u->n_rows == 1 ? "" : "S",
              u->table->name, act_text(a, PLAN_STEP_WRITE, ab, sizeof ab));
  } else if (bound->kind == SQL_STMT_DELETE) {
    xj_node(j, "DELETE ROWS");
    xj_str(j, "from", bound->del->table->name);
    act_json(j, a, PLAN_STEP_WRITE);
    line(L, "DELETE ROWS FROM %s%s", bound->del->table->name,
         act_text(a, PLAN_STEP_WRITE, ab, sizeof ab));
  }
  if (q) query_lines(L, q, a);
  if (del_scan) {
    scan_lines(L, del_scan, bound->del->col_names, a, "", NULL);
    access_lines(L, del_scan);
    estimate_line(L, del_scan);
  }
  if ((q && q->n_subs) || bound->n_applies) { /* subqueries (planner/explain_join.c) */
    char **sl = NULL;
    int ns = 0;
    if (plan_subqueries_explain(bound, q, a, L->A, &sl, &ns)) L->rc = 10;
    for (int i = 0; i < ns; i++) {
      xj_node(j, "SUBQUERY PLAN");
      xj_str(j, "text", sl[i]);
      line(L, "%s", sl[i]);
    }
  }
  if (a) {
    xj_node(j, "TOTAL");
    xj_dbl(j, "time_ms", a->total_ms);
    line(L, "TOTAL time=%.1fms", a->total_ms);
  }
}

int plan_explain(const plan_bound *bound, const plan_query *q, const plan_scan *del_scan,
                 const plan_actuals *a, plan_arena *A, char ***out, int *n) {
  xjson off;
  memset(&off, 0, sizeof off);
  lines L = {A, NULL, 0, 0, 0, &off};
  walk(&L, bound, q, del_scan, a);
  *out = L.v;
  *n = L.n;
  return L.rc;
}

int plan_explain_json(const plan_bound *bound, const plan_query *q, const plan_scan *del_scan,
                      const plan_actuals *a, plan_arena *A, char **out) {
  xjson j;
  memset(&j, 0, sizeof j);
  j.on = true;
  lines L = {A, NULL, 0, 0, 0, &j};
  const char *stmt = bound->kind == SQL_STMT_UPSERT ? "UPSERT"
                     : bound->kind == SQL_STMT_DELETE ? "DELETE" : "SELECT";
  xj_begin(&j, stmt, a != NULL);
  walk(&L, bound, q, del_scan, a);
  char *doc = xj_finish(&j);
  *out = doc && !L.rc ? plan_arena_strndup(A, doc, strlen(doc)) : NULL;
  free(doc);
  return *out ? L.rc : 10; /* EXEC_NOMEM */
}
