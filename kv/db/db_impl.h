/*
** kv/db/db_impl.h: the inside of a kv_db, shared by the files that implement kv.h:
** kv/db/db_open.c (open, close, DDL, WAL replay), kv/db/db_write.c (commit, group commit),
** kv/db/db_flush.c (flush), kv/db/db_wal.c (WAL rotation, deletion and its size bound),
** kv/db/compact.c (compaction), kv/scan/scan.c and
** kv/db/db_vis.c (reads), kv/db/batch.c. Not a public header.
**
** Locking (REQUIRES notes below refer to these):
** - db->mu guards the family table, each family's memstores (active and frozen) and file
**   list, the writer queue, the snapshot list, the open-scan list, bg_error, the WAL
**   pointer swap and wal_live, and the background-thread state (bg_*).
** - The writer role: the writer at the head of db->writers. Only its holder commits to the
**   WAL, inserts into memstores, freezes memstores, rotates the WAL or changes the DDL. It
**   mutates shared state only while also holding mu, and may read that state without mu.
** - The background thread (kv/db/db_bg.c) is the only one that writes store files, changes
**   file lists and writes flush, compaction and WAL trim records to the MANIFEST. DDL,
**   which writes the MANIFEST too, first pauses it (kv_db_bg_pause), so the MANIFEST and
**   db->ver have one writer at a time without a lock of their own. A bulk load's commit
**   adds files too: it waits only until the thread is idle or a compaction is merging
**   (bg_cm_merging: its inputs chosen, the MANIFEST and the file list not yet touched), and
**   writes its record and appends its files holding mu throughout; the compaction takes mu
**   to end its merging phase, so the two never write the MANIFEST at once, and it then puts
**   its output where its inputs were, before the files appended meanwhile. File numbers come
**   from db->next_file.
** - Readers (scans) take references to memstores and store files under mu, then read them
**   without any lock: memstores are lock-free for readers, store files are immutable.
** - db->last_seq is published (release) only after a whole group is in the memstores.
*/
#ifndef ROWAN_KV_DB_IMPL_H
#define ROWAN_KV_DB_IMPL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "kv/env/env.h"
#include "kv/kv.h"
#include "kv/db/manifest.h"
#include "kv/db/memstore.h"
#include "kv/db/qualset.h"
#include "kv/sf/sf.h"
#include "kv/db/wal.h"

/* One open store file, shared by the family's file list and by scans. */
typedef struct kv_sfh {
  atomic_int refs;        /* the family list holds one; each scan or compaction one */
  kv_sf_reader *reader;   /* the open reader */
  kv_file_meta meta;      /* as recorded in the MANIFEST */
  kv_env *env;            /* for the deletion of an obsolete file */
  char *path;             /* data/<table>/<family>/<number>.sf (malloc'ed) */
  atomic_bool obsolete;   /* the MANIFEST no longer names it: delete at the last unref */
  bool keep_file;         /* a read-only open's: the last unref of an obsolete file drops
                             its cached blocks but never deletes it (the writer does) */
  struct kv_cache *cache; /* the store's block cache (entries erased with the file), or NULL */
  uint64_t index_held;    /* what its whole block index counts in *index_pool (0: paged) */
  _Atomic uint64_t *index_pool; /* the store's kv_db.index_held */
  uint64_t cache_data;    /* its raw block bytes counted in the cache's data (format 3 and
                             later: it may hold decimal-scaled groups; kv_cache_note_data) */
} kv_sfh;

void kv_sfh_ref(kv_sfh *h);
/* Sort store files fs[0..n) (each holding a block at least) by their first row key; true
** when two neighbours' key ranges then overlap (a file's last row at or past the next one's
** first): a reader must merge them. Else their rows lie end to end in that order (the
** columnar aggregate's walk, the split points' binary searches). */
bool kv_sfh_sort_by_first_row(kv_sfh **fs, uint32_t n);
/* Drop a reference; the last one closes the reader and, if obsolete, deletes the file and
** drops its blocks from the block cache. */
void kv_sfh_unref(kv_sfh *h);

