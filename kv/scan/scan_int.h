/*
** kv/scan/scan_int.h: the state of a scan (kv_scan) shared by the files that implement it:
** kv/scan/scan.c reads rows (the per-family merge, row assembly, the fast row path of
** kv/sf/sf_rows.h, forward and reverse), kv/scan/scan_open.c opens, closes and recycles scans and
** point reads, kv/scan/scan_run.c hands out row runs (the steady state of a forward scan over
** store-file blocks). Not part of kv/'s contract: only those three files include it.
*/
#ifndef ROWAN_KV_SCAN_INT_H
#define ROWAN_KV_SCAN_INT_H

#include <stdlib.h>
#include <string.h>

#include "kv/db/db_impl.h"
#include "kv/sf/sf_reuse.h"
#include "kv/sf/sf_rows.h"
#include "kv/util/status.h"

typedef struct fscan {
  /* kept with a shelved shell for the next scan (buffers, and the visibility state, which
     scan_open sets again): fscan_reset clears everything from fid on */
  kv_memstore **mems;           /* referenced memstores (active, frozen ones, overlay) */
  uint32_t mems_cap;            /* entries allocated in mems */
  kv_sfh **files;               /* referenced store files */
  uint32_t files_cap;           /* entries allocated in files */
  kv_iter **kids;               /* one iterator per source: mems first, then files */
  uint8_t *parked;              /* per kid: 1 = left out of the current single-key range
                                   because its file's bloom filter rules the key out */
  uint32_t kids_cap;            /* entries allocated in kids and parked */
  kv_iter **spare;              /* parked store-file iterators of an earlier scan */
  uint32_t n_spare, spare_cap;  /* entries in spare / allocated */
  uint8_t **proj;               /* projected qualifiers (into proj_bytes), when has_proj */
  uint32_t *proj_lens;          /* their lengths */
  uint32_t proj_cap;            /* entries allocated in proj and proj_lens */
  uint8_t *proj_bytes;          /* the qualifiers' bytes (copies) */
  size_t proj_bytes_cap;        /* bytes allocated in proj_bytes */
  const uint8_t **vvals;        /* vec: per projected qualifier, the row's value */
  uint32_t *vlens;              /* vec: their lengths */
  uint32_t vcap;                /* entries allocated in vvals and vlens */
  kv_vis vis;                   /* visibility state and parameters */
  /* this scan's: zero in a reset slot */
  uint32_t fid;                 /* family id */
  int n_mems;                   /* entries in mems */
  kv_memstore *ovl;             /* the overlay memstore (also in mems), NULL if none */
  int ovl_kid;                  /* kid reading the overlay memstore, -1 if none */
  uint32_t n_files;             /* entries in files */
  uint32_t n_kids;              /* entries in kids */
  uint32_t n_mem_kids;          /* kids reading memstores (empty ones get none) */
  int cur;                      /* kid holding the smallest cell, -1 when exhausted */
  kv_sf_io io;                  /* block counters of this family's store files */
  uint64_t cells;               /* cells pulled from the sources */
  uint64_t files_opened;        /* store-file iterators created */
  uint64_t files_skipped_ts;    /* store files left out by their timestamps (time range) */
  uint32_t n_proj;              /* entries in proj; a zero count with proj set = none */
  bool has_proj;                /* a projection was given */
  bool fast;                    /* rows may be taken whole from a store file (sf_rows.h) */
  bool vec;                     /* ... and as a value vector (kv_scan_options.value_vectors) */
} fscan;

/* One family of a row run (kv/scan/scan_run.c). */
typedef struct kv_run_fam {
  struct sf_iter *it;           /* the family's store-file iterator, on the last row taken */
  fscan *f;                     /* the family */
  uint32_t rend;                /* the run takes rows of it's loaded block below this one */
  uint32_t next_cs;             /* the first cell of the row after the last one taken */
  bool vec;                     /* its rows go out as value vectors (else as views) */
  bool all_kept;                /* the projection keeps every cell of the block */
  bool one;                     /* views of a marker block: one qualifier, empty values, a
                                   timestamp per row (a one-cell row's view written here) */
  bool key_ok;                  /* its block's key prefix agrees with the first family's
                                   (keys of one length): rows compare by suffix alone */
} kv_run_fam;

