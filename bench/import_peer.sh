#!/bin/sh
# bench/import_peer.sh: the shell's `.import` of the Beijing archive against sqlite3's, whole
# processes, as a user runs them (issue 22). The 12 data/beijing/PRSA_Data_*.csv.gz files are
# gunzipped once into a work folder; then, alternating the tools REPS times each (a noisy
# moment should not fall on one tool), each run starts from nothing and measures:
#   load   `rowan DB ".read schema" ".import ..."` into STAGE, whose primary key is (STATION,
#          YEAR, MONTH, DAY, HOUR), against `sqlite3 FILE ".read schema" ".import ..."` into the
#          WITHOUT ROWID table of the same columns and key: wall time of the whole process;
#   size   du -sb of the Rowan store folder right after (no .flush) against the SQLite file;
#   counts one process that runs 20 `SELECT COUNT(*) FROM STAGE WHERE TEMP > t AND TEMP < 60`
#          (t = 20..39; the upper bound because sqlite3 keeps 'NA' as text, which compares
#          above every number) on the store just loaded: wall time of the whole process, and
#          the 20 answers, which must be the same for both tools.
# Prints one line per run and then the median and min-max of each figure with the ratios.
# It does not build anything: ROWAN (default build/bench/cli/rowan) must exist; sqlite3 must
# be on PATH. Usage: bench/import_peer.sh [REPS] (default 3), from the repository root;
# WORK (default /tmp/import_peer) is the work folder; IMPORT_OPTS adds .import options
# (e.g. IMPORT_OPTS=--no-bulk measures the row-by-row path).
set -eu
REPS=${1:-3}
ROWAN=${ROWAN:-build/bench/cli/rowan}
WORK=${WORK:-/tmp/import_peer}
IMPORT_OPTS=${IMPORT_OPTS:-}
[ -x "$ROWAN" ] || { echo "no $ROWAN: build the rowan target first" >&2; exit 1; }
command -v sqlite3 >/dev/null || { echo "no sqlite3 on PATH" >&2; exit 1; }
mkdir -p "$WORK/csv"
for f in data/beijing/PRSA_Data_*.csv.gz; do
  out="$WORK/csv/$(basename "$f" .gz)"
  [ -s "$out" ] || gunzip -c "$f" > "$out"
done

COLS=ROW_NO,YEAR,MONTH,DAY,HOUR,PM25,PM10,SO2,NO2,CO,O3,TEMP,PRES,DEWP,RAIN,WD,WSPM,STATION
cat > "$WORK/rowan.sql" <<'EOF'
CREATE TABLE STAGE (
  STATION VARCHAR NOT NULL, YEAR INTEGER NOT NULL, MONTH INTEGER NOT NULL,
  DAY INTEGER NOT NULL, HOUR INTEGER NOT NULL, ROW_NO INTEGER,
  PM25 DOUBLE, PM10 DOUBLE, SO2 DOUBLE, NO2 DOUBLE, CO DOUBLE, O3 DOUBLE,
  TEMP DOUBLE, PRES DOUBLE, DEWP DOUBLE, RAIN DOUBLE, WD VARCHAR(3), WSPM DOUBLE,
  CONSTRAINT PK PRIMARY KEY (STATION, YEAR, MONTH, DAY, HOUR)
);
EOF
# sqlite3: the columns in the files' order (its .import maps by position).
cat > "$WORK/sqlite.sql" <<'EOF'
CREATE TABLE STAGE (
  ROW_NO INTEGER, YEAR INTEGER NOT NULL, MONTH INTEGER NOT NULL, DAY INTEGER NOT NULL,
  HOUR INTEGER NOT NULL, PM25 REAL, PM10 REAL, SO2 REAL, NO2 REAL, CO REAL, O3 REAL,
  TEMP REAL, PRES REAL, DEWP REAL, RAIN REAL, WD TEXT, WSPM REAL, STATION TEXT NOT NULL,
  PRIMARY KEY (STATION, YEAR, MONTH, DAY, HOUR)
) WITHOUT ROWID;
EOF
set -- "$WORK"/csv/PRSA_Data_*.csv
SQ_IMPORT=""
for f in "$@"; do SQ_IMPORT="$SQ_IMPORT
.import --csv --skip 1 $f STAGE"; done
QUERIES=""
t=20
while [ $t -lt 40 ]; do
  QUERIES="${QUERIES}SELECT COUNT(*) FROM STAGE WHERE TEMP > $t AND TEMP < 60;"
  t=$((t + 1))
