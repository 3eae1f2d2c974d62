/*
** kv/sf/sf_frame.c: a store file block's framing on disk (docs/FORMAT.md Part 2, "Data block
** on disk"): the 9-byte header (compression byte, raw size, stored size), the stored bytes
** and the XXH3-64 checksum; writing it (kv_sf_frame_block, kv_sf_frame_block_cut) and
** checking and opening it (kv_sf_unframe_block; or kv_sf_frame_open, then kv_sf_frame_inflate
** or kv_sf_section_inflate).
**
** A raw block is stored in one of three ways: as it is (byte 0), lz4-compressed whole (byte
** 1), or cut into sections, each lz4-compressed on its own (byte 2, format version 2): the
** rows and cells sections together, then each value group. A reader that needs only some
** value groups (the columnar aggregate, kv/colscan/colscan_block.c) decompresses section 0 and
** those groups' sections; every other reader decompresses all sections back to back, which
** gives the same raw block bytes as the other two forms, so the raw block decoders do not
** know how a block was stored. Every length read here is checked before it is used: a
** damaged frame is KV_ERR_CORRUPT, never a read past the block. lz4 data is decoded by
** kv/util/lz4dec.c (long runs of one byte, common in blocks, several times faster than liblz4's
** decoder); liblz4 compresses.
** Not here: encoding the raw block (kv/sf/sf_block.c), decoding it (kv/sf/sf_decode.c,
** kv/sf/sf_cblock.c, kv/sf/sf_point.c), file I/O (kv/sf/sf_write.c, kv/sf/sf_read.c).
*/
#include <lz4.h>
#include <xxhash.h>
#include "kv/util/coding.h"
#include "kv/util/lz4dec.h"
#include "kv/sf/sf_int.h"
#include "kv/util/status.h"

/* Header and checksum around `stored` payload bytes already at out->p + out->len + 9. */
static void seal(kv_sfbuf *out, uint8_t how, size_t raw_len, size_t stored) {
  uint8_t *hdr = out->p + out->len;
  hdr[0] = how;
  kv_put_u32le(hdr + 1, (uint32_t)raw_len);
  kv_put_u32le(hdr + 5, (uint32_t)stored);
  kv_put_u64le(hdr + KV_SF_BLOCK_HEADER + stored,
               XXH3_64bits(hdr, KV_SF_BLOCK_HEADER + stored));
  out->len += KV_SF_BLOCK_OVERHEAD + stored;
}

int kv_sf_frame_block(const uint8_t *raw, size_t raw_len, int compression, kv_sfbuf *out) {
  int bound = LZ4_compressBound((int)raw_len);
  size_t room = KV_SF_BLOCK_OVERHEAD + (raw_len > (size_t)bound ? raw_len : (size_t)bound);
  if (kv_sfbuf_reserve(out, room)) return KV_ERR_NOMEM;
  uint8_t *payload = out->p + out->len + KV_SF_BLOCK_HEADER;
  uint8_t how = KV_SF_STORED_RAW;
  size_t stored = raw_len;
  if (compression == KV_COMPRESSION_LZ4 && raw_len > 0 && bound > 0) {
    int n = LZ4_compress_default((const char *)raw, (char *)payload, (int)raw_len, bound);
    if (n > 0 && (size_t)n < raw_len) { how = KV_SF_STORED_LZ4; stored = (size_t)n; }
  }
  if (how == KV_SF_STORED_RAW && raw_len) memcpy(payload, raw, raw_len);
  seal(out, how, raw_len, stored);
  return KV_OK;
}

int kv_sf_frame_block_cut(const uint8_t *raw, size_t raw_len, const uint32_t *cuts,
                          size_t ncuts, int compression, kv_sfbuf *out) {
  size_t nsec = ncuts + 1;
  bool usable = compression == KV_COMPRESSION_LZ4 && ncuts > 0 &&
                raw_len >= KV_SF_SECTION_MIN_RAW && nsec <= KV_SF_MAX_SECTIONS &&
                raw_len <= KV_SF_MAX_RAW_BLOCK;
  for (size_t i = 0; usable && i < ncuts; i++)
    usable = cuts[i] > (i ? cuts[i - 1] : 0) && cuts[i] < raw_len;
  if (!usable) return kv_sf_frame_block(raw, raw_len, compression, out);
  /* room: header, table (two varints of at most 5 bytes a section), every section's bound */
  size_t room = KV_SF_BLOCK_OVERHEAD + 5 + nsec * 10;
  for (size_t k = 0; k < nsec; k++) {
    size_t a = k ? cuts[k - 1] : 0, b = k < ncuts ? cuts[k] : raw_len;
    room += (size_t)LZ4_compressBound((int)(b - a));
  }
  size_t base = out->len;
  if (kv_sfbuf_reserve(out, room)) return KV_ERR_NOMEM;
  /* the table's size is known only after compressing: compress after a table of maximal
  ** size, then move the sections down behind the real table */
  uint8_t *payload = out->p + base + KV_SF_BLOCK_HEADER;
  uint8_t *data = payload + 5 + nsec * 10, *d = data;
  uint8_t *t = kv_put_varint(payload, nsec);
  for (size_t k = 0; k < nsec; k++) {
    size_t a = k ? cuts[k - 1] : 0, b = k < ncuts ? cuts[k] : raw_len, len = b - a;
    int n = LZ4_compress_default((const char *)raw + a, (char *)d, (int)len,
                                 LZ4_compressBound((int)len));
    size_t st = len;
    if (n > 0 && (size_t)n < len) st = (size_t)n;
    else memcpy(d, raw + a, len);
    d += st;
    t = kv_put_varint(t, len);
    t = kv_put_varint(t, st);
  }
  size_t data_len = (size_t)(d - data);
  size_t stored = (size_t)(t - payload) + data_len;
  if (stored >= raw_len) return kv_sf_frame_block(raw, raw_len, compression, out);
  memmove(t, data, data_len);
  seal(out, KV_SF_STORED_SECTIONS, raw_len, stored);
  return KV_OK;
}

