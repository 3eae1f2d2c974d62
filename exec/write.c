/*
** exec/write.c: UPSERT VALUES, UPSERT SELECT and DELETE. Rows become kv batch operations
** through exec/rowcodec.h (UPSERT sets the named columns and keeps the others; NULL deletes
** the cell; the marker cell makes the row exist; DELETE puts a family tombstone in every
** family). Outside a transaction a statement is one atomic batch, except UPSERT SELECT and
** DELETE over more than EXEC_WRITE_BATCH_ROWS rows, which commit every that many rows (each
** batch atomic) and, if one fails, say how many rows were committed before it. Inside a
** transaction the rows go to the transaction's batch (exec/txn.c); a statement that fails
** there takes its own operations back out of the batch (kv_batch_rollback_to) and the
** transaction goes on, as SQLite rolls back only the failed statement.
**
** Index maintenance (exec/index.h): when the table has indexes (BUILDING or ACTIVE), every
** written row first reads its old values and the writer adds the old index rows' deletions
** and the new index rows to the same batch as the row itself (so the WAL record holds both).
** The old-value read looks through the uncommitted batch only for rows already written into
** it (the writer's touched-key set; a transaction keeps its set in the session).
**
** DELETE is planned like a SELECT of its WHERE (planner/select.c plan_delete_scan_build):
** the same key ranges, pushed filter and residual, or the index scan the SELECT would use;
** an index row gives the data row key after its indexed values (and, uncovered, the data
** row is looked up for the residual). The scan reads a snapshot taken when it starts, so
** committing batches (and the index rows' deletions) while it runs does not disturb it.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/engine_int.h"
#include "exec/index.h"

typedef struct writer {
  exec_stmt *st;          /* statement */
  kv_batch *b;            /* batch being filled */
  bool own;               /* b is the statement's (commit it), not the transaction's */
  int64_t in_batch;       /* rows in b not yet committed */
  int64_t committed;      /* rows committed by earlier batches of this statement */
  bool chunked;           /* commit every EXEC_WRITE_BATCH_ROWS rows */
  size_t ops_before;      /* operations in the transaction's batch before the statement */
  kv_batch_mark mark;     /* the transaction's batch before the statement (rollback point) */
  exec_index_maint *maint; /* index maintenance of the written table, or NULL */
  exec_index_touched *touched; /* row keys written into b (own, or the session's) */
  bool own_touched;       /* touched is the writer's (free it at close) */
} writer;

static int writer_open(writer *w, exec_stmt *st, const cat_table *t, bool chunked,
                       exec_error *err) {
  memset(w, 0, sizeof *w);
  w->st = st;
  w->chunked = chunked;
  w->b = exec_txn_batch(st->s, &w->own);
  if (!w->b) return exec_fail(err, EXEC_NOMEM, -1, "out of memory");
  w->ops_before = kv_batch_count(w->b);
  w->mark = kv_batch_get_mark(w->b);
  exec_session *s = st->s;
  if (s->maint_cache && s->maint_gen == s->schema_gen &&
      exec_index_maint_table(s->maint_cache) == t) {
    w->maint = s->maint_cache; /* same table, same schema: reuse the codecs */
    s->maint_cache = NULL;
  } else if (t->n_indexes) {
    int r = exec_index_maint_open(s->cat, s->db, t, &w->maint, err);
    if (r) return r;
  }
  if (!w->maint) return EXEC_OK;
  if (w->own) {
    w->touched = exec_index_touched_new();
    w->own_touched = true;
  } else {
    if (!s->idx_touched) s->idx_touched = exec_index_touched_new();
    else if (w->ops_before == 0) exec_index_touched_clear(s->idx_touched); /* new transaction */
    w->touched = s->idx_touched;
  }
  if (!w->touched) return exec_fail(err, EXEC_NOMEM, -1, "out of memory");
  return EXEC_OK;
}

/* After one row was added: commit a full chunk. */
static int writer_row(writer *w, exec_error *err) {
  w->in_batch++;
  w->st->changes++;
  if (!w->own || !w->chunked || w->in_batch < EXEC_WRITE_BATCH_ROWS) return EXEC_OK;
  int rc = exec_txn_commit_batch(w->st->s, w->b, err);
  if (rc) return rc;
  kv_batch_clear(w->b);
  exec_index_touched_clear(w->touched);
  w->committed += w->in_batch;
  w->in_batch = 0;
  return EXEC_OK;
}

