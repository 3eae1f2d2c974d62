UPSERT INTO t VALUES (-1, +2, 3 * 4, 'x' || 'y')
