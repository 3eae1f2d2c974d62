/*
** exec/func_regex.c: the regular expression functions of exec/func.h, REGEXP_SUBSTR and
** REGEXP_REPLACE, with Phoenix's arguments and NULL rules (docs/FUNCTIONS.md) over POSIX
** extended regular expressions (<regex.h> of the C library; PCRE2's headers are not a
** dependency of the build). Each call compiles its pattern and frees it again; a bad
** pattern is an EXEC_ERROR naming the function, the argument and the C library's reason.
** Matching uses REG_STARTEND, so text may hold NUL bytes; the text is still copied with a
** NUL after it (sanitizers' regexec interceptors read up to a NUL whatever the flags say).
** What a "character" is for `.` and brackets follows the process's LC_CTYPE locale (bytes
** in the default "C" locale); offsets given to and returned by the functions count UTF-8
** characters as the other string functions do. REGEXP_SPLIT gives a VARCHAR ARRAY built by
** exec/func_array.c. Not here: LIKE (exec/like.c).
*/
#include "exec/func_int.h"

#include <regex.h>
#include <stdlib.h>
#include <string.h>

#define GROUPS 10 /* $0 .. $9 */

static int nomem(exec_func_ctx *c) { return exec_fn_err(c, EXEC_NOMEM, "out of memory"); }

static int need_text(const cat_value *v, const char *f, int arg, exec_func_ctx *c) {
  if (cat_type_is_string(v->type.id)) return EXEC_OK;
  return exec_fn_err(c, EXEC_ERROR, "function %s does not accept %s (argument %d)", f,
                     cat_type_name(v->type.id), arg);
}

/* Java syntax that POSIX reads as something else without complaint: \d, \D (a literal
** d), lazy quantifiers *? +? ?? (a repeated repetition), (? groups (look-around, flags), and
** a backslash inside a bracket expression (literal in POSIX: [\d] is backslash or d).
** Returns the offending text or NULL. */
static const char *java_only(const char *z) {
  for (size_t i = 0; z[i]; i++) {
    if (z[i] == '[') { /* to the closing ], which may come first: []..] or [^]..] */
      size_t j = i + 1;
      if (z[j] == '^') j++;
      if (z[j] == ']') j++;
      while (z[j] && z[j] != ']') {
        if (z[j] == '[' && (z[j + 1] == ':' || z[j + 1] == '.' || z[j + 1] == '=')) {
          char close = z[j + 1];
          j += 2;
          while (z[j] && !(z[j] == close && z[j + 1] == ']')) j++;
          if (z[j]) j++;
        }
        if (z[j] == '\\') return "\\ inside [ ]";
        if (z[j]) j++;
      }
      if (!z[j]) return NULL; /* unterminated: regcomp says so */
      i = j;
    } else if (z[i] == '\\') {
      if (z[i + 1] == 'd' || z[i + 1] == 'D') return z[i + 1] == 'd' ? "\\d" : "\\D";
      if (z[i + 1]) i++;
    } else if ((z[i] == '*' || z[i] == '+' || z[i] == '?') && z[i + 1] == '?') {
      return z[i] == '*' ? "*?" : z[i] == '+' ? "+?" : "??";
    } else if (z[i] == '(' && z[i + 1] == '?') {
      return "(?";
    }
  }
  return NULL;
}

