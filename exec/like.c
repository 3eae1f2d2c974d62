/*
** exec/like.c: LIKE and ILIKE matching over UTF-8 text (exec/func.h), the literal prefix of
** a pattern for key ranges, the ESCAPE operand check, the case folding shared with UPPER and
** LOWER, and the UTF-8 decoder the string functions use.
**
** Matching walks text and pattern once, remembering the last % seen: on a mismatch it
** retries with that % swallowing one more character. This needs no recursion and no memory
** and is O(text * pattern) at worst (only one % is ever backtracked to: an earlier one can
** never help once a later one has matched). Not here: regular expressions, collations,
** Unicode case folding beyond the ranges listed in exec/func.h.
*/
#include "exec/func_int.h"

#include <stdio.h>
#include <string.h>

#define BAD_BYTE 0x200000

int32_t exec_fn_utf8(const uint8_t *p, const uint8_t *end, size_t *n) {
  uint8_t b = p[0];
  if (b < 0x80) { *n = 1; return b; }
  size_t need;
  int32_t cp;
  uint8_t lo = 0x80, hi = 0xBF;
  if (b >= 0xC2 && b <= 0xDF) { need = 1; cp = b & 0x1F; }
  else if (b >= 0xE0 && b <= 0xEF) {
    need = 2;
    cp = b & 0x0F;
    if (b == 0xE0) lo = 0xA0;
    if (b == 0xED) hi = 0x9F;
  } else if (b >= 0xF0 && b <= 0xF4) {
    need = 3;
    cp = b & 0x07;
    if (b == 0xF0) lo = 0x90;
    if (b == 0xF4) hi = 0x8F;
  } else {
    *n = 1;
    return BAD_BYTE + b;
  }
  if ((size_t)(end - p) <= need) { *n = 1; return BAD_BYTE + b; }
  for (size_t i = 1; i <= need; i++) {
    uint8_t c = p[i];
    if (i == 1 ? (c < lo || c > hi) : (c & 0xC0) != 0x80) { *n = 1; return BAD_BYTE + b; }
    cp = (cp << 6) | (c & 0x3F);
  }
  *n = need + 1;
  return cp;
}

int32_t exec_fold_lower(int32_t c) {
  if (c < 0x80) return (c >= 'A' && c <= 'Z') ? c + 32 : c;
  if (c >= 0xC0 && c <= 0xDE && c != 0xD7) return c + 32;            /* Latin-1 */
  if (c >= 0x391 && c <= 0x3A9 && c != 0x3A2) return c + 32;         /* Greek */
  if (c >= 0x410 && c <= 0x42F) return c + 32;                       /* Cyrillic */
  if (c >= 0x400 && c <= 0x40F) return c + 80;                       /* Cyrillic Ѐ..Џ */
  return c;
}

int32_t exec_fold_upper(int32_t c) {
  if (c < 0x80) return (c >= 'a' && c <= 'z') ? c - 32 : c;
  if (c >= 0xE0 && c <= 0xFE && c != 0xF7) return c - 32;
  if (c >= 0x3B1 && c <= 0x3C9 && c != 0x3C2) return c - 32;
  if (c >= 0x430 && c <= 0x44F) return c - 32;
  if (c >= 0x450 && c <= 0x45F) return c - 80;
  return c;
}

static int set_msg(char *msg, size_t cap, const char *text) {
  if (msg && cap) snprintf(msg, cap, "%s", text);
  return EXEC_ERROR;
}

int exec_like_escape(const uint8_t *p, size_t len, int32_t *escape, char *msg, size_t cap) {
  size_t n;
  if (len == 0 || (exec_fn_utf8(p, p + len, &n), n != len))
    return set_msg(msg, cap, "ESCAPE must be a single character");
  *escape = exec_fn_utf8(p, p + len, &n);
  return EXEC_OK;
}

/* A pattern ending in an unused escape character is an error, checked before matching so
** the result does not depend on the text. */
static bool bad_escape(const uint8_t *pat, size_t plen, int32_t escape) {
  if (escape == EXEC_LIKE_NO_ESCAPE) return false;
  const uint8_t *q = pat, *end = pat + plen;
  while (q < end) {
    size_t n;
    int32_t c = exec_fn_utf8(q, end, &n);
    q += n;
    if (c == escape) {
      if (q >= end) return true;
      exec_fn_utf8(q, end, &n);
      q += n;
    }
  }
  return false;
}

int exec_like(const uint8_t *s, size_t slen, const uint8_t *pat, size_t plen, int32_t escape,
              bool icase, bool *match, char *msg, size_t cap) {
  if (bad_escape(pat, plen, escape))
    return set_msg(msg, cap, "LIKE pattern must not end with the escape character");
  const uint8_t *se = s + slen, *pe = pat + plen;
  const uint8_t *si = s, *pi = pat;
  const uint8_t *star_p = NULL, *star_s = NULL; /* after the last %, and where it resumed */
  while (si < se) {
    if (pi < pe) {
      size_t pn, sn;
      int32_t pc = exec_fn_utf8(pi, pe, &pn);
      bool literal = false;
      if (pc == escape && escape != EXEC_LIKE_NO_ESCAPE) {
        pi += pn;
        pc = exec_fn_utf8(pi, pe, &pn);
        literal = true;
      }
      if (!literal && pc == '%') {
        pi += pn;
        star_p = pi;
        star_s = si;
        continue;
      }
      int32_t sc = exec_fn_utf8(si, se, &sn);
      if ((!literal && pc == '_') || pc == sc ||
          (icase && exec_fold_lower(pc) == exec_fold_lower(sc))) {
        pi += pn;
        si += sn;
        continue;
      }
    }
    if (!star_p) { *match = false; return EXEC_OK; }
    size_t n;
    exec_fn_utf8(star_s, se, &n);
    star_s += n;
    si = star_s;
    pi = star_p;
  }
  /* text used up: the rest of the pattern must be all % */
  while (pi < pe && *pi == '%' && escape != '%') pi++;
  *match = pi == pe;
  return EXEC_OK;
}

int exec_like_prefix(const uint8_t *pat, size_t plen, int32_t escape, uint8_t *buf, size_t cap,
                     size_t *prefix_len, int *kind, char *msg, size_t cap_msg) {
  if (bad_escape(pat, plen, escape))
    return set_msg(msg, cap_msg, "LIKE pattern must not end with the escape character");
  const uint8_t *q = pat, *end = pat + plen;
  size_t o = 0;
  while (q < end) {
    size_t n;
    int32_t c = exec_fn_utf8(q, end, &n);
    if (c == escape && escape != EXEC_LIKE_NO_ESCAPE) {
      q += n;
      exec_fn_utf8(q, end, &n);
    } else if (c == '%' || c == '_') {
      break;
    }
    if (o + n > cap) return set_msg(msg, cap_msg, "LIKE prefix buffer too small"), EXEC_TOOBIG;
    memcpy(buf + o, q, n);
    o += n;
    q += n;
  }
  *prefix_len = o;
  if (q == end) { *kind = EXEC_LIKE_EXACT; return EXEC_OK; }
  const uint8_t *r = q;
  while (r < end && *r == '%') r++;
  *kind = (*q == '%' && r == end) ? EXEC_LIKE_PREFIX : EXEC_LIKE_OTHER;
  return EXEC_OK;
}
