/*
** kv/bulk.c: bulk load (kv/bulk.h). Three stages:
**   buffer: per family, the added cells' bytes in one arena and a 16-byte entry per cell
**     (offsets, lengths, type; the timestamp only when it is not the load's); consecutive
**     cells of one row that arrive in cell order form a "group", so a sort moves one group
**     per row, not one entry per cell; input whose groups come in ascending row order is
**     not sorted at all, other input by a natural merge sort of the groups.
**   spill: when the buffer passes run_bytes, each family's buffer is sorted and written as a
**     run: a store file (kv_sf_writer, uncompressed) whose cells carry their add ordinal as
**     sequence number, so kv_cell_cmp puts the later-added of equal keys first.
**   commit: under the writer role, per family (two families at a time, on two threads),
**     the runs and the buffer are merged; the resolver drops replaced and masked cells
**     (bulk.h) and the rest are written with the load's sequence number S into the final
**     store file, tombstones before puts at equal (row, qualifier, timestamp) as
**     kv_cell_cmp orders equal sequence numbers. Then one MANIFEST record (ADD_FILE per
**     family, counters with last_seq S), then the files join their families' lists and S
**     is published, under mu, in one step.
** Not here: the store file format (kv/sf_*.c), flush and compaction (kv/db_flush.c,
** kv/compact.c), which treat a bulk-loaded file like any other.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kv/bulk.h"
#include "kv/coding.h"
#include "kv/db_impl.h"
#include "kv/status.h"

#define PATH_CAP 4096                 /* bytes for any path built here */
#define DEFAULT_RUN_BYTES (512u << 20) /* kv_bulk_options.run_bytes default */
#define MIN_RUN_BYTES 4096u           /* smallest run_bytes accepted */
#define ENT_OVERHEAD 24u              /* bookkeeping bytes charged per buffered cell */
#define MAX_ARENA 0xF0000000u         /* arena offsets are 32-bit */

/* One buffered cell (16 bytes). In the family's arena a cell is [ts: 8 bytes, only when
** it is not the load's timestamp] qualifier value; its row key is shared with the other
** cells of its row. Its add ordinal is not stored: within one family it is the family's
** count of earlier spilled cells plus its index plus 1 (bfam.ord_base), and ordinals are
** only ever compared within one family. */
typedef struct ent {
  uint32_t row_off;   /* row key offset in the family's arena */
  uint32_t qual_off;  /* qualifier offset; the value follows the qualifier */
  uint32_t lt;        /* value length (bits 0..26) | ENT_OWN_TS | type << 28 */
  uint16_t row_len;   /* row key length (<= KV_MAX_ROW_KEY) */
  uint16_t qual_len;  /* qualifier length (<= KV_MAX_QUALIFIER) */
} ent;

#define ENT_OWN_TS (1u << 27) /* the timestamp is stored before the qualifier */
#define ENT_VLEN(e) ((e)->lt & (ENT_OWN_TS - 1))
#define ENT_TYPE(e) ((int)((e)->lt >> 28))

/* Consecutive entries of one row in strictly increasing cell order. */
typedef struct grp {
  uint32_t first;     /* index of its first entry */
  uint32_t n;         /* entries */
} grp;

/* The load's state for one family. */
typedef struct bfam {
  uint32_t id;            /* family id */
  uint32_t block_size;    /* the family's BLOCKSIZE */
  int compression;        /* the family's compression */
  char dir[PATH_CAP - 64];/* its store-file folder */
  uint8_t *arena;         /* buffered bytes */
  size_t alen, acap;      /* used / allocated bytes of arena */
  ent *ents;              /* buffered cells */
  size_t n_ents, cap_ents;/* used / allocated entries */
  grp *grps;              /* groups over ents */
  size_t n_grps, cap_grps;/* used / allocated groups */
  bool sorted;            /* groups are in strictly ascending row order as added */
  bool distinct;          /* no two groups have the same row (known while sorted is true,
                             and after a sort that compared no equal rows) */
  int64_t now;            /* the load's timestamp (cells without ENT_OWN_TS) */
  uint64_t ord_base;      /* cells of this family spilled before the buffer */
  char **runs;            /* paths of spilled runs (malloc'ed) */
  uint32_t n_runs, cap_runs; /* used / allocated */
} bfam;

struct kv_bulk {
  kv_db *db;              /* the store */
  size_t run_bytes;       /* spill threshold */
  int64_t now;            /* the timestamp KV_TS_NOW stands for */
  uint64_t ord;           /* cells added so far (the last ordinal given) */
  size_t bytes;           /* bytes charged by the buffers now */
  bfam **fams;            /* families touched, in first-use order */
  uint32_t n_fams, cap_fams; /* used / allocated */
  int err;                /* sticky error (spill failed), or KV_OK */
  bool done;              /* committed (or its commit failed) */
};

/* ---- buffer --------------------------------------------------------------------------- */

static bool grow(void **p, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap) return true;
  size_t nc = *cap ? *cap * 2 : 64;
  while (nc < need) nc *= 2;
  void *q = realloc(*p, nc * elem);
  if (!q) return false;
  *p = q;
  *cap = nc;
  return true;
}

static bfam *find_fam(kv_bulk *b, uint32_t id) {
  for (uint32_t i = 0; i < b->n_fams; i++)
    if (b->fams[i]->id == id) return b->fams[i];
  return NULL;
}

