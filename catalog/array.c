/*
** catalog/array.c: ARRAY values: the encoding of catalog/array.h (docs/FORMAT_SQL.md (Part 3),
** "ARRAY cell values"), element access, comparison, conversion, checks and the text form.
**
** Every reader checks lengths before it reads (a cell may be damaged): a tag past the end, an
** element longer than what is left, a count that does not match the elements or bytes after
** the last one are CAT_ERR_CORRUPT, never an overrun. Elements are decoded by
** catalog/valcodec.c and compared, cast and checked by catalog/value.c: this file only walks
** the list. Not here: SQL functions (exec/func_array.c), the ARRAY[...] syntax (sql/).
*/
#include "catalog/array.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "catalog/valcodec.h"
#include "catalog/value.h"

#define ELEM_BUF 64 /* cat_value_cast's text buffer for one converted element */

static int corrupt(cat_error *err, const char *what) {
  return cat_err(err, CAT_ERR_CORRUPT, "corrupt ARRAY value: %s", what);
}

static bool scalar_id(int id) { return id >= CAT_T_BOOLEAN && id < CAT_T_ARRAY; }

/* Read a LEB128 varint (at most 5 bytes, < 2^32) from [*p, limit). */
static bool get_varint(const uint8_t **p, const uint8_t *limit, uint32_t *out) {
  uint64_t v = 0;
  const uint8_t *q = *p;
  for (int shift = 0; shift <= 28; shift += 7) {
    if (q >= limit) return false;
    uint8_t b = *q++;
    v |= (uint64_t)(b & 0x7F) << shift;
    if (!(b & 0x80)) {
      if (v > UINT32_MAX) return false;
      *out = (uint32_t)v;
      *p = q;
      return true;
    }
  }
  return false;
}

static size_t varint_len(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) { v >>= 7; n++; }
  return n;
}

static size_t put_varint(uint8_t *p, uint64_t v) {
  size_t n = 0;
  while (v >= 0x80) { p[n++] = (uint8_t)(v | 0x80); v >>= 7; }
  p[n++] = (uint8_t)v;
  return n;
}

int cat_array_open(const cat_value *v, cat_array_iter *it, cat_error *err) {
  if (v->type.id != CAT_T_ARRAY)
    return cat_err(err, CAT_ERR_TYPE, "%s is not an ARRAY", cat_type_name(v->type.id));
  const uint8_t *p = v->u.s.p;
  if (v->u.s.len < CAT_ARRAY_HEADER) return corrupt(err, "short header");
  if (p[0] != v->type.elem) return corrupt(err, "element type does not match");
  it->elem = cat_type_elem(&v->type);
  it->n = ((uint32_t)p[1] << 24) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 8) | p[4];
  it->i = 0;
  it->p = p + CAT_ARRAY_HEADER;
  it->limit = p + v->u.s.len;
  return CAT_OK;
}

int cat_array_next(cat_array_iter *it, cat_value *out, cat_error *err) {
  uint32_t tag;
  if (it->i >= it->n || !get_varint(&it->p, it->limit, &tag)) return corrupt(err, "truncated");
  it->i++;
  if (tag == 0) {
    *out = cat_v_null(it->elem);
    return CAT_OK;
  }
  size_t len = tag - 1;
  if (len > (size_t)(it->limit - it->p)) return corrupt(err, "element past the end");
  const uint8_t *e = it->p;
  it->p += len;
  if (cat_vc_decode(&it->elem, e, len, out, err) != CAT_OK) return corrupt(err, "bad element");
  return CAT_OK;
}

uint32_t cat_array_count(const cat_value *v) {
  if (v->u.s.len < CAT_ARRAY_HEADER) return 0;
  const uint8_t *p = v->u.s.p;
  return ((uint32_t)p[1] << 24) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 8) | p[4];
}

int cat_array_get(const cat_value *v, int64_t idx, cat_value *out, cat_error *err) {
  cat_array_iter it;
  int rc = cat_array_open(v, &it, err);
  if (rc) return rc;
  *out = cat_v_null(it.elem);
  if (idx < 1 || idx > (int64_t)it.n) return CAT_OK;
  for (int64_t k = 1; k < idx; k++) { /* skip without decoding */
    uint32_t tag;
    if (!get_varint(&it.p, it.limit, &tag)) return corrupt(err, "truncated");
    if (tag && tag - 1 > (size_t)(it.limit - it.p)) return corrupt(err, "element past the end");
    if (tag) it.p += tag - 1;
    it.i++;
  }
  return cat_array_next(&it, out, err);
}

