#!/bin/sh
# bench/hbase/run.sh [REPS]: Rowan against Apache Phoenix 5.2.1 on the same running HBase (by
# hand, not in CI; start HBase first with scripts/hbase-up.sh). Per repetition, both engines
# load (interleaved: odd repetitions Rowan first, even ones Phoenix first); then both engines'
# tables are flushed and major-compacted and the run waits until HBase is done
# (bench/hbase/Compact.java; COMPACT=0: not, the reads then meet HBase's own flushes and
# compactions); then both engines read, in the same order:
#   Rowan:   load: drop and create SENSOR and STATIONS (examples/sensor/schema.sql's SENSOR)
#            in the namespace rbench, `.import` of the archive (bench/hbase/prep.sh's
#            sensor.csv, ROWAN_HBASE_WRITERS writer connections, default 4) and of
#            stations.csv, timed by the import's own summary; reads: bench/hbase/rowan_bench.c
#   Phoenix: load: bench/hbase/PhoenixBench.java makes the same tables (Phoenix's own, default
#            namespace), UPSERT batches with executeBatch + commit every BATCH rows; reads:
#            its query, the same SQL
#   Rowan, one writer: the same import into the namespace rbench1 (ROWAN_HBASE_WRITERS=1),
#            the single-connection figure, in the first repetition only (it is slow), unless
#            SINGLE=0
# Every engine's answers must agree (the CHECK column: rows and a sum of the numeric values);
# then the medians with min-max and the ratios are printed, and all rows go to OUT (CSV:
# engine,rep,figure,value,unit,check).
# Environment: ROWAN_HBASE_DIR (the jars and conf, default /tmp/rowan-hbase), ROWAN_HBASE_THRIFT
# (default 127.0.0.1:9090), ROWAN_ZK (default 127.0.0.1:2181), ROWAN (default
# build/hbase/cli/rowan, built with -DROWAN_HBASE=ON), WORK (default /tmp/rowan-hbase-bench),
# ROWS (load only the first ROWS rows of the archive; default all 420,768), LOOKUPS (300),
# RANGES (100), BATCH (5000), SINGLE (1), COMPACT (1), OUT (bench/results-hbase.csv).
set -eu
REPS=${1:-3}
D=${ROWAN_HBASE_DIR:-/tmp/rowan-hbase}
GW=${ROWAN_HBASE_THRIFT:-127.0.0.1:9090}
ZK=${ROWAN_ZK:-127.0.0.1:2181}
ROWAN=${ROWAN:-build/hbase/cli/rowan}
WORK=${WORK:-/tmp/rowan-hbase-bench}
LOOKUPS=${LOOKUPS:-300}
RANGES=${RANGES:-100}
BATCH=${BATCH:-5000}
SINGLE=${SINGLE:-1}
COMPACT=${COMPACT:-1}
OUT=${OUT:-bench/results-hbase.csv}
[ -x "$ROWAN" ] || { echo "no $ROWAN: build with -DROWAN_HBASE=ON" >&2; exit 1; }
[ -f "$D/lib/.complete" ] || { echo "no jars in $D/lib: run scripts/hbase-up.sh" >&2; exit 1; }
BUILD=$(dirname "$(dirname "$ROWAN")")
bench/hbase/prep.sh "$WORK"
CSV=$WORK/sensor.csv
if [ -n "${ROWS:-}" ]; then
  head -n $((ROWS + 1)) "$WORK/sensor.csv" > "$WORK/sensor-$ROWS.csv"
  CSV=$WORK/sensor-$ROWS.csv
fi
mkdir -p "$WORK/classes"
javac -d "$WORK/classes" -cp "$D/lib/*" bench/hbase/PhoenixBench.java bench/hbase/Compact.java
cc -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -Iinclude -o "$WORK/rowan_bench" \
  bench/hbase/rowan_bench.c -L"$BUILD" -Wl,-rpath,"$(cd "$BUILD" && pwd)" -lrowan -lm
JV="-XX:+IgnoreUnrecognizedVMOptions -Djava.net.preferIPv4Stack=true --add-modules jdk.unsupported
 -Dorg.apache.hbase.thirdparty.io.netty.tryReflectionSetAccessible=true
 --add-opens java.base/java.lang=ALL-UNNAMED --add-opens java.base/java.nio=ALL-UNNAMED
 --add-opens java.base/sun.nio.ch=ALL-UNNAMED --add-opens java.base/java.util=ALL-UNNAMED
 --add-opens java.base/java.util.concurrent=ALL-UNNAMED --add-opens java.base/java.io=ALL-UNNAMED
 --add-opens java.base/jdk.internal.ref=ALL-UNNAMED --add-opens java.base/java.lang.reflect=ALL-UNNAMED
 --add-exports java.base/jdk.internal.misc=ALL-UNNAMED -Duser.timezone=UTC
 -Dlog4j2.configurationFile=$D/conf/log4j2.properties -Drowan.log.file=$D/logs/bench-phoenix.log"
