/*
** kv/util/mem.c: kv_mem_release (kv/util/mem.h): glibc's malloc_trim where glibc's
** malloc is the allocator, and a count of the calls. Under AddressSanitizer or another
** malloc the call does nothing useful and costs little: it is made alike.
** Not here: when to call it (the store's phases that free megabytes).
*/
#include <stdatomic.h>
#include <stdlib.h> /* with glibc it defines __GLIBC__, tested below */

#include "kv/util/mem.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

static atomic_uint_fast64_t releases;

void kv_mem_release(void) {
  atomic_fetch_add_explicit(&releases, 1, memory_order_relaxed);
#if defined(__GLIBC__)
  (void)malloc_trim(0);
#endif
}

uint64_t kv_mem_releases(void) {
  return (uint64_t)atomic_load_explicit(&releases, memory_order_relaxed);
}