int cat_array_validate(const cat_type *t, const uint8_t *p, size_t len, cat_error *err) {
  cat_value v = cat_v_str(CAT_T_ARRAY, p, len);
  v.type = *t;
  cat_array_iter it;
  int rc = cat_array_open(&v, &it, err);
  if (rc) return rc;
  for (uint32_t i = 0; i < it.n; i++) {
    cat_value e;
    rc = cat_array_next(&it, &e, err);
    if (rc) return rc;
  }
  if (it.p != it.limit) return corrupt(err, "bytes after the last element");
  return CAT_OK;
}

/* ---- Building ------------------------------------------------------------------------------ */
static size_t elem_bytes(const cat_value *e) {
  if (e->is_null) return 0;
  int id = e->type.id;
  if (id == CAT_T_CHAR) return cat_char_trim(e->u.s.p, e->u.s.len);
  if (cat_type_has_bytes(id)) return e->u.s.len;
  uint8_t tmp[CAT_FIXED_ENC_MAX];
  size_t n = 0;
  if (cat_vc_encode(e, tmp, sizeof tmp, &n, NULL) != CAT_OK) return 0;
  return n;
}

size_t cat_array_elem_size(const cat_value *e) {
  if (e->is_null) return 1;
  size_t n = elem_bytes(e);
  return varint_len((uint64_t)n + 1) + n;
}

void cat_array_put_header(uint8_t *p, int elem_id, uint32_t n) {
  p[0] = (uint8_t)elem_id;
  p[1] = (uint8_t)(n >> 24);
  p[2] = (uint8_t)(n >> 16);
  p[3] = (uint8_t)(n >> 8);
  p[4] = (uint8_t)n;
}

size_t cat_array_put_elem(uint8_t *p, const cat_value *e) {
  if (e->is_null) {
    p[0] = 0;
    return 1;
  }
  size_t n = elem_bytes(e);
  size_t h = put_varint(p, (uint64_t)n + 1);
  if (cat_type_has_bytes(e->type.id)) {
    if (n) memcpy(p + h, e->u.s.p, n);
  } else {
    size_t w = 0;
    cat_vc_encode(e, p + h, CAT_FIXED_ENC_MAX, &w, NULL);
  }
  return h + n;
}

/* ---- Values -------------------------------------------------------------------------------- */
int cat_array_compare(const cat_value *a, const cat_value *b, int *cmp, cat_error *err) {
  cat_array_iter x, y;
  *cmp = 0;
  int rc = cat_array_open(a, &x, err);
  if (!rc) rc = cat_array_open(b, &y, err);
  if (rc) return rc;
  while (x.i < x.n && y.i < y.n) {
    cat_value ea, eb;
    rc = cat_array_next(&x, &ea, err);
    if (!rc) rc = cat_array_next(&y, &eb, err);
    if (!rc) rc = cat_value_compare(&ea, &eb, cmp, err);
    if (rc == CAT_ERR_TYPE) {
      char ta[40], tb[40];
      return cat_err(err, CAT_ERR_TYPE, "cannot compare %s with %s",
                     cat_type_format(&a->type, ta, sizeof ta),
                     cat_type_format(&b->type, tb, sizeof tb));
    }
    if (rc || *cmp) return rc;
  }
  *cmp = (x.n - x.i > 0) - (y.n - y.i > 0);
  return CAT_OK;
}

/* Cast element e to the element type et (text into tmp) and check it: *out. */
static int fit_elem(const cat_value *e, const cat_type *et, uint32_t k, cat_value *out,
                    uint8_t *tmp, cat_error *err) {
  if (e->is_null) {
    *out = cat_v_null(*et);
    return CAT_OK;
  }
  cat_value c;
  int rc = cat_value_cast(e, et, &c, tmp, ELEM_BUF, err);
  if (!rc) rc = cat_value_check(et, &c, out, err);
  if (rc) {
    char m[CAT_ERRMSG_MAX];
    snprintf(m, sizeof m, "%s", err ? err->msg : "");
    return cat_err(err, rc, "ARRAY element %u: %.200s", k, m);
  }
  return CAT_OK;
}

