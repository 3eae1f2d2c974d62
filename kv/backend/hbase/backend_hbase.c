/*
** kv/backend/hbase/backend_hbase.c: the HBase storage backend of backend_hbase.h, all but
** its reads and writes: opening by URI, the namespace's registry of Rowan kv tables
** (ROWAN_KV), DDL, the clock, timestamp snapshots, the scan pool of connections (the
** statistics, split points and estimates: backend_hbase_stats.c).
**
** Registry (format version 1, docs/HBASE.md "The registry"): one row per Rowan kv table in
** NS:ROWAN_KV, family "r": qualifier "v" the format version ("1"), "h" the HBase table's
** name, "f" its families, one line each, "NAME\tVERSIONS\tTTL\tCOMPRESSION\tBLOCKSIZE\n".
** A row without "v" is read as version 1; another version is refused (KV_ERR_CORRUPT).
** A CREATE writes the registry row first, then creates the HBase table; a DROP drops the
** HBase table first, then deletes the row. So a process cut between the two steps leaves a
** registry row without its table, never a table nobody names: the catalog's orphan sweep
** drops it (a drop of a missing HBase table succeeds). The HBase table's name is "r_", the
** Rowan name with other characters than letters, digits, '_', '-' and '.' made '_' (at most
** 48 of them), '_' and 16 hex digits of the name's FNV-1a hash.
**
** Writes and check-and-write are in backend_hbase_write.c; this file keeps the clock
** (hbk_take_ts: milliseconds, never going back, strictly later than every timestamp it gave
** out before) and the connections they use (the main one, the writer connections of a
** write spread over several: ROWAN_HBASE_WRITERS, read at open, 1..16, default 4). The test
** hooks ROWAN_HBASE_TRIES and ROWAN_HBASE_KILL_AFTER_ROWS are read at open too
** (docs/HBASE.md, "Test hooks").
**
** Not here: scans and gets (backend_hbase_scan.c), writes (backend_hbase_write.c), the
** Thrift2 calls (hb_client.c).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kv/backend/hbase/backend_hbase_int.h"
#include "kv/util/status.h"

int64_t hbk_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* SIGPIPE blocked in this thread while it talks to the gateway (a send to a gateway that
** died would otherwise end the process); the mask before goes into *old. */
static void sigpipe_block(sigset_t *old) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &set, old);
}

/* Undo sigpipe_block: a SIGPIPE raised meanwhile is ours (consumed) unless the thread had it
** blocked before; then mutex mu (held since before the block) is released and the mask restored. */
static void sigpipe_unblock(pthread_mutex_t *mu, const sigset_t *old_mask) {
  sigset_t pend, old = *old_mask; /* (a copy: *old_mask is guarded by mu) */
  if (!sigismember(&old, SIGPIPE) && sigpending(&pend) == 0 && sigismember(&pend, SIGPIPE)) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGPIPE);
    struct timespec zero = {0, 0};
    (void)sigtimedwait(&set, NULL, &zero);
  }
  pthread_mutex_unlock(mu);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void hbk_lock(hbk *h) {
  pthread_mutex_lock(&h->mu);
  sigpipe_block(&h->old_mask);
}

void hbk_unlock(hbk *h) { sigpipe_unblock(&h->mu, &h->old_mask); }

hbk_conn *hbk_conn_take(hbk *h) {
  pthread_mutex_lock(&h->mu);
  hbk_conn *k = &h->conn[0];
  for (int i = 1; i < h->n_conns; i++)
    if (h->conn[i].users < k->users) k = &h->conn[i];
  k->users++;
  pthread_mutex_unlock(&h->mu);
  return k;
}

void hbk_conn_give(hbk *h, hbk_conn *k) {
  if (!k) return;
  pthread_mutex_lock(&h->mu);
  k->users--;
  pthread_mutex_unlock(&h->mu);
}

int hbk_conn_lock(hbk_conn *k, const kv_hbase_uri *uri) {
  pthread_mutex_lock(&k->mu);
  sigpipe_block(&k->old_mask);
  return k->c ? KV_OK : hb_open(uri->host, uri->port, 0, &k->c);
}

