/*
** kv/db/manifest.c: the MANIFEST (kv/db/manifest.h): an append-only log of checksummed records
** that describes the store; replayed at open into a kv_version, appended to (and synced)
** for each group of edits, and rewritten as one snapshot record once it passes a size
** limit. docs/FORMAT.md, "MANIFEST".
**
** Record = 16-byte header + payload:
**   0  u32 length        payload bytes
**   4  u32 length_check  low 32 bits of XXH3-64 of bytes [0, 4)
**   8  u64 checksum      XXH3-64 of the payload
** The first record's payload is the file header: the 8 bytes "ROWANMF1" and a u32 format
** version (4 written; 1 to 4 read: version 2 adds the LOG_POSITION edit, 3 ALTER_TABLE, 4
** SET_REGIONS, and an older log is rewritten as version 4 when a writer opens it). Every later payload is an edit
** group: count:varint edit*, each edit a kind byte (enum kv_edit_kind) and its fields as
** varints (see encode_edit). A group is applied whole or not at all: it is checked against
** a copy of the version first.
**
** Replay drops a torn tail (a record cut short at the end of the file, or a zero-filled
** tail) and truncates the file back; any other damage is KV_ERR_CORRUPT naming the file and
** the offset. Unlike the WAL, a complete final record with a bad checksum is corruption: a
** synced edit may already have been acted on (old WAL segments deleted), so dropping it
** would lose data. kv_manifest_read reads the log of a store another process writes: it
** writes nothing, and takes a cut or unchecked final record for one being appended.
** Also here: the salvage reading of a damaged log (kv_manifest_salvage: every record that
** checks, damage skipped and reported) and the TABLEINFO file of each table (the same table
** encoding, so a salvage can name tables without the MANIFEST).
** This file does not touch store files or the WAL: it only records what the store decides.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "kv/util/coding.h"
#include "kv/db/manifest.h"
#include "kv/db/manifest_int.h"
#include "kv/util/status.h"

#define DEFAULT_REWRITE_LIMIT (1u << 20)

struct kv_manifest {
  kv_env *env;           /* file system */
  char dir[4096];        /* store directory */
  char path[4200];       /* dir/MANIFEST */
  kv_file *f;            /* the log, opened for appending */
  uint64_t size;         /* bytes of good records in the log */
  uint64_t rewrite_at;   /* rewrite as a snapshot once size passes this ... */
  uint64_t base;         /* ... and twice the size right after the last rewrite */
  int failed;            /* status of a failure that left the log unusable, else KV_OK */
};

/* ---- version helpers ---- */

static void family_free(kv_family_meta *f) {
  free(f->files);
  f->files = NULL;
  f->n_files = f->cap_files = 0;
}

void kv_mf_table_free(kv_table_meta *t) {
  for (uint32_t i = 0; i < t->n_families; i++) family_free(&t->families[i]);
  free(t->families);
  t->families = NULL;
  t->n_families = 0;
  free(t->bounds);
  t->bounds = NULL;
  t->bounds_len = t->n_bounds = 0;
}

void kv_table_meta_free(kv_table_meta *t) {
  if (t) kv_mf_table_free(t);
}

/* Free everything *v owns and zero it. NULL is a no-op. */
void kv_version_free(kv_version *v) {
  if (!v) return;
  for (uint32_t i = 0; i < v->n_tables; i++) kv_mf_table_free(&v->tables[i]);
  free(v->tables);
  memset(v, 0, sizeof *v);
}

int kv_mf_nomem(void) { return kv_error(KV_ERR_NOMEM, "MANIFEST: out of memory"); }

/* Deep copy of a table into *dst (which owns nothing yet). */
static int table_copy(kv_table_meta *dst, const kv_table_meta *src) {
  *dst = *src;
  dst->families = NULL;
  dst->n_families = 0;
  dst->bounds = NULL;
  dst->bounds_len = dst->n_bounds = 0;
  if (src->bounds_len) {
    if (!(dst->bounds = malloc(src->bounds_len))) return kv_mf_nomem();
    memcpy(dst->bounds, src->bounds, src->bounds_len);
    dst->bounds_len = src->bounds_len;
    dst->n_bounds = src->n_bounds;
  }
  if (src->n_families == 0) return KV_OK;
  dst->families = calloc(src->n_families, sizeof *dst->families);
  if (!dst->families) return kv_mf_nomem();
  dst->n_families = src->n_families;
  for (uint32_t i = 0; i < src->n_families; i++) {
    kv_family_meta *d = &dst->families[i];
    const kv_family_meta *s = &src->families[i];
    *d = *s;
    d->files = NULL;
    d->cap_files = d->n_files = 0;
    if (s->n_files) {
      if (!(d->files = malloc(s->n_files * sizeof *d->files))) return kv_mf_nomem();
      memcpy(d->files, s->files, s->n_files * sizeof *d->files);
      d->n_files = d->cap_files = s->n_files;
    }
  }
  return KV_OK;
}

static int version_copy(kv_version *dst, const kv_version *src) {
  *dst = *src;
  dst->tables = NULL;
  dst->n_tables = 0;
  if (src->n_tables == 0) return KV_OK;
  if (!(dst->tables = calloc(src->n_tables, sizeof *dst->tables))) return kv_mf_nomem();
  for (uint32_t i = 0; i < src->n_tables; i++) {
    dst->n_tables = i + 1;
    int rc = table_copy(&dst->tables[i], &src->tables[i]);
    if (rc != KV_OK) { kv_version_free(dst); return rc; }
  }
  return KV_OK;
}

static kv_table_meta *find_table(kv_version *v, uint32_t id) {
  for (uint32_t i = 0; i < v->n_tables; i++)
    if (v->tables[i].id == id) return &v->tables[i];
  return NULL;
}

