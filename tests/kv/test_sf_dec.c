/*
** tests/kv/test_sf_dec.c: decimal-scaled value groups (kv/sf/sf_dec.c; docs/FORMAT.md Part 2,
** "Values section", code 2^27): 8-byte values that are doubles of a few decimals in the
** order-preserving encoding are written scaled, and every reader gives back the same bytes:
** the whole-block decoder (all groups, and groups left out then read by rank), the compact
** block (private and packed, as the block cache keeps it; narrow, widened and its promoted
** wide copy), the point decoder, and a store
** file read through its iterator. Groups holding a value the transform cannot give back bit
** for bit (-0.0, NaN, infinities, subnormals, 0.1 + 0.2, huge doubles, BIGINT-like bytes,
** scaled ranges over 32 bits) are written in the fixed form. Damaged groups (power of ten or
** offset width out of range, truncated planes, an overlong varint) are KV_ERR_CORRUPT in
** every decoder, never a crash; random damage must decode or be refused; in a store file
** (checksum made right again) the iterator's error names the file and block. Files are format
** version 3 exactly when a group is scaled, written cell by cell or from bulk-load segments.
** Seeded: the seed is printed; ROWAN_SEED reruns it.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <cmocka.h>
#include <xxhash.h>

#include "kv/sf/sf_cblock.h"
#include "kv/sf/sf_dec.h"
#include "kv/sf/sf_point.h"
#include "kv/sf/sf_int.h"
#include "kv/util/status.h"
#include "kv/sf/sf.h"
#include "kv/sf/sf_seg.h"
#include "kv/env/env_mem.h"
#include "testutil.h"
#include "tu_blocks.h"

/* A BIGINT-like value: the integer big-endian with its sign bit flipped. */
static void enc_bigint(int64_t v, uint8_t out[8]) {
  uint64_t b = (uint64_t)v ^ (1ull << 63);
  for (int i = 7; i >= 0; i--) { out[i] = (uint8_t)b; b >>= 8; }
}

static const double P10[] = {1, 10, 100, 1000, 1e4, 1e5, 1e6};

/* A decimal with d digits after the point, magnitude below lim units. */
static double rand_decimal(uint64_t *st, uint32_t d, uint64_t lim) {
  int64_t m = (int64_t)tu_below(st, lim);
  if (tu_below(st, 3) == 0) m = -m;
  return (double)m / P10[d];
}

/* Values the transform must refuse (any one in a group sends it to the fixed form): kind
** 0..8 of them. */
static void poison_kind(uint64_t *st, uint64_t kind, uint8_t out[8]) {
  double nz = -0.0, big = 1e300, sub = 4.9406564584124654e-324;
  switch (kind) {
    case 0: tu_enc_double(nz, out); break;
    case 1: tu_enc_double(NAN, out); break;
    case 2: tu_enc_double(INFINITY, out); break;
    case 3: tu_enc_double(-INFINITY, out); break;
    case 4: tu_enc_double(sub * (double)(1 + tu_below(st, 1000)), out); break;
    case 5: tu_enc_double(0.1 + 0.2, out); break;
    case 6: tu_enc_double(big, out); break;
    case 7: enc_bigint((int64_t)tu_rand(st), out); break;
    default: tu_enc_double(1e-7, out); break; /* seven decimals: past the largest k */
  }
}

static void poison(uint64_t *st, uint8_t out[8]) { poison_kind(st, tu_below(st, 9), out); }

/* Kinds of qualifier in a generated block. */
enum { K_DEC, K_MIXED_DIGITS, K_POISONED, K_BIGINT, K_WIDE_RANGE, K_SMALL, K_NKINDS };

/* One value of qualifier kind `kind` (digits d) into val; its length. */
static uint32_t gen_value(uint64_t *st, int kind, uint32_t d, uint8_t *val) {
  switch (kind) {
    case K_DEC:
      tu_enc_double(rand_decimal(st, d, 20000), val);
      return 8;
    case K_MIXED_DIGITS:
      tu_enc_double(rand_decimal(st, (uint32_t)tu_below(st, 7), 2000), val); /* m < 2^31 */
      return 8;
    case K_POISONED:
      if (tu_below(st, 40) == 0) poison(st, val);
      else tu_enc_double(rand_decimal(st, d, 1000), val);
      return 8;
    case K_BIGINT:
      enc_bigint((int64_t)tu_below(st, 1ull << 40), val);
      return 8;
    case K_WIDE_RANGE: /* integers up to 2^40: m's range needs 5 bytes */
      tu_enc_double((double)tu_below(st, 1ull << 40), val);
      return 8;
    default: /* 4-byte or variable values next to the 8-byte groups */
      for (int j = 0; j < 4; j++) val[j] = (uint8_t)tu_rand(st);
      return tu_below(st, 20) ? 4 : (uint32_t)tu_below(st, 9);
  }
}

