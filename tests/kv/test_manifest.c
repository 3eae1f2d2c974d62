/*
** tests/kv/test_manifest.c: the MANIFEST. Edits round trip across reopen; a group that does
** not apply changes nothing; the log is rewritten as one snapshot past its limit (also with
** faults and a power cut around the rename); a torn final record is dropped at every cut
** length and the file truncated; damage elsewhere is KV_ERR_CORRUPT naming file and offset;
** a power cut between append and sync loses only the unsynced edit.
*/
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kv/env/env_mem.h"
#include "kv/db/manifest.h"
#include "testutil.h"

/* ---- helpers ---- */

static kv_env *new_env(void) {
  kv_env *env = kv_env_mem_new(1000);
  assert_int_equal(env->mkdir(env, "/db"), KV_OK);
  return env;
}

/* A table with n families named f0.., ids from fam_id. */
static void make_table(kv_table_meta *t, kv_family_meta *fams, uint32_t id, const char *name,
                       uint32_t fam_id, uint32_t n) {
  memset(t, 0, sizeof *t);
  t->id = id;
  snprintf(t->name, sizeof t->name, "%s", name);
  t->families = fams;
  t->n_families = n;
  for (uint32_t i = 0; i < n; i++) {
    memset(&fams[i], 0, sizeof fams[i]);
    fams[i].id = fam_id + i;
    snprintf(fams[i].name, sizeof fams[i].name, "f%u", i);
    fams[i].max_versions = (int)i + 1;
    fams[i].ttl_sec = i == 1 ? 86400 : 0;
    fams[i].compression = (int)(i % 2);
    fams[i].block_size = 65536;
  }
}

static kv_edit create_edit(const kv_table_meta *t) {
  kv_edit e = {.kind = KV_EDIT_CREATE_TABLE, .table = t};
  return e;
}

static kv_edit add_file_edit(uint32_t fam, uint64_t number, uint64_t min_seq, uint64_t max_seq,
                             uint64_t flushed) {
  kv_edit e = {.kind = KV_EDIT_ADD_FILE, .family_id = fam, .flushed_seq = flushed};
  e.file.number = number;
  e.file.size = 1000 + number;
  e.file.min_seq = min_seq;
  e.file.max_seq = max_seq;
  e.file.cells = 10 * number;
  e.file.rows = 3 * number;
  return e;
}

static const kv_family_meta *fam_of(const kv_version *v, uint32_t id) {
  for (uint32_t i = 0; i < v->n_tables; i++)
    for (uint32_t k = 0; k < v->tables[i].n_families; k++)
      if (v->tables[i].families[k].id == id) return &v->tables[i].families[k];
  return NULL;
}

/* Deep equality of two versions. */
static void assert_versions_equal(const kv_version *a, const kv_version *b) {
  assert_int_equal(a->n_tables, b->n_tables);
  assert_int_equal(a->next_file_number, b->next_file_number);
  assert_int_equal(a->next_table_id, b->next_table_id);
  assert_int_equal(a->next_family_id, b->next_family_id);
  assert_int_equal(a->last_seq, b->last_seq);
  assert_int_equal(a->wal_number, b->wal_number);
  for (uint32_t i = 0; i < a->n_tables; i++) {
    const kv_table_meta *x = &a->tables[i], *y = &b->tables[i];
    assert_int_equal(x->id, y->id);
    assert_string_equal(x->name, y->name);
    assert_int_equal(x->n_families, y->n_families);
    for (uint32_t k = 0; k < x->n_families; k++) {
      const kv_family_meta *f = &x->families[k], *g = &y->families[k];
      assert_int_equal(f->id, g->id);
      assert_string_equal(f->name, g->name);
      assert_int_equal(f->max_versions, g->max_versions);
      assert_int_equal(f->ttl_sec, g->ttl_sec);
      assert_int_equal(f->compression, g->compression);
      assert_int_equal(f->block_size, g->block_size);
      assert_int_equal(f->flushed_seq, g->flushed_seq);
      assert_int_equal(f->n_files, g->n_files);
      for (uint32_t j = 0; j < f->n_files; j++)
        assert_memory_equal(&f->files[j], &g->files[j], sizeof f->files[j]);
    }
  }
}

