/*
** tests/slt/slt.h: the pieces of Rowan's sqllogictest runner (tests/slt/): MD5 for
** hash-threshold, the result buffer, value formatting, and the two database back ends the
** runner can drive (Rowan through include/rowan.h; SQLite through libsqlite3, used to check
** that a .test file's expected results are right where SQLite's semantics agree).
**
** The file format and its Rowan extensions are described at the top of slt_runner.c.
** Not here: parsing .test files and comparing results (slt_runner.c).
*/
#ifndef ROWAN_SLT_H
#define ROWAN_SLT_H

#include <stddef.h>
#include <stdint.h>

/* ---- MD5 (slt_md5.c) ------------------------------------------------------------------ */
typedef struct slt_md5 {
  uint32_t h[4];    /* chaining state A, B, C, D */
  uint64_t len;     /* bytes hashed so far */
  uint8_t buf[64];  /* pending partial block */
  size_t nbuf;      /* bytes in buf */
} slt_md5;

/* Start a hash. */
void slt_md5_init(slt_md5 *m);
/* Add n bytes of data. */
void slt_md5_update(slt_md5 *m, const void *data, size_t n);
/* Finish: 32 lower-case hex digits and a NUL into out. m must be re-initialized to reuse. */
void slt_md5_hex(slt_md5 *m, char out[33]);

/* ---- Results -------------------------------------------------------------------------- */
/* Formatted values of one query, row-major; each value is a malloc'd string. */
typedef struct slt_result {
  char **vals;  /* n values, owned */
  size_t n;     /* values stored */
  size_t cap;   /* capacity of vals */
  int ncol;     /* columns per row */
} slt_result;

/* Append a copy of s (n bytes); returns 0, or -1 when out of memory. */
int slt_result_add(slt_result *r, const char *s, size_t n);
/* Free every value; r is empty again. */
void slt_result_clear(slt_result *r);

/* Format one value for a query column of type letter `type` ('I', 'R' or 'T') into buf
** (cap bytes) as sqllogictest does: NULL is "NULL"; I prints i64; R prints d with three
** decimals; T prints text, "(empty)" for an empty string, and bytes below 0x20 or above
** 0x7e as '@'. */
void slt_format(char type, int is_null, int64_t i64, double d, const char *text, size_t tlen,
                char *buf, size_t cap);

/* ---- Back ends ------------------------------------------------------------------------ */
typedef struct slt_db slt_db;

typedef struct slt_backend {
  const char *name; /* "rowan" or "sqlite": what skipif/onlyif name */
  /* Open a fresh, empty database. 0 on success; else -1 with a message in err. */
  int (*open)(slt_db **out, char *err, size_t cap);
  /* Close and free. */
  void (*close)(slt_db *db);
  /* Run every statement of sql for its effect. 0 when all succeeded, with *changes the rows
  ** changed by the last one; else -1 with "CODE: message" in err. */
  int (*exec)(slt_db *db, const char *sql, int64_t *changes, char *err, size_t cap);
  /* Run one query and format each value by the column's letter in types (a type string
  ** shorter than the result repeats its last letter). 0 with res filled (res->ncol set);
  ** else -1 with "CODE: message" in err. */
  int (*query)(slt_db *db, const char *sql, const char *types, slt_result *res, char *err,
               size_t cap);
  /* A `control` directive ("flush", "reopen"). 0, 1 when the back end does not support it
  ** (the record is skipped), or -1 with a message in err. */
  int (*control)(slt_db *db, const char *what, char *err, size_t cap);
} slt_backend;

extern const slt_backend slt_rowan_backend;   /* slt_rowan.c */
extern const slt_backend slt_sqlite_backend;  /* slt_sqlite.c */

#endif /* ROWAN_SLT_H */
