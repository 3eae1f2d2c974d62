/*
** exec/op_colagg_group.c: GROUP BY for the columnar aggregate pushdown (exec/colagg.h,
** exec/colagg_int.h). Each chunk keeps its groups in an exec_rowset (a run of rows of one
** group finds it with one comparison) and in the order it found them, with the least row key
** seen for each; the group key of a row is decoded from its row key (catalog/keycodec.h) and
** rounded where the term is a date rounding (exec_fn_date_round, the row path's own fast
** GROUP BY evaluation). A row whose key begins with the encoded key columns the last group
** was found from (the same bytes: the same values) is of that group without a decode (a
** group key run); so is a row whose last column read is a TIMESTAMP rounded by every term on
** it, when its encoding lies in the span of encodings rounding to the group's values (a
** station's hours of one day, found by two comparisons each). Chunks merge in key order;
** the groups are then ordered by their first row key, which is the order the row path meets
** them in, so the caller hands them on (hash table or stream) exactly as the row path would
** have built them.
** Not here: the scan and the consumer (exec/op_colagg.c), HAVING and projection
** (exec/op_query.c).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/keycodec.h"
#include "exec/agg.h"
#include "exec/colagg_int.h"
#include "exec/eval.h"

static int cg_oom(char *msg, size_t cap) {
  snprintf(msg, cap, "out of memory");
  return EXEC_NOMEM;
}

static int key_cmp(const uint8_t *a, uint32_t an, const uint8_t *b, uint32_t bn) {
  uint32_t m = an < bn ? an : bn;
  int c = m ? memcmp(a, b, m) : 0;
  return c ? c : (an > bn) - (an < bn);
}

/* Record a new group r (first key key[0..len)) at the end of g's order. */
static int add_order(exec_cg *g, exec_mrow *r, const uint8_t *key, uint32_t len) {
  if (g->n == g->cap) {
    size_t nc = g->cap ? g->cap * 2 : 64;
    exec_mrow **no = realloc(g->ord, nc * sizeof *no);
    if (!no) return EXEC_NOMEM;
    g->ord = no;
    uint8_t **nk = realloc(g->fk, nc * sizeof *nk);
    if (!nk) return EXEC_NOMEM;
    g->fk = nk;
    uint32_t *nl = realloc(g->fkl, nc * sizeof *nl);
    if (!nl) return EXEC_NOMEM;
    g->fkl = nl;
    g->cap = nc;
  }
  uint8_t *k = malloc(len ? len : 1);
  if (!k) return EXEC_NOMEM;
  if (len) memcpy(k, key, len);
  g->ord[g->n] = r;
  g->fk[g->n] = k;
  g->fkl[g->n] = len;
  g->n++;
  return EXEC_OK;
}

/* The position of group r in g's order: kept as a value after the group key (the rows are
** keyed by the first n_group values only). */
static size_t order_of(const exec_cg *g, const exec_mrow *r) {
  return (size_t)r->v[g->sh->n_group].u.i;
}

static void init_aggs(const exec_cg_shape *sh, exec_mrow *r) {
  for (int i = 0; i < sh->s->n_aggs; i++) {
    const plan_agg *a = &sh->s->aggs[i];
    cat_type at = a->arg ? a->arg->type : cat_type_of(0);
    exec_agg_init(&r->aggs[i], a->func, a->distinct, &at, &a->type);
  }
}

/* The group key values of the terms on key column `pos` (value v, of that column) into gk;
** EXEC_OK or the rounding's error. */
static int terms_of(exec_cg *g, int pos, const cat_value *v, cat_value *gk, char *msg,
                    size_t cap) {
  const exec_cg_shape *sh = g->sh;
  for (int i = 0; i < sh->n_group; i++) {
    if (sh->kpos[i] != pos) continue;
    cat_value x = *v;
    x.type = sh->ktype[i]; /* the column's own type (length, scale) */
    if (sh->round[i]) {
      exec_func_ctx fc = {&g->arena, sh->now_us, msg, cap};
      int rc = exec_fn_date_round(sh->round[i], &x, &gk[i], &fc);
      if (rc) return rc;
    } else {
      gk[i] = x;
    }
  }
  return EXEC_OK;
}

