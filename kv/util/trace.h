/*
** kv/util/trace.h: how kv/'s readers add to a block trace (kv_trace, kv/kv.h): the store-file
** iterator (kv/sf/sf_iter.c) adds each block it loads, the scan (kv/scan/scan.c) each key range it
** seeks, the columnar scan (kv/colscan/colscan.c) the blocks its workers read. Not a public header;
** the reading side of a trace is in kv/kv.h. Implementation: kv/util/trace.c.
*/
#ifndef ROWAN_KV_TRACE_H
#define ROWAN_KV_TRACE_H

#include <stdbool.h>
#include <stdint.h>

#include "kv/kv.h"

/* Record one load of block `block` of store file `file` (family fid); hit: it came from a
** cache. t NULL: nothing. Never fails (an allocation failure marks the trace lost). */
void kv_trace_add_block(kv_trace *t, uint32_t fid, uint64_t file, uint32_t block, bool hit);

/* Record one key range sought by a scan whose first family is fid: [start, end), a NULL
** bound open. The bytes are copied. t NULL: nothing. Never fails (as above). */
void kv_trace_add_range(kv_trace *t, uint32_t fid, const uint8_t *start, uint32_t start_len,
                        const uint8_t *end, uint32_t end_len);

#endif /* ROWAN_KV_TRACE_H */