void hbk_conn_unlock(hbk_conn *k) { sigpipe_unblock(&k->mu, &k->old_mask); }

int64_t hbk_take_ts(hbk *h, int64_t n) {
  int64_t t = hbk_now_ms();
  if (t <= h->last_ts) t = h->last_ts + 1;
  h->last_ts = t + (n > 0 ? n : 1) - 1;
  return t;
}

static char *dupstr(const char *s) {
  size_t n = strlen(s) + 1;
  char *p = malloc(n);
  if (p) memcpy(p, s, n);
  return p;
}

/* ---- URI --------------------------------------------------------------------------------- */
int kv_hbase_parse_uri(const char *uri, kv_hbase_uri *out) {
  memset(out, 0, sizeof *out);
  if (!uri || strncmp(uri, "hbase://", 8) != 0)
    return kv_error(KV_ERR_INVALID, "hbase: \"%s\" is not an hbase://HOST:PORT[/NAMESPACE] URI",
                    uri ? uri : "(null)");
  const char *p = uri + 8, *colon = strchr(p, ':');
  if (!colon || colon == p)
    return kv_error(KV_ERR_INVALID, "hbase: URI \"%s\" has no HOST:PORT (e.g. hbase://127.0.0.1:9090)",
                    uri);
  if ((size_t)(colon - p) >= sizeof out->host)
    return kv_error(KV_ERR_INVALID, "hbase: URI \"%s\": the host name is too long", uri);
  for (const char *q = p; q < colon; q++)
    if (*q == '/' || *q == ' ')
      return kv_error(KV_ERR_INVALID, "hbase: URI \"%s\": bad host name", uri);
  memcpy(out->host, p, (size_t)(colon - p));
  const char *q = colon + 1;
  long port = 0;
  int digits = 0;
  while (*q >= '0' && *q <= '9' && digits < 7) port = port * 10 + (*q++ - '0'), digits++;
  if (!digits || port < 1 || port > 65535 || (*q && *q != '/'))
    return kv_error(KV_ERR_INVALID, "hbase: URI \"%s\": the port must be a number in 1..65535",
                    uri);
  out->port = (int)port;
  const char *ns = *q == '/' ? q + 1 : "";
  if (!*ns) ns = KV_HBASE_DEFAULT_NAMESPACE;
  size_t n = strlen(ns);
  if (n > 100) return kv_error(KV_ERR_INVALID, "hbase: URI \"%s\": the namespace is over 100 bytes", uri);
  for (size_t i = 0; i < n; i++) {
    char ch = ns[i];
    if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
          ch == '_'))
      return kv_error(KV_ERR_INVALID,
                      "hbase: URI \"%s\": the namespace may hold letters, digits and '_' only "
                      "(found '%c' at byte %zu)", uri, ch, i);
  }
  memcpy(out->ns, ns, n);
  return KV_OK;
}

/* ---- Registry -------------------------------------------------------------------------- */
static void free_table(hbk_table *t) {
  if (!t) return;
  hbk_stats_free(t->stats);
  for (int i = 0; i < t->n_families; i++) free(t->fam[i].name);
  free(t->kv_name);
  free(t->hb_name);
  free(t);
}

static int find_table(hbk *h, const char *name) {
  for (int i = 0; i < h->n_tabs; i++)
    if (!strcmp(h->tabs[i]->kv_name, name)) return i;
  return -1;
}

hbk_family *hbk_family_of(hbk *h, uint32_t id, hbk_table **t) {
  for (int i = 0; i < h->n_tabs; i++)
    for (int j = 0; j < h->tabs[i]->n_families; j++)
      if (h->tabs[i]->fam[j].id == id) {
        if (t) *t = h->tabs[i];
        return &h->tabs[i]->fam[j];
      }
  return NULL;
}

static char *hbase_name_of(const char *kv_name) {
  uint64_t hash = 1469598103934665603ull;
  for (const unsigned char *p = (const unsigned char *)kv_name; *p; p++)
    hash = (hash ^ *p) * 1099511628211ull;
  char buf[96] = "r_";
  size_t k = 2;
  for (const char *p = kv_name; *p && k < 50; p++) {
    char ch = *p;
    bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
              ch == '_' || ch == '-' || ch == '.';
    buf[k++] = ok ? ch : '_';
  }
  snprintf(buf + k, sizeof buf - k, "_%016llx", (unsigned long long)hash);
  return dupstr(buf);
}

