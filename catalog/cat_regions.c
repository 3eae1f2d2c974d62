/*
** catalog/cat_regions.c: SALT_BUCKETS and SPLIT ON in the catalog (contract in
** catalog/cat_regions.h; bytes in docs/FORMAT_SQL.md (Part 3) "SYSTEM.CATALOG", table record
** version 3). Checks what a definition or a record holds; reads and writes nothing itself.
*/
#include "catalog/cat_regions.h"

#include <stdlib.h>
#include <string.h>

/* Unsigned byte order of a[0..alen) and b[0..blen), a proper prefix first (kv's key order). */
static int key_cmp(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen) {
  int c = memcmp(a, b, alen < blen ? alen : blen);
  return c ? c : (alen > blen) - (alen < blen);
}

/* Give t copies of the n split points keys[i][0..lens[i]); false when out of memory. */
static bool set_splits(cat_table *t, const uint8_t *const *keys, const uint32_t *lens,
                       uint32_t n) {
  if (!n) return true;
  t->split_keys = calloc(n, sizeof *t->split_keys);
  t->split_lens = calloc(n, sizeof *t->split_lens);
  if (!t->split_keys || !t->split_lens) return false;
  for (uint32_t i = 0; i < n; i++) {
    t->split_keys[i] = malloc(lens[i] ? lens[i] : 1);
    if (!t->split_keys[i]) return false;
    t->n_splits = i + 1;
    memcpy(t->split_keys[i], keys[i], lens[i]);
    t->split_lens[i] = lens[i];
  }
  return true;
}

void cat_regions_free(cat_table *t) {
  for (uint32_t i = 0; i < t->n_splits; i++) free(t->split_keys ? t->split_keys[i] : NULL);
  free(t->split_keys);
  free(t->split_lens);
  t->split_keys = NULL;
  t->split_lens = NULL;
  t->n_splits = 0;
}

void cat_regions_record(const cat_table *t, buf *b) {
  put_var(b, (uint64_t)t->salt_buckets);
  put_var(b, t->n_splits);
  for (uint32_t i = 0; i < t->n_splits; i++) {
    put_var(b, t->split_lens[i]);
    need(b, t->split_lens[i]);
    if (!b->oom) {
      memcpy(b->p + b->len, t->split_keys[i], t->split_lens[i]);
      b->len += t->split_lens[i];
    }
  }
}

void cat_regions_parse(rd *r, cat_table *t) {
  uint64_t sb = get_var(r), ns = get_var(r);
  if (r->bad || sb > CAT_SALT_MAX || ns > CAT_SPLIT_MAX || (sb && ns) || (!sb && !ns)) {
    r->bad = true;
    return;
  }
  t->salt_buckets = (int)sb;
  if (!ns) return;
  const uint8_t **keys = calloc(ns, sizeof *keys);
  uint32_t *lens = calloc(ns, sizeof *lens);
  for (uint64_t i = 0; keys && lens && i < ns && !r->bad; i++) {
    uint64_t len = get_var(r);
    if (r->bad || len < 1 || len > CAT_KEY_MAX || len > (uint64_t)(r->limit - r->p)) {
      r->bad = true;
      break;
    }
    keys[i] = r->p;
    lens[i] = (uint32_t)len;
    r->p += len;
    if (i && key_cmp(keys[i - 1], lens[i - 1], keys[i], lens[i]) >= 0) r->bad = true;
  }
  if (!keys || !lens || (!r->bad && !set_splits(t, keys, lens, (uint32_t)ns))) r->bad = true;
  free(keys);
  free(lens);
}

int cat_regions_from_def(cat_table *t, const cat_table_def *def, cat_error *err) {
  if (def->salt_buckets < 0 || def->salt_buckets > CAT_SALT_MAX)
    return cat_err(err, CAT_ERR_INVALID, "table %s: SALT_BUCKETS %d is outside 1..%d", def->name,
                   def->salt_buckets, CAT_SALT_MAX);
  if (def->salt_buckets && def->n_splits)
    return cat_err(err, CAT_ERR_INVALID, "table %s: SPLIT ON cannot be used with SALT_BUCKETS",
                   def->name);
  if (def->n_splits > CAT_SPLIT_MAX)
    return cat_err(err, CAT_ERR_INVALID, "table %s: %u split points (at most %d)", def->name,
                   def->n_splits, CAT_SPLIT_MAX);
  for (uint32_t i = 0; i < def->n_splits; i++) {
    if (def->split_lens[i] < 1 || def->split_lens[i] > CAT_KEY_MAX)
      return cat_err(err, CAT_ERR_INVALID, "table %s: split point %u is empty or too long",
                     def->name, i + 1);
    if (i && key_cmp(def->split_keys[i - 1], def->split_lens[i - 1], def->split_keys[i],
                     def->split_lens[i]) >= 0)
      return cat_err(err, CAT_ERR_INVALID, "table %s: split point %u is not above split point %u",
                     def->name, i + 1, i);
  }
  t->salt_buckets = def->salt_buckets;
  if (!set_splits(t, def->split_keys, def->split_lens, def->n_splits))
    return cat_err(err, CAT_ERR_NOMEM, "out of memory");
  return CAT_OK;
}

bool cat_region_keys_of(const cat_table *t, cat_region_keys *out) {
  memset(out, 0, sizeof *out);
  uint32_t n = t->salt_buckets > 1 ? (uint32_t)t->salt_buckets - 1 : t->n_splits;
  if (!n) return true;
  out->keys = calloc(n, sizeof *out->keys);
  out->lens = calloc(n, sizeof *out->lens);
  if (t->salt_buckets > 1) out->bytes = malloc(n);
  if (!out->keys || !out->lens || (t->salt_buckets > 1 && !out->bytes)) {
    cat_region_keys_free(out);
    return false;
  }
  out->n = n;
  for (uint32_t i = 0; i < n; i++) {
    if (out->bytes) {
      out->bytes[i] = (uint8_t)(i + 1);
      out->keys[i] = out->bytes + i;
      out->lens[i] = 1;
    } else {
      out->keys[i] = t->split_keys[i];
      out->lens[i] = t->split_lens[i];
    }
  }
  return true;
}

void cat_region_keys_free(cat_region_keys *k) {
  free(k->keys);
  free(k->lens);
  free(k->bytes);
  memset(k, 0, sizeof *k);
}
