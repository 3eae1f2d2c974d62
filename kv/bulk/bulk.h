/*
** kv/bulk/bulk.h: bulk load, the way HBase bulk-loads HFiles. Cells are added in any order, to
** any families of any tables; kv_bulk_commit writes them as store files (one per family,
** sorted, synced) and names them all in the MANIFEST in one atomic record. Nothing goes
** through the WAL or a memstore.
**
** Bounded memory (docs/KV_BULK.md): the load holds at most kv_bulk_options.run_bytes
** of buffered cells, encoded segments and spare arrays. Past it, the encoded segments are
** paged out to a temporary file per family (their blocks are read back at commit); if the
** raw buffers still hold most of it, they are sorted and spilled as a temporary sorted store
** file ("run") per family (not for a family whose input came in order: its open buffer is
** encoded and paged out instead). Both live in the family's folder under a name kv_open deletes
** (<number>.run). Commit merges the runs and the buffers. Input added in key order needs no sort (it is detected), input added in
** strictly descending key order is reversed; otherwise rows are sorted by a natural merge
** sort, so input made of a few ascending or descending runs costs a few linear passes.
**
** Pipeline: while rows come in key order, or strictly descending order (a time series in
** file order against a TS DESC key), each family's buffer is closed every
** kv_bulk_options.segment_bytes, and where the order turns, as a segment; a worker thread
** sorts each segment and encodes it into finished store-file blocks while the caller adds
** the next cells. Unordered input is cut into segments too, which the worker only sorts.
** At commit, a family whose segments follow one another in key order without sharing a row
** gets the encoded segments as its store file; any other goes through a merge that copies
** encoded blocks whole where no other segment reaches into them (and, for a large family,
** runs as two key ranges on two threads). Either way the file holds the same cells.
**
** Sequence numbers: commit takes the writer role (other commits wait until it returns),
** reserves one sequence number S for the whole load and gives it to every cell, so the load
** is newer than everything committed before it and older than everything after it. Its
** timestamp (KV_TS_NOW's cells) is the clock at kv_bulk_begin, but never older than the last
** commit's time then, and commits after the load never take an older one (as kv_commit
** keeps commit times from going back), so time order agrees with sequence order too.
** Within one load, cells read exactly as if each had been committed on its own in the
** order added: of two cells with the same (row, family, qualifier, timestamp, type) the
** later one replaces the earlier one, and a tombstone masks the puts of the load added
** before it that it covers (DELETE_FAMILY / DELETE_COLUMN: ts <= T; DELETE_VERSION:
** ts == T), never one added after it. This is resolved while merging: masked and
** replaced cells are not written.
**
** Crash safety: before the MANIFEST record the new files are unnamed and kv_open deletes
** them (and any run file); after it the load is complete. A reader never sees part of it.
**
** Not here: SQL rows, index rows (exec/bulk.c builds cells with exec/rowcodec.h); the
** store file format (kv/sf/sf.h). A kv_bulk belongs to one thread at a time (its worker is
** its own business).
*/
#ifndef ROWAN_KV_BULK_H
#define ROWAN_KV_BULK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "kv/kv.h"

typedef struct kv_bulk kv_bulk;

#define KV_BULK_DEFAULT_RUN_BYTES ((size_t)256 << 20) /* kv_bulk_options.run_bytes 0 */

typedef struct kv_bulk_options {
  size_t run_bytes; /* the load's memory bound, in bytes (docs/KV_BULK.md): buffered
                       cells (keys, values and 24 bytes of bookkeeping per cell), encoded
                       segments held in memory, arrays kept for reuse, and at commit the
                       merged halves of a split family. Past it, encoded segments are paged
                       out to a temporary file, then (if still past) the buffers are spilled
                       as sorted runs. 0 = 256 MiB; minimum 4 KiB */
  size_t segment_bytes; /* bytes of one family's buffered cells (counted as run_bytes) after
                       which a buffer in key order (or strictly descending order) is handed
                       to the worker; 0 = 8 MiB, or run_bytes / 32 if smaller (at least
                       4 KiB); SIZE_MAX = no segments, no worker */
  uint64_t split_cells; /* cells of a family from which its commit merge (of overlapping
                       segments) runs as two key ranges on two threads; 0 = 65536 */
  int (*fault)(void *arg, uint32_t family_id, uint64_t job); /* tests only, NULL normally:
                       called before the worker (or commit) processes each closed buffer,
                       job = 0, 1, ... in the order taken; non-zero = that kv error code as
                       if processing the buffer had failed */
  void *fault_arg;  /* fault's first argument */
  const atomic_int *interrupt; /* or NULL: non-zero when kv_bulk_commit has written the
                       load's store files and is about to install them fails the commit
                       with KV_ERR_INTERRUPTED ("interrupted"), nothing installed and the
                       files removed (as kv_scan_options.interrupt; the caller clears it) */
} kv_bulk_options;

