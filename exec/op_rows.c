/*
** exec/op_rows.c: rows the executor keeps beyond one step: a materialized row (one malloc
** holding the values, their string bytes and optionally a group's accumulators), a hash
** table of rows keyed by their leading values (GROUP BY groups, DISTINCT), and the ORDER BY
** comparison used by the sort and the top-n heap.
**
** Not here: the pipeline (exec/op_query.c).
*/
#include <stdlib.h>
#include <string.h>

#include "exec/op.h"

static bool has_bytes(const cat_value *v) {
  return !v->is_null && cat_type_has_bytes(v->type.id);
}

exec_mrow *exec_mrow_make(const cat_value *v, int n, int n_aggs) {
  size_t extra = 0;
  for (int i = 0; i < n; i++)
    if (has_bytes(&v[i])) extra += v[i].u.s.len;
  size_t head = sizeof(exec_mrow) + (size_t)n * sizeof(cat_value);
  size_t aggs = (size_t)n_aggs * sizeof(exec_agg);
  head = (head + 15) & ~(size_t)15;
  size_t total = head + aggs + extra;
  exec_mrow *r = malloc(total);
  if (!r) return NULL;
  memset(r, 0, head + aggs);
  r->bytes = total;
  r->n = n;
  r->aggs = n_aggs ? (exec_agg *)((char *)r + head) : NULL;
  uint8_t *p = (uint8_t *)r + head + aggs;
  for (int i = 0; i < n; i++) {
    r->v[i] = v[i];
    if (has_bytes(&v[i]) && v[i].u.s.len) {
      memcpy(p, v[i].u.s.p, v[i].u.s.len);
      r->v[i].u.s.p = p;
      p += v[i].u.s.len;
    }
  }
  return r;
}

void exec_mrow_free(exec_mrow *r, int n_aggs) {
  if (!r) return;
  for (int i = 0; r->aggs && i < n_aggs; i++) exec_agg_free(&r->aggs[i]);
  free(r);
}

static uint64_t key_hash(const cat_value *k, int n) {
  uint64_t h = 0x1234567;
  for (int i = 0; i < n; i++) h = (h ^ exec_value_hash(&k[i])) * 0x100000001B3ull + 0x9E37;
  return h ? h : 1;
}

uint64_t exec_rowset_hash(const cat_value *key, int n_key) { return key_hash(key, n_key); }

static bool key_eq(const cat_value *a, const cat_value *b, int n) {
  for (int i = 0; i < n; i++) {
    if (a[i].is_null != b[i].is_null) return false;
    if (!a[i].is_null && exec_value_cmp(&a[i], &b[i]) != 0) return false;
  }
  return true;
}

static bool grow(exec_rowset *s) {
  size_t nc = s->cap ? s->cap * 2 : 64;
  exec_mrow **ns = calloc(nc, sizeof *ns);
  if (!ns) return false;
  for (size_t i = 0; i < s->cap; i++) {
    exec_mrow *r = s->slots[i];
    if (!r) continue;
    size_t j = r->hash & (nc - 1);
    while (ns[j]) j = (j + 1) & (nc - 1);
    ns[j] = r;
  }
  free(s->slots);
  s->slots = ns;
  s->cap = nc;
  return true;
}

exec_mrow *exec_rowset_find(exec_rowset *s, const cat_value *key, int n_values, int n_aggs,
                            bool insert, bool *added, bool *oom) {
  if (added) *added = false;
  if (oom) *oom = false;
  if (s->last && key_eq(s->last->v, key, s->n_key)) return s->last;
  uint64_t h = key_hash(key, s->n_key);
  if (s->cap) {
    size_t j = h & (s->cap - 1);
    while (s->slots[j]) {
      exec_mrow *r = s->slots[j];
      if (r->hash == h && key_eq(r->v, key, s->n_key)) return s->last = r;
      j = (j + 1) & (s->cap - 1);
    }
  }
  if (!insert) return NULL;
  if ((s->n + 1) * 2 > s->cap && !grow(s)) {
    if (oom) *oom = true;
    return NULL;
  }
  exec_mrow *r = exec_mrow_make(key, n_values, n_aggs);
  if (!r) {
    if (oom) *oom = true;
    return NULL;
  }
  r->hash = h;
  size_t j = h & (s->cap - 1);
  while (s->slots[j]) j = (j + 1) & (s->cap - 1);
  s->slots[j] = r;
  s->n++;
  s->bytes += r->bytes;
  if (added) *added = true;
  return s->last = r;
}

void exec_rowset_free(exec_rowset *s, int n_aggs) {
  for (size_t i = 0; i < s->cap; i++) exec_mrow_free(s->slots[i], n_aggs);
  free(s->slots);
  int nk = s->n_key;
  memset(s, 0, sizeof *s);
  s->n_key = nk;
}

int exec_order_cmp(const plan_order *o, int n, const cat_value *a, const cat_value *b) {
  for (int i = 0; i < n; i++) {
    const cat_value *x = &a[o[i].slot], *y = &b[o[i].slot];
    int c;
    if (x->is_null || y->is_null) {
      if (x->is_null && y->is_null) continue;
      c = x->is_null ? -1 : 1;
      if (!o[i].nulls_first) c = -c;
      return c;
    }
    c = exec_value_cmp(x, y);
    if (c) return o[i].desc ? -c : c;
  }
  return 0;
}