static void reopen_and_compare(kv_env *env, const kv_version *want) {
  kv_manifest *m;
  kv_version v;
  assert_int_equal(kv_manifest_open(env, "/db", false, &m, &v), KV_OK);
  assert_versions_equal(&v, want);
  kv_version_free(&v);
  assert_int_equal(kv_manifest_close(m), KV_OK);
}

/* A store with two tables and a few files; returns the open manifest and its version. */
static kv_manifest *populate(kv_env *env, kv_version *v) {
  kv_manifest *m;
  assert_int_equal(kv_manifest_open(env, "/db", true, &m, v), KV_OK);
  kv_table_meta t1, t2;
  kv_family_meta f1[3], f2[1];
  make_table(&t1, f1, 1, "SENSORS", 1, 3);
  make_table(&t2, f2, 2, "SYSTEM.CATALOG", 4, 1);
  kv_edit e[2] = {create_edit(&t1), create_edit(&t2)};
  assert_int_equal(kv_manifest_apply(m, v, e, 2), KV_OK);
  kv_edit a = add_file_edit(1, 5, 1, 100, 100);
  assert_int_equal(kv_manifest_apply(m, v, &a, 1), KV_OK);
  a = add_file_edit(2, 6, 1, 100, 100);
  assert_int_equal(kv_manifest_apply(m, v, &a, 1), KV_OK);
  return m;
}

/* ---- tests ---- */

static void test_round_trip_across_reopen(void **state) {
  kv_env *env = new_env();
  kv_version v;
  kv_manifest *m = populate(env, &v);
  assert_int_equal(v.n_tables, 2);
  assert_int_equal(v.next_table_id, 3);
  assert_int_equal(v.next_family_id, 5);
  assert_int_equal(v.next_file_number, 7);
  /* Files kept oldest to newest even when added out of order (a compaction output that
  ** replaces older files is older than a newer flush). */
  kv_edit g[3] = {add_file_edit(1, 9, 201, 300, 300), add_file_edit(1, 8, 101, 200, 0),
                  {.kind = KV_EDIT_SET_FLUSHED, .family_id = 3, .flushed_seq = 77}};
  assert_int_equal(kv_manifest_apply(m, &v, g, 3), KV_OK);
  const kv_family_meta *f = fam_of(&v, 1);
  assert_int_equal(f->n_files, 3);
  assert_int_equal(f->files[0].number, 5);
  assert_int_equal(f->files[1].number, 8);
  assert_int_equal(f->files[2].number, 9);
  assert_int_equal(f->flushed_seq, 300);
  assert_int_equal(fam_of(&v, 3)->flushed_seq, 77);
  assert_int_equal(v.last_seq, 300);
  /* A compaction: two files out, one in, atomically. */
  kv_edit c[3] = {add_file_edit(1, 10, 1, 200, 0),
                  {.kind = KV_EDIT_REMOVE_FILE, .family_id = 1, .file = {.number = 5}},
                  {.kind = KV_EDIT_REMOVE_FILE, .family_id = 1, .file = {.number = 8}}};
  assert_int_equal(kv_manifest_apply(m, &v, c, 3), KV_OK);
  assert_int_equal(f->n_files, 2); /* the family pointer is still valid */
  assert_int_equal(f->files[0].number, 10);
  assert_int_equal(f->files[1].number, 9);
  /* Counters only go up; zero leaves them. */
  kv_edit k = {.kind = KV_EDIT_SET_COUNTERS, .next_file_number = 50, .last_seq = 1000,
               .wal_number = 4};
  assert_int_equal(kv_manifest_apply(m, &v, &k, 1), KV_OK);
  kv_edit k2 = {.kind = KV_EDIT_SET_COUNTERS, .next_file_number = 20, .wal_number = 6};
  assert_int_equal(kv_manifest_apply(m, &v, &k2, 1), KV_OK);
  assert_int_equal(v.next_file_number, 50);
  assert_int_equal(v.last_seq, 1000);
  assert_int_equal(v.wal_number, 6);
  assert_int_equal(v.next_table_id, 3);
  /* Drop a table; a new one gets a fresh id. */
  kv_edit d = {.kind = KV_EDIT_DROP_TABLE, .table_id = 2};
  assert_int_equal(kv_manifest_apply(m, &v, &d, 1), KV_OK);
  kv_table_meta t3;
  kv_family_meta f3[2];
  make_table(&t3, f3, v.next_table_id, "T3", v.next_family_id, 2);
  kv_edit ct = create_edit(&t3);
  assert_int_equal(kv_manifest_apply(m, &v, &ct, 1), KV_OK);
  assert_int_equal(v.n_tables, 2);
  assert_string_equal(v.tables[1].name, "T3");
  assert_int_equal(kv_manifest_close(m), KV_OK);
  reopen_and_compare(env, &v);
  kv_version_free(&v);
  kv_env_free(env);
}

