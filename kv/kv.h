/*
** kv/kv.h: the public interface of Rowan's storage layer.
**
** kv/ is an append-only, column-family-partitioned key-value store in the style of HBase:
** a store holds tables, a table holds column families, a family holds cells
** (row key, qualifier, timestamp, type, value) kept in row key order. Writes go to one
** write-ahead log (WAL) and to a memstore per family; full memstores are flushed to
** immutable store files; compaction merges store files. Reads are scans over one or many
** key ranges that see a consistent snapshot.
**
** kv/ deals only in bytes. It knows nothing of SQL types, the catalog or plans. This header
** is deliberately narrow: a second implementation of it may one day put Rowan on a real
** HBase cluster. On-disk formats are in docs/FORMAT.md.
**
** Conventions (as LevelDB's c.h): handles are opaque; every function that can fail returns
** an int status, KV_OK (0) on success; on failure the message of the error is available
** from kv_errmsg() in the same thread until the next failing kv call in that thread.
** No function accepts a NULL handle except where stated; a NULL handle gives KV_MISUSE.
**
** Thread safety: a kv_db may be used from several threads at once (writers are serialized
** and share WAL syncs through group commit; scans run concurrently with writes, with
** kv_refresh of a read-only store, and with kv_backup). A kv_batch and a kv_scan belong to
** one thread at a time. kv_close must not run concurrently with any other call on the same
** kv_db or on its scans.
**
** Other views of a store's files: any number of read-only opens (kv_options.read_only) run
** beside the one writable open, in other processes or this one, taking no lock and writing
** nothing; each sees the store as of its open until kv_refresh. kv_backup copies a live
** store consistently. A copy made file by file while the store is written, whose log ends
** before what its MANIFEST and store files show, is refused at open (KV_ERR_CORRUPT).
**
** Failures that refuse writes: when a WAL write or sync fails, or a flush or compaction
** fails, the store enters an error state: every later write (kv_commit, DDL, kv_flush,
** kv_compact) fails with that first error (message "the store refuses writes after an
** earlier error: ...") until the store is closed and reopened. Reads keep working.
**
** Background work: each writable store runs one background thread that flushes memstores
** and compacts store files. A commit that brings a family's memstore to
** memstore_flush_size freezes it (a new memstore and a new WAL segment) and returns; the
** thread writes it to a store file. Writers wait only under back-pressure: when the active
** and frozen memstores together hold more than memstore_limit bytes, the committing writer
** freezes the largest and waits for flushes (and the writers queued behind it wait too).
** Readers never wait for background work: a scan reads frozen memstores until their store
** file is installed, and input files of a compaction until it is done. A flush or
** compaction that fails in the background puts the store in the error state above, so the
** failure is reported by the next write (or kv_flush / kv_compact), not by the commit that
** froze the memstore; committed data stays readable and in the WAL. kv_flush and
** kv_compact hand their work to the thread and wait for it; kv_close flushes the memstores
** (unless kv_options.keep_log_on_close) and waits for the job in progress (memstores not
** flushed are replayed from the WAL at the next open).
**
** WAL size bound (kv_options.wal_limit, L; HBase's maxlogs, RocksDB's max_total_wal_size):
** a WAL segment can be deleted only once every family has flushed the ops it holds, so a
** family that rarely gets writes would otherwise keep every segment since its first
** unflushed write. The current segment is rolled (a new one started) once it holds L / 4
** bytes. When the live segments hold more than L bytes, the commit freezes the families
** whose memstore holds ops in the oldest segment (those only) and returns; their flush lets
** the segment be deleted. A commit that finds more than L + L / 4 bytes waits for those
** flushes (and its queued writers with it), as under memstore back-pressure. Guarantee:
** before the commits of a group return, the live WAL segments hold at most L + L / 4 bytes,
** unless the store is in its error state; at any moment (so after a crash) at most that
** plus the one commit group being written (up to 1 MiB of batches, or a single larger
** batch); kv_open replays no more than that (kv_wal_get_stats).
*/
#ifndef ROWAN_KV_H
#define ROWAN_KV_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Status codes ------------------------------------------------------------------- */
/* ORDER KV_STATUS: kv_status_name() in kv/util/status.c has one entry per code, in this order. */
enum kv_status {
  KV_OK = 0,
  KV_ERR_IO = 1,        /* a file operation failed (the message names file and errno text) */
  KV_ERR_NOSPC = 2,     /* no space left on the device */
  KV_ERR_CORRUPT = 3,   /* damaged data: the message names the file and the byte offset */
  KV_ERR_LOCKED = 4,    /* another process holds the store's LOCK file: "database is locked" */
  KV_ERR_NOTFOUND = 5,  /* no such table, family, store directory or row */
  KV_ERR_EXISTS = 6,    /* a table of that name already exists */
  KV_ERR_INVALID = 7,   /* a bad argument: empty or duplicate family name, bad option value */
  KV_ERR_TOOBIG = 8,    /* a row key, qualifier, value or batch over the documented maximum */
  KV_ERR_NOMEM = 9,     /* an allocation failed */
  KV_MISUSE = 10,       /* API misuse: NULL handle, use after close */
  KV_ERR_READONLY = 11, /* a write to a store opened read-only */
  KV_ERR_INTERRUPTED = 12, /* a scan stopped by its caller's interrupt flag */
  KV_STATUS_COUNT
};

/* Name of a status code ("KV_ERR_CORRUPT"); never NULL. */
const char *kv_status_name(int status);
/* Message of the last failing kv call in this thread ("" if none). Owned by kv; valid until
** the next kv call in this thread. */
const char *kv_errmsg(void);

/* ---- Limits (documented maxima; larger inputs give KV_ERR_TOOBIG) ------------------- */
#define KV_MAX_ROW_KEY 32767u        /* bytes in a row key (HBase: Short.MAX_VALUE) */
#define KV_MAX_QUALIFIER 65535u      /* bytes in a column qualifier */
#define KV_MAX_VALUE (64u << 20)     /* bytes in one cell value: 64 MiB */
#define KV_MAX_BATCH (256u << 20)    /* encoded bytes in one write batch: 256 MiB */
#define KV_MAX_NAME 255u             /* bytes in a table or family name */
#define KV_MAX_FAMILIES 64u          /* column families per table */

/* ---- Cells ------------------------------------------------------------------------- */
/* Cell types (HBase's KeyValue.Type). A tombstone masks only cells with a lower sequence
** number: it never masks a put written after it, even at an equal timestamp.
**
** What a read sees of one column (row, family, qualifier), newest timestamp first:
**   1. cells with a sequence number above the read's snapshot do not exist for it, nor
**      cells (puts and tombstones) with a timestamp above its as-of time (kv_scan_options);
**   2. a put is masked by a tombstone with a higher sequence number that covers it
**      (DELETE_FAMILY / DELETE_COLUMN: ts <= T; DELETE_VERSION: ts == T);
**   3. two puts at the same timestamp are one version: the later write replaces the earlier;
**   4. versions beyond the family's VERSIONS are hidden (counting the versions left by 2-3);
**   5. puts past the family's TTL are hidden (expired when now - ts >= TTL, now = the env's
**      clock when the scan opens);
**   6. then the scan's time range, then its max_versions (counting what 1-5 left).
** Major compaction rewrites a family to exactly what such a read (at the latest sequence
** number, max_versions = VERSIONS, all time) sees, so nothing a read sees changes; but what
** it dropped is gone for good: a tombstone written after it cannot uncover a version that
** VERSIONS had hidden before it (HBase behaves the same). Minor compaction drops nothing. */
enum kv_cell_type {
  KV_PUT = 0,
  KV_DELETE_VERSION = 1, /* masks the one version of (row, family, qualifier) at exactly ts */
  KV_DELETE_COLUMN = 2,  /* masks every version of (row, family, qualifier) with ts <= ts */
  KV_DELETE_FAMILY = 3   /* masks every cell of (row, family) with ts <= ts; qualifier empty */
};

