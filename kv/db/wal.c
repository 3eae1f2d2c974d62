/*
** kv/db/wal.c: the write-ahead log (kv/db/wal.h): appending records to a segment in the three
** sync modes, replaying a segment with torn-tail handling, and decoding batch ops.
** docs/FORMAT.md, "WAL" gives every byte.
**
** Record = 32-byte header + payload:
**   0  u32 length        payload bytes (<= KV_MAX_BATCH)
**   4  u32 length_check  low 32 bits of XXH3-64 of bytes [0, 4)
**   8  u64 checksum      XXH3-64 of bytes [16, 32 + length): first_seq, commit_ts, payload
**  16  u64 first_seq     sequence number of the payload's first op
**  24  i64 commit_ts     wall-clock ms of the commit (stands in for KV_TS_NOW)
** All integers little-endian. The length has its own check so that a damaged length in the
** middle of a segment is reported as corruption instead of looking like a torn tail.
**
** The payload is written in the record form (kv/db/wal.h): an op leaves out the family id, row
** key or timestamp it shares with the previous op. Replay reads both that and the batch form
** older builds wrote, and hands the callback the batch form.
**
** Replay validates a record completely (header, checksum, every op of the payload) before
** handing it to the callback, so a callback never sees damaged bytes. It does not know what
** the ops mean, nor which segments exist (the store lists the directory).
*/
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "kv/util/cell.h"
#include "kv/util/coding.h"
#include "kv/util/status.h"
#include "kv/db/wal.h"

#define WAL_HEADER KV_WAL_HEADER
#define OFF_BUFFER_LIMIT (256u << 10) /* KV_SYNC_OFF: bytes buffered before a write(2) */
#define SCRATCH_LIMIT (1u << 20)      /* records up to this are written with one append */
#define ENC_KEEP (4u << 20)           /* the record-form buffer is kept up to this size */
#define OP_FLAGS (KV_WAL_SAME_FAMILY | KV_WAL_SAME_ROW | KV_WAL_SAME_TS)

struct kv_wal {
  kv_env *env;          /* file system */
  kv_file *f;           /* the segment, opened for appending */
  char *path;           /* segment path (owned) */
  uint64_t number;      /* segment number */
  int sync_mode;        /* enum kv_sync_mode */
  _Atomic uint64_t size; /* bytes of records appended, buffered ones included (written by
                           the appender, read by any thread: kv_wal_size) */
  uint8_t *buf;         /* KV_SYNC_OFF: pending records; other modes: one record's scratch */
  size_t buf_len;       /* bytes pending in buf (always 0 outside KV_SYNC_OFF) */
  size_t buf_cap;       /* bytes allocated in buf */
  XXH3_state_t *xxh;    /* checksum state, reused per record */
  uint8_t *enc;         /* the record form of the payload being appended */
  size_t enc_cap;       /* bytes allocated in enc */
  int failed;           /* status of the first failed write or sync; KV_OK while healthy */
};

/* File name of segment `number` in `dir` into buf (truncated to cap). */
void kv_wal_path(char *buf, size_t cap, const char *dir, uint64_t number) {
  snprintf(buf, cap, "%s/wal-%llu.log", dir, (unsigned long long)number);
}

/* Open a new, empty segment. On success *out is the handle (free with kv_wal_close); on
** failure *out is NULL and the env's status is returned (KV_ERR_IO, KV_ERR_NOSPC,
** KV_ERR_NOTFOUND for a missing directory, KV_ERR_NOMEM, KV_ERR_INVALID for a bad mode).
** The segment's directory entry is made durable here (sync_dir), so a record synced into
** it later survives a power cut. */
int kv_wal_create(kv_env *env, const char *dir, uint64_t number, int sync_mode, kv_wal **out) {
  *out = NULL;
  if (sync_mode < KV_SYNC_FULL || sync_mode > KV_SYNC_OFF)
    return kv_error(KV_ERR_INVALID, "WAL: unknown sync mode %d", sync_mode);
  char path[4096];
  kv_wal_path(path, sizeof path, dir, number);
  kv_wal *w = calloc(1, sizeof *w);
  if (!w || !(w->path = strdup(path)) || !(w->xxh = XXH3_createState())) {
    if (w) { free(w->path); free(w); }
    return kv_error(KV_ERR_NOMEM, "WAL %s: out of memory", path);
  }
  int rc = env->open(env, path, KV_OPEN_WRITE | KV_OPEN_TRUNCATE, &w->f);
  if (rc == KV_OK) rc = env->sync_dir(env, dir);
  if (rc != KV_OK) {
    if (w->f) env->close(w->f);
    XXH3_freeState(w->xxh);
    free(w->path);
    free(w);
    return rc;
  }
  w->env = env;
  w->number = number;
  w->sync_mode = sync_mode;
  *out = w;
  return KV_OK;
}