# compact: flush and major-compact both engines' tables (Rowan's in the namespace rbench,
# Phoenix's SENSOR and STATIONS in the default one) and wait until HBase is done
compact() {
  # shellcheck disable=SC2086
  HADOOP_USER_NAME=root java $JV -cp "$WORK/classes:$D/conf:$D/lib/*" Compact "$ZK" \
    'rbench:.*' 'SENSOR' 'STATIONS'
}
phoenix() {
  # shellcheck disable=SC2086
  HADOOP_USER_NAME=root java $JV -cp "$WORK/classes:$D/conf:$D/lib/*" PhoenixBench "$ZK" "$@"
}
SCHEMA=$WORK/schema.sql
{ echo "DROP TABLE IF EXISTS SENSOR;"
  echo "DROP TABLE IF EXISTS STATIONS;"
  sed -n '/^CREATE TABLE SENSOR/,/^);/p' examples/sensor/schema.sql
  echo "CREATE TABLE STATIONS (STATION VARCHAR NOT NULL PRIMARY KEY, LONGITUDE DOUBLE,"
  echo "  LATITUDE DOUBLE, TYPE VARCHAR);"; } > "$SCHEMA"
# rowan_load ENGINE NAMESPACE WRITERS REP: the import, its rate from the summary line
rowan_load() {
  u="hbase://$GW/$2"
  "$ROWAN" -bail "$u" -f "$SCHEMA" > /dev/null
  line=$(ROWAN_HBASE_WRITERS=$3 "$ROWAN" -bail "$u" \
    ".import --csv --header --null NA $CSV SENSOR" ".import --csv --header $WORK/stations.csv STATIONS" |
    head -1)
  rows=$(echo "$line" | sed -n 's/^\([0-9]*\) rows loaded.*/\1/p')
  rate=$(echo "$line" | sed -n 's/.*(\([0-9]*\) rows\/s).*/\1/p')
  [ -n "$rate" ] || { echo "run.sh: no rate in: $line" >&2; exit 1; }
  echo "$1,$4,load_rows_per_s,$rate,rows/s,$rows" >> "$RAW"
}
RAW=$WORK/raw.csv
echo "engine,rep,figure,value,unit,check" > "$RAW"
SEED=20261130
rep=1
while [ "$rep" -le "$REPS" ]; do
  if [ $((rep % 2)) = 1 ]; then order="rowan phoenix"; else order="phoenix rowan"; fi
  for e in $order; do
    echo "run.sh: repetition $rep, $e load" >&2
    if [ "$e" = rowan ]; then
      rowan_load rowan rbench 4 "$rep"
    else
      phoenix load "$CSV" "$WORK/stations.csv" "$BATCH" 2>>"$WORK/phoenix.err" |
        sed "s/^/phoenix,$rep,/" >> "$RAW"
    fi
  done
  if [ "$COMPACT" = 1 ]; then
    echo "run.sh: repetition $rep, flush and major compaction" >&2
    compact >&2
  fi
  for e in $order; do
    echo "run.sh: repetition $rep, $e reads" >&2
    if [ "$e" = rowan ]; then
      "$WORK/rowan_bench" "hbase://$GW/rbench" "$LOOKUPS" "$RANGES" "$SEED" |
        sed "s/^/rowan,$rep,/" >> "$RAW"
    else
      phoenix query "$LOOKUPS" "$RANGES" "$SEED" 2>>"$WORK/phoenix.err" |
        sed "s/^/phoenix,$rep,/" >> "$RAW"
    fi
  done
  if [ "$SINGLE" = 1 ] && [ "$rep" = 1 ]; then
    echo "run.sh: repetition $rep, rowan with one writer" >&2
    rowan_load rowan_1writer rbench1 1 "$rep"
  fi
  SEED=$((SEED + 1))
  rep=$((rep + 1))
done
cp "$RAW" "$OUT"
python3 - "$RAW" <<'EOF'
import csv, sys, statistics as st
rows = list(csv.DictReader(open(sys.argv[1])))
figs = []
for r in rows:
    if r["figure"] not in figs: figs.append(r["figure"])
bad = 0
for r in rows:  # every engine's answer equals Rowan's in the same repetition
    if r["engine"] == "phoenix" and r["figure"] != "load_rows_per_s":
        mine = [x for x in rows if x["engine"] == "rowan" and x["rep"] == r["rep"] and x["figure"] == r["figure"]]
        if not mine or mine[0]["check"] != r["check"]:
            bad += 1
            print("DIFFERENT ANSWERS: %s rep %s: rowan %s, phoenix %s" % (r["figure"], r["rep"], mine[0]["check"] if mine else "-", r["check"]))
def agg(e, f):
    v = [float(x["value"]) for x in rows if x["engine"] == e and x["figure"] == f]
    return (st.median(v), min(v), max(v), len(v)) if v else None
print("%-18s %-30s %-30s %s" % ("figure", "rowan median [min-max]", "phoenix median [min-max]", "rowan/phoenix"))
for f in figs:
    a, b = agg("rowan", f), agg("phoenix", f)
    unit = [x["unit"] for x in rows if x["figure"] == f][0]
    fa = "%.1f [%.1f-%.1f] %s" % (a[0], a[1], a[2], unit) if a else "-"
    fb = "%.1f [%.1f-%.1f] %s" % (b[0], b[1], b[2], unit) if b else "-"
    print("%-18s %-30s %-30s %s" % (f, fa, fb, "%.2f" % (a[0] / b[0]) if a and b else "-"))
c = agg("rowan_1writer", "load_rows_per_s")
if c: print("rowan, 1 writer: load %.0f rows/s [%.0f-%.0f]" % (c[0], c[1], c[2]))
sys.exit(1 if bad else 0)
EOF