/* Timestamp meaning "the wall clock at commit" (milliseconds since the Unix epoch, from the
** env's now_ms; all ops of one commit group get the same value). Within one open store the
** commit time never goes back: if the clock steps back, commits keep the last commit time
** until it catches up (a later write at an equal timestamp wins by its sequence number).
** Other timestamps must be >= 0. */
#define KV_TS_NOW INT64_MIN

/* Unsynced durability choice for the WAL. */
enum kv_sync_mode {
  KV_SYNC_FULL = 0,   /* fdatasync before a commit returns (group commit shares it); default */
  KV_SYNC_NORMAL = 1, /* write(2) before a commit returns; fdatasync at WAL rotation and flush:
                         survives a process crash, not a power cut */
  KV_SYNC_OFF = 2     /* buffered in the process; written when the buffer fills, at flush
                         and at close: a process crash may lose the latest commits */
};

/* ---- Store ------------------------------------------------------------------------- */
typedef struct kv_db kv_db;
typedef struct kv_env kv_env; /* the file-system seam, kv/env/env.h */

typedef struct kv_options {
  kv_env *env;                /* file system; NULL = POSIX (kv_env_posix()) */
  bool create_if_missing;     /* create the directory and an empty store if absent */
  bool read_only;             /* a reader beside the writer: no writes, no flush or
                                 compaction, no LOCK taken, nothing written (see kv_open
                                 and kv_refresh) */
  int sync_mode;              /* enum kv_sync_mode */
  size_t memstore_flush_size; /* bytes in one family's memstore before it is flushed;
                                 0 = default 64 MiB */
  size_t memstore_limit;      /* bytes across all active and frozen memstores; a commit
                                 past it freezes the largest and waits for the background
                                 flushes (back-pressure); 0 = default 512 MiB */
  size_t block_cache_size;    /* bytes of decoded blocks in the block cache shared by all
                                 store files; 0 = default 64 MiB; KV_BLOCK_CACHE_OFF = no
                                 cache (every block read is a pread and a decode). The
                                 columnar scan's column cache (kv/colscan/colscan.h) takes
                                 up to a quarter of it; the block cache has the rest and
                                 what the column cache leaves unused */
  int block_cache_form;       /* enum kv_cache_form: how the block cache keeps a block with
                                 decimal-scaled value groups (docs/KV_READS.md "Narrow
                                 blocks in the cache") */
  int compaction_trigger;     /* store files in a family from which the automatic minor
                                 compaction looks for work (size-tiered: it merges the
                                 newest files once they add up to the next older one, see
                                 docs/KV.md "Compaction"); 0 = default 4 */
  size_t wal_limit;           /* bytes across the live WAL segments (what kv_open would
                                 replay); past it, the families whose unflushed ops hold the
                                 oldest segment are flushed so it can be deleted (see "WAL
                                 size bound" below); 0 = default: twice memstore_flush_size,
                                 at least 128 MiB; values below 64 KiB count as 64 KiB */
  bool keep_log_on_close;     /* false (default): kv_close first flushes every non-empty
                                 memstore (HBase's region close), so the next open replays
                                 next to nothing; true: kv_close leaves unflushed writes in
                                 the WAL for the next open to replay (RocksDB's close with a
                                 WAL; the recovery tests use it) */
  int64_t max_lookback_ms;    /* look-back window of major compaction (Phoenix's
                                 phoenix.max.lookback.age.seconds), in ms: a major
                                 compaction at time `now` keeps every cell (puts, tombstones,
                                 versions beyond VERSIONS) with a timestamp above
                                 now - max_lookback_ms, and below it what a read as of
                                 that cutoff sees, so reads as of any time inside the window
                                 (kv_scan_options.as_of) stay exact; see kv_lookback_horizon.
                                 0 (default) = none: major compaction drops at once;
                                 negative: KV_ERR_INVALID */
  uint64_t region_split_size; /* bytes of one family's store files in one region past which
                                 the background thread splits the region in two at a middle
                                 key (HBase's hbase.hregion.max.filesize;
                                 docs/KV_REGIONS.md); 0 (default) = never: a table keeps the regions
                                 kv_create_table_split gave it */
  size_t index_memory;        /* bytes the open store files may hold of whole block indexes
                                 (decoded entries, first row keys, fences: about 100 bytes a
                                 block); a file opened past it keeps only a page table (0.7
                                 bytes a block) and reads its index a page of 64 entries at a
                                 time through the block cache, as RocksDB's partitioned
                                 index with cache_index_and_filter_blocks and HBase's
                                 multi-level block index do (docs/KV.md "Store file
                                 readers"). 0 = default 64 MiB; SIZE_MAX: never paged */
} kv_options;

/* kv_options.index_memory's default. */
#define KV_INDEX_MEMORY_DEFAULT ((size_t)64 << 20)

/* kv_options.block_cache_form. A block with decimal-scaled value groups (docs/FORMAT.md)
** is kept wide (its values rebuilt to 8 bytes, read in place) or narrow (its values as
** their 1-4 byte offsets, about half the bytes for sensor readings, rebuilt each time a
** reader takes the block from the cache; a block read often is promoted back to wide).
** AUTO, the default: narrow once the raw block bytes of the open store files that may hold
** such groups (format 3 and later) pass three fifths of the cache's size (wide blocks cost
** about 1.9 times their raw bytes, so past that they no longer fit); WIDE and NARROW force
** either. Another value: kv_open fails with KV_ERR_INVALID. */
enum kv_cache_form { KV_CACHE_FORM_AUTO = 0, KV_CACHE_FORM_WIDE = 1, KV_CACHE_FORM_NARROW = 2 };

/* kv_options.block_cache_size value that turns the block cache off. */
#define KV_BLOCK_CACHE_OFF ((size_t)1)

/* The oldest time (ms since the epoch) from which reads as of a time (kv_scan_options.as_of)
** are exact: now - max_lookback_ms, or later when a major compaction of this open cut at a
** later time (never earlier). With no window it is now: any major compaction may have
** dropped what a read of the past needs. What an earlier open with a smaller window
** compacted away cannot be known here: keep the window of a store constant. */
int64_t kv_lookback_horizon(kv_db *db);

/* Fill *opts with the defaults listed above. */
void kv_options_init(kv_options *opts);

