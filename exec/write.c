/*
** exec/write.c: UPSERT VALUES, UPSERT SELECT and DELETE. Rows become kv batch operations
** through exec/rowcodec.h (UPSERT sets the named columns and keeps the others; NULL deletes
** the cell; the marker cell makes the row exist; DELETE puts a family tombstone in every
** family). Inside a transaction the rows go to the transaction's batch (exec/txn.c); a
** statement that fails there takes its own operations back out of the batch
** (kv_batch_rollback_to) and the transaction goes on, as SQLite rolls back only the failed
** statement.
**
** Outside a transaction a statement is atomic whatever its size. Its rows go to a batch of
** its own; one that ends under the bound (exec_set_write_memory: its batch under a 16th of
** the session's write memory) commits the batch as one WAL record (the fast path). Past the
** bound the batch is moved into a kv bulk load (kv/bulk/bulk.h: kv_bulk_add_batch, which keeps the
** batch's order, so later operations still win) and emptied, as often as it fills again; at
** the end what is left joins the load and kv_bulk_commit writes sorted store files (spilled
** to temporary files past the load's own bound) and names them all, the index rows and the
** DELETE tombstones with the data, in one MANIFEST record with one sequence number, newer
** than every commit before and older than every one after. An error, an interrupt or a
** kill before that record leaves nothing of the statement (kv_bulk_free, or kv_open after a
** crash, removes the files), and a reader sees the statement whole or not at all.
**
** Index maintenance (exec/index.h): when the table has indexes (BUILDING or ACTIVE), every
** written row first reads its old values and the writer adds the old index rows' deletions
** and the new index rows to the same batch as the row itself (so the WAL record, or the bulk
** load, holds both). Inside a transaction the old-value read looks through the uncommitted
** batch for rows already written into it (the session's touched-key set). Outside one
** nothing is read back from the statement's own writes (they may be in the bulk load): an
** UPSERT that can write a row twice (UPSERT SELECT, several VALUES rows) keeps a journal of
** the index rows it wrote per data row key instead (exec/index_journal.c), and a DELETE reads
** each row once (a second delete of a row, through a stale index row, writes the same
** tombstones again).
**
** DELETE is planned like a SELECT of its WHERE (planner/select.c plan_delete_scan_build):
** the same key ranges, pushed filter and residual, or the index scan the SELECT would use;
** an index row gives the data row key after its indexed values (and, uncovered, the data
** row is looked up for the residual). The scan reads a snapshot taken when it starts; the
** statement's own writes are committed after it, at the end.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/engine_int.h"
#include "exec/index.h"
#include "catalog/row_ts.h"
#include "catalog/salt.h"
#include "exec/row_ts.h"
#include "exec/sequence.h"

typedef struct writer {
  exec_stmt *st;          /* statement */
  kv_batch *b;            /* batch being filled */
  bool own;               /* b is the statement's (commit it), not the transaction's */
  size_t spill_at;        /* own: encoded bytes of b past which it moves into kb */
  kv_bulk *kb;            /* own, past the bound: the load the statement's writes moved to */
  size_t ops_before;      /* operations in the transaction's batch before the statement */
  kv_batch_mark mark;     /* the transaction's batch before the statement (rollback point) */
  exec_index_maint *maint; /* index maintenance of the written table, or NULL */
  exec_index_touched *touched; /* transaction: the session's set of row keys written into b
                             (old-value reads look through b for them); own: NULL (never) */
  exec_index_journal *jr; /* own UPSERT that may write a row twice into an indexed table:
                             the index rows it wrote per data key (owned), else NULL */
} writer;

