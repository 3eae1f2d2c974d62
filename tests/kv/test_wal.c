/*
** tests/kv/test_wal.c: the write-ahead log. Round trips of many records, the three sync
** modes against a power cut, a torn tail cut at every byte of the last record (dropped and
** truncated), damage anywhere in a middle record (KV_ERR_CORRUPT naming file and offset),
** damaged lengths, several segments, injected write errors, and the batch op decoder.
** The record form (ops that leave out the family, row key or timestamp of the op before):
** its exact bytes, replay of records in the older batch form beside it, a torn record-form
** tail, and damaged flags. Payloads are built by a small encoder written here from the
** format in kv/db/wal.h.
*/
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "kv/util/coding.h"
#include "kv/env/env_mem.h"
#include "kv/db/wal.h"
#include "testutil.h"

#define HDR 32

/* ---- a payload encoder, written from the spec in kv/db/wal.h ---- */

typedef struct enc { uint8_t *p; size_t len, cap; uint64_t count; } enc;

static void enc_reserve(enc *e, size_t more) {
  if (e->len + more <= e->cap) return;
  while (e->len + more > e->cap) e->cap = e->cap ? e->cap * 2 : 256;
  e->p = realloc(e->p, e->cap);
  assert_non_null(e->p);
}
static void enc_varint(enc *e, uint64_t v) {
  enc_reserve(e, 10);
  e->len = (size_t)(kv_put_varint(e->p + e->len, v) - e->p);
}
static void enc_bytes(enc *e, const void *b, size_t n) {
  enc_varint(e, n);
  enc_reserve(e, n);
  if (n) memcpy(e->p + e->len, b, n);
  e->len += n;
}
/* Append one op to the op list (the count is put in front by enc_finish). */
static void enc_op(enc *e, uint8_t type, uint32_t fam, const char *row, const char *qual,
                   int64_t ts, const void *val, size_t val_len) {
  enc_reserve(e, 1);
  e->p[e->len++] = type;
  enc_varint(e, fam);
  enc_bytes(e, row, strlen(row));
  enc_bytes(e, qual, strlen(qual));
  enc_varint(e, kv_zigzag(ts));
  if (type == KV_PUT) enc_bytes(e, val, val_len);
  e->count++;
}
/* The payload: count then the ops; returns its length. Caller frees *out. */
static size_t enc_finish(enc *e, uint8_t **out) {
  uint8_t tmp[10];
  size_t n = (size_t)(kv_put_varint(tmp, e->count) - tmp);
  size_t total = n + e->len;
  *out = malloc(total + 1);
  memcpy(*out, tmp, n);
  if (e->len) memcpy(*out + n, e->p, e->len);
  free(e->p);
  memset(e, 0, sizeof *e);
  return total;
}

/* A random payload of 1..max_ops ops; returns its length, *out malloc'ed. */
static size_t random_payload(uint64_t *rng, int max_ops, uint8_t **out) {
  enc e = {0};
  int n = 1 + (int)tu_below(rng, (uint64_t)max_ops);
  char row[32] = "";
  uint32_t fam = 0;
  int64_t ts = 0;
  for (int i = 0; i < n; i++) {
    char qual[8];
    uint8_t val[300];
    /* half the time a field repeats the previous op's (the record form leaves it out) */
    if (i == 0 || tu_below(rng, 2))
      snprintf(row, sizeof row, "row%llu", (unsigned long long)tu_below(rng, 100000));
    snprintf(qual, sizeof qual, "q%d", (int)tu_below(rng, 10));
    size_t vl = (size_t)tu_below(rng, sizeof val);
    for (size_t k = 0; k < vl; k++) val[k] = (uint8_t)tu_rand(rng);
    uint8_t type = (uint8_t)tu_below(rng, 4);
    if (i == 0 || tu_below(rng, 2))
      ts = tu_below(rng, 4) == 0 ? KV_TS_NOW : (int64_t)tu_below(rng, 1ull << 42);
    if (i == 0 || tu_below(rng, 2)) fam = (uint32_t)tu_below(rng, 70000);
    enc_op(&e, type, fam, row, type == KV_DELETE_FAMILY ? "" : qual, ts, val, vl);
  }
  return enc_finish(&e, out);
}

/* ---- recording replay callback ---- */

typedef struct rec { uint64_t seq; int64_t ts; uint8_t *p; size_t len; } rec;
typedef struct recs { rec *v; size_t n, cap; int stop_after; } recs;

static int on_record(void *ctx, uint64_t first_seq, int64_t commit_ts, const uint8_t *payload,
                     size_t len) {
  recs *r = ctx;
  if (r->n == r->cap) {
    r->cap = r->cap ? r->cap * 2 : 64;
    r->v = realloc(r->v, r->cap * sizeof *r->v);
  }
  rec *x = &r->v[r->n++];
  x->seq = first_seq;
  x->ts = commit_ts;
  x->p = malloc(len + 1);
  memcpy(x->p, payload, len);
  x->len = len;
  if (r->stop_after && (int)r->n == r->stop_after) return KV_ERR_INVALID;
  return KV_OK;
}

static void recs_free(recs *r) {
  for (size_t i = 0; i < r->n; i++) free(r->v[i].p);
  free(r->v);
  memset(r, 0, sizeof *r);
}

static kv_env *new_env(void) {
  kv_env *env = kv_env_mem_new(1000);
  assert_int_equal(env->mkdir(env, "/db"), KV_OK);
  return env;
}