int cat_array_convert(const cat_value *in, const cat_type *to, uint8_t *buf, size_t cap,
                      size_t *len, cat_value *out, cat_error *err) {
  cat_type et = cat_type_elem(to);
  if (to->id != CAT_T_ARRAY || !scalar_id(et.id))
    return cat_err(err, CAT_ERR_TYPE, "cannot convert ARRAY to %s", cat_type_name(to->id));
  for (int pass = 0; pass < 2; pass++) {
    cat_array_iter it;
    int rc = cat_array_open(in, &it, err);
    if (rc) return rc;
    size_t total = CAT_ARRAY_HEADER;
    uint8_t *w = pass ? buf + CAT_ARRAY_HEADER : NULL; /* (pass 0 sizes: buf may be NULL) */
    if (pass == 1) cat_array_put_header(buf, et.id, it.n);
    for (uint32_t k = 1; k <= it.n; k++) {
      cat_value e, c;
      uint8_t tmp[ELEM_BUF];
      rc = cat_array_next(&it, &e, err);
      if (!rc) rc = fit_elem(&e, &et, k, &c, tmp, err);
      if (rc) return rc;
      if (pass == 0) total += cat_array_elem_size(&c);
      else w += cat_array_put_elem(w, &c);
    }
    if (pass == 0) {
      *len = total;
      if (total > cap)
        return cat_err(err, CAT_ERR_TOOBIG, "ARRAY conversion buffer too small (%zu bytes needed)",
                       total);
    }
  }
  *out = cat_v_str(CAT_T_ARRAY, buf, *len);
  out->type = *to;
  return CAT_OK;
}

int cat_array_check(const cat_type *t, const cat_value *in, cat_value *out, cat_error *err) {
  char it_[40], tt[40];
  if (in->type.id != CAT_T_ARRAY || in->type.elem != t->elem)
    return cat_err(err, CAT_ERR_TYPE, "value of type %s given for %s",
                   cat_type_format(&in->type, it_, sizeof it_), cat_type_format(t, tt, sizeof tt));
  cat_type et = cat_type_elem(t);
  cat_value v = *in;
  v.type = *t; /* read the elements with the target's scale */
  cat_array_iter it;
  int rc = cat_array_open(&v, &it, err);
  if (rc) return rc;
  for (uint32_t k = 1; k <= it.n; k++) {
    cat_value e, c;
    rc = cat_array_next(&it, &e, err);
    if (!rc && !e.is_null) rc = cat_value_check(&et, &e, &c, err);
    if (!rc && !e.is_null && et.id == CAT_T_DECIMAL) {
      int cmp = 0;
      cat_value_compare(&c, &e, &cmp, NULL);
      if (cmp) rc = cat_err(err, CAT_ERR_RANGE, "value has more decimals than %s",
                            cat_type_format(&et, tt, sizeof tt));
    }
    if (rc) {
      char m[CAT_ERRMSG_MAX];
      snprintf(m, sizeof m, "%s", err ? err->msg : "");
      return cat_err(err, rc, "ARRAY element %u: %.200s", k, m);
    }
  }
  if (it.p != it.limit) return corrupt(err, "bytes after the last element");
  *out = v;
  return CAT_OK;
}

/* ---- Text ---------------------------------------------------------------------------------- */
typedef struct tbuf {
  char *p;     /* output */
  size_t cap;  /* its size */
  size_t n;    /* bytes the full text takes so far */
} tbuf;

static void tput(tbuf *b, const char *s, size_t n) {
  for (size_t i = 0; i < n; i++, b->n++)
    if (b->n + 1 < b->cap) b->p[b->n] = s[i];
}

static bool quoted(int id) {
  return cat_type_is_string(id) || id == CAT_T_DATE || id == CAT_T_TIME || id == CAT_T_TIMESTAMP;
}

size_t cat_array_format(const cat_value *v, char *buf, size_t cap) {
  tbuf b = {buf, cap, 0};
  cat_array_iter it;
  if (cat_array_open(v, &it, NULL) != CAT_OK) {
    tput(&b, "?", 1);
  } else {
    tput(&b, "[", 1);
    for (uint32_t k = 0; k < it.n; k++) {
      cat_value e;
      if (cat_array_next(&it, &e, NULL) != CAT_OK) {
        tput(&b, "?", 1);
        break;
      }
      if (k) tput(&b, ", ", 2);
      if (e.is_null) {
        tput(&b, "null", 4);
      } else if (cat_type_is_string(e.type.id)) {
        tput(&b, "'", 1);
        for (uint32_t i = 0; i < e.u.s.len; i++) {
          if (e.u.s.p[i] == '\'') tput(&b, "'", 1);
          tput(&b, (const char *)&e.u.s.p[i], 1);
        }
        tput(&b, "'", 1);
      } else if (e.type.id == CAT_T_VARBINARY) {
        static const char hex[] = "0123456789ABCDEF";
        tput(&b, "X'", 2);
        for (uint32_t i = 0; i < e.u.s.len; i++) {
          tput(&b, &hex[e.u.s.p[i] >> 4], 1);
          tput(&b, &hex[e.u.s.p[i] & 15], 1);
        }
        tput(&b, "'", 1);
      } else {
        char t[64];
        size_t n = cat_text_format(&e, t, sizeof t);
        if (n >= sizeof t) n = sizeof t - 1;
        bool q = quoted(e.type.id);
        if (q) tput(&b, "'", 1);
        tput(&b, t, n);
        if (q) tput(&b, "'", 1);
      }
    }
    if (it.i == it.n) tput(&b, "]", 1);
  }
  if (cap) buf[b.n < cap ? b.n : cap - 1] = 0;
  return b.n;
}

