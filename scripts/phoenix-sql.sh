#!/bin/sh
# scripts/phoenix-sql.sh FILE...: run SQL files through Apache Phoenix 5.2.1 (sqlline 1.9.0,
# one JVM for all the files, statements in order) against the HBase that
# scripts/hbase-up.sh started, printing each query's rows as CSV (values in single quotes,
# a header line first) on stdout; Phoenix's errors go to stderr and make the exit status
# non-zero. The first connection to a fresh HBase creates Phoenix's SYSTEM tables (about
# 20-45 s); later ones start in 10-15 s. Phoenix is the differential peer of Rowan on HBase
# (issue 18). Environment: ROWAN_HBASE_DIR (default /tmp/rowan-hbase), ROWAN_ZK (the
# ZooKeeper quorum, default 127.0.0.1:2181). Not here: starting HBase, comparing answers.
set -eu
DIR=${ROWAN_HBASE_DIR:-/tmp/rowan-hbase}
ZK=${ROWAN_ZK:-127.0.0.1:2181}
[ $# -ge 1 ] || { echo "usage: scripts/phoenix-sql.sh FILE..." >&2; exit 2; }
[ -f "$DIR/lib/.complete" ] || { echo "phoenix-sql: no jars in $DIR/lib: run scripts/hbase-up.sh" >&2; exit 1; }
: >"$DIR/logs/sqlline.log"
JV="-XX:+IgnoreUnrecognizedVMOptions -Djava.net.preferIPv4Stack=true --add-modules jdk.unsupported
 -Dorg.apache.hbase.thirdparty.io.netty.tryReflectionSetAccessible=true
 --add-opens java.base/java.lang=ALL-UNNAMED --add-opens java.base/java.nio=ALL-UNNAMED
 --add-opens java.base/sun.nio.ch=ALL-UNNAMED --add-opens java.base/java.util=ALL-UNNAMED
 --add-opens java.base/java.util.concurrent=ALL-UNNAMED --add-opens java.base/java.io=ALL-UNNAMED
 --add-opens java.base/jdk.internal.ref=ALL-UNNAMED --add-opens java.base/java.lang.reflect=ALL-UNNAMED
 --add-exports java.base/jdk.internal.misc=ALL-UNNAMED
 -Dlog4j2.configurationFile=$DIR/conf/log4j2.properties -Drowan.log.file=$DIR/logs/sqlline.log"
all=$(mktemp)
errs=$(mktemp)
trap 'rm -f "$all" "$errs"' EXIT
cat "$@" >"$all"
# sqlline's jar first: Hadoop's older jline breaks it
# shellcheck disable=SC2086
HADOOP_USER_NAME=root java $JV \
  -cp "$DIR/lib/sqlline-1.9.0-jar-with-dependencies.jar:$DIR/conf:$DIR/lib/*" sqlline.SqlLine \
  -d org.apache.phoenix.jdbc.PhoenixDriver -u "jdbc:phoenix:$ZK" -n none -p none \
  --isolation=TRANSACTION_READ_COMMITTED --outputformat=csv --silent=true --showWarnings=false \
  --run="$all" 2>"$errs" && rc=0 || rc=$?
# jline's warning about a dumb terminal is noise here
grep -v -e "Unable to create a system terminal" -e "org.jline.utils.Log" "$errs" >&2 || true
exit "$rc"
