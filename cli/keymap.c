/*
** cli/keymap.c: `.keymap TABLE [QUERY] FILE.svg`, the picture of a table's key space and of
** what a query read in it (cli/keymap.h has the axis rule). With a query, the query runs
** once with a block trace (rowan_stmt_trace; its rows are counted, not printed); then the
** table's layout is taken (rowan_table_layout), every block, file and range is placed on
** the axis, the SVG is written (cli/keymap_svg.c) and a text version is printed: the
** table's regions (their count and boundaries in the heading, and a table split into
** regions gets a bar with ':' where each region after the first starts); per store file of
** each family a bar of 64 characters, '#' where a block was read from the file, '+' where
** only from the block cache, '.' where the blocks were skipped; a bar of the key ranges
** ('='); the leading key column's values under them; per family the blocks and bytes
** read, which are EXPLAIN ANALYZE's figures for the same query.
**
** Not here: the SVG's drawing (cli/keymap_svg.c), the engine side (include/rowan.h).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/keymap.h"
#include "cli/svg.h"

#define BAR 64 /* characters of a text bar */

/* ---- keys on the axis ---------------------------------------------------------------------- */
typedef struct kref {
  const uint8_t *p;  /* the key's bytes */
  int n;             /* its length */
  double x;          /* its place on the axis (set by place_keys) */
} kref;

static int key_cmp(const uint8_t *a, int an, const uint8_t *b, int bn) {
  int n = an < bn ? an : bn;
  int c = n ? memcmp(a, b, (size_t)n) : 0;
  return c ? c : (an > bn) - (an < bn);
}

static int kref_cmp(const void *a, const void *b) {
  const kref *x = a, *y = b;
  return key_cmp(x->p, x->n, y->p, y->n);
}

/* A reference block: a first key and the rows from it to the next one. */
typedef struct rblock {
  const uint8_t *p;  /* first key */
  int n;             /* its length */
  double rows;       /* its rows (weight) */
  int idx;           /* the block's index in the layout */
} rblock;

static int rblock_cmp(const void *a, const void *b) {
  const rblock *x = a, *y = b;
  return key_cmp(x->p, x->n, y->p, y->n);
}

/* Place the sorted distinct keys k[0..nk) on [0, 1] (cli/keymap.h's rule) with the
** reference family's blocks r[0..nr) (sorted); nr 0: evenly. */
static void place_keys(kref *k, int nk, const rblock *r, int nr) {
  if (nk == 0) return;
  if (nr == 0) {
    for (int i = 0; i < nk; i++) k[i].x = nk == 1 ? 0 : (double)i / (nk - 1);
    return;
  }
  double total = 0;
  for (int j = 0; j < nr; j++) total += r[j].rows > 0 ? r[j].rows : 1;
  int i = 0;
  /* keys before the reference's first key get a sliver of their own */
  int before = 0;
  while (before < nk && key_cmp(k[before].p, k[before].n, r[0].p, r[0].n) < 0) before++;
  double pre = before ? (total * 0.02 > 1 ? total * 0.02 : 1) : 0, at = pre;
  for (; i < before; i++) k[i].x = pre * (i + 1) / (before + 1);
  for (int j = 0; j < nr && i < nk; j++) {
    double w = r[j].rows > 0 ? r[j].rows : 1;
    /* the keys in [r[j], r[j+1]): the first key itself at the start, the others spread */
    int s = i, e = i;
    while (e < nk && (j + 1 >= nr || key_cmp(k[e].p, k[e].n, r[j + 1].p, r[j + 1].n) < 0)) e++;
    int inside = e - s;
    if (inside && key_cmp(k[s].p, k[s].n, r[j].p, r[j].n) == 0) {
      k[s].x = at;
      s++;
    }
    for (int q = s; q < e; q++) k[q].x = at + w * (q - s + 1) / (e - s + 1);
    i = e;
    at += w;
  }
  for (; i < nk; i++) k[i].x = at; /* none: every key is at or after r[0] */
  double span = at > 0 ? at : 1;
  for (int q = 0; q < nk; q++) k[q].x /= span;
}