/* Read the section table of a sectioned block's payload [p, lim) whose raw size is raw:
** checks it and, when sec is not NULL, fills sec's offsets (disk offsets relative to
** `disk`). *data gets the first section byte. NULL reason on success. */
static const char *read_table(const uint8_t *disk, const uint8_t *p, const uint8_t *lim,
                              uint32_t raw, kv_sf_sections *sec, const uint8_t **data,
                              uint32_t *nsec) {
  uint64_t n = 0, rl = 0, sl = 0, rsum = 0, ssum = 0;
  if (!(p = kv_get_varint(p, lim, &n)) || n < 2 || n > KV_SF_MAX_SECTIONS)
    return "bad section count";
  if (sec && (size_t)n + 1 > sec->cap) {
    uint32_t *a = realloc(sec->raw_off, ((size_t)n + 1) * sizeof *a);
    if (!a) return "";
    sec->raw_off = a;
    uint32_t *b = realloc(sec->disk_off, ((size_t)n + 1) * sizeof *b);
    if (!b) return "";
    sec->disk_off = b;
    sec->cap = (size_t)n + 1;
  }
  const uint8_t *t = p;
  for (uint64_t k = 0; k < n; k++) { /* sizes first: the data starts after the table */
    if (!(t = kv_get_varint(t, lim, &rl)) || !(t = kv_get_varint(t, lim, &sl)))
      return "truncated section table";
    if (rl == 0 || sl == 0 || sl > rl || rl > raw) return "bad section size";
    rsum += rl;
    ssum += sl;
    if (rsum > raw) return "sections add up to more than the raw size";
  }
  if (rsum != raw) return "sections do not add up to the raw size";
  if (ssum != (uint64_t)(lim - t)) return "sections do not add up to the stored size";
  *data = t;
  *nsec = (uint32_t)n;
  if (sec) {
    uint64_t ro = 0, dof = (uint64_t)(t - disk);
    for (uint64_t k = 0; k < n; k++) {
      p = kv_get_varint(p, lim, &rl);
      p = kv_get_varint(p, lim, &sl);
      sec->raw_off[k] = (uint32_t)ro;
      sec->disk_off[k] = (uint32_t)dof;
      ro += rl;
      dof += sl;
    }
    sec->raw_off[n] = (uint32_t)ro;
    sec->disk_off[n] = (uint32_t)dof;
    sec->n = (uint32_t)n;
  }
  return NULL;
}

/* The checks every reader makes, in order: length, checksum, raw size, compression byte. */
static const char *check_frame(const uint8_t *disk, size_t disk_len, uint32_t expect_raw) {
  if (disk_len < KV_SF_BLOCK_OVERHEAD) return "shorter than a block header and checksum";
  if ((uint64_t)kv_get_u32le(disk + 5) + KV_SF_BLOCK_OVERHEAD != disk_len)
    return "stored size disagrees with the block index";
  size_t stored = kv_get_u32le(disk + 5);
  if (XXH3_64bits(disk, KV_SF_BLOCK_HEADER + stored) !=
      kv_get_u64le(disk + KV_SF_BLOCK_HEADER + stored))
    return "checksum mismatch";
  if (kv_get_u32le(disk + 1) != expect_raw) return "raw size disagrees with the block index";
  if (disk[0] == KV_SF_STORED_RAW && stored != expect_raw)
    return "raw block with stored size unequal to raw size";
  if (disk[0] > KV_SF_STORED_SECTIONS) return "unknown compression byte";
  return NULL;
}

static const char *inflate_one(const uint8_t *src, size_t st, uint8_t *dst, size_t rl) {
  if (st == rl) {
    memcpy(dst, src, rl);
    return NULL;
  }
  return kv_lz4_decode(src, st, dst, rl) ? NULL : "lz4 section does not decompress to its raw size";
}

