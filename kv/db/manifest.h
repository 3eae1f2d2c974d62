/*
** kv/db/manifest.h: the MANIFEST, an append-only log of versioned edits that describes the
** store: tables, families and their options, store files added and removed per family,
** the last flushed sequence number per family, the next file number, the WAL segments in
** use. Replayed at open into a kv_version; each edit is one checksummed record appended and
** synced before the change it describes takes effect. When the log grows past a limit it is
** rewritten as one snapshot edit to MANIFEST.tmp, synced, and renamed over MANIFEST.
** docs/FORMAT.md, "MANIFEST".
*/
#ifndef ROWAN_KV_MANIFEST_H
#define ROWAN_KV_MANIFEST_H

#include <stdbool.h>
#include <stdint.h>
#include "kv/env/env.h"

/* A store file as the manifest records it. */
typedef struct kv_file_meta {
  uint64_t number;          /* file number: data/<table_id>/<family_id>/<number>.sf */
  uint64_t size;            /* bytes */
  uint64_t min_seq, max_seq;/* sequence number range of its cells */
  uint64_t cells, rows;
} kv_file_meta;

typedef struct kv_family_meta {
  uint32_t id;              /* store-wide family id, never reused */
  char name[KV_MAX_NAME + 1];
  int max_versions; int64_t ttl_sec; int compression; uint32_t block_size;
  uint64_t flushed_seq;     /* every op with seq <= this is in the family's store files */
  kv_file_meta *files; uint32_t n_files, cap_files; /* ordered oldest to newest */
} kv_family_meta;

typedef struct kv_table_meta {
  uint32_t id;              /* store-wide table id, never reused */
  char name[KV_MAX_NAME + 1];
  kv_family_meta *families; uint32_t n_families;
  /* Region boundaries (docs/KV_REGIONS.md): n_bounds row keys, ascending, each the
  ** exclusive end of one region and the first key of the next, in the SET_REGIONS encoding
  ** (len:varint key, n_bounds times; bounds_len bytes; malloc'ed). NULL / 0: one region. */
  uint8_t *bounds; uint32_t bounds_len, n_bounds;
} kv_table_meta;

/* The whole described state. */
typedef struct kv_version {
  kv_table_meta *tables; uint32_t n_tables;
  uint64_t next_file_number; uint32_t next_table_id, next_family_id;
  uint64_t last_seq;        /* highest sequence number known flushed or logged */
  uint64_t wal_number;      /* oldest WAL segment still needed */
  uint64_t log_segment;     /* the log position the store's files and records depend on
                               (LOG_POSITION, the largest recorded): WAL segment number ... */
  uint64_t log_offset;      /* ... the bytes of whole records it held then ... */
  uint64_t log_seq;         /* ... and the sequence number of its last op (for messages);
                               all 0 when none was recorded (a format 1 MANIFEST) */
} kv_version;

/* One edit. Fields that are unused for a kind are zero. How each applies to a kv_version:
** - CREATE_TABLE copies *table (its families, and files if any); the table id, its name and
**   every family id must be unused (KV_ERR_EXISTS), names non-empty, 1..KV_MAX_FAMILIES
**   families with distinct names (KV_ERR_INVALID); next_table_id / next_family_id are raised
**   past the ids used.
** - DROP_TABLE removes the table (KV_ERR_NOTFOUND if unknown); deleting its files is the
**   caller's business.
** - ADD_FILE inserts the file into its family's list, kept oldest to newest by (max_seq,
**   number) (KV_ERR_EXISTS if the number is listed already); sets flushed_seq when non-zero;
**   raises next_file_number past the number and last_seq to max_seq / flushed_seq.
** - REMOVE_FILE drops file.number from the family (KV_ERR_NOTFOUND if absent).
** - SET_FLUSHED sets the family's flushed_seq (raises last_seq to it).
** - SET_COUNTERS raises each counter to the value given: counters never go back, and a zero
**   leaves a counter as it is.
** - ALTER_TABLE (table_id, table) describes table table_id again: every family it has must
**   be listed with its id and name (KV_ERR_INVALID otherwise; KV_ERR_NOTFOUND for an unknown
**   table) and takes the options listed (its files and flushed_seq stay); a family listed
**   with an unused id and a new name is added, with no files and the flushed_seq listed
**   (KV_ERR_EXISTS when the id is in use); next_family_id is raised past the ids used.
** - SNAPSHOT is written by the manifest itself when it rewrites the log; apply refuses it.
** - LOG_POSITION (log_segment, log_offset, log_seq) raises the version's log position to it
**   when it is later (by segment, then offset): "the store files and records so far hold
**   data whose ops reached WAL segment log_segment up to byte log_offset". kv_open checks
**   that the log it replays reaches that far (a log copied before the MANIFEST and store
**   files is refused); docs/FORMAT.md "LOG_POSITION". */
enum kv_edit_kind {
  KV_EDIT_CREATE_TABLE = 1, /* table (with its families) */
  KV_EDIT_DROP_TABLE = 2,   /* table_id */
  KV_EDIT_ADD_FILE = 3,     /* family_id, file, and flushed_seq if non-zero */
  KV_EDIT_REMOVE_FILE = 4,  /* family_id, file.number */
  KV_EDIT_SET_FLUSHED = 5,  /* family_id, flushed_seq */
  KV_EDIT_SET_COUNTERS = 6, /* next_file_number, next ids, last_seq, wal_number */
  KV_EDIT_SNAPSHOT = 7,     /* the whole version (used when the log is rewritten) */
  KV_EDIT_LOG_POSITION = 8, /* log_segment, log_offset, log_seq (format version 2) */
  KV_EDIT_ALTER_TABLE = 9,  /* table_id, table (families without files) */
  KV_EDIT_SET_REGIONS = 10  /* table_id, bounds (format version 4) */
};

