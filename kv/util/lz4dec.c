/*
** kv/util/lz4dec.c: the lz4 block decoder of kv/util/lz4dec.h.
**
** The lz4 block format (as liblz4 documents it) is a run of sequences. Each starts with a
** token byte: its high four bits are a literal count, its low four bits a match length less
** 4; a field of 15 goes on in further bytes, each added, until one below 255. Then come the
** literals, copied to the output as they are; then, except in the last sequence (which ends
** the input right after its literals), a two-byte little-endian offset (1 or more, at most
** the bytes already decoded) and the match: the match length bytes copied from `offset`
** bytes back in the output, one at a time in meaning, so a match longer than its offset
** repeats its first `offset` bytes.
**
** How the copies are made: the common sequence (at most 14 literals, a match of at most 18
** bytes at offset 8 or more) far from both buffers' ends by fixed moves and no other check
** than the offset's; otherwise short literal runs and short far matches by fixed 16-byte moves
** when both buffers have room past them (the bytes written past the copy are rewritten by
** the next sequences or the decode fails); a match at offset 1 by memset; one at offsets 2
** to 15 by copying the period, then twice as much, and so on (each copy reads only bytes
** already final); a far one (offset 16 or more) by 16-byte steps or memcpy. Every length is
** checked against both buffers' ends before a byte moves. Not here: framing, checksums.
*/
#include <stdbool.h>
#include <string.h>
#include "kv/util/coding.h"
#include "kv/util/lz4dec.h"

#define MINMATCH 4u

/* Add a length field's extension bytes at *ip to *len: false when the input ends first or
** the length passes `max` (the caller's bound, so the sum cannot overflow). */
static inline bool ext_len(const uint8_t **ip, const uint8_t *iend, size_t *len, size_t max) {
  const uint8_t *p = *ip;
  unsigned x;
  do {
    if (p >= iend) return false;
    x = *p++;
    *len += x;
    if (*len > max) return false;
  } while (x == 255);
  *ip = p;
  return true;
}

/* Copy ml bytes to op from off bytes before it (op - off is inside the output), the bytes
** after op up to oend being free to write. */
static inline void match_copy(uint8_t *op, size_t off, size_t ml, const uint8_t *oend) {
  const uint8_t *m = op - off;
  if (off >= 16) {
    if (ml <= 32 && (size_t)(oend - op) >= 32) { /* m + 32 <= op + 16: the second move reads
                                                     what the first wrote */
      memcpy(op, m, 16);
      memcpy(op + 16, m + 16, 16);
    } else if (off >= ml) {
      memcpy(op, m, ml);
    } else {
      size_t i = 0;
      for (; i + 16 <= ml; i += 16) memcpy(op + i, m + i, 16);
      for (; i < ml; i++) op[i] = m[i];
    }
  } else if ((off == 2 || off == 4) && ml <= 64 && (size_t)(oend - op) >= ml + 8) {
    /* a short match at offset 2 or 4 (a transposed column's alternating high bytes): its
       period spread over a word, stored 8 bytes at a time (at most 8 past the match) */
    uint64_t v = off == 2 ? (uint64_t)(m[0] | (unsigned)m[1] << 8) * 0x0001000100010001ull
                          : (uint64_t)kv_get_u32le(m) * 0x0000000100000001ull;
    for (size_t i = 0; i < ml; i += 8) kv_put_u64le(op + i, v);
  } else if (off == 1) {
    memset(op, *m, ml);
  } else if (ml <= 32 && (size_t)(oend - op) >= ml + 8) {
    /* the first 16 bytes one at a time, then 8-byte moves from a multiple of the period
       back (p >= 8: each move reads bytes already final) */
    size_t i = 0, lim = ml < 16 ? ml : 16, p = off * (16 / off);
    for (; i < lim; i++) op[i] = m[i];
    for (; i < ml; i += 8) memcpy(op + i, op + i - p, 8);
  } else {
    /* [m, op + done) repeats with period off and done is a multiple of off, so copying
       from m continues the pattern; k <= done + off keeps the two ranges apart */
    size_t done = 0;
    while (done < ml) {
      size_t k = ml - done < done + off ? ml - done : done + off;
      memcpy(op + done, m, k);
      done += k;
    }
  }
}

bool kv_lz4_decode(const uint8_t *src, size_t src_len, uint8_t *dst, size_t dst_len) {
  const uint8_t *ip = src, *const iend = src + src_len;
  uint8_t *op = dst, *const oend = dst + dst_len;
  if (!src_len) return false;
  for (;;) {
    /* the common sequence, far from both ends: at most 14 literals and a match of at most
       18 bytes at an offset of 8 or more, copied by fixed moves without further checks
       (32 input and 48 output bytes of room: neither the literals nor the offset can be
       the input's last bytes, nor the moves pass the output's end) */
    if (iend - ip >= 32 && oend - op >= 48 && (*ip >> 4) < 15 && (*ip & 15) < 15) {
      unsigned token = *ip++;
      size_t ll = token >> 4;
      memcpy(op, ip, 16);
      ip += ll;
      op += ll;
      size_t off = (size_t)ip[0] | (size_t)ip[1] << 8;
      ip += 2;
      if (off >= 8 && off <= (size_t)(op - dst)) {
        const uint8_t *m = op - off;
        memcpy(op, m, 8);
        memcpy(op + 8, m + 8, 8);
        memcpy(op + 16, m + 16, 8);
        op += (token & 15u) + MINMATCH;
        continue;
      }
      if (off == 0 || off > (size_t)(op - dst)) return false;
      size_t ml = (token & 15u) + MINMATCH;
      match_copy(op, off, ml, oend);
      op += ml;
      continue;
    }
    if (ip >= iend) return false;
    unsigned token = *ip++;
    size_t ll = token >> 4;
    if (ll == 15 && !ext_len(&ip, iend, &ll, src_len)) return false;
    if (ll > (size_t)(iend - ip) || ll > (size_t)(oend - op)) return false;
    if (ll <= 16 && iend - ip >= 16 && oend - op >= 16) memcpy(op, ip, 16);
    else memcpy(op, ip, ll);
    ip += ll;
    op += ll;
    if (ip == iend) return op == oend; /* the last sequence: literals only */
    if (iend - ip < 2) return false;
    size_t off = (size_t)ip[0] | (size_t)ip[1] << 8;
    ip += 2;
    if (off == 0 || off > (size_t)(op - dst)) return false;
    size_t ml = token & 15u;
    if (ml == 15 && !ext_len(&ip, iend, &ml, dst_len)) return false;
    ml += MINMATCH;
    if (ml > (size_t)(oend - op)) return false;
    match_copy(op, off, ml, oend);
    op += ml;
  }
}
