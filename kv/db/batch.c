/*
** kv/db/batch.c: write batches (kv_batch_*). A batch is kept encoded in exactly the WAL payload
** format of kv/db/wal.h (count varint, then the ops), so kv_commit appends it as is. The buffer
** reserves 10 bytes in front for the count: after every add the count's varint is written
** right-aligned into that gap, and the payload starts where the varint starts.
**
** Sizes are checked here against the limits of kv.h; family ids are checked at commit
** (kv/db/db_write.c), which is also where KV_TS_NOW becomes the commit time.
*/
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "kv/util/coding.h"
#include "kv/db/db_impl.h"
#include "kv/util/status.h"

#define COUNT_GAP 10 /* bytes reserved in front of the ops for the count varint */

struct kv_batch {
  uint8_t *buf;  /* COUNT_GAP bytes of count gap, then the encoded ops */
  size_t len;    /* bytes used in buf, gap included */
  size_t cap;    /* bytes allocated */
  size_t count;  /* ops in the batch */
  /* the overlay index (kv_batch_overlay_sync): the first ovl_count ops (ovl_len bytes) as
     cells of one memstore per family, made the first time the batch is read as a scan's
     overlay and caught up at each later read, so a read inside a transaction costs
     O(log n), not a copy of the whole batch */
  size_t ovl_len;          /* bytes of buf indexed (COUNT_GAP: none) */
  size_t ovl_count;        /* ops indexed */
  uint32_t n_ovl, ovl_cap; /* families with a memstore; slots allocated */
  uint32_t *ovl_fid;       /* their family ids */
  kv_memstore **ovl_mem;   /* their memstores (one reference each) */
  /* the family ids the ops name, so kv_commit checks them without decoding every op */
  uint32_t fams[KV_BATCH_FAMS]; /* distinct family ids, in first-use order */
  uint32_t n_fams;              /* entries in fams */
  bool fams_lost;               /* more ids than fit, or a rollback or copy: not known */
};

kv_batch *kv_batch_new(void) {
  kv_batch *b = calloc(1, sizeof *b);
  if (!b) return NULL;
  b->cap = 256;
  b->buf = malloc(b->cap);
  if (!b->buf) {
    free(b);
    return NULL;
  }
  b->len = COUNT_GAP;
  b->buf[COUNT_GAP - 1] = 0; /* count 0 */
  b->ovl_len = COUNT_GAP;
  return b;
}

/* Drop the overlay index (rebuilt at the next read); scans reading it keep theirs. */
static void drop_overlay(kv_batch *b) {
  for (uint32_t i = 0; i < b->n_ovl; i++) kv_memstore_unref(b->ovl_mem[i]);
  b->n_ovl = 0;
  b->ovl_len = COUNT_GAP;
  b->ovl_count = 0;
}

void kv_batch_free(kv_batch *b) {
  if (!b) return;
  drop_overlay(b);
  free(b->ovl_fid);
  free(b->ovl_mem);
  free(b->buf);
  free(b);
}

void kv_batch_clear(kv_batch *b) {
  if (!b) return;
  b->len = COUNT_GAP;
  b->count = 0;
  b->buf[COUNT_GAP - 1] = 0;
  b->n_fams = 0;
  b->fams_lost = false;
  drop_overlay(b);
}

bool kv_batch_families(const kv_batch *b, const uint32_t **ids, uint32_t *n) {
  if (b->fams_lost) return false;
  *ids = b->fams;
  *n = b->n_fams;
  return true;
}

kv_memstore *kv_batch_overlay_mem(const kv_batch *b, uint32_t family_id) {
  for (uint32_t i = 0; b && i < b->n_ovl; i++)
    if (b->ovl_fid[i] == family_id) return b->ovl_mem[i];
  return NULL;
}