static kv_family_meta *find_family(kv_version *v, uint32_t id) {
  for (uint32_t i = 0; i < v->n_tables; i++)
    for (uint32_t k = 0; k < v->tables[i].n_families; k++)
      if (v->tables[i].families[k].id == id) return &v->tables[i].families[k];
  return NULL;
}

static void raise_u64(uint64_t *a, uint64_t b) { if (b > *a) *a = b; }
static void raise_u32(uint32_t *a, uint32_t b) { if (b > *a) *a = b; }

static int check_table(kv_version *v, const kv_table_meta *t) {
  if (!t) return kv_error(KV_ERR_INVALID, "MANIFEST: CREATE_TABLE without a table");
  if (t->name[0] == 0 || memchr(t->name, 0, sizeof t->name) == NULL)
    return kv_error(KV_ERR_INVALID, "MANIFEST: bad table name");
  if (t->n_families < 1 || t->n_families > KV_MAX_FAMILIES)
    return kv_error(KV_ERR_INVALID, "MANIFEST: table %s has %u families", t->name, t->n_families);
  if (find_table(v, t->id)) return kv_error(KV_ERR_EXISTS, "MANIFEST: table id %u in use", t->id);
  for (uint32_t i = 0; i < v->n_tables; i++)
    if (strcmp(v->tables[i].name, t->name) == 0)
      return kv_error(KV_ERR_EXISTS, "MANIFEST: table %s exists", t->name);
  for (uint32_t i = 0; i < t->n_families; i++) {
    const kv_family_meta *f = &t->families[i];
    if (f->name[0] == 0 || memchr(f->name, 0, sizeof f->name) == NULL)
      return kv_error(KV_ERR_INVALID, "MANIFEST: bad family name in table %s", t->name);
    if (find_family(v, f->id))
      return kv_error(KV_ERR_EXISTS, "MANIFEST: family id %u in use", f->id);
    for (uint32_t k = 0; k < i; k++)
      if (t->families[k].id == f->id || strcmp(t->families[k].name, f->name) == 0)
        return kv_error(KV_ERR_INVALID, "MANIFEST: duplicate family in table %s", t->name);
  }
  return KV_OK;
}

/* Insert a file keeping the order oldest to newest: by max_seq, then by number. */
static int add_file(kv_family_meta *f, const kv_file_meta *fm) {
  for (uint32_t i = 0; i < f->n_files; i++)
    if (f->files[i].number == fm->number)
      return kv_error(KV_ERR_EXISTS, "MANIFEST: file %llu already in family %u",
                      (unsigned long long)fm->number, f->id);
  if (f->n_files == f->cap_files) {
    uint32_t nc = f->cap_files ? f->cap_files * 2 : 4;
    kv_file_meta *nf = realloc(f->files, nc * sizeof *nf);
    if (!nf) return kv_mf_nomem();
    f->files = nf;
    f->cap_files = nc;
  }
  uint32_t at = f->n_files;
  while (at > 0 && (f->files[at - 1].max_seq > fm->max_seq ||
                    (f->files[at - 1].max_seq == fm->max_seq && f->files[at - 1].number > fm->number)))
    at--;
  memmove(&f->files[at + 1], &f->files[at], (f->n_files - at) * sizeof *f->files);
  f->files[at] = *fm;
  f->n_files++;
  return KV_OK;
}

/* ALTER_TABLE: the table's families take the listed options; new ones are added. */
static int alter_table(kv_version *v, const kv_edit *e) {
  kv_table_meta *t = find_table(v, e->table_id);
  const kv_table_meta *nt = e->table;
  if (!t) return kv_error(KV_ERR_NOTFOUND, "MANIFEST: no table with id %u", e->table_id);
  if (!nt || nt->n_families < t->n_families || nt->n_families > KV_MAX_FAMILIES)
    return kv_error(KV_ERR_INVALID, "MANIFEST: ALTER_TABLE of %s lists %u families", t->name,
                    nt ? nt->n_families : 0);
  for (uint32_t i = 0; i < nt->n_families; i++) {
    const kv_family_meta *f = &nt->families[i];
    if (f->name[0] == 0 || memchr(f->name, 0, sizeof f->name) == NULL)
      return kv_error(KV_ERR_INVALID, "MANIFEST: bad family name in table %s", t->name);
    if (i < t->n_families) {
      if (t->families[i].id != f->id || strcmp(t->families[i].name, f->name) != 0)
        return kv_error(KV_ERR_INVALID, "MANIFEST: ALTER_TABLE of %s: family %u is not %s",
                        t->name, f->id, t->families[i].name);
      continue;
    }
    if (find_family(v, f->id)) return kv_error(KV_ERR_EXISTS, "MANIFEST: family id %u in use", f->id);
    for (uint32_t k = 0; k < i; k++)
      if (nt->families[k].id == f->id || strcmp(nt->families[k].name, f->name) == 0)
        return kv_error(KV_ERR_INVALID, "MANIFEST: duplicate family in table %s", t->name);
  }
  if (nt->n_families > t->n_families) {
    kv_family_meta *nf = realloc(t->families, nt->n_families * sizeof *nf);
    if (!nf) return kv_mf_nomem();
    t->families = nf;
  }
  for (uint32_t i = 0; i < nt->n_families; i++) {
    kv_family_meta *d = &t->families[i];
    const kv_family_meta *f = &nt->families[i];
    if (i >= t->n_families) {
      memset(d, 0, sizeof *d);
      d->id = f->id;
      memcpy(d->name, f->name, sizeof d->name);
      d->flushed_seq = f->flushed_seq;
      raise_u32(&v->next_family_id, f->id + 1);
    }
    d->max_versions = f->max_versions;
    d->ttl_sec = f->ttl_sec;
    d->compression = f->compression;
    d->block_size = f->block_size;
  }
  t->n_families = nt->n_families;
  return KV_OK;
}

