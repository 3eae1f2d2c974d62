/*
** planner/bind_dyncol.c: Phoenix's dynamic columns in the binder. A statement may name
** columns the catalog does not have, with their types: `UPSERT INTO t (k, f.c VARCHAR)
** VALUES ...` writes a cell of column c in family f, `SELECT c FROM t (f.c VARCHAR)` reads
** it back (NULL in the rows without the cell). The statement then works on a copy of the
** table, made here in the plan arena, with those columns after the table's own (as
** Phoenix appends them, also to `*`); each has id 0 and the qualifier `00` + its name
** (catalog/cat_dyncol.c, docs/FORMAT_SQL.md (Part 3) "Dynamic columns"), so everything
** that reads or writes a table's columns (exec/rowcodec.c, exec/scan.c, the filter) sees
** them as columns of the table, and nothing is recorded in the catalog.
**
** A family the table does not have is created by the UPSERT that writes the column, as
** ALTER TABLE ADD creates an added column's (the copy has it, plan_upsert.new_families names
** it, exec/engine.c creates it and binds the statement again); a query's is an error.
**
** Refused, with the position of the column: a name the table declares (a dynamic column
** never shadows a declared one), a name given twice, a family that starts with '_', a
** name over CAT_DYN_NAME_MAX bytes, a bad type; and dynamic columns on what is not a table.
**
** Not here: the grammar (sql/parse.y: upcols, dyncols), the cells (exec/rowcodec.c).
*/
#include <stdio.h>
#include <string.h>

#include "catalog/status.h"
#include "planner/plan_bind.h"

/* "0, A, B": the user families of t, for messages. */
static void family_names(const cat_table *t, char *buf, size_t cap) {
  size_t n = 0;
  buf[0] = 0;
  for (int f = 1; f < t->n_families && n < cap; f++) {
    int k = snprintf(buf + n, cap - n, "%s%s", n ? ", " : "", t->families[f].name);
    if (k > 0) n += (size_t)k;
  }
  if (!buf[0]) snprintf(buf, cap, "none");
}

/* The family `fam` of the copy nt for a dynamic column at off: an UPSERT (up) adds one nt
** lacks (its families array has KV_MAX_FAMILIES slots) and names it in up->new_families. -1
** with b's error set when there is none. */
static int dyn_family(binder *b, cat_table *nt, const char *fam, const char *col, uint32_t off,
                      plan_upsert *up) {
  int fi = fam[0] == '_' ? -1 : cat_find_family(nt, fam);
  if (fi > 0) return fi;
  if (fam[0] == '_' || !up) {
    char fams[200];
    family_names(nt, fams, sizeof fams);
    return bind_error(b, EXEC_ERROR, off,
                      "family \"%s\" of dynamic column \"%s\" is not a family of table %s (its "
                      "families: %s)%s", fam, col, nt->name, fams,
                      fam[0] == '_' ? ": names starting with '_' are reserved"
                                    : ": an UPSERT of the column creates it, as ALTER TABLE ADD "
                                      "does"), -1;
  }
  if (nt->n_families >= (int)KV_MAX_FAMILIES)
    return bind_error(b, EXEC_ERROR, off, "table %s: too many families (at most %u) for the "
                      "family \"%s\" of dynamic column \"%s\"", nt->name, KV_MAX_FAMILIES, fam,
                      col), -1;
  const char **names = plan_arena_alloc(b->A, KV_MAX_FAMILIES * sizeof *names);
  char *name = plan_arena_strndup(b->A, fam, strlen(fam));
  if (!names || !name) return bind_error(b, EXEC_NOMEM, off, "out of memory"), -1;
  if (up->n_new_families)
    memcpy(names, up->new_families, (size_t)up->n_new_families * sizeof *names);
  names[up->n_new_families++] = name;
  up->new_families = names;
  cat_family *f = &nt->families[nt->n_families];
  memset(f, 0, sizeof *f);
  f->name = name;
  f->max_versions = 1;
  f->ttl_sec = nt->ttl_sec;
  f->kv_id = UINT32_MAX; /* not in the store yet: the statement is bound again once it is */
  return nt->n_families++;
}

