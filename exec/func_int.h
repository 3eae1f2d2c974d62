/*
** exec/func_int.h: what the exec/func*.c files share and nobody else uses: the per-family
** call entry points (numbers, strings, dates, formats) that exec_func_call dispatches to,
** and small argument helpers with func.h's error conventions. Not a public header: the
** binder and evaluator include exec/func.h only.
*/
#ifndef ROWAN_EXEC_FUNC_INT_H
#define ROWAN_EXEC_FUNC_INT_H

#include <stdarg.h>

#include "catalog/decimal.h"
#include "catalog/value.h"
#include "exec/engine.h"
#include "exec/func.h"

/* Set c->msg from a printf-style message; returns code. */
int exec_fn_err(exec_func_ctx *c, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Map a catalog status to an EXEC_* code (RANGE/TOOBIG/NULL -> EXEC_CONSTRAINT, NOMEM ->
** EXEC_NOMEM, others EXEC_ERROR) and copy e's message into c->msg; returns the code. */
int exec_fn_cat_err(exec_func_ctx *c, int cat_code, const cat_error *e);

/* Argument helpers; fname names the function in error messages. Numbers are converted
** (DECIMAL and DOUBLE rounded half away from zero for an integer) and strings parsed. */
int exec_fn_i64(const cat_value *v, int64_t *out, exec_func_ctx *c, const char *fname);
int exec_fn_double(const cat_value *v, double *out, exec_func_ctx *c, const char *fname);
/* An exact number (integer or DECIMAL; a double converts to its shortest decimal). */
int exec_fn_dec(const cat_value *v, cat_dec *out, exec_func_ctx *c, const char *fname);
/* Text of a value: a string's own bytes, any other value formatted into c->arena. */
int exec_fn_text(const cat_value *v, const uint8_t **p, size_t *len, exec_func_ctx *c);
/* A value formatted as text for an error message (NUL-terminated, truncated). */
void exec_fn_show(const cat_value *v, char *buf, size_t cap);

/* Decode one UTF-8 character at p (p < end) into its code point and byte length *n (>= 1).
** An invalid or truncated sequence decodes as one byte b with code point 0x200000 + b, so
** it never equals a real character (exec/like.c). */
int32_t exec_fn_utf8(const uint8_t *p, const uint8_t *end, size_t *n);
/* Byte offset of character number k (0-based) of p[0..len), or len past the end
** (exec/func_str.c). */
size_t exec_fn_char_off(const uint8_t *p, size_t len, size_t k);
/* Characters (UTF-8 sequences; a bad byte counts one) in p[0..len) (exec/func_str.c). */
size_t exec_fn_count_chars(const uint8_t *p, size_t len);

/* Family entry points: args have already passed the NULL rule of their function. */
int exec_fn_num(int id, const cat_value *a, int n, cat_value *out, exec_func_ctx *c);
int exec_fn_str(int id, const cat_value *a, int n, cat_value *out, exec_func_ctx *c);
int exec_fn_date(int id, const cat_value *a, int n, cat_value *out, exec_func_ctx *c);
int exec_fn_fmt(int id, const cat_value *a, int n, cat_value *out, exec_func_ctx *c);
int exec_fn_regex(int id, const cat_value *a, int n, cat_value *out, exec_func_ctx *c);
int exec_fn_tz(int id, const cat_value *a, int n, cat_value *out, exec_func_ctx *c);
/* The ARRAY functions (exec/func_array.c); rt is the bound result type or NULL. */
int exec_fn_array(int id, const cat_value *a, int n, const cat_type *rt, cat_value *out,
                  exec_func_ctx *c);
/* An array of element type *elem from the values e[0..n) (each cast to *elem and checked;
** NULLs kept), encoded into c->arena. EXEC_CONSTRAINT/EXEC_ERROR naming the element. */
int exec_fn_array_build(const cat_type *elem, const cat_value *e, uint32_t n, cat_value *out,
                        exec_func_ctx *c);
/* CAST between ARRAY types, an ARRAY to text ([e1, e2]) and text to an ARRAY, in c->arena. */
int exec_fn_array_cast(const cat_value *in, const cat_type *to, cat_value *out,
                       exec_func_ctx *c);
/* The zone named by text value v (exec/tz.h); EXEC_ERROR naming the function and the zone
** when it is unknown. */
struct exec_tz;
int exec_fn_zone(const cat_value *v, const struct exec_tz **tz, exec_func_ctx *c,
                 const char *fname);

/* Date and timestamp pieces (exec/func_date.c): civil fields of a TIMESTAMP value in
** microseconds; and the reverse with validation (EXEC_CONSTRAINT naming fname). */
typedef struct exec_fn_tm {
  int64_t year;  /* 1..9999 for valid values */
  int month;     /* 1..12 */
  int day;       /* 1..31 */
  int hour;      /* 0..23 */
  int minute;    /* 0..59 */
  int second;    /* 0..59 */
  int micros;    /* 0..999999 */
} exec_fn_tm;
void exec_fn_tm_from_us(int64_t us, exec_fn_tm *tm);
int exec_fn_tm_to_us(const exec_fn_tm *tm, int64_t *us, exec_func_ctx *c, const char *fname);

#endif /* ROWAN_EXEC_FUNC_INT_H */
