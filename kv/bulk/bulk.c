/*
** kv/bulk/bulk.c: bulk load (kv/bulk/bulk.h): adding cells, cutting segments, spilling runs, begin,
** commit and free. Per family, added cells go into the open buffer (kv/bulk/bulk_int.h): their
** bytes in one arena and a 16-byte entry per cell; consecutive cells of one row that come
** in cell order form a "group", so sorting moves one group per row, not one entry per cell.
** While the groups come in strictly ascending or strictly descending row order, the buffer
** is closed as a segment when it reaches segment_bytes, or when the order turns (after
** SEG_MIN_GROUPS groups), and handed to the worker (kv/bulk/bulk_write.c), which sorts and
** encodes it while more cells come in. A buffer whose groups came in no such order is
** closed too, MIXED_SAME times at segment_bytes, then at twice that, four times... (few
** enough to merge, the last one small enough to sort quickly at commit): the worker only
** sorts it, and the commit merges them.
**   spill: when the buffers pass run_bytes, each family's closed and open buffers are
**     sorted and merged into a run: a store file (kv_sf_writer, uncompressed, no bloom
**     filter: KV_SF_NO_BLOOM) whose cells carry their add ordinal as sequence number, so
**     kv_cell_cmp puts the later-added of equal keys first (a large spill: two runs, two
**     key ranges written at once, kv_bulk_spill_runs); a family whose input came in order is paged out instead
**     (keeps_segments).
**   commit: the open buffers are closed, every job is finished (the caller's thread helps),
**     then under the writer role each family's store file is written and all are named in
**     one MANIFEST record (kv/bulk/bulk_write.c).
** Not here: sorting, resolving and merging (kv/bulk/bulk_sort.c); the store file format
** (kv/sf/); flush and compaction (kv/db/db_flush.c, kv/db/compact.c), which treat a
** bulk-loaded file like any other.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kv/bulk/bulk_int.h"
#include "kv/util/coding.h"
#include "kv/db/db_impl.h"
#include "kv/util/mem.h"
#include "kv/util/status.h"

#define MIN_RUN_BYTES 4096u           /* smallest run_bytes accepted */
#define DEFAULT_SEG_BYTES (8u << 20)   /* kv_bulk_options.segment_bytes default... */
#define SEG_SHARE 32u                 /* ...or run_bytes / SEG_SHARE if smaller */
#define MIN_SEG_BYTES 4096u           /* ...but not below this */
#define SEG_MIN_GROUPS 64u            /* groups a buffer needs to be closed where its order
                                         turns (fewer: it is kept open, unordered) */
#define MIXED_SAME 8u                 /* unordered buffers closed at segment_bytes before the
                                         size starts doubling */
#define ENT_OVERHEAD 24u              /* bookkeeping bytes charged per buffered cell */
#define MAX_ARENA 0xF0000000u         /* arena offsets are 32-bit */
#define GROW_SLOW (1u << 20)          /* arrays from this size grow by a quarter, not double:
                                         the bound counts bytes used, and an unordered
                                         buffer's arrays grow as large as the bound allows */

typedef kv_bulk_ent ent;
typedef kv_bulk_grp grp;
typedef kv_bulk_buf bbuf;
typedef kv_bulk_fam bfam;

/* ---- buffers ---------------------------------------------------------------------------- */

bool kv_bulk_grow(void **p, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap) return true;
  size_t nc = *cap ? *cap * 2 : 64;
  if (*cap && *cap * elem >= GROW_SLOW) nc = *cap + *cap / 4; /* (realloc moves pages) */
  while (nc < need) nc *= 2;
  void *q = realloc(*p, nc * elem);
  if (!q) return false;
  *p = q;
  *cap = nc;
  return true;
}

void kv_bulk_buf_free(bbuf *u) {
  if (!u) return;
  free(u->arena);
  free(u->ents);
  free(u->grps);
  free(u->bounds);
  kv_sf_seg_free(u->seg);
  free(u);
}