/* Fill dynamic column c (of the copy nt) from cn; EXEC_OK or b's error. */
static int dyn_column(binder *b, const cat_table *t, cat_table *nt, const sql_colname *cn,
                      cat_column *c, plan_upsert *up) {
  const char *fam = cn->family ? cn->family : CAT_DEFAULT_FAMILY;
  int ci = cat_find_column(t, cn->name);
  if (ci >= 0) {
    char tb[48];
    const cat_column *d = &t->columns[ci];
    return bind_error(b, EXEC_ERROR, cn->off,
                      "dynamic column \"%s\" has the name of column %s%s%s (%s) of table %s: a "
                      "dynamic column must have a name the table does not declare",
                      cn->name, d->pk_pos < 0 ? t->families[d->family].name : "",
                      d->pk_pos < 0 ? "." : "", d->name, cat_type_format(&d->type, tb, sizeof tb),
                      t->name);
  }
  for (int j = t->n_columns; j < nt->n_columns; j++)
    if (strcmp(nt->columns[j].name, cn->name) == 0)
      return bind_error(b, EXEC_ERROR, cn->off, "dynamic column \"%s\" is given twice", cn->name);
  int fi = dyn_family(b, nt, fam, cn->name, cn->off, up);
  if (fi < 0) return b->rc;
  uint8_t *q = plan_arena_alloc(b->A, CAT_DYN_QUAL_MAX);
  if (!q) return bind_error(b, EXEC_NOMEM, cn->off, "out of memory");
  size_t qlen = cat_dynamic_qualifier(cn->name, q);
  if (!qlen)
    return bind_error(b, EXEC_ERROR, cn->off, "dynamic column name \"%.40s...\" is over %d bytes",
                      cn->name, CAT_DYN_NAME_MAX);
  memset(c, 0, sizeof *c);
  if (bind_type(b, cn->type, &c->type)) return b->rc;
  c->name = plan_arena_strndup(b->A, cn->name, strlen(cn->name));
  if (!c->name) return bind_error(b, EXEC_NOMEM, cn->off, "out of memory");
  c->nullable = true;
  c->pk_pos = -1;
  c->family = fi;
  c->id = 0;
  c->dyn_qual = q;
  c->dyn_qual_len = (uint32_t)qlen;
  return EXEC_OK;
}

const cat_table *bind_dyn_table(binder *b, const cat_table *t, const sql_colname_list *cols,
                                plan_upsert *up) {
  int n = 0;
  for (int i = 0; cols && i < cols->n; i++) n += cols->a[i].type != NULL;
  if (n == 0) return t;
  if (t->n_columns + n > CAT_MAX_COLUMNS) {
    bind_error(b, EXEC_ERROR, cols->a[0].off, "table %s with %d dynamic columns has more than "
               "%d columns", t->name, n, CAT_MAX_COLUMNS);
    return NULL;
  }
  cat_table *nt = plan_arena_alloc(b->A, sizeof *nt);
  cat_column *c = plan_arena_alloc(b->A, (size_t)(t->n_columns + n) * sizeof *c);
  cat_family *fams = plan_arena_alloc(b->A, KV_MAX_FAMILIES * sizeof *fams);
  if (!nt || !c || !fams) {
    bind_error(b, EXEC_NOMEM, cols->a[0].off, "out of memory");
    return NULL;
  }
  *nt = *t;
  memcpy(c, t->columns, (size_t)t->n_columns * sizeof *c);
  memcpy(fams, t->families, (size_t)t->n_families * sizeof *fams);
  nt->columns = c;
  nt->families = fams;
  for (int i = 0; i < cols->n; i++) {
    if (!cols->a[i].type) continue;
    if (dyn_column(b, t, nt, &cols->a[i], &c[nt->n_columns], up)) return NULL;
    nt->n_columns++;
    nt->n_dynamic++;
  }
  return nt;
}

int bind_dyn_refuse(binder *b, const sql_colname_list *cols, const char *name,
                    const char *what) {
  for (int i = 0; cols && i < cols->n; i++)
    if (cols->a[i].type)
      return bind_error(b, EXEC_ERROR, cols->a[i].off,
                        "dynamic column \"%s\": %s is %s, and dynamic columns are read from a "
                        "table's cells", cols->a[i].name, name, what);
  return EXEC_OK;
}