/* Apply one edit to v. Errors: KV_ERR_NOTFOUND (unknown table, family or file),
** KV_ERR_EXISTS (id or name in use, file already listed), KV_ERR_INVALID, KV_ERR_NOMEM.
** On error v may hold part of this one edit only for KV_ERR_NOMEM. */
static int apply_one(kv_version *v, const kv_edit *e) {
  kv_family_meta *fam;
  switch (e->kind) {
  case KV_EDIT_CREATE_TABLE: {
    int rc = check_table(v, e->table);
    if (rc != KV_OK) return rc;
    kv_table_meta *nt = realloc(v->tables, (v->n_tables + 1) * sizeof *nt);
    if (!nt) return kv_mf_nomem();
    v->tables = nt;
    if ((rc = table_copy(&v->tables[v->n_tables], e->table)) != KV_OK) {
      kv_mf_table_free(&v->tables[v->n_tables]);
      return rc;
    }
    v->n_tables++;
    raise_u32(&v->next_table_id, e->table->id + 1);
    for (uint32_t i = 0; i < e->table->n_families; i++)
      raise_u32(&v->next_family_id, e->table->families[i].id + 1);
    return KV_OK;
  }
  case KV_EDIT_ALTER_TABLE: return alter_table(v, e);
  case KV_EDIT_SET_REGIONS: return kv_mf_set_regions(find_table(v, e->table_id), e);
  case KV_EDIT_DROP_TABLE: {
    kv_table_meta *t = find_table(v, e->table_id);
    if (!t) return kv_error(KV_ERR_NOTFOUND, "MANIFEST: no table with id %u", e->table_id);
    kv_mf_table_free(t);
    size_t i = (size_t)(t - v->tables);
    memmove(t, t + 1, (v->n_tables - i - 1) * sizeof *t);
    v->n_tables--;
    return KV_OK;
  }
  case KV_EDIT_ADD_FILE: {
    if (!(fam = find_family(v, e->family_id)))
      return kv_error(KV_ERR_NOTFOUND, "MANIFEST: no family with id %u", e->family_id);
    int rc = add_file(fam, &e->file);
    if (rc != KV_OK) return rc;
    if (e->flushed_seq) fam->flushed_seq = e->flushed_seq;
    raise_u64(&v->next_file_number, e->file.number + 1);
    raise_u64(&v->last_seq, e->file.max_seq);
    raise_u64(&v->last_seq, e->flushed_seq);
    return KV_OK;
  }
  case KV_EDIT_REMOVE_FILE: {
    if (!(fam = find_family(v, e->family_id)))
      return kv_error(KV_ERR_NOTFOUND, "MANIFEST: no family with id %u", e->family_id);
    for (uint32_t i = 0; i < fam->n_files; i++) {
      if (fam->files[i].number != e->file.number) continue;
      memmove(&fam->files[i], &fam->files[i + 1], (fam->n_files - i - 1) * sizeof *fam->files);
      fam->n_files--;
      return KV_OK;
    }
    return kv_error(KV_ERR_NOTFOUND, "MANIFEST: family %u has no file %llu", e->family_id,
                    (unsigned long long)e->file.number);
  }
  case KV_EDIT_SET_FLUSHED:
    if (!(fam = find_family(v, e->family_id)))
      return kv_error(KV_ERR_NOTFOUND, "MANIFEST: no family with id %u", e->family_id);
    fam->flushed_seq = e->flushed_seq;
    raise_u64(&v->last_seq, e->flushed_seq);
    return KV_OK;
  case KV_EDIT_SET_COUNTERS:
    raise_u64(&v->next_file_number, e->next_file_number);
    raise_u32(&v->next_table_id, e->next_table_id);
    raise_u32(&v->next_family_id, e->next_family_id);
    raise_u64(&v->last_seq, e->last_seq);
    raise_u64(&v->wal_number, e->wal_number);
    return KV_OK;
  case KV_EDIT_LOG_POSITION:
    if (e->log_segment > v->log_segment ||
        (e->log_segment == v->log_segment && e->log_offset > v->log_offset)) {
      v->log_segment = e->log_segment;
      v->log_offset = e->log_offset;
      v->log_seq = e->log_seq;
    }
    return KV_OK;
  default:
    return kv_error(KV_ERR_INVALID, "MANIFEST: unknown edit kind %d", e->kind);
  }
}

/* ---- encoding ---- */


void kv_mf_put_raw(kv_mf_wbuf *b, const void *src, size_t n) {
  if (b->oom) return;
  if (b->len + n > b->cap) {
    size_t nc = b->cap ? b->cap : 256;
    while (nc < b->len + n) nc *= 2;
    uint8_t *np = realloc(b->p, nc);
    if (!np) { b->oom = 1; return; }
    b->p = np;
    b->cap = nc;
  }
  if (n) memcpy(b->p + b->len, src, n);
  b->len += n;
}
static void put_var(kv_mf_wbuf *b, uint64_t v) {
  uint8_t tmp[10];
  kv_mf_put_raw(b, tmp, (size_t)(kv_put_varint(tmp, v) - tmp));
}
static void put_u8(kv_mf_wbuf *b, uint8_t v) { kv_mf_put_raw(b, &v, 1); }
static void put_name(kv_mf_wbuf *b, const char *s) {
  size_t n = strnlen(s, KV_MAX_NAME + 1);
  put_var(b, n);
  kv_mf_put_raw(b, s, n);
}
static void put_file(kv_mf_wbuf *b, const kv_file_meta *f) {
  put_var(b, f->number); put_var(b, f->size); put_var(b, f->min_seq);
  put_var(b, f->max_seq); put_var(b, f->cells); put_var(b, f->rows);
}
void kv_mf_put_table(kv_mf_wbuf *b, const kv_table_meta *t) {
  put_var(b, t->id);
  put_name(b, t->name);
  put_var(b, t->n_families);
  for (uint32_t i = 0; i < t->n_families; i++) {
    const kv_family_meta *f = &t->families[i];
    put_var(b, f->id);
    put_name(b, f->name);
    put_var(b, kv_zigzag(f->max_versions));
    put_var(b, kv_zigzag(f->ttl_sec));
    put_var(b, kv_zigzag(f->compression));
    put_var(b, f->block_size);
    put_var(b, f->flushed_seq);
    put_var(b, f->n_files);
    for (uint32_t k = 0; k < f->n_files; k++) put_file(b, &f->files[k]);
  }
}
static void put_counters(kv_mf_wbuf *b, uint64_t next_file, uint32_t next_table, uint32_t next_family,
                         uint64_t last_seq, uint64_t wal_number) {
  put_var(b, next_file); put_var(b, next_table); put_var(b, next_family);
  put_var(b, last_seq); put_var(b, wal_number);
}

