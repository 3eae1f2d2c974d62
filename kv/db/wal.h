/*
** kv/db/wal.h: the write-ahead log. One WAL per store, as numbered segment files
** (wal-<number>.log). Each committed batch is one record: a 32-byte header (payload length,
** a check of that length, XXH3-64 checksum, first sequence number, commit time) and the
** encoded batch. Replay reads records in order; a torn
** record at the very end of the last segment is dropped (the commit never returned); any
** other damage is KV_ERR_CORRUPT naming the file and byte offset. docs/FORMAT.md, "WAL".
** The WAL knows nothing of memstores: replay hands each record to a callback.
*/
#ifndef ROWAN_KV_WAL_H
#define ROWAN_KV_WAL_H

#include <stdint.h>
#include "kv/env/env.h"

/* A segment open for appending. Used by one thread at a time (the store serializes
** writers and the group-commit sync). */
typedef struct kv_wal kv_wal;

/* Bytes of a record's header before its payload (docs/FORMAT.md, "WAL"). */
#define KV_WAL_HEADER 32u

/* Open a new segment `number` in directory `dir` for appending (created empty). */
int kv_wal_create(kv_env *env, const char *dir, uint64_t number, int sync_mode, kv_wal **out);
/* Append one record holding `payload` (an encoded batch whose first sequence number is
** first_seq, committed at wall-clock time commit_ts ms: ops whose ts is KV_TS_NOW take it).
** The payload is written in the record form (above); a payload that does not decode as a
** batch is written as it is (replay then reports it as corrupt). Does not sync (see
** kv_wal_sync). A failure leaves the WAL unusable (the caller must refuse further writes). */
int kv_wal_append(kv_wal *w, uint64_t first_seq, int64_t commit_ts, const void *payload,
                  size_t len);
/* Make appended records durable (fdatasync; a no-op in KV_SYNC_OFF except at close). */
int kv_wal_sync(kv_wal *w);
/* Write out buffered records and fdatasync, in every sync mode (what a MANIFEST record names
** as the log position must be on disk before it). */
int kv_wal_sync_all(kv_wal *w);
/* Push buffered records to the OS without syncing (KV_SYNC_OFF buffers in memory). */
int kv_wal_write_out(kv_wal *w);
uint64_t kv_wal_number(const kv_wal *w);
/* Bytes of the records appended so far (buffered ones included). Unlike the other calls,
** safe from any thread while the handle is open. */
uint64_t kv_wal_size(const kv_wal *w);
/* Close: write out buffered records and sync, in every sync mode. */
int kv_wal_close(kv_wal *w);

/* Called for each record during replay, in file order, only for records that passed every
** check (checksum and the decoding of every op). `payload` is in the batch form (a record
** form record is expanded first) and valid only during the call.
** A non-KV_OK return stops the replay with it. */
typedef int (*kv_wal_record_fn)(void *ctx, uint64_t first_seq, int64_t commit_ts,
                                const uint8_t *payload, size_t len);
/* Replay segment `number`. `is_last` says it is the newest segment: only there is a torn
** tail record dropped (and the file truncated to the last good record) instead of
** reported as corruption. On KV_OK the replayed content is durable: the segment is synced
** (or truncated and synced), so a record the callback saw survives a later power cut even
** if its writer never synced it. */
int kv_wal_replay(kv_env *env, const char *dir, uint64_t number, int is_last,
                  kv_wal_record_fn fn, void *ctx);
/* kv_wal_replay that also reports, in *dropped, the bytes of a torn or damaged tail it
** dropped (truncated away) from the newest segment: 0 when the segment ended with a whole
** record. */
int kv_wal_replay_ex(kv_env *env, const char *dir, uint64_t number, int is_last,
                     kv_wal_record_fn fn, void *ctx, uint64_t *dropped);

