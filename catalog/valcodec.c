/*
** catalog/valcodec.c: cell value encoding and decoding, and the DECIMAL byte form shared
** with the row-key codec (formats in catalog/valcodec.h and docs/FORMAT_SQL.md (Part 3)).
** Decoders take (p, limit) and never read past it. Row keys are in catalog/keycodec.c.
*/
#include "catalog/valcodec.h"

#include "catalog/array.h"
#include "catalog/decimal.h"
#include "catalog/value.h"

#define DEC_NEG 0x01
#define DEC_ZERO 0x02
#define DEC_POS 0x03

size_t cat_dec_encode(cat_dec d, uint8_t *p) {
  d = cat_dec_normalize(d);
  if (d.v == 0) { p[0] = DEC_ZERO; return 1; }
  bool neg = d.v < 0;
  cat_u128 m = neg ? (cat_u128)0 - (cat_u128)d.v : (cat_u128)d.v;
  char dg[40];
  int nd = 0;
  while (m) { dg[nd++] = (char)(m % 10); m /= 10; } /* least significant first */
  /* normalized: dg[0] != 0 unless scale is 0 with trailing integer zeros; strip those too */
  int lo = 0;
  while (dg[lo] == 0) lo++;
  int e = nd - d.scale; /* |d| = 0.d1d2... x 10^e */
  size_t o = 0;
  p[o++] = neg ? DEC_NEG : DEC_POS;
  p[o++] = (uint8_t)(neg ? 127 - e : e + 128);
  for (int i = nd - 1; i >= lo; i -= 2) {
    int pair = dg[i] * 10 + (i - 1 >= lo ? dg[i - 1] : 0);
    p[o++] = (uint8_t)(neg ? 254 - pair : pair + 1);
  }
  p[o++] = neg ? 0xFF : 0x00;
  return o;
}

int cat_dec_decode(const uint8_t *p, const uint8_t *limit, cat_dec *out, size_t *used,
                   cat_error *err) {
  if (p >= limit) goto bad;
  const uint8_t *q = p;
  uint8_t mk = *q++;
  if (mk == DEC_ZERO) { out->v = 0; out->scale = 0; *used = 1; return CAT_OK; }
  if (mk != DEC_NEG && mk != DEC_POS) goto bad;
  bool neg = mk == DEC_NEG;
  if (q >= limit) goto bad;
  int e = neg ? 127 - (int)*q : (int)*q - 128;
  q++;
  cat_u128 m = 0;
  int nd = 0;
  for (;;) {
    if (q >= limit) goto bad;
    uint8_t b = *q++;
    if (b == (neg ? 0xFF : 0x00)) break;
    int pair = neg ? 254 - (int)b : (int)b - 1;
    if (pair < 0 || pair > 99 || nd >= 40) goto bad;
    m = m * 100 + (cat_u128)pair;
    nd += 2;
  }
  if (nd == 0 || m == 0) goto bad;
  while (m % 10 == 0) { m /= 10; nd--; } /* the pad digit */
  if (nd > 38 || e > 38 || e < -37) goto bad;
  int scale = nd - e;
  if (scale < 0) {
    if (nd - scale > 38) goto bad;
    while (scale < 0) { m *= 10; scale++; }
  }
  if (scale > 38) goto bad;
  out->v = neg ? -(cat_i128)m : (cat_i128)m;
  out->scale = scale;
  *used = (size_t)(q - p);
  return CAT_OK;
bad:
  return cat_err(err, CAT_ERR_CORRUPT, "corrupt DECIMAL encoding");
}

int cat_vc_encode(const cat_value *v, uint8_t *buf, size_t cap, size_t *len, cat_error *err) {
  if (v->is_null) return cat_err(err, CAT_ERR_NULL, "NULL has no cell value encoding");
  int id = v->type.id;
  int w = cat_type_fixed_width(id);
  size_t need;
  if (cat_type_has_bytes(id)) {
    need = id == CAT_T_CHAR ? cat_char_trim(v->u.s.p, v->u.s.len) : v->u.s.len;
    *len = need;
    if (need > cap) return cat_err(err, CAT_ERR_TOOBIG, "value buffer too small (%zu bytes needed)", need);
    if (need) memcpy(buf, v->u.s.p, need);
    return CAT_OK;
  }
  need = w ? (size_t)w : CAT_DEC_ENC_MAX;
  if (cap < need) { *len = need; return cat_err(err, CAT_ERR_TOOBIG, "value buffer too small"); }
  switch (id) {
    case CAT_T_BOOLEAN: buf[0] = v->u.b ? 1 : 0; break;
    case CAT_T_TINYINT: case CAT_T_SMALLINT: case CAT_T_INTEGER: case CAT_T_BIGINT:
    case CAT_T_DATE: case CAT_T_TIME: case CAT_T_TIMESTAMP:
      cat_vc_put_int(buf, w, v->u.i);
      break;
    case CAT_T_FLOAT: cat_vc_put_float(buf, (float)v->u.d); break;
    case CAT_T_DOUBLE: cat_vc_put_double(buf, v->u.d); break;
    case CAT_T_DECIMAL: w = (int)cat_dec_encode(v->u.dec, buf); break;
    default: return cat_err(err, CAT_ERR_TYPE, "unknown type id %d", id);
  }
  *len = (size_t)w;
  return CAT_OK;
}

int cat_vc_decode(const cat_type *t, const uint8_t *p, size_t len, cat_value *out,
                  cat_error *err) {
  cat_value v = cat_v_null(*t);
  v.is_null = false;
  int id = t->id;
  int w = cat_type_fixed_width(id);
  if (w && len != (size_t)w)
    return cat_err(err, CAT_ERR_CORRUPT, "corrupt %s cell value: %zu bytes, expected %d",
                   cat_type_name(id), len, w);
  switch (id) {
    case CAT_T_BOOLEAN:
      if (p[0] > 1) return cat_err(err, CAT_ERR_CORRUPT, "corrupt BOOLEAN cell value");
      v.u.b = p[0] == 1;
      break;
    case CAT_T_TINYINT: case CAT_T_SMALLINT: case CAT_T_INTEGER: case CAT_T_BIGINT:
    case CAT_T_DATE: case CAT_T_TIME: case CAT_T_TIMESTAMP:
      v.u.i = cat_vc_get_int(p, w);
      break;
    case CAT_T_FLOAT: v.u.d = (double)cat_vc_get_float(p); break;
    case CAT_T_DOUBLE: v.u.d = cat_vc_get_double(p); break;
    case CAT_T_DECIMAL: {
      size_t used;
      if (cat_dec_decode(p, p + len, &v.u.dec, &used, err) != CAT_OK || used != len)
        return cat_err(err, CAT_ERR_CORRUPT, "corrupt DECIMAL cell value");
      if (t->precision && cat_dec_rescale(v.u.dec, t->scale, &v.u.dec, NULL) != CAT_OK)
        return cat_err(err, CAT_ERR_CORRUPT, "corrupt DECIMAL cell value (scale)");
      break;
    }
    case CAT_T_CHAR: case CAT_T_VARCHAR: case CAT_T_VARBINARY:
      v.u.s.p = p;
      v.u.s.len = (uint32_t)len;
      break;
    case CAT_T_ARRAY: /* the encoding itself (catalog/array.h), checked whole */
      if (cat_array_validate(t, p, len, err) != CAT_OK) return CAT_ERR_CORRUPT;
      v.u.s.p = p;
      v.u.s.len = (uint32_t)len;
      break;
    default: return cat_err(err, CAT_ERR_TYPE, "unknown type id %d", id);
  }
  *out = v;
  return CAT_OK;
}
