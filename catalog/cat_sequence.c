/*
** catalog/cat_sequence.c: sequences (Phoenix's CREATE SEQUENCE / NEXT VALUE FOR; contracts
** in catalog/catalog.h "Sequences"): their 'S' rows of SYSTEM.CATALOG, the checks of their
** options, and the handing out of values.
**
** Record (docs/FORMAT_SQL.md (Part 3) "SYSTEM.CATALOG", row key 'S' name 00 01, qualifier "d"):
**   u8 1 (version), str name, zigzag varints START, INCREMENT, MINVALUE, MAXVALUE,
**   varint CACHE, u8 flags (bit 0 CYCLE, bit 1 done), zigzag varint next.
** "next" is the first value no block has claimed. NEXT VALUE FOR takes values from the
** block claimed last (kept in memory); when it is used up, the next block (CACHE values,
** fewer at the end of the range) is claimed by committing the row with "next" moved past
** it, and only then is its first value handed out. So after a crash or a close the values
** of a block not handed out are skipped, and no value is ever handed out twice (HBase's
** and Phoenix's rule for SYSTEM.SEQUENCE). The claim's commit is a batch of its own: it is
** not part of an open transaction and is not undone by ROLLBACK (Phoenix does the same).
** On a remote backend (HBase: several processes share the catalog) the claim is a
** check-and-write instead: the row is read again, the block claimed from what it holds, and
** the new row written only if the row is still what was read (HBase's checkAndMutate;
** Phoenix increments SYSTEM.SEQUENCE atomically), else read and tried again.
**
** Not here: SQL (exec/ddl_sequence.c checks the statement's options and positions),
** per-row evaluation (exec/sequence.c).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/catalog_int.h"
#include "kv/util/coding.h"

#define SEQ_REC_VERSION 1
#define SEQ_NAME_LIMIT 200 /* bytes in a sequence name, as for tables */
#define SEQ_REC_MAX (SEQ_NAME_LIMIT + 16 + 6 * 10 + 1) /* bytes of the largest record */

static uint64_t zigzag(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }
static int64_t unzigzag(uint64_t u) { return (int64_t)(u >> 1) ^ -(int64_t)(u & 1); }

/* The record of s into rec (SEQ_REC_MAX bytes); returns its length. */
static size_t seq_record(const cat_sequence *s, uint8_t *rec) {
  uint8_t *p = rec;
  size_t n = strlen(s->name);
  *p++ = SEQ_REC_VERSION;
  p = kv_put_varint(p, n);
  memcpy(p, s->name, n);
  p += n;
  p = kv_put_varint(p, zigzag(s->def.start));
  p = kv_put_varint(p, zigzag(s->def.increment));
  p = kv_put_varint(p, zigzag(s->def.min_value));
  p = kv_put_varint(p, zigzag(s->def.max_value));
  p = kv_put_varint(p, (uint64_t)s->def.cache);
  *p++ = (uint8_t)((s->def.cycle ? 1 : 0) | (s->done ? 2 : 0));
  p = kv_put_varint(p, zigzag(s->next));
  return (size_t)(p - rec);
}

/* The row key 'S' name 00 01 into key (SEQ_NAME_LIMIT + 3 bytes); returns its length. */
static size_t seq_key(const char *name, uint8_t *key) {
  size_t n = strlen(name);
  key[0] = 'S';
  memcpy(key + 1, name, n);
  key[n + 1] = 0x00;
  key[n + 2] = 0x01;
  return n + 3;
}