/* A position in the WAL: the end of a record (docs/FORMAT.md "LOG_POSITION"). */
typedef struct kv_logpos {
  uint64_t seg;              /* segment number (0: none) */
  uint64_t off;              /* bytes of whole records in it up to that record's end */
  uint64_t seq;              /* sequence number of the record's last op */
} kv_logpos;

/* A table's region boundaries at run time (kv/db/db_region.c): immutable, shared by the
** table's families (each holds a reference), replaced whole when a region splits. Region i
** holds the rows in [keys[i-1], keys[i]); a NULL kv_regions is one region. */
typedef struct kv_regions {
  atomic_int refs;           /* the families holding it, and writers and readers using it */
  uint32_t n;                /* boundaries (regions - 1, >= 1) */
  const uint8_t **keys;      /* the boundaries, ascending (into the bytes after the struct) */
  uint32_t *lens;            /* their lengths */
} kv_regions;

/* Run-time state of one column family. */
typedef struct kv_fam {
  uint32_t id;               /* store-wide family id */
  uint32_t table_id;         /* owning table */
  char name[KV_MAX_NAME + 1];/* family name */
  int max_versions;          /* VERSIONS (>= 1) */
  int64_t ttl_sec;           /* TTL in seconds; 0 = forever */
  int compression;           /* enum kv_compression */
  uint32_t block_size;       /* target block bytes */
  kv_memstore *mem;          /* active memstore (never NULL for a live family) */
  _Atomic uint64_t mem_log;  /* oldest WAL segment holding cells of mem; 0 if mem empty */
  kv_memstore **imms;        /* frozen memstores waiting for their flush, oldest first */
  uint64_t *imm_logs;        /* per frozen memstore: oldest WAL segment holding its cells */
  uint64_t *imm_seqs;        /* per frozen memstore: last sequence number when frozen */
  kv_logpos *imm_pos;        /* per frozen memstore: the WAL's end when frozen (written out
                                and synced by the freeze's rotation): its flush records it */
  uint32_t n_imm, cap_imm;   /* frozen memstores / allocated entries */
  uint64_t frozen;           /* memstores frozen so far (kv_flush waits on these counts) */
  uint64_t flushed;          /* of which flushed to a store file */
  int compact_req;           /* kv_compact asked: 0 none, 1 minor, 2 major */
  uint64_t compact_asked;    /* kv_compact requests made */
  uint64_t compact_done;     /* of which done (or failed: see bg_error) */
  uint64_t compactions;      /* compactions done since open (kv_family_stats) */
  uint64_t blocks_copied;    /* blocks minor compactions copied whole since open */
  uint64_t blocks_merged;    /* blocks they wrote from cells merged one by one */
  kv_sfh **files;            /* store files, oldest first */
  uint32_t n_files;          /* entries in files */
  uint32_t cap_files;        /* allocated entries */
  uint64_t flushed_seq;      /* every op <= this is in the store files */
  bool dropped;              /* its table was dropped */
  kv_qualset dead;           /* qualifiers a major compaction drops (in memory only:
                                kv_family_set_dropped_qualifiers) */
  kv_regions *regions;       /* its table's region boundaries, or NULL: one region
                                (REQUIRES mu to read or swap; a reference keeps it) */
  bool compact_damaged;      /* a compaction met a damaged input (KV_ERR_CORRUPT): the
                                automatic ones skip the family until it is reopened,
                                kv_compact reports damage_msg (docs/KV_REGIONS.md) */
  char damage_msg[512];      /* that error's message (REQUIRES mu) */
} kv_fam;

/* A writer waiting in the commit queue (or a DDL/flush/compaction taking the role). */
typedef struct kv_writer {
  const kv_batch *batch;     /* the batch, or NULL for a role-only waiter */
  int status;                /* result, set by the leader */
  bool done;                 /* the leader finished this writer */
  uint64_t last_seq;         /* sequence number of the batch's last op */
  uint64_t first_seq;        /* sequence number of its first op (leader's use) */
  size_t ops_off;            /* its decoded ops in db->commit_ops from here, or SIZE_MAX
                                (leader's use) */
  char msg[256];             /* error message for the waiting thread */
  pthread_cond_t cv;         /* signalled when done or at the head */
  struct kv_writer *next;    /* queue link */
} kv_writer;

struct kv_scan;