static void encode_edit(kv_mf_wbuf *b, const kv_edit *e) {
  put_u8(b, (uint8_t)e->kind);
  switch (e->kind) {
  case KV_EDIT_CREATE_TABLE: kv_mf_put_table(b, e->table); break;
  case KV_EDIT_ALTER_TABLE: kv_mf_put_table(b, e->table); break; /* its id is table_id */
  case KV_EDIT_DROP_TABLE: put_var(b, e->table_id); break;
  case KV_EDIT_ADD_FILE:
    put_var(b, e->family_id); put_file(b, &e->file); put_var(b, e->flushed_seq); break;
  case KV_EDIT_REMOVE_FILE: put_var(b, e->family_id); put_var(b, e->file.number); break;
  case KV_EDIT_SET_FLUSHED: put_var(b, e->family_id); put_var(b, e->flushed_seq); break;
  case KV_EDIT_SET_COUNTERS:
    put_counters(b, e->next_file_number, e->next_table_id, e->next_family_id, e->last_seq,
                 e->wal_number);
    break;
  case KV_EDIT_LOG_POSITION:
    put_var(b, e->log_segment); put_var(b, e->log_offset); put_var(b, e->log_seq); break;
  case KV_EDIT_SET_REGIONS:
    kv_mf_put_regions(b, e->table_id, e->bounds, e->bounds_len, e->n_bounds); break;
  default: break;
  }
}

/* The snapshot of a whole version: one edit of kind KV_EDIT_SNAPSHOT, followed in the same
** group by a LOG_POSITION edit when the version has a log position, then one SET_REGIONS
** edit per table split into regions. */
static void encode_snapshot(kv_mf_wbuf *b, const kv_version *v) {
  uint64_t n_split = 0;
  for (uint32_t i = 0; i < v->n_tables; i++) n_split += v->tables[i].n_bounds > 0;
  put_var(b, (v->log_segment ? 2 : 1) + n_split);
  put_u8(b, KV_EDIT_SNAPSHOT);
  put_counters(b, v->next_file_number, v->next_table_id, v->next_family_id, v->last_seq,
               v->wal_number);
  put_var(b, v->n_tables);
  for (uint32_t i = 0; i < v->n_tables; i++) kv_mf_put_table(b, &v->tables[i]);
  if (v->log_segment) {
    kv_edit e;
    memset(&e, 0, sizeof e);
    e.kind = KV_EDIT_LOG_POSITION;
    e.log_segment = v->log_segment;
    e.log_offset = v->log_offset;
    e.log_seq = v->log_seq;
    encode_edit(b, &e);
  }
  for (uint32_t i = 0; i < v->n_tables; i++) {
    const kv_table_meta *t = &v->tables[i];
    if (!t->n_bounds) continue;
    put_u8(b, KV_EDIT_SET_REGIONS);
    kv_mf_put_regions(b, t->id, t->bounds, t->bounds_len, t->n_bounds);
  }
}

/* Frame a payload as one record into out. */
void kv_mf_frame(kv_mf_wbuf *out, const uint8_t *payload, size_t len) {
  uint8_t h[KV_MF_REC_HEADER];
  kv_put_u32le(h, (uint32_t)len);
  kv_put_u32le(h + 4, (uint32_t)XXH3_64bits(h, 4));
  kv_put_u64le(h + 8, XXH3_64bits(payload, len));
  kv_mf_put_raw(out, h, KV_MF_REC_HEADER);
  kv_mf_put_raw(out, payload, len);
}

/* ---- decoding (never reads past limit) ---- */


uint64_t kv_mf_get_var(kv_mf_rbuf *r) {
  uint64_t v = 0;
  if (r->bad) return 0;
  const uint8_t *q = kv_get_varint(r->p, r->limit, &v);
  if (!q) { r->bad = "truncated or overlong varint"; return 0; }
  r->p = q;
  return v;
}
uint32_t kv_mf_get_u32v(kv_mf_rbuf *r) {
  uint64_t v = kv_mf_get_var(r);
  if (v > UINT32_MAX && !r->bad) r->bad = "value out of range";
  return (uint32_t)v;
}
static int get_int(kv_mf_rbuf *r) {
  int64_t v = kv_unzigzag(kv_mf_get_var(r));
  if ((v < -2147483647 - 1 || v > 2147483647) && !r->bad) r->bad = "value out of range";
  return (int)v;
}
static void get_name(kv_mf_rbuf *r, char *out) {
  uint64_t n = kv_mf_get_var(r);
  out[0] = 0;
  if (r->bad) return;
  if (n == 0 || n > KV_MAX_NAME || n > (uint64_t)(r->limit - r->p)) { r->bad = "bad name length"; return; }
  memcpy(out, r->p, (size_t)n);
  out[n] = 0;
  if (strlen(out) != n) r->bad = "NUL byte in a name";
  r->p += n;
}
void kv_mf_get_file(kv_mf_rbuf *r, kv_file_meta *f) {
  f->number = kv_mf_get_var(r); f->size = kv_mf_get_var(r); f->min_seq = kv_mf_get_var(r);
  f->max_seq = kv_mf_get_var(r); f->cells = kv_mf_get_var(r); f->rows = kv_mf_get_var(r);
}
/* Decode a table into *t (caller frees with kv_mf_table_free, on error too). */
void kv_mf_get_table(kv_mf_rbuf *r, kv_table_meta *t) {
  memset(t, 0, sizeof *t);
  t->id = kv_mf_get_u32v(r);
  get_name(r, t->name);
  uint64_t nf = kv_mf_get_var(r);
  if (r->bad) return;
  if (nf > KV_MAX_FAMILIES) { r->bad = "too many families"; return; }
  if (nf && !(t->families = calloc((size_t)nf, sizeof *t->families))) { r->bad = "out of memory"; return; }
  for (uint32_t i = 0; i < nf && !r->bad; i++) {
    kv_family_meta *f = &t->families[i];
    t->n_families = i + 1;
    f->id = kv_mf_get_u32v(r);
    get_name(r, f->name);
    f->max_versions = get_int(r);
    f->ttl_sec = kv_unzigzag(kv_mf_get_var(r));
    f->compression = get_int(r);
    f->block_size = kv_mf_get_u32v(r);
    f->flushed_seq = kv_mf_get_var(r);
    uint64_t n = kv_mf_get_var(r);
    if (r->bad) return;
    /* each file takes at least 6 bytes: bound the count by what is left */
    if (n > (uint64_t)(r->limit - r->p) / 6) { r->bad = "bad file count"; return; }
    if (n && !(f->files = malloc((size_t)n * sizeof *f->files))) { r->bad = "out of memory"; return; }
    f->cap_files = (uint32_t)n;
    for (uint32_t k = 0; k < n && !r->bad; k++) {
      kv_mf_get_file(r, &f->files[k]);
      f->n_files = k + 1;
    }
  }
}

