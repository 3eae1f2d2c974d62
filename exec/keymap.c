/*
** exec/keymap.c: a table's key-space layout (its store files and blocks per family, first
** keys decoded, and its regions) and a statement's block trace in the same terms
** (exec/keymap.h). The key text rules are in that header; bound_text below implements them.
**
** Not here: recording the trace (kv/util/trace.c, exec_step sets the thread's current trace in
** exec/engine.c), drawing (cli/).
*/
#include <assert.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/catalog.h"
#include "catalog/keycodec.h"
#include "exec/engine_int.h"
#include "exec/index.h"
#include "exec/keymap.h"
#include "planner/filter.h"

#define TEXT_MAX 1024 /* bytes of one key's text (longer ones are cut with "...") */

/* ---- Key text ---------------------------------------------------------------------------- */
typedef struct tbuf {
  char b[TEXT_MAX];  /* the text, NUL-terminated */
  size_t n;          /* its length */
  int cols;          /* key columns it holds (decode_exact) */
} tbuf;

/* Append s[0..n) to t; past TEXT_MAX - 4 bytes the text ends with "..." and stays so. */
static void tput(tbuf *t, const char *s, size_t n) {
  size_t room = sizeof t->b - 4;
  if (t->n >= room) return; /* already cut */
  if (t->n + n > room) {
    memcpy(t->b + t->n, s, room - t->n);
    memcpy(t->b + room, "...", 4);
    t->n = room + 3;
    return;
  }
  memcpy(t->b + t->n, s, n);
  t->n += n;
  t->b[t->n] = 0;
}

static void tputs(tbuf *t, const char *s) { tput(t, s, strlen(s)); }

static void thex(tbuf *t, const uint8_t *p, size_t n) {
  static const char hx[] = "0123456789ABCDEF";
  tputs(t, "X'");
  for (size_t i = 0; i < n && i < 64; i++) {
    char two[2] = {hx[p[i] >> 4], hx[p[i] & 15]};
    tput(t, two, 2);
  }
  tputs(t, n > 64 ? "...'" : "'");
}

/* Decode whole columns of key [p, p+n) per cols[0..nc): their literals ", "-separated into
** t; returns the columns decoded and sets *used to the bytes they took. */
static int decode_cols(const cat_key_col *cols, int nc, const uint8_t *p, size_t n,
                       tbuf *t, size_t *used) {
  uint8_t *scratch = malloc(n + 1);
  int k = 0;
  const uint8_t *q = p, *lim = p + n;
  *used = 0;
  if (!scratch) return 0;
  while (k < nc && q < lim) {
    cat_value v;
    cat_error err;
    const uint8_t *end = NULL;
    if (cat_key_decode(&cols[k], 1, q, lim, &v, scratch, n + 1, &end, &err) != CAT_OK) break;
    char lit[256];
    size_t ln = plan_value_literal(&v, lit, sizeof lit);
    if (k) tputs(t, ", ");
    tput(t, lit, ln < sizeof lit ? ln : sizeof lit - 1);
    q = end;
    k++;
  }
  free(scratch);
  *used = (size_t)(q - p);
  return k;
}

/* Whether [p, p+n) decodes exactly into whole columns; their text into t. */
static bool decode_exact(const cat_key_col *cols, int nc, const uint8_t *p, size_t n,
                         tbuf *t) {
  size_t used = 0;
  t->n = 0;
  t->b[0] = 0;
  int k = decode_cols(cols, nc, p, n, t, &used);
  t->cols = k;
  return k > 0 && used == n;
}

/* Whether [p, p+n) is cat_key_prefix_end(X) of some X that decodes exactly (X is p with
** its last byte decremented and up to 4 0xFF bytes appended); X's text into t. */
static bool after_prefix(const cat_key_col *cols, int nc, const uint8_t *p, size_t n,
                         tbuf *t) {
  if (n == 0 || p[n - 1] == 0x00) return false;
  uint8_t *x = malloc(n + 4);
  bool ok = false;
  for (int pad = 0; x && pad <= 4 && !ok; pad++) {
    memcpy(x, p, n);
    x[n - 1]--;
    memset(x + n, 0xFF, (size_t)pad);
    ok = decode_exact(cols, nc, x, n + (size_t)pad, t);
  }
  free(x);
  return ok;
}