static bool space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

static int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

int cat_array_parse(const cat_type *t, const char *s, size_t n, uint8_t *buf, size_t cap,
                    size_t *len, cat_value *out, cat_error *err) {
  cat_type et = cat_type_elem(t);
  if (t->id != CAT_T_ARRAY || !scalar_id(et.id))
    return cat_err(err, CAT_ERR_TYPE, "not an ARRAY type");
  /* Elements are unquoted into a scratch copy of the text (never longer than the text). */
  uint8_t stack[256];
  uint8_t *scratch = n <= sizeof stack ? stack : malloc(n);
  if (!scratch) return cat_err(err, CAT_ERR_NOMEM, "out of memory reading ARRAY text");
  int rc = CAT_OK;
  for (int pass = 0; pass < 2 && !rc; pass++) {
    size_t i = 0, total = CAT_ARRAY_HEADER;
    uint32_t count = 0;
    uint8_t *w = pass ? buf + CAT_ARRAY_HEADER : NULL; /* (pass 0 sizes: buf may be NULL) */
    while (i < n && space(s[i])) i++;
    if (i >= n || s[i] != '[') {
      rc = cat_err(err, CAT_ERR_SYNTAX, "ARRAY text must start with '[' (byte %zu)", i);
      break;
    }
    i++;
    while (i < n && space(s[i])) i++;
    bool empty = i < n && s[i] == ']';
    if (empty) i++;
    while (!empty && !rc) {
      while (i < n && space(s[i])) i++;
      size_t start = i, m = 0;
      cat_value e = cat_v_null(et), c;
      bool is_null = false;
      if (i < n && (s[i] == '\'' || ((s[i] == 'X' || s[i] == 'x') && i + 1 < n && s[i + 1] == '\''))) {
        bool hex = s[i] != '\'';
        i += hex ? 2 : 1;
        for (;;) {
          if (i >= n) {
            rc = cat_err(err, CAT_ERR_SYNTAX, "unterminated quote in ARRAY text (byte %zu)", start);
            break;
          }
          if (s[i] == '\'') {
            if (i + 1 < n && s[i + 1] == '\'' && !hex) { scratch[m++] = '\''; i += 2; continue; }
            i++;
            break;
          }
          scratch[m++] = (uint8_t)s[i++];
        }
        if (rc) break;
        if (hex) {
          if (m % 2) { rc = cat_err(err, CAT_ERR_SYNTAX, "odd hex digits in ARRAY text (byte %zu)", start); break; }
          for (size_t k = 0; k < m / 2; k++) {
            int h = hexval((char)scratch[2 * k]), l = hexval((char)scratch[2 * k + 1]);
            if (h < 0 || l < 0) { rc = cat_err(err, CAT_ERR_SYNTAX, "bad hex digit in ARRAY text (byte %zu)", start); break; }
            scratch[k] = (uint8_t)(h << 4 | l);
          }
          if (rc) break;
          m /= 2;
          e = cat_v_str(CAT_T_VARBINARY, scratch, m);
        } else {
          e = cat_v_str(CAT_T_VARCHAR, scratch, m);
        }
      } else {
        while (i < n && s[i] != ',' && s[i] != ']') i++;
        size_t end = i;
        while (end > start && space(s[end - 1])) end--;
        if (end == start) { rc = cat_err(err, CAT_ERR_SYNTAX, "missing ARRAY element (byte %zu)", start); break; }
        if (end - start == 4 && strncasecmp(s + start, "null", 4) == 0) is_null = true;
        else e = cat_v_str(CAT_T_VARCHAR, s + start, end - start);
      }
      count++;
      if (is_null) {
        c = cat_v_null(et);
      } else {
        uint8_t tmp[ELEM_BUF];
        if (e.type.id == CAT_T_VARBINARY && et.id != CAT_T_VARBINARY) {
          rc = cat_err(err, CAT_ERR_SYNTAX, "X'..' element for %s ARRAY (byte %zu)",
                       cat_type_name(et.id), start);
          break;
        }
        rc = fit_elem(&e, &et, count, &c, tmp, err);
        if (rc) break;
        /* string bytes point into scratch or s: encoded now, before scratch is reused */
        if (pass == 0) total += cat_array_elem_size(&c);
        else w += cat_array_put_elem(w, &c);
      }
      if (pass == 0 && is_null) total += 1;
      else if (pass == 1 && is_null) *w++ = 0;
      while (i < n && space(s[i])) i++;
      if (i < n && s[i] == ',') { i++; continue; }
      if (i < n && s[i] == ']') { i++; break; }
      rc = cat_err(err, CAT_ERR_SYNTAX, "expected ',' or ']' in ARRAY text (byte %zu)", i);
    }
    if (rc) break;
    while (i < n && space(s[i])) i++;
    if (i != n) { rc = cat_err(err, CAT_ERR_SYNTAX, "text after ']' in ARRAY text (byte %zu)", i); break; }
    if (pass == 0) {
      *len = total;
      if (total > cap)
        rc = cat_err(err, CAT_ERR_TOOBIG, "ARRAY buffer too small (%zu bytes needed)", total);
    } else {
      cat_array_put_header(buf, et.id, count);
    }
  }
  if (scratch != stack) free(scratch);
  if (rc) return rc;
  *out = cat_v_str(CAT_T_ARRAY, buf, *len);
  out->type = *t;
  return CAT_OK;
}