/* Set family f from options o, giving it a new id. */
static int set_family(hbk *h, hbk_family *f, const kv_family_options *o) {
  f->name = dupstr(o->name);
  if (!f->name) return kv_error(KV_ERR_NOMEM, "hbase: out of memory");
  f->o = *o;
  f->o.name = f->name;
  if (f->o.max_versions <= 0) f->o.max_versions = 1;
  f->id = h->next_family_id++;
  return KV_OK;
}

static int add_table(hbk *h, hbk_table *t) {
  if (h->n_tabs == h->cap_tabs) {
    int nc = h->cap_tabs ? h->cap_tabs * 2 : 16;
    hbk_table **nt = realloc(h->tabs, (size_t)nc * sizeof *nt);
    if (!nt) return kv_error(KV_ERR_NOMEM, "hbase: out of memory");
    h->tabs = nt;
    h->cap_tabs = nc;
  }
  h->tabs[h->n_tabs++] = t;
  return KV_OK;
}

/* The "f" cell of t. */
static char *families_text(const hbk_table *t) {
  size_t cap = 64;
  for (int i = 0; i < t->n_families; i++) cap += strlen(t->fam[i].name) + 80;
  char *s = malloc(cap);
  if (!s) return NULL;
  size_t k = 0;
  s[0] = 0;
  for (int i = 0; i < t->n_families; i++) {
    const kv_family_options *o = &t->fam[i].o;
    k += (size_t)snprintf(s + k, cap - k, "%s\t%d\t%lld\t%d\t%u\n", o->name, o->max_versions,
                          (long long)o->ttl_sec, o->compression, o->block_size);
  }
  return s;
}

/* Parse a registry row into a new table. */
static int table_of_row(hbk *h, const hb_row *r, hbk_table **out) {
  *out = NULL;
  const hb_cell *hc = NULL, *fc = NULL, *vc = NULL;
  for (size_t i = 0; i < r->ncells; i++) {
    if (r->cells[i].qualifier.n == 1 && r->cells[i].qualifier.p[0] == 'v') vc = &r->cells[i];
    if (r->cells[i].qualifier.n == 1 && r->cells[i].qualifier.p[0] == 'h') hc = &r->cells[i];
    if (r->cells[i].qualifier.n == 1 && r->cells[i].qualifier.p[0] == 'f') fc = &r->cells[i];
  }
  if (vc && (vc->value.n != 1 || vc->value.p[0] != '1'))
    return kv_error(KV_ERR_CORRUPT,
                    "hbase: registry %s:%s: row %.*s has format version %.*s (this Rowan reads 1)",
                    h->uri.ns, HBK_REGISTRY, (int)r->key_len, (const char *)r->key,
                    (int)(vc->value.n > 16 ? 16 : vc->value.n), (const char *)vc->value.p);
  if (!hc || !fc)
    return kv_error(KV_ERR_CORRUPT, "hbase: registry %s:%s: row %.*s lacks its h or f cell",
                    h->uri.ns, HBK_REGISTRY, (int)r->key_len, (const char *)r->key);
  hbk_table *t = calloc(1, sizeof *t);
  char *txt = malloc(fc->value.n + 1);
  if (t) {
    t->kv_name = malloc(r->key_len + 1);
    t->hb_name = malloc(hc->value.n + 1);
  }
  if (!t || !txt || !t->kv_name || !t->hb_name) {
    free(txt);
    free_table(t);
    return kv_error(KV_ERR_NOMEM, "hbase: out of memory");
  }
  memcpy(t->kv_name, r->key, r->key_len);
  t->kv_name[r->key_len] = 0;
  memcpy(t->hb_name, hc->value.p, hc->value.n);
  t->hb_name[hc->value.n] = 0;
  memcpy(txt, fc->value.p, fc->value.n);
  txt[fc->value.n] = 0;
  int rc = KV_OK;
  char *save = NULL;
  for (char *line = strtok_r(txt, "\n", &save); line && !rc; line = strtok_r(NULL, "\n", &save)) {
    char name[KV_MAX_NAME + 1];
    int v = 0, comp = 0;
    long long ttl = 0;
    unsigned bs = 0;
    if (sscanf(line, "%255[^\t]\t%d\t%lld\t%d\t%u", name, &v, &ttl, &comp, &bs) != 5 ||
        t->n_families >= (int)KV_MAX_FAMILIES) {
      rc = kv_error(KV_ERR_CORRUPT, "hbase: registry %s:%s: bad family line \"%.80s\" of %s",
                    h->uri.ns, HBK_REGISTRY, line, t->kv_name);
      break;
    }
    kv_family_options o = {name, v, ttl, comp, bs};
    rc = set_family(h, &t->fam[t->n_families], &o);
    if (!rc) t->n_families++;
  }
  free(txt);
  if (rc) free_table(t);
  else *out = t;
  return rc;
}

