/*
** catalog/value.h: comparing, converting and checking cat_value (catalog/types.h), and
** reading and writing values as text (catalog/text.c).
**
** Comparison rules (cat_value_compare), as documented for users in docs/TYPES.md:
**  - NULL sorts before every value and equals NULL (sort order; SQL three-valued logic is
**    the executor's business).
**  - Numbers compare as numbers across types. Two exact numbers (TINYINT..BIGINT, DECIMAL)
**    compare exactly (1.5 = 1.50 = 3/2). If either side is FLOAT or DOUBLE both are compared
**    as doubles (an exact value is rounded to the nearest double first); -0.0 equals 0.0;
**    NaN equals NaN and is greater than every other number, +Infinity included.
**  - CHAR and VARCHAR compare by their UTF-8 bytes (= code point order); a prefix sorts
**    first; when either side is CHAR, trailing spaces of both are ignored ('ab ' = 'ab').
**  - VARBINARY compares bytes, unsigned, a prefix first.
**  - BOOLEAN: false < true. DATE and TIMESTAMP compare with each other (a DATE is its
**    midnight); TIME only with TIME.
**  - Any other pair (a string with a number, a BOOLEAN with a number, ...) is CAT_ERR_TYPE:
**    the planner converts literals to the column type first (cat_value_cast).
**  - ARRAY with ARRAY: element by element by these rules, a NULL element first, a proper
**    prefix first (catalog/array.h); CAT_ERR_TYPE when the elements do not compare.
**
** Conversion rules (cat_value_cast to a target type with its length/precision/scale):
**  - number -> integer: DECIMAL and FLOAT/DOUBLE are rounded half away from zero, then
**    range-checked ("value 300 out of range for TINYINT"); NaN and infinities are errors.
**  - number -> DECIMAL(p,s): exact from integers; from doubles the shortest decimal that
**    reads back as the same double; then rounded to s and checked against p.
**  - number -> FLOAT/DOUBLE: nearest value; a finite value beyond FLOAT's range is an error.
**  - string -> any type: parsed as a literal of that type (cat_text_parse).
**  - any -> CHAR/VARCHAR(n): its text (cat_text_format), at most n characters (CHAR trailing
**    spaces beyond n are dropped); VARCHAR checks UTF-8.
**  - DATE -> TIMESTAMP: midnight; TIMESTAMP -> DATE: the day (floor); TIMESTAMP -> TIME: the
**    time of day.
**  - BOOLEAN <-> number is not allowed; a string 'true'/'false' converts to BOOLEAN.
**  - CHAR values are held without trailing spaces after any cast or parse to CHAR.
**  - ARRAY -> ARRAY: each element converted by these rules (re-encoded into buf, so
**    CAT_ERR_TOOBIG when cap is short; the same element type only checks); ARRAY -> CHAR /
**    VARCHAR: its text; text -> ARRAY: the text form [e1, e2] read into buf. An ARRAY
**    converts to nothing else.
*/
#ifndef ROWAN_CAT_VALUE_H
#define ROWAN_CAT_VALUE_H

#include "catalog/types.h"

/* Compare a and b by the rules above: *cmp = -1, 0 or 1. CAT_ERR_TYPE ("cannot compare
** INTEGER with VARCHAR") if the types are not comparable; *cmp is then 0. */
int cat_value_compare(const cat_value *a, const cat_value *b, int *cmp, cat_error *err);

/* Convert `in` to type `to` by the rules above into *out. Text produced by the conversion
** (number -> VARCHAR) is written into buf[0..cap) and *out points there; cap of 64 bytes is
** enough for every non-string source. A string result taken from a string source points
** into the source's bytes. NULL converts to NULL of type `to`. Errors: CAT_ERR_RANGE,
** CAT_ERR_SYNTAX (string not a literal of `to`), CAT_ERR_TYPE (not convertible),
** CAT_ERR_TOOBIG (buf too small). On error *out is undefined. */
int cat_value_cast(const cat_value *in, const cat_type *to, cat_value *out, uint8_t *buf,
                   size_t cap, cat_error *err);

