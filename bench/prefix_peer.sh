#!/bin/sh
# bench/prefix_peer.sh: "one row per station" questions on the Beijing archive, Rowan's
# shell against sqlite3, whole processes (issue 17, the first row of each prefix). Both load
# the 12 archive files once into STAGE, whose primary key is (STATION, YEAR, MONTH, DAY, HOUR)
# (Rowan's bulk .import; sqlite3's .import into the WITHOUT ROWID table of the same key);
# then one Python process (bench/prefix_peer.py, rowandb and the sqlite3 module) times each
# question N times (default 200) per round, the engines alternated, REPS rounds. The
# questions:
#   distinct  the stations: Rowan `SELECT DISTINCT STATION FROM STAGE` (one seek per station);
#             SQLite its best form, the loose index scan written as a recursive CTE (each step
#             the MIN(STATION) above the last one: one index seek each), and the plain
#             DISTINCT for reference;
#   first     each station's first year: `SELECT STATION, MIN(YEAR) FROM STAGE GROUP BY
#             STATION` (Rowan: the first row of each station); SQLite: the recursive CTE with
#             a correlated MIN(YEAR) per station, and the plain GROUP BY for reference.
# The answers of every form must be equal. Prints one line per round, then medians with
# min-max and the ratios (Rowan's time over SQLite's best form's). It builds nothing: ROWAN
# (default build/test/cli/rowan) and PY (default build/py-venv/bin/python, with rowandb, as
# scripts/pytest.sh installs it) must exist, sqlite3 must be on PATH. Usage:
# bench/prefix_peer.sh [REPS] (default 5) from the repository root; WORK (default
# /tmp/prefix_peer) is the work folder, N the repetitions per process.
set -eu
REPS=${1:-5}
N=${N:-200}
ROWAN=${ROWAN:-build/test/cli/rowan}
PY=${PY:-build/py-venv/bin/python}
WORK=${WORK:-/tmp/prefix_peer}
[ -x "$ROWAN" ] || { echo "no $ROWAN: build the rowan target first" >&2; exit 1; }
[ -x "$PY" ] || { echo "no $PY: run scripts/pytest.sh first (it installs rowandb)" >&2; exit 1; }
command -v sqlite3 >/dev/null || { echo "no sqlite3 on PATH" >&2; exit 1; }
mkdir -p "$WORK/csv"
for f in data/beijing/PRSA_Data_*.csv.gz; do
  out="$WORK/csv/$(basename "$f" .gz)"
  [ -s "$out" ] || gunzip -c "$f" > "$out"
done
COLS=ROW_NO,YEAR,MONTH,DAY,HOUR,PM25,PM10,SO2,NO2,CO,O3,TEMP,PRES,DEWP,RAIN,WD,WSPM,STATION
if [ ! -d "$WORK/db.rowan" ] || [ ! -s "$WORK/db.sqlite" ]; then
  rm -rf "$WORK/db.rowan" "$WORK/db.sqlite"
  "$ROWAN" -bail "$WORK/db.rowan" "CREATE TABLE STAGE (
    STATION VARCHAR NOT NULL, YEAR INTEGER NOT NULL, MONTH INTEGER NOT NULL,
    DAY INTEGER NOT NULL, HOUR INTEGER NOT NULL, ROW_NO INTEGER,
    PM25 DOUBLE, PM10 DOUBLE, SO2 DOUBLE, NO2 DOUBLE, CO DOUBLE, O3 DOUBLE,
    TEMP DOUBLE, PRES DOUBLE, DEWP DOUBLE, RAIN DOUBLE, WD VARCHAR(3), WSPM DOUBLE,
    CONSTRAINT PK PRIMARY KEY (STATION, YEAR, MONTH, DAY, HOUR))" \
    ".import --csv --header --null NA --columns $COLS $WORK/csv/PRSA_Data_*.csv STAGE" \
    ".flush" > /dev/null
  { echo "CREATE TABLE STAGE (ROW_NO INTEGER, YEAR INTEGER NOT NULL, MONTH INTEGER NOT NULL,
      DAY INTEGER NOT NULL, HOUR INTEGER NOT NULL, PM25 REAL, PM10 REAL, SO2 REAL, NO2 REAL,
      CO REAL, O3 REAL, TEMP REAL, PRES REAL, DEWP REAL, RAIN REAL, WD TEXT, WSPM REAL,
      STATION TEXT NOT NULL, PRIMARY KEY (STATION, YEAR, MONTH, DAY, HOUR)) WITHOUT ROWID;"
    for f in "$WORK"/csv/PRSA_Data_*.csv; do echo ".import --csv --skip 1 $f STAGE"; done
  } | sqlite3 -bail "$WORK/db.sqlite"
fi

CTE="WITH RECURSIVE s(st) AS (SELECT MIN(STATION) FROM STAGE UNION ALL SELECT (SELECT MIN(STATION) FROM STAGE WHERE STATION > s.st) FROM s WHERE s.st IS NOT NULL)"
Q_R_DISTINCT="SELECT DISTINCT STATION FROM STAGE;"
Q_S_DISTINCT_BEST="$CTE SELECT st FROM s WHERE st IS NOT NULL;"
Q_S_DISTINCT_PLAIN="SELECT DISTINCT STATION FROM STAGE;"
Q_R_FIRST="SELECT STATION, MIN(YEAR) FROM STAGE GROUP BY STATION;"
Q_S_FIRST_BEST="$CTE SELECT st, (SELECT MIN(YEAR) FROM STAGE WHERE STATION = s.st) FROM s WHERE st IS NOT NULL;"
Q_S_FIRST_PLAIN="SELECT STATION, MIN(YEAR) FROM STAGE GROUP BY STATION;"

# the timing: one Python process opens both (rowandb, python/, and the sqlite3 module),
# checks that every form gives the same answer, then times each form K times per round,
# the engines alternated, ROUNDS rounds (bench/prefix_peer.py)
exec "$PY" bench/prefix_peer.py "$WORK/db.rowan" "$WORK/db.sqlite" "$REPS" "$N" \
  "$Q_R_DISTINCT" "$Q_S_DISTINCT_BEST" "$Q_S_DISTINCT_PLAIN" \
  "$Q_R_FIRST" "$Q_S_FIRST_BEST" "$Q_S_FIRST_PLAIN"
