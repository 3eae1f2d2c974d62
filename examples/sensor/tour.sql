-- examples/sensor/tour.sql: the sensor-archive tour (scripts/main.sh runs it after
-- schema.sql and load.sql). Each question is asked three ways: EXPLAIN (what the planner
-- will read), EXPLAIN ANALYZE (what it did read: rows examined, filtered and returned,
-- blocks and bytes per column family) and the query itself. examples/sensor/README.md
-- explains what to look for in each.
--
-- Pictures: steps 5b and 5c draw line charts (.plot) and steps 6a and 6b the key space and
-- the blocks each reads (.keymap), as SVG files in /tmp (rowan-tour-*.svg); open them in a
-- browser.
--
-- Times are the archive's: Beijing local time (UTC+8, no daylight saving time), kept as
-- given, so TIMESTAMP '2016-07-01 12:00:00' is noon in Beijing.
.headers on
.mode table

.print
.print "== 1. The latest 24 readings of one station: a range scan, newest first, no sort"
EXPLAIN SELECT TS, PM25, PM10, TEMP, WD FROM SENSOR
  WHERE STATION = 'Dongsi' ORDER BY TS DESC LIMIT 24;
EXPLAIN ANALYZE SELECT TS, PM25, PM10, TEMP, WD FROM SENSOR
  WHERE STATION = 'Dongsi' ORDER BY TS DESC LIMIT 24;
SELECT TS, PM25, PM10, TEMP, WD FROM SENSOR
  WHERE STATION = 'Dongsi' ORDER BY TS DESC LIMIT 24;

.print
.print "== 2. One station's day: both key columns bound, 24 rows read"
EXPLAIN SELECT TS, PM25, TEMP, RAIN FROM SENSOR
  WHERE STATION = 'Dongsi' AND TS >= TIMESTAMP '2016-07-01 00:00:00'
    AND TS < TIMESTAMP '2016-07-02 00:00:00' ORDER BY TS;
EXPLAIN ANALYZE SELECT TS, PM25, TEMP, RAIN FROM SENSOR
  WHERE STATION = 'Dongsi' AND TS >= TIMESTAMP '2016-07-01 00:00:00'
    AND TS < TIMESTAMP '2016-07-02 00:00:00' ORDER BY TS;
SELECT TS, PM25, TEMP, RAIN FROM SENSOR
  WHERE STATION = 'Dongsi' AND TS >= TIMESTAMP '2016-07-01 00:00:00'
    AND TS < TIMESTAMP '2016-07-02 00:00:00' ORDER BY TS;

.print
.print "== 3a. Every station at one hour, TS alone: TS is not the leading key column; the planner"
.print "   finds each STATION value and seeks its hour (a skip scan on each prefix); the hint"
.print "   NO_SKIP_SCAN shows the full scan of 420,768 rows that this avoids"
EXPLAIN SELECT STATION, PM25, TEMP FROM SENSOR WHERE TS = TIMESTAMP '2016-07-01 12:00:00';
EXPLAIN ANALYZE SELECT STATION, PM25, TEMP FROM SENSOR
  WHERE TS = TIMESTAMP '2016-07-01 12:00:00';
EXPLAIN ANALYZE SELECT /*+ NO_SKIP_SCAN */ STATION, PM25, TEMP FROM SENSOR
  WHERE TS = TIMESTAMP '2016-07-01 12:00:00';
SELECT STATION, PM25, TEMP FROM SENSOR WHERE TS = TIMESTAMP '2016-07-01 12:00:00';

.print
.print "== 3b. The same hour with the stations listed: one key per station, 12 rows read"
EXPLAIN SELECT STATION, PM25, TEMP FROM SENSOR
  WHERE STATION IN ('Aotizhongxin', 'Changping', 'Dingling', 'Dongsi', 'Guanyuan', 'Gucheng',
                    'Huairou', 'Nongzhanguan', 'Shunyi', 'Tiantan', 'Wanliu', 'Wanshouxigong')
    AND TS = TIMESTAMP '2016-07-01 12:00:00';
EXPLAIN ANALYZE SELECT STATION, PM25, TEMP FROM SENSOR
  WHERE STATION IN ('Aotizhongxin', 'Changping', 'Dingling', 'Dongsi', 'Guanyuan', 'Gucheng',
                    'Huairou', 'Nongzhanguan', 'Shunyi', 'Tiantan', 'Wanliu', 'Wanshouxigong')
    AND TS = TIMESTAMP '2016-07-01 12:00:00';
SELECT STATION, PM25, TEMP FROM SENSOR
  WHERE STATION IN ('Aotizhongxin', 'Changping', 'Dingling', 'Dongsi', 'Guanyuan', 'Gucheng',
                    'Huairou', 'Nongzhanguan', 'Shunyi', 'Tiantan', 'Wanliu', 'Wanshouxigong')
    AND TS = TIMESTAMP '2016-07-01 12:00:00';

