/*
** catalog/agg_sig.c: the aggregate functions' names, result types and argument checks
** (catalog/agg_sig.h), which the binder (planner/bind_func.c) and the accumulators
** (exec/agg.c) both need, and which names are aggregates (cat_func_is_aggregate, for the
** scalar lookup's message). Not here: the accumulators (exec/agg.c).
*/
#include "catalog/agg_sig.h"

#include <stdarg.h>
#include <stdio.h>
#include <strings.h>

#include "catalog/func_id.h"
#include "catalog/status.h"

/* ORDER EXEC_AGG: one name per enum exec_agg_id (COUNT twice: COUNT(*) and COUNT(x)). */
static const char *const agg_names[EXEC_AGG_COUNT_] = {
    "?", "COUNT", "COUNT", "SUM", "AVG", "MIN", "MAX", "STDDEV_POP", "STDDEV_SAMP",
    "PERCENTILE_CONT", "PERCENTILE_DISC", "FIRST_VALUE", "LAST_VALUE", "NTH_VALUE"};

static int err(char *msg, size_t cap, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int err(char *msg, size_t cap, int code, const char *fmt, ...) {
  if (msg && cap) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, cap, fmt, ap);
    va_end(ap);
  }
  return code;
}

bool cat_agg_percentile(int id) {
  return id == EXEC_AGG_PERCENTILE_CONT || id == EXEC_AGG_PERCENTILE_DISC;
}

bool cat_agg_first_last(int id) {
  return id == EXEC_AGG_FIRST_VALUE || id == EXEC_AGG_LAST_VALUE || id == EXEC_AGG_NTH_VALUE;
}

bool cat_agg_disc_type(int t) {
  return t == 0 || cat_type_is_numeric(t) || t == CAT_T_DATE || t == CAT_T_TIME ||
         t == CAT_T_TIMESTAMP;
}

bool cat_agg_is_ordered_set(const char *name) {
  return strcasecmp(name, "PERCENTILE_CONT") == 0 || strcasecmp(name, "PERCENTILE_DISC") == 0 ||
         cat_agg_takes_value(name);
}

bool cat_agg_takes_value(const char *name) {
  return strcasecmp(name, "FIRST_VALUE") == 0 || strcasecmp(name, "LAST_VALUE") == 0 ||
         strcasecmp(name, "NTH_VALUE") == 0;
}

const char *cat_agg_name(int agg_id) {
  if (agg_id <= 0 || agg_id >= EXEC_AGG_COUNT_) return "?";
  return agg_names[agg_id];
}

int cat_agg_lookup(const char *name, bool star, bool distinct, const cat_type *arg_type,
                    int *agg_id, cat_type *result_type, char *msg, size_t cap) {
  int id = 0;
  for (int i = EXEC_AGG_COUNT; i < EXEC_AGG_COUNT_; i++)
    if (strcasecmp(name, agg_names[i]) == 0) { id = i; break; }
  if (!id) return err(msg, cap, EXEC_ERROR, "unknown aggregate function %s", name);
  if (star) {
    if (id != EXEC_AGG_COUNT) return err(msg, cap, EXEC_ERROR, "%s(*) is not valid", agg_names[id]);
    if (distinct) return err(msg, cap, EXEC_ERROR, "COUNT(DISTINCT *) is not valid");
    *agg_id = EXEC_AGG_COUNT_STAR;
    *result_type = cat_type_of(CAT_T_BIGINT);
    return EXEC_OK;
  }
  int t = arg_type ? arg_type->id : 0;
  if (distinct && (cat_agg_percentile(id) || cat_agg_first_last(id)))
    return err(msg, cap, EXEC_ERROR, "%s(DISTINCT ...) is not supported", agg_names[id]);
  switch (id) {
    case EXEC_AGG_STDDEV_POP: case EXEC_AGG_STDDEV_SAMP: case EXEC_AGG_PERCENTILE_CONT:
      if (t != 0 && !cat_type_is_numeric(t))
        return err(msg, cap, EXEC_ERROR, "function %s does not accept %s", agg_names[id],
                   cat_type_name(t));
      *result_type = cat_type_of(CAT_T_DOUBLE);
      break;
    case EXEC_AGG_PERCENTILE_DISC:
      if (!cat_agg_disc_type(t))
        return err(msg, cap, EXEC_ERROR, "function %s does not accept %s", agg_names[id],
                   cat_type_name(t));
      *result_type = arg_type ? *arg_type : cat_type_of(0);
      break;
    case EXEC_AGG_COUNT:
      *result_type = cat_type_of(CAT_T_BIGINT);
      break;
    case EXEC_AGG_SUM: case EXEC_AGG_AVG:
      if (t == 0 || cat_type_is_float(t)) *result_type = cat_type_of(CAT_T_DOUBLE);
      else if (cat_type_is_integer(t))
        *result_type = cat_type_of(id == EXEC_AGG_SUM ? CAT_T_BIGINT : CAT_T_DECIMAL);
      else if (t == CAT_T_DECIMAL) {
        *result_type = cat_type_of(CAT_T_DECIMAL);
        if (id == EXEC_AGG_SUM) result_type->scale = arg_type->scale;
      } else {
        return err(msg, cap, EXEC_ERROR, "function %s does not accept %s", agg_names[id],
                   cat_type_name(t));
      }
      break;
    default: /* MIN, MAX: any type */
      *result_type = arg_type ? *arg_type : cat_type_of(0);
      break;
  }
  *agg_id = id;
  return EXEC_OK;
}

bool cat_func_is_aggregate(const char *name) {
  for (int i = EXEC_AGG_COUNT; i < EXEC_AGG_COUNT_; i++)
    if (strcasecmp(name, agg_names[i]) == 0) return true;
  return false;
}