/* Write `n` small fixed records to segment `num`, recording the offset of each. */
static void write_records(kv_env *env, uint64_t num, int n, uint64_t first_seq,
                          uint64_t *offsets) {
  kv_wal *w;
  assert_int_equal(kv_wal_create(env, "/db", num, KV_SYNC_FULL, &w), KV_OK);
  for (int i = 0; i < n; i++) {
    enc e = {0};
    char row[16];
    snprintf(row, sizeof row, "r%d", i);
    enc_op(&e, KV_PUT, 1, row, "q", 1000 + i, "value", 5);
    enc_op(&e, KV_DELETE_COLUMN, 2, row, "q", 2000 + i, NULL, 0);
    uint8_t *p;
    size_t len = enc_finish(&e, &p);
    if (offsets) offsets[i] = kv_wal_size(w);
    assert_int_equal(kv_wal_append(w, first_seq + 2 * (uint64_t)i, 5000 + i, p, len), KV_OK);
    free(p);
  }
  assert_int_equal(kv_wal_sync(w), KV_OK);
  assert_int_equal(kv_wal_close(w), KV_OK);
}

/* ---- tests ---- */

static void test_round_trip_many(void **state) {
  uint64_t seed = tu_seed("wal_round_trip"), rng = seed;
  kv_env *env = new_env();
  kv_wal *w;
  assert_int_equal(kv_wal_create(env, "/db", 7, KV_SYNC_FULL, &w), KV_OK);
  assert_int_equal(kv_wal_number(w), 7);
  int n = (int)tu_scaled(3000, 200);
  uint8_t **pays = calloc((size_t)n, sizeof *pays);
  size_t *lens = calloc((size_t)n, sizeof *lens);
  uint64_t seq = 1, total = 0;
  uint64_t plain = 0;
  for (int i = 0; i < n; i++) {
    lens[i] = random_payload(&rng, 8, &pays[i]);
    assert_int_equal(kv_wal_append(w, seq, 1700000000000LL + i, pays[i], lens[i]), KV_OK);
    seq += 8;
    /* the record form is never longer than the batch form */
    assert_true(kv_wal_size(w) - total <= HDR + lens[i]);
    total = kv_wal_size(w);
    plain += HDR + lens[i];
    if (i % 10 == 0) assert_int_equal(kv_wal_sync(w), KV_OK);
  }
  assert_true(total < plain); /* repeated fields were left out */
  assert_int_equal(kv_wal_close(w), KV_OK);
  assert_int_equal(kv_env_mem_file_size(env, "/db/wal-7.log"), (int64_t)total);

  recs r = {0};
  assert_int_equal(kv_wal_replay(env, "/db", 7, 1, on_record, &r), KV_OK);
  if (r.n != (size_t)n) fprintf(stderr, "seed %llu\n", (unsigned long long)seed);
  assert_int_equal(r.n, n);
  for (int i = 0; i < n; i++) {
    assert_int_equal(r.v[i].seq, 1 + 8 * (uint64_t)i);
    assert_int_equal(r.v[i].ts, 1700000000000LL + i);
    assert_int_equal(r.v[i].len, lens[i]);
    assert_memory_equal(r.v[i].p, pays[i], lens[i]);
    free(pays[i]);
  }
  recs_free(&r);
  free(pays);
  free(lens);
  /* A callback error stops the replay with it. */
  r.stop_after = 3;
  assert_int_equal(kv_wal_replay(env, "/db", 7, 1, on_record, &r), KV_ERR_INVALID);
  assert_int_equal(r.n, 3);
  recs_free(&r);
  assert_int_equal(kv_wal_replay(env, "/db", 8, 1, on_record, &r), KV_ERR_NOTFOUND);
  kv_env_free(env);
}

static size_t one_payload(uint8_t **p, int i) {
  enc e = {0};
  char row[16];
  snprintf(row, sizeof row, "row%d", i);
  enc_op(&e, KV_PUT, 3, row, "c", KV_TS_NOW, "v", 1);
  return enc_finish(&e, p);
}

static size_t count_replayed(kv_env *env, uint64_t num) {
  recs r = {0};
  assert_int_equal(kv_wal_replay(env, "/db", num, 1, on_record, &r), KV_OK);
  size_t n = r.n;
  recs_free(&r);
  return n;
}

static void test_sync_full(void **state) {
  kv_env *env = new_env();
  kv_wal *w;
  uint8_t *p;
  assert_int_equal(kv_wal_create(env, "/db", 1, KV_SYNC_FULL, &w), KV_OK);
  kv_env_mem_stats s0, s1;
  kv_env_mem_get_stats(env, &s0);
  for (int i = 0; i < 5; i++) {
    size_t n = one_payload(&p, i);
    assert_int_equal(kv_wal_append(w, 1 + (uint64_t)i, 1, p, n), KV_OK);
    free(p);
  }
  assert_int_equal(kv_wal_sync(w), KV_OK); /* one group commit */
  size_t n = one_payload(&p, 9);
  assert_int_equal(kv_wal_append(w, 6, 1, p, n), KV_OK); /* appended, never synced */
  free(p);
  kv_env_mem_get_stats(env, &s1);
  assert_int_equal(s1.appends - s0.appends, 6); /* written at once */
  assert_int_equal(s1.syncs - s0.syncs, 1);
  kv_env_mem_set_crashed(env, true);
  kv_wal_close(w);
  kv_env_mem_power_cut(env);
  assert_int_equal(count_replayed(env, 1), 5); /* the synced group, not the last one */
  kv_env_free(env);
}

