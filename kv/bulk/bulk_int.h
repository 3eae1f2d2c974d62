/*
** kv/bulk/bulk_int.h: the bulk load's internals, shared by its four files (kv/bulk/bulk.c: adding
** cells, segments, spills, begin/commit/free; kv/bulk/bulk_sort.c: sorting buffers, reading
** them and run files in cell order, resolving replaced and masked cells, merging with runs;
** kv/bulk/bulk_merge.c: the block-wise merge of overlapping segments;
** kv/bulk/bulk_write.c: the worker thread that sorts and encodes closed segments while the
** caller adds more, and writing each family's store file at commit). Not part of kv/'s
** contract: only these files include it. kv/bulk/bulk.h says what a bulk load does.
*/
#ifndef ROWAN_KV_BULK_INT_H
#define ROWAN_KV_BULK_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "kv/bulk/bulk.h"
#include "kv/util/cell.h"
#include "kv/sf/sf.h"
#include "kv/sf/sf_seg.h"

#define KV_BULK_PATH_CAP 4096 /* bytes for any path built by the load */
#define KV_BULK_SPLIT_CELLS 65536u /* kv_bulk_options.split_cells default */

/* One buffered cell (16 bytes). In its buffer's arena a cell is [ts: 8 bytes, only when it
** is not the load's timestamp] qualifier value; its row key is shared with the other cells
** of its row. Its add ordinal is not stored: it is its buffer's ord_base plus its index
** plus 1, and ordinals are only ever compared within one family. */
typedef struct kv_bulk_ent {
  uint32_t row_off;   /* row key offset in the arena */
  uint32_t qual_off;  /* qualifier offset; the value follows the qualifier */
  uint32_t lt;        /* value length (bits 0..26) | KV_BULK_OWN_TS | type << 28 */
  uint16_t row_len;   /* row key length (<= KV_MAX_ROW_KEY) */
  uint16_t qual_len;  /* qualifier length (<= KV_MAX_QUALIFIER) */
} kv_bulk_ent;

#define KV_BULK_OWN_TS (1u << 27) /* the timestamp is stored before the qualifier */
#define KV_BULK_VLEN(e) ((e)->lt & (KV_BULK_OWN_TS - 1))
#define KV_BULK_TYPE(e) ((int)((e)->lt >> 28))

/* Consecutive entries of one row in strictly increasing cell order. */
typedef struct kv_bulk_grp {
  uint32_t first;     /* index of its first entry */
  uint32_t n;         /* entries */
} kv_bulk_grp;

/* Order of a buffer's groups as they were added. */
enum { KV_BULK_DIR_NONE = 0, KV_BULK_DIR_ASC = 1, KV_BULK_DIR_DESC = -1, KV_BULK_DIR_MIXED = 2 };

/* Cells of one family: the family's open buffer, or a closed one (a segment). A closed
** buffer is sorted (groups in row order) by the worker or at commit, and, when the load
** may use it whole, encoded into store-file blocks (seg). */
typedef struct kv_bulk_buf {
  uint8_t *arena;         /* buffered bytes */
  size_t alen, acap;      /* used / allocated bytes of arena */
  kv_bulk_ent *ents;      /* buffered cells */
  size_t n_ents, cap_ents;/* used / allocated entries */
  kv_bulk_grp *grps;      /* groups over ents */
  size_t n_grps, cap_grps;/* used / allocated groups */
  int dir;                /* KV_BULK_DIR_*: order of the groups as added */
  bool sorted;            /* groups are in ascending row order (after kv_bulk_sort_buf) */
  bool distinct;          /* no two groups have the same row (valid when sorted) */
  int64_t now;            /* the load's timestamp (cells without KV_BULK_OWN_TS) */
  uint64_t ord_base;      /* cells of the family added before this buffer */
  size_t charged;         /* bytes this buffer added to kv_bulk.bytes */
  bool encode;            /* the worker is to encode it (the family had no run then) */
  bool ready;             /* the worker (or commit) has sorted it, and encoded it if asked */
  int rc;                 /* KV_OK, or the error sorting / encoding it */
  kv_sf_seg *seg;         /* its cells resolved and encoded (NULL if not, or none left) */
  bool raw;               /* arena, ents and grps hold its cells (false once encoded: the
                             worker gives the arrays back for the next buffer) */
  uint8_t *bounds;        /* when !raw: its first row key, then its last */
  size_t first_len, last_len; /* their lengths */
} kv_bulk_buf;