/* A sensor-like block: rows of one key length, nq qualifiers each of a random kind, some
** readings missing, now and then a tombstone or an older version. */
static void dec_set(uint64_t *st, tb_cellset *s, uint32_t nq, const int *kinds,
                    const uint32_t *digits) {
  s->n = s->used = 0;
  uint32_t nrows = 1 + (uint32_t)tu_below(st, (TB_MAXC - 64) / (2 * nq));
  int64_t ts = (int64_t)tu_below(st, 1ull << 41);
  uint8_t key[12], q[4] = {'c', 0, 0, 0}, val[16];
  uint64_t kr = tu_below(st, 1000);
  for (uint32_t r = 0; r < nrows; r++) {
    memcpy(key, "stn", 3);
    kr += 1 + tu_below(st, 3);
    for (int j = 0; j < 8; j++) key[3 + j] = (uint8_t)(kr >> (8 * (7 - j)));
    size_t n0 = s->n;
    for (uint32_t c = 0; c < nq; c++) {
      if (nq > 1 && tu_below(st, 10) == 0) continue;
      q[1] = (uint8_t)('0' + c);
      uint32_t vl = gen_value(st, kinds[c], digits[c], val);
      uint8_t type = tu_below(st, 50) == 0 ? KV_DELETE_COLUMN : KV_PUT;
      tb_add(s, key, 11, q, 2, ts, 7, type, val, type == KV_PUT ? vl : 0);
      if (tu_below(st, 30) == 0) { /* an older version */
        vl = gen_value(st, kinds[c], digits[c], val);
        tb_add(s, key, 11, q, 2, ts - 1 - (int64_t)tu_below(st, 99), 7, KV_PUT, val, vl);
      }
    }
    if (s->n == n0) {
      q[1] = '0';
      uint32_t vl = gen_value(st, kinds[0], digits[0], val);
      tb_add(s, key, 11, q, 2, ts, 7, KV_PUT, val, vl);
    }
    ts += 3600000;
  }
}

/* Model row starts: rs[r] = first cell of row r; returns the row count. */
static uint32_t model_rows(const tb_cellset *s, uint32_t *rs) {
  uint32_t m = 0;
  for (size_t i = 0; i < s->n; i++)
    if (i == 0 || kv_bytes_cmp(s->c[i - 1].row, s->c[i - 1].row_len, s->c[i].row,
                               s->c[i].row_len) != 0)
      rs[m++] = (uint32_t)i;
  rs[m] = (uint32_t)s->n;
  return m;
}

/* Every cell of compact block b, rows [0, b->nrows) being model rows from r0. */
static void check_cblock(const kv_sf_cblock *b, const tb_cellset *s, const uint32_t *rs,
                         uint32_t r0) {
  kv_sf_rankpos rp = {0};
  rp.at = UINT32_MAX;
  assert_int_equal(kv_sf_grow((void **)&rp.ranks, &rp.cap, b->nquals + 2, 4), KV_OK);
  uint8_t kbuf[64], vbuf[64];
  kv_cell c;
  for (uint32_t r = 0; r < b->nrows; r++) {
    uint32_t f = (uint32_t)kv_sf_pa_get(&b->row_first, r), e = (uint32_t)kv_sf_pa_get(&b->row_first, r + 1);
    assert_int_equal(e - f, rs[r0 + r + 1] - rs[r0 + r]);
    for (uint32_t ci = f; ci < e; ci++) {
      tb_cblock_cell(b, &rp, r, ci, kbuf, vbuf, &c);
      tb_cell_eq(&c, &s->c[rs[r0 + r] + (ci - f)]);
    }
  }
  free(rp.ranks);
}

