/*
** exec/apply.h: the evaluator's door to the correlated subqueries that run once per outer
** row (planner/bind_apply.c). The statement's run carries its apply environment in a
** parameter (plan_bound.apply_env, its address as VARBINARY bytes, as exec/in_set.h carries
** a set), so every query of the run, joins and nested queries included, reaches it through
** the parameters it already has. exec/engine_apply.c implements both functions.
** Not here: binding, the statement's life cycle.
*/
#ifndef ROWAN_EXEC_APPLY_H
#define ROWAN_EXEC_APPLY_H

#include <stddef.h>

#include "catalog/types.h"
#include "exec/arena.h"

typedef struct exec_apply_env exec_apply_env;

/* The environment carried by parameter value v, or NULL when v is not one. */
const exec_apply_env *exec_apply_env_of(const cat_value *v);

/* The value of correlated subquery k (plan_apply k) for the outer values v[0 .. n): a
** scalar subquery's one value (NULL without a row), EXISTS's TRUE or FALSE, IN's rows as a
** set value for IN_SET. When v equals the previous call's values the previous result is
** given without running it. String bytes of *out are copied into scratch. EXEC_OK, or an
** error code with msg[0 .. cap) set (two rows from a scalar subquery, the subquery's own
** errors, the join memory limit for IN's rows, EXEC_NOMEM). */
int exec_apply_eval(const exec_apply_env *env, int k, const cat_value *v, int n,
                    cat_value *out, exec_arena *scratch, char *msg, size_t cap);

#endif /* ROWAN_EXEC_APPLY_H */
