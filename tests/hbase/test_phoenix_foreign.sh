#!/bin/sh
# tests/hbase/test_phoenix_foreign.sh SOURCE_DIR ROWAN HBASE_TEST_API: a table that Apache
# Phoenix created on the HBase Rowan uses is refused by Rowan with a message naming it and
# saying so, and nothing is written (CTest label `hbase`; the gateway from ROWAN_HBASE_THRIFT,
# ZooKeeper from ROWAN_ZK, the jars from ROWAN_HBASE_DIR). Phoenix (scripts/phoenix-sql.sh)
# creates a table without a schema (HBase `default:NAME`) holding one row and one in a schema
# (`default:SCHEMA.NAME`); the rowan shell then, on a namespace of its own and on the bare URI
# (namespace `rowan`): a SELECT of each is an error naming the table, the HBase table and
# Apache Phoenix; a CREATE TABLE of the first name makes Rowan's own table in Rowan's
# namespace (the names do not collide: Rowan's tables are NS:r_...), which Rowan then reads
# (empty, then its own row) while the bare URI still refuses the name; a table Rowan created
# and an unknown name keep their usual answers. Last, Phoenix still reads its one row (not
# Rowan's), and drops both tables.
set -u
SRC=$1
ROWAN=$2
API=$3
GW=${ROWAN_HBASE_THRIFT:-127.0.0.1:9090}
URI="hbase://$GW/tpf_$$"
T="PHXF_$$"
S="PHXFS_$$"
sql=$(mktemp)
out=$(mktemp)
cleanup() {
  printf 'DROP TABLE IF EXISTS %s;\nDROP TABLE IF EXISTS %s.T2;\n' "$T" "$S" >"$sql"
  "$SRC/scripts/phoenix-sql.sh" "$sql" >/dev/null 2>&1
  "$API" --drop "$URI" >/dev/null 2>&1
  rm -f "$sql" "$out"
}
fail() { echo "test_phoenix_foreign: $*" >&2; cleanup; exit 1; }
printf "CREATE TABLE %s (K VARCHAR NOT NULL PRIMARY KEY, V BIGINT);\nUPSERT INTO %s VALUES ('a', 7);\nCREATE TABLE %s.T2 (K VARCHAR NOT NULL PRIMARY KEY, V BIGINT);\n" \
  "$T" "$T" "$S" >"$sql"
"$SRC/scripts/phoenix-sql.sh" "$sql" >"$out" 2>&1 || fail "Phoenix could not create the tables: $(cat "$out")"

# expect_refusal URI SQL WHAT: the statement fails, naming WHAT and Apache Phoenix
expect_refusal() {
  err=$("$ROWAN" "$1" "$2" 2>&1) && fail "$2 on $1 succeeded"
  case $err in *"$3"*"created by Apache Phoenix"*"does not read Phoenix"*) ;;
    *) fail "$2 on $1: \"$err\" does not say that $3 is Phoenix's" ;; esac
}
for u in "$URI" "hbase://$GW"; do
  expect_refusal "$u" "SELECT * FROM $T" "default:$T"
  expect_refusal "$u" "SELECT * FROM \"$S.T2\"" "default:$S.T2"
done
# Rowan's own table of the same name, in Rowan's namespace: Rowan reads it, not Phoenix's
"$ROWAN" "$URI" "CREATE TABLE $T (K INTEGER PRIMARY KEY, W VARCHAR)" ||
  fail "CREATE TABLE $T in Rowan's namespace failed"
got=$("$ROWAN" -csv "$URI" "SELECT COUNT(*) FROM $T" | tr -d '\r') || fail "reading Rowan's $T failed"
[ "$got" = "0" ] || fail "Rowan's new $T holds \"$got\" rows, want 0 (Phoenix's row is not Rowan's)"
"$ROWAN" "$URI" "UPSERT INTO $T VALUES (5, 'rowan')" || fail "UPSERT into Rowan's $T failed"
got=$("$ROWAN" -csv "$URI" "SELECT W FROM $T WHERE K = 5" | tr -d '\r') || fail "reading Rowan's $T failed"
[ "$got" = "rowan" ] || fail "Rowan's $T read back \"$got\", want rowan"
# the bare URI's namespace has no such table of Rowan's: still refused there
expect_refusal "hbase://$GW" "SELECT W FROM $T" "default:$T"
# a table of Rowan's and an unknown name are as before
"$ROWAN" "$URI" "CREATE TABLE OWN (K INTEGER PRIMARY KEY)" "UPSERT INTO OWN VALUES (1)" ||
  fail "Rowan's own table failed"
got=$("$ROWAN" -csv "$URI" "SELECT COUNT(*) FROM OWN" | tr -d '\r') || fail "reading OWN failed"
[ "$got" = "1" ] || fail "OWN read back \"$got\", want 1"
err=$("$ROWAN" "$URI" "SELECT * FROM NO_SUCH_$$" 2>&1) && fail "an unknown table was read"
case $err in *"unknown table \"NO_SUCH_$$\""*) ;; *) fail "unknown table: \"$err\"" ;; esac

# Phoenix's table is as Phoenix left it
printf 'SELECT K, V FROM %s;\n' "$T" >"$sql"
"$SRC/scripts/phoenix-sql.sh" "$sql" >"$out" 2>&1 || fail "Phoenix could not read $T: $(cat "$out")"
[ "$(tr -d '\r' <"$out")" = "$(printf "'K','V'\n'a','7'")" ] || fail "Phoenix reads $T as: $(cat "$out")"
cleanup
echo "test_phoenix_foreign: ok"
