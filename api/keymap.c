/*
** api/keymap.c: a table's key space and a statement's block trace through the public API:
** rowan_table_layout (a table's blocks and regions), rowan_table_families,
** rowan_stmt_trace, rowan_stmt_trace_get and their frees (contracts
** in include/rowan.h). The engine builds both (exec/keymap.h); this file checks the
** arguments, maps errors to ROWAN_* codes and lays the engine's records out as the public
** structs, whose strings and keys point into the engine's records (kept in `internal`
** until the free).
**
** What it does not do: draw anything (the shell's .keymap, cli/keymap*.c), or read data
** blocks (the layout comes from block indexes; the trace from what the reads recorded).
*/
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"
#include "exec/keymap.h"

/* rowan_table_layout, or with `with_blocks` false rowan_table_families. */
static int layout_get(rowan_db *db, const char *table, bool with_blocks, rowan_layout **layout) {
  if (layout) *layout = NULL;
  if (!db || !table || !layout) return ROWAN_MISUSE;
  if (!db->sess) return api_error(db, ROWAN_MISUSE, -1, "misuse: the database is not open");
  exec_error err;
  exec_km_layout *l = NULL;
  int rc = exec_km_layout_get(db->sess, table, with_blocks, &l, &err);
  if (rc) return api_error(db, api_code_of_exec(rc), -1, "%s", err.msg);
  rowan_layout *o = calloc(1, sizeof *o);
  rowan_layout_family *fams = calloc(l->n_families ? l->n_families : 1, sizeof *fams);
  rowan_layout_block *blocks = calloc(l->n_blocks ? l->n_blocks : 1, sizeof *blocks);
  rowan_layout_region *regions = calloc(l->n_regions, sizeof *regions);
  if (!o || !fams || !blocks || !regions || l->n_blocks > (size_t)INT32_MAX ||
      l->n_regions > (uint32_t)INT32_MAX) {
    free(o);
    free(fams);
    free(blocks);
    free(regions);
    exec_km_layout_free(l);
    return api_error(db, ROWAN_NOMEM, -1, "out of memory");
  }
  for (uint32_t i = 0; i < l->n_families; i++) {
    const exec_km_family *f = &l->families[i];
    fams[i] = (rowan_layout_family){f->name, f->memstore_bytes, f->memstore_cells,
                                    f->store_files, f->blocks, f->bytes, f->reader_bytes,
                                    f->paged_files};
  }
  for (size_t i = 0; i < l->n_blocks; i++) {
    const exec_km_block *b = &l->blocks[i];
    rowan_layout_block *d = &blocks[i];
    d->family = (int)b->family;
    d->file = b->file;
    d->file_bytes = b->file_bytes;
    d->file_blocks = b->file_blocks;
    d->block = b->block;
    d->offset = b->offset;
    d->bytes = b->bytes;
    d->raw_bytes = b->raw_bytes;
    d->cells = b->cells;
    d->rows = b->rows;
    d->first_key = b->first;
    d->first_key_len = (int)b->first_len;
    d->first_key_text = b->first_text;
    d->last_key = b->last;
    d->last_key_len = (int)b->last_len;
    d->last_key_text = b->last_text;
  }
  for (uint32_t i = 0; i < l->n_regions; i++) {
    const exec_km_region *r = &l->regions[i];
    regions[i] = (rowan_layout_region){r->start, (int)r->start_len, r->start_text};
  }
  o->table = l->table;
  o->key = l->key;
  o->n_families = (int)l->n_families;
  o->families = fams;
  o->n_blocks = (int)l->n_blocks;
  o->blocks = blocks;
  o->n_regions = (int)l->n_regions;
  o->regions = regions;
  o->internal = l;
  *layout = o;
  api_clear_error(db);
  return ROWAN_OK;
}

int rowan_table_layout(rowan_db *db, const char *table, rowan_layout **layout) {
  return layout_get(db, table, true, layout);
}

int rowan_table_families(rowan_db *db, const char *table, rowan_layout **layout) {
  return layout_get(db, table, false, layout);
}

void rowan_layout_free(rowan_layout *layout) {
  if (!layout) return;
  exec_km_layout_free(layout->internal);
  free((void *)layout->families);
  free((void *)layout->blocks);
  free((void *)layout->regions);
  free(layout);
}

int rowan_stmt_trace(rowan_stmt *stmt, int on) {
  if (!stmt) return ROWAN_MISUSE;
  exec_error err;
  int rc = exec_set_trace(stmt->st, on != 0, &err);
  if (rc) return api_error(stmt->db, api_code_of_exec(rc), -1, "%s", err.msg);
  return ROWAN_OK;
}

int rowan_stmt_trace_get(rowan_stmt *stmt, rowan_trace **trace) {
  if (trace) *trace = NULL;
  if (!stmt || !trace) return ROWAN_MISUSE;
  exec_error err;
  exec_km_trace *t = NULL;
  int rc = exec_km_trace_get(stmt->st, &t, &err);
  if (rc) return api_error(stmt->db, api_code_of_exec(rc), -1, "%s", err.msg);
  rowan_trace *o = calloc(1, sizeof *o);
  rowan_block_read *reads = calloc(t->n_reads ? t->n_reads : 1, sizeof *reads);
  rowan_range_read *ranges = calloc(t->n_ranges ? t->n_ranges : 1, sizeof *ranges);
  if (!o || !reads || !ranges || t->n_reads > (size_t)INT32_MAX) {
    free(o);
    free(reads);
    free(ranges);
    exec_km_trace_free(t);
    return api_error(stmt->db, ROWAN_NOMEM, -1, "out of memory");
  }
  for (size_t i = 0; i < t->n_reads; i++) {
    const exec_km_read *r = &t->reads[i];
    reads[i] = (rowan_block_read){r->table, r->family, r->file, r->block, r->loads,
                                  r->cache_hits};
  }
  for (size_t i = 0; i < t->n_ranges; i++) {
    const exec_km_range *r = &t->ranges[i];
    ranges[i] = (rowan_range_read){r->table, r->has_start ? r->start : NULL,
                                   (int)r->start_len, r->has_end ? r->end : NULL,
                                   (int)r->end_len, r->text};
  }
  o->n_blocks = (int)t->n_reads;
  o->blocks = reads;
  o->n_ranges = (int)t->n_ranges;
  o->ranges = ranges;
  o->ranges_total = t->ranges_total;
  o->incomplete = t->lost;
  o->internal = t;
  *trace = o;
  return ROWAN_OK;
}

void rowan_trace_free(rowan_trace *trace) {
  if (!trace) return;
  exec_km_trace_free(trace->internal);
  free((void *)trace->blocks);
  free((void *)trace->ranges);
  free(trace);
}