/* Compile the pattern of argument 2 (REG_EXTENDED). */
static int compile(const char *f, const cat_value *pat, regex_t *re, exec_func_ctx *c) {
  size_t n = pat->u.s.len;
  if (memchr(pat->u.s.p, 0, n))
    return exec_fn_err(c, EXEC_ERROR, "%s: the pattern (argument 2) holds a NUL byte", f);
  char *z = malloc(n + 1);
  if (!z) return nomem(c);
  if (n) memcpy(z, pat->u.s.p, n);
  z[n] = 0;
  const char *j = java_only(z);
  if (j) {
    int r = exec_fn_err(c, EXEC_ERROR,
                        "%s: '%s' in the pattern (argument 2) is Java regular expression syntax; "
                        "patterns are POSIX extended (write [0-9] for \\d; no lazy quantifiers, "
                        "look-around or inline flags)", f, j);
    free(z);
    return r;
  }
  int rc = regcomp(re, z, REG_EXTENDED);
  if (rc != 0) {
    char why[128];
    regerror(rc, re, why, sizeof why);
    int r = exec_fn_err(c, rc == REG_ESPACE ? EXEC_NOMEM : EXEC_ERROR,
                        "%s: bad regular expression '%.60s' (argument 2): %s", f, z, why);
    free(z);
    return r;
  }
  free(z);
  return EXEC_OK;
}

/* Match re in s[from..len) (from a character boundary); REG_NOTBOL when from is not the
** start of the text. 1 match (m filled, offsets from s), 0 none, or minus an EXEC_* code
** with c->msg set. */
static int find(const char *f, const regex_t *re, const uint8_t *s, size_t len, size_t from,
                bool notbol, regmatch_t *m, exec_func_ctx *c) {
  m[0].rm_so = (regoff_t)from;
  m[0].rm_eo = (regoff_t)len;
  int rc = regexec(re, (const char *)s, GROUPS, m, REG_STARTEND | (notbol ? REG_NOTBOL : 0));
  if (rc == 0) return 1;
  if (rc == REG_NOMATCH) return 0;
  char why[128];
  regerror(rc, re, why, sizeof why);
  return -exec_fn_err(c, rc == REG_ESPACE ? EXEC_NOMEM : EXEC_ERROR, "%s: %s", f, why);
}

/* A NUL-terminated copy of v's bytes (malloc), or NULL. */
static uint8_t *nul_copy(const cat_value *v) {
  uint8_t *d = malloc(v->u.s.len + 1);
  if (!d) return NULL;
  if (v->u.s.len) memcpy(d, v->u.s.p, v->u.s.len);
  d[v->u.s.len] = 0;
  return d;
}

/* REGEXP_SUBSTR(s, pattern[, offset]): the first match at or after character offset
** (SUBSTR's rules: 1-based, 0 is 1, negative counts from the end); NULL when there is no
** match or offset is outside s. */
static int substr(const cat_value *a, int n, cat_value *out, exec_func_ctx *c) {
  const char *f = "REGEXP_SUBSTR";
  if (need_text(&a[0], f, 1, c) || need_text(&a[1], f, 2, c)) return EXEC_ERROR;
  int64_t off = 1;
  if (n >= 3) {
    int rc = exec_fn_i64(&a[2], &off, c, f);
    if (rc) return rc;
  }
  regex_t re;
  int rc = compile(f, &a[1], &re, c);
  if (rc) return rc;
  uint8_t *s = nul_copy(&a[0]);
  if (!s) {
    regfree(&re);
    return nomem(c);
  }
  size_t len = a[0].u.s.len;
  int64_t chars = (int64_t)exec_fn_count_chars(s, len);
  int64_t s0 = off > 0 ? off - 1 : off == 0 ? 0 : chars + off;
  *out = cat_v_null(cat_type_of(CAT_T_VARCHAR));
  if (s0 >= 0 && s0 < chars) {
    regmatch_t m[GROUPS];
    size_t from = exec_fn_char_off(s, len, (size_t)s0);
    int hit = find(f, &re, s, len, from, from > 0, m, c);
    if (hit < 0) rc = -hit;
    else if (hit) /* the same bytes in the argument itself */
      *out = cat_v_str(CAT_T_VARCHAR, a[0].u.s.p + m[0].rm_so, (size_t)(m[0].rm_eo - m[0].rm_so));
  }
  regfree(&re);
  free(s);
  return rc;
}

/* A growable output buffer (malloc), copied into the arena at the end. */
typedef struct obuf {
  uint8_t *p;
  size_t n, cap;
  bool oom;
} obuf;

