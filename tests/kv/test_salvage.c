/*
** tests/kv/test_salvage.c: kv_salvage (kv/salvage/salvage.h) on the byte-damage corpus of
** test_corruption.c: the same small store (two families, two store files each from two
** flushes, the last ten batches only in the WAL), damaged the same ways (a flipped byte of a
** store file, the MANIFEST or the WAL; a file cut short; a file removed). For each damage
** the store is salvaged into a new one, which must open and read back exactly what a model
** says is still readable: per (family, row, qualifier) the newest op among those that
** survive, where an op survives unless it sits in a store-file block the damage hit (the
** block holding the byte, every block reaching past a cut, the whole of a removed file) or
** in a WAL record the damage hit (the record holding the byte, every record past a cut).
** Damage to a file's trailer, bloom filter or index, or to the MANIFEST, loses nothing. The
** report must name the damaged file (except a WAL cut exactly at a record boundary, which
** is no damage). Also: an undamaged store salvages to the same cells (every version and
** tombstone rule included), the old store is never changed, a store without MANIFEST or
** without TABLEINFO files, a MANIFEST cut at a record boundary, the refusals (a non-empty
** destination, a locked store), and the TABLEINFO files themselves (written, removed, made
** again by kv_open).
** Where the blocks are comes from the pristine file's block index (kv/sf/sf_int.h).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <xxhash.h>

#include "kv/env/env_mem.h"
#include "kv/kv.h"
#include "kv/db/manifest.h"
#include "kv/salvage/salvage.h"
#include "kv/sf/sf_int.h"
#include "testutil.h"

#define C_ROWS 60
#define C_FAMS 2
#define C_QUALS 2
#define N_BATCHES 50
#define FLUSH1 20
#define FLUSH2 40
#define MAX_FILES 32
#define MAX_BLOCKS 256

#define C_OK(call)                                                                         \
  do {                                                                                     \
    int rc_ = (call);                                                                      \
    if (rc_ != KV_OK) {                                                                    \
      fprintf(stderr, "%s:%d: %s -> %s (%s)\n", __FILE__, __LINE__, #call,                 \
              kv_status_name(rc_), kv_errmsg());                                           \
      fail();                                                                              \
    }                                                                                      \
  } while (0)

/* ---- the data (test_corruption.c's) ---------------------------------------------------- */
static uint32_t vlen(uint32_t id) { return (id * 37u) % 200 + (id % 9 == 0 ? 900 : 0); }
static uint8_t vbyte(uint32_t id, uint32_t i) { return (uint8_t)(id * 5u + i * 3u + (i >> 7)); }
static void batch_op(int i, int j, int *fam, int *row, int *qual) {
  *row = (i * 7 + j * 13) % C_ROWS;
  *fam = j % 2;
  *qual = j / 2;
}

/* A pristine store file: where it sits and its blocks. */
typedef struct pfile {
  char path[256];
  int fam;                    /* 0 or 1 */
  int flush;                  /* 0: batches [0, FLUSH1), 1: [FLUSH1, FLUSH2) */
  uint64_t size, data_end;    /* bytes; where the blocks end */
  uint32_t nblocks;
  uint64_t boff[MAX_BLOCKS], bsize[MAX_BLOCKS];
  int brow[MAX_BLOCKS], bqual[MAX_BLOCKS], bts[MAX_BLOCKS]; /* each block's first cell */
} pfile;

typedef struct st {
  const char *name;
  uint64_t seed, rng;
  kv_env *env;
  pfile files[MAX_FILES];
  int n_files;
  char wal[256], manifest[256];
  int64_t wal_end[N_BATCHES + 1]; /* the WAL's size after batch i - 1, from FLUSH2 on */
  uint64_t trials;
} st;

static kv_options store_options(kv_env *env) {
  kv_options o;
  kv_options_init(&o);
  o.env = env;
  o.create_if_missing = true;
  o.block_cache_size = 16 << 10;
  o.keep_log_on_close = true;
  return o;
}

/* Copy a path into a 256-byte buffer. */
static void cp256(char *dst, const char *src) {
  size_t n = strnlen(src, 255);
  memcpy(dst, src, n);
  dst[n] = 0;
}

typedef struct walk_ctx {
  char names[64][64];
  int n;
} walk_ctx;

static int collect(void *ctx, const char *name) {
  walk_ctx *w = ctx;
  if (w->n < 64) snprintf(w->names[w->n++], sizeof w->names[0], "%s", name);
  return 0;
}