int kv_batch_overlay_sync(kv_batch *b, int64_t now) {
  const uint8_t *p = b->buf + b->ovl_len, *limit = b->buf + b->len;
  while (b->ovl_count < b->count) {
    kv_wal_op op;
    if (kv_wal_decode_op(&p, limit, &op) != KV_OK)
      return kv_error(KV_ERR_CORRUPT, "kv_batch: op %zu does not decode", b->ovl_count);
    kv_memstore *m = kv_batch_overlay_mem(b, op.family_id);
    if (!m) {
      if (b->n_ovl == b->ovl_cap) {
        uint32_t cap = b->ovl_cap ? 2 * b->ovl_cap : 4;
        uint32_t *f = realloc(b->ovl_fid, cap * sizeof *f);
        if (f) b->ovl_fid = f;
        kv_memstore **ms = f ? realloc(b->ovl_mem, cap * sizeof *ms) : NULL;
        if (!f || !ms) return kv_error(KV_ERR_NOMEM, "kv_batch: out of memory");
        b->ovl_mem = ms;
        b->ovl_cap = cap;
      }
      if (!(m = kv_memstore_new())) return kv_error(KV_ERR_NOMEM, "kv_batch: out of memory");
      b->ovl_fid[b->n_ovl] = op.family_id;
      b->ovl_mem[b->n_ovl++] = m;
    }
    kv_cell c = {op.row, op.row_len, op.qual, op.qual_len, op.ts == KV_TS_NOW ? now : op.ts,
                 KV_OVERLAY_SEQ0 + 1 + b->ovl_count, op.type, op.value, op.value_len};
    if (kv_memstore_add(m, &c) != KV_OK)
      return kv_error(KV_ERR_NOMEM, "kv_batch: out of memory");
    b->ovl_count++;
    b->ovl_len = (size_t)(p - b->buf);
  }
  return KV_OK;
}

size_t kv_batch_count(const kv_batch *b) { return b ? b->count : 0; }

/* The count varint sits right-aligned before the ops: rewrite it for the current count. */
static void write_count(kv_batch *b) {
  kv_put_varint(b->buf + COUNT_GAP - (size_t)kv_varint_len(b->count), b->count);
}

kv_batch_mark kv_batch_get_mark(const kv_batch *b) {
  kv_batch_mark m = {COUNT_GAP, 0};
  if (b) {
    m.len = b->len;
    m.count = b->count;
  }
  return m;
}

void kv_batch_rollback_to(kv_batch *b, kv_batch_mark m) {
  if (!b || m.count > b->count || m.len > b->len || m.len < COUNT_GAP) return;
  b->len = m.len;
  b->count = m.count;
  write_count(b);
  if (m.count == 0) b->n_fams = 0, b->fams_lost = false;
  else b->fams_lost = true; /* the list may name families only the dropped ops used */
  if (b->ovl_count > m.count) drop_overlay(b); /* it holds ops that are gone */
}

kv_batch *kv_batch_copy(const kv_batch *b, kv_batch_mark upto) {
  kv_batch *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  c->ovl_len = COUNT_GAP;
  size_t len = b && upto.len >= COUNT_GAP && upto.len <= b->len ? upto.len : COUNT_GAP;
  c->cap = len > 256 ? len : 256;
  c->buf = malloc(c->cap);
  if (!c->buf) {
    free(c);
    return NULL;
  }
  if (len > COUNT_GAP) memcpy(c->buf + COUNT_GAP, b->buf + COUNT_GAP, len - COUNT_GAP);
  c->len = len;
  c->count = len > COUNT_GAP ? upto.count : 0;
  c->fams_lost = c->count > 0;
  write_count(c);
  return c;
}

size_t kv_batch_capacity(const kv_batch *b) { return b ? b->cap : 0; }

size_t kv_batch_byte_size(const kv_batch *b) {
  if (!b) return 0;
  return b->len - COUNT_GAP + (size_t)kv_varint_len(b->count);
}

const uint8_t *kv_batch_payload(const kv_batch *b, size_t *len) {
  size_t n = (size_t)kv_varint_len(b->count);
  *len = b->len - COUNT_GAP + n;
  return b->buf + COUNT_GAP - n;
}