/* The family's load state, made on first use. */
static int get_fam(kv_bulk *b, uint32_t id, bfam **out) {
  bfam *f = b->n_fams && b->fams[b->n_fams - 1]->id == id ? b->fams[b->n_fams - 1]
                                                          : find_fam(b, id);
  if (f) {
    *out = f;
    return KV_OK;
  }
  kv_db *db = b->db;
  pthread_mutex_lock(&db->mu);
  kv_fam *kf = kv_db_family(db, id);
  bfam tmp;
  memset(&tmp, 0, sizeof tmp);
  if (kf) {
    tmp.id = id;
    tmp.block_size = kf->block_size;
    tmp.compression = kf->compression;
    kv_db_family_dir(db, kf, tmp.dir, sizeof tmp.dir);
  }
  pthread_mutex_unlock(&db->mu);
  if (!kf) return kv_error(KV_ERR_NOTFOUND, "bulk load: unknown family id %u", id);
  size_t cap = b->cap_fams;
  if (!grow((void **)&b->fams, &cap, b->n_fams + 1u, sizeof *b->fams))
    return kv_error(KV_ERR_NOMEM, "bulk load: out of memory");
  b->cap_fams = (uint32_t)cap;
  f = malloc(sizeof *f);
  if (!f) return kv_error(KV_ERR_NOMEM, "bulk load: out of memory");
  *f = tmp;
  f->sorted = f->distinct = true;
  f->now = b->now;
  b->fams[b->n_fams++] = f;
  *out = f;
  return KV_OK;
}

static int64_t ent_ts(const bfam *f, const ent *e) {
  if (!(e->lt & ENT_OWN_TS)) return f->now;
  int64_t ts;
  memcpy(&ts, f->arena + e->qual_off - 8, 8);
  return ts;
}

static kv_cell ent_cell(const bfam *f, const ent *e) {
  kv_cell c;
  c.row = f->arena + e->row_off;
  c.row_len = e->row_len;
  c.qual = f->arena + e->qual_off;
  c.qual_len = e->qual_len;
  c.ts = ent_ts(f, e);
  c.seq = f->ord_base + (uint64_t)(e - f->ents) + 1;
  c.type = (uint8_t)ENT_TYPE(e);
  c.value = f->arena + e->qual_off + e->qual_len;
  c.value_len = ENT_VLEN(e);
  return c;
}

/* Byte comparison for the short qualifiers of the hot path (a prefix sorts first). */
static inline int short_cmp(const uint8_t *a, size_t al, const uint8_t *b, size_t bl) {
  size_t n = al < bl ? al : bl;
  if (n > 16) return kv_bytes_cmp(a, al, b, bl);
  for (size_t i = 0; i < n; i++)
    if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
  return (al > bl) - (al < bl);
}

static int spill_all(kv_bulk *b);

/* Check one cell's arguments (kv_bulk_put's rules); *value_len is zeroed for tombstones. */
static int check_cell(int type, size_t row_len, size_t qual_len, int64_t ts,
                      size_t *value_len) {
  if (type < KV_PUT || type > KV_DELETE_FAMILY)
    return kv_error(KV_ERR_INVALID, "bulk load: bad cell type %d", type);
  if (row_len == 0) return kv_error(KV_ERR_INVALID, "bulk load: empty row key");
  if (row_len > KV_MAX_ROW_KEY)
    return kv_error(KV_ERR_TOOBIG, "bulk load: row key of %zu bytes over the maximum of %u",
                    row_len, KV_MAX_ROW_KEY);
  if (qual_len > KV_MAX_QUALIFIER)
    return kv_error(KV_ERR_TOOBIG, "bulk load: qualifier of %zu bytes over the maximum of %u",
                    qual_len, KV_MAX_QUALIFIER);
  if (type == KV_DELETE_FAMILY && qual_len)
    return kv_error(KV_ERR_INVALID, "bulk load: a DELETE_FAMILY takes no qualifier");
  if (type != KV_PUT) *value_len = 0;
  if (*value_len > KV_MAX_VALUE)
    return kv_error(KV_ERR_TOOBIG, "bulk load: value of %zu bytes over the maximum of %u",
                    *value_len, KV_MAX_VALUE);
  if (ts < 0 && ts != KV_TS_NOW)
    return kv_error(KV_ERR_INVALID, "bulk load: negative timestamp %lld", (long long)ts);
  return KV_OK;
}

static int usable(const kv_bulk *b) {
  if (!b) return kv_error(KV_MISUSE, "bulk load: NULL load");
  if (b->done || b->err)
    return kv_error(b->err ? b->err : KV_MISUSE, "bulk load: the load is %s",
                    b->done ? "already committed" : "failed: free it");
  return KV_OK;
}

