/*
** catalog/cat_view.c: views in the catalog (contracts in catalog/cat_view.h): the view
** record of SYSTEM.CATALOG (docs/FORMAT_SQL.md (Part 3) section 4), CREATE VIEW and DROP VIEW as
** one commit each, the order in which views are kept (each after the views it reads) and
** the lookups.
**
** Row key: 'V', the view name (no 0x00 byte in it), 0x00 0x01 (a VARCHAR key column's
** terminator, as the 'T' rows). Value (family "0", qualifier "d"):
**   u8 version (1) | varint n + name | varint n + CREATE VIEW text | varint n_deps |
**   per dep: varint n + name
** Strings are at most 65535 bytes and hold no 0x00 byte. Decoding takes (p, limit) and
** turns any overrun, bad version or trailing byte into CAT_ERR_CORRUPT.
** Not here: SQL (the text is parsed and checked by planner/bind_view.c and exec/ddl_view.c),
** the tables (catalog/catalog.c).
*/
#include "catalog/cat_view.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/catalog_int.h"
#include "kv/coding.h"

#define VIEW_REC_VERSION 1
#define VIEW_MAX_TEXT 65535 /* bytes of a name or of the statement text */

/* ---- the record ----------------------------------------------------------------------- */
static void view_free(cat_view *v) {
  if (!v) return;
  free(v->name);
  free(v->sql);
  for (int i = 0; i < v->n_deps; i++) free(v->deps ? v->deps[i] : NULL);
  free(v->deps);
  free(v);
}

/* Bytes of a length-prefixed string. */
static size_t str_size(const char *s) {
  size_t n = strlen(s);
  return (size_t)kv_varint_len(n) + n;
}
static uint8_t *str_put(uint8_t *p, const char *s) {
  size_t n = strlen(s);
  p = kv_put_varint(p, n);
  memcpy(p, s, n);
  return p + n;
}

/* The value of v's row into a malloc'd buffer (*len bytes); NULL when out of memory. */
static uint8_t *view_value(const cat_view *v, size_t *len) {
  size_t n = 1 + str_size(v->name) + str_size(v->sql) + (size_t)kv_varint_len((uint64_t)v->n_deps);
  for (int i = 0; i < v->n_deps; i++) n += str_size(v->deps[i]);
  uint8_t *b = malloc(n), *p = b;
  if (!b) return NULL;
  *p++ = VIEW_REC_VERSION;
  p = str_put(p, v->name);
  p = str_put(p, v->sql);
  p = kv_put_varint(p, (uint64_t)v->n_deps);
  for (int i = 0; i < v->n_deps; i++) p = str_put(p, v->deps[i]);
  *len = (size_t)(p - b);
  return b;
}

/* The row key of view `name` into a malloc'd buffer (*len bytes); NULL when out of memory. */
static uint8_t *view_key(const char *name, size_t *len) {
  size_t n = strlen(name);
  uint8_t *k = malloc(n + 3);
  if (!k) return NULL;
  k[0] = 'V';
  memcpy(k + 1, name, n);
  k[n + 1] = 0x00;
  k[n + 2] = 0x01;
  *len = n + 3;
  return k;
}

/* A length-prefixed string from [*p, limit), NULL when it overruns, is too long or holds a
** 0x00 byte (or out of memory). */
static char *str_get(const uint8_t **p, const uint8_t *limit) {
  uint64_t n = 0;
  const uint8_t *q = *p ? kv_get_varint(*p, limit, &n) : NULL;
  if (!q || n > VIEW_MAX_TEXT || n > (uint64_t)(limit - q) || memchr(q, 0, (size_t)n)) {
    *p = NULL;
    return NULL;
  }
  char *s = malloc((size_t)n + 1);
  if (!s) {
    *p = NULL;
    return NULL;
  }
  memcpy(s, q, (size_t)n);
  s[n] = 0;
  *p = q + n;
  return s;
}

