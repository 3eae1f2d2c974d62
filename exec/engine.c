/*
** exec/engine.c: the session and statement life cycle of exec/engine.h: open/close a
** session over a store and its catalog; prepare (parse, bind), bind parameters, step
** (plan at the first step, then run), reset, finalize; result columns; metrics. SELECT runs
** through exec/op.h, writes through exec/write.c, DDL through exec/ddl.h, BEGIN / COMMIT /
** ROLLBACK here (exec/txn.c keeps the transaction batch).
**
** A statement prepared before a DDL on the catalog is re-bound at its next step (the
** catalog's table pointers it held may be gone), so a dropped table is reported then. A
** SELECT keeps its plan across resets until then (plan reuse, exec/engine_run.c).
** Not here: SQL text (sql/), binding and planning (planner/), EXPLAIN text (planner/
** explain.c).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "catalog/value.h"
#include "exec/as_of.h"
#include "exec/ddl.h"
#include "exec/in_set.h"
#include "exec/index.h"
#include "exec/engine_int.h"
#include "exec/eval.h"
#include "exec/keymap.h"
#include "exec/func.h"
#include "kv/backend/backend_overlay.h"
#include "kv/backend/backend_rowatomic.h"
#include "planner/plan_reuse.h"
#include "sql/parser.h"

int exec_fail(exec_error *err, int code, int offset, const char *fmt, ...) {
  if (!err) return code;
  va_list ap;
  va_start(ap, fmt);
  err->code = code;
  err->offset = offset;
  vsnprintf(err->msg, sizeof err->msg, fmt, ap);
  va_end(ap);
  return code;
}

/* ---- Session ---------------------------------------------------------------------------- */
int exec_session_open(kv_db *db, exec_session **out, exec_error *err) {
  kv_backend be;
  const char *name = getenv("ROWAN_BACKEND");
  if (!name || !*name || !strcmp(name, "local"))
    return exec_session_open_backend(db, kv_backend_local_init(&be, db), out, err);
  *out = NULL;
  if (strcmp(name, "rowatomic") != 0)
    return exec_fail(err, EXEC_MISUSE, -1,
                     "ROWAN_BACKEND names an unknown storage backend \"%s\" (local, rowatomic; "
                     "a database on HBase is opened by its hbase:// URI)",
                     name);
  kv_backend *rw = NULL;
  int krc = db ? kv_backend_rowatomic_open(db, &rw) : KV_MISUSE;
  if (krc != KV_OK)
    return exec_fail(err, krc == KV_ERR_NOMEM ? EXEC_NOMEM : EXEC_MISUSE, -1,
                     "exec_session_open: backend rowatomic: %s", kv_errmsg());
  int rc = exec_session_open_backend(db, rw, out, err);
  if (rc == EXEC_OK) (*out)->owned_be = rw;
  else kv_backend_rowatomic_close(rw);
  return rc;
}

int exec_session_open_backend(kv_db *db, const kv_backend *be, exec_session **out,
                              exec_error *err) {
  plan_set_const_eval(exec_eval_const); /* the binder folds constants with exec_eval */
  plan_set_in_set_values(exec_in_set_values); /* key ranges from IN (SELECT) sets */
  *out = NULL;
  if (!db || !be || (be->local && be->local != db))
    return exec_fail(err, EXEC_MISUSE, -1, "exec_session_open_backend: %s",
                     !db || !be ? "NULL argument" : "db is not the store under the backend");
  exec_session *s = calloc(1, sizeof *s);
  if (!s) return exec_fail(err, EXEC_NOMEM, -1, "out of memory");
  cat_error ce = {0};
  s->be = *be;
  if (!(be->caps.extensions & KV_BE_EXT_OVERLAY)) {
    /* a backend that cannot read a transaction's own writes: read them on the client */
    s->be_under = *be;
    if (kv_backend_overlay_open(&s->be_under, &s->overlay_be) != KV_OK) {
      free(s);
      return exec_fail(err, EXEC_NOMEM, -1, "out of memory");
    }
    s->be = *s->overlay_be;
  }
  int rc = cat_open_backend(&s->be, &s->cat, &ce);
  if (rc != CAT_OK) {
    kv_backend_overlay_close(s->overlay_be);
    free(s);
    int code = rc == CAT_ERR_NOMEM ? EXEC_NOMEM
               : rc == CAT_ERR_CORRUPT ? EXEC_CORRUPT
               : ce.kv_code == KV_ERR_IO ? EXEC_IOERR
               : ce.kv_code == KV_ERR_READONLY ? EXEC_READONLY
               : ce.kv_code == KV_ERR_CORRUPT ? EXEC_CORRUPT
                                               : EXEC_ERROR;
    return exec_fail(err, code, -1, "%s", ce.msg);
  }
  s->db = db;
  s->sort_mem = EXEC_SORT_MEMORY_DEFAULT;
  s->join_mem = EXEC_JOIN_MEMORY_DEFAULT;
  s->write_mem = EXEC_WRITE_MEMORY_DEFAULT;
  /* Indexes left BUILDING by a crash during their backfill are rebuilt now. */
  rc = exec_index_resume(s->cat, &s->be, NULL, NULL, err);
  if (rc != EXEC_OK && rc != EXEC_READONLY) {
    cat_close(s->cat);
    kv_backend_overlay_close(s->overlay_be);
    free(s);
    return rc;
  }
  *out = s;
  return EXEC_OK;
}