.print
.print "== 4. Hours above 30 C: a typed filter on encoded DOUBLE cells (25,587 hours)"
EXPLAIN SELECT COUNT(*) FROM SENSOR WHERE TEMP > 30;
EXPLAIN ANALYZE SELECT COUNT(*) FROM SENSOR WHERE TEMP > 30;
SELECT COUNT(*) AS HOT_HOURS FROM SENSOR WHERE TEMP > 30;

.print
.print "== 5a. Averages per station: GROUP BY the leading key column streams in key order"
EXPLAIN SELECT STATION, COUNT(*) AS HOURS, AVG(PM25) AS PM25, AVG(TEMP) AS TEMP
  FROM SENSOR GROUP BY STATION;
EXPLAIN ANALYZE SELECT STATION, COUNT(*) AS HOURS, AVG(PM25) AS PM25, AVG(TEMP) AS TEMP
  FROM SENSOR GROUP BY STATION;
SELECT STATION, COUNT(*) AS HOURS, AVG(PM25) AS PM25, AVG(TEMP) AS TEMP
  FROM SENSOR GROUP BY STATION;

.print
.print "== 5b. Daily averages of one station for the archive's last week (a range scan)"
EXPLAIN SELECT STATION, TRUNC(TS, 'DAY') AS DAY, AVG(PM25) AS PM25, MIN(TEMP) AS TMIN,
    MAX(TEMP) AS TMAX
  FROM SENSOR WHERE STATION = 'Dongsi' AND TS >= TIMESTAMP '2017-02-22 00:00:00'
  GROUP BY STATION, TRUNC(TS, 'DAY') ORDER BY DAY;
EXPLAIN ANALYZE SELECT STATION, TRUNC(TS, 'DAY') AS DAY, AVG(PM25) AS PM25,
    MIN(TEMP) AS TMIN, MAX(TEMP) AS TMAX
  FROM SENSOR WHERE STATION = 'Dongsi' AND TS >= TIMESTAMP '2017-02-22 00:00:00'
  GROUP BY STATION, TRUNC(TS, 'DAY') ORDER BY DAY;
SELECT STATION, TRUNC(TS, 'DAY') AS DAY, AVG(PM25) AS PM25, MIN(TEMP) AS TMIN,
    MAX(TEMP) AS TMAX
  FROM SENSOR WHERE STATION = 'Dongsi' AND TS >= TIMESTAMP '2017-02-22 00:00:00'
  GROUP BY STATION, TRUNC(TS, 'DAY') ORDER BY DAY;
-- The same week hour by hour, drawn: temperature and dew point (the _C suffix gives the unit)
.plot /tmp/rowan-tour-5b-week.svg "SELECT TS, TEMP AS TEMP_C, DEWP AS DEWP_C FROM SENSOR WHERE STATION = 'Dongsi' AND TS >= TIMESTAMP '2017-02-22 00:00:00'"

.print
.print "== 5c. Daily averages of every station for July 2016: no STATION in the WHERE, a skip scan on each STATION prefix (12 x 744 rows examined, not 420,768)"
EXPLAIN ANALYZE SELECT STATION, TRUNC(TS, 'DAY') AS DAY, AVG(TEMP) AS TEMP
  FROM SENSOR WHERE TS >= TIMESTAMP '2016-07-01 00:00:00' AND TS < TIMESTAMP '2016-08-01 00:00:00'
  GROUP BY STATION, DAY;
SELECT STATION, TRUNC(TS, 'DAY') AS DAY, AVG(TEMP) AS TEMP
  FROM SENSOR WHERE TS >= TIMESTAMP '2016-07-01 00:00:00' AND TS < TIMESTAMP '2016-08-01 00:00:00'
  GROUP BY STATION, DAY ORDER BY STATION, DAY LIMIT 5;
-- All of it drawn: the day first (the x axis), one line per station
.plot /tmp/rowan-tour-5c-daily.svg
SELECT TRUNC(TS, 'DAY') AS DAY, STATION, AVG(TEMP) AS TEMP_C
  FROM SENSOR WHERE TS >= TIMESTAMP '2016-07-01 00:00:00' AND TS < TIMESTAMP '2016-08-01 00:00:00'
  GROUP BY STATION, DAY;

.print
.print "== 6a. Hot hours at Dongsi, with the leading key column: one station's 35,064 hours examined (less the 20 with no TEMP)"
-- The key space of SENSOR and what this question reads of it, drawn (docs/SHELL.md, .keymap);
-- drawn first, so the picture shows the blocks read from the store file, not the cache
.keymap SENSOR "SELECT COUNT(*) FROM SENSOR WHERE STATION = 'Dongsi' AND TEMP > 35" /tmp/rowan-tour-6a-keymap.svg
EXPLAIN ANALYZE SELECT COUNT(*) FROM SENSOR WHERE STATION = 'Dongsi' AND TEMP > 35;
SELECT COUNT(*) AS HOT_HOURS_DONGSI FROM SENSOR WHERE STATION = 'Dongsi' AND TEMP > 35;