/* Open the store in directory `path` (created if missing and opts->create_if_missing).
** Takes the LOCK file: a second writable opener, in this or another process, gets
** KV_ERR_LOCKED with "database is locked". Replays the MANIFEST and then the WAL from the
** last flushed sequence number; a torn final WAL record is dropped; other damage gives
** KV_ERR_CORRUPT. Store files the MANIFEST does not name (left by a crash in a flush or
** compaction) are deleted. A MANIFEST of format version 1, 2 or 3 is rewritten in version 4.
** The log must reach the position the MANIFEST records for its flushes and bulk loads
** (LOG_POSITION): a log that ends before it (copied before the MANIFEST and the store
** files) is KV_ERR_CORRUPT naming the MANIFEST, the segment and the store files newer than
** the log, never a store showing part of a transaction (docs/KV_VIEWS.md "The log-behind-
** MANIFEST check").
** With opts->read_only the open is a reader beside a writer (RocksDB's secondary instance,
** SQLite's WAL reader; kv/db/db_follow.c): no LOCK is taken and nothing is written, so it
** works while another process (or another handle of this one) holds the store open for
** writing, and without write permission on the store's directory and files. It sees the
** store as of its open: the MANIFEST, the store files it names, and the WAL replayed into
** its own memstores; a record cut short at the end of the newest segment is taken as not
** yet written (neither dropped from the file nor reported). Only what the writer has
** written to its files is seen: with KV_SYNC_OFF, commits still in the writer's buffer are
** not. kv_refresh catches up later. When the writer deletes a store file or a WAL segment
** between the reader's reading of the MANIFEST and its open of the file, the reader reads
** the MANIFEST again (up to 40 times, for about a second); once open, files stay readable.
** opts NULL = the defaults of kv_options_init.
** Errors: KV_ERR_NOTFOUND (no directory or no MANIFEST, and not create_if_missing, or
** read_only), KV_ERR_LOCKED, KV_ERR_CORRUPT, KV_ERR_IO, KV_ERR_INVALID (empty path, bad
** sync_mode, negative compaction_trigger), KV_MISUSE (out NULL).
** On success *out is the handle (free with kv_close); on failure *out is NULL. */
int kv_open(const char *path, const kv_options *opts, kv_db **out);

/* Catch a read-only store up with its writer (RocksDB's TryCatchUpWithPrimary): read the
** MANIFEST again, open the store files added since (sharing those still named), and read
** the WAL on from where the last catch-up stopped. Afterwards new scans see every commit
** the writer had written to its log, whole (the commits of a family created, or a bulk
** load committed, after the MANIFEST was read wait for the next refresh, and so does
** everything after them). Scans already open keep reading what they opened on; families
** of dropped tables become unknown; pointers from kv_table_name become invalid (as after
** DDL). On a writable store: KV_OK, nothing to do. Not concurrently with kv_close.
** Errors: KV_MISUSE (db NULL, or a snapshot is held: the writer's compactions do not keep
** what a reader's snapshot sees), KV_ERR_CORRUPT, KV_ERR_IO, KV_ERR_NOMEM; then the view
** stays as it was. */
int kv_refresh(kv_db *db);

/* Close the store: flush every non-empty memstore to store files (kv_flush; skipped with
** kv_options.keep_log_on_close, on a read-only store and in the error state: the WAL keeps
** them for the next open), wait for background work, sync the WAL, release the LOCK, free
** the handle. NULL is a no-op. Returns the first error met (a failed flush: the rows stay
** in the WAL); the handle is freed whatever the result.
** Scans still open are torn down, not waited for: their files and memstores are released
** at once, kv_scan_next on them returns KV_MISUSE ("the store was closed while the scan was
** open"), kv_scan_get_metrics still works, and each must still be freed with kv_scan_close
** (which then touches nothing of the closed store). */
int kv_close(kv_db *db);

/* ---- Tables and families ----------------------------------------------------------- */
typedef struct kv_family_options {
  const char *name;   /* 1..KV_MAX_NAME bytes, unique within the table */
  int max_versions;   /* VERSIONS: versions kept per column; >= 1; 0 = default 1 */
  int64_t ttl_sec;    /* TTL in seconds, measured against the wall clock; 0 = forever */
  int compression;    /* KV_COMPRESSION_LZ4 (default) or KV_COMPRESSION_NONE */
  uint32_t block_size;/* BLOCKSIZE: target uncompressed bytes per block; 0 = the default,
                         KV_DEFAULT_BLOCK_SIZE */
} kv_family_options;

/* A family's BLOCKSIZE when none is given: 8 KiB (HBase's is 64 KiB, RocksDB's 4 KiB).
** Measured on 10x the archive, past a 64 MiB block cache, against 16 KiB blocks (blocks
** ending at rows' ends): point lookups about 16% less CPU, latest 100 and one-day ranges
** the same, the columnar full scan about 1.45x the CPU, the store 12% larger
** (docs/KV_READS.md, "Block size"). */
#define KV_DEFAULT_BLOCK_SIZE 8192u

enum kv_compression { KV_COMPRESSION_LZ4 = 0, KV_COMPRESSION_NONE = 1 };

/* Create table `name` with `n_families` families (1..KV_MAX_FAMILIES). Recorded in the
** MANIFEST durably before returning. Errors: KV_ERR_EXISTS, KV_ERR_INVALID (empty or
** duplicate family name, more than KV_MAX_FAMILIES families, VERSIONS < 0, TTL < 0,
** unknown compression, BLOCKSIZE over 64 MiB, empty table name), KV_ERR_TOOBIG (table or
** family name over KV_MAX_NAME bytes), KV_ERR_READONLY, KV_MISUSE (db NULL), or the error
** state. */
int kv_create_table(kv_db *db, const char *name, const kv_family_options *families,
                    int n_families);

/* kv_create_table with the table split into regions (docs/KV_REGIONS.md; HBase's
** createTable with split keys, Phoenix's SPLIT ON): split_keys[0..n_splits) (lengths in
** split_lens) are row keys, strictly ascending, 1..KV_MAX_ROW_KEY bytes each; region 0
** holds the rows below the first, region i the rows from key i-1 (inclusive) to key i
** (exclusive), the last region the rows from the last key on. Every store file a flush,
** a compaction or a bulk load writes lies within one region. The boundaries are in the
** same MANIFEST record as the table. n_splits 0 is kv_create_table. Errors: as
** kv_create_table, and KV_ERR_INVALID (an empty key, or one not above the one before it:
** the message names its index), KV_ERR_TOOBIG (a key over KV_MAX_ROW_KEY bytes). */
int kv_create_table_split(kv_db *db, const char *name, const kv_family_options *families,
                          int n_families, const uint8_t *const *split_keys,
                          const uint32_t *split_lens, uint32_t n_splits);

/* The regions of table `table` / of the table of family `family_id`: *n_regions (may be
** NULL) gets their count (1 for a table never split), and each (may be NULL) is called once
** per boundary, in ascending order, with i (0..count-2) and the first row key of region
** i+1 (valid during the call). Errors: KV_ERR_NOTFOUND (no such table or family),
** KV_MISUSE (NULL db or table). A read-only open beside a writer reports one region. */
int kv_table_regions(kv_db *db, const char *table, uint32_t *n_regions,
                     void (*each)(void *ctx, uint32_t i, const uint8_t *key, uint32_t len),
                     void *ctx);
int kv_family_regions(kv_db *db, uint32_t family_id, uint32_t *n_regions,
                      void (*each)(void *ctx, uint32_t i, const uint8_t *key, uint32_t len),
                      void *ctx);

/* Change the families of table `name` (HBase's modifyColumnFamily and addColumnFamily):
** each entry of families[0..n_families) names a family; one the table has takes the
** options given (as in kv_create_table: VERSIONS 0 = 1, BLOCKSIZE 0 = the default), one it
** has not is added, with a new family id and no cells. Families not named keep their
** options. The new VERSIONS and TTL are read rules (above): scans opened afterwards follow
** them, at once; COMPRESSION and BLOCKSIZE apply to the store files written afterwards
** (flushes, compactions); a major compaction rewrites the family under all of them. One
** synced MANIFEST record (ALTER_TABLE) before it takes effect; the table's TABLEINFO is
** written again. Errors: KV_ERR_NOTFOUND (no such table), KV_ERR_INVALID (as
** kv_create_table; more than KV_MAX_FAMILIES families in all), KV_ERR_TOOBIG,
** KV_ERR_READONLY, KV_MISUSE (db NULL), or the error state; then nothing changed. */
int kv_alter_table(kv_db *db, const char *name, const kv_family_options *families,
                   int n_families);

