-- examples/sensor/schema.sql: the sensor table of the tour (run by scripts/main.sh before
-- load.sql). One row per station and hour of the Beijing multi-site air-quality archive
-- (data/beijing/, CC BY 4.0, see its SOURCE.md).
--
-- The row key is (STATION, TS DESC): all hours of one station are contiguous, newest first,
-- so "the latest readings of a station" is a short range scan with no sort, and TS DESC is
-- the declarative form of the hand-made reversed-timestamp row key.
--
-- TS is the archive's year/month/day/hour as given: Beijing local time (UTC+8, no daylight
-- saving time). Nothing is converted to UTC; a TIMESTAMP has no time zone.
--
-- Two column families share the rows:
--   READINGS  the hourly measurements (written for every row)
--   META      the station's coordinates and type (written once per station, in the row of
--             its latest reading), so a scan of META reads a small fraction of the bytes a
--             scan of READINGS reads (compare the EXPLAIN ANALYZE lines in tour.sql).
CREATE TABLE SENSOR (
  STATION VARCHAR NOT NULL,     -- station name as in the archive, e.g. 'Aotizhongxin'
  TS TIMESTAMP NOT NULL,        -- hour of the reading, Beijing local time (UTC+8)
  READINGS.PM25 DOUBLE,         -- PM2.5 concentration, ug/m3
  READINGS.PM10 DOUBLE,         -- PM10 concentration, ug/m3
  READINGS.SO2 DOUBLE,          -- SO2 concentration, ug/m3
  READINGS.NO2 DOUBLE,          -- NO2 concentration, ug/m3
  READINGS.CO DOUBLE,           -- CO concentration, ug/m3
  READINGS.O3 DOUBLE,           -- O3 concentration, ug/m3
  READINGS.TEMP DOUBLE,         -- temperature, degrees Celsius
  READINGS.PRES DOUBLE,         -- pressure, hPa
  READINGS.DEWP DOUBLE,         -- dew point temperature, degrees Celsius
  READINGS.RAIN DOUBLE,         -- precipitation, mm
  READINGS.WD VARCHAR(3),       -- wind direction, e.g. 'NNW'
  READINGS.WSPM DOUBLE,         -- wind speed, m/s
  META.LONGITUDE DOUBLE,        -- station longitude, degrees east
  META.LATITUDE DOUBLE,         -- station latitude, degrees north
  META.TYPE VARCHAR,            -- station type as listed (城区 urban, 郊区 suburban, ...)
  CONSTRAINT PK PRIMARY KEY (STATION, TS DESC)
);
