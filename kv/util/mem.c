/*
** kv/util/mem.c: kv_mem_release (kv/util/mem.h): glibc's malloc_trim where glibc's
** malloc is the allocator. Under AddressSanitizer or another malloc the call does nothing
** useful and costs little: it is made alike.
** Not here: when to call it (the store's phases that free megabytes).
*/
#include <stdlib.h> /* first: with glibc it defines __GLIBC__ (features.h) */

#include "kv/util/mem.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

void kv_mem_release(void) {
#if defined(__GLIBC__)
  (void)malloc_trim(0);
#endif
}
