/*
** exec/op_hashjoin.c: the hash join (planner/plan_join.h PLAN_JOIN_HASH). The build input
** (the one the planner estimated smaller) is read whole first: each row's key values are
** evaluated over the joined row and held with the input's slots (exec_join_hold, counted
** against the join memory); rows whose key has a NULL never match and are dropped, except on
** a side the join keeps whole (the left of a LEFT JOIN, the right of a RIGHT JOIN, both of a
** FULL JOIN), which keeps them for the unmatched sweep. Then buckets chain the
** held rows by key hash, and each row of the other input looks its key up: every held row
** with an equal key (exec/eval.h exec_value_cmp, NULL equal to nothing) is put back into the
** joined row and the residual checked. Outer joins: a row of a side the join keeps that
** nothing matched comes out with the other side's slots NULL, at once when that side
** probes, or, when it was built, in a sweep over the held rows nothing matched once the
** probe input is exhausted. A child/parent join narrows the probe leaf to the held keys
** before the first probe (exec/op_cpjoin.c). Semi and anti joins (x [NOT] IN (SELECT ...))
** build the right input's keys alone and pass each left row at most once (semi_next has
** SQL's NULL rules for NOT IN; a correlated NOT EXISTS passes a left row that no right row
** matches, a NULL key included). Past the join memory they spill as the other hash joins do
** (exec/op_spill.c): the left rows are partitioned like the held keys and each partition's
** left rows are tested against its keys, a left row passing at most once across batches
** (exec_spill_first_match) and an anti join's only after the last batch. A semi join that is a
** child/parent join narrows its left leaf to the subquery's keys once they are held, as an
** inner join does (not once spilled).
**
** Not here: the tree and the shared helpers (exec/op_join.c), the nested loop
** (exec/op_nljoin.c).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/op_join.h"

#define NO_ROW UINT32_MAX /* end of a bucket chain */

static uint64_t keys_hash(const cat_value *k, int n) {
  uint64_t h = 0xCBF29CE484222325ull;
  for (int i = 0; i < n; i++) h = (h ^ exec_value_hash(&k[i])) * 0x100000001B3ull + 0x9E37;
  return h;
}

static bool keys_null(const cat_value *k, int n) {
  for (int i = 0; i < n; i++)
    if (k[i].is_null) return true;
  return false;
}

static bool keys_equal(const cat_value *a, const cat_value *b, int n) {
  for (int i = 0; i < n; i++)
    if (exec_value_cmp(&a[i], &b[i]) != 0) return false;
  return true;
}

/* The key expressions kx over row into j->keys (j->kscratch). */
static int eval_keys(exec_join *j, plan_expr *const *kx, const cat_value *row,
                     exec_error *err) {
  exec_arena_reset(&j->kscratch);
  j->ev.row = row;
  j->ev.scratch = &j->kscratch;
  for (int i = 0; i < j->pn->n_keys; i++) {
    int rc = exec_eval(&j->ev, kx[i], &j->keys[i]);
    if (rc) return exec_join_eval_err(j, rc, err);
  }
  return EXEC_OK;
}

/* Chain the held rows by key hash into buckets (the rows of one partition when spilled);
** a join that keeps the held side's unmatched rows gets their matched flags. */
static int index_held(exec_join *j, exec_error *err) {
  const plan_join_node *pn = j->pn;
  int nk = pn->n_keys;
  bool keep_nulls = exec_join_keeps(pn, pn->build_left);
  size_t nb = 16;
  while (nb < 2 * j->n_held) nb *= 2;
  j->n_buckets = nb;
  j->head = malloc(nb * sizeof *j->head);
  j->next = malloc((j->n_held + 1) * sizeof *j->next);
  if (keep_nulls) j->matched = calloc(j->n_held + 1, sizeof *j->matched);
  if (!j->head || !j->next || (keep_nulls && !j->matched)) {
    err->code = EXEC_NOMEM;
    err->offset = -1;
    snprintf(err->msg, sizeof err->msg, "out of memory");
    return EXEC_NOMEM;
  }
  memset(j->head, 0xFF, nb * sizeof *j->head);
  j->mem += nb * sizeof *j->head;
  if (j->mem > pn->act->peak_bytes) pn->act->peak_bytes = j->mem;
  for (size_t i = j->n_held; i-- > 0;) { /* chains in input order */
    exec_mrow *h = j->held[i];
    if (keys_null(h->v, nk)) continue;
    h->hash = keys_hash(h->v, nk);
    size_t b = h->hash & (nb - 1);
    j->next[i] = j->head[b];
    j->head[b] = (uint32_t)i;
  }
  return EXEC_OK;
}

