#!/bin/sh
# tests/hbase/region-admin.sh OUTDIR: compile tests/hbase/java/RegionAdmin.java into OUTDIR
# (once; again when the source is newer) against the jars of the running HBase, then run it:
# commands on stdin, answers on stdout (the Java file lists them). The fault tests start it
# to split and move regions during a scan. Environment: ROWAN_HBASE_DIR (default
# /tmp/rowan-hbase: its lib/ and conf/), ROWAN_ZK (ZooKeeper, default 127.0.0.1:2181). The
# JVM flags are scripts/phoenix-sql.sh's. Its log goes to $ROWAN_HBASE_DIR/logs/region-admin.log.
set -eu
[ $# -eq 1 ] || { echo "usage: region-admin.sh OUTDIR" >&2; exit 2; }
OUT=$1
DIR=${ROWAN_HBASE_DIR:-/tmp/rowan-hbase}
ZK=${ROWAN_ZK:-127.0.0.1:2181}
SRC=$(cd "$(dirname "$0")" && pwd)/java/RegionAdmin.java
[ -f "$DIR/lib/.complete" ] || { echo "region-admin: no jars in $DIR/lib: run scripts/hbase-up.sh" >&2; exit 1; }
mkdir -p "$OUT"
if [ ! -f "$OUT/RegionAdmin.class" ] || [ "$SRC" -nt "$OUT/RegionAdmin.class" ]; then
  javac -nowarn -d "$OUT" -cp "$DIR/lib/*" "$SRC"
fi
JV="-XX:+IgnoreUnrecognizedVMOptions -Djava.net.preferIPv4Stack=true --add-modules jdk.unsupported
 -Dorg.apache.hbase.thirdparty.io.netty.tryReflectionSetAccessible=true
 --add-opens java.base/java.lang=ALL-UNNAMED --add-opens java.base/java.nio=ALL-UNNAMED
 --add-opens java.base/sun.nio.ch=ALL-UNNAMED --add-opens java.base/java.util=ALL-UNNAMED
 --add-opens java.base/java.util.concurrent=ALL-UNNAMED --add-opens java.base/java.io=ALL-UNNAMED
 --add-opens java.base/jdk.internal.ref=ALL-UNNAMED --add-opens java.base/java.lang.reflect=ALL-UNNAMED
 --add-exports java.base/jdk.internal.misc=ALL-UNNAMED
 -Dlog4j2.configurationFile=$DIR/conf/log4j2.properties -Drowan.log.file=$DIR/logs/region-admin.log"
# shellcheck disable=SC2086
HADOOP_USER_NAME=root exec java $JV -Xmx256m -cp "$OUT:$DIR/lib/*" RegionAdmin "$ZK"