/* The text of one bound. kind 0: a whole row key ("[v1, v2]"); 1: an inclusive range
** start; 2: an exclusive range end. A bound that is the key just after X (X + 0x00) or the
** first key after every key starting with X (cat_key_prefix_end(X)) is printed as X with
** the other mark: "[X)" for a start (exclusive of X), "[X]" for an end (X included). Where
** two readings fit (the end after every key of INTEGER 5 is the key of 6), an end is read
** as "after X", a start as itself: "k = 5" prints [5] .. [5], not [5] .. [6). */
static void key_text(const cat_key_col *cols, int nc, const uint8_t *p, size_t n, int kind,
                     tbuf *out) {
  out->n = 0;
  out->b[0] = 0;
  char mark = kind == 2 ? ')' : ']', other = kind == 2 ? ']' : ')';
  tbuf t;
  bool ok = false;
  if (cols && kind == 2 && after_prefix(cols, nc, p, n, &t)) {
    ok = true;
    mark = other;
  }
  if (!ok && cols) ok = decode_exact(cols, nc, p, n, &t);
  if (!ok && cols && kind && n > 1 && p[n - 1] == 0x00 && decode_exact(cols, nc, p, n - 1, &t)) {
    ok = true; /* X + 0x00 */
    mark = other;
  }
  if (!ok && cols && kind == 1 && after_prefix(cols, nc, p, n, &t)) {
    ok = true;
    mark = other;
  }
  tputs(out, "[");
  if (ok) {
    tput(out, t.b, t.n);
    for (int k = t.cols; kind && k < nc; k++) tputs(out, ", *"); /* as EXPLAIN: unbounded */
  } else {
    size_t used = 0;
    t.n = 0;
    t.b[0] = 0;
    int k = cols ? decode_cols(cols, nc, p, n, &t, &used) : 0;
    if (k) {
      tput(out, t.b, t.n);
      tputs(out, ", ");
    }
    thex(out, p + used, n - used);
  }
  char m[2] = {mark, 0};
  tputs(out, m);
}

/* key_text of a key that starts with a salt byte when `salted`: the byte first, as the
** bucket number ("[2, 'a', 1]"), then the rest of the key as key_text prints it; the salt
** byte alone is the whole bucket ("[2, *, *]" as a bound, "[2]" as a row key). */
static void bound_text(const cat_key_col *cols, int nc, bool salted, const uint8_t *p,
                       size_t n, int kind, tbuf *out) {
  if (!salted || n == 0) {
    key_text(cols, nc, p, n, kind, out);
    return;
  }
  char b[8];
  snprintf(b, sizeof b, "[%u", p[0]);
  out->n = 0;
  out->b[0] = 0;
  tputs(out, b);
  if (n == 1) {
    for (int k = 0; kind && k < nc; k++) tputs(out, ", *");
    tputs(out, kind == 2 ? ")" : "]");
    return;
  }
  tbuf rest;
  key_text(cols, nc, p + 1, n - 1, kind, &rest);
  tputs(out, ", ");
  tput(out, rest.b + 1, rest.n - 1); /* its text without the '[' */
}

static char *dup_text(const tbuf *t) {
  char *s = malloc(t->n + 1);
  if (s) memcpy(s, t->b, t->n + 1);
  return s;
}

static uint8_t *dup_bytes(const uint8_t *p, size_t n) {
  uint8_t *r = malloc(n ? n : 1);
  if (r && n) memcpy(r, p, n);
  return r;
}

/* ---- The layout -------------------------------------------------------------------------- */
typedef struct lctx {
  exec_km_layout *l;       /* the layout being filled */
  const cat_table *t;      /* its table */
  uint32_t fam;            /* the family being listed */
  size_t cap;              /* blocks allocated */
  int rc;                  /* EXEC_NOMEM after a failure */
} lctx;

