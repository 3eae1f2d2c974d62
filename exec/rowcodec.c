/*
** exec/rowcodec.c: one SQL row <-> its kv cells (contract in exec/rowcodec.h).
**
** Writing checks each value against its column (cast first when the type id differs), then
** adds the marker cell, one put or KV_DELETE_COLUMN per set non-key column, all at the row
** key built by catalog/keycodec.c. Reading decodes only the needed key columns (those
** before them are skipped, not decoded) and walks the row's cells once: the qualifier gives
** the column id (1 or 2 bytes, cat_column_qualifier), a per-table array maps the id to the
** column, its family and a decode kind chosen at init (fixed-width numbers are read in
** place, strings point into the cell; only DECIMAL goes through cat_vc_decode), and the
** first cell of a qualifier is its newest version (kv hands cells out qualifier ascending,
** timestamp descending). No allocation happens per row or per cell
** except the optional copy into the caller's arena.
**
** Not here: choosing families or qualifiers to read, index rows, transactions.
*/
#include "exec/rowcodec.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/salt.h"
#include "catalog/valcodec.h"
#include "catalog/value.h"
#include "planner/plan.h"

#define CAST_BUF 64 /* bytes of cast output text per value (cat_value_cast's rule) */

int exec_error_set(exec_error *err, int code, const char *fmt, ...) {
  if (err) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    err->code = code;
    err->offset = -1;
  }
  return code;
}

/* Map a failed kv batch call onto an exec status. */
static int kv_fail(exec_error *err, int rc, const char *what) {
  int code = rc == KV_ERR_TOOBIG ? EXEC_TOOBIG : rc == KV_ERR_NOMEM ? EXEC_NOMEM : EXEC_ERROR;
  return exec_error_set(err, code, "%s: %s (%s)", what, kv_status_name(rc), kv_errmsg());
}

/* Cell decode kinds of exec_rc_cell.kind. */
enum { RC_GENERIC = 0, RC_INT, RC_DOUBLE, RC_FLOAT, RC_BOOL, RC_BYTES, RC_DYN };

static uint8_t kind_of(int id) {
  switch (id) {
    case CAT_T_TINYINT: case CAT_T_SMALLINT: case CAT_T_INTEGER: case CAT_T_BIGINT:
    case CAT_T_DATE: case CAT_T_TIME: case CAT_T_TIMESTAMP: return RC_INT;
    case CAT_T_DOUBLE: return RC_DOUBLE;
    case CAT_T_FLOAT: return RC_FLOAT;
    case CAT_T_BOOLEAN: return RC_BOOL;
    case CAT_T_CHAR: case CAT_T_VARCHAR: case CAT_T_VARBINARY: return RC_BYTES;
    default: return RC_GENERIC; /* DECIMAL (rescaled to the column's scale) */
  }
}

int exec_rowcodec_init(exec_rowcodec *rc, const cat_table *t, exec_error *err) {
  memset(rc, 0, sizeof *rc);
  rc->table = t;
  rc->n_columns = t->n_columns;
  uint16_t max_id = 0;
  for (int i = 0; i < t->n_columns; i++)
    if (t->columns[i].pk_pos < 0 && t->columns[i].id > max_id) max_id = t->columns[i].id;
  rc->max_id = max_id;
  rc->key_family_id = t->families[0].kv_id;
  size_t n_pk = t->n_pk > 0 ? (size_t)t->n_pk : 1;
  rc->col_of_id = malloc(((size_t)max_id + 1) * sizeof *rc->col_of_id);
  rc->by_id = malloc(((size_t)max_id + 1) * sizeof *rc->by_id);
  rc->nulls = malloc(((size_t)t->n_columns + 1) * sizeof *rc->nulls);
  rc->by_pk = malloc(n_pk * sizeof *rc->by_pk);
  rc->tail_off = calloc(n_pk, sizeof *rc->tail_off);
  rc->prep_copy = calloc((size_t)t->n_columns + 1, sizeof *rc->prep_copy);
  rc->prep_slots = calloc((size_t)t->n_columns + 1, sizeof *rc->prep_slots);
  rc->by_id_need = malloc(((size_t)max_id + 1) * sizeof *rc->by_id_need);
  rc->fill = malloc(((size_t)t->n_columns + 1) * sizeof *rc->fill);
  rc->prep_tail_keys = malloc(n_pk * sizeof *rc->prep_tail_keys);
  rc->key = malloc(CAT_KEY_MAX);
  rc->scratch = malloc(CAT_KEY_MAX);
  rc->pk_vals = calloc(n_pk, sizeof *rc->pk_vals);
  rc->cast_buf = malloc(n_pk * CAST_BUF);
  rc->fitted = malloc(((size_t)t->n_columns + 1) * sizeof *rc->fitted);
  rc->fit_buf = malloc(((size_t)t->n_columns + 1) * CAST_BUF);
  rc->dyn = malloc(((size_t)t->n_dynamic + 1) * sizeof *rc->dyn);
  rc->dyn_need = malloc(((size_t)t->n_dynamic + 1) * sizeof *rc->dyn_need);
  if (!rc->dyn || !rc->dyn_need ||
      !rc->fitted || !rc->fit_buf || !rc->col_of_id || !rc->by_id || !rc->nulls || !rc->by_pk || !rc->tail_off || !rc->key ||
      !rc->scratch || !rc->pk_vals || !rc->cast_buf || !rc->prep_copy || !rc->prep_slots || !rc->by_id_need ||
      !rc->fill || !rc->prep_tail_keys) {
    exec_rowcodec_free(rc);
    return exec_error_set(err, EXEC_NOMEM, "out of memory building the row codec of %s", t->name);
  }
  for (size_t i = 0; i <= max_id; i++) {
    rc->col_of_id[i] = -1;
    rc->by_id[i] = (exec_rc_cell){-1, RC_GENERIC, 0, 0};
  }
  for (int j = 0; j < t->n_pk; j++) {
    const cat_key_col *kc = &t->key_cols[j];
    int w = cat_type_fixed_width(kc->type.id);
    uint8_t kind = kind_of(kc->type.id);
    if (kc->nullable || w <= 0 || w > 8 || (kind != RC_INT && kind != RC_DOUBLE && kind != RC_FLOAT))
      kind = RC_GENERIC;
    rc->by_pk[j] = (exec_rc_cell){(int16_t)t->pk[j], kind, (uint8_t)(w > 0 ? w : 0), 0};
  }
  /* the fixed-width tail of the key: its columns sit at known offsets from the key's end */
  rc->fixed_from = t->n_pk;
  uint32_t off = 0;
  for (int j = t->n_pk - 1; j >= 0 && rc->by_pk[j].kind != RC_GENERIC; j--) {
    off += rc->by_pk[j].width;
    rc->tail_off[j] = off;
    rc->fixed_from = j;
  }
  rc->tail_bytes = off;
  for (int i = 0; i < t->n_columns; i++) {
    const cat_column *c = &t->columns[i];
    rc->nulls[i] = cat_v_null(c->type);
    if (c->dyn_qual) { /* a dynamic column: found by its qualifier (dyn_find) */
      rc->dyn[rc->n_dyn++] = (exec_rc_cell){(int16_t)i, RC_DYN, 0, t->families[c->family].kv_id};
      continue;
    }
    if (c->pk_pos >= 0 || c->id == 0) continue;
    rc->col_of_id[c->id] = (int16_t)i;
    int w = cat_type_fixed_width(c->type.id);
    rc->by_id[c->id] = (exec_rc_cell){(int16_t)i, kind_of(c->type.id), (uint8_t)(w > 0 ? w : 0),
                                      t->families[c->family].kv_id};
  }
  return EXEC_OK;
}

