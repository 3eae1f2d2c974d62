/*
** kv/db/manifest_salvage.c: the MANIFEST read for a salvage (kv_manifest_salvage, kv/db/manifest.h;
** docs/KV.md "Salvage"): every record that checks is decoded and handed over edit by edit,
** damage skipped and reported; and the TABLEINFO file of each table folder (the MANIFEST's
** table encoding, so a salvage can name tables without the MANIFEST). Split from
** kv/db/manifest.c, whose record framing and codec it shares (kv/db/manifest_int.h).
** Not here: the log itself (kv/db/manifest.c).
*/
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "kv/util/coding.h"
#include "kv/db/manifest.h"
#include "kv/db/manifest_int.h"
#include "kv/util/status.h"

/* ---- salvage reading (kv/db/manifest.h) ---- */

/* One decoded edit of a group being salvaged, with the table it owns. */
typedef struct sv_edit {
  kv_edit e;         /* the edit (e.table points at t for CREATE_TABLE) */
  kv_table_meta t;   /* its table, owned */
} sv_edit;

typedef struct sv_list {
  sv_edit *v;        /* edits decoded so far */
  size_t n, cap;     /* used, allocated */
} sv_list;

static sv_edit *sv_push(sv_list *l) {
  if (l->n == l->cap) {
    size_t nc = l->cap ? l->cap * 2 : 8;
    sv_edit *nv = realloc(l->v, nc * sizeof *nv);
    if (!nv) return NULL;
    l->v = nv;
    l->cap = nc;
  }
  sv_edit *x = &l->v[l->n++];
  memset(x, 0, sizeof *x);
  return x;
}

static void sv_free(sv_list *l) {
  for (size_t i = 0; i < l->n; i++) kv_mf_table_free(&l->v[i].t);
  free(l->v);
  memset(l, 0, sizeof *l);
}

/* Decode a whole edit group into l without applying it. NULL, or what was wrong. */
static const char *sv_decode(const uint8_t *p, size_t len, sv_list *l) {
  kv_mf_rbuf r = {p, p + len, NULL};
  uint64_t count = kv_mf_get_var(&r);
  for (uint64_t i = 0; i < count && !r.bad; i++) {
    if (r.p >= r.limit) { r.bad = "truncated edit"; break; }
    sv_edit *x = sv_push(l);
    if (!x) return "out of memory";
    kv_edit *e = &x->e;
    e->kind = *r.p++;
    switch (e->kind) {
    case KV_EDIT_CREATE_TABLE:
    case KV_EDIT_ALTER_TABLE:
      kv_mf_get_table(&r, &x->t);
      e->table = &x->t;
      e->table_id = x->t.id;
      break;
    case KV_EDIT_DROP_TABLE: e->table_id = kv_mf_get_u32v(&r); break;
    case KV_EDIT_ADD_FILE:
      e->family_id = kv_mf_get_u32v(&r); kv_mf_get_file(&r, &e->file); e->flushed_seq = kv_mf_get_var(&r); break;
    case KV_EDIT_REMOVE_FILE: e->family_id = kv_mf_get_u32v(&r); e->file.number = kv_mf_get_var(&r); break;
    case KV_EDIT_SET_FLUSHED: e->family_id = kv_mf_get_u32v(&r); e->flushed_seq = kv_mf_get_var(&r); break;
    case KV_EDIT_SET_COUNTERS:
    case KV_EDIT_SNAPSHOT: {
      e->next_file_number = kv_mf_get_var(&r); e->next_table_id = kv_mf_get_u32v(&r);
      e->next_family_id = kv_mf_get_u32v(&r); e->last_seq = kv_mf_get_var(&r); e->wal_number = kv_mf_get_var(&r);
      if (e->kind == KV_EDIT_SET_COUNTERS) break;
      uint64_t nt = kv_mf_get_var(&r);
      for (uint64_t k = 0; k < nt && !r.bad; k++) {
        sv_edit *y = sv_push(l);
        if (!y) return "out of memory";
        kv_mf_get_table(&r, &y->t);
        y->e.kind = KV_EDIT_CREATE_TABLE;
        y->e.table = &y->t;
        y->e.table_id = y->t.id;
      }
      break;
    }
    case KV_EDIT_LOG_POSITION: /* where the log must reach: nothing a salvage rebuilds */
      kv_mf_get_var(&r); kv_mf_get_var(&r); kv_mf_get_var(&r);
      l->n--; /* the entry pushed for it holds nothing */
      break;
    case KV_EDIT_SET_REGIONS: /* region boundaries: a salvaged table is one region */
      kv_mf_get_regions(&r, e);
      l->n--;
      break;
    default:
      r.bad = "unknown edit kind";
      break;
    }
  }
  if (!r.bad && r.p != r.limit) r.bad = "bytes after the last edit";
  /* pointers into the list moved as it grew: point each CREATE_TABLE at its own table */
  for (size_t i = 0; i < l->n; i++)
    if (l->v[i].e.kind == KV_EDIT_CREATE_TABLE || l->v[i].e.kind == KV_EDIT_ALTER_TABLE)
      l->v[i].e.table = &l->v[i].t;
  return r.bad;
}