/* Every file under dir: paths into out (at most max), returns the count. */
static int walk(kv_env *env, const char *dir, char (*out)[256], int n, int max) {
  walk_ctx *w = calloc(1, sizeof *w);
  assert_non_null(w);
  env->list(env, dir, collect, w);
  for (int i = 0; i < w->n; i++) {
    char p[256];
    snprintf(p, sizeof p, "%s/%s", dir, w->names[i]);
    if (kv_env_mem_file_size(env, p) < 0) n = walk(env, p, out, n, max);
    else if (n < max) snprintf(out[n++], 256, "%s", p);
  }
  free(w);
  return n;
}

/* Build the pristine store in a new env and close it. */
static void build(st *c, bool record) {
  c->env = kv_env_mem_new(1700000000000ll);
  kv_options o = store_options(c->env);
  kv_db *db;
  C_OK(kv_open("/db", &o, &db));
  kv_family_options fo[2];
  memset(fo, 0, sizeof fo);
  fo[0].name = "f0";
  fo[0].block_size = 512;
  fo[1].name = "f1";
  fo[1].block_size = 1024;
  fo[1].compression = KV_COMPRESSION_NONE;
  C_OK(kv_create_table(db, "t", fo, 2));
  uint32_t fid[2];
  C_OK(kv_family_id(db, "t", "f0", &fid[0]));
  C_OK(kv_family_id(db, "t", "f1", &fid[1]));
  kv_batch *b = kv_batch_new();
  uint8_t v[1200];
  for (int i = 0; i < N_BATCHES; i++) {
    if (i == FLUSH1 || i == FLUSH2) C_OK(kv_flush(db, NULL));
    if (record && i == FLUSH2) {
      char all[MAX_FILES][256];
      int n = walk(c->env, "/db", all, 0, MAX_FILES);
      uint64_t best = 0;
      for (int k = 0; k < n; k++) {
        unsigned long long num;
        const char *bn = strrchr(all[k], '/') + 1;
        if (sscanf(bn, "wal-%llu.log", &num) == 1 && num >= best) {
          best = num;
          cp256(c->wal, all[k]);
        }
      }
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
      C_OK(kv_batch_put(b, fid[f], row, 4, qual, 1, 1000 + i, v, 4 + vlen(id)));
    }
    C_OK(kv_commit(db, b, NULL));
    if (record && i >= FLUSH2) c->wal_end[i + 1] = kv_env_mem_file_size(c->env, c->wal);
  }
  kv_batch_free(b);
  C_OK(kv_close(db));
  if (!record) return;
  /* the store files: family from the folder, flush from the number order */
  char all[MAX_FILES][256];
  int n = walk(c->env, "/db", all, 0, MAX_FILES);
  c->n_files = 0;
  for (int k = 0; k < n; k++) {
    if (strstr(all[k], "/MANIFEST") && !strstr(all[k], ".tmp")) cp256(c->manifest, all[k]);
    size_t L = strlen(all[k]);
    if (L < 3 || strcmp(all[k] + L - 3, ".sf") != 0) continue;
    pfile *pf = &c->files[c->n_files++];
    memset(pf, 0, sizeof *pf);
    cp256(pf->path, all[k]);
    unsigned tid, fidn;
    unsigned long long num;
    assert_int_equal(sscanf(all[k], "/db/data/%u/%u/%llu.sf", &tid, &fidn, &num), 3);
    pf->fam = fidn == fid[0] ? 0 : 1;
    kv_sf_reader *r;
    C_OK(kv_sf_open(c->env, pf->path, &r));
    pf->size = kv_sf_get_props(r)->file_size;
    pf->nblocks = r->nblocks;
    assert_true(r->nblocks <= MAX_BLOCKS);
    for (uint32_t bi = 0; bi < r->nblocks; bi++) {
      pf->boff[bi] = r->index[bi].off;
      pf->bsize[bi] = r->index[bi].size;
      kv_cell fc;
      kv_sf_first_cell(r, bi, &fc);
      pf->brow[bi] = (fc.row[1] - '0') * 100 + (fc.row[2] - '0') * 10 + (fc.row[3] - '0');
      pf->bqual[bi] = fc.qual[0] - 'a';
      pf->bts[bi] = (int)fc.ts;
    }
    pf->data_end = r->nblocks ? r->index[r->nblocks - 1].off + r->index[r->nblocks - 1].size : 0;
    kv_sf_close(r);
  }
  /* flush order: the smaller number of a family's two files is the first flush */
  for (int a = 0; a < c->n_files; a++) {
    unsigned long long na, nb;
    sscanf(strrchr(c->files[a].path, '/') + 1, "%llu", &na);
    c->files[a].flush = 0;
    for (int b2 = 0; b2 < c->n_files; b2++) {
      sscanf(strrchr(c->files[b2].path, '/') + 1, "%llu", &nb);
      if (b2 != a && c->files[b2].fam == c->files[a].fam && nb < na) c->files[a].flush = 1;
    }
  }
}

