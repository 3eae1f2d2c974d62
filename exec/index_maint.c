/*
** exec/index_maint.c: keeping a table's indexes in step with its rows on UPSERT and DELETE
** (contract in exec/index.h). For each written row the old values of the columns the
** indexes need are read with one kv_get of the data row (latest committed, plus a
** transaction's uncommitted batch as overlay when the row was already written into it),
** the old index row keys are built from them (or, for a row the statement wrote before
** outside a transaction, taken from the statement's journal, exec/index_journal.c), and
** the writer gets the deletion of every old index row whose key changes and the put of
** every new index row, in the same batch as the data change. An index row whose key did not change is put again (its INCLUDE cells updated;
** NULL ones get a column tombstone), which is also what makes writes during a backfill
** idempotent.
**
** IMMUTABLE_ROWS tables skip the read on UPSERT: the new index row is put and nothing is
** deleted, so changing an indexed column of an existing row leaves its old index row behind
** (Phoenix behaves the same; docs/INDEXES.md says so). DELETE always reads the row.
**
** Not here: the write statements (exec/write.c), the codec (exec/index.c).
*/
#include <stdlib.h>
#include <string.h>

#include "exec/index_int.h"
#include "exec/rowcodec.h"

struct exec_index_touched {
  uint64_t *slots; /* open addressing; 0 = empty (a zero hash is stored as 1) */
  size_t cap;      /* slots (a power of two), 0 before the first insert */
  size_t n;        /* used slots */
};

struct exec_index_maint {
  kv_backend *be;           /* the store's backend */
  const cat_table *t;       /* the data table */
  bool immutable;           /* IMMUTABLE_ROWS: no read of old values on UPSERT */
  int n;                    /* maintained indexes */
  exec_index_codec *ic;     /* their codecs */
  bool *need;               /* per table column: read from the old row */
  exec_rowcodec rc;         /* decodes the old row */
  uint32_t fams[KV_SCAN_MAX_FAMILIES]; /* families read for the old row (key family first) */
  uint32_t n_fams;          /* count */
  cat_value *old;           /* old row slots */
  cat_value *cur;           /* new row slots (old overlaid with the written values) */
  kv_backend_scan *get;     /* the open old-row read (its row backs old[]), or NULL */
  bool exists;              /* the old row exists */
  bool prepared;            /* an upsert is prepared */
  uint8_t **old_key;        /* per index: old index row key (CAT_KEY_MAX bytes) */
  size_t *old_len;          /* its length, 0 when there is none */
  uint8_t *data_key;        /* the prepared row's data key (CAT_KEY_MAX bytes) */
  size_t data_len;          /* its length */
  exec_index_journal *jr;   /* the statement's journal of index rows, or NULL (not owned) */
};

/* ---- Touched keys ------------------------------------------------------------------------ */
static uint64_t key_hash(const uint8_t *p, size_t n) {
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  for (size_t i = 0; i < n; i++) {
    h ^= p[i];
    h *= 1099511628211ull;
  }
  h ^= h >> 29;
  return h ? h : 1;
}

exec_index_touched *exec_index_touched_new(void) { return calloc(1, sizeof(exec_index_touched)); }

void exec_index_touched_clear(exec_index_touched *tk) {
  if (!tk || !tk->n) return;
  memset(tk->slots, 0, tk->cap * sizeof *tk->slots);
  tk->n = 0;
}

void exec_index_touched_free(exec_index_touched *tk) {
  if (!tk) return;
  free(tk->slots);
  free(tk);
}

static bool touched_has(const exec_index_touched *tk, const uint8_t *key, size_t len) {
  if (!tk || !tk->n) return false;
  uint64_t h = key_hash(key, len);
  for (size_t i = h & (tk->cap - 1);; i = (i + 1) & (tk->cap - 1)) {
    if (tk->slots[i] == h) return true;
    if (!tk->slots[i]) return false;
  }
}

static int touched_add(exec_index_touched *tk, const uint8_t *key, size_t len) {
  if (!tk) return EXEC_OK;
  if ((tk->n + 1) * 2 > tk->cap) {
    size_t ncap = tk->cap ? tk->cap * 2 : 256;
    uint64_t *ns = calloc(ncap, sizeof *ns);
    if (!ns) return EXEC_NOMEM;
    for (size_t i = 0; i < tk->cap; i++) {
      uint64_t h = tk->slots[i];
      if (!h) continue;
      size_t j = h & (ncap - 1);
      while (ns[j]) j = (j + 1) & (ncap - 1);
      ns[j] = h;
    }
    free(tk->slots);
    tk->slots = ns;
    tk->cap = ncap;
  }
  uint64_t h = key_hash(key, len);
  size_t i = h & (tk->cap - 1);
  while (tk->slots[i] && tk->slots[i] != h) i = (i + 1) & (tk->cap - 1);
  if (!tk->slots[i]) {
    tk->slots[i] = h;
    tk->n++;
  }
  return EXEC_OK;
}

