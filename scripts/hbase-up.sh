#!/bin/sh
# scripts/hbase-up.sh: fetch the pinned HBase, Thrift2 and Phoenix jars (hbase/pom.xml) and
# start a standalone HBase (master, region servers and ZooKeeper in one JVM, Phoenix's jars on
# its class path so its coprocessors load) and HBase's Thrift2 gateway, all on 127.0.0.1;
# wait until both answer, then return. scripts/hbase-down.sh stops them. Everything lives
# under $ROWAN_HBASE_DIR (default /tmp/rowan-hbase): lib/ (the jars), conf/, data/, logs/,
# *.pid. Settings, JVM flags and timings follow ../shared/hbase/NOTES.md.
# Environment: ROWAN_HBASE_DIR; ROWAN_HBASE_RS (local region servers, default 2);
# ROWAN_HBASE_WAIT (seconds to wait for each service, default 300); ROWAN_HBASE_ZK_PORT
# (ZooKeeper, default 2181), ROWAN_HBASE_THRIFT_PORT (Thrift2, default 9090; its info port is
# that plus 5): with another folder and other ports a second HBase runs beside the first.
# The master and region servers take free ports (more than one region server cannot share
# fixed ones). It refuses to start when the ZooKeeper or Thrift2 port is taken. `hbase-up.sh --gateway` starts the Thrift2 gateway alone, beside a
# running HBase (the fault tests restart it so). Not here: Rowan's tests (tests/hbase/), the
# C client.
set -eu
GATEWAY_ONLY=0
if [ "${1:-}" = "--gateway" ]; then GATEWAY_ONLY=1; fi
DIR=${ROWAN_HBASE_DIR:-/tmp/rowan-hbase}
RS=${ROWAN_HBASE_RS:-2}
WAIT=${ROWAN_HBASE_WAIT:-300}
ZK_PORT=${ROWAN_HBASE_ZK_PORT:-2181}
TH_PORT=${ROWAN_HBASE_THRIFT_PORT:-9090}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$DIR/lib" "$DIR/conf" "$DIR/data" "$DIR/logs"

# whether something listens on 127.0.0.1:PORT (/dev/tcp is bash's; this script is sh)
port_busy() { bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null; }

running=0
if [ -f "$DIR/master.pid" ] && kill -0 "$(cat "$DIR/master.pid")" 2>/dev/null; then running=1; fi
if [ "$GATEWAY_ONLY" = 0 ] && [ "$running" = 1 ]; then
  echo "hbase-up: HBase already running (pid $(cat "$DIR/master.pid"), $DIR)" >&2
  exit 1
fi
if [ "$GATEWAY_ONLY" = 1 ] && [ "$running" = 0 ]; then
  echo "hbase-up: --gateway needs a running HBase under $DIR" >&2
  exit 1
fi
ports="$ZK_PORT $TH_PORT"
if [ "$GATEWAY_ONLY" = 1 ]; then ports=$TH_PORT; fi
for p in $ports; do
  if port_busy "$p"; then
    echo "hbase-up: port $p on 127.0.0.1 is in use; stop what holds it (scripts/hbase-down.sh?)" >&2
    exit 1
  fi
done

# the jars, once (a warm Maven repository takes seconds, a cold one about two minutes)
if [ ! -f "$DIR/lib/.complete" ]; then
  echo "hbase-up: fetching jars into $DIR/lib (hbase/pom.xml)"
  rm -f "$DIR/lib/"*.jar
  mvn -q -B -f "$ROOT/hbase/pom.xml" dependency:copy-dependencies -Drowan.hbase.lib="$DIR/lib"
  # Hadoop's second slf4j binding: log4j2's is the one wanted
  rm -f "$DIR/lib/"reload4j-*.jar "$DIR/lib/"slf4j-reload4j-*.jar
  touch "$DIR/lib/.complete"
fi

cat >"$DIR/conf/hbase-site.xml" <<XML
<?xml version="1.0"?>
<configuration>
  <property><name>hbase.cluster.distributed</name><value>false</value></property>
  <property><name>hbase.rootdir</name><value>file://$DIR/data/hbase</value></property>
  <property><name>hbase.tmp.dir</name><value>$DIR/data/tmp</value></property>
  <property><name>hbase.zookeeper.property.dataDir</name><value>$DIR/data/zookeeper</value></property>
  <property><name>hbase.zookeeper.quorum</name><value>127.0.0.1</value></property>
  <property><name>hbase.zookeeper.property.clientPort</name><value>$ZK_PORT</value></property>
  <property><name>hbase.unsafe.stream.capability.enforce</name><value>false</value></property>
  <property><name>hbase.master.ipc.address</name><value>127.0.0.1</value></property>
  <property><name>hbase.regionserver.ipc.address</name><value>127.0.0.1</value></property>
  <property><name>hbase.master.hostname</name><value>localhost</value></property>
  <property><name>hbase.unsafe.regionserver.hostname</name><value>localhost</value></property>
  <property><name>hbase.master.info.bindAddress</name><value>127.0.0.1</value></property>
  <property><name>hbase.regionserver.info.bindAddress</name><value>127.0.0.1</value></property>
  <property><name>hbase.thrift.info.bindAddress</name><value>127.0.0.1</value></property>
  <property><name>hbase.localcluster.assign.random.ports</name><value>true</value></property>
  <property><name>hbase.regionserver.wal.codec</name><value>org.apache.hadoop.hbase.regionserver.wal.IndexedWALEditCodec</value></property>
