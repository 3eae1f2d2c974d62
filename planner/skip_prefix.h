/*
** planner/skip_prefix.h: the skip scan by prefix (Phoenix's SKIP_SCAN, SQLite's skip-scan,
** Oracle's index skip scan) for a table scan whose WHERE bounds no leading key column but
** bounds later ones: `WHERE TS >= ? AND TS < ?` on PRIMARY KEY (STATION, TS DESC) reads,
** for each STATION found, only that station's rows in the TS range. The ranges are derived
** by plan_key_ranges over the key columns 2..n (a shifted plan_key_schema); kv appends them
** to each leading prefix it finds inside the scan (kv.h kv_skip_prefix), so rows written
** between planning and running are read like any others.
**
** Chosen by cost in planner/select.c: rows read are estimated per prefix and range
** (kv_estimate_rows, over at most PLAN_SKIP_SAMPLE prefixes spread evenly, scaled) and
** compared with the full scan's, each prefix costing PLAN_SKIP_SEEK_COST rows per seek (one
** to find it, one per range). The distinct prefixes are counted at plan time
** (kv_scan_prefixes, one seek each) up to the number whose seeks alone would cost the full
** scan (full rows / (PLAN_SKIP_SEEK_COST x (1 + ranges))), kept between PLAN_SKIP_MIN_PROBE
** and PLAN_SKIP_MAX_PREFIXES: more than that keeps the full scan, and the count costs a
** small share of the full scan it may avoid. The hint
** SKIP_SCAN forces it (when the WHERE bounds a later key column), RANGE_SCAN or
** NO_SKIP_SCAN forbids it. Not for reverse scans (ORDER BY the reverse of the
** key), index scans or the columnar aggregate pushdown.
**
** The plan keeps the suffix ranges in plan_scan.ranges with kind PLAN_SCAN_PREFIX_SKIP
** (prefix_cols 0: nothing of the leading column is pinned; the scan's order is the key
** order). Not here: running it (exec/scan.c), printing it (planner/explain.c).
*/
#ifndef ROWAN_PLANNER_SKIP_PREFIX_H
#define ROWAN_PLANNER_SKIP_PREFIX_H

#include <stdbool.h>
#include <stdint.h>

#include "kv/backend.h"
#include "planner/plan.h"

#define PLAN_SKIP_MIN_PROBE 64       /* prefixes counted at plan time at least ... */
#define PLAN_SKIP_MAX_PREFIXES 4096  /* ... and at most; more: no skip scan */
#define PLAN_SKIP_SAMPLE 64          /* prefixes whose ranges are estimated one by one */
#define PLAN_SKIP_SEEK_COST 16.0  /* cost of one seek, in rows read */
#define PLAN_SKIP_MAX_OUTER 64    /* key ranges a skip scan by prefix may run inside */

/* kv_prefix_len_fn of a row key whose leading key columns ctx (a const plan_skip_key *)
** names: the length of their encodings, 0 if the key is too short or corrupt. */
uint32_t plan_skip_prefix_len(void *ctx, const uint8_t *key, uint32_t key_len);

/* The skip hint of hint text (NULL: none): 1 for SKIP_SCAN, -1 for RANGE_SCAN, -2 for
** NO_SKIP_SCAN (both forbid the skip scan; EXPLAIN names the one written), 0 otherwise;
** the last one written wins. */
int plan_skip_hint(const char *hint);