/* Append one checked cell to family f. row_known: the cell's row is the row of the
** family's previous cell (the caller knows it), so it is not compared; row always points
** at the caller's copy of the row key. */
static int append_cell(kv_bulk *b, bfam *f, int type, const void *row, size_t row_len,
                       bool row_known, const void *qual, size_t qual_len, int64_t ts,
                       const void *value, size_t value_len) {
  if (ts == KV_TS_NOW) ts = b->now;
  /* Same row as the family's previous cell: share its bytes. */
  ent prev_e; /* a copy: the arrays may move below (its arena offsets stay valid) */
  const ent *prev = NULL;
  if (f->n_ents) {
    prev_e = f->ents[f->n_ents - 1];
    prev = &prev_e;
  }
  bool same_row = prev && (row_known || (prev->row_len == row_len &&
                                         memcmp(f->arena + prev->row_off, row, row_len) == 0));
  size_t own = ts == b->now ? 0 : 8;
  size_t need = f->alen + (same_row ? 0 : row_len) + own + qual_len + value_len;
  if (need > MAX_ARENA) { /* row points at the caller's bytes: safe to drop ours */
    int rc = spill_all(b);
    if (rc) return rc;
    prev = NULL;
    same_row = false;
    need = row_len + own + qual_len + value_len;
  }
  if (!grow((void **)&f->arena, &f->acap, need, 1) ||
      !grow((void **)&f->ents, &f->cap_ents, f->n_ents + 1, sizeof *f->ents) ||
      !grow((void **)&f->grps, &f->cap_grps, f->n_grps + 1, sizeof *f->grps))
    return kv_error(KV_ERR_NOMEM, "bulk load: out of memory");
  ent e;
  e.row_off = same_row ? prev->row_off : (uint32_t)f->alen;
  if (!same_row) {
    memcpy(f->arena + f->alen, row, row_len);
    f->alen += row_len;
  }
  if (own) {
    memcpy(f->arena + f->alen, &ts, 8);
    f->alen += 8;
  }
  e.qual_off = (uint32_t)f->alen;
  if (qual_len) memcpy(f->arena + f->alen, qual, qual_len);
  f->alen += qual_len;
  if (value_len) memcpy(f->arena + f->alen, value, value_len);
  f->alen += value_len;
  e.lt = (uint32_t)value_len | (own ? ENT_OWN_TS : 0) | (uint32_t)type << 28;
  e.row_len = (uint16_t)row_len;
  e.qual_len = (uint16_t)qual_len;
  b->ord++;
  /* Continue the current group when the cell follows the previous one in cell order
  ** (qualifier ascending, then timestamp descending; an equal (qualifier, ts) would sort
  ** before the earlier cell, as its ordinal is higher). */
  bool cont = false;
  if (same_row) {
    int c = short_cmp(f->arena + prev->qual_off, prev->qual_len, f->arena + e.qual_off,
                      e.qual_len);
    cont = c < 0 || (c == 0 && ent_ts(f, prev) > ts);
  }
  if (cont) {
    f->grps[f->n_grps - 1].n++;
  } else {
    if (f->n_grps && f->sorted) {
      const ent *g0 = &f->ents[f->grps[f->n_grps - 1].first];
      if (kv_bytes_cmp(f->arena + g0->row_off, g0->row_len, f->arena + e.row_off,
                       e.row_len) >= 0)
        f->sorted = f->distinct = false;
    }
    f->grps[f->n_grps].first = (uint32_t)f->n_ents;
    f->grps[f->n_grps].n = 1;
    f->n_grps++;
  }
  f->ents[f->n_ents++] = e;
  b->bytes += (same_row ? 0 : row_len) + own + qual_len + value_len + ENT_OVERHEAD;
  if (b->bytes >= b->run_bytes || f->n_ents >= UINT32_MAX - 1) return spill_all(b);
  return KV_OK;
}

static int add_cell(kv_bulk *b, uint32_t family_id, int type, const void *row, size_t row_len,
                    const void *qual, size_t qual_len, int64_t ts, const void *value,
                    size_t value_len) {
  int rc = usable(b);
  if (rc == KV_OK) rc = check_cell(type, row_len, qual_len, ts, &value_len);
  if (rc) return rc;
  bfam *f;
  rc = get_fam(b, family_id, &f);
  if (rc) return rc;
  return append_cell(b, f, type, row, row_len, false, qual, qual_len, ts, value, value_len);
}

int kv_bulk_add_row(kv_bulk *b, uint32_t family_id, const void *row, size_t row_len,
                    int64_t ts, const kv_bulk_cell *cells, size_t n) {
  int rc = usable(b);
  if (rc) return rc;
  if (n && !cells) return kv_error(KV_MISUSE, "bulk load: NULL cells");
  for (size_t i = 0; i < n; i++) {
    size_t vl = cells[i].value_len;
    rc = check_cell(cells[i].type, row_len, cells[i].qual_len, ts, &vl);
    if (rc) return rc;
  }
  if (n == 0) return KV_OK;
  bfam *f;
  rc = get_fam(b, family_id, &f);
  if (rc) return rc;
  for (size_t i = 0; i < n && rc == KV_OK; i++) {
    const kv_bulk_cell *c = &cells[i];
    rc = append_cell(b, f, c->type, row, row_len, i > 0, c->qual, c->qual_len, ts, c->value,
                     c->type == KV_PUT ? c->value_len : 0);
  }
  return rc;
}

int kv_bulk_put(kv_bulk *b, uint32_t family_id, const void *row, size_t row_len,
                const void *qual, size_t qual_len, int64_t ts, const void *value,
                size_t value_len) {
  return add_cell(b, family_id, KV_PUT, row, row_len, qual, qual_len, ts, value, value_len);
}

int kv_bulk_delete(kv_bulk *b, uint32_t family_id, int type, const void *row,
                   size_t row_len, const void *qual, size_t qual_len, int64_t ts) {
  if (type == KV_PUT) return kv_error(KV_ERR_INVALID, "bulk load: a delete needs a tombstone type");
  return add_cell(b, family_id, type, row, row_len, qual, qual_len, ts, NULL, 0);
}

int kv_bulk_add_batch(kv_bulk *b, const kv_batch *batch) {
  if (!b || !batch) return kv_error(KV_MISUSE, "bulk load: NULL argument");
  size_t len;
  const uint8_t *p = kv_batch_payload(batch, &len), *limit = p + len;
  uint64_t count = 0;
  if (len) p = kv_get_varint(p, limit, &count);
  for (uint64_t i = 0; i < count; i++) {
    kv_wal_op op;
    if (!p || kv_wal_decode_op(&p, limit, &op) != KV_OK)
      return kv_error(KV_ERR_CORRUPT, "bulk load: batch op %llu is damaged",
                      (unsigned long long)i);
    int rc = add_cell(b, op.family_id, op.type, op.row, op.row_len, op.qual, op.qual_len,
                      op.ts, op.value, op.value_len);
    if (rc) return rc;
  }
  return KV_OK;
}

