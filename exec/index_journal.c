/*
** exec/index_journal.c: the journal of the index rows one write statement wrote, by data row
** key (contract in exec/index.h), so that a row the statement writes again can delete the
** index rows its earlier write put, although those are not committed and, past the
** statement's memory bound, not even in memory (exec/write.c moves them into a kv bulk load).
**
** Records: [u32 length of the whole record][u16 data key length][data key] then, per
** maintained index, [u16 index row key length][index row key], little-endian. A record's
** offset is its place in the statement's record stream: the records before `file_len` were
** appended to the bulk load's scratch file (kv_bulk_scratch_append, in the same order, so
** offsets match), the later ones are in `mem`. A table of (64-bit key hash, offset + 1)
** pairs, open addressing with linear probing, at most three quarters full, finds a key's
** latest record; a hash match is confirmed by comparing the record's key (read back from
** the file for a spilled record), so two keys with equal hashes each keep their own slot.
** Memory: the table (16 bytes a slot, 21 to 43 bytes a distinct key) and the records since
** the last spill (about the size of the statement's batch, which the writer bounds).
**
** Not here: what the records are used for (exec/index_maint.c), the spill itself
** (exec/write.c), the scratch file (kv/bulk/bulk.c).
*/
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "exec/index_int.h"
#include "kv/bulk/bulk.h"

#define JR_HEAD 6u /* u32 record length + u16 data key length */

typedef struct jslot {
  uint64_t h;      /* the data key's hash */
  uint64_t off1;   /* its latest record's offset + 1; 0 = empty slot */
} jslot;

struct exec_index_journal {
  int n;              /* index row keys per record */
  uint32_t family_id; /* family whose folder holds the scratch file (the table's key family) */
  kv_bulk *kb;        /* the load holding the spilled records, or NULL (nothing spilled) */
  uint64_t file_len;  /* bytes of records in kb's scratch file */
  uint8_t *mem;       /* records after those, at offsets file_len + i */
  size_t mem_len, mem_cap; /* used / allocated */
  jslot *slots;       /* the key table */
  size_t cap, used;   /* slots (a power of two, 0 before the first add) / used */
  uint8_t *rec;       /* a spilled record read back */
  size_t rec_cap;     /* allocated */
};