int exec_session_reload_catalog(exec_session *s, exec_error *err) {
  if (s->txn)
    return exec_fail(err, EXEC_MISUSE, -1, "a transaction is open: COMMIT or ROLLBACK first");
  cat_catalog *cat = NULL;
  cat_error ce = {0};
  int rc = cat_open_backend(&s->be, &cat, &ce);
  if (rc != CAT_OK) {
    int code = rc == CAT_ERR_NOMEM ? EXEC_NOMEM
               : rc == CAT_ERR_CORRUPT ? EXEC_CORRUPT
               : ce.kv_code == KV_ERR_IO ? EXEC_IOERR
               : ce.kv_code == KV_ERR_CORRUPT ? EXEC_CORRUPT
                                               : EXEC_ERROR;
    return exec_fail(err, code, -1, "%s", ce.msg);
  }
  /* as after DDL: statements bind again at their next run, kept plans are dropped */
  exec_index_maint_free(s->maint_cache);
  s->maint_cache = NULL;
  cat_close(s->cat);
  s->cat = cat;
  s->schema_gen++;
  return EXEC_OK;
}

int exec_session_close(exec_session *s) {
  if (!s) return EXEC_OK;
  if (s->n_stmts) return EXEC_MISUSE;
  exec_txn_discard(s);
  kv_batch_free(s->spare);
  exec_index_touched_free(s->idx_touched);
  exec_index_maint_free(s->maint_cache);
  cat_close(s->cat);
  kv_backend_overlay_close(s->overlay_be);
  kv_backend_rowatomic_close(s->owned_be);
  free(s);
  return EXEC_OK;
}

bool exec_in_transaction(const exec_session *s) { return s && s->txn != NULL; }
int64_t exec_changes(const exec_session *s) { return s ? s->changes : 0; }

void exec_set_progress(exec_session *s, exec_progress_fn fn, void *arg) {
  s->progress = fn;
  s->progress_arg = fn ? arg : NULL;
}

void exec_set_interrupt(exec_session *s, const atomic_int *flag) { s->interrupt = flag; }

static _Thread_local const atomic_int *step_interrupt; /* exec_step's session's flag */

const atomic_int *exec_interrupt_flag(void) { return step_interrupt; }

static _Thread_local kv_trace *step_trace; /* the stepping statement's block trace, or NULL */

kv_trace *exec_trace_current(void) { return step_trace; }

int exec_check_interrupt(exec_error *err) {
  if (!step_interrupt || !atomic_load_explicit(step_interrupt, memory_order_relaxed))
    return EXEC_OK;
  return exec_fail(err, EXEC_INTERRUPT, -1, "interrupted");
}

void exec_set_write_memory(exec_session *s, size_t bytes) {
  s->write_mem = !bytes ? EXEC_WRITE_MEMORY_DEFAULT : bytes < (64u << 10) ? (64u << 10) : bytes;
}

void exec_set_join_memory(exec_session *s, size_t bytes) {
  s->join_mem = bytes ? bytes : EXEC_JOIN_MEMORY_DEFAULT;
}

void exec_set_sort_memory(exec_session *s, size_t bytes) {
  s->sort_mem = bytes ? bytes : EXEC_SORT_MEMORY_DEFAULT;
}