typedef struct nrange {
  uint8_t *start; uint32_t start_len; /* inclusive start; NULL = from the first row */
  uint8_t *end; uint32_t end_len;     /* exclusive end; NULL = to the last row */
} nrange;

struct kv_scan {
  kv_db *db;                    /* NULL once detached by kv_close */
  struct kv_scan *prev, *next;  /* db->scans list */
  bool detached;                /* kv_close tore it down */
  bool finished;                /* the end (or an error) was reached */
  int err;                      /* the error that finished it */
  uint64_t snapshot;            /* sequence number read at */
  fscan fams[KV_SCAN_MAX_FAMILIES]; /* the families, in the order asked */
  uint32_t n_fams;              /* entries in fams */
  nrange *ranges;               /* normalized ranges, ascending */
  uint32_t n_ranges;            /* entries in ranges */
  uint32_t ranges_cap;          /* entries allocated in ranges */
  uint8_t *rbytes;              /* the ranges' bounds, back to back */
  size_t rbytes_cap;            /* bytes allocated in rbytes */
  int cur_range;                /* the range being read */
  bool range_started;           /* sources positioned for cur_range */
  bool reverse;                 /* descending rows */
  int exist_fam;                /* index of the existence family in fams, -1 if none */
  int exist_state;              /* EXIST_*: the existence family in the current range */
  uint64_t limit;               /* rows handed out at most; 0 = no limit */
  const atomic_int *interrupt;  /* kv_scan_options.interrupt, or NULL */
  struct kv_trace *trace;       /* kv_scan_options.trace: ranges sought go there, or NULL */
  uint32_t int_tick;            /* rows examined since the flag was last read */
  kv_filter_fn filter;          /* optional row filter */
  void *filter_ctx;             /* its context */
  uint8_t *key; uint32_t key_len, key_cap;   /* current row key */
  uint8_t *ub; uint32_t ub_len, ub_cap;      /* reverse: exclusive upper bound */
  bool have_ub;                 /* reverse: ub is set */
  kv_cell_view *views; uint32_t n_views, cap_views; /* cells of the current row */
  kv_value_vector vecs[KV_SCAN_MAX_FAMILIES]; /* families of the current row taken as value
                                   vectors (vectors of families' vvals / vlens) */
  uint32_t n_vecs;              /* entries in vecs */
  bool want_vecs;               /* kv_scan_options.value_vectors, no filter, switch on */
  size_t *offs;                 /* per copied cell (add_view): its view's index, the
                                   offsets of its qualifier and value in data (views of
                                   rows taken whole point into their block instead) */
  uint32_t n_copied;            /* copied cells in offs */
  uint8_t *data; size_t data_len, data_cap;  /* bytes of the current row's cells */
  struct {                      /* row-level metrics (kv_scan_get_metrics adds the rest) */
    uint64_t rows_examined, rows_filtered, rows_returned, ranges_sought;
  } m;
  uint32_t pend_mask;           /* bit i: family i's current kid handed out its row whole
                                   (kv_sf_iter_take_row) and must move past it before the
                                   family is read again (its views point into its block) */
  uint64_t rows_taken;          /* family rows handed out whole (kv_scan_rows_taken) */
  uint64_t vec_rows;            /* of them, as value vectors (added to a process-wide count
                                   at close: kv_scan_vector_rows) */
  uint8_t *kept_row;            /* a detached scan's last row's bytes (kv_scan_keep_row) */
  kv_run_fam run[KV_SCAN_MAX_FAMILIES]; /* the families of the row run (kv/scan/scan_run.c) */
  uint32_t run_n;               /* entries in run; 0 = no run set up */
  const uint8_t *run_stop;      /* the run's exclusive bound (the range end, or the next row
                                   of a source outside the run), NULL = none */
  uint32_t run_stop_len;        /* its length */
  bool run_below;               /* every row the run may take is below run_stop */
  uint32_t run_got;             /* rows the run set up last took so far */
  uint32_t run_fails;           /* runs in a row that took no row */
  uint32_t run_wait;            /* rows to take the present path for before trying a run */
  uint64_t run_rows;            /* rows handed out by row runs (added to a process-wide
                                   count at close: kv_scan_run_rows) */
  /* skip scan by prefix (kv_scan_options.skip_prefix, kv/scan/scan_skip.c): ranges holds the
     ranges of the current prefix, made when the previous ones are done */
  bool skip;                    /* the ranges are made per prefix found */
  bool skip_done;               /* no key after the current prefix: no more probes */
  bool have_probe;              /* probe is set (else the next probe is the first key) */
  kv_prefix_len_fn plen;        /* a key's prefix length */
  void *plen_ctx;               /* its context */
  nrange *sfx;                  /* normalized suffix ranges ([start, end), NULL = open) */
  uint32_t n_sfx, sfx_cap;      /* entries in sfx / allocated */
  uint8_t *sfx_bytes;           /* their bounds, back to back */
  uint32_t skip_rows;           /* rows handed out per prefix at most (0 = all) */
  uint32_t pfx_rows;            /* rows of the current prefix handed out */
  size_t sfx_bytes_cap;         /* bytes allocated in sfx_bytes */
  uint8_t *probe; uint32_t probe_len, probe_cap; /* where the next prefix is sought */
  uint8_t *pfx; uint32_t pfx_len, pfx_cap;       /* the current prefix */
  uint64_t prefixes;            /* prefixes found (kv_scan_metrics.prefixes_sought) */
  nrange *outer;                /* the scan's own ranges, which bound the prefixes (a skip
                                   scan inside key ranges); their bounds in outer_bytes */
  uint32_t n_outer, outer_cap;  /* entries in outer / allocated */
  uint32_t cur_outer;           /* the first outer range the next probe may fall in */
  uint8_t *outer_bytes;         /* the outer ranges' bounds, back to back */
  size_t outer_bytes_cap;       /* bytes allocated there */
  nrange *xr;                   /* scratch: a prefix's ranges cut to the outer ranges */
  size_t xr_cap;                /* entries allocated in xr */
};