static int load_registry(hbk *h) {
  hb_scan_spec sp;
  memset(&sp, 0, sizeof sp);
  sp.caching = 1000;
  hb_scanner *sc = NULL;
  int rc = hb_scan_open(h->c, h->uri.ns, HBK_REGISTRY, &sp, &sc);
  hb_row r = {0};
  bool done = false;
  while (!rc && !(rc = hb_scan_next(sc, &r, &done)) && !done) {
    hbk_table *t = NULL;
    rc = table_of_row(h, &r, &t);
    if (!rc && (rc = add_table(h, t)) != KV_OK) free_table(t);
  }
  hb_row_free(&r);
  char msg[600];
  snprintf(msg, sizeof msg, "%s", rc ? kv_errmsg() : "");
  hb_scan_close(sc); /* clears the error message */
  return rc ? kv_error(rc, "%s", msg) : KV_OK;
}

static int registry_put(hbk *h, const hbk_table *t) {
  char *txt = families_text(t);
  if (!txt) return kv_error(KV_ERR_NOMEM, "hbase: out of memory");
  hb_bytes row = {(const uint8_t *)t->kv_name, strlen(t->kv_name)};
  hb_bytes fam = {(const uint8_t *)HBK_REG_FAMILY, 1};
  int64_t ts = hbk_take_ts(h, 1);
  hb_put cells[3] = {
      {row, fam, {(const uint8_t *)"f", 1}, {(const uint8_t *)txt, strlen(txt)}, ts},
      {row, fam, {(const uint8_t *)"h", 1}, {(const uint8_t *)t->hb_name, strlen(t->hb_name)}, ts},
      {row, fam, {(const uint8_t *)"v", 1}, {(const uint8_t *)"1", 1}, ts}};
  int rc = hb_put_cells(h->c, h->uri.ns, HBK_REGISTRY, cells, 3);
  free(txt);
  return rc;
}

static int registry_delete(hbk *h, const char *kv_name) {
  hb_mutation m = {HB_MUT_DELETE_FAMILY, {(const uint8_t *)HBK_REG_FAMILY, 1}, {NULL, 0},
                   {NULL, 0}, hbk_take_ts(h, 1)};
  return hb_mutate_row(h->c, h->uri.ns, HBK_REGISTRY,
                       (hb_bytes){(const uint8_t *)kv_name, strlen(kv_name)}, &m, 1);
}

/* ---- DDL ----------------------------------------------------------------------------------- */
static int check_families(const char *name, const kv_family_options *f, int n) {
  if (!name || !*name) return kv_error(KV_ERR_INVALID, "hbase: empty table name");
  if (n < 1 || n > (int)KV_MAX_FAMILIES)
    return kv_error(KV_ERR_INVALID, "hbase: table %s: %d families (1..%u)", name, n, KV_MAX_FAMILIES);
  for (int i = 0; i < n; i++) {
    const char *fn = f[i].name;
    if (!fn || !*fn || strlen(fn) > KV_MAX_NAME)
      return kv_error(KV_ERR_INVALID, "hbase: table %s: family %d has an empty or long name", name, i);
    for (const char *p = fn; *p; p++)
      if ((unsigned char)*p < 0x20 || *p == ':' || *p == 0x7f)
        return kv_error(KV_ERR_INVALID,
                        "hbase: table %s: family name \"%s\" has a character HBase refuses", name, fn);
    if (fn[0] == '.')
      return kv_error(KV_ERR_INVALID, "hbase: table %s: family name \"%s\" starts with '.'", name, fn);
    if (f[i].max_versions < 0 || f[i].ttl_sec < 0)
      return kv_error(KV_ERR_INVALID, "hbase: table %s: family %s: negative VERSIONS or TTL", name, fn);
    for (int j = 0; j < i; j++)
      if (!strcmp(f[j].name, fn))
        return kv_error(KV_ERR_INVALID, "hbase: table %s: family %s twice", name, fn);
  }
  return KV_OK;
}

