/*
** catalog/text_fast.h: fast paths of catalog/text.c's cat_text_parse for the forms an import
** sees most: integers of up to 18 digits, decimal numbers whose value the Clinger fast path
** gives exactly, and 'YYYY-MM-DD HH:MM:SS' timestamps. Each function either returns true
** with exactly the value the general parser gives for the same text, or false ("not
** handled here": the text may still be valid or invalid), never an error message; the
** caller then runs the general parser. No range checks against a column type (the caller
** does those). Implementation: catalog/text_fast.c.
*/
#ifndef ROWAN_CAT_TEXT_FAST_H
#define ROWAN_CAT_TEXT_FAST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* [+-]digits with 1..18 digits -> *out. */
bool cat_text_fast_int(const char *s, size_t n, int64_t *out);

/* [+-]digits[.digits][(e|E)[+-]digits] (at least one mantissa digit; ".5" and "5." too)
** whose significant digits fit in 2^53 and whose power of ten is within 10^-22..10^22:
** the value is that integer times or divided by an exactly representable power of ten,
** so one IEEE operation rounds it correctly, the same double strtod gives. */
bool cat_text_fast_double(const char *s, size_t n, double *out);

/* Exactly 'YYYY-MM-DD HH:MM:SS' (or with 'T'), a valid date (year >= 1) and time ->
** microseconds since the epoch. */
bool cat_text_fast_timestamp(const char *s, size_t n, int64_t *us);

#endif /* ROWAN_CAT_TEXT_FAST_H */