static void test_bad_group_changes_nothing(void **state) {
  kv_env *env = new_env();
  kv_version v, before;
  kv_manifest *m = populate(env, &v);
  uint64_t size = kv_manifest_size(m);
  int64_t fsize = kv_env_mem_file_size(env, "/db/MANIFEST");
  kv_table_meta dup;
  kv_family_meta df[2];
  make_table(&dup, df, 9, "SENSORS", 9, 1);
  kv_table_meta badf;
  make_table(&badf, df, 9, "OTHER", 20, 2);
  snprintf(df[1].name, sizeof df[1].name, "f0"); /* duplicate family name */
  kv_table_meta usedf;
  kv_family_meta uf[1];
  make_table(&usedf, uf, 9, "OTHER", 1, 1); /* family id 1 in use */
  struct { kv_edit e; int code; } cases[] = {
    {{.kind = KV_EDIT_DROP_TABLE, .table_id = 42}, KV_ERR_NOTFOUND},
    {add_file_edit(99, 70, 1, 2, 0), KV_ERR_NOTFOUND},
    {add_file_edit(1, 5, 1, 2, 0), KV_ERR_EXISTS}, /* file 5 listed already */
    {{.kind = KV_EDIT_REMOVE_FILE, .family_id = 1, .file = {.number = 77}}, KV_ERR_NOTFOUND},
    {{.kind = KV_EDIT_SET_FLUSHED, .family_id = 99}, KV_ERR_NOTFOUND},
    {create_edit(&dup), KV_ERR_EXISTS},
    {create_edit(&usedf), KV_ERR_EXISTS},
    {create_edit(&badf), KV_ERR_INVALID},
    {{.kind = KV_EDIT_SNAPSHOT}, KV_ERR_INVALID},
    {{.kind = 99}, KV_ERR_INVALID},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    /* A good edit first, then the bad one: the group must not half apply. */
    kv_edit g[2] = {add_file_edit(1, 60 + i, 500, 600, 600), cases[i].e};
    assert_int_equal(kv_manifest_apply(m, &v, g, 2), cases[i].code);
    assert_int_equal(kv_manifest_size(m), size);
    assert_int_equal(kv_env_mem_file_size(env, "/db/MANIFEST"), fsize);
    assert_int_equal(fam_of(&v, 1)->n_files, 1);
    assert_int_equal(fam_of(&v, 1)->flushed_seq, 100);
  }
  assert_int_equal(kv_manifest_close(m), KV_OK);
  /* The manifest on disk says the same. */
  assert_int_equal(kv_manifest_open(env, "/db", false, &m, &before), KV_OK);
  assert_versions_equal(&before, &v);
  kv_version_free(&before);
  kv_manifest_close(m);
  kv_version_free(&v);
  kv_env_free(env);
}

static void test_open_missing(void **state) {
  kv_env *env = new_env();
  kv_manifest *m = (kv_manifest *)1;
  kv_version v;
  assert_int_equal(kv_manifest_open(env, "/db", false, &m, &v), KV_ERR_NOTFOUND);
  assert_null(m);
  assert_int_equal(v.n_tables, 0);
  assert_int_equal(kv_manifest_open(env, "/nope", true, &m, &v), KV_ERR_NOTFOUND);
  /* Created, empty, durable (the rename and the directory are synced). */
  assert_int_equal(kv_manifest_open(env, "/db", true, &m, &v), KV_OK);
  assert_int_equal(v.next_file_number, 1);
  assert_int_equal(v.next_table_id, 1);
  assert_int_equal(v.next_family_id, 1);
  kv_manifest_close(m);
  kv_env_mem_power_cut(env);
  reopen_and_compare(env, &v);
  kv_version_free(&v);
  kv_env_free(env);
}

