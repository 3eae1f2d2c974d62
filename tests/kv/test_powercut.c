/*
** tests/kv/test_powercut.c: crashes and power cuts through the in-memory env (issue 2,
** "Tests that must exist"). Every test drives a store with batches that each write the
** same batch id into several cells across rows, tables and families, keeps the state the
** acknowledged batches imply, stops the "process" at some point (an armed fault, or
** kv_env_mem_set_crashed), closes its handles, drops every unsynced byte with
** kv_env_mem_power_cut, reopens and reads everything back. The store must equal the state
** of the acknowledged batches, or that state plus the one batch that was in flight: a
** batch is never half visible, an acknowledged one (sync mode full) never lost.
**
** Tests: the seam itself loses unsynced bytes; sync modes normal/off lose the commits
** after the last sync while full loses none; ENOSPC in a commit (the commit fails, the
** store refuses writes, everything earlier survives); a sweep of faults at the Nth store
** file, MANIFEST, rename, directory-sync, open and remove operation of a flush and of a
** compaction; and a long randomized run of faults and cuts at random points.
** It uses only kv/kv.h, kv/env/env.h and kv/env/env_mem.h. It does not check file contents
** (test_corruption.c damages files on purpose).
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

#define PC_FAMS 3  /* p.x, p.y, q.z */
#define PC_ROWS 24
#define PC_QUALS 2
#define N_CELLS (PC_FAMS * PC_ROWS * PC_QUALS)
#define TS_BASE 1000

typedef struct pc {
  uint64_t seed, rng;        /* seed (as printed by tu_seed) and PRNG state */
  const char *name;          /* test name for messages */
  kv_env *env;               /* in-memory env */
  kv_db *db;                 /* the store, or NULL while closed */
  kv_options opts;           /* open options */
  uint32_t fid[PC_FAMS];     /* family ids */
  uint32_t acked[N_CELLS];   /* value id per cell after the acknowledged batches; 0 = none */
  uint32_t pending[N_CELLS]; /* the same plus the batch in flight */
  bool in_flight;            /* a commit failed: its batch may or may not have survived */
  uint32_t next_batch;       /* id of the next batch (from 1) */
  uint64_t last_seq;         /* last acknowledged sequence number */
  uint64_t iter;             /* iteration, for messages */
  uint64_t n_acked, n_cuts, n_inflight_kept, n_inflight_lost, n_faults_fired;
} pc;

static const char *FAM_TABLE[PC_FAMS] = {"p", "p", "q"};
static const char *FAM_NAME[PC_FAMS] = {"x", "y", "z"};

#define PC_FAIL(t, ...)                                                                  \
  do {                                                                                   \
    fprintf(stderr, "[%s] seed %llu iter %llu: ", (t)->name, (unsigned long long)(t)->seed, \
            (unsigned long long)(t)->iter);                                              \
    fprintf(stderr, __VA_ARGS__);                                                        \
    fprintf(stderr, "\n");                                                               \
    fail();                                                                              \
  } while (0)