/* The place of key [p, p+n) when it is one of k[0..nk); else the place of the first key
** after it, or the end of the axis when none is. */
static double pos_of(const kref *k, int nk, const uint8_t *p, int n) {
  int lo = 0, hi = nk - 1;
  while (lo <= hi) {
    int mid = (lo + hi) / 2;
    int c = key_cmp(k[mid].p, k[mid].n, p, n);
    if (c == 0) return k[mid].x;
    if (c < 0) lo = mid + 1;
    else hi = mid - 1;
  }
  return lo < nk ? k[lo].x : 1.0;
}

/* The place just after key [p, p+n): the next key's, or the end of the axis. */
static double pos_after(const kref *k, int nk, const uint8_t *p, int n) {
  int lo = 0, hi = nk - 1;
  while (lo <= hi) {
    int mid = (lo + hi) / 2;
    if (key_cmp(k[mid].p, k[mid].n, p, n) <= 0) lo = mid + 1;
    else hi = mid - 1;
  }
  return lo < nk ? k[lo].x : 1.0;
}

/* The first value of a key's text "['Dongsi', '2017-...']" into out: 'Dongsi'. */
static void first_value(const char *text, char *out, size_t cap) {
  const char *p = text[0] == '[' ? text + 1 : text;
  size_t o = 0;
  bool q = false;
  for (; *p && o + 1 < cap; p++) {
    if (*p == '\'') {
      if (q && p[1] == '\'') {
        out[o++] = *p++;
        continue;
      }
      q = !q;
      continue; /* quotes are dropped: the label is the value */
    }
    if (!q && (*p == ',' || *p == ']' || *p == ')')) break;
    out[o++] = *p;
  }
  out[o] = 0;
}

