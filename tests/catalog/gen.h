/*
** tests/catalog/gen.h: random and edge-case SQL values for the catalog codec tests, shared
** by test_keycodec.c, test_valcodec.c and test_text.c. Header-only (static functions).
** Values are canonicalized with cat_value_check so every generated value is valid for its
** column type; string bytes live in a caller-provided arena that must outlive the values.
*/
#ifndef ROWAN_TESTS_CATALOG_GEN_H
#define ROWAN_TESTS_CATALOG_GEN_H

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "catalog/decimal.h"
#include "catalog/types.h"
#include "catalog/value.h"
#include "testutil.h"

typedef struct gen_arena {
  uint8_t *buf;  /* storage for string bytes */
  size_t cap;    /* bytes in buf */
  size_t used;   /* bytes handed out */
} gen_arena;

static uint8_t *gen_alloc(gen_arena *a, size_t n) {
  if (a->used + n > a->cap) { fprintf(stderr, "gen arena full\n"); abort(); }
  uint8_t *p = a->buf + a->used;
  a->used += n;
  return p;
}

/* The column types the property tests cover (both DECIMAL forms). */
static const cat_type gen_types[] = {
    {CAT_T_BOOLEAN, 0, 0, 0, 0},  {CAT_T_TINYINT, 0, 0, 0, 0}, {CAT_T_SMALLINT, 0, 0, 0, 0},
    {CAT_T_INTEGER, 0, 0, 0, 0},  {CAT_T_BIGINT, 0, 0, 0, 0},  {CAT_T_FLOAT, 0, 0, 0, 0},
    {CAT_T_DOUBLE, 0, 0, 0, 0},   {CAT_T_DECIMAL, 0, 0, 0, 0}, {CAT_T_DECIMAL, 10, 2, 0, 0},
    {CAT_T_CHAR, 0, 0, 8, 0},     {CAT_T_VARCHAR, 0, 0, 0, 0}, {CAT_T_VARBINARY, 0, 0, 0, 0},
    {CAT_T_DATE, 0, 0, 0, 0},     {CAT_T_TIME, 0, 0, 0, 0},    {CAT_T_TIMESTAMP, 0, 0, 0, 0}};
#define GEN_NTYPES ((int)(sizeof gen_types / sizeof gen_types[0]))

static cat_i128 gen_pow10(int k) {
  cat_i128 r = 1;
  while (k-- > 0) r *= 10;
  return r;
}

/* A string from a small alphabet full of troublemakers (0x00, 0x01, 0xFF, space, a prefix
** structure from short lengths). UTF-8-valid unless `bytes`. */
static cat_value gen_string(int id, uint64_t *rng, gen_arena *a, int maxlen) {
  static const char *const utf8_atoms[] = {"\x00", "\x01", "a", "b", " ", "\x7f", "\xc3\xa9",
                                           "\xf4\x8f\xbf\xbf", "z"};
  static const uint8_t byte_atoms[] = {0x00, 0x01, 'a', 'b', ' ', 0x7F, 0xFE, 0xFF};
  int n = (int)tu_below(rng, (uint64_t)maxlen + 1);
  uint8_t *p = gen_alloc(a, (size_t)n * 4 + 1);
  size_t len = 0;
  for (int i = 0; i < n; i++) {
    if (id == CAT_T_VARBINARY) p[len++] = byte_atoms[tu_below(rng, sizeof byte_atoms)];
    else {
      int k = (int)tu_below(rng, 9);
      size_t al = k == 0 ? 1 : strlen(utf8_atoms[k]);
      memcpy(p + len, utf8_atoms[k], al);
      len += al;
    }
  }
  return cat_v_str(id, p, len);
}