/* Does def hold together? CAT_OK or CAT_ERR_INVALID naming the option. */
static int check_def(const cat_sequence_def *d, cat_error *err) {
  if (!d->name || !*d->name || strlen(d->name) > SEQ_NAME_LIMIT)
    return cat_err(err, CAT_ERR_INVALID, "sequence name must be 1..%d bytes", SEQ_NAME_LIMIT);
  if (d->increment == 0)
    return cat_err(err, CAT_ERR_INVALID, "sequence %s: INCREMENT BY must not be 0", d->name);
  if (d->min_value > d->max_value)
    return cat_err(err, CAT_ERR_INVALID,
                   "sequence %s: MINVALUE %lld is greater than MAXVALUE %lld", d->name,
                   (long long)d->min_value, (long long)d->max_value);
  if (d->start < d->min_value || d->start > d->max_value)
    return cat_err(err, CAT_ERR_INVALID,
                   "sequence %s: START WITH %lld is outside [MINVALUE %lld, MAXVALUE %lld]",
                   d->name, (long long)d->start, (long long)d->min_value,
                   (long long)d->max_value);
  if (d->cache < 1)
    return cat_err(err, CAT_ERR_INVALID, "sequence %s: CACHE must be at least 1, not %lld",
                   d->name, (long long)d->cache);
  return CAT_OK;
}

void cat_seq_free(cat_sequence *s) {
  if (!s) return;
  free(s->name);
  free(s);
}

