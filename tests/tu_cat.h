/*
** tests/tu_cat.h: the fixture the catalog tests share: a store on the in-memory file system
** (kv/env/env_mem.h) with its catalog open, reopened as a new process would (close_store, then
** open_store on the same env). Not here: SQL statements (the exec and api tests' own
** helpers), assertions on what the catalog holds.
*/
#ifndef ROWAN_TESTS_TU_CAT_H
#define ROWAN_TESTS_TU_CAT_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "catalog/catalog.h"
#include "kv/kv.h"

typedef struct store {
  kv_env *env;       /* in-memory file system */
  kv_db *db;         /* the store */
  cat_catalog *cat;  /* its catalog */
} store;

/* Open (creating if missing) the store "/db" on s->env: the kv store alone. */
static inline void open_kv(store *s) {
  kv_options o;
  kv_options_init(&o);
  o.env = s->env;
  o.create_if_missing = true;
  if (kv_open("/db", &o, &s->db)) fail_msg("kv_open: %s", kv_errmsg());
}

/* The store and its catalog. */
static inline void open_store(store *s) {
  open_kv(s);
  cat_error err = {0};
  if (cat_open(s->db, &s->cat, &err)) fail_msg("cat_open: %s", err.msg);
}

static inline void close_store(store *s) {
  cat_close(s->cat);
  kv_close(s->db);
  s->cat = NULL;
  s->db = NULL;
}

#endif /* ROWAN_TESTS_TU_CAT_H */