static bool same_value(const cat_value *a, const cat_value *b) {
  if (a->is_null || b->is_null) return a->is_null && b->is_null;
  return exec_value_cmp(a, b) == 0;
}

static int corrupt_key(const exec_cg *g, char *msg, size_t cap) {
  snprintf(msg, cap, "row key of %s does not decode", g->sh->t->name);
  return EXEC_CORRUPT;
}

/* Keep in g the span of encodings of the last key column read whose terms give the group
** g->last's values: every term on that column a TIMESTAMP rounding of a TIMESTAMP column, the
** span the intersection of theirs (exec_fn_date_round_span). None (span_w 0) otherwise. */
static void set_span(exec_cg *g, const cat_key_col *col, int last) {
  const exec_cg_shape *sh = g->sh;
  int64_t lo = CAT_TS_MIN, hi = CAT_TS_MAX;
  g->span_w = 0;
  if (col->type.id != CAT_T_TIMESTAMP) return;
  for (int i = 0; i < sh->n_group; i++) {
    if (sh->kpos[i] != last) continue;
    const cat_value *v = &g->last->v[i];
    int64_t l, h;
    if (!sh->round[i] || v->is_null || !exec_fn_date_round_span(sh->round[i], v->u.i, &l, &h))
      return;
    if (l > lo) lo = l;
    if (h < hi) hi = h;
  }
  if (lo > hi) return;
  size_t nl = 0, nh = 0;
  cat_error ce;
  cat_value a = cat_v_int(CAT_T_TIMESTAMP, lo), b = cat_v_int(CAT_T_TIMESTAMP, hi);
  if (cat_key_encode_col(col, &a, g->span_lo, sizeof g->span_lo, &nl, &ce) != CAT_OK ||
      cat_key_encode_col(col, &b, g->span_hi, sizeof g->span_hi, &nh, &ce) != CAT_OK || nl != nh)
    return;
  if (col->desc) { /* inverted bytes: the greater value has the lesser encoding */
    uint8_t t[sizeof g->span_lo];
    memcpy(t, g->span_lo, nl);
    memcpy(g->span_lo, g->span_hi, nl);
    memcpy(g->span_hi, t, nl);
  }
  g->span_w = (uint32_t)nl;
}

