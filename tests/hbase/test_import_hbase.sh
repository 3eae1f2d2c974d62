#!/bin/sh
# tests/hbase/test_import_hbase.sh ROWAN HBASE_TEST_API SOURCE_DIR: the shell's `.import` on a
# database on HBase (CTest label `hbase`; the gateway from ROWAN_HBASE_THRIFT, default
# 127.0.0.1:9090). A slice of the sensor archive (data/beijing: 2 stations x 2,000 hours,
# rows with 'NA' values among them, which HBase writes as mutateRow calls) goes into a table
# with an index on TEMP, in transactions of 1,000 rows: every record is there (the count, the sum and the NULL count of TEMP,
# and rows picked from the file compared field by field), the index agrees with the table
# (.check); a bad value is rejected with the file, the line and the column named and the
# other rows loaded; a gateway lost in the middle of an import (a TCP relay in between,
# python3, cut after about 1 MB) ends it with an error saying how many rows were committed,
# and the table holds at least those. The namespace is dropped at the end.
set -u
ROWAN=$1
API=$2
SRC=$3
GW=${ROWAN_HBASE_THRIFT:-127.0.0.1:9090}
URI="hbase://$GW/timp_$$"
T=$(mktemp -d)
fail() {
  echo "test_import_hbase: $*" >&2
  "$API" --drop "$URI" >/dev/null 2>&1
  rm -rf "$T"
  exit 1
}
COLS=ROW_NO,YEAR,MONTH,DAY,HOUR,PM25,PM10,SO2,NO2,CO,O3,TEMP,PRES,DEWP,RAIN,WD,WSPM,STATION
for s in Aotizhongxin Dongsi; do
  gunzip -c "$SRC"/data/beijing/PRSA_Data_${s}_20130301-20170228.csv.gz | head -2001 |
    tr -d '\r' > "$T/$s.csv" || fail "cannot read the archive"
done
"$ROWAN" "$URI" "CREATE TABLE A (STATION VARCHAR NOT NULL, YEAR INTEGER NOT NULL,
    MONTH INTEGER NOT NULL, DAY INTEGER NOT NULL, HOUR INTEGER NOT NULL, ROW_NO INTEGER,
    PM25 DOUBLE, PM10 DOUBLE, SO2 DOUBLE, NO2 DOUBLE, CO DOUBLE, O3 DOUBLE, TEMP DOUBLE,
    PRES DOUBLE, DEWP DOUBLE, RAIN DOUBLE, WD VARCHAR(3), WSPM DOUBLE,
    CONSTRAINT PK PRIMARY KEY (STATION, YEAR, MONTH, DAY, HOUR))" \
  "CREATE INDEX A_TEMP ON A (TEMP)" >/dev/null || fail "cannot create the table"

# 1. the slice: counts and sums against the file, rows picked from it, the index
out=$("$ROWAN" "$URI" ".import --csv --header --null NA --batch 1000 \
  --columns $COLS $T/Aotizhongxin.csv $T/Dongsi.csv A" 2>&1) || fail "import failed: $out"
case $out in *"4000 rows loaded, 0 rejected from 2 files"*) ;; *) fail "summary: $out" ;; esac
want=$(awk -F, 'FNR > 1 { n++; if ($12 != "NA") { s += $12; k++ } } END {
  printf "%d,%.1f,%d", n, s, n - k }' "$T/Aotizhongxin.csv" "$T/Dongsi.csv")
got=$("$ROWAN" -csv "$URI" "SELECT COUNT(*), ROUND(SUM(TEMP), 1), COUNT(*) - COUNT(TEMP) FROM A" |
  tail -1 | tr -d '\r"')
[ "$got" = "$want" ] || fail "count, sum and NULLs of TEMP: got $got, want $want"
for line in 2 3 500 1234 2001; do
  for s in Aotizhongxin Dongsi; do
    rec=$(sed -n "${line}p" "$T/$s.csv" | tr -d '"')
    key=$(echo "$rec" | awk -F, '{ printf "STATION = '\''%s'\'' AND YEAR = %d AND MONTH = %d AND DAY = %d AND HOUR = %d", $18, $2, $3, $4, $5 }')
    want=$(echo "$rec" | awk -F, '{ for (i = 6; i <= 17; i++) { v = $i; if (v == "NA") v = "";
      else if (i != 16) v = sprintf("%.4f", v); printf "%s%s", v, i < 17 ? "|" : "" } }')
    got=$("$ROWAN" -csv "$URI" "SELECT PM25, PM10, SO2, NO2, CO, O3, TEMP, PRES, DEWP, RAIN, WD,
        WSPM FROM A WHERE $key" | tail -1 | tr -d '\r"' | awk -F, '{ for (i = 1; i <= 12; i++) {
        v = $i; if (v != "" && i != 11) v = sprintf("%.4f", v); printf "%s%s", v, i < 12 ? "|" : "" } }')
    [ "$got" = "$want" ] || fail "$s line $line: got $got, want $want"
  done
done
chk=$("$ROWAN" -csv "$URI" ".check A_TEMP A" | tr -d '\r"') || fail ".check failed: $chk"
case $chk in *"INDEX ROWS,4000"*"MISSING,0"*"EXTRA,0"*"MISMATCHED,0"*) ;;
  *) fail ".check: $chk" ;; esac

