/*
** kv/backend/hbase/hb_results.c: the hand reader of hb_results.h: a reply of the Thrift2
** gateway that carries rows (getScannerRows: list<TResult>; get: one TResult), read from the
** binary protocol's bytes into plain hb_rows, the exceptions' messages into hb_reply.
**
** The binary protocol, as read here (big-endian integers; Thrift's TBinaryProtocol, strict
** message headers as the gateway and thrift_c_glib write them):
**   message  := i32 (0x80010000 | type) , string name , i32 seqid , struct
**               type 2 (reply) or 3 (exception: a TApplicationException struct)
**   struct   := { i8 field type , i16 field id , value }* , i8 0 (stop)
**   string   := i32 length >= 0 , bytes          (binary too)
**   list/set := i8 element type , i32 count >= 0 , values
**   map      := i8 key type , i8 value type , i32 count >= 0 , pairs
**   bool, i8 := 1 byte; i16 2; i32 4; i64, double 8
** The field ids are hbase.thrift's (the IDL inside the pinned hbase-thrift jar, compiled in
** the build tree: build/.../gen/org/apache/hadoop/hbase/thrift2/hbase.thrift):
**   getScannerRows_result / get_result: 0 success, 1 io (TIOError), 2 ia (TIllegalArgument,
**     getScannerRows only)
**   TResult: 1 row (binary, optional), 2 columnValues (list<TColumnValue>, required),
**     3 stale, 4 partial (bool, skipped)
**   TColumnValue: 1 family, 2 qualifier, 3 value (binary, required), 4 timestamp (i64),
**     5 tags (binary, skipped), 6 type (byte, skipped)
**   TIOError: 1 message (string), 2 canRetry (bool); TIllegalArgument: 1 message
**   TApplicationException (Thrift's own): 1 message (string), 2 type (i32)
** As the generated reader does, a field whose id is known but whose type is not the IDL's is
** skipped, a missing required field is an error, and the last of a repeated field wins.
**
** Not here: sending calls, sockets, retries, kv statuses (hb_client.c, hb_rsocket.c); any
** other reply of the service (those go through the generated c_glib code).
*/
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kv/backend/hbase/hb_results.h"

/* Thrift's type codes (TType; ORDER: the binary protocol's wire values) */
enum { T_STOP = 0, T_BOOL = 2, T_BYTE = 3, T_DOUBLE = 4, T_I16 = 6, T_I32 = 8, T_I64 = 10,
       T_STRING = 11, T_STRUCT = 12, T_MAP = 13, T_SET = 14, T_LIST = 15 };
enum { MSG_REPLY = 2, MSG_EXCEPTION = 3 };
#define MAX_DEPTH 64    /* values nested deeper than this in a skipped field: refused */
#define MAX_NAME 256    /* a method name longer than this: refused */

/* One cell of the row being read: offsets into hb_rows.buf until the row is built. */
typedef struct cellx {
  size_t f, fn, q, qn, v, vn; /* family, qualifier, value: offset and length */
  int64_t ts;                 /* 0 when the reply has none */
} cellx;

typedef struct rd {
  const hb_src *src;
  const uint8_t *p, *e; /* the unread bytes of the current chunk */
  const uint8_t *c0;    /* the current chunk's first byte */
  unsigned long long base; /* bytes of the chunks before the current one */
  hb_reply *r;
  const char *method;
  hb_rows *rows;
  size_t bn;            /* bytes used in rows->buf */
  long row, cell;       /* where the reader is (-1: not in one), for messages */
  const char *field;    /* the field being read, or NULL */
} rd;

/* Fail with kind and a message naming where; returns -1. The first failure is kept. */
static int fail(rd *d, int kind, const char *fmt, ...) {
  if (d->r->kind != HB_REPLY_OK) return -1;
  d->r->kind = kind;
  char *m = d->r->msg;
  size_t cap = sizeof d->r->msg, k;
  k = (size_t)snprintf(m, cap, "reply to %s", d->method);
  if (k < cap && d->row >= 0) k += (size_t)snprintf(m + k, cap - k, ", row %ld", d->row);
  if (k < cap && d->cell >= 0) k += (size_t)snprintf(m + k, cap - k, ", cell %ld", d->cell);
  if (k < cap && d->field) k += (size_t)snprintf(m + k, cap - k, ", %s", d->field);
  if (k < cap)
    k += (size_t)snprintf(m + k, cap - k, ", byte %llu: ",
                          d->base + (unsigned long long)(d->p - d->c0));
  if (k < cap) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m + k, cap - k, fmt, ap);
    va_end(ap);
  }
  return -1;
}