/* Past the join memory: the probe input read whole into its partitions (exec/op_spill.c),
** after the build input's; then the first partition is loaded. */
static int spill_probe(exec_join *j, cat_value *row, exec_error *err) {
  const plan_join_node *pn = j->pn;
  bool bl = pn->build_left;
  exec_join *probe = bl ? j->right : j->left;
  int pfrom = bl ? pn->mid : pn->lo, pto = bl ? pn->hi : pn->mid, nk = pn->n_keys;
  int rc = exec_spill_end_input(j, true, err);
  while (!rc) {
    rc = exec_join_next(probe, row, err);
    if (rc == EXEC_DONE) break;
    if (rc != EXEC_ROW) return rc;
    if (bl) pn->act->rows_right++;
    else pn->act->rows_left++;
    rc = eval_keys(j, bl ? pn->rkeys : pn->lkeys, row, err);
    if (rc) return rc;
    bool null = keys_null(j->keys, nk);
    if (null && !exec_join_keeps(pn, !bl) && pn->kind != SQL_JOIN_ANTI_EXISTS)
      continue; /* it can never come out (a NOT EXISTS passes it: nothing matches NULL) */
    rc = exec_spill_add(j, false, null ? 0 : keys_hash(j->keys, nk), j->keys, nk, row + pfrom,
                        pto - pfrom, err);
  }
  if (rc == EXEC_DONE) rc = EXEC_OK;
  if (!rc) rc = exec_spill_end_input(j, false, err);
  if (!rc) rc = exec_spill_next_part(j, index_held, err);
  if (rc == EXEC_DONE) j->done = true;
  return rc == EXEC_ROW || rc == EXEC_DONE ? EXEC_OK : rc;
}

static int build(exec_join *j, cat_value *row, exec_error *err) {
  const plan_join_node *pn = j->pn;
  bool bl = pn->build_left;
  exec_join *in = bl ? j->left : j->right;
  int from = bl ? pn->lo : pn->mid, to = bl ? pn->mid : pn->hi, nk = pn->n_keys;
  bool keep_nulls = exec_join_keeps(pn, bl); /* the held rows come out unmatched too */
  bool semi = pn->kind == SQL_JOIN_SEMI || pn->kind == SQL_JOIN_ANTI ||
              pn->kind == SQL_JOIN_ANTI_EXISTS; /* keys only held */
  char what[160];
  if (bl) snprintf(what, sizeof what, "hash join's build input (the tables before %s)",
                   pn->right->leaf_name);
  else snprintf(what, sizeof what, "hash join's build input (%s)", pn->right->leaf_name);
  j->built = true;
  for (;;) {
    int rc = exec_join_next(in, row, err);
    if (rc == EXEC_DONE) break;
    if (rc != EXEC_ROW) return rc;
    if (bl) pn->act->rows_left++;
    else pn->act->rows_right++;
    rc = eval_keys(j, bl ? pn->lkeys : pn->rkeys, row, err);
    if (rc) return rc;
    bool null = keys_null(j->keys, nk);
    if (null) j->held_null = true;
    if (null && !keep_nulls) continue;
    uint64_t hash = null ? 0 : keys_hash(j->keys, nk);
    if (j->spill) {
      rc = exec_spill_add(j, true, hash, j->keys, nk, row + from, semi ? 0 : to - from, err);
      if (rc) return rc;
      continue;
    }
    rc = exec_join_hold(j, j->keys, nk, row, from, semi ? from : to, what, err);
    if (rc == EXEC_OK || rc == EXEC_TOOBIG) j->held[j->n_held - 1]->hash = hash;
    if (rc == EXEC_TOOBIG) { /* past the join memory (this row held): to disk */
      rc = exec_spill_begin(j, err);
      if (rc) return rc;
      continue;
    }
    if (rc) return rc;
  }
  if (j->spill) return spill_probe(j, row, err);
  return index_held(j, err);
}