.print
.print "== 6b. The same question without it (LIKE '%ongsi' cannot bound the key): all 420,768 hours (less the 398 with no TEMP)"
.keymap SENSOR "SELECT COUNT(*) FROM SENSOR WHERE STATION LIKE '%ongsi' AND TEMP > 35" /tmp/rowan-tour-6b-keymap.svg
EXPLAIN ANALYZE SELECT COUNT(*) FROM SENSOR WHERE STATION LIKE '%ongsi' AND TEMP > 35;
SELECT COUNT(*) AS HOT_HOURS_DONGSI FROM SENSOR WHERE STATION LIKE '%ongsi' AND TEMP > 35;

.print
.print "== 7. One family or the other: READINGS (every row) against META (12 rows), bytes read"
-- IS NOT NULL on a family's column lets the scan read that family alone (no key family).
EXPLAIN ANALYZE SELECT COUNT(*) FROM SENSOR WHERE TEMP IS NOT NULL;
EXPLAIN ANALYZE SELECT COUNT(*) FROM SENSOR WHERE LATITUDE IS NOT NULL;
SELECT STATION, TS, LONGITUDE, LATITUDE, TYPE FROM SENSOR WHERE LATITUDE IS NOT NULL;

.print
.print "== 8. The latest reading of every station: the first row of each STATION, one seek each (12 rows examined, not 420,768)"
EXPLAIN ANALYZE SELECT STATION, MAX(TS) AS LATEST,
    FIRST_VALUE(TEMP) WITHIN GROUP (ORDER BY TS DESC) AS TEMP,
    FIRST_VALUE(PM25) WITHIN GROUP (ORDER BY TS DESC) AS PM25
  FROM SENSOR GROUP BY STATION;
SELECT STATION, MAX(TS) AS LATEST,
    FIRST_VALUE(TEMP) WITHIN GROUP (ORDER BY TS DESC) AS TEMP,
    FIRST_VALUE(PM25) WITHIN GROUP (ORDER BY TS DESC) AS PM25
  FROM SENSOR GROUP BY STATION;
-- The same seeks answer "which stations are there" and "how many".
SELECT COUNT(DISTINCT STATION) AS STATIONS FROM SENSOR;

.print
.print "== 9. Which row key serves these questions best: the row-key advisor judges every order of the key columns against one query of each step (examples/sensor/advise.sql); nothing is rewritten"
.advise SENSOR examples/sensor/advise.sql

.print
.print "== 10a. Hot hours of the urban stations (TYPE 城区 in STATIONS): SENSOR is counted per station before the join, reading only the 8 stations STATIONS names (their keys, from a subquery run once), and the join meets 8 rows"
EXPLAIN ANALYZE SELECT S.STATION, COUNT(*) AS HOT_HOURS FROM SENSOR R JOIN STATIONS S ON R.STATION = S.STATION
  WHERE S.TYPE = '城区' AND R.TEMP > 35 GROUP BY S.STATION ORDER BY S.STATION;
-- The same without the optimization (Phoenix's hint): every row of SENSOR is read.
EXPLAIN ANALYZE SELECT /*+ NO_CHILD_PARENT_JOIN_OPTIMIZATION */ S.STATION, COUNT(*) AS HOT_HOURS
  FROM SENSOR R JOIN STATIONS S ON R.STATION = S.STATION
  WHERE S.TYPE = '城区' AND R.TEMP > 35 GROUP BY S.STATION ORDER BY S.STATION;
SELECT S.STATION, COUNT(*) AS HOT_HOURS FROM SENSOR R JOIN STATIONS S ON R.STATION = S.STATION
  WHERE S.TYPE = '城区' AND R.TEMP > 35 GROUP BY S.STATION ORDER BY S.STATION;

.print
.print "== 10b. Each station's latest reading with its coordinates: step 8's one seek per station as a derived table, joined to STATIONS (12 rows of SENSOR examined)"
EXPLAIN ANALYZE SELECT S.STATION, S.LONGITUDE, S.LATITUDE, L.LATEST, L.TEMP
  FROM STATIONS S JOIN (SELECT STATION, MAX(TS) AS LATEST,
                               FIRST_VALUE(TEMP) WITHIN GROUP (ORDER BY TS DESC) AS TEMP
                        FROM SENSOR GROUP BY STATION) L ON L.STATION = S.STATION
  ORDER BY S.STATION;
SELECT S.STATION, S.LONGITUDE, S.LATITUDE, L.LATEST, L.TEMP
  FROM STATIONS S JOIN (SELECT STATION, MAX(TS) AS LATEST,
                               FIRST_VALUE(TEMP) WITHIN GROUP (ORDER BY TS DESC) AS TEMP
                        FROM SENSOR GROUP BY STATION) L ON L.STATION = S.STATION
  ORDER BY S.STATION;
