/*
** tests/tu_sbuf.h: a growing, always NUL-terminated text buffer for tests that render what
** a read returned (rows, cells, versions) as text to compare with a model's rendering.
** Include after <cmocka.h> (out of memory fails the test through assert_non_null). The
** caller frees b.p. Not for engine code: it aborts the test instead of returning errors.
*/
#ifndef ROWAN_TESTS_TU_SBUF_H
#define ROWAN_TESTS_TU_SBUF_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct sbuf {
  char *p;     /* text, NUL-terminated once anything was added; NULL before */
  size_t len;  /* bytes used, not counting the NUL */
  size_t cap;  /* bytes allocated */
} sbuf;

/* Append n raw bytes (they may hold NULs). */
static inline void sb_put(sbuf *b, const void *p, size_t n) {
  if (b->len + n + 1 > b->cap) {
    b->cap = (b->len + n + 1) * 2;
    b->p = realloc(b->p, b->cap);
    assert_non_null(b->p);
  }
  if (n) memcpy(b->p + b->len, p, n);
  b->len += n;
  b->p[b->len] = 0;
}

/* Append printf-formatted text. */
static inline void sb_add(sbuf *b, const char *fmt, ...) {
  va_list ap;
  for (;;) {
    va_start(ap, fmt);
    int n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? b->cap - b->len : 0, fmt, ap);
    va_end(ap);
    assert_true(n >= 0);
    if (b->p && b->len + (size_t)n < b->cap) {
      b->len += (size_t)n;
      return;
    }
    b->cap = (b->cap + (size_t)n + 1) * 2;
    b->p = realloc(b->p, b->cap);
    assert_non_null(b->p);
    if (b->len == 0) b->p[0] = 0;
  }
}

#endif /* ROWAN_TESTS_TU_SBUF_H */
