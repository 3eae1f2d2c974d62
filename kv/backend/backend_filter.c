/*
** kv/backend/backend_filter.c: the serializable filter expression of the backend interface
** (kv/backend.h kv_filter_expr): its shape check, its evaluation on an assembled kv_row
** (SQL's three-valued logic: a row passes only when the root is TRUE), and its byte form
** for a backend across a process or network boundary (docs/BACKEND.md "The filter
** expression on the wire").
**
** Not here: the making of expressions from SQL filters (planner/), the local backend's
** operations (kv/backend/backend_local.c).
*/
#include <string.h>

#include "kv/backend.h"
#include "kv/util/cell.h"
#include "kv/util/coding.h"
#include "kv/util/status.h"

enum { FX_FALSE = 0, FX_TRUE = 1, FX_UNKNOWN = 2 };

static const char FX_MAGIC[4] = {'R', 'F', 'X', '1'};

/* Check the subtree at nodes[*i], advancing *i past it. */
static int check_node(const kv_filter_expr *e, uint32_t *i, uint32_t depth) {
  if (*i >= e->n_nodes)
    return kv_error(KV_ERR_INVALID, "filter expression: node %u is missing (%u nodes given)",
                    *i, e->n_nodes);
  if (depth > KV_FX_MAX_DEPTH)
    return kv_error(KV_ERR_INVALID, "filter expression: nested deeper than %u at node %u",
                    KV_FX_MAX_DEPTH, *i);
  const kv_fx_node *n = &e->nodes[*i];
  uint32_t at = (*i)++;
  switch (n->kind) {
    case KV_FX_AND:
    case KV_FX_OR:
    case KV_FX_NOT:
      if (n->n_children == 0 || (n->kind == KV_FX_NOT && n->n_children != 1))
        return kv_error(KV_ERR_INVALID, "filter expression: node %u (%s) has %u children",
                        at, n->kind == KV_FX_NOT ? "NOT" : n->kind == KV_FX_AND ? "AND" : "OR",
                        n->n_children);
      for (uint32_t c = 0; c < n->n_children; c++) {
        int rc = check_node(e, i, depth + 1);
        if (rc) return rc;
      }
      return KV_OK;
    case KV_FX_CMP:
      if (n->cmp > KV_FX_GE)
        return kv_error(KV_ERR_INVALID, "filter expression: node %u has unknown operator %u",
                        at, n->cmp);
      if (n->value_len && !n->value)
        return kv_error(KV_ERR_INVALID, "filter expression: node %u has no value bytes", at);
      /* fall through */
    case KV_FX_PRESENT:
      if (n->n_children)
        return kv_error(KV_ERR_INVALID, "filter expression: leaf node %u has children", at);
      if (n->qual_len && !n->qual)
        return kv_error(KV_ERR_INVALID, "filter expression: node %u has no qualifier bytes",
                        at);
      return KV_OK;
    default:
      return kv_error(KV_ERR_INVALID, "filter expression: node %u has unknown kind %u", at,
                      n->kind);
  }
}

int kv_filter_expr_check(const kv_filter_expr *e) {
  if (!e || !e->nodes || e->n_nodes == 0)
    return kv_error(KV_ERR_INVALID, "filter expression: no nodes");
  if (e->n_nodes > KV_FX_MAX_NODES)
    return kv_error(KV_ERR_INVALID, "filter expression: %u nodes, over the maximum of %u",
                    e->n_nodes, KV_FX_MAX_NODES);
  uint32_t i = 0;
  int rc = check_node(e, &i, 0);
  if (rc) return rc;
  if (i != e->n_nodes)
    return kv_error(KV_ERR_INVALID, "filter expression: nodes %u.. are outside the tree", i);
  return KV_OK;
}

/* The row's newest cell of (family, qual), or NULL. */
static const kv_cell_view *find_cell(const kv_row *row, const kv_fx_node *n) {
  for (uint32_t c = 0; c < row->n_cells; c++) {
    const kv_cell_view *v = &row->cells[c];
    if (v->family_id == n->family_id &&
        kv_bytes_cmp(v->qual, v->qual_len, n->qual, n->qual_len) == 0)
      return v;
  }
  return NULL;
}

static int eval_node(const kv_fx_node *nodes, uint32_t *i, const kv_row *row) {
  const kv_fx_node *n = &nodes[(*i)++];
  switch (n->kind) {
    case KV_FX_AND:
    case KV_FX_OR: {
      bool and = n->kind == KV_FX_AND;
      int r = and ? FX_TRUE : FX_FALSE;
      for (uint32_t c = 0; c < n->n_children; c++) { /* every child is walked (prefix order) */
        int v = eval_node(nodes, i, row);
        if (and ? v == FX_FALSE : v == FX_TRUE) r = v;
        else if (v == FX_UNKNOWN && r != (and ? FX_FALSE : FX_TRUE)) r = FX_UNKNOWN;
      }
      return r;
    }
    case KV_FX_NOT: {
      int v = eval_node(nodes, i, row);
      return v == FX_UNKNOWN ? FX_UNKNOWN : !v;
    }
    case KV_FX_PRESENT:
      return find_cell(row, n) ? FX_TRUE : FX_FALSE;
    default: { /* KV_FX_CMP (kv_filter_expr_check let nothing else through) */
      const kv_cell_view *v = find_cell(row, n);
      if (!v) return FX_UNKNOWN;
      int c = kv_bytes_cmp(v->value, v->value_len, n->value, n->value_len);
      switch (n->cmp) {
        case KV_FX_EQ: return c == 0;
        case KV_FX_NE: return c != 0;
        case KV_FX_LT: return c < 0;
        case KV_FX_LE: return c <= 0;
        case KV_FX_GT: return c > 0;
        default: return c >= 0;
      }
    }
  }
}