/* Skip scan by prefix (kv/scan/scan_skip.c). At open: copy and normalize sp's suffix ranges into
** s (s->skip set), and the scan's own ranges (already normalized in s->ranges) into
** s->outer; KV_ERR_INVALID (reverse, no prefix_len, suffixes unsorted or overlapping),
** KV_ERR_TOOBIG, KV_ERR_NOMEM. */
int kv_scan_skip_setup(kv_scan *s, const kv_skip_prefix *sp, uint32_t n_ranges);
/* The smallest row key at or after the probe is row[0..row_len): cut its prefix, make
** s->ranges the prefix's non-empty ranges (cur_range 0), set the next probe (or skip_done).
** KV_OK, KV_ERR_INVALID (prefix_len refused the key), KV_ERR_NOMEM. */
int kv_scan_skip_ranges(kv_scan *s, const uint8_t *row, uint32_t row_len);
/* Find the next prefix (kv/scan/scan.c): seek every family (only the existence family when
** there is one) to the probe, then
** kv_scan_skip_ranges. KV_OK, KV_ERR_NOTFOUND (no more prefixes) or an error. */
int kv_scan_skip_probe(kv_scan *s);

/* Before the sources of scan s are released under a row it handed out whole (kv_close
** tearing the scan down): copy that row's qualifiers and values into s->kept_row (freed
** with the scan) and point its views there, so the row stays readable as kv.h promises
** until the next kv_scan_next. No-op when no row points into a block; out of memory leaves
** the views as they are. */
void kv_scan_keep_row(kv_scan *s);

/* Add scan s's vec_rows and run_rows to the process-wide counts (kv_scan_vector_rows,
** kv_scan_run_rows) and clear them. */
void kv_scan_count_vectors(kv_scan *s);

/* Room for `need` views of the current row in s->views (and their offsets). KV_OK or
** KV_ERR_NOMEM (message set). */
int kv_scan_views_room(kv_scan *s, size_t need);