static int add_block(void *ctx, const kv_file_block *b) {
  lctx *c = ctx;
  exec_km_layout *l = c->l;
  if (l->n_blocks == c->cap) {
    size_t nc = c->cap ? c->cap * 2 : 256;
    exec_km_block *nb = realloc(l->blocks, nc * sizeof *nb);
    if (!nb) return c->rc = EXEC_NOMEM;
    l->blocks = nb;
    c->cap = nc;
  }
  exec_km_block *o = &l->blocks[l->n_blocks];
  memset(o, 0, sizeof *o);
  l->n_blocks++;
  o->family = c->fam;
  o->file = b->file;
  o->file_bytes = b->file_bytes;
  o->file_blocks = b->n_blocks;
  o->block = b->block;
  o->offset = b->offset;
  o->bytes = b->bytes;
  o->raw_bytes = b->raw_bytes;
  o->cells = b->cells;
  o->rows = b->rows;
  tbuf t;
  o->first = dup_bytes(b->first_row, b->first_row_len);
  o->first_len = b->first_row_len;
  bool salted = c->t->salt_buckets > 0;
  bound_text(c->t->key_cols, c->t->n_pk, salted, b->first_row, b->first_row_len, 0, &t);
  o->first_text = dup_text(&t);
  o->last = dup_bytes(b->last_row, b->last_row_len);
  o->last_len = b->last_row_len;
  bound_text(c->t->key_cols, c->t->n_pk, salted, b->last_row, b->last_row_len, 0, &t);
  o->last_text = dup_text(&t);
  if (!o->first || !o->first_text || !o->last || !o->last_text) return c->rc = EXEC_NOMEM;
  exec_km_family *f = &l->families[c->fam];
  f->blocks++;
  if (b->block == 0) {
    f->store_files++;
    f->bytes += b->file_bytes;
  }
  return 0;
}

typedef struct rctx {
  exec_km_layout *l;       /* the layout whose regions are being filled */
  const cat_table *t;      /* its table */
  uint32_t cap;            /* regions allocated */
  int rc;                  /* EXEC_NOMEM after a failure */
} rctx;

/* Region i + 1 of the table starts at key[0..len): kept with its text (kv_family_regions
** calls it in key order, in one look). */
static void add_region(void *ctx, uint32_t i, const uint8_t *key, uint32_t len) {
  rctx *c = ctx;
  exec_km_layout *l = c->l;
  if (c->rc || i + 1 != l->n_regions) return;
  if (l->n_regions == c->cap) {
    uint32_t nc = c->cap * 2;
    exec_km_region *nr = realloc(l->regions, nc * sizeof *nr);
    if (!nr) {
      c->rc = EXEC_NOMEM;
      return;
    }
    l->regions = nr;
    c->cap = nc;
  }
  exec_km_region *r = &l->regions[l->n_regions];
  tbuf t;
  bound_text(c->t->key_cols, c->t->n_pk, c->t->salt_buckets > 0, key, len, 1, &t);
  r->start = dup_bytes(key, len);
  r->start_len = len;
  r->start_text = dup_text(&t);
  l->n_regions++; /* freed whole or in part by exec_km_layout_free */
  if (!r->start || !r->start_text) c->rc = EXEC_NOMEM;
}

/* The regions of t into l: the first from the first row ("[*]"), then one per boundary. */
static int get_regions(exec_session *s, const cat_table *t, exec_km_layout *l,
                       exec_error *err) {
  rctx c = {l, t, 8, EXEC_OK};
  if (!(l->regions = calloc(c.cap, sizeof *l->regions)) ||
      !(l->regions[0].start_text = strdup("[*]")))
    return exec_fail(err, EXEC_NOMEM, -1, "out of memory");
  l->n_regions = 1;
  uint32_t n = 0;
  int krc = kv_family_regions(s->db, t->families[0].kv_id, &n, add_region, &c);
  if (krc) return exec_kv_error(krc, err);
  if (c.rc) return exec_fail(err, EXEC_NOMEM, -1, "out of memory");
  assert(n == l->n_regions); /* one look: the count and the boundaries listed agree */
  return EXEC_OK;
}