static cat_view *view_parse(const uint8_t *p, size_t n) {
  const uint8_t *limit = p + n;
  cat_view *v = calloc(1, sizeof *v);
  if (!v || n < 1 || *p++ != VIEW_REC_VERSION) {
    free(v);
    return NULL;
  }
  v->name = str_get(&p, limit);
  v->sql = str_get(&p, limit);
  uint64_t nd = 0;
  p = p ? kv_get_varint(p, limit, &nd) : NULL;
  if (!p || nd > 4096 || !(v->deps = calloc((size_t)nd + 1, sizeof *v->deps))) {
    view_free(v);
    return NULL;
  }
  for (uint64_t i = 0; i < nd && p; i++) {
    v->deps[i] = str_get(&p, limit);
    v->n_deps = (int)i + 1;
  }
  if (!p || p != limit || !v->name || !v->sql || !*v->name) {
    view_free(v);
    return NULL;
  }
  return v;
}

/* ---- the list -------------------------------------------------------------------------- */
static int append(cat_view_list *l, cat_view *v) {
  cat_view **a = realloc(l->a, (size_t)(l->n + 1) * sizeof *a);
  if (!a) return CAT_ERR_NOMEM;
  l->a = a;
  l->a[l->n++] = v;
  return CAT_OK;
}

static int find(const cat_view_list *l, const char *name) {
  for (int i = 0; i < l->n; i++)
    if (strcmp(l->a[i]->name, name) == 0) return i;
  return -1;
}

int cat_view_load(cat_view_list *l, const uint8_t *p, size_t n, cat_error *err) {
  cat_view *v = view_parse(p, n);
  if (!v) return cat_err(err, CAT_ERR_CORRUPT, "corrupt SYSTEM.CATALOG view row");
  if (append(l, v)) {
    view_free(v);
    return cat_err(err, CAT_ERR_NOMEM, "out of memory");
  }
  return CAT_OK;
}

void cat_view_list_free(cat_view_list *l) {
  for (int i = 0; i < l->n; i++) view_free(l->a[i]);
  free(l->a);
  l->a = NULL;
  l->n = 0;
}

int cat_view_order(cat_catalog *cat, cat_error *err) {
  cat_view_list *l = cat_views_of(cat);
  /* Move each view whose reads are all placed to the placed prefix, until none is left; a
  ** round that places nothing is a cycle or a missing name. */
  int placed = 0;
  while (placed < l->n) {
    int before = placed;
    for (int i = placed; i < l->n; i++) {
      cat_view *v = l->a[i];
      bool ready = true;
      for (int d = 0; d < v->n_deps && ready; d++) {
        int j = find(l, v->deps[d]);
        ready = j >= 0 ? j < placed : cat_find_table(cat, v->deps[d]) != NULL;
      }
      if (!ready) continue;
      memmove(&l->a[placed + 1], &l->a[placed], (size_t)(i - placed) * sizeof *l->a);
      l->a[placed++] = v;
    }
    if (placed == before)
      return cat_err(err, CAT_ERR_CORRUPT, "SYSTEM.CATALOG view %s reads a table or view that "
                     "is not in the catalog", l->a[placed]->name);
  }
  return CAT_OK;
}

