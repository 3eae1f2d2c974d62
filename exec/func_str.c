/*
** exec/func_str.c: the string functions of exec/func.h: || (concatenation of any values'
** text), UPPER and LOWER (the case folding of exec/like.c: ASCII, Latin-1, Greek, Cyrillic;
** a folded character keeps its UTF-8 length, so results have the input's byte length),
** LENGTH in characters, SUBSTR with Phoenix's position rules, TRIM/LTRIM/RTRIM (spaces, or
** the characters of a second argument), REPLACE, LPAD/RPAD and INSTR (Phoenix's rules,
** docs/FUNCTIONS.md). Positions count UTF-8 characters; an invalid byte counts as one
** character. Not here: LIKE (exec/like.c), formats (exec/func_fmt.c), regular expressions
** (exec/func_regex.c).
*/
#include "exec/func_int.h"

#include <string.h>

static int nomem(exec_func_ctx *c) { return exec_fn_err(c, EXEC_NOMEM, "out of memory"); }

static int need_text(const cat_value *v, const char *f, exec_func_ctx *c) {
  if (cat_type_is_string(v->type.id)) return EXEC_OK;
  return exec_fn_err(c, EXEC_ERROR, "function %s does not accept %s", f,
                     cat_type_name(v->type.id));
}

static size_t put_utf8(uint8_t *d, int32_t cp) {
  if (cp < 0x80) { d[0] = (uint8_t)cp; return 1; }
  if (cp < 0x800) {
    d[0] = (uint8_t)(0xC0 | (cp >> 6));
    d[1] = (uint8_t)(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) {
    d[0] = (uint8_t)(0xE0 | (cp >> 12));
    d[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
    d[2] = (uint8_t)(0x80 | (cp & 0x3F));
    return 3;
  }
  d[0] = (uint8_t)(0xF0 | (cp >> 18));
  d[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3F));
  d[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
  d[3] = (uint8_t)(0x80 | (cp & 0x3F));
  return 4;
}

static int fold(int id, const cat_value *a, cat_value *out, exec_func_ctx *c) {
  int rc = need_text(a, cat_func_name(id), c);
  if (rc) return rc;
  const uint8_t *p = a->u.s.p, *end = p + a->u.s.len;
  uint8_t *d = exec_arena_alloc(c->arena, a->u.s.len + 1);
  if (!d) return nomem(c);
  size_t o = 0;
  while (p < end) {
    size_t n;
    int32_t cp = exec_fn_utf8(p, end, &n);
    int32_t f = id == EXEC_F_UPPER ? exec_fold_upper(cp) : exec_fold_lower(cp);
    if (f == cp) {
      memcpy(d + o, p, n);
      o += n;
    } else {
      size_t m = put_utf8(d + o, f);
      /* the folding table only pairs characters of equal UTF-8 length */
      if (m != n) return exec_fn_err(c, EXEC_ERROR, "%s: case folding changed a length",
                                     cat_func_name(id));
      o += m;
    }
    p += n;
  }
  *out = cat_v_str(a->type.id, d, o);
  return EXEC_OK;
}

size_t exec_fn_count_chars(const uint8_t *p, size_t len) {
  const uint8_t *end = p + len;
  size_t k = 0;
  while (p < end) {
    size_t n;
    exec_fn_utf8(p, end, &n);
    p += n;
    k++;
  }
  return k;
}

size_t exec_fn_char_off(const uint8_t *p, size_t len, size_t k) {
  size_t o = 0;
  while (k > 0 && o < len) {
    size_t n;
    exec_fn_utf8(p + o, p + len, &n);
    o += n;
    k--;
  }
  return o;
}

static int substr(const cat_value *a, int n, cat_value *out, exec_func_ctx *c) {
  int rc = need_text(&a[0], "SUBSTR", c);
  if (rc) return rc;
  int64_t start, len = INT64_MAX;
  rc = exec_fn_i64(&a[1], &start, c, "SUBSTR");
  if (!rc && n >= 3) rc = exec_fn_i64(&a[2], &len, c, "SUBSTR");
  if (rc) return rc;
  const uint8_t *p = a[0].u.s.p;
  size_t bytes = a[0].u.s.len;
  int64_t chars = (int64_t)exec_fn_count_chars(p, bytes);
  cat_type vt = cat_type_of(CAT_T_VARCHAR);
  /* Phoenix: 1-based; 0 is 1; negative counts from the end (-1 is the last character);
  ** a start outside the text or a length <= 0 gives NULL. */
  int64_t s0;
  if (start > 0) s0 = start - 1;
  else if (start == 0) s0 = 0;
  else s0 = chars + start;
  if (s0 < 0 || s0 >= chars || len <= 0) { *out = cat_v_null(vt); return EXEC_OK; }
  int64_t e0 = (len > chars - s0) ? chars : s0 + len;
  size_t b0 = exec_fn_char_off(p, bytes, (size_t)s0);
  size_t b1 = b0 + exec_fn_char_off(p + b0, bytes - b0, (size_t)(e0 - s0));
  *out = cat_v_str(CAT_T_VARCHAR, p + b0, b1 - b0);
  return EXEC_OK;
}

static bool in_set(int32_t cp, const uint8_t *set, size_t slen) {
  const uint8_t *q = set, *end = set + slen;
  while (q < end) {
    size_t n;
    if (exec_fn_utf8(q, end, &n) == cp) return true;
    q += n;
  }
  return false;
}

static int trim(int id, const cat_value *a, int n, cat_value *out, exec_func_ctx *c) {
  const char *f = cat_func_name(id);
  int rc = need_text(&a[0], f, c);
  if (!rc && n >= 2) rc = need_text(&a[1], f, c);
  if (rc) return rc;
  const uint8_t *set = (const uint8_t *)" ";
  size_t slen = 1;
  if (n >= 2) { set = a[1].u.s.p; slen = a[1].u.s.len; }
  const uint8_t *p = a[0].u.s.p, *end = p + a[0].u.s.len;
  if (id != EXEC_F_RTRIM) {
    while (p < end) {
      size_t k;
      int32_t cp = exec_fn_utf8(p, end, &k);
      if (!in_set(cp, set, slen)) break;
      p += k;
    }
  }
  if (id != EXEC_F_LTRIM) {
    const uint8_t *q = p, *keep = p; /* keep: end of the last character not trimmed */
    while (q < end) {
      size_t k;
      int32_t cp = exec_fn_utf8(q, end, &k);
      q += k;
      if (!in_set(cp, set, slen)) keep = q;
    }
    end = keep;
  }
  *out = cat_v_str(CAT_T_VARCHAR, p, (size_t)(end - p));
  return EXEC_OK;
}

static int concat(const cat_value *a, cat_value *out, exec_func_ctx *c) {
  const uint8_t *p1, *p2;
  size_t n1, n2;
  int rc = exec_fn_text(&a[0], &p1, &n1, c);
  if (!rc) rc = exec_fn_text(&a[1], &p2, &n2, c);
  if (rc) return rc;
  if ((uint64_t)n1 + n2 > UINT32_MAX)
    return exec_fn_err(c, EXEC_CONSTRAINT, "|| result too long (%zu bytes)", n1 + n2);
  uint8_t *d = exec_arena_alloc(c->arena, n1 + n2 + 1);
  if (!d) return nomem(c);
  if (n1) memcpy(d, p1, n1);
  if (n2) memcpy(d + n1, p2, n2);
  d[n1 + n2] = 0;
  bool bin = a[0].type.id == CAT_T_VARBINARY && a[1].type.id == CAT_T_VARBINARY;
  *out = cat_v_str(bin ? CAT_T_VARBINARY : CAT_T_VARCHAR, d, n1 + n2);
  return EXEC_OK;
}

/* CONCAT(a, ...): the text of every non-NULL argument (PostgreSQL's rule). */
static int concat_n(const cat_value *a, int n, cat_value *out, exec_func_ctx *c) {
  size_t total = 0;
  for (int pass = 0; pass < 2; pass++) {
    uint8_t *d = NULL;
    if (pass == 1) {
      d = exec_arena_alloc(c->arena, total + 1);
      if (!d) return nomem(c);
    }
    size_t o = 0;
    for (int i = 0; i < n; i++) {
      if (a[i].is_null) continue;
      const uint8_t *p;
      size_t len;
      int rc = exec_fn_text(&a[i], &p, &len, c);
      if (rc) return rc;
      if (pass == 1 && len) memcpy(d + o, p, len);
      o += len;
      if (o > UINT32_MAX)
        return exec_fn_err(c, EXEC_CONSTRAINT, "CONCAT result too long (%zu bytes)", o);
    }
    total = o;
    if (pass == 1) {
      d[total] = 0;
      *out = cat_v_str(CAT_T_VARCHAR, d, total);
    }
  }
  return EXEC_OK;
}

/* REPLACE(s, search[, rep]): every occurrence of search, left to right, not overlapping;
** rep defaults to '' (Phoenix); an empty search leaves s as it is (SQLite). */
static int replace(const cat_value *a, int n, cat_value *out, exec_func_ctx *c) {
  const char *f = "REPLACE";
  for (int i = 0; i < n; i++) if (need_text(&a[i], f, c)) return EXEC_ERROR;
  const uint8_t *p = a[0].u.s.p, *q = a[1].u.s.p, *r = (const uint8_t *)"";
  size_t pn = a[0].u.s.len, qn = a[1].u.s.len, rn = 0;
  if (n >= 3) { r = a[2].u.s.p; rn = a[2].u.s.len; }
  if (qn == 0 || qn > pn) { *out = cat_v_str(CAT_T_VARCHAR, p, pn); return EXEC_OK; }
  size_t hits = 0;
  for (size_t i = 0; i + qn <= pn;) {
    if (memcmp(p + i, q, qn) == 0) { hits++; i += qn; } else i++;
  }
  if (hits == 0) { *out = cat_v_str(CAT_T_VARCHAR, p, pn); return EXEC_OK; }
  uint64_t total = (uint64_t)pn - (uint64_t)hits * qn + (uint64_t)hits * rn;
  if (total > UINT32_MAX)
    return exec_fn_err(c, EXEC_CONSTRAINT, "REPLACE result too long (%llu bytes)",
                       (unsigned long long)total);
  uint8_t *d = exec_arena_alloc(c->arena, (size_t)total + 1);
  if (!d) return nomem(c);
  size_t o = 0;
  for (size_t i = 0; i < pn;) {
    if (i + qn <= pn && memcmp(p + i, q, qn) == 0) {
      if (rn) memcpy(d + o, r, rn);
      o += rn;
      i += qn;
    } else {
      d[o++] = p[i++];
    }
  }
  d[o] = 0;
  *out = cat_v_str(CAT_T_VARCHAR, d, o);
  return EXEC_OK;
}

/* The most characters LPAD/RPAD will produce. */
#define PAD_MAX_CHARS 10000000

/* LPAD/RPAD(s, len[, fill]): s cut to len characters (its first len), or padded to len
** with fill repeated (the last copy cut short); fill defaults to one space. */
static int pad(int id, const cat_value *a, int n, cat_value *out, exec_func_ctx *c) {
  const char *f = cat_func_name(id);
  int64_t len;
  if (need_text(&a[0], f, c)) return EXEC_ERROR;
  int rc = exec_fn_i64(&a[1], &len, c, f);
  if (rc) return rc;
  if (n >= 3 && need_text(&a[2], f, c)) return EXEC_ERROR;
  if (len < 0)
    return exec_fn_err(c, EXEC_ERROR, "%s: length (argument 2) must not be negative, got %lld",
                       f, (long long)len);
  if (len > PAD_MAX_CHARS)
    return exec_fn_err(c, EXEC_CONSTRAINT, "%s: length (argument 2) %lld is over the limit %d",
                       f, (long long)len, PAD_MAX_CHARS);
  const uint8_t *p = a[0].u.s.p, *fp = (const uint8_t *)" ";
  size_t pn = a[0].u.s.len, fn = 1;
  if (n >= 3) { fp = a[2].u.s.p; fn = a[2].u.s.len; }
  size_t chars = exec_fn_count_chars(p, pn);
  if ((size_t)len <= chars) {
    *out = cat_v_str(CAT_T_VARCHAR, p, exec_fn_char_off(p, pn, (size_t)len));
    return EXEC_OK;
  }
  if (fn == 0)
    return exec_fn_err(c, EXEC_ERROR, "%s: the fill string (argument 3) must not be empty", f);
  size_t need = (size_t)len - chars, fchars = exec_fn_count_chars(fp, fn);
  /* bytes of the padding: whole copies of fill, then the first characters of one more */
  size_t whole = need / fchars, part = need % fchars;
  size_t part_b = exec_fn_char_off(fp, fn, part);
  uint64_t pad_b = (uint64_t)whole * fn + part_b;
  if (pad_b + pn > UINT32_MAX)
    return exec_fn_err(c, EXEC_CONSTRAINT, "%s result too long", f);
  uint8_t *d = exec_arena_alloc(c->arena, (size_t)(pad_b + pn) + 1);
  if (!d) return nomem(c);
  size_t o = id == EXEC_F_LPAD ? 0 : pn;
  for (size_t i = 0; i < whole; i++, o += fn) memcpy(d + o, fp, fn);
  if (part_b) memcpy(d + o, fp, part_b);
  if (pn) memcpy(d + (id == EXEC_F_LPAD ? (size_t)pad_b : 0), p, pn);
  d[pad_b + pn] = 0;
  *out = cat_v_str(CAT_T_VARCHAR, d, (size_t)(pad_b + pn));
  return EXEC_OK;
}

/* INSTR(s, search): the 1-based character position of the first occurrence, 0 if none; an
** empty search is found at 1. */
static int instr(const cat_value *a, cat_value *out, exec_func_ctx *c) {
  if (need_text(&a[0], "INSTR", c) || need_text(&a[1], "INSTR", c)) return EXEC_ERROR;
  const uint8_t *p = a[0].u.s.p, *q = a[1].u.s.p;
  size_t pn = a[0].u.s.len, qn = a[1].u.s.len;
  int64_t pos = 0;
  for (size_t i = 0; i + qn <= pn; i++) {
    if (memcmp(p + i, q, qn) == 0) { pos = (int64_t)exec_fn_count_chars(p, i) + 1; break; }
  }
  *out = cat_v_int(CAT_T_INTEGER, pos);
  return EXEC_OK;
}

int exec_fn_str(int id, const cat_value *a, int n, cat_value *out, exec_func_ctx *c) {
  switch (id) {
    case EXEC_F_CONCAT: return concat(a, out, c);
    case EXEC_F_CONCAT_N: return concat_n(a, n, out, c);
    case EXEC_F_UPPER: case EXEC_F_LOWER: return fold(id, &a[0], out, c);
    case EXEC_F_LENGTH:
      if (a[0].type.id == CAT_T_VARBINARY) {
        *out = cat_v_int(CAT_T_INTEGER, a[0].u.s.len);
        return EXEC_OK;
      }
      if (need_text(&a[0], "LENGTH", c)) return EXEC_ERROR;
      *out = cat_v_int(CAT_T_INTEGER, (int64_t)exec_fn_count_chars(a[0].u.s.p, a[0].u.s.len));
      return EXEC_OK;
    case EXEC_F_SUBSTR: return substr(a, n, out, c);
    case EXEC_F_TRIM: case EXEC_F_LTRIM: case EXEC_F_RTRIM: return trim(id, a, n, out, c);
    case EXEC_F_REPLACE: return replace(a, n, out, c);
    case EXEC_F_LPAD: case EXEC_F_RPAD: return pad(id, a, n, out, c);
    case EXEC_F_INSTR: return instr(a, out, c);
    default: return exec_fn_err(c, EXEC_ERROR, "unknown string function id %d", id);
  }
}
