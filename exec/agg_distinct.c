/*
** exec/agg_distinct.c: the value set behind f(DISTINCT x) (exec/agg.h). Each value is
** reduced to canonical key bytes (a tag and a payload) so that values equal for DISTINCT
** have equal keys: exact numbers by value (an integral DECIMAL as the integer, others
** normalized), doubles with -0.0 as 0.0 and one NaN, CHAR without trailing spaces, DATE as
** its midnight TIMESTAMP. Keys are appended to one byte pool; an open-addressing table of
** entry numbers (linear probing, load <= 1/2) finds them. Entries keep insertion order so
** the set can be replayed (merge). Not here: SQL semantics of the aggregate itself.
*/
#include "exec/agg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "catalog/decimal.h"
#include "catalog/value.h"
#include "exec/engine.h"

typedef struct set_entry {
  uint64_t hash;     /* hash of the key */
  size_t off;        /* key offset in pool */
  uint32_t len;      /* key length */
  uint8_t type_id;   /* type the value was added with */
  uint8_t scale;     /* DECIMAL: the scale it was added with (the key is normalized) */
} set_entry;

struct exec_agg_set {
  uint8_t *pool;       /* key bytes of all entries */
  size_t pool_n;       /* bytes used */
  size_t pool_cap;     /* bytes allocated */
  set_entry *ent;      /* entries in insertion order */
  size_t n;            /* entries used */
  size_t ent_cap;      /* entries allocated */
  uint32_t *slot;      /* hash table of entry index + 1 (0 = empty) */
  size_t n_slots;      /* power of two */
};

/* Canonical key of v into k (at least 32 bytes) or, for strings, a tag and v's bytes. */
static size_t make_key(const cat_value *v, uint8_t *k, const uint8_t **tail, size_t *tail_n) {
  int id = v->type.id;
  *tail = NULL;
  *tail_n = 0;
  if (cat_type_is_integer(id) || (id == CAT_T_DECIMAL)) {
    int64_t i;
    if (cat_type_is_integer(id)) i = v->u.i;
    else {
      cat_dec d = cat_dec_normalize(v->u.dec);
      if (d.scale != 0 || d.v > INT64_MAX || d.v < INT64_MIN) {
        k[0] = 'N';
        memcpy(k + 1, &d.v, sizeof d.v);
        k[1 + sizeof d.v] = (uint8_t)d.scale;
        return 2 + sizeof d.v;
      }
      i = (int64_t)d.v;
    }
    k[0] = 'I';
    memcpy(k + 1, &i, 8);
    return 9;
  }
  if (cat_type_is_float(id)) {
    double d = v->u.d;
    if (d == 0) d = 0.0;
    if (isnan(d)) d = NAN;
    k[0] = 'F';
    memcpy(k + 1, &d, 8);
    return 9;
  }
  if (cat_type_has_bytes(id)) { /* an ARRAY by its canonical encoding (catalog/array.h) */
    k[0] = id == CAT_T_VARBINARY ? 'B' : id == CAT_T_ARRAY ? 'A' : 'S';
    *tail = v->u.s.p;
    *tail_n = id == CAT_T_CHAR ? cat_char_trim(v->u.s.p, v->u.s.len) : v->u.s.len;
    return 1;
  }
  if (id == CAT_T_DATE || id == CAT_T_TIMESTAMP || id == CAT_T_TIME) {
    int64_t us = id == CAT_T_DATE ? v->u.i * CAT_US_PER_DAY : v->u.i;
    k[0] = id == CAT_T_TIME ? 't' : 'T';
    memcpy(k + 1, &us, 8);
    return 9;
  }
  k[0] = 'b';
  k[1] = v->u.b ? 1 : 0;
  return 2;
}

static bool grow_slots(exec_agg_set *s) {
  size_t n = s->n_slots ? s->n_slots * 2 : 64;
  uint32_t *t = calloc(n, sizeof *t);
  if (!t) return false;
  for (size_t i = 0; i < s->n; i++) {
    size_t j = s->ent[i].hash & (n - 1);
    while (t[j]) j = (j + 1) & (n - 1);
    t[j] = (uint32_t)(i + 1);
  }
  free(s->slot);
  s->slot = t;
  s->n_slots = n;
  return true;
}