/* ---- building the map -------------------------------------------------------------------- */
static int build(km_map *m) {
  const rowan_layout *l = m->layout;
  int nb = l->n_blocks;
  m->blocks = calloc(nb ? (size_t)nb : 1, sizeof *m->blocks);
  m->lanes = calloc(nb ? (size_t)nb : 1, sizeof *m->lanes);
  m->fam = calloc((size_t)l->n_families, sizeof *m->fam);
  m->ticks = calloc(64, sizeof *m->ticks);
  int nr_trace = m->trace ? m->trace->n_ranges : 0;
  m->ranges = calloc(nr_trace ? (size_t)nr_trace : 1, sizeof *m->ranges);
  m->region_x = calloc((size_t)l->n_regions, sizeof *m->region_x);
  kref *keys = calloc((size_t)nb * 2 + (size_t)nr_trace * 2 + 1, sizeof *keys);
  rblock *ref = calloc(nb ? (size_t)nb : 1, sizeof *ref);
  if (!m->blocks || !m->lanes || !m->fam || !m->ticks || !m->ranges || !m->region_x || !keys ||
      !ref) {
    free(keys);
    free(ref);
    return -1;
  }
  /* lanes: consecutive blocks of one file */
  for (int i = 0; i < nb; i++) {
    const rowan_layout_block *b = &l->blocks[i];
    m->blocks[i].b = b;
    if (!m->n_lanes || m->lanes[m->n_lanes - 1].file != b->file ||
        m->lanes[m->n_lanes - 1].family != b->family) {
      km_lane *ln = &m->lanes[m->n_lanes++];
      ln->family = b->family;
      ln->file = b->file;
      ln->bytes = b->file_bytes;
      ln->first = i;
    }
    m->lanes[m->n_lanes - 1].n++;
    m->blocks[i].lane = m->n_lanes - 1;
  }
  /* the reference family: the most rows */
  double best = -1;
  m->ref_family = -1;
  for (int f = 0; f < l->n_families; f++) {
    double rows = 0;
    for (int i = 0; i < nb; i++)
      if (l->blocks[i].family == f) rows += l->blocks[i].rows;
    if (rows > best && rows > 0) {
      best = rows;
      m->ref_family = f;
    }
  }
  int nref = 0;
  for (int i = 0; i < nb; i++)
    if (l->blocks[i].family == m->ref_family)
      ref[nref++] = (rblock){l->blocks[i].first_key, l->blocks[i].first_key_len,
                             l->blocks[i].rows, i};
  qsort(ref, (size_t)nref, sizeof *ref, rblock_cmp);
  /* the keys, sorted and distinct */
  int nk = 0;
  for (int i = 0; i < nb; i++) {
    keys[nk++] = (kref){l->blocks[i].first_key, l->blocks[i].first_key_len, 0};
    if (l->blocks[i].block + 1 == l->blocks[i].file_blocks)
      keys[nk++] = (kref){l->blocks[i].last_key, l->blocks[i].last_key_len, 0};
  }
  for (int i = 0; i < nr_trace; i++) {
    const rowan_range_read *r = &m->trace->ranges[i];
    if (strcmp(r->table, l->table) != 0) continue; /* an index's ranges: another key space */
    if (r->start) keys[nk++] = (kref){r->start, r->start_len, 0};
    if (r->end) keys[nk++] = (kref){r->end, r->end_len, 0};
  }
  qsort(keys, (size_t)nk, sizeof *keys, kref_cmp);
  int u = 0;
  for (int i = 0; i < nk; i++)
    if (!u || kref_cmp(&keys[u - 1], &keys[i]) != 0) keys[u++] = keys[i];
  nk = u;
  place_keys(keys, nk, ref, nref);
  for (int i = 0; i < nb; i++) {
    const rowan_layout_block *b = &l->blocks[i];
    km_block *k = &m->blocks[i];
    k->x0 = pos_of(keys, nk, b->first_key, b->first_key_len);
    if (b->block + 1 < b->file_blocks && i + 1 < nb)
      k->x1 = pos_of(keys, nk, l->blocks[i + 1].first_key, l->blocks[i + 1].first_key_len);
    else
      k->x1 = pos_after(keys, nk, b->last_key, b->last_key_len);
    if (k->x1 < k->x0) k->x1 = k->x0;
  }
  for (int i = 0; i < nr_trace; i++) {
    const rowan_range_read *r = &m->trace->ranges[i];
    if (strcmp(r->table, l->table) != 0) continue;
    km_range *d = &m->ranges[m->n_ranges++];
    d->r = r;
    d->x0 = r->start ? pos_of(keys, nk, r->start, r->start_len) : 0;
    d->x1 = r->end ? pos_of(keys, nk, r->end, r->end_len) : 1;
  }
  /* a region starts where the first key at or after its start key is: the first block of
     its files, not a place between the last key before it and that block */
  for (int i = 1; i < l->n_regions; i++) /* no key at all (no store file): evenly */
    m->region_x[i] = nk ? pos_of(keys, nk, l->regions[i].start_key, l->regions[i].start_key_len)
                        : (double)i / l->n_regions;
  /* the reads, matched to the blocks by file and block */
  for (int i = 0; m->trace && i < m->trace->n_blocks; i++) {
    const rowan_block_read *r = &m->trace->blocks[i];
    int hit = -1;
    for (int q = 0; q < m->n_lanes && hit < 0; q++)
      if (m->lanes[q].file == r->file && !strcmp(r->table, l->table) &&
          r->block < (uint32_t)m->lanes[q].n)
        hit = m->lanes[q].first + (int)r->block;
    if (hit < 0) {
      m->other_loads += r->loads;
      continue;
    }
    km_block *k = &m->blocks[hit];
    k->loads += r->loads;
    k->hits += r->cache_hits;
    km_fam_read *fr = &m->fam[k->b->family];
    fr->blocks++;
    fr->loads += r->loads;
    fr->hits += r->cache_hits;
    fr->bytes += (uint64_t)(r->loads - r->cache_hits) * k->b->bytes;
  }
  for (int f = 0; f < l->n_families; f++) {
    char name[160];
    snprintf(name, sizeof name, "%s.%s", l->table, l->families[f].name);
    for (int i = 0; i < m->m.n_families; i++)
      if (!strcmp(m->m.families[i].family, name)) m->fam[f].in_metrics = true;
  }
  /* the leading column's values along the reference family's blocks, where they change,
     at least 1/48 of the axis apart */
  char last[48] = "";
  for (int j = 0; j < nref && m->n_ticks < 64; j++) {
    const rowan_layout_block *b = &l->blocks[ref[j].idx];
    char v[48];
    first_value(b->first_key_text, v, sizeof v);
    if (m->n_ticks && !strcmp(v, last)) continue;
    snprintf(last, sizeof last, "%s", v);
    double x = pos_of(keys, nk, b->first_key, b->first_key_len);
    if (m->n_ticks && x - m->ticks[m->n_ticks - 1].x < 1.0 / 48) continue;
    km_tick *t = &m->ticks[m->n_ticks++];
    t->x = x;
    snprintf(t->text, sizeof t->text, "%s", v);
  }
  free(keys);
  free(ref);
  return 0;
}