uint64_t kv_bulk_count(const kv_bulk *b) { return b ? b->ord : 0; }
int64_t kv_bulk_timestamp(const kv_bulk *b) { return b ? b->now : 0; }

/* ---- sorted reading of the buffer ------------------------------------------------------ */

/* Sorting needs the family's arena: qsort has no context argument, so it is passed here.
** A kv_bulk belongs to one thread; this is per thread. */
static _Thread_local const bfam *sort_fam;

/* Order of two groups: row key, then add order (equal rows are merged cell by cell later).
** Meeting equal rows clears f->distinct: a comparison sort compares every two neighbours
** of its output, so a sort that met none leaves no two groups of one row. */
static int gcmp(bfam *f, const grp *a, const grp *b) {
  const ent *x = &f->ents[a->first], *y = &f->ents[b->first];
  int c = kv_bytes_cmp(f->arena + x->row_off, x->row_len, f->arena + y->row_off, y->row_len);
  if (c) return c;
  f->distinct = false;
  return a->first < b->first ? -1 : 1; /* entry index order is add order */
}

static int idx_cmp(const void *a, const void *b) {
  const bfam *f = sort_fam;
  kv_cell x = ent_cell(f, &f->ents[*(const uint32_t *)a]);
  kv_cell y = ent_cell(f, &f->ents[*(const uint32_t *)b]);
  return kv_cell_cmp(&x, &y);
}

/* Sort the family's groups (gcmp order) by a natural merge sort: the input is cut into
** maximal ascending runs and strictly descending runs, each descending run is reversed in
** place (strictly descending rows have distinct keys, so reversing keeps equal rows in add
** order), then neighbouring runs are merged pairwise until one is left. Input in key
** order costs one pass; input that is a few reverse-ordered runs (a time series loaded
** oldest first into a TS DESC key) costs the reversals and log2(runs) merge passes. */
static int sort_groups(bfam *f) {
  size_t n = f->n_grps;
  if (f->sorted || n < 2) {
    f->sorted = true;
    return KV_OK;
  }
  grp *g = f->grps;
  f->distinct = true;
  size_t *starts = malloc((n + 1) * sizeof *starts);
  grp *tmp = malloc(n * sizeof *tmp);
  if (!starts || !tmp) {
    free(starts);
    free(tmp);
    return kv_error(KV_ERR_NOMEM, "bulk load: out of memory sorting");
  }
  size_t nr = 0, i = 0;
  while (i < n) {
    size_t j = i + 1;
    if (j < n && gcmp(f, &g[i], &g[j]) > 0) {
      while (j < n && gcmp(f, &g[j - 1], &g[j]) > 0) j++;
      for (size_t lo = i, hi = j - 1; lo < hi; lo++, hi--) {
        grp t = g[lo];
        g[lo] = g[hi];
        g[hi] = t;
      }
    } else {
      while (j < n && gcmp(f, &g[j - 1], &g[j]) < 0) j++;
    }
    starts[nr++] = i;
    i = j;
  }
  starts[nr] = n;
  grp *src = g, *dst = tmp;
  while (nr > 1) {
    size_t out = 0;
    for (size_t r = 0; r < nr; r += 2) {
      size_t lo = starts[r], mid = starts[r + 1], hi = r + 2 <= nr ? starts[r + 2] : mid;
      size_t a = lo, b = mid, k = lo;
      while (a < mid && b < hi) dst[k++] = gcmp(f, &src[b], &src[a]) < 0 ? src[b++] : src[a++];
      while (a < mid) dst[k++] = src[a++];
      while (b < hi) dst[k++] = src[b++];
      starts[out++] = lo;
    }
    starts[out] = n;
    nr = out;
    grp *t = src;
    src = dst;
    dst = t;
  }
  if (src != g) memcpy(g, src, n * sizeof *g);
  free(starts);
  free(tmp);
  f->sorted = true;
  return KV_OK;
}

/* A source of cells in kv_cell_cmp order (seq = add ordinal): the buffer or a run. */
typedef struct src {
  kv_cell cur;            /* current cell (valid while valid is true) */
  bool valid;             /* positioned on a cell */
  int err;                /* a run's read error */
  const bfam *f;          /* buffer: the family */
  size_t gi;              /* buffer: next group */
  uint32_t *span;         /* buffer: entry indexes of the current span of equal rows */
  size_t span_n, span_i, span_cap; /* its length, position, allocated */
  size_t span_groups;     /* buffer: groups in the current span */
  kv_sf_reader *r;        /* run: its reader */
  kv_iter *it;            /* run: its iterator */
} src;

/* Buffer: load the next span (the groups of the next row key) into s->span. */
static int mem_fill(src *s) {
  const bfam *f = s->f;
  s->span_n = s->span_i = s->span_groups = 0;
  if (s->gi >= f->n_grps) return KV_OK;
  size_t g = s->gi, end = g + 1;
  const ent *e0 = &f->ents[f->grps[g].first];
  while (!f->distinct && end < f->n_grps) {
    const ent *e = &f->ents[f->grps[end].first];
    if (e->row_len != e0->row_len ||
        memcmp(f->arena + e->row_off, f->arena + e0->row_off, e0->row_len) != 0)
      break;
    end++;
  }
  size_t n = 0;
  for (size_t k = g; k < end; k++) n += f->grps[k].n;
  if (!grow((void **)&s->span, &s->span_cap, n, sizeof *s->span))
    return kv_error(KV_ERR_NOMEM, "bulk load: out of memory");
  for (size_t k = g; k < end; k++)
    for (uint32_t j = 0; j < f->grps[k].n; j++) s->span[s->span_n++] = f->grps[k].first + j;
  s->span_groups = end - g;
  if (end - g > 1) {
    sort_fam = f;
    qsort(s->span, s->span_n, sizeof *s->span, idx_cmp);
  }
  s->gi = end;
  return KV_OK;
}