/* ---- the model ------------------------------------------------------------------------- */
/* alive[i][j]: op j of batch i survives the damage. */
typedef bool alive_t[N_BATCHES][4];

static void all_alive(alive_t a) {
  for (int i = 0; i < N_BATCHES; i++)
    for (int j = 0; j < 4; j++) a[i][j] = true;
}

/* Cell order without the sequence number: row, qualifier, timestamp descending. */
static int key_cmp(int r1, int q1, int t1, int r2, int q2, int t2) {
  if (r1 != r2) return r1 < r2 ? -1 : 1;
  if (q1 != q2) return q1 < q2 ? -1 : 1;
  if (t1 != t2) return t1 > t2 ? -1 : 1;
  return 0;
}

/* The block of pf holding op (i, j)'s cell. */
static uint32_t block_of(const pfile *pf, int i, int j) {
  int f, r, q;
  batch_op(i, j, &f, &r, &q);
  uint32_t b = 0;
  for (uint32_t k = 0; k < pf->nblocks; k++)
    if (key_cmp(pf->brow[k], pf->bqual[k], pf->bts[k], r, q, 1000 + i) <= 0) b = k;
  return b;
}

/* Kill the ops of pf in blocks for which lost(block) says so. */
static void kill_blocks(alive_t a, const pfile *pf, bool lost[MAX_BLOCKS]) {
  int lo = pf->flush ? FLUSH1 : 0, hi = pf->flush ? FLUSH2 : FLUSH1;
  for (int i = lo; i < hi; i++)
    for (int j = 0; j < 4; j++)
      if (j % 2 == pf->fam && lost[block_of(pf, i, j)]) a[i][j] = false;
}

/* ---- reading the salvaged store back --------------------------------------------------- */
static void expect_of(alive_t a, uint32_t exp[C_FAMS][C_ROWS][C_QUALS]) {
  memset(exp, 0, sizeof(uint32_t) * C_FAMS * C_ROWS * C_QUALS);
  for (int i = 0; i < N_BATCHES; i++)
    for (int j = 0; j < 4; j++) {
      if (!a[i][j]) continue;
      int f, r, q;
      batch_op(i, j, &f, &r, &q);
      exp[f][r][q] = (uint32_t)(i * 4 + j + 1);
    }
}

/* Read the store at dir (table tname, families fn0/fn1) and compare it with the model.
** Returns the number of differences (printed). */
static int compare(kv_env *env, const char *dir, const char *tname, const char *fn0,
                   const char *fn1, alive_t a, const char *what) {
  static uint32_t exp[C_FAMS][C_ROWS][C_QUALS];
  expect_of(a, exp);
  kv_options o = store_options(env);
  o.create_if_missing = false;
  kv_db *db;
  int rc = kv_open(dir, &o, &db);
  if (rc != KV_OK) {
    fprintf(stderr, "%s: the salvaged store does not open: %s\n", what, kv_errmsg());
    return 1;
  }
  uint32_t fid[2];
  int bad = 0;
  if (kv_family_id(db, tname, fn0, &fid[0]) || kv_family_id(db, tname, fn1, &fid[1])) {
    fprintf(stderr, "%s: no table %s with families %s, %s: %s\n", what, tname, fn0, fn1, kv_errmsg());
    kv_close(db);
    return 1;
  }
  static uint32_t got[C_FAMS][C_ROWS][C_QUALS];
  memset(got, 0, sizeof got);
  for (int f = 0; f < 2; f++) {
    kv_scan_options so;
    memset(&so, 0, sizeof so);
    so.family_ids = &fid[f];
    so.n_families = 1;
    kv_scan *s;
    C_OK(kv_scan_open(db, &so, &s));
    kv_row row;
    while ((rc = kv_scan_next(s, &row)) == KV_OK) {
      int r = (row.key[1] - '0') * 100 + (row.key[2] - '0') * 10 + (row.key[3] - '0');
      for (uint32_t k = 0; k < row.n_cells; k++) {
        const kv_cell_view *cv = &row.cells[k];
        int q = cv->qual[0] - 'a';
        uint32_t id = (uint32_t)cv->value[0] | (uint32_t)cv->value[1] << 8 |
                      (uint32_t)cv->value[2] << 16 | (uint32_t)cv->value[3] << 24;
        bool ok = r >= 0 && r < C_ROWS && q >= 0 && q < C_QUALS && id > 0 &&
                  cv->value_len == 4 + vlen(id) && cv->ts == 1000 + (int64_t)((id - 1) / 4);
        for (uint32_t x = 0; ok && x < vlen(id); x++) ok = cv->value[4 + x] == vbyte(id, x);
        if (!ok) { bad++; continue; }
        got[f][r][q] = id;
      }
    }
    assert_int_equal(rc, KV_ERR_NOTFOUND);
    kv_scan_close(s);
  }
  kv_close(db);
  for (int f = 0; f < 2; f++)
    for (int r = 0; r < C_ROWS; r++)
      for (int q = 0; q < C_QUALS; q++)
        if (got[f][r][q] != exp[f][r][q]) {
          if (bad < 5)
            fprintf(stderr, "%s: family %d row %d qual %d: got op %u, the model says %u\n", what,
                    f, r, q, got[f][r][q], exp[f][r][q]);
          bad++;
        }
  return bad;
}