typedef struct kv_manifest kv_manifest;

/* Open or create `dir`/MANIFEST and replay it into *v (caller frees with
** kv_version_free). KV_ERR_CORRUPT names the offset of a damaged record; a torn final
** record is dropped. A MANIFEST of format version 1, 2 or 3 is rewritten in version 4 (the
** same version as one snapshot record) before it is used, so older builds refuse it
** clearly. */
int kv_manifest_open(kv_env *env, const char *dir, bool create, kv_manifest **out,
                     kv_version *v);
/* Apply a group of edits atomically to both the file (one record, synced) and *v: if one
** edit does not apply, nothing is written and *v is unchanged. *v is updated in place after
** the record is synced (pointers into it stay valid unless a table is created or dropped).
** Errors: KV_ERR_NOTFOUND, KV_ERR_EXISTS, KV_ERR_INVALID (see the kinds above), env errors
** (KV_ERR_IO, KV_ERR_NOSPC: *v unchanged; after a failed sync every later call fails),
** KV_ERR_NOMEM. */
typedef struct kv_edit {
  int kind;
  const kv_table_meta *table;  /* CREATE_TABLE, ALTER_TABLE */
  uint32_t table_id, family_id;
  kv_file_meta file;
  uint64_t flushed_seq;
  uint64_t next_file_number, last_seq, wal_number;
  uint32_t next_table_id, next_family_id;
  uint64_t log_segment, log_offset, log_seq; /* LOG_POSITION */
  const uint8_t *bounds; uint32_t bounds_len, n_bounds; /* SET_REGIONS (as kv_table_meta's) */
} kv_edit;
int kv_manifest_apply(kv_manifest *m, kv_version *v, const kv_edit *edits, int n_edits);
int kv_manifest_close(kv_manifest *m);
/* Rewrite the log as one snapshot record once it passes `bytes` (default 1 MiB; tests set
** it lower). */
void kv_manifest_set_rewrite_limit(kv_manifest *m, uint64_t bytes);
/* Current size of the log in bytes. */
uint64_t kv_manifest_size(const kv_manifest *m);
void kv_version_free(kv_version *v);
/* Free what a kv_table_meta owns (its families and their file lists) and zero its counts.
** NULL is a no-op. */
void kv_table_meta_free(kv_table_meta *t);

