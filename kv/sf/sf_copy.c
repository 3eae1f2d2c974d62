/*
** kv/sf/sf_copy.c: kv_sf_copy_blocks (kv/sf/sf_copy.h), minor compaction's copy of whole blocks.
** A block's on-disk bytes are read again with pread (as whole-block loads are, so a
** compaction does not make the file's pages resident), checked (length, checksum, raw size,
** section table) and appended to the output unchanged; what the output needs besides, its
** rows' bloom hashes and its last cell (the writer's order state), comes from the block's
** rows: from the iterator's decoded block for the block it stands on, else from the header,
** dictionary, rows and cells streams alone (kv_sf_block_head; for a sectioned block only
** section 0 is decompressed), checked against the block index (counts, first row).
** Not here: choosing what to copy against the other inputs (kv/db/compact.c), the writer's
** index and bloom filter (kv/sf/sf_write.c).
*/
#include "kv/sf/sf_copy.h"

#include "kv/util/bloom.h"
#include "kv/sf/sf_int.h"
#include "kv/sf/sf_iter_int.h"

typedef struct kv_sf_copy_state {
  kv_sfbuf frame;          /* the block's on-disk bytes */
  kv_sf_sections sec;      /* its section table */
  kv_sfbuf raw;            /* its rows part, decompressed */
  kv_sfbuf scratch;        /* a block that is not sectioned, decompressed whole */
  kv_sf_dblock d;          /* its header, dictionary and rows (kv_sf_block_head) */
  uint64_t *hashes;        /* its rows' bloom hashes */
  size_t hashes_cap;       /* entries allocated in hashes */
  uint8_t *key;            /* a row key rebuilt (blocks decoded by the iterator) */
  size_t key_cap;          /* bytes allocated in key */
} kv_sf_copy_state;

void kv_sf_copier_free(kv_sf_copier *c) {
  kv_sf_copy_state *s = c->st;
  if (s) {
    kv_sfbuf_free(&s->frame);
    kv_sf_sections_free(&s->sec);
    kv_sfbuf_free(&s->raw);
    kv_sfbuf_free(&s->scratch);
    kv_sf_dblock_free(&s->d);
    free(s->hashes);
    free(s->key);
    free(s);
  }
  memset(c, 0, sizeof *c);
}

/* Whether `it` stands on the first cell of its loaded block, decoded whole. */
static bool at_block_start(const sf_iter *it) {
  return it->valid && !it->partial && !it->proj && it->bi >= 0 && it->ci == 0 && it->b;
}

bool kv_sf_iter_at_block_start(kv_iter *it) { return at_block_start((sf_iter *)it); }

static int nomem(const kv_sf_reader *r) {
  return kv_error(KV_ERR_NOMEM, "out of memory copying a block of store file %s", r->path);
}

static int corrupt(const kv_sf_reader *r, uint32_t bi, const char *why) {
  return kv_error(KV_ERR_CORRUPT, "store file %s: block %u at offset %llu: %s", r->path, bi,
                  (unsigned long long)kv_sf_entry(r, bi).off, why);
}

/* Read block bi's bytes into s->frame and check them (its section table into s->sec);
** *how gets the compression byte. */
static int read_frame(kv_sf_copy_state *s, kv_sf_reader *r, uint32_t bi, uint8_t *how) {
  const kv_sf_index_entry e_v = kv_sf_entry(r, bi), *e = &e_v;
  s->frame.len = 0;
  if (kv_sfbuf_reserve(&s->frame, e->size)) return nomem(r);
  int rc = kv_sf_read_at(r, e->off, s->frame.p, e->size);
  if (rc) return rc;
  const char *why = NULL;
  rc = kv_sf_frame_open(s->frame.p, e->size, e->raw, &s->sec, how, &why);
  if (rc == KV_ERR_CORRUPT) return corrupt(r, bi, why);
  return rc ? nomem(r) : KV_OK;
}