void exec_rowcodec_free(exec_rowcodec *rc) {
  if (!rc) return;
  free(rc->col_of_id);
  free(rc->by_id);
  free(rc->nulls);
  free(rc->by_pk);
  free(rc->tail_off);
  free(rc->prep_copy);
  free(rc->prep_slots);
  free(rc->by_id_need);
  free(rc->fill);
  free(rc->prep_tail_keys);
  free(rc->key);
  free(rc->scratch);
  free(rc->pk_vals);
  free(rc->cast_buf);
  free(rc->fitted);
  free(rc->fit_buf);
  free(rc->dyn);
  free(rc->dyn_need);
  memset(rc, 0, sizeof *rc);
}

/* Check (and convert) a non-NULL value for column c into *out; cast text goes to buf
** (CAST_BUF bytes). Errors name the column. */
static int fit(const cat_column *c, const cat_value *in, cat_value *out, uint8_t *buf,
               exec_error *err) {
  if (in->type.id == CAT_T_DOUBLE && c->type.id == CAT_T_DOUBLE && !in->is_null) {
    /* cat_value_check's DOUBLE case (any NaN made the one NaN), field by field: the loader's
       usual value, without the whole-value copies */
    out->type = c->type;
    out->is_null = false;
    out->u.d = isnan(in->u.d) ? NAN : in->u.d;
    return EXEC_OK;
  }
  cat_error ce; /* per value: set the fields, do not zero the message buffer */
  ce.code = CAT_OK;
  ce.kv_code = 0;
  ce.msg[0] = 0;
  cat_value tmp;
  const cat_value *src = in;
  if (in->type.id != c->type.id) {
    if (cat_value_cast(in, &c->type, &tmp, buf, CAST_BUF, &ce) != CAT_OK)
      return exec_error_set(err, ce.code == CAT_ERR_TYPE ? EXEC_ERROR : EXEC_CONSTRAINT,
                            "column %s: %s", c->name, ce.msg);
    src = &tmp;
  }
  if (cat_value_check(&c->type, src, out, &ce) != CAT_OK)
    return exec_error_set(err, ce.code == CAT_ERR_TYPE ? EXEC_ERROR : EXEC_CONSTRAINT,
                          "column %s: %s", c->name, ce.msg);
  return EXEC_OK;
}

int exec_row_key(exec_rowcodec *rc, const cat_value *vals, uint8_t *buf, size_t cap,
                 size_t *len, exec_error *err) {
  const cat_table *t = rc->table;
  for (int j = 0; j < t->n_pk; j++) {
    const cat_column *c = &t->columns[t->pk[j]];
    const cat_value *v = &vals[t->pk[j]];
    if (v->is_null) {
      if (!c->nullable)
        return exec_error_set(err, EXEC_CONSTRAINT, "column %s: primary key value may not be NULL",
                              c->name);
      rc->pk_vals[j] = cat_v_null(c->type);
      continue;
    }
    int r = fit(c, v, &rc->pk_vals[j], rc->cast_buf + (size_t)j * CAST_BUF, err);
    if (r != EXEC_OK) return r;
  }
  cat_error ce = {0};
  size_t klen = 0, salt = cat_salt_len(t); /* a salted table's key starts with its bucket */
  if (cat_key_encode(t->key_cols, t->n_pk, rc->pk_vals, rc->key + salt, CAT_KEY_MAX - salt,
                     &klen, &ce) != CAT_OK)
    return exec_error_set(err, ce.code == CAT_ERR_TOOBIG ? EXEC_TOOBIG : EXEC_CONSTRAINT,
                          "row key of %s: %s", t->name, ce.msg);
  if (salt) rc->key[0] = cat_salt_byte(rc->key + 1, klen, t->salt_buckets);
  klen += salt;
  rc->key_len = klen;
  if (buf) {
    if (cap < klen)
      return exec_error_set(err, EXEC_TOOBIG, "row key of %s: %zu bytes do not fit in %zu", t->name,
                            klen, cap);
    memcpy(buf, rc->key, klen);
  }
  if (len) *len = klen;
  return EXEC_OK;
}

