/*
** kv/backend/hbase/backend_hbase_filter.c: a scan's server filter serialized as HBase's
** protobuf `FilterProtos.Filter` for TScan.filterBytes (backend_hbase_filter.h).
**
** A Filter message is a Java class name and that class's own message, serialized into bytes
** (ProtobufUtil.toFilter calls the class's parseFrom on them); a FilterList holds its
** children as Filter messages. So each filter is built bottom up: its message packed, then
** wrapped in a Filter naming its class. The messages come from protoc-c's C of the jar's
** .proto files (Filter.pb-c.h and what it includes, generated at build time), packed by
** libprotobuf-c; nothing here writes protobuf's wire format by hand.
**
** Used: MultiRowRangeFilter (row ranges with inclusive flags; HBase sorts and merges them and
** seeks from one to the next), SingleColumnValueFilter with a BinaryComparator, FilterList.
** Not here: when a scan uses this (backend_hbase_scan.c), the filter language's string form
** (backend_hbase_scan.c translate(), which this file follows node for node).
*/
#include "kv/backend/hbase/backend_hbase_filter.h"

#include <stdlib.h>
#include <string.h>

#include "Filter.pb-c.h"
#include "kv/util/status.h"

#define HB_FILTER_PKG "org.apache.hadoop.hbase.filter."

static const char FILTER_LIST[] = HB_FILTER_PKG "FilterList";
static const char MULTI_ROW_RANGE[] = HB_FILTER_PKG "MultiRowRangeFilter";
static const char SINGLE_COLUMN_VALUE[] = HB_FILTER_PKG "SingleColumnValueFilter";
static const char BINARY_COMPARATOR[] = HB_FILTER_PKG "BinaryComparator";

static uint8_t no_bytes[1]; /* the data of an empty byte string (never NULL) */

typedef struct pctx {
  const hbk_filter_fams *fams;
  bool oom;
} pctx;

/* m packed into a malloc'd buffer (*n bytes), or NULL (out of memory). */
static uint8_t *pack(const ProtobufCMessage *m, size_t *n) {
  *n = protobuf_c_message_get_packed_size(m);
  uint8_t *p = malloc(*n ? *n : 1);
  if (p) protobuf_c_message_pack(m, p);
  return p;
}

/* A Filter of class `name` whose message is m; NULL when out of memory (c->oom set). */
static Hbase__Pb__Filter *wrap(pctx *c, const char *name, const ProtobufCMessage *m) {
  size_t n = 0;
  uint8_t *p = pack(m, &n);
  Hbase__Pb__Filter *f = malloc(sizeof *f);
  if (!p || !f) {
    free(p);
    free(f);
    c->oom = true;
    return NULL;
  }
  hbase__pb__filter__init(f);
  f->name = (char *)name;
  f->has_serialized_filter = 1;
  f->serialized_filter = (ProtobufCBinaryData){n, p};
  return f;
}

static void filter_free(Hbase__Pb__Filter *f) {
  if (!f) return;
  free(f->serialized_filter.data);
  free(f);
}

/* A FilterList of kids[0..n) (freed here, whatever happens); n == 1: that filter alone. */
static Hbase__Pb__Filter *list_of(pctx *c, Hbase__Pb__FilterList__Operator op,
                                  Hbase__Pb__Filter **kids, size_t n) {
  if (n == 1) return kids[0];
  Hbase__Pb__FilterList l;
  hbase__pb__filter_list__init(&l);
  l.operator_ = op;
  l.n_filters = n;
  l.filters = kids;
  Hbase__Pb__Filter *f = wrap(c, FILTER_LIST, &l.base);
  for (size_t i = 0; i < n; i++) filter_free(kids[i]);
  return f;
}

static ProtobufCBinaryData bin(const uint8_t *p, size_t n) {
  return (ProtobufCBinaryData){n, n ? (uint8_t *)p : no_bytes};
}

