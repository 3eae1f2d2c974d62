/*
** tests/kv/test_corruption.c: damaged files (issue 2, "Tests that must exist"). A small
** store is built deterministically in the in-memory env: two store files per family from
** two flushes, and the last batches only in the WAL. Each trial rebuilds it, damages it
** (kv_env_mem_set_byte, kv_env_mem_shrink, or a removed file) and opens and reads it all
** back (forward and reverse scans, a kv_get of every row key, so the bloom filter is used).
** The only acceptable outcomes:
**   - KV_ERR_CORRUPT from kv_open or from a read, with kv_errmsg() naming the damaged file;
**   - the exact data the batches wrote (damage that does not matter, e.g. the WAL's torn
**     tail dropped: then exactly the batches before it, never part of the damaged one).
** Anything else (another status, a crash, a sanitizer report, different data) fails.
** Where bytes are damaged comes from the formats only as far as kv/db/wal.h describes them:
** WAL record boundaries are taken from the WAL's size after each commit, not parsed.
** At scale 1 every byte of the MANIFEST and every cut of the last WAL record is tried, the
** rest is sampled (hundreds of offsets per store file and per WAL record).
** It does not test crashes (test_powercut.c) or the decoders one by one (kv unit tests).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kv/env/env_mem.h"
#include "kv/kv.h"
#include "testutil.h"

#define C_ROWS 60
#define C_FAMS 2
#define C_QUALS 2
#define N_BATCHES 50
#define FLUSH1 20 /* batches [0, FLUSH1) end up in the first store files */
#define FLUSH2 40 /* [FLUSH1, FLUSH2) in the second; [FLUSH2, N_BATCHES) only in the WAL */
#define MAX_FILES 32

typedef struct cfile {
  char path[256]; /* full path in the env */
  int64_t size;   /* bytes */
} cfile;

typedef struct ct {
  const char *name;         /* test name */
  uint64_t seed, rng;       /* seed and PRNG state */
  kv_env *env;              /* env of the current trial */
  kv_db *db;                /* store of the current trial */
  cfile files[MAX_FILES];   /* files of the pristine store (after close) */
  int n_files;              /* how many */
  char wal[256];            /* WAL segment holding batches [FLUSH2, N_BATCHES) */
  int64_t wal_end[N_BATCHES + 1]; /* its size after batch i - 1 (wal_end[FLUSH2] = start) */
  uint64_t trials, detected, harmless, tail_dropped; /* outcomes */
} ct;

/* ---- The data ---------------------------------------------------------------------- */
static uint32_t vlen(uint32_t id) { return (id * 37u) % 200 + (id % 9 == 0 ? 900 : 0); }
static uint8_t vbyte(uint32_t id, uint32_t i) { return (uint8_t)(id * 5u + i * 3u + (i >> 7)); }
static void batch_op(int i, int j, int *fam, int *row, int *qual) {
  *row = (i * 7 + j * 13) % C_ROWS;
  *fam = j % 2;
  *qual = j / 2;
}

/* Expected value id per cell after batches [0, n). */
static void expected(int n, uint32_t exp[C_FAMS][C_ROWS][C_QUALS]) {
  memset(exp, 0, sizeof(uint32_t) * C_FAMS * C_ROWS * C_QUALS);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < 4; j++) {
      int f, r, q;
      batch_op(i, j, &f, &r, &q);
      exp[f][r][q] = (uint32_t)(i * 4 + j + 1);
    }
}

#define C_OK(c, call)                                                                     \
  do {                                                                                    \
    int rc_ = (call);                                                                     \
    if (rc_ != KV_OK) {                                                                   \
      fprintf(stderr, "[%s] %s -> %s (%s)\n", (c)->name, #call, kv_status_name(rc_),      \
              kv_errmsg());                                                               \
      fail();                                                                             \
    }                                                                                     \
  } while (0)