/* The type element values of types a and b both fit (id 0 = unknown), or id 0 if none. */
static cat_type unify(const cat_type *a, const cat_type *b) {
  if (!a->id) return *b;
  if (!b->id) return *a;
  int x = a->id, y = b->id;
  if (cat_type_is_numeric(x) && cat_type_is_numeric(y)) {
    if (cat_type_is_float(x) || cat_type_is_float(y)) return cat_type_of(CAT_T_DOUBLE);
    if (x == CAT_T_DECIMAL || y == CAT_T_DECIMAL) return cat_type_of(CAT_T_DECIMAL);
    return cat_type_of(x > y ? x : y);
  }
  if (cat_type_is_string(x) && cat_type_is_string(y)) return cat_type_of(CAT_T_VARCHAR);
  bool dx = x == CAT_T_DATE || x == CAT_T_TIMESTAMP, dy = y == CAT_T_DATE || y == CAT_T_TIMESTAMP;
  if (dx && dy) return cat_type_of(x == y ? x : CAT_T_TIMESTAMP);
  if (x == y && x != CAT_T_ARRAY) return cat_type_of(x);
  return cat_type_of(0);
}

int cat_array_elem_type(int n, const cat_type *ts, cat_type *elem, int *bad, char *msg,
                         size_t cap) {
  cat_type r = cat_type_of(0);
  int first = -1;
  for (int i = 0; i < n; i++) {
    char a[48], b[48];
    if (ts[i].id == CAT_T_ARRAY) {
      *bad = i;
      snprintf(msg, cap, "ARRAY[...]: element %d is an ARRAY (%s); arrays do not nest", i + 1,
               cat_type_format(&ts[i], a, sizeof a));
      return CAT_ERR_TYPE;
    }
    if (!ts[i].id) continue;
    cat_type u = unify(&r, &ts[i]);
    if (!u.id) {
      *bad = i;
      snprintf(msg, cap, "ARRAY[...]: element %d is %s, element %d is %s: the elements of an "
               "ARRAY must have one type", first + 1, cat_type_format(&ts[first], a, sizeof a),
               i + 1, cat_type_format(&ts[i], b, sizeof b));
      return CAT_ERR_TYPE;
    }
    if (first < 0) first = i;
    r = u;
  }
  if (!r.id) r = cat_type_of(CAT_T_VARCHAR); /* ARRAY[NULL] */
  if (r.id == CAT_T_TINYINT || r.id == CAT_T_SMALLINT) r = cat_type_of(CAT_T_INTEGER);
  if (r.id == CAT_T_CHAR) r = cat_type_of(CAT_T_VARCHAR);
  *elem = r;
  return CAT_OK;
}