static int src_next(src *s) {
  if (s->it) {
    kv_iter *it = s->it;
    if (s->valid) it->ops->next(it);
    s->valid = it->ops->valid(it);
    if (s->valid) s->cur = *it->ops->cell(it);
    else s->err = it->ops->status(it);
    return s->err;
  }
  if (s->span_i >= s->span_n) {
    int rc = mem_fill(s);
    if (rc) return s->err = rc;
  }
  s->valid = s->span_i < s->span_n;
  if (s->valid) s->cur = ent_cell(s->f, &s->f->ents[s->span[s->span_i++]]);
  return KV_OK;
}

static void src_free(src *s) {
  if (s->it) s->it->ops->destroy(s->it);
  if (s->r) kv_sf_close(s->r);
  free(s->span);
  memset(s, 0, sizeof *s);
}

/* ---- spilling runs ---------------------------------------------------------------------- */

static void clear_buffer(bfam *f) {
  f->ord_base += f->n_ents;
  f->alen = f->n_ents = f->n_grps = 0;
  f->sorted = f->distinct = true;
}

/* Write family f's sorted buffer as a run file. */
static int spill_fam(kv_bulk *b, bfam *f) {
  if (!f->n_ents) return KV_OK;
  kv_db *db = b->db;
  int rc = sort_groups(f);
  if (rc == KV_OK) rc = db->env->mkdir(db->env, f->dir);
  if (rc) return rc;
  size_t cap = f->cap_runs;
  if (!grow((void **)&f->runs, &cap, f->n_runs + 1u, sizeof *f->runs))
    return kv_error(KV_ERR_NOMEM, "bulk load: out of memory");
  f->cap_runs = (uint32_t)cap;
  char path[PATH_CAP];
  snprintf(path, sizeof path, "%s/%llu.run", f->dir,
           (unsigned long long)kv_db_new_file_number(db));
  char *dup = strdup(path);
  if (!dup) return kv_error(KV_ERR_NOMEM, "bulk load: out of memory");
  kv_sf_writer_options wo = {f->block_size, KV_COMPRESSION_NONE, 1};
  kv_sf_writer *w;
  rc = kv_sf_writer_open(db->env, path, &wo, &w);
  if (rc) {
    free(dup);
    return rc;
  }
  f->runs[f->n_runs++] = dup; /* removed by kv_bulk_free from here on */
  src s;
  memset(&s, 0, sizeof s);
  s.f = f;
  for (rc = src_next(&s); rc == KV_OK && s.valid; rc = src_next(&s))
    rc = kv_sf_writer_add(w, &s.cur);
  src_free(&s);
  if (rc) {
    kv_sf_writer_abort(w);
    return rc;
  }
  rc = kv_sf_writer_finish(w, NULL);
  if (rc == KV_OK) clear_buffer(f);
  return rc;
}

static int spill_all(kv_bulk *b) {
  int rc = KV_OK;
  for (uint32_t i = 0; i < b->n_fams && rc == KV_OK; i++) rc = spill_fam(b, b->fams[i]);
  if (rc) {
    b->err = rc;
    return rc;
  }
  b->bytes = 0;
  return KV_OK;
}

/* ---- merging and resolving -------------------------------------------------------------- */

/* A kept cell waiting for the rest of its (row, qualifier, timestamp), so the cells of one
** key go out in type-descending order. */
typedef struct pend {
  bool used;              /* holds a cell */
  uint8_t *qual;          /* qualifier copy */
  size_t qual_cap;        /* allocated */
  uint8_t *val;           /* value copy */
  size_t val_cap;         /* allocated */
  kv_cell c;              /* the cell (pointers into the copies and the resolver's row) */
} pend;

typedef struct fdel {
  int64_t ts;             /* DELETE_FAMILY timestamp */
  uint64_t ord;           /* its add ordinal */
} fdel;

/* The resolver's state over one family's merged stream. */
typedef struct resolver {
  kv_sf_writer *w;        /* output */
  uint64_t seq;           /* the load's sequence number */
  uint8_t *row;           /* current row key (copy) */
  size_t row_len, row_cap;/* its length / allocated */
  bool have_row;          /* a row is current */
  uint8_t *qual;          /* current qualifier (copy) */
  size_t qual_len, qual_cap; /* its length / allocated */
  bool have_qual;         /* a column is current */
  int64_t ts;             /* current timestamp within the column */
  bool have_ts;           /* a timestamp is current */
  uint64_t delcol_ord;    /* highest ordinal of a DELETE_COLUMN of the column so far */
  uint64_t delver_ord;    /* highest ordinal of a DELETE_VERSION at the current ts */
  fdel *fdels;            /* DELETE_FAMILY cells of the row */
  size_t n_fdels, cap_fdels; /* used / allocated */
  pend pend[4];           /* kept cells of the current (row, qualifier, ts), by type */
} resolver;

static bool copy_bytes(uint8_t **buf, size_t *cap, const uint8_t *p, size_t n) {
  if (!grow((void **)buf, cap, n ? n : 1, 1)) return false;
  if (n) memcpy(*buf, p, n);
  return true;
}

/* Write the pending cells, tombstones first (type descending). */
static int flush_pend(resolver *r) {
  int rc = KV_OK;
  for (int t = 3; t >= 0 && rc == KV_OK; t--) {
    pend *p = &r->pend[t];
    if (!p->used) continue;
    p->c.row = r->row;
    p->c.row_len = (uint32_t)r->row_len;
    rc = kv_sf_writer_add(r->w, &p->c);
    p->used = false;
  }
  return rc;
}