/* ---- Open / free ------------------------------------------------------------------------ */
void exec_index_maint_free(exec_index_maint *m) {
  if (!m) return;
  kv_be_scan_close(m->be, m->get);
  for (int i = 0; i < m->n; i++) {
    exec_index_codec_free(&m->ic[i]);
    if (m->old_key) free(m->old_key[i]);
  }
  free(m->ic);
  free(m->old_key);
  free(m->old_len);
  free(m->need);
  free(m->old);
  free(m->cur);
  free(m->data_key);
  exec_rowcodec_free(&m->rc);
  free(m);
}

int exec_index_maint_open(const cat_catalog *cat, kv_backend *be, const cat_table *t,
                          exec_index_maint **out, exec_error *err) {
  *out = NULL;
  int n = 0;
  for (int i = 0; i < t->n_indexes; i++)
    if (t->indexes[i].state != CAT_INDEX_DISABLED) n++;
  if (!n) return EXEC_OK;
  exec_index_maint *m = calloc(1, sizeof *m);
  if (!m) return exec_error_set(err, EXEC_NOMEM, "out of memory");
  m->be = be;
  m->t = t;
  m->immutable = t->immutable_rows;
  size_t nc = (size_t)t->n_columns + 1;
  m->ic = calloc((size_t)n, sizeof *m->ic);
  m->old_key = calloc((size_t)n, sizeof *m->old_key);
  m->old_len = calloc((size_t)n, sizeof *m->old_len);
  m->need = calloc(nc, sizeof *m->need);
  m->old = calloc(nc, sizeof *m->old);
  m->cur = calloc(nc, sizeof *m->cur);
  m->data_key = malloc(CAT_KEY_MAX);
  int rc = EXEC_OK;
  if (!m->ic || !m->old_key || !m->old_len || !m->need || !m->old || !m->cur || !m->data_key) {
    rc = exec_error_set(err, EXEC_NOMEM, "out of memory");
    goto fail;
  }
  rc = exec_rowcodec_init(&m->rc, t, err);
  if (rc) goto fail;
  for (int i = 0; i < t->n_indexes; i++) {
    if (t->indexes[i].state == CAT_INDEX_DISABLED) continue;
    int k = m->n++;
    m->old_key[k] = malloc(CAT_KEY_MAX);
    if (!m->old_key[k]) {
      rc = exec_error_set(err, EXEC_NOMEM, "out of memory");
      goto fail;
    }
    rc = exec_index_codec_init(&m->ic[k], cat, t, &t->indexes[i], err);
    if (rc) goto fail;
    for (int c = 0; c < t->n_columns; c++)
      if (m->ic[k].need[c]) m->need[c] = true;
  }
  exec_index_data_families(t, m->need, m->fams, KV_SCAN_MAX_FAMILIES, &m->n_fams);
  *out = m;
  return EXEC_OK;
fail:
  exec_index_maint_free(m);
  return rc;
}

const cat_table *exec_index_maint_table(const exec_index_maint *m) { return m ? m->t : NULL; }

void exec_index_maint_set_journal(exec_index_maint *m, exec_index_journal *j) {
  if (m) m->jr = j;
}

int exec_index_maint_count(const exec_index_maint *m) { return m ? m->n : 0; }

bool exec_index_maint_immutable(const exec_index_maint *m) { return m && m->immutable; }

/* ---- Reading the old row ---------------------------------------------------------------- */
/* Read the data row key[0..len) into m->old (m->exists); the read stays open in m->get. */
static int read_old(exec_index_maint *m, const uint8_t *key, size_t len, const kv_batch *b,
                    const exec_index_touched *tk, exec_error *err) {
  kv_be_scan_close(m->be, m->get);
  m->get = NULL;
  m->exists = false;
  kv_scan_options so;
  memset(&so, 0, sizeof so);
  so.family_ids = m->fams;
  so.n_families = m->n_fams;
  so.overlay = b && touched_has(tk, key, len) ? b : NULL;
  kv_row row;
  int k = kv_be_get(m->be, &so, key, len, &m->get, &row);
  if (k == KV_ERR_NOTFOUND) return EXEC_OK;
  if (k != KV_OK) return exec_index_kv_fail(err, k, "reading the old row for index maintenance");
  bool has_marker = false;
  for (uint32_t i = 0; i < row.n_cells && !has_marker; i++)
    has_marker = row.cells[i].family_id == m->fams[0];
  if (!has_marker) return EXEC_OK; /* cells without a marker: not a row */
  int r = exec_row_decode(&m->rc, &row, m->need, m->old, NULL, err);
  if (r) return r;
  m->exists = true;
  return EXEC_OK;
}