static void check_dblock(const kv_sf_dblock *d, const tb_cellset *s) {
  assert_int_equal(d->ncells, s->n);
  uint32_t ri = 0;
  for (uint32_t i = 0; i < d->ncells; i++) {
    while (d->row_first[ri + 1] <= i) ri++;
    kv_cell c;
    kv_sf_dblock_cell(d, ri, i, &c);
    tb_cell_eq(&c, &s->c[i]);
  }
}

/* Decode raw with every reader and compare with the model. */
static void check_all(uint64_t *st, const uint8_t *raw0, size_t len, const tb_cellset *s) {
  static uint32_t rs[TB_MAXC + 1];
  uint32_t nrows = model_rows(s, rs);
  uint8_t *raw = malloc(len);
  assert_non_null(raw);
  memcpy(raw, raw0, len);
  const char *why = NULL;
  /* whole block */
  kv_sf_dblock d;
  memset(&d, 0, sizeof d);
  if (kv_sf_block_decode(&d, raw, len, &why)) fail_msg("block decode: %s", why);
  check_dblock(&d, s);
  /* some groups left out, then read by rank */
  uint8_t keep[16];
  for (uint32_t q = 0; q < d.nquals; q++) keep[q] = (uint8_t)tu_below(st, 2);
  if (kv_sf_block_decode_keep(&d, raw, len, keep, &why)) fail_msg("keep decode: %s", why);
  kv_sfbuf vb = {0};
  if (kv_sf_block_values(&d, 0, d.ncells, 0, 0, &vb, &why)) fail_msg("values: %s", why);
  check_dblock(&d, s);
  kv_sfbuf_free(&vb);
  kv_sf_dblock_free(&d);
  /* compact block, private then packed (raw and decoder memory overwritten) */
  kv_sf_cdec cd;
  memset(&cd, 0, sizeof cd);
  if (kv_sf_cblock_decode(&cd, raw, len, &why)) fail_msg("cblock decode: %s", why);
  check_cblock(&cd.b, s, rs, 0);
  kv_sf_cblock *pk = kv_sf_cblock_pack(&cd);
  assert_non_null(pk);
  /* the narrow form (what the block cache keeps past its data limit): smaller exactly when
     a group is scaled; widened, it reads as the packed block, byte for byte in cvals */
  bool scaled = false;
  for (uint32_t g = 0; g <= cd.b.nquals; g++) scaled |= cd.b.groups[g].dec && cd.b.groups[g].count;
  kv_sf_cblock *nk = kv_sf_cblock_pack_narrow(&cd);
  assert_non_null(nk);
  assert_int_equal(nk->narrow, scaled);
  if (scaled) assert_true(nk->charge < pk->charge);
  /* point reads: every row's key, a few rows from it */
  kv_sf_pdec pd;
  memset(&pd, 0, sizeof pd);
  for (int k = 0; k < 20; k++) {
    uint32_t r = (uint32_t)tu_below(st, nrows);
    const kv_cell *f = &s->c[rs[r]];
    uint32_t want = 1 + (uint32_t)tu_below(st, 4);
    if (kv_sf_point_decode(&pd, raw, len, f->row, f->row_len, want, &why))
      fail_msg("point decode: %s", why);
    assert_int_equal(pd.first_row, r);
    check_cblock(&pd.b, s, rs, r);
  }
  kv_sf_pdec_free(&pd);
  memset(raw, 0xA5, len);
  free(raw);
  memset(cd.arena.p, 0x5A, cd.arena.cap);
  if (cd.dexp.cap) memset(cd.dexp.p, 0x5A, cd.dexp.cap);
  check_cblock(pk, s, rs, 0);
  if (scaled) {
    static kv_sf_wide wd;
    const kv_sf_cblock *wb = kv_sf_cblock_widen(nk, &wd);
    assert_non_null(wb);
    check_cblock(wb, s, rs, 0);
    size_t fixed = 0;
    for (uint32_t g = 0; g <= pk->nquals; g++)
      if (pk->groups[g].fixed) fixed += (size_t)pk->groups[g].count * pk->groups[g].width;
    assert_memory_equal(wb->cvals, pk->cvals, fixed);
    /* the promoted copy stands alone: the narrow block and the widening overwritten */
    kv_sf_cblock *cp = kv_sf_cblock_wide_copy(nk, wb);
    assert_non_null(cp);
    assert_false(cp->narrow);
    memset(nk, 0x5A, nk->charge);
    if (wd.vals.cap) memset(wd.vals.p, 0x5A, wd.vals.cap);
    if (wd.dexp.cap) memset(wd.dexp.p, 0x5A, wd.dexp.cap);
    memset(wd.groups, 0x5A, wd.groups_cap * sizeof *wd.groups);
    check_cblock(cp, s, rs, 0);
    assert_memory_equal(cp->cvals, pk->cvals, fixed);
    free(cp);
    kv_sf_wide_free(&wd);
  } else {
    check_cblock(nk, s, rs, 0);
  }
  free(nk);
  free(pk);
  kv_sf_cdec_free(&cd);
}

