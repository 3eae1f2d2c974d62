/*
** exec/spill_file.h: rows written to a temporary file cut into partitions by hash, and read
** back one partition at a time: what the hash join (exec/op_spill.c) and the set operations
** (exec/op_setop.c) do past the join memory (a "Grace" partitioning). A row is its cat_value
** structs followed by its string bytes; each partition's rows are buffered up to a chunk and
** appended to the file (kv/db/temp.h, in a table's folder of the store), so the file is a run
** of chunks, each of one partition. Rows with equal hashes share a partition (the top six
** bits of the hash pick it). Files live only while the statement runs, in this process.
**
** Not here: what is hashed and how partitions are joined or compared (the callers), the
** temporary file itself (kv/db/temp.c).
*/
#ifndef ROWAN_EXEC_SPILL_FILE_H
#define ROWAN_EXEC_SPILL_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "exec/op.h"
#include "kv/kv.h"

#define EXEC_SPILL_PARTS 64           /* partitions, by the top 6 bits of the hash */
#define EXEC_SPILL_CHUNK (64u << 10)  /* bytes buffered per partition before a write */

typedef struct exec_spill_chunk {
  uint64_t off;  /* offset in the file */
  uint32_t len;  /* bytes */
} exec_spill_chunk;

/* One partitioned file. */
typedef struct exec_spill_file {
  struct kv_temp *file;                     /* the temporary file */
  uint8_t *buf[EXEC_SPILL_PARTS];           /* per partition: bytes not written yet */
  uint32_t used[EXEC_SPILL_PARTS];          /* their count */
  exec_spill_chunk *chunks[EXEC_SPILL_PARTS]; /* per partition: its chunks, in order */
  uint32_t n_chunks[EXEC_SPILL_PARTS], cap_chunks[EXEC_SPILL_PARTS];
  uint64_t rows[EXEC_SPILL_PARTS];          /* rows per partition */
  uint64_t bytes;                           /* bytes of rows added (written or buffered) */
} exec_spill_file;

/* A reader of one partition of one file, a chunk at a time. */
typedef struct exec_spill_reader {
  uint8_t *buf;        /* the current chunk's bytes (malloc) */
  size_t cap;          /* allocated */
  uint32_t len, pos;   /* bytes in buf, the next row's position */
  uint32_t chunk;      /* the next chunk to read */
} exec_spill_reader;

/* The partition of a row with hash `hash`. */
static inline int exec_spill_part_of(uint64_t hash) { return (int)(hash >> 58); }

/* Open f (zeroed by the caller) on a new temporary file in the folder of family `family` of
** db; with db NULL (a remote backend: no local store) in TMPDIR, else /tmp. EXEC_OK;
** EXEC_TOOBIG with err set for a read-only handle (it cannot spill: `what`
** names what needed the memory, in "WHAT needs more than the join memory; a read-only
** handle cannot spill it to disk ..."); another kv error mapped (err says "a spill to disk
** failed: ..."). */
int exec_spill_file_open(exec_spill_file *f, kv_db *db, uint32_t family, const char *what,
                         exec_error *err);
/* Add row v[0..n) with hash `hash`. EXEC_OK, EXEC_NOMEM, EXEC_TOOBIG (a row over 2 GiB), or
** a write error. */
int exec_spill_file_add(exec_spill_file *f, uint64_t hash, const cat_value *v, int n,
                        exec_error *err);
/* Write every buffered chunk (after the last add, before reading). */
int exec_spill_file_flush(exec_spill_file *f, exec_error *err);
/* The next row of partition p into v[0..n) (n as added): true with v set (strings point into
** r's buffer, valid until the next call), false at the partition's end or on error (*rc
** set). */
bool exec_spill_file_next(exec_spill_reader *r, exec_spill_file *f, int p, cat_value *v, int n,
                          int *rc, exec_error *err);
/* Start reading a partition again from its first row. */
static inline void exec_spill_reader_rewind(exec_spill_reader *r) {
  r->len = r->pos = r->chunk = 0;
}
/* Whether rows of partition p are left for r (nothing is consumed; *rc set on error). */
bool exec_spill_file_more(exec_spill_reader *r, exec_spill_file *f, int p, int *rc,
                          exec_error *err);
/* Close and remove the file, free the buffers; f is zeroed. */
void exec_spill_file_close(exec_spill_file *f);

/* The kv family whose folder takes a query's temporary files: the key family of the first
** table plan q reads (through its joins, derived tables and set operations). False when it
** reads none (SELECT without FROM). */
bool exec_spill_family(const plan_query *q, uint32_t *family);
/* The same for the tables under join node n. */
bool exec_spill_family_join(const struct plan_join_node *n, uint32_t *family);

#endif /* ROWAN_EXEC_SPILL_FILE_H */