done

now() { date +%s.%N; }
el() { echo "$2 - $1" | bc; }

: > "$WORK/runs.txt"
i=1
while [ "$i" -le "$REPS" ]; do
  for tool in rowan sqlite; do
    rm -rf "$WORK/db.rowan" "$WORK/db.sqlite"
    if [ $tool = rowan ]; then
      t0=$(now)
      "$ROWAN" -bail "$WORK/db.rowan" ".read $WORK/rowan.sql" \
        ".import $IMPORT_OPTS --csv --header --null NA --columns $COLS \
         $WORK/csv/PRSA_Data_*.csv STAGE" \
        > "$WORK/rowan.out"
      t1=$(now)
      size=$(du -sb "$WORK/db.rowan" | cut -f1)
      t2=$(now)
      "$ROWAN" -bail -list "$WORK/db.rowan" ".hints off" "$QUERIES" > "$WORK/rowan.counts"
      t3=$(now)
    else
      t0=$(now)
      printf '.read %s\n%s\n' "$WORK/sqlite.sql" "$SQ_IMPORT" | sqlite3 -bail "$WORK/db.sqlite"
      t1=$(now)
      size=$(du -sb "$WORK/db.sqlite" | cut -f1)
      t2=$(now)
      sqlite3 -bail "$WORK/db.sqlite" "$QUERIES" > "$WORK/sqlite.counts"
      t3=$(now)
    fi
    echo "$tool load $(el "$t0" "$t1") size $size counts $(el "$t2" "$t3")" |
      tee -a "$WORK/runs.txt"
  done
  i=$((i + 1))
done
cat "$WORK/rowan.out"
if ! cmp -s "$WORK/rowan.counts" "$WORK/sqlite.counts"; then
  echo "the counts differ:" >&2
  paste "$WORK/rowan.counts" "$WORK/sqlite.counts" >&2
  exit 1
fi
echo "the 20 counts agree ($(head -1 "$WORK/rowan.counts") ... $(tail -1 "$WORK/rowan.counts"))"

# median and min-max per tool and figure, then the ratios of the medians (rowan / sqlite)
awk '
  function med(a, n,   i, j, t) {
    for (i = 2; i <= n; i++) {
      t = a[i]
      for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]
      a[j + 1] = t
    }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  { n[$1]++; L[$1, n[$1]] = $3; S[$1, n[$1]] = $5; C[$1, n[$1]] = $7 }
  END {
    split("load size counts", fig, " ")
    for (tool in n) for (f = 1; f <= 3; f++) {
      k = n[tool]; lo = 1e18; hi = -1
      for (i = 1; i <= k; i++) {
        v = fig[f] == "load" ? L[tool, i] : fig[f] == "size" ? S[tool, i] : C[tool, i]
        a[i] = v; if (v < lo) lo = v; if (v > hi) hi = v
      }
      m = med(a, k); M[tool, f] = m
      printf "%-6s %-6s median %.3f (min %.3f, max %.3f)\n", tool, fig[f], m, lo, hi
    }
    printf "ratios rowan/sqlite: load time %.2f, size %.2f, 20 counts time %.2f\n",
           M["rowan", 1] / M["sqlite", 1], M["rowan", 2] / M["sqlite", 2],
           M["rowan", 3] / M["sqlite", 3]
  }' "$WORK/runs.txt"