/* ---- Prepare ---------------------------------------------------------------------------- */
static int set_columns(exec_stmt *st) {
  const plan_bound *b = &st->bound;
  st->n_cols = 0;
  if (b->explain) {
    st->n_cols = 1;
    st->col_names = plan_arena_alloc(&st->arena, sizeof(char *));
    st->col_types = plan_arena_alloc(&st->arena, sizeof(cat_type));
    if (!st->col_names || !st->col_types) return EXEC_NOMEM;
    st->col_names[0] = "PLAN";
    st->col_types[0] = cat_type_of(CAT_T_VARCHAR);
    return EXEC_OK;
  }
  if (b->kind == SQL_STMT_CHECK_INDEX) return exec_check_columns(st);
  if (b->kind != SQL_STMT_SELECT) return EXEC_OK;
  const plan_select *s = b->select;
  st->n_cols = s->n_out;
  st->col_names = plan_arena_alloc(&st->arena, (size_t)(s->n_out + 1) * sizeof(char *));
  st->col_types = plan_arena_alloc(&st->arena, (size_t)(s->n_out + 1) * sizeof(cat_type));
  if (!st->col_names || !st->col_types) return EXEC_NOMEM;
  for (int i = 0; i < s->n_out; i++) {
    st->col_names[i] = s->names[i];
    st->col_types[i] = s->proj[i]->type;
  }
  return EXEC_OK;
}

/* True if e calls NOW() or CURRENT_DATE anywhere. */
static bool expr_uses_now(const plan_expr *e) {
  if (!e) return false;
  if (e->kind == PX_FUNC && (e->func == EXEC_F_NOW || e->func == EXEC_F_CURRENT_DATE))
    return true;
  for (uint32_t i = 0; i < e->n_args; i++)
    if (expr_uses_now(e->args[i])) return true;
  return false;
}

static bool select_uses_now(const plan_select *s) {
  if (!s) return false;
  bool u = expr_uses_now(s->where) || expr_uses_now(s->having) || expr_uses_now(s->limit) ||
           expr_uses_now(s->offset);
  for (int i = 0; !u && i < s->n_group; i++) u = expr_uses_now(s->group[i]);
  for (int i = 0; !u && i < s->n_aggs; i++)
    u = expr_uses_now(s->aggs[i].arg) || expr_uses_now(s->aggs[i].arg2);
  for (int i = 0; !u && i < s->n_proj; i++) u = expr_uses_now(s->proj[i]);
  for (int i = 0; !u && s->order_src && i < s->n_order; i++) u = expr_uses_now(s->order_src[i]);
  return u;
}

/* Whether a run of the bound statement needs the wall clock (NOW(), CURRENT_DATE). */
static bool bound_uses_now(const plan_bound *b) {
  if (select_uses_now(b->select)) return true;
  if (b->upsert) {
    if (select_uses_now(b->upsert->select)) return true;
    for (int r = 0; r < b->upsert->n_rows; r++)
      for (int c = 0; c < b->upsert->n_cols; c++)
        if (expr_uses_now(b->upsert->rows[r][c])) return true;
  }
  return b->del && (expr_uses_now(b->del->where) || expr_uses_now(b->del->limit));
}

int exec_stmt_bind_ast(exec_stmt *st, exec_error *err) {
  exec_plan_drop(st); /* a kept plan points into the bound statement freed here */
  exec_query_cache_free(&st->qcache); /* its table pointers may name dropped tables */
  plan_arena_free(&st->arena);
  char msg[EXEC_ERRMSG_MAX];
  int off = -1;
  int kind = st->ast->kind;
  if (kind == SQL_STMT_SELECT || kind == SQL_STMT_UPSERT || kind == SQL_STMT_DELETE) {
    int rc = plan_bind_opt(st->s->cat, st->ast, st->sql, &st->arena, &st->bound, msg,
                           sizeof msg, &off, st->no_key_lists ? PLAN_BIND_NO_KEY_LISTS : 0);
    if (rc) return exec_fail(err, rc, off, "%s", msg);
  } else {
    memset(&st->bound, 0, sizeof st->bound);
    st->bound.kind = kind;
  }
  if (set_columns(st)) return exec_fail(err, EXEC_NOMEM, -1, "out of memory");
  st->uses_now = bound_uses_now(&st->bound);
  st->schema_gen = st->s->schema_gen;
  st->cover_epoch = cat_row_cover_epoch(st->s->cat);
  return EXEC_OK;
}

