/*
** cli/keymap_svg.c: the SVG file of `.keymap` (cli/keymap.h): 1,200 pixels wide, as tall
** as its families need. From the top: the title (table and row key), the query, a line on
** the table's regions (their count and boundaries); the key ranges the query sought, as bars, whose translucent bands run down over
** every family; per column family a heading (blocks, bytes, what was read and skipped) and
** one lane per store file, each block a rectangle over its span of the key axis (read
** blocks red, from the block cache orange, skipped ones grey-blue in two alternating shades
** so block boundaries show), hovering one shows its first key and sizes; a dashed green
** line down over each family's lanes where each region after the first starts (hovering
** one shows its start key); the leading key column's values along the axis; a legend; a
** note on how widths are chosen.
**
** Each block's rectangle carries data-family, data-file, data-block and data-loads
** attributes (data-hits too when read), and each region boundary's line a data-region
** attribute (the region's index, 1..n-1; one line per family), so a program
** (tests/cli/test_pictures.py) can check the picture against EXPLAIN ANALYZE and the
** layout without parsing the drawing.
**
** Not here: the data (cli/keymap.c), the SVG syntax (cli/svg.c).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/keymap.h"
#include "cli/svg.h"

#define W 1200       /* picture width */
#define AX0 210.0    /* the key axis: from here */
#define AX1 1180.0   /* to here */
#define LANE 16.0    /* a store file's lane height */
#define LANE_GAP 4.0 /* between lanes */
#define QCHARS 150   /* query characters per line */

static const char *const CSS =
    "text{font-family:sans-serif;font-size:12px;fill:#222}"
    ".t{font-size:18px;font-weight:bold}.q{font-family:monospace;font-size:12px}"
    ".n{font-size:11px;fill:#555}.f{font-size:13px;font-weight:bold}"
    ".s{font-size:11px;fill:#333}"
    ".b0{fill:#bccad8}.b1{fill:#d3dce6}.r{fill:#d62728}.h{fill:#f28e2b}"
    ".k{fill:#1f77b4}.band{fill:#1f77b4;fill-opacity:0.13}"
    ".lane{fill:#f3f5f7}.axis{stroke:#444;stroke-width:1}.tick{stroke:#888;stroke-width:1}"
    ".rg{fill:none;stroke:#2ca02c;stroke-width:2;stroke-dasharray:5 3}";

static double ax(double x) { return AX0 + x * (AX1 - AX0); }

/* Lines of the query text, QCHARS at most each, 3 lines at most. */
static int query_lines(const char *q) {
  if (!q) return 0;
  int n = (int)((strlen(q) + QCHARS - 1) / QCHARS);
  return n < 1 ? 1 : n > 3 ? 3 : n;
}

static int lanes_of(const km_map *m, int f) {
  int n = 0;
  for (int q = 0; q < m->n_lanes; q++)
    if (m->lanes[q].family == f) n++;
  return n;
}

static double height_of(const km_map *m) {
  const rowan_layout *l = m->layout;
  double h = 70 + 16.0 * query_lines(m->query);
  if (m->trace) h += 30;
  for (int f = 0; f < l->n_families; f++) {
    int nl = lanes_of(m, f);
    h += 24 + (nl ? nl : 1) * (LANE + LANE_GAP) + (l->families[f].memstore_cells ? 14 : 0) + 8;
  }
  return h + 50 + 30 + 50;
}