static int reserve(kv_wal *w, size_t need) {
  if (need <= w->buf_cap) return KV_OK;
  size_t nc = w->buf_cap ? w->buf_cap : 4096;
  while (nc < need) nc *= 2;
  uint8_t *nb = realloc(w->buf, nc);
  if (!nb) return kv_error(KV_ERR_NOMEM, "WAL %s: out of memory", w->path);
  w->buf = nb;
  w->buf_cap = nc;
  return KV_OK;
}

static int unusable(const kv_wal *w) {
  return kv_error(w->failed, "WAL %s is unusable after an earlier write error", w->path);
}

/* Write the pending KV_SYNC_OFF buffer to the file. */
static int flush_buffer(kv_wal *w) {
  if (w->buf_len == 0) return KV_OK;
  int rc = w->env->append(w->f, w->buf, w->buf_len);
  w->buf_len = 0;
  if (rc != KV_OK) w->failed = rc;
  return rc;
}

static size_t compact(kv_wal *w, const uint8_t *payload, size_t len);
static size_t compact_ops(kv_wal *w, const kv_wal_op *ops, size_t n, size_t bound);
static int write_record(kv_wal *w, uint64_t first_seq, int64_t commit_ts, const void *payload,
                        size_t len);

/* Append one record. See kv/db/wal.h. Errors: KV_ERR_TOOBIG (payload over KV_MAX_BATCH; the
** WAL stays usable), KV_ERR_IO / KV_ERR_NOSPC / KV_ERR_NOMEM (the WAL is then unusable:
** every later call fails), KV_MISUSE for a NULL handle. */
int kv_wal_append(kv_wal *w, uint64_t first_seq, int64_t commit_ts, const void *payload,
                  size_t len) {
  if (!w) return kv_error(KV_MISUSE, "WAL: NULL handle");
  if (w->failed) return unusable(w);
  if (len > KV_MAX_BATCH)
    return kv_error(KV_ERR_TOOBIG, "WAL %s: batch of %zu bytes over the maximum %u", w->path,
                    len, KV_MAX_BATCH);
  size_t clen = len ? compact(w, payload, len) : 0;
  return clen ? write_record(w, first_seq, commit_ts, w->enc, clen)
              : write_record(w, first_seq, commit_ts, payload, len);
}

/* Append the record of decoded ops. See kv/db/wal.h. Errors as kv_wal_append. */
int kv_wal_append_ops(kv_wal *w, uint64_t first_seq, int64_t commit_ts, const kv_wal_op *ops,
                      size_t n, size_t bound) {
  if (!w) return kv_error(KV_MISUSE, "WAL: NULL handle");
  if (w->failed) return unusable(w);
  if (bound > KV_MAX_BATCH)
    return kv_error(KV_ERR_TOOBIG, "WAL %s: batch of %zu bytes over the maximum %u", w->path,
                    bound, KV_MAX_BATCH);
  size_t clen = compact_ops(w, ops, n, bound);
  if (!clen) {
    w->failed = KV_ERR_NOMEM;
    return kv_error(KV_ERR_NOMEM, "WAL %s: out of memory", w->path);
  }
  return write_record(w, first_seq, commit_ts, w->enc, clen);
}

