/*
** catalog/keycodec.c: row-key encoding, decoding and the key-bound helpers the planner
** uses (format and contracts in catalog/keycodec.h, docs/FORMAT_SQL.md (Part 3)). Fixed-width
** and DECIMAL bytes come from catalog/valcodec.h so keys and cells agree. Decoders take
** (p, limit) and never read past limit.
*/
#include "catalog/keycodec.h"

#include <string.h>

#include "catalog/decimal.h"
#include "catalog/valcodec.h"
#include "catalog/value.h"

static bool is_bytes(int id) { return cat_type_is_string(id) || id == CAT_T_VARBINARY; }

static void invert(uint8_t *p, size_t n) {
  for (size_t i = 0; i < n; i++) p[i] ^= 0xFF;
}

static int toobig(cat_error *err) {
  return cat_err(err, CAT_ERR_TOOBIG, "row key longer than the buffer or %u bytes", CAT_KEY_MAX);
}

/* Escaped bytes of s[0..n) at buf[*pos..); no terminator. */
static int put_escaped(const uint8_t *s, size_t n, uint8_t *buf, size_t cap, size_t *pos,
                       cat_error *err) {
  size_t o = *pos;
  for (size_t i = 0; i < n; i++) {
    if (o + 2 > cap) return toobig(err);
    buf[o++] = s[i];
    if (s[i] == 0x00) buf[o++] = 0xFF;
  }
  *pos = o;
  return CAT_OK;
}

int cat_key_encode_col(const cat_key_col *col, const cat_value *v, uint8_t *buf, size_t cap,
                       size_t *pos, cat_error *err) {
  size_t start = *pos, o = *pos;
  if (cap > CAT_KEY_MAX) cap = CAT_KEY_MAX;
  int id = col->type.id;
  if (v->is_null) {
    if (!col->nullable) return cat_err(err, CAT_ERR_NULL, "NULL in NOT NULL key column");
    if (o + 1 > cap) return toobig(err);
    buf[o++] = col->desc ? 0xFF : 0x00;
    *pos = o;
    return CAT_OK;
  }
  if (id == CAT_T_ARRAY) /* no order-preserving encoding (catalog/array.h) */
    return cat_err(err, CAT_ERR_TYPE, "an ARRAY cannot be part of a row key");
  if (v->type.id != id) {
    return cat_err(err, CAT_ERR_TYPE, "%s value given for a %s key column",
                   cat_type_name(v->type.id), cat_type_name(id));
  }
  if (col->nullable) {
    if (o + 1 > cap) return toobig(err);
    buf[o++] = 0x01;
  }
  if (is_bytes(id)) {
    size_t n = id == CAT_T_CHAR ? cat_char_trim(v->u.s.p, v->u.s.len) : v->u.s.len;
    int rc = put_escaped(v->u.s.p, n, buf, cap, &o, err);
    if (rc) return rc;
    if (o + 2 > cap) return toobig(err);
    buf[o++] = 0x00;
    buf[o++] = 0x01;
  } else {
    uint8_t tmp[CAT_FIXED_ENC_MAX];
    size_t n;
    int rc = cat_vc_encode(v, tmp, sizeof tmp, &n, err);
    if (rc) return rc;
    if (o + n > cap) return toobig(err);
    memcpy(buf + o, tmp, n);
    o += n;
  }
  if (col->desc) invert(buf + start, o - start);
  *pos = o;
  return CAT_OK;
}

int cat_key_encode(const cat_key_col *cols, int n, const cat_value *vals, uint8_t *buf,
                   size_t cap, size_t *len, cat_error *err) {
  size_t pos = 0;
  for (int i = 0; i < n; i++) {
    int rc = cat_key_encode_col(&cols[i], &vals[i], buf, cap, &pos, err);
    if (rc) {
      if (rc == CAT_ERR_NULL) return cat_err(err, rc, "NULL in NOT NULL key column %d", i + 1);
      return rc;
    }
  }
  *len = pos;
  return CAT_OK;
}

int cat_key_encode_string_prefix(const cat_key_col *col, const void *bytes, size_t n,
                                 uint8_t *buf, size_t cap, size_t *pos, cat_error *err) {
  if (!is_bytes(col->type.id))
    return cat_err(err, CAT_ERR_TYPE, "string prefix for a %s key column", cat_type_name(col->type.id));
  if (cap > CAT_KEY_MAX) cap = CAT_KEY_MAX;
  size_t start = *pos, o = *pos;
  if (col->nullable) {
    if (o + 1 > cap) return toobig(err);
    buf[o++] = 0x01;
  }
  int rc = put_escaped((const uint8_t *)bytes, n, buf, cap, &o, err);
  if (rc) return rc;
  if (col->desc) invert(buf + start, o - start);
  *pos = o;
  return CAT_OK;
}