static int resolve(resolver *r, const kv_cell *c) {
  bool new_row = !r->have_row || !(c->row_len == r->row_len &&
                                   memcmp(c->row, r->row, r->row_len) == 0);
  bool new_qual = new_row || !r->have_qual ||
                  kv_bytes_cmp(c->qual, c->qual_len, r->qual, r->qual_len) != 0;
  bool new_ts = new_qual || !r->have_ts || c->ts != r->ts;
  if (new_ts) {
    int rc = flush_pend(r);
    if (rc) return rc;
    r->ts = c->ts;
    r->have_ts = true;
    r->delver_ord = 0;
  }
  if (new_qual) {
    if (!copy_bytes(&r->qual, &r->qual_cap, c->qual, c->qual_len))
      return kv_error(KV_ERR_NOMEM, "bulk load: out of memory");
    r->qual_len = c->qual_len;
    r->have_qual = true;
    r->delcol_ord = 0;
  }
  if (new_row) {
    if (!copy_bytes(&r->row, &r->row_cap, c->row, c->row_len))
      return kv_error(KV_ERR_NOMEM, "bulk load: out of memory");
    r->row_len = c->row_len;
    r->have_row = true;
    r->n_fdels = 0;
  }
  pend *p = &r->pend[c->type & 3];
  if (p->used) return KV_OK; /* a later-added cell of the same key and type replaced it */
  uint64_t ord = c->seq;
  switch (c->type) {
  case KV_PUT:
    if (ord < r->delcol_ord || ord < r->delver_ord) return KV_OK;
    for (size_t i = 0; i < r->n_fdels; i++)
      if (r->fdels[i].ts >= c->ts && r->fdels[i].ord > ord) return KV_OK;
    break;
  case KV_DELETE_COLUMN:
    if (ord > r->delcol_ord) r->delcol_ord = ord;
    break;
  case KV_DELETE_VERSION:
    if (ord > r->delver_ord) r->delver_ord = ord;
    break;
  default: /* KV_DELETE_FAMILY */
    if (!grow((void **)&r->fdels, &r->cap_fdels, r->n_fdels + 1, sizeof *r->fdels))
      return kv_error(KV_ERR_NOMEM, "bulk load: out of memory");
    r->fdels[r->n_fdels].ts = c->ts;
    r->fdels[r->n_fdels].ord = ord;
    r->n_fdels++;
    break;
  }
  if (!copy_bytes(&p->qual, &p->qual_cap, c->qual, c->qual_len) ||
      !copy_bytes(&p->val, &p->val_cap, c->value, c->value_len))
    return kv_error(KV_ERR_NOMEM, "bulk load: out of memory");
  p->c = *c;
  p->c.qual = p->qual;
  p->c.value = p->val;
  p->c.seq = r->seq;
  p->used = true;
  return KV_OK;
}

static void resolver_free(resolver *r) {
  free(r->row);
  free(r->qual);
  free(r->fdels);
  for (int t = 0; t < 4; t++) {
    free(r->pend[t].qual);
    free(r->pend[t].val);
  }
}

/* No runs: the buffer alone (s), row by row. A row made of one group has no two cells of
** one (qualifier, timestamp), and none of its cells masks another: a group's later cells
** sort after its earlier ones, and a tombstone masks only cells added before it that sort
** after it in the same column (equal or older timestamp), which a group cannot hold. So
** such a row is written as it is; a row of several groups goes through the resolver. */
static int write_buffer(src *s, resolver *r) {
  const bfam *f = s->f;
  for (;;) {
    int rc = mem_fill(s);
    if (rc || s->span_n == 0) return rc;
    if (s->span_groups == 1) {
      for (size_t i = 0; i < s->span_n && rc == KV_OK; i++) {
        kv_cell c = ent_cell(f, &f->ents[s->span[i]]);
        c.seq = r->seq;
        rc = kv_sf_writer_add(r->w, &c);
      }
    } else {
      for (size_t i = 0; i < s->span_n && rc == KV_OK; i++) {
        kv_cell c = ent_cell(f, &f->ents[s->span[i]]);
        rc = resolve(r, &c);
      }
      if (rc == KV_OK) rc = flush_pend(r);
    }
    if (rc) return rc;
  }
}

/* Merge family f's runs and buffer into the open writer w, resolved, with sequence seq. */
static int merge_fam(kv_bulk *b, bfam *f, kv_sf_writer *w, uint64_t seq) {
  kv_db *db = b->db;
  uint32_t n = f->n_runs + 1;
  src *s = calloc(n, sizeof *s);
  if (!s) return kv_error(KV_ERR_NOMEM, "bulk load: out of memory");
  int rc = sort_groups(f);
  for (uint32_t i = 0; i < f->n_runs && rc == KV_OK; i++) {
    rc = kv_sf_open(db->env, f->runs[i], &s[i].r);
    if (rc == KV_OK) {
      s[i].it = kv_sf_iter_new(s[i].r, NULL);
      if (!s[i].it) rc = kv_error(KV_ERR_NOMEM, "bulk load: out of memory");
    }
    if (rc == KV_OK) {
      s[i].it->ops->seek_first(s[i].it);
      s[i].valid = s[i].it->ops->valid(s[i].it);
      if (s[i].valid) s[i].cur = *s[i].it->ops->cell(s[i].it);
      else rc = s[i].it->ops->status(s[i].it);
    }
  }
  s[n - 1].f = f;
  resolver r;
  memset(&r, 0, sizeof r);
  r.w = w;
  r.seq = seq;
  if (rc == KV_OK && n == 1) {
    rc = write_buffer(&s[0], &r);
    goto done;
  }
  if (rc == KV_OK) rc = src_next(&s[n - 1]);
  while (rc == KV_OK) {
    src *best = NULL;
    for (uint32_t i = 0; i < n; i++)
      if (s[i].valid && (!best || kv_cell_cmp(&s[i].cur, &best->cur) < 0)) best = &s[i];
    if (!best) break;
    rc = resolve(&r, &best->cur);
    if (rc == KV_OK) rc = src_next(best);
  }
  if (rc == KV_OK) rc = flush_pend(&r);
done:
  resolver_free(&r);
  for (uint32_t i = 0; i < n; i++) src_free(&s[i]);
  free(s);
  return rc;
}