/* The qualifiers whose cells a major compaction of family `family_id` drops, whatever their
** versions (HBase leaves this to a compaction filter; Rowan's catalog names the qualifiers
** of dropped columns, which no read asks for any more): quals[i][0..lens[i]) for i < n
** replace the family's previous list (n 0 clears it). Minor compactions and reads are not
** affected. Kept in memory only: the caller gives the list again after each kv_open.
** Compactions already running keep the list they started with. Errors: KV_ERR_NOTFOUND
** (unknown family id), KV_ERR_NOMEM (the old list stays), KV_MISUSE (NULL arguments with
** n > 0). */
int kv_family_set_dropped_qualifiers(kv_db *db, uint32_t family_id, const uint8_t *const *quals,
                                     const uint32_t *lens, uint32_t n);

/* Drop table `name` and all its data (files are deleted once no scan uses them; scans
** already open keep reading what they saw). Its family ids become unknown: later commits
** naming them fail with KV_ERR_NOTFOUND. Errors: KV_ERR_NOTFOUND, KV_ERR_READONLY, the
** error state. */
int kv_drop_table(kv_db *db, const char *name);

/* Look up the store-wide id of family `family` of table `table`, used in batches and scans.
** Ids are never reused. Errors: KV_ERR_NOTFOUND naming the table or family. */
int kv_family_id(kv_db *db, const char *table, const char *family, uint32_t *id_out);

/* The family ids of table `table`, in the order the table was created with, into
** ids[0..cap) (*n gets the count, which may pass cap: then only cap are written); with
** kv_family_info they give each family's name and options. Errors: KV_ERR_NOTFOUND (no such
** table), KV_MISUSE (NULL argument). */
int kv_table_families(kv_db *db, const char *table, uint32_t *ids, uint32_t cap, uint32_t *n);

/* Number of tables (0 for a NULL db), and the name of the i-th (0-based, in name order;
** NULL when i is out of range); the pointer is valid until the next DDL call. */
int kv_table_count(kv_db *db);
const char *kv_table_name(kv_db *db, int i);

/* The options a family was created with, defaults filled in (VERSIONS 1, BLOCKSIZE
** KV_DEFAULT_BLOCK_SIZE); *out's name points into db and is valid until the table is
** dropped or the store closed. Errors: KV_ERR_NOTFOUND (unknown or dropped family id). */
int kv_family_info(kv_db *db, uint32_t family_id, kv_family_options *out);

/* ---- Writes ------------------------------------------------------------------------ */
typedef struct kv_batch kv_batch;

/* Create an empty write batch. Free with kv_batch_free. Returns NULL only when out of
** memory. */
kv_batch *kv_batch_new(void);
void kv_batch_free(kv_batch *b);
void kv_batch_clear(kv_batch *b);
size_t kv_batch_count(const kv_batch *b);      /* operations in the batch */
size_t kv_batch_byte_size(const kv_batch *b);  /* encoded size */
size_t kv_batch_capacity(const kv_batch *b);   /* bytes allocated for the encoding (a
                                                  cleared batch keeps them for reuse) */

/* A point in a batch's history to roll back to: a statement inside a transaction marks the
** transaction's batch before it adds its operations and rolls back to the mark if it fails,
** so the transaction goes on without the failed statement's part (SQLite's statement
** rollback inside a transaction). */
typedef struct kv_batch_mark {
  size_t len;    /* encoded bytes at the mark (internal) */
  size_t count;  /* operations at the mark */
} kv_batch_mark;
/* The batch's current point (an empty batch for NULL). */
kv_batch_mark kv_batch_get_mark(const kv_batch *b);
/* Drop every operation added after mark `m` was taken. REQUIRES: m was taken from this batch
** and the batch was not cleared or rolled back past m since. Nothing is freed. */
void kv_batch_rollback_to(kv_batch *b, kv_batch_mark m);
/* A new batch holding the operations of b added before mark `upto` (kv_batch_get_mark(b) for
** all of them), in order: a reader's fixed view of a batch that goes on growing or is freed
** (exec: an index scan's lookups inside a transaction). NULL when out of memory. REQUIRES:
** as kv_batch_rollback_to. */
kv_batch *kv_batch_copy(const kv_batch *b, kv_batch_mark upto);

/* Add a put (type KV_PUT) or a tombstone (other types; value ignored) to the batch. Each
** operation of a batch gets its own sequence number, in the order added, so a later
** operation in the same batch wins over an earlier one. ts is milliseconds since the Unix
** epoch (>= 0) or KV_TS_NOW. Errors: KV_ERR_TOOBIG (row key over KV_MAX_ROW_KEY, qualifier
** over KV_MAX_QUALIFIER, value over KV_MAX_VALUE, batch over KV_MAX_BATCH encoded bytes),
** KV_ERR_INVALID (empty row key, bad type, qualifier given with KV_DELETE_FAMILY, negative
** ts), KV_ERR_NOMEM, KV_MISUSE (b NULL). A refused op leaves the batch unchanged. The
** family id is checked at commit. */
int kv_batch_put(kv_batch *b, uint32_t family_id, const void *row, size_t row_len,
                 const void *qual, size_t qual_len, int64_t ts, const void *value,
                 size_t value_len);
int kv_batch_delete(kv_batch *b, uint32_t family_id, int type, const void *row,
                    size_t row_len, const void *qual, size_t qual_len, int64_t ts);

/* Commit the batch atomically: one checksummed WAL record, then the memstores. After a
** crash it is there whole or not at all. With KV_SYNC_FULL it is on disk when this returns.
** Concurrent commits share one fdatasync (group commit). If seq_out is not NULL it gets the
** sequence number of the batch's last operation. The batch is left unchanged.
** An empty batch commits nothing and returns KV_OK (seq_out gets the last sequence number).
** Errors: KV_ERR_NOTFOUND (unknown or dropped family: nothing of the batch is applied),
** KV_ERR_IO / KV_ERR_NOSPC (the WAL write or sync failed: the batch is not applied, though
** after a reopen it may be found whole in the WAL; the store refuses writes until
** reopened), KV_ERR_READONLY, KV_ERR_TOOBIG, KV_MISUSE (NULL argument). */
int kv_commit(kv_db *db, const kv_batch *b, uint64_t *seq_out);

/* ---- Reads ------------------------------------------------------------------------- */
/* A key range. A NULL start means from the first row; a NULL end means to the last. A range
** whose start is not below its end is empty (valid, reads nothing). */
typedef struct kv_range {
  const uint8_t *start; size_t start_len; bool start_inclusive;
  const uint8_t *end;   size_t end_len;   bool end_inclusive;
} kv_range;

/* One cell handed to a reader. Pointers are valid until the next kv_scan_next call. */
typedef struct kv_cell_view {
  uint32_t family_id;
  const uint8_t *qual; uint32_t qual_len;
  int64_t ts;
  const uint8_t *value; uint32_t value_len;
} kv_cell_view;

/* One assembled row: its key and its visible put cells, ordered by family (in the order the
** scan listed them), qualifier ascending, timestamp descending. Tombstones and masked,
** expired or excess versions are never handed out. */
typedef struct kv_row {
  const uint8_t *key; uint32_t key_len;
  const kv_cell_view *cells; uint32_t n_cells;
} kv_row;