static bool report_names(const kv_salvage_report *rep, const char *file) {
  const char *bn = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
  for (size_t i = 0; i < rep->n_damage; i++) {
    const char *p = rep->damage[i].path;
    size_t a = strlen(p), b = strlen(bn);
    if (a >= b && strcmp(p + a - b, bn) == 0) return true;
  }
  return false;
}

typedef enum { DMG_BYTE, DMG_SHRINK, DMG_REMOVE, DMG_NONE } dmg_kind;

/* One trial: rebuild, damage `file`, salvage, compare with the model a. */
static void trial(st *c, const char *file, dmg_kind kind, uint64_t off, uint8_t x, alive_t a,
                  bool must_report) {
  build(c, false);
  char what[400];
  if (kind == DMG_BYTE) {
    uint8_t v = 0;
    C_OK(kv_env_mem_get_byte(c->env, file, off, &v));
    C_OK(kv_env_mem_set_byte(c->env, file, off, (uint8_t)(v ^ x)));
    snprintf(what, sizeof what, "[%s] seed %llu: %s byte %llu xor 0x%02x", c->name,
             (unsigned long long)c->seed, file, (unsigned long long)off, x);
  } else if (kind == DMG_SHRINK) {
    C_OK(kv_env_mem_shrink(c->env, file, off));
    snprintf(what, sizeof what, "[%s] %s cut to %llu bytes", c->name, file, (unsigned long long)off);
  } else if (kind == DMG_REMOVE) {
    C_OK(c->env->remove(c->env, file));
    snprintf(what, sizeof what, "[%s] %s removed", c->name, file);
  } else {
    snprintf(what, sizeof what, "[%s] no damage", c->name);
  }
  kv_salvage_report rep;
  int rc = kv_salvage(c->env, "/db", "/new", &rep);
  if (rc != KV_OK) {
    fprintf(stderr, "%s: kv_salvage failed: %s\n", what, kv_errmsg());
    fail();
  }
  if (compare(c->env, "/new", "t", "f0", "f1", a, what)) fail();
  if (must_report && !report_names(&rep, file)) {
    fprintf(stderr, "%s: the report (%zu entries) does not name the file\n", what, rep.n_damage);
    fail();
  }
  if (!must_report && kind == DMG_NONE && rep.n_damage) {
    fprintf(stderr, "%s: damage reported on a sound store: %s: %s\n", what, rep.damage[0].path,
            rep.damage[0].why);
    fail();
  }
  kv_salvage_report_free(&rep);
  kv_env_free(c->env);
  c->env = NULL;
  c->trials++;
}

static void st_init(st *c, const char *name) {
  memset(c, 0, sizeof *c);
  c->name = name;
  c->seed = tu_seed(name);
  c->rng = c->seed;
  build(c, true);
  assert_true(c->n_files >= 4);
  kv_env_free(c->env);
  c->env = NULL;
}

static uint8_t rand_xor(st *c) { return (uint8_t)(1u << tu_below(&c->rng, 8)) | (uint8_t)(tu_below(&c->rng, 2) ? 0x80 : 0); }

/* ---- the tests ---------------------------------------------------------------------------- */