/* The position of `name` in the set (found) or where it would go. */
static int seq_pos(const cat_seq_set *set, const char *name, bool *found) {
  int lo = 0, hi = set->n;
  while (lo < hi) {
    int mid = (lo + hi) / 2, c = strcmp(set->a[mid]->name, name);
    if (c == 0) {
      *found = true;
      return mid;
    }
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  *found = false;
  return lo;
}

static int seq_insert(cat_seq_set *set, cat_sequence *s, cat_error *err) {
  bool found;
  int at = seq_pos(set, s->name, &found);
  if (found) return cat_err(err, CAT_ERR_CORRUPT, "SYSTEM.CATALOG: sequence %s twice", s->name);
  cat_sequence **a = realloc(set->a, (size_t)(set->n + 1) * sizeof *a);
  if (!a) return cat_err(err, CAT_ERR_NOMEM, "out of memory");
  memmove(&a[at + 1], &a[at], (size_t)(set->n - at) * sizeof *a);
  a[at] = s;
  set->a = a;
  set->n++;
  return CAT_OK;
}

/* Commit s's row (put) or its deletion, in a batch of its own. */
static int seq_commit(cat_catalog *cat, const cat_sequence *s, bool del, cat_error *err) {
  uint8_t key[SEQ_NAME_LIMIT + 3], rec[SEQ_REC_MAX];
  size_t kn = seq_key(s->name, key);
  kv_batch *b = kv_batch_new();
  if (!b) return cat_err(err, CAT_ERR_NOMEM, "out of memory");
  int rc = del ? kv_batch_delete(b, cat_sys_family(cat), KV_DELETE_COLUMN, key, kn, "d", 1,
                                 KV_TS_NOW)
               : kv_batch_put(b, cat_sys_family(cat), key, kn, "d", 1, KV_TS_NOW, rec,
                              seq_record(s, rec));
  if (rc == KV_OK) rc = kv_be_write(cat_backend(cat), b, NULL);
  kv_batch_free(b);
  return rc ? cat_kv_error(err, rc, del ? "DROP SEQUENCE" : "sequence commit") : CAT_OK;
}

cat_sequence *cat_seq_record_parse(const uint8_t *v, size_t n) {
  const uint8_t *p = v, *end = v + n;
  uint64_t len = 0, u[6];
  cat_sequence *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  bool ok = p < end && *p++ == SEQ_REC_VERSION && (p = kv_get_varint(p, end, &len)) != NULL &&
            len >= 1 && len <= SEQ_NAME_LIMIT && len <= (uint64_t)(end - p);
  if (ok) {
    s->name = malloc((size_t)len + 1);
    ok = s->name != NULL;
    if (ok) {
      memcpy(s->name, p, (size_t)len);
      s->name[len] = 0;
      ok = strlen(s->name) == len;
      p += len;
    }
  }
  for (int i = 0; ok && i < 5; i++) ok = (p = kv_get_varint(p, end, &u[i])) != NULL;
  uint8_t flags = 0;
  if (ok && p < end) flags = *p++;
  else ok = false;
  if (ok) ok = (p = kv_get_varint(p, end, &u[5])) != NULL && p == end && flags < 4;
  if (ok) {
    s->def.name = s->name;
    s->def.start = unzigzag(u[0]);
    s->def.increment = unzigzag(u[1]);
    s->def.min_value = unzigzag(u[2]);
    s->def.max_value = unzigzag(u[3]);
    s->def.cache = u[4] > INT64_MAX ? 0 : (int64_t)u[4];
    s->def.cycle = flags & 1;
    s->done = (flags & 2) != 0;
    s->next = unzigzag(u[5]);
    ok = check_def(&s->def, NULL) == CAT_OK &&
         (s->done || (s->next >= s->def.min_value && s->next <= s->def.max_value));
  }
  if (!ok) {
    cat_seq_free(s);
    return NULL;
  }
  return s;
}

int cat_seq_load(cat_catalog *cat, const uint8_t *v, size_t n, cat_error *err) {
  cat_sequence *s = cat_seq_record_parse(v, n);
  if (!s) return cat_err(err, CAT_ERR_CORRUPT, "corrupt SYSTEM.CATALOG sequence row");
  int rc = seq_insert(cat_seqs(cat), s, err);
  if (rc) cat_seq_free(s);
  return rc;
}

void cat_seqs_free(cat_seq_set *set) {
  for (int i = 0; i < set->n; i++) cat_seq_free(set->a[i]);
  free(set->a);
  set->a = NULL;
  set->n = 0;
}

int cat_create_sequence(cat_catalog *cat, const cat_sequence_def *def, cat_error *err) {
  int rc = check_def(def, err);
  if (rc) return rc;
  if (cat_find_sequence(cat, def->name))
    return cat_err(err, CAT_ERR_EXISTS, "sequence %s already exists", def->name);
  cat_sequence *s = calloc(1, sizeof *s);
  if (s) s->name = strdup(def->name);
  if (!s || !s->name) {
    cat_seq_free(s);
    return cat_err(err, CAT_ERR_NOMEM, "out of memory");
  }
  s->def = *def;
  s->def.name = s->name;
  s->next = def->start;
  rc = seq_commit(cat, s, false, err);
  if (!rc) rc = seq_insert(cat_seqs(cat), s, err);
  if (rc) cat_seq_free(s);
  return rc;
}

int cat_drop_sequence(cat_catalog *cat, const char *name, cat_error *err) {
  cat_seq_set *set = cat_seqs(cat);
  bool found;
  int at = seq_pos(set, name, &found);
  if (!found) return cat_err(err, CAT_ERR_NOTFOUND, "sequence %s does not exist", name);
  int rc = seq_commit(cat, set->a[at], true, err);
  if (rc) return rc;
  cat_seq_free(set->a[at]);
  memmove(&set->a[at], &set->a[at + 1], (size_t)(set->n - at - 1) * sizeof *set->a);
  set->n--;
  return CAT_OK;
}

const cat_sequence *cat_find_sequence(const cat_catalog *cat, const char *name) {
  cat_seq_set *set = cat_seqs((cat_catalog *)cat);
  bool found;
  int at = seq_pos(set, name, &found);
  return found ? set->a[at] : NULL;
}

int cat_sequence_count(const cat_catalog *cat) { return cat_seqs((cat_catalog *)cat)->n; }

const cat_sequence *cat_sequence_at(const cat_catalog *cat, int i) {
  const cat_seq_set *set = cat_seqs((cat_catalog *)cat);
  return i >= 0 && i < set->n ? set->a[i] : NULL;
}

/* How many values of s's range lie from v on, in the direction of its increment, capped at
** cap (v is inside the range). */
static int64_t values_left(const cat_sequence *s, int64_t v, int64_t cap) {
  const cat_sequence_def *d = &s->def;
  uint64_t span = d->increment > 0 ? (uint64_t)d->max_value - (uint64_t)v
                                   : (uint64_t)v - (uint64_t)d->min_value;
  uint64_t step = d->increment > 0 ? (uint64_t)d->increment : 0 - (uint64_t)d->increment;
  uint64_t n = span / step; /* values after v */
  return n >= (uint64_t)cap ? cap : (int64_t)n + 1;
}

/* A remote backend: s's row as stored now into rec (SEQ_REC_MAX bytes), *len its length
** (0: the row is gone), and s's next and done taken from it. */
static int seq_reread(cat_catalog *cat, cat_sequence *s, uint8_t *rec, size_t *len,
                      cat_error *err) {
  uint8_t key[SEQ_NAME_LIMIT + 3];
  size_t kn = seq_key(s->name, key);
  uint32_t fam = cat_sys_family(cat);
  kv_scan_options o;
  memset(&o, 0, sizeof o);
  o.family_ids = &fam;
  o.n_families = 1;
  kv_backend_scan *sc = NULL;
  kv_row row;
  *len = 0;
  int rc = kv_be_get(cat_backend(cat), &o, key, kn, &sc, &row);
  for (uint32_t i = 0; rc == KV_OK && i < row.n_cells; i++)
    if (row.cells[i].qual_len == 1 && row.cells[i].qual[0] == 'd' &&
        row.cells[i].value_len <= SEQ_REC_MAX) {
      *len = row.cells[i].value_len;
      memcpy(rec, row.cells[i].value, *len);
      break;
    }
  kv_be_scan_close(cat_backend(cat), sc);
  if (rc && rc != KV_ERR_NOTFOUND) return cat_kv_error(err, rc, "sequence read");
  if (!*len) return cat_err(err, CAT_ERR_NOTFOUND, "sequence %s does not exist", s->name);
  cat_sequence *now = cat_seq_record_parse(rec, *len);
  if (!now) return cat_err(err, CAT_ERR_CORRUPT, "corrupt SYSTEM.CATALOG sequence row");
  s->next = now->next;
  s->done = now->done;
  cat_seq_free(now);
  return CAT_OK;
}

/* Write s's row only if the stored row is still old[0..old_len): *applied tells. */
static int seq_commit_if(cat_catalog *cat, const cat_sequence *s, const uint8_t *old,
                         size_t old_len, bool *applied, cat_error *err) {
  uint8_t key[SEQ_NAME_LIMIT + 3], rec[SEQ_REC_MAX];
  size_t kn = seq_key(s->name, key);
  kv_batch *b = kv_batch_new();
  if (!b) return cat_err(err, CAT_ERR_NOMEM, "out of memory");
  int rc = kv_batch_put(b, cat_sys_family(cat), key, kn, "d", 1, KV_TS_NOW, rec,
                        seq_record(s, rec));
  kv_backend_check chk = {cat_sys_family(cat), key, (uint32_t)kn, (const uint8_t *)"d", 1,
                          old, (uint32_t)old_len};
  if (rc == KV_OK) rc = kv_be_check_and_write(cat_backend(cat), &chk, b, applied, NULL);
  kv_batch_free(b);
  return rc ? cat_kv_error(err, rc, "sequence commit") : CAT_OK;
}

#define SEQ_CLAIM_TRIES 1000 /* check-and-write rounds lost to other writers before failing */

/* Claim the next block of s: commit the row with next moved past it, then make it the
** block values are handed out of. */
static int claim_block(cat_catalog *cat, cat_sequence *s, bool flush, cat_error *err) {
  const cat_sequence_def *d = &s->def;
  bool shared = !kv_backend_local_db(cat_backend(cat)) && cat_backend(cat)->caps.check_and_write;
  uint8_t old[SEQ_REC_MAX];
  size_t old_len = 0;
  for (int tries = 0; shared; tries++) {
    if (tries == SEQ_CLAIM_TRIES)
      return cat_err(err, CAT_ERR_KV, "sequence %s: %d claims lost to other writers", s->name,
                     tries);
    int rc = seq_reread(cat, s, old, &old_len, err);
    if (rc) return rc;
    cat_sequence saved = *s;
    int64_t v = s->next;
    if (s->done) {
      if (!d->cycle) break; /* the error below */
      v = d->increment > 0 ? d->min_value : d->max_value;
    }
    int64_t k = values_left(s, v, d->cache);
    s->done = values_left(s, v, INT64_MAX) - k == 0;
    s->next = s->done ? v : (int64_t)((uint64_t)v + (uint64_t)k * (uint64_t)d->increment);
    bool applied = false;
    rc = seq_commit_if(cat, s, old, old_len, &applied, err);
    if (rc || !applied) {
      s->next = saved.next;
      s->done = saved.done;
      if (rc) return rc;
      continue;
    }
    s->block_next = v;
    s->block_left = k;
    return CAT_OK;
  }
  int64_t v = s->next;
  if (s->done) {
    if (!d->cycle)
      return cat_err(err, CAT_ERR_RANGE, "Reached %s of sequence %s (%s %lld, no CYCLE)",
                     d->increment > 0 ? "MAXVALUE" : "MINVALUE", s->name,
                     d->increment > 0 ? "MAXVALUE" : "MINVALUE",
                     (long long)(d->increment > 0 ? d->max_value : d->min_value));
    v = d->increment > 0 ? d->min_value : d->max_value; /* CYCLE starts over */
  }
  int64_t k = values_left(s, v, d->cache);
  int64_t left_after = values_left(s, v, INT64_MAX) - k; /* values after the block */
  cat_sequence saved = *s;
  s->done = left_after == 0;
  /* v + k * increment stays inside the range when values are left after the block */
  s->next = s->done ? v : (int64_t)((uint64_t)v + (uint64_t)k * (uint64_t)d->increment);
  int rc = seq_commit(cat, s, false, err);
  if (rc == CAT_OK && flush) {
    int krc = kv_be_flush(cat_backend(cat), CAT_SYSTEM_TABLE);
    if (krc) rc = cat_kv_error(err, krc, "sequence flush");
  }
  if (rc) { /* nothing of the block is handed out; the next call claims it again */
    s->next = saved.next;
    s->done = saved.done;
    return rc;
  }
  s->block_next = v;
  s->block_left = k;
  return CAT_OK;
}

int cat_sequence_next(cat_catalog *cat, const char *name, bool flush, int64_t *out,
                      cat_error *err) {
  cat_seq_set *set = cat_seqs(cat);
  bool found;
  int at = seq_pos(set, name, &found);
  if (!found) return cat_err(err, CAT_ERR_NOTFOUND, "sequence %s does not exist", name);
  cat_sequence *s = set->a[at];
  if (s->block_left == 0) {
    int rc = claim_block(cat, s, flush, err);
    if (rc) return rc;
  }
  *out = s->block_next;
  s->current = s->block_next;
  s->has_current = true;
  if (--s->block_left > 0)
    s->block_next = (int64_t)((uint64_t)s->block_next + (uint64_t)s->def.increment);
  return CAT_OK;
}

int cat_sequence_current(const cat_catalog *cat, const char *name, int64_t *out,
                         cat_error *err) {
  const cat_sequence *s = cat_find_sequence(cat, name);
  if (!s) return cat_err(err, CAT_ERR_NOTFOUND, "sequence %s does not exist", name);
  if (!s->has_current)
    return cat_err(err, CAT_ERR_INVALID,
                   "CURRENT VALUE FOR %s before any NEXT VALUE FOR %s in this connection",
                   name, name);
  *out = s->current;
  return CAT_OK;
}

int64_t cat_sequence_restart(const cat_sequence *s) {
  if (!s->done) return s->next;
  if (s->def.cycle) return s->def.increment > 0 ? s->def.min_value : s->def.max_value;
  return s->def.increment > 0 ? s->def.max_value : s->def.min_value;
}
