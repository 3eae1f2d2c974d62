#!/bin/sh
# tests/hbase/test_phoenix.sh SOURCE_DIR: Apache Phoenix, the differential peer of Rowan on
# HBase, runs on the HBase scripts/hbase-up.sh started (its coprocessors load from the jars on
# the region servers' class path; the WAL codec Phoenix's indexes need is set): through
# scripts/phoenix-sql.sh, a table split in two regions, ten UPSERTs, a global index, and
# queries whose answers follow from the rows written (a point lookup, a range, an aggregate,
# a query the index serves, its EXPLAIN naming the index); a missing table is an error with a non-zero exit. CTest label
# `hbase` (scripts/test-hbase.sh).
set -eu
SRC=$1
T="PH_$$_$(date +%s)"
sql=$(mktemp)
out=$(mktemp)
trap 'rm -f "$sql" "$out"' EXIT
{
  echo "CREATE TABLE $T (K VARCHAR NOT NULL PRIMARY KEY, V BIGINT, W VARCHAR) SPLIT ON ('k5');"
  i=1
  while [ $i -le 10 ]; do
    echo "UPSERT INTO $T VALUES ('k$i', $((i * i)), 'w$((i % 3))');"
    i=$((i + 1))
  done
  echo "CREATE INDEX ${T}_W ON $T (W) INCLUDE (V);"
  echo "SELECT V FROM $T WHERE K = 'k7';"
  echo "SELECT K FROM $T WHERE K >= 'k3' AND K < 'k6' ORDER BY K;"
  echo "SELECT COUNT(*) AS N, SUM(V) AS S, MIN(V) AS LO, MAX(V) AS HI FROM $T;"
  echo "SELECT SUM(V) AS S FROM $T WHERE W = 'w1';"
  echo "EXPLAIN SELECT SUM(V) AS S FROM $T WHERE W = 'w1';"
  echo "DROP TABLE $T;"
} >"$sql"
"$SRC/scripts/phoenix-sql.sh" "$sql" >"$out"
# k7 -> 49; keys k3, k4, k5 (string order: k10 sorts after k1, before k2); ten rows, squares
# 1..100 sum to 385; W = 'w1' for i = 1, 4, 7, 10: 1 + 16 + 49 + 100 = 166
expected="'V'
'49'
'K'
'k3'
'k4'
'k5'
'N','S','LO','HI'
'10','385','1','100'
'S'
'166'"
# the answers, then the plan: the last query reads the index
if [ "$(head -n 10 "$out")" != "$expected" ] || ! grep -q "OVER ${T}_W" "$out"; then
  echo "test_phoenix: unexpected answers:" >&2
  cat "$out" >&2
  exit 1
fi
printf 'SELECT * FROM %s_NOPE;\n' "$T" >"$sql"
if "$SRC/scripts/phoenix-sql.sh" "$sql" >"$out" 2>&1; then
  echo "test_phoenix: a query of a missing table succeeded" >&2
  exit 1
fi
grep -q "Table undefined" "$out" || { echo "test_phoenix: no 'Table undefined' error:" >&2; cat "$out" >&2; exit 1; }
echo "test_phoenix: Phoenix answers as expected"