/* A flipped byte of a store file loses the block holding it (nothing when it is in the
** bloom filter, index or trailer); a cut loses every block reaching past it; a removed
** file, all of it. */
static void test_storefile_damage(void **state) {
  (void)state;
  static st c;
  st_init(&c, "salvage_storefile");
  uint64_t per_file = tu_scaled(120, 16);
  for (int k = 0; k < c.n_files; k++) {
    const pfile *pf = &c.files[k];
    for (uint64_t n = 0; n < per_file + 4; n++) {
      /* the header byte and the checksum of a block, then anywhere (trailer and index too) */
      uint32_t bi = (uint32_t)tu_below(&c.rng, pf->nblocks);
      uint64_t off = n == 0 ? pf->boff[bi] : n == 1 ? pf->boff[bi] + pf->bsize[bi] - 1
                   : n == 2 ? pf->size - 1 : n == 3 ? pf->data_end : tu_below(&c.rng, pf->size);
      alive_t a;
      all_alive(a);
      bool lost[MAX_BLOCKS] = {false};
      for (uint32_t b = 0; b < pf->nblocks; b++)
        if (off >= pf->boff[b] && off < pf->boff[b] + pf->bsize[b]) lost[b] = true;
      kill_blocks(a, pf, lost);
      trial(&c, pf->path, DMG_BYTE, off, rand_xor(&c), a, true);
    }
    uint64_t cuts[4] = {pf->size - 1, pf->data_end, pf->size / 2, 0};
    for (int n = 0; n < 4; n++) {
      alive_t a;
      all_alive(a);
      bool lost[MAX_BLOCKS] = {false};
      for (uint32_t b = 0; b < pf->nblocks; b++)
        if (pf->boff[b] + pf->bsize[b] > cuts[n]) lost[b] = true;
      kill_blocks(a, pf, lost);
      trial(&c, pf->path, DMG_SHRINK, cuts[n], 0, a, true);
    }
    alive_t a;
    all_alive(a);
    bool lost[MAX_BLOCKS];
    for (uint32_t b = 0; b < MAX_BLOCKS; b++) lost[b] = true;
    kill_blocks(a, pf, lost);
    trial(&c, pf->path, DMG_REMOVE, 0, 0, a, true);
  }
  fprintf(stderr, "[%s] %llu trials\n", c.name, (unsigned long long)c.trials);
}

/* A flipped byte of a WAL record loses that record's batch, and only it; a cut, the
** batches from the record it cuts on. */
static void test_wal_damage(void **state) {
  (void)state;
  static st c;
  st_init(&c, "salvage_wal");
  uint64_t per_record = tu_scaled(12, 3);
  for (int i = FLUSH2; i < N_BATCHES; i++) {
    uint64_t lo = (uint64_t)c.wal_end[i], hi = (uint64_t)c.wal_end[i + 1];
    for (uint64_t k = 0; k < per_record; k++) {
      uint64_t off = k < 3 ? lo + k * 7 : lo + tu_below(&c.rng, hi - lo);
      alive_t a;
      all_alive(a);
      for (int j = 0; j < 4; j++) a[i][j] = false;
      trial(&c, c.wal, DMG_BYTE, off, rand_xor(&c), a, true);
    }
    /* a cut inside the record, and at its start */
    for (int n = 0; n < 2; n++) {
      uint64_t cut = n == 0 ? lo + 1 + tu_below(&c.rng, hi - lo - 1) : lo;
      alive_t a;
      all_alive(a);
      for (int b = i; b < N_BATCHES; b++)
        for (int j = 0; j < 4; j++) a[b][j] = false;
      trial(&c, c.wal, DMG_SHRINK, cut, 0, a, n == 0);
    }
  }
  alive_t a;
  all_alive(a);
  for (int b = FLUSH2; b < N_BATCHES; b++)
    for (int j = 0; j < 4; j++) a[b][j] = false;
  trial(&c, c.wal, DMG_REMOVE, 0, 0, a, false);
  fprintf(stderr, "[%s] %llu trials\n", c.name, (unsigned long long)c.trials);
}

/* A flipped byte anywhere in the MANIFEST loses nothing: the store files are found in the
** folders, the names in the TABLEINFO files. So does a MANIFEST cut or removed. */
static void test_manifest_damage(void **state) {
  (void)state;
  static st c;
  st_init(&c, "salvage_manifest");
  build(&c, false);
  uint64_t size = (uint64_t)kv_env_mem_file_size(c.env, c.manifest);
  kv_env_free(c.env);
  c.env = NULL;
  uint64_t n = tu_scaled(size, 48);
  alive_t a;
  all_alive(a);
  for (uint64_t k = 0; k < n; k++) {
    uint64_t off = n >= size ? k : tu_below(&c.rng, size);
    trial(&c, c.manifest, DMG_BYTE, off, rand_xor(&c), a, true);
  }
  trial(&c, c.manifest, DMG_SHRINK, size / 2, 0, a, true);
  trial(&c, c.manifest, DMG_SHRINK, 0, 0, a, false);
  trial(&c, c.manifest, DMG_REMOVE, 0, 0, a, true);
  fprintf(stderr, "[%s] %llu trials\n", c.name, (unsigned long long)c.trials);
}