/* A new empty buffer of family f: with arrays an encoded buffer gave back, or sized like
** `like` (NULL: empty). */
static bbuf *buf_new(kv_bulk *b, const bfam *f, const bbuf *like) {
  bbuf *u = calloc(1, sizeof *u);
  if (!u) return NULL;
  u->now = b->now;
  u->ord_base = f->cells;
  u->raw = true;
  kv_bulk_spare sp = {0};
  pthread_mutex_lock(&b->mu);
  if (like && b->n_spare) {
    sp = b->spare[--b->n_spare];
    /* counted while it waited: from now on the new buffer's charges count it */
    b->freed += (int64_t)kv_bulk_spare_bytes(&sp);
  }
  pthread_mutex_unlock(&b->mu);
  if (sp.arena) {
    u->arena = sp.arena;
    u->acap = sp.acap;
    u->ents = sp.ents;
    u->cap_ents = sp.cap_ents;
    u->grps = sp.grps;
    u->cap_grps = sp.cap_grps;
  } else if (like && like->acap) { /* the next segment is about as big: no regrowing */
    u->arena = malloc(like->acap);
    u->ents = malloc(like->cap_ents * sizeof *u->ents);
    u->grps = malloc(like->cap_grps * sizeof *u->grps);
    if (!u->arena || !u->ents || !u->grps) {
      kv_bulk_buf_free(u);
      return NULL;
    }
    u->acap = like->acap;
    u->cap_ents = like->cap_ents;
    u->cap_grps = like->cap_grps;
  }
  return u;
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
  bfam *tmp = calloc(1, sizeof *tmp);
  if (kf && tmp) {
    tmp->id = id;
    tmp->block_size = kf->block_size;
    tmp->compression = kf->compression;
    kv_db_family_dir(db, kf, tmp->dir, sizeof tmp->dir);
  }
  pthread_mutex_unlock(&db->mu);
  if (!kf) {
    free(tmp);
    return kv_error(KV_ERR_NOTFOUND, "bulk load: unknown family id %u", id);
  }
  size_t cap = b->cap_fams;
  if (!tmp || !(tmp->cur = buf_new(b, tmp, NULL)) ||
      !kv_bulk_grow((void **)&b->fams, &cap, b->n_fams + 1u, sizeof *b->fams)) {
    if (tmp) kv_bulk_buf_free(tmp->cur);
    free(tmp);
    return kv_error(KV_ERR_NOMEM, "bulk load: out of memory");
  }
  b->cap_fams = (uint32_t)cap;
  tmp->mixed_bytes = b->seg_bytes;
  b->fams[b->n_fams++] = tmp;
  *out = tmp;
  return KV_OK;
}

static int64_t ent_ts(const bbuf *u, const ent *e) {
  if (!(e->lt & KV_BULK_OWN_TS)) return u->now;
  int64_t ts;
  memcpy(&ts, u->arena + e->qual_off - 8, 8);
  return ts;
}

/* Byte comparison for the short qualifiers of the hot path (a prefix sorts first). */
static inline int short_cmp(const uint8_t *a, size_t al, const uint8_t *b, size_t bl) {
  size_t n = al < bl ? al : bl;
  if (n > 16) return kv_sf_key_cmp(a, al, b, bl);
  for (size_t i = 0; i < n; i++)
    if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
  return (al > bl) - (al < bl);
}

static int spill_all(kv_bulk *b);

void kv_bulk_note_held(kv_bulk *b, size_t held) {
  pthread_mutex_lock(&b->mu);
  if (held > b->stats.peak_bytes) b->stats.peak_bytes = held;
  pthread_mutex_unlock(&b->mu);
}

/* Page out the encoded segments of family f that the worker has finished (all of them
** when no job is pending) to the family's page file, made on first use; their blocks'
** bytes are taken off b->bytes. */
static int page_out_fam(kv_bulk *b, bfam *f) {
  kv_env *env = b->db->env;
  for (uint32_t i = 0; i < f->n_segs; i++) {
    kv_bulk_buf *u = f->segs[i];
    pthread_mutex_lock(&b->mu);
    bool ready = u->ready; /* the worker no longer touches u: it is ours */
    pthread_mutex_unlock(&b->mu);
    if (!ready || u->raw || !u->seg || kv_sf_seg_paged(u->seg)) continue;
    if (!f->pfile) {
      char path[KV_BULK_PATH_CAP];
      snprintf(path, sizeof path, "%s/%llu.run", f->dir,
               (unsigned long long)kv_db_new_file_number(b->db));
      int rc = env->mkdir(env, f->dir);
      if (rc) return rc;
      if (!(f->ppath = strdup(path))) return kv_error(KV_ERR_NOMEM, "bulk load: out of memory");
      rc = env->open(env, path, KV_OPEN_WRITE | KV_OPEN_TRUNCATE, &f->pfile);
      if (rc) {
        free(f->ppath);
        f->ppath = NULL;
        return rc;
      }
      f->pend = 0;
    }
    size_t before = kv_sf_seg_bytes(u->seg);
    uint64_t data = kv_sf_seg_data_bytes(u->seg);
    int rc = kv_sf_seg_page_out(u->seg, env, f->pfile, f->pend);
    if (rc == KV_OK) rc = env->size(f->pfile, &f->pend);
    if (rc) return rc;
    size_t after = kv_sf_seg_bytes(u->seg);
    size_t off = before > after ? before - after : 0; /* b->bytes counts `before` of it */
    b->bytes = b->bytes > off ? b->bytes - off : 0;
    b->stats.segs_paged++;
    b->stats.bytes_paged += data;
  }
  return KV_OK;
}

/* Take off b->bytes what the worker has given back since the last time. */
static void take_freed(kv_bulk *b) {
  pthread_mutex_lock(&b->mu);
  int64_t freed = b->freed;
  b->freed = 0;
  pthread_mutex_unlock(&b->mu);
  int64_t now = (int64_t)b->bytes - freed; /* negative only through a counting slip */
  b->bytes = now > 0 ? (size_t)now : 0;
}

