/*
** exec/op_setop.c: runs a derived table's plan (exec/op_setop.h): one query's pipeline, or a
** set operation over two such nodes (planner/plan_setop.h has the rules): UNION ALL streams
** the left rows then the right ones; UNION streams both and drops a row already passed;
** INTERSECT and EXCEPT first read the whole right operand into a hash set, then stream the
** left one, passing each row once, when it is (INTERSECT) or is not (EXCEPT) in the set.
** Rows compare with NULL equal to NULL (exec_rowset). At close each query's figures and
** each set operation's counts go to the plan, for EXPLAIN ANALYZE.
**
** Past the join memory (the rows held by UNION, INTERSECT or EXCEPT) it spills, as the hash
** join does (exec/spill_file.h): the rows it passed so far go to a file "passed", the right
** operand's rows held so far to a file "right", and every row still to be read to a file
** "input" (for INTERSECT and EXCEPT the rest of the right operand to "right" first), each
** cut into partitions by the row's hash, so equal rows share a partition. Then the
** partitions are taken one by one: its passed and right rows held, its input rows streamed
** and passed by the same rules. A partition whose rows alone pass the memory bound is cut
** again by the next six bits of the hash (a level of its own, passed before the rest of its
** level goes on), down to MAX_LEVEL levels, whose partitions (rows sharing 54 bits of
** hash: in practice one or two distinct rows) are held whatever the bound.
**
** Not here: the join tree that reads the rows (exec/op_join.c), the pipeline (exec/op_query.c).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/op_join.h"
#include "exec/op_setop.h"
#include "exec/spill_file.h"
#include "sql/ast.h"

enum { F_PASSED, F_RIGHT, F_INPUT }; /* the files of a spilled set operation */

#define MAX_LEVEL 9 /* partition levels: each takes 6 more bits of the row hash */

typedef struct setop_spill {
  exec_spill_file f[3];  /* F_PASSED, F_RIGHT, F_INPUT */
  exec_spill_reader rd;  /* the current partition's input rows */
  int part;              /* the partition being passed, -1 before the first */
  int level;             /* 0 for the operation's rows; L + 1 for a partition of level L cut
                            again because its rows alone passed the memory bound */
  struct setop_spill *up;/* the level whose partition this one cuts, or NULL */
  cat_value *v;          /* a row read back (n_out values): the current row after EXEC_ROW */
  exec_mrow *kept;       /* the current row when it had to outlive its reader (a cut) */
} setop_spill;

static int nomem(exec_error *err) {
  err->code = EXEC_NOMEM;
  err->offset = -1;
  snprintf(err->msg, sizeof err->msg, "out of memory");
  return EXEC_NOMEM;
}

static const char *op_word(int op) {
  switch (op) {
    case SQL_SETOP_UNION: return "UNION";
    case SQL_SETOP_INTERSECT: return "INTERSECT";
    case SQL_SETOP_EXCEPT: return "EXCEPT";
    default: return "UNION ALL";
  }
}

int exec_setop_open(exec_setop **out, const plan_query *q, plan_actuals *act,
                    struct exec_join_ctx *cx, exec_error *err) {
  exec_setop *s = calloc(1, sizeof *s);
  *out = s;
  if (!s) return nomem(err);
  s->q = q;
  s->cx = cx;
  s->act = act;
  if (!q->setop) {
    s->query = calloc(1, sizeof *s->query);
    if (!s->query) return nomem(err);
    int rc = exec_query_open(s->query, cx->be, q, cx->params, cx->n_params, cx->now_us, 0,
                             cx->overlay, err);
    s->query->timing = cx->timing;
    s->query->join_mem = cx->mem_limit;
    return rc;
  }
  const plan_setop *p = q->setop;
  memset(p->act, 0, sizeof *p->act);
  int n = q->sel->n_out;
  s->seen.n_key = n;
  s->passed.n_key = n;
  int op = q->sel->setop;
  s->phase = op == SQL_SETOP_INTERSECT || op == SQL_SETOP_EXCEPT ? 0 : 1;
  int rc = exec_setop_open(&s->left, &p->left, p->act_left, cx, err);
  if (!rc) rc = exec_setop_open(&s->right, &p->right, p->act_right, cx, err);
  return rc;
}