/* Finish: commit (rc == OK) or drop what is pending; explains partial commits. */
static int writer_close(writer *w, int rc, exec_error *err) {
  if (rc == EXEC_OK && w->own && w->in_batch) rc = exec_txn_commit_batch(w->st->s, w->b, err);
  if (rc == EXEC_OK) w->committed += w->in_batch;
  if (w->maint) { /* keep it for the next statement on this table */
    exec_index_maint_cancel(w->maint);
    exec_index_maint_free(w->st->s->maint_cache);
    w->st->s->maint_cache = w->maint;
    w->st->s->maint_gen = w->st->s->schema_gen;
    w->maint = NULL;
  }
  if (w->own_touched) exec_index_touched_free(w->touched);
  if (w->own) exec_txn_drop_batch(w->st->s, w->b);
  else if (rc != EXEC_OK) kv_batch_rollback_to(w->b, w->mark); /* statement rollback */
  if (rc != EXEC_OK) {
    w->st->changes = w->committed;
    if (w->committed && err) {
      size_t l = strlen(err->msg);
      snprintf(err->msg + l, sizeof err->msg - l,
               " (%lld rows were committed before the failure)", (long long)w->committed);
    }
  }
  return rc;
}

static int put_row(exec_rowcodec *rc, writer *w, const cat_value *vals, const bool *set,
                   exec_error *err) {
  int r;
  if (w->maint) {
    r = exec_row_key(rc, vals, NULL, 0, NULL, err);
    if (!r) r = exec_row_check(rc, vals, set, err); /* the column named, as without an index */
    if (r) return r;
    r = exec_index_maint_upsert_prepare(w->maint, rc->key, rc->key_len, vals, set, w->b,
                                        w->touched, err);
    if (r) return r;
  }
  r = exec_row_put(rc, vals, set, KV_TS_NOW, w->b, err);
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
  r = writer_open(&w, st, t, u->select != NULL, err);
  if (r) return writer_close(&w, r, err);
  plan_step_actual *ws = &st->last_act.step[PLAN_STEP_WRITE];
  if (!u->select) {
    exec_arena scratch;
    exec_arena_init(&scratch);
    char msg[EXEC_ERRMSG_MAX];
    exec_eval_ctx c;
    memset(&c, 0, sizeof c);
    c.params = st->run_params;
    c.n_params = st->n_params;
    c.scratch = &scratch;
    c.now_us = st->now_us;
    c.msg = msg;
    c.cap = sizeof msg;
    for (int row = 0; row < u->n_rows && !r; row++) {
      ws->rows_in++;
      for (int i = 0; i < u->n_cols && !r; i++) {
        r = exec_eval(&c, u->rows[row][i], &vals[u->cols[i]]);
        if (r) {
          exec_fail(err, r, (int)u->rows[row][i]->off, "%s", msg);
          name_row(u, row, i, err);
        }
      }
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
    r = exec_query_open(x, st->s->db, &st->q, st->run_params, st->n_params, st->now_us,
                        st->s->sort_mem, st->s->txn, err);
    st->x_open = true;
    x->timing = st->bound.analyze;
    while (!r) {
      int q = exec_query_next(x, err);
      if (q == EXEC_DONE) break;
      if (q != EXEC_ROW) {
        r = q;
        break;
      }
      ws->rows_in++;
      for (int i = 0; i < u->n_cols; i++) vals[u->cols[i]] = x->out[i];
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
static const uint8_t *data_key(const plan_scan *ps, const uint8_t *k, size_t n, size_t *len) {
  const uint8_t *p = k, *limit = k + n;
  for (int i = 0; i < ps->ix_n_keys && p; i++) p = cat_key_skip_col(&ps->ix_key_cols[i], p, limit);
  if (!p || p >= limit) return NULL;
  *len = (size_t)(limit - p);
  return p;
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
  int r = exec_scan_open(&sc, st->s->db, ps, st->s->txn, err);
  cat_value *row = calloc((size_t)d->table->n_columns + 1, sizeof *row);
  exec_arena scratch;
  exec_arena_init(&scratch);
  char msg[EXEC_ERRMSG_MAX];
  exec_eval_ctx c;
  memset(&c, 0, sizeof c);
  c.params = st->run_params;
  c.n_params = st->n_params;
  c.scratch = &scratch;
  c.now_us = st->now_us;
  c.msg = msg;
  c.cap = sizeof msg;
  c.row = row;
  if (!r && !row) r = exec_fail(err, EXEC_NOMEM, -1, "out of memory");
  bool opened = false;
  if (!r) {
    r = writer_open(&w, st, d->table, true, err);
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
    if (!r) r = exec_row_delete(&sc.rc, key, key_len, KV_TS_NOW, w.b, err);
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
