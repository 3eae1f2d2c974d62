/*
** planner/hint.c: finding the words of an optimizer hint that nothing acts on
** (planner/hint.h). It reads the hint text word by word, skips each word's parenthesized
** arguments, and compares the words, case-insensitively, with the hints Rowan acts on and
** with Phoenix's hints that it accepts without acting on them; and tells whether a hint names
** a word (plan_hint_has). It does not apply any hint.
*/
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "planner/hint.h"

/* Hints some part of the planner or executor acts on (planner/hint.h says where). */
static const char *const KNOWN[] = {"INDEX", "NO_INDEX", "SKIP_SCAN", "RANGE_SCAN",
                                    "NO_SKIP_SCAN", "NO_PUSHDOWN", "SERIAL"};
/* Phoenix's hints that Rowan accepts and does not act on in a query of one table (no
** caches or servers to tune; NO_CHILD_PARENT_JOIN_OPTIMIZATION and USE_SORT_MERGE_JOIN act
** on joins only, where planner/explain.c reports them). */
static const char *const PHOENIX[] = {
    "SMALL", "NO_CACHE", "NO_STAR_JOIN", "USE_SORT_MERGE_JOIN",
    "NO_CHILD_PARENT_JOIN_OPTIMIZATION", "SEEK_TO_COLUMN", "NO_SEEK_TO_COLUMN",
    "USE_DATA_OVER_INDEX_TABLE", "USE_INDEX_OVER_DATA_TABLE", "INDEX_SERVER_MERGE",
    "NO_INDEX_SERVER_MERGE"};

static bool in_list(const char *const *l, size_t n, const char *w, size_t len) {
  for (size_t i = 0; i < n; i++)
    if (strlen(l[i]) == len && strncasecmp(l[i], w, len) == 0) return true;
  return false;
}

/* The next word of hint text *p (letters, digits, '_') outside parenthesized arguments:
** its start, *n its length, *p moved past it; NULL at the end. */
static const char *next_word(const char **p, size_t *n) {
  const char *q = *p;
  while (*q) {
    if (*q == '(') { /* a word's arguments */
      int depth = 0;
      for (; *q; q++) {
        if (*q == '(') depth++;
        else if (*q == ')' && --depth == 0) {
          q++;
          break;
        }
      }
      continue;
    }
    if (!(isalnum((unsigned char)*q) || *q == '_')) {
      q++;
      continue;
    }
    const char *w = q;
    while (*q && (isalnum((unsigned char)*q) || *q == '_')) q++;
    *n = (size_t)(q - w);
    *p = q;
    return w;
  }
  *p = q;
  return NULL;
}

bool plan_hint_has(const char *hint, const char *word) {
  if (!hint) return false;
  const char *p = hint, *w;
  size_t n;
  while ((w = next_word(&p, &n)) != NULL)
    if (in_list(&word, 1, w, n)) return true;
  return false;
}

const char *plan_hint_without(plan_arena *A, const char *hint, const char *word) {
  if (!hint) return NULL;
  size_t len = strlen(hint), o = 0;
  char *out = plan_arena_alloc(A, len + 1);
  if (!out) return NULL;
  const char *p = hint, *w, *from = hint;
  size_t n;
  bool other = false;
  while ((w = next_word(&p, &n)) != NULL) {
    if (!in_list(&word, 1, w, n)) {
      other = true;
      continue;
    }
    memcpy(out + o, from, (size_t)(w - from));
    o += (size_t)(w - from);
    from = p;
  }
  memcpy(out + o, from, strlen(from) + 1);
  return other ? out : NULL;
}

const char *plan_hint_unknown(plan_arena *A, const char *hint) {
  if (!hint) return NULL;
  char out[512];
  size_t o = 0;
  const char *p = hint, *w;
  size_t n;
  while ((w = next_word(&p, &n)) != NULL) {
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

/* The hint's words but `word` on one line (runs of white space made one space), cut after
** about 200 bytes on a character boundary, into text (208 bytes); its length, 0 if none. */
static size_t one_line(const char *hint, char *text, bool *cut) {
  size_t o = 0;
  *cut = false;
  for (const char *p = hint; p && *p; p++) {
    bool sp = *p == ' ' || *p == '\t' || *p == '\n' || *p == '\r';
    if (sp && (o == 0 || text[o - 1] == ' ')) continue;
    if (o >= 200 && ((unsigned char)*p & 0xC0) != 0x80) {
      *cut = true;
      break;
    }
    text[o++] = sp ? ' ' : *p;
  }
  while (o && text[o - 1] == ' ') o--;
  return o;
}

int plan_join_hint_notes(plan_arena *A, const char *hint, bool merged, const char *notes[4]) {
  int n = 0;
  const char *rest = hint;
  if (plan_hint_has(rest, "ORDERED")) {
    notes[n++] = "ORDERED applied: the tables are joined in FROM order";
    rest = plan_hint_without(A, rest, "ORDERED");
  }
  if (plan_hint_has(rest, "NO_CHILD_PARENT_JOIN_OPTIMIZATION")) {
    notes[n++] = "NO_CHILD_PARENT_JOIN_OPTIMIZATION applied: every probe input is read whole, "
                 "never narrowed to the build input's keys";
    rest = plan_hint_without(A, rest, "NO_CHILD_PARENT_JOIN_OPTIMIZATION");
  }
  if (plan_hint_has(rest, "USE_SORT_MERGE_JOIN")) {
    notes[n++] = merged ? "USE_SORT_MERGE_JOIN applied: the first join merges its two tables "
                          "read (or sorted) in join-key order"
                        : "USE_SORT_MERGE_JOIN ignored: a sort-merge join needs the first join "
                          "to be of two tables on equalities of plain columns of one type";
    rest = plan_hint_without(A, rest, "USE_SORT_MERGE_JOIN");
  }
  char text[208], buf[320];
  bool cut;
  size_t o = one_line(rest, text, &cut);
  if (o) { /* no table of a join takes the other hints yet (docs/SQL.md "Joins") */
    int k = snprintf(buf, sizeof buf, "%.*s%s ignored: hints are not applied to the tables of "
                     "a join yet", (int)o, text, cut ? "..." : "");
    if (k > 0 && (notes[n] = plan_arena_strndup(A, buf, (size_t)k)) != NULL) n++;
  }
  return n;
}
