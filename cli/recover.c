/*
** cli/recover.c: `rowan --recover DAMAGED NEW` (docs/SHELL.md, "Recovering a damaged
** database"): runs rowan_recover (include/rowan.h) and prints its report: each thing that
** could not be read (what, which file, which bytes, how many cells and rows where that is
** known, why), what was read, the state of the catalog, and each table of the new database
** with its rows and rebuilt indexes.
**
** What it does not: open the new database afterwards (run `rowan NEW` for that), or decide
** anything about the salvage itself (api/recover.c, kv/salvage/salvage.c).
*/
#include <string.h>
#include <sys/stat.h>

#include "cli/shell.h"

/* The parent folder of path exists (a typo in NEW should not make folders). */
static bool parent_exists(const char *path) {
  char parent[4096];
  snprintf(parent, sizeof parent, "%s", path);
  size_t n = strlen(parent);
  while (n > 1 && parent[n - 1] == '/') parent[--n] = 0;
  char *slash = strrchr(parent, '/');
  if (!slash) return true;
  if (slash == parent) slash[1] = 0;
  else *slash = 0;
  struct stat st;
  return stat(parent, &st) == 0 && S_ISDIR(st.st_mode);
}

static void print_damage(FILE *out, const rowan_recover_damage *d) {
  fprintf(out, "  %s: %s", d->kind, d->file);
  if (d->length)
    fprintf(out, ", bytes %llu..%llu (%llu)", (unsigned long long)d->offset,
            (unsigned long long)(d->offset + d->length), (unsigned long long)d->length);
  if (d->cells > 0 || d->rows > 0) {
    fprintf(out, ", lost:");
    if (d->cells >= 0) fprintf(out, " %lld cells", (long long)d->cells);
    if (d->rows >= 0) fprintf(out, "%s %lld rows", d->cells >= 0 ? "," : "", (long long)d->rows);
  }
  fprintf(out, ": %s\n", d->detail);
}

int cli_recover(const char *damaged, const char *dst, FILE *out) {
  if (!parent_exists(dst)) {
    fprintf(stderr, "rowan: cannot create %s: its parent directory does not exist\n", dst);
    return 1;
  }
  rowan_recover_report *rep = NULL;
  int rc = rowan_recover(damaged, dst, NULL, &rep);
  if (rc != ROWAN_OK) {
    fprintf(stderr, "rowan: --recover %s %s failed (%s): %s\n", damaged, dst, rowan_errstr(rc),
            rep && rep->errmsg[0] ? rep->errmsg : "out of memory");
    if (rep && rep->n_damage) fprintf(stderr, "rowan: damage found before that:\n");
    for (int i = 0; rep && i < rep->n_damage; i++) print_damage(stderr, &rep->damage[i]);
    rowan_recover_report_free(rep);
    return 1;
  }
  fprintf(out, "recovered %s into %s\n", damaged, dst);
  if (rep->n_damage == 0) fprintf(out, "no damage found: every block and log record checked\n");
  else fprintf(out, "could not be read (%d):\n", rep->n_damage);
  for (int i = 0; i < rep->n_damage; i++) print_damage(out, &rep->damage[i]);
  fprintf(out, "read: %llu store files (%llu damaged), %llu blocks (%llu lost), %llu log records "
          "(%llu writes not yet in store files); MANIFEST %s\n",
          (unsigned long long)rep->files_read, (unsigned long long)rep->files_damaged,
          (unsigned long long)rep->blocks_read, (unsigned long long)rep->blocks_lost,
          (unsigned long long)rep->wal_records, (unsigned long long)rep->wal_ops,
          rep->manifest_whole ? "whole" : "damaged or missing (tables found in the folders)");
  fprintf(out, "catalog: %s\n",
          rep->catalog == ROWAN_CATALOG_WHOLE ? "whole"
          : rep->catalog == ROWAN_CATALOG_PARTIAL ? "some rows lost (see above)"
          : "lost: every table's cells are in the lost-and-found table");
  for (int i = 0; i < rep->n_tables; i++) {
    const rowan_recover_table *t = &rep->tables[i];
    bool lf = rep->lost_and_found && !strcmp(t->name, rep->lost_and_found);
    if (lf) {
      fprintf(out, "table %s: %lld cells that could not go back into a table\n", t->name,
              (long long)rep->lost_and_found_cells);
      continue;
    }
    fprintf(out, "table %s: %lld rows, %d index%s built again and checked", t->name,
            (long long)t->rows, t->indexes, t->indexes == 1 ? "" : "es");
    if (t->markers_added) fprintf(out, ", %lld row markers made again", (long long)t->markers_added);
    if (t->cells_set_aside)
      fprintf(out, ", %lld cells set aside in %s", (long long)t->cells_set_aside, rep->lost_and_found);
    fputc('\n', out);
  }
  if (rep->kv_tables) fprintf(out, "key-value tables copied as they are: %d\n", rep->kv_tables);
  rowan_recover_report_free(rep);
  return 0;
}