/* Without the MANIFEST and without any TABLEINFO the cells are all there, under the names
** "#<table id>" and "#<family id>", and the report says the names were lost. */
static void test_no_names(void **state) {
  (void)state;
  static st c;
  st_init(&c, "salvage_no_names");
  build(&c, false);
  kv_options o = store_options(c.env);
  kv_db *db;
  C_OK(kv_open("/db", &o, &db));
  uint32_t fid[2];
  C_OK(kv_family_id(db, "t", "f0", &fid[0]));
  C_OK(kv_family_id(db, "t", "f1", &fid[1]));
  C_OK(kv_close(db));
  char all[MAX_FILES][256];
  int nf = walk(c.env, "/db", all, 0, MAX_FILES);
  unsigned tid = 0;
  for (int k = 0; k < nf; k++) {
    if (strstr(all[k], "/TABLEINFO")) {
      assert_int_equal(sscanf(all[k], "/db/data/%u/TABLEINFO", &tid), 1);
      C_OK(c.env->remove(c.env, all[k]));
    }
  }
  assert_true(tid > 0);
  C_OK(c.env->remove(c.env, "/db/MANIFEST"));
  kv_salvage_report rep;
  C_OK(kv_salvage(c.env, "/db", "/new", &rep));
  assert_false(rep.manifest_whole);
  assert_int_equal(rep.tables_unnamed, 1);
  bool names = false;
  for (size_t i = 0; i < rep.n_damage; i++) names |= rep.damage[i].kind == KV_SALVAGE_NAMES;
  assert_true(names);
  char tn[32], f0[32], f1[32];
  snprintf(tn, sizeof tn, "#%u", tid);
  snprintf(f0, sizeof f0, "#%u", fid[0]);
  snprintf(f1, sizeof f1, "#%u", fid[1]);
  alive_t a;
  all_alive(a);
  assert_int_equal(compare(c.env, "/new", tn, f0, f1, a, "no names"), 0);
  kv_salvage_report_free(&rep);
  kv_env_free(c.env);
}

/* A MANIFEST cut exactly at a record boundary reads as whole, but has lost the records
** that named the flushed store files (and retired the WAL holding their rows): the salvage
** notices (as kv_open does) and reads every store file it finds. */
static void test_manifest_cut_at_record_boundary(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1700000000000ll);
  kv_options o = store_options(env);
  o.keep_log_on_close = false;
  kv_db *db;
  C_OK(kv_open("/db", &o, &db));
  kv_family_options fo = {.name = "f", .max_versions = 1};
  C_OK(kv_create_table(db, "t", &fo, 1));
  uint32_t fid;
  C_OK(kv_family_id(db, "t", "f", &fid));
  int64_t cut = kv_env_mem_file_size(env, "/db/MANIFEST");
  for (int round = 0; round < 2; round++) {
    kv_batch *b = kv_batch_new();
    for (int i = 0; i < 50; i++) {
      char row[16];
      int n = snprintf(row, sizeof row, "r%d-%03d", round, i);
      C_OK(kv_batch_put(b, fid, row, (size_t)n, "q", 1, 1000, "v", 1));
    }
    C_OK(kv_commit(db, b, NULL));
    kv_batch_free(b);
    C_OK(kv_flush(db, NULL));
  }
  C_OK(kv_close(db));
  C_OK(kv_env_mem_shrink(env, "/db/MANIFEST", (uint64_t)cut));
  kv_salvage_report rep;
  C_OK(kv_salvage(env, "/db", "/new", &rep));
  assert_false(rep.manifest_whole);
  assert_true(report_names(&rep, "/db/MANIFEST"));
  kv_salvage_report_free(&rep);
  C_OK(kv_open("/new", &o, &db));
  C_OK(kv_family_id(db, "t", "f", &fid));
  kv_scan_options so;
  memset(&so, 0, sizeof so);
  so.family_ids = &fid;
  so.n_families = 1;
  kv_scan *s;
  C_OK(kv_scan_open(db, &so, &s));
  kv_row row;
  int rows = 0;
  while (kv_scan_next(s, &row) == KV_OK) rows++;
  kv_scan_close(s);
  C_OK(kv_close(db));
  assert_int_equal(rows, 100);
  kv_env_free(env);
}