/* rows_may_repeat: the statement may write one row key twice (its journal is kept). */
static int writer_open(writer *w, exec_stmt *st, const cat_table *t, bool rows_may_repeat,
                       exec_error *err) {
  memset(w, 0, sizeof *w);
  w->st = st;
  w->b = exec_txn_batch(st->s, &w->own);
  if (!w->b) return exec_fail(err, EXEC_NOMEM, -1, "out of memory");
  w->ops_before = kv_batch_count(w->b);
  w->mark = kv_batch_get_mark(w->b);
  exec_session *s = st->s;
  w->spill_at = s->write_mem / EXEC_WRITE_SPILL_SHARE;
  /* A remote backend (HBase) has no local store to bulk-load into: the batch stays in
  ** memory and is written through the backend at the end, row by row as always there. */
  if (!kv_backend_local_db(&s->be)) w->spill_at = SIZE_MAX;
  if (s->maint_cache && s->maint_gen == s->schema_gen && !t->n_dynamic &&
      exec_index_maint_table(s->maint_cache) == t) {
    w->maint = s->maint_cache; /* same table, same schema: reuse the codecs */
    s->maint_cache = NULL;
  } else if (t->n_indexes) {
    int r = exec_index_maint_open(s->cat, &s->be, t, &w->maint, err);
    if (r) return r;
  }
  if (!w->maint) return EXEC_OK;
  if (w->own) {
    if (!rows_may_repeat || exec_index_maint_immutable(w->maint)) return EXEC_OK;
    w->jr = exec_index_journal_new(exec_index_maint_count(w->maint), t->families[0].kv_id);
    if (!w->jr) return exec_fail(err, EXEC_NOMEM, -1, "out of memory");
    exec_index_maint_set_journal(w->maint, w->jr);
    return EXEC_OK;
  }
  if (!s->idx_touched) s->idx_touched = exec_index_touched_new();
  else if (w->ops_before == 0) exec_index_touched_clear(s->idx_touched); /* new transaction */
  w->touched = s->idx_touched;
  if (!w->touched) return exec_fail(err, EXEC_NOMEM, -1, "out of memory");
  return EXEC_OK;
}

/* Move the statement's batch into its bulk load (begun on first use) and empty it. */
static int writer_spill(writer *w, exec_error *err) {
  exec_session *s = w->st->s;
  int k = KV_OK;
  if (!w->kb) {
    kv_bulk_options o;
    memset(&o, 0, sizeof o);
    o.run_bytes = s->write_mem;
    o.interrupt = exec_interrupt_flag(); /* an interrupt before the install stops it too */
    k = kv_bulk_begin(s->db, &o, &w->kb);
  }
  if (k == KV_OK) k = kv_bulk_add_batch(w->kb, w->b);
  if (k != KV_OK) return exec_kv_error(k, err);
  kv_batch_clear(w->b);
  return exec_index_journal_spill(w->jr, w->kb, err);
}

/* After one row was added: check for an interrupt; past the bound, spill. */
static int writer_row(writer *w, exec_error *err) {
  w->st->changes++;
  int rc = exec_check_interrupt(err);
  if (rc || !w->own || kv_batch_byte_size(w->b) < w->spill_at) return rc;
  return writer_spill(w, err);
}

/* Finish: commit (rc == OK) or drop everything the statement wrote. */
static int writer_close(writer *w, int rc, exec_error *err) {
  if (rc == EXEC_OK && w->own && w->kb) { /* the batch's rest joins the load: one install */
    int k = kv_batch_count(w->b) ? kv_bulk_add_batch(w->kb, w->b) : KV_OK;
    if (k == KV_OK) k = kv_bulk_commit(w->kb, NULL);
    if (k != KV_OK) rc = exec_kv_error(k, err);
  } else if (rc == EXEC_OK && w->own && kv_batch_count(w->b)) {
    rc = exec_txn_commit_batch(w->st->s, w->b, err);
  }
  const cat_table *mt = w->maint ? exec_index_maint_table(w->maint) : NULL;
  if (mt && cat_find_table(w->st->s->cat, mt->name) != mt) {
    /* a view's copy of the table with the view's own columns (planner/bind_view.c) lives
    ** in the statement's memory: another view's copy may later have its address */
    exec_index_maint_free(w->maint);
    w->maint = NULL;
  }
  kv_bulk_free(w->kb); /* after a failure: its temporary files go too */
  w->kb = NULL;
  if (w->maint && exec_index_maint_table(w->maint)->n_dynamic) {
    /* a statement's copy of the table with dynamic columns (planner/bind_dyncol.c): its
       address is no key for the next statement */
    exec_index_maint_free(w->maint);
    w->maint = NULL;
  }
  if (w->maint) { /* keep it for the next statement on this table */
    exec_index_maint_set_journal(w->maint, NULL);
    exec_index_maint_cancel(w->maint);
    exec_index_maint_free(w->st->s->maint_cache);
    w->st->s->maint_cache = w->maint;
    w->st->s->maint_gen = w->st->s->schema_gen;
    w->maint = NULL;
  }
  exec_index_journal_free(w->jr);
  w->jr = NULL;
  if (w->own) exec_txn_drop_batch(w->st->s, w->b);
  else if (rc != EXEC_OK && w->b) kv_batch_rollback_to(w->b, w->mark); /* statement rollback */
  w->b = NULL;
  if (rc != EXEC_OK) w->st->changes = 0;
  return rc;
}

