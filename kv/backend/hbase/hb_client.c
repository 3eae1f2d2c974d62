/*
** kv/backend/hbase/hb_client.c: the Thrift2 client of kv/backend/hbase/hb_client.h over the
** c_glib code thrift-compiler generates from HBase's hbase.thrift (THBaseService).
**
** Each call builds the generated request objects (binary fields are NULL in a fresh object:
** every one is given a GByteArray, and an optional field its __isset flag), calls the
** service, copies what came back into plain memory and drops the GLib objects; but putMultiple
** is written field by field, and the replies carrying rows (getScannerRows, get) are read
** by hand (hb_results.h) into hb_rows, no GObject per cell. Errors come
** back three ways: an IDL exception (TIOError, TIllegalArgument: HBase's own message, the
** connection stays usable), an application exception (the gateway failed the call), or a
** transport or protocol error, after which the stream is out of step: the socket is closed
** and the next call reconnects. Calls that are safe to repeat (reads, puts with explicit
** timestamps, table listings) are retried once on a fresh connection when the transport
** failed; a check-and-put or a scanner call is not (the first try may have applied, a
** scanner lives on the gateway that failed).
** Not here: the scanner calls (hb_scanner.c; what both files share: hb_client_int.h), what
** the calls mean to Rowan (the backend on top), connection pooling.
*/
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <glib-object.h>
#include <thrift/c_glib/protocol/thrift_binary_protocol.h>
#include <thrift/c_glib/thrift.h>
#include <thrift/c_glib/thrift_application_exception.h>
#include <thrift/c_glib/transport/thrift_buffered_transport.h>
#include <thrift/c_glib/transport/thrift_socket.h>

#include "kv/backend/hbase/hb_client_int.h"
#include "kv/backend/hbase/hb_rsocket.h"
#include "kv/kv.h"
#include "kv/util/status.h"

#define HB_BUF_BYTES (64 * 1024) /* the transport's read and write buffers */

static void disconnect(hb_client *c) {
  if (c->svc) g_object_unref(c->svc);
  if (c->tr && thrift_transport_is_open(c->tr)) thrift_transport_close(c->tr, NULL);
  if (c->proto) g_object_unref(c->proto);
  if (c->tr) g_object_unref(c->tr);
  if (c->sock) g_object_unref(c->sock);
  c->svc = NULL;
  c->proto = NULL;
  c->tr = NULL;
  c->sock = NULL;
}