/* The MultiRowRangeFilter of the ranges; NULL with c->oom, or for a bad range (an empty end
** bound: *bad set). */
static Hbase__Pb__Filter *row_ranges(pctx *c, const kv_range *r, uint32_t nr, uint32_t *bad) {
  Hbase__Pb__RowRange *rr = calloc(nr, sizeof *rr);
  Hbase__Pb__RowRange **rp = calloc(nr, sizeof *rp);
  Hbase__Pb__Filter *f = NULL;
  if (!rr || !rp) {
    c->oom = true;
    goto out;
  }
  for (uint32_t i = 0; i < nr; i++) {
    if (r[i].end && !r[i].end_len) {
      *bad = i;
      goto out;
    }
    hbase__pb__row_range__init(&rr[i]);
    rr[i].has_start_row_inclusive = rr[i].has_stop_row_inclusive = 1;
    rr[i].start_row_inclusive = r[i].start ? r[i].start_inclusive : 1;
    rr[i].stop_row_inclusive = r[i].end ? r[i].end_inclusive : 0;
    rr[i].has_start_row = rr[i].has_stop_row = 1; /* empty: no bound (HBase's rule) */
    rr[i].start_row = bin(r[i].start, r[i].start ? r[i].start_len : 0);
    rr[i].stop_row = bin(r[i].end, r[i].end ? r[i].end_len : 0);
    rp[i] = &rr[i];
  }
  Hbase__Pb__MultiRowRangeFilter m;
  hbase__pb__multi_row_range_filter__init(&m);
  m.n_row_range_list = nr;
  m.row_range_list = rp;
  f = wrap(c, MULTI_ROW_RANGE, &m.base);
out:
  free(rr);
  free(rp);
  return f;
}

/* A comparison (or, cmp < 0, a presence: the value >= the empty string) of one column. */
static Hbase__Pb__Filter *column_value(pctx *c, const char *fam, const kv_fx_node *nd) {
  static const Hbase__Pb__CompareType ops[] = {
      HBASE__PB__COMPARE_TYPE__EQUAL,         HBASE__PB__COMPARE_TYPE__NOT_EQUAL,
      HBASE__PB__COMPARE_TYPE__LESS,          HBASE__PB__COMPARE_TYPE__LESS_OR_EQUAL,
      HBASE__PB__COMPARE_TYPE__GREATER,       HBASE__PB__COMPARE_TYPE__GREATER_OR_EQUAL};
  bool present = nd->kind == KV_FX_PRESENT;
  Hbase__Pb__ByteArrayComparable v;
  hbase__pb__byte_array_comparable__init(&v);
  v.has_value = 1;
  v.value = present ? bin(NULL, 0) : bin(nd->value, nd->value_len);
  Hbase__Pb__BinaryComparator bc;
  hbase__pb__binary_comparator__init(&bc);
  bc.comparable = &v;
  size_t n = 0;
  uint8_t *bcp = pack(&bc.base, &n);
  if (!bcp) {
    c->oom = true;
    return NULL;
  }
  Hbase__Pb__Comparator cmp;
  hbase__pb__comparator__init(&cmp);
  cmp.name = (char *)BINARY_COMPARATOR;
  cmp.has_serialized_comparator = 1;
  cmp.serialized_comparator = (ProtobufCBinaryData){n, bcp};
  Hbase__Pb__SingleColumnValueFilter s;
  hbase__pb__single_column_value_filter__init(&s);
  s.has_column_family = s.has_column_qualifier = 1;
  s.column_family = bin((const uint8_t *)fam, strlen(fam));
  s.column_qualifier = bin(nd->qual, nd->qual_len);
  s.compare_op = present ? HBASE__PB__COMPARE_TYPE__GREATER_OR_EQUAL : ops[nd->cmp];
  s.comparator = &cmp;
  s.has_filter_if_missing = s.filter_if_missing = 1;   /* missing: UNKNOWN, rejects */
  s.has_latest_version_only = s.latest_version_only = 1;
  Hbase__Pb__Filter *f = wrap(c, SINGLE_COLUMN_VALUE, &s.base);
  free(bcp);
  return f;
}