static void test_sync_normal(void **state) {
  kv_env *env = new_env();
  kv_wal *w;
  uint8_t *p;
  assert_int_equal(kv_wal_create(env, "/db", 1, KV_SYNC_NORMAL, &w), KV_OK);
  for (int i = 0; i < 4; i++) {
    size_t n = one_payload(&p, i);
    assert_int_equal(kv_wal_append(w, 1 + (uint64_t)i, 1, p, n), KV_OK);
    free(p);
    /* write(2) at once: the bytes are in the file before any sync */
    assert_int_equal((uint64_t)kv_env_mem_file_size(env, "/db/wal-1.log"), kv_wal_size(w));
  }
  /* A process crash (no power cut) keeps them all. */
  kv_env_mem_set_crashed(env, true);
  kv_wal_close(w);
  kv_env_mem_recover(env);
  assert_int_equal(count_replayed(env, 1), 4);
  /* A power cut loses what was never synced... */
  kv_env_mem_power_cut(env);
  assert_int_equal(count_replayed(env, 1), 4); /* ...but replay synced what it saw */
  /* Unsynced records that no replay saw are lost. */
  assert_int_equal(kv_wal_create(env, "/db", 2, KV_SYNC_NORMAL, &w), KV_OK);
  size_t n = one_payload(&p, 0);
  assert_int_equal(kv_wal_append(w, 1, 1, p, n), KV_OK);
  free(p);
  kv_env_mem_set_crashed(env, true);
  kv_wal_close(w);
  kv_env_mem_power_cut(env);
  assert_int_equal(count_replayed(env, 2), 0);
  kv_env_free(env);
}

static void test_sync_off(void **state) {
  kv_env *env = new_env();
  kv_wal *w;
  uint8_t *p;
  assert_int_equal(kv_wal_create(env, "/db", 1, KV_SYNC_OFF, &w), KV_OK);
  kv_env_mem_stats s0, s1;
  kv_env_mem_get_stats(env, &s0);
  for (int i = 0; i < 10; i++) {
    size_t n = one_payload(&p, i);
    assert_int_equal(kv_wal_append(w, 1 + (uint64_t)i, 1, p, n), KV_OK);
    free(p);
  }
  assert_int_equal(kv_wal_sync(w), KV_OK); /* a no-op in off mode */
  assert_int_equal(kv_env_mem_file_size(env, "/db/wal-1.log"), 0); /* still buffered */
  assert_true(kv_wal_size(w) > 0);
  kv_env_mem_get_stats(env, &s1);
  assert_int_equal(s1.appends, s0.appends);
  assert_int_equal(s1.syncs, s0.syncs);
  assert_int_equal(kv_wal_write_out(w), KV_OK);
  assert_int_equal((uint64_t)kv_env_mem_file_size(env, "/db/wal-1.log"), kv_wal_size(w));
  assert_int_equal(count_replayed(env, 1), 10);
  /* Past the buffer threshold, records are written without being asked. */
  uint8_t big[10000];
  memset(big, 'x', sizeof big);
  enc e = {0};
  enc_op(&e, KV_PUT, 1, "big", "q", 5, big, sizeof big);
  size_t blen = enc_finish(&e, &p);
  for (int i = 0; i < 60; i++) assert_int_equal(kv_wal_append(w, 100 + (uint64_t)i, 1, p, blen), KV_OK);
  free(p);
  assert_true(kv_env_mem_file_size(env, "/db/wal-1.log") > 200000);
  /* Close writes out and syncs: everything survives a power cut. */
  assert_int_equal(kv_wal_close(w), KV_OK);
  kv_env_mem_power_cut(env);
  assert_int_equal(count_replayed(env, 1), 70);
  kv_env_free(env);
}

static void test_large_records(void **state) {
  /* Records larger than the write scratch and the replay window, between small ones, in
  ** every mode. */
  for (int mode = KV_SYNC_FULL; mode <= KV_SYNC_OFF; mode++) {
    kv_env *env = new_env();
    kv_wal *w;
    assert_int_equal(kv_wal_create(env, "/db", 1, mode, &w), KV_OK);
    size_t sizes[5] = {100, 1500000, 700000, 3000000, 50};
    uint8_t *pays[5];
    size_t lens[5];
    for (int i = 0; i < 5; i++) {
      uint8_t *val = malloc(sizes[i]);
      for (size_t k = 0; k < sizes[i]; k++) val[k] = (uint8_t)(k * 31 + (size_t)i);
      enc e = {0};
      enc_op(&e, KV_PUT, 1, "big", "q", i, val, sizes[i]);
      lens[i] = enc_finish(&e, &pays[i]);
      free(val);
      assert_int_equal(kv_wal_append(w, 1 + (uint64_t)i, i, pays[i], lens[i]), KV_OK);
    }
    assert_int_equal(kv_wal_close(w), KV_OK);
    recs r = {0};
    assert_int_equal(kv_wal_replay(env, "/db", 1, 1, on_record, &r), KV_OK);
    assert_int_equal(r.n, 5);
    for (int i = 0; i < 5; i++) {
      assert_int_equal(r.v[i].len, lens[i]);
      assert_memory_equal(r.v[i].p, pays[i], lens[i]);
      free(pays[i]);
    }
    recs_free(&r);
    kv_env_free(env);
  }
}