int exec_agg_set_add(exec_agg_set **set, const cat_value *v, bool *added) {
  exec_agg_set *s = *set;
  if (!s) {
    s = calloc(1, sizeof *s);
    if (!s) return EXEC_NOMEM;
    *set = s;
  }
  uint8_t head[32];
  const uint8_t *tail;
  size_t tail_n;
  size_t hn = make_key(v, head, &tail, &tail_n);
  size_t klen = hn + tail_n;
  if (klen > UINT32_MAX) return EXEC_NOMEM;
  uint64_t h = XXH3_64bits(head, hn);
  if (tail_n) h = XXH3_64bits_withSeed(tail, tail_n, h);
  if ((s->n + 1) * 2 > s->n_slots && !grow_slots(s)) return EXEC_NOMEM;
  size_t j = h & (s->n_slots - 1);
  while (s->slot[j]) {
    const set_entry *e = &s->ent[s->slot[j] - 1];
    if (e->hash == h && e->len == klen && memcmp(s->pool + e->off, head, hn) == 0 &&
        (tail_n == 0 || memcmp(s->pool + e->off + hn, tail, tail_n) == 0)) {
      *added = false;
      return EXEC_OK;
    }
    j = (j + 1) & (s->n_slots - 1);
  }
  if (s->pool_n + klen > s->pool_cap) {
    size_t cap = s->pool_cap ? s->pool_cap * 2 : 1024;
    while (cap < s->pool_n + klen) cap *= 2;
    uint8_t *p = realloc(s->pool, cap);
    if (!p) return EXEC_NOMEM;
    s->pool = p;
    s->pool_cap = cap;
  }
  if (s->n == s->ent_cap) {
    size_t cap = s->ent_cap ? s->ent_cap * 2 : 32;
    set_entry *e = realloc(s->ent, cap * sizeof *e);
    if (!e) return EXEC_NOMEM;
    s->ent = e;
    s->ent_cap = cap;
  }
  set_entry *e = &s->ent[s->n];
  e->hash = h;
  e->off = s->pool_n;
  e->len = (uint32_t)klen;
  e->type_id = v->type.id;
  e->scale = v->type.id == CAT_T_DECIMAL ? (uint8_t)v->u.dec.scale : 0;
  memcpy(s->pool + s->pool_n, head, hn);
  if (tail_n) memcpy(s->pool + s->pool_n + hn, tail, tail_n);
  s->pool_n += klen;
  s->slot[j] = (uint32_t)(++s->n);
  *added = true;
  return EXEC_OK;
}

size_t exec_agg_set_count(const exec_agg_set *set) { return set ? set->n : 0; }

size_t exec_agg_set_bytes(const exec_agg_set *set) {
  if (!set) return 0;
  return sizeof *set + set->pool_cap + set->ent_cap * sizeof(set_entry) +
         set->n_slots * sizeof(uint32_t);
}

/* d back at the scale it was added with (exact: it came from there). */
static cat_value dec_at(cat_dec d, int scale) {
  cat_dec r;
  if (scale > d.scale && cat_dec_rescale(d, scale, &r, NULL) == CAT_OK) d = r;
  return cat_v_dec(d, 0, (uint8_t)d.scale);
}

void exec_agg_set_value(const exec_agg_set *s, size_t i, cat_value *out) {
  const set_entry *e = &s->ent[i];
  const uint8_t *k = s->pool + e->off;
  int id = e->type_id;
  int64_t x;
  switch (k[0]) {
    case 'I':
      memcpy(&x, k + 1, 8);
      if (id == CAT_T_DECIMAL) *out = dec_at(cat_dec_from_i64(x), e->scale);
      else *out = cat_v_int(id, x);
      break;
    case 'N': {
      cat_dec d;
      memcpy(&d.v, k + 1, sizeof d.v);
      d.scale = k[1 + sizeof d.v];
      *out = dec_at(d, e->scale);
      break;
    }
    case 'F': {
      double d;
      memcpy(&d, k + 1, 8);
      *out = cat_v_double(d);
      out->type.id = (uint8_t)id;
      break;
    }
    case 'S': case 'B':
      *out = cat_v_str(id, k + 1, e->len - 1);
      break;
    case 'T': case 't':
      memcpy(&x, k + 1, 8);
      *out = cat_v_int(id, id == CAT_T_DATE ? x / CAT_US_PER_DAY : x);
      break;
    default:
      *out = cat_v_bool(k[1] != 0);
      break;
  }
}

void exec_agg_set_free(exec_agg_set *s) {
  if (!s) return;
  free(s->pool);
  free(s->ent);
  free(s->slot);
  free(s);
}