int exec_cg_find(exec_cg *g, const uint8_t *key, uint32_t len, bool lower, exec_agg **acc,
                 char *msg, size_t cap) {
  const exec_cg_shape *sh = g->sh;
  const cat_key_col *kc = sh->t->key_cols;
  int last = sh->kcols - 1; /* the last key column a term reads */
  *acc = NULL;
  if (len > g->scratch_cap) {
    uint8_t *ns = realloc(g->scratch, len);
    if (!ns) return cg_oom(msg, cap);
    g->scratch = ns;
    g->scratch_cap = len;
  }
  cat_value kv[64];
  cat_value gk[PLAN_COLAGG_MAX_GROUP + 1]; /* the key, then the order position */
  const uint8_t *end = NULL;
  cat_error ce;
  exec_mrow *r = NULL;
  bool have_gk = false; /* gk holds the row's group key (a run of one group ended) */
  uint32_t plen = 0;    /* the bytes of the key columns before the last one */
  int rc;
  if (sh->kcols > 64) return corrupt_key(g, msg, cap);
  /* a group key run: the bytes of the key columns the terms read are the last group's (the
     key encodings delimit themselves, so the same bytes are the same values): no decoding */
  if (g->last && g->gpre_len && len >= g->gpre_len && (!g->gpre_all || len == g->gpre_len) &&
      memcmp(key, g->gpre, g->gpre_len) == 0) {
    r = g->last;
    goto found;
  }
  /* the last group's span: the columns before the last one have its bytes and the last one's
     encoding lies between the least and greatest that give its values (a fixed width:
     lexicographic order between them is the values' order) */
  if (exec_cg_in_span(g, key, len)) {
    r = g->last;
    goto found;
  }
  /* a run of one group: the columns before the last one have the last row's bytes, so only
     the last column's terms are computed and compared */
  if (g->last && len >= g->lpre_len && (!g->lpre_len || memcmp(key, g->lpre, g->lpre_len) == 0)) {
    if (cat_key_decode(&kc[last], 1, key + g->lpre_len, key + len, &kv[0], g->scratch,
                       g->scratch_cap, &end, &ce) != CAT_OK)
      return corrupt_key(g, msg, cap);
    for (int i = 0; i < sh->n_group; i++) gk[i] = g->last->v[i];
    rc = terms_of(g, last, &kv[0], gk, msg, cap);
    if (rc) return rc;
    bool same = true;
    for (int i = 0; i < sh->n_group && same; i++)
      if (sh->kpos[i] == last) same = same_value(&gk[i], &g->last->v[i]);
    if (same) {
      exec_arena_reset(&g->arena);
      r = g->last;
    } else { /* another group: gk is its key (the earlier columns' values are the last's) */
      have_gk = true;
      plen = g->lpre_len;
    }
  }
  if (!r) {
    if (!have_gk) {
      const uint8_t *p = key;
      if (last > 0 && cat_key_decode(kc, last, key, key + len, kv, g->scratch, g->scratch_cap,
                                     &p, &ce) != CAT_OK)
        return corrupt_key(g, msg, cap);
      plen = (uint32_t)(p - key);
      if (cat_key_decode(&kc[last], 1, p, key + len, &kv[last], g->scratch + plen,
                         g->scratch_cap - plen, &end, &ce) != CAT_OK)
        return corrupt_key(g, msg, cap);
      for (int c = 0; c <= last; c++) {
        rc = terms_of(g, c, &kv[c], gk, msg, cap);
        if (rc) return rc;
      }
    }
    bool added = false, oom = false;
    gk[sh->n_group] = cat_v_int(CAT_T_BIGINT, (int64_t)g->n); /* its position, if new */
    r = exec_rowset_find(&g->set, gk, sh->n_group + 1, sh->s->n_aggs, true, &added, &oom);
    exec_arena_reset(&g->arena);
    if (!r) return cg_oom(msg, cap);
    if (added) {
      init_aggs(sh, r);
      if (add_order(g, r, key, len)) return cg_oom(msg, cap);
    }
    if (plen > g->lpre_cap) {
      uint8_t *nb = realloc(g->lpre, plen);
      if (!nb) return cg_oom(msg, cap);
      g->lpre = nb;
      g->lpre_cap = plen;
    }
    if (plen) memcpy(g->lpre, key, plen);
    g->lpre_len = plen;
    g->last = r;
    set_span(g, &kc[last], last);
  }
  /* the bytes up to the end of the last column decoded, for the next row's run check */
  uint32_t glen = (uint32_t)(end - key);
  if (glen > g->gpre_cap) {
    uint8_t *nb = realloc(g->gpre, glen);
    if (!nb) return cg_oom(msg, cap);
    g->gpre = nb;
    g->gpre_cap = glen;
  }
  if (glen) memcpy(g->gpre, key, glen);
  g->gpre_len = glen;
  g->gpre_all = glen == len;
found:
  if (lower) {
    size_t i = order_of(g, r);
    if (key_cmp(key, len, g->fk[i], g->fkl[i]) < 0) {
      uint8_t *k = malloc(len ? len : 1);
      if (!k) return cg_oom(msg, cap);
      if (len) memcpy(k, key, len);
      free(g->fk[i]);
      g->fk[i] = k;
      g->fkl[i] = len;
    }
  }
  *acc = r->aggs;
  return EXEC_OK;
}

int exec_cg_merge(exec_cg *g, exec_cg *from, char *msg, size_t cap) {
  int n_aggs = g->sh->s->n_aggs;
  for (size_t k = 0; k < from->n; k++) {
    exec_mrow *f = from->ord[k];
    bool added = false, oom = false;
    f->v[g->sh->n_group] = cat_v_int(CAT_T_BIGINT, (int64_t)g->n); /* its position in g */
    exec_mrow *r = exec_rowset_find(&g->set, f->v, g->sh->n_group + 1, n_aggs, true, &added, &oom);
    if (!r) return cg_oom(msg, cap);
    if (added) {
      init_aggs(g->sh, r);
      if (add_order(g, r, from->fk[k], from->fkl[k])) return cg_oom(msg, cap);
    } else {
      size_t i = order_of(g, r);
      if (key_cmp(from->fk[k], from->fkl[k], g->fk[i], g->fkl[i]) < 0) { /* swap keys */
        uint8_t *t = g->fk[i];
        uint32_t tl = g->fkl[i];
        g->fk[i] = from->fk[k];
        g->fkl[i] = from->fkl[k];
        from->fk[k] = t;
        from->fkl[k] = tl;
      }
    }
    for (int a = 0; a < n_aggs; a++) {
      int rc = exec_agg_merge(&r->aggs[a], &f->aggs[a], msg, cap);
      if (rc) return rc; /* EXEC_CONSTRAINT, or EXEC_NOMEM (a double sum's wide digits) */
    }
  }
  return EXEC_OK;
}