int exec_prepare(exec_session *s, const char *sql, size_t len, exec_stmt **out,
                 const char **tail, exec_error *err) {
  *out = NULL;
  if (err) {
    err->code = EXEC_OK;
    err->offset = -1;
    err->msg[0] = 0;
  }
  sql_stmt *ast = NULL;
  sql_error perr;
  const char *t = NULL;
  int prc = sql_parse(sql, len, &ast, &t, &perr);
  if (tail) *tail = t ? t : sql + len;
  if (prc != SQL_OK) {
    int code = prc == SQL_ERR_NOMEM ? EXEC_NOMEM : prc == SQL_ERR_DEPTH ? EXEC_TOOBIG
                                                                        : EXEC_SYNTAX;
    return exec_fail(err, code, (int)perr.offset, "%s", perr.message);
  }
  if (!ast) return EXEC_OK;
  exec_stmt *st = calloc(1, sizeof *st);
  size_t n = t ? (size_t)(t - sql) : len;
  if (st) st->sql = malloc(n + 1);
  if (!st || !st->sql) {
    if (st) free(st);
    sql_stmt_free(ast);
    return exec_fail(err, EXEC_NOMEM, -1, "out of memory");
  }
  memcpy(st->sql, sql, n);
  st->sql[n] = 0;
  st->sql_len = n;
  st->s = s;
  st->ast = ast;
  plan_arena_init(&st->arena);
  plan_arena_init(&st->run_arena);
  plan_arena_init(&st->plan_arena);
  st->n_params = ast->nparam;
  if (st->n_params) {
    st->params = calloc((size_t)st->n_params, sizeof *st->params);
    st->run_params = calloc((size_t)st->n_params, sizeof *st->run_params);
    st->param_bytes = calloc((size_t)st->n_params, sizeof *st->param_bytes);
    st->param_cap = calloc((size_t)st->n_params, sizeof *st->param_cap);
    st->q_params = calloc((size_t)st->n_params, sizeof *st->q_params);
    if (!st->params || !st->run_params || !st->param_bytes || !st->param_cap || !st->q_params) {
      s->n_stmts++;
      exec_finalize(st);
      return exec_fail(err, EXEC_NOMEM, -1, "out of memory");
    }
    for (int i = 0; i < st->n_params; i++) st->params[i] = cat_v_null(cat_type_of(0));
  }
  s->n_stmts++;
  int rc = exec_stmt_bind_ast(st, err);
  if (rc) {
    exec_finalize(st);
    return rc;
  }
  *out = st;
  return EXEC_OK;
}

static void run_cleanup(exec_stmt *st) {
  if (st->x_open) {
    exec_query_close(&st->x); /* a run cut short: its counters are dropped with the reset */
    st->x_open = false;
    exec_txn_reader_done(st);
  }
  if (!st->q_kept) exec_plan_drop(st);
  if (st->del_built) plan_scan_free(&st->del_scan);
  st->del_built = false;
  if (!st->q_kept) st->q.n_subs = 0; /* its subqueries' plans go with the run arena */
  exec_free_subqueries(st);
  plan_arena_reset(&st->run_arena);
  st->lines = NULL;
  st->check_rows = NULL;
  st->n_lines = 0;
}

void exec_finalize(exec_stmt *st) {
  if (!st) return;
  run_cleanup(st);
  exec_plan_drop(st);
  plan_arena_free(&st->plan_arena);
  exec_query_cache_free(&st->qcache);
  exec_upsert_cache_free(st->up);
  plan_arena_free(&st->run_arena);
  free(st->q_params);
  free(st->q_pbytes);
  plan_arena_free(&st->arena);
  for (int i = 0; st->param_bytes && i < st->n_params; i++) free(st->param_bytes[i]);
  free(st->param_bytes);
  free(st->param_cap);
  free(st->params);
  free(st->run_params);
  sql_stmt_free(st->ast);
  free(st->sql);
  kv_trace_free(st->trace);
  st->s->n_stmts--;
  free(st);
}

/* ---- Parameters ------------------------------------------------------------------------- */
int exec_param_count(const exec_stmt *st) { return st->n_params; }

/* EXEC_OK when parameter i may be bound now, else the error. */
static int bind_check(exec_stmt *st, int i, exec_error *err) {
  if (i < 1 || i > st->n_params)
    return exec_fail(err, EXEC_RANGE, -1, "parameter index %d out of range (1..%d)", i,
                     st->n_params);
  if (st->state == ST_RUNNING)
    return exec_fail(err, EXEC_MISUSE, -1, "cannot bind while the statement runs; reset it");
  return EXEC_OK;
}

