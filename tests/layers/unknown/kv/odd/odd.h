/* tests/layers/unknown: a kv folder with no level in the order: refused. */
#include "kv/kv.h"