/* TABLEINFO: written by kv_create_table (names and options read back), removed by
** kv_drop_table, written again by a writable kv_open when missing (a store made before it
** existed), not by a read-only one; a TABLEINFO.tmp a crash left is removed. */
static void test_tableinfo(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(1700000000000ll);
  kv_options o = store_options(env);
  kv_db *db;
  C_OK(kv_open("/db", &o, &db));
  kv_family_options fo[2] = {{.name = "a", .max_versions = 3, .ttl_sec = 60},
                             {.name = "b", .compression = KV_COMPRESSION_NONE, .block_size = 4096}};
  C_OK(kv_create_table(db, "tab", fo, 2));
  C_OK(kv_create_table(db, "gone", fo, 1));
  uint32_t fa, fb;
  C_OK(kv_family_id(db, "tab", "a", &fa));
  C_OK(kv_family_id(db, "tab", "b", &fb));
  C_OK(kv_drop_table(db, "gone"));
  C_OK(kv_close(db));
  char all[MAX_FILES][256];
  int n = walk(env, "/db", all, 0, MAX_FILES), found = 0;
  char path[256] = "";
  for (int k = 0; k < n; k++)
    if (strstr(all[k], "/TABLEINFO")) {
      found++;
      cp256(path, all[k]);
    }
  assert_int_equal(found, 1); /* the dropped table's is gone */
  kv_table_meta tm;
  C_OK(kv_tableinfo_read(env, path, &tm));
  assert_string_equal(tm.name, "tab");
  assert_int_equal(tm.n_families, 2);
  assert_int_equal(tm.families[0].id, fa);
  assert_string_equal(tm.families[0].name, "a");
  assert_int_equal(tm.families[0].max_versions, 3);
  assert_int_equal(tm.families[0].ttl_sec, 60);
  assert_int_equal(tm.families[1].id, fb);
  assert_int_equal(tm.families[1].compression, KV_COMPRESSION_NONE);
  assert_int_equal(tm.families[1].block_size, 4096);
  kv_table_meta_free(&tm);
  /* a flipped byte: refused */
  uint8_t v;
  C_OK(kv_env_mem_get_byte(env, path, 20, &v));
  C_OK(kv_env_mem_set_byte(env, path, 20, v ^ 1));
  assert_int_equal(kv_tableinfo_read(env, path, &tm), KV_ERR_CORRUPT);
  /* gone: a read-only open leaves it so, a writable one writes it */
  C_OK(env->remove(env, path));
  char tmp[300];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  kv_file *f;
  C_OK(env->open(env, tmp, KV_OPEN_WRITE, &f));
  env->close(f);
  o.read_only = true;
  o.create_if_missing = false;
  C_OK(kv_open("/db", &o, &db));
  C_OK(kv_close(db));
  assert_false(env->exists(env, path));
  o.read_only = false;
  C_OK(kv_open("/db", &o, &db));
  C_OK(kv_close(db));
  C_OK(kv_tableinfo_read(env, path, &tm));
  assert_string_equal(tm.name, "tab");
  kv_table_meta_free(&tm);
  assert_false(env->exists(env, tmp));
  kv_env_free(env);
}

/* Hash every file of the store (names and bytes). */
static uint64_t store_hash(kv_env *env, const char *dir) {
  char all[MAX_FILES][256];
  int n = walk(env, dir, all, 0, MAX_FILES);
  uint64_t h = 0;
  for (int k = 0; k < n; k++) {
    if (strstr(all[k], "/LOCK")) continue;
    uint8_t *buf;
    size_t len;
    C_OK(kv_env_read_all(env, all[k], &buf, &len));
    h ^= XXH3_64bits(all[k], strlen(all[k])) * 31 + XXH3_64bits(buf, len);
    free(buf);
  }
  return h;
}

/* The old store is only read: damaged or not, its files are byte for byte the same after,
** and a torn WAL tail is not truncated. The destination must be new or empty; a store
** open elsewhere is refused. A sound store salvages with no damage reported. */
static void test_source_untouched_and_refusals(void **state) {
  (void)state;
  static st c;
  st_init(&c, "salvage_untouched");
  alive_t a;
  all_alive(a);
  trial(&c, "/db", DMG_NONE, 0, 0, a, false);
  build(&c, false);
  C_OK(kv_env_mem_shrink(c.env, c.wal, (uint64_t)c.wal_end[N_BATCHES] - 3));
  C_OK(kv_env_mem_set_byte(c.env, c.files[0].path, c.files[0].boff[0] + 20, 0x5a));
  uint64_t before = store_hash(c.env, "/db");
  kv_salvage_report rep;
  C_OK(kv_salvage(c.env, "/db", "/new", &rep));
  assert_true(rep.n_damage >= 2);
  assert_true(rep.blocks_lost >= 1);
  assert_true(store_hash(c.env, "/db") == before);
  kv_salvage_report_free(&rep);
  /* /new holds a store now: refused */
  assert_int_equal(kv_salvage(c.env, "/db", "/new", &rep), KV_ERR_EXISTS);
  kv_salvage_report_free(&rep);
  assert_int_equal(kv_salvage(c.env, "/db", "/db", &rep), KV_ERR_INVALID);
  kv_salvage_report_free(&rep);
  assert_int_equal(kv_salvage(c.env, "/nothing", "/new2", &rep), KV_ERR_NOTFOUND);
  kv_salvage_report_free(&rep);
  kv_options o = store_options(c.env);
  kv_db *db;
  C_OK(kv_open("/new", &o, &db));
  assert_int_equal(kv_salvage(c.env, "/new", "/new3", &rep), KV_ERR_LOCKED);
  kv_salvage_report_free(&rep);
  C_OK(kv_close(db));
  kv_env_free(c.env);
}