/* Random blocks of mixed kinds through every reader; pure decimal blocks are written scaled
** and smaller than the fixed form, blocks with a refused value in every 8-byte group are not
** scaled at all. */
static void test_round_trips(void **state) {
  (void)state;
  uint64_t st = tu_seed("sf_dec_round_trips");
  static tb_cellset s;
  kv_sfb_builder bld, fixed;
  kv_sfb_init(&bld);
  kv_sfb_init(&fixed);
  fixed.no_dec = true;
  size_t rounds = tu_scaled(200, 40), scaled = 0, smaller = 0, raw_dec = 0, raw_fixed = 0;
  for (size_t round = 0; round < rounds; round++) {
    uint32_t nq = 1 + (uint32_t)tu_below(&st, 8);
    int kinds[8];
    uint32_t digits[8];
    bool all_dec = true;
    for (uint32_t c = 0; c < nq; c++) {
      kinds[c] = round % 4 == 0 ? K_DEC : (int)tu_below(&st, K_NKINDS);
      digits[c] = (uint32_t)tu_below(&st, 7);
      if (kinds[c] != K_DEC && kinds[c] != K_MIXED_DIGITS) all_dec = false;
    }
    dec_set(&st, &s, nq, kinds, digits);
    tb_build(&bld, &s);
    tb_build(&fixed, &s);
    bool used = bld.used_dec;
    bld.used_dec = false;
    if (used) scaled++;
    /* only decimals (tombstones aside) and a group of 3 values or more: scaled (a group of
       one or two values may be as small in the fixed form) */
    uint32_t cnt[8] = {0}, most = 0;
    for (size_t i = 0; i < s.n; i++)
      if (s.c[i].type == KV_PUT && ++cnt[s.c[i].qual[1] - '0'] > most) most = cnt[s.c[i].qual[1] - '0'];
    if (all_dec && most >= 3) assert_true(used);
    if (used) {
      assert_true(bld.out.len < fixed.out.len);
      smaller++;
    } else {
      assert_int_equal(bld.out.len, fixed.out.len);
      assert_memory_equal(bld.out.p, fixed.out.p, bld.out.len);
    }
    raw_dec += bld.out.len;
    raw_fixed += fixed.out.len;
    check_all(&st, bld.out.p, bld.out.len, &s);
    check_all(&st, fixed.out.p, fixed.out.len, &s);
  }
  fprintf(stderr, "[sf_dec] %zu blocks, %zu scaled: raw %zu bytes (fixed form %zu)\n", rounds,
          scaled, raw_dec, raw_fixed);
  assert_true(scaled > 0 && scaled < rounds && smaller == scaled);
  kv_sfb_free(&bld);
  kv_sfb_free(&fixed);
}

/* One group of n values of which one is refused: never scaled (and so byte for byte the
** fixed form); the same group without it is scaled. */
static void test_refused_values(void **state) {
  (void)state;
  uint64_t st = tu_seed("sf_dec_refused");
  static tb_cellset s;
  kv_sfb_builder bld;
  kv_sfb_init(&bld);
  for (int kind = 0; kind < 9; kind++) {
    for (int with = 0; with < 2; with++) {
      s.n = s.used = 0;
      uint8_t key[4] = {'r', 0, 0, 0}, val[8];
      for (uint32_t r = 0; r < 100; r++) {
        key[2] = (uint8_t)r;
        if (with && r == 37) {
          poison_kind(&st, (uint64_t)kind, val);
        } else {
          tu_enc_double(rand_decimal(&st, 1, 10000), val);
        }
        tb_add(&s, key, 4, (const uint8_t *)"t", 1, 5, 1, KV_PUT, val, 8);
      }
      tb_build(&bld, &s);
      assert_int_equal(bld.used_dec, !with);
      bld.used_dec = false;
      check_all(&st, bld.out.p, bld.out.len, &s);
    }
  }
  kv_sfb_free(&bld);
}