/* Edge values of type t: index i in 0..n-1; returns false past the last. */
static bool gen_edge(const cat_type *t, int i, gen_arena *a, cat_value *out) {
  cat_value v;
  switch (t->id) {
    case CAT_T_BOOLEAN:
      if (i > 1) return false;
      v = cat_v_bool(i == 1);
      break;
    case CAT_T_TINYINT: case CAT_T_SMALLINT: case CAT_T_INTEGER: case CAT_T_BIGINT: {
      int bits = t->id == CAT_T_TINYINT ? 8 : t->id == CAT_T_SMALLINT ? 16 : t->id == CAT_T_INTEGER ? 32 : 64;
      int64_t mx = bits == 64 ? INT64_MAX : (int64_t)((1ull << (bits - 1)) - 1);
      int64_t mn = -mx - 1;
      int64_t e[] = {mn, mn + 1, -256, -1, 0, 1, 127, 255, mx - 1, mx};
      if (i >= (int)(sizeof e / sizeof e[0])) return false;
      int64_t x = e[i] < mn ? mn : e[i] > mx ? mx : e[i];
      v = cat_v_int(t->id, x);
      break;
    }
    case CAT_T_FLOAT: case CAT_T_DOUBLE: {
      double e[] = {-INFINITY, -DBL_MAX, -FLT_MAX, -1.5, -1.0, -FLT_MIN, -5e-324, -0.0, 0.0,
                    5e-324, FLT_MIN, 1.0, 1.5, FLT_MAX, DBL_MAX, INFINITY, NAN, -NAN};
      if (i >= (int)(sizeof e / sizeof e[0])) return false;
      double x = e[i];
      if (t->id == CAT_T_FLOAT && isfinite(x) && fabs(x) > FLT_MAX) x = x < 0 ? -FLT_MAX : FLT_MAX;
      v = t->id == CAT_T_FLOAT ? cat_v_float((float)x) : cat_v_double(x);
      break;
    }
    case CAT_T_DECIMAL: {
      cat_i128 big = gen_pow10(38) - 1;
      struct { cat_i128 v; int s; } e[] = {{-big, 0}, {-big, 38}, {-1, 2}, {-1, 3}, {-15, 1},
                                          {-150, 2}, {0, 0},     {0, 5},   {1, 38}, {15, 1},
                                          {150, 2},  {1500, 3},  {1, 0},   {10, 1}, {big, 0},
                                          {big, 38}, {big, 2},   {-big, 2}};
      if (i >= (int)(sizeof e / sizeof e[0])) return false;
      cat_dec d = {e[i].v, e[i].s};
      if (t->precision) { /* keep within DECIMAL(p,s) */
        cat_dec r;
        if (cat_dec_fit(d, t->precision, t->scale, &r, NULL) != CAT_OK) d = cat_dec_from_i64(e[i].v < 0 ? -1 : 1);
      }
      v = cat_v_dec(d, t->precision, t->scale);
      break;
    }
    case CAT_T_CHAR: case CAT_T_VARCHAR: case CAT_T_VARBINARY: {
      static const struct { const char *s; size_t n; } e[] = {
          {"", 0}, {"\x00", 1}, {"\x00\x00", 2}, {"\x00\x01", 2}, {"\x01", 1}, {"a", 1},
          {"a\x00", 2}, {"a\x00" "b", 3}, {"ab", 2}, {"ab ", 3}, {"ab  ", 4}, {"abc", 3},
          {" ", 1}, {"\x7f", 1}, {"\xc3\xa9", 2}, {"\xff", 1}, {"\xff\xff", 2}, {"a\xff", 2}};
      int ne = (int)(sizeof e / sizeof e[0]);
      if (t->id != CAT_T_VARBINARY) ne -= 3; /* the last three are not UTF-8 */
      if (i >= ne) return false;
      uint8_t *p = gen_alloc(a, e[i].n + 1);
      memcpy(p, e[i].s, e[i].n);
      v = cat_v_str(t->id, p, e[i].n);
      break;
    }
    case CAT_T_DATE: {
      int64_t e[] = {CAT_DATE_MIN, CAT_DATE_MIN + 1, -1, 0, 1, 16801, CAT_DATE_MAX - 1, CAT_DATE_MAX};
      if (i >= (int)(sizeof e / sizeof e[0])) return false;
      v = cat_v_int(t->id, e[i]);
      break;
    }
    case CAT_T_TIME: {
      int64_t e[] = {0, 1, 999, 1000, 43200000000LL, CAT_TIME_MAX - 1, CAT_TIME_MAX};
      if (i >= (int)(sizeof e / sizeof e[0])) return false;
      v = cat_v_int(t->id, e[i]);
      break;
    }
    case CAT_T_TIMESTAMP: {
      int64_t e[] = {CAT_TS_MIN, CAT_TS_MIN + 1, -1000, -1, 0, 1, 1451606400000000LL, CAT_TS_MAX - 1, CAT_TS_MAX};
      if (i >= (int)(sizeof e / sizeof e[0])) return false;
      v = cat_v_int(t->id, e[i]);
      break;
    }
    default: return false;
  }
  if (cat_value_check(t, &v, out, NULL) != CAT_OK) { fprintf(stderr, "bad edge value\n"); abort(); }
  return true;
}

