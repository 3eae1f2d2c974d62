#!/bin/sh
# cli/example_test.sh PROGRAM: run an embedding example (examples/embed.c) on a fresh
# database in a temporary directory; fail unless it exits 0 and prints the latest readings
# and an EXPLAIN whose scan is a RANGE SCAN over SENSOR. Used by CTest (tests/cli).
prog="$1"
d=$(mktemp -d /tmp/rowan-example-XXXXXX) || exit 1
trap 'rm -rf "$d"' EXIT
out=$("$prog" "$d/db") || { echo "$out"; echo "example failed: exit $?"; exit 1; }
echo "$out"
echo "$out" | grep -q "latest readings of Dongsi" || { echo "no readings printed"; exit 1; }
echo "$out" | grep -q "^RANGE SCAN OVER SENSOR" || { echo "no RANGE SCAN in the EXPLAIN"; exit 1; }
# A second run on the same database must work too (CREATE TABLE IF NOT EXISTS, upserts).
"$prog" "$d/db" > "$d/out2" || { echo "second run failed"; exit 1; }
exit 0