/* Where the decimal group's code lies in a one-qualifier block's raw bytes. */
static size_t find_code(const uint8_t *p, size_t len) {
  for (size_t i = 0; i + 4 <= len; i++)
    if (p[i] == 0x80 && p[i + 1] == 0x80 && p[i + 2] == 0x80 && p[i + 3] == 0x40) return i;
  fail_msg("no decimal group code in the block");
  return 0;
}

/* Every decoder refuses raw block [raw, raw+len) with KV_ERR_CORRUPT. */
static void all_refuse(const uint8_t *raw, size_t len, const char *what) {
  const char *why = NULL;
  kv_sf_dblock d;
  memset(&d, 0, sizeof d);
  kv_sf_cdec cd;
  memset(&cd, 0, sizeof cd);
  kv_sf_pdec pd;
  memset(&pd, 0, sizeof pd);
  int a = kv_sf_block_decode(&d, raw, len, &why);
  int b = kv_sf_cblock_decode(&cd, raw, len, &why);
  int c = kv_sf_point_decode(&pd, raw, len, (const uint8_t *)"", 0, 3, &why);
  if (a != KV_ERR_CORRUPT || b != KV_ERR_CORRUPT || c != KV_ERR_CORRUPT)
    fail_msg("%s: decoders gave %d %d %d", what, a, b, c);
  assert_non_null(why);
  kv_sf_dblock_free(&d);
  kv_sf_cdec_free(&cd);
  kv_sf_pdec_free(&pd);
}