static void test_torn_tail_every_length(void **state) {
  kv_env *env = new_env();
  uint64_t off[4];
  write_records(env, 1, 4, 1, off);
  int64_t full = kv_env_mem_file_size(env, "/db/wal-1.log");
  uint8_t *orig;
  size_t olen;
  assert_int_equal(kv_env_read_all(env, "/db/wal-1.log", &orig, &olen), KV_OK);
  for (uint64_t cut = off[3] + 1; cut < (uint64_t)full; cut++) {
    /* Rebuild the whole file, then cut it inside the last record. */
    write_records(env, 1, 4, 1, NULL);
    assert_int_equal(kv_env_mem_shrink(env, "/db/wal-1.log", cut), KV_OK);
    recs r = {0};
    assert_int_equal(kv_wal_replay(env, "/db", 1, 1, on_record, &r), KV_OK);
    assert_int_equal(r.n, 3);
    assert_int_equal(r.v[2].seq, 5);
    recs_free(&r);
    /* Truncated back to the last good record, durably. */
    kv_env_mem_power_cut(env);
    assert_int_equal(kv_env_mem_file_size(env, "/db/wal-1.log"), (int64_t)off[3]);
    /* The same cut in a segment that is not the last is corruption. */
    write_records(env, 1, 4, 1, NULL);
    assert_int_equal(kv_env_mem_shrink(env, "/db/wal-1.log", cut), KV_OK);
    assert_int_equal(kv_wal_replay(env, "/db", 1, 0, on_record, &r), KV_ERR_CORRUPT);
    assert_non_null(strstr(kv_errmsg(), "wal-1.log"));
    recs_free(&r);
  }
  /* A final record whose checksum fails with nothing after it is a torn tail too. */
  write_records(env, 1, 4, 1, NULL);
  assert_int_equal(kv_env_mem_set_byte(env, "/db/wal-1.log", (uint64_t)full - 1,
                                       (uint8_t)(orig[full - 1] ^ 0x10)), KV_OK);
  assert_int_equal(count_replayed(env, 1), 3);
  assert_int_equal(kv_env_mem_file_size(env, "/db/wal-1.log"), (int64_t)off[3]);
  /* A zero-filled tail (space allocated, data never written) is a torn tail. */
  write_records(env, 1, 4, 1, NULL);
  kv_file *f;
  uint8_t zeros[100] = {0};
  assert_int_equal(env->open(env, "/db/wal-1.log", KV_OPEN_WRITE, &f), KV_OK);
  assert_int_equal(env->append(f, zeros, sizeof zeros), KV_OK);
  env->close(f);
  assert_int_equal(count_replayed(env, 1), 4);
  assert_int_equal(kv_env_mem_file_size(env, "/db/wal-1.log"), full);
  free(orig);
  kv_env_free(env);
}

static void test_bit_flip_in_middle_record_is_corruption(void **state) {
  kv_env *env = new_env();
  uint64_t off[5];
  write_records(env, 3, 5, 10, off);
  uint8_t *orig;
  size_t olen;
  assert_int_equal(kv_env_read_all(env, "/db/wal-3.log", &orig, &olen), KV_OK);
  /* Every byte of record 2 (header and payload), every one of those in the last segment. */
  for (uint64_t pos = off[2]; pos < off[3]; pos++) {
    for (int bit = 0; bit < 8; bit += 7) {
      assert_int_equal(kv_env_mem_set_byte(env, "/db/wal-3.log", pos, (uint8_t)(orig[pos] ^ (1u << bit))), KV_OK);
      recs r = {0};
      assert_int_equal(kv_wal_replay(env, "/db", 3, 1, on_record, &r), KV_ERR_CORRUPT);
      assert_int_equal(r.n, 2); /* the records before were delivered, nothing after */
      recs_free(&r);
      char want[64];
      snprintf(want, sizeof want, "offset %llu", (unsigned long long)off[2]);
      if (!strstr(kv_errmsg(), want) || !strstr(kv_errmsg(), "/db/wal-3.log"))
        fail_msg("pos %llu: message \"%s\" lacks \"%s\"", (unsigned long long)pos, kv_errmsg(), want);
      assert_int_equal(kv_env_mem_set_byte(env, "/db/wal-3.log", pos, orig[pos]), KV_OK);
      /* Nothing was truncated. */
      assert_int_equal(kv_env_mem_file_size(env, "/db/wal-3.log"), (int64_t)olen);
    }
  }
  assert_int_equal(count_replayed(env, 3), 5);
  free(orig);
  kv_env_free(env);
}

static void test_damaged_length(void **state) {
  kv_env *env = new_env();
  uint64_t off[3];
  write_records(env, 1, 3, 1, off);
  uint8_t b;
  /* A length made larger in the middle would reach past the end: still corruption. */
  assert_int_equal(kv_env_mem_get_byte(env, "/db/wal-1.log", off[1] + 1, &b), KV_OK);
  assert_int_equal(kv_env_mem_set_byte(env, "/db/wal-1.log", off[1] + 1, (uint8_t)(b + 1)), KV_OK);
  recs r = {0};
  assert_int_equal(kv_wal_replay(env, "/db", 1, 1, on_record, &r), KV_ERR_CORRUPT);
  assert_non_null(strstr(kv_errmsg(), "length"));
  assert_int_equal(r.n, 1);
  recs_free(&r);
  /* A damaged length on the final record (nothing after) is corruption, not a torn tail. */
  write_records(env, 1, 3, 1, off);
  assert_int_equal(kv_env_mem_get_byte(env, "/db/wal-1.log", off[2], &b), KV_OK);
  assert_int_equal(kv_env_mem_set_byte(env, "/db/wal-1.log", off[2], (uint8_t)(b ^ 4)), KV_OK);
  assert_int_equal(kv_wal_replay(env, "/db", 1, 1, on_record, &r), KV_ERR_CORRUPT);
  recs_free(&r);
  /* A length over the maximum, with a matching length check, is corruption even where it
  ** runs past the end of the last segment. */
  write_records(env, 1, 3, 1, off);
  uint8_t h[HDR + 8] = {0};
  kv_put_u32le(h, KV_MAX_BATCH + 1);
  kv_put_u32le(h + 4, (uint32_t)XXH3_64bits(h, 4));
  kv_file *f;
  assert_int_equal(env->open(env, "/db/wal-1.log", KV_OPEN_WRITE, &f), KV_OK);
  assert_int_equal(env->append(f, h, sizeof h), KV_OK);
  env->close(f);
  assert_int_equal(kv_wal_replay(env, "/db", 1, 1, on_record, &r), KV_ERR_CORRUPT);
  assert_non_null(strstr(kv_errmsg(), "maximum"));
  assert_int_equal(r.n, 3);
  recs_free(&r);
  kv_env_free(env);
}

