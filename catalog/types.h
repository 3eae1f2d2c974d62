/*
** catalog/types.h: Rowan's SQL types, the executor's value representation and the catalog
** error struct.
**
** What it holds: the type ids (BOOLEAN ... TIMESTAMP), a type descriptor (id plus length,
** precision and scale), the exact DECIMAL representation (a signed 128-bit unscaled integer
** and a scale), the tagged value `cat_value` with SQL NULL, and `cat_error` (a code and a
** message naming the type and the value). It does not parse or encode anything: text is in
** catalog/text.c, comparison and conversion in catalog/value.c, arithmetic in
** catalog/decimal.c, byte encodings in catalog/keycodec.c and catalog/valcodec.c.
**
** Ranges and precision (docs/TYPES.md says the same for users):
**   BOOLEAN    false < true
**   TINYINT    -128 .. 127                       (int64 field i)
**   SMALLINT   -32768 .. 32767
**   INTEGER    -2^31 .. 2^31-1
**   BIGINT     -2^63 .. 2^63-1
**   FLOAT      IEEE 754 binary32 (held widened in field d); one NaN, above +Infinity
**   DOUBLE     IEEE 754 binary64; -0.0 equals 0.0; one NaN, above +Infinity
**   DECIMAL(p,s) 1 <= p <= 38, 0 <= s <= p; exact; DECIMAL alone = DECIMAL(38,*) where
**              any scale 0..38 is kept as given (Phoenix's unconstrained DECIMAL)
**   CHAR(n)    UTF-8, at most n characters (1 <= n <= 32767); trailing spaces insignificant
**   VARCHAR(n) UTF-8, at most n characters; VARCHAR alone: no limit but the store's
**   VARBINARY  any bytes
**   DATE       days since 1970-01-01, years 0001..9999 (proleptic Gregorian)
**   TIME       microseconds since midnight, 00:00:00 .. 23:59:59.999999
**   TIMESTAMP  microseconds since 1970-01-01 00:00:00 without time zone, years 0001..9999
**   ARRAY      t ARRAY / t[]: an ordered list of values of one scalar type t (any of the
**              above), NULL elements allowed (Phoenix's VARCHAR ARRAY, INTEGER ARRAY, ...).
**              The descriptor's id is CAT_T_ARRAY, `elem` the element type id, and
**              precision/scale/length describe the element. The value is held encoded
**              (catalog/array.h), in u.s like bytes.
*/
#ifndef ROWAN_CAT_TYPES_H
#define ROWAN_CAT_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- Errors -------------------------------------------------------------------------- */
/* ORDER CAT_STATUS: cat_status_name() in catalog/types.c has one entry per code. */
enum cat_status {
  CAT_OK = 0,
  CAT_ERR_RANGE = 1,    /* a value out of range for its type, too long, does not fit */
  CAT_ERR_SYNTAX = 2,   /* text that is not a valid literal of the type */
  CAT_ERR_TYPE = 3,     /* incompatible types (compare or convert) */
  CAT_ERR_CORRUPT = 4,  /* encoded bytes that do not decode */
  CAT_ERR_TOOBIG = 5,   /* an output buffer too small, or a key over the store's maximum */
  CAT_ERR_EXISTS = 6,   /* a table, index or column name already used */
  CAT_ERR_NOTFOUND = 7, /* no such table, index or column */
  CAT_ERR_INVALID = 8,  /* a bad definition (no PK, bad family name, bad type parameters) */
  CAT_ERR_KV = 9,       /* the store failed; msg holds kv's message, kv_code its status */
  CAT_ERR_NOMEM = 10,   /* an allocation failed */
  CAT_ERR_NULL = 11,    /* NULL given for a NOT NULL column */
  CAT_STATUS_COUNT
};

#define CAT_ERRMSG_MAX 256

typedef struct cat_error {
  int code;                  /* enum cat_status; CAT_OK when nothing failed */
  int kv_code;               /* the kv status when code == CAT_ERR_KV, else 0 */
  char msg[CAT_ERRMSG_MAX];  /* NUL-terminated message naming the type and the value */
} cat_error;

