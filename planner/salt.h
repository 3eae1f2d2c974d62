/*
** planner/salt.h: how EXPLAIN words the scan of a salted table (SALT_BUCKETS,
** catalog/salt.h), in Phoenix's terms: the bucket scans the executor opens
** (exec/salt_merge.h: one per bucket, a point lookup only in its key's bucket) as `CLIENT
** n-CHUNK PARALLEL n-WAY`, and the key bounds with the first and last bucket in front, as
** Phoenix prints the salt byte as the first key slot (`[0, 'a'] .. [3, 'a']`). The plan
** itself is the unsalted one: the executor adds the buckets. Not here: the scan
** (exec/salt_merge.c), the other EXPLAIN lines (planner/explain.c).
*/
#ifndef ROWAN_PLANNER_SALT_H
#define ROWAN_PLANNER_SALT_H

#include <stdbool.h>
#include <stddef.h>

#include "planner/plan.h"

/* For a scan of a salted table or salted index (not a degenerate scan): the bucket scans the
** executor opens (for a point lookup the distinct buckets of its keys, else every bucket).
** 0 for any other scan. */
int plan_salt_chunks(const plan_scan *sc);

/* The scan's key bounds text with the buckets in front (the first bound's bracket gets the
** first bucket, the last bound's the last: `[0, 'a'] .. [3, 'a']`), malloc'ed; NULL when the
** scan is not a salted table's range or skip scan, or out of memory. */
char *plan_salt_bounds(const plan_scan *sc);

/* kv_be_estimate of unsalted key range r (NULL: everything) of scan sc in family
** `family`: for a salted table's own rows the sum over the bucket parts of r (a point range
** only its bucket's), else kv_be_estimate itself. Returns a kv status. */
int plan_salt_estimate(kv_backend *be, const plan_scan *sc, uint32_t family, const kv_range *r,
                       const kv_estimate_opts *o, uint64_t *rows, uint64_t *bytes);

#endif /* ROWAN_PLANNER_SALT_H */