static int add_op(kv_batch *b, int type, uint32_t family_id, const void *row, size_t row_len,
                  const void *qual, size_t qual_len, int64_t ts, const void *value,
                  size_t value_len) {
  if (!b) return kv_error(KV_MISUSE, "kv_batch: NULL batch");
  if (row_len == 0 || !row) return kv_error(KV_ERR_INVALID, "kv_batch: empty row key");
  if (row_len > KV_MAX_ROW_KEY)
    return kv_error(KV_ERR_TOOBIG, "kv_batch: row key of %zu bytes is over the maximum of %u",
                    row_len, KV_MAX_ROW_KEY);
  if (qual_len > KV_MAX_QUALIFIER)
    return kv_error(KV_ERR_TOOBIG,
                    "kv_batch: qualifier of %zu bytes is over the maximum of %u", qual_len,
                    KV_MAX_QUALIFIER);
  if (qual_len && !qual) return kv_error(KV_ERR_INVALID, "kv_batch: NULL qualifier");
  if (type == KV_PUT && value_len > KV_MAX_VALUE)
    return kv_error(KV_ERR_TOOBIG, "kv_batch: value of %zu bytes is over the maximum of %u",
                    value_len, KV_MAX_VALUE);
  if (type == KV_PUT && value_len && !value)
    return kv_error(KV_ERR_INVALID, "kv_batch: NULL value");
  if (type == KV_DELETE_FAMILY && qual_len)
    return kv_error(KV_ERR_INVALID, "kv_batch: a KV_DELETE_FAMILY takes no qualifier");
  if (ts < 0 && ts != KV_TS_NOW)
    return kv_error(KV_ERR_INVALID, "kv_batch: negative timestamp %lld",
                    (long long)ts);
  size_t need = 1 + 5 + 10 + row_len + 10 + qual_len + 10 +
                (type == KV_PUT ? 10 + value_len : 0);
  size_t new_count_len = (size_t)kv_varint_len(b->count + 1);
  if (b->len - COUNT_GAP + need + new_count_len > KV_MAX_BATCH) {
    /* need over-estimates the varints: check the exact size before refusing */
    size_t exact = 1 + (size_t)kv_varint_len(family_id) + (size_t)kv_varint_len(row_len) +
                   row_len + (size_t)kv_varint_len(qual_len) + qual_len +
                   (size_t)kv_varint_len(kv_zigzag(ts)) +
                   (type == KV_PUT ? (size_t)kv_varint_len(value_len) + value_len : 0);
    if (b->len - COUNT_GAP + exact + new_count_len > KV_MAX_BATCH)
      return kv_error(KV_ERR_TOOBIG, "kv_batch: batch would be over the maximum of %u bytes",
                      KV_MAX_BATCH);
  }
  if (b->len + need > b->cap) {
    size_t cap = b->cap * 2;
    while (cap < b->len + need) cap *= 2;
    uint8_t *nb = realloc(b->buf, cap);
    if (!nb) return kv_error(KV_ERR_NOMEM, "kv_batch: out of memory");
    b->buf = nb;
    b->cap = cap;
  }
  uint8_t *p = b->buf + b->len;
  *p++ = (uint8_t)type;
  p = kv_put_varint(p, family_id);
  p = kv_put_varint(p, row_len);
  kv_copy(p, row, row_len);
  p += row_len;
  p = kv_put_varint(p, qual_len);
  kv_copy(p, qual, qual_len);
  p += qual_len;
  if (ts == KV_TS_NOW) {
    kv_put_zz_min(p);
    p += KV_ZZ_MIN_LEN;
  } else {
    p = kv_put_varint(p, kv_zigzag(ts));
  }
  if (type == KV_PUT) {
    p = kv_put_varint(p, value_len);
    kv_copy(p, value, value_len);
    p += value_len;
  }
  b->len = (size_t)(p - b->buf);
  b->count++;
  write_count(b);
  if (!b->fams_lost && (b->n_fams == 0 || b->fams[b->n_fams - 1] != family_id)) {
    uint32_t i = 0;
    while (i < b->n_fams && b->fams[i] != family_id) i++;
    if (i == b->n_fams) {
      if (b->n_fams < KV_BATCH_FAMS) b->fams[b->n_fams++] = family_id;
      else b->fams_lost = true;
    }
  }
  return KV_OK;
}

int kv_batch_put(kv_batch *b, uint32_t family_id, const void *row, size_t row_len,
                 const void *qual, size_t qual_len, int64_t ts, const void *value,
                 size_t value_len) {
  return add_op(b, KV_PUT, family_id, row, row_len, qual, qual_len, ts, value, value_len);
}

int kv_batch_delete(kv_batch *b, uint32_t family_id, int type, const void *row,
                    size_t row_len, const void *qual, size_t qual_len, int64_t ts) {
  if (type != KV_DELETE_VERSION && type != KV_DELETE_COLUMN && type != KV_DELETE_FAMILY)
    return kv_error(KV_ERR_INVALID, "kv_batch_delete: bad tombstone type %d", type);
  return add_op(b, type, family_id, row, row_len, qual, qual_len, ts, NULL, 0);
}