int exec_row_check(exec_rowcodec *rc, const cat_value *vals, const bool *set,
                   exec_error *err) {
  const cat_table *t = rc->table;
  for (int i = 0; i < t->n_columns; i++) {
    const cat_column *c = &t->columns[i];
    if (c->pk_pos >= 0 || (set && !set[i])) continue;
    if (vals[i].is_null) {
      if (!c->nullable)
        return exec_error_set(err, EXEC_CONSTRAINT, "column %s may not be NULL", c->name);
      continue;
    }
    int r = fit(c, &vals[i], &rc->fitted[i], rc->fit_buf + (size_t)i * CAST_BUF, err);
    if (r != EXEC_OK) return r;
  }
  return EXEC_OK;
}

int exec_row_put(exec_rowcodec *rc, const cat_value *vals, const bool *set, int64_t ts,
                 kv_batch *b, exec_error *err) {
  const cat_table *t = rc->table;
  int r = exec_row_key(rc, vals, NULL, 0, NULL, err);
  if (r != EXEC_OK) return r;
  /* Check every set value before adding anything, so a bad value leaves b unchanged; the
  ** checked values (rc->fitted, their cast text in rc->fit_buf) are the ones encoded below. */
  r = exec_row_check(rc, vals, set, err);
  if (r != EXEC_OK) return r;
  int kr = kv_batch_put(b, rc->key_family_id, rc->key, rc->key_len, CAT_MARKER_QUALIFIER, 1,
                        ts, "", 0);
  if (kr != KV_OK) return kv_fail(err, kr, "row marker");
  uint64_t cover = cat_row_cover_of(t), put = 0, touched = 0;
  for (int i = 0; i < t->n_columns; i++) {
    const cat_column *c = &t->columns[i];
    if (c->pk_pos >= 0 || (set && !set[i])) continue;
    uint8_t qb[2];
    size_t qlen;
    const uint8_t *q = cat_col_qual(c, qb, &qlen); /* a dynamic column's: 00 + name */
    uint32_t fam = t->families[c->family].kv_id;
    touched |= 1ull << c->family;
    if (vals[i].is_null) {
      kr = kv_batch_delete(b, fam, KV_DELETE_COLUMN, rc->key, rc->key_len, q, qlen, ts);
      if (kr != KV_OK) return kv_fail(err, kr, c->name);
      continue;
    }
    uint8_t enc[CAT_FIXED_ENC_MAX];
    const cat_value cv = rc->fitted[i];
    const uint8_t *val;
    size_t vlen;
    if (cat_type_has_bytes(cv.type.id)) {
      /* The cell value of a string is its bytes (CHAR: trimmed by cat_value_check). */
      val = cv.u.s.p;
      vlen = cv.type.id == CAT_T_CHAR ? cat_char_trim(cv.u.s.p, cv.u.s.len) : cv.u.s.len;
    } else {
      cat_error ce;
      ce.code = CAT_OK;
      ce.kv_code = 0;
      ce.msg[0] = 0;
      if (cat_vc_encode(&cv, enc, sizeof enc, &vlen, &ce) != CAT_OK)
        return exec_error_set(err, EXEC_ERROR, "column %s: %s", c->name, ce.msg);
      val = enc;
    }
    if (vlen > KV_MAX_VALUE)
      return exec_error_set(err, EXEC_TOOBIG,
                            "column %s: value of %zu bytes over the cell maximum %u", c->name,
                            vlen, KV_MAX_VALUE);
    kr = kv_batch_put(b, fam, rc->key, rc->key_len, q, qlen, ts, val ? (const void *)val : "",
                      vlen);
    if (kr != KV_OK) return kv_fail(err, kr, c->name);
    if (cat_column_counts_for_cover(c)) put |= 1ull << c->family;
  }
  rc->cover_miss = cover & ~put;
  rc->cover_untouched = rc->cover_miss & ~touched;
  return EXEC_OK;
}

int exec_row_delete(exec_rowcodec *rc, const uint8_t *key, size_t key_len, int64_t ts,
                    kv_batch *b, exec_error *err) {
  const cat_table *t = rc->table;
  if (key_len == 0)
    return exec_error_set(err, EXEC_ERROR, "delete from %s: empty row key", t->name);
  for (int f = 0; f < t->n_families; f++) {
    int kr = kv_batch_delete(b, t->families[f].kv_id, KV_DELETE_FAMILY, key, key_len, NULL, 0,
                             ts);
    if (kr != KV_OK) return kv_fail(err, kr, "row delete");
  }
  return EXEC_OK;
}

