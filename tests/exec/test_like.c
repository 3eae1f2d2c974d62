/*
** tests/exec/test_like.c: LIKE / ILIKE (exec/like.c): fixed cases (wildcards, escapes,
** multibyte and invalid UTF-8, case folding, edge patterns, a backtracking-heavy pattern),
** the ESCAPE operand check, the literal prefix and pattern shape for key ranges, and a
** seeded random comparison against a recursive reference matcher over code point arrays
** (written independently of the iterative matcher), including prefix-shape consistency.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "exec/engine.h"
#include "exec/func.h"
#include "testutil.h"

static char msg[256];

static bool like(const char *s, const char *p, int32_t esc, bool icase) {
  bool m = false;
  int rc = exec_like((const uint8_t *)s, strlen(s), (const uint8_t *)p, strlen(p), esc, icase,
                     &m, msg, sizeof msg);
  if (rc != EXEC_OK) fail_msg("'%s' LIKE '%s' failed: %s", s, p, msg);
  return m;
}
#define NOESC EXEC_LIKE_NO_ESCAPE

static void test_like_cases(void **state) {
  (void)state;
  assert_true(like("abc", "a%", NOESC, false));
  assert_true(like("abc", "a_c", NOESC, false));
  assert_true(like("abc", "abc", NOESC, false));
  assert_false(like("abc", "ab", NOESC, false));
  assert_false(like("ab", "abc", NOESC, false));
  assert_false(like("abc", "_", NOESC, false));
  assert_true(like("abc", "___", NOESC, false));
  assert_false(like("abc", "____", NOESC, false));
  assert_true(like("", "%", NOESC, false));
  assert_true(like("", "%%", NOESC, false));
  assert_false(like("", "_", NOESC, false));
  assert_true(like("", "", NOESC, false));
  assert_false(like("a", "", NOESC, false));
  assert_true(like("mississippi", "%iss%pi", NOESC, false));
  assert_true(like("mississippi", "m%i%s%i%p%", NOESC, false));
  assert_false(like("mississippi", "%iss%x%", NOESC, false));
  assert_true(like("abc", "%c", NOESC, false));
  assert_false(like("abcd", "%c", NOESC, false));
  assert_true(like("a%b", "a\\%b", '\\', false));
  assert_false(like("axb", "a\\%b", '\\', false));
  assert_true(like("a_b", "a\\_b", '\\', false));
  assert_false(like("axb", "a\\_b", '\\', false));
  assert_true(like("a\\b", "a\\\\b", '\\', false));
  assert_true(like("100%", "100!%", '!', false));
  assert_true(like("100%", "%!%", '!', false));
  assert_false(like("100", "%!%", '!', false));
  assert_true(like("a%", "a%%", '%', false));   /* escape % : %% is a literal % */
  assert_false(like("ab", "a%%", '%', false));
  assert_true(like("abc", "a\\bc", '\\', false)); /* escaped ordinary char is literal */
  assert_true(like("a\\b", "a\\b", NOESC, false)); /* no escape: backslash is literal */
  assert_true(like("héllo", "h_llo", NOESC, false));
  assert_false(like("héllo", "h__llo", NOESC, false));
  assert_true(like("日本語", "_本_", NOESC, false));
  assert_true(like("h\xffllo", "h_llo", NOESC, false)); /* an invalid byte is one character */
  assert_false(like("\xc3", "\xc3\x83", NOESC, false));
  assert_true(like("éa", "\xc3\xa9_", NOESC, false));
  assert_true(like("ÀB", "àb", NOESC, true));
  assert_false(like("ÀB", "àb", NOESC, false));
  assert_true(like("ABC", "a%C", NOESC, true));
  assert_true(like("ΣΟΦΙΑ", "σοφ%", NOESC, true));
  assert_true(like("Ёлка", "ёЛ%", NOESC, true));
  assert_false(like("abc", "ABD", NOESC, true));
  /* a pattern that makes naive backtracking exponential */
  char text[201], pat[64];
  memset(text, 'a', 200);
  text[200] = 0;
  strcpy(pat, "%a%a%a%a%a%a%a%a%a%a%a%a%b");
  assert_false(like(text, pat, NOESC, false));
  text[199] = 'b';
  assert_true(like(text, pat, NOESC, false));
}