static int max_versions_of(const hbk_table *t) {
  int v = 1;
  for (int i = 0; i < t->n_families; i++)
    if (t->fam[i].o.max_versions > v) v = t->fam[i].o.max_versions;
  return v;
}

static int be_create_table(kv_backend *be, const char *name, const kv_family_options *families,
                           int n_families, const uint8_t *const *split_keys,
                           const uint32_t *split_lens, uint32_t n_splits) {
  hbk *h = be->impl;
  int rc = check_families(name, families, n_families);
  if (rc) return rc;
  for (uint32_t i = 0; i < n_splits; i++) {
    if (!split_lens[i]) return kv_error(KV_ERR_INVALID, "hbase: table %s: split key %u is empty", name, i);
    if (i) {
      uint32_t m = split_lens[i - 1] < split_lens[i] ? split_lens[i - 1] : split_lens[i];
      int d = memcmp(split_keys[i - 1], split_keys[i], m);
      if (d > 0 || (d == 0 && split_lens[i - 1] >= split_lens[i]))
        return kv_error(KV_ERR_INVALID, "hbase: table %s: split key %u is not above split key %u",
                        name, i, i - 1);
    }
  }
  hbk_lock(h);
  if (find_table(h, name) >= 0) {
    hbk_unlock(h);
    return kv_error(KV_ERR_EXISTS, "hbase: table %s exists", name);
  }
  hbk_table *t = calloc(1, sizeof *t);
  if (!t || !(t->kv_name = dupstr(name)) || !(t->hb_name = hbase_name_of(name)))
    rc = kv_error(KV_ERR_NOMEM, "hbase: out of memory");
  for (int i = 0; !rc && i < n_families; i++)
    if (!(rc = set_family(h, &t->fam[i], &families[i]))) t->n_families++;
  if (!rc) rc = registry_put(h, t);
  bool registered = !rc;
  const char *names[KV_MAX_FAMILIES];
  hb_bytes *splits = rc ? NULL : malloc((n_splits ? n_splits : 1) * sizeof *splits);
  if (!rc && !splits) rc = kv_error(KV_ERR_NOMEM, "hbase: out of memory");
  for (int i = 0; t && i < t->n_families; i++) names[i] = t->fam[i].name;
  for (uint32_t i = 0; splits && i < n_splits; i++)
    splits[i] = (hb_bytes){split_keys[i], split_lens[i]};
  if (!rc) {
    rc = hb_create_table(h->c, h->uri.ns, t->hb_name, names, (size_t)t->n_families,
                         max_versions_of(t), splits, n_splits);
    if (rc == KV_ERR_EXISTS) { /* left by a cut drop: nobody names it */
      rc = hb_drop_table(h->c, h->uri.ns, t->hb_name);
      if (!rc)
        rc = hb_create_table(h->c, h->uri.ns, t->hb_name, names, (size_t)t->n_families,
                             max_versions_of(t), splits, n_splits);
    }
  }
  free(splits);
  if (!rc) rc = add_table(h, t);
  if (rc) {
    char msg[600];
    snprintf(msg, sizeof msg, "%s", kv_errmsg());
    if (registered) (void)registry_delete(h, name);
    free_table(t);
    kv_error(rc, "%s", msg);
  }
  hbk_unlock(h);
  return rc;
}

