/*
** cli/dot_schema.c: the shell's catalog views (.tables, .schema, .indexes) and the
** teaching note after a wasteful full scan; and .dump, whose rows cli/dot_dump.c writes.
**
** What it does: reads the catalog under the connection (catalog/catalog.h, through a
** private read-only snapshot opened on the connection's store for the duration of one
** command) and prints table and view names, CREATE TABLE / CREATE INDEX statements rebuilt
** from it (columns with their families, types and nullability, the PRIMARY KEY constraint
** with ASC and DESC, table and family options), each view's CREATE VIEW text as written
** (after the tables, each view after what it reads; .dump adds the values of a view's own
** columns as UPSERTs through the view), and index lists. The teaching note runs EXPLAIN of
** the statement through the public API to learn the scan kind and the table, then names
** the leading key column the WHERE clause did not bound, or an index whose first column
** the WHERE clause mentions.
**
** What it does not: change the catalog; keep the snapshot between commands (DDL may change
** it); decide plans (the note only reads EXPLAIN's text).
*/
#include <ctype.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api/api_test.h"
#include "catalog/cat_view.h"
#include "catalog/catalog.h"
#include "catalog/keycodec.h"
#include "catalog/value.h"
#include "cli/shell.h"

/* Open a catalog snapshot of the connection's store; prints the error and returns NULL on
** failure. Close it with cat_close. */
static cat_catalog *open_catalog(cli_shell *sh) {
  kv_db *kv = api_test_kv(sh->db);
  cat_catalog *cat = NULL;
  cat_error err;
  memset(&err, 0, sizeof err);
  if (!kv) {
    cli_errorf(sh, "no database is open");
    return NULL;
  }
  if (cat_open(kv, &cat, &err) != CAT_OK) {
    cli_errorf(sh, "cannot read the catalog: %s", err.msg);
    return NULL;
  }
  return cat;
}

/* True when name needs no quotes in SQL (an upper-case identifier, dots allowed between
** parts as in "S.T"). */
static bool plain_ident(const char *name) {
  if (!*name) return false;
  bool start = true;
  for (const char *p = name; *p; p++) {
    char c = *p;
    if (c == '.' && !start && p[1]) { start = true; continue; }
    bool ok = (c >= 'A' && c <= 'Z') || c == '_' || (!start && c >= '0' && c <= '9');
    if (!ok) return false;
    start = false;
  }
  return true;
}

static void put_ident(FILE *out, const char *name) {
  if (plain_ident(name)) {
    fputs(name, out);
    return;
  }
  fputc('"', out);
  for (const char *p = name; *p; p++) {
    if (*p == '"') fputc('"', out);
    fputc(*p, out);
  }
  fputc('"', out);
}

/* Match name against a LIKE pattern (% and _, case-insensitive); NULL matches all. */
static bool like_match(const char *pattern, const char *name) {
  if (!pattern) return true;
  char glob[256];
  size_t o = 0;
  for (const char *p = pattern; *p && o + 3 < sizeof glob; p++) {
    if (*p == '%') glob[o++] = '*';
    else if (*p == '_') glob[o++] = '?';
    else if (*p == '*' || *p == '?' || *p == '[' || *p == '\\') { glob[o++] = '\\'; glob[o++] = *p; }
    else glob[o++] = *p;
  }
  glob[o] = 0;
  return fnmatch(glob, name, FNM_CASEFOLD) == 0;
}

/* The tables of cat sorted by name, in a malloc'd array; *n gets the count. */
static const cat_table **sorted_tables(const cat_catalog *cat, int *n) {
  int cnt = cat_table_count(cat);
  const cat_table **v = calloc((size_t)(cnt > 0 ? cnt : 1), sizeof *v);
  *n = 0;
  if (!v) return NULL;
  for (int i = 0; i < cnt; i++) {
    const cat_table *t = cat_table_at(cat, i);
    if (t) v[(*n)++] = t;
  }
  for (int i = 1; i < *n; i++) /* insertion sort: catalogs are small */
    for (int j = i; j > 0 && strcmp(v[j - 1]->name, v[j]->name) > 0; j--) {
      const cat_table *x = v[j];
      v[j] = v[j - 1];
      v[j - 1] = x;
    }
  return v;
}