struct kv_db {
  kv_env *env;               /* the file system */
  char *path;                /* store directory */
  kv_options opts;           /* options with defaults filled in */
  _Atomic uint64_t index_held; /* kv_sf_index_mem of the open store files whose block
                                index is whole (kv_sfh_open: opts.index_memory) */
  _Atomic int64_t lookback_cut; /* the latest cutoff (ms) a major compaction kept the
                                look-back window from (kv/db/compact.c); 0: none yet */
  kv_file *lock;             /* the LOCK file handle */
  kv_manifest *man;          /* the MANIFEST log */
  kv_version ver;            /* the described state (tables, files, counters) */
  pthread_mutex_t mu;        /* see the header comment */
  kv_fam **fams;             /* indexed by family id; NULL for unknown ids */
  uint32_t n_fam_slots;      /* entries in fams */
  kv_wal *wal;               /* current WAL segment (NULL when read-only) */
  kv_logpos wal_end;         /* end of the last WAL record written (REQUIRES the writer
                                role): what a freeze or a bulk load records as the log
                                position their store files depend on */
  struct kv_follow *follow;  /* a read-only open's view of the writer's files (kv/db/db_follow.c),
                                or NULL */
  _Atomic uint64_t next_file; /* next file number (WAL segments, store files) */
  pthread_t bg_thread;       /* the background flush and compaction thread */
  bool bg_running;           /* bg_thread was started and not yet joined */
  bool bg_stop;              /* kv_close asks the thread to finish */
  bool bg_busy;              /* the thread is running a job */
  bool bg_cm_merging;        /* the job is a compaction writing its output (kv/db/compact.c):
                                kv_db_bg_pause_install need not wait for it */
  int bg_pause;              /* DDL pauses: no job starts while > 0 */
  pthread_cond_t bg_cv;      /* wakes the thread: new work, stop, resume */
  pthread_cond_t bg_done_cv; /* broadcast when a job ends (or the error state is set) */
  uint64_t *wal_live;        /* numbers of WAL segments on disk still in use, ascending */
  uint64_t *wal_live_bytes;  /* per entry of wal_live: its bytes once closed (the current
                                segment's entry is unused: kv_wal_size(db->wal) instead) */
  uint32_t n_wal_live;       /* entries in wal_live (and wal_live_bytes) */
  uint32_t cap_wal_live;     /* allocated entries */
  bool wal_trim_req;         /* the background thread should record the oldest WAL segment
                                needed in the MANIFEST and delete the older ones */
  _Atomic uint64_t last_seq; /* latest sequence number visible to readers */
  int64_t last_commit_ts;    /* highest commit time handed out (REQUIRES mu): commit times
                                never go back in one open store, even if the clock does */
  kv_writer *writers;        /* writer queue head (the role holder) */
  kv_wal_op *commit_ops;     /* the commit leader's decoded ops of its group (kv/db/db_write.c;
                                REQUIRES the writer role) */
  size_t cap_commit_ops;     /* entries allocated in commit_ops */
  kv_writer *writers_tail;   /* writer queue tail */
  int bg_error;              /* sticky error refusing writes (KV_OK if none) */
  char bg_msg[256];          /* its message */
  uint64_t *snaps;           /* acquired snapshots (a multiset) */
  uint32_t n_snaps;          /* entries in snaps */
  uint32_t cap_snaps;        /* allocated entries */
  struct kv_scan *scans;     /* open scans (doubly linked through the scans) */
  void (*scan_detach_all)(kv_db *db); /* set by kv/scan when it links its first scan here:
                                tears down every open scan and the spare shell at kv_close
                                (the store owns the list, kv/scan the scans' insides, so
                                the call goes through this pointer, not up the layers);
                                REQUIRES: mu held */
  _Atomic(struct kv_scan *) scan_spare; /* a closed scan's shell kept for the next open
                                (kv/scan/scan.c), or NULL; freed by scan_detach_all */
  struct kv_cache *cache;    /* block cache shared by all store files, or NULL (disabled) */
  struct kv_cache *colcache; /* kv/colscan/colscan.c's column cache (a quarter of block_cache_size,
                                carved out of it at open), or NULL */
  uint64_t stat_flushes;     /* flushes done (tests) */
  uint64_t stat_wal_freezes; /* memstores frozen by the WAL size bound (REQUIRES mu) */
  uint64_t stat_wal_stalls;  /* waits of a commit for the WAL size bound (REQUIRES mu) */
  uint64_t stat_replay_segments; /* WAL segments replayed by kv_open */
  uint64_t stat_replay_records;  /* WAL records replayed by kv_open */
  uint64_t stat_replay_bytes;    /* their bytes, headers included */
  uint64_t stat_dropped_bytes;   /* a torn tail kv_open dropped from the newest segment */
  uint64_t stat_dropped_segment; /* that segment's number (0: none) */
  uint64_t stat_compactions; /* compactions done (tests) */
  uint64_t stat_region_splits; /* regions split by size (REQUIRES mu; kv/db/db_split.c) */
  uint64_t stat_reader_retries; /* read-only: catch-up attempts made again (REQUIRES mu) */
  uint64_t stat_reader_stops;   /* read-only: catch-ups stopped before a record (mu) */
};