/* Write one record (the payload as given). */
static int write_record(kv_wal *w, uint64_t first_seq, int64_t commit_ts, const void *payload,
                        size_t len) {
  uint8_t h[WAL_HEADER];
  kv_put_u32le(h, (uint32_t)len);
  kv_put_u32le(h + 4, (uint32_t)XXH3_64bits(h, 4));
  kv_put_u64le(h + 16, first_seq);
  kv_put_u64le(h + 24, (uint64_t)commit_ts);
  XXH3_64bits_reset(w->xxh);
  XXH3_64bits_update(w->xxh, h + 16, 16);
  if (len) XXH3_64bits_update(w->xxh, payload, len);
  kv_put_u64le(h + 8, XXH3_64bits_digest(w->xxh));

  size_t rec = WAL_HEADER + len;
  int rc = KV_OK;
  if (w->sync_mode == KV_SYNC_OFF && rec <= OFF_BUFFER_LIMIT) {
    if (w->buf_len + rec > OFF_BUFFER_LIMIT) rc = flush_buffer(w);
    if (rc == KV_OK) rc = reserve(w, w->buf_len + rec);
    if (rc == KV_OK) {
      memcpy(w->buf + w->buf_len, h, WAL_HEADER);
      if (len) memcpy(w->buf + w->buf_len + WAL_HEADER, payload, len);
      w->buf_len += rec;
    }
  } else {
    /* Write it now: everything pending first, then the record in one append when small. */
    if (w->sync_mode == KV_SYNC_OFF) rc = flush_buffer(w);
    if (rc == KV_OK && rec <= SCRATCH_LIMIT) {
      rc = reserve(w, rec);
      if (rc == KV_OK) {
        memcpy(w->buf, h, WAL_HEADER);
        if (len) memcpy(w->buf + WAL_HEADER, payload, len);
        rc = w->env->append(w->f, w->buf, rec);
      }
    } else if (rc == KV_OK) {
      rc = w->env->append(w->f, h, WAL_HEADER);
      if (rc == KV_OK) rc = w->env->append(w->f, payload, len);
    }
  }
  if (w->enc_cap > ENC_KEEP) { /* a huge batch's buffer is not kept */
    free(w->enc);
    w->enc = NULL;
    w->enc_cap = 0;
  }
  if (rc != KV_OK) {
    w->failed = rc;
    return rc;
  }
  atomic_fetch_add_explicit(&w->size, rec, memory_order_relaxed);
  return KV_OK;
}

/* Make appended records durable. KV_SYNC_FULL and KV_SYNC_NORMAL: fdatasync now (the store
** calls it per commit group in full mode, at rotation and flush in normal mode).
** KV_SYNC_OFF: nothing (kv_wal_close syncs). A failed sync makes the WAL unusable. */
int kv_wal_sync(kv_wal *w) {
  if (!w) return kv_error(KV_MISUSE, "WAL: NULL handle");
  if (w->failed) return unusable(w);
  if (w->sync_mode == KV_SYNC_OFF) return KV_OK;
  int rc = w->env->sync(w->f);
  if (rc != KV_OK) w->failed = rc;
  return rc;
}

/* KV_SYNC_OFF: write buffered records to the file (not synced). Other modes: nothing to
** do. Errors as kv_wal_append. */
int kv_wal_write_out(kv_wal *w) {
  if (!w) return kv_error(KV_MISUSE, "WAL: NULL handle");
  if (w->failed) return unusable(w);
  return flush_buffer(w);
}

/* Write out buffered records and sync them, whatever the sync mode. Errors as kv_wal_sync. */
int kv_wal_sync_all(kv_wal *w) {
  if (!w) return kv_error(KV_MISUSE, "WAL: NULL handle");
  if (w->failed) return unusable(w);
  int rc = flush_buffer(w);
  if (rc == KV_OK) rc = w->env->sync(w->f);
  if (rc != KV_OK) w->failed = rc;
  return rc;
}

/* Segment number of the WAL. */
uint64_t kv_wal_number(const kv_wal *w) { return w->number; }

/* Bytes of records appended to this segment (buffered ones included). */
uint64_t kv_wal_size(const kv_wal *w) {
  return atomic_load_explicit(&w->size, memory_order_relaxed);
}

/* Write out buffered records, sync (every mode) and close; frees w even on failure and
** returns the first error met (an earlier write failure included). NULL is a no-op. */
int kv_wal_close(kv_wal *w) {
  if (!w) return KV_OK;
  int rc = w->failed ? unusable(w) : KV_OK;
  if (rc == KV_OK) rc = flush_buffer(w);
  if (rc == KV_OK) rc = w->env->sync(w->f);
  w->env->close(w->f);
  XXH3_freeState(w->xxh);
  free(w->buf);
  free(w->enc);
  free(w->path);
  free(w);
  return rc;
}

/* ---- ops ---- */

static int op_error(const char *what) { return kv_error(KV_ERR_CORRUPT, "bad batch op: %s", what); }