/* Does a whole record start at buf[off]? Its payload length in *plen when it does. */
static int sv_record_at(const uint8_t *buf, size_t len, size_t off, uint32_t *plen) {
  if (len - off < KV_MF_REC_HEADER) return 0;
  const uint8_t *h = buf + off;
  if (kv_get_u32le(h + 4) != (uint32_t)XXH3_64bits(h, 4)) return 0;
  uint32_t n = kv_get_u32le(h);
  if (n > KV_MF_MAX_RECORD || n > len - off - KV_MF_REC_HEADER) return 0;
  if (kv_get_u64le(h + 8) != XXH3_64bits(h + KV_MF_REC_HEADER, n)) return 0;
  *plen = n;
  return 1;
}

int kv_manifest_salvage(kv_env *env, const char *dir, const kv_manifest_salvage_cb *cb) {
  char path[4200];
  snprintf(path, sizeof path, "%s/MANIFEST", dir);
  if (!env->exists(env, path)) return kv_error(KV_ERR_NOTFOUND, "no MANIFEST in %s", dir);
  uint8_t *buf;
  size_t len;
  int rc = kv_env_read_all(env, path, &buf, &len);
  if (rc != KV_OK) return rc;
  size_t off = 0;
  bool header = false; /* the header record was met */
  while (rc == KV_OK && off < len) {
    uint32_t plen = 0;
    const char *why = NULL;
    if (sv_record_at(buf, len, off, &plen)) {
      const uint8_t *pay = buf + off + KV_MF_REC_HEADER;
      if (plen == 12 && memcmp(pay, KV_MF_MAGIC, 8) == 0) {
        uint32_t ver = kv_get_u32le(pay + 8);
        if (ver < KV_MF_VERSION_MIN || ver > KV_MF_VERSION) why = "unsupported MANIFEST format version";
        header = true;
      } else {
        sv_list l = {0};
        why = sv_decode(pay, plen, &l);
        for (size_t i = 0; !why && rc == KV_OK && i < l.n; i++) rc = cb->edit(cb->ctx, off, &l.v[i].e);
        sv_free(&l);
      }
      if (!why) {
        off += KV_MF_REC_HEADER + plen;
        continue;
      }
    }
    /* Damage: skip to the next offset where a whole record checks. */
    if (!why) {
      if (len - off < KV_MF_REC_HEADER) why = "record header cut short at the end of the file";
      else if (kv_mf_is_zero(buf + off, len - off)) why = "zero-filled tail (a record never written)";
      else if (kv_get_u32le(buf + off + 4) != (uint32_t)XXH3_64bits(buf + off, 4))
        why = "bad record length (length check mismatch)";
      else if (kv_get_u32le(buf + off) > len - off - KV_MF_REC_HEADER)
        why = "record runs past the end of the file";
      else why = "checksum mismatch";
    }
    size_t next = off + 1;
    uint32_t skip;
    while (next < len && !sv_record_at(buf, len, next, &skip)) next++;
    char msg[200];
    /* cut short or never written, at the very end: a crash's torn write, never acted on */
    bool torn = next == len && (strstr(why, "cut short") || strstr(why, "zero-filled") ||
                                strstr(why, "past the end"));
    snprintf(msg, sizeof msg, "%s%s", torn ? "torn tail: " : "", why);
    if (rc == KV_OK) rc = cb->damage(cb->ctx, off, next - off, msg);
    off = next;
  }
  if (rc == KV_OK && len == 0) rc = cb->damage(cb->ctx, 0, 0, "empty file: no header record");
  else if (rc == KV_OK && !header) rc = cb->damage(cb->ctx, 0, 0, "no header record checks");
  free(buf);
  return rc;
}