/* Into set: the row's key; 1 added, 0 there already, or -error (memory). */
static int remember(exec_setop *s, exec_rowset *set, const cat_value *row, exec_error *err) {
  bool added, oom;
  exec_rowset_find(set, row, set->n_key, 0, true, &added, &oom);
  if (oom) return -nomem(err);
  if (!added) return 0;
  plan_setop_actual *a = s->q->setop->act;
  a->held = s->seen.n + s->passed.n;
  uint64_t mem = s->seen.bytes + s->passed.bytes +
                 (s->seen.cap + s->passed.cap) * sizeof(exec_mrow *);
  if (mem > a->peak_bytes) a->peak_bytes = mem;
  if (mem > s->cx->mem_limit && !(s->spill && s->spill->level >= MAX_LEVEL)) {
    /* (at the last level a partition's rows share 54 bits of hash: a few distinct rows, held
       whatever the bound) */
    char lim[32];
    exec_mem_text(s->cx->mem_limit, lim, sizeof lim);
    err->code = EXEC_TOOBIG;
    err->offset = -1;
    snprintf(err->msg, sizeof err->msg, "%s needs more than %s of memory for its distinct "
             "rows (the join memory limit)", op_word(s->q->sel->setop), lim);
    return -EXEC_TOOBIG;
  }
  return 1;
}

/* The partition hash of row v (the rowset's hash, its bits mixed for the top ones). */
static uint64_t part_hash(const cat_value *v, int n) {
  uint64_t h = exec_rowset_hash(v, n);
  h ^= h >> 31;
  h *= 0xBF58476D1CE4E5B9ull;
  return h ^ (h >> 29);
}

/* Row v[0..n) into file k of level sp, its partition taken from the level's bits. */
static int add_row(setop_spill *sp, int k, const cat_value *v, int n, exec_error *err) {
  return exec_spill_file_add(&sp->f[k], part_hash(v, n) << (6 * sp->level), v, n, err);
}

/* The rows of set r into file k of sp. */
static int spill_set(setop_spill *sp, int k, const exec_rowset *r, int n, exec_error *err) {
  for (size_t i = 0; i < r->cap; i++)
    if (r->slots[i] && add_row(sp, k, r->slots[i]->v, n, err)) return err->code;
  return EXEC_OK;
}

static void spill_free(setop_spill *sp) {
  for (int k = 0; k < 3; k++) exec_spill_file_close(&sp->f[k]);
  free(sp->rd.buf);
  free(sp->v);
  exec_mrow_free(sp->kept, 0);
  free(sp);
}

/* A new level of spill files over s's sets: the rows passed (UNION's are `seen` until the
** first level, `passed` after) and the right rows held go to its files, the sets are
** emptied. err holds why (the memory bound). */
static int push_level(exec_setop *s, exec_error *err) {
  uint32_t family;
  int op = s->q->sel->setop, n = s->q->sel->n_out;
  setop_spill *up = s->spill;
  if (up && up->level >= MAX_LEVEL) return err->code; /* rows of one hash: no cut helps */
  if (!exec_spill_family(s->q, &family)) return err->code; /* no table: nowhere to write */
  setop_spill *sp = calloc(1, sizeof *sp);
  if (!sp || !(sp->v = calloc((size_t)n + 1, sizeof *sp->v))) {
    free(sp);
    return nomem(err);
  }
  sp->part = -1;
  sp->up = up;
  sp->level = up ? up->level + 1 : 0;
  s->spill = sp;
  for (int k = 0; k < 3; k++) {
    int rc = exec_spill_file_open(&sp->f[k], s->cx->db, family, op_word(op), err);
    if (rc) return rc;
  }
  bool two = op == SQL_SETOP_INTERSECT || op == SQL_SETOP_EXCEPT;
  int rc = spill_set(sp, F_PASSED, two || up ? &s->passed : &s->seen, n, err);
  if (!rc && two) rc = spill_set(sp, F_RIGHT, &s->seen, n, err);
  exec_rowset_free(&s->seen, 0);
  exec_rowset_free(&s->passed, 0);
  return rc;
}

/* The rest of partition p of file k of level up, from reader r, into file k of s's level. */
static int copy_rest(exec_setop *s, setop_spill *up, int k, int p, exec_spill_reader *r,
                     exec_error *err) {
  int n = s->q->sel->n_out, rc = EXEC_OK;
  while (exec_spill_file_next(r, &up->f[k], p, up->v, n, &rc, err))
    if ((rc = add_row(s->spill, k, up->v, n, err)) != EXEC_OK) return rc;
  return rc;
}