static void test_rewrite_as_snapshot(void **state) {
  uint64_t seed = tu_seed("manifest_rewrite"), rng = seed;
  kv_env *env = new_env();
  kv_version v;
  kv_manifest *m = populate(env, &v);
  kv_manifest_set_rewrite_limit(m, 4096);
  /* Flushes and compactions: the live files stay few, the log grows and is rewritten. */
  uint64_t seq = 1000, max_size = 0;
  int rewrites = 0, n = (int)tu_scaled(2000, 400);
  for (int i = 0; i < n; i++) {
    uint32_t fam = 1 + (uint32_t)tu_below(&rng, 4);
    kv_edit a = add_file_edit(fam, v.next_file_number, seq, seq + 10, seq + 10);
    seq += 11;
    uint64_t before = kv_manifest_size(m);
    assert_int_equal(kv_manifest_apply(m, &v, &a, 1), KV_OK);
    const kv_family_meta *f = fam_of(&v, fam);
    if (f->n_files > 3) {
      kv_edit r = {.kind = KV_EDIT_REMOVE_FILE, .family_id = fam, .file = {.number = f->files[0].number}};
      assert_int_equal(kv_manifest_apply(m, &v, &r, 1), KV_OK);
    }
    if (kv_manifest_size(m) < before) rewrites++;
    if (kv_manifest_size(m) > max_size) max_size = kv_manifest_size(m);
    assert_int_equal((uint64_t)kv_env_mem_file_size(env, "/db/MANIFEST"), kv_manifest_size(m));
  }
  if (rewrites < 2) fprintf(stderr, "seed %llu\n", (unsigned long long)seed);
  assert_true(rewrites >= 2);
  assert_true(max_size < 4096 + 1024); /* bounded by the limit plus one record */
  assert_int_equal(env->exists(env, "/db/MANIFEST.tmp"), 0);
  assert_int_equal(kv_manifest_close(m), KV_OK);
  reopen_and_compare(env, &v);
  /* A power cut right after loses nothing: every step was synced. */
  kv_env_mem_power_cut(env);
  reopen_and_compare(env, &v);
  kv_version_free(&v);
  kv_env_free(env);
}

static void test_large_version_not_rewritten_every_edit(void **state) {
  kv_env *env = new_env();
  kv_version v;
  kv_manifest *m = populate(env, &v);
  /* 200 live files: the snapshot alone is larger than the limit. */
  for (uint64_t i = 0; i < 200; i++) {
    kv_edit a = add_file_edit(1, 100 + i, 1000 + i * 10, 1000 + i * 10 + 9, 0);
    assert_int_equal(kv_manifest_apply(m, &v, &a, 1), KV_OK);
  }
  kv_manifest_set_rewrite_limit(m, 1024);
  kv_env_mem_stats s0, s1;
  kv_edit k = {.kind = KV_EDIT_SET_COUNTERS, .last_seq = 5000};
  kv_env_mem_get_stats(env, &s0);
  assert_int_equal(kv_manifest_apply(m, &v, &k, 1), KV_OK);
  kv_env_mem_get_stats(env, &s1);
  assert_int_equal(s1.renames, s0.renames + 1); /* past the limit: rewritten once */
  uint64_t snap = kv_manifest_size(m);
  assert_true(snap > 1024);
  kv_env_mem_get_stats(env, &s0);
  for (int i = 0; i < 20; i++) {
    k.last_seq++;
    assert_int_equal(kv_manifest_apply(m, &v, &k, 1), KV_OK);
  }
  kv_env_mem_get_stats(env, &s1);
  assert_int_equal(s1.renames, s0.renames); /* 20 small edits: no rewrite of the big snapshot */
  assert_true(kv_manifest_size(m) > snap);
  assert_int_equal(kv_manifest_close(m), KV_OK);
  reopen_and_compare(env, &v);
  kv_version_free(&v);
  kv_env_free(env);
}