/* Arrays of an encoded buffer, kept for the next buffer (no page faults, no regrowing). */
typedef struct kv_bulk_spare {
  uint8_t *arena;         /* arena bytes */
  size_t acap;            /* allocated */
  kv_bulk_ent *ents;      /* entries */
  size_t cap_ents;        /* allocated */
  kv_bulk_grp *grps;      /* groups */
  size_t cap_grps;        /* allocated */
} kv_bulk_spare;

#define KV_BULK_SPARES 3 /* spare array sets kept at most */

/* The load's state for one family. */
typedef struct kv_bulk_fam {
  uint32_t id;            /* family id */
  uint32_t block_size;    /* the family's BLOCKSIZE */
  int compression;        /* the family's compression */
  char dir[KV_BULK_PATH_CAP - 64]; /* its store-file folder */
  kv_bulk_buf *cur;       /* the open buffer */
  kv_bulk_buf **segs;     /* closed buffers, in add order */
  uint32_t n_segs, cap_segs; /* used / allocated */
  char **runs;            /* paths of spilled runs (malloc'ed) */
  uint32_t n_runs, cap_runs; /* used / allocated */
  uint64_t cells;         /* cells of the family added so far */
  size_t mixed_bytes;     /* size at which an unordered buffer is closed next */
  uint32_t n_mixed;       /* unordered buffers closed so far (mixed_bytes doubles after
                             MIXED_SAME of them) */
  kv_file *pfile;         /* the page file its encoded segments were paged out to, or NULL */
  char *ppath;            /* its path (malloc'ed; <number>.run: kv_open deletes it) */
  uint64_t pend;          /* its size */
} kv_bulk_fam;

/* A closed buffer waiting for the worker. */
typedef struct kv_bulk_job {
  kv_bulk_fam *f;         /* its family */
  kv_bulk_buf *u;         /* the buffer */
} kv_bulk_job;

struct kv_bulk {
  kv_db *db;              /* the store */
  size_t run_bytes;       /* spill threshold */
  size_t seg_bytes;       /* segment size (SIZE_MAX: no segments) */
  uint64_t split_cells;   /* cells from which a family's merge is split in two */
  uint32_t *fresh;        /* families kv_bulk_fresh found holding no cell (must stay so) */
  uint32_t n_fresh, cap_fresh; /* used / allocated */
  int (*fault)(void *, uint32_t, uint64_t); /* test hook of kv_bulk_options, or NULL */
  void *fault_arg;        /* its argument */
  const atomic_int *interrupt; /* kv_bulk_options.interrupt, or NULL */
  int64_t now;            /* the timestamp KV_TS_NOW stands for */
  uint64_t ord;           /* cells added so far (the last ordinal given) */
  size_t bytes;           /* bytes charged by the buffers now */
  kv_bulk_fam **fams;     /* families touched, in first-use order */
  uint32_t n_fams, cap_fams; /* used / allocated */
  int err;                /* sticky error (a spill or the worker failed), or KV_OK */
  bool done;              /* committed (or its commit failed) */
  /* the worker; every field below is guarded by mu */
  pthread_mutex_t mu;     /* guards the queue and the worker's state */
  pthread_cond_t cv;      /* signalled: a job queued, a job finished, stop */
  pthread_t th;           /* the worker thread (when started) */
  bool started;           /* th runs */
  bool stop;              /* the worker is to exit */
  kv_bulk_job *q;         /* queued jobs (a ring) */
  size_t q_head, q_len, q_cap; /* first job, jobs queued, ring size */
  int busy;               /* jobs taken and not finished */
  uint64_t jobs;          /* jobs taken so far (the fault hook's counter) */
  int werr;               /* first error of a job, or KV_OK */
  char wmsg[512];         /* its message (kv_error's text is per thread) */
  kv_bulk_stats stats;    /* counters (fams_* and segs_reframed under mu: two writers) */
  int64_t freed;          /* bytes charged to `bytes` whose buffers the worker has encoded
                             and given back, less their segments' size and the arrays kept
                             as spares (negative when those pass the charges; taken off
                             `bytes` by the adding thread when it checks run_bytes) */
  kv_bulk_spare spare[KV_BULK_SPARES]; /* arrays given back by encoded buffers */
  int n_spare;            /* how many */
  kv_file *sfile;         /* the caller's scratch file (kv_bulk_scratch_append), or NULL */
  char *spath;            /* its path (malloc'ed; <number>.run: kv_open deletes it) */
  uint64_t send;          /* its size */
  uint64_t paged_unreleased; /* bytes paged out since the heap's free pages were last given
                             back (kv_mem_release, at a quarter of run_bytes) */
};