/* Partition p of level `up` passed the memory bound while file k was being held (k = F_INPUT:
** while its input rows were passing, up->rd at the next one): it is cut again, one level down,
** from what is held and the rest of its files, and that level is passed first. */
static int cut_part(exec_setop *s, int k, exec_spill_reader *r, exec_error *err) {
  setop_spill *up = s->spill;
  int p = up->part, rc = push_level(s, err);
  exec_spill_reader fresh = {0};
  if (!rc && k != F_INPUT) rc = copy_rest(s, up, k, p, r, err);
  if (!rc && k == F_PASSED) rc = copy_rest(s, up, F_RIGHT, p, &fresh, err);
  exec_spill_reader_rewind(&fresh);
  if (!rc) rc = copy_rest(s, up, F_INPUT, p, k == F_INPUT ? &up->rd : &fresh, err);
  free(fresh.buf);
  for (int f = 0; !rc && f < 3; f++) rc = exec_spill_file_flush(&s->spill->f[f], err);
  if (!rc) s->q->setop->act->spill_bytes += s->spill->f[0].bytes + s->spill->f[1].bytes +
                                            s->spill->f[2].bytes;
  return rc;
}

/* A spilled operation's next partition with input rows: its passed rows held in `passed`
** (they must not pass again), its right rows (INTERSECT, EXCEPT) in `seen`. EXEC_ROW, or
** EXEC_DONE after the last. */
static int next_part(exec_setop *s, exec_error *err) {
  int n = s->q->sel->n_out;
  for (;;) {
    setop_spill *sp = s->spill;
    exec_rowset_free(&s->seen, 0);
    exec_rowset_free(&s->passed, 0);
    while (++sp->part < EXEC_SPILL_PARTS) {
      int p = sp->part, rc = EXEC_OK, cut = -1;
      if (!sp->f[F_INPUT].rows[p]) continue; /* nothing more can pass from it */
      exec_spill_reader r = {0};
      for (int k = F_PASSED; k <= F_RIGHT && !rc && cut < 0; k++) {
        exec_rowset *set = k == F_PASSED ? &s->passed : &s->seen;
        exec_spill_reader_rewind(&r);
        while (!rc && exec_spill_file_next(&r, &sp->f[k], p, sp->v, n, &rc, err)) {
          int m = remember(s, set, sp->v, err);
          if (m == -EXEC_TOOBIG && sp->level < MAX_LEVEL) {
            cut = k;
            break;
          }
          if (m < 0) rc = -m;
        }
      }
      if (cut >= 0) rc = cut_part(s, cut, &r, err); /* this partition is a level of its own */
      free(r.buf);
      if (rc) return rc;
      if (cut >= 0) break;
      exec_spill_reader_rewind(&sp->rd);
      s->q->setop->act->spill_batches++;
      return EXEC_ROW;
    }
    if (s->spill != sp) continue; /* a cut: its level first */
    if (!sp->up) return EXEC_DONE;
    s->spill = sp->up; /* a cut partition done: its level goes on after it */
    spill_free(sp);
  }
}

/* A spilled operation: a row read (the rest of an operand) goes to disk. */
static int spill_row(exec_setop *s, int k, const cat_value *row, exec_error *err) {
  return add_row(s->spill, k, row, s->q->sel->n_out, err);
}

/* A spilled operation's rows, partition by partition: an input row passes when it is not
** among the partition's passed rows (UNION), and among (INTERSECT) or not among (EXCEPT)
** its right rows. */
static int next_spilled(exec_setop *s, exec_error *err) {
  int op = s->q->sel->setop, n = s->q->sel->n_out, rc = EXEC_OK;
  for (;;) {
    setop_spill *sp = s->spill;
    if (sp->part < 0 || !exec_spill_file_next(&sp->rd, &sp->f[F_INPUT], sp->part, sp->v, n, &rc,
                                               err)) {
      if (rc) return rc;
      if ((rc = next_part(s, err)) != EXEC_ROW) return rc;
      rc = EXEC_OK;
      continue;
    }
    if (op != SQL_SETOP_UNION) {
      bool in_right = exec_rowset_find(&s->seen, sp->v, n, 0, false, NULL, NULL);
      if (in_right != (op == SQL_SETOP_INTERSECT)) continue;
    }
    int r = remember(s, &s->passed, sp->v, err);
    if (r == -EXEC_TOOBIG && sp->level < MAX_LEVEL) { /* passes; the partition is cut again */
      exec_mrow_free(sp->kept, 0);
      if (!(sp->kept = exec_mrow_make(sp->v, n, 0))) return nomem(err);
      if ((rc = cut_part(s, F_INPUT, NULL, err)) != EXEC_OK) return rc;
      s->q->setop->act->rows_out++;
      s->row = sp->kept->v; /* sp stays (the new level's up) while the new level is passed */
      return EXEC_ROW;
    }
    if (r < 0) return -r;
    if (r == 0) continue;
    s->q->setop->act->rows_out++;
    s->row = sp->v;
    return EXEC_ROW;
  }
}

