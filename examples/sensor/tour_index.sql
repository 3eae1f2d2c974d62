-- examples/sensor/tour_index.sql: the index part of the sensor tour (issue 7), run after
-- tour.sql on the loaded archive. A question on a non-key column (which hours were hotter
-- than 40 C?) reads every reading with the row key alone; a secondary index on TEMP turns
-- it into a RANGE SCAN OVER SENSOR.IDX_TEMP. EXPLAIN lists the estimated cost of each path
-- the planner considered (planner/index_choice.c: rows read + 8 per lookup back into the
-- table + 0.5 per row sorted) and marks the chosen one; EXPLAIN ANALYZE shows what each
-- path really read. The indexes are dropped at the end, so the tour can be run again.

.print
.print == Index 1: hours hotter than 40 C, before any index: the whole table is read
EXPLAIN ANALYZE SELECT STATION, TS, TEMP FROM SENSOR WHERE TEMP > 40;

.print
.print == CREATE INDEX backfills the index from the table (one index row per reading)
CREATE INDEX IDX_TEMP ON SENSOR (TEMP);
.flush

.print
.print == The same question, now a RANGE SCAN OVER the index; STATION, TS and TEMP are all
.print == in the index (its key is TEMP then the table's key), so it is covered: no lookups
EXPLAIN SELECT STATION, TS, TEMP FROM SENSOR WHERE TEMP > 40;
EXPLAIN ANALYZE SELECT STATION, TS, TEMP FROM SENSOR WHERE TEMP > 40;
SELECT STATION, TS, TEMP FROM SENSOR WHERE TEMP > 40;

.print
.print == Asking for PM25 too: the index does not hold it, so each match looks its row up
.print == by the table's key (LOOKUP BACK INTO SENSOR BY PK)
EXPLAIN ANALYZE SELECT STATION, TS, TEMP, PM25 FROM SENSOR WHERE TEMP > 40;

.print
.print == A wide range: above 10 C matches most hours; the lookups would cost far more than
.print == reading the table, so the planner keeps the FULL SCAN (see the COST line)
EXPLAIN SELECT STATION, TS, TEMP, PM25 FROM SENSOR WHERE TEMP > 10;

.print
.print == ... unless a hint forces the index, or forbids indexes altogether
EXPLAIN SELECT /*+ INDEX(SENSOR IDX_TEMP) */ STATION, TS, TEMP, PM25 FROM SENSOR WHERE TEMP > 38;
EXPLAIN SELECT /*+ NO_INDEX */ STATION, TS, TEMP FROM SENSOR WHERE TEMP > 40;

.print
.print == The five hottest hours: the index read backwards is already in ORDER BY order, so
.print == there is no sort and the scan stops after five rows
EXPLAIN ANALYZE SELECT STATION, TS, TEMP FROM SENSOR ORDER BY TEMP DESC LIMIT 5;
SELECT STATION, TS, TEMP FROM SENSOR ORDER BY TEMP DESC LIMIT 5;

.print
.print == Index 2: wind direction, with PM2.5 copied into the index (INCLUDE): the average
.print == PM2.5 under a north-north-west wind reads only the index
CREATE INDEX IDX_WD ON SENSOR (WD) INCLUDE (PM25);
.flush
EXPLAIN ANALYZE SELECT COUNT(*) AS HOURS, AVG(PM25) AS PM25 FROM SENSOR WHERE WD = 'NNW';
EXPLAIN ANALYZE SELECT /*+ NO_INDEX */ COUNT(*) AS HOURS, AVG(PM25) AS PM25 FROM SENSOR WHERE WD = 'NNW';
SELECT WD, COUNT(*) AS HOURS, AVG(PM25) AS PM25 FROM SENSOR WHERE WD IN ('N', 'NNW', 'S', 'SSE') GROUP BY WD ORDER BY WD;

DROP INDEX IDX_WD ON SENSOR;
DROP INDEX IDX_TEMP ON SENSOR;