static int be_drop_table(kv_backend *be, const char *name) {
  hbk *h = be->impl;
  hbk_lock(h);
  int i = find_table(h, name), rc = KV_OK;
  if (i < 0) {
    hbk_unlock(h);
    return kv_error(KV_ERR_NOTFOUND, "hbase: no table %s", name);
  }
  rc = hb_drop_table(h->c, h->uri.ns, h->tabs[i]->hb_name);
  if (rc == KV_ERR_NOTFOUND) rc = KV_OK; /* its CREATE was cut after the registry row */
  if (!rc) rc = registry_delete(h, name);
  if (!rc) {
    free_table(h->tabs[i]);
    memmove(&h->tabs[i], &h->tabs[i + 1], (size_t)(h->n_tabs - i - 1) * sizeof *h->tabs);
    h->n_tabs--;
  }
  hbk_unlock(h);
  return rc;
}

static int be_alter_table(kv_backend *be, const char *name, const kv_family_options *families,
                          int n_families) {
  hbk *h = be->impl;
  int rc = check_families(name, families, n_families);
  if (rc) return rc;
  hbk_lock(h);
  int i = find_table(h, name);
  if (i < 0) {
    hbk_unlock(h);
    return kv_error(KV_ERR_NOTFOUND, "hbase: no table %s", name);
  }
  hbk_table *t = h->tabs[i];
  int old_n = t->n_families, old_max = max_versions_of(t), want = old_max;
  for (int k = 0; k < n_families; k++)
    if (families[k].max_versions > want) want = families[k].max_versions;
  /* HBase keeps the table's largest VERSIONS in every family (reads cut each to its own) */
  for (int j = 0; !rc && want > old_max && j < old_n; j++)
    rc = hb_set_family_versions(h->c, h->uri.ns, t->hb_name, t->fam[j].name, want);
  for (int k = 0; !rc && k < n_families; k++) {
    int f = -1;
    for (int j = 0; j < t->n_families; j++)
      if (!strcmp(t->fam[j].name, families[k].name)) f = j;
    if (f >= 0) continue;
    if (t->n_families >= (int)KV_MAX_FAMILIES) {
      rc = kv_error(KV_ERR_INVALID, "hbase: table %s: more than %u families", name, KV_MAX_FAMILIES);
      break;
    }
    rc = hb_add_family(h->c, h->uri.ns, t->hb_name, families[k].name, want);
    if (!rc && !(rc = set_family(h, &t->fam[t->n_families], &families[k]))) t->n_families++;
  }
  for (int k = 0; !rc && k < n_families; k++)
    for (int j = 0; j < old_n; j++)
      if (!strcmp(t->fam[j].name, families[k].name)) {
        t->fam[j].o = families[k];
        t->fam[j].o.name = t->fam[j].name;
        if (t->fam[j].o.max_versions <= 0) t->fam[j].o.max_versions = 1;
      }
  if (!rc) rc = registry_put(h, t);
  hbk_unlock(h);
  return rc;
}

static int be_family_id(kv_backend *be, const char *table, const char *family, uint32_t *id_out) {
  hbk *h = be->impl;
  hbk_lock(h);
  int i = find_table(h, table), rc = KV_ERR_NOTFOUND;
  if (i >= 0)
    for (int j = 0; j < h->tabs[i]->n_families; j++)
      if (!strcmp(h->tabs[i]->fam[j].name, family)) {
        *id_out = h->tabs[i]->fam[j].id;
        rc = KV_OK;
      }
  hbk_unlock(h);
  if (rc) return kv_error(rc, i < 0 ? "hbase: no table %s" : "hbase: table %s has no family %s",
                          table, family);
  return KV_OK;
}

static int be_family_info(kv_backend *be, uint32_t family_id, kv_family_options *out) {
  hbk *h = be->impl;
  hbk_lock(h);
  hbk_family *f = hbk_family_of(h, family_id, NULL);
  if (f) *out = f->o;
  hbk_unlock(h);
  return f ? KV_OK : kv_error(KV_ERR_NOTFOUND, "hbase: no family id %u", family_id);
}

static int be_table_count(kv_backend *be) {
  hbk *h = be->impl;
  hbk_lock(h);
  int n = h->n_tabs;
  hbk_unlock(h);
  return n;
}