/* ---- read-only opens beside a writer (kv/db/db_follow.c) ---- */
/* Open db (opts.read_only, nothing of db->man, db->wal or the LOCK) on the store as its
** files show it now, writing nothing: the MANIFEST, the store files it names and the WAL
** replayed into memstores, retrying when the writer deletes a file or a segment in between.
** REQUIRES: kv_open, no other thread. */
int kv_db_follow_open(kv_db *db);
/* Tests only: call fn(ctx, attempt) in every catch-up attempt right after the MANIFEST was
** read, before anything it names is opened (a writer's flush, compaction or DDL can be put
** there); NULL clears it. Not thread-safe: set it while no read-only store is opening. */
void kv_follow_test_hook(void (*fn)(void *ctx, int attempt), void *ctx);
/* Free what kv_db_follow_open kept (kv_close). */
void kv_db_follow_free(kv_db *db);
/* The log-behind-MANIFEST check (kv_open and readers): the version's log position names
** segment seg at offset off; `have` is the bytes of whole records found in that segment
** (UINT64_MAX: the segment is missing). KV_OK, or KV_ERR_CORRUPT naming the MANIFEST, the
** segment and the store files newer than the log. REQUIRES: mu or kv_open. */
int kv_db_check_log_position(kv_db *db, const kv_version *v, uint64_t have,
                             uint64_t log_max_seq);

/* ---- batch (kv/db/batch.c) ---- */
/* The encoded WAL payload of the batch (count varint then ops); *len gets its size. */
const uint8_t *kv_batch_payload(const kv_batch *b, size_t *len);
/* The distinct family ids b's ops name (at most KV_BATCH_FAMS; *ids valid until b changes):
** true, or false when b does not know them (too many, or after kv_batch_rollback_to or
** kv_batch_copy): the caller then decodes the ops. */
#define KV_BATCH_FAMS 8
bool kv_batch_families(const kv_batch *b, const uint32_t **ids, uint32_t *n);
/* The overlay index of a batch (kv/db/batch.c): its ops as memstore cells, one memstore per
** family, sequence numbers KV_OVERLAY_SEQ0 + 1 + i in batch order (above every committed
** sequence number, so the overlay wins over the store, and a later op over an earlier one).
** kv_batch_overlay_sync indexes the ops added since the last call (the first call all of
** them; after kv_batch_rollback_to past indexed ops, or kv_batch_clear, all again), with
** KV_TS_NOW taken as `now`. KV_OK, KV_ERR_NOMEM, KV_ERR_CORRUPT. Called by the session's
** own thread (the batch's writer), from kv_scan_open. kv_batch_overlay_mem: the memstore
** of a family (the batch's reference; a scan takes its own), NULL when the batch has no
** op of that family (as of the last sync). */
#define KV_OVERLAY_SEQ0 (1ull << 62)
int kv_batch_overlay_sync(kv_batch *b, int64_t now);
kv_memstore *kv_batch_overlay_mem(const kv_batch *b, uint32_t family_id);