static void map_free(km_map *m) {
  rowan_layout_free(m->layout);
  rowan_trace_free(m->trace);
  free(m->blocks);
  free(m->lanes);
  free(m->ranges);
  free(m->fam);
  free(m->ticks);
  free(m->region_x);
}

/* ---- the text version ---------------------------------------------------------------------- */
static void bar_of_lane(const km_map *m, const km_lane *ln, char *bar) {
  memset(bar, ' ', BAR);
  bar[BAR] = 0;
  for (int i = ln->first; i < ln->first + ln->n; i++) {
    const km_block *k = &m->blocks[i];
    int c0 = (int)(k->x0 * BAR), c1 = (int)(k->x1 * BAR - 1e-9);
    if (c0 >= BAR) c0 = BAR - 1;
    if (c1 < c0) c1 = c0;
    if (c1 >= BAR) c1 = BAR - 1;
    char ch = k->loads == 0 ? '.' : k->hits == k->loads ? '+' : '#';
    for (int c = c0; c <= c1; c++) {
      if (bar[c] == '#' || (bar[c] == '+' && ch == '.')) continue; /* a read shows */
      bar[c] = ch;
    }
  }
}

/* The column of axis place x in a bar. */
static int bar_col(double x) {
  int c = (int)(x * BAR);
  return c < 0 ? 0 : c >= BAR ? BAR - 1 : c;
}

/* "regions: 3 (split at ['b', *], ['d', *])", or "regions: 1": past 5 boundaries the first
** 3, "..." and the last. */
static void print_regions(FILE *o, const rowan_layout *l) {
  fprintf(o, "regions: %d", l->n_regions);
  int nb = l->n_regions - 1;
  for (int i = 1; i <= nb; i++) {
    if (nb > 5 && i > 3 && i < nb) {
      if (i == 4) fputs(", ...", o);
      continue;
    }
    fprintf(o, "%s%s", i == 1 ? " (split at " : ", ", l->regions[i].start_key_text);
  }
  if (nb > 0) fputc(')', o);
}