/* The next chunk of the source (the current one is used up). what: what is being read. */
static int fill(rd *d, const char *what) {
  char why[256] = "";
  const uint8_t *p = NULL;
  size_t n = 0;
  d->base += (unsigned long long)(d->e - d->c0);
  d->c0 = d->p = d->e;
  if (d->src->more(d->src->ctx, &p, &n, why, sizeof why) != 0 || !n || !p)
    return fail(d, HB_REPLY_LOST, "the input ended reading %s: %s", what,
                why[0] ? why : "no bytes");
  d->c0 = d->p = p;
  d->e = p + n;
  return 0;
}

/* n bytes to dst (NULL: dropped). */
static int raw(rd *d, void *dst, size_t n, const char *what) {
  uint8_t *o = dst;
  while (n) {
    if (d->p == d->e && fill(d, what)) return -1;
    size_t k = (size_t)(d->e - d->p) < n ? (size_t)(d->e - d->p) : n;
    if (o) {
      memcpy(o, d->p, k);
      o += k;
    }
    d->p += k;
    n -= k;
  }
  return 0;
}

static int u8(rd *d, uint8_t *v, const char *what) {
  if (d->p < d->e) {
    *v = *d->p++;
    return 0;
  }
  return raw(d, v, 1, what);
}

static int be(rd *d, size_t n, uint64_t *v, const char *what) {
  uint8_t b[8];
  const uint8_t *s = d->p;
  if ((size_t)(d->e - d->p) >= n) d->p += n;
  else if (raw(d, b, n, what)) return -1;
  else s = b;
  uint64_t x = 0;
  for (size_t i = 0; i < n; i++) x = x << 8 | s[i];
  *v = x;
  return 0;
}

static int i16(rd *d, int16_t *v, const char *what) {
  uint64_t x;
  if (be(d, 2, &x, what)) return -1;
  *v = (int16_t)(uint16_t)x;
  return 0;
}

static int i32(rd *d, int32_t *v, const char *what) {
  uint64_t x;
  if (be(d, 4, &x, what)) return -1;
  *v = (int32_t)(uint32_t)x;
  return 0;
}

static int i64(rd *d, int64_t *v, const char *what) {
  uint64_t x;
  if (be(d, 8, &x, what)) return -1;
  *v = (int64_t)x;
  return 0;
}

/* A field's header: *type, and *id unless the type is stop. */
static int field_begin(rd *d, uint8_t *type, int16_t *id) {
  *id = 0;
  if (u8(d, type, "a field header")) return -1;
  return *type == T_STOP ? 0 : i16(d, id, "a field id");
}

/* A string or binary's length, checked. */
static int length(rd *d, int32_t *n, const char *what) {
  if (i32(d, n, what)) return -1;
  if (*n < 0) return fail(d, HB_REPLY_BAD, "%s is negative (%d)", what, (int)*n);
  return 0;
}

/* A binary into rows->buf: *off and *n where it went. Room grows with the bytes that arrive,
** never ahead of them (a length field larger than the input costs nothing). */
static int binary(rd *d, size_t *off, size_t *n) {
  int32_t len;
  if (length(d, &len, "a binary's length")) return -1;
  hb_rows *w = d->rows;
  *off = d->bn;
  *n = (size_t)len;
  for (size_t left = (size_t)len; left;) {
    if (d->p == d->e && fill(d, "a binary's bytes")) return -1;
    size_t k = (size_t)(d->e - d->p) < left ? (size_t)(d->e - d->p) : left;
    if (d->bn + k > w->buf_cap) {
      size_t cap = w->buf_cap ? w->buf_cap : 4096;
      while (cap < d->bn + k) cap *= 2;
      uint8_t *b = realloc(w->buf, cap);
      if (!b) return fail(d, HB_REPLY_NOMEM, "out of memory for %zu bytes", cap);
      w->buf = b;
      w->buf_cap = cap;
    }
    memcpy(w->buf + d->bn, d->p, k);
    d->bn += k;
    d->p += k;
    left -= k;
  }
  return 0;
}