/* ---- writer role (kv/db/db_write.c) ---- */
/* Wait in the writer queue until at its head. REQUIRES: mu held (it is held on return). */
void kv_db_role_acquire(kv_db *db, kv_writer *w);
/* Leave the queue and wake the next writer. REQUIRES: mu held, w at the head. */
void kv_db_role_release(kv_db *db, kv_writer *w);
/* The sticky error check for writes: KV_OK, KV_ERR_READONLY or bg_error with its message.
** REQUIRES: mu held. */
int kv_db_writable(kv_db *db);
/* Set the sticky error (first one wins). REQUIRES: mu held. */
void kv_db_set_bg_error(kv_db *db, int code, const char *msg);

/* ---- families (kv/db/db_open.c) ---- */
/* The live family with this id, or NULL. REQUIRES: mu held or the writer role. */
kv_fam *kv_db_family(kv_db *db, uint32_t id);
/* Path of a family's store-file folder and of one store file. */
void kv_db_family_dir(kv_db *db, const kv_fam *f, char *buf, size_t cap);
void kv_db_sf_path(kv_db *db, const kv_fam *f, uint64_t number, char *buf, size_t cap);
/* Append a store file to a family's list (takes over the caller's reference).
** REQUIRES: mu held. KV_OK or KV_ERR_NOMEM. */
int kv_fam_add_file(kv_fam *f, kv_sfh *h);
/* Open a reader on a store file and wrap it in a handle with one reference. */
int kv_sfh_open(kv_db *db, const kv_fam *f, const kv_file_meta *meta, kv_sfh **out);
/* A run-time family (with an empty memstore) for a manifest family, entered in db->fams;
** NULL when out of memory. REQUIRES: mu held or no other thread. */
kv_fam *kv_fam_new(kv_db *db, uint32_t table_id, const kv_family_meta *fm);
/* Free a family and drop its memstore and store-file references (NULL is a no-op). */
void kv_fam_free(kv_fam *f);
/* Record a WAL segment number as on disk and in use, holding `bytes` bytes (0 for the new
** current segment). REQUIRES: mu held (or kv_open). KV_OK or KV_ERR_NOMEM. */
int kv_db_wal_live_add(kv_db *db, uint64_t number, uint64_t bytes);
/* Write the counters (next file number, ids, last_seq, oldest WAL) to the MANIFEST.
** REQUIRES: kv_open, before the background thread starts. */
int kv_db_write_counters(kv_db *db);
/* A SET_COUNTERS edit of the current counters; `skip` (may be NULL) is a family whose
** oldest frozen memstore is being flushed, so its WAL segment is not counted as needed.
** REQUIRES: mu held. */
kv_edit kv_db_counters_edit(kv_db *db, const kv_fam *skip);
/* Oldest WAL segment still holding unflushed ops of a live family (the current segment
** when none does); `skip` as for kv_db_counters_edit. REQUIRES: mu. */
uint64_t kv_db_oldest_needed_wal(kv_db *db, const kv_fam *skip);
/* Oldest live snapshot, or the latest sequence number when none is held. REQUIRES: mu. */
uint64_t kv_db_oldest_snapshot(kv_db *db);

