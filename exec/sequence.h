/*
** exec/sequence.h: the values of NEXT VALUE FOR and CURRENT VALUE FOR in a running statement
** (exec/sequence.c; the references are planner/plan.h plan_seqref).
**
** Before each row is projected (a SELECT's or an UPSERT SELECT's source row, an UPSERT
** VALUES row) the executor calls exec_seq_row: every NEXT VALUE FOR reference takes the next
** value of its sequence (catalog/cat_sequence.c cat_sequence_next, which claims a block of
** CACHE values by a durable commit before handing one out), then every CURRENT VALUE FOR
** reference takes its sequence's current value; each value lands in the statement's
** parameter slot of the reference, where the projection reads it.
*/
#ifndef ROWAN_EXEC_SEQUENCE_H
#define ROWAN_EXEC_SEQUENCE_H

#include <stdbool.h>

#include "exec/engine.h"

/* Set the values of statement st's sequence references for the next row (st is an
** exec_stmt; void * so that it can be an exec_query row hook). EXEC_OK (also without
** references); EXEC_ERROR naming the sequence and the reference's line and column: the
** sequence was dropped, "Reached MAXVALUE of sequence S" (MINVALUE for a descending one)
** without CYCLE, CURRENT VALUE FOR before any NEXT VALUE FOR in this connection; the store's
** errors (EXEC_IOERR, EXEC_FULL, EXEC_READONLY, ...), with no value handed out. */
int exec_seq_row(void *st, exec_error *err);

/* Whether a block claim must also be flushed to a store file (a store whose commits are not
** synced before they return: ROWAN_SYNC_NORMAL and ROWAN_SYNC_OFF), so that a claim is on
** disk before any value of it is handed out. Default false (ROWAN_SYNC_FULL). */
void exec_set_sequence_flush(exec_session *s, bool flush);

#endif /* ROWAN_EXEC_SEQUENCE_H */