static void print_text(cli_shell *sh, const km_map *m, const char *path) {
  FILE *o = sh->out;
  const rowan_layout *l = m->layout;
  char g1[32], g2[32], b1[32], b2[32];
  fprintf(o, "%s: row key (%s); ", l->table, l->key);
  print_regions(o, l);
  fputc('\n', o);
  if (m->query) fprintf(o, "query: %s\n", m->query);
  int lw = 10;
  for (int f = 0; f < l->n_families; f++)
    if ((int)strlen(l->families[f].name) + 6 > lw) lw = (int)strlen(l->families[f].name) + 6;
  char bar[BAR + 1];
  if (l->n_regions > 1) { /* '-' along the axis, ':' where a region starts */
    memset(bar, '-', BAR);
    bar[BAR] = 0;
    for (int i = 1; i < l->n_regions; i++) bar[bar_col(m->region_x[i])] = ':';
    fprintf(o, "  %-*s|%s| %d regions\n", lw, "regions", bar, l->n_regions);
  }
  if (m->trace) {
    memset(bar, ' ', BAR);
    bar[BAR] = 0;
    for (int i = 0; i < m->n_ranges; i++) {
      int c0 = (int)(m->ranges[i].x0 * BAR), c1 = (int)(m->ranges[i].x1 * BAR - 1e-9);
      if (c0 >= BAR) c0 = BAR - 1;
      if (c1 < c0) c1 = c0;
      if (c1 >= BAR) c1 = BAR - 1;
      for (int c = c0; c <= c1; c++) bar[c] = '=';
    }
    fprintf(o, "  %-*s|%s| %llu key range%s", lw, "ranges", bar,
            (unsigned long long)m->trace->ranges_total, m->trace->ranges_total == 1 ? "" : "s");
    if (m->n_ranges) fprintf(o, ": %s%s", m->ranges[0].r->text, m->n_ranges > 1 ? ", ..." : "");
    fputc('\n', o);
  }
  for (int f = 0; f < l->n_families; f++) {
    const rowan_layout_family *fam = &l->families[f];
    int nl = 0;
    for (int q = 0; q < m->n_lanes; q++)
      if (m->lanes[q].family == f) nl++;
    for (int q = 0, k = 0; q < m->n_lanes; q++) {
      const km_lane *ln = &m->lanes[q];
      if (ln->family != f) continue;
      char label[96];
      if (nl > 1) snprintf(label, sizeof label, "%s #%d", fam->name, ++k);
      else snprintf(label, sizeof label, "%s", fam->name);
      bar_of_lane(m, ln, bar);
      fprintf(o, "  %-*s|%s|", lw, label, bar);
      if (k <= 1) {
        fprintf(o, " %s block%s, %s", cli_svg_grouped(fam->blocks, g1, sizeof g1),
                fam->blocks == 1 ? "" : "s", cli_svg_bytes(fam->bytes, b1, sizeof b1));
        if (m->trace)
        {
          char g3[32];
          fprintf(o, "; read %s (%s cached), %s", cli_svg_grouped(m->fam[f].loads, g2, sizeof g2),
                  cli_svg_grouped(m->fam[f].hits, g3, sizeof g3),
                  cli_svg_bytes(m->fam[f].bytes, b2, sizeof b2));
        }
      }
      fputc('\n', o);
    }
    if (nl == 0)
      fprintf(o, "  %-*s|%*s| no store file\n", lw, fam->name, BAR, "");
    if (fam->memstore_cells)
      fprintf(o, "  %-*s %s cell%s, %s in the memstore (in no block: .flush writes them)\n", lw,
              "", cli_svg_grouped(fam->memstore_cells, g1, sizeof g1),
              fam->memstore_cells == 1 ? "" : "s", cli_svg_bytes(fam->memstore_bytes, b1, sizeof b1));
    if (fam->paged_files) /* opened past rowan_options.index_memory (-indexmemory) */
      fprintf(o, "  %-*s %s of %s file%s with a paged block index (past the index memory), %s"
              " held open\n", lw, "", cli_svg_grouped(fam->paged_files, g1, sizeof g1),
              cli_svg_grouped(fam->store_files, g2, sizeof g2), fam->store_files == 1 ? "" : "s",
              cli_svg_bytes(fam->index_bytes, b1, sizeof b1));
  }
  /* the leading column's values where they begin, as many as fit */
  char ruler[BAR + 64];
  memset(ruler, ' ', sizeof ruler);
  int end = 0, last_col = -2;
  for (int i = 0; i < m->n_ticks; i++) {
    int c = (int)(m->ticks[i].x * BAR);
    int len = (int)strlen(m->ticks[i].text);
    if (c <= last_col || c + len + 1 > (int)sizeof ruler - 1) continue;
    ruler[c] = '^';
    memcpy(ruler + c + 1, m->ticks[i].text, (size_t)len);
    last_col = c + len + 1;
    if (last_col > end) end = last_col;
  }
  ruler[end] = 0;
  if (m->n_ticks) fprintf(o, "  %-*s %s\n", lw, "", ruler);
  if (m->trace) {
    fprintf(o, "  # read from the file   + read from the block cache   . not read   "
               "(a character: 1/%d of the rows)\n", BAR);
    fprintf(o, "  rows examined %s, returned %s", cli_svg_grouped(m->m.rows_examined, g1, sizeof g1),
            cli_svg_grouped(m->rows, g2, sizeof g2));
    if (m->other_loads)
      fprintf(o, "; %llu other block loads (an index, or files compacted since)",
              (unsigned long long)m->other_loads);
    fputc('\n', o);
  }
  fprintf(o, "wrote %s\n", path);
}