/* ---- flush and compaction (kv/db/db_flush.c, kv/db/compact.c, kv/db/db_bg.c) ---- */
/* A new file number. */
uint64_t kv_db_new_file_number(kv_db *db);
/* Freeze the non-empty active memstores of the n families: one WAL rotation, then each
** memstore joins its family's frozen list for the background thread, which is woken.
** REQUIRES: the writer role (or kv_open before any other thread), mu NOT held. On failure
** the sticky error is set. */
int kv_db_freeze(kv_db *db, kv_fam **fams, uint32_t n);
/* After a commit: freeze families past memstore_flush_size; then, while the active and
** frozen memstores together exceed memstore_limit, freeze the largest and wait for the
** background thread (back-pressure). REQUIRES: the writer role, mu NOT held. */
int kv_db_maybe_flush(kv_db *db);
/* Set the sticky error from rc and the thread's kv_errmsg(); returns rc with that message.
** REQUIRES: mu NOT held. */
int kv_db_fail(kv_db *db, int rc);
/* Flush family f's oldest frozen memstore to a store file and record it. REQUIRES: the
** background thread, mu NOT held, f->n_imm > 0. On failure the sticky error is set. */
int kv_db_flush_imm(kv_db *db, kv_fam *f);
/* ---- WAL segments (kv/db/db_wal.c) ---- */
/* Start a new WAL segment; the old one is synced and closed, its size kept in
** wal_live_bytes. REQUIRES: the writer role (or kv_open), mu NOT held. */
int kv_db_rotate_wal(kv_db *db);
/* Delete the WAL segments below the MANIFEST's oldest needed one and the closed ones that
** hold no record (best effort), never the current one. REQUIRES: mu. */
void kv_db_delete_old_wal(kv_db *db);
/* Bytes in the live WAL segments, the current one's buffered records included. REQUIRES:
** mu. */
uint64_t kv_db_wal_total(kv_db *db);
/* The WAL size bound, after a commit (from kv_db_maybe_flush): roll the current segment
** past wal_limit / 4; while the live segments hold more than wal_limit, freeze the families
** whose active memstore has ops in the oldest segment (the flushes let it be deleted), and
** wait for the background thread while they hold more than wal_limit + wal_limit / 4.
** REQUIRES: the writer role, mu NOT held. A failure sets the sticky error. */
int kv_db_wal_bound(kv_db *db);
/* The background thread's WAL trim job (wal_trim_req): write the oldest needed segment to
** the MANIFEST if it moved, then delete the older ones. REQUIRES: the background thread, mu
** NOT held. A failure sets the sticky error. */
int kv_db_trim_wal(kv_db *db);

/* Start / stop the background thread (stop finishes the running job, then joins).
** kv_db_bg_start: KV_OK or KV_ERR_IO. REQUIRES: mu NOT held. */
int kv_db_bg_start(kv_db *db);
void kv_db_bg_stop(kv_db *db);
/* Wait until no background job runs and keep new ones from starting / allow them again.
** REQUIRES: mu held. */
void kv_db_bg_pause(kv_db *db);
void kv_db_bg_resume(kv_db *db);
/* kv_db_bg_pause for a bulk load's commit, which only appends files to file lists and
** writes its MANIFEST record while holding mu: it waits until no job runs or the running
** one is a compaction still merging (bg_cm_merging), so a long compaction does not stall
** the load; resume with kv_db_bg_resume. REQUIRES: mu held, and held until the files are
** listed. */
void kv_db_bg_pause_install(kv_db *db);
/* ---- regions (kv/db/db_region.c) ---- */
/* The cells a flush or a compaction writes, handed out in order: next_row gives the row of
** the next cell (false: none left); fill adds the cells whose row sorts below end (end
** NULL: every one left) to w and stops before the first that does not (KV_OK or an error);
** status tells whether the end was the inputs' end or an error reading them. */
typedef struct kv_db_fill {
  bool (*next_row)(void *ctx, const uint8_t **row, uint32_t *len);
  int (*fill)(void *ctx, kv_sf_writer *w, const uint8_t *end, uint32_t end_len);
  int (*status)(void *ctx); /* once next_row says none are left: KV_OK or the inputs' error */
} kv_db_fill;
/* Write what fill hands out as store files of f (REQUIRES: mu NOT held; the background
** thread, or the bulk load's commit), one per region that gets cells (the
** regions f holds when it starts), each written whole and synced, its folder synced, and
** opened: *outs (malloc'ed, kv_db_sfs_free) gets *n_outs handles in key order (0 when there
** were no cells). On failure nothing is left on disk and *outs is NULL. */
int kv_db_write_sfs(kv_db *db, kv_fam *f, const kv_db_fill *fill, void *ctx, kv_sfh ***outs,
                    uint32_t *n_outs);