int exec_row_cover_lose(exec_session *s, const cat_table *t, uint64_t miss, exec_error *err) {
  if (!miss) return EXEC_OK;
  cat_error ce;
  memset(&ce, 0, sizeof ce);
  if (cat_row_cover_lose(s->cat, t, miss, &ce) == CAT_OK) return EXEC_OK;
  return exec_error_set(err, ce.code == CAT_ERR_KV && ce.kv_code == KV_ERR_IO ? EXEC_IOERR
                                                                              : EXEC_ERROR,
                        "writing a row of %s: recording that a family no longer holds every "
                        "row failed: %s", t->name, ce.msg);
}

/* Whether row rc->key already has a visible cell of one of t's own columns in family f, read
** through the batch the write goes into (so the statement's and the transaction's earlier
** writes count). *has false on any doubt. */
static int has_own_cell(writer *w, const cat_table *t, int f, const exec_rowcodec *rc,
                        bool *has, exec_error *err) {
  *has = false;
  uint8_t qb[2 * CAT_MAX_COLUMNS];
  const uint8_t *qp[CAT_MAX_COLUMNS];
  uint32_t ql[CAT_MAX_COLUMNS], nq = 0;
  for (int i = 0; i < t->n_columns; i++) {
    const cat_column *c = &t->columns[i];
    if (c->family != f || !cat_column_counts_for_cover(c)) continue;
    size_t len;
    qp[nq] = cat_col_qual(c, qb + 2 * nq, &len);
    ql[nq++] = (uint32_t)len;
  }
  if (!nq) return EXEC_OK;
  uint32_t fid = t->families[f].kv_id;
  kv_qualifier_set qs = {fid, qp, ql, nq};
  kv_scan_options so;
  memset(&so, 0, sizeof so);
  so.family_ids = &fid;
  so.n_families = 1;
  so.qualifiers = &qs;
  so.n_qualifier_sets = 1;
  so.overlay = w->b;
  kv_backend *be = &w->st->s->be;
  kv_backend_scan *g = NULL;
  kv_row row;
  int k = kv_be_get(be, &so, rc->key, rc->key_len, &g, &row);
  *has = k == KV_OK && row.n_cells > 0;
  kv_be_scan_close(be, g);
  return k == KV_OK || k == KV_ERR_NOTFOUND ? EXEC_OK : exec_kv_error(k, err);
}

/* The row just added to w->b misses covered families (rc->cover_miss): those it wrote
** nothing in keep their cover when the row already has a cell of theirs there (a partial
** UPSERT of an existing row, Phoenix's usual update: the row still has that cell after the
** write); the others, and all of them when in doubt (a table with a TTL, whose older cell
** may expire before this write's marker; a statement whose earlier rows moved into a bulk
** load this read cannot see), are lost (cat_row_cover_lose) before the batch can commit. */
static int cover_check(writer *w, exec_rowcodec *rc, exec_error *err) {
  const cat_table *t = rc->table;
  uint64_t lose = rc->cover_miss;
  uint64_t maybe = t->ttl_sec || w->kb ? 0 : rc->cover_untouched;
  for (int f = 1; maybe && f < t->n_families && f < 64; f++) {
    if (!(maybe & (1ull << f))) continue;
    bool has;
    int r = has_own_cell(w, t, f, rc, &has, err);
    if (r) return r;
    if (has) lose &= ~(1ull << f);
  }
  return exec_row_cover_lose(w->st->s, t, lose, err);
}

static int put_row(exec_rowcodec *rc, writer *w, const cat_value *vals, const bool *set,
                   exec_error *err) {
  int r;
  int64_t ts = KV_TS_NOW; /* a ROW_TIMESTAMP table: the key column's value (exec/row_ts.h) */
  if (rc->table->row_ts >= 0) {
    r = exec_row_key(rc, vals, NULL, 0, NULL, err);
    if (!r) r = exec_row_ts_of_key(rc->table, rc->key, rc->key_len, &ts, err);
    if (r) return r;
  }
  if (w->maint) {
    r = exec_row_key(rc, vals, NULL, 0, NULL, err);
    if (!r) r = exec_row_check(rc, vals, set, err); /* the column named, as without an index */
    if (r) return r;
    r = exec_index_maint_upsert_prepare(w->maint, rc->key, rc->key_len, vals, set, w->b,
                                        w->touched, err);
    if (r) return r;
  }
  r = exec_row_put(rc, vals, set, ts, w->b, err);
  if (!r && rc->cover_miss) r = cover_check(w, rc, err);
  if (r) {
    exec_index_maint_cancel(w->maint);
    return r;
  }
  if (w->maint) {
    r = exec_index_maint_upsert_apply(w->maint, w->b, w->touched, err);
    if (r) return r;
  }
  return writer_row(w, err);
}