/* Find a table by name as the user typed it: exact, else case-folded (unquoted). */
static const cat_table *find_table(const cat_catalog *cat, const char *name) {
  const cat_table *t = cat_find_table(cat, name);
  if (t) return t;
  char up[256];
  size_t i = 0;
  for (; name[i] && i + 1 < sizeof up; i++) up[i] = (char)toupper((unsigned char)name[i]);
  up[i] = 0;
  return cat_find_table(cat, up);
}

int cli_dot_tables(cli_shell *sh, int argc, char **argv) {
  if (argc > 2) {
    cli_errorf(sh, "usage: .tables [PATTERN]");
    return 1;
  }
  cat_catalog *cat = open_catalog(sh);
  if (!cat) return 1;
  int n, nv = cat_view_count(cat);
  const cat_table **v = sorted_tables(cat, &n);
  /* tables and views together, sorted by name (sqlite3's .tables lists both) */
  const char **names = calloc((size_t)(n + nv + 1), sizeof *names);
  int k = 0;
  for (int i = 0; v && names && i < n; i++) names[k++] = v[i]->name;
  for (int i = 0; names && i < nv; i++) names[k++] = cat_view_at(cat, i)->name;
  for (int i = 1; i < k; i++)
    for (int j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
      const char *x = names[j];
      names[j] = names[j - 1];
      names[j - 1] = x;
    }
  for (int i = 0; i < k; i++)
    if (like_match(argc == 2 ? argv[1] : NULL, names[i])) fprintf(sh->out, "%s\n", names[i]);
  free(names);
  free(v);
  cat_close(cat);
  return 0;
}

static const char *compression_name(int c) {
  return c == KV_COMPRESSION_NONE ? "NONE" : "LZ4";
}

static void print_index(FILE *out, const cat_table *t, const cat_index *x, bool as_sql) {
  if (as_sql) fputs("CREATE INDEX ", out);
  put_ident(out, x->name);
  fputs(" ON ", out);
  put_ident(out, t->name);
  fputs(" (", out);
  for (int k = 0; k < x->n_keys; k++) {
    if (k) fputs(", ", out);
    fputs(x->keys[k], out); /* column names or expression text, as written */
    if (x->key_desc && x->key_desc[k]) fputs(" DESC", out);
  }
  fputc(')', out);
  if (x->n_include > 0) {
    fputs(" INCLUDE (", out);
    for (int k = 0; k < x->n_include; k++) fprintf(out, "%s%s", k ? ", " : "", x->include[k]);
    fputc(')', out);
  }
  if (x->salt_buckets) fprintf(out, " SALT_BUCKETS = %d", x->salt_buckets);
  if (as_sql) fputc(';', out);
  else if (x->state == CAT_INDEX_BUILDING) fputs(" (building)", out);
  else if (x->state == CAT_INDEX_DISABLED) fputs(" (disabled)", out);
  fputc('\n', out);
}

/* One value of a split point as a literal SPLIT ON takes (a string for text and time). */
static void print_literal(FILE *out, const cat_value *v) {
  char buf[512];
  int id = v->type.id;
  if (id == CAT_T_VARBINARY) {
    fputs("X'", out);
    for (uint32_t i = 0; i < v->u.s.len; i++) fprintf(out, "%02X", v->u.s.p[i]);
    fputc('\'', out);
    return;
  }
  cat_text_format(v, buf, sizeof buf);
  if (id == CAT_T_BOOLEAN || cat_type_is_numeric(id)) {
    fputs(id == CAT_T_BOOLEAN ? (v->u.b ? "TRUE" : "FALSE") : buf, out);
    return;
  }
  fputc('\'', out);
  for (const char *p = buf; *p; p++) fprintf(out, *p == '\'' ? "''" : "%c", *p);
  fputc('\'', out);
}