void kv_db_sfs_free(kv_sfh **outs, uint32_t n);
/* kv_db_write_sfs of every cell of `it` (from seek_first; kv/db/db_flush.c). */
int kv_db_write_iter(kv_db *db, kv_fam *f, kv_iter *it, kv_sfh ***outs, uint32_t *n_outs);
/* Store file h of f (not yet named in the MANIFEST: the bulk load's) written again as one
** file per region it holds rows of, through kv_db_write_iter, each with h's sequence
** range: *outs / *n_outs as kv_db_write_sfs; *n_outs 0 when h lies within one region (keep
** it). REQUIRES: mu NOT held. */
int kv_db_cut_file(kv_db *db, kv_fam *f, kv_sfh *h, kv_sfh ***outs, uint32_t *n_outs);
/* One block of a family's store files: its first row and its bytes on disk. */
typedef struct kv_block_key {
  uint8_t *row;   /* the first row key (into one buffer of them all: kv_block_keys_free) */
  uint32_t len;   /* its length */
  uint64_t bytes; /* the block's bytes on disk */
} kv_block_key;
/* Every block of family_id's store files (kv_family_blocks), sorted by first row: *out (*n
** entries) freed with kv_block_keys_free(*out, *n) (exactly that n: the key bytes are kept
** after the last entry). What the region split (kv/db/db_split.c) and, when files overlap,
** the local backend's split points (kv_block_cut_points) cut at. KV_OK, KV_ERR_NOMEM, or
** kv_family_blocks' error (then *out is NULL). Takes mu itself: REQUIRES mu not held. */
int kv_block_keys(kv_db *db, uint32_t family_id, kv_block_key **out, size_t *n);
void kv_block_keys_free(kv_block_key *b, size_t n); /* NULL is a no-op */
/* Up to max_chunks - 1 keys cutting family_id's store-file blocks into runs of about equal
** bytes on disk, ascending, each the first row of a block and above the first block's (the
** local backend's split points): the cut before the first block whose middle reaches the
** end of the next run. Files that do not overlap (a compacted family) are cut by a binary
** search of their block indexes; otherwise every block is listed (kv_block_keys). KV_OK,
** KV_ERR_NOTFOUND, KV_ERR_NOMEM; *listed (may be NULL) says whether the blocks were listed.
** REQUIRES mu not held. */
int kv_block_cut_points(kv_db *db, uint32_t family_id, uint32_t max_chunks,
                        void (*each)(void *ctx, const uint8_t *key, uint32_t len), void *ctx,
                        bool *listed);

/* The regions of table t (NULL when it has one, or out of memory: check t->n_bounds). */
kv_regions *kv_regions_new(const kv_table_meta *t);
void kv_regions_ref(kv_regions *r);       /* NULL is a no-op */
void kv_regions_unref(kv_regions *r);     /* NULL is a no-op */
/* The region holding row (0 for NULL r). */
uint32_t kv_regions_find(const kv_regions *r, const uint8_t *row, uint32_t len);
/* Give every family of table_id the regions db->ver records for it. REQUIRES: mu held (or
** kv_open). KV_OK or KV_ERR_NOMEM. */
int kv_db_install_regions(kv_db *db, uint32_t table_id);
/* Split keys (ascending, distinct, 1..KV_MAX_ROW_KEY bytes: else KV_ERR_INVALID or
** KV_ERR_TOOBIG naming the key) in the SET_REGIONS encoding; *out malloc'ed (NULL for n 0). */
int kv_regions_encode(const uint8_t *const *keys, const uint32_t *lens, uint32_t n,
                      uint8_t **out, uint32_t *out_len);
/* "table T region i of n [start, end)" for region i of f's table (r: f's regions).
** REQUIRES: mu held, or the background thread outside a compaction's merge (a bulk load's
** commit may change db->ver under mu then: kv_db_bg_pause_install). */
void kv_db_region_name(kv_db *db, const kv_fam *f, const kv_regions *r, uint32_t i, char *buf,
                       size_t cap);
/* After a flush or a compaction of f: split the first region of f's table whose blocks of
** f hold more than kv_options.region_split_size bytes, at its middle key (one SET_REGIONS
** record), and ask a minor compaction of each family with a file spanning the new boundary
** (kv/db/db_split.c). KV_OK when none is due. REQUIRES: the background thread, mu NOT held. */
int kv_db_maybe_split(kv_db *db, kv_fam *f);
/* rc as it is, except KV_ERR_CORRUPT from reading one of files[0, n) of family family_id
** (the file's path is in kv_errmsg()): the message then also names the region the file
** lies in (by its first row), "... (store file P lies in table T region i of n [a, b))".
** REQUIRES: mu NOT held. */
int kv_db_corrupt_region(kv_db *db, uint32_t family_id, kv_sfh *const *files, uint32_t n,
                         int rc);