/* Bytes of a spare array set (counted in kv_bulk.bytes while it waits). */
static inline size_t kv_bulk_spare_bytes(const kv_bulk_spare *sp) {
  return sp->acap + sp->cap_ents * sizeof(kv_bulk_ent) + sp->cap_grps * sizeof(kv_bulk_grp);
}

/* Note that the load holds `held` bytes now (kv_bulk_stats.peak_bytes). Thread-safe. */
void kv_bulk_note_held(kv_bulk *b, size_t held);

/* Grow *p (an array of elem-byte items, *cap of them) to hold need. false: out of memory
** (unchanged). */
bool kv_bulk_grow(void **p, size_t *cap, size_t need, size_t elem);

/* The cell of entry e of buffer u; seq is its add ordinal. Pointers into u's arena. Inline:
** a call returning the cell through memory cost the worker's row loop a stall per cell. */
static inline kv_cell kv_bulk_ent_cell(const kv_bulk_buf *u, const kv_bulk_ent *e) {
  kv_cell c;
  c.row = u->arena + e->row_off;
  c.row_len = e->row_len;
  c.qual = u->arena + e->qual_off;
  c.qual_len = e->qual_len;
  if (e->lt & KV_BULK_OWN_TS) memcpy(&c.ts, u->arena + e->qual_off - 8, 8);
  else c.ts = u->now;
  c.seq = u->ord_base + (uint64_t)(e - u->ents) + 1;
  c.type = (uint8_t)KV_BULK_TYPE(e);
  c.value = u->arena + e->qual_off + e->qual_len;
  c.value_len = KV_BULK_VLEN(e);
  return c;
}

/* Sort u's groups into row order (equal rows in add order). KV_OK or KV_ERR_NOMEM. */
int kv_bulk_sort_buf(kv_bulk_buf *u);

/* Write the cells of the sorted buffer u to w, resolved (kv/bulk/bulk.h), every cell with
** sequence number seq. KV_OK or the writer's error / KV_ERR_NOMEM. */
int kv_bulk_write_buf(const kv_bulk_buf *u, kv_sf_writer *w, uint64_t seq);

/* A source of cells in kv_cell_cmp order (seq = add ordinal): a chain of sorted buffers
** whose rows follow one another, or a run file. */
typedef struct kv_bulk_src {
  kv_cell cur;            /* current cell (valid while valid is true) */
  uint64_t pfx[2];        /* kv_bulk_src_next: cur's first 16 row key bytes as two
                             big-endian numbers, zero-padded (kv_bulk_merge's heap order) */
  bool valid;             /* positioned on a cell */
  int err;                /* a run's read error */
  kv_bulk_buf **chain;    /* buffers, in row order (rows never shared between two) */
  size_t n_chain, ci;     /* their number / the current one */
  size_t gi;              /* next group of the current buffer */
  uint32_t *span;         /* entry indexes of the current span of equal rows */
  size_t span_n, span_i, span_cap; /* its length, position, allocated */
  size_t span_groups;     /* groups in the current span */
  kv_sf_reader *r;        /* run: its reader */
  kv_iter *it;            /* run: its iterator */
} kv_bulk_src;

/* Load the next span (the groups of the next row key) of s's chain into s->span (entry
** indexes in cell order; span_n 0 at the end). KV_OK or KV_ERR_NOMEM. */
int kv_bulk_src_fill(kv_bulk_src *s);
/* Step s to its next cell (s->valid, s->cur). KV_OK or the error (also in s->err). */
int kv_bulk_src_next(kv_bulk_src *s);
/* Free what s holds (its buffers are not its own) and zero it. */
void kv_bulk_src_free(kv_bulk_src *s);

/* A kept cell waiting for the rest of its (row, qualifier, timestamp), so the cells of one
** key go out in type-descending order. */
typedef struct kv_bulk_pend {
  bool used;              /* holds a cell */
  uint8_t *qual;          /* qualifier copy */
  size_t qual_cap;        /* allocated */
  uint8_t *val;           /* value copy */
  size_t val_cap;         /* allocated */
  kv_cell c;              /* the cell (pointers into the copies and the resolver's row) */
} kv_bulk_pend;

/* A DELETE_FAMILY of the resolver's current row. */
typedef struct kv_bulk_fdel {
  int64_t ts;             /* DELETE_FAMILY timestamp */
  uint64_t ord;           /* its add ordinal */
} kv_bulk_fdel;

/* The resolver's state over one family's merged stream. */
typedef struct kv_bulk_resolver {
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
  kv_bulk_fdel *fdels;            /* DELETE_FAMILY cells of the row */
  size_t n_fdels, cap_fdels; /* used / allocated */
  kv_bulk_pend pend[4];           /* kept cells of the current (row, qualifier, ts), by type */
} kv_bulk_resolver;