static int by_first_key(const void *a, const void *b, void *ctx) {
  const exec_cg *g = ctx;
  size_t i = *(const size_t *)a, j = *(const size_t *)b;
  return key_cmp(g->fk[i], g->fkl[i], g->fk[j], g->fkl[j]);
}

void exec_cg_sort(exec_cg *g) {
  bool sorted = true;
  for (size_t i = 1; i < g->n && sorted; i++)
    sorted = key_cmp(g->fk[i - 1], g->fkl[i - 1], g->fk[i], g->fkl[i]) < 0;
  if (sorted) return;
  size_t *ix = malloc(g->n * sizeof *ix);
  exec_mrow **no = malloc(g->n * sizeof *no);
  uint8_t **nk = malloc(g->n * sizeof *nk);
  uint32_t *nl = malloc(g->n * sizeof *nl);
  if (ix && no && nk && nl) {
    for (size_t i = 0; i < g->n; i++) ix[i] = i;
    qsort_r(ix, g->n, sizeof *ix, by_first_key, g);
    for (size_t i = 0; i < g->n; i++) {
      no[i] = g->ord[ix[i]];
      nk[i] = g->fk[ix[i]];
      nl[i] = g->fkl[ix[i]];
    }
    free(g->ord);
    free(g->fk);
    free(g->fkl);
    g->ord = no;
    g->fk = nk;
    g->fkl = nl;
    no = NULL;
    nk = NULL;
    nl = NULL;
  } else { /* no memory for the indexes: sort in place, slowly (an insertion sort) */
    for (size_t i = 1; i < g->n; i++)
      for (size_t j = i; j > 0 && key_cmp(g->fk[j - 1], g->fkl[j - 1], g->fk[j], g->fkl[j]) > 0; j--) {
        exec_mrow *t = g->ord[j]; g->ord[j] = g->ord[j - 1]; g->ord[j - 1] = t;
        uint8_t *k = g->fk[j]; g->fk[j] = g->fk[j - 1]; g->fk[j - 1] = k;
        uint32_t l = g->fkl[j]; g->fkl[j] = g->fkl[j - 1]; g->fkl[j - 1] = l;
      }
  }
  free(ix);
  free(no);
  free(nk);
  free(nl);
}

void exec_cg_free(exec_cg *g) {
  int n_aggs = g->sh ? g->sh->s->n_aggs : 0;
  for (size_t i = 0; i < g->n; i++) {
    for (int a = 0; g->ord[i] && a < n_aggs; a++) exec_agg_free(&g->ord[i]->aggs[a]);
    free(g->fk[i]);
  }
  /* the rows themselves belong to the set (freed with it); their accumulators are freed
     above, so the set frees none */
  exec_rowset_free(&g->set, 0);
  free(g->ord);
  free(g->fk);
  free(g->fkl);
  free(g->scratch);
  free(g->lpre);
  free(g->gpre);
  exec_arena_free(&g->arena);
  memset(g, 0, sizeof *g);
}

void exec_cg_detach(exec_cg *g, exec_mrow ***rows, size_t *n) {
  *rows = g->ord;
  *n = g->n;
  for (size_t i = 0; i < g->n; i++) free(g->fk[i]);
  free(g->fk);
  free(g->fkl);
  free(g->set.slots); /* the rows now belong to the caller */
  g->set.slots = NULL;
  g->set.cap = g->set.n = 0;
  g->set.last = NULL;
  g->ord = NULL;
  g->fk = NULL;
  g->fkl = NULL;
  g->n = g->cap = 0;
  g->last = NULL;
}