int exec_km_layout_get(exec_session *s, const char *name, bool blocks, exec_km_layout **out,
                       exec_error *err) {
  *out = NULL;
  const cat_table *t = name ? cat_find_table_folded(s->cat, name) : NULL;
  if (!t) return exec_fail(err, EXEC_ERROR, -1, "no such table: %s", name ? name : "(null)");
  exec_km_layout *l = calloc(1, sizeof *l);
  if (!l) return exec_fail(err, EXEC_NOMEM, -1, "out of memory");
  l->table = strdup(t->name);
  size_t kl = 1;
  for (int i = 0; i < t->n_pk; i++) kl += strlen(t->columns[t->pk[i]].name) + 8;
  l->key = calloc(1, kl);
  l->families = calloc((size_t)t->n_families, sizeof *l->families);
  if (!l->table || !l->key || !l->families) goto nomem;
  for (int i = 0; i < t->n_pk; i++) {
    const cat_column *c = &t->columns[t->pk[i]];
    if (i) strcat(l->key, ", ");
    strcat(l->key, c->name);
    if (c->desc) strcat(l->key, " DESC");
  }
  l->n_families = (uint32_t)t->n_families;
  lctx c = {l, t, 0, 0, EXEC_OK};
  for (int i = 0; i < t->n_families; i++) {
    exec_km_family *f = &l->families[i];
    f->kv_id = t->families[i].kv_id;
    if (!(f->name = strdup(t->families[i].name))) goto nomem;
    kv_family_stats st;
    int krc = kv_family_get_stats(s->db, f->kv_id, &st);
    if (krc) {
      exec_km_layout_free(l);
      return exec_kv_error(krc, err);
    }
    f->memstore_bytes = st.memstore_bytes;
    f->memstore_cells = st.memstore_cells;
    f->reader_bytes = st.reader_bytes;
    f->paged_files = st.paged_files;
    if (!blocks) { /* the totals of the same look */
      f->store_files = st.store_files;
      f->blocks = st.blocks;
      f->bytes = st.store_file_bytes;
      continue;
    }
    c.fam = (uint32_t)i;
    krc = kv_family_blocks(s->db, f->kv_id, add_block, &c);
    if (c.rc) goto nomem;
    /* (the stats and the walk are two looks: a flush between them must not say "3 of 1") */
    if (f->paged_files > f->store_files) f->paged_files = f->store_files;
    if (krc) {
      exec_km_layout_free(l);
      return exec_kv_error(krc, err);
    }
  }
  int rrc = get_regions(s, t, l, err);
  if (rrc) {
    exec_km_layout_free(l);
    return rrc;
  }
  *out = l;
  return EXEC_OK;
nomem:
  exec_km_layout_free(l);
  return exec_fail(err, EXEC_NOMEM, -1, "out of memory");
}

void exec_km_layout_free(exec_km_layout *l) {
  if (!l) return;
  for (size_t i = 0; i < l->n_blocks; i++) {
    free(l->blocks[i].first);
    free(l->blocks[i].first_text);
    free(l->blocks[i].last);
    free(l->blocks[i].last_text);
  }
  for (uint32_t i = 0; l->families && i < l->n_families; i++) free(l->families[i].name);
  for (uint32_t i = 0; l->regions && i < l->n_regions; i++) {
    free(l->regions[i].start);
    free(l->regions[i].start_text);
  }
  free(l->regions);
  free(l->blocks);
  free(l->families);
  free(l->table);
  free(l->key);
  free(l);
}

/* ---- The trace --------------------------------------------------------------------------- */
int exec_set_trace(exec_stmt *st, bool on, exec_error *err) {
  if (on && !st->trace && !(st->trace = kv_trace_new()))
    return exec_fail(err, EXEC_NOMEM, -1, "out of memory");
  if (on) kv_trace_clear(st->trace);
  st->tracing = on;
  return EXEC_OK;
}

kv_trace *exec_get_trace(const exec_stmt *st) { return st->trace; }

/* Who owns kv family fid: names and the key schema of its row keys. */
typedef struct owner {
  char table[512];              /* "T" or "T.IDX" */
  const char *family;           /* the family's name */
  const cat_key_col *cols;      /* row-key columns, or NULL when unknown */
  int n_cols;                   /* their count */
  bool salted;                  /* its row keys start with a salt byte (catalog/salt.h) */
} owner;

/* Find fid's owner in the catalog. An index's key schema comes from its codec, kept in *ic
** (initialized once per index met; the caller frees it). */
static void find_owner(exec_session *s, uint32_t fid, owner *o, exec_index_codec *ic,
                       const cat_index **ic_for) {
  snprintf(o->table, sizeof o->table, "?");
  o->family = "?";
  o->cols = NULL;
  o->n_cols = 0;
  o->salted = false;
  for (int i = 0; i < cat_table_count(s->cat); i++) {
    const cat_table *t = cat_table_at(s->cat, i);
    for (int f = 0; f < t->n_families; f++) {
      if (t->families[f].kv_id != fid) continue;
      snprintf(o->table, sizeof o->table, "%s", t->name);
      o->family = t->families[f].name;
      o->cols = t->key_cols;
      o->n_cols = t->n_pk;
      o->salted = t->salt_buckets > 0;
      return;
    }
    for (int x = 0; x < t->n_indexes; x++) {
      const cat_index *ix = &t->indexes[x];
      if (ix->kv_key_family != fid && ix->kv_data_family != fid) continue;
      snprintf(o->table, sizeof o->table, "%s.%s", t->name, ix->name);
      o->family = ix->kv_key_family == fid ? CAT_KEY_FAMILY : CAT_DEFAULT_FAMILY;
      o->salted = ix->salt_buckets > 0;
      if (*ic_for != ix) {
        exec_index_codec_free(ic);
        memset(ic, 0, sizeof *ic);
        exec_error e;
        *ic_for = exec_index_codec_init(ic, s->cat, t, ix, &e) == EXEC_OK ? ix : NULL;
      }
      if (*ic_for == ix) {
        o->cols = ic->key_cols;
        o->n_cols = ic->n_key_cols;
      }
      return;
    }
  }
}

