/*
** fuzz/fuzz_block.c: libFuzzer target for the store-file block decoder. The input is taken
** as a raw (already decompressed, checksum-verified) block, the bytes a damaged or hostile
** file could present after its checksum matched. Decoding must either fail with
** KV_ERR_CORRUPT or give cells that can all be read within the input; never crash or read
** out of bounds. The compact decoder the block cache uses (kv/sf_cblock.h) must accept or
** refuse exactly the same inputs, and pack what it accepts. It does not exercise framing or
** checksums (fuzz_storefile does).
*/
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kv/sf_cblock.h"
#include "kv/sf_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  kv_sf_dblock d;
  memset(&d, 0, sizeof d);
  const char *why = NULL;
  int rc = kv_sf_block_decode(&d, data, size, &why);
  kv_sf_cdec w;
  memset(&w, 0, sizeof w);
  const char *cwhy = NULL;
  int crc = kv_sf_cblock_decode(&w, data, size, &cwhy);
  if ((rc == KV_OK) != (crc == KV_OK)) __builtin_trap(); /* the two decoders disagree */
  if (crc == KV_OK) free(kv_sf_cblock_pack(&w));
  kv_sf_cdec_free(&w);
  if (rc == KV_OK) {
    volatile uint64_t sink = 0;
    for (uint32_t r = 0; r < d.nrows; r++) {
      for (uint32_t c = d.row_first[r]; c < d.row_first[r + 1]; c++) {
        kv_cell cell;
        kv_sf_dblock_cell(&d, r, c, &cell);
        for (uint32_t i = 0; i < cell.row_len; i++) sink += cell.row[i];
        for (uint32_t i = 0; i < cell.qual_len; i++) sink += cell.qual[i];
        for (uint32_t i = 0; i < cell.value_len; i++) sink += cell.value[i];
      }
    }
    (void)sink;
  }
  kv_sf_dblock_free(&d);
  return 0;
}