/* ---- Salvage reading (kv/salvage/salvage.c; docs/KV.md "Salvage") ----
** kv_manifest_salvage reads dir/MANIFEST without changing it (no truncation, no rewrite)
** and hands over every record that checks: its length check, length, checksum and the
** decoding of every edit of its group. A record that fails any check is skipped: the bytes
** up to the next offset where a record checks again (or the end of the file) are reported
** to damage() with the reason (starting "torn tail: " when it is a record cut short, or a
** zero-filled tail, at the very end: a crash's torn write, whose edit was never acted on),
** and the records after them are read. Edits are handed to
** edit() in file order, a group's edits only once the whole group decoded; they are not
** checked against each other (the caller applies them as it can). A SNAPSHOT group (a
** rewritten log) is handed over as one edit of kind KV_EDIT_SNAPSHOT carrying the counters
** (the caller forgets what it knew), then one KV_EDIT_CREATE_TABLE edit per table, with
** its families' flushed_seq and files. The header record (magic and version) is checked
** and not handed over; a damaged one is reported like any record.
** Returns KV_OK (damage is reported, not an error), KV_ERR_NOTFOUND (no MANIFEST), an env
** error, KV_ERR_NOMEM, or the first non-KV_OK status of a callback. */
typedef struct kv_manifest_salvage_cb {
  void *ctx;                                        /* passed back to both */
  int (*edit)(void *ctx, uint64_t off, const kv_edit *e); /* a decoded edit of the record
                                                       at byte `off`; e->table and its
                                                       families valid for the call */
  int (*damage)(void *ctx, uint64_t off, uint64_t len, const char *why); /* bytes skipped */
} kv_manifest_salvage_cb;
int kv_manifest_salvage(kv_env *env, const char *dir, const kv_manifest_salvage_cb *cb);

/* ---- TABLEINFO (docs/FORMAT.md "TABLEINFO") ----
** data/<table_id>/TABLEINFO describes one table: its id, name and families (ids, names,
** options), the bytes of a MANIFEST CREATE_TABLE edit's table without files, framed as one
** MANIFEST record after the 8-byte magic "ROWANTI1". kv_create_table writes it (not synced)
** before the MANIFEST record that creates the table; kv_open checks every table's and
** writes (synced) those missing or damaged (stores made before it existed, or a power cut
** before the system wrote it out); kv_drop_table removes it. kv_open never takes anything
** from it: the MANIFEST is the truth. It is what lets a salvage (kv/salvage/salvage.c) name the
** tables and families of a store whose MANIFEST is lost. */
#define KV_TABLEINFO "TABLEINFO"
/* Write dir/data/<t->id>/TABLEINFO (through TABLEINFO.tmp, renamed over it; with `sync` the
** file is synced before the rename and the table's folder, the data folder and dir after).
** Families' flushed_seq and files are not written. Errors: env errors, KV_ERR_NOMEM. */
int kv_tableinfo_write(kv_env *env, const char *dir, const kv_table_meta *t, bool sync);
/* Read and check the TABLEINFO file at `path` into *out (caller frees with
** kv_table_meta_free; zeroed on failure). Errors: KV_ERR_NOTFOUND (no file), KV_ERR_CORRUPT
** (message naming the file: bad length, checksum, magic or table), env errors,
** KV_ERR_NOMEM. */
int kv_tableinfo_read(kv_env *env, const char *path, kv_table_meta *out);

/* Read `dir`/MANIFEST into *v without writing anything (a read-only open beside a writer,
** kv/db/db_follow.c): no MANIFEST.tmp removal, no truncation. A record cut short or with a bad
** checksum at the very end of the file is taken as not yet written (the writer may be
** appending it) and left out. *bytes (may be NULL; freed by the caller) gets the records
** used, *len their length. Errors: KV_ERR_NOTFOUND (no MANIFEST), KV_ERR_CORRUPT (damage
** before the last record), env errors, KV_ERR_NOMEM. On failure *v is empty, *bytes NULL. */
int kv_manifest_read(kv_env *env, const char *dir, kv_version *v, uint8_t **bytes,
                     uint64_t *len);
/* What the writer recorded in `dir`/MANIFEST since a kv_manifest_read that got bytes[0,len):
** *cap gets the sequence number before which every logical change recorded since happened:
** for each new record group that creates or drops a table, L, and for one that adds files
** without a flush or a compaction (a bulk load at sequence number S), S - 1, where L (or S)
** is the group's SET_COUNTERS last_seq; the least of them; UINT64_MAX when there is none
** (flushes and compactions change where rows are, not which rows there are). A reader
** shows no commit above *cap until it reads those records. *rewritten: the MANIFEST no
** longer begins with those bytes (the writer rewrote it as a snapshot): nothing is known.
** Errors: as kv_manifest_read. */
int kv_manifest_changes_since(kv_env *env, const char *dir, const uint8_t *bytes, uint64_t len,
                              uint64_t *cap, bool *rewritten);
/* Write a new MANIFEST holding the header and one snapshot of *v (with its log position)
** to `dir`/MANIFEST.tmp, sync it, rename it to `dir`/MANIFEST and sync the directory (an
** online backup's copy, kv/db/backup.c). Errors: env errors, KV_ERR_NOMEM. */
int kv_manifest_write_snapshot(kv_env *env, const char *dir, const kv_version *v);

#endif /* ROWAN_KV_MANIFEST_H */
