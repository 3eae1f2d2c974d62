/*
** tests/kv/test_model.c: a model-based randomized test of kv/ (issue 2, "Tests that must
** exist"). A long seeded sequence of operations runs against a store in the in-memory env
** and against a deliberately simple model; every read is compared with the model.
**
** The model is written from the semantics in kv/kv.h and DESIGN.md, not from kv/'s code:
** it shares no comparator, merge or encoding code with kv/ (no kv/util/cell.h, no kv/util/coding.h).
** It keeps, per (family, row, qualifier), a plain array of the cells written to it, and per
** (family, row) an array of family tombstones, and decides visibility by brute force:
**   - a put is masked by a tombstone with a higher sequence number that covers it
**     (DELETE_VERSION: same ts; DELETE_COLUMN, DELETE_FAMILY: ts <= the tombstone's);
**     so a tombstone never masks a later put, even at an equal timestamp;
**   - a put is expired when its family has a TTL and ts + TTL <= now;
**   - one version per timestamp (the put with the highest sequence number), newest first;
**     only the newest VERSIONS of them exist for a reader; then the scan's time range;
**     then the scan's max_versions.
** Two things the semantics leave open are kept out of the way rather than guessed:
**   - TTL at the exact boundary: commits happen at clock = 1 (mod 4), every other
**     operation at clock = 3 (mod 4), explicit timestamps are even, TTLs are whole
**     seconds, so "now - TTL" never equals a cell's timestamp when anything is evaluated;
**   - a DELETE_VERSION that would uncover a version hidden by VERSIONS (HBase's known
**     "results depend on when compaction ran" case) is written as a DELETE_COLUMN at the
**     same timestamp instead; so hidden versions never come back and flush, minor and major
**     compaction must leave every read unchanged.
** Operations: batches (puts and each kind of delete, explicit and KV_TS_NOW timestamps,
** spanning rows, both tables and all four families), flush, minor and major compaction,
** close + reopen, clock moves (TTL), snapshots pinned and read later, and reads: kv_get,
** forward, reverse and multi-range scans with qualifier projection, time ranges,
** max_versions, limits and a filter callback. On a mismatch it prints the seed, the
** operation index and the difference. Half the reopens follow a simulated power cut
** (sync mode full: nothing acknowledged may be lost). Not covered here: faults (test_powercut.c),
** damaged files (test_corruption.c), concurrency.
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

/* ---- The key space ------------------------------------------------------------------ */
#define N_FAM 4   /* t0.a t0.b t1.a t1.b */
#define N_ROWS 84 /* every string of 1..3 bytes over ALPHA */
#define N_QUALS 5
#define MAX_KEY 4

static const uint8_t ALPHA[4] = {0x00, 0x01, 0x61, 0xFF};
static const uint8_t BOUND_ALPHA[6] = {0x00, 0x01, 0x50, 0x61, 0x62, 0xFF};
/* Qualifiers, in ascending byte order ("" < "a" < "a\0" < "b" < "\xff"). */
static const struct {
  const char *b; /* bytes */
  uint32_t len;  /* length */
} QUALS[N_QUALS] = {{"", 0}, {"a", 1}, {"a\0", 2}, {"b", 1}, {"\xff", 1}};

static const char *TABLE_NAME[2] = {"t0", "t1"};
static const char *FAM_NAME[2] = {"a", "b"};
static const int FAM_VERSIONS[N_FAM] = {1, 3, 3, 1};
static const int64_t FAM_TTL_SEC[N_FAM] = {0, 5, 0, 3};
static const int FAM_COMPRESSION[N_FAM] = {KV_COMPRESSION_LZ4, KV_COMPRESSION_LZ4,
                                           KV_COMPRESSION_NONE, KV_COMPRESSION_LZ4};

typedef struct mrow {
  uint8_t b[MAX_KEY]; /* key bytes */
  uint8_t len;        /* key length */
} mrow;
static mrow ROWS[N_ROWS]; /* in ascending key order */

static int bytes_cmp(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen) {
  for (size_t i = 0; i < alen && i < blen; i++)
    if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
  return alen == blen ? 0 : (alen < blen ? -1 : 1);
}

static void make_rows(void) {
  int n = 0;
  for (int len = 1; len <= 3; len++) {
    int combos = 1;
    for (int i = 0; i < len; i++) combos *= 4;
    for (int c = 0; c < combos; c++) {
      int x = c;
      ROWS[n].len = (uint8_t)len;
      for (int i = len - 1; i >= 0; i--) {
        ROWS[n].b[i] = ALPHA[x % 4];
        x /= 4;
      }
      n++;
    }
  }
  /* insertion sort by bytes */
  for (int i = 1; i < N_ROWS; i++) {
    mrow k = ROWS[i];
    int j = i - 1;
    while (j >= 0 && bytes_cmp(ROWS[j].b, ROWS[j].len, k.b, k.len) > 0) {
      ROWS[j + 1] = ROWS[j];
      j--;
    }
    ROWS[j + 1] = k;
  }
}

/* Values are derived from a 64-bit id, so the model stores only the id. */
static uint32_t value_len(uint64_t id) {
  return id % 11 == 0 ? (uint32_t)(200 + id % 700) : (uint32_t)(id % 23);
}
static void value_fill(uint64_t id, uint8_t *out) {
  uint32_t n = value_len(id);
  for (uint32_t i = 0; i < n; i++) out[i] = (uint8_t)(id * 31u + i * 7u + (id >> 8));
}