/* The fields are stored one by one, not as a whole cat_value built on the stack and copied:
** the copy's wide loads of fields just stored narrow stall (store forwarding), and that was
** a visible part of a prepared load's per-row cost. */
int exec_bind_double(exec_stmt *st, int i, double d, exec_error *err) {
  int rc = bind_check(st, i, err);
  if (rc) return rc;
  cat_value *p = &st->params[i - 1];
  p->type = cat_type_of(CAT_T_DOUBLE);
  p->is_null = false;
  p->u.d = d;
  return EXEC_OK;
}

int exec_bind_null(exec_stmt *st, int i, cat_type type, exec_error *err) {
  int rc = bind_check(st, i, err);
  if (rc) return rc;
  cat_value *p = &st->params[i - 1];
  p->type = type;
  p->is_null = true;
  memset(&p->u, 0, sizeof p->u);
  return EXEC_OK;
}

int exec_bind(exec_stmt *st, int i, const cat_value *v, exec_error *err) {
  int brc = bind_check(st, i, err);
  if (brc) return brc;
  if (v->is_null || !cat_type_has_bytes(v->type.id)) {
    st->params[i - 1] = *v;
    return EXEC_OK;
  }
  /* the parameter's buffer is kept from bind to bind: no allocation once it is large
     enough (memmove: the caller may pass bytes it read back from this buffer) */
  const uint8_t *src = v->u.s.p;
  uint32_t len = v->u.s.len;
  uint8_t *p = st->param_bytes[i - 1];
  if (!p || st->param_cap[i - 1] < (size_t)len + 1) {
    size_t cap = (size_t)len + 1 < 32 ? 32 : (size_t)len + 1;
    p = malloc(cap);
    if (!p) return exec_fail(err, EXEC_NOMEM, -1, "out of memory");
    if (len) memcpy(p, src, len);
    free(st->param_bytes[i - 1]);
    st->param_bytes[i - 1] = p;
    st->param_cap[i - 1] = cap;
  } else if (len) {
    memmove(p, src, len);
  }
  cat_value *d = &st->params[i - 1];
  d->type = v->type;
  d->is_null = false;
  d->u.s.p = p;
  d->u.s.len = len;
  return EXEC_OK;
}

int exec_clear_bindings(exec_stmt *st) {
  for (int i = 0; i < st->n_params; i++) {
    free(st->param_bytes[i]);
    st->param_bytes[i] = NULL;
    st->param_cap[i] = 0;
    st->params[i] = cat_v_null(cat_type_of(0));
  }
  return EXEC_OK;
}

/* Parameters converted to the type they were bound against where exact (5 for an INTEGER
** key column, '2016-01-01' for a DATE). */
static int prepare_params(exec_stmt *st, exec_error *err) {
  for (int i = 0; i < st->n_params; i++) {
    cat_value v = st->params[i];
    st->run_params[i] = v;
    const cat_type *t = st->bound.param_types ? &st->bound.param_types[i] : NULL;
    if (v.is_null || !t || t->id == 0 || t->id == v.type.id) continue;
    cat_value out;
    cat_error ce; /* per parameter: set the fields, do not zero the message buffer */
    ce.code = CAT_OK;
    ce.kv_code = 0;
    ce.msg[0] = 0;
    uint8_t *buf = plan_arena_alloc(&st->run_arena, 80);
    if (!buf) return exec_fail(err, EXEC_NOMEM, -1, "out of memory");
    cat_type target = *t;
    if (target.id == CAT_T_DECIMAL) target.precision = 0;
    if (cat_value_cast(&v, &target, &out, buf, 80, &ce) != CAT_OK) {
      if (cat_type_is_string(v.type.id) && !cat_type_is_string(t->id))
        return exec_fail(err, EXEC_CONSTRAINT, -1, "parameter %d: %s", i + 1, ce.msg);
      continue;
    }
    int cmp = 1;
    if (cat_type_is_string(v.type.id) || cat_type_is_string(t->id) ||
        (cat_value_compare(&out, &v, &cmp, NULL) == CAT_OK && cmp == 0))
      st->run_params[i] = out;
  }
  return EXEC_OK;
}