static void test_rewrite_faults(void **state) {
  kv_env *env = new_env();
  kv_version v;
  kv_manifest *m = populate(env, &v);
  /* The rename fails: the old log stays in use, the edit is kept, nothing is lost. */
  kv_manifest_set_rewrite_limit(m, kv_manifest_size(m) + 10);
  kv_env_mem_fail(env, KV_FAULT_RENAME, 1, "MANIFEST", KV_FAULT_EIO, 0);
  kv_edit a = add_file_edit(1, 20, 200, 300, 300);
  assert_int_equal(kv_manifest_apply(m, &v, &a, 1), KV_OK);
  assert_int_equal(env->exists(env, "/db/MANIFEST.tmp"), 0);
  kv_edit b = add_file_edit(1, 21, 301, 400, 400); /* this one rewrites for real */
  assert_int_equal(kv_manifest_apply(m, &v, &b, 1), KV_OK);
  assert_int_equal(kv_manifest_close(m), KV_OK);
  reopen_and_compare(env, &v);
  kv_version_free(&v);

  /* The directory sync after the rename fails, then the power goes: the old MANIFEST
  ** comes back, holding the edit; the half-made rewrite leaves no trace. */
  assert_int_equal(kv_manifest_open(env, "/db", false, &m, &v), KV_OK);
  kv_manifest_set_rewrite_limit(m, 1);
  kv_env_mem_fail(env, KV_FAULT_SYNC_DIR, 1, NULL, KV_FAULT_EIO, 0);
  kv_edit c = add_file_edit(2, 22, 401, 500, 500);
  assert_int_equal(kv_manifest_apply(m, &v, &c, 1), KV_OK);
  kv_edit d = add_file_edit(2, 23, 501, 600, 600);
  assert_int_not_equal(kv_manifest_apply(m, &v, &d, 1), KV_OK); /* unusable now */
  kv_manifest_close(m);
  kv_env_mem_power_cut(env);
  assert_int_equal(env->exists(env, "/db/MANIFEST.tmp"), 0);
  reopen_and_compare(env, &v);
  kv_version_free(&v);

  /* A MANIFEST.tmp left by a crash before the rename is removed at open. */
  kv_file *f;
  assert_int_equal(env->open(env, "/db/MANIFEST.tmp", KV_OPEN_WRITE, &f), KV_OK);
  assert_int_equal(env->append(f, "junk", 4), KV_OK);
  env->close(f);
  assert_int_equal(kv_manifest_open(env, "/db", false, &m, &v), KV_OK);
  assert_int_equal(env->exists(env, "/db/MANIFEST.tmp"), 0);
  assert_int_equal(fam_of(&v, 2)->n_files, 2);
  kv_manifest_close(m);
  kv_version_free(&v);
  kv_env_free(env);
}