static int grow_hashes(kv_sf_copy_state *s, const kv_sf_reader *r, size_t n) {
  return kv_sf_grow((void **)&s->hashes, &s->hashes_cap, n ? n : 1, sizeof *s->hashes)
             ? nomem(r) : KV_OK;
}

/* Block bi's rows and last cell without the iterator, its frame already in s->frame. */
static int read_rows(kv_sf_copy_state *s, kv_sf_reader *r, uint32_t bi, uint8_t how,
                     kv_cell *last) {
  const kv_sf_index_entry e_v = kv_sf_entry(r, bi), *e = &e_v;
  const uint8_t *raw = NULL;
  size_t len = 0;
  const char *why = NULL;
  int rc;
  if (how == KV_SF_STORED_SECTIONS) { /* section 0: header, dictionary, rows, cells */
    len = s->sec.raw_off[1];
    s->raw.len = 0;
    if (kv_sfbuf_reserve(&s->raw, len)) return nomem(r);
    rc = kv_sf_section_inflate(s->frame.p, &s->sec, 0, s->raw.p, &why);
    raw = s->raw.p;
  } else {
    rc = kv_sf_frame_inflate(s->frame.p, e->raw, &s->scratch, &raw, &len, &why);
  }
  if (rc == KV_ERR_CORRUPT) return corrupt(r, bi, why);
  if (rc) return nomem(r);
  const uint8_t *p = raw, *lim = raw + len;
  uint64_t min_seq = 0, v = 0, ts = 0, q = 0;
  rc = kv_sf_block_head(&s->d, &p, lim, &min_seq, &why);
  if (rc == KV_ERR_CORRUPT) return corrupt(r, bi, why);
  if (rc) return nomem(r);
  const kv_sf_dblock *d = &s->d;
  uint32_t n = d->ncells, nr = d->nrows;
  if (n != e->cells || nr != e->rows) return corrupt(r, bi, "counts disagree with the index");
  uint32_t fl;
  const uint8_t *fr = kv_sf_first_row(r, bi, &fl);
  if (kv_bytes_cmp(d->keys, d->row_off[1], fr, fl) != 0)
    return corrupt(r, bi, "first row disagrees with the block index");
  for (uint32_t i = 0; i < n && d->nquals > 1; i++) /* the cells streams: the last cell */
    if (!(p = kv_get_varint(p, lim, &q)) || q >= d->nquals)
      return corrupt(r, bi, "bad qualifier stream");
  for (uint32_t i = 0; i < n; i++) {
    if (!(p = kv_get_varint(p, lim, &v))) return corrupt(r, bi, "truncated timestamp stream");
    ts += (uint64_t)kv_unzigzag(v);
  }
  if ((size_t)(lim - p) < n || p[n - 1] > KV_DELETE_FAMILY)
    return corrupt(r, bi, "bad type stream");
  last->type = p[n - 1];
  p += n;
  for (uint32_t i = 0; i < n; i++)
    if (!(p = kv_get_varint(p, lim, &v))) return corrupt(r, bi, "truncated sequence stream");
  if (how == KV_SF_STORED_SECTIONS && p != lim)
    return corrupt(r, bi, "section 0 does not end with the cells");
  if ((rc = grow_hashes(s, r, nr)) != KV_OK) return rc;
  for (uint32_t i = 0; i < nr; i++)
    s->hashes[i] = kv_bloom_hash(d->keys + d->row_off[i], d->row_off[i + 1] - d->row_off[i]);
  last->row = d->keys + d->row_off[nr - 1];
  last->row_len = d->row_off[nr] - d->row_off[nr - 1];
  last->qual = d->q_ptr[q];
  last->qual_len = d->q_len[q];
  last->ts = (int64_t)ts;
  last->seq = min_seq + v;
  return KV_OK;
}

