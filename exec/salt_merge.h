/*
** exec/salt_merge.h: the scan of a salted table (SALT_BUCKETS, catalog/salt.h): one backend
** scan per salt bucket, each over the plan's key ranges with the bucket's byte in front
** (a point lookup only in the bucket of its key; no range: the whole bucket), merged back
** into the order of the unsalted keys, forward or reverse, as Phoenix's client MERGE SORT
** does. Rows come out with their stored (salted) key; the row decoder skips the salt byte.
**
** The merge is serial: it keeps one current row per bucket scan and hands out the smallest
** (the largest for a reverse scan), so each bucket's row stays valid until that bucket is
** advanced, at the next exec_salt_scan_next. A pushed limit is given to every bucket scan
** (the first n rows of the merge are among the first n of each bucket). A parallel scan's
** chunk opens the merge over its own run of buckets (exec/op_parallel.c). Not here: the plan
** (planner/), the decoding and the residual filter (exec/scan.c), the chunks' threads.
*/
#ifndef ROWAN_EXEC_SALT_MERGE_H
#define ROWAN_EXEC_SALT_MERGE_H

#include "exec/op.h"

typedef struct exec_salt_scan exec_salt_scan;

/* Open the bucket scans of a salted table (or salted index table) of `buckets` buckets
** (1..256): o is the scan as it would be without salt (its ranges the unsalted key ranges,
** none for a full scan); point: every range is one full key; [b_lo, b_hi): the buckets
** read (a parallel scan's chunk, exec/op_parallel.c), b_hi 0 for all of them. x as
** kv_be_scan_open's. *out
** is the merge (free with exec_salt_scan_close), NULL on error. Returns a kv status
** (KV_ERR_NOMEM, or the first bucket scan's failure). */
int exec_salt_scan_open(kv_backend *be, int buckets, const kv_scan_options *o,
                        const kv_backend_read *x, bool point, int b_lo, int b_hi,
                        exec_salt_scan **out);
/* The next row in key order: KV_OK with *row (valid until the next call), KV_ERR_NOTFOUND
** at the end, or a bucket scan's error. */
int exec_salt_scan_next(exec_salt_scan *m, kv_row *row);
/* The bucket scans opened (the chunks EXPLAIN ANALYZE counts). */
uint32_t exec_salt_scan_chunks(const exec_salt_scan *m);
/* Add the metrics of every bucket scan to *sum (zeroed by the caller). */
void exec_salt_scan_metrics(exec_salt_scan *m, kv_scan_metrics *sum);
/* Close every bucket scan and free m. NULL is a no-op. */
void exec_salt_scan_close(exec_salt_scan *m);

#endif /* ROWAN_EXEC_SALT_MERGE_H */