void exec_rowcodec_prepare(exec_rowcodec *rc, const bool *need, const int16_t *slots) {
  const cat_table *t = rc->table;
  if (!need || t->n_columns > 64) { /* the fast path keeps a 64-bit mask of slots */
    rc->prep_need = NULL;
    return;
  }
  size_t n = (size_t)t->n_columns;
  bool mapped = slots != NULL;
  if (rc->prep_need && mapped == rc->prep_mapped && memcmp(rc->prep_copy, need, n) == 0 &&
      (!mapped || memcmp(rc->prep_slots, slots, n * sizeof *slots) == 0)) {
    rc->prep_need = need; /* the same contents: the tables stand */
    return;
  }
  memcpy(rc->prep_copy, need, n);
  for (size_t i = 0; i < n; i++) rc->prep_slots[i] = mapped ? slots[i] : (int16_t)i;
  rc->prep_mapped = mapped;
  for (size_t i = 0; i <= rc->max_id; i++) {
    const exec_rc_cell *e = &rc->by_id[i];
    bool use = e->col >= 0 && need[e->col];
    rc->by_id_need[i] = (exec_rc_pcell){use ? e->col : -1, use ? rc->prep_slots[e->col] : -1,
                                        e->kind, e->width, e->family_id};
  }
  for (int k = 0; k < rc->n_dyn; k++) {
    const exec_rc_cell *e = &rc->dyn[k];
    bool use = need[e->col];
    rc->dyn_need[k] = (exec_rc_pcell){use ? e->col : -1, use ? rc->prep_slots[e->col] : -1,
                                      e->kind, e->width, e->family_id};
  }
  rc->n_fill = 0;
  rc->fill_mask = 0;
  for (int i = 0; i < t->n_columns; i++)
    if (t->columns[i].pk_pos < 0 && need[i]) {
      rc->fill[rc->n_fill++] = (int16_t)i;
      rc->fill_mask |= (uint64_t)1 << rc->prep_slots[i];
    }
  rc->prep_last = rc->prep_walk_last = -1;
  rc->n_prep_tail_keys = 0;
  for (int j = 0; j < t->n_pk; j++)
    if (need[t->pk[j]]) {
      rc->prep_last = j;
      if (j < rc->fixed_from) rc->prep_walk_last = j;
      else {
        const exec_rc_cell *e = &rc->by_pk[j];
        rc->prep_tail_keys[rc->n_prep_tail_keys++] =
            (exec_rc_tkey){t->columns[t->pk[j]].type, rc->tail_off[j],
                           rc->prep_slots[t->pk[j]], e->kind, e->width, t->key_cols[j].desc};
      }
    }
  rc->prep_need = need;
}


/* Copy a string value's bytes into arena a. */
static int own(struct plan_arena *a, cat_value *v, exec_error *err) {
  if (v->is_null || !cat_type_has_bytes(v->type.id))
    return EXEC_OK;
  uint8_t *p = plan_arena_alloc(a, v->u.s.len ? v->u.s.len : 1);
  if (!p) return exec_error_set(err, EXEC_NOMEM, "out of memory copying a row value");
  if (v->u.s.len) memcpy(p, v->u.s.p, v->u.s.len);
  v->u.s.p = p;
  return EXEC_OK;
}

/* The big-endian number in p[0..w) (w 1..8): one load and a byte swap for the widths the
** types use (8, 4, 2, 1), a byte loop for any other. */
static inline uint64_t load_be(const uint8_t *p, unsigned w) {
  switch (w) {
    case 8: {
      uint64_t u;
      memcpy(&u, p, 8);
      return __builtin_bswap64(u);
    }
    case 4: {
      uint32_t u;
      memcpy(&u, p, 4);
      return __builtin_bswap32(u);
    }
    case 2: return ((uint64_t)p[0] << 8) | p[1];
    case 1: return p[0];
    default: {
      uint64_t u = 0;
      for (unsigned i = 0; i < w; i++) u = (u << 8) | p[i];
      return u;
    }
  }
}

/* cat_vc_get_int (catalog/valcodec.h) of the w-byte big-endian value u: the sign bit flipped
** back, then sign-extended. */
static inline int64_t int_of_be(uint64_t u, unsigned w) {
  uint64_t m = (uint64_t)1 << (w * 8 - 1);
  u ^= m;
  if (w < 8) u = (u ^ m) - m;
  return (int64_t)u;
}

/* One NOT NULL fixed-width key column of type `type`, decode kind `kind`, from its w bytes at
** p: its cell encoding, inverted if desc (the value cat_vc_get_int / _double / _float give
** for the inverted bytes). */
static inline void fixed_key_value(uint8_t kind, unsigned w, bool desc, cat_type type,
                                   const uint8_t *p, cat_value *v) {
  uint64_t u = load_be(p, w);
  if (desc) u = ~u & (w == 8 ? ~(uint64_t)0 : (((uint64_t)1 << (w * 8)) - 1));
  v->type = type;
  v->is_null = false;
  if (kind == RC_INT) {
    v->u.i = int_of_be(u, w);
  } else if (kind == RC_DOUBLE) {
    uint64_t bits = cat_vc_unflip_bits(u, 64);
    memcpy(&v->u.d, &bits, 8);
  } else {
    uint32_t bits = (uint32_t)cat_vc_unflip_bits(u, 32);
    float f;
    memcpy(&f, &bits, 4);
    v->u.d = (double)f;
  }
}

/* fixed_key_value of a key column by its tables (e: its by_pk entry). */
static inline void decode_fixed_key(const exec_rc_cell *e, const cat_key_col *kc,
                                    const cat_column *c, const uint8_t *p, cat_value *v) {
  fixed_key_value(e->kind, e->width, kc->desc, c->type, p, v);
}