/* Set err (if not NULL) to `code` with a printf-style message; returns code. */
int cat_err(cat_error *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Name of a status code ("CAT_ERR_RANGE"); never NULL. */
const char *cat_status_name(int code);

/* ---- Types --------------------------------------------------------------------------- */
/* ORDER CAT_TYPE: type_names[] in catalog/types.c follows this order; the ids are stored in
** SYSTEM.CATALOG, so never renumber them. */
enum cat_type_id {
  CAT_T_BOOLEAN = 1,
  CAT_T_TINYINT = 2,
  CAT_T_SMALLINT = 3,
  CAT_T_INTEGER = 4,
  CAT_T_BIGINT = 5,
  CAT_T_FLOAT = 6,
  CAT_T_DOUBLE = 7,
  CAT_T_DECIMAL = 8,
  CAT_T_CHAR = 9,
  CAT_T_VARCHAR = 10,
  CAT_T_VARBINARY = 11,
  CAT_T_DATE = 12,
  CAT_T_TIME = 13,
  CAT_T_TIMESTAMP = 14,
  CAT_T_ARRAY = 15,  /* elem holds the element type id (1..14) */
  CAT_T_MAX = 15
};

#define CAT_DEC_MAX_PRECISION 38
#define CAT_MAX_CHAR_LENGTH 32767

typedef struct cat_type {
  uint8_t id;         /* enum cat_type_id */
  uint8_t precision;  /* DECIMAL: 1..38; 0 = unconstrained (any value of <= 38 digits) */
  uint8_t scale;      /* DECIMAL: 0..precision; ignored when precision is 0 */
  uint32_t length;    /* CHAR(n)/VARCHAR(n): max characters; 0 = VARCHAR without limit */
  uint8_t elem;       /* ARRAY: the element type id (precision, scale and length are the
                         element's); 0 for every other type. Last, so that positional
                         initializers of the four fields above leave it 0 */
} cat_type;

/* A type descriptor with only an id (no length, precision or scale). */
static inline cat_type cat_type_of(int id) {
  cat_type t = {(uint8_t)id, 0, 0, 0, 0};
  return t;
}

/* The ARRAY type whose elements are of type *elem (a scalar type). */
static inline cat_type cat_type_array_of(const cat_type *elem) {
  cat_type t = *elem;
  t.elem = elem->id;
  t.id = CAT_T_ARRAY;
  return t;
}

/* The element type of an ARRAY type *t (id 0 when t is not an ARRAY). */
static inline cat_type cat_type_elem(const cat_type *t) {
  cat_type e = *t;
  e.id = t->id == CAT_T_ARRAY ? t->elem : 0;
  e.elem = 0;
  return e;
}

/* True if two descriptors are the same type (id, element id, length, precision, scale). */
static inline bool cat_type_equal(const cat_type *a, const cat_type *b) {
  return a->id == b->id && a->elem == b->elem && a->length == b->length &&
         a->precision == b->precision && a->scale == b->scale;
}

/* Type name without parameters ("DECIMAL"); "?" for an unknown id. */
const char *cat_type_name(int id);
/* Full type text ("DECIMAL(5,2)", "VARCHAR(10)", "VARCHAR", "INTEGER") into buf (cap bytes,
** NUL-terminated, truncated if needed); returns buf. */
char *cat_type_format(const cat_type *t, char *buf, size_t cap);
/* Look up a type name (upper case, as the parser folds it; "INT" and "REAL" aliases too);
** returns the id or 0. */
int cat_type_lookup(const char *name);
/* For a type name cat_type_lookup does not know (upper case), the name of the Rowan type
** other SQL dialects mean by it ("TEXT" -> "VARCHAR", "INT8" -> "BIGINT", "DATETIME" ->
** "TIMESTAMP"), for an error message's hint; NULL if there is none. The string is static. */
const char *cat_type_hint(const char *name);
/* The type `id` with the nargs arguments written after its name (arg[0..nargs-1], each
** >= 0), as CREATE TABLE, a view's or a dynamic column and CAST all take them: CHAR and
** VARCHAR one length in 1..CAT_MAX_CHAR_LENGTH (CHAR alone is CHAR(1)), DECIMAL a precision
** in 1..CAT_DEC_MAX_PRECISION and a scale no larger, any other type none; with array, an
** ARRAY of that type. The result is checked by cat_type_validate. CAT_ERR_INVALID with a
** message naming the type ("type INTEGER takes no arguments"); *out untouched then. */
int cat_type_with_args(int id, int nargs, const int64_t *arg, bool array, cat_type *out,
                       cat_error *err);
/* Check a descriptor's parameters (DECIMAL p/s, CHAR/VARCHAR length). CAT_ERR_INVALID. */
int cat_type_validate(const cat_type *t, cat_error *err);
/* True for TINYINT..BIGINT; for FLOAT/DOUBLE; for any number; for CHAR/VARCHAR. */
bool cat_type_is_integer(int id);
bool cat_type_is_float(int id);
bool cat_type_is_numeric(int id);
bool cat_type_is_string(int id);
/* Fixed byte width of a type in keys and cell values, or 0 for variable-length types. */
int cat_type_fixed_width(int id);
/* True for the types whose value lives in u.s (CHAR, VARCHAR, VARBINARY, ARRAY): the
** bytes a copy of the value must carry along. */
bool cat_type_has_bytes(int id);

/* ---- DECIMAL -------------------------------------------------------------------------- */
__extension__ typedef __int128 cat_i128;
__extension__ typedef unsigned __int128 cat_u128;

/* An exact decimal: the value is v / 10^scale. |v| < 10^38 always. */
typedef struct cat_dec {
  cat_i128 v;     /* unscaled value */
  int32_t scale;  /* 0..38 */
} cat_dec;

/* ---- Values --------------------------------------------------------------------------- */
/* One typed value with SQL NULL. Strings and bytes are not owned: `s` points at storage
** the producer keeps alive (the input text, a decode scratch buffer, a row); a cat_value is
** a plain struct that needs no freeing. */
typedef struct cat_value {
  cat_type type;  /* the value's type; for NULL, the type NULL was given as */
  bool is_null;   /* SQL NULL: no other field is meaningful */
  union {
    bool b;       /* BOOLEAN */
    int64_t i;    /* TINYINT..BIGINT; DATE days; TIME and TIMESTAMP microseconds */
    double d;     /* FLOAT (a float widened exactly) and DOUBLE */
    cat_dec dec;  /* DECIMAL */
    struct {
      const uint8_t *p;  /* CHAR/VARCHAR (UTF-8), VARBINARY and ARRAY (encoded) bytes, not
                            owned */
      uint32_t len;      /* byte length */
    } s;                 /* strings and bytes */
  } u;            /* the payload, selected by type.id */
} cat_value;

/* Constructors (no validation beyond the type id). */
cat_value cat_v_null(cat_type t);
cat_value cat_v_bool(bool b);
cat_value cat_v_int(int id, int64_t i);   /* TINYINT..BIGINT, DATE, TIME, TIMESTAMP */
cat_value cat_v_double(double d);
cat_value cat_v_float(float f);
cat_value cat_v_dec(cat_dec d, uint8_t precision, uint8_t scale);
cat_value cat_v_str(int id, const void *p, size_t len);  /* CHAR, VARCHAR, VARBINARY */

/* Date and time limits (inclusive), in the units above. */
#define CAT_DATE_MIN (-719162)                  /* 0001-01-01 */
#define CAT_DATE_MAX 2932896                    /* 9999-12-31 */
#define CAT_TIME_MAX 86399999999LL              /* 23:59:59.999999 */
#define CAT_TS_MIN (-62135596800000000LL)       /* 0001-01-01 00:00:00 */
#define CAT_TS_MAX 253402300799999999LL         /* 9999-12-31 23:59:59.999999 */
#define CAT_US_PER_DAY 86400000000LL

#endif /* ROWAN_CAT_TYPES_H */
