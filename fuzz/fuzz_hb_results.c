/*
** fuzz/fuzz_hb_results.c: libFuzzer target for the hand reader of the Thrift2 gateway's row
** replies (kv/backend/hbase/hb_results.c: getScannerRows' list<TResult>, get's TResult, the
** exceptions), which parses bytes from the network. The input's first byte picks the call
** (bit 0: get, else getScannerRows) and the size of the chunks the bytes arrive in (bits 1-7:
** 1 to 128 bytes; 0 means the rest at once), the rest is the reply. Whatever the bytes, the
** reader must return one of its kinds without a crash or a read outside the input; on OK and
** on the exceptions the bytes it says it left unread must lie in the last chunk; every row
** it hands over must have its key and every cell's bytes inside memory it owns (read here
** byte by byte, so ASan sees any that are not). The reader's scratch memory is kept from
** one reply to the next, as hb_client.c keeps it, by reading the input twice.
** Not here: sockets, retries, what the rows mean (kv/backend/hbase/hb_client.c).
*/
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "kv/backend/hbase/hb_results.h"

typedef struct src_ctx {
  const uint8_t *p, *end;
  size_t chunk;      /* bytes a chunk at most (0: all that is left) */
  size_t last;       /* bytes of the last chunk handed out */
} src_ctx;

static int more(void *vctx, const uint8_t **p, size_t *n, char *why, size_t whylen) {
  src_ctx *c = vctx;
  if (c->p >= c->end) {
    if (whylen) strncpy(why, "the input ended", whylen - 1), why[whylen - 1] = 0;
    return -1;
  }
  size_t k = (size_t)(c->end - c->p);
  if (c->chunk && k > c->chunk) k = c->chunk;
  *p = c->p;
  *n = k;
  c->p += k;
  c->last = k;
  return 0;
}

static volatile uint8_t sink;

static void touch(const uint8_t *p, size_t n) {
  for (size_t i = 0; i < n; i++) sink ^= p[i];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  bool get = data[0] & 1;
  size_t chunk = (size_t)(data[0] >> 1);
  hb_rows rows;
  memset(&rows, 0, sizeof rows);
  for (int round = 0; round < 2; round++) {
    src_ctx c = {data + 1, data + size, chunk, 0};
    hb_src src = {more, &c};
    hb_reply r;
    size_t left = 0;
    int kind = hb_results_read(&src, get ? "get" : "getScannerRows",
                               get ? 0u : HB_RES_LIST | HB_RES_IA, &rows, &r, &left);
    if (kind < HB_REPLY_OK || kind > HB_REPLY_NOMEM) __builtin_trap();
    if (kind <= HB_REPLY_APP_ERROR && left > c.last) __builtin_trap();
    if (kind != HB_REPLY_OK && kind > HB_REPLY_APP_ERROR && rows.n != 0) __builtin_trap();
    if (memchr(r.msg, 0, sizeof r.msg) == NULL) __builtin_trap(); /* msg is NUL ended */
    for (size_t i = 0; kind == HB_REPLY_OK && i < rows.n; i++) {
      hb_row row;
      memset(&row, 0, sizeof row);
      hb_rows_take(&rows, i, &row);
      if (row.key_len) touch(row.key, row.key_len);
      for (size_t j = 0; j < row.ncells; j++) {
        const hb_cell *cl = &row.cells[j];
        if (cl->family.n) touch(cl->family.p, cl->family.n);
        if (cl->qualifier.n) touch(cl->qualifier.p, cl->qualifier.n);
        if (cl->value.n) touch(cl->value.p, cl->value.n);
      }
      hb_row_free(&row);
    }
    hb_rows_clear(&rows);
  }
  hb_rows_free(&rows);
  return 0;
}