/* A multi-row UPSERT VALUES names the failing row (1-based) in its error, and the column
** when the message does not: "row 3, column TEMP: invalid DOUBLE 'x'". The error offset goes
** to the failing value (col, or the column the message names), else to the row's first
** value. col: index into u->cols of the value that failed, or -1 when not known. One-row
** statements keep their message (the row is plain). */
static void name_row(const plan_upsert *u, int row, int col, exec_error *err) {
  if (!err || u->n_rows < 2) return;
  const cat_table *t = u->table;
  bool named = strncmp(err->msg, "column ", 7) == 0; /* put_row's messages name the column */
  for (int i = 0; named && col < 0 && i < u->n_cols; i++) {
    const char *nm = t->columns[u->cols[i]].name;
    size_t n = strlen(nm);
    if (strncmp(err->msg + 7, nm, n) == 0 && (err->msg[7 + n] == ':' || err->msg[7 + n] == ' '))
      col = i;
  }
  char tmp[EXEC_ERRMSG_MAX];
  if (col >= 0 && !named)
    snprintf(tmp, sizeof tmp, "row %d, column %.*s: %.*s", row + 1, 128,
             t->columns[u->cols[col]].name, EXEC_ERRMSG_MAX - 180, err->msg);
  else
    snprintf(tmp, sizeof tmp, "row %d, %.*s", row + 1, EXEC_ERRMSG_MAX - 32, err->msg);
  memcpy(err->msg, tmp, sizeof tmp);
  if (col >= 0) err->offset = (int)u->rows[row][col]->off;
  else if (err->offset < 0 && u->n_cols > 0) err->offset = (int)u->rows[row][0]->off;
}

/* What an UPSERT builds before its first row, kept in the statement (st->up) for its next
** run while it is bound the same way (a prepared UPSERT run once per row, as .import and
** the bench do, spent a dozen mallocs a row on it). vals: the row's values, NULL for the
** columns the UPSERT does not set (never assigned); set: the columns it sets. */
typedef struct exec_upsert_cache {
  const plan_upsert *u;   /* the binding it was built for */
  uint64_t gen;           /* st->schema_gen then */
  exec_rowcodec rc;       /* row codec of u->table */
  cat_value *vals;        /* n_columns */
  bool *set;              /* n_columns */
  bool fill_ts;           /* the UPSERT names no ROW_TIMESTAMP column: each row gets the
                             server time there (Phoenix's rule) */
} exec_upsert_cache;

void exec_upsert_cache_free(exec_upsert_cache *c) {
  if (!c) return;
  exec_rowcodec_free(&c->rc);
  free(c->vals);
  free(c->set);
  free(c);
}

/* st->up for the statement's current binding, built when missing or stale. EXEC_OK or
** EXEC_NOMEM (err set). */
static int upsert_cache(exec_stmt *st, exec_error *err) {
  const plan_upsert *u = st->bound.upsert;
  exec_upsert_cache *c = st->up;
  if (c && c->u == u && c->gen == st->schema_gen) return EXEC_OK;
  exec_upsert_cache_free(c);
  st->up = NULL;
  const cat_table *t = u->table;
  c = calloc(1, sizeof *c);
  if (!c) return exec_fail(err, EXEC_NOMEM, -1, "out of memory");
  int r = exec_rowcodec_init(&c->rc, t, err);
  if (r) {
    free(c);
    return r;
  }
  c->vals = calloc((size_t)t->n_columns + 1, sizeof *c->vals);
  c->set = calloc((size_t)t->n_columns + 1, sizeof *c->set);
  if (!c->vals || !c->set) {
    exec_upsert_cache_free(c);
    return exec_fail(err, EXEC_NOMEM, -1, "out of memory");
  }
  for (int i = 0; i < t->n_columns; i++) c->vals[i] = cat_v_null(t->columns[i].type);
  for (int i = 0; i < u->n_cols; i++) c->set[u->cols[i]] = true;
  if (t->row_ts >= 0 && !c->set[t->row_ts]) c->fill_ts = c->set[t->row_ts] = true;
  c->u = u;
  c->gen = st->schema_gen;
  st->up = c;
  return EXEC_OK;
}

