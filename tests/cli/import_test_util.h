/*
** tests/cli/import_test_util.h: helpers shared by the import tests (test_import.c,
** test_import_bulk.c): a fixture with an in-memory database and a real temporary folder for
** the files to import and the reject files, SQL that must succeed, the store-file blocks a
** scan reads, a growable string, and writers of gzip (several members) and lz4 (several
** frames) files. Header-only, static.
*/
#ifndef ROWAN_TESTS_CLI_IMPORT_TEST_UTIL_H
#define ROWAN_TESTS_CLI_IMPORT_TEST_UTIL_H

/* One test's database and folder. */
typedef struct fixture {
  kv_env *env;      /* in-memory file system */
  rowan_db *db;     /* database on it */
  char dir[64];     /* temp dir for generated files and reject files */
} fixture;

/* cmocka setup: a fixture whose temporary folder is made from dir_template (mkdtemp). */
static int imp_setup(void **state, const char *dir_template) {
  fixture *f = calloc(1, sizeof *f);
  assert_non_null(f);
  f->env = kv_env_mem_new(0);
  assert_non_null(f->env);
  rowan_options o;
  rowan_options_init(&o);
  o.kv_env = f->env;
  assert_int_equal(rowan_open("db", &o, &f->db), ROWAN_OK);
  snprintf(f->dir, sizeof f->dir, "%s", dir_template);
  assert_non_null(mkdtemp(f->dir));
  *state = f;
  return 0;
}

/* cmocka teardown: closes the database and removes the folder and its files. */
static int imp_teardown(void **state) {
  fixture *f = *state;
  rowan_close(f->db);
  kv_env_free(f->env);
  DIR *d = opendir(f->dir);
  if (d) {
    struct dirent *e;
    char p[512];
    while ((e = readdir(d)) != NULL) {
      if (e->d_name[0] == '.') continue;
      snprintf(p, sizeof p, "%s/%s", f->dir, e->d_name);
      unlink(p);
    }
    closedir(d);
  }
  rmdir(f->dir);
  free(f);
  return 0;
}

static void exec_ok(rowan_db *db, const char *sql) {
  int rc = rowan_exec(db, sql, NULL, NULL);
  if (rc != ROWAN_OK) fprintf(stderr, "SQL failed: %s\n  %s\n", sql, rowan_errmsg(db));
  assert_int_equal(rc, ROWAN_OK);
}

/* Store-file blocks a full scan of `table` reads (0: every cell came from memstores). */
static inline uint64_t scan_blocks(rowan_db *db, const char *table) {
  char sql[128];
  snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM %s", table);
  rowan_stmt *st = NULL;
  assert_int_equal(rowan_prepare(db, sql, -1, &st, NULL), ROWAN_OK);
  while (rowan_step(st) == ROWAN_ROW) {}
  rowan_metrics m;
  assert_int_equal(rowan_stmt_metrics(st, &m), ROWAN_OK);
  uint64_t n = 0;
  for (int i = 0; i < m.n_families; i++) n += m.families[i].blocks_read;
  rowan_finalize(st);
  return n;
}

typedef struct sbuf {
  char *p;    /* text */
  size_t n;   /* length */
} sbuf;

static void sb_add(sbuf *b, const char *s, size_t n) {
  b->p = realloc(b->p, b->n + n + 1);
  assert_non_null(b->p);
  memcpy(b->p + b->n, s, n);
  b->n += n;
  b->p[b->n] = 0;
}

/* gzip with `members` members, the text cut at even steps (also mid-record). */
static void write_gzip(const char *path, const char *p, size_t n, int members) {
  FILE *fp = fopen(path, "wb");
  assert_non_null(fp);
  size_t step = (n + (size_t)members - 1) / (size_t)members;
  for (size_t off = 0; off < n; off += step) {
    size_t len = off + step > n ? n - off : step;
    /* One gzip member per piece: compress2 gives zlib format, so use deflateInit2. */
    z_stream z;
    memset(&z, 0, sizeof z);
    assert_int_equal(deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY),
                     Z_OK);
    unsigned char out[8192];
    z.next_in = (unsigned char *)(uintptr_t)(p + off);
    z.avail_in = (unsigned)len;
    int zr;
    do {
      z.next_out = out;
      z.avail_out = sizeof out;
      zr = deflate(&z, Z_FINISH);
      fwrite(out, 1, sizeof out - z.avail_out, fp);
    } while (zr == Z_OK);
    assert_int_equal(zr, Z_STREAM_END);
    deflateEnd(&z);
  }
  assert_int_equal(fclose(fp), 0);
}

/* lz4 with `frames` frames, the text cut at even steps. */
static void write_lz4(const char *path, const char *p, size_t n, int frames) {
  FILE *fp = fopen(path, "wb");
  assert_non_null(fp);
  size_t step = (n + (size_t)frames - 1) / (size_t)frames;
  for (size_t off = 0; off < n; off += step) {
    size_t len = off + step > n ? n - off : step;
    size_t cap = LZ4F_compressFrameBound(len, NULL);
    void *out = malloc(cap);
    assert_non_null(out);
    size_t k = LZ4F_compressFrame(out, cap, p + off, len, NULL);
    assert_false(LZ4F_isError(k));
    fwrite(out, 1, k, fp);
    free(out);
  }
  assert_int_equal(fclose(fp), 0);
}

#endif /* ROWAN_TESTS_CLI_IMPORT_TEST_UTIL_H */
