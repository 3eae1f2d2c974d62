/*
** catalog/keycodec.h: the row-key codec: the primary-key columns of a row, each ASC or DESC,
** as one byte string whose unsigned byte order (memcmp, a proper prefix first) is the SQL
** order of the value tuples, column by column (catalog/value.h's comparison; DESC reverses
** a column; NULL first for ASC, last for DESC).
**
** Per column (docs/FORMAT_SQL.md (Part 3) has the byte tables and worked examples):
**  - a nullable column starts with an indicator byte, 0x00 NULL (nothing follows) or 0x01;
**    NOT NULL columns have none;
**  - fixed-width types as in cell values (catalog/valcodec.h): 1, 2, 4 or 8 bytes;
**  - DECIMAL: the self-delimiting sign/exponent/base-100 form (cat_dec_encode), normalized;
**  - CHAR (trailing spaces removed), VARCHAR, VARBINARY: each 0x00 byte written 0x00 0xFF,
**    then the terminator 0x00 0x01, so any byte is allowed and a prefix sorts first;
**  - DESC: every byte of the column (indicator included) inverted (x ^ 0xFF).
** Every column encoding is self-delimiting, so a key is the plain concatenation, and a
** concatenation of the first k columns' encodings is a prefix of exactly the keys whose
** first k columns have those values.
**
** Not here: choosing ranges from predicates (planner/); this file gives the byte-level
** building blocks. For column c with encoding E of value x (after the equal prefix P):
**   c = x:  [P+E, cat_key_prefix_end(P+E))      c >= x (ASC): start P+E inclusive
**   c > x (ASC): start cat_key_prefix_end(P+E)  c < x (ASC): end P+E exclusive
**   c <= x (ASC): end cat_key_prefix_end(P+E) exclusive; DESC columns swap < and >.
**   LIKE 'abc%': [P+S, cat_key_prefix_end(P+S)) with S = cat_key_encode_string_prefix().
*/
#ifndef ROWAN_CAT_KEYCODEC_H
#define ROWAN_CAT_KEYCODEC_H

#include "catalog/types.h"

/* One primary-key column as the codec sees it. */
typedef struct cat_key_col {
  cat_type type;  /* the column's type */
  bool desc;      /* DESC sort order: the column's bytes are inverted */
  bool nullable;  /* the column carries a null indicator byte */
} cat_key_col;

/* Largest key the codec produces (kv's KV_MAX_ROW_KEY). */
#define CAT_KEY_MAX 32767u

/* Encode the first n values (n <= the number of key columns, n >= 0) for columns cols[0..n)
** into buf[0..cap); *len gets the key length. Each value must have its column's type id and
** satisfy its limits (cat_value_check). Errors: CAT_ERR_NULL (NULL in a NOT NULL column,
** naming the column index), CAT_ERR_TYPE (a value of another type), CAT_ERR_TOOBIG (cap too
** small or the key longer than CAT_KEY_MAX). */
int cat_key_encode(const cat_key_col *cols, int n, const cat_value *vals, uint8_t *buf,
                   size_t cap, size_t *len, cat_error *err);

/* Append one column's encoding at buf[*pos..cap), advancing *pos. Same errors. */
int cat_key_encode_col(const cat_key_col *col, const cat_value *v, uint8_t *buf, size_t cap,
                       size_t *pos, cat_error *err);

/* Decode n columns from [p, limit) into vals[0..n). Strings that need unescaping or
** un-inverting are written into scratch[0..scratch_cap) (limit - p bytes always suffice);
** others point into the key. If end is not NULL it gets the first byte after column n-1;
** if end is NULL the key must end exactly there. DECIMAL values come back at the column's
** scale when the type has a precision. Errors: CAT_ERR_CORRUPT (truncated or bad bytes,
** trailing bytes), CAT_ERR_TOOBIG (scratch too small). */
int cat_key_decode(const cat_key_col *cols, int n, const uint8_t *p, const uint8_t *limit,
                   cat_value *vals, uint8_t *scratch, size_t scratch_cap, const uint8_t **end,
                   cat_error *err);

/* Skip one column's encoding at [p, limit): returns the byte after it, or NULL if corrupt. */
const uint8_t *cat_key_skip_col(const cat_key_col *col, const uint8_t *p, const uint8_t *limit);

/* Append the encoding of "a string column value starting with bytes[0..n)" for a LIKE
** prefix: the indicator (if nullable) and the escaped bytes without terminator, inverted for
** DESC. Every key whose column value starts with those bytes starts with what the caller's
** prefix plus this, and no other key does. CHAR columns hold values without trailing
** spaces. Errors: CAT_ERR_TYPE (not CHAR/VARCHAR/VARBINARY), CAT_ERR_TOOBIG. */
int cat_key_encode_string_prefix(const cat_key_col *col, const void *bytes, size_t n,
                                 uint8_t *buf, size_t cap, size_t *pos, cat_error *err);

/* The smallest key greater than every key starting with p[0..len): p with its trailing 0xFF
** bytes removed and the last remaining byte incremented, into out (at least len bytes).
** Returns false (and *out_len 0) if there is none (p empty or all 0xFF): scan to the end. */
bool cat_key_prefix_end(const uint8_t *p, size_t len, uint8_t *out, size_t *out_len);

/* The smallest key greater than p[0..len): p followed by 0x00, into out (len + 1 bytes). */
size_t cat_key_next(const uint8_t *p, size_t len, uint8_t *out);

/* The largest key smaller than p[0..len) among keys at most len + pad bytes long: p minus its
** last byte if that byte is 0x00 (exact predecessor), else p with the last byte decremented
** and `pad` 0xFF bytes appended; into out (len + pad bytes). Returns false if p is empty
** (no smaller key). */
bool cat_key_prev(const uint8_t *p, size_t len, size_t pad, uint8_t *out, size_t *out_len);

#endif /* ROWAN_CAT_KEYCODEC_H */