static void test_torn_tail_dropped(void **state) {
  kv_env *env = new_env();
  kv_version v, want;
  kv_manifest *m = populate(env, &v);
  kv_manifest_close(m);
  assert_int_equal(kv_manifest_open(env, "/db", false, &m, &want), KV_OK);
  uint64_t good = kv_manifest_size(m);
  kv_edit a = add_file_edit(3, 30, 200, 300, 300);
  assert_int_equal(kv_manifest_apply(m, &want, &a, 1), KV_OK);
  uint64_t full = kv_manifest_size(m);
  kv_manifest_close(m);
  kv_version_free(&want);
  uint8_t *orig;
  size_t olen;
  assert_int_equal(kv_env_read_all(env, "/db/MANIFEST", &orig, &olen), KV_OK);
  assert_int_equal(olen, full);
  for (uint64_t cut = good + 1; cut < full; cut++) {
    assert_int_equal(kv_env_mem_shrink(env, "/db/MANIFEST", cut), KV_OK);
    reopen_and_compare(env, &v); /* the last edit is gone, the rest is there */
    /* Truncated back durably, so a new record follows the last good one. */
    assert_int_equal(kv_env_mem_file_size(env, "/db/MANIFEST"), (int64_t)good);
    /* Restore the full file for the next cut. */
    kv_file *f;
    assert_int_equal(env->open(env, "/db/MANIFEST", KV_OPEN_WRITE, &f), KV_OK);
    assert_int_equal(env->append(f, orig + good, full - good), KV_OK);
    assert_int_equal(env->sync(f), KV_OK);
    env->close(f);
  }
  /* The final record complete but its checksum failing is damage, not a torn write: the
  ** store may have acted on that synced edit already. */
  assert_int_equal(kv_env_mem_set_byte(env, "/db/MANIFEST", full - 1, (uint8_t)(orig[full - 1] ^ 1)), KV_OK);
  assert_int_equal(kv_manifest_open(env, "/db", false, &m, &want), KV_ERR_CORRUPT);
  char at[64];
  snprintf(at, sizeof at, "offset %llu", (unsigned long long)good);
  assert_non_null(strstr(kv_errmsg(), at));
  assert_int_equal(kv_env_mem_set_byte(env, "/db/MANIFEST", full - 1, orig[full - 1]), KV_OK);
  /* A zero-filled tail (space allocated, data never written) is dropped. */
  kv_file *zf;
  uint8_t zeros[40] = {0};
  assert_int_equal(env->open(env, "/db/MANIFEST", KV_OPEN_WRITE, &zf), KV_OK);
  assert_int_equal(env->append(zf, zeros, sizeof zeros), KV_OK);
  env->close(zf);
  assert_int_equal(kv_manifest_open(env, "/db", false, &m, &want), KV_OK);
  assert_int_equal(kv_manifest_size(m), full);
  assert_int_equal(fam_of(&want, 3)->n_files, 1);
  kv_version_free(&want);
  kv_manifest_close(m);
  /* Back to the state without the last edit, to append after a dropped tail. */
  assert_int_equal(kv_env_mem_shrink(env, "/db/MANIFEST", full - 1), KV_OK);
  assert_int_equal(kv_manifest_open(env, "/db", false, &m, &want), KV_OK);
  assert_versions_equal(&want, &v);
  /* New edits after a dropped tail are read back. */
  kv_edit b = add_file_edit(3, 31, 200, 300, 300);
  assert_int_equal(kv_manifest_apply(m, &want, &b, 1), KV_OK);
  kv_manifest_close(m);
  reopen_and_compare(env, &want);
  assert_int_equal(fam_of(&want, 3)->files[0].number, 31);
  kv_version_free(&want);
  free(orig);
  kv_version_free(&v);
  kv_env_free(env);
}

static void test_damage_is_corruption(void **state) {
  kv_env *env = new_env();
  kv_version v;
  kv_manifest *m = populate(env, &v);
  /* Record offsets: 0 header, then snapshot, then the populate edits, then ours. */
  uint64_t mid = kv_manifest_size(m);
  kv_edit a = add_file_edit(3, 40, 200, 300, 300);
  assert_int_equal(kv_manifest_apply(m, &v, &a, 1), KV_OK);
  uint64_t last = kv_manifest_size(m);
  kv_edit b = add_file_edit(3, 41, 301, 400, 400);
  assert_int_equal(kv_manifest_apply(m, &v, &b, 1), KV_OK);
  kv_manifest_close(m);
  uint8_t *orig;
  size_t olen;
  assert_int_equal(kv_env_read_all(env, "/db/MANIFEST", &orig, &olen), KV_OK);
  /* Every byte of a middle record, and bytes of the header record. */
  uint64_t spots[64];
  int ns = 0;
  for (uint64_t p = mid; p < last; p++) spots[ns++] = p;
  spots[ns++] = 0;
  spots[ns++] = 18; /* inside the magic */
  for (int i = 0; i < ns; i++) {
    uint64_t pos = spots[i];
    uint64_t rec = pos < mid ? 0 : mid;
    assert_int_equal(kv_env_mem_set_byte(env, "/db/MANIFEST", pos, (uint8_t)(orig[pos] ^ 0x40)), KV_OK);
    kv_version w;
    assert_int_equal(kv_manifest_open(env, "/db", false, &m, &w), KV_ERR_CORRUPT);
    assert_null(m);
    assert_int_equal(w.n_tables, 0);
    char want[64];
    snprintf(want, sizeof want, "offset %llu", (unsigned long long)rec);
    if (!strstr(kv_errmsg(), want) || !strstr(kv_errmsg(), "/db/MANIFEST"))
      fail_msg("byte %llu: message \"%s\" lacks \"%s\"", (unsigned long long)pos, kv_errmsg(), want);
    assert_int_equal(kv_env_mem_set_byte(env, "/db/MANIFEST", pos, orig[pos]), KV_OK);
    assert_int_equal(kv_env_mem_file_size(env, "/db/MANIFEST"), (int64_t)olen); /* untouched */
  }
  reopen_and_compare(env, &v);
  free(orig);
  kv_version_free(&v);
  kv_env_free(env);
}