/* Feed the next cell of one family's stream in kv_cell_cmp order (seq = add ordinal) to
** the resolver: cells a later one replaces or masks are dropped, the others go to r->w with
** sequence number r->seq once their key is complete. KV_OK or the writer's error /
** KV_ERR_NOMEM. */
int kv_bulk_resolve(kv_bulk_resolver *r, const kv_cell *c);
/* Write the resolver's pending cells (call before cells of a later row bypass it, and at
** the end). KV_OK or the writer's error. */
int kv_bulk_resolve_flush(kv_bulk_resolver *r);
/* Free the resolver's copies. */
void kv_bulk_resolver_free(kv_bulk_resolver *r);

/* Cut f's non-empty buffers that still hold their cells, taken by first row, into chains
** whose buffers follow one another strictly: *out gets n_segs + 1 entries, chain k is
** (*out)[(*start)[k] .. (*start)[k+1]); returns the number of chains, or -1 (out of memory;
** nothing allocated). The caller frees *out and *start. */
int kv_bulk_make_chains(kv_bulk_fam *f, kv_bulk_buf ***out, size_t **start);

/* Merge the rows in [lo, hi) of family f's encoded segments and sorted raw buffers into w,
** resolved, every cell with sequence number seq, copying an encoded block whole when no
** other source has a row inside its range, and a row straight from its source when no
** other source has it (kv/bulk/bulk_merge.c). lo / hi NULL: no bound. Several merges of one
** family over disjoint ranges may run at once (they only read its buffers). REQUIRES: f
** has no run, every buffer is sorted (and ready). KV_OK or the first error. */
int kv_bulk_merge_blocks(kv_bulk *b, kv_bulk_fam *f, kv_sf_writer *w, uint64_t seq,
                         const uint8_t *lo, size_t lo_len, const uint8_t *hi, size_t hi_len);

/* Merge family f's sorted closed buffers into w. resolve: with f's runs, dropping replaced
** and masked cells and giving every cell sequence number seq; else (a spill: the buffers
** alone) every cell with its add ordinal as sequence number. KV_OK or the first error. */
int kv_bulk_merge(kv_bulk *b, kv_bulk_fam *f, kv_sf_writer *w, bool resolve, uint64_t seq);
/* The same over the rows in [lo, hi) alone (NULL: no bound); several of one family over
** disjoint ranges may run at once (they only read its buffers and runs). */
int kv_bulk_merge_range(kv_bulk *b, kv_bulk_fam *f, kv_sf_writer *w, bool resolve,
                        uint64_t seq, const uint8_t *lo, size_t lo_len, const uint8_t *hi,
                        size_t hi_len);

/* Hand the closed buffer u of family f to the worker (started on first use). KV_OK, or
** the worker's sticky error, or KV_ERR_NOMEM. */
int kv_bulk_enqueue(kv_bulk *b, kv_bulk_fam *f, kv_bulk_buf *u);

/* Process queued jobs on this thread too, then wait until the worker has finished every
** job. Returns the first job error (message set), or KV_OK. */
int kv_bulk_drain(kv_bulk *b);

/* Stop and join the worker (after kv_bulk_drain or on free). */
void kv_bulk_stop(kv_bulk *b);

/* Write every family's final store file (in parallel), name them all in the MANIFEST and
** publish them with sequence number seq. REQUIRES: the writer role, every job done. */
int kv_bulk_write_and_install(kv_bulk *b, uint64_t seq);

/* Family f's closed buffers known only by their encoded segments (after the worker) each
** become a run file of their own, with the buffer's last add ordinal as the sequence
** number of all their cells (their cells are resolved already), and leave f->segs. For a
** spill, and for a commit whose segments cannot simply follow one another. REQUIRES: no
** job pending. KV_OK or an I/O / memory error. */
int kv_bulk_materialize(kv_bulk *b, kv_bulk_fam *f);

/* A spill of family f, whose sources are its sorted raw buffers (f->segs, no run among
** them): they are merged into run files, cells with their add ordinals as sequence
** numbers; into one, or, from split_cells cells on, into two key ranges written at once
** (this thread and a helper), cut at the middle row of the largest buffer. Each file is
** named in f->runs before it is written (kv_bulk_free removes it from then on). KV_OK or
** the first error. */
int kv_bulk_spill_runs(kv_bulk *b, kv_bulk_fam *f);

/* Free a buffer and what it holds. NULL is a no-op. */
void kv_bulk_buf_free(kv_bulk_buf *u);

#endif /* ROWAN_KV_BULK_INT_H */
