/*
** tests/tu_json.h: a small, strict JSON reader (RFC 8259) for tests that check a JSON
** document Rowan writes (EXPLAIN (FORMAT JSON)): objects, arrays, strings with every
** escape (\uXXXX kept as UTF-8, surrogate pairs joined), numbers (their text kept as
** written), true, false, null. tj_parse returns NULL and a message with the byte offset for
** anything that is not well-formed, trailing bytes included. Header-only; not for engine
** code.
*/
#ifndef ROWAN_TESTS_TU_JSON_H
#define ROWAN_TESTS_TU_JSON_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { TJ_NULL, TJ_BOOL, TJ_NUM, TJ_STR, TJ_ARR, TJ_OBJ };

typedef struct tj {
  int type;           /* TJ_* */
  bool b;             /* TJ_BOOL */
  char *s;            /* TJ_STR: the string (UTF-8); TJ_NUM: the number as written */
  int n;              /* TJ_ARR / TJ_OBJ: members */
  char **keys;        /* TJ_OBJ: member names */
  struct tj **kids;   /* TJ_ARR / TJ_OBJ: members */
} tj;

typedef struct tj_in {
  const char *p, *start, *end; /* the text */
  char err[160];               /* the first error */
} tj_in;

static inline void tj_free(tj *v) {
  if (!v) return;
  free(v->s);
  for (int i = 0; i < v->n; i++) {
    if (v->keys) free(v->keys[i]);
    tj_free(v->kids[i]);
  }
  free(v->keys);
  free(v->kids);
  free(v);
}

static inline tj *tj_fail(tj_in *in, const char *what) {
  if (!in->err[0])
    snprintf(in->err, sizeof in->err, "%s at byte %ld", what, (long)(in->p - in->start));
  return NULL;
}

static inline void tj_ws(tj_in *in) {
  while (in->p < in->end && (*in->p == ' ' || *in->p == '\t' || *in->p == '\n' || *in->p == '\r'))
    in->p++;
}

static inline void tj_utf8(char *o, size_t *k, unsigned cp) {
  if (cp < 0x80) o[(*k)++] = (char)cp;
  else if (cp < 0x800) {
    o[(*k)++] = (char)(0xC0 | (cp >> 6));
    o[(*k)++] = (char)(0x80 | (cp & 63));
  } else if (cp < 0x10000) {
    o[(*k)++] = (char)(0xE0 | (cp >> 12));
    o[(*k)++] = (char)(0x80 | ((cp >> 6) & 63));
    o[(*k)++] = (char)(0x80 | (cp & 63));
  } else {
    o[(*k)++] = (char)(0xF0 | (cp >> 18));
    o[(*k)++] = (char)(0x80 | ((cp >> 12) & 63));
    o[(*k)++] = (char)(0x80 | ((cp >> 6) & 63));
    o[(*k)++] = (char)(0x80 | (cp & 63));
  }
}