static int connect_now(hb_client *c) {
  GError *err = NULL;
  c->sock = g_object_new(hb_rsocket_get_type(), "hostname", c->host, "port", (guint)c->port, NULL);
  /* 64 KiB buffers: a putMultiple of thousands of cells goes out in few sends (the default
     512 bytes made one send per 512 bytes) */
  c->tr = g_object_new(THRIFT_TYPE_BUFFERED_TRANSPORT, "transport", c->sock, "r_buf_size",
                       (guint)HB_BUF_BYTES, "w_buf_size", (guint)HB_BUF_BYTES, NULL);
  c->proto = g_object_new(THRIFT_TYPE_BINARY_PROTOCOL, "transport", c->tr, NULL);
  if (!thrift_transport_open(c->tr, &err)) {
    int rc = kv_error(KV_ERR_IO, "hbase: cannot connect to %s:%d: %s", c->host, c->port,
                      err && err->message ? err->message : "unknown error");
    if (err) g_error_free(err);
    disconnect(c);
    return rc;
  }
  struct timeval tv = {c->timeout_ms / 1000, (c->timeout_ms % 1000) * 1000};
  (void)setsockopt(c->sock->sd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  (void)setsockopt(c->sock->sd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  /* Nagle's algorithm off, and our ACKs at once: a call whose request or answer spans more
     than one segment otherwise waits for a delayed ACK (measured: 40-50 ms per mutateRow) */
  int one = 1;
  (void)setsockopt(c->sock->sd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  (void)setsockopt(c->sock->sd, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof one);
  c->svc = g_object_new(TYPE_T_H_BASE_SERVICE_CLIENT, "input_protocol", c->proto,
                        "output_protocol", c->proto, NULL);
  return KV_OK;
}

void hb_types_register(void); /* generated (types_once.cmake) */
static pthread_once_t types_once = PTHREAD_ONCE_INIT;

int hb_open(const char *host, int port, int timeout_ms, hb_client **out) {
  /* the generated types register themselves unsafely on first use: all of them now, once */
  pthread_once(&types_once, hb_types_register);
  if (!out) return kv_error(KV_MISUSE, "hb_open: NULL argument");
  *out = NULL;
  if (!host || !*host) return kv_error(KV_ERR_INVALID, "hbase: empty host name");
  if (port < 1 || port > 65535)
    return kv_error(KV_ERR_INVALID, "hbase: port %d is outside 1..65535", port);
  hb_client *c = calloc(1, sizeof *c);
  if (!c || !(c->host = strdup(host))) {
    free(c);
    return kv_error(KV_ERR_NOMEM, "hbase: out of memory");
  }
  c->port = port;
  c->timeout_ms = timeout_ms > 0 ? timeout_ms : 30000;
  int rc = connect_now(c);
  if (rc) {
    free(c->host);
    free(c);
    return rc;
  }
  *out = c;
  return KV_OK;
}

void hb_close(hb_client *c) {
  if (!c) return;
  disconnect(c);
  free(c->host);
  free(c);
}

static int io_failed(const char *what, const char *m) { /* the status of a TIOError, message m */
  int code = strstr(m, "TableNotFoundException") || strstr(m, "NamespaceNotFoundException")
                 ? KV_ERR_NOTFOUND
             : strstr(m, "TableExistsException") || strstr(m, "NamespaceExistException")
                 ? KV_ERR_EXISTS
                 : KV_ERR_IO;
  return kv_error(code, "hbase: %s: %.400s", what, m);
}

/* The status of a failed call: HBase's exception (the connection stays), or a transport
** error (the connection is dropped; *retry set when the caller may try once more). */
int hbc_call_failed(hb_client *c, const char *what, TIOError *io, TIllegalArgument *ia,
                       GError *err, bool *retry) {
  int rc;
  if (retry) *retry = false;
  if (io) {
    rc = io_failed(what, io->message ? io->message : "");
    g_object_unref(io);
  } else if (ia) {
    rc = kv_error(KV_ERR_INVALID, "hbase: %s: %.400s", what, ia->message ? ia->message : "");
    g_object_unref(ia);
  } else if (err && err->domain == THRIFT_APPLICATION_EXCEPTION_ERROR) {
    rc = kv_error(KV_ERR_IO, "hbase: %s: the gateway failed the call: %.400s", what, err->message);
  } else {
    rc = kv_error(KV_ERR_IO, "hbase: %s: connection to %s:%d lost: %s", what, c->host, c->port,
                  err && err->message ? err->message : "unknown error");
    disconnect(c);
    if (retry) *retry = true;
  }
  if (err) g_error_free(err);
  return rc;
}

/* The reply to `what`, whose request was just sent (sent false: the send failed with err),
** read into rows by the hand reader (hb_results.h; flags HB_RES_*), its outcome a status as
** call_failed makes it: the IDL exceptions and a failed call keep the connection; a reply
** that could not be read or a lost connection drops it (*retry set, as call_failed does). */
int hbc_hand_reply(hb_client *c, const char *what, unsigned flags, hb_rows *rows,
                      gboolean sent, GError *err, bool *retry) {
  if (!sent) return hbc_call_failed(c, what, NULL, NULL, err, retry);
  hb_reply r = {HB_REPLY_BAD, "bytes left in the buffered transport"}; /* never */
  size_t left = 0;
  hb_src src = {hb_rsocket_more, c->sock};
  if (!THRIFT_BUFFERED_TRANSPORT(c->tr)->r_buf->len)
    (void)hb_results_read(&src, what, flags, rows, &r, &left);
  *retry = false;
  if (r.kind <= HB_REPLY_APP_ERROR) hb_rsocket_unread(G_OBJECT(c->sock), left); /* read whole */
  switch (r.kind) {
  case HB_REPLY_OK: return KV_OK;
  case HB_REPLY_IO_ERROR: return io_failed(what, r.msg);
  case HB_REPLY_ILLEGAL_ARG: return kv_error(KV_ERR_INVALID, "hbase: %s: %.400s", what, r.msg);
  case HB_REPLY_APP_ERROR:
    return kv_error(KV_ERR_IO, "hbase: %s: the gateway failed the call: %.400s", what, r.msg);
  }
  int rc = r.kind == HB_REPLY_NOMEM ? kv_error(KV_ERR_NOMEM, "hbase: %s: %s", what, r.msg)
           : r.kind == HB_REPLY_LOST
               ? kv_error(KV_ERR_IO, "hbase: %s: connection to %s:%d lost: %s", what, c->host,
                          c->port, r.msg)
               : kv_error(KV_ERR_IO, "hbase: %s: connection to %s:%d dropped, its reply "
                          "unreadable: %s", what, c->host, c->port, r.msg);
  hb_rows_clear(rows);
  disconnect(c); /* the stream is out of step */
  *retry = r.kind != HB_REPLY_NOMEM;
  return rc;
}

/* Connected, or connect now. */
int hbc_ensure(hb_client *c) { return c->svc ? KV_OK : connect_now(c); }

GByteArray *hbc_gba(const void *p, size_t n) {
  GByteArray *a = g_byte_array_sized_new((guint)n);
  if (n) g_byte_array_append(a, p, (guint)n);
  return a;
}

static GByteArray *gba_str(const char *s) { return hbc_gba(s, strlen(s)); }

/* The table's name as HBase spells it in data calls: NS:NAME, or NAME in the default
** namespace. */
GByteArray *hbc_table_bytes(const char *ns, const char *name) {
  GByteArray *a = g_byte_array_new();
  if (ns && *ns && strcmp(ns, "default") != 0) {
    g_byte_array_append(a, (const guint8 *)ns, (guint)strlen(ns));
    g_byte_array_append(a, (const guint8 *)":", 1);
  }
  g_byte_array_append(a, (const guint8 *)name, (guint)strlen(name));
  return a;
}

/* A data call on a missing table fails with a TIOError whose message is the table's name and
** nothing else (HBase's TableNotFoundException): make that KV_ERR_NOTFOUND. */
int hbc_table_missing(int rc, const char *what, const GByteArray *t) {
  if (rc != KV_ERR_IO) return rc;
  const char *m = kv_errmsg(), *p = strstr(m, ": ");
  if (p) p = strstr(p + 2, ": ");
  if (!p || strlen(p + 2) != t->len || memcmp(p + 2, t->data, t->len) != 0) return rc;
  return kv_error(KV_ERR_NOTFOUND, "hbase: %s: no table %.*s", what, (int)t->len,
                  (const char *)t->data);
}

static TTableName *table_name(const char *ns, const char *name) {
  TTableName *t = g_object_new(TYPE_T_TABLE_NAME, NULL);
  if (ns && *ns) {
    t->ns = gba_str(ns);
    t->__isset_ns = TRUE;
  }
  t->qualifier = gba_str(name);
  return t;
}

int hb_table_exists(hb_client *c, const char *ns, const char *name, bool *exists) {
  TTableName *t = table_name(ns, name);
  gboolean r = FALSE;
  int rc;
  HB_CALL(c, "tableExists", true, ok = t_h_base_service_if_table_exists(c->svc, &r, t, &io, &err));
  g_object_unref(t);
  *exists = !rc && r;
  return rc;
}

int hb_ensure_namespace(hb_client *c, const char *ns) {
  if (!ns || !*ns || !strcmp(ns, "default")) return KV_OK;
  TNamespaceDescriptor *d = g_object_new(TYPE_T_NAMESPACE_DESCRIPTOR, NULL);
  d->name = g_strdup(ns);
  int rc;
  HB_CALL(c, "createNamespace", true,
          ok = t_h_base_service_if_create_namespace(c->svc, d, &io, &err));
  g_object_unref(d);
  if (rc == KV_ERR_EXISTS) {
    kv_error_clear();
    rc = KV_OK;
  }
  return rc;
}

int hb_create_table(hb_client *c, const char *ns, const char *name, const char *const *families,
                    size_t nfamilies, int max_versions, const hb_bytes *splits, size_t nsplits) {
  if (!nfamilies) return kv_error(KV_ERR_INVALID, "hbase: table %s has no family", name);
  for (size_t i = 0; i < nsplits; i++) {
    if (!splits[i].n) return kv_error(KV_ERR_INVALID, "hbase: split key %zu is empty", i);
    if (i > 0) {
      size_t m = splits[i - 1].n < splits[i].n ? splits[i - 1].n : splits[i].n;
      int d = memcmp(splits[i - 1].p, splits[i].p, m);
      if (d > 0 || (d == 0 && splits[i - 1].n >= splits[i].n))
        return kv_error(KV_ERR_INVALID, "hbase: split key %zu is not above split key %zu", i,
                        i - 1);
    }
  }
  TTableDescriptor *d = g_object_new(TYPE_T_TABLE_DESCRIPTOR, NULL);
  g_object_unref(d->tableName);
  d->tableName = table_name(ns, name);
  for (size_t i = 0; i < nfamilies; i++) {
    TColumnFamilyDescriptor *f = g_object_new(TYPE_T_COLUMN_FAMILY_DESCRIPTOR, NULL);
    f->name = gba_str(families[i]);
    if (max_versions > 0) {
      f->maxVersions = max_versions;
      f->__isset_maxVersions = TRUE;
    }
    g_ptr_array_add(d->columns, f);
  }
  d->__isset_columns = TRUE;
  GPtrArray *keys = g_ptr_array_new_with_free_func((GDestroyNotify)g_byte_array_unref);
  for (size_t i = 0; i < nsplits; i++) g_ptr_array_add(keys, hbc_gba(splits[i].p, splits[i].n));
  int rc;
  HB_CALL(c, "createTable", false,
          ok = t_h_base_service_if_create_table(c->svc, d, keys, &io, &err));
  g_ptr_array_unref(keys);
  g_object_unref(d);
  return rc;
}

int hb_drop_table(hb_client *c, const char *ns, const char *name) {
  TTableName *t = table_name(ns, name);
  int rc;
  HB_CALL(c, "disableTable", true, ok = t_h_base_service_if_disable_table(c->svc, t, &io, &err));
  if (!rc || strstr(kv_errmsg(), "TableNotEnabledException")) {
    kv_error_clear();
    HB_CALL(c, "deleteTable", true, ok = t_h_base_service_if_delete_table(c->svc, t, &io, &err));
  }
  g_object_unref(t);
  return rc;
}

static TColumnValue *column_value(const hb_put *p) {
  TColumnValue *v = g_object_new(TYPE_T_COLUMN_VALUE, NULL);
  v->family = hbc_gba(p->family.p, p->family.n);
  v->qualifier = hbc_gba(p->qualifier.p, p->qualifier.n);
  v->value = hbc_gba(p->value.p, p->value.n);
  v->timestamp = p->ts;
  v->__isset_timestamp = TRUE;
  return v;
}

static bool same_bytes(hb_bytes a, hb_bytes b) {
  return a.n == b.n && (a.n == 0 || memcmp(a.p, b.p, a.n) == 0);
}

/* The cells' checks; *rows = their rows (consecutive cells of one row make one TPut). */
static int check_puts(const hb_put *cells, size_t n, size_t *rows) {
  *rows = 0;
  for (size_t i = 0; i < n; i++) {
    const hb_put *p = &cells[i];
    if (!p->row.n) return kv_error(KV_ERR_INVALID, "hbase: cell %zu has an empty row key", i);
    if (!p->family.n) return kv_error(KV_ERR_INVALID, "hbase: cell %zu has an empty family", i);
    if (p->ts < 0)
      return kv_error(KV_ERR_INVALID, "hbase: cell %zu has a negative timestamp %lld", i,
                      (long long)p->ts);
    if (!i || !same_bytes(cells[i - 1].row, p->row)) ++*rows;
  }
  return KV_OK;
}

#define PW(call) if ((call) < 0) return FALSE
static gboolean put_binary(ThriftProtocol *o, const char *name, gint16 id, hb_bytes b, GError **err) {
  PW(thrift_protocol_write_field_begin(o, name, T_STRING, id, err));
  PW(thrift_protocol_write_binary(o, (gpointer)b.p, (guint32)b.n, err));
  return thrift_protocol_write_field_end(o, err) >= 0;
}

/* putMultiple(table, the cells as TPuts) written field by field from the cells, as the
** generated client's send would write it from TPut and TColumnValue objects (building those,
** GObjects and GByteArrays for every cell, was most of the import's client CPU), then the
** generated reply reader. */
static gboolean put_multiple(hb_client *c, const GByteArray *t, const hb_put *cells, size_t n,
                             size_t rows, TIOError **io, GError **err) {
  ThriftProtocol *o = T_H_BASE_SERVICE_CLIENT(c->svc)->output_protocol;
  PW(thrift_protocol_write_message_begin(o, "putMultiple", T_CALL, 0, err));
  PW(thrift_protocol_write_struct_begin(o, "putMultiple_args", err));
  if (!put_binary(o, "table", 1, (hb_bytes){t->data, t->len}, err)) return FALSE;
  PW(thrift_protocol_write_field_begin(o, "tputs", T_LIST, 2, err));
  PW(thrift_protocol_write_list_begin(o, T_STRUCT, (gint32)rows, err));
  for (size_t a = 0, z; a < n; a = z) {
    for (z = a + 1; z < n && same_bytes(cells[z].row, cells[a].row); z++) continue;
    PW(thrift_protocol_write_struct_begin(o, "TPut", err));
    if (!put_binary(o, "row", 1, cells[a].row, err)) return FALSE;
    PW(thrift_protocol_write_field_begin(o, "columnValues", T_LIST, 2, err));
    PW(thrift_protocol_write_list_begin(o, T_STRUCT, (gint32)(z - a), err));
    for (size_t i = a; i < z; i++) {
      PW(thrift_protocol_write_struct_begin(o, "TColumnValue", err));
      if (!put_binary(o, "family", 1, cells[i].family, err) ||
          !put_binary(o, "qualifier", 2, cells[i].qualifier, err) ||
          !put_binary(o, "value", 3, cells[i].value, err))
        return FALSE;
      PW(thrift_protocol_write_field_begin(o, "timestamp", T_I64, 4, err));
      PW(thrift_protocol_write_i64(o, cells[i].ts, err));
      PW(thrift_protocol_write_field_end(o, err));
      PW(thrift_protocol_write_field_stop(o, err));
      PW(thrift_protocol_write_struct_end(o, err));
    }
    PW(thrift_protocol_write_list_end(o, err));
    PW(thrift_protocol_write_field_end(o, err));
    PW(thrift_protocol_write_field_stop(o, err));
    PW(thrift_protocol_write_struct_end(o, err));
  }
  PW(thrift_protocol_write_list_end(o, err));
  PW(thrift_protocol_write_field_end(o, err));
  PW(thrift_protocol_write_field_stop(o, err));
  PW(thrift_protocol_write_struct_end(o, err));
  PW(thrift_protocol_write_message_end(o, err));
  if (!thrift_transport_flush(o->transport, err)) return FALSE;
  return t_h_base_service_client_recv_put_multiple(c->svc, io, err);
}
#undef PW

int hb_put_cells(hb_client *c, const char *ns, const char *name, const hb_put *cells, size_t n) {
  if (!n) return KV_OK;
  size_t rows = 0;
  int rc = check_puts(cells, n, &rows);
  if (rc) return rc;
  GByteArray *t = hbc_table_bytes(ns, name);
  HB_CALL(c, "putMultiple", true, ok = put_multiple(c, t, cells, n, rows, &io, &err));
  g_byte_array_unref(t);
  return rc;
}

int hb_delete_row(hb_client *c, const char *ns, const char *name, hb_bytes row,
                  const hb_bytes *family, int64_t ts) {
  if (!row.n) return kv_error(KV_ERR_INVALID, "hbase: delete of an empty row key");
  TDelete *d = g_object_new(TYPE_T_DELETE, NULL);
  d->row = hbc_gba(row.p, row.n);
  if (family) {
    TColumn *col = g_object_new(TYPE_T_COLUMN, NULL);
    col->family = hbc_gba(family->p, family->n);
    g_ptr_array_add(d->columns, col);
    d->__isset_columns = TRUE;
  }
  if (ts >= 0) {
    d->timestamp = ts;
    d->__isset_timestamp = TRUE;
  }
  d->deleteType = T_DELETE_TYPE_DELETE_COLUMNS;
  d->__isset_deleteType = TRUE;
  GByteArray *t = hbc_table_bytes(ns, name);
  int rc;
  HB_CALL(c, "deleteSingle", true,
          ok = t_h_base_service_if_delete_single(c->svc, t, d, &io, &err));
  rc = hbc_table_missing(rc, "deleteSingle", t);
  g_byte_array_unref(t);
  g_object_unref(d);
  return rc;
}

void hbc_add_families(GPtrArray *columns, const hb_bytes *families, size_t n) {
  for (size_t i = 0; i < n; i++) {
    TColumn *col = g_object_new(TYPE_T_COLUMN, NULL);
    col->family = hbc_gba(families[i].p, families[i].n);
    g_ptr_array_add(columns, col);
  }
}

int hb_get(hb_client *c, const char *ns, const char *name, hb_bytes row, const hb_bytes *families,
           size_t nfamilies, hb_row *out, bool *found) {
  *found = false;
  hb_row_free(out);
  if (!row.n) return kv_error(KV_ERR_INVALID, "hbase: get of an empty row key");
  TGet *g = g_object_new(TYPE_T_GET, NULL);
  g->row = hbc_gba(row.p, row.n);
  if (nfamilies) {
    hbc_add_families(g->columns, families, nfamilies);
    g->__isset_columns = TRUE;
  }
  GByteArray *t = hbc_table_bytes(ns, name);
  hb_rows rows = {0};
  int rc;
  for (int try_ = 0;; try_++) { /* HB_CALL's rule: once more after a lost connection */
    if ((rc = hbc_ensure(c)) != KV_OK) break;
    GError *err = NULL;
    bool again = false;
    gboolean sent = t_h_base_service_client_send_get(c->svc, t, g, &err);
    rc = hbc_hand_reply(c, "get", 0, &rows, sent, err, &again);
    if (!rc || !again || try_ > 0) break;
  }
  rc = hbc_table_missing(rc, "get", t);
  if ((*found = !rc && rows.n && rows.v[0].ncells > 0)) hb_rows_take(&rows, 0, out);
  hb_rows_free(&rows);
  g_byte_array_unref(t);
  g_object_unref(g);
  return rc;
}

int hb_check_and_put(hb_client *c, const char *ns, const char *name, hb_bytes row,
                     hb_bytes family, hb_bytes qualifier, const hb_bytes *expected,
                     const hb_put *cells, size_t n, bool *applied) {
  *applied = false;
  for (size_t i = 0; i < n; i++)
    if (!same_bytes(cells[i].row, row))
      return kv_error(KV_ERR_INVALID, "hbase: check_and_put cell %zu is of another row", i);
  hb_mutation *m = calloc(n ? n : 1, sizeof *m); /* the puts as mutations of the row */
  if (!m) return kv_error(KV_ERR_NOMEM, "hbase: out of memory");
  for (size_t i = 0; i < n; i++)
    m[i] = (hb_mutation){HB_MUT_PUT, cells[i].family, cells[i].qualifier, cells[i].value,
                         cells[i].ts};
  int rc = hb_check_and_mutate(c, ns, name, row, family, qualifier, expected, m, n, applied);
  free(m);
  return rc;
}

void hb_regions_free(hb_region *r, size_t n) {
  if (!r) return;
  for (size_t i = 0; i < n; i++) {
    free(r[i].start);
    free(r[i].end);
    free(r[i].server);
  }
  free(r);
}

static uint8_t *dup_bytes(const GByteArray *a, gboolean isset, size_t *len) {
  *len = isset && a ? a->len : 0;
  uint8_t *p = malloc(*len ? *len : 1);
  if (p && *len) memcpy(p, a->data, *len);
  return p;
}

static int region_cmp(const void *a, const void *b) {
  const hb_region *x = a, *y = b;
  size_t m = x->start_len < y->start_len ? x->start_len : y->start_len;
  int d = m ? memcmp(x->start, y->start, m) : 0;
  if (d) return d;
  return x->start_len < y->start_len ? -1 : x->start_len > y->start_len;
}

int hb_regions(hb_client *c, const char *ns, const char *name, hb_region **out, size_t *n) {
  *out = NULL;
  *n = 0;
  GByteArray *t = hbc_table_bytes(ns, name);
  GPtrArray *locs = g_ptr_array_new_with_free_func(g_object_unref);
  int rc;
  HB_CALL(c, "getAllRegionLocations", true,
          ok = t_h_base_service_if_get_all_region_locations(c->svc, &locs, t, &io, &err));
  rc = hbc_table_missing(rc, "getAllRegionLocations", t);
  g_byte_array_unref(t);
  if (!rc && locs->len) {
    hb_region *r = calloc(locs->len, sizeof *r);
    if (!r) rc = kv_error(KV_ERR_NOMEM, "hbase: out of memory");
    for (guint i = 0; !rc && i < locs->len; i++) {
      const THRegionLocation *l = g_ptr_array_index(locs, i);
      const THRegionInfo *ri = l->regionInfo;
      r[i].start = dup_bytes(ri->startKey, ri->__isset_startKey, &r[i].start_len);
      r[i].end = dup_bytes(ri->endKey, ri->__isset_endKey, &r[i].end_len);
      const char *host = l->serverName->hostName ? l->serverName->hostName : "?";
      size_t sl = strlen(host) + 16;
      if ((r[i].server = malloc(sl)) != NULL)
        snprintf(r[i].server, sl, "%s:%d", host, (int)l->serverName->port);
      r[i].id = ri->regionId;
      if (!r[i].start || !r[i].end || !r[i].server)
        rc = kv_error(KV_ERR_NOMEM, "hbase: out of memory");
    }
    if (!rc) {
      qsort(r, locs->len, sizeof *r, region_cmp);
      *out = r;
      *n = locs->len;
    } else {
      hb_regions_free(r, locs->len);
    }
  }
  g_ptr_array_unref(locs);
  return rc;
}

/* ---- Row mutations (puts and deletes of one row) ----------------------------------------- */
static int check_mutations(hb_bytes row, const hb_mutation *m, size_t n) {
  if (!row.n) return kv_error(KV_ERR_INVALID, "hbase: mutation of an empty row key");
  for (size_t i = 0; i < n; i++) {
    if (m[i].kind < HB_MUT_PUT || m[i].kind > HB_MUT_DELETE_FAMILY)
      return kv_error(KV_ERR_INVALID, "hbase: mutation %zu has an unknown kind %d", i, m[i].kind);
    if (!m[i].family.n) return kv_error(KV_ERR_INVALID, "hbase: mutation %zu has an empty family", i);
    if (m[i].ts < 0)
      return kv_error(KV_ERR_INVALID, "hbase: mutation %zu has a negative timestamp %lld", i,
                      (long long)m[i].ts);
  }
  return KV_OK;
}

/* A TRowMutations of m[0..n): one TPut or TDelete per mutation. The delete's timestamp is
** set on its TColumn (the handler reads it there) and on the TDelete. */
static TRowMutations *row_mutations(hb_bytes row, const hb_mutation *m, size_t n) {
  TRowMutations *rm = g_object_new(TYPE_T_ROW_MUTATIONS, NULL);
  rm->row = hbc_gba(row.p, row.n);
  for (size_t i = 0; i < n; i++) {
    TMutation *tm = g_object_new(TYPE_T_MUTATION, NULL);
    if (m[i].kind == HB_MUT_PUT) {
      TPut *p = g_object_new(TYPE_T_PUT, NULL);
      p->row = hbc_gba(row.p, row.n);
      hb_put hp = {row, m[i].family, m[i].qualifier, m[i].value, m[i].ts};
      g_ptr_array_add(p->columnValues, column_value(&hp));
      if (tm->put) g_object_unref(tm->put);
      tm->put = p;
      tm->__isset_put = TRUE;
    } else {
      TDelete *d = g_object_new(TYPE_T_DELETE, NULL);
      d->row = hbc_gba(row.p, row.n);
      TColumn *col = g_object_new(TYPE_T_COLUMN, NULL);
      col->family = hbc_gba(m[i].family.p, m[i].family.n);
      if (m[i].kind != HB_MUT_DELETE_FAMILY) {
        col->qualifier = hbc_gba(m[i].qualifier.p, m[i].qualifier.n);
        col->__isset_qualifier = TRUE;
      }
      col->timestamp = m[i].ts;
      col->__isset_timestamp = TRUE;
      g_ptr_array_add(d->columns, col);
      d->__isset_columns = TRUE;
      d->timestamp = m[i].ts;
      d->__isset_timestamp = TRUE;
      d->deleteType = m[i].kind == HB_MUT_DELETE_VERSION  ? T_DELETE_TYPE_DELETE_COLUMN
                      : m[i].kind == HB_MUT_DELETE_COLUMN ? T_DELETE_TYPE_DELETE_COLUMNS
                                                          : T_DELETE_TYPE_DELETE_FAMILY;
      d->__isset_deleteType = TRUE;
      if (tm->deleteSingle) g_object_unref(tm->deleteSingle);
      tm->deleteSingle = d;
      tm->__isset_deleteSingle = TRUE;
    }
    g_ptr_array_add(rm->mutations, tm);
  }
  return rm;
}

int hb_mutate_row(hb_client *c, const char *ns, const char *name, hb_bytes row,
                  const hb_mutation *m, size_t n) {
  if (!n) return KV_OK;
  int rc = check_mutations(row, m, n);
  if (rc) return rc;
  TRowMutations *rm = row_mutations(row, m, n);
  GByteArray *t = hbc_table_bytes(ns, name);
  HB_CALL(c, "mutateRow", true, ok = t_h_base_service_if_mutate_row(c->svc, t, rm, &io, &err));
  rc = hbc_table_missing(rc, "mutateRow", t);
  g_byte_array_unref(t);
  g_object_unref(rm);
  return rc;
}

/* The columns row deletes d cover (family, or family:qualifier), with their timestamps when
** ts, appended to cols. */
static void delete_columns(const hb_row_delete *d, bool ts, GPtrArray *cols) {
  for (size_t i = 0; i < d->n; i++) {
    const hb_mutation *m = &d->m[i];
    TColumn *col = g_object_new(TYPE_T_COLUMN, NULL);
    col->family = hbc_gba(m->family.p, m->family.n);
    if (m->kind != HB_MUT_DELETE_FAMILY) {
      col->qualifier = hbc_gba(m->qualifier.p, m->qualifier.n);
      col->__isset_qualifier = TRUE;
    }
    col->timestamp = m->ts;
    col->__isset_timestamp = ts;
    g_ptr_array_add(cols, col);
  }
}

/* A TDelete of row deletes d (checked: deletes of one kind, each column at its timestamp). */
static TDelete *row_delete(const hb_row_delete *d) {
  TDelete *td = g_object_new(TYPE_T_DELETE, NULL);
  td->row = hbc_gba(d->row.p, d->row.n);
  delete_columns(d, true, td->columns);
  for (size_t i = 0; i < d->n; i++)
    if (i == 0 || d->m[i].ts > td->timestamp) td->timestamp = d->m[i].ts;
  td->__isset_columns = TRUE;
  td->__isset_timestamp = TRUE;
  int k = d->m[0].kind;
  td->deleteType = k == HB_MUT_DELETE_VERSION  ? T_DELETE_TYPE_DELETE_COLUMN
                   : k == HB_MUT_DELETE_COLUMN ? T_DELETE_TYPE_DELETE_COLUMNS
                                               : T_DELETE_TYPE_DELETE_FAMILY;
  td->__isset_deleteType = TRUE;
  return td;
}

static int check_row_deletes(const hb_row_delete *d, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (!d[i].n) return kv_error(KV_ERR_INVALID, "hbase: row delete %zu has no column", i);
    int rc = check_mutations(d[i].row, d[i].m, d[i].n);
    if (rc) {
      char msg[300];
      snprintf(msg, sizeof msg, "%s", kv_errmsg() + strlen("hbase: "));
      return kv_error(rc, "hbase: row delete %zu: %s", i, msg);
    }
    for (size_t j = 0; j < d[i].n; j++)
      if (d[i].m[j].kind == HB_MUT_PUT || d[i].m[j].kind != d[i].m[0].kind)
        return kv_error(KV_ERR_INVALID,
                        "hbase: row delete %zu: mutation %zu is a put or another delete kind", i, j);
  }
  return KV_OK;
}

int hb_delete_rows(hb_client *c, const char *ns, const char *name, const hb_row_delete *d,
                   size_t n) {
  if (!n) return KV_OK;
  int rc = check_row_deletes(d, n);
  if (rc) return rc;
  GPtrArray *dels = g_ptr_array_new_with_free_func(g_object_unref);
  for (size_t i = 0; i < n; i++) g_ptr_array_add(dels, row_delete(&d[i]));
  GByteArray *t = hbc_table_bytes(ns, name);
  GPtrArray *left = g_ptr_array_new_with_free_func(g_object_unref);
  HB_CALL(c, "deleteMultiple", true,
          ok = t_h_base_service_if_delete_multiple(c->svc, &left, t, dels, &io, &err));
  rc = hbc_table_missing(rc, "deleteMultiple", t);
  if (!rc && left->len)
    rc = kv_error(KV_ERR_IO, "hbase: deleteMultiple: %u of %zu row deletes not applied",
                  left->len, n);
  g_ptr_array_unref(left);
  g_byte_array_unref(t);
  g_ptr_array_unref(dels);
  return rc;
}

int hb_cells_exist(hb_client *c, const char *ns, const char *name, const hb_row_delete *d,
                   size_t n, bool *exists) {
  if (!n) return KV_OK;
  int rc = check_row_deletes(d, n);
  if (rc) return rc;
  GPtrArray *gets = g_ptr_array_new_with_free_func(g_object_unref);
  for (size_t i = 0; i < n; i++) {
    TGet *g = g_object_new(TYPE_T_GET, NULL);
    g->row = hbc_gba(d[i].row.p, d[i].row.n);
    delete_columns(&d[i], false, g->columns);
    g->__isset_columns = TRUE;
    g_ptr_array_add(gets, g);
  }
  GByteArray *t = hbc_table_bytes(ns, name);
  GArray *res = g_array_new(FALSE, FALSE, sizeof(gboolean));
  HB_CALL(c, "existsAll", true,
          ok = t_h_base_service_if_exists_all(c->svc, &res, t, gets, &io, &err));
  rc = hbc_table_missing(rc, "existsAll", t);
  if (!rc && res->len != n)
    rc = kv_error(KV_ERR_IO, "hbase: existsAll: %u answers for %zu rows", res->len, n);
  for (size_t i = 0; !rc && i < n; i++) exists[i] = g_array_index(res, gboolean, i) != FALSE;
  g_array_unref(res);
  g_byte_array_unref(t);
  g_ptr_array_unref(gets);
  return rc;
}

int hb_check_and_mutate(hb_client *c, const char *ns, const char *name, hb_bytes row,
                        hb_bytes family, hb_bytes qualifier, const hb_bytes *expected,
                        const hb_mutation *m, size_t n, bool *applied) {
  *applied = false;
  if (expected && !expected->n)
    return kv_error(KV_ERR_INVALID,
                    "hbase: check_and_mutate cannot check for an empty value (HBase reads an "
                    "empty expected value as \"absent\")");
  int rc = check_mutations(row, m, n);
  if (rc) return rc;
  TRowMutations *rm = row_mutations(row, m, n);
  GByteArray *t = hbc_table_bytes(ns, name), *r = hbc_gba(row.p, row.n), *f = hbc_gba(family.p, family.n),
             *q = hbc_gba(qualifier.p, qualifier.n),
             *v = expected ? hbc_gba(expected->p, expected->n) : g_byte_array_new();
  gboolean r_ok = FALSE;
  HB_CALL(c, "checkAndMutate", false,
          ok = t_h_base_service_if_check_and_mutate(c->svc, &r_ok, t, r, f, q, T_COMPARE_OP_EQUAL,
                                                    v, rm, &io, &err));
  rc = hbc_table_missing(rc, "checkAndMutate", t);
  *applied = !rc && r_ok;
  g_byte_array_unref(t);
  g_byte_array_unref(r);
  g_byte_array_unref(f);
  g_byte_array_unref(q);
  g_byte_array_unref(v);
  g_object_unref(rm);
  return rc;
}

int hb_drop_namespace(hb_client *c, const char *ns) {
  if (!ns || !*ns || !strcmp(ns, "default"))
    return kv_error(KV_ERR_INVALID, "hbase: the default namespace cannot be dropped");
  GPtrArray *names = g_ptr_array_new_with_free_func(g_object_unref);
  gchar *nsname = g_strdup(ns);
  int rc;
  HB_CALL(c, "getTableNamesByNamespace", true,
          ok = t_h_base_service_if_get_table_names_by_namespace(c->svc, &names, nsname, &io, &err));
  for (guint i = 0; !rc && i < names->len; i++) {
    TTableName *tn = g_ptr_array_index(names, i);
    char q[512];
    snprintf(q, sizeof q, "%.*s", (int)tn->qualifier->len, (const char *)tn->qualifier->data);
    rc = hb_drop_table(c, ns, q);
    if (rc == KV_ERR_NOTFOUND) rc = KV_OK;
  }
  if (!rc)
    HB_CALL(c, "deleteNamespace", true,
            ok = t_h_base_service_if_delete_namespace(c->svc, nsname, &io, &err));
  g_free(nsname);
  g_ptr_array_unref(names);
  return rc;
}

static int family_call(hb_client *c, const char *ns, const char *name, const char *family,
                       int max_versions, bool add) {
  TTableName *t = table_name(ns, name);
  TColumnFamilyDescriptor *f = g_object_new(TYPE_T_COLUMN_FAMILY_DESCRIPTOR, NULL);
  f->name = gba_str(family);
  if (max_versions > 0) {
    f->maxVersions = max_versions;
    f->__isset_maxVersions = TRUE;
  }
  int rc;
  if (add)
    HB_CALL(c, "addColumnFamily", false,
            ok = t_h_base_service_if_add_column_family(c->svc, t, f, &io, &err));
  else
    HB_CALL(c, "modifyColumnFamily", true,
            ok = t_h_base_service_if_modify_column_family(c->svc, t, f, &io, &err));
  g_object_unref(f);
  g_object_unref(t);
  return rc;
}

int hb_add_family(hb_client *c, const char *ns, const char *name, const char *family,
                  int max_versions) {
  return family_call(c, ns, name, family, max_versions, true);
}

int hb_set_family_versions(hb_client *c, const char *ns, const char *name, const char *family,
                           int max_versions) {
  return family_call(c, ns, name, family, max_versions, false);
}