/* " SPLIT ON (...)" of a table created with split points: each point's key columns decoded
** (a row value when it holds more than the first). */
static void print_split_on(FILE *out, const cat_table *t) {
  if (!t->n_splits) return;
  fputs(" SPLIT ON (", out);
  for (uint32_t i = 0; i < t->n_splits; i++) {
    const uint8_t *p = t->split_keys[i], *limit = p + t->split_lens[i];
    uint8_t *scratch = malloc(t->split_lens[i] + 1);
    cat_value v[32];
    int n = 0;
    while (scratch && p < limit && n < t->n_pk && n < 32) {
      cat_error err;
      const uint8_t *end = NULL;
      if (cat_key_decode(&t->key_cols[n], 1, p, limit, &v[n], scratch + (p - t->split_keys[i]),
                         (size_t)(limit - p), &end, &err) != CAT_OK)
        break;
      p = end;
      n++;
    }
    fputs(i ? ", " : "", out);
    if (n > 1) fputc('(', out);
    for (int k = 0; k < n; k++) {
      fputs(k ? ", " : "", out);
      print_literal(out, &v[k]);
    }
    if (n > 1) fputc(')', out);
    free(scratch);
  }
  fputc(')', out);
}

static void print_create_table(FILE *out, const cat_table *t) {
  char tb[64];
  fputs("CREATE TABLE ", out);
  put_ident(out, t->name);
  fputs(" (\n", out);
  for (int i = 0; i < t->n_columns; i++) {
    const cat_column *c = &t->columns[i];
    fputs("  ", out);
    if (c->pk_pos < 0 && c->family > 0 && c->family < t->n_families &&
        strcmp(t->families[c->family].name, CAT_DEFAULT_FAMILY) != 0) {
      put_ident(out, t->families[c->family].name);
      fputc('.', out);
    }
    put_ident(out, c->name);
    fprintf(out, " %s", cat_type_format(&c->type, tb, sizeof tb));
    if (c->pk_pos >= 0 && c->nullable) fputs(" NULL", out);
    if (c->pk_pos < 0 && !c->nullable) fputs(" NOT NULL", out);
    fputs(",\n", out);
  }
  fputs("  CONSTRAINT PK PRIMARY KEY (", out);
  for (int k = 0; k < t->n_pk; k++) {
    const cat_column *c = &t->columns[t->pk[k]];
    if (k) fputs(", ", out);
    put_ident(out, c->name);
    if (c->desc) fputs(" DESC", out);
    if (c->row_timestamp) fputs(" ROW_TIMESTAMP", out);
  }
  fputs(")\n)", out);
  /* Options: the table's, then each user family's that differ from the defaults. */
  const char *sep = " ";
  if (t->ttl_sec > 0) { fprintf(out, "%sTTL = %lld", sep, (long long)t->ttl_sec); sep = ", "; }
  if (t->immutable_rows) { fprintf(out, "%sIMMUTABLE_ROWS = TRUE", sep); sep = ", "; }
  if (t->salt_buckets) { fprintf(out, "%sSALT_BUCKETS = %d", sep, t->salt_buckets); sep = ", "; }
  for (int f = 1; f < t->n_families; f++) {
    const cat_family *fam = &t->families[f];
    bool dflt = strcmp(fam->name, CAT_DEFAULT_FAMILY) == 0;
    if (fam->max_versions > 1) {
      fputs(sep, out);
      if (!dflt) { put_ident(out, fam->name); fputc('.', out); }
      fprintf(out, "VERSIONS = %d", fam->max_versions);
      sep = ", ";
    }
    if (fam->compression != KV_COMPRESSION_LZ4) {
      fputs(sep, out);
      if (!dflt) { put_ident(out, fam->name); fputc('.', out); }
      fprintf(out, "COMPRESSION = '%s'", compression_name(fam->compression));
      sep = ", ";
    }
    if (fam->block_size > 0) {
      fputs(sep, out);
      if (!dflt) { put_ident(out, fam->name); fputc('.', out); }
      fprintf(out, "BLOCKSIZE = %u", fam->block_size);
      sep = ", ";
    }
  }
  print_split_on(out, t);
  fputs(";\n", out);
}

