/*
** exec/op_spill.c: the hash join past its memory bound (a partitioned, "Grace" hash join).
** When the build input's held rows pass the join memory, the join stops holding them: every
** build row (its key values, then its slots) is written to one of EXEC_SPILL_PARTS partitions by
** the top bits of its key hash, the rows held so far first; then the probe input is read
** whole and partitioned the same way. A partition's rows go to a buffer of SPILL_CHUNK bytes
** that is appended to the side's temporary file (kv/db/temp.h, in the store's folder) when
** full, so each side is one file of chunks, each chunk one partition's. Then the partitions
** are joined one by one, as the in-memory join does (exec/op_hashjoin.c): the build rows of
** partition p held and indexed, its probe rows streamed past them, an outer join's
** unmatched rows padded or swept per partition (rows of equal keys share a partition; rows
** with a NULL key go to partition 0, which nothing matches; the files are exec/spill_file.h's). A partition whose build rows
** alone pass the memory bound (one key repeated that often) is joined in batches: as many
** build rows as the bound takes, the partition's probe rows streamed past each batch, a
** probe row's "matched" kept in a bitmap across batches so that an outer join pads it only
** after the last. A semi or anti join (x [NOT] IN (SELECT ...), [NOT] EXISTS) spills the
** same way, its build rows being the subquery's keys alone, with the same bitmap: a semi
** join passes a left row at its first match, an anti join after the last batch when none
** matched. Rows are written as their cat_value structs followed by their string bytes: the
** files live only while the join runs, in this process.
**
** Not here: the in-memory join and its state machine (exec/op_hashjoin.c), temporary files
** (kv/db/temp.c).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/op_join.h"
#include "exec/spill_file.h"

struct exec_spill {
  exec_spill_file s[2]; /* [0] the build input, [1] the probe input */
  int part;            /* the partition being joined, -1 before the first */
  exec_spill_reader br, pr; /* the partition's build rows (batch after batch), its probe rows */
  bool more_build;     /* build rows of the partition are left for another batch */
  uint64_t probe_idx;  /* the current probe row's number in the partition (from 1) */
  uint8_t *pmatched;   /* a probe row per bit: matched in an earlier batch (outer joins
                          that keep the probe side), or NULL */
  size_t pm_bytes;     /* bytes at pmatched */
};

static int nomem(exec_error *err) {
  err->code = EXEC_NOMEM;
  err->offset = -1;
  snprintf(err->msg, sizeof err->msg, "out of memory");
  return EXEC_NOMEM;
}

/* Add row v[0..n) (key values first) with key hash `hash` to the side's file. */
static int add_row(exec_join *j, exec_spill_file *f, uint64_t hash, const cat_value *v, int n,
                   exec_error *err) {
  uint64_t before = f->bytes;
  int rc = exec_spill_file_add(f, hash, v, n, err);
  j->pn->act->spill_bytes += f->bytes - before;
  return rc;
}

void exec_spill_free(exec_spill *sp) {
  if (!sp) return;
  for (int k = 0; k < 2; k++) exec_spill_file_close(&sp->s[k]);
  free(sp->br.buf);
  free(sp->pr.buf);
  free(sp->pmatched);
  free(sp);
}

/* Free the held rows and the hash table of j (the current partition's). */
static void drop_held(exec_join *j) {
  for (size_t i = 0; i < j->n_held; i++) exec_mrow_free(j->held[i], 0);
  j->n_held = 0;
  free(j->head);
  free(j->next);
  free(j->matched);
  j->head = NULL;
  j->next = NULL;
  j->matched = NULL;
  j->mem = 0;
}

int exec_spill_begin(exec_join *j, exec_error *err) {
  uint32_t family;
  if (!exec_spill_family_join(j->pn, &family)) { /* subqueries of no table: nowhere to write */
    err->code = EXEC_TOOBIG;
    err->offset = -1;
    snprintf(err->msg, sizeof err->msg, "a hash join of two subqueries that read no table "
             "needs more than the join memory and has no table folder to spill to: raise "
             "the join memory");
    return EXEC_TOOBIG;
  }
  exec_spill *sp = calloc(1, sizeof *sp);
  if (!sp) return nomem(err);
  j->spill = sp;
  sp->part = -1;
  char bound[sizeof err->msg]; /* what passed which bound: the caller's message */
  memcpy(bound, err->msg, sizeof bound);
  for (int k = 0; k < 2; k++) {
    int rc = exec_spill_file_open(&sp->s[k], j->cx->db, family, "a hash join's build input",
                                  err);
    if (rc == EXEC_TOOBIG) { /* a read-only handle: keep which input passed which bound */
      char *tail = strstr(bound, "; ");
      if (tail) { /* the bound's sentence, then why it cannot spill (cut to the buffer) */
        static const char why[] = "; a read-only handle cannot spill it to disk: raise the "
                                  "join memory or narrow the smaller table with a WHERE";
        size_t at = (size_t)(tail - bound);
        if (at > sizeof err->msg - sizeof why) at = sizeof err->msg - sizeof why;
        memcpy(err->msg, bound, at);
        memcpy(err->msg + at, why, sizeof why);
      }
      return EXEC_TOOBIG;
    }
    if (rc) return rc;
  }
  for (size_t i = 0; i < j->n_held; i++) { /* the rows held so far, in input order */
    exec_mrow *h = j->held[i];
    if (add_row(j, &sp->s[0], h->hash, h->v, h->n, err)) return err->code;
  }
  drop_held(j);
  return EXEC_OK;
}