# 2. a bad value: rejected, named by file, line and column; the other rows loaded
{ head -1 "$T/Dongsi.csv"; sed -n 2,3p "$T/Dongsi.csv" | sed 's/,2013,/,2020,/'
  sed -n 4p "$T/Dongsi.csv" | awk -F, -v OFS=, '{ $2 = 2020; $12 = "warm"; print }'
  sed -n 5,6p "$T/Dongsi.csv" | sed 's/,2013,/,2020,/'; } > "$T/bad.csv"
out=$("$ROWAN" "$URI" ".import --csv --header --null NA --columns $COLS $T/bad.csv A" 2>&1)
case $out in *"4 rows loaded, 1 rejected"*"bad.csv:4: column TEMP"*warm*) ;;
  *) fail "bad value: $out" ;; esac
got=$("$ROWAN" -csv "$URI" "SELECT COUNT(*) FROM A WHERE STATION = 'Dongsi' AND YEAR = 2020" |
  tail -1 | tr -d '\r"')
[ "$got" = 4 ] || fail "rows around the bad one: $got, want 4"

# 3. the gateway lost in the middle of an import: the error says what was committed
if command -v python3 >/dev/null; then
  gw_host=${GW%:*}
  gw_port=${GW##*:}
  python3 - "$gw_host" "$gw_port" "$T/port" <<'EOF' &
import socket, sys, threading, os
host, port, portfile = sys.argv[1], int(sys.argv[2]), sys.argv[3]
ls = socket.socket(); ls.bind(("127.0.0.1", 0)); ls.listen(8)
open(portfile + ".tmp", "w").write(str(ls.getsockname()[1])); os.rename(portfile + ".tmp", portfile)
sent = [0]; cut = threading.Event(); socks = []
def pump(a, b, count):
    try:
        while not cut.is_set():
            d = a.recv(65536)
            if not d: break
            if count:
                sent[0] += len(d)
                if sent[0] > 1000000: cut.set(); break
            b.sendall(d)
    except OSError: pass
    cut.set()
    for s in socks:
        try: s.shutdown(socket.SHUT_RDWR); s.close()
        except OSError: pass
    try: ls.close()
    except OSError: pass
ls.settimeout(60)
while not cut.is_set():
    try: c, _ = ls.accept()
    except OSError: break
    u = socket.create_connection((host, port)); socks.extend([c, u])
    threading.Thread(target=pump, args=(c, u, True), daemon=True).start()
    threading.Thread(target=pump, args=(u, c, False), daemon=True).start()
EOF
  relay=$!
  i=0
  while [ ! -s "$T/port" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
  [ -s "$T/port" ] || fail "the relay did not start"
  "$ROWAN" "$URI" "CREATE TABLE B (STATION VARCHAR NOT NULL, YEAR INTEGER NOT NULL,
    MONTH INTEGER NOT NULL, DAY INTEGER NOT NULL, HOUR INTEGER NOT NULL, ROW_NO INTEGER,
    PM25 DOUBLE, PM10 DOUBLE, SO2 DOUBLE, NO2 DOUBLE, CO DOUBLE, O3 DOUBLE, TEMP DOUBLE,
    PRES DOUBLE, DEWP DOUBLE, RAIN DOUBLE, WD VARCHAR(3), WSPM DOUBLE,
    CONSTRAINT PK PRIMARY KEY (STATION, YEAR, MONTH, DAY, HOUR))" >/dev/null ||
    fail "cannot create table B"
  RURI="hbase://127.0.0.1:$(cat "$T/port")/timp_$$"
  out=$(ROWAN_HBASE_TRIES=1 "$ROWAN" "$RURI" ".import --csv \
    --header --null NA --batch 500 --columns $COLS $T/Aotizhongxin.csv $T/Dongsi.csv B" 2>&1) &&
    fail "the import went on without the gateway: $out"
  kill "$relay" 2>/dev/null
  wait "$relay" 2>/dev/null
  n=$(echo "$out" | sed -n 's/.*commit failed: .*; \([0-9]*\) rows committed before it.*/\1/p')
  [ -n "$n" ] || fail "no count of committed rows in: $out"
  case $out in *"127.0.0.1:$(cat "$T/port")"*) ;; *) fail "the gateway is not named: $out" ;; esac
  got=$("$ROWAN" -csv "$URI" "SELECT COUNT(*) FROM B" | tail -1 | tr -d '\r"')
  # every committed row is there; of the failed batch (500 rows) some may be: HBase's rows
  # are atomic one by one, not as a batch
  [ "$n" -gt 0 ] && [ "$got" -ge "$n" ] && [ "$got" -le $((n + 500)) ] ||
    fail "reported $n rows committed, the table holds $got"
fi
"$API" --drop "$URI" || fail "dropping the namespace failed"
rm -rf "$T"
echo "test_import_hbase: ok"