static void test_like_errors(void **state) {
  (void)state;
  bool m;
  assert_int_equal(exec_like((const uint8_t *)"x", 1, (const uint8_t *)"a\\", 2, '\\', false,
                             &m, msg, sizeof msg), EXEC_ERROR);
  assert_non_null(strstr(msg, "escape"));
  /* the error does not depend on the text */
  assert_int_equal(exec_like((const uint8_t *)"", 0, (const uint8_t *)"ab%\\", 4, '\\', false,
                             &m, msg, sizeof msg), EXEC_ERROR);
  int32_t esc;
  assert_int_equal(exec_like_escape((const uint8_t *)"", 0, &esc, msg, sizeof msg), EXEC_ERROR);
  assert_non_null(strstr(msg, "single character"));
  assert_int_equal(exec_like_escape((const uint8_t *)"ab", 2, &esc, msg, sizeof msg), EXEC_ERROR);
  assert_int_equal(exec_like_escape((const uint8_t *)"\\", 1, &esc, msg, sizeof msg), EXEC_OK);
  assert_int_equal(esc, '\\');
  assert_int_equal(exec_like_escape((const uint8_t *)"é", 2, &esc, msg, sizeof msg), EXEC_OK);
  assert_int_equal(esc, 0xE9);
  assert_true(like("aéb", "a%é_", 0xE9, false) == false);
  assert_true(like("a_", "a%é_", 0xE9, false));
}

static void prefix(const char *p, int32_t esc, const char *want, int want_kind) {
  uint8_t buf[64];
  size_t n;
  int kind;
  int rc = exec_like_prefix((const uint8_t *)p, strlen(p), esc, buf, sizeof buf, &n, &kind, msg,
                            sizeof msg);
  if (rc != EXEC_OK) fail_msg("prefix of '%s' failed: %s", p, msg);
  if (n != strlen(want) || memcmp(buf, want, n) != 0 || kind != want_kind)
    fail_msg("prefix of '%s' is '%.*s' kind %d, want '%s' kind %d", p, (int)n, buf, kind, want,
             want_kind);
}

static void test_like_prefix(void **state) {
  (void)state;
  prefix("abc%", NOESC, "abc", EXEC_LIKE_PREFIX);
  prefix("abc%%", NOESC, "abc", EXEC_LIKE_PREFIX);
  prefix("abc", NOESC, "abc", EXEC_LIKE_EXACT);
  prefix("", NOESC, "", EXEC_LIKE_EXACT);
  prefix("%", NOESC, "", EXEC_LIKE_PREFIX);
  prefix("ab_c%", NOESC, "ab", EXEC_LIKE_OTHER);
  prefix("ab%c", NOESC, "ab", EXEC_LIKE_OTHER);
  prefix("ab%_", NOESC, "ab", EXEC_LIKE_OTHER);
  prefix("%abc", NOESC, "", EXEC_LIKE_OTHER);
  prefix("a\\%b%", '\\', "a%b", EXEC_LIKE_PREFIX);
  prefix("a\\_b", '\\', "a_b", EXEC_LIKE_EXACT);
  prefix("a\\%", '\\', "a%", EXEC_LIKE_EXACT);
  prefix("é日%", NOESC, "é日", EXEC_LIKE_PREFIX);
  prefix("100!%%", '!', "100%", EXEC_LIKE_PREFIX);
  uint8_t small[2];
  size_t n;
  int kind;
  assert_int_equal(exec_like_prefix((const uint8_t *)"abcd%", 5, NOESC, small, sizeof small, &n,
                                    &kind, msg, sizeof msg), EXEC_TOOBIG);
  assert_int_equal(exec_like_prefix((const uint8_t *)"ab\\", 3, '\\', small, sizeof small, &n,
                                    &kind, msg, sizeof msg), EXEC_ERROR);
}

/* ---- Reference matcher: recursive, over decoded code points ----------------------------- */
typedef struct pchar {
  int32_t c;     /* code point */
  bool lit;      /* escaped: literal even if % or _ */
} pchar;

static int32_t low(int32_t c) {
  if (c >= 'A' && c <= 'Z') return c + 32;
  if (c >= 0xC0 && c <= 0xDE && c != 0xD7) return c + 32;
  return c;
}

static bool ref_match(const int32_t *s, int ns, const pchar *p, int np, bool icase) {
  if (np == 0) return ns == 0;
  if (!p[0].lit && p[0].c == '%') {
    for (int k = 0; k <= ns; k++)
      if (ref_match(s + k, ns - k, p + 1, np - 1, icase)) return true;
    return false;
  }
  if (ns == 0) return false;
  bool one = (!p[0].lit && p[0].c == '_') || p[0].c == s[0] ||
             (icase && low(p[0].c) == low(s[0]));
  return one && ref_match(s + 1, ns - 1, p + 1, np - 1, icase);
}

