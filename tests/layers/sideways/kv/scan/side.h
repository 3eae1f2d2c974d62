/* tests/layers/sideways: kv/scan includes kv/bulk, a module of its own level: refused. */
#include "kv/db/db_impl.h"
#include "kv/bulk/bulk.h"
