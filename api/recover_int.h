/*
** api/recover_int.h: what api/recover.c (rowan_recover: the steps, the report) and
** api/recover_copy.c (copying a salvaged store's tables, cells set aside, key-value tables)
** share. Internal to those two files.
*/
#ifndef ROWAN_API_RECOVER_INT_H
#define ROWAN_API_RECOVER_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "catalog/catalog.h"
#include "kv/env/env.h"
#include "kv/kv.h"
#include "rowan.h"

/* The report and what it owns. */
typedef struct rec_report {
  rowan_recover_report pub;      /* what the caller sees (first, so the two convert) */
  rowan_recover_damage *damage;  /* pub.damage's array */
  int cap_damage;                /* allocated entries */
  rowan_recover_table *tables;   /* pub.tables's array */
  int cap_tables;                /* allocated entries */
  char **strs;                   /* every string the report points at */
  int n_strs, cap_strs;          /* used, allocated */
} rec_report;

/* The state of one rowan_recover. */
typedef struct rec {
  kv_env *env;            /* file system of both directories */
  const char *src, *dst;  /* the damaged and the new directory */
  rec_report *rr;         /* the report */
  kv_db *sk;              /* the salvaged store (kv/salvage/salvage.h), read only */
  kv_db *dk;              /* the new store */
  cat_catalog *dcat;      /* its catalog */
  cat_salvage cs;         /* the salvaged store's catalog */
  kv_batch *b;            /* writes to the new store, committed every few MiB */
  const cat_table *lf;    /* LOST_AND_FOUND in the new store, once made */
  int lf_entry;           /* its entry in the report's tables (-1 until made) */
  int64_t lf_cells;       /* cells put there */
  uint8_t *kbuf;          /* a row key being built (CAT_KEY_MAX bytes) */
  uint8_t *scratch;       /* key decode scratch (CAT_KEY_MAX bytes) */
  uint32_t *dmg_fams;     /* family ids of the salvaged store with a store file damaged or
                             missing (the same ids as the damaged store's) */
  int n_dmg_fams;         /* count */
  bool wal_damaged;       /* some WAL bytes could not be read */
  int code;               /* the ROWAN_* code of the first failure */
  char err[600];          /* its message */
} rec;

/* Fail with a ROWAN_* code and a printf-style message (the first failure is kept);
** returns code. */
int rec_fail(rec *r, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A string the report owns (a copy of s), or NULL when out of memory. */
const char *rec_str(rec *r, const char *s);
/* Add a damage entry (kind and file copied). ROWAN_OK or ROWAN_NOMEM. */
int rec_note(rec *r, const char *kind, const char *file, uint64_t off, uint64_t len,
             int64_t cells, int64_t rows, const char *fmt, ...)
    __attribute__((format(printf, 8, 9)));
/* Add a table entry named `name`; *idx gets its index in the report's tables. */
int rec_table(rec *r, const char *name, int *idx);

/* Copy the rows of salvaged table `old` (its kv table in r->sk) into the new table nt
** (r->dk), filling the report's table entry `entry`. ROWAN_OK or a store error. */
int rec_copy_table(rec *r, const cat_table *old, const cat_table *nt, int entry);
/* Put every visible cell of kv table `kv_name` of the salvaged store into LOST_AND_FOUND. */
int rec_lost_table(rec *r, const char *kv_name);
/* Copy kv table `kv_name` (not a SQL table) to the new store as it is: the same families
** and options, every visible version of every cell. */
int rec_copy_kv_table(rec *r, const char *kv_name);
/* Commit the pending writes (all of them with `all`, else only past a few MiB). */
int rec_flush_batch(rec *r, bool all);

#endif /* ROWAN_API_RECOVER_INT_H */
