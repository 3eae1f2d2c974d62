/* tests/layers/up: a kv/util header that includes the store (level 4): refused. */
#include "kv/kv.h"
#include "kv/db/db_impl.h"
