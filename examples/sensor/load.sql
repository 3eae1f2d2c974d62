-- examples/sensor/load.sql: load the bundled archive into SENSOR (examples/sensor/schema.sql).
-- Run from the repository root (paths are relative to it) with the rowan shell:
--   rowan DB -f examples/sensor/schema.sql -f examples/sensor/load.sql
--
-- 1. The 12 reading files (data/beijing/PRSA_Data_*.csv.gz, gzip'ed CSV, 35,064 rows each,
--    'NA' for a missing value) go into a staging table with the files' own columns. The
--    header names PM2.5, which is not an identifier, so --columns maps the fields; the
--    header line is skipped. The file's running number "No" is kept as ROW_NO.
--    --bulk loads them as one atomic bulk load (sorted store files, no WAL; docs/IMPORT.md).
-- 2. UPSERT SELECT turns year/month/day/hour into one TIMESTAMP with MAKE_TIMESTAMP. The
--    times are Beijing local time (UTC+8, no daylight saving time), kept as given.
-- 3. The station list (data/beijing/Beijing_AirQuality_Stations.csv.gz, from the KDD Cup
--    2018 station list: 35 stations with ids such as 'dongsi_aq') goes to a second staging
--    table; an UPSERT SELECT writes the coordinates and type of the 12 archive stations
--    into the META family, once per station, in the row of its latest reading
--    (2017-02-28 23:00). Ids are the lower-case name + '_aq', except that Changping is
--    spelled 'pingchang_aq' in that list.
CREATE TABLE ARCHIVE_STAGE (
  STATION VARCHAR NOT NULL, YEAR INTEGER NOT NULL, MONTH INTEGER NOT NULL,
  DAY INTEGER NOT NULL, HOUR INTEGER NOT NULL, ROW_NO INTEGER,
  PM25 DOUBLE, PM10 DOUBLE, SO2 DOUBLE, NO2 DOUBLE, CO DOUBLE, O3 DOUBLE,
  TEMP DOUBLE, PRES DOUBLE, DEWP DOUBLE, RAIN DOUBLE, WD VARCHAR(3), WSPM DOUBLE,
  CONSTRAINT PK PRIMARY KEY (STATION, YEAR, MONTH, DAY, HOUR)
);
.import --bulk --csv --header --null NA --columns ROW_NO,YEAR,MONTH,DAY,HOUR,PM25,PM10,SO2,NO2,CO,O3,TEMP,PRES,DEWP,RAIN,WD,WSPM,STATION data/beijing/PRSA_Data_*.csv.gz ARCHIVE_STAGE
UPSERT INTO SENSOR (STATION, TS, PM25, PM10, SO2, NO2, CO, O3, TEMP, PRES, DEWP, RAIN, WD, WSPM)
  SELECT STATION, MAKE_TIMESTAMP(YEAR, MONTH, DAY, HOUR, 0, 0), PM25, PM10, SO2, NO2, CO, O3,
         TEMP, PRES, DEWP, RAIN, WD, WSPM
  FROM ARCHIVE_STAGE;
DROP TABLE ARCHIVE_STAGE;

CREATE TABLE STATION_STAGE (
  STATION_ID VARCHAR NOT NULL PRIMARY KEY, LONGITUDE DOUBLE, LATITUDE DOUBLE, TYPE VARCHAR
);
.import --csv --header data/beijing/Beijing_AirQuality_Stations.csv.gz STATION_STAGE
UPSERT INTO SENSOR (STATION, TS, LONGITUDE, LATITUDE, TYPE)
  SELECT CASE WHEN STATION_ID = 'pingchang_aq' THEN 'Changping'
              ELSE UPPER(SUBSTR(STATION_ID, 1, 1)) || SUBSTR(STATION_ID, 2, LENGTH(STATION_ID) - 4)
         END,
         TIMESTAMP '2017-02-28 23:00:00', LONGITUDE, LATITUDE, TYPE
  FROM STATION_STAGE
  WHERE STATION_ID IN ('aotizhongxin_aq', 'pingchang_aq', 'dingling_aq', 'dongsi_aq',
                       'guanyuan_aq', 'gucheng_aq', 'huairou_aq', 'nongzhanguan_aq',
                       'shunyi_aq', 'tiantan_aq', 'wanliu_aq', 'wanshouxigong_aq');
DROP TABLE STATION_STAGE;

-- The stations again as a table of their own, for the tour's join (step 10): one row per
-- station, read from the META rows just written.
CREATE TABLE STATIONS (
  STATION VARCHAR NOT NULL PRIMARY KEY, LONGITUDE DOUBLE, LATITUDE DOUBLE, TYPE VARCHAR
);
UPSERT INTO STATIONS SELECT STATION, LONGITUDE, LATITUDE, TYPE FROM SENSOR
  WHERE LATITUDE IS NOT NULL;

SELECT COUNT(*) AS READINGS FROM SENSOR;
SELECT STATION, LONGITUDE, LATITUDE, TYPE FROM SENSOR WHERE LONGITUDE IS NOT NULL;