/* A string into dst (cut to cap - 1 bytes, NUL ended; the rest read and dropped). */
static int string_to(rd *d, char *dst, size_t cap) {
  int32_t len;
  if (length(d, &len, "a string's length")) return -1;
  size_t keep = (size_t)len < cap - 1 ? (size_t)len : cap - 1;
  if (raw(d, dst, keep, "a string's bytes") || raw(d, NULL, (size_t)len - keep, "a string's bytes"))
    return -1;
  dst[keep] = 0;
  return 0;
}

/* Skip a value of the given type (the binary protocol's rules, Thrift's TProtocolUtil.skip). */
static int skip(rd *d, uint8_t type, int depth) {
  if (depth > MAX_DEPTH) return fail(d, HB_REPLY_BAD, "values nested deeper than %d", MAX_DEPTH);
  int32_t n;
  uint8_t t, t2;
  int16_t id;
  switch (type) {
  case T_BOOL:
  case T_BYTE: return raw(d, NULL, 1, "a byte");
  case T_I16: return raw(d, NULL, 2, "an i16");
  case T_I32: return raw(d, NULL, 4, "an i32");
  case T_I64:
  case T_DOUBLE: return raw(d, NULL, 8, "an i64");
  case T_STRING:
    if (length(d, &n, "a skipped string's length")) return -1;
    return raw(d, NULL, (size_t)n, "a skipped string's bytes");
  case T_STRUCT:
    for (;;) {
      if (field_begin(d, &t, &id)) return -1;
      if (t == T_STOP) return 0;
      if (skip(d, t, depth + 1)) return -1;
    }
  case T_MAP:
    if (u8(d, &t, "a map's key type") || u8(d, &t2, "a map's value type") ||
        length(d, &n, "a map's size"))
      return -1;
    for (int32_t i = 0; i < n; i++)
      if (skip(d, t, depth + 1) || skip(d, t2, depth + 1)) return -1;
    return 0;
  case T_SET:
  case T_LIST:
    if (u8(d, &t, "a list's element type") || length(d, &n, "a list's size")) return -1;
    for (int32_t i = 0; i < n; i++)
      if (skip(d, t, depth + 1)) return -1;
    return 0;
  default: return fail(d, HB_REPLY_BAD, "a value of unknown type %u", (unsigned)type);
  }
}

/* One TColumnValue into *c. */
static int read_cell(rd *d, cellx *c) {
  bool hf = false, hq = false, hv = false;
  c->ts = 0;
  for (;;) {
    uint8_t t;
    int16_t id;
    d->field = NULL;
    if (field_begin(d, &t, &id)) return -1;
    if (t == T_STOP) break;
    if (id == 1 && t == T_STRING) {
      d->field = "family (field 1)";
      if (binary(d, &c->f, &c->fn)) return -1;
      hf = true;
    } else if (id == 2 && t == T_STRING) {
      d->field = "qualifier (field 2)";
      if (binary(d, &c->q, &c->qn)) return -1;
      hq = true;
    } else if (id == 3 && t == T_STRING) {
      d->field = "value (field 3)";
      if (binary(d, &c->v, &c->vn)) return -1;
      hv = true;
    } else if (id == 4 && t == T_I64) {
      d->field = "timestamp (field 4)";
      if (i64(d, &c->ts, "a timestamp")) return -1;
    } else {
      if (skip(d, t, 1)) return -1;
    }
  }
  if (!hf || !hq || !hv)
    return fail(d, HB_REPLY_BAD, "a TColumnValue without its %s",
                !hf ? "family (field 1)" : !hq ? "qualifier (field 2)" : "value (field 3)");
  return 0;
}