static kv_options store_options(kv_env *env) {
  kv_options o;
  kv_options_init(&o);
  o.env = env;
  o.create_if_missing = true;
  o.block_cache_size = 16 << 10;
  o.keep_log_on_close = true; /* the commits stay in the log the tests damage */
  return o;
}

/* ---- Finding files -------------------------------------------------------------------- */
typedef struct walk_ctx {
  ct *c;            /* test state */
  const char *dir;  /* directory being listed */
  char names[64][64]; /* entries found */
  int n;            /* how many */
} walk_ctx;

static int collect(void *ctx, const char *name) {
  walk_ctx *w = ctx;
  if (w->n < 64) snprintf(w->names[w->n++], sizeof w->names[0], "%s", name);
  return 0;
}

static void walk(ct *c, kv_env *env, const char *dir) {
  walk_ctx *w = calloc(1, sizeof *w);
  assert_non_null(w);
  w->c = c;
  w->dir = dir;
  C_OK(c, env->list(env, dir, collect, w));
  for (int i = 0; i < w->n; i++) {
    char p[256];
    snprintf(p, sizeof p, "%s/%s", dir, w->names[i]);
    int64_t size = kv_env_mem_file_size(env, p);
    if (size < 0) {
      walk(c, env, p);
    } else if (c->n_files < MAX_FILES) {
      snprintf(c->files[c->n_files].path, sizeof c->files[0].path, "%s", p);
      c->files[c->n_files].size = size;
      c->n_files++;
    }
  }
  free(w);
}

static const char *base_name(const char *p) {
  const char *s = strrchr(p, '/');
  return s ? s + 1 : p;
}