/* Read segment file f (opened KV_OPEN_READ; path for messages) from byte `start` on, as a
** reader beside the store's writer does (kv/db/db_follow.c): nothing is written, truncated or
** synced. Each whole, checked record goes to fn; fn may return KV_WAL_STOP to stop before
** that record (it is not consumed). With is_last (the newest segment, which the writer may
** be appending to) a record cut short or unchecked at the end is not yet written: the
** reading stops there, without an error. *end gets the offset past the last record fn
** took. Errors: KV_ERR_CORRUPT (damage, or a segment shorter than `start`), env errors,
** the first other non-KV_OK status of fn. */
#define KV_WAL_STOP (-1)
int kv_wal_follow(kv_env *env, kv_file *f, const char *path, uint64_t start, int is_last,
                  kv_wal_record_fn fn, void *ctx, uint64_t *end);

/* Salvage reading of the segment file at `path` (kv/salvage/salvage.c; docs/KV.md "Salvage"): the
** file is never changed (no truncation, no sync). Every record that passes replay's checks
** (length check, length, checksum, every op) goes to fn as in replay (batch form, in file
** order); bytes that do not start such a record are skipped up to the next offset where one
** does (or the end of the file) and reported to damage with the reason, and reading goes
** on after them. So a damaged record in the middle of a segment costs that record, never the
** records after it. Returns KV_OK (damage is reported, not an error), an env error
** (KV_ERR_NOTFOUND for a missing file), KV_ERR_NOMEM, or the first non-KV_OK status of a
** callback. */
typedef int (*kv_wal_damage_fn)(void *ctx, uint64_t off, uint64_t len, const char *why);
int kv_wal_salvage(kv_env *env, const char *path, kv_wal_record_fn fn, kv_wal_damage_fn damage,
                   void *ctx);

/* File name of segment `number` in `dir` into buf. */
void kv_wal_path(char *buf, size_t cap, const char *dir, uint64_t number);

/* ---- Batch payload encoding (shared by kv_batch and replay) ----
** payload := count:varint op*
** op      := type:u8 family_id:varint row_len:varint row qual_len:varint qual
**            ts:zigzag-varint [value_len:varint value]   (value only for KV_PUT)
** The i-th op has sequence number first_seq + i. A ts of KV_TS_NOW (INT64_MIN) stands for
** the record's commit_ts. */
typedef struct kv_wal_op {
  uint8_t type; uint32_t family_id;
  const uint8_t *row; uint32_t row_len;
  const uint8_t *qual; uint32_t qual_len;
  int64_t ts;
  const uint8_t *value; uint32_t value_len;
} kv_wal_op;
/* Decode ops one at a time: *p starts at the payload; returns KV_OK and advances, or
** KV_ERR_CORRUPT. count is read first with kv_get_varint. This is the batch form, the one
** kv_batch builds and replay hands to its callback; the record form below is refused. */
int kv_wal_decode_op(const uint8_t **p, const uint8_t *limit, kv_wal_op *op);

/* ---- Record form (what kv_wal_append writes since WAL op format 2) ----
** kv_wal_append writes a batch payload in the record form: an op whose family id, row key
** or timestamp equals the previous op's leaves that field out and sets a flag in its type
** byte instead (the op type stays in bits 0-1). A loaded row's cells then carry the row key
** once, not once per cell. Replay expands a record back to the batch form before the
** callback sees it, and still reads records written in the batch form (format 1). */
#define KV_WAL_SAME_FAMILY 0x10u /* no family_id: the previous op's */
#define KV_WAL_SAME_ROW 0x20u    /* no row_len, row: the previous op's */
#define KV_WAL_SAME_TS 0x40u     /* no ts: the previous op's */

/* Append one record holding the n ops `ops` (decoded batch ops, first_seq being ops[0]'s
** sequence number), in the record form, as kv_wal_append would write their batch: so a
** commit decodes its batch once for the WAL and the memstores. `bound` is the byte size of
** their batch form (the record form is never longer). */
int kv_wal_append_ops(kv_wal *w, uint64_t first_seq, int64_t commit_ts, const kv_wal_op *ops,
                      size_t n, size_t bound);

#endif /* ROWAN_KV_WAL_H */