/* The row read (key at koff, cells in rows->cells) appended to rows->v as an hb_row. */
static int build_row(rd *d, size_t koff, size_t klen, size_t nc) {
  hb_rows *w = d->rows;
  if (w->n == w->cap) {
    size_t cap = w->cap ? w->cap * 2 : 64;
    hb_row *v = realloc(w->v, cap * sizeof *v);
    if (!v) return fail(d, HB_REPLY_NOMEM, "out of memory for %zu rows", cap);
    w->v = v;
    w->cap = cap;
  }
  hb_row *o = &w->v[w->n];
  memset(o, 0, sizeof *o);
  o->key = malloc(klen ? klen : 1);
  o->cells = malloc((nc ? nc : 1) * sizeof *o->cells);
  o->mem = malloc(d->bn ? d->bn : 1);
  if (!o->key || !o->cells || !o->mem) {
    hb_row_free(o);
    return fail(d, HB_REPLY_NOMEM, "out of memory for a row of %zu bytes", d->bn);
  }
  if (d->bn) memcpy(o->mem, w->buf, d->bn);
  if (klen) memcpy(o->key, w->buf + koff, klen);
  o->key_len = klen;
  const cellx *cx = w->cells;
  for (size_t i = 0; i < nc; i++) {
    o->cells[i].family = (hb_bytes){o->mem + cx[i].f, cx[i].fn};
    o->cells[i].qualifier = (hb_bytes){o->mem + cx[i].q, cx[i].qn};
    o->cells[i].value = (hb_bytes){o->mem + cx[i].v, cx[i].vn};
    o->cells[i].ts = cx[i].ts;
  }
  o->ncells = nc;
  w->n++;
  return 0;
}

/* A list's header whose elements must be structs (or none). */
static int struct_list(rd *d, int32_t *n, const char *what) {
  uint8_t t;
  if (u8(d, &t, "a list's element type") || length(d, n, "a list's size")) return -1;
  if (*n > 0 && t != T_STRUCT)
    return fail(d, HB_REPLY_BAD, "%s holds values of type %u, not structs", what, (unsigned)t);
  return 0;
}

/* One TResult appended to rows. */
static int read_result(rd *d) {
  hb_rows *w = d->rows;
  size_t koff = 0, klen = 0, nc = 0;
  bool hcv = false;
  d->bn = 0;
  d->cell = -1;
  for (;;) {
    uint8_t t;
    int16_t id;
    d->field = NULL;
    if (field_begin(d, &t, &id)) return -1;
    if (t == T_STOP) break;
    if (id == 1 && t == T_STRING) {
      d->field = "row (field 1)";
      if (binary(d, &koff, &klen)) return -1;
    } else if (id == 2 && t == T_LIST) {
      int32_t n;
      d->field = "columnValues (field 2)";
      if (struct_list(d, &n, "columnValues")) return -1;
      for (int32_t i = 0; i < n; i++, nc++) {
        if (nc == w->cells_cap) {
          size_t cap = w->cells_cap ? w->cells_cap * 2 : 64;
          void *v = realloc(w->cells, cap * sizeof(cellx));
          if (!v) return fail(d, HB_REPLY_NOMEM, "out of memory for %zu cells", cap);
          w->cells = v;
          w->cells_cap = cap;
        }
        d->cell = (long)nc;
        if (read_cell(d, &((cellx *)w->cells)[nc])) return -1;
      }
      d->cell = -1;
      hcv = true;
    } else {
      if (skip(d, t, 1)) return -1;
    }
  }
  d->field = NULL;
  if (!hcv) return fail(d, HB_REPLY_BAD, "a TResult without its columnValues (field 2)");
  return build_row(d, koff, klen, nc);
}

/* An exception struct (TIOError, TIllegalArgument, TApplicationException): its message
** (field 1) into dst, every other field skipped. */
static int read_exception(rd *d, char *dst, size_t cap) {
  dst[0] = 0;
  for (;;) {
    uint8_t t;
    int16_t id;
    if (field_begin(d, &t, &id)) return -1;
    if (t == T_STOP) return 0;
    if (id == 1 && t == T_STRING) {
      if (string_to(d, dst, cap)) return -1;
    } else if (skip(d, t, 1)) {
      return -1;
    }
  }
}

/* The message header; *type. */
static int message_begin(rd *d, int *type) {
  int32_t v, n, seq;
  char name[MAX_NAME + 1];
  if (i32(d, &v, "the message header")) return -1;
  if (v >= 0)
    return fail(d, HB_REPLY_BAD, "a message header without a protocol version (0x%08x)",
                (unsigned)v);
  if (((uint32_t)v & 0xffff0000u) != 0x80010000u)
    return fail(d, HB_REPLY_BAD, "protocol version 0x%04x, not the binary protocol's 0x8001",
                (unsigned)((uint32_t)v >> 16));
  *type = (int)((uint32_t)v & 0xff);
  if (length(d, &n, "the method name's length")) return -1;
  if (n > MAX_NAME)
    return fail(d, HB_REPLY_BAD, "a method name of %d bytes (at most %d)", (int)n, MAX_NAME);
  if (raw(d, name, (size_t)n, "the method name") || i32(d, &seq, "the sequence id")) return -1;
  name[n] = 0;
  if (*type == MSG_EXCEPTION) return 0; /* a failed call names its method too; not checked */
  if (*type != MSG_REPLY)
    return fail(d, HB_REPLY_BAD, "a message of type %d, not a reply (2)", *type);
  if (strlen(d->method) != (size_t)n || memcmp(name, d->method, (size_t)n) != 0)
    return fail(d, HB_REPLY_BAD, "a reply to %.*s, not to %s", (int)n, name, d->method);
  return 0;
}