/* Decode the needed PK columns of key[0..len) into vals (slots by column). Columns of the
** key's fixed-width tail (rc->fixed_from on) are read at their offset from the key's end;
** the columns before it are walked up to the last needed one, those not needed skipped
** without decoding. A walk that reaches the tail must end exactly where the tail starts; a
** walk of the whole key (no tail) must end at the key's end, as cat_key_decode checks. */
static int decode_key(exec_rowcodec *rc, const uint8_t *key, uint32_t len, const bool *need,
                      cat_value *vals, struct plan_arena *copy, exec_error *err) {
  const cat_table *t = rc->table;
  int last = -1, walk_last = -1;
  const int16_t *slot = NULL; /* column -> slot of vals (prepared), or the identity */
  if (need && need == rc->prep_need) {
    last = rc->prep_last;
    walk_last = rc->prep_walk_last;
    slot = rc->prep_slots;
  } else {
    for (int j = 0; j < t->n_pk; j++)
      if (!need || need[t->pk[j]]) {
        last = j;
        if (j < rc->fixed_from) walk_last = j;
      }
  }
  if (last < 0) return EXEC_OK;
  if (t->salt_buckets) { /* the salt byte (catalog/salt.h) is no column's */
    if (len < 1)
      return exec_error_set(err, EXEC_CORRUPT, "row key of %s does not decode: empty", t->name);
    key++;
    len--;
  }
  const uint8_t *limit = key + len;
  if (rc->fixed_from < t->n_pk) { /* the tail: needed columns read from the key's end */
    uint32_t tail = rc->tail_off[rc->fixed_from];
    if (len < tail)
      return exec_error_set(err, EXEC_CORRUPT, "row key of %s does not decode: %u bytes", t->name,
                            len);
    for (int j = rc->fixed_from; j <= last; j++) {
      int i = t->pk[j];
      if (need && !need[i]) continue;
      decode_fixed_key(&rc->by_pk[j], &t->key_cols[j], &t->columns[i],
                       limit - rc->tail_off[j], &vals[slot ? slot[i] : i]);
    }
    limit -= tail; /* the walk below covers the part before the tail */
  }
  const uint8_t *p = key;
  for (int j = 0; j <= walk_last; j++) {
    const cat_key_col *kc = &t->key_cols[j];
    int i = t->pk[j];
    bool at_end = j == rc->fixed_from - 1; /* the last column before the tail (or the key's
                                              last): it must end exactly at limit */
    if (need && !need[i]) {
      p = cat_key_skip_col(kc, p, limit);
      if (!p) return exec_error_set(err, EXEC_CORRUPT, "row key of %s does not decode: column %s",
                                    t->name, t->columns[i].name);
      continue;
    }
    const exec_rc_cell *e = &rc->by_pk[j];
    if (e->kind != RC_GENERIC) { /* a NOT NULL number before a variable-length column */
      size_t w = e->width;
      if ((size_t)(limit - p) < w || (at_end && (size_t)(limit - p) != w))
        return exec_error_set(err, EXEC_CORRUPT, "row key of %s does not decode: column %s",
                              t->name, t->columns[i].name);
      decode_fixed_key(e, kc, &t->columns[i], p, &vals[slot ? slot[i] : i]);
      p += w;
      continue;
    }
    cat_value *v = &vals[slot ? slot[i] : i];
    int id = kc->type.id;
    if (!kc->desc && !kc->nullable && (cat_type_is_string(id) || id == CAT_T_VARBINARY)) {
      /* an ascending string without a 0x00 byte (catalog/keycodec.h): its bytes, then the
         terminator 0x00 0x01, read in place; anything else (an escape) decodes below */
      const uint8_t *z = memchr(p, 0, (size_t)(limit - p));
      if (z && limit - z >= 2 && z[1] == 0x01 && (!at_end || z + 2 == limit)) {
        v->type = t->columns[i].type;
        v->is_null = false;
        v->u.s.p = p;
        v->u.s.len = (uint32_t)(z - p);
        p = z + 2;
        if (copy) {
          int r = own(copy, v, err);
          if (r != EXEC_OK) return r;
        }
        continue;
      }
    }
    /* an unescaped string is never longer than its encoding: the scratch at the key
       column's own offset cannot overlap another column's */
    size_t off = (size_t)(p - key);
    cat_error ce;
    const uint8_t *end = NULL;
    if (cat_key_decode(kc, 1, p, limit, v, rc->scratch + off, CAT_KEY_MAX - off,
                       at_end ? NULL : &end, &ce) != CAT_OK)
      return exec_error_set(err, EXEC_CORRUPT, "row key of %s does not decode: %s", t->name,
                            ce.msg);
    v->type = t->columns[i].type;
    p = end;
    if (copy) {
      int r = own(copy, v, err);
      if (r != EXEC_OK) return r;
    }
  }
  return EXEC_OK;
}

/* A dynamic column's cell p[0..n) decoded as column col's declared type: the bytes are the
** statement's to interpret (Phoenix decodes them as declared), so they are checked for that
** type first: its width, the form of a BOOLEAN, DECIMAL or ARRAY (cat_vc_decode), UTF-8
** for text, then the type's limits as a write checks them (cat_value_check: a CHAR or
** VARCHAR length, a DECIMAL precision, the DATE / TIME / TIMESTAMP range), so a value read
** is always one the declared type can hold. */
static int decode_dyn(exec_rowcodec *rc, int col, const uint8_t *p, uint32_t n, cat_value *v,
                      exec_error *err) {
  const cat_column *c = &rc->table->columns[col];
  cat_error ce;
  ce.msg[0] = 0;
  char tb[48];
  bool ok = cat_vc_decode(&c->type, p, n, v, &ce) == CAT_OK;
  if (ok && cat_type_is_string(c->type.id) && !cat_utf8_valid(p, n, NULL)) {
    ok = false;
    snprintf(ce.msg, sizeof ce.msg, "not UTF-8 text");
  }
  if (ok) ok = cat_value_check(&c->type, v, v, &ce) == CAT_OK;
  if (!ok)
    return exec_error_set(err, EXEC_ERROR,
                          "dynamic column %s of %s is declared %s, but a cell of %u bytes is not "
                          "a value of type %s (%s): declare the type it was written with",
                          c->name, rc->table->name, cat_type_format(&c->type, tb, sizeof tb), n,
                          cat_type_name(c->type.id), ce.msg);
  v->type = c->type;
  return EXEC_OK;
}