static const char *be_table_name(kv_backend *be, int i) {
  hbk *h = be->impl;
  hbk_lock(h);
  const char *s = i >= 0 && i < h->n_tabs ? h->tabs[i]->kv_name : NULL;
  hbk_unlock(h);
  return s;
}

/* The local store drops a dropped column's cells at its next major compaction; HBase would
** need a compaction filter on the server. The cells stay there: nothing reads them (the
** catalog maps no column to their qualifiers), and a new column never reuses a column id. */
static int be_set_dropped_qualifiers(kv_backend *be, uint32_t family_id,
                                     const uint8_t *const *quals, const uint32_t *lens,
                                     uint32_t n) {
  (void)be;
  (void)family_id;
  (void)quals;
  (void)lens;
  (void)n;
  return KV_OK;
}

static int be_flush(kv_backend *be, const char *table) {
  (void)be;
  (void)table; /* HBase's WAL made every acknowledged write durable */
  return KV_OK;
}

/* ---- Snapshots, split points, estimates ---------------------------------------------------- */
static int be_snapshot_acquire(kv_backend *be, uint64_t *snap_out) {
  hbk *h = be->impl;
  hbk_lock(h);
  int64_t t = hbk_now_ms();
  if (t < h->last_ts) t = h->last_ts;
  hbk_unlock(h);
  *snap_out = (uint64_t)t;
  return KV_OK;
}

static void be_snapshot_release(kv_backend *be, uint64_t snap) {
  (void)be;
  (void)snap; /* HBase keeps versions by VERSIONS and TTL, not by readers */
}

/* ---- Open, close ----------------------------------------------------------------------- */
static const kv_backend_ops hbk_ops = {
    .create_table = be_create_table,
    .alter_table = be_alter_table,
    .drop_table = be_drop_table,
    .family_id = be_family_id,
    .family_info = be_family_info,
    .table_count = be_table_count,
    .table_name = be_table_name,
    .set_dropped_qualifiers = be_set_dropped_qualifiers,
    .write = hbk_write,
    .check_and_write = hbk_check_and_write,
    .flush = be_flush,
    .get = hbk_get,
    .scan_open = hbk_scan_open,
    .scan_next = hbk_scan_next,
    .scan_row_vectors = hbk_scan_row_vectors,
    .scan_metrics = hbk_scan_metrics,
    .scan_close = hbk_scan_close,
    .snapshot_acquire = be_snapshot_acquire,
    .snapshot_release = be_snapshot_release,
    .split_points = hbk_split_points,
    .estimate = hbk_estimate,
    .family_stats = hbk_family_stats,
    .foreign_table = hbk_foreign_table,
};

static const kv_backend_caps hbk_caps = {
    .name = "hbase",
    .atomicity = KV_BE_ATOMIC_ROW,
    .snapshot = KV_BE_SNAPSHOT_TIMESTAMP,
    .filters = KV_BE_FILTER_EXPR, /* evaluated on the client for now (docs/HBASE.md) */
    .reverse_scans = true,
    .check_and_write = true,
    .split_points = true,
    .size_estimates = true,
    .split_keys = true,
    .remote = true,
    .extensions = KV_BE_EXT_SKIP_PREFIX,
};

void kv_backend_hbase_close(kv_backend *be) {
  if (!be) return;
  hbk *h = be->impl;
  for (int i = 0; i < h->n_tabs; i++) free_table(h->tabs[i]);
  free(h->tabs);
  hbk_lock(h);
  hb_close(h->c);
  for (int i = 0; i < HBK_WRITERS_MAX; i++) hb_close(h->wc[i]);
  hbk_unlock(h);
  for (int i = 0; i < HBK_CONNS_MAX; i++) {
    if (h->conn[i].c) {
      (void)hbk_conn_lock(&h->conn[i], &h->uri);
      hb_close(h->conn[i].c);
      h->conn[i].c = NULL;
      hbk_conn_unlock(&h->conn[i]);
    }
    pthread_mutex_destroy(&h->conn[i].mu);
  }
  pthread_mutex_destroy(&h->mu);
  free(h);
}

