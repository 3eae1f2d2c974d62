/*
** catalog/func_sig.h: what the binder and the executor both need to know about a scalar
** function or operator before it is called: its id from its name and argument types, its
** result type, the type an untyped parameter argument should take, its canonical name,
** whether it is deterministic, its NULL rule and which family of exec/func_*.c implements
** it. The executor's calls are exec/func.h's; docs/FUNCTIONS.md documents each function for
** users. Not here: calls, aggregates (catalog/agg_sig.h).
*/
#ifndef ROWAN_CAT_FUNC_SIG_H
#define ROWAN_CAT_FUNC_SIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "catalog/func_id.h"
#include "catalog/types.h"

/* Which file of exec/ implements a function (exec/func.c dispatches on it). */
enum cat_func_family {
  CAT_FAM_NUM = 1, CAT_FAM_STR, CAT_FAM_DATE, CAT_FAM_FMT, CAT_FAM_GEN, CAT_FAM_REGEX,
  CAT_FAM_TZ, CAT_FAM_ARRAY
};

/* One function's fixed facts. */
typedef struct cat_func_def {
  const char *name;   /* canonical upper-case name ("SUBSTR", "+") */
  int8_t min_args;    /* fewest arguments */
  int8_t max_args;    /* most arguments; -1 = any number */
  bool strict;        /* a NULL argument gives NULL without calling (the NULL rule) */
  uint8_t family;     /* enum cat_func_family */
} cat_func_def;

/* Resolve a scalar function or operator. name: case-insensitive function name, or an
** operator "+", "-", "*", "/", "%", "||" (n_args 2; "-" with n_args 1 is negation).
** arg_types[0..n_args): the arguments' types; a type with id 0 stands for an argument of
** unknown type (an untyped parameter or a NULL literal) and is accepted wherever some type
** is. On EXEC_OK: *func_id (enum exec_func_id) and *result_type are set. EXEC_ERROR (with
** msg naming the function): unknown function, an aggregate name (catalog/agg_sig.h), wrong
** number of arguments, argument type not accepted. Nothing is allocated. */
int cat_func_lookup(const char *name, int n_args, const cat_type *arg_types, int *func_id,
                    cat_type *result_type, char *msg, size_t cap);

/* The type argument i (0-based) of a call of func_id with n_args arguments should have
** when it is an untyped parameter, given the other arguments' types (id 0 = unknown):
** e.g. SUBSTR's 2nd argument is INTEGER, TO_CHAR's 2nd VARCHAR, + takes the other
** operand's type. Returns a type with id 0 when anything goes. */
cat_type cat_func_arg_hint(int func_id, int n_args, const cat_type *arg_types, int i);

/* Upper-case canonical name of a function id ("SUBSTR", "+"); "?" for a bad id. */
const char *cat_func_name(int func_id);

/* Whether a call of func_id with n_args arguments gives the same result for the same
** arguments at any time: false for NOW and CURRENT_DATE (the statement's clock) and for
** what reads a named time zone (CONVERT_TZ, TIMEZONE_OFFSET, TO_TIMESTAMP / TO_DATE / TO_TIME
** with a zone: the system's tz database changes with its updates). Such a call is refused in
** an index key. */
bool cat_func_deterministic(int func_id, int n_args);

/* The fixed facts of func_id (the entry of id 0, name "?", for a bad id). */
const cat_func_def *cat_func_def_of(int func_id);

#endif /* ROWAN_CAT_FUNC_SIG_H */