/* Find the end of an escaped string at [p, limit) (x = 0x00 for ASC, 0xFF for DESC):
** returns the byte after the terminator or NULL; *raw_len gets the unescaped length and
** *escaped whether any escape pair occurred. */
static const uint8_t *scan_string(const uint8_t *p, const uint8_t *limit, uint8_t x,
                                  size_t *raw_len, bool *escaped) {
  size_t n = 0;
  *escaped = false;
  while (p < limit) {
    uint8_t b = *p++;
    if (b != x) { n++; continue; }
    if (p >= limit) return NULL;
    uint8_t c = *p++ ^ x;
    if (c == 0x01) { *raw_len = n; return p; }
    if (c != 0xFF) return NULL;
    n++;
    *escaped = true;
  }
  return NULL;
}

const uint8_t *cat_key_skip_col(const cat_key_col *col, const uint8_t *p, const uint8_t *limit) {
  uint8_t x = col->desc ? 0xFF : 0x00;
  if (col->nullable) {
    if (p >= limit) return NULL;
    uint8_t ind = *p++ ^ x;
    if (ind == 0x00) return p;
    if (ind != 0x01) return NULL;
  }
  int id = col->type.id;
  int w = cat_type_fixed_width(id);
  if (w) return limit - p >= w ? p + w : NULL;
  if (is_bytes(id)) {
    size_t n;
    bool esc;
    return scan_string(p, limit, x, &n, &esc);
  }
  if (id == CAT_T_DECIMAL) {
    /* marker, then (unless zero) exponent and digit bytes up to the terminator */
    if (p >= limit) return NULL;
    uint8_t mk = *p++ ^ x;
    if (mk == 0x02) return p;
    if (mk != 0x01 && mk != 0x03) return NULL;
    uint8_t term = (uint8_t)((mk == 0x01 ? 0xFF : 0x00) ^ x);
    if (p >= limit) return NULL;
    p++;
    while (p < limit)
      if (*p++ == term) return p;
    return NULL;
  }
  return NULL;
}

static int corrupt(cat_error *err, int col, const char *what) {
  return cat_err(err, CAT_ERR_CORRUPT, "corrupt row key: column %d: %s", col + 1, what);
}

int cat_key_decode(const cat_key_col *cols, int n, const uint8_t *p, const uint8_t *limit,
                   cat_value *vals, uint8_t *scratch, size_t scratch_cap, const uint8_t **end,
                   cat_error *err) {
  size_t sused = 0;
  for (int i = 0; i < n; i++) {
    const cat_key_col *col = &cols[i];
    uint8_t x = col->desc ? 0xFF : 0x00;
    int id = col->type.id;
    cat_value v = cat_v_null(col->type);
    if (col->nullable) {
      if (p >= limit) return corrupt(err, i, "truncated");
      uint8_t ind = *p++ ^ x;
      if (ind == 0x00) { vals[i] = v; continue; }
      if (ind != 0x01) return corrupt(err, i, "bad null indicator");
    }
    v.is_null = false;
    const uint8_t *q = cat_key_skip_col(&(cat_key_col){col->type, col->desc, false}, p, limit);
    if (!q) return corrupt(err, i, "truncated or bad bytes");
    if (is_bytes(id)) {
      size_t raw = 0;
      bool esc = false;
      scan_string(p, limit, x, &raw, &esc);
      if (!esc && !col->desc) {
        v.u.s.p = p;
      } else {
        if (sused + raw > scratch_cap)
          return cat_err(err, CAT_ERR_TOOBIG, "row key decode scratch too small");
        uint8_t *o = scratch + sused;
        size_t k = 0;
        for (const uint8_t *r = p; k < raw; r++) {
          uint8_t b = *r ^ x;
          o[k++] = b;
          if (b == 0x00) r++; /* skip the 0xFF of the escape pair */
        }
        v.u.s.p = o;
        sused += raw;
      }
      v.u.s.len = (uint32_t)raw;
    } else {
      size_t len = (size_t)(q - p);
      uint8_t tmp[CAT_FIXED_ENC_MAX];
      if (len > sizeof tmp) return corrupt(err, i, "value too long");
      for (size_t k = 0; k < len; k++) tmp[k] = p[k] ^ x;
      cat_value d;
      if (cat_vc_decode(&col->type, tmp, len, &d, NULL) != CAT_OK) return corrupt(err, i, "bad value bytes");
      v = d;
    }
    vals[i] = v;
    p = q;
  }
  if (end) *end = p;
  else if (p != limit) return cat_err(err, CAT_ERR_CORRUPT, "corrupt row key: %zu trailing bytes", (size_t)(limit - p));
  return CAT_OK;
}

bool cat_key_prefix_end(const uint8_t *p, size_t len, uint8_t *out, size_t *out_len) {
  while (len > 0 && p[len - 1] == 0xFF) len--;
  if (len == 0) { *out_len = 0; return false; }
  memmove(out, p, len);
  out[len - 1]++;
  *out_len = len;
  return true;
}

size_t cat_key_next(const uint8_t *p, size_t len, uint8_t *out) {
  memmove(out, p, len);
  out[len] = 0x00;
  return len + 1;
}

bool cat_key_prev(const uint8_t *p, size_t len, size_t pad, uint8_t *out, size_t *out_len) {
  if (len == 0) { *out_len = 0; return false; }
  memmove(out, p, len);
  if (out[len - 1] == 0x00) { *out_len = len - 1; return true; }
  out[len - 1]--;
  memset(out + len, 0xFF, pad);
  *out_len = len + pad;
  return true;
}
