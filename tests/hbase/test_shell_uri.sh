#!/bin/sh
# tests/hbase/test_shell_uri.sh ROWAN HBASE_TEST_API: the shell on a database on HBase,
# `rowan hbase://HOST:PORT/NAMESPACE` (the gateway from ROWAN_HBASE_THRIFT, default
# 127.0.0.1:9090; CTest label `hbase`): a table written by one shell process is read by the
# next (the catalog lives in HBase), and an unreachable gateway or a bad URI is an error
# naming the address or the wrong part. The namespace is dropped at the end
# (HBASE_TEST_API --drop URI).
set -u
ROWAN=$1
API=$2
GW=${ROWAN_HBASE_THRIFT:-127.0.0.1:9090}
URI="hbase://$GW/tsh_$$"
fail() { echo "test_shell_uri: $*" >&2; "$API" --drop "$URI" >/dev/null 2>&1; exit 1; }
"$ROWAN" "$URI" "CREATE TABLE t (k INTEGER PRIMARY KEY, v VARCHAR)" \
  "UPSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c')" "DELETE FROM t WHERE k = 2" ||
  fail "writing through $URI failed"
got=$("$ROWAN" -csv "$URI" "SELECT k, v FROM t ORDER BY k DESC" | tr -d '\r') || fail "reading failed"
want=$(printf '3,c\n1,a')
[ "$got" = "$want" ] || fail "read back \"$got\", want \"$want\""
err=$("$ROWAN" "hbase://127.0.0.1:1/x" "SELECT 1" 2>&1) && fail "a closed port opened"
case $err in *"127.0.0.1:1"*) ;; *) fail "closed port: \"$err\" does not name the address" ;; esac
err=$("$ROWAN" "hbase://$GW/bad-name" "SELECT 1" 2>&1) && fail "a bad namespace opened"
case $err in *namespace*) ;; *) fail "bad namespace: \"$err\"" ;; esac
"$API" --drop "$URI" || fail "dropping the namespace failed"
echo "test_shell_uri: ok"