int kv_sf_frame_open(const uint8_t *disk, size_t disk_len, uint32_t expect_raw,
                     kv_sf_sections *sec, uint8_t *how, const char **why) {
  sec->n = 0;
  const char *w = check_frame(disk, disk_len, expect_raw);
  if (!w) {
    *how = disk[0];
    if (disk[0] != KV_SF_STORED_SECTIONS) return KV_OK;
    const uint8_t *data;
    uint32_t n;
    w = read_table(disk, disk + KV_SF_BLOCK_HEADER, disk + disk_len - KV_SF_BLOCK_CHECKSUM,
                   expect_raw, sec, &data, &n);
    if (w && !*w) return KV_ERR_NOMEM;
    if (!w) return KV_OK;
  }
  *why = w;
  return KV_ERR_CORRUPT;
}

int kv_sf_section_inflate(const uint8_t *disk, const kv_sf_sections *sec, uint32_t k,
                          uint8_t *raw, const char **why) {
  const char *w = inflate_one(disk + sec->disk_off[k], sec->disk_off[k + 1] - sec->disk_off[k],
                              raw + sec->raw_off[k], sec->raw_off[k + 1] - sec->raw_off[k]);
  if (!w) return KV_OK;
  *why = w;
  return KV_ERR_CORRUPT;
}

int kv_sf_frame_cuts(const uint8_t *disk, size_t disk_len, uint32_t **cuts, size_t *cap,
                     size_t *ncuts) {
  *ncuts = 0;
  if (disk_len < KV_SF_BLOCK_OVERHEAD || disk[0] != KV_SF_STORED_SECTIONS) return KV_OK;
  const uint8_t *p = disk + KV_SF_BLOCK_HEADER, *lim = disk + disk_len - KV_SF_BLOCK_CHECKSUM;
  uint64_t n = 0, rl = 0, sl = 0, ro = 0;
  if (!(p = kv_get_varint(p, lim, &n)) || n < 2) return KV_OK;
  if (kv_sf_grow((void **)cuts, cap, (size_t)n, sizeof **cuts)) return KV_ERR_NOMEM;
  for (uint64_t k = 0; k + 1 < n; k++) {
    if (!(p = kv_get_varint(p, lim, &rl)) || !(p = kv_get_varint(p, lim, &sl))) break;
    ro += rl;
    (*cuts)[(*ncuts)++] = (uint32_t)ro;
  }
  return KV_OK;
}

void kv_sf_sections_free(kv_sf_sections *sec) {
  free(sec->raw_off);
  free(sec->disk_off);
  memset(sec, 0, sizeof *sec);
}

/* The whole raw block of a frame that passed check_frame: points into disk when stored
** raw, else decompressed into scratch. NULL reason on success; "" when out of memory. */
static const char *inflate_frame(const uint8_t *disk, uint32_t expect_raw, kv_sfbuf *scratch,
                                 const uint8_t **raw, size_t *raw_len) {
  size_t stored = kv_get_u32le(disk + 5);
  if (disk[0] == KV_SF_STORED_RAW) {
    *raw = disk + KV_SF_BLOCK_HEADER;
    *raw_len = stored;
    return NULL;
  }
  scratch->len = 0;
  if (kv_sfbuf_reserve(scratch, expect_raw ? expect_raw : 1)) return "";
  const char *why = NULL;
  if (disk[0] == KV_SF_STORED_LZ4) {
    if (!kv_lz4_decode(disk + KV_SF_BLOCK_HEADER, stored, scratch->p, expect_raw))
      why = "lz4 data does not decompress to its raw size";
  } else { /* sections: the table is checked whole, then each section decompressed */
    const uint8_t *p = disk + KV_SF_BLOCK_HEADER, *lim = p + stored, *data = NULL;
    uint32_t nsec = 0;
    why = read_table(disk, p, lim, expect_raw, NULL, &data, &nsec);
    uint64_t n = 0, rl = 0, sl = 0;
    if (!why) p = kv_get_varint(p, lim, &n);
    uint8_t *dst = scratch->p;
    for (uint32_t k = 0; !why && k < nsec; k++) {
      p = kv_get_varint(p, lim, &rl);
      p = kv_get_varint(p, lim, &sl);
      why = inflate_one(data, (size_t)sl, dst, (size_t)rl);
      data += sl;
      dst += rl;
    }
  }
  if (why) return why;
  *raw = scratch->p;
  *raw_len = expect_raw;
  return NULL;
}

int kv_sf_frame_inflate(const uint8_t *disk, uint32_t expect_raw, kv_sfbuf *scratch,
                        const uint8_t **raw, size_t *raw_len, const char **why) {
  const char *w = inflate_frame(disk, expect_raw, scratch, raw, raw_len);
  if (!w) return KV_OK;
  if (!*w) return KV_ERR_NOMEM;
  *why = w;
  return KV_ERR_CORRUPT;
}

int kv_sf_unframe_block(const uint8_t *disk, size_t disk_len, uint32_t expect_raw,
                        kv_sfbuf *scratch, const uint8_t **raw, size_t *raw_len,
                        const char *path, uint64_t off) {
  const char *why = check_frame(disk, disk_len, expect_raw);
  if (!why) why = inflate_frame(disk, expect_raw, scratch, raw, raw_len);
  if (!why) return KV_OK;
  if (!*why) return KV_ERR_NOMEM;
  return kv_error(KV_ERR_CORRUPT, "store file %s: block at offset %llu: %s", path,
                  (unsigned long long)off, why);
}