/* Decode one cell's value for column id entry e into *v (type already the column's). */
static inline int decode_cell(exec_rowcodec *rc, const exec_rc_cell *e, const kv_cell_view *cell,
                              cat_value *v, exec_error *err) {
  const uint8_t *p = cell->value;
  uint32_t n = cell->value_len;
  if (e->width && n != e->width) goto bad;
  switch (e->kind) {
    case RC_DOUBLE: v->u.d = cat_vc_get_double(p); break;
    case RC_INT: v->u.i = int_of_be(load_be(p, e->width), e->width); break;
    case RC_BYTES:
      v->u.s.p = p;
      v->u.s.len = n;
      break;
    case RC_FLOAT: v->u.d = (double)cat_vc_get_float(p); break;
    case RC_BOOL:
      if (p[0] > 1) goto bad;
      v->u.b = p[0] == 1;
      break;
    case RC_DYN: return decode_dyn(rc, e->col, p, n, v, err);
    default: {
      cat_error ce;
      const cat_column *c = &rc->table->columns[e->col];
      if (cat_vc_decode(&c->type, p, n, v, &ce) != CAT_OK)
        return exec_error_set(err, EXEC_CORRUPT, "cell of %s.%s does not decode: %s",
                              rc->table->name, c->name, ce.msg);
      v->type = c->type;
      return EXEC_OK;
    }
  }
  v->is_null = false;
  return EXEC_OK;
bad:
  return exec_error_set(err, EXEC_CORRUPT, "cell of %s.%s does not decode: %u bytes for %s",
                        rc->table->name, rc->table->columns[e->col].name, n,
                        cat_type_name(rc->table->columns[e->col].type.id));
}

/* The column id of a declared column's qualifier (cat_column_qualifier), or 0: the marker
** cell of "_k", a dynamic column's qualifier (00 + name), or a qualifier of no column. */
static inline uint32_t qual_id(const kv_cell_view *cell) {
  const uint8_t *q = cell->qual;
  if (cell->qual_len == 1 && q[0] < 0x80) return q[0];
  if (cell->qual_len == 2 && (q[0] & 0x80)) return ((uint32_t)(q[0] & 0x7F) << 8) | q[1];
  return 0;
}

/* The entry of rc->dyn whose column has cell's qualifier and family, or -1. Only for cells
** qual_id gives 0 (a dynamic qualifier starts with the escape byte 00 and is 2 bytes or
** more). */
static int dyn_find(const exec_rowcodec *rc, const kv_cell_view *cell) {
  if (cell->qual_len < 2 || cell->qual[0] != CAT_DYN_QUAL_ESCAPE) return -1;
  for (int k = 0; k < rc->n_dyn; k++) {
    const cat_column *c = &rc->table->columns[rc->dyn[k].col];
    if (rc->dyn[k].family_id == cell->family_id && c->dyn_qual_len == cell->qual_len &&
        memcmp(c->dyn_qual, cell->qual, cell->qual_len) == 0)
      return k;
  }
  return -1;
}

/* decode_key for a prepared need whose key columns are all in the fixed-width tail
** (rc->prep_walk_last < 0): each read at its offset from the key's end, into its slot. */
static int decode_tail_keys(exec_rowcodec *rc, const kv_row *row, cat_value *vals,
                            exec_error *err) {
  const cat_table *t = rc->table;
  if (rc->n_prep_tail_keys == 0) return EXEC_OK;
  if (row->key_len < rc->tail_bytes)
    return exec_error_set(err, EXEC_CORRUPT, "row key of %s does not decode: %u bytes", t->name,
                          row->key_len);
  const uint8_t *end = row->key + row->key_len;
  for (int k = 0; k < rc->n_prep_tail_keys; k++) {
    const exec_rc_tkey *e = &rc->prep_tail_keys[k];
    fixed_key_value(e->kind, e->width, e->desc, e->type, end - e->off, &vals[e->slot]);
  }
  return EXEC_OK;
}

/* Value k of vec into v as table entry e says (column col): an 8-byte DOUBLE straight, any
** other through decode_cell, then owned in copy when copy is not NULL. */
__attribute__((always_inline)) /* called per value of a scan: a call cost ~4% of latest-100 */
static inline int vec_value(exec_rowcodec *rc, const exec_vec_col *e, int col,
                            const kv_value_vector *vec, uint32_t k, cat_value *v,
                            struct plan_arena *copy, exec_error *err) {
  v->type = e->type;
  const uint8_t *p = vec->values[k];
  uint32_t len = vec->value_lens[k];
  if (e->kind == RC_DOUBLE && len == 8) {
    v->u.d = cat_vc_get_double(p);
    v->is_null = false;
    return EXEC_OK;
  }
  exec_rc_cell ce = {col, e->kind, e->width, vec->family_id};
  kv_cell_view cell = {vec->family_id, NULL, 0, 0, p, len};
  int r = decode_cell(rc, &ce, &cell, v, err);
  if (r == EXEC_OK && copy) r = own(copy, v, err);
  return r;
}

/* vec_value out of line, for the dense loop below: the kinds it does not read in place. */
__attribute__((noinline)) static int vec_value_slow(exec_rowcodec *rc, const exec_vec_col *e,
                                                    int col, const kv_value_vector *vec,
                                                    uint32_t k, cat_value *v,
                                                    struct plan_arena *copy, exec_error *err) {
  return vec_value(rc, e, col, vec, k, v, copy, err);
}

/* From position k on, the values of a dense vector (below) that read in place: an 8-byte
** DOUBLE, or the bytes of a CHAR/VARCHAR/VARBINARY (when nocopy), each into its slot.
** Returns the first position it cannot read (n when none). Out of line, with few live values,
** so the loop of a scan's rows keeps them in registers (inlined, it spilled). */
__attribute__((noinline)) static uint32_t dense_run(const exec_vec_col *pc,
                                                   const uint8_t *const *values,
                                                   const uint32_t *lens, uint32_t k, uint32_t n,
                                                   cat_value *vals, bool nocopy) {
  for (; k < n; k++) {
    const exec_vec_col *e = &pc[k];
    cat_value *v = &vals[e->slot];
    uint32_t len = lens[k];
    if (__builtin_expect(e->kind == RC_DOUBLE && len == 8, 1)) {
      v->type = e->type;
      v->u.d = cat_vc_get_double(values[k]);
      v->is_null = false;
    } else if (e->kind == RC_BYTES && nocopy) {
      v->type = e->type;
      v->u.s.p = values[k];
      v->u.s.len = len;
      v->is_null = false;
    } else {
      return k;
    }
  }
  return n;
}

