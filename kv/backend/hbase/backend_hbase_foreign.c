/*
** kv/backend/hbase/backend_hbase_foreign.c: kv_backend_ops.foreign_table of the HBase backend:
** whether a table name that Rowan's registry does not hold names an HBase table that Apache
** Phoenix (or another program) created, so that a statement naming it is refused with a
** message saying so instead of "unknown table", and a CREATE TABLE of that name writes
** nothing (exec/ddl.c, planner/bind_from.c).
**
** Where Phoenix keeps a table of SQL name [S.]T: without namespace mapping (Phoenix's
** default) in HBase's `default` namespace as `S.T` or `T`; with
** phoenix.schema.isNamespaceMappingEnabled as `S:T`, a table without a schema still in
** `default`. Rowan's own tables are `r_...` in the URI's namespace (`rowan` when the URI names
** none), so they never take these names. The candidates asked, in order: `default:NAME`, then
** `S:T` for a dotted NAME or `NS:NAME` in Rowan's namespace NS (a Phoenix schema mapped to it).
** An existing candidate is Phoenix's when SYSTEM.CATALOG (`default:SYSTEM.CATALOG` or
** `SYSTEM:CATALOG`) has its header row, whose key is the tenant (empty), 0, the schema, 0,
** the table name (Phoenix's row key of VARCHARs separated by 0 bytes); else it is reported as
** an HBase table Rowan did not create.
**
** Not here: the registry and DDL (backend_hbase.c), reading Phoenix's cells (Rowan does not).
*/
#include <stdio.h>
#include <string.h>

#include "kv/backend/hbase/backend_hbase_int.h"

/* Whether Phoenix's SYSTEM.CATALOG (either layout) has the header row of schema.table. */
static bool phoenix_knows(hbk *h, const char *schema, const char *table) {
  static const char *const cat[][2] = {{"default", "SYSTEM.CATALOG"}, {"SYSTEM", "CATALOG"}};
  uint8_t key[600];
  size_t ls = strlen(schema), lt = strlen(table);
  if (ls + lt + 2 > sizeof key) return false;
  key[0] = 0;
  memcpy(key + 1, schema, ls);
  key[1 + ls] = 0;
  memcpy(key + 2 + ls, table, lt);
  hb_bytes row = {key, ls + lt + 2};
  for (size_t i = 0; i < sizeof cat / sizeof cat[0]; i++) {
    bool exists = false, found = false;
    if (hb_table_exists(h->c, cat[i][0], cat[i][1], &exists) != KV_OK || !exists) continue;
    hb_row r = {0};
    int rc = hb_get(h->c, cat[i][0], cat[i][1], row, NULL, 0, &r, &found);
    hb_row_free(&r);
    if (rc == KV_OK && found) return true;
  }
  return false;
}

int hbk_foreign_table(kv_backend *be, const char *name, char *msg, size_t cap) {
  hbk *h = be->impl;
  if (cap) msg[0] = 0;
  if (!name || !*name || strlen(name) > 256) return KV_OK;
  const char *dot = strchr(name, '.');
  char schema[260] = "", table[260];
  if (dot) {
    snprintf(schema, sizeof schema, "%.*s", (int)(dot - name), name);
    snprintf(table, sizeof table, "%s", dot + 1);
  } else {
    snprintf(table, sizeof table, "%s", name);
  }
  /* candidates: (namespace, qualifier, Phoenix schema, Phoenix table) */
  struct candidate { const char *ns, *q, *schema, *table; } cand[2];
  int n = 0;
  cand[n++] = (struct candidate){"default", name, schema, table};
  if (dot) cand[n++] = (struct candidate){schema, table, schema, table};
  else if (strcmp(h->uri.ns, "default") != 0 && strcmp(name, HBK_REGISTRY) != 0)
    cand[n++] = (struct candidate){h->uri.ns, name, h->uri.ns, name};
  hbk_lock(h);
  for (int i = 0; i < n; i++) {
    bool exists = false;
    /* a namespace that does not exist is an error here: nothing of that name */
    if (hb_table_exists(h->c, cand[i].ns, cand[i].q, &exists) != KV_OK || !exists) continue;
    if (phoenix_knows(h, cand[i].schema, cand[i].table))
      snprintf(msg, cap, "table %s is the HBase table %s:%s, created by Apache Phoenix (its "
               "SYSTEM.CATALOG describes it); Rowan does not read Phoenix's encoding", name,
               cand[i].ns, cand[i].q);
    else
      snprintf(msg, cap, "table %s is the HBase table %s:%s, which Rowan did not create (it "
               "is not in %s:%s); Rowan reads only its own tables", name, cand[i].ns,
               cand[i].q, h->uri.ns, HBK_REGISTRY);
    break;
  }
  hbk_unlock(h);
  return KV_OK;
}