/* Decode one op from [*p, limit); on success advance *p. See kv/db/wal.h. Pointers in *op
** point into the payload. KV_ERR_CORRUPT (message "bad batch op: ...") on truncated input,
** an unknown type, or a length over its documented maximum. */
/* The fields of one op after its type byte at *p (t: that byte; its KV_WAL_SAME_* flags take
** the family, row key or timestamp from prev, which then is not NULL). */
static int decode_fields(const uint8_t **p, const uint8_t *limit, unsigned t,
                         const kv_wal_op *prev, kv_wal_op *op) {
  const uint8_t *q = *p + 1;
  uint64_t v;
  memset(op, 0, sizeof *op);
  op->type = (uint8_t)(t & 3u);
  if (t & KV_WAL_SAME_FAMILY) {
    op->family_id = prev->family_id;
  } else {
    if (!(q = kv_get_varint(q, limit, &v)) || v > UINT32_MAX) return op_error("bad family id");
    op->family_id = (uint32_t)v;
  }
  if (t & KV_WAL_SAME_ROW) {
    op->row = prev->row;
    op->row_len = prev->row_len;
  } else {
    if (!(q = kv_get_varint(q, limit, &v)) || v > KV_MAX_ROW_KEY || v > (uint64_t)(limit - q))
      return op_error("bad row key length");
    op->row = q;
    op->row_len = (uint32_t)v;
    q += v;
  }
  if (!(q = kv_get_varint(q, limit, &v)) || v > KV_MAX_QUALIFIER || v > (uint64_t)(limit - q))
    return op_error("bad qualifier length");
  op->qual = q;
  op->qual_len = (uint32_t)v;
  q += v;
  if (t & KV_WAL_SAME_TS) {
    op->ts = prev->ts;
  } else if (kv_is_zz_min(q, limit)) { /* KV_TS_NOW, what every SQL write's op holds */
    op->ts = INT64_MIN;
    q += KV_ZZ_MIN_LEN;
  } else {
    if (!(q = kv_get_varint(q, limit, &v))) return op_error("bad timestamp");
    op->ts = kv_unzigzag(v);
  }
  if (op->type == KV_PUT) {
    if (!(q = kv_get_varint(q, limit, &v)) || v > KV_MAX_VALUE || v > (uint64_t)(limit - q))
      return op_error("bad value length");
    op->value = q;
    op->value_len = (uint32_t)v;
    q += v;
  }
  *p = q;
  return KV_OK;
}

int kv_wal_decode_op(const uint8_t **p, const uint8_t *limit, kv_wal_op *op) {
  memset(op, 0, sizeof *op);
  if (*p >= limit) return op_error("truncated before type");
  if (**p > KV_DELETE_FAMILY) return op_error("unknown type");
  return decode_fields(p, limit, **p, NULL, op);
}

/* Decode one op of a record payload: the batch form, or the record form whose flags take
** fields from `prev` (the payload's previous op; NULL for its first op). KV_ERR_CORRUPT as
** kv_wal_decode_op, or for a flag on the first op or a type byte with unknown bits. */
static int decode_rec_op(const uint8_t **p, const uint8_t *limit, const kv_wal_op *prev,
                         kv_wal_op *op) {
  if (*p >= limit) return op_error("truncated before type");
  unsigned t = **p;
  if (!(t & OP_FLAGS) || (t & ~(OP_FLAGS | 3u))) return kv_wal_decode_op(p, limit, op);
  if (!prev) return op_error("the first op takes a field from an op before it");
  return decode_fields(p, limit, t, prev, op);
}

/* Bytes of op in the batch form. */
static size_t batch_op_len(const kv_wal_op *op) {
  return 1 + (size_t)kv_varint_len(op->family_id) + (size_t)kv_varint_len(op->row_len) +
         op->row_len + (size_t)kv_varint_len(op->qual_len) + op->qual_len +
         (size_t)kv_varint_len(kv_zigzag(op->ts)) +
         (op->type == KV_PUT ? (size_t)kv_varint_len(op->value_len) + op->value_len : 0);
}