int kv_backend_hbase_open(const char *uri, kv_backend **out) {
  *out = NULL;
  hbk *h = calloc(1, sizeof *h);
  if (!h) return kv_error(KV_ERR_NOMEM, "hbase: out of memory");
  pthread_mutex_init(&h->mu, NULL);
  for (int i = 0; i < HBK_CONNS_MAX; i++) pthread_mutex_init(&h->conn[i].mu, NULL);
  h->n_conns = HBK_CONNS;
  const char *nc = getenv("ROWAN_HBASE_CONNECTIONS");
  if (nc && *nc) {
    char *end = NULL;
    long v = strtol(nc, &end, 10);
    if (*end || v < 1 || v > HBK_CONNS_MAX) {
      for (int i = 0; i < HBK_CONNS_MAX; i++) pthread_mutex_destroy(&h->conn[i].mu);
      pthread_mutex_destroy(&h->mu);
      free(h);
      return kv_error(KV_ERR_INVALID,
                      "hbase: ROWAN_HBASE_CONNECTIONS must be a number in 1..%d (found \"%s\")",
                      HBK_CONNS_MAX, nc);
    }
    h->n_conns = (int)v;
  }
  h->n_writers = HBK_WRITERS;
  nc = getenv("ROWAN_HBASE_WRITERS");
  if (nc && *nc) {
    char *end = NULL;
    long v = strtol(nc, &end, 10);
    if (*end || v < 1 || v > HBK_WRITERS_MAX) {
      for (int i = 0; i < HBK_CONNS_MAX; i++) pthread_mutex_destroy(&h->conn[i].mu);
      pthread_mutex_destroy(&h->mu);
      free(h);
      return kv_error(KV_ERR_INVALID,
                      "hbase: ROWAN_HBASE_WRITERS must be a number in 1..%d (found \"%s\")",
                      HBK_WRITERS_MAX, nc);
    }
    h->n_writers = (int)v;
  }
  h->next_family_id = 1;
  h->be.ops = &hbk_ops;
  h->be.caps = hbk_caps;
  h->be.impl = h;
  h->be.local = NULL;
  h->tries = HBK_TRIES;
  const char *e = getenv("ROWAN_HBASE_TRIES");
  if (e && *e) h->tries = atoi(e) < 1 ? 1 : atoi(e) > 20 ? 20 : atoi(e);
  e = getenv("ROWAN_HBASE_KILL_AFTER_ROWS");
  if (e && *e && atol(e) > 0) h->kill_after_rows = atol(e);
  int rc = kv_hbase_parse_uri(uri, &h->uri);
  hbk_lock(h);
  if (!rc) rc = hb_open(h->uri.host, h->uri.port, 0, &h->c);
  if (!rc) rc = hb_ensure_namespace(h->c, h->uri.ns);
  bool exists = false;
  if (!rc) rc = hb_table_exists(h->c, h->uri.ns, HBK_REGISTRY, &exists);
  if (!rc && !exists) {
    const char *fam = HBK_REG_FAMILY;
    rc = hb_create_table(h->c, h->uri.ns, HBK_REGISTRY, &fam, 1, 1, NULL, 0);
    if (rc == KV_ERR_EXISTS) rc = KV_OK; /* another process made it meanwhile */
  }
  if (!rc) rc = load_registry(h);
  hbk_unlock(h);
  if (rc) {
    char msg[600];
    snprintf(msg, sizeof msg, "%s", kv_errmsg());
    kv_backend_hbase_close(&h->be);
    return kv_error(rc, "%s", msg);
  }
  *out = &h->be;
  return KV_OK;
}

int kv_backend_hbase_drop_namespace(const char *uri) {
  kv_hbase_uri u;
  int rc = kv_hbase_parse_uri(uri, &u);
  hbk tmp; /* only its lock: SIGPIPE blocked around the calls */
  memset(&tmp, 0, sizeof tmp);
  pthread_mutex_init(&tmp.mu, NULL);
  hb_client *c = NULL;
  hbk_lock(&tmp);
  if (!rc) rc = hb_open(u.host, u.port, 0, &c);
  if (!rc) rc = hb_drop_namespace(c, u.ns);
  hb_close(c);
  hbk_unlock(&tmp);
  pthread_mutex_destroy(&tmp.mu);
  return rc;
}
