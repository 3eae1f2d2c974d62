/*
** tests/kv/test_colscan.c: kv_colagg_run (kv/colscan/colscan.h) against a plain kv scan with the
** same projection and the same predicates as a filter callback: random rows (keys of one
** length and of many lengths, so every rows-section mode), three qualifiers (two fixed-width,
** one variable; in most rounds the fixed ones are doubles of a few decimals, which the store
** files keep as decimal-scaled groups), puts, every tombstone kind, several versions, small blocks (rows split
** across blocks), flushes and minor and major compactions, one and two threads. The answer
** (count of passing rows, and an order-free digest of the wanted values) plus the rows of the
** fallback ranges read the plain way must equal the plain scan's. Lone tombstones (NULLs
** written as column deletes) answered on the columns; a tombstone in a row continued across
** blocks; runs of blocks read with one pread. Then damaged blocks with valid checksums: KV_OK or KV_ERR_CORRUPT, never a crash
** (run under ASan in CI).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kv/colscan/colscan_int.h"
#include "kv/db/db_impl.h"
#include "kv/env/env_mem.h"
#include "kv/kv.h"
#include "kv/sf/sf_int.h"
#include "testutil.h"
#include "tu_kv.h"

static const uint8_t QA[] = {'a'}, QB[] = {'b'}, QC[] = {'c'};
static const uint8_t *const quals[3] = {QA, QB, QC};
static const uint32_t qlens[3] = {1, 1, 1};
static const int32_t widths[3] = {8, 8, -1};

typedef struct acc {
  uint64_t rows;   /* rows consumed */
  uint64_t digest; /* sum of a hash of (arg index, value) over the values handed */
} acc;

