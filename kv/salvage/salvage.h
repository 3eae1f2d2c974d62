/*
** kv/salvage/salvage.h: the salvage of a damaged store (RocksDB's RepairDB, SQLite's .recover, at the
** storage layer): kv_salvage reads every cell that can still be read from a store whose
** MANIFEST, store files or WAL are damaged, and writes them into a new store with the same
** tables and families, reporting what it could not read. docs/KV.md, "Salvage", has the
** rules; this header is the contract.
**
** What the new store holds: for each table and family of the old one, every cell of every
** block of its store files that checks (checksum, decoding, order), and every op of every
** WAL record that checks, with their row keys, qualifiers, timestamps, types, values and
** sequence numbers unchanged. Blocks and records that do not check are skipped, and the
** rest of their file is still read. Each source becomes store files of the new store, so a
** read of it merges them exactly as a read of the old store would: the newest version of a
** cell wins by sequence number, tombstones mask what they masked, VERSIONS and TTL apply.
**
** Where the tables come from: the MANIFEST's records that check (a damaged record is
** skipped, the records after it are read), and each table folder's TABLEINFO file (written
** by kv_create_table since it exists, by kv_open for older tables), so a store whose
** MANIFEST is lost still has its table and family names. A table folder with neither gets
** the name "#<table id>" and its families "#<family id>"; WAL ops of a family no source
** names (only possible when the MANIFEST was damaged) go to a table "#family<id>".
** Which files: with a MANIFEST that read whole, the files it names (a file it names that
** is missing is reported); with a damaged or missing MANIFEST, every store file found in
** the family folders, unless a MANIFEST record that checked removed it. Which WAL ops: those
** of segments from the MANIFEST's oldest needed one on (every segment without it), above
** their family's flushed sequence number (without a MANIFEST: above the largest sequence
** number of the family's store files), of tables not dropped.
**
** The old store is only read: its LOCK is taken (so no process writes it meanwhile), and
** nothing else is written, truncated or removed there.
*/
#ifndef ROWAN_KV_SALVAGE_H
#define ROWAN_KV_SALVAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "kv/env/env.h"
#include "kv/kv.h"

/* What a damage entry is about. ORDER KV_SALVAGE_KIND: kv_salvage_kind_name in
** kv/salvage/salvage.c has one name per kind, in this order. */
enum kv_salvage_kind {
  KV_SALVAGE_MANIFEST = 0,   /* MANIFEST bytes that are not a record that checks, or no
                                MANIFEST at all (off = len = 0) */
  KV_SALVAGE_TABLEINFO = 1,  /* a table folder's TABLEINFO missing or damaged */
  KV_SALVAGE_SF_TRAILER = 2, /* a store file whose trailer does not check (its blocks are
                                found by their framing) */
  KV_SALVAGE_SF_BLOOM = 3,   /* a store file's bloom filter does not check (nothing lost) */
  KV_SALVAGE_SF_INDEX = 4,   /* a store file's block index does not check (its blocks are
                                found by their framing) */
  KV_SALVAGE_SF_BLOCK = 5,   /* store-file bytes not read: one block (cells and rows known
                                from the index) or a range of bytes */
  KV_SALVAGE_SF_MISSING = 6, /* a store file the MANIFEST names is not there (or cannot be
                                opened) */
  KV_SALVAGE_WAL = 7,        /* WAL bytes that are not a record that checks */
  KV_SALVAGE_NAMES = 8,      /* a table or family whose name no source gives */
  KV_SALVAGE_KIND_COUNT
};

typedef struct kv_salvage_damage {
  int kind;              /* enum kv_salvage_kind */
  char path[512];        /* the file (under the old store's directory); the folder for
                            KV_SALVAGE_NAMES */
  uint64_t off;          /* first byte not read (0 when the whole file) */
  uint64_t len;          /* bytes not read (0 when not a byte range: a missing file, a name) */
  int64_t cells;         /* cells lost, -1 when it cannot tell */
  int64_t rows;          /* rows with a cell lost (a row split across two blocks counts in
                            both), -1 when it cannot tell */
  char why[320];         /* the reason ("checksum mismatch", ...) */
} kv_salvage_damage;

typedef struct kv_salvage_report {
  kv_salvage_damage *damage;  /* entries in the order found (malloc'ed; kv_salvage_report_free) */
  size_t n_damage, cap_damage;/* entries, allocated */
  bool manifest_whole;        /* a MANIFEST was there and every record of it checked (a torn
                                 tail, a record cut short by a crash, aside) */
  uint32_t tables;            /* tables written to the new store */
  uint32_t tables_unnamed;    /* of which named "#..." (no source gave their name) */
  uint64_t files_read;        /* store files read (damaged or not) */
  uint64_t files_damaged;     /* of which with some damage */
  uint64_t files_ignored;     /* store files found that the MANIFEST (read whole) does not
                                 name: left by a crash, not part of the store */
  uint64_t blocks_read;       /* store-file blocks whose cells were copied */
  uint64_t blocks_lost;       /* blocks that did not check (with an index to count them) */
  uint64_t cells_read;        /* cells copied from store files */
  uint64_t wal_segments;      /* WAL segments read */
  uint64_t wal_records;       /* WAL records whose ops were copied or skipped as flushed */
  uint64_t wal_ops;           /* ops copied from the WAL */
  uint64_t wal_ops_flushed;   /* ops skipped: at or below their family's flushed sequence */
  uint64_t wal_ops_dropped;   /* ops skipped: their table was dropped (or no source names
                                 their family while the MANIFEST read whole) */
  uint64_t last_seq;          /* the largest sequence number copied */
} kv_salvage_report;

/* Salvage the store in directory `src` into a new store in directory `dst`, both through
** `env` (NULL: POSIX). dst must not exist or be an empty directory; it is created (its
** parent must exist, as for kv_open) and holds a complete store when this returns KV_OK:
** kv_open opens it. *rep (zeroed here) gets what was read and every damage found; free it
** with kv_salvage_report_free whatever the result.
** Returns KV_OK when the new store was written, damaged or not (the report says what was
** lost). Errors: KV_ERR_NOTFOUND (src is not a directory), KV_ERR_LOCKED (another process
** or handle has src open), KV_ERR_EXISTS (dst holds something), KV_ERR_INVALID (src and dst
** the same), env errors writing dst (KV_ERR_IO, KV_ERR_NOSPC), KV_ERR_NOMEM. On an error,
** dst may hold part of a store: remove it before trying again. */
int kv_salvage(kv_env *env, const char *src, const char *dst, kv_salvage_report *rep);
void kv_salvage_report_free(kv_salvage_report *rep);
/* The kind's name ("store file block"); never NULL. */
const char *kv_salvage_kind_name(int kind);

#endif /* ROWAN_KV_SALVAGE_H */