/* The values of vec, a vector of set `set` of map whose every position is present, needed
** and not yet filled (map->dense[set] != 0, prepared for rc's need): dense_run, and
** vec_value_slow for each value it stops at. */
static inline int decode_dense(exec_rowcodec *rc, const exec_vec_map *map, uint32_t set,
                               const kv_value_vector *vec, cat_value *vals,
                               struct plan_arena *copy, exec_error *err) {
  const exec_vec_col *pc = map->pc + map->start[set];
  uint32_t n = map->n[set];
  for (uint32_t k = 0;; k++) {
    k = dense_run(pc, vec->values, vec->value_lens, k, n, vals, copy == NULL);
    if (k == n) return EXEC_OK;
    int r = vec_value_slow(rc, &pc[k], map->col[map->start[set] + k], vec, k, &vals[pc[k].slot],
                           copy, err);
    if (r != EXEC_OK) return r;
  }
}

/* Decode value vectors vecs[0..n_vecs) (kv.h kv_value_vector) through map into vals. Prepared
** (seen not NULL: need is rc->prep_need): a column goes to its prepared slot, its bit set in
** *seen unless already set; else to its own slot when need allows and the slot is still
** NULL (as the views' first, newest version wins in exec_row_decode). */
static int decode_vectors(exec_rowcodec *rc, const kv_value_vector *vecs, uint32_t n_vecs,
                          const bool *need, cat_value *vals, const exec_vec_map *map,
                          uint64_t *seen, struct plan_arena *copy, exec_error *err) {
  const cat_table *t = rc->table;
  for (uint32_t i = 0; i < n_vecs; i++) {
    const kv_value_vector *vec = &vecs[i];
    uint32_t set = 0;
    while (map && set < map->n_sets && map->fid[set] != vec->family_id) set++;
    if (!map || set == map->n_sets || (map->n[set] < 64 && vec->present >> map->n[set]))
      return exec_error_set(err, EXEC_CORRUPT, "row of %s: values of family %u not asked for",
                            t->name, vec->family_id);
    const int16_t *cols = map->col + map->start[set];
    if (seen && map->prep == rc->prep_need) { /* one table entry a value */
      const exec_vec_col *pc = map->pc + map->start[set];
      uint32_t n = map->n[set];
      uint64_t bits = map->dense[set];
      if (bits && vec->present == (((uint64_t)1 << n) - 1) && !(*seen & bits)) {
        /* every position present, needed and not filled yet: no per-value mask work */
        *seen |= bits;
        for (uint32_t k = 0; k < n; k++) {
          int r = vec_value(rc, &pc[k], cols[k], vec, k, &vals[pc[k].slot], copy, err);
          if (r != EXEC_OK) return r;
        }
        continue;
      }
      for (uint64_t m = vec->present; m; m &= m - 1) {
        uint32_t k = (uint32_t)__builtin_ctzll(m);
        const exec_vec_col *e = &pc[k];
        if (e->slot < 0) continue;
        uint64_t bit = (uint64_t)1 << e->slot;
        if (*seen & bit) continue;
        *seen |= bit;
        int r = vec_value(rc, e, cols[k], vec, k, &vals[e->slot], copy, err);
        if (r != EXEC_OK) return r;
      }
      continue;
    }
    for (uint64_t m = vec->present; m; m &= m - 1) {
      uint32_t k = (uint32_t)__builtin_ctzll(m);
      int c = cols[k];
      int slot = c;
      if (seen) {
        if (!rc->prep_copy[c]) continue;
        slot = rc->prep_slots[c];
        uint64_t bit = (uint64_t)1 << slot;
        if (*seen & bit) continue;
        *seen |= bit;
      } else if ((need && !need[c]) || !vals[c].is_null) {
        continue;
      }
      cat_value *v = &vals[slot];
      v->type = rc->nulls[c].type;
      const exec_rc_cell *e = &rc->by_id[t->columns[c].id];
      const uint8_t *p = vec->values[k];
      uint32_t len = vec->value_lens[k];
      if (e->kind == RC_DOUBLE && len == 8) { /* the common reading, inline */
        v->u.d = cat_vc_get_double(p);
        v->is_null = false;
        continue;
      }
      kv_cell_view cell = {vec->family_id, NULL, 0, 0, p, len};
      int r = decode_cell(rc, e, &cell, v, err);
      if (r != EXEC_OK) return r;
      if (copy) {
        r = own(copy, v, err);
        if (r != EXEC_OK) return r;
      }
    }
  }
  return EXEC_OK;
}

void exec_vec_map_prepare(const exec_rowcodec *rc, exec_vec_map *map) {
  map->prep = rc->prep_need;
  if (!rc->prep_need) return;
  const cat_table *t = rc->table;
  uint32_t total = 0;
  for (uint32_t i = 0; i < map->n_sets; i++)
    if ((uint32_t)map->start[i] + map->n[i] > total) total = (uint32_t)map->start[i] + map->n[i];
  for (uint32_t k = 0; k < total && k < 64; k++) {
    int c = map->col[k];
    const exec_rc_cell *e = &rc->by_id[t->columns[c].id];
    exec_vec_col *pc = &map->pc[k];
    pc->type = rc->nulls[c].type;
    pc->slot = rc->prep_copy[c] ? rc->prep_slots[c] : -1;
    pc->kind = e->kind;
    pc->width = e->width;
  }
  for (uint32_t i = 0; i < map->n_sets; i++) { /* sets of needed columns, distinct slots */
    uint64_t slots = 0;
    bool ok = map->n[i] > 0 && map->n[i] < 64;
    for (uint32_t k = map->start[i]; ok && k < (uint32_t)map->start[i] + map->n[i]; k++) {
      const exec_vec_col *pc = &map->pc[k];
      ok = pc->slot >= 0 && !(slots >> pc->slot & 1);
      if (ok) slots |= (uint64_t)1 << pc->slot;
    }
    map->dense[i] = ok ? slots : 0;
  }
}

