/*
** kv/backend/hbase/hb_rsocket.h: a ThriftSocket that reads ahead, for the Thrift2 client
** (hb_client.c). thrift_c_glib's buffered transport hands each small read (a 1- or 4-byte
** field) down to the socket, one recv() each; this socket serves reads from its own buffer of
** HB_RSOCKET_BYTES, filled by one recv() of whatever has arrived. Not here: connecting, the
** protocol, the calls (hb_client.c).
*/
#ifndef ROWAN_KV_BACKEND_HB_RSOCKET_H
#define ROWAN_KV_BACKEND_HB_RSOCKET_H

#include <stddef.h>
#include <stdint.h>

#include <glib-object.h>

#define HB_RSOCKET_BYTES (64 * 1024) /* the read-ahead buffer */

/* The GType of the socket: g_object_new(hb_rsocket_get_type(), "hostname", HOST, "port",
** PORT, NULL), then used as a ThriftSocket. */
GType hb_rsocket_get_type(void);

/* hb_src's more() (hb_results.h) over the socket ctx (an HbRSocket): the bytes read ahead and
** not handed out yet, or, when there are none, what one recv() brings (waiting up to the
** socket's receive timeout). 0, or -1 with why[] ("failed to read - REASON"). */
int hb_rsocket_more(void *ctx, const uint8_t **p, size_t *n, char *why, size_t whylen);
/* Give back the last n bytes hb_rsocket_more handed out (not read: the next read starts
** there). */
void hb_rsocket_unread(GObject *sock, size_t n);

#endif