static void test_segments(void **state) {
  kv_env *env = new_env();
  write_records(env, 1, 3, 1, NULL);
  write_records(env, 2, 4, 7, NULL);
  write_records(env, 5, 2, 15, NULL);
  uint64_t nums[3] = {1, 2, 5};
  recs r = {0};
  for (int i = 0; i < 3; i++)
    assert_int_equal(kv_wal_replay(env, "/db", nums[i], i == 2, on_record, &r), KV_OK);
  assert_int_equal(r.n, 9);
  for (size_t i = 0; i < r.n; i++) assert_int_equal(r.v[i].seq, 1 + 2 * i);
  recs_free(&r);
  char path[64];
  kv_wal_path(path, sizeof path, "/db", 5);
  assert_string_equal(path, "/db/wal-5.log");
  kv_env_free(env);
}

static void test_write_errors(void **state) {
  int kinds[3] = {KV_FAULT_EIO, KV_FAULT_ENOSPC, KV_FAULT_TORN};
  int codes[3] = {KV_ERR_IO, KV_ERR_NOSPC, KV_ERR_IO};
  for (int k = 0; k < 3; k++) {
    kv_env *env = new_env();
    kv_wal *w;
    uint8_t *p;
    size_t n = one_payload(&p, 0);
    assert_int_equal(kv_wal_create(env, "/db", 1, KV_SYNC_FULL, &w), KV_OK);
    assert_int_equal(kv_wal_append(w, 1, 1, p, n), KV_OK);
    assert_int_equal(kv_wal_append(w, 2, 1, p, n), KV_OK);
    kv_env_mem_fail(env, KV_FAULT_APPEND, 1, "wal-", kinds[k], 10);
    assert_int_equal(kv_wal_append(w, 3, 1, p, n), codes[k]);
    /* The WAL refuses every later write and sync. */
    assert_int_not_equal(kv_wal_append(w, 4, 1, p, n), KV_OK);
    assert_non_null(strstr(kv_errmsg(), "unusable"));
    assert_int_not_equal(kv_wal_sync(w), KV_OK);
    assert_int_not_equal(kv_wal_close(w), KV_OK);
    /* Replay finds the two good records; a torn one is dropped. */
    assert_int_equal(count_replayed(env, 1), 2);
    free(p);
    kv_env_free(env);
  }
  /* A failed sync also makes the WAL unusable. */
  kv_env *env = new_env();
  kv_wal *w;
  uint8_t *p;
  size_t n = one_payload(&p, 0);
  assert_int_equal(kv_wal_create(env, "/db", 1, KV_SYNC_FULL, &w), KV_OK);
  assert_int_equal(kv_wal_append(w, 1, 1, p, n), KV_OK);
  kv_env_mem_fail(env, KV_FAULT_SYNC, 1, NULL, KV_FAULT_EIO, 0);
  assert_int_equal(kv_wal_sync(w), KV_ERR_IO);
  assert_int_not_equal(kv_wal_append(w, 2, 1, p, n), KV_OK);
  kv_wal_close(w);
  /* Too big is refused without harm. */
  assert_int_equal(kv_wal_create(env, "/db", 2, KV_SYNC_FULL, &w), KV_OK);
  assert_int_equal(kv_wal_append(w, 1, 1, p, (size_t)KV_MAX_BATCH + 1), KV_ERR_TOOBIG);
  assert_int_equal(kv_wal_append(w, 1, 1, p, n), KV_OK);
  assert_int_equal(kv_wal_close(w), KV_OK);
  assert_int_equal(count_replayed(env, 2), 1);
  /* Creating a segment in a missing folder fails cleanly. */
  assert_int_equal(kv_wal_create(env, "/nope", 1, KV_SYNC_FULL, &w), KV_ERR_NOTFOUND);
  assert_null(w);
  free(p);
  kv_env_free(env);
}

static void test_undecodable_op_is_corruption(void **state) {
  kv_env *env = new_env();
  kv_wal *w;
  uint8_t *p;
  size_t n = one_payload(&p, 0);
  assert_int_equal(kv_wal_create(env, "/db", 1, KV_SYNC_FULL, &w), KV_OK);
  assert_int_equal(kv_wal_append(w, 1, 1, p, n), KV_OK);
  uint64_t bad_at = kv_wal_size(w);
  /* Checksummed, but the op type is unknown. */
  uint8_t bad[8] = {1, 9, 1, 1, 'r', 0, 2};
  assert_int_equal(kv_wal_append(w, 2, 1, bad, 7), KV_OK);
  /* Checksummed, but the count says two ops and there is one. */
  p[0] = 2;
  assert_int_equal(kv_wal_append(w, 3, 1, p, n), KV_OK);
  assert_int_equal(kv_wal_close(w), KV_OK);
  recs r = {0};
  assert_int_equal(kv_wal_replay(env, "/db", 1, 1, on_record, &r), KV_ERR_CORRUPT);
  assert_int_equal(r.n, 1);
  char want[64];
  snprintf(want, sizeof want, "offset %llu", (unsigned long long)bad_at);
  assert_non_null(strstr(kv_errmsg(), want));
  assert_non_null(strstr(kv_errmsg(), "type"));
  recs_free(&r);
  free(p);
  kv_env_free(env);
}

