/*
** exec/sequence.c: NEXT VALUE FOR / CURRENT VALUE FOR values per row (contracts in
** exec/sequence.h). The sequences and their durable block claims are the catalog's
** (catalog/cat_sequence.c); here the statement's references get their values, in the
** parameter slots the binder gave them (planner/bind_sequence.c), NEXT ones first so that a
** CURRENT VALUE FOR of the same row sees the value NEXT VALUE FOR gave it.
** Not here: where the references may be written (the binder), the claim's record.
*/
#include "exec/sequence.h"

#include <stdio.h>

#include "exec/engine_int.h"

void exec_set_sequence_flush(exec_session *s, bool flush) { s->seq_flush = flush; }

/* The value of reference k of st's statement into its parameter slot. */
static int one(exec_stmt *st, int k, exec_error *err) {
  const plan_bound *b = &st->bound;
  const plan_seqref *r = &b->seqs[k];
  cat_error ce = {0};
  int64_t v = 0;
  int rc = r->next ? cat_sequence_next(st->s->cat, r->name, st->s->seq_flush, &v, &ce)
                   : cat_sequence_current(st->s->cat, r->name, &v, &ce);
  if (rc == CAT_OK) {
    st->all_params[r->param - 1] = cat_v_int(CAT_T_BIGINT, v);
    return EXEC_OK;
  }
  if (rc == CAT_ERR_NOMEM) return exec_fail(err, EXEC_NOMEM, -1, "out of memory");
  if (rc == CAT_ERR_KV) /* nothing handed out: the store's error as it is */
    return exec_fail(err, exec_status_of_kv(ce.kv_code), (int)r->off, "%s", ce.msg);
  char pos[64];
  plan_position(st->sql, r->off, pos, sizeof pos);
  return exec_fail(err, EXEC_ERROR, (int)r->off, "%s%s", ce.msg, pos);
}

int exec_seq_row(void *arg, exec_error *err) {
  exec_stmt *st = arg;
  const plan_bound *b = &st->bound;
  for (int pass = 0; pass < 2; pass++) /* NEXT, then CURRENT */
    for (int k = 0; k < b->n_seqs; k++) {
      if (b->seqs[k].next != (pass == 0)) continue;
      int rc = one(st, k, err);
      if (rc) return rc;
    }
  return EXEC_OK;
}
