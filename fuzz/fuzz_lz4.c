/*
** fuzz/fuzz_lz4.c: libFuzzer target for Rowan's lz4 block decoder (kv/util/lz4dec.c), the decoder
** of every compressed store file block and section, against liblz4's. The input's first two
** bytes are an output size (little-endian, at most 65,535), the rest an lz4 block. The
** decoder must never read or write outside the input and an exact-size output buffer; when
** liblz4's LZ4_decompress_safe decodes the block to exactly that size, ours must decode it
** to the same bytes, unless the block holds a match at offset 0 (corrupt by the format;
** liblz4 lets it through, ours refuses it); and whatever ours accepts, liblz4 accepts too
** with the same bytes (ours is never the more lenient on bytes liblz4 rejects, bar the end
** rules liblz4 adds: last five bytes literals, no match starting in the last twelve).
** Not here: framing and sections (fuzz_frame), raw block decoding (fuzz_block).
*/
#include <lz4.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kv/util/lz4dec.h"

/* Whether the block's sequences (walked as far as they parse) hold a match at offset 0. */
static bool zero_offset(const uint8_t *z, size_t zl) {
  size_t i = 0;
  while (i < zl) {
    unsigned t = z[i++];
    size_t ll = t >> 4;
    if (ll == 15)
      for (unsigned x = 255; x == 255 && i < zl; ll += x) x = z[i++];
    i += ll;
    if (i + 2 > zl) return false;
    if (z[i] == 0 && z[i + 1] == 0) return true;
    i += 2;
    if ((t & 15) == 15)
      for (unsigned x = 255; x == 255 && i < zl;) x = z[i++];
  }
  return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2) return 0;
  size_t n = (size_t)data[0] | (size_t)data[1] << 8, zl = size - 2;
  uint8_t *z = malloc(zl ? zl : 1), *a = malloc(n ? n : 1), *b = malloc(n ? n : 1);
  if (!z || !a || !b) abort();
  memcpy(z, data + 2, zl);
  bool ours = kv_lz4_decode(z, zl, b, n);
  int m = zl ? LZ4_decompress_safe((const char *)z, (char *)a, (int)zl, (int)n) : -1;
  bool theirs = m >= 0 && (size_t)m == n;
  if (theirs && !zero_offset(z, zl) && (!ours || (n && memcmp(a, b, n)))) abort();
  if (ours && m >= 0 && ((size_t)m != n || (n && memcmp(a, b, n)))) abort();
  free(z);
  free(a);
  free(b);
  return 0;
}