static void test_decode_op(void **state) {
  enc e = {0};
  uint8_t val[3] = {0, 1, 2};
  enc_op(&e, KV_PUT, 300, "row-key", "qual", KV_TS_NOW, val, 3);
  enc_op(&e, KV_DELETE_FAMILY, 7, "r2", "", -5, NULL, 0);
  enc_op(&e, KV_DELETE_VERSION, 0, "r3", "q", INT64_MAX, NULL, 0);
  uint8_t *p;
  size_t len = enc_finish(&e, &p);
  /* Exact-size copy so ASan sees any overrun. */
  uint8_t *exact = malloc(len);
  memcpy(exact, p, len);
  const uint8_t *q = exact, *limit = exact + len;
  uint64_t count;
  q = kv_get_varint(q, limit, &count);
  assert_int_equal(count, 3);
  kv_wal_op op;
  assert_int_equal(kv_wal_decode_op(&q, limit, &op), KV_OK);
  assert_int_equal(op.type, KV_PUT);
  assert_int_equal(op.family_id, 300);
  assert_int_equal(op.row_len, 7);
  assert_memory_equal(op.row, "row-key", 7);
  assert_int_equal(op.qual_len, 4);
  assert_memory_equal(op.qual, "qual", 4);
  assert_true(op.ts == KV_TS_NOW); /* decoded as-is: the caller substitutes commit_ts */
  assert_int_equal(op.value_len, 3);
  assert_memory_equal(op.value, val, 3);
  assert_int_equal(kv_wal_decode_op(&q, limit, &op), KV_OK);
  assert_int_equal(op.type, KV_DELETE_FAMILY);
  assert_int_equal(op.qual_len, 0);
  assert_true(op.ts == -5);
  assert_int_equal(op.value_len, 0);
  assert_int_equal(kv_wal_decode_op(&q, limit, &op), KV_OK);
  assert_true(op.ts == INT64_MAX);
  assert_ptr_equal(q, limit);
  assert_int_equal(kv_wal_decode_op(&q, limit, &op), KV_ERR_CORRUPT);

  /* Every truncation of the first op fails cleanly and never reads past the limit. */
  const uint8_t *start = exact + 1;
  const uint8_t *first_end = start;
  assert_int_equal(kv_wal_decode_op(&first_end, limit, &op), KV_OK);
  for (size_t cut = 0; cut < (size_t)(first_end - start); cut++) {
    uint8_t *t = malloc(cut ? cut : 1);
    memcpy(t, start, cut);
    const uint8_t *tq = t;
    assert_int_equal(kv_wal_decode_op(&tq, t + cut, &op), KV_ERR_CORRUPT);
    assert_ptr_equal(tq, t); /* not advanced on failure */
    free(t);
  }
  /* Unknown type; lengths over their maxima. */
  uint8_t bad_type[] = {4, 1, 1, 'r', 0, 0};
  q = bad_type;
  assert_int_equal(kv_wal_decode_op(&q, bad_type + sizeof bad_type, &op), KV_ERR_CORRUPT);
  uint8_t big_row[16] = {KV_PUT, 1};
  uint8_t *bp = kv_put_varint(big_row + 2, KV_MAX_ROW_KEY + 1);
  q = big_row;
  assert_int_equal(kv_wal_decode_op(&q, bp, &op), KV_ERR_CORRUPT);
  free(exact);
  free(p);
}

/* ---- the record form ---- */

/* Write a record by hand around `payload` (as written: no record form applied), as a build
** before the record form did; returns its bytes. */
static size_t raw_record(uint8_t *out, uint64_t seq, int64_t ts, const uint8_t *payload,
                         size_t len) {
  kv_put_u32le(out, (uint32_t)len);
  kv_put_u32le(out + 4, (uint32_t)XXH3_64bits(out, 4));
  kv_put_u64le(out + 16, seq);
  kv_put_u64le(out + 24, (uint64_t)ts);
  memcpy(out + HDR, payload, len);
  kv_put_u64le(out + 8, XXH3_64bits(out + 16, 16 + len));
  return HDR + len;
}

static void write_file(kv_env *env, const char *path, const uint8_t *p, size_t n) {
  kv_file *f;
  assert_int_equal(env->open(env, path, KV_OPEN_WRITE | KV_OPEN_TRUNCATE, &f), KV_OK);
  assert_int_equal(env->append(f, p, n), KV_OK);
  assert_int_equal(env->sync(f), KV_OK);
  env->close(f);
}

/* The three-op batch of docs/FORMAT.md's record-form example. */
static size_t example_batch(uint8_t **p) {
  enc e = {0};
  enc_op(&e, KV_PUT, 5, "s1", "t", KV_TS_NOW, "AB", 2);
  enc_op(&e, KV_PUT, 6, "s1", "u", KV_TS_NOW, "C", 1);
  enc_op(&e, KV_DELETE_COLUMN, 6, "s2", "h", 1700000000000LL, NULL, 0);
  return enc_finish(&e, p);
}

