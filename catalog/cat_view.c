/*
** catalog/cat_view.c: views in the catalog (contracts in catalog/cat_view.h): the view
** record of SYSTEM.CATALOG (docs/FORMAT_SQL.md (Part 3) section 4), CREATE VIEW and DROP VIEW as
** one commit each, the order in which views are kept (each after the views it reads) and
** the lookups.
**
** Row key: 'V', the view name (no 0x00 byte in it), 0x00 0x01 (a VARCHAR key column's
** terminator, as the 'T' rows). Value (family "0", qualifier "d"):
**   u8 version (1, or 2 when the view has columns of its own) | varint n + name |
**   varint n + CREATE VIEW text | varint n_deps | per dep: varint n + name |
**   version 2 only: varint n_columns (>= 1) | per column: varint n + name, varint n + family,
**   u8 type id, [u8 element type id when the type id is 15 (ARRAY)], u8 precision, u8 scale,
**   varint length, varint column id
** Strings are at most 65535 bytes and hold no 0x00 byte. Decoding takes (p, limit) and
** turns any overrun, bad version or trailing byte into CAT_ERR_CORRUPT.
** A view's own columns take their ids from the table it reads (catalog/cat_alter.c
** cat_table_take_ids), whose record is committed in the same batch as the view's row; the
** ids of dropped views and columns go to the dead-cell list (cat_drop_dead_cells).
** Not here: SQL (the text is parsed and checked by planner/bind_view.c and exec/ddl_view.c),
** the tables (catalog/catalog.c).
*/
#include "catalog/cat_view.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/catalog_int.h"
#include "kv/util/coding.h"

#define VIEW_REC_VERSION 1 /* a view without columns of its own */
#define VIEW_REC_COLUMNS 2 /* a view with columns of its own */
#define VIEW_MAX_TEXT 65535 /* bytes of a name or of the statement text */

