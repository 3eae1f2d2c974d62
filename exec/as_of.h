/*
** exec/as_of.h: the read time of the statement step running on this thread (exec/as_of.c):
** what every kv scan it opens reads as of (kv_scan_options.as_of). docs/SQL.md "Reading the
** past".
*/
#ifndef ROWAN_EXEC_AS_OF_H
#define ROWAN_EXEC_AS_OF_H

#include <stdint.h>

/* Make v (ms since the epoch, UTC; 0 = now) the read time of the scans this thread opens,
** and the planner's (no secondary index under a past read); returns the previous one. */
int64_t exec_as_of_swap(int64_t v);
/* The read time of the scans this thread opens now (0 = now). */
int64_t exec_as_of_current(void);

#endif /* ROWAN_EXEC_AS_OF_H */