/* One family's cells of a row as values by position in the family's qualifier projection
** (kv_scan_options.value_vectors): bit i of `present` set = the row has a visible cell of
** projected qualifier i, whose value is values[i][0..value_lens[i]) (entries whose bit is
** clear hold nothing meaningful). Valid as long as the row's views are; read them with
** kv_scan_row_vectors. */
typedef struct kv_value_vector {
  uint32_t family_id;              /* the family */
  uint64_t present;                /* bit i: projected qualifier i has a value */
  const uint8_t *const *values;    /* per projected qualifier: its value's bytes */
  const uint32_t *value_lens;      /* per projected qualifier: its value's length */
} kv_value_vector;

/* Filter run inside the scan on each assembled row before it is counted as returned:
** return true to keep the row, false to skip it. Must not call back into kv. */
typedef bool (*kv_filter_fn)(void *ctx, const kv_row *row);

/* Qualifier projection within one family: only these qualifiers are read. */
typedef struct kv_qualifier_set {
  uint32_t family_id;
  const uint8_t *const *quals; const uint32_t *qual_lens; uint32_t n_quals;
} kv_qualifier_set;

/* Skip scan by prefix (kv_scan_options.skip_prefix): the scan reads, for each distinct
** leading prefix of the row keys, the suffix ranges appended to that prefix. prefix_len
** gives the length of a key's prefix (for a SQL table: the first key column's encoding);
** it returns 0 (or more than key_len) when the key has none, which fails the scan with
** KV_ERR_INVALID. The prefixes are found inside the scan, at its snapshot (and through its
** overlay): seek every family to the probe key (first the first key, then the first key
** after every key beginning with the last prefix), take the smallest row key found, cut
** its prefix p, read the ranges p + suffixes[i], then probe again after p. So rows written
** before kv_scan_open are all found and rows written after it never are, whatever the
** prefixes they bring. Suffix ranges follow kv_range's rules (sorted, not overlapping,
** inclusive flags); a NULL start means from p's first key, a NULL end to p's last; no
** suffix range (n_suffixes 0) means every key of each prefix. With ranges given
** (kv_scan_options.ranges), only prefixes found inside them are read, and each prefix's
** ranges are cut to them (Phoenix's skip scan with a range in an early key slot: `P1
** BETWEEN 2 AND 4 AND P3 = 9` seeks each P1 in [2, 4] and reads its P3 = 9 rows): the
** first probe is the first range's start, a probe past a range's end goes on at the next
** range's start. Forward scans only: with reverse, kv_scan_open fails with KV_ERR_INVALID.
** kv_scan_metrics.prefixes_sought counts the prefixes found, ranges_sought the ranges read
** (empty ones, start not below end, are not read).
** rows_per_prefix > 0 hands out at most that many rows of each prefix (those the filter
** passes, in key order) and then probes for the next prefix at once: "the first row of
** every prefix" in one seek per prefix (Phoenix's DISTINCT PREFIX FILTER, a loose index
** scan). */
typedef uint32_t (*kv_prefix_len_fn)(void *ctx, const uint8_t *key, uint32_t key_len);
typedef struct kv_skip_prefix {
  kv_prefix_len_fn prefix_len; void *ctx; /* the prefix of a key, and its context */
  const kv_range *suffixes; uint32_t n_suffixes; /* ranges after the prefix */
  uint32_t rows_per_prefix;  /* rows handed out per prefix at most; 0 = all */
} kv_skip_prefix;

typedef struct kv_scan_options {
  const uint32_t *family_ids; uint32_t n_families; /* families to read (>= 1); only their
                                                      files are opened */
  const kv_qualifier_set *qualifiers; uint32_t n_qualifier_sets; /* optional projection */
  const kv_range *ranges; uint32_t n_ranges; /* 0 = everything; several = skip scan. Must be
                                                sorted ascending and not overlap */
  int64_t ts_min, ts_max;  /* time range [ts_min, ts_max); both 0 = all time; ts_max 0
                              alone = no upper bound */
  int max_versions;        /* versions per column handed out; 0 = 1 */
  bool reverse;            /* rows in descending key order */
  uint64_t limit;          /* rows handed out at most; 0 = no limit */
  kv_filter_fn filter; void *filter_ctx; /* optional */
  uint64_t snapshot;       /* sequence number to read at; 0 = latest committed; must not be
                              above kv_last_sequence() */
  const kv_batch *overlay; /* uncommitted writes to read as committed, or NULL (below) */
  uint32_t existence_family; /* 0, or 1 + the index in family_ids of a family read only to
                              know that rows exist (the hidden key family): see below */
  bool value_vectors;      /* rows may carry kv_value_vectors (below); ignored with a filter */
  const atomic_int *interrupt; /* or NULL: once the caller makes it non-zero (from any
                              thread), kv_scan_next returns KV_ERR_INTERRUPTED ("interrupted")
                              within 64 rows examined; the caller clears it (SQLite's
                              sqlite3_interrupt plays the same part) */
  const kv_skip_prefix *skip_prefix; /* skip scan by prefix (above), or NULL; copied at
                                        open except ctx, which must outlive the scan */
  struct kv_trace *trace;  /* or NULL: the scan records into it the store-file blocks it
                              loads and the key ranges it seeks (kv_trace, below); must
                              outlive the scan */
  int64_t as_of;           /* > 0: read the store as of this timestamp (ms): cells, puts
                              and tombstones alike, with a timestamp above it do not exist
                              for the read (rule 1 above), so VERSIONS counts back from it
                              and a tombstone written later does not hide what it masked
                              (Phoenix's CurrentSCN read, an HBase scan's time range
                              [0, as_of + 1)); TTL still runs from the clock. 0: now */
  bool ts_per_row;         /* the caller promises that every cell of a row, tombstones
                              too, carries one timestamp (a Phoenix ROW_TIMESTAMP table):
                              then store files whose cells all lie at or after ts_max hold
                              nothing the time range reads and are skipped too (below) */
} kv_scan_options;
/* Time range and store files: a store file whose cells all lie before ts_min (its trailer's
** max timestamp < ts_min) is never opened, since its puts are outside the range and its
** tombstones cover only cells older than themselves; nor, with as_of, one whose cells are
** all newer than as_of. One whose cells all lie at or after ts_max may still hide the
** range's cells (its tombstones, its newer versions counted by VERSIONS), so it is skipped
** only with ts_per_row. kv_family_metrics.files_skipped_ts counts the files skipped so. */
/* Value vectors: with value_vectors set and no filter, a family with a qualifier projection
** of 1 to 64 distinct qualifiers may hand a row's cells out as one kv_value_vector (read
** with kv_scan_row_vectors) instead of views in row.cells, when the row holds at most one
** visible cell per qualifier there: value i is then the cell of projected qualifier i that
** the views would have held (row.n_cells may then be 0). Cell timestamps are not given.
** Rows handed out, their values and the metrics are the same as without it; only the form
** differs (per row and family: either views or one vector, never both). */
/* Existence family: in a forward read of a range of one row key (a point lookup; kv_get),
** that family is sought only when the other families have no visible cell in the row, so a
** row found in them costs no block of it; the row is then handed out without that family's
** cells. Otherwise (the other families hold nothing visible for the row, wider ranges,
** reverse scans, a single family) it is read as any other. Rows handed out are the same;
** only that family's cells may be missing from rows that have cells elsewhere.
** In a skip scan by prefix, the next prefix is sought in that family alone, so the caller
** promises that every row with a cell in the other families has a cell there too (the SQL
** marker: docs/FORMAT.md "the hidden key family"); a prefix whose rows have cells only in
** the other families is not found.
** KV_ERR_INVALID when it is above n_families. */
/* The scan copies what it needs of the options (ranges, qualifier sets): the caller's
** arrays may be freed after kv_scan_open returns; filter_ctx must outlive the scan.
** A qualifier projection hides puts of other qualifiers; tombstones still apply. */
/* A row with no visible cell in the families read is never handed out (SQL row existence is
** the catalog's hidden key family, see DESIGN.md). */
/* Overlay (a transaction reading its own writes): the scan reads the ops of opts->overlay
** as if they had been committed right after the snapshot, one sequence number each in batch
** order (so a later op wins over an earlier one, and every op over every committed cell),
** with KV_TS_NOW taken as the env's clock when a scan first reads the op. All the visibility rules
** above apply to them unchanged: an overlay tombstone masks committed puts with ts <= T
** (DELETE_FAMILY / DELETE_COLUMN) or ts == T (DELETE_VERSION), an overlay put at the
** timestamp of a committed one replaces it, VERSIONS / TTL / time range / max_versions count
** overlay and committed versions together, and projections and filters see them. Ops of
** families the scan does not read are ignored. The scan reads the ops the batch holds at
** kv_scan_open (and kv_get) through the batch's overlay index (memstores kept with the batch
** and caught up at each open, so a read inside a large transaction costs a lookup, not a
** copy of the batch), holding its own reference: the batch may change afterwards (later ops
** stay unseen) or be freed; nothing is committed. Opening a scan updates that index, so it
** must not race a thread writing to the same batch. */