static uint64_t hash_val(uint32_t a, const uint8_t *p, uint32_t n) {
  uint64_t h = 1469598103934665603ull ^ a;
  for (uint32_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
  return h * 0x9E3779B97F4A7C15ull;
}

typedef struct query {
  kv_colpred preds[3];
  uint8_t kbuf[3][8];
  uint32_t n_preds;
  uint32_t args[3];
  uint32_t n_args;
} query;

static int consume(void *ctx, uint32_t n, const kv_colvals *vals);
static uint32_t g_n_args;

static int consume(void *ctx, uint32_t n, const kv_colvals *vals) {
  acc *a = ctx;
  a->rows += n;
  for (uint32_t r = 0; r < n; r++)
    for (uint32_t i = 0; i < g_n_args; i++)
      if (vals[i].p[r]) a->digest += hash_val(i, vals[i].p[r], vals[i].len[r]);
  return 0;
}

/* The newest cell of qualifier q in the row, or NULL. */
static const kv_cell_view *cell_of(const kv_row *row, uint32_t q) {
  for (uint32_t i = 0; i < row->n_cells; i++)
    if (row->cells[i].qual_len == 1 && row->cells[i].qual[0] == quals[q][0]) return &row->cells[i];
  return NULL;
}

static const query *g_q;

static bool filter(void *ctx, const kv_row *row) {
  (void)ctx;
  for (uint32_t i = 0; i < g_q->n_preds; i++) {
    const kv_cell_view *c = cell_of(row, g_q->preds[i].q);
    if (!c || !kv_cs_pass(&g_q->preds[i], c->value, c->value_len)) return false;
  }
  return true;
}

/* Read [ranges] (all when n_ranges is 0) the plain way into *a. */
static void plain(kv_db *db, uint32_t fid, const kv_range *ranges, uint32_t n_ranges,
                  uint64_t snapshot, acc *a) {
  kv_qualifier_set qs = {fid, quals, qlens, 3};
  kv_scan_options o;
  memset(&o, 0, sizeof o);
  o.family_ids = &fid;
  o.n_families = 1;
  o.qualifiers = &qs;
  o.n_qualifier_sets = 1;
  o.ranges = ranges;
  o.n_ranges = n_ranges;
  o.snapshot = snapshot;
  o.filter = filter;
  kv_scan *s = NULL;
  assert_int_equal(kv_scan_open(db, &o, &s), KV_OK);
  kv_row row;
  int rc;
  while ((rc = kv_scan_next(s, &row)) == KV_OK) {
    a->rows++;
    for (uint32_t i = 0; i < g_q->n_args; i++) {
      const kv_cell_view *c = cell_of(&row, g_q->args[i]);
      if (c) a->digest += hash_val(i, c->value, c->value_len);
    }
  }
  assert_int_equal(rc, KV_ERR_NOTFOUND);
  kv_scan_close(s);
}

static void random_query(uint64_t *rs, query *q) {
  memset(q, 0, sizeof q[0]);
  q->n_preds = 1 + (uint32_t)tu_below(rs, 3);
  for (uint32_t i = 0; i < q->n_preds; i++) {
    kv_colpred *p = &q->preds[i];
    p->q = (uint32_t)tu_below(rs, 3);
    p->op = (uint8_t)tu_below(rs, 7);
    if (p->q < 2) {
      for (int j = 0; j < 8; j++) q->kbuf[i][j] = (uint8_t)(j == 0 ? 0x80 + tu_below(rs, 4) : tu_below(rs, 256));
      p->klen = 8;
    } else {
      q->kbuf[i][0] = (uint8_t)('a' + tu_below(rs, 4));
      p->klen = 1 + (uint32_t)tu_below(rs, 2);
      q->kbuf[i][1] = 'x';
    }
    p->k = q->kbuf[i];
  }
  if (tu_below(rs, 2)) {
    q->n_preds = 1; /* the one-column fast path, often */
    q->n_args = (uint32_t)tu_below(rs, 2);
    q->args[0] = q->preds[0].q;
  } else {
    q->n_args = (uint32_t)tu_below(rs, 4);
    for (uint32_t i = 0; i < q->n_args; i++) q->args[i] = (uint32_t)tu_below(rs, 3);
  }
}

static uint64_t g_inflated; /* check(): the run's bytes_inflated */
static uint64_t g_blocks_fallback; /* check(): the run's blocks handed back */
static uint64_t g_blocks, g_reads, g_bytes_read; /* check(): blocks, preads, bytes read */

/* Compare kv_colagg_run (threads) with the plain scan; returns whether it applied. */
static bool check(kv_db *db, uint32_t fid, const query *q, int threads, uint64_t seed) {
  g_q = q;
  g_n_args = q->n_args;
  acc want = {0, 0}, got[2] = {{0, 0}, {0, 0}};
  plain(db, fid, NULL, 0, 0, &want);
  void *ctx[2] = {&got[0], &got[1]};
  kv_colagg_spec sp;
  memset(&sp, 0, sizeof sp);
  sp.family_id = fid;
  sp.quals = quals;
  sp.qual_lens = qlens;
  sp.n_quals = 3;
  sp.widths = widths;
  sp.preds = q->preds;
  sp.n_preds = q->n_preds;
  sp.args = q->args;
  sp.n_args = q->n_args;
  sp.consume = consume;
  sp.ctx = ctx;
  sp.threads = threads;
  kv_colagg_result res;
  assert_int_equal(kv_colagg_run(db, &sp, &res), KV_OK);
  bool applied = res.applicable;
  g_inflated = res.bytes_inflated;
  g_blocks_fallback = res.blocks_fallback;
  g_blocks = res.blocks;
  g_reads = res.reads;
  g_bytes_read = res.bytes_read;
  if (applied) {
    acc fb = {0, 0};
    if (res.n_fallback) plain(db, fid, res.fallback, res.n_fallback, res.snapshot, &fb);
    uint64_t rows = got[0].rows + got[1].rows + fb.rows;
    uint64_t dig = got[0].digest + got[1].digest + fb.digest;
    if (rows != want.rows || dig != want.digest || res.rows + fb.rows != want.rows)
      fprintf(stderr, "seed %llu: threads %d preds %u args %u: %llu rows (%llu from %u ranges), want %llu\n",
              (unsigned long long)seed, threads, q->n_preds, q->n_args,
              (unsigned long long)rows, (unsigned long long)fb.rows, res.n_fallback,
              (unsigned long long)want.rows);
    assert_int_equal(rows, want.rows);
    assert_int_equal(res.rows + fb.rows, want.rows);
    if (dig != want.digest) fprintf(stderr, "digest: got %llx+%llx+fb %llx want %llx; q %u op %u arg %u\n", (unsigned long long)got[0].digest, (unsigned long long)got[1].digest, (unsigned long long)fb.digest, (unsigned long long)want.digest, q->preds[0].q, q->preds[0].op, q->args[0]);
    assert_true(dig == want.digest);
  }
  kv_colagg_result_free(&res);
  return applied;
}

typedef struct store {
  kv_env *env;
  kv_db *db;
  uint32_t fid;
} store;

/* The query `QA >= 0x81...` (the upper half of QA's 8-byte values) made the current one
** (g_q), and its answer by the plain scan, which must have rows. */
static acc query_a_high(store *s, query *qa) {
  memset(qa, 0, sizeof *qa);
  qa->n_preds = 1;
  qa->preds[0].op = KV_COL_GE;
  qa->kbuf[0][0] = 0x81;
  qa->preds[0].klen = 8;
  qa->preds[0].k = qa->kbuf[0];
  g_q = qa;
  acc want = {0, 0};
  plain(s->db, s->fid, NULL, 0, 0, &want);
  assert_true(want.rows > 0);
  return want;
}

/* Create table "t" with one family "f" in s->db and set s->fid. */
static void store_family(store *s, uint32_t block_size, int versions, int compression) {
  kv_family_options f;
  memset(&f, 0, sizeof f);
  f.name = "f";
  f.block_size = block_size;
  f.max_versions = versions;
  f.compression = compression;
  assert_int_equal(kv_create_table(s->db, "t", &f, 1), KV_OK);
  assert_int_equal(kv_family_id(s->db, "t", "f", &s->fid), KV_OK);
}

static void store_open(store *s, uint32_t block_size, int versions, int compression) {
  s->env = kv_env_mem_new(1700000000000LL);
  kv_options o;
  kv_options_init(&o);
  o.env = s->env;
  o.create_if_missing = true;
  o.sync_mode = KV_SYNC_OFF;
  o.compaction_trigger = 100;
  assert_int_equal(kv_open("/db", &o, &s->db), KV_OK);
  store_family(s, block_size, versions, compression);
}

static void store_close(store *s) {
  kv_close(s->db);
  kv_env_free(s->env);
}

/* A random row key: fixed 6 bytes, or 1..12 bytes (prefix mode). */
static size_t make_key(uint64_t *rs, bool fixed, uint8_t *k) {
  if (fixed) {
    uint64_t v = tu_below(rs, 5000);
    for (int i = 0; i < 6; i++) k[i] = (uint8_t)(v >> (8 * (5 - i)));
    return 6;
  }
  size_t n = 1 + tu_below(rs, 12);
  for (size_t i = 0; i < n; i++) k[i] = (uint8_t)('a' + tu_below(rs, 3));
  return n;
}

static bool g_nulls = true; /* write_batch leaves cells out (else every row is dense) */
static bool g_decimal;      /* write_batch's 8-byte values are doubles of 0-3 decimals in the
                               order-preserving encoding (stored as decimal-scaled groups) */

/* The order-preserving 8 bytes of a double (IEEE bits big-endian, sign bit flipped for
** positives, every bit inverted for negatives), of m / 10^k. */
static void decimal_value(uint64_t *rs, uint8_t v[8]) {
  static const double p10[] = {1, 10, 100, 1000};
  int64_t m = (int64_t)tu_below(rs, 30000) - 5000;
  double x = (double)m / p10[tu_below(rs, 4)];
  uint64_t b;
  memcpy(&b, &x, 8);
  b = (b >> 63) ? ~b : b ^ (1ull << 63);
  for (int i = 7; i >= 0; i--) { v[i] = (uint8_t)b; b >>= 8; }
}

static void write_batch(store *s, uint64_t *rs, bool fixed, int n, bool deletes) {
  kv_batch *b = kv_batch_new();
  for (int i = 0; i < n; i++) {
    uint8_t k[16];
    size_t kl = make_key(rs, fixed, k);
    uint64_t what = tu_below(rs, 20);
    if (deletes && what == 0) {
      assert_int_equal(kv_batch_delete(b, s->fid, KV_DELETE_FAMILY, k, kl, NULL, 0, KV_TS_NOW), KV_OK);
    } else if (deletes && what == 1) {
      const uint8_t *q = quals[tu_below(rs, 3)];
      assert_int_equal(kv_batch_delete(b, s->fid, KV_DELETE_COLUMN, k, kl, q, 1, KV_TS_NOW), KV_OK);
    } else {
      for (uint32_t q = 0; q < 3; q++) {
        if (g_nulls && tu_below(rs, 4) == 0) continue; /* no cell: NULL */
        uint8_t v[8];
        size_t vl = 8;
        if (q < 2 && g_decimal) {
          decimal_value(rs, v);
        } else if (q < 2) {
          v[0] = (uint8_t)(0x80 + tu_below(rs, 4));
          for (int j = 1; j < 8; j++) v[j] = (uint8_t)tu_below(rs, 256);
        } else {
          vl = tu_below(rs, 3);
          for (size_t j = 0; j < vl; j++) v[j] = (uint8_t)('a' + tu_below(rs, 4));
        }
        assert_int_equal(kv_batch_put(b, s->fid, k, kl, quals[q], 1, KV_TS_NOW, v, vl), KV_OK);
      }
    }
  }
  assert_int_equal(kv_commit(s->db, b, NULL), KV_OK);
  kv_batch_free(b);
}

static void against_plain_scan(void **state) {
  (void)state;
  uint64_t seed = tu_seed("against_plain_scan"), rs = seed;
  int rounds = (int)tu_scaled(12, 4);
  int applied = 0, total = 0;
  for (int round = 0; round < rounds; round++) {
    store s;
    bool fixed = round % 2 == 0;
    g_nulls = round % 4 < 2; /* half the rounds without NULLs: dense blocks */
    g_decimal = round % 3 != 1; /* most rounds' 8-byte groups decimal-scaled */
    /* every third round: blocks large enough to be framed in sections (kv/sf/sf_frame.c),
    ** whose value groups the scan decompresses only when it references them */
    bool big = round % 3 == 2;
    store_open(&s, big ? 8192 + (uint32_t)tu_below(&rs, 16384) : 256 + (uint32_t)tu_below(&rs, 2048),
               1 + (int)tu_below(&rs, 3),
               big || tu_below(&rs, 2) ? KV_COMPRESSION_LZ4 : KV_COMPRESSION_NONE);
    int n = (int)tu_scaled(1500, 300);
    write_batch(&s, &rs, fixed, n, false);
    assert_int_equal(kv_compact(s.db, NULL, true), KV_OK);
    if (g_decimal) { /* the file holds decimal-scaled groups, which the scans below read */
      kv_fam *fam = s.db->fams[s.fid];
      assert_int_equal(fam->n_files, 1);
      const kv_sf_reader *rd = fam->files[0]->reader; /* 4 if its filter is partitioned */
      assert_int_equal(rd->props.format_version,
                       rd->nfparts ? KV_SF_FORMAT_VERSION_PART : KV_SF_FORMAT_VERSION_DEC);
    }
    for (int phase = 0; phase < 3; phase++) {
      for (int i = 0; i < 6; i++) {
        query q;
        random_query(&rs, &q);
        applied += check(s.db, s.fid, &q, 1 + (int)tu_below(&rs, 2), seed);
        total++;
      }
      /* more writes: versions and tombstones, then one file again (minor keeps them) */
      write_batch(&s, &rs, fixed, n / 3, true);
      assert_int_equal(kv_flush(s.db, NULL), KV_OK);
      assert_int_equal(kv_compact(s.db, NULL, phase == 1), KV_OK);
      /* and rows in the memstore: they and the blocks around them go the row way */
      write_batch(&s, &rs, fixed, (int)tu_below(&rs, 40), true);
    }
    store_close(&s);
  }
  g_nulls = true;
  g_decimal = false;
  assert_int_equal(applied, total); /* one file, few memstore rows: always applicable */
}

/* Blocks framed in sections: a scan that references one qualifier decompresses the rows and
** cells section and that qualifier's group only, and answers as the plain scan does. */
static void sectioned_blocks(void **state) {
  (void)state;
  uint64_t seed = tu_seed("sectioned_blocks"), rs = seed;
  store s;
  store_open(&s, 32768, 1, KV_COMPRESSION_LZ4);
  g_nulls = false;
  write_batch(&s, &rs, true, 4000, false);
  assert_int_equal(kv_compact(s.db, NULL, true), KV_OK);
  kv_fam *f = s.db->fams[s.fid];
  assert_int_equal(f->n_files, 1);
  kv_sf_reader *rd = f->files[0]->reader;
  uint64_t raw_total = 0, sectioned = 0;
  for (uint32_t b = 0; b < rd->props.blocks; b++) {
    const kv_sf_index_entry *e = &rd->index[b];
    uint8_t first;
    assert_int_equal(kv_sf_read_at(rd, e->off, &first, 1), KV_OK);
    sectioned += first == KV_SF_STORED_SECTIONS;
    raw_total += e->raw;
  }
  assert_true(sectioned > 0);
  /* random 8-byte values: no decimal-scaled group, so format version 2 (4 when its bloom
     filter is partitioned) */
  assert_int_equal(rd->props.format_version,
                   rd->nfparts ? KV_SF_FORMAT_VERSION_PART : KV_SF_FORMAT_VERSION_NODEC);
  for (uint32_t q = 0; q < 3; q++) {
    query qq;
    memset(&qq, 0, sizeof qq);
    qq.n_preds = 1;
    qq.preds[0].q = q;
    qq.preds[0].op = KV_COL_GE;
    if (q < 2) {
      qq.kbuf[0][0] = 0x81;
      qq.preds[0].klen = 8;
    } else {
      qq.kbuf[0][0] = 'b';
      qq.preds[0].klen = 1;
    }
    qq.preds[0].k = qq.kbuf[0];
    qq.args[0] = q;
    qq.n_args = 1;
    assert_true(check(s.db, s.fid, &qq, 1, seed));
    /* three qualifiers: the rows, cells and one group's bytes are well under the whole */
    assert_true(g_inflated > 0);
    assert_true(g_inflated < raw_total * 3 / 4);
  }
  g_nulls = true;
  store_close(&s);
}

/* The column cache under a column about twice its size, scanned again and again: each pass
** used to insert every block and evict the ones the next pass needed first (no hits at all);
** the admission keeps a stable part, so later passes find about as many blocks as fit. */
static void column_cache_scan_resistant(void **state) {
  (void)state;
  uint64_t seed = tu_seed("column_cache_scan_resistant"), rs = seed;
  kv_env *env = kv_env_mem_new(1700000000000LL);
  /* a column cache of a quarter of the block cache: 96 KiB, one shard */
  store s = {env, tu_kv_open_mem(env, 4 * 96 * 1024), 0};
  store_family(&s, 4096, 1, KV_COMPRESSION_LZ4);
  /* one qualifier, 8-byte values: about 9 bytes a row in the column cache */
  for (int b = 0; b < 5; b++) {
    kv_batch *bt = kv_batch_new();
    for (int i = 0; i < 5000; i++) {
      uint8_t k[6], v[8];
      uint64_t r = (uint64_t)b * 5000 + (uint64_t)i;
      for (int j = 0; j < 6; j++) k[j] = (uint8_t)(r >> (8 * (5 - j)));
      v[0] = (uint8_t)(0x80 + tu_below(&rs, 4));
      for (int j = 1; j < 8; j++) v[j] = (uint8_t)tu_below(&rs, 256);
      assert_int_equal(kv_batch_put(bt, s.fid, k, 6, QA, 1, KV_TS_NOW, v, 8), KV_OK);
    }
    assert_int_equal(kv_commit(s.db, bt, NULL), KV_OK);
    kv_batch_free(bt);
  }
  assert_int_equal(kv_compact(s.db, NULL, true), KV_OK);
  static const uint8_t *const q1[1] = {QA};
  static const uint32_t l1[1] = {1};
  static const int32_t w1[1] = {8};
  uint8_t key[8] = {0x81, 0, 0, 0, 0, 0, 0, 0};
  kv_colpred p = {0, KV_COL_GE, key, 8};
  uint64_t blocks = 0, hits[6] = {0}, count0 = 0;
  for (int pass = 0; pass < 6; pass++) {
    kv_colagg_spec sp;
    memset(&sp, 0, sizeof sp);
    sp.family_id = s.fid;
    sp.quals = q1;
    sp.qual_lens = l1;
    sp.n_quals = 1;
    sp.widths = w1;
    sp.preds = &p;
    sp.n_preds = 1;
    sp.threads = 1;
    kv_colagg_result res;
    assert_int_equal(kv_colagg_run(s.db, &sp, &res), KV_OK);
    assert_true(res.applicable);
    if (pass == 0) count0 = res.rows;
    assert_int_equal(res.rows, count0); /* the cache never changes the answer */
    blocks = res.blocks;
    hits[pass] = res.blocks_cache_hit;
    kv_colagg_result_free(&res);
  }
  fprintf(stderr, "[column cache] %llu blocks a pass; hits by pass: %llu %llu %llu %llu %llu\n",
          (unsigned long long)blocks, (unsigned long long)hits[1], (unsigned long long)hits[2],
          (unsigned long long)hits[3], (unsigned long long)hits[4], (unsigned long long)hits[5]);
  assert_true(count0 > 0);
  assert_int_equal(hits[0], 0);
  /* the column is about twice the cache: later passes hit a fifth of the blocks or more */
  for (int pass = 2; pass < 6; pass++) assert_true(hits[pass] * 5 >= blocks);
  assert_true(hits[5] < blocks); /* it does not all fit: the test is about the overflow */
  kv_close(s.db);
  kv_env_free(env);
}

/* Damaged block contents with valid framing: an error or an answer, never an overrun. */
static void damaged_blocks(void **state) {
  (void)state;
  uint64_t seed = tu_seed("damaged_blocks"), rs = seed;
  store s;
  store_open(&s, 4096, 1, KV_COMPRESSION_NONE);
  write_batch(&s, &rs, false, 400, false);
  assert_int_equal(kv_compact(s.db, NULL, true), KV_OK);
  kv_fam *f = s.db->fams[s.fid];
  assert_int_equal(f->n_files, 1);
  const char *path = f->files[0]->path;
  const kv_sf_index_entry *e = &f->files[0]->reader->index[0];
  uint32_t stored = e->size - KV_SF_BLOCK_OVERHEAD;
  uint8_t *orig = malloc(e->size), *raw = malloc(stored);
  for (uint32_t i = 0; i < e->size; i++) assert_int_equal(kv_env_mem_get_byte(s.env, path, e->off + i, &orig[i]), KV_OK);
  assert_int_equal(orig[0], KV_SF_STORED_RAW);
  query q;
  memset(&q, 0, sizeof q);
  q.n_preds = 2; /* two columns: the general path, no column cache */
  q.preds[0].q = 0;
  q.preds[0].op = KV_COL_PRESENT;
  q.preds[1].q = 2;
  q.preds[1].op = KV_COL_PRESENT;
  q.args[0] = 2;
  q.n_args = 1;
  int corrupt = 0, ok = 0, n = (int)tu_scaled(300, 60);
  for (int it = 0; it < n; it++) {
    memcpy(raw, orig + KV_SF_BLOCK_HEADER, stored);
    int flips = 1 + (int)tu_below(&rs, 3);
    for (int k = 0; k < flips; k++) {
      uint32_t at = (uint32_t)tu_below(&rs, tu_below(&rs, 2) ? (stored < 64 ? stored : 64) : stored);
      raw[at] = (uint8_t)tu_rand(&rs);
    }
    kv_sfbuf out = {0};
    assert_int_equal(kv_sf_frame_block(raw, stored, KV_COMPRESSION_NONE, &out), KV_OK);
    assert_int_equal(out.len, e->size);
    for (uint32_t i = 0; i < e->size; i++) kv_env_mem_set_byte(s.env, path, e->off + i, out.p[i]);
    kv_sfbuf_free(&out);
    acc a[2] = {{0, 0}, {0, 0}};
    void *ctx[2] = {&a[0], &a[1]};
    g_n_args = 1;
    kv_colagg_spec sp;
    memset(&sp, 0, sizeof sp);
    sp.family_id = s.fid;
    sp.quals = quals;
    sp.qual_lens = qlens;
    sp.n_quals = 3;
    sp.widths = widths;
    sp.preds = q.preds;
    sp.n_preds = q.n_preds;
    sp.args = q.args;
    sp.n_args = q.n_args;
    sp.consume = consume;
    sp.ctx = ctx;
    sp.threads = 2;
    kv_colagg_result res;
    int rc = kv_colagg_run(s.db, &sp, &res);
    assert_true(rc == KV_OK || rc == KV_ERR_CORRUPT);
    if (rc == KV_ERR_CORRUPT) {
      corrupt++;
      assert_non_null(strstr(kv_errmsg(), "block at offset"));
    } else {
      ok++;
    }
    kv_colagg_result_free(&res);
  }
  for (uint32_t i = 0; i < e->size; i++) kv_env_mem_set_byte(s.env, path, e->off + i, orig[i]);
  assert_true(corrupt > 0);
  free(orig);
  free(raw);
  store_close(&s);
}

/* A one-qualifier scan of qualifier a (a >= 0x81...: rows with an a put above it): its
** count, run twice so the second is answered from the column cache (must be every block). */
static uint64_t scan_a_twice(store *s) {
  static const uint8_t *const q1[1] = {QA};
  static const uint32_t l1[1] = {1};
  static const int32_t w1[1] = {8};
  static uint8_t key[8] = {0x81, 0, 0, 0, 0, 0, 0, 0};
  kv_colpred p = {0, KV_COL_GE, key, 8};
  uint64_t rows[2] = {0, 0};
  for (int pass = 0; pass < 2; pass++) {
    kv_colagg_spec sp;
    memset(&sp, 0, sizeof sp);
    sp.family_id = s->fid;
    sp.quals = q1;
    sp.qual_lens = l1;
    sp.n_quals = 1;
    sp.widths = w1;
    sp.preds = &p;
    sp.n_preds = 1;
    sp.threads = 1 + pass;
    kv_colagg_result res;
    assert_int_equal(kv_colagg_run(s->db, &sp, &res), KV_OK);
    assert_true(res.applicable);
    assert_int_equal(res.n_fallback, 0);
    assert_int_equal(res.blocks_fallback, 0);
    if (pass == 1) assert_int_equal(res.blocks_cache_hit, res.blocks);
    rows[pass] = res.rows;
    kv_colagg_result_free(&res);
  }
  assert_int_equal(rows[0], rows[1]);
  return rows[0];
}

/* Rows whose NULLs were written as column deletes (an UPSERT of NULL into a new row), kept in
** the file (a flush drops nothing; a major compaction inside the look-back window neither):
** such a tombstone is its (row, qualifier)'s only cell, masks nothing, and the block is
** still answered on its columns, in every path (one column, several, dense, the column
** cache), as the plain scan answers it. Blocks where qualifier a has only tombstones are
** among them (its group is then absent). A family delete still hands its block back. */
static void lone_tombstones(void **state) {
  (void)state;
  uint64_t seed = tu_seed("lone_tombstones"), rs = seed;
  for (int round = 0; round < 4; round++) {
    store s;
    bool big = round >= 2; /* sectioned blocks: the tombstones' group is a section */
    store_open(&s, big ? 8192 : 1024, 1, KV_COMPRESSION_LZ4);
    int n = (int)tu_scaled(4000, 1000);
    kv_batch *b = kv_batch_new();
    for (int i = 0; i < n; i++) {
      uint8_t k[6];
      for (int j = 0; j < 6; j++) k[j] = (uint8_t)((uint64_t)i >> (8 * (5 - j)));
      /* rows 1000..1599: a is NULL in every one (whole blocks without an a put); in rounds
         0 and 2 one qualifier in five is NULL besides, as a tombstone or as no cell at all
         (so the blocks' qualifier streams are not all a, b, c repeated) */
      for (uint32_t q = 0; q < 3; q++) {
        bool null = (q == 0 && i >= 1000 && i < 1600) || (round % 2 == 0 && tu_below(&rs, 5) == 0);
        if (null && round % 2 == 0 && tu_below(&rs, 2)) continue;
        if (null) {
          assert_int_equal(kv_batch_delete(b, s.fid, KV_DELETE_COLUMN, k, 6, quals[q], 1, KV_TS_NOW), KV_OK);
          continue;
        }
        uint8_t v[8];
        size_t vl = q < 2 ? 8 : tu_below(&rs, 3);
        for (size_t j = 0; j < vl; j++)
          v[j] = (uint8_t)(q < 2 ? (j == 0 ? 0x80 + tu_below(&rs, 4) : tu_below(&rs, 256)) : 'a' + tu_below(&rs, 4));
        assert_int_equal(kv_batch_put(b, s.fid, k, 6, quals[q], 1, KV_TS_NOW, v, vl), KV_OK);
      }
    }
    assert_int_equal(kv_commit(s.db, b, NULL), KV_OK);
    kv_batch_free(b);
    assert_int_equal(kv_flush(s.db, NULL), KV_OK);
    /* every path, answered on the columns */
    for (int i = 0; i < 24; i++) {
      query q;
      random_query(&rs, &q);
      assert_true(check(s.db, s.fid, &q, 1 + i % 2, seed));
      assert_int_equal(g_blocks_fallback, 0);
    }
    query qa;
    acc want = query_a_high(&s, &qa);
    assert_int_equal(scan_a_twice(&s), want.rows);
    /* a family delete of one row: its block goes the row way, the answer stays right */
    b = kv_batch_new();
    uint8_t k7[6] = {0, 0, 0, 0, 0, 7};
    assert_int_equal(kv_batch_delete(b, s.fid, KV_DELETE_FAMILY, k7, 6, NULL, 0, KV_TS_NOW), KV_OK);
    assert_int_equal(kv_commit(s.db, b, NULL), KV_OK);
    kv_batch_free(b);
    assert_int_equal(kv_flush(s.db, NULL), KV_OK);
    assert_int_equal(kv_compact(s.db, NULL, false), KV_OK); /* one file, tombstones kept */
    assert_true(check(s.db, s.fid, &qa, 1, seed));
    store_close(&s);
  }
}

/* Fragments of one row from two blocks (a row continued across a block boundary): a
** tombstone in either part may mask the other part's cell, so the row goes the row way (a
** one-key fallback range) instead of being counted; without one the parts merge. */
static void tombstone_across_blocks(void **state) {
  (void)state;
  static const uint8_t *const q1[1] = {QA};
  static const uint32_t l1[1] = {1};
  uint8_t key[8] = {0x81, 0, 0, 0, 0, 0, 0, 0}, val[8] = {0x90, 1, 2, 3, 4, 5, 6, 7};
  kv_colpred p = {0, KV_COL_GE, key, 8};
  kv_colagg_spec sp;
  memset(&sp, 0, sizeof sp);
  sp.quals = q1;
  sp.qual_lens = l1;
  sp.n_quals = 1;
  sp.preds = &p;
  sp.n_preds = 1;
  sp.threads = 1;
  cs_plan pl;
  memset(&pl, 0, sizeof pl);
  pl.spec = &sp;
  pl.n_ref = 1;
  pl.fast = true;
  static const uint8_t row[3] = {'r', 'o', 'w'}, next[3] = {'r', 'o', 'x'};
  for (int tomb_side = -1; tomb_side < 2; tomb_side++) {
    cs_worker w;
    memset(&w, 0, sizeof w);
    w.plan = &pl;
    for (int part = 0; part < 2; part++) {
      cs_frag *f = &w.tmp;
      f->kind = CF_ROW;
      f->dup = false;
      f->tomb = part == tomb_side;
      f->has_q = part == 1; /* the a put is in the second part */
      f->have = part == 1;
      f->vals_len = 0;
      assert_int_equal(kv_cs_frag_key(f, row, 3), KV_OK);
      if (part == 1) {
        f->vals = realloc(f->vals, 8);
        f->vals_cap = 8;
        memcpy(f->vals, val, 8);
        f->voff[0] = 0;
        f->vlen[0] = 8;
        f->vals_len = 8;
      }
      assert_int_equal(kv_cs_feed(&w, f), KV_OK);
    }
    cs_frag *f = &w.tmp; /* the next row completes the first */
    f->kind = CF_ROW;
    f->tomb = false;
    f->has_q = false;
    f->have = 0;
    assert_int_equal(kv_cs_frag_key(f, next, 3), KV_OK);
    assert_int_equal(kv_cs_feed(&w, f), KV_OK);
    assert_int_equal(kv_cs_flush(&w), KV_OK);
    if (tomb_side < 0) {
      assert_int_equal(w.rows, 1); /* merged and passing */
      assert_int_equal(w.n_ranges, 0);
    } else {
      assert_int_equal(w.rows, 0);
      assert_int_equal(w.n_ranges, 1);
      assert_int_equal(w.ranges[0].start_len, 3);
      assert_memory_equal(w.ranges[0].start, row, 3);
      assert_int_equal(w.ranges[0].end_len, 3);
      assert_memory_equal(w.ranges[0].end, row, 3);
    }
    kv_cs_worker_free(&w);
  }
}

/* Blocks that follow each other in a file and are not in the column cache are read with one
** pread per run (up to KV_CS_RUN_BYTES), and answer as the plain scan does: rows continued
** across blocks (wide rows of extra qualifiers) inside a run and across the runs' ends, one
** and two threads; with a column about twice the column cache, cached blocks end runs. */
static void block_runs(void **state) {
  (void)state;
  uint64_t seed = tu_seed("block_runs"), rs = seed;
  kv_env *env = kv_env_mem_new(1700000000000LL);
  /* 12,000 rows at every ROWAN_TEST_SCALE: the QA column takes about twice the 96 KiB column
     cache (a quarter of the block cache), so the later passes mix hits and runs; at 6,000
     rows it fits, and no pass reads a block */
  int n = 12000;
  store s = {env, tu_kv_open_mem(env, 4 * 96 * 1024), 0};
  store_family(&s, 1024, 1, KV_COMPRESSION_LZ4);
  kv_batch *b = kv_batch_new();
  for (int i = 0; i < n; i++) {
    uint8_t k[6], v[200];
    for (int j = 0; j < 6; j++) k[j] = (uint8_t)((uint64_t)i >> (8 * (5 - j)));
    for (uint32_t q = 0; q < 3; q++) {
      size_t vl = q < 2 ? 8 : tu_below(&rs, 3);
      for (size_t j = 0; j < vl; j++)
        v[j] = (uint8_t)(q < 2 ? (j == 0 ? 0x80 + tu_below(&rs, 4) : tu_below(&rs, 256)) : 'a' + tu_below(&rs, 4));
      assert_int_equal(kv_batch_put(b, s.fid, k, 6, quals[q], 1, KV_TS_NOW, v, vl), KV_OK);
    }
    if (i % 50 == 7) /* a row of about 2.4 KiB: it continues in the next block */
      for (int x = 0; x < 12; x++) {
        uint8_t qx = (uint8_t)('d' + x);
        for (int j = 0; j < 200; j++) v[j] = (uint8_t)tu_below(&rs, 256);
        assert_int_equal(kv_batch_put(b, s.fid, k, 6, &qx, 1, KV_TS_NOW, v, 200), KV_OK);
      }
  }
  assert_int_equal(kv_commit(s.db, b, NULL), KV_OK);
  kv_batch_free(b);
  assert_int_equal(kv_compact(s.db, NULL, true), KV_OK);
  /* three qualifiers: no column cache, every block in a run */
  for (int i = 0; i < 8; i++) {
    query q;
    random_query(&rs, &q);
    assert_true(check(s.db, s.fid, &q, 1 + i % 2, seed));
    assert_true(g_blocks > 100);
    assert_true(g_reads > 0);
    assert_true(g_reads * KV_CS_RUN_BYTES >= g_bytes_read); /* none longer than the bound */
    assert_true(g_reads * 8 < g_blocks);                    /* most runs are long */
  }
  /* one qualifier, the column about twice the column cache: hits end runs */
  query qa;
  acc want = query_a_high(&s, &qa);
  static const uint8_t *const q1[1] = {QA};
  static const uint32_t l1[1] = {1};
  static const int32_t w1[1] = {8};
  uint64_t hits = 0;
  for (int pass = 0; pass < 5; pass++) {
    kv_colagg_spec sp;
    memset(&sp, 0, sizeof sp);
    sp.family_id = s.fid;
    sp.quals = q1;
    sp.qual_lens = l1;
    sp.n_quals = 1;
    sp.widths = w1;
    sp.preds = qa.preds;
    sp.n_preds = 1;
    sp.threads = 1 + pass % 2;
    kv_colagg_result res;
    assert_int_equal(kv_colagg_run(s.db, &sp, &res), KV_OK);
    assert_true(res.applicable);
    assert_int_equal(res.n_fallback, 0);
    assert_int_equal(res.rows, want.rows);
    uint64_t missed = res.blocks - res.blocks_cache_hit;
    assert_true(res.reads > 0 && res.reads < missed);
    assert_true(res.reads * KV_CS_RUN_BYTES >= res.bytes_read);
    if (pass >= 2) assert_true(res.blocks_cache_hit > 0 && missed > 0);
    hits += res.blocks_cache_hit;
    kv_colagg_result_free(&res);
  }
  assert_true(hits > 0);
  kv_close(s.db);
  kv_env_free(env);
}

/* Refused whole: memstore cells, overlapping files; bad specs. */
static void refusals(void **state) {
  (void)state;
  uint64_t seed = tu_seed("refusals"), rs = seed;
  store s;
  store_open(&s, 1024, 1, KV_COMPRESSION_LZ4);
  write_batch(&s, &rs, true, 300, false);
  query q;
  memset(&q, 0, sizeof q);
  q.n_preds = 1;
  q.preds[0].op = KV_COL_PRESENT;
  g_q = &q;
  g_n_args = 0;
  acc a[2] = {{0, 0}, {0, 0}};
  void *ctx[2] = {&a[0], &a[1]};
  kv_colagg_spec sp;
  memset(&sp, 0, sizeof sp);
  sp.family_id = s.fid;
  sp.quals = quals;
  sp.qual_lens = qlens;
  sp.n_quals = 3;
  sp.preds = q.preds;
  sp.n_preds = 1;
  sp.consume = consume;
  sp.ctx = ctx;
  sp.threads = 2;
  kv_colagg_result res;
  /* rows only in the memstore (no store file yet): all of them go the row way */
  assert_true(check(s.db, s.fid, &q, 2, seed));
  g_n_args = 0;
  assert_int_equal(kv_colagg_run(s.db, &sp, &res), KV_OK);
  assert_true(res.applicable);
  assert_int_equal(res.blocks, 0);
  assert_true(res.n_fallback > 0);
  kv_colagg_result_free(&res);
  assert_int_equal(kv_flush(s.db, NULL), KV_OK);
  write_batch(&s, &rs, true, 300, false);
  assert_int_equal(kv_flush(s.db, NULL), KV_OK);
  assert_int_equal(kv_colagg_run(s.db, &sp, &res), KV_OK);
  assert_false(res.applicable);
  assert_string_equal(res.why, "store files overlap");
  kv_colagg_result_free(&res);
  assert_int_equal(kv_compact(s.db, NULL, true), KV_OK);
  assert_int_equal(kv_colagg_run(s.db, &sp, &res), KV_OK);
  assert_true(res.applicable);
  kv_colagg_result_free(&res);
  uint32_t nq = sp.n_quals; /* an empty projection */
  sp.n_quals = 0;
  assert_int_equal(kv_colagg_run(s.db, &sp, &res), KV_ERR_INVALID);
  kv_colagg_result_free(&res);
  sp.n_quals = nq;
  q.preds[0].q = 7;
  assert_int_equal(kv_colagg_run(s.db, &sp, &res), KV_ERR_INVALID);
  kv_colagg_result_free(&res);
  q.preds[0].q = 0;
  sp.family_id = 999;
  assert_int_equal(kv_colagg_run(s.db, &sp, &res), KV_ERR_NOTFOUND);
  kv_colagg_result_free(&res);
  store_close(&s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(against_plain_scan),
      cmocka_unit_test(sectioned_blocks),
    cmocka_unit_test(column_cache_scan_resistant),
    cmocka_unit_test(damaged_blocks),
      cmocka_unit_test(lone_tombstones),
      cmocka_unit_test(tombstone_across_blocks),
      cmocka_unit_test(block_runs),
      cmocka_unit_test(refusals),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