/* One block's rectangle; `read`: draw only read blocks (true) or only skipped ones. */
static void block_rect(cli_svg *s, const km_map *m, int i, double y, bool read) {
  const km_block *k = &m->blocks[i];
  if ((k->loads > 0) != read) return;
  const rowan_layout_block *b = k->b;
  const char *fam = m->layout->families[b->family].name;
  double x0 = ax(k->x0), w = ax(k->x1) - x0, minw = read ? 2.0 : 0.4;
  if (w < minw) w = minw;
  if (x0 + w > AX1 + 1) x0 = AX1 + 1 - w;
  char attrs[256], tip[1024], g1[32], g2[32], b1[32], b2[32];
  char fam_attr[160];
  FILE *tmp = fmemopen(fam_attr, sizeof fam_attr, "w");
  if (tmp) {
    cli_svg_escape(tmp, fam);
    fclose(tmp);
  } else {
    fam_attr[0] = 0;
  }
  fam_attr[sizeof fam_attr - 1] = 0;
  if (read)
    snprintf(attrs, sizeof attrs,
             "data-family=\"%s\" data-file=\"%llu\" data-block=\"%u\" data-loads=\"%u\" "
             "data-hits=\"%u\"", fam_attr, (unsigned long long)b->file, b->block, k->loads,
             k->hits);
  else
    snprintf(attrs, sizeof attrs,
             "data-family=\"%s\" data-file=\"%llu\" data-block=\"%u\" data-loads=\"0\"",
             fam_attr, (unsigned long long)b->file, b->block);
  int n = snprintf(tip, sizeof tip, "%s, file %llu, block %u of %u: from %s; %s on disk (%s raw), "
                   "%s rows, %s cells", fam, (unsigned long long)b->file, b->block + 1,
                   b->file_blocks, b->first_key_text, cli_svg_bytes(b->bytes, b1, sizeof b1),
                   cli_svg_bytes(b->raw_bytes, b2, sizeof b2),
                   cli_svg_grouped(b->rows, g1, sizeof g1), cli_svg_grouped(b->cells, g2, sizeof g2));
  if (read && n > 0 && (size_t)n < sizeof tip)
    snprintf(tip + n, sizeof tip - (size_t)n, "; read %u time%s (%u from the block cache)",
             k->loads, k->loads == 1 ? "" : "s", k->hits);
  const char *cls = read ? (k->hits == k->loads ? "h" : "r") : (b->block % 2 ? "b1" : "b0");
  cli_svg_rect(s, x0, y, w, LANE, cls, attrs, tip);
}

/* The family's heading: its blocks and bytes, and what the query read of them. */
static void family_heading(cli_svg *s, const km_map *m, int f, double y) {
  const rowan_layout_family *fam = &m->layout->families[f];
  char g1[32], g2[32], g3[32], b1[32], b2[32], line[512];
  int n = snprintf(line, sizeof line, "%s block%s in %llu store file%s, %s",
                   cli_svg_grouped(fam->blocks, g1, sizeof g1), fam->blocks == 1 ? "" : "s",
                   (unsigned long long)fam->store_files, fam->store_files == 1 ? "" : "s",
                   cli_svg_bytes(fam->bytes, b1, sizeof b1));
  if (m->trace && n > 0 && (size_t)n < sizeof line) {
    const km_fam_read *r = &m->fam[f];
    snprintf(line + n, sizeof line - (size_t)n,
             "  |  read: %s block%s, %s load%s (%llu from the block cache), %s from the file; "
             "skipped: %s block%s", cli_svg_grouped(r->blocks, g1, sizeof g1),
             r->blocks == 1 ? "" : "s", cli_svg_grouped(r->loads, g2, sizeof g2),
             r->loads == 1 ? "" : "s", (unsigned long long)r->hits,
             cli_svg_bytes(r->bytes, b2, sizeof b2),
             cli_svg_grouped(fam->blocks - r->blocks, g3, sizeof g3),
             fam->blocks - r->blocks == 1 ? "" : "s");
  }
  const char *what = !strcmp(fam->name, "_k") ? " (row markers)" : "";
  cli_svg_text(s, 20, y, "f", "start", "%s%s", fam->name, what);
  cli_svg_text(s, AX0, y, "s", "start", "%s", line);
}

/* The line on regions: "Regions: 3, split at ['b', *] and ['d', *] (dashed lines)", or
** the table is one region. Past 6 boundaries the first 3, "..." and the last. */
static void regions_line(cli_svg *s, const rowan_layout *l, double y) {
  if (l->n_regions < 2) {
    cli_svg_text(s, 20, y, "n", "start",
                 "Regions: 1. The table is not split (SPLIT ON, SALT_BUCKETS or a split by size "
                 "would cut it into regions by row key, drawn here as dashed lines).");
    return;
  }
  char line[1024];
  int n = snprintf(line, sizeof line, "Regions: %d, split at", l->n_regions), nb = l->n_regions - 1;
  for (int i = 1; i <= nb && n > 0 && (size_t)n < sizeof line; i++) {
    if (nb > 6 && i > 3 && i < nb) {
      if (i == 4) n += snprintf(line + n, sizeof line - (size_t)n, " ...,");
      continue;
    }
    n += snprintf(line + n, sizeof line - (size_t)n, "%s %s%s", i == nb && nb > 1 ? " and" : "",
                  l->regions[i].start_key_text, i < nb - 1 ? "," : "");
  }
  cli_svg_text(s, 20, y, "n", "start", "%s (the dashed lines; hover one for its key)", line);
}

