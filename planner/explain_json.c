/*
** planner/explain_json.c: the JSON writer behind EXPLAIN (FORMAT JSON) (planner/explain_int.h):
** a growing buffer, strings escaped as RFC 8259 asks (quote, backslash, control characters;
** UTF-8 passed through), numbers as integers or with one decimal. The document has one node
** a line:
**   {"statement": "SELECT", "analyze": true, "plan": [
**     {"step": "RANGE SCAN", "over": "SENSOR", ...},
**     {"step": "FAMILIES", "families": [{"name": "READINGS", "actual": {...}}]}
**   ]}
** Not here: what goes into the nodes (planner/explain.c).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/explain_int.h"

static void put(xjson *j, const char *s, size_t n) {
  if (!j->on || j->oom) return;
  if (j->n + n + 1 > j->cap) {
    size_t nc = j->cap ? j->cap * 2 : 1024;
    while (nc < j->n + n + 1) nc *= 2;
    char *np = realloc(j->p, nc);
    if (!np) {
      j->oom = true;
      return;
    }
    j->p = np;
    j->cap = nc;
  }
  memcpy(j->p + j->n, s, n);
  j->n += n;
  j->p[j->n] = 0;
}

static void puts_(xjson *j, const char *s) { put(j, s, strlen(s)); }

static void quoted(xjson *j, const char *s) {
  static const char hex[] = "0123456789abcdef";
  puts_(j, "\"");
  const char *run = s;
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p >= 0x20 && *p != '"' && *p != '\\') continue;
    put(j, run, (size_t)((const char *)p - run));
    char e[8];
    if (*p == '"' || *p == '\\') snprintf(e, sizeof e, "\\%c", *p);
    else if (*p == '\n') strcpy(e, "\\n");
    else if (*p == '\t') strcpy(e, "\\t");
    else snprintf(e, sizeof e, "\\u00%c%c", hex[*p >> 4], hex[*p & 15]);
    puts_(j, e);
    run = (const char *)p + 1;
  }
  puts_(j, run);
  puts_(j, "\"");
}

/* The separator and key of the next member at the current level. */
static void key(xjson *j, const char *k) {
  if (!j->on || j->lvl <= 0 || j->lvl >= XJ_DEPTH) return;
  if (!j->first[j->lvl]) puts_(j, ", ");
  j->first[j->lvl] = false;
  if (j->arr[j->lvl]) return;
  quoted(j, k);
  puts_(j, ": ");
}

void xj_begin(xjson *j, const char *stmt, bool analyze) {
  if (!j->on) return;
  puts_(j, "{\"statement\": ");
  quoted(j, stmt);
  puts_(j, analyze ? ", \"analyze\": true, \"plan\": [" : ", \"analyze\": false, \"plan\": [");
}

void xj_node(xjson *j, const char *step) {
  if (!j->on) return;
  if (j->lvl > 0) xj_line(j, "?"); /* a node left open: close it */
  puts_(j, j->nodes ? ",\n  {" : "\n  {");
  j->lvl = 1;
  j->first[1] = true;
  j->arr[1] = false;
  key(j, "step");
  quoted(j, step);
}

void xj_str(xjson *j, const char *k, const char *v) {
  if (!j->on || !v || j->lvl <= 0) return;
  key(j, k);
  quoted(j, v);
}

void xj_uint(xjson *j, const char *k, uint64_t v) {
  if (!j->on || j->lvl <= 0) return;
  char b[32];
  snprintf(b, sizeof b, "%llu", (unsigned long long)v);
  key(j, k);
  puts_(j, b);
}

void xj_int(xjson *j, const char *k, int64_t v) {
  if (!j->on || j->lvl <= 0) return;
  char b[32];
  snprintf(b, sizeof b, "%lld", (long long)v);
  key(j, k);
  puts_(j, b);
}

void xj_dbl(xjson *j, const char *k, double v) {
  if (!j->on || j->lvl <= 0) return;
  char b[64];
  if (v != v || v > 1e300 || v < -1e300) v = 0; /* JSON has no NaN or infinity */
  snprintf(b, sizeof b, "%.1f", v);
  key(j, k);
  puts_(j, b);
}

void xj_bool(xjson *j, const char *k, bool v) {
  if (!j->on || j->lvl <= 0) return;
  key(j, k);
  puts_(j, v ? "true" : "false");
}

static void open_(xjson *j, const char *k, bool arr) {
  if (!j->on || j->lvl <= 0) return;
  key(j, k);
  puts_(j, arr ? "[" : "{");
  if (j->lvl + 1 < XJ_DEPTH) {
    j->lvl++;
    j->first[j->lvl] = true;
    j->arr[j->lvl] = arr;
  }
}

void xj_obj(xjson *j, const char *k) { open_(j, k, false); }
void xj_arr(xjson *j, const char *k) { open_(j, k, true); }

void xj_end(xjson *j) {
  if (!j->on || j->lvl <= 1) return;
  puts_(j, j->arr[j->lvl] ? "]" : "}");
  j->lvl--;
}

void xj_line(xjson *j, const char *text) {
  if (!j->on) return;
  if (j->lvl <= 0) { /* a line nobody described */
    xj_node(j, "?");
    xj_str(j, "text", text);
  }
  while (j->lvl > 1) xj_end(j);
  puts_(j, "}");
  j->lvl = 0;
  j->nodes++;
}

char *xj_finish(xjson *j) {
  if (!j->on) return NULL;
  if (j->lvl > 0) xj_line(j, "?");
  puts_(j, j->nodes ? "\n]}" : "]}");
  if (j->oom) {
    free(j->p);
    j->p = NULL;
  }
  char *r = j->p;
  j->p = NULL;
  j->n = j->cap = 0;
  return r;
}