static void put(obuf *b, const uint8_t *p, size_t n) {
  if (b->oom || n == 0) return;
  if (b->n + n > b->cap) {
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->n + n) cap *= 2;
    uint8_t *q = cap > UINT32_MAX ? NULL : realloc(b->p, cap);
    if (!q) { b->oom = true; return; }
    b->p = q;
    b->cap = cap;
  }
  memcpy(b->p + b->n, p, n);
  b->n += n;
}

/* Check the replacement text: `$d` is group d (0..9, at most the pattern's group count),
** `\x` is x; anything else after `$`, or a lone `\` at the end, is an error. */
static int check_rep(const char *f, const uint8_t *r, size_t rn, size_t nsub, exec_func_ctx *c) {
  for (size_t i = 0; i < rn; i++) {
    if (r[i] == '\\') {
      if (i + 1 >= rn)
        return exec_fn_err(c, EXEC_ERROR, "%s: the replacement (argument 3) ends in a backslash",
                           f);
      i++;
    } else if (r[i] == '$') {
      if (i + 1 >= rn || r[i + 1] < '0' || r[i + 1] > '9')
        return exec_fn_err(c, EXEC_ERROR,
                           "%s: '$' in the replacement (argument 3) must be followed by a group "
                           "number 0-9 (write \\$ for a dollar sign)", f);
      size_t g = (size_t)(r[i + 1] - '0');
      if (g > nsub)
        return exec_fn_err(c, EXEC_ERROR,
                           "%s: the replacement (argument 3) refers to group $%zu but the pattern "
                           "has %zu group%s", f, g, nsub, nsub == 1 ? "" : "s");
      i++;
    }
  }
  return EXEC_OK;
}

static void put_rep(obuf *b, const uint8_t *r, size_t rn, const uint8_t *s,
                    const regmatch_t *m) {
  for (size_t i = 0; i < rn; i++) {
    if (r[i] == '\\') {
      put(b, &r[++i], 1);
    } else if (r[i] == '$') {
      const regmatch_t *g = &m[r[++i] - '0'];
      if (g->rm_so >= 0) put(b, s + g->rm_so, (size_t)(g->rm_eo - g->rm_so));
    } else {
      put(b, &r[i], 1);
    }
  }
}

/* REGEXP_REPLACE(s, pattern[, rep]): every match, left to right, replaced by rep (default
** ''); after an empty match the next character is kept and the search goes on after it. */
static int replace(const cat_value *a, int n, cat_value *out, exec_func_ctx *c) {
  const char *f = "REGEXP_REPLACE";
  if (need_text(&a[0], f, 1, c) || need_text(&a[1], f, 2, c)) return EXEC_ERROR;
  if (n >= 3 && need_text(&a[2], f, 3, c)) return EXEC_ERROR;
  const uint8_t *r = n >= 3 ? a[2].u.s.p : (const uint8_t *)"";
  size_t rn = n >= 3 ? a[2].u.s.len : 0;
  regex_t re;
  int rc = compile(f, &a[1], &re, c);
  if (rc) return rc;
  rc = check_rep(f, r, rn, re.re_nsub, c);
  uint8_t *s = rc ? NULL : nul_copy(&a[0]);
  if (!rc && !s) rc = nomem(c);
  size_t len = a[0].u.s.len, pos = 0;
  obuf b = {0};
  while (!rc && pos <= len) {
    regmatch_t m[GROUPS];
    int hit = find(f, &re, s, len, pos, pos > 0, m, c);
    if (hit < 0) { rc = -hit; break; }
    if (!hit) break;
    size_t so = (size_t)m[0].rm_so, eo = (size_t)m[0].rm_eo;
    put(&b, s + pos, so - pos);
    put_rep(&b, r, rn, s, m);
    if (eo == so) { /* empty match: keep one character, search on after it */
      if (eo >= len) { pos = len + 1; break; }
      size_t k;
      exec_fn_utf8(s + eo, s + len, &k);
      put(&b, s + eo, k);
      pos = eo + k;
    } else {
      pos = eo;
    }
  }
  regfree(&re);
  if (!rc && pos < len) put(&b, s + pos, len - pos);
  if (!rc && b.oom) rc = exec_fn_err(c, EXEC_NOMEM, "%s: out of memory", f);
  if (!rc) {
    uint8_t *d = exec_arena_copy(c->arena, b.p ? b.p : (const uint8_t *)"", b.n);
    if (!d) rc = nomem(c);
    else *out = cat_v_str(CAT_T_VARCHAR, d, b.n);
  }
  free(b.p);
  free(s);
  return rc;
}

