/*
** catalog/array.h: ARRAY values (Phoenix's `VARCHAR ARRAY`, `INTEGER ARRAY`, ...): their
** encoding, reading them element by element, comparing, converting, checking and their text.
**
** An ARRAY value is held encoded, in memory as in a cell (docs/FORMAT_SQL.md (Part 3), "ARRAY cell
** values"): a cat_value of type CAT_T_ARRAY points with u.s at these bytes, like a VARBINARY,
** so it is copied and stored like one. The bytes:
**   byte 0        the element type id (1..14, never ARRAY: arrays do not nest)
**   bytes 1..4    the element count n, unsigned 32-bit big-endian
**   n elements    each a varint tag (LEB128): 0 for a NULL element; k >= 1 for a value whose
**                 cell value encoding (catalog/valcodec.h) of k - 1 bytes follows
** Nothing follows the last element. The element encodings are canonical (one byte string per
** value), so two arrays of the same element type are equal exactly when their bytes are.
** The encoding is not order-preserving: arrays are never row-key columns.
**
** Text (cat_text_format of an ARRAY, what the shell and rowan_column_text show): Phoenix's
** PhoenixArray.toString, `[` elements joined by `, ` `]`: CHAR, VARCHAR, DATE, TIME and
** TIMESTAMP elements in single quotes (a quote inside doubled), VARBINARY as X'hex', numbers
** and booleans bare, a NULL element as `null`. cat_array_parse reads that form back.
**
** Not here: SQL functions over arrays (exec/func_array.c), the ARRAY[...] syntax (sql/).
*/
#ifndef ROWAN_CAT_ARRAY_H
#define ROWAN_CAT_ARRAY_H

#include "catalog/types.h"

/* Bytes of the header (element type id and count). */
#define CAT_ARRAY_HEADER 5

/* A reader over an encoded array. */
typedef struct cat_array_iter {
  cat_type elem;          /* the element type (from the array's type) */
  const uint8_t *p;       /* the next element's tag */
  const uint8_t *limit;   /* the end of the encoding */
  uint32_t n;             /* number of elements */
  uint32_t i;             /* elements read so far */
} cat_array_iter;

/* Start reading the non-NULL ARRAY value v (its header is checked against v's element type).
** CAT_ERR_CORRUPT for bad bytes, CAT_ERR_TYPE if v is not an ARRAY. */
int cat_array_open(const cat_value *v, cat_array_iter *it, cat_error *err);
/* The next element (it->i < it->n) into *out, of type it->elem (strings point into the
** array's bytes). CAT_ERR_CORRUPT for a truncated or bad element. */
int cat_array_next(cat_array_iter *it, cat_value *out, cat_error *err);
/* The number of elements of the non-NULL ARRAY value v (0 when its header is short). */
uint32_t cat_array_count(const cat_value *v);
/* Element number idx (1-based, Phoenix's subscript) of v into *out: NULL (of the element type)
** when idx is outside 1..count. CAT_ERR_CORRUPT for bad bytes. */
int cat_array_get(const cat_value *v, int64_t idx, cat_value *out, cat_error *err);
/* Check that p[0..len) is a well-formed array of element type t->elem whose elements decode
** (cell reads go through this). CAT_ERR_CORRUPT names the first problem. */
int cat_array_validate(const cat_type *t, const uint8_t *p, size_t len, cat_error *err);

/* ---- Building --------------------------------------------------------------------------- */
/* Bytes element e (NULL, or a value already of the element type and checked against it)
** takes in an encoding: its tag and its cell value bytes. */
size_t cat_array_elem_size(const cat_value *e);
/* Write the header for n elements of type elem_id at p (CAT_ARRAY_HEADER bytes). */
void cat_array_put_header(uint8_t *p, int elem_id, uint32_t n);
/* Write element e at p (cat_array_elem_size(e) bytes available); returns the bytes written. */
size_t cat_array_put_elem(uint8_t *p, const cat_value *e);

/* ---- Values ----------------------------------------------------------------------------- */
/* Compare two non-NULL arrays element by element (cat_value_compare's rules for elements, a
** NULL element first), a proper prefix first: *cmp -1, 0 or 1. CAT_ERR_TYPE when the element
** types are not comparable; CAT_ERR_CORRUPT. */
int cat_array_compare(const cat_value *a, const cat_value *b, int *cmp, cat_error *err);
/* Convert the non-NULL array `in` to ARRAY type *to (each element cast to the element type
** with cat_value_cast's rules and checked) into buf[0..cap): *len gets the bytes needed;
** CAT_ERR_TOOBIG when cap is short (call again with a buffer of *len bytes). *out points at
** buf. Element errors name the element: "ARRAY element 2: value 300 out of range for
** TINYINT". */
int cat_array_convert(const cat_value *in, const cat_type *to, uint8_t *buf, size_t cap,
                      size_t *len, cat_value *out, cat_error *err);
/* Check a non-NULL array already of element type t->elem against t's element limits (length,
** precision, range) without changing it: *out = *in with type *t. An element that would need
** converting (a DECIMAL with more decimals than the scale) is CAT_ERR_RANGE. */
int cat_array_check(const cat_type *t, const cat_value *in, cat_value *out, cat_error *err);

/* ---- Text ------------------------------------------------------------------------------- */
/* The text above into buf (cap bytes, NUL-terminated when cap > 0, truncated if short);
** returns the full length (as snprintf). */
size_t cat_array_format(const cat_value *v, char *buf, size_t cap);
/* Read the text form `[e1, e2, ...]` (whitespace allowed around elements; `null` any case;
** quoted or bare elements parsed as literals of the element type) as an ARRAY of type *t into
** buf[0..cap): *len gets the bytes needed, CAT_ERR_TOOBIG when cap is short. *out points at
** buf. CAT_ERR_SYNTAX names the byte offset of the problem. */
int cat_array_parse(const cat_type *t, const char *s, size_t n, uint8_t *buf, size_t cap,
                    size_t *len, cat_value *out, cat_error *err);

/* The element type of ARRAY[e1, ..., en] with elements of types ts[0..n) (id 0 = unknown:
** NULL or an untyped parameter): numbers give the widest (INTEGER at least, DECIMAL with any
** DECIMAL, DOUBLE with any FLOAT or DOUBLE), strings VARCHAR, DATE with TIMESTAMP TIMESTAMP,
** other types only themselves; all unknown gives VARCHAR. CAT_OK, or CAT_ERR_TYPE with msg and *bad (the
** 0-based index of the element that does not fit, or that is itself an ARRAY). */
int cat_array_elem_type(int n, const cat_type *ts, cat_type *elem, int *bad, char *msg,
                         size_t cap);

#endif /* ROWAN_CAT_ARRAY_H */