static void test_power_cut_between_append_and_sync(void **state) {
  kv_env *env = new_env();
  kv_version v, after;
  kv_manifest *m = populate(env, &v);
  kv_edit a = add_file_edit(1, 50, 200, 300, 300);
  assert_int_equal(kv_manifest_apply(m, &v, &a, 1), KV_OK); /* synced */
  /* The next record is appended but its sync fails, then the power goes. */
  kv_env_mem_fail(env, KV_FAULT_SYNC, 1, "MANIFEST", KV_FAULT_EIO, 0);
  kv_edit b = add_file_edit(1, 51, 301, 400, 400);
  assert_int_equal(kv_manifest_apply(m, &v, &b, 1), KV_ERR_IO);
  assert_int_equal(fam_of(&v, 1)->n_files, 2); /* *v unchanged */
  assert_int_not_equal(kv_manifest_apply(m, &v, &b, 1), KV_OK); /* refuses after that */
  kv_manifest_close(m);
  /* The failed edit was taken back out: even a reopen without a power cut (the process
  ** died, the OS kept its pages) does not see it. */
  reopen_and_compare(env, &v);
  kv_env_mem_power_cut(env);
  assert_int_equal(kv_manifest_open(env, "/db", false, &m, &after), KV_OK);
  assert_versions_equal(&after, &v);
  assert_int_equal(fam_of(&after, 1)->files[1].number, 50);
  kv_manifest_close(m);
  kv_version_free(&after);

  /* A failed append (ENOSPC, or a torn one) is cut back: the manifest goes on working. */
  int kinds[2] = {KV_FAULT_ENOSPC, KV_FAULT_TORN};
  for (int k = 0; k < 2; k++) {
    assert_int_equal(kv_manifest_open(env, "/db", false, &m, &after), KV_OK);
    kv_env_mem_fail(env, KV_FAULT_APPEND, 1, "MANIFEST", kinds[k], 7);
    kv_edit c = add_file_edit(2, 60 + (uint64_t)k, 501, 600, 600);
    assert_int_not_equal(kv_manifest_apply(m, &after, &c, 1), KV_OK);
    assert_int_equal(kv_manifest_apply(m, &after, &c, 1), KV_OK);
    kv_manifest_close(m);
    reopen_and_compare(env, &after);
    kv_version_free(&after);
  }
  kv_version_free(&v);
  kv_env_free(env);
}

static void test_bad_magic_and_version(void **state) {
  kv_env *env = new_env();
  kv_version v;
  kv_manifest *m = populate(env, &v);
  kv_manifest_close(m);
  kv_version_free(&v);
  /* Not a manifest at all. */
  kv_file *f;
  assert_int_equal(env->open(env, "/db/MANIFEST", KV_OPEN_WRITE | KV_OPEN_TRUNCATE, &f), KV_OK);
  assert_int_equal(env->append(f, "hello, world, this is text", 26), KV_OK);
  env->close(f);
  assert_int_equal(kv_manifest_open(env, "/db", false, &m, &v), KV_ERR_CORRUPT);
  assert_non_null(strstr(kv_errmsg(), "offset 0"));
  /* Empty: the header record is missing. */
  assert_int_equal(kv_env_mem_shrink(env, "/db/MANIFEST", 0), KV_OK);
  assert_int_equal(kv_manifest_open(env, "/db", false, &m, &v), KV_ERR_CORRUPT);
  assert_non_null(strstr(kv_errmsg(), "header"));
  kv_env_free(env);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_round_trip_across_reopen),
    cmocka_unit_test(test_bad_group_changes_nothing),
    cmocka_unit_test(test_open_missing),
    cmocka_unit_test(test_rewrite_as_snapshot),
    cmocka_unit_test(test_large_version_not_rewritten_every_edit),
    cmocka_unit_test(test_rewrite_faults),
    cmocka_unit_test(test_torn_tail_dropped),
    cmocka_unit_test(test_damage_is_corruption),
    cmocka_unit_test(test_power_cut_between_append_and_sync),
    cmocka_unit_test(test_bad_magic_and_version),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