/* ---- The model ---------------------------------------------------------------------- */
typedef struct mcell {
  uint64_t seq; /* model sequence number */
  int64_t ts;   /* timestamp (KV_TS_NOW already resolved) */
  uint8_t type; /* enum kv_cell_type */
  uint64_t val; /* value id (puts) */
} mcell;

typedef struct mvec {
  mcell *v;        /* cells in write order */
  uint32_t n, cap; /* used, allocated */
} mvec;

typedef struct mcol {
  mvec cells;  /* puts, DELETE_VERSION and DELETE_COLUMN of the column */
  bool hidden; /* kv may still hold versions hidden by VERSIONS */
} mcol;

static mcol COL[N_FAM][N_ROWS][N_QUALS];
static mvec FDEL[N_FAM][N_ROWS]; /* DELETE_FAMILY tombstones of (family, row) */

static void mvec_push(mvec *v, mcell c) {
  if (v->n == v->cap) {
    v->cap = v->cap ? v->cap * 2 : 8;
    v->v = realloc(v->v, v->cap * sizeof(mcell));
    assert_non_null(v->v);
  }
  v->v[v->n++] = c;
}

static void model_reset(void) {
  for (int f = 0; f < N_FAM; f++)
    for (int r = 0; r < N_ROWS; r++) {
      for (int q = 0; q < N_QUALS; q++) {
        free(COL[f][r][q].cells.v);
        memset(&COL[f][r][q], 0, sizeof(mcol));
      }
      free(FDEL[f][r].v);
      memset(&FDEL[f][r], 0, sizeof(mvec));
    }
}

static bool expired(int f, int64_t ts, int64_t now) {
  return FAM_TTL_SEC[f] > 0 && ts + FAM_TTL_SEC[f] * 1000 <= now;
}

static bool masked(int f, int r, int q, const mcell *p, uint64_t snap) {
  const mvec *cv = &COL[f][r][q].cells;
  for (uint32_t i = 0; i < cv->n; i++) {
    const mcell *t = &cv->v[i];
    if (t->type == KV_PUT || t->seq > snap || t->seq <= p->seq) continue;
    if (t->type == KV_DELETE_VERSION ? t->ts == p->ts : p->ts <= t->ts) return true;
  }
  const mvec *fv = &FDEL[f][r];
  for (uint32_t i = 0; i < fv->n; i++) {
    const mcell *t = &fv->v[i];
    if (t->seq <= snap && t->seq > p->seq && p->ts <= t->ts) return true;
  }
  return false;
}

/* The versions of a column a reader may see at model sequence `snap` and time `now`,
** before any time range: one per timestamp, newest first, at most VERSIONS. Returns how
** many; *n_all gets how many distinct live timestamps exist before the VERSIONS cut. */
static int col_versions(int f, int r, int q, uint64_t snap, int64_t now, int64_t *ts_out,
                        uint64_t *val_out, uint64_t *seq_out, int *n_all) {
  const mvec *cv = &COL[f][r][q].cells;
  int n = 0;
  enum { CAP = 64 };
  int64_t ts[CAP];
  uint64_t val[CAP], seq[CAP];
  for (uint32_t i = 0; i < cv->n; i++) {
    const mcell *p = &cv->v[i];
    if (p->type != KV_PUT || p->seq > snap) continue;
    if (expired(f, p->ts, now) || masked(f, r, q, p, snap)) continue;
    int j;
    for (j = 0; j < n; j++)
      if (ts[j] == p->ts) break;
    if (j < n) {
      if (p->seq > seq[j]) { val[j] = p->val; seq[j] = p->seq; }
      continue;
    }
    assert_true(n < CAP);
    /* insert keeping ts descending */
    j = n;
    while (j > 0 && ts[j - 1] < p->ts) {
      ts[j] = ts[j - 1]; val[j] = val[j - 1]; seq[j] = seq[j - 1];
      j--;
    }
    ts[j] = p->ts; val[j] = p->val; seq[j] = p->seq;
    n++;
  }
  if (n_all) *n_all = n;
  int keep = n < FAM_VERSIONS[f] ? n : FAM_VERSIONS[f];
  for (int i = 0; i < keep; i++) {
    if (ts_out) ts_out[i] = ts[i];
    if (val_out) val_out[i] = val[i];
    if (seq_out) seq_out[i] = seq[i];
  }
  return keep;
}

/* Drop what can never be seen again (only when no snapshot is pinned): masked, expired,
** duplicate-timestamp and beyond-VERSIONS puts, then every tombstone (all later writes
** have higher sequence numbers, so no tombstone can mask anything any more). */
static void model_prune(uint64_t snap, int64_t now) {
  for (int f = 0; f < N_FAM; f++)
    for (int r = 0; r < N_ROWS; r++) {
      for (int q = 0; q < N_QUALS; q++) {
        mcol *c = &COL[f][r][q];
        if (c->cells.n == 0) continue;
        int64_t ts[64];
        uint64_t val[64], seq[64];
        int n_all = 0;
        int k = col_versions(f, r, q, snap, now, ts, val, seq, &n_all);
        if (n_all > k) c->hidden = true;
        c->cells.n = 0;
        for (int i = k - 1; i >= 0; i--) {
          mcell m = {seq[i], ts[i], KV_PUT, val[i]};
          mvec_push(&c->cells, m);
        }
      }
      FDEL[f][r].n = 0;
    }
}