/* The region boundaries down over one family's lanes, from y0 to y1: a dashed line each,
** with data-region (1..n-1) and its start key when hovered. */
static void region_lines(cli_svg *s, const km_map *m, double y0, double y1) {
  const rowan_layout *l = m->layout;
  for (int i = 1; i < l->n_regions; i++) {
    char attrs[64], tip[1200];
    snprintf(attrs, sizeof attrs, "data-region=\"%d\"", i);
    snprintf(tip, sizeof tip, "region %d of %d starts at %s", i + 1, l->n_regions,
             l->regions[i].start_key_text);
    cli_svg_rect(s, ax(m->region_x[i]) - 1, y0, 2, y1 - y0, "rg", attrs, tip);
  }
}

int cli_keymap_svg(const km_map *m, const char *path) {
  const rowan_layout *l = m->layout;
  cli_svg s;
  char title[512];
  snprintf(title, sizeof title, "Key space of %s, row key (%s)", l->table, l->key);
  int h = (int)height_of(m);
  if (cli_svg_open(&s, path, W, h, title, CSS)) return -1;
  double y = 30;
  cli_svg_text(&s, 20, y, "t", "start", "%s", title);
  y += 20;
  if (m->query) {
    size_t len = strlen(m->query);
    for (int i = 0; i < query_lines(m->query); i++) {
      size_t off = (size_t)i * QCHARS;
      bool more = i == 2 && len > off + QCHARS;
      cli_svg_text(&s, 20, y, "q", "start", "%s%.*s%s", i ? "       " : "Query: ",
                   (int)(len - off < QCHARS ? len - off : QCHARS), m->query + off,
                   more ? "..." : "");
      y += 16;
    }
  }
  regions_line(&s, l, y);
  y += 24;
  double bands_top = y;
  if (m->trace) {
    char g[32];
    cli_svg_text(&s, 20, y + 11, "f", "start", "key ranges");
    cli_svg_text(&s, 110, y + 11, "s", "start", "%s sought",
                 cli_svg_grouped(m->trace->ranges_total, g, sizeof g));
    for (int i = 0; i < m->n_ranges; i++) {
      double x0 = ax(m->ranges[i].x0), w = ax(m->ranges[i].x1) - x0;
      if (w < 2) w = 2;
      char attrs[64];
      snprintf(attrs, sizeof attrs, "data-range=\"%d\"", i);
      cli_svg_rect(&s, x0, y, w, 14, "k", attrs, m->ranges[i].r->text);
    }
    if (m->n_ranges == 1)
      cli_svg_text(&s, AX0, y + 27, "s", "start", "%s%s", m->ranges[0].r->text,
                   !m->ranges[0].r->start && !m->ranges[0].r->end ? " (every row key)" : "");
    else if (m->n_ranges > 1)
      cli_svg_text(&s, AX0, y + 27, "s", "start", "%s, ... (hover a range for its bounds)",
                   m->ranges[0].r->text);
    y += 30;
  }
  double lanes_top = y;
  for (int f = 0; f < l->n_families; f++) {
    y += 16;
    family_heading(&s, m, f, y);
    y += 8;
    double fam_top = y;
    int nl = 0;
    for (int q = 0; q < m->n_lanes; q++) {
      const km_lane *ln = &m->lanes[q];
      if (ln->family != f) continue;
      char g[32], b[32];
      cli_svg_rect(&s, AX0, y, AX1 - AX0, LANE, "lane", NULL, NULL);
      cli_svg_text(&s, 30, y + 12, "n", "start", "file %llu: %s block%s, %s",
                   (unsigned long long)ln->file, cli_svg_grouped((uint64_t)ln->n, g, sizeof g),
                   ln->n == 1 ? "" : "s", cli_svg_bytes(ln->bytes, b, sizeof b));
      for (int pass = 0; pass < 2; pass++) /* skipped blocks first: the reads on top */
        for (int i = ln->first; i < ln->first + ln->n; i++) block_rect(&s, m, i, y, pass == 1);
      y += LANE + LANE_GAP;
      nl++;
    }
    if (!nl) {
      cli_svg_text(&s, 30, y + 12, "n", "start", "no store file");
      y += LANE + LANE_GAP;
    }
    region_lines(&s, m, fam_top, y - LANE_GAP);
    if (l->families[f].memstore_cells) {
      char g[32], b[32];
      cli_svg_text(&s, 30, y + 9, "n", "start",
                   "memstore: %s cells, %s, in no block yet (.flush writes them to a store file)",
                   cli_svg_grouped(l->families[f].memstore_cells, g, sizeof g),
                   cli_svg_bytes(l->families[f].memstore_bytes, b, sizeof b));
      y += 14;
    }
    y += 8;
  }
  for (int i = 0; i < m->n_ranges; i++) { /* the ranges' bands over every lane */
    double x0 = ax(m->ranges[i].x0), w = ax(m->ranges[i].x1) - x0;
    if (w < 2) w = 2;
    cli_svg_rect(&s, x0, bands_top + 14, w, y - bands_top - 14, "band", NULL, NULL);
  }
  (void)lanes_top;
  /* the key axis and the leading key column's values */
  y += 4;
  cli_svg_line(&s, AX0, y, AX1, y, "axis");
  double last_end[2] = {-1e9, -1e9};
  for (int i = 0; i < m->n_ticks; i++) {
    double x = ax(m->ticks[i].x);
    double wtext = 6.5 * (double)strlen(m->ticks[i].text);
    int row = x >= last_end[0] ? 0 : x >= last_end[1] ? 1 : -1;
    cli_svg_line(&s, x, y, x, y + (row == 1 ? 20 : 6), "tick");
    if (row < 0) continue;
    double tx = x + 2 + wtext > W - 6 ? W - 6 - wtext : x + 2; /* kept inside the picture */
    cli_svg_text(&s, tx, y + 16 + 14 * row, "s", "start", "%s", m->ticks[i].text);
    last_end[row] = tx + wtext + 8;
  }
  char lead[160];
  snprintf(lead, sizeof lead, "%s", l->key);
  char *comma = strchr(lead, ',');
  if (comma) *comma = 0;
  cli_svg_text(&s, 20, y + 16, "n", "start", "%s (row key order)", lead);
  y += 50;
  /* legend */
  double lx = 20;
  static const char *const cls[4] = {"b0", "r", "h", "k"};
  static const char *const what[4] = {"block not read", "block read from the store file",
                                      "block read from the block cache", "key range sought"};
  for (int i = 0; i < (m->trace ? 4 : 1); i++) {
    cli_svg_rect(&s, lx, y - 10, 14, 12, cls[i], NULL, NULL);
    cli_svg_text(&s, lx + 20, y, "s", "start", "%s", what[i]);
    lx += 40 + 7.0 * (double)strlen(what[i]);
  }
  if (l->n_regions > 1) {
    cli_svg_line(&s, lx + 7, y - 11, lx + 7, y + 3, "rg");
    cli_svg_text(&s, lx + 20, y, "s", "start", "region boundary");
  }
  y += 22;
  const char *ref = m->ref_family >= 0 ? l->families[m->ref_family].name : "none";
  cli_svg_text(&s, 20, y, "n", "start",
               "Widths follow rows: each %s block is as wide as its share of that family's rows "
               "(the family with the most); other keys are placed between them in key order. "
               "Hover a block for its first key and sizes.", ref);
  if (m->trace) {
    char g1[32], g2[32];
    y += 16;
    cli_svg_text(&s, 20, y, "n", "start", "The query examined %s rows and returned %s%s.",
                 cli_svg_grouped(m->m.rows_examined, g1, sizeof g1),
                 cli_svg_grouped(m->rows, g2, sizeof g2),
                 m->other_loads ? "; it also read blocks outside these store files (an index, "
                                  "or files compacted since)" : "");
  }
  return cli_svg_close(&s);
}
