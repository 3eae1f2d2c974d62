/*
** kv/backend/hbase/hb_results.h: a hand reader of the Thrift2 gateway's replies that carry
** rows (getScannerRows, get), straight from the binary protocol's bytes into hb_rows, for the
** client (hb_client.c).
**
** The reply is read from a byte source (hb_src: the client's socket, or a buffer in the
** tests) field by field, as thrift-compiler's c_glib code would read it from the IDL
** (hbase.thrift's TResult and TColumnValue, TIOError, TIllegalArgument, Thrift's
** TApplicationException), but without a GObject, a GByteArray or an allocation per cell:
** each row's bytes go to one block (hb_row.mem), as hb_row_free frees them. Fields the
** reader does not keep (TResult's stale and partial, TColumnValue's tags and type), fields
** of ids or types it does not know, are skipped by the binary protocol's rules. Nothing in
** the input is trusted: every length is checked against what arrives, never allocated ahead
** of the bytes, and a reply that cannot be read gives HB_REPLY_BAD (HB_REPLY_LOST when the
** source itself failed) with a message naming what was wrong and where (row, cell, field,
** byte offset), never a crash.
**
** Not here: sending the call, the connection and its retries, turning a reply's exception
** into a kv status (hb_client.c); the write side (putMultiple, hb_client.c); Thrift's
** compact protocol or framed transport (the gateway here speaks binary over buffered).
*/
#ifndef ROWAN_KV_BACKEND_HB_RESULTS_H
#define ROWAN_KV_BACKEND_HB_RESULTS_H

#include <stddef.h>
#include <stdint.h>

#include "kv/backend/hbase/hb_client.h"

/* A source of bytes. more() hands out the next bytes of the input at *p, *n >= 1 of them,
** and takes the ones it handed out before as consumed; it returns 0, or -1 with why[] (at
** most whylen bytes, NUL ended) saying why there are none (the input ended, a read failed
** or timed out). A reader that stops inside a chunk leaves the rest unread (hb_results_read's
** *left). */
typedef struct hb_src {
  int (*more)(void *ctx, const uint8_t **p, size_t *n, char *why, size_t whylen);
  void *ctx; /* more()'s first argument */
} hb_src;

/* A batch of rows read, with the reader's scratch memory kept between batches. */
typedef struct hb_rows {
  hb_row *v;      /* rows v[0..n): each owned here until handed over (hb_rows_take) */
  size_t n, cap;  /* rows, and room for */
  uint8_t *buf;   /* scratch: the row being read's cell bytes */
  size_t buf_cap; /* room in buf */
  void *cells;    /* scratch: the row being read's cells, as offsets into buf */
  size_t cells_cap;
} hb_rows;

/* How a reply ended (hb_reply.kind). ORDER: the kinds up to HB_REPLY_APP_ERROR read the
** message whole (hb_client.c relies on it). */
enum {
  HB_REPLY_OK = 0,       /* the call's result was read (rows, maybe none) */
  HB_REPLY_IO_ERROR,     /* the IDL exception TIOError (field 1): HBase's message in msg */
  HB_REPLY_ILLEGAL_ARG,  /* the IDL exception TIllegalArgument (field 2): its message */
  HB_REPLY_APP_ERROR,    /* a TApplicationException message: "application error: MSG" */
  HB_REPLY_LOST,         /* the source failed part way (src's why in msg): the stream is out
                            of step, the connection must be dropped */
  HB_REPLY_BAD,          /* the bytes are not such a reply: msg says what was wrong and
                            where; out of step as HB_REPLY_LOST */
  HB_REPLY_NOMEM         /* out of memory part way: out of step as HB_REPLY_LOST */
};

typedef struct hb_reply {
  int kind;      /* HB_REPLY_* */
  char msg[640]; /* the exception's message (cut at 639 bytes), or what was wrong */
} hb_reply;

/* What the call's result holds (hb_results_read's flags). */
#define HB_RES_LIST 1u /* success (field 0) is list<TResult> (getScannerRows, getMultiple);
                          without: one TResult (get) */
#define HB_RES_IA 2u   /* field 2 is a TIllegalArgument (getScannerRows); without: skipped */

/* Read one whole reply message to METHOD (its name must match exactly) from src: rows
** replaces what `rows` held (hb_rows_clear) with the rows of the result, in order (get: one
** row, whose ncells is 0 when HBase found none). Returns r->kind; on HB_REPLY_OK and on the
** IDL and application exceptions the message was read to its end (the stream stays in
** step), and *left = the bytes of src's last chunk not read (the caller gives them back to
** its source). On HB_REPLY_LOST, HB_REPLY_BAD and HB_REPLY_NOMEM rows holds nothing. */
int hb_results_read(const hb_src *src, const char *method, unsigned flags, hb_rows *rows,
                    hb_reply *r, size_t *left);

/* Move row i of rows into *out (freeing what *out held); rows keeps an empty row there. */
void hb_rows_take(hb_rows *rows, size_t i, hb_row *out);
/* Free the rows (keeping the scratch memory for the next batch). */
void hb_rows_clear(hb_rows *rows);
/* Free everything rows holds and zero it (a zeroed hb_rows is empty and valid). */
void hb_rows_free(hb_rows *rows);
/* hb_row_free (hb_client.h) is here too: a row's three blocks are this reader's. */

#endif /* ROWAN_KV_BACKEND_HB_RESULTS_H */