static size_t encode(int32_t c, char *o) {
  if (c < 0x80) { o[0] = (char)c; return 1; }
  o[0] = (char)(0xC0 | (c >> 6));
  o[1] = (char)(0x80 | (c & 0x3F));
  return 2;
}

static void test_like_random(void **state) {
  (void)state;
  uint64_t seed = tu_seed("test_like_random"), st = seed;
  const int32_t text_chars[] = {'a', 'b', 'A', 0xE9, 0xC9, '%', '_'};
  const int32_t pat_chars[] = {'a', 'b', 'A', 0xE9, 0xC9, '%', '%', '_', '\\'};
  uint64_t n = tu_scaled(40000, 2000);
  uint64_t matches = 0;
  for (uint64_t k = 0; k < n; k++) {
    int32_t s[12];
    pchar p[12];
    char sb[64], pb[64];
    size_t sl = 0, pl = 0;
    int ns = (int)tu_below(&st, 10), np = 0, want_np = (int)tu_below(&st, 8);
    bool use_esc = tu_below(&st, 2), icase = tu_below(&st, 3) == 0;
    for (int i = 0; i < ns; i++) {
      s[i] = text_chars[tu_below(&st, 7)];
      sl += encode(s[i], sb + sl);
    }
    /* sometimes start the pattern from the text so matches are common */
    for (int i = 0; i < want_np; i++) {
      int32_t c = (i < ns && tu_below(&st, 2)) ? s[i] : pat_chars[tu_below(&st, 9)];
      if (use_esc && c == '\\') {
        int32_t nx = pat_chars[tu_below(&st, 8)]; /* never a lone escape at the end */
        pl += encode('\\', pb + pl);
        pl += encode(nx, pb + pl);
        p[np].c = nx;
        p[np++].lit = true;
        continue;
      }
      if (use_esc && (c == '%' || c == '_') && tu_below(&st, 3) == 0) {
        pl += encode('\\', pb + pl);
        pl += encode(c, pb + pl);
        p[np].c = c;
        p[np++].lit = true;
        continue;
      }
      pl += encode(c, pb + pl);
      p[np].c = c;
      p[np++].lit = false;
    }
    bool got;
    int32_t esc = use_esc ? '\\' : NOESC;
    int rc = exec_like((const uint8_t *)sb, sl, (const uint8_t *)pb, pl, esc, icase, &got, msg,
                       sizeof msg);
    bool want = ref_match(s, ns, p, np, icase);
    if (rc != EXEC_OK || got != want)
      fail_msg("seed %llu: '%.*s' %s '%.*s' (escape %s) gave %d rc %d, want %d",
               (unsigned long long)seed, (int)sl, sb, icase ? "ILIKE" : "LIKE", (int)pl, pb,
               use_esc ? "\\" : "none", got, rc, want);
    matches += got;
    /* the prefix and shape agree with matching (case-sensitive only) */
    uint8_t pre[64];
    size_t pn;
    int kind;
    assert_int_equal(exec_like_prefix((const uint8_t *)pb, pl, esc, pre, sizeof pre, &pn, &kind,
                                      msg, sizeof msg), EXEC_OK);
    if (!icase) {
      bool starts = sl >= pn && memcmp(sb, pre, pn) == 0;
      if (got && !starts)
        fail_msg("seed %llu: '%.*s' matches '%.*s' but lacks prefix '%.*s'",
                 (unsigned long long)seed, (int)sl, sb, (int)pl, pb, (int)pn, pre);
      if (kind == EXEC_LIKE_EXACT && got != (sl == pn && starts))
        fail_msg("seed %llu: exact pattern '%.*s' vs '%.*s'", (unsigned long long)seed, (int)pl,
                 pb, (int)sl, sb);
      if (kind == EXEC_LIKE_PREFIX && got != starts)
        fail_msg("seed %llu: prefix pattern '%.*s' vs '%.*s'", (unsigned long long)seed, (int)pl,
                 pb, (int)sl, sb);
    }
  }
  assert_true(matches > n / 50); /* the generator does produce matches */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_like_cases),
      cmocka_unit_test(test_like_errors),
      cmocka_unit_test(test_like_prefix),
      cmocka_unit_test(test_like_random),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