/* Decode and apply one edit group to v. KV_OK, or KV_ERR_CORRUPT with `why` filled. */
static int replay_group(kv_version *v, uint32_t version, const uint8_t *p, size_t len, char *why,
                        size_t why_cap) {
  kv_mf_rbuf r = {p, p + len, NULL};
  uint64_t count = kv_mf_get_var(&r);
  for (uint64_t i = 0; i < count && !r.bad; i++) {
    if (r.p >= r.limit) { r.bad = "truncated edit"; break; }
    kv_edit e;
    memset(&e, 0, sizeof e);
    e.kind = *r.p++;
    kv_table_meta t;
    memset(&t, 0, sizeof t);
    int rc = KV_OK;
    switch (e.kind) {
    case KV_EDIT_ALTER_TABLE:
      if (version < 3) { r.bad = "ALTER_TABLE edit in a MANIFEST of format version 1 or 2"; break; }
      __attribute__((fallthrough)); /* the same fields as CREATE_TABLE */
    case KV_EDIT_CREATE_TABLE:
      kv_mf_get_table(&r, &t);
      e.table = &t;
      e.table_id = t.id;
      break;
    case KV_EDIT_DROP_TABLE: e.table_id = kv_mf_get_u32v(&r); break;
    case KV_EDIT_ADD_FILE:
      e.family_id = kv_mf_get_u32v(&r); kv_mf_get_file(&r, &e.file); e.flushed_seq = kv_mf_get_var(&r); break;
    case KV_EDIT_REMOVE_FILE: e.family_id = kv_mf_get_u32v(&r); e.file.number = kv_mf_get_var(&r); break;
    case KV_EDIT_SET_FLUSHED: e.family_id = kv_mf_get_u32v(&r); e.flushed_seq = kv_mf_get_var(&r); break;
    case KV_EDIT_SET_COUNTERS:
      e.next_file_number = kv_mf_get_var(&r); e.next_table_id = kv_mf_get_u32v(&r);
      e.next_family_id = kv_mf_get_u32v(&r); e.last_seq = kv_mf_get_var(&r); e.wal_number = kv_mf_get_var(&r);
      break;
    case KV_EDIT_LOG_POSITION:
      if (version < 2) { r.bad = "LOG_POSITION edit in a format version 1 MANIFEST"; break; }
      e.log_segment = kv_mf_get_var(&r); e.log_offset = kv_mf_get_var(&r); e.log_seq = kv_mf_get_var(&r);
      break;
    case KV_EDIT_SET_REGIONS:
      if (version < 4) { r.bad = "SET_REGIONS edit in a MANIFEST of format version 1, 2 or 3"; break; }
      kv_mf_get_regions(&r, &e);
      break;
    case KV_EDIT_SNAPSHOT: {
      kv_version nv;
      memset(&nv, 0, sizeof nv);
      nv.next_file_number = kv_mf_get_var(&r); nv.next_table_id = kv_mf_get_u32v(&r);
      nv.next_family_id = kv_mf_get_u32v(&r); nv.last_seq = kv_mf_get_var(&r); nv.wal_number = kv_mf_get_var(&r);
      uint64_t nt = kv_mf_get_var(&r);
      for (uint64_t k = 0; k < nt && !r.bad && rc == KV_OK; k++) {
        kv_mf_get_table(&r, &t);
        kv_edit ce = {.kind = KV_EDIT_CREATE_TABLE, .table = &t};
        if (!r.bad) rc = apply_one(&nv, &ce);
        kv_mf_table_free(&t);
      }
      if (!r.bad && rc == KV_OK) {
        kv_version_free(v);
        *v = nv;
      } else {
        kv_version_free(&nv);
      }
      e.kind = 0; /* applied */
      break;
    }
    default:
      r.bad = "unknown edit kind";
      break;
    }
    if (!r.bad && rc == KV_OK && e.kind) rc = apply_one(v, &e);
    kv_mf_table_free(&t);
    if (!r.bad && rc != KV_OK) {
      snprintf(why, why_cap, "edit does not apply (%s)", kv_errmsg());
      return KV_ERR_CORRUPT;
    }
  }
  if (!r.bad && r.p != r.limit) r.bad = "bytes after the last edit";
  if (r.bad) {
    snprintf(why, why_cap, "%s", r.bad);
    return KV_ERR_CORRUPT;
  }
  return KV_OK;
}

