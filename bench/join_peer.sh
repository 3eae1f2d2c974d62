#!/bin/sh
# bench/join_peer.sh: join questions on the Beijing archive, Rowan against SQLite in one
# Python process (issue 16's benchmark). Both load the same data with their own tools:
#   Rowan   examples/sensor/schema.sql and load.sql (the shell's bulk .import of the 12 files,
#           SENSOR keyed by (STATION, TS DESC), STATIONS keyed by STATION), then SENSOR_BY_TS,
#           the readings again keyed by (TS, STATION), filled by UPSERT SELECT from SENSOR,
#           then `.compact` (one store file per family, as after HBase's major_compact:
#           load.sql's META rows and that UPSERT leave a second file in some families);
#   SQLite  sqlite3's .import of the same files into a staging table, then the same three
#           tables as WITHOUT ROWID tables with the same primary keys (TS as the text
#           'YYYY-MM-DD HH:MM:SS', 'NA' as NULL), STATIONS from the station list with the same
#           id-to-name mapping as load.sql, and an index on STATIONS (TYPE).
# The questions (the same SQL text for both, the month's bounds bound as parameters: a
# datetime for rowandb, its text for sqlite3), January 2016:
#   child_parent  the urban stations' readings of the month joined to STATIONS on SENSOR's
#                 key: Rowan's child/parent join, SQLite's nested loop over SENSOR's key;
#   hash          the same question over SENSOR_BY_TS, whose key does not start with the
#                 join column: Rowan's plain hash join, SQLite's month range with a
#                 STATIONS lookup per row;
#   semi          the suburban stations' readings of the month, `STATION IN (SELECT ...)`:
#                 Rowan's semi hash join, a child/parent join over SENSOR's key, SQLite's
#                 IN list over SENSOR's key.
# Then bench/join_peer.py checks that both engines give the same rows and times each
# question N times (default 50) per round, the engines alternated, REPS rounds (default 5),
# printing medians with min-max and Rowan's time over SQLite's. It builds nothing: ROWAN
# (default build/test/cli/rowan) and PY (default build/py-venv/bin/python, with rowandb, as
# scripts/pytest.sh installs it) must exist, sqlite3 must be on PATH. Usage:
# bench/join_peer.sh [REPS] from the repository root; WORK (default /tmp/join_peer) is the
# work folder (the stores are kept there and reused), N the repetitions per round.
set -eu
REPS=${1:-5}
N=${N:-50}
ROWAN=${ROWAN:-build/test/cli/rowan}
PY=${PY:-build/py-venv/bin/python}
WORK=${WORK:-/tmp/join_peer}
[ -x "$ROWAN" ] || { echo "no $ROWAN: build the rowan target first" >&2; exit 1; }
[ -x "$PY" ] || { echo "no $PY: run scripts/pytest.sh first (it installs rowandb)" >&2; exit 1; }
command -v sqlite3 >/dev/null || { echo "no sqlite3 on PATH" >&2; exit 1; }
mkdir -p "$WORK/csv"
for f in data/beijing/PRSA_Data_*.csv.gz data/beijing/Beijing_AirQuality_Stations.csv.gz; do
  out="$WORK/csv/$(basename "$f" .gz)"
  [ -s "$out" ] || gunzip -c "$f" > "$out"