#define KV_SCAN_MAX_FAMILIES 16u

/* ---- Block trace --------------------------------------------------------------------- */
/* A record of what scans read, block by block: every store-file block a scan loads (from
** the file, or from the block cache or the columnar scan's column cache) and every key
** range it seeks, for a picture of what a query read (the shell's .keymap). The caller makes
** one, names it in kv_scan_options.trace (and kv_colagg_spec.trace) of any number of scans,
** and reads it when they are done. Summed over the scans given it, the loads recorded per
** family equal kv_family_metrics.blocks_read and the cache hits blocks_cache_hit; the ranges
** recorded equal kv_scan_metrics.ranges_sought (the first KV_TRACE_MAX_RANGES kept). A
** trace is used by one thread at a time: the scans that share it must not run concurrently
** (a columnar scan's worker threads keep their own lists, added when they are joined).
** Recording never fails a scan: past an allocation failure the trace is marked lost
** (kv_trace_lost) and stops growing. Memory: 24 bytes per distinct block, the ranges' keys. */
typedef struct kv_trace kv_trace;

#define KV_TRACE_MAX_RANGES 4096u /* key ranges a trace keeps (it counts all of them) */

/* One block a traced scan loaded. */
typedef struct kv_trace_block {
  uint32_t family_id;  /* the family it belongs to */
  uint32_t block;      /* its index in the file (kv_file_block.block) */
  uint64_t file;       /* the store file's number (kv_file_block.file) */
  uint32_t loads;      /* times scans loaded it (each counts in blocks_read) */
  uint32_t cache_hits; /* of which served from a cache (each counts in blocks_cache_hit) */
} kv_trace_block;

/* One key range a traced scan sought, normalized: [start, end). */
typedef struct kv_trace_range {
  uint32_t family_id;      /* the first family of the scan that sought it */
  bool has_start;          /* false: from the first row */
  bool has_end;            /* false: to the last row */
  const uint8_t *start;    /* the inclusive start key (has_start) */
  uint32_t start_len;      /* its length */
  const uint8_t *end;      /* the exclusive end key (has_end) */
  uint32_t end_len;        /* its length */
} kv_trace_range;

/* A new, empty trace; NULL when out of memory. Free with kv_trace_free (NULL: no-op). */
kv_trace *kv_trace_new(void);
void kv_trace_free(kv_trace *t);
/* Forget everything recorded (the memory is kept for reuse). */
void kv_trace_clear(kv_trace *t);
/* The blocks recorded, sorted by (file, block); *n gets their count. The array is owned by
** the trace and valid until it next changes. NULL with *n = 0 when none (or t NULL). */
const kv_trace_block *kv_trace_blocks(kv_trace *t, size_t *n);
/* The key ranges recorded, in the order they were sought (at most KV_TRACE_MAX_RANGES):
** *n gets their count, *total (may be NULL) how many were sought in all. Owned by the
** trace, valid until it next changes. */
const kv_trace_range *kv_trace_ranges(kv_trace *t, size_t *n, uint64_t *total);
/* True when an allocation failed while recording: blocks or ranges may be missing. */
bool kv_trace_lost(const kv_trace *t);
/* Add everything src recorded to dst: block counts summed, ranges appended in order (as
** if dst's scans had recorded them). src is unchanged; NULL either way: nothing. Used to
** keep a reader's record apart until it is known to count (exec/op_colagg.c). */
void kv_trace_merge(kv_trace *dst, kv_trace *src);

/* What a scan did, per family read (same order as kv_scan_options.family_ids). */
typedef struct kv_family_metrics {
  uint32_t family_id;
  uint64_t cells_examined;    /* cells decoded from memstore and store files */
  uint64_t blocks_read;       /* store-file blocks read (cache hits included) */
  uint64_t blocks_cache_hit;  /* of which served from the block cache */
  uint64_t bytes_read;        /* bytes read from store files (compressed, on disk) */
  uint64_t files_opened;      /* store files consulted */
  uint64_t files_skipped_ts;  /* store files in the key ranges left unopened because their
                                 timestamps (trailer min/max) miss the time range or as_of */
  uint64_t bytes_inflated;    /* raw block bytes decompressed (a projected scan's sectioned
                                 blocks: only the sections it needed) */
} kv_family_metrics;

typedef struct kv_scan_metrics {
  uint64_t rows_examined;  /* rows assembled from cells (before the filter) */
  uint64_t cells_examined; /* sum over families */
  uint64_t rows_filtered;  /* rows the filter rejected */
  uint64_t rows_returned;  /* rows handed out */
  uint64_t ranges_sought;  /* key ranges visited (skip scan seeks) */
  uint64_t prefixes_sought;/* prefixes found by a skip scan by prefix (kv_skip_prefix) */
  uint32_t n_families;
  kv_family_metrics families[KV_SCAN_MAX_FAMILIES];
} kv_scan_metrics;

typedef struct kv_scan kv_scan;

/* Start a scan. It reads at opts->snapshot, or at the latest committed sequence number when
** it starts: a batch committed later is invisible to it, even once flushed or compacted.
** Errors: KV_ERR_NOTFOUND (unknown family), KV_ERR_INVALID (no family, families of
** different tables, a family listed twice, more than KV_SCAN_MAX_FAMILIES, unsorted or
** overlapping ranges, a qualifier set for a family not read or two for one family,
** snapshot above the last sequence number, negative max_versions), KV_ERR_TOOBIG (range
** bound over KV_MAX_ROW_KEY), KV_MISUSE (NULL argument). *out is NULL on failure. */
int kv_scan_open(kv_db *db, const kv_scan_options *opts, kv_scan **out);

/* Next row: KV_OK with *row filled (valid until the next call), KV_ERR_NOTFOUND at the end,
** or an error (KV_ERR_CORRUPT, KV_ERR_IO) after which the scan is finished (later calls
** return the same error). KV_MISUSE once the store was closed under the scan. */
int kv_scan_next(kv_scan *s, kv_row *row);
/* The value vectors (kv_scan_options.value_vectors) of the row the last KV_OK of
** kv_scan_next (or kv_get) on s handed out: *n gets their count (0 when every cell of the row
** came as a view, or s is NULL), the return value the array (NULL when none), valid as long
** as that row. */
const kv_value_vector *kv_scan_row_vectors(const kv_scan *s, uint32_t *n);