/* ---- the log file ---- */

static int corrupt_at(const char *path, uint64_t off, const char *why) {
  return kv_error(KV_ERR_CORRUPT, "corrupt MANIFEST record in %s at byte offset %llu: %s",
                  path, (unsigned long long)off, why);
}

int kv_mf_is_zero(const uint8_t *p, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (p[i]) return 0;
  return 1;
}

/* Replay the log bytes into v; *good gets the length of the good prefix (less than len when
** a torn tail was found), *version the header's format version. follow: the log of a store
** another process writes (kv_manifest_read): a final record whose checksum does not match is
** one being appended, left out like a torn tail. */
static int replay(const char *path, const uint8_t *buf, size_t len, kv_version *v, size_t *good,
                  uint32_t *version, bool follow) {
  size_t off = 0;
  int n = 0;
  char why[600];
  *good = 0;
  *version = 0;
  while (off < len) {
    size_t rem = len - off;
    const uint8_t *h = buf + off;
    int torn = 0;
    if (rem < KV_MF_REC_HEADER) {
      torn = 1;
    } else if (kv_get_u32le(h + 4) != (uint32_t)XXH3_64bits(h, 4)) {
      if (!kv_mf_is_zero(h, rem)) return corrupt_at(path, off, "bad record length (length check mismatch)");
      torn = 1;
    } else {
      uint32_t plen = kv_get_u32le(h);
      if (plen > KV_MF_MAX_RECORD) return corrupt_at(path, off, "record length over the maximum");
      if (plen > rem - KV_MF_REC_HEADER) {
        torn = 1;
      } else if (kv_get_u64le(h + 8) != XXH3_64bits(h + KV_MF_REC_HEADER, plen)) {
        /* Even on the final record: the store acts on a record once it is synced (it may
        ** have deleted the WAL it made redundant), so damage there is not a torn write. A
        ** reader beside the writer may see the record being appended: it waits for it. */
        if (!(follow && n > 0 && plen == rem - KV_MF_REC_HEADER))
          return corrupt_at(path, off, "checksum mismatch");
        torn = 1;
      } else if (n == 0) {
        if (plen != 12 || memcmp(h + KV_MF_REC_HEADER, KV_MF_MAGIC, 8) != 0)
          return corrupt_at(path, off, "not a Rowan MANIFEST (bad magic)");
        uint32_t ver = kv_get_u32le(h + KV_MF_REC_HEADER + 8);
        if (ver < KV_MF_VERSION_MIN || ver > KV_MF_VERSION) {
          snprintf(why, sizeof why, "unsupported MANIFEST format version %u", ver);
          return corrupt_at(path, off, why);
        }
        *version = ver;
      } else if (replay_group(v, *version, h + KV_MF_REC_HEADER, plen, why, sizeof why) != KV_OK) {
        return corrupt_at(path, off, why);
      }
      if (!torn) {
        off += KV_MF_REC_HEADER + plen;
        n++;
        continue;
      }
    }
    /* A torn tail: allowed after the header record only. */
    if (n == 0) return corrupt_at(path, off, "header record missing or cut short");
    break;
  }
  if (n == 0) return corrupt_at(path, 0, "header record missing or cut short");
  *good = off;
  return KV_OK;
}

static void default_version(kv_version *v) {
  memset(v, 0, sizeof *v);
  v->next_file_number = 1;
  v->next_table_id = 1;
  v->next_family_id = 1;
}

/* Write a fresh log holding the header record and a snapshot of v to path.tmp, sync it and
** rename it over path; *written gets its bytes. The directory is not synced here. */
static int write_image(kv_env *env, const char *path, const kv_version *v, size_t *written) {
  kv_mf_wbuf payload = {0}, out = {0};
  uint8_t hdr[12];
  memcpy(hdr, KV_MF_MAGIC, 8);
  kv_put_u32le(hdr + 8, KV_MF_VERSION);
  kv_mf_frame(&out, hdr, sizeof hdr);
  encode_snapshot(&payload, v);
  kv_mf_frame(&out, payload.p, payload.len);
  free(payload.p);
  if (out.oom || payload.oom) { free(out.p); return kv_mf_nomem(); }
  char tmp[4300];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  kv_file *f;
  int rc = env->open(env, tmp, KV_OPEN_WRITE | KV_OPEN_TRUNCATE, &f);
  if (rc == KV_OK) {
    rc = env->append(f, out.p, out.len);
    if (rc == KV_OK) rc = env->sync(f);
    env->close(f);
    if (rc == KV_OK) rc = env->rename(env, tmp, path);
    if (rc != KV_OK) env->remove(env, tmp);
  }
  *written = out.len;
  free(out.p);
  return rc;
}

/* Write a fresh log holding the header record and a snapshot of v to MANIFEST.tmp, sync it,
** rename it over MANIFEST, sync the directory, and reopen it for appending. */
static int rewrite(kv_manifest *m, const kv_version *v) {
  kv_env *env = m->env;
  size_t written = 0;
  int rc = write_image(env, m->path, v, &written);
  if (rc != KV_OK) return rc; /* the old log, if any, is untouched and still in use */
  /* From here the new log is the MANIFEST: switch to it. */
  if (m->f) env->close(m->f);
  m->f = NULL;
  m->size = written;
  m->base = written;
  rc = env->sync_dir(env, m->dir);
  if (rc == KV_OK) rc = env->open(env, m->path, KV_OPEN_WRITE, &m->f);
  if (rc != KV_OK) m->failed = rc;
  return rc;
}

int kv_manifest_write_snapshot(kv_env *env, const char *dir, const kv_version *v) {
  char path[4200];
  snprintf(path, sizeof path, "%s/MANIFEST", dir);
  size_t written = 0;
  int rc = write_image(env, path, v, &written);
  if (rc == KV_OK) rc = env->sync_dir(env, dir);
  return rc;
}

