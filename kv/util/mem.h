/*
** kv/util/mem.h: giving the allocator's free memory back to the system after the store's
** large transient work (a bulk load paging out its segments, and its end; a flush of a
** memstore of megabytes; a compaction), so a process's resident memory follows what the
** store holds, not the most it ever held.
**
** Why: glibc's malloc serves a request past its mmap threshold from its own mapping only
** until the first such chunk is freed; from then on the threshold rises to that chunk's
** size (up to 32 MiB), so the multi-megabyte buffers of a load, a flush or a compaction
** come from the heap arenas (the main one and each thread's), where freed space between
** live chunks is kept, not returned. Measured (rowan_bench --profile synth, 25M rows, 256
** MiB bound, twenty-third session): 490 MiB resident after the load, of which 58 MiB
** allocated; with the releases, 60-64 MiB resident and a peak of 282-285 MiB (506-512 before).
** malloc_trim(0) hands back the whole free pages inside every arena and the main arena's
** top; a thread arena's top is left to that arena's own trim threshold (glibc), so a few
** MiB to a few tens may stay. The next use faults the pages in again: callers release where
** a phase of megabytes ends, not per request.
** Not here: what the store allocates or how much (each owner, and kv_bulk_options.run_bytes
** for a load); a process's allocator choice (another malloc makes this a no-op).
*/
#ifndef ROWAN_KV_UTIL_MEM_H
#define ROWAN_KV_UTIL_MEM_H

#include <stdint.h>

/* Phases smaller than this (bytes) do not release: their buffers are reused, not left. */
#define KV_MEM_RELEASE_MIN ((uint64_t)4 << 20)

/* Return the C library allocator's whole free pages to the system: glibc's malloc_trim(0)
** where it is the allocator, nothing elsewhere. Thread-safe (glibc locks each arena in
** turn); costs a walk of the arenas' free chunks and an madvise per free stretch (not
** measured apart; a 100M-row load releasing every 64 MiB paged out ran at the same rate
** within the noise), so call it where a phase that freed megabytes ends, holding no lock. */
void kv_mem_release(void);

/* Releases made so far by this process (every call counts, whatever the allocator): for
** tests that check a phase released. */
uint64_t kv_mem_releases(void);

#endif /* ROWAN_KV_UTIL_MEM_H */