/* Set up a row run (kv/scan/scan_run.c) after a forward scan handed out a row taken whole from
** store-file blocks (s->pend_mask): s->run_n > 0 when the next rows may come from
** kv_scan_run_next. KV_OK (a run or not), or KV_ERR_NOMEM. */
int kv_scan_run_begin(kv_scan *s);

/* The next row of the run: true with *row handed out (as the present path would: same row,
** cells, vectors and metrics), false when the run has ended (s->run_n is then 0 and the
** scan's sources are as the last row left them: the present path goes on from there). */
bool kv_scan_run_next(kv_scan *s, kv_row *row);

/* a[0..n) == b[0..n) without a call to memcmp (row keys are short): eight bytes at a time
** down to at most 16, then the first and the last eight (overlapping); below 8 likewise with
** four, two, one. */
static inline bool kv_scan_same_bytes(const uint8_t *a, const uint8_t *b, uint32_t n) {
  if (n >= 8) {
    uint64_t x, y, u, v;
    for (; n > 16; n -= 8, a += 8, b += 8) {
      memcpy(&x, a, 8);
      memcpy(&y, b, 8);
      if (x != y) return false;
    }
    memcpy(&x, a, 8);
    memcpy(&y, b, 8);
    memcpy(&u, a + n - 8, 8);
    memcpy(&v, b + n - 8, 8);
    return ((x ^ y) | (u ^ v)) == 0;
  }
  if (n >= 4) {
    uint32_t x, y, u, v;
    memcpy(&x, a, 4);
    memcpy(&y, b, 4);
    memcpy(&u, a + n - 4, 4);
    memcpy(&v, b + n - 4, 4);
    return ((x ^ y) | (u ^ v)) == 0;
  }
  if (n >= 2) {
    uint16_t x, y, u, v;
    memcpy(&x, a, 2);
    memcpy(&y, b, 2);
    memcpy(&u, a + n - 2, 2);
    memcpy(&v, b + n - 2, 2);
    return x == y && u == v;
  }
  return n == 0 || *a == *b;
}

/* Copy n bytes (a short row key or part of one) without a library call, as
** kv_scan_same_bytes reads them (the last eight, four or two overlapping). d and src must
** not overlap. */
static inline void kv_scan_copy_key(uint8_t *d, const uint8_t *src, uint32_t n) {
  if (n >= 8) {
    for (; n > 16; n -= 8, d += 8, src += 8) memcpy(d, src, 8);
    uint64_t x, u;
    memcpy(&x, src, 8);
    memcpy(&u, src + n - 8, 8);
    memcpy(d, &x, 8);
    memcpy(d + n - 8, &u, 8);
  } else if (n >= 4) {
    uint32_t x, u;
    memcpy(&x, src, 4);
    memcpy(&u, src + n - 4, 4);
    memcpy(d, &x, 4);
    memcpy(d + n - 4, &u, 4);
  } else if (n >= 2) {
    uint16_t x, u;
    memcpy(&x, src, 2);
    memcpy(&u, src + n - 2, 2);
    memcpy(d, &x, 2);
    memcpy(d + n - 2, &u, 2);
  } else if (n) {
    *d = *src;
  }
}

#define MAX_SPARE 64u /* parked store-file iterators a family slot keeps at most */

/* The existence family during a one-row range: not deferred, or not sought yet. */
enum { EXIST_NONE = 0, EXIST_PENDING = 1 };

/* Grow array *p of `elem`-byte elements to hold `need` (*cap counts elements; doubles from
** 64). KV_OK, or KV_ERR_NOMEM with the message set (array unchanged). */
static inline int kv_scan_grow(void **p, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap) return KV_OK;
  size_t nc = *cap ? *cap : 64;
  while (nc < need) nc *= 2;
  void *np = realloc(*p, nc * elem);
  if (!np) return kv_error(KV_ERR_NOMEM, "scan: out of memory");
  *p = np;
  *cap = nc;
  return KV_OK;
}

#endif /* ROWAN_KV_SCAN_INT_H */