/* Start a bulk load on db. opts NULL = the defaults. The load's timestamp for cells added
** with KV_TS_NOW is the env's clock now (kv_bulk_timestamp). Errors: KV_ERR_READONLY,
** KV_ERR_NOMEM, KV_MISUSE (db or out NULL), the store's sticky error. *out is NULL on
** failure; on success free it with kv_bulk_free. */
int kv_bulk_begin(kv_db *db, const kv_bulk_options *opts, kv_bulk **out);

/* Add a put, or a tombstone (type KV_DELETE_VERSION / KV_DELETE_COLUMN / KV_DELETE_FAMILY;
** value ignored), exactly as kv_batch_put / kv_batch_delete describe them. The bytes are
** copied. Errors: KV_ERR_NOTFOUND (unknown or dropped family id), KV_ERR_TOOBIG,
** KV_ERR_INVALID (as kv_batch_*), KV_ERR_NOMEM, KV_MISUSE (NULL load, or a load already
** committed or failed). A refused cell leaves the load unchanged. An I/O error spilling a
** run, or an error of the worker (returned by the add that closes the next segment), is
** sticky: the load can only be freed. */
int kv_bulk_put(kv_bulk *b, uint32_t family_id, const void *row, size_t row_len,
                const void *qual, size_t qual_len, int64_t ts, const void *value,
                size_t value_len);
int kv_bulk_delete(kv_bulk *b, uint32_t family_id, int type, const void *row,
                   size_t row_len, const void *qual, size_t qual_len, int64_t ts);

/* One cell of kv_bulk_add_row. */
typedef struct kv_bulk_cell {
  const void *qual;   /* qualifier bytes */
  size_t qual_len;    /* their length */
  int type;           /* KV_PUT or a tombstone type, as kv_bulk_put / kv_bulk_delete */
  const void *value;  /* value bytes (puts only) */
  size_t value_len;   /* their length (ignored for tombstones) */
} kv_bulk_cell;

/* Add n cells of one row of one family, all with timestamp ts: the same as n calls of
** kv_bulk_put / kv_bulk_delete in order, but the row key is looked at once, and every cell
** is checked before any is added (a refused row leaves the load unchanged). Cells given in
** cell order (qualifier ascending) cost least. Errors: as kv_bulk_put. */
int kv_bulk_add_row(kv_bulk *b, uint32_t family_id, const void *row, size_t row_len,
                    int64_t ts, const kv_bulk_cell *cells, size_t n);

/* Add every operation of `batch` to the load, in the batch's order (the batch is left
** unchanged). On an error the load keeps the operations added before the failing one:
** callers that need all or nothing check the batch first. Errors: as kv_bulk_put, and
** KV_ERR_CORRUPT for a damaged batch. */
int kv_bulk_add_batch(kv_bulk *b, const kv_batch *batch);

/* Does family family_id hold no cell at all right now (no store file, empty memstores)?
** *fresh gets the answer. When it does, the load remembers the family: the caller may then
** leave out of the load the tombstones that would only mask cells older than the load
** (a NULL column of a row the load adds once), and kv_bulk_commit checks, under the writer
** role, that the family still holds no cell; if one was committed meanwhile, the commit
** fails with KV_ERR_EXISTS and nothing of the load is visible. Errors: KV_ERR_NOTFOUND
** (unknown or dropped family), KV_ERR_NOMEM, KV_MISUSE (NULL, or the load committed or
** failed). */
int kv_bulk_fresh(kv_bulk *b, uint32_t family_id, bool *fresh);

/* The question of kv_bulk_fresh (no store file, empty memstores) without its promise: the
** load remembers nothing and its commit checks nothing. Same errors. */
int kv_bulk_empty(kv_bulk *b, uint32_t family_id, bool *empty);