/* ---- begin, commit, free ---------------------------------------------------------------- */

int kv_bulk_begin(kv_db *db, const kv_bulk_options *opts, kv_bulk **out) {
  if (!out) return kv_error(KV_MISUSE, "kv_bulk_begin: NULL out");
  *out = NULL;
  if (!db) return kv_error(KV_MISUSE, "kv_bulk_begin: NULL store");
  pthread_mutex_lock(&db->mu);
  int rc = kv_db_writable(db);
  pthread_mutex_unlock(&db->mu);
  if (rc) return rc;
  kv_bulk *b = calloc(1, sizeof *b);
  if (!b) return kv_error(KV_ERR_NOMEM, "kv_bulk_begin: out of memory");
  b->db = db;
  b->run_bytes = opts && opts->run_bytes ? opts->run_bytes : DEFAULT_RUN_BYTES;
  if (b->run_bytes < MIN_RUN_BYTES) b->run_bytes = MIN_RUN_BYTES;
  b->now = db->env->now_ms(db->env);
  *out = b;
  return KV_OK;
}

/* One family's output file, written and synced but not yet named. */
typedef struct outf {
  kv_sfh *h;              /* handle with one reference, or NULL (nothing kept) */
  char path[PATH_CAP];    /* its path */
} outf;

static int write_fam(kv_bulk *b, bfam *f, uint64_t seq, outf *o) {
  kv_db *db = b->db;
  int rc = db->env->mkdir(db->env, f->dir);
  if (rc) return rc;
  uint64_t number = kv_db_new_file_number(db);
  snprintf(o->path, sizeof o->path, "%s/%llu.sf", f->dir, (unsigned long long)number);
  kv_sf_writer_options wo = {f->block_size, f->compression, 0};
  kv_sf_writer *w;
  rc = kv_sf_writer_open(db->env, o->path, &wo, &w);
  if (rc) {
    o->path[0] = 0;
    return rc;
  }
  rc = merge_fam(b, f, w, seq);
  if (rc) {
    kv_sf_writer_abort(w);
    return rc;
  }
  kv_sf_props props;
  rc = kv_sf_writer_finish(w, &props);
  if (rc == KV_OK) rc = db->env->sync_dir(db->env, f->dir);
  if (rc) return rc;
  if (props.cells == 0) { /* everything was masked: an empty file, not kept */
    db->env->remove(db->env, o->path);
    o->path[0] = 0;
    return KV_OK;
  }
  kv_file_meta meta = {number, props.file_size, seq, seq, props.cells, props.rows};
  pthread_mutex_lock(&db->mu);
  kv_fam *kf = kv_db_family(db, f->id);
  pthread_mutex_unlock(&db->mu);
  if (!kf) return kv_error(KV_ERR_NOTFOUND, "bulk load: family id %u was dropped", f->id);
  return kv_sfh_open(db, kf, &meta, &o->h);
}

/* Name the files in the MANIFEST and publish them with sequence number seq.
** REQUIRES: the writer role, mu NOT held. */
static int install(kv_bulk *b, outf *o, uint64_t seq) {
  kv_db *db = b->db;
  kv_edit *e = calloc(b->n_fams + 1u, sizeof *e);
  if (!e) return kv_error(KV_ERR_NOMEM, "bulk load: out of memory");
  int n = 0, rc = KV_OK;
  pthread_mutex_lock(&db->mu);
  for (uint32_t i = 0; i < b->n_fams; i++) {
    if (!o[i].h) continue;
    kv_fam *kf = kv_db_family(db, b->fams[i]->id);
    if (!kf) {
      rc = kv_error(KV_ERR_NOTFOUND, "bulk load: family id %u was dropped", b->fams[i]->id);
      break;
    }
    e[n].kind = KV_EDIT_ADD_FILE;
    e[n].family_id = kf->id;
    e[n].table_id = kf->table_id;
    e[n].file = o[i].h->meta;
    n++;
  }
  if (rc == KV_OK && n) {
    kv_db_bg_pause(db); /* the MANIFEST has one writer at a time */
    e[n] = kv_db_counters_edit(db, NULL);
    e[n].last_seq = seq;
    rc = kv_manifest_apply(db->man, &db->ver, e, n + 1);
    kv_db_bg_resume(db);
    if (rc) {
      char msg[256];
      snprintf(msg, sizeof msg, "%s", kv_errmsg());
      kv_db_set_bg_error(db, rc, msg);
      for (uint32_t i = 0; i < b->n_fams; i++)
        if (o[i].h) o[i].path[0] = 0; /* may be named: kv_open decides */
    }
  }
  if (rc == KV_OK) {
    for (uint32_t i = 0; i < b->n_fams; i++) o[i].path[0] = 0; /* named: never removed */
    for (uint32_t i = 0; i < b->n_fams && rc == KV_OK; i++) {
      if (!o[i].h) continue;
      rc = kv_fam_add_file(kv_db_family(db, b->fams[i]->id), o[i].h);
      if (rc == KV_OK) o[i].h = NULL;
    }
    if (rc) kv_db_set_bg_error(db, rc, "bulk load: out of memory publishing the files");
    atomic_store_explicit(&db->last_seq, seq, memory_order_release);
    pthread_cond_signal(&db->bg_cv); /* a family may have reached compaction_trigger */
  }
  pthread_mutex_unlock(&db->mu);
  free(e);
  return rc;
}