/* Write op at p in the record form (flags for the fields equal to prev's; prev NULL: none);
** returns the end. */
static uint8_t *put_op(uint8_t *p, const kv_wal_op *op, const kv_wal_op *prev) {
  unsigned t = op->type;
  if (prev) {
    if (op->family_id == prev->family_id) t |= KV_WAL_SAME_FAMILY;
    if (op->row_len == prev->row_len &&
        kv_bytes_cmp(op->row, op->row_len, prev->row, prev->row_len) == 0)
      t |= KV_WAL_SAME_ROW;
    if (op->ts == prev->ts) t |= KV_WAL_SAME_TS;
  }
  *p++ = (uint8_t)t;
  if (!(t & KV_WAL_SAME_FAMILY)) p = kv_put_varint(p, op->family_id);
  if (!(t & KV_WAL_SAME_ROW)) {
    p = kv_put_varint(p, op->row_len);
    kv_copy(p, op->row, op->row_len);
    p += op->row_len;
  }
  p = kv_put_varint(p, op->qual_len);
  kv_copy(p, op->qual, op->qual_len);
  p += op->qual_len;
  if (!(t & KV_WAL_SAME_TS)) p = kv_put_varint(p, kv_zigzag(op->ts));
  if (op->type == KV_PUT) {
    p = kv_put_varint(p, op->value_len);
    kv_copy(p, op->value, op->value_len);
    p += op->value_len;
  }
  return p;
}

/* The record form of a batch payload into w->enc; returns its length, or 0 when the payload
** does not decode as a batch (it is then written as it is) or memory is short. Never longer
** than the batch form: a flag only leaves a field out, and varints are written shortest. */
static size_t compact(kv_wal *w, const uint8_t *payload, size_t len) {
  if (len > w->enc_cap) {
    uint8_t *nb = realloc(w->enc, len);
    if (!nb) return 0;
    w->enc = nb;
    w->enc_cap = len;
  }
  const uint8_t *p = payload, *limit = payload + len;
  uint64_t count;
  if (!(p = kv_get_varint(p, limit, &count)) || count > len) return 0;
  uint8_t *o = kv_put_varint(w->enc, count);
  kv_wal_op ops[2];
  for (uint64_t i = 0; i < count; i++) {
    kv_wal_op *op = &ops[i & 1];
    if (kv_wal_decode_op(&p, limit, op) != KV_OK) return 0;
    if ((size_t)(o - w->enc) + batch_op_len(op) > len) return 0; /* cannot happen */
    o = put_op(o, op, i ? &ops[(i - 1) & 1] : NULL);
  }
  if (p != limit) return 0;
  return (size_t)(o - w->enc);
}

/* The record form of n decoded ops into w->enc (bound: bytes of their batch form); returns
** its length, or 0 when memory is short. */
static size_t compact_ops(kv_wal *w, const kv_wal_op *ops, size_t n, size_t bound) {
  if (bound > w->enc_cap) {
    uint8_t *nb = realloc(w->enc, bound);
    if (!nb) return 0;
    w->enc = nb;
    w->enc_cap = bound;
  }
  uint8_t *o = kv_put_varint(w->enc, n);
  for (size_t i = 0; i < n; i++) o = put_op(o, &ops[i], i ? &ops[i - 1] : NULL);
  return (size_t)(o - w->enc);
}

/* Check that a record payload is exactly count ops (either form), and give the length of
** its batch form in *plain and whether any op is in the record form in *flagged.
** KV_ERR_CORRUPT (message set) if not, or if the batch form would pass KV_MAX_BATCH. */
static int check_payload(const uint8_t *p, size_t len, size_t *plain, int *flagged) {
  const uint8_t *limit = p + len;
  uint64_t count = 0;
  if (!(p = kv_get_varint(p, limit, &count))) return kv_error(KV_ERR_CORRUPT, "bad batch op count");
  size_t total = (size_t)kv_varint_len(count);
  kv_wal_op ops[2];
  *flagged = 0;
  for (uint64_t i = 0; i < count; i++) {
    if (p < limit && (*p & OP_FLAGS)) *flagged = 1;
    kv_wal_op *op = &ops[i & 1];
    if (decode_rec_op(&p, limit, i ? &ops[(i - 1) & 1] : NULL, op) != KV_OK)
      return KV_ERR_CORRUPT;
    total += batch_op_len(op);
    if (total > KV_MAX_BATCH)
      return kv_error(KV_ERR_CORRUPT, "the ops take more than %u bytes in the batch form",
                      KV_MAX_BATCH);
  }
  if (p != limit)
    return kv_error(KV_ERR_CORRUPT, "%zu bytes after the last batch op", (size_t)(limit - p));
  *plain = total;
  return KV_OK;
}