/* Damaged decimal groups: k or w out of range, planes cut short or running on, an overlong
** header varint; and random byte damage, which must decode or be refused, never crash. */
static void test_damaged(void **state) {
  (void)state;
  uint64_t st = tu_seed("sf_dec_damaged");
  static tb_cellset s;
  kv_sfb_builder bld;
  kv_sfb_init(&bld);
  s.n = s.used = 0;
  uint8_t key[4] = {'r', 0, 0, 0}, val[8];
  for (uint32_t r = 0; r < 200; r++) {
    key[2] = (uint8_t)r;
    tu_enc_double(1000 + (double)tu_below(&st, 600) / 10, val); /* k 1, offsets of 2 bytes */
    tb_add(&s, key, 4, (const uint8_t *)"t", 1, 5, 1, KV_PUT, val, 8);
  }
  tb_build(&bld, &s);
  assert_true(bld.used_dec);
  size_t len = bld.out.len, at = find_code(bld.out.p, len);
  uint8_t *raw = malloc(len + 16);
  assert_non_null(raw);
  /* the group: code (4), k (1), zigzag base (varint), w (1), planes: the last group */
  const uint8_t *p = bld.out.p + at + 4;
  assert_int_equal(p[0], 1);
  uint64_t zb;
  const uint8_t *pw = kv_get_varint(p + 1, bld.out.p + len, &zb);
  assert_non_null(pw);
  assert_int_equal(*pw, 2);
  assert_int_equal((size_t)(bld.out.p + len - (pw + 1)), 2 * 200);
  size_t k_at = at + 4, w_at = (size_t)(pw - bld.out.p);
  static const uint8_t bad_k[] = {7, 8, 0x7f};
  for (size_t i = 0; i < sizeof bad_k; i++) {
    memcpy(raw, bld.out.p, len);
    raw[k_at] = bad_k[i];
    all_refuse(raw, len, "k out of range");
  }
  static const uint8_t bad_w[] = {5, 8, 9, 0x7f};
  for (size_t i = 0; i < sizeof bad_w; i++) {
    memcpy(raw, bld.out.p, len);
    raw[w_at] = bad_w[i];
    all_refuse(raw, len, "w out of range");
  }
  memcpy(raw, bld.out.p, len); /* w 1 on 2-byte planes: bytes left after the last group */
  raw[w_at] = 1;
  all_refuse(raw, len, "planes longer than w says");
  memcpy(raw, bld.out.p, len); /* w 3: planes past the block */
  raw[w_at] = 3;
  all_refuse(raw, len, "planes past the block");
  memcpy(raw, bld.out.p, len);
  all_refuse(raw, len - 1, "truncated planes");
  all_refuse(raw, w_at, "truncated header");
  all_refuse(raw, k_at, "no header");
  /* an overlong k varint: 11 continuation bytes */
  memcpy(raw, bld.out.p, k_at);
  memset(raw + k_at, 0x80, 11);
  raw[k_at + 11] = 0;
  memcpy(raw + k_at + 12, bld.out.p + k_at + 1, len - k_at - 1);
  all_refuse(raw, len + 11, "overlong varint");
  /* a base beyond 2^53 */
  {
    uint8_t hdr[16];
    uint8_t *q = kv_put_varint(hdr, 1);
    q = kv_put_varint(q, kv_zigzag((int64_t)1 << 54));
    size_t hl = (size_t)(q - hdr), old = (size_t)(pw - (bld.out.p + k_at));
    memcpy(raw, bld.out.p, k_at);
    memcpy(raw + k_at, hdr, hl);
    memcpy(raw + k_at + hl, pw, (size_t)(bld.out.p + len - pw));
    all_refuse(raw, len - old + hl, "base out of range");
  }
  /* random damage: decode or refuse (run under ASan for the crash half) */
  size_t refused = 0, rounds = tu_scaled(3000, 500);
  for (size_t k = 0; k < rounds; k++) {
    memcpy(raw, bld.out.p, len);
    size_t pos = at + (size_t)tu_below(&st, len - at);
    raw[pos] = (uint8_t)tu_rand(&st);
    const char *why = NULL;
    kv_sf_dblock d;
    memset(&d, 0, sizeof d);
    kv_sf_cdec cd;
    memset(&cd, 0, sizeof cd);
    kv_sf_pdec pd;
    memset(&pd, 0, sizeof pd);
    int a = kv_sf_block_decode(&d, raw, len, &why);
    int b = kv_sf_cblock_decode(&cd, raw, len, &why);
    (void)kv_sf_point_decode(&pd, raw, len, (const uint8_t *)"r", 1, 5, &why);
    assert_int_equal(a, b); /* both whole decoders agree */
    refused += a != KV_OK;
    kv_sf_dblock_free(&d);
    kv_sf_cdec_free(&cd);
    kv_sf_pdec_free(&pd);
  }
  assert_true(refused > 0);
  free(raw);
  kv_sfb_free(&bld);
}

/* Store files: a file with a scaled group is format version 3, one without is version 2,
** and both read back cell for cell through the file iterator (forward, backward); so do
** files made of a bulk load's segments (blocks encoded in the segment, appended whole to
** the file with a new sequence number). */
static void test_file_versions(void **state) {
  (void)state;
  uint64_t st = tu_seed("sf_dec_files");
  kv_env *env = kv_env_mem_new(1);
  assert_int_equal(env->mkdir(env, "/t"), KV_OK);
  static tb_cellset s;
  for (int round = 0; round < 4; round++) {
    int with = round % 2, seg = round / 2;
    int kinds[3] = {with ? K_DEC : K_BIGINT, K_SMALL, with ? K_MIXED_DIGITS : K_WIDE_RANGE};
    uint32_t digits[3] = {1, 0, 2};
    dec_set(&st, &s, 3, kinds, digits);
    kv_sf_writer_options o = {4096, KV_COMPRESSION_LZ4, 10, 0};
    kv_sf_writer *w = NULL, *sw = NULL;
    kv_sf_seg *sg = NULL;
    if (seg) { /* the segment's cells all have seq 7; the file's get 9 */
      assert_int_equal(kv_sf_seg_open(&o, &sw), KV_OK);
      for (size_t i = 0; i < s.n; i++) assert_int_equal(kv_sf_writer_add(sw, &s.c[i]), KV_OK);
      assert_int_equal(kv_sf_seg_finish(sw, &sg), KV_OK);
      for (size_t i = 0; i < s.n; i++) s.c[i].seq = 9;
    }
    assert_int_equal(kv_sf_writer_open(env, "/t/d.sf", &o, &w), KV_OK);
    if (seg) assert_int_equal(kv_sf_writer_add_seg(w, sg, 9), KV_OK);
    else
      for (size_t i = 0; i < s.n; i++) assert_int_equal(kv_sf_writer_add(w, &s.c[i]), KV_OK);
    kv_sf_props props;
    assert_int_equal(kv_sf_writer_finish(w, &props), KV_OK);
    kv_sf_seg_free(sg);
    assert_int_equal(props.format_version, with ? 3 : 2);
    kv_sf_reader *r = NULL;
    assert_int_equal(kv_sf_open(env, "/t/d.sf", &r), KV_OK);
    assert_int_equal(kv_sf_get_props(r)->format_version, with ? 3 : 2);
    kv_sf_io io = {0};
    kv_iter *it = kv_sf_iter_new(r, &io);
    assert_non_null(it);
    size_t i = 0;
    for (it->ops->seek_first(it); it->ops->valid(it); it->ops->next(it), i++) {
      assert_true(i < s.n);
      tb_cell_eq(it->ops->cell(it), &s.c[i]);
    }
    assert_int_equal(it->ops->status(it), KV_OK);
    assert_int_equal(i, s.n);
    for (it->ops->seek_last(it); it->ops->valid(it); it->ops->prev(it)) {
      assert_true(i > 0);
      tb_cell_eq(it->ops->cell(it), &s.c[--i]);
    }
    assert_int_equal(i, 0);
    it->ops->destroy(it);
    kv_sf_close(r);
  }
  kv_env_free(env);
}