static void put16(uint8_t *p, size_t v) {
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
}
static size_t get16(const uint8_t *p) { return (size_t)p[0] | (size_t)p[1] << 8; }
static void put32(uint8_t *p, size_t v) {
  for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static size_t get32(const uint8_t *p) {
  return (size_t)p[0] | (size_t)p[1] << 8 | (size_t)p[2] << 16 | (size_t)p[3] << 24;
}

exec_index_journal *exec_index_journal_new(int n_keys, uint32_t family_id) {
  exec_index_journal *j = calloc(1, sizeof *j);
  if (!j) return NULL;
  j->n = n_keys;
  j->family_id = family_id;
  return j;
}

void exec_index_journal_free(exec_index_journal *j) {
  if (!j) return;
  free(j->mem);
  free(j->slots);
  free(j->rec);
  free(j);
}

static int jr_kv_fail(exec_error *err, int rc) {
  return exec_index_kv_fail(err, rc, "index journal of the statement");
}

/* The record at offset off: *rec points at it (into mem, or j->rec read back), *len its
** length. With key_only, only its head and data key are read back from the file. */
static int record_at(exec_index_journal *j, uint64_t off, bool key_only, const uint8_t **rec,
                     size_t *len, exec_error *err) {
  if (off >= j->file_len) {
    const uint8_t *p = j->mem + (off - j->file_len);
    *rec = p;
    *len = get32(p);
    return EXEC_OK;
  }
  uint8_t head[JR_HEAD];
  int k = kv_bulk_scratch_read(j->kb, off, head, sizeof head);
  if (k != KV_OK) return jr_kv_fail(err, k);
  size_t total = get32(head), want = key_only ? JR_HEAD + get16(head + 4) : total;
  if (total < JR_HEAD || want > total)
    return exec_error_set(err, EXEC_CORRUPT, "index journal: damaged record at %llu",
                          (unsigned long long)off);
  if (want > j->rec_cap) {
    uint8_t *q = realloc(j->rec, want);
    if (!q) return exec_error_set(err, EXEC_NOMEM, "out of memory");
    j->rec = q;
    j->rec_cap = want;
  }
  k = kv_bulk_scratch_read(j->kb, off, j->rec, want);
  if (k != KV_OK) return jr_kv_fail(err, k);
  *rec = j->rec;
  *len = total;
  return EXEC_OK;
}

/* The slot of key (hash h): *slot its index, *hit whether it holds the key (else the empty
** slot where it would go). */
static int probe(exec_index_journal *j, uint64_t h, const uint8_t *key, size_t len,
                 size_t *slot, bool *hit, exec_error *err) {
  *hit = false;
  for (size_t i = h & (j->cap - 1);; i = (i + 1) & (j->cap - 1)) {
    const jslot *s = &j->slots[i];
    if (!s->off1) {
      *slot = i;
      return EXEC_OK;
    }
    if (s->h != h) continue;
    const uint8_t *rec = NULL; /* record_at sets both when it succeeds */
    size_t rlen = 0;
    int r = record_at(j, s->off1 - 1, true, &rec, &rlen, err);
    if (r) return r;
    if (get16(rec + 4) == len && memcmp(rec + JR_HEAD, key, len) == 0) {
      *slot = i;
      *hit = true;
      return EXEC_OK;
    }
  }
}

int exec_index_journal_find(exec_index_journal *j, const uint8_t *key, size_t len,
                            uint8_t *const *keys, size_t *lens, bool *found, exec_error *err) {
  *found = false;
  if (!j->used) return EXEC_OK;
  size_t slot;
  int r = probe(j, XXH3_64bits(key, len), key, len, &slot, found, err);
  if (r || !*found) return r;
  const uint8_t *rec = NULL; /* record_at sets both when it succeeds */
  size_t rlen = 0;
  r = record_at(j, j->slots[slot].off1 - 1, false, &rec, &rlen, err);
  if (r) return r;
  size_t p = JR_HEAD + get16(rec + 4);
  for (int i = 0; i < j->n; i++) {
    size_t n = p + 2 <= rlen ? get16(rec + p) : SIZE_MAX;
    if (n > CAT_KEY_MAX || p + 2 + n > rlen)
      return exec_error_set(err, EXEC_CORRUPT, "index journal: damaged record");
    memcpy(keys[i], rec + p + 2, n);
    lens[i] = n;
    p += 2 + n;
  }
  return EXEC_OK;
}

/* Double the key table (or make it). */
static int grow(exec_index_journal *j, exec_error *err) {
  size_t ncap = j->cap ? j->cap * 2 : 64;
  jslot *ns = calloc(ncap, sizeof *ns);
  if (!ns) return exec_error_set(err, EXEC_NOMEM, "out of memory");
  for (size_t i = 0; i < j->cap; i++) {
    if (!j->slots[i].off1) continue;
    size_t k = j->slots[i].h & (ncap - 1);
    while (ns[k].off1) k = (k + 1) & (ncap - 1);
    ns[k] = j->slots[i];
  }
  free(j->slots);
  j->slots = ns;
  j->cap = ncap;
  return EXEC_OK;
}

int exec_index_journal_add(exec_index_journal *j, const uint8_t *key, size_t len,
                           const exec_index_codec *ic, exec_error *err) {
  size_t total = JR_HEAD + len;
  for (int i = 0; i < j->n; i++) total += 2 + ic[i].key_len;
  if (total > UINT32_MAX || len > 0xFFFF)
    return exec_error_set(err, EXEC_TOOBIG, "index journal: record too large");
  if (j->mem_len + total > j->mem_cap) {
    size_t nc = j->mem_cap ? j->mem_cap * 2 : 4096;
    while (nc < j->mem_len + total) nc *= 2;
    uint8_t *q = realloc(j->mem, nc);
    if (!q) return exec_error_set(err, EXEC_NOMEM, "out of memory");
    j->mem = q;
    j->mem_cap = nc;
  }
  if ((j->used + 1) * 4 > j->cap * 3) {
    int r = grow(j, err);
    if (r) return r;
  }
  uint64_t h = XXH3_64bits(key, len);
  size_t slot;
  bool hit;
  int r = probe(j, h, key, len, &slot, &hit, err);
  if (r) return r;
  uint64_t off = j->file_len + j->mem_len;
  uint8_t *p = j->mem + j->mem_len;
  put32(p, total);
  put16(p + 4, len);
  memcpy(p + JR_HEAD, key, len);
  p += JR_HEAD + len;
  for (int i = 0; i < j->n; i++) {
    put16(p, ic[i].key_len);
    memcpy(p + 2, ic[i].key, ic[i].key_len);
    p += 2 + ic[i].key_len;
  }
  j->mem_len += total;
  if (!hit) j->used++;
  j->slots[slot].h = h;
  j->slots[slot].off1 = off + 1;
  return EXEC_OK;
}

int exec_index_journal_spill(exec_index_journal *j, kv_bulk *kb, exec_error *err) {
  if (!j || !j->mem_len) return EXEC_OK;
  if (j->kb && j->kb != kb)
    return exec_error_set(err, EXEC_MISUSE, "index journal: spilled into two loads");
  j->kb = kb;
  uint64_t off;
  int k = kv_bulk_scratch_append(kb, j->family_id, j->mem, j->mem_len, &off);
  if (k != KV_OK) return jr_kv_fail(err, k);
  if (off != j->file_len)
    return exec_error_set(err, EXEC_CORRUPT, "index journal: scratch file out of step");
  j->file_len += j->mem_len;
  j->mem_len = 0;
  return EXEC_OK;
}