static void skip(const kv_filter_expr *e, uint32_t *at) {
  const kv_fx_node *nd = &e->nodes[(*at)++];
  for (uint16_t i = 0; i < nd->n_children; i++) skip(e, at);
}

static const char *fam_name(const hbk_filter_fams *f, uint32_t id) {
  for (uint32_t i = 0; i < f->nf; i++)
    if (f->ids[i] == id) return f->names[i];
  return NULL;
}

/* The subtree at e->nodes[*at] (moving *at past it), or NULL when HBase cannot say it exactly
** or memory ran out (c->oom). */
static Hbase__Pb__Filter *expr(pctx *c, const kv_filter_expr *e, uint32_t *at) {
  const kv_fx_node *nd = &e->nodes[*at];
  if (nd->kind == KV_FX_CMP || nd->kind == KV_FX_PRESENT) {
    (*at)++;
    const char *f = fam_name(c->fams, nd->family_id);
    if (!f || (nd->kind == KV_FX_CMP && nd->cmp > KV_FX_GE)) return NULL;
    return column_value(c, f, nd);
  }
  if (nd->kind != KV_FX_AND && nd->kind != KV_FX_OR) { /* NOT */
    skip(e, at);
    return NULL;
  }
  (*at)++;
  bool is_and = nd->kind == KV_FX_AND;
  Hbase__Pb__Filter **kids = calloc(nd->n_children, sizeof *kids);
  size_t w = 0;
  uint16_t i = 0;
  if (!kids) c->oom = true;
  for (; i < nd->n_children && kids && !c->oom; i++) {
    Hbase__Pb__Filter *k = expr(c, e, at);
    if (k) {
      kids[w++] = k;
    } else if (!is_and) { /* an OR is said whole or not at all */
      i++;
      break;
    }
  }
  for (; i < nd->n_children; i++) skip(e, at);
  Hbase__Pb__Filter *f = NULL;
  if (kids && !c->oom && w && (is_and || w == nd->n_children)) {
    f = list_of(c, is_and ? HBASE__PB__FILTER_LIST__OPERATOR__MUST_PASS_ALL
                          : HBASE__PB__FILTER_LIST__OPERATOR__MUST_PASS_ONE, kids, w);
    w = 0;
  }
  for (size_t k = 0; k < w; k++) filter_free(kids[k]);
  free(kids);
  return f;
}

int hbk_filter_pb(const kv_range *ranges, uint32_t nr, const kv_filter_expr *fx,
                  const hbk_filter_fams *fams, uint8_t **out, size_t *out_len,
                  bool *with_value) {
  *out = NULL;
  *out_len = 0;
  *with_value = false;
  pctx c = {fams, false};
  Hbase__Pb__Filter *parts[2];
  size_t np = 0;
  uint32_t bad = UINT32_MAX;
  if (nr) {
    Hbase__Pb__Filter *f = row_ranges(&c, ranges, nr, &bad);
    if (bad != UINT32_MAX)
      return kv_error(KV_ERR_INVALID, "hbase: row range %u of a server filter has an empty "
                                      "end key (HBase reads it as no end)", bad);
    if (!f) return kv_error(KV_ERR_NOMEM, "hbase: out of memory");
    parts[np++] = f;
  }
  if (fx && fx->n_nodes) {
    uint32_t at = 0;
    Hbase__Pb__Filter *f = expr(&c, fx, &at);
    if (f) {
      parts[np++] = f;
      *with_value = true;
    }
  }
  Hbase__Pb__Filter *top = NULL;
  if (np && !c.oom) top = list_of(&c, HBASE__PB__FILTER_LIST__OPERATOR__MUST_PASS_ALL, parts, np);
  else
    for (size_t i = 0; i < np; i++) filter_free(parts[i]);
  if (c.oom) {
    filter_free(top);
    *with_value = false;
    return kv_error(KV_ERR_NOMEM, "hbase: out of memory");
  }
  if (!top) return KV_OK;
  *out = pack(&top->base, out_len);
  filter_free(top);
  if (!*out) {
    *with_value = false;
    return kv_error(KV_ERR_NOMEM, "hbase: out of memory");
  }
  return KV_OK;
}