/* ---- DDL ------------------------------------------------------------------------------- */
int cat_create_view(cat_catalog *cat, const char *name, const char *sql,
                    const char *const *deps, int n_deps, cat_error *err) {
  if (!name || !*name || strlen(name) > 200)
    return cat_err(err, CAT_ERR_INVALID, "a view name must be 1..200 bytes long");
  if (!sql || strlen(sql) > VIEW_MAX_TEXT)
    return cat_err(err, CAT_ERR_INVALID, "the text of view %s is over %d bytes", name,
                   VIEW_MAX_TEXT);
  if (cat_find_table(cat, name))
    return cat_err(err, CAT_ERR_EXISTS, "a table named %s exists", name);
  if (cat_find_view(cat, name)) return cat_err(err, CAT_ERR_EXISTS, "view %s already exists", name);
  for (int i = 0; i < n_deps; i++)
    if (!cat_find_table(cat, deps[i]) && !cat_find_view(cat, deps[i]))
      return cat_err(err, CAT_ERR_NOTFOUND, "view %s reads %s, which is not a table or view",
                     name, deps[i]);
  cat_view *v = calloc(1, sizeof *v);
  if (v) v->deps = calloc((size_t)n_deps + 1, sizeof *v->deps);
  bool oom = !v || !v->deps || !(v->name = strdup(name)) || !(v->sql = strdup(sql));
  for (int i = 0; !oom && i < n_deps; i++) {
    oom = !(v->deps[i] = strdup(deps[i]));
    v->n_deps = i + 1;
  }
  size_t kl = 0, vl = 0;
  uint8_t *k = oom ? NULL : view_key(name, &kl);
  uint8_t *val = k ? view_value(v, &vl) : NULL;
  int rc = val ? CAT_OK : cat_err(err, CAT_ERR_NOMEM, "out of memory");
  if (!rc) {
    const uint8_t *keys[1] = {k}, *vals[1] = {val};
    rc = cat_commit_rows(cat, 1, keys, &kl, vals, &vl, err);
  }
  free(k);
  free(val);
  if (!rc && append(cat_views_of(cat), v)) rc = cat_err(err, CAT_ERR_NOMEM, "out of memory");
  if (rc) view_free(v);
  return rc;
}

int cat_drop_views(cat_catalog *cat, const char *const *names, int n, cat_error *err) {
  cat_view_list *l = cat_views_of(cat);
  for (int i = 0; i < n; i++)
    if (find(l, names[i]) < 0) return cat_err(err, CAT_ERR_NOTFOUND, "view %s does not exist", names[i]);
  uint8_t **keys = calloc((size_t)n + 1, sizeof *keys);
  size_t *klen = calloc((size_t)n + 1, sizeof *klen);
  const uint8_t **vals = calloc((size_t)n + 1, sizeof *vals);
  size_t *vlen = calloc((size_t)n + 1, sizeof *vlen);
  int rc = keys && klen && vals && vlen ? CAT_OK : cat_err(err, CAT_ERR_NOMEM, "out of memory");
  for (int i = 0; !rc && i < n; i++)
    if (!(keys[i] = view_key(names[i], &klen[i]))) rc = cat_err(err, CAT_ERR_NOMEM, "out of memory");
  if (!rc) rc = cat_commit_rows(cat, n, (const uint8_t *const *)keys, klen, vals, vlen, err);
  for (int i = 0; !rc && i < n; i++) {
    int j = find(l, names[i]);
    if (j < 0) continue; /* named twice */
    view_free(l->a[j]);
    memmove(&l->a[j], &l->a[j + 1], (size_t)(l->n - j - 1) * sizeof *l->a);
    l->n--;
  }
  for (int i = 0; keys && i < n; i++) free(keys[i]);
  free(keys);
  free(klen);
  free(vals);
  free(vlen);
  return rc;
}

/* ---- lookups --------------------------------------------------------------------------- */
const cat_view *cat_find_view(const cat_catalog *cat, const char *name) {
  const cat_view_list *l = cat_views_get(cat);
  int i = name ? find(l, name) : -1;
  return i < 0 ? NULL : l->a[i];
}

const cat_view *cat_find_view_folded(const cat_catalog *cat, const char *name) {
  const cat_view *v = cat_find_view(cat, name);
  if (v || !name) return v;
  char up[256];
  size_t n = strlen(name);
  if (n >= sizeof up) return NULL;
  for (size_t k = 0; k <= n; k++) up[k] = (char)toupper((unsigned char)name[k]);
  return cat_find_view(cat, up);
}

int cat_view_count(const cat_catalog *cat) { return cat_views_get(cat)->n; }

const cat_view *cat_view_at(const cat_catalog *cat, int i) {
  const cat_view_list *l = cat_views_get(cat);
  return i < 0 || i >= l->n ? NULL : l->a[i];
}

bool cat_view_reads(const cat_view *v, const char *name) {
  for (int i = 0; i < v->n_deps; i++)
    if (strcmp(v->deps[i], name) == 0) return true;
  return false;
}