/* Page out every family's finished segments; once a quarter of the bound has been paged
** out since the last time, give the freed pages back to the system (kv/util/mem.h: the
** segments' blocks were megabytes of the heap; each release costs the next buffers their
** page faults, so not at every page-out). */
static int page_out_all(kv_bulk *b) {
  uint64_t paged = b->stats.bytes_paged;
  for (uint32_t i = 0; i < b->n_fams; i++) {
    int rc = page_out_fam(b, b->fams[i]);
    if (rc) {
      b->err = rc;
      return rc;
    }
  }
  b->paged_unreleased += b->stats.bytes_paged - paged;
  if (b->paged_unreleased >= b->run_bytes / 4) {
    kv_mem_release();
    b->paged_unreleased = 0;
  }
  return KV_OK;
}

/* The load passed run_bytes: take off what the worker has given back since; if it is still
** past, page out the encoded segments the worker has finished; if that leaves less than a
** quarter of the bound free (so paging out again soon would write little each time), wait
** for the worker's jobs and page out the rest; if even that is not enough (raw buffers:
** unordered input), spill everything as runs. */
static int over_budget(kv_bulk *b) {
  kv_bulk_note_held(b, b->bytes);
  take_freed(b);
  if (b->bytes < b->run_bytes) return KV_OK;
  size_t target = b->run_bytes - b->run_bytes / 4;
  int rc = page_out_all(b);
  if (rc == KV_OK && b->bytes >= target) {
    rc = kv_bulk_drain(b);
    if (rc) b->err = rc;
    else take_freed(b);
    if (rc == KV_OK) rc = page_out_all(b);
  }
  if (rc) return rc;
  return b->bytes >= target ? spill_all(b) : KV_OK;
}

/* Close and remove family f's page file (its segments must be freed or never read again). */
static void drop_page_file(kv_bulk *b, bfam *f) {
  if (f->pfile) b->db->env->close(f->pfile);
  if (f->ppath) b->db->env->remove(b->db->env, f->ppath);
  free(f->ppath);
  f->pfile = NULL;
  f->ppath = NULL;
  f->pend = 0;
}

/* Close f's open buffer as a segment: hand it to the worker, open a new one; with `check`,
** then settle what the worker gave back and act if the load is past the bound. */
static int close_cur_as(kv_bulk *b, bfam *f, bool check) {
  bbuf *u = f->cur;
  if (u->n_ents == 0) return KV_OK;
  size_t cap = f->cap_segs;
  bbuf *nu = buf_new(b, f, b->done ? NULL : u); /* at commit: never filled, kept empty */
  if (!nu || !kv_bulk_grow((void **)&f->segs, &cap, f->n_segs + 1u, sizeof *f->segs)) {
    kv_bulk_buf_free(nu);
    return kv_error(KV_ERR_NOMEM, "bulk load: out of memory");
  }
  f->cap_segs = (uint32_t)cap;
  /* Encoded only if it may be used whole: not with runs (the family is merged at commit
  ** anyway), not an unordered buffer closed before the commit (the next will overlap it) */
  u->encode = f->n_runs == 0 && (u->dir != KV_BULK_DIR_MIXED || (b->done && f->n_segs == 0));
  f->segs[f->n_segs++] = u;
  f->cur = nu;
  b->stats.segments++;
  int rc = kv_bulk_enqueue(b, f, u);
  if (rc) b->err = rc;
  /* What the worker's finished jobs hold may pass what their buffers were charged (encoded
  ** output plus the arrays kept as spares): settle it once per segment, so the bound is
  ** checked against it without waiting for the adds to reach run_bytes. */
  if (rc == KV_OK && check && !b->done) {
    take_freed(b);
    if (b->bytes >= b->run_bytes) rc = over_budget(b);
  }
  return rc;
}

static int close_cur(kv_bulk *b, bfam *f) { return close_cur_as(b, f, true); }

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

/* Before a new group (a new row, or a row that left cell order) is added to f's open
** buffer u: note the order of its groups, and close u as a segment when it is ordered and
** full, or when its order turns after SEG_MIN_GROUPS groups. c: the new row compared with
** the previous group's row (0: the same row). */
static int new_group(kv_bulk *b, bfam *f, int c) {
  bbuf *u = f->cur;
  if (u->n_grps == 0) return KV_OK;
  int d = c < 0 ? KV_BULK_DIR_ASC : c > 0 ? KV_BULK_DIR_DESC : KV_BULK_DIR_MIXED;
  bool segs = b->seg_bytes != SIZE_MAX;
  if (u->dir == KV_BULK_DIR_MIXED) { /* sorted apart by the worker, merged at commit */
    if (segs && u->charged >= f->mixed_bytes) {
      if (++f->n_mixed >= MIXED_SAME) /* then fewer, larger ones: few sources to merge */
        f->mixed_bytes = f->mixed_bytes > SIZE_MAX / 2 ? SIZE_MAX : f->mixed_bytes * 2;
      return close_cur(b, f);
    }
    return KV_OK;
  }
  if (u->n_grps == 1) {
    u->dir = d;
    return KV_OK;
  }
  if (d != u->dir) {
    if (segs && d != KV_BULK_DIR_MIXED && u->n_grps >= SEG_MIN_GROUPS) return close_cur(b, f);
    u->dir = KV_BULK_DIR_MIXED;
    return KV_OK;
  }
  if (segs && u->charged >= b->seg_bytes) return close_cur(b, f);
  return KV_OK;
}