/* Expand a checked record payload to the batch form in out (plain bytes, from
** check_payload). */
static void expand(const uint8_t *p, size_t len, uint8_t *out) {
  const uint8_t *limit = p + len;
  uint64_t count = 0;
  p = kv_get_varint(p, limit, &count);
  out = kv_put_varint(out, count);
  kv_wal_op ops[2];
  for (uint64_t i = 0; i < count; i++) {
    kv_wal_op *op = &ops[i & 1];
    decode_rec_op(&p, limit, i ? &ops[(i - 1) & 1] : NULL, op);
    out = put_op(out, op, NULL);
  }
}

/* ---- replay ---- */

static int corrupt_at(const char *path, uint64_t off, const char *why) {
  return kv_error(KV_ERR_CORRUPT, "corrupt WAL record in %s at byte offset %llu: %s", path,
                  (unsigned long long)off, why);
}

#define READ_CHUNK (1u << 20) /* replay reads the segment in windows of this size */

/* A read window over the segment, so replay does one pread per MiB, not two per record. */
typedef struct reader {
  kv_env *env;           /* file system */
  kv_file *f;            /* the segment */
  const char *path;      /* for messages */
  uint64_t size;         /* file size */
  uint8_t *buf;          /* window bytes */
  size_t cap;            /* allocated in buf */
  uint64_t win_off;      /* file offset of buf[0] */
  size_t win_len;        /* valid bytes in buf */
} reader;

/* Point *out at n bytes at offset off. REQUIRES: off + n <= r->size. */
static int fetch(reader *r, uint64_t off, size_t n, const uint8_t **out) {
  if (off >= r->win_off && off + n <= r->win_off + r->win_len) {
    *out = r->buf + (off - r->win_off);
    return KV_OK;
  }
  size_t want = n > READ_CHUNK ? n : READ_CHUNK;
  if ((uint64_t)want > r->size - off) want = (size_t)(r->size - off);
  if (want > r->cap) {
    uint8_t *nb = realloc(r->buf, want);
    if (!nb) return kv_error(KV_ERR_NOMEM, "WAL replay %s: out of memory", r->path);
    r->buf = nb;
    r->cap = want;
  }
  r->win_len = 0;
  size_t got;
  int rc = r->env->read(r->f, off, r->buf, want, &got);
  if (rc != KV_OK) return rc;
  if (got != want) return kv_error(KV_ERR_IO, "read %s: short read at offset %llu", r->path,
                                   (unsigned long long)off);
  r->win_off = off;
  r->win_len = want;
  *out = r->buf;
  return KV_OK;
}

/* Are bytes [off, size) all zero? 1 yes, 0 no (or a read error, in *rc). */
static int all_zero(reader *r, uint64_t off, int *rc) {
  while (off < r->size) {
    size_t n = r->size - off < READ_CHUNK ? (size_t)(r->size - off) : READ_CHUNK;
    const uint8_t *p;
    if ((*rc = fetch(r, off, n, &p)) != KV_OK) return 0;
    for (size_t i = 0; i < n; i++)
      if (p[i]) return 0;
    off += n;
  }
  return 1;
}

/* Cut the segment back to its last good record and make that durable. */
static int truncate_tail(kv_env *env, const char *path, uint64_t off) {
  kv_file *f;
  int rc = env->open(env, path, KV_OPEN_WRITE, &f);
  if (rc != KV_OK) return rc;
  rc = env->truncate(f, off);
  if (rc == KV_OK) rc = env->sync(f);
  int rc2 = env->close(f);
  return rc != KV_OK ? rc : rc2;
}

/* Replay one segment. See kv/db/wal.h. Returns KV_OK, KV_ERR_NOTFOUND (no such segment),
** KV_ERR_CORRUPT ("corrupt WAL record in <path> at byte offset <n>: <why>"), an env error,
** or the first non-KV_OK status of fn. A dropped torn tail is truncated away and synced. */
int kv_wal_replay(kv_env *env, const char *dir, uint64_t number, int is_last,
                  kv_wal_record_fn fn, void *ctx) {
  uint64_t dropped;
  return kv_wal_replay_ex(env, dir, number, is_last, fn, ctx, &dropped);
}