/* ---- TABLEINFO (kv/db/manifest.h) ---- */

#define TI_MAGIC "ROWANTI1"

int kv_tableinfo_write(kv_env *env, const char *dir, const kv_table_meta *t, bool sync) {
  kv_table_meta bare = *t; /* families without files or flushed_seq */
  kv_family_meta fams[KV_MAX_FAMILIES];
  if (t->n_families > KV_MAX_FAMILIES) return kv_error(KV_ERR_INVALID, "TABLEINFO: too many families");
  for (uint32_t i = 0; i < t->n_families; i++) {
    fams[i] = t->families[i];
    fams[i].flushed_seq = 0;
    fams[i].files = NULL;
    fams[i].n_files = fams[i].cap_files = 0;
  }
  bare.families = fams;
  kv_mf_wbuf payload = {0}, rec = {0};
  kv_mf_put_raw(&payload, TI_MAGIC, 8);
  kv_mf_put_table(&payload, &bare);
  kv_mf_frame(&rec, payload.p, payload.len);
  free(payload.p);
  if (payload.oom || rec.oom) { free(rec.p); return kv_mf_nomem(); }
  char tdir[4200], path[4300], tmp[4400], data[4200];
  snprintf(data, sizeof data, "%s/data", dir);
  snprintf(tdir, sizeof tdir, "%s/data/%u", dir, t->id);
  snprintf(path, sizeof path, "%s/%s", tdir, KV_TABLEINFO);
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  int rc = env->mkdir(env, tdir);
  kv_file *f = NULL;
  if (rc == KV_OK) rc = env->open(env, tmp, KV_OPEN_WRITE | KV_OPEN_TRUNCATE, &f);
  if (rc == KV_OK) {
    rc = env->append(f, rec.p, rec.len);
    if (rc == KV_OK && sync) rc = env->sync(f);
    env->close(f);
    if (rc == KV_OK) rc = env->rename(env, tmp, path);
    if (rc != KV_OK) env->remove(env, tmp);
  }
  free(rec.p);
  if (rc == KV_OK && sync) rc = env->sync_dir(env, tdir);
  if (rc == KV_OK && sync) rc = env->sync_dir(env, data);
  if (rc == KV_OK && sync) rc = env->sync_dir(env, dir);
  return rc;
}

int kv_tableinfo_read(kv_env *env, const char *path, kv_table_meta *out) {
  memset(out, 0, sizeof *out);
  if (!env->exists(env, path)) return kv_error(KV_ERR_NOTFOUND, "no file %s", path);
  uint8_t *buf;
  size_t len;
  int rc = kv_env_read_all(env, path, &buf, &len);
  if (rc != KV_OK) return rc;
  uint32_t plen = 0;
  const char *why = NULL;
  if (!sv_record_at(buf, len, 0, &plen) || KV_MF_REC_HEADER + (size_t)plen != len) why = "bad length or checksum";
  else if (plen < 8 || memcmp(buf + KV_MF_REC_HEADER, TI_MAGIC, 8) != 0) why = "bad magic";
  if (!why) {
    kv_mf_rbuf r = {buf + KV_MF_REC_HEADER + 8, buf + len, NULL};
    kv_mf_get_table(&r, out);
    if (!r.bad && r.p != r.limit) r.bad = "bytes after the table";
    if (!r.bad && (out->n_families < 1 || out->name[0] == 0)) r.bad = "bad table";
    for (uint32_t i = 0; !r.bad && i < out->n_families; i++)
      if (out->families[i].n_files) r.bad = "files in a TABLEINFO";
    why = r.bad;
  }
  free(buf);
  if (why) {
    kv_mf_table_free(out);
    memset(out, 0, sizeof *out);
    return kv_error(KV_ERR_CORRUPT, "TABLEINFO %s: %s", path, why);
  }
  return KV_OK;
}