/* ---- Step ------------------------------------------------------------------------------- */
static int64_t wall_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* Phoenix's dynamic columns: the families an UPSERT's dynamic columns name that its table
** lacks (plan_upsert.new_families) are created (cat_add_families, one catalog commit, as
** ALTER TABLE ADD creates an added column's), then the statement is bound again over them. */
static int dyn_families(exec_stmt *st, exec_error *err) {
  exec_session *s = st->s;
  const plan_upsert *u = st->bound.upsert;
  if (s->txn)
    return exec_fail(err, EXEC_ERROR, -1, "UPSERT INTO %s writes a dynamic column of family %s, "
                     "which the table does not have: creating a family is not allowed inside a "
                     "transaction; COMMIT or ROLLBACK first", u->table->name, u->new_families[0]);
  cat_error ce = {0};
  if (cat_add_families(s->cat, u->table->name, u->new_families, u->n_new_families, &ce) !=
      CAT_OK)
    return exec_fail(err, ce.code == CAT_ERR_NOMEM ? EXEC_NOMEM : EXEC_ERROR, -1,
                     "UPSERT INTO %s: creating the family of a dynamic column: %s",
                     u->table->name, ce.msg);
  s->schema_gen++; /* as after DDL: other statements bind again */
  int rc = exec_stmt_bind_ast(st, err);
  if (rc) return rc;
  if (st->bound.upsert->n_new_families)
    return exec_fail(err, EXEC_ERROR, -1, "UPSERT INTO %s: family %s is still missing",
                     st->bound.upsert->table->name, st->bound.upsert->new_families[0]);
  return EXEC_OK;
}

static int first_step(exec_stmt *st, exec_error *err) {
  exec_session *s = st->s;
  st->changes = 0;
  st->act = NULL;
  int kind = st->ast->kind;
  /* after DDL, or after a write made a family stop covering every row (a plan that skipped
     the key family for it would miss rows): bind and plan again */
  if ((st->schema_gen != s->schema_gen || st->cover_epoch != cat_row_cover_epoch(s->cat)) &&
      (kind == SQL_STMT_SELECT || kind == SQL_STMT_UPSERT || kind == SQL_STMT_DELETE)) {
    int rc = exec_stmt_bind_ast(st, err);
    if (rc) return rc;
  }
  if (kind == SQL_STMT_UPSERT && st->bound.upsert && st->bound.upsert->n_new_families &&
      (!st->bound.explain || st->bound.analyze)) { /* EXPLAIN ANALYZE writes: it runs */
    int rc = dyn_families(st, err);
    if (rc) return rc;
  }
  int arc = exec_as_of_check(st, err); /* AS OF / the session's read time (exec/as_of.c) */
  if (arc) return arc;
  switch (kind) {
    case SQL_STMT_BEGIN: return exec_txn_begin(s, err);
    case SQL_STMT_COMMIT: return exec_txn_commit(s, err);
    case SQL_STMT_ROLLBACK: return exec_txn_rollback(s, err);
    case SQL_STMT_SELECT: case SQL_STMT_UPSERT: case SQL_STMT_DELETE: break;
    case SQL_STMT_CHECK_INDEX: return exec_run_check(st, err);
    default: {
      if (s->txn)
        return exec_fail(err, EXEC_ERROR, -1,
                         "DDL is not allowed inside a transaction; COMMIT or ROLLBACK first");
      int rc = exec_ddl_run_progress(s->cat, s->db, st->ast, st->sql, s->progress,
                                     s->progress_arg, err);
      s->schema_gen++;
      st->schema_gen = s->schema_gen;
      return rc;
    }
  }
  int rc = prepare_params(st, err);
  if (rc) return rc;
  st->now_us = st->uses_now ? wall_us() : 0; /* after a re-bind: uses_now is current */
  return exec_run_dml(st, err);
}

int exec_step(exec_stmt *st, exec_error *err) {
  if (err) {
    err->code = EXEC_OK;
    err->offset = -1;
    err->msg[0] = 0;
  }
  if (st->state == ST_DONE) return EXEC_DONE;
  if (st->state == ST_FAILED)
    return exec_fail(err, EXEC_MISUSE, -1, "statement failed; reset it before stepping again");
  int rc;
  if (st->x_open && st->x_lost) {
    /* opened inside a transaction whose writes are gone (exec/txn.c): the rows it gave may
       be rows that never were; SQLite fails such a read the same way */
    st->state = ST_FAILED;
    return exec_fail(err, EXEC_ABORT, -1,
                     "the transaction this query was reading was rolled back while it ran "
                     "(it saw that transaction's writes); reset the statement to run it again");
  }
  const atomic_int *outer = step_interrupt; /* a step inside a step (none today) */
  kv_trace *outer_trace = step_trace;
  step_interrupt = st->s->interrupt;
  step_trace = st->tracing ? st->trace : NULL;
  int64_t outer_as_of = exec_as_of_swap(st->as_of_ms); /* the run's read time (exec/as_of.c) */
  if ((rc = exec_check_interrupt(err)) != EXEC_OK) {
    /* interrupted before it began, or between rows */
  } else if (st->state == ST_READY) {
    st->state = ST_RUNNING;
    if (step_trace) kv_trace_clear(step_trace); /* a run's trace, as its metrics */
    rc = first_step(st, err);
    if (rc == EXEC_OK) rc = EXEC_DONE;
  } else if (st->x_open && !st->lines && !st->check_rows &&
             st->schema_gen == st->s->schema_gen) {
    rc = exec_query_next(&st->x, err); /* exec_next_row's common case, without its call */
    if (rc == EXEC_ROW) st->row = st->x.out;
  } else {
    rc = exec_next_row(st, err);
  }
  step_interrupt = outer;
  step_trace = outer_trace;
  exec_as_of_swap(outer_as_of);
  if (rc == EXEC_DONE) {
    st->state = ST_DONE;
    if (st->x_open) {
      exec_query_close(&st->x);
      st->act = &st->x.act; /* read in place until the next run opens x again */
      st->x_open = false;
      exec_txn_reader_done(st);
    }
    if (st->ast->kind == SQL_STMT_UPSERT || st->ast->kind == SQL_STMT_DELETE)
      st->s->changes = st->changes;
  } else if (rc != EXEC_ROW) {
    st->state = ST_FAILED;
    if (err && err->code == EXEC_OK) exec_fail(err, rc, -1, "error %d", rc);
  }
  return rc;
}

int exec_reset(exec_stmt *st) {
  run_cleanup(st);
  st->act = NULL;
  st->scan_table = NULL;
  st->state = ST_READY;
  return EXEC_OK;
}

/* ---- Columns and metrics -------------------------------------------------------------- */
int exec_column_count(const exec_stmt *st) { return st->n_cols; }

const char *exec_column_name(const exec_stmt *st, int i) {
  return i >= 0 && i < st->n_cols ? st->col_names[i] : NULL;
}

const cat_type *exec_column_type(const exec_stmt *st, int i) {
  if (i < 0 || i >= st->n_cols || st->col_types[i].id == 0) return NULL;
  return &st->col_types[i];
}

const cat_value *exec_column_value(const exec_stmt *st, int i) {
  if (i < 0 || i >= st->n_cols || !st->row) return NULL;
  return &st->row[i];
}

const cat_value *exec_row_values(const exec_stmt *st) { return st->n_cols ? st->row : NULL; }

void exec_get_metrics(const exec_stmt *st, exec_metrics *out) {
  static const plan_actuals none;
  memset(out, 0, sizeof *out);
  const plan_actuals *a = st->act ? st->act : &none;
  kv_scan_metrics live;
  const kv_scan_metrics *m = &a->kv;
  uint64_t assembled = a->rows_assembled;
  if (st->x_open && st->x.scan_open) {
    if (st->x.scan.kv) kv_be_scan_metrics(st->x.scan.be, st->x.scan.kv, &live);
    else live = st->x.scan.m;
    m = &live;
    assembled = st->x.scan.rows_assembled;
  }
  out->rows_examined = m->rows_examined;
  out->rows_filtered = m->rows_filtered;
  out->rows_returned = m->rows_returned;
  out->ranges_sought = m->ranges_sought;
  out->rows_assembled = assembled;
  const cat_table *t = st->scan_table;
  for (uint32_t i = 0; i < m->n_families && i < 16; i++) {
    exec_family_metrics *f = &out->families[out->n_families++];
    f->m = m->families[i];
    const char *fname = "?";
    for (int k = 0; t && k < t->n_families; k++)
      if (t->families[k].kv_id == m->families[i].family_id) fname = t->families[k].name;
    snprintf(f->family, sizeof f->family, "%s.%s", t ? t->name : "?", fname);
  }
}

const char *exec_scan_kind(const exec_stmt *st) { return st->scan_kind; }

void exec_get_plan_stats(const exec_stmt *st, exec_plan_stats *out) { *out = st->plan_stats; }