/* A store file whose one block (stored raw, its checksum made right again) has a decimal
** group with k 9: reading it is KV_ERR_CORRUPT with a message naming the file and block. */
static void test_damaged_file(void **state) {
  (void)state;
  uint64_t st = tu_seed("sf_dec_damaged_file");
  kv_env *env = kv_env_mem_new(1);
  assert_int_equal(env->mkdir(env, "/t"), KV_OK);
  static tb_cellset s;
  s.n = s.used = 0;
  uint8_t key[4] = {'r', 0, 0, 0}, val[8];
  for (uint32_t r = 0; r < 200; r++) {
    key[2] = (uint8_t)r;
    tu_enc_double((double)tu_below(&st, 5000) / 100, val);
    tb_add(&s, key, 4, (const uint8_t *)"t", 1, 5, 1, KV_PUT, val, 8);
  }
  kv_sf_writer_options o = {1 << 20, KV_COMPRESSION_NONE, 10, 0};
  kv_sf_writer *w = NULL;
  assert_int_equal(kv_sf_writer_open(env, "/t/c.sf", &o, &w), KV_OK);
  for (size_t i = 0; i < s.n; i++) assert_int_equal(kv_sf_writer_add(w, &s.c[i]), KV_OK);
  kv_sf_props props;
  assert_int_equal(kv_sf_writer_finish(w, &props), KV_OK);
  assert_int_equal(props.format_version, 3);
  assert_int_equal(props.blocks, 1);
  kv_sf_reader *r = NULL;
  assert_int_equal(kv_sf_open(env, "/t/c.sf", &r), KV_OK);
  uint64_t blen = r->index[0].size; /* header 9, stored bytes, checksum 8 */
  kv_sf_close(r);
  uint8_t *blk = malloc(blen);
  assert_non_null(blk);
  for (uint64_t i = 0; i < blen; i++)
    assert_int_equal(kv_env_mem_get_byte(env, "/t/c.sf", i, &blk[i]), KV_OK);
  assert_int_equal(blk[0], KV_SF_STORED_RAW);
  size_t at = find_code(blk + KV_SF_BLOCK_HEADER, blen - KV_SF_BLOCK_HEADER - 8) + KV_SF_BLOCK_HEADER;
  blk[at + 4] = 9; /* k */
  uint64_t h = XXH3_64bits(blk, blen - 8);
  for (int i = 0; i < 8; i++) blk[blen - 8 + (uint64_t)i] = (uint8_t)(h >> (8 * i));
  for (uint64_t i = 0; i < blen; i++)
    assert_int_equal(kv_env_mem_set_byte(env, "/t/c.sf", i, blk[i]), KV_OK);
  free(blk);
  assert_int_equal(kv_sf_open(env, "/t/c.sf", &r), KV_OK);
  kv_sf_io io = {0};
  kv_iter *it = kv_sf_iter_new(r, &io);
  assert_non_null(it);
  it->ops->seek_first(it);
  assert_false(it->ops->valid(it));
  assert_int_equal(it->ops->status(it), KV_ERR_CORRUPT);
  const char *msg = kv_errmsg();
  if (!strstr(msg, "/t/c.sf") || !strstr(msg, "block 0") || !strstr(msg, "power of ten"))
    fail_msg("message: %s", msg);
  it->ops->destroy(it);
  kv_sf_close(r);
  kv_env_free(env);
}