static void test_record_form_bytes(void **state) {
  kv_env *env = new_env();
  uint8_t *p;
  size_t n = example_batch(&p);
  kv_wal *w;
  assert_int_equal(kv_wal_create(env, "/db", 1, KV_SYNC_FULL, &w), KV_OK);
  assert_int_equal(kv_wal_append(w, 42, 1700000000123LL, p, n), KV_OK);
  assert_int_equal(kv_wal_close(w), KV_OK);
  static const uint8_t want[] = {
    0x03,                                                       /* 3 ops */
    0x00, 0x05, 0x02, 's', '1', 0x01, 't',                      /* put, family 5, "s1", "t" */
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, /* KV_TS_NOW */
    0x02, 'A', 'B',                                             /* value */
    0x60, 0x06, 0x01, 'u', 0x01, 'C',       /* put, same row and ts, family 6, "u", "C" */
    0x12, 0x02, 's', '2', 0x01, 'h',        /* delete column, same family, "s2", "h" */
    0x80, 0xa0, 0xab, 0xfe, 0xf9, 0x62,     /* ts 1700000000000 */
  };
  uint8_t *file;
  size_t flen;
  assert_int_equal(kv_env_read_all(env, "/db/wal-1.log", &file, &flen), KV_OK);
  assert_int_equal(flen, HDR + sizeof want);
  assert_int_equal(kv_get_u32le(file), sizeof want);
  assert_memory_equal(file + HDR, want, sizeof want);
  /* Replay hands back the batch form, byte for byte. */
  recs r = {0};
  assert_int_equal(kv_wal_replay(env, "/db", 1, 1, on_record, &r), KV_OK);
  assert_int_equal(r.n, 1);
  assert_int_equal(r.v[0].seq, 42);
  assert_int_equal(r.v[0].len, n);
  assert_memory_equal(r.v[0].p, p, n);
  recs_free(&r);
  free(file);
  free(p);
  kv_env_free(env);
}

/* A segment written before the record form (batch-form records) still replays, alone and
** followed by record-form records in the same segment. */
static void test_batch_form_records_replay(void **state) {
  kv_env *env = new_env();
  uint8_t *p0, *p1;
  size_t n0 = example_batch(&p0), n1 = one_payload(&p1, 3);
  uint8_t *seg = malloc(2 * HDR + n0 + n1);
  size_t len = raw_record(seg, 10, 111, p0, n0);
  len += raw_record(seg + len, 13, 112, p1, n1);
  write_file(env, "/db/wal-4.log", seg, len);
  recs r = {0};
  assert_int_equal(kv_wal_replay(env, "/db", 4, 0, on_record, &r), KV_OK);
  assert_int_equal(r.n, 2);
  assert_int_equal(r.v[0].seq, 10);
  assert_int_equal(r.v[0].len, n0);
  assert_memory_equal(r.v[0].p, p0, n0);
  assert_int_equal(r.v[1].ts, 112);
  assert_memory_equal(r.v[1].p, p1, n1);
  recs_free(&r);
  /* New records appended after the old ones, as a store would after replay. */
  kv_wal *w;
  assert_int_equal(kv_wal_create(env, "/db", 5, KV_SYNC_FULL, &w), KV_OK);
  assert_int_equal(kv_wal_append(w, 14, 113, p0, n0), KV_OK);
  assert_int_equal(kv_wal_close(w), KV_OK);
  uint8_t *f5;
  size_t l5;
  assert_int_equal(kv_env_read_all(env, "/db/wal-5.log", &f5, &l5), KV_OK);
  seg = realloc(seg, len + l5);
  memcpy(seg + len, f5, l5);
  write_file(env, "/db/wal-4.log", seg, len + l5);
  assert_int_equal(kv_wal_replay(env, "/db", 4, 1, on_record, &r), KV_OK);
  assert_int_equal(r.n, 3);
  assert_int_equal(r.v[2].seq, 14);
  assert_memory_equal(r.v[2].p, p0, n0);
  recs_free(&r);
  free(f5);
  free(seg);
  free(p0);
  free(p1);
  kv_env_free(env);
}

/* A record-form record torn at every length is dropped (last segment) or reported. */
static void test_record_form_torn_tail(void **state) {
  kv_env *env = new_env();
  uint8_t *p;
  size_t n = example_batch(&p);
  kv_wal *w;
  assert_int_equal(kv_wal_create(env, "/db", 2, KV_SYNC_FULL, &w), KV_OK);
  assert_int_equal(kv_wal_append(w, 1, 1, p, n), KV_OK);
  uint64_t good = kv_wal_size(w);
  assert_int_equal(kv_wal_append(w, 4, 2, p, n), KV_OK);
  uint64_t full = kv_wal_size(w);
  assert_true(full - good < HDR + n); /* it is in the record form */
  assert_int_equal(kv_wal_close(w), KV_OK);
  uint8_t *orig;
  size_t olen;
  assert_int_equal(kv_env_read_all(env, "/db/wal-2.log", &orig, &olen), KV_OK);
  for (uint64_t cut = good + 1; cut < full; cut++) {
    write_file(env, "/db/wal-2.log", orig, cut);
    recs r = {0};
    assert_int_equal(kv_wal_replay(env, "/db", 2, 1, on_record, &r), KV_OK);
    assert_int_equal(r.n, 1);
    assert_memory_equal(r.v[0].p, p, n);
    recs_free(&r);
    assert_int_equal(kv_env_mem_file_size(env, "/db/wal-2.log"), (int64_t)good);
    write_file(env, "/db/wal-2.log", orig, cut);
    assert_int_equal(kv_wal_replay(env, "/db", 2, 0, on_record, &r), KV_ERR_CORRUPT);
    recs_free(&r);
  }
  free(orig);
  free(p);
  kv_env_free(env);
}