static bool ends_with(const char *s, const char *suffix) {
  size_t a = strlen(s), b = strlen(suffix);
  return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* ---- Building the store --------------------------------------------------------------- */
/* Build the pristine store in a new env and close it; if `record`, remember its files and
** the WAL record boundaries. */
static void build(ct *c, bool record) {
  c->env = kv_env_mem_new(1700000000000ll);
  assert_non_null(c->env);
  kv_options o = store_options(c->env);
  C_OK(c, kv_open("/db", &o, &c->db));
  kv_family_options fo[2];
  memset(fo, 0, sizeof fo);
  fo[0].name = "f0";
  fo[0].block_size = 512;
  fo[1].name = "f1";
  fo[1].block_size = 1024;
  fo[1].compression = KV_COMPRESSION_NONE;
  C_OK(c, kv_create_table(c->db, "t", fo, 2));
  uint32_t fid[2];
  C_OK(c, kv_family_id(c->db, "t", "f0", &fid[0]));
  C_OK(c, kv_family_id(c->db, "t", "f1", &fid[1]));
  kv_batch *b = kv_batch_new();
  assert_non_null(b);
  uint8_t v[1200];
  for (int i = 0; i < N_BATCHES; i++) {
    if (i == FLUSH1 || i == FLUSH2) C_OK(c, kv_flush(c->db, NULL));
    if (record && i == FLUSH2) {
      /* The newest WAL segment is where the next records go. */
      c->n_files = 0;
      walk(c, c->env, "/db");
      uint64_t best = 0;
      c->wal[0] = 0;
      for (int k = 0; k < c->n_files; k++) {
        const char *bn = base_name(c->files[k].path);
        unsigned long long num;
        if (sscanf(bn, "wal-%llu.log", &num) == 1 && num >= best) {
          best = num;
          snprintf(c->wal, sizeof c->wal, "%s", c->files[k].path);
        }
      }
      assert_true(c->wal[0] != 0);
      c->wal_end[FLUSH2] = kv_env_mem_file_size(c->env, c->wal);
    }
    kv_batch_clear(b);
    for (int j = 0; j < 4; j++) {
      int f, r, q;
      batch_op(i, j, &f, &r, &q);
      char row[8], qual[2] = {(char)('a' + q), 0};
      snprintf(row, sizeof row, "k%03d", r);
      uint32_t id = (uint32_t)(i * 4 + j + 1);
      v[0] = (uint8_t)id; v[1] = (uint8_t)(id >> 8); v[2] = (uint8_t)(id >> 16); v[3] = (uint8_t)(id >> 24);
      for (uint32_t k = 0; k < vlen(id); k++) v[4 + k] = vbyte(id, k);
      C_OK(c, kv_batch_put(b, fid[f], row, 4, qual, 1, 1000 + i, v, 4 + vlen(id)));
    }
    C_OK(c, kv_commit(c->db, b, NULL));
    if (record && i >= FLUSH2) c->wal_end[i + 1] = kv_env_mem_file_size(c->env, c->wal);
  }
  kv_batch_free(b);
  C_OK(c, kv_close(c->db));
  c->db = NULL;
  if (record) {
    c->n_files = 0;
    walk(c, c->env, "/db");
    /* The WAL records must sit where the sizes said: the segment only grew. */
    assert_true(kv_env_mem_file_size(c->env, c->wal) == c->wal_end[N_BATCHES]);
    for (int i = FLUSH2; i < N_BATCHES; i++) assert_true(c->wal_end[i + 1] > c->wal_end[i]);
  }
}

/* ---- Reading back ---------------------------------------------------------------------- */
enum { READ_OK = 0, READ_CORRUPT = 1 };

static void fail_trial(ct *c, const char *what, const char *file, const char *damage) {
  fprintf(stderr, "[%s] seed %llu: %s: %s (damage: %s; kv_errmsg: %s)\n", c->name,
          (unsigned long long)c->seed, file, what, damage, kv_errmsg());
  fail();
}

/* A failing status must be KV_ERR_CORRUPT naming the file. */
static int check_error(ct *c, int rc, const char *file, const char *damage, const char *where) {
  if (rc != KV_ERR_CORRUPT) {
    char m[160];
    snprintf(m, sizeof m, "%s returned %s, want KV_ERR_CORRUPT or correct data", where,
             kv_status_name(rc));
    fail_trial(c, m, file, damage);
  }
  if (!strstr(kv_errmsg(), base_name(file))) {
    char m[160];
    snprintf(m, sizeof m, "%s: the corruption message does not name the file", where);
    fail_trial(c, m, file, damage);
  }
  return READ_CORRUPT;
}

/* Compare one row's cells with exp; returns false on any difference. */
static bool row_ok(const kv_row *row, const uint32_t *fid, uint32_t exp[C_FAMS][C_ROWS][C_QUALS],
                   bool *seen) {
  int r = -1;
  if (row->key_len == 4 && row->key[0] == 'k')
    r = (row->key[1] - '0') * 100 + (row->key[2] - '0') * 10 + (row->key[3] - '0');
  if (r < 0 || r >= C_ROWS || seen[r]) return false;
  seen[r] = true;
  uint32_t n = 0;
  for (int f = 0; f < C_FAMS; f++)
    for (int q = 0; q < C_QUALS; q++) {
      if (!exp[f][r][q]) continue;
      if (n >= row->n_cells) return false;
      const kv_cell_view *cv = &row->cells[n++];
      uint32_t id = exp[f][r][q];
      if (cv->family_id != fid[f] || cv->qual_len != 1 || cv->qual[0] != 'a' + q) return false;
      if (cv->ts != 1000 + (int64_t)((id - 1) / 4) || cv->value_len != 4 + vlen(id)) return false;
      uint32_t got = (uint32_t)cv->value[0] | (uint32_t)cv->value[1] << 8 |
                     (uint32_t)cv->value[2] << 16 | (uint32_t)cv->value[3] << 24;
      if (got != id) return false;
      for (uint32_t k = 0; k < vlen(id); k++)
        if (cv->value[4 + k] != vbyte(id, k)) return false;
    }
  return n == row->n_cells;
}

static bool row_expected(uint32_t exp[C_FAMS][C_ROWS][C_QUALS], int r) {
  for (int f = 0; f < C_FAMS; f++)
    for (int q = 0; q < C_QUALS; q++)
      if (exp[f][r][q]) return true;
  return false;
}

/* Open the damaged store and read everything. Returns READ_OK (data equals the batches
** [0, n_ok) or, when n_alt >= 0, [0, n_alt)) or READ_CORRUPT. *which gets the n matched. */
static int open_and_read(ct *c, const char *file, const char *damage, int n_ok, int n_alt,
                         int *which) {
  static uint32_t exp[2][C_FAMS][C_ROWS][C_QUALS];
  expected(n_ok, exp[0]);
  if (n_alt >= 0) expected(n_alt, exp[1]);
  kv_options o = store_options(c->env);
  o.create_if_missing = false;
  kv_db *db = NULL;
  int rc = kv_open("/db", &o, &db);
  if (rc != KV_OK) {
    if (db != NULL) fail_trial(c, "kv_open failed but left *out set", file, damage);
    return check_error(c, rc, file, damage, "kv_open");
  }
  uint32_t fid[2];
  C_OK(c, kv_family_id(db, "t", "f0", &fid[0]));
  C_OK(c, kv_family_id(db, "t", "f1", &fid[1]));
  kv_scan_options so;
  memset(&so, 0, sizeof so);
  so.family_ids = fid;
  so.n_families = 2;
  int result = READ_OK;
  /* Which expectation does the data follow? Decided by the first full scan. */
  int e = 0;
  for (int pass = 0; pass < 2 && result == READ_OK; pass++) {
    so.reverse = pass == 1;
    kv_scan *s = NULL;
    rc = kv_scan_open(db, &so, &s);
    if (rc != KV_OK) { kv_close(db); return check_error(c, rc, file, damage, "kv_scan_open"); }
    bool seen[2][C_ROWS] = {{false}};
    bool ok[2] = {true, n_alt >= 0};
    kv_row row;
    int prev = pass ? C_ROWS : -1;
    while ((rc = kv_scan_next(s, &row)) == KV_OK) {
      for (int k = 0; k < 2; k++)
        if (ok[k] && (pass == 0 || k == e)) ok[k] = row_ok(&row, fid, exp[k], seen[k]);
      int r = row.key_len == 4 ? (row.key[1] - '0') * 100 + (row.key[2] - '0') * 10 + (row.key[3] - '0') : -1;
      if (pass ? r >= prev : r <= prev) ok[0] = ok[1] = false; /* order */
      prev = r;
    }
    kv_scan_close(s);
    if (rc != KV_ERR_NOTFOUND) { kv_close(db); return check_error(c, rc, file, damage, "kv_scan_next"); }
    for (int k = 0; k < 2; k++)
      for (int r = 0; r < C_ROWS && ok[k]; r++)
        if (row_expected(exp[k], r) != seen[k][r]) ok[k] = false;
    if (pass == 0) e = ok[0] ? 0 : 1;
    if (!ok[e]) {
      kv_close(db);
      fail_trial(c, pass ? "a reverse scan returned wrong data" : "a scan returned wrong data",
                 file, damage);
    }
  }
  /* Point reads of every row key go through the bloom filters and block index. */
  for (int r = 0; r < C_ROWS; r++) {
    char key[8];
    snprintf(key, sizeof key, "k%03d", r);
    kv_scan *s = NULL;
    kv_row row;
    so.reverse = false;
    rc = kv_get(db, &so, key, 4, &s, &row);
    if (rc == KV_OK) {
      bool seen[C_ROWS] = {false};
      bool good = row_expected(exp[e], r) && row_ok(&row, fid, exp[e], seen);
      kv_scan_close(s);
      if (!good) { kv_close(db); fail_trial(c, "kv_get returned wrong data", file, damage); }
    } else {
      kv_scan_close(s);
      if (rc == KV_ERR_NOTFOUND) {
        if (row_expected(exp[e], r)) { kv_close(db); fail_trial(c, "kv_get missed a row", file, damage); }
      } else {
        kv_close(db);
        return check_error(c, rc, file, damage, "kv_get");
      }
    }
  }
  (void)kv_close(db);
  *which = e == 0 ? n_ok : n_alt;
  return result;
}

/* ---- Trials ----------------------------------------------------------------------------- */
typedef enum { DMG_BYTE, DMG_SHRINK, DMG_REMOVE } dmg_kind;

/* Rebuild, damage `file` at `off` (byte: xor `x`; shrink: to `off` bytes), open, read. */
static int trial(ct *c, const char *file, dmg_kind kind, uint64_t off, uint8_t x, int n_ok,
                 int n_alt, int *which) {
  build(c, false);
  char damage[96];
  if (kind == DMG_BYTE) {
    uint8_t v = 0;
    C_OK(c, kv_env_mem_get_byte(c->env, file, off, &v));
    C_OK(c, kv_env_mem_set_byte(c->env, file, off, (uint8_t)(v ^ x)));
    snprintf(damage, sizeof damage, "byte %llu xor 0x%02x", (unsigned long long)off, x);
  } else if (kind == DMG_SHRINK) {
    C_OK(c, kv_env_mem_shrink(c->env, file, off));
    snprintf(damage, sizeof damage, "cut to %llu bytes", (unsigned long long)off);
  } else {
    C_OK(c, c->env->remove(c->env, file));
    snprintf(damage, sizeof damage, "file removed");
  }
  int w = -1;
  int r = open_and_read(c, file, damage, n_ok, n_alt, &w);
  if (which) *which = w;
  c->trials++;
  if (r == READ_CORRUPT) c->detected++;
  else c->harmless++;
  kv_env_free(c->env);
  c->env = NULL;
  return r;
}

static void ct_init(ct *c, const char *name) {
  memset(c, 0, sizeof *c);
  c->name = name;
  c->seed = tu_seed(name);
  c->rng = c->seed;
  build(c, true);
  /* The pristine store reads back whole. */
  int w = -1;
  assert_int_equal(open_and_read(c, "/db", "none", N_BATCHES, -1, &w), READ_OK);
  kv_env_free(c->env);
  c->env = NULL;
}

static void ct_report(const ct *c) {
  fprintf(stderr, "[%s] %llu trials: %llu reported KV_ERR_CORRUPT, %llu read back correct data "
          "(%llu of them with the WAL's torn tail dropped)\n", c->name,
          (unsigned long long)c->trials, (unsigned long long)c->detected,
          (unsigned long long)c->harmless, (unsigned long long)c->tail_dropped);
}

static uint8_t rand_xor(ct *c) { return (uint8_t)(1u << tu_below(&c->rng, 8)) | (uint8_t)(tu_below(&c->rng, 2) ? 0x80 : 0); }

/* Store files: bytes in blocks, index, bloom and trailer; cuts; a removed file. */
static void test_storefile_damage(void **state) {
  (void)state;
  static ct c;
  ct_init(&c, "corrupt_storefile");
  int n_sf = 0;
  uint64_t per_file = tu_scaled(400, 50), tail = tu_scaled(512, 64);
  for (int i = 0; i < c.n_files; i++) {
    if (!ends_with(c.files[i].path, ".sf")) continue;
    n_sf++;
    const char *p = c.files[i].path;
    uint64_t size = (uint64_t)c.files[i].size;
    for (uint64_t k = 0; k < per_file; k++)
      trial(&c, p, DMG_BYTE, tu_below(&c.rng, size), rand_xor(&c), N_BATCHES, -1, NULL);
    for (uint64_t k = 1; k <= tail && k <= size; k++)
      trial(&c, p, DMG_BYTE, size - k, rand_xor(&c), N_BATCHES, -1, NULL);
    /* A damaged trailer or a cut file can never read back as the data. */
    assert_int_equal(trial(&c, p, DMG_BYTE, size - 1, 0xff, N_BATCHES, -1, NULL), READ_CORRUPT);
    assert_int_equal(trial(&c, p, DMG_SHRINK, size - 1, 0, N_BATCHES, -1, NULL), READ_CORRUPT);
    assert_int_equal(trial(&c, p, DMG_SHRINK, size / 2, 0, N_BATCHES, -1, NULL), READ_CORRUPT);
    assert_int_equal(trial(&c, p, DMG_SHRINK, 0, 0, N_BATCHES, -1, NULL), READ_CORRUPT);
    /* A missing store file that the MANIFEST names is an error, never silent data loss. */
    build(&c, false);
    C_OK(&c, c.env->remove(c.env, p));
    kv_options o = store_options(c.env);
    kv_db *db = NULL;
    int rc = kv_open("/db", &o, &db);
    if (rc == KV_OK) {
      fprintf(stderr, "[%s] kv_open succeeded with %s missing\n", c.name, p);
      kv_close(db);
      fail();
    }
    kv_env_free(c.env);
    c.env = NULL;
  }
  assert_true(n_sf >= 4); /* two flushes of two families */
  ct_report(&c);
}

/* WAL: a damaged record before the last one is corruption; a damaged or cut last record
** is a torn tail, dropped with every earlier batch kept (or reported as corruption). */
static void test_wal_damage(void **state) {
  (void)state;
  static ct c;
  ct_init(&c, "corrupt_wal");
  const char *w = c.wal;
  uint64_t per_record = tu_scaled(100, 12);
  /* Middle records: any damaged byte is KV_ERR_CORRUPT. */
  for (int i = FLUSH2; i < N_BATCHES - 1; i++) {
    uint64_t lo = (uint64_t)c.wal_end[i], hi = (uint64_t)c.wal_end[i + 1];
    for (uint64_t k = 0; k < per_record; k++) {
      uint64_t off = k < 4 ? lo + k * 5 : lo + tu_below(&c.rng, hi - lo); /* header, then any */
      int r = trial(&c, w, DMG_BYTE, off, rand_xor(&c), N_BATCHES, -1, NULL);
      if (r != READ_CORRUPT) {
        fprintf(stderr, "[%s] seed %llu: damage at byte %llu of record %d (of %d) in %s was "
                "not reported\n", c.name, (unsigned long long)c.seed, (unsigned long long)off,
                i - FLUSH2, N_BATCHES - FLUSH2, w);
        fail();
      }
    }
  }
  /* The last record: damaged anywhere -> dropped (batches before it kept) or corruption. */
  uint64_t lo = (uint64_t)c.wal_end[N_BATCHES - 1], hi = (uint64_t)c.wal_end[N_BATCHES];
  for (uint64_t k = 0; k < per_record * 3; k++) {
    uint64_t off = lo + tu_below(&c.rng, hi - lo);
    int which = -1;
    if (trial(&c, w, DMG_BYTE, off, rand_xor(&c), N_BATCHES - 1, -1, &which) == READ_OK)
      c.tail_dropped++;
  }
  /* Cut inside the last record: a torn tail, always dropped, never an error. Every length
  ** at scale 1. */
  uint64_t cuts = tu_scaled(hi - lo - 1, 8);
  for (uint64_t k = 0; k < cuts; k++) {
    uint64_t off = cuts >= hi - lo - 1 ? lo + 1 + k
                   : k == 0 ? lo + 1 : k == 1 ? hi - 1 : lo + 1 + tu_below(&c.rng, hi - lo - 1);
    int which = -1;
    int r = trial(&c, w, DMG_SHRINK, off, 0, N_BATCHES - 1, -1, &which);
    if (r != READ_OK) {
      fprintf(stderr, "[%s] seed %llu: a WAL cut inside its last record (at %llu of %llu) was "
              "reported as corruption: %s\n", c.name, (unsigned long long)c.seed,
              (unsigned long long)off, (unsigned long long)hi, kv_errmsg());
      fail();
    }
    c.tail_dropped++;
  }
  /* Cut exactly at a record boundary: exactly the batches before it. */
  for (int i = FLUSH2; i < N_BATCHES; i++) {
    int which = -1;
    int r = trial(&c, w, DMG_SHRINK, (uint64_t)c.wal_end[i], 0, i, -1, &which);
    assert_int_equal(r, READ_OK);
  }
  ct_report(&c);
}

/* MANIFEST: any damaged byte is corruption or harmless; never wrong data. */
static void test_manifest_damage(void **state) {
  (void)state;
  static ct c;
  ct_init(&c, "corrupt_manifest");
  const char *m = NULL;
  uint64_t size = 0;
  for (int i = 0; i < c.n_files; i++)
    if (strcmp(base_name(c.files[i].path), "MANIFEST") == 0) {
      m = c.files[i].path;
      size = (uint64_t)c.files[i].size;
    }
  assert_non_null(m);
  /* Every byte at scale 1 (the MANIFEST of this store is small), a sample below. */
  uint64_t n = tu_scaled(size, 64);
  for (uint64_t k = 0; k < n; k++) {
    uint64_t off = n >= size ? k : k < 48 ? k : tu_below(&c.rng, size);
    trial(&c, m, DMG_BYTE, off, rand_xor(&c), N_BATCHES, -1, NULL);
  }
  for (uint64_t k = 1; k <= 32 && k <= size; k++)
    trial(&c, m, DMG_BYTE, size - k, rand_xor(&c), N_BATCHES, -1, NULL);
  assert_true(c.detected > 0);
  ct_report(&c);
}

/* A MANIFEST cut exactly at a record boundary looks whole. If the records it lost had
** retired WAL segments (a flush names its store file and the oldest WAL still needed, then
** deletes older segments), opening must report corruption rather than open without the
** flushed rows and delete their store files as unknown. */
static void test_manifest_cut_at_record_boundary(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1700000000000ll);
  kv_options o;
  kv_options_init(&o);
  o.env = env;
  o.create_if_missing = true;
  kv_db *db;
  assert_int_equal(kv_open("/db", &o, &db), KV_OK);
  kv_family_options fo = {.name = "f", .max_versions = 1};
  assert_int_equal(kv_create_table(db, "t", &fo, 1), KV_OK);
  uint32_t fid;
  assert_int_equal(kv_family_id(db, "t", "f", &fid), KV_OK);
  int64_t cut = kv_env_mem_file_size(env, "/db/MANIFEST"); /* a record boundary */
  assert_true(cut > 0);
  for (int round = 0; round < 2; round++) {
    kv_batch *b = kv_batch_new();
    for (int i = 0; i < 50; i++) {
      char row[16];
      int n = snprintf(row, sizeof row, "r%d-%03d", round, i);
      assert_int_equal(kv_batch_put(b, fid, row, (size_t)n, "q", 1, 1000, "v", 1), KV_OK);
    }
    assert_int_equal(kv_commit(db, b, NULL), KV_OK);
    kv_batch_free(b);
    assert_int_equal(kv_flush(db, NULL), KV_OK);
  }
  assert_int_equal(kv_close(db), KV_OK);
  assert_true(kv_env_mem_file_size(env, "/db/MANIFEST") > cut);
  assert_int_equal(kv_env_mem_shrink(env, "/db/MANIFEST", (uint64_t)cut), KV_OK);
  int rc = kv_open("/db", &o, &db);
  if (rc == KV_OK) kv_close(db);
  assert_int_equal(rc, KV_ERR_CORRUPT);
  assert_non_null(strstr(kv_errmsg(), "MANIFEST"));
  kv_env_free(env);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_storefile_damage),
      cmocka_unit_test(test_wal_damage),
      cmocka_unit_test(test_manifest_damage),
      cmocka_unit_test(test_manifest_cut_at_record_boundary),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
