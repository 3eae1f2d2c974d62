/*
** planner/hint.c: finding the words of an optimizer hint that nothing acts on
** (planner/hint.h). It reads the hint text word by word, skips each word's parenthesized
** arguments, and compares the words, case-insensitively, with the hints Rowan acts on and
** with Phoenix's hints that it accepts without acting on them. It does not apply any hint.
*/
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "planner/hint.h"

/* Hints some part of the planner or executor acts on (planner/hint.h says where). */
static const char *const KNOWN[] = {"INDEX", "NO_INDEX", "SKIP_SCAN", "RANGE_SCAN",
                                    "NO_SKIP_SCAN", "NO_PUSHDOWN"};
/* Phoenix's hints that Rowan accepts and does not act on (no joins, caches or servers to
** tune yet). */
static const char *const PHOENIX[] = {
    "SMALL", "NO_CACHE", "SERIAL", "NO_STAR_JOIN", "USE_SORT_MERGE_JOIN",
    "NO_CHILD_PARENT_JOIN_OPTIMIZATION", "SEEK_TO_COLUMN", "NO_SEEK_TO_COLUMN",
    "USE_DATA_OVER_INDEX_TABLE", "USE_INDEX_OVER_DATA_TABLE", "INDEX_SERVER_MERGE",
    "NO_INDEX_SERVER_MERGE"};

static bool in_list(const char *const *l, size_t n, const char *w, size_t len) {
  for (size_t i = 0; i < n; i++)
    if (strlen(l[i]) == len && strncasecmp(l[i], w, len) == 0) return true;
  return false;
}

const char *plan_hint_unknown(plan_arena *A, const char *hint) {
  if (!hint) return NULL;
  char out[512];
  size_t o = 0;
  const char *p = hint;
  while (*p) {
    if (*p == '(') { /* a word's arguments */
      int depth = 0;
      for (; *p; p++) {
        if (*p == '(') depth++;
        else if (*p == ')' && --depth == 0) {
          p++;
          break;
        }
      }
      continue;
    }
    if (!(isalnum((unsigned char)*p) || *p == '_')) {
      p++;
      continue;
    }
    const char *w = p;
    while (*p && (isalnum((unsigned char)*p) || *p == '_')) p++;
    size_t n = (size_t)(p - w);
    if (in_list(KNOWN, sizeof KNOWN / sizeof *KNOWN, w, n)) continue;
    bool phoenix = in_list(PHOENIX, sizeof PHOENIX / sizeof *PHOENIX, w, n);
    int k = snprintf(out + o, sizeof out - o, "%s%.*s ignored: %s", o ? "; " : "",
                     (int)(n > 64 ? 64 : n), w,
                     phoenix ? "a Phoenix hint with no effect in Rowan"
                             : "not a hint Rowan knows (INDEX, NO_INDEX, SKIP_SCAN, RANGE_SCAN, "
                               "NO_SKIP_SCAN, NO_PUSHDOWN)");
    if (k < 0 || (size_t)k >= sizeof out - o) break; /* the notes so far */
    o += (size_t)k;
  }
  return o ? plan_arena_strndup(A, out, o) : NULL;
}