/* The live families of `table` (NULL = all) in a malloc'ed array (caller frees).
** KV_ERR_NOTFOUND for an unknown table. REQUIRES: mu held. */
int kv_db_table_families(kv_db *db, const char *table, kv_fam ***out, uint32_t *n);
/* How kv_db_compact_family picks its inputs. */
enum kv_cm_mode {
  KV_CM_AUTO,   /* the files kv_db_minor_pick names (the automatic minor compaction) */
  KV_CM_MINOR,  /* every file, every cell kept (kv_compact minor) */
  KV_CM_MAJOR   /* every file, only what a read sees kept (kv_compact major) */
};
/* The automatic minor compaction's inputs: the index of the oldest of the newest files it
** merges (they run to f->n_files), or f->n_files when it has nothing to do. Size-tiered,
** as HBase's ratio-based selection: with at least `trigger` files, the oldest file whose
** size is at most KV_CM_RATIO times the sum of the sizes of the files newer than it, and
** every newer one; a large old file is left alone until the newer ones add up to it, so a
** long load rewrites each cell about log(n) times instead of once per compaction. With
** 2 * trigger files and no such file, the newest `trigger` files. A family split into
** regions counts per region instead (a merge writes one file per region): the newest files
** back to where one region has `trigger` of them (kv/db/compact.c region_pick). REQUIRES:
** mu held. */
uint32_t kv_db_minor_pick(const kv_fam *f, uint32_t trigger);
#define KV_CM_RATIO 1.2
/* Merge store files of f into one (which: mode); major drops what no read can see any more
** (the caller flushed the frozen memstores first). REQUIRES: the background thread, mu NOT
** held. */
int kv_db_compact_family(kv_db *db, kv_fam *f, enum kv_cm_mode mode);

/* ---- visibility (kv/db/db_vis.c): which cells of one (row, family) a read sees ---- */
typedef struct kv_vis_del {
  int64_t ts;                /* tombstone timestamp */
  uint64_t seq;              /* tombstone sequence number */
} kv_vis_del;

typedef struct kv_vis {
  /* parameters, set by the caller */
  uint64_t snapshot;         /* cells with seq above are ignored */
  int versions;              /* the family's VERSIONS */
  int64_t ttl_ms;            /* TTL in ms; 0 = forever */
  int64_t now_ms;            /* the clock for TTL */
  int64_t ts_min, ts_max;    /* time range [ts_min, ts_max) */
  int max_versions;          /* versions handed out per column (after VERSIONS) */
  int64_t as_of;             /* cells (puts and tombstones) with ts above it do not exist
                                (kv_scan_options.as_of; INT64_MAX: none) */
  /* state */
  kv_vis_del *fam_dels;      /* DeleteFamily tombstones of the row */
  uint32_t n_fam_dels, cap_fam_dels; /* used / allocated */
  kv_vis_del *col_dels;      /* DeleteColumn tombstones of the column */
  uint32_t n_col_dels, cap_col_dels; /* used / allocated */
  kv_vis_del *ver_dels;      /* DeleteVersion tombstones of the column */
  uint32_t n_ver_dels, cap_ver_dels; /* used / allocated */
  uint8_t *qual;             /* current column's qualifier (copy) */
  uint32_t qual_len, qual_cap; /* its length / allocated bytes */
  bool have_qual;            /* a column is current */
  bool have_last_ts;         /* a version of the column was counted */
  int64_t last_ts;           /* its timestamp (equal-ts older puts are replaced) */
  int rank;                  /* versions of the column counted (VERSIONS rule) */
  int handed;                /* versions of the column kept (max_versions rule) */
  int err;                   /* KV_ERR_NOMEM if growing a buffer failed */
} kv_vis;

/* Initialize the parameters to "see everything current" and empty state. */
void kv_vis_init(kv_vis *v);
void kv_vis_free(kv_vis *v);
/* Start a new (row, family). */
void kv_vis_row_start(kv_vis *v);
/* Feed the next cell of the (row, family) in kv_cell_cmp order. Returns true when it is a
** put the read hands out. Tombstones are remembered and return false. */
bool kv_vis_cell(kv_vis *v, const kv_cell *c);

#endif /* ROWAN_KV_DB_IMPL_H */