/* ---- the record ----------------------------------------------------------------------- */
static void view_free(cat_view *v) {
  if (!v) return;
  free(v->name);
  free(v->sql);
  for (int i = 0; i < v->n_deps; i++) free(v->deps ? v->deps[i] : NULL);
  free(v->deps);
  for (int i = 0; i < v->n_columns; i++) {
    free(v->columns[i].name);
    free(v->columns[i].family);
  }
  free(v->columns);
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
  if (v->n_columns) n += (size_t)kv_varint_len((uint64_t)v->n_columns);
  for (int i = 0; i < v->n_columns; i++) {
    const cat_view_column *c = &v->columns[i];
    n += str_size(c->name) + str_size(c->family) + 4 + (size_t)kv_varint_len(c->type.length) +
         (size_t)kv_varint_len(c->id);
  }
  uint8_t *b = malloc(n), *p = b;
  if (!b) return NULL;
  *p++ = v->n_columns ? VIEW_REC_COLUMNS : VIEW_REC_VERSION;
  p = str_put(p, v->name);
  p = str_put(p, v->sql);
  p = kv_put_varint(p, (uint64_t)v->n_deps);
  for (int i = 0; i < v->n_deps; i++) p = str_put(p, v->deps[i]);
  if (v->n_columns) p = kv_put_varint(p, (uint64_t)v->n_columns);
  for (int i = 0; i < v->n_columns; i++) {
    const cat_view_column *c = &v->columns[i];
    p = str_put(p, c->name);
    p = str_put(p, c->family);
    *p++ = c->type.id;
    if (c->type.id == CAT_T_ARRAY) *p++ = c->type.elem;
    *p++ = c->type.precision;
    *p++ = c->type.scale;
    p = kv_put_varint(p, c->type.length);
    p = kv_put_varint(p, c->id);
  }
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

/* One byte from [*p, limit) (0 and *p NULL when none is left). */
static uint8_t u8_get(const uint8_t **p, const uint8_t *limit) {
  if (!*p || *p >= limit) {
    *p = NULL;
    return 0;
  }
  return *(*p)++;
}

/* The columns of a version 2 record from [p, limit) into v; the position after them, or
** NULL when they do not decode. */
static const uint8_t *columns_parse(const uint8_t *p, const uint8_t *limit, cat_view *v) {
  uint64_t nc = 0, len = 0, id = 0;
  p = p ? kv_get_varint(p, limit, &nc) : NULL;
  if (!p || nc < 1 || nc > CAT_MAX_COLUMNS || !(v->columns = calloc((size_t)nc, sizeof *v->columns)))
    return NULL;
  for (uint64_t i = 0; i < nc && p; i++) {
    cat_view_column *c = &v->columns[i];
    v->n_columns = (int)i + 1;
    c->name = str_get(&p, limit);
    c->family = str_get(&p, limit);
    c->type.id = u8_get(&p, limit);
    if (c->type.id == CAT_T_ARRAY) c->type.elem = u8_get(&p, limit);
    c->type.precision = u8_get(&p, limit);
    c->type.scale = u8_get(&p, limit);
    p = p ? kv_get_varint(p, limit, &len) : NULL;
    p = p ? kv_get_varint(p, limit, &id) : NULL;
    c->type.length = (uint32_t)len;
    c->id = (uint16_t)id;
    if (!p || !c->name || !*c->name || !c->family || !*c->family || len > UINT32_MAX ||
        id < 1 || id >= CAT_MAX_COLUMN_ID || cat_type_validate(&c->type, NULL) != CAT_OK)
      return NULL;
  }
  return p;
}

static cat_view *view_parse(const uint8_t *p, size_t n) {
  const uint8_t *limit = p + n;
  cat_view *v = calloc(1, sizeof *v);
  uint8_t version = n >= 1 ? *p++ : 0;
  if (!v || (version != VIEW_REC_VERSION && version != VIEW_REC_COLUMNS)) {
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
  if (version == VIEW_REC_COLUMNS) p = columns_parse(p, limit, v);
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

/* ---- columns of a view's own ------------------------------------------------------------ */
#define VIEW_MAX_DEPTH 64 /* views read through at most (planner/bind_view.h refuses deeper) */

/* The view v reads when it reads one name that is a view, else NULL. */
static const cat_view *view_under(const cat_catalog *cat, const cat_view *v) {
  return v && v->n_deps == 1 ? cat_find_view(cat, v->deps[0]) : NULL;
}

/* Is b the view a or one that a reads through views reading one name each? */
static bool reads_through(const cat_catalog *cat, const cat_view *a, const cat_view *b) {
  for (int d = 0; a && d < VIEW_MAX_DEPTH; d++, a = view_under(cat, a))
    if (a == b) return true;
  return false;
}

const cat_table *cat_view_table(const cat_catalog *cat, const cat_view *v) {
  for (int d = 0; v && d < VIEW_MAX_DEPTH; d++) {
    if (v->n_deps != 1) return NULL;
    const cat_table *t = cat_find_table(cat, v->deps[0]);
    if (t) return t;
    v = cat_find_view(cat, v->deps[0]);
  }
  return NULL;
}

int cat_view_find_column(const cat_view *v, const char *name) {
  for (int i = 0; v && i < v->n_columns; i++)
    if (strcmp(v->columns[i].name, name) == 0) return i;
  return -1;
}

const char *cat_view_column_owner(const cat_catalog *cat, const char *view, const char *dep,
                                  const char *column, bool *is_view) {
  const cat_view *self = view ? cat_find_view(cat, view) : NULL;
  const cat_view *start = self ? self : dep ? cat_find_view(cat, dep) : NULL;
  const cat_table *t = start ? cat_view_table(cat, start) : dep ? cat_find_table(cat, dep) : NULL;
  *is_view = false;
  if (t && cat_find_column(t, column) >= 0) return t->name;
  const cat_view_list *l = cat_views_get(cat);
  for (int i = 0; i < l->n; i++) {
    const cat_view *w = l->a[i];
    if (cat_view_find_column(w, column) < 0) continue;
    if (reads_through(cat, start, w) || (self && reads_through(cat, w, self))) {
      *is_view = true;
      return w->name;
    }
  }
  return NULL;
}

void cat_view_live_ids(const cat_catalog *cat, const char *table, bool *live, int n) {
  const cat_view_list *l = cat_views_get(cat);
  for (int i = 0; i < l->n; i++) {
    const cat_view *v = l->a[i];
    const cat_table *t = v->n_columns ? cat_view_table(cat, v) : NULL;
    if (!t || strcmp(t->name, table) != 0) continue;
    for (int c = 0; c < v->n_columns; c++)
      if (v->columns[c].id < n) live[v->columns[c].id] = true;
  }
}

/* Append cols[0..n) to nv, a view (named `self` when it exists already, else NULL) reading
** dep, with ids of table t: *nt gets t's new record. */
static int add_columns(cat_catalog *cat, cat_view *nv, const char *self, const char *dep,
                       const cat_table *t, const cat_column_def *cols, int n, cat_table **nt,
                       cat_error *err) {
  *nt = NULL;
  if (nv->n_columns + n > CAT_MAX_COLUMNS)
    return cat_err(err, CAT_ERR_INVALID, "view %s: too many columns (at most %d)", nv->name,
                   CAT_MAX_COLUMNS);
  for (int i = 0; i < n; i++) {
    const cat_column_def *cd = &cols[i];
    if (!cd->name || !*cd->name || strlen(cd->name) > 200)
      return cat_err(err, CAT_ERR_INVALID, "a view's column needs a name of 1..200 bytes");
    if (cd->null_mode == 2)
      return cat_err(err, CAT_ERR_INVALID, "column %s of view %s cannot be NOT NULL (the rows "
                     "of %s already there have no value for it)", cd->name, nv->name, t->name);
    int rc = cat_type_validate(&cd->type, err);
    if (rc) return rc;
    bool is_view = false;
    const char *owner = cat_view_column_owner(cat, self, dep, cd->name, &is_view);
    if (owner && !(self && is_view && strcmp(owner, self) == 0))
      return cat_err(err, CAT_ERR_EXISTS, "%s %s already has a column %s", is_view ? "view" :
                     "table", owner, cd->name);
    if (cat_view_find_column(nv, cd->name) >= 0)
      return cat_err(err, CAT_ERR_EXISTS, "view %s already has a column %s", nv->name, cd->name);
    for (int j = 0; j < i; j++)
      if (strcmp(cols[j].name, cd->name) == 0)
        return cat_err(err, CAT_ERR_EXISTS, "view %s: column %s given twice", nv->name, cd->name);
  }
  const char **fams = calloc((size_t)n + 1, sizeof *fams);
  uint16_t *ids = calloc((size_t)n + 1, sizeof *ids);
  int *fidx = calloc((size_t)n + 1, sizeof *fidx);
  cat_view_column *vc = realloc(nv->columns, (size_t)(nv->n_columns + n + 1) * sizeof *vc);
  if (vc) nv->columns = vc;
  int rc = fams && ids && fidx && vc ? CAT_OK : cat_err(err, CAT_ERR_NOMEM, "out of memory");
  for (int i = 0; !rc && i < n; i++) fams[i] = cols[i].family ? cols[i].family : CAT_DEFAULT_FAMILY;
  if (!rc) rc = cat_table_take_ids(cat, t, fams, n, ids, fidx, nt, err);
  for (int i = 0; !rc && i < n; i++) {
    cat_view_column *c = &nv->columns[nv->n_columns];
    memset(c, 0, sizeof *c);
    c->name = strdup(cols[i].name);
    c->family = strdup(fams[i]);
    c->type = cols[i].type;
    c->id = ids[i];
    nv->n_columns++;
    if (!c->name || !c->family) rc = cat_err(err, CAT_ERR_NOMEM, "out of memory");
  }
  if (rc) {
    cat_table_free(*nt);
    *nt = NULL;
  }
  free(fams);
  free(ids);
  free(fidx);
  return rc;
}

/* Commit v's row, with table record nt in the same batch when it is not NULL (taken over). */
static int commit_view(cat_catalog *cat, const cat_view *v, cat_table *nt, cat_error *err) {
  size_t kl = 0, vl = 0;
  uint8_t *k = view_key(v->name, &kl);
  uint8_t *val = k ? view_value(v, &vl) : NULL;
  int rc = val ? CAT_OK : cat_err(err, CAT_ERR_NOMEM, "out of memory");
  const uint8_t *keys[1] = {k}, *vals[1] = {val};
  if (rc) cat_table_free(nt);
  else if (nt) rc = cat_replace_table_with(cat, nt, 1, keys, &kl, vals, &vl, err);
  else rc = cat_commit_rows(cat, 1, keys, &kl, vals, &vl, err);
  free(k);
  free(val);
  return rc;
}

/* ---- DDL ------------------------------------------------------------------------------- */
int cat_create_view(cat_catalog *cat, const char *name, const char *sql,
                    const char *const *deps, int n_deps, cat_error *err) {
  return cat_create_view_columns(cat, name, sql, deps, n_deps, NULL, 0, err);
}

int cat_create_view_columns(cat_catalog *cat, const char *name, const char *sql,
                            const char *const *deps, int n_deps, const cat_column_def *cols,
                            int n_cols, cat_error *err) {
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
  const cat_table *t = NULL;
  if (n_cols > 0) {
    t = n_deps == 1 ? cat_find_table(cat, deps[0]) : NULL;
    if (n_deps == 1 && !t) t = cat_view_table(cat, cat_find_view(cat, deps[0]));
    if (!t)
      return cat_err(err, CAT_ERR_INVALID, "view %s cannot have columns of its own: it does not "
                     "read one table (its columns are stored in that table's rows)", name);
  }
  cat_view *v = calloc(1, sizeof *v);
  if (v) v->deps = calloc((size_t)n_deps + 1, sizeof *v->deps);
  bool oom = !v || !v->deps || !(v->name = strdup(name)) || !(v->sql = strdup(sql));
  for (int i = 0; !oom && i < n_deps; i++) {
    oom = !(v->deps[i] = strdup(deps[i]));
    v->n_deps = i + 1;
  }
  int rc = oom ? cat_err(err, CAT_ERR_NOMEM, "out of memory") : CAT_OK;
  cat_table *nt = NULL;
  if (!rc && n_cols > 0) rc = add_columns(cat, v, NULL, deps[0], t, cols, n_cols, &nt, err);
  if (!rc) rc = commit_view(cat, v, nt, err);
  if (!rc && append(cat_views_of(cat), v)) rc = cat_err(err, CAT_ERR_NOMEM, "out of memory");
  if (rc) view_free(v);
  return rc;
}

int cat_alter_view(cat_catalog *cat, const char *name, const char *sql,
                   const cat_column_def *add, int n_add, const char *const *drop, int n_drop,
                   cat_error *err) {
  cat_view_list *l = cat_views_of(cat);
  int j = name ? find(l, name) : -1;
  if (j < 0) return cat_err(err, CAT_ERR_NOTFOUND, "view %s does not exist", name ? name : "?");
  if (!sql || strlen(sql) > VIEW_MAX_TEXT)
    return cat_err(err, CAT_ERR_INVALID, "the text of view %s is over %d bytes", name,
                   VIEW_MAX_TEXT);
  const cat_view *v = l->a[j];
  const cat_table *t = cat_view_table(cat, v);
  if (!t)
    return cat_err(err, CAT_ERR_INVALID, "view %s cannot have columns of its own: it does not "
                   "read one table (its columns are stored in that table's rows)", name);
  size_t vl = 0;
  uint8_t *val = view_value(v, &vl); /* a copy of v to change */
  cat_view *nv = val ? view_parse(val, vl) : NULL;
  free(val);
  char *text = nv ? strdup(sql) : NULL;
  if (!text) {
    view_free(nv);
    return cat_err(err, CAT_ERR_NOMEM, "out of memory");
  }
  free(nv->sql);
  nv->sql = text;
  int rc = CAT_OK;
  for (int i = 0; !rc && i < n_drop; i++) {
    int c = cat_view_find_column(nv, drop[i]);
    if (c < 0) {
      rc = cat_err(err, CAT_ERR_NOTFOUND, "view %s has no column %s of its own", name, drop[i]);
      break;
    }
    free(nv->columns[c].name);
    free(nv->columns[c].family);
    memmove(&nv->columns[c], &nv->columns[c + 1], (size_t)(nv->n_columns - c - 1) * sizeof *nv->columns);
    nv->n_columns--;
  }
  cat_table *nt = NULL;
  if (!rc && n_add > 0) rc = add_columns(cat, nv, name, v->deps[0], t, add, n_add, &nt, err);
  if (!rc) rc = commit_view(cat, nv, nt, err);
  if (rc) {
    view_free(nv);
    return rc;
  }
  view_free(l->a[j]);
  l->a[j] = nv;
  t = cat_view_table(cat, nv); /* the table's record may be new */
  return n_drop > 0 && t ? cat_drop_dead_cells(cat, t, err) : CAT_OK;
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
  /* the tables holding columns of the dropped views: their ids become dead cells */
  char **tables = rc ? NULL : calloc((size_t)n + 1, sizeof *tables);
  if (!rc && !tables) rc = cat_err(err, CAT_ERR_NOMEM, "out of memory");
  for (int i = 0; !rc && i < n; i++) {
    const cat_view *v = cat_find_view(cat, names[i]);
    const cat_table *t = v && v->n_columns ? cat_view_table(cat, v) : NULL;
    if (t && !(tables[i] = strdup(t->name))) rc = cat_err(err, CAT_ERR_NOMEM, "out of memory");
  }
  if (!rc) rc = cat_commit_rows(cat, n, (const uint8_t *const *)keys, klen, vals, vlen, err);
  for (int i = 0; !rc && i < n; i++) {
    int j = find(l, names[i]);
    if (j < 0) continue; /* named twice */
    view_free(l->a[j]);
    memmove(&l->a[j], &l->a[j + 1], (size_t)(l->n - j - 1) * sizeof *l->a);
    l->n--;
  }
  for (int i = 0; !rc && i < n; i++) {
    const cat_table *t = tables[i] ? cat_find_table(cat, tables[i]) : NULL;
    if (t) rc = cat_drop_dead_cells(cat, t, err);
  }
  for (int i = 0; tables && i < n; i++) free(tables[i]);
  free(tables);
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
