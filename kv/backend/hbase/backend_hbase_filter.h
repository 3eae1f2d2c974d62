/*
** kv/backend/hbase/backend_hbase_filter.h: a scan's server filter as a serialized protobuf
** `FilterProtos.Filter`, the form HBase's Thrift2 gateway takes in TScan.filterBytes (it hands
** the bytes to ProtobufUtil.toFilter). This route reaches filters that HBase 2.6.1's filter
** language (TScan.filterString) does not register, MultiRowRangeFilter above all.
**
** The messages are those of Filter.proto, Comparator.proto and HBase.proto inside the pinned
** hbase-protocol-shaded jar, compiled to C by protoc-c at build time (CMakeLists.txt).
**
** Not here: choosing when a scan takes this route, and checking rows on the client
** (backend_hbase_scan.c: the client checks ranges and the whole filter expression again).
*/
#ifndef ROWAN_KV_BACKEND_HBASE_FILTER_H
#define ROWAN_KV_BACKEND_HBASE_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kv/backend.h"

/* The families a filter expression may name: ids and their HBase family names (nf of each). */
typedef struct hbk_filter_fams {
  const uint32_t *ids;
  char *const *names;
  uint32_t nf;
} hbk_filter_fams;

/* Serialize, for TScan.filterBytes, the conjunction (FilterList MUST_PASS_ALL) of:
** - a MultiRowRangeFilter of ranges[0..nr) (none when nr is 0). The ranges are kv_range
**   bounds (NULL start/end: unbounded), sorted, disjoint and none empty; an end bound of
**   zero length is refused (KV_ERR_INVALID: HBase reads an empty stop row as "no end");
** - the part of fx that HBase can say exactly (fx NULL: none): each comparison or presence
**   a SingleColumnValueFilter (binary comparator, filterIfMissing, newest version only), AND
**   and OR as FilterLists MUST_PASS_ALL / MUST_PASS_ONE; NOT, and an OR with a child that
**   cannot be said, left out, while an AND keeps the children it can say (the string route's
**   rules: backend_hbase_scan.c translate()).
** A conjunction of one is that filter alone. On KV_OK *out is a malloc'd buffer of *out_len
** bytes the caller frees, or NULL when there is nothing to send; *with_value says whether
** fx contributed (a value filter needs the columns it reads in the scan). KV_ERR_NOMEM. */
int hbk_filter_pb(const kv_range *ranges, uint32_t nr, const kv_filter_expr *fx,
                  const hbk_filter_fams *fams, uint8_t **out, size_t *out_len,
                  bool *with_value);

#endif /* ROWAN_KV_BACKEND_HBASE_FILTER_H */