int kv_manifest_read(kv_env *env, const char *dir, kv_version *v, uint8_t **bytes,
                     uint64_t *len_out) {
  memset(v, 0, sizeof *v);
  if (bytes) *bytes = NULL;
  if (len_out) *len_out = 0;
  char path[4200];
  snprintf(path, sizeof path, "%s/MANIFEST", dir);
  uint8_t *buf;
  size_t len, good;
  uint32_t version;
  int rc = kv_env_read_all(env, path, &buf, &len);
  if (rc != KV_OK) return rc;
  default_version(v);
  rc = replay(path, buf, len, v, &good, &version, true);
  if (rc != KV_OK) {
    free(buf);
    kv_version_free(v);
    return rc;
  }
  if (len_out) *len_out = good;
  if (bytes) *bytes = buf;
  else free(buf);
  return KV_OK;
}

/* The cap one edit group sets (kv_manifest_changes_since), or UINT64_MAX; false when the
** group does not decode. */
static bool group_cap(const uint8_t *p, size_t len, uint64_t *cap) {
  kv_mf_rbuf r = {p, p + len, NULL};
  uint64_t count = kv_mf_get_var(&r), counters_seq = 0;
  bool ddl = false, counters = false, removes = false, bulk_add = false;
  for (uint64_t i = 0; i < count && !r.bad; i++) {
    if (r.p >= r.limit) return false;
    int kind = *r.p++;
    kv_file_meta f;
    kv_table_meta t;
    memset(&t, 0, sizeof t);
    switch (kind) {
      case KV_EDIT_CREATE_TABLE:
      case KV_EDIT_ALTER_TABLE: kv_mf_get_table(&r, &t); kv_mf_table_free(&t); ddl = true; break;
      case KV_EDIT_DROP_TABLE: kv_mf_get_u32v(&r); ddl = true; break;
      case KV_EDIT_ADD_FILE:
        kv_mf_get_u32v(&r); kv_mf_get_file(&r, &f);
        if (kv_mf_get_var(&r) == 0) bulk_add = true; /* no flushed_seq: not a flush */
        break;
      case KV_EDIT_REMOVE_FILE: kv_mf_get_u32v(&r); kv_mf_get_var(&r); removes = true; break;
      case KV_EDIT_SET_FLUSHED: kv_mf_get_u32v(&r); kv_mf_get_var(&r); break;
      case KV_EDIT_SET_COUNTERS:
        kv_mf_get_var(&r); kv_mf_get_u32v(&r); kv_mf_get_u32v(&r); counters_seq = kv_mf_get_var(&r); kv_mf_get_var(&r);
        counters = true;
        break;
      case KV_EDIT_LOG_POSITION: kv_mf_get_var(&r); kv_mf_get_var(&r); kv_mf_get_var(&r); break;
      case KV_EDIT_SET_REGIONS: { /* where regions end: not which rows there are */
        kv_edit e;
        kv_mf_get_regions(&r, &e);
        break;
      }
      default: return false; /* a snapshot, or unknown */
    }
  }
  if (r.bad) return false;
  *cap = UINT64_MAX;
  if (bulk_add && !removes) { /* a bulk load at counters_seq (a compaction removes files) */
    *cap = counters && counters_seq ? counters_seq - 1 : 0;
  } else if (ddl) {
    *cap = counters ? counters_seq : 0;
  }
  return true;
}

int kv_manifest_changes_since(kv_env *env, const char *dir, const uint8_t *bytes, uint64_t len,
                              uint64_t *cap, bool *rewritten) {
  *cap = UINT64_MAX;
  *rewritten = false;
  char path[4200];
  snprintf(path, sizeof path, "%s/MANIFEST", dir);
  uint8_t *buf;
  size_t n;
  int rc = kv_env_read_all(env, path, &buf, &n);
  if (rc != KV_OK) return rc;
  if (n < len || memcmp(buf, bytes, (size_t)len) != 0) {
    *rewritten = true;
    free(buf);
    return KV_OK;
  }
  /* the whole records after len; a cut or unchecked last one is not written yet */
  for (size_t off = (size_t)len; n - off >= KV_MF_REC_HEADER;) {
    const uint8_t *h = buf + off;
    uint32_t plen = kv_get_u32le(h);
    if (kv_get_u32le(h + 4) != (uint32_t)XXH3_64bits(h, 4) || plen > n - off - KV_MF_REC_HEADER ||
        kv_get_u64le(h + 8) != XXH3_64bits(h + KV_MF_REC_HEADER, plen))
      break;
    uint64_t c;
    if (!group_cap(h + KV_MF_REC_HEADER, plen, &c)) {
      *rewritten = true; /* a record it cannot read as a group: assume the worst */
      break;
    }
    if (c < *cap) *cap = c;
    off += KV_MF_REC_HEADER + plen;
  }
  free(buf);
  return KV_OK;
}

static int remove_stale_tmp(kv_env *env, const char *path) {
  char tmp[4300];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  if (!env->exists(env, tmp)) return KV_OK;
  return env->remove(env, tmp);
}