/* Read the records of r from byte `off` on, handing each whole, checked record to fn.
** *off ends past the last record handed over (before one fn refused with KV_WAL_STOP: then
** *stopped is set); *torn is set when a torn tail (is_last only) ended the reading. */
static int scan_records(reader *r, uint64_t *offp, int is_last, kv_wal_record_fn fn, void *ctx,
                        int *torn, int *stopped) {
  const char *path = r->path;
  uint64_t off = *offp;
  int rc = KV_OK;
  uint8_t *x_buf = NULL; /* a record-form payload expanded to the batch form */
  size_t x_cap = 0;
  *torn = 0;
  *stopped = 0;
  while (rc == KV_OK && off < r->size) {
    uint64_t rem = r->size - off;
    const uint8_t *h;
    if (rem < WAL_HEADER) {
      if (is_last) *torn = 1;
      else rc = corrupt_at(path, off, "record header cut short at the end of a segment");
      break;
    }
    if ((rc = fetch(r, off, WAL_HEADER, &h)) != KV_OK) break;
    uint32_t len = kv_get_u32le(h);
    if (kv_get_u32le(h + 4) != (uint32_t)XXH3_64bits(h, 4)) {
      if (is_last && all_zero(r, off, &rc)) *torn = 1;
      else if (rc == KV_OK) rc = corrupt_at(path, off, "bad record length (length check mismatch)");
      break;
    }
    if (len > KV_MAX_BATCH) { rc = corrupt_at(path, off, "record length over the maximum"); break; }
    if ((uint64_t)len > rem - WAL_HEADER) {
      if (is_last) *torn = 1;
      else rc = corrupt_at(path, off, "record runs past the end of a segment");
      break;
    }
    /* The whole record, header and payload, in one window. */
    if ((rc = fetch(r, off, WAL_HEADER + (size_t)len, &h)) != KV_OK) break;
    if (kv_get_u64le(h + 8) != XXH3_64bits(h + 16, 16 + (size_t)len)) {
      if (is_last && off + WAL_HEADER + len == r->size) *torn = 1;
      else rc = corrupt_at(path, off, "checksum mismatch");
      break;
    }
    size_t plain = 0;
    int flagged = 0;
    if (check_payload(h + WAL_HEADER, len, &plain, &flagged) != KV_OK) {
      char why[256];
      snprintf(why, sizeof why, "%s", kv_errmsg());
      rc = corrupt_at(path, off, why);
      break;
    }
    const uint8_t *pay = h + WAL_HEADER;
    size_t pay_len = len;
    if (flagged) { /* a record-form record: the callback gets the batch form */
      if (plain > x_cap) {
        uint8_t *nx = realloc(x_buf, plain);
        if (!nx) { rc = kv_error(KV_ERR_NOMEM, "WAL replay %s: out of memory", path); break; }
        x_buf = nx;
        x_cap = plain;
      }
      expand(h + WAL_HEADER, len, x_buf);
      pay = x_buf;
      pay_len = plain;
    }
    rc = fn(ctx, kv_get_u64le(h + 16), (int64_t)kv_get_u64le(h + 24), pay, pay_len);
    if (rc == KV_WAL_STOP) {
      rc = KV_OK;
      *stopped = 1;
      break;
    }
    off += WAL_HEADER + len;
  }
  free(x_buf);
  *offp = off;
  return rc;
}

int kv_wal_replay_ex(kv_env *env, const char *dir, uint64_t number, int is_last,
                     kv_wal_record_fn fn, void *ctx, uint64_t *dropped) {
  *dropped = 0;
  char path[4096];
  kv_wal_path(path, sizeof path, dir, number);
  reader r = {env, NULL, path, 0, NULL, 0, 0, 0};
  int rc = env->open(env, path, KV_OPEN_READ, &r.f);
  if (rc != KV_OK) return rc;
  uint64_t off = 0;
  rc = env->size(r.f, &r.size);
  int torn = 0, stopped = 0;
  if (rc == KV_OK) rc = scan_records(&r, &off, is_last, fn, ctx, &torn, &stopped);
  free(r.buf);
  /* What the callback saw must survive a later power cut even if the writer died before
  ** syncing it (a process crash in normal or off mode, or a failed sync): sync the segment.
  ** fdatasync works on a read-only descriptor. */
  if (rc == KV_OK && !torn && off > 0) rc = env->sync(r.f);
  env->close(r.f);
  if (rc == KV_OK && torn) rc = truncate_tail(env, path, off);
  if (rc == KV_OK && torn) *dropped = r.size - off;
  return rc;
}