/* Replay one hand-made record holding `payload` in the last segment: KV_ERR_CORRUPT with
** `why` in the message. */
static void expect_corrupt(kv_env *env, const uint8_t *payload, size_t len, const char *why) {
  uint8_t *buf = malloc(HDR + len);
  write_file(env, "/db/wal-9.log", buf, raw_record(buf, 1, 1, payload, len));
  recs r = {0};
  assert_int_equal(kv_wal_replay(env, "/db", 9, 1, on_record, &r), KV_ERR_CORRUPT);
  assert_int_equal(r.n, 0);
  if (!strstr(kv_errmsg(), why)) fail_msg("message \"%s\" lacks \"%s\"", kv_errmsg(), why);
  recs_free(&r);
  free(buf);
}

static void test_record_form_damage(void **state) {
  kv_env *env = new_env();
  /* The first op cannot take a field from an op before it. */
  static const uint8_t first[] = {1, 0x20, 0x01, 'q', 0x02, 0x01, 'v'};
  expect_corrupt(env, first, sizeof first, "first op");
  static const uint8_t first_ts[] = {1, 0x41, 0x01, 0x01, 'r', 0x01, 'q'};
  expect_corrupt(env, first_ts, sizeof first_ts, "first op");
  /* A type byte with a bit no format defines. */
  static const uint8_t bit7[] = {2, 0x00, 0x01, 0x01, 'r', 0x01, 'q', 0x02, 0x00,
                                 0xb0, 0x01, 'q', 0x02, 0x00};
  expect_corrupt(env, bit7, sizeof bit7, "type");
  static const uint8_t bit2[] = {2, 0x00, 0x01, 0x01, 'r', 0x01, 'q', 0x02, 0x00,
                                 0x34, 0x01, 'q', 0x02, 0x00};
  expect_corrupt(env, bit2, sizeof bit2, "type");
  /* A flagged op cut short. */
  static const uint8_t cut[] = {2, 0x00, 0x01, 0x01, 'r', 0x01, 'q', 0x02, 0x00, 0x70, 0x05};
  expect_corrupt(env, cut, sizeof cut, "qualifier");
  /* Ops that repeat a long row key would pass KV_MAX_BATCH once expanded. */
  size_t row = 30000, reps = KV_MAX_BATCH / row + 2, len = 0;
  uint8_t *big = malloc(16 + row + 4 * reps);
  len = (size_t)(kv_put_varint(big, reps + 1) - big);
  big[len++] = KV_DELETE_FAMILY;
  big[len++] = 1;
  len = (size_t)(kv_put_varint(big + len, row) - big);
  memset(big + len, 'k', row);
  len += row;
  big[len++] = 0;    /* no qualifier */
  big[len++] = 0x02; /* ts 1 */
  for (size_t i = 0; i < reps; i++) {
    big[len++] = KV_DELETE_FAMILY | KV_WAL_SAME_FAMILY | KV_WAL_SAME_ROW | KV_WAL_SAME_TS;
    big[len++] = 0;
  }
  expect_corrupt(env, big, len, "batch form");
  free(big);
  kv_env_free(env);
}

static void test_posix_round_trip_and_torn_tail(void **state) {
  char dir[] = "/tmp/rowan_wal_XXXXXX";
  assert_non_null(mkdtemp(dir));
  kv_env *env = kv_env_posix();
  kv_wal *w;
  uint8_t *p;
  size_t n = one_payload(&p, 1);
  assert_int_equal(kv_wal_create(env, dir, 1, KV_SYNC_FULL, &w), KV_OK);
  for (int i = 0; i < 20; i++) assert_int_equal(kv_wal_append(w, 1 + (uint64_t)i, 7, p, n), KV_OK);
  assert_int_equal(kv_wal_sync(w), KV_OK);
  uint64_t good = kv_wal_size(w);
  assert_int_equal(kv_wal_append(w, 21, 7, p, n), KV_OK);
  assert_int_equal(kv_wal_close(w), KV_OK);
  char path[256];
  kv_wal_path(path, sizeof path, dir, 1);
  kv_file *f;
  assert_int_equal(env->open(env, path, KV_OPEN_WRITE, &f), KV_OK);
  assert_int_equal(env->truncate(f, good + 5), KV_OK); /* tear the last record */
  env->close(f);
  recs r = {0};
  assert_int_equal(kv_wal_replay(env, dir, 1, 1, on_record, &r), KV_OK);
  assert_int_equal(r.n, 20);
  assert_int_equal(r.v[19].seq, 20);
  assert_int_equal(r.v[19].ts, 7);
  assert_memory_equal(r.v[19].p, p, n);
  recs_free(&r);
  assert_int_equal(env->open(env, path, KV_OPEN_READ, &f), KV_OK);
  uint64_t size;
  assert_int_equal(env->size(f, &size), KV_OK);
  assert_int_equal(size, good);
  env->close(f);
  assert_int_equal(env->remove(env, path), KV_OK);
  assert_int_equal(env->rmdir(env, dir), KV_OK);
  free(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_round_trip_many),
    cmocka_unit_test(test_record_form_bytes),
    cmocka_unit_test(test_batch_form_records_replay),
    cmocka_unit_test(test_record_form_torn_tail),
    cmocka_unit_test(test_record_form_damage),
    cmocka_unit_test(test_sync_full),
    cmocka_unit_test(test_sync_normal),
    cmocka_unit_test(test_sync_off),
    cmocka_unit_test(test_large_records),
    cmocka_unit_test(test_torn_tail_every_length),
    cmocka_unit_test(test_bit_flip_in_middle_record_is_corruption),
    cmocka_unit_test(test_damaged_length),
    cmocka_unit_test(test_segments),
    cmocka_unit_test(test_write_errors),
    cmocka_unit_test(test_undecodable_op_is_corruption),
    cmocka_unit_test(test_decode_op),
    cmocka_unit_test(test_posix_round_trip_and_torn_tail),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