/* For .dump, after view v's CREATE VIEW: the values of its own columns, in the rows where
** one is not NULL, as UPSERTs through the view (its table's key columns, then its own; the
** view's constants are the key's values, so the view takes them). 0, or 1 after an error. */
static int dump_view_columns(cli_shell *sh, const cat_catalog *cat, const cat_view *v) {
  const cat_table *t = v->n_columns ? cat_view_table(cat, v) : NULL;
  if (!t) return 0;
  char *name = NULL, *cols = NULL, *where = NULL;
  size_t nl = 0, cl = 0, wl = 0;
  FILE *fn = open_memstream(&name, &nl), *fc = open_memstream(&cols, &cl),
       *fw = open_memstream(&where, &wl);
  int n = t->n_pk + v->n_columns;
  int *types = calloc((size_t)n, sizeof *types);
  if (fn) put_ident(fn, v->name);
  for (int i = 0; fc && fw && types && i < n; i++) {
    const char *cn = i < t->n_pk ? t->columns[t->pk[i]].name : v->columns[i - t->n_pk].name;
    if (i) fputs(", ", fc);
    put_ident(fc, cn);
    types[i] = i < t->n_pk ? t->columns[t->pk[i]].type.id : v->columns[i - t->n_pk].type.id;
    if (i < t->n_pk) continue;
    if (i > t->n_pk) fputs(" OR ", fw);
    put_ident(fw, cn);
    fputs(" IS NOT NULL", fw);
  }
  if (fn) fclose(fn);
  if (fc) fclose(fc);
  if (fw) fclose(fw);
  int rc = name && cols && where && types ? cli_dump_rows(sh, name, cols, where, types, n)
                                          : cli_errorf(sh, ".dump: out of memory");
  free(name);
  free(cols);
  free(where);
  free(types);
  return rc;
}

/* Run fn on the table argv[1] names, or on every table sorted by name (argc 1): .schema's
** and .dump's table choice; a view (argv[1], or every view after the tables) is printed as
** its CREATE VIEW text, followed for .dump (rows) by its own columns' values. 0, or 1 after
** an error (message printed). */
static int each_table(cli_shell *sh, int argc, char **argv, const char *usage, bool rows,
                      int (*fn)(cli_shell *sh, const cat_table *t)) {
  if (argc > 2) {
    cli_errorf(sh, "usage: %s", usage);
    return 1;
  }
  cat_catalog *cat = open_catalog(sh);
  if (!cat) return 1;
  int rc = 0;
  if (argc == 2) {
    const cat_table *t = find_table(cat, argv[1]);
    const cat_view *view = t ? NULL : cat_find_view_folded(cat, argv[1]);
    if (view) {
      fprintf(sh->out, "%s;\n", view->sql); /* as written */
      if (rows) rc = dump_view_columns(sh, cat, view);
    } else if (!t) {
      cli_errorf(sh, "unknown table \"%s\"", argv[1]);
      rc = 1;
    } else {
      rc = fn(sh, t);
    }
  } else {
    int n;
    const cat_table **v = sorted_tables(cat, &n);
    for (int i = 0; v && i < n && !rc; i++) rc = fn(sh, v[i]);
    free(v);
    /* then the views, each after what it reads, as written: DDL that recreates them */
    for (int i = 0; !rc && i < cat_view_count(cat); i++) {
      fprintf(sh->out, "%s;\n", cat_view_at(cat, i)->sql);
      if (rows) rc = dump_view_columns(sh, cat, cat_view_at(cat, i));
    }
  }
  cat_close(cat);
  return rc;
}

static int schema_table(cli_shell *sh, const cat_table *t) {
  print_create_table(sh->out, t);
  for (int x = 0; x < t->n_indexes; x++) print_index(sh->out, t, &t->indexes[x], true);
  return 0;
}

