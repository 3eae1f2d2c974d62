/*
** kv/backend/hbase/hb_rsocket.h: a ThriftSocket that reads ahead, for the Thrift2 client
** (hb_client.c). thrift_c_glib's buffered transport hands each small read (a 1- or 4-byte
** field) down to the socket, one recv() each; this socket serves reads from its own buffer of
** HB_RSOCKET_BYTES, filled by one recv() of whatever has arrived. Not here: connecting, the
** protocol, the calls (hb_client.c).
*/
#ifndef ROWAN_KV_BACKEND_HB_RSOCKET_H
#define ROWAN_KV_BACKEND_HB_RSOCKET_H

#include <glib-object.h>

#define HB_RSOCKET_BYTES (64 * 1024) /* the read-ahead buffer */

/* The GType of the socket: g_object_new(hb_rsocket_get_type(), "hostname", HOST, "port",
** PORT, NULL), then used as a ThriftSocket. */
GType hb_rsocket_get_type(void);

#endif
