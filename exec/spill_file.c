/*
** exec/spill_file.c: the partitioned temporary files of exec/spill_file.h: rows buffered per
** partition and appended a chunk at a time, read back partition by partition, and the
** folder (a table's key family) that takes them. Not here: hashing, joining, comparing.
*/
#include "exec/spill_file.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/status.h"
#include "kv/db/temp.h"
#include "planner/plan_join.h"
#include "planner/plan_setop.h"

static int nomem(exec_error *err) {
  err->code = EXEC_NOMEM;
  err->offset = -1;
  snprintf(err->msg, sizeof err->msg, "out of memory");
  return EXEC_NOMEM;
}

static int kv_fail(int rc, exec_error *err) {
  err->code = exec_status_of_kv(rc);
  err->offset = -1;
  snprintf(err->msg, sizeof err->msg, "a spill to disk failed: %s", kv_errmsg());
  return err->code;
}

/* Where spills go without a local store (a remote backend): TMPDIR, else /tmp, as SQLite's
** temporary files do. */
static const char *tmp_dir(void) {
  const char *d = getenv("TMPDIR");
  return d && *d ? d : "/tmp";
}

int exec_spill_file_open(exec_spill_file *f, kv_db *db, uint32_t family, const char *what,
                         exec_error *err) {
  int rc = db ? kv_temp_open(db, family, &f->file)
              : kv_temp_open_dir(kv_env_posix(), tmp_dir(), &f->file);
  if (rc == KV_ERR_READONLY) {
    err->code = EXEC_TOOBIG;
    err->offset = -1;
    snprintf(err->msg, sizeof err->msg, "%s needs more than the join memory; a read-only "
             "handle cannot spill it to disk: raise the join memory or narrow the query with "
             "a WHERE", what);
    return EXEC_TOOBIG;
  }
  return rc ? kv_fail(rc, err) : EXEC_OK;
}

/* The bytes row v[0..n) takes in a file. */
static size_t row_bytes(const cat_value *v, int n) {
  size_t b = sizeof(uint32_t) + (size_t)n * sizeof(cat_value);
  for (int i = 0; i < n; i++)
    if (!v[i].is_null && cat_type_has_bytes(v[i].type.id)) b += v[i].u.s.len;
  return b;
}

/* Write the chunk buffered for partition p to the file. */
static int flush_part(exec_spill_file *f, int p, exec_error *err) {
  if (!f->used[p]) return EXEC_OK;
  if (f->n_chunks[p] == f->cap_chunks[p]) {
    uint32_t nc = f->cap_chunks[p] ? f->cap_chunks[p] * 2 : 8;
    exec_spill_chunk *c = realloc(f->chunks[p], nc * sizeof *c);
    if (!c) return nomem(err);
    f->chunks[p] = c;
    f->cap_chunks[p] = nc;
  }
  exec_spill_chunk *c = &f->chunks[p][f->n_chunks[p]];
  int rc = kv_temp_append(f->file, f->buf[p], f->used[p], &c->off);
  if (rc) return kv_fail(rc, err);
  c->len = f->used[p];
  f->n_chunks[p]++;
  f->used[p] = 0;
  return EXEC_OK;
}

int exec_spill_file_add(exec_spill_file *f, uint64_t hash, const cat_value *v, int n,
                        exec_error *err) {
  int p = exec_spill_part_of(hash);
  size_t need = row_bytes(v, n);
  if (need > UINT32_MAX / 2) {
    err->code = EXEC_TOOBIG;
    err->offset = -1;
    snprintf(err->msg, sizeof err->msg, "a row is too large to spill to disk");
    return EXEC_TOOBIG;
  }
  if (f->used[p] + need > EXEC_SPILL_CHUNK && flush_part(f, p, err)) return err->code;
  uint32_t cap = need > EXEC_SPILL_CHUNK ? (uint32_t)need : EXEC_SPILL_CHUNK;
  if (!f->buf[p] || (need > EXEC_SPILL_CHUNK && f->used[p] == 0)) {
    uint8_t *nb = realloc(f->buf[p], cap);
    if (!nb) return nomem(err);
    f->buf[p] = nb;
  }
  uint8_t *o = f->buf[p] + f->used[p];
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
  f->used[p] += len;
  f->rows[p]++;
  f->bytes += len;
  if (need > EXEC_SPILL_CHUNK) return flush_part(f, p, err); /* a row larger than a chunk */
  return EXEC_OK;
}

int exec_spill_file_flush(exec_spill_file *f, exec_error *err) {
  for (int p = 0; p < EXEC_SPILL_PARTS; p++)
    if (flush_part(f, p, err)) return err->code;
  return EXEC_OK;
}

bool exec_spill_file_more(exec_spill_reader *r, exec_spill_file *f, int p, int *rc,
                          exec_error *err) {
  while (r->pos >= r->len) {
    if (r->chunk >= f->n_chunks[p]) return false;
    const exec_spill_chunk *c = &f->chunks[p][r->chunk++];
    if (c->len > r->cap) {
      uint8_t *nb = realloc(r->buf, c->len);
      if (!nb) {
        *rc = nomem(err);
        return false;
      }
      r->buf = nb;
      r->cap = c->len;
    }
    int krc = kv_temp_read(f->file, c->off, r->buf, c->len);
    if (krc) {
      *rc = kv_fail(krc, err);
      return false;
    }
    r->len = c->len;
    r->pos = 0;
  }
  return true;
}

bool exec_spill_file_next(exec_spill_reader *r, exec_spill_file *f, int p, cat_value *v, int n,
                          int *rc, exec_error *err) {
  if (!exec_spill_file_more(r, f, p, rc, err)) return false;
  const uint8_t *rd = r->buf + r->pos;
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
  r->pos += len;
  return true;
}

void exec_spill_file_close(exec_spill_file *f) {
  kv_temp_close(f->file);
  for (int p = 0; p < EXEC_SPILL_PARTS; p++) {
    free(f->buf[p]);
    free(f->chunks[p]);
  }
  memset(f, 0, sizeof *f);
}

bool exec_spill_family(const plan_query *q, uint32_t *family) {
  if (q->setop)
    return exec_spill_family(&q->setop->left, family) ||
           exec_spill_family(&q->setop->right, family);
  if (q->join) return exec_spill_family_join(q->join, family);
  if (!q->has_scan || !q->scan.table || q->scan.table->n_families < 1) return false;
  *family = q->scan.table->families[0].kv_id;
  return true;
}

bool exec_spill_family_join(const plan_join_node *n, uint32_t *family) {
  if (n->leaf) {
    if (n->derived) return exec_spill_family(&n->leaf_q, family);
    if (!n->leaf_sel || !n->leaf_sel->table) return false;
    *family = n->leaf_sel->table->families[0].kv_id;
    return true;
  }
  return exec_spill_family_join(n->right, family) || exec_spill_family_join(n->left, family);
}