/* Versions and tombstones across store files and the WAL: the salvaged store reads exactly
** as the old one, at every VERSIONS and with every kind of tombstone, also when the MANIFEST
** is gone (flushed sequence numbers unknown: every WAL op is replayed again) and after a
** major compaction wrote sequence number 0. */
static void test_versions_and_tombstones(void **state) {
  (void)state;
  uint64_t seed = tu_seed("salvage_versions"), rng = seed;
  for (int round = 0; round < 6; round++) {
    kv_env *env = kv_env_mem_new(1700000000000ll);
    kv_options o = store_options(env);
    kv_db *db;
    C_OK(kv_open("/db", &o, &db));
    kv_family_options fo = {.name = "v", .max_versions = 3};
    C_OK(kv_create_table(db, "t", &fo, 1));
    uint32_t fid;
    C_OK(kv_family_id(db, "t", "v", &fid));
    kv_batch *b = kv_batch_new();
    for (int i = 0; i < 400; i++) {
      kv_batch_clear(b);
      char row[8], q[2] = {(char)('a' + tu_below(&rng, 3)), 0}, val[16];
      snprintf(row, sizeof row, "r%02d", (int)tu_below(&rng, 12));
      int64_t ts = 1000 + (int64_t)tu_below(&rng, 40);
      int kind = (int)tu_below(&rng, 10);
      if (kind < 6) {
        int n = snprintf(val, sizeof val, "v%d", i);
        C_OK(kv_batch_put(b, fid, row, 3, q, 1, ts, val, (size_t)n));
      } else if (kind < 8) {
        C_OK(kv_batch_delete(b, fid, KV_DELETE_VERSION + (kind - 6), row, 3, q, 1, ts));
      } else {
        C_OK(kv_batch_delete(b, fid, KV_DELETE_FAMILY, row, 3, NULL, 0, ts));
      }
      C_OK(kv_commit(db, b, NULL));
      if (i % 97 == 50) C_OK(kv_flush(db, NULL));
      if (round >= 3 && i == 250) C_OK(kv_compact(db, NULL, true));
    }
    kv_batch_free(b);
    C_OK(kv_close(db));
    char out[2][8192];
    for (int s2 = 0; s2 < 2; s2++) {
      if (s2 == 1) { /* salvage (the MANIFEST gone in some rounds), then read the new store */
        if (round % 3 == 1) C_OK(env->remove(env, "/db/MANIFEST"));
        kv_salvage_report rep;
        C_OK(kv_salvage(env, "/db", "/new", &rep));
        kv_salvage_report_free(&rep);
      }
      kv_db *d;
      C_OK(kv_open(s2 ? "/new" : "/db", &o, &d));
      uint32_t f2;
      C_OK(kv_family_id(d, "t", "v", &f2));
      kv_scan_options so;
      memset(&so, 0, sizeof so);
      so.family_ids = &f2;
      so.n_families = 1;
      so.max_versions = 3;
      kv_scan *s;
      C_OK(kv_scan_open(d, &so, &s));
      kv_row row;
      size_t n = 0;
      while (kv_scan_next(s, &row) == KV_OK)
        for (uint32_t k = 0; k < row.n_cells && n < sizeof out[0] - 64; k++)
          n += (size_t)snprintf(out[s2] + n, sizeof out[0] - n, "%.*s/%c/%lld=%.*s;",
                                (int)row.key_len, row.key, row.cells[k].qual[0],
                                (long long)row.cells[k].ts, (int)row.cells[k].value_len,
                                row.cells[k].value);
      out[s2][n] = 0;
      kv_scan_close(s);
      C_OK(kv_close(d));
    }
    if (strcmp(out[0], out[1]) != 0) {
      fprintf(stderr, "round %d (seed %llu):\nold %s\nnew %s\n", round, (unsigned long long)seed,
              out[0], out[1]);
      fail();
    }
    kv_env_free(env);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_storefile_damage),
      cmocka_unit_test(test_wal_damage),
      cmocka_unit_test(test_manifest_damage),
      cmocka_unit_test(test_manifest_cut_at_record_boundary),
      cmocka_unit_test(test_no_names),
      cmocka_unit_test(test_tableinfo),
      cmocka_unit_test(test_source_untouched_and_refusals),
      cmocka_unit_test(test_versions_and_tombstones),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