/* The metrics so far. */
void kv_scan_get_metrics(const kv_scan *s, kv_scan_metrics *out);

/* Finish the scan (any time). NULL is a no-op. */
void kv_scan_close(kv_scan *s);

/* Point read of one row: a scan of the single key `row` with the given options (ranges,
** limit and reverse ignored; store files whose bloom filter rules the row out are not
** read). KV_OK with *out_row valid until kv_scan_close(*scan_out), or KV_ERR_NOTFOUND when
** the row has no visible cell: in both cases *scan_out is the scan (its metrics tell what
** the lookup read) and must be closed with kv_scan_close. On any other error (those of
** kv_scan_open; KV_ERR_INVALID for an empty row key) *scan_out is NULL. */
int kv_get(kv_db *db, const kv_scan_options *opts, const void *row, size_t row_len,
           kv_scan **scan_out, kv_row *out_row);

/* The distinct prefixes (kv_skip_prefix's prefix_len) of the row keys of family
** family_id at the latest snapshot, ascending, inside ranges[0..n_ranges) (sorted, not
** overlapping, as kv_scan_options.ranges; n_ranges 0: everywhere): each(each_ctx, prefix,
** len) for the first `max` of them; *more is set when there are more. Prefixes are found from cells, so one
** whose rows are all deleted (tombstones not yet compacted) may be counted: for estimates
** (the planner's choice of a skip scan by prefix), not answers. *n gets the count given to
** each. Errors: those of kv_scan_open and kv_scan_next, KV_MISUSE (NULL argument). */
int kv_scan_prefixes(kv_db *db, uint32_t family_id, kv_prefix_len_fn prefix_len,
                     void *prefix_ctx, const kv_range *ranges, uint32_t n_ranges, uint32_t max,
                     void (*each)(void *each_ctx, const uint8_t *prefix, uint32_t len),
                     void *each_ctx, uint32_t *n, bool *more);

/* Latest committed sequence number; use as kv_scan_options.snapshot to read at a point.
** Sequence numbers start at 2: an empty store's last sequence number is 1, so a snapshot is
** never 0 (which kv_scan_options.snapshot reads as "latest"). */
uint64_t kv_last_sequence(kv_db *db);

/* Pin / unpin a snapshot so compaction keeps what it can see: *seq_out gets the latest
** committed sequence number, usable as kv_scan_options.snapshot until released. Acquiring
** the same number twice needs two releases; releasing a number not held is a no-op. */
int kv_snapshot_acquire(kv_db *db, uint64_t *seq_out);
void kv_snapshot_release(kv_db *db, uint64_t seq);

/* ---- Maintenance and statistics ---------------------------------------------------- */
/* Flush every non-empty memstore of the table (NULL = all tables) to store files, and wait.
** A family with compaction_trigger files or more is then minor-compacted, as far as the
** size-tiered selection finds work (docs/KV.md "Compaction"). Errors:
** KV_ERR_NOTFOUND (unknown table), KV_ERR_READONLY, I/O errors (which set the error
** state), KV_MISUSE. */
int kv_flush(kv_db *db, const char *table);

/* Compact the table's families (NULL = all): major = true merges all files of each family
** into one and drops tombstones, masked cells, versions beyond VERSIONS and cells past TTL;
** minor merges files and keeps tombstones. A major compaction flushes the memstore first,
** so the result is exactly what a read sees (see "What a read sees" above). While a
** snapshot is acquired, a row with any cell newer than the oldest snapshot is kept whole in
** that family, so every acquired snapshot reads the same after as before. The inputs are
** deleted once no open scan reads them. In a table split into regions (docs/KV_REGIONS.md)
** each family gets one file per region. A bulk load committed while the merge runs keeps its
** files beside the output (docs/KV_BULK.md "Beside a compaction"), as a later write would
** have. Errors as kv_flush, and KV_ERR_CORRUPT when a
** family's input file is damaged: the message names the file and its region; nothing is
** replaced, the store stays writable, and the family's automatic compactions stop until the
** store is reopened (each kv_compact of it fails so again). */
int kv_compact(kv_db *db, const char *table, bool major);
/* Whether minor compactions copy whole store-file blocks where their rows sort below every
** other input's (on by default; kv_family_stats counts the blocks). Off, every cell is
** merged one by one: the files differ, the cells they hold do not (tests compare both). */
void kv_compact_set_block_copy(bool on);
/* For tests: a function the background thread calls, with arg, when a compaction has chosen
** its inputs and begins writing its output (a bulk load's commit may then list its files
** beside it: docs/KV_BULK.md "Beside a compaction"); NULL, the default, for none. */
void kv_compact_set_merge_hook(void (*hook)(void *arg), void *arg);

/* Online backup (RocksDB's Checkpoint; kv/db/backup.c): copy the store, while writes go on,
** into directory `dir` (created if missing; it must be empty), as a store that kv_open
** opens with every commit that had returned before the call and nothing of a commit begun
** after it, each whole. The writer role is held only while the state is noted (commits
** wait for that moment, reads never); then store files get a second name in the copy
** (hard links: they never change once written) where the file system allows, and are
** copied where it does not (another device); the WAL segments still needed are copied up
** to their size at that moment; a MANIFEST holding that state is written last, so a copy
** cut short has none and is not a store. Everything is synced. A failure removes what was
** written. Store files and segments that compactions and flushes drop meanwhile are kept
** until the copy is done. *stats (may be NULL) gets what was done.
** Errors: KV_MISUSE (db NULL), KV_ERR_INVALID (empty dir, or not a directory),
** KV_ERR_EXISTS (dir is not empty), KV_ERR_READONLY (a read-only open: the writer makes
** backups), the store's error state, KV_ERR_IO / KV_ERR_NOSPC / KV_ERR_NOMEM. */
typedef struct kv_backup_stats {
  uint64_t files_linked;  /* store files given a second name in the copy (hard links) */
  uint64_t files_copied;  /* store files copied (the file system could not link them) */
  uint64_t bytes_copied;  /* their bytes */
  uint64_t wal_segments;  /* WAL segments copied */
  uint64_t wal_bytes;     /* their bytes */
  uint64_t last_seq;      /* the last sequence number the copy holds */
} kv_backup_stats;
int kv_backup(kv_db *db, const char *dir, kv_backup_stats *stats);

/* The write-ahead log's live segments and what kv_open replayed (see "WAL size bound"). */
typedef struct kv_wal_stats {
  uint64_t segments;          /* WAL segment files in use, the current one included */
  uint64_t bytes;             /* their bytes (records written, or buffered in KV_SYNC_OFF) */
  uint64_t limit;             /* kv_options.wal_limit in effect (bytes) */
  uint64_t bound_freezes;     /* memstores frozen because the segments passed the limit */
  uint64_t bound_waits;       /* waits of commits for those flushes (past limit * 5/4) */
  uint64_t replayed_segments; /* segments kv_open replayed */
  uint64_t replayed_records;  /* WAL records kv_open replayed (each one committed batch) */
  uint64_t replayed_bytes;    /* their bytes, 32-byte record headers included */
  uint64_t dropped_bytes;     /* bytes of a torn or damaged record at the end of the newest
                                 segment that kv_open dropped (truncated away): a commit
                                 cut short by a crash, never applied; 0 = none */
  uint64_t dropped_segment;   /* that segment's number (file wal-N.log), 0 = none */
  uint64_t reader_retries;    /* read-only opens: catch-up attempts (kv_open, kv_refresh)
                                 made again because the writer deleted a store file or a
                                 segment between the reading of the MANIFEST and its open */
  uint64_t reader_stops;      /* read-only opens: catch-ups that stopped before a record they
                                 could not show whole yet (a family created, or a bulk load
                                 committed, after their MANIFEST read) */
} kv_wal_stats;
/* Fill *out (all counters since kv_open). Errors: KV_MISUSE (NULL argument). */
int kv_wal_get_stats(kv_db *db, kv_wal_stats *out);
/* The path of WAL segment `number` of the store into buf (cap bytes, truncated). */
void kv_wal_segment_path(kv_db *db, uint64_t number, char *buf, size_t cap);