/* A spilled join's next partition (exec/op_spill.c): loaded and indexed, the probe reading
** its rows from the start. EXEC_ROW when there is one, EXEC_DONE after the last. */
static int next_part(exec_join *j, exec_error *err) {
  j->in_sweep = false;
  j->sweep = 0;
  j->have_row = false;
  int rc = exec_spill_next_part(j, index_held, err);
  if (rc == EXEC_DONE) j->done = true;
  return rc;
}

/* A held row whose key equals j->keys (cur_hash set), or NO_ROW. */
static uint32_t lookup(const exec_join *j) {
  for (uint32_t i = j->head[j->cur_hash & (j->n_buckets - 1)]; i != NO_ROW; i = j->next[i]) {
    const exec_mrow *h = j->held[i];
    if (h->hash == j->cur_hash && keys_equal(h->v, j->keys, j->pn->n_keys)) return i;
  }
  return NO_ROW;
}

/* A semi join (x IN (SELECT ...)): each left row once when its key is among the built
** right input's; an anti join (x NOT IN (SELECT ...)), SQL's rule: every left row when the
** right input is empty; none when a right key is NULL (the answer is unknown); else each
** left row whose key is not NULL and not among them. The right slots stay NULL. */
static int semi_next(exec_join *j, cat_value *row, exec_error *err) {
  const plan_join_node *pn = j->pn;
  bool not_in = pn->kind == SQL_JOIN_ANTI, anti = not_in || pn->kind == SQL_JOIN_ANTI_EXISTS;
  if (j->spill) { /* partition by partition (the right input had rows: it spilled) */
    if (j->done || (not_in && j->held_null)) return EXEC_DONE;
    for (;;) {
      int rc = exec_spill_next_probe(j, row, err);
      if (rc == EXEC_DONE) {
        if ((rc = next_part(j, err)) != EXEC_ROW) return rc;
        continue;
      }
      if (rc != EXEC_ROW) return rc;
      exec_join_pad(j, row, pn->mid, pn->hi);
      bool matched = false;
      if (!keys_null(j->keys, pn->n_keys)) {
        j->cur_hash = keys_hash(j->keys, pn->n_keys);
        matched = lookup(j) != NO_ROW;
      }
      if (anti ? exec_spill_pad_probe(j, matched) : matched && exec_spill_first_match(j))
        return EXEC_ROW; /* anti: unmatched in every batch; semi: its first match */
    }
  }
  bool all = anti && (pn->act->rows_right == 0 || (!not_in && j->n_held == 0));
  if (not_in && !all && j->held_null) return EXEC_DONE;
  if (!anti && j->n_held == 0) return EXEC_DONE;
  for (;;) {
    int rc = exec_join_next(j->left, row, err);
    if (rc != EXEC_ROW) return rc;
    pn->act->rows_left++;
    exec_join_pad(j, row, pn->mid, pn->hi);
    if (all || (!anti && j->cp_exact)) return EXEC_ROW; /* cp_exact: exec/op_cpjoin.c */
    rc = eval_keys(j, pn->lkeys, row, err);
    if (rc) return rc;
    if (keys_null(j->keys, pn->n_keys)) { /* NULL = c is never true */
      if (anti && !not_in) return EXEC_ROW; /* NOT EXISTS: nothing matched */
      continue;
    }
    j->cur_hash = keys_hash(j->keys, pn->n_keys);
    if ((lookup(j) != NO_ROW) != anti) return EXEC_ROW;
  }
}

