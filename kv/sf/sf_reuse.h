/*
** kv/sf/sf_reuse.h: read-path helpers kv/scan/scan.c uses beyond kv/sf/sf.h: recycling store file
** iterators (kv/sf/sf_iter.c) from one scan to the next, so a point lookup that opens a scan
** per call does not allocate an iterator and its buffers each time (kv/scan/scan.c keeps the
** iterators of a closed scan with the scan's shell).
** Not here: the iterator itself (kv/sf/sf.h).
*/
#ifndef ROWAN_KV_SF_REUSE_H
#define ROWAN_KV_SF_REUSE_H

#include <stdbool.h>
#include "kv/sf/sf.h"

/* Let go of what a store file iterator reads (its cached block, its file) and keep its
** buffers (large ones are freed). `it` must come from kv_sf_iter_new or
** kv_sf_iter_new_opts; afterwards only kv_sf_iter_retarget or destroy may be called on it. */
void kv_sf_iter_park(kv_iter *it);
/* Make a parked iterator a new iterator over reader r, as kv_sf_iter_new_opts(r, io,
** fill_cache) would (no projection), keeping its buffers. Returns it. */
kv_iter *kv_sf_iter_retarget(kv_iter *it, kv_sf_reader *r, kv_sf_io *io, bool fill_cache);

#endif /* ROWAN_KV_SF_REUSE_H */
