/*
** kv/util/mem.h: giving the allocator's free memory back to the system after the store's
** large transient work (a bulk load paging out its segments or committing, a flush, a
** compaction), so a process's resident memory follows what the store holds, not the most
** it ever held.
**
** Why: glibc's malloc serves a request past its mmap threshold from its own mapping only
** until the first such chunk is freed; from then on the threshold rises to that chunk's
** size (up to 32 MiB), so the multi-megabyte buffers of a load, a flush or a compaction
** come from the heap arenas (the main one and each thread's), where freed space between
** live chunks is kept, not returned. Measured (rowan_bench --profile synth, 25M rows, 256
** MiB bound): 490 MiB resident after the load, of which 58 MiB allocated; with a release
** after each page-out, 81 MiB resident and a peak of 305 MiB. malloc_trim(0) hands every
** whole free page of every arena back (madvise), so the next use faults it in again: the
** callers release where a phase of megabytes ends, not per request.
** Not here: what the store allocates or how much (each owner, and kv_bulk_options.run_bytes
** for a load); a process's allocator choice (another malloc makes this a no-op).
*/
#ifndef ROWAN_KV_UTIL_MEM_H
#define ROWAN_KV_UTIL_MEM_H

/* Return the C library allocator's whole free pages to the system: glibc's malloc_trim(0)
** where it is the allocator, nothing elsewhere. Thread-safe (glibc locks each arena in
** turn); costs a walk of the arenas' free chunks (well under a millisecond for a few
** hundred MiB of heap), so call it where a phase that freed megabytes ends. */
void kv_mem_release(void);

#endif /* ROWAN_KV_UTIL_MEM_H */