/* ---- the command --------------------------------------------------------------------------- */
/* Run query traced: its rows counted, metrics and trace into m. 0 or 1 (message printed). */
static int run_query(cli_shell *sh, km_map *m, const char *query) {
  rowan_stmt *st = NULL;
  const char *tail = NULL;
  int rc = rowan_prepare(sh->db, query, -1, &st, &tail);
  if (rc != ROWAN_OK) return cli_errorf(sh, ".keymap: %s", rowan_errmsg(sh->db));
  if (!st) return cli_errorf(sh, ".keymap: the query is empty");
  if (tail && tail[strspn(tail, " \t\r\n;")])
    fprintf(stderr, "Warning: .keymap runs the first statement only\n");
  rc = rowan_stmt_trace(st, 1);
  uint64_t rows = 0;
  if (rc == ROWAN_OK)
    while ((rc = rowan_step(st)) == ROWAN_ROW) rows++;
  if (rc != ROWAN_DONE) {
    int e = cli_errorf(sh, ".keymap: %s", rowan_errmsg(sh->db));
    rowan_finalize(st);
    return e;
  }
  m->rows = rows;
  rowan_stmt_metrics(st, &m->m);
  rc = rowan_stmt_trace_get(st, &m->trace);
  rowan_finalize(st);
  if (rc != ROWAN_OK) return cli_errorf(sh, ".keymap: %s", rowan_errmsg(sh->db));
  return 0;
}

int cli_dot_keymap(cli_shell *sh, int argc, char **argv) {
  if (argc != 3 && argc != 4)
    return cli_errorf(sh, "usage: .keymap TABLE [QUERY] FILE.svg (quote the query)");
  if (!sh->db) return cli_errorf(sh, ".keymap: no database open");
  km_map m;
  memset(&m, 0, sizeof m);
  const char *path = argv[argc - 1];
  if (argc == 4) {
    m.query = argv[2];
    if (run_query(sh, &m, argv[2])) return 1;
  }
  if (rowan_table_layout(sh->db, argv[1], &m.layout) != ROWAN_OK) {
    int e = cli_errorf(sh, ".keymap: %s", rowan_errmsg(sh->db));
    map_free(&m);
    return e;
  }
  int rc = 0;
  if (build(&m)) rc = cli_errorf(sh, ".keymap: out of memory");
  else if (cli_keymap_svg(&m, path)) rc = cli_errorf(sh, ".keymap: cannot write \"%s\"", path);
  else print_text(sh, &m, path);
  map_free(&m);
  return rc;
}