void exec_index_maint_cancel(exec_index_maint *m) {
  if (!m) return;
  kv_be_scan_close(m->be, m->get);
  m->get = NULL;
  m->prepared = false;
}

/* ---- UPSERT ----------------------------------------------------------------------------- */
int exec_index_maint_upsert_prepare(exec_index_maint *m, const uint8_t *key, size_t key_len,
                                    const cat_value *vals, const bool *set, const kv_batch *b,
                                    exec_index_touched *touched, exec_error *err) {
  const cat_table *t = m->t;
  m->prepared = false;
  m->exists = false;
  if (key_len > CAT_KEY_MAX) return exec_error_set(err, EXEC_TOOBIG, "row key too long");
  memcpy(m->data_key, key, key_len);
  m->data_len = key_len;
  int r = EXEC_OK;
  if (!m->immutable) {
    r = read_old(m, key, key_len, b, touched, err);
    if (r) goto fail;
  }
  for (int c = 0; c < t->n_columns; c++) {
    if (!m->need[c]) continue;
    if (!set || set[c]) m->cur[c] = vals[c];
    else if (m->exists) m->cur[c] = m->old[c];
    else m->cur[c] = cat_v_null(t->columns[c].type);
  }
  /* A row this statement wrote before: its index rows are the ones that write put (the
  ** journal's), not those of the row as committed (the earlier write deleted them). The
  ** columns not set are the committed row's either way: every row of one statement sets
  ** the same columns. */
  bool journaled = false;
  if (m->jr && !m->immutable) {
    r = exec_index_journal_find(m->jr, key, key_len, m->old_key, m->old_len, &journaled, err);
    if (r) goto fail;
  }
  for (int i = 0; i < m->n; i++) {
    exec_index_codec *ic = &m->ic[i];
    if (!journaled) m->old_len[i] = 0;
    if (m->exists && !journaled) {
      r = exec_index_row_key(ic, m->old, err);
      if (r) goto fail;
      memcpy(m->old_key[i], ic->key, ic->key_len);
      m->old_len[i] = ic->key_len;
    }
    /* Check the new index row (key and INCLUDE values) before anything is written. */
    r = exec_index_row_key(ic, m->cur, err);
    if (r) goto fail;
    for (int j = 0; j < ic->n_include; j++) {
      const cat_column *col = &t->columns[ic->include_col[j]];
      uint8_t cbuf[64];
      cat_value cv;
      r = exec_index_fit(&col->type, col->name, &m->cur[ic->include_col[j]], &cv, cbuf, err);
      if (r) goto fail;
    }
  }
  m->prepared = true;
  return EXEC_OK;
fail:
  exec_index_maint_cancel(m);
  return r;
}

int exec_index_maint_upsert_apply(exec_index_maint *m, kv_batch *b, exec_index_touched *touched,
                                  exec_error *err) {
  if (!m->prepared) return exec_error_set(err, EXEC_MISUSE, "index maintenance not prepared");
  int r = EXEC_OK;
  for (int i = 0; i < m->n && !r; i++) {
    exec_index_codec *ic = &m->ic[i];
    r = exec_index_row_key(ic, m->cur, err);
    if (r) break;
    if (m->old_len[i] &&
        (m->old_len[i] != ic->key_len || memcmp(m->old_key[i], ic->key, ic->key_len) != 0))
      r = exec_index_delete_key(ic, m->old_key[i], m->old_len[i], KV_TS_NOW, b, err);
    if (!r) r = exec_index_put(ic, m->cur, KV_TS_NOW, b, err);
  }
  if (!r && m->jr && !m->immutable)
    r = exec_index_journal_add(m->jr, m->data_key, m->data_len, m->ic, err);
  if (!r && touched_add(touched, m->data_key, m->data_len))
    r = exec_error_set(err, EXEC_NOMEM, "out of memory");
  exec_index_maint_cancel(m);
  return r;
}

/* ---- DELETE ----------------------------------------------------------------------------- */
int exec_index_maint_delete(exec_index_maint *m, const uint8_t *key, size_t key_len,
                            kv_batch *b, exec_index_touched *touched, exec_error *err) {
  int r = read_old(m, key, key_len, b, touched, err);
  for (int i = 0; i < m->n && !r && m->exists; i++) {
    exec_index_codec *ic = &m->ic[i];
    r = exec_index_row_key(ic, m->old, err);
    if (!r) r = exec_index_delete_key(ic, ic->key, ic->key_len, KV_TS_NOW, b, err);
  }
  if (!r && touched_add(touched, key, key_len))
    r = exec_error_set(err, EXEC_NOMEM, "out of memory");
  exec_index_maint_cancel(m);
  return r;
}