/* Open or create dir/MANIFEST and replay it into *v. See kv/db/manifest.h. Errors:
** KV_ERR_NOTFOUND (no MANIFEST and !create), KV_ERR_CORRUPT ("corrupt MANIFEST record in
** <path> at byte offset <n>: <why>"), env errors, KV_ERR_NOMEM. On failure *out is NULL and
** *v is empty (zeroed). A new MANIFEST starts with next_file_number, next_table_id and
** next_family_id at 1. A stale MANIFEST.tmp (a rewrite cut by a crash) is removed. */
int kv_manifest_open(kv_env *env, const char *dir, bool create, kv_manifest **out,
                     kv_version *v) {
  *out = NULL;
  memset(v, 0, sizeof *v);
  kv_manifest *m = calloc(1, sizeof *m);
  if (!m) return kv_mf_nomem();
  m->env = env;
  m->rewrite_at = DEFAULT_REWRITE_LIMIT;
  snprintf(m->dir, sizeof m->dir, "%s", dir);
  snprintf(m->path, sizeof m->path, "%s/MANIFEST", dir);
  int rc = remove_stale_tmp(env, m->path);
  if (rc == KV_OK && !env->exists(env, m->path)) {
    if (!create) {
      rc = kv_error(KV_ERR_NOTFOUND, "no MANIFEST in %s", dir);
    } else {
      default_version(v);
      rc = rewrite(m, v);
    }
  } else if (rc == KV_OK) {
    uint8_t *buf;
    size_t len, good;
    rc = kv_env_read_all(env, m->path, &buf, &len);
    if (rc == KV_OK) {
      uint32_t version = 0;
      default_version(v);
      rc = replay(m->path, buf, len, v, &good, &version, false);
      free(buf);
      if (rc == KV_OK) rc = env->open(env, m->path, KV_OPEN_WRITE, &m->f);
      if (rc == KV_OK && good < len) {
        /* Drop the torn tail durably, so the next record follows the last good one. */
        rc = env->truncate(m->f, good);
        if (rc == KV_OK) rc = env->sync(m->f);
      }
      m->size = good;
      /* A log of format 1 to 3 is rewritten in format 4 (the same version, one snapshot)
      ** before the first LOG_POSITION (format 2), ALTER_TABLE (3) or SET_REGIONS (4) edit
      ** could be appended: builds that read only older formats then refuse the store with
      ** "unsupported MANIFEST format version 4", not with an unknown edit in the middle. */
      if (rc == KV_OK && version < KV_MF_VERSION) rc = rewrite(m, v);
    }
  }
  if (rc != KV_OK) {
    if (m->f) env->close(m->f);
    free(m);
    kv_version_free(v);
    return rc;
  }
  *out = m;
  return KV_OK;
}

/* Apply a group of edits. See kv/db/manifest.h. The group is checked against a copy of *v
** first; if any edit does not apply, nothing is written and *v is unchanged (errors as
** apply_one: KV_ERR_NOTFOUND, KV_ERR_EXISTS, KV_ERR_INVALID; KV_EDIT_SNAPSHOT is internal and
** refused). Then one record is appended and synced (env errors; the log is truncated back
** when the append fails, or marked unusable if that fails or the sync fails), and only then
** is *v updated in place: pointers to tables and families stay valid unless a table is
** created or dropped. Past the rewrite limit the log is then rewritten as a snapshot; a
** failed rewrite is not an error of this call (the edit is durable either way). */
int kv_manifest_apply(kv_manifest *m, kv_version *v, const kv_edit *edits, int n_edits) {
  if (!m || !v || (n_edits > 0 && !edits)) return kv_error(KV_MISUSE, "MANIFEST: NULL argument");
  if (m->failed) return kv_error(m->failed, "MANIFEST %s is unusable after an earlier error", m->path);
  if (n_edits <= 0) return KV_OK;
  kv_version check;
  int rc = version_copy(&check, v);
  if (rc != KV_OK) return rc;
  for (int i = 0; i < n_edits && rc == KV_OK; i++) {
    if (edits[i].kind == KV_EDIT_SNAPSHOT)
      rc = kv_error(KV_ERR_INVALID, "MANIFEST: KV_EDIT_SNAPSHOT is written by the manifest itself");
    else
      rc = apply_one(&check, &edits[i]);
  }
  kv_version_free(&check);
  if (rc != KV_OK) return rc;

  kv_mf_wbuf payload = {0}, rec = {0};
  put_var(&payload, (uint64_t)n_edits);
  for (int i = 0; i < n_edits; i++) encode_edit(&payload, &edits[i]);
  kv_mf_frame(&rec, payload.p, payload.len);
  free(payload.p);
  if (payload.oom || rec.oom) { free(rec.p); return kv_mf_nomem(); }
  rc = m->env->append(m->f, rec.p, rec.len);
  if (rc == KV_OK) {
    rc = m->env->sync(m->f);
    if (rc != KV_OK) {
      /* The caller is told the edit failed (and may delete the files it names): take the
      ** record back out of the file as far as we can. Whether the bytes reached the disk
      ** is unknown after a failed sync, so the log stays unusable; the caller must not
      ** delete anything the old or the new state names until it reopens. */
      if (m->env->truncate(m->f, m->size) == KV_OK) m->env->sync(m->f);
      m->failed = rc;
    }
  } else if (m->env->truncate(m->f, m->size) != KV_OK) {
    m->failed = rc;
  }
  size_t rec_len = rec.len;
  free(rec.p);
  if (rc != KV_OK) return rc;
  m->size += rec_len;
  for (int i = 0; i < n_edits && rc == KV_OK; i++) rc = apply_one(v, &edits[i]);
  if (rc != KV_OK) return rc; /* only out of memory can get here */
  /* The edit is durable in the old log and, once renamed, in the new one: a failed rewrite
  ** is not this call's error (a failure after the rename makes the next call fail). */
  if (m->size > m->rewrite_at && m->size > 2 * m->base) rewrite(m, v);
  return KV_OK;
}

/* Set the log size past which it is rewritten as one snapshot (default 1 MiB). The log is
** also left to grow to twice the size of its last snapshot first, so a version larger than
** the limit is not rewritten after every edit. */
void kv_manifest_set_rewrite_limit(kv_manifest *m, uint64_t bytes) { m->rewrite_at = bytes; }

/* Bytes in the log now. */
uint64_t kv_manifest_size(const kv_manifest *m) { return m->size; }

/* Close the log (every record is already synced). NULL is a no-op. Returns the close
** status, or the earlier failure that made the log unusable. */
int kv_manifest_close(kv_manifest *m) {
  if (!m) return KV_OK;
  int rc = m->f ? m->env->close(m->f) : KV_OK;
  if (m->failed) rc = m->failed;
  free(m);
  return rc;
}
