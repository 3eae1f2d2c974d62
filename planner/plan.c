/*
** planner/plan.c: the plan arena (a bump allocator whose chunks are freed together) and
** small helpers shared by the binder, the planner and EXPLAIN (error positions).
**
** plan_arena_reset (planner/plan_reuse.h) empties an arena but keeps its newest chunk, so a
** statement's plan, rebuilt at each execution, reuses the same memory.
** Not here: binding (planner/bind.c), planning (planner/select.c), printing
** (planner/explain.c).
*/
#include "planner/plan.h"
#include "planner/plan_reuse.h"

#include "catalog/status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct plan_arena_chunk {
  plan_arena_chunk *next; /* older chunk */
  size_t cap;             /* usable bytes after the header */
  max_align_t data[];     /* payload */
};

void plan_arena_init(plan_arena *a) { memset(a, 0, sizeof *a); }

struct plan_arena_defer {
  struct plan_arena_defer *next; /* older entry */
  void (*fn)(void *);            /* what to call */
  void *p;                       /* with what */
};

int plan_arena_defer(plan_arena *a, void (*fn)(void *), void *p) {
  struct plan_arena_defer *d = malloc(sizeof *d);
  if (!d) {
    fn(p);
    return EXEC_NOMEM;
  }
  d->next = a->defer;
  d->fn = fn;
  d->p = p;
  a->defer = d;
  return EXEC_OK;
}

/* Run and free a's deferred calls. */
static void run_defers(plan_arena *a) {
  while (a->defer) {
    struct plan_arena_defer *d = a->defer;
    a->defer = d->next;
    d->fn(d->p);
    free(d);
  }
}

void *plan_arena_alloc(plan_arena *a, size_t n) {
  const size_t align = sizeof(max_align_t);
  n = (n + align - 1) / align * align;
  if (n == 0) n = align;
  if (!a->head || a->cap - a->used < n) {
    size_t cap = a->head ? a->head->cap * 2 : 4096;
    if (cap > (1u << 20)) cap = 1u << 20;
    if (cap < n) cap = n;
    plan_arena_chunk *c = malloc(sizeof *c + cap);
    if (!c) return NULL;
    c->next = a->head;
    c->cap = cap;
    a->head = c;
    a->used = 0;
    a->cap = cap;
    a->total += cap;
  }
  void *p = (char *)a->head->data + a->used;
  a->used += n;
  memset(p, 0, n);
  return p;
}

char *plan_arena_strndup(plan_arena *a, const char *p, size_t n) {
  char *s = plan_arena_alloc(a, n + 1);
  if (!s) return NULL;
  if (n) memcpy(s, p, n);
  s[n] = 0;
  return s;
}

void plan_arena_free(plan_arena *a) {
  run_defers(a);
  plan_arena_chunk *c = a->head;
  while (c) {
    plan_arena_chunk *next = c->next;
    free(c);
    c = next;
  }
  memset(a, 0, sizeof *a);
}

void plan_arena_reset(plan_arena *a) {
  run_defers(a);
  if (!a->head) return;
  plan_arena_chunk *keep = a->head, *c = keep->next;
  while (c) {
    plan_arena_chunk *next = c->next;
    free(c);
    c = next;
  }
  keep->next = NULL;
  a->used = 0;
  a->cap = keep->cap;
  a->total = keep->cap;
}

void plan_position(const char *sql, size_t off, char *buf, size_t cap) {
  int line = 1, col = 1;
  for (size_t i = 0; sql && i < off && sql[i]; i++) {
    unsigned char c = (unsigned char)sql[i];
    if (c == '\n') {
      line++;
      col = 1;
    } else if ((c & 0xC0) != 0x80) {
      col++;
    }
  }
  snprintf(buf, cap, " at line %d, column %d", line, col);
}
