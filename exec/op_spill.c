/*
** exec/op_spill.c: the hash join past its memory bound (a partitioned, "Grace" hash join).
** When the build input's held rows pass the join memory, the join stops holding them: every
** build row (its key values, then its slots) is written to one of SPILL_PARTS partitions by
** the top bits of its key hash, the rows held so far first; then the probe input is read
** whole and partitioned the same way. A partition's rows go to a buffer of SPILL_CHUNK bytes
** that is appended to the side's temporary file (kv/temp.h, in the store's folder) when
** full, so each side is one file of chunks, each chunk one partition's. Then the partitions
** are joined one by one, as the in-memory join does (exec/op_hashjoin.c): the build rows of
** partition p held and indexed, its probe rows streamed past them, an outer join's
** unmatched rows padded or swept per partition (rows of equal keys share a partition; rows
** with a NULL key go to partition 0, which nothing matches). A partition whose build rows
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
** (kv/temp.c).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/op_join.h"
#include "kv/temp.h"
#include "planner/plan_setop.h"

#define SPILL_PARTS 64             /* partitions, by the top 6 bits of the key hash */
#define SPILL_CHUNK (64u << 10)    /* bytes buffered per partition before a write */

typedef struct chunk {
  uint64_t off;  /* offset in the side's file */
  uint32_t len;  /* bytes */
} chunk;

typedef struct side {
  kv_temp *file;              /* the side's temporary file */
  uint8_t *buf[SPILL_PARTS];  /* per partition: bytes not written yet */
  uint32_t used[SPILL_PARTS]; /* their count */
  chunk *chunks[SPILL_PARTS]; /* per partition: its chunks in the file, in order */
  uint32_t n_chunks[SPILL_PARTS], cap_chunks[SPILL_PARTS];
  uint64_t rows[SPILL_PARTS]; /* rows per partition */
} side;

/* A reader of one partition of one side, a chunk at a time. */
typedef struct reader {
  uint8_t *buf;        /* the current chunk's bytes */
  size_t cap;          /* allocated */
  uint32_t len, pos;   /* bytes in buf, the next row's position */
  uint32_t chunk;      /* the next chunk to read */
} reader;

