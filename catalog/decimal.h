/*
** catalog/decimal.h: exact DECIMAL arithmetic on cat_dec (a signed 128-bit unscaled
** integer and a scale, |v| < 10^38, 0 <= scale <= 38).
**
** Every operation is exact until its result needs more than 38 digits; then digits are
** dropped from the right with rounding half away from zero (0.125 -> 0.13, -0.125 -> -0.13),
** and a result whose integer part alone needs more than 38 digits is CAT_ERR_RANGE. Scale
** rules: add/sub: max(s1, s2); mul: s1 + s2; div: as many fractional digits as fit in 38
** digits, then trailing zeros removed (1/4 = 0.25, 1/3 = 0.333...3 with 38 digits). All
** intermediate products are computed in 256 bits, so nothing overflows silently. Text is
** parsed and formatted here too (used by catalog/text.c). Not here: DECIMAL encodings
** (catalog/keycodec.c, valcodec.c).
*/
#ifndef ROWAN_CAT_DECIMAL_H
#define ROWAN_CAT_DECIMAL_H

#include "catalog/types.h"

/* Longest text of a cat_dec: sign, 38 digits, point, leading "0." and NUL. */
#define CAT_DEC_TEXT_MAX 48

/* An integer as a decimal of scale 0. */
cat_dec cat_dec_from_i64(int64_t i);
/* Number of decimal digits of |d.v| (0 for zero). */
int cat_dec_digits(cat_dec d);
/* -1, 0 or 1 as a < b, a == b, a > b numerically (1.5 equals 1.50). */
int cat_dec_cmp(cat_dec a, cat_dec b);
/* d with trailing fractional zeros removed (1.50 -> 1.5, 0.00 -> 0 of scale 0). */
cat_dec cat_dec_normalize(cat_dec d);
/* a + b, a - b, a * b, a / b into *out (rules above). CAT_ERR_RANGE on overflow (message
** names the operation), division by zero is CAT_ERR_RANGE "division by zero". */
int cat_dec_add(cat_dec a, cat_dec b, cat_dec *out, cat_error *err);
int cat_dec_sub(cat_dec a, cat_dec b, cat_dec *out, cat_error *err);
int cat_dec_mul(cat_dec a, cat_dec b, cat_dec *out, cat_error *err);
int cat_dec_div(cat_dec a, cat_dec b, cat_dec *out, cat_error *err);
/* d at scale `scale` (0..38), rounding half away from zero when digits are dropped.
** CAT_ERR_RANGE if the result needs more than 38 digits. */
int cat_dec_rescale(cat_dec d, int scale, cat_dec *out, cat_error *err);
/* d converted for DECIMAL(precision, scale): rescaled to `scale` with rounding, then at most
** `precision` digits, else CAT_ERR_RANGE "value 1234.567 does not fit DECIMAL(5,2)".
** precision 0 means unconstrained: d is only checked to fit 38 digits. */
int cat_dec_fit(cat_dec d, int precision, int scale, cat_dec *out, cat_error *err);
/* Parse [+-]digits[.digits][(e|E)[+-]digits] (at least one digit; no spaces) of n bytes.
** More than 38 significant digits are rounded away (scale shrinks), an integer part over 38
** digits is CAT_ERR_RANGE, malformed text CAT_ERR_SYNTAX. The error message names
** `type_text` (e.g. "DECIMAL(5,2)") and the text. */
int cat_dec_parse(const char *s, size_t n, cat_dec *out, const char *type_text, cat_error *err);
/* Format d into buf (at least CAT_DEC_TEXT_MAX bytes): "-12.50", "0.05", "7"; keeps the
** scale's trailing zeros. Returns the length (without the NUL). */
size_t cat_dec_format(cat_dec d, char *buf);
/* Nearest double (correctly rounded via the decimal text). */
double cat_dec_to_double(cat_dec d);
/* The shortest decimal that converts back to exactly `x` (x finite), with at most 38 digits;
** CAT_ERR_RANGE if |x| >= 1e38 or x is not finite. */
int cat_dec_from_double(double x, cat_dec *out, cat_error *err);
/* Integer part of d (truncated toward zero) if it fits int64, else CAT_ERR_RANGE. */
int cat_dec_to_i64(cat_dec d, int64_t *out, cat_error *err);

#endif /* ROWAN_CAT_DECIMAL_H */