int exec_write_upsert(exec_stmt *st, exec_error *err) {
  const plan_upsert *u = st->bound.upsert;
  const cat_table *t = u->table;
  int r = upsert_cache(st, err);
  if (r) return r;
  exec_upsert_cache *uc = st->up;
  exec_rowcodec *rc = &uc->rc;
  cat_value *vals = uc->vals;
  const bool *set = uc->set;
  writer w;
  r = writer_open(&w, st, t, u->select != NULL || u->n_rows > 1, err);
  if (r) return writer_close(&w, r, err);
  plan_step_actual *ws = &st->last_act.step[PLAN_STEP_WRITE];
  if (!u->select) {
    exec_arena scratch;
    exec_arena_init(&scratch);
    char msg[EXEC_ERRMSG_MAX];
    exec_eval_ctx c;
    memset(&c, 0, sizeof c);
    c.params = st->all_params;
    c.n_params = st->n_all;
    c.scratch = &scratch;
    c.now_us = st->now_us;
    c.msg = msg;
    c.cap = sizeof msg;
    for (int row = 0; row < u->n_rows && !r; row++) {
      ws->rows_in++;
      if (st->bound.n_seqs && (r = exec_seq_row(st, err)) != EXEC_OK) break;
      for (int i = 0; i < u->n_cols && !r; i++) {
        r = exec_eval(&c, u->rows[row][i], &vals[u->cols[i]]);
        if (r) {
          exec_fail(err, r, (int)u->rows[row][i]->off, "%s", msg);
          name_row(u, row, i, err);
        }
      }
      if (!r && uc->fill_ts)
        vals[t->row_ts] = cat_row_ts_value(t->columns[t->row_ts].type.id, exec_row_ts_now_ms());
      if (!r) {
        r = put_row(rc, &w, vals, set, err);
        if (r) name_row(u, row, -1, err);
      }
      if (!r) ws->rows_out++;
      exec_arena_reset(&scratch);
    }
    exec_arena_free(&scratch);
  } else {
    exec_query *x = &st->x;
    r = exec_query_open(x, &st->s->be, &st->q, st->all_params, st->n_all, st->now_us,
                        st->s->sort_mem, st->s->txn, err);
    st->x_open = true;
    x->timing = st->bound.analyze;
    x->join_mem = st->s->join_mem;
    if (st->bound.n_seqs) {
      x->row_hook = exec_seq_row;
      x->row_hook_arg = st;
    }
    while (!r) {
      int q = exec_query_next(x, err);
      if (q == EXEC_DONE) break;
      if (q != EXEC_ROW) {
        r = q;
        break;
      }
      ws->rows_in++;
      for (int i = 0; i < u->n_cols; i++) vals[u->cols[i]] = x->out[i];
      if (uc->fill_ts)
        vals[t->row_ts] = cat_row_ts_value(t->columns[t->row_ts].type.id, exec_row_ts_now_ms());
      r = put_row(rc, &w, vals, set, err);
      if (!r) ws->rows_out++;
    }
    plan_step_actual keep = *ws;
    exec_query_close(x);
    st->x_open = false;
    st->last_act = x->act;
    st->last_act.step[PLAN_STEP_WRITE] = keep;
  }
  return writer_close(&w, r, err);
}

/* The data row key inside index row key k[0..n) of index scan ps: what follows its
** ps->ix_n_keys indexed values. NULL if the key does not decode. */
static const uint8_t *data_key(const plan_scan *ps, uint8_t *k, size_t n, size_t *len) {
  const uint8_t *p = k + (ps->index->salt_buckets ? 1 : 0), *limit = k + n; /* salted index */
  for (int i = 0; i < ps->ix_n_keys && p; i++) p = cat_key_skip_col(&ps->ix_key_cols[i], p, limit);
  if (!p || p >= limit || p == k) return NULL;
  /* a salted table's stored key: its salt byte over the index key's byte before it (k is
     the scan's copy of the index row key, read no more) */
  const uint8_t *d = cat_salt_before(ps->table, k + (p - k), (size_t)(limit - p));
  *len = (size_t)(limit - d);
  return d;
}

/* An uncovered index scan's row (decoded into row): the filter on index columns, then the
** lookup of the data row into row (as a SELECT's source does, exec/op_query.c).
** EXEC_ROW to go on with the row, EXEC_DONE to skip it (filtered, or its data row is
** gone), or an error. */
static int index_row(exec_scan_state *sc, const plan_scan *ps, exec_eval_ctx *c,
                     plan_actuals *a, cat_value *row, exec_error *err) {
  if (ps->ix_filter) {
    a->ix_filter_in++;
    int tv;
    int e = exec_eval_pred(c, ps->ix_filter, &tv);
    exec_arena_reset(c->scratch);
    if (e) return exec_fail(err, e, -1, "%s", c->msg);
    if (tv != 1) return EXEC_DONE;
    a->ix_filter_out++;
  }
  return exec_scan_lookup(sc, row, err);
}