/* Every sequence as a CREATE SEQUENCE that makes it again with its options, starting at
** the first value the store has not handed out (cat_sequence_restart), so that values taken
** from the copy never repeat one taken from this store. 0, or 1 after an error. */
static int schema_sequences(cli_shell *sh) {
  cat_catalog *cat = open_catalog(sh);
  if (!cat) return 1;
  for (int i = 0; i < cat_sequence_count(cat); i++) {
    const cat_sequence *s = cat_sequence_at(cat, i);
    fputs("CREATE SEQUENCE ", sh->out);
    put_ident(sh->out, s->name);
    fprintf(sh->out, " START WITH %lld INCREMENT BY %lld MINVALUE %lld MAXVALUE %lld%s CACHE "
            "%lld;\n",
            (long long)cat_sequence_restart(s), (long long)s->def.increment,
            (long long)s->def.min_value, (long long)s->def.max_value,
            s->def.cycle ? " CYCLE" : "", (long long)s->def.cache);
  }
  cat_close(cat);
  return 0;
}

int cli_dot_schema(cli_shell *sh, int argc, char **argv) {
  int rc = each_table(sh, argc, argv, ".schema [TABLE]", false, schema_table);
  return rc || argc != 1 ? rc : schema_sequences(sh);
}

/* One table for .dump: CREATE TABLE, its rows as UPSERTs (cli_dump_rows), then its CREATE
** INDEXes, so a load into an empty database builds each index once, from the rows. */
static int dump_table(cli_shell *sh, const cat_table *t) {
  print_create_table(sh->out, t);
  char *name = NULL, *cols = NULL;
  size_t nl = 0, cl = 0;
  FILE *fn = open_memstream(&name, &nl), *fc = open_memstream(&cols, &cl);
  int *types = calloc((size_t)(t->n_columns > 0 ? t->n_columns : 1), sizeof *types);
  if (fn) put_ident(fn, t->name);
  for (int i = 0; fc && i < t->n_columns; i++) {
    if (i) fputs(", ", fc);
    put_ident(fc, t->columns[i].name);
    if (types) types[i] = t->columns[i].type.id;
  }
  if (fn) fclose(fn);
  if (fc) fclose(fc);
  int rc = name && cols && types ? cli_dump_rows(sh, name, cols, NULL, types, t->n_columns)
                                 : cli_errorf(sh, ".dump: out of memory");
  free(name);
  free(cols);
  free(types);
  for (int x = 0; x < t->n_indexes; x++) print_index(sh->out, t, &t->indexes[x], true);
  return rc;
}

int cli_dot_dump(cli_shell *sh, int argc, char **argv) {
  int rc = each_table(sh, argc, argv, ".dump [TABLE]", true, dump_table);
  return rc || argc != 1 ? rc : schema_sequences(sh);
}

int cli_dot_indexes(cli_shell *sh, int argc, char **argv) {
  if (argc > 2) {
    cli_errorf(sh, "usage: .indexes [TABLE]");
    return 1;
  }
  cat_catalog *cat = open_catalog(sh);
  if (!cat) return 1;
  int rc = 0, n;
  const cat_table **v = sorted_tables(cat, &n);
  const cat_table *only = argc == 2 ? find_table(cat, argv[1]) : NULL;
  if (argc == 2 && !only) {
    cli_errorf(sh, "unknown table \"%s\"", argv[1]);
    rc = 1;
  }
  for (int i = 0; rc == 0 && v && i < n; i++) {
    if (only && v[i] != only) continue;
    for (int x = 0; x < v[i]->n_indexes; x++) print_index(sh->out, v[i], &v[i]->indexes[x], false);
  }
  free(v);
  cat_close(cat);
  return rc;
}

/* ---- the teaching note --------------------------------------------------------------------- */

