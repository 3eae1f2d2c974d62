/*
** kv/backend/hbase/hb_rsocket.c: the read-ahead ThriftSocket of the Thrift2 client
** (hb_rsocket.h). Reads of a buffer's size or more go straight to the socket; open, write
** and close are ThriftSocket's. The same buffer is the byte source of the hand reader of
** rows (hb_rsocket_more, hb_results.h). Not here: the client's calls (hb_client.c).
*/
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include <thrift/c_glib/thrift.h>
#include <thrift/c_glib/transport/thrift_socket.h>

#include "kv/backend/hbase/hb_rsocket.h"

/* ---- a socket that reads ahead ----------------------------------------------------------
** thrift_c_glib's buffered transport hands each small read (a 1- or 4-byte field) down to the
** socket, which makes it one recv() each: a getScannerRows of 1,000 rows was ~240,000 system
** calls. HbRSocket is a ThriftSocket whose read serves from its own 64 KiB buffer, filled by
** one recv() of whatever has arrived; a read of a buffer's size or more goes straight to the
** socket. The rest (open, write, close) is ThriftSocket's. */
typedef struct HbRSocket {
  ThriftSocket parent;
  guint8 *buf;
  guint32 have, at; /* bytes in buf, and the next one to hand out */
} HbRSocket;
typedef struct HbRSocketClass {
  ThriftSocketClass parent;
} HbRSocketClass;

G_DEFINE_TYPE(HbRSocket, hb_rsocket, THRIFT_TYPE_SOCKET)

/* One recv() of whatever has arrived into the empty buffer (waiting for one byte at least);
** -1 and errno (0: the peer closed the connection) when none came. */
static int refill(HbRSocket *s) {
  ssize_t n;
  do n = recv(s->parent.sd, s->buf, HB_RSOCKET_BYTES, 0); while (n < 0 && errno == EINTR);
  if (n <= 0) {
    if (n == 0) errno = 0;
    return -1;
  }
  s->have = (guint32)n;
  s->at = 0;
  return 0;
}

static const char *why_not(void) {
  return errno == 0 ? "the connection was closed" : strerror(errno);
}

static gint32 hb_rsocket_read(ThriftTransport *t, gpointer buf, guint32 len, GError **error) {
  HbRSocket *s = (HbRSocket *)t;
  guint8 *out = buf;
  guint32 got = 0;
  while (got < len) {
    if (s->at == s->have) {
      if (len - got >= HB_RSOCKET_BYTES) {
        gint32 r = THRIFT_TRANSPORT_CLASS(hb_rsocket_parent_class)->read(t, out + got, len - got,
                                                                         error);
        return r < 0 ? r : (gint32)(got + (guint32)r);
      }
      if (refill(s) != 0) {
        g_set_error(error, THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_RECEIVE,
                    "failed to read %u bytes - %s", len, why_not());
        return -1;
      }
    }
    guint32 k = len - got < s->have - s->at ? len - got : s->have - s->at;
    memcpy(out + got, s->buf + s->at, k);
    s->at += k;
    got += k;
  }
  return (gint32)got;
}

static void hb_rsocket_finalize(GObject *o) {
  g_free(((HbRSocket *)o)->buf);
  G_OBJECT_CLASS(hb_rsocket_parent_class)->finalize(o);
}

static void hb_rsocket_init(HbRSocket *s) {
  s->buf = g_malloc(HB_RSOCKET_BYTES);
  s->have = s->at = 0;
}

static void hb_rsocket_class_init(HbRSocketClass *k) {
  THRIFT_TRANSPORT_CLASS(k)->read = hb_rsocket_read;
  G_OBJECT_CLASS(k)->finalize = hb_rsocket_finalize;
}


int hb_rsocket_more(void *ctx, const uint8_t **p, size_t *n, char *why, size_t whylen) {
  HbRSocket *s = ctx;
  if (s->at == s->have && refill(s) != 0) {
    snprintf(why, whylen, "failed to read - %s", why_not());
    return -1;
  }
  *p = s->buf + s->at;
  *n = s->have - s->at;
  s->at = s->have; /* handed out: consumed, unless given back (hb_rsocket_unread) */
  return 0;
}

void hb_rsocket_unread(GObject *sock, size_t n) {
  HbRSocket *s = (HbRSocket *)sock;
  s->at = n <= s->at ? s->at - (guint32)n : 0;
}
