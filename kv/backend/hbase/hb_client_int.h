/*
** kv/backend/hbase/hb_client_int.h: what hb_client.c (connections, table and row calls) and
** hb_scanner.c (the scanner calls) share inside the Thrift2 client: the connection's state,
** the retry-once macro and the helpers that turn the generated c_glib objects and the hand
** reader's replies into Rowan statuses. Not used outside those two files; the client's
** interface is hb_client.h.
*/
#ifndef ROWAN_KV_BACKEND_HBASE_HB_CLIENT_INT_H
#define ROWAN_KV_BACKEND_HBASE_HB_CLIENT_INT_H

#include <stdbool.h>

#include <glib-object.h>
#include <thrift/c_glib/protocol/thrift_binary_protocol.h>
#include <thrift/c_glib/thrift.h>
#include <thrift/c_glib/transport/thrift_socket.h>

#include "t_h_base_service.h"

#include "kv/backend/hbase/hb_client.h"
#include "kv/backend/hbase/hb_results.h"

struct hb_client {
  char *host;
  int port;
  int timeout_ms;
  ThriftSocket *sock;
  ThriftTransport *tr;
  ThriftProtocol *proto;
  THBaseServiceIf *svc; /* NULL while disconnected */
};

/* Connected, or connect now: KV_OK or KV_ERR_IO naming the gateway. */
int hbc_ensure(hb_client *c);
/* The status of a failed call: HBase's exception (the connection stays), or a transport
** error (the connection is dropped; *retry set when the caller may try once more; retry may
** be NULL). Takes io, ia and err. */
int hbc_call_failed(hb_client *c, const char *what, TIOError *io, TIllegalArgument *ia,
                    GError *err, bool *retry);
/* The reply to `what`, whose request was just sent (sent false: the send failed with err),
** read into rows by the hand reader (hb_results.h; flags HB_RES_*), its outcome a status as
** hbc_call_failed makes it (*retry likewise). */
int hbc_hand_reply(hb_client *c, const char *what, unsigned flags, hb_rows *rows,
                   gboolean sent, GError *err, bool *retry);
/* A new GByteArray holding p[0..n). */
GByteArray *hbc_gba(const void *p, size_t n);
/* The table's name as HBase spells it in data calls: NS:NAME, or NAME in the default
** namespace (a new GByteArray). */
GByteArray *hbc_table_bytes(const char *ns, const char *name);
/* rc made KV_ERR_NOTFOUND ("no table ...") when it is a data call's TIOError naming table t
** alone (HBase's TableNotFoundException); else rc. */
int hbc_table_missing(int rc, const char *what, const GByteArray *t);
/* One TColumn of each family (the whole family) appended to columns. */
void hbc_add_families(GPtrArray *columns, const hb_bytes *families, size_t n);

/* Run CALL (a statement setting `ok`, using io/ia/err) once, and once more on a fresh
** connection when the transport failed and `idem` allows it. */
#define HB_CALL(c, what, idem, CALL)                                    \
  do {                                                                  \
    for (int try_ = 0;; try_++) {                                       \
      rc = hbc_ensure(c);                                               \
      if (rc) break;                                                    \
      TIOError *io = NULL;                                              \
      TIllegalArgument *ia = NULL;                                      \
      GError *err = NULL;                                               \
      gboolean ok;                                                      \
      CALL;                                                             \
      (void)ia;                                                         \
      if (ok) {                                                         \
        if (io) g_object_unref(io);                                     \
        rc = KV_OK;                                                     \
        break;                                                          \
      }                                                                 \
      bool again_;                                                      \
      rc = hbc_call_failed(c, what, io, ia, err, &again_);              \
      if (!again_ || !(idem) || try_ > 0) break;                        \
    }                                                                   \
  } while (0)

#endif /* ROWAN_KV_BACKEND_HBASE_HB_CLIENT_INT_H */