int hb_results_read(const hb_src *src, const char *method, unsigned flags, hb_rows *rows,
                    hb_reply *r, size_t *left) {
  rd d = {src, NULL, NULL, NULL, 0, r, method, rows, 0, -1, -1, NULL};
  static const uint8_t none[1];
  d.p = d.e = d.c0 = none;
  r->kind = HB_REPLY_OK;
  r->msg[0] = 0;
  *left = 0;
  hb_rows_clear(rows);
  int type = 0;
  char ia[sizeof r->msg];
  bool io_seen = false, ia_seen = false;
  if (message_begin(&d, &type)) goto failed;
  if (type == MSG_EXCEPTION) {
    char m[sizeof r->msg - 32];
    if (read_exception(&d, m, sizeof m)) goto failed;
    r->kind = HB_REPLY_APP_ERROR;
    snprintf(r->msg, sizeof r->msg, "application error: %s", m);
    *left = (size_t)(d.e - d.p);
    return r->kind;
  }
  for (;;) {
    uint8_t t;
    int16_t id;
    d.row = -1;
    d.field = NULL;
    if (field_begin(&d, &t, &id)) goto failed;
    if (t == T_STOP) break;
    if (id == 0 && t == T_LIST && (flags & HB_RES_LIST)) {
      int32_t n;
      d.field = "success (field 0)";
      if (struct_list(&d, &n, "the list of TResult")) goto failed;
      for (int32_t i = 0; i < n; i++) {
        d.row = (long)rows->n;
        if (read_result(&d)) goto failed;
      }
    } else if (id == 0 && t == T_STRUCT && !(flags & HB_RES_LIST)) {
      d.field = "success (field 0)";
      hb_rows_clear(rows); /* a repeated field: the last wins */
      d.row = 0;
      if (read_result(&d)) goto failed;
    } else if (id == 1 && t == T_STRUCT) {
      d.field = "io (field 1, TIOError)";
      if (read_exception(&d, r->msg, sizeof r->msg)) goto failed;
      io_seen = true;
    } else if (id == 2 && t == T_STRUCT && (flags & HB_RES_IA)) {
      d.field = "ia (field 2, TIllegalArgument)";
      if (read_exception(&d, ia, sizeof ia)) goto failed;
      ia_seen = true;
    } else if (skip(&d, t, 1)) {
      goto failed;
    }
  }
  *left = (size_t)(d.e - d.p);
  if (io_seen || ia_seen) { /* the exception wins over any rows, as in the generated code */
    hb_rows_clear(rows);
    r->kind = io_seen ? HB_REPLY_IO_ERROR : HB_REPLY_ILLEGAL_ARG;
    if (!io_seen) memcpy(r->msg, ia, sizeof r->msg);
  }
  return r->kind;
failed:
  hb_rows_clear(rows);
  return r->kind;
}

void hb_row_free(hb_row *r) {
  if (!r) return;
  free(r->key);
  free(r->cells);
  free(r->mem);
  memset(r, 0, sizeof *r);
}

void hb_rows_take(hb_rows *rows, size_t i, hb_row *out) {
  hb_row_free(out);
  *out = rows->v[i];
  memset(&rows->v[i], 0, sizeof rows->v[i]);
}

void hb_rows_clear(hb_rows *rows) {
  for (size_t i = 0; i < rows->n; i++) hb_row_free(&rows->v[i]);
  rows->n = 0;
}

void hb_rows_free(hb_rows *rows) {
  hb_rows_clear(rows);
  free(rows->v);
  free(rows->buf);
  free(rows->cells);
  memset(rows, 0, sizeof *rows);
}