#define PC_OK(t, call)                                                                   \
  do {                                                                                   \
    int rc_ = (call);                                                                    \
    if (rc_ != KV_OK) PC_FAIL(t, "%s -> %s (%s)", #call, kv_status_name(rc_), kv_errmsg()); \
  } while (0)

/* ---- Values: 4-byte id, then filler derived from the id ---------------------------- */
static uint32_t filler_len(uint32_t id) { return id % 17 == 0 ? 1500 : (id * 13u) % 60; }
static uint8_t filler_byte(uint32_t id, uint32_t i) { return (uint8_t)(id * 7u + i * 11u + 3); }
static size_t make_value(uint32_t id, uint8_t *out) {
  out[0] = (uint8_t)id; out[1] = (uint8_t)(id >> 8);
  out[2] = (uint8_t)(id >> 16); out[3] = (uint8_t)(id >> 24);
  uint32_t n = filler_len(id);
  for (uint32_t i = 0; i < n; i++) out[4 + i] = filler_byte(id, i);
  return 4 + n;
}

static int cell_index(int f, int r, int q) { return (f * PC_ROWS + r) * PC_QUALS + q; }

/* ---- Store handling ---------------------------------------------------------------- */
/* Set up a fresh env; seed 0 = take one from tu_seed. */
static void pc_init(pc *t, const char *name, int sync_mode, size_t flush_size, uint64_t seed) {
  memset(t, 0, sizeof *t);
  t->name = name;
  t->seed = seed ? seed : tu_seed(name);
  t->rng = t->seed;
  t->env = kv_env_mem_new(1700000000000ll);
  assert_non_null(t->env);
  kv_options_init(&t->opts);
  t->opts.env = t->env;
  t->opts.create_if_missing = true;
  t->opts.sync_mode = sync_mode;
  t->opts.memstore_flush_size = flush_size;
  t->opts.compaction_trigger = 2;
  t->next_batch = 1;
}

static void lookup(pc *t) {
  for (int f = 0; f < PC_FAMS; f++) PC_OK(t, kv_family_id(t->db, FAM_TABLE[f], FAM_NAME[f], &t->fid[f]));
}

static void pc_create(pc *t) {
  PC_OK(t, kv_open("/db", &t->opts, &t->db));
  kv_family_options fo[2];
  memset(fo, 0, sizeof fo);
  fo[0].name = "x";
  fo[0].block_size = 512;
  fo[1].name = "y";
  fo[1].compression = KV_COMPRESSION_NONE;
  fo[1].block_size = 1024;
  PC_OK(t, kv_create_table(t->db, "p", fo, 2));
  fo[0].name = "z";
  PC_OK(t, kv_create_table(t->db, "q", fo, 1));
  lookup(t);
  t->last_seq = kv_last_sequence(t->db);
}

/* Build a random batch (and the state it leads to in t->pending). */
static void make_batch(pc *t, kv_batch *b, uint32_t id) {
  static uint8_t vbuf[1600];
  kv_batch_clear(b);
  memcpy(t->pending, t->acked, sizeof t->acked);
  int n = 2 + (int)tu_below(&t->rng, 7);
  for (int i = 0; i < n; i++) {
    int f = (int)tu_below(&t->rng, PC_FAMS), r = (int)tu_below(&t->rng, PC_ROWS);
    int q = (int)tu_below(&t->rng, PC_QUALS);
    char row[8], qual[4];
    snprintf(row, sizeof row, "r%02d", r);
    snprintf(qual, sizeof qual, "c%d", q);
    uint32_t vid = id * 16 + (uint32_t)i + 1;
    if (tu_below(&t->rng, 10) == 0) {
      PC_OK(t, kv_batch_delete(b, t->fid[f], KV_DELETE_COLUMN, row, 3, qual, 2, TS_BASE + id));
      t->pending[cell_index(f, r, q)] = 0;
    } else {
      size_t len = make_value(vid, vbuf);
      PC_OK(t, kv_batch_put(b, t->fid[f], row, 3, qual, 2, TS_BASE + id, vbuf, len));
      t->pending[cell_index(f, r, q)] = vid;
    }
  }
}

/* Commit one new batch. Returns the commit's status; on success the batch is acknowledged,
** on failure it is in flight. */
static int commit_one(pc *t, kv_batch *b) {
  uint32_t id = t->next_batch++;
  make_batch(t, b, id);
  uint64_t seq = 0;
  int rc = kv_commit(t->db, b, &seq);
  if (rc == KV_OK) {
    if (seq <= t->last_seq) PC_FAIL(t, "commit seq %llu not after %llu", (unsigned long long)seq,
                                    (unsigned long long)t->last_seq);
    t->last_seq = seq;
    memcpy(t->acked, t->pending, sizeof t->acked);
    t->n_acked++;
  } else {
    t->in_flight = true;
  }
  return rc;
}

/* Read every cell of the store into got[]. Returns KV_OK or the scan's error; a value or
** key that no batch wrote fails the test. */
static int read_all(pc *t, uint32_t *got) {
  memset(got, 0, sizeof(uint32_t) * N_CELLS);
  for (int tb = 0; tb < 2; tb++) {
    uint32_t fids[2] = {t->fid[tb * 2], tb == 0 ? t->fid[1] : 0};
    kv_scan_options so;
    memset(&so, 0, sizeof so);
    so.family_ids = fids;
    so.n_families = tb == 0 ? 2 : 1;
    kv_scan *s = NULL;
    int rc = kv_scan_open(t->db, &so, &s);
    if (rc != KV_OK) return rc;
    kv_row row;
    while ((rc = kv_scan_next(s, &row)) == KV_OK) {
      int r = -1;
      if (row.key_len == 3 && row.key[0] == 'r') r = (row.key[1] - '0') * 10 + (row.key[2] - '0');
      if (r < 0 || r >= PC_ROWS) {
        kv_scan_close(s);
        PC_FAIL(t, "unknown row key of length %u", row.key_len);
      }
      for (uint32_t i = 0; i < row.n_cells; i++) {
        const kv_cell_view *c = &row.cells[i];
        int f = -1;
        for (int k = 0; k < PC_FAMS; k++)
          if (t->fid[k] == c->family_id) f = k;
        int q = c->qual_len == 2 && c->qual[0] == 'c' ? c->qual[1] - '0' : -1;
        bool ok = f >= 0 && q >= 0 && q < PC_QUALS && c->value_len >= 4;
        uint32_t vid = 0;
        if (ok) {
          vid = (uint32_t)c->value[0] | (uint32_t)c->value[1] << 8 |
                (uint32_t)c->value[2] << 16 | (uint32_t)c->value[3] << 24;
          ok = c->value_len == 4 + filler_len(vid) && c->ts == TS_BASE + vid / 16;
          for (uint32_t k = 0; ok && k < filler_len(vid); k++)
            ok = c->value[4 + k] == filler_byte(vid, k);
        }
        if (!ok || got[cell_index(f, r, q)] != 0) {
          kv_scan_close(s);
          PC_FAIL(t, "row r%02d: a cell no batch wrote (family %u, value length %u, ts %lld)", r,
                  c->family_id, c->value_len, (long long)c->ts);
        }
        got[cell_index(f, r, q)] = vid;
      }
    }
    kv_scan_close(s);
    if (rc != KV_ERR_NOTFOUND) return rc;
  }
  return KV_OK;
}

static void describe_diff(pc *t, const uint32_t *got, const uint32_t *want, const char *what) {
  for (int i = 0; i < N_CELLS; i++)
    if (got[i] != want[i]) {
      fprintf(stderr, "  %s: cell f%d r%02d c%d has value %u (batch %u), expected %u (batch %u)\n",
              what, i / (PC_ROWS * PC_QUALS), (i / PC_QUALS) % PC_ROWS, i % PC_QUALS, got[i],
              got[i] / 16, want[i], want[i] / 16);
      return;
    }
}

/* Check the store against the acknowledged state, or that plus the in-flight batch. */
static void verify(pc *t, const char *when) {
  static uint32_t got[N_CELLS];
  int rc = read_all(t, got);
  if (rc != KV_OK) PC_FAIL(t, "%s: reading back -> %s (%s)", when, kv_status_name(rc), kv_errmsg());
  if (memcmp(got, t->acked, sizeof got) == 0) {
    if (t->in_flight) t->n_inflight_lost++;
  } else if (t->in_flight && memcmp(got, t->pending, sizeof got) == 0) {
    memcpy(t->acked, t->pending, sizeof got);
    t->n_inflight_kept++;
  } else {
    describe_diff(t, got, t->acked, "vs acknowledged");
    if (t->in_flight) describe_diff(t, got, t->pending, "vs acknowledged + in flight");
    PC_FAIL(t, "%s: store is neither the acknowledged state%s (last acked batch %u)", when,
            t->in_flight ? " nor that plus the batch in flight" : "", t->next_batch - 1);
  }
  t->in_flight = false;
}

/* The process dies: every env operation fails, the handles are closed, unsynced data is
** dropped, and the store is opened again. */
static void crash_and_reopen(pc *t, bool power_cut) {
  kv_env_mem_clear_faults(t->env);
  if (power_cut) kv_env_mem_set_crashed(t->env, true);
  (void)kv_close(t->db); /* errors expected: the env is "crashed" */
  t->db = NULL;
  if (power_cut) kv_env_mem_power_cut(t->env);
  int rc = kv_open("/db", &t->opts, &t->db);
  if (rc != KV_OK) PC_FAIL(t, "reopen after a %s -> %s (%s)", power_cut ? "power cut" : "failure",
                           kv_status_name(rc), kv_errmsg());
  lookup(t);
  uint64_t seq = kv_last_sequence(t->db);
  if (seq < t->last_seq) PC_FAIL(t, "after reopen last sequence %llu < acknowledged %llu",
                                 (unsigned long long)seq, (unsigned long long)t->last_seq);
  t->last_seq = seq;
  t->n_cuts++;
  verify(t, power_cut ? "after power cut" : "after reopen");
}

static void pc_finish(pc *t) {
  if (t->db) PC_OK(t, kv_close(t->db));
  t->db = NULL;
  kv_env_free(t->env);
  t->env = NULL;
}

/* ---- The seam itself --------------------------------------------------------------- */
/* An unsynced append is gone after a power cut; a synced one stays; an unsynced new file
** disappears. */
static void test_seam_drops_unsynced(void **state) {
  (void)state;
  kv_env *env = kv_env_mem_new(0);
  assert_non_null(env);
  assert_int_equal(env->mkdir(env, "/d"), KV_OK);
  kv_file *f = NULL;
  assert_int_equal(env->open(env, "/d/a", KV_OPEN_WRITE, &f), KV_OK);
  assert_int_equal(env->sync_dir(env, "/d"), KV_OK);
  assert_int_equal(env->append(f, "durable", 7), KV_OK);
  assert_int_equal(env->sync(f), KV_OK);
  assert_int_equal(env->append(f, "-lost", 5), KV_OK);
  kv_file *g = NULL;
  assert_int_equal(env->open(env, "/d/b", KV_OPEN_WRITE, &g), KV_OK);
  assert_int_equal(env->append(g, "x", 1), KV_OK);
  assert_int_equal(env->sync(g), KV_OK); /* data synced, directory entry not */
  assert_int_equal(kv_env_mem_file_size(env, "/d/a"), 12);
  env->close(f);
  env->close(g);
  kv_env_mem_power_cut(env);
  assert_int_equal(kv_env_mem_file_size(env, "/d/a"), 7);
  assert_int_equal(env->exists(env, "/d/b"), 0);
  uint8_t *buf = NULL;
  size_t len = 0;
  assert_int_equal(kv_env_read_all(env, "/d/a", &buf, &len), KV_OK);
  assert_int_equal(len, 7);
  assert_memory_equal(buf, "durable", 7);
  free(buf);
  kv_env_free(env);
}

/* ---- Sync modes ---------------------------------------------------------------------- */
/* Batch 1 is made durable by a flush; batches 2..4 are committed after it; then a power
** cut. Full mode keeps all four; normal and off lose 2..4 (the seam really drops them). */
static void run_sync_mode(int mode) {
  static const char *names[3] = {"sync_full", "sync_normal", "sync_off"};
  pc t;
  pc_init(&t, names[mode], mode, 0, 0);
  pc_create(&t);
  kv_batch *b = kv_batch_new();
  assert_non_null(b);
  PC_OK(&t, commit_one(&t, b));
  PC_OK(&t, kv_flush(t.db, NULL));
  uint32_t after_flush[N_CELLS];
  memcpy(after_flush, t.acked, sizeof after_flush);
  kv_env_mem_stats before, after;
  kv_env_mem_get_stats(t.env, &before);
  for (int i = 0; i < 3; i++) PC_OK(&t, commit_one(&t, b));
  kv_env_mem_get_stats(t.env, &after);
  if (mode == KV_SYNC_FULL) {
    assert_true(after.syncs - before.syncs >= 3);
  } else {
    /* The commits must not have synced: that is the point of the mode. */
    assert_int_equal(after.syncs - before.syncs, 0);
    memcpy(t.acked, after_flush, sizeof after_flush); /* what a power cut may keep */
  }
  kv_env_mem_set_crashed(t.env, true);
  (void)kv_close(t.db);
  t.db = NULL;
  kv_env_mem_power_cut(t.env);
  t.opts.sync_mode = KV_SYNC_FULL;
  PC_OK(&t, kv_open("/db", &t.opts, &t.db));
  lookup(&t);
  verify(&t, "after power cut");
  /* Sequence numbers of lost commits may be handed out again; never of kept ones. */
  if (kv_last_sequence(t.db) < (mode == KV_SYNC_FULL ? t.last_seq : 1))
    PC_FAIL(&t, "last sequence went back to %llu", (unsigned long long)kv_last_sequence(t.db));
  t.last_seq = kv_last_sequence(t.db);
  /* A clean close syncs in every mode: nothing is lost then. */
  t.opts.sync_mode = mode;
  PC_OK(&t, kv_close(t.db));
  PC_OK(&t, kv_open("/db", &t.opts, &t.db));
  lookup(&t);
  for (int i = 0; i < 3; i++) PC_OK(&t, commit_one(&t, b));
  PC_OK(&t, kv_close(t.db));
  t.db = NULL;
  kv_env_mem_power_cut(t.env);
  PC_OK(&t, kv_open("/db", &t.opts, &t.db));
  lookup(&t);
  verify(&t, "after clean close and power cut");
  kv_batch_free(b);
  pc_finish(&t);
}

static void test_sync_full_loses_nothing(void **state) { (void)state; run_sync_mode(KV_SYNC_FULL); }
static void test_sync_normal_loses_unsynced(void **state) { (void)state; run_sync_mode(KV_SYNC_NORMAL); }
static void test_sync_off_loses_unsynced(void **state) { (void)state; run_sync_mode(KV_SYNC_OFF); }

/* ---- ENOSPC in a commit ------------------------------------------------------------ */
static void run_enospc(bool power_cut, int kind) {
  pc t;
  pc_init(&t, kind == KV_FAULT_TORN ? "torn_wal" : power_cut ? "enospc_power_cut" : "enospc_reopen",
          KV_SYNC_FULL, 0, 0);
  pc_create(&t);
  kv_batch *b = kv_batch_new();
  assert_non_null(b);
  for (int i = 0; i < 20; i++) {
    PC_OK(&t, commit_one(&t, b));
    if (i == 9) PC_OK(&t, kv_flush(t.db, NULL));
  }
  kv_env_mem_fail(t.env, KV_FAULT_APPEND, 1, "wal-", kind, 10);
  int rc = commit_one(&t, b);
  if (rc != (kind == KV_FAULT_ENOSPC ? KV_ERR_NOSPC : KV_ERR_IO))
    PC_FAIL(&t, "commit on a full disk -> %s, want %s", kv_status_name(rc),
            kind == KV_FAULT_ENOSPC ? "KV_ERR_NOSPC" : "KV_ERR_IO");
  /* The batch is not applied ... */
  t.in_flight = false;
  verify(&t, "right after the failed commit");
  t.in_flight = true;
  /* ... and the store refuses writes until reopened, even with space back. */
  uint64_t acked_before = t.n_acked;
  rc = commit_one(&t, b);
  if (rc == KV_OK) PC_FAIL(&t, "a commit after a failed WAL write succeeded");
  assert_int_equal(t.n_acked, acked_before);
  memcpy(t.pending, t.acked, sizeof t.acked); /* neither failed batch may show */
  crash_and_reopen(&t, power_cut);
  PC_OK(&t, commit_one(&t, b));
  verify(&t, "after a commit following recovery");
  kv_batch_free(b);
  pc_finish(&t);
}

static void test_enospc_commit_reopen(void **state) { (void)state; run_enospc(false, KV_FAULT_ENOSPC); }
static void test_enospc_commit_power_cut(void **state) { (void)state; run_enospc(true, KV_FAULT_ENOSPC); }
static void test_torn_wal_write_power_cut(void **state) { (void)state; run_enospc(true, KV_FAULT_TORN); }

/* ---- A failed MANIFEST sync ------------------------------------------------------------ */
/* The MANIFEST record of a flush is appended but its sync fails: the flush reports the
** error; whether or not the record survives, the store must open again with every
** acknowledged batch (the new store file must not be deleted while a MANIFEST record that
** may be durable names it). Regression for build/KV_BUGS.txt "BUG 1". */
static void run_manifest_sync_failure(bool power_cut, bool compaction) {
  pc t;
  pc_init(&t, power_cut ? "manifest_sync_cut" : "manifest_sync_reopen", KV_SYNC_FULL, 0, 0);
  t.opts.compaction_trigger = 1000;
  pc_create(&t);
  kv_batch *b = kv_batch_new();
  assert_non_null(b);
  for (int i = 0; i < 10; i++) {
    PC_OK(&t, commit_one(&t, b));
    if (compaction && i % 3 == 2) PC_OK(&t, kv_flush(t.db, NULL));
  }
  kv_env_mem_fail(t.env, KV_FAULT_SYNC, 1, "MANIFEST", KV_FAULT_EIO, 0);
  int rc = compaction ? kv_compact(t.db, NULL, true) : kv_flush(t.db, NULL);
  if (rc != KV_ERR_IO) PC_FAIL(&t, "%s with a failing MANIFEST sync -> %s, want KV_ERR_IO",
                               compaction ? "kv_compact" : "kv_flush", kv_status_name(rc));
  crash_and_reopen(&t, power_cut);
  PC_OK(&t, commit_one(&t, b));
  PC_OK(&t, kv_flush(t.db, NULL));
  crash_and_reopen(&t, true);
  kv_batch_free(b);
  pc_finish(&t);
}

static void test_manifest_sync_failure_flush_reopen(void **state) { (void)state; run_manifest_sync_failure(false, false); }
static void test_manifest_sync_failure_flush_cut(void **state) { (void)state; run_manifest_sync_failure(true, false); }
static void test_manifest_sync_failure_compact_reopen(void **state) { (void)state; run_manifest_sync_failure(false, true); }

/* ---- What recovery shows stays ------------------------------------------------------ */
/* A commit whose WAL sync fails leaves its record written but not synced. The process goes
** on and closes without a power cut; reopening replays that record, so readers see the
** batch. A later power cut must not take it away again (while later, synced batches
** stay): recovery has to make what it replays durable. Regression for build/KV_BUGS.txt
** "BUG 2". */
static void test_replayed_batch_survives_power_cut(void **state) {
  (void)state;
  pc t;
  pc_init(&t, "replayed_batch_durable", KV_SYNC_FULL, 0, 0);
  pc_create(&t);
  kv_batch *b = kv_batch_new();
  assert_non_null(b);
  for (int i = 0; i < 5; i++) PC_OK(&t, commit_one(&t, b));
  kv_env_mem_fail(t.env, KV_FAULT_SYNC, 1, "wal-", KV_FAULT_EIO, 0);
  assert_int_equal(commit_one(&t, b), KV_ERR_IO);
  crash_and_reopen(&t, false); /* process exit, no power cut: the record is replayed */
  bool replayed = t.n_inflight_kept == 1;
  fprintf(stderr, "[%s] the failed batch was %s by the reopen\n", t.name, replayed ? "replayed" : "dropped");
  PC_OK(&t, commit_one(&t, b));
  crash_and_reopen(&t, true);
  if (replayed) assert_int_equal(t.n_inflight_kept, 1);
  kv_batch_free(b);
  pc_finish(&t);
}

/* ---- A sweep of faults inside one flush or compaction ------------------------------- */
typedef struct fault_spec {
  int op;             /* enum kv_fault_op */
  const char *substr; /* path filter */
  int kind;           /* enum kv_fault_kind */
} fault_spec;

static const fault_spec SWEEP[] = {
    {KV_FAULT_APPEND, ".sf", KV_FAULT_EIO},   {KV_FAULT_APPEND, ".sf", KV_FAULT_TORN},
    {KV_FAULT_SYNC, ".sf", KV_FAULT_EIO},     {KV_FAULT_APPEND, "MANIFEST", KV_FAULT_EIO},
    {KV_FAULT_APPEND, "MANIFEST", KV_FAULT_TORN}, {KV_FAULT_SYNC, "MANIFEST", KV_FAULT_EIO},
    {KV_FAULT_RENAME, NULL, KV_FAULT_EIO},    {KV_FAULT_SYNC_DIR, NULL, KV_FAULT_EIO},
    {KV_FAULT_OPEN, NULL, KV_FAULT_EIO},      {KV_FAULT_REMOVE, NULL, KV_FAULT_EIO},
    {KV_FAULT_APPEND, ".sf", KV_FAULT_ENOSPC},
};
static const uint64_t SWEEP_NTH[] = {1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 17, 20, 24, 30};

/* A store with three store files per family and a non-empty memstore. */
static void sweep_setup(pc *t, kv_batch *b) {
  pc_create(t);
  for (int i = 0; i < 40; i++) {
    PC_OK(t, commit_one(t, b));
    if (i % 10 == 9 && i < 30) PC_OK(t, kv_flush(t->db, NULL));
  }
}

static void run_sweep(const char *name, int action) {
  pc t;
  uint64_t seed = tu_seed(name);
  uint64_t fired = 0, runs = 0;
  kv_batch *b = kv_batch_new();
  assert_non_null(b);
  for (size_t s = 0; s < sizeof SWEEP / sizeof SWEEP[0]; s++)
    for (size_t k = 0; k < sizeof SWEEP_NTH / sizeof SWEEP_NTH[0]; k++) {
      for (int cut = 0; cut < 2; cut++) {
        pc_init(&t, name, KV_SYNC_FULL, 0, seed);
        t.opts.compaction_trigger = 1000; /* only the action under test compacts */
        t.rng = seed ^ (s * 131 + k * 7 + (uint64_t)cut);
        t.iter = s * 100 + k * 2 + (uint64_t)cut;
        sweep_setup(&t, b);
        const fault_spec *fs = &SWEEP[s];
        kv_env_mem_fail(t.env, fs->op, SWEEP_NTH[k], fs->substr, fs->kind, 7 + k * 13);
        int rc = action == 0 ? kv_flush(t.db, NULL) : action == 1 ? kv_compact(t.db, NULL, false)
                                                                  : kv_compact(t.db, NULL, true);
        if (rc != KV_OK) {
          fired++;
          if (rc != KV_ERR_IO && rc != KV_ERR_NOSPC)
            PC_FAIL(&t, "fault %zu nth %llu gave %s (%s), want an I/O error", s,
                    (unsigned long long)SWEEP_NTH[k], kv_status_name(rc), kv_errmsg());
          /* Reads in the same process still see exactly the acknowledged data. */
          static uint32_t got[N_CELLS];
          if (read_all(&t, got) == KV_OK && memcmp(got, t.acked, sizeof got) != 0) {
            describe_diff(&t, got, t.acked, "after the failed action");
            PC_FAIL(&t, "fault %zu nth %llu: a failed %s changed what reads see", s,
                    (unsigned long long)SWEEP_NTH[k], name);
          }
        }
        runs++;
        crash_and_reopen(&t, cut == 0);
        /* The store keeps working: more writes, the action again, another cut. */
        for (int i = 0; i < 5; i++) PC_OK(&t, commit_one(&t, b));
        PC_OK(&t, kv_compact(t.db, NULL, true));
        verify(&t, "after a major compaction following recovery");
        crash_and_reopen(&t, true);
        pc_finish(&t);
      }
    }
  fprintf(stderr, "[%s] %llu runs, %llu with the fault firing inside the action\n", name,
          (unsigned long long)runs, (unsigned long long)fired);
  assert_true(fired > 0);
  kv_batch_free(b);
}

static void test_sweep_flush(void **state) { (void)state; run_sweep("sweep_flush", 0); }
static void test_sweep_minor_compaction(void **state) { (void)state; run_sweep("sweep_minor", 1); }
static void test_sweep_major_compaction(void **state) { (void)state; run_sweep("sweep_major", 2); }

/* ---- Random faults and cuts --------------------------------------------------------- */
static const fault_spec RANDOM_FAULTS[] = {
    {KV_FAULT_APPEND, "wal-", KV_FAULT_EIO},  {KV_FAULT_APPEND, "wal-", KV_FAULT_TORN},
    {KV_FAULT_SYNC, "wal-", KV_FAULT_EIO},    {KV_FAULT_APPEND, "wal-", KV_FAULT_ENOSPC},
    {KV_FAULT_APPEND, ".sf", KV_FAULT_TORN},  {KV_FAULT_SYNC, ".sf", KV_FAULT_EIO},
    {KV_FAULT_APPEND, "MANIFEST", KV_FAULT_TORN}, {KV_FAULT_SYNC, "MANIFEST", KV_FAULT_EIO},
    {KV_FAULT_RENAME, NULL, KV_FAULT_EIO},    {KV_FAULT_SYNC_DIR, NULL, KV_FAULT_EIO},
    {KV_FAULT_OPEN, NULL, KV_FAULT_EIO},      {KV_FAULT_REMOVE, NULL, KV_FAULT_EIO},
};

static void run_random(const char *name, size_t flush_size) {
  pc t;
  pc_init(&t, name, KV_SYNC_FULL, flush_size, 0);
  pc_create(&t);
  kv_batch *b = kv_batch_new();
  assert_non_null(b);
  uint64_t iters = tu_scaled(2500, 100);
  for (t.iter = 0; t.iter < iters; t.iter++) {
    int scenario = (int)tu_below(&t.rng, 1 + sizeof RANDOM_FAULTS / sizeof RANDOM_FAULTS[0]);
    const fault_spec *fs = scenario > 0 ? &RANDOM_FAULTS[scenario - 1] : NULL;
    if (fs) kv_env_mem_fail(t.env, fs->op, 1 + tu_below(&t.rng, 6), fs->substr, fs->kind,
                            1 + tu_below(&t.rng, 60));
    int n_ops = 1 + (int)tu_below(&t.rng, 30);
    bool failed = false;
    for (int i = 0; i < n_ops && !failed; i++) {
      uint64_t k = tu_below(&t.rng, 100);
      int rc;
      if (k < 80) {
        rc = commit_one(&t, b);
        if (rc != KV_OK && fs && fs->op <= KV_FAULT_SYNC && fs->substr &&
            strcmp(fs->substr, "wal-") == 0) {
          /* The store must refuse writes now; the first failed batch stays in flight. */
          static uint32_t keep[N_CELLS];
          memcpy(keep, t.pending, sizeof keep);
          if (commit_one(&t, b) == KV_OK) PC_FAIL(&t, "a commit after a failed WAL write succeeded");
          memcpy(t.pending, keep, sizeof keep);
        }
      } else if (k < 90) {
        rc = kv_flush(t.db, tu_below(&t.rng, 2) ? NULL : "p");
      } else {
        rc = kv_compact(t.db, tu_below(&t.rng, 2) ? NULL : "q", tu_below(&t.rng, 2));
      }
      if (rc != KV_OK) {
        failed = true;
        t.n_faults_fired++;
      }
    }
    if (failed && !t.in_flight) verify(&t, "after a failed flush or compaction");
    crash_and_reopen(&t, tu_below(&t.rng, 4) != 0);
  }
  fprintf(stderr,
          "[%s] %llu cuts, %llu batches acknowledged, %llu faults surfaced, in-flight batches "
          "kept %llu / lost %llu\n",
          name, (unsigned long long)t.n_cuts, (unsigned long long)t.n_acked,
          (unsigned long long)t.n_faults_fired, (unsigned long long)t.n_inflight_kept,
          (unsigned long long)t.n_inflight_lost);
  kv_batch_free(b);
  pc_finish(&t);
}

static void test_random_cuts(void **state) { (void)state; run_random("random_cuts", 0); }
/* Small memstores: flushes and compactions also run in the background mid-sequence. */
static void test_random_cuts_background(void **state) { (void)state; run_random("random_cuts_bg", 2048); }

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_seam_drops_unsynced),
      cmocka_unit_test(test_sync_full_loses_nothing),
      cmocka_unit_test(test_sync_normal_loses_unsynced),
      cmocka_unit_test(test_sync_off_loses_unsynced),
      cmocka_unit_test(test_enospc_commit_reopen),
      cmocka_unit_test(test_enospc_commit_power_cut),
      cmocka_unit_test(test_torn_wal_write_power_cut),
      cmocka_unit_test(test_manifest_sync_failure_flush_reopen),
      cmocka_unit_test(test_manifest_sync_failure_flush_cut),
      cmocka_unit_test(test_manifest_sync_failure_compact_reopen),
      cmocka_unit_test(test_replayed_batch_survives_power_cut),
      cmocka_unit_test(test_sweep_flush),
      cmocka_unit_test(test_sweep_minor_compaction),
      cmocka_unit_test(test_sweep_major_compaction),
      cmocka_unit_test(test_random_cuts),
      cmocka_unit_test(test_random_cuts_background),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