int exec_spill_add(exec_join *j, bool build, uint64_t hash, const cat_value *keys, int nk,
                   const cat_value *slots, int ns, exec_error *err) {
  cat_value tmp[64];
  cat_value *v = nk + ns <= 64 ? tmp : malloc((size_t)(nk + ns) * sizeof *v);
  if (!v) return nomem(err);
  if (nk) memcpy(v, keys, (size_t)nk * sizeof *v);
  if (ns) memcpy(v + nk, slots, (size_t)ns * sizeof *v);
  int rc = add_row(j, &j->spill->s[build ? 0 : 1], hash, v, nk + ns, err);
  if (v != tmp) free(v);
  return rc;
}

int exec_spill_end_input(exec_join *j, bool build, exec_error *err) {
  if (exec_spill_file_flush(&j->spill->s[build ? 0 : 1], err)) return err->code;
  j->pn->act->spill_parts = EXEC_SPILL_PARTS;
  return EXEC_OK;
}

/* Hold the current partition's next batch of build rows: as many as the join memory takes
** (at least one), then index them. */
static int load_batch(exec_join *j, int (*index)(exec_join *, exec_error *), cat_value *v,
                      int nb, exec_error *err) {
  exec_spill *sp = j->spill;
  int rc = EXEC_OK;
  while (exec_spill_file_next(&sp->br, &sp->s[0], sp->part, v, nb, &rc, err)) {
    rc = exec_join_hold_vals(j, v, nb, "", err);
    if (rc == EXEC_TOOBIG) { /* the batch is full (this row in it): the rest next time */
      rc = EXEC_OK;
      break;
    }
    if (rc) return rc;
  }
  if (rc) return rc;
  int dummy = EXEC_OK;
  sp->more_build = exec_spill_file_more(&sp->br, &sp->s[0], sp->part, &dummy, err);
  if (dummy) return dummy;
  j->pn->act->spill_batches++;
  exec_spill_reader_rewind(&sp->pr);
  sp->probe_idx = 0;
  return index(j, err);
}

int exec_spill_next_part(exec_join *j, int (*index)(exec_join *, exec_error *),
                         exec_error *err) {
  exec_spill *sp = j->spill;
  const plan_join_node *pn = j->pn;
  bool bl = pn->build_left;
  int bfrom = bl ? pn->lo : pn->mid, bto = bl ? pn->mid : pn->hi, nk = pn->n_keys;
  bool semi = pn->kind == SQL_JOIN_SEMI || pn->kind == SQL_JOIN_ANTI ||
              pn->kind == SQL_JOIN_ANTI_EXISTS;
  int nb = nk + (semi ? 0 : bto - bfrom); /* a semi join's build rows are its keys alone */
  cat_value tmp[64];
  cat_value *v = nb <= 64 ? tmp : malloc((size_t)nb * sizeof *v);
  if (!v) return nomem(err);
  drop_held(j);
  int rc = EXEC_DONE;
  if (sp->part >= 0 && sp->more_build) {
    rc = load_batch(j, index, v, nb, err);
  } else {
    while (++sp->part < EXEC_SPILL_PARTS) {
      int p = sp->part;
      if (!sp->s[0].rows[p] && !sp->s[1].rows[p]) continue;
      exec_spill_reader_rewind(&sp->br);
      if (exec_join_keeps(pn, !bl) || semi) { /* probe rows matched in some batch */
        size_t need = (size_t)(sp->s[1].rows[p] / 8 + 1);
        if (need > sp->pm_bytes) {
          uint8_t *nm = realloc(sp->pmatched, need);
          if (!nm) {
            rc = nomem(err);
            break;
          }
          sp->pmatched = nm;
          sp->pm_bytes = need;
        }
        memset(sp->pmatched, 0, need);
      }
      rc = load_batch(j, index, v, nb, err);
      break;
    }
  }
  if (v != tmp) free(v);
  if (rc) return rc;
  return sp->part < EXEC_SPILL_PARTS ? EXEC_ROW : EXEC_DONE;
}

int exec_spill_next_probe(exec_join *j, cat_value *row, exec_error *err) {
  exec_spill *sp = j->spill;
  const plan_join_node *pn = j->pn;
  int rc = EXEC_OK;
  bool bl = pn->build_left;
  int pfrom = bl ? pn->mid : pn->lo, pto = bl ? pn->hi : pn->mid, nk = pn->n_keys;
  int np = nk + (pto - pfrom);
  cat_value tmp[64];
  cat_value *v = np <= 64 ? tmp : malloc((size_t)np * sizeof *v);
  if (!v) return nomem(err);
  if (!exec_spill_file_next(&sp->pr, &sp->s[1], sp->part, v, np, &rc, err)) {
    if (v != tmp) free(v);
    return rc ? rc : EXEC_DONE;
  }
  sp->probe_idx++;
  memcpy(j->keys, v, (size_t)nk * sizeof *v);
  memcpy(row + pfrom, v + nk, (size_t)(pto - pfrom) * sizeof *v);
  if (v != tmp) free(v);
  return EXEC_ROW;
}

bool exec_spill_first_match(exec_join *j) {
  exec_spill *sp = j->spill;
  uint64_t i = sp->probe_idx - 1;
  if (!sp->pmatched) return true;
  if (sp->pmatched[i / 8] >> (i % 8) & 1) return false;
  sp->pmatched[i / 8] |= (uint8_t)(1u << (i % 8));
  return true;
}

bool exec_spill_pad_probe(exec_join *j, bool matched) {
  exec_spill *sp = j->spill;
  uint64_t i = sp->probe_idx - 1;
  if (matched) {
    if (sp->pmatched) sp->pmatched[i / 8] |= (uint8_t)(1u << (i % 8));
    return false;
  }
  if (sp->more_build) return false; /* a later batch may match it */
  return !sp->pmatched || !(sp->pmatched[i / 8] >> (i % 8) & 1);
}