/* Statistics of one family from its store files' block indexes and its memstore, used by
** the planner's estimates. */
typedef struct kv_family_stats {
  uint64_t store_files;
  uint64_t store_file_bytes;  /* on disk */
  uint64_t blocks;
  uint64_t cells;             /* in store files (all versions, tombstones included) */
  uint64_t rows;              /* sum of per-file distinct rows (an upper bound) */
  uint64_t memstore_bytes;
  uint64_t memstore_cells;
  uint64_t compactions;       /* minor and major compactions done since kv_open */
  uint64_t blocks_copied;     /* blocks minor compactions copied whole since kv_open */
  uint64_t blocks_merged;     /* blocks compactions wrote from cells merged one by one */
  uint64_t reader_bytes;      /* memory the open store files hold for as long as they are
                                 open: block indexes (of a file opened past index_memory only
                                 its page table), fences of first row keys, bloom filters
                                 (a partitioned one's partition index only); not the block
                                 cache. RocksDB's "rocksdb.estimate-table-readers-mem" */
  uint64_t paged_files;       /* of store_files, those opened past index_memory: their block
                                 index is read a page at a time through the block cache */
} kv_family_stats;
int kv_family_get_stats(kv_db *db, uint32_t family_id, kv_family_stats *out);

/* The store files of a family as their block indexes describe them (what the shell's
** .keymap draws). One entry per block, in the order the family keeps its files (oldest
** first) and, within a file, in key order. Row keys point into the open file's index,
** valid during the call only. */
typedef struct kv_file_block {
  uint64_t file;              /* the store file's number (store-wide, never reused: the
                                 N of data/<table>/<family>/N.sf) */
  uint64_t file_bytes;        /* the file's size on disk */
  uint32_t n_blocks;          /* blocks in the file */
  uint32_t block;             /* this block's index in the file, 0-based */
  uint64_t offset;            /* its byte offset in the file */
  uint32_t bytes;             /* its on-disk bytes (frame, stored bytes, checksum) */
  uint32_t raw_bytes;         /* its uncompressed bytes */
  uint32_t cells;             /* cells in it (all versions, tombstones included) */
  uint32_t rows;              /* rows with cells in it */
  const uint8_t *first_row;   /* row key of its first cell */
  uint32_t first_row_len;     /* its length */
  const uint8_t *last_row;    /* the file's last row key (the same for every block of the
                                 file: a block ends where the next one's first row starts) */
  uint32_t last_row_len;      /* its length */
} kv_file_block;
/* Call each(ctx, b) for every block of every store file of family family_id, as above,
** from a snapshot of the family's file list (files added or deleted meanwhile are not
** seen; the files listed stay open until the walk ends). A non-zero return of each stops
** the walk and is returned. Errors: KV_ERR_NOTFOUND (unknown or dropped family),
** KV_ERR_NOMEM, KV_MISUSE (NULL db or each). */
int kv_family_blocks(kv_db *db, uint32_t family_id,
                     int (*each)(void *ctx, const kv_file_block *b), void *ctx);

/* Store-file blocks whose bytes earlier kv_estimate_range calls counted (kv_estimate_opts
** .seen): per store file (its number), the highest block index counted. A caller estimating
** several ranges of one scan, in ascending key order, shares one (zeroed) so that a block
** holding rows of several ranges counts once, as the scan reads it once; files past
** KV_EST_SEEN_FILES are counted per range as without it. */
#define KV_EST_SEEN_FILES 32
typedef struct kv_est_seen {
  uint32_t n;                          /* files recorded */
  uint64_t file[KV_EST_SEEN_FILES];    /* their numbers */
  int64_t block[KV_EST_SEEN_FILES];    /* the highest block counted in each */
} kv_est_seen;

/* How kv_estimate_range counts (docs/KV.md "Estimates"). */
typedef struct kv_estimate_opts {
  uint64_t limit;        /* > 0: the scan stops after `limit` rows: bytes count only the
                            store-file blocks up to the one holding its limit-th row in scan
                            order, and a memstore's bytes that share of its range's bytes */
  bool reverse;          /* the scan order for limit: descending keys */
  uint32_t *exact;       /* store-file blocks that may still be read to count the rows of a
                            block the range cuts exactly (each read takes one; the caller
                            shares one allowance over a plan's calls). NULL or 0: none read,
                            such a block counts half its rows */
  kv_est_seen *seen;     /* or NULL: blocks already counted, not counted again (above) */
} kv_estimate_opts;
/* Estimated rows and bytes of family family_id within [range] (NULL: everything), at the
** latest state: per store file, the rows of the blocks the range overlaps from the block
** index, the (at most two) blocks it cuts counted from their row keys while *opts->exact
** allows, else by half (kv/sf/sf.h kv_sf_estimate; a block read goes through the block cache
** as a scan's would), and their on-disk bytes, every overlapped block whole; plus each
** memstore's rows in range (counted cell by cell up to 4,096 cells, or its first 128 cells
** and the skip list's upper levels past them) and their bytes (row, qualifier and value
** bytes plus 16 a cell). opts NULL: no limit, no block read. A row written in several files
** or memstores counts in each. KV_OK; KV_ERR_NOTFOUND (unknown family), KV_ERR_NOMEM,
** KV_MISUSE (NULL db, rows or bytes). A block that cannot be read is never an error here. */
int kv_estimate_range(kv_db *db, uint32_t family_id, const kv_range *range,
                      const kv_estimate_opts *opts, uint64_t *rows, uint64_t *bytes);
/* kv_estimate_range with opts NULL (the block index alone: cut blocks count by half). */
int kv_estimate_rows(kv_db *db, uint32_t family_id, const kv_range *range, uint64_t *rows,
                     uint64_t *bytes);

/* Store-wide block cache counters (all zero when the cache is off). The block cache keeps
** decoded store-file blocks, least recently used evicted first; a block an open scan reads
** is never freed under it. A hit costs no read: a point lookup whose blocks are cached makes
** no system call. Blocks of files deleted by compaction or DROP TABLE leave the cache. */
typedef struct kv_block_cache_stats {
  uint64_t hits;       /* block loads served from the cache */
  uint64_t misses;     /* block loads that read the file */
  uint64_t inserts;    /* blocks added */
  uint64_t evictions;  /* blocks pushed out to stay within the capacity */
  uint64_t erased;     /* blocks dropped because their file was deleted */
  size_t usage;        /* bytes charged now (compact decoded blocks), column cache
                          entries included */
  size_t capacity;     /* kv_options.block_cache_size in effect (the one budget of the
                          block cache and the column cache) */
  uint64_t filter_hits, filter_misses, filter_inserts; /* bloom filter partitions of
                          store files that are not mapped (format version 4; a mapped
                          file's are read in place), counted apart from blocks (their
                          charges are in usage, their evictions in evictions) */
} kv_block_cache_stats;
/* Fill *out. Errors: KV_MISUSE (NULL argument). */
int kv_block_cache_get_stats(kv_db *db, kv_block_cache_stats *out);

#ifdef __cplusplus
}
#endif
#endif /* ROWAN_KV_H */