/* True when word (an identifier) occurs in sql[0..len) as a whole word, case-insensitive,
** after the WHERE keyword. A rough test of "the WHERE clause mentions this column". */
static bool where_mentions(const char *sql, size_t len, const char *word) {
  size_t wl = strlen(word);
  const char *where = NULL;
  for (size_t i = 0; i + 5 <= len; i++)
    if (strncasecmp(sql + i, "WHERE", 5) == 0) { where = sql + i + 5; break; }
  if (!where || wl == 0) return false;
  const char *end = sql + len;
  for (const char *p = where; p + wl <= end; p++) {
    if (strncasecmp(p, word, wl) != 0) continue;
    bool before = isalnum((unsigned char)p[-1]) || p[-1] == '_';
    bool after = p + wl < end && (isalnum((unsigned char)p[wl]) || p[wl] == '_');
    if (!before && !after) return true;
  }
  return false;
}

/* The leading column name of an index key text ("TEMP", "READINGS.TEMP" -> "TEMP"). */
static const char *key_column(const char *key) {
  const char *dot = strrchr(key, '.');
  return dot ? dot + 1 : key;
}

void cli_teaching_note(cli_shell *sh, const char *sql, size_t len, const rowan_metrics *m) {
  if (!sh->hints || m->rows_examined <= 1000 || m->rows_examined <= 100 * m->rows_returned)
    return;
  /* Ask the planner what it did: EXPLAIN of the same statement. */
  size_t n = len + 16;
  char *text = malloc(n);
  if (!text) return;
  snprintf(text, n, "EXPLAIN %.*s", (int)len, sql);
  rowan_stmt *st = NULL;
  char table[128] = "";
  if (rowan_prepare(sh->db, text, -1, &st, NULL) == ROWAN_OK && st) {
    while (rowan_step(st) == ROWAN_ROW) {
      const char *line = rowan_column_text(st, 0);
      const char *f = line ? strstr(line, "FULL SCAN OVER ") : NULL;
      if (f && !table[0]) {
        f += strlen("FULL SCAN OVER ");
        size_t k = 0;
        while (f[k] && f[k] != ' ' && k + 1 < sizeof table) { table[k] = f[k]; k++; }
        table[k] = 0;
      }
    }
  }
  rowan_finalize(st);
  free(text);
  if (!table[0]) return;
  cat_catalog *cat = open_catalog(sh);
  if (!cat) return;
  const cat_table *t = cat_find_table(cat, table);
  if (t && t->n_pk > 0) {
    const char *lead = t->columns[t->pk[0]].name;
    const cat_index *use = NULL;
    for (int x = 0; x < t->n_indexes && !use; x++) {
      const cat_index *ix = &t->indexes[x];
      if (ix->n_keys > 0 && where_mentions(sql, len, key_column(ix->keys[0]))) use = ix;
    }
    fprintf(stderr, "Note: a FULL SCAN over %s examined %llu rows to return %llu.\n", t->name,
            (unsigned long long)m->rows_examined, (unsigned long long)m->rows_returned);
    bool no_index = false; /* the statement's NO_INDEX hint turned indexes off */
    for (size_t i = 0; i + 8 <= len && !no_index; i++)
      no_index = strncasecmp(sql + i, "NO_INDEX", 8) == 0;
    if (use && use->state == CAT_INDEX_ACTIVE && no_index)
      fprintf(stderr,
              "  The index %s on (%s) could serve this WHERE clause; the NO_INDEX hint kept "
              "the planner off it.\n",
              use->name, use->keys[0]);
    else if (use && use->state == CAT_INDEX_ACTIVE)
      fprintf(stderr,
              "  The index %s on (%s) could serve this WHERE clause: try the hint "
              "/*+ INDEX(%s %s) */.\n",
              use->name, use->keys[0], t->name, use->name);
    else if (use)
      fprintf(stderr,
              "  The index %s on (%s) could serve this WHERE clause, but it is %s, so the "
              "planner cannot use it yet.\n",
              use->name, use->keys[0],
              use->state == CAT_INDEX_BUILDING ? "still being built" : "disabled");
    else
      fprintf(stderr,
              "  The WHERE clause does not bound the leading key column %s, so every row was "
              "read.\n  A condition on %s (=, IN or a range) gives a range scan; or CREATE "
              "INDEX on the column you filter by.\n",
              lead, lead);
    fprintf(stderr, "  (.hints off silences this note)\n");
  }
  cat_close(cat);
}