/* Check that a value already of type t->id satisfies t's limits (integer range, FLOAT range,
** DECIMAL precision/scale with rounding to the scale, CHAR/VARCHAR length and UTF-8, DATE,
** TIME and TIMESTAMP range) and write the canonical value into *out (CHAR trailing spaces
** removed, DECIMAL at the column's scale, out->type = *t). Errors name the type and value. */
int cat_value_check(const cat_type *t, const cat_value *in, cat_value *out, cat_error *err);

/* Check UTF-8 (no overlongs, no surrogates, <= U+10FFFF): true if valid, else false with
** *bad_off the byte offset (0-based) of the first bad sequence. */
bool cat_utf8_valid(const uint8_t *p, size_t len, size_t *bad_off);
/* Number of characters of valid UTF-8 text. */
size_t cat_utf8_chars(const uint8_t *p, size_t len);
/* len without the trailing spaces (0x20) of p[0..len). */
size_t cat_char_trim(const uint8_t *p, size_t len);

/* ---- Text (catalog/text.c) ---------------------------------------------------------- */
/* Parse the n bytes at s as a literal of type *t and check it against t's limits (as
** cat_value_check). Accepted forms:
**   BOOLEAN  TRUE FALSE T F 1 0 (any case)
**   integers [+-]digits
**   FLOAT/DOUBLE [+-]digits[.digits][e[+-]digits], NaN, Infinity, -Infinity (any case)
**   DECIMAL  as cat_dec_parse (exponents allowed)
**   DATE     YYYY-MM-DD
**   TIME     HH:MM[:SS[.fraction]]
**   TIMESTAMP YYYY-MM-DD[( |T)HH:MM[:SS[.fraction]]]  (fraction: 1-9 digits, truncated to
**            microseconds)
**   CHAR/VARCHAR/VARBINARY the bytes themselves (*out points into s).
**   ARRAY    not here (its encoding needs memory): CAT_ERR_TYPE; cat_value_cast with a
**            buffer, or cat_array_parse (catalog/array.h), reads the text form.
** Errors: CAT_ERR_SYNTAX "invalid DATE '2017-02-30'", CAT_ERR_RANGE "value 300 out of range
** for TINYINT", "value 1e400 out of range for DOUBLE", "value 'abcdefghijkl' too long for
** VARCHAR(10)", "invalid UTF-8 in VARCHAR value at byte 3". */
int cat_text_parse(const cat_type *t, const char *s, size_t n, cat_value *out, cat_error *err);

/* Format v as text into buf (cap bytes, NUL-terminated when cap > 0, truncated if short);
** returns the full length (as snprintf), so a return >= cap means "buffer too small".
** NULL formats as "NULL"; BOOLEAN as TRUE/FALSE; DOUBLE/FLOAT the shortest text that reads
** back as the same value ("NaN", "Infinity", "-Infinity"); DECIMAL with its scale's digits;
** DATE "2016-01-01"; TIME "13:05:00" plus ".123" (milliseconds) or ".123456" when needed;
** TIMESTAMP "2016-01-01 13:05:00[.fff[fff]]"; strings and bytes as their raw bytes; ARRAY
** as ['a', null] (catalog/array.h; read back by cat_array_parse, not cat_text_parse). Every
** non-NULL value parses back to an equal value with cat_text_parse. */
size_t cat_text_format(const cat_value *v, char *buf, size_t cap);
/* The DOUBLE text of cat_text_format found the general way (the fewest significant digits
** that read back, tried one by one with snprintf and strtod), which cat_text_format skips
** for values with a few decimals; the tests compare the two. */
size_t cat_format_double_search(double x, char *buf, size_t cap);

/* Days since 1970-01-01 of a proleptic Gregorian date (no validation), and back. */
int64_t cat_days_from_civil(int64_t y, int m, int d);
void cat_civil_from_days(int64_t days, int64_t *y, int *m, int *d);

#endif /* ROWAN_CAT_VALUE_H */
