/*
** kv/db/db_region.c: regions (docs/KV_REGIONS.md): a table's rows cut into key ranges at
** its boundaries, as HBase cuts a table into regions. Region i holds the rows in
** [boundary i-1, boundary i): the first has no start, the last no end. The boundaries are
** the MANIFEST's (SET_REGIONS, kv/db/manifest_region.c); here:
** - their run-time form, one immutable kv_regions shared by a table's families and swapped
**   whole (under mu) when they change;
** - kv_db_write_sfs, the one path by which a flush and a compaction write store files: it
**   cuts its output at the boundaries, so that every file it writes lies within one region
**   (the bulk load cuts its own, kv/bulk/bulk_write.c, with kv_regions_find);
** - kv_create_table_split's boundaries and kv_family_regions / kv_table_regions;
** - the naming of a region in error messages (kv_db_region_name).
** Not here: reads (which need no regions: a file's key range keeps a scan of one region
** away from the others' files), the automatic split by size (kv/db/db_split.c).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kv/db/db_impl.h"
#include "kv/util/cell.h"
#include "kv/util/coding.h"
#include "kv/util/status.h"

#define PATH_CAP 4096 /* bytes for any path built here */

kv_regions *kv_regions_new(const kv_table_meta *t) {
  if (!t || t->n_bounds == 0) return NULL;
  kv_regions *r = calloc(1, sizeof *r + t->bounds_len);
  if (!r) return NULL;
  r->keys = calloc(t->n_bounds, sizeof *r->keys);
  r->lens = calloc(t->n_bounds, sizeof *r->lens);
  if (!r->keys || !r->lens) {
    free(r->keys);
    free(r->lens);
    free(r);
    return NULL;
  }
  uint8_t *buf = (uint8_t *)(r + 1);
  memcpy(buf, t->bounds, t->bounds_len);
  const uint8_t *p = buf, *end = buf + t->bounds_len;
  for (uint32_t i = 0; i < t->n_bounds; i++) { /* checked when the MANIFEST took them */
    uint64_t len = 0;
    p = kv_get_varint(p, end, &len);
    r->keys[i] = p;
    r->lens[i] = (uint32_t)len;
    p += len;
  }
  r->n = t->n_bounds;
  atomic_init(&r->refs, 1);
  return r;
}

void kv_regions_ref(kv_regions *r) {
  if (r) atomic_fetch_add(&r->refs, 1);
}

void kv_regions_unref(kv_regions *r) {
  if (!r || atomic_fetch_sub(&r->refs, 1) != 1) return;
  free(r->keys);
  free(r->lens);
  free(r);
}