bool kv_filter_expr_eval(void *ctx, const kv_row *row) {
  const kv_filter_expr *e = ctx;
  uint32_t i = 0;
  return eval_node(e->nodes, &i, row) == FX_TRUE;
}

/* Append v (varint) or bytes at *at in buf[0..cap), counting past cap. */
static void put_varint(uint8_t *buf, size_t cap, size_t *at, uint64_t v) {
  uint8_t tmp[10];
  size_t n = (size_t)(kv_put_varint(tmp, v) - tmp);
  if (*at + n <= cap) memcpy(buf + *at, tmp, n);
  *at += n;
}
static void put_bytes(uint8_t *buf, size_t cap, size_t *at, const void *p, size_t n) {
  if (n && *at + n <= cap) memcpy(buf + *at, p, n);
  *at += n;
}

size_t kv_filter_expr_encode(const kv_filter_expr *e, uint8_t *buf, size_t cap) {
  size_t at = 0;
  put_bytes(buf, cap, &at, FX_MAGIC, sizeof FX_MAGIC);
  put_varint(buf, cap, &at, e->n_nodes);
  for (uint32_t i = 0; i < e->n_nodes; i++) {
    const kv_fx_node *n = &e->nodes[i];
    uint8_t head[2] = {n->kind, n->cmp};
    put_bytes(buf, cap, &at, head, 2);
    put_varint(buf, cap, &at, n->n_children);
    put_varint(buf, cap, &at, n->family_id);
    put_varint(buf, cap, &at, n->qual_len);
    put_bytes(buf, cap, &at, n->qual, n->qual_len);
    put_varint(buf, cap, &at, n->value_len);
    put_bytes(buf, cap, &at, n->value, n->value_len);
  }
  return at;
}

/* Read a varint at *p into *v no larger than max; false when truncated or too large. */
static bool get_u32(const uint8_t **p, const uint8_t *limit, uint64_t max, uint32_t *v) {
  uint64_t x;
  const uint8_t *q = kv_get_varint(*p, limit, &x);
  if (!q || x > max) return false;
  *p = q;
  *v = (uint32_t)x;
  return true;
}

int kv_filter_expr_decode(const uint8_t *p, size_t len, kv_fx_node *nodes, uint32_t cap,
                          kv_filter_expr *out) {
  const uint8_t *start = p, *limit = p + len;
  uint32_t n;
  if (len < sizeof FX_MAGIC || memcmp(p, FX_MAGIC, sizeof FX_MAGIC) != 0)
    return kv_error(KV_ERR_CORRUPT, "filter expression: no RFX1 magic at byte 0");
  p += sizeof FX_MAGIC;
  if (!get_u32(&p, limit, KV_FX_MAX_NODES, &n))
    return kv_error(KV_ERR_CORRUPT, "filter expression: bad node count at byte %zu",
                    (size_t)(p - start));
  if (n > cap)
    return kv_error(KV_ERR_TOOBIG, "filter expression: %u nodes, room for %u", n, cap);
  for (uint32_t i = 0; i < n; i++) {
    kv_fx_node *d = &nodes[i];
    uint32_t kids;
    memset(d, 0, sizeof *d);
    bool ok = limit - p >= 2;
    if (ok) {
      d->kind = p[0];
      d->cmp = p[1];
      p += 2;
    }
    ok = ok && get_u32(&p, limit, UINT16_MAX, &kids) &&
         get_u32(&p, limit, UINT32_MAX, &d->family_id) &&
         get_u32(&p, limit, KV_MAX_QUALIFIER, &d->qual_len) &&
         (size_t)(limit - p) >= d->qual_len;
    if (ok) {
      d->n_children = (uint16_t)kids;
      d->qual = p;
      p += d->qual_len;
      ok = get_u32(&p, limit, KV_MAX_VALUE, &d->value_len) &&
           (size_t)(limit - p) >= d->value_len;
    }
    if (!ok)
      return kv_error(KV_ERR_CORRUPT, "filter expression: node %u is cut short at byte %zu", i,
                      (size_t)(p - start));
    d->value = p;
    p += d->value_len;
  }
  if (p != limit)
    return kv_error(KV_ERR_CORRUPT, "filter expression: %zu bytes after the last node, at byte %zu",
                    (size_t)(limit - p), (size_t)(p - start));
  out->nodes = nodes;
  out->n_nodes = n;
  return kv_filter_expr_check(out);
}