/* ---- Test state ---------------------------------------------------------------------- */
typedef struct msnap {
  uint64_t kv_seq;     /* what kv_snapshot_acquire returned */
  uint64_t model_seq;  /* model sequence at that point */
  uint64_t release_at; /* operation index at which it is released */
} msnap;

typedef struct mt {
  uint64_t seed, rng;          /* seed and PRNG state */
  uint64_t op, n_ops;          /* current operation index, total */
  kv_env *env;                 /* in-memory env */
  kv_db *db;                   /* the store */
  kv_options opts;             /* its options */
  uint32_t fid[N_FAM];         /* family ids */
  int64_t clock;               /* the env's clock */
  uint64_t mseq;               /* last model sequence number */
  uint64_t kv_seq;             /* last kv sequence number seen */
  uint64_t next_val;           /* next value id */
  msnap snaps[3];              /* pinned snapshots */
  int n_snaps;                 /* how many */
  int hot;                     /* row index writes concentrate on, or -1 */
  uint64_t n_reads, n_rows, n_cells, n_commits, n_flush, n_compact, n_reopen, n_snapreads,
      n_cuts;
} mt;

#define CHECK_KV(t, call)                                                                  \
  do {                                                                                     \
    int rc_ = (call);                                                                      \
    if (rc_ != KV_OK) {                                                                    \
      fprintf(stderr, "seed %llu op %llu: %s -> %s (%s)\n", (unsigned long long)(t)->seed, \
              (unsigned long long)(t)->op, #call, kv_status_name(rc_), kv_errmsg());       \
      fail();                                                                              \
    }                                                                                      \
  } while (0)

static uint64_t rnd(mt *t, uint64_t n) { return tu_below(&t->rng, n); }

/* Move the clock forward to the next time = phase (mod 4): 1 for commits, 3 otherwise. */
static void clock_phase(mt *t, int phase, int64_t extra) {
  int64_t c = t->clock + extra;
  while ((c & 3) != phase) c++;
  t->clock = c;
  kv_env_mem_set_time(t->env, c);
}

static void open_store(mt *t) {
  CHECK_KV(t, kv_open("/db", &t->opts, &t->db));
}

static void lookup_families(mt *t, bool check_same) {
  for (int f = 0; f < N_FAM; f++) {
    uint32_t id = 0;
    CHECK_KV(t, kv_family_id(t->db, TABLE_NAME[f / 2], FAM_NAME[f % 2], &id));
    if (check_same) assert_int_equal(id, t->fid[f]);
    t->fid[f] = id;
  }
}

static void setup_store(mt *t, size_t flush_size, int trigger, uint32_t block_size) {
  t->env = kv_env_mem_new(0);
  assert_non_null(t->env);
  t->clock = 1700000000001ll;
  kv_env_mem_set_time(t->env, t->clock);
  kv_options_init(&t->opts);
  t->opts.env = t->env;
  t->opts.create_if_missing = true;
  t->opts.memstore_flush_size = flush_size;
  t->opts.compaction_trigger = trigger;
  t->opts.block_cache_size = 64 << 10;
  open_store(t);
  for (int tb = 0; tb < 2; tb++) {
    kv_family_options fo[2];
    memset(fo, 0, sizeof fo);
    for (int k = 0; k < 2; k++) {
      int f = tb * 2 + k;
      fo[k].name = FAM_NAME[k];
      fo[k].max_versions = FAM_VERSIONS[f];
      fo[k].ttl_sec = FAM_TTL_SEC[f];
      fo[k].compression = FAM_COMPRESSION[f];
      fo[k].block_size = block_size;
    }
    CHECK_KV(t, kv_create_table(t->db, TABLE_NAME[tb], fo, 2));
  }
  lookup_families(t, false);
}

/* ---- Writes -------------------------------------------------------------------------- */
static int64_t gen_ts(mt *t) {
  uint64_t k = rnd(t, 100);
  int64_t ts;
  if (k < 45) return KV_TS_NOW;
  if (k < 80) ts = (t->clock & ~(int64_t)7) - 2 * (int64_t)rnd(t, 8);
  else if (k < 93) ts = t->clock - 2 * (int64_t)rnd(t, 4000);
  else ts = t->clock + 2 * (int64_t)(1 + rnd(t, 500));
  return ts & ~(int64_t)1;
}

static void do_commit(mt *t, kv_batch *b) {
  clock_phase(t, 1, rnd(t, 2) ? 4 * (int64_t)rnd(t, 4) : 0);
  kv_batch_clear(b);
  int n = 1 + (int)rnd(t, 6);
  uint8_t vbuf[1024];
  for (int i = 0; i < n; i++) {
    int f = (int)rnd(t, N_FAM), r = (int)rnd(t, N_ROWS), q = (int)rnd(t, N_QUALS);
    if (t->hot >= 0 && rnd(t, 5)) {
      r = t->hot;
      q = (int)rnd(t, 2);
    }
    uint64_t k = rnd(t, 100);
    int type = k < 62 ? KV_PUT : k < 77 ? KV_DELETE_VERSION : k < 90 ? KV_DELETE_COLUMN
                                                                     : KV_DELETE_FAMILY;
    int64_t ts = gen_ts(t);
    int64_t real_ts = ts == KV_TS_NOW ? t->clock : ts;
    if (type == KV_DELETE_VERSION && rnd(t, 3) == 0) {
      /* aim at an existing version */
      int64_t vts[64];
      int nv = col_versions(f, r, q, t->mseq, t->clock, vts, NULL, NULL, NULL);
      if (nv > 0) { real_ts = ts = vts[rnd(t, (uint64_t)nv)]; }
    }
    if (type == KV_DELETE_VERSION) {
      int64_t vts[64];
      int n_all = 0;
      int nv = col_versions(f, r, q, t->mseq, t->clock, vts, NULL, NULL, &n_all);
      if (n_all > nv) COL[f][r][q].hidden = true;
      bool hits = false;
      for (int j = 0; j < nv; j++) hits |= vts[j] == real_ts;
      if (hits && COL[f][r][q].hidden) type = KV_DELETE_COLUMN; /* see the header */
    }
    mcell c = {++t->mseq, real_ts, (uint8_t)type, 0};
    if (getenv("ROWAN_MODEL_TRACE")) {
      fprintf(stderr, "  op %llu: fam %d row ", (unsigned long long)t->op, f);
      for (int x = 0; x < ROWS[r].len; x++) fprintf(stderr, "%02x", ROWS[r].b[x]);
      fprintf(stderr, " qual #%d type %d ts %lld (%s) mseq %llu\n", q, type, (long long)real_ts,
              ts == KV_TS_NOW ? "now" : "given", (unsigned long long)c.seq);
    }
    if (type == KV_PUT) {
      c.val = t->next_val++;
      value_fill(c.val, vbuf);
      CHECK_KV(t, kv_batch_put(b, t->fid[f], ROWS[r].b, ROWS[r].len, QUALS[q].b, QUALS[q].len,
                               ts, vbuf, value_len(c.val)));
      mvec_push(&COL[f][r][q].cells, c);
    } else if (type == KV_DELETE_FAMILY) {
      CHECK_KV(t, kv_batch_delete(b, t->fid[f], type, ROWS[r].b, ROWS[r].len, NULL, 0, ts));
      mvec_push(&FDEL[f][r], c);
    } else {
      CHECK_KV(t, kv_batch_delete(b, t->fid[f], type, ROWS[r].b, ROWS[r].len, QUALS[q].b,
                                  QUALS[q].len, ts));
      mvec_push(&COL[f][r][q].cells, c);
    }
  }
  assert_int_equal(kv_batch_count(b), (size_t)n);
  uint64_t seq = 0;
  CHECK_KV(t, kv_commit(t->db, b, &seq));
  if (seq < t->kv_seq + (uint64_t)n) {
    fprintf(stderr, "seed %llu op %llu: commit of %d ops returned seq %llu after %llu\n",
            (unsigned long long)t->seed, (unsigned long long)t->op, n,
            (unsigned long long)seq, (unsigned long long)t->kv_seq);
    fail();
  }
  t->kv_seq = seq;
  assert_int_equal(kv_last_sequence(t->db), seq);
  t->n_commits++;
}

/* ---- Reads --------------------------------------------------------------------------- */
typedef struct mrange {
  uint8_t s[MAX_KEY], e[MAX_KEY]; /* bounds */
  uint8_t slen, elen;             /* bound lengths */
  bool has_s, has_e;              /* bounded below / above */
  bool s_incl, e_incl;            /* inclusive bounds */
} mrange;

typedef struct rspec {
  bool is_get;               /* kv_get instead of a scan */
  uint8_t key[MAX_KEY];      /* kv_get's key */
  uint8_t key_len;           /* its length */
  int nf;                    /* families read (1 or 2) */
  int fam[2];                /* model family indexes, in scan order */
  bool proj[2];              /* qualifier projection on that family */
  uint8_t qmask[2];          /* qualifiers projected (bit per QUALS index) */
  int64_t tmin, tmax;        /* time range, both 0 = all */
  int maxv;                  /* scan max_versions (0 = 1) */
  uint64_t limit;            /* 0 = none */
  bool reverse;              /* descending rows */
  bool filter;               /* run the filter callback */
  int snap;                  /* -1 = latest, else index into mt.snaps */
  int nr;                    /* key ranges (0 = all) */
  mrange r[4];               /* the ranges, ascending */
} rspec;

typedef struct ecell {
  int f;        /* model family */
  int q;        /* qualifier index */
  int64_t ts;   /* timestamp */
  uint64_t val; /* value id */
} ecell;
typedef struct erow {
  int r;           /* row index */
  uint32_t first;  /* first cell in the cell array */
  uint32_t n;      /* cells */
} erow;

#define MAX_ECELLS (N_ROWS * 2 * N_QUALS * 3)

/* The filter used by scans: keeps a row by its key, cell count and value bytes. */
static bool row_pred(const uint8_t *key, uint32_t key_len, uint32_t n_cells, uint64_t vbytes) {
  uint64_t h = n_cells * 3 + vbytes;
  for (uint32_t i = 0; i < key_len; i++) h += key[i];
  return h % 3 != 0;
}
static bool kv_filter_cb(void *ctx, const kv_row *row) {
  uint64_t *calls = ctx;
  (*calls)++;
  uint64_t vb = 0;
  for (uint32_t i = 0; i < row->n_cells; i++) vb += row->cells[i].value_len;
  return row_pred(row->key, row->key_len, row->n_cells, vb);
}

static void gen_key(mt *t, uint8_t *out, uint8_t *len) {
  *len = (uint8_t)(1 + rnd(t, MAX_KEY));
  for (int i = 0; i < *len; i++) out[i] = BOUND_ALPHA[rnd(t, 6)];
}

static void gen_ranges(mt *t, rspec *rs, int nr) {
  uint8_t keys[8][MAX_KEY], lens[8];
  int n = 0, tries = 0;
  while (n < 2 * nr && tries++ < 100) {
    uint8_t k[MAX_KEY], kl;
    if (rnd(t, 2)) {
      const mrow *row = &ROWS[rnd(t, N_ROWS)];
      memcpy(k, row->b, row->len);
      kl = row->len;
    } else {
      gen_key(t, k, &kl);
    }
    int i;
    for (i = 0; i < n; i++)
      if (bytes_cmp(keys[i], lens[i], k, kl) == 0) break;
    if (i < n) continue;
    /* insert sorted */
    i = n;
    while (i > 0 && bytes_cmp(keys[i - 1], lens[i - 1], k, kl) > 0) {
      memcpy(keys[i], keys[i - 1], MAX_KEY); lens[i] = lens[i - 1];
      i--;
    }
    memcpy(keys[i], k, MAX_KEY); lens[i] = kl;
    n++;
  }
  nr = n / 2;
  rs->nr = nr;
  for (int i = 0; i < nr; i++) {
    mrange *m = &rs->r[i];
    memset(m, 0, sizeof *m);
    memcpy(m->s, keys[2 * i], MAX_KEY); m->slen = lens[2 * i];
    memcpy(m->e, keys[2 * i + 1], MAX_KEY); m->elen = lens[2 * i + 1];
    m->has_s = !(i == 0 && rnd(t, 5) == 0);
    m->has_e = !(i == nr - 1 && rnd(t, 5) == 0);
    m->s_incl = rnd(t, 2);
    m->e_incl = rnd(t, 2);
  }
  if (nr == 1 && rnd(t, 6) == 0) { /* a point range */
    memcpy(rs->r[0].e, rs->r[0].s, MAX_KEY);
    rs->r[0].elen = rs->r[0].slen;
    rs->r[0].has_s = rs->r[0].has_e = rs->r[0].s_incl = rs->r[0].e_incl = true;
  }
}

static void gen_read(mt *t, rspec *rs) {
  memset(rs, 0, sizeof *rs);
  uint64_t k = rnd(t, 100);
  int table = (int)rnd(t, 2);
  rs->nf = rnd(t, 3) == 0 ? 2 : 1;
  rs->fam[0] = table * 2 + (int)rnd(t, 2);
  rs->fam[1] = table * 2 + (1 - rs->fam[0] % 2);
  for (int i = 0; i < rs->nf; i++)
    if (rnd(t, 5) == 0) {
      rs->proj[i] = true;
      rs->qmask[i] = (uint8_t)(1 + rnd(t, 31));
    }
  if (rnd(t, 5) == 0) {
    rs->tmin = t->clock - (int64_t)rnd(t, 6000);
    rs->tmax = rs->tmin + 1 + (int64_t)rnd(t, 4000);
  }
  static const int MV[6] = {0, 1, 2, 3, 5, 0};
  rs->maxv = MV[rnd(t, 6)];
  rs->filter = rnd(t, 5) == 0;
  rs->snap = t->n_snaps > 0 && rnd(t, 3) == 0 ? (int)rnd(t, (uint64_t)t->n_snaps) : -1;
  if (k < 25) {
    rs->is_get = true;
    if (rnd(t, 5)) {
      const mrow *row = &ROWS[rnd(t, N_ROWS)];
      memcpy(rs->key, row->b, row->len);
      rs->key_len = row->len;
    } else {
      gen_key(t, rs->key, &rs->key_len);
    }
    return;
  }
  rs->reverse = rnd(t, 5) < 2;
  rs->limit = rnd(t, 5) == 0 ? 1 + rnd(t, 6) : 0;
  if (k < 45) rs->nr = 0;
  else if (k < 75) gen_ranges(t, rs, 1);
  else gen_ranges(t, rs, 2 + (int)rnd(t, 3));
}

static bool in_range(const mrange *m, const mrow *row) {
  if (m->has_s) {
    int c = bytes_cmp(row->b, row->len, m->s, m->slen);
    if (c < 0 || (c == 0 && !m->s_incl)) return false;
  }
  if (m->has_e) {
    int c = bytes_cmp(row->b, row->len, m->e, m->elen);
    if (c > 0 || (c == 0 && !m->e_incl)) return false;
  }
  return true;
}

/* What the model says the read returns. */
static uint32_t model_read(mt *t, const rspec *rs, erow *rows, ecell *cells) {
  uint64_t snap = rs->snap >= 0 ? t->snaps[rs->snap].model_seq : t->mseq;
  uint32_t nrows = 0, ncells = 0;
  for (int i = 0; i < N_ROWS; i++) {
    int r = rs->reverse ? N_ROWS - 1 - i : i;
    if (rs->is_get) {
      if (bytes_cmp(ROWS[r].b, ROWS[r].len, rs->key, rs->key_len) != 0) continue;
    } else if (rs->nr > 0) {
      bool in = false;
      for (int j = 0; j < rs->nr && !in; j++) in = in_range(&rs->r[j], &ROWS[r]);
      if (!in) continue;
    }
    uint32_t first = ncells;
    uint64_t vbytes = 0;
    for (int fi = 0; fi < rs->nf; fi++) {
      int f = rs->fam[fi];
      for (int q = 0; q < N_QUALS; q++) {
        if (rs->proj[fi] && !(rs->qmask[fi] & (1u << q))) continue;
        int64_t ts[64];
        uint64_t val[64];
        int nv = col_versions(f, r, q, snap, t->clock, ts, val, NULL, NULL);
        int maxv = rs->maxv ? rs->maxv : 1, got = 0;
        for (int v = 0; v < nv && got < maxv; v++) {
          if ((rs->tmin || rs->tmax) && (ts[v] < rs->tmin || ts[v] >= rs->tmax)) continue;
          ecell e = {f, q, ts[v], val[v]};
          cells[ncells++] = e;
          vbytes += value_len(val[v]);
          got++;
        }
      }
    }
    uint32_t n = ncells - first;
    if (n == 0) continue;
    if (rs->filter && !row_pred(ROWS[r].b, ROWS[r].len, n, vbytes)) {
      ncells = first;
      continue;
    }
    erow e = {r, first, n};
    rows[nrows++] = e;
    if (rs->limit && nrows == rs->limit) break;
  }
  return nrows;
}

static void print_hex(const uint8_t *p, size_t n) {
  for (size_t i = 0; i < n; i++) fprintf(stderr, "%02x", p[i]);
  if (n == 0) fprintf(stderr, "''");
}

static void print_spec(const rspec *rs, const mt *t) {
  fprintf(stderr, "  read: %s fams", rs->is_get ? "get" : rs->reverse ? "reverse scan" : "scan");
  for (int i = 0; i < rs->nf; i++)
    fprintf(stderr, " %s.%s%s(q=%x)", TABLE_NAME[rs->fam[i] / 2], FAM_NAME[rs->fam[i] % 2],
            rs->proj[i] ? "/proj" : "", rs->proj[i] ? rs->qmask[i] : 0x1f);
  fprintf(stderr, " tr=[%lld,%lld) maxv=%d limit=%llu filter=%d snap=%d now=%lld\n",
          (long long)rs->tmin, (long long)rs->tmax, rs->maxv, (unsigned long long)rs->limit,
          rs->filter, rs->snap, (long long)t->clock);
  if (rs->is_get) { fprintf(stderr, "  key "); print_hex(rs->key, rs->key_len); fprintf(stderr, "\n"); }
  for (int i = 0; i < rs->nr; i++) {
    const mrange *m = &rs->r[i];
    fprintf(stderr, "  range %c", m->s_incl ? '[' : '(');
    if (m->has_s) print_hex(m->s, m->slen); else fprintf(stderr, "-inf");
    fprintf(stderr, ", ");
    if (m->has_e) print_hex(m->e, m->elen); else fprintf(stderr, "+inf");
    fprintf(stderr, "%c\n", m->e_incl ? ']' : ')');
  }
}

static void print_erow(const erow *e, const ecell *cells) {
  fprintf(stderr, "  expected row ");
  print_hex(ROWS[e->r].b, ROWS[e->r].len);
  fprintf(stderr, ":");
  for (uint32_t i = 0; i < e->n; i++) {
    const ecell *c = &cells[e->first + i];
    fprintf(stderr, " [f%d q%d ts%lld v%llu len%u]", c->f, c->q, (long long)c->ts,
            (unsigned long long)c->val, value_len(c->val));
  }
  fprintf(stderr, "\n");
}

static void print_krow(const mt *t, const kv_row *row) {
  fprintf(stderr, "  kv row ");
  print_hex(row->key, row->key_len);
  fprintf(stderr, ":");
  for (uint32_t i = 0; i < row->n_cells; i++) {
    const kv_cell_view *c = &row->cells[i];
    int f = -1;
    for (int k = 0; k < N_FAM; k++)
      if (t->fid[k] == c->family_id) f = k;
    fprintf(stderr, " [f%d q", f);
    print_hex(c->qual, c->qual_len);
    fprintf(stderr, " ts%lld len%u]", (long long)c->ts, c->value_len);
  }
  fprintf(stderr, "\n");
}

/* Compare one kv row with the expected one; returns a description of the first
** difference or NULL. */
static const char *row_diff(const mt *t, const kv_row *row, const erow *e, const ecell *cells) {
  static uint8_t vbuf[1024];
  if (bytes_cmp(row->key, row->key_len, ROWS[e->r].b, ROWS[e->r].len) != 0) return "row key";
  if (row->n_cells != e->n) return "cell count";
  for (uint32_t i = 0; i < e->n; i++) {
    const kv_cell_view *c = &row->cells[i];
    const ecell *x = &cells[e->first + i];
    if (c->family_id != t->fid[x->f]) return "family";
    if (bytes_cmp(c->qual, c->qual_len, (const uint8_t *)QUALS[x->q].b, QUALS[x->q].len))
      return "qualifier";
    if (c->ts != x->ts) return "timestamp";
    if (c->value_len != value_len(x->val)) return "value length";
    value_fill(x->val, vbuf);
    if (c->value_len && memcmp(c->value, vbuf, c->value_len) != 0) return "value bytes";
  }
  return NULL;
}

static void mismatch(const mt *t, const rspec *rs, const char *what, uint32_t idx,
                     const erow *rows, uint32_t nrows, const ecell *cells, const kv_row *got) {
  fprintf(stderr, "MISMATCH seed %llu op %llu (rerun with ROWAN_SEED=%llu): %s at row #%u\n",
          (unsigned long long)t->seed, (unsigned long long)t->op, (unsigned long long)t->seed,
          what, idx);
  print_spec(rs, t);
  if (got) print_krow(t, got);
  for (uint32_t i = idx > 2 ? idx - 2 : 0; i < nrows && i < idx + 3; i++) print_erow(&rows[i], cells);
  if (idx >= nrows) fprintf(stderr, "  (model has %u rows)\n", nrows);
  fail();
}

static void do_read(mt *t) {
  static erow rows[N_ROWS];
  static ecell cells[MAX_ECELLS];
  rspec rs;
  gen_read(t, &rs);
  clock_phase(t, 3, 0);
  uint32_t nrows = model_read(t, &rs, rows, cells);

  uint32_t fids[2];
  kv_qualifier_set qs[2];
  const uint8_t *qp[2][N_QUALS];
  uint32_t ql[2][N_QUALS];
  kv_range kr[4];
  kv_scan_options so;
  memset(&so, 0, sizeof so);
  uint32_t nqs = 0;
  for (int i = 0; i < rs.nf; i++) {
    fids[i] = t->fid[rs.fam[i]];
    if (!rs.proj[i]) continue;
    uint32_t n = 0;
    for (int q = 0; q < N_QUALS; q++)
      if (rs.qmask[i] & (1u << q)) {
        qp[i][n] = (const uint8_t *)QUALS[q].b;
        ql[i][n] = QUALS[q].len;
        n++;
      }
    qs[nqs].family_id = fids[i];
    qs[nqs].quals = qp[i];
    qs[nqs].qual_lens = ql[i];
    qs[nqs].n_quals = n;
    nqs++;
  }
  for (int i = 0; i < rs.nr; i++) {
    kr[i].start = rs.r[i].has_s ? rs.r[i].s : NULL;
    kr[i].start_len = rs.r[i].has_s ? rs.r[i].slen : 0;
    kr[i].start_inclusive = rs.r[i].s_incl;
    kr[i].end = rs.r[i].has_e ? rs.r[i].e : NULL;
    kr[i].end_len = rs.r[i].has_e ? rs.r[i].elen : 0;
    kr[i].end_inclusive = rs.r[i].e_incl;
  }
  uint64_t calls = 0;
  so.family_ids = fids;
  so.n_families = (uint32_t)rs.nf;
  so.qualifiers = nqs ? qs : NULL;
  so.n_qualifier_sets = nqs;
  so.ranges = rs.nr ? kr : NULL;
  so.n_ranges = (uint32_t)rs.nr;
  so.ts_min = rs.tmin;
  so.ts_max = rs.tmax;
  so.max_versions = rs.maxv;
  so.reverse = rs.reverse;
  so.limit = rs.limit;
  so.filter = rs.filter ? kv_filter_cb : NULL;
  so.filter_ctx = &calls;
  so.snapshot = rs.snap >= 0 ? t->snaps[rs.snap].kv_seq : 0;
  t->n_reads++;
  if (rs.snap >= 0) t->n_snapreads++;

  if (rs.is_get) {
    kv_scan *s = NULL;
    kv_row row;
    int rc = kv_get(t->db, &so, rs.key, rs.key_len, &s, &row);
    if (rc == KV_ERR_NOTFOUND) {
      kv_scan_close(s);
      if (nrows != 0) mismatch(t, &rs, "kv_get found nothing", 0, rows, nrows, cells, NULL);
      return;
    }
    if (rc != KV_OK) {
      fprintf(stderr, "seed %llu op %llu: kv_get -> %s (%s)\n", (unsigned long long)t->seed,
              (unsigned long long)t->op, kv_status_name(rc), kv_errmsg());
      kv_scan_close(s);
      fail();
    }
    if (nrows == 0) {
      mismatch(t, &rs, "kv_get returned a row the model does not have", 0, rows, 0, cells, &row);
    }
    const char *d = row_diff(t, &row, &rows[0], cells);
    if (d) mismatch(t, &rs, d, 0, rows, nrows, cells, &row);
    kv_scan_close(s);
    t->n_rows++;
    t->n_cells += rows[0].n;
    return;
  }

  kv_scan *s = NULL;
  CHECK_KV(t, kv_scan_open(t->db, &so, &s));
  uint32_t i = 0;
  kv_row row;
  int rc;
  while ((rc = kv_scan_next(s, &row)) == KV_OK) {
    if (i >= nrows) mismatch(t, &rs, "extra row from kv", i, rows, nrows, cells, &row);
    const char *d = row_diff(t, &row, &rows[i], cells);
    if (d) mismatch(t, &rs, d, i, rows, nrows, cells, &row);
    t->n_cells += rows[i].n;
    i++;
  }
  if (rc != KV_ERR_NOTFOUND) {
    fprintf(stderr, "seed %llu op %llu: kv_scan_next -> %s (%s)\n", (unsigned long long)t->seed,
            (unsigned long long)t->op, kv_status_name(rc), kv_errmsg());
    kv_scan_close(s);
    fail();
  }
  kv_scan_metrics met;
  kv_scan_get_metrics(s, &met);
  kv_scan_close(s);
  if (i < nrows) mismatch(t, &rs, "kv ended early", i, rows, nrows, cells, NULL);
  if (met.rows_returned != nrows) {
    fprintf(stderr, "seed %llu op %llu: metrics rows_returned %llu, rows handed out %u\n",
            (unsigned long long)t->seed, (unsigned long long)t->op,
            (unsigned long long)met.rows_returned, nrows);
    fail();
  }
  t->n_rows += nrows;
}

/* ---- Other operations ------------------------------------------------------------ */
static void release_snapshot(mt *t, int i) {
  kv_snapshot_release(t->db, t->snaps[i].kv_seq);
  t->snaps[i] = t->snaps[--t->n_snaps];
}

static void do_reopen(mt *t) {
  while (t->n_snaps > 0) release_snapshot(t, 0);
  clock_phase(t, 3, 0);
  if (rnd(t, 2)) {
    CHECK_KV(t, kv_close(t->db));
  } else {
    /* A power cut instead: in sync mode full every acknowledged batch must survive, so the
    ** model stays as it is. */
    kv_env_mem_set_crashed(t->env, true);
    (void)kv_close(t->db);
    kv_env_mem_power_cut(t->env);
    t->n_cuts++;
  }
  t->db = NULL;
  open_store(t);
  lookup_families(t, true);
  if (kv_last_sequence(t->db) != t->kv_seq) {
    fprintf(stderr, "seed %llu op %llu: after reopen last sequence %llu, before %llu\n",
            (unsigned long long)t->seed, (unsigned long long)t->op,
            (unsigned long long)kv_last_sequence(t->db), (unsigned long long)t->kv_seq);
    fail();
  }
  t->n_reopen++;
}

static void run_model(const char *name, size_t flush_size, int trigger, uint32_t block_size,
                      uint64_t base_ops, uint64_t salt) {
  static mt t;
  memset(&t, 0, sizeof t);
  make_rows();
  model_reset();
  t.seed = tu_seed(name);
  t.rng = t.seed ^ salt; /* each test its own sequence; ROWAN_SEED still reproduces it */
  t.n_ops = tu_scaled(base_ops, 2000);
  t.hot = -1;
  setup_store(&t, flush_size, trigger, block_size);
  t.kv_seq = kv_last_sequence(t.db);
  kv_batch *b = kv_batch_new();
  assert_non_null(b);
  for (t.op = 0; t.op < t.n_ops; t.op++) {
    for (int i = t.n_snaps - 1; i >= 0; i--)
      if (t.snaps[i].release_at <= t.op) release_snapshot(&t, i);
    if (t.n_snaps == 0 && t.op % 512 == 0) model_prune(t.mseq, t.clock);
    uint64_t k = rnd(&t, 1000);
    if (getenv("ROWAN_MODEL_TRACE"))
      fprintf(stderr, "op %llu: kind %llu clock %lld\n", (unsigned long long)t.op,
              (unsigned long long)k, (long long)t.clock);
    if (k < 440) {
      do_commit(&t, b);
    } else if (k < 930) {
      do_read(&t);
    } else if (k < 940) {
      clock_phase(&t, 3, 0);
      CHECK_KV(&t, kv_flush(t.db, rnd(&t, 3) == 0 ? NULL : TABLE_NAME[rnd(&t, 2)]));
      t.n_flush++;
    } else if (k < 950) {
      bool major = rnd(&t, 2);
      clock_phase(&t, 3, 0);
      CHECK_KV(&t, kv_compact(t.db, rnd(&t, 3) == 0 ? NULL : TABLE_NAME[rnd(&t, 2)], major));
      t.n_compact++;
    } else if (k < 953) {
      do_reopen(&t);
    } else if (k < 965) {
      if (t.n_snaps < 3) {
        msnap *sn = &t.snaps[t.n_snaps];
        CHECK_KV(&t, kv_snapshot_acquire(t.db, &sn->kv_seq));
        assert_int_equal(sn->kv_seq, t.kv_seq);
        sn->model_seq = t.mseq;
        sn->release_at = t.op + 20 + rnd(&t, 400);
        t.n_snaps++;
      }
    } else if (k < 985) {
      clock_phase(&t, 3, 4 * (int64_t)(50 + rnd(&t, 600)));
    } else {
      /* a burst of writes to one hot row, so versions pile up */
      t.hot = (int)rnd(&t, N_ROWS);
      for (int i = 0; i < 6; i++) do_commit(&t, b);
      t.hot = -1;
    }
  }
  while (t.n_snaps > 0) release_snapshot(&t, 0);
  kv_batch_free(b);
  uint64_t files = 0;
  for (int f = 0; f < N_FAM; f++) {
    kv_family_stats st;
    CHECK_KV(&t, kv_family_get_stats(t.db, t.fid[f], &st));
    files += st.store_files;
  }
  CHECK_KV(&t, kv_close(t.db));
  kv_env_free(t.env);
  fprintf(stderr,
          "[%s] %llu ops: %llu commits, %llu reads (%llu at snapshots), %llu rows and %llu "
          "cells compared, %llu flushes, %llu compactions, %llu reopens (%llu after a power cut); %llu "
          "store files at the end\n",
          name, (unsigned long long)t.n_ops, (unsigned long long)t.n_commits,
          (unsigned long long)t.n_reads, (unsigned long long)t.n_snapreads,
          (unsigned long long)t.n_rows, (unsigned long long)t.n_cells,
          (unsigned long long)t.n_flush, (unsigned long long)t.n_compact,
          (unsigned long long)t.n_reopen, (unsigned long long)t.n_cuts, (unsigned long long)files);
  model_reset();
}

/* Large memstores: store files only come from explicit flushes. */
static void test_model_explicit_flush(void **state) {
  (void)state;
  run_model("model_explicit_flush", 0, 0, 512, 100000, 0);
}

/* Tiny memstores, small blocks and an eager compaction trigger: background flushes and
** minor compactions happen in the middle of the sequence. */
static void test_model_background(void **state) {
  (void)state;
  run_model("model_background", 4096, 2, 256, 100000, 0x5bd1e995);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_model_explicit_flush),
      cmocka_unit_test(test_model_background),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