int exec_km_trace_get(exec_stmt *st, exec_km_trace **out, exec_error *err) {
  exec_km_trace *r = calloc(1, sizeof *r);
  *out = NULL;
  if (!r) return exec_fail(err, EXEC_NOMEM, -1, "out of memory");
  exec_index_codec ic;
  memset(&ic, 0, sizeof ic);
  const cat_index *ic_for = NULL;
  owner o;
  size_t nb = 0, nr = 0;
  const kv_trace_block *tb = kv_trace_blocks(st->trace, &nb);
  const kv_trace_range *tr = kv_trace_ranges(st->trace, &nr, &r->ranges_total);
  r->lost = kv_trace_lost(st->trace);
  r->reads = calloc(nb ? nb : 1, sizeof *r->reads);
  r->ranges = calloc(nr ? nr : 1, sizeof *r->ranges);
  if (!r->reads || !r->ranges) goto nomem;
  uint32_t last_fid = UINT32_MAX;
  for (size_t i = 0; i < nb; i++) {
    exec_km_read *d = &r->reads[r->n_reads++];
    if (tb[i].family_id != last_fid) find_owner(st->s, tb[i].family_id, &o, &ic, &ic_for);
    last_fid = tb[i].family_id;
    d->table = strdup(o.table);
    d->family = strdup(o.family);
    d->file = tb[i].file;
    d->block = tb[i].block;
    d->loads = tb[i].loads;
    d->cache_hits = tb[i].cache_hits;
    if (!d->table || !d->family) goto nomem;
  }
  last_fid = UINT32_MAX;
  for (size_t i = 0; i < nr; i++) {
    exec_km_range *d = &r->ranges[r->n_ranges++];
    if (tr[i].family_id != last_fid) find_owner(st->s, tr[i].family_id, &o, &ic, &ic_for);
    last_fid = tr[i].family_id;
    d->table = strdup(o.table);
    d->has_start = tr[i].has_start;
    d->has_end = tr[i].has_end;
    tbuf a, b;
    strcpy(a.b, "[*]");
    a.n = 3;
    b = a;
    if (d->has_start) {
      d->start = dup_bytes(tr[i].start, tr[i].start_len);
      d->start_len = tr[i].start_len;
      bound_text(o.cols, o.n_cols, o.salted, tr[i].start, tr[i].start_len, 1, &a);
    }
    if (d->has_end) {
      d->end = dup_bytes(tr[i].end, tr[i].end_len);
      d->end_len = tr[i].end_len;
      bound_text(o.cols, o.n_cols, o.salted, tr[i].end, tr[i].end_len, 2, &b);
    }
    d->text = malloc(a.n + b.n + 5);
    if (d->text) snprintf(d->text, a.n + b.n + 5, "%s .. %s", a.b, b.b);
    if (!d->table || !d->text || (d->has_start && !d->start) || (d->has_end && !d->end))
      goto nomem;
  }
  exec_index_codec_free(&ic);
  *out = r;
  return EXEC_OK;
nomem:
  exec_index_codec_free(&ic);
  exec_km_trace_free(r);
  return exec_fail(err, EXEC_NOMEM, -1, "out of memory");
}

void exec_km_trace_free(exec_km_trace *t) {
  if (!t) return;
  for (size_t i = 0; i < t->n_reads; i++) {
    free(t->reads[i].table);
    free(t->reads[i].family);
  }
  for (size_t i = 0; i < t->n_ranges; i++) {
    free(t->ranges[i].table);
    free(t->ranges[i].start);
    free(t->ranges[i].end);
    free(t->ranges[i].text);
  }
  free(t->reads);
  free(t->ranges);
  free(t);
}