int exec_setop_next(exec_setop *s, exec_error *err) {
  if (s->query) {
    int rc = exec_query_next(s->query, err);
    if (rc == EXEC_ROW) s->row = s->query->out;
    return rc;
  }
  plan_setop_actual *a = s->q->setop->act;
  int op = s->q->sel->setop;
  for (;;) {
    if (s->phase == 3) return EXEC_DONE;
    if (s->phase == 4) return next_spilled(s, err);
    if (s->phase == 0) { /* INTERSECT, EXCEPT: hold the right operand's rows */
      int rc = exec_setop_next(s->right, err);
      if (rc == EXEC_DONE) {
        s->phase = 1;
        continue;
      }
      if (rc != EXEC_ROW) return rc;
      a->rows_right++;
      if (s->spill) {
        if ((rc = spill_row(s, F_RIGHT, s->right->row, err)) != EXEC_OK) return rc;
        continue;
      }
      int r = remember(s, &s->seen, s->right->row, err);
      if (r == -EXEC_TOOBIG && (r = -push_level(s, err)) == 0) continue; /* held: on disk */
      if (r < 0) return -r;
      continue;
    }
    exec_setop *in = s->phase == 1 ? s->left : s->right;
    int rc = exec_setop_next(in, err);
    if (rc == EXEC_DONE) {
      s->phase = s->phase == 1 && (op == SQL_SETOP_UNION_ALL || op == SQL_SETOP_UNION) ? 2 : 3;
      if (s->phase == 3 && s->spill) { /* every row read: the partitions now */
        for (int k = 0; k < 3; k++)
          if ((rc = exec_spill_file_flush(&s->spill->f[k], err)) != EXEC_OK) return rc;
        a->spill_bytes = s->spill->f[0].bytes + s->spill->f[1].bytes + s->spill->f[2].bytes;
        a->spill_parts = EXEC_SPILL_PARTS;
        s->phase = 4;
      }
      continue;
    }
    if (rc != EXEC_ROW) return rc;
    if (s->phase == 1) a->rows_left++;
    else a->rows_right++;
    const cat_value *row = in->row;
    if (s->spill && op != SQL_SETOP_UNION_ALL) {
      if ((rc = spill_row(s, F_INPUT, row, err)) != EXEC_OK) return rc;
      continue;
    }
    if (op == SQL_SETOP_UNION) {
      int r = remember(s, &s->seen, row, err);
      if (r == -EXEC_TOOBIG) /* the rows passed, this one with them, to disk: it passes now */
        r = (rc = push_level(s, err)) != EXEC_OK ? -rc : 1;
      if (r < 0) return -r;
      if (r == 0) continue;
    } else if (op == SQL_SETOP_INTERSECT || op == SQL_SETOP_EXCEPT) {
      bool in_right = exec_rowset_find(&s->seen, row, s->seen.n_key, 0, false, NULL, NULL);
      if (in_right != (op == SQL_SETOP_INTERSECT)) continue;
      int r = remember(s, &s->passed, row, err);
      if (r == -EXEC_TOOBIG) /* as UNION's: to disk with the rows passed; it passes now */
        r = (rc = push_level(s, err)) != EXEC_OK ? -rc : 1;
      if (r < 0) return -r;
      if (r == 0) continue;
    }
    a->rows_out++;
    s->row = row;
    return EXEC_ROW;
  }
}

void exec_setop_drop_overlay(exec_setop *s) {
  if (!s) return;
  if (s->query) exec_query_drop_overlay(s->query);
  exec_setop_drop_overlay(s->left);
  exec_setop_drop_overlay(s->right);
}

void exec_setop_close(exec_setop *s) {
  if (!s) return;
  if (s->query) {
    exec_query_close(s->query);
    if (s->act) *s->act = s->query->act;
    free(s->query);
  }
  exec_setop_close(s->left);
  exec_setop_close(s->right);
  exec_rowset_free(&s->seen, 0);
  exec_rowset_free(&s->passed, 0);
  while (s->spill) {
    setop_spill *up = s->spill->up;
    spill_free(s->spill);
    s->spill = up;
  }
  free(s);
}
