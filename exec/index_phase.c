/*
** exec/index_phase.c: committing a write batch that holds index rows on a backend whose writes
** are atomic per row only (contract in exec/index.h, exec_index_commit_phased). Phoenix's
** consistent global index protocol (PHOENIX-5156): the batch is split into three writes.
**   1. pre: each index row the batch leaves present gets its ops in batch order with every
**      marker put carrying the UNVERIFIED byte; each index row the batch leaves deleted gets
**      one marker put with the UNVERIFIED byte (so that a reader does not trust it while
**      its data row changes);
**   2. the data: every op on a family that is no index's, in batch order (the commit point:
**      each data row is one atomic row write);
**   3. post: each present index row its ops again with an empty marker (VERIFIED: the whole
**      row, not only the marker, so that a reader's repair that deleted it while its data row
**      was not yet committed is undone, exec/index_repair.c), each deleted one its ops in batch
**      order (its tombstones).
** A cut anywhere leaves every index row that disagrees with its data row unverified, and a
** reader repairs those from the data row (exec/index_repair.c). An index row "present" is
** one whose last op on the "_k" family is a put; every index op of exec/ is a marker put,
** INCLUDE cell puts and column tombstones, or family tombstones (exec/index.c).
**
** Not here: building the batch (exec/write.c, exec/index_maint.c), the local store's path
** (one atomic write, exec/txn.c), the repair on read.
*/
#include <stdlib.h>
#include <string.h>

#include "exec/index_int.h"

typedef struct fam_map {
  uint32_t family;  /* an index table's family ("_k" or "0") */
  uint32_t key_fam; /* that index's "_k" family (its rows' identity) */
} fam_map;

typedef struct op_rec {
  kv_batch_op op;   /* the op (pointers into the batch) */
  uint32_t key_fam; /* index ops: the index's "_k" family; UINT32_MAX: a data op */
  uint32_t pos;     /* position in the batch */
} op_rec;

typedef struct walk {
  const fam_map *map; /* sorted by family */
  size_t n_map;
  op_rec *ops;        /* every op of the batch */
  size_t n, cap;
  size_t n_index;     /* index ops among them */
  bool nomem;
} walk;

static int cmp_fam(const void *a, const void *b) {
  uint32_t x = ((const fam_map *)a)->family, y = ((const fam_map *)b)->family;
  return x < y ? -1 : x > y;
}

static uint32_t index_key_family(const walk *w, uint32_t family) {
  size_t lo = 0, hi = w->n_map;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (w->map[mid].family == family) return w->map[mid].key_fam;
    if (w->map[mid].family < family) lo = mid + 1;
    else hi = mid;
  }
  return UINT32_MAX;
}

static int collect(void *ctx, const kv_batch_op *op) {
  walk *w = ctx;
  if (w->n == w->cap) {
    size_t ncap = w->cap ? w->cap * 2 : 64;
    op_rec *no = realloc(w->ops, ncap * sizeof *no);
    if (!no) {
      w->nomem = true;
      return KV_ERR_NOMEM;
    }
    w->ops = no;
    w->cap = ncap;
  }
  op_rec *r = &w->ops[w->n];
  r->op = *op;
  r->key_fam = index_key_family(w, op->family_id);
  r->pos = (uint32_t)w->n++;
  if (r->key_fam != UINT32_MAX) w->n_index++;
  return KV_OK;
}