/* Append one checked cell to family f. row_known: the cell's row is the row of the
** family's previous cell (the caller knows it), so it is not compared; row always points
** at the caller's copy of the row key. */
static int append_cell(kv_bulk *b, bfam *f, int type, const void *row, size_t row_len,
                       bool row_known, const void *qual, size_t qual_len, int64_t ts,
                       const void *value, size_t value_len) {
  if (ts == KV_TS_NOW) ts = b->now;
  bbuf *u = f->cur;
  /* Same row as the buffer's previous cell: share its bytes. */
  const ent *prev = u->n_ents ? &u->ents[u->n_ents - 1] : NULL;
  int c = 1;
  if (prev && !row_known) c = kv_sf_key_cmp(u->arena + prev->row_off, prev->row_len, row, row_len);
  bool same_row = prev && (row_known || c == 0);
  /* Continue the current group when the cell follows the previous one in cell order
  ** (qualifier ascending, then timestamp descending; an equal (qualifier, ts) would sort
  ** before the earlier cell, as its ordinal is higher). */
  bool cont = false;
  if (same_row) {
    int q = short_cmp(u->arena + prev->qual_off, prev->qual_len, (const uint8_t *)qual,
                      qual_len);
    cont = q < 0 || (q == 0 && ent_ts(u, prev) > ts);
    c = 0;
  }
  if (!cont && prev) {
    int rc = new_group(b, f, c);
    if (rc) return rc;
    if (f->cur != u) { /* closed: this cell opens the new buffer */
      u = f->cur;
      prev = NULL;
      same_row = false;
    }
  }
  size_t own = ts == b->now ? 0 : 8;
  size_t add = (same_row ? 0 : row_len) + own + qual_len + value_len;
  if (u->alen + add > MAX_ARENA) { /* row points at the caller's bytes: safe to drop ours */
    int rc = spill_all(b);
    if (rc) return rc;
    u = f->cur;
    prev = NULL;
    same_row = cont = false;
    add = row_len + own + qual_len + value_len;
  }
  if (!kv_bulk_grow((void **)&u->arena, &u->acap, u->alen + add, 1) ||
      !kv_bulk_grow((void **)&u->ents, &u->cap_ents, u->n_ents + 1, sizeof *u->ents) ||
      !kv_bulk_grow((void **)&u->grps, &u->cap_grps, u->n_grps + 1, sizeof *u->grps))
    return kv_error(KV_ERR_NOMEM, "bulk load: out of memory");
  ent e;
  e.row_off = same_row ? u->ents[u->n_ents - 1].row_off : (uint32_t)u->alen;
  uint8_t *p = u->arena + u->alen;
  if (!same_row) {
    memcpy(p, row, row_len);
    p += row_len;
  }
  if (own) {
    memcpy(p, &ts, 8);
    p += 8;
  }
  e.qual_off = (uint32_t)(p - u->arena);
  if (qual_len) memcpy(p, qual, qual_len);
  p += qual_len;
  if (value_len) memcpy(p, value, value_len);
  u->alen += add;
  e.lt = (uint32_t)value_len | (own ? KV_BULK_OWN_TS : 0) | (uint32_t)type << 28;
  e.row_len = (uint16_t)row_len;
  e.qual_len = (uint16_t)qual_len;
  b->ord++;
  f->cells++;
  if (cont) {
    u->grps[u->n_grps - 1].n++;
  } else {
    u->grps[u->n_grps].first = (uint32_t)u->n_ents;
    u->grps[u->n_grps].n = 1;
    u->n_grps++;
  }
  u->ents[u->n_ents++] = e;
  size_t charge = add + ENT_OVERHEAD;
  u->charged += charge;
  b->bytes += charge;
  if (u->n_ents >= UINT32_MAX - 1) return spill_all(b);
  if (b->bytes >= b->run_bytes) return over_budget(b);
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

/* Copy n bytes: a qualifier or value of a few bytes with fixed-size moves (overlapping
** when n is not a power of two), not a call into the C library per cell. */
static inline void small_copy(uint8_t *d, const uint8_t *s, size_t n) {
  if (n >= 8 && n <= 16) {
    memcpy(d, s, 8);
    memcpy(d + n - 8, s + n - 8, 8);
  } else if (n >= 4 && n < 8) {
    memcpy(d, s, 4);
    memcpy(d + n - 4, s + n - 4, 4);
  } else if (n < 4) {
    for (size_t i = 0; i < n; i++) d[i] = s[i];
  } else {
    memcpy(d, s, n);
  }
}

/* kv_bulk_add_row's common case, all at once: a row not seen just before in f, its cells
** in strictly increasing qualifier order (one group). Returns 1 when it does not apply
** (the caller adds the cells one by one), else KV_OK or an error. The cells are checked. */
static int append_row(kv_bulk *b, bfam *f, const void *row, size_t row_len, int64_t ts,
                      const kv_bulk_cell *cells, size_t n) {
  size_t bytes = row_len;
  for (size_t i = 0; i < n; i++) {
    const kv_bulk_cell *c = &cells[i];
    if (i && short_cmp(cells[i - 1].qual, cells[i - 1].qual_len, c->qual, c->qual_len) >= 0)
      return 1;
    bytes += c->qual_len + (c->type == KV_PUT ? c->value_len : 0);
  }
  if (ts == KV_TS_NOW) ts = b->now;
  size_t own = ts == b->now ? 0 : 8;
  bytes += own * n;
  bbuf *u = f->cur;
  if (u->n_ents) {
    const ent *prev = &u->ents[u->n_ents - 1];
    int c = kv_sf_key_cmp(u->arena + prev->row_off, prev->row_len, row, row_len);
    if (c == 0) return 1; /* the row goes on: cell by cell */
    int rc = new_group(b, f, c);
    if (rc) return rc;
    u = f->cur;
  }
  if (u->alen + bytes > MAX_ARENA || u->n_ents + n >= UINT32_MAX - 1) return 1;
  if (!kv_bulk_grow((void **)&u->arena, &u->acap, u->alen + bytes, 1) ||
      !kv_bulk_grow((void **)&u->ents, &u->cap_ents, u->n_ents + n, sizeof *u->ents) ||
      !kv_bulk_grow((void **)&u->grps, &u->cap_grps, u->n_grps + 1, sizeof *u->grps))
    return kv_error(KV_ERR_NOMEM, "bulk load: out of memory");
  uint8_t *base = u->arena, *p = base + u->alen;
  uint32_t row_off = (uint32_t)u->alen;
  memcpy(p, row, row_len);
  p += row_len;
  ent *e = u->ents + u->n_ents;
  u->grps[u->n_grps].first = (uint32_t)u->n_ents;
  u->grps[u->n_grps].n = (uint32_t)n;
  u->n_grps++;
  for (size_t i = 0; i < n; i++, e++) {
    const kv_bulk_cell *c = &cells[i];
    size_t vl = c->type == KV_PUT ? c->value_len : 0;
    if (own) {
      memcpy(p, &ts, 8);
      p += 8;
    }
    e->row_off = row_off;
    e->qual_off = (uint32_t)(p - base);
    e->lt = (uint32_t)vl | (own ? KV_BULK_OWN_TS : 0) | (uint32_t)c->type << 28;
    e->row_len = (uint16_t)row_len;
    e->qual_len = (uint16_t)c->qual_len;
    small_copy(p, c->qual, c->qual_len);
    p += c->qual_len;
    small_copy(p, c->value, vl);
    p += vl;
  }
  u->alen += bytes;
  u->n_ents += n;
  b->ord += n;
  f->cells += n;
  size_t charge = bytes + n * ENT_OVERHEAD;
  u->charged += charge;
  b->bytes += charge;
  if (b->bytes >= b->run_bytes) return over_budget(b);
  return KV_OK;
}

int kv_bulk_add_row(kv_bulk *b, uint32_t family_id, const void *row, size_t row_len,
                    int64_t ts, const kv_bulk_cell *cells, size_t n) {
  int rc = usable(b);
  if (rc) return rc;
  if (n && !cells) return kv_error(KV_MISUSE, "bulk load: NULL cells");
  if (n == 0) return KV_OK;
  for (size_t i = 0; i < n; i++) { /* check_cell's rules; the row's once */
    const kv_bulk_cell *c = &cells[i];
    if ((i == 0 || c->type != KV_PUT || c->qual_len > KV_MAX_QUALIFIER ||
         c->value_len > KV_MAX_VALUE) &&
        (rc = check_cell(c->type, row_len, c->qual_len, ts, &(size_t){c->value_len})) != KV_OK)
      return rc;
  }
  bfam *f;
  rc = get_fam(b, family_id, &f);
  if (rc) return rc;
  rc = append_row(b, f, row, row_len, ts, cells, n);
  if (rc != 1) return rc;
  rc = KV_OK;
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

/* ---- spilling runs ---------------------------------------------------------------------- */

/* Free f's closed buffers and empty its open one (after a spill or a commit). */
static void clear_bufs(bfam *f) {
  for (uint32_t i = 0; i < f->n_segs; i++) kv_bulk_buf_free(f->segs[i]);
  f->n_segs = 0;
  bbuf *u = f->cur;
  kv_sf_seg_free(u->seg);
  u->seg = NULL;
  u->raw = true;
  u->alen = u->n_ents = u->n_grps = 0;
  u->dir = KV_BULK_DIR_NONE;
  u->sorted = u->distinct = u->ready = false;
  u->charged = 0;
  u->ord_base = f->cells;
}

/* Write family f's buffers (closed and open), sorted, as run files (kv_bulk_spill_runs:
** one, or two key ranges at once). REQUIRES: no job of the worker pending. */
static int spill_fam(kv_bulk *b, bfam *f) {
  if (f->cur->n_ents == 0 && f->n_segs == 0) return KV_OK;
  kv_db *db = b->db;
  int rc = kv_bulk_materialize(b, f); /* encoded buffers: a run each */
  if (rc == KV_OK) rc = kv_bulk_sort_buf(f->cur);
  for (uint32_t i = 0; i < f->n_segs && rc == KV_OK; i++) rc = kv_bulk_sort_buf(f->segs[i]);
  if (rc == KV_OK) rc = db->env->mkdir(db->env, f->dir);
  if (rc) return rc;
  size_t scap = f->cap_segs;
  if (!kv_bulk_grow((void **)&f->segs, &scap, f->n_segs + 1u, sizeof *f->segs))
    return kv_error(KV_ERR_NOMEM, "bulk load: out of memory");
  f->cap_segs = (uint32_t)scap;
  f->segs[f->n_segs++] = f->cur; /* merged with the closed ones, then taken back */
  rc = kv_bulk_spill_runs(b, f);
  f->n_segs--;
  if (rc == KV_OK) clear_bufs(f);
  return rc;
}

/* May a spill leave family f as encoded segments (kept, or paged out) instead of a run?
** Only when the worker has encoded every closed buffer of it (no run yet: ordered input)
** and its open buffer is in order too: then closing that buffer as one more segment frees
** its raw bytes, and the commit keeps the fast path (segments appended or merged block-wise)
** instead of merging every cell of the family from run files. REQUIRES: no job pending. */
static bool keeps_segments(const kv_bulk *b, const bfam *f) {
  if (b->seg_bytes == SIZE_MAX || f->n_runs || f->cur->dir == KV_BULK_DIR_MIXED) return false;
  for (uint32_t i = 0; i < f->n_segs; i++)
    if (f->segs[i]->raw) return false;
  return true;
}

/* The bytes the load holds, counted afresh after a spill (no job pending): spare arrays,
** raw buffers' charges, encoded segments (what of them is still in memory, and their first
** and last keys). */
static size_t held_bytes(kv_bulk *b) {
  size_t held = 0;
  for (uint32_t i = 0; i < b->n_fams; i++) {
    const bfam *f = b->fams[i];
    held += f->cur->charged;
    for (uint32_t k = 0; k < f->n_segs; k++) {
      const bbuf *u = f->segs[k];
      held += u->raw ? u->charged : kv_sf_seg_bytes(u->seg) + u->first_len + u->last_len;
    }
  }
  pthread_mutex_lock(&b->mu);
  b->freed = 0; /* counted above */
  for (int i = 0; i < b->n_spare; i++) held += kv_bulk_spare_bytes(&b->spare[i]);
  pthread_mutex_unlock(&b->mu);
  return held;
}

/* Spill: the families whose raw buffers hold unordered cells (or that have runs already)
** are written as runs; the ordered ones close their open buffer as a segment and are paged
** out (keeps_segments). If what is then held still passes three quarters of the bound,
** every family is spilled, the encoded segments as runs of their own. Every family's open
** buffer is empty afterwards. */
static int spill_all(kv_bulk *b) {
  kv_bulk_note_held(b, b->bytes);
  int rc = kv_bulk_drain(b);
  size_t target = b->run_bytes - b->run_bytes / 4;
  for (int all = 0; all < 2 && rc == KV_OK; all++) {
    bool kept = false;
    for (uint32_t i = 0; i < b->n_fams && rc == KV_OK; i++) {
      bfam *f = b->fams[i];
      if (!all && keeps_segments(b, f)) {
        kept = true;
        rc = close_cur_as(b, f, false);
      } else {
        rc = spill_fam(b, f);
      }
    }
    if (rc == KV_OK && kept) rc = kv_bulk_drain(b);
    if (rc == KV_OK && kept) rc = page_out_all(b);
    if (rc == KV_OK) b->bytes = held_bytes(b);
    if (!kept || b->bytes < target) break;
  }
  if (rc) b->err = rc;
  return rc;
}

/* ---- the caller's scratch file --------------------------------------------------------- */

/* Close and remove the scratch file. */
static void drop_scratch(kv_bulk *b) {
  if (b->sfile) b->db->env->close(b->sfile);
  if (b->spath) b->db->env->remove(b->db->env, b->spath);
  free(b->spath);
  b->sfile = NULL;
  b->spath = NULL;
  b->send = 0;
}

int kv_bulk_scratch_append(kv_bulk *b, uint32_t family_id, const void *p, size_t n,
                           uint64_t *off) {
  int rc = usable(b);
  if (rc) return rc;
  if ((!p && n) || !off) return kv_error(KV_MISUSE, "kv_bulk_scratch_append: NULL argument");
  kv_env *env = b->db->env;
  if (!b->sfile) {
    char dir[KV_BULK_PATH_CAP - 64], path[KV_BULK_PATH_CAP];
    kv_db *db = b->db;
    pthread_mutex_lock(&db->mu);
    kv_fam *kf = kv_db_family(db, family_id);
    if (kf) kv_db_family_dir(db, kf, dir, sizeof dir);
    pthread_mutex_unlock(&db->mu);
    if (!kf) return kv_error(KV_ERR_NOTFOUND, "bulk load: unknown family id %u", family_id);
    snprintf(path, sizeof path, "%s/%llu.run", dir,
             (unsigned long long)kv_db_new_file_number(db));
    if ((rc = env->mkdir(env, dir)) != KV_OK) return rc;
    if (!(b->spath = strdup(path))) return kv_error(KV_ERR_NOMEM, "bulk load: out of memory");
    rc = env->open(env, path, KV_OPEN_WRITE | KV_OPEN_TRUNCATE, &b->sfile);
    if (rc) {
      free(b->spath);
      b->spath = NULL;
      return rc;
    }
    b->send = 0;
  }
  *off = b->send;
  if (n == 0) return KV_OK;
  rc = env->append(b->sfile, p, n);
  if (rc) { /* a torn append: later offsets would not match; start over past it */
    uint64_t sz;
    if (env->size(b->sfile, &sz) == KV_OK) b->send = sz;
    return rc;
  }
  b->send += n;
  b->stats.scratch_bytes += n;
  return KV_OK;
}

int kv_bulk_scratch_read(kv_bulk *b, uint64_t off, void *p, size_t n) {
  int rc = usable(b);
  if (rc) return rc;
  if (!p && n) return kv_error(KV_MISUSE, "kv_bulk_scratch_read: NULL buffer");
  if (n == 0) return KV_OK;
  if (!b->sfile || off > b->send || n > b->send - off)
    return kv_error(KV_ERR_CORRUPT, "bulk load: scratch read of %zu bytes at %llu past its end",
                    n, (unsigned long long)off);
  size_t got = 0;
  rc = b->db->env->read(b->sfile, off, p, n, &got);
  if (rc) return rc;
  if (got != n)
    return kv_error(KV_ERR_CORRUPT, "bulk load: scratch file %s is short at %llu", b->spath,
                    (unsigned long long)off);
  return KV_OK;
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
  b->run_bytes = opts && opts->run_bytes ? opts->run_bytes : KV_BULK_DEFAULT_RUN_BYTES;
  if (b->run_bytes < MIN_RUN_BYTES) b->run_bytes = MIN_RUN_BYTES;
  b->seg_bytes = opts && opts->segment_bytes ? opts->segment_bytes : DEFAULT_SEG_BYTES;
  if (!(opts && opts->segment_bytes) && b->seg_bytes > b->run_bytes / SEG_SHARE)
    b->seg_bytes = b->run_bytes / SEG_SHARE < MIN_SEG_BYTES ? MIN_SEG_BYTES
                                                            : b->run_bytes / SEG_SHARE;
  b->split_cells = opts && opts->split_cells ? opts->split_cells : KV_BULK_SPLIT_CELLS;
  b->fault = opts ? opts->fault : NULL;
  b->fault_arg = opts ? opts->fault_arg : NULL;
  b->interrupt = opts ? opts->interrupt : NULL;
  /* As a commit's time (kv/db/db_write.c): never older than the last commit's, so the load's
  ** cells are not older than anything committed before it even if the clock stepped back */
  b->now = db->env->now_ms(db->env);
  pthread_mutex_lock(&db->mu);
  if (b->now < db->last_commit_ts) b->now = db->last_commit_ts;
  pthread_mutex_unlock(&db->mu);
  pthread_mutex_init(&b->mu, NULL);
  pthread_cond_init(&b->cv, NULL);
  *out = b;
  return KV_OK;
}

/* Does family fid hold no cell? REQUIRES: db->mu held. false for a dropped family. */
static bool fam_empty(kv_db *db, uint32_t fid) {
  kv_fam *kf = kv_db_family(db, fid);
  return kf && kf->n_files == 0 && kf->n_imm == 0 && kv_memstore_cells(kf->mem) == 0;
}

int kv_bulk_empty(kv_bulk *b, uint32_t family_id, bool *empty) {
  int rc = usable(b);
  if (rc) return rc;
  if (!empty) return kv_error(KV_MISUSE, "kv_bulk_empty: NULL empty");
  kv_db *db = b->db;
  pthread_mutex_lock(&db->mu);
  bool known = kv_db_family(db, family_id) != NULL;
  *empty = known && fam_empty(db, family_id);
  pthread_mutex_unlock(&db->mu);
  if (!known) return kv_error(KV_ERR_NOTFOUND, "bulk load: unknown family id %u", family_id);
  return KV_OK;
}

int kv_bulk_fresh(kv_bulk *b, uint32_t family_id, bool *fresh) {
  int rc = usable(b);
  if (rc) return rc;
  if (!fresh) return kv_error(KV_MISUSE, "kv_bulk_fresh: NULL fresh");
  kv_db *db = b->db;
  pthread_mutex_lock(&db->mu);
  bool known = kv_db_family(db, family_id) != NULL;
  bool empty = known && fam_empty(db, family_id);
  pthread_mutex_unlock(&db->mu);
  *fresh = false;
  if (!known) return kv_error(KV_ERR_NOTFOUND, "bulk load: unknown family id %u", family_id);
  if (!empty) return KV_OK;
  size_t cap = b->cap_fresh;
  if (!kv_bulk_grow((void **)&b->fresh, &cap, b->n_fresh + 1u, sizeof *b->fresh))
    return kv_error(KV_ERR_NOMEM, "bulk load: out of memory");
  b->cap_fresh = (uint32_t)cap;
  b->fresh[b->n_fresh++] = family_id;
  *fresh = true;
  return KV_OK;
}

int kv_bulk_commit(kv_bulk *b, uint64_t *seq_out) {
  if (!b) return kv_error(KV_MISUSE, "kv_bulk_commit: NULL load");
  if (b->done) return kv_error(KV_MISUSE, "kv_bulk_commit: the load was committed already");
  if (b->err) return kv_error(b->err, "kv_bulk_commit: the load failed earlier");
  b->done = true;
  int rc = KV_OK;
  for (uint32_t i = 0; i < b->n_fams && rc == KV_OK; i++) rc = close_cur(b, b->fams[i]);
  if (rc == KV_OK) rc = kv_bulk_drain(b);
  kv_bulk_stop(b);
  if (rc) {
    b->err = rc;
    return rc;
  }
  take_freed(b);
  kv_bulk_note_held(b, b->bytes);
  for (int i = 0; i < b->n_spare; i++) { /* no buffer will need them now */
    size_t sb = kv_bulk_spare_bytes(&b->spare[i]);
    b->bytes = b->bytes > sb ? b->bytes - sb : 0;
    free(b->spare[i].arena);
    free(b->spare[i].ents);
    free(b->spare[i].grps);
  }
  b->n_spare = 0;
  /* The commit's merges need room too (their output's index and row hashes, or all of it):
  ** past half the bound, what is encoded goes to the page files first. */
  if (b->bytes >= b->run_bytes / 2 && (rc = page_out_all(b)) != KV_OK) return rc;
  kv_db *db = b->db;
  kv_writer w;
  memset(&w, 0, sizeof w);
  pthread_mutex_lock(&db->mu);
  rc = kv_db_writable(db);
  if (rc) {
    pthread_mutex_unlock(&db->mu);
    b->err = rc;
    return rc;
  }
  kv_db_role_acquire(db, &w);
  uint64_t seq = atomic_load(&db->last_seq) + (b->ord ? 1 : 0);
  /* a commit after this one takes a time no older than the load's (kv_bulk_begin) */
  if (b->ord && db->last_commit_ts < b->now) db->last_commit_ts = b->now;
  for (uint32_t i = 0; i < b->n_fresh && rc == KV_OK; i++) /* no commit runs now */
    if (!fam_empty(db, b->fresh[i]))
      rc = kv_error(kv_db_family(db, b->fresh[i]) ? KV_ERR_EXISTS : KV_ERR_NOTFOUND,
                    "bulk load: family id %u got cells during the load, whose NULL columns "
                    "were loaded without tombstones: nothing was loaded", b->fresh[i]);
  pthread_mutex_unlock(&db->mu);
  if (b->ord && rc == KV_OK) rc = kv_bulk_write_and_install(b, seq);
  /* still the writer role: the load's number, or the last one when it kept no cell */
  if (rc == KV_OK) seq = atomic_load(&db->last_seq);
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
    clear_bufs(f);
    drop_page_file(b, f);
  }
  drop_scratch(b);
  if (seq_out) *seq_out = seq;
  return KV_OK;
}

int kv_bulk_wait(kv_bulk *b) {
  int rc = usable(b);
  if (rc == KV_OK) rc = kv_bulk_drain(b);
  if (rc && b) b->err = rc;
  return rc;
}

void kv_bulk_get_stats(const kv_bulk *b, kv_bulk_stats *out) {
  memset(out, 0, sizeof *out);
  if (b) *out = b->stats;
}

void kv_bulk_free(kv_bulk *b) {
  if (!b) return;
  kv_bulk_stop(b);
  for (uint32_t i = 0; i < b->n_fams; i++) {
    bfam *f = b->fams[i];
    for (uint32_t k = 0; k < f->n_runs; k++) {
      b->db->env->remove(b->db->env, f->runs[k]);
      free(f->runs[k]);
    }
    free(f->runs);
    for (uint32_t k = 0; k < f->n_segs; k++) kv_bulk_buf_free(f->segs[k]);
    free(f->segs);
    kv_bulk_buf_free(f->cur);
    drop_page_file(b, f);
    free(f);
  }
  drop_scratch(b);
  free(b->fams);
  free(b->fresh);
  free(b->q);
  for (int i = 0; i < b->n_spare; i++) {
    free(b->spare[i].arena);
    free(b->spare[i].ents);
    free(b->spare[i].grps);
  }
  pthread_cond_destroy(&b->cv);
  pthread_mutex_destroy(&b->mu);
  free(b);
  kv_mem_release(); /* the load's buffers and spares: up to its bound of the heap */
}
