/*
** exec/arena.c: the executor's bump allocator (exec/arena.h). Chunks come from malloc,
** each at least twice the previous one (from 4 KiB) and at least the request; reset keeps
** only the largest chunk so per-row scratch settles into one reused block. Not here: any
** notion of object lifetimes shorter than a reset.
*/
#include "exec/arena.h"

#include <stdbool.h>
#include <stdio.h>

#include <stdlib.h>
#include <string.h>

#define ARENA_ALIGN 16
#define ARENA_FIRST 4096

struct exec_arena_chunk {
  exec_arena_chunk *next;  /* older chunk */
  size_t size;             /* bytes of data[] */
  _Alignas(16) unsigned char data[]; /* the bytes handed out */
};

void exec_arena_init(exec_arena *a) { memset(a, 0, sizeof *a); }

static size_t round_up(size_t n) { return (n + (ARENA_ALIGN - 1)) & ~(size_t)(ARENA_ALIGN - 1); }

void *exec_arena_alloc(exec_arena *a, size_t n) {
  size_t need = round_up(n ? n : 1);
  if (need < n) return NULL; /* overflow */
  if (a->head && a->cap - a->used >= need) {
    void *p = a->head->data + a->used;
    a->used += need;
    return p;
  }
  size_t size = a->head ? a->head->size * 2 : ARENA_FIRST;
  if (size < need) size = need;
  if (a->limit && a->total + size > a->limit) {
    if (a->total + need > a->limit) return NULL;
    size = need;
  }
  exec_arena_chunk *c = malloc(sizeof *c + size);
  if (!c) return NULL;
  c->next = a->head;
  c->size = size;
  a->head = c;
  a->cap = size;
  a->used = need;
  a->total += size;
  return c->data;
}

void *exec_arena_copy(exec_arena *a, const void *p, size_t n) {
  unsigned char *d = exec_arena_alloc(a, n + 1);
  if (!d) return NULL;
  if (n) memcpy(d, p, n);
  d[n] = 0;
  return d;
}

void exec_arena_reset(exec_arena *a) {
  exec_arena_chunk *keep = NULL;
  for (exec_arena_chunk *c = a->head; c;) {
    exec_arena_chunk *next = c->next;
    if (!keep || c->size > keep->size) {
      if (keep) free(keep);
      keep = c;
    } else {
      free(c);
    }
    c = next;
  }
  a->head = keep;
  a->used = 0;
  a->cap = keep ? keep->size : 0;
  a->total = a->cap;
  if (keep) keep->next = NULL;
}

void exec_arena_free(exec_arena *a) {
  for (exec_arena_chunk *c = a->head; c;) {
    exec_arena_chunk *next = c->next;
    free(c);
    c = next;
  }
  size_t limit = a->limit;
  exec_arena_init(a);
  a->limit = limit;
}

void exec_mem_text(size_t bytes, char *buf, size_t cap) {
  bool mib = bytes >= (1u << 20) && !(bytes & ((1u << 20) - 1)), kib = !mib && !(bytes & 1023);
  snprintf(buf, cap, "%zu %s", mib ? bytes >> 20 : kib ? bytes >> 10 : bytes,
           mib ? "MiB" : kib ? "KiB" : "bytes");
}