uint32_t kv_regions_find(const kv_regions *r, const uint8_t *row, uint32_t len) {
  if (!r) return 0;
  uint32_t lo = 0, hi = r->n; /* the number of boundaries at or below row */
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (kv_bytes_cmp(r->keys[mid], r->lens[mid], row, len) <= 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

int kv_db_install_regions(kv_db *db, uint32_t table_id) {
  const kv_table_meta *t = NULL;
  for (uint32_t i = 0; i < db->ver.n_tables; i++)
    if (db->ver.tables[i].id == table_id) t = &db->ver.tables[i];
  if (!t) return KV_OK;
  kv_regions *r = kv_regions_new(t);
  if (t->n_bounds && !r) return kv_error(KV_ERR_NOMEM, "regions: out of memory");
  for (uint32_t i = 0; i < t->n_families; i++) {
    kv_fam *f = kv_db_family(db, t->families[i].id);
    if (!f) continue;
    kv_regions_unref(f->regions);
    kv_regions_ref(r);
    f->regions = r;
  }
  kv_regions_unref(r);
  return KV_OK;
}

/* Append a bound row (its varint length, then its bytes) to the encoded boundaries. */
static uint8_t *put_bound(uint8_t *p, const uint8_t *key, uint32_t len) {
  p = kv_put_varint(p, len);
  memcpy(p, key, len);
  return p + len;
}

int kv_regions_encode(const uint8_t *const *keys, const uint32_t *lens, uint32_t n,
                      uint8_t **out, uint32_t *out_len) {
  *out = NULL;
  *out_len = 0;
  if (n == 0) return KV_OK;
  size_t total = 0;
  for (uint32_t i = 0; i < n; i++) {
    if (!keys || !lens || !keys[i] || lens[i] == 0)
      return kv_error(KV_ERR_INVALID, "split key %u is empty", i);
    if (lens[i] > KV_MAX_ROW_KEY)
      return kv_error(KV_ERR_TOOBIG, "split key %u has %u bytes, over the maximum of %u", i,
                      lens[i], KV_MAX_ROW_KEY);
    if (i && kv_bytes_cmp(keys[i - 1], lens[i - 1], keys[i], lens[i]) >= 0)
      return kv_error(KV_ERR_INVALID, "split key %u is not above split key %u", i, i - 1);
    total += 5 + (size_t)lens[i];
  }
  if (total > (64u << 20)) return kv_error(KV_ERR_TOOBIG, "split keys: %u keys are too large", n);
  uint8_t *buf = malloc(total), *p = buf;
  if (!buf) return kv_error(KV_ERR_NOMEM, "split keys: out of memory");
  for (uint32_t i = 0; i < n; i++) p = put_bound(p, keys[i], lens[i]);
  *out = buf;
  *out_len = (uint32_t)(p - buf);
  return KV_OK;
}

/* ---- store files cut at the boundaries -------------------------------------------------- */

/* Write one store file of f holding what fill adds below end; *h NULL when it added none. */
static int write_one(kv_db *db, kv_fam *f, const kv_db_fill *fill, void *ctx,
                     const uint8_t *end, uint32_t end_len, kv_sfh **h) {
  *h = NULL;
  char dir[PATH_CAP], path[PATH_CAP];
  kv_db_family_dir(db, f, dir, sizeof dir);
  int rc = db->env->mkdir(db->env, dir);
  if (rc) return rc;
  uint64_t number = kv_db_new_file_number(db);
  kv_db_sf_path(db, f, number, path, sizeof path);
  kv_sf_writer_options wo = {f->block_size, f->compression, 0, 0};
  kv_sf_writer *w;
  rc = kv_sf_writer_open(db->env, path, &wo, &w);
  if (rc) return rc;
  rc = fill->fill(ctx, w, end, end_len);
  if (rc) {
    kv_sf_writer_abort(w);
    db->env->remove(db->env, path);
    return rc;
  }
  kv_sf_props props;
  rc = kv_sf_writer_finish(w, &props);
  if (rc == KV_OK) rc = db->env->sync_dir(db->env, dir);
  if (rc == KV_OK) {
    kv_file_meta meta = {number, props.file_size, props.min_seq, props.max_seq, props.cells,
                         props.rows};
    rc = kv_sfh_open(db, f, &meta, h);
  }
  if (rc) db->env->remove(db->env, path);
  return rc;
}

void kv_db_sfs_free(kv_sfh **outs, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) kv_sfh_unref(outs[i]);
  free(outs);
}

int kv_db_write_sfs(kv_db *db, kv_fam *f, const kv_db_fill *fill, void *ctx, kv_sfh ***outs,
                    uint32_t *n_outs) {
  *outs = NULL;
  *n_outs = 0;
  pthread_mutex_lock(&db->mu);
  kv_regions *r = f->regions;
  kv_regions_ref(r);
  pthread_mutex_unlock(&db->mu);
  int rc = KV_OK;
  uint32_t n = 0, cap = 0;
  kv_sfh **v = NULL;
  const uint8_t *row;
  uint32_t row_len;
  while (rc == KV_OK && fill->next_row(ctx, &row, &row_len)) {
    uint32_t i = kv_regions_find(r, row, row_len); /* the region the next cell is in */
    const uint8_t *end = r && i < r->n ? r->keys[i] : NULL;
    uint32_t end_len = end ? r->lens[i] : 0;
    if (n == cap) {
      uint32_t nc = cap ? cap * 2 : 4;
      kv_sfh **nv = realloc(v, nc * sizeof *nv);
      if (!nv) { rc = kv_error(KV_ERR_NOMEM, "writing store files: out of memory"); break; }
      v = nv;
      cap = nc;
    }
    kv_sfh *h = NULL;
    rc = write_one(db, f, fill, ctx, end, end_len, &h);
    if (rc == KV_OK && h) v[n++] = h;
  }
  if (rc == KV_OK) rc = fill->status(ctx); /* the inputs ended, or failed */
  kv_regions_unref(r);
  if (rc) {
    /* written files not yet named anywhere: delete them (as a crash leaves them for kv_open) */
    for (uint32_t i = 0; i < n; i++) atomic_store(&v[i]->obsolete, true);
    kv_db_sfs_free(v, n);
    return rc;
  }
  *outs = v;
  *n_outs = n;
  return KV_OK;
}

/* ---- naming and listing --------------------------------------------------------------- */

/* The key as text in buf (cap >= 9): printable ASCII as it is, other bytes (and the
** backslash) as \xHH, cut with "..." when it does not fit. */
static void key_text(char *buf, size_t cap, const uint8_t *k, uint32_t len) {
  size_t o = 0;
  uint32_t i = 0;
  for (; i < len && o + 8 < cap; i++) { /* room for one \xHH and "..." after it */
    if (k[i] >= 0x20 && k[i] < 0x7f && k[i] != '\\') buf[o++] = (char)k[i];
    else o += (size_t)snprintf(buf + o, cap - o, "\\x%02x", k[i]);
  }
  snprintf(buf + o, cap - o, "%s", i < len ? "..." : "");
}

void kv_db_region_name(kv_db *db, const kv_fam *f, const kv_regions *r, uint32_t i, char *buf,
                       size_t cap) {
  const char *table = "?";
  for (uint32_t t = 0; t < db->ver.n_tables; t++)
    if (db->ver.tables[t].id == f->table_id) table = db->ver.tables[t].name;
  char lo[80] = "-inf", hi[80] = "+inf";
  if (r && i > 0) key_text(lo, sizeof lo, r->keys[i - 1], r->lens[i - 1]);
  if (r && i < r->n) key_text(hi, sizeof hi, r->keys[i], r->lens[i]);
  snprintf(buf, cap, "table %s region %u of %u [%s, %s)", table, i, r ? r->n + 1 : 1, lo, hi);
}

int kv_family_regions(kv_db *db, uint32_t family_id, uint32_t *n_regions,
                      void (*each)(void *ctx, uint32_t i, const uint8_t *key, uint32_t len),
                      void *ctx) {
  if (!db) return kv_error(KV_MISUSE, "kv_family_regions: NULL store");
  pthread_mutex_lock(&db->mu);
  kv_fam *f = kv_db_family(db, family_id);
  kv_regions *r = f ? f->regions : NULL;
  kv_regions_ref(r);
  pthread_mutex_unlock(&db->mu);
  if (!f) return kv_error(KV_ERR_NOTFOUND, "unknown family id %u", family_id);
  if (n_regions) *n_regions = r ? r->n + 1 : 1;
  for (uint32_t i = 0; each && r && i < r->n; i++) each(ctx, i, r->keys[i], r->lens[i]);
  kv_regions_unref(r);
  return KV_OK;
}

int kv_table_regions(kv_db *db, const char *table, uint32_t *n_regions,
                     void (*each)(void *ctx, uint32_t i, const uint8_t *key, uint32_t len),
                     void *ctx) {
  if (!db || !table) return kv_error(KV_MISUSE, "kv_table_regions: NULL argument");
  uint32_t id, n = 0;
  int rc = kv_table_families(db, table, &id, 1, &n);
  if (rc) return rc;
  if (n == 0) return kv_error(KV_ERR_NOTFOUND, "kv_table_regions: no table '%s'", table);
  return kv_family_regions(db, id, n_regions, each, ctx);
}

int kv_db_corrupt_region(kv_db *db, uint32_t family_id, kv_sfh *const *files, uint32_t n,
                         int rc) {
  if (rc != KV_ERR_CORRUPT) return rc;
  char msg[512];
  snprintf(msg, sizeof msg, "%s", kv_errmsg());
  if (strstr(msg, " lies in table ")) return rc; /* named already */
  for (uint32_t i = 0; i < n; i++) {
    if (!files[i] || !strstr(msg, files[i]->path)) continue;
    const uint8_t *first, *last;
    uint32_t first_len, last_len;
    kv_sf_key_range(files[i]->reader, &first, &first_len, &last, &last_len);
    char name[256];
    pthread_mutex_lock(&db->mu);
    kv_fam *f = kv_db_family(db, family_id);
    if (f) {
      uint32_t at = first ? kv_regions_find(f->regions, first, first_len) : 0;
      kv_db_region_name(db, f, f->regions, at, name, sizeof name);
    }
    pthread_mutex_unlock(&db->mu);
    if (!f) return rc;
    return kv_error(rc, "%s (store file %s lies in %s)", msg, files[i]->path, name);
  }
  return rc;
}

int kv_db_cut_file(kv_db *db, kv_fam *f, kv_sfh *h, kv_sfh ***outs, uint32_t *n_outs) {
  *outs = NULL;
  *n_outs = 0;
  const uint8_t *first, *last;
  uint32_t first_len, last_len;
  kv_sf_key_range(h->reader, &first, &first_len, &last, &last_len);
  pthread_mutex_lock(&db->mu);
  bool within = !first || kv_regions_find(f->regions, first, first_len) ==
                              kv_regions_find(f->regions, last, last_len);
  pthread_mutex_unlock(&db->mu);
  if (within) return KV_OK;
  kv_iter *it = kv_sf_iter_new_opts(h->reader, NULL, false); /* every cell as stored */
  if (!it) return kv_error(KV_ERR_NOMEM, "cutting %s at region boundaries: out of memory", h->path);
  int rc = kv_db_write_iter(db, f, it, outs, n_outs);
  it->ops->destroy(it);
  for (uint32_t i = 0; rc == KV_OK && i < *n_outs; i++) { /* the whole file's ranges */
    (*outs)[i]->meta.min_seq = h->meta.min_seq;
    (*outs)[i]->meta.max_seq = h->meta.max_seq;
  }
  return rc;
}