/* kv_sfdec_expand, both layouts, and kv_sfdec_expand_strided, against the rebuild done here value by value (m = base +
** offset, (double)m / 10^k, the ordered bytes) over every offset width and power of ten,
** bases near the int32 edges (where the vector path stops) and near +-2^53, and counts that
** are not a multiple of the vector step or pass the transposed form's 256-value chunk. */
static void test_expand_forms(void **state) {
  (void)state;
  uint64_t st = tu_seed("sf_dec_expand_forms");
  static uint8_t planes[4 * 700], flat[8 * 700], tr[8 * 700], col[24 * 700], want[8];
  static const int64_t edges[] = {0, -1, -40000, 123456, INT32_MIN, (int64_t)INT32_MAX - 255,
                                  (int64_t)INT32_MAX - 65535, (int64_t)INT32_MAX - 16777215,
                                  (int64_t)INT32_MAX - 254, (int64_t)INT32_MIN - 1,
                                  -(1ll << 53), (1ll << 53) - 70000};
  size_t rounds = tu_scaled(3000, 600), values = 0;
  for (size_t round = 0; round < rounds; round++) {
    kv_sfdec h;
    h.k = (uint32_t)tu_below(&st, KV_SFDEC_MAX_K + 1);
    h.w = (uint32_t)tu_below(&st, KV_SFDEC_MAX_W + 1);
    h.count = (uint32_t)tu_below(&st, round % 5 == 0 ? 700 : 70);
    h.base = round % 2 ? edges[tu_below(&st, sizeof edges / sizeof *edges)]
                       : (int64_t)tu_below(&st, 2000001) - 1000000;
    for (size_t i = 0; i < (size_t)h.w * h.count; i++) planes[i] = (uint8_t)tu_rand(&st);
    h.planes = planes;
    kv_sfdec_expand(&h, flat, 0);
    kv_sfdec_expand(&h, tr, 1);
    size_t stride = 8 + 8 * tu_below(&st, 3);
    memset(col, 0xA5, stride * h.count);
    kv_sfdec_expand_strided(&h, col, stride);
    for (uint32_t i = 0; i < h.count; i++, values++) {
      uint64_t d = 0;
      for (uint32_t j = 0; j < h.w; j++) d |= (uint64_t)planes[(size_t)j * h.count + i] << (8 * j);
      tu_enc_double((double)(h.base + (int64_t)d) / P10[h.k], want);
      if (memcmp(flat + (size_t)i * 8, want, 8) != 0)
        fail_msg("value %u of %u (k %u, w %u, base %lld): side by side form differs", i,
                 h.count, h.k, h.w, (long long)h.base);
      if (memcmp(col + (size_t)i * stride, want, 8) != 0)
        fail_msg("value %u of %u (k %u, w %u, base %lld): strided form differs", i, h.count,
                 h.k, h.w, (long long)h.base);
      for (size_t j = 8; j < stride; j++)
        if (col[(size_t)i * stride + j] != 0xA5)
          fail_msg("value %u: the strided form wrote byte %zu of the row", i, j);
      for (uint32_t j = 0; j < 8; j++)
        if (tr[(size_t)j * h.count + i] != want[j])
          fail_msg("value %u of %u (k %u, w %u, base %lld): transposed byte %u differs", i,
                   h.count, h.k, h.w, (long long)h.base, j);
    }
  }
  fprintf(stderr, "[sf_dec] expand: %zu groups, %zu values\n", rounds, values);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_round_trips),
    cmocka_unit_test(test_refused_values),
    cmocka_unit_test(test_damaged),
    cmocka_unit_test(test_file_versions),
    cmocka_unit_test(test_damaged_file),
    cmocka_unit_test(test_expand_forms),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