int exec_write_delete(exec_stmt *st, exec_error *err) {
  const plan_delete *d = st->bound.del;
  const plan_scan *ps = &st->del_scan;
  int64_t limit = -1;
  if (d->limit) {
    cat_value v = d->limit->kind == PX_PARAM
                      ? (d->limit->param <= st->n_params ? st->run_params[d->limit->param - 1]
                                                         : cat_v_null(cat_type_of(0)))
                      : d->limit->value;
    if (v.is_null || !cat_type_is_integer(v.type.id) || v.u.i < 0)
      return exec_fail(err, EXEC_ERROR, -1, "LIMIT needs a non-negative integer");
    limit = v.u.i;
  }
  exec_scan_state sc;
  writer w;
  memset(&w, 0, sizeof w);
  int r = exec_scan_open(&sc, &st->s->be, ps, st->s->txn, err);
  cat_value *row = calloc((size_t)d->table->n_columns + 1, sizeof *row);
  exec_arena scratch;
  exec_arena_init(&scratch);
  char msg[EXEC_ERRMSG_MAX];
  exec_eval_ctx c;
  memset(&c, 0, sizeof c);
  c.params = st->all_params;
  c.n_params = st->n_all;
  c.scratch = &scratch;
  c.now_us = st->now_us;
  c.msg = msg;
  c.cap = sizeof msg;
  c.row = row;
  if (!r && !row) r = exec_fail(err, EXEC_NOMEM, -1, "out of memory");
  bool opened = false;
  if (!r) {
    r = writer_open(&w, st, d->table, false, err);
    opened = true;
  }
  plan_actuals *a = &st->last_act;
  while (!r && (limit < 0 || st->changes < limit)) {
    int q = exec_scan_next(&sc, row, err);
    if (q == EXEC_DONE) break;
    if (q != EXEC_ROW) {
      r = q;
      break;
    }
    const uint8_t *key = sc.key;
    size_t key_len = sc.key_len;
    if (ps->index) {
      /* an index row: filter on its columns, look the data row up when the plan needs it,
         and delete by the data row key (the index key after its indexed values) */
      int f = ps->lookup ? index_row(&sc, ps, &c, a, row, err) : EXEC_ROW;
      if (f == EXEC_DONE) continue;
      if (f != EXEC_ROW) {
        r = f;
        break;
      }
      key = data_key(ps, sc.key, sc.key_len, &key_len);
      if (!key) {
        r = exec_fail(err, EXEC_CORRUPT, -1, "index %s: a row key does not decode",
                      ps->index->name);
        break;
      }
    }
    a->step[PLAN_STEP_SCAN].rows_out++;
    if (ps->residual) {
      a->step[PLAN_STEP_FILTER].rows_in++;
      int tv;
      int e = exec_eval_pred(&c, ps->residual, &tv);
      exec_arena_reset(&scratch);
      if (e) {
        r = exec_fail(err, e, -1, "%s", msg);
        break;
      }
      if (tv != 1) continue;
      a->step[PLAN_STEP_FILTER].rows_out++;
    }
    a->step[PLAN_STEP_WRITE].rows_in++;
    if (w.maint) r = exec_index_maint_delete(w.maint, key, key_len, w.b, w.touched, err);
    int64_t ts = KV_TS_NOW; /* a ROW_TIMESTAMP table's tombstones: at the row's timestamp */
    if (!r) r = exec_row_ts_of_key(sc.rc.table, key, key_len, &ts, err);
    if (!r) r = exec_row_delete(&sc.rc, key, key_len, ts, w.b, err);
    if (!r) r = writer_row(&w, err);
    if (!r) a->step[PLAN_STEP_WRITE].rows_out++;
  }
  if (opened) r = writer_close(&w, r, err);
  exec_scan_close(&sc);
  a->kv = sc.m;
  a->lookup_kv = sc.lm;
  a->lookups = sc.lookups;
  a->lookups_found = sc.lookups_found;
  a->rows_assembled = sc.rows_assembled;
  a->analyzed = true;
  exec_arena_free(&scratch);
  free(row);
  return r;
}