done
if [ ! -d "$WORK/db.rowan" ] || [ ! -s "$WORK/db.sqlite" ]; then
  rm -rf "$WORK/db.rowan" "$WORK/db.sqlite"
  "$ROWAN" -bail "$WORK/db.rowan" -f examples/sensor/schema.sql -f examples/sensor/load.sql \
    > /dev/null
  "$ROWAN" -bail "$WORK/db.rowan" "CREATE TABLE SENSOR_BY_TS (TS TIMESTAMP NOT NULL, STATION VARCHAR NOT NULL,
       PM25 DOUBLE, PM10 DOUBLE, SO2 DOUBLE, NO2 DOUBLE, CO DOUBLE, O3 DOUBLE, TEMP DOUBLE,
       PRES DOUBLE, DEWP DOUBLE, RAIN DOUBLE, WD VARCHAR(3), WSPM DOUBLE,
       CONSTRAINT PK PRIMARY KEY (TS, STATION))" \
    "UPSERT INTO SENSOR_BY_TS SELECT TS, STATION, PM25, PM10, SO2, NO2, CO, O3, TEMP, PRES,
       DEWP, RAIN, WD, WSPM FROM SENSOR" \
    ".compact" > /dev/null
  V="PM25 REAL, PM10 REAL, SO2 REAL, NO2 REAL, CO REAL, O3 REAL, TEMP REAL, PRES REAL,
     DEWP REAL, RAIN REAL, WD TEXT, WSPM REAL"
  S="CAST(NULLIF(PM25, 'NA') AS REAL), CAST(NULLIF(PM10, 'NA') AS REAL),
     CAST(NULLIF(SO2, 'NA') AS REAL), CAST(NULLIF(NO2, 'NA') AS REAL),
     CAST(NULLIF(CO, 'NA') AS REAL), CAST(NULLIF(O3, 'NA') AS REAL),
     CAST(NULLIF(TEMP, 'NA') AS REAL), CAST(NULLIF(PRES, 'NA') AS REAL),
     CAST(NULLIF(DEWP, 'NA') AS REAL), CAST(NULLIF(RAIN, 'NA') AS REAL), NULLIF(WD, 'NA'),
     CAST(NULLIF(WSPM, 'NA') AS REAL)"
  { echo "CREATE TEMP TABLE STAGE (ROW_NO, YEAR, MONTH, DAY, HOUR, PM25, PM10, SO2, NO2, CO,
      O3, TEMP, PRES, DEWP, RAIN, WD, WSPM, STATION);"
    for f in "$WORK"/csv/PRSA_Data_*.csv; do echo ".import --csv --skip 1 $f STAGE"; done
    echo "CREATE TABLE SENSOR (STATION TEXT NOT NULL, TS TEXT NOT NULL, $V,
        PRIMARY KEY (STATION, TS DESC)) WITHOUT ROWID;
      INSERT INTO SENSOR SELECT STATION,
        printf('%04d-%02d-%02d %02d:00:00', YEAR, MONTH, DAY, HOUR), $S FROM STAGE;
      CREATE TABLE SENSOR_BY_TS (TS TEXT NOT NULL, STATION TEXT NOT NULL, $V,
        PRIMARY KEY (TS, STATION)) WITHOUT ROWID;
      INSERT INTO SENSOR_BY_TS SELECT TS, STATION, PM25, PM10, SO2, NO2, CO, O3, TEMP, PRES,
        DEWP, RAIN, WD, WSPM FROM SENSOR;
      CREATE TEMP TABLE STATION_STAGE (STATION_ID, LONGITUDE, LATITUDE, TYPE);"
    echo ".import --csv --skip 1 $WORK/csv/Beijing_AirQuality_Stations.csv STATION_STAGE"
    echo "CREATE TABLE STATIONS (STATION TEXT NOT NULL PRIMARY KEY, LONGITUDE REAL,
        LATITUDE REAL, TYPE TEXT) WITHOUT ROWID;
      INSERT INTO STATIONS SELECT CASE WHEN STATION_ID = 'pingchang_aq' THEN 'Changping'
          ELSE upper(substr(STATION_ID, 1, 1)) || substr(STATION_ID, 2, length(STATION_ID) - 4)
        END, CAST(LONGITUDE AS REAL), CAST(LATITUDE AS REAL), TYPE FROM STATION_STAGE
        WHERE STATION_ID IN ('aotizhongxin_aq', 'pingchang_aq', 'dingling_aq', 'dongsi_aq',
          'guanyuan_aq', 'gucheng_aq', 'huairou_aq', 'nongzhanguan_aq', 'shunyi_aq',
          'tiantan_aq', 'wanliu_aq', 'wanshouxigong_aq');
      CREATE INDEX STATIONS_TYPE ON STATIONS (TYPE);
      ANALYZE;"
  } | sqlite3 -bail "$WORK/db.sqlite"
fi

Q_CHILD_PARENT="SELECT S.STATION, COUNT(*), AVG(R.PM25) FROM SENSOR R
  JOIN STATIONS S ON R.STATION = S.STATION
  WHERE S.TYPE = '城区' AND R.TS >= ? AND R.TS < ? GROUP BY S.STATION ORDER BY S.STATION"
Q_HASH="SELECT S.STATION, COUNT(*), AVG(R.PM25) FROM SENSOR_BY_TS R
  JOIN STATIONS S ON R.STATION = S.STATION
  WHERE S.TYPE = '城区' AND R.TS >= ? AND R.TS < ? GROUP BY S.STATION ORDER BY S.STATION"
Q_SEMI="SELECT R.STATION, COUNT(*), AVG(R.PM25) FROM SENSOR R
  WHERE R.STATION IN (SELECT STATION FROM STATIONS WHERE TYPE = '郊区')
    AND R.TS >= ? AND R.TS < ? GROUP BY R.STATION ORDER BY R.STATION"

exec "$PY" bench/join_peer.py "$WORK/db.rowan" "$WORK/db.sqlite" "$REPS" "$N" \
  2016-01-01 2016-02-01 \
  child_parent "$Q_CHILD_PARENT" hash "$Q_HASH" semi "$Q_SEMI"