/* For a table scan sc whose ranges are PLAN_SCAN_FULL: derive the ranges of key columns
** 2..n of t (names: the key columns' names) for `where`; when they bound something and
** the hint allows, count the prefixes and compare costs; when chosen, sc->ranges becomes
** the suffix derivation (kind PLAN_SCAN_PREFIX_SKIP) and sc->skip_* are set (in arena A).
** For one whose ranges are a RANGE or SKIP scan (at most PLAN_SKIP_MAX_OUTER ranges) that
** bounds key columns 1..p and leaves WHERE terms to a filter, the same with the first p key
** columns as the prefix and the ranges of columns p+1..n as the suffixes: the key ranges
** move to sc->skip_outer and bound the prefixes (Phoenix's skip scan over several slots:
** `P1 BETWEEN 2 AND 4 AND P2 IN (5, 7) AND P3 BETWEEN 9 AND 10` seeks each P1 in 2..4 and
** reads its four (P2, P3) ranges; `K LIKE 'ab%' AND T = ?` seeks each K starting with
** 'ab'), costed against the rows of the key ranges; a term either derivation answers is
** not filtered. `explain`: make the EXPLAIN text. EXEC_OK (chosen or not), EXEC_NOMEM,
** EXEC_TOOBIG. */
int plan_skip_consider(kv_backend *be, const cat_table *t, const char *const *names,
                       const plan_expr *where, const cat_value *params, int n_params,
                       int hint, bool explain, plan_arena *A, plan_scan *sc, char *msg,
                       size_t cap);

/* sc->est_rows and est_bytes of a chosen skip scan by prefix, over the prefixes found at
** plan time and sc's families (rows from rows_family). */
void plan_skip_estimate(kv_backend *be, uint32_t rows_family, plan_scan *sc);

/* The first row of each prefix (Phoenix's DISTINCT PREFIX FILTER; MySQL's loose index
** scan): a query whose answer needs only the first row, in key order, of each distinct
** value of the leading key column c0 that the WHERE passes reads one row per value, one
** seek each (kv_skip_prefix.rows_per_prefix 1), instead of every row. The shapes
** (plan_prefix_first_shape): SELECT DISTINCT c0; aggregates without GROUP BY of c0 alone
** that depend only on its distinct values (COUNT(DISTINCT c0), MIN(c0), MAX(c0)); GROUP BY c0
** with such aggregates or MAX(c1) where the second key column c1 is DESC (MIN(c1) where it
** is ASC) and NOT NULL, or FIRST_VALUE(x) WITHIN GROUP (ORDER BY c1 [DESC]) in the key's
** direction (LAST_VALUE in the other): `SELECT STATION, MAX(TS), FIRST_VALUE(TEMP) WITHIN
** GROUP (ORDER BY TS DESC) FROM SENSOR GROUP BY STATION` on the key (STATION, TS DESC) reads
** one row per station.
** Only over the table's own forward scan with no residual filter (the pushed filter decides
** which row of a prefix is its first), no WHERE bound on c0 (the scan is a full scan or
** a skip scan by prefix, whose suffix ranges it keeps: planner/select.c builds the scan
** again as the SKIP_SCAN hint would when the shape fits and the WHERE bounds later key
** columns that the cost rule left to a filter), and when the prefixes, counted at
** plan time like the skip scan's, are few enough that their seeks cost less than the full
** scan (at most PLAN_SKIP_MAX_PREFIXES). NO_SKIP_SCAN or RANGE_SCAN (hint < 0) forbids it.
** EXPLAIN: SKIP TO NEXT PREFIX OF [c0]. Sets sc->prefix_first (and makes sc a skip scan by
** prefix when it was a full scan) and the estimates: one row per prefix. EXEC_OK whether
** chosen or not; EXEC_NOMEM. */
bool plan_prefix_first_shape(const plan_select *s);
/* The prefix of the first-row shapes over several leading key columns: m when s needs only
** the first row of each distinct value of the first m key columns (SELECT DISTINCT of
** exactly those columns; GROUP BY exactly those with the aggregates above, c1 then being key
** column m + 1), 0 otherwise; plan_prefix_first_shape(s) is plan_prefix_first_cols(s) == 1.
** plan_prefix_first takes any m. */
int plan_prefix_first_cols(const plan_select *s);
int plan_prefix_first(kv_backend *be, const plan_select *s, int hint, plan_arena *A, plan_scan *sc,
                      char *msg, size_t cap);

#endif /* ROWAN_PLANNER_SKIP_PREFIX_H */