/* The families' output files are written by WRITERS threads (the caller's and helpers),
** each taking the next family, largest first, until none is left or one failed. */
#define WRITERS 2

typedef struct wjob {
  kv_bulk *b;             /* the load */
  outf *o;                /* per family: its output */
  uint64_t seq;           /* the load's sequence number */
  uint32_t *order;        /* family indexes, largest first */
  atomic_uint next;       /* next position in order */
  pthread_mutex_t mu;     /* guards rc and msg */
  int rc;                 /* first error, or KV_OK */
  char msg[512];          /* its message (kv_error's text is per thread) */
} wjob;

static void *writer_main(void *arg) {
  wjob *j = arg;
  for (;;) {
    unsigned k = atomic_fetch_add(&j->next, 1);
    if (k >= j->b->n_fams) break;
    pthread_mutex_lock(&j->mu);
    bool failed = j->rc != KV_OK;
    pthread_mutex_unlock(&j->mu);
    if (failed) break;
    uint32_t i = j->order[k];
    int rc = write_fam(j->b, j->b->fams[i], j->seq, &j->o[i]);
    if (rc) {
      pthread_mutex_lock(&j->mu);
      if (j->rc == KV_OK) {
        j->rc = rc;
        snprintf(j->msg, sizeof j->msg, "%s", kv_errmsg());
      }
      pthread_mutex_unlock(&j->mu);
      break;
    }
  }
  return NULL;
}

/* Write every family's output file (write_fam), on up to WRITERS threads. */
static int write_all(kv_bulk *b, outf *o, uint64_t seq) {
  wjob j;
  memset(&j, 0, sizeof j);
  j.b = b;
  j.o = o;
  j.seq = seq;
  j.order = malloc(b->n_fams * sizeof *j.order);
  if (!j.order) return kv_error(KV_ERR_NOMEM, "bulk load: out of memory");
  for (uint32_t i = 0; i < b->n_fams; i++) { /* insertion sort, most buffered cells first */
    uint32_t k = i;
    for (; k > 0 && b->fams[j.order[k - 1]]->n_ents < b->fams[i]->n_ents; k--)
      j.order[k] = j.order[k - 1];
    j.order[k] = i;
  }
  atomic_init(&j.next, 0);
  pthread_mutex_init(&j.mu, NULL);
  pthread_t th[WRITERS - 1];
  int started = 0;
  for (int t = 0; t < WRITERS - 1 && (uint32_t)t + 1 < b->n_fams; t++)
    if (pthread_create(&th[t], NULL, writer_main, &j) == 0) started++;
  writer_main(&j);
  for (int t = 0; t < started; t++) pthread_join(th[t], NULL);
  pthread_mutex_destroy(&j.mu);
  free(j.order);
  if (j.rc) return kv_error(j.rc, "%s", j.msg);
  return KV_OK;
}

int kv_bulk_commit(kv_bulk *b, uint64_t *seq_out) {
  if (!b) return kv_error(KV_MISUSE, "kv_bulk_commit: NULL load");
  if (b->done) return kv_error(KV_MISUSE, "kv_bulk_commit: the load was committed already");
  if (b->err) return kv_error(b->err, "kv_bulk_commit: the load failed earlier");
  b->done = true;
  kv_db *db = b->db;
  kv_writer w;
  memset(&w, 0, sizeof w);
  pthread_mutex_lock(&db->mu);
  int rc = kv_db_writable(db);
  if (rc) {
    pthread_mutex_unlock(&db->mu);
    b->err = rc;
    return rc;
  }
  kv_db_role_acquire(db, &w);
  uint64_t seq = atomic_load(&db->last_seq) + (b->ord ? 1 : 0);
  pthread_mutex_unlock(&db->mu);
  outf *o = calloc(b->n_fams ? b->n_fams : 1, sizeof *o);
  if (!o) rc = kv_error(KV_ERR_NOMEM, "bulk load: out of memory");
  if (rc == KV_OK && b->ord) rc = write_all(b, o, seq);
  if (rc == KV_OK && b->ord) rc = install(b, o, seq);
  for (uint32_t i = 0; rc && o && i < b->n_fams; i++) {
    if (o[i].h) kv_sfh_unref(o[i].h);
    if (o[i].path[0]) db->env->remove(db->env, o[i].path);
  }
  free(o);
  pthread_mutex_lock(&db->mu);
  kv_db_role_release(db, &w);
  pthread_mutex_unlock(&db->mu);
  if (rc) {
    b->err = rc;
    return rc;
  }
  for (uint32_t i = 0; i < b->n_fams; i++) {
    bfam *f = b->fams[i];
    for (uint32_t k = 0; k < f->n_runs; k++) {
      db->env->remove(db->env, f->runs[k]);
      free(f->runs[k]);
    }
    f->n_runs = 0;
    clear_buffer(f);
  }
  if (seq_out) *seq_out = seq;
  return KV_OK;
}

void kv_bulk_free(kv_bulk *b) {
  if (!b) return;
  for (uint32_t i = 0; i < b->n_fams; i++) {
    bfam *f = b->fams[i];
    for (uint32_t k = 0; k < f->n_runs; k++) {
      b->db->env->remove(b->db->env, f->runs[k]);
      free(f->runs[k]);
    }
    free(f->runs);
    free(f->arena);
    free(f->ents);
    free(f->grps);
    free(f);
  }
  free(b->fams);
  free(b);
}
