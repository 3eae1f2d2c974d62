/*
** kv/util/lz4dec.h: Rowan's own decoder of the lz4 block format, the format of every compressed
** store file block and section (docs/FORMAT.md Part 2, "Data block on disk"; written by
** liblz4's LZ4_compress_default, whose output it decodes byte for byte as liblz4's
** LZ4_decompress_safe does).
**
** Why not liblz4's decoder: a store file block's section 0 and its value groups' high bytes
** are mostly long runs of one byte (zero timestamp deltas, cell types and sequence numbers;
** exponent bytes), which lz4 stores as matches at offset 1 or 2. liblz4 writes those eight
** bytes at a time; this decoder fills them as memset does and copies a short period by
** doubling. Measured on the 10x archive's readings blocks (59 KB raw, 10.5 KB stored): a
** block's section 0 (22 KB, mostly such runs) in ~1.3 us instead of ~5.2 us, its value
** groups within ~10% of liblz4; a key-family block (22 KB) in ~0.5 us instead of ~8.7 us.
** Input is untrusted: every read is bounded by the input and
** every write by the output, and anything that does not decode to exactly the size asked
** for is refused. Not here: framing, checksums, sections (kv/sf/sf_frame.c), compression.
*/
#ifndef ROWAN_KV_LZ4DEC_H
#define ROWAN_KV_LZ4DEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Decode the lz4 block [src, src+src_len) into [dst, dst+dst_len): true when it decodes to
** exactly dst_len bytes using exactly all of its input, false otherwise (truncated, a match
** before the output's start, more output than dst_len, fewer bytes than dst_len). On false
** dst's content is unspecified. Bytes of dst are written only below dst + dst_len. */
bool kv_lz4_decode(const uint8_t *src, size_t src_len, uint8_t *dst, size_t dst_len);

#endif /* ROWAN_KV_LZ4DEC_H */