static inline int tj_hex4(const char *p, unsigned *out) {
  unsigned v = 0;
  for (int i = 0; i < 4; i++) {
    char c = p[i];
    v <<= 4;
    if (c >= '0' && c <= '9') v |= (unsigned)(c - '0');
    else if (c >= 'a' && c <= 'f') v |= (unsigned)(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F') v |= (unsigned)(c - 'A' + 10);
    else return -1;
  }
  *out = v;
  return 0;
}

/* A string at in->p (on its opening quote): malloc'ed, or NULL on error. */
static inline char *tj_string(tj_in *in) {
  in->p++;
  size_t cap = 64, k = 0;
  char *o = malloc(cap);
  while (in->p < in->end && *in->p != '"') {
    if (k + 8 > cap) o = realloc(o, cap *= 2);
    unsigned char c = (unsigned char)*in->p;
    if (c < 0x20) {
      free(o);
      return (char *)tj_fail(in, "control character in a string");
    }
    if (c != '\\') {
      o[k++] = (char)c;
      in->p++;
      continue;
    }
    if (in->p + 1 >= in->end) break;
    char e = in->p[1];
    in->p += 2;
    const char *simple = strchr("\"\\/bfnrt", e);
    if (simple && e) {
      static const char map[] = "\"\\/\b\f\n\r\t";
      o[k++] = map[simple - "\"\\/bfnrt"];
      continue;
    }
    unsigned cp;
    if (e != 'u' || in->p + 4 > in->end || tj_hex4(in->p, &cp)) {
      free(o);
      return (char *)tj_fail(in, "bad escape in a string");
    }
    in->p += 4;
    if (cp >= 0xD800 && cp <= 0xDBFF) {
      unsigned lo;
      if (in->p + 6 > in->end || in->p[0] != '\\' || in->p[1] != 'u' || tj_hex4(in->p + 2, &lo) ||
          lo < 0xDC00 || lo > 0xDFFF) {
        free(o);
        return (char *)tj_fail(in, "lone surrogate");
      }
      in->p += 6;
      cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
    }
    tj_utf8(o, &k, cp);
  }
  if (in->p >= in->end) {
    free(o);
    return (char *)tj_fail(in, "unterminated string");
  }
  in->p++;
  o[k] = 0;
  return o;
}

static inline tj *tj_value(tj_in *in, int depth);

static inline tj *tj_container(tj_in *in, int depth, bool obj) {
  tj *v = calloc(1, sizeof *v);
  v->type = obj ? TJ_OBJ : TJ_ARR;
  in->p++;
  tj_ws(in);
  char close = obj ? '}' : ']';
  if (in->p < in->end && *in->p == close) {
    in->p++;
    return v;
  }
  for (;;) {
    char *k = NULL;
    tj_ws(in);
    if (obj) {
      if (in->p >= in->end || *in->p != '"') {
        tj_free(v);
        return tj_fail(in, "expected a member name");
      }
      if (!(k = tj_string(in))) {
        tj_free(v);
        return NULL;
      }
      tj_ws(in);
      if (in->p >= in->end || *in->p != ':') {
        free(k);
        tj_free(v);
        return tj_fail(in, "expected ':'");
      }
      in->p++;
    }
    tj *kid = tj_value(in, depth + 1);
    if (!kid) {
      free(k);
      tj_free(v);
      return NULL;
    }
    v->kids = realloc(v->kids, (size_t)(v->n + 1) * sizeof *v->kids);
    if (obj) v->keys = realloc(v->keys, (size_t)(v->n + 1) * sizeof *v->keys);
    v->kids[v->n] = kid;
    if (obj) v->keys[v->n] = k;
    v->n++;
    tj_ws(in);
    if (in->p < in->end && *in->p == ',') {
      in->p++;
      continue;
    }
    if (in->p < in->end && *in->p == close) {
      in->p++;
      return v;
    }
    tj_free(v);
    return tj_fail(in, obj ? "expected ',' or '}'" : "expected ',' or ']'");
  }
}

static inline tj *tj_value(tj_in *in, int depth) {
  if (depth > 64) return tj_fail(in, "nested too deeply");
  tj_ws(in);
  if (in->p >= in->end) return tj_fail(in, "unexpected end");
  char c = *in->p;
  if (c == '{' || c == '[') return tj_container(in, depth, c == '{');
  tj *v = calloc(1, sizeof *v);
  if (c == '"') {
    v->type = TJ_STR;
    if (!(v->s = tj_string(in))) {
      free(v);
      return NULL;
    }
    return v;
  }
  static const char *const words[3] = {"true", "false", "null"};
  for (int i = 0; i < 3; i++) {
    size_t n = strlen(words[i]);
    if ((size_t)(in->end - in->p) >= n && !memcmp(in->p, words[i], n)) {
      in->p += n;
      v->type = i == 2 ? TJ_NULL : TJ_BOOL;
      v->b = i == 0;
      return v;
    }
  }
  const char *s = in->p;
  if (in->p < in->end && *in->p == '-') in->p++;
  if (in->p >= in->end || !(*in->p >= '0' && *in->p <= '9')) {
    free(v);
    return tj_fail(in, "unexpected character");
  }
  if (*in->p == '0') in->p++;
  else
    while (in->p < in->end && *in->p >= '0' && *in->p <= '9') in->p++;
  if (in->p < in->end && *in->p == '.') {
    in->p++;
    if (in->p >= in->end || !(*in->p >= '0' && *in->p <= '9')) {
      free(v);
      return tj_fail(in, "digits expected after '.'");
    }
    while (in->p < in->end && *in->p >= '0' && *in->p <= '9') in->p++;
  }
  if (in->p < in->end && (*in->p == 'e' || *in->p == 'E')) {
    in->p++;
    if (in->p < in->end && (*in->p == '+' || *in->p == '-')) in->p++;
    if (in->p >= in->end || !(*in->p >= '0' && *in->p <= '9')) {
      free(v);
      return tj_fail(in, "digits expected in an exponent");
    }
    while (in->p < in->end && *in->p >= '0' && *in->p <= '9') in->p++;
  }
  v->type = TJ_NUM;
  v->s = strndup(s, (size_t)(in->p - s));
  return v;
}

/* Parse text[0..len): the value, or NULL with *err (cap bytes) saying what and where. */
static inline tj *tj_parse(const char *text, size_t len, char *err, size_t cap) {
  tj_in in = {text, text, text + len, ""};
  tj *v = tj_value(&in, 0);
  if (v) {
    tj_ws(&in);
    if (in.p != in.end) {
      tj_free(v);
      v = tj_fail(&in, "trailing characters");
    }
  }
  if (!v && err) snprintf(err, cap, "%s", in.err);
  return v;
}

/* Member `key` of object v, or NULL. */
static inline const tj *tj_get(const tj *v, const char *key) {
  if (!v || v->type != TJ_OBJ) return NULL;
  for (int i = 0; i < v->n; i++)
    if (!strcmp(v->keys[i], key)) return v->kids[i];
  return NULL;
}

#endif /* ROWAN_TESTS_TU_JSON_H */