struct exec_spill {
  side s[2];           /* [0] the build input, [1] the probe input */
  int part;            /* the partition being joined, -1 before the first */
  reader br, pr;       /* the partition's build rows (batch after batch), its probe rows */
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

static int kv_fail(int rc, exec_error *err) {
  /* a read-only handle's refusal is the join memory's limit, not a write refused */
  err->code = rc == KV_ERR_READONLY ? EXEC_TOOBIG : exec_status_of_kv(rc);
  err->offset = -1;
  snprintf(err->msg, sizeof err->msg, "a hash join's spill to disk failed: %s", kv_errmsg());
  return err->code;
}

static int part_of(uint64_t hash) { return (int)(hash >> 58); }

/* The bytes row v[0..n) takes in a file. */
static size_t row_bytes(const cat_value *v, int n) {
  size_t b = sizeof(uint32_t) + (size_t)n * sizeof(cat_value);
  for (int i = 0; i < n; i++)
    if (!v[i].is_null && cat_type_has_bytes(v[i].type.id)) b += v[i].u.s.len;
  return b;
}

/* Write the chunk buffered for partition p of side sd to its file. */
static int flush_part(side *sd, int p, exec_error *err) {
  if (!sd->used[p]) return EXEC_OK;
  if (sd->n_chunks[p] == sd->cap_chunks[p]) {
    uint32_t nc = sd->cap_chunks[p] ? sd->cap_chunks[p] * 2 : 8;
    chunk *c = realloc(sd->chunks[p], nc * sizeof *c);
    if (!c) return nomem(err);
    sd->chunks[p] = c;
    sd->cap_chunks[p] = nc;
  }
  chunk *c = &sd->chunks[p][sd->n_chunks[p]];
  int rc = kv_temp_append(sd->file, sd->buf[p], sd->used[p], &c->off);
  if (rc) return kv_fail(rc, err);
  c->len = sd->used[p];
  sd->n_chunks[p]++;
  sd->used[p] = 0;
  return EXEC_OK;
}

/* Add row v[0..n) (key values first) with key hash `hash` to side sd. */
static int add_row(exec_join *j, side *sd, uint64_t hash, const cat_value *v, int n,
                   exec_error *err) {
  int p = part_of(hash);
  size_t need = row_bytes(v, n);
  if (need > UINT32_MAX / 2) {
    err->code = EXEC_TOOBIG;
    err->offset = -1;
    snprintf(err->msg, sizeof err->msg, "a row of a hash join is too large to spill to disk");
    return EXEC_TOOBIG;
  }
  if (sd->used[p] + need > SPILL_CHUNK && flush_part(sd, p, err)) return err->code;
  uint32_t cap = need > SPILL_CHUNK ? (uint32_t)need : SPILL_CHUNK;
  if (!sd->buf[p] || (need > SPILL_CHUNK && sd->used[p] == 0)) {
    uint8_t *nb = realloc(sd->buf[p], cap);
    if (!nb) return nomem(err);
    sd->buf[p] = nb;
  }
  uint8_t *o = sd->buf[p] + sd->used[p];
  uint32_t len = (uint32_t)need;
  memcpy(o, &len, sizeof len);
  o += sizeof len;
  memcpy(o, v, (size_t)n * sizeof *v);
  o += (size_t)n * sizeof *v;
  for (int i = 0; i < n; i++)
    if (!v[i].is_null && cat_type_has_bytes(v[i].type.id) && v[i].u.s.len) {
      memcpy(o, v[i].u.s.p, v[i].u.s.len);
      o += v[i].u.s.len;
    }
  sd->used[p] += len;
  sd->rows[p]++;
  j->pn->act->spill_bytes += len;
  if (need > SPILL_CHUNK) return flush_part(sd, p, err); /* a row larger than a chunk */
  return EXEC_OK;
}

/* Row at rd[pos] into v[0..n): its string values point into rd. Its byte count. */
static uint32_t read_row(const uint8_t *rd, cat_value *v, int n) {
  uint32_t len;
  memcpy(&len, rd, sizeof len);
  const uint8_t *o = rd + sizeof len;
  memcpy(v, o, (size_t)n * sizeof *v);
  o += (size_t)n * sizeof *v;
  for (int i = 0; i < n; i++)
    if (!v[i].is_null && cat_type_has_bytes(v[i].type.id)) {
      v[i].u.s.p = o;
      o += v[i].u.s.len;
    }
  return len;
}

/* Make row bytes of partition p of side sd available at r->buf + r->pos: false at the
** partition's end (or on error: *rc set). */
static bool fill(reader *r, side *sd, int p, int *rc, exec_error *err) {
  while (r->pos >= r->len) {
    if (r->chunk >= sd->n_chunks[p]) return false;
    const chunk *c = &sd->chunks[p][r->chunk++];
    if (c->len > r->cap) {
      uint8_t *nb = realloc(r->buf, c->len);
      if (!nb) {
        *rc = nomem(err);
        return false;
      }
      r->buf = nb;
      r->cap = c->len;
    }
    int krc = kv_temp_read(sd->file, c->off, r->buf, c->len);
    if (krc) {
      *rc = kv_fail(krc, err);
      return false;
    }
    r->len = c->len;
    r->pos = 0;
  }
  return true;
}

static void rewind_reader(reader *r) { r->len = r->pos = r->chunk = 0; }

void exec_spill_free(exec_spill *sp) {
  if (!sp) return;
  for (int k = 0; k < 2; k++) {
    kv_temp_close(sp->s[k].file);
    for (int p = 0; p < SPILL_PARTS; p++) {
      free(sp->s[k].buf[p]);
      free(sp->s[k].chunks[p]);
    }
  }
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

static bool spill_family(const plan_join_node *n, uint32_t *family);

/* The key family of the first table query q reads (through its joins, derived tables and
** set operations). False when it reads none (SELECT without FROM). */
static bool query_family(const plan_query *q, uint32_t *family) {
  if (q->setop)
    return query_family(&q->setop->left, family) || query_family(&q->setop->right, family);
  if (q->join) return spill_family(q->join, family);
  if (!q->has_scan || !q->scan.table || q->scan.table->n_families < 1) return false;
  *family = q->scan.table->families[0].kv_id;
  return true;
}

/* The kv family whose folder takes the temporary files: the key family of the first table
** under join node n, a derived table's own tables included. False when there is none. */
static bool spill_family(const plan_join_node *n, uint32_t *family) {
  if (n->leaf) {
    if (n->derived) return query_family(&n->leaf_q, family);
    if (!n->leaf_sel || !n->leaf_sel->table) return false;
    *family = n->leaf_sel->table->families[0].kv_id;
    return true;
  }
  return spill_family(n->right, family) || spill_family(n->left, family);
}

int exec_spill_begin(exec_join *j, exec_error *err) {
  uint32_t family;
  if (!spill_family(j->pn, &family)) { /* subqueries of no table: nowhere to write */
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
  for (int k = 0; k < 2; k++) {
    int rc = kv_temp_open(j->cx->db, family, &sp->s[k].file);
    if (rc == KV_ERR_READONLY) { /* keep what passed which bound (the caller's message) */
      char *tail = strstr(err->msg, "; ");
      size_t at = tail ? (size_t)(tail - err->msg) : 0;
      if (!tail) at = (size_t)snprintf(err->msg, sizeof err->msg, "a hash join's build input "
                                       "needs more than the join memory");
      snprintf(err->msg + at, sizeof err->msg - at, "; a read-only handle cannot spill it to "
               "disk: raise the join memory or narrow the smaller table with a WHERE");
      err->code = EXEC_TOOBIG;
      err->offset = -1;
      return EXEC_TOOBIG;
    }
    if (rc) return kv_fail(rc, err);
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
  side *sd = &j->spill->s[build ? 0 : 1];
  for (int p = 0; p < SPILL_PARTS; p++)
    if (flush_part(sd, p, err)) return err->code;
  plan_join_actual *a = j->pn->act;
  a->spill_parts = SPILL_PARTS;
  return EXEC_OK;
}

/* Hold the current partition's next batch of build rows: as many as the join memory takes
** (at least one), then index them. */
static int load_batch(exec_join *j, int (*index)(exec_join *, exec_error *), cat_value *v,
                      int nb, exec_error *err) {
  exec_spill *sp = j->spill;
  int rc = EXEC_OK;
  while (fill(&sp->br, &sp->s[0], sp->part, &rc, err)) {
    sp->br.pos += read_row(sp->br.buf + sp->br.pos, v, nb);
    rc = exec_join_hold_vals(j, v, nb, "", err);
    if (rc == EXEC_TOOBIG) { /* the batch is full (this row in it): the rest next time */
      rc = EXEC_OK;
      break;
    }
    if (rc) return rc;
  }
  if (rc) return rc;
  int dummy = EXEC_OK;
  sp->more_build = fill(&sp->br, &sp->s[0], sp->part, &dummy, err);
  if (dummy) return dummy;
  j->pn->act->spill_batches++;
  rewind_reader(&sp->pr);
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
    while (++sp->part < SPILL_PARTS) {
      int p = sp->part;
      if (!sp->s[0].rows[p] && !sp->s[1].rows[p]) continue;
      rewind_reader(&sp->br);
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
  return sp->part < SPILL_PARTS ? EXEC_ROW : EXEC_DONE;
}

int exec_spill_next_probe(exec_join *j, cat_value *row, exec_error *err) {
  exec_spill *sp = j->spill;
  const plan_join_node *pn = j->pn;
  int rc = EXEC_OK;
  if (!fill(&sp->pr, &sp->s[1], sp->part, &rc, err)) return rc ? rc : EXEC_DONE;
  bool bl = pn->build_left;
  int pfrom = bl ? pn->mid : pn->lo, pto = bl ? pn->hi : pn->mid, nk = pn->n_keys;
  int np = nk + (pto - pfrom);
  cat_value tmp[64];
  cat_value *v = np <= 64 ? tmp : malloc((size_t)np * sizeof *v);
  if (!v) return nomem(err);
  sp->pr.pos += read_row(sp->pr.buf + sp->pr.pos, v, np);
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