/* A random valid value of type t (a mix of wide-range and small-domain draws so that ties
** and near-ties are frequent). */
static cat_value gen_random(const cat_type *t, uint64_t *rng, gen_arena *a) {
  cat_value v;
  bool small = tu_below(rng, 3) == 0;
  switch (t->id) {
    case CAT_T_BOOLEAN: v = cat_v_bool(tu_below(rng, 2)); break;
    case CAT_T_TINYINT: case CAT_T_SMALLINT: case CAT_T_INTEGER: case CAT_T_BIGINT: {
      int bits = t->id == CAT_T_TINYINT ? 8 : t->id == CAT_T_SMALLINT ? 16 : t->id == CAT_T_INTEGER ? 32 : 64;
      uint64_t r = tu_rand(rng) >> tu_below(rng, 64);
      int64_t x = small ? (int64_t)tu_below(rng, 7) - 3 : (int64_t)(r << (64 - bits)) >> (64 - bits);
      v = cat_v_int(t->id, x);
      break;
    }
    case CAT_T_FLOAT: case CAT_T_DOUBLE: {
      double x;
      if (small) x = ((double)tu_below(rng, 9) - 4) / 2;
      else if (t->id == CAT_T_FLOAT) {
        uint32_t bits = (uint32_t)tu_rand(rng);
        float f;
        memcpy(&f, &bits, 4);
        x = f;
      } else {
        uint64_t bits = tu_rand(rng);
        memcpy(&x, &bits, 8);
      }
      v = t->id == CAT_T_FLOAT ? cat_v_float((float)x) : cat_v_double(x);
      break;
    }
    case CAT_T_DECIMAL: {
      cat_dec d;
      if (small) { /* small values at several scales: 1.5 vs 1.50 ties */
        int s = (int)tu_below(rng, 4);
        d.v = ((cat_i128)tu_below(rng, 9) - 4) * gen_pow10(s);
        d.scale = s + (int)tu_below(rng, 2);
      } else {
        int nd = 1 + (int)tu_below(rng, 38);
        cat_i128 m = 0;
        for (int k = 0; k < nd; k++) m = m * 10 + (cat_i128)tu_below(rng, 10);
        d.v = tu_below(rng, 2) ? -m : m;
        d.scale = (int)tu_below(rng, 39);
      }
      if (t->precision) {
        cat_dec r;
        if (cat_dec_fit(d, t->precision, t->scale, &r, NULL) != CAT_OK) {
          d.v %= gen_pow10(t->precision);
          d.scale = t->scale;
        }
      }
      v = cat_v_dec(d, t->precision, t->scale);
      break;
    }
    case CAT_T_CHAR: v = gen_string(t->id, rng, a, small ? 2 : (int)t->length); break;
    case CAT_T_VARCHAR: case CAT_T_VARBINARY: v = gen_string(t->id, rng, a, small ? 2 : 10); break;
    case CAT_T_DATE:
      v = cat_v_int(t->id, small ? (int64_t)tu_below(rng, 5) - 2
                                 : CAT_DATE_MIN + (int64_t)tu_below(rng, CAT_DATE_MAX - CAT_DATE_MIN + 1));
      break;
    case CAT_T_TIME:
      v = cat_v_int(t->id, small ? (int64_t)tu_below(rng, 5) * 1000 : (int64_t)tu_below(rng, CAT_TIME_MAX + 1));
      break;
    case CAT_T_TIMESTAMP:
      v = cat_v_int(t->id, small ? (int64_t)tu_below(rng, 5) * 500 - 1000
                                 : CAT_TS_MIN + (int64_t)tu_below(rng, (uint64_t)(CAT_TS_MAX - CAT_TS_MIN)));
      break;
    default: abort();
  }
  cat_value out;
  if (cat_value_check(t, &v, &out, NULL) != CAT_OK) {
    char tt[32];
    fprintf(stderr, "generator made an invalid %s value\n", cat_type_format(t, tt, sizeof tt));
    abort();
  }
  return out;
}

/* Describe a value for failure messages. */
static const char *gen_show(const cat_value *v, char *buf, size_t cap) {
  char tt[32];
  if (v->is_null) { snprintf(buf, cap, "NULL"); return buf; }
  if (cat_type_is_string(v->type.id) || v->type.id == CAT_T_VARBINARY) {
    size_t o = (size_t)snprintf(buf, cap, "%s x'", cat_type_format(&v->type, tt, sizeof tt));
    for (uint32_t i = 0; i < v->u.s.len && o + 4 < cap; i++) o += (size_t)snprintf(buf + o, cap - o, "%02x", v->u.s.p[i]);
    snprintf(buf + o, cap - o, "'");
    return buf;
  }
  char t[80];
  cat_text_format(v, t, sizeof t);
  snprintf(buf, cap, "%s %s", cat_type_format(&v->type, tt, sizeof tt), t);
  return buf;
}

#endif /* ROWAN_TESTS_CATALOG_GEN_H */
