-- examples/sensor/advise.sql: the queries of the sensor tour (examples/sensor/tour.sql), one
-- of each step, for the row-key advisor: `.advise SENSOR examples/sensor/advise.sql` judges
-- every order of SENSOR's key columns (STATION, TS ASC and TS DESC) against them and ranks
-- the keys; the tour's key, (STATION, TS DESC), comes first (docs/SHELL.md ".advise").

-- 1. The latest 24 readings of one station
SELECT TS, PM25, PM10, TEMP, WD FROM SENSOR
  WHERE STATION = 'Dongsi' ORDER BY TS DESC LIMIT 24;

-- 2. One station's day
SELECT TS, PM25, TEMP, RAIN FROM SENSOR
  WHERE STATION = 'Dongsi' AND TS >= TIMESTAMP '2016-07-01 00:00:00'
    AND TS < TIMESTAMP '2016-07-02 00:00:00' ORDER BY TS;

-- 3a. Every station at one hour
SELECT STATION, PM25, TEMP FROM SENSOR WHERE TS = TIMESTAMP '2016-07-01 12:00:00';

-- 3b. The same hour with the stations listed
SELECT STATION, PM25, TEMP FROM SENSOR
  WHERE STATION IN ('Aotizhongxin', 'Changping', 'Dingling', 'Dongsi', 'Guanyuan', 'Gucheng',
                    'Huairou', 'Nongzhanguan', 'Shunyi', 'Tiantan', 'Wanliu', 'Wanshouxigong')
    AND TS = TIMESTAMP '2016-07-01 12:00:00';

-- 4. Hours above 30 C
SELECT COUNT(*) AS HOT_HOURS FROM SENSOR WHERE TEMP > 30;

-- 5a. Averages per station
SELECT STATION, COUNT(*) AS HOURS, AVG(PM25) AS PM25, AVG(TEMP) AS TEMP
  FROM SENSOR GROUP BY STATION;

-- 5b. Daily averages of one station for the archive's last week
SELECT STATION, TRUNC(TS, 'DAY') AS DAY, AVG(PM25) AS PM25, MIN(TEMP) AS TMIN,
    MAX(TEMP) AS TMAX
  FROM SENSOR WHERE STATION = 'Dongsi' AND TS >= TIMESTAMP '2017-02-22 00:00:00'
  GROUP BY STATION, TRUNC(TS, 'DAY') ORDER BY DAY;

-- 5c. Daily averages of every station for July 2016
SELECT STATION, TRUNC(TS, 'DAY') AS DAY, AVG(TEMP) AS TEMP
  FROM SENSOR WHERE TS >= TIMESTAMP '2016-07-01 00:00:00' AND TS < TIMESTAMP '2016-08-01 00:00:00'
  GROUP BY STATION, DAY;

-- 6a. Hot hours at Dongsi, with the leading key column
SELECT COUNT(*) AS HOT_HOURS_DONGSI FROM SENSOR WHERE STATION = 'Dongsi' AND TEMP > 35;

-- 7. The stations' coordinates (the META family)
SELECT STATION, TS, LONGITUDE, LATITUDE, TYPE FROM SENSOR WHERE LATITUDE IS NOT NULL;

-- 8. The latest reading of every station
SELECT STATION, MAX(TS) AS LATEST,
    FIRST_VALUE(TEMP) WITHIN GROUP (ORDER BY TS DESC) AS TEMP,
    FIRST_VALUE(PM25) WITHIN GROUP (ORDER BY TS DESC) AS PM25
  FROM SENSOR GROUP BY STATION;