int exec_hashjoin_next(exec_join *j, cat_value *row, exec_error *err) {
  const plan_join_node *pn = j->pn;
  int rc;
  bool bl = pn->build_left;
  exec_join *probe = bl ? j->right : j->left;
  bool semi = pn->kind == SQL_JOIN_SEMI || pn->kind == SQL_JOIN_ANTI ||
              pn->kind == SQL_JOIN_ANTI_EXISTS;
  if (semi) {
    if (!j->built) {
      if ((rc = build(j, row, err)) != EXEC_OK) return rc;
      if (pn->cp_n && j->spill) pn->act->cp_state = PLAN_CP_SPILLED;
      else if (pn->cp_n && (rc = exec_cpjoin_narrow(j, probe, err)) != EXEC_OK) return rc;
    }
    return semi_next(j, row, err);
  }
  if (!j->built) {
    if ((rc = build(j, row, err)) != EXEC_OK) return rc;
    if (j->done) return EXEC_DONE;
    if (pn->cp_n && j->spill) pn->act->cp_state = PLAN_CP_SPILLED;
    else if (pn->cp_n && (rc = exec_cpjoin_narrow(j, probe, err)) != EXEC_OK) return rc;
  }
  int bfrom = bl ? pn->lo : pn->mid, bto = bl ? pn->mid : pn->hi, nk = pn->n_keys;
  bool pad_probe = exec_join_keeps(pn, !bl); /* a probe row nothing matched comes out */
  bool sweep = exec_join_keeps(pn, bl);       /* so does such a held row, at the end */
  int pfrom = bl ? pn->mid : pn->lo, pto = bl ? pn->hi : pn->mid; /* the probe's slots */
  for (;;) {
    if (j->in_sweep) {
      if (exec_join_sweep(j, nk, row, bfrom, pfrom, pto)) return EXEC_ROW;
      if (!j->spill) return EXEC_DONE;
      if ((rc = next_part(j, err)) != EXEC_ROW) return rc;
      continue;
    }
    if (!j->have_row) {
      if (j->n_held == 0 && !pad_probe) { /* nothing can come out (of this partition) */
        if (!j->spill) return EXEC_DONE;
        if ((rc = next_part(j, err)) != EXEC_ROW) return rc;
        continue;
      }
      rc = j->spill ? exec_spill_next_probe(j, row, err) : exec_join_next(probe, row, err);
      if (rc == EXEC_DONE && sweep) {
        j->in_sweep = true;
        continue;
      }
      if (rc == EXEC_DONE && j->spill) {
        if ((rc = next_part(j, err)) != EXEC_ROW) return rc;
        continue;
      }
      if (rc != EXEC_ROW) return rc;
      if (!j->spill) { /* a spilled row was counted, and its keys kept, when written */
        if (bl) pn->act->rows_right++;
        else pn->act->rows_left++;
        rc = eval_keys(j, bl ? pn->rkeys : pn->lkeys, row, err);
        if (rc) return rc;
      }
      j->have_row = true;
      j->row_matched = false;
      if (keys_null(j->keys, nk)) {
        j->pos = NO_ROW;
      } else {
        const exec_mrow *m = j->last_match && !j->spill ? j->held[j->last_match - 1] : NULL;
        j->cur_hash = m && keys_equal(m->v, j->keys, nk) ? m->hash : keys_hash(j->keys, nk);
        j->pos = j->head[j->cur_hash & (j->n_buckets - 1)];
      }
    }
    while (j->pos != NO_ROW) {
      uint32_t i = j->pos;
      j->pos = j->next[i];
      const exec_mrow *h = j->held[i];
      if (h->hash != j->cur_hash || !keys_equal(h->v, j->keys, nk)) continue;
      j->last_match = i + 1;
      int ok = exec_join_pair(j, i, nk, row, bfrom, err);
      if (ok < 0) return -ok;
      if (ok) return EXEC_ROW;
    }
    j->have_row = false;
    bool pad = pad_probe && (j->spill ? exec_spill_pad_probe(j, j->row_matched)
                                      : !j->row_matched);
    if (pad) {
      exec_join_pad(j, row, bfrom, bto);
      return EXEC_ROW;
    }
  }
}
