/*
** exec/arena.h: a bump allocator for short-lived bytes of the executor: the text a scalar
** function returns (UPPER, SUBSTR, TO_CHAR, ||), row values copied out of a scan, scratch
** of one row. Allocation is a pointer bump inside the current chunk; a new chunk (doubling,
** at least the request) is taken from malloc only when the current one is full. Reset makes
** every allocation invalid at once and keeps the largest chunk for reuse, so a loop that
** resets per row allocates nothing from malloc after its first rows.
**
** Not here: freeing single allocations, thread safety (one arena belongs to one statement),
** the plan's own long-lived arena (planner/plan.h plan_arena).
*/
#ifndef ROWAN_EXEC_ARENA_H
#define ROWAN_EXEC_ARENA_H

#include <stddef.h>
#include <stdint.h>

typedef struct exec_arena_chunk exec_arena_chunk;

typedef struct exec_arena {
  exec_arena_chunk *head;  /* current chunk (newest); older chunks linked behind it */
  size_t used;             /* bytes used in head */
  size_t cap;              /* bytes available in head */
  size_t total;            /* bytes held in all chunks (malloc'd) */
  size_t limit;            /* most bytes this arena may hold; 0 = no limit */
} exec_arena;

/* Initialize an empty arena (allocates nothing). */
void exec_arena_init(exec_arena *a);

/* n bytes (not zeroed) aligned to 16, valid until the next exec_arena_reset or
** exec_arena_free. n == 0 returns a valid non-NULL pointer. Returns NULL when malloc fails
** or the arena would exceed its limit (then the arena is unchanged). */
void *exec_arena_alloc(exec_arena *a, size_t n);

/* A copy of p[0..n) followed by a NUL byte (not counted in n); NULL as exec_arena_alloc. */
void *exec_arena_copy(exec_arena *a, const void *p, size_t n);

/* Forget every allocation; keep the largest chunk (total becomes its size) and free the
** others. Pointers handed out before are invalid afterwards. */
void exec_arena_reset(exec_arena *a);

/* Free every chunk; the arena is empty (as after exec_arena_init, limit kept) and usable. */
void exec_arena_free(exec_arena *a);

/* A memory size for a message, in the largest unit that states it exactly: "16 KiB",
** "256 MiB", "1000 bytes", into buf (NUL-terminated, truncated to cap). */
void exec_mem_text(size_t bytes, char *buf, size_t cap);

#endif /* ROWAN_EXEC_ARENA_H */