/* The rows and last cell of the block `it` has decoded. */
static int iter_rows(kv_sf_copy_state *s, sf_iter *it, kv_cell *last) {
  const kv_sf_cblock *b = it->b;
  if (grow_hashes(s, it->r, b->nrows) ||
      kv_sf_grow((void **)&s->key, &s->key_cap, (size_t)b->max_key + 1, 1))
    return nomem(it->r);
  uint32_t len = 0;
  const uint8_t *k = NULL;
  for (uint32_t i = 0; i < b->nrows; i++) {
    k = kv_sf_cblock_key(b, i, s->key, &len);
    s->hashes[i] = kv_bloom_hash(k, len);
  }
  uint32_t ci = b->ncells - 1, q = (uint32_t)kv_sf_pa_get(&b->qual, ci);
  last->row = k; /* the last row's key, from the loop */
  last->row_len = len;
  last->qual = b->dict + b->q_off[q];
  last->qual_len = b->q_len[q];
  last->ts = kv_sf_cblock_ts(b, b->nrows - 1, ci);
  last->seq = kv_sf_pa_get(&b->seq, ci);
  last->type = (uint8_t)kv_sf_pa_get(&b->type, ci);
  return KV_OK;
}

/* Copy block bi of r: its rows from `it` when it has the block decoded, else read here. */
static int copy_one(kv_sf_copier *c, kv_sf_writer *w, kv_sf_reader *r, uint32_t bi,
                    sf_iter *it) {
  kv_sf_copy_state *s = c->st;
  kv_cell last = {0};
  uint8_t how = 0;
  int rc = it ? iter_rows(s, it, &last) : KV_OK;
  if (rc == KV_OK) rc = read_frame(s, r, bi, &how);
  if (rc == KV_OK && !it) {
    rc = read_rows(s, r, bi, how, &last);
    c->rows_read++;
  }
  if (rc) return rc;
  const kv_sf_index_entry e_v = kv_sf_entry(r, bi), *e = &e_v;
  kv_cell first;
  kv_sf_first_cell(r, bi, &first);
  kv_sf_framed f = {s->frame.p, e->size, e->raw, e->cells, e->rows, &first, &last,
                    s->hashes, r->props.format_version >= 3};
  return kv_sf_writer_add_framed(w, &f);
}

/* Whether the block index alone shows every row of block bi below the bound: the next
** block's first row (the file's last row for the last block) sorts below it. */
static bool index_below(const kv_sf_reader *r, uint32_t bi, const uint8_t *bound,
                        uint32_t bound_len) {
  if (!bound) return true;
  if (bi + 1 < r->nblocks) {
    uint32_t nf_len;
    const uint8_t *nf_row = kv_sf_first_row(r, bi + 1, &nf_len);
    return kv_bytes_cmp(nf_row, nf_len, bound, bound_len) < 0;
  }
  const uint8_t *first, *lastr;
  uint32_t fl, ll;
  kv_sf_key_range(r, &first, &fl, &lastr, &ll);
  return lastr && kv_bytes_cmp(lastr, ll, bound, bound_len) < 0;
}

int kv_sf_copy_blocks(kv_sf_copier *c, kv_sf_writer *w, kv_iter *base, const uint8_t *bound,
                      uint32_t bound_len, uint64_t *copied) {
  sf_iter *it = (sf_iter *)base;
  kv_sf_reader *r = it->r;
  *copied = 0;
  if (!c->st && at_block_start(it) && !(c->st = calloc(1, sizeof *c->st))) return nomem(r);
  while (at_block_start(it)) {
    const kv_sf_cblock *b = it->b;
    if (bound && kv_sf_cblock_key_cmp(b, b->nrows - 1, bound, bound_len) >= 0) break;
    uint32_t bi = (uint32_t)it->bi;
    int rc = copy_one(c, w, r, bi, it);
    for (bi++, (*copied)++;
         rc == KV_OK && bi < r->nblocks && index_below(r, bi, bound, bound_len);
         bi++, (*copied)++)
      rc = copy_one(c, w, r, bi, NULL);
    if (rc) return rc;
    if (bi >= r->nblocks) { /* past the file's end */
      it->valid = false;
      break;
    }
    kv_cell first;
    kv_sf_first_cell(r, bi, &first);
    base->ops->seek(base, &first);
    if (!base->ops->valid(base)) return base->ops->status(base);
  }
  return KV_OK;
}