</configuration>
XML
cat >"$DIR/conf/log4j2.properties" <<'LOG'
status = warn
appender.file.type = File
appender.file.name = file
appender.file.fileName = ${sys:rowan.log.file}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = %d{ISO8601} %-5p [%t] %c{2}: %m%n
rootLogger.level = info
rootLogger.appenderRef.file.ref = file
logger.zk.name = org.apache.zookeeper
logger.zk.level = warn
logger.hadoop.name = org.apache.hadoop.hbase.shaded.org.apache.zookeeper
logger.hadoop.level = warn
LOG

JVM_FLAGS="-XX:+IgnoreUnrecognizedVMOptions -Djava.net.preferIPv4Stack=true \
 -Dorg.apache.hbase.thirdparty.io.netty.tryReflectionSetAccessible=true \
 --add-modules jdk.unsupported \
 --add-opens java.base/java.io=ALL-UNNAMED --add-opens java.base/java.nio=ALL-UNNAMED \
 --add-opens java.base/sun.nio.ch=ALL-UNNAMED --add-opens java.base/java.lang=ALL-UNNAMED \
 --add-opens java.base/jdk.internal.ref=ALL-UNNAMED --add-opens java.base/java.lang.reflect=ALL-UNNAMED \
 --add-opens java.base/java.util=ALL-UNNAMED --add-opens java.base/java.util.concurrent=ALL-UNNAMED \
 --add-exports java.base/jdk.internal.misc=ALL-UNNAMED \
 --add-exports java.security.jgss/sun.security.krb5=ALL-UNNAMED \
 --add-exports java.base/sun.net.dns=ALL-UNNAMED --add-exports java.base/sun.net.util=ALL-UNNAMED \
 -Dlog4j2.configurationFile=$DIR/conf/log4j2.properties"
CP="$DIR/conf:$DIR/lib/*"
export HADOOP_USER_NAME=root

wait_for() { # wait_for WHAT SECONDS COMMAND...: poll once a second
  what=$1; secs=$2; shift 2
  i=0
  while ! "$@"; do
    i=$((i + 1))
    if [ "$i" -ge "$secs" ]; then
      echo "hbase-up: $what not ready after $secs s; see $DIR/logs" >&2
      return 1
    fi
    sleep 1
  done
}

if [ "$GATEWAY_ONLY" = 0 ]; then
: >"$DIR/logs/master.log"
# shellcheck disable=SC2086
nohup java $JVM_FLAGS -Xms1g -Xmx3g -Drowan.log.file="$DIR/logs/master.log" -cp "$CP" \
  org.apache.hadoop.hbase.master.HMaster --localRegionServers="$RS" start \
  >"$DIR/logs/master.out" 2>&1 &
echo $! >"$DIR/master.pid"
t0=$(date +%s)
master_ready() {
  kill -0 "$(cat "$DIR/master.pid")" 2>/dev/null || { echo "hbase-up: the HBase JVM exited; see $DIR/logs/master.out" >&2; exit 1; }
  grep -q "Master has completed initialization" "$DIR/logs/master.log"
}
wait_for "HBase master" "$WAIT" master_ready
echo "hbase-up: HBase ready in $(( $(date +%s) - t0 )) s ($RS region servers, ZooKeeper 127.0.0.1:$ZK_PORT)"
fi

: >"$DIR/logs/thrift2.log"
# shellcheck disable=SC2086
nohup java $JVM_FLAGS -Xms256m -Xmx1g -Drowan.log.file="$DIR/logs/thrift2.log" -cp "$CP" \
  org.apache.hadoop.hbase.thrift2.ThriftServer -b 127.0.0.1 -p "$TH_PORT" --infoport $((TH_PORT + 5)) \
  -threadpool start >"$DIR/logs/thrift2.out" 2>&1 &
echo $! >"$DIR/thrift2.pid"
t0=$(date +%s)
thrift_ready() {
  kill -0 "$(cat "$DIR/thrift2.pid")" 2>/dev/null || { echo "hbase-up: the Thrift2 JVM exited; see $DIR/logs/thrift2.out" >&2; exit 1; }
  port_busy "$TH_PORT"
}
wait_for "Thrift2 gateway" "$WAIT" thrift_ready
echo "hbase-up: Thrift2 gateway on 127.0.0.1:$TH_PORT in $(( $(date +%s) - t0 )) s"