/* exec_row_decode with the tables of exec_rowcodec_prepare (need == rc->prep_need): cells
** of columns not needed are dropped by the table, a mask says which needed columns a cell
** filled (its first, newest version), and only the others are set NULL at the end. */
static int decode_prepared(exec_rowcodec *rc, const kv_row *row, const kv_value_vector *vecs,
                           uint32_t n_vecs, cat_value *vals, struct plan_arena *copy,
                           const exec_vec_map *map, exec_error *err) {
  const exec_rc_pcell *by_id = rc->by_id_need;
  uint64_t seen = 0;
  for (uint32_t k = 0; k < row->n_cells; k++) {
    const kv_cell_view *cell = &row->cells[k];
    if (cell->family_id == rc->key_family_id) continue; /* "_k" holds no column (catalog.h) */
    uint32_t id = qual_id(cell);
    const exec_rc_pcell *e;
    if (id) {
      if (id > rc->max_id) continue;
      e = &by_id[id];
    } else { /* a dynamic column's, or a qualifier of no column */
      int d = rc->n_dyn ? dyn_find(rc, cell) : -1;
      if (d < 0) continue;
      e = &rc->dyn_need[d];
    }
    if (e->col < 0 || e->family_id != cell->family_id) continue;
    uint64_t bit = (uint64_t)1 << e->slot;
    if (seen & bit) continue; /* an older version of a filled one */
    seen |= bit;
    cat_value *v = &vals[e->slot];
    v->type = rc->nulls[e->col].type;
    if (e->kind == RC_DOUBLE && cell->value_len == 8) {
      v->u.d = cat_vc_get_double(cell->value);
      v->is_null = false;
      continue;
    }
    exec_rc_cell ce = {e->col, e->kind, e->width, e->family_id};
    int r = decode_cell(rc, &ce, cell, v, err);
    if (r != EXEC_OK) return r;
    if (copy) {
      r = own(copy, v, err);
      if (r != EXEC_OK) return r;
    }
  }
  for (uint32_t i = 0; i < n_vecs; i++) {
    const kv_value_vector *vec = &vecs[i];
    uint32_t set = 0;
    if (map && map->prep == rc->prep_need) { /* the dense case inline, else decode_vectors */
      while (set < map->n_sets && map->fid[set] != vec->family_id) set++;
      uint64_t bits = set < map->n_sets ? map->dense[set] : 0;
      if (bits && vec->present == (((uint64_t)1 << map->n[set]) - 1) && !(seen & bits)) {
        seen |= bits;
        int r = decode_dense(rc, map, set, vec, vals, copy, err);
        if (r != EXEC_OK) return r;
        continue;
      }
    }
    int r = decode_vectors(rc, vec, 1, NULL, vals, map, &seen, copy, err);
    if (r != EXEC_OK) return r;
  }
  if ((seen & rc->fill_mask) == rc->fill_mask) return EXEC_OK; /* no NULL to fill in */
  for (int k = 0; k < rc->n_fill; k++) {
    int c = rc->fill[k], sl = rc->prep_slots[c];
    if (!(seen >> sl & 1)) vals[sl] = rc->nulls[c];
  }
  return EXEC_OK;
}

int exec_row_decode(exec_rowcodec *rc, const kv_row *row, const bool *need, cat_value *vals,
                    struct plan_arena *copy, exec_error *err) {
  return exec_row_decode_vec(rc, row, NULL, 0, need, vals, copy, NULL, err);
}

int exec_row_decode_vec(exec_rowcodec *rc, const kv_row *row, const kv_value_vector *vecs,
                        uint32_t n_vecs, const bool *need, cat_value *vals,
                        struct plan_arena *copy, const exec_vec_map *map, exec_error *err) {
  const cat_table *t = rc->table;
  int r;
  if (need && need == rc->prep_need) {
    r = rc->prep_walk_last < 0 ? decode_tail_keys(rc, row, vals, err)
                               : decode_key(rc, row->key, row->key_len, need, vals, copy, err);
    return r != EXEC_OK ? r : decode_prepared(rc, row, vecs, n_vecs, vals, copy, map, err);
  }
  r = decode_key(rc, row->key, row->key_len, need, vals, copy, err);
  if (r != EXEC_OK) return r;
  for (int i = 0; i < t->n_columns; i++)
    if (t->columns[i].pk_pos < 0 && (!need || need[i])) vals[i] = rc->nulls[i];
  const exec_rc_cell *by_id = rc->by_id;
  for (uint32_t k = 0; k < row->n_cells; k++) {
    const kv_cell_view *cell = &row->cells[k];
    uint32_t id = qual_id(cell);
    const exec_rc_cell *e;
    if (id) {
      if (id > rc->max_id) continue;
      e = &by_id[id];
    } else { /* the marker cell of "_k", a dynamic column's, or a qualifier of no column */
      int d = rc->n_dyn ? dyn_find(rc, cell) : -1;
      if (d < 0) continue;
      e = &rc->dyn[d];
    }
    if (e->col < 0 || e->family_id != cell->family_id) continue;
    cat_value *v = &vals[e->col];
    if ((need && !need[e->col]) || !v->is_null) continue; /* older version of a filled one */
    if (e->kind == RC_DOUBLE && cell->value_len == 8) { /* the common reading, inline */
      v->u.d = cat_vc_get_double(cell->value);
      v->is_null = false;
      continue;
    }
    r = decode_cell(rc, e, cell, v, err);
    if (r != EXEC_OK) return r;
    if (copy) {
      r = own(copy, v, err);
      if (r != EXEC_OK) return r;
    }
  }
  if (n_vecs) return decode_vectors(rc, vecs, n_vecs, need, vals, map, NULL, copy, err);
  return EXEC_OK;
}