int kv_wal_follow(kv_env *env, kv_file *f, const char *path, uint64_t start, int is_last,
                  kv_wal_record_fn fn, void *ctx, uint64_t *end) {
  *end = start;
  reader r = {env, f, path, 0, NULL, 0, 0, 0};
  int rc = env->size(f, &r.size);
  if (rc != KV_OK) return rc;
  if (start > r.size)
    return kv_error(KV_ERR_CORRUPT, "WAL segment %s is %llu bytes, shorter than the %llu bytes "
                    "read from it before", path, (unsigned long long)r.size,
                    (unsigned long long)start);
  uint64_t off = start;
  int torn = 0, stopped = 0;
  rc = scan_records(&r, &off, is_last, fn, ctx, &torn, &stopped);
  free(r.buf);
  *end = off;
  return rc;
}

/* ---- salvage reading (kv/db/wal.h) ---- */

/* Does a record that passes every check start at buf[off]? *len gets its payload length,
** *why (when it does not) the first check it failed. */
static int salvage_record_at(const uint8_t *buf, uint64_t size, uint64_t off, uint32_t *len,
                             const char **why) {
  uint64_t rem = size - off;
  const uint8_t *h = buf + off;
  if (rem < WAL_HEADER) { *why = "record header cut short at the end of the segment"; return 0; }
  if (kv_get_u32le(h + 4) != (uint32_t)XXH3_64bits(h, 4)) {
    *why = "bad record length (length check mismatch)";
    return 0;
  }
  uint32_t n = kv_get_u32le(h);
  if (n > KV_MAX_BATCH) { *why = "record length over the maximum"; return 0; }
  if ((uint64_t)n > rem - WAL_HEADER) { *why = "record runs past the end of the segment"; return 0; }
  if (kv_get_u64le(h + 8) != XXH3_64bits(h + 16, 16 + (size_t)n)) { *why = "checksum mismatch"; return 0; }
  size_t plain;
  int flagged;
  if (check_payload(h + WAL_HEADER, n, &plain, &flagged) != KV_OK) {
    *why = "a batch op does not decode";
    return 0;
  }
  *len = n;
  return 1;
}

int kv_wal_salvage(kv_env *env, const char *path, kv_wal_record_fn fn, kv_wal_damage_fn damage,
                   void *ctx) {
  uint8_t *buf;
  size_t size;
  if (!env->exists(env, path)) return kv_error(KV_ERR_NOTFOUND, "no WAL segment %s", path);
  int rc = kv_env_read_all(env, path, &buf, &size);
  if (rc != KV_OK) return rc;
  uint8_t *x_buf = NULL;
  size_t x_cap = 0;
  uint64_t off = 0;
  while (rc == KV_OK && off < size) {
    uint32_t len = 0;
    const char *why = NULL;
    if (salvage_record_at(buf, size, off, &len, &why)) {
      const uint8_t *h = buf + off, *pay = h + WAL_HEADER;
      size_t plain = 0, pay_len = len;
      int flagged = 0;
      check_payload(pay, len, &plain, &flagged);
      if (flagged) {
        if (plain > x_cap) {
          uint8_t *nx = realloc(x_buf, plain);
          if (!nx) { rc = kv_error(KV_ERR_NOMEM, "WAL salvage %s: out of memory", path); break; }
          x_buf = nx;
          x_cap = plain;
        }
        expand(pay, len, x_buf);
        pay = x_buf;
        pay_len = plain;
      }
      rc = fn(ctx, kv_get_u64le(h + 16), (int64_t)kv_get_u64le(h + 24), pay, pay_len);
      off += WAL_HEADER + len;
      continue;
    }
    bool zeros = true; /* a tail of zeros: space allocated, a record never written */
    for (uint64_t i = off; i < size && zeros; i++) zeros = buf[i] == 0;
    if (zeros) why = "zero-filled tail (a record never written)";
    uint64_t next = off + 1;
    const char *skip_why;
    uint32_t skip_len;
    while (!zeros && next < size && !salvage_record_at(buf, size, next, &skip_len, &skip_why)) next++;
    if (zeros) next = size;
    rc = damage(ctx, off, next - off, why);
    off = next;
  }
  free(x_buf);
  free(buf);
  return rc;
}
