/*
** tests/tu_hbase.h: header-only helpers for tests that can run their databases on a real
** HBase instead of the in-memory store: with ROWAN_BACKEND=hbase (in a build with
** ROWAN_HBASE) tu_hbase_uri() gives a fresh namespace's hbase:// URI on the gateway the
** environment names (ROWAN_HBASE_URI, else hbase://$ROWAN_HBASE_THRIFT, else
** hbase://127.0.0.1:9090), and tu_hbase_drop() drops that namespace with its tables when the
** test is done (docs/HBASE.md). Without ROWAN_BACKEND=hbase both do nothing and the test
** keeps its in-memory store. Not here: starting HBase (scripts/hbase-up.sh).
*/
#ifndef ROWAN_TU_HBASE_H
#define ROWAN_TU_HBASE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef ROWAN_HBASE
#include <unistd.h>

#include "kv/backend/hbase/backend_hbase.h"
#endif

/* Whether ROWAN_BACKEND asks for HBase. */
static inline int tu_hbase_wanted(void) {
  const char *be = getenv("ROWAN_BACKEND");
  return be && strcmp(be, "hbase") == 0;
}

/* With ROWAN_BACKEND=hbase: the next fresh namespace's URI into uri (PREFIX_PID_N, or the URI's
** own namespace as the prefix when ROWAN_HBASE_URI names one); returns 0. Otherwise uri is
** empty and it returns 0. Returns -1 with a message in err when the URI is bad or the build
** has no HBase support. */
static inline int tu_hbase_uri(const char *prefix, char *uri, size_t cap, char *err,
                               size_t errcap) {
  uri[0] = 0;
  if (!tu_hbase_wanted()) return 0;
#ifdef ROWAN_HBASE
  static int n_dbs;
  const char *base = getenv("ROWAN_HBASE_URI"), *gw = getenv("ROWAN_HBASE_THRIFT");
  char gw_uri[320];
  if ((!base || !*base) && gw && *gw) { /* the gateway the hbase tests are given */
    snprintf(gw_uri, sizeof gw_uri, "hbase://%s", gw);
    base = gw_uri;
  }
  if (!base || !*base) base = "hbase://127.0.0.1:9090";
  kv_hbase_uri u;
  if (kv_hbase_parse_uri(base, &u) != KV_OK) {
    snprintf(err, errcap, "ROWAN_HBASE_URI: %s", kv_errmsg());
    return -1;
  }
  const char *slash = strchr(base + 8, '/');
  int n = snprintf(uri, cap, "hbase://%s:%d/%s_%ld_%d", u.host, u.port,
                   slash && slash[1] ? u.ns : prefix, (long)getpid(), ++n_dbs);
  if (n < 0 || (size_t)n >= cap) {
    snprintf(err, errcap, "ROWAN_HBASE_URI: too long for a namespace URI");
    uri[0] = 0;
    return -1;
  }
  return 0;
#else
  (void)prefix;
  (void)cap;
  snprintf(err, errcap, "ROWAN_BACKEND=hbase: built without HBase support");
  return -1;
#endif
}

/* Drop the namespace tu_hbase_uri() gave (nothing when uri is empty); a failure is printed. */
static inline void tu_hbase_drop(const char *uri) {
#ifdef ROWAN_HBASE
  if (uri[0] && kv_backend_hbase_drop_namespace(uri) != KV_OK)
    fprintf(stderr, "dropping %s: %s\n", uri, kv_errmsg());
#else
  (void)uri;
#endif
}

#endif