/* REGEXP_SPLIT(s, pattern): the pieces of s between the matches of pattern, left to right,
** empty pieces kept (also at the start and the end), as Phoenix (Guava's Splitter.onPattern)
** does; no match gives [s]. A pattern that matches the empty string is refused (Guava's rule);
** an empty match met inside the text (a pattern like `\b`) splits nothing there. */
static int split(const cat_value *a, cat_value *out, exec_func_ctx *c) {
  const char *f = "REGEXP_SPLIT";
  if (need_text(&a[0], f, 1, c) || need_text(&a[1], f, 2, c)) return EXEC_ERROR;
  regex_t re;
  int rc = compile(f, &a[1], &re, c);
  if (rc) return rc;
  regmatch_t m[GROUPS];
  int hit = find(f, &re, (const uint8_t *)"", 0, 0, false, m, c);
  if (hit > 0)
    rc = exec_fn_err(c, EXEC_ERROR, "%s: the pattern (argument 2) matches the empty string, so it "
                     "cannot split", f);
  else if (hit < 0)
    rc = -hit;
  uint8_t *s = rc ? NULL : nul_copy(&a[0]);
  if (!rc && !s) rc = nomem(c);
  size_t len = a[0].u.s.len, pos = 0, piece = 0, n = 0, cap = 0;
  cat_value *es = NULL;
  while (!rc) {
    hit = pos <= len ? find(f, &re, s, len, pos, pos > 0, m, c) : 0;
    if (hit < 0) { rc = -hit; break; }
    size_t so = hit ? (size_t)m[0].rm_so : len, eo = hit ? (size_t)m[0].rm_eo : len;
    if (hit && eo == so) { /* an empty match: no split here, search on after a character */
      if (eo >= len) { pos = len + 1; continue; }
      size_t k;
      exec_fn_utf8(s + eo, s + len, &k);
      pos = eo + k;
      continue;
    }
    if (n == cap) {
      size_t nc = cap ? cap * 2 : 8;
      cat_value *ne = nc > UINT32_MAX ? NULL : realloc(es, nc * sizeof *ne);
      if (!ne) { rc = nomem(c); break; }
      es = ne;
      cap = nc;
    }
    /* the piece's bytes in the argument itself, which outlives the build */
    es[n++] = cat_v_str(CAT_T_VARCHAR, a[0].u.s.p + piece, so - piece);
    if (!hit) break;
    pos = piece = eo;
  }
  regfree(&re);
  if (!rc) {
    cat_type vt = cat_type_of(CAT_T_VARCHAR);
    rc = exec_fn_array_build(&vt, es, (uint32_t)n, out, c);
  }
  free(es);
  free(s);
  return rc;
}

int exec_fn_regex(int id, const cat_value *a, int n, cat_value *out, exec_func_ctx *c) {
  switch (id) {
    case EXEC_F_REGEXP_SPLIT: return split(a, out, c);
    case EXEC_F_REGEXP_SUBSTR: return substr(a, n, out, c);
    case EXEC_F_REGEXP_REPLACE: return replace(a, n, out, c);
    default: return exec_fn_err(c, EXEC_ERROR, "unknown regular expression function id %d", id);
  }
}