/* Index ops grouped by index row (index, row key), batch order inside a group. */
static int cmp_row(const void *a, const void *b) {
  const op_rec *x = a, *y = b;
  if (x->key_fam != y->key_fam) return x->key_fam < y->key_fam ? -1 : 1;
  size_t n = x->op.row_len < y->op.row_len ? x->op.row_len : y->op.row_len;
  int c = memcmp(x->op.row, y->op.row, n);
  if (c) return c;
  if (x->op.row_len != y->op.row_len) return x->op.row_len < y->op.row_len ? -1 : 1;
  return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static bool same_row(const op_rec *x, const op_rec *y) {
  return x->key_fam == y->key_fam && x->op.row_len == y->op.row_len &&
         memcmp(x->op.row, y->op.row, x->op.row_len) == 0;
}

static bool is_marker(const kv_batch_op *op) {
  return op->type == KV_PUT && op->qual_len == 1 && op->qual[0] == (uint8_t)CAT_MARKER_QUALIFIER[0];
}

/* Add op to b; a marker put gets value[0..vlen) instead of its own. */
static int add_op(kv_batch *b, const kv_batch_op *op, bool marker, const uint8_t *value,
                  size_t vlen) {
  if (op->type != KV_PUT)
    return kv_batch_delete(b, op->family_id, op->type, op->row, op->row_len, op->qual,
                           op->qual_len, op->ts);
  if (marker)
    return kv_batch_put(b, op->family_id, op->row, op->row_len, op->qual, op->qual_len, op->ts,
                        value, vlen);
  return kv_batch_put(b, op->family_id, op->row, op->row_len, op->qual, op->qual_len, op->ts,
                      op->value, op->value_len);
}

static const uint8_t UNVERIFIED[1] = {EXEC_INDEX_UNVERIFIED};

/* The three batches of the index ops rec[0..n) (grouped by row) and the data ops. */
static int split(const walk *w, const op_rec *rec, size_t n, kv_batch *pre, kv_batch *data,
                 kv_batch *post) {
  int k = KV_OK;
  for (size_t i = 0; i < w->n && k == KV_OK; i++)
    if (w->ops[i].key_fam == UINT32_MAX) k = add_op(data, &w->ops[i].op, false, NULL, 0);
  for (size_t i = 0; i < n && k == KV_OK;) {
    size_t j = i;
    bool present = false;
    for (; j < n && same_row(&rec[i], &rec[j]); j++)
      if (rec[j].op.family_id == rec[j].key_fam) present = rec[j].op.type == KV_PUT;
    if (present) { /* post: the whole row again, verified (exec/index_repair.c's race) */
      for (size_t x = i; x < j && k == KV_OK; x++) {
        k = add_op(pre, &rec[x].op, is_marker(&rec[x].op), UNVERIFIED, 1);
        if (k == KV_OK) k = add_op(post, &rec[x].op, is_marker(&rec[x].op), (const uint8_t *)"", 0);
      }
    } else {
      k = kv_batch_put(pre, rec[i].key_fam, rec[i].op.row, rec[i].op.row_len,
                       CAT_MARKER_QUALIFIER, 1, KV_TS_NOW, UNVERIFIED, 1);
      for (size_t x = i; x < j && k == KV_OK; x++)
        k = add_op(post, &rec[x].op, is_marker(&rec[x].op), (const uint8_t *)"", 0);
    }
    i = j;
  }
  return k;
}

/* The index families of every index of the catalog (sorted), into *out. */
static int index_families(const cat_catalog *cat, fam_map **out, size_t *n_out) {
  size_t n = 0;
  int nt = cat_table_count(cat);
  for (int i = 0; i < nt; i++) n += 2 * (size_t)cat_table_at(cat, i)->n_indexes;
  *out = NULL;
  *n_out = 0;
  if (!n) return KV_OK;
  fam_map *m = malloc(n * sizeof *m);
  if (!m) return KV_ERR_NOMEM;
  size_t k = 0;
  for (int i = 0; i < nt; i++) {
    const cat_table *t = cat_table_at(cat, i);
    for (int x = 0; x < t->n_indexes; x++) {
      const cat_index *ix = &t->indexes[x];
      m[k++] = (fam_map){ix->kv_key_family, ix->kv_key_family};
      m[k++] = (fam_map){ix->kv_data_family, ix->kv_key_family};
    }
  }
  qsort(m, k, sizeof *m, cmp_fam);
  *out = m;
  *n_out = k;
  return KV_OK;
}

int exec_index_commit_phased(const cat_catalog *cat, kv_backend *be, const kv_batch *b,
                             bool *post_failed) {
  if (post_failed) *post_failed = false;
  fam_map *map = NULL;
  walk w = {0};
  int k = index_families(cat, &map, &w.n_map);
  w.map = map;
  if (k == KV_OK && w.n_map) k = kv_backend_batch_each(b, collect, &w);
  if (k != KV_OK || !w.n_index) { /* no index row: the batch as it is */
    free(map);
    free(w.ops);
    return k != KV_OK ? k : kv_be_write(be, b, NULL);
  }
  op_rec *rec = malloc(w.n_index * sizeof *rec);
  kv_batch *pre = kv_batch_new(), *data = kv_batch_new(), *post = kv_batch_new();
  if (!rec || !pre || !data || !post) k = KV_ERR_NOMEM;
  size_t n = 0;
  for (size_t i = 0; k == KV_OK && i < w.n; i++)
    if (w.ops[i].key_fam != UINT32_MAX) rec[n++] = w.ops[i];
  if (k == KV_OK) {
    qsort(rec, n, sizeof *rec, cmp_row);
    k = split(&w, rec, n, pre, data, post);
  }
  if (k == KV_OK) k = kv_be_write(be, pre, NULL);
  if (k == KV_OK && kv_batch_count(data)) k = kv_be_write(be, data, NULL);
  if (k == KV_OK && kv_be_write(be, post, NULL) != KV_OK && post_failed) *post_failed = true;
  kv_batch_free(pre);
  kv_batch_free(data);
  kv_batch_free(post);
  free(rec);
  free(map);
  free(w.ops);
  return k;
}
