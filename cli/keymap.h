/*
** cli/keymap.h: the shell's key-space picture, `.keymap TABLE [QUERY] FILE.svg`, shared by
** cli/keymap.c (the data: the table's layout, the query run with a block trace, every key
** placed on one axis, and the text version printed in the terminal) and cli/keymap_svg.c
** (the SVG file). docs/SHELL.md shows both.
**
** The axis: every key that matters (each block's first key, each file's last key, each
** key range's bounds) is placed in key order on [0, 1]. Distances follow rows: the
** family with the most rows (the reference) gives each of its blocks a width in proportion
** to its rows; the keys that fall inside one of its blocks are spread evenly across it, in
** key order. So a range holding a twelfth of the rows is about a twelfth of the width in
** every family's lane, and the other families' blocks line up with the reference's. A
** region starts on the axis where the first of those keys at or after its start key is
** (the end of the axis when none is), so its line falls at the first block of its files.
**
** Not here: the engine side (include/rowan.h: rowan_table_layout, rowan_stmt_trace_get).
*/
#ifndef ROWAN_CLI_KEYMAP_H
#define ROWAN_CLI_KEYMAP_H

#include <stdbool.h>
#include <stdint.h>

#include "cli/shell.h"

/* One block on the axis. */
typedef struct km_block {
  const rowan_layout_block *b; /* the layout's block */
  double x0, x1;               /* its span on the axis, [0, 1] */
  uint32_t loads;              /* times the query loaded it (0: skipped) */
  uint32_t hits;               /* of which from the block cache */
  int lane;                    /* its lane (index into km_map.lanes) */
} km_block;

/* One store file of one family: a row of blocks. */
typedef struct km_lane {
  int family;                  /* index into the layout's families */
  uint64_t file;               /* the store file's number */
  uint64_t bytes;              /* its size */
  int first, n;                /* its blocks: km_map.blocks[first .. first + n) */
} km_lane;

/* One key range the query sought in the table. */
typedef struct km_range {
  const rowan_range_read *r;   /* the trace's range */
  double x0, x1;               /* its span on the axis */
} km_range;

/* A value of the leading key column where it begins on the axis. */
typedef struct km_tick {
  double x;                    /* where (the first block whose first key has it) */
  char text[48];               /* the value, cut to fit */
} km_tick;

/* What the query read of one family. */
typedef struct km_fam_read {
  uint64_t blocks;             /* distinct blocks read */
  uint64_t loads;              /* loads (EXPLAIN ANALYZE's blocks=) */
  uint64_t hits;               /* of which from the cache */
  uint64_t bytes;              /* on-disk bytes of the loads from the file */
  bool in_metrics;             /* the statement's metrics list the family */
} km_fam_read;

typedef struct km_map {
  rowan_layout *layout;        /* the table */
  rowan_trace *trace;          /* the query's reads, or NULL without a query */
  const char *query;           /* the query's text, or NULL */
  rowan_metrics m;             /* the query's metrics */
  uint64_t rows;               /* the rows the query returned */
  km_block *blocks;            /* layout->n_blocks entries, in the layout's order */
  km_lane *lanes;              /* one per (family, file), families in order */
  int n_lanes;
  km_range *ranges;            /* the ranges sought in this table (not its indexes) */
  int n_ranges;
  uint64_t other_loads;        /* loads of blocks outside the table (an index) or of files
                                  no longer in it (compacted since) */
  km_fam_read *fam;            /* per family of the layout */
  km_tick *ticks;              /* the leading column's values along the axis */
  int n_ticks;
  int ref_family;              /* the family whose rows set the distances, or -1 */
  double *region_x;            /* where each region of the layout starts on the axis (the
                                  first at 0), layout->n_regions entries */
} km_map;

/* .keymap TABLE [QUERY] FILE.svg: 0, or 1 with a message printed. */
int cli_dot_keymap(cli_shell *sh, int argc, char **argv);

/* Write map's picture to path: 0, or -1 (errno). keymap_svg.c. */
int cli_keymap_svg(const km_map *map, const char *path);

#endif /* ROWAN_CLI_KEYMAP_H */