/* Wait until every segment closed so far is sorted and encoded (the caller's thread
** helps). KV_OK, or the error of a failed segment (the load is then failed: free it), or
** KV_MISUSE (NULL, or the load committed or failed). */
int kv_bulk_wait(kv_bulk *b);

/* Cells added so far (replaced and masked ones included). 0 for NULL. */
uint64_t kv_bulk_count(const kv_bulk *b);
/* The timestamp that KV_TS_NOW stands for in this load. */
int64_t kv_bulk_timestamp(const kv_bulk *b);

/* Commit: write the store files, sync them, name them in one MANIFEST record and make them
** visible. Takes the writer role for the duration (commits wait). *seq_out (may be NULL)
** gets the load's sequence number (the last sequence number if the load was empty or every
** cell it held was masked; such a load writes nothing and takes no sequence number). After KV_OK the load is durable in every sync mode. On any
** error nothing of the load is visible, and the load can only be freed: its files are
** removed, except after a failed MANIFEST write, which also puts the store in its error
** state (kv.h) and leaves the files for kv_open to keep (if the record is found) or delete.
** Errors: KV_ERR_NOTFOUND (a family was dropped since its cells were added),
** KV_ERR_IO / KV_ERR_NOSPC, KV_ERR_CORRUPT (a run file read back damaged), KV_ERR_NOMEM,
** KV_ERR_EXISTS (a family found fresh by kv_bulk_fresh got cells during the load),
** KV_ERR_READONLY, the sticky error, KV_MISUSE (NULL, or committed twice). */
int kv_bulk_commit(kv_bulk *b, uint64_t *seq_out);

/* The caller's scratch records, kept with the load: bytes appended to one temporary file of
** the load (<number>.run in the folder of family family_id, made by the first append; later
** appends ignore family_id), read back at the offsets appends gave. For a caller that must
** find again, while it adds, something of what it added (exec: the index rows a write
** statement wrote, by data row key) without holding it all in memory. The file goes with
** the load (kv_bulk_commit, kv_bulk_free) and, after a crash, with kv_open's deletion of the
** files no MANIFEST record names. *off gets the offset of the appended bytes. A failed
** append leaves earlier records readable. Errors: KV_ERR_NOTFOUND (unknown or dropped
** family), KV_ERR_IO / KV_ERR_NOSPC, KV_ERR_NOMEM, KV_MISUSE (NULL argument, or the load
** committed or failed). */
int kv_bulk_scratch_append(kv_bulk *b, uint32_t family_id, const void *p, size_t n,
                           uint64_t *off);
/* Read n bytes at offset off of the scratch file into p. Errors: KV_ERR_IO, KV_ERR_CORRUPT
** (a range past what was appended, or a short read), KV_MISUSE (as above). */
int kv_bulk_scratch_read(kv_bulk *b, uint64_t off, void *p, size_t n);

/* What the pipeline did (after commit; counts so far before it). */
typedef struct kv_bulk_stats {
  uint64_t segments;      /* buffers closed and sorted apart (by the worker or at commit) */
  uint32_t fams_segments; /* families whose store file was their segments one after another */
  uint32_t fams_merged;   /* families whose store file was merged cell by cell */
  uint64_t segs_reframed; /* segments whose blocks were framed again at commit (a commit
                             took a sequence number during the load) */
  uint64_t blocks_copied; /* encoded blocks a merge copied whole */
  uint64_t blocks_decoded;/* encoded blocks a merge decoded (their rows met another
                             segment's) */
  uint64_t peak_bytes;    /* the most bytes counted against run_bytes at once (see
                             kv_bulk_options.run_bytes; commit's merged halves included) */
  uint64_t segs_paged;    /* encoded segments paged out to a temporary file */
  uint64_t bytes_paged;   /* their framed blocks' bytes, and those of merged halves written
                             to a temporary file at commit */
  uint64_t runs;          /* sorted run files spilled */
  uint64_t scratch_bytes; /* bytes the caller appended to its scratch file */
} kv_bulk_stats;

/* Fill *out with b's counters (zeros for NULL b). */
void kv_bulk_get_stats(const kv_bulk *b, kv_bulk_stats *out);

/* Free the load; if it was not committed, it is abandoned and its run files are removed.
** NULL is a no-op. */
void kv_bulk_free(kv_bulk *b);

#endif /* ROWAN_KV_BULK_H */
